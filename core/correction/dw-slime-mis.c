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
  S_TRAINING_LOG_PPL,
  S_TRAINING_PPL,
  S_ROLLOUT_LOG_PPL,
  S_ROLLOUT_PPL,
  S_KL,
  S_K3_KL,
  S_LOG_PPL_DIFF,
  S_LOG_PPL_ABS_DIFF,
  S_PPL_RATIO,
  S_CHI2_TOKEN,
  S_CHI2_SEQ,
  S_TIS_BEFORE,
  S_TIS_TRUNC,
  S_TIS_CLIP_LOW,
  S_TIS_CLIP_HIGH,
  S_TIS_MASK_LOW,
  S_TIS_MASK_HIGH,
  S_TIS_AFTER,
  S_RS_LOW,
  S_RS_HIGH,
  S_RS_CAT_TOKEN,
  S_RS_CAT_SEQ,
  S_AFTER_TIS_RS,
  S_BN,
  S_FINAL_MEAN,
  S_FINAL_MIN,
  S_FINAL_MAX,
  S_N
};

static const char *const dw_slime_mis_names[S_N] = {
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

typedef struct
{
  double tot[S_N];
  bool used[S_N];
} DwSlimeSums;

/* per-sample reduction of a per-token tensor x (NULL: the constant @k) */
static double
dw_slime_mis_sample_mean (const double *m, size_t T, const double *x, double k)
{
  double s = 0, n = 0;
  for (size_t t = 0; t < T; t++)
    {
      s += (x ? x[t] : k) * m[t];
      n += m[t];
    }
  return s / fmax (n, 1.0);
}

bool
dw_slime_mis_run (const DwContext *c, const DwPlan *plan, DwCorrectionResult *res,
                  DwCorrectionError *error)
{
  const size_t B = c->rows, T = c->cols, BT = B * T;
  const DwBatch *bt = c->batch;
  const bool use_tis = plan->slime_use_tis, use_rs = plan->slime_use_rs, bn = plan->batch_normalize;
  const DwLevel tl = plan->is_level, rl = plan->rs_level;
  const int mode = plan->is_mode == DW_IS_TRUNCATE ? 0 : plan->is_mode == DW_IS_CLAMP ? 1 : 2;
  const bool veto_none = !plan->veto_on;
  const double up = plan->is_upper, tlo = plan->is_lower, rlo = plan->rs_lower,
               rup = plan->rs_upper, veto = plan->veto;
  double *W = dw_workspace_get (DW_WORKSPACE_SLIME_W, BT * sizeof (double));
  double *NM = dw_workspace_get (DW_WORKSPACE_SLIME_NM, BT * sizeof (double));
  double *tmp = dw_workspace_get (DW_WORKSPACE_SCRATCH, (3 * T + 1) * sizeof (double));
  if (!W || !NM || !tmp)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  double *lr = tmp, *x = tmp + T, *rw = tmp + 2 * T;
  DwSlimeSums A;
  memset (&A, 0, sizeof A);
#define ACC(id, val)      \
  do                      \
    {                     \
      A.tot[id] += (val); \
      A.used[id] = true;  \
    }                     \
  while (0)
  for (size_t b = 0; b < B; b++)
    {
      const double *mm = c->mask + b * T;
      double *w = W + b * T, *nm = NM + b * T;
      double so = 0, sr = 0, n = 0, sl = 0;
      for (size_t t = 0; t < T; t++)
        {
          size_t i = b * T + t;
          double o = dw_context_log_prob (bt->old_log_prob, c->f32, i),
                 r = dw_context_log_prob (bt->rollout_log_prob, c->f32, i);
          so += o * mm[t];
          sr += r * mm[t];
          n += mm[t];
          lr[t] = c->log_ratio[i];
          sl += lr[t] * mm[t];
        }
      double mt = so / fmax (n, 1.0), mr = sr / fmax (n, 1.0);
      ACC (S_TRAINING_LOG_PPL, dw_slime_mis_sample_mean (mm, T, NULL, -mt));
      ACC (S_TRAINING_PPL, dw_slime_mis_sample_mean (mm, T, NULL, exp (-mt)));
      ACC (S_ROLLOUT_LOG_PPL, dw_slime_mis_sample_mean (mm, T, NULL, -mr));
      ACC (S_ROLLOUT_PPL, dw_slime_mis_sample_mean (mm, T, NULL, exp (-mr)));
      for (size_t t = 0; t < T; t++)
        x[t] = -lr[t];
      ACC (S_KL, dw_slime_mis_sample_mean (mm, T, x, 0));
      for (size_t t = 0; t < T; t++)
        x[t] = DW_ROUND (c, DW_ROUND (c, DW_ROUND (c, DW_EXP (c, lr[t])) - lr[t]) - 1.0);
      ACC (S_K3_KL, dw_slime_mis_sample_mean (mm, T, x, 0));
      ACC (S_LOG_PPL_DIFF, dw_slime_mis_sample_mean (mm, T, NULL, mr - mt));
      ACC (S_LOG_PPL_ABS_DIFF, dw_slime_mis_sample_mean (mm, T, NULL, fabs (mr - mt)));
      ACC (S_PPL_RATIO, dw_slime_mis_sample_mean (mm, T, NULL, exp (mr - mt)));
      for (size_t t = 0; t < T; t++)
        {
          double rho = exp (dw_torch_clamp (lr[t], -DW_SAFETY_BOUND, DW_SAFETY_BOUND));
          x[t] = rho * rho;
        }
      ACC (S_CHI2_TOKEN,
           dw_slime_mis_sample_mean (mm, T, NULL, dw_slime_mis_sample_mean (mm, T, x, 0) - 1.0));
      ACC (S_CHI2_SEQ,
           dw_slime_mis_sample_mean (
             mm, T, NULL, exp (2 * dw_torch_clamp (sl, -DW_SAFETY_BOUND, DW_SAFETY_BOUND)) - 1.0));
      if (!use_tis)
        {
          for (size_t t = 0; t < T; t++)
            nm[t] = mm[t];
          continue;
        }
      double nmax1 = fmax (n, 1.0);
      for (size_t t = 0; t < T; t++)
        {
          double llr = tl == DW_LEVEL_TOKEN ? lr[t] : tl == DW_LEVEL_SEQUENCE ? sl : sl / nmax1;
          w[t] = exp (dw_torch_clamp (llr, -DW_SAFETY_BOUND, DW_SAFETY_BOUND));
          nm[t] = mm[t];
        }
      ACC (S_TIS_BEFORE, dw_slime_mis_sample_mean (mm, T, w, 0));
      if (mode == 0)
        {
          for (size_t t = 0; t < T; t++)
            x[t] = w[t] > up;
          ACC (S_TIS_TRUNC, dw_slime_mis_sample_mean (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            w[t] = dw_torch_clamp (w[t], 0, up) * mm[t];
        }
      else if (mode == 1)
        {
          for (size_t t = 0; t < T; t++)
            x[t] = w[t] < tlo;
          ACC (S_TIS_CLIP_LOW, dw_slime_mis_sample_mean (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            x[t] = w[t] > up;
          ACC (S_TIS_CLIP_HIGH, dw_slime_mis_sample_mean (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            w[t] = dw_torch_clamp (w[t], tlo, up) * mm[t];
        }
      else
        {
          for (size_t t = 0; t < T; t++)
            x[t] = w[t] < tlo;
          ACC (S_TIS_MASK_LOW, dw_slime_mis_sample_mean (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            x[t] = w[t] > up;
          ACC (S_TIS_MASK_HIGH, dw_slime_mis_sample_mean (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            {
              nm[t] = mm[t] * (w[t] >= tlo && w[t] <= up);
              w[t] = w[t] * mm[t];
            }
        }
      ACC (S_TIS_AFTER, dw_slime_mis_sample_mean (mm, T, w, 0));
      if (use_rs)
        {
          for (size_t t = 0; t < T; t++)
            {
              double l2 = rl == DW_LEVEL_TOKEN ? lr[t] : rl == DW_LEVEL_SEQUENCE ? sl : sl / nmax1;
              rw[t] = exp (dw_torch_clamp (l2, -DW_SAFETY_BOUND, DW_SAFETY_BOUND));
            }
          for (size_t t = 0; t < T; t++)
            x[t] = rw[t] < rlo;
          ACC (S_RS_LOW, dw_slime_mis_sample_mean (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            x[t] = rw[t] > rup;
          ACC (S_RS_HIGH, dw_slime_mis_sample_mean (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            nm[t] *= (rw[t] >= rlo && rw[t] <= rup);
          if (!veto_none)
            {
              double lv = log (veto);
              bool any = false;
              for (size_t t = 0; t < T; t++)
                {
                  x[t] = (lr[t] < lv && mm[t] != 0);
                  any |= x[t] != 0;
                }
              ACC (S_RS_CAT_TOKEN, dw_slime_mis_sample_mean (mm, T, x, 0));
              ACC (S_RS_CAT_SEQ, dw_slime_mis_sample_mean (mm, T, NULL, any ? 1.0 : 0.0));
              if (any)
                for (size_t t = 0; t < T; t++)
                  nm[t] = 0;
            }
        }
      ACC (S_AFTER_TIS_RS, dw_slime_mis_sample_mean (mm, T, w, 0));
    }
  if (use_tis)
    {
      if (bn)
        {
          double mean;
          if (tl == DW_LEVEL_TOKEN)
            {
              double s = 0, n = 0;
              for (size_t i = 0; i < BT; i++)
                s += W[i] * c->mask[i], n += c->mask[i];
              mean = s / fmax (n, 1.0);
            }
          else
            {
              double s = 0;
              for (size_t b = 0; b < B; b++)
                s += dw_slime_mis_sample_mean (c->mask + b * T, T, W + b * T, 0);
              mean = s / (double)B;
            }
          bool apply = mean > 1e-8;
          if (apply)
            for (size_t i = 0; i < BT; i++)
              W[i] /= mean;
          for (size_t b = 0; b < B; b++)
            ACC (S_BN, dw_slime_mis_sample_mean (c->mask + b * T, T, NULL, apply ? mean : 1.0));
        }
      for (size_t b = 0; b < B; b++)
        {
          const double *mm = c->mask + b * T, *w = W + b * T;
          double vmin = INFINITY, vmax = -INFINITY;
          bool any = false;
          for (size_t t = 0; t < T; t++)
            if (mm[t] != 0)
              {
                any = true;
                vmin = dw_torch_min (vmin, w[t]);
                vmax = dw_torch_max (vmax, w[t]);
              }
          ACC (S_FINAL_MEAN,
               dw_slime_mis_sample_mean (mm, T, NULL, dw_slime_mis_sample_mean (mm, T, w, 0)));
          ACC (S_FINAL_MIN, dw_slime_mis_sample_mean (mm, T, NULL, any ? vmin : 0.0));
          ACC (S_FINAL_MAX, dw_slime_mis_sample_mean (mm, T, NULL, any ? vmax : 0.0));
        }
    }
#undef ACC
  DwMetricList L = { .prefix = "mis_" };
  for (int k = 0; k < S_N; k++)
    if (A.used[k])
      dw_metric_list_put (&L, dw_slime_mis_names[k], A.tot[k] / (double)B);
  bool ok = true;
  if (use_tis)
    ok &= dw_correction_result_set_array (res, true, bt->lp_dtype, W, BT, error);
  ok &= dw_correction_result_set_array (res, false, DW_DTYPE_F32, NM, BT,
                                        error); /* slime: float32 loss masks */
  if (!ok)
    {
      free (L.m);
      return false;
    }
  return dw_metric_list_finish (res, &L, error);
}
