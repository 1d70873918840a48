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

/* the statistics of the rows' applied means r_b (and of their error bounds on a compact step)
 * dw_whatif_applied_seq puts */
typedef struct
{
  const double *row_mean, *row_error, *compared; /* row_error: NULL on a full step */
  gsize n_rows;
  double upper_r, lower_r;
  /* out */
  double sum, max, min, max_dev, sum_sq_dev, n_high, n_low;
  double error_sum, error_max, error_sq, n_unsure_high, n_unsure_low;
} DwWhatifAppliedSeqStats;

/* the row means of the applied weights on a compact step: exact for a row with no token beyond
 * the bounds (its raw mean), else estimated as if only its most extreme token were beyond them */
typedef struct
{
  const double *raw_mean, *row_tokens, *valid, *max_weight, *min_weight;
  const float *lanes; /* the same as float32 (DwWhatifStep.is_lanes, valid = row_tokens), or NULL */
  gsize n_rows;
  double upper_r, lower_r;
  gboolean icepop, f32;
  double *row_mean, *row_error, *row_raw; /* out: row_raw = raw_mean */
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
#define DW_WHATIF_KERNEL_DECLARE(variant)                                                      \
  void dw_whatif_kernel_applied_seq_stats_##variant (DwWhatifAppliedSeqStats *stats);          \
  void dw_whatif_kernel_applied_rows_sketch_##variant (const DwWhatifAppliedRowsSketch *rows); \
  void dw_whatif_kernel_token_rows_##variant (DwWhatifTokenRows *rows);                        \
  void dw_whatif_kernel_row_counts_##variant (DwWhatifRowCounts *counts);
DW_WHATIF_KERNEL_DECLARE (baseline)
DW_WHATIF_KERNEL_DECLARE (avx2)
DW_WHATIF_KERNEL_DECLARE (avx512)
#undef DW_WHATIF_KERNEL_DECLARE

/* the variant of each for the vector level in use (dw-whatif-lanes.c) */
void dw_whatif_kernel_applied_seq_stats (DwWhatifAppliedSeqStats *stats);
void dw_whatif_kernel_applied_rows_sketch (const DwWhatifAppliedRowsSketch *rows);
void dw_whatif_kernel_token_rows (DwWhatifTokenRows *rows);
void dw_whatif_kernel_row_counts (DwWhatifRowCounts *counts);

G_END_DECLS
