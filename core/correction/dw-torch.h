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

/* torch.exp in the input dtype (expf for float32) */
static inline double
dw_torch_exp (bool f32, double x)
{
  return f32 ? (double)expf ((float)x) : exp (x);
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
