/* dw-tune-view.c — what-if tuning of the rollout-correction config over a stored run
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The page: the run it tunes, the results of the config the controls describe (charts of the
 * logged series against the what-if series, the step histogram, the length bias, the summary)
 * and the evaluation. Every change marks the config dirty; a tick callback evaluates it once per
 * frame with the what-if engine (statistics only, no raw tokens), shows the result at once, and,
 * when some values are only approximate, starts the exact pass in a GTask thread (the previous
 * one is cancelled: the latest change wins). The controls are in dw-tune-controls.c, the worker
 * threads in dw-tune-loader.c, the export actions in dw-tune-export.c, the charts' values
 * from a result in dw-tune-values.c.
 */
#define G_LOG_DOMAIN "dw-tune-view"

#include "config.h"

#include <glib/gi18n.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "dw-tune-view-private.h"

#include "dw-canonical.h"
#include "dw-chart-card.h"
#include "dw-health.h"
#include "dw-store-writer.h"
#include "dw-tune-export.h"
#include "dw-tune-loader.h"
#include "dw-wheel-guard.h"

const DwTuneChartSpec dw_tune_chart_specs[DW_TUNE_N_CHARTS] = {
  /* verl ≥ 0.8 logs the applied weights' mean, verl ≤ 0.7.1 and slime the raw ratio's */
  { "is_mean", N_ ("IS weight mean"), "is_raw_mean" },
  { "ess", N_ ("Effective sample size") },
  { "rs_masked_fraction", N_ ("Rejected token fraction") },
  { "rs_seq_masked_fraction", N_ ("Rejected sequence fraction") },
  { "veto_fraction", N_ ("Veto fraction") },
  { "k3_kl", N_ ("K3 KL") },
  /* verl ≥ 0.8 rollout_is_oob_ratio: tokens whose ratio fell outside [L, U] (IcePop zeroes them) */
  { "is_oob_fraction", N_ ("Out-of-bounds fraction") },
};

G_DEFINE_FINAL_TYPE (DwTuneView, dw_tune_view, ADW_TYPE_BIN)

enum
{
  PROP_0,
  PROP_BUSY,
  PROP_RUN_ID,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum
{
  SIGNAL_EVALUATED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
dw_tune_view_busy_changed (DwTuneView *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

/* ------------------------------------------------------------------------------------------ */
/* Results → charts, summary, length bias                                                     */

static double
dw_tune_view_finite_mean (const double *v, gsize n)
{
  double sum = 0;
  gsize k = 0;
  for (gsize i = 0; i < n; i++)
    if (isfinite (v[i]))
      {
        sum += v[i];
        k++;
      }
  return k ? sum / (double)k : NAN;
}

static GtkWidget *
dw_tune_view_summary_cell (DwTuneView *self, int col, int row, const char *text, gboolean numeric,
                           gboolean heading)
{
  GtkWidget *l = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (l), numeric ? 1.0f : 0.0f);
  /* long metric names give way on a narrow page (the whole name in the tooltip) */
  if (!numeric)
    {
      gtk_label_set_ellipsize (GTK_LABEL (l), PANGO_ELLIPSIZE_END);
      gtk_widget_set_tooltip_text (l, text);
      gtk_widget_set_hexpand (l, TRUE);
    }
  if (numeric)
    gtk_widget_add_css_class (l, "numeric");
  if (heading)
    gtk_widget_add_css_class (l, "dim-label");
  gtk_grid_attach (self->summary_grid, l, col, row, 1, 1);
  return l;
}

/* "0.9812", "≈ 0.9812 ± 0.00037" (an approximate value and its error bound) or "≈ 0.9812" (no
 * bound known) */
static char *
dw_tune_view_format_metric (double v, gboolean approx, double bound)
{
  if (isnan (v))
    return g_strdup ("—");
  if (approx && isfinite (bound) && bound > 0)
    return g_strdup_printf ("≈ %.4g ± %.2g", v, bound);
  return g_strdup_printf ("%s%.4g", approx ? "≈ " : "", v);
}

/* The mean of the bounds where @values is finite: a bound on the error of the mean of @values;
 * NAN when some approximate value has no bound. */
static double
dw_tune_view_mean_bound (const double *values, const double *bounds, gsize n)
{
  double sum = 0;
  gsize counted = 0;

  for (gsize i = 0; i < n; i++)
    if (isfinite (values[i]))
      {
        sum += bounds[i];
        counted++;
      }
  return counted ? sum / (double)counted : 0;
}

/* The health rules (those of the Monitor page) on the what-if series of @canonical, appended to
 * @events. */
static void
dw_tune_view_check_health (const DwWhatifRunResult *res, const char *canonical,
                           const double *values, GPtrArray *events)
{
  if (dw_canonical_lookup (canonical) == NULL)
    return;
  g_ptr_array_extend_and_steal (
    events, dw_health_check_series (canonical, res->steps, values, res->n_steps));
}

/* What the health rules say of the what-if series: one line per event, or that they find nothing.
 */
static void
dw_tune_view_show_health (DwTuneView *self, GPtrArray *events, gboolean approximate)
{
  g_autoptr (GString) text = g_string_new (NULL);

  g_ptr_array_sort (events, dw_health_event_compare);
  if (events->len == 0)
    g_string_append (text, _ ("The health rules find nothing wrong in the what-if series."));
  else
    g_string_append (text, _ ("The health rules on the what-if series:"));
  for (guint i = 0; i < events->len; i++)
    {
      const DwHealthEvent *event = g_ptr_array_index (events, i);
      g_autofree char *crossing = dw_health_event_format_crossing (event);

      /* TRANSLATORS: a health event of the what-if series: its severity ("Critical"), title,
       * first step and the crossing; the severity is a word: emoji fonts are not everywhere */
      g_string_append_printf (text, _ ("\n%s: %s from step %" PRId64 ": %s"),
                              event->severity == DW_HEALTH_CRITICAL  ? _ ("Critical")
                              : event->severity == DW_HEALTH_WARNING ? _ ("Warning")
                                                                     : _ ("Note"),
                              event->title, event->first_step, crossing);
    }
  if (approximate && events->len > 0)
    g_string_append (text, _ ("\n(on approximate values: checked again when they are exact)"));
  gtk_label_set_text (self->health_label, text->str);
}

/* The legend over the cards; while values are approximate it says so, with their band. */
static void
dw_tune_view_update_legend (DwTuneView *self, gboolean approximate)
{
  g_autofree char *legend = NULL;

  if (approximate)
    legend = g_strdup_printf ("<span foreground=\"#3584e4\">━━</span> %s    "
                              "<span foreground=\"#9141ac\">━━</span> %s    "
                              "<span foreground=\"#9141ac\" alpha=\"40%%\">━━</span> %s",
                              _ ("Logged by the run"), _ ("What-if ≈ approximate"),
                              _ ("± its error bound (made exact in the background)"));
  else
    legend = g_strdup_printf ("<span foreground=\"#3584e4\">━━</span> %s    "
                              "<span foreground=\"#9141ac\">━━</span> %s",
                              _ ("Logged by the run"), _ ("What-if"));
  gtk_label_set_markup (self->charts_legend, legend);
}

/* An approximate series is drawn with its error band: two faint lines at value ± bound. */
static void
dw_tune_view_add_band (DwChart *chart, const DwWhatifRunResult *res, const double *values,
                       const double *bounds)
{
  static const GdkRGBA band_color = { 0.569f, 0.255f, 0.675f, 0.35f };
  g_autofree double *low = g_new (double, MAX (res->n_steps, 1u));
  g_autofree double *high = g_new (double, MAX (res->n_steps, 1u));
  gboolean any = FALSE;
  DwPlotSeries *series;

  for (guint i = 0; i < res->n_steps; i++)
    {
      gboolean banded = isfinite (values[i]) && isfinite (bounds[i]) && bounds[i] > 0;

      low[i] = banded ? values[i] - bounds[i] : values[i];
      high[i] = banded ? values[i] + bounds[i] : values[i];
      any |= banded;
    }
  if (!any)
    return;
  series
    = dw_chart_add_series (chart, "whatif-low", _ ("What-if ≈, lower error bound"), &band_color);
  dw_plot_series_append (series, res->steps, NULL, low, res->n_steps);
  series
    = dw_chart_add_series (chart, "whatif-high", _ ("What-if ≈, upper error bound"), &band_color);
  dw_plot_series_append (series, res->steps, NULL, high, res->n_steps);
}

/* The summary grid: its heading, and a row per chart whose texts each evaluation sets
 * (dw_tune_view_set_summary_row), hidden until there is a result. */
static void
dw_tune_view_build_summary (DwTuneView *self)
{
  const char *headings[4] = { _ ("Metric"), _ ("Logged"), _ ("What-if"), _ ("Change") };

  for (int col = 0; col < 4; col++)
    dw_tune_view_summary_cell (self, col, 0, headings[col], col > 0, TRUE);
  for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
    {
      g_autofree char *name = g_strdup_printf ("whatif-%s", dw_tune_chart_specs[c].canonical);

      for (int col = 0; col < 4; col++)
        self->summary_cells[c][col] = GTK_LABEL (dw_tune_view_summary_cell (
          self, col, (int)c + 1, col == 0 ? _ (dw_tune_chart_specs[c].title) : "—", col > 0,
          FALSE));
      gtk_widget_set_name (GTK_WIDGET (self->summary_cells[c][2]), name);
    }
}

/* the texts of chart @c's summary row (NULL: the row is hidden) */
static void
dw_tune_view_set_summary_row (DwTuneView *self, guint c, const char *logged, const char *whatif,
                              const char *change)
{
  const char *texts[4] = { NULL, logged, whatif, change };

  for (int col = 0; col < 4; col++)
    {
      GtkLabel *cell = self->summary_cells[c][col];

      if (texts[col] != NULL && g_strcmp0 (gtk_label_get_text (cell), texts[col]) != 0)
        gtk_label_set_text (cell, texts[col]);
      gtk_widget_set_visible (GTK_WIDGET (cell), logged != NULL);
    }
}

/* whether @values [@n] holds a value: the config produces the metric */
static gboolean
dw_tune_view_any_value (const double *values, guint n)
{
  for (guint i = 0; i < n; i++)
    if (!isnan (values[i]))
      return TRUE;
  return FALSE;
}

/* The health rules on the what-if series of the cards, listed under the summary (docs/TUNE.md),
 * once the controls rest (dw_tune_view_schedule_health) or every value is exact. */
static void
dw_tune_view_update_health (gpointer user_data)
{
  DwTuneView *self = user_data;
  const DwWhatifRunResult *res = self->result;

  g_clear_handle_id (&self->health_id, g_source_remove);
  if (res == NULL)
    {
      gtk_label_set_text (self->health_label, "");
      return;
    }
  g_autoptr (GPtrArray) events
    = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_health_event_free);
  double *all_values, *all_bounds;
  gboolean any_approx[DW_TUNE_N_CHARTS];
  dw_tune_view_whatif_values (self, &all_values, &all_bounds, any_approx);
  for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
    {
      const double *values = all_values + (gsize)c * res->n_steps;
      /* a metric the config does not produce has no series to judge */
      if (dw_tune_view_any_value (values, res->n_steps))
        dw_tune_view_check_health (res, dw_tune_chart_specs[c].canonical, values, events);
    }
  dw_tune_view_show_health (self, events, res->any_approximate);
}

/* The health rules run when the controls rest: at 3000 steps they cost about 1 ms of a move
 * (6 series through their rules), and what they find is read once the values stop moving; until
 * then the text is that of the result before. */
static void
dw_tune_view_schedule_health (DwTuneView *self)
{
  g_clear_handle_id (&self->health_id, g_source_remove);
  self->health_id
    = g_timeout_add_once (DW_TUNE_VIEW_REFINE_DELAY, dw_tune_view_update_health, self);
}

static void
dw_tune_view_update_charts_and_summary (DwTuneView *self)
{
  const DwWhatifRunResult *res = self->result;
  dw_tune_view_update_legend (self, res != NULL && res->any_approximate);
  if (!res)
    {
      dw_tune_view_update_health (self);
      for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
        dw_tune_view_set_summary_row (self, c, NULL, NULL, NULL);
      return;
    }
  dw_tune_view_schedule_health (self);
  double *all_values, *all_bounds;
  gboolean any_approx[DW_TUNE_N_CHARTS];
  dw_tune_view_whatif_values (self, &all_values, &all_bounds, any_approx);
  g_autofree double *logged_at = g_new (double, MAX (res->n_steps, 1u));
  /* purple: orange would read as a warning */
  static const GdkRGBA whatif_color = { 0.569f, 0.255f, 0.675f, 1.0f };
  for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
    {
      const double *values = all_values + (gsize)c * res->n_steps;
      const double *bounds = all_bounds + (gsize)c * res->n_steps;
      const gboolean approx = any_approx[c];
      DwChart *chart = dw_chart_card_get_chart (self->cards[c]);
      dw_chart_remove_series (chart, "whatif");
      dw_chart_remove_series (chart, "whatif-low");
      dw_chart_remove_series (chart, "whatif-high");
      if (!dw_tune_view_any_value (values, res->n_steps))
        {
          /* the config does not produce this metric (e.g. no veto at verl HEAD) */
          dw_chart_data_changed (chart);
          dw_tune_view_set_summary_row (self, c, "—", "—", "—");
          continue;
        }
      DwPlotSeries *s = dw_chart_add_series (
        chart, "whatif", approx ? _ ("What-if (≈ approximate)") : _ ("What-if"), &whatif_color);
      dw_plot_series_append (s, res->steps, NULL, values, res->n_steps);
      if (approx)
        dw_tune_view_add_band (chart, res, values, bounds);
      dw_chart_data_changed (chart);

      /* logged mean over the same steps */
      DwPlotSeries *ls = dw_chart_get_series (chart, "logged");
      for (guint i = 0; i < res->n_steps; i++)
        logged_at[i] = NAN;
      if (ls)
        {
          const gint64 *st = dw_plot_series_get_steps (ls);
          const double *lv = dw_pyramid_get_values (dw_plot_series_get_raw (ls));
          const gsize n_logged = dw_plot_series_get_length (ls);
          gsize j = 0;
          /* both in ascending steps: one merge walk (a search per step cost 18 000 probes a
           * move at 3000 steps × 6 charts) */
          for (guint i = 0; i < res->n_steps; i++)
            {
              if (i > 0 && res->steps[i] < res->steps[i - 1])
                j = 0;
              while (j < n_logged && st[j] < res->steps[i])
                j++;
              if (j < n_logged && st[j] == res->steps[i])
                logged_at[i] = lv[j];
            }
        }
      double lm = dw_tune_view_finite_mean (logged_at, res->n_steps);
      double wm = dw_tune_view_finite_mean (values, res->n_steps);
      g_autofree char *lt = dw_tune_view_format_metric (lm, FALSE, 0);
      g_autofree char *wt = dw_tune_view_format_metric (
        wm, approx, dw_tune_view_mean_bound (values, bounds, res->n_steps));
      g_autofree char *dt
        = isfinite (lm) && isfinite (wm) ? g_strdup_printf ("%+.3g", wm - lm) : g_strdup ("—");
      dw_tune_view_set_summary_row (self, c, lt, wt, dt);
    }
}

/* Why a card has nothing to draw: the run did not log the metric and the config does not make it.
 * The veto card says why when the reason is the veto (off, or not in this generation). */
static const char *
dw_tune_view_empty_reason (DwTuneView *self, const DwTuneChartSpec *spec)
{
  DwPlan plan;
  DwCorrectionError error;

  if (g_strcmp0 (spec->canonical, "veto_fraction") == 0)
    {
      if (dw_tune_controls_role_key (self, DW_ROLE_VETO_THRESHOLD) == NULL)
        return _ ("This generation has no token veto");
      if (dw_plan_build (&self->config, &plan, &error) && !plan.veto_on)
        return _ ("Veto is off in this configuration");
    }
  return _ ("Neither logged by the run nor produced by this config");
}

static void
dw_tune_view_update_empty_labels (DwTuneView *self)
{
  for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
    {
      DwChart *chart = dw_chart_card_get_chart (self->cards[c]);
      gboolean empty = !self->loading && dw_chart_get_n_series (chart) == 0;

      dw_chart_card_set_empty_text (
        self->cards[c], empty ? dw_tune_view_empty_reason (self, &dw_tune_chart_specs[c]) : NULL);
      /* the text alone: no empty axes behind it */
      gtk_widget_set_opacity (GTK_WIDGET (chart), empty ? 0.0 : 1.0);
    }
}

static void
dw_tune_view_update_status (DwTuneView *self)
{
  dw_tune_view_update_empty_labels (self);
  g_autoptr (GString) s = g_string_new (NULL);
  if (self->loading)
    g_string_append (s, _ ("Precomputing the run’s batches…"));
  else if (!self->engine)
    g_string_append (s, self->error_text ? self->error_text
                                         : _ ("Choose a run with stored rollout batches."));
  else if (self->result)
    {
      guint failed = 0;
      const char *msg = NULL;
      DwErrorKind kind = DW_ERROR_NONE;
      for (guint i = 0; i < self->result->n_steps; i++)
        if (self->result->results[i].failed)
          {
            failed++;
            msg = self->result->results[i].error.message;
            kind = self->result->results[i].error.kind;
          }
      g_string_append_printf (s,
                              g_dngettext (GETTEXT_PACKAGE, "%u step re-evaluated",
                                           "%u steps re-evaluated", self->result->n_steps),
                              self->result->n_steps);
      if (failed)
        g_string_append_printf (s, _ (" — verl raises %s on %u: %s"), dw_error_kind_name (kind),
                                failed, msg);
      else if (self->result->any_approximate && self->exact_running)
        /* TRANSLATORS: %u of %u: steps made exact so far, of those that need it */
        g_string_append_printf (s,
                                _ (" — values marked ≈ are approximate (± their error bound), "
                                   "made exact in the background: %u of %u steps"),
                                self->exact_done, self->exact_total);
      else if (self->result->any_approximate && self->error_text != NULL)
        /* TRANSLATORS: %s says why the raw batches could not be read */
        g_string_append_printf (s,
                                _ (" — values marked ≈ are approximate (± their error bound); "
                                   "they cannot be made exact: %s"),
                                self->error_text);
      else if (self->result->any_approximate)
        g_string_append (s, _ (" — values marked ≈ are approximate (± their error bound)"));
      else
        g_string_append (s, _ (" — exact"));
      if (self->compact)
        g_string_append (s, _ (" · large run: token statistics kept as a sketch"));
      if (self->load_note != NULL)
        g_string_append_printf (s, " · %s", self->load_note);
    }
  gtk_label_set_text (self->status_label, s->str);
}

/* the config's token thresholds on the histogram */
static void
dw_tune_view_update_thresholds (DwTuneView *self)
{
  DwTuneThreshold thresholds[DW_TUNE_HISTOGRAM_MAX_THRESHOLDS];
  guint n_thresholds = dw_tune_controls_thresholds (self, thresholds, G_N_ELEMENTS (thresholds));

  dw_tune_histogram_set_thresholds (self->histogram, thresholds, n_thresholds);
}

static void
dw_tune_view_set_result (DwTuneView *self, DwWhatifRunResult *res)
{
  g_clear_pointer (&self->result, dw_whatif_run_result_free);
  self->result = res;
  dw_tune_view_update_charts_and_summary (self);
  dw_tune_length_bias_set_result (self->length_bias, res);
  dw_tune_view_update_thresholds (self);
  dw_tune_view_update_status (self);
  g_signal_emit (self, signals[SIGNAL_EVALUATED], 0, !res->any_approximate);
}

/* the refined values on screen: once per frame however many steps arrived */
static void
dw_tune_view_refresh_refined_cb (gpointer user_data)
{
  DwTuneView *self = user_data;

  self->refresh_id = 0;
  if (self->result == NULL)
    return;
  dw_tune_view_update_charts_and_summary (self);
  dw_tune_view_update_status (self);
}

/* one step made exact by the refinement: its result replaces the approximate one */
static void
dw_tune_view_refined_cb (guint index, DwWhatifStepResult *exact, gpointer user_data)
{
  DwTuneView *self = user_data;
  DwWhatifStepResult old;

  if (self->result == NULL || index >= self->result->n_steps)
    return;
  old = self->result->results[index];
  self->result->results[index] = *exact;
  *exact = old; /* cleared by the caller */
  self->exact_done++;
  if (self->refresh_id == 0)
    self->refresh_id = g_timeout_add_once (16, dw_tune_view_refresh_refined_cb, self);
}

static void
dw_tune_view_refine_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (DwTuneView) self = user_data;
  g_autoptr (GError) error = NULL;

  if (!dw_tune_loader_refine_finish (DW_STORE_READER (source), result, &error)
      && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* superseded by a newer change */
  self->exact_running = FALSE;
  g_clear_object (&self->exact_cancellable);
  g_clear_handle_id (&self->refresh_id, g_source_remove);
  if (error != NULL)
    {
      g_free (self->error_text);
      self->error_text = g_strdup (error->message);
      dw_tune_view_update_status (self);
      dw_tune_view_busy_changed (self);
      return;
    }
  self->result->any_approximate = FALSE;
  dw_tune_view_update_charts_and_summary (self);
  /* every value exact: judged now, the page is at rest */
  dw_tune_view_update_health (self);
  dw_tune_view_update_status (self);
  g_signal_emit (self, signals[SIGNAL_EVALUATED], 0, TRUE);
  dw_tune_view_busy_changed (self);
}

/* Makes the approximate and pending steps of the shown result exact, one by one in a thread,
 * from the raw batches (the page updates as they arrive). */
static void
dw_tune_view_start_refinement (DwTuneView *self)
{
  g_autoptr (GArray) indices = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint index = 0; index < self->result->n_steps; index++)
    {
      const DwWhatifStepResult *step = &self->result->results[index];

      if ((step->any_approximate || step->pending) && !step->failed)
        g_array_append_val (indices, index);
    }
  g_clear_pointer (&self->error_text, g_free);
  self->exact_cancellable = g_cancellable_new ();
  self->exact_running = TRUE;
  self->exact_done = 0;
  self->exact_total = indices->len;
  dw_tune_loader_refine_async (self->reader, self->engine, &self->config,
                               (const guint *)(gpointer)indices->data, indices->len,
                               self->exact_cancellable, dw_tune_view_refined_cb, self,
                               dw_tune_view_refine_done_cb, g_object_ref (self));
}

/* the controls rested: the refinement of the result shown starts */
static void
dw_tune_view_refine_later_cb (gpointer user_data)
{
  DwTuneView *self = user_data;

  self->refine_id = 0;
  dw_tune_view_start_refinement (self);
  dw_tune_view_update_status (self);
}

/* the refinement of the result shown stops, with its deliveries and redraw still pending */
static void
dw_tune_view_stop_refinement (DwTuneView *self)
{
  if (self->exact_cancellable)
    {
      g_cancellable_cancel (self->exact_cancellable);
      g_clear_object (&self->exact_cancellable);
    }
  self->exact_running = FALSE;
  g_clear_handle_id (&self->refine_id, g_source_remove);
  g_clear_handle_id (&self->refresh_id, g_source_remove);
}

static void
dw_tune_view_evaluate_now (DwTuneView *self)
{
  g_autoptr (GError) error = NULL;
  self->dirty = FALSE;
  if (!self->engine)
    return;
  dw_tune_view_stop_refinement (self);
  DwWhatifRunResult *res = dw_whatif_engine_evaluate_rows (self->engine, &self->config, &error);
  if (!res)
    {
      g_free (self->error_text);
      self->error_text = g_strdup (error->message);
      dw_tune_view_update_status (self);
      return;
    }
  dw_tune_view_set_result (self, res);
  if (res->any_approximate)
    {
      /* not while a slider is dragged: a refinement started every frame would be cancelled the
       * next, and take a processor from the evaluations meanwhile (docs/TUNE.md) */
      self->exact_running = TRUE;
      self->exact_done = self->exact_total = 0;
      for (guint index = 0; index < res->n_steps; index++)
        self->exact_total += (res->results[index].any_approximate || res->results[index].pending)
                             && !res->results[index].failed;
      self->refine_id
        = g_timeout_add_once (DW_TUNE_VIEW_REFINE_DELAY, dw_tune_view_refine_later_cb, self);
      dw_tune_view_update_status (self);
    }
  dw_tune_view_busy_changed (self);
}

static gboolean
dw_tune_view_tick_cb (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  DwTuneView *self = DW_TUNE_VIEW (widget);
  self->tick_id = 0;
  if (self->dirty)
    dw_tune_view_evaluate_now (self);
  return G_SOURCE_REMOVE;
}

static void
dw_tune_view_idle_evaluate_cb (gpointer user_data)
{
  DwTuneView *self = user_data;
  self->idle_id = 0;
  if (self->dirty)
    dw_tune_view_evaluate_now (self);
}

/* At most one evaluation per frame however many changes arrive (a dragged slider emits many);
 * unmapped (tests, offscreen rendering), an idle does the same. */
static void
dw_tune_view_schedule_evaluation (DwTuneView *self)
{
  if (!self->engine || self->loading)
    return;
  gboolean was_busy = dw_tune_view_get_busy (self);
  self->dirty = TRUE;
  /* the values shown are about to be replaced: the refinement stops now, not when the frame's
   * evaluation starts (its deliveries and its redraw of the charts, at a higher priority than the
   * frame, ran first and held back a click after a rest by up to 2 ms, docs/BENCHMARKS.md) */
  dw_tune_view_stop_refinement (self);
  if (self->tick_id || self->idle_id)
    return;
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    self->tick_id
      = gtk_widget_add_tick_callback (GTK_WIDGET (self), dw_tune_view_tick_cb, NULL, NULL);
  else
    self->idle_id = g_idle_add_once (dw_tune_view_idle_evaluate_cb, self);
  if (!was_busy)
    dw_tune_view_busy_changed (self);
}

void
dw_tune_view_step_changed_cb (GtkAdjustment *adj, DwTuneView *self)
{
  if (!self->engine)
    return;
  guint idx = (guint)gtk_adjustment_get_value (adj);
  if (idx < dw_whatif_engine_get_n_steps (self->engine))
    {
      const DwWhatifStep *shown = dw_whatif_engine_get_step (self->engine, idx);
      gint64 step = dw_whatif_step_get_step (shown);

      dw_tune_histogram_set_step (self->histogram, shown);
      g_autofree char *t = g_strdup_printf (
        _ ("Token log-ratios ℓ = log π_train − log π_rollout at step %" PRId64), step);
      gtk_label_set_text (self->hist_title, t);
      for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
        dw_chart_set_cursor_x (dw_chart_card_get_chart (self->cards[c]), (double)step);
    }
}

/* A click on a chart picks the step under the pointer for the histogram. */
static void
dw_tune_view_chart_released_cb (GtkGestureClick *gesture, int n_press, double x, double y,
                                DwTuneView *self)
{
  GtkWidget *chart = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture));
  dw_chart_hover (DW_CHART (chart), x, y);
  double cx = dw_chart_get_cursor_x (DW_CHART (chart));
  if (!isfinite (cx) || !self->engine)
    return;
  guint n = dw_whatif_engine_get_n_steps (self->engine);
  guint best = 0;
  double bd = INFINITY;
  for (guint i = 0; i < n; i++)
    {
      double d
        = fabs ((double)dw_whatif_step_get_step (dw_whatif_engine_get_step (self->engine, i)) - cx);
      if (d < bd)
        {
          bd = d;
          best = i;
        }
    }
  gtk_adjustment_set_value (self->step_adjustment, best);
}

static void
dw_tune_view_load_logged_series (DwTuneView *self)
{
  static const GdkRGBA logged_color = { 0.208f, 0.518f, 0.894f, 1.0f };
  for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
    {
      DwChart *chart = dw_chart_card_get_chart (self->cards[c]);
      dw_chart_clear (chart);
      if (!self->store)
        continue;
      g_autoptr (GError) error = NULL;
      /* a canonical metric by its id; another by the key the run's generation logs it as */
      g_autofree char *tag = dw_canonical_lookup (dw_tune_chart_specs[c].canonical)
                               ? g_strdup (dw_tune_chart_specs[c].canonical)
                               : g_strconcat (dw_schema_get (self->run_gen)->metric_prefix,
                                              dw_tune_chart_specs[c].canonical, NULL);
      g_autoptr (DwSeries) s
        = dw_store_get_series (self->store, self->run_id, tag, G_MININT64, &error);
      if (!s && dw_tune_chart_specs[c].alternative != NULL)
        {
          g_clear_error (&error);
          s = dw_store_get_series (self->store, self->run_id, dw_tune_chart_specs[c].alternative,
                                   G_MININT64, &error);
        }
      if (!s)
        continue; /* the run did not log it */
      DwPlotSeries *ps = dw_chart_add_series (chart, "logged", _ ("Logged"), &logged_color);
      dw_plot_series_append (ps, s->steps, s->wall_times, s->values, s->n);
      dw_chart_data_changed (chart);
    }
}

static void
dw_tune_view_load_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (DwTuneView) self = user_data;
  g_autoptr (GError) error = NULL;
  g_autofree char *note = NULL;
  DwWhatifEngine *engine
    = dw_tune_loader_load_finish (DW_STORE_READER (source), result, &note, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  g_free (self->load_note);
  self->load_note = g_steal_pointer (&note);
  self->loading = FALSE;
  g_clear_object (&self->load_cancellable);
  if (!engine)
    {
      g_free (self->error_text);
      self->error_text
        = g_strdup_printf (_ ("Cannot precompute the run’s batches: %s"), error->message);
      dw_tune_view_update_status (self);
      dw_tune_view_busy_changed (self);
      return;
    }
  guint n = dw_whatif_engine_get_n_steps (engine);
  if (n == 0)
    {
      dw_whatif_engine_unref (engine);
      g_free (self->error_text);
      self->error_text = g_strdup (
        _ ("This run has no stored rollout batches. What-if needs the per-token log-probs: "
           "dump them with the trainer (batches/step_NNNNNN.safetensors) and ingest the run "
           "folder again."));
      dw_tune_view_update_status (self);
      dw_tune_view_busy_changed (self);
      return;
    }
  self->engine = engine;
  gtk_adjustment_configure (self->step_adjustment, n ? n - 1 : 0, 0, n ? n - 1 : 0, 1, 10, 0);
  dw_tune_view_step_changed_cb (self->step_adjustment, self);
  self->compact = dw_whatif_step_is_compact (dw_whatif_engine_get_step (engine, 0));
  dw_tune_length_bias_set_engine (self->length_bias, engine);
  /* evaluate at once: the first evaluation also creates the engine's thread pool on this
   * thread, before any exact pass could race for it */
  self->dirty = TRUE;
  dw_tune_view_evaluate_now (self);
  if (!self->result)
    dw_tune_view_busy_changed (self);
}

/* the result cards: one legend, then two columns of cards */
static void
dw_tune_view_build_cards (DwTuneView *self)
{
  dw_tune_view_update_legend (self, FALSE);
  for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
    {
      const DwTuneChartSpec *spec = &dw_tune_chart_specs[c];
      DwChartCard *card
        = DW_CHART_CARD (dw_chart_card_new (spec->canonical, _ (spec->title), NULL));
      DwChart *chart = dw_chart_card_get_chart (card);
      g_autofree char *name = g_strdup_printf ("chart-%s", spec->canonical);
      const DwCanonicalMetric *metric = dw_canonical_lookup (spec->canonical);
      GtkGesture *click = gtk_gesture_click_new ();

      self->cards[c] = card;
      gtk_widget_set_name (GTK_WIDGET (chart), name);
      gtk_widget_set_size_request (GTK_WIDGET (chart), 260, 190);
      dw_chart_set_natural_width (chart, 280);
      gtk_widget_set_hexpand (GTK_WIDGET (card), TRUE);
      if (metric && isfinite (metric->ideal))
        dw_chart_add_threshold (chart, metric->ideal, DW_THRESHOLD_IDEAL, NULL);
      /* a click on a chart picks the step under the pointer for the histogram */
      g_signal_connect (click, "released", G_CALLBACK (dw_tune_view_chart_released_cb), self);
      gtk_widget_add_controller (GTK_WIDGET (chart), GTK_EVENT_CONTROLLER (click));
      gtk_flow_box_append (self->charts_box, GTK_WIDGET (card));
    }
}

static void
dw_tune_view_dispose (GObject *object)
{
  DwTuneView *self = DW_TUNE_VIEW (object);

  if (self->load_cancellable)
    g_cancellable_cancel (self->load_cancellable);
  if (self->exact_cancellable)
    g_cancellable_cancel (self->exact_cancellable);
  g_clear_object (&self->load_cancellable);
  g_clear_object (&self->exact_cancellable);
  g_clear_handle_id (&self->idle_id, g_source_remove);
  g_clear_handle_id (&self->refresh_id, g_source_remove);
  g_clear_handle_id (&self->refine_id, g_source_remove);
  g_clear_handle_id (&self->health_id, g_source_remove);
  if (self->tick_id)
    {
      gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->tick_id);
      self->tick_id = 0;
    }
  if (self->save_dialog)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->save_dialog));
      g_clear_object (&self->save_dialog);
    }
  if (self->histogram != NULL)
    dw_tune_histogram_set_step (self->histogram, NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), DW_TYPE_TUNE_VIEW);
  G_OBJECT_CLASS (dw_tune_view_parent_class)->dispose (object);
}

static void
dw_tune_view_finalize (GObject *object)
{
  DwTuneView *self = DW_TUNE_VIEW (object);

  g_clear_pointer (&self->result, dw_whatif_run_result_free);
  g_clear_pointer (&self->engine, dw_whatif_engine_unref);
  g_clear_object (&self->store);
  g_clear_object (&self->reader);
  g_clear_pointer (&self->run_info, dw_run_info_free);
  g_free (self->preset);
  g_free (self->error_text);
  g_free (self->load_note);
  g_strfreev (self->levels);
  g_free (self->run_gen_source);
  g_free (self->run_check_text);
  for (guint index = 0; index < DW_TUNE_VIEW_KEY_TABLES; index++)
    dw_whatif_keys_unref (self->key_positions[index].keys);
  g_free (self->chart_values);
  G_OBJECT_CLASS (dw_tune_view_parent_class)->finalize (object);
}

static void
dw_tune_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwTuneView *self = DW_TUNE_VIEW (object);

  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, dw_tune_view_get_busy (self));
      break;
    case PROP_RUN_ID:
      g_value_set_int64 (value, self->run_id);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_tune_view_class_init (DwTuneViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = dw_tune_view_dispose;
  object_class->finalize = dw_tune_view_finalize;
  object_class->get_property = dw_tune_view_get_property;

  /**
   * DwTuneView:busy:
   *
   * Whether the run is being precomputed or a change is waiting for (or in) evaluation.
   */
  properties[PROP_BUSY] = g_param_spec_boolean (
    "busy", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * DwTuneView:run-id:
   *
   * The run being tuned, 0 for none.
   */
  properties[PROP_RUN_ID]
    = g_param_spec_int64 ("run-id", NULL, NULL, 0, G_MAXINT64, 0,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * DwTuneView::evaluated:
   * @self: the view
   * @exact: whether every value is exact (FALSE: some are approximate, the exact pass runs)
   *
   * Emitted when a new evaluation of the run is shown: at most once per frame for the changes
   * made during it, and again when the exact pass replaces approximate values.
   */
  signals[SIGNAL_EVALUATED]
    = g_signal_new ("evaluated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                    G_TYPE_NONE, 1, G_TYPE_BOOLEAN);

  g_type_ensure (DW_TYPE_CHART);
  g_type_ensure (DW_TYPE_TUNE_HISTOGRAM);
  g_type_ensure (DW_TYPE_TUNE_LENGTH_BIAS);
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PATH "/dw-tune-view.ui");
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, generation_row);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, function_row);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, preset_row);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, config_group);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, is_group);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, is_level_row);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, is_mode_row);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, rs_group);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, veto_group);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, grammar_label);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, format_dropdown);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, status_label);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, charts_box);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, charts_legend);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, flap);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, controls_scroller);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, content_scroller);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, step_scale);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, run_title);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, run_subtitle);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, hist_title);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, histogram);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, step_adjustment);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, length_bias);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, summary_grid);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, health_label);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, modified_row);
  gtk_widget_class_bind_template_callback (widget_class, dw_tune_view_step_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, dw_tune_controls_generation_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, dw_tune_controls_preset_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, dw_tune_controls_is_level_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, dw_tune_controls_is_mode_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, dw_tune_controls_function_selected_cb);

  dw_tune_actions_install (widget_class);
  gtk_widget_class_install_action (widget_class, "tune.reset-preset", NULL,
                                   dw_tune_controls_reset_preset_action);
}

static void
dw_tune_view_init (DwTuneView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* what the controls ask of the view when the config changed (they never call this file) */
  self->schedule_evaluation = dw_tune_view_schedule_evaluation;
  self->run_gen = DW_GEN_VERL_LATEST;
  self->compact_tokens = DW_TUNE_COMPACT_TOKENS;
  dw_tune_controls_build (self);
  dw_tune_view_build_cards (self);
  dw_tune_view_build_summary (self);
  dw_wheel_guard_attach (GTK_WIDGET (self->step_scale));
  dw_tune_controls_set_generation (self, DW_GEN_VERL_LATEST, DW_TUNE_DEFAULT_PRESET);
  dw_tune_view_update_charts_and_summary (self);
  dw_tune_view_update_status (self);
}

/* ------------------------------------------------------------------------------------------ */
/* The run's own generation and config (from ingest), and whether its log agrees with them    */

typedef struct
{
  DwTuneView *view; /* a reference */
  gint64 run_id;
} DwTuneViewCheck;

static void
dw_tune_view_check_data_free (DwTuneViewCheck *d)
{
  g_object_unref (d->view);
  g_free (d);
}

static void
dw_tune_view_run_check_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  DwTuneViewCheck *d = user_data;
  DwTuneView *self = d->view;
  g_autoptr (GError) error = NULL;
  g_autofree DwRunCheck *check
    = dw_tune_loader_check_finish (DW_STORE_READER (source), result, &error);

  if (check != NULL && self->run_id == d->run_id)
    {
      self->run_agreement = check->agreement;
      g_free (self->run_check_text);
      self->run_check_text = dw_run_check_describe (check);
      dw_tune_controls_update_run_header (self);
    }
  dw_tune_view_check_data_free (d);
}

/* Starts the page from the generation and config ingest found for the run, and checks in a
 * thread that the run's logged metrics agree with a recompute under them. */
static void
dw_tune_view_load_run_config (DwTuneView *self)
{
  DwRunConfig own;

  self->run_gen = DW_GEN_VERL_LATEST;
  self->run_has_config = FALSE;
  self->run_agreement = DW_RUN_AGREEMENT_UNKNOWN;
  g_clear_pointer (&self->run_gen_source, g_free);
  g_clear_pointer (&self->run_check_text, g_free);
  if (self->store == NULL || !dw_run_config_load (self->store, self->run_id, &own, NULL))
    return;
  if (!own.has_generation)
    {
      /* no meta: the newest generation consistent with the run's keys, as the store reads them */
      const char *source = NULL;
      g_autofree char *name
        = dw_store_get_run_generation (self->store, self->run_id, &source, NULL);
      if (name == NULL || !dw_generation_from_name (name, &own.generation))
        return;
      g_strlcpy (own.source, g_strcmp0 (source, "keys") == 0 ? "inferred" : source,
                 sizeof own.source);
    }
  self->run_gen = own.generation;
  self->run_has_config = own.has_config;
  self->run_gen_source = g_strdup (own.source);
  if (own.has_config)
    {
      dw_tune_view_set_config (self, NULL, &own.config);
      g_clear_pointer (&self->preset, g_free); /* no preset: the run's own values */
      dw_tune_controls_update_modified (self);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (self->preset_row),
                                   _ ("The run’s own config, as its log printed it"));

      DwTuneViewCheck *d = g_new0 (DwTuneViewCheck, 1);
      d->view = g_object_ref (self);
      d->run_id = self->run_id;
      dw_tune_loader_check_async (self->reader, self->run_id, self->load_cancellable,
                                  dw_tune_view_run_check_done_cb, d);
    }
  else if (own.generation != self->gen)
    dw_tune_controls_set_generation (self, own.generation, self->preset);
}

/* ------------------------------------------------------------------------------------------ */
/* Public API                                                                                 */

GtkWidget *
dw_tune_view_new (void)
{
  return g_object_new (DW_TYPE_TUNE_VIEW, NULL);
}

void
dw_tune_view_set_run (DwTuneView *self, DwStore *store, gint64 run_id)
{
  g_return_if_fail (DW_IS_TUNE_VIEW (self));
  g_return_if_fail (store == NULL || DW_IS_STORE (store));

  if (self->load_cancellable)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  if (self->exact_cancellable)
    g_cancellable_cancel (self->exact_cancellable);
  g_clear_object (&self->exact_cancellable);
  self->exact_running = FALSE;
  g_clear_handle_id (&self->refresh_id, g_source_remove);
  g_clear_handle_id (&self->refine_id, g_source_remove);
  g_clear_handle_id (&self->health_id, g_source_remove);
  g_clear_pointer (&self->result, dw_whatif_run_result_free);
  g_clear_pointer (&self->engine, dw_whatif_engine_unref);
  g_clear_pointer (&self->error_text, g_free);
  g_clear_pointer (&self->load_note, g_free);
  self->compact = FALSE;
  dw_tune_histogram_set_step (self->histogram, NULL);
  dw_tune_length_bias_set_engine (self->length_bias, NULL);
  g_set_object (&self->store, store);
  /* the page's reads go through a reader of its own on the store's file */
  if (store == NULL
      || (self->reader != NULL
          && g_strcmp0 (dw_store_reader_get_path (self->reader), dw_store_get_path (store)) != 0))
    g_clear_object (&self->reader);
  if (store != NULL && self->reader == NULL)
    self->reader = dw_store_reader_new (dw_store_get_path (store));
  self->run_id = store ? run_id : 0;
  g_clear_pointer (&self->run_info, dw_run_info_free);
  if (store != NULL)
    self->run_info = dw_store_get_run (store, run_id, NULL);
  dw_tune_controls_update_run_header (self);
  dw_tune_view_load_logged_series (self);
  self->loading = store != NULL;
  if (store)
    {
      self->load_cancellable = g_cancellable_new ();
      dw_tune_loader_load_async (self->reader, run_id, self->compact_tokens, self->load_cancellable,
                                 dw_tune_view_load_done_cb, g_object_ref (self));
    }
  dw_tune_view_load_run_config (self);
  dw_tune_controls_update_run_header (self);
  dw_tune_view_update_charts_and_summary (self);
  dw_tune_view_update_status (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUN_ID]);
  dw_tune_view_busy_changed (self);
}

gint64
dw_tune_view_get_run_id (DwTuneView *self)
{
  g_return_val_if_fail (DW_IS_TUNE_VIEW (self), 0);
  return self->run_id;
}

const DwConfig *
dw_tune_view_get_config (DwTuneView *self)
{
  g_return_val_if_fail (DW_IS_TUNE_VIEW (self), NULL);
  return &self->config;
}

void
dw_tune_view_set_config (DwTuneView *self, const char *preset, const DwConfig *config)
{
  g_return_if_fail (DW_IS_TUNE_VIEW (self));
  g_return_if_fail (config != NULL);
  dw_tune_controls_set_config (self, preset, config);
}

void
dw_tune_view_set_compact_tokens (DwTuneView *self, guint64 n_tokens)
{
  g_return_if_fail (DW_IS_TUNE_VIEW (self));
  self->compact_tokens = n_tokens;
}

gboolean
dw_tune_view_get_compact (DwTuneView *self)
{
  g_return_val_if_fail (DW_IS_TUNE_VIEW (self), FALSE);
  return self->compact;
}

gboolean
dw_tune_view_get_modified (DwTuneView *self)
{
  g_autofree char *changes = NULL;

  g_return_val_if_fail (DW_IS_TUNE_VIEW (self), FALSE);
  changes = dw_tune_controls_describe_changes (self);
  return *changes != '\0';
}

gboolean
dw_tune_view_get_busy (DwTuneView *self)
{
  g_return_val_if_fail (DW_IS_TUNE_VIEW (self), FALSE);
  return self->loading || self->dirty || self->exact_running;
}

const DwWhatifRunResult *
dw_tune_view_get_result (DwTuneView *self)
{
  g_return_val_if_fail (DW_IS_TUNE_VIEW (self), NULL);
  return self->result;
}

char *
dw_tune_view_export_config (DwTuneView *self, const char *format, GError **error)
{
  g_return_val_if_fail (DW_IS_TUNE_VIEW (self), NULL);
  return dw_tune_export_config (&self->config, format, error);
}

gboolean
dw_tune_view_import_config (DwTuneView *self, const char *text, GError **error)
{
  g_return_val_if_fail (DW_IS_TUNE_VIEW (self), FALSE);
  g_return_val_if_fail (text != NULL, FALSE);
  return dw_tune_actions_import (self, text, error);
}
