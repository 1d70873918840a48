/* dw-test-store.h — the store fixture the store tests share (tests/store, tests/hostile)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A fresh temporary folder @dir, removed with all it holds after the test, and @path, where the
 * test's store goes: the setup's data is its path inside @dir (a const char *, "sub/store.db": in
 * a folder the store has to make), NULL for dir/store.db. */
typedef struct
{
  char *dir;
  char *path;
} DwTestStore;

void dw_test_store_setup (DwTestStore *fixture, gconstpointer data);
void dw_test_store_teardown (DwTestStore *fixture, gconstpointer data);

/* Runs @sql (one statement or several) on @path through a separate plain SQLite connection;
 * returns the first column of the first row a statement gave as text (or NULL). */
char *dw_test_store_raw_sql (const char *path, const char *sql);
/* The SHA-256 of @path's bytes, in hex (to show a file was left untouched). */
char *dw_test_store_file_sha (const char *path);

G_END_DECLS
