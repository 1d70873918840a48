/* dw-log-sniff.h — recognising a training log by its content, anywhere in the file
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Binary and structured formats are known from their first bytes (dw_format_sniff). Console logs
 * are known by their first metric record, wherever it is: real verl logs print the resolved
 * config, engine start-up, sample echoes and validation output first, so the first `step:` line
 * can be hundreds of KB into the file; slime prints its whole argument list first. The sniffer
 * reads the file line by line from where it stopped last time, bounded by time, not by a byte
 * window: a growing file is examined again from where the last look ended, never from the start.
 * It accepts NUL and other binary bytes inside a log, ANSI colours, Ray prefixes, tqdm output on
 * the same line before `step:`, and other workers' lines in between; it refuses prose and
 * documents (a metric-like line must have the exact `step:N - key:number - …` shape, and lines
 * inside Markdown code blocks or in files named *.md, *.rst, *.ipynb, *.html, *.py, *.sh do not
 * count). Every file it does not recognise gets a reason ("no metric line in N bytes",
 * "binary", "SQLite file that is not an MLflow store", …).
 */
#pragma once

#include "dw-log-reader.h"

G_BEGIN_DECLS

/* How long `ingest` examines one file before giving up (it is examined again next time). */
#define DW_SNIFF_BUDGET_US (5 * G_USEC_PER_SEC)

typedef struct _DwSniffer DwSniffer;

DwSniffer *dw_sniffer_new (const char *path);
void dw_sniffer_free (DwSniffer *sniffer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwSniffer, dw_sniffer_free)

/* Examines more of the file (open as @fd), from where the last call stopped, for about
 * @budget_us (< 0: up to the end). Returns the format once known, else DW_FORMAT_UNKNOWN. A
 * file that shrank is examined again from the start. */
DwFormat dw_sniffer_step (DwSniffer *sniffer, int fd, gint64 budget_us);
/* TRUE once the answer cannot change any more (recognised, or refused for good: binary, a
 * document, a SQLite file of another kind). */
gboolean dw_sniffer_is_final (DwSniffer *sniffer);
/* Why the file is not recognised (NULL once it is). */
const char *dw_sniffer_get_reason (DwSniffer *sniffer);
/* TRUE when the last step ran out of time before the end of the file. */
gboolean dw_sniffer_is_unfinished (DwSniffer *sniffer);
/* Bytes examined so far. */
gint64 dw_sniffer_get_offset (DwSniffer *sniffer);

/* One-shot: @path (open as @fd) within @budget_us; *@reason (may be NULL) gets the reason when
 * the file is not recognised. */
DwFormat dw_format_recognise (const char *path, int fd, gint64 budget_us, char **reason);

G_END_DECLS
