/* dw-correction-private.h — what the correction paths share inside core/correction (not
 * installed, not included outside this folder)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The batch context every reference path reads, the metric list, the per-thread workspace, the
 * shared metric emitters and each path's entry, and the fused per-row pass of the float32 fast
 * path (dw-correction-simd.c): one call reads one row of old/rollout log-probs and its mask
 * (already converted to float) once and returns every per-row sum the verl entries need,
 * writing the token IS weights on the way. Two implementations with the same results: a
 * portable scalar one (the reference) and an AVX2+FMA one for rows whose mask is binary. The
 * AVX2 exp is glibc's expf algorithm (the FMA variant glibc itself selects on AVX2+FMA CPUs),
 * bit-identical to expf() on every float input, so weights and every exp-based decision are the
 * same as the scalar path's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dw-batch.h"
#include "dw-correction.h"
#include "dw-torch.h"

/* SAFETY_BOUND of verl and slime: log-ratios are clamped to ±20 before exp (§2) */
#define DW_SAFETY_BOUND DW_TORCH_SAFETY_BOUND
/* verl's masked_mean adds 1e-8 to the count (§2) */
#define DW_MASKED_MEAN_EPS DW_TORCH_MEAN_EPSILON

/* ------------------------------------------------------------------------------------------ */
/* the batch as the reference paths read it (dw-context.c)                                     */

typedef struct
{
  size_t rows, cols; /* B, T */
  bool f32;          /* float32 log-probs: every elementwise result is rounded to float */
  const DwBatch *batch;
  double *log_ratio;       /* [B*T] ℓ = old − rollout in the input dtype */
  double *mask;            /* [B*T] mask as a number */
  double *row_count;       /* [B] Σ m per row (in dtype) */
  double total;            /* Σ m (double) */
  double mean_denominator; /* R(Σ m + 1e-8): MMEAN denominator over the batch */
} DwContext;

/* round to / exp in the batch dtype */
#define DW_ROUND(context, x) dw_torch_round ((context)->f32, (x))
#define DW_EXP(context, x)   dw_torch_exp ((context)->f32, (x))

/* element @index of a log-prob array in its dtype, as a double */
static inline double
dw_context_log_prob (const void *array, bool f32, size_t index)
{
  return f32 ? (double)((const float *)array)[index] : ((const double *)array)[index];
}

static inline bool
dw_context_valid (const DwContext *context, size_t index)
{
  return context->mask[index] != 0;
}

/* MMEAN over the batch from a masked sum */
static inline double
dw_context_mean (const DwContext *context, double sum)
{
  return DW_ROUND (context, DW_ROUND (context, sum) / context->mean_denominator);
}

/* MMEAN over row @row from its masked sum */
static inline double
dw_context_row_mean (const DwContext *context, double sum, size_t row)
{
  return DW_ROUND (context, DW_ROUND (context, sum)
                              / DW_ROUND (context, context->row_count[row] + DW_MASKED_MEAN_EPS));
}

/* The batch checks verl makes first (dtypes, shape, a valid token) and ℓ, mask values, counts. */
bool dw_context_init (DwContext *context, const DwBatch *batch, DwCorrectionError *error);
/* per-row log value for sequence (MSUM) / geometric (MMEAN) levels into @row_log [B] */
void dw_context_row_log_ratio (const DwContext *context, DwLevel level, double *row_log);
/* ratio per token: exp(SAFE(ℓ)) (token) or exp(SAFE(row_log_b)) broadcast, into @ratios [B*T] */
void dw_context_ratios (const DwContext *context, DwLevel level, const double *row_log,
                        double *ratios);

/* ------------------------------------------------------------------------------------------ */
/* metric lists (dw-metric-list.c) and result arrays (dw-correction-result.c)                  */

typedef struct
{
  const char *prefix;
  size_t n, cap;
  DwMetric *m;
  bool oom;
} DwMetricList;

void dw_metric_list_put (DwMetricList *list, const char *name, double value);
void dw_metric_list_putf (DwMetricList *list, double value, const char *format, ...)
  __attribute__ ((format (printf, 3, 4)));
/* Sorts the list into @result (which owns it from then on); false when out of memory. */
bool dw_metric_list_finish (DwCorrectionResult *result, DwMetricList *list,
                            DwCorrectionError *error);

/* Stores @values [n] (doubles) as the weights (or the mask) of @result in @dtype. */
bool dw_correction_result_set_array (DwCorrectionResult *result, bool weights, DwDType dtype,
                                     const double *values, size_t n, DwCorrectionError *error);

/* ------------------------------------------------------------------------------------------ */
/* per-thread workspace (dw-workspace.c)                                                       */

enum
{
  DW_WORKSPACE_L,
  DW_WORKSPACE_M,
  DW_WORKSPACE_N,
  DW_WORKSPACE_W,
  DW_WORKSPACE_KEEP,
  DW_WORKSPACE_SCRATCH,
  DW_WORKSPACE_SLIME_W,
  DW_WORKSPACE_SLIME_NM,
  DW_WORKSPACE_FAST_ROW,
  DW_WORKSPACE_FAST_B,
  DW_WORKSPACE_RAW,
  DW_WORKSPACE_N_SLOTS
};

/* A buffer of at least @bytes for @slot, kept for the thread's next runs and freed when the
 * thread exits. */
void *dw_workspace_get (int slot, size_t bytes);
/* A result array the caller owns (released with dw_workspace_free or free). */
void *dw_workspace_alloc (size_t bytes);
void dw_workspace_free (void *block);

/* ------------------------------------------------------------------------------------------ */
/* metric emitters                                                                             */

/* masked sums of compute_is_metrics (§3.3): the ratios, the counts above / below the bounds, the
 * ratios clamped to the bounds and their squares, extremes */
typedef struct
{
  double sum, count_high, count_low, sum_clamped, sum_clamped_squared, max, min;
} DwRatioSums;

/* verl's compute_is_metrics from weights @weights [B*T] (§3.3); @row_log [B] for sequence levels
 * (NULL at token level); @row_means [B] scratch; @geometric_token_weighted: mismatch_helper's
 * geometric fractions (§6) */
void dw_ratio_metrics_compute (const DwContext *context, DwMetricList *list, const char *prefix,
                               const double *weights, const double *row_log, double upper,
                               double lower, double *row_means, bool geometric_token_weighted);
/* sequence levels: max / min / ratio fractions from the log values @row_log of every row; token
 * level (@row_log NULL): from @sums (mx, mn, fh, fl) */
void dw_ratio_metrics_emit_extremes (const DwContext *context, DwMetricList *list,
                                     const char *prefix, const DwRatioSums *sums,
                                     const double *row_log, double upper, double lower,
                                     bool geometric_token_weighted);
/* sqrt(max(MMEAN(u²) − MMEAN(u)², 0)) in the dtype, 0 when Σm ≤ 1 */
double dw_ratio_metrics_std (const DwContext *context, double sum_clamped, double sum_squares);
/* MMEAN((u / (MMEAN(u) + 1e-8))²): the ESS is its reciprocal */
double dw_ratio_metrics_normalized_square_mean (const DwContext *context, double sum_clamped,
                                                double sum_squares);
/* the seq_* keys from per-row means; the fractions compare @fraction_means (v0.9.0: raw) */
void dw_ratio_metrics_emit_rows (const DwContext *context, DwMetricList *list, const char *prefix,
                                 const double *row_means, const double *fraction_means,
                                 double upper, double lower);
/* the same metrics from masked sums already accumulated (the fast path) */
void dw_ratio_metrics_emit (const DwContext *context, DwMetricList *list, const char *prefix,
                            const DwRatioSums *sums, const double *row_log, double upper,
                            double lower, const double *row_means, bool geometric_token_weighted);

/* the off-policy metrics' sums (§3.4): token-level masked sums, then sums over rows */
typedef struct
{
  double kl, k3_kl, chi2_token;
  double training_ppl, training_log_ppl, rollout_ppl, rollout_log_ppl, difference, difference_abs,
    difference_max, difference_min, ppl_ratio, chi2_sequence;
} DwOffpolicySums;

void dw_offpolicy_init (DwOffpolicySums *sums);
/* float32 batches: every row's share at once, in row order (the same sums as add_row), the exps
 * of all rows as one vector array (dw_correction_simd_expf_array: the same bits); @row_sums
 * [3 * rows] each row's Σold, Σrollout, Σℓ; @scratch [6 * rows] */
void dw_offpolicy_add_rows (const DwContext *context, DwOffpolicySums *sums, const double *row_sums,
                            float *scratch);
void dw_offpolicy_add_row (const DwContext *context, DwOffpolicySums *sums, size_t row,
                           double sum_old, double sum_rollout, double sum_log_ratio);
/* @mismatch: mismatch_helper's 11 keys (mismatch_ prefix, no chi2) */
void dw_offpolicy_emit (const DwContext *context, DwMetricList *list, const DwOffpolicySums *sums,
                        bool mismatch);
void dw_offpolicy_compute (const DwContext *context, DwMetricList *list, bool mismatch);

/* masked sums of one RS option (§4.4): its statistic (or row value), the counts above / below
 * the bounds, the statistic clamped to the bounds and its square, extremes, rejected tokens and
 * valid rows with a rejected token */
typedef struct
{
  double sum, count_high, count_low, sum_clamped, sum_clamped_squared, max, min, masked,
    rows_masked;
} DwRsSums;

void dw_verl_rs_emit_option (const DwContext *context, DwMetricList *list, const DwRsBound *bound,
                             const DwRsSums *sums, const double *row_values, size_t n_valid_rows);
/* k-option RS (§4.3): @keep [B*T] starts at 1 and gets the combined decision */
void dw_verl_rs_k_options (const DwContext *context, DwMetricList *list, const DwRsParsed *parsed,
                           double *keep, double *scratch);

/* masked sums of the applied weights of verl v0.8.0+ (§3.6) */
typedef struct
{
  double sum_applied, sum_clamped, sum_clamped_squared;
  double count_high, count_low;
  double max_applied, min_applied;
} DwVerlIsSums;

void dw_verl_is_sums_init (DwVerlIsSums *sums);
/* compute_is_metrics of v0.8.0 / v0.9.0 from the sums, the row log values (sequence level, else
 * NULL) and the per-row means of the applied and of the raw weights; false with verl's
 * ZeroDivisionError when every applied weight is 0 */
bool dw_verl_is_emit_applied (const DwContext *context, DwMetricList *list, const DwPlan *plan,
                              const DwVerlIsSums *sums, const double *row_log,
                              const double *applied_means, const double *raw_means,
                              DwCorrectionError *error);

/* rows with a valid token whose raw log-ratio is below float32(log V) are zeroed in @keep;
 * rollout_is_veto_fraction and rollout_is_catastrophic_token_fraction (§5.3, §6.1) */
void dw_verl_rs_veto (const DwContext *context, DwMetricList *list, const DwPlan *plan,
                      double *keep);

/* IS weights into @weights and the IS metrics (§3.1–§3.3) */
bool dw_verl_is_weights (const DwContext *context, DwMetricList *list, const DwPlan *plan,
                         double *weights, double *row_log, double *row_means,
                         DwCorrectionError *error);

/* ------------------------------------------------------------------------------------------ */
/* the paths                                                                                   */

bool dw_verl_run (const DwContext *context, const DwPlan *plan, DwEntry entry,
                  DwCorrectionResult *result, DwCorrectionError *error);
bool dw_verl_mismatch_run (const DwContext *context, const DwPlan *plan, DwCorrectionResult *result,
                           DwCorrectionError *error);
bool dw_slime_mis_run (const DwContext *context, const DwPlan *plan, DwCorrectionResult *result,
                       DwCorrectionError *error);
bool dw_slime_builtin_run (const DwContext *context, const DwPlan *plan, DwCorrectionResult *result,
                           DwCorrectionError *error);
/* 1 done, 0 error (set), -1 not applicable: the caller runs the reference path */
int dw_slime_builtin_fast_run (const DwBatch *batch, const DwPlan *plan, DwCorrectionResult *result,
                               DwCorrectionError *error);
/* @share_mask: an unchanged mask is returned borrowed (DW_ENTRY_MASK_SHARED) */
int dw_correction_fast_run (const DwBatch *batch, const DwPlan *plan, bool share_mask,
                            DwCorrectionResult *result, DwCorrectionError *error);

/* ------------------------------------------------------------------------------------------ */
/* the fused per-row pass (dw-correction-scalar.c, -simd.c, -avx512.c)                         */

typedef struct
{
  size_t T;
  const float *o, *r; /* [T] log-probs of the row */
  const float *m;     /* [T] mask as float (exact values) */
  bool is_token;      /* token IS: write @w, accumulate the IS metric sums */
  bool bn;            /* also Σ min(w, C)·m */
  bool applied;       /* v0.8.0+: the metric sums describe the applied weights (§3.6) */
  bool icepop;        /* applied weights: x inside [c, C], else 0 (else min(x, C)) */
  float C, c;         /* float32 upper / lower IS thresholds (c: IcePop's L, else 1/C) */
  bool need_k[3];     /* Σ k·m and max k over valid tokens, k1..k3 of SAFE(ℓ) */
  float *w;           /* [T] weights, truncated at C (is_token) */
  float *l;           /* [T] ℓ out, or NULL */
  float *e;           /* [T] expf(SAFE(ℓ)) out, or NULL */
  /* AVX-512 only (dw_correction_simd_row_pass_fuses_mask): the row's int64 mask, read in the
   * pass and written to @m_out as float (then @m is ignored); a value other than 0 or 1 stops
   * the pass with DwRowOut.mask_not_binary */
  const int64_t *m_i64;
  float *m_out;
  bool skip_mask_row; /* with m_i64: only the tail of @m_out is written (the caller needs no
                       * float mask row; the scalar tail reads it) */
  bool stream_w;      /* AVX-512: @w is on a cache line and large, stream it past the caches */
  /* AVX-512 with m_i64: the previous row's output mask (int64), written during this pass while
   * the vector ports are busy: a copy of @defer_from, or zeros when it is NULL; the pass says in
   * DwRowOut.deferred how many values it wrote (the caller writes the rest) */
  int64_t *defer_to;
  const int64_t *defer_from;
} DwRowIn;

typedef struct
{
  double n;       /* Σ m over valid tokens (m != 0) */
  size_t n_valid; /* # valid tokens */
  double so, sr, sl;
  double k3kl; /* Σ ((exp(ℓ) − ℓ) − 1)·m, unclamped ℓ */
  double chi;  /* Σ exp(SAFE ℓ)²·m */
  /* token IS, x = exp(SAFE ℓ)·m before truncation, a = the applied weight: sw Σx·m (applied:
   * Σa·m), sw_raw Σx·m, fh/fl Σ[x > C]·m / Σ[x < c]·m, su/su2 of clamp(x, c, C) (applied:
   * clamp(a, 0, C)), swt Σ min(x, C)·m (applied: Σa·m), wmax/wmin of x (applied: of a) */
  double sw, sw_raw, fh, fl, su, su2, swt, wmax, wmin;
  double sk[3], mk[3];
  bool mask_not_binary; /* m_i64 held another value: nothing else is set (but deferred) */
  size_t deferred;      /* values of DwRowIn.defer_to written */
} DwRowOut;

/* dw-correction-scalar.c: the pass one token at a time */
void dw_correction_scalar_row_pass (const DwRowIn *in, DwRowOut *out);
/* the scalar pass over tokens [t0, T) added to @out (the vector passes' tail) */
void dw_correction_scalar_row_pass_tail (const DwRowIn *in, DwRowOut *out, size_t t0);
void dw_correction_scalar_row_out_init (DwRowOut *out);
/* the applied sequence-IS weight of a raw one: IcePop keeps it inside [lower, upper] (else 0),
 * TIS caps it at upper (NaN stays NaN) */
static inline float
dw_correction_sequence_applied (float raw, float upper, float lower, bool icepop)
{
  return icepop ? (raw >= lower && raw <= upper ? raw : 0.0f) : (raw > upper ? upper : raw);
}
/* a row's sequence-IS weights w = ρ·m over tokens [t0, T), applied as
 * dw_correction_sequence_applied () */
void dw_correction_scalar_sequence_weights (float *w, const float *m, float row_weight, float upper,
                                            float lower, bool icepop, size_t t0, size_t T);
/* Rows whose mask values are all 0, -0 or 1 only: the pass of the current level (AVX-512 or
 * AVX2; each sums in its own number of double lanes, so they differ in the order of additions). */
void dw_correction_simd_row_pass (const DwRowIn *in, DwRowOut *out);
/* whether the pass of the current level reads an int64 mask itself (DwRowIn.m_i64) */
bool dw_correction_simd_row_pass_fuses_mask (void);
/* Vector levels, chosen at run time (__builtin_cpu_supports): the best the CPU has unless a test
 * pins a lower one with dw_correction_simd_set_level (). */
typedef enum
{
  DW_SIMD_OFF = 0,
  DW_SIMD_AVX2 = 1,   /* AVX2 + FMA */
  DW_SIMD_AVX512 = 2, /* AVX-512 F, DQ, BW, VL (and AVX2 + FMA) */
} DwSimdLevel;
/* a vector level in use (AVX2 or better, and not disabled with dw_correction_simd_set_enabled) */
bool dw_correction_simd_enabled (void);
void dw_correction_simd_set_enabled (bool enabled);
/* the level in use; set_level returns the level granted (at most what the CPU has) */
int dw_correction_simd_get_level (void);
int dw_correction_simd_set_level (int level);
/* dw-correction-avx512.c: the row pass and the int64 mask row on AVX-512 (callers check the
 * level first) */
void dw_correction_avx512_row_pass (const DwRowIn *in, DwRowOut *out);
bool dw_correction_avx512_mask_i64 (const int64_t *p, size_t T, float *mf);
bool dw_correction_avx512_supported (void);
void dw_correction_avx512_expf_array (const float *x, float *y, size_t n);
/* the same on the vector level in use (the scalar formulas lane by lane, binary rows); @stream:
 * @w is on a cache line, streamed past the caches */
void dw_correction_simd_sequence_weights (float *w, const float *m, float row_weight, float upper,
                                          float lower, bool icepop, size_t T, bool stream);
void dw_correction_avx512_sequence_weights (float *w, const float *m, float row_weight, float upper,
                                            float lower, bool icepop, size_t T, bool stream);
/* @bytes at @target: a copy of @source or zeros (@source NULL), streamed past the caches where
 * the CPU can (AVX2 or AVX-512); a run that streamed calls dw_correction_simd_stream_fence at its
 * end */
void dw_correction_simd_stream_row (void *target, const void *source, size_t bytes);
void dw_correction_avx512_stream_row (void *target, const void *source, size_t bytes);
void dw_correction_simd_stream_fence (void);
/* Forces the reference path (ctx arrays in double) for tests: false by default. */
void dw_correction_simd_set_reference (bool reference);
bool dw_correction_simd_get_reference (void);

/* Mask row [off, off+T) to float. Returns false when a value is not exactly a float (the fast
 * path then gives way to the reference path); *binary = every value is 0, -0 or 1. */
bool dw_correction_simd_mask_row_to_float (const DwBatch *batch, size_t off, size_t T, float *mf,
                                           bool *binary);

/* y[i] = expf(x[i]) through the vector path when enabled (for tests). */
void dw_correction_simd_expf_array (const float *x, float *y, size_t n);

/* one row of slime's built-in paths (§7.2): the ratios ρ = exp(ℓ) of the row, its mask */
typedef struct
{
  size_t T;
  const float *ratio, *m;
  float clip, clip_low;
  bool icepop; /* ρ inside [clip_low, clip], else 0; otherwise clamp (ρ, clip_low, clip) */
} DwSlimeRowIn;

/* w[t] the applied weights; sums: Σρ·m, Σ[w ≠ ρ]·m, Σ|ρ − 1|·m (float products, double sums);
 * *count Σm. AVX2 when enabled (4 double lanes: only the order of additions differs). */
void dw_correction_simd_slime_row (const DwSlimeRowIn *in, float *w, double sums[3], double *count);
