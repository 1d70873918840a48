/* dw-slime-builtin.c — slime's built-in TIS paths of --use-tis: vanilla_tis_function and
 * icepop_function (§7.2)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. The ratio is exp(old − rollout) without a safety clamp; the logged keys
 * train/tis (the raw ratio), train/tis_clipfrac and train/tis_abs are reduced as slime's
 * sum_of_sample_mean does: a mean per sample over its loss mask, then over samples; or, with
 * calculate_per_token_loss, over every token. Like slime they multiply (no `where`), so a NaN or
 * inf ratio on padding poisons its sample.
 */
#include "dw-correction-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum
{
  DW_SLIME_BUILTIN_TIS,
  DW_SLIME_BUILTIN_CLIPFRAC,
  DW_SLIME_BUILTIN_ABS,
  DW_SLIME_BUILTIN_N_KEYS
};

static const char *const dw_slime_builtin_keys[DW_SLIME_BUILTIN_N_KEYS] = {
  "tis",
  "tis_clipfrac",
  "tis_abs",
};

/* the logged values from the per-row sums: per sample then over samples, or over tokens */
static void
dw_slime_builtin_emit (DwMetricList *list, const DwPlan *plan, bool f32,
                       const double sample_means[DW_SLIME_BUILTIN_N_KEYS],
                       const double token_sums[DW_SLIME_BUILTIN_N_KEYS], double token_count,
                       size_t rows)
{
  for (int key = 0; key < DW_SLIME_BUILTIN_N_KEYS; key++)
    dw_metric_list_put (list, dw_slime_builtin_keys[key],
                        plan->per_token_metrics
                          ? dw_torch_round (f32, token_sums[key]) / fmax (token_count, 1.0)
                          : sample_means[key] / (double)rows);
}

int
dw_slime_builtin_fast_run (const DwBatch *batch, const DwPlan *plan, DwCorrectionResult *result,
                           DwCorrectionError *error)
{
  const size_t rows = batch->rows, cols = batch->cols, count = rows * cols;
  if (dw_correction_simd_get_reference () || !plan->is_on || batch->lp_dtype != DW_DTYPE_F32
      || rows == 0 || cols == 0 || count / cols != rows || batch->mask_dtype >= DW_N_DTYPES
      || batch->mask_dtype == DW_DTYPE_BF16 || batch->mask_dtype == DW_DTYPE_F16)
    return -1;
  float *row_buffer = dw_workspace_get (DW_WORKSPACE_FAST_ROW, 4 * cols * sizeof (float));
  const size_t mask_size = dw_dtype_size (batch->mask_dtype);
  float *weights = dw_workspace_alloc (count * sizeof (float));
  void *mask_copy = dw_workspace_alloc (count * mask_size);
  if (!row_buffer || !weights || !mask_copy)
    {
      dw_workspace_free (weights);
      dw_workspace_free (mask_copy);
      return -1;
    }
  float *mask = row_buffer, *log_ratios = row_buffer + cols, *ratios = row_buffer + 2 * cols;
  double sample_means[DW_SLIME_BUILTIN_N_KEYS] = { 0 }, token_sums[DW_SLIME_BUILTIN_N_KEYS] = { 0 };
  double token_count = 0;
  bool any_valid = false;
  for (size_t row = 0; row < rows; row++)
    {
      const size_t offset = row * cols;
      bool binary;
      if (!dw_correction_simd_mask_row_to_float (batch, offset, cols, mask, &binary))
        {
          dw_workspace_free (weights);
          dw_workspace_free (mask_copy);
          return -1;
        }
      const float *old = (const float *)batch->old_log_prob + offset;
      const float *rollout = (const float *)batch->rollout_log_prob + offset;
      for (size_t col = 0; col < cols; col++)
        log_ratios[col] = old[col] - rollout[col];
      dw_correction_simd_expf_array (log_ratios, ratios, cols);
      double sums[DW_SLIME_BUILTIN_N_KEYS], row_count;
      const DwSlimeRowIn in = { cols,
                                ratios,
                                mask,
                                (float)plan->is_upper,
                                (float)plan->is_lower,
                                plan->path == DW_PATH_SLIME_ICEPOP };
      dw_correction_simd_slime_row (&in, weights + offset, sums, &row_count);
      for (int key = 0; key < DW_SLIME_BUILTIN_N_KEYS; key++)
        {
          sample_means[key] += (double)(float)((double)(float)sums[key] / fmax (row_count, 1.0));
          token_sums[key] += sums[key];
        }
      token_count += row_count;
      for (size_t col = 0; col < cols && !any_valid; col++)
        any_valid = mask[col] != 0;
    }
  if (!any_valid)
    {
      dw_workspace_free (weights);
      dw_workspace_free (mask_copy);
      return -1; /* the reference path raises the error */
    }
  memcpy (mask_copy, batch->response_mask, count * mask_size);
  DwMetricList list = { .prefix = plan->metric_prefix };
  dw_slime_builtin_emit (&list, plan, true, sample_means, token_sums, token_count, rows);
  result->weights = weights;
  result->weights_dtype = DW_DTYPE_F32;
  result->mask = mask_copy;
  result->mask_dtype = batch->mask_dtype;
  result->rows = rows;
  result->cols = cols;
  return dw_metric_list_finish (result, &list, error) ? 1 : 0;
}

/* the applied weight of one ratio: clamp(ρ, low, clip) or, for IcePop, ρ inside [low, clip] */
static inline double
dw_slime_builtin_weight (const DwContext *context, const DwPlan *plan, double ratio)
{
  const double clip = DW_ROUND (context, plan->is_upper);
  const double clip_low = DW_ROUND (context, plan->is_lower);
  if (plan->path == DW_PATH_SLIME_ICEPOP)
    return ratio >= clip_low && ratio <= clip ? ratio : 0.0;
  return dw_torch_clamp (ratio, clip_low, clip);
}

bool
dw_slime_builtin_run (const DwContext *context, const DwPlan *plan, DwCorrectionResult *result,
                      DwCorrectionError *error)
{
  const size_t rows = context->rows, cols = context->cols, count = rows * cols;
  DwMetricList list = { .prefix = plan->metric_prefix };
  if (!plan->is_on)
    {
      /* --use-tis not given: no weights, no tis keys */
      if (!dw_correction_result_set_array (result, false, context->batch->mask_dtype, context->mask,
                                           count, error))
        return false;
      return dw_metric_list_finish (result, &list, error);
    }
  double *weights = dw_workspace_get (DW_WORKSPACE_W, count * sizeof (double));
  if (!weights)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  double sample_means[DW_SLIME_BUILTIN_N_KEYS] = { 0 }, token_sums[DW_SLIME_BUILTIN_N_KEYS] = { 0 };
  double token_count = 0;
  for (size_t row = 0; row < rows; row++)
    {
      double sums[DW_SLIME_BUILTIN_N_KEYS] = { 0 }, row_count = 0;
      for (size_t col = 0; col < cols; col++)
        {
          const size_t index = row * cols + col;
          const double mask = context->mask[index];
          const double ratio = DW_EXP (context, context->log_ratio[index]);
          const double weight = dw_slime_builtin_weight (context, plan, ratio);
          weights[index] = weight;
          sums[DW_SLIME_BUILTIN_TIS] += DW_ROUND (context, ratio * mask);
          sums[DW_SLIME_BUILTIN_CLIPFRAC] += (weight != ratio) * mask;
          sums[DW_SLIME_BUILTIN_ABS]
            += DW_ROUND (context, fabs (DW_ROUND (context, ratio - 1.0)) * mask);
          row_count += mask;
        }
      for (int key = 0; key < DW_SLIME_BUILTIN_N_KEYS; key++)
        {
          sample_means[key]
            += DW_ROUND (context, DW_ROUND (context, sums[key]) / fmax (row_count, 1.0));
          token_sums[key] += sums[key];
        }
      token_count += row_count;
    }
  dw_slime_builtin_emit (&list, plan, context->f32, sample_means, token_sums, token_count, rows);
  bool ok
    = dw_correction_result_set_array (result, true, context->batch->lp_dtype, weights, count, error)
      && dw_correction_result_set_array (result, false, context->batch->mask_dtype, context->mask,
                                         count, error);
  if (!ok)
    {
      free (list.m);
      return false;
    }
  return dw_metric_list_finish (result, &list, error);
}
