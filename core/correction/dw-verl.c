/* dw-verl.c — compute_rollout_correction_and_rejection_mask of every rollout_corr generation
 * (§3–§5)
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
dw_verl_run (const DwContext *c, const DwPlan *plan, DwEntry entry, DwCorrectionResult *res,
             DwCorrectionError *error)
{
  const size_t B = c->rows, T = c->cols, BT = B * T;
  const DwPlan p = *plan;
  DwMetricList L = { .prefix = "rollout_corr/" };
  if (entry == DW_ENTRY_OFFPOLICY)
    {
      /* compute_rollout_corr_metrics_from_logprobs returns the 13 keys unprefixed; the actor
       * adds the prefix when it logs them */
      L.prefix = "";
      dw_offpolicy_compute (c, &L, false);
      return dw_metric_list_finish (res, &L, error);
    }
  double *w = dw_workspace_get (DW_WORKSPACE_W, BT * sizeof (double));
  double *keep = dw_workspace_get (DW_WORKSPACE_KEEP, BT * sizeof (double));
  double *scratch = dw_workspace_get (DW_WORKSPACE_SCRATCH, (BT + 4 * B + 1) * sizeof (double));
  if (!w || !keep || !scratch)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  double *lrm = scratch + BT, *sm = lrm + B;
  bool ok = true;
  if (p.is_on)
    {
      if (!dw_verl_is_weights (c, &L, &p, w, lrm, sm, error))
        {
          free (L.m);
          return false;
        }
      ok &= dw_correction_result_set_array (res, true, c->batch->lp_dtype, w, BT, error);
    }
  for (size_t i = 0; i < BT; i++)
    keep[i] = 1.0;
  DwDType mdt = c->batch->mask_dtype;
  if (p.path == DW_PATH_VERL_K_OPTIONS)
    {
      if (p.rs_on)
        dw_verl_rs_k_options (c, &L, &p.rs, keep, scratch);
    }
  else
    {
      bool changed = false;
      if (p.rs_on)
        {
          changed = true;
          double *rw = w; /* weights were already emitted */
          if (p.rs_level != DW_LEVEL_TOKEN)
            dw_context_row_log_ratio (c, p.rs_level, lrm);
          dw_context_ratios (c, p.rs_level, lrm, rw);
          const double lo = DW_ROUND (c, p.rs_lower), up = DW_ROUND (c, p.rs_upper);
          for (size_t i = 0; i < BT; i++)
            keep[i] = (rw[i] >= lo && rw[i] <= up) ? 1.0 : 0.0;
          dw_ratio_metrics_compute (c, &L, "rollout_rs", rw,
                                    p.rs_level == DW_LEVEL_TOKEN ? NULL : lrm, p.rs_upper,
                                    p.rs_lower, sm, false);
          double masked = 0, rows = 0;
          for (size_t b = 0; b < B; b++)
            {
              double rm = 0;
              for (size_t t = 0; t < T; t++)
                {
                  size_t i = b * T + t;
                  if (dw_context_valid (c, i))
                    rm += (1.0 - keep[i]) * c->mask[i];
                }
              masked += rm;
              if (p.rs_level == DW_LEVEL_TOKEN)
                rows += DW_ROUND (c, rm) > 0;
              else
                rows += T > 0 ? 1.0 - keep[b * T] : 0.0;
            }
          dw_metric_list_put (&L, "rollout_rs_masked_fraction", dw_context_mean (c, masked));
          dw_metric_list_put (&L, "rollout_rs_seq_masked_fraction", B ? rows / (double)B : 0.0);
        }
      if (p.veto_on)
        {
          changed = true;
          const double lv = (float)log ((float)p.veto);
          double vetoed = 0, cat = 0;
          for (size_t b = 0; b < B; b++)
            {
              bool has = false;
              for (size_t t = 0; t < T; t++)
                {
                  size_t i = b * T + t;
                  if (dw_context_valid (c, i) && c->log_ratio[i] < lv)
                    {
                      has = true;
                      cat += c->mask[i];
                    }
                }
              vetoed += has;
              if (has)
                for (size_t t = 0; t < T; t++)
                  keep[b * T + t] = 0.0;
            }
          dw_metric_list_put (&L, "rollout_is_veto_fraction", vetoed / (double)B);
          dw_metric_list_put (&L, "rollout_is_catastrophic_token_fraction",
                              dw_context_mean (c, cat));
        }
      else
        {
          dw_metric_list_put (&L, "rollout_is_veto_fraction", 0.0);
          dw_metric_list_put (&L, "rollout_is_catastrophic_token_fraction", 0.0);
        }
      if (changed)
        mdt = mdt == DW_DTYPE_F64 ? DW_DTYPE_F64 : DW_DTYPE_F32;
    }
  for (size_t i = 0; i < BT; i++)
    keep[i] = c->mask[i] * keep[i];
  ok &= dw_correction_result_set_array (res, false, mdt, keep, BT, error);
  dw_offpolicy_compute (c, &L, false);
  if (!ok)
    {
      free (L.m);
      return false;
    }
  return dw_metric_list_finish (res, &L, error);
}
