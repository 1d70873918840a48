/* bench-tune.c — the Tune page on a large generated run: time to open it (first result on screen,
 * then every value exact), its memory, and the slider
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * bench-tune [STEPS [ROWS COLS [compact|auto|full]]] (default 20 × 512 × 4096: ~1 M valid tokens
 * a step, response lengths uniform in [64, COLS]; compact: the run is loaded as the page loads a
 * large run, which this scaled-down one stands for; auto: as the page decides). The run is written
 * into a fresh store (float32 log-probs, a drift that grows over the run and rare catastrophic
 * tokens, like bench-whatif's), then opened in a DwTuneView as the window would: compact steps when
 * the run is large (docs/TUNE.md, "Large runs"). Peak RSS is measured from after the store was
 * written (VmHWM reset through /proc/self/clear_refs). The slider: 40 moves of the IS threshold
 * across its range, each timed from the value change to the "evaluated" signal (the result on the
 * charts and summary), with the background refinement of the previous move running meanwhile, as it
 * does for a user.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "dw-store-writer.h"
#include "dw-tune-view.h"
#include "dw-ui-test-util.h"

#define N_MOVES 40

static DwBatch *
make_batch (gint64 step, gsize rows, gsize cols, guint n_steps)
{
  GRand *random = g_rand_new_with_seed (1000 + (guint32)step);
  DwBatch *batch = dw_batch_new (rows, cols, DW_DTYPE_F32, DW_DTYPE_BOOL);
  float *old = batch->old_log_prob, *rollout = batch->rollout_log_prob;
  guint8 *mask = batch->response_mask;
  /* drift grows over the run, like a run heading for a collapse */
  double spread = 0.02 + 0.3 * (double)step / n_steps;

  for (gsize row = 0; row < rows; row++)
    {
      gsize length = (gsize)g_rand_int_range (random, 64, (gint32)cols + 1);
      double bias = g_rand_double_range (random, -0.5, 0.5) * spread * 0.1;

      for (gsize token = 0; token < cols; token++)
        {
          gsize index = row * cols + token;
          double log_rollout = -g_rand_double (random) * 3.0;
          double log_ratio = bias + spread * (g_rand_double (random) - 0.5);

          if (g_rand_int_range (random, 0, 2000) == 0)
            log_ratio -= 12; /* rare catastrophic token */
          rollout[index] = (float)log_rollout;
          old[index] = (float)(log_rollout + log_ratio);
          mask[index] = token < length;
        }
    }
  g_rand_free (random);
  return batch;
}

static gint64
write_run (const char *db, guint n_steps, gsize rows, gsize cols, guint64 *n_valid)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  gint64 run_id;

  g_assert_no_error (error);
  run_id = dw_store_ensure_run (store, "bench-tune", "verl", "generated", &error);
  g_assert_no_error (error);
  *n_valid = 0;
  for (guint step = 1; step <= n_steps; step++)
    {
      DwBatch *batch = make_batch (step, rows, cols, n_steps);

      for (gsize index = 0; index < rows * cols; index++)
        *n_valid += ((guint8 *)batch->response_mask)[index] != 0;
      g_assert_true (dw_store_begin (store, &error));
      g_assert_true (dw_store_put_batch (store, run_id, step, batch, "generated", &error));
      g_assert_true (dw_store_commit (store, &error));
      g_assert_no_error (error);
      dw_batch_free (batch);
    }
  return run_id;
}

/* a field of /proc/self/status in MB ("VmHWM", "VmRSS") */
static double
bench_status_mb (const char *field)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL)
      || (line = strstr (status, field)) == NULL)
    return NAN;
  return g_ascii_strtod (line + strlen (field) + 1, NULL) / 1024.0;
}

typedef struct
{
  guint n_evaluated;
  gboolean last_exact;
} Evaluations;

static void
on_evaluated (DwTuneView *view, gboolean exact, Evaluations *seen)
{
  seen->n_evaluated++;
  seen->last_exact = exact;
}

/* CPU time of the process (every thread), ms: what a move costs whatever else the machine runs */
static double
bench_cpu_ms (void)
{
  struct timespec now;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static GtkWidget *
find_named (GtkWidget *widget, const char *name)
{
  if (g_strcmp0 (gtk_widget_get_name (widget), name) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_named (child, name);
      if (found)
        return found;
    }
  return NULL;
}

/* The slider: @N_MOVES moves of the IS threshold, each timed to its "evaluated" signal. */
static void
bench_slider (GtkWidget *view, Evaluations *seen)
{
  GtkAdjustment *adjustment
    = gtk_range_get_adjustment (GTK_RANGE (find_named (view, "scale-is-threshold")));
  double lower = gtk_adjustment_get_lower (adjustment);
  double upper = gtk_adjustment_get_upper (adjustment);
  double times[N_MOVES], cpu[N_MOVES];
  guint n_approximate = 0;

  for (guint move = 0; move < N_MOVES; move++)
    {
      guint before = seen->n_evaluated;
      gint64 start = g_get_monotonic_time ();
      double cpu_start = bench_cpu_ms ();

      /* across the first two decades of the cap (1.0001 … 100): where thresholds are set */
      gtk_adjustment_set_value (adjustment,
                                lower + (MIN (upper, 2.0) - lower) * (move + 0.5) / N_MOVES);
      while (seen->n_evaluated == before)
        g_main_context_iteration (NULL, TRUE);
      times[move] = (g_get_monotonic_time () - start) / 1000.0;
      cpu[move] = bench_cpu_ms () - cpu_start;
      n_approximate += !seen->last_exact;
    }
  qsort (times, N_MOVES, sizeof *times, compare_doubles);
  qsort (cpu, N_MOVES, sizeof *cpu, compare_doubles);
  printf ("tune slider move to its result: p50 %.1f ms, p95 %.1f ms (%u of %u moves shown "
          "approximate first)\n",
          times[N_MOVES / 2], times[(N_MOVES * 95) / 100], n_approximate, N_MOVES);
  printf ("tune slider move CPU (all threads, incl. a running refinement): p50 %.1f ms, p95 %.1f "
          "ms\n",
          cpu[N_MOVES / 2], cpu[(N_MOVES * 95) / 100]);
}

int
main (int argc, char **argv)
{
  guint n_steps = argc > 1 ? (guint)atoi (argv[1]) : 20;
  gsize rows = argc > 3 ? (gsize)atoi (argv[2]) : 512;
  gsize cols = argc > 3 ? (gsize)atoi (argv[3]) : 4096;
  g_autofree char *dir = g_dir_make_tmp ("dw-bench-tune-XXXXXX", NULL);
  g_autofree char *db = g_build_filename (dir, "store.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  Evaluations seen = { 0 };
  const char *mode = argc > 4 ? argv[4] : "compact";
  guint64 n_valid;
  gint64 run_id, start, first_ms, exact_ms;
  GtkWidget *view;

  gtk_init ();
  adw_init ();
  start = g_get_monotonic_time ();
  run_id = write_run (db, n_steps, rows, cols, &n_valid);
  printf ("tune benchmark: %u steps x %zu x %zu, %.2f M valid tokens a step, store written in "
          "%.1f s\n",
          n_steps, rows, cols, n_valid / 1e6 / n_steps, (g_get_monotonic_time () - start) / 1e6);
  fflush (stdout);

  /* the page as the window opens it; peak memory from here on */
  store = dw_store_open (db, &error);
  g_assert_no_error (error);
  g_file_set_contents ("/proc/self/clear_refs", "5", 1, NULL);
  view = g_object_ref_sink (dw_tune_view_new ());
  g_signal_connect (view, "evaluated", G_CALLBACK (on_evaluated), &seen);
  if (g_str_equal (mode, "compact"))
    dw_tune_view_set_compact_tokens (DW_TUNE_VIEW (view), 0);
  else if (g_str_equal (mode, "full"))
    dw_tune_view_set_compact_tokens (DW_TUNE_VIEW (view), G_MAXUINT64);
  start = g_get_monotonic_time ();
  dw_tune_view_set_run (DW_TUNE_VIEW (view), store, run_id);
  while (seen.n_evaluated == 0)
    g_main_context_iteration (NULL, TRUE);
  first_ms = (g_get_monotonic_time () - start) / 1000;
  while (dw_tune_view_get_busy (DW_TUNE_VIEW (view)))
    g_main_context_iteration (NULL, TRUE);
  exact_ms = (g_get_monotonic_time () - start) / 1000;
  printf ("tune open (%s steps): first result %.2f s, every value exact %.2f s, peak RSS %.0f MB "
          "(%.1f B per valid token), RSS after %.0f MB\n",
          dw_tune_view_get_compact (DW_TUNE_VIEW (view)) ? "compact" : "full", first_ms / 1e3,
          exact_ms / 1e3, bench_status_mb ("VmHWM"),
          bench_status_mb ("VmHWM") * 1048576.0 / (double)n_valid, bench_status_mb ("VmRSS"));
  fflush (stdout);

  bench_slider (view, &seen);
  g_object_unref (view);
  g_clear_object (&store);
  for (const char *suffix = ""; suffix != NULL; suffix = *suffix == '\0'                ? "-wal"
                                                         : g_str_equal (suffix, "-wal") ? "-shm"
                                                                                        : NULL)
    {
      g_autofree char *path = g_strconcat (db, suffix, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
  return 0;
}
