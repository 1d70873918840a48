/* dw-correction.h — rollout correction (IS / RS / veto / off-policy metrics) as verl and slime
 * compute it; docs/CORRECTION.md is the math
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only (no GLib): embeddable and fuzzable. Thread-safe (per-thread workspace only).
 * Every error is returned as a DwCorrectionError (kind + verl's exact message), never an abort.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dw-batch.h"
#include "dw-config.h"
#include "dw-error.h"
#include "dw-plan.h"
#include "dw-python.h"
#include "dw-rs.h"
#include "dw-schema.h"

#ifdef __cplusplus
extern "C"
{
#endif

  /* ---------------------------------------------------------------------------------------- */
  /* Result                                                                                   */

#define DW_METRIC_KEY_MAX 80

  typedef struct
  {
    char key[DW_METRIC_KEY_MAX]; /* full key with prefix, e.g. "rollout_corr/rollout_is_mean" */
    double value;                /* may be NaN / ±inf */
  } DwMetric;

  typedef struct
  {
    /* Metrics in a deterministic order: sorted by key (strcmp), as the golden files list them. */
    size_t n_metrics;
    DwMetric *metrics;
    /* [rows*cols] weights in @weights_dtype (== the batch's lp_dtype), or NULL when IS is off. */
    size_t rows, cols;
    DwDType weights_dtype;
    void *weights;
    /* [rows*cols] modified response mask in @mask_dtype (v0.7.1+ keep the
     * input dtype, §4.3; v0.6.1–v0.7.0 and 4424616d7 return float32, float64 for float64 masks,
     * §5.1 and §6.1; slime's mis.py float32, §7.1) */
    DwDType mask_dtype;
    void *mask;
    /* DW_ENTRY_MASK_SHARED only: @mask is the batch's own response_mask (the run left it
     * unchanged, as verl then returns the input tensor itself); valid while the batch lives,
     * not freed by dw_correction_result_clear () */
    bool mask_borrowed;
  } DwCorrectionResult;

  void dw_correction_result_init (DwCorrectionResult *result);
  /* Frees the arrays and metrics (not the struct itself); leaves @result re-initialised. */
  void dw_correction_result_clear (DwCorrectionResult *result);
  /* Value of @key, or NULL. Linear lookup. */
  const double *dw_correction_result_get (const DwCorrectionResult *result, const char *key);

  /* ---------------------------------------------------------------------------------------- */
  /* Entry points                                                                             */

  typedef enum
  {
    DW_ENTRY_MASK = 0,  /* compute_rollout_correction_and_rejection_mask (or the generation's) */
    DW_ENTRY_OFFPOLICY, /* ..._metrics_from_logprobs: 13 off-policy keys, no prefix */
    /* DW_ENTRY_MASK for callers that keep the batch while they use the result: an unchanged
     * mask is not copied (DwCorrectionResult.mask_borrowed) */
    DW_ENTRY_MASK_SHARED,
  } DwEntry;

  /* Runs the generation's entry on @batch. A config key "preset" must have been resolved with
   * dw_preset_apply() first (it is an error here). Keys a generation does not know are ignored,
   * as verl's cfg.get() would. On error returns false, @result stays empty. */
  bool dw_correction_run (const DwBatch *batch, const DwConfig *config, DwCorrectionResult *result,
                          DwCorrectionError *error);
  bool dw_correction_run_entry (const DwBatch *batch, const DwConfig *config, DwEntry entry,
                                DwCorrectionResult *result, DwCorrectionError *error);

  /* Runs keep their large temporaries in a per-thread workspace (about 5 doubles per token of the
   * largest batch seen) so that repeated runs do not fault fresh pages; a thread's workspace is
   * freed when the thread exits (nothing for the caller to release). */

  /* Runs a plan from dw_plan_build (the configuration is checked once, not per batch). */
  bool dw_correction_run_plan (const DwBatch *batch, const DwPlan *plan, DwEntry entry,
                               DwCorrectionResult *result, DwCorrectionError *error);

  /* dw_plan_build without keeping the plan: the checks the trainer makes that do not depend on
   * the batch, in its order, with its messages. */
  bool dw_correction_check_config (const DwConfig *config, DwCorrectionError *error);

  /* ---------------------------------------------------------------------------------------- */
  /* Presets                                                                                  */

  typedef struct
  {
    const char *name;
    const char *description; /* one line, English */
  } DwPresetInfo;

  /* The presets of @gen (NULL-terminated static array; *n_out gets the count when non-NULL). */
  const DwPresetInfo *dw_preset_list (DwGeneration gen, size_t *n_out);
  const DwPresetInfo *dw_preset_lookup (DwGeneration gen, const char *name);
  /* Sets every field the preset classmethod sets (exact values of golden/presets/<rev>.json) on
   * @config (other keys are kept, preset fields override them) and removes a "preset" key.
   * Unknown name → DW_ERROR_VALUE. */
  bool dw_preset_apply (DwConfig *config, const char *name, DwCorrectionError *error);
  /* Field values of a preset as a fresh config (generation @gen). */
  bool dw_preset_config (DwGeneration gen, const char *name, DwConfig *out,
                         DwCorrectionError *error);

  /* ---------------------------------------------------------------------------------------- */
  /* Building blocks (shared with the what-if engine)                                          */

  /* Per-row sufficient statistics of one batch, in the input dtype's arithmetic rounded to double.
   * ℓ = old − rollout, ℓ̃ = clamp(ℓ, −20, 20). Sums follow the masked (where) semantics of
   * MSUM; means are MSUM / (n + 1e-8) in the input dtype. */
  typedef struct
  {
    double n;        /* Σ m (mask as number) */
    int64_t n_valid; /* # m != 0 */
    double sum_l;    /* MSUM(ℓ): raw log-ratio sum (sequence IS) */
    double sum_old;  /* MSUM(old) */
    double sum_roll; /* MSUM(rollout) */
    double sum_k[3]; /* MSUM(k1), MSUM(k2), MSUM(k3) of the clamped ℓ̃ */
    double
      max_k[3];   /* max over valid tokens of k1..k3 (0 for an empty row; k1 unused since v0.7.1) */
    double min_l; /* min of raw ℓ over valid tokens (veto), +inf for an empty row */
  } DwRowStats;

  /* Fills @rows[0..batch->rows) in one pass. */
  void dw_row_stats_compute (const DwBatch *batch, DwRowStats *rows);

  /* The widest vector instructions the float32 fast path may use, for benchmarks that compare
   * the levels: "avx512", "avx2" or "off" (at most what the CPU has). Returns the name of the
   * level granted, NULL (nothing changed) for another name. Process-wide, not thread-safe. */
  const char *dw_correction_set_vector_limit (const char *name);
  /* The level in use (the what-if engine's row loops follow it too, so one limit caps both). */
  typedef enum
  {
    DW_VECTOR_OFF,
    DW_VECTOR_AVX2,   /* AVX2 + FMA */
    DW_VECTOR_AVX512, /* AVX-512 F, DQ, BW, VL (and AVX2 + FMA) */
  } DwVectorLevel;
  DwVectorLevel dw_correction_get_vector_level (void);

  /* float32 / float64 comparisons of the spec: a double bound rounded to the dtype. */
  static inline double dw_round_to_dtype (double v, DwDType dtype)
  {
    return dtype == DW_DTYPE_F32 ? (double)(float)v : v;
  }

#ifdef __cplusplus
}
#endif
