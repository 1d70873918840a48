/* dw-correction-fast.c — the float32 fast path: one streaming pass over the rows (§9.2)
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

/* mo[t] = mi[t] · keep[t] (keep ∈ {0, 1}) in the mask dtype; @keep NULL: every keep is 0. Float
 * masks multiply (−1·0 = −0, NaN stays NaN, as torch), integer and bool masks select. */
static void
dw_correction_fast_mask_row (DwDType dt, const void *mi, const float *keep, void *mo, size_t T)
{
#define SELECT_LOOP(TYPE)                           \
  do                                                \
    {                                               \
      const TYPE *restrict src = mi;                \
      TYPE *restrict dst = mo;                      \
      if (!keep)                                    \
        memset (dst, 0, T * sizeof (TYPE));         \
      else                                          \
        for (size_t t = 0; t < T; t++)              \
          dst[t] = keep[t] != 0 ? src[t] : (TYPE)0; \
    }                                               \
  while (0)
  switch (dt)
    {
    case DW_DTYPE_F32:
      {
        const float *restrict src = mi;
        float *restrict dst = mo;
        for (size_t t = 0; t < T; t++)
          dst[t] = src[t] * (keep ? keep[t] : 0.0f);
      }
      break;
    case DW_DTYPE_F64:
      {
        const double *restrict src = mi;
        double *restrict dst = mo;
        for (size_t t = 0; t < T; t++)
          dst[t] = src[t] * (keep ? (double)keep[t] : 0.0);
      }
      break;
    default:
      switch (dw_dtype_size (dt))
        {
        case 1:
          SELECT_LOOP (uint8_t);
          break;
        case 2:
          SELECT_LOOP (uint16_t);
          break;
        case 4:
          SELECT_LOOP (uint32_t);
          break;
        default:
          SELECT_LOOP (uint64_t);
          break;
        }
    }
#undef SELECT_LOOP
}

/* Every row is read once: its mask is converted to float in a small buffer, one fused pass
 * (dw_row_pass_*) returns all of the row's masked sums and writes its token weights, and the
 * row's RS decisions and output mask follow while the row is still in cache. Same formulas and
 * the same exp as the reference path above; only the order of additions inside a sum differs.
 * Returns 1 done, 0 error (set), -1 not applicable (the caller runs the reference path, which
 * also reports batch errors in verl's order). */
int
dw_correction_fast_run (const DwBatch *batch, const DwPlan *plan, DwCorrectionResult *res,
                        DwCorrectionError *error)
{
  if (dw_correction_simd_get_reference () || plan->generation != DW_GEN_VERL_0_7_1
      || batch->lp_dtype != DW_DTYPE_F32 || batch->mask_dtype == DW_DTYPE_BF16
      || batch->mask_dtype == DW_DTYPE_F16 || batch->mask_dtype >= DW_N_DTYPES)
    return -1;
  const size_t B = batch->rows, T = batch->cols, BT = B * T;
  if (B == 0 || T == 0 || BT / T != B)
    return -1;
  const DwPlan p = *plan;
  const size_t n_opt = p.rs_on ? p.rs.n : 0;
  float *rowbuf = dw_workspace_get (DW_WORKSPACE_FAST_ROW, 4 * T * sizeof (float));
  double *bbuf = dw_workspace_get (DW_WORKSPACE_FAST_B, (4 + n_opt) * B * sizeof (double));
  if (!rowbuf || !bbuf)
    return -1;
  float *mf = rowbuf, *lrow = rowbuf + T, *erow = rowbuf + 2 * T, *keep = rowbuf + 3 * T;
  double *nb = bbuf, *lrm = bbuf + B, *sm = bbuf + 2 * B, *rowsw = bbuf + 3 * B;
  double *svs = bbuf + 4 * B;
  const size_t msz = dw_dtype_size (batch->mask_dtype);
  const bool is_tok = p.is_on && p.is_level == DW_LEVEL_TOKEN;
  const bool is_seq = p.is_on && p.is_level != DW_LEVEL_TOKEN;
  float *W = p.is_on ? dw_workspace_alloc (BT * sizeof (float)) : NULL;
  unsigned char *MO = dw_workspace_alloc (BT * msz);
  if ((p.is_on && !W) || !MO)
    {
      free (W);
      free (MO);
      return -1;
    }
  DwContext c;
  memset (&c, 0, sizeof c);
  c.batch = batch;
  c.rows = B;
  c.cols = T;
  c.f32 = true;
  c.row_count = nb;

  DwRowIn in;
  memset (&in, 0, sizeof in);
  in.T = T;
  in.is_token = is_tok;
  in.bn = p.batch_normalize;
  const double Cd = p.is_on ? p.is_upper : 2.0;
  in.C = (float)Cd;
  in.c = (float)(1.0 / Cd);
  const double Cr = in.C, cr = in.c;
  bool any_tok_opt = false;
  for (size_t oi = 0; oi < n_opt; oi++)
    {
      const DwRsOption o = p.rs.bounds[oi].option;
      if (dw_rs_option_agg (o) == DW_RS_AGG_TOKEN)
        any_tok_opt = true;
      else
        in.need_k[dw_rs_option_k (o) - 1] = true;
    }
  if (any_tok_opt)
    {
      in.l = lrow;
      in.e = erow;
    }
  const bool simd = dw_correction_simd_enabled ();
  DwRatioSums ra = { 0, 0, 0, 0, 0, -INFINITY, INFINITY };
  DwRsSums racc[DW_RS_N_OPTIONS];
  for (size_t oi = 0; oi < n_opt; oi++)
    racc[oi] = (DwRsSums){ 0, 0, 0, 0, 0, -INFINITY, INFINITY, 0, 0 };
  DwOffpolicySums oa;
  dw_offpolicy_init (&oa);
  double N = 0, bn_s = 0, bn_nv = 0, rs_masked = 0, rs_rows_rej = 0;
  bool any = false;
  size_t n_valid_rows = 0;
  const float *O = batch->old_log_prob, *Rl = batch->rollout_log_prob;
  for (size_t b = 0; b < B; b++)
    {
      const size_t off = b * T;
      bool binary;
      if (!dw_correction_simd_mask_row_to_float (batch, off, T, mf, &binary))
        {
          free (W);
          free (MO);
          return -1;
        }
      in.o = O + off;
      in.r = Rl + off;
      in.m = mf;
      in.w = is_tok ? W + off : NULL;
      DwRowOut ro;
      if (simd && binary)
        dw_correction_simd_row_pass (&in, &ro);
      else
        dw_correction_simd_row_pass_scalar (&in, &ro);
      nb[b] = DW_ROUND (&c, ro.n);
      N += ro.n;
      any |= ro.n_valid > 0;
      n_valid_rows += nb[b] > 0;
      const double nvd = ro.n; /* Σ m over valid tokens */

      /* IS */
      if (is_tok)
        {
          ra.sw += ro.sw;
          ra.fh += ro.fh;
          ra.fl += ro.fl;
          ra.su += ro.su;
          ra.su2 += ro.su2;
          if (ro.n_valid)
            {
              ra.mx = dw_torch_max (ra.mx, ro.wmax);
              ra.mn = dw_torch_min (ra.mn, ro.wmin);
            }
          sm[b] = dw_context_row_mean (&c, ro.sw, b);
          bn_s += ro.swt;
        }
      else if (is_seq)
        {
          lrm[b] = DW_ROUND (&c, ro.sl);
          const float wb = expf ((float)dw_torch_clamp (lrm[b], -DW_SAFETY_BOUND, DW_SAFETY_BOUND));
          float *w = W + off;
          double rw = 0, rwt = 0;
          if (binary)
            {
              for (size_t t = 0; t < T; t++)
                {
                  const float x = wb * mf[t];
                  w[t] = x > in.C ? in.C : x;
                }
              if (ro.n_valid)
                {
                  const double x = wb;
                  ra.sw += x * nvd;
                  ra.fh += (x > Cr) * nvd;
                  ra.fl += (x < cr) * nvd;
                  ra.mx = dw_torch_max (ra.mx, x);
                  ra.mn = dw_torch_min (ra.mn, x);
                  const double u = dw_torch_clamp (x, cr, Cr);
                  ra.su += u * nvd;
                  ra.su2 += DW_ROUND (&c, u * u) * nvd;
                  rw = x * nvd;
                  rwt = (x > Cr ? Cr : x) * nvd;
                }
            }
          else
            for (size_t t = 0; t < T; t++)
              {
                const float xf = wb * mf[t];
                w[t] = xf > in.C ? in.C : xf;
                if (mf[t] == 0)
                  continue;
                const double mv = mf[t], x = xf;
                ra.sw += x * mv;
                rw += x * mv;
                ra.fh += (x > Cr) * mv;
                ra.fl += (x < cr) * mv;
                ra.mx = dw_torch_max (ra.mx, x);
                ra.mn = dw_torch_min (ra.mn, x);
                const double u = dw_torch_clamp (x, cr, Cr);
                ra.su += u * mv;
                ra.su2 += DW_ROUND (&c, u * u) * mv;
                rwt += (double)w[t] * mv;
              }
          sm[b] = dw_context_row_mean (&c, rw, b);
          rowsw[b] = rwt;
          if (nb[b] > 0)
            bn_s += dw_context_row_mean (&c, rwt, b), bn_nv += 1;
        }

      /* RS: seq options decide the whole row, token options each token */
      bool row_keep = true;
      if (any_tok_opt)
        for (size_t t = 0; t < T; t++)
          keep[t] = 1.0f;
      for (size_t oi = 0; oi < n_opt; oi++)
        {
          const DwRsBound *bd = &p.rs.bounds[oi];
          const int k = dw_rs_option_k (bd->option);
          const DwRsAgg agg = dw_rs_option_agg (bd->option);
          const bool k1 = k == 1;
          const double up_c = DW_ROUND (&c, bd->log_upper);
          const double lo_c = k1 ? DW_ROUND (&c, bd->log_lower) : 0.0;
          const double lo_metric = k1 ? lo_c : 0.0;
          DwRsSums *a = &racc[oi];
          double sv;
          bool row_rej = false;
          if (agg != DW_RS_AGG_TOKEN)
            {
              if (agg == DW_RS_AGG_MEAN)
                sv = dw_context_row_mean (&c, ro.sk[k - 1], b);
              else if (agg == DW_RS_AGG_SUM)
                sv = DW_ROUND (&c, ro.sk[k - 1]);
              else
                sv = ro.n_valid ? ro.mk[k - 1] : 0.0;
              const bool ks = k1 ? (sv <= up_c && sv >= lo_c) : (sv <= up_c);
              row_keep &= ks;
              if (ro.n_valid)
                {
                  a->sum_stat += sv * nvd;
                  const double u = dw_torch_clamp (sv, lo_metric, up_c);
                  a->su += u * nvd;
                  a->su2 += DW_ROUND (&c, u * u) * nvd;
                  a->masked += (1.0 - ks) * nvd;
                  row_rej = !ks;
                }
            }
          else
            {
              const float upf = (float)up_c, lof = (float)lo_c;
              double rs = 0;
              for (size_t t = 0; t < T; t++)
                {
                  const float ls
                    = (float)dw_torch_clamp (lrow[t], -DW_SAFETY_BOUND, DW_SAFETY_BOUND);
                  const float kt = k == 1 ? -ls : k == 2 ? 0.5f * (ls * ls) : (erow[t] - 1.0f) - ls;
                  const bool kp = k1 ? (kt <= upf && kt >= lof) : (kt <= upf);
                  keep[t] *= kp;
                  if (mf[t] == 0)
                    continue;
                  const double mv = mf[t], x = kt;
                  rs += x * mv;
                  a->sum_stat += x * mv;
                  a->mx = dw_torch_max (a->mx, x);
                  a->mn = dw_torch_min (a->mn, x);
                  a->fh += (x > up_c) * mv;
                  a->fl += (x < lo_metric) * mv;
                  const double u = dw_torch_clamp (x, lo_metric, up_c);
                  a->su += u * mv;
                  a->su2 += DW_ROUND (&c, u * u) * mv;
                  a->masked += (1.0 - kp) * mv;
                  row_rej |= !kp;
                }
              sv = dw_context_row_mean (&c, rs, b);
            }
          svs[oi * B + b] = sv;
          if (nb[b] > 0 && row_rej)
            a->seq_masked += 1;
        }

      /* output mask = m · keep, in the mask dtype */
      unsigned char *mo = MO + off * msz;
      const unsigned char *mi = (const unsigned char *)batch->response_mask + off * msz;
      if (n_opt == 0 || (row_keep && !any_tok_opt))
        memcpy (mo, mi, T * msz);
      else if (!row_keep)
        {
          /* the whole row rejected: Σ (1 − 0)·m over valid tokens is the row's Σ m */
          dw_correction_fast_mask_row (batch->mask_dtype, mi, NULL, mo, T);
          rs_masked += ro.n;
          rs_rows_rej += ro.n_valid > 0;
        }
      else
        {
          bool rej = false;
          double rm = 0;
          for (size_t t = 0; t < T; t++)
            {
              /* padding adds (1 − keep)·0 = 0 */
              rm += (1.0 - keep[t]) * mf[t];
              rej |= (mf[t] != 0) & (keep[t] == 0);
            }
          dw_correction_fast_mask_row (batch->mask_dtype, mi, keep, mo, T);
          rs_masked += rm;
          rs_rows_rej += rej;
        }

      /* off-policy: Σ(rollout − old)·m is −Σℓ·m term by term */
      oa.kl += -ro.sl;
      oa.k3 += ro.k3kl;
      oa.chi += ro.chi;
      dw_offpolicy_add_row (&c, &oa, b, ro.so, ro.sr, ro.sl);
    }
  if (!any)
    {
      free (W);
      free (MO);
      return -1; /* the reference path raises verl's error */
    }
  c.total = N;
  c.mean_denominator = DW_ROUND (&c, DW_ROUND (&c, N) + DW_MASKED_MEAN_EPS);

  DwMetricList L = { .prefix = "rollout_corr/" };
  if (p.is_on)
    {
      dw_ratio_metrics_emit (&c, &L, "rollout_is", &ra, is_seq ? lrm : NULL, p.is_upper,
                             1.0 / p.is_upper, sm, false);
      if (p.batch_normalize)
        {
          const double mu = is_tok ? dw_context_mean (&c, bn_s) : bn_s / fmax (bn_nv, 1e-8);
          if (mu > 1e-8)
            {
              const float mud = (float)mu;
              for (size_t i = 0; i < BT; i++)
                W[i] = W[i] / mud;
              dw_metric_list_put (&L, "rollout_is_batch_norm_factor", mu);
            }
          else
            dw_metric_list_put (&L, "rollout_is_batch_norm_factor", 1.0);
        }
      res->weights = W;
      res->weights_dtype = DW_DTYPE_F32;
    }
  for (size_t oi = 0; oi < n_opt; oi++)
    dw_verl_rs_emit_option (&c, &L, &p.rs.bounds[oi], &racc[oi], svs + oi * B, n_valid_rows);
  if (n_opt)
    {
      dw_metric_list_put (&L, "rollout_rs_masked_fraction", dw_context_mean (&c, rs_masked));
      dw_metric_list_put (&L, "rollout_rs_seq_masked_fraction", rs_rows_rej / (double)B);
    }
  res->mask = MO;
  res->mask_dtype = batch->mask_dtype;
  dw_offpolicy_emit (&c, &L, &oa, false);
  res->rows = B;
  res->cols = T;
  return dw_metric_list_finish (res, &L, error) ? 1 : 0;
}
