/* dw-correction-avx512.c — the fused per-row pass of the float32 fast path on AVX-512
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. The pass is dw-correction-row-pass-private.h, written once for both widths;
 * this file is its 16-lane layer and what only AVX-512 does (sequence-IS weights, streamed rows,
 * the int64 mask row). The same formulas, the same exp (torch's, dw_torch_expf, bit for bit per
 * lane) and the same double sums as the AVX2 layer in dw-correction-simd.c, 16 tokens a step:
 * padding lanes are dropped by mask registers (zeroing conversions) instead of ANDs, the 0/1
 * counts are popcounts of mask registers, and each sum has 8 double lanes (§9.2). Only the order
 * of additions inside a sum differs from the AVX2 and scalar passes; the tests pin which pass
 * runs (dw_correction_simd_set_level). 2^q is one vscalefps; on large batches results are
 * streamed and a row's output mask is written during the next row's pass.
 *
 * A numeric kernel: its locals are the spec's symbols (docs/CORRECTION.md §2, §3, §4), as in
 * dw-correction-row-pass-private.h (M, L, W, U, ...; v the valid-lane mask registers).
 */
#include "dw-correction-private.h"
#include "dw-torch.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) \
  && !defined(DW_CORRECTION_NO_SIMD)
#include <immintrin.h>

#define VZ __attribute__ ((target ("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))

/* torch's float32 exp on 16 floats with |x| ≤ 104 or NaN: the operations of
 * dw_correction_simd_avx2_exp_core in the same order, so every lane equals dw_torch_expf. q is
 * rounded to nearest even in the float register (as cvtps2dq then back), and 2^q is applied by
 * vscalefps in one rounding: u·2^⌊q/2⌋ is exact (u ∈ [0.7, 1.5], |q| ≤ 150, so it stays normal)
 * and the second product rounds once, so u·2^⌊q/2⌋·2^(q−⌊q/2⌋) is the single rounding of u·2^q,
 * subnormal and overflowing results included */
static VZ inline __m512
dw_correction_avx512_exp_core (__m512 x)
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
dw_correction_avx512_exp (__m512 x)
{
  const __mmask16 low = _mm512_cmp_ps_mask (x, _mm512_set1_ps (-104.0f), _CMP_LT_OQ);
  const __mmask16 high = _mm512_cmp_ps_mask (x, _mm512_set1_ps (100.0f), _CMP_GT_OQ);
  const __mmask16 nan = _mm512_cmp_ps_mask (x, x, _CMP_UNORD_Q);
  const __m512 inside
    = _mm512_max_ps (_mm512_set1_ps (-104.0f), _mm512_min_ps (_mm512_set1_ps (100.0f), x));
  __m512 y = dw_correction_avx512_exp_core (_mm512_mask_blend_ps (nan, inside, x));
  y = _mm512_mask_blend_ps (low, y, _mm512_setzero_ps ());
  return _mm512_mask_blend_ps (high, y, _mm512_set1_ps (INFINITY));
}

static VZ void
dw_correction_avx512_expf_array_body (const float *x, float *y, size_t n)
{
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps (y + i, dw_correction_avx512_exp (_mm512_loadu_ps (x + i)));
  for (; i < n; i++)
    y[i] = dw_torch_expf (x[i]);
}

/* ------------------------------------------------------------------------------------------ */
/* the vector layer of the row pass (dw-correction-row-pass-private.h)                        */

#define DW_ROW(name)    dw_correction_avx512_##name
#define DW_ROW_MM(name) _mm512_##name
#define DW_ROW_TARGET   VZ
#define DW_ROW_LANES    16

/* The valid lanes of a step. Every sum takes the 16 lanes as two halves of 8 doubles; the mask
 * of each half is kept as it comes (from the two int64 compares of the fused mask), so no mask
 * register is split per sum. */
typedef struct
{
  __mmask16 all;
  __mmask8 low, high;
} DwRowValid;

typedef __m512 DwRowVec;
typedef __m512d DwRowAcc;
typedef __mmask16 DwRowLanes;
typedef __m512i DwRowSeen;

static VZ inline __m512
dw_correction_avx512_blend (__mmask16 lanes, __m512 a, __m512 b)
{
  return _mm512_mask_blend_ps (lanes, a, b);
}

static VZ inline __m512
dw_correction_avx512_inside (__m512 W, __m512 lower, __m512 upper)
{
  return _mm512_maskz_mov_ps (
    _mm512_cmp_ps_mask (W, lower, _CMP_GE_OQ) & _mm512_cmp_ps_mask (W, upper, _CMP_LE_OQ), W);
}

static VZ inline __mmask16
dw_correction_avx512_gt (DwRowValid v, __m512 a, __m512 b)
{
  return _mm512_mask_cmp_ps_mask (v.all, a, b, _CMP_GT_OQ);
}

static VZ inline __mmask16
dw_correction_avx512_lt (DwRowValid v, __m512 a, __m512 b)
{
  return _mm512_mask_cmp_ps_mask (v.all, a, b, _CMP_LT_OQ);
}

static VZ inline __mmask16
dw_correction_avx512_neq (DwRowValid v, __m512 a, __m512 b)
{
  return _mm512_mask_cmp_ps_mask (v.all, a, b, _CMP_NEQ_OQ);
}

static VZ inline __mmask16
dw_correction_avx512_nan_lanes (__m512 a)
{
  return _mm512_cmp_ps_mask (a, a, _CMP_UNORD_Q);
}

static VZ inline __mmask16
dw_correction_avx512_lanes_or (__mmask16 a, __mmask16 b)
{
  return a | b;
}

static VZ inline bool
dw_correction_avx512_lanes_none (__mmask16 lanes)
{
  return lanes == 0;
}

static VZ inline size_t
dw_correction_avx512_count (__mmask16 lanes)
{
  return (size_t)__builtin_popcount ((unsigned)lanes);
}

/* the lanes of @lanes as a valid-lane set */
static VZ inline DwRowValid
dw_correction_avx512_valid_of (__mmask16 lanes)
{
  return (DwRowValid){ lanes, (__mmask8)lanes, (__mmask8)(lanes >> 8) };
}

static VZ inline DwRowValid
dw_correction_avx512_valid_minus (DwRowValid v, __mmask16 lanes)
{
  return dw_correction_avx512_valid_of (v.all & ~lanes);
}

/* the valid lanes of 16 floats added to an 8-lane double sum: the two halves are converted
 * (padding lanes as 0) and added first, one add on the loop-carried chain */
static VZ inline __m512d
dw_correction_avx512_acc (__m512d acc, __m512 v, DwRowValid valid)
{
  const __m512d lo = _mm512_maskz_cvtps_pd (valid.low, _mm512_castps512_ps256 (v));
  const __m512d hi = _mm512_maskz_cvtps_pd (valid.high, _mm512_extractf32x8_ps (v, 1));
  return _mm512_add_pd (acc, _mm512_add_pd (lo, hi));
}

/* the same for 16 floats still in memory: converted from there, no lane extraction */
static VZ inline __m512d
dw_correction_avx512_acc_load (__m512d acc, const float *p, DwRowValid valid)
{
  const __m512d lo = _mm512_maskz_cvtps_pd (valid.low, _mm256_loadu_ps (p));
  const __m512d hi = _mm512_maskz_cvtps_pd (valid.high, _mm256_loadu_ps (p + 8));
  return _mm512_add_pd (acc, _mm512_add_pd (lo, hi));
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

/* the maximum / minimum so far, with @v's valid lanes */
static VZ inline __m512
dw_correction_avx512_max_in (__m512 acc, DwRowValid valid, __m512 v)
{
  return _mm512_mask_max_ps (acc, valid.all, acc, v);
}

static VZ inline __m512
dw_correction_avx512_min_in (__m512 acc, DwRowValid valid, __m512 v)
{
  return _mm512_mask_min_ps (acc, valid.all, acc, v);
}

/* the mask of step @t: from the int64 row (FUSED: the valid lanes by two compares, the float
 * mask as 0/1 where a value is not 0 or 1 only sets @seen's other bits) or from the float row */
static VZ inline __attribute__ ((always_inline)) __m512
dw_correction_avx512_mask_step (const int64_t *mask_i64, const float *pm, float *mask_out, size_t t,
                                __m512i *seen, DwRowValid *v, const bool FUSED)
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
  *v = dw_correction_avx512_valid_of (_mm512_cmp_ps_mask (M, _mm512_setzero_ps (), _CMP_NEQ_UQ));
  return M;
}

static VZ inline __m512i
dw_correction_avx512_seen_zero (void)
{
  return _mm512_setzero_si512 ();
}

/* a value read so far was not 0 or 1 */
static VZ inline bool
dw_correction_avx512_seen_bad (__m512i seen)
{
  return _mm512_test_epi64_mask (seen, _mm512_set1_epi64 (~(int64_t)1)) != 0;
}

/* 16 values of the previous row's output mask (DwRowIn.defer_to): a copy of @from or zeros */
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

/* 64 bytes at @to streamed past the caches: a copy of @from, or zeros (@from NULL) */
static VZ inline void
dw_correction_avx512_stream_line (unsigned char *to, const unsigned char *from)
{
  _mm512_stream_si512 ((void *)to,
                       from ? _mm512_loadu_si512 ((const void *)from) : _mm512_setzero_si512 ());
}

#include "dw-correction-row-pass-private.h"

void
dw_correction_avx512_row_pass (const DwRowIn *in, DwRowOut *out)
{
  dw_correction_avx512_dispatch (in, out);
}

void
dw_correction_avx512_expf_array (const float *x, float *y, size_t n)
{
  dw_correction_avx512_expf_array_body (x, y, n);
}

VZ void
dw_correction_avx512_sequence_weights (float *w, const float *m, float row_weight, float upper,
                                       float lower, bool icepop, size_t T, bool stream)
{
  dw_correction_avx512_sequence_weights_body (w, m, row_weight, upper, lower, icepop, T, stream);
}

VZ void
dw_correction_avx512_stream_row (void *target, const void *source, size_t bytes)
{
  dw_correction_avx512_stream_row_body (target, source, bytes);
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
