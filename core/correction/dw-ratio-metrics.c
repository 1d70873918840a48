/* dw-ratio-metrics.c — verl's IS weight metrics (compute_is_metrics) and the legacy RS metrics
 * that reuse its formulas (§3.3, §3.6, §5.2, §6.2)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Arithmetic follows torch (docs/CORRECTION.md §2): every elementwise result is
 * rounded to the input dtype, reductions accumulate in double.
 */
#include "dw-correction-private.h"

#include <math.h>

void
dw_ratio_metrics_compute (const DwContext *context, DwMetricList *list, const char *prefix,
                          const double *weights, const double *row_log, double upper, double lower,
                          double *row_means, bool geometric_token_weighted)
{
  const double upper_dtype = DW_ROUND (context, upper), lower_dtype = DW_ROUND (context, lower);
  DwRatioSums sums = { 0, 0, 0, 0, 0, -INFINITY, INFINITY };
  for (size_t row = 0; row < context->rows; row++)
    {
      double row_sum = 0;
      for (size_t col = 0; col < context->cols; col++)
        {
          const size_t index = row * context->cols + col;
          if (!dw_context_valid (context, index))
            continue;
          const double weight = context->mask[index], value = weights[index];
          const double clamped = dw_torch_clamp (value, lower_dtype, upper_dtype);
          sums.sum += value * weight;
          row_sum += value * weight;
          sums.count_high += (value > upper_dtype) * weight;
          sums.count_low += (value < lower_dtype) * weight;
          sums.max = dw_torch_max (sums.max, value);
          sums.min = dw_torch_min (sums.min, value);
          sums.sum_clamped += clamped * weight;
          sums.sum_clamped_squared += DW_ROUND (context, clamped * clamped) * weight;
        }
      row_means[row] = dw_context_row_mean (context, row_sum, row);
    }
  dw_ratio_metrics_emit (context, list, prefix, &sums, row_log, upper, lower, row_means,
                         geometric_token_weighted);
}

void
dw_ratio_metrics_emit_extremes (const DwContext *context, DwMetricList *list, const char *prefix,
                                const DwRatioSums *sums, const double *row_log, double upper,
                                double lower, bool geometric_token_weighted)
{
  if (row_log == NULL)
    {
      dw_metric_list_putf (list, sums->max, "%s_max", prefix);
      dw_metric_list_putf (list, sums->min, "%s_min", prefix);
      dw_metric_list_putf (list, dw_context_mean (context, sums->count_high),
                           "%s_ratio_fraction_high", prefix);
      dw_metric_list_putf (list, dw_context_mean (context, sums->count_low),
                           "%s_ratio_fraction_low", prefix);
      return;
    }
  /* sequence levels: the unclamped log values of every row, empty rows included (§3.3) */
  const size_t rows = context->rows;
  double log_max = -INFINITY, log_min = INFINITY, high = 0, low = 0;
  const double log_upper = (float)log ((float)upper), log_lower = (float)log ((float)lower);
  for (size_t row = 0; row < rows; row++)
    {
      const double weight = geometric_token_weighted ? context->row_count[row] : 1.0;
      log_max = fmax (log_max, row_log[row]);
      log_min = fmin (log_min, row_log[row]);
      high += (row_log[row] > log_upper) * weight;
      low += (row_log[row] < log_lower) * weight;
    }
  dw_metric_list_putf (list, DW_ROUND (context, DW_EXP (context, fmin (log_max, DW_SAFETY_BOUND))),
                       "%s_max", prefix);
  dw_metric_list_putf (list, DW_ROUND (context, DW_EXP (context, log_min)), "%s_min", prefix);
  dw_metric_list_putf (
    list, geometric_token_weighted ? dw_context_mean (context, high) : high / (double)rows,
    "%s_ratio_fraction_high", prefix);
  dw_metric_list_putf (
    list, geometric_token_weighted ? dw_context_mean (context, low) : low / (double)rows,
    "%s_ratio_fraction_low", prefix);
}

double
dw_ratio_metrics_std (const DwContext *context, double sum_clamped, double sum_squares)
{
  if (!(context->total > 1))
    return 0.0;
  const double mean = dw_context_mean (context, sum_clamped);
  const double variance
    = DW_ROUND (context, dw_context_mean (context, sum_squares) - DW_ROUND (context, mean * mean));
  return sqrt (fmax (variance, 0.0));
}

double
dw_ratio_metrics_normalized_square_mean (const DwContext *context, double sum_clamped,
                                         double sum_squares)
{
  const double denominator
    = DW_ROUND (context, dw_context_mean (context, sum_clamped) + DW_MASKED_MEAN_EPS);
  return dw_context_mean (context, sum_squares / (denominator * denominator));
}

void
dw_ratio_metrics_emit_rows (const DwContext *context, DwMetricList *list, const char *prefix,
                            const double *row_means, const double *fraction_means, double upper,
                            double lower)
{
  const size_t rows = context->rows;
  const double upper_dtype = DW_ROUND (context, upper), lower_dtype = DW_ROUND (context, lower);
  double sum = 0, squares = 0, row_max = -INFINITY, row_min = INFINITY, deviation = -INFINITY;
  double high = 0, low = 0;
  for (size_t row = 0; row < rows; row++)
    sum += row_means[row];
  const double mean = sum / (double)rows;
  for (size_t row = 0; row < rows; row++)
    {
      const double value = row_means[row];
      squares += (value - mean) * (value - mean);
      row_max = fmax (row_max, value);
      row_min = fmin (row_min, value);
      deviation = fmax (deviation, fabs (value - 1.0));
      high += fraction_means[row] > upper_dtype;
      low += fraction_means[row] < lower_dtype;
    }
  dw_metric_list_putf (list, mean, "%s_seq_mean", prefix);
  dw_metric_list_putf (list, rows > 1 ? sqrt (squares / (double)(rows - 1)) : 0.0, "%s_seq_std",
                       prefix);
  dw_metric_list_putf (list, row_max, "%s_seq_max", prefix);
  dw_metric_list_putf (list, row_min, "%s_seq_min", prefix);
  dw_metric_list_putf (list, deviation, "%s_seq_max_deviation", prefix);
  dw_metric_list_putf (list, high / (double)rows, "%s_seq_fraction_high", prefix);
  dw_metric_list_putf (list, low / (double)rows, "%s_seq_fraction_low", prefix);
}

void
dw_ratio_metrics_emit (const DwContext *context, DwMetricList *list, const char *prefix,
                       const DwRatioSums *sums, const double *row_log, double upper, double lower,
                       const double *row_means, bool geometric_token_weighted)
{
  dw_metric_list_putf (list, dw_context_mean (context, sums->sum), "%s_mean", prefix);
  dw_ratio_metrics_emit_extremes (context, list, prefix, sums, row_log, upper, lower,
                                  geometric_token_weighted);
  dw_metric_list_putf (list,
                       dw_ratio_metrics_std (context, sums->sum_clamped, sums->sum_clamped_squared),
                       "%s_std", prefix);
  dw_metric_list_putf (list,
                       1.0
                         / dw_ratio_metrics_normalized_square_mean (context, sums->sum_clamped,
                                                                    sums->sum_clamped_squared),
                       "%s_eff_sample_size", prefix);
  dw_ratio_metrics_emit_rows (context, list, prefix, row_means, row_means, upper, lower);
}
