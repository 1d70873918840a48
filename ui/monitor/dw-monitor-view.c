/* dw-monitor-view.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-monitor-view"

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "dw-canonical.h"
#include "dw-drill-actions.h"
#include "dw-health.h"
#include "dw-monitor-view.h"
#include "dw-run-color.h"
#include "dw-run-item.h"
#include "dw-store-reader.h"
#include "dw-wheel-guard.h"

#define MAX_TAG_CARDS 60
#define CARD_HEIGHT   220

typedef struct
{
  const char *id;
  const char *title; /* N_(); NULL: the canonical title of metrics[0] */
  const char *metrics[4];
  gboolean always; /* shown even when no selected run logged it */
  /* the first metric is the card's own: its lines are labelled by run only, the others also by
   * metric (the IS card: verl ≥ 0.8's applied-weight mean, and the raw ratio mean verl ≤ 0.7.1
   * and slime log instead) */
  gboolean first_unlabelled;
} CardSpec;

/* The mismatch family first (always shown, so a run that does not log them says so), then the
 * training signals when logged. */
static const CardSpec mismatch_cards[] = {
  { "is_mean", NULL, { "is_mean", "is_raw_mean" }, TRUE, TRUE },
  { "ess", NULL, { "ess" }, TRUE },
  { "rejection",
    N_ ("Veto / rejection fraction"),
    { "veto_fraction", "rs_masked_fraction", "rs_seq_masked_fraction" },
    TRUE },
  { "kl", NULL, { "kl" }, TRUE },
  { "k3_kl", NULL, { "k3_kl" }, TRUE },
  { "ppl_ratio", NULL, { "ppl_ratio" }, TRUE },
};

static const CardSpec training_cards[] = {
  { "reward", NULL, { "reward" }, FALSE },
  { "response_length", NULL, { "response_length" }, FALSE },
  { "entropy", NULL, { "entropy" }, FALSE },
  { "grad_norm", NULL, { "grad_norm" }, FALSE },
};

typedef struct
{
  DwRunInfo *info;
  GdkRGBA color;
} RunEntry;

typedef struct
{
  DwChartCard *card;
  char **sources;        /* canonical ids, or logged tag names */
  GHashTable *last_step; /* "RUN\tSOURCE" → gint64*: the last step read */
  gsize n_points;
  gboolean always;
  gboolean first_unlabelled; /* CardSpec.first_unlabelled */
  gboolean pending;          /* its first load is in the worker */
} CardEntry;

typedef struct
{
  gint64 run_id;
  DwHealthEvent *event;
} EventEntry;

struct _DwMonitorView
{
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkSearchEntry *tag_entry;
  GtkScale *smoothing_scale;
  GtkAdjustment *smoothing_adjustment;
  GtkDropDown *x_mode_dropdown;
  GtkWidget *zoom_chip;
  GtkToggleButton *sync_zoom_toggle;
  gboolean syncing_zoom;
  GtkScrolledWindow *scroller;
  GtkBox *groups_box;

  GSettings *settings;
  DwStore *store;        /* main thread: live appends, tags */
  DwStoreReader *reader; /* worker threads: the first load of the shown series */
  GPtrArray *runs;       /* RunEntry* */
  GPtrArray *cards;      /* CardEntry* */
  GPtrArray *events;     /* EventEntry* */
  GRegex *tag_regex;
  GPtrArray *tag_groups; /* GtkWidget* of the tag groups, in groups_box */

  gboolean syncing_cursor;
  gboolean loading;
  guint generation;
  DwChartCard *current; /* not owned: cleared when the cards are rebuilt */
};

G_DEFINE_FINAL_TYPE (DwMonitorView, dw_monitor_view, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_SMOOTHING,
  PROP_X_MODE,
  PROP_LOADING,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
run_entry_free (gpointer data)
{
  RunEntry *r = data;

  dw_run_info_free (r->info);
  g_free (r);
}

static void
card_entry_free (gpointer data)
{
  CardEntry *c = data;

  g_strfreev (c->sources);
  g_hash_table_unref (c->last_step);
  g_free (c);
}

static void
event_entry_free (gpointer data)
{
  EventEntry *e = data;

  dw_health_event_free (e->event);
  g_free (e);
}

/* ---------------------------------------------------------------- reading series */

/* A second or third metric in one card (veto / rejected tokens / rejected sequences) is drawn in
 * a lighter or darker shade of the run's colour. */
static void
shade (const GdkRGBA *in, guint index, GdkRGBA *out)
{
  double t = index == 1 ? 0.45 : index == 2 ? -0.35 : 0;
  double target = t > 0 ? 1 : 0;

  t = fabs (t);
  out->red = in->red + (target - in->red) * t;
  out->green = in->green + (target - in->green) * t;
  out->blue = in->blue + (target - in->blue) * t;
  out->alpha = in->alpha;
}

static const char *
source_title (const char *source)
{
  const DwCanonicalMetric *m = dw_canonical_lookup (source);

  return m != NULL ? _ (m->title) : source;
}

/* Appends @s (the points of source @i of card @c in run @r, read after what was read before);
 * returns how many. */
static gsize
append_series (DwMonitorView *self, CardEntry *c, RunEntry *r, guint i, const DwSeries *s)
{
  DwChart *chart = dw_chart_card_get_chart (c->card);
  guint n_sources = g_strv_length (c->sources);
  g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT "\t%s", r->info->id, c->sources[i]);
  gint64 *last = g_hash_table_lookup (c->last_step, key);
  DwPlotSeries *ps;

  if (s == NULL || s->n == 0)
    return 0;
  ps = dw_chart_get_series (chart, key);
  if (ps == NULL)
    {
      g_autofree char *label = NULL;
      GdkRGBA color;

      shade (&r->color, i, &color);
      if (n_sources > 1 && !(c->first_unlabelled && i == 0))
        label = g_strdup_printf ("%s · %s", r->info->name, source_title (c->sources[i]));
      else
        label = g_strdup (r->info->name);
      ps = dw_chart_add_series (chart, key, label, &color);
    }
  dw_plot_series_append (ps, s->steps, s->wall_times, s->values, s->n);
  for (gsize j = 0; j < s->n_restarts; j++)
    if (last == NULL || s->restart_steps[j] > *last)
      dw_plot_series_add_restart (ps, s->restart_steps[j]);
  if (last == NULL)
    {
      last = g_new (gint64, 1);
      g_hash_table_insert (c->last_step, g_steal_pointer (&key), last);
    }
  *last = s->steps[s->n - 1];
  c->n_points += s->n;
  dw_chart_data_changed (chart);
  return s->n;
}

static gint64
last_read_step (CardEntry *c, gint64 run_id, const char *source)
{
  g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT "\t%s", run_id, source);
  gint64 *last = g_hash_table_lookup (c->last_step, key);

  return last ? *last : G_MININT64;
}

/* Reads the series of @source, NULL when the run did not log it (or on error, warned). */
static DwSeries *
read_series (DwStore *store, gint64 run_id, const char *source, gint64 after)
{
  g_autoptr (GError) error = NULL;
  DwSeries *s = dw_store_get_series (store, run_id, source, after, &error);

  if (s == NULL && !g_error_matches (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND))
    g_warning ("Reading %s of run %" G_GINT64_FORMAT ": %s", source, run_id, error->message);
  return s;
}

/* Reads (here, synchronously) and appends the points of (@c, @r) stored after what was read
 * before; returns how many. Live appends are small: the main thread does them. */
static gsize
load_card_run (DwMonitorView *self, CardEntry *c, RunEntry *r)
{
  gsize added = 0;

  for (guint i = 0; c->sources[i] != NULL; i++)
    {
      g_autoptr (DwSeries) s = read_series (self->store, r->info->id, c->sources[i],
                                            last_read_step (c, r->info->id, c->sources[i]));
      added += append_series (self, c, r, i, s);
    }
  return added;
}

static gboolean
card_has_source (CardEntry *c, const char *source)
{
  return source != NULL && g_strv_contains ((const char *const *)c->sources, source);
}

/* Markers at the first step each health rule fired: the card's own metrics' events, labelled,
 * plus the run's first warning on every card, so the start of a collapse lines up across the
 * grid; that one is only a line with its flag there (a rule of another metric written on this
 * card reads as if it were about this metric), its title in the hover read-out. */
static void
apply_markers (DwMonitorView *self, CardEntry *c)
{
  DwChart *chart = dw_chart_card_get_chart (c->card);

  dw_chart_clear_markers (chart);
  for (guint i = 0; i < self->runs->len; i++)
    {
      RunEntry *r = g_ptr_array_index (self->runs, i);
      EventEntry *first = NULL;

      for (guint j = 0; j < self->events->len; j++)
        {
          EventEntry *e = g_ptr_array_index (self->events, j);

          if (e->run_id != r->info->id)
            continue;
          if (e->event->severity >= DW_HEALTH_WARNING
              && (first == NULL || e->event->first_step < first->event->first_step))
            first = e;
          if (card_has_source (c, e->event->metric) || card_has_source (c, e->event->tag))
            {
              dw_chart_add_marker (chart, e->event->first_step,
                                   (DwMarkerSeverity)e->event->severity, _ (e->event->title), TRUE);
            }
        }
      if (first != NULL && !card_has_source (c, first->event->metric)
          && !card_has_source (c, first->event->tag))
        {
          dw_chart_add_marker (chart, first->event->first_step,
                               (DwMarkerSeverity)first->event->severity, _ (first->event->title),
                               FALSE);
        }
    }
}

/* ---------------------------------------------------------------- cards and groups */

static void
on_cursor_changed (DwChart *chart, GParamSpec *pspec, DwMonitorView *self)
{
  double x = dw_chart_get_cursor_x (chart);

  if (self->syncing_cursor)
    return;
  for (guint i = 0; i < self->cards->len; i++)
    {
      CardEntry *c = g_ptr_array_index (self->cards, i);
      if (dw_chart_card_get_chart (c->card) == chart)
        self->current = c->card;
    }
  self->syncing_cursor = TRUE;
  for (guint i = 0; i < self->cards->len; i++)
    {
      DwChart *other
        = dw_chart_card_get_chart (((CardEntry *)g_ptr_array_index (self->cards, i))->card);
      if (other != chart)
        dw_chart_set_cursor_x (other, x);
    }
  self->syncing_cursor = FALSE;
}

static gboolean
any_zoomed (DwMonitorView *self)
{
  for (guint i = 0; i < self->cards->len; i++)
    if (dw_chart_is_zoomed (
          dw_chart_card_get_chart (((CardEntry *)g_ptr_array_index (self->cards, i))->card)))
      return TRUE;
  return FALSE;
}

/* A chart zoomed or reset: with "zoom every chart together" on, the others take the same steps
 * (their own y range); the "Zoomed · Reset" chip shows while any chart is zoomed. */
static void
on_zoom_changed (DwChart *chart, DwMonitorView *self)
{
  if (!self->syncing_zoom && gtk_toggle_button_get_active (self->sync_zoom_toggle))
    {
      gboolean zoomed = dw_chart_is_zoomed (chart);
      double x0, x1;

      dw_chart_get_view (chart, &x0, &x1, NULL, NULL);
      self->syncing_zoom = TRUE;
      for (guint i = 0; i < self->cards->len; i++)
        {
          DwChart *other
            = dw_chart_card_get_chart (((CardEntry *)g_ptr_array_index (self->cards, i))->card);

          if (other == chart)
            continue;
          if (zoomed)
            dw_chart_zoom (other, x0, x1, NAN, NAN);
          else
            dw_chart_reset_zoom (other);
        }
      self->syncing_zoom = FALSE;
    }
  gtk_widget_set_visible (self->zoom_chip, any_zoomed (self));
}

/* Escape in the tag entry: first the zoom goes, then the search text (GtkSearchEntry takes
 * Escape for itself, so the view's binding never sees it there). */
static void
on_tag_stop_search (GtkSearchEntry *entry, DwMonitorView *self)
{
  if (any_zoomed (self))
    dw_monitor_view_reset_zoom (self);
  else
    gtk_editable_set_text (GTK_EDITABLE (entry), "");
}

static GtkWidget *
add_group (DwMonitorView *self, const char *title, guint max_per_line)
{
  GtkWidget *group = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *label = gtk_label_new (title);
  GtkWidget *flow = gtk_flow_box_new ();

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (label, "heading");
  gtk_widget_add_css_class (label, "dim-label");
  gtk_box_append (GTK_BOX (group), label);

  gtk_flow_box_set_selection_mode (GTK_FLOW_BOX (flow), GTK_SELECTION_NONE);
  gtk_flow_box_set_homogeneous (GTK_FLOW_BOX (flow), TRUE);
  gtk_flow_box_set_min_children_per_line (GTK_FLOW_BOX (flow), 1);
  gtk_flow_box_set_max_children_per_line (GTK_FLOW_BOX (flow), max_per_line);
  gtk_flow_box_set_column_spacing (GTK_FLOW_BOX (flow), 12);
  gtk_flow_box_set_row_spacing (GTK_FLOW_BOX (flow), 12);
  gtk_widget_add_css_class (flow, "dw-chart-grid");
  gtk_box_append (GTK_BOX (group), flow);
  g_object_set_data (G_OBJECT (group), "dw-flow", flow);

  gtk_box_append (self->groups_box, group);
  return group;
}

static CardEntry *
add_card (DwMonitorView *self, GtkWidget *group, const char *id, const char *title,
          const char *subtitle, const char *const *sources, gboolean always)
{
  CardEntry *c = g_new0 (CardEntry, 1);
  GtkWidget *flow = g_object_get_data (G_OBJECT (group), "dw-flow");
  GtkWidget *child;
  DwChart *chart;

  c->card = DW_CHART_CARD (dw_chart_card_new (id, title, subtitle));
  c->sources = g_strdupv ((char **)sources);
  c->last_step = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  c->always = always;
  gtk_widget_set_size_request (GTK_WIDGET (c->card), -1, CARD_HEIGHT);

  chart = dw_chart_card_get_chart (c->card);
  dw_chart_set_smoothing (chart, gtk_adjustment_get_value (self->smoothing_adjustment));
  dw_chart_set_x_mode (chart, dw_monitor_view_get_x_mode (self));
  if (self->settings != NULL)
    g_settings_bind (self->settings, "ignore-outliers", chart, "ignore-outliers",
                     G_SETTINGS_BIND_GET);
  g_signal_connect_object (chart, "notify::cursor-x", G_CALLBACK (on_cursor_changed), self, 0);
  g_signal_connect_object (chart, "zoom-changed", G_CALLBACK (on_zoom_changed), self, 0);
  /* right-click on a step: its tokens, in the first run shown (ui/drill/) */
  if (self->runs->len > 0)
    dw_drill_connect_chart (GTK_WIDGET (chart), ((RunEntry *)self->runs->pdata[0])->info->id);

  gtk_flow_box_append (GTK_FLOW_BOX (flow), GTK_WIDGET (c->card));
  /* The flow box wraps every card in a focusable child; the card itself is what takes focus. */
  child = gtk_widget_get_parent (GTK_WIDGET (c->card));
  gtk_widget_set_focusable (child, FALSE);
  g_ptr_array_add (self->cards, c);
  return c;
}

/* Reference lines from the health rules' own thresholds (so the chart and the warnings never
 * disagree), the metric's ideal value, and the good/warning lines the docs give. */
static void
add_references (DwMonitorView *self, CardEntry *c)
{
  DwChart *chart = dw_chart_card_get_chart (c->card);
  const DwHealthRule *rules;
  guint n_rules;
  gboolean log_y = FALSE;

  rules = dw_health_rules (&n_rules);
  for (guint s = 0; c->sources[s] != NULL; s++)
    {
      const DwCanonicalMetric *m = dw_canonical_lookup (c->sources[s]);

      if (m == NULL)
        continue;
      /* a signed quantity (KL of rollout against training, log PPL difference) goes below 0:
       * a linear axis shows those points where a log axis could only mark them ▼ */
      log_y |= m->log_scale && !g_str_equal (m->id, "kl") && !g_str_equal (m->id, "log_ppl_diff");
      if (s == 0)
        dw_chart_set_y_unit (chart, m->unit);
      if (s == 0 && isfinite (m->ideal) && !(m->log_scale && m->ideal <= 0))
        dw_chart_add_threshold (chart, m->ideal, DW_THRESHOLD_IDEAL, NULL);
      for (guint i = 0; i < n_rules; i++)
        {
          const DwHealthRule *rule = &rules[i];
          g_autofree char *label = NULL;

          if (rule->metric == NULL || !g_str_equal (rule->metric, c->sources[s]))
            continue;
          switch (rule->kind)
            {
            case DW_HEALTH_RULE_OUTSIDE:
              dw_chart_set_band (chart, rule->lo, rule->hi);
              dw_chart_add_threshold (chart, rule->lo, DW_THRESHOLD_WARNING, NULL);
              dw_chart_add_threshold (chart, rule->hi, DW_THRESHOLD_WARNING, NULL);
              break;
            case DW_HEALTH_RULE_BELOW:
              label = g_strdup_printf ("%g", rule->lo);
              dw_chart_add_threshold (chart, rule->lo, DW_THRESHOLD_WARNING, label);
              break;
            case DW_HEALTH_RULE_ABOVE:
            case DW_HEALTH_RULE_ABS_ABOVE:
              label = g_strdup_printf ("%g", rule->hi);
              dw_chart_add_threshold (chart, rule->hi, DW_THRESHOLD_WARNING, label);
              break;
            case DW_HEALTH_RULE_DRIFT:
            case DW_HEALTH_RULE_NONFINITE:
            default:
              break;
            }
        }
      /* verl's docs: an ESS above 0.5 is healthy, below 0.3 a warning (the rule above). */
      if (g_str_equal (c->sources[s], "ess"))
        dw_chart_add_threshold (chart, 0.5, DW_THRESHOLD_GOOD, "0.5");
    }
  if (self->settings != NULL && !g_settings_get_boolean (self->settings, "log-scale"))
    log_y = FALSE;
  dw_chart_card_set_log_y (c->card, log_y);
}

static void
finish_card_state (DwMonitorView *self, CardEntry *c)
{
  if (c->n_points == 0 && c->always)
    dw_chart_card_set_empty_text (c->card, self->runs->len > 1
                                             ? _ ("Not logged by the selected runs")
                                             : _ ("Not logged by this run"));
  else
    dw_chart_card_set_empty_text (c->card, NULL);
  apply_markers (self, c);
}

static void
finish_card (DwMonitorView *self, CardEntry *c)
{
  for (guint i = 0; i < self->runs->len; i++)
    load_card_run (self, c, g_ptr_array_index (self->runs, i));
  finish_card_state (self, c);
}

static void
add_spec_group (DwMonitorView *self, const char *title, const CardSpec *specs, guint n_specs,
                guint max_per_line)
{
  GtkWidget *group = add_group (self, title, max_per_line);
  gboolean any_always = FALSE;

  /* Cards of metrics that may not be logged stay hidden until the load says they are. */
  for (guint i = 0; i < n_specs; i++)
    {
      const CardSpec *spec = &specs[i];
      const char *ctitle
        = spec->title ? _ (spec->title) : _ (dw_canonical_lookup (spec->metrics[0])->title);
      CardEntry *c = add_card (self, group, spec->id, ctitle, NULL, spec->metrics, spec->always);

      c->first_unlabelled = spec->first_unlabelled;

      add_references (self, c);
      c->pending = TRUE;
      if (!spec->always)
        gtk_widget_set_visible (gtk_widget_get_parent (GTK_WIDGET (c->card)), FALSE);
      any_always |= spec->always;
    }
  gtk_widget_set_visible (group, any_always);
}

/* ---------------------------------------------------------------- loading in a worker */

typedef struct
{
  CardEntry *card; /* valid while the generation is current */
  RunEntry *run;
  guint source_index;
  gint64 run_id;
  char *source;
  DwSeries *series; /* read by the worker */
} LoadRequest;

typedef struct
{
  guint generation;
  GPtrArray *requests;
} LoadJob;

static void
load_request_free (gpointer data)
{
  LoadRequest *q = data;

  g_free (q->source);
  g_clear_pointer (&q->series, dw_series_free);
  g_free (q);
}

static void
load_job_free (gpointer data)
{
  LoadJob *job = data;

  g_ptr_array_unref (job->requests);
  g_free (job);
}

/* Reads every requested series in the store reader's worker (SQLite WAL: readers do not block
 * each other), so a run with millions of points never freezes the window. */
static gboolean
load_worker (DwStore *store, gpointer data, GCancellable *cancellable, GError **error)
{
  LoadJob *job = data;

  for (guint i = 0; i < job->requests->len; i++)
    {
      LoadRequest *q = g_ptr_array_index (job->requests, i);
      q->series = read_series (store, q->run_id, q->source, G_MININT64);
    }
  return TRUE;
}

static void
remove_card (DwMonitorView *self, CardEntry *c)
{
  GtkWidget *child = gtk_widget_get_parent (GTK_WIDGET (c->card));
  GtkWidget *flow = gtk_widget_get_parent (child);
  GtkWidget *group = gtk_widget_get_parent (flow);

  gtk_flow_box_remove (GTK_FLOW_BOX (flow), child);
  g_ptr_array_remove (self->cards, c);
  if (gtk_widget_get_first_child (flow) == NULL)
    gtk_box_remove (self->groups_box, group);
}

static void
on_load_done (GObject *object, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (DwMonitorView) self = user_data;
  LoadJob *job = NULL;
  g_autoptr (GError) error = NULL;
  gboolean ok
    = dw_store_reader_read_finish (DW_STORE_READER (object), result, (gpointer *)&job, &error);

  if (job->generation != self->generation)
    return; /* the runs changed meanwhile: a newer load is on its way */
  self->loading = FALSE;
  if (!ok)
    g_warning ("Loading the charts: %s", error->message);
  for (guint i = 0; i < job->requests->len; i++)
    {
      LoadRequest *q = g_ptr_array_index (job->requests, i);
      append_series (self, q->card, q->run, q->source_index, q->series);
    }
  for (guint i = self->cards->len; i > 0; i--)
    {
      CardEntry *c = g_ptr_array_index (self->cards, i - 1);

      if (!c->pending)
        continue;
      c->pending = FALSE;
      if (c->n_points == 0 && !c->always)
        {
          remove_card (self, c);
          continue;
        }
      gtk_widget_set_visible (gtk_widget_get_parent (GTK_WIDGET (c->card)), TRUE);
      gtk_widget_set_visible (gtk_widget_get_parent (gtk_widget_get_parent (
                                gtk_widget_get_parent (GTK_WIDGET (c->card)))),
                              TRUE);
      finish_card_state (self, c);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
}

static void
start_load (DwMonitorView *self)
{
  LoadJob *job = g_new0 (LoadJob, 1);

  job->generation = self->generation;
  job->requests = g_ptr_array_new_with_free_func (load_request_free);
  for (guint i = 0; i < self->cards->len; i++)
    {
      CardEntry *c = g_ptr_array_index (self->cards, i);

      if (!c->pending)
        continue;
      for (guint j = 0; j < self->runs->len; j++)
        for (guint k = 0; c->sources[k] != NULL; k++)
          {
            LoadRequest *q = g_new0 (LoadRequest, 1);

            q->card = c;
            q->run = g_ptr_array_index (self->runs, j);
            q->run_id = q->run->info->id;
            q->source_index = k;
            q->source = g_strdup (c->sources[k]);
            g_ptr_array_add (job->requests, q);
          }
    }
  self->loading = TRUE;
  dw_store_reader_read_async (self->reader, load_worker, job, load_job_free, NULL, on_load_done,
                              g_object_ref (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
}

static void
remove_tag_cards (DwMonitorView *self)
{
  self->current = NULL;
  for (guint i = self->cards->len; i > 0; i--)
    {
      CardEntry *c = g_ptr_array_index (self->cards, i - 1);
      if (g_str_has_prefix (dw_chart_card_get_id (c->card), "tag:"))
        g_ptr_array_remove_index (self->cards, i - 1);
    }
  for (guint i = 0; i < self->tag_groups->len; i++)
    gtk_box_remove (self->groups_box, g_ptr_array_index (self->tag_groups, i));
  g_ptr_array_set_size (self->tag_groups, 0);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char *const *)a, *(const char *const *)b);
}

static void
build_tag_cards (DwMonitorView *self)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) all_tags
    = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_tag_info_free);
  GtkWidget *group = NULL;
  g_autofree char *group_prefix = NULL;

  remove_tag_cards (self);
  if (self->tag_regex == NULL || self->store == NULL)
    return;

  for (guint i = 0; i < self->runs->len; i++)
    {
      RunEntry *r = g_ptr_array_index (self->runs, i);
      g_autoptr (GError) error = NULL;
      GPtrArray *tags = dw_store_list_tags (self->store, r->info->id, &error);

      if (tags == NULL)
        {
          g_warning ("Listing tags of %s: %s", r->info->name, error->message);
          continue;
        }
      for (guint j = 0; j < tags->len; j++)
        {
          DwTagInfo *t = g_ptr_array_index (tags, j);
          if (!g_hash_table_contains (seen, t->name)
              && g_regex_match (self->tag_regex, t->name, 0, NULL))
            {
              g_hash_table_add (seen, t->name);
              g_ptr_array_add (names, g_strdup (t->name));
            }
        }
      /* Keep the names alive while `seen` points into them. */
      g_ptr_array_extend_and_steal (all_tags, tags);
    }
  g_ptr_array_sort (names, compare_strings);

  for (guint i = 0; i < MIN (names->len, MAX_TAG_CARDS); i++)
    {
      const char *name = g_ptr_array_index (names, i);
      const char *slash = strchr (name, '/');
      g_autofree char *prefix = slash ? g_strndup (name, slash - name) : g_strdup ("");
      g_autofree char *id = g_strconcat ("tag:", name, NULL);
      const char *sources[] = { name, NULL };
      CardEntry *c;

      if (group == NULL || g_strcmp0 (prefix, group_prefix) != 0)
        {
          /* TRANSLATORS: heading of the charts of tags without a "prefix/" */
          group = add_group (self, *prefix ? prefix : _ ("Other tags"), 4);
          g_ptr_array_add (self->tag_groups, group);
          g_free (group_prefix);
          group_prefix = g_strdup (prefix);
        }
      c = add_card (self, group, id, slash ? slash + 1 : name, name, sources, TRUE);
      add_references (self, c);
      finish_card (self, c);
    }
  if (names->len > MAX_TAG_CARDS)
    {
      g_autofree char *text = g_strdup_printf (
        /* TRANSLATORS: shown under the tag charts when the regular expression matches too many */
        ngettext ("%u more tag matches: refine the expression to chart it",
                  "%u more tags match: refine the expression to chart them",
                  names->len - MAX_TAG_CARDS),
        names->len - MAX_TAG_CARDS);
      GtkWidget *label = gtk_label_new (text);

      gtk_widget_add_css_class (label, "dim-label");
      gtk_box_append (self->groups_box, label);
      g_ptr_array_add (self->tag_groups, label);
    }
}

static void
rebuild (DwMonitorView *self)
{
  GtkWidget *child;

  self->current = NULL;
  self->generation++;
  if (self->loading)
    {
      self->loading = FALSE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
    }
  g_ptr_array_set_size (self->tag_groups, 0);
  g_ptr_array_set_size (self->cards, 0);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->groups_box))) != NULL)
    gtk_box_remove (self->groups_box, child);
  if (self->store == NULL || self->runs->len == 0)
    return;

  /* Six mismatch cards in two rows of three, the four training signals in one row: on a
   * 1400 × 900 window every default card is in view. */
  add_spec_group (self, _ ("Rollout–training mismatch"), mismatch_cards,
                  G_N_ELEMENTS (mismatch_cards), 3);
  add_spec_group (self, _ ("Training"), training_cards, G_N_ELEMENTS (training_cards), 4);
  start_load (self);
  build_tag_cards (self);
}

/* ---------------------------------------------------------------- settings */

static gboolean
x_mode_get_mapping (GValue *value, GVariant *variant, gpointer user_data)
{
  const char *nick = g_variant_get_string (variant, NULL);

  g_value_set_uint (value, g_str_equal (nick, "wall") ? 2 : g_str_equal (nick, "relative") ? 1 : 0);
  return TRUE;
}

static GVariant *
x_mode_set_mapping (const GValue *value, const GVariantType *type, gpointer user_data)
{
  static const char *const nicks[] = { "step", "relative", "wall" };

  return g_variant_new_string (nicks[MIN (g_value_get_uint (value), 2)]);
}

static void
on_smoothing_changed (DwMonitorView *self)
{
  double w = gtk_adjustment_get_value (self->smoothing_adjustment);

  for (guint i = 0; i < self->cards->len; i++)
    dw_chart_set_smoothing (
      dw_chart_card_get_chart (((CardEntry *)g_ptr_array_index (self->cards, i))->card), w);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SMOOTHING]);
}

static void
on_x_mode_changed (DwMonitorView *self)
{
  DwXMode mode = dw_monitor_view_get_x_mode (self);

  for (guint i = 0; i < self->cards->len; i++)
    {
      DwChart *chart
        = dw_chart_card_get_chart (((CardEntry *)g_ptr_array_index (self->cards, i))->card);
      dw_chart_reset_zoom (chart);
      dw_chart_set_cursor_x (chart, NAN);
      dw_chart_set_x_mode (chart, mode);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_X_MODE]);
}

static void
on_tag_search_changed (GtkSearchEntry *entry, DwMonitorView *self)
{
  g_autoptr (GError) error = NULL;

  if (!dw_monitor_view_set_tag_filter (self, gtk_editable_get_text (GTK_EDITABLE (entry)), &error))
    {
      gtk_widget_add_css_class (GTK_WIDGET (entry), "error");
      gtk_widget_set_tooltip_text (GTK_WIDGET (entry), error->message);
    }
  else
    {
      gtk_widget_remove_css_class (GTK_WIDGET (entry), "error");
      gtk_widget_set_tooltip_text (GTK_WIDGET (entry), NULL);
    }
}

/* ---------------------------------------------------------------- GObject */

static void
dw_monitor_view_dispose (GObject *object)
{
  DwMonitorView *self = DW_MONITOR_VIEW (object);

  self->generation++; /* a load still running is dropped when it comes back */
  g_clear_pointer (&self->box, gtk_widget_unparent);
  g_clear_object (&self->settings);
  G_OBJECT_CLASS (dw_monitor_view_parent_class)->dispose (object);
}

static void
dw_monitor_view_finalize (GObject *object)
{
  DwMonitorView *self = DW_MONITOR_VIEW (object);

  g_clear_object (&self->store);
  g_clear_object (&self->reader);
  g_ptr_array_unref (self->runs);
  g_ptr_array_unref (self->cards);
  g_ptr_array_unref (self->events);
  g_ptr_array_unref (self->tag_groups);
  g_clear_pointer (&self->tag_regex, g_regex_unref);
  G_OBJECT_CLASS (dw_monitor_view_parent_class)->finalize (object);
}

static void
dw_monitor_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwMonitorView *self = DW_MONITOR_VIEW (object);

  switch (prop_id)
    {
    case PROP_SMOOTHING:
      g_value_set_double (value, dw_monitor_view_get_smoothing (self));
      break;
    case PROP_X_MODE:
      g_value_set_int (value, dw_monitor_view_get_x_mode (self));
      break;
    case PROP_LOADING:
      g_value_set_boolean (value, self->loading);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_monitor_view_set_property (GObject *object, guint prop_id, const GValue *value,
                              GParamSpec *pspec)
{
  DwMonitorView *self = DW_MONITOR_VIEW (object);

  switch (prop_id)
    {
    case PROP_SMOOTHING:
      dw_monitor_view_set_smoothing (self, g_value_get_double (value));
      break;
    case PROP_X_MODE:
      dw_monitor_view_set_x_mode (self, g_value_get_int (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static gboolean
reset_zoom_binding (GtkWidget *widget, GVariant *args, gpointer user_data)
{
  DwMonitorView *self = DW_MONITOR_VIEW (widget);
  gboolean any = FALSE;

  for (guint i = 0; i < self->cards->len; i++)
    any |= dw_chart_is_zoomed (
      dw_chart_card_get_chart (((CardEntry *)g_ptr_array_index (self->cards, i))->card));
  if (!any)
    return FALSE;
  dw_monitor_view_reset_zoom (self);
  return TRUE;
}

static void
dw_monitor_view_class_init (DwMonitorViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = dw_monitor_view_dispose;
  object_class->finalize = dw_monitor_view_finalize;
  object_class->get_property = dw_monitor_view_get_property;
  object_class->set_property = dw_monitor_view_set_property;

  properties[PROP_SMOOTHING]
    = g_param_spec_double ("smoothing", NULL, NULL, 0, 0.999, 0.6,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_X_MODE]
    = g_param_spec_int ("x-mode", NULL, NULL, DW_X_STEP, DW_X_WALL, DW_X_STEP,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_LOADING]
    = g_param_spec_boolean ("loading", NULL, NULL, FALSE,
                            G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (DW_TYPE_CHART_CARD);
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PATH "/dw-monitor-view.ui");
  gtk_widget_class_bind_template_child (widget_class, DwMonitorView, box);
  gtk_widget_class_bind_template_child (widget_class, DwMonitorView, tag_entry);
  gtk_widget_class_bind_template_child (widget_class, DwMonitorView, zoom_chip);
  gtk_widget_class_bind_template_child (widget_class, DwMonitorView, sync_zoom_toggle);
  gtk_widget_class_bind_template_child (widget_class, DwMonitorView, smoothing_scale);
  gtk_widget_class_bind_template_child (widget_class, DwMonitorView, smoothing_adjustment);
  gtk_widget_class_bind_template_child (widget_class, DwMonitorView, x_mode_dropdown);
  gtk_widget_class_bind_template_child (widget_class, DwMonitorView, scroller);
  gtk_widget_class_bind_template_child (widget_class, DwMonitorView, groups_box);
  gtk_widget_class_bind_template_callback (widget_class, on_tag_search_changed);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);

  /* Escape resets the zoom of every chart — bound here, not as an application accelerator, so
   * entries and popovers keep their Escape (the search entry's comes first). */
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Escape, 0, reset_zoom_binding, NULL);
}

static void
dw_monitor_view_init (DwMonitorView *self)
{
  g_autoptr (GSettingsSchema) schema = NULL;
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();

  gtk_widget_init_template (GTK_WIDGET (self));
  dw_wheel_guard_attach (GTK_WIDGET (self->smoothing_scale));
  g_signal_connect_object (self->tag_entry, "stop-search", G_CALLBACK (on_tag_stop_search), self,
                           0);
  self->runs = g_ptr_array_new_with_free_func (run_entry_free);
  self->cards = g_ptr_array_new_with_free_func (card_entry_free);
  self->events = g_ptr_array_new_with_free_func (event_entry_free);
  self->tag_groups = g_ptr_array_new ();

  /* Uninstalled runs may lack the compiled schema: the view then works with its defaults. */
  if (source != NULL && (schema = g_settings_schema_source_lookup (source, APP_ID, TRUE)) != NULL)
    {
      self->settings = g_settings_new (APP_ID);
      g_settings_bind (self->settings, "smoothing", self->smoothing_adjustment, "value",
                       G_SETTINGS_BIND_DEFAULT);
      g_settings_bind_with_mapping (self->settings, "x-axis", self->x_mode_dropdown, "selected",
                                    G_SETTINGS_BIND_DEFAULT, x_mode_get_mapping, x_mode_set_mapping,
                                    NULL, NULL);
    }
  g_signal_connect_object (self->smoothing_adjustment, "value-changed",
                           G_CALLBACK (on_smoothing_changed), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->x_mode_dropdown, "notify::selected",
                           G_CALLBACK (on_x_mode_changed), self, G_CONNECT_SWAPPED);
}

/* ---------------------------------------------------------------- API */

GtkWidget *
dw_monitor_view_new (void)
{
  return g_object_new (DW_TYPE_MONITOR_VIEW, NULL);
}

void
dw_monitor_view_set_store (DwMonitorView *self, DwStore *store)
{
  g_autoptr (DwStoreReader) reader = NULL;

  g_return_if_fail (DW_IS_MONITOR_VIEW (self));
  reader = store != NULL ? dw_store_reader_new (dw_store_get_path (store)) : NULL;
  dw_monitor_view_set_reader (self, store, reader);
}

void
dw_monitor_view_set_reader (DwMonitorView *self, DwStore *store, DwStoreReader *reader)
{
  g_return_if_fail (DW_IS_MONITOR_VIEW (self));
  g_return_if_fail ((store == NULL) == (reader == NULL));
  g_set_object (&self->reader, reader);
  if (g_set_object (&self->store, store))
    {
      g_ptr_array_set_size (self->runs, 0);
      g_ptr_array_set_size (self->events, 0);
      rebuild (self);
    }
}

void
dw_monitor_view_set_runs (DwMonitorView *self, GPtrArray *runs)
{
  g_return_if_fail (DW_IS_MONITOR_VIEW (self));
  g_ptr_array_set_size (self->runs, 0);
  g_ptr_array_set_size (self->events, 0);
  for (guint i = 0; runs != NULL && i < runs->len; i++)
    {
      const DwRunInfo *info = g_ptr_array_index (runs, i);
      RunEntry *r = g_new0 (RunEntry, 1);

      r->info = dw_run_info_copy (info);
      dw_run_color (info->id, &r->color);
      g_ptr_array_add (self->runs, r);
    }
  rebuild (self);
}

guint
dw_monitor_view_get_n_runs (DwMonitorView *self)
{
  g_return_val_if_fail (DW_IS_MONITOR_VIEW (self), 0);
  return self->runs->len;
}

void
dw_monitor_view_set_events (DwMonitorView *self, gint64 run_id, GPtrArray *events)
{
  g_return_if_fail (DW_IS_MONITOR_VIEW (self));
  for (guint i = self->events->len; i > 0; i--)
    if (((EventEntry *)g_ptr_array_index (self->events, i - 1))->run_id == run_id)
      g_ptr_array_remove_index (self->events, i - 1);
  for (guint i = 0; events != NULL && i < events->len; i++)
    {
      EventEntry *e = g_new0 (EventEntry, 1);

      e->run_id = run_id;
      e->event = dw_health_event_copy (g_ptr_array_index (events, i));
      g_ptr_array_add (self->events, e);
    }
  for (guint i = 0; i < self->cards->len; i++)
    apply_markers (self, g_ptr_array_index (self->cards, i));
}

gsize
dw_monitor_view_refresh (DwMonitorView *self)
{
  gsize added = 0;

  g_return_val_if_fail (DW_IS_MONITOR_VIEW (self), 0);
  if (self->store == NULL)
    return 0;
  for (guint i = 0; i < self->cards->len; i++)
    {
      CardEntry *c = g_ptr_array_index (self->cards, i);
      gsize n = 0;

      if (c->pending)
        continue; /* its first read, in the worker, will include these points */
      for (guint j = 0; j < self->runs->len; j++)
        n += load_card_run (self, c, g_ptr_array_index (self->runs, j));
      if (n > 0)
        dw_chart_card_set_empty_text (c->card, NULL);
      added += n;
    }
  return added;
}

void
dw_monitor_view_show_step (DwMonitorView *self, gint64 step)
{
  DwXMode mode;

  g_return_if_fail (DW_IS_MONITOR_VIEW (self));
  mode = dw_monitor_view_get_x_mode (self);
  for (guint i = 0; i < self->cards->len; i++)
    {
      CardEntry *c = g_ptr_array_index (self->cards, i);
      DwChart *chart = dw_chart_card_get_chart (c->card);
      double x0, x1, x = mode == DW_X_STEP ? (double)step : NAN, half;
      GHashTableIter iter;
      gpointer key;

      /* Another x mode: the x of that step in any of the card's series. */
      g_hash_table_iter_init (&iter, c->last_step);
      while (!isfinite (x) && g_hash_table_iter_next (&iter, &key, NULL))
        {
          DwPlotSeries *ps = dw_chart_get_series (chart, key);
          if (ps != NULL)
            x = dw_plot_series_x_of_step (ps, mode, step);
        }
      if (!isfinite (x))
        continue;
      self->syncing_zoom = TRUE; /* each chart around the step in its own x */
      dw_chart_reset_zoom (chart);
      dw_chart_get_view (chart, &x0, &x1, NULL, NULL);
      half = MAX ((x1 - x0) * 0.15, mode == DW_X_STEP ? 5 : 1);
      dw_chart_zoom (chart, x - half, x + half, NAN, NAN);
      self->syncing_zoom = FALSE;
    }
  gtk_widget_set_visible (self->zoom_chip, any_zoomed (self));
  self->syncing_cursor = TRUE;
  for (guint i = 0; i < self->cards->len; i++)
    dw_chart_set_cursor_x (
      dw_chart_card_get_chart (((CardEntry *)g_ptr_array_index (self->cards, i))->card),
      mode == DW_X_STEP ? (double)step : NAN);
  self->syncing_cursor = FALSE;
  gtk_adjustment_set_value (gtk_scrolled_window_get_vadjustment (self->scroller), 0);
}

gboolean
dw_monitor_view_set_tag_filter (DwMonitorView *self, const char *regex, GError **error)
{
  GRegex *re = NULL;

  g_return_val_if_fail (DW_IS_MONITOR_VIEW (self), FALSE);
  if (regex != NULL && *regex != '\0')
    {
      g_autoptr (GError) local = NULL;

      re = g_regex_new (regex, G_REGEX_CASELESS | G_REGEX_OPTIMIZE, 0, &local);
      if (re == NULL)
        {
          /* TRANSLATORS: %s is GLib's description of what is wrong with the expression */
          g_set_error (error, G_REGEX_ERROR, local->code, _ ("Invalid regular expression: %s"),
                       local->message);
          return FALSE;
        }
    }
  g_clear_pointer (&self->tag_regex, g_regex_unref);
  self->tag_regex = re;
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->tag_entry)), regex ? regex : "") != 0)
    {
      /* Set from code (tests, restored state): show it, without re-entering through the signal. */
      g_signal_handlers_block_by_func (self->tag_entry, on_tag_search_changed, self);
      gtk_editable_set_text (GTK_EDITABLE (self->tag_entry), regex ? regex : "");
      g_signal_handlers_unblock_by_func (self->tag_entry, on_tag_search_changed, self);
    }
  build_tag_cards (self);
  return TRUE;
}

double
dw_monitor_view_get_smoothing (DwMonitorView *self)
{
  g_return_val_if_fail (DW_IS_MONITOR_VIEW (self), 0);
  return gtk_adjustment_get_value (self->smoothing_adjustment);
}

void
dw_monitor_view_set_smoothing (DwMonitorView *self, double smoothing)
{
  g_return_if_fail (DW_IS_MONITOR_VIEW (self));
  gtk_adjustment_set_value (self->smoothing_adjustment, CLAMP (smoothing, 0, 0.999));
}

DwXMode
dw_monitor_view_get_x_mode (DwMonitorView *self)
{
  g_return_val_if_fail (DW_IS_MONITOR_VIEW (self), DW_X_STEP);
  return (DwXMode)MIN (gtk_drop_down_get_selected (self->x_mode_dropdown), DW_X_WALL);
}

void
dw_monitor_view_set_x_mode (DwMonitorView *self, DwXMode mode)
{
  g_return_if_fail (DW_IS_MONITOR_VIEW (self));
  gtk_drop_down_set_selected (self->x_mode_dropdown, CLAMP ((guint)mode, DW_X_STEP, DW_X_WALL));
}

GPtrArray *
dw_monitor_view_get_cards (DwMonitorView *self)
{
  GPtrArray *cards;

  g_return_val_if_fail (DW_IS_MONITOR_VIEW (self), NULL);
  cards = g_ptr_array_new ();
  for (guint i = 0; i < self->cards->len; i++)
    g_ptr_array_add (cards, ((CardEntry *)g_ptr_array_index (self->cards, i))->card);
  return cards;
}

DwChartCard *
dw_monitor_view_find_card (DwMonitorView *self, const char *id)
{
  g_return_val_if_fail (DW_IS_MONITOR_VIEW (self), NULL);
  for (guint i = 0; i < self->cards->len; i++)
    {
      CardEntry *c = g_ptr_array_index (self->cards, i);
      if (g_str_equal (dw_chart_card_get_id (c->card), id))
        return c->card;
    }
  return NULL;
}

gsize
dw_monitor_view_get_n_points (DwMonitorView *self)
{
  gsize n = 0;

  g_return_val_if_fail (DW_IS_MONITOR_VIEW (self), 0);
  for (guint i = 0; i < self->cards->len; i++)
    n += ((CardEntry *)g_ptr_array_index (self->cards, i))->n_points;
  return n;
}

DwChartCard *
dw_monitor_view_get_current_card (DwMonitorView *self)
{
  g_return_val_if_fail (DW_IS_MONITOR_VIEW (self), NULL);
  if (self->current != NULL)
    return self->current;
  return self->cards->len > 0 ? ((CardEntry *)g_ptr_array_index (self->cards, 0))->card : NULL;
}

void
dw_monitor_view_reset_zoom (DwMonitorView *self)
{
  g_return_if_fail (DW_IS_MONITOR_VIEW (self));
  self->syncing_zoom = TRUE;
  for (guint i = 0; i < self->cards->len; i++)
    dw_chart_reset_zoom (
      dw_chart_card_get_chart (((CardEntry *)g_ptr_array_index (self->cards, i))->card));
  self->syncing_zoom = FALSE;
  gtk_widget_set_visible (self->zoom_chip, FALSE);
}

void
dw_monitor_view_focus_tag_entry (DwMonitorView *self)
{
  g_return_if_fail (DW_IS_MONITOR_VIEW (self));
  gtk_widget_grab_focus (GTK_WIDGET (self->tag_entry));
}

gboolean
dw_monitor_view_is_loading (DwMonitorView *self)
{
  g_return_val_if_fail (DW_IS_MONITOR_VIEW (self), FALSE);
  return self->loading;
}
