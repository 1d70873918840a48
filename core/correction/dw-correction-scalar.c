/* dw-correction-scalar.c — the fused per-row pass of the float32 fast path, one token at a time
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Built with -ffp-contract=off. The pass for rows whose mask is not 0/1, for CPUs
 * without a vector level, and the tail (the last T mod 8 or 16 tokens) of the vector passes
 * (dw-correction-simd.c, dw-correction-avx512.c). Every formula as the reference path computes it.
 *
 * A numeric kernel: its locals are the spec's symbols (docs/CORRECTION.md §2, §3, §4; glossary as
 * dw-correction-simd.c: t the column, mv the mask value, l ℓ, ls SAFE(ℓ), e exp(SAFE ℓ), el exp(ℓ),
 * x the raw weight, a the applied weight, u the clamped weight, k a k statistic, md m as a double).
 */
#include "dw-correction-private.h"
#include "dw-torch.h"

#include <math.h>
#include <string.h>

#define SAFETY_F 20.0f

void
dw_correction_scalar_row_out_init (DwRowOut *out)
{
  memset (out, 0, sizeof *out);
  out->wmax = out->mk[0] = out->mk[1] = out->mk[2] = -INFINITY;
  out->wmin = INFINITY;
}

/* tokens [t0, T) of a row, every formula as the reference path computes it */
static void
dw_correction_scalar_row_pass_from (const DwRowIn *in, DwRowOut *out, size_t t0)
{
  const float C = in->C, c = in->c;
  for (size_t t = t0; t < in->T; t++)
    {
      const float mv = in->m[t];
      const float l = in->o[t] - in->r[t];
      const float ls = dw_torch_clampf (l, -SAFETY_F, SAFETY_F);
      const float e = dw_torch_expf (ls);
      if (in->l)
        in->l[t] = l;
      if (in->e)
        in->e[t] = e;
      float x = 0, a = 0;
      if (in->is_token)
        {
          x = e * mv;
          a = in->icepop ? (x >= c && x <= C ? x : 0.0f) : (x > C ? C : x);
          in->w[t] = a;
        }
      if (mv == 0)
        continue;
      const double md = mv;
      out->n += md;
      out->n_valid++;
      out->so += (double)in->o[t] * md;
      out->sr += (double)in->r[t] * md;
      out->sl += (double)l * md;
      const float el = (l >= -SAFETY_F && l <= SAFETY_F) ? e : dw_torch_expf (l);
      out->k3kl += (double)((el - l) - 1.0f) * md;
      out->chi += (double)(e * e) * md;
      if (in->is_token)
        {
          /* applied: statistics of a, clamped to [0, C]; else of x, clamped to [c, C] */
          const float stat = in->applied ? a : x;
          const float u = dw_torch_clampf (stat, in->applied ? 0.0f : c, C);
          out->sw += (double)stat * md;
          out->sw_raw += (double)x * md;
          out->fh += (x > C) * md;
          out->fl += (x < c) * md;
          out->wmax = dw_torch_max (out->wmax, stat);
          out->wmin = dw_torch_min (out->wmin, stat);
          out->su += (double)u * md;
          out->su2 += (double)(u * u) * md;
          if (in->bn)
            out->swt += (double)a * md;
        }
      for (int j = 0; j < 3; j++)
        if (in->need_k[j])
          {
            const float k = j == 0 ? -ls : j == 1 ? 0.5f * (ls * ls) : (e - 1.0f) - ls;
            out->sk[j] += (double)k * md;
            out->mk[j] = dw_torch_max (out->mk[j], k);
          }
    }
}

void
dw_correction_scalar_row_pass (const DwRowIn *in, DwRowOut *out)
{
  dw_correction_scalar_row_out_init (out);
  dw_correction_scalar_row_pass_from (in, out, 0);
}

void
dw_correction_scalar_row_pass_tail (const DwRowIn *in, DwRowOut *out, size_t t0)
{
  dw_correction_scalar_row_pass_from (in, out, t0);
}

void
dw_correction_scalar_sequence_weights (float *w, const float *m, float row_weight, float upper,
                                       float lower, bool icepop, size_t t0, size_t T)
{
  for (size_t t = t0; t < T; t++)
    {
      w[t] = dw_correction_sequence_applied (row_weight * m[t], upper, lower, icepop);
    }
}
