/* dw-row-stats.c — per-row sufficient statistics of a batch, for the what-if engine
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
dw_row_stats_compute (const DwBatch *batch, DwRowStats *rows)
{
  const bool f32 = batch->lp_dtype == DW_DTYPE_F32;
  for (size_t row = 0; row < batch->rows; row++)
    {
      DwRowStats *stats = &rows[row];
      memset (stats, 0, sizeof *stats);
      stats->min_l = INFINITY;
      double largest[3] = { -INFINITY, -INFINITY, -INFINITY };
      for (size_t col = 0; col < batch->cols; col++)
        {
          size_t index = row * batch->cols + col;
          double weight = dw_batch_mask_value (batch, index);
          if (weight == 0)
            continue;
          double old = dw_context_log_prob (batch->old_log_prob, f32, index),
                 rollout = dw_context_log_prob (batch->rollout_log_prob, f32, index);
          double log_ratio = f32 ? (double)(float)(old - rollout) : old - rollout;
          double clamped = dw_torch_clamp (log_ratio, -DW_SAFETY_BOUND, DW_SAFETY_BOUND);
          double statistics[3];
          statistics[0] = -clamped;
          statistics[1]
            = f32 ? (double)(float)(0.5 * (float)(clamped * clamped)) : 0.5 * clamped * clamped;
          statistics[2]
            = f32
                ? (double)((float)((float)(dw_torch_expf ((float)clamped)) - 1.0f) - (float)clamped)
                : exp (clamped) - 1.0 - clamped;
          stats->n += weight;
          stats->n_valid++;
          stats->sum_l += log_ratio * weight;
          stats->sum_old += old * weight;
          stats->sum_roll += rollout * weight;
          for (int which = 0; which < 3; which++)
            {
              stats->sum_k[which] += statistics[which] * weight;
              largest[which] = dw_torch_max (largest[which], statistics[which]);
            }
          stats->min_l = dw_torch_min (stats->min_l, log_ratio);
        }
      for (int which = 0; which < 3; which++)
        stats->max_k[which] = stats->n_valid ? largest[which] : 0.0;
    }
}
