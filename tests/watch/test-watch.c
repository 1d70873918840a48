/* test-watch.c — following growing runs into the store, and `driftwatch-cli watch`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The reference for every live result is a clean ingest of the final files by the ingester
 * (dw_store_dump of both stores must be equal), plus values derived independently from the
 * lines the test wrote.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "dw-demo.h"
#include "dw-follower.h"
#include "dw-health.h"
#include "dw-ingester.h"
#include "dw-store-writer.h"
#include "dw-test-cli.h"
#include "watch-test-util.h"

typedef struct
{
  char *dir;
  char *run;
  char *db;
  DwStore *store;
  DwFollower *follower;
  GPtrArray *errors;
  guint64 n_ingested;
} Fixture;

static void
on_error (DwFollower *follower, GError *error, const char *path, Fixture *f)
{
  g_test_message ("follower error: %s", error->message);
  g_ptr_array_add (f->errors, g_strdup (error->message));
}

static void
on_ingested (DwFollower *follower, gint64 run_id, gint64 n, const char *path, Fixture *f)
{
  g_assert_cmpint (run_id, >, 0);
  g_assert_cmpint (n, >, 0);
  f->n_ingested += (guint64)n;
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  f->dir = g_dir_make_tmp ("dw-watch-XXXXXX", &error);
  g_assert_no_error (error);
  f->run = g_build_filename (f->dir, "run-a", NULL);
  g_assert_cmpint (g_mkdir (f->run, 0755), ==, 0);
  f->db = g_build_filename (f->dir, "live.db", NULL);
  f->errors = g_ptr_array_new_with_free_func (g_free);
}

static void
open_follower (Fixture *f)
{
  g_autoptr (GError) error = NULL;

  f->store = dw_store_open (f->db, &error);
  g_assert_no_error (error);
  f->follower = dw_follower_new (f->store);
  dw_follower_set_delay (f->follower, 50);
  dw_follower_set_max_delay (f->follower, 200);
  g_signal_connect (f->follower, "error", G_CALLBACK (on_error), f);
  g_signal_connect (f->follower, "ingested", G_CALLBACK (on_ingested), f);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->follower);
  g_clear_object (&f->store);
  dw_watch_test_rm_rf (f->dir);
  g_free (f->dir);
  g_free (f->run);
  g_free (f->db);
  g_ptr_array_unref (f->errors);
}

/* What a clean ingest of @path (folder or file) into a fresh store gives. */
static char *
clean_dump (const char *dir, const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = g_build_filename (dir, "clean.db", NULL);
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwIngester) ingester = NULL;
  char *dump;

  g_unlink (db);
  store = dw_store_open (db, &error);
  g_assert_no_error (error);
  ingester = dw_ingester_new (store);
  g_assert_true (dw_ingester_ingest_path (ingester, path, NULL, &error));
  g_assert_no_error (error);
  dump = dw_store_dump (store, &error);
  g_assert_no_error (error);
  g_clear_object (&store);
  g_unlink (db);
  {
    g_autofree char *wal = g_strconcat (db, "-wal", NULL), *shm = g_strconcat (db, "-shm", NULL);
    g_unlink (wal);
    g_unlink (shm);
  }
  return dump;
}

static char *
dump_of (DwStore *store)
{
  g_autoptr (GError) error = NULL;
  char *dump = dw_store_dump (store, &error);

  g_assert_no_error (error);
  return dump;
}

/* @store's dump equals a clean ingest of @path; otherwise fails showing the first differing
 * line only (dumps are megabytes). */
static void
assert_like_clean_ingest (DwStore *store, const char *dir, const char *path)
{
  g_autofree char *live = dump_of (store), *clean = clean_dump (dir, path);
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
  g_assert_not_reached ();
}

static void
write_all (const char *path, const char *data, gsize len, int flags)
{
  int fd = g_open (path, O_WRONLY | O_CREAT | flags, 0644);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, data, len), ==, (gssize)len);
  g_assert_cmpint (fsync (fd), ==, 0);
  g_assert_cmpint (close (fd), ==, 0);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

static DwSeries *
series (DwStore *store, const char *tag)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) runs = dw_store_list_runs (store, &error);
  DwSeries *s;

  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 1);
  s = dw_store_get_series (store, ((DwRunInfo *)runs->pdata[0])->id, tag, G_MININT64, &error);
  g_assert_no_error (error);
  return s;
}

/* ---------------------------------------------------------------------------------------- */

/* A verl-like run (JSONL, tfevents, one safetensors batch per step) written step by step while
 * it is followed ends up exactly as a clean ingest of the finished folder. */
static void
test_live_demo (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwDemo) demo = NULL;
  gboolean done = FALSE;
  guint steps = 0;

  demo = dw_demo_new (f->run, DW_DEMO_COLLAPSE, 40, 11, &error);
  g_assert_no_error (error);
  open_follower (f);
  g_assert_true (dw_follower_add_path (f->follower, f->run, &error));
  g_assert_no_error (error);
  dw_follower_flush (f->follower);
  while (!done)
    {
      g_assert_true (dw_demo_write_step (demo, &done, &error));
      g_assert_no_error (error);
      steps++;
      /* from back-to-back steps to steps slower than the quiet period */
      dw_watch_test_spin ((guint)g_test_rand_int_range (0, 120));
    }
  g_assert_cmpuint (steps, ==, 40);
  dw_watch_test_spin (800); /* max-delay 200 ms: everything is in by then */
  g_assert_cmpuint (dw_follower_get_n_pending (f->follower), ==, 0);
  assert_like_clean_ingest (f->store, f->dir, f->run);
  g_assert_cmpuint (f->errors->len, ==, 0);
  g_assert_cmpuint (f->n_ingested, >, 0);
  {
    g_autoptr (GPtrArray) runs = dw_store_list_runs (f->store, &error);
    g_autoptr (GArray) batch_steps = NULL;
    g_assert_cmpuint (runs->len, ==, 1);
    batch_steps = dw_store_list_batch_steps (f->store, ((DwRunInfo *)runs->pdata[0])->id, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (batch_steps->len, ==, 40);
    g_assert_cmpint (((DwRunInfo *)runs->pdata[0])->last_step, ==, 40);
  }
}

static GString *
jsonl_lines (gint64 first, gint64 last, double scale)
{
  GString *s = g_string_new (NULL);

  for (gint64 k = first; k <= last; k++)
    {
      char v[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_dtostr (v, sizeof v, (double)k * scale);
      g_string_append_printf (
        s, "{\"step\": %" G_GINT64_FORMAT ", \"data\": {\"actor/pg_loss\": %s}}\n", k, v);
    }
  return s;
}

/* A JSONL log appended in pieces that cut lines anywhere: a partial last line waits (nothing
 * stored for it, no error), every point arrives once, the store ends as a clean ingest. */
static void
test_jsonl_pieces (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (f->run, "metrics.jsonl", NULL);
  g_autoptr (GString) all = jsonl_lines (1, 60, 0.25);
  gsize pos = 0, partial_at;

  write_all (path, "", 0, O_TRUNC);
  open_follower (f);
  g_assert_true (dw_follower_add_path (f->follower, f->run, &error));
  g_assert_no_error (error);
  dw_follower_flush (f->follower);

  /* up to the middle of line 31 */
  partial_at = (gsize)(strstr (all->str, "{\"step\": 31,") - all->str) + 20;
  while (pos < partial_at)
    {
      gsize piece = (gsize)g_test_rand_int_range (1, 90); /* MIN evaluates twice */
      gsize n = MIN (piece, partial_at - pos);
      write_all (path, all->str + pos, n, O_APPEND);
      pos += n;
      dw_watch_test_spin ((guint)g_test_rand_int_range (0, 60));
    }
  dw_watch_test_spin (500);
  {
    g_autoptr (DwSeries) s = series (f->store, "actor/pg_loss");
    g_assert_cmpuint (s->n, ==, 30);
    for (gsize i = 0; i < s->n; i++)
      {
        g_assert_cmpint (s->steps[i], ==, (gint64)i + 1);
        g_assert_cmpfloat (s->values[i], ==, (double)(i + 1) * 0.25);
      }
  }
  g_assert_cmpuint (f->errors->len, ==, 0);
  write_all (path, all->str + pos, all->len - pos, O_APPEND);
  dw_watch_test_spin (500);
  {
    g_autoptr (DwSeries) s = series (f->store, "actor/pg_loss");
    g_assert_cmpuint (s->n, ==, 60);
    g_assert_cmpint (s->steps[59], ==, 60);
    g_assert_cmpfloat (s->values[59], ==, 15.0);
  }
  assert_like_clean_ingest (f->store, f->dir, f->run);
  g_assert_cmpuint (f->errors->len, ==, 0);
}

/* verl's FileLogger reopens its JSONL with "wb" on a restart: the file shrinks (or is
 * rewritten and grows past the old offset before the follower looks). The new lines replace
 * the same steps (newest write wins), the steps only the old launch had after the restart step
 * are dropped (TensorBoard's rule), a restart is recorded; a deleted file raises no error and keeps
 * its points. */
static void
test_rewrite (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (f->run, "metrics.jsonl", NULL);
  g_autoptr (GString) first = jsonl_lines (1, 10, 1.0);
  g_autoptr (GString) second = jsonl_lines (1, 4, -2.0);
  g_autoptr (GString) third = jsonl_lines (5, 6, -2.0);
  g_autoptr (GString) fourth = jsonl_lines (1, 12, 3.0);

  write_all (path, first->str, first->len, O_TRUNC);
  open_follower (f);
  g_assert_true (dw_follower_add_path (f->follower, f->run, &error));
  g_assert_no_error (error);
  dw_follower_flush (f->follower);
  {
    g_autoptr (DwSeries) s = series (f->store, "actor/pg_loss");
    g_assert_cmpuint (s->n, ==, 10);
    g_assert_cmpfloat (s->values[9], ==, 10.0);
  }

  /* shrinks: 10 lines → 4 other lines, then grows by 2 */
  write_all (path, second->str, second->len, O_TRUNC);
  dw_watch_test_spin (500);
  write_all (path, third->str, third->len, O_APPEND);
  dw_watch_test_spin (500);
  {
    g_autoptr (DwSeries) s = series (f->store, "actor/pg_loss");
    /* TensorBoard's rule: the earlier launch's steps 7–10 are stale once the later one
     * started again at step 1 */
    g_assert_cmpuint (s->n, ==, 6);
    for (gsize i = 0; i < 6; i++)
      g_assert_cmpfloat (s->values[i], ==, (double)(i + 1) * -2.0);
    g_assert_cmpuint (s->n_restarts, ==, 1);
    g_assert_cmpint (s->restart_steps[0], ==, 1);
  }

  /* rewritten in one go, longer than before: only the first bytes tell */
  write_all (path, fourth->str, fourth->len, O_TRUNC);
  dw_watch_test_spin (500);
  {
    g_autoptr (DwSeries) s = series (f->store, "actor/pg_loss");
    g_assert_cmpuint (s->n, ==, 12);
    for (gsize i = 0; i < 12; i++)
      g_assert_cmpfloat (s->values[i], ==, (double)(i + 1) * 3.0);
  }

  g_assert_cmpint (g_unlink (path), ==, 0);
  dw_watch_test_spin (400);
  {
    g_autoptr (DwSeries) s = series (f->store, "actor/pg_loss");
    g_assert_cmpuint (s->n, ==, 12);
  }
  g_assert_cmpuint (f->errors->len, ==, 0);
}

/* A folder of runs: a run folder that appears while watching becomes its own run, named after
 * its folder, as `ingest` of the parent folder would make it. */
static void
test_folder_of_runs (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *parent = g_build_filename (f->dir, "runs", NULL);
  g_autofree char *a = g_build_filename (parent, "exp-a", NULL);
  g_autofree char *b = g_build_filename (parent, "exp-b", NULL);
  g_autofree char *a_log = g_build_filename (a, "metrics.jsonl", NULL);
  g_autofree char *b_log = g_build_filename (b, "metrics.jsonl", NULL);
  g_autoptr (GString) lines = jsonl_lines (1, 5, 0.5);

  g_assert_cmpint (g_mkdir_with_parents (a, 0755), ==, 0);
  write_all (a_log, lines->str, lines->len, O_TRUNC);
  open_follower (f);
  g_assert_true (dw_follower_add_path (f->follower, parent, &error));
  g_assert_no_error (error);
  dw_follower_flush (f->follower);
  g_assert_cmpint (g_mkdir (b, 0755), ==, 0);
  write_all (b_log, lines->str, 40, O_TRUNC); /* a partial first line */
  dw_watch_test_spin (300);
  write_all (b_log, lines->str + 40, lines->len - 40, O_APPEND);
  write_all (a_log, lines->str, lines->len, O_APPEND); /* a restart of exp-a */
  dw_watch_test_spin (600);
  {
    g_autoptr (GPtrArray) runs = dw_store_list_runs (f->store, &error);
    g_auto (GStrv) names = NULL;
    g_assert_no_error (error);
    g_assert_cmpuint (runs->len, ==, 2);
    names = g_new0 (char *, 3);
    for (guint i = 0; i < 2; i++)
      names[i] = g_strdup (((DwRunInfo *)runs->pdata[i])->name);
    qsort (names, 2, sizeof (char *), cmp_str);
    g_assert_cmpstr (names[0], ==, "exp-a");
    g_assert_cmpstr (names[1], ==, "exp-b");
  }
  assert_like_clean_ingest (f->store, f->dir, parent);
  g_assert_cmpuint (f->errors->len, ==, 0);
}

/* A batch file written in two parts (not atomically): nothing is reported while it is being
 * written, the complete batch is stored. One left truncated is reported once, after it has
 * stopped changing for a second, naming the file and the offset where it ends. */
static void
test_half_written_batch (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *src_dir = g_build_filename (f->dir, "src", NULL);
  g_autofree char *src = g_build_filename (src_dir, "batches", "step_000001.safetensors", NULL);
  g_autofree char *batches = g_build_filename (f->run, "batches", NULL);
  g_autofree char *b2 = g_build_filename (batches, "step_000002.safetensors", NULL);
  g_autofree char *b3 = g_build_filename (batches, "step_000003.safetensors", NULL);
  g_autofree char *contents = NULL, *expected = NULL;
  gsize len;
  gint64 start;

  g_assert_true (dw_demo_write (src_dir, DW_DEMO_HEALTHY, 1, 1, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (src, &contents, &len, &error));
  g_assert_cmpuint (len, >, 6000);
  g_assert_cmpint (g_mkdir (batches, 0755), ==, 0);
  open_follower (f);
  g_assert_true (dw_follower_add_path (f->follower, f->run, &error));
  g_assert_no_error (error);
  dw_follower_flush (f->follower);

  write_all (b2, contents, 5000, O_TRUNC);
  dw_watch_test_spin (400);
  g_assert_cmpuint (f->errors->len, ==, 0);
  write_all (b2, contents + 5000, len - 5000, O_APPEND);
  dw_watch_test_spin (1500);
  g_assert_cmpuint (f->errors->len, ==, 0);
  {
    g_autoptr (GPtrArray) runs = dw_store_list_runs (f->store, &error);
    g_autoptr (GArray) steps = NULL;
    g_assert_cmpuint (runs->len, ==, 1);
    steps = dw_store_list_batch_steps (f->store, ((DwRunInfo *)runs->pdata[0])->id, &error);
    g_assert_cmpuint (steps->len, ==, 1);
    /* the step the batch names in its metadata */
    g_assert_cmpint (g_array_index (steps, gint64, 0), ==, 1);
  }

  start = g_get_monotonic_time ();
  write_all (b3, contents, 5000, O_TRUNC);
  dw_watch_test_spin (600);
  g_assert_cmpuint (f->errors->len, ==, 0); /* still fresh: maybe being written */
  while (f->errors->len == 0 && g_get_monotonic_time () - start < 4 * G_USEC_PER_SEC)
    dw_watch_test_spin (50);
  g_assert_cmpuint (f->errors->len, ==, 1);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 900 * 1000);
  expected = g_strdup_printf ("%s: ", b3);
  g_assert_true (g_str_has_prefix (f->errors->pdata[0], expected));
  g_assert_nonnull (strstr (f->errors->pdata[0], "offset 5000"));
  dw_watch_test_spin (1500);
  g_assert_cmpuint (f->errors->len, ==, 1);
}

/* Garbage in a followed file is reported through ::error with the file and the byte offset,
 * and the good lines around it are kept. */
static void
test_garbage (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (f->run, "metrics.jsonl", NULL);
  g_autoptr (GString) a = jsonl_lines (1, 3, 1.0);
  g_autoptr (GString) b = jsonl_lines (4, 5, 1.0);
  g_autofree char *expected_prefix = NULL;
  gsize garbage_at;

  write_all (path, a->str, a->len, O_TRUNC);
  open_follower (f);
  g_assert_true (dw_follower_add_path (f->follower, f->run, &error));
  g_assert_no_error (error);
  dw_follower_flush (f->follower);
  garbage_at = a->len;
  write_all (path, "{\"step\": 4, \"data\": {oops\n", 26, O_APPEND);
  write_all (path, b->str, b->len, O_APPEND);
  dw_watch_test_spin (500);
  {
    g_autoptr (DwSeries) s = series (f->store, "actor/pg_loss");
    g_assert_cmpuint (s->n, ==, 5);
  }
  g_assert_cmpuint (f->errors->len, ==, 1);
  /* the place is inside the garbage line (where the JSON parser gave up) */
  expected_prefix = g_strdup_printf ("%s: byte offset ", path);
  g_assert_true (g_str_has_prefix (f->errors->pdata[0], expected_prefix));
  {
    const char *p = (const char *)f->errors->pdata[0] + strlen (expected_prefix);
    char *end = NULL;
    guint64 offset = g_ascii_strtoull (p, &end, 10);
    g_assert_true (end != p && g_str_has_prefix (end, ": verl JSONL: "));
    g_assert_cmpuint (offset, >=, garbage_at);
    g_assert_cmpuint (offset, <, garbage_at + 26);
  }
}

/* ---------------------------------------------------------------------------------------- */
/* driftwatch-cli watch                                                                       */

typedef struct
{
  GSubprocess *proc;
  GDataInputStream *out, *err;
  GPtrArray *out_lines, *err_lines;
} Cli;

static void read_next (GDataInputStream *in, GPtrArray *lines, GCancellable *cancel);

static void
line_read (GObject *source, GAsyncResult *res, gpointer data)
{
  GPtrArray *lines = data;
  g_autoptr (GError) error = NULL;
  char *line
    = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (source), res, NULL, &error);

  if (line == NULL)
    {
      g_ptr_array_unref (lines);
      return;
    }
  g_ptr_array_add (lines, line);
  read_next (G_DATA_INPUT_STREAM (source), lines, NULL); /* passes our reference on */
}

/* Takes one reference on @lines, dropped at EOF. */
static void
read_next (GDataInputStream *in, GPtrArray *lines, GCancellable *cancel)
{
  g_data_input_stream_read_line_async (in, G_PRIORITY_DEFAULT, cancel, line_read, lines);
}

/* Starts `watch DIR --db DB [--json]`; @chunk_bytes (or NULL) sets the ingester's transaction
 * size (--chunk-bytes: small chunks, many commits, more places to be killed at). */
static void
cli_start_env (Cli *c, const char *db, const char *dir, gboolean json, const char *chunk_bytes)
{
  g_autoptr (GError) error = NULL;
  const char *cli = g_getenv ("DW_CLI");
  g_autoptr (GSubprocessLauncher) launcher
    = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);

  g_assert_nonnull (cli);
  c->proc
    = g_subprocess_launcher_spawn (launcher, &error, cli, "watch", dir, "--db", db, "--chunk-bytes",
                                   chunk_bytes ? chunk_bytes : "0", json ? "--json" : NULL, NULL);
  g_assert_no_error (error);
  c->out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (c->proc));
  c->err = g_data_input_stream_new (g_subprocess_get_stderr_pipe (c->proc));
  c->out_lines = g_ptr_array_new_with_free_func (g_free);
  c->err_lines = g_ptr_array_new_with_free_func (g_free);
  read_next (c->out, g_ptr_array_ref (c->out_lines), NULL);
  read_next (c->err, g_ptr_array_ref (c->err_lines), NULL);
}

static void
cli_start (Cli *c, const char *db, const char *dir, gboolean json)
{
  cli_start_env (c, db, dir, json, NULL);
}

static gboolean
lines_contain (GPtrArray *lines, const char *needle)
{
  for (guint i = 0; i < lines->len; i++)
    if (strstr (lines->pdata[i], needle) != NULL)
      return TRUE;
  return FALSE;
}

typedef struct
{
  GPtrArray *lines;
  const char *needle;
} LineWait;

static gboolean
has_line (gpointer data)
{
  LineWait *w = data;
  return lines_contain (w->lines, w->needle);
}

/* Spins until @lines holds a line containing @needle (TRUE) or @ms passed (FALSE). */
static gboolean
wait_line (GPtrArray *lines, const char *needle, guint ms)
{
  LineWait w = { lines, needle };
  return dw_watch_test_spin_until (has_line, &w, ms);
}

static void
wait_exit (GSubprocess *proc)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (g_subprocess_wait (proc, NULL, &error));
  g_assert_no_error (error);
}

static void
cli_clear (Cli *c)
{
  /* let the readers see EOF */
  dw_watch_test_spin (50);
  g_clear_object (&c->out);
  g_clear_object (&c->err);
  g_clear_object (&c->proc);
  g_clear_pointer (&c->out_lines, g_ptr_array_unref);
  g_clear_pointer (&c->err_lines, g_ptr_array_unref);
}

/* TRUE when the store at @db holds everything of the files below @run: one run whose last step
 * is @last_step, with @n_batches batches, and every known file consumed up to its size. */
static gboolean
caught_up (const char *db, gint64 last_step, guint n_batches)
{
  g_autoptr (DwStore) store = dw_store_open_read_only (db, NULL);
  g_autoptr (GPtrArray) runs = NULL, files = NULL;
  g_autoptr (GArray) batches = NULL;
  const DwRunInfo *run;

  if (store == NULL || (runs = dw_store_list_runs (store, NULL)) == NULL || runs->len != 1)
    return FALSE;
  run = runs->pdata[0];
  batches = dw_store_list_batch_steps (store, run->id, NULL);
  if (run->last_step != last_step || batches == NULL || batches->len != n_batches)
    return FALSE;
  files = dw_store_list_files (store, NULL);
  for (guint i = 0; files != NULL && i < files->len; i++)
    {
      const DwFileRecord *r = files->pdata[i];
      GStatBuf st;
      if (r->format != DW_FORMAT_BATCH_SAFETENSORS
          && (g_stat (r->path, &st) != 0 || r->offset != (gint64)st.st_size))
        return FALSE;
    }
  return files != NULL;
}

typedef struct
{
  const char *db;
  gint64 last_step;
  guint n_batches;
  gboolean changed;
} CatchUp;

static void
on_wal_changed (GFileMonitor *m, GFile *file, GFile *other, GFileMonitorEvent event, CatchUp *c)
{
  c->changed = TRUE;
}

static gboolean
has_caught_up (gpointer data)
{
  CatchUp *c = data;

  if (!c->changed)
    return FALSE;
  c->changed = FALSE;
  return caught_up (c->db, c->last_step, c->n_batches);
}

/* Waits (checking whenever the store's WAL changes, no polling) until a `watch` process has
 * ingested everything, at most @ms milliseconds. */
static gboolean
wait_caught_up (const char *db, gint64 last_step, guint n_batches, guint ms)
{
  g_autofree char *wal = g_strconcat (db, "-wal", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (wal);
  g_autoptr (GFileMonitor) monitor = g_file_monitor_file (file, G_FILE_MONITOR_NONE, NULL, NULL);
  CatchUp c = { db, last_step, n_batches, TRUE };
  gboolean ok;

  g_assert_nonnull (monitor);
  g_signal_connect (monitor, "changed", G_CALLBACK (on_wal_changed), &c);
  ok = dw_watch_test_spin_until (has_caught_up, &c, ms);
  g_signal_handlers_disconnect_by_data (monitor, &c);
  return ok;
}

/* The first step of the event in a `watch --json` line holding @needle, or -1. */
static gint64
event_first_step (GPtrArray *lines, const char *needle)
{
  for (guint i = 0; i < lines->len; i++)
    {
      const char *line = lines->pdata[i], *p;
      if (strstr (line, needle) == NULL || (p = strstr (line, "\"first_step\": ")) == NULL)
        continue;
      return g_ascii_strtoll (p + strlen ("\"first_step\": "), NULL, 10);
    }
  return -1;
}

/* `watch --json` on a collapse demo run that is still being written prints the K3 KL drift
 * warning while the run goes on: the steps up to the collapse are written at a steady pace,
 * then the writer pauses (the run is not over) until the warning line arrives. It must name a
 * step before the collapse. Then the run finishes; SIGTERM exits 0 and the store is what a
 * clean ingest gives. */
static void
test_cli_live (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwDemo) demo = NULL;
  Cli c = { 0 };
  const guint steps = 200;
  const gint64 collapse = dw_demo_collapse_step (steps);
  const char *needle = "\"rule_id\": \"k3-kl-drift\"";
  gboolean done = FALSE;
  guint written = 0, warned_at = 0;
  gint64 first_step;

  demo = dw_demo_new (f->run, DW_DEMO_COLLAPSE, steps, 5, &error);
  g_assert_no_error (error);
  cli_start (&c, f->db, f->run, TRUE);
  g_assert_true (wait_line (c.err_lines, "following 1 path", 10000));

  while (written + 1 < (guint)collapse)
    {
      g_assert_true (dw_demo_write_step (demo, &done, &error));
      g_assert_no_error (error);
      written++;
      dw_watch_test_spin (25);
      if (warned_at == 0 && lines_contain (c.out_lines, needle))
        warned_at = written;
    }
  g_assert_true (wait_line (c.out_lines, needle, 20000));
  if (warned_at == 0)
    warned_at = written;
  first_step = event_first_step (c.out_lines, needle);
  g_test_message ("K3 KL warning (first step %" G_GINT64_FORMAT ") seen after %u of %u steps "
                  "written (collapse at %" G_GINT64_FORMAT ")",
                  first_step, warned_at, steps, collapse);
  g_assert_cmpint (first_step, >, 20); /* after the baseline */
  g_assert_cmpint (first_step, <, collapse);
  /* each event line is one JSON object naming the run */
  for (guint i = 0; i < c.out_lines->len; i++)
    {
      const char *line = c.out_lines->pdata[i];
      g_assert_true (g_str_has_prefix (line, "{\"run_id\": 1, \"run\": \"run-a\", \"event\": {"));
      g_assert_true (g_str_has_suffix (line, "}}"));
    }
  while (!done)
    {
      g_assert_true (dw_demo_write_step (demo, &done, &error));
      written++;
      dw_watch_test_spin (5);
    }
  g_assert_cmpuint (written, ==, steps);
  /* SIGTERM stops between two files, leaving what is still queued to the next run: wait until
   * the watcher has caught up (slow under sanitizers) before stopping it */
  g_assert_true (wait_caught_up (f->db, steps, steps, 120000));
  g_subprocess_send_signal (c.proc, SIGTERM);
  wait_exit (c.proc);
  g_assert_true (g_subprocess_get_if_exited (c.proc));
  g_assert_cmpint (g_subprocess_get_exit_status (c.proc), ==, 0);
  for (guint i = 0; i < c.err_lines->len; i++)
    g_test_message ("stderr: %s", (char *)c.err_lines->pdata[i]);
  g_assert_false (lines_contain (c.err_lines, "byte offset"));
  cli_clear (&c);

  f->store = dw_store_open (f->db, &error);
  g_assert_no_error (error);
  g_assert_true (dw_store_check_integrity (f->store, &error));
  g_assert_no_error (error);
  assert_like_clean_ingest (f->store, f->dir, f->run);
  {
    g_autoptr (GPtrArray) runs = dw_store_list_runs (f->store, &error);
    g_assert_cmpuint (runs->len, ==, 1);
    /* the watch marked the run live, and finished (or collapsed) when it stopped */
    g_assert_cmpint (((DwRunInfo *)runs->pdata[0])->status, !=, DW_RUN_STATUS_LIVE);
  }
}

/* kill -9 of `watch` while the run grows, at several points, each time started again: the
 * store ends equal to a clean ingest and passes PRAGMA integrity_check. */
static void
test_cli_kill9 (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwDemo) demo = NULL;
  const guint steps = 60;
  gboolean done = FALSE;
  guint written = 0;

  demo = dw_demo_new (f->run, DW_DEMO_COLLAPSE, steps, 9, &error);
  g_assert_no_error (error);
  for (guint round = 0; !done; round++)
    {
      Cli c = { 0 };
      guint n = (guint)g_test_rand_int_range (3, 12);
      gboolean caught_up_before = FALSE;

      if (round % 2 == 0)
        {
          /* steps written while no watch runs; the next watch dies during its catch-up (1 KiB
           * transactions: many commits to be killed between or in) */
          for (guint k = 0; k < n && !done; k++, written++)
            g_assert_true (dw_demo_write_step (demo, &done, &error));
          cli_start_env (&c, f->db, f->run, FALSE, "1024");
          dw_watch_test_spin ((guint)g_test_rand_int_range (20, 300));
          caught_up_before = lines_contain (c.err_lines, "following 1 path");
        }
      else
        {
          /* a watch that follows a few steps live, then dies at a random moment */
          cli_start_env (&c, f->db, f->run, FALSE, "1024");
          g_assert_true (wait_line (c.err_lines, "following 1 path", 20000));
          for (guint k = 0; k < n && !done; k++, written++)
            {
              g_assert_true (dw_demo_write_step (demo, &done, &error));
              dw_watch_test_spin ((guint)g_test_rand_int_range (0, 80));
            }
          dw_watch_test_spin ((guint)g_test_rand_int_range (0, 200));
          caught_up_before = TRUE;
        }
      g_assert_no_error (error);
      g_subprocess_force_exit (c.proc);
      wait_exit (c.proc);
      g_assert_true (g_subprocess_get_if_signaled (c.proc));
      g_assert_cmpint (g_subprocess_get_term_sig (c.proc), ==, SIGKILL);
      g_test_message ("round %u: killed after %u steps written%s", round, written,
                      caught_up_before ? "" : ", during its catch-up");
      cli_clear (&c);
    }
  g_assert_cmpuint (written, ==, steps);
  /* a last watch catches up, then stops cleanly */
  {
    Cli c = { 0 };
    cli_start (&c, f->db, f->run, FALSE);
    g_assert_true (wait_line (c.err_lines, "following 1 path", 60000));
    g_subprocess_send_signal (c.proc, SIGINT);
    wait_exit (c.proc);
    g_assert_cmpint (g_subprocess_get_exit_status (c.proc), ==, 0);
    cli_clear (&c);
  }
  f->store = dw_store_open (f->db, &error);
  g_assert_no_error (error);
  g_assert_true (dw_store_check_integrity (f->store, &error));
  g_assert_no_error (error);
  assert_like_clean_ingest (f->store, f->dir, f->run);
}

/* Text output on a finished collapse run and a second folder: what watch prints after its
 * initial ingest is, event for event, the report `check` computes on a clean ingest of the
 * same folder (heading + the same text block), in report order. */
static void
test_cli_text (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *other = g_build_filename (f->dir, "run-b", NULL);
  g_autofree char *clean_db = g_build_filename (f->dir, "reference.db", NULL);
  g_autoptr (GString) expected = g_string_new (NULL);
  g_autoptr (GString) got = g_string_new (NULL);
  const char *cli = g_getenv ("DW_CLI");
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GPtrArray) err_lines = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDataInputStream) err = NULL;
  g_autofree char *out = NULL;

  g_assert_nonnull (cli);
  g_assert_true (dw_demo_write (f->run, DW_DEMO_COLLAPSE, 200, 1, &error));
  g_assert_true (dw_demo_write (other, DW_DEMO_HEALTHY, 30, 2, &error));
  g_assert_no_error (error);
  /* the reference: a clean ingest and the health report of each run, as `check` makes it */
  {
    g_autoptr (DwStore) store = dw_store_open (clean_db, &error);
    g_autoptr (DwIngester) ingester = dw_ingester_new (store);
    g_autoptr (DwRunInfo) run = NULL;
    g_autoptr (GPtrArray) events = NULL;

    g_assert_true (dw_ingester_ingest_path (ingester, f->run, NULL, &error));
    g_assert_true (dw_ingester_ingest_path (ingester, other, NULL, &error));
    g_assert_no_error (error);
    run = dw_store_find_run (store, "run-a", &error);
    g_assert_no_error (error);
    events = dw_health_check_run (store, run->id, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (events->len, >=, 3);
    for (guint i = 0; i < events->len; i++)
      {
        g_string_append_printf (expected, "Run “run-a” (id %" G_GINT64_FORMAT "):\n", run->id);
        dw_health_append_event_text (expected, events->pdata[i]);
      }
    g_clear_pointer (&run, dw_run_info_free);
    g_clear_pointer (&events, g_ptr_array_unref);
    run = dw_store_find_run (store, "run-b", &error);
    events = dw_health_check_run (store, run->id, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (events->len, ==, 0); /* healthy */
  }

  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                           cli, "watch", f->run, other, "--db", f->db, NULL);
  g_assert_no_error (error);
  err = g_data_input_stream_new (g_subprocess_get_stderr_pipe (proc));
  read_next (err, g_ptr_array_ref (err_lines), NULL);
  g_assert_true (wait_line (err_lines, "following 2 path(s)", 20000));
  g_subprocess_send_signal (proc, SIGINT);
  wait_exit (proc);
  g_assert_true (g_subprocess_get_if_exited (proc));
  g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, 0);
  {
    GInputStream *in = g_subprocess_get_stdout_pipe (proc);
    char buf[4096];
    gssize n;
    while ((n = g_input_stream_read (in, buf, sizeof buf, NULL, &error)) > 0)
      g_string_append_len (got, buf, n);
    g_assert_no_error (error);
    out = g_strdup (got->str);
  }
  g_assert_cmpstr (out, ==, expected->str);
  dw_watch_test_spin (50);
}

/* Usage and input errors: exit codes 2 and 1, messages naming the path. */
static void
test_cli_errors (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *nowhere = g_build_filename (f->dir, "nowhere", NULL);
  g_autofree char *expected = NULL;
  const char *argv_usage[] = { "watch", "--db", f->db, NULL };
  const char *argv_missing[] = { "watch", nowhere, "--db", f->db, NULL };

  g_assert_cmpint (dw_test_run_cli (argv_usage, NULL, &out, &err), ==, 2);
  g_assert_cmpstr (err, ==,
                   "driftwatch-cli watch: usage: watch DIR… [--db FILE] [--json] [--exec CMD] "
                   "[--webhook URL]\n");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (dw_test_run_cli (argv_missing, NULL, &out, &err), ==, 1);
  expected = g_strdup_printf ("driftwatch-cli watch: %s: No such file or directory\n", nowhere);
  g_assert_cmpstr (err, ==, expected);
  g_assert_cmpstr (out, ==, "");
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "C");
  g_test_init (&argc, &argv, NULL);
#define ADD(name, fn) \
  g_test_add ("/watch/" name, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("live-demo", test_live_demo);
  ADD ("jsonl-pieces", test_jsonl_pieces);
  ADD ("rewrite", test_rewrite);
  ADD ("folder-of-runs", test_folder_of_runs);
  ADD ("half-written-batch", test_half_written_batch);
  ADD ("garbage", test_garbage);
  ADD ("cli-live", test_cli_live);
  ADD ("cli-kill9", test_cli_kill9);
  ADD ("cli-text", test_cli_text);
  ADD ("cli-errors", test_cli_errors);
#undef ADD
  return g_test_run ();
}
