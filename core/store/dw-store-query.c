/* dw-store-query.c — the one way the store runs a query: prepare, bind, step, report
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every read and write of core/store/ goes through these helpers, so a failure is always reported
 * the same way (dw-store.h's DwStoreError, naming the store file and what was being done) and no
 * caller writes its own prepare/bind/step/finalize loop.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <glib/gi18n.h>

#include "dw-store-private.h"

static const char *const dw_store_query_cached_sql[DW_STORE_N_STMTS] = {
  [DW_STORE_STMT_PUT_POINT]
  = "INSERT INTO points (tag_id, step, wall_time, value, special, rank) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (tag_id, step) DO UPDATE SET "
    "wall_time = excluded.wall_time, value = excluded.value, "
    "special = excluded.special, rank = excluded.rank "
    "WHERE excluded.rank >= points.rank",
  [DW_STORE_STMT_PUT_POINTS]
  = "INSERT INTO points (tag_id, step, wall_time, value, special, rank) "
    "SELECT tag_id, step, wall_time, value, special, ?1 FROM dw_points_feed "
    "WHERE 1 " /* without it, ON CONFLICT would be read as a join's ON */
    "ON CONFLICT (tag_id, step) DO UPDATE SET "
    "wall_time = excluded.wall_time, value = excluded.value, "
    "special = excluded.special, rank = excluded.rank "
    "WHERE excluded.rank >= points.rank",
  [DW_STORE_STMT_GET_TAG] = "SELECT id FROM tags WHERE run_id = ?1 AND name = ?2",
  [DW_STORE_STMT_INSERT_TAG]
  = "INSERT INTO tags (run_id, name, canonical, step_key) VALUES (?1, ?2, ?3, ?4)",
  [DW_STORE_STMT_FLUSH_RUN]
  = "UPDATE runs SET "
    "first_step = CASE WHEN first_step IS NULL OR ?2 < first_step THEN ?2 ELSE first_step END, "
    "last_step = CASE WHEN last_step IS NULL OR ?3 > last_step THEN ?3 ELSE last_step END, "
    "first_wall_time = CASE WHEN ?4 IS NULL THEN first_wall_time WHEN first_wall_time IS NULL "
    "  OR ?4 < first_wall_time THEN ?4 ELSE first_wall_time END, "
    "last_wall_time = CASE WHEN ?5 IS NULL THEN last_wall_time WHEN last_wall_time IS NULL "
    "  OR ?5 > last_wall_time THEN ?5 ELSE last_wall_time END, "
    "updated = ?6 WHERE id = ?1",
};

void
_dw_store_query_set_error (DwStore *self, GError **error, int rc, const char *what)
{
  const char *message = self->db != NULL ? sqlite3_errmsg (self->db) : sqlite3_errstr (rc);

  switch (rc & 0xff)
    {
    case SQLITE_FULL:
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FULL,
                   _ ("%s: disk full while %s; the transaction was rolled back (%s)"), self->path,
                   what, message);
      break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_BUSY,
                   _ ("%s: the store is locked by another process (another driftwatch-cli ingest "
                      "or watch, or the app, is writing); gave up %s after %d ms"),
                   self->path, what, self->busy_timeout_ms);
      break;
    case SQLITE_READONLY:
    case SQLITE_PERM:
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_READ_ONLY,
                   _ ("%s: the store is read-only; cannot finish %s"), self->path, what);
      break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                   _ ("%s: not a Driftwatch store or damaged (%s) while %s"), self->path, message,
                   what);
      break;
    default:
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED, _ ("%s: %s failed: %s"),
                   self->path, what, message);
      break;
    }
}

gboolean
_dw_store_query_check_writable (DwStore *self, GError **error)
{
  if (self->read_only)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_READ_ONLY,
                   _ ("%s: the store was opened read-only"), self->path);
      return FALSE;
    }
  return TRUE;
}

gboolean
_dw_store_query_exec (DwStore *self, const char *sql, const char *what, GError **error)
{
  int rc = sqlite3_exec (self->db, sql, NULL, NULL, NULL);

  if (rc != SQLITE_OK)
    {
      _dw_store_query_set_error (self, error, rc, what);
      return FALSE;
    }
  return TRUE;
}

sqlite3_stmt *
_dw_store_query_prepare (DwStore *self, const char *sql, GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (self->db, sql, -1, &stmt, NULL);

  if (rc != SQLITE_OK)
    {
      _dw_store_query_set_error (self, error, rc, "preparing a query");
      return NULL;
    }
  return stmt;
}

static void
dw_store_query_bind_valist (sqlite3_stmt *stmt, const char *types, va_list args)
{
  for (int index = 1; types[index - 1] != '\0'; index++)
    switch (types[index - 1])
      {
      case 'i':
        sqlite3_bind_int64 (stmt, index, va_arg (args, gint64));
        break;
      case 'n':
        sqlite3_bind_int (stmt, index, va_arg (args, int));
        break;
      case 't':
        sqlite3_bind_text (stmt, index, va_arg (args, const char *), -1, SQLITE_TRANSIENT);
        break;
      case 'd':
        {
          double value = va_arg (args, double);
          if (isnan (value))
            sqlite3_bind_null (stmt, index);
          else
            sqlite3_bind_double (stmt, index, value);
          break;
        }
      default:
        g_assert_not_reached ();
      }
}

void
_dw_store_query_bind (sqlite3_stmt *stmt, const char *types, ...)
{
  va_list args;

  va_start (args, types);
  dw_store_query_bind_valist (stmt, types, args);
  va_end (args);
}

static sqlite3_stmt *
dw_store_query_new_valist (DwStore *self, GError **error, const char *sql, const char *types,
                           va_list args)
{
  sqlite3_stmt *stmt = _dw_store_query_prepare (self, sql, error);

  if (stmt != NULL)
    dw_store_query_bind_valist (stmt, types, args);
  return stmt;
}

sqlite3_stmt *
_dw_store_query_new (DwStore *self, GError **error, const char *sql, const char *types, ...)
{
  sqlite3_stmt *stmt;
  va_list args;

  va_start (args, types);
  stmt = dw_store_query_new_valist (self, error, sql, types, args);
  va_end (args);
  return stmt;
}

sqlite3_stmt *
_dw_store_query_cached (DwStore *self, DwStoreStmtId id, GError **error)
{
  if (self->stmts[id] == NULL)
    self->stmts[id] = _dw_store_query_prepare (self, dw_store_query_cached_sql[id], error);
  else
    sqlite3_reset (self->stmts[id]);
  return self->stmts[id];
}

gboolean
_dw_store_query_step_done (DwStore *self, sqlite3_stmt *stmt, const char *what, GError **error)
{
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    ;
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      _dw_store_query_set_error (self, error, rc, what);
      return FALSE;
    }
  return TRUE;
}

gboolean
_dw_store_query_run (DwStore *self, GError **error, const char *what, const char *sql,
                     const char *types, ...)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  va_list args;

  va_start (args, types);
  stmt = dw_store_query_new_valist (self, error, sql, types, args);
  va_end (args);
  return stmt != NULL && _dw_store_query_step_done (self, stmt, what, error);
}

int
_dw_store_query_first_row (DwStore *self, sqlite3_stmt *stmt, const char *what, GError **error)
{
  int rc = sqlite3_step (stmt);

  if (rc == SQLITE_ROW)
    return 1;
  if (rc == SQLITE_DONE)
    return 0;
  _dw_store_query_set_error (self, error, rc, what);
  return -1;
}

gboolean
_dw_store_query_rows (DwStore *self, GError **error, const char *what, DwStoreRowFunc each_row,
                      gpointer user_data, const char *sql, const char *types, ...)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  va_list args;
  int rc;

  va_start (args, types);
  stmt = dw_store_query_new_valist (self, error, sql, types, args);
  va_end (args);
  if (stmt == NULL)
    return FALSE;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    each_row (stmt, user_data);
  if (rc != SQLITE_DONE)
    {
      _dw_store_query_set_error (self, error, rc, what);
      return FALSE;
    }
  return TRUE;
}

gint64
_dw_store_query_int (DwStore *self, const char *sql, const char *what, GError **error, gboolean *ok)
{
  g_autoptr (sqlite3_stmt) stmt = _dw_store_query_prepare (self, sql, error);
  int found;

  *ok = FALSE;
  if (stmt == NULL || (found = _dw_store_query_first_row (self, stmt, what, error)) < 0)
    return 0;
  *ok = TRUE;
  return found ? sqlite3_column_int64 (stmt, 0) : 0;
}

char *
_dw_store_query_column_text_or (sqlite3_stmt *stmt, int col, const char *fallback)
{
  const char *text = (const char *)sqlite3_column_text (stmt, col);

  return g_strdup (text != NULL ? text : fallback);
}

double
_dw_store_query_column_double_or_nan (sqlite3_stmt *stmt, int col)
{
  return sqlite3_column_type (stmt, col) == SQLITE_NULL ? NAN : sqlite3_column_double (stmt, col);
}

void
_dw_store_query_append_int64_cb (sqlite3_stmt *stmt, gpointer steps)
{
  gint64 value = sqlite3_column_int64 (stmt, 0);

  g_array_append_val ((GArray *)steps, value);
}

void
_dw_store_query_append_text_cb (sqlite3_stmt *stmt, gpointer names)
{
  g_ptr_array_add (names,
                   _dw_store_query_column_text_or (stmt, 0, "")); /* NULL in a crafted store */
}
