/* fuzz-trackio.c — libFuzzer target for the trackio and MLflow SQL-store readers
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * An input that starts with SQLite's magic is read as a whole (possibly corrupt) database
 * file; any other input becomes the `metrics` JSON of rows of a trackio database (both
 * schemas, the first byte chooses), as trackio's log() would store it; database files are also
 * read as MLflow SQL stores. The readers must not
 * crash, must stop within its time budget and must report the last row id it read.
 */
#include "dw-reader-loggers.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

static void
count_cb (const char *run_key, const char *run_name, const char *group, const DwScalarPoint *p,
          gpointer user_data)
{
  (void)run_key;
  (void)run_name;
  (void)group;
  (void)p->tag[0];
  (*(gsize *)user_data)++;
}

static void
diag_cb (goffset offset, const char *message, gpointer user_data)
{
  (void)offset;
  (void)message;
  (void)user_data;
}

static char *
temp_path (void)
{
  return g_strdup_printf ("%s/dw-fuzz-trackio-%d.db", g_get_tmp_dir (), (int)getpid ());
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  g_autofree char *path = temp_path ();
  gsize n = 0;
  gint64 last = 0;
  g_autoptr (GError) error = NULL;

  g_unlink (path);
  if (size >= 16 && memcmp (data, "SQLite format 3", 16) == 0)
    {
      FILE *f = fopen (path, "wb"); /* no fsync: g_file_set_contents would sync every input */
      if (f == NULL || fwrite (data, 1, size, f) != size)
        abort ();
      fclose (f);
    }
  else
    {
      sqlite3 *db = NULL;
      sqlite3_stmt *st = NULL;
      gboolean ids = size > 0 && (data[0] & 1);
      if (sqlite3_open (path, &db) != SQLITE_OK)
        abort ();
      sqlite3_exec (db, "PRAGMA synchronous = OFF; PRAGMA journal_mode = OFF", NULL, NULL, NULL);
      sqlite3_exec (db,
                    ids ? "CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT "
                          "NOT NULL, timestamp TEXT NOT NULL, run_name TEXT NOT NULL, step INTEGER "
                          "NOT NULL, metrics TEXT NOT NULL)"
                        : "CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp "
                          "TEXT NOT NULL, run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics "
                          "TEXT NOT NULL)",
                    NULL, NULL, NULL);
      sqlite3_prepare_v2 (db,
                          ids ? "INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) "
                                "VALUES ('r', ?1, 'run', ?2, ?3)"
                              : "INSERT INTO metrics (timestamp, run_name, step, metrics) VALUES "
                                "(?1, 'run', ?2, ?3)",
                          -1, &st, NULL);
      /* the same bytes as a row with a valid and with a garbage timestamp */
      for (int i = 0; i < 2; i++)
        {
          sqlite3_bind_text (st, 1, i ? (const char *)data : "2026-01-01T00:00:00+00:00",
                             i ? (int)MIN (size, 40) : -1, SQLITE_TRANSIENT);
          sqlite3_bind_int64 (st, 2, i ? -1 : G_MAXINT64);
          sqlite3_bind_blob (st, 3, data, (int)size, SQLITE_TRANSIENT);
          sqlite3_step (st);
          sqlite3_reset (st);
        }
      sqlite3_finalize (st);
      sqlite3_close (db);
    }
  dw_trackio_read (path, 0, 2000, 0, count_cb, diag_cb, &n, &last, &error);
  if (last < 0)
    abort ();
  g_clear_error (&error);
  last = 0;
  /* a corrupt file is also handed to the MLflow SQL store reader */
  dw_mlflow_read_runs (path, 0, 2000, 0, count_cb, diag_cb, &n, &last, &error);
  if (last < 0)
    abort ();
  g_unlink (path);
  return 0;
}
