/* dw-slime-mis.c — slime mis.py compute_mis_weights: per-sample tensors, averaged over samples
 * (§7.1)
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

enum
{
  DW_SLIME_MIS_TRAINING_LOG_PPL,
  DW_SLIME_MIS_TRAINING_PPL,
  DW_SLIME_MIS_ROLLOUT_LOG_PPL,
  DW_SLIME_MIS_ROLLOUT_PPL,
  DW_SLIME_MIS_KL,
  DW_SLIME_MIS_K3_KL,
  DW_SLIME_MIS_LOG_PPL_DIFF,
  DW_SLIME_MIS_LOG_PPL_ABS_DIFF,
  DW_SLIME_MIS_PPL_RATIO,
  DW_SLIME_MIS_CHI2_TOKEN,
  DW_SLIME_MIS_CHI2_SEQ,
  DW_SLIME_MIS_TIS_BEFORE,
  DW_SLIME_MIS_TIS_TRUNC,
  DW_SLIME_MIS_TIS_CLIP_LOW,
  DW_SLIME_MIS_TIS_CLIP_HIGH,
  DW_SLIME_MIS_TIS_MASK_LOW,
  DW_SLIME_MIS_TIS_MASK_HIGH,
  DW_SLIME_MIS_TIS_AFTER,
  DW_SLIME_MIS_RS_LOW,
  DW_SLIME_MIS_RS_HIGH,
  DW_SLIME_MIS_RS_CAT_TOKEN,
  DW_SLIME_MIS_RS_CAT_SEQ,
  DW_SLIME_MIS_AFTER_TIS_RS,
  DW_SLIME_MIS_BN,
  DW_SLIME_MIS_FINAL_MEAN,
  DW_SLIME_MIS_FINAL_MIN,
  DW_SLIME_MIS_FINAL_MAX,
  DW_SLIME_MIS_N
};

static const char *const dw_slime_mis_names[DW_SLIME_MIS_N] = {
  "training_log_ppl",
  "training_ppl",
  "rollout_log_ppl",
  "rollout_ppl",
  "kl",
  "k3_kl",
  "log_ppl_diff",
  "log_ppl_abs_diff",
  "ppl_ratio",
  "chi2_token",
  "chi2_seq",
  "tis_weight_before_bound",
  "tis_truncate_fraction",
  "tis_clip_fraction_low",
  "tis_clip_fraction_high",
  "tis_mask_fraction_low",
  "tis_mask_fraction_high",
  "tis_weight_after_bound",
  "rs_mask_fraction_low",
  "rs_mask_fraction_high",
  "rs_catastrophic_token_fraction",
  "rs_catastrophic_seq_fraction",
  "is_ratio_mean_after_tis_rs",
  "batch_norm_factor",
  "is_ratio_mean_final",
  "is_ratio_min_final",
  "is_ratio_max_final",
};

/* the metric sums over samples (each a per-sample mean), and which keys the run produced */
typedef struct
{
  double totals[DW_SLIME_MIS_N];
  bool used[DW_SLIME_MIS_N];
} DwSlimeMisSums;

/* one sample (row) and its buffers [T] */
typedef struct
{
  const double *mask; /* the loss mask */
  const double *log_ratio;
  double *weights;   /* into the result's weights */
  double *loss_mask; /* into the result's modified mask */
  double *values;    /* scratch: the per-token tensor being reduced */
  double *rs_ratios; /* scratch */
  double count;      /* Σ m */
  double log_ratio_sum;
} DwSlimeMisSample;

static void
dw_slime_mis_add (DwSlimeMisSums *sums, int key, double value)
{
  sums->totals[key] += value;
  sums->used[key] = true;
}

/* slime's per-sample reduction of a per-token tensor @values (NULL: the constant @constant):
 * Σ x·m / max(Σ m, 1), with no NaN guard */
static double
dw_slime_mis_sample_mean (const double *mask, size_t cols, const double *values, double constant)
{
  double sum = 0, count = 0;
  for (size_t col = 0; col < cols; col++)
    {
      sum += (values ? values[col] : constant) * mask[col];
      count += mask[col];
    }
  return sum / fmax (count, 1.0);
}

/* the log-ratio a level uses at token @col: ℓ, the sample's sum, or its mean with max(n, 1) */
static double
dw_slime_mis_level_log_ratio (const DwSlimeMisSample *sample, DwLevel level, size_t col)
{
  if (level == DW_LEVEL_TOKEN)
    return sample->log_ratio[col];
  if (level == DW_LEVEL_SEQUENCE)
    return sample->log_ratio_sum;
  return sample->log_ratio_sum / fmax (sample->count, 1.0);
}

/* the mismatch metrics, computed for every sample, also with use_tis false (§7.1) */
static void
dw_slime_mis_mismatch (const DwContext *context, DwSlimeMisSums *sums, DwSlimeMisSample *sample,
                       size_t row)
{
  const size_t cols = context->cols;
  const double *mask = sample->mask;
  double *values = sample->values;
  double old_sum = 0, rollout_sum = 0;
  sample->count = 0;
  sample->log_ratio_sum = 0;
  for (size_t col = 0; col < cols; col++)
    {
      const size_t index = row * cols + col;
      old_sum
        += dw_context_log_prob (context->batch->old_log_prob, context->f32, index) * mask[col];
      rollout_sum
        += dw_context_log_prob (context->batch->rollout_log_prob, context->f32, index) * mask[col];
      sample->count += mask[col];
      sample->log_ratio_sum += sample->log_ratio[col] * mask[col];
    }
  const double training_mean = old_sum / fmax (sample->count, 1.0);
  const double rollout_mean = rollout_sum / fmax (sample->count, 1.0);
  const double difference = rollout_mean - training_mean;
  dw_slime_mis_add (sums, DW_SLIME_MIS_TRAINING_LOG_PPL,
                    dw_slime_mis_sample_mean (mask, cols, NULL, -training_mean));
  dw_slime_mis_add (sums, DW_SLIME_MIS_TRAINING_PPL,
                    dw_slime_mis_sample_mean (mask, cols, NULL, exp (-training_mean)));
  dw_slime_mis_add (sums, DW_SLIME_MIS_ROLLOUT_LOG_PPL,
                    dw_slime_mis_sample_mean (mask, cols, NULL, -rollout_mean));
  dw_slime_mis_add (sums, DW_SLIME_MIS_ROLLOUT_PPL,
                    dw_slime_mis_sample_mean (mask, cols, NULL, exp (-rollout_mean)));

  for (size_t col = 0; col < cols; col++)
    values[col] = -sample->log_ratio[col];
  dw_slime_mis_add (sums, DW_SLIME_MIS_KL, dw_slime_mis_sample_mean (mask, cols, values, 0));
  for (size_t col = 0; col < cols; col++)
    {
      const double log_ratio = sample->log_ratio[col];
      values[col] = DW_ROUND (
        context,
        DW_ROUND (context, DW_ROUND (context, DW_EXP (context, log_ratio)) - log_ratio) - 1.0);
    }
  dw_slime_mis_add (sums, DW_SLIME_MIS_K3_KL, dw_slime_mis_sample_mean (mask, cols, values, 0));
  dw_slime_mis_add (sums, DW_SLIME_MIS_LOG_PPL_DIFF,
                    dw_slime_mis_sample_mean (mask, cols, NULL, difference));
  dw_slime_mis_add (sums, DW_SLIME_MIS_LOG_PPL_ABS_DIFF,
                    dw_slime_mis_sample_mean (mask, cols, NULL, fabs (difference)));
  dw_slime_mis_add (sums, DW_SLIME_MIS_PPL_RATIO,
                    dw_slime_mis_sample_mean (mask, cols, NULL, exp (difference)));

  for (size_t col = 0; col < cols; col++)
    {
      const double ratio
        = exp (dw_torch_clamp (sample->log_ratio[col], -DW_SAFETY_BOUND, DW_SAFETY_BOUND));
      values[col] = ratio * ratio;
    }
  const double chi2_token = dw_slime_mis_sample_mean (mask, cols, values, 0) - 1.0;
  const double chi2_sequence
    = exp (2 * dw_torch_clamp (sample->log_ratio_sum, -DW_SAFETY_BOUND, DW_SAFETY_BOUND)) - 1.0;
  dw_slime_mis_add (sums, DW_SLIME_MIS_CHI2_TOKEN,
                    dw_slime_mis_sample_mean (mask, cols, NULL, chi2_token));
  dw_slime_mis_add (sums, DW_SLIME_MIS_CHI2_SEQ,
                    dw_slime_mis_sample_mean (mask, cols, NULL, chi2_sequence));
}

/* the fraction of tokens whose weight is below (@below) or above the bound */
static double
dw_slime_mis_fraction (const DwSlimeMisSample *sample, size_t cols, const double *ratios,
                       double bound, bool below)
{
  for (size_t col = 0; col < cols; col++)
    sample->values[col] = below ? ratios[col] < bound : ratios[col] > bound;
  return dw_slime_mis_sample_mean (sample->mask, cols, sample->values, 0);
}

/* IS weights of the sample and the mode: truncate, clip or mask (§7.1) */
static void
dw_slime_mis_importance (const DwContext *context, const DwPlan *plan, DwSlimeMisSums *sums,
                         DwSlimeMisSample *sample)
{
  const size_t cols = context->cols;
  const double *mask = sample->mask;
  double *weights = sample->weights;
  const double upper = plan->is_upper, lower = plan->is_lower;
  for (size_t col = 0; col < cols; col++)
    {
      const double log_ratio = dw_slime_mis_level_log_ratio (sample, plan->is_level, col);
      weights[col] = exp (dw_torch_clamp (log_ratio, -DW_SAFETY_BOUND, DW_SAFETY_BOUND));
      sample->loss_mask[col] = mask[col];
    }
  dw_slime_mis_add (sums, DW_SLIME_MIS_TIS_BEFORE,
                    dw_slime_mis_sample_mean (mask, cols, weights, 0));
  if (plan->is_mode == DW_IS_TRUNCATE)
    {
      dw_slime_mis_add (sums, DW_SLIME_MIS_TIS_TRUNC,
                        dw_slime_mis_fraction (sample, cols, weights, upper, false));
      for (size_t col = 0; col < cols; col++)
        weights[col] = dw_torch_clamp (weights[col], 0, upper) * mask[col];
    }
  else if (plan->is_mode == DW_IS_CLAMP)
    {
      dw_slime_mis_add (sums, DW_SLIME_MIS_TIS_CLIP_LOW,
                        dw_slime_mis_fraction (sample, cols, weights, lower, true));
      dw_slime_mis_add (sums, DW_SLIME_MIS_TIS_CLIP_HIGH,
                        dw_slime_mis_fraction (sample, cols, weights, upper, false));
      for (size_t col = 0; col < cols; col++)
        weights[col] = dw_torch_clamp (weights[col], lower, upper) * mask[col];
    }
  else
    {
      dw_slime_mis_add (sums, DW_SLIME_MIS_TIS_MASK_LOW,
                        dw_slime_mis_fraction (sample, cols, weights, lower, true));
      dw_slime_mis_add (sums, DW_SLIME_MIS_TIS_MASK_HIGH,
                        dw_slime_mis_fraction (sample, cols, weights, upper, false));
      for (size_t col = 0; col < cols; col++)
        {
          sample->loss_mask[col] = mask[col] * (weights[col] >= lower && weights[col] <= upper);
          weights[col] = weights[col] * mask[col];
        }
    }
  dw_slime_mis_add (sums, DW_SLIME_MIS_TIS_AFTER,
                    dw_slime_mis_sample_mean (mask, cols, weights, 0));
}

/* rejection sampling on the ratio and, inside it, the veto (§7.1) */
static void
dw_slime_mis_rejection (const DwContext *context, const DwPlan *plan, DwSlimeMisSums *sums,
                        DwSlimeMisSample *sample)
{
  const size_t cols = context->cols;
  const double *mask = sample->mask;
  double *ratios = sample->rs_ratios;
  for (size_t col = 0; col < cols; col++)
    {
      const double log_ratio = dw_slime_mis_level_log_ratio (sample, plan->rs_level, col);
      ratios[col] = exp (dw_torch_clamp (log_ratio, -DW_SAFETY_BOUND, DW_SAFETY_BOUND));
    }
  dw_slime_mis_add (sums, DW_SLIME_MIS_RS_LOW,
                    dw_slime_mis_fraction (sample, cols, ratios, plan->rs_lower, true));
  dw_slime_mis_add (sums, DW_SLIME_MIS_RS_HIGH,
                    dw_slime_mis_fraction (sample, cols, ratios, plan->rs_upper, false));
  for (size_t col = 0; col < cols; col++)
    sample->loss_mask[col] *= (ratios[col] >= plan->rs_lower && ratios[col] <= plan->rs_upper);
  if (!plan->veto_on)
    return;
  const double log_veto = log (plan->veto);
  bool any_catastrophic = false;
  for (size_t col = 0; col < cols; col++)
    {
      sample->values[col] = (sample->log_ratio[col] < log_veto && mask[col] != 0);
      any_catastrophic |= sample->values[col] != 0;
    }
  dw_slime_mis_add (sums, DW_SLIME_MIS_RS_CAT_TOKEN,
                    dw_slime_mis_sample_mean (mask, cols, sample->values, 0));
  dw_slime_mis_add (sums, DW_SLIME_MIS_RS_CAT_SEQ,
                    dw_slime_mis_sample_mean (mask, cols, NULL, any_catastrophic ? 1.0 : 0.0));
  if (any_catastrophic)
    for (size_t col = 0; col < cols; col++)
      sample->loss_mask[col] = 0;
}

/* after every sample: batch normalisation and the final weight statistics (§7.1) */
static void
dw_slime_mis_finish_weights (const DwContext *context, const DwPlan *plan, DwSlimeMisSums *sums,
                             double *weights)
{
  const size_t rows = context->rows, cols = context->cols, count = rows * cols;
  if (plan->batch_normalize)
    {
      double mean, sum = 0;
      if (plan->is_level == DW_LEVEL_TOKEN)
        {
          double mask_sum = 0;
          for (size_t index = 0; index < count; index++)
            {
              sum += weights[index] * context->mask[index];
              mask_sum += context->mask[index];
            }
          mean = sum / fmax (mask_sum, 1.0);
        }
      else
        {
          for (size_t row = 0; row < rows; row++)
            sum += dw_slime_mis_sample_mean (context->mask + row * cols, cols, weights + row * cols,
                                             0);
          mean = sum / (double)rows;
        }
      const bool apply = mean > 1e-8;
      if (apply)
        for (size_t index = 0; index < count; index++)
          weights[index] /= mean;
      for (size_t row = 0; row < rows; row++)
        dw_slime_mis_add (
          sums, DW_SLIME_MIS_BN,
          dw_slime_mis_sample_mean (context->mask + row * cols, cols, NULL, apply ? mean : 1.0));
    }
  for (size_t row = 0; row < rows; row++)
    {
      const double *mask = context->mask + row * cols, *row_weights = weights + row * cols;
      double smallest = INFINITY, largest = -INFINITY;
      bool any_valid = false;
      for (size_t col = 0; col < cols; col++)
        if (mask[col] != 0)
          {
            any_valid = true;
            smallest = dw_torch_min (smallest, row_weights[col]);
            largest = dw_torch_max (largest, row_weights[col]);
          }
      const double row_mean = dw_slime_mis_sample_mean (mask, cols, row_weights, 0);
      dw_slime_mis_add (sums, DW_SLIME_MIS_FINAL_MEAN,
                        dw_slime_mis_sample_mean (mask, cols, NULL, row_mean));
      dw_slime_mis_add (sums, DW_SLIME_MIS_FINAL_MIN,
                        dw_slime_mis_sample_mean (mask, cols, NULL, any_valid ? smallest : 0.0));
      dw_slime_mis_add (sums, DW_SLIME_MIS_FINAL_MAX,
                        dw_slime_mis_sample_mean (mask, cols, NULL, any_valid ? largest : 0.0));
    }
}

bool
dw_slime_mis_run (const DwContext *context, const DwPlan *plan, DwCorrectionResult *result,
                  DwCorrectionError *error)
{
  const size_t rows = context->rows, cols = context->cols, count = rows * cols;
  double *weights = dw_workspace_get (DW_WORKSPACE_SLIME_W, count * sizeof (double));
  double *loss_mask = dw_workspace_get (DW_WORKSPACE_SLIME_NM, count * sizeof (double));
  double *scratch = dw_workspace_get (DW_WORKSPACE_SCRATCH, (2 * cols + 1) * sizeof (double));
  if (!weights || !loss_mask || !scratch)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  DwSlimeMisSums sums;
  memset (&sums, 0, sizeof sums);

  for (size_t row = 0; row < rows; row++)
    {
      DwSlimeMisSample sample = {
        .mask = context->mask + row * cols,
        .log_ratio = context->log_ratio + row * cols,
        .weights = weights + row * cols,
        .loss_mask = loss_mask + row * cols,
        .values = scratch,
        .rs_ratios = scratch + cols,
      };
      dw_slime_mis_mismatch (context, &sums, &sample, row);
      if (!plan->slime_use_tis)
        {
          /* no TIS: the loss masks are returned unchanged, RS cannot run */
          memcpy (sample.loss_mask, sample.mask, cols * sizeof (double));
          continue;
        }
      dw_slime_mis_importance (context, plan, &sums, &sample);
      if (plan->slime_use_rs)
        dw_slime_mis_rejection (context, plan, &sums, &sample);
      dw_slime_mis_add (&sums, DW_SLIME_MIS_AFTER_TIS_RS,
                        dw_slime_mis_sample_mean (sample.mask, cols, sample.weights, 0));
    }
  if (plan->slime_use_tis)
    dw_slime_mis_finish_weights (context, plan, &sums, weights);

  /* every metric is a per-sample mean averaged over the samples */
  DwMetricList list = { .prefix = "mis_" };
  for (int key = 0; key < DW_SLIME_MIS_N; key++)
    if (sums.used[key])
      dw_metric_list_put (&list, dw_slime_mis_names[key], sums.totals[key] / (double)rows);
  bool ok = true;
  if (plan->slime_use_tis)
    ok &= dw_correction_result_set_array (result, true, context->batch->lp_dtype, weights, count,
                                          error);
  /* slime's loss masks are float32 */
  ok &= dw_correction_result_set_array (result, false, DW_DTYPE_F32, loss_mask, count, error);
  if (!ok)
    {
      free (list.m);
      return false;
    }
  return dw_metric_list_finish (result, &list, error);
}
