/* dw-offpolicy.c — the off-policy metrics: KL, K3 KL, perplexities, chi2 (§3.4)
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
dw_offpolicy_init (DwOffpolicySums *a)
{
  memset (a, 0, sizeof *a);
  a->dmax = -INFINITY;
  a->dmin = INFINITY;
}

/* row b's share of the per-row metrics from its masked sums of old, rollout and ℓ */
void
dw_offpolicy_add_row (const DwContext *c, DwOffpolicySums *a, size_t b, double so, double sr,
                      double sl)
{
  double mt = dw_context_row_mean (c, so, b), mr = dw_context_row_mean (c, sr, b);
  a->tp += DW_ROUND (c, DW_EXP (c, -mt));
  a->tlp += -mt;
  a->rp += DW_ROUND (c, DW_EXP (c, -mr));
  a->rlp += -mr;
  double d = DW_ROUND (c, mr - mt);
  a->dsum += d;
  a->dabs += fabs (d);
  a->dmax = fmax (a->dmax, d);
  a->dmin = fmin (a->dmin, d);
  a->pr += DW_ROUND (c, DW_EXP (c, d));
  double s = dw_torch_clamp (DW_ROUND (c, sl), -DW_SAFETY_BOUND, DW_SAFETY_BOUND);
  a->cs += DW_ROUND (c, exp (2.0 * s));
}

void
dw_offpolicy_emit (const DwContext *c, DwMetricList *L, const DwOffpolicySums *a, bool g1)
{
  const char *pp = g1 ? "mismatch_" : "";
  double Bd = (double)c->rows;
  dw_metric_list_putf (L, a->tp / Bd, "%straining_ppl", pp);
  dw_metric_list_putf (L, a->tlp / Bd, "%straining_log_ppl", pp);
  dw_metric_list_putf (L, dw_context_mean (c, a->kl), "%skl", pp);
  dw_metric_list_putf (L, dw_context_mean (c, a->k3), "%sk3_kl", pp);
  dw_metric_list_putf (L, a->rp / Bd, "%srollout_ppl", pp);
  dw_metric_list_putf (L, a->rlp / Bd, "%srollout_log_ppl", pp);
  dw_metric_list_putf (L, a->dsum / Bd, "%slog_ppl_diff", pp);
  dw_metric_list_putf (L, a->dabs / Bd, "%slog_ppl_abs_diff", pp);
  dw_metric_list_putf (L, a->dmax, "%slog_ppl_diff_max", pp);
  dw_metric_list_putf (L, a->dmin, "%slog_ppl_diff_min", pp);
  dw_metric_list_putf (L, a->pr / Bd, "%sppl_ratio", pp);
  if (!g1)
    dw_metric_list_put (L, "chi2_token", dw_context_mean (c, a->chi) - 1.0);
  if (!g1)
    dw_metric_list_put (L, "chi2_seq", a->cs / Bd - 1.0);
}

void
dw_offpolicy_compute (const DwContext *c, DwMetricList *L, bool g1)
{
  const DwBatch *bt = c->batch;
  const size_t B = c->rows, T = c->cols;
  DwOffpolicySums a;
  dw_offpolicy_init (&a);
  for (size_t b = 0; b < B; b++)
    {
      double so = 0, sr = 0, sl = 0;
      for (size_t t = 0; t < T; t++)
        {
          size_t i = b * T + t;
          if (!dw_context_valid (c, i))
            continue;
          double mv = c->mask[i];
          double o = dw_context_log_prob (bt->old_log_prob, c->f32, i),
                 r = dw_context_log_prob (bt->rollout_log_prob, c->f32, i);
          double l = c->log_ratio[i];
          so += o * mv;
          sr += r * mv;
          sl += l * mv;
          a.kl += DW_ROUND (c, r - o) * mv;
          double el = DW_ROUND (c, DW_EXP (c, l));
          a.k3 += DW_ROUND (c, DW_ROUND (c, el - l) - 1.0) * mv;
          /* exp(SAFE(ℓ)) is exp(ℓ) inside the bounds: one exp per token */
          double rho
            = (l >= -DW_SAFETY_BOUND && l <= DW_SAFETY_BOUND)
                ? el
                : DW_ROUND (c, DW_EXP (c, dw_torch_clamp (l, -DW_SAFETY_BOUND, DW_SAFETY_BOUND)));
          a.chi += DW_ROUND (c, rho * rho) * mv;
        }
      dw_offpolicy_add_row (c, &a, b, so, sr, sl);
    }
  dw_offpolicy_emit (c, L, &a, g1);
}
