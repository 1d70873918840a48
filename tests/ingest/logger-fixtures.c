/* logger-fixtures.c — see logger-fixtures.h
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "logger-fixtures.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define BLOCK 32768u
#define HDR   7u

/* ---- protobuf writing -------------------------------------------------------------------- */

static void
pb_varint (GByteArray *b, guint64 v)
{
  while (v >= 0x80)
    {
      guint8 x = (guint8)(v | 0x80);
      g_byte_array_append (b, &x, 1);
      v >>= 7;
    }
  guint8 x = (guint8)v;
  g_byte_array_append (b, &x, 1);
}

static void
pb_key (GByteArray *b, guint field, guint wire)
{
  pb_varint (b, (guint64)field << 3 | wire);
}

static void
pb_bytes (GByteArray *b, guint field, const void *data, gsize len)
{
  pb_key (b, field, 2);
  pb_varint (b, len);
  g_byte_array_append (b, data, (guint)len);
}

static void
pb_string (GByteArray *b, guint field, const char *s)
{
  if (s != NULL && *s != '\0') /* proto3: empty strings are left out */
    pb_bytes (b, field, s, strlen (s));
}

static void
pb_int (GByteArray *b, guint field, gint64 v)
{
  if (v != 0)
    {
      pb_key (b, field, 0);
      pb_varint (b, (guint64)v); /* int64: two's complement, 10 bytes when negative */
    }
}

static void
pb_message (GByteArray *b, guint field, GByteArray *m)
{
  pb_bytes (b, field, m->data, m->len);
}

static GByteArray *
pb_timestamp (gint64 seconds, gint32 nanos)
{
  GByteArray *t = g_byte_array_new ();
  pb_int (t, 1, seconds);
  pb_int (t, 2, nanos);
  return t;
}

/* ---- SwanLab ------------------------------------------------------------------------------ */

GByteArray *
dw_fx_swanlab_new (guint8 version)
{
  GByteArray *f = g_byte_array_new ();
  const guint8 h[7] = { ':', 'S', 'W', 'L', 0xd6, 0xe1, version };
  g_byte_array_append (f, h, 7);
  return f;
}

static void
swl_chunk (GByteArray *f, const guint8 *data, gsize len, guint8 type)
{
  guint32 c = (guint32)crc32 (0L, &type, 1);
  guint8 h[7];
  c = (guint32)crc32 (c, data, (uInt)len);
  h[0] = c & 0xff, h[1] = (c >> 8) & 0xff, h[2] = (c >> 16) & 0xff, h[3] = c >> 24;
  h[4] = len & 0xff, h[5] = (len >> 8) & 0xff, h[6] = type;
  g_assert_cmpuint (len + HDR, <=, BLOCK - f->len % BLOCK);
  g_byte_array_append (f, h, 7);
  if (len > 0)
    g_byte_array_append (f, data, (guint)len);
}

void
dw_fx_swanlab_write (GByteArray *f, const guint8 *data, gsize len)
{
  gsize space = BLOCK - f->len % BLOCK;

  if (space < HDR)
    {
      static const guint8 zero[HDR] = { 0 };
      g_byte_array_append (f, zero, (guint)space);
      space = BLOCK;
    }
  if (len + HDR <= space)
    {
      swl_chunk (f, data, len, 1);
      return;
    }
  gsize room = space - HDR, used = room;
  swl_chunk (f, data, room, 2);
  while (len - used > BLOCK - HDR)
    {
      swl_chunk (f, data + used, BLOCK - HDR, 3);
      used += BLOCK - HDR;
    }
  swl_chunk (f, data + used, len - used, 4);
}

static GByteArray *
swl_record (gint64 num, gint64 seconds, guint field, GByteArray *body)
{
  GByteArray *r = g_byte_array_new ();
  g_autoptr (GByteArray) ts = pb_timestamp (seconds, 0);
  pb_int (r, 1, num);
  pb_message (r, 2, ts);
  pb_message (r, field, body);
  return r;
}

GByteArray *
dw_fx_swanlab_scalar (gint64 num, const char *key, gint64 step, double value, gint64 seconds,
                      gint32 nanos)
{
  g_autoptr (GByteArray) s = g_byte_array_new ();
  g_autoptr (GByteArray) ts = pb_timestamp (seconds, nanos);
  g_autoptr (GByteArray) v = g_byte_array_new ();

  if (value != 0.0 || signbit (value))
    {
      pb_key (v, 1, 1);
      g_byte_array_append (v, (const guint8 *)&value, 8);
    }
  pb_string (s, 1, key);
  pb_int (s, 2, step);
  pb_int (s, 3, 1); /* COLUMN_TYPE_SCALAR */
  pb_message (s, 4, ts);
  pb_message (s, 5, v);
  return swl_record (num, seconds, 13, s);
}

GByteArray *
dw_fx_swanlab_start (const char *project, const char *name, const char *id)
{
  g_autoptr (GByteArray) s = g_byte_array_new ();
  pb_string (s, 1, project);
  pb_string (s, 4, name);
  pb_string (s, 9, "#528d59");
  pb_string (s, 10, id);
  return swl_record (-1, 1767225600, 10, s);
}

GByteArray *
dw_fx_swanlab_media (gint64 num, const char *key, gint64 step, const char *filename)
{
  g_autoptr (GByteArray) m = g_byte_array_new ();
  g_autoptr (GByteArray) item = g_byte_array_new ();
  g_autoptr (GByteArray) val = g_byte_array_new ();
  pb_string (item, 1, filename);
  pb_int (item, 3, 1234);
  pb_message (val, 1, item);
  pb_string (m, 1, key);
  pb_int (m, 2, step);
  pb_int (m, 3, 2); /* COLUMN_TYPE_IMAGE */
  pb_message (m, 5, val);
  return swl_record (num, 1767225600, 14, m);
}

GByteArray *
dw_fx_swanlab_console (gint64 num, gsize len)
{
  g_autoptr (GByteArray) l = g_byte_array_new ();
  g_autofree char *text = g_malloc (len + 1);
  for (gsize i = 0; i < len; i++)
    text[i] = (char)('a' + i % 26);
  text[len] = '\0';
  pb_string (l, 1, text);
  return swl_record (num, 1767225600, 16, l);
}

/* ---- trackio ------------------------------------------------------------------------------ */

static void
exec_sql (sqlite3 *db, const char *sql)
{
  char *msg = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &msg) != SQLITE_OK)
    g_error ("%s: %s", sql, msg);
}

sqlite3 *
dw_fx_trackio_create (const char *path, gboolean run_ids)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  exec_sql (db, "PRAGMA journal_mode = WAL");
  exec_sql (db, "PRAGMA synchronous = NORMAL");
  if (run_ids)
    {
      exec_sql (db, "CREATE TABLE IF NOT EXISTS metrics (\n"
                    "    id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
                    "    run_id TEXT NOT NULL,\n"
                    "    timestamp TEXT NOT NULL,\n"
                    "    run_name TEXT NOT NULL,\n"
                    "    step INTEGER NOT NULL,\n"
                    "    metrics TEXT NOT NULL\n"
                    ")");
      exec_sql (db, "CREATE TABLE IF NOT EXISTS configs (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                    "run_id TEXT NOT NULL, run_name TEXT NOT NULL, config TEXT NOT NULL, "
                    "created_at TEXT NOT NULL, UNIQUE(run_id))");
      exec_sql (db, "CREATE INDEX IF NOT EXISTS idx_metrics_run_step ON metrics(run_id, step)");
    }
  else
    {
      exec_sql (db, "CREATE TABLE IF NOT EXISTS metrics (\n"
                    "    id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
                    "    timestamp TEXT NOT NULL,\n"
                    "    run_name TEXT NOT NULL,\n"
                    "    step INTEGER NOT NULL,\n"
                    "    metrics TEXT NOT NULL\n"
                    ")");
      exec_sql (db, "CREATE TABLE IF NOT EXISTS configs (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                    "run_name TEXT NOT NULL, config TEXT NOT NULL, created_at TEXT NOT NULL, "
                    "UNIQUE(run_name))");
      exec_sql (db, "CREATE INDEX IF NOT EXISTS idx_metrics_run_step ON metrics(run_name, step)");
    }
  exec_sql (db, "CREATE TABLE IF NOT EXISTS system_metrics (id INTEGER PRIMARY KEY "
                "AUTOINCREMENT, timestamp TEXT NOT NULL, run_name TEXT NOT NULL, metrics TEXT NOT "
                "NULL)");
  exec_sql (db, "CREATE TABLE IF NOT EXISTS project_metadata (key TEXT PRIMARY KEY, value TEXT "
                "NOT NULL)");
  exec_sql (db, "ALTER TABLE metrics ADD COLUMN log_id TEXT");
  exec_sql (db, "ALTER TABLE metrics ADD COLUMN space_id TEXT");
  return db;
}

void
dw_fx_trackio_log (sqlite3 *db, gboolean run_ids, const char *run_id, const char *run_name,
                   gint64 step, const char *iso_time, const char *json)
{
  sqlite3_stmt *st = NULL;
  const char *sql = run_ids ? "INSERT INTO metrics (timestamp, run_id, run_name, step, metrics) "
                              "VALUES (?1, ?2, ?3, ?4, ?5)"
                            : "INSERT INTO metrics (timestamp, run_name, step, metrics) "
                              "VALUES (?1, ?3, ?4, ?5)";
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), ==, SQLITE_OK);
  sqlite3_bind_text (st, 1, iso_time, -1, SQLITE_STATIC);
  if (run_ids)
    sqlite3_bind_text (st, 2, run_id, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 3, run_name, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 4, step);
  /* Python's sqlite3 binds orjson's bytes as a BLOB */
  sqlite3_bind_blob (st, 5, json, (int)strlen (json), SQLITE_STATIC);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_DONE);
  sqlite3_finalize (st);
}

/* ---- MLflow file store ------------------------------------------------------------------- */

char *
dw_fx_mlflow_run (const char *mlruns, const char *exp_id, const char *exp_name, const char *run_id,
                  const char *run_name)
{
  g_autofree char *exp = g_build_filename (mlruns, exp_id, NULL);
  g_autofree char *exp_meta = g_build_filename (exp, "meta.yaml", NULL);
  char *run = g_build_filename (exp, run_id, NULL);
  g_autofree char *meta = g_build_filename (run, "meta.yaml", NULL);
  g_autofree char *tags = g_build_filename (run, "tags", NULL);
  g_autofree char *tag = g_build_filename (tags, "mlflow.runName", NULL);
  g_autofree char *metrics = g_build_filename (run, "metrics", NULL);
  g_autofree char *params = g_build_filename (run, "params", NULL);
  g_autofree char *text = NULL;

  g_assert_cmpint (g_mkdir_with_parents (tags, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (metrics, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (params, 0755), ==, 0);
  if (!g_file_test (exp_meta, G_FILE_TEST_EXISTS))
    {
      g_autofree char *e = g_strdup_printf (
        "artifact_location: file://%s\ncreation_time: 1767225600000\nexperiment_id: '%s'\n"
        "last_update_time: 1767225600000\nlifecycle_stage: active\nname: %s\n",
        exp, exp_id, exp_name);
      g_assert_true (g_file_set_contents (exp_meta, e, -1, NULL));
    }
  /* the keys and order of FileStore's _make_persisted_run_info_dict (yaml.safe_dump sorts) */
  text
    = g_strdup_printf ("artifact_uri: file://%s/artifacts\nend_time: null\nentry_point_name: ''\n"
                       "experiment_id: '%s'\nlifecycle_stage: active\nrun_id: %s\n"
                       "run_name: %s\nrun_uuid: %s\nsource_name: ''\nsource_type: 4\n"
                       "source_version: ''\nstart_time: 1767225600123\nstatus: 1\n"
                       "tags: []\nuser_id: verl\n",
                       run, exp_id, run_id, run_name, run_id);
  g_assert_true (g_file_set_contents (meta, text, -1, NULL));
  g_assert_true (g_file_set_contents (tag, run_name, -1, NULL));
  return run;
}

void
dw_fx_mlflow_log (const char *run_dir, const char *key, gint64 ts_ms, const char *value,
                  gint64 step, gboolean terminated)
{
  g_autofree char *path = g_build_filename (run_dir, "metrics", key, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  FILE *f;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  f = fopen (path, "ab");
  g_assert_nonnull (f);
  fprintf (f, "%" G_GINT64_FORMAT " %s %" G_GINT64_FORMAT "%s", ts_ms, value, step,
           terminated ? "\n" : "");
  fclose (f);
}

/* ---- MLflow SQL store --------------------------------------------------------------------- */

sqlite3 *
dw_fx_mlflow_sqlite_create (const char *path)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  exec_sql (db, "CREATE TABLE experiments (experiment_id INTEGER NOT NULL, name VARCHAR(256) NOT "
                "NULL, artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time "
                "BIGINT, last_update_time BIGINT, CONSTRAINT experiment_pk PRIMARY KEY "
                "(experiment_id), UNIQUE (name))");
  exec_sql (db, "CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL, name VARCHAR(250), source_type "
                "VARCHAR(20), source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id "
                "VARCHAR(256), status VARCHAR(9), start_time BIGINT, end_time BIGINT, "
                "source_version VARCHAR(50), lifecycle_stage VARCHAR(20), artifact_uri "
                "VARCHAR(200), experiment_id INTEGER, deleted_time BIGINT, CONSTRAINT run_pk "
                "PRIMARY KEY (run_uuid), FOREIGN KEY(experiment_id) REFERENCES experiments "
                "(experiment_id))");
  exec_sql (db, "CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp "
                "BIGINT NOT NULL, run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT '0' NOT "
                "NULL, is_nan BOOLEAN DEFAULT '0' NOT NULL, CONSTRAINT metric_pk PRIMARY KEY "
                "(key, timestamp, step, run_uuid, value, is_nan), FOREIGN KEY(run_uuid) "
                "REFERENCES runs (run_uuid))");
  exec_sql (db, "CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, "
                "timestamp BIGINT, step BIGINT NOT NULL, is_nan BOOLEAN NOT NULL, run_uuid "
                "VARCHAR(32) NOT NULL, CONSTRAINT latest_metric_pk PRIMARY KEY (key, run_uuid))");
  exec_sql (db, "INSERT INTO experiments VALUES (0, 'Default', './mlruns/0', 'active', "
                "1767225600000, 1767225600000)");
  return db;
}

void
dw_fx_mlflow_sqlite_run (sqlite3 *db, int exp_id, const char *exp_name, const char *run_uuid,
                         const char *run_name)
{
  g_autofree char *e = g_strdup_printf (
    "INSERT OR IGNORE INTO experiments VALUES (%d, '%s', './mlruns/%d', 'active', "
    "1767225600000, 1767225600000)",
    exp_id, exp_name, exp_id);
  g_autofree char *r = g_strdup_printf (
    "INSERT INTO runs VALUES ('%s', '%s', 'UNKNOWN', '', '', 'verl', 'RUNNING', 1767225600000, "
    "NULL, '', 'active', './mlruns/%d/%s/artifacts', %d, NULL)",
    run_uuid, run_name, exp_id, run_uuid, exp_id);
  exec_sql (db, e);
  exec_sql (db, r);
}

void
dw_fx_mlflow_sqlite_log (sqlite3 *db, const char *run_uuid, const char *key, double value,
                         gint64 ts_ms, gint64 step)
{
  sqlite3_stmt *st = NULL;
  gboolean is_nan = isnan (value);
  double stored = is_nan ? 0.0 : isinf (value) ? (value > 0 ? G_MAXDOUBLE : -G_MAXDOUBLE) : value;

  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "INSERT INTO metrics (key, value, timestamp, run_uuid, "
                                       "step, is_nan) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                                       -1, &st, NULL),
                   ==, SQLITE_OK);
  sqlite3_bind_text (st, 1, key, -1, SQLITE_STATIC);
  sqlite3_bind_double (st, 2, stored);
  sqlite3_bind_int64 (st, 3, ts_ms);
  sqlite3_bind_text (st, 4, run_uuid, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 5, step);
  sqlite3_bind_int (st, 6, is_nan);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_DONE);
  sqlite3_finalize (st);
}

char *
dw_fx_py_repr (double v)
{
  char buf[64];
  if (isnan (v))
    return g_strdup ("nan");
  if (isinf (v))
    return g_strdup (v > 0 ? "inf" : "-inf");
  for (int prec = 1; prec <= 17; prec++)
    {
      g_snprintf (buf, sizeof buf, "%.*g", prec, v);
      if (g_ascii_strtod (buf, NULL) == v)
        break;
    }
  /* Python keeps a ".0" on integral floats and writes exponents as e-06 / e+20 */
  if (strpbrk (buf, ".eni") == NULL)
    return g_strdup_printf ("%s.0", buf);
  return g_strdup (buf);
}
