/* dw-ratio-metrics.c — verl's IS weight metrics (compute_is_metrics) and the legacy RS metrics
 * (§3.3, §5.2)
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

/* @w: [B*T] per-token ratio (safety-clamped, exp'd); @lrm: [B] per-row log value for sequence
 * levels (NULL for token level); names "<prefix>_mean"… */
void
dw_ratio_metrics_compute (const DwContext *c, DwMetricList *L, const char *pfx, const double *w,
                          const double *lrm, double up, double lo, double *sm, bool geo_tw)
{
  const size_t B = c->rows, T = c->cols;
  double sw = 0, fh = 0, fl = 0, su = 0, su2 = 0, mx = -INFINITY, mn = INFINITY;
  const double upr = DW_ROUND (c, up), lor = DW_ROUND (c, lo);
  for (size_t b = 0; b < B; b++)
    {
      double rw = 0;
      for (size_t t = 0; t < T; t++)
        {
          size_t i = b * T + t;
          if (!dw_context_valid (c, i))
            continue;
          double mv = c->mask[i], x = w[i];
          sw += x * mv;
          rw += x * mv;
          fh += (x > upr) * mv;
          fl += (x < lor) * mv;
          mx = dw_torch_max (mx, x);
          mn = dw_torch_min (mn, x);
          double u = dw_torch_clamp (x, lor, upr);
          su += u * mv;
          su2 += DW_ROUND (c, u * u) * mv;
        }
      sm[b] = dw_context_row_mean (c, rw, b);
    }
  DwRatioSums a = { sw, fh, fl, su, su2, mx, mn };
  dw_ratio_metrics_emit (c, L, pfx, &a, lrm, up, lo, sm, geo_tw);
}

/* the metrics of compute_is_metrics from the masked sums of @a and the per-row means @sm */
void
dw_ratio_metrics_emit (const DwContext *c, DwMetricList *L, const char *pfx, const DwRatioSums *a,
                       const double *lrm, double up, double lo, const double *sm, bool geo_tw)
{
  const size_t B = c->rows;
  const double sw = a->sw, fh = a->fh, fl = a->fl, su = a->su, su2 = a->su2, mx = a->mx, mn = a->mn;
  const double upr = DW_ROUND (c, up), lor = DW_ROUND (c, lo);
  dw_metric_list_putf (L, dw_context_mean (c, sw), "%s_mean", pfx);
  if (lrm)
    {
      double lmax = -INFINITY, lmin = INFINITY, h = 0, lo_n = 0;
      const double lu = (float)log ((float)up), ll = (float)log ((float)lo);
      for (size_t b = 0; b < B; b++)
        {
          lmax = fmax (lmax, lrm[b]);
          lmin = fmin (lmin, lrm[b]);
          double wgt = geo_tw ? c->row_count[b] : 1.0;
          h += (lrm[b] > lu) * wgt;
          lo_n += (lrm[b] < ll) * wgt;
        }
      dw_metric_list_putf (L, DW_ROUND (c, DW_EXP (c, fmin (lmax, DW_SAFETY_BOUND))), "%s_max",
                           pfx);
      dw_metric_list_putf (L, DW_ROUND (c, DW_EXP (c, lmin)), "%s_min", pfx);
      dw_metric_list_putf (L, geo_tw ? dw_context_mean (c, h) : h / (double)B,
                           "%s_ratio_fraction_high", pfx);
      dw_metric_list_putf (L, geo_tw ? dw_context_mean (c, lo_n) : lo_n / (double)B,
                           "%s_ratio_fraction_low", pfx);
    }
  else
    {
      dw_metric_list_putf (L, mx, "%s_max", pfx);
      dw_metric_list_putf (L, mn, "%s_min", pfx);
      dw_metric_list_putf (L, dw_context_mean (c, fh), "%s_ratio_fraction_high", pfx);
      dw_metric_list_putf (L, dw_context_mean (c, fl), "%s_ratio_fraction_low", pfx);
    }
  double mc = dw_context_mean (c, su);
  if (c->total > 1)
    {
      double var = DW_ROUND (c, dw_context_mean (c, su2) - DW_ROUND (c, mc * mc));
      dw_metric_list_putf (L, sqrt (fmax (var, 0.0)), "%s_std", pfx);
    }
  else
    dw_metric_list_putf (L, 0.0, "%s_std", pfx);
  double d = DW_ROUND (c, mc + DW_MASKED_MEAN_EPS);
  dw_metric_list_putf (L, 1.0 / dw_context_mean (c, su2 / (d * d)), "%s_eff_sample_size", pfx);
  double s = 0, s2 = 0, smax = -INFINITY, smin = INFINITY, dev = -INFINITY, hh = 0, ll2 = 0;
  for (size_t b = 0; b < B; b++)
    s += sm[b];
  double mean = s / (double)B;
  for (size_t b = 0; b < B; b++)
    {
      s2 += (sm[b] - mean) * (sm[b] - mean);
      smax = fmax (smax, sm[b]);
      smin = fmin (smin, sm[b]);
      dev = fmax (dev, fabs (sm[b] - 1.0));
      hh += sm[b] > upr;
      ll2 += sm[b] < lor;
    }
  dw_metric_list_putf (L, mean, "%s_seq_mean", pfx);
  dw_metric_list_putf (L, B > 1 ? sqrt (s2 / (double)(B - 1)) : 0.0, "%s_seq_std", pfx);
  dw_metric_list_putf (L, smax, "%s_seq_max", pfx);
  dw_metric_list_putf (L, smin, "%s_seq_min", pfx);
  dw_metric_list_putf (L, dev, "%s_seq_max_deviation", pfx);
  dw_metric_list_putf (L, hh / (double)B, "%s_seq_fraction_high", pfx);
  dw_metric_list_putf (L, ll2 / (double)B, "%s_seq_fraction_low", pfx);
}
