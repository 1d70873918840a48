/* dw-correction-simd.c — the fused per-row pass of the float32 fast path
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. See dw-correction-private.h. Built with -ffp-contract=off: the only fused
 * multiply-adds are the explicit ones of the exp replica (torch's, dw_torch_expf).
 *
 * A numeric kernel: its locals are the spec's symbols (docs/CORRECTION.md §2, §3, §4).
 * Glossary: T columns of the row; o, r, m (O, R, M as vectors) old / rollout log-probs and the
 * mask; l (L) ℓ = o − r; ls (LS) SAFE(ℓ); e (E) exp(SAFE ℓ); el (EL) exp(ℓ) unclamped for k3_kl;
 * x (W) the raw weight e·m; a (A) the applied weight (TIS min(x, C) or IcePop); S the value the
 * IS sums describe (x, or a from v0.8.0 on); u (U, Y) S clamped for std / ESS; C, c the upper
 * and lower bounds; k (Kv) the k1/k2/k3 statistic; md m as a double; d_* double-lane sums,
 * f_* float-lane counts; TOK / BN / K the compile-time specialisation flags.
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

#define SAFETY_F 20.0f

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
dw_correction_simd_exp8_core (__m256 x)
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
dw_correction_simd_exp8 (__m256 x)
{
  const __m256 low = _mm256_cmp_ps (x, _mm256_set1_ps (-104.0f), _CMP_LT_OQ);
  const __m256 high = _mm256_cmp_ps (x, _mm256_set1_ps (100.0f), _CMP_GT_OQ);
  /* the core's 2^q halves stay in range for |x| ≤ 104; clamp the out-of-range lanes first */
  const __m256 inside
    = _mm256_max_ps (_mm256_set1_ps (-104.0f), _mm256_min_ps (_mm256_set1_ps (100.0f), x));
  __m256 y = dw_correction_simd_exp8_core (
    _mm256_blendv_ps (inside, x, _mm256_cmp_ps (x, x, _CMP_UNORD_Q)));
  y = _mm256_andnot_ps (low, y);
  return _mm256_blendv_ps (y, _mm256_set1_ps (INFINITY), high);
}

static VT void
dw_correction_simd_expf_array_avx2 (const float *x, float *y, size_t n)
{
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps (y + i, dw_correction_simd_exp8 (_mm256_loadu_ps (x + i)));
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

static VT inline float
dw_correction_simd_hmax_ps (__m256 v)
{
  float a[8];
  _mm256_storeu_ps (a, v);
  float m = a[0];
  for (int i = 1; i < 8; i++)
    m = a[i] > m ? a[i] : m;
  return m;
}

static VT inline float
dw_correction_simd_hmin_ps (__m256 v)
{
  float a[8];
  _mm256_storeu_ps (a, v);
  float m = a[0];
  for (int i = 1; i < 8; i++)
    m = a[i] < m ? a[i] : m;
  return m;
}

/* Summation: every sum of values is accumulated in double, 4 lanes per vector, like the scalar
 * path's double sums (only the order of additions differs). Float32 partial sums per block of
 * 128 tokens folded into double were tried and measured: 24–28 float32 ulps on the metrics that
 * cancel (χ² = mean ρ² − 1, the log-PPL difference of Σo and Σr), 334–410 ulps on the std of the
 * weights and of the row means, and the what-if engine's exact pass, which must equal the core
 * bit for bit (test-whatif), broke; so only the 0/1 counts use float lanes (exact, ≤ BLOCK per
 * lane), folded into double every BLOCK vectors. */
#define BLOCK 16

/* The float lanes of one block's counts, the row's double lanes */
typedef struct
{
  __m256 fh, fl;
} DwSimdBlockSums;

typedef struct
{
  __m256d so, sr, sl, k3, chi, sw, swr, fh, fl, su, su2, swt, sk[3];
} DwSimdRowSums;

/* fold the block's counts into the row's double lanes and clear them */
static VT inline __attribute__ ((always_inline)) void
dw_correction_simd_fold (DwSimdRowSums *row, DwSimdBlockSums *block, const bool TOK)
{
  const __m256 zero = _mm256_setzero_ps ();
  if (TOK)
    {
      row->fh = dw_correction_simd_acc_pd (row->fh, block->fh);
      row->fl = dw_correction_simd_acc_pd (row->fl, block->fl);
      block->fh = block->fl = zero;
    }
}

/* The row pass body, specialised by the caller for the flag combinations the presets use (the
 * flags are compile-time constants there, so unused accumulators vanish and the rest stay in
 * registers); K is a bit set of the k statistics needed (bit j: k(j+1)). */
static VT inline __attribute__ ((always_inline)) void
dw_correction_simd_row_pass_body (const DwRowIn *in, DwRowOut *out, const bool TOK, const bool BN,
                                  const unsigned K)
{
  const size_t T = in->T;
  const float *restrict po = in->o, *restrict pr = in->r, *restrict pm = in->m;
  float *restrict pw = in->w, *restrict pl = in->l, *restrict pe = in->e;
  const __m256 zero = _mm256_setzero_ps (), one = _mm256_set1_ps (1.0f);
  const __m256 hi20 = _mm256_set1_ps (SAFETY_F), lo20 = _mm256_set1_ps (-SAFETY_F);
  const __m256 Cv = _mm256_set1_ps (in->C), cv = _mm256_set1_ps (in->c);
  const __m256 ninf = _mm256_set1_ps (-INFINITY), pinf = _mm256_set1_ps (INFINITY);
  const __m256 half = _mm256_set1_ps (0.5f), sgn = _mm256_set1_ps (-0.0f);
  const __m256d dzero = _mm256_setzero_pd ();
  DwSimdRowSums d = { dzero,
                      dzero,
                      dzero,
                      dzero,
                      dzero,
                      dzero,
                      dzero,
                      dzero,
                      dzero,
                      dzero,
                      dzero,
                      dzero,
                      { dzero, dzero, dzero } };
  DwSimdBlockSums f = { zero, zero };
  const bool applied = in->applied, icepop = in->icepop;
  const __m256 low = applied ? zero : cv;
  /* a valid token's weight or k statistic is NaN exactly when its ℓ is NaN (SAFE keeps NaN,
   * exp of a clamped value is finite, the mask value is 1): one flag serves them all */
  __m256 wmax = ninf, wmin = pinf, lnan = zero;
  __m256 kmax[3] = { ninf, ninf, ninf };
  size_t n_valid = 0;
  int pending = 0;
  size_t t = 0;
  for (; t + 8 <= T; t += 8)
    {
      const __m256 O = _mm256_loadu_ps (po + t), R = _mm256_loadu_ps (pr + t);
      const __m256 M = _mm256_loadu_ps (pm + t);
      const __m256 L = _mm256_sub_ps (O, R);
      if (pl)
        _mm256_storeu_ps (pl + t, L);
      const __m256 valid = _mm256_cmp_ps (M, zero, _CMP_NEQ_UQ);
      const int vm = _mm256_movemask_ps (valid);
      const __m256 LS = _mm256_min_ps (hi20, _mm256_max_ps (lo20, L)); /* keeps NaN */
      if (vm == 0)
        {
          /* padding only: nothing is summed; the weight is exp(SAFE ℓ)·m = ±0, or NaN for NaN ℓ
           * (IcePop: 0, neither is inside the bounds) */
          if (TOK && icepop)
            _mm256_storeu_ps (pw + t, zero);
          else if (TOK)
            {
              __m256 W
                = _mm256_mul_ps (_mm256_blendv_ps (one, L, _mm256_cmp_ps (L, L, _CMP_UNORD_Q)), M);
              _mm256_storeu_ps (pw + t, W);
            }
          if (pe)
            _mm256_storeu_ps (pe + t, dw_correction_simd_exp8_core (LS));
          continue;
        }
      const __m256 E = dw_correction_simd_exp8_core (LS);
      if (pe)
        _mm256_storeu_ps (pe + t, E);
      __m256 EL = E;
      const __m256 big
        = _mm256_and_ps (_mm256_cmp_ps (_mm256_andnot_ps (sgn, L), hi20, _CMP_GT_OQ), valid);
      if (__builtin_expect (_mm256_movemask_ps (big) != 0, 0))
        EL = _mm256_blendv_ps (E, dw_correction_simd_exp8 (L), big);
      n_valid += (size_t)__builtin_popcount ((unsigned)vm);
      d.so = dw_correction_simd_acc_pd (d.so, _mm256_and_ps (O, valid));
      d.sr = dw_correction_simd_acc_pd (d.sr, _mm256_and_ps (R, valid));
      d.sl = dw_correction_simd_acc_pd (d.sl, _mm256_and_ps (L, valid));
      d.k3 = dw_correction_simd_acc_pd (
        d.k3, _mm256_and_ps (_mm256_sub_ps (_mm256_sub_ps (EL, L), one), valid));
      d.chi = dw_correction_simd_acc_pd (d.chi, _mm256_and_ps (_mm256_mul_ps (E, E), valid));
      if (TOK || K)
        lnan = _mm256_or_ps (lnan, _mm256_and_ps (_mm256_cmp_ps (L, L, _CMP_UNORD_Q), valid));
      if (TOK)
        {
          const __m256 W = _mm256_mul_ps (E, M);
          const __m256 gt = _mm256_cmp_ps (W, Cv, _CMP_GT_OQ);
          const __m256 lt = _mm256_cmp_ps (W, cv, _CMP_LT_OQ);
          /* the applied weight: IcePop keeps W inside [c, C] (NaN is not inside: 0), TIS
           * truncates at C (NaN stays NaN) */
          const __m256 A = icepop
                             ? _mm256_and_ps (W, _mm256_and_ps (_mm256_cmp_ps (W, cv, _CMP_GE_OQ),
                                                                _mm256_cmp_ps (W, Cv, _CMP_LE_OQ)))
                             : _mm256_blendv_ps (W, Cv, gt);
          _mm256_storeu_ps (pw + t, A);
          const __m256 S = applied ? A : W;
          d.sw = dw_correction_simd_acc_pd (d.sw, _mm256_and_ps (S, valid));
          if (applied)
            d.swr = dw_correction_simd_acc_pd (d.swr, _mm256_and_ps (W, valid));
          f.fh = _mm256_add_ps (f.fh, _mm256_and_ps (_mm256_and_ps (gt, valid), one));
          f.fl = _mm256_add_ps (f.fl, _mm256_and_ps (_mm256_and_ps (lt, valid), one));
          /* CLAMP (S, low, C) as the reference path computes it: min(max(S, low), C) — when
           * low > C (thresholds below 1) every non-NaN weight becomes C; NaN stays NaN */
          const __m256 Y = _mm256_blendv_ps (S, low, _mm256_cmp_ps (S, low, _CMP_LT_OQ));
          const __m256 U = _mm256_blendv_ps (Y, Cv, _mm256_cmp_ps (Y, Cv, _CMP_GT_OQ));
          d.su = dw_correction_simd_acc_pd (d.su, _mm256_and_ps (U, valid));
          d.su2 = dw_correction_simd_acc_pd (d.su2, _mm256_and_ps (_mm256_mul_ps (U, U), valid));
          /* the batch-normalisation sum stays double per token: its float32 divisor rescales
             every weight, which must stay bit-identical to the reference path's */
          if (BN)
            d.swt = dw_correction_simd_acc_pd (d.swt, _mm256_and_ps (A, valid));
          wmax = _mm256_max_ps (wmax, _mm256_blendv_ps (ninf, S, valid));
          wmin = _mm256_min_ps (wmin, _mm256_blendv_ps (pinf, S, valid));
        }
      for (int j = 0; j < 3; j++)
        if (K & (1u << j))
          {
            __m256 Kv = j == 0   ? _mm256_xor_ps (LS, sgn)
                        : j == 1 ? _mm256_mul_ps (half, _mm256_mul_ps (LS, LS))
                                 : _mm256_sub_ps (_mm256_sub_ps (E, one), LS);
            d.sk[j] = dw_correction_simd_acc_pd (d.sk[j], _mm256_and_ps (Kv, valid));
            kmax[j] = _mm256_max_ps (kmax[j], _mm256_blendv_ps (ninf, Kv, valid));
          }
      if (++pending == BLOCK)
        {
          pending = 0;
          dw_correction_simd_fold (&d, &f, TOK);
        }
    }
  dw_correction_simd_fold (&d, &f, TOK);
  dw_correction_scalar_row_out_init (out);
  out->n = (double)n_valid; /* binary rows: Σm = # valid */
  out->n_valid = n_valid;
  out->so = dw_correction_simd_hsum_pd (d.so);
  out->sr = dw_correction_simd_hsum_pd (d.sr);
  out->sl = dw_correction_simd_hsum_pd (d.sl);
  out->k3kl = dw_correction_simd_hsum_pd (d.k3);
  out->chi = dw_correction_simd_hsum_pd (d.chi);
  const bool has_nan = _mm256_movemask_ps (lnan) != 0;
  if (TOK)
    {
      out->sw = dw_correction_simd_hsum_pd (d.sw);
      out->sw_raw = applied ? dw_correction_simd_hsum_pd (d.swr) : out->sw;
      out->fh = dw_correction_simd_hsum_pd (d.fh);
      out->fl = dw_correction_simd_hsum_pd (d.fl);
      out->su = dw_correction_simd_hsum_pd (d.su);
      out->su2 = dw_correction_simd_hsum_pd (d.su2);
      out->swt = dw_correction_simd_hsum_pd (d.swt);
      if (n_valid)
        {
          /* IcePop's applied weights are never NaN (a NaN ratio is not inside the bounds) */
          const bool weight_nan = has_nan && !(applied && icepop);
          out->wmax = weight_nan ? NAN : dw_correction_simd_hmax_ps (wmax);
          out->wmin = weight_nan ? NAN : dw_correction_simd_hmin_ps (wmin);
        }
    }
  for (int j = 0; j < 3; j++)
    if (K & (1u << j))
      {
        out->sk[j] = dw_correction_simd_hsum_pd (d.sk[j]);
        if (n_valid)
          out->mk[j] = has_nan ? NAN : dw_correction_simd_hmax_ps (kmax[j]);
      }
  dw_correction_scalar_row_pass_tail (in, out, t);
}

#define ROW_PASS(NAME, TOK, BN, K)                          \
  static VT void NAME (const DwRowIn *in, DwRowOut *out)    \
  {                                                         \
    dw_correction_simd_row_pass_body (in, out, TOK, BN, K); \
  }
/* the presets' combinations: no IS / token IS, no k / k1 (geo RS, seq-sum RS) / k3 (k3 RS) */
ROW_PASS (dw_correction_simd_row_pass_n0, false, false, 0)
ROW_PASS (dw_correction_simd_row_pass_t0, true, false, 0)
ROW_PASS (dw_correction_simd_row_pass_n1, false, false, 1)
ROW_PASS (dw_correction_simd_row_pass_t1, true, false, 1)
ROW_PASS (dw_correction_simd_row_pass_n4, false, false, 4)
ROW_PASS (dw_correction_simd_row_pass_t4, true, false, 4)
#undef ROW_PASS

static VT void
dw_correction_simd_row_pass_any (const DwRowIn *in, DwRowOut *out, unsigned k)
{
  dw_correction_simd_row_pass_body (in, out, in->is_token, in->bn, k);
}

static void
dw_correction_simd_row_pass_avx2 (const DwRowIn *in, DwRowOut *out)
{
  const unsigned k
    = (unsigned)in->need_k[0] | (unsigned)in->need_k[1] << 1 | (unsigned)in->need_k[2] << 2;
  if (!in->bn && (k == 0 || k == 1 || k == 4))
    {
      if (k == 0)
        (in->is_token ? dw_correction_simd_row_pass_t0 : dw_correction_simd_row_pass_n0) (in, out);
      else if (k == 1)
        (in->is_token ? dw_correction_simd_row_pass_t1 : dw_correction_simd_row_pass_n1) (in, out);
      else
        (in->is_token ? dw_correction_simd_row_pass_t4 : dw_correction_simd_row_pass_n4) (in, out);
    }
  else
    dw_correction_simd_row_pass_any (in, out, k);
}

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
    dw_correction_simd_row_pass_avx2 (in, out);
#else
  dw_correction_scalar_row_pass (in, out);
#endif
}

bool
dw_correction_simd_row_pass_fuses_mask (void)
{
  return dw_correction_simd_get_level () == DW_SIMD_AVX512;
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
