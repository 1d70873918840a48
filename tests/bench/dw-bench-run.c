/* dw-bench-run.c — the generated run the what-if and Tune benchmarks share
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-bench-run.h"

DwBatch *
dw_bench_run_make_batch (gint64 step, guint n_steps, gsize rows, gsize cols)
{
  GRand *random = g_rand_new_with_seed (1000 + (guint32)step);
  DwBatch *batch = dw_batch_new (rows, cols, DW_DTYPE_F32, DW_DTYPE_BOOL);
  float *old = batch->old_log_prob, *rollout = batch->rollout_log_prob;
  guint8 *mask = batch->response_mask;
  double spread = 0.02 + 0.3 * (double)step / n_steps;

  batch->step = step;
  for (gsize row = 0; row < rows; row++)
    {
      gsize length = (gsize)g_rand_int_range (random, 64, (gint32)cols + 1);
      double bias = g_rand_double_range (random, -0.5, 0.5) * spread * 0.1;

      for (gsize token = 0; token < cols; token++)
        {
          gsize index = row * cols + token;
          double log_rollout = -g_rand_double (random) * 3.0;
          double log_ratio = bias + spread * (g_rand_double (random) - 0.5);

          if (g_rand_int_range (random, 0, 2000) == 0)
            log_ratio -= 12; /* rare catastrophic token */
          rollout[index] = (float)log_rollout;
          old[index] = (float)(log_rollout + log_ratio);
          mask[index] = token < length;
        }
    }
  g_rand_free (random);
  return batch;
}
