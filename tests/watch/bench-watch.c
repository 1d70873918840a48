/* bench-watch.c — latency from a file append to the points being in the store while watching
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Appends (write + fsync) N verl JSONL lines at a time to a followed run folder, 50 times, and
 * measures until the last appended step can be read from the store:
 *   in-process   a DwFollower with the default coalescing (what the GUI does); the store is
 *                read right after each ::flushed
 *   cli          `driftwatch-cli watch` in another process; this process reads the store
 *                read-only whenever the store's WAL file changes (a file monitor, no polling)
 *   demo-step    in-process, one whole verl-like step per append (dw_demo_write_step: a
 *                32×256 safetensors batch, a JSONL line of ~60 keys, the tfevents records),
 *                until both the step's batch and its JSONL points are in the store
 * Prints median, p95 and max per mode.
 */
#include "config.h"

#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "dw-demo.h"
#include "dw-follower.h"
#include "dw-store-writer.h"
#include "watch-test-util.h"

#define N_APPENDS 50
#define N_LINES   10
#define TAG       "actor/pg_loss"

typedef struct
{
  char *jsonl;
  gint64 next_step;
  /* waiting for this step to be visible */
  gint64 want_step;
  gint64 t_append;
  gboolean seen;
  double latencies[N_APPENDS];
  guint n;
  DwStore *reader; /* cli mode: read-only view */
  char *db;
} Bench;

static void
append_lines (Bench *b)
{
  g_autoptr (GString) s = g_string_new (NULL);
  int fd;

  for (int i = 0; i < N_LINES; i++, b->next_step++)
    g_string_append_printf (s,
                            "{\"step\":%" G_GINT64_FORMAT ",\"data\":{\"" TAG
                            "\":%.6f,\"rollout_corr/k3_kl\":%.6f,\"critic/score/mean\":%.3f}}\n",
                            b->next_step, 0.001 * (double)b->next_step, 1e-4, 0.5);
  b->want_step = b->next_step - 1;
  b->seen = FALSE;
  b->t_append = g_get_monotonic_time ();
  fd = g_open (b->jsonl, O_WRONLY | O_APPEND | O_CREAT, 0644);
  g_assert (fd >= 0);
  g_assert (write (fd, s->str, s->len) == (gssize)s->len);
  g_assert (fsync (fd) == 0);
  close (fd);
}

static gboolean
visible (DwStore *store, gint64 step)
{
  g_autoptr (DwRunInfo) run = dw_store_find_run (store, "run", NULL);
  g_autoptr (DwSeries) s = NULL;

  if (run == NULL)
    return FALSE;
  s = dw_store_get_series (store, run->id, TAG, step - 1, NULL);
  return s != NULL && s->n > 0 && s->steps[s->n - 1] == step;
}

static void
record (Bench *b)
{
  if (b->seen || b->want_step == 0)
    return;
  b->seen = TRUE;
  b->latencies[b->n++] = (double)(g_get_monotonic_time () - b->t_append) / 1000.0;
}

static gboolean
demo_step_visible (DwStore *store, gint64 step)
{
  g_autoptr (DwRunInfo) run = dw_store_find_run (store, "run", NULL);
  g_autoptr (DwSeries) s = NULL;
  g_autoptr (GArray) batches = NULL;

  if (run == NULL)
    return FALSE;
  s = dw_store_get_series (store, run->id, "actor/grad_norm", step - 1, NULL);
  batches = dw_store_list_batch_steps (store, run->id, NULL);
  return s != NULL && s->n > 0 && s->steps[s->n - 1] == step && batches != NULL && batches->len > 0
         && g_array_index (batches, gint64, batches->len - 1) == step;
}

static gboolean demo_mode;

static void
on_flushed (DwFollower *follower, Bench *b)
{
  DwStore *store = dw_follower_get_store (follower);

  if (!b->seen
      && (demo_mode ? demo_step_visible (store, b->want_step) : visible (store, b->want_step)))
    record (b);
}

static void
on_wal_changed (GFileMonitor *m, GFile *file, GFile *other, GFileMonitorEvent event, Bench *b)
{
  if (b->seen || b->want_step == 0)
    return;
  if (b->reader == NULL)
    b->reader = dw_store_open_read_only (b->db, NULL);
  if (b->reader != NULL && visible (b->reader, b->want_step))
    record (b);
}

static gboolean
is_seen (gpointer data)
{
  return ((Bench *)data)->seen;
}

/* Waits until the append is seen (at most 5 s). */
static void
wait_seen (Bench *b)
{
  dw_watch_test_spin_until (is_seen, b, 5000);
  if (!b->seen)
    {
      fprintf (stderr, "append of step %" G_GINT64_FORMAT " not visible after 5 s\n", b->want_step);
      exit (1);
    }
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void
report (const char *mode, const char *what, Bench *b)
{
  qsort (b->latencies, b->n, sizeof (double), cmp_double);
  printf ("watch latency %-11s %u %s: median %.1f ms, p95 %.1f ms, max %.1f ms\n", mode, b->n, what,
          b->latencies[b->n / 2], b->latencies[(guint)((b->n - 1) * 0.95 + 0.5)],
          b->latencies[b->n - 1]);
}

static char *
make_run (const char *tmp, const char *name, Bench *b)
{
  char *run = g_build_filename (tmp, name, "run", NULL);

  g_assert (g_mkdir_with_parents (run, 0755) == 0);
  b->jsonl = g_build_filename (run, "metrics.jsonl", NULL);
  b->next_step = 1;
  append_lines (b); /* the run exists before timing starts */
  b->want_step = 0;
  return run;
}

static void
bench_in_process (const char *tmp)
{
  Bench b = { 0 };
  g_autofree char *run = make_run (tmp, "in-process", &b);
  g_autofree char *db = g_build_filename (tmp, "in-process.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  g_autoptr (DwFollower) follower = NULL;

  g_assert_no_error (error);
  follower = dw_follower_new (store);
  g_signal_connect (follower, "flushed", G_CALLBACK (on_flushed), &b);
  g_assert (dw_follower_add_path (follower, run, &error));
  dw_follower_flush (follower);
  for (int i = 0; i < N_APPENDS; i++)
    {
      append_lines (&b);
      wait_seen (&b);
      dw_watch_test_spin (100 + (guint)g_random_int_range (0, 200));
    }
  report ("in-process", "appends of " G_STRINGIFY (N_LINES) " lines", &b);
  g_free (b.jsonl);
}

static void
bench_cli (const char *tmp)
{
  Bench b = { 0 };
  g_autofree char *run = make_run (tmp, "cli", &b);
  g_autofree char *wal = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GFile) wal_file = NULL;
  g_autoptr (GFileMonitor) monitor = NULL;
  const char *cli = g_getenv ("DW_CLI");

  b.db = g_build_filename (tmp, "cli.db", NULL);
  wal = g_strconcat (b.db, "-wal", NULL);
  if (cli == NULL)
    {
      printf ("watch latency cli: skipped (DW_CLI not set)\n");
      return;
    }
  wal_file = g_file_new_for_path (wal);
  monitor = g_file_monitor_file (wal_file, G_FILE_MONITOR_NONE, NULL, &error);
  g_assert_no_error (error);
  g_file_monitor_set_rate_limit (monitor, 0);
  g_signal_connect (monitor, "changed", G_CALLBACK (on_wal_changed), &b);
  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                           &error, cli, "watch", run, "--db", b.db, NULL);
  g_assert_no_error (error);
  /* the first ingest creates the run */
  b.want_step = b.next_step - 1;
  b.t_append = g_get_monotonic_time ();
  wait_seen (&b);
  b.n = 0;
  for (int i = 0; i < N_APPENDS; i++)
    {
      append_lines (&b);
      wait_seen (&b);
      dw_watch_test_spin (100 + (guint)g_random_int_range (0, 200));
    }
  g_subprocess_send_signal (proc, SIGTERM);
  g_assert (g_subprocess_wait_check (proc, NULL, &error));
  report ("cli", "appends of " G_STRINGIFY (N_LINES) " lines", &b);
  g_clear_object (&b.reader);
  g_free (b.db);
  g_free (b.jsonl);
}

static void
bench_demo_steps (const char *tmp)
{
  Bench b = { 0 };
  g_autofree char *run = g_build_filename (tmp, "demo", "run", NULL);
  g_autofree char *db = g_build_filename (tmp, "demo.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  g_autoptr (DwFollower) follower = NULL;
  g_autoptr (DwDemo) demo = dw_demo_new (run, DW_DEMO_HEALTHY, N_APPENDS + 1, 3, &error);
  gboolean done = FALSE;

  g_assert_no_error (error);
  demo_mode = TRUE;
  g_assert (dw_demo_write_step (demo, &done, &error)); /* the run exists before timing */
  follower = dw_follower_new (store);
  g_signal_connect (follower, "flushed", G_CALLBACK (on_flushed), &b);
  g_assert (dw_follower_add_path (follower, run, &error));
  dw_follower_flush (follower);
  for (gint64 step = 2; !done; step++)
    {
      b.want_step = step;
      b.seen = FALSE;
      b.t_append = g_get_monotonic_time ();
      g_assert (dw_demo_write_step (demo, &done, &error));
      wait_seen (&b);
      dw_watch_test_spin (100 + (guint)g_random_int_range (0, 200));
    }
  report ("demo-step", "steps (32x256 batch + JSONL + tfevents)", &b);
  demo_mode = FALSE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tmp = NULL;

  setlocale (LC_ALL, "C");
  tmp = g_dir_make_tmp ("dw-bench-watch-XXXXXX", &error);
  g_assert_no_error (error);
  printf ("delay %d ms, max-delay %d ms (defaults)\n", DW_FOLLOWER_DEFAULT_DELAY_MS,
          DW_FOLLOWER_DEFAULT_MAX_DELAY_MS);
  bench_in_process (tmp);
  bench_cli (tmp);
  bench_demo_steps (tmp);
  dw_watch_test_rm_rf (tmp);
  return 0;
}
