/* dw-ingest-report.h — what an ingest did: files, points, batches, diagnostics and notes
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  guint n_files;          /* recognised files looked at */
  guint n_files_read;     /* files that had new data (or were re-read) */
  guint n_skipped;        /* files not recognised (each with a note saying why) */
  guint64 n_points;       /* scalar points written */
  guint64 n_batches;      /* rollout batches written */
  guint64 n_tokens;       /* valid (masked-in) tokens of those batches */
  guint64 n_bytes;        /* bytes of log files consumed */
  GPtrArray *diagnostics; /* char*: "PATH: byte offset N: message" (or the batch reader's place) */
  GPtrArray *notes; /* char*: files skipped (unknown format), rewrites, incomplete tails, … */
  GArray *run_ids;  /* gint64: runs that received data, each once */
  GPtrArray *incomplete; /* char*: batch files that end early (also in notes): the reader's
                          * error, naming file and offset; a follower reports them once the
                          * file stopped changing */
} DwIngestReport;

void dw_ingest_report_init (DwIngestReport *report);
void dw_ingest_report_clear (DwIngestReport *report);

G_END_DECLS
