/* test-window.c — the main window driven as a user would: open runs, overlay them, hover, zoom,
 * log scale, tag charts by regex, export, the health panel, live appends and the demo run
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "dw-chart-card.h"
#include "dw-demo.h"
#include "dw-health-panel.h"
#include "dw-health.h"
#include "dw-monitor-view.h"
#include "dw-run-row.h"
#include "dw-store-writer.h"
#include "dw-tune-view.h"
#include "dw-ui-test-util.h"
#include "dw-window.h"

#define N_ALPHA 100
#define N_BETA  50
/* alpha's IS weight mean falls out of [0.5, 2] from this step on */
#define DROP_STEP 60

typedef struct
{
  char *dir;
  char *db;
  DwStore *store;
  DwWindow *window;
  gint64 alpha, beta;
} Fixture;

static double
alpha_is_mean (gint64 step)
{
  return step < DROP_STEP ? 1.0 + 0.001 * step : 0.3;
}

static void
put_series (DwStore *store, gint64 run, const char *tag, gint64 from, gint64 to,
            double (*value) (gint64 step, gpointer data), gpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 tag_id = dw_store_ensure_tag (store, run, tag, NULL, &error);

  g_assert_no_error (error);
  for (gint64 s = from; s <= to; s++)
    {
      g_assert_true (
        dw_store_put_point (store, run, tag_id, s, 1.7e9 + 10.0 * s, value (s, data), &error));
      g_assert_no_error (error);
    }
}

static double
v_is_mean (gint64 step, gpointer data)
{
  return alpha_is_mean (step);
}

static double
v_const (gint64 step, gpointer data)
{
  return *(double *)data;
}

static double
v_linear (gint64 step, gpointer data)
{
  return *(double *)data * step;
}

static void
fixture_setup (Fixture *fx, gconstpointer user_data)
{
  g_autoptr (GError) error = NULL;
  double ess = 0.9, k3 = 1e-5, grad = 0.01, custom_a = 2.0, custom_b = 3.0, other = 4.0, beta = 1.1;

  fx->dir = g_dir_make_tmp ("dw-test-window-XXXXXX", &error);
  g_assert_no_error (error);
  fx->db = g_build_filename (fx->dir, "store.db", NULL);
  fx->store = dw_store_open (fx->db, &error);
  g_assert_no_error (error);

  if (user_data == NULL)
    {
      g_assert_true (dw_store_begin (fx->store, &error));
      fx->alpha = dw_store_ensure_run (fx->store, "alpha", "verl", "/runs/alpha", &error);
      g_assert_no_error (error);
      put_series (fx->store, fx->alpha, "rollout_corr/rollout_is_mean", 1, N_ALPHA, v_is_mean,
                  NULL);
      put_series (fx->store, fx->alpha, "rollout_corr/rollout_is_eff_sample_size", 1, N_ALPHA,
                  v_const, &ess);
      put_series (fx->store, fx->alpha, "rollout_corr/k3_kl", 1, N_ALPHA, v_const, &k3);
      put_series (fx->store, fx->alpha, "actor/grad_norm", 1, N_ALPHA, v_linear, &grad);
      put_series (fx->store, fx->alpha, "custom/alpha_metric", 1, N_ALPHA, v_linear, &custom_a);
      put_series (fx->store, fx->alpha, "custom/beta_metric", 1, N_ALPHA, v_const, &custom_b);
      put_series (fx->store, fx->alpha, "other_tag", 1, N_ALPHA, v_const, &other);
      fx->beta = dw_store_ensure_run (fx->store, "beta", "slime", "/runs/beta", &error);
      g_assert_no_error (error);
      put_series (fx->store, fx->beta, "rollout_corr/rollout_is_mean", 1, N_BETA, v_const, &beta);
      g_assert_true (dw_store_commit (fx->store, &error));
    }

  fx->window = dw_window_new (NULL, fx->store, FALSE);
  gtk_window_set_default_size (GTK_WINDOW (fx->window), 1400, 900);
  gtk_window_present (GTK_WINDOW (fx->window));
  g_assert_true (dw_ui_test_wait_window_ready (fx->window, 10000));
}

static void
fixture_teardown (Fixture *fx, gconstpointer user_data)
{
  gtk_window_destroy (GTK_WINDOW (fx->window));
  dw_ui_test_iterate_ms (50);
  g_clear_object (&fx->store);
  dw_ui_test_remove_tree (fx->dir);
  g_free (fx->db);
  g_free (fx->dir);
}

static DwMonitorView *
monitor (Fixture *fx)
{
  return DW_MONITOR_VIEW (dw_window_get_monitor_view (fx->window));
}

static DwChart *
chart_of (Fixture *fx, const char *card_id)
{
  DwChartCard *card = dw_monitor_view_find_card (monitor (fx), card_id);

  g_assert_nonnull (card);
  return dw_chart_card_get_chart (card);
}

static void
select_runs (Fixture *fx, gint64 a, gint64 b)
{
  gint64 ids[] = { a, b };

  dw_window_select_runs (fx->window, ids, b > 0 ? 2 : 1);
  g_assert_true (dw_ui_test_wait_window_ready (fx->window, 5000));
}

/* ------------------------------------------------------------------------------------------ */

static void
test_open_run (Fixture *fx, gconstpointer user_data)
{
  GtkListBox *list = dw_window_get_run_list (fx->window);
  DwRunRow *row0 = DW_RUN_ROW (gtk_list_box_get_row_at_index (list, 0));
  DwRunRow *row1 = DW_RUN_ROW (gtk_list_box_get_row_at_index (list, 1));
  g_autofree char *report = NULL;
  DwChart *chart;
  DwPlotSeries *ps;
  const double *raw;
  g_autofree char *key = NULL;

  /* Newest run first, and it is what the window shows at first. */
  g_assert_cmpint (dw_run_row_get_run_id (row0), ==, fx->beta);
  g_assert_cmpint (dw_run_row_get_run_id (row1), ==, fx->alpha);
  g_assert_null (gtk_list_box_get_row_at_index (list, 2));
  g_assert_true (gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (row0)));
  g_assert_cmpuint (dw_monitor_view_get_n_runs (monitor (fx)), ==, 1);

  select_runs (fx, fx->alpha, 0);
  g_assert_true (gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (row1)));
  g_assert_false (gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (row0)));

  /* The stored values, every point, in the IS weight mean card. */
  chart = chart_of (fx, "is_mean");
  g_assert_cmpuint (dw_chart_get_n_series (chart), ==, 1);
  key = g_strdup_printf ("%" G_GINT64_FORMAT "\tis_mean", fx->alpha);
  ps = dw_chart_get_series (chart, key);
  g_assert_nonnull (ps);
  g_assert_cmpuint (dw_plot_series_get_length (ps), ==, N_ALPHA);
  raw = dw_pyramid_get_values (dw_plot_series_get_raw (ps));
  for (guint i = 0; i < N_ALPHA; i++)
    {
      g_assert_cmpint (dw_plot_series_get_steps (ps)[i], ==, i + 1);
      g_assert_cmpfloat (raw[i], ==, alpha_is_mean (i + 1));
    }

  /* Logged training signals get a card, unlogged ones none; the mismatch family always has one
   * and says when the run did not log it. */
  g_assert_nonnull (dw_monitor_view_find_card (monitor (fx), "grad_norm"));
  g_assert_null (dw_monitor_view_find_card (monitor (fx), "reward"));
  g_assert_null (dw_monitor_view_find_card (monitor (fx), "entropy"));
  g_assert_cmpuint (dw_chart_get_n_series (chart_of (fx, "ppl_ratio")), ==, 0);
  g_assert_cmpuint (dw_chart_get_n_series (chart_of (fx, "ess")), ==, 1);
  /* 100 points in is_mean, ess, k3_kl and grad_norm. */
  g_assert_cmpuint (dw_monitor_view_get_n_points (monitor (fx)), ==, 4 * N_ALPHA);

  /* The health rule fired where the mean fell below 0.5, and the panel says so with the bound
   * crossed (the run's keys read as verl ≥ 0.8: the applied weights' mean). */
  g_assert_cmpuint (
    dw_health_panel_get_n_events (DW_HEALTH_PANEL (dw_window_get_health_panel (fx->window))), ==,
    1);
  report = dw_health_panel_dup_report (DW_HEALTH_PANEL (dw_window_get_health_panel (fx->window)));
  g_assert_nonnull (strstr (report, "alpha\n"));
  g_assert_nonnull (
    strstr (report, "steps 60–100: Applied IS weight mean below 0.5 [is-weight-mean-low]"));
  g_assert_nonnull (
    strstr (report, "rollout_corr/rollout_is_mean: 0.3 < 0.5 (0.6×), fired on 41 step(s)"));
}

static void
test_overlay_shared_cursor (Fixture *fx, gconstpointer user_data)
{
  DwChart *is_mean, *ess;
  g_autofree char *text = NULL;
  double x0, x1;

  select_runs (fx, fx->alpha, fx->beta);
  g_assert_cmpuint (dw_monitor_view_get_n_runs (monitor (fx)), ==, 2);
  is_mean = chart_of (fx, "is_mean");
  ess = chart_of (fx, "ess");
  g_assert_cmpuint (dw_chart_get_n_series (is_mean), ==, 2);
  g_assert_cmpuint (dw_chart_get_n_series (ess), ==, 1);

  /* Hovering one chart moves the cursor of every chart to the same x. */
  dw_chart_get_view (is_mean, &x0, &x1, NULL, NULL);
  g_assert_cmpfloat (x0, <=, 1);
  g_assert_cmpfloat (x1, >=, N_ALPHA);
  dw_chart_hover (is_mean, gtk_widget_get_width (GTK_WIDGET (is_mean)) / 2.0, 40);
  g_assert_true (isfinite (dw_chart_get_cursor_x (is_mean)));
  g_assert_cmpfloat (dw_chart_get_cursor_x (ess), ==, dw_chart_get_cursor_x (is_mean));
  g_assert_cmpfloat (dw_chart_get_cursor_x (chart_of (fx, "k3_kl")), ==,
                     dw_chart_get_cursor_x (is_mean));

  /* The read-out lists both runs at the cursor. */
  text = dw_chart_dup_hover_text (is_mean);
  g_assert_nonnull (strstr (text, "alpha: "));
  g_assert_nonnull (strstr (text, "beta: "));

  /* Smoothing and the x axis apply to every card; a new x axis drops the cursor and zoom. */
  dw_monitor_view_set_smoothing (monitor (fx), 0.9);
  g_assert_cmpfloat (dw_chart_get_smoothing (is_mean), ==, 0.9);
  g_assert_cmpfloat (dw_chart_get_smoothing (ess), ==, 0.9);
  dw_monitor_view_set_x_mode (monitor (fx), DW_X_WALL);
  g_assert_cmpint (dw_chart_get_x_mode (is_mean), ==, DW_X_WALL);
  g_assert_cmpint (dw_chart_get_x_mode (ess), ==, DW_X_WALL);
  g_assert_true (isnan (dw_chart_get_cursor_x (is_mean)));
  dw_ui_test_iterate_ms (50);
  dw_chart_get_view (is_mean, &x0, &x1, NULL, NULL);
  g_assert_cmpfloat (x0, <=, 1.7e9 + 10.0);
  g_assert_cmpfloat (x1, >=, 1.7e9 + 10.0 * N_ALPHA);

  /* Both are settings (shared by the next tests' windows in this process): restore them. */
  dw_monitor_view_set_x_mode (monitor (fx), DW_X_STEP);
  dw_monitor_view_set_smoothing (monitor (fx), 0.6);
}

static void
test_log_scale_and_zoom (Fixture *fx, gconstpointer user_data)
{
  DwChartCard *card;
  DwChart *chart;
  double x0, x1;

  select_runs (fx, fx->alpha, 0);
  /* KL-like metrics open on a log axis, the IS mean on a linear one. */
  g_assert_true (dw_chart_card_get_log_y (dw_monitor_view_find_card (monitor (fx), "k3_kl")));
  card = dw_monitor_view_find_card (monitor (fx), "is_mean");
  g_assert_false (dw_chart_card_get_log_y (card));

  /* Ctrl+L acts on the chart the pointer was last over. */
  chart = dw_chart_card_get_chart (card);
  dw_chart_hover (chart, 100, 50);
  g_assert_true (dw_monitor_view_get_current_card (monitor (fx)) == card);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fx->window), "win.log-scale", NULL));
  g_assert_true (dw_chart_card_get_log_y (card));
  g_assert_true (dw_chart_get_log_y (chart));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (card), "card.log-y", NULL));
  g_assert_false (dw_chart_get_log_y (chart));

  /* Zoom, then the window's reset. */
  dw_chart_zoom (chart, 20, 40, NAN, NAN);
  dw_ui_test_iterate_ms (50);
  dw_chart_get_view (chart, &x0, &x1, NULL, NULL);
  g_assert_cmpfloat (x0, ==, 20);
  g_assert_cmpfloat (x1, ==, 40);
  g_assert_true (dw_chart_is_zoomed (chart));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fx->window), "win.reset-zoom", NULL));
  g_assert_false (dw_chart_is_zoomed (chart));

  /* "Show in Charts" on the health event: Monitor page, every chart around step 60. */
  dw_window_set_view (fx->window, "health");
  dw_health_panel_activate_event (DW_HEALTH_PANEL (dw_window_get_health_panel (fx->window)), 0);
  g_assert_true (dw_chart_is_zoomed (chart));
  dw_chart_get_view (chart, &x0, &x1, NULL, NULL);
  g_assert_cmpfloat (x0, <, DROP_STEP);
  g_assert_cmpfloat (x1, >, DROP_STEP);
  g_assert_cmpfloat (x1 - x0, <, N_ALPHA / 2);
  g_assert_cmpfloat (dw_chart_get_cursor_x (chart), ==, DROP_STEP);
  g_assert_cmpfloat (dw_chart_get_cursor_x (chart_of (fx, "grad_norm")), ==, DROP_STEP);
  g_assert_true (dw_chart_is_zoomed (chart_of (fx, "grad_norm")));
}

static void
test_tag_charts (Fixture *fx, gconstpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) cards = NULL;
  DwChart *chart;
  DwPlotSeries *ps;
  g_autofree char *key = NULL;
  guint n_default;

  select_runs (fx, fx->alpha, 0);
  cards = dw_monitor_view_get_cards (monitor (fx));
  n_default = cards->len;

  g_assert_true (dw_monitor_view_set_tag_filter (monitor (fx), "^CUSTOM/", &error));
  g_assert_no_error (error);
  g_clear_pointer (&cards, g_ptr_array_unref);
  cards = dw_monitor_view_get_cards (monitor (fx));
  g_assert_cmpuint (cards->len, ==, n_default + 2);
  /* Sorted, after the default cards, titled by the part after the prefix. */
  g_assert_cmpstr (dw_chart_card_get_id (cards->pdata[n_default]), ==, "tag:custom/alpha_metric");
  g_assert_cmpstr (dw_chart_card_get_title (cards->pdata[n_default]), ==, "alpha_metric");
  g_assert_cmpstr (dw_chart_card_get_id (cards->pdata[n_default + 1]), ==,
                   "tag:custom/beta_metric");
  g_assert_null (dw_monitor_view_find_card (monitor (fx), "tag:other_tag"));

  chart = chart_of (fx, "tag:custom/alpha_metric");
  key = g_strdup_printf ("%" G_GINT64_FORMAT "\tcustom/alpha_metric", fx->alpha);
  ps = dw_chart_get_series (chart, key);
  g_assert_nonnull (ps);
  g_assert_cmpuint (dw_plot_series_get_length (ps), ==, N_ALPHA);
  g_assert_cmpfloat (dw_pyramid_get_values (dw_plot_series_get_raw (ps))[49], ==, 2.0 * 50);

  /* A bad expression is refused and leaves the cards alone. */
  g_assert_false (dw_monitor_view_set_tag_filter (monitor (fx), "custom/(", &error));
  g_assert_error (error, G_REGEX_ERROR, G_REGEX_ERROR_UNMATCHED_PARENTHESIS);
  g_assert_true (g_str_has_prefix (error->message, "Invalid regular expression: "));
  g_assert_nonnull (dw_monitor_view_find_card (monitor (fx), "tag:custom/beta_metric"));
  g_clear_error (&error);

  g_assert_true (dw_monitor_view_set_tag_filter (monitor (fx), "other", &error));
  g_assert_nonnull (dw_monitor_view_find_card (monitor (fx), "tag:other_tag"));
  g_assert_null (dw_monitor_view_find_card (monitor (fx), "tag:custom/beta_metric"));
  g_assert_true (dw_monitor_view_set_tag_filter (monitor (fx), "", &error));
  g_clear_pointer (&cards, g_ptr_array_unref);
  cards = dw_monitor_view_get_cards (monitor (fx));
  g_assert_cmpuint (cards->len, ==, n_default);
}

static void
test_export (Fixture *fx, gconstpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *png = g_build_filename (fx->dir, "is-mean.png", NULL);
  g_autofree char *csv = g_build_filename (fx->dir, "is-mean.csv", NULL);
  g_autofree char *contents = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  g_auto (GStrv) lines = NULL;
  DwChartCard *card;

  select_runs (fx, fx->alpha, 0);
  card = dw_monitor_view_find_card (monitor (fx), "is_mean");
  g_assert_true (dw_chart_card_export (card, png, "png", &error));
  g_assert_no_error (error);
  texture = gdk_texture_new_from_filename (png, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (texture), ==, 1200);
  g_assert_cmpint (gdk_texture_get_height (texture), ==, 700);

  g_assert_true (dw_chart_card_export (card, csv, "csv", &error));
  g_assert_true (g_file_get_contents (csv, &contents, NULL, &error));
  lines = g_strsplit (contents, "\n", -1);
  g_assert_cmpstr (lines[0], ==, "series,step,wall_time,value,smoothed");
  g_assert_cmpuint (g_strv_length (lines), ==, N_ALPHA + 2); /* header, rows, final "" */
  for (guint i = 0; i < N_ALPHA; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i + 1], ",", -1);

      g_assert_cmpuint (g_strv_length (f), ==, 5);
      g_assert_cmpstr (f[0], ==, "alpha");
      g_assert_cmpint (g_ascii_strtoll (f[1], NULL, 10), ==, i + 1);
      g_assert_cmpfloat (g_ascii_strtod (f[2], NULL), ==, 1.7e9 + 10.0 * (i + 1));
      g_assert_cmpfloat (g_ascii_strtod (f[3], NULL), ==, alpha_is_mean (i + 1));
    }

  g_assert_false (dw_chart_card_export (card, csv, "gif", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "Unknown export format “gif”");
}

/* Another process (a follower, `driftwatch-cli watch`) appends to the store: the window appends
 * the new tail to the series it already has, without reading them again. */
static void
test_live_append (Fixture *fx, gconstpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) writer = NULL;
  g_autofree char *key = NULL;
  DwPlotSeries *before, *after;
  DwChart *chart;
  const double *raw;
  double ess_low = 0.1;

  select_runs (fx, fx->alpha, 0);
  chart = chart_of (fx, "is_mean");
  key = g_strdup_printf ("%" G_GINT64_FORMAT "\tis_mean", fx->alpha);
  before = dw_chart_get_series (chart, key);
  g_assert_cmpstr (dw_window_get_live_text (fx->window), ==, "");

  writer = dw_store_open (fx->db, &error);
  g_assert_no_error (error);
  g_assert_true (dw_store_begin (writer, &error));
  put_series (writer, fx->alpha, "rollout_corr/rollout_is_mean", N_ALPHA + 1, N_ALPHA + 10,
              v_is_mean, NULL);
  put_series (writer, fx->alpha, "rollout_corr/rollout_is_eff_sample_size", N_ALPHA + 1,
              N_ALPHA + 10, v_const, &ess_low);
  g_assert_true (dw_store_commit (writer, &error));

  dw_window_refresh (fx->window);
  dw_ui_test_iterate_ms (100);
  after = dw_chart_get_series (chart, key);
  g_assert_true (after == before);
  g_assert_cmpuint (dw_plot_series_get_length (after), ==, N_ALPHA + 10);
  raw = dw_pyramid_get_values (dw_plot_series_get_raw (after));
  g_assert_cmpfloat (raw[N_ALPHA + 9], ==, 0.3);
  g_assert_cmpint (dw_plot_series_get_steps (after)[N_ALPHA + 9], ==, N_ALPHA + 10);
  g_assert_true (g_str_has_prefix (dw_window_get_live_text (fx->window), "live · last point "));

  /* The new ESS values fired the ESS rule on the live run: in the panel at its first step. */
  g_assert_cmpuint (
    dw_health_panel_get_n_events (DW_HEALTH_PANEL (dw_window_get_health_panel (fx->window))), ==,
    2);
  {
    g_autofree char *report
      = dw_health_panel_dup_report (DW_HEALTH_PANEL (dw_window_get_health_panel (fx->window)));
    g_assert_nonnull (strstr (report, "steps 101–110: Effective sample size below 0.3 [ess-low]"));
  }
}

static void
test_empty_store_and_demo (Fixture *fx, gconstpointer user_data)
{
  g_autofree char *demo = g_build_filename (fx->dir, "demo-collapse", NULL);
  GtkListBox *list = dw_window_get_run_list (fx->window);
  DwChart *chart;
  DwRunRow *row;
  g_autoptr (GPtrArray) runs = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *report = NULL;
  gint64 first_warning = G_MAXINT64;

  g_assert_null (gtk_list_box_get_row_at_index (list, 0));
  g_assert_true (dw_window_is_ready (fx->window));

  dw_window_load_demo (fx->window, demo);
  g_assert_false (dw_window_is_ready (fx->window));
  g_assert_true (dw_ui_test_wait_window_ready (fx->window, 60000));

  runs = dw_store_list_runs (fx->store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 1);
  row = DW_RUN_ROW (gtk_list_box_get_row_at_index (list, 0));
  g_assert_cmpstr (dw_run_row_get_info (row)->name, ==, "demo-collapse");
  g_assert_cmpstr (dw_run_row_get_info (row)->framework, ==, "verl");

  chart = chart_of (fx, "is_mean");
  g_assert_cmpuint (dw_chart_get_n_series (chart), ==, 1);
  for (const char *const *id
       = (const char *const[]){ "is_mean", "ess", "rejection", "kl", "k3_kl", "ppl_ratio", NULL };
       *id != NULL; id++)
    {
      DwChart *c = chart_of (fx, *id);
      g_assert_cmpuint (dw_chart_get_n_series (c), >=, 1);
    }

  /* A warning fires before the collapse the demo writes. */
  report = dw_health_panel_dup_report (DW_HEALTH_PANEL (dw_window_get_health_panel (fx->window)));
  g_assert_nonnull (strstr (report, "[k3-kl-drift]"));
  {
    g_autoptr (GPtrArray) events
      = dw_health_check_run (fx->store, ((DwRunInfo *)runs->pdata[0])->id, &error);

    g_assert_no_error (error);
    for (guint i = 0; i < events->len; i++)
      first_warning = MIN (first_warning, ((DwHealthEvent *)events->pdata[i])->first_step);
  }
  g_assert_cmpint (first_warning, <, dw_demo_collapse_step (DW_DEMO_DEFAULT_STEPS));

  /* The demo run is finished, and it ended collapsed: its drift rules still fire at its last
   * step. The badge says so, in the error style. */
  g_assert_cmpint (dw_run_row_get_info (row)->status, ==, DW_RUN_STATUS_FINISHED);
  g_assert_cmpstr (dw_run_row_get_state_text (row), ==, "collapsed");
  {
    GtkWidget *badge = NULL;

    for (GtkWidget *w = GTK_WIDGET (row); w != NULL && badge == NULL;)
      {
        if (GTK_IS_LABEL (w) && gtk_widget_has_css_class (w, "run-state"))
          badge = w;
        else if (gtk_widget_get_first_child (w) != NULL)
          w = gtk_widget_get_first_child (w);
        else
          {
            while (w != GTK_WIDGET (row) && gtk_widget_get_next_sibling (w) == NULL)
              w = gtk_widget_get_parent (w);
            w = w == GTK_WIDGET (row) ? NULL : gtk_widget_get_next_sibling (w);
          }
      }
    g_assert_nonnull (badge);
    g_assert_true (gtk_widget_has_css_class (badge, "collapsed"));
    g_assert_false (gtk_widget_has_css_class (badge, "finished"));
  }
  g_assert_cmpuint (
    dw_health_panel_get_n_events (DW_HEALTH_PANEL (dw_window_get_health_panel (fx->window))), >=,
    1);
}

/* Open a run folder that is still being written: it is ingested, remembered as recent, and
 * followed: the steps the trainer writes afterwards reach the charts. */
static void
test_open_folder_live (Fixture *fx, gconstpointer user_data)
{
  g_autofree char *run = g_build_filename (fx->dir, "live-run", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwDemo) demo = dw_demo_new (run, DW_DEMO_HEALTHY, 40, 7, &error);
  g_autoptr (GSettings) settings = g_settings_new (APP_ID);
  g_auto (GStrv) recent = NULL;
  const char *paths[] = { run, NULL };
  gboolean done = FALSE;
  DwChart *chart;
  DwPlotSeries *ps;
  gint64 until;
  gint64 run_id;

  g_assert_no_error (error);
  g_settings_set_strv (settings, "recent-runs", NULL);
  for (guint i = 0; i < 20; i++)
    {
      g_assert_true (dw_demo_write_step (demo, &done, &error));
      g_assert_no_error (error);
    }
  dw_window_ingest_paths (fx->window, paths);
  g_assert_true (dw_ui_test_wait_window_ready (fx->window, 60000));
  recent = g_settings_get_strv (settings, "recent-runs");
  g_assert_cmpstr (recent[0], ==, run);

  run_id = dw_run_row_get_run_id (
    DW_RUN_ROW (gtk_list_box_get_row_at_index (dw_window_get_run_list (fx->window), 0)));
  chart = chart_of (fx, "is_mean");
  {
    g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT "\tis_mean", run_id);
    ps = dw_chart_get_series (chart, key);
  }
  g_assert_nonnull (ps);
  g_assert_cmpuint (dw_plot_series_get_length (ps), ==, 20);

  /* The trainer goes on: five more steps. */
  for (guint i = 0; i < 5; i++)
    g_assert_true (dw_demo_write_step (demo, &done, &error));
  until = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (dw_plot_series_get_length (ps) < 25 && g_get_monotonic_time () < until)
    dw_ui_test_iterate_ms (50);
  g_assert_cmpuint (dw_plot_series_get_length (ps), ==, 25);
  g_assert_cmpint (dw_plot_series_get_steps (ps)[24], ==, 25);
  g_assert_true (g_str_has_prefix (dw_window_get_live_text (fx->window), "live · last point "));

  /* Open Recent on a folder that is gone is refused (the toast says so), nothing changes. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fx->window), "win.open-recent", "s",
                                             "/nonexistent/run"));
  g_assert_true (dw_window_is_ready (fx->window));
}

/* Bad input opened in the window: every bad record is reported in a toast that names the file and
 * the place, what is good is stored and shown, and opening the folder again stores nothing twice.
 */
static void
test_bad_input_toasts (Fixture *fx, gconstpointer user_data)
{
  static const char good1[] = "{\"step\":1,\"data\":{\"rollout_corr/rollout_is_mean\":1.0}}\n";
  static const char good2[] = "{\"step\":2,\"data\":{\"rollout_corr/rollout_is_mean\":1.1}}\n";
  static const char bad[] = "this is not json\n";
  static const char good3[] = "{\"step\":3,\"data\":{\"rollout_corr/rollout_is_mean\":1.2}}\n";
  /* a safetensors-sized prefix whose header is not JSON */
  static const char batch[] = "\x0a\0\0\0\0\0\0\0not json!!";
  g_autofree char *run = g_build_filename (fx->dir, "bad-run", NULL);
  g_autofree char *batches = g_build_filename (run, "batches", NULL);
  g_autofree char *jsonl = g_build_filename (run, "metrics.jsonl", NULL);
  g_autofree char *st = g_build_filename (batches, "step_000004.safetensors", NULL);
  g_autofree char *text = g_strconcat (good1, good2, bad, good3, NULL);
  g_autofree char *want_jsonl
    = g_strdup_printf ("%s: byte offset %zu: verl JSONL: line is not a JSON object", jsonl,
                       strlen (good1) + strlen (good2));
  g_autofree char *want_batch = g_strdup_printf (
    "%s: offset 0: not a rollout batch (npz, npy, safetensors, JSONL or a torch .pt dump); starts "
    "with 0a 00 00 00 00 "
    "00 00 00",
    st);
  const char *paths[] = { run, NULL };
  GPtrArray *toasts = dw_window_get_toasts (fx->window);
  g_autoptr (GError) error = NULL;
  DwPlotSeries *ps;
  gint64 run_id;
  gboolean found = FALSE;

  g_assert_cmpint (g_mkdir_with_parents (batches, 0755), ==, 0);
  g_assert_true (g_file_set_contents (jsonl, text, -1, &error));
  g_assert_true (g_file_set_contents (st, batch, sizeof batch - 1, &error));
  g_assert_no_error (error);

  for (guint round = 0; round < 2; round++)
    {
      guint before = toasts->len;

      dw_window_ingest_paths (fx->window, paths);
      g_assert_true (dw_ui_test_wait_window_ready (fx->window, 60000));
      dw_ui_test_iterate_ms (200);
      if (round == 0)
        {
          /* one toast for the skipped records, naming the first with its file and place */
          g_assert_cmpuint (toasts->len, >, before);
          for (guint i = before; i < toasts->len; i++)
            {
              const char *t = g_ptr_array_index (toasts, i);
              g_autofree char *a = g_strdup_printf ("2 bad records skipped, first: %s", want_jsonl);
              g_autofree char *b = g_strdup_printf ("2 bad records skipped, first: %s", want_batch);

              if (g_strcmp0 (t, a) == 0 || g_strcmp0 (t, b) == 0)
                found = TRUE;
            }
          g_assert_true (found);
        }

      /* the good points are there, once, whatever was bad around them */
      run_id = dw_run_row_get_run_id (
        DW_RUN_ROW (gtk_list_box_get_row_at_index (dw_window_get_run_list (fx->window), 0)));
      {
        g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT "\tis_mean", run_id);
        ps = dw_chart_get_series (chart_of (fx, "is_mean"), key);
      }
      g_assert_nonnull (ps);
      g_assert_cmpuint (dw_plot_series_get_length (ps), ==, 3);
      for (guint i = 0; i < 3; i++)
        {
          static const double want[] = { 1.0, 1.1, 1.2 };

          g_assert_cmpint (dw_plot_series_get_steps (ps)[i], ==, i + 1);
          g_assert_cmpfloat (dw_pyramid_get_values (dw_plot_series_get_raw (ps))[i], ==, want[i]);
        }
    }
}

static guint
count_cards (GtkWidget *widget)
{
  guint n = DW_IS_CHART_CARD (widget) && gtk_widget_is_visible (widget);

  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    n += count_cards (c);
  return n;
}

/* Visible, sensitive sliders under @widget: the monitor toolbar has one, the Tune page more. */
static guint
count_sensitive_scales (GtkWidget *widget)
{
  guint n
    = GTK_IS_SCALE (widget) && gtk_widget_is_drawable (widget) && gtk_widget_is_sensitive (widget);

  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    n += count_sensitive_scales (c);
  return n;
}

/* The first widget of @type under @widget (depth first), or NULL. */
static GtkWidget *
find_widget (GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_widget (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* A Tab tour reaches every control only once the window has settled: on the Monitor page nothing
 * loading (ingest, health jobs, chart loads), on the Tune page its worker done (the fixture's
 * runs have no batches, so no result comes), the sidebar and the content side by side (leaflet
 * unfolded, no transition running: while one runs, the hidden side drops out of the focus chain and
 * the tour wraps back to its start early) and @must_draw (the page's first control) drawn. Waits
 * for that (a loaded machine can take seconds), not for a fixed time. */
static void
wait_tour_ready (Fixture *fx, gboolean monitor, GtkWidget *must_draw)
{
  AdwLeaflet *leaflet = ADW_LEAFLET (find_widget (GTK_WIDGET (fx->window), ADW_TYPE_LEAFLET));
  DwTuneView *tune = DW_TUNE_VIEW (find_widget (GTK_WIDGET (fx->window), DW_TYPE_TUNE_VIEW));

  for (guint waited = 0; waited < 30000; waited += 20)
    {
      if ((monitor ? dw_window_is_ready (fx->window) : !dw_tune_view_get_busy (tune))
          && !adw_leaflet_get_folded (leaflet)
          && !adw_leaflet_get_child_transition_running (leaflet)
          && (must_draw == NULL
              || (gtk_widget_is_drawable (must_draw) && gtk_widget_is_sensitive (must_draw))))
        break;
      dw_ui_test_iterate_ms (20);
    }
  g_assert_true (monitor ? dw_window_is_ready (fx->window) : !dw_tune_view_get_busy (tune));
  g_assert_false (adw_leaflet_get_folded (leaflet));
  g_assert_false (adw_leaflet_get_child_transition_running (leaflet));
  g_assert_true (must_draw == NULL
                 || (gtk_widget_is_drawable (must_draw) && gtk_widget_is_sensitive (must_draw)));
}

typedef struct
{
  GHashTable *cards; /* DwChartCard* that held the focus */
  gboolean ring;     /* a card showed :focus-within while its menu button had the focus */
  guint n_scales, n_buttons, n_switches;
  gboolean entry, run_row;
} FocusTour;

/* Presses Tab until the focus comes back to where it started (at most 600 times). */
static void
tab_around (Fixture *fx, FocusTour *t)
{
  GtkWidget *first = NULL;

  gtk_window_set_focus_visible (GTK_WINDOW (fx->window), TRUE);
  for (guint i = 0; i < 600; i++)
    {
      GtkWidget *focus, *card;

      if (!gtk_widget_child_focus (GTK_WIDGET (fx->window), GTK_DIR_TAB_FORWARD))
        gtk_widget_child_focus (GTK_WIDGET (fx->window), GTK_DIR_TAB_FORWARD);
      dw_ui_test_iterate_ms (2);
      focus = gtk_root_get_focus (GTK_ROOT (fx->window));
      if (focus == NULL)
        continue;
      if (focus == first)
        break;
      if (first == NULL)
        first = focus;
      t->n_scales += GTK_IS_SCALE (focus);
      t->n_switches += GTK_IS_SWITCH (focus);
      t->n_buttons += GTK_IS_BUTTON (focus);
      t->entry |= gtk_widget_get_ancestor (focus, GTK_TYPE_SEARCH_ENTRY) != NULL;
      t->run_row |= DW_IS_RUN_ROW (focus);
      card = gtk_widget_get_ancestor (focus, DW_TYPE_CHART_CARD);
      if (card != NULL)
        {
          g_hash_table_add (t->cards, card);
          t->ring |= (gtk_widget_get_state_flags (card) & GTK_STATE_FLAG_FOCUS_WITHIN) != 0;
        }
    }
}

/* Tab alone reaches the run list, the toolbar (tag search, smoothing slider), every card (its
 * menu button; the card shows its focus ring through :focus-within) and, on the Tune page,
 * sliders, switches and buttons. */
static void
test_keyboard_focus (Fixture *fx, gconstpointer user_data)
{
  g_autoptr (GHashTable) cards = g_hash_table_new (NULL, NULL);
  FocusTour monitor_tour = { cards }, tune_tour = { cards };
  guint n_cards;

  select_runs (fx, fx->alpha, 0);
  n_cards = count_cards (dw_window_get_monitor_view (fx->window));
  g_assert_cmpuint (n_cards, >=, 4);
  wait_tour_ready (fx, TRUE,
                   find_widget (dw_window_get_monitor_view (fx->window), GTK_TYPE_SEARCH_ENTRY));
  tab_around (fx, &monitor_tour);
  g_assert_true (monitor_tour.run_row);
  g_assert_true (monitor_tour.entry);
  g_assert_cmpuint (monitor_tour.n_scales, ==, 1);
  g_assert_true (monitor_tour.ring);
  g_assert_cmpuint (g_hash_table_size (cards), ==, n_cards);

  dw_window_set_view (fx->window, "tune");
  /* The Tune page loads the run's batches in a thread: wait for its sliders (a loaded machine
   * can take seconds), not for a fixed time. */
  for (guint waited = 0; waited < 30000 && count_sensitive_scales (GTK_WIDGET (fx->window)) < 2;
       waited += 50)
    dw_ui_test_iterate_ms (50);
  wait_tour_ready (fx, FALSE, find_widget (GTK_WIDGET (fx->window), GTK_TYPE_SWITCH));
  g_hash_table_remove_all (cards);
  tab_around (fx, &tune_tour);
  g_assert_cmpuint (tune_tour.n_scales, >=, 1);
  g_assert_cmpuint (tune_tour.n_switches, >=, 1);
  g_assert_cmpuint (tune_tour.n_buttons, >=, 3);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add ("/Dw/Window/open-run", Fixture, NULL, fixture_setup, test_open_run, fixture_teardown);
  g_test_add ("/Dw/Window/keyboard-focus", Fixture, NULL, fixture_setup, test_keyboard_focus,
              fixture_teardown);
  g_test_add ("/Dw/Window/overlay-shared-cursor", Fixture, NULL, fixture_setup,
              test_overlay_shared_cursor, fixture_teardown);
  g_test_add ("/Dw/Window/log-scale-zoom", Fixture, NULL, fixture_setup, test_log_scale_and_zoom,
              fixture_teardown);
  g_test_add ("/Dw/Window/tag-charts", Fixture, NULL, fixture_setup, test_tag_charts,
              fixture_teardown);
  g_test_add ("/Dw/Window/export", Fixture, NULL, fixture_setup, test_export, fixture_teardown);
  g_test_add ("/Dw/Window/live-append", Fixture, NULL, fixture_setup, test_live_append,
              fixture_teardown);
  g_test_add ("/Dw/Window/empty-store-demo", Fixture, "empty", fixture_setup,
              test_empty_store_and_demo, fixture_teardown);
  g_test_add ("/Dw/Window/open-folder-live", Fixture, "empty", fixture_setup, test_open_folder_live,
              fixture_teardown);
  g_test_add ("/Dw/Window/bad-input-toasts", Fixture, "empty", fixture_setup, test_bad_input_toasts,
              fixture_teardown);
  return g_test_run ();
}
