/* dw-tune-view.h — what-if tuning of the rollout-correction config over a stored run
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Preset chooser, IS level/threshold, batch normalisation, RS options with their bounds (log-scale
 * sliders and exact entries), veto; charts of the logged series against the what-if series, a
 * per-step histogram of token log-ratios with the thresholds drawn, the length-bias view and a
 * "logged vs what-if" summary; config export. Every change is re-evaluated by the what-if engine
 * in a worker thread (latest change wins); approximate values are finished by the exact pass.
 */
#pragma once

#include <adwaita.h>

#include "dw-config.h"
#include "dw-store.h"
#include "dw-whatif-engine.h"

G_BEGIN_DECLS

#define DW_TYPE_TUNE_VIEW (dw_tune_view_get_type ())
G_DECLARE_FINAL_TYPE (DwTuneView, dw_tune_view, DW, TUNE_VIEW, AdwBin)

GtkWidget *dw_tune_view_new (void);

/* Precomputes the run's stored batches in a worker thread and reads its logged series. */
void dw_tune_view_set_run (DwTuneView *self, DwStore *store, gint64 run_id);
gint64 dw_tune_view_get_run_id (DwTuneView *self);

/* A run with more valid tokens than @n_tokens is loaded as compact steps (a sketch of its tokens,
 * bounded memory; docs/TUNE.md "Large runs"): token-level values whose bound falls inside the
 * sketch are shown approximate with their error bound, then made exact step by step in the
 * background from the stored batches. Default DW_TUNE_COMPACT_TOKENS (32 Mi); 0 makes every run
 * compact. Takes effect at the next dw_tune_view_set_run(). */
void dw_tune_view_set_compact_tokens (DwTuneView *self, guint64 n_tokens);
/* Whether the run shown was loaded as compact steps. */
gboolean dw_tune_view_get_compact (DwTuneView *self);

/* The config the controls describe (resolved, no "preset" key). */
const DwConfig *dw_tune_view_get_config (DwTuneView *self);
/* Sets generation, preset and the controls from @config (keys the controls do not show are kept
 * for export). @preset may be NULL. */
void dw_tune_view_set_config (DwTuneView *self, const char *preset, const DwConfig *config);

/* Whether the config differs from the selected preset (the page then shows what changed and a
 * Reset button, action tune.reset-preset). */
gboolean dw_tune_view_get_modified (DwTuneView *self);

/* TRUE while loading or evaluating ("busy" property). */
gboolean dw_tune_view_get_busy (DwTuneView *self);
/* The last finished evaluation, NULL before the first. */
const DwWhatifRunResult *dw_tune_view_get_result (DwTuneView *self);

/* The current config rendered for its generation in @format ("yaml", "hydra", "args"): what the
 * Copy and Save actions (tune.copy-config, tune.save-config) write. */
char *dw_tune_view_export_config (DwTuneView *self, const char *format, GError **error);

/* Imports a pasted verl YAML / Hydra overrides / slime flags text (generation and format detected)
 * and shows it, as the tune.paste-config action does with the clipboard. FALSE with @error (the
 * place in the text and verl's message) when it cannot be read or verl would reject it; the view
 * is then unchanged. */
gboolean dw_tune_view_import_config (DwTuneView *self, const char *text, GError **error);

G_END_DECLS
