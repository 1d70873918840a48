/* test-tune-view.c — the tune view on a real store: its what-if series equal a full recompute
 * of the run under the config its controls describe, and its exported config reads back the same
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Fixture: the collapse demo run folder (dw_demo_write) ingested into a fresh store. The controls
 * are driven as a user would, through the widgets' entries, adjustments and expander switches
 * (found by widget name); each evaluation is compared with dw_whatif_recompute_run() on the same
 * config. With DW_TUNE_VIEW_PNG=FILE the view is also rendered to FILE (for looking at it).
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dw-chart-card.h"
#include "dw-chart.h"
#include "dw-correction.h"
#include "dw-demo.h"
#include "dw-ingester.h"
#include "dw-tune-length-bias.h"
#include "dw-config-json.h"
#include "dw-recompute.h"
#include "dw-run-config.h"
#include "dw-store-writer.h"
#include "dw-tune-export.h"
#include "dw-tune-view.h"
#include "dw-ui-test-util.h"

#define N_STEPS 12
/* the preset the demo run was trained with (its rollout_rs_threshold is 0.05) */
#define DEFAULT_DEMO_PRESET "decoupled_k3_rs_token_tis"

static char *dir, *db;
static DwStore *store;
static gint64 run_id;

static void
make_store (void)
{
  g_autoptr (GError) error = NULL;
  dir = g_dir_make_tmp ("dw-tune-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *run = g_build_filename (dir, "demo-collapse", NULL);
  g_assert_true (dw_demo_write (run, DW_DEMO_COLLAPSE, N_STEPS, 1, &error));
  db = g_build_filename (dir, "store.db", NULL);
  store = dw_store_open (db, &error);
  g_assert_no_error (error);
  g_autoptr (DwIngester) ing = dw_ingester_new (store);
  DwIngestReport report;
  dw_ingest_report_init (&report);
  g_assert_true (dw_ingester_ingest_path (ing, run, &report, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (report.diagnostics->len, ==, 0);
  g_assert_cmpuint (report.n_batches, ==, N_STEPS);
  g_assert_cmpuint (report.run_ids->len, ==, 1);
  run_id = g_array_index (report.run_ids, gint64, 0);
  dw_ingest_report_clear (&report);
}

static GtkWidget *
named (GtkWidget *root, const char *name)
{
  GtkWidget *w = dw_ui_test_find_named (root, name);
  if (!w)
    g_error ("no widget named %s", name);
  return w;
}

/* TRUE when the card of @canonical's chart shows @text (a card with nothing to draw says why) */
static gboolean
card_says (GtkWidget *root, const char *canonical, const char *text)
{
  g_autofree char *name = g_strdup_printf ("chart-%s", canonical);
  GtkWidget *card = gtk_widget_get_ancestor (named (root, name), DW_TYPE_CHART_CARD);
  GtkWidget *label;

  g_assert_nonnull (card);
  label = named (card, "empty-label");
  return g_strcmp0 (gtk_label_get_text (GTK_LABEL (label)), text) == 0
         && gtk_widget_is_visible (label);
}

static guint64
f32_ulps (double a, double b)
{
  float fa = (float)a, fb = (float)b;
  if (fa == fb)
    return 0;
  gint32 ia, ib;
  memcpy (&ia, &fa, 4);
  memcpy (&ib, &fb, 4);
  if (ia < 0)
    ia = G_MININT32 - ia;
  if (ib < 0)
    ib = G_MININT32 - ib;
  return (guint64)ABS ((gint64)ia - (gint64)ib);
}

static gboolean
same_value (double a, double b)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  if (a == b)
    return TRUE;
  return f32_ulps (a, b) <= 1;
}

/* The view's result equals a full recompute (dw_correction_run on every stored batch) of the
 * config the view shows, key by key; the what-if chart series hold those values. Returns the
 * number of values compared. */
static guint
assert_matches_recompute (DwTuneView *view)
{
  g_autoptr (GError) error = NULL;
  const DwConfig *config = dw_tune_view_get_config (view);
  const DwWhatifRunResult *res = dw_tune_view_get_result (view);
  g_assert_nonnull (res);
  g_assert_false (res->any_approximate);
  g_autoptr (DwRecomputeResult) ref
    = dw_whatif_recompute_run (store, run_id, config, config->generation, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->n_steps, ==, ref->n_steps);
  g_assert_cmpuint (res->n_steps, ==, N_STEPS);
  guint compared = 0;
  for (guint i = 0; i < res->n_steps; i++)
    {
      const DwWhatifStepResult *r = &res->results[i];
      const DwRecomputeStep *s = &ref->steps[i];
      g_assert_cmpint (res->steps[i], ==, s->step);
      g_assert_cmpint (r->failed, ==, s->failed);
      g_assert_cmpuint (r->n_metrics, ==, s->result.n_metrics);
      for (gsize m = 0; m < s->result.n_metrics; m++)
        {
          g_assert_cmpstr (dw_whatif_step_result_get_key (r, m), ==, s->result.metrics[m].key);
          if (!same_value (r->values[m], s->result.metrics[m].value))
            g_error ("step %" G_GINT64_FORMAT " %s: what-if %.17g, recompute %.17g", s->step,
                     s->result.metrics[m].key, r->values[m], s->result.metrics[m].value);
          compared++;
        }
    }
  /* the rejected-token chart's what-if series is rollout_corr/rollout_rs_masked_fraction */
  DwChart *chart = DW_CHART (named (GTK_WIDGET (view), "chart-rs_masked_fraction"));
  DwPlotSeries *ws = dw_chart_get_series (chart, "whatif");
  gboolean produced = FALSE;
  for (guint i = 0; i < ref->n_steps; i++)
    produced
      |= dw_correction_result_get (&ref->steps[i].result, "rollout_corr/rollout_rs_masked_fraction")
         != NULL;
  if (!produced)
    {
      /* e.g. slime reports mask_fraction_high/low instead: no what-if series */
      g_assert_null (ws);
      return compared;
    }
  g_assert_nonnull (ws);
  g_assert_cmpuint (dw_plot_series_get_length (ws), ==, ref->n_steps);
  const double *wv = dw_pyramid_get_values (dw_plot_series_get_raw (ws));
  for (guint i = 0; i < ref->n_steps; i++)
    {
      const double *v = dw_correction_result_get (&ref->steps[i].result,
                                                  "rollout_corr/rollout_rs_masked_fraction");
      if (v)
        g_assert_true (same_value (wv[i], *v));
      else
        g_assert_true (isnan (wv[i]));
    }
  /* the logged series is there too */
  g_assert_nonnull (dw_chart_get_series (chart, "logged"));
  return compared;
}

static void
on_evaluated (DwTuneView *view, gboolean exact, guint *count)
{
  (*count)++;
}

static void
set_entry (GtkWidget *root, const char *name, const char *text)
{
  GtkWidget *e = named (root, name);
  gtk_editable_set_text (GTK_EDITABLE (e), text);
  g_signal_emit_by_name (e, "activate");
}

static void
assert_round_trip (DwTuneView *view, const char *format)
{
  g_autoptr (GError) error = NULL;
  const DwConfig *c = dw_tune_view_get_config (view);
  g_autofree char *text = dw_tune_view_export_config (view, format, &error);
  g_assert_no_error (error);
  DwConfig back;
  g_assert_true (dw_tune_import_config (text, c->generation, format, &back, &error));
  g_assert_no_error (error);
  /* every key the generation accepts reads back with the same Python value */
  guint n = 0;
  for (size_t i = 0; i < c->n_keys; i++)
    {
      if (!dw_tune_export_key_accepted (c->generation, c->keys[i]))
        continue;
      const DwValue *b = dw_config_get (&back, c->keys[i]);
      char x[DW_VALUE_STR_MAX + 8], y[DW_VALUE_STR_MAX + 8];
      dw_value_to_python_str (&c->values[i], x, sizeof x);
      if (!b)
        {
          /* an absent key and None are the same to verl */
          g_assert_cmpint (c->values[i].kind, ==, DW_VALUE_NONE);
          continue;
        }
      dw_value_to_python_str (b, y, sizeof y);
      g_assert_cmpstr (x, ==, y);
      g_assert_cmpint (c->values[i].kind == DW_VALUE_STR, ==, b->kind == DW_VALUE_STR);
      n++;
    }
  for (size_t i = 0; i < back.n_keys; i++)
    g_assert_true (dw_config_get (c, back.keys[i]) != NULL || back.values[i].kind == DW_VALUE_NONE);
  g_assert_cmpuint (n, >, 2);
}

static void
on_clipboard_text (GObject *source, GAsyncResult *res, gpointer data)
{
  char **out = data;
  g_autoptr (GError) error = NULL;
  *out = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), res, &error);
  g_assert_no_error (error);
}

static void
save_png (GtkWidget *window, const char *path)
{
  /* let a few frames draw first (charts draw at the next frame) */
  gint64 until = g_get_monotonic_time () + G_USEC_PER_SEC;
  while (g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, FALSE);
  g_autoptr (GdkPaintable) p = gtk_widget_paintable_new (window);
  int w = gtk_widget_get_width (window), h = gtk_widget_get_height (window);
  g_test_message ("rendering %dx%d", w, h);
  GtkSnapshot *snap = gtk_snapshot_new ();
  gdk_paintable_snapshot (p, snap, w, h);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snap);
  g_assert_nonnull (node);
  GskRenderer *r = gtk_native_get_renderer (GTK_NATIVE (window));
  g_autoptr (GdkTexture) tex
    = gsk_renderer_render_texture (r, node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  g_assert_true (gdk_texture_save_to_png (tex, path));
}

/* Picks @name in the generation combo, as a click on its row would. */
static void
select_generation (GtkWidget *w, const char *name)
{
  AdwComboRow *row = ADW_COMBO_ROW (named (w, "generation-row"));
  GListModel *model = adw_combo_row_get_model (row);

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr (GtkStringObject) item = g_list_model_get_item (model, i);
      if (strcmp (gtk_string_object_get_string (item), name) == 0)
        {
          adw_combo_row_set_selected (row, i);
          return;
        }
    }
  g_error ("no generation %s in the combo", name);
}

/* Picks the entry of combo row @row_name whose label is @label. */
static void
select_label (GtkWidget *w, const char *row_name, const char *label)
{
  AdwComboRow *row = ADW_COMBO_ROW (named (w, row_name));
  GListModel *model = adw_combo_row_get_model (row);

  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (row)));
  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr (GtkStringObject) item = g_list_model_get_item (model, i);
      if (strcmp (gtk_string_object_get_string (item), label) == 0)
        {
          adw_combo_row_set_selected (row, i);
          return;
        }
    }
  g_error ("no %s in %s", label, row_name);
}

/* The length-bias view's what-if counts equal the rows of the stored batches, binned by their
 * valid length, and the result's row outcomes (a move counts only the rejected rows: the totals
 * are kept from the binning). */
static void
assert_length_bias_counts (DwTuneView *view)
{
  const DwWhatifRunResult *res = dw_tune_view_get_result (view);
  GtkWidget *bias = dw_ui_test_find_named (GTK_WIDGET (view), "DwTuneLengthBias");
  guint64 rows[DW_TUNE_LENGTH_BIAS_N_BINS], rejected[DW_TUNE_LENGTH_BIAS_N_BINS];
  guint64 want_rows[DW_TUNE_LENGTH_BIAS_N_BINS] = { 0 };
  guint64 want_rejected[DW_TUNE_LENGTH_BIAS_N_BINS] = { 0 };
  guint64 n_rejected = 0;
  double max_length;

  g_assert_nonnull (bias);
  g_assert_true (
    dw_tune_length_bias_get_counts (DW_TUNE_LENGTH_BIAS (bias), rows, rejected, &max_length));
  g_assert_cmpfloat (max_length, >, 0);
  for (guint index = 0; index < res->n_steps; index++)
    {
      g_autoptr (GError) error = NULL;
      DwBatch *batch = dw_store_load_batch (store, run_id, res->steps[index], &error);
      g_assert_no_error (error);
      g_assert_nonnull (res->row_rejected[index]);
      for (gsize row = 0; row < batch->rows; row++)
        {
          double length = 0;
          for (gsize column = 0; column < batch->cols; column++)
            length += dw_batch_mask_value (batch, row * batch->cols + column) != 0;
          if (length == 0)
            continue;
          guint bin = MIN ((guint)(length / max_length * DW_TUNE_LENGTH_BIAS_N_BINS),
                           DW_TUNE_LENGTH_BIAS_N_BINS - 1);
          want_rows[bin]++;
          want_rejected[bin] += res->row_rejected[index][row] != 0;
          n_rejected += res->row_rejected[index][row] != 0;
        }
      dw_batch_free (batch);
    }
  for (guint bin = 0; bin < DW_TUNE_LENGTH_BIAS_N_BINS; bin++)
    {
      g_assert_cmpuint (rows[bin], ==, want_rows[bin]);
      g_assert_cmpuint (rejected[bin], ==, want_rejected[bin]);
    }
  g_assert_cmpuint (n_rejected, >, 0);
}

static void
test_tune_view (void)
{
  g_autoptr (GError) error = NULL;
  GtkWidget *window = gtk_window_new ();
  int width = 1500, height = 1100;
  const char *size = g_getenv ("DW_TUNE_VIEW_PNG_SIZE"); /* "WxH", to look at all of it */
  if (size)
    sscanf (size, "%dx%d", &width, &height);
  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  GtkWidget *w = dw_tune_view_new ();
  DwTuneView *view = DW_TUNE_VIEW (w);
  gtk_window_set_child (GTK_WINDOW (window), w);
  gtk_window_present (GTK_WINDOW (window));

  /* starts from the preset the demo was trained with, before any run */
  const DwConfig *c = dw_tune_view_get_config (view);
  g_assert_cmpint (c->generation, ==, DW_GEN_VERL_LATEST);
  g_assert_cmpstr (dw_config_get (c, "rollout_rs")->s, ==, "seq_mean_k3");
  g_assert_null (dw_tune_view_get_result (view));

  dw_tune_view_set_run (view, store, run_id);
  g_assert_true (dw_tune_view_get_busy (view));
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpint (dw_tune_view_get_run_id (view), ==, run_id);
  guint n = assert_matches_recompute (view);
  g_assert_cmpuint (n, >, N_STEPS * 20);

  /* the demo trained with rollout_rs_threshold 0.05: typed into the exact entry, the what-if
   * equals the recompute and the logged values again */
  set_entry (w, "bound-seq_mean_k3-upper", "0.05");
  g_assert_true (dw_tune_view_get_busy (view));
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "rollout_rs")->s, ==, "seq_mean_k3");
  g_assert_cmpstr (dw_config_get (c, "rollout_rs_threshold")->s, ==, "0.05");
  assert_matches_recompute (view);
  assert_length_bias_counts (view);
  {
    /* the demo logs as verl 0.9.0 does, which the Tune page does not offer yet: under 0.9.0 its
     * config agrees with every logged value; under the page's v0.7.1 only the IS weight
     * statistics differ (the raw ratio then, the applied weight since 0.8.0) */
    DwConfig latest = *c;
    latest.generation = DW_GEN_VERL_LATEST;
    g_autoptr (DwRecomputeResult) ref
      = dw_whatif_recompute_run (store, run_id, &latest, DW_GEN_VERL_LATEST, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (ref->n_flagged, ==, 0);
    g_autoptr (DwRecomputeResult) page
      = dw_whatif_recompute_run (store, run_id, c, DW_GEN_VERL, NULL, NULL, &error);
    g_assert_no_error (error);
    for (guint s = 0; s < page->n_steps; s++)
      for (guint d = 0; page->steps[s].diffs != NULL && d < page->steps[s].diffs->len; d++)
        g_assert_true (
          g_str_has_prefix (((DwRecomputeDiff *)g_ptr_array_index (page->steps[s].diffs, d))->key,
                            "rollout_corr/rollout_is_"));
  }

  /* a bad number is refused and marked, the config is unchanged */
  set_entry (w, "bound-seq_mean_k3-upper", "0x10");
  g_assert_true (gtk_widget_has_css_class (named (w, "bound-seq_mean_k3-upper"), "error"));
  g_assert_cmpstr (dw_config_get (c, "rollout_rs_threshold")->s, ==, "0.05");

  /* the IS threshold slider is log-scale: 10^0.69897 → 5 (three significant digits) */
  GtkAdjustment *adj = gtk_range_get_adjustment (GTK_RANGE (named (w, "scale-is-threshold")));
  gtk_adjustment_set_value (adj, log10 (5.0));
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpfloat (dw_config_get (c, "rollout_is_threshold")->f, ==, 5.0);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (named (w, "bound-is-threshold"))), ==,
                   "5.0");
  assert_matches_recompute (view);

  /* a dragged slider emits many values between two frames: they are evaluated once, with the
   * last value */
  guint n_eval = 0;
  gulong hid = g_signal_connect (view, "evaluated", G_CALLBACK (on_evaluated), &n_eval);
  for (int i = 1; i <= 25; i++)
    gtk_adjustment_set_value (adj, log10 (4.0 + i / 25.0));
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpuint (n_eval, ==, 1);
  g_assert_cmpfloat (dw_config_get (c, "rollout_is_threshold")->f, ==, 5.0);
  g_signal_handler_disconnect (view, hid);
  assert_matches_recompute (view);

  /* a second RS option: the threshold grammar gets one spec per option, in option order */
  adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (named (w, "rs-token_k1")), TRUE);
  set_entry (w, "bound-token_k1-lower", "0.25");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "rollout_rs")->s, ==, "token_k1,seq_mean_k3");
  g_assert_cmpstr (dw_config_get (c, "rollout_rs_threshold")->s, ==, "0.25_2.0,0.05");
  assert_matches_recompute (view);

  /* token_k3 next to token_k1: when the kept set is not an interval of ℓ, the token rejection
   * fraction is first shown as approximate and the exact pass (GTask) replaces it */
  const DwWhatifRunResult *before = dw_tune_view_get_result (view);
  adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (named (w, "rs-token_k3")), TRUE);
  set_entry (w, "bound-token_k3-upper", "0.02");
  while (dw_tune_view_get_result (view) == before)
    g_main_context_iteration (NULL, TRUE);
  gboolean first_approx = dw_tune_view_get_result (view)->any_approximate;
  g_test_message ("token_k1 + token_k3: first evaluation %s",
                  first_approx ? "approximate" : "exact");
  if (first_approx)
    g_assert_true (dw_tune_view_get_busy (view));
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "rollout_rs")->s, ==, "token_k1,token_k3,seq_mean_k3");
  g_assert_cmpstr (dw_config_get (c, "rollout_rs_threshold")->s, ==, "0.25_2.0,0.02,0.05");
  assert_matches_recompute (view);
  adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (named (w, "rs-token_k3")), FALSE);
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "rollout_rs")->s, ==, "token_k1,seq_mean_k3");

  /* batch normalisation and sequence-level IS */
  gtk_switch_set_active (GTK_SWITCH (named (w, "bn-switch")), TRUE);
  dw_ui_test_wait_tune_idle (view);
  g_assert_true (dw_config_get (c, "rollout_is_batch_normalize")->b);
  assert_matches_recompute (view);

  assert_round_trip (view, "yaml");
  assert_round_trip (view, "hydra");

  /* Copy puts the selected format (YAML) on the clipboard */
  g_assert_true (gtk_widget_activate_action (w, "tune.copy-config", NULL));
  char *clip = NULL;
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (w), NULL, on_clipboard_text, &clip);
  while (!clip)
    g_main_context_iteration (NULL, TRUE);
  g_autofree char *yaml = dw_tune_view_export_config (view, "yaml", &error);
  g_assert_cmpstr (clip, ==, yaml);
  g_assert_nonnull (strstr (clip, "rollout_correction"));
  g_free (clip);

  const char *png = g_getenv ("DW_TUNE_VIEW_PNG");
  if (png)
    {
      /* back to the trained threshold but a tighter IS cap: lines move against the log */
      save_png (window, png);
    }

  /* the demo logs no veto fraction, and verl 0.9.0 has no veto: the veto card says so */
  g_assert_true (card_says (w, "veto_fraction", "This generation has no token veto"));

  /* the older generation: G2 vocabulary (token/sequence/geometric RS, veto) */
  select_generation (w, "verl-0.7.0");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpint (c->generation, ==, DW_GEN_VERL_0_7_0);
  g_assert_true (gtk_widget_get_visible (named (w, "veto-row")));
  g_assert_false (gtk_widget_get_visible (named (w, "rs-token_k1")));
  /* veto switched off: verl 0.6-0.7 still log its fraction (0), and so does the what-if */
  adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (named (w, "veto-row")), FALSE);
  dw_ui_test_wait_tune_idle (view);
  g_assert_nonnull (dw_chart_get_series (DW_CHART (named (w, "chart-veto_fraction")), "whatif"));
  g_assert_false (card_says (w, "veto_fraction", "Veto is off in this configuration"));
  adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (named (w, "rs-geometric")), TRUE);
  adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (named (w, "veto-row")), TRUE);
  set_entry (w, "bound-veto", "1e-06");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "rollout_rs")->s, ==, "geometric");
  g_assert_cmpfloat (dw_config_get (c, "rollout_token_veto_threshold")->f, ==, 1e-6);
  assert_matches_recompute (view);
  assert_round_trip (view, "yaml");

  /* slime: no statistics path, every value comes from the exact pass (recompute on the batches) */
  select_generation (w, "slime");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpint (c->generation, ==, DW_GEN_SLIME);
  {
    /* slime logs no veto fraction with the veto off, and the run logged none: the card says why
     * it is empty instead of staying blank */
    GtkWidget *veto_row = named (w, "veto-row");
    gboolean veto_was_on = adw_expander_row_get_enable_expansion (ADW_EXPANDER_ROW (veto_row));

    adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (veto_row), FALSE);
    dw_ui_test_wait_tune_idle (view);
    g_assert_true (card_says (w, "veto_fraction", "Veto is off in this configuration"));
    g_assert_cmpfloat (gtk_widget_get_opacity (named (w, "chart-veto_fraction")), ==, 0.0);
    adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (veto_row), veto_was_on);
    dw_ui_test_wait_tune_idle (view);
    g_assert_cmpint (adw_expander_row_get_enable_expansion (ADW_EXPANDER_ROW (veto_row)), ==,
                     veto_was_on);
  }
  g_assert_true (gtk_widget_get_visible (named (w, "rs-token")));
  set_entry (w, "bound-is-threshold", "3.0");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpfloat (dw_config_get (c, "tis_upper_bound")->f, ==, 3.0);
  assert_matches_recompute (view);
  assert_round_trip (view, "args");

  /* Paste Config: Hydra overrides for verl main from the clipboard set the controls */
  const char *hydra = "algorithm.rollout_correction.rollout_is='sequence'\n"
                      "algorithm.rollout_correction.rollout_is_threshold=3.0\n"
                      "algorithm.rollout_correction.rollout_rs='seq_sum_k1'\n"
                      "algorithm.rollout_correction.rollout_rs_threshold='0.5_2.0'\n";
  gdk_clipboard_set_text (gtk_widget_get_clipboard (w), hydra);
  g_assert_true (gtk_widget_activate_action (w, "tune.paste-config", NULL));
  while (c->generation != DW_GEN_VERL_LATEST)
    g_main_context_iteration (NULL, TRUE);
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "rollout_is")->s, ==, "sequence");
  g_assert_cmpfloat (dw_config_get (c, "rollout_is_threshold")->f, ==, 3.0);
  g_assert_cmpstr (dw_config_get (c, "rollout_rs")->s, ==, "seq_sum_k1");
  g_assert_cmpstr (dw_config_get (c, "rollout_rs_threshold")->s, ==, "0.5_2.0");
  g_assert_true (
    adw_expander_row_get_enable_expansion (ADW_EXPANDER_ROW (named (w, "rs-seq_sum_k1"))));
  g_assert_false (
    adw_expander_row_get_enable_expansion (ADW_EXPANDER_ROW (named (w, "rs-seq_mean_k3"))));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (named (w, "bound-seq_sum_k1-lower"))), ==,
                   "0.5");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (named (w, "bound-is-threshold"))), ==,
                   "3.0");
  assert_matches_recompute (view);
  /* what verl rejects is refused with its message, the view keeps its config */
  g_assert_false (
    dw_tune_view_import_config (view,
                                "algorithm.rollout_correction.rollout_rs='token_k4'\n"
                                "algorithm.rollout_correction.rollout_rs_threshold=2.0\n",
                                &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "Invalid rollout_rs option: token_k4"));
  g_clear_error (&error);
  g_assert_cmpstr (dw_config_get (c, "rollout_rs")->s, ==, "seq_sum_k1");

  /* a run without batches: an explanation, no result */
  {
    g_autofree char *run2 = g_build_filename (dir, "logs-only", NULL);
    g_assert_true (dw_demo_write (run2, DW_DEMO_HEALTHY, 3, 2, &error));
    g_autofree char *batches = g_build_filename (run2, "batches", NULL);
    dw_ui_test_remove_tree (batches);
    g_autoptr (DwIngester) ing = dw_ingester_new (store);
    DwIngestReport report;
    dw_ingest_report_init (&report);
    g_assert_true (dw_ingester_ingest_path (ing, run2, &report, &error));
    g_assert_cmpuint (report.n_batches, ==, 0);
    gint64 run2_id = g_array_index (report.run_ids, gint64, 0);
    dw_ingest_report_clear (&report);
    dw_tune_view_set_run (view, store, run2_id);
    dw_ui_test_wait_tune_idle (view);
    g_assert_null (dw_tune_view_get_result (view));
    g_assert_nonnull (strstr (gtk_label_get_text (GTK_LABEL (named (w, "status-label"))),
                              "no stored rollout batches"));
  }

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* Whether some evaluated step produced @key. */
static gboolean
result_has_key (DwTuneView *view, const char *key)
{
  const DwWhatifRunResult *res = dw_tune_view_get_result (view);
  for (guint i = 0; res && i < res->n_steps; i++)
    if (!res->results[i].failed && dw_whatif_step_result_get (&res->results[i], key, NULL))
      return TRUE;
  return FALSE;
}

static const char *
selected_label (GtkWidget *w, const char *row_name)
{
  GtkStringObject *item = adw_combo_row_get_selected_item (ADW_COMBO_ROW (named (w, row_name)));
  return item ? gtk_string_object_get_string (item) : NULL;
}

/* The controls come from each generation's schema: every release is offered by its name, the
 * newest first; verl ≥ 0.8 has IcePop (two bounds → "lower_upper") and its out-of-bounds card;
 * slime's built-in TIS / IcePop write use_tis' companions; a release without presets starts
 * from its keys' defaults. The what-if equals a recompute under each. */
static void
test_schema_controls (void)
{
  g_autoptr (GError) error = NULL;
  GtkWidget *window = gtk_window_new ();
  GtkWidget *w = dw_tune_view_new ();
  DwTuneView *view = DW_TUNE_VIEW (w);
  const DwConfig *c = dw_tune_view_get_config (view);
  static const char *const releases[] = { "verl-0.9.0", "verl-0.8.0", "verl-0.7.1", "verl-0.7.0",
                                          "verl-0.6.1", "verl-0.6.0", "slime" };

  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 1000);
  gtk_window_set_child (GTK_WINDOW (window), w);
  gtk_window_present (GTK_WINDOW (window));

  GListModel *gens = adw_combo_row_get_model (ADW_COMBO_ROW (named (w, "generation-row")));
  g_assert_cmpuint (g_list_model_get_n_items (gens), ==, DW_N_GENERATIONS);
  for (guint i = 0; i < G_N_ELEMENTS (releases); i++)
    {
      g_autoptr (GtkStringObject) item = g_list_model_get_item (gens, i);
      g_assert_cmpstr (gtk_string_object_get_string (item), ==, releases[i]);
    }
  g_assert_cmpstr (selected_label (w, "generation-row"), ==, "verl-0.9.0");
  g_assert_cmpint (c->generation, ==, DW_GEN_VERL_0_9_0);

  dw_tune_view_set_run (view, store, run_id);
  dw_ui_test_wait_tune_idle (view);
  select_generation (w, "verl-0.9.0");
  dw_ui_test_wait_tune_idle (view);

  /* verl's IcePop preset: the mode row says IcePop, both bounds shown, the oob card drawn */
  select_label (w, "preset-row", "decoupled_token_icepop");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "rollout_is_threshold")->s, ==, "0.5_5.0");
  g_assert_cmpstr (selected_label (w, "is-mode-row"), ==, "IcePop");
  g_assert_true (gtk_widget_is_visible (named (w, "bound-is-lower")));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (named (w, "bound-is-lower"))), ==, "0.5");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (named (w, "bound-is-threshold"))), ==,
                   "5.0");
  g_assert_true (result_has_key (view, "rollout_corr/rollout_is_oob_ratio"));
  g_assert_nonnull (dw_chart_get_series (DW_CHART (named (w, "chart-is_oob_fraction")), "whatif"));
  assert_matches_recompute (view);
  select_label (w, "preset-row", "bypass_pg_token_icepop");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "rollout_is_threshold")->s, ==, "0.5_5.0");
  g_assert_true (dw_config_get (c, "bypass_mode")->b);

  /* from truncation to IcePop with the controls: the bounds become "lower_upper" */
  select_label (w, "preset-row", "decoupled_token_is");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpfloat (dw_config_get (c, "rollout_is_threshold")->f, ==, 2.0);
  g_assert_false (gtk_widget_is_visible (named (w, "bound-is-lower")));
  g_assert_false (result_has_key (view, "rollout_corr/rollout_is_oob_ratio"));
  select_label (w, "is-mode-row", "IcePop");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "rollout_is_threshold")->s, ==, "0.5_2.0");
  g_assert_true (gtk_widget_is_visible (named (w, "bound-is-lower")));
  set_entry (w, "bound-is-lower", "0.25");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "rollout_is_threshold")->s, ==, "0.25_2.0");
  g_assert_true (result_has_key (view, "rollout_corr/rollout_is_oob_ratio"));
  assert_matches_recompute (view);
  assert_round_trip (view, "yaml");
  assert_round_trip (view, "hydra");
  {
    g_autofree char *yaml = dw_tune_view_export_config (view, "yaml", &error);
    g_assert_no_error (error);
    g_assert_nonnull (strstr (yaml, "0.25_2.0"));
  }
  /* back to truncation: a number again */
  select_label (w, "is-mode-row", "Truncate (TIS)");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpint (dw_config_get (c, "rollout_is_threshold")->kind, ==, DW_VALUE_FLOAT);

  /* verl-0.8.0 is offered as itself, with the same IcePop */
  select_generation (w, "verl-0.8.0");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpint (c->generation, ==, DW_GEN_VERL_0_8_0);
  g_assert_true (gtk_widget_get_visible (named (w, "is-mode-row")));

  /* verl-0.7.1 has no IcePop: no mode row, no lower bound */
  select_generation (w, "verl-0.7.1");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpint (c->generation, ==, DW_GEN_VERL_0_7_1);
  g_assert_false (gtk_widget_get_visible (named (w, "is-mode-row")));
  g_assert_false (gtk_widget_is_visible (named (w, "bound-is-lower")));
  /* a pasted IcePop config (verl >= 0.8 only) opens as the newest verl, not as the page's 0.7.1 */
  g_assert_true (
    dw_tune_view_import_config (view,
                                "algorithm.rollout_correction.rollout_is='token'\n"
                                "algorithm.rollout_correction.rollout_is_threshold='0.5_5.0'\n",
                                &error));
  g_assert_no_error (error);
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpint (c->generation, ==, DW_GEN_VERL_0_9_0);
  g_assert_cmpstr (selected_label (w, "is-mode-row"), ==, "IcePop");
  /* and a verl-0.8.0 page keeps a pasted verl >= 0.8 config as verl-0.8.0 */
  select_generation (w, "verl-0.8.0");
  dw_ui_test_wait_tune_idle (view);
  g_assert_true (
    dw_tune_view_import_config (view,
                                "algorithm.rollout_correction.rollout_is='token'\n"
                                "algorithm.rollout_correction.rollout_is_threshold='0.5_5.0'\n",
                                &error));
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpint (c->generation, ==, DW_GEN_VERL_0_8_0);
  g_assert_cmpstr (dw_config_get (c, "rollout_is_threshold")->s, ==, "0.5_5.0");

  /* slime's built-in paths: the function row, the bounds write tis_clip / tis_clip_low */
  select_generation (w, "slime");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpint (c->generation, ==, DW_GEN_SLIME);
  g_assert_cmpstr (selected_label (w, "function-row"), ==, "mis.py");
  select_label (w, "function-row", "IcePop");
  dw_ui_test_wait_tune_idle (view);
  g_assert_nonnull (dw_config_get (c, "tis_function"));
  g_assert_cmpstr (dw_config_get (c, "tis_function")->s, ==, "icepop");
  set_entry (w, "bound-is-threshold", "3.0");
  set_entry (w, "bound-is-lower", "0.4");
  dw_ui_test_wait_tune_idle (view);
  /* a bound the page cannot write (its key missing from the schema) fails here, not by a crash */
  g_assert_nonnull (dw_config_get (c, "tis_clip"));
  g_assert_nonnull (dw_config_get (c, "tis_clip_low"));
  g_assert_cmpfloat (dw_config_get (c, "tis_clip")->f, ==, 3.0);
  g_assert_cmpfloat (dw_config_get (c, "tis_clip_low")->f, ==, 0.4);
  /* mis.py's keys are dropped: the built-in path has no flag for them */
  g_assert_null (dw_config_get (c, "tis_upper_bound"));
  g_assert_null (dw_config_get (c, "use_rs"));
  assert_matches_recompute (view);
  assert_round_trip (view, "args");
  {
    g_autofree char *args = dw_tune_view_export_config (view, "args", &error);
    g_assert_no_error (error);
    g_test_message ("slime IcePop flags: %s", args);
    g_assert_nonnull (strstr (args, "--use-tis"));
    g_assert_nonnull (strstr (args, "--tis-clip 3.0"));
    g_assert_nonnull (strstr (args, "--tis-clip-low 0.4"));
    g_assert_nonnull (strstr (args, "icepop"));
  }
  select_label (w, "function-row", "Built-in TIS");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpstr (dw_config_get (c, "tis_function")->s, ==, "vanilla");
  assert_matches_recompute (view);

  /* verl-0.6.0 (mismatch_helper) has no presets: its keys' defaults, veto on at 1e-4 */
  select_generation (w, "verl-0.6.0");
  dw_ui_test_wait_tune_idle (view);
  g_assert_cmpint (c->generation, ==, DW_GEN_VERL_0_6_0);
  g_assert_false (gtk_widget_get_sensitive (named (w, "preset-row")));
  g_assert_true (gtk_widget_get_visible (named (w, "veto-row")));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (named (w, "bound-veto"))), ==, "0.0001");

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* The meta ingest stores for a verl console log that printed its config (generation_source
 * "config"), with the config the demo run was trained with or a wrong threshold. */
static char *
run_meta_json (const char *rs_threshold)
{
  DwConfig config;
  DwCorrectionError cerr;
  DwValue threshold = dw_value_str (rs_threshold);
  /* the demo trains as verl 0.9.0 (and its log says so) */
  GString *out = g_string_new ("{\"generation\": \"verl-0.9.0\", \"generation_source\": "
                               "\"config\", \"config\": ");

  g_assert_true (dw_preset_config (DW_GEN_VERL_LATEST, DEFAULT_DEMO_PRESET, &config, &cerr));
  dw_config_set (&config, "rollout_rs_threshold", &threshold);
  dw_json_append_config (out, &config);
  g_string_append (out, "}");
  return g_string_free (out, FALSE);
}

/* `driftwatch-cli runs` on the fixture store shows @line under the run. */
static void
assert_cli_runs_says (const char *line)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL;
  int status = -1;
  const char *argv[] = { g_getenv ("DW_CLI"), "runs", "--db", db, NULL };

  g_assert_nonnull (argv[0]);
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               &out, NULL, &status, &error));
  g_assert_no_error (error);
  g_test_message ("runs: %s", out);
  g_assert_nonnull (strstr (out, line));
}

static void
wait_for_check (GtkWidget *w)
{
  gint64 until = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (!strstr (gtk_label_get_text (GTK_LABEL (named (w, "run-subtitle"))), "recompute")
         && g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, TRUE);
}

/* Issue 11 item 4: the page starts from the run's own generation and config and names them;
 * a run whose logged metrics disagree with a recompute under that config is flagged. */
static void
test_run_own_config (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *saved = dw_store_get_run_meta (store, run_id, &error);
  g_autofree char *right = run_meta_json ("0.05");
  g_autofree char *wrong = run_meta_json ("0.5");
  DwRunCheck check;

  g_assert_no_error (error);

  /* the core check: the trained config agrees, a wrong threshold is flagged */
  g_assert_true (dw_store_set_run_meta (store, run_id, right, &error));
  g_assert_true (dw_run_config_check (store, run_id, &check, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (check.agreement, ==, DW_RUN_AGREEMENT_AGREES);
  g_assert_cmpuint (check.n_flagged, ==, 0);
  g_assert_cmpuint (check.n_compared, >, N_STEPS * 10);
  assert_cli_runs_says ("logged metrics agree with a recompute under the run’s config");
  g_assert_true (dw_store_set_run_meta (store, run_id, wrong, &error));
  g_assert_true (dw_run_config_check (store, run_id, &check, NULL, &error));
  g_assert_cmpint (check.agreement, ==, DW_RUN_AGREEMENT_DISAGREES);
  g_assert_cmpuint (check.n_flagged, >, 0);
  g_assert_nonnull (strstr (check.first_key, "rollout_rs"));
  assert_cli_runs_says ("⚠ logged metrics disagree with a recompute under the run’s config");

  /* the page: the wrong config is loaded as the run's, named, and flagged */
  GtkWidget *window = gtk_window_new ();
  GtkWidget *w = dw_tune_view_new ();
  DwTuneView *view = DW_TUNE_VIEW (w);
  const DwConfig *c = dw_tune_view_get_config (view);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 1000);
  gtk_window_set_child (GTK_WINDOW (window), w);
  gtk_window_present (GTK_WINDOW (window));
  dw_tune_view_set_run (view, store, run_id);
  dw_ui_test_wait_tune_idle (view);
  wait_for_check (w);
  const char *sub = gtk_label_get_text (GTK_LABEL (named (w, "run-subtitle")));
  g_test_message ("header: %s", sub);
  g_assert_cmpint (c->generation, ==, DW_GEN_VERL_0_9_0);
  g_assert_cmpstr (selected_label (w, "generation-row"), ==, "verl-0.9.0");
  g_assert_cmpstr (dw_config_get (c, "rollout_rs_threshold")->s, ==, "0.5");
  g_assert_nonnull (strstr (sub, "verl-0.9.0 · config from the log"));
  g_assert_nonnull (strstr (sub, "disagree"));
  g_assert_true (gtk_widget_has_css_class (named (w, "run-subtitle"), "warning"));

  /* the right one: not flagged */
  g_assert_true (dw_store_set_run_meta (store, run_id, right, &error));
  dw_tune_view_set_run (view, store, run_id);
  dw_ui_test_wait_tune_idle (view);
  wait_for_check (w);
  sub = gtk_label_get_text (GTK_LABEL (named (w, "run-subtitle")));
  g_test_message ("header: %s", sub);
  g_assert_cmpstr (dw_config_get (c, "rollout_rs_threshold")->s, ==, "0.05");
  g_assert_nonnull (strstr (sub, "agree with a recompute"));
  g_assert_null (strstr (sub, "disagree"));
  g_assert_false (gtk_widget_has_css_class (named (w, "run-subtitle"), "warning"));
  assert_matches_recompute (view);

  /* inferred from the metric keys: named so */
  g_assert_true (dw_store_set_run_meta (
    store, run_id, "{\"generation\": \"verl-0.9.0\", \"generation_source\": \"inferred\"}",
    &error));
  dw_tune_view_set_run (view, store, run_id);
  dw_ui_test_wait_tune_idle (view);
  sub = gtk_label_get_text (GTK_LABEL (named (w, "run-subtitle")));
  g_assert_nonnull (strstr (sub, "verl-0.9.0 · inferred from the metric keys"));
  g_assert_cmpint (c->generation, ==, DW_GEN_VERL_0_9_0);

  /* no meta at all: the generation the store reads the run's keys under, named as inferred */
  g_assert_true (dw_store_set_run_meta (store, run_id, "{}", &error));
  dw_tune_view_set_run (view, store, run_id);
  dw_ui_test_wait_tune_idle (view);
  sub = gtk_label_get_text (GTK_LABEL (named (w, "run-subtitle")));
  g_test_message ("header: %s", sub);
  g_assert_nonnull (strstr (sub, " · inferred from the metric keys"));

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_true (dw_store_set_run_meta (store, run_id, saved ? saved : "{}", &error));
}

static void
collect_scales (GtkWidget *w, GPtrArray *out)
{
  if (GTK_IS_SCALE (w) && gtk_widget_is_drawable (w))
    g_ptr_array_add (out, w);
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    collect_scales (c, out);
}

/* Scrolls @scroller so that @w is in its upper third (and asserts it is in view). */
static void
scroll_into_view (GtkScrolledWindow *scroller, GtkWidget *w)
{
  GtkAdjustment *vadj = gtk_scrolled_window_get_vadjustment (scroller);
  double x, y;

  /* y in the scrolled window's visible area, plus what is scrolled away: y in the content */
  g_assert_true (gtk_widget_translate_coordinates (w, GTK_WIDGET (scroller), 0, 0, &x, &y));
  gtk_adjustment_set_value (vadj, gtk_adjustment_get_value (vadj) + y
                                    - gtk_adjustment_get_page_size (vadj) / 3);
  dw_ui_test_iterate_ms (100);
  g_assert_true (gtk_widget_translate_coordinates (w, GTK_WIDGET (scroller), 0,
                                                   gtk_widget_get_height (w) / 2.0, &x, &y));
  g_assert_cmpfloat (y, >, 0);
  g_assert_cmpfloat (y, <, gtk_widget_get_height (GTK_WIDGET (scroller)));
}

static char *
config_text (DwTuneView *view)
{
  g_autoptr (GError) error = NULL;
  char *text = dw_tune_view_export_config (view, "yaml", &error);

  g_assert_no_error (error);
  return text;
}

/* The mouse wheel over a slider scrolls the page and never changes a value: every slider of
 * the page (all RS options enabled, so every bound slider is shown), real wheel notches through
 * the X server. A plain GtkScale first proves the wheel events reach scales at all. */
static void
test_wheel_leaves_config (void)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *w = dw_tune_view_new ();
  DwTuneView *view = DW_TUNE_VIEW (w);
  g_autoptr (GPtrArray) scales = g_ptr_array_new ();
  g_autofree char *before = NULL;
  guint n_scrolled = 0;

  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_set_child (GTK_WINDOW (window), w);
  gtk_window_present (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (200);
  if (!dw_ui_test_xtest_available (window))
    {
      g_test_skip ("no XTEST on this display");
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }

  /* the control: an unguarded scale takes the wheel */
  {
    GtkWidget *probe_win = gtk_window_new ();
    GtkWidget *probe = gtk_scale_new_with_range (GTK_ORIENTATION_HORIZONTAL, 0, 100, 1);

    gtk_range_set_value (GTK_RANGE (probe), 50);
    gtk_window_set_default_size (GTK_WINDOW (probe_win), 300, 80);
    gtk_window_set_child (GTK_WINDOW (probe_win), probe);
    gtk_window_present (GTK_WINDOW (probe_win));
    dw_ui_test_iterate_ms (300);
    g_assert_true (dw_ui_test_wheel (probe, gtk_widget_get_width (probe) / 2.0,
                                     gtk_widget_get_height (probe) / 2.0, 2));
    g_assert_cmpfloat (gtk_range_get_value (GTK_RANGE (probe)), !=, 50);
    gtk_window_destroy (GTK_WINDOW (probe_win));
    dw_ui_test_iterate_ms (100);
  }

  dw_tune_view_set_run (view, store, run_id);
  dw_ui_test_wait_tune_idle (view);
  for (guint i = 0; i < 14; i++)
    {
      static const char *const rows[]
        = { "rs-token_k1",    "rs-token_k2",   "rs-token_k3",    "rs-seq_sum_k1",
            "rs-seq_sum_k2",  "rs-seq_sum_k3", "rs-seq_mean_k1", "rs-seq_mean_k2",
            "rs-seq_mean_k3", "rs-seq_max_k2", "rs-seq_max_k3" };
      if (i < G_N_ELEMENTS (rows))
        {
          AdwExpanderRow *row = ADW_EXPANDER_ROW (named (w, rows[i]));
          adw_expander_row_set_enable_expansion (row, TRUE);
          adw_expander_row_set_expanded (row, TRUE);
        }
    }
  dw_ui_test_wait_tune_idle (view);
  dw_ui_test_iterate_ms (300);
  before = config_text (view);
  collect_scales (w, scales);
  /* IS threshold, 11 options (3 with a lower bound: 14 bounds) and the histogram's step */
  g_assert_cmpuint (scales->len, ==, 1 + 14 + 1);

  for (guint i = 0; i < scales->len; i++)
    {
      GtkWidget *scale = g_ptr_array_index (scales, i);
      GtkScrolledWindow *scroller
        = GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (scale, GTK_TYPE_SCROLLED_WINDOW));
      GtkAdjustment *vadj = gtk_scrolled_window_get_vadjustment (scroller);
      double value = gtk_range_get_value (GTK_RANGE (scale));
      double top;
      int notches = 2;

      scroll_into_view (scroller, scale);
      top = gtk_adjustment_get_value (vadj);
      if (top + gtk_adjustment_get_page_size (vadj) >= gtk_adjustment_get_upper (vadj) - 1)
        notches = -2; /* at the bottom: scroll up instead */
      g_assert_true (dw_ui_test_wheel (scale, gtk_widget_get_width (scale) / 2.0,
                                       gtk_widget_get_height (scale) / 2.0, notches));
      dw_ui_test_wait_tune_idle (view);
      g_test_message ("%s: page %g → %g", gtk_widget_get_name (scale), top,
                      gtk_adjustment_get_value (vadj));
      g_assert_cmpfloat (gtk_range_get_value (GTK_RANGE (scale)), ==, value);
      g_autofree char *after = config_text (view);
      g_assert_cmpstr (after, ==, before);
      /* the page scrolled instead */
      if (gtk_adjustment_get_value (vadj) != top)
        n_scrolled++;
    }
  g_assert_cmpuint (n_scrolled, ==, scales->len);
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

/* A changed value marks the config "modified from the preset" (what changed, preset → now);
 * Reset, clicked with the pointer, brings back the preset. A refused value says why under the
 * entry in verl's (Python's) words and leaves the config as it was. The run is named at the top. */
static void
test_modified_and_errors (void)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *w = dw_tune_view_new ();
  DwTuneView *view = DW_TUNE_VIEW (w);
  const DwConfig *c = dw_tune_view_get_config (view);
  GtkWidget *row, *error;

  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_set_child (GTK_WINDOW (window), w);
  gtk_window_present (GTK_WINDOW (window));
  dw_tune_view_set_run (view, store, run_id);
  dw_ui_test_wait_tune_idle (view);
  /* the demo prints its config, which the page opens as the run's own (no preset to differ
   * from): start from the preset it was made from */
  {
    DwConfig preset;
    DwCorrectionError perr;
    g_assert_true (dw_preset_config (c->generation, "decoupled_k3_rs_token_tis", &preset, &perr));
    dw_tune_view_set_config (view, "decoupled_k3_rs_token_tis", &preset);
    dw_ui_test_wait_tune_idle (view);
  }

  g_assert_nonnull (
    strstr (gtk_label_get_text (GTK_LABEL (named (w, "run-title"))), "demo-collapse"));
  row = named (w, "modified-row");
  g_assert_false (gtk_widget_get_visible (row));
  g_assert_false (dw_tune_view_get_modified (view));

  set_entry (w, "bound-is-threshold", "5");
  dw_ui_test_wait_tune_idle (view);
  g_assert_true (dw_tune_view_get_modified (view));
  g_assert_true (gtk_widget_get_visible (row));
  g_assert_cmpstr (adw_action_row_get_subtitle (ADW_ACTION_ROW (row)), ==,
                   "rollout_is_threshold: 2.0 → 5.0");
  g_assert_nonnull (
    strstr (gtk_label_get_text (GTK_LABEL (named (w, "run-subtitle"))), "modified"));

  /* refused values: not a float, and one verl rejects; the config keeps 5.0 */
  set_entry (w, "bound-is-threshold", "0x10");
  error = named (w, "error-is-threshold");
  g_assert_true (gtk_widget_get_visible (error));
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (error)), ==,
                   "ValueError: could not convert string to float: '0x10'");
  set_entry (w, "bound-is-threshold", "-1");
  /* verl 0.9.0's _parse_rollout_is_threshold words it so (0.7.1: "… must be positive …") */
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (error)), ==,
                   "ValueError: rollout_is_threshold upper bound must be positive, got -1.0.");
  g_assert_cmpfloat (dw_config_get (c, "rollout_is_threshold")->f, ==, 5.0);
  set_entry (w, "bound-is-threshold", "4");
  g_assert_false (gtk_widget_get_visible (error));

  /* Reset, with the pointer when the X server can take input, else through its action */
  GtkWidget *reset = named (w, "reset-preset-button");
  if (dw_ui_test_xtest_available (window))
    g_assert_true (dw_ui_test_click (reset, gtk_widget_get_width (reset) / 2.0,
                                     gtk_widget_get_height (reset) / 2.0));
  else
    gtk_widget_activate (reset);
  dw_ui_test_wait_tune_idle (view);
  g_assert_false (dw_tune_view_get_modified (view));
  g_assert_false (gtk_widget_get_visible (row));
  g_assert_cmpfloat (dw_config_get (c, "rollout_is_threshold")->f, ==, 2.0);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (named (w, "bound-is-threshold"))), ==,
                   "2.0");
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

/* Below ~650 px the configuration folds away behind its toggle (AdwFlap) and comes over the
 * results when toggled; wide, it sits beside them (and the toggle hides it). */
static void
test_narrow_layout (void)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *w = dw_tune_view_new ();
  AdwFlap *flap;
  GtkWidget *toggle;

  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 800);
  gtk_window_set_child (GTK_WINDOW (window), w);
  gtk_window_present (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (300);
  flap = ADW_FLAP (gtk_widget_get_ancestor (named (w, "generation-row"), ADW_TYPE_FLAP));
  toggle = named (w, "controls-toggle");
  g_assert_false (adw_flap_get_folded (flap));
  g_assert_true (adw_flap_get_reveal_flap (flap));
  g_assert_true (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (toggle)));

  gtk_window_set_default_size (GTK_WINDOW (window), 360, 700);
  dw_ui_test_iterate_ms (500);
  g_test_message ("narrow: %d px", gtk_widget_get_width (w));
  g_assert_cmpint (gtk_widget_get_width (w), <=, 400);
  g_assert_true (adw_flap_get_folded (flap));
  g_assert_false (adw_flap_get_reveal_flap (flap));
  g_assert_false (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (toggle)));
  if (dw_ui_test_xtest_available (window))
    g_assert_true (dw_ui_test_click (toggle, gtk_widget_get_width (toggle) / 2.0,
                                     gtk_widget_get_height (toggle) / 2.0));
  else
    gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (toggle), TRUE);
  dw_ui_test_iterate_ms (300);
  g_assert_true (adw_flap_get_reveal_flap (flap));
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

/* What the page showed at its first approximate evaluation of a compact run. */
typedef struct
{
  GtkWidget *root;
  guint n_evaluated;
  gboolean saw_approximate;
  guint n_rows_with_bound; /* summary rows "≈ v ± bound" */
  gboolean saw_band;       /* a chart with its ± band series */
  GArray *keys;            /* char *: step index, then key, of every approximate value */
  GArray *values, *bounds; /* double */
  GArray *steps;           /* guint */
} CompactSeen;

static void
on_compact_evaluated (DwTuneView *view, gboolean exact, CompactSeen *seen)
{
  const DwWhatifRunResult *res = dw_tune_view_get_result (view);
  static const char *const canonical[]
    = { "is_mean", "ess", "rs_masked_fraction", "rs_seq_masked_fraction", "k3_kl" };

  seen->n_evaluated++;
  if (exact || seen->saw_approximate)
    return;
  seen->saw_approximate = TRUE;
  for (guint c = 0; c < G_N_ELEMENTS (canonical); c++)
    {
      g_autofree char *cell = g_strdup_printf ("whatif-%s", canonical[c]);
      g_autofree char *chart = g_strdup_printf ("chart-%s", canonical[c]);
      const char *text = gtk_label_get_text (GTK_LABEL (named (seen->root, cell)));

      g_test_message ("compact, first evaluation: %s = %s", canonical[c], text);
      if (strstr (text, "≈") && strstr (text, "±"))
        seen->n_rows_with_bound++;
      if (dw_chart_get_series (DW_CHART (named (seen->root, chart)), "whatif-high"))
        seen->saw_band = TRUE;
    }
  for (guint i = 0; i < res->n_steps; i++)
    for (gsize m = 0; m < res->results[i].n_metrics; m++)
      if (res->results[i].approximate[m] && isfinite (res->results[i].error_bound[m]))
        {
          char *key = g_strdup (dw_whatif_step_result_get_key (&res->results[i], m));
          g_array_append_val (seen->steps, i);
          g_array_append_val (seen->keys, key);
          g_array_append_val (seen->values, res->results[i].values[m]);
          g_array_append_val (seen->bounds, res->results[i].error_bound[m]);
        }
}

/* A run forced into compact mode (every run compact: the demo's 12 steps stand for a run too
 * large to keep every token, docs/TUNE.md "Large runs"): the first evaluation shows approximate
 * values with their error bound in the result rows and a ± band on the charts; the refinement
 * then makes every step exact from the stored batches, equal to a full recompute to float32
 * rounding, and every approximate value shown was within its bound of the exact one. */
static void
test_compact_bounds (void)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *w = dw_tune_view_new ();
  DwTuneView *view = DW_TUNE_VIEW (w);
  CompactSeen seen = { w };
  gulong handler;
  guint checked = 0;

  seen.keys = g_array_new (FALSE, FALSE, sizeof (char *));
  seen.values = g_array_new (FALSE, FALSE, sizeof (double));
  seen.bounds = g_array_new (FALSE, FALSE, sizeof (double));
  seen.steps = g_array_new (FALSE, FALSE, sizeof (guint));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_set_child (GTK_WINDOW (window), w);
  gtk_window_present (GTK_WINDOW (window));
  dw_tune_view_set_compact_tokens (view, 0);
  dw_tune_view_set_run (view, store, run_id);
  dw_ui_test_wait_tune_idle (view);
  g_assert_true (dw_tune_view_get_compact (view));
  assert_matches_recompute (view);

  /* a token IS cap inside the bulk of the log-ratios: a bound strictly inside a sketch bin */
  handler = g_signal_connect (view, "evaluated", G_CALLBACK (on_compact_evaluated), &seen);
  set_entry (w, "bound-is-threshold", "1.01");
  /* to look at the approximate page (the refinement goes on meanwhile) */
  while (g_getenv ("DW_TUNE_VIEW_PNG_COMPACT") && seen.n_evaluated == 0)
    g_main_context_iteration (NULL, TRUE);
  if (g_getenv ("DW_TUNE_VIEW_PNG_COMPACT"))
    save_png (window, g_getenv ("DW_TUNE_VIEW_PNG_COMPACT"));
  dw_ui_test_wait_tune_idle (view);
  g_signal_handler_disconnect (view, handler);
  g_assert_true (seen.saw_approximate);
  g_assert_cmpuint (seen.n_rows_with_bound, >, 0);
  g_assert_true (seen.saw_band);
  g_assert_cmpuint (seen.n_evaluated, ==, 2); /* the approximate one, then the refined */
  g_assert_cmpfloat (dw_config_get (dw_tune_view_get_config (view), "rollout_is_threshold")->f, ==,
                     1.01);

  /* refined: exact, and each approximate value had been within its bound */
  g_assert_false (dw_tune_view_get_result (view)->any_approximate);
  assert_matches_recompute (view);
  for (guint i = 0; i < seen.keys->len; i++)
    {
      const DwWhatifStepResult *exact
        = &dw_tune_view_get_result (view)->results[g_array_index (seen.steps, guint, i)];
      const char *key = g_array_index (seen.keys, char *, i);
      const double *value = dw_whatif_step_result_get (exact, key, NULL);
      double shown = g_array_index (seen.values, double, i);
      double bound = g_array_index (seen.bounds, double, i);

      g_assert_nonnull (value);
      if (!(fabs (shown - *value) <= bound * (1 + 1e-6) + 1e-12))
        g_error ("%s: shown %.9g ± %.3g, exact %.9g", key, shown, bound, *value);
      checked++;
      g_free (g_array_index (seen.keys, char *, i));
    }
  g_test_message ("compact: %u approximate values checked against their bounds", checked);
  /* the what-if series run through the health rules: the demo collapses at step 8 */
  {
    const char *health = gtk_label_get_text (GTK_LABEL (named (w, "whatif-health")));

    g_autofree char *one_line = g_strdelimit (g_strdup (health), "\n", ' ');

    g_test_message ("health of the what-if series: %s", one_line);
    g_assert_nonnull (strstr (health, "The health rules on the what-if series:"));
    g_assert_nonnull (
      strstr (health, "Rejected sequence fraction above 10% — collapse level from step 8"));
  }
  g_assert_cmpuint (checked, >, 0);
  g_array_unref (seen.keys);
  g_array_unref (seen.values);
  g_array_unref (seen.bounds);
  g_array_unref (seen.steps);
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  make_store ();
  g_test_add_func ("/Dw/TuneView/whatif-equals-recompute", test_tune_view);
  g_test_add_func ("/Dw/TuneView/wheel-leaves-config", test_wheel_leaves_config);
  g_test_add_func ("/Dw/TuneView/modified-and-errors", test_modified_and_errors);
  g_test_add_func ("/Dw/TuneView/narrow-layout", test_narrow_layout);
  g_test_add_func ("/Dw/TuneView/schema-controls", test_schema_controls);
  g_test_add_func ("/Dw/TuneView/run-own-config", test_run_own_config);
  g_test_add_func ("/Dw/TuneView/compact-bounds", test_compact_bounds);
  int ret = g_test_run ();
  g_clear_object (&store);
  dw_ui_test_remove_tree (dir);
  g_free (dir);
  g_free (db);
  return ret;
}
