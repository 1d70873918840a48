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

/* the ratio RS of v0.6.1 – v0.7.0 (§5.1, §5.2): @keep gets [lower ≤ ratio ≤ upper] */
static void
dw_verl_legacy_rejection (const DwContext *context, DwMetricList *list, const DwPlan *plan,
                          double *ratios, double *row_log, double *row_means, double *keep)
{
  const size_t rows = context->rows, cols = context->cols, count = rows * cols;
  if (plan->rs_level != DW_LEVEL_TOKEN)
    dw_context_row_log_ratio (context, plan->rs_level, row_log);
  dw_context_ratios (context, plan->rs_level, row_log, ratios);
  const double lower = DW_ROUND (context, plan->rs_lower);
  const double upper = DW_ROUND (context, plan->rs_upper);
  for (size_t index = 0; index < count; index++)
    keep[index] = (ratios[index] >= lower && ratios[index] <= upper) ? 1.0 : 0.0;
  dw_ratio_metrics_compute (context, list, "rollout_rs", ratios,
                            plan->rs_level == DW_LEVEL_TOKEN ? NULL : row_log, plan->rs_upper,
                            plan->rs_lower, row_means, false);
  double masked = 0, rows_rejected = 0;
  for (size_t row = 0; row < rows; row++)
    {
      double row_masked = 0;
      for (size_t col = 0; col < cols; col++)
        {
          const size_t index = row * cols + col;
          if (dw_context_valid (context, index))
            row_masked += (1.0 - keep[index]) * context->mask[index];
        }
      masked += row_masked;
      if (plan->rs_level == DW_LEVEL_TOKEN)
        rows_rejected += DW_ROUND (context, row_masked) > 0;
      else
        rows_rejected += cols > 0 ? 1.0 - keep[row * cols] : 0.0;
    }
  dw_metric_list_put (list, "rollout_rs_masked_fraction", dw_context_mean (context, masked));
  dw_metric_list_put (list, "rollout_rs_seq_masked_fraction",
                      rows ? rows_rejected / (double)rows : 0.0);
}

bool
dw_verl_run (const DwContext *context, const DwPlan *plan, DwEntry entry,
             DwCorrectionResult *result, DwCorrectionError *error)
{
  const size_t rows = context->rows, count = rows * context->cols;
  DwMetricList list = { .prefix = "rollout_corr/" };
  if (entry == DW_ENTRY_OFFPOLICY)
    {
      /* compute_rollout_corr_metrics_from_logprobs returns the 13 keys unprefixed; the actor
       * adds the prefix when it logs them */
      list.prefix = "";
      dw_offpolicy_compute (context, &list, false);
      return dw_metric_list_finish (result, &list, error);
    }
  double *weights = dw_workspace_get (DW_WORKSPACE_W, count * sizeof (double));
  double *keep = dw_workspace_get (DW_WORKSPACE_KEEP, count * sizeof (double));
  double *scratch
    = dw_workspace_get (DW_WORKSPACE_SCRATCH, (count + 4 * rows + 1) * sizeof (double));
  if (!weights || !keep || !scratch)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  double *row_log = scratch + count, *row_means = row_log + rows;

  /* IS (§3.1 – §3.6) */
  bool ok = true;
  if (plan->is_on)
    {
      if (!dw_verl_is_weights (context, &list, plan, weights, row_log, row_means, error))
        {
          free (list.m);
          return false;
        }
      ok &= dw_correction_result_set_array (result, true, context->batch->lp_dtype, weights, count,
                                            error);
    }

  /* RS: k-options (§4), or the ratio RS and the veto of the older releases (§5) */
  for (size_t index = 0; index < count; index++)
    keep[index] = 1.0;
  DwDType mask_dtype = context->batch->mask_dtype;
  if (plan->path == DW_PATH_VERL_K_OPTIONS)
    {
      if (plan->rs_on)
        dw_verl_rs_k_options (context, &list, &plan->rs, keep, scratch);
    }
  else
    {
      /* the weights were emitted: their buffer holds the RS ratios now */
      if (plan->rs_on)
        dw_verl_legacy_rejection (context, &list, plan, weights, row_log, row_means, keep);
      dw_verl_rs_veto (context, &list, plan, keep);
      if (plan->rs_on || plan->veto_on)
        mask_dtype = mask_dtype == DW_DTYPE_F64 ? DW_DTYPE_F64 : DW_DTYPE_F32;
    }
  for (size_t index = 0; index < count; index++)
    keep[index] = context->mask[index] * keep[index];
  ok &= dw_correction_result_set_array (result, false, mask_dtype, keep, count, error);

  dw_offpolicy_compute (context, &list, false);
  if (!ok)
    {
      free (list.m);
      return false;
    }
  return dw_metric_list_finish (result, &list, error);
}
