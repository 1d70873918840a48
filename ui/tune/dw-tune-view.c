/* dw-tune-view.c — what-if tuning of the rollout-correction config over a stored run
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The controls edit one DwConfig (the preset's fields, then the user's overrides). Every change
 * marks the config dirty; a tick callback evaluates it once per frame with the what-if engine
 * (statistics only, no raw tokens), shows the result at once, and, when some values are only
 * approximate, starts the exact pass in a GTask thread (the previous one is cancelled: the latest
 * change wins). The run's batches are precomputed in a worker thread through a private read-only
 * connection to the store, so the window's own connection is never used off the main thread.
 */
#define G_LOG_DOMAIN "dw-tune-view"

#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>
#include <inttypes.h>

#include "dw-tune-view.h"

#include "dw-canonical.h"
#include "dw-chart.h"
#include "dw-correction.h"
#include "dw-store-writer.h"
#include "dw-tune-export.h"
#include "dw-tune-schema.h"
#include "dw-run-config.h"
#include "dw-wheel-guard.h"

/* The preset the view starts with: token TIS with k3 rejection, the configuration verl's docs
 * recommend first for a mismatch problem (and the one the demo run was trained with). */
#define DEFAULT_PRESET "decoupled_k3_rs_token_tis"
#define N_LEN_BINS     12
#define N_HIST_BINS    60

/* ------------------------------------------------------------------------------------------ */
/* A bound: log-scale slider plus an exact entry                                              */

typedef struct _BoundCtl BoundCtl;
/* Writes the control's value into the view's config (only that: no evaluation). */
typedef void (*BoundWrite) (DwTuneView *self, BoundCtl *ctl);

struct _BoundCtl
{
  DwTuneView *view;
  GtkWidget *box;
  GtkWidget *label;
  GtkEntry *entry;
  GtkScale *scale;
  GtkAdjustment *adj;
  GtkLabel *error_label; /* why the typed value was refused, in verl's (Python's) words */
  double value;
  gboolean syncing;
  BoundWrite write;
  gpointer data;
};

/* ------------------------------------------------------------------------------------------ */
/* RS options                                                                                 */

typedef enum
{
  RS_KIND_HEAD = 0, /* one of verl HEAD's 11 k-options (multi-select, threshold grammar) */
  RS_KIND_LEGACY,   /* token / sequence / geometric (verl 0.6.1–0.7, slime): one at a time */
} RsKind;

typedef struct
{
  const char *name;
  RsKind kind;
  gboolean has_lower;
  double def_lower, def_upper;
  double lo, hi; /* slider range of the bounds */
  const char *hint;
} RsSpec;

static const RsSpec rs_specs[] = {
  { "token_k1", RS_KIND_HEAD, TRUE, 0.5, 2.0, 1e-3, 1e3, N_ ("Per-token inverse ratio bounds") },
  { "token_k2", RS_KIND_HEAD, FALSE, 0, 2.0, 1e-7, 1e3, N_ ("Per-token ½ℓ² upper bound") },
  { "token_k3", RS_KIND_HEAD, FALSE, 0, 1.0, 1e-7, 1e3, N_ ("Per-token k3 upper bound") },
  { "seq_sum_k1", RS_KIND_HEAD, TRUE, 0.5, 2.0, 1e-6, 1e6,
    N_ ("Product of ratios (sequence IS) bounds") },
  { "seq_sum_k2", RS_KIND_HEAD, FALSE, 0, 1.0, 1e-7, 1e4, N_ ("Sum of ½ℓ² over the sequence") },
  { "seq_sum_k3", RS_KIND_HEAD, FALSE, 0, 1.0, 1e-7, 1e4, N_ ("Sum of k3 over the sequence") },
  { "seq_mean_k1", RS_KIND_HEAD, TRUE, 0.999, 1.001, 0.5, 2.0,
    N_ ("Geometric mean ratio bounds (Geo-RS)") },
  { "seq_mean_k2", RS_KIND_HEAD, FALSE, 0, 0.01, 1e-7, 1e3, N_ ("Mean ½ℓ² of the sequence") },
  { "seq_mean_k3", RS_KIND_HEAD, FALSE, 0, 0.01, 1e-7, 1e3, N_ ("Mean k3 of the sequence") },
  { "seq_max_k2", RS_KIND_HEAD, FALSE, 0, 2.0, 1e-7, 1e3, N_ ("Largest ½ℓ² of the sequence") },
  { "seq_max_k3", RS_KIND_HEAD, FALSE, 0, 1.0, 1e-7, 1e3, N_ ("Largest k3 of the sequence") },
  { "token", RS_KIND_LEGACY, TRUE, 0.5, 2.0, 1e-3, 1e3, N_ ("Per-token ratio bounds") },
  { "sequence", RS_KIND_LEGACY, TRUE, 0.5, 2.0, 1e-6, 1e6, N_ ("Sequence ratio bounds") },
  { "geometric", RS_KIND_LEGACY, TRUE, 0.999, 1.001, 0.5, 2.0, N_ ("Geometric mean ratio bounds") },
};
#define N_RS G_N_ELEMENTS (rs_specs)

typedef struct
{
  const RsSpec *spec;
  GtkWidget *expander; /* AdwExpanderRow with an enable switch */
  BoundCtl *lower, *upper;
} RsRow;

/* ------------------------------------------------------------------------------------------ */
/* Charts                                                                                     */

typedef struct
{
  const char *canonical; /* dw-canonical.h id, or a key's name after the generation's prefix */
  const char *title;
  const char *alternative; /* the metric a generation logs instead, or NULL */
} ChartSpec;

static const ChartSpec chart_specs[] = {
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
#define N_CHARTS G_N_ELEMENTS (chart_specs)

struct _DwTuneView
{
  AdwBin parent_instance;

  /* template */
  AdwComboRow *generation_row;
  AdwComboRow *preset_row;
  AdwPreferencesGroup *config_group;
  AdwPreferencesGroup *is_group;
  AdwComboRow *is_level_row;
  AdwComboRow *is_mode_row;
  AdwComboRow *function_row; /* slime: vanilla | icepop | mis (built in code) */
  AdwPreferencesGroup *rs_group;
  AdwPreferencesGroup *veto_group;
  GtkLabel *grammar_label;
  GtkDropDown *format_dropdown;
  GtkLabel *status_label;
  GtkFlowBox *charts_box;
  GtkLabel *charts_legend;
  AdwFlap *flap;
  GtkScrolledWindow *controls_scroller;
  GtkScrolledWindow *content_scroller;
  GtkScale *step_scale;
  GtkLabel *run_title;
  GtkLabel *run_subtitle;
  GtkLabel *hist_title;
  GtkDrawingArea *hist_area;
  GtkAdjustment *step_adjustment;
  GtkDrawingArea *length_area;
  GtkGrid *summary_grid;

  /* built in code */
  GtkWidget *modified_row; /* shown when the config differs from the preset: what, and Reset */
  BoundCtl *is_threshold;
  BoundCtl *is_lower; /* IcePop's lower bound, or the generation's lower-bound key */
  GtkWidget *bn_row;
  GtkSwitch *bn_switch;
  GtkWidget *veto_row; /* AdwExpanderRow */
  BoundCtl *veto;
  RsRow rs[N_RS];
  GPtrArray *bounds; /* BoundCtl*, owned */
  DwChart *charts[N_CHARTS];
  GtkWidget *empty_labels[N_CHARTS];

  /* state */
  DwGeneration gen;
  char *preset;
  DwConfig config;
  char **levels;                            /* the IS level combo's values ("none" last) */
  const char *const *mode_choices;          /* the IS mode combo's values */
  const char *const *function_choices;      /* the function combo's values */
  DwGeneration gen_order[DW_N_GENERATIONS]; /* the generation combo's order */
  DwGeneration run_gen;                     /* the run's own generation and config, from ingest */
  gboolean run_has_config;
  char *run_gen_source;         /* "log", "config", "inferred" or NULL */
  DwRunAgreement run_agreement; /* its logged metrics against a recompute under its config */
  char *run_check_text;
  const char *const *formats;
  guint syncing;

  DwStore *store;
  gint64 run_id;
  DwRunInfo *run_info; /* the run tuned, named at the top; NULL for none */
  DwWhatifEngine *engine;
  GCancellable *load_cancellable;
  GCancellable *exact_cancellable;
  gboolean loading;
  gboolean exact_running;
  guint tick_id;
  guint idle_id;
  gboolean dirty;
  DwWhatifRunResult *result;
  char *error_text;

  /* length bias: 0 = what-if, 1 = sequence bound reference, 2 = geometric reference */
  double max_len;
  guint64 len_rows[3][N_LEN_BINS];
  guint64 len_rejected[3][N_LEN_BINS];
  gboolean len_valid[3];

  GtkFileChooserNative *save_dialog;
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

static void schedule_evaluation (DwTuneView *self);
static void sync_controls (DwTuneView *self);
static void update_grammar (DwTuneView *self);
static void bound_ctl_changed (DwTuneView *self, BoundCtl *ctl);

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                              */

static void
set_busy_changed (DwTuneView *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

static char *
format_number (double v)
{
  char buf[64];
  return g_strdup (dw_python_float_repr (v, buf, sizeof buf));
}

static void
config_set_float (DwConfig *c, const char *key, double v)
{
  DwValue val = dw_value_float (v);
  dw_config_set (c, key, &val);
}

static void
config_set_str (DwConfig *c, const char *key, const char *s)
{
  DwValue val = s ? dw_value_str (s) : dw_value_none ();
  dw_config_set (c, key, &val);
}

static void
config_set_bool (DwConfig *c, const char *key, gboolean b)
{
  DwValue val = dw_value_bool (b);
  dw_config_set (c, key, &val);
}

/* The schema key @field writes under the current config (NULL: the generation has none). */
static const char *
schema_key (DwTuneView *self, DwTuneField field)
{
  const DwSchemaKey *key = dw_tune_schema_key (&self->config, field);
  return key ? key->name : NULL;
}

static const char *
role_key (DwTuneView *self, DwKeyRole role)
{
  const DwSchemaKey *key = dw_schema_find_role (self->gen, role);
  return key ? key->name : NULL;
}

/* The current config resolved as the trainer resolves it; FALSE when the trainer refuses it. */
static gboolean
current_plan (DwTuneView *self, DwPlan *plan)
{
  DwCorrectionError error;
  return dw_plan_build (&self->config, plan, &error);
}

/* verl ≥ 0.8: the IS threshold also takes "lower_upper" (IcePop) */
static gboolean
has_icepop_threshold (DwTuneView *self)
{
  return dw_tune_schema_key_takes_str (dw_schema_find_role (self->gen, DW_ROLE_IS_THRESHOLD));
}

/* The IS modes offered: the generation's mode key's choices, or truncate/IcePop where the
 * threshold takes a "lower_upper" string. */
static const char *const *
is_modes (DwTuneView *self)
{
  static const char *const threshold_modes[] = { "truncate", "icepop", NULL };
  const char *const *choices = dw_tune_schema_choices (self->gen, DW_ROLE_IS_MODE);
  if (choices)
    return choices;
  return has_icepop_threshold (self) ? threshold_modes : NULL;
}

static gboolean
icepop_selected (DwTuneView *self)
{
  const char *const *modes = is_modes (self);
  guint i = adw_combo_row_get_selected (self->is_mode_row);
  return has_icepop_threshold (self) && modes && i != GTK_INVALID_LIST_POSITION && modes[i]
         && strcmp (modes[i], "icepop") == 0;
}

static const char *
choice_label (const char *choice)
{
  static const struct
  {
    const char *choice, *label;
  } labels[] = {
    { "token", N_ ("Token") },
    { "sequence", N_ ("Sequence") },
    { "geometric", N_ ("Geometric") },
    { "none", N_ ("Off") },
    { "truncate", N_ ("Truncate (TIS)") },
    { "icepop", N_ ("IcePop") },
    { "mask", N_ ("Mask") },
    { "clip", N_ ("Clip") },
    { "vanilla", N_ ("Built-in TIS") },
    { "mis", N_ ("mis.py") },
  };
  for (guint i = 0; i < G_N_ELEMENTS (labels); i++)
    if (strcmp (labels[i].choice, choice) == 0)
      return _ (labels[i].label);
  return choice;
}

static GtkStringList *
choice_list_new (const char *const *choices, gboolean with_off)
{
  GtkStringList *list = gtk_string_list_new (NULL);
  for (guint i = 0; choices && choices[i]; i++)
    gtk_string_list_append (list, choice_label (choices[i]));
  if (with_off)
    gtk_string_list_append (list, choice_label ("none"));
  return list;
}

static guint
strv_index (const char *const *v, const char *s)
{
  for (guint i = 0; v && v[i]; i++)
    if (g_strcmp0 (v[i], s) == 0)
      return i;
  return GTK_INVALID_LIST_POSITION;
}

/* ------------------------------------------------------------------------------------------ */
/* BoundCtl                                                                                   */

static double
round_significant (double v)
{
  char buf[32];
  g_snprintf (buf, sizeof buf, "%.3g", v);
  return g_ascii_strtod (buf, NULL);
}

static void
bound_ctl_set_error (BoundCtl *ctl, const char *message)
{
  if (message != NULL)
    gtk_widget_add_css_class (GTK_WIDGET (ctl->entry), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (ctl->entry), "error");
  gtk_label_set_text (ctl->error_label, message ? message : "");
  gtk_widget_set_visible (GTK_WIDGET (ctl->error_label), message != NULL);
}

static void
bound_ctl_show (BoundCtl *ctl)
{
  g_autofree char *text = format_number (ctl->value);
  ctl->syncing = TRUE;
  gtk_editable_set_text (GTK_EDITABLE (ctl->entry), text);
  bound_ctl_set_error (ctl, NULL);
  if (ctl->value > 0 && isfinite (ctl->value))
    gtk_adjustment_set_value (ctl->adj,
                              CLAMP (log10 (ctl->value), gtk_adjustment_get_lower (ctl->adj),
                                     gtk_adjustment_get_upper (ctl->adj)));
  ctl->syncing = FALSE;
}

static void
bound_ctl_set (BoundCtl *ctl, double value)
{
  ctl->value = value;
  bound_ctl_show (ctl);
}

static void
on_bound_adjustment_changed (GtkAdjustment *adj, BoundCtl *ctl)
{
  if (ctl->syncing)
    return;
  ctl->value = round_significant (pow (10.0, gtk_adjustment_get_value (adj)));
  g_autofree char *text = format_number (ctl->value);
  ctl->syncing = TRUE;
  gtk_editable_set_text (GTK_EDITABLE (ctl->entry), text);
  bound_ctl_set_error (ctl, NULL);
  ctl->syncing = FALSE;
  bound_ctl_changed (ctl->view, ctl);
}

/* What verl would raise for the config with @value in @ctl (NULL when it accepts it, or when the
 * config was already refused for another reason before: that is shown under "As verl reads it").
 * The view's config is left as it was. */
static char *
bound_ctl_check (BoundCtl *ctl, double value)
{
  DwTuneView *self = ctl->view;
  DwConfig saved = self->config;
  double old = ctl->value;
  DwCorrectionError before, after;
  gboolean was_ok = dw_correction_check_config (&self->config, &before);
  gboolean ok;

  ctl->value = value;
  ctl->write (self, ctl);
  ok = dw_correction_check_config (&self->config, &after);
  self->config = saved;
  ctl->value = old;
  if (ok || (!was_ok && strcmp (before.message, after.message) == 0))
    return NULL;
  return g_strdup_printf ("%s: %s", dw_error_kind_name (after.kind), after.message);
}

static void
on_bound_entry_activate (GtkEntry *entry, BoundCtl *ctl)
{
  double v;
  const char *text = gtk_editable_get_text (GTK_EDITABLE (entry));
  g_autofree char *refused = NULL;

  /* Python's float(), as verl reads the value; the message is the one Python gives */
  if (!dw_python_float (text, &v))
    refused = g_strdup_printf ("ValueError: could not convert string to float: '%s'", text);
  else
    refused = bound_ctl_check (ctl, v);
  if (refused != NULL)
    {
      bound_ctl_set_error (ctl, refused);
      return;
    }
  bound_ctl_set_error (ctl, NULL);
  ctl->value = v;
  ctl->syncing = TRUE;
  if (v > 0 && isfinite (v))
    gtk_adjustment_set_value (ctl->adj, CLAMP (log10 (v), gtk_adjustment_get_lower (ctl->adj),
                                               gtk_adjustment_get_upper (ctl->adj)));
  ctl->syncing = FALSE;
  bound_ctl_changed (ctl->view, ctl);
}

static void
on_bound_focus_leave (GtkEventControllerFocus *focus, BoundCtl *ctl)
{
  double v;
  if (dw_python_float (gtk_editable_get_text (GTK_EDITABLE (ctl->entry)), &v) && v == ctl->value)
    return;
  on_bound_entry_activate (ctl->entry, ctl);
}

/* @name: widget name prefix for tests ("bound-<name>" entry, "scale-<name>" slider,
 * "error-<name>" the refusal under the entry) */
static BoundCtl *
bound_ctl_new (DwTuneView *self, const char *name, const char *title, double lo, double hi,
               double value, BoundWrite write, gpointer data)
{
  BoundCtl *ctl = g_new0 (BoundCtl, 1);
  ctl->view = self;
  ctl->write = write;
  ctl->data = data;
  ctl->value = value;
  ctl->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  gtk_widget_set_margin_start (ctl->box, 12);
  gtk_widget_set_margin_end (ctl->box, 12);
  gtk_widget_set_margin_top (ctl->box, 6);
  gtk_widget_set_margin_bottom (ctl->box, 6);
  GtkWidget *top = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  ctl->label = gtk_label_new (title);
  gtk_label_set_xalign (GTK_LABEL (ctl->label), 0);
  gtk_widget_set_hexpand (ctl->label, TRUE);
  gtk_box_append (GTK_BOX (top), ctl->label);
  ctl->entry = GTK_ENTRY (gtk_entry_new ());
  gtk_editable_set_width_chars (GTK_EDITABLE (ctl->entry), 10);
  gtk_editable_set_max_width_chars (GTK_EDITABLE (ctl->entry), 12);
  gtk_entry_set_input_purpose (ctl->entry, GTK_INPUT_PURPOSE_NUMBER);
  gtk_accessible_update_property (GTK_ACCESSIBLE (ctl->entry), GTK_ACCESSIBLE_PROPERTY_LABEL, title,
                                  -1);
  g_autofree char *entry_name = g_strdup_printf ("bound-%s", name);
  gtk_widget_set_name (GTK_WIDGET (ctl->entry), entry_name);
  gtk_box_append (GTK_BOX (top), GTK_WIDGET (ctl->entry));
  gtk_box_append (GTK_BOX (ctl->box), top);
  ctl->adj
    = gtk_adjustment_new (log10 (CLAMP (value, lo, hi)), log10 (lo), log10 (hi), 0.01, 0.1, 0);
  ctl->scale = GTK_SCALE (gtk_scale_new (GTK_ORIENTATION_HORIZONTAL, ctl->adj));
  gtk_scale_set_draw_value (ctl->scale, FALSE);
  g_autofree char *scale_name = g_strdup_printf ("scale-%s", name);
  gtk_widget_set_name (GTK_WIDGET (ctl->scale), scale_name);
  gtk_accessible_update_property (GTK_ACCESSIBLE (ctl->scale), GTK_ACCESSIBLE_PROPERTY_LABEL, title,
                                  -1);
  /* the wheel scrolls the page: a slider passing under the pointer must not change the config */
  dw_wheel_guard_attach (GTK_WIDGET (ctl->scale));
  gtk_box_append (GTK_BOX (ctl->box), GTK_WIDGET (ctl->scale));
  ctl->error_label = GTK_LABEL (gtk_label_new (NULL));
  g_autofree char *error_name = g_strdup_printf ("error-%s", name);
  gtk_widget_set_name (GTK_WIDGET (ctl->error_label), error_name);
  gtk_label_set_xalign (ctl->error_label, 0);
  gtk_label_set_wrap (ctl->error_label, TRUE);
  gtk_label_set_wrap_mode (ctl->error_label, PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (ctl->error_label, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (ctl->error_label), "error");
  gtk_widget_add_css_class (GTK_WIDGET (ctl->error_label), "caption");
  gtk_widget_set_visible (GTK_WIDGET (ctl->error_label), FALSE);
  gtk_box_append (GTK_BOX (ctl->box), GTK_WIDGET (ctl->error_label));
  g_signal_connect (ctl->adj, "value-changed", G_CALLBACK (on_bound_adjustment_changed), ctl);
  g_signal_connect (ctl->entry, "activate", G_CALLBACK (on_bound_entry_activate), ctl);
  GtkEventController *focus = gtk_event_controller_focus_new ();
  g_signal_connect (focus, "leave", G_CALLBACK (on_bound_focus_leave), ctl);
  gtk_widget_add_controller (GTK_WIDGET (ctl->entry), focus);
  bound_ctl_show (ctl);
  g_ptr_array_add (self->bounds, ctl);
  return ctl;
}

/* ------------------------------------------------------------------------------------------ */
/* Controls → config                                                                          */

static RsKind
rs_kind_of (DwGeneration gen)
{
  return dw_generation_info (gen)->family == DW_FAMILY_VERL_K_OPTIONS ? RS_KIND_HEAD
                                                                      : RS_KIND_LEGACY;
}

/* Whether the generation offers @spec: an allowed value of its RS options key. */
static gboolean
rs_spec_offered (DwGeneration gen, const RsSpec *spec)
{
  const char *const *choices = dw_tune_schema_choices (gen, DW_ROLE_RS_OPTIONS);
  return spec->kind == rs_kind_of (gen) && choices
         && g_strv_contains ((const char *const *)choices, spec->name);
}

static gboolean
rs_row_enabled (const RsRow *row)
{
  return adw_expander_row_get_enable_expansion (ADW_EXPANDER_ROW (row->expander));
}

/* k-options: options = "a,b", threshold = "lo_up,up" (one spec per option) */
static void
write_rs_head (DwTuneView *self)
{
  g_autoptr (GString) opts = g_string_new (NULL);
  g_autoptr (GString) specs = g_string_new (NULL);
  for (guint i = 0; i < N_RS; i++)
    {
      const RsRow *row = &self->rs[i];
      if (row->spec->kind != RS_KIND_HEAD || !rs_row_enabled (row))
        continue;
      if (opts->len)
        {
          g_string_append_c (opts, ',');
          g_string_append_c (specs, ',');
        }
      g_string_append (opts, row->spec->name);
      g_autofree char *up = format_number (row->upper->value);
      if (row->spec->has_lower)
        {
          g_autofree char *lo = format_number (row->lower->value);
          g_string_append_printf (specs, "%s_%s", lo, up);
        }
      else
        g_string_append (specs, up);
    }
  config_set_str (&self->config, role_key (self, DW_ROLE_RS_OPTIONS), opts->len ? opts->str : NULL);
  config_set_str (&self->config, role_key (self, DW_ROLE_RS_THRESHOLD),
                  specs->len ? specs->str : NULL);
}

/* one RS level at a time: the options key names it (None: off), or a switch turns RS on */
static void
write_rs_legacy (DwTuneView *self, const RsRow *changed)
{
  const RsRow *on = NULL;
  const DwSchemaKey *options = dw_schema_find_role (self->gen, DW_ROLE_RS_OPTIONS);
  for (guint i = 0; i < N_RS; i++)
    if (self->rs[i].spec->kind == RS_KIND_LEGACY && rs_row_enabled (&self->rs[i]))
      on = &self->rs[i];
  if (dw_tune_schema_key_takes_none (options))
    config_set_str (&self->config, options->name, on ? on->spec->name : NULL);
  else
    {
      const char *sw = schema_key (self, DW_TUNE_FIELD_RS_SWITCH);
      if (sw)
        config_set_bool (&self->config, sw, on != NULL);
      if (on)
        config_set_str (&self->config, options->name, on->spec->name);
    }
  if (!on)
    return;
  config_set_float (&self->config, schema_key (self, DW_TUNE_FIELD_RS_UPPER), on->upper->value);
  /* an explicit lower bound replaces the generation's default once the user moves it */
  if (changed && changed == on && changed->lower && changed->lower->value > 0
      && changed->lower->value != 1.0 / on->upper->value)
    {
      const char *lower = schema_key (self, DW_TUNE_FIELD_RS_LOWER);
      if (lower)
        config_set_float (&self->config, lower, on->lower->value);
    }
}

static void
write_rs_bound (DwTuneView *self, BoundCtl *ctl)
{
  RsRow *row = ctl->data;
  if (row->spec->kind == RS_KIND_HEAD)
    write_rs_head (self);
  else
    {
      if (ctl == row->lower)
        {
          const char *lower = schema_key (self, DW_TUNE_FIELD_RS_LOWER);
          if (lower)
            config_set_float (&self->config, lower, ctl->value);
        }
      write_rs_legacy (self, row);
    }
}

/* A bound was moved or typed: into the config, then re-evaluated. */
static void
bound_ctl_changed (DwTuneView *self, BoundCtl *ctl)
{
  ctl->write (self, ctl);
  update_grammar (self);
  schedule_evaluation (self);
}

static void
on_rs_toggled (AdwExpanderRow *expander, GParamSpec *pspec, DwTuneView *self)
{
  if (self->syncing)
    return;
  RsRow *row = NULL;
  for (guint i = 0; i < N_RS; i++)
    if (self->rs[i].expander == GTK_WIDGET (expander))
      row = &self->rs[i];
  g_return_if_fail (row != NULL);
  if (row->spec->kind == RS_KIND_HEAD)
    write_rs_head (self);
  else
    {
      /* the old generations take one RS mode: enabling one disables the others */
      if (rs_row_enabled (row))
        {
          self->syncing++;
          for (guint i = 0; i < N_RS; i++)
            if (&self->rs[i] != row && self->rs[i].spec->kind == RS_KIND_LEGACY)
              adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (self->rs[i].expander),
                                                     FALSE);
          self->syncing--;
        }
      write_rs_legacy (self, row);
    }
  update_grammar (self);
  schedule_evaluation (self);
}

/* The IS bounds: IcePop writes "lower_upper" into the threshold; otherwise the upper bound is a
 * number and the lower bound has its own key (where the generation has one). */
static void
write_is_bounds (DwTuneView *self, BoundCtl *ctl)
{
  const char *upper = schema_key (self, DW_TUNE_FIELD_IS_UPPER);
  if (upper == NULL)
    return;
  if (icepop_selected (self))
    {
      g_autofree char *lo = format_number (self->is_lower->value);
      g_autofree char *up = format_number (self->is_threshold->value);
      g_autofree char *spec = g_strdup_printf ("%s_%s", lo, up);
      config_set_str (&self->config, upper, spec);
      return;
    }
  if (ctl == self->is_threshold || ctl == NULL)
    config_set_float (&self->config, upper, self->is_threshold->value);
  if (ctl == self->is_lower)
    {
      const char *lower = schema_key (self, DW_TUNE_FIELD_IS_LOWER);
      if (lower)
        config_set_float (&self->config, lower, ctl->value);
    }
}

static void
write_veto (DwTuneView *self, BoundCtl *ctl)
{
  const char *key = schema_key (self, DW_TUNE_FIELD_VETO);
  if (!key)
    return;
  if (adw_expander_row_get_enable_expansion (ADW_EXPANDER_ROW (self->veto_row)))
    config_set_float (&self->config, key, self->veto->value);
  else
    config_set_str (&self->config, key, NULL);
}

static void
on_veto_toggled (AdwExpanderRow *expander, GParamSpec *pspec, DwTuneView *self)
{
  if (self->syncing)
    return;
  write_veto (self, self->veto);
  update_grammar (self);
  schedule_evaluation (self);
}

static void
on_bn_toggled (GtkSwitch *sw, GParamSpec *pspec, DwTuneView *self)
{
  const char *key = role_key (self, DW_ROLE_IS_BATCH_NORMALIZE);
  if (self->syncing || key == NULL)
    return;
  config_set_bool (&self->config, key, gtk_switch_get_active (sw));
  update_grammar (self);
  schedule_evaluation (self);
}

/* IS off: a level key that takes None gets None; else a switch (slime use_tis) goes false; else
 * the threshold gets None (mismatch_helper computes nothing then). */
static void
write_is_level (DwTuneView *self, const char *level)
{
  const DwSchemaKey *level_key = dw_schema_find_role (self->gen, DW_ROLE_IS_LEVEL);
  const char *sw = schema_key (self, DW_TUNE_FIELD_IS_SWITCH);
  gboolean off = level == NULL;

  if (level_key == NULL)
    return;
  if (dw_tune_schema_key_takes_none (level_key))
    {
      config_set_str (&self->config, level_key->name, level);
      return;
    }
  if (!off)
    config_set_str (&self->config, level_key->name, level);
  if (sw)
    config_set_bool (&self->config, sw, !off);
  else if (off)
    config_set_str (&self->config, schema_key (self, DW_TUNE_FIELD_IS_UPPER), NULL);
  else
    write_is_bounds (self, NULL);
}

static void
on_is_level_selected (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self)
{
  if (self->syncing)
    return;
  guint i = adw_combo_row_get_selected (row);
  if (i == GTK_INVALID_LIST_POSITION || !self->levels[i])
    return;
  const char *level = self->levels[i];
  write_is_level (self, strcmp (level, "none") == 0 ? NULL : level);
  sync_controls (self);
  schedule_evaluation (self);
}

static void
on_is_mode_selected (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self)
{
  const char *const *modes = is_modes (self);
  guint i = adw_combo_row_get_selected (row);
  if (self->syncing || !modes || i == GTK_INVALID_LIST_POSITION || !modes[i])
    return;
  if (has_icepop_threshold (self))
    {
      /* IcePop starts from the bounds verl's IcePop presets use */
      if (icepop_selected (self) && self->is_lower->value >= self->is_threshold->value)
        bound_ctl_set (self->is_lower, 0.5);
      write_is_bounds (self, NULL);
    }
  else
    config_set_str (&self->config, role_key (self, DW_ROLE_IS_MODE), modes[i]);
  sync_controls (self);
  schedule_evaluation (self);
}

static void
on_function_selected (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self)
{
  const char *const *functions = dw_tune_schema_choices (self->gen, DW_ROLE_FUNCTION);
  guint i = adw_combo_row_get_selected (row);
  if (self->syncing || !functions || i == GTK_INVALID_LIST_POSITION || !functions[i])
    return;
  config_set_str (&self->config, role_key (self, DW_ROLE_FUNCTION), functions[i]);
  dw_tune_export_drop_unread (&self->config);
  sync_controls (self);
  schedule_evaluation (self);
}

/* ------------------------------------------------------------------------------------------ */
/* Config → controls (read back through the plan: what the trainer will do, not key names)     */

/* The function a plan's path runs (slime: vanilla | icepop | mis). */
static const char *
plan_function (const DwPlan *plan)
{
  return plan->path == DW_PATH_SLIME_VANILLA  ? "vanilla"
         : plan->path == DW_PATH_SLIME_ICEPOP ? "icepop"
                                              : "mis";
}

static void
sync_is (DwTuneView *self)
{
  DwPlan plan;
  gboolean planned = current_plan (self, &plan);
  const char *level = "none";
  if (planned && plan.is_on && !plan.nothing)
    level = dw_plan_level_name (plan.is_level);
  guint idx = strv_index ((const char *const *)self->levels, level);
  adw_combo_row_set_selected (
    self->is_level_row, idx != GTK_INVALID_LIST_POSITION ? idx : g_strv_length (self->levels) - 1);

  const char *const *functions = dw_tune_schema_choices (self->gen, DW_ROLE_FUNCTION);
  gtk_widget_set_visible (GTK_WIDGET (self->function_row), functions != NULL);
  if (functions)
    {
      /* a new model only when the choices change: the row may be emitting "selected" now */
      if (self->function_choices != functions)
        {
          g_autoptr (GtkStringList) list = choice_list_new (functions, FALSE);
          adw_combo_row_set_model (self->function_row, G_LIST_MODEL (list));
          self->function_choices = functions;
        }
      guint fi = strv_index (functions, planned ? plan_function (&plan) : NULL);
      adw_combo_row_set_selected (self->function_row, fi != GTK_INVALID_LIST_POSITION ? fi : 0);
    }

  const char *const *modes = is_modes (self);
  gboolean icepop = planned && has_icepop_threshold (self) && plan.is_lower_given;
  gtk_widget_set_visible (GTK_WIDGET (self->is_mode_row),
                          modes != NULL && (!planned || plan.path != DW_PATH_SLIME_VANILLA)
                            && (!planned || plan.path != DW_PATH_SLIME_ICEPOP));
  if (modes)
    {
      if (self->mode_choices != modes)
        {
          g_autoptr (GtkStringList) list = choice_list_new (modes, FALSE);
          adw_combo_row_set_model (self->is_mode_row, G_LIST_MODEL (list));
          self->mode_choices = modes;
        }
      const char *mode_key = role_key (self, DW_ROLE_IS_MODE);
      /* @mode may point into @mode_value's string: both live to the end of this block */
      DwValue mode_value = mode_key ? dw_schema_value (&self->config, mode_key) : (DwValue){ 0 };
      const char *mode = mode_value.kind == DW_VALUE_STR ? mode_value.s
                         : icepop                        ? "icepop"
                                                         : "truncate";
      guint mi = strv_index (modes, mode);
      adw_combo_row_set_selected (self->is_mode_row, mi != GTK_INVALID_LIST_POSITION ? mi : 0);
    }

  double upper = planned && isfinite (plan.is_upper) && plan.is_upper > 0 ? plan.is_upper : 2.0;
  bound_ctl_set (self->is_threshold, upper);
  double lower
    = planned && isfinite (plan.is_lower) && plan.is_lower > 0 ? plan.is_lower : 1.0 / upper;
  bound_ctl_set (self->is_lower, lower);
  gtk_widget_set_visible (self->is_lower->box,
                          icepop || schema_key (self, DW_TUNE_FIELD_IS_LOWER) != NULL);

  const char *bn = role_key (self, DW_ROLE_IS_BATCH_NORMALIZE);
  gtk_widget_set_visible (self->bn_row, bn && dw_tune_export_key_accepted (self->gen, bn));
  gtk_switch_set_active (self->bn_switch, planned && plan.batch_normalize);
}

static void
sync_rs (DwTuneView *self)
{
  RsKind kind = rs_kind_of (self->gen);
  gboolean has_rs = dw_schema_find_role (self->gen, DW_ROLE_RS_OPTIONS) != NULL;
  DwPlan plan;
  gboolean planned = current_plan (self, &plan);

  gtk_widget_set_visible (GTK_WIDGET (self->rs_group), has_rs);
  for (guint i = 0; i < N_RS; i++)
    {
      RsRow *row = &self->rs[i];
      gtk_widget_set_visible (row->expander, has_rs && rs_spec_offered (self->gen, row->spec));
      adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (row->expander), FALSE);
      bound_ctl_set (row->upper, row->spec->def_upper);
      if (row->lower)
        bound_ctl_set (row->lower, row->spec->def_lower);
    }
  if (!has_rs || !planned || !plan.rs_on)
    return; /* a refused config is shown by update_grammar () */
  if (kind == RS_KIND_HEAD)
    {
      for (gsize j = 0; j < plan.rs.n; j++)
        {
          RsRow *row = &self->rs[plan.rs.bounds[j].option];
          adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (row->expander), TRUE);
          bound_ctl_set (row->upper, plan.rs.bounds[j].upper);
          if (row->lower)
            bound_ctl_set (row->lower, plan.rs.bounds[j].lower);
        }
      return;
    }
  const char *name = dw_plan_level_name (plan.rs_level);
  for (guint i = 0; i < N_RS; i++)
    {
      RsRow *row = &self->rs[i];
      if (row->spec->kind != RS_KIND_LEGACY || strcmp (row->spec->name, name) != 0)
        continue;
      adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (row->expander), TRUE);
      bound_ctl_set (row->upper, plan.rs_upper);
      bound_ctl_set (row->lower, plan.rs_lower);
    }
}

static void
sync_veto (DwTuneView *self)
{
  const char *key = schema_key (self, DW_TUNE_FIELD_VETO);
  DwPlan plan;
  gboolean on = key && current_plan (self, &plan) && plan.veto_on;
  gtk_widget_set_visible (GTK_WIDGET (self->veto_group), key != NULL);
  if (!key)
    return;
  adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (self->veto_row), on);
  bound_ctl_set (self->veto, on ? plan.veto : 1e-4);
}

static void
sync_controls (DwTuneView *self)
{
  self->syncing++;
  sync_is (self);
  sync_rs (self);
  sync_veto (self);
  self->syncing--;
  update_grammar (self);
}

static void
apply_preset (DwTuneView *self, const char *preset_name)
{
  DwCorrectionError err;
  DwConfig c;
  /* @preset_name may be self->preset itself */
  g_autofree char *name = g_strdup (preset_name);
  g_free (self->preset);
  self->preset = NULL;
  if (name == NULL)
    {
      /* a generation without presets (mismatch_helper): the schema's defaults */
      dw_config_init (&self->config, self->gen);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (self->preset_row),
                                   _ ("This release has no presets: the keys’ defaults"));
      sync_controls (self);
      schedule_evaluation (self);
      return;
    }
  if (!dw_preset_config (self->gen, name, &c, &err))
    {
      g_warning ("preset %s: %s", name, err.message);
      return;
    }
  self->preset = g_strdup (name);
  self->config = c;
  const DwPresetInfo *info = dw_preset_lookup (self->gen, name);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->preset_row), info ? info->description : "");
  sync_controls (self);
  schedule_evaluation (self);
}

static void
on_preset_selected (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self)
{
  if (self->syncing)
    return;
  GtkStringObject *item = adw_combo_row_get_selected_item (row);
  if (item)
    apply_preset (self, gtk_string_object_get_string (item));
}

static void
fill_presets (DwTuneView *self, const char *select)
{
  size_t n = 0;
  const DwPresetInfo *list = dw_preset_list (self->gen, &n);
  g_autoptr (GtkStringList) names = gtk_string_list_new (NULL);
  guint sel = 0;
  for (size_t i = 0; i < n; i++)
    {
      gtk_string_list_append (names, list[i].name);
      if (g_strcmp0 (list[i].name, select) == 0)
        sel = (guint)i;
    }
  self->syncing++;
  adw_combo_row_set_model (self->preset_row, G_LIST_MODEL (names));
  adw_combo_row_set_selected (self->preset_row, n ? sel : GTK_INVALID_LIST_POSITION);
  gtk_widget_set_sensitive (GTK_WIDGET (self->preset_row), n > 0);
  self->syncing--;
}

static void
fill_formats (DwTuneView *self)
{
  self->formats = dw_tune_export_formats (self->gen);
  g_autoptr (GtkStringList) list = gtk_string_list_new (NULL);
  for (guint i = 0; self->formats[i]; i++)
    {
      const char *f = self->formats[i];
      gtk_string_list_append (list, strcmp (f, "yaml") == 0    ? _ ("YAML")
                                    : strcmp (f, "hydra") == 0 ? _ ("Hydra overrides")
                                                               : _ ("Command-line flags"));
    }
  gtk_drop_down_set_model (self->format_dropdown, G_LIST_MODEL (list));
  gtk_drop_down_set_selected (self->format_dropdown, 0);
}

static guint
generation_position (DwTuneView *self, DwGeneration gen)
{
  for (guint i = 0; i < DW_N_GENERATIONS; i++)
    if (self->gen_order[i] == gen)
      return i;
  return 0;
}

static void
set_generation (DwTuneView *self, DwGeneration gen, const char *preset)
{
  self->gen = gen;
  /* the IS levels the schema allows, then Off */
  const char *const *levels = dw_tune_schema_choices (gen, DW_ROLE_IS_LEVEL);
  g_strfreev (self->levels);
  {
    g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
    if (levels)
      g_strv_builder_addv (builder, (const char **)levels);
    g_strv_builder_add (builder, "none");
    self->levels = g_strv_builder_end (builder);
  }
  g_autoptr (GtkStringList) level_list = choice_list_new (levels, TRUE);
  self->syncing++;
  adw_combo_row_set_model (self->is_level_row, G_LIST_MODEL (level_list));
  adw_combo_row_set_selected (self->generation_row, generation_position (self, gen));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->generation_row),
                               dw_generation_info (gen)->summary);
  self->syncing--;
  fill_formats (self);
  if (!preset || !dw_preset_lookup (gen, preset))
    preset
      = dw_preset_lookup (gen, DEFAULT_PRESET) ? DEFAULT_PRESET : dw_preset_list (gen, NULL)->name;
  fill_presets (self, preset);
  apply_preset (self, preset);
}

static void
on_generation_selected (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self)
{
  if (self->syncing)
    return;
  guint i = adw_combo_row_get_selected (row);
  if (i < DW_N_GENERATIONS && self->gen_order[i] != self->gen)
    set_generation (self, self->gen_order[i], self->preset);
}

/* ------------------------------------------------------------------------------------------ */
/* Modified from the preset                                                                   */

static void
python_str (const DwValue *v, char *buf, gsize size)
{
  if (v == NULL)
    g_strlcpy (buf, "None", size); /* an absent key is None to verl */
  else if (v->kind == DW_VALUE_STR)
    g_snprintf (buf, size, "\"%s\"", v->s);
  else
    dw_value_to_python_str (v, buf, size);
}

static void
append_change (GString *out, const char *key, const DwValue *was, const DwValue *now)
{
  char a[DW_VALUE_STR_MAX + 8], b[DW_VALUE_STR_MAX + 8];

  python_str (was, a, sizeof a);
  python_str (now, b, sizeof b);
  if (strcmp (a, b) == 0)
    return;
  if (out->len)
    g_string_append_c (out, '\n');
  g_string_append_printf (out, "%s: %s → %s", key, a, b);
}

/* The keys (that the generation reads) whose value differs from the preset's, one a line
 * ("key: preset → now"); empty when the config is the preset's. */
static char *
describe_changes (DwTuneView *self)
{
  g_autoptr (GString) out = g_string_new (NULL);
  DwConfig preset;
  DwCorrectionError err;

  if (self->preset == NULL || !dw_preset_config (self->gen, self->preset, &preset, &err))
    return g_string_free (g_steal_pointer (&out), FALSE);
  for (size_t i = 0; i < preset.n_keys; i++)
    if (dw_tune_export_key_accepted (self->gen, preset.keys[i]))
      append_change (out, preset.keys[i], &preset.values[i],
                     dw_config_get (&self->config, preset.keys[i]));
  for (size_t i = 0; i < self->config.n_keys; i++)
    if (dw_tune_export_key_accepted (self->gen, self->config.keys[i])
        && dw_config_get (&preset, self->config.keys[i]) == NULL)
      append_change (out, self->config.keys[i], NULL, &self->config.values[i]);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void update_run_header (DwTuneView *self);

static void
update_modified (DwTuneView *self)
{
  g_autofree char *changes = describe_changes (self);
  gboolean modified = *changes != '\0';

  gtk_widget_set_visible (self->modified_row, modified);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->modified_row), changes);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "tune.reset-preset", modified);
  update_run_header (self);
}

gboolean
dw_tune_view_get_modified (DwTuneView *self)
{
  g_autofree char *changes = NULL;

  g_return_val_if_fail (DW_IS_TUNE_VIEW (self), FALSE);
  changes = describe_changes (self);
  return *changes != '\0';
}

static void
reset_preset_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  DwTuneView *self = DW_TUNE_VIEW (widget);
  g_autofree char *preset = g_strdup (self->preset);

  if (preset != NULL)
    apply_preset (self, preset);
}

/* ------------------------------------------------------------------------------------------ */
/* The run tuned, named at the top                                                            */

static void
update_run_header (DwTuneView *self)
{
  g_autoptr (GString) sub = g_string_new (NULL);
  gboolean modified = gtk_widget_get_visible (self->modified_row);

  if (self->run_info == NULL)
    {
      gtk_label_set_text (self->run_title, _ ("No run to tune"));
      g_string_append (sub, _ ("Select a run with stored rollout batches in the sidebar"));
    }
  else
    {
      /* TRANSLATORS: heading of the Tune page; %s is the run name */
      g_autofree char *title = g_strdup_printf (_ ("Tuning %s"), self->run_info->name);
      gtk_label_set_text (self->run_title, title);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->run_title), self->run_info->source);
      /* TRANSLATORS: %s is the framework that wrote the run ("verl", "slime") */
      g_string_append_printf (sub, _ ("logged by %s"), self->run_info->framework);
      g_string_append (sub, " · ");
      g_string_append_printf (sub,
                              g_dngettext (GETTEXT_PACKAGE, "%" G_GINT64_FORMAT " stored batch",
                                           "%" G_GINT64_FORMAT " stored batches",
                                           (gulong)self->run_info->n_batches),
                              self->run_info->n_batches);
      g_string_append (sub, " · ");
    }
  if (self->run_info != NULL)
    {
      if (self->run_gen_source != NULL)
        {
          /* TRANSLATORS: how the run's generation and config were found */
          const char *how = self->run_has_config ? _ ("config from the log")
                            : g_strcmp0 (self->run_gen_source, "inferred") == 0
                              ? _ ("inferred from the metric keys")
                              : _ ("generation from the log, no config printed");
          g_string_append_printf (sub, "%s · %s · ", dw_generation_name (self->run_gen), how);
        }
      if (self->preset == NULL && self->run_has_config)
        /* TRANSLATORS: the generation the config is written for */
        g_string_append_printf (sub, _ ("evaluated as %s with the run’s own config"),
                                dw_generation_name (self->gen));
      else
        /* TRANSLATORS: the generation the config is written for, then the preset */
        g_string_append_printf (sub, _ ("evaluated as %s, preset %s"),
                                dw_generation_name (self->gen), self->preset ? self->preset : "—");
      if (modified)
        /* TRANSLATORS: after the preset name when the controls changed some of its values */
        g_string_append (sub, _ (" (modified)"));
      if (self->run_check_text != NULL)
        g_string_append_printf (sub, "\n%s%s",
                                self->run_agreement == DW_RUN_AGREEMENT_DISAGREES ? "⚠ " : "",
                                self->run_check_text);
    }
  if (self->run_agreement == DW_RUN_AGREEMENT_DISAGREES)
    gtk_widget_add_css_class (GTK_WIDGET (self->run_subtitle), "warning");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->run_subtitle), "warning");
  gtk_label_set_text (self->run_subtitle, sub->str);
}

/* ------------------------------------------------------------------------------------------ */
/* "As verl reads it"                                                                         */

static void
update_grammar (DwTuneView *self)
{
  g_autoptr (GString) s = g_string_new (NULL);
  const DwConfig *c = &self->config;
  for (size_t i = 0; i < c->n_keys; i++)
    {
      if (!dw_tune_export_key_accepted (self->gen, c->keys[i]))
        continue;
      char buf[DW_VALUE_STR_MAX + 8];
      const DwValue *v = &c->values[i];
      if (v->kind == DW_VALUE_STR)
        g_snprintf (buf, sizeof buf, "\"%s\"", v->s);
      else
        dw_value_to_python_str (v, buf, sizeof buf);
      g_string_append_printf (s, "%s = %s\n", c->keys[i], buf);
    }
  const char *rs_options = role_key (self, DW_ROLE_RS_OPTIONS);
  if (rs_kind_of (self->gen) == RS_KIND_HEAD && rs_options && dw_config_get (c, rs_options)
      && dw_config_get (c, rs_options)->kind != DW_VALUE_NONE)
    {
      DwRsParsed parsed;
      DwCorrectionError err;
      if (dw_rs_parse (dw_config_get (c, rs_options),
                       dw_config_get (c, role_key (self, DW_ROLE_RS_THRESHOLD)), &parsed, &err))
        for (gsize j = 0; j < parsed.n; j++)
          {
            const DwRsBound *b = &parsed.bounds[j];
            char lo[64], up[64];
            dw_python_float_repr (b->upper, up, sizeof up);
            if (b->has_lower)
              {
                char llo[64], lup[64];
                dw_python_float_repr (b->lower, lo, sizeof lo);
                dw_python_float_repr (b->log_lower, llo, sizeof llo);
                dw_python_float_repr (b->log_upper, lup, sizeof lup);
                /* TRANSLATORS: an RS option and how verl parsed its bounds */
                g_string_append_printf (s, _ ("%s: keep %s ≤ ratio⁻¹ ≤ %s (log %s … %s)\n"),
                                        dw_rs_option_name (b->option), lo, up, llo, lup);
              }
            else
              g_string_append_printf (s, _ ("%s: keep statistic ≤ %s\n"),
                                      dw_rs_option_name (b->option), up);
          }
      else
        g_string_append_printf (s, _ ("verl raises %s: %s\n"), dw_error_kind_name (err.kind),
                                err.message);
    }
  DwCorrectionError err;
  if (!dw_correction_check_config (c, &err))
    g_string_append_printf (s, _ ("verl raises %s: %s\n"), dw_error_kind_name (err.kind),
                            err.message);
  if (s->len && s->str[s->len - 1] == '\n')
    g_string_truncate (s, s->len - 1);
  gtk_label_set_text (self->grammar_label, s->str);
  update_modified (self);
}

/* ------------------------------------------------------------------------------------------ */
/* Results → charts, summary, length bias                                                     */

/* The metric of @res that maps to @spec's metric (or its alternative): the shortest such key
 * (the option-independent key rather than a per-option one). */
static const char *
canonical_key (const DwWhatifStepResult *res, const ChartSpec *spec)
{
  const char *best = NULL;
  for (gsize m = 0; m < res->result.n_metrics; m++)
    {
      const char *k = res->result.metrics[m].key;
      const char *c = dw_canonical_for_tag (k);
      const char *slash = strrchr (k, '/');
      gboolean same = c ? strcmp (c, spec->canonical) == 0 || g_strcmp0 (c, spec->alternative) == 0
                        : strcmp (slash ? slash + 1 : k, spec->canonical) == 0;
      if (same && (!best || strlen (k) < strlen (best)))
        best = k;
    }
  return best;
}

static void
whatif_values (DwTuneView *self, const ChartSpec *spec, double *values, gboolean *any_approx)
{
  const DwWhatifRunResult *res = self->result;
  char key[DW_METRIC_KEY_MAX] = "";
  *any_approx = FALSE;
  for (guint i = 0; i < res->n_steps; i++)
    {
      const DwWhatifStepResult *r = &res->results[i];
      values[i] = NAN;
      if (r->failed || r->pending)
        {
          *any_approx |= r->pending;
          continue;
        }
      const double *v = key[0] ? dw_whatif_step_result_get (r, key, NULL) : NULL;
      if (!v)
        {
          const char *k = canonical_key (r, spec);
          if (!k)
            continue;
          g_strlcpy (key, k, sizeof key);
        }
      gboolean approx = FALSE;
      v = dw_whatif_step_result_get (r, key, &approx);
      if (v)
        values[i] = *v;
      *any_approx |= approx;
    }
}

static double
finite_mean (const double *v, gsize n)
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

static void
summary_cell (DwTuneView *self, int col, int row, const char *text, gboolean numeric,
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
}

static char *
format_metric (double v, gboolean approx)
{
  if (isnan (v))
    return g_strdup ("—");
  return g_strdup_printf ("%s%.4g", approx ? "≈ " : "", v);
}

static void
update_charts_and_summary (DwTuneView *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->summary_grid))))
    gtk_grid_remove (self->summary_grid, child);
  summary_cell (self, 0, 0, _ ("Metric"), FALSE, TRUE);
  summary_cell (self, 1, 0, _ ("Logged"), TRUE, TRUE);
  summary_cell (self, 2, 0, _ ("What-if"), TRUE, TRUE);
  summary_cell (self, 3, 0, _ ("Change"), TRUE, TRUE);
  const DwWhatifRunResult *res = self->result;
  if (!res)
    return;
  g_autofree double *values = g_new (double, MAX (res->n_steps, 1u));
  g_autofree double *logged_at = g_new (double, MAX (res->n_steps, 1u));
  /* purple: orange would read as a warning */
  static const GdkRGBA whatif_color = { 0.569f, 0.255f, 0.675f, 1.0f };
  for (guint c = 0; c < N_CHARTS; c++)
    {
      gboolean approx;
      whatif_values (self, &chart_specs[c], values, &approx);
      DwChart *chart = self->charts[c];
      dw_chart_remove_series (chart, "whatif");
      gboolean any = FALSE;
      for (guint i = 0; i < res->n_steps && !any; i++)
        any = !isnan (values[i]);
      if (!any)
        {
          /* the config does not produce this metric (e.g. no veto at verl HEAD) */
          dw_chart_data_changed (chart);
          summary_cell (self, 0, (int)c + 1, _ (chart_specs[c].title), FALSE, FALSE);
          summary_cell (self, 1, (int)c + 1, "—", TRUE, FALSE);
          summary_cell (self, 2, (int)c + 1, "—", TRUE, FALSE);
          summary_cell (self, 3, (int)c + 1, "—", TRUE, FALSE);
          continue;
        }
      DwPlotSeries *s = dw_chart_add_series (
        chart, "whatif", approx ? _ ("What-if (≈ approximate)") : _ ("What-if"), &whatif_color);
      dw_plot_series_append (s, res->steps, NULL, values, res->n_steps);
      dw_chart_data_changed (chart);

      /* logged mean over the same steps */
      DwPlotSeries *ls = dw_chart_get_series (chart, "logged");
      for (guint i = 0; i < res->n_steps; i++)
        logged_at[i] = NAN;
      if (ls)
        {
          const gint64 *st = dw_plot_series_get_steps (ls);
          const double *lv = dw_pyramid_get_values (dw_plot_series_get_raw (ls));
          DwSeries tmp
            = { dw_plot_series_get_length (ls), (gint64 *)st, NULL, (double *)lv, 0, NULL };
          for (guint i = 0; i < res->n_steps; i++)
            {
              gssize j = dw_series_find_step (&tmp, res->steps[i]);
              if (j >= 0)
                logged_at[i] = lv[j];
            }
        }
      double lm = finite_mean (logged_at, res->n_steps);
      double wm = finite_mean (values, res->n_steps);
      g_autofree char *lt = format_metric (lm, FALSE);
      g_autofree char *wt = format_metric (wm, approx);
      g_autofree char *dt
        = isfinite (lm) && isfinite (wm) ? g_strdup_printf ("%+.3g", wm - lm) : g_strdup ("—");
      summary_cell (self, 0, (int)c + 1, _ (chart_specs[c].title), FALSE, FALSE);
      summary_cell (self, 1, (int)c + 1, lt, TRUE, FALSE);
      summary_cell (self, 2, (int)c + 1, wt, TRUE, FALSE);
      summary_cell (self, 3, (int)c + 1, dt, TRUE, FALSE);
    }
}

static void
update_empty_labels (DwTuneView *self)
{
  for (guint c = 0; c < N_CHARTS; c++)
    {
      gboolean empty = !self->loading && dw_chart_get_n_series (self->charts[c]) == 0;
      gtk_widget_set_visible (self->empty_labels[c], empty);
      gtk_widget_set_visible (GTK_WIDGET (self->charts[c]), !empty);
    }
}

static guint
len_bin (DwTuneView *self, double len)
{
  if (!(self->max_len > 0))
    return 0;
  guint b = (guint)(len / self->max_len * N_LEN_BINS);
  return MIN (b, N_LEN_BINS - 1);
}

/* Accumulates rejection per length bin for @config into slot @slot. */
static void
length_outcomes (DwTuneView *self, const DwConfig *config, guint slot)
{
  memset (self->len_rows[slot], 0, sizeof self->len_rows[slot]);
  memset (self->len_rejected[slot], 0, sizeof self->len_rejected[slot]);
  self->len_valid[slot] = FALSE;
  if (!self->engine)
    return;
  guint n = dw_whatif_engine_get_n_steps (self->engine);
  g_autofree double *lengths = NULL;
  g_autofree guint8 *rejected = NULL;
  gsize cap = 0;
  gboolean any = FALSE;
  for (guint i = 0; i < n; i++)
    {
      const DwWhatifStep *st = dw_whatif_engine_get_step (self->engine, i);
      gsize rows = dw_whatif_step_get_n_rows (st);
      if (rows > cap)
        {
          cap = rows;
          lengths = g_renew (double, lengths, cap);
          rejected = g_renew (guint8, rejected, cap);
        }
      if (!rows || !dw_whatif_step_row_outcomes (st, config, lengths, rejected))
        continue;
      any = TRUE;
      for (gsize r = 0; r < rows; r++)
        {
          if (slot == 1 && lengths[r] > self->max_len)
            self->max_len = lengths[r];
          if (lengths[r] <= 0)
            continue;
          guint b = len_bin (self, lengths[r]);
          self->len_rows[slot][b]++;
          self->len_rejected[slot][b] += rejected[r] != 0;
        }
    }
  self->len_valid[slot] = any;
}

/* The length-bias references: one RS option of the newest verl, its keys found by role. */
static void
reference_config (DwConfig *c, const char *option, const char *spec)
{
  dw_config_init (c, DW_GEN_VERL_LATEST);
  config_set_str (c, dw_schema_find_role (DW_GEN_VERL_LATEST, DW_ROLE_RS_OPTIONS)->name, option);
  config_set_str (c, dw_schema_find_role (DW_GEN_VERL_LATEST, DW_ROLE_RS_THRESHOLD)->name, spec);
}

static void
compute_length_references (DwTuneView *self)
{
  DwConfig c;
  self->max_len = 0;
  /* the first pass finds the longest sequence: run it twice so slot 1 uses the final bins */
  reference_config (&c, "seq_sum_k1", "0.5_2.0");
  length_outcomes (self, &c, 1);
  length_outcomes (self, &c, 1);
  reference_config (&c, "seq_mean_k1", "0.999_1.001");
  length_outcomes (self, &c, 2);
}

static void
update_status (DwTuneView *self)
{
  update_empty_labels (self);
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
      else if (self->result->any_approximate)
        g_string_append (s, self->exact_running
                              ? _ (" — values marked ≈ are approximate, exact pass running…")
                              : _ (" — values marked ≈ are approximate"));
      else
        g_string_append (s, _ (" — exact"));
    }
  gtk_label_set_text (self->status_label, s->str);
}

static void
set_result (DwTuneView *self, DwWhatifRunResult *res)
{
  g_clear_pointer (&self->result, dw_whatif_run_result_free);
  self->result = res;
  update_charts_and_summary (self);
  length_outcomes (self, &self->config, 0);
  gtk_widget_queue_draw (GTK_WIDGET (self->length_area));
  gtk_widget_queue_draw (GTK_WIDGET (self->hist_area));
  update_status (self);
  g_signal_emit (self, signals[SIGNAL_EVALUATED], 0, !res->any_approximate);
}

static void
on_exact_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (DwTuneView) self = user_data;
  g_autoptr (GError) error = NULL;
  DwWhatifRunResult *res
    = dw_whatif_engine_evaluate_exact_finish ((DwWhatifEngine *)source, result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* superseded by a newer change */
  self->exact_running = FALSE;
  g_clear_object (&self->exact_cancellable);
  if (!res)
    {
      g_free (self->error_text);
      self->error_text = g_strdup (error->message);
      update_status (self);
      set_busy_changed (self);
      return;
    }
  set_result (self, res);
  set_busy_changed (self);
}

static void
evaluate_now (DwTuneView *self)
{
  g_autoptr (GError) error = NULL;
  self->dirty = FALSE;
  if (!self->engine)
    return;
  if (self->exact_cancellable)
    {
      g_cancellable_cancel (self->exact_cancellable);
      g_clear_object (&self->exact_cancellable);
      self->exact_running = FALSE;
    }
  DwWhatifRunResult *res = dw_whatif_engine_evaluate (self->engine, &self->config, &error);
  if (!res)
    {
      g_free (self->error_text);
      self->error_text = g_strdup (error->message);
      update_status (self);
      return;
    }
  gboolean approx = res->any_approximate;
  if (approx)
    {
      self->exact_cancellable = g_cancellable_new ();
      self->exact_running = TRUE;
      dw_whatif_engine_evaluate_exact_async (self->engine, &self->config, self->exact_cancellable,
                                             on_exact_done, g_object_ref (self));
    }
  set_result (self, res);
  set_busy_changed (self);
}

static gboolean
on_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  DwTuneView *self = DW_TUNE_VIEW (widget);
  self->tick_id = 0;
  if (self->dirty)
    evaluate_now (self);
  return G_SOURCE_REMOVE;
}

static void
on_idle_evaluate (gpointer user_data)
{
  DwTuneView *self = user_data;
  self->idle_id = 0;
  if (self->dirty)
    evaluate_now (self);
}

/* At most one evaluation per frame however many changes arrive (a dragged slider emits many);
 * unmapped (tests, offscreen rendering), an idle does the same. */
static void
schedule_evaluation (DwTuneView *self)
{
  if (!self->engine || self->loading)
    return;
  gboolean was_busy = dw_tune_view_get_busy (self);
  self->dirty = TRUE;
  if (self->tick_id || self->idle_id)
    return;
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), on_tick, NULL, NULL);
  else
    self->idle_id = g_idle_add_once (on_idle_evaluate, self);
  if (!was_busy)
    set_busy_changed (self);
}

/* ------------------------------------------------------------------------------------------ */
/* Drawing: histogram and length bias                                                         */

typedef struct
{
  double x;
  const char *label;
  int color; /* 0 IS, 1 RS, 2 veto */
} ThresholdLine;

/* k3(ℓ) = exp(ℓ) − 1 − ℓ = u on the side @sign of 0 */
static double
k3_inverse (double u, double sign)
{
  double lo = 0, hi = 50;
  for (int i = 0; i < 200; i++)
    {
      double mid = 0.5 * (lo + hi);
      double l = sign * mid;
      if (exp (l) - 1 - l < u)
        lo = mid;
      else
        hi = mid;
    }
  return sign * 0.5 * (lo + hi);
}

/* Token-level thresholds in log-ratio (ℓ = log π_train − log π_rollout) space. */
static guint
token_thresholds (DwTuneView *self, ThresholdLine *out, guint max)
{
  guint n = 0;
#define ADD(X, L, C)                               \
  G_STMT_START                                     \
  {                                                \
    if (n < max && isfinite (X))                   \
      out[n++] = (ThresholdLine){ (X), (L), (C) }; \
  }                                                \
  G_STMT_END
  guint li = adw_combo_row_get_selected (self->is_level_row);
  if (li != GTK_INVALID_LIST_POSITION && self->levels[li]
      && strcmp (self->levels[li], "token") == 0)
    ADD (log (self->is_threshold->value), _ ("IS cap"), 0);
  for (guint i = 0; i < N_RS; i++)
    {
      const RsRow *row = &self->rs[i];
      if (!gtk_widget_get_visible (row->expander) || !rs_row_enabled (row))
        continue;
      const char *name = row->spec->name;
      double up = row->upper->value;
      if (strcmp (name, "token_k1") == 0)
        {
          ADD (-log (up), "token_k1", 1);
          ADD (-log (row->lower->value), "token_k1", 1);
        }
      else if (strcmp (name, "token_k2") == 0)
        {
          ADD (sqrt (2 * up), "token_k2", 1);
          ADD (-sqrt (2 * up), "token_k2", 1);
        }
      else if (strcmp (name, "token_k3") == 0)
        {
          ADD (k3_inverse (up, 1), "token_k3", 1);
          ADD (k3_inverse (up, -1), "token_k3", 1);
        }
      else if (strcmp (name, "token") == 0)
        {
          ADD (log (up), _ ("RS"), 1);
          ADD (log (row->lower->value), _ ("RS"), 1);
        }
    }
  if (gtk_widget_get_visible (GTK_WIDGET (self->veto_group))
      && adw_expander_row_get_enable_expansion (ADW_EXPANDER_ROW (self->veto_row)))
    ADD (log (self->veto->value), _ ("veto"), 2);
#undef ADD
  return n;
}

static void
fg_color (GtkWidget *w, GdkRGBA *c)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (w), c);
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static void
draw_axes_text (cairo_t *cr, double x, double y, const char *text, double xalign)
{
  cairo_text_extents_t e;
  cairo_text_extents (cr, text, &e);
  cairo_move_to (cr, x - xalign * e.x_advance, y);
  cairo_show_text (cr, text);
}

static const GdkRGBA line_colors[] = {
  { 0.208f, 0.518f, 0.894f, 1.0f }, /* IS: blue 3 */
  { 0.878f, 0.106f, 0.141f, 1.0f }, /* RS: red 3 */
  { 0.569f, 0.255f, 0.675f, 1.0f }, /* veto: purple 3 */
};

static void
draw_histogram (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  DwTuneView *self = user_data;
  GdkRGBA fg;
  fg_color (GTK_WIDGET (area), &fg);
  cairo_select_font_face (cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 11);
  guint idx = (guint)gtk_adjustment_get_value (self->step_adjustment);
  if (!self->engine || idx >= dw_whatif_engine_get_n_steps (self->engine))
    return;
  const DwWhatifStep *st = dw_whatif_engine_get_step (self->engine, idx);
  if (dw_whatif_step_get_n_tokens (st) == 0)
    return;
  ThresholdLine lines[32];
  guint n_lines = token_thresholds (self, lines, G_N_ELEMENTS (lines));
  double lo = dw_whatif_step_quantile (st, 0.0005), hi = dw_whatif_step_quantile (st, 0.9995);
  for (guint i = 0; i < n_lines; i++)
    {
      lo = MIN (lo, lines[i].x);
      hi = MAX (hi, lines[i].x);
    }
  lo = MAX (lo, -20.0);
  hi = MIN (hi, 20.0);
  double pad = 0.05 * (hi - lo);
  if (!(pad > 0))
    pad = 0.01;
  lo -= pad;
  hi += pad;
  guint64 counts[N_HIST_BINS];
  dw_whatif_step_histogram (st, lo, hi, N_HIST_BINS, counts);
  guint64 cmax = 1;
  for (guint i = 0; i < N_HIST_BINS; i++)
    cmax = MAX (cmax, counts[i]);
  const double ml = 8, mr = 8, mt = 30, mb = 22;
  double pw = width - ml - mr, ph = height - mt - mb;
  if (pw <= 10 || ph <= 10)
    return;
  /* counts on a log scale: the tails that thresholds cut are a few tokens among thousands */
  double lmax = log1p ((double)cmax);
  cairo_set_source_rgba (cr, 0.208, 0.518, 0.894, 0.55);
  for (guint i = 0; i < N_HIST_BINS; i++)
    {
      if (!counts[i])
        continue;
      double h = log1p ((double)counts[i]) / lmax * ph;
      double x0 = ml + pw * i / N_HIST_BINS;
      cairo_rectangle (cr, x0 + 0.5, mt + ph - h, pw / N_HIST_BINS - 1, h);
    }
  cairo_fill (cr);
  /* axis */
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.6);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, ml, mt + ph + 0.5);
  cairo_line_to (cr, ml + pw, mt + ph + 0.5);
  cairo_stroke (cr);
  char buf[64];
  for (int t = 0; t <= 4; t++)
    {
      double v = lo + (hi - lo) * t / 4;
      g_snprintf (buf, sizeof buf, "%.3g", v);
      draw_axes_text (cr, ml + pw * t / 4, height - 6, buf, t == 0 ? 0 : t == 4 ? 1 : 0.5);
    }
  /* ℓ = 0 */
  if (lo < 0 && hi > 0)
    {
      double x0 = ml + pw * (0 - lo) / (hi - lo);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.3);
      cairo_move_to (cr, floor (x0) + 0.5, mt);
      cairo_line_to (cr, floor (x0) + 0.5, mt + ph);
      cairo_stroke (cr);
    }
  double row_x0[2] = { G_MAXDOUBLE, G_MAXDOUBLE }, row_x1[2] = { -G_MAXDOUBLE, -G_MAXDOUBLE };
  for (guint i = 0; i < n_lines; i++)
    {
      double x = ml + pw * (lines[i].x - lo) / (hi - lo);
      const GdkRGBA *c = &line_colors[lines[i].color];
      cairo_set_source_rgba (cr, c->red, c->green, c->blue, 1);
      cairo_set_line_width (cr, 2);
      cairo_move_to (cr, x, mt);
      cairo_line_to (cr, x, mt + ph);
      cairo_stroke (cr);
      /* each label goes to the first of two rows where it overlaps no earlier label, so that
       * close lines stay readable; a line with the same label as the previous one needs none */
      if (i > 0 && strcmp (lines[i].label, lines[i - 1].label) == 0
          && fabs (x - (ml + pw * (lines[i - 1].x - lo) / (hi - lo))) < 60)
        continue;
      cairo_text_extents_t e;
      cairo_text_extents (cr, lines[i].label, &e);
      gboolean right = x > ml + pw / 2;
      double x0 = right ? x - 3 - e.x_advance : x + 3, x1 = x0 + e.x_advance;
      guint r = 0;
      while (r < 1 && !(x1 < row_x0[r] || x0 > row_x1[r]))
        r++;
      row_x0[r] = MIN (row_x0[r], x0);
      row_x1[r] = MAX (row_x1[r], x1);
      draw_axes_text (cr, x0, mt - 4 - r * 13, lines[i].label, 0);
    }
}

static void
draw_length_bias (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  DwTuneView *self = user_data;
  GdkRGBA fg;
  fg_color (GTK_WIDGET (area), &fg);
  cairo_select_font_face (cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 11);
  const double ml = 40, mr = 8, mt = 8, mb = 40;
  double pw = width - ml - mr, ph = height - mt - mb;
  if (pw <= 10 || ph <= 10 || !(self->max_len > 0))
    {
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.6);
      draw_axes_text (cr, width / 2.0, height / 2.0, _ ("No sequence statistics"), 0.5);
      return;
    }
  double ymax = 0.05;
  for (guint s = 0; s < 3; s++)
    for (guint b = 0; b < N_LEN_BINS; b++)
      if (self->len_valid[s] && self->len_rows[s][b])
        ymax = MAX (ymax, (double)self->len_rejected[s][b] / (double)self->len_rows[s][b]);
  ymax = MIN (1.0, ymax * 1.1);
  cairo_set_line_width (cr, 1);
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.15);
  char buf[64];
  for (int t = 0; t <= 4; t++)
    {
      double y = mt + ph - ph * t / 4;
      cairo_move_to (cr, ml, floor (y) + 0.5);
      cairo_line_to (cr, ml + pw, floor (y) + 0.5);
    }
  cairo_stroke (cr);
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.7);
  for (int t = 0; t <= 4; t++)
    {
      double y = mt + ph - ph * t / 4;
      g_snprintf (buf, sizeof buf, "%.0f%%", 100 * ymax * t / 4);
      draw_axes_text (cr, ml - 4, y + 4, buf, 1);
      g_snprintf (buf, sizeof buf, "%.0f", self->max_len * t / 4);
      draw_axes_text (cr, ml + pw * t / 4, mt + ph + 14, buf, t == 0 ? 0 : t == 4 ? 1 : 0.5);
    }
  /* none of them green, amber or red: those colours mean good, warning, error */
  static const GdkRGBA colors[] = {
    { 0.569f, 0.255f, 0.675f, 1.0f }, /* what-if: purple, as in the charts */
    { 0.208f, 0.518f, 0.894f, 0.8f }, /* sequence bound: blue */
    { 0.129f, 0.565f, 0.643f, 0.9f }, /* geometric: teal */
  };
  const char *names[]
    = { _ ("What-if"), _ ("Sequence bound 0.5_2.0"), _ ("Geometric 0.999_1.001") };
  double lx = ml;
  for (guint s = 0; s < 3; s++)
    {
      if (!self->len_valid[s])
        continue;
      cairo_set_source_rgba (cr, colors[s].red, colors[s].green, colors[s].blue, colors[s].alpha);
      cairo_set_line_width (cr, s == 0 ? 2.5 : 1.5);
      gboolean started = FALSE;
      for (guint b = 0; b < N_LEN_BINS; b++)
        {
          if (!self->len_rows[s][b])
            continue;
          double x = ml + pw * (b + 0.5) / N_LEN_BINS;
          double y
            = mt + ph
              - ph * ((double)self->len_rejected[s][b] / (double)self->len_rows[s][b]) / ymax;
          if (started)
            cairo_line_to (cr, x, y);
          else
            cairo_move_to (cr, x, y);
          started = TRUE;
        }
      cairo_stroke (cr);
      /* legend */
      double ly = height - 8;
      cairo_rectangle (cr, lx, ly - 8, 12, 3);
      cairo_fill (cr);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.8);
      cairo_text_extents_t e;
      cairo_text_extents (cr, names[s], &e);
      cairo_move_to (cr, lx + 16, ly - 4);
      cairo_show_text (cr, names[s]);
      lx += 16 + e.x_advance + 14;
    }
}

static void
on_step_changed (GtkAdjustment *adj, DwTuneView *self)
{
  if (!self->engine)
    return;
  guint idx = (guint)gtk_adjustment_get_value (adj);
  if (idx < dw_whatif_engine_get_n_steps (self->engine))
    {
      gint64 step = dw_whatif_step_get_step (dw_whatif_engine_get_step (self->engine, idx));
      g_autofree char *t = g_strdup_printf (
        _ ("Token log-ratios ℓ = log π_train − log π_rollout at step %" PRId64), step);
      gtk_label_set_text (self->hist_title, t);
      for (guint c = 0; c < N_CHARTS; c++)
        dw_chart_set_cursor_x (self->charts[c], (double)step);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self->hist_area));
}

/* A click on a chart picks the step under the pointer for the histogram. */
static void
on_chart_released (GtkGestureClick *gesture, int n_press, double x, double y, DwTuneView *self)
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

/* ------------------------------------------------------------------------------------------ */
/* Loading a run                                                                              */

typedef struct
{
  DwStore *store;
  GMutex lock;
  gint64 run_id;
} LoaderCtx;

static void
loader_ctx_free (gpointer data)
{
  LoaderCtx *ctx = data;
  g_clear_object (&ctx->store);
  g_mutex_clear (&ctx->lock);
  g_free (ctx);
}

static DwBatch *
load_batch (gint64 step, gpointer user_data, GError **error)
{
  LoaderCtx *ctx = user_data;
  g_mutex_lock (&ctx->lock);
  DwBatch *b = dw_store_load_batch (ctx->store, ctx->run_id, step, error);
  g_mutex_unlock (&ctx->lock);
  return b;
}

typedef struct
{
  char *path;
  gint64 run_id;
} LoadData;

static void
load_data_free (LoadData *d)
{
  g_free (d->path);
  g_free (d);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadData *d = task_data;
  GError *error = NULL;
  /* a connection of our own: the window's is used on the main thread meanwhile */
  DwStore *store = dw_store_open_read_only (d->path, &error);
  if (!store)
    {
      g_task_return_error (task, error);
      return;
    }
  g_autoptr (GArray) steps = dw_store_list_batch_steps (store, d->run_id, &error);
  if (!steps)
    {
      g_object_unref (store);
      g_task_return_error (task, error);
      return;
    }
  LoaderCtx *ctx = g_new0 (LoaderCtx, 1);
  ctx->store = store;
  ctx->run_id = d->run_id;
  g_mutex_init (&ctx->lock);
  DwWhatifEngine *engine = dw_whatif_engine_new (0);
  dw_whatif_engine_set_loader (engine, load_batch, ctx, loader_ctx_free);
  if (!dw_whatif_engine_load_steps (engine, (const gint64 *)(gpointer)steps->data, steps->len,
                                    &error))
    {
      dw_whatif_engine_unref (engine);
      g_task_return_error (task, error);
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    {
      dw_whatif_engine_unref (engine);
      return;
    }
  g_task_return_pointer (task, engine, (GDestroyNotify)dw_whatif_engine_unref);
}

static void
load_logged_series (DwTuneView *self)
{
  static const GdkRGBA logged_color = { 0.208f, 0.518f, 0.894f, 1.0f };
  for (guint c = 0; c < N_CHARTS; c++)
    {
      DwChart *chart = self->charts[c];
      dw_chart_clear (chart);
      if (!self->store)
        continue;
      g_autoptr (GError) error = NULL;
      /* a canonical metric by its id; another by the key the run's generation logs it as */
      g_autofree char *tag = dw_canonical_lookup (chart_specs[c].canonical)
                               ? g_strdup (chart_specs[c].canonical)
                               : g_strconcat (dw_schema_get (self->run_gen)->metric_prefix,
                                              chart_specs[c].canonical, NULL);
      g_autoptr (DwSeries) s
        = dw_store_get_series (self->store, self->run_id, tag, G_MININT64, &error);
      if (!s && chart_specs[c].alternative != NULL)
        {
          g_clear_error (&error);
          s = dw_store_get_series (self->store, self->run_id, chart_specs[c].alternative,
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
on_load_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (DwTuneView) self = user_data;
  g_autoptr (GError) error = NULL;
  DwWhatifEngine *engine = g_task_propagate_pointer (G_TASK (result), &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  self->loading = FALSE;
  g_clear_object (&self->load_cancellable);
  if (!engine)
    {
      g_free (self->error_text);
      self->error_text
        = g_strdup_printf (_ ("Cannot precompute the run’s batches: %s"), error->message);
      update_status (self);
      set_busy_changed (self);
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
      update_status (self);
      set_busy_changed (self);
      return;
    }
  self->engine = engine;
  gtk_adjustment_configure (self->step_adjustment, n ? n - 1 : 0, 0, n ? n - 1 : 0, 1, 10, 0);
  on_step_changed (self->step_adjustment, self);
  compute_length_references (self);
  /* evaluate at once: the first evaluation also creates the engine's thread pool on this
   * thread, before any exact pass could race for it */
  self->dirty = TRUE;
  evaluate_now (self);
  if (!self->result)
    set_busy_changed (self);
}

/* ------------------------------------------------------------------------------------------ */
/* Export                                                                                     */

static const char *
selected_format (DwTuneView *self)
{
  guint i = gtk_drop_down_get_selected (self->format_dropdown);
  return self->formats && i != GTK_INVALID_LIST_POSITION && self->formats[i] ? self->formats[i]
                                                                             : "yaml";
}

static void
copy_config_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  DwTuneView *self = DW_TUNE_VIEW (widget);
  g_autoptr (GError) error = NULL;
  g_autofree char *text = dw_tune_view_export_config (self, selected_format (self), &error);
  if (!text)
    {
      g_autofree char *msg = g_strdup_printf (_ ("Cannot export the config: %s"), error->message);
      gtk_label_set_text (self->status_label, msg);
      return;
    }
  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), text);
  gtk_label_set_text (self->status_label, _ ("Config copied to the clipboard"));
}

static void
on_paste_text (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (DwTuneView) self = user_data;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), result, &error);
  if (!text || !dw_tune_view_import_config (self, text, &error))
    {
      g_autofree char *msg
        = g_strdup_printf (_ ("Cannot import the config: %s"),
                           error ? error->message : _ ("the clipboard holds no text"));
      gtk_label_set_text (self->status_label, msg);
    }
}

static void
paste_config_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (widget), NULL, on_paste_text,
                                 g_object_ref (widget));
}

static void
on_save_response (GtkNativeDialog *dialog, int response, DwTuneView *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autoptr (GError) error = NULL;
      g_autofree char *text = dw_tune_view_export_config (self, selected_format (self), &error);
      if (text
          && g_file_replace_contents (file, text, strlen (text), NULL, FALSE,
                                      G_FILE_CREATE_REPLACE_DESTINATION, NULL, NULL, &error))
        {
          g_autofree char *name = g_file_get_parse_name (file);
          g_autofree char *msg = g_strdup_printf (_ ("Config saved to %s"), name);
          gtk_label_set_text (self->status_label, msg);
        }
      else
        {
          g_autofree char *msg = g_strdup_printf (_ ("Cannot save the config: %s"), error->message);
          gtk_label_set_text (self->status_label, msg);
        }
    }
  g_clear_object (&self->save_dialog);
}

static void
save_config_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  DwTuneView *self = DW_TUNE_VIEW (widget);
  if (self->save_dialog)
    return;
  GtkRoot *root = gtk_widget_get_root (widget);
  self->save_dialog = gtk_file_chooser_native_new (
    _ ("Save Config"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
    GTK_FILE_CHOOSER_ACTION_SAVE, _ ("_Save"), _ ("_Cancel"));
  const char *f = selected_format (self);
  gtk_file_chooser_set_current_name (
    GTK_FILE_CHOOSER (self->save_dialog),
    strcmp (f, "yaml") == 0
      ? (role_key (self, DW_ROLE_FUNCTION) ? "mis.yaml" : "rollout_correction.yaml")
      : "rollout_correction.txt");
  g_signal_connect (self->save_dialog, "response", G_CALLBACK (on_save_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->save_dialog));
}

/* ------------------------------------------------------------------------------------------ */
/* Construction                                                                               */

static GtkWidget *
preset_item_widget (void)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *name = gtk_label_new (NULL);
  GtkWidget *desc = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (name), 0);
  gtk_label_set_xalign (GTK_LABEL (desc), 0);
  gtk_label_set_wrap (GTK_LABEL (desc), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (desc), 50);
  gtk_widget_add_css_class (desc, "dim-label");
  gtk_widget_add_css_class (desc, "caption");
  gtk_box_append (GTK_BOX (box), name);
  gtk_box_append (GTK_BOX (box), desc);
  return box;
}

static void
preset_item_setup (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  gtk_list_item_set_child (item, preset_item_widget ());
}

static void
preset_item_bind (GtkSignalListItemFactory *factory, GtkListItem *item, DwTuneView *self)
{
  GtkWidget *box = gtk_list_item_get_child (item);
  GtkWidget *name = gtk_widget_get_first_child (box);
  GtkWidget *desc = gtk_widget_get_next_sibling (name);
  const char *n = gtk_string_object_get_string (gtk_list_item_get_item (item));
  const DwPresetInfo *info = dw_preset_lookup (self->gen, n);
  gtk_label_set_text (GTK_LABEL (name), n);
  gtk_label_set_text (GTK_LABEL (desc), info ? info->description : "");
}

/* The selected preset beside the row title: whole, never ellipsized (the title and the
 * description subtitle wrap to make room). */
static void
preset_value_setup (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_NONE);
  gtk_label_set_xalign (GTK_LABEL (label), 1);
  gtk_list_item_set_child (item, label);
}

static void
preset_value_bind (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)),
                      gtk_string_object_get_string (gtk_list_item_get_item (item)));
}

static void
build_controls (DwTuneView *self)
{
  /* generations */
  g_autoptr (GtkStringList) gens = gtk_string_list_new (NULL);
  dw_tune_schema_generation_order (self->gen_order);
  for (guint g = 0; g < DW_N_GENERATIONS; g++)
    gtk_string_list_append (gens, dw_generation_name (self->gen_order[g]));
  adw_combo_row_set_model (self->generation_row, G_LIST_MODEL (gens));
  gtk_widget_set_name (GTK_WIDGET (self->generation_row), "generation-row");
  gtk_widget_set_name (GTK_WIDGET (self->preset_row), "preset-row");
  gtk_widget_set_name (GTK_WIDGET (self->status_label), "status-label");
  gtk_widget_set_name (GTK_WIDGET (self->run_title), "run-title");
  gtk_widget_set_name (GTK_WIDGET (self->run_subtitle), "run-subtitle");
  gtk_widget_set_name (GTK_WIDGET (self->is_level_row), "is-level-row");
  gtk_widget_set_name (GTK_WIDGET (self->is_mode_row), "is-mode-row");
  gtk_widget_set_name (GTK_WIDGET (self->function_row), "function-row");

  g_autoptr (GtkListItemFactory) factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (preset_item_setup), self);
  g_signal_connect (factory, "bind", G_CALLBACK (preset_item_bind), self);
  adw_combo_row_set_list_factory (self->preset_row, factory);
  {
    g_autoptr (GtkListItemFactory) value = gtk_signal_list_item_factory_new ();

    g_signal_connect (value, "setup", G_CALLBACK (preset_value_setup), NULL);
    g_signal_connect (value, "bind", G_CALLBACK (preset_value_bind), NULL);
    adw_combo_row_set_factory (self->preset_row, value);
  }

  self->modified_row = adw_action_row_new ();
  gtk_widget_set_name (self->modified_row, "modified-row");
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->modified_row),
                                 _ ("Modified from the preset"));
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (self->modified_row), 0);
  gtk_widget_add_css_class (self->modified_row, "modified-row");
  {
    GtkWidget *icon = gtk_image_new_from_icon_name ("document-edit-symbolic");
    GtkWidget *reset = gtk_button_new_with_mnemonic (_ ("_Reset"));

    gtk_widget_add_css_class (icon, "accent");
    adw_action_row_add_prefix (ADW_ACTION_ROW (self->modified_row), icon);
    gtk_widget_set_name (reset, "reset-preset-button");
    gtk_widget_set_valign (reset, GTK_ALIGN_CENTER);
    gtk_widget_set_tooltip_text (reset, _ ("Back to the preset’s values"));
    gtk_actionable_set_action_name (GTK_ACTIONABLE (reset), "tune.reset-preset");
    adw_action_row_add_suffix (ADW_ACTION_ROW (self->modified_row), reset);
  }
  gtk_widget_set_visible (self->modified_row, FALSE);
  adw_preferences_group_add (self->config_group, self->modified_row);

  self->is_threshold = bound_ctl_new (self, "is-threshold", _ ("IS threshold (upper cap)"), 1.0001,
                                      1e4, 2.0, write_is_bounds, NULL);
  GtkWidget *thr_row = adw_preferences_row_new ();
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (thr_row), FALSE);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (thr_row), self->is_threshold->box);
  adw_preferences_group_add (self->is_group, thr_row);
  self->is_lower = bound_ctl_new (self, "is-lower", _ ("IS lower bound"), 1e-4, 0.9999, 0.5,
                                  write_is_bounds, NULL);
  GtkWidget *lower_row = adw_preferences_row_new ();
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (lower_row), FALSE);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (lower_row), self->is_lower->box);
  adw_preferences_group_add (self->is_group, lower_row);

  self->bn_row = adw_action_row_new ();
  gtk_widget_set_name (self->bn_row, "bn-row");
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->bn_row), _ ("Batch normalisation"));
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->bn_row),
                               _ ("Divide the weights by their batch mean"));
  self->bn_switch = GTK_SWITCH (gtk_switch_new ());
  gtk_widget_set_valign (GTK_WIDGET (self->bn_switch), GTK_ALIGN_CENTER);
  gtk_widget_set_name (GTK_WIDGET (self->bn_switch), "bn-switch");
  adw_action_row_add_suffix (ADW_ACTION_ROW (self->bn_row), GTK_WIDGET (self->bn_switch));
  adw_action_row_set_activatable_widget (ADW_ACTION_ROW (self->bn_row),
                                         GTK_WIDGET (self->bn_switch));
  g_signal_connect (self->bn_switch, "notify::active", G_CALLBACK (on_bn_toggled), self);
  adw_preferences_group_add (self->is_group, self->bn_row);

  for (guint i = 0; i < N_RS; i++)
    {
      RsRow *row = &self->rs[i];
      row->spec = &rs_specs[i];
      row->expander = adw_expander_row_new ();
      g_autofree char *name = g_strdup_printf ("rs-%s", row->spec->name);
      gtk_widget_set_name (row->expander, name);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row->expander), row->spec->name);
      adw_expander_row_set_subtitle (ADW_EXPANDER_ROW (row->expander), _ (row->spec->hint));
      adw_expander_row_set_show_enable_switch (ADW_EXPANDER_ROW (row->expander), TRUE);
      adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (row->expander), FALSE);
      if (row->spec->has_lower)
        {
          g_autofree char *lname = g_strdup_printf ("%s-lower", row->spec->name);
          row->lower = bound_ctl_new (self, lname, _ ("Lower bound"), row->spec->lo, 1.0,
                                      row->spec->def_lower, write_rs_bound, row);
          adw_expander_row_add_row (ADW_EXPANDER_ROW (row->expander), row->lower->box);
        }
      g_autofree char *uname = g_strdup_printf ("%s-upper", row->spec->name);
      row->upper
        = bound_ctl_new (self, uname, _ ("Upper bound"), row->spec->has_lower ? 1.0 : row->spec->lo,
                         row->spec->hi, row->spec->def_upper, write_rs_bound, row);
      adw_expander_row_add_row (ADW_EXPANDER_ROW (row->expander), row->upper->box);
      g_signal_connect (row->expander, "notify::enable-expansion", G_CALLBACK (on_rs_toggled),
                        self);
      adw_preferences_group_add (self->rs_group, row->expander);
    }

  self->veto_row = adw_expander_row_new ();
  gtk_widget_set_name (self->veto_row, "veto-row");
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->veto_row), _ ("Token veto"));
  adw_expander_row_set_show_enable_switch (ADW_EXPANDER_ROW (self->veto_row), TRUE);
  self->veto = bound_ctl_new (self, "veto", _ ("Veto threshold (ratio)"), 1e-12, 1.0, 1e-4,
                              write_veto, NULL);
  adw_expander_row_add_row (ADW_EXPANDER_ROW (self->veto_row), self->veto->box);
  g_signal_connect (self->veto_row, "notify::enable-expansion", G_CALLBACK (on_veto_toggled), self);
  adw_preferences_group_add (self->veto_group, self->veto_row);

  /* charts: one legend, then two columns of cards */
  g_autofree char *legend = g_strdup_printf ("<span foreground=\"#3584e4\">━━</span> %s    "
                                             "<span foreground=\"#9141ac\">━━</span> %s",
                                             _ ("Logged by the run"), _ ("What-if"));
  gtk_label_set_markup (self->charts_legend, legend);
  for (guint c = 0; c < N_CHARTS; c++)
    {
      DwChart *chart = DW_CHART (dw_chart_new ());
      self->charts[c] = chart;
      dw_chart_set_title (chart, _ (chart_specs[c].title));
      g_autofree char *name = g_strdup_printf ("chart-%s", chart_specs[c].canonical);
      gtk_widget_set_name (GTK_WIDGET (chart), name);
      gtk_widget_set_size_request (GTK_WIDGET (chart), 260, 190);
      dw_chart_set_natural_width (chart, 280);
      gtk_widget_set_hexpand (GTK_WIDGET (chart), TRUE);
      const DwCanonicalMetric *m = dw_canonical_lookup (chart_specs[c].canonical);
      if (m && isfinite (m->ideal))
        dw_chart_add_threshold (chart, m->ideal, DW_THRESHOLD_IDEAL, NULL);
      GtkGesture *click = gtk_gesture_click_new ();
      g_signal_connect (click, "released", G_CALLBACK (on_chart_released), self);
      gtk_widget_add_controller (GTK_WIDGET (chart), GTK_EVENT_CONTROLLER (click));
      /* a card: the title over the chart, or over "not produced" when there is nothing to draw */
      GtkWidget *frame = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
      gtk_widget_add_css_class (frame, "chart-card");
      gtk_widget_set_overflow (frame, GTK_OVERFLOW_HIDDEN);
      GtkWidget *title = gtk_label_new (_ (chart_specs[c].title));
      gtk_widget_add_css_class (title, "heading");
      gtk_label_set_xalign (GTK_LABEL (title), 0);
      gtk_label_set_ellipsize (GTK_LABEL (title), PANGO_ELLIPSIZE_END);
      gtk_widget_set_margin_start (title, 6);
      gtk_widget_set_margin_end (title, 6);
      gtk_widget_set_margin_top (title, 2);
      gtk_box_append (GTK_BOX (frame), title);
      gtk_box_append (GTK_BOX (frame), GTK_WIDGET (chart));
      self->empty_labels[c] = gtk_label_new (_ ("Neither logged by the run nor produced by this "
                                                "config"));
      gtk_label_set_wrap (GTK_LABEL (self->empty_labels[c]), TRUE);
      /* a short natural width: two cards still fit a line of the flow box */
      gtk_label_set_max_width_chars (GTK_LABEL (self->empty_labels[c]), 24);
      gtk_label_set_justify (GTK_LABEL (self->empty_labels[c]), GTK_JUSTIFY_CENTER);
      gtk_widget_add_css_class (self->empty_labels[c], "dim-label");
      gtk_widget_set_size_request (self->empty_labels[c], -1, 190);
      gtk_widget_set_visible (self->empty_labels[c], FALSE);
      gtk_box_append (GTK_BOX (frame), self->empty_labels[c]);
      gtk_flow_box_append (self->charts_box, frame);
    }

  gtk_drawing_area_set_draw_func (self->hist_area, draw_histogram, self, NULL);
  gtk_drawing_area_set_draw_func (self->length_area, draw_length_bias, self, NULL);
  g_signal_connect (self->step_adjustment, "value-changed", G_CALLBACK (on_step_changed), self);
  dw_wheel_guard_attach (GTK_WIDGET (self->step_scale));
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
  g_clear_pointer (&self->run_info, dw_run_info_free);
  g_clear_pointer (&self->bounds, g_ptr_array_unref);
  g_free (self->preset);
  g_free (self->error_text);
  g_strfreev (self->levels);
  g_free (self->run_gen_source);
  g_free (self->run_check_text);
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
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, hist_area);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, step_adjustment);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, length_area);
  gtk_widget_class_bind_template_child (widget_class, DwTuneView, summary_grid);

  gtk_widget_class_install_action (widget_class, "tune.copy-config", NULL, copy_config_action);
  gtk_widget_class_install_action (widget_class, "tune.save-config", NULL, save_config_action);
  gtk_widget_class_install_action (widget_class, "tune.paste-config", NULL, paste_config_action);
  gtk_widget_class_install_action (widget_class, "tune.reset-preset", NULL, reset_preset_action);
}

static void
dw_tune_view_init (DwTuneView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->bounds = g_ptr_array_new_with_free_func (g_free);
  self->run_gen = DW_GEN_VERL_LATEST;
  build_controls (self);
  g_signal_connect (self->generation_row, "notify::selected", G_CALLBACK (on_generation_selected),
                    self);
  g_signal_connect (self->preset_row, "notify::selected", G_CALLBACK (on_preset_selected), self);
  g_signal_connect (self->is_level_row, "notify::selected", G_CALLBACK (on_is_level_selected),
                    self);
  g_signal_connect (self->is_mode_row, "notify::selected", G_CALLBACK (on_is_mode_selected), self);
  g_signal_connect (self->function_row, "notify::selected", G_CALLBACK (on_function_selected),
                    self);
  set_generation (self, DW_GEN_VERL_LATEST, DEFAULT_PRESET);
  update_charts_and_summary (self);
  update_status (self);
}

/* ------------------------------------------------------------------------------------------ */
/* The run's own generation and config (from ingest), and whether its log agrees with them    */

typedef struct
{
  DwTuneView *view; /* a reference */
  gint64 run_id;
} CheckData;

static void
check_data_free (CheckData *d)
{
  g_object_unref (d->view);
  g_free (d);
}

static void
run_check_worker (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const char *db = g_object_get_data (G_OBJECT (task), "db");
  GError *error = NULL;
  DwRunCheck *check = g_new0 (DwRunCheck, 1);
  gint64 run_id = GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (task), "run-id"));
  g_autoptr (DwStore) store = dw_store_open_read_only (db, &error);

  if (store == NULL || !dw_run_config_check (store, run_id, check, cancellable, &error))
    {
      g_free (check);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, check, g_free);
}

static void
on_run_check_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  CheckData *d = user_data;
  DwTuneView *self = d->view;
  g_autoptr (GError) error = NULL;
  g_autofree DwRunCheck *check = g_task_propagate_pointer (G_TASK (result), &error);

  if (check != NULL && self->run_id == d->run_id)
    {
      self->run_agreement = check->agreement;
      g_free (self->run_check_text);
      self->run_check_text = dw_run_check_describe (check);
      update_run_header (self);
    }
  check_data_free (d);
}

/* Starts the page from the generation and config ingest found for the run, and checks in a
 * thread that the run's logged metrics agree with a recompute under them. */
static void
load_run_config (DwTuneView *self)
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
      update_modified (self);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (self->preset_row),
                                   _ ("The run’s own config, as its log printed it"));

      CheckData *d = g_new0 (CheckData, 1);
      d->view = g_object_ref (self);
      d->run_id = self->run_id;
      g_autoptr (GTask) task = g_task_new (NULL, self->load_cancellable, on_run_check_done_cb, d);
      g_task_set_source_tag (task, load_run_config);
      g_object_set_data_full (G_OBJECT (task), "db", g_strdup (dw_store_get_path (self->store)),
                              g_free);
      g_object_set_data (G_OBJECT (task), "run-id", GSIZE_TO_POINTER ((gsize)self->run_id));
      g_task_set_priority (task, G_PRIORITY_LOW);
      g_task_run_in_thread (task, run_check_worker);
    }
  else if (own.generation != self->gen)
    set_generation (self, own.generation, self->preset);
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
  g_clear_pointer (&self->result, dw_whatif_run_result_free);
  g_clear_pointer (&self->engine, dw_whatif_engine_unref);
  g_clear_pointer (&self->error_text, g_free);
  memset (self->len_valid, 0, sizeof self->len_valid);
  self->max_len = 0;
  g_set_object (&self->store, store);
  self->run_id = store ? run_id : 0;
  g_clear_pointer (&self->run_info, dw_run_info_free);
  if (store != NULL)
    self->run_info = dw_store_get_run (store, run_id, NULL);
  update_run_header (self);
  load_logged_series (self);
  self->loading = store != NULL;
  if (store)
    {
      LoadData *d = g_new0 (LoadData, 1);
      d->path = g_strdup (dw_store_get_path (store));
      d->run_id = run_id;
      self->load_cancellable = g_cancellable_new ();
      g_autoptr (GTask) task
        = g_task_new (NULL, self->load_cancellable, on_load_done, g_object_ref (self));
      g_task_set_task_data (task, d, (GDestroyNotify)load_data_free);
      g_task_set_priority (task, G_PRIORITY_LOW);
      g_task_run_in_thread (task, load_thread);
    }
  load_run_config (self);
  update_run_header (self);
  update_charts_and_summary (self);
  update_status (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->hist_area));
  gtk_widget_queue_draw (GTK_WIDGET (self->length_area));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUN_ID]);
  set_busy_changed (self);
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
  set_generation (self, config->generation, preset);
  if (!preset)
    {
      self->config = *config;
      adw_action_row_set_subtitle (ADW_ACTION_ROW (self->preset_row),
                                   _ ("Imported config: no preset applied"));
    }
  else
    for (size_t i = 0; i < config->n_keys; i++)
      if (strcmp (config->keys[i], "preset") != 0)
        dw_config_set (&self->config, config->keys[i], &config->values[i]);
  self->config.generation = config->generation;
  sync_controls (self);
  schedule_evaluation (self);
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
  DwConfig c;
  const char *format = NULL;
  if (!dw_tune_import_detect (text, self->gen, &c, &format, error))
    return FALSE;
  dw_tune_view_set_config (self, NULL, &c);
  /* TRANSLATORS: first %s is a generation ("verl-0.7"), second a format ("yaml", "hydra") */
  g_autofree char *msg
    = g_strdup_printf (_ ("Imported a %s config (%s)"), dw_generation_name (c.generation), format);
  gtk_label_set_text (self->status_label, msg);
  return TRUE;
}
