/* dw-context.c — the batch as every reference path reads it: ℓ, mask values and counts
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

/* the mask as doubles: one dtype switch per batch, not per element */
static bool
dw_context_read_mask (DwContext *context, const DwBatch *batch, size_t count,
                      DwCorrectionError *error)
{
  const void *source = batch->response_mask;
#define DW_CONTEXT_MASK_LOOP(TYPE)                                \
  for (size_t index = 0; index < count; index++)                  \
    context->mask[index] = (double)((const TYPE *)source)[index]; \
  break
  switch (batch->mask_dtype)
    {
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      DW_CONTEXT_MASK_LOOP (uint8_t);
    case DW_DTYPE_I8:
      DW_CONTEXT_MASK_LOOP (int8_t);
    case DW_DTYPE_I16:
      DW_CONTEXT_MASK_LOOP (int16_t);
    case DW_DTYPE_U16:
      DW_CONTEXT_MASK_LOOP (uint16_t);
    case DW_DTYPE_I32:
      DW_CONTEXT_MASK_LOOP (int32_t);
    case DW_DTYPE_U32:
      DW_CONTEXT_MASK_LOOP (uint32_t);
    case DW_DTYPE_I64:
      DW_CONTEXT_MASK_LOOP (int64_t);
    case DW_DTYPE_U64:
      DW_CONTEXT_MASK_LOOP (uint64_t);
    case DW_DTYPE_F32:
      DW_CONTEXT_MASK_LOOP (float);
    case DW_DTYPE_F64:
      DW_CONTEXT_MASK_LOOP (double);
    default:
      return dw_error_set (error, DW_ERROR_TYPE, "response_mask dtype %s is not supported.",
                           dw_dtype_name (batch->mask_dtype));
    }
#undef DW_CONTEXT_MASK_LOOP
  return true;
}

bool
dw_context_init (DwContext *context, const DwBatch *batch, DwCorrectionError *error)
{
  memset (context, 0, sizeof *context);
  context->batch = batch;
  context->rows = batch->rows;
  context->cols = batch->cols;
  context->f32 = batch->lp_dtype == DW_DTYPE_F32;
  if (batch->lp_dtype != DW_DTYPE_F32 && batch->lp_dtype != DW_DTYPE_F64)
    return dw_error_set (error, DW_ERROR_TYPE, "log-probs must be float32 or float64, got %s.",
                         dw_dtype_name (batch->lp_dtype));
  const size_t count = context->rows * context->cols;
  if (context->cols != 0 && count / context->cols != context->rows)
    return dw_error_set (error, DW_ERROR_VALUE, "batch shape overflows.");
  context->log_ratio = dw_workspace_get (DW_WORKSPACE_L, count * sizeof (double));
  context->mask = dw_workspace_get (DW_WORKSPACE_M, count * sizeof (double));
  context->row_count = dw_workspace_get (DW_WORKSPACE_N, context->rows * sizeof (double));
  if (!context->log_ratio || !context->mask || !context->row_count)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory for a %zux%zu batch.", context->rows,
                         context->cols);
  if (!dw_context_read_mask (context, batch, count, error))
    return false;

  /* ℓ = old − rollout in the input dtype */
  if (context->f32)
    {
      const float *old = batch->old_log_prob, *rollout = batch->rollout_log_prob;
      for (size_t index = 0; index < count; index++)
        context->log_ratio[index] = (double)(old[index] - rollout[index]);
    }
  else
    {
      const double *old = batch->old_log_prob, *rollout = batch->rollout_log_prob;
      for (size_t index = 0; index < count; index++)
        context->log_ratio[index] = old[index] - rollout[index];
    }

  /* counts per row and over the batch */
  bool any_valid = false;
  for (size_t row = 0; row < context->rows; row++)
    {
      double row_count = 0;
      const double *mask = context->mask + row * context->cols;
      for (size_t col = 0; col < context->cols; col++)
        if (mask[col] != 0)
          {
            any_valid = true;
            row_count += mask[col];
          }
      context->row_count[row] = DW_ROUND (context, row_count);
      context->total += row_count;
    }
  context->mean_denominator
    = DW_ROUND (context, DW_ROUND (context, context->total) + DW_MASKED_MEAN_EPS);
  if (!any_valid)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "response_mask must contain at least one valid token (1).");
  return true;
}

void
dw_context_row_log_ratio (const DwContext *context, DwLevel level, double *row_log)
{
  for (size_t row = 0; row < context->rows; row++)
    {
      double sum = 0;
      for (size_t col = 0; col < context->cols; col++)
        {
          const size_t index = row * context->cols + col;
          if (dw_context_valid (context, index))
            sum += context->log_ratio[index] * context->mask[index];
        }
      row_log[row] = level == DW_LEVEL_SEQUENCE ? DW_ROUND (context, sum)
                                                : dw_context_row_mean (context, sum, row);
    }
}

/* exp(SAFE(x)) in the batch dtype */
static double
dw_context_safe_exp (const DwContext *context, double log_value)
{
  return DW_ROUND (context,
                   DW_EXP (context, dw_torch_clamp (log_value, -DW_SAFETY_BOUND, DW_SAFETY_BOUND)));
}

void
dw_context_ratios (const DwContext *context, DwLevel level, const double *row_log, double *ratios)
{
  for (size_t row = 0; row < context->rows; row++)
    {
      const double row_ratio
        = level == DW_LEVEL_TOKEN ? 0 : dw_context_safe_exp (context, row_log[row]);
      for (size_t col = 0; col < context->cols; col++)
        {
          const size_t index = row * context->cols + col;
          ratios[index] = level == DW_LEVEL_TOKEN
                            ? dw_context_safe_exp (context, context->log_ratio[index])
                            : row_ratio;
        }
    }
}
