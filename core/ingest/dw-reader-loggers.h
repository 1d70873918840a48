/* dw-reader-loggers.h — private to core/ingest: LevelDB-log framing shared by the .wandb and
 * .swanlab readers, and the readers of the other experiment trackers verl and slime can log to
 * (SwanLab, trackio, the MLflow file store)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include "dw-reader-util.h"

G_BEGIN_DECLS

/* LevelDB log framing (leveldb doc/log_format.md) as W&B and SwanLab write it: a 7-byte file
 * header, then 32 KiB blocks of chunks: u32le CRC-32 (zlib/IEEE) of type||payload, u16le
 * payload length, u8 type (1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST); a chunk never crosses a block,
 * fewer than 7 bytes left in a block are zero padding. */
#define DW_LDB_BLOCK  32768u
#define DW_LDB_HEADER 7u

typedef struct
{
  const char *label; /* in diagnostics: ".wandb", ".swanlab" */
  /* Checks the 7-byte file header (reports what is wrong through @ctx); FALSE: the file is
   * skipped. */
  gboolean (*check_header) (DwFeedCtx *ctx, const guint8 *header);
  /* One reassembled record; FALSE when its payload is malformed (reported, skipped). */
  gboolean (*record) (gpointer state, DwFeedCtx *ctx, const guint8 *rec, gsize len);
} DwLdbFormat;

/* The DwRecordFeedFunc body for a LevelDB-log file: complete records are handed to
 * @fmt->record, a partial record at the end is left unconsumed. @buf is scratch space. */
gsize dw_leveldb_log_feed (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const guint8 *data,
                           gsize len, const DwLdbFormat *fmt, GByteArray *buf, gpointer state);

void dw_reader_swanlab_init (DwLogReader *reader);
/* The experiment name in a .swanlab file's start record (what swanlab.init was given), or NULL
 * (not a SwanLab file, no name). */
char *dw_swanlab_run_name (const char *path);
void dw_reader_mlflow_file_init (DwLogReader *reader);

/* MLflow file store (mlruns/<experiment id>/<run id>/metrics/<key>). */
/* Is @path a metric file of an MLflow file-store run (content @head as sniffed)? */
gboolean dw_mlflow_file_sniff (const char *path, const guint8 *head, gsize len);
/* The run folder (the one holding meta.yaml and metrics/) of a metric file, or NULL. */
char *dw_mlflow_file_run_dir (const char *path);
/* Is @dir an MLflow file-store run folder (meta.yaml + metrics/)? */
gboolean dw_mlflow_file_is_run_dir (const char *dir);
/* The run's name from its meta.yaml (`run_name`, else tags/mlflow.runName), or NULL. */
char *dw_mlflow_file_run_name (const char *run_dir);
/* The metric key of a metric file: its path below metrics/ ('/' kept), or its basename. */
char *dw_mlflow_file_key (const char *path);

/* The name the trainer gave the run of @run_root, when the trackers' files say it: an MLflow
 * file-store run folder (meta.yaml), a SwanLab run folder or file (the start record's experiment
 * name). NULL otherwise. */
char *dw_logger_run_name (const char *run_root);

/* SQLite files: which store is it? DW_FORMAT_MLFLOW_SQLITE, DW_FORMAT_TRACKIO_SQLITE or
 * DW_FORMAT_UNKNOWN (another SQLite database; *@why says what it is not). Opened read-only. */
DwFormat dw_sqlite_sniff (const char *path, char **why);
/* The largest rowid of @table, 0 when it is empty, G_MAXINT64 when it cannot be read. */
gint64 dw_sqlite_max_rowid (const char *path, const char *table);
/* "<db>" for "<db>-wal" / "<db>-journal" when <db> is a SQLite file (a WAL-mode writer commits
 * into the -wal file: the database is what changed), else NULL. */
char *dw_sqlite_main_file (const char *path);

/* A point of a database that holds several runs: @run_key identifies the run inside the
 * database (trackio run_id or, before trackio had ids, run_name; MLflow run_uuid), @run_name is
 * its name and @group what it belongs to (trackio project = the database's stem, MLflow
 * experiment name). */
typedef void (*DwRunPointFunc) (const char *run_key, const char *run_name, const char *group,
                                const DwScalarPoint *point, gpointer user_data);

/* trackio's per-project SQLite database ({TRACKIO_DIR}/{project}.db): rows of `metrics` after
 * @after_id in id order, each JSON value that is a number (or "NaN"/"Infinity"/"-Infinity", as
 * trackio serialises them) as a point; nested objects give "outer/inner" tags. */
gboolean dw_trackio_read (const char *path, gint64 after_id, guint budget_ms, gint64 max_rows,
                          DwRunPointFunc on_point, DwDiagFunc on_diag, gpointer user_data,
                          gint64 *last_id, GError **error);

/* MLflow's SQLAlchemy store (verl's default sqlite:////tmp/mlruns.db): rows of `metrics` after
 * @after_rowid in rowid order, each with its run (runs.name, experiments.name when those tables
 * exist). is_nan=1 gives NaN; ±1.7976931348623157e308, which MLflow stores for ±inf, gives
 * ±inf. */
gboolean dw_mlflow_read_runs (const char *path, gint64 after_rowid, guint budget_ms,
                              gint64 max_rows, DwRunPointFunc on_point, DwDiagFunc on_diag,
                              gpointer user_data, gint64 *last_rowid, GError **error);

/* Both: opened read-only, never written; at most @max_rows rows (0: all); a read that takes
 * longer than @budget_ms (0: no limit) stops with a diagnostic, the rows read so far count and
 * *@last_* says where to resume. */

G_END_DECLS
