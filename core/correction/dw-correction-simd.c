/* dw-correction-simd.c — the vector levels of the float32 fast path: dispatch, mask rows, the
 * AVX2 layer of the fused per-row pass, slime's built-in rows
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. See dw-correction-private.h. Built with -ffp-contract=off: the only fused
 * multiply-adds are the explicit ones of the exp replica (torch's, dw_torch_expf). The row pass
 * itself is dw-correction-row-pass-private.h, written once for AVX2 (here, 8 lanes) and AVX-512
 * (dw-correction-avx512.c, 16 lanes).
 *
 * A numeric kernel: its locals are the spec's symbols (docs/CORRECTION.md §2, §3, §4).
 * Glossary: T columns of the row; o, r, m (O, R, M as vectors) old / rollout log-probs and the
 * mask; l (L) ℓ = o − r; ls (LS) SAFE(ℓ); e (E) exp(SAFE ℓ); el (EL) exp(ℓ) unclamped for k3_kl;
 * x (W) the raw weight e·m; a (A) the applied weight (TIS min(x, C) or IcePop); S the value the
 * IS sums describe (x, or a from v0.8.0 on); u (U, Y) S clamped for std / ESS; C, c the upper
 * and lower bounds; k (Kv) the k1/k2/k3 statistic; d_* double-lane sums; TOK / K / PLAIN / FUSED
 * the compile-time specialisation flags.
 */
#include "dw-correction-private.h"
#include "dw-torch.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) \
  && !defined(DW_CORRECTION_NO_SIMD)
#define DW_HAVE_X86 1
#include <immintrin.h>
#endif

/* tokens [t0, T) of a slime built-in row: weight, Σρ·m, Σ[w ≠ ρ]·m, Σ|ρ − 1|·m, Σm */
static void
dw_correction_simd_slime_row_scalar_from (const DwSlimeRowIn *in, float *w, double sums[3],
                                          double *count, size_t t0)
{
  const float C = in->clip, c = in->clip_low;
  for (size_t t = t0; t < in->T; t++)
    {
      const float rho = in->ratio[t], mv = in->m[t];
      const float a
        = in->icepop ? (rho >= c && rho <= C ? rho : 0.0f) : dw_torch_clampf (rho, c, C);
      w[t] = a;
      sums[0] += (double)(rho * mv);
      sums[1] += (double)((a != rho) * mv);
      sums[2] += (double)(fabsf (rho - 1.0f) * mv);
      *count += mv;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* dispatch flags                                                                               */

static int simd_state = -1; /* -1 unknown, else the level in use (DwSimdLevel) */
static bool force_reference = false;

/* the best level this CPU runs */
static int
dw_correction_simd_best_level (void)
{
#ifdef DW_HAVE_X86
  __builtin_cpu_init ();
  if (dw_correction_avx512_supported ())
    return DW_SIMD_AVX512;
  if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"))
    return DW_SIMD_AVX2;
#endif
  return DW_SIMD_OFF;
}

int
dw_correction_simd_get_level (void)
{
  if (simd_state < 0)
    simd_state = dw_correction_simd_best_level ();
  return simd_state;
}

bool
dw_correction_simd_enabled (void)
{
  return dw_correction_simd_get_level () >= DW_SIMD_AVX2;
}

int
dw_correction_simd_set_level (int level)
{
  const int best = dw_correction_simd_best_level ();
  simd_state = level < best ? level : best;
  return simd_state;
}

static const char *const simd_level_names[] = { "off", "avx2", "avx512" };

const char *
dw_correction_set_vector_limit (const char *name)
{
  for (int level = DW_SIMD_OFF; level <= DW_SIMD_AVX512; level++)
    if (strcmp (name, simd_level_names[level]) == 0)
      return simd_level_names[dw_correction_simd_set_level (level)];
  return NULL;
}

DwVectorLevel
dw_correction_get_vector_level (void)
{
  _Static_assert((int)DW_VECTOR_AVX2 == DW_SIMD_AVX2 && (int)DW_VECTOR_AVX512 == DW_SIMD_AVX512,
                 "the public levels are the private ones");
  return (DwVectorLevel)dw_correction_simd_get_level ();
}

void
dw_correction_simd_set_enabled (bool enabled)
{
  dw_correction_simd_set_level (enabled ? DW_SIMD_AVX512 : DW_SIMD_OFF);
}

void
dw_correction_simd_set_reference (bool reference)
{
  force_reference = reference;
}

bool
dw_correction_simd_get_reference (void)
{
  return force_reference;
}

/* ------------------------------------------------------------------------------------------ */
/* mask rows                                                                                    */

#define MASK_GENERIC(TYPE)                                                                    \
  do                                                                                          \
    {                                                                                         \
      const TYPE *p = (const TYPE *)batch->response_mask + off;                               \
      for (size_t t = 0; t < T; t++)                                                          \
        {                                                                                     \
          const TYPE v = p[t];                                                                \
          const float f = (float)v;                                                           \
          /* compared widened: (TYPE)f is undefined for f = 2^63                              \
           * (INT64_MAX as a float), UBSan float-cast-overflow */                             \
          if (sizeof (TYPE) <= 4 ? (double)f != (double)v : (long double)f != (long double)v) \
            return false;                                                                     \
          mf[t] = f;                                                                          \
          bin &= v == 0 || v == 1;                                                            \
        }                                                                                     \
    }                                                                                         \
  while (0)

#ifdef DW_HAVE_X86
__attribute__ ((target ("avx2"))) static bool
dw_correction_simd_mask_i64_avx2 (const int64_t *p, size_t T, float *mf)
{
  size_t t = 0;
  __m256i bad = _mm256_setzero_si256 ();
  const __m256i not1 = _mm256_set1_epi64x (~(int64_t)1);
  const __m256i perm = _mm256_setr_epi32 (0, 2, 4, 6, 1, 3, 5, 7);
  for (; t + 8 <= T; t += 8)
    {
      __m256i a = _mm256_loadu_si256 ((const __m256i *)(p + t));
      __m256i b = _mm256_loadu_si256 ((const __m256i *)(p + t + 4));
      bad = _mm256_or_si256 (bad, _mm256_and_si256 (_mm256_or_si256 (a, b), not1));
      __m256i pa = _mm256_permutevar8x32_epi32 (a, perm);
      __m256i pb = _mm256_permutevar8x32_epi32 (b, perm);
      __m256i lo = _mm256_permute2x128_si256 (pa, pb, 0x20);
      _mm256_storeu_ps (mf + t, _mm256_cvtepi32_ps (lo));
    }
  if (!_mm256_testz_si256 (bad, bad))
    return false;
  for (; t < T; t++)
    {
      if (p[t] != 0 && p[t] != 1)
        return false;
      mf[t] = (float)p[t];
    }
  return true;
}

/* float32 masks are always exact: copy the row and say whether every value is 0, −0 or 1 */
__attribute__ ((target ("avx2"))) static bool
dw_correction_simd_mask_f32_avx2 (const float *p, size_t T, float *mf)
{
  size_t t = 0;
  const __m256 zero = _mm256_setzero_ps (), one = _mm256_set1_ps (1.0f);
  __m256 binary = _mm256_castsi256_ps (_mm256_set1_epi32 (-1));
  for (; t + 8 <= T; t += 8)
    {
      const __m256 v = _mm256_loadu_ps (p + t);
      binary = _mm256_and_ps (binary, _mm256_or_ps (_mm256_cmp_ps (v, zero, _CMP_EQ_OQ),
                                                    _mm256_cmp_ps (v, one, _CMP_EQ_OQ)));
      _mm256_storeu_ps (mf + t, v);
    }
  bool all_binary = _mm256_movemask_ps (binary) == 0xff;
  for (; t < T; t++)
    {
      mf[t] = p[t];
      all_binary &= p[t] == 0 || p[t] == 1;
    }
  return all_binary;
}
__attribute__ ((target ("avx2"))) static bool
dw_correction_simd_mask_u8_avx2 (const uint8_t *p, size_t T, float *mf)
{
  size_t t = 0;
  __m256i bad = _mm256_setzero_si256 ();
  const __m256i not1 = _mm256_set1_epi32 (~1);
  for (; t + 8 <= T; t += 8)
    {
      __m256i v = _mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *)(p + t)));
      bad = _mm256_or_si256 (bad, _mm256_and_si256 (v, not1));
      _mm256_storeu_ps (mf + t, _mm256_cvtepi32_ps (v));
    }
  if (!_mm256_testz_si256 (bad, bad))
    return false;
  for (; t < T; t++)
    {
      if (p[t] > 1)
        return false;
      mf[t] = (float)p[t];
    }
  return true;
}
#endif

bool
dw_correction_simd_mask_row_to_float (const DwBatch *batch, size_t off, size_t T, float *mf,
                                      bool *binary)
{
  bool bin = true;
#ifdef DW_HAVE_X86
  if (dw_correction_simd_get_level () == DW_SIMD_AVX512 && batch->mask_dtype == DW_DTYPE_I64
      && dw_correction_avx512_mask_i64 ((const int64_t *)batch->response_mask + off, T, mf))
    {
      *binary = true;
      return true;
    }
  if (dw_correction_simd_enabled ())
    {
      if (batch->mask_dtype == DW_DTYPE_I64
          && dw_correction_simd_mask_i64_avx2 ((const int64_t *)batch->response_mask + off, T, mf))
        {
          *binary = true;
          return true;
        }
      if (batch->mask_dtype == DW_DTYPE_F32)
        {
          *binary
            = dw_correction_simd_mask_f32_avx2 ((const float *)batch->response_mask + off, T, mf);
          return true;
        }
      if ((batch->mask_dtype == DW_DTYPE_U8 || batch->mask_dtype == DW_DTYPE_BOOL)
          && dw_correction_simd_mask_u8_avx2 ((const uint8_t *)batch->response_mask + off, T, mf))
        {
          *binary = true;
          return true;
        }
    }
#endif
  switch (batch->mask_dtype)
    {
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      MASK_GENERIC (uint8_t);
      break;
    case DW_DTYPE_I8:
      MASK_GENERIC (int8_t);
      break;
    case DW_DTYPE_I16:
      MASK_GENERIC (int16_t);
      break;
    case DW_DTYPE_U16:
      MASK_GENERIC (uint16_t);
      break;
    case DW_DTYPE_I32:
      MASK_GENERIC (int32_t);
      break;
    case DW_DTYPE_U32:
      MASK_GENERIC (uint32_t);
      break;
    case DW_DTYPE_I64:
      MASK_GENERIC (int64_t);
      break;
    case DW_DTYPE_U64:
      MASK_GENERIC (uint64_t);
      break;
    case DW_DTYPE_F32:
      {
        const float *p = (const float *)batch->response_mask + off;
        for (size_t t = 0; t < T; t++)
          {
            mf[t] = p[t];
            bin &= p[t] == 0 || p[t] == 1;
          }
      }
      break;
    case DW_DTYPE_F64:
      {
        const double *p = (const double *)batch->response_mask + off;
        for (size_t t = 0; t < T; t++)
          {
            const float f = (float)p[t];
            if ((double)f != p[t] && !(isnan (p[t])))
              return false;
            mf[t] = f;
            bin &= p[t] == 0 || p[t] == 1;
          }
      }
      break;
    default:
      return false;
    }
  *binary = bin;
  return true;
}
#undef MASK_GENERIC

/* ------------------------------------------------------------------------------------------ */
/* AVX2 + FMA                                                                                   */

#ifdef DW_HAVE_X86
#define VT __attribute__ ((target ("avx2,fma")))

/* torch's float32 exp (dw_torch_expf, SLEEF's xexpf) on 8 floats with |x| ≤ 100 or NaN: the same
 * operations in the same order, so every lane equals the scalar replica and torch bit for bit */
static VT inline __m256
dw_correction_simd_avx2_exp_core (__m256 x)
{
  const __m256i q = _mm256_cvtps_epi32 (_mm256_mul_ps (x, _mm256_set1_ps (DW_TORCH_EXPF_LOG2E)));
  const __m256 qf = _mm256_cvtepi32_ps (q);
  __m256 s = _mm256_fmadd_ps (qf, _mm256_set1_ps (DW_TORCH_EXPF_MINUS_LN2_HIGH), x);
  s = _mm256_fmadd_ps (qf, _mm256_set1_ps (DW_TORCH_EXPF_MINUS_LN2_LOW), s);
  __m256 u = _mm256_set1_ps (DW_TORCH_EXPF_C6);
  u = _mm256_fmadd_ps (u, s, _mm256_set1_ps (DW_TORCH_EXPF_C5));
  u = _mm256_fmadd_ps (u, s, _mm256_set1_ps (DW_TORCH_EXPF_C4));
  u = _mm256_fmadd_ps (u, s, _mm256_set1_ps (DW_TORCH_EXPF_C3));
  u = _mm256_fmadd_ps (u, s, _mm256_set1_ps (DW_TORCH_EXPF_C2));
  u = _mm256_fmadd_ps (u, s, _mm256_set1_ps (0.5f));
  u = _mm256_add_ps (_mm256_set1_ps (1.0f), _mm256_fmadd_ps (_mm256_mul_ps (s, s), u, s));
  const __m256i half = _mm256_srai_epi32 (q, 1), bias = _mm256_set1_epi32 (127);
  const __m256 scale_low
    = _mm256_castsi256_ps (_mm256_slli_epi32 (_mm256_add_epi32 (half, bias), 23));
  const __m256 scale_high = _mm256_castsi256_ps (
    _mm256_slli_epi32 (_mm256_add_epi32 (_mm256_sub_epi32 (q, half), bias), 23));
  return _mm256_mul_ps (_mm256_mul_ps (u, scale_low), scale_high);
}

/* full range: below −104 is 0, above 100 is +∞ (NaN stays NaN), as dw_torch_expf */
static VT inline __m256
dw_correction_simd_avx2_exp (__m256 x)
{
  const __m256 low = _mm256_cmp_ps (x, _mm256_set1_ps (-104.0f), _CMP_LT_OQ);
  const __m256 high = _mm256_cmp_ps (x, _mm256_set1_ps (100.0f), _CMP_GT_OQ);
  /* the core's 2^q halves stay in range for |x| ≤ 104; clamp the out-of-range lanes first */
  const __m256 inside
    = _mm256_max_ps (_mm256_set1_ps (-104.0f), _mm256_min_ps (_mm256_set1_ps (100.0f), x));
  __m256 y = dw_correction_simd_avx2_exp_core (
    _mm256_blendv_ps (inside, x, _mm256_cmp_ps (x, x, _CMP_UNORD_Q)));
  y = _mm256_andnot_ps (low, y);
  return _mm256_blendv_ps (y, _mm256_set1_ps (INFINITY), high);
}

static VT void
dw_correction_simd_expf_array_avx2 (const float *x, float *y, size_t n)
{
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps (y + i, dw_correction_simd_avx2_exp (_mm256_loadu_ps (x + i)));
  for (; i < n; i++)
    y[i] = dw_torch_expf (x[i]);
}

static VT inline double
dw_correction_simd_hsum_pd (__m256d v)
{
  __m128d a = _mm_add_pd (_mm256_castpd256_pd128 (v), _mm256_extractf128_pd (v, 1));
  return _mm_cvtsd_f64 (_mm_add_sd (a, _mm_unpackhi_pd (a, a)));
}

/* 8 float lanes added to a 4-lane double accumulator (the two halves are added first: one add
 * on the loop-carried chain instead of two) */
static VT inline __m256d
dw_correction_simd_acc_pd (__m256d acc, __m256 v)
{
  const __m256d lo = _mm256_cvtps_pd (_mm256_castps256_ps128 (v));
  const __m256d hi = _mm256_cvtps_pd (_mm256_extractf128_ps (v, 1));
  return _mm256_add_pd (acc, _mm256_add_pd (lo, hi));
}

/* ------------------------------------------------------------------------------------------ */
/* the AVX2 layer of the row pass (dw-correction-row-pass-private.h)                          */

/* Summation: every sum of values is accumulated in double, 4 lanes per vector, like the scalar
 * path's double sums (only the order of additions differs). Float32 partial sums per block of
 * 128 tokens folded into double were tried and measured: 24–28 float32 ulps on the metrics that
 * cancel (χ² = mean ρ² − 1, the log-PPL difference of Σo and Σr), 334–410 ulps on the std of the
 * weights and of the row means, and the what-if engine's exact pass, which must equal the core
 * bit for bit (test-whatif), broke. The 0/1 counts are popcounts of the compare masks. */

#define DW_ROW(name)    dw_correction_simd_avx2_##name
#define DW_ROW_MM(name) _mm256_##name
#define DW_ROW_TARGET   VT
#define DW_ROW_LANES    8

/* the valid lanes of a step, all ones or all zeros per lane (padding lanes are ANDed away) */
typedef struct
{
  __m256 all;
} DwRowValid;

typedef __m256 DwRowVec;
typedef __m256d DwRowAcc;
typedef __m256 DwRowLanes;
typedef __m256i DwRowSeen;

static VT inline __m256
dw_correction_simd_avx2_blend (__m256 lanes, __m256 a, __m256 b)
{
  return _mm256_blendv_ps (a, b, lanes);
}

static VT inline __m256
dw_correction_simd_avx2_inside (__m256 W, __m256 lower, __m256 upper)
{
  return _mm256_and_ps (
    W, _mm256_and_ps (_mm256_cmp_ps (W, lower, _CMP_GE_OQ), _mm256_cmp_ps (W, upper, _CMP_LE_OQ)));
}

static VT inline __m256
dw_correction_simd_avx2_gt (DwRowValid v, __m256 a, __m256 b)
{
  return _mm256_and_ps (_mm256_cmp_ps (a, b, _CMP_GT_OQ), v.all);
}

static VT inline __m256
dw_correction_simd_avx2_lt (DwRowValid v, __m256 a, __m256 b)
{
  return _mm256_and_ps (_mm256_cmp_ps (a, b, _CMP_LT_OQ), v.all);
}

static VT inline __m256
dw_correction_simd_avx2_neq (DwRowValid v, __m256 a, __m256 b)
{
  return _mm256_and_ps (_mm256_cmp_ps (a, b, _CMP_NEQ_OQ), v.all);
}

static VT inline __m256
dw_correction_simd_avx2_nan_lanes (__m256 a)
{
  return _mm256_cmp_ps (a, a, _CMP_UNORD_Q);
}

static VT inline __m256
dw_correction_simd_avx2_lanes_or (__m256 a, __m256 b)
{
  return _mm256_or_ps (a, b);
}

/* no lane set (the sign bits: a compare sets all of a lane's bits or none) */
static VT inline bool
dw_correction_simd_avx2_lanes_none (__m256 lanes)
{
  return _mm256_testz_ps (lanes, lanes);
}

static VT inline size_t
dw_correction_simd_avx2_count (__m256 lanes)
{
  return (size_t)__builtin_popcount ((unsigned)_mm256_movemask_ps (lanes));
}

static VT inline DwRowValid
dw_correction_simd_avx2_valid_of (__m256 lanes)
{
  return (DwRowValid){ lanes };
}

static VT inline DwRowValid
dw_correction_simd_avx2_valid_minus (DwRowValid v, __m256 lanes)
{
  return (DwRowValid){ _mm256_andnot_ps (lanes, v.all) };
}

static VT inline __m256d
dw_correction_simd_avx2_acc (__m256d acc, __m256 v, DwRowValid valid)
{
  return dw_correction_simd_acc_pd (acc, _mm256_and_ps (v, valid.all));
}

static VT inline __m256d
dw_correction_simd_avx2_acc_load (__m256d acc, const float *p, DwRowValid valid)
{
  return dw_correction_simd_avx2_acc (acc, _mm256_loadu_ps (p), valid);
}

static VT inline double
dw_correction_simd_avx2_hsum (__m256d v)
{
  return dw_correction_simd_hsum_pd (v);
}

/* the maximum / minimum so far, with @v's valid lanes */
static VT inline __m256
dw_correction_simd_avx2_max_in (__m256 acc, DwRowValid valid, __m256 v)
{
  return _mm256_blendv_ps (acc, _mm256_max_ps (acc, v), valid.all);
}

static VT inline __m256
dw_correction_simd_avx2_min_in (__m256 acc, DwRowValid valid, __m256 v)
{
  return _mm256_blendv_ps (acc, _mm256_min_ps (acc, v), valid.all);
}

/* the mask of step @t: from the int64 row (FUSED: the low halves of the 8 values as 0/1 floats;
 * a value other than 0 or 1 only sets @seen's other bits, and the row is done again) or from the
 * float row */
static VT inline __attribute__ ((always_inline)) __m256
dw_correction_simd_avx2_mask_step (const int64_t *mask_i64, const float *pm, float *mask_out,
                                   size_t t, __m256i *seen, DwRowValid *v, const bool FUSED)
{
  __m256 M;
  if (FUSED)
    {
      const __m256i low = _mm256_loadu_si256 ((const __m256i *)(mask_i64 + t));
      const __m256i high = _mm256_loadu_si256 ((const __m256i *)(mask_i64 + t + 4));
      *seen = _mm256_or_si256 (*seen, _mm256_or_si256 (low, high));
      const __m256i even = _mm256_setr_epi32 (0, 2, 4, 6, 1, 3, 5, 7);
      const __m256i halves = _mm256_permute2x128_si256 (
        _mm256_permutevar8x32_epi32 (low, even), _mm256_permutevar8x32_epi32 (high, even), 0x20);
      M = _mm256_cvtepi32_ps (halves);
      if (mask_out)
        _mm256_storeu_ps (mask_out + t, M);
    }
  else
    M = _mm256_loadu_ps (pm + t);
  v->all = _mm256_cmp_ps (M, _mm256_setzero_ps (), _CMP_NEQ_UQ);
  return M;
}

static VT inline __m256i
dw_correction_simd_avx2_seen_zero (void)
{
  return _mm256_setzero_si256 ();
}

/* a value read so far was not 0 or 1 */
static VT inline bool
dw_correction_simd_avx2_seen_bad (__m256i seen)
{
  return !_mm256_testz_si256 (seen, _mm256_set1_epi64x (~(int64_t)1));
}

/* 8 values of the previous row's output mask (DwRowIn.defer_to): a copy of @from or zeros */
static VT inline void
dw_correction_simd_avx2_defer_step (int64_t *to, const int64_t *from, size_t t, bool stream)
{
  const __m256i low
    = from ? _mm256_loadu_si256 ((const __m256i *)(from + t)) : _mm256_setzero_si256 ();
  const __m256i high
    = from ? _mm256_loadu_si256 ((const __m256i *)(from + t + 4)) : _mm256_setzero_si256 ();
  if (stream)
    {
      _mm256_stream_si256 ((__m256i *)(to + t), low);
      _mm256_stream_si256 ((__m256i *)(to + t + 4), high);
    }
  else
    {
      _mm256_storeu_si256 ((__m256i *)(to + t), low);
      _mm256_storeu_si256 ((__m256i *)(to + t + 4), high);
    }
}

/* 64 bytes at @to streamed past the caches: a copy of @from, or zeros (@from NULL); @to on a
 * cache line */
static VT inline void
dw_correction_simd_avx2_stream_line (unsigned char *to, const unsigned char *from)
{
  const __m256i low = from ? _mm256_loadu_si256 ((const __m256i *)from) : _mm256_setzero_si256 ();
  const __m256i high
    = from ? _mm256_loadu_si256 ((const __m256i *)(from + 32)) : _mm256_setzero_si256 ();
  _mm256_stream_si256 ((__m256i *)to, low);
  _mm256_stream_si256 ((__m256i *)(to + 32), high);
}

#include "dw-correction-row-pass-private.h"

/* slime's built-in paths on one row of ratios (see dw_correction_simd_slime_row) */
static VT void
dw_correction_simd_slime_row_avx2 (const DwSlimeRowIn *in, float *w, double sums[3], double *count)
{
  const size_t T = in->T;
  const __m256 one = _mm256_set1_ps (1.0f), sgn = _mm256_set1_ps (-0.0f);
  const __m256 hi = _mm256_set1_ps (in->clip), lo = _mm256_set1_ps (in->clip_low);
  __m256d d_tis = _mm256_setzero_pd (), d_clip = d_tis, d_abs = d_tis, d_n = d_tis;
  size_t t = 0;
  for (; t + 8 <= T; t += 8)
    {
      const __m256 R = _mm256_loadu_ps (in->ratio + t), M = _mm256_loadu_ps (in->m + t);
      __m256 A;
      if (in->icepop)
        A = _mm256_and_ps (
          R, _mm256_and_ps (_mm256_cmp_ps (R, lo, _CMP_GE_OQ), _mm256_cmp_ps (R, hi, _CMP_LE_OQ)));
      else
        {
          /* clamp (R, lo, hi) as torch: min (max (R, lo), hi), NaN stays NaN */
          const __m256 Y = _mm256_blendv_ps (R, lo, _mm256_cmp_ps (R, lo, _CMP_LT_OQ));
          A = _mm256_blendv_ps (Y, hi, _mm256_cmp_ps (Y, hi, _CMP_GT_OQ));
        }
      _mm256_storeu_ps (w + t, A);
      const __m256 changed = _mm256_and_ps (_mm256_cmp_ps (A, R, _CMP_NEQ_UQ), one);
      d_tis = dw_correction_simd_acc_pd (d_tis, _mm256_mul_ps (R, M));
      d_clip = dw_correction_simd_acc_pd (d_clip, _mm256_mul_ps (changed, M));
      d_abs = dw_correction_simd_acc_pd (
        d_abs, _mm256_mul_ps (_mm256_andnot_ps (sgn, _mm256_sub_ps (R, one)), M));
      d_n = dw_correction_simd_acc_pd (d_n, M);
    }
  sums[0] = dw_correction_simd_hsum_pd (d_tis);
  sums[1] = dw_correction_simd_hsum_pd (d_clip);
  sums[2] = dw_correction_simd_hsum_pd (d_abs);
  *count = dw_correction_simd_hsum_pd (d_n);
  dw_correction_simd_slime_row_scalar_from (in, w, sums, count, t);
}
#endif

void
dw_correction_simd_row_pass (const DwRowIn *in, DwRowOut *out)
{
#ifdef DW_HAVE_X86
  if (dw_correction_simd_get_level () == DW_SIMD_AVX512)
    dw_correction_avx512_row_pass (in, out);
  else
    dw_correction_simd_avx2_dispatch (in, out);
#else
  dw_correction_scalar_row_pass (in, out);
#endif
}

bool
dw_correction_simd_row_pass_fuses_mask (void)
{
  return dw_correction_simd_enabled ();
}

void
dw_correction_simd_expf_array (const float *x, float *y, size_t n)
{
#ifdef DW_HAVE_X86
  if (dw_correction_simd_get_level () == DW_SIMD_AVX512)
    {
      dw_correction_avx512_expf_array (x, y, n);
      return;
    }
  if (dw_correction_simd_enabled ())
    {
      dw_correction_simd_expf_array_avx2 (x, y, n);
      return;
    }
#endif
  for (size_t i = 0; i < n; i++)
    y[i] = dw_torch_expf (x[i]);
}

void
dw_correction_simd_slime_row (const DwSlimeRowIn *in, float *w, double sums[3], double *count)
{
  sums[0] = sums[1] = sums[2] = 0;
  *count = 0;
#ifdef DW_HAVE_X86
  if (dw_correction_simd_enabled ())
    {
      dw_correction_simd_slime_row_avx2 (in, w, sums, count);
      return;
    }
#endif
  dw_correction_simd_slime_row_scalar_from (in, w, sums, count, 0);
}

void
dw_correction_simd_sequence_weights (float *w, const float *m, float row_weight, float upper,
                                     float lower, bool icepop, size_t T, bool stream)
{
#ifdef DW_HAVE_X86
  if (dw_correction_simd_get_level () == DW_SIMD_AVX512)
    {
      dw_correction_avx512_sequence_weights (w, m, row_weight, upper, lower, icepop, T, stream);
      return;
    }
  if (dw_correction_simd_enabled ())
    {
      dw_correction_simd_avx2_sequence_weights_body (w, m, row_weight, upper, lower, icepop, T,
                                                     stream);
      return;
    }
#endif
  (void)stream;
  dw_correction_scalar_sequence_weights (w, m, row_weight, upper, lower, icepop, 0, T);
}

void
dw_correction_simd_stream_row (void *target, const void *source, size_t bytes)
{
#ifdef DW_HAVE_X86
  if (dw_correction_simd_get_level () == DW_SIMD_AVX512)
    {
      dw_correction_avx512_stream_row (target, source, bytes);
      return;
    }
  if (dw_correction_simd_enabled ())
    {
      dw_correction_simd_avx2_stream_row_body (target, source, bytes);
      return;
    }
#endif
  if (source)
    memcpy (target, source, bytes);
  else
    memset (target, 0, bytes);
}

/* orders the streamed stores before the result is handed on */
void
dw_correction_simd_stream_fence (void)
{
#ifdef DW_HAVE_X86
  _mm_sfence ();
#endif
}
