/* dw-verl-mismatch.c — mismatch_helper.compute_rollout_importance_weights of verl v0.6.0
 * (5d378b5f9) and of commit 4424616d7 (§6)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Arithmetic follows torch (docs/CORRECTION.md §2): every elementwise result is
 * rounded to the input dtype, reductions accumulate in double.
 */
#include "dw-correction-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  double *weights; /* [B*T] ratios, then the returned weights */
  double *keep;    /* [B*T] 1 kept, 0 outside the bounds (mask mode) or vetoed */
  double *row_log; /* [B] */
  double *row_means;
  double *sorted; /* [n valid] for the quantiles */
} DwVerlMismatchBuffers;

static int
dw_verl_mismatch_compare (const void *left, const void *right)
{
  const double a = *(const double *)left, b = *(const double *)right;
  return a < b ? -1 : a > b;
}

/* torch.quantile(weights[valid], q) with linear interpolation, in the input dtype (§6.2) */
static double
dw_verl_mismatch_quantile (const DwContext *context, const double *sorted, size_t count,
                           double quantile)
{
  const double rank = DW_ROUND (context, DW_ROUND (context, quantile) * (double)(count - 1));
  const size_t below = (size_t)floor (rank), above = (size_t)ceil (rank);
  const double fraction = DW_ROUND (context, rank - (double)below);
  const double low = sorted[below], high = sorted[above];
  const double difference = DW_ROUND (context, high - low);
  if (fraction < 0.5)
    return DW_ROUND (context, low + DW_ROUND (context, fraction * difference));
  return DW_ROUND (context, high - DW_ROUND (context, difference * (1.0 - fraction)));
}

/* v0.6.0's rollout_is_p25 … p99 of the weights before truncation, over valid tokens */
static void
dw_verl_mismatch_quantiles (const DwContext *context, DwMetricList *list, const double *weights,
                            double *sorted)
{
  static const struct
  {
    const char *key;
    double quantile;
  } levels[] = { { "rollout_is_p25", 0.25 },
                 { "rollout_is_p50", 0.50 },
                 { "rollout_is_p75", 0.75 },
                 { "rollout_is_p95", 0.95 },
                 { "rollout_is_p99", 0.99 } };
  size_t count = 0;
  bool any_nan = false;
  for (size_t index = 0; index < context->rows * context->cols; index++)
    if (dw_context_valid (context, index))
      {
        any_nan |= isnan (weights[index]);
        sorted[count++] = weights[index];
      }
  if (!any_nan)
    qsort (sorted, count, sizeof *sorted, dw_verl_mismatch_compare);
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
    dw_metric_list_put (
      list, levels[i].key,
      any_nan ? NAN : dw_verl_mismatch_quantile (context, sorted, count, levels[i].quantile));
}

/* truncate (min(r, U)) or mask (keep = [L ≤ r ≤ U]) and the masked-fraction metrics */
static void
dw_verl_mismatch_bounds (const DwContext *context, DwMetricList *list, const DwPlan *plan,
                         double *weights, double *keep)
{
  const bool mask_mode = plan->is_mode != DW_IS_TRUNCATE;
  const double upper = DW_ROUND (context, plan->is_upper);
  const double lower = DW_ROUND (context, plan->is_lower);
  const size_t cols = context->cols;
  double masked = 0, rows_rejected = 0;
  for (size_t row = 0; row < context->rows; row++)
    {
      double row_masked = 0;
      for (size_t col = 0; col < cols; col++)
        {
          const size_t index = row * cols + col;
          keep[index] = 1.0;
          if (mask_mode)
            keep[index] = (weights[index] >= lower && weights[index] <= upper) ? 1.0 : 0.0;
          else if (weights[index] > upper)
            weights[index] = upper;
          if (dw_context_valid (context, index))
            row_masked += (1.0 - keep[index]) * context->mask[index];
        }
      masked += row_masked;
      if (plan->is_level == DW_LEVEL_TOKEN)
        rows_rejected += DW_ROUND (context, row_masked) > 0;
      else
        rows_rejected += cols > 0 ? 1.0 - keep[row * cols] : 0.0;
    }
  if (!mask_mode)
    return;
  dw_metric_list_put (list, "rollout_is_masked_fraction", dw_context_mean (context, masked));
  dw_metric_list_put (list, "rollout_is_seq_masked_fraction",
                      rows_rejected / (double)context->rows);
}

/* v0.6.0 returns the weights only (zeroed outside the bounds and on vetoed rows; the trainer
 * keeps its mask, returned unchanged); 4424616d7 returns the weights and a modified mask */
static bool
dw_verl_mismatch_outputs (const DwContext *context, const DwPlan *plan,
                          DwVerlMismatchBuffers *buffers, DwCorrectionResult *result,
                          DwCorrectionError *error)
{
  const size_t count = context->rows * context->cols;
  for (size_t index = 0; index < count; index++)
    {
      if (!plan->returns_mask)
        buffers->weights[index]
          = DW_ROUND (context, buffers->weights[index] * buffers->keep[index]);
      buffers->weights[index] = DW_ROUND (context, buffers->weights[index] * context->mask[index]);
      buffers->keep[index] = context->mask[index] * buffers->keep[index];
    }
  if (!dw_correction_result_set_array (result, true, context->batch->lp_dtype, buffers->weights,
                                       count, error))
    return false;
  if (!plan->returns_mask)
    return dw_correction_result_set_array (result, false, context->batch->mask_dtype, context->mask,
                                           count, error);
  const DwDType mask_dtype
    = context->batch->mask_dtype == DW_DTYPE_F64 ? DW_DTYPE_F64 : DW_DTYPE_F32;
  return dw_correction_result_set_array (result, false, mask_dtype, buffers->keep, count, error);
}

bool
dw_verl_mismatch_run (const DwContext *context, const DwPlan *plan, DwCorrectionResult *result,
                      DwCorrectionError *error)
{
  const size_t rows = context->rows, count = rows * context->cols;
  DwMetricList list = { .prefix = "mismatch/" };
  if (plan->nothing)
    {
      /* threshold None: nothing computed, no weights, the mask unchanged */
      if (!dw_correction_result_set_array (result, false, context->batch->mask_dtype, context->mask,
                                           count, error))
        return false;
      return dw_metric_list_finish (result, &list, error);
    }
  DwVerlMismatchBuffers buffers = {
    .weights = dw_workspace_get (DW_WORKSPACE_W, count * sizeof (double)),
    .keep = dw_workspace_get (DW_WORKSPACE_KEEP, count * sizeof (double)),
    .row_log = dw_workspace_get (DW_WORKSPACE_SCRATCH, (count + 2 * rows + 1) * sizeof (double)),
  };
  if (!buffers.weights || !buffers.keep || !buffers.row_log)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  buffers.row_means = buffers.row_log + rows;
  buffers.sorted = buffers.row_means + rows;
  const DwLevel level = plan->is_level;
  if (level != DW_LEVEL_TOKEN)
    dw_context_row_log_ratio (context, level, buffers.row_log);
  dw_context_ratios (context, level, buffers.row_log, buffers.weights);
  dw_ratio_metrics_compute (context, &list, "rollout_is", buffers.weights,
                            level == DW_LEVEL_TOKEN ? NULL : buffers.row_log, plan->is_upper,
                            plan->is_lower, buffers.row_means, level == DW_LEVEL_GEOMETRIC);
  if (plan->mismatch_quantiles)
    dw_verl_mismatch_quantiles (context, &list, buffers.weights, buffers.sorted);
  dw_verl_mismatch_bounds (context, &list, plan, buffers.weights, buffers.keep);
  dw_verl_rs_veto (context, &list, plan, buffers.keep);
  bool ok = dw_verl_mismatch_outputs (context, plan, &buffers, result, error);
  dw_offpolicy_compute (context, &list, true);
  if (!ok)
    {
      free (list.m);
      return false;
    }
  return dw_metric_list_finish (result, &list, error);
}
