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
#include <stdlib.h>
#include <string.h>

/* Masked sums of the applied weights (v0.8.0+, §3.6) */
typedef struct
{
  double sum_applied, sum_clamped, sum_clamped_squared;
  double count_high, count_low, count_out_of_bounds;
  double max_applied, min_applied;
} DwVerlIsSums;

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

/* the masked sums of §3.6 over the valid tokens; per-row means of the applied and of the raw
 * weights into @applied_means / @raw_means [B] */
static void
dw_verl_is_applied_sums (const DwContext *context, const DwPlan *plan, const double *raw,
                         const double *applied, DwVerlIsSums *sums, double *applied_means,
                         double *raw_means)
{
  const double upper = DW_ROUND (context, plan->is_upper);
  const double lower = DW_ROUND (context, plan->is_lower);
  memset (sums, 0, sizeof *sums);
  sums->max_applied = -INFINITY;
  sums->min_applied = INFINITY;
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
          sums->count_out_of_bounds += (ratio < lower || ratio > upper) * weight;
          sums->max_applied = dw_torch_max (sums->max_applied, value);
          sums->min_applied = dw_torch_min (sums->min_applied, value);
        }
      applied_means[row] = dw_context_row_mean (context, row_applied, row);
      raw_means[row] = dw_context_row_mean (context, row_raw, row);
    }
}

/* compute_is_metrics of v0.8.0 / v0.9.0 (§3.6); false with ZeroDivisionError when every
 * applied weight is 0 (the ESS reciprocal, as Python raises it) */
static bool
dw_verl_is_applied_metrics (const DwContext *context, DwMetricList *list, const DwPlan *plan,
                            const double *raw, const double *applied, const double *row_log,
                            double *row_means, DwCorrectionError *error)
{
  double *raw_means = row_means + context->rows;
  DwVerlIsSums sums;
  dw_verl_is_applied_sums (context, plan, raw, applied, &sums, row_means, raw_means);
  const double upper = plan->is_upper, lower = plan->is_lower;
  dw_metric_list_put (list, "rollout_is_mean", dw_context_mean (context, sums.sum_applied));
  if (row_log)
    {
      /* sequence level: max / min / fractions from the log-sums over all rows, as before */
      DwRatioSums unused = { 0, 0, 0, 0, 0, 0, 0 };
      DwMetricList scratch = { .prefix = "" };
      dw_ratio_metrics_emit (context, &scratch, "x", &unused, row_log, upper, lower, row_means,
                             false);
      for (size_t i = 0; i < scratch.n; i++)
        if (strcmp (scratch.m[i].key, "x_max") == 0 || strcmp (scratch.m[i].key, "x_min") == 0
            || strcmp (scratch.m[i].key, "x_ratio_fraction_high") == 0
            || strcmp (scratch.m[i].key, "x_ratio_fraction_low") == 0)
          dw_metric_list_putf (list, scratch.m[i].value, "rollout_is%s", scratch.m[i].key + 1);
      free (scratch.m);
      if (scratch.oom)
        list->oom = true;
    }
  else
    {
      dw_metric_list_put (list, "rollout_is_max", sums.max_applied);
      dw_metric_list_put (list, "rollout_is_min", sums.min_applied);
      dw_metric_list_put (list, "rollout_is_ratio_fraction_high",
                          dw_context_mean (context, sums.count_high));
      dw_metric_list_put (list, "rollout_is_ratio_fraction_low",
                          dw_context_mean (context, sums.count_low));
    }
  const double clamped_mean = dw_context_mean (context, sums.sum_clamped);
  double std = 0.0;
  if (context->total > 1)
    {
      const double variance
        = DW_ROUND (context, dw_context_mean (context, sums.sum_clamped_squared)
                               - DW_ROUND (context, clamped_mean * clamped_mean));
      std = sqrt (fmax (variance, 0.0));
    }
  dw_metric_list_put (list, "rollout_is_std", std);
  const double denominator = DW_ROUND (context, clamped_mean + DW_MASKED_MEAN_EPS);
  const double normalized_square_mean
    = dw_context_mean (context, sums.sum_clamped_squared / (denominator * denominator));
  if (normalized_square_mean == 0.0)
    return dw_error_set (error, DW_ERROR_ZERO_DIVISION, "float division by zero");
  dw_metric_list_put (list, "rollout_is_eff_sample_size", 1.0 / normalized_square_mean);
  const size_t rows = context->rows;
  double sum = 0, squares = 0, high = 0, low = 0;
  double row_max = -INFINITY, row_min = INFINITY, deviation = -INFINITY;
  for (size_t row = 0; row < rows; row++)
    sum += row_means[row];
  const double mean = sum / (double)rows;
  const bool raw_fractions = plan->is_metrics == DW_IS_METRICS_APPLIED_RAW_SEQ;
  const double upper_dtype = DW_ROUND (context, upper), lower_dtype = DW_ROUND (context, lower);
  for (size_t row = 0; row < rows; row++)
    {
      const double value = row_means[row];
      const double fraction_value = raw_fractions ? raw_means[row] : value;
      squares += (value - mean) * (value - mean);
      row_max = fmax (row_max, value);
      row_min = fmin (row_min, value);
      deviation = fmax (deviation, fabs (value - 1.0));
      high += fraction_value > upper_dtype;
      low += fraction_value < lower_dtype;
    }
  dw_metric_list_put (list, "rollout_is_seq_mean", mean);
  dw_metric_list_put (list, "rollout_is_seq_std",
                      rows > 1 ? sqrt (squares / (double)(rows - 1)) : 0.0);
  dw_metric_list_put (list, "rollout_is_seq_max", row_max);
  dw_metric_list_put (list, "rollout_is_seq_min", row_min);
  dw_metric_list_put (list, "rollout_is_seq_max_deviation", deviation);
  dw_metric_list_put (list, "rollout_is_seq_fraction_high", high / (double)rows);
  dw_metric_list_put (list, "rollout_is_seq_fraction_low", low / (double)rows);
  if (plan->is_mode == DW_IS_ZERO_OUTSIDE)
    dw_metric_list_put (list, "rollout_is_oob_ratio",
                        dw_context_mean (context, sums.count_out_of_bounds));
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
      if (!dw_verl_is_applied_metrics (context, list, plan, raw, weights, token ? NULL : row_log,
                                       row_means, error))
        return false;
    }
  if (plan->batch_normalize)
    dw_verl_is_batch_normalize (context, list, plan, weights);
  return true;
}
