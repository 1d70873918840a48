/* bench-tune.c — the Tune page on a large generated run: time to open it (first result on screen,
 * then every value exact), its memory, the slider, the store's bytes per step, and how they scale
 * with the number of steps
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * bench-tune [STEPS ROWS COLS [compact|auto|full]] measures one run; without arguments it measures
 * two, in a process each, and states the scaling law from them: a run of large steps and a run of
 * many small ones (CI: 20 × 512 × 4096 ≈ 1 M valid tokens a step and 300 × 64 × 2048 ≈ 67 k, both
 * loaded compact as a large run is; DW_BENCH_TUNE_FULL=1: 200 × 512 × 8192 ≈ 2.1 M and
 * 3000 × 64 × 2048, loaded as the page decides). The run (dw-bench-run.c, bench-whatif's
 * generator) is written as batches/step_NNNNNN.safetensors files and ingested with a zero
 * --keep-tokens budget: every batch referenced in place, as the steps of a long run past its
 * budget are, so the store's size over the steps is what each step adds. Then it is opened in a
 * DwTuneView as the window would (docs/TUNE.md, "Large runs"). Peak RSS is measured from after the
 * store was written (VmHWM reset through /proc/self/clear_refs). The slider: 40 moves of the IS
 * threshold across its range, each timed from the value change to the "evaluated" signal (the
 * what-if re-evaluation of every step and its result set on the charts, summary and length-bias
 * curve; painting the frame is bench-renderer's): once one move a frame (a drag: the background
 * refinement starts only once the controls rest), once 400 ms apart (the refinement of the
 * previous move runs in the rest, and the move cancels it, as between a user's clicks); then
 * the default preset's RS bound (seq_mean_k3) dragged across its range. DW_BENCH_MOVES=1 prints
 * every move. DW_BENCH_TUNE_DIR=DIR writes the run in DIR and keeps it; a later run of the same
 * shape there is measured again without writing it (the batch files stay where they were
 * referenced).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "dw-batch-reader.h"
#include "dw-bench-run.h"
#include "dw-store-writer.h"
#include "dw-tune-view.h"
#include "dw-ui-test-util.h"

#define N_MOVES 40

/* Writes the run's batches as files under @dir and ingests them referenced (budget 0). */
static gint64
write_run (const char *dir, const char *db, guint n_steps, gsize rows, gsize cols, guint64 *n_valid)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  g_autofree char *batches = g_build_filename (dir, "batches", NULL);
  gint64 run_id;

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (batches, 0755), ==, 0);
  dw_store_set_keep_tokens (store, 0);
  run_id = dw_store_ensure_run (store, "bench-tune", "verl", dir, &error);
  g_assert_no_error (error);
  *n_valid = 0;
  for (guint step = 1; step <= n_steps; step++)
    {
      g_autoptr (DwBatch) batch = dw_bench_run_make_batch (step, n_steps, rows, cols);
      g_autofree char *name = g_strdup_printf ("step_%06u.safetensors", step);
      g_autofree char *path = g_build_filename (batches, name, NULL);

      for (gsize index = 0; index < rows * cols; index++)
        *n_valid += ((guint8 *)batch->response_mask)[index] != 0;
      g_assert_true (dw_batch_write_safetensors (batch, path, &error));
      g_assert_true (dw_store_begin (store, &error));
      g_assert_true (dw_store_put_batch (store, run_id, step, batch, path, &error));
      g_assert_true (dw_store_commit (store, &error));
      g_assert_no_error (error);
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

/* A slider (@scale, moved from its lower end to @range_top or its upper end): @N_MOVES moves,
 * each timed to its "evaluated" signal; @kind prefixes the label; the page
 * rests @rest_ms after each (0: a drag, one move a frame; the refinement starts only when the
 * controls rest 150 ms (dw-tune-view.c), so a longer rest lets it run and the next move
 * cancels it, as between a user's clicks). */
static void
bench_slider (GtkWidget *view, Evaluations *seen, const char *label, guint rest_ms,
              const char *scale, const char *kind, double range_top)
{
  GtkAdjustment *adjustment
    = gtk_range_get_adjustment (GTK_RANGE (dw_ui_test_find_named (view, scale)));
  double lower = gtk_adjustment_get_lower (adjustment);
  double upper = gtk_adjustment_get_upper (adjustment);
  double times[N_MOVES], cpu[N_MOVES];
  guint n_approximate = 0;

  for (guint move = 0; move < N_MOVES; move++)
    {
      guint before = seen->n_evaluated;
      gint64 start = g_get_monotonic_time ();
      double cpu_start = bench_cpu_ms ();

      gtk_adjustment_set_value (adjustment,
                                lower + (MIN (upper, range_top) - lower) * (move + 0.5) / N_MOVES);
      while (seen->n_evaluated == before)
        g_main_context_iteration (NULL, TRUE);
      times[move] = (g_get_monotonic_time () - start) / 1000.0;
      cpu[move] = bench_cpu_ms () - cpu_start;
      if (g_strcmp0 (g_getenv ("DW_BENCH_MOVES"), "1") == 0)
        printf ("  move %u (%s%s): %.1f ms, CPU %.1f ms\n", move, kind, rest_ms ? "apart" : "drag",
                times[move], cpu[move]);
      n_approximate += !seen->last_exact;
      for (gint64 until = g_get_monotonic_time () + rest_ms * 1000;
           g_get_monotonic_time () < until;)
        if (!g_main_context_iteration (NULL, FALSE))
          g_usleep (1000);
    }
  qsort (times, N_MOVES, sizeof *times, compare_doubles);
  qsort (cpu, N_MOVES, sizeof *cpu, compare_doubles);
  printf ("tune slider move to its result (%s%s), %s: p50 %.1f ms, p95 %.1f ms (%u of %u moves "
          "shown approximate first)\n",
          kind, rest_ms ? "moves apart" : "drag", label, times[N_MOVES / 2],
          times[(N_MOVES * 95) / 100], n_approximate, N_MOVES);
  printf ("tune slider move CPU (all threads, incl. a cancelled refinement) (%s%s), %s: p50 %.1f "
          "ms, p95 %.1f ms\n",
          kind, rest_ms ? "moves apart" : "drag", label, cpu[N_MOVES / 2],
          cpu[(N_MOVES * 95) / 100]);
}

static double
bench_file_mb (const char *path)
{
  GStatBuf info;

  return g_stat (path, &info) == 0 ? info.st_size / 1048576.0 : 0.0;
}

static char *
bench_load_average (void)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    return g_strdup ("?");
  return g_strndup (text, strcspn (text, " "));
}

/* The run's folder: a new temporary one, or $DW_BENCH_TUNE_DIR (kept, and its run reused when
 * written there before with the same shape: a 3000-step run takes minutes to write) */
static char *
bench_run_dir (guint n_steps, gsize rows, gsize cols, gboolean *reuse)
{
  const char *kept = g_getenv ("DW_BENCH_TUNE_DIR");
  g_autofree char *shape = g_strdup_printf ("%u %zu %zu", n_steps, rows, cols);
  g_autofree char *shape_file = NULL;
  g_autofree char *written = NULL;

  *reuse = FALSE;
  if (kept == NULL || *kept == '\0')
    return g_dir_make_tmp ("dw-bench-tune-XXXXXX", NULL);
  g_assert_cmpint (g_mkdir_with_parents (kept, 0755), ==, 0);
  shape_file = g_build_filename (kept, "shape", NULL);
  *reuse = g_file_get_contents (shape_file, &written, NULL, NULL)
           && g_str_has_prefix (written, shape) && written[strlen (shape)] == ' ';
  return g_strdup (kept);
}

/* One run: written, measured, deleted (unless kept in $DW_BENCH_TUNE_DIR). */
static void
bench_run (guint n_steps, gsize rows, gsize cols, const char *mode)
{
  gboolean reuse;
  g_autofree char *dir = bench_run_dir (n_steps, rows, cols, &reuse);
  g_autofree char *shape_file = g_build_filename (dir, "shape", NULL);
  g_autofree char *db = g_build_filename (dir, "store.db", NULL);
  g_autofree char *wal = g_strconcat (db, "-wal", NULL);
  g_autofree char *load = bench_load_average ();
  g_autofree char *label = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  Evaluations seen = { 0 };
  guint64 n_valid;
  gint64 run_id, start, first_ms, exact_ms;
  double store_mb, open_cpu_ms;
  GtkWidget *view;

  start = g_get_monotonic_time ();
  if (reuse)
    {
      g_autofree char *written = NULL;
      g_assert_true (g_file_get_contents (shape_file, &written, NULL, NULL));
      g_assert_cmpint (
        sscanf (written, "%*u %*u %*u %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT, &run_id, &n_valid),
        ==, 2);
    }
  else
    {
      g_autofree char *shape = NULL;
      g_remove (db);
      g_remove (wal);
      run_id = write_run (dir, db, n_steps, rows, cols, &n_valid);
      shape = g_strdup_printf ("%u %zu %zu %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT "\n", n_steps,
                               rows, cols, run_id, n_valid);
      g_assert_true (g_file_set_contents (shape_file, shape, -1, NULL));
    }
  label = g_strdup_printf ("%u steps x %.3f M tokens", n_steps, n_valid / 1e6 / n_steps);
  printf ("tune benchmark: %u steps x %zu x %zu, %.3f M valid tokens a step, written and "
          "ingested (batches referenced in place) in %.1f s; load average %s\n",
          n_steps, rows, cols, n_valid / 1e6 / n_steps, (g_get_monotonic_time () - start) / 1e6,
          load);
  /* the writer closed the store: its WAL is checkpointed into the file */
  store_mb = bench_file_mb (db) + bench_file_mb (wal);
  printf ("tune store, %s: %.3f MB per step, %.3f bytes per valid token (%.1f MB for %u steps)\n",
          label, store_mb / n_steps, store_mb * 1048576.0 / (double)n_valid, store_mb, n_steps);
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
  open_cpu_ms = bench_cpu_ms ();
  dw_tune_view_set_run (DW_TUNE_VIEW (view), store, run_id);
  while (seen.n_evaluated == 0)
    g_main_context_iteration (NULL, TRUE);
  first_ms = (g_get_monotonic_time () - start) / 1000;
  open_cpu_ms = bench_cpu_ms () - open_cpu_ms;
  while (dw_tune_view_get_busy (DW_TUNE_VIEW (view)))
    g_main_context_iteration (NULL, TRUE);
  exact_ms = (g_get_monotonic_time () - start) / 1000;
  printf ("tune open (%s steps), %s: first result %.2f s (CPU of all threads %.2f s), every "
          "value exact %.2f s, peak RSS %.0f MB (%.1f B per valid token), RSS after %.0f MB\n",
          dw_tune_view_get_compact (DW_TUNE_VIEW (view)) ? "compact" : "full", label,
          first_ms / 1e3, open_cpu_ms / 1e3, exact_ms / 1e3, bench_status_mb ("VmHWM"),
          bench_status_mb ("VmHWM") * 1048576.0 / (double)n_valid, bench_status_mb ("VmRSS"));
  fflush (stdout);

  /* the IS cap across its first two decades (1.0001 … 100): where thresholds are set */
  bench_slider (view, &seen, label, 0, "scale-is-threshold", "", 2.0);
  bench_slider (view, &seen, label, 400, "scale-is-threshold", "", 2.0);
  /* the default preset's RS bound (seq_mean_k3) across its whole range, dragged */
  bench_slider (view, &seen, label, 0, "scale-seq_mean_k3-upper", "RS bound, ", G_MAXDOUBLE);
  g_object_unref (view);
  g_clear_object (&store);
  if (g_getenv ("DW_BENCH_TUNE_DIR") == NULL || *g_getenv ("DW_BENCH_TUNE_DIR") == '\0')
    dw_ui_test_remove_tree (dir);
}

/* the figures of one child's output, for the scaling law */
typedef struct
{
  double steps, tokens, open_s, peak_mb, slider_p95_ms;
} BenchFigures;

static void
bench_parse (const char *output, BenchFigures *figures)
{
  const char *line;

  memset (figures, 0, sizeof *figures);
  if ((line = strstr (output, "tune open (")) != NULL && (line = strstr (line, "), ")) != NULL)
    sscanf (line, "), %lf steps x %lf M tokens: first result %lf s", &figures->steps,
            &figures->tokens, &figures->open_s);
  if ((line = strstr (output, "peak RSS ")) != NULL)
    sscanf (line, "peak RSS %lf", &figures->peak_mb);
  if ((line = strstr (output, "tune slider move to its result")) != NULL
      && (line = strstr (line, "p95 ")) != NULL)
    sscanf (line, "p95 %lf", &figures->slider_p95_ms);
}

/* @argv0 STEPS ROWS COLS MODE in a process of its own (its own peak RSS); its output is printed
 * and parsed */
static void
bench_child (const char *argv0, guint n_steps, gsize rows, gsize cols, const char *mode,
             BenchFigures *figures)
{
  g_autofree char *steps_text = g_strdup_printf ("%u", n_steps);
  g_autofree char *rows_text = g_strdup_printf ("%zu", rows);
  g_autofree char *cols_text = g_strdup_printf ("%zu", cols);
  const char *child_argv[] = { argv0, steps_text, rows_text, cols_text, mode, NULL };
  g_autofree char *output = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **)child_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &output, NULL, &status, &error));
  g_assert_no_error (error);
  fputs (output, stdout);
  fflush (stdout);
  g_assert_true (g_spawn_check_wait_status (status, &error));
  bench_parse (output, figures);
}

int
main (int argc, char **argv)
{
  const gboolean full = g_strcmp0 (g_getenv ("DW_BENCH_TUNE_FULL"), "1") == 0;
  BenchFigures large, small;

  gtk_init ();
  adw_init ();
  if (argc > 3)
    {
      bench_run ((guint)atoi (argv[1]), (gsize)atoi (argv[2]), (gsize)atoi (argv[3]),
                 argc > 4 ? argv[4] : "compact");
      return 0;
    }
  bench_child (argv[0], full ? 200 : 20, 512, full ? 8192 : 4096, full ? "auto" : "compact",
               &large);
  bench_child (argv[0], full ? 3000 : 300, 64, 2048, full ? "auto" : "compact", &small);
  /* open ≈ a·steps + b·tokens; the slider's re-evaluation is per step (compact steps hold no
   * tokens), so its p95 over the steps is the cost of one more step */
  double tokens_large = large.steps * large.tokens, tokens_small = small.steps * small.tokens;
  double determinant = large.steps * tokens_small - small.steps * tokens_large;
  double per_step_s = (large.open_s * tokens_small - small.open_s * tokens_large) / determinant;
  double per_mtoken_s = (large.steps * small.open_s - small.steps * large.open_s) / determinant;
  printf ("tune scaling from %.0f steps x %.3f M tokens and %.0f steps x %.3f M tokens: open ≈ "
          "%.2f ms per step + %.3f ms per M valid tokens; slider p95 %.3f and %.3f ms per step; "
          "peak RSS %.3f and %.3f MB per step\n",
          large.steps, large.tokens, small.steps, small.tokens, per_step_s * 1e3,
          per_mtoken_s * 1e3, large.slider_p95_ms / large.steps, small.slider_p95_ms / small.steps,
          large.peak_mb / large.steps, small.peak_mb / small.steps);
  return 0;
}
