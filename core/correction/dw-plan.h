/* dw-plan.h — a configuration checked and resolved into what the correction will do
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc only. dw_plan_build is the one place that validates a configuration: the checks the
 * trainer makes that do not depend on the batch, in the trainer's order, with its exception
 * type and message (no batch is needed). The correction paths, the what-if engine, export and
 * the Tune page all consume the resulting DwPlan instead of reading config keys.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "dw-config.h"
#include "dw-error.h"
#include "dw-rs.h"

#ifdef __cplusplus
extern "C"
{
#endif

  typedef enum
  {
    DW_LEVEL_TOKEN = 0,
    DW_LEVEL_SEQUENCE,  /* exp of the row's log-ratio sum, broadcast */
    DW_LEVEL_GEOMETRIC, /* exp of the row's log-ratio mean, broadcast */
  } DwLevel;

  /* What happens to a weight outside its bounds. */
  typedef enum
  {
    DW_IS_TRUNCATE = 0, /* w = min(r, U) (TIS) */
    DW_IS_ZERO_OUTSIDE, /* w = r inside [L, U], else 0 (IcePop; mismatch_helper v0.6.0 "mask") */
    DW_IS_MASK_OUTSIDE, /* w = r untruncated, tokens outside [L, U] leave the mask (4424616d7 and
                           slime mis "mask") */
    DW_IS_CLAMP,        /* w = clamp(r, L, U) (slime vanilla TIS, mis "clip") */
  } DwIsMode;

  /* Which weights verl's IS metrics describe (docs/CORRECTION.md §3.3, §3.6). */
  typedef enum
  {
    DW_IS_METRICS_RAW = 0,        /* ≤ v0.7.1: the safety-clamped weights before truncation */
    DW_IS_METRICS_APPLIED,        /* v0.8.0: applied weights; token fractions from raw */
    DW_IS_METRICS_APPLIED_RAW_SEQ /* v0.9.0: as v0.8.0, sequence fractions from raw row means */
  } DwIsMetrics;

  /* Which rows a sequence-level batch normalisation averages over (§3.2, §5.4). */
  typedef enum
  {
    DW_BN_ROWS_NON_EMPTY = 0, /* 2f2996b7d, v0.7.0 and later */
    DW_BN_ROWS_ALL,           /* v0.6.1 (2c6c65cb0): empty rows count as 0 */
  } DwBnRows;

  typedef enum
  {
    DW_PATH_VERL_K_OPTIONS = 0, /* compute_rollout_correction_and_rejection_mask, v0.7.1+ */
    DW_PATH_VERL_LEGACY_RS,     /* the same entry, v0.6.1 – v0.7.0 */
    DW_PATH_VERL_MISMATCH,      /* mismatch_helper.compute_rollout_importance_weights */
    DW_PATH_SLIME_MIS,          /* slime mis.py compute_mis_weights */
    DW_PATH_SLIME_VANILLA,      /* slime loss.py vanilla_tis_function */
    DW_PATH_SLIME_ICEPOP,       /* slime loss.py icepop_function */
  } DwPath;

  typedef struct
  {
    DwGeneration generation;
    DwPath path;
    const char *metric_prefix;

    /* importance sampling */
    bool is_on;
    DwLevel is_level;
    DwIsMode is_mode;
    double is_upper;     /* U, as the trainer parsed it */
    double is_lower;     /* L in effect (explicit, or the generation's default such as 1/U) */
    bool is_lower_given; /* L came from the config (IcePop "lower_upper", an explicit key) */
    DwIsMetrics is_metrics;
    bool batch_normalize;
    DwBnRows bn_rows;

    /* rejection sampling */
    bool rs_on;
    DwRsParsed rs;             /* DW_PATH_VERL_K_OPTIONS */
    DwLevel rs_level;          /* legacy RS, slime mis */
    double rs_upper, rs_lower; /* legacy RS, slime mis (ratio space) */

    /* veto of rows with a catastrophic token */
    bool veto_on;
    double veto;
    bool veto_keys_always; /* emit the veto keys (as 0) even when the veto is off */

    /* nothing at all is computed (mismatch_helper with rollout_is_threshold None; slime with
     * use_tis false computes only the mismatch metrics) */
    bool nothing;
    bool mismatch_quantiles; /* v0.6.0: rollout_is_p25 … p99 */
    bool returns_mask;       /* the entry returns a modified mask (v0.6.0 returns none) */

    /* slime */
    bool slime_use_tis;     /* use_tis */
    bool slime_use_rs;      /* mis.py use_rs (RS and its veto) */
    bool per_token_metrics; /* built-in: calculate_per_token_loss */
  } DwPlan;

  /* Checks @config (keys the generation lacks are ignored, as cfg.get() would) and resolves it
   * into @plan. A "preset" key must have been applied first (dw_preset_apply). On error
   * returns false with the trainer's exception type and message in @error. */
  bool dw_plan_build (const DwConfig *config, DwPlan *plan, DwCorrectionError *error);

  /* verl ≥ 0.8.0 _parse_rollout_is_threshold: a number or "U" → TIS (*has_lower false), an
   * "L_U" string → IcePop; the same checks, exception types and messages (§3.5). */
  bool dw_plan_parse_is_threshold (const DwValue *threshold, double *upper, double *lower,
                                   bool *has_lower, DwCorrectionError *error);

  /* Python names: "token", "sequence", "geometric". */
  const char *dw_plan_level_name (DwLevel level);

#ifdef __cplusplus
}
#endif
