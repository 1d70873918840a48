/* dw-ingester.h — ingest log files, rollout batches and run folders into a DwStore
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What a file is comes from its content (dw_format_sniff), the name is only a tie-breaker.
 * Log files are read incrementally from the byte offset stored for them; each chunk's points,
 * tags, diagnostics and the file's new offset are committed in ONE transaction, so a process
 * killed at any moment and run again gives the same store as one clean ingest. A file is known
 * by its path; its identity (device, inode, size, mtime) and a CRC-32C of its first bytes
 * (up to DW_INGEST_PREFIX_MAX of what was consumed) tell a grown file from a truncated or
 * rewritten one (verl's FileLogger reopens its JSONL with "wb" on a restart): a truncated or
 * rewritten file is read again from offset 0, its points replace those of the same steps
 * (newest write wins) and a restart is recorded at its first step.
 *
 * Runs: a folder given to dw_ingester_ingest_path() is one run (named after the folder) when
 * it holds a recognised file directly, or when all its sub-folders holding data are parts of
 * a run ("tensorboard", "tensorboard_log", "tb", "batches", "rollout_batches", "logs",
 * "events"); otherwise each sub-folder is resolved the same way (a folder of runs, or
 * TensorBoard's tensorboard_log/project/experiment layout). A single file given alone belongs
 * to the run of its folder for tfevents and batch files (the parent of a "batches" /
 * "tensorboard" folder), and to a run named after the file's stem for other logs
 * (verl's {project}/{experiment}.jsonl). A file already in the store keeps its run. When a
 * run of the same name but another source exists, the name becomes "parent/name".
 *
 * Bad input (garbage lines, corrupt records, bad CRCs, unreadable batches) is reported with
 * the file and the byte offset (or the place the batch reader names), stored with
 * dw_store_add_diagnostic() and skipped; everything else is kept. Only store failures (disk
 * full, store locked, read-only) and a missing path make the calls below return FALSE; the
 * transaction in progress is then rolled back and nothing already committed is lost.
 */
#pragma once

#include <gio/gio.h>
#include <sys/types.h>

#include "dw-ingest-report.h"
#include "dw-log-reader.h"
#include "dw-store.h"

G_BEGIN_DECLS

#define DW_TYPE_INGESTER (dw_ingester_get_type ())
G_DECLARE_FINAL_TYPE (DwIngester, dw_ingester, DW, INGESTER, GObject)

DwIngester *dw_ingester_new (DwStore *store);
DwStore *dw_ingester_get_store (DwIngester *self);

/* Every file ingested from now on goes to the run @name (driftwatch-cli ingest --name); NULL
 * restores the rules above. */
void dw_ingester_set_run_name (DwIngester *self, const char *name);

/* Bytes read and committed per transaction for log files (default 16 MiB; a record longer than
 * that is read whole). */
void dw_ingester_set_chunk_size (DwIngester *self, gsize bytes);

/* Ingests a file or a folder (recursively, runs detected as above). Files that did not change
 * since the last ingest are skipped after a stat(). @report (may be NULL) is added to. */
gboolean dw_ingester_ingest_path (DwIngester *self, const char *path, DwIngestReport *report,
                                  GError **error);

/* Ingests one (new or changed) file: for a follower that saw it change. The file's run is the
 * stored one when the file is known, else @run_root when given (a run folder: the run is named
 * after it, as dw_ingester_ingest_path() would), else the single-file rule above. */
gboolean dw_ingester_ingest_file (DwIngester *self, const char *path, const char *run_root,
                                  DwIngestReport *report, GError **error);

/* The format of @path by content (dw-log-sniff.h), examined further from where the last look
 * stopped; the stored format for a known file. *@reason (may be NULL) gets why it is not
 * recognised. */
DwFormat dw_ingester_recognise (DwIngester *self, const char *path, char **reason);
/* Did the last look at @path stop for lack of time before the end of the file? */
gboolean dw_ingester_recognise_unfinished (DwIngester *self, const char *path);
/* Was @path refused for good (a document, a binary file, another kind of SQLite file)? */
gboolean dw_ingester_recognise_refused (DwIngester *self, const char *path);
/* How long one look at an unrecognised file may take (default DW_SNIFF_BUDGET_US). */
void dw_ingester_set_sniff_budget (DwIngester *self, gint64 budget_us);

/* The run folder (or, for a log file that is its own run, the file) a single @path belongs
 * to under the rules above; @format as sniffed. */
char *dw_ingest_run_root_for_file (const char *path, DwFormat format);
/* "a FIFO (named pipe)", "a socket", "a device"… for messages refusing what is not a file. */
const char *dw_ingest_file_kind (mode_t mode);
/* The run name of a run root: the folder's name, or the file's stem. */
char *dw_ingest_run_name (const char *run_root);

G_END_DECLS
