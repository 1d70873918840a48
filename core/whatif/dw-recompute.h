/* dw-recompute.h — recompute a stored run's rollout-correction metrics under any config
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * For every stored batch of a run, dw_correction_run() on the batch rebuilt from the store
 * (exactly what `driftwatch-cli metrics` computes on that step's batch file), and a comparison
 * with the values the run itself logged: each recomputed key is matched to the run's logged tag
 * of the same canonical metric (dw-canonical.h; the exact key wins), and a step is flagged when a
 * logged value differs beyond float32 rounding of the trainer's float32 reductions
 * (|a − b| > rtol·max(|a|, |b|) + atol, default rtol 2e-5 and atol 1e-7, the agreement verl's
 * torch code and the core reach, docs/CORRECTION.md §9.1; NaN equals NaN, ±inf equal only
 * themselves). A misconfigured trainer (wrong preset, threshold or generation) shows up as
 * flagged steps.
 */
#pragma once

#include <gio/gio.h>

#include "dw-config.h"
#include "dw-correction.h"
#include "dw-store.h"

G_BEGIN_DECLS

typedef struct
{
  char *key; /* recomputed key, e.g. "rollout_corr/rollout_is_mean" */
  char *tag; /* logged tag it was compared with */
  double logged;
  double recomputed;
} DwRecomputeDiff;

typedef struct
{
  gint64 step;
  DwCorrectionResult result; /* metrics only (weights/mask NULL) */
  gboolean failed;           /* verl/slime raise on this batch: @error */
  DwCorrectionError error;
  guint n_compared; /* recomputed keys that the run logged at this step */
  GPtrArray *diffs; /* DwRecomputeDiff*: logged values that disagree */
} DwRecomputeStep;

typedef struct
{
  gint64 run_id;
  DwConfig config; /* resolved (no "preset" key) */
  guint n_steps;
  DwRecomputeStep *steps;
  guint n_flagged; /* steps with at least one disagreement */
  guint n_failed;  /* steps where verl/slime raise */
  double seconds;  /* wall time of the recompute (loading + correction) */
} DwRecomputeResult;

void dw_recompute_result_free (DwRecomputeResult *res);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwRecomputeResult, dw_recompute_result_free)

typedef struct
{
  double rtol, atol; /* agreement with logged values; 0/0 → the defaults above */
  guint n_threads;   /* 0 = number of processors */
} DwRecomputeOptions;

/* @config may hold a "preset" key (applied for @generation, other keys override it). The
 * config's generation is set to @generation. Errors: the run has no stored batch, store
 * errors (DW_STORE_ERROR), an unknown preset (DW_WHATIF_ERROR_CONFIG). A config verl rejects is
 * not a GError: every step is then failed with verl's error. */
DwRecomputeResult *dw_recompute_run (DwStore *store, gint64 run_id, const DwConfig *config,
                                     DwGeneration generation, const DwRecomputeOptions *options,
                                     GCancellable *cancellable, GError **error);

/* The agreement rule above. */
gboolean dw_recompute_values_agree (double logged, double recomputed, double rtol, double atol);

/* The name of dw_recompute_run before every function carried its file's prefix. */
#define dw_whatif_recompute_run dw_recompute_run

G_END_DECLS
