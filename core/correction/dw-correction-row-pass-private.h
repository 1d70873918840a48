/* dw-correction-row-pass-private.h — the fused per-row pass of the float32 fast path, written once
 * for every vector width
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. A template, not an interface: dw-correction-avx512.c (16 lanes) and
 * dw-correction-simd.c (AVX2, 8 lanes) each include it once, after defining their vector layer,
 * and compile it with their own target attributes. The algorithm — the three phases of a step,
 * the padding-only steps, the split sums of verl v0.7.1's token TIS, two steps interleaved, the
 * fused int64 mask and the deferred output mask, the reductions and the scalar tail — is here,
 * and so are the sequence-IS weights and the streamed rows of large batches;
 * what differs between the instruction sets (exp's 2^q, mask registers against lane masks, the
 * double lanes of a sum) is in the layer. The operations are chosen so that each lane gets the
 * same bits on every width (min (C, W) is W > C ? C : W and keeps NaN on both): only the order
 * of additions inside a sum depends on the width (§9.2).
 *
 * The including file defines, before the #include:
 *   DW_ROW(name)      the name of a function of the pass (its file's prefix + name)
 *   DW_ROW_MM(name)   the intrinsic of the width (_mm512_name, _mm256_name) for the operations
 *                     both widths name alike: set1_ps, setzero_ps, setzero_pd, loadu_ps, storeu_ps,
 *                     stream_ps, mul_ps, sub_ps, min_ps, max_ps (the second operand is returned
 *                     for a NaN), xor_ps
 *   DW_ROW_TARGET     the target attribute of the pass's functions
 *   DW_ROW_LANES      floats per vector
 *   DwRowVec          a vector of floats; DwRowAcc: a double-lane sum
 *   DwRowLanes        a set of lanes (a compare's result)
 *   DwRowValid        the valid lanes of a step (.all: as a DwRowLanes)
 *   DwRowSeen         the OR of the int64 mask values read so far (the fused mask)
 * and these static inline functions (named by DW_ROW), where the widths differ:
 *   blend (lanes ? b : a), inside (w where lower ≤ w ≤ upper, else 0), exp_core, exp
 *   (dw_torch_expf lane by lane), gt, lt, neq (compares restricted to valid lanes), nan_lanes,
 *   lanes_or, lanes_none, count, valid_of, valid_minus, acc, acc_load, hsum, max_in, min_in,
 *   mask_step, defer_step, seen_zero, seen_bad, stream_line (64 bytes streamed: a copy or zeros).
 * It defines DW_ROW (dispatch), the row pass, and DW_ROW (sequence_weights_body),
 * DW_ROW (stream_row_body): the other results the fast path writes with vectors.
 *
 * A numeric kernel: its locals are the spec's symbols (docs/CORRECTION.md §2, §3, §4), as in the
 * including files (O, R, M, L, LS, E, EL, W, A, S, U, Kv; TOK / K / PLAIN / FUSED the compile-time
 * specialisation flags; v the valid lanes; W2 = W², the clip_* sums of clipped tokens).
 */
#pragma once

#include "dw-correction-private.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* the largest (LARGEST) or smallest of a vector's lanes, taken in lane order */
static DW_ROW_TARGET inline float
DW_ROW (extreme) (DwRowVec v, const bool LARGEST)
{
  float lanes[DW_ROW_LANES];
  DW_ROW_MM (storeu_ps) (lanes, v);
  float best = lanes[0];
  for (int i = 1; i < DW_ROW_LANES; i++)
    best = (LARGEST ? lanes[i] > best : lanes[i] < best) ? lanes[i] : best;
  return best;
}

/* −a (the sign bit flipped, NaN kept) */
static DW_ROW_TARGET inline DwRowVec
DW_ROW (neg) (DwRowVec a)
{
  return DW_ROW_MM (xor_ps) (a, DW_ROW_MM (set1_ps) (-0.0f));
}

/* a vector of weights to @pw: streamed past the caches (a large result, @pw on a cache line, so
 * aligned at every step) or stored */
static DW_ROW_TARGET inline void
DW_ROW (store_weights) (float *pw, DwRowVec weights, bool stream)
{
  if (stream)
    DW_ROW_MM (stream_ps) (pw, weights);
  else
    DW_ROW_MM (storeu_ps) (pw, weights);
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
  DwRowAcc so, sr, sl, k3, chi, sw, swr, su, su2, swt, sk[3], clip_w, clip_w2;
  size_t n_valid, fh, fl;
  DwRowVec wmax, wmin, kmax[3];
} DwRowSums;

/* what a step reads of the row's settings, read once per row: the thresholds as vectors, and
 * whether the weights are streamed (DwRowIn.stream_w) */
typedef struct
{
  DwRowVec upper, lower;
  bool stream;
} DwRowBounds;

/* one step's values before any sum: the valid lanes, the mask, ℓ, SAFE(ℓ), exp(SAFE ℓ) */
typedef struct
{
  DwRowValid v;
  DwRowVec M, L, LS, E;
} DwRowStep;

/* a PLAIN step with a clipped token: the split sums of the struct comment above */
static DW_ROW_TARGET void
DW_ROW (token_clipped) (DwRowSums *d, DwRowVec W, DwRowVec W2, DwRowValid v, DwRowLanes gt,
                        DwRowLanes lt, DwRowBounds bounds)
{
  const DwRowValid clipped = DW_ROW (valid_of) (DW_ROW (lanes_or) (gt, lt));
  const DwRowValid kept = DW_ROW (valid_minus) (v, clipped.all);
  const DwRowVec U = DW_ROW_MM (min_ps) (bounds.upper, DW_ROW_MM (max_ps) (bounds.lower, W));
  d->sw = DW_ROW (acc) (d->sw, W, kept);
  d->chi = DW_ROW (acc) (d->chi, W2, kept);
  d->clip_w = DW_ROW (acc) (d->clip_w, W, clipped);
  d->clip_w2 = DW_ROW (acc) (d->clip_w2, W2, clipped);
  d->su = DW_ROW (acc) (d->su, U, clipped);
  d->su2 = DW_ROW (acc) (d->su2, DW_ROW_MM (mul_ps) (U, U), clipped);
  d->fh += DW_ROW (count) (gt);
  d->fl += DW_ROW (count) (lt);
}

/* phase 1 of a PLAIN step (verl v0.7.1's token TIS): the weights min (C, W) (W > C ? C : W, and
 * W when W is NaN), W's extremes, and the unclipped sums unless a token is clipped */
static DW_ROW_TARGET inline __attribute__ ((always_inline)) void
DW_ROW (token_plain) (DwRowSums *d, float *pw, DwRowVec E, DwRowVec M, DwRowValid v,
                      DwRowBounds bounds)
{
  const DwRowVec W = DW_ROW_MM (mul_ps) (E, M);
  DW_ROW (store_weights) (pw, DW_ROW_MM (min_ps) (bounds.upper, W), bounds.stream);
  const DwRowVec W2 = DW_ROW_MM (mul_ps) (W, W);
  const DwRowLanes gt = DW_ROW (gt) (v, W, bounds.upper);
  const DwRowLanes lt = DW_ROW (lt) (v, W, bounds.lower);
  d->wmax = DW_ROW (max_in) (d->wmax, v, W);
  d->wmin = DW_ROW (min_in) (d->wmin, v, W);
  if (__builtin_expect (DW_ROW (lanes_none) (DW_ROW (lanes_or) (gt, lt)), 1))
    {
      d->sw = DW_ROW (acc) (d->sw, W, v);
      d->chi = DW_ROW (acc) (d->chi, W2, v);
    }
  else
    DW_ROW (token_clipped) (d, W, W2, v, gt, lt, bounds);
}

/* phase 1 of a step: the token-IS part (weights, their sums, counts and extremes) */
static DW_ROW_TARGET inline __attribute__ ((always_inline)) void
DW_ROW (token) (const DwRowIn *in, DwRowSums *d, float *pw, DwRowVec E, DwRowVec M, DwRowValid v,
                DwRowBounds bounds, const bool PLAIN)
{
  const DwRowVec Cv = bounds.upper, cv = bounds.lower;
  const DwRowVec low = APPLIED (PLAIN) ? DW_ROW_MM (setzero_ps) () : cv;
  const DwRowVec W = DW_ROW_MM (mul_ps) (E, M);
  /* IcePop keeps W inside [c, C] (NaN is not inside: 0); TIS truncates at C: min (C, W) is
   * W > C ? C : W, and W when W is NaN */
  const DwRowVec A = ICEPOP (PLAIN) ? DW_ROW (inside) (W, cv, Cv) : DW_ROW_MM (min_ps) (Cv, W);
  DW_ROW (store_weights) (pw, A, bounds.stream);
  const DwRowVec S = APPLIED (PLAIN) ? A : W;
  d->sw = DW_ROW (acc) (d->sw, S, v);
  if (APPLIED (PLAIN))
    d->swr = DW_ROW (acc) (d->swr, W, v);
  d->fh += DW_ROW (count) (DW_ROW (gt) (v, W, Cv));
  d->fl += DW_ROW (count) (DW_ROW (lt) (v, W, cv));
  /* CLAMP (S, low, C) as the reference path: min (max (S, low), C), NaN stays NaN (the max and
   * min return their second operand, S, for a NaN) */
  const DwRowVec U = DW_ROW_MM (min_ps) (Cv, DW_ROW_MM (max_ps) (low, S));
  d->su = DW_ROW (acc) (d->su, U, v);
  d->su2 = DW_ROW (acc) (d->su2, DW_ROW_MM (mul_ps) (U, U), v);
  /* the batch-normalisation sum stays double per token: its float32 divisor rescales every
   * weight, which must stay bit-identical to the reference path's */
  if (NORMALISE (PLAIN))
    d->swt = DW_ROW (acc) (d->swt, A, v);
  d->wmax = DW_ROW (max_in) (d->wmax, v, S);
  d->wmin = DW_ROW (min_in) (d->wmin, v, S);
}

/* phase 2: the per-token sums every row needs, and the k statistics of bit set K */
static DW_ROW_TARGET inline __attribute__ ((always_inline)) void
DW_ROW (common) (DwRowSums *d, const float *po, const float *pr, DwRowVec L, DwRowVec LS,
                 DwRowVec E, DwRowValid v, const unsigned K, const bool CHI)
{
  const DwRowVec one = DW_ROW_MM (set1_ps) (1.0f);
  DwRowVec EL = E;
  /* |ℓ| > 20: SAFE(ℓ) differs from ℓ (never for NaN) */
  const DwRowLanes big = DW_ROW (neq) (v, L, LS);
  if (__builtin_expect (!DW_ROW (lanes_none) (big), 0))
    EL = DW_ROW (blend) (big, E, DW_ROW (exp) (L));
  d->n_valid += DW_ROW (count) (v.all);
  d->so = DW_ROW (acc_load) (d->so, po, v);
  d->sr = DW_ROW (acc_load) (d->sr, pr, v);
  d->sl = DW_ROW (acc) (d->sl, L, v);
  d->k3 = DW_ROW (acc) (d->k3, DW_ROW_MM (sub_ps) (DW_ROW_MM (sub_ps) (EL, L), one), v);
  /* E is NaN exactly where ℓ is (SAFE keeps NaN, exp of a clamped value is finite), and a
   * finite E² sums to a finite value: a NaN in χ²'s sum is the row's NaN flag */
  if (CHI) /* else the PLAIN token phase sums W² = E² */
    d->chi = DW_ROW (acc) (d->chi, DW_ROW_MM (mul_ps) (E, E), v);
  for (int j = 0; j < 3; j++)
    if (K & (1u << j))
      {
        const DwRowVec Kv
          = j == 0   ? DW_ROW (neg) (LS)
            : j == 1 ? DW_ROW_MM (mul_ps) (DW_ROW_MM (set1_ps) (0.5f), DW_ROW_MM (mul_ps) (LS, LS))
                     : DW_ROW_MM (sub_ps) (DW_ROW_MM (sub_ps) (E, one), LS);
        d->sk[j] = DW_ROW (acc) (d->sk[j], Kv, v);
        d->kmax[j] = DW_ROW (max_in) (d->kmax[j], v, Kv);
      }
}

/* phase 3: the lanes folded into the row's results */
static DW_ROW_TARGET inline __attribute__ ((always_inline)) void
DW_ROW (finish) (const DwRowIn *in, const DwRowSums *d, DwRowOut *out, const bool TOK,
                 const unsigned K, const bool PLAIN)
{
  dw_correction_scalar_row_out_init (out);
  out->n = (double)d->n_valid; /* binary rows: Σm = # valid */
  out->n_valid = d->n_valid;
  out->so = DW_ROW (hsum) (d->so);
  out->sr = DW_ROW (hsum) (d->sr);
  out->sl = DW_ROW (hsum) (d->sl);
  out->k3kl = DW_ROW (hsum) (d->k3);
  if (TOK && PLAIN)
    {
      /* the split sums joined (struct comment) */
      const double kept_w = DW_ROW (hsum) (d->sw);
      const double kept_w2 = DW_ROW (hsum) (d->chi);
      out->chi = kept_w2 + DW_ROW (hsum) (d->clip_w2);
      out->sw = kept_w + DW_ROW (hsum) (d->clip_w);
      out->su = kept_w + DW_ROW (hsum) (d->su);
      out->su2 = kept_w2 + DW_ROW (hsum) (d->su2);
    }
  else
    {
      out->chi = DW_ROW (hsum) (d->chi);
      out->sw = DW_ROW (hsum) (d->sw);
      out->su = DW_ROW (hsum) (d->su);
      out->su2 = DW_ROW (hsum) (d->su2);
    }
  const bool has_nan = isnan (out->chi);
  if (TOK)
    {
      out->sw_raw = APPLIED (PLAIN) ? DW_ROW (hsum) (d->swr) : out->sw;
      out->fh = (double)d->fh;
      out->fl = (double)d->fl;
      out->swt = DW_ROW (hsum) (d->swt);
      if (d->n_valid)
        {
          /* IcePop's applied weights are never NaN (a NaN ratio is not inside the bounds) */
          const bool weight_nan = has_nan && !(APPLIED (PLAIN) && ICEPOP (PLAIN));
          out->wmax = weight_nan ? NAN : DW_ROW (extreme) (d->wmax, true);
          out->wmin = weight_nan ? NAN : DW_ROW (extreme) (d->wmin, false);
        }
    }
  for (int j = 0; j < 3; j++)
    if (K & (1u << j))
      {
        out->sk[j] = DW_ROW (hsum) (d->sk[j]);
        if (d->n_valid)
          out->mk[j] = has_nan ? NAN : DW_ROW (extreme) (d->kmax[j], true);
      }
}

/* the values of step @t before any sum; the previous row's output mask on the way (FUSED, when
 * DwRowIn.defer_to is set: whole lines streamed when the row starts on one) */
static DW_ROW_TARGET inline __attribute__ ((always_inline)) DwRowStep
DW_ROW (front) (const DwRowIn *in, const int64_t *mask_i64, float *mask_out, size_t t,
                DwRowSeen *seen, const bool FUSED)
{
  DwRowStep step;
  if (FUSED && in->defer_to)
    DW_ROW (defer_step) (in->defer_to, in->defer_from, t, ((uintptr_t)in->defer_to & 63) == 0);
  step.M = DW_ROW (mask_step) (mask_i64, in->m, mask_out, t, seen, &step.v, FUSED);
  step.L = DW_ROW_MM (sub_ps) (DW_ROW_MM (loadu_ps) (in->o + t), DW_ROW_MM (loadu_ps) (in->r + t));
  if (in->l)
    DW_ROW_MM (storeu_ps) (in->l + t, step.L);
  /* min/max keep NaN */
  const float bound = (float)DW_TORCH_SAFETY_BOUND;
  step.LS = DW_ROW_MM (min_ps) (DW_ROW_MM (set1_ps) (bound),
                                DW_ROW_MM (max_ps) (DW_ROW_MM (set1_ps) (-bound), step.L));
  step.E = DW_ROW (exp_core) (step.LS);
  if (in->e)
    DW_ROW_MM (storeu_ps) (in->e + t, step.E);
  return step;
}

/* the step's weights and sums */
static DW_ROW_TARGET inline __attribute__ ((always_inline)) void
DW_ROW (back) (const DwRowIn *in, DwRowSums *d, const DwRowStep *step, size_t t, DwRowBounds bounds,
               const bool TOK, const unsigned K, const bool PLAIN)
{
  if (DW_ROW (lanes_none) (step->v.all))
    {
      /* padding only: the weight is exp(SAFE ℓ)·m = ±0, or NaN for NaN ℓ (IcePop: 0) */
      if (TOK && ICEPOP (PLAIN))
        DW_ROW (store_weights) (in->w + t, DW_ROW_MM (setzero_ps) (), bounds.stream);
      else if (TOK)
        DW_ROW (store_weights)
      (in->w + t,
       DW_ROW_MM (mul_ps) (
         DW_ROW (blend) (DW_ROW (nan_lanes) (step->L), DW_ROW_MM (set1_ps) (1.0f), step->L),
         step->M),
       bounds.stream);
      return;
    }
  if (TOK && PLAIN)
    DW_ROW (token_plain) (d, in->w + t, step->E, step->M, step->v, bounds);
  else if (TOK)
    DW_ROW (token) (in, d, in->w + t, step->E, step->M, step->v, bounds, PLAIN);
  DW_ROW (common)
  (d, in->o + t, in->r + t, step->L, step->LS, step->E, step->v, K, !(TOK && PLAIN));
}

/* The row pass body, specialised by the callers below (TOK, K, FUSED, PLAIN compile-time
 * constants) */
static DW_ROW_TARGET inline __attribute__ ((always_inline)) void
DW_ROW (body) (const DwRowIn *in, DwRowOut *out, const bool TOK, const unsigned K, const bool FUSED,
               const bool PLAIN)
{
  const size_t T = in->T;
  const int64_t *restrict mask_i64 = in->m_i64;
  /* the float row is written where the caller needs it, else only its tail (the scalar pass of
   * the tail reads it) */
  float *restrict mask_out = in->skip_mask_row ? NULL : in->m_out;
  out->mask_not_binary = false;
  const DwRowBounds bounds
    = { DW_ROW_MM (set1_ps) (in->C), DW_ROW_MM (set1_ps) (in->c), in->stream_w };
  const DwRowVec ninf = DW_ROW_MM (set1_ps) (-INFINITY), pinf = DW_ROW_MM (set1_ps) (INFINITY);
  const DwRowAcc dzero = DW_ROW_MM (setzero_pd) ();
  /* every field set one by one: an aggregate initialiser zero-fills the whole struct first
   * (a rep stos of 1 KB a row, a tenth of the time of a 64-token row) */
  DwRowSums d;
  d.so = d.sr = d.sl = d.k3 = d.chi = d.sw = d.swr = d.su = d.su2 = d.swt = dzero;
  d.sk[0] = d.sk[1] = d.sk[2] = d.clip_w = d.clip_w2 = dzero;
  d.n_valid = d.fh = d.fl = 0;
  d.wmax = d.kmax[0] = d.kmax[1] = d.kmax[2] = ninf;
  d.wmin = pinf;
  DwRowSeen seen = DW_ROW (seen_zero) ();
  size_t t = 0;
  /* two steps at a time: their exp chains (≈ 50 cycles of latency each) overlap */
  for (; t + 2 * DW_ROW_LANES <= T; t += 2 * DW_ROW_LANES)
    {
      const DwRowStep first = DW_ROW (front) (in, mask_i64, mask_out, t, &seen, FUSED);
      const DwRowStep second
        = DW_ROW (front) (in, mask_i64, mask_out, t + DW_ROW_LANES, &seen, FUSED);
      DW_ROW (back) (in, &d, &first, t, bounds, TOK, K, PLAIN);
      DW_ROW (back) (in, &d, &second, t + DW_ROW_LANES, bounds, TOK, K, PLAIN);
    }
  for (; t + DW_ROW_LANES <= T; t += DW_ROW_LANES)
    {
      const DwRowStep step = DW_ROW (front) (in, mask_i64, mask_out, t, &seen, FUSED);
      DW_ROW (back) (in, &d, &step, t, bounds, TOK, K, PLAIN);
    }
  if (FUSED)
    {
      bool bad = DW_ROW (seen_bad) (seen);
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
  DW_ROW (finish) (in, &d, out, TOK, K, PLAIN);
  out->deferred = FUSED && in->defer_to ? t : 0;
  dw_correction_scalar_row_pass_tail (in, out, t);
}

#define ROW_PASS(NAME, TOK, K, PLAIN)                                        \
  static DW_ROW_TARGET void DW_ROW (NAME) (const DwRowIn *in, DwRowOut *out) \
  {                                                                          \
    if (in->m_i64)                                                           \
      DW_ROW (body) (in, out, TOK, K, true, PLAIN);                          \
    else                                                                     \
      DW_ROW (body) (in, out, TOK, K, false, PLAIN);                         \
  }
/* the presets' combinations: no IS / token IS × no k / k1 / k3; other k sets compute all three */
ROW_PASS (pass_n0, false, 0, false)
ROW_PASS (pass_t0, true, 0, false)
ROW_PASS (pass_n1, false, 1, false)
ROW_PASS (pass_t1, true, 1, false)
ROW_PASS (pass_n4, false, 4, false)
ROW_PASS (pass_t4, true, 4, false)
ROW_PASS (pass_n7, false, 7, false)
ROW_PASS (pass_t7, true, 7, false)
ROW_PASS (pass_p0, true, 0, true)
ROW_PASS (pass_p1, true, 1, true)
ROW_PASS (pass_p4, true, 4, true)
#undef ROW_PASS
#undef APPLIED
#undef ICEPOP
#undef NORMALISE

/* the row pass: the specialisation of the row's flags */
static void
DW_ROW (dispatch) (const DwRowIn *in, DwRowOut *out)
{
  const unsigned k
    = (unsigned)in->need_k[0] | (unsigned)in->need_k[1] << 1 | (unsigned)in->need_k[2] << 2;
  const bool plain = in->is_token && !in->applied && !in->icepop && !in->bn;
  if (plain && (k == 0 || k == 1 || k == 4))
    (k == 0 ? DW_ROW (pass_p0) : k == 1 ? DW_ROW (pass_p1) : DW_ROW (pass_p4)) (in, out);
  else if (k == 0)
    (in->is_token ? DW_ROW (pass_t0) : DW_ROW (pass_n0)) (in, out);
  else if (k == 1)
    (in->is_token ? DW_ROW (pass_t1) : DW_ROW (pass_n1)) (in, out);
  else if (k == 4)
    (in->is_token ? DW_ROW (pass_t4) : DW_ROW (pass_n4)) (in, out);
  else
    {
      /* a k set the presets do not use: every k is computed, the unwanted ones not returned */
      (in->is_token ? DW_ROW (pass_t7) : DW_ROW (pass_n7)) (in, out);
      for (int j = 0; j < 3; j++)
        if (!in->need_k[j])
          {
            out->sk[j] = 0;
            out->mk[j] = -INFINITY;
          }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the other results the fast path writes with vectors                                        */

/* a binary row's sequence-IS weights: raw = ρ·m, IcePop keeps raw inside [lower, upper] (else 0,
 * NaN too), TIS min (upper, raw) (raw > upper ? upper : raw, NaN stays NaN) — the scalar
 * formulas, lane by lane; @stream: @w is on a cache line, streamed past the caches */
static DW_ROW_TARGET void
DW_ROW (sequence_weights_body) (float *w, const float *m, float row_weight, float upper,
                                float lower, bool icepop, size_t T, bool stream)
{
  const DwRowVec rho = DW_ROW_MM (set1_ps) (row_weight), hi = DW_ROW_MM (set1_ps) (upper),
                 lo = DW_ROW_MM (set1_ps) (lower);
  size_t t = 0;
  for (; t + DW_ROW_LANES <= T; t += DW_ROW_LANES)
    {
      const DwRowVec raw = DW_ROW_MM (mul_ps) (rho, DW_ROW_MM (loadu_ps) (m + t));
      const DwRowVec A = icepop ? DW_ROW (inside) (raw, lo, hi) : DW_ROW_MM (min_ps) (hi, raw);
      DW_ROW (store_weights) (w + t, A, stream);
    }
  dw_correction_scalar_sequence_weights (w, m, row_weight, upper, lower, icepop, t, T);
}

/* @bytes at @target: a copy of @source, or zeros (@source NULL), the whole cache lines streamed
 * past the caches (non-temporal stores: a large result is not read back soon, and its lines
 * need not be read first) */
static DW_ROW_TARGET void
DW_ROW (stream_row_body) (void *target, const void *source, size_t bytes)
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
    DW_ROW (stream_line) (to + done, from ? from + done : NULL);
  if (from)
    memcpy (to + done, from + done, bytes - done);
  else
    memset (to + done, 0, bytes - done);
}
