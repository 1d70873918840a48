/* dw-reader-mlflow.c — MLflow's SQLite tracking store, read incrementally by rowid
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Table metrics(key, value, timestamp ms, step, is_nan, run_uuid) of mlflow's SQLAlchemy schema.
 * Opened read-only; rows after a given rowid in rowid order, so following a live store never
 * re-reads a row.
 */
#include "dw-log-reader.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>

/* Time budget of one read of a foreign SQLite file: a query that runs longer is interrupted. */
#define MLFLOW_TIME_BUDGET_US (30 * G_USEC_PER_SEC)

static int
mlflow_progress_cb (void *user_data)
{
  return g_get_monotonic_time () > *(const gint64 *)user_data;
}

/* MLflow's metrics is a table; anything else (a view, possibly over a recursive query that never
 * ends) is refused before it is queried. */
static gboolean
mlflow_check_schema (sqlite3 *db, const char *path, GError **error)
{
  sqlite3_stmt *st = NULL;
  const char *type = NULL;
  gboolean ok;

  if (sqlite3_prepare_v2 (db, "SELECT type FROM sqlite_master WHERE name = 'metrics'", -1, &st,
                          NULL)
        == SQLITE_OK
      && sqlite3_step (st) == SQLITE_ROW)
    type = (const char *)sqlite3_column_text (st, 0);
  ok = g_strcmp0 (type, "table") == 0;
  if (!ok)
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                 "%s: not an MLflow store (metrics is %s, not a table)", path,
                 type != NULL ? type : "missing");
  sqlite3_finalize (st);
  return ok;
}

gboolean
dw_mlflow_read (const char *path, const char *run_uuid, gint64 after_rowid, DwPointFunc on_point,
                DwDiagFunc on_diag, gpointer user_data, gint64 *last_rowid, GError **error)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  gboolean ok = FALSE;
  (void)on_diag;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: cannot open as SQLite: %s", path,
                   db ? sqlite3_errmsg (db) : "out of memory");
      goto out;
    }
  sqlite3_busy_timeout (db, 2000);
  gint64 deadline = g_get_monotonic_time () + MLFLOW_TIME_BUDGET_US;
  sqlite3_progress_handler (db, 1000, mlflow_progress_cb, &deadline);
  if (!mlflow_check_schema (db, path, error))
    goto out;
  gboolean multi = FALSE;
  if (run_uuid == NULL)
    {
      sqlite3_stmt *c = NULL;
      if (sqlite3_prepare_v2 (db, "SELECT COUNT(DISTINCT run_uuid) FROM metrics", -1, &c, NULL)
          != SQLITE_OK)
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                       "%s: not an MLflow store (no metrics table): %s", path, sqlite3_errmsg (db));
          sqlite3_finalize (c);
          goto out;
        }
      if (sqlite3_step (c) == SQLITE_ROW)
        multi = sqlite3_column_int64 (c, 0) > 1;
      sqlite3_finalize (c);
    }
  const char *sql = run_uuid != NULL
                      ? "SELECT rowid, key, value, timestamp, step, is_nan, run_uuid FROM metrics "
                        "WHERE rowid > ?1 AND run_uuid = ?2 ORDER BY rowid"
                      : "SELECT rowid, key, value, timestamp, step, is_nan, run_uuid FROM metrics "
                        "WHERE rowid > ?1 ORDER BY rowid";
  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                   "%s: not an MLflow store (metrics table): %s", path, sqlite3_errmsg (db));
      goto out;
    }
  sqlite3_bind_int64 (st, 1, after_rowid);
  if (run_uuid != NULL)
    sqlite3_bind_text (st, 2, run_uuid, -1, SQLITE_TRANSIENT);
  int rc;
  GString *tag = g_string_new (NULL);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 rowid = sqlite3_column_int64 (st, 0);
      const char *key = (const char *)sqlite3_column_text (st, 1);
      double v = sqlite3_column_type (st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double (st, 2);
      double wall = sqlite3_column_type (st, 3) == SQLITE_NULL
                      ? NAN
                      : (double)sqlite3_column_int64 (st, 3) / 1000.0;
      gint64 step = sqlite3_column_int64 (st, 4);
      if (sqlite3_column_int (st, 5) != 0)
        v = NAN;
      const char *run = (const char *)sqlite3_column_text (st, 6);
      if (key == NULL)
        continue;
      g_string_truncate (tag, 0);
      if (multi)
        g_string_append_printf (tag, "%s/", run ? run : "");
      g_string_append (tag, key);
      if (on_point)
        {
          DwScalarPoint p = { tag->str, step, wall, v, NULL };
          on_point (&p, user_data);
        }
      if (last_rowid)
        *last_rowid = rowid;
    }
  g_string_free (tag, TRUE);
  if (rc == SQLITE_INTERRUPT)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                   "%s: reading metrics took longer than %d s: interrupted (read again, from "
                   "where it stopped, on the next ingest)",
                   path, (int)(MLFLOW_TIME_BUDGET_US / G_USEC_PER_SEC));
      goto out;
    }
  if (rc != SQLITE_DONE)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: reading metrics: %s", path,
                   sqlite3_errmsg (db));
      goto out;
    }
  ok = TRUE;
out:
  sqlite3_finalize (st);
  sqlite3_close (db);
  return ok;
}
