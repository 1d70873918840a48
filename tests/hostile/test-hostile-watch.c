/* test-hostile-watch.c — the follower (`watch`, the window) on hostile folders, from the attack
 * run of issue 14; each case failed before its fix
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include <glib/gstdio.h>

#include "dw-follower.h"
#include "dw-store-writer.h"
#include "watch-test-util.h"

static void
write_log (const char *path, guint step)
{
  g_autofree char *line
    = g_strdup_printf ("{\"step\": %u, \"data\": {\"actor/pg_loss\": 0.5}}\n", step);

  g_assert_true (g_file_set_contents (path, line, -1, NULL));
}

/* Issue 14: "watch follows symlinked folders (pulling data from outside the run, ingesting a
 * sub/up -> .. loop 41 times) while ingest and README do not". Links present before the watch
 * starts and links made while it runs. */
static void
test_symlinked_folders_not_followed (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("dw-hostile-watch-XXXXXX", &error);
  g_autofree char *run = g_build_filename (dir, "run", NULL);
  g_autofree char *sub = g_build_filename (run, "sub", NULL);
  g_autofree char *outside = g_build_filename (dir, "outside", NULL);
  g_autofree char *db = g_build_filename (dir, "store.db", NULL);
  g_autofree char *log = g_build_filename (run, "metrics.jsonl", NULL);
  g_autofree char *other = g_build_filename (outside, "metrics.jsonl", NULL);
  g_autofree char *up = g_build_filename (sub, "up", NULL);
  g_autofree char *link = g_build_filename (run, "linked", NULL);
  g_autofree char *link2 = g_build_filename (run, "linked-later", NULL);
  g_autofree char *up2 = g_build_filename (sub, "up-later", NULL);
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwFollower) follower = NULL;
  g_autoptr (GPtrArray) files = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (sub, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (outside, 0755), ==, 0);
  write_log (log, 1);
  write_log (other, 7);
  g_assert_cmpint (symlink ("..", up), ==, 0);
  g_assert_cmpint (symlink (outside, link), ==, 0);

  store = dw_store_open (db, &error);
  g_assert_no_error (error);
  follower = dw_follower_new (store);
  dw_follower_set_delay (follower, 50);
  dw_follower_set_max_delay (follower, 200);
  g_assert_true (dw_follower_add_path (follower, run, &error));
  g_assert_no_error (error);
  dw_follower_flush (follower);
  /* and links made while it runs */
  g_assert_cmpint (symlink ("..", up2), ==, 0);
  g_assert_cmpint (symlink (outside, link2), ==, 0);
  write_log (other, 8);
  dw_watch_test_spin (1500);
  dw_follower_flush (follower);

  files = dw_store_list_files (store, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < files->len; i++)
    g_test_message ("stored: %s", ((DwFileRecord *)files->pdata[i])->path);
  g_assert_cmpuint (files->len, ==, 1);
  g_assert_cmpstr (((DwFileRecord *)files->pdata[0])->path, ==, log);
  g_clear_object (&follower);
  dw_watch_test_rm_rf (dir);
}

static void
record_error_cb (DwFollower *follower, GError *error, const char *path, GPtrArray *errors)
{
  g_ptr_array_add (errors, g_strdup (error->message));
}

/* Issue 14: "watch blames the folder's first file for another file's error": a new run folder
 * is read whole when its first file is seen, and a truncated batch in it was reported as
 * "a.jsonl: …/step_000001.safetensors: …". */
static void
test_error_names_its_file (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("dw-hostile-watch-XXXXXX", &error);
  g_autofree char *run = g_build_filename (dir, "run", NULL);
  g_autofree char *batches = g_build_filename (run, "batches", NULL);
  g_autofree char *first = g_build_filename (run, "a.jsonl", NULL);
  g_autofree char *batch = g_build_filename (batches, "step_000001.safetensors", NULL);
  g_autofree char *db = g_build_filename (dir, "store.db", NULL);
  g_autoptr (GPtrArray) errors = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwFollower) follower = NULL;
  struct utimbuf old = { time (NULL) - 3600, time (NULL) - 3600 };

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (batches, 0755), ==, 0);
  write_log (first, 1);
  /* a safetensors header promising more bytes than there are, settled an hour ago */
  g_assert_true (g_file_set_contents (batch, "\x40\0\0\0\0\0\0\0{\"a\"", 13, NULL));
  g_assert_cmpint (g_utime (batch, &old), ==, 0);
  g_assert_cmpint (g_utime (first, &old), ==, 0);

  store = dw_store_open (db, &error);
  g_assert_no_error (error);
  follower = dw_follower_new (store);
  g_signal_connect (follower, "error", G_CALLBACK (record_error_cb), errors);
  g_assert_true (dw_follower_add_path (follower, run, &error));
  g_assert_no_error (error);
  dw_follower_flush (follower);
  dw_watch_test_spin (300);
  dw_follower_flush (follower);
  g_assert_cmpuint (errors->len, >=, 1);
  for (guint i = 0; i < errors->len; i++)
    {
      g_test_message ("error: %s", (const char *)errors->pdata[i]);
      g_assert_true (g_str_has_prefix (errors->pdata[i], batch));
    }
  g_clear_object (&follower);
  dw_watch_test_rm_rf (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/hostile/watch/symlinked-folders-not-followed",
                   test_symlinked_folders_not_followed);
  g_test_add_func ("/hostile/watch/error-names-its-file", test_error_names_its_file);
  return g_test_run ();
}
