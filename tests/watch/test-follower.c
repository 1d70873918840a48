/* test-follower.c — DwFollower's monitoring and coalescing, with a recording ingest function
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What the follower does with the file system (which files it hands to the ingest step, when,
 * and how often), independent of the ingester: new subfolders, atomic replaces, deleted files,
 * bursts, continuous writers, half-written files whose error must wait until they settle.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "dw-follower.h"
#include "dw-store-writer.h"
#include "watch-test-util.h"

typedef struct
{
  char *dir;
  DwStore *store;
  DwFollower *follower;
  GPtrArray *calls;  /* "relative-path size" per ingest call */
  GPtrArray *errors; /* messages of ::error */
  guint n_flushed;
  char *fail_name; /* basename the ingest function refuses */
} Fixture;

static gboolean
record_ingest (DwStore *store, const char *root, const char *path, gint64 *run_id, gint64 *n_points,
               gpointer user_data, GError **error)
{
  Fixture *f = user_data;
  GStatBuf st;
  g_autofree char *base = g_path_get_basename (path);

  g_assert_true (g_str_has_prefix (path, root));
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  /* a followed file is its own root */
  g_ptr_array_add (f->calls,
                   g_strdup_printf ("%s %" G_GINT64_FORMAT,
                                    g_str_equal (path, root) ? base : path + strlen (root) + 1,
                                    (gint64)st.st_size));
  if (f->fail_name != NULL && g_str_equal (base, f->fail_name))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: offset 8: truncated record (%" G_GINT64_FORMAT " bytes)", path,
                   (gint64)st.st_size);
      return FALSE;
    }
  *run_id = 1;
  *n_points = st.st_size;
  return TRUE;
}

static void
on_error (DwFollower *follower, GError *error, const char *path, Fixture *f)
{
  g_assert_nonnull (strstr (error->message, path));
  g_ptr_array_add (f->errors, g_strdup (error->message));
}

static void
on_flushed (DwFollower *follower, Fixture *f)
{
  f->n_flushed++;
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = NULL;

  f->dir = g_dir_make_tmp ("dw-follower-XXXXXX", &error);
  g_assert_no_error (error);
  db = g_build_filename (f->dir, "store.db", NULL);
  f->store = dw_store_open (db, &error);
  g_assert_no_error (error);
  f->follower = dw_follower_new (f->store);
  dw_follower_set_ingest_func (f->follower, record_ingest, f, NULL);
  dw_follower_set_delay (f->follower, 100);
  dw_follower_set_max_delay (f->follower, 400);
  g_signal_connect (f->follower, "error", G_CALLBACK (on_error), f);
  g_signal_connect (f->follower, "flushed", G_CALLBACK (on_flushed), f);
  f->calls = g_ptr_array_new_with_free_func (g_free);
  f->errors = g_ptr_array_new_with_free_func (g_free);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->follower);
  g_clear_object (&f->store);
  dw_watch_test_rm_rf (f->dir);
  g_free (f->dir);
  g_ptr_array_unref (f->calls);
  g_ptr_array_unref (f->errors);
  g_free (f->fail_name);
}

typedef struct
{
  Fixture *f;
  guint n_calls;
} CallsWait;

static gboolean
has_calls (gpointer data)
{
  CallsWait *w = data;
  return w->f->calls->len >= w->n_calls;
}

/* Runs the main loop until @n_calls ingest calls happened, at most @ms milliseconds. */
static void
spin_until_calls (Fixture *f, guint n_calls, guint ms)
{
  CallsWait w = { f, n_calls };
  dw_watch_test_spin_until (has_calls, &w, ms);
}

static void
append (const char *path, const char *text)
{
  int fd = g_open (path, O_WRONLY | O_APPEND | O_CREAT, 0644);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, text, strlen (text)), ==, (gssize)strlen (text));
  g_assert_cmpint (close (fd), ==, 0);
}

static char *
path_in (Fixture *f, const char *rel)
{
  return g_build_filename (f->dir, "run", rel, NULL);
}

static void
make_run (Fixture *f)
{
  g_autofree char *run = g_build_filename (f->dir, "run", NULL);
  g_assert_cmpint (g_mkdir (run, 0755), ==, 0);
}

static void
add_run (Fixture *f)
{
  g_autofree char *run = g_build_filename (f->dir, "run", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_true (dw_follower_add_path (f->follower, run, &error));
  g_assert_no_error (error);
}

/* Files already there are queued by add_path and ingested by flush, in path order; the
 * store's own files beside them are not. */
static void
test_existing (Fixture *f, gconstpointer data)
{
  g_autofree char *a = NULL, *b = NULL, *sub = NULL, *c = NULL;

  make_run (f);
  a = path_in (f, "metrics.jsonl");
  b = path_in (f, "console.log");
  sub = path_in (f, "batches");
  c = path_in (f, "batches/step_000001.safetensors");
  append (a, "{\"step\":1,\"data\":{}}\n");
  append (b, "step:1 - x:1.0\n");
  g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
  append (c, "12345678");
  add_run (f);
  g_assert_cmpuint (dw_follower_get_n_pending (f->follower), ==, 3);
  g_assert_cmpuint (dw_follower_flush (f->follower), ==, 3);
  g_assert_cmpuint (f->calls->len, ==, 3);
  g_assert_cmpstr (f->calls->pdata[0], ==, "batches/step_000001.safetensors 8");
  g_assert_cmpstr (f->calls->pdata[1], ==, "console.log 15");
  g_assert_cmpstr (f->calls->pdata[2], ==, "metrics.jsonl 21");
  g_assert_cmpuint (f->n_flushed, ==, 1);
  /* Nothing changed: the loop stays quiet. */
  dw_watch_test_spin (300);
  g_assert_cmpuint (f->calls->len, ==, 3);
  g_assert_cmpuint (f->errors->len, ==, 0);
}

/* A burst of appends is ingested once, after the burst, with the whole file. */
static void
test_burst (Fixture *f, gconstpointer data)
{
  g_autofree char *a = NULL;

  make_run (f);
  add_run (f);
  a = path_in (f, "metrics.jsonl");
  for (int i = 0; i < 20; i++)
    append (a, "{\"step\":1,\"data\":{\"x\":1.0}}\n"); /* 28 bytes */
  spin_until_calls (f, 1, 2000);
  dw_watch_test_spin (300); /* nothing more must come */
  /* 20 appends within a few ms: one call (two or three only if the machine stalled for more
   * than the 100 ms quiet period in the middle of the burst), the last with the whole file */
  g_assert_cmpuint (f->calls->len, >=, 1);
  g_assert_cmpuint (f->calls->len, <=, 3);
  g_assert_cmpstr (f->calls->pdata[f->calls->len - 1], ==, "metrics.jsonl 560");
  g_assert_cmpuint (f->n_flushed, ==, f->calls->len);
}

/* A writer that never pauses longer than the quiet period is still ingested while it writes
 * (max-delay), not only once it stops. */
static void
test_continuous (Fixture *f, gconstpointer data)
{
  g_autofree char *a = NULL;
  gint64 start;

  make_run (f);
  add_run (f);
  a = path_in (f, "metrics.jsonl");
  start = g_get_monotonic_time ();
  for (int i = 0; i < 30; i++) /* one line every 50 ms for 1.5 s */
    {
      append (a, "{\"step\":1,\"data\":{\"x\":1.0}}\n");
      dw_watch_test_spin (50);
    }
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 1500 * 1000);
  spin_until_calls (f, f->calls->len + 1, 1000);
  /* 50 ms gaps are shorter than the 100 ms quiet period: only max-delay (400 ms) ingests while
   * writing, so 3–5 calls during 1.5 s, then one for the tail. */
  g_assert_cmpuint (f->calls->len, >=, 3);
  g_assert_cmpuint (f->calls->len, <=, 8);
  g_assert_cmpstr (f->calls->pdata[f->calls->len - 1], ==, "metrics.jsonl 840");
}

/* New subfolders are followed, files written atomically (temp file + rename) are ingested under
 * their final name, the temp name never. */
static void
test_new_folder_and_rename (Fixture *f, gconstpointer data)
{
  g_autofree char *sub = NULL, *deep = NULL, *b1 = NULL, *b2 = NULL;
  g_autoptr (GError) error = NULL;

  make_run (f);
  add_run (f);
  sub = path_in (f, "batches");
  g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
  b1 = path_in (f, "batches/step_000001.safetensors");
  g_assert_true (g_file_set_contents (b1, "0123456789", 10, &error));
  g_assert_no_error (error);
  spin_until_calls (f, 1, 2000);
  dw_watch_test_spin (300);
  g_assert_cmpuint (f->calls->len, ==, 1);
  g_assert_cmpstr (f->calls->pdata[0], ==, "batches/step_000001.safetensors 10");

  /* A folder created with content already inside (mkdir -p + write before the monitor of the
   * new folder exists): the scan at follow time finds it. */
  deep = path_in (f, "batches/rank1/late");
  g_assert_cmpint (g_mkdir_with_parents (deep, 0755), ==, 0);
  b2 = path_in (f, "batches/rank1/late/step_000002.safetensors");
  append (b2, "abc");
  spin_until_calls (f, 2, 2000);
  dw_watch_test_spin (300);
  g_assert_cmpuint (f->calls->len, ==, 2);
  g_assert_cmpstr (f->calls->pdata[1], ==, "batches/rank1/late/step_000002.safetensors 3");
  /* ...and then followed: an append is seen. */
  append (b2, "def");
  spin_until_calls (f, 3, 2000);
  g_assert_cmpuint (f->calls->len, ==, 3);
  g_assert_cmpstr (f->calls->pdata[2], ==, "batches/rank1/late/step_000002.safetensors 6");
  g_assert_cmpuint (f->errors->len, ==, 0);
}

/* A deleted file is not ingested and raises no error; a file created and deleted within the
 * quiet period is never seen; a file re-created under the same name is ingested again. */
static void
test_deleted (Fixture *f, gconstpointer data)
{
  g_autofree char *a = NULL, *t = NULL;

  make_run (f);
  a = path_in (f, "metrics.jsonl");
  append (a, "{\"step\":1,\"data\":{}}\n");
  add_run (f);
  dw_follower_flush (f->follower);
  g_assert_cmpuint (f->calls->len, ==, 1);
  g_assert_cmpint (g_unlink (a), ==, 0);
  t = path_in (f, "scratch.tmp");
  append (t, "x");
  g_assert_cmpint (g_unlink (t), ==, 0);
  dw_watch_test_spin (400);
  g_assert_cmpuint (f->calls->len, ==, 1);
  append (a, "{\"step\":1,\"data\":{\"y\":2}}\n");
  spin_until_calls (f, 2, 2000);
  g_assert_cmpuint (f->calls->len, ==, 2);
  g_assert_cmpstr (f->calls->pdata[1], ==, "metrics.jsonl 26");
  g_assert_cmpuint (f->errors->len, ==, 0);
}

/* A file that fails while it is still being written is retried once it has settled; the error
 * is reported once, naming the file and the place, and not again for the unchanged file. */
static void
test_error_settles (Fixture *f, gconstpointer data)
{
  g_autofree char *b = NULL, *expected = NULL;
  gint64 start;
  guint n_calls;

  make_run (f);
  add_run (f);
  f->fail_name = g_strdup ("step_000003.npz");
  b = path_in (f, "step_000003.npz");
  start = g_get_monotonic_time ();
  append (b, "PK\003\004");
  spin_until_calls (f, 1, 2000);
  /* first attempt failed while the file was fresh: no error yet */
  g_assert_cmpuint (f->errors->len, ==, 0);
  /* late events of the write may bring more attempts; the error waits until the file is 1 s
   * old */
  while (f->errors->len == 0 && g_get_monotonic_time () - start < 3 * G_USEC_PER_SEC)
    spin_until_calls (f, f->calls->len + 1, 3000);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 900 * 1000);
  g_assert_cmpuint (f->calls->len, >=, 2);
  g_assert_cmpuint (f->errors->len, ==, 1);
  n_calls = f->calls->len;
  expected = g_strdup_printf ("%s: offset 8: truncated record (4 bytes)", b);
  g_assert_cmpstr (f->errors->pdata[0], ==, expected);
  dw_watch_test_spin (1500);
  g_assert_cmpuint (f->calls->len, ==, n_calls);
  g_assert_cmpuint (f->errors->len, ==, 1);

  /* Once fixed, it is ingested and a later failure is reported again. */
  g_clear_pointer (&f->fail_name, g_free);
  append (b, "rest");
  spin_until_calls (f, n_calls + 1, 2000);
  g_assert_cmpuint (f->calls->len, >=, n_calls + 1);
  g_assert_cmpstr (f->calls->pdata[f->calls->len - 1], ==, "step_000003.npz 8");
  g_assert_cmpuint (f->errors->len, ==, 1);
}

static gboolean
slow_ingest (DwStore *store, const char *root, const char *path, gint64 *run_id, gint64 *n_points,
             gpointer user_data, GError **error)
{
  g_usleep (2000);
  return record_ingest (store, root, path, run_id, n_points, user_data, error);
}

static gboolean
note_tick (gpointer data)
{
  Fixture *f = data;
  g_ptr_array_add (f->calls, g_strdup ("tick"));
  return G_SOURCE_REMOVE;
}

/* From the main loop a long queue is ingested in slices: other sources (a signal handler, a
 * redraw; here a timeout) run between files, ::flushed comes after each slice, and every file
 * is ingested exactly once, in path order. */
static void
test_slices (Fixture *f, gconstpointer data)
{
  const guint n_files = 120; /* 2 ms each: ~240 ms, about 5 slices of 50 ms */
  guint n_ticks = 0, last = 0;

  make_run (f);
  for (guint i = 0; i < n_files; i++)
    {
      g_autofree char *name = g_strdup_printf ("f%03u.log", i);
      g_autofree char *p = path_in (f, name);
      append (p, "x");
    }
  dw_follower_set_ingest_func (f->follower, slow_ingest, f, NULL);
  add_run (f);
  g_assert_cmpuint (dw_follower_get_n_pending (f->follower), ==, n_files);
  g_timeout_add (150, note_tick, f); /* due while the queue is being ingested */
  spin_until_calls (f, n_files + 1, 5000);
  dw_watch_test_spin (200);
  g_assert_cmpuint (f->calls->len, ==, n_files + 1);
  g_assert_cmpuint (dw_follower_get_n_pending (f->follower), ==, 0);
  g_assert_cmpuint (f->n_flushed, >=, 3);
  for (guint i = 0, k = 0; i < f->calls->len; i++)
    {
      g_autofree char *expected = NULL;
      if (g_str_equal (f->calls->pdata[i], "tick"))
        {
          n_ticks++;
          last = i;
          continue;
        }
      expected = g_strdup_printf ("f%03u.log 1", k++);
      g_assert_cmpstr (f->calls->pdata[i], ==, expected);
    }
  g_assert_cmpuint (n_ticks, ==, 1);
  /* the tick came between two files, not after the last */
  g_assert_cmpuint (last, >, 0);
  g_assert_cmpuint (last, <, n_files);
}

/* A single followed file (not a folder); the store inside the followed folder is ignored. */
static void
test_single_file (Fixture *f, gconstpointer data)
{
  g_autofree char *log = g_build_filename (f->dir, "train.log", NULL);
  g_autoptr (GError) error = NULL;

  append (log, "step:1 - a:1\n");
  g_assert_true (dw_follower_add_path (f->follower, log, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (dw_follower_flush (f->follower), ==, 1);
  g_assert_cmpstr (f->calls->pdata[0], ==, "train.log 13");
  append (log, "step:2 - a:2\n");
  spin_until_calls (f, 2, 2000);
  g_assert_cmpstr (f->calls->pdata[1], ==, "train.log 26");
  g_assert_cmpstrv (dw_follower_get_paths (f->follower), ((const char *const[]){ log, NULL }));
}

static void
test_store_inside (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *other = g_build_filename (f->dir, "notes.txt", NULL);

  /* the fixture's store lives in f->dir: follow f->dir itself */
  g_assert_true (dw_follower_add_path (f->follower, f->dir, &error));
  g_assert_no_error (error);
  dw_follower_flush (f->follower);
  g_assert_cmpuint (f->calls->len, ==, 0);
  /* writing the store (WAL) makes no ingest calls */
  g_assert_true (dw_store_begin (f->store, &error));
  g_assert_cmpint (dw_store_ensure_run (f->store, "r", "verl", f->dir, &error), >, 0);
  g_assert_true (dw_store_commit (f->store, &error));
  append (other, "x");
  spin_until_calls (f, 1, 2000);
  dw_watch_test_spin (300);
  g_assert_cmpuint (f->calls->len, ==, 1);
  g_assert_cmpstr (f->calls->pdata[0], ==, "notes.txt 1");
}

static void
test_missing (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *nowhere = g_build_filename (f->dir, "nowhere", NULL);
  g_autofree char *expected = g_strdup_printf ("%s: No such file or directory", nowhere);

  g_assert_false (dw_follower_add_path (f->follower, nowhere, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_cmpstr (error->message, ==, expected);
  g_assert_cmpstrv (dw_follower_get_paths (f->follower), ((const char *const[]){ NULL }));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  setlocale (LC_ALL, "C");
#define ADD(name, fn) \
  g_test_add ("/follower/" name, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("existing", test_existing);
  ADD ("burst", test_burst);
  ADD ("continuous", test_continuous);
  ADD ("new-folder-and-rename", test_new_folder_and_rename);
  ADD ("deleted", test_deleted);
  ADD ("error-settles", test_error_settles);
  ADD ("slices", test_slices);
  ADD ("single-file", test_single_file);
  ADD ("store-inside", test_store_inside);
  ADD ("missing", test_missing);
#undef ADD
  return g_test_run ();
}
