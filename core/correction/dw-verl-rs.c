/* dw-verl-rs.c — verl's k-option rejection sampling and its metrics (§4.3, §4.4)
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

/* the 14/15 keys of one option from its masked sums and the per-row values @row_values (§4.4) */
void
dw_verl_rs_emit_option (const DwContext *context, DwMetricList *list, const DwRsBound *bound,
                        const DwRsSums *sums, const double *row_values, size_t n_valid_rows)
{
  const bool k1 = dw_rs_option_k (bound->option) == 1;
  const bool token_option = dw_rs_option_agg (bound->option) == DW_RS_AGG_TOKEN;
  const double upper = DW_ROUND (context, bound->log_upper);
  const double lower = k1 ? DW_ROUND (context, bound->log_lower) : 0.0;

  /* statistics of the row values over valid rows */
  double sum = 0, n_rows = 0, largest = -INFINITY, smallest = INFINITY, deviation = -INFINITY;
  double high = 0, low = 0, squares = 0;
  for (size_t row = 0; row < context->rows; row++)
    if (context->row_count[row] > 0)
      {
        const double value = row_values[row];
        sum += value;
        n_rows += 1;
        largest = dw_torch_max (largest, value);
        smallest = dw_torch_min (smallest, value);
        deviation = dw_torch_max (deviation, fabs (value));
        high += value > upper;
        low += value < lower;
      }
  const double mean = n_rows > 0 ? sum / n_rows : 0.0;
  for (size_t row = 0; row < context->rows; row++)
    if (context->row_count[row] > 0)
      squares += (row_values[row] - mean) * (row_values[row] - mean);

  char prefix[64];
  snprintf (prefix, sizeof prefix, "rollout_rs_%s", dw_rs_option_name (bound->option));
  dw_metric_list_putf (list, dw_context_mean (context, sums->sum), "%s_mean", prefix);
  if (!token_option && n_rows > 0)
    {
      dw_metric_list_putf (list, largest, "%s_max", prefix);
      dw_metric_list_putf (list, smallest, "%s_min", prefix);
      dw_metric_list_putf (list, high / n_rows, "%s_fraction_high", prefix);
      dw_metric_list_putf (list, k1 ? low / n_rows : 0.0, "%s_fraction_low", prefix);
    }
  else
    {
      dw_metric_list_putf (list, sums->max, "%s_max", prefix);
      dw_metric_list_putf (list, sums->min, "%s_min", prefix);
      dw_metric_list_putf (list, dw_context_mean (context, sums->count_high), "%s_fraction_high",
                           prefix);
      dw_metric_list_putf (list, k1 ? dw_context_mean (context, sums->count_low) : 0.0,
                           "%s_fraction_low", prefix);
    }
  dw_metric_list_putf (list,
                       dw_ratio_metrics_std (context, sums->sum_clamped, sums->sum_clamped_squared),
                       "%s_std", prefix);
  dw_metric_list_putf (list, mean, "%s_seq_mean", prefix);
  dw_metric_list_putf (list, n_rows > 1 ? sqrt (squares / (n_rows - 1)) : 0.0, "%s_seq_std",
                       prefix);
  dw_metric_list_putf (list, n_rows > 0 ? largest : 0.0, "%s_seq_max", prefix);
  dw_metric_list_putf (list, n_rows > 0 ? smallest : 0.0, "%s_seq_min", prefix);
  dw_metric_list_putf (list, n_rows > 0 ? deviation : 0.0, "%s_seq_max_deviation", prefix);
  dw_metric_list_putf (list, n_rows > 0 ? high / n_rows : 0.0, "%s_seq_fraction_high", prefix);
  if (k1)
    dw_metric_list_putf (list, n_rows > 0 ? low / n_rows : 0.0, "%s_seq_fraction_low", prefix);
  dw_metric_list_putf (list, dw_context_mean (context, sums->masked), "%s_masked_fraction", prefix);
  dw_metric_list_putf (list, n_valid_rows > 0 ? sums->rows_masked / (double)n_valid_rows : 0.0,
                       "%s_seq_masked_fraction", prefix);
}

/* the statistic k1, k2 or k3 of SAFE(ℓ) per token into @statistics [B*T] (§4.3) */
static void
dw_verl_rs_statistics (const DwContext *context, int k, double *statistics)
{
  for (size_t index = 0; index < context->rows * context->cols; index++)
    {
      const double clamped
        = dw_torch_clamp (context->log_ratio[index], -DW_SAFETY_BOUND, DW_SAFETY_BOUND);
      if (k == 1)
        statistics[index] = -clamped;
      else if (k == 2)
        statistics[index] = DW_ROUND (context, 0.5 * DW_ROUND (context, clamped * clamped));
      else
        statistics[index] = DW_ROUND (
          context,
          DW_ROUND (context, DW_ROUND (context, DW_EXP (context, clamped)) - 1.0) - clamped);
    }
}

/* the row value of an option: MMEAN (token options, for their seq_* keys, and seq_mean), MSUM
 * or the max over valid tokens (0 for an empty row) */
static double
dw_verl_rs_row_value (const DwContext *context, DwRsAgg aggregation, const double *statistics,
                      size_t row)
{
  double sum = 0, largest = -INFINITY;
  bool any_valid = false;
  for (size_t col = 0; col < context->cols; col++)
    {
      const size_t index = row * context->cols + col;
      if (!dw_context_valid (context, index))
        continue;
      any_valid = true;
      sum += statistics[index] * context->mask[index];
      largest = dw_torch_max (largest, statistics[index]);
    }
  if (aggregation == DW_RS_AGG_TOKEN || aggregation == DW_RS_AGG_MEAN)
    return dw_context_row_mean (context, sum, row);
  if (aggregation == DW_RS_AGG_SUM)
    return DW_ROUND (context, sum);
  return any_valid ? largest : 0.0;
}

/* one option: its decisions into @keep, its sums and row values */
static void
dw_verl_rs_option (const DwContext *context, const DwRsBound *bound, const double *statistics,
                   double *keep, DwRsSums *sums, double *row_values)
{
  const bool k1 = dw_rs_option_k (bound->option) == 1;
  const DwRsAgg aggregation = dw_rs_option_agg (bound->option);
  const double upper = DW_ROUND (context, bound->log_upper);
  const double lower = k1 ? DW_ROUND (context, bound->log_lower) : 0.0;
  *sums = (DwRsSums){ 0, 0, 0, 0, 0, -INFINITY, INFINITY, 0, 0 };
  for (size_t row = 0; row < context->rows; row++)
    {
      row_values[row] = dw_verl_rs_row_value (context, aggregation, statistics, row);
      const double row_value = row_values[row];
      const double row_kept
        = k1 ? (row_value <= upper && row_value >= lower) : (row_value <= upper);
      bool row_rejected = false;
      for (size_t col = 0; col < context->cols; col++)
        {
          const size_t index = row * context->cols + col;
          const double statistic = statistics[index];
          const double kept = aggregation != DW_RS_AGG_TOKEN ? row_kept
                              : k1 ? (statistic <= upper && statistic >= lower)
                                   : (statistic <= upper);
          keep[index] *= kept;
          if (!dw_context_valid (context, index))
            continue;
          const double weight = context->mask[index];
          const double value = aggregation == DW_RS_AGG_TOKEN ? statistic : row_value;
          const double clamped = dw_torch_clamp (value, lower, upper);
          sums->sum += value * weight;
          if (aggregation == DW_RS_AGG_TOKEN)
            {
              sums->max = dw_torch_max (sums->max, value);
              sums->min = dw_torch_min (sums->min, value);
              sums->count_high += (value > upper) * weight;
              sums->count_low += (value < lower) * weight;
            }
          sums->sum_clamped += clamped * weight;
          sums->sum_clamped_squared += DW_ROUND (context, clamped * clamped) * weight;
          sums->masked += (1.0 - kept) * weight;
          row_rejected |= kept == 0;
        }
      if (context->row_count[row] > 0 && row_rejected)
        sums->rows_masked += 1;
    }
}

void
dw_verl_rs_k_options (const DwContext *context, DwMetricList *list, const DwRsParsed *parsed,
                      double *keep, double *scratch)
{
  const size_t rows = context->rows, cols = context->cols;
  double *statistics = scratch;               /* [B*T] */
  double *row_values = scratch + rows * cols; /* [B] */
  size_t n_valid_rows = 0;
  for (size_t row = 0; row < rows; row++)
    n_valid_rows += context->row_count[row] > 0;
  for (size_t option = 0; option < parsed->n; option++)
    {
      const DwRsBound *bound = &parsed->bounds[option];
      DwRsSums sums;
      dw_verl_rs_statistics (context, dw_rs_option_k (bound->option), statistics);
      dw_verl_rs_option (context, bound, statistics, keep, &sums, row_values);
      dw_verl_rs_emit_option (context, list, bound, &sums, row_values, n_valid_rows);
    }

  /* overall: valid tokens rejected by any option, rows with one (over all B rows) */
  double masked = 0, rows_rejected = 0;
  for (size_t row = 0; row < rows; row++)
    {
      bool rejected = false;
      for (size_t col = 0; col < cols; col++)
        {
          const size_t index = row * cols + col;
          if (!dw_context_valid (context, index))
            continue;
          masked += (1.0 - keep[index]) * context->mask[index];
          rejected |= !(keep[index] > 0.5);
        }
      rows_rejected += rejected;
    }
  dw_metric_list_put (list, "rollout_rs_masked_fraction", dw_context_mean (context, masked));
  dw_metric_list_put (list, "rollout_rs_seq_masked_fraction", rows_rejected / (double)rows);
}

/* rows with a token whose raw log-ratio is below log(V) are zeroed in @keep (§5.3, §6.1); the two
 * veto keys are emitted (as 0 when the veto is off) */
void
dw_verl_rs_veto (const DwContext *context, DwMetricList *list, const DwPlan *plan, double *keep)
{
  double vetoed = 0, catastrophic = 0;
  if (plan->veto_on)
    {
      const double log_veto = (float)log ((float)plan->veto);
      for (size_t row = 0; row < context->rows; row++)
        {
          bool has_catastrophic = false;
          for (size_t col = 0; col < context->cols; col++)
            {
              const size_t index = row * context->cols + col;
              if (dw_context_valid (context, index) && context->log_ratio[index] < log_veto)
                {
                  has_catastrophic = true;
                  catastrophic += context->mask[index];
                }
            }
          vetoed += has_catastrophic;
          if (has_catastrophic)
            for (size_t col = 0; col < context->cols; col++)
              keep[row * context->cols + col] = 0.0;
        }
    }
  dw_metric_list_put (list, "rollout_is_veto_fraction", vetoed / (double)context->rows);
  dw_metric_list_put (list, "rollout_is_catastrophic_token_fraction",
                      dw_context_mean (context, catastrophic));
}
