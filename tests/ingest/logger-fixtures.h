/* logger-fixtures.h — writers of SwanLab, trackio and MLflow file-store data, built from the
 * formats' published layouts, for the reader tests, the benchmark and the fuzz seed corpora
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each writer reproduces what the real logger puts on disk (see docs/FORMATS-LOGGERS.md):
 * - SwanLab ≥ 0.8 DataStoreWriter (swanlab/sdk/internal/core_python/store): ":SWL" u16le 0xE1D6
 *   u8 2, LevelDB-log chunks (zlib CRC-32 over type||payload) in 32 KiB blocks, zero padding of
 *   a block tail < 7 bytes, FIRST/MIDDLE/LAST for a record that does not fit; records are
 *   swanlab.record.v1.Record protobufs as swanlab's builder fills them (proto3: zero fields
 *   left out).
 * - trackio SQLiteStorage.init_db (trackio/sqlite_storage.py): the metrics/configs tables with
 *   or without run_id, journal_mode WAL, orjson-compact JSON stored as a BLOB, NaN/±inf as the
 *   strings serialize_values() writes, ISO-8601 UTC timestamps with "+00:00".
 * - MLflow FileStore (mlflow/store/tracking/file_store.py): mlruns/<exp>/meta.yaml,
 *   mlruns/<exp>/<run>/meta.yaml, tags/mlflow.runName, metrics/<key> ('/' in a key = folders)
 *   with "%s %s %s\n" % (timestamp_ms, value, step) lines.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* ---- SwanLab --------------------------------------------------------------------------- */
/* A new .swanlab byte stream holding the 7-byte file header (@version 2 for SwanLab ≥ 0.8). */
GByteArray *dw_fx_swanlab_new (guint8 version);
/* Appends one record with DataStoreWriter.write's chunking. */
void dw_fx_swanlab_write (GByteArray *file, const guint8 *record, gsize len);
/* Record{num, timestamp, scalar=ScalarRecord{key, step, type=1, timestamp, value{number}}} */
GByteArray *dw_fx_swanlab_scalar (gint64 num, const char *key, gint64 step, double value,
                                  gint64 seconds, gint32 nanos);
/* Record{num=-1, start=StartRecord{project, name, id}} */
GByteArray *dw_fx_swanlab_start (const char *project, const char *name, const char *id);
/* Record{num, media=MediaRecord{key, step, type=2 image, value{items{filename}}}} */
GByteArray *dw_fx_swanlab_media (gint64 num, const char *key, gint64 step, const char *filename);
/* Record{num, log=LogRecord{line}} (terminal output; field 16) of @len bytes of text */
GByteArray *dw_fx_swanlab_console (gint64 num, gsize len);

/* ---- trackio ---------------------------------------------------------------------------- */
/* Creates {dir}/{project}.db as trackio's init_db does (@run_ids: the schema since trackio's run
 * ids; FALSE: the older run_name-only schema). The connection is left open (WAL). */
sqlite3 *dw_fx_trackio_create (const char *path, gboolean run_ids);
/* One trackio.log() row; @run_id ignored for the old schema; @json as orjson writes it. */
void dw_fx_trackio_log (sqlite3 *db, gboolean run_ids, const char *run_id, const char *run_name,
                        gint64 step, const char *iso_time, const char *json);

/* ---- MLflow file store ------------------------------------------------------------------ */
/* mlruns/<exp_id>/meta.yaml (created when missing) and mlruns/<exp_id>/<run_id>/meta.yaml,
 * tags/mlflow.runName; returns the run folder. */
char *dw_fx_mlflow_run (const char *mlruns, const char *exp_id, const char *exp_name,
                        const char *run_id, const char *run_name);
/* Appends "ts value step\n" (or without the newline when @terminated is FALSE) to
 * metrics/<key>, creating nested folders for '/' in @key. */
void dw_fx_mlflow_log (const char *run_dir, const char *key, gint64 ts_ms, const char *value,
                       gint64 step, gboolean terminated);

/* ---- MLflow SQL store (verl's default sqlite:////tmp/mlruns.db) ------------------------- */
/* The tables of MLflow's SQLAlchemy store that hold runs and metrics (experiments, runs,
 * metrics, latest_metrics; columns and keys of mlflow/store/tracking/dbmodels/models.py). */
sqlite3 *dw_fx_mlflow_sqlite_create (const char *path);
void dw_fx_mlflow_sqlite_run (sqlite3 *db, int exp_id, const char *exp_name, const char *run_uuid,
                              const char *run_name);
/* SqlAlchemyStore._log_metrics: NaN → value 0, is_nan 1; ±inf → ±1.7976931348623157e308. */
void dw_fx_mlflow_sqlite_log (sqlite3 *db, const char *run_uuid, const char *key, double value,
                              gint64 ts_ms, gint64 step);

/* Python's repr() of a float (what str(float) prints): shortest round-trip digits. */
char *dw_fx_py_repr (double v);

G_END_DECLS
