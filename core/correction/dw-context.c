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

bool
dw_context_init (DwContext *c, const DwBatch *batch, DwCorrectionError *error)
{
  memset (c, 0, sizeof *c);
  c->batch = batch;
  c->rows = batch->rows;
  c->cols = batch->cols;
  c->f32 = batch->lp_dtype == DW_DTYPE_F32;
  if (batch->lp_dtype != DW_DTYPE_F32 && batch->lp_dtype != DW_DTYPE_F64)
    return dw_error_set (error, DW_ERROR_TYPE, "log-probs must be float32 or float64, got %s.",
                         dw_dtype_name (batch->lp_dtype));
  size_t bt = c->rows * c->cols;
  if (c->cols != 0 && bt / c->cols != c->rows)
    return dw_error_set (error, DW_ERROR_VALUE, "batch shape overflows.");
  c->log_ratio = dw_workspace_get (DW_WORKSPACE_L, bt * sizeof (double));
  c->mask = dw_workspace_get (DW_WORKSPACE_M, bt * sizeof (double));
  c->row_count = dw_workspace_get (DW_WORKSPACE_N, c->rows * sizeof (double));
  if (!c->log_ratio || !c->mask || !c->row_count)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory for a %zux%zu batch.", c->rows,
                         c->cols);
  /* mask values: one dtype switch per batch, not per element */
  const void *mp = batch->response_mask;
#define MASK_LOOP(TYPE)                         \
  for (size_t i = 0; i < bt; i++)               \
    c->mask[i] = (double)((const TYPE *)mp)[i]; \
  break
  switch (batch->mask_dtype)
    {
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      MASK_LOOP (uint8_t);
    case DW_DTYPE_I8:
      MASK_LOOP (int8_t);
    case DW_DTYPE_I16:
      MASK_LOOP (int16_t);
    case DW_DTYPE_U16:
      MASK_LOOP (uint16_t);
    case DW_DTYPE_I32:
      MASK_LOOP (int32_t);
    case DW_DTYPE_U32:
      MASK_LOOP (uint32_t);
    case DW_DTYPE_I64:
      MASK_LOOP (int64_t);
    case DW_DTYPE_U64:
      MASK_LOOP (uint64_t);
    case DW_DTYPE_F32:
      MASK_LOOP (float);
    case DW_DTYPE_F64:
      MASK_LOOP (double);
    default:
      return dw_error_set (error, DW_ERROR_TYPE, "response_mask dtype %s is not supported.",
                           dw_dtype_name (batch->mask_dtype));
    }
#undef MASK_LOOP
  if (c->f32)
    {
      const float *o = batch->old_log_prob, *r = batch->rollout_log_prob;
      for (size_t i = 0; i < bt; i++)
        c->log_ratio[i] = (double)(o[i] - r[i]);
    }
  else
    {
      const double *o = batch->old_log_prob, *r = batch->rollout_log_prob;
      for (size_t i = 0; i < bt; i++)
        c->log_ratio[i] = o[i] - r[i];
    }
  bool any = false;
  for (size_t b = 0; b < c->rows; b++)
    {
      double nb = 0;
      const double *m = c->mask + b * c->cols;
      for (size_t t = 0; t < c->cols; t++)
        if (m[t] != 0)
          {
            any = true;
            nb += m[t];
          }
      c->row_count[b] = DW_ROUND (c, nb);
      c->total += nb;
    }
  c->mean_denominator = DW_ROUND (c, DW_ROUND (c, c->total) + DW_MASKED_MEAN_EPS);
  if (!any)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "response_mask must contain at least one valid token (1).");
  return true;
}

/* per-row log value for sequence (MSUM) / geometric (MMEAN) levels */
void
dw_context_row_log_ratio (const DwContext *c, DwLevel level, double *lrm)
{
  for (size_t b = 0; b < c->rows; b++)
    {
      double s = 0;
      for (size_t t = 0; t < c->cols; t++)
        {
          size_t i = b * c->cols + t;
          if (dw_context_valid (c, i))
            s += c->log_ratio[i] * c->mask[i];
        }
      lrm[b] = level == DW_LEVEL_SEQUENCE ? DW_ROUND (c, s) : dw_context_row_mean (c, s, b);
    }
}

/* ratio per token: exp(SAFE(ℓ)) (token) or exp(SAFE(lrm_b)) broadcast */
void
dw_context_ratios (const DwContext *c, DwLevel level, const double *lrm, double *w)
{
  for (size_t b = 0; b < c->rows; b++)
    {
      double rb
        = level == DW_LEVEL_TOKEN
            ? 0
            : DW_ROUND (c, DW_EXP (c, dw_torch_clamp (lrm[b], -DW_SAFETY_BOUND, DW_SAFETY_BOUND)));
      for (size_t t = 0; t < c->cols; t++)
        {
          size_t i = b * c->cols + t;
          w[i]
            = level == DW_LEVEL_TOKEN ? DW_ROUND (
                c, DW_EXP (c, dw_torch_clamp (c->log_ratio[i], -DW_SAFETY_BOUND, DW_SAFETY_BOUND)))
                                      : rb;
        }
    }
}
