/* dw-tune-controls.c — the Tune page's controls, driven by the generation's schema
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The controls edit one DwConfig (the preset's fields, then the user's overrides). They know
 * roles, not key names: each finds its key in the generation's schema by role and reads its state
 * back through dw_plan_build (what the trainer will do), docs/TUNE.md. Every change writes the
 * config, shows it "as verl reads it" and asks the view for an evaluation.
 */
#define G_LOG_DOMAIN "dw-tune-controls"

#include "config.h"

#include <glib/gi18n.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "dw-tune-view-private.h"

#include "dw-tune-export.h"
#include "dw-tune-schema.h"

static const DwTuneRsSpec rs_specs[DW_TUNE_N_RS] = {
  { "token_k1", DW_TUNE_RS_HEAD, TRUE, 0.5, 2.0, 1e-3, 1e3, N_ ("Per-token inverse ratio bounds") },
  { "token_k2", DW_TUNE_RS_HEAD, FALSE, 0, 2.0, 1e-7, 1e3, N_ ("Per-token ½ℓ² upper bound") },
  { "token_k3", DW_TUNE_RS_HEAD, FALSE, 0, 1.0, 1e-7, 1e3, N_ ("Per-token k3 upper bound") },
  { "seq_sum_k1", DW_TUNE_RS_HEAD, TRUE, 0.5, 2.0, 1e-6, 1e6,
    N_ ("Product of ratios (sequence IS) bounds") },
  { "seq_sum_k2", DW_TUNE_RS_HEAD, FALSE, 0, 1.0, 1e-7, 1e4, N_ ("Sum of ½ℓ² over the sequence") },
  { "seq_sum_k3", DW_TUNE_RS_HEAD, FALSE, 0, 1.0, 1e-7, 1e4, N_ ("Sum of k3 over the sequence") },
  { "seq_mean_k1", DW_TUNE_RS_HEAD, TRUE, 0.999, 1.001, 0.5, 2.0,
    N_ ("Geometric mean ratio bounds (Geo-RS)") },
  { "seq_mean_k2", DW_TUNE_RS_HEAD, FALSE, 0, 0.01, 1e-7, 1e3, N_ ("Mean ½ℓ² of the sequence") },
  { "seq_mean_k3", DW_TUNE_RS_HEAD, FALSE, 0, 0.01, 1e-7, 1e3, N_ ("Mean k3 of the sequence") },
  { "seq_max_k2", DW_TUNE_RS_HEAD, FALSE, 0, 2.0, 1e-7, 1e3, N_ ("Largest ½ℓ² of the sequence") },
  { "seq_max_k3", DW_TUNE_RS_HEAD, FALSE, 0, 1.0, 1e-7, 1e3, N_ ("Largest k3 of the sequence") },
  { "token", DW_TUNE_RS_LEGACY, TRUE, 0.5, 2.0, 1e-3, 1e3, N_ ("Per-token ratio bounds") },
  { "sequence", DW_TUNE_RS_LEGACY, TRUE, 0.5, 2.0, 1e-6, 1e6, N_ ("Sequence ratio bounds") },
  { "geometric", DW_TUNE_RS_LEGACY, TRUE, 0.999, 1.001, 0.5, 2.0,
    N_ ("Geometric mean ratio bounds") },
};

/* which keys a bound row writes */
typedef enum
{
  DW_TUNE_BOUND_IS = 0,
  DW_TUNE_BOUND_RS,
  DW_TUNE_BOUND_VETO,
} DwTuneBoundKind;

static void dw_tune_controls_update_grammar (DwTuneView *self);
static void dw_tune_controls_write_is_bounds (DwTuneView *self, DwBoundRow *ctl);
static void dw_tune_controls_write_rs_bound (DwTuneView *self, DwBoundRow *ctl);
static void dw_tune_controls_write_veto (DwTuneView *self, DwBoundRow *ctl);

/* The value of @row as the config is written: the value under test while the check function
 * tries one (dw_tune_controls_check_bound), else the row's own. */
static double
dw_tune_controls_bound_value (DwTuneView *self, DwBoundRow *row)
{
  if (row == self->checking_row)
    return self->checking_value;
  return dw_bound_row_get_value (row);
}

/* @row's value into the config (only that: no evaluation) */
static void
dw_tune_controls_write_bound (DwTuneView *self, DwBoundRow *row)
{
  switch ((DwTuneBoundKind)GPOINTER_TO_INT (g_object_get_data (G_OBJECT (row), "dw-tune-kind")))
    {
    case DW_TUNE_BOUND_IS:
      dw_tune_controls_write_is_bounds (self, row);
      break;
    case DW_TUNE_BOUND_RS:
      dw_tune_controls_write_rs_bound (self, row);
      break;
    case DW_TUNE_BOUND_VETO:
      dw_tune_controls_write_veto (self, row);
      break;
    }
}

/* What verl would raise for the config with @value in @row (NULL when it accepts it, or when the
 * config was already refused for another reason before: that is shown under "As verl reads it").
 * The view's config is left as it was. */
static char *
dw_tune_controls_check_bound (DwBoundRow *row, double value, gpointer user_data)
{
  DwTuneView *self = user_data;
  DwConfig saved = self->config;
  DwCorrectionError before, after;
  gboolean was_ok = dw_correction_check_config (&self->config, &before);
  gboolean ok;

  self->checking_row = row;
  self->checking_value = value;
  dw_tune_controls_write_bound (self, row);
  ok = dw_correction_check_config (&self->config, &after);
  self->config = saved;
  self->checking_row = NULL;
  if (ok || (!was_ok && strcmp (before.message, after.message) == 0))
    return NULL;
  return g_strdup_printf ("%s: %s", dw_error_kind_name (after.kind), after.message);
}

/* A bound was moved or typed: into the config, then re-evaluated. */
static void
dw_tune_controls_bound_changed_cb (DwBoundRow *row, DwTuneView *self)
{
  dw_tune_controls_write_bound (self, row);
  dw_tune_controls_update_grammar (self);
  self->schedule_evaluation (self);
}

static char *
dw_tune_controls_format_number (double v)
{
  char buf[64];
  return g_strdup (dw_python_float_repr (v, buf, sizeof buf));
}

static void
dw_tune_controls_config_set_float (DwConfig *c, const char *key, double v)
{
  DwValue val = dw_value_float (v);
  dw_config_set (c, key, &val);
}

static void
dw_tune_controls_config_set_str (DwConfig *c, const char *key, const char *s)
{
  DwValue val = s ? dw_value_str (s) : dw_value_none ();
  dw_config_set (c, key, &val);
}

static void
dw_tune_controls_config_set_bool (DwConfig *c, const char *key, gboolean b)
{
  DwValue val = dw_value_bool (b);
  dw_config_set (c, key, &val);
}

/* The schema key @field writes under the current config (NULL: the generation has none). */
static const char *
dw_tune_controls_schema_key (DwTuneView *self, DwTuneField field)
{
  const DwSchemaKey *key = dw_tune_schema_key (&self->config, field);
  return key ? key->name : NULL;
}

const char *
dw_tune_controls_role_key (DwTuneView *self, DwKeyRole role)
{
  const DwSchemaKey *key = dw_schema_find_role (self->gen, role);
  return key ? key->name : NULL;
}

/* The current config resolved as the trainer resolves it; FALSE when the trainer refuses it. */
static gboolean
dw_tune_controls_current_plan (DwTuneView *self, DwPlan *plan)
{
  DwCorrectionError error;
  return dw_plan_build (&self->config, plan, &error);
}

/* verl ≥ 0.8: the IS threshold also takes "lower_upper" (IcePop) */
static gboolean
dw_tune_controls_has_icepop_threshold (DwTuneView *self)
{
  return dw_tune_schema_key_takes_str (dw_schema_find_role (self->gen, DW_ROLE_IS_THRESHOLD));
}

/* The IS modes offered: the generation's mode key's choices, or truncate/IcePop where the
 * threshold takes a "lower_upper" string. */
static const char *const *
dw_tune_controls_is_modes (DwTuneView *self)
{
  static const char *const threshold_modes[] = { "truncate", "icepop", NULL };
  const char *const *choices = dw_tune_schema_choices (self->gen, DW_ROLE_IS_MODE);
  if (choices)
    return choices;
  return dw_tune_controls_has_icepop_threshold (self) ? threshold_modes : NULL;
}

static gboolean
dw_tune_controls_icepop_selected (DwTuneView *self)
{
  const char *const *modes = dw_tune_controls_is_modes (self);
  guint i = adw_combo_row_get_selected (self->is_mode_row);
  return dw_tune_controls_has_icepop_threshold (self) && modes && i != GTK_INVALID_LIST_POSITION
         && modes[i] && strcmp (modes[i], "icepop") == 0;
}

static const char *
dw_tune_controls_choice_label (const char *choice)
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
dw_tune_controls_choice_list_new (const char *const *choices, gboolean with_off)
{
  GtkStringList *list = gtk_string_list_new (NULL);
  for (guint i = 0; choices && choices[i]; i++)
    gtk_string_list_append (list, dw_tune_controls_choice_label (choices[i]));
  if (with_off)
    gtk_string_list_append (list, dw_tune_controls_choice_label ("none"));
  return list;
}

static guint
dw_tune_controls_strv_index (const char *const *v, const char *s)
{
  for (guint i = 0; v && v[i]; i++)
    if (g_strcmp0 (v[i], s) == 0)
      return i;
  return GTK_INVALID_LIST_POSITION;
}

/* ------------------------------------------------------------------------------------------ */
/* Controls → config                                                                          */

static DwTuneRsKind
dw_tune_controls_rs_kind_of (DwGeneration gen)
{
  return dw_generation_info (gen)->family == DW_FAMILY_VERL_K_OPTIONS ? DW_TUNE_RS_HEAD
                                                                      : DW_TUNE_RS_LEGACY;
}

/* Whether the generation offers @spec: an allowed value of its RS options key. */
static gboolean
dw_tune_controls_rs_spec_offered (DwGeneration gen, const DwTuneRsSpec *spec)
{
  const char *const *choices = dw_tune_schema_choices (gen, DW_ROLE_RS_OPTIONS);
  return spec->kind == dw_tune_controls_rs_kind_of (gen) && choices
         && g_strv_contains ((const char *const *)choices, spec->name);
}

static gboolean
dw_tune_controls_rs_row_enabled (const DwTuneRsRow *row)
{
  return adw_expander_row_get_enable_expansion (ADW_EXPANDER_ROW (row->expander));
}

/* k-options: options = "a,b", threshold = "lo_up,up" (one spec per option) */
static void
dw_tune_controls_write_rs_head (DwTuneView *self)
{
  g_autoptr (GString) opts = g_string_new (NULL);
  g_autoptr (GString) specs = g_string_new (NULL);
  for (guint i = 0; i < DW_TUNE_N_RS; i++)
    {
      const DwTuneRsRow *row = &self->rs[i];
      if (row->spec->kind != DW_TUNE_RS_HEAD || !dw_tune_controls_rs_row_enabled (row))
        continue;
      if (opts->len)
        {
          g_string_append_c (opts, ',');
          g_string_append_c (specs, ',');
        }
      g_string_append (opts, row->spec->name);
      g_autofree char *up
        = dw_tune_controls_format_number (dw_tune_controls_bound_value (self, row->upper));
      if (row->spec->has_lower)
        {
          g_autofree char *lo
            = dw_tune_controls_format_number (dw_tune_controls_bound_value (self, row->lower));
          g_string_append_printf (specs, "%s_%s", lo, up);
        }
      else
        g_string_append (specs, up);
    }
  dw_tune_controls_config_set_str (&self->config,
                                   dw_tune_controls_role_key (self, DW_ROLE_RS_OPTIONS),
                                   opts->len ? opts->str : NULL);
  dw_tune_controls_config_set_str (&self->config,
                                   dw_tune_controls_role_key (self, DW_ROLE_RS_THRESHOLD),
                                   specs->len ? specs->str : NULL);
}

/* one RS level at a time: the options key names it (None: off), or a switch turns RS on */
static void
dw_tune_controls_write_rs_legacy (DwTuneView *self, const DwTuneRsRow *changed)
{
  const DwTuneRsRow *on = NULL;
  const DwSchemaKey *options = dw_schema_find_role (self->gen, DW_ROLE_RS_OPTIONS);
  for (guint i = 0; i < DW_TUNE_N_RS; i++)
    if (self->rs[i].spec->kind == DW_TUNE_RS_LEGACY
        && dw_tune_controls_rs_row_enabled (&self->rs[i]))
      on = &self->rs[i];
  if (dw_tune_schema_key_takes_none (options))
    dw_tune_controls_config_set_str (&self->config, options->name, on ? on->spec->name : NULL);
  else
    {
      const char *sw = dw_tune_controls_schema_key (self, DW_TUNE_FIELD_RS_SWITCH);
      if (sw)
        dw_tune_controls_config_set_bool (&self->config, sw, on != NULL);
      if (on)
        dw_tune_controls_config_set_str (&self->config, options->name, on->spec->name);
    }
  if (!on)
    return;
  dw_tune_controls_config_set_float (&self->config,
                                     dw_tune_controls_schema_key (self, DW_TUNE_FIELD_RS_UPPER),
                                     dw_tune_controls_bound_value (self, on->upper));
  /* an explicit lower bound replaces the generation's default once the user moves it */
  if (changed && changed == on && changed->lower
      && dw_tune_controls_bound_value (self, changed->lower) > 0
      && dw_tune_controls_bound_value (self, changed->lower)
           != 1.0 / dw_tune_controls_bound_value (self, on->upper))
    {
      const char *lower = dw_tune_controls_schema_key (self, DW_TUNE_FIELD_RS_LOWER);
      if (lower)
        dw_tune_controls_config_set_float (&self->config, lower,
                                           dw_tune_controls_bound_value (self, on->lower));
    }
}

static void
dw_tune_controls_write_rs_bound (DwTuneView *self, DwBoundRow *ctl)
{
  DwTuneRsRow *row = g_object_get_data (G_OBJECT (ctl), "dw-tune-rs-row");
  if (row->spec->kind == DW_TUNE_RS_HEAD)
    dw_tune_controls_write_rs_head (self);
  else
    {
      if (ctl == row->lower)
        {
          const char *lower = dw_tune_controls_schema_key (self, DW_TUNE_FIELD_RS_LOWER);
          if (lower)
            dw_tune_controls_config_set_float (&self->config, lower,
                                               dw_tune_controls_bound_value (self, ctl));
        }
      dw_tune_controls_write_rs_legacy (self, row);
    }
}

static void
dw_tune_controls_rs_toggled_cb (AdwExpanderRow *expander, GParamSpec *pspec, DwTuneView *self)
{
  if (self->syncing)
    return;
  DwTuneRsRow *row = NULL;
  for (guint i = 0; i < DW_TUNE_N_RS; i++)
    if (self->rs[i].expander == GTK_WIDGET (expander))
      row = &self->rs[i];
  g_return_if_fail (row != NULL);
  if (row->spec->kind == DW_TUNE_RS_HEAD)
    dw_tune_controls_write_rs_head (self);
  else
    {
      /* the old generations take one RS mode: enabling one disables the others */
      if (dw_tune_controls_rs_row_enabled (row))
        {
          self->syncing++;
          for (guint i = 0; i < DW_TUNE_N_RS; i++)
            if (&self->rs[i] != row && self->rs[i].spec->kind == DW_TUNE_RS_LEGACY)
              adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (self->rs[i].expander),
                                                     FALSE);
          self->syncing--;
        }
      dw_tune_controls_write_rs_legacy (self, row);
    }
  dw_tune_controls_update_grammar (self);
  self->schedule_evaluation (self);
}

/* The IS bounds: IcePop writes "lower_upper" into the threshold; otherwise the upper bound is a
 * number and the lower bound has its own key (where the generation has one). */
static void
dw_tune_controls_write_is_bounds (DwTuneView *self, DwBoundRow *ctl)
{
  const char *upper = dw_tune_controls_schema_key (self, DW_TUNE_FIELD_IS_UPPER);
  if (upper == NULL)
    return;
  if (dw_tune_controls_icepop_selected (self))
    {
      g_autofree char *lo
        = dw_tune_controls_format_number (dw_tune_controls_bound_value (self, self->is_lower));
      g_autofree char *up
        = dw_tune_controls_format_number (dw_tune_controls_bound_value (self, self->is_threshold));
      g_autofree char *spec = g_strdup_printf ("%s_%s", lo, up);
      dw_tune_controls_config_set_str (&self->config, upper, spec);
      return;
    }
  if (ctl == self->is_threshold || ctl == NULL)
    dw_tune_controls_config_set_float (&self->config, upper,
                                       dw_tune_controls_bound_value (self, self->is_threshold));
  if (ctl == self->is_lower)
    {
      const char *lower = dw_tune_controls_schema_key (self, DW_TUNE_FIELD_IS_LOWER);
      if (lower)
        dw_tune_controls_config_set_float (&self->config, lower,
                                           dw_tune_controls_bound_value (self, ctl));
    }
}

static void
dw_tune_controls_write_veto (DwTuneView *self, DwBoundRow *ctl)
{
  const char *key = dw_tune_controls_schema_key (self, DW_TUNE_FIELD_VETO);
  if (!key)
    return;
  if (adw_expander_row_get_enable_expansion (ADW_EXPANDER_ROW (self->veto_row)))
    dw_tune_controls_config_set_float (&self->config, key,
                                       dw_tune_controls_bound_value (self, self->veto));
  else
    dw_tune_controls_config_set_str (&self->config, key, NULL);
}

static void
dw_tune_controls_veto_toggled_cb (AdwExpanderRow *expander, GParamSpec *pspec, DwTuneView *self)
{
  if (self->syncing)
    return;
  dw_tune_controls_write_veto (self, self->veto);
  dw_tune_controls_update_grammar (self);
  self->schedule_evaluation (self);
}

static void
dw_tune_controls_bn_toggled_cb (GtkSwitch *sw, GParamSpec *pspec, DwTuneView *self)
{
  const char *key = dw_tune_controls_role_key (self, DW_ROLE_IS_BATCH_NORMALIZE);
  if (self->syncing || key == NULL)
    return;
  dw_tune_controls_config_set_bool (&self->config, key, gtk_switch_get_active (sw));
  dw_tune_controls_update_grammar (self);
  self->schedule_evaluation (self);
}

/* IS off: a level key that takes None gets None; else a switch (slime use_tis) goes false; else
 * the threshold gets None (mismatch_helper computes nothing then). */
static void
dw_tune_controls_write_is_level (DwTuneView *self, const char *level)
{
  const DwSchemaKey *level_key = dw_schema_find_role (self->gen, DW_ROLE_IS_LEVEL);
  const char *sw = dw_tune_controls_schema_key (self, DW_TUNE_FIELD_IS_SWITCH);
  gboolean off = level == NULL;

  if (level_key == NULL)
    return;
  if (dw_tune_schema_key_takes_none (level_key))
    {
      dw_tune_controls_config_set_str (&self->config, level_key->name, level);
      return;
    }
  if (!off)
    dw_tune_controls_config_set_str (&self->config, level_key->name, level);
  if (sw)
    dw_tune_controls_config_set_bool (&self->config, sw, !off);
  else if (off)
    dw_tune_controls_config_set_str (
      &self->config, dw_tune_controls_schema_key (self, DW_TUNE_FIELD_IS_UPPER), NULL);
  else
    dw_tune_controls_write_is_bounds (self, NULL);
}

void
dw_tune_controls_is_level_selected_cb (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self)
{
  if (self->syncing)
    return;
  guint i = adw_combo_row_get_selected (row);
  if (i == GTK_INVALID_LIST_POSITION || !self->levels[i])
    return;
  const char *level = self->levels[i];
  dw_tune_controls_write_is_level (self, strcmp (level, "none") == 0 ? NULL : level);
  dw_tune_controls_sync (self);
  self->schedule_evaluation (self);
}

void
dw_tune_controls_is_mode_selected_cb (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self)
{
  const char *const *modes = dw_tune_controls_is_modes (self);
  guint i = adw_combo_row_get_selected (row);
  if (self->syncing || !modes || i == GTK_INVALID_LIST_POSITION || !modes[i])
    return;
  if (dw_tune_controls_has_icepop_threshold (self))
    {
      /* IcePop starts from the bounds verl's IcePop presets use */
      if (dw_tune_controls_icepop_selected (self)
          && dw_tune_controls_bound_value (self, self->is_lower)
               >= dw_tune_controls_bound_value (self, self->is_threshold))
        dw_bound_row_set_value (self->is_lower, 0.5);
      dw_tune_controls_write_is_bounds (self, NULL);
    }
  else
    dw_tune_controls_config_set_str (&self->config,
                                     dw_tune_controls_role_key (self, DW_ROLE_IS_MODE), modes[i]);
  dw_tune_controls_sync (self);
  self->schedule_evaluation (self);
}

void
dw_tune_controls_function_selected_cb (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self)
{
  const char *const *functions = dw_tune_schema_choices (self->gen, DW_ROLE_FUNCTION);
  guint i = adw_combo_row_get_selected (row);
  if (self->syncing || !functions || i == GTK_INVALID_LIST_POSITION || !functions[i])
    return;
  dw_tune_controls_config_set_str (
    &self->config, dw_tune_controls_role_key (self, DW_ROLE_FUNCTION), functions[i]);
  dw_tune_export_drop_unread (&self->config);
  dw_tune_controls_sync (self);
  self->schedule_evaluation (self);
}

/* ------------------------------------------------------------------------------------------ */
/* Config → controls (read back through the plan: what the trainer will do, not key names)     */

/* The function a plan's path runs (slime: vanilla | icepop | mis). */
static const char *
dw_tune_controls_plan_function (const DwPlan *plan)
{
  return plan->path == DW_PATH_SLIME_VANILLA  ? "vanilla"
         : plan->path == DW_PATH_SLIME_ICEPOP ? "icepop"
                                              : "mis";
}

static void
dw_tune_controls_sync_is (DwTuneView *self)
{
  DwPlan plan;
  gboolean planned = dw_tune_controls_current_plan (self, &plan);
  const char *level = "none";
  if (planned && plan.is_on && !plan.nothing)
    level = dw_plan_level_name (plan.is_level);
  guint idx = dw_tune_controls_strv_index ((const char *const *)self->levels, level);
  adw_combo_row_set_selected (
    self->is_level_row, idx != GTK_INVALID_LIST_POSITION ? idx : g_strv_length (self->levels) - 1);

  const char *const *functions = dw_tune_schema_choices (self->gen, DW_ROLE_FUNCTION);
  gtk_widget_set_visible (GTK_WIDGET (self->function_row), functions != NULL);
  if (functions)
    {
      /* a new model only when the choices change: the row may be emitting "selected" now */
      if (self->function_choices != functions)
        {
          g_autoptr (GtkStringList) list = dw_tune_controls_choice_list_new (functions, FALSE);
          adw_combo_row_set_model (self->function_row, G_LIST_MODEL (list));
          self->function_choices = functions;
        }
      guint fi = dw_tune_controls_strv_index (
        functions, planned ? dw_tune_controls_plan_function (&plan) : NULL);
      adw_combo_row_set_selected (self->function_row, fi != GTK_INVALID_LIST_POSITION ? fi : 0);
    }

  const char *const *modes = dw_tune_controls_is_modes (self);
  gboolean icepop = planned && dw_tune_controls_has_icepop_threshold (self) && plan.is_lower_given;
  gtk_widget_set_visible (GTK_WIDGET (self->is_mode_row),
                          modes != NULL && (!planned || plan.path != DW_PATH_SLIME_VANILLA)
                            && (!planned || plan.path != DW_PATH_SLIME_ICEPOP));
  if (modes)
    {
      if (self->mode_choices != modes)
        {
          g_autoptr (GtkStringList) list = dw_tune_controls_choice_list_new (modes, FALSE);
          adw_combo_row_set_model (self->is_mode_row, G_LIST_MODEL (list));
          self->mode_choices = modes;
        }
      const char *mode_key = dw_tune_controls_role_key (self, DW_ROLE_IS_MODE);
      /* @mode may point into @mode_value's string: both live to the end of this block */
      DwValue mode_value = mode_key ? dw_schema_value (&self->config, mode_key) : (DwValue){ 0 };
      const char *mode = mode_value.kind == DW_VALUE_STR ? mode_value.s
                         : icepop                        ? "icepop"
                                                         : "truncate";
      guint mi = dw_tune_controls_strv_index (modes, mode);
      adw_combo_row_set_selected (self->is_mode_row, mi != GTK_INVALID_LIST_POSITION ? mi : 0);
    }

  double upper = planned && isfinite (plan.is_upper) && plan.is_upper > 0 ? plan.is_upper : 2.0;
  dw_bound_row_set_value (self->is_threshold, upper);
  double lower
    = planned && isfinite (plan.is_lower) && plan.is_lower > 0 ? plan.is_lower : 1.0 / upper;
  dw_bound_row_set_value (self->is_lower, lower);
  gtk_widget_set_visible (GTK_WIDGET (self->is_lower),
                          icepop
                            || dw_tune_controls_schema_key (self, DW_TUNE_FIELD_IS_LOWER) != NULL);

  const char *bn = dw_tune_controls_role_key (self, DW_ROLE_IS_BATCH_NORMALIZE);
  gtk_widget_set_visible (self->bn_row, bn && dw_tune_export_key_accepted (self->gen, bn));
  gtk_switch_set_active (self->bn_switch, planned && plan.batch_normalize);
}

static void
dw_tune_controls_sync_rs (DwTuneView *self)
{
  DwTuneRsKind kind = dw_tune_controls_rs_kind_of (self->gen);
  gboolean has_rs = dw_schema_find_role (self->gen, DW_ROLE_RS_OPTIONS) != NULL;
  DwPlan plan;
  gboolean planned = dw_tune_controls_current_plan (self, &plan);

  gtk_widget_set_visible (GTK_WIDGET (self->rs_group), has_rs);
  for (guint i = 0; i < DW_TUNE_N_RS; i++)
    {
      DwTuneRsRow *row = &self->rs[i];
      gtk_widget_set_visible (row->expander,
                              has_rs && dw_tune_controls_rs_spec_offered (self->gen, row->spec));
      adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (row->expander), FALSE);
      dw_bound_row_set_value (row->upper, row->spec->def_upper);
      if (row->lower)
        dw_bound_row_set_value (row->lower, row->spec->def_lower);
    }
  if (!has_rs || !planned || !plan.rs_on)
    return; /* a refused config is shown by dw_tune_controls_update_grammar () */
  if (kind == DW_TUNE_RS_HEAD)
    {
      for (gsize j = 0; j < plan.rs.n; j++)
        {
          DwTuneRsRow *row = &self->rs[plan.rs.bounds[j].option];
          adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (row->expander), TRUE);
          dw_bound_row_set_value (row->upper, plan.rs.bounds[j].upper);
          if (row->lower)
            dw_bound_row_set_value (row->lower, plan.rs.bounds[j].lower);
        }
      return;
    }
  const char *name = dw_plan_level_name (plan.rs_level);
  for (guint i = 0; i < DW_TUNE_N_RS; i++)
    {
      DwTuneRsRow *row = &self->rs[i];
      if (row->spec->kind != DW_TUNE_RS_LEGACY || strcmp (row->spec->name, name) != 0)
        continue;
      adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (row->expander), TRUE);
      dw_bound_row_set_value (row->upper, plan.rs_upper);
      dw_bound_row_set_value (row->lower, plan.rs_lower);
    }
}

static void
dw_tune_controls_sync_veto (DwTuneView *self)
{
  const char *key = dw_tune_controls_schema_key (self, DW_TUNE_FIELD_VETO);
  DwPlan plan;
  gboolean on = key && dw_tune_controls_current_plan (self, &plan) && plan.veto_on;
  gtk_widget_set_visible (GTK_WIDGET (self->veto_group), key != NULL);
  if (!key)
    return;
  adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (self->veto_row), on);
  dw_bound_row_set_value (self->veto, on ? plan.veto : 1e-4);
}

void
dw_tune_controls_sync (DwTuneView *self)
{
  self->syncing++;
  dw_tune_controls_sync_is (self);
  dw_tune_controls_sync_rs (self);
  dw_tune_controls_sync_veto (self);
  self->syncing--;
  dw_tune_controls_update_grammar (self);
}

void
dw_tune_controls_apply_preset (DwTuneView *self, const char *preset_name)
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
      dw_tune_controls_sync (self);
      self->schedule_evaluation (self);
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
  dw_tune_controls_sync (self);
  self->schedule_evaluation (self);
}

void
dw_tune_controls_preset_selected_cb (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self)
{
  if (self->syncing)
    return;
  GtkStringObject *item = adw_combo_row_get_selected_item (row);
  if (item)
    dw_tune_controls_apply_preset (self, gtk_string_object_get_string (item));
}

static void
dw_tune_controls_fill_presets (DwTuneView *self, const char *select)
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
dw_tune_controls_fill_formats (DwTuneView *self)
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
dw_tune_controls_generation_position (DwTuneView *self, DwGeneration gen)
{
  for (guint i = 0; i < DW_N_GENERATIONS; i++)
    if (self->gen_order[i] == gen)
      return i;
  return 0;
}

void
dw_tune_controls_set_generation (DwTuneView *self, DwGeneration gen, const char *preset)
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
  g_autoptr (GtkStringList) level_list = dw_tune_controls_choice_list_new (levels, TRUE);
  self->syncing++;
  adw_combo_row_set_model (self->is_level_row, G_LIST_MODEL (level_list));
  adw_combo_row_set_selected (self->generation_row,
                              dw_tune_controls_generation_position (self, gen));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->generation_row),
                               dw_generation_info (gen)->summary);
  self->syncing--;
  dw_tune_controls_fill_formats (self);
  if (!preset || !dw_preset_lookup (gen, preset))
    preset = dw_preset_lookup (gen, DW_TUNE_DEFAULT_PRESET) ? DW_TUNE_DEFAULT_PRESET
                                                            : dw_preset_list (gen, NULL)->name;
  dw_tune_controls_fill_presets (self, preset);
  dw_tune_controls_apply_preset (self, preset);
}

void
dw_tune_controls_generation_selected_cb (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self)
{
  if (self->syncing)
    return;
  guint i = adw_combo_row_get_selected (row);
  if (i < DW_N_GENERATIONS && self->gen_order[i] != self->gen)
    dw_tune_controls_set_generation (self, self->gen_order[i], self->preset);
}

/* ------------------------------------------------------------------------------------------ */
/* Modified from the preset                                                                   */

static void
dw_tune_controls_python_str (const DwValue *v, char *buf, gsize size)
{
  if (v == NULL)
    g_strlcpy (buf, "None", size); /* an absent key is None to verl */
  else if (v->kind == DW_VALUE_STR)
    g_snprintf (buf, size, "\"%s\"", v->s);
  else
    dw_value_to_python_str (v, buf, size);
}

static void
dw_tune_controls_append_change (GString *out, const char *key, const DwValue *was,
                                const DwValue *now)
{
  char a[DW_VALUE_STR_MAX + 8], b[DW_VALUE_STR_MAX + 8];

  dw_tune_controls_python_str (was, a, sizeof a);
  dw_tune_controls_python_str (now, b, sizeof b);
  if (strcmp (a, b) == 0)
    return;
  if (out->len)
    g_string_append_c (out, '\n');
  g_string_append_printf (out, "%s: %s → %s", key, a, b);
}

/* The keys (that the generation reads) whose value differs from the preset's, one a line
 * ("key: preset → now"); empty when the config is the preset's. */
char *
dw_tune_controls_describe_changes (DwTuneView *self)
{
  g_autoptr (GString) out = g_string_new (NULL);
  DwConfig preset;
  DwCorrectionError err;

  if (self->preset == NULL || !dw_preset_config (self->gen, self->preset, &preset, &err))
    return g_string_free (g_steal_pointer (&out), FALSE);
  for (size_t i = 0; i < preset.n_keys; i++)
    if (dw_tune_export_key_accepted (self->gen, preset.keys[i]))
      dw_tune_controls_append_change (out, preset.keys[i], &preset.values[i],
                                      dw_config_get (&self->config, preset.keys[i]));
  for (size_t i = 0; i < self->config.n_keys; i++)
    if (dw_tune_export_key_accepted (self->gen, self->config.keys[i])
        && dw_config_get (&preset, self->config.keys[i]) == NULL)
      dw_tune_controls_append_change (out, self->config.keys[i], NULL, &self->config.values[i]);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

void
dw_tune_controls_update_modified (DwTuneView *self)
{
  g_autofree char *changes = dw_tune_controls_describe_changes (self);
  gboolean modified = *changes != '\0';

  gtk_widget_set_visible (self->modified_row, modified);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->modified_row), changes);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "tune.reset-preset", modified);
  dw_tune_controls_update_run_header (self);
}

void
dw_tune_controls_reset_preset_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  DwTuneView *self = DW_TUNE_VIEW (widget);
  g_autofree char *preset = g_strdup (self->preset);

  if (preset != NULL)
    dw_tune_controls_apply_preset (self, preset);
}

/* ------------------------------------------------------------------------------------------ */
/* "As verl reads it"                                                                         */

static void
dw_tune_controls_update_grammar (DwTuneView *self)
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
  const char *rs_options = dw_tune_controls_role_key (self, DW_ROLE_RS_OPTIONS);
  if (dw_tune_controls_rs_kind_of (self->gen) == DW_TUNE_RS_HEAD && rs_options
      && dw_config_get (c, rs_options) && dw_config_get (c, rs_options)->kind != DW_VALUE_NONE)
    {
      DwRsParsed parsed;
      DwCorrectionError err;
      if (dw_rs_parse (dw_config_get (c, rs_options),
                       dw_config_get (c, dw_tune_controls_role_key (self, DW_ROLE_RS_THRESHOLD)),
                       &parsed, &err))
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
  dw_tune_controls_update_modified (self);
}

/* ------------------------------------------------------------------------------------------ */
/* The token thresholds drawn on the histogram                                               */

/* k3(ℓ) = exp(ℓ) − 1 − ℓ = u on the side @sign of 0 */
static double
dw_tune_controls_k3_inverse (double u, double sign)
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
guint
dw_tune_controls_thresholds (DwTuneView *self, DwTuneThreshold *out, guint max)
{
  guint n = 0;
#define ADD(X, L, C)                                 \
  G_STMT_START                                       \
  {                                                  \
    if (n < max && isfinite (X))                     \
      out[n++] = (DwTuneThreshold){ (X), (L), (C) }; \
  }                                                  \
  G_STMT_END
  guint li = adw_combo_row_get_selected (self->is_level_row);
  if (li != GTK_INVALID_LIST_POSITION && self->levels[li]
      && strcmp (self->levels[li], "token") == 0)
    ADD (log (dw_tune_controls_bound_value (self, self->is_threshold)), _ ("IS cap"),
         DW_TUNE_THRESHOLD_IS);
  for (guint i = 0; i < DW_TUNE_N_RS; i++)
    {
      const DwTuneRsRow *row = &self->rs[i];
      if (!gtk_widget_get_visible (row->expander) || !dw_tune_controls_rs_row_enabled (row))
        continue;
      const char *name = row->spec->name;
      double up = dw_tune_controls_bound_value (self, row->upper);
      if (strcmp (name, "token_k1") == 0)
        {
          ADD (-log (up), "token_k1", DW_TUNE_THRESHOLD_RS);
          ADD (-log (dw_tune_controls_bound_value (self, row->lower)), "token_k1",
               DW_TUNE_THRESHOLD_RS);
        }
      else if (strcmp (name, "token_k2") == 0)
        {
          ADD (sqrt (2 * up), "token_k2", DW_TUNE_THRESHOLD_RS);
          ADD (-sqrt (2 * up), "token_k2", DW_TUNE_THRESHOLD_RS);
        }
      else if (strcmp (name, "token_k3") == 0)
        {
          ADD (dw_tune_controls_k3_inverse (up, 1), "token_k3", DW_TUNE_THRESHOLD_RS);
          ADD (dw_tune_controls_k3_inverse (up, -1), "token_k3", DW_TUNE_THRESHOLD_RS);
        }
      else if (strcmp (name, "token") == 0)
        {
          ADD (log (up), _ ("RS"), DW_TUNE_THRESHOLD_RS);
          ADD (log (dw_tune_controls_bound_value (self, row->lower)), _ ("RS"),
               DW_TUNE_THRESHOLD_RS);
        }
    }
  if (gtk_widget_get_visible (GTK_WIDGET (self->veto_group))
      && adw_expander_row_get_enable_expansion (ADW_EXPANDER_ROW (self->veto_row)))
    ADD (log (dw_tune_controls_bound_value (self, self->veto)), _ ("veto"), DW_TUNE_THRESHOLD_VETO);
#undef ADD
  return n;
}

/* ------------------------------------------------------------------------------------------ */
/* Construction                                                                               */

static GtkWidget *
dw_tune_controls_preset_item_widget (void)
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
dw_tune_controls_preset_item_setup_cb (GtkSignalListItemFactory *factory, GtkListItem *item,
                                       gpointer data)
{
  gtk_list_item_set_child (item, dw_tune_controls_preset_item_widget ());
}

static void
dw_tune_controls_preset_item_bind_cb (GtkSignalListItemFactory *factory, GtkListItem *item,
                                      DwTuneView *self)
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
dw_tune_controls_preset_value_setup_cb (GtkSignalListItemFactory *factory, GtkListItem *item,
                                        gpointer data)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_NONE);
  gtk_label_set_xalign (GTK_LABEL (label), 1);
  gtk_list_item_set_child (item, label);
}

static void
dw_tune_controls_preset_value_bind_cb (GtkSignalListItemFactory *factory, GtkListItem *item,
                                       gpointer data)
{
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)),
                      gtk_string_object_get_string (gtk_list_item_get_item (item)));
}

/* @name: widget name suffix for tests (dw-bound-row.h); @kind says which keys it writes */
static DwBoundRow *
dw_tune_controls_bound_new (DwTuneView *self, const char *name, const char *title, double lower,
                            double upper, double value, DwTuneBoundKind kind, DwTuneRsRow *rs_row)
{
  DwBoundRow *row = DW_BOUND_ROW (dw_bound_row_new (name, title, lower, upper, value));

  g_object_set_data (G_OBJECT (row), "dw-tune-kind", GINT_TO_POINTER (kind));
  g_object_set_data (G_OBJECT (row), "dw-tune-rs-row", rs_row);
  dw_bound_row_set_check_func (row, dw_tune_controls_check_bound, self);
  g_signal_connect (row, "changed", G_CALLBACK (dw_tune_controls_bound_changed_cb), self);
  return row;
}

static void
dw_tune_controls_build_generations (DwTuneView *self)
{
  g_autoptr (GtkStringList) generations = gtk_string_list_new (NULL);
  g_autoptr (GtkListItemFactory) factory = gtk_signal_list_item_factory_new ();
  g_autoptr (GtkListItemFactory) value = gtk_signal_list_item_factory_new ();

  dw_tune_schema_generation_order (self->gen_order);
  for (guint index = 0; index < DW_N_GENERATIONS; index++)
    gtk_string_list_append (generations, dw_generation_name (self->gen_order[index]));
  adw_combo_row_set_model (self->generation_row, G_LIST_MODEL (generations));

  g_signal_connect (factory, "setup", G_CALLBACK (dw_tune_controls_preset_item_setup_cb), self);
  g_signal_connect (factory, "bind", G_CALLBACK (dw_tune_controls_preset_item_bind_cb), self);
  adw_combo_row_set_list_factory (self->preset_row, factory);
  g_signal_connect (value, "setup", G_CALLBACK (dw_tune_controls_preset_value_setup_cb), NULL);
  g_signal_connect (value, "bind", G_CALLBACK (dw_tune_controls_preset_value_bind_cb), NULL);
  adw_combo_row_set_factory (self->preset_row, value);
}

/* the IS bounds, each in a row of its own, and batch normalisation */
static void
dw_tune_controls_build_is (DwTuneView *self)
{
  GtkWidget *threshold_row = adw_preferences_row_new ();
  GtkWidget *lower_row = adw_preferences_row_new ();

  self->is_threshold = dw_tune_controls_bound_new (
    self, "is-threshold", _ ("IS threshold (upper cap)"), 1.0001, 1e4, 2.0, DW_TUNE_BOUND_IS, NULL);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (threshold_row), FALSE);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (threshold_row), GTK_WIDGET (self->is_threshold));
  adw_preferences_group_add (self->is_group, threshold_row);
  self->is_lower = dw_tune_controls_bound_new (self, "is-lower", _ ("IS lower bound"), 1e-4, 0.9999,
                                               0.5, DW_TUNE_BOUND_IS, NULL);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (lower_row), FALSE);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (lower_row), GTK_WIDGET (self->is_lower));
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
  g_signal_connect (self->bn_switch, "notify::active", G_CALLBACK (dw_tune_controls_bn_toggled_cb),
                    self);
  adw_preferences_group_add (self->is_group, self->bn_row);
}

/* one expander row per RS option the schemas know, shown for the generations that offer it */
static void
dw_tune_controls_build_rs (DwTuneView *self)
{
  for (guint index = 0; index < DW_TUNE_N_RS; index++)
    {
      DwTuneRsRow *row = &self->rs[index];
      AdwExpanderRow *expander;
      g_autofree char *name = NULL;
      g_autofree char *upper_name = NULL;

      row->spec = &rs_specs[index];
      row->expander = adw_expander_row_new ();
      expander = ADW_EXPANDER_ROW (row->expander);
      name = g_strdup_printf ("rs-%s", row->spec->name);
      gtk_widget_set_name (row->expander, name);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row->expander), row->spec->name);
      adw_expander_row_set_subtitle (expander, _ (row->spec->hint));
      adw_expander_row_set_show_enable_switch (expander, TRUE);
      adw_expander_row_set_enable_expansion (expander, FALSE);
      if (row->spec->has_lower)
        {
          g_autofree char *lower_name = g_strdup_printf ("%s-lower", row->spec->name);

          row->lower
            = dw_tune_controls_bound_new (self, lower_name, _ ("Lower bound"), row->spec->lo, 1.0,
                                          row->spec->def_lower, DW_TUNE_BOUND_RS, row);
          adw_expander_row_add_row (expander, GTK_WIDGET (row->lower));
        }
      upper_name = g_strdup_printf ("%s-upper", row->spec->name);
      row->upper = dw_tune_controls_bound_new (
        self, upper_name, _ ("Upper bound"), row->spec->has_lower ? 1.0 : row->spec->lo,
        row->spec->hi, row->spec->def_upper, DW_TUNE_BOUND_RS, row);
      adw_expander_row_add_row (expander, GTK_WIDGET (row->upper));
      g_signal_connect (row->expander, "notify::enable-expansion",
                        G_CALLBACK (dw_tune_controls_rs_toggled_cb), self);
      adw_preferences_group_add (self->rs_group, row->expander);
    }
}

static void
dw_tune_controls_build_veto (DwTuneView *self)
{
  self->veto_row = adw_expander_row_new ();
  gtk_widget_set_name (self->veto_row, "veto-row");
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->veto_row), _ ("Token veto"));
  adw_expander_row_set_show_enable_switch (ADW_EXPANDER_ROW (self->veto_row), TRUE);
  self->veto = dw_tune_controls_bound_new (self, "veto", _ ("Veto threshold (ratio)"), 1e-12, 1.0,
                                           1e-4, DW_TUNE_BOUND_VETO, NULL);
  adw_expander_row_add_row (ADW_EXPANDER_ROW (self->veto_row), GTK_WIDGET (self->veto));
  g_signal_connect (self->veto_row, "notify::enable-expansion",
                    G_CALLBACK (dw_tune_controls_veto_toggled_cb), self);
  adw_preferences_group_add (self->veto_group, self->veto_row);
}

/* The controls the schemas need beyond the template: one row per bound and RS option (the
 * generations show those they have). */
void
dw_tune_controls_build (DwTuneView *self)
{
  self->syncing++;
  dw_tune_controls_build_generations (self);
  dw_tune_controls_build_is (self);
  dw_tune_controls_build_rs (self);
  dw_tune_controls_build_veto (self);
  self->syncing--;
}

/* A config set from outside (a run's own, an import): its generation, then its keys. */
void
dw_tune_controls_set_config (DwTuneView *self, const char *preset, const DwConfig *config)
{
  dw_tune_controls_set_generation (self, config->generation, preset);
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
  dw_tune_controls_sync (self);
  self->schedule_evaluation (self);
}

void
dw_tune_controls_update_run_header (DwTuneView *self)
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
                              g_dngettext (GETTEXT_PACKAGE, "%" PRId64 " stored batch",
                                           "%" PRId64 " stored batches",
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
