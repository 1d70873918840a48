/* dw-reader-formats.h — private to core/ingest: the entry points of the training-log format
 * readers, which the registry (dw-log-reader.c) puts in its table and the sniffers call
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each format's file includes this header to declare what it defines; it calls only down, to
 * dw-reader-util.h (and dw-crc32c.h, dw-pb.h), never to the registry. The readers of the other
 * experiment trackers are declared in dw-reader-loggers.h.
 */
#pragma once

#include "dw-reader-util.h"

G_BEGIN_DECLS

void dw_reader_verl_console_init (DwLogReader *reader);
void dw_reader_verl_jsonl_init (DwLogReader *reader);
void dw_reader_tfevents_init (DwLogReader *reader);
void dw_reader_slime_console_init (DwLogReader *reader);
void dw_reader_wandb_csv_init (DwLogReader *reader);
void dw_reader_wandb_offline_init (DwLogReader *reader);

/* verl console: the "step:N" marker of a metric line (ANSI stripped), or NULL; and whether a
 * raw line is a well-formed metric line (every field key:number) — the sniffer's test. */
const char *dw_verl_console_marker (const char *s, gsize n);
gboolean dw_verl_console_is_metric_line (const char *line, gsize len);
/* slime console: is the raw line a metric dict line ("step N: {'train/…': …}")? */
gboolean dw_slime_console_is_metric_line (const char *line, gsize len);

G_END_DECLS
