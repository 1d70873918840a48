/* dw-whatif-kernels-private.h — the row loops of a slider move, in vectors (core/whatif only)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A slider move re-evaluates every step of a run, and a step of a real run has 256–4096 rows
 * (sequences): the loops over their columns are most of the move's work (docs/WHATIF.md §1).
 * dw-whatif-kernels.c writes them once, on vectors of doubles (dw-whatif-lanes-private.h), and
 * is compiled twice: with two lanes for the baseline (SSE2), with four for AVX2 and AVX-512
 * (gcc 12 compiles a vector wider than the target's registers one lane at a time). The
 * dw_whatif_kernel_* functions run the variant of the correction core's vector level
 * (dw_correction_get_vector_level: the widest this processor runs unless
 * dw_correction_set_vector_limit caps it; dw-whatif-lanes.c); every variant gives the same bits
 * (test /whatif/vector-variants).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* the statistics of the rows' applied means r_b dw_whatif_applied_seq puts, and of their error
 * bounds (the estimated means of a compact step's token level: dw_whatif_kernel_applied_rows_sketch
 * takes them; the other means are exact) */
typedef struct
{
  const double *row_mean, *compared;
  gsize n_rows;
  double upper_r, lower_r;
  /* out */
  double sum, max, min, max_dev, sum_sq_dev, n_high, n_low;
  double error_sum, error_max, error_sq, n_unsure_high, n_unsure_low;
} DwWhatifAppliedSeqStats;

/* the row means of the applied weights on a compact step: exact for a row with no token beyond
 * the bounds (its raw mean), else estimated as if only its most extreme token were beyond them;
 * their statistics (DwWhatifAppliedSeqStats, its row_mean this one's) are taken as they are made */
typedef struct
{
  const double *raw_mean, *row_tokens, *valid, *max_weight, *min_weight;
  /* the same as float32 (DwWhatifStep.is_lanes, valid = row_tokens, each column @lanes_stride
   * floats), or NULL */
  const float *lanes;
  gsize lanes_stride;
  gsize n_rows;
  double upper_r, lower_r;
  gboolean icepop, f32;
  gboolean raw_compared; /* the raw means are compared with the bounds (v0.9.0), else r_b */
  double *row_mean;      /* out */
} DwWhatifAppliedRowsSketch;

/* a token option's rows: which keep all their tokens (their extremes within the bounds) */
typedef struct
{
  const double *valid, *token_counts;
  const double *k1_min, *k1_max; /* token_k1 */
  const double *max_k;           /* token_k2 / token_k3 (k1_min NULL) */
  double lower, upper;
  gsize n_rows;
  guint8 *rejected;  /* out: set to 1 for a row that loses a token (never cleared) */
  double seq_masked; /* out: the non-empty rows among them */
} DwWhatifTokenRows;

/* the valid rows whose statistic lies above @upper and below @lower */
typedef struct
{
  const double *value, *token_counts;
  double lower, upper;
  gsize n_rows;
  double n_high, n_low; /* out */
} DwWhatifRowCounts;

/* a sequence RS option's rows (statistic @value): a row keeps its tokens when
 * lower ≤ value ≤ upper (@two_sided: k1) or value ≤ upper; the option's token-weighted sums of
 * the statistic clamped to [lower_metric, upper] (float32 steps only: on a float64 step torch's
 * sum of a row's repeated value is not its product) */
typedef struct
{
  const double *value, *valid, *token_counts;
  double lower, upper, lower_metric;
  gboolean two_sided, sums;
  gsize n_rows;
  guint8 *rejected; /* out: set to 1 for a non-empty row that loses its tokens (never cleared) */
  /* out: Σ valid · clamp (value) and Σ valid · R(clamp (value)²) when @sums; the valid tokens
   * of the rows that lose them; the non-empty rows among them */
  double sum, sum_sq, masked, seq_masked;
} DwWhatifSeqOption;

/* the rows the RS options reject together on a compact step: a row a sequence option rejects
 * loses its valid tokens, of which a token option also rejecting it keeps an estimated
 * @kept_share */
typedef struct
{
  const guint8 *seq_rejected, *tok_rejected;
  const double *valid;
  double kept_share;
  gsize n_rows;
  guint8 *row_rejected; /* out (nullable): 1 for a non-empty row either rejects */
  /* out: those rows; the tokens the sequence options take besides the token options' (their
   * estimate), and its error bound */
  double rows_rejected, masked, masked_error;
} DwWhatifRsRows;

/* verl ≤ 0.7.0 ratio metrics (dw_whatif_eval_ratio) of a sequence or geometric ratio: its rows'
 * weights clamped to [lower, upper], summed as Σ valid · clamp (weight) and Σ valid · R(clamp²)
 * (@sums: a float32 step whose sums are exact in any order, dw_whatif_eval_sum_exact), the rows
 * (@token_weighted: their tokens) whose log-ratio lies above @log_upper and below @log_lower; and
 * at every level the rows whose weight mean lies above @upper and below @lower (@weight NULL:
 * these alone, a token-level ratio) */
typedef struct
{
  const double *weight, *log_ratio, *valid, *token_counts; /* @weight nullable */
  const double *mean;
  double lower, upper, log_lower, log_upper;
  gboolean token_weighted, sums;
  gsize n_rows;
  /* out: the sums (when @sums), the rows (or tokens) beyond the log bounds, the rows beyond the
   * mean bounds */
  double sum, sum_sq, n_high, n_low, seq_high, seq_low;
} DwWhatifRatioRows;

/* verl ≤ 0.7.0 RS and verl-0.6 mask mode (dw_whatif_eval_ratio_mask) at the sequence or
 * geometric level: a row keeps its tokens when lower ≤ weight ≤ upper */
typedef struct
{
  const double *weight, *valid;
  double lower, upper;
  gsize n_rows;
  guint8 *rejected; /* out (nullable): set to 1 for a non-empty row that loses (never cleared) */
  double masked, rows_masked; /* out: the valid tokens of the rows that lose, those rows */
} DwWhatifRatioMask;

/* the veto (dw_whatif_eval_veto): the non-empty rows whose smallest log-ratio lies below
 * @log_threshold */
typedef struct
{
  const double *valid, *min_log;
  double log_threshold;
  gsize n_rows;
  guint8 *rejected; /* out (nullable): set to 1 for such a row (never cleared) */
  double vetoed;    /* out: those rows */
} DwWhatifVetoRows;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DW_WHATIF_LANES_X86         1
#define DW_WHATIF_LANES_TARGET_AVX2 __attribute__ ((target ("avx2")))
#define DW_WHATIF_LANES_TARGET_AVX512 \
  __attribute__ ((target ("avx512f,avx512dq,avx512vl,avx512bw")))
#else
#define DW_WHATIF_LANES_TARGET_AVX2
#define DW_WHATIF_LANES_TARGET_AVX512
#endif

/* the variants (dw-whatif-kernels.c) */
#define DW_WHATIF_KERNEL_DECLARE(variant)                                                     \
  void dw_whatif_kernel_applied_seq_stats_##variant (DwWhatifAppliedSeqStats *stats);         \
  void dw_whatif_kernel_applied_rows_sketch_##variant (const DwWhatifAppliedRowsSketch *rows, \
                                                       DwWhatifAppliedSeqStats *stats);       \
  void dw_whatif_kernel_token_rows_##variant (DwWhatifTokenRows *rows);                       \
  void dw_whatif_kernel_row_counts_##variant (DwWhatifRowCounts *counts);                     \
  void dw_whatif_kernel_seq_option_##variant (DwWhatifSeqOption *option);                     \
  void dw_whatif_kernel_rs_rows_##variant (DwWhatifRsRows *rows);                             \
  void dw_whatif_kernel_ratio_rows_##variant (DwWhatifRatioRows *rows);                       \
  void dw_whatif_kernel_ratio_mask_##variant (DwWhatifRatioMask *mask);                       \
  void dw_whatif_kernel_veto_rows_##variant (DwWhatifVetoRows *veto);
DW_WHATIF_KERNEL_DECLARE (baseline)
DW_WHATIF_KERNEL_DECLARE (avx2)
DW_WHATIF_KERNEL_DECLARE (avx512)
#undef DW_WHATIF_KERNEL_DECLARE

/* the variant of each for the vector level in use (dw-whatif-lanes.c) */
void dw_whatif_kernel_applied_seq_stats (DwWhatifAppliedSeqStats *stats);
void dw_whatif_kernel_applied_rows_sketch (const DwWhatifAppliedRowsSketch *rows,
                                           DwWhatifAppliedSeqStats *stats);
void dw_whatif_kernel_token_rows (DwWhatifTokenRows *rows);
void dw_whatif_kernel_row_counts (DwWhatifRowCounts *counts);
void dw_whatif_kernel_seq_option (DwWhatifSeqOption *option);
void dw_whatif_kernel_rs_rows (DwWhatifRsRows *rows);
void dw_whatif_kernel_ratio_rows (DwWhatifRatioRows *rows);
void dw_whatif_kernel_ratio_mask (DwWhatifRatioMask *mask);
void dw_whatif_kernel_veto_rows (DwWhatifVetoRows *veto);

G_END_DECLS
