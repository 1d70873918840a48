/* bench-chart.c — chart frame cost with 1 M points at 1600 px, and memory of 10 × 1 M points
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include <adwaita.h>

#include "dw-chart.h"
#include "dw-ui-test-util.h"

static double
median (double *v, guint n)
{
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && v[j - 1] > v[j]; j--)
      {
        double t = v[j];
        v[j] = v[j - 1];
        v[j - 1] = t;
      }
  return v[n / 2];
}

static void
random_walk (DwPlotSeries *s, gsize n, guint seed)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  g_autofree gint64 *steps = g_new (gint64, n);
  g_autofree double *wall = g_new (double, n);
  g_autofree double *v = g_new (double, n);
  double y = 1;

  for (gsize i = 0; i < n; i++)
    {
      y += g_rand_double_range (rand, -0.01, 0.01);
      steps[i] = i;
      wall[i] = 1.7e9 + i;
      v[i] = y;
    }
  v[n / 3] = 40; /* one spike the envelope must show */
  dw_plot_series_append (s, steps, wall, v, n);
}

int
main (int argc, char **argv)
{
  GtkWidget *chart;
  cairo_surface_t *surface;
  cairo_t *cr;
  double times[31];
  gint64 t0;
  GdkRGBA c = { 0.2, 0.5, 0.9, 1 };
  long rss0, rss1;
  gsize bytes = 0;
  g_autoptr (GPtrArray) many = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_plot_series_free);

  gtk_init ();
  adw_init ();
  chart = g_object_ref_sink (dw_chart_new ());
  dw_chart_set_smoothing (DW_CHART (chart), g_getenv ("DW_BENCH_SMOOTH") ? 0 : 0.6);

  t0 = g_get_monotonic_time ();
  random_walk (dw_chart_add_series (DW_CHART (chart), "a", "a", &c), 1000000, 1);
  printf ("load 1M points (pyramids + EMA): %.1f ms\n", (g_get_monotonic_time () - t0) / 1000.0);

  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1600 + 70, 400);
  cr = cairo_create (surface);
  /* First frame computes the outlier-ignoring bounds (quantiles over 1 M values). */
  t0 = g_get_monotonic_time ();
  dw_chart_draw_frame (DW_CHART (chart), cr, 1600 + 70, 400);
  printf ("first frame incl. bounds, 1M points, 1600 px plot: %.2f ms\n",
          (g_get_monotonic_time () - t0) / 1000.0);
  for (guint i = 0; i < G_N_ELEMENTS (times); i++)
    {
      cairo_save (cr);
      cairo_set_operator (cr, CAIRO_OPERATOR_CLEAR);
      cairo_paint (cr);
      cairo_restore (cr);
      t0 = g_get_monotonic_time ();
      dw_chart_draw_frame (DW_CHART (chart), cr, 1600 + 70, 400);
      times[i] = (g_get_monotonic_time () - t0) / 1000.0;
    }
  printf ("frame, 1M points (raw faded + EMA), 1600 px plot: median %.2f ms over %u frames\n",
          median (times, G_N_ELEMENTS (times)), (guint)G_N_ELEMENTS (times));

  /* Zoomed into the middle tenth: pyramid queries instead of a scan. */
  dw_chart_zoom (DW_CHART (chart), 450000, 550000, NAN, NAN);
  dw_chart_draw_frame (DW_CHART (chart), cr, 1600 + 70, 400);
  for (guint i = 0; i < G_N_ELEMENTS (times); i++)
    {
      t0 = g_get_monotonic_time ();
      dw_chart_draw_frame (DW_CHART (chart), cr, 1600 + 70, 400);
      times[i] = (g_get_monotonic_time () - t0) / 1000.0;
    }
  printf ("frame, zoomed to 100k of 1M points: median %.2f ms\n",
          median (times, G_N_ELEMENTS (times)));
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  g_object_unref (chart);

  rss0 = dw_ui_test_rss_kb ();
  for (guint i = 0; i < 10; i++)
    {
      DwPlotSeries *s = dw_plot_series_new (0.6);
      random_walk (s, 1000000, 10 + i);
      bytes += dw_plot_series_get_memory (s);
      g_ptr_array_add (many, s);
    }
  rss1 = dw_ui_test_rss_kb ();
  printf ("memory, 10 series x 1M points (steps, 3 x-modes, raw + EMA with pyramids): %.0f MB "
          "accounted, RSS +%.0f MB\n",
          bytes / 1048576.0, (rss1 - rss0) / 1024.0);
  return 0;
}
