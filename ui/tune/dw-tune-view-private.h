/* dw-tune-view-private.h — the Tune page's state, shared by the files of ui/tune/ only
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * dw-tune-view.c owns the page (results, evaluation, the run); dw-tune-controls.c turns the
 * controls into the config and back; dw-tune-loader.c holds the worker threads (precompute,
 * refinement, the run's config check); dw-tune-actions.c the copy, paste and save actions;
 * dw-tune-export.c the export and import of a config's text. The view calls the others; they
 * ask the view for an evaluation through schedule_evaluation, never by calling dw-tune-view.c.
 */
#pragma once

#include <adwaita.h>

#include "dw-bound-row.h"
#include "dw-correction.h"
#include "dw-run-config.h"
#include "dw-store-reader.h"
#include "dw-tune-histogram.h"
#include "dw-tune-length-bias.h"
#include "dw-tune-view.h"

G_BEGIN_DECLS

/* ms the controls rest before the approximate result shown is refined */
#define DW_TUNE_VIEW_REFINE_DELAY 150

/* dw-chart-card.h is not included here: dw-tune-export.c includes core/export, whose
 * DwExportFormat shares its name with the chart's */
typedef struct _DwChartCard DwChartCard;

/* The preset the view starts with: token TIS with k3 rejection, the configuration verl's docs
 * recommend first for a mismatch problem (and the one the demo run was trained with). */
#define DW_TUNE_DEFAULT_PRESET "decoupled_k3_rs_token_tis"

typedef enum
{
  DW_TUNE_RS_HEAD = 0, /* one of verl HEAD's 11 k-options (multi-select, threshold grammar) */
  DW_TUNE_RS_LEGACY,   /* token / sequence / geometric (verl 0.6.1–0.7, slime): one at a time */
} DwTuneRsKind;

typedef struct
{
  const char *name;
  DwTuneRsKind kind;
  gboolean has_lower;
  double def_lower, def_upper;
  double lo, hi; /* slider range of the bounds */
  const char *hint;
} DwTuneRsSpec;

#define DW_TUNE_N_RS 14

typedef struct
{
  const DwTuneRsSpec *spec;
  GtkWidget *expander; /* AdwExpanderRow with an enable switch */
  DwBoundRow *lower, *upper;
} DwTuneRsRow;

typedef struct
{
  const char *canonical; /* dw-canonical.h id, or a key's name after the generation's prefix */
  const char *title;
  const char *alternative; /* the metric a generation logs instead, or NULL */
} DwTuneChartSpec;

#define DW_TUNE_N_CHARTS 7

/* the key tables whose chart positions the page keeps, and "not looked up yet" */
#define DW_TUNE_VIEW_KEY_TABLES 4
#define DW_TUNE_VIEW_UNKNOWN    G_MAXSIZE

typedef struct
{
  const DwWhatifKeys *keys;
  gsize position[DW_TUNE_N_CHARTS];
} DwTuneViewKeyPositions;

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
  DwTuneHistogram *histogram;
  GtkAdjustment *step_adjustment;
  DwTuneLengthBias *length_bias;
  GtkGrid *summary_grid;
  GtkLabel *health_label; /* the health rules on the what-if series */

  /* built in code */
  GtkWidget *modified_row; /* shown when the config differs from the preset: what, and Reset */
  DwBoundRow *is_threshold;
  DwBoundRow *is_lower; /* IcePop's lower bound, or the generation's lower-bound key */
  GtkWidget *bn_row;
  GtkSwitch *bn_switch;
  GtkWidget *veto_row; /* AdwExpanderRow */
  DwBoundRow *veto;
  DwTuneRsRow rs[DW_TUNE_N_RS];
  DwChartCard *cards[DW_TUNE_N_CHARTS];
  /* the summary grid's rows under its heading: metric, logged, what-if, change (their texts are
   * set in place at every evaluation) */
  GtkLabel *summary_cells[DW_TUNE_N_CHARTS][4];
  /* each chart's position in the key tables of the results shown: the steps of an evaluation
   * share a table, and so do the evaluations of a slider's moves (a refinement mixes in the
   * exact results' table). A reference to each table; DW_TUNE_VIEW_UNKNOWN: not looked up yet,
   * the table's length: the chart's metric is not among its keys. */
  DwTuneViewKeyPositions key_positions[DW_TUNE_VIEW_KEY_TABLES];
  guint key_positions_next; /* the entry a new table replaces */
  double *chart_values;     /* every chart's values, then their bounds (whatif_values) */
  gsize chart_values_room;  /* doubles in chart_values */
  DwBoundRow *checking_row; /* the row whose value is under test, and that value */
  double checking_value;

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
  DwStoreReader *reader; /* the page's reads (dw-tune-loader.c), on the store's file */
  gint64 run_id;
  DwRunInfo *run_info; /* the run tuned, named at the top; NULL for none */
  DwWhatifEngine *engine;
  gboolean compact;       /* the engine holds compact steps (a large run, docs/TUNE.md) */
  guint64 compact_tokens; /* a run with more valid tokens is loaded compact */
  GCancellable *load_cancellable;
  GCancellable *exact_cancellable;
  gboolean loading;
  gboolean exact_running;
  guint exact_done, exact_total; /* steps refined so far, of those that need it */
  guint tick_id;
  guint idle_id;
  guint refresh_id; /* redraws the refined values, at most once a frame */
  guint refine_id;  /* starts the refinement once the controls rest (DW_TUNE_VIEW_REFINE_DELAY) */
  guint health_id;  /* runs the health rules once the controls rest (the same delay) */
  gboolean dirty;
  DwWhatifRunResult *result;
  char *error_text;
  char *load_note; /* steps the precompute left out, and why (NULL: none) */

  GtkFileChooserNative *save_dialog;

  /* Set by the view: the controls and actions (below it) ask for an evaluation through it, at
   * most one per frame, and never call dw-tune-view.c. */
  void (*schedule_evaluation) (DwTuneView *self);
};

extern const DwTuneChartSpec dw_tune_chart_specs[DW_TUNE_N_CHARTS];

/* dw-tune-view.c */
void dw_tune_view_step_changed_cb (GtkAdjustment *adjustment, DwTuneView *self);

/* dw-tune-controls.c */
void dw_tune_controls_build (DwTuneView *self);
void dw_tune_controls_sync (DwTuneView *self);
void dw_tune_controls_set_generation (DwTuneView *self, DwGeneration gen, const char *preset);
void dw_tune_controls_apply_preset (DwTuneView *self, const char *preset_name);
void dw_tune_controls_update_modified (DwTuneView *self);
char *dw_tune_controls_describe_changes (DwTuneView *self);
void dw_tune_controls_set_config (DwTuneView *self, const char *preset, const DwConfig *config);
/* The run tuned, named at the top, and how its config was found. */
void dw_tune_controls_update_run_header (DwTuneView *self);
const char *dw_tune_controls_role_key (DwTuneView *self, DwKeyRole role);
guint dw_tune_controls_thresholds (DwTuneView *self, DwTuneThreshold *out, guint max);
void dw_tune_controls_reset_preset_action (GtkWidget *widget, const char *action_name,
                                           GVariant *param);
/* template callbacks of dw-tune-view.ui */
void dw_tune_controls_generation_selected_cb (AdwComboRow *row, GParamSpec *pspec,
                                              DwTuneView *self);
void dw_tune_controls_preset_selected_cb (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self);
void dw_tune_controls_is_level_selected_cb (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self);
void dw_tune_controls_is_mode_selected_cb (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self);
void dw_tune_controls_function_selected_cb (AdwComboRow *row, GParamSpec *pspec, DwTuneView *self);

/* dw-tune-values.c: every chart's value at every step and its error bound (0 when exact, NAN
 * when not known), in one walk over the steps of the result shown: chart c's n_steps values from
 * *values + c·n_steps, its bounds likewise from *bounds, in the view's buffers (valid until the
 * next call); @any_approx[c] */
void dw_tune_view_whatif_values (DwTuneView *self, double **values, double **bounds,
                                 gboolean *any_approx);

/* dw-tune-actions.c */
void dw_tune_actions_install (GtkWidgetClass *widget_class);
gboolean dw_tune_actions_import (DwTuneView *self, const char *text, GError **error);

G_END_DECLS
