/* dw-verl-is.c — verl's IS weights: truncation or IcePop, the IS metrics of each release, and
 * batch normalisation (§3.1, §3.2, §3.3, §3.6)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Arithmetic follows torch (docs/CORRECTION.md §2): every elementwise result is
 * rounded to the input dtype, reductions accumulate in double.
 */
#include "dw-correction-private.h"

#include <math.h>
#include <string.h>

/* rollout_is_weights of v0.8.0+: TIS min(r, U) or IcePop r·[L ≤ r ≤ U] (§3.5) */
static double
dw_verl_is_apply (const DwContext *context, const DwPlan *plan, double raw)
{
  const double upper = DW_ROUND (context, plan->is_upper);
  if (plan->is_mode == DW_IS_ZERO_OUTSIDE)
    {
      const double lower = DW_ROUND (context, plan->is_lower);
      return raw >= lower && raw <= upper ? raw : 0.0;
    }
  return raw > upper ? upper : raw; /* NaN stays NaN */
}

void
dw_verl_is_sums_init (DwVerlIsSums *sums)
{
  memset (sums, 0, sizeof *sums);
  sums->max_applied = -INFINITY;
  sums->min_applied = INFINITY;
}

/* the masked sums of §3.6 over the valid tokens; per-row means of the applied and of the raw
 * weights into @applied_means / @raw_means [B] */
static void
dw_verl_is_applied_sums (const DwContext *context, const DwPlan *plan, const double *raw,
                         const double *applied, DwVerlIsSums *sums, double *applied_means,
                         double *raw_means)
{
  const double upper = DW_ROUND (context, plan->is_upper);
  const double lower = DW_ROUND (context, plan->is_lower);
  dw_verl_is_sums_init (sums);
  for (size_t row = 0; row < context->rows; row++)
    {
      double row_applied = 0, row_raw = 0;
      for (size_t col = 0; col < context->cols; col++)
        {
          const size_t index = row * context->cols + col;
          if (!dw_context_valid (context, index))
            continue;
          const double weight = context->mask[index];
          const double value = applied[index], ratio = raw[index];
          const double clamped = dw_torch_clamp (value, 0.0, upper);
          row_applied += value * weight;
          row_raw += ratio * weight;
          sums->sum_applied += value * weight;
          sums->sum_clamped += clamped * weight;
          sums->sum_clamped_squared += DW_ROUND (context, clamped * clamped) * weight;
          sums->count_high += (ratio > upper) * weight;
          sums->count_low += (ratio < lower) * weight;
          sums->max_applied = dw_torch_max (sums->max_applied, value);
          sums->min_applied = dw_torch_min (sums->min_applied, value);
        }
      applied_means[row] = dw_context_row_mean (context, row_applied, row);
      raw_means[row] = dw_context_row_mean (context, row_raw, row);
    }
}

bool
dw_verl_is_emit_applied (const DwContext *context, DwMetricList *list, const DwPlan *plan,
                         const DwVerlIsSums *sums, const double *row_log,
                         const double *applied_means, const double *raw_means,
                         DwCorrectionError *error)
{
  const double upper = plan->is_upper, lower = plan->is_lower;
  const double normalized_square_mean = dw_ratio_metrics_normalized_square_mean (
    context, sums->sum_clamped, sums->sum_clamped_squared);
  if (normalized_square_mean == 0.0)
    return dw_error_set (error, DW_ERROR_ZERO_DIVISION, "float division by zero");
  /* token level: max / min of the applied weights, fractions of the raw ones */
  const DwRatioSums extremes
    = { 0, sums->count_high, sums->count_low, 0, 0, sums->max_applied, sums->min_applied };
  dw_metric_list_put (list, "rollout_is_mean", dw_context_mean (context, sums->sum_applied));
  dw_ratio_metrics_emit_extremes (context, list, "rollout_is", &extremes, row_log, upper, lower,
                                  false);
  dw_metric_list_put (list, "rollout_is_std",
                      dw_ratio_metrics_std (context, sums->sum_clamped, sums->sum_clamped_squared));
  dw_metric_list_put (list, "rollout_is_eff_sample_size", 1.0 / normalized_square_mean);
  const bool raw_fractions = plan->is_metrics == DW_IS_METRICS_APPLIED_RAW_SEQ;
  dw_ratio_metrics_emit_rows (context, list, "rollout_is", applied_means,
                              raw_fractions ? raw_means : applied_means, upper, lower);
  if (plan->is_mode == DW_IS_ZERO_OUTSIDE)
    {
      /* L ≤ U, so "below L" and "above U" never overlap and NaN is neither */
      dw_metric_list_put (list, "rollout_is_oob_ratio",
                          dw_context_mean (context, sums->count_high + sums->count_low));
    }
  return true;
}

/* batch normalisation of the applied weights (§3.2) */
static void
dw_verl_is_batch_normalize (const DwContext *context, DwMetricList *list, const DwPlan *plan,
                            double *weights)
{
  const size_t count = context->rows * context->cols;
  double mean;
  if (plan->is_level == DW_LEVEL_TOKEN)
    {
      double sum = 0;
      for (size_t index = 0; index < count; index++)
        if (dw_context_valid (context, index))
          sum += weights[index] * context->mask[index];
      mean = dw_context_mean (context, sum);
    }
  else
    {
      double sum = 0, n_rows = 0;
      for (size_t row = 0; row < context->rows; row++)
        {
          double row_sum = 0;
          for (size_t col = 0; col < context->cols; col++)
            {
              const size_t index = row * context->cols + col;
              if (dw_context_valid (context, index))
                row_sum += weights[index] * context->mask[index];
            }
          if (plan->bn_rows == DW_BN_ROWS_ALL || context->row_count[row] > 0)
            {
              sum += dw_context_row_mean (context, row_sum, row);
              n_rows += 1;
            }
        }
      mean = sum / fmax (n_rows, 1e-8);
    }
  if (mean > 1e-8)
    {
      const double divisor = DW_ROUND (context, mean);
      for (size_t index = 0; index < count; index++)
        weights[index] = DW_ROUND (context, weights[index] / divisor);
      dw_metric_list_put (list, "rollout_is_batch_norm_factor", mean);
    }
  else
    dw_metric_list_put (list, "rollout_is_batch_norm_factor", 1.0);
}

bool
dw_verl_is_weights (const DwContext *context, DwMetricList *list, const DwPlan *plan,
                    double *weights, double *row_log, double *row_means, DwCorrectionError *error)
{
  const size_t count = context->rows * context->cols;
  const bool token = plan->is_level == DW_LEVEL_TOKEN;
  if (!token)
    dw_context_row_log_ratio (context, plan->is_level, row_log);
  dw_context_ratios (context, plan->is_level, row_log, weights);
  for (size_t index = 0; index < count; index++)
    weights[index] = DW_ROUND (context, weights[index] * context->mask[index]); /* NaN stays */
  if (plan->is_metrics == DW_IS_METRICS_RAW)
    {
      /* ≤ v0.7.1: metrics of the raw weights, then truncation */
      dw_ratio_metrics_compute (context, list, "rollout_is", weights, token ? NULL : row_log,
                                plan->is_upper, 1.0 / plan->is_upper, row_means, false);
      for (size_t index = 0; index < count; index++)
        weights[index] = dw_verl_is_apply (context, plan, weights[index]);
    }
  else
    {
      double *raw = dw_workspace_get (DW_WORKSPACE_RAW, count * sizeof (double));
      if (!raw)
        return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
      memcpy (raw, weights, count * sizeof (double));
      for (size_t index = 0; index < count; index++)
        weights[index] = dw_verl_is_apply (context, plan, raw[index]);
      DwVerlIsSums sums;
      double *raw_means = row_means + context->rows;
      dw_verl_is_applied_sums (context, plan, raw, weights, &sums, row_means, raw_means);
      if (!dw_verl_is_emit_applied (context, list, plan, &sums, token ? NULL : row_log, row_means,
                                    raw_means, error))
        return false;
    }
  if (plan->batch_normalize)
    dw_verl_is_batch_normalize (context, list, plan, weights);
  return true;
}
