/* dw-verl-rs.c — verl's k-option rejection sampling and its metrics (§4.3, §4.4)
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

/* the 14/15 keys of one option from its masked sums @a and the row values @sv */
void
dw_verl_rs_emit_option (const DwContext *c, DwMetricList *L, const DwRsBound *bd, const DwRsSums *a,
                        const double *sv, size_t n_valid_rows)
{
  const size_t B = c->rows;
  const int k = dw_rs_option_k (bd->option);
  const DwRsAgg agg = dw_rs_option_agg (bd->option);
  const bool k1 = k == 1;
  const double up_c = DW_ROUND (c, bd->log_upper);
  const double lo_c = k1 ? DW_ROUND (c, bd->log_lower) : 0.0;
  const double lo_metric = k1 ? lo_c : 0.0;
  const char *on = dw_rs_option_name (bd->option);
  const double sum_stat = a->sum_stat, fh = a->fh, fl = a->fl, su = a->su, su2 = a->su2, mx = a->mx,
               mn = a->mn, masked = a->masked, seq_masked = a->seq_masked;
  /* row-value statistics over valid rows */
  double s = 0, cnt = 0, smax = -INFINITY, smin = INFINITY, dev = -INFINITY, hh = 0, ll = 0;
  for (size_t b = 0; b < B; b++)
    if (c->row_count[b] > 0)
      {
        s += sv[b];
        cnt += 1;
        smax = dw_torch_max (smax, sv[b]);
        smin = dw_torch_min (smin, sv[b]);
        dev = dw_torch_max (dev, fabs (sv[b]));
        hh += sv[b] > up_c;
        ll += sv[b] < lo_metric;
      }
  double mean = cnt > 0 ? s / cnt : 0.0, s2 = 0;
  for (size_t b = 0; b < B; b++)
    if (c->row_count[b] > 0)
      s2 += (sv[b] - mean) * (sv[b] - mean);
  char p[64];
  snprintf (p, sizeof p, "rollout_rs_%s", on);
  dw_metric_list_putf (L, dw_context_mean (c, sum_stat), "%s_mean", p);
  if (agg != DW_RS_AGG_TOKEN && cnt > 0)
    {
      dw_metric_list_putf (L, smax, "%s_max", p);
      dw_metric_list_putf (L, smin, "%s_min", p);
      dw_metric_list_putf (L, hh / cnt, "%s_fraction_high", p);
      dw_metric_list_putf (L, k1 ? ll / cnt : 0.0, "%s_fraction_low", p);
    }
  else
    {
      dw_metric_list_putf (L, mx, "%s_max", p);
      dw_metric_list_putf (L, mn, "%s_min", p);
      dw_metric_list_putf (L, dw_context_mean (c, fh), "%s_fraction_high", p);
      dw_metric_list_putf (L, k1 ? dw_context_mean (c, fl) : 0.0, "%s_fraction_low", p);
    }
  if (c->total > 1)
    {
      double mc = dw_context_mean (c, su);
      double var = DW_ROUND (c, dw_context_mean (c, su2) - DW_ROUND (c, mc * mc));
      dw_metric_list_putf (L, sqrt (fmax (var, 0.0)), "%s_std", p);
    }
  else
    dw_metric_list_putf (L, 0.0, "%s_std", p);
  dw_metric_list_putf (L, mean, "%s_seq_mean", p);
  dw_metric_list_putf (L, cnt > 1 ? sqrt (s2 / (cnt - 1)) : 0.0, "%s_seq_std", p);
  dw_metric_list_putf (L, cnt > 0 ? smax : 0.0, "%s_seq_max", p);
  dw_metric_list_putf (L, cnt > 0 ? smin : 0.0, "%s_seq_min", p);
  dw_metric_list_putf (L, cnt > 0 ? dev : 0.0, "%s_seq_max_deviation", p);
  dw_metric_list_putf (L, cnt > 0 ? hh / cnt : 0.0, "%s_seq_fraction_high", p);
  if (k1)
    dw_metric_list_putf (L, cnt > 0 ? ll / cnt : 0.0, "%s_seq_fraction_low", p);
  dw_metric_list_putf (L, dw_context_mean (c, masked), "%s_masked_fraction", p);
  dw_metric_list_putf (L, n_valid_rows > 0 ? seq_masked / (double)n_valid_rows : 0.0,
                       "%s_seq_masked_fraction", p);
}

/* @keep: [B*T] combined keep (1/0), initialised to 1 by the caller */
void
dw_verl_rs_k_options (const DwContext *c, DwMetricList *L, const DwRsParsed *P, double *keep,
                      double *scratch)
{
  const size_t B = c->rows, T = c->cols;
  double *kt = scratch;         /* [B*T] per-token statistic of the option */
  double *sv = scratch + B * T; /* [B] row values */
  double *ks = sv + B;          /* [B] row keep (sequence options) */
  size_t n_valid_rows = 0;
  for (size_t b = 0; b < B; b++)
    n_valid_rows += c->row_count[b] > 0;
  for (size_t oi = 0; oi < P->n; oi++)
    {
      const DwRsBound *bd = &P->bounds[oi];
      const int k = dw_rs_option_k (bd->option);
      const DwRsAgg agg = dw_rs_option_agg (bd->option);
      const bool k1 = k == 1;
      const double up_c = DW_ROUND (c, bd->log_upper);
      const double lo_c = k1 ? DW_ROUND (c, bd->log_lower) : 0.0;
      const double lo_metric = k1 ? lo_c : 0.0;
      for (size_t i = 0; i < B * T; i++)
        {
          double ls = dw_torch_clamp (c->log_ratio[i], -DW_SAFETY_BOUND, DW_SAFETY_BOUND);
          kt[i] = k == 1   ? -ls
                  : k == 2 ? DW_ROUND (c, 0.5 * DW_ROUND (c, ls * ls))
                           : DW_ROUND (c, DW_ROUND (c, DW_ROUND (c, DW_EXP (c, ls)) - 1.0) - ls);
        }
      double sum_stat = 0, fh = 0, fl = 0, su = 0, su2 = 0, mx = -INFINITY, mn = INFINITY;
      double masked = 0, seq_masked = 0;
      for (size_t b = 0; b < B; b++)
        {
          double rs = 0, rmax = -INFINITY;
          bool any_valid = false;
          for (size_t t = 0; t < T; t++)
            {
              size_t i = b * T + t;
              if (!dw_context_valid (c, i))
                continue;
              any_valid = true;
              rs += kt[i] * c->mask[i];
              rmax = dw_torch_max (rmax, kt[i]);
            }
          if (agg == DW_RS_AGG_TOKEN || agg == DW_RS_AGG_MEAN)
            sv[b] = dw_context_row_mean (c, rs, b);
          else if (agg == DW_RS_AGG_SUM)
            sv[b] = DW_ROUND (c, rs);
          else
            sv[b] = any_valid ? rmax : 0.0;
          ks[b] = k1 ? (sv[b] <= up_c && sv[b] >= lo_c) : (sv[b] <= up_c);
          bool row_rej = false;
          for (size_t t = 0; t < T; t++)
            {
              size_t i = b * T + t;
              double kp = agg == DW_RS_AGG_TOKEN
                            ? (k1 ? (kt[i] <= up_c && kt[i] >= lo_c) : (kt[i] <= up_c))
                            : ks[b];
              keep[i] *= kp;
              if (!dw_context_valid (c, i))
                continue;
              double mv = c->mask[i];
              double x = agg == DW_RS_AGG_TOKEN ? kt[i] : sv[b];
              sum_stat += x * mv;
              if (agg == DW_RS_AGG_TOKEN)
                {
                  mx = dw_torch_max (mx, x);
                  mn = dw_torch_min (mn, x);
                  fh += (x > up_c) * mv;
                  fl += (x < lo_metric) * mv;
                }
              double u = dw_torch_clamp (x, lo_metric, up_c);
              su += u * mv;
              su2 += DW_ROUND (c, u * u) * mv;
              masked += (1.0 - kp) * mv;
              row_rej |= kp == 0;
            }
          if (c->row_count[b] > 0 && row_rej)
            seq_masked += 1;
        }
      DwRsSums acc = { sum_stat, fh, fl, su, su2, mx, mn, masked, seq_masked };
      dw_verl_rs_emit_option (c, L, bd, &acc, sv, n_valid_rows);
    }
  double masked = 0, rows_rej = 0;
  for (size_t b = 0; b < B; b++)
    {
      bool rej = false;
      for (size_t t = 0; t < T; t++)
        {
          size_t i = b * T + t;
          if (!dw_context_valid (c, i))
            continue;
          masked += (1.0 - keep[i]) * c->mask[i];
          rej |= !(keep[i] > 0.5);
        }
      rows_rej += rej;
    }
  dw_metric_list_put (L, "rollout_rs_masked_fraction", dw_context_mean (c, masked));
  dw_metric_list_put (L, "rollout_rs_seq_masked_fraction", rows_rej / (double)B);
}

/* rows with a token whose raw log-ratio is below log(V) are zeroed in @keep (§5.3, §6.1); the two
 * veto keys are emitted (as 0 when the veto is off) */
void
dw_verl_rs_veto (const DwContext *context, DwMetricList *list, const DwPlan *plan, double *keep)
{
  double vetoed = 0, catastrophic = 0;
  if (plan->veto_on)
    {
      const double log_veto = (float)log ((float)plan->veto);
      for (size_t row = 0; row < context->rows; row++)
        {
          bool has_catastrophic = false;
          for (size_t col = 0; col < context->cols; col++)
            {
              const size_t index = row * context->cols + col;
              if (dw_context_valid (context, index) && context->log_ratio[index] < log_veto)
                {
                  has_catastrophic = true;
                  catastrophic += context->mask[index];
                }
            }
          vetoed += has_catastrophic;
          if (has_catastrophic)
            for (size_t col = 0; col < context->cols; col++)
              keep[row * context->cols + col] = 0.0;
        }
    }
  dw_metric_list_put (list, "rollout_is_veto_fraction", vetoed / (double)context->rows);
  dw_metric_list_put (list, "rollout_is_catastrophic_token_fraction",
                      dw_context_mean (context, catastrophic));
}
