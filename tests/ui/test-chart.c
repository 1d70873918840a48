/* test-chart.c — the chart widget driven as a user would: hover, zoom, log scale, export
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <math.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "dw-chart-axes.h"
#include "dw-chart-private.h"

typedef struct
{
  GtkWidget *window;
  DwChart *chart;
  char *tmpdir;
} Fixture;

/* Runs the main loop until the chart has been laid out and drawn. */
static void
wait_frames (Fixture *fx, guint frames)
{
  for (guint f = 0; f < frames; f++)
    {
      gint64 until = g_get_monotonic_time () + 20 * 1000;
      while (g_get_monotonic_time () < until)
        g_main_context_iteration (NULL, FALSE);
    }
}

static guint
layer_draws (Fixture *fx, DwChartLayerKind kind)
{
  return dw_chart_layer_get_draw_count (DW_CHART_LAYER (_dw_chart_get_layer (fx->chart, kind)));
}

/* 1000 steps: a slow ramp, a spike of 50 at step 400, a NaN at 700, a restart at 800. */
static void
fill (DwChart *chart)
{
  GdkRGBA blue = { 0.2, 0.5, 0.9, 1 };
  DwPlotSeries *s = dw_chart_add_series (chart, "run-a", "run a", &blue);
  gint64 steps[1000];
  double wall[1000], v[1000];
  gint64 rsteps[50];
  double rv[50];

  for (guint i = 0; i < 1000; i++)
    {
      steps[i] = i;
      wall[i] = 1.7e9 + 30.0 * i;
      v[i] = 1.0 + i / 1000.0;
    }
  v[400] = 50;
  v[700] = NAN;
  dw_plot_series_append (s, steps, wall, v, 1000);
  for (guint i = 0; i < 50; i++)
    {
      rsteps[i] = 800 + i;
      rv[i] = 1.5;
    }
  dw_plot_series_append (s, rsteps, NULL, rv, 50);
  dw_chart_data_changed (chart);
}

static void
fixture_setup (Fixture *fx, gconstpointer data)
{
  fx->tmpdir = g_dir_make_tmp ("dw-test-chart-XXXXXX", NULL);
  fx->window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (fx->window), data ? GPOINTER_TO_INT (data) : 800, 400);
  fx->chart = DW_CHART (dw_chart_new ());
  dw_chart_set_title (fx->chart, "IS weight mean");
  gtk_window_set_child (GTK_WINDOW (fx->window), GTK_WIDGET (fx->chart));
  fill (fx->chart);
  gtk_window_present (GTK_WINDOW (fx->window));
  wait_frames (fx, 10);
}

static void
fixture_teardown (Fixture *fx, gconstpointer data)
{
  g_autoptr (GDir) dir = g_dir_open (fx->tmpdir, 0, NULL);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *p = g_build_filename (fx->tmpdir, name, NULL);
      g_unlink (p);
    }
  g_rmdir (fx->tmpdir);
  g_free (fx->tmpdir);
  gtk_window_destroy (GTK_WINDOW (fx->window));
}

static void
test_draw_markers (Fixture *fx, gconstpointer data)
{
  guint nonfinite, clipped, restarts;
  double y0, y1;

  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (fx->chart)), ==, 800);
  g_assert_cmpuint (layer_draws (fx, DW_CHART_LAYER_DATA), >=, 1);
  dw_chart_get_marker_counts (fx->chart, &nonfinite, &clipped, &restarts);
  /* The NaN at step 700 is before the restart at 800, so it stays. */
  g_assert_cmpuint (nonfinite, ==, 1);
  g_assert_cmpuint (restarts, ==, 1);
  /* By default the axis covers the spike of 50: a health tool shows its outliers. */
  g_assert_false (dw_chart_get_ignore_outliers (fx->chart));
  dw_chart_get_view (fx->chart, NULL, NULL, &y0, &y1);
  g_assert_cmpfloat (y1, >, 50);
  g_assert_cmpuint (clipped, ==, 0);

  /* Outlier-ignoring bounds (asked for) exclude it; it is marked as clipped, not hidden. */
  dw_chart_set_ignore_outliers (fx->chart, TRUE);
  wait_frames (fx, 3);
  dw_chart_get_view (fx->chart, NULL, NULL, &y0, &y1);
  g_assert_cmpfloat (y1, <, 50);
  dw_chart_get_marker_counts (fx->chart, &nonfinite, &clipped, &restarts);
  g_assert_cmpuint (clipped, ==, 1);
}

#define KL_TITLE  "|KL| between rollout and training above 0.1"
#define ESS_TITLE "Effective sample size below 0.3"

/* Pixel column of @step (the left margin is as wide as the y tick labels). */
static double
column_of (Fixture *fx, gint64 step)
{
  return dw_chart_data_to_widget_x (fx->chart, (double)step);
}

/* Marker labels are written whole or not at all: the title where the band has room, one label
 * per place; a marker without a label, or a label left out, still has its title in the hover
 * read-out. */
static void
test_marker_labels (Fixture *fx, gconstpointer data)
{
  g_autofree char *labels = NULL;
  g_autofree char *text = NULL;

  dw_chart_add_marker (fx->chart, 400, DW_MARKER_WARNING, ESS_TITLE, TRUE);
  dw_chart_add_marker (fx->chart, 405, DW_MARKER_WARNING, KL_TITLE, TRUE);
  dw_chart_add_marker (fx->chart, 100, DW_MARKER_CRITICAL, "Non-finite value", FALSE);
  wait_frames (fx, 4);
  labels = dw_chart_dup_marker_labels (fx->chart);
  /* The second label (and its short form) would overlap the first: left out. */
  g_assert_cmpstr (labels, ==, ESS_TITLE);

  dw_chart_hover (fx->chart, column_of (fx, 100), 100);
  text = dw_chart_dup_hover_text (fx->chart);
  g_assert_cmpstr (text, ==, "run a: 1.1 at step 100\nCritical from step 100: Non-finite value");
  g_clear_pointer (&text, g_free);
  dw_chart_hover (fx->chart, column_of (fx, 403), 100);
  text = dw_chart_dup_hover_text (fx->chart);
  g_assert_cmpstr (text, ==,
                   "run a: 1.403 at step 403\nWarning from step 400: " ESS_TITLE
                   "\nWarning from step 405: " KL_TITLE);
}

/* In a chart 240 px wide the long title does not fit anywhere in the band: the short label. */
static void
test_marker_labels_narrow (Fixture *fx, gconstpointer data)
{
  g_autofree char *labels = NULL;

  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (fx->chart)), ==, 240);
  dw_chart_add_marker (fx->chart, 400, DW_MARKER_WARNING, KL_TITLE, TRUE);
  wait_frames (fx, 4);
  labels = dw_chart_dup_marker_labels (fx->chart);
  g_assert_cmpstr (labels, ==, "step 400");
}

static void
test_hover_redraws_overlay_only (Fixture *fx, gconstpointer data)
{
  guint data_draws = layer_draws (fx, DW_CHART_LAYER_DATA);
  guint overlay_draws = layer_draws (fx, DW_CHART_LAYER_OVERLAY);
  g_autofree char *text = NULL;
  double x0, x1;

  /* The plot spans x = 0..849: aim at step 400's column. */
  dw_chart_get_view (fx->chart, &x0, &x1, NULL, NULL);
  g_assert_cmpfloat (x0, ==, 0);
  g_assert_cmpfloat (x1, ==, 849);
  dw_chart_hover (fx->chart, dw_chart_data_to_widget_x (fx->chart, 400), 100);
  wait_frames (fx, 3);
  g_assert_cmpuint (layer_draws (fx, DW_CHART_LAYER_OVERLAY), >, overlay_draws);
  g_assert_cmpuint (layer_draws (fx, DW_CHART_LAYER_DATA), ==, data_draws);
  text = dw_chart_dup_hover_text (fx->chart);
  g_assert_cmpstr (text, ==, "run a: 50 at step 400");
}

/* The chart is a container of layers: one child per kind, each a subclass of the derivable
 * DwChartLayer drawn in order (axes under the series, the overlay on top); hover redraws the
 * overlay and no other layer, new data every layer. */
static void
test_layers (Fixture *fx, gconstpointer data)
{
  static const DwChartLayerKind order[]
    = { DW_CHART_LAYER_AXES, DW_CHART_LAYER_THRESHOLDS, DW_CHART_LAYER_DATA, DW_CHART_LAYER_MARKERS,
        DW_CHART_LAYER_OVERLAY };
  guint draws[DW_CHART_N_LAYERS], index = 0;

  g_assert_true (G_TYPE_IS_DERIVABLE (DW_TYPE_CHART_LAYER));
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (fx->chart)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      if (!DW_IS_CHART_LAYER (child))
        continue; /* the read-out popover */
      g_assert_cmpuint (index, <, G_N_ELEMENTS (order));
      g_assert_cmpint (dw_chart_layer_get_kind (DW_CHART_LAYER (child)), ==, order[index]);
      g_assert_true (G_OBJECT_TYPE (child) != DW_TYPE_CHART_LAYER);
      g_assert_true (child == _dw_chart_get_layer (fx->chart, order[index]));
      g_assert_cmpuint (layer_draws (fx, order[index]), >=, 1);
      index++;
    }
  g_assert_cmpuint (index, ==, G_N_ELEMENTS (order));

  for (guint i = 0; i < DW_CHART_N_LAYERS; i++)
    draws[i] = layer_draws (fx, i);
  dw_chart_hover (fx->chart, dw_chart_data_to_widget_x (fx->chart, 300), 100);
  wait_frames (fx, 3);
  for (guint i = 0; i < DW_CHART_N_LAYERS; i++)
    if (i == DW_CHART_LAYER_OVERLAY)
      g_assert_cmpuint (layer_draws (fx, i), >, draws[i]);
    else
      g_assert_cmpuint (layer_draws (fx, i), ==, draws[i]);

  dw_chart_add_threshold (fx->chart, 2.0, DW_THRESHOLD_WARNING, "2");
  wait_frames (fx, 3);
  for (guint i = 0; i < DW_CHART_N_LAYERS; i++)
    g_assert_cmpuint (layer_draws (fx, i), >, draws[i]);
}

static void
test_log_scale_and_zoom (Fixture *fx, gconstpointer data)
{
  double x0, x1, y0, y1;
  guint draws = layer_draws (fx, DW_CHART_LAYER_DATA);

  dw_chart_set_log_y (fx->chart, TRUE);
  wait_frames (fx, 3);
  g_assert_true (dw_chart_get_log_y (fx->chart));
  g_assert_cmpuint (layer_draws (fx, DW_CHART_LAYER_DATA), >, draws);
  dw_chart_get_view (fx->chart, NULL, NULL, &y0, &y1);
  g_assert_cmpfloat (y0, >, 0);

  /* Zoom to steps 100..200: the view follows, the y range fits the ramp there. */
  dw_chart_zoom (fx->chart, 100, 200, NAN, NAN);
  wait_frames (fx, 3);
  dw_chart_get_view (fx->chart, &x0, &x1, &y0, &y1);
  g_assert_cmpfloat (x0, ==, 100);
  g_assert_cmpfloat (x1, ==, 200);
  g_assert_cmpfloat (y0, <=, 1.1 * 1.0);
  g_assert_cmpfloat (y1, >=, 1.2);
  g_assert_cmpfloat (y1, <, 1.5);
  g_assert_true (dw_chart_is_zoomed (fx->chart));
  dw_chart_reset_zoom (fx->chart);
  g_assert_false (dw_chart_is_zoomed (fx->chart));
  dw_chart_get_view (fx->chart, &x0, &x1, NULL, NULL);
  g_assert_cmpfloat (x1, ==, 849);
}

static void
check_magic (const char *path, const char *magic)
{
  g_autofree char *contents = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  g_assert_cmpuint (len, >, 1000);
  g_assert_true (memcmp (contents, magic, strlen (magic)) == 0);
}

static void
test_export (Fixture *fx, gconstpointer data)
{
  g_autofree char *png = g_build_filename (fx->tmpdir, "c.png", NULL);
  g_autofree char *svg = g_build_filename (fx->tmpdir, "c.svg", NULL);
  g_autofree char *pdf = g_build_filename (fx->tmpdir, "c.pdf", NULL);
  g_autofree char *csv = g_build_filename (fx->tmpdir, "c.csv", NULL);
  g_autofree char *contents = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) tex = NULL;

  if (g_getenv ("DW_KEEP_CHART_PNG") != NULL)
    dw_chart_export (fx->chart, g_getenv ("DW_KEEP_CHART_PNG"), DW_EXPORT_PNG, 640, 320, NULL);
  g_assert_true (dw_chart_export (fx->chart, png, DW_EXPORT_PNG, 640, 320, &error));
  g_assert_no_error (error);
  tex = gdk_texture_new_from_filename (png, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (tex), ==, 640);
  g_assert_cmpint (gdk_texture_get_height (tex), ==, 320);
  g_assert_true (dw_chart_export (fx->chart, svg, DW_EXPORT_SVG, 640, 320, &error));
  check_magic (svg, "<?xml");
  g_assert_true (dw_chart_export (fx->chart, pdf, DW_EXPORT_PDF, 640, 320, &error));
  check_magic (pdf, "%PDF");

  /* CSV: every stored point (800 before the restart + 50 after), full precision. */
  g_assert_true (dw_chart_export_csv (fx->chart, csv, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (csv, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 850 + 1);
  g_assert_cmpstr (lines[0], ==, "series,step,wall_time,value,smoothed");
  g_assert_cmpstr (lines[1], ==, "run a,0,1700000000,1,1");
  g_assert_cmpstr (lines[401], ==, "run a,400,1700012000,50,50");
  g_assert_cmpstr (lines[701], ==, "run a,700,1700021000,nan,nan");
  g_assert_cmpstr (lines[850], ==, "run a,849,1700023970,1.5,1.5");

  /* An unwritable path is an error naming the file. */
  g_assert_false (
    dw_chart_export (fx->chart, "/nonexistent/dir/c.png", DW_EXPORT_PNG, 640, 320, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "/nonexistent/dir/c.png"));
}

static void
test_coalesced_redraw (Fixture *fx, gconstpointer data)
{
  DwPlotSeries *s = dw_chart_get_series (fx->chart, "run-a");
  guint draws = layer_draws (fx, DW_CHART_LAYER_DATA);

  /* 100 live appends within one frame: one redraw. */
  for (guint i = 0; i < 100; i++)
    {
      gint64 step = 850 + i;
      double v = 1.6;
      dw_plot_series_append (s, &step, NULL, &v, 1);
      dw_chart_data_changed (fx->chart);
    }
  g_assert_cmpuint (layer_draws (fx, DW_CHART_LAYER_DATA), ==, draws);
  wait_frames (fx, 4);
  g_assert_cmpuint (layer_draws (fx, DW_CHART_LAYER_DATA), >=, draws + 1);
  g_assert_cmpuint (layer_draws (fx, DW_CHART_LAYER_DATA), <=, draws + 2);
}

/* Labels of the labelled ticks of @kind over [lo, hi], joined by spaces; asserts they are
 * unique and that about @target of them were chosen. */
static char *
tick_labels (DwAxisKind kind, double lo, double hi, int target)
{
  DwAxisTick ticks[64];
  guint n = dw_chart_axes_ticks (kind, lo, hi, target, ticks, G_N_ELEMENTS (ticks));
  g_autoptr (GString) out = g_string_new (NULL);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < n; i++)
    {
      if (!ticks[i].labelled)
        continue;
      if (!g_hash_table_add (seen, ticks[i].label)) /* unique */
        g_error ("[%.17g, %.17g] (%d): label %s twice", lo, hi, target, ticks[i].label);
      g_assert_cmpfloat (ticks[i].value, >=, lo - (hi - lo) * 1e-9);
      g_assert_cmpfloat (ticks[i].value, <=, hi + (hi - lo) * 1e-9);
      g_string_append_printf (out, "%s%s", out->len ? " " : "", ticks[i].label);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The tick labels the issue found wrong, and what they are now: "1, 1" for a range around 1,
 * ".5e-05" cut, every other decade, no 0 on the step axis, "00:03:" cut. */
static void
test_axis_ticks (void)
{
  struct
  {
    DwAxisKind kind;
    double lo, hi;
    int target;
    const char *labels;
  } cases[] = {
    /* a range around 1 (IS weight mean): neighbours differ */
    { DW_AXIS_LINEAR, 0.985, 1.015, 4, "0.99 1.00 1.01" },
    /* a series over a 1e-5 range */
    { DW_AXIS_LINEAR, 1.0e-5, 2.0e-5, 4, "1.0e-5 1.2e-5 1.4e-5 1.6e-5 1.8e-5 2.0e-5" },
    /* a constant 1e-6 on the range the chart gives it */
    { DW_AXIS_LINEAR, 0.9e-6, 1.1e-6, 3, "9.0e-7 9.5e-7 1.00e-6 1.05e-6 1.10e-6" },
    /* every decade on a log axis with room */
    { DW_AXIS_LOG, 2e-5, 0.5, 6, "1e-4 0.001 0.01 0.1" },
    /* a step axis from 0 */
    { DW_AXIS_STEP, 0, 200, 5, "0 50 100 150 200" },
    { DW_AXIS_STEP, 0, 200000, 4, "0 50k 100k 150k 200k" },
    /* relative time in its unit */
    { DW_AXIS_RELATIVE, 0, 600, 5, "0m 2m 4m 6m 8m 10m" },
    { DW_AXIS_RELATIVE, 0, 40, 4, "0s 10s 20s 30s 40s" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *labels
        = tick_labels (cases[i].kind, cases[i].lo, cases[i].hi, cases[i].target);
      g_test_message ("[%g, %g] → %s", cases[i].lo, cases[i].hi, labels);
      if (g_getenv ("DW_PRINT_TICKS"))
        g_printerr ("%s\n", labels);
      else
        g_assert_cmpstr (labels, ==, cases[i].labels);
    }
  /* many decades, little room: every decade still gets its grid line, labels as often as fit */
  {
    DwAxisTick ticks[64];
    guint n = dw_chart_axes_ticks (DW_AXIS_LOG, 1e-9, 1e3, 4, ticks, 64), labelled = 0;

    g_assert_cmpuint (n, ==, 13);
    for (guint i = 0; i < n; i++)
      labelled += ticks[i].labelled;
    g_assert_cmpuint (labelled, >=, 3);
    g_assert_cmpuint (labelled, <=, 5);
  }
  /* unique labels over many random ranges, linear and log */
  for (guint i = 0; i < 2000; i++)
    {
      double lo = g_test_rand_double_range (-1e3, 1e3) * pow (10, g_test_rand_int_range (-9, 6));
      double span = pow (10, g_test_rand_double_range (-10, 6)) * fabs (lo != 0 ? lo : 1);
      g_autofree char *a
        = tick_labels (DW_AXIS_LINEAR, lo, lo + span, g_test_rand_int_range (2, 9));
      g_autofree char *b = lo > 0 ? tick_labels (DW_AXIS_LOG, lo, lo + span * 100, 5) : NULL;

      g_assert_nonnull (a);
      g_assert_true (lo <= 0 || b != NULL);
    }
}

/* A constant 1e-6 is drawn mid-height on a range of its own size, not on the "0" line. */
static void
test_constant_range (Fixture *fx, gconstpointer data)
{
  DwPlotSeries *s = dw_chart_add_series (fx->chart, "c", "constant", &(GdkRGBA){ 0, 0, 1, 1 });
  gint64 steps[] = { 1, 2, 3, 4 };
  double values[] = { 1e-6, 1e-6, 1e-6, 1e-6 };
  double y0, y1;

  dw_chart_clear (fx->chart);
  s = dw_chart_add_series (fx->chart, "c", "constant", &(GdkRGBA){ 0, 0, 1, 1 });
  dw_plot_series_append (s, steps, NULL, values, 4);
  dw_chart_data_changed (fx->chart);
  wait_frames (fx, 3);
  dw_chart_get_view (fx->chart, NULL, NULL, &y0, &y1);
  g_assert_cmpfloat (y0, >, 0);
  g_assert_cmpfloat (y0, <, 1e-6);
  g_assert_cmpfloat (y1, >, 1e-6);
  g_assert_cmpfloat (y1, <, 2e-6);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add_func ("/Dw/Chart/axis-ticks", test_axis_ticks);
  g_test_add ("/Dw/Chart/constant-range", Fixture, NULL, fixture_setup, test_constant_range,
              fixture_teardown);
  g_test_add ("/Dw/Chart/markers", Fixture, NULL, fixture_setup, test_draw_markers,
              fixture_teardown);
  g_test_add ("/Dw/Chart/marker-labels", Fixture, NULL, fixture_setup, test_marker_labels,
              fixture_teardown);
  g_test_add ("/Dw/Chart/marker-labels-narrow", Fixture, GINT_TO_POINTER (240), fixture_setup,
              test_marker_labels_narrow, fixture_teardown);
  g_test_add ("/Dw/Chart/layers", Fixture, NULL, fixture_setup, test_layers, fixture_teardown);
  g_test_add ("/Dw/Chart/hover", Fixture, NULL, fixture_setup, test_hover_redraws_overlay_only,
              fixture_teardown);
  g_test_add ("/Dw/Chart/log-zoom", Fixture, NULL, fixture_setup, test_log_scale_and_zoom,
              fixture_teardown);
  g_test_add ("/Dw/Chart/export", Fixture, NULL, fixture_setup, test_export, fixture_teardown);
  g_test_add ("/Dw/Chart/coalesced", Fixture, NULL, fixture_setup, test_coalesced_redraw,
              fixture_teardown);
  return g_test_run ();
}
