/* dw-log-reader.h — incremental readers of training-log formats (contract between ingest and store)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A reader is fed the bytes of a file from a byte offset on, emits every complete record it finds
 * as scalar points, and says how many bytes it consumed: a partial last line or record is left
 * unconsumed, so feeding again from (offset + consumed) when the file grows neither duplicates nor
 * skips a point. Corrupt records are reported through the diagnostic callback with the absolute
 * file offset, skipped, and reading goes on.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  DW_FORMAT_UNKNOWN = 0,
  DW_FORMAT_VERL_CONSOLE,    /* step:N - key:value - … (legacy %.3f, repr, numpy-2 np.float64(…)) */
  DW_FORMAT_VERL_JSONL,      /* {"step":N,"data":{…}} per line */
  DW_FORMAT_TFEVENTS,        /* TFRecord framing of Event protobufs */
  DW_FORMAT_SLIME_CONSOLE,   /* slime's Python-dict log lines */
  DW_FORMAT_WANDB_CSV,       /* run.history().to_csv() */
  DW_FORMAT_WANDB_PANEL_CSV, /* UI panel export with __MIN/__MAX columns */
  DW_FORMAT_WANDB_OFFLINE,   /* .wandb transaction log */
  DW_FORMAT_MLFLOW_SQLITE,   /* MLflow tracking store (mlflow.db) */
  DW_FORMAT_BATCH_SAFETENSORS,
  DW_FORMAT_BATCH_NPZ,
  DW_FORMAT_BATCH_NPY,
  DW_FORMAT_BATCH_JSONL,
  DW_N_FORMATS
} DwFormat;

const char *dw_format_name (DwFormat format);

typedef struct
{
  const char *tag; /* the key as logged, e.g. "rollout_corr/rollout_is_mean" */
  gint64 step;
  double wall_time; /* seconds since the epoch, NAN when the format has none */
  double value;     /* NaN and ±inf are kept */
} DwScalarPoint;

typedef void (*DwPointFunc) (const DwScalarPoint *point, gpointer user_data);
typedef void (*DwDiagFunc) (goffset offset, const char *message, gpointer user_data);

typedef struct _DwLogReader DwLogReader;

/* Detects the format from the file's first bytes (content first, the name as a tie-breaker). */
DwFormat dw_format_sniff (const char *path, const guint8 *head, gsize head_len);

/* A reader for one file. @path is used in diagnostics only. */
DwLogReader *dw_log_reader_new (DwFormat format, const char *path);
void dw_log_reader_free (DwLogReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwLogReader, dw_log_reader_free)

/* Feed @len bytes that start at absolute file offset @offset. @at_eof says that no more bytes
 * follow for now (a writer may still append later: a partial record is still left unconsumed).
 * Returns the number of bytes consumed. */
gsize dw_log_reader_feed (DwLogReader *reader, goffset offset, const guint8 *data, gsize len,
                          gboolean at_eof, DwPointFunc on_point, DwDiagFunc on_diag,
                          gpointer user_data);

G_END_DECLS
