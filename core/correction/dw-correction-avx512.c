/* dw-correction-avx512.c — the fused per-row pass of the float32 fast path on AVX-512
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. The same formulas, the same exp (torch's, dw_torch_expf, bit for bit per
 * lane) and the same double sums as the AVX2 pass in dw-correction-simd.c, 16 tokens a step:
 * padding lanes are dropped by mask registers (zeroing conversions) instead of ANDs, the 0/1
 * counts are popcounts, and each sum has 8 double lanes (§9.2). Only the order of additions
 * inside a sum differs from the AVX2 and scalar passes; the tests pin which pass runs
 * (dw_correction_simd_set_level). Bound by the 512-bit ports, the pass saves vector operations
 * where the results allow (§9.2 "Where the AVX-512 pass spends its time"): verl v0.7.1's token
 * TIS sums clipped tokens apart, 2^q is one vscalefps, two steps interleave; on large batches
 * results are streamed and a row's output mask is written during the next row's pass.
 *
 * A numeric kernel: its locals are the spec's symbols (docs/CORRECTION.md §2, §3, §4), as in
 * dw-correction-simd.c (O, R, M, L, LS, E, EL, W, A, S, U, Y, Kv; d_* double lanes; TOK / K the
 * compile-time specialisation flags; v the valid-lane mask register; W2 = W², the clip_* sums
 * of clipped tokens).
 */
#include "dw-correction-private.h"
#include "dw-torch.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) \
  && !defined(DW_CORRECTION_NO_SIMD)
#include <immintrin.h>

#define VZ       __attribute__ ((target ("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))
#define SAFETY_F 20.0f

/* torch's float32 exp on 16 floats with |x| ≤ 104 or NaN: the operations of
 * dw_correction_simd_exp8_core in the same order, so every lane equals dw_torch_expf. q is
 * rounded to nearest even in the float register (as cvtps2dq then back), and 2^q is applied by
 * vscalefps in one rounding: u·2^⌊q/2⌋ is exact (u ∈ [0.7, 1.5], |q| ≤ 150, so it stays normal)
 * and the second product rounds once, so u·2^⌊q/2⌋·2^(q−⌊q/2⌋) is the single rounding of u·2^q,
 * subnormal and overflowing results included */
static VZ inline __m512
dw_correction_avx512_exp16_core (__m512 x)
{
  const __m512 qf = _mm512_roundscale_ps (_mm512_mul_ps (x, _mm512_set1_ps (DW_TORCH_EXPF_LOG2E)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 s = _mm512_fmadd_ps (qf, _mm512_set1_ps (DW_TORCH_EXPF_MINUS_LN2_HIGH), x);
  s = _mm512_fmadd_ps (qf, _mm512_set1_ps (DW_TORCH_EXPF_MINUS_LN2_LOW), s);
  __m512 u = _mm512_set1_ps (DW_TORCH_EXPF_C6);
  u = _mm512_fmadd_ps (u, s, _mm512_set1_ps (DW_TORCH_EXPF_C5));
  u = _mm512_fmadd_ps (u, s, _mm512_set1_ps (DW_TORCH_EXPF_C4));
  u = _mm512_fmadd_ps (u, s, _mm512_set1_ps (DW_TORCH_EXPF_C3));
  u = _mm512_fmadd_ps (u, s, _mm512_set1_ps (DW_TORCH_EXPF_C2));
  u = _mm512_fmadd_ps (u, s, _mm512_set1_ps (0.5f));
  u = _mm512_add_ps (_mm512_set1_ps (1.0f), _mm512_fmadd_ps (_mm512_mul_ps (s, s), u, s));
  return _mm512_scalef_ps (u, qf);
}

/* full range: below −104 is 0, above 100 is +∞, NaN stays NaN (as dw_torch_expf) */
static VZ inline __m512
dw_correction_avx512_exp16 (__m512 x)
{
  const __mmask16 low = _mm512_cmp_ps_mask (x, _mm512_set1_ps (-104.0f), _CMP_LT_OQ);
  const __mmask16 high = _mm512_cmp_ps_mask (x, _mm512_set1_ps (100.0f), _CMP_GT_OQ);
  const __mmask16 nan = _mm512_cmp_ps_mask (x, x, _CMP_UNORD_Q);
  const __m512 inside
    = _mm512_max_ps (_mm512_set1_ps (-104.0f), _mm512_min_ps (_mm512_set1_ps (100.0f), x));
  __m512 y = dw_correction_avx512_exp16_core (_mm512_mask_blend_ps (nan, inside, x));
  y = _mm512_mask_blend_ps (low, y, _mm512_setzero_ps ());
  return _mm512_mask_blend_ps (high, y, _mm512_set1_ps (INFINITY));
}

static VZ void
dw_correction_avx512_expf_array_body (const float *x, float *y, size_t n)
{
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps (y + i, dw_correction_avx512_exp16 (_mm512_loadu_ps (x + i)));
  for (; i < n; i++)
    y[i] = dw_torch_expf (x[i]);
}

/* The valid lanes of a step. Every sum takes the 16 lanes as two halves of 8 doubles; the mask
 * of each half is kept as it comes (from the two int64 compares of the fused mask), so no mask
 * register is split per sum. */
typedef struct
{
  __mmask16 all;
  __mmask8 low, high;
} DwAvx512Valid;

/* the valid lanes of 16 floats added to an 8-lane double sum: the two halves are converted
 * (padding lanes as 0) and added first, one add on the loop-carried chain */
static VZ inline __m512d
dw_correction_avx512_acc (__m512d acc, __m512 v, DwAvx512Valid valid)
{
  const __m512d lo = _mm512_maskz_cvtps_pd (valid.low, _mm512_castps512_ps256 (v));
  const __m512d hi = _mm512_maskz_cvtps_pd (valid.high, _mm512_extractf32x8_ps (v, 1));
  return _mm512_add_pd (acc, _mm512_add_pd (lo, hi));
}

/* the same for 16 floats still in memory: converted from there, no lane extraction */
static VZ inline __m512d
dw_correction_avx512_acc_load (__m512d acc, const float *p, DwAvx512Valid valid)
{
  const __m512d lo = _mm512_maskz_cvtps_pd (valid.low, _mm256_loadu_ps (p));
  const __m512d hi = _mm512_maskz_cvtps_pd (valid.high, _mm256_loadu_ps (p + 8));
  return _mm512_add_pd (acc, _mm512_add_pd (lo, hi));
}

static VZ inline float
dw_correction_avx512_hmax (__m512 v)
{
  float lanes[16];
  _mm512_storeu_ps (lanes, v);
  float best = lanes[0];
  for (int i = 1; i < 16; i++)
    best = lanes[i] > best ? lanes[i] : best;
  return best;
}

static VZ inline float
dw_correction_avx512_hmin (__m512 v)
{
  float lanes[16];
  _mm512_storeu_ps (lanes, v);
  float best = lanes[0];
  for (int i = 1; i < 16; i++)
    best = lanes[i] < best ? lanes[i] : best;
  return best;
}

/* a sum's 8 double lanes, added in a fixed order */
static VZ inline double
dw_correction_avx512_hsum (__m512d v)
{
  const __m256d half = _mm256_add_pd (_mm512_castpd512_pd256 (v), _mm512_extractf64x4_pd (v, 1));
  const __m128d quarter
    = _mm_add_pd (_mm256_castpd256_pd128 (half), _mm256_extractf128_pd (half, 1));
  return _mm_cvtsd_f64 (_mm_add_sd (quarter, _mm_unpackhi_pd (quarter, quarter)));
}

/* PLAIN: verl v0.7.1's token TIS (no applied-weight metrics, no IcePop, no batch normalisation)
 * as compile-time facts, so the unused sums leave the registers to the ones in use */
#define APPLIED(PLAIN)   (!(PLAIN) && in->applied)
#define ICEPOP(PLAIN)    (!(PLAIN) && in->icepop)
#define NORMALISE(PLAIN) (!(PLAIN) && in->bn)

/* PLAIN token TIS splits its sums by whether a token's weight is clipped (W > C or W < c, rare):
 * sw and chi sum the unclipped tokens' W and W² (= E, E² on a binary row's valid tokens), and the
 * clipped tokens go to clip_w, clip_w2 (their W, W²) and su, su2 (their clamped U, U²). Every
 * batch sum is then two sums of the same terms as before (Σ W = unclipped + clipped W, Σ U =
 * unclipped W + clipped U, ...): only the grouping of the additions changes, no term cancels. */
typedef struct
{
  __m512d so, sr, sl, k3, chi, sw, swr, su, su2, swt, sk[3], clip_w, clip_w2;
  size_t n_valid, fh, fl;
  __m512 wmax, wmin, kmax[3];
} DwAvx512Sums;

/* what a step reads of the row's settings, read once per row: the thresholds as vectors, and
 * whether the weights are streamed (DwRowIn.stream_w) */
typedef struct
{
  __m512 upper, lower;
  bool stream;
} DwAvx512Row;

/* 16 weights to @pw: streamed past the caches (a large result, @pw on a cache line) or stored */
static VZ inline void
dw_correction_avx512_store_weights (float *pw, __m512 weights, bool stream)
{
  if (stream)
    _mm512_stream_ps (pw, weights);
  else
    _mm512_storeu_ps (pw, weights);
}

/* the lanes of @lanes as a valid-lane set */
static VZ inline DwAvx512Valid
dw_correction_avx512_valid (__mmask16 lanes)
{
  return (DwAvx512Valid){ lanes, (__mmask8)lanes, (__mmask8)(lanes >> 8) };
}

/* a PLAIN step with a clipped token: the split sums of the struct comment above */
static VZ void
dw_correction_avx512_token_clipped (DwAvx512Sums *d, __m512 W, __m512 W2, DwAvx512Valid v,
                                    __mmask16 gt, __mmask16 lt, DwAvx512Row bounds)
{
  const DwAvx512Valid clipped = dw_correction_avx512_valid (gt | lt);
  const DwAvx512Valid kept = dw_correction_avx512_valid (v.all & ~clipped.all);
  const __m512 U = _mm512_min_ps (bounds.upper, _mm512_max_ps (bounds.lower, W));
  d->sw = dw_correction_avx512_acc (d->sw, W, kept);
  d->chi = dw_correction_avx512_acc (d->chi, W2, kept);
  d->clip_w = dw_correction_avx512_acc (d->clip_w, W, clipped);
  d->clip_w2 = dw_correction_avx512_acc (d->clip_w2, W2, clipped);
  d->su = dw_correction_avx512_acc (d->su, U, clipped);
  d->su2 = dw_correction_avx512_acc (d->su2, _mm512_mul_ps (U, U), clipped);
  d->fh += (size_t)__builtin_popcount ((unsigned)gt);
  d->fl += (size_t)__builtin_popcount ((unsigned)lt);
}

/* phase 1 of a PLAIN step (verl v0.7.1's token TIS): the weights min (C, W) (W > C ? C : W, and
 * W when W is NaN), W's extremes, and the unclipped sums unless a token is clipped */
static VZ inline __attribute__ ((always_inline)) void
dw_correction_avx512_token_plain (DwAvx512Sums *d, float *pw, __m512 E, __m512 M, DwAvx512Valid v,
                                  DwAvx512Row bounds, bool stream)
{
  const __m512 W = _mm512_mul_ps (E, M);
  dw_correction_avx512_store_weights (pw, _mm512_min_ps (bounds.upper, W), stream);
  const __m512 W2 = _mm512_mul_ps (W, W);
  const __mmask16 gt = _mm512_mask_cmp_ps_mask (v.all, W, bounds.upper, _CMP_GT_OQ);
  const __mmask16 lt = _mm512_mask_cmp_ps_mask (v.all, W, bounds.lower, _CMP_LT_OQ);
  d->wmax = _mm512_mask_max_ps (d->wmax, v.all, d->wmax, W);
  d->wmin = _mm512_mask_min_ps (d->wmin, v.all, d->wmin, W);
  if (__builtin_expect ((gt | lt) == 0, 1))
    {
      d->sw = dw_correction_avx512_acc (d->sw, W, v);
      d->chi = dw_correction_avx512_acc (d->chi, W2, v);
    }
  else
    dw_correction_avx512_token_clipped (d, W, W2, v, gt, lt, bounds);
}

/* phase 1 of a step: the token-IS part (weights, their sums, counts and extremes) */
static VZ inline __attribute__ ((always_inline)) void
dw_correction_avx512_token (const DwRowIn *in, DwAvx512Sums *d, float *pw, __m512 E, __m512 M,
                            DwAvx512Valid v, DwAvx512Row bounds, const bool PLAIN)
{
  const __m512 Cv = bounds.upper, cv = bounds.lower;
  const __m512 low = APPLIED (PLAIN) ? _mm512_setzero_ps () : cv;
  const __m512 W = _mm512_mul_ps (E, M);
  /* IcePop keeps W inside [c, C] (NaN is not inside: 0); TIS truncates at C: min (C, W) is
   * W > C ? C : W, and W when W is NaN (vminps returns its second operand then) */
  const __m512 A
    = ICEPOP (PLAIN) ? _mm512_maskz_mov_ps (
        _mm512_cmp_ps_mask (W, cv, _CMP_GE_OQ) & _mm512_cmp_ps_mask (W, Cv, _CMP_LE_OQ), W)
                     : _mm512_min_ps (Cv, W);
  dw_correction_avx512_store_weights (pw, A, bounds.stream);
  const __m512 S = APPLIED (PLAIN) ? A : W;
  d->sw = dw_correction_avx512_acc (d->sw, S, v);
  if (APPLIED (PLAIN))
    d->swr = dw_correction_avx512_acc (d->swr, W, v);
  d->fh
    += (size_t)__builtin_popcount ((unsigned)_mm512_mask_cmp_ps_mask (v.all, W, Cv, _CMP_GT_OQ));
  d->fl
    += (size_t)__builtin_popcount ((unsigned)_mm512_mask_cmp_ps_mask (v.all, W, cv, _CMP_LT_OQ));
  /* CLAMP (S, low, C) as the reference path: min (max (S, low), C), NaN stays NaN (the max and
   * min return their second operand, S, for a NaN) */
  const __m512 U = _mm512_min_ps (Cv, _mm512_max_ps (low, S));
  d->su = dw_correction_avx512_acc (d->su, U, v);
  d->su2 = dw_correction_avx512_acc (d->su2, _mm512_mul_ps (U, U), v);
  if (NORMALISE (PLAIN))
    d->swt = dw_correction_avx512_acc (d->swt, A, v);
  d->wmax = _mm512_mask_max_ps (d->wmax, v.all, d->wmax, S);
  d->wmin = _mm512_mask_min_ps (d->wmin, v.all, d->wmin, S);
}

/* phase 2: the per-token sums every row needs, and the k statistics of bit set K */
static VZ inline __attribute__ ((always_inline)) void
dw_correction_avx512_common (DwAvx512Sums *d, const float *po, const float *pr, __m512 L, __m512 LS,
                             __m512 E, DwAvx512Valid v, const unsigned K, const bool CHI)
{
  const __m512 one = _mm512_set1_ps (1.0f);
  __m512 EL = E;
  /* |ℓ| > 20: SAFE(ℓ) differs from ℓ (never for NaN) */
  const __mmask16 big = _mm512_mask_cmp_ps_mask (v.all, L, LS, _CMP_NEQ_OQ);
  if (__builtin_expect (big != 0, 0))
    EL = _mm512_mask_blend_ps (big, E, dw_correction_avx512_exp16 (L));
  d->n_valid += (size_t)__builtin_popcount ((unsigned)v.all);
  d->so = dw_correction_avx512_acc_load (d->so, po, v);
  d->sr = dw_correction_avx512_acc_load (d->sr, pr, v);
  d->sl = dw_correction_avx512_acc (d->sl, L, v);
  d->k3 = dw_correction_avx512_acc (d->k3, _mm512_sub_ps (_mm512_sub_ps (EL, L), one), v);
  /* E is NaN exactly where ℓ is (SAFE keeps NaN, exp of a clamped value is finite), and a
   * finite E² sums to a finite value: a NaN in χ²'s sum is the row's NaN flag */
  if (CHI) /* else the PLAIN token phase sums W² = E² */
    d->chi = dw_correction_avx512_acc (d->chi, _mm512_mul_ps (E, E), v);
  for (int j = 0; j < 3; j++)
    if (K & (1u << j))
      {
        const __m512 Kv = j == 0   ? _mm512_xor_ps (LS, _mm512_set1_ps (-0.0f))
                          : j == 1 ? _mm512_mul_ps (_mm512_set1_ps (0.5f), _mm512_mul_ps (LS, LS))
                                   : _mm512_sub_ps (_mm512_sub_ps (E, one), LS);
        d->sk[j] = dw_correction_avx512_acc (d->sk[j], Kv, v);
        d->kmax[j] = _mm512_mask_max_ps (d->kmax[j], v.all, d->kmax[j], Kv);
      }
}

/* phase 3: the lanes folded into the row's results */
static VZ inline __attribute__ ((always_inline)) void
dw_correction_avx512_finish (const DwRowIn *in, const DwAvx512Sums *d, DwRowOut *out,
                             const bool TOK, const unsigned K, const bool PLAIN)
{
  dw_correction_scalar_row_out_init (out);
  out->n = (double)d->n_valid; /* binary rows: Σm = # valid */
  out->n_valid = d->n_valid;
  out->so = dw_correction_avx512_hsum (d->so);
  out->sr = dw_correction_avx512_hsum (d->sr);
  out->sl = dw_correction_avx512_hsum (d->sl);
  out->k3kl = dw_correction_avx512_hsum (d->k3);
  if (TOK && PLAIN)
    {
      /* the split sums joined (struct comment) */
      const double kept_w = dw_correction_avx512_hsum (d->sw);
      const double kept_w2 = dw_correction_avx512_hsum (d->chi);
      out->chi = kept_w2 + dw_correction_avx512_hsum (d->clip_w2);
      out->sw = kept_w + dw_correction_avx512_hsum (d->clip_w);
      out->su = kept_w + dw_correction_avx512_hsum (d->su);
      out->su2 = kept_w2 + dw_correction_avx512_hsum (d->su2);
    }
  else
    {
      out->chi = dw_correction_avx512_hsum (d->chi);
      out->sw = dw_correction_avx512_hsum (d->sw);
      out->su = dw_correction_avx512_hsum (d->su);
      out->su2 = dw_correction_avx512_hsum (d->su2);
    }
  const bool has_nan = isnan (out->chi);
  if (TOK)
    {
      out->sw_raw = APPLIED (PLAIN) ? dw_correction_avx512_hsum (d->swr) : out->sw;
      out->fh = (double)d->fh;
      out->fl = (double)d->fl;
      out->swt = dw_correction_avx512_hsum (d->swt);
      if (d->n_valid)
        {
          /* IcePop's applied weights are never NaN (a NaN ratio is not inside the bounds) */
          const bool weight_nan = has_nan && !(APPLIED (PLAIN) && ICEPOP (PLAIN));
          out->wmax = weight_nan ? NAN : dw_correction_avx512_hmax (d->wmax);
          out->wmin = weight_nan ? NAN : dw_correction_avx512_hmin (d->wmin);
        }
    }
  for (int j = 0; j < 3; j++)
    if (K & (1u << j))
      {
        out->sk[j] = dw_correction_avx512_hsum (d->sk[j]);
        if (d->n_valid)
          out->mk[j] = has_nan ? NAN : dw_correction_avx512_hmax (d->kmax[j]);
      }
}

/* the mask of step @t: from the int64 row (FUSED: the valid lanes by two compares, the float
 * mask as 0/1 where a value is not 0 or 1 only sets @seen's other bits) or from the float row */
static VZ inline __attribute__ ((always_inline)) __m512
dw_correction_avx512_mask_step (const int64_t *mask_i64, const float *pm, float *mask_out, size_t t,
                                __m512i *seen, DwAvx512Valid *v, const bool FUSED)
{
  if (FUSED)
    {
      const __m512i low = _mm512_loadu_si512 ((const void *)(mask_i64 + t));
      const __m512i high = _mm512_loadu_si512 ((const void *)(mask_i64 + t + 8));
      *seen = _mm512_ternarylogic_epi64 (*seen, low, high, 0xfe); /* seen | low | high */
      v->low = _mm512_test_epi64_mask (low, low);
      v->high = _mm512_test_epi64_mask (high, high);
      v->all = _mm512_kunpackb (v->high, v->low);
      const __m512 M = _mm512_maskz_mov_ps (v->all, _mm512_set1_ps (1.0f));
      if (mask_out)
        _mm512_storeu_ps (mask_out + t, M);
      return M;
    }
  const __m512 M = _mm512_loadu_ps (pm + t);
  v->all = _mm512_cmp_ps_mask (M, _mm512_setzero_ps (), _CMP_NEQ_UQ);
  v->low = (__mmask8)v->all;
  v->high = (__mmask8)(v->all >> 8);
  return M;
}

/* one step's values before any sum: the valid lanes, the mask, ℓ, SAFE(ℓ), exp(SAFE ℓ) */
typedef struct
{
  DwAvx512Valid v;
  __m512 M, L, LS, E;
} DwAvx512Step;

/* 16 values of the previous row's output mask (DwRowIn.defer_to), whole lines streamed when
 * the row starts on one */
static VZ inline void
dw_correction_avx512_defer_step (int64_t *to, const int64_t *from, size_t t, bool stream)
{
  const __m512i low
    = from ? _mm512_loadu_si512 ((const void *)(from + t)) : _mm512_setzero_si512 ();
  const __m512i high
    = from ? _mm512_loadu_si512 ((const void *)(from + t + 8)) : _mm512_setzero_si512 ();
  if (stream)
    {
      _mm512_stream_si512 ((void *)(to + t), low);
      _mm512_stream_si512 ((void *)(to + t + 8), high);
    }
  else
    {
      _mm512_storeu_si512 ((void *)(to + t), low);
      _mm512_storeu_si512 ((void *)(to + t + 8), high);
    }
}

static VZ inline __attribute__ ((always_inline)) DwAvx512Step
dw_correction_avx512_front (const DwRowIn *in, const int64_t *mask_i64, float *mask_out, size_t t,
                            __m512i *seen, const bool FUSED)
{
  DwAvx512Step step;
  if (FUSED && in->defer_to)
    dw_correction_avx512_defer_step (in->defer_to, in->defer_from, t,
                                     ((uintptr_t)in->defer_to & 63) == 0);
  step.M = dw_correction_avx512_mask_step (mask_i64, in->m, mask_out, t, seen, &step.v, FUSED);
  step.L = _mm512_sub_ps (_mm512_loadu_ps (in->o + t), _mm512_loadu_ps (in->r + t));
  if (in->l)
    _mm512_storeu_ps (in->l + t, step.L);
  /* min/max keep NaN */
  step.LS
    = _mm512_min_ps (_mm512_set1_ps (SAFETY_F), _mm512_max_ps (_mm512_set1_ps (-SAFETY_F), step.L));
  step.E = dw_correction_avx512_exp16_core (step.LS);
  if (in->e)
    _mm512_storeu_ps (in->e + t, step.E);
  return step;
}

/* the step's weights and sums */
static VZ inline __attribute__ ((always_inline)) void
dw_correction_avx512_back (const DwRowIn *in, DwAvx512Sums *d, const DwAvx512Step *step, size_t t,
                           DwAvx512Row bounds, const bool TOK, const unsigned K, const bool PLAIN)
{
  if (step->v.all == 0)
    {
      /* padding only: the weight is exp(SAFE ℓ)·m = ±0, or NaN for NaN ℓ (IcePop: 0) */
      if (TOK && ICEPOP (PLAIN))
        dw_correction_avx512_store_weights (in->w + t, _mm512_setzero_ps (), bounds.stream);
      else if (TOK)
        dw_correction_avx512_store_weights (
          in->w + t,
          _mm512_mul_ps (_mm512_mask_blend_ps (_mm512_cmp_ps_mask (step->L, step->L, _CMP_UNORD_Q),
                                               _mm512_set1_ps (1.0f), step->L),
                         step->M),
          bounds.stream);
      return;
    }
  if (TOK && PLAIN)
    dw_correction_avx512_token_plain (d, in->w + t, step->E, step->M, step->v, bounds,
                                      bounds.stream);
  else if (TOK)
    dw_correction_avx512_token (in, d, in->w + t, step->E, step->M, step->v, bounds, PLAIN);
  dw_correction_avx512_common (d, in->o + t, in->r + t, step->L, step->LS, step->E, step->v, K,
                               !(TOK && PLAIN));
}

/* The row pass body, specialised by the callers below (TOK, K compile-time constants) */
static VZ inline __attribute__ ((always_inline)) void
dw_correction_avx512_body (const DwRowIn *in, DwRowOut *out, const bool TOK, const unsigned K,
                           const bool FUSED, const bool PLAIN)
{
  const size_t T = in->T;
  const int64_t *restrict mask_i64 = in->m_i64;
  /* the float row is written where the caller needs it, else only its tail (the scalar pass of
   * the tail reads it) */
  float *restrict mask_out = in->skip_mask_row ? NULL : in->m_out;
  out->mask_not_binary = false;
  const DwAvx512Row bounds = { _mm512_set1_ps (in->C), _mm512_set1_ps (in->c), in->stream_w };
  const __m512 ninf = _mm512_set1_ps (-INFINITY), pinf = _mm512_set1_ps (INFINITY);
  const __m512d dzero = _mm512_setzero_pd ();
  /* every field set one by one: an aggregate initialiser zero-fills the whole struct first
   * (a rep stos of 1 KB a row, a tenth of the time of a 64-token row) */
  DwAvx512Sums d;
  d.so = d.sr = d.sl = d.k3 = d.chi = d.sw = d.swr = d.su = d.su2 = d.swt = dzero;
  d.sk[0] = d.sk[1] = d.sk[2] = d.clip_w = d.clip_w2 = dzero;
  d.n_valid = d.fh = d.fl = 0;
  d.wmax = d.kmax[0] = d.kmax[1] = d.kmax[2] = ninf;
  d.wmin = pinf;
  __m512i seen = _mm512_setzero_si512 ();
  size_t t = 0;
  /* two steps at a time: their exp chains (≈ 50 cycles of latency each) overlap */
  for (; t + 32 <= T; t += 32)
    {
      const DwAvx512Step first
        = dw_correction_avx512_front (in, mask_i64, mask_out, t, &seen, FUSED);
      const DwAvx512Step second
        = dw_correction_avx512_front (in, mask_i64, mask_out, t + 16, &seen, FUSED);
      dw_correction_avx512_back (in, &d, &first, t, bounds, TOK, K, PLAIN);
      dw_correction_avx512_back (in, &d, &second, t + 16, bounds, TOK, K, PLAIN);
    }
  for (; t + 16 <= T; t += 16)
    {
      const DwAvx512Step step
        = dw_correction_avx512_front (in, mask_i64, mask_out, t, &seen, FUSED);
      dw_correction_avx512_back (in, &d, &step, t, bounds, TOK, K, PLAIN);
    }
  if (FUSED)
    {
      bool bad = _mm512_test_epi64_mask (seen, _mm512_set1_epi64 (~(int64_t)1)) != 0;
      for (size_t tail = t; tail < T; tail++)
        {
          bad |= mask_i64[tail] != 0 && mask_i64[tail] != 1;
          in->m_out[tail] = (float)mask_i64[tail];
        }
      if (bad)
        {
          out->mask_not_binary = true;
          out->deferred = in->defer_to ? t : 0;
          return;
        }
    }
  dw_correction_avx512_finish (in, &d, out, TOK, K, PLAIN);
  out->deferred = FUSED && in->defer_to ? t : 0;
  dw_correction_scalar_row_pass_tail (in, out, t);
}

#define ROW_PASS(NAME, TOK, K, PLAIN)                            \
  static VZ void NAME (const DwRowIn *in, DwRowOut *out)         \
  {                                                              \
    if (in->m_i64)                                               \
      dw_correction_avx512_body (in, out, TOK, K, true, PLAIN);  \
    else                                                         \
      dw_correction_avx512_body (in, out, TOK, K, false, PLAIN); \
  }
/* the presets' combinations: no IS / token IS × no k / k1 / k3; other k sets compute all three */
ROW_PASS (dw_correction_avx512_pass_n0, false, 0, false)
ROW_PASS (dw_correction_avx512_pass_t0, true, 0, false)
ROW_PASS (dw_correction_avx512_pass_n1, false, 1, false)
ROW_PASS (dw_correction_avx512_pass_t1, true, 1, false)
ROW_PASS (dw_correction_avx512_pass_n4, false, 4, false)
ROW_PASS (dw_correction_avx512_pass_t4, true, 4, false)
ROW_PASS (dw_correction_avx512_pass_n7, false, 7, false)
ROW_PASS (dw_correction_avx512_pass_t7, true, 7, false)
ROW_PASS (dw_correction_avx512_pass_p0, true, 0, true)
ROW_PASS (dw_correction_avx512_pass_p1, true, 1, true)
ROW_PASS (dw_correction_avx512_pass_p4, true, 4, true)
#undef ROW_PASS
#undef APPLIED
#undef ICEPOP
#undef NORMALISE

void
dw_correction_avx512_row_pass (const DwRowIn *in, DwRowOut *out)
{
  const unsigned k
    = (unsigned)in->need_k[0] | (unsigned)in->need_k[1] << 1 | (unsigned)in->need_k[2] << 2;
  const bool plain = in->is_token && !in->applied && !in->icepop && !in->bn;
  if (plain && (k == 0 || k == 1 || k == 4))
    (k == 0   ? dw_correction_avx512_pass_p0
     : k == 1 ? dw_correction_avx512_pass_p1
              : dw_correction_avx512_pass_p4) (in, out);
  else if (k == 0)
    (in->is_token ? dw_correction_avx512_pass_t0 : dw_correction_avx512_pass_n0) (in, out);
  else if (k == 1)
    (in->is_token ? dw_correction_avx512_pass_t1 : dw_correction_avx512_pass_n1) (in, out);
  else if (k == 4)
    (in->is_token ? dw_correction_avx512_pass_t4 : dw_correction_avx512_pass_n4) (in, out);
  else
    {
      /* a k set the presets do not use: every k is computed, the unwanted ones not returned */
      (in->is_token ? dw_correction_avx512_pass_t7 : dw_correction_avx512_pass_n7) (in, out);
      for (int j = 0; j < 3; j++)
        if (!in->need_k[j])
          {
            out->sk[j] = 0;
            out->mk[j] = -INFINITY;
          }
    }
}

void
dw_correction_avx512_expf_array (const float *x, float *y, size_t n)
{
  dw_correction_avx512_expf_array_body (x, y, n);
}

/* a binary row's sequence-IS weights: raw = ρ·m, IcePop keeps raw inside [lower, upper] (else
 * 0, NaN too), TIS min(raw, upper) (NaN stays NaN) — the scalar formulas, lane by lane */
VZ void
dw_correction_avx512_sequence_weights (float *w, const float *m, float row_weight, float upper,
                                       float lower, bool icepop, size_t T, bool stream)
{
  const __m512 rho = _mm512_set1_ps (row_weight), hi = _mm512_set1_ps (upper),
               lo = _mm512_set1_ps (lower);
  size_t t = 0;
  for (; t + 16 <= T; t += 16)
    {
      const __m512 raw = _mm512_mul_ps (rho, _mm512_loadu_ps (m + t));
      const __m512 A = icepop
                         ? _mm512_maskz_mov_ps (_mm512_cmp_ps_mask (raw, lo, _CMP_GE_OQ)
                                                  & _mm512_cmp_ps_mask (raw, hi, _CMP_LE_OQ),
                                                raw)
                         : _mm512_mask_blend_ps (_mm512_cmp_ps_mask (raw, hi, _CMP_GT_OQ), raw, hi);
      dw_correction_avx512_store_weights (w + t, A, stream);
    }
  for (; t < T; t++)
    {
      const float raw = row_weight * m[t];
      w[t] = icepop ? (raw >= lower && raw <= upper ? raw : 0.0f) : (raw > upper ? upper : raw);
    }
}

/* @bytes at @target: a copy of @source, or zeros (@source NULL), the whole cache lines streamed
 * past the caches (non-temporal stores: a large result is not read back soon, and its lines
 * need not be read first) */
VZ void
dw_correction_avx512_stream_row (void *target, const void *source, size_t bytes)
{
  unsigned char *to = target;
  const unsigned char *from = source;
  size_t head = (64 - ((uintptr_t)to & 63)) & 63;
  head = head < bytes ? head : bytes;
  if (from)
    memcpy (to, from, head);
  else
    memset (to, 0, head);
  size_t done = head;
  for (; done + 64 <= bytes; done += 64)
    _mm512_stream_si512 ((void *)(to + done), from
                                                ? _mm512_loadu_si512 ((const void *)(from + done))
                                                : _mm512_setzero_si512 ());
  if (from)
    memcpy (to + done, from + done, bytes - done);
  else
    memset (to + done, 0, bytes - done);
}

/* orders the streamed stores before the result is handed on */
VZ void
dw_correction_avx512_stream_fence (void)
{
  _mm_sfence ();
}

/* an int64 mask row to float; false when a value is not 0 or 1 */
VZ bool
dw_correction_avx512_mask_i64 (const int64_t *p, size_t T, float *mf)
{
  size_t t = 0;
  const __m512i not1 = _mm512_set1_epi64 (~(int64_t)1);
  __mmask8 bad = 0;
  for (; t + 8 <= T; t += 8)
    {
      const __m512i v = _mm512_loadu_si512 ((const void *)(p + t));
      bad |= _mm512_test_epi64_mask (v, not1);
      _mm256_storeu_ps (mf + t, _mm512_cvtepi64_ps (v));
    }
  if (bad)
    return false;
  for (; t < T; t++)
    {
      if (p[t] != 0 && p[t] != 1)
        return false;
      mf[t] = (float)p[t];
    }
  return true;
}

bool
dw_correction_avx512_supported (void)
{
  __builtin_cpu_init ();
  return __builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512dq")
         && __builtin_cpu_supports ("avx512bw") && __builtin_cpu_supports ("avx512vl")
         && __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
}

#else

void
dw_correction_avx512_stream_row (void *target, const void *source, size_t bytes)
{
  if (source)
    memcpy (target, source, bytes);
  else
    memset (target, 0, bytes);
}

void
dw_correction_avx512_stream_fence (void)
{
}

void
dw_correction_avx512_sequence_weights (float *w, const float *m, float row_weight, float upper,
                                       float lower, bool icepop, size_t T, bool stream)
{
  (void)stream;
  for (size_t t = 0; t < T; t++)
    {
      const float raw = row_weight * m[t];
      w[t] = icepop ? (raw >= lower && raw <= upper ? raw : 0.0f) : (raw > upper ? upper : raw);
    }
}

void
dw_correction_avx512_expf_array (const float *x, float *y, size_t n)
{
  for (size_t i = 0; i < n; i++)
    y[i] = dw_torch_expf (x[i]);
}

void
dw_correction_avx512_row_pass (const DwRowIn *in, DwRowOut *out)
{
  dw_correction_scalar_row_pass (in, out);
}

bool
dw_correction_avx512_mask_i64 (const int64_t *p, size_t T, float *mf)
{
  (void)p;
  (void)T;
  (void)mf;
  return false;
}

bool
dw_correction_avx512_supported (void)
{
  return false;
}

#endif
