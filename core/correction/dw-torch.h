/* dw-torch.h — torch / numpy scalar semantics shared by the correction kernels and the what-if
 * engine
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only, static inline. One copy of the elementwise rules the reference
 * implementations follow, so the correction paths, dw-correction-simd.c and the what-if engine
 * cannot drift apart: every value they compute must stay bit-identical to verl/slime (golden
 * tests). Callers build with -ffp-contract=off.
 */
#pragma once

#include <math.h>
#include <stdbool.h>

/* verl's and slime's SAFETY_BOUND: log-ratios are clamped to ±20 before exp, and the 1e-8 verl's
 * masked_mean adds to the count (docs/CORRECTION.md §2) */
#define DW_TORCH_SAFETY_BOUND 20.0
#define DW_TORCH_MEAN_EPSILON 1e-8

/* round to the input dtype: float32 tensors round every intermediate result to float */
static inline double
dw_torch_round (bool f32, double x)
{
  return f32 ? (double)(float)x : x;
}

/* SLEEF xexpf's constants, shared by dw_torch_expf and its AVX2 / AVX-512 lanes (which must
 * perform the same operations on them to stay bit-identical): log2(e), ln 2 in two parts for the
 * Cody–Waite reduction, and the degree-6 polynomial's coefficients c6 … c2 (c1 = 0.5) */
#define DW_TORCH_EXPF_LOG2E          1.442695040888963407359924681001892137426645954152985934f
#define DW_TORCH_EXPF_MINUS_LN2_HIGH -0.693145751953125f
#define DW_TORCH_EXPF_MINUS_LN2_LOW  -1.428606765330187045e-06f
#define DW_TORCH_EXPF_C6             0.000198527617612853646278381f
#define DW_TORCH_EXPF_C5             0.00139304355252534151077271f
#define DW_TORCH_EXPF_C4             0.00833336077630519866943359f
#define DW_TORCH_EXPF_C3             0.0416664853692054748535156f
#define DW_TORCH_EXPF_C2             0.166666671633720397949219f

/* torch.exp of a float32 tensor on the CPU: torch's Vectorized<float>::exp, SLEEF's expf with a
 * 1.0-ulp bound (xexpf: q = rint(d/ln 2), a two-part Cody–Waite reduction, a degree-6 polynomial
 * in fused multiply-adds, 2^q applied in two halves). Measured against torch 1.13 (Debian's
 * python3-torch, AVX2 dispatch): bit-identical on 3 M inputs in [−20, 20], where glibc's expf
 * differs on 9.6 % of them by 1 ulp (docs/CORRECTION.md §9.2). fmaf is glibc's, hardware FMA. */
static inline float
dw_torch_expf (float d)
{
  if (isnan (d))
    return d;
  if (d < -104.0f)
    return 0.0f;
  if (d > 100.0f)
    return INFINITY;
  const int q = (int)nearbyintf (d * DW_TORCH_EXPF_LOG2E);
  const float qf = (float)q;
  float s = fmaf (qf, DW_TORCH_EXPF_MINUS_LN2_HIGH, d);
  s = fmaf (qf, DW_TORCH_EXPF_MINUS_LN2_LOW, s);
  float u = DW_TORCH_EXPF_C6;
  u = fmaf (u, s, DW_TORCH_EXPF_C5);
  u = fmaf (u, s, DW_TORCH_EXPF_C4);
  u = fmaf (u, s, DW_TORCH_EXPF_C3);
  u = fmaf (u, s, DW_TORCH_EXPF_C2);
  u = fmaf (u, s, 0.5f);
  u = 1.0f + fmaf (s * s, u, s);
  const int half = q >> 1;
  return u * ldexpf (1.0f, half) * ldexpf (1.0f, q - half);
}

/* torch.exp in the input dtype (dw_torch_expf for float32) */
static inline double
dw_torch_exp (bool f32, double x)
{
  return f32 ? (double)dw_torch_expf ((float)x) : exp (x);
}

/* torch.clamp / np.clip: min(max(x, lo), hi), so every non-NaN value becomes hi when lo > hi
 * (e.g. the [1/C, C] std/ESS clamp for rollout_is_threshold < 1); NaN stays NaN */
static inline double
dw_torch_clamp (double x, double lo, double hi)
{
  const double y = x < lo ? lo : x;
  return y > hi ? hi : y;
}

/* dw_torch_clamp on float32 values */
static inline float
dw_torch_clampf (float x, float lo, float hi)
{
  const float y = x < lo ? lo : x;
  return y > hi ? hi : y;
}

/* NaN-propagating max / min (torch.max / torch.min, unlike fmax / fmin) */
static inline double
dw_torch_max (double a, double b)
{
  return isnan (a) || isnan (b) ? NAN : (b > a ? b : a);
}

static inline double
dw_torch_min (double a, double b)
{
  return isnan (a) || isnan (b) ? NAN : (b < a ? b : a);
}
