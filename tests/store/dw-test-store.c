/* dw-test-store.c — the store fixture the store tests share (tests/store, tests/hostile)
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
  fixture->path = g_build_filename (fixture->dir, data != NULL ? data : "store.db", NULL);
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
  const char *tail = sql;
  char *out = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  while (tail != NULL && *tail != '\0')
    {
      g_assert_cmpint (sqlite3_prepare_v2 (db, tail, -1, &stmt, &tail), ==, SQLITE_OK);
      if (stmt == NULL) /* only white space or a comment left */
        break;
      if (sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_text (stmt, 0) != NULL && out == NULL)
        out = g_strdup ((const char *)sqlite3_column_text (stmt, 0));
      sqlite3_finalize (stmt);
    }
  sqlite3_close (db);
  return out;
}

char *
dw_test_store_file_sha (const char *path)
{
  g_autofree char *data = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guint8 *)data, len);
}
