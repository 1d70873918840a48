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
  for (size_t b = 0; b < batch->rows; b++)
    {
      DwRowStats *s = &rows[b];
      memset (s, 0, sizeof *s);
      s->min_l = INFINITY;
      double mx[3] = { -INFINITY, -INFINITY, -INFINITY };
      for (size_t t = 0; t < batch->cols; t++)
        {
          size_t i = b * batch->cols + t;
          double mv = dw_batch_mask_value (batch, i);
          if (mv == 0)
            continue;
          double o = dw_context_log_prob (batch->old_log_prob, f32, i),
                 r = dw_context_log_prob (batch->rollout_log_prob, f32, i);
          double l = f32 ? (double)(float)(o - r) : o - r;
          double ls = dw_torch_clamp (l, -DW_SAFETY_BOUND, DW_SAFETY_BOUND);
          double k[3];
          k[0] = -ls;
          k[1] = f32 ? (double)(float)(0.5 * (float)(ls * ls)) : 0.5 * ls * ls;
          k[2] = f32 ? (double)((float)((float)(expf ((float)ls)) - 1.0f) - (float)ls)
                     : exp (ls) - 1.0 - ls;
          s->n += mv;
          s->n_valid++;
          s->sum_l += l * mv;
          s->sum_old += o * mv;
          s->sum_roll += r * mv;
          for (int j = 0; j < 3; j++)
            {
              s->sum_k[j] += k[j] * mv;
              mx[j] = dw_torch_max (mx[j], k[j]);
            }
          s->min_l = dw_torch_min (s->min_l, l);
        }
      for (int j = 0; j < 3; j++)
        s->max_k[j] = s->n_valid ? mx[j] : 0.0;
    }
}
