/* dw-verl-mismatch.c — mismatch_helper.compute_rollout_importance_weights of v0.6.0 and 4424616d7
 * (§6)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Arithmetic follows torch (docs/CORRECTION.md §2): every elementwise result is
 * rounded to the input dtype, reductions accumulate in double.
 */
#include "dw-correction-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
dw_verl_mismatch_run (const DwContext *c, const DwPlan *plan, DwCorrectionResult *res,
                      DwCorrectionError *error)
{
  const size_t B = c->rows, T = c->cols, BT = B * T;
  DwMetricList L = { .prefix = "mismatch/" };
  if (plan->nothing)
    {
      /* nothing computed: no weights, the mask unchanged */
      double *m = c->mask;
      if (!dw_correction_result_set_array (res, false, c->batch->mask_dtype, m, BT, error))
        return false;
      return dw_metric_list_finish (res, &L, error);
    }
  const DwLevel level = plan->is_level;
  const bool mask_mode = plan->is_mode != DW_IS_TRUNCATE;
  const double up = plan->is_upper, lo = plan->is_lower;
  const bool veto_on = plan->veto_on;
  double *w = malloc ((BT ? BT : 1) * sizeof (double));
  double *keep = malloc ((BT ? BT : 1) * sizeof (double));
  double *lrm = calloc (2 * B + 1, sizeof (double));
  if (!w || !keep || !lrm)
    {
      free (w);
      free (keep);
      free (lrm);
      return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
    }
  double *sm = lrm + B;
  if (level != DW_LEVEL_TOKEN)
    dw_context_row_log_ratio (c, level, lrm);
  dw_context_ratios (c, level, lrm, w);
  dw_ratio_metrics_compute (c, &L, "rollout_is", w, level == DW_LEVEL_TOKEN ? NULL : lrm, up, lo,
                            sm, level == DW_LEVEL_GEOMETRIC);
  const double upr = DW_ROUND (c, up), lor = DW_ROUND (c, lo);
  double masked = 0, rows_rej = 0;
  for (size_t b = 0; b < B; b++)
    {
      double rm = 0;
      for (size_t t = 0; t < T; t++)
        {
          size_t i = b * T + t;
          keep[i] = 1.0;
          if (mask_mode)
            keep[i] = (w[i] >= lor && w[i] <= upr) ? 1.0 : 0.0;
          else if (w[i] > upr)
            w[i] = upr;
          if (dw_context_valid (c, i))
            rm += (1.0 - keep[i]) * c->mask[i];
        }
      masked += rm;
      rows_rej
        += level == DW_LEVEL_TOKEN ? (DW_ROUND (c, rm) > 0) : (T > 0 ? 1.0 - keep[b * T] : 0.0);
    }
  if (mask_mode)
    {
      dw_metric_list_put (&L, "rollout_is_masked_fraction", dw_context_mean (c, masked));
      dw_metric_list_put (&L, "rollout_is_seq_masked_fraction", rows_rej / (double)B);
    }
  double vetoed = 0, cat = 0;
  if (veto_on)
    {
      const double lv = (float)log ((float)plan->veto);
      for (size_t b = 0; b < B; b++)
        {
          bool has = false;
          for (size_t t = 0; t < T; t++)
            {
              size_t i = b * T + t;
              if (dw_context_valid (c, i) && c->log_ratio[i] < lv)
                has = true, cat += c->mask[i];
            }
          vetoed += has;
          if (has)
            for (size_t t = 0; t < T; t++)
              keep[b * T + t] = 0.0;
        }
    }
  dw_metric_list_put (&L, "rollout_is_veto_fraction", vetoed / (double)B);
  dw_metric_list_put (&L, "rollout_is_catastrophic_token_fraction", dw_context_mean (c, cat));
  for (size_t i = 0; i < BT; i++)
    {
      w[i] = DW_ROUND (c, w[i] * c->mask[i]);
      keep[i] = c->mask[i] * keep[i];
    }
  DwDType mdt = c->batch->mask_dtype == DW_DTYPE_F64 ? DW_DTYPE_F64 : DW_DTYPE_F32;
  bool ok = dw_correction_result_set_array (res, true, c->batch->lp_dtype, w, BT, error)
            && dw_correction_result_set_array (res, false, mdt, keep, BT, error);
  dw_offpolicy_compute (c, &L, true);
  free (w);
  free (keep);
  free (lrm);
  if (!ok)
    {
      free (L.m);
      return false;
    }
  return dw_metric_list_finish (res, &L, error);
}
