/* dw-test-store.c — the store fixture the tests of tests/store share
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-test-store.h"

#include <stdlib.h>

#include <sqlite3.h>

void
dw_test_store_setup (DwTestStore *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  fixture->dir = g_dir_make_tmp ("dw-store-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->path = g_build_filename (fixture->dir, "sub", "store.db", NULL);
}

void
dw_test_store_teardown (DwTestStore *fixture, gconstpointer data)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", fixture->dir);

  g_assert_cmpint (system (command), ==, 0);
  g_free (fixture->dir);
  g_free (fixture->path);
}

char *
dw_test_store_raw_sql (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  char *out = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  if (sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_text (stmt, 0) != NULL)
    out = g_strdup ((const char *)sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return out;
}
