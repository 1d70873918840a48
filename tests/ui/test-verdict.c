/* test-verdict.c — the verdict at a glance: every run's badge right after start-up, equal to
 * `driftwatch-cli runs`; a live run that collapses shows it while live (badge, banner, toast);
 * user text with & and < shows as written in toasts and health rows; the chart read-out is a
 * popover fully inside the window for every card position and 1–5 overlaid runs
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Fixtures: the collapse and healthy demo runs (dw_demo_write) ingested into a fresh store — a
 * restart of the app on a store whose collapsed run is not the one selected; and a run written
 * through the store API while the window shows it, turning NaN (what a diverged bf16 run logs).
 */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include <adwaita.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "dw-chart-card.h"
#include "dw-chart-readout.h"
#include "dw-demo.h"
#include "dw-error-window.h"
#include "dw-health-panel.h"
#include "dw-ingester.h"
#include "dw-monitor-view.h"
#include "dw-run-row.h"
#include "dw-store-writer.h"
#include "dw-ui-test-util.h"
#include "dw-window.h"

static char *dir;

static gint64
ingest_demo_steps (DwStore *store, const char *name, DwDemoScenario scenario, guint n_steps)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *run = g_build_filename (dir, name, NULL);
  g_autoptr (DwIngester) ing = dw_ingester_new (store);
  DwIngestReport report;
  gint64 id;

  g_assert_true (dw_demo_write (run, scenario, n_steps, 1, &error));
  dw_ingest_report_init (&report);
  g_assert_true (dw_ingester_ingest_path (ing, run, &report, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (report.run_ids->len, ==, 1);
  id = g_array_index (report.run_ids, gint64, 0);
  dw_ingest_report_clear (&report);
  return id;
}

static gint64
ingest_demo (DwStore *store, const char *name, DwDemoScenario scenario)
{
  return ingest_demo_steps (store, name, scenario, 200);
}

/* name → status as `driftwatch-cli runs --format json` prints it */
static GHashTable *
cli_statuses (const char *db)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL;
  int status = 0;
  const char *argv[] = { DW_CLI_PATH, "runs", "--db", db, "--format", "json", NULL };
  g_autoptr (JsonParser) parser = json_parser_new ();
  GHashTable *map = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  JsonArray *runs;

  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                               &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, &error));
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  runs = json_node_get_array (json_parser_get_root (parser));
  for (guint i = 0; i < json_array_get_length (runs); i++)
    {
      JsonObject *o = json_array_get_object_element (runs, i);
      g_hash_table_insert (map, g_strdup (json_object_get_string_member (o, "name")),
                           g_strdup (json_object_get_string_member (o, "status")));
    }
  return map;
}

/* A restart: the store holds a collapsed and a healthy run, the healthy one (newest) is
 * selected. Without a click, every badge reads what `driftwatch-cli runs` says. */
static void
test_badge_equals_cli (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = g_build_filename (dir, "restart.db", NULL);
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  g_autoptr (GHashTable) cli = NULL;
  DwWindow *window;
  guint n_rows = 0, n_collapsed = 0;

  ingest_demo (store, "collapse-run", DW_DEMO_COLLAPSE);
  ingest_demo (store, "healthy-run", DW_DEMO_HEALTHY);
  cli = cli_statuses (db);
  g_assert_cmpstr (g_hash_table_lookup (cli, "collapse-run"), ==, "collapsed");
  g_assert_cmpstr (g_hash_table_lookup (cli, "healthy-run"), ==, "finished");

  window = dw_window_new (NULL, store, FALSE);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (dw_window_get_run_list (window)));
       c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      DwRunRow *row = DW_RUN_ROW (c);
      const char *name = dw_run_row_get_info (row)->name;

      g_test_message ("%s: window %s, cli %s (selected: %d)", name, dw_run_row_get_state_text (row),
                      (char *)g_hash_table_lookup (cli, name),
                      gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (row)));
      g_assert_cmpstr (dw_run_row_get_state_text (row), ==, g_hash_table_lookup (cli, name));
      n_collapsed += g_str_equal (name, "collapse-run")
                     && !gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (row));
      n_rows++;
    }
  g_assert_cmpuint (n_rows, ==, 2);
  g_assert_cmpuint (n_collapsed, ==, 1); /* collapsed without having been selected */
  /* the healthy run selected: no verdict line */
  g_assert_null (dw_window_get_verdict (window));
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

/* Whether a label under @w shows (as rendered text, markup removed) something containing
 * @text. */
static gboolean
has_label_with (GtkWidget *w, const char *text)
{
  if (GTK_IS_LABEL (w) && strstr (gtk_label_get_text (GTK_LABEL (w)), text) != NULL)
    return TRUE;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    if (has_label_with (c, text))
      return TRUE;
  return FALSE;
}

static double
k3_value (gint64 step)
{
  return 1e-4;
}

static void
put_steps (DwStore *store, gint64 run, gint64 tag, gint64 from, gint64 to, gboolean nan_from_to)
{
  g_autoptr (GError) error = NULL;
  double now = g_get_real_time () / 1e6;

  g_assert_true (dw_store_begin (store, &error));
  for (gint64 s = from; s <= to; s++)
    g_assert_true (dw_store_put_point (store, run, tag, s, now - (to - s),
                                       nan_from_to ? NAN : k3_value (s), &error));
  g_assert_true (dw_store_set_run_status (store, run, DW_RUN_STATUS_LIVE, &error));
  g_assert_true (dw_store_commit (store, &error));
  g_assert_no_error (error);
}

/* A run being written (status live) turns NaN while shown: the badge says "collapsing" at once
 * (as `driftwatch-cli runs` does), the verdict line names the step, a toast says which rule fired.
 * The run name has & and < in it: toasts and health rows show it as written (libadwaita 1.2 parses
 * both as markup). */
static void
test_live_collapse (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = g_build_filename (dir, "live.db", NULL);
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  const char *name = "ppo & <grpo> run";
  gint64 run, tag;
  DwWindow *window;
  DwRunRow *row;
  GPtrArray *toasts;
  gboolean toasted = FALSE;

  g_assert_true (dw_store_begin (store, &error));
  run = dw_store_ensure_run (store, name, "verl", "/runs/a&b<c>", &error);
  tag = dw_store_ensure_tag (store, run, "rollout_corr/k3_kl", NULL, &error);
  g_assert_true (dw_store_commit (store, &error));
  g_assert_no_error (error);
  put_steps (store, run, tag, 1, 30, FALSE);

  window = dw_window_new (NULL, store, FALSE);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 20000));
  row = DW_RUN_ROW (gtk_widget_get_first_child (GTK_WIDGET (dw_window_get_run_list (window))));
  g_assert_cmpstr (dw_run_row_get_state_text (row), ==, "live");
  g_assert_null (dw_window_get_verdict (window));

  put_steps (store, run, tag, 31, 33, TRUE);
  dw_window_refresh (window);
  dw_ui_test_iterate_ms (100);
  /* the core's rule (dw_health_shown_status), the same `driftwatch-cli runs` applies */
  g_assert_cmpstr (dw_run_row_get_state_text (row), ==, "collapsing");
  {
    g_autoptr (GHashTable) cli = cli_statuses (db);
    g_assert_cmpstr (g_hash_table_lookup (cli, name), ==, "collapsing");
  }
  g_assert_nonnull (dw_window_get_verdict (window));
  g_assert_true (g_str_has_prefix (dw_window_get_verdict (window), "Collapsed at step 31: "));
  toasts = dw_window_get_toasts (window);
  for (guint i = 0; i < toasts->len; i++)
    toasted |= g_str_has_prefix (g_ptr_array_index (toasts, i), "ppo & <grpo> run: ")
               && strstr (g_ptr_array_index (toasts, i), "at step 31") != NULL;
  g_assert_true (toasted);
  /* the health row's subtitle holds the name as written (a markup parse would have failed on
   * "<grpo>" with a warning, fatal here) */
  dw_window_set_view (window, "health");
  dw_ui_test_iterate_ms (200);
  {
    GtkWidget *panel = dw_window_get_health_panel (window);

    g_assert_cmpuint (dw_health_panel_get_n_events (DW_HEALTH_PANEL (panel)), >=, 1);
    g_assert_true (has_label_with (panel, name));
  }
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

static void
collect_charts (GtkWidget *w, GPtrArray *out)
{
  if (DW_IS_CHART_CARD (w) && gtk_widget_get_mapped (w))
    g_ptr_array_add (out, dw_chart_card_get_chart (DW_CHART_CARD (w)));
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    collect_charts (c, out);
}

/* The read-out popover's rectangle in the window's coordinates. */
static void
readout_rect (GtkWidget *readout, GtkWidget *window, graphene_rect_t *r)
{
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (readout));
  double rx, ry, wx, wy;

  gtk_native_get_surface_transform (GTK_NATIVE (readout), &rx, &ry);
  gtk_native_get_surface_transform (GTK_NATIVE (window), &wx, &wy);
  graphene_rect_init (r, gdk_popup_get_position_x (GDK_POPUP (surface)) + rx - wx,
                      gdk_popup_get_position_y (GDK_POPUP (surface)) + ry - wy,
                      gtk_widget_get_width (readout), gtk_widget_get_height (readout));
}

/* Hovers the four edges and the middle of every card on screen (at the top and at the bottom
 * of the page) with 1 to 5 runs overlaid: the read-out, one row per run, is always whole inside
 * the window. */
static void
test_readout_inside (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = g_build_filename (dir, "readout.db", NULL);
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  gint64 ids[5];
  DwWindow *window;
  guint n_checked = 0;

  for (guint i = 0; i < 5; i++)
    {
      g_autofree char *name = g_strdup_printf ("run-%u-with-a-long-name", i + 1);
      ids[i] = ingest_demo_steps (store, name, i % 2 ? DW_DEMO_COLLAPSE : DW_DEMO_HEALTHY, 40);
    }
  window = dw_window_new (NULL, store, FALSE);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  /* the real pointer off the window: its motion would move the cursor the test sets */
  dw_ui_test_pointer_move (GTK_WIDGET (window), 1500, 1100);
  for (guint k = 1; k <= 5; k++)
    {
      GtkWidget *monitor = dw_window_get_monitor_view (window);
      GtkScrolledWindow *scroller = NULL;

      dw_window_select_runs (window, ids, k);
      g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
      for (GtkWidget *c = gtk_widget_get_first_child (monitor); c && !scroller;
           c = gtk_widget_get_first_child (c))
        for (GtkWidget *d = c; d && !scroller; d = gtk_widget_get_next_sibling (d))
          if (GTK_IS_SCROLLED_WINDOW (d))
            scroller = GTK_SCROLLED_WINDOW (d);
      for (guint page = 0; page < 2; page++)
        {
          g_autoptr (GPtrArray) charts = g_ptr_array_new ();

          if (scroller != NULL)
            {
              GtkAdjustment *v = gtk_scrolled_window_get_vadjustment (scroller);
              gtk_adjustment_set_value (v, page ? gtk_adjustment_get_upper (v) : 0);
              dw_ui_test_iterate_ms (150);
            }
          collect_charts (monitor, charts);
          for (guint i = 0; i < charts->len; i++)
            {
              DwChart *chart = g_ptr_array_index (charts, i);
              GtkWidget *readout = dw_chart_get_readout (chart);
              int w = gtk_widget_get_width (GTK_WIDGET (chart));
              int h = gtk_widget_get_height (GTK_WIDGET (chart));
              const double points[][2]
                = { { 0.5, 0.5 }, { 0.02, 0.5 }, { 0.98, 0.5 }, { 0.5, 0.05 }, { 0.5, 0.95 } };
              graphene_rect_t bounds;

              /* on screen (the window's visible part) only */
              if (!gtk_widget_compute_bounds (GTK_WIDGET (chart), GTK_WIDGET (window), &bounds)
                  || bounds.origin.y < 0
                  || bounds.origin.y + bounds.size.height
                       > gtk_widget_get_height (GTK_WIDGET (window)))
                continue;
              if (dw_chart_get_n_series (chart) == 0)
                continue;
              for (guint p = 0; p < G_N_ELEMENTS (points); p++)
                {
                  graphene_rect_t r;
                  g_autofree char *text = NULL;

                  dw_chart_hover (chart, points[p][0] * w, points[p][1] * h);
                  dw_ui_test_iterate_ms (25);
                  if (!gtk_widget_get_visible (readout))
                    continue; /* nothing under the cursor (before the first step) */
                  readout_rect (readout, GTK_WIDGET (window), &r);
                  text = dw_chart_readout_dup_text (DW_CHART_READOUT (readout));
                  if (r.origin.x < 0 || r.origin.y < 0
                      || r.origin.x + r.size.width > gtk_widget_get_width (GTK_WIDGET (window))
                      || r.origin.y + r.size.height > gtk_widget_get_height (GTK_WIDGET (window)))
                    g_error ("%u runs, %s at (%g, %g): read-out %gx%g+%g+%g outside the window", k,
                             dw_chart_get_title (chart), points[p][0], points[p][1], r.size.width,
                             r.size.height, r.origin.x, r.origin.y);
                  /* in the middle of the run: a row for every overlaid run (all log it) */
                  if (p == 0)
                    {
                      g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
                      guint n_rows = 0;

                      for (guint l = 0; lines[l]; l++)
                        n_rows += strchr (lines[l], '\t') != NULL;
                      g_assert_cmpuint (n_rows, >=, k);
                    }
                  n_checked++;
                }
              dw_chart_leave (chart);
              dw_ui_test_iterate_ms (20);
              g_assert_false (gtk_widget_get_visible (readout));
            }
        }
    }
  g_test_message ("%u read-outs checked", n_checked);
  g_assert_cmpuint (n_checked, >, 100);
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

static guint
n_selected (DwWindow *window)
{
  guint n = 0;

  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (dw_window_get_run_list (window)));
       c != NULL; c = gtk_widget_get_next_sibling (c))
    n += gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (c));
  return n;
}

/* With the real pointer and keyboard: a drag zooms every chart (zoom synced) and shows the
 * "Zoomed · Reset" chip; Escape typed in the tag entry resets them all; Tab through the run list
 * keeps a two-run overlay. */
static void
test_zoom_escape_tab (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = g_build_filename (dir, "zoom.db", NULL);
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  g_autoptr (GPtrArray) charts = g_ptr_array_new ();
  gint64 ids[2];
  DwWindow *window;
  GtkWidget *monitor, *chip, *entry, *row;
  DwChart *chart;
  guint n_zoomed = 0;

  ids[0] = ingest_demo_steps (store, "zoom-a", DW_DEMO_HEALTHY, 60);
  ids[1] = ingest_demo_steps (store, "zoom-b", DW_DEMO_COLLAPSE, 60);
  window = dw_window_new (NULL, store, FALSE);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  if (!dw_ui_test_xtest_available (GTK_WIDGET (window)))
    {
      g_test_skip ("no XTEST on this display");
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
  dw_window_select_runs (window, ids, 2);
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  g_assert_cmpuint (n_selected (window), ==, 2);
  monitor = dw_window_get_monitor_view (window);
  chip = dw_ui_test_find_named (monitor, "zoom-chip");
  g_assert_false (gtk_widget_get_visible (chip));
  collect_charts (monitor, charts);
  g_assert_cmpuint (charts->len, >=, 4);
  chart = g_ptr_array_index (charts, 0);

  /* drag across the middle of the first chart */
  g_assert_true (dw_ui_test_drag (GTK_WIDGET (chart),
                                  gtk_widget_get_width (GTK_WIDGET (chart)) * 0.35,
                                  gtk_widget_get_height (GTK_WIDGET (chart)) * 0.5,
                                  gtk_widget_get_width (GTK_WIDGET (chart)) * 0.7,
                                  gtk_widget_get_height (GTK_WIDGET (chart)) * 0.5));
  for (guint i = 0; i < charts->len; i++)
    n_zoomed += dw_chart_is_zoomed (g_ptr_array_index (charts, i));
  g_assert_cmpuint (n_zoomed, ==, charts->len);
  g_assert_true (gtk_widget_get_visible (chip));

  /* Escape from the tag entry (clicked into, so it has the keyboard focus) */
  entry = dw_ui_test_find_named (monitor, "tag-entry");
  g_assert_nonnull (entry);
  g_assert_true (dw_ui_test_click (entry, 40, gtk_widget_get_height (entry) / 2.0));
  g_assert_true (gtk_widget_is_ancestor (gtk_root_get_focus (GTK_ROOT (window)), entry));
  g_assert_true (dw_ui_test_key (entry, GDK_KEY_Escape, FALSE));
  for (guint i = 0; i < charts->len; i++)
    g_assert_false (dw_chart_is_zoomed (g_ptr_array_index (charts, i)));
  g_assert_false (gtk_widget_get_visible (chip));

  /* Tab from a selected run row onwards: the overlay of both runs stays */
  row = gtk_widget_get_first_child (GTK_WIDGET (dw_window_get_run_list (window)));
  gtk_widget_grab_focus (row);
  for (guint i = 0; i < 3; i++)
    {
      g_assert_true (dw_ui_test_key (row, GDK_KEY_Tab, FALSE));
      g_assert_cmpuint (n_selected (window), ==, 2);
    }
  g_assert_cmpuint (dw_monitor_view_get_n_runs (DW_MONITOR_VIEW (monitor)), ==, 2);

  /* the export file name: the run, how many more are overlaid, the card */
  {
    GtkWidget *card = gtk_widget_get_ancestor (GTK_WIDGET (chart), DW_TYPE_CHART_CARD);
    g_autofree char *name = dw_chart_card_dup_export_name (DW_CHART_CARD (card), "png");
    g_autofree char *title = g_strdup (dw_chart_card_get_title (DW_CHART_CARD (card)));

    g_test_message ("export name %s (%s)", name, title);
    g_assert_true (g_str_has_prefix (name, "zoom-a+1-") || g_str_has_prefix (name, "zoom-b+1-"));
    g_assert_true (g_str_has_suffix (name, ".png"));
    g_assert_null (strpbrk (name, " /\\:()"));
  }
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

/* The label of @text (as shown, without the mnemonic underline) under @w, or NULL. */
static GtkWidget *
find_label (GtkWidget *w, const char *text)
{
  if (GTK_IS_LABEL (w) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (w)), text) == 0
      && gtk_widget_get_mapped (w))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *r = find_label (c, text);
      if (r)
        return r;
    }
  return NULL;
}

static GtkWidget *
row_of (DwWindow *window, gint64 run_id)
{
  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (dw_window_get_run_list (window)));
       c != NULL; c = gtk_widget_get_next_sibling (c))
    if (DW_IS_RUN_ROW (c) && dw_run_row_get_run_id (DW_RUN_ROW (c)) == run_id)
      return c;
  return NULL;
}

static gboolean
row_shown (GtkWidget *row)
{
  return row != NULL && gtk_widget_get_visible (row) && gtk_widget_get_child_visible (row);
}

/* Clicks the middle of @widget with the real pointer. */
static void
click_middle (GtkWidget *widget)
{
  g_assert_nonnull (widget);
  g_assert_true (dw_ui_test_click (widget, gtk_widget_get_width (widget) / 2.0,
                                   gtk_widget_get_height (widget) / 2.0));
  dw_ui_test_iterate_ms (200);
}

/* Opens the row menu of @run_id and clicks @item in it, with the real pointer. */
static void
run_menu_click (DwWindow *window, gint64 run_id, const char *item)
{
  GtkWidget *menu = dw_ui_test_find_named (row_of (window, run_id), "run-menu");

  click_middle (menu);
  click_middle (find_label (menu, item));
}

/* The sidebar as a runs table, with the real pointer and keyboard (issue 13 item 5): the eye
 * button takes a run off the charts and back without touching the selection; arrow keys in
 * the list move the focus and keep the selection; "Hide Run" leaves it out of the list (and the
 * charts) until "Show Hidden Runs"; "Remove Run…" asks, then deletes the run from the store. */
static void
test_runs_table (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = g_build_filename (dir, "table.db", NULL);
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  g_autoptr (DwRunInfo) gone = NULL;
  gint64 ids[3];
  DwWindow *window;
  DwMonitorView *monitor;
  GtkWidget *eye, *dialog, *remove;

  ids[0] = ingest_demo_steps (store, "table-a", DW_DEMO_HEALTHY, 40);
  ids[1] = ingest_demo_steps (store, "table-b", DW_DEMO_COLLAPSE, 40);
  ids[2] = ingest_demo_steps (store, "table-c", DW_DEMO_HEALTHY, 40);
  window = dw_window_new (NULL, store, FALSE);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  if (!dw_ui_test_xtest_available (GTK_WIDGET (window)))
    {
      g_test_skip ("no XTEST on this display");
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
  monitor = DW_MONITOR_VIEW (dw_window_get_monitor_view (window));
  dw_window_select_runs (window, ids, 2);
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  g_assert_cmpuint (dw_monitor_view_get_n_runs (monitor), ==, 2);

  /* the eye button of table-b: off the charts, still selected; and back */
  eye = dw_ui_test_find_named (row_of (window, ids[1]), "run-visible");
  click_middle (eye);
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  g_assert_false (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (eye)));
  g_assert_cmpuint (n_selected (window), ==, 2);
  g_assert_cmpuint (dw_monitor_view_get_n_runs (monitor), ==, 1);
  click_middle (eye);
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  g_assert_cmpuint (n_selected (window), ==, 2);
  g_assert_cmpuint (dw_monitor_view_get_n_runs (monitor), ==, 2);

  /* arrow keys move the keyboard focus through the list, never the selection */
  gtk_widget_grab_focus (row_of (window, ids[2]));
  g_assert_true (dw_ui_test_key (row_of (window, ids[2]), GDK_KEY_Down, FALSE));
  g_assert_true (dw_ui_test_key (row_of (window, ids[2]), GDK_KEY_Down, FALSE));
  g_assert_true (dw_ui_test_key (row_of (window, ids[2]), GDK_KEY_Up, FALSE));
  g_assert_cmpuint (n_selected (window), ==, 2);
  g_assert_false (gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (row_of (window, ids[2]))));

  /* Hide Run: out of the list and the charts until Show Hidden Runs */
  run_menu_click (window, ids[0], "Hide Run");
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  g_assert_false (row_shown (row_of (window, ids[0])));
  g_assert_cmpuint (n_selected (window), ==, 1);
  g_assert_cmpuint (dw_monitor_view_get_n_runs (monitor), ==, 1);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-hidden-runs", NULL);
  dw_ui_test_iterate_ms (100);
  g_assert_true (row_shown (row_of (window, ids[0])));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-hidden-runs", NULL);
  dw_ui_test_iterate_ms (100);
  g_assert_false (row_shown (row_of (window, ids[0])));

  /* Remove Run…: Cancel keeps it; Remove deletes it from the store and the list */
  run_menu_click (window, ids[2], "Remove Run…");
  dialog = GTK_WIDGET (dw_ui_test_find_toplevel (ADW_TYPE_MESSAGE_DIALOG));
  g_assert_nonnull (dialog);
  click_middle (find_label (dialog, "Cancel"));
  g_assert_nonnull (row_of (window, ids[2]));
  {
    g_autoptr (GPtrArray) tags = dw_store_list_tags (store, ids[2], NULL);
    g_autoptr (GArray) steps = dw_store_list_batch_steps (store, ids[2], NULL);

    g_assert_cmpuint (tags->len, >, 0);
    g_assert_cmpuint (steps->len, >, 0);
  }
  run_menu_click (window, ids[2], "Remove Run…");
  dialog = GTK_WIDGET (dw_ui_test_find_toplevel (ADW_TYPE_MESSAGE_DIALOG));
  g_assert_nonnull (dialog);
  remove = find_label (dialog, "Remove");
  click_middle (remove);
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  g_assert_null (row_of (window, ids[2]));
  gone = dw_store_get_run (store, ids[2], &error);
  g_assert_null (gone);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
  {
    /* everything stored for it went with it (the schema's cascade) */
    g_autoptr (GPtrArray) tags = dw_store_list_tags (store, ids[2], NULL);
    g_autoptr (GArray) steps = dw_store_list_batch_steps (store, ids[2], NULL);

    g_assert_cmpuint (tags->len, ==, 0);
    g_assert_cmpuint (steps->len, ==, 0);
  }
  g_assert_nonnull (row_of (window, ids[1]));
  g_assert_cmpstr (
    g_ptr_array_index (dw_window_get_toasts (window), dw_window_get_toasts (window)->len - 1), ==,
    "Removed “table-c”");
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

/* A file that is not a Driftwatch store (a path with & and < in it): the application shows the
 * error page — rendered to a PNG by --screenshot — says why on stderr, exits with status 1, and
 * leaves the file as it was. */
static void
test_store_error_page (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *bad = g_build_filename (dir, "not a store & <x>.db", NULL);
  g_autofree char *png = g_build_filename (dir, "error-page.png", NULL);
  g_autofree char *err = NULL, *after = NULL;
  const char *junk = "this is a text file, not SQLite\n";
  const char *argv[] = { DW_APP_PATH, "--db", bad, "--screenshot", png, NULL };
  int status;
  GStatBuf st;
  GtkWidget *window;
  g_autoptr (DwStore) store = NULL;

  g_assert_true (g_file_set_contents (bad, junk, -1, &error));
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, &err, &status, &error));
  g_assert_no_error (error);
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 1);
  g_assert_nonnull (strstr (err, "not a Driftwatch store"));
  g_assert_cmpint (g_stat (png, &st), ==, 0);
  g_assert_cmpint (st.st_size, >, 10000); /* a rendered page, not an empty image */
  g_assert_true (g_file_get_contents (bad, &after, NULL, &error));
  g_assert_cmpstr (after, ==, junk);

  /* the page's text, as written (the description is markup to libadwaita) */
  store = dw_store_open (bad, &error);
  g_assert_null (store);
  window = dw_error_window_new (NULL, bad, error);
  gtk_window_present (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (100);
  g_assert_cmpstr (dw_error_window_get_title (window), ==, "Cannot Open the Store");
  g_assert_nonnull (strstr (dw_error_window_get_description (window), bad));
  g_assert_true (has_label_with (window, "not a store & <x>.db"));
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

static gint64
selected_id (DwWindow *window)
{
  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (dw_window_get_run_list (window)));
       c != NULL; c = gtk_widget_get_next_sibling (c))
    if (gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (c)))
      return dw_run_row_get_run_id (DW_RUN_ROW (c));
  return 0;
}

/* The run shown last is remembered with its store: another store (whose run ids overlap) opens
 * on its newest run, the first store again on the remembered one. */
static void
test_last_run_per_store (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db_a = g_build_filename (dir, "last-a.db", NULL);
  g_autofree char *db_b = g_build_filename (dir, "last-b.db", NULL);
  g_autoptr (DwStore) a = dw_store_open (db_a, &error);
  g_autoptr (DwStore) b = dw_store_open (db_b, &error);
  gint64 a1, b3 = 0;
  DwWindow *window;

  a1 = ingest_demo_steps (a, "a-first", DW_DEMO_HEALTHY, 20);
  ingest_demo_steps (a, "a-second", DW_DEMO_HEALTHY, 20);
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *name = g_strdup_printf ("b-%u", i);
      b3 = ingest_demo_steps (b, name, DW_DEMO_HEALTHY, 20);
    }
  /* the sidebar filter: by name, any case; the overlay is kept */
  window = dw_window_new (NULL, b, FALSE);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 30000));
  {
    GtkWidget *filter = dw_ui_test_find_named (GTK_WIDGET (window), "run-filter");
    guint n_visible = 0;

    gtk_editable_set_text (GTK_EDITABLE (filter), "B-1");
    dw_ui_test_iterate_ms (400); /* search-changed is delayed */
    for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (dw_window_get_run_list (window)));
         c != NULL; c = gtk_widget_get_next_sibling (c))
      if (gtk_widget_get_visible (c) && gtk_widget_get_child_visible (c))
        {
          n_visible++;
          g_assert_cmpstr (dw_run_row_get_info (DW_RUN_ROW (c))->name, ==, "b-1");
        }
    g_assert_cmpuint (n_visible, ==, 1);
    g_assert_cmpuint (n_selected (window), ==, 1); /* b-2, the newest, still shown */
  }
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);

  /* store A, its older run chosen */
  window = dw_window_new (NULL, a, TRUE);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 30000));
  dw_window_select_runs (window, &a1, 1);
  g_assert_true (dw_ui_test_wait_window_ready (window, 30000));
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
  /* store B: its run with A's id is not chosen for it; its newest is */
  window = dw_window_new (NULL, b, TRUE);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 30000));
  g_assert_cmpint (selected_id (window), ==, b3);
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
  /* A again, its older run chosen, then A once more: that run is selected again */
  window = dw_window_new (NULL, a, TRUE);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 30000));
  dw_window_select_runs (window, &a1, 1);
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
  window = dw_window_new (NULL, a, TRUE);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 30000));
  g_assert_cmpint (selected_id (window), ==, a1);
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int ret;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  dir = g_dir_make_tmp ("dw-test-verdict-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/Dw/Verdict/badge-equals-cli", test_badge_equals_cli);
  g_test_add_func ("/Dw/Verdict/live-collapse", test_live_collapse);
  g_test_add_func ("/Dw/Readout/inside-window", test_readout_inside);
  g_test_add_func ("/Dw/Monitor/zoom-escape-tab", test_zoom_escape_tab);
  g_test_add_func ("/Dw/App/store-error-page", test_store_error_page);
  g_test_add_func ("/Dw/Window/last-run-per-store", test_last_run_per_store);
  g_test_add_func ("/Dw/Window/runs-table", test_runs_table);
  ret = g_test_run ();
  dw_ui_test_remove_tree (dir);
  g_free (dir);
  return ret;
}
