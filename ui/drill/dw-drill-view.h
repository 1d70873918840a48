/* dw-drill-view.h — the drill-down from a step to its sequences and tokens
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Two pages over a run's stored batches (the questions of `driftwatch-cli tokens`, answered by
 * the same core functions): "This Step" — the step's sequences ranked by a per-sequence
 * statistic, and one sequence's tokens coloured by their log-ratio ℓ = log π_train −
 * log π_rollout, with their text when a tokenizer.json is known; "Across the Run" — the token
 * ids most often behind catastrophic ratios (|ℓ| > threshold) with their counts per step.
 * Everything is read off the main thread; a run without per-token batches gets a status page.
 */
#pragma once

#include <adwaita.h>

#include "dw-store-reader.h"

G_BEGIN_DECLS

#define DW_TYPE_DRILL_VIEW (dw_drill_view_get_type ())
G_DECLARE_FINAL_TYPE (DwDrillView, dw_drill_view, DW, DRILL_VIEW, GtkWidget)

GtkWidget *dw_drill_view_new (DwStoreReader *reader);
/* Shows @step of @run_id (the stored batch nearest to it); the ranking keeps its statistic. */
void dw_drill_view_show_step (DwDrillView *self, gint64 run_id, gint64 step);
/* Reads @path as the tokenizer for every run shown from now on (a worker; errors in a toast
 * of the view's label). */
void dw_drill_view_set_tokenizer_path (DwDrillView *self, const char *path);

/* For tests and the window: TRUE while a worker is reading. */
gboolean dw_drill_view_is_loading (DwDrillView *self);
/* "This Step": the run and step shown, the ranking statistic, the ranked sequences and the
 * tokens of the chosen one (GListModel of DwDrillItem). */
gint64 dw_drill_view_get_run_id (DwDrillView *self);
gint64 dw_drill_view_get_step (DwDrillView *self);
guint dw_drill_view_get_statistic (DwDrillView *self); /* a DwSeqStat */
GListModel *dw_drill_view_get_sequences (DwDrillView *self);
GListModel *dw_drill_view_get_tokens (DwDrillView *self);
/* "Across the Run": the catastrophic token ids (GListModel of DwDrillItem) at the threshold. */
GListModel *dw_drill_view_get_run_tokens (DwDrillView *self);
double dw_drill_view_get_threshold (DwDrillView *self);
void dw_drill_view_set_threshold (DwDrillView *self, double threshold);
/* The visible page: "step" or "run". */
const char *dw_drill_view_get_page (DwDrillView *self);

G_END_DECLS
