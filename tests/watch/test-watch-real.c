/* test-watch-real.c — following real-world logs live (issue 12): files created after the watch
 * started, written in small chunks, give the same store as one clean ingest of the folder
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The logs come from tests/ingest/log-fixtures.c (each says which real case it reproduces).
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "dw-follower.h"
#include "dw-ingester.h"
#include "dw-store-writer.h"
#include "log-fixtures.h"
#include "watch-test-util.h"

typedef struct
{
  char *dir;
  char *root;
  DwStore *store;
  DwFollower *follower;
  GPtrArray *errors;
  GPtrArray *skipped; /* "path\treason" */
} Fixture;

static void
on_skipped (DwFollower *follower, const char *path, const char *reason, Fixture *f)
{
  g_ptr_array_add (f->skipped, g_strdup_printf ("%s\t%s", path, reason));
}

static void
on_error (DwFollower *follower, GError *error, const char *path, Fixture *f)
{
  g_test_message ("follower error: %s", error->message);
  g_ptr_array_add (f->errors, g_strdup (error->message));
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = NULL;

  (void)data;
  f->dir = g_dir_make_tmp ("dw-watch-real-XXXXXX", &error);
  g_assert_no_error (error);
  f->root = g_build_filename (f->dir, "runs", NULL);
  g_assert_cmpint (g_mkdir (f->root, 0755), ==, 0);
  db = g_build_filename (f->dir, "live.db", NULL);
  f->store = dw_store_open (db, &error);
  g_assert_no_error (error);
  f->errors = g_ptr_array_new_with_free_func (g_free);
  f->skipped = g_ptr_array_new_with_free_func (g_free);
  f->follower = dw_follower_new (f->store);
  dw_follower_set_delay (f->follower, 30);
  dw_follower_set_max_delay (f->follower, 100);
  g_signal_connect (f->follower, "error", G_CALLBACK (on_error), f);
  g_signal_connect (f->follower, "skipped", G_CALLBACK (on_skipped), f);
  g_assert_true (dw_follower_add_path (f->follower, f->root, &error));
  g_assert_no_error (error);
  dw_follower_flush (f->follower);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void)data;
  g_clear_object (&f->follower);
  g_clear_object (&f->store);
  dw_watch_test_rm_rf (f->dir);
  g_free (f->dir);
  g_free (f->root);
  g_ptr_array_unref (f->errors);
  g_ptr_array_unref (f->skipped);
}

/* Appends @data to @path (created with its folders) in pieces of @piece bytes, letting the main
 * loop run now and then as a trainer's writes would. */
static void
write_in_pieces (const char *path, const guint8 *data, gsize len, gsize piece)
{
  g_autofree char *parent = g_path_get_dirname (path);
  int fd;
  guint n = 0;

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  fd = g_open (path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  g_assert_cmpint (fd, >=, 0);
  for (gsize off = 0; off < len; off += piece)
    {
      gsize n_bytes = MIN (piece, len - off);
      g_assert_cmpint (write (fd, data + off, n_bytes), ==, (gssize)n_bytes);
      if (++n % 16 == 0)
        dw_watch_test_spin (5);
    }
  close (fd);
}

static char *
dump_of (DwStore *store)
{
  g_autoptr (GError) error = NULL;
  char *d = dw_store_dump (store, &error);

  g_assert_no_error (error);
  return d;
}

static char *
clean_dump (const char *dir, const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = g_build_filename (dir, "clean.db", NULL);
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  g_autoptr (DwIngester) ing = NULL;

  g_assert_no_error (error);
  ing = dw_ingester_new (store);
  g_assert_true (dw_ingester_ingest_path (ing, path, NULL, &error));
  g_assert_no_error (error);
  return dump_of (store);
}

static void
settle (Fixture *f)
{
  dw_watch_test_spin (400);
  dw_follower_flush (f->follower);
}

static void
assert_like_clean (Fixture *f)
{
  g_autofree char *live = dump_of (f->store), *clean = clean_dump (f->dir, f->root);
  g_auto (GStrv) a = NULL, b = NULL;
  guint i;

  if (g_str_equal (live, clean))
    return;
  a = g_strsplit (live, "\n", -1);
  b = g_strsplit (clean, "\n", -1);
  for (i = 0; a[i] != NULL && b[i] != NULL && g_str_equal (a[i], b[i]); i++)
    ;
  g_test_message ("live and clean stores differ at dump line %u", i + 1);
  g_assert_cmpstr (a[i], ==, b[i]);
}

static guint
n_runs (DwStore *store)
{
  g_autoptr (GPtrArray) runs = dw_store_list_runs (store, NULL);
  return runs->len;
}

/* Real case: a modern verl run started after `driftwatch-cli watch`: its log appears, the first
 * `step:` line comes 490 KB in, after a NUL and a Ray-interleaved config, tqdm on the metric
 * lines; written in 4 KiB pieces. A README with a pasted log written next to it is no run. */
static void
test_late_preamble (Fixture *f, gconstpointer data)
{
  DwFixtureConsole spec = { .project = "gsm8k_rc",
                            .experiment = "late_run",
                            .first_step = 1,
                            .last_step = 12,
                            .preamble_bytes = 490 * 1024,
                            .ray = TRUE,
                            .nul_in_head = TRUE,
                            .tqdm = TRUE };
  g_autoptr (GString) log = dw_fixture_verl_console (&spec);
  g_autofree char *path = g_build_filename (f->root, "late", "driver.log", NULL);
  g_autofree char *readme = g_build_filename (f->root, "late", "README.md", NULL);
  const char *md = "# notes\n\n```\nstep:0 - val-core/acc/mean@1:0.38 - actor/pg_loss:0.1\n```\n";

  (void)data;
  write_in_pieces (readme, (const guint8 *)md, strlen (md), 8);
  write_in_pieces (path, (const guint8 *)log->str, log->len, 4096);
  settle (f);
  g_assert_cmpuint (n_runs (f->store), ==, 1);
  {
    g_autoptr (DwRunInfo) run = dw_store_find_run (f->store, "late_run", NULL);
    g_assert_nonnull (run);
    g_assert_cmpint (run->first_step, ==, 1);
    g_assert_cmpint (run->last_step, ==, 12);
  }
  assert_like_clean (f);
  g_assert_cmpuint (f->errors->len, ==, 0);
  /* the README is said once to be no log, with the reason */
  g_assert_cmpuint (f->skipped->len, ==, 1);
  g_assert_true (g_str_has_prefix (f->skipped->pdata[0], readme));
  g_assert_nonnull (strstr (f->skipped->pdata[0], "a document (README.md)"));
}

/* Real cases written live side by side: tensorboard_log/<project>/<exp> with two experiments
 * and a restart (a second event file going back to step 4), a logs/ folder of two separate
 * runs, a console + TensorBoard pair, and a log whose last line has no newline when it stops. */
static void
test_late_tree (Fixture *f, gconstpointer data)
{
  (void)data;
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr (GByteArray) ev = dw_fixture_tfevents (1, 9, 0, i, 1.79e9);
      g_autofree char *p = g_strdup_printf (
        "%s/tensorboard_log/proj/exp%u/events.out.tfevents.1795353214.a.1.0", f->root, i);
      write_in_pieces (p, ev->data, ev->len, 100);
    }
  {
    g_autoptr (GByteArray) ev = dw_fixture_tfevents (4, 6, 1, 1, 1.8e9);
    g_autofree char *p = g_strdup_printf (
      "%s/tensorboard_log/proj/exp1/events.out.tfevents.1795999999.b.2.0", f->root);
    write_in_pieces (p, ev->data, ev->len, 100);
  }
  for (guint i = 0; i < 2; i++)
    {
      DwFixtureConsole spec = { .project = "lp",
                                .experiment = i ? "job_b" : "job_a",
                                .first_step = 1,
                                .last_step = 5,
                                .offset = 5 + i,
                                .preamble_bytes = 20000,
                                .no_final_newline = i == 1 };
      g_autoptr (GString) log = dw_fixture_verl_console (&spec);
      g_autofree char *p = g_strdup_printf ("%s/logs/job_%u.log", f->root, i);
      write_in_pieces (p, (const guint8 *)log->str, log->len, 1000);
    }
  {
    DwFixtureConsole spec = { .project = "pp",
                              .experiment = "paired",
                              .first_step = 1,
                              .last_step = 6,
                              .preamble_bytes = 9000,
                              .ray = TRUE };
    g_autoptr (GString) log = dw_fixture_verl_console (&spec);
    g_autoptr (GByteArray) ev = dw_fixture_tfevents (1, 6, 0, 0, 1.79e9);
    g_autofree char *p = g_strdup_printf ("%s/pair/train.log", f->root);
    g_autofree char *t = g_strdup_printf (
      "%s/pair/tensorboard_log/pp/paired/events.out.tfevents.1795353214.a.1.0", f->root);
    write_in_pieces (p, (const guint8 *)log->str, log->len, 2048);
    write_in_pieces (t, ev->data, ev->len, 300);
  }
  settle (f);
  g_assert_cmpuint (n_runs (f->store), ==, 5); /* exp0, exp1, job_a, job_b, paired */
  {
    g_autoptr (DwRunInfo) b = dw_store_find_run (f->store, "job_b", NULL);
    g_assert_nonnull (b);
    g_assert_cmpint (b->last_step, ==, 5); /* the unterminated last line */
  }
  assert_like_clean (f);
  g_assert_cmpuint (f->errors->len, ==, 0);
}

/* Real case: verl's working directory (its stdout naming pp/paired, and
 * tensorboard_log/pp/paired/) is watched as one run; then a second training is started from the
 * same directory with another experiment_name, and tensorboard_log/pp/second/ appears. That
 * experiment is a run of its own, as `ingest` of the tree gives, not more points of "paired". */
static void
test_new_experiment_in_run_folder (Fixture *f, gconstpointer data)
{
  DwFixtureConsole spec = {
    .project = "pp", .experiment = "paired", .first_step = 1, .last_step = 6, .preamble_bytes = 9000
  };
  g_autoptr (GString) log = dw_fixture_verl_console (&spec);
  g_autoptr (GByteArray) ev = dw_fixture_tfevents (1, 6, 0, 0, 1.79e9);
  g_autoptr (GByteArray) ev2 = dw_fixture_tfevents (1, 4, 1, 3, 1.8e9);
  g_autofree char *p = g_strdup_printf ("%s/work/train.log", f->root);
  g_autofree char *t = g_strdup_printf (
    "%s/work/tensorboard_log/pp/paired/events.out.tfevents.1795353214.a.1.0", f->root);
  g_autofree char *t2 = g_strdup_printf (
    "%s/work/tensorboard_log/pp/second/events.out.tfevents.1795999999.a.2.0", f->root);

  (void)data;
  write_in_pieces (p, (const guint8 *)log->str, log->len, 2048);
  write_in_pieces (t, ev->data, ev->len, 300);
  settle (f);
  g_assert_cmpuint (n_runs (f->store), ==, 1);
  write_in_pieces (t2, ev2->data, ev2->len, 100);
  settle (f);
  g_assert_cmpuint (n_runs (f->store), ==, 2);
  {
    g_autoptr (DwRunInfo) paired = dw_store_find_run (f->store, "paired", NULL);
    g_autoptr (DwRunInfo) second = dw_store_find_run (f->store, "second", NULL);
    g_assert_nonnull (paired);
    g_assert_nonnull (second);
    g_assert_cmpint (paired->last_step, ==, 6);
    g_assert_cmpint (second->last_step, ==, 4);
  }
  assert_like_clean (f);
  g_assert_cmpuint (f->errors->len, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/watch-real/late-490k-preamble", Fixture, NULL, fixture_set_up, test_late_preamble,
              fixture_tear_down);
  g_test_add ("/watch-real/new-experiment-in-run-folder", Fixture, NULL, fixture_set_up,
              test_new_experiment_in_run_folder, fixture_tear_down);
  g_test_add ("/watch-real/late-tree", Fixture, NULL, fixture_set_up, test_late_tree,
              fixture_tear_down);
  return g_test_run ();
}
