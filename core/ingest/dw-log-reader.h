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
  DW_FORMAT_VERL_CONSOLE, /* step:N - key:value - … (legacy %.3f, repr, numpy-2 np.float64(…)) */
  DW_FORMAT_VERL_JSONL,   /* {"step":N,"data":{…}} per line */
  DW_FORMAT_TFEVENTS,     /* TFRecord framing of Event protobufs */
  DW_FORMAT_SLIME_CONSOLE,   /* slime's Python-dict log lines */
  DW_FORMAT_WANDB_CSV,       /* run.history().to_csv() */
  DW_FORMAT_WANDB_PANEL_CSV, /* UI panel export with __MIN/__MAX columns */
  DW_FORMAT_WANDB_OFFLINE,   /* .wandb transaction log */
  DW_FORMAT_MLFLOW_SQLITE,   /* MLflow tracking store (mlflow.db) */
  DW_FORMAT_BATCH_SAFETENSORS,
  DW_FORMAT_BATCH_NPZ,
  DW_FORMAT_BATCH_NPY,
  DW_FORMAT_BATCH_JSONL,
  DW_FORMAT_SWANLAB,        /* SwanLab ≥ 0.8 run-<id>.swanlab (LevelDB-log framing + protobuf) */
  DW_FORMAT_MLFLOW_FILE,    /* MLflow file store: mlruns/<exp>/<run>/metrics/<key> lines */
  DW_FORMAT_TRACKIO_SQLITE, /* trackio project database ({project}.db) */
  DW_FORMAT_BATCH_TORCH,    /* torch.save zip: slime / miles dumps (--dump-details) */
  DW_N_FORMATS
} DwFormat;

const char *dw_format_name (DwFormat format);

typedef struct
{
  const char *tag; /* the key as logged, e.g. "rollout_corr/rollout_is_mean" */
  gint64 step;
  double wall_time; /* seconds since the epoch, NAN when the format has none */
  double value;     /* NaN and ±inf are kept */
  /* The step axis @step is measured on: NULL for the format's only axis ("step" of verl, the
   * Event step of tfevents, "_step" of W&B), or the key that carries it, e.g. "train/step",
   * "rollout/step" or "eval/step" for slime console lines. */
  const char *step_key;
  /* How precisely the value was written: DW_PRECISION_FORMAT (the format's own: float64 text,
   * float32 tfevents…) or DW_PRECISION_3F (verl ≤ 0.4.1 console lines printed "%.3f"). */
  int precision;
} DwScalarPoint;

#define DW_PRECISION_FORMAT 0
#define DW_PRECISION_3F     1

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

/* Truncation / rewrite detection for every byte-stream format (verl's FileLogger reopens its
 * JSONL with "wb" on a restart): when the file is now shorter than the offset stored for it,
 * the file was truncated or rewritten and must be re-read from offset 0 (with a new reader);
 * the caller should also compare a checksum of the first bytes it already consumed, since a
 * rewritten file can have grown past the old offset again. Returns @file_size < @stored_offset. */
gboolean dw_log_reader_file_was_truncated (goffset stored_offset, goffset file_size);

/* W&B CSV readers learn the column names from the first line: a new reader that resumes at a
 * stored offset > 0 must first be primed with the bytes [0, stored offset) and on_point = NULL
 * (nothing is emitted), then fed from the stored offset as usual. Fed from an offset > 0
 * without that, it reports a diagnostic and consumes nothing. Other formats need no priming
 * (.wandb block alignment is taken from the absolute offset). */

/* MLflow's SQLite tracking store is not a byte stream: rows of `metrics` are read in rowid
 * order after @after_rowid (0 for all). Tags are "<key>", or "<run_uuid>/<key>" when the
 * store holds more than one run and @run_uuid is NULL; with @run_uuid only that run is read.
 * is_nan=1 rows give NaN; timestamp (ms) becomes wall_time. *@last_rowid gets the largest
 * rowid read (unchanged when there are no new rows). */
gboolean dw_mlflow_read (const char *path, const char *run_uuid, gint64 after_rowid,
                         DwPointFunc on_point, DwDiagFunc on_diag, gpointer user_data,
                         gint64 *last_rowid, GError **error);

G_END_DECLS
