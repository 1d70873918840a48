/* test-drill.c — the drill-down reaches a token: from a step of the collapse demo to its ranked
 * sequences, one sequence's tokens and the token ids behind catastrophic ratios across the run,
 * each compared with the core's answer and with `driftwatch-cli tokens`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Fixture: the collapse demo (dw_demo_write, 80 steps: collapse at step 56), whose batches carry
 * token ids as the verl hook's and slime's dumps do, ingested into a fresh store, with a
 * tokenizer.json beside its logs naming the few ids the collapse concentrates on (end-of-text,
 * newline, '.', ',', '0', as Qwen2's byte-level vocabulary has them). Input is real (XTEST): the
 * Health row's Tokens… button, the statistic drop-down, the top sequence, the "Across the Run"
 * switcher. DW_TEST_SCREENSHOT_DIR, when set, receives drill-light.png and drill-dark.png.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "dw-batch-reader.h"
#include "dw-batch-tokens.h"
#include "dw-chart-card.h"
#include "dw-chart.h"
#include "dw-demo.h"
#include "dw-drill-actions.h"
#include "dw-drill-item.h"
#include "dw-drill-view.h"
#include "dw-health-panel.h"
#include "dw-ingester.h"
#include "dw-monitor-view.h"
#include "dw-screenshot.h"
#include "dw-store-writer.h"
#include "dw-tokenizer.h"
#include "dw-ui-test-util.h"
#include "dw-window.h"

#define N_STEPS 80

static char *dir;

/* The ids the demo's catastrophic tokens come from, named as in Qwen2's tokenizer.json. */
static const char tokenizer_json[]
  = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"Ċ\": 198, \".\": 13, \",\": 11, \"0\": 15}},"
    " \"added_tokens\": [{\"id\": 151643, \"content\": \"<|endoftext|>\", \"special\": true}],"
    " \"decoder\": {\"type\": \"ByteLevel\"}}";

static gboolean
wait_drill (DwDrillView *view, guint timeout_ms)
{
  gint64 until = g_get_monotonic_time () + (gint64)timeout_ms * 1000;

  while (g_get_monotonic_time () < until)
    {
      g_main_context_iteration (NULL, FALSE);
      if (!dw_drill_view_is_loading (view))
        {
          dw_ui_test_iterate_ms (150);
          return !dw_drill_view_is_loading (view);
        }
      g_usleep (1000);
    }
  return FALSE;
}

/* The first mapped widget under @root that is a @type and, when @label is given, a GtkLabel
 * (or a button) showing @label. */
static GtkWidget *
find_widget (GtkWidget *root, GType type, const char *label)
{
  if (gtk_widget_get_mapped (root) && G_TYPE_CHECK_INSTANCE_TYPE (root, type))
    {
      const char *text = GTK_IS_LABEL (root)    ? gtk_label_get_text (GTK_LABEL (root))
                         : GTK_IS_BUTTON (root) ? gtk_button_get_label (GTK_BUTTON (root))
                                                : NULL;
      if (label == NULL || g_strcmp0 (text, label) == 0)
        return root;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_widget (c, type, label);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The topmost mapped cell label of a column view's rows (not of its header). */
static void
find_top_cell (GtkWidget *root, GtkWidget *view, GtkWidget **best, double *best_y)
{
  if (GTK_IS_LABEL (root) && gtk_widget_get_mapped (root)
      && gtk_widget_get_ancestor (root, GTK_TYPE_BUTTON) == NULL
      && gtk_widget_get_ancestor (root, g_type_from_name ("GtkColumnViewTitle")) == NULL)
    {
      graphene_point_t at;
      if (gtk_widget_compute_point (root, view, &GRAPHENE_POINT_INIT (0, 0), &at) && at.y < *best_y)
        *best = root, *best_y = at.y;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    find_top_cell (c, view, best, best_y);
}

static gboolean
click_center (GtkWidget *widget)
{
  return dw_ui_test_click (widget, gtk_widget_get_width (widget) / 2.0,
                           gtk_widget_get_height (widget) / 2.0);
}

static gint64
ingest_demo (DwStore *store, char **run_dir)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwIngester) ing = dw_ingester_new (store);
  g_autofree char *tokenizer = NULL;
  DwIngestReport report;
  gint64 id;

  *run_dir = g_build_filename (dir, "demo-collapse", NULL);
  g_assert_true (dw_demo_write (*run_dir, DW_DEMO_COLLAPSE, N_STEPS, 1, &error));
  tokenizer = g_build_filename (*run_dir, "tokenizer.json", NULL);
  g_assert_true (g_file_set_contents (tokenizer, tokenizer_json, -1, &error));
  dw_ingest_report_init (&report);
  g_assert_true (dw_ingester_ingest_path (ing, *run_dir, &report, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (report.run_ids->len, ==, 1);
  id = g_array_index (report.run_ids, gint64, 0);
  dw_ingest_report_clear (&report);
  return id;
}

static DwDrillView *
drill_view (DwWindow *window)
{
  GtkWindow *drill = dw_drill_get_window (GTK_APPLICATION_WINDOW (window));

  g_assert_nonnull (drill);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (drill)));
  return DW_DRILL_VIEW (adw_window_get_content (ADW_WINDOW (drill)));
}

/* Waits (at most 5 s) until @widget stays at the same place in @window for 300 ms: the verdict
 * line slides in over the pages, moving everything below it. */
static gboolean
wait_still (GtkWidget *widget, GtkWidget *window)
{
  graphene_point_t before = GRAPHENE_POINT_INIT (-1, -1), now;

  for (int i = 0; i < 17; i++)
    {
      if (!gtk_widget_compute_point (widget, window, &GRAPHENE_POINT_INIT (0, 0), &now))
        return FALSE;
      if (graphene_point_equal (&before, &now))
        return TRUE;
      before = now;
      dw_ui_test_iterate_ms (300);
    }
  return FALSE;
}

/* The Health page's "Tokens…" button of the first finding, clicked: the drill-down opens on that
 * run and the first step the rule fired on. */
static void
check_health_button (DwWindow *window, gint64 run_id)
{
  GtkWidget *panel = dw_window_get_health_panel (window);
  GtkWidget *button;
  GVariant *target;
  gint64 target_run, target_step;
  DwDrillView *view;

  dw_window_set_view (window, "health");
  dw_ui_test_iterate_ms (300);
  button = find_widget (panel, GTK_TYPE_BUTTON, "_Tokens…");
  g_assert_nonnull (button);
  g_assert_true (gtk_widget_is_sensitive (button)); /* the window has win.show-tokens */
  target = gtk_actionable_get_action_target_value (GTK_ACTIONABLE (button));
  g_variant_get (target, "(xx)", &target_run, &target_step);
  g_assert_cmpint (target_run, ==, run_id);
  g_assert_true (wait_still (button, GTK_WIDGET (window)));
  g_assert_true (click_center (button));
  dw_ui_test_iterate_ms (200);
  view = drill_view (window);
  g_assert_true (wait_drill (view, 20000));
  g_assert_cmpint (dw_drill_view_get_run_id (view), ==, run_id);
  g_assert_cmpint (dw_drill_view_get_step (view), ==, target_step);
}

/* The drill-down closed (it hides), the Monitor page shown, and the K3 KL card's chart clicked
 * with the secondary button at @at: the drill-down comes back on the step it was asked for. */
static gint64
right_click_step (DwWindow *window, gint64 at)
{
  DwMonitorView *monitor = DW_MONITOR_VIEW (dw_window_get_monitor_view (window));
  GtkWindow *drill = dw_drill_get_window (GTK_APPLICATION_WINDOW (window));
  DwChartCard *card;
  GtkWidget *chart;
  DwDrillView *view;

  gtk_window_close (drill);
  dw_ui_test_iterate_ms (200);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (drill)));
  dw_window_set_view (window, "monitor");
  dw_ui_test_iterate_ms (300);
  card = dw_monitor_view_find_card (monitor, "k3_kl");
  g_assert_nonnull (card);
  chart = GTK_WIDGET (dw_chart_card_get_chart (card));
  g_assert_true (wait_still (chart, GTK_WIDGET (window)));
  g_assert_true (dw_ui_test_click_button (chart, dw_chart_data_to_widget_x (DW_CHART (chart), at),
                                          gtk_widget_get_height (chart) / 2.0, 3));
  dw_ui_test_iterate_ms (200);
  view = drill_view (window);
  g_assert_true (wait_drill (view, 20000));
  return dw_drill_view_get_step (view);
}

/* The ranking equals the core's, item by item (the same function on the same batch). */
static void
check_ranking (DwDrillView *view, const DwBatch *batch, DwSeqStat by)
{
  g_autoptr (GArray) ranked = dw_batch_tokens_rank (batch, by);
  GListModel *model = dw_drill_view_get_sequences (view);

  g_assert_cmpuint (dw_drill_view_get_statistic (view), ==, by);
  g_assert_cmpuint (g_list_model_get_n_items (model), ==, ranked->len);
  for (guint i = 0; i < ranked->len; i++)
    {
      g_autoptr (DwDrillItem) item = g_list_model_get_item (model, i);
      const DwSeqRanked *s = &g_array_index (ranked, DwSeqRanked, i);
      g_assert_cmpuint (dw_drill_item_get_row (item), ==, s->row);
      g_assert_cmpfloat (dw_drill_item_get_stat (item, by), ==, s->stats[by]);
      if (i > 0)
        {
          g_autoptr (DwDrillItem) above = g_list_model_get_item (model, i - 1);
          g_assert_cmpfloat (dw_drill_item_get_stat (above, by), >=,
                             dw_drill_item_get_stat (item, by));
        }
    }
}

/* The drop-down opened with the pointer and "k3 mean" picked from its list. */
static void
choose_statistic (DwDrillView *view, const char *title)
{
  GtkWidget *dropdown = find_widget (GTK_WIDGET (view), GTK_TYPE_DROP_DOWN, NULL);
  GtkWidget *popover, *item;

  g_assert_nonnull (dropdown);
  g_assert_true (click_center (dropdown));
  dw_ui_test_iterate_ms (400);
  /* the drop-down's button shows the current choice: the row to click is in its popover */
  popover = find_widget (dropdown, GTK_TYPE_POPOVER, NULL);
  g_assert_nonnull (popover);
  item = find_widget (popover, GTK_TYPE_LABEL, title);
  g_assert_nonnull (item);
  g_assert_true (click_center (item));
  dw_ui_test_iterate_ms (200);
}

/* The tokens of the top sequence: every cell's values are the core's; the worst token's cell
 * is there with its tooltip, coloured as catastrophic; known ids show their text. */
static void
check_tokens (DwDrillView *view, const DwBatch *batch, guint row)
{
  g_autoptr (GArray) tokens = dw_batch_tokens_sequence (batch, row);
  GListModel *model = dw_drill_view_get_tokens (view);
  GtkWidget *flow = find_widget (GTK_WIDGET (view), GTK_TYPE_FLOW_BOX, NULL);
  guint worst = 0, n_children = 0, n_text = 0;
  g_autoptr (DwTokenizer) tokenizer = NULL;

  g_assert_nonnull (flow);
  g_assert_cmpuint (g_list_model_get_n_items (model), ==, tokens->len);
  for (guint i = 0; i < tokens->len; i++)
    {
      g_autoptr (DwDrillItem) item = g_list_model_get_item (model, i);
      const DwTokenRow *core = &g_array_index (tokens, DwTokenRow, i);
      const DwTokenRow *shown = dw_drill_item_get_token (item);
      g_assert_cmpint (shown->token_id, ==, core->token_id);
      g_assert_cmpfloat (shown->log_ratio, ==, core->log_ratio);
      g_assert_cmpfloat (shown->mask, ==, core->mask);
      if (core->mask != 0.0
          && fabs (core->log_ratio) > fabs (g_array_index (tokens, DwTokenRow, worst).log_ratio))
        worst = i;
      n_text += dw_drill_item_get_text (item) != NULL;
    }
  g_assert_cmpfloat (fabs (g_array_index (tokens, DwTokenRow, worst).log_ratio), >, 2.0);
  g_assert_cmpuint (n_text, >, 0); /* the run folder's tokenizer.json was found */
  for (GtkWidget *c = gtk_widget_get_first_child (flow); c != NULL;
       c = gtk_widget_get_next_sibling (c), n_children++)
    if (n_children == worst)
      {
        const DwTokenRow *t = &g_array_index (tokens, DwTokenRow, worst);
        GtkWidget *cell = gtk_flow_box_child_get_child (GTK_FLOW_BOX_CHILD (c));
        g_autofree char *value
          = g_strdup_printf ("log-ratio %.6g · ratio %.6g", t->log_ratio, exp (t->log_ratio));
        g_autofree char *id = g_strdup_printf ("token %" G_GINT64_FORMAT, t->token_id);
        const char *tip = gtk_widget_get_tooltip_text (cell);
        g_assert_nonnull (strstr (tip, value));
        g_assert_nonnull (strstr (tip, id));
        g_assert_true (gtk_widget_has_css_class (cell, t->log_ratio > 0 ? "dw-lr-p5" : "dw-lr-n5"));
        g_assert_true (gtk_widget_get_mapped (cell));
      }
  g_assert_cmpuint (n_children, ==, tokens->len);
  /* every cell reads as the core's tokenizer shows its id ("Ċ" → "\\n"), or "#id" when unknown */
  tokenizer
    = dw_tokenizer_load_from_data ("tokenizer.json", tokenizer_json, strlen (tokenizer_json), NULL);
  g_assert_nonnull (tokenizer);
  {
    g_autofree char *newline = dw_tokenizer_display (tokenizer, 198);
    g_assert_cmpstr (newline, ==, "\\n");
  }
  n_children = 0;
  for (GtkWidget *c = gtk_widget_get_first_child (flow); c != NULL;
       c = gtk_widget_get_next_sibling (c), n_children++)
    {
      gint64 id = g_array_index (tokens, DwTokenRow, n_children).token_id;
      g_autofree char *text = dw_tokenizer_display (tokenizer, id);
      g_autofree char *expected
        = text ? g_strdup (text) : g_strdup_printf ("#%" G_GINT64_FORMAT, id);
      g_assert_cmpstr (
        gtk_label_get_text (GTK_LABEL (gtk_flow_box_child_get_child (GTK_FLOW_BOX_CHILD (c)))), ==,
        expected);
    }
}

/* `driftwatch-cli tokens --run R --top N [--threshold T] --format json`, as (id, count) pairs. */
static JsonArray *
cli_top (JsonParser *parser, const char *db, gint64 run_id, guint top, double threshold)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *run = g_strdup_printf ("%" G_GINT64_FORMAT, run_id);
  g_autofree char *n = g_strdup_printf ("%u", top);
  char threshold_text[G_ASCII_DTOSTR_BUF_SIZE];
  const char *argv[] = { g_getenv ("DW_CLI"),
                         "tokens",
                         "--db",
                         db,
                         "--run",
                         run,
                         "--top",
                         n,
                         "--threshold",
                         g_ascii_dtostr (threshold_text, sizeof threshold_text, threshold),
                         "--format",
                         "json",
                         NULL };
  int status = 0;

  g_assert_nonnull (argv[0]);
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                               &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, &error));
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  return json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "top");
}

static void
check_run_page (DwDrillView *view, const char *db, gint64 run_id, double threshold)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  GListModel *model = dw_drill_view_get_run_tokens (view);
  guint n = g_list_model_get_n_items (model);
  JsonArray *top;

  g_assert_cmpuint (n, >, 0);
  top = cli_top (parser, db, run_id, n, threshold);
  g_assert_cmpuint (json_array_get_length (top), ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (DwDrillItem) item = g_list_model_get_item (model, i);
      JsonObject *o = json_array_get_object_element (top, i);
      g_assert_cmpint (dw_drill_item_get_token_id (item), ==,
                       json_object_get_int_member (o, "token_id"));
      g_assert_cmpint (dw_drill_item_get_count (item), ==, json_object_get_int_member (o, "count"));
    }
}

static void
save_screenshot (DwDrillView *view, const char *name)
{
  const char *out_dir = g_getenv ("DW_TEST_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename (out_dir ? out_dir : dir, name, NULL);
  g_autoptr (GError) error = NULL;
  GtkWidget *window = GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (view)));

  dw_ui_test_iterate_ms (300);
  g_assert_true (dw_screenshot_save (window, path, &error));
  g_assert_no_error (error);
  g_test_message ("screenshot: %s", path);
}

static void
test_step_to_token (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = g_build_filename (dir, "drill.db", NULL);
  g_autofree char *run_dir = NULL;
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  gint64 run_id = ingest_demo (store, &run_dir), collapse = dw_demo_collapse_step (N_STEPS);
  DwWindow *window = dw_window_new (NULL, store, FALSE);
  g_autoptr (DwBatch) batch = NULL;
  GtkWidget *top_cell = NULL, *switcher;
  double top_y = G_MAXDOUBLE;
  DwDrillView *view;
  guint top_row;
  gint64 step;

  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));
  if (!dw_ui_test_xtest_available (GTK_WIDGET (window)))
    {
      g_test_skip ("no XTEST on this display");
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
  check_health_button (window, run_id);

  /* A collapse step, by a secondary click on it in the K3 KL card (DwChart::step-activated). */
  step = right_click_step (window, collapse + 2);
  view = drill_view (window);
  g_assert_cmpint (dw_drill_view_get_run_id (view), ==, run_id);
  g_assert_cmpint (step, >=, collapse);
  g_assert_cmpint (step, <=, collapse + 4);
  batch = dw_store_load_batch (store, run_id, step, &error);
  g_assert_no_error (error);
  check_ranking (view, batch, DW_SEQ_STAT_K3_SUM);

  choose_statistic (view, "k3 mean");
  g_assert_true (wait_drill (view, 20000));
  check_ranking (view, batch, DW_SEQ_STAT_K3_MEAN);

  /* the top sequence, clicked */
  find_top_cell (find_widget (GTK_WIDGET (view), GTK_TYPE_COLUMN_VIEW, NULL),
                 find_widget (GTK_WIDGET (view), GTK_TYPE_COLUMN_VIEW, NULL), &top_cell, &top_y);
  g_assert_nonnull (top_cell);
  g_assert_true (click_center (top_cell));
  dw_ui_test_iterate_ms (300);
  {
    g_autoptr (DwDrillItem) top = g_list_model_get_item (dw_drill_view_get_sequences (view), 0);
    top_row = dw_drill_item_get_row (top);
  }
  check_tokens (view, batch, top_row);
  save_screenshot (view, "drill-light.png");

  /* across the run, by the view switcher */
  switcher = find_widget (GTK_WIDGET (view), GTK_TYPE_LABEL, "Across the Run");
  g_assert_nonnull (switcher);
  g_assert_true (click_center (switcher));
  dw_ui_test_iterate_ms (200);
  g_assert_cmpstr (dw_drill_view_get_page (view), ==, "run");
  g_assert_true (wait_drill (view, 60000));
  check_run_page (view, db, run_id, 2.0);
  /* a lower threshold: counted again, as the CLI counts */
  dw_drill_view_set_threshold (view, 1.0);
  g_assert_true (wait_drill (view, 60000));
  check_run_page (view, db, run_id, 1.0);

  adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                      ADW_COLOR_SCHEME_FORCE_DARK);
  save_screenshot (view, "drill-run-dark.png");
  g_assert_true (click_center (find_widget (GTK_WIDGET (view), GTK_TYPE_LABEL, "This Step")));
  dw_ui_test_iterate_ms (200);
  g_assert_cmpstr (dw_drill_view_get_page (view), ==, "step");
  save_screenshot (view, "drill-dark.png");
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (100);
}

/* A run with logged metrics only: the drill-down says so on a status page, and the window
 * stays usable. */
static void
test_no_batches (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = g_build_filename (dir, "metrics-only.db", NULL);
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  DwWindow *window;
  DwDrillView *view;
  GtkWidget *status;
  gint64 run_id, tag;

  g_assert_true (dw_store_begin (store, &error));
  run_id = dw_store_ensure_run (store, "metrics-only", "verl", "/runs/metrics-only", &error);
  tag = dw_store_ensure_tag (store, run_id, "rollout_corr/rollout_is_mean", NULL, &error);
  for (gint64 step = 1; step <= 20; step++)
    g_assert_true (dw_store_put_point (store, run_id, tag, step, 1.7e9 + step, 1.0, &error));
  g_assert_true (dw_store_commit (store, &error));
  g_assert_no_error (error);

  window = dw_window_new (NULL, store, FALSE);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 20000));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-tokens", "(xx)", run_id, (gint64)10);
  view = drill_view (window);
  g_assert_true (wait_drill (view, 20000));
  status = find_widget (GTK_WIDGET (view), ADW_TYPE_STATUS_PAGE, NULL);
  g_assert_nonnull (status);
  g_assert_cmpstr (adw_status_page_get_title (ADW_STATUS_PAGE (status)), ==, "No Per-Token Data");
  g_assert_nonnull (
    strstr (adw_status_page_get_description (ADW_STATUS_PAGE (status)), "metrics-only"));
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (100);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int ret;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  dir = g_dir_make_tmp ("dw-test-drill-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/Dw/Drill/step-to-token", test_step_to_token);
  g_test_add_func ("/Dw/Drill/no-batches", test_no_batches);
  ret = g_test_run ();
  dw_ui_test_remove_tree (dir);
  g_free (dir);
  return ret;
}
