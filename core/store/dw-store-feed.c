/* dw-store-feed.c — the points of one dw_store_put_points () call as a virtual table
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Writing points with bound parameters cost more than the B-tree inserts themselves: six
 * sqlite3_bind_* calls per point, each taking the connection's mutex and releasing the old value
 * (a fifth of an ingest's instructions with 128-row VALUES statements). Instead, the rows are
 * handed to SQLite as an eponymous virtual table, `dw_points_feed` (nothing of it is stored in the
 * file: the schema is unchanged), which one cached
 *   INSERT INTO points … SELECT … FROM dw_points_feed WHERE 1 ON CONFLICT … DO UPDATE …
 * reads in order, column by column, straight from the caller's array — the carray idea, with no
 * pointer binding. The table is only ever scanned from start to end, in the array's order, so a
 * later row of the same (tag, step) is written after the earlier one and wins as before.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "dw-store-private.h"

typedef struct
{
  sqlite3_vtab base;
  DwStore *store;
} DwStoreFeedTable;

typedef struct
{
  sqlite3_vtab_cursor base;
  DwStoreFeedTable *table;
  gsize row;
} DwStoreFeedCursor;

enum
{
  DW_STORE_FEED_TAG_ID,
  DW_STORE_FEED_STEP,
  DW_STORE_FEED_WALL_TIME,
  DW_STORE_FEED_VALUE,
  DW_STORE_FEED_SPECIAL,
};

static int
dw_store_feed_connect_cb (sqlite3 *db, void *aux, int argc, const char *const *argv,
                          sqlite3_vtab **out_table, char **out_error)
{
  DwStoreFeedTable *table;
  int rc = sqlite3_declare_vtab (db, "CREATE TABLE x (tag_id, step, wall_time, value, special)");

  if (rc != SQLITE_OK)
    return rc;
  table = sqlite3_malloc (sizeof *table);
  if (table == NULL)
    return SQLITE_NOMEM;
  memset (table, 0, sizeof *table);
  table->store = aux;
  *out_table = &table->base;
  return SQLITE_OK;
}

static int
dw_store_feed_disconnect_cb (sqlite3_vtab *table)
{
  sqlite3_free (table);
  return SQLITE_OK;
}

static int
dw_store_feed_best_index_cb (sqlite3_vtab *table, sqlite3_index_info *info)
{
  /* one plan: a full scan in the array's order */
  info->estimatedCost = 1e6;
  info->estimatedRows = 1000000;
  return SQLITE_OK;
}

static int
dw_store_feed_open_cb (sqlite3_vtab *table, sqlite3_vtab_cursor **out_cursor)
{
  DwStoreFeedCursor *cursor = sqlite3_malloc (sizeof *cursor);

  if (cursor == NULL)
    return SQLITE_NOMEM;
  memset (cursor, 0, sizeof *cursor);
  cursor->table = (DwStoreFeedTable *)table;
  *out_cursor = &cursor->base;
  return SQLITE_OK;
}

static int
dw_store_feed_close_cb (sqlite3_vtab_cursor *cursor)
{
  sqlite3_free (cursor);
  return SQLITE_OK;
}

static int
dw_store_feed_filter_cb (sqlite3_vtab_cursor *cursor, int index_number, const char *index_string,
                         int argc, sqlite3_value **argv)
{
  ((DwStoreFeedCursor *)cursor)->row = 0;
  return SQLITE_OK;
}

static int
dw_store_feed_next_cb (sqlite3_vtab_cursor *cursor)
{
  ((DwStoreFeedCursor *)cursor)->row++;
  return SQLITE_OK;
}

static int
dw_store_feed_eof_cb (sqlite3_vtab_cursor *cursor)
{
  DwStoreFeedCursor *self = (DwStoreFeedCursor *)cursor;

  return self->row >= self->table->store->feed_n;
}

static void
dw_store_feed_result_double (sqlite3_context *context, double value)
{
  /* SQLite keeps no NaN: stored as NULL (and special = 1 for a value) */
  if (isnan (value))
    sqlite3_result_null (context);
  else
    sqlite3_result_double (context, value);
}

static int
dw_store_feed_column_cb (sqlite3_vtab_cursor *cursor, sqlite3_context *context, int column)
{
  DwStoreFeedCursor *self = (DwStoreFeedCursor *)cursor;
  const DwPointRow *point = &self->table->store->feed_rows[self->row];

  switch (column)
    {
    case DW_STORE_FEED_TAG_ID:
      sqlite3_result_int64 (context, point->tag_id);
      break;
    case DW_STORE_FEED_STEP:
      sqlite3_result_int64 (context, point->step);
      break;
    case DW_STORE_FEED_WALL_TIME:
      dw_store_feed_result_double (context, point->wall_time);
      break;
    case DW_STORE_FEED_VALUE:
      dw_store_feed_result_double (context, point->value);
      break;
    default:
      sqlite3_result_int (context, _dw_store_points_special (point->value));
    }
  return SQLITE_OK;
}

static int
dw_store_feed_rowid_cb (sqlite3_vtab_cursor *cursor, sqlite3_int64 *rowid)
{
  *rowid = (sqlite3_int64)((DwStoreFeedCursor *)cursor)->row;
  return SQLITE_OK;
}

/* xCreate NULL: an eponymous-only table, usable without CREATE VIRTUAL TABLE, never in the
 * file's schema. */
static const sqlite3_module dw_store_feed_module = {
  .iVersion = 0,
  .xCreate = NULL,
  .xConnect = dw_store_feed_connect_cb,
  .xBestIndex = dw_store_feed_best_index_cb,
  .xDisconnect = dw_store_feed_disconnect_cb,
  .xDestroy = dw_store_feed_disconnect_cb,
  .xOpen = dw_store_feed_open_cb,
  .xClose = dw_store_feed_close_cb,
  .xFilter = dw_store_feed_filter_cb,
  .xNext = dw_store_feed_next_cb,
  .xEof = dw_store_feed_eof_cb,
  .xColumn = dw_store_feed_column_cb,
  .xRowid = dw_store_feed_rowid_cb,
};

gboolean
_dw_store_feed_register (DwStore *self, GError **error)
{
  int rc = sqlite3_create_module_v2 (self->db, "dw_points_feed", &dw_store_feed_module, self, NULL);

  if (rc != SQLITE_OK)
    {
      _dw_store_query_set_error (self, error, rc, "registering the points feed");
      return FALSE;
    }
  return TRUE;
}
