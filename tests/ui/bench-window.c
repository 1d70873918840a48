/* bench-window.c — start-up of the window to its first drawn frame with charts, on a store of
 * 100 runs, and opening a run whose series has 1 M points
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "dw-monitor-view.h"
#include "dw-store-writer.h"
#include "dw-window.h"
#include "dw-ui-test-util.h"

#define N_RUNS  100
#define N_STEPS 500

/* The tags a verl run logs for the default cards. */
static const char *const tags[] = {
  "rollout_corr/rollout_is_mean",
  "rollout_corr/rollout_is_eff_sample_size",
  "rollout_corr/rollout_rs_masked_fraction",
  "rollout_corr/kl",
  "rollout_corr/k3_kl",
  "rollout_corr/ppl_ratio",
  "critic/score/mean",
  "response_length/mean",
  "actor/entropy",
  "actor/grad_norm",
};

typedef struct
{
  DwWindow *window;
  gint64 t0;
  gint64 first_paint;
  gint64 first_data;
} Startup;

static void
on_after_paint (GdkFrameClock *clock, Startup *st)
{
  gint64 now = g_get_monotonic_time ();

  if (st->first_paint == 0)
    st->first_paint = now;
  if (st->first_data == 0 && dw_window_is_ready (st->window)
      && dw_monitor_view_get_n_points (DW_MONITOR_VIEW (dw_window_get_monitor_view (st->window)))
           > 0)
    st->first_data = now;
}

/* Opens a window on @store and returns the time (ms) to its first frame with chart data; the
 * first painted frame at all goes to *@shell_ms. */
static double
time_startup (DwStore *store, double *shell_ms)
{
  Startup st = { 0 };
  GdkFrameClock *clock;
  gulong id;
  gint64 deadline;

  st.t0 = g_get_monotonic_time ();
  st.window = dw_window_new (NULL, store, FALSE);
  if (g_getenv ("DW_BENCH_VERBOSE"))
    printf ("  window built (runs listed, charts filled) in %.0f ms\n",
            (g_get_monotonic_time () - st.t0) / 1000.0);
  gtk_window_set_default_size (GTK_WINDOW (st.window), 1400, 900);
  gtk_widget_realize (GTK_WIDGET (st.window));
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (st.window));
  id = g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), &st);
  gtk_window_present (GTK_WINDOW (st.window));
  deadline = st.t0 + 60 * G_USEC_PER_SEC;
  while (st.first_data == 0 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_signal_handler_disconnect (clock, id);
  *shell_ms = (st.first_paint - st.t0) / 1000.0;
  gtk_window_destroy (GTK_WINDOW (st.window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  return st.first_data > 0 ? (st.first_data - st.t0) / 1000.0 : -1;
}

static void
fill_runs (DwStore *store, guint n_runs, guint n_steps, guint n_tags, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed ((guint32)seed);

  g_assert_true (dw_store_begin (store, &error));
  for (guint r = 0; r < n_runs; r++)
    {
      g_autofree char *name = g_strdup_printf ("run-%03u", r);
      gint64 run = dw_store_ensure_run (store, name, "verl", name, &error);

      g_assert_no_error (error);
      for (guint t = 0; t < n_tags; t++)
        {
          gint64 tag = dw_store_ensure_tag (store, run, tags[t], NULL, &error);
          double y = 1;

          g_assert_no_error (error);
          for (guint s = 1; s <= n_steps; s++)
            {
              y = MAX (1e-6, y + g_rand_double_range (rand, -0.01, 0.01));
              g_assert_true (dw_store_put_point (store, run, tag, s, 1.7e9 + 30.0 * s, y, &error));
            }
        }
    }
  g_assert_true (dw_store_commit (store, &error));
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("dw-bench-window-XXXXXX", NULL);
  g_autofree char *db100 = g_build_filename (dir, "runs100.db", NULL);
  g_autofree char *db1m = g_build_filename (dir, "run1m.db", NULL);
  g_autoptr (DwStore) store = NULL;
  double times[5], shell[5], sorted[5];
  gint64 t;
  long rss0, rss1;

  gtk_init ();
  adw_init ();

  t = g_get_monotonic_time ();
  store = dw_store_open (db100, &error);
  g_assert_no_error (error);
  fill_runs (store, N_RUNS, N_STEPS, G_N_ELEMENTS (tags), 1);
  printf ("store: %u runs x %u tags x %u steps written in %.1f s\n", N_RUNS,
          (guint)G_N_ELEMENTS (tags), N_STEPS, (g_get_monotonic_time () - t) / 1e6);
  g_clear_object (&store);

  /* Each start opens the store anew, as the application does. */
  for (guint i = 0; i < G_N_ELEMENTS (times); i++)
    {
      gint64 t0 = g_get_monotonic_time ();
      double open_ms;

      store = dw_store_open (db100, &error);
      g_assert_no_error (error);
      open_ms = (g_get_monotonic_time () - t0) / 1000.0;
      times[i] = open_ms + time_startup (store, &shell[i]);
      shell[i] += open_ms;
      g_clear_object (&store);
    }
  memcpy (sorted, times, sizeof times);
  for (guint i = 1; i < 5; i++)
    for (guint j = i; j > 0 && sorted[j - 1] > sorted[j]; j--)
      {
        double x = sorted[j];
        sorted[j] = sorted[j - 1];
        sorted[j - 1] = x;
      }
  printf ("startup to first drawn frame with charts, %u runs in the store (newest shown, %u "
          "cards): first %.0f ms, median of 5 %.0f ms, max %.0f ms (aim < 500 ms)\n",
          N_RUNS, (guint)G_N_ELEMENTS (tags), times[0], sorted[2], sorted[4]);
  printf ("startup to first painted frame (shell): %.0f ms\n", shell[0]);

  /* One run whose IS weight mean has 1 M points. */
  t = g_get_monotonic_time ();
  store = dw_store_open (db1m, &error);
  g_assert_no_error (error);
  fill_runs (store, 1, 1000000, 1, 2);
  printf ("store: 1 run x 1 tag x 1000000 steps written in %.1f s\n",
          (g_get_monotonic_time () - t) / 1e6);
  rss0 = dw_ui_test_rss_kb ();
  {
    double shell_ms, ms = time_startup (store, &shell_ms);
    printf ("open a run with a 1 M-point series to its first drawn frame: %.0f ms\n", ms);
  }
  rss1 = dw_ui_test_rss_kb ();
  printf ("RSS after showing and closing it: +%.0f MB\n", (rss1 - rss0) / 1024.0);
  g_clear_object (&store);

  g_unlink (db100);
  g_unlink (db1m);
  {
    g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
    const char *name;
    while (d != NULL && (name = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *p = g_build_filename (dir, name, NULL);
        g_unlink (p);
      }
  }
  g_rmdir (dir);
  return 0;
}
