/* dw-offpolicy.c — the off-policy metrics: KL, K3 KL, perplexities, chi2 (§3.4)
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

void
dw_offpolicy_init (DwOffpolicySums *sums)
{
  memset (sums, 0, sizeof *sums);
  sums->difference_max = -INFINITY;
  sums->difference_min = INFINITY;
}

/* a row's share of the per-row metrics from its means (in the dtype), its Σℓ and the exps of
 * −training_mean, −rollout_mean and the difference (in the dtype) */
static void
dw_offpolicy_accumulate (const DwContext *context, DwOffpolicySums *sums, double training_mean,
                         double rollout_mean, double sum_log_ratio, const double exps[3])
{
  const double difference = DW_ROUND (context, rollout_mean - training_mean);
  const double clamped_sum
    = dw_torch_clamp (DW_ROUND (context, sum_log_ratio), -DW_SAFETY_BOUND, DW_SAFETY_BOUND);
  sums->training_ppl += exps[0];
  sums->training_log_ppl += -training_mean;
  sums->rollout_ppl += exps[1];
  sums->rollout_log_ppl += -rollout_mean;
  sums->difference += difference;
  sums->difference_abs += fabs (difference);
  sums->difference_max = fmax (sums->difference_max, difference);
  sums->difference_min = fmin (sums->difference_min, difference);
  sums->ppl_ratio += exps[2];
  sums->chi2_sequence += DW_ROUND (context, exp (2.0 * clamped_sum));
}

/* row @row's share of the per-row metrics from its masked sums of old, rollout and ℓ */
void
dw_offpolicy_add_row (const DwContext *context, DwOffpolicySums *sums, size_t row, double sum_old,
                      double sum_rollout, double sum_log_ratio)
{
  const double training_mean = dw_context_row_mean (context, sum_old, row);
  const double rollout_mean = dw_context_row_mean (context, sum_rollout, row);
  const double difference = DW_ROUND (context, rollout_mean - training_mean);
  const double exps[3] = { DW_ROUND (context, DW_EXP (context, -training_mean)),
                           DW_ROUND (context, DW_EXP (context, -rollout_mean)),
                           DW_ROUND (context, DW_EXP (context, difference)) };
  dw_offpolicy_accumulate (context, sums, training_mean, rollout_mean, sum_log_ratio, exps);
}

void
dw_offpolicy_add_rows (const DwContext *context, DwOffpolicySums *sums, const double *row_sums,
                       float *scratch)
{
  const size_t rows = context->rows;
  float *arguments = scratch, *results = scratch + 3 * rows;
  for (size_t row = 0; row < rows; row++)
    {
      /* the means are float32 values: negated and back they are exact */
      const double training_mean = dw_context_row_mean (context, row_sums[3 * row], row);
      const double rollout_mean = dw_context_row_mean (context, row_sums[3 * row + 1], row);
      arguments[3 * row] = (float)-training_mean;
      arguments[3 * row + 1] = (float)-rollout_mean;
      arguments[3 * row + 2] = (float)(rollout_mean - training_mean);
    }
  dw_correction_simd_expf_array (arguments, results, 3 * rows);
  for (size_t row = 0; row < rows; row++)
    {
      const double exps[3] = { results[3 * row], results[3 * row + 1], results[3 * row + 2] };
      dw_offpolicy_accumulate (context, sums, -(double)arguments[3 * row],
                               -(double)arguments[3 * row + 1], row_sums[3 * row + 2], exps);
    }
}

void
dw_offpolicy_emit (const DwContext *context, DwMetricList *list, const DwOffpolicySums *sums,
                   bool mismatch)
{
  const char *prefix = mismatch ? "mismatch_" : "";
  const double rows = (double)context->rows;
  dw_metric_list_putf (list, sums->training_ppl / rows, "%straining_ppl", prefix);
  dw_metric_list_putf (list, sums->training_log_ppl / rows, "%straining_log_ppl", prefix);
  dw_metric_list_putf (list, dw_context_mean (context, sums->kl), "%skl", prefix);
  dw_metric_list_putf (list, dw_context_mean (context, sums->k3_kl), "%sk3_kl", prefix);
  dw_metric_list_putf (list, sums->rollout_ppl / rows, "%srollout_ppl", prefix);
  dw_metric_list_putf (list, sums->rollout_log_ppl / rows, "%srollout_log_ppl", prefix);
  dw_metric_list_putf (list, sums->difference / rows, "%slog_ppl_diff", prefix);
  dw_metric_list_putf (list, sums->difference_abs / rows, "%slog_ppl_abs_diff", prefix);
  dw_metric_list_putf (list, sums->difference_max, "%slog_ppl_diff_max", prefix);
  dw_metric_list_putf (list, sums->difference_min, "%slog_ppl_diff_min", prefix);
  dw_metric_list_putf (list, sums->ppl_ratio / rows, "%sppl_ratio", prefix);
  if (mismatch)
    return;
  dw_metric_list_put (list, "chi2_token", dw_context_mean (context, sums->chi2_token) - 1.0);
  dw_metric_list_put (list, "chi2_seq", sums->chi2_sequence / rows - 1.0);
}

void
dw_offpolicy_compute (const DwContext *context, DwMetricList *list, bool mismatch)
{
  const DwBatch *batch = context->batch;
  DwOffpolicySums sums;
  dw_offpolicy_init (&sums);
  for (size_t row = 0; row < context->rows; row++)
    {
      double sum_old = 0, sum_rollout = 0, sum_log_ratio = 0;
      for (size_t col = 0; col < context->cols; col++)
        {
          const size_t index = row * context->cols + col;
          if (!dw_context_valid (context, index))
            continue;
          const double weight = context->mask[index];
          const double old = dw_context_log_prob (batch->old_log_prob, context->f32, index);
          const double rollout = dw_context_log_prob (batch->rollout_log_prob, context->f32, index);
          const double log_ratio = context->log_ratio[index];
          sum_old += old * weight;
          sum_rollout += rollout * weight;
          sum_log_ratio += log_ratio * weight;
          sums.kl += DW_ROUND (context, rollout - old) * weight;
          const double ratio = DW_ROUND (context, DW_EXP (context, log_ratio));
          sums.k3_kl += DW_ROUND (context, DW_ROUND (context, ratio - log_ratio) - 1.0) * weight;
          /* exp(SAFE(ℓ)) is exp(ℓ) inside the bounds: one exp per token */
          const double safe_ratio
            = (log_ratio >= -DW_SAFETY_BOUND && log_ratio <= DW_SAFETY_BOUND)
                ? ratio
                : DW_ROUND (context, DW_EXP (context, dw_torch_clamp (log_ratio, -DW_SAFETY_BOUND,
                                                                      DW_SAFETY_BOUND)));
          sums.chi2_token += DW_ROUND (context, safe_ratio * safe_ratio) * weight;
        }
      dw_offpolicy_add_row (context, &sums, row, sum_old, sum_rollout, sum_log_ratio);
    }
  dw_offpolicy_emit (context, list, &sums, mismatch);
}
