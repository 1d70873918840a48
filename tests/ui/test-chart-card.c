/* test-chart-card.c — the chart card's reading aids driven as a person would, under Xvfb with
 * real pointer and keyboard (XTEST): symmetric-log axis, custom y range, Enlarge, Follow Latest
 * and the step a secondary click (or Enter) activates
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>

#include "dw-chart-card.h"
#include "dw-chart-private.h"
#include "dw-chart-readout.h"
#include "dw-ui-test-util.h"

typedef struct
{
  GtkWidget *window;
  DwChartCard *card;
  DwChart *chart;
} Fixture;

/* 1000 steps of a signed KL (rollout − training), as the demo's collapse writes it: a few 1e-4
 * either side of 0 for 600 steps, then a drift up to 0.02 (the k3 estimator's signed
 * counterpart goes negative while the distributions still agree). */
static void
fill_signed_kl (DwChart *chart, gint64 first, guint n)
{
  GdkRGBA blue = { 0.2, 0.5, 0.9, 1 };
  DwPlotSeries *series = dw_chart_add_series (chart, "demo", "demo", &blue);
  g_autofree gint64 *steps = g_new (gint64, n);
  g_autofree double *values = g_new (double, n);

  for (guint i = 0; i < n; i++)
    {
      gint64 step = first + i;

      steps[i] = step;
      values[i] = step < 600 ? 3e-4 * sin (step * 0.37) : 0.02 * (step - 600) / 400.0;
    }
  dw_plot_series_append (series, steps, NULL, values, n);
  dw_chart_data_changed (chart);
}

static void
fixture_setup (Fixture *fx, gconstpointer data)
{
  fx->window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (fx->window), 800, 420);
  fx->card = DW_CHART_CARD (dw_chart_card_new ("kl", "KL (rollout − training)", NULL));
  fx->chart = dw_chart_card_get_chart (fx->card);
  dw_chart_set_y_unit (fx->chart, "nats");
  gtk_window_set_child (GTK_WINDOW (fx->window), GTK_WIDGET (fx->card));
  fill_signed_kl (fx->chart, 0, 1000);
  gtk_window_present (GTK_WINDOW (fx->window));
  dw_ui_test_iterate_ms (300);
}

static void
fixture_teardown (Fixture *fx, gconstpointer data)
{
  gtk_window_destroy (GTK_WINDOW (fx->window));
  dw_ui_test_iterate_ms (50);
}

static gboolean
skip_without_xtest (Fixture *fx)
{
  if (dw_ui_test_xtest_available (GTK_WIDGET (fx->chart)))
    return FALSE;
  g_test_skip ("no XTEST on this display");
  return TRUE;
}

/* The frame the chart's layers drew with at its current size. */
static void
current_frame (Fixture *fx, DwChartFrame *frame)
{
  _dw_chart_make_frame (fx->chart, frame, gtk_widget_get_width (GTK_WIDGET (fx->chart)),
                        gtk_widget_get_height (GTK_WIDGET (fx->chart)));
}

static void
test_symlog_ticks (Fixture *fx, gconstpointer data)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  DwChartFrame frame;
  guint n_labelled = 0, n_clipped, n_nonfinite, n_restarts;
  gboolean zero = FALSE, negative = FALSE, positive = FALSE;
  double y0, y1;

  /* the menu item a person picks: "Symmetric Log Scale" */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fx->card), "card.y-scale", "s", "symlog"));
  g_assert_cmpint (dw_chart_get_y_scale (fx->chart), ==, DW_CHART_SCALE_SYMLOG);
  g_assert_false (dw_chart_get_log_y (fx->chart));
  dw_ui_test_iterate_ms (200);

  /* every point is inside the view: the negative ones are drawn, not marked ▼ */
  dw_chart_get_view (fx->chart, NULL, NULL, &y0, &y1);
  g_assert_cmpfloat (y0, <=, -3e-4 * 0.99);
  g_assert_cmpfloat (y0, >, -3e-3);
  g_assert_cmpfloat (y1, >=, 0.02);
  dw_chart_get_marker_counts (fx->chart, &n_nonfinite, &n_clipped, &n_restarts);
  g_assert_cmpuint (n_clipped, ==, 0);
  g_assert_cmpuint (n_nonfinite, ==, 0);

  current_frame (fx, &frame);
  g_assert_cmpint (frame.scale, ==, DW_CHART_SCALE_SYMLOG);
  for (guint i = 0; i < frame.n_yticks; i++)
    {
      const DwAxisTick *tick = &frame.yticks[i];
      double y = dw_chart_frame_y (&frame, tick->value);

      if (!tick->labelled)
        continue;
      g_test_message ("tick %s at %g, y %.1f", tick->label, tick->value, y);
      n_labelled++;
      /* unique, inside the plot's height and in a margin as wide as the label */
      g_assert_false (g_hash_table_contains (seen, tick->label));
      g_hash_table_add (seen, (gpointer)tick->label);
      g_assert_cmpfloat (y, >=, frame.py - 0.5);
      g_assert_cmpfloat (y, <=, frame.py + frame.ph + 0.5);
      g_assert_cmpint (_dw_chart_text_width (fx->chart, tick->label), <=, frame.px - 6);
      zero |= tick->value == 0 && g_str_equal (tick->label, "0");
      negative |= tick->value < 0 && tick->label[0] == '-';
      positive |= tick->value > 0;
    }
  g_assert_cmpuint (n_labelled, >=, 3);
  g_assert_true (zero);
  g_assert_true (negative);
  g_assert_true (positive);
  /* 0 sits strictly between the negative and the positive ticks on screen */
  g_assert_cmpfloat (dw_chart_frame_y (&frame, 0), <, dw_chart_frame_y (&frame, -1e-4));
  g_assert_cmpfloat (dw_chart_frame_y (&frame, 0), >, dw_chart_frame_y (&frame, 1e-3));
  /* the inverse maps the pixel back to the value */
  g_assert_cmpfloat_with_epsilon (dw_chart_frame_inv_y (&frame, dw_chart_frame_y (&frame, -2.5e-4)),
                                  -2.5e-4, 1e-9);
}

/* The first DwChart inside @widget (the Enlarge window's), or NULL. */
static GtkWidget *
find_chart (GtkWidget *widget)
{
  if (DW_IS_CHART (widget))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_chart (child);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The first button inside @widget labelled @label, or NULL. */
static GtkWidget *
find_button (GtkWidget *widget, const char *label)
{
  if (GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (widget)), label) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_button (child, label);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static void
click_button (GtkWidget *popover, const char *label)
{
  GtkWidget *button = find_button (popover, label);

  g_assert_nonnull (button);
  g_assert_true (dw_ui_test_click (button, gtk_widget_get_width (button) / 2.0,
                                   gtk_widget_get_height (button) / 2.0));
  dw_ui_test_iterate_ms (150);
}

static void
test_custom_y_range (Fixture *fx, gconstpointer data)
{
  GtkWidget *popover = dw_chart_card_get_range_popover (fx->card);
  GtkEditable *minimum, *maximum;
  double auto_y0, auto_y1, y0, y1;

  if (skip_without_xtest (fx))
    return;
  dw_chart_get_view (fx->chart, NULL, NULL, &auto_y0, &auto_y1);
  dw_chart_card_get_range_entries (fx->card, &minimum, &maximum);

  /* "Set Y Range…": the entries start at the range shown */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fx->card), "card.set-y-range", NULL));
  dw_ui_test_iterate_ms (200);
  g_assert_true (gtk_widget_get_visible (popover));
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod (gtk_editable_get_text (maximum), NULL), auto_y1,
                                  fabs (auto_y1) * 1e-5);

  /* not a number: nothing applied, the entry says so */
  gtk_editable_set_text (minimum, "-0.01");
  gtk_editable_set_text (maximum, "lots");
  click_button (popover, "_Apply");
  g_assert_true (gtk_widget_get_visible (popover));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (maximum), "error"));
  g_assert_false (dw_chart_get_y_range (fx->chart, NULL, NULL));

  gtk_editable_set_text (maximum, "0.05");
  click_button (popover, "_Apply");
  g_assert_false (gtk_widget_get_visible (popover));
  g_assert_true (dw_chart_get_y_range (fx->chart, &y0, &y1));
  g_assert_cmpfloat (y0, ==, -0.01);
  g_assert_cmpfloat (y1, ==, 0.05);
  dw_chart_get_view (fx->chart, NULL, NULL, &y0, &y1);
  g_assert_cmpfloat (y0, ==, -0.01);
  g_assert_cmpfloat (y1, ==, 0.05);

  /* kept while points arrive */
  fill_signed_kl (fx->chart, 1000, 100);
  dw_ui_test_iterate_ms (100);
  dw_chart_get_view (fx->chart, NULL, NULL, &y0, &y1);
  g_assert_cmpfloat (y1, ==, 0.05);

  /* Reset: back to the data's range */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fx->card), "card.set-y-range", NULL));
  dw_ui_test_iterate_ms (200);
  g_assert_cmpstr (gtk_editable_get_text (maximum), ==, "0.05");
  click_button (popover, "_Reset");
  g_assert_false (gtk_widget_get_visible (popover));
  g_assert_false (dw_chart_get_y_range (fx->chart, NULL, NULL));
  dw_chart_get_view (fx->chart, NULL, NULL, &y0, &y1);
  g_assert_cmpfloat (y1, !=, 0.05);
  g_assert_cmpfloat (y1, >=, 0.02 * 499 / 400.0);
}

static void
on_step_activated_cb (DwChart *chart, double step, GArray *steps)
{
  g_array_append_val (steps, step);
}

static void
test_enlarge (Fixture *fx, gconstpointer data)
{
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (double));
  DwChartFrame frame;
  GtkWindow *enlarged;
  GtkWidget *big;
  double x0, x1, big_x0, big_x1;

  if (skip_without_xtest (fx))
    return;
  dw_chart_set_y_scale (fx->chart, DW_CHART_SCALE_SYMLOG);
  dw_chart_zoom (fx->chart, 100, 700, NAN, NAN);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fx->card), "card.enlarge", NULL));
  dw_ui_test_iterate_ms (400);
  enlarged = dw_chart_card_get_enlarged (fx->card);
  g_assert_nonnull (enlarged);
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (enlarged)));
  g_assert_true (gtk_window_get_modal (enlarged));
  g_assert_cmpstr (gtk_window_get_title (enlarged), ==, "KL (rollout − training)");

  /* the same series, scale and view, bigger than the card */
  big = find_chart (GTK_WIDGET (enlarged));
  g_assert_nonnull (big);
  g_assert_cmpuint (dw_chart_get_n_series (DW_CHART (big)), ==, 1);
  g_assert_cmpint (dw_chart_get_y_scale (DW_CHART (big)), ==, DW_CHART_SCALE_SYMLOG);
  g_assert_cmpuint (dw_plot_series_get_length (dw_chart_get_series (DW_CHART (big), "demo")), ==,
                    1000);
  dw_chart_get_view (fx->chart, &x0, &x1, NULL, NULL);
  dw_chart_get_view (DW_CHART (big), &big_x0, &big_x1, NULL, NULL);
  g_assert_cmpfloat (big_x0, ==, x0);
  g_assert_cmpfloat (big_x1, ==, x1);
  g_assert_cmpint (gtk_widget_get_width (big), >, gtk_widget_get_width (GTK_WIDGET (fx->chart)));

  /* a secondary click on the big chart activates the step on the card's chart (drill-down) */
  g_signal_connect (fx->chart, "step-activated", G_CALLBACK (on_step_activated_cb), steps);
  _dw_chart_make_frame (DW_CHART (big), &frame, gtk_widget_get_width (big),
                        gtk_widget_get_height (big));
  g_assert_true (dw_ui_test_click_button (big, dw_chart_data_to_widget_x (DW_CHART (big), 400),
                                          frame.py + frame.ph / 2, 3));
  dw_ui_test_iterate_ms (100);
  g_assert_cmpuint (steps->len, ==, 1);
  g_assert_cmpfloat (fabs (g_array_index (steps, double, 0) - 400), <=, 2);

  /* Escape closes it */
  g_assert_true (dw_ui_test_key (big, GDK_KEY_Escape, FALSE));
  dw_ui_test_iterate_ms (300);
  g_assert_null (dw_chart_card_get_enlarged (fx->card));
}

static void
test_follow_latest (Fixture *fx, gconstpointer data)
{
  DwChartFrame frame;
  double x0, x1;

  /* a zoom on the first 100 steps, then "Follow Latest" */
  dw_chart_zoom (fx->chart, 0, 100, NAN, NAN);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fx->card), "card.follow-latest", NULL));
  g_assert_true (dw_chart_get_follow_latest (fx->chart));
  dw_ui_test_iterate_ms (100);
  dw_chart_get_view (fx->chart, &x0, &x1, NULL, NULL);
  g_assert_cmpfloat (x1, ==, 999);
  g_assert_cmpfloat (x0, ==, 899);

  /* points arrive, five batches as a live run writes them: the newest stays in view */
  for (guint batch = 0; batch < 5; batch++)
    {
      gint64 last = 1000 + 40 * batch + 39;

      fill_signed_kl (fx->chart, 1000 + 40 * batch, 40);
      dw_ui_test_iterate_ms (80);
      dw_chart_get_view (fx->chart, &x0, &x1, NULL, NULL);
      g_assert_cmpfloat (x1, ==, (double)last);
      g_assert_cmpfloat (x1 - x0, ==, 100);
      current_frame (fx, &frame);
      g_assert_cmpfloat (dw_chart_data_to_widget_x (fx->chart, last), <=,
                         frame.px + frame.pw + 0.5);
      g_assert_cmpfloat (dw_chart_data_to_widget_x (fx->chart, last), >=, frame.px + frame.pw - 1);
    }

  /* off: the view stays where it is while more points arrive */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fx->card), "card.follow-latest", NULL));
  g_assert_false (dw_chart_get_follow_latest (fx->chart));
  fill_signed_kl (fx->chart, 1200, 50);
  dw_ui_test_iterate_ms (80);
  dw_chart_get_view (fx->chart, &x0, &x1, NULL, NULL);
  g_assert_cmpfloat (x1, ==, 1199);

  /* a span of its own, without a zoom */
  dw_chart_reset_zoom (fx->chart);
  dw_chart_set_follow_span (fx->chart, 50);
  dw_chart_set_follow_latest (fx->chart, TRUE);
  dw_ui_test_iterate_ms (80);
  dw_chart_get_view (fx->chart, &x0, &x1, NULL, NULL);
  g_assert_cmpfloat (x1, ==, 1249);
  g_assert_cmpfloat (x0, ==, 1199);
}

static void
test_step_activated (Fixture *fx, gconstpointer data)
{
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *readout_text = NULL, *expected = NULL;
  GtkWidget *widget = GTK_WIDGET (fx->chart);
  DwChartFrame frame;
  double x, y, cursor;

  if (skip_without_xtest (fx))
    return;
  g_signal_connect (fx->chart, "step-activated", G_CALLBACK (on_step_activated_cb), steps);
  current_frame (fx, &frame);
  x = dw_chart_data_to_widget_x (fx->chart, 300);
  y = frame.py + frame.ph / 2;

  /* a secondary click on the plot: the step under the pointer */
  g_assert_true (dw_ui_test_click_button (widget, x, y, 3));
  dw_ui_test_iterate_ms (100);
  g_assert_cmpuint (steps->len, ==, 1);
  cursor = dw_chart_get_cursor_x (fx->chart);
  g_assert_cmpfloat (g_array_index (steps, double, 0), ==, round (cursor));
  g_assert_cmpfloat (fabs (g_array_index (steps, double, 0) - 300), <=, 3);

  /* a primary click activates nothing; a secondary one in the tick-label margin neither */
  g_assert_true (dw_ui_test_click (widget, x, y));
  g_assert_true (dw_ui_test_click_button (widget, frame.px / 2, y, 3));
  dw_ui_test_iterate_ms (100);
  g_assert_cmpuint (steps->len, ==, 1);

  /* Enter with the keyboard focus on the chart: the step at the hover position */
  gtk_widget_grab_focus (widget);
  g_assert_true (gtk_widget_has_focus (widget));
  g_assert_true (dw_ui_test_key (widget, GDK_KEY_Return, FALSE));
  dw_ui_test_iterate_ms (100);
  g_assert_cmpuint (steps->len, ==, 2);
  cursor = dw_chart_get_cursor_x (fx->chart);
  g_assert_true (isfinite (cursor));
  g_assert_cmpfloat (g_array_index (steps, double, 1), ==, round (cursor));

  /* Left and Right move the cursor a sample at a time: no pointer needed to pick a step */
  g_assert_true (dw_ui_test_key (widget, GDK_KEY_Left, FALSE));
  g_assert_true (dw_ui_test_key (widget, GDK_KEY_Return, FALSE));
  g_assert_true (dw_ui_test_key (widget, GDK_KEY_Right, FALSE));
  g_assert_true (dw_ui_test_key (widget, GDK_KEY_Right, FALSE));
  g_assert_true (dw_ui_test_key (widget, GDK_KEY_Return, FALSE));
  dw_ui_test_iterate_ms (100);
  g_assert_cmpuint (steps->len, ==, 4);
  g_assert_cmpfloat (g_array_index (steps, double, 2), ==, g_array_index (steps, double, 1) - 1);
  g_assert_cmpfloat (g_array_index (steps, double, 3), ==, g_array_index (steps, double, 1) + 1);
  /* the read-out follows the keyboard cursor */
  readout_text = dw_chart_readout_dup_text (DW_CHART_READOUT (dw_chart_get_readout (fx->chart)));
  expected = g_strdup_printf ("step %.0f", g_array_index (steps, double, 3));
  g_assert_true (gtk_widget_get_visible (dw_chart_get_readout (fx->chart)));
  g_assert_nonnull (strstr (readout_text, expected));
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add ("/Dw/ChartCard/symlog-ticks", Fixture, NULL, fixture_setup, test_symlog_ticks,
              fixture_teardown);
  g_test_add ("/Dw/ChartCard/custom-y-range", Fixture, NULL, fixture_setup, test_custom_y_range,
              fixture_teardown);
  g_test_add ("/Dw/ChartCard/enlarge", Fixture, NULL, fixture_setup, test_enlarge,
              fixture_teardown);
  g_test_add ("/Dw/ChartCard/follow-latest", Fixture, NULL, fixture_setup, test_follow_latest,
              fixture_teardown);
  g_test_add ("/Dw/ChartCard/step-activated", Fixture, NULL, fixture_setup, test_step_activated,
              fixture_teardown);
  return g_test_run ();
}
