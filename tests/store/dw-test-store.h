/* dw-test-store.h — the store fixture the tests of tests/store share
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A fresh temporary folder @dir, removed with all it holds after the test, and @path, where the
 * test's store goes: dir/sub/store.db, in a folder that does not exist yet (the store makes it). */
typedef struct
{
  char *dir;
  char *path;
} DwTestStore;

void dw_test_store_setup (DwTestStore *fixture, gconstpointer data);
void dw_test_store_teardown (DwTestStore *fixture, gconstpointer data);

/* Runs @sql on @path through a separate plain SQLite connection; returns the first column of the
 * first row as text (or NULL). */
char *dw_test_store_raw_sql (const char *path, const char *sql);

G_END_DECLS
