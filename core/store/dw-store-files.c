/* dw-store-files.c — ingest bookkeeping: what was read of each input file
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-store-private.h"

void
dw_file_record_free (DwFileRecord *record)
{
  if (record == NULL)
    return;
  g_free (record->path);
  g_clear_pointer (&record->state, g_bytes_unref);
  g_free (record);
}

#define DW_STORE_FILES_COLUMNS                                                             \
  "id, run_id, path, format, dev, inode, size, mtime_us, offset, prefix_len, prefix_crc, " \
  "max_step, state"

static DwFileRecord *
dw_store_files_from_row (sqlite3_stmt *stmt)
{
  DwFileRecord *record = g_new0 (DwFileRecord, 1);
  const void *state;

  record->id = sqlite3_column_int64 (stmt, 0);
  record->run_id = sqlite3_column_int64 (stmt, 1);
  record->path = _dw_store_query_column_text_or (stmt, 2, "");
  record->format = sqlite3_column_int (stmt, 3);
  record->dev = (guint64)sqlite3_column_int64 (stmt, 4);
  record->inode = (guint64)sqlite3_column_int64 (stmt, 5);
  record->size = sqlite3_column_int64 (stmt, 6);
  record->mtime_us = sqlite3_column_int64 (stmt, 7);
  record->offset = sqlite3_column_int64 (stmt, 8);
  record->prefix_len = sqlite3_column_int64 (stmt, 9);
  record->prefix_crc = (guint32)sqlite3_column_int64 (stmt, 10);
  record->max_step
    = sqlite3_column_type (stmt, 11) == SQLITE_NULL ? G_MININT64 : sqlite3_column_int64 (stmt, 11);
  state = sqlite3_column_blob (stmt, 12);
  if (state != NULL)
    record->state = g_bytes_new (state, sqlite3_column_bytes (stmt, 12));
  if (record->offset < 0 || record->prefix_len < 0 || record->prefix_len > record->offset
      || record->size < 0)
    {
      /* damaged bookkeeping (prefix_len = 1e12 made ingest allocate a terabyte): the file is
       * read again from the start, which is always correct, only slower */
      record->offset = record->prefix_len = 0;
      record->prefix_crc = 0;
      record->size = -1;
      record->max_step = G_MININT64;
      g_clear_pointer (&record->state, g_bytes_unref);
    }
  return record;
}

DwFileRecord *
dw_store_get_file (DwStore *self, const char *path, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = _dw_store_query_new (
    self, error, "SELECT " DW_STORE_FILES_COLUMNS " FROM files WHERE path = ?1", "t", path);
  if (stmt == NULL
      || _dw_store_query_first_row (self, stmt, "reading the ingest bookkeeping", error) <= 0)
    return NULL;
  return dw_store_files_from_row (stmt);
}

static void
dw_store_files_append_cb (sqlite3_stmt *stmt, gpointer files)
{
  g_ptr_array_add (files, dw_store_files_from_row (stmt));
}

GPtrArray *
dw_store_list_files (DwStore *self, GError **error)
{
  g_autoptr (GPtrArray) files
    = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_file_record_free);

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  if (!_dw_store_query_rows (self, error, "reading the ingest bookkeeping",
                             dw_store_files_append_cb, files,
                             "SELECT " DW_STORE_FILES_COLUMNS " FROM files ORDER BY path", ""))
    return NULL;
  return g_steal_pointer (&files);
}

gboolean
dw_store_put_file (DwStore *self, DwFileRecord *record, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  gconstpointer state = NULL;
  gsize state_len = 0;

  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  if (!_dw_store_query_check_writable (self, error))
    return FALSE;
  if (record->id == 0)
    stmt = _dw_store_query_prepare (
      self,
      "INSERT INTO files (run_id, path, format, dev, inode, size, mtime_us, offset, prefix_len, "
      "prefix_crc, max_step, state) VALUES (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
      error);
  else
    stmt = _dw_store_query_prepare (
      self,
      "UPDATE files SET run_id = ?2, path = ?3, format = ?4, dev = ?5, inode = ?6, size = ?7, "
      "mtime_us = ?8, offset = ?9, prefix_len = ?10, prefix_crc = ?11, max_step = ?12, "
      "state = ?13 WHERE id = ?1",
      error);
  if (stmt == NULL)
    return FALSE;
  if (record->id != 0)
    sqlite3_bind_int64 (stmt, 1, record->id);
  sqlite3_bind_int64 (stmt, 2, record->run_id);
  sqlite3_bind_text (stmt, 3, record->path, -1, SQLITE_STATIC);
  sqlite3_bind_int (stmt, 4, record->format);
  sqlite3_bind_int64 (stmt, 5, (gint64)record->dev);
  sqlite3_bind_int64 (stmt, 6, (gint64)record->inode);
  sqlite3_bind_int64 (stmt, 7, record->size);
  sqlite3_bind_int64 (stmt, 8, record->mtime_us);
  sqlite3_bind_int64 (stmt, 9, record->offset);
  sqlite3_bind_int64 (stmt, 10, record->prefix_len);
  sqlite3_bind_int64 (stmt, 11, record->prefix_crc);
  if (record->max_step != G_MININT64)
    sqlite3_bind_int64 (stmt, 12, record->max_step);
  if (record->state != NULL && (state = g_bytes_get_data (record->state, &state_len)) == NULL)
    state = "";
  if (record->state != NULL)
    sqlite3_bind_blob (stmt, 13, state, (int)state_len, SQLITE_STATIC);
  if (!_dw_store_query_step_done (self, stmt, "updating the ingest bookkeeping", error))
    return FALSE;
  if (record->id == 0)
    record->id = sqlite3_last_insert_rowid (self->db);
  return TRUE;
}

gint64
dw_store_get_files_max_step (DwStore *self, gint64 run_id, int format, const char *except_path,
                             GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  int found;

  g_return_val_if_fail (DW_IS_STORE (self), G_MININT64);
  /* the two largest: one of them is not @except_path */
  stmt = _dw_store_query_new (self, error,
                              "SELECT max_step, path FROM files WHERE run_id = ?1 AND format = ?2 "
                              "AND max_step IS NOT NULL ORDER BY max_step DESC LIMIT 2",
                              "in", run_id, format);
  while (
    stmt != NULL
    && (found = _dw_store_query_first_row (self, stmt, "reading the ingest bookkeeping", error))
         > 0)
    if (g_strcmp0 ((const char *)sqlite3_column_text (stmt, 1), except_path) != 0)
      return sqlite3_column_int64 (stmt, 0);
  return G_MININT64;
}

gboolean
dw_store_run_has_other_formats (DwStore *self, gint64 run_id, int format, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  /* two index seeks on (run_id, format): "format <> ?" would walk the run's files */
  stmt
    = _dw_store_query_new (self, error,
                           "SELECT EXISTS (SELECT 1 FROM files WHERE run_id = ?1 AND format < "
                           "?2) OR EXISTS (SELECT 1 FROM files WHERE run_id = ?1 AND format > ?2)",
                           "in", run_id, format);
  if (stmt == NULL
      || _dw_store_query_first_row (self, stmt, "reading the ingest bookkeeping", error) <= 0)
    return FALSE;
  return sqlite3_column_int (stmt, 0) != 0;
}
