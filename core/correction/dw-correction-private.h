/* dw-correction-private.h — the fused per-row pass of the float32 fast path (not installed)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One call reads one row of old/rollout log-probs and its mask (already converted to float) once
 * and returns every per-row sum the verl entries need, writing the token IS weights on the way.
 * Two implementations with the same results: a portable scalar one (the reference) and an
 * AVX2+FMA one for rows whose mask is binary. The AVX2 exp is glibc's expf algorithm (the FMA
 * variant glibc itself selects on AVX2+FMA CPUs), bit-identical to expf() on every float input,
 * so weights and every exp-based decision are the same as the scalar path's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dw-batch.h"

typedef struct
{
  size_t T;
  const float *o, *r; /* [T] log-probs of the row */
  const float *m;     /* [T] mask as float (exact values) */
  bool is_token;      /* token IS: write @w, accumulate the IS metric sums */
  bool bn;            /* also Σ min(w, C)·m */
  float C, c;         /* float32 upper / lower IS thresholds */
  bool need_k[3];     /* Σ k·m and max k over valid tokens, k1..k3 of SAFE(ℓ) */
  float *w;           /* [T] weights, truncated at C (is_token) */
  float *l;           /* [T] ℓ out, or NULL */
  float *e;           /* [T] expf(SAFE(ℓ)) out, or NULL */
} DwRowIn;

typedef struct
{
  double n;       /* Σ m over valid tokens (m != 0) */
  size_t n_valid; /* # valid tokens */
  double so, sr, sl;
  double k3kl; /* Σ ((exp(ℓ) − ℓ) − 1)·m, unclamped ℓ */
  double chi;  /* Σ exp(SAFE ℓ)²·m */
  /* token IS (x = exp(SAFE ℓ)·m before truncation) */
  double sw, fh, fl, su, su2, swt, wmax, wmin;
  double sk[3], mk[3];
} DwRowOut;

void dw_row_pass_scalar (const DwRowIn *in, DwRowOut *out);
/* Rows whose mask values are all 0, -0 or 1 only. */
void dw_row_pass_simd (const DwRowIn *in, DwRowOut *out);
/* AVX2 and FMA usable (and the fast path not disabled with dw_correction_set_simd (false)). */
bool dw_simd_enabled (void);
void dw_correction_set_simd (bool enabled);
/* Forces the reference path (ctx arrays in double) for tests: false by default. */
void dw_correction_set_reference (bool reference);
bool dw_correction_get_reference (void);

/* Mask row [off, off+T) to float. Returns false when a value is not exactly a float (the fast
 * path then gives way to the reference path); *binary = every value is 0, -0 or 1. */
bool dw_mask_row_to_float (const DwBatch *batch, size_t off, size_t T, float *mf, bool *binary);

/* y[i] = expf(x[i]) through the vector path when enabled (for tests). */
void dw_expf_array (const float *x, float *y, size_t n);
