/* dw-whatif-private.h — the what-if engine's shared internals (core/whatif only)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The module's parts (docs/WHATIF.md §1):
 *   dw-whatif-step.c   builds the statistics of one batch (DwWhatifStep) and answers the public
 *                      step API;
 *   dw-whatif-query.c  the threshold-dependent queries on those statistics (counts and sums of a
 *                      quantity beyond a bound, per-row kept counts);
 *   dw-whatif-sketch.c the token sketch of a compact step;
 *   dw-whatif-eval.c   a correction plan evaluated on the statistics;
 *   dw-whatif-applied.c  the IS metrics of verl v0.8.0 / v0.9.0 (applied weights);
 *   dw-whatif-list.c   the metric list an evaluation fills (flags, error bounds);
 *   dw-whatif-engine.c a run of steps: loading threads, parallel evaluation, the exact pass.
 *
 * Glossary of the symbols the formulas use (docs/CORRECTION.md §2–§6): ℓ = old − rollout
 * log-prob of a valid token, ℓ̃ = clamp(ℓ, −20, 20), w = exp(ℓ̃) the token IS ratio,
 * k1 = −ℓ̃, k2 = ½ℓ̃², k3 = exp(ℓ̃) − 1 − ℓ̃; R(x) rounds to the batch's dtype.
 */
#pragma once

#include "dw-whatif-engine.h"
#include "dw-plan.h"
#include "dw-store.h"
#include "dw-torch.h"

#include <math.h>

G_BEGIN_DECLS

/* verl's SAFETY_BOUND on ℓ and the 1e-8 of its masked means */
#define DW_WHATIF_SAFETY_BOUND DW_TORCH_SAFETY_BOUND
#define DW_WHATIF_MEAN_EPSILON DW_TORCH_MEAN_EPSILON
/* tokens per block of the prefix sums */
#define DW_WHATIF_BLOCK 64
/* the columns of DwWhatifStep.is_lanes (MEAN_TOK, N, MAX_WEIGHT, MIN_WEIGHT), and the rows a
 * float32 copy of a column is padded to a multiple of (the widest variant's lanes) */
#define DW_WHATIF_IS_LANES_FIELDS 4
#define DW_WHATIF_LANES_BLOCK     4
/* cut values of the row count table (dw_whatif_query_row_count_cut) */
#define DW_WHATIF_N_CUTS 64

/* ------------------------------------------------------------------------------------------ */
/* double-double sums: the exactly rounded sum of many doubles                                */

typedef struct
{
  double high, low;
} DwWhatifSum;

static inline DwWhatifSum
dw_whatif_sum_add_value (DwWhatifSum sum, double value)
{
  double total = sum.high + value;
  double value_part = total - sum.high;
  double error = (sum.high - (total - value_part)) + (value - value_part);
  error += sum.low;
  double high = total + error;
  DwWhatifSum result = { high, error - (high - total) };
  return result;
}

static inline DwWhatifSum
dw_whatif_sum_add (DwWhatifSum sum, DwWhatifSum other)
{
  return dw_whatif_sum_add_value (dw_whatif_sum_add_value (sum, other.high), other.low);
}

static inline DwWhatifSum
dw_whatif_sum_negate (DwWhatifSum sum)
{
  DwWhatifSum result = { -sum.high, -sum.low };
  return result;
}

static inline double
dw_whatif_sum_value (DwWhatifSum sum)
{
  return sum.high + sum.low;
}

/* ------------------------------------------------------------------------------------------ */
/* the statistics of one step                                                                  */

/* per-token quantities with block prefix sums over the sorted ℓ */
typedef enum
{
  DW_WHATIF_Q_WEIGHT,                      /* w = R(exp(ℓ̃)) */
  DW_WHATIF_Q_WEIGHT_SQ,                   /* R(w·w) */
  DW_WHATIF_Q_LOG,                         /* ℓ̃ */
  DW_WHATIF_Q_LOG_SQ,                      /* R(ℓ̃·ℓ̃) */
  DW_WHATIF_Q_K2,                          /* R(0.5·R(ℓ̃²)) */
  DW_WHATIF_Q_K2_SQ,                       /* R(k2·k2) */
  DW_WHATIF_Q_K3,                          /* R(R(R(exp ℓ̃) − 1) − ℓ̃) */
  DW_WHATIF_Q_K3_SQ,                       /* R(k3·k3) */
  DW_WHATIF_N_QUANTITIES,                  /* quantities below are not summed */
  DW_WHATIF_Q_RAW = DW_WHATIF_N_QUANTITIES /* ℓ itself */
} DwWhatifQuantity;

typedef struct
{
  double n;     /* R(Σ m) */
  double valid; /* # valid tokens (== Σ m: masks are 0/1 on the fast path) */
  double sum_log;
  double log_seq, weight_seq, mean_seq; /* sequence level: R(Σℓ), exp, row mean of the weight */
  double log_geo, weight_geo, mean_geo; /* geometric level (verl-0.7 RS, verl-0.6 IS) */
  double mean_tok;                      /* token level: row mean of w */
  double min_weight, max_weight;
  double min_log, max_log; /* raw ℓ (veto) */
  double sum_k[3], max_k[3], min_k[3];
} DwWhatifRow;

/* per-row statistics of the sequence-level RS options */
enum
{
  DW_WHATIF_SO_SUM_K1,
  DW_WHATIF_SO_SUM_K2,
  DW_WHATIF_SO_SUM_K3,
  DW_WHATIF_SO_MEAN_K1,
  DW_WHATIF_SO_MEAN_K2,
  DW_WHATIF_SO_MEAN_K3,
  DW_WHATIF_SO_MAX_K2,
  DW_WHATIF_SO_MAX_K3,
  DW_WHATIF_N_SO
};

/* per-row columns (struct of arrays: the row loops of an evaluation read a few contiguous
 * doubles per row instead of a whole DwWhatifRow): the DW_WHATIF_N_SO row statistics, then these */
enum
{
  DW_WHATIF_COL_N = DW_WHATIF_N_SO, /* DwWhatifRow.n */
  DW_WHATIF_COL_VALID,              /* DwWhatifRow.valid */
  DW_WHATIF_COL_K1_MIN, /* −clamp(max ℓ), −clamp(min ℓ): the row's extremes of k1 = −ℓ̃ */
  DW_WHATIF_COL_K1_MAX,
  DW_WHATIF_COL_MEAN_TOK, /* row means of the IS weight per level (DwLevel order) */
  DW_WHATIF_COL_MEAN_SEQ,
  DW_WHATIF_COL_MEAN_GEO,
  DW_WHATIF_COL_WEIGHT_SEQ, /* DwWhatifRow.weight_seq, weight_geo */
  DW_WHATIF_COL_WEIGHT_GEO,
  DW_WHATIF_COL_LOG_SEQ, /* DwWhatifRow.log_seq, log_geo */
  DW_WHATIF_COL_LOG_GEO,
  DW_WHATIF_COL_MIN_WEIGHT, /* DwWhatifRow.min_weight, max_weight, min_log */
  DW_WHATIF_COL_MAX_WEIGHT,
  DW_WHATIF_COL_MIN_LOG,
  DW_WHATIF_N_COLUMNS
};

/* threshold-free statistics of the rows' weight means of one level over all rows (as the ratio
 * metrics sum them), and the extremes of the rows' log-ratio (sequence and geometric levels) */
typedef struct
{
  double mean, sum_sq_dev, max, min, max_dev, log_max, log_min;
} DwWhatifLevelStat;

/* statistics of a row statistic over the valid rows (n > 0), in row order as the RS metrics sum
 * them: they do not depend on a threshold */
typedef struct
{
  double sum, count, max, min, max_dev, sum_sq_dev;
} DwWhatifRowStat;

/* the shape of k2 or k3 over the sorted ℓ */
typedef struct
{
  gsize end_left;    /* [0, end_left): non-increasing */
  gsize start_right; /* [start_right, N): non-decreasing */
  double core_max;   /* max of the statistic on [end_left, start_right), -inf if empty */
  /* the core's values sorted, with block prefix sums of v and R(v²): exact counts and sums */
  gsize core_n;
  float *core_f; /* float32 batches (the values are float32) */
  double *core;  /* float64 batches */
  DwWhatifSum *core_prefix, *core_prefix_sq;
} DwWhatifShape;

typedef struct _DwWhatifSketch DwWhatifSketch;

struct _DwWhatifStep
{
  gint64 number; /* the training step */
  gboolean f32;
  gsize n_rows, n_cols;
  gboolean empty; /* no valid token: verl raises */
  gboolean fast;
  char *reason;
  double mask_sum, mask_count; /* Σ m and R(R(Σ m) + 1e-8) */
  gsize n_tokens;
  float *sorted_f;  /* sorted ℓ (f32 batches) */
  double *sorted_d; /* sorted ℓ (f64 batches) */
  /* the same values sorted within each row: row b is [row_start[b], row_start[b + 1]) */
  float *row_sorted_f;
  double *row_sorted_d;
  gsize *row_start;
  /* the IS weights w of the row-sorted values, summed within each row: row_weight_sum[i] = Σ w of
   * the row's sorted positions up to and including i (double; row b's sums are exact when
   * row_weight_exact[b], dw_whatif_step_row_weight_sums) */
  double *row_weight_sum;
  guint8 *row_weight_exact;
  /* row count table: cut_value[c] = the ℓ at sorted position c·N/N_CUTS, cut_count[c·B + b] =
   * tokens of row b with ℓ < cut_value[c] (c = N_CUTS: all of the row's tokens); NULL when a row
   * may hold more than 65535 tokens */
  double cut_value[DW_WHATIF_N_CUTS];
  guint16 *cut_count;
  /* per-row sorted k values, built on first need (token_k2/k3 combined with sequence options) */
  GMutex row_k_lock;
  int row_k_which; /* 2 or 3: which k the arrays hold, 0 before the first need */
  float *row_k_f;
  double *row_k_d;
  gsize n_blocks;
  DwWhatifSum *prefix[DW_WHATIF_N_QUANTITIES]; /* [n_blocks + 1] */
  gboolean weight_monotone;
  DwWhatifShape shape_k2, shape_k3;
  double neg_k3_sum, neg_k3_sq; /* Σ over k3 < 0 of k3 and of R(k3²) (clamped to 0 by RS std) */
  DwWhatifRow *rows;            /* while the step is built; its columns stay (the rows are freed) */
  double *columns;              /* [DW_WHATIF_N_COLUMNS][n_rows] */
  /* float32 steps: the columns MEAN_TOK, N, MAX_WEIGHT and MIN_WEIGHT as float32, one after the
   * other, each padded to whole vectors (dw_whatif_lanes_stride): a move of the token-level IS
   * threshold on a compact step reads 12 bytes a row (IcePop 16) instead of 5 columns of doubles
   * (NULL otherwise) */
  float *is_lanes;
  DwWhatifRowStat so_stat[DW_WHATIF_N_SO];
  DwWhatifLevelStat level_stat[3];
  double weight_sum_tok, weight_sum_seq, weight_sum_geo;
  double tok_sum_k[3];
  double seq_sum_stat[DW_WHATIF_N_SO];
  double max_weight, min_weight, max_k[3], min_k[3];
  /* a compact step keeps no tokens, only this description of them (dw-whatif-sketch.c) */
  DwWhatifSketch *sketch;
  /* compact steps: where k2 / k3 are not monotone along the sorted ℓ (DwWhatifShape's core):
   * its token count and its ℓ range, [0] k2, [1] k3 */
  gsize core_n[2];
  double core_low[2], core_high[2], core_max[2];
  /* the 13 off-policy metrics (unprefixed keys, as dw_correction_run_entry OFFPOLICY gives) */
  gsize n_offpolicy;
  double *offpolicy_values;
  const char **offpolicy_keys; /* [n_offpolicy] their keys, interned (DwWhatifKeySource) */
};

/* the floats of each column of DwWhatifStep.is_lanes for @n_rows rows */
static inline gsize
dw_whatif_lanes_stride (gsize n_rows)
{
  return (n_rows + DW_WHATIF_LANES_BLOCK - 1) / DW_WHATIF_LANES_BLOCK * DW_WHATIF_LANES_BLOCK;
}

/* the column @column of the per-row table */
static inline const double *
dw_whatif_column (const DwWhatifStep *step, int column)
{
  return step->columns + (gsize)column * step->n_rows;
}

/* the value of @column at @row */
static inline double
dw_whatif_cell (const DwWhatifStep *step, int column, gsize row)
{
  return step->columns[(gsize)column * step->n_rows + row];
}

/* round to / exp in the step's dtype (dw-torch.h, as the correction core) */
static inline double
dw_whatif_round (const DwWhatifStep *step, double value)
{
  return dw_torch_round (step->f32, value);
}

static inline double
dw_whatif_exp (const DwWhatifStep *step, double value)
{
  return dw_torch_exp (step->f32, value);
}

/* verl's masked mean over the batch: R(R(sum) / R(R(Σ m) + 1e-8)) */
static inline double
dw_whatif_mean_batch (const DwWhatifStep *step, double sum)
{
  return dw_whatif_round (step, dw_whatif_round (step, sum) / step->mask_count);
}

/* the masked mean of one row: R(R(sum) / R(n + 1e-8)) */
static inline double
dw_whatif_mean_row (const DwWhatifStep *step, double sum, double n)
{
  return dw_whatif_round (step, dw_whatif_round (step, sum)
                                  / dw_whatif_round (step, n + DW_WHATIF_MEAN_EPSILON));
}

/* @acc += @value added @times times, as dw-correction.c adds a row-constant value once per valid
 * token: for float32 values and counts the product is exact and so is the sum in the bounded range
 * the metrics have; float64 values are added one by one so the rounding is the same */
static inline void
dw_whatif_add_repeated (const DwWhatifStep *step, double *acc, double value, double times)
{
  if (step->f32)
    *acc += value * times;
  else
    for (double k = 0; k < times; k++)
      *acc += value;
}

/* @value counted @times times, 0 when @times is 0 (also for an infinite bound: inf · 0 is NaN) */
static inline double
dw_whatif_times (double value, double times)
{
  return times == 0 ? 0.0 : value * times;
}

/* ℓ at sorted position @index */
static inline double
dw_whatif_sorted_value (const DwWhatifStep *step, gsize index)
{
  return step->f32 ? (double)step->sorted_f[index] : step->sorted_d[index];
}

/* ℓ at position @index of the row-sorted values */
static inline double
dw_whatif_row_value (const DwWhatifStep *step, gsize index)
{
  return step->f32 ? (double)step->row_sorted_f[index] : step->row_sorted_d[index];
}

/* quantity @quantity of a token whose raw log-ratio is @log_ratio */
static inline double
dw_whatif_quantity (const DwWhatifStep *step, int quantity, double log_ratio)
{
  double clamped = dw_torch_clamp (log_ratio, -DW_WHATIF_SAFETY_BOUND, DW_WHATIF_SAFETY_BOUND);
  double value;
  switch (quantity)
    {
    case DW_WHATIF_Q_WEIGHT:
      return dw_whatif_round (step, dw_whatif_exp (step, clamped));
    case DW_WHATIF_Q_WEIGHT_SQ:
      value = dw_whatif_round (step, dw_whatif_exp (step, clamped));
      return dw_whatif_round (step, value * value);
    case DW_WHATIF_Q_LOG:
      return clamped;
    case DW_WHATIF_Q_LOG_SQ:
      return dw_whatif_round (step, clamped * clamped);
    case DW_WHATIF_Q_K2:
      return dw_whatif_round (step, 0.5 * dw_whatif_round (step, clamped * clamped));
    case DW_WHATIF_Q_K2_SQ:
      value = dw_whatif_round (step, 0.5 * dw_whatif_round (step, clamped * clamped));
      return dw_whatif_round (step, value * value);
    case DW_WHATIF_Q_K3:
      value = dw_whatif_round (step, dw_whatif_exp (step, clamped));
      return dw_whatif_round (step, dw_whatif_round (step, value - 1.0) - clamped);
    case DW_WHATIF_Q_K3_SQ:
      value = dw_whatif_round (step, dw_whatif_exp (step, clamped));
      value = dw_whatif_round (step, dw_whatif_round (step, value - 1.0) - clamped);
      return dw_whatif_round (step, value * value);
    default:
      return log_ratio;
    }
}

/* dw_whatif_quantity () of every summed quantity of @log_ratio into @value, with one exp (the
 * same operations: the same values) */
static inline void
dw_whatif_quantities (const DwWhatifStep *step, double log_ratio,
                      double value[DW_WHATIF_N_QUANTITIES])
{
  double clamped = dw_torch_clamp (log_ratio, -DW_WHATIF_SAFETY_BOUND, DW_WHATIF_SAFETY_BOUND);
  double weight = dw_whatif_round (step, dw_whatif_exp (step, clamped));
  value[DW_WHATIF_Q_WEIGHT] = weight;
  value[DW_WHATIF_Q_WEIGHT_SQ] = dw_whatif_round (step, weight * weight);
  value[DW_WHATIF_Q_LOG] = clamped;
  value[DW_WHATIF_Q_LOG_SQ] = dw_whatif_round (step, clamped * clamped);
  value[DW_WHATIF_Q_K2] = dw_whatif_round (step, 0.5 * value[DW_WHATIF_Q_LOG_SQ]);
  value[DW_WHATIF_Q_K2_SQ] = dw_whatif_round (step, value[DW_WHATIF_Q_K2] * value[DW_WHATIF_Q_K2]);
  value[DW_WHATIF_Q_K3] = dw_whatif_round (step, dw_whatif_round (step, weight - 1.0) - clamped);
  value[DW_WHATIF_Q_K3_SQ] = dw_whatif_round (step, value[DW_WHATIF_Q_K3] * value[DW_WHATIF_Q_K3]);
}

/* ------------------------------------------------------------------------------------------ */
/* queries (dw-whatif-query.c)                                                                 */

typedef enum
{
  DW_WHATIF_LT,
  DW_WHATIF_LE,
  DW_WHATIF_GT,
  DW_WHATIF_GE
} DwWhatifCompare;

/* Σ of @quantity over sorted positions [start, end) */
DwWhatifSum dw_whatif_range_sum (const DwWhatifStep *step, int quantity, gsize start, gsize end);
/* first index in [low, high) where quantity <op> bound holds, assuming false…false true…true */
gsize dw_whatif_query_first_true (const DwWhatifStep *step, int quantity, DwWhatifCompare op,
                                  double bound, gsize low, gsize high);
/* first index in [low, high) where it fails, assuming true…true false…false */
gsize dw_whatif_query_first_false (const DwWhatifStep *step, int quantity, DwWhatifCompare op,
                                   double bound, gsize low, gsize high);

/* Σ CLAMP(w, lo, hi) and Σ R(u²) over valid tokens, #(w > hi), #(w < lo), #(lo ≤ w ≤ hi);
 * CLAMP is min(max(w, lo), hi): every token contributes hi when lo > hi (the counts keep their
 * meaning with the given bounds, as dw-correction.c counts them) */
typedef struct
{
  double sum, sum_sq, n_high, n_low, n_kept;
  /* absolute error bounds (compact steps; 0 on a full step) */
  double sum_error, sum_sq_error, n_high_error, n_low_error, n_kept_error;
} DwWhatifClamped;

void dw_whatif_query_clamp_weights (const DwWhatifStep *step, double lower, double upper,
                                    DwWhatifClamped *out);
/* Σ_{w ≤ C} w + C·#(w > C) (truncated weights) */
double dw_whatif_query_truncated_sum (const DwWhatifStep *step, double cap, double *error);
/* # valid tokens with ℓ < @bound, with its error bound (@error: 0 on a full step) */
double dw_whatif_query_count_log_below (const DwWhatifStep *step, double bound, double *error);

/* a token-level RS option (verl ≥ 0.7.1 k-options) on the statistics */
typedef struct
{
  double sum, sum_sq, n_high, n_low;
  gsize kept_start, kept_end; /* kept set = sorted positions [kept_start, kept_end) (see approx) */
  gsize n_kept;               /* exact (compact steps: rounded estimate) */
  gboolean approx;            /* the kept set is not exactly that interval */
  /* compact steps: the kept set is the raw ℓ in [kept_low, kept_high] (empty when
   * kept_low > kept_high); the counts are estimates with these error bounds */
  double kept_low, kept_high;
  double n_kept_estimate, count_error, sum_error, sum_sq_error;
} DwWhatifTokenOption;

/* token_k1 with bounds [lower, upper] on k1 = −ℓ̃ */
void dw_whatif_query_token_k1 (const DwWhatifStep *step, double lower, double upper,
                               DwWhatifTokenOption *out);
/* token_k2 / token_k3 (@k = 2, 3) with k ≤ upper */
void dw_whatif_query_token_k23 (const DwWhatifStep *step, int k, double upper,
                                DwWhatifTokenOption *out);

/* Σ w over the row-sorted positions [start, end) of row @row (positions relative to the row):
 * exactly rounded */
double dw_whatif_query_row_weight_sum (const DwWhatifStep *step, gsize row, gsize start, gsize end);

/* valid tokens of row @row with low ≤ ℓ ≤ high (raw ℓ), by search in the row */
gsize dw_whatif_query_row_count_between (const DwWhatifStep *step, gsize row, double low,
                                         double high);
/* tokens of row @row with ℓ < x; @cut = dw_whatif_query_cut_index (x) (ignored without a cut
 * table) */
gsize dw_whatif_query_row_count_below (const DwWhatifStep *step, gsize row, int cut, double x);
/* the largest c with cut_value[c] ≤ x, or −1 */
int dw_whatif_query_cut_index (const DwWhatifStep *step, double x);
/* tokens of row @row with ℓ < x (@inclusive: ℓ ≤ x), @cut = dw_whatif_query_cut_index (x) */
gsize dw_whatif_query_row_count_cut (const DwWhatifStep *step, gsize row, int cut, double x,
                                     gboolean inclusive);
/* fetches the window dw_whatif_query_row_count_cut (step, row, cut, …) will search */
void dw_whatif_query_row_prefetch (const DwWhatifStep *step, gsize row, int cut);
/* tokens of row @row with k ≤ upper (@k = 2, 3), from the row's sorted k values */
gsize dw_whatif_query_row_kept_k23 (const DwWhatifStep *step, gsize row, int k, double upper);

/* ------------------------------------------------------------------------------------------ */
/* the token sketch of a compact step (dw-whatif-sketch.c)                                     */

/* the tokens where a monotone predicate holds (a prefix of the sorted order): their count and the
 * sums of every quantity over them, each with an absolute error bound (0: exact) */
typedef struct
{
  double count, count_error;
  double sum[DW_WHATIF_N_QUANTITIES], sum_error[DW_WHATIF_N_QUANTITIES];
  DwWhatifSum total[DW_WHATIF_N_QUANTITIES]; /* the exact part (internal) */
  double split[DW_WHATIF_N_QUANTITIES];      /* the estimated part (internal) */
} DwWhatifSketchPart;

/* builds the sketch of a full step (before its tokens are dropped) */
DwWhatifSketch *dw_whatif_sketch_new (const DwWhatifStep *step);
/* builds a sketch from the store's token summary of the same batch (checked by the caller:
 * dw_whatif_step_set_token_summary); its bins' sums carry error bounds */
DwWhatifSketch *dw_whatif_sketch_new_from_summary (const DwWhatifStep *step,
                                                   const DwTokenSummary *summary);
void dw_whatif_sketch_free (DwWhatifSketch *self);
gsize dw_whatif_sketch_get_memory (const DwWhatifSketch *self);
/* the tokens where (quantity op bound) holds, assuming true…true false…false in sorted order */
void dw_whatif_sketch_prefix (const DwWhatifStep *step, int quantity, DwWhatifCompare op,
                              double bound, DwWhatifSketchPart *out);
/* the tokens whose raw ℓ lies in [low, high] (dw-whatif-query.c) */
void dw_whatif_query_sketch_between (const DwWhatifStep *step, double low, double high,
                                     DwWhatifSketchPart *inside);
/* the quantile @q of ℓ (nearest rank; interpolated inside a bulk bin) */
double dw_whatif_sketch_quantile (const DwWhatifStep *step, double q);

/* ------------------------------------------------------------------------------------------ */
/* evaluation (dw-whatif-eval.c)                                                               */

/* verl ≥ 0.8.0 importance sampling: the metrics describe the applied weights */
typedef struct
{
  DwLevel level;
  gboolean icepop;            /* w = r inside [lower, upper], else 0; FALSE: w = min(r, upper) */
  gboolean raw_seq_fractions; /* v0.9.0: seq_fraction_* from the raw rows' means */
  double upper, lower;        /* lower: IcePop's L, else 1/U (diagnostics only) */
  gboolean batch_normalize;
  gboolean bn_all_rows; /* sequence batch norm averages empty rows in */
} DwWhatifApplied;

/* Where an entry's key comes from: the list's prefix, @name and @suffix (dw_whatif_list_put3), or
 * key @index of the table of serial @table (dw_whatif_list_put_table; 0: put3's). Within one
 * engine evaluation equal sources are equal keys (dw_whatif_list_finish compares them instead of
 * the keys' text): every string put then lives as long as the evaluation and does not change
 * (a literal, the plan's, an interned string), and a serial is never given twice. */
typedef struct
{
  const char *prefix, *name, *suffix;
  guint64 table;
  guint index;
} DwWhatifKeySource;

/* the metric list of an evaluation (dw-whatif-list.c) */
typedef struct
{
  DwWhatifKeySource source;
  const DwWhatifKeys *table; /* the table of source.table (borrowed: the memo holds it) */
  double value, error;
  guint8 approximate;
} DwWhatifEntry;

/* entries a list holds without a heap allocation (an evaluation puts 20–60) */
#define DW_WHATIF_LIST_INLINE 96

typedef struct
{
  const char *prefix;
  guint64 epoch;          /* the engine evaluation it is part of (0: its keys compared as text) */
  DwWhatifEntry *entries; /* @inline until it overflows, then on the heap */
  guint n_entries, capacity;
  gboolean approximate; /* flag of the values put now (an estimate without a known bound) */
  double error;         /* error bound of the value put next (reset by each put) */
  DwWhatifEntry inline_entries[DW_WHATIF_LIST_INLINE];
} DwWhatifList;

/* an empty list whose keys start with @prefix, part of the evaluation this thread is in
 * (dw_whatif_list_set_arena) */
void dw_whatif_list_init (DwWhatifList *list, const char *prefix);
/* appends the list's prefix + @name + @suffix (cut to the key size, like snprintf) with the list's
 * current flags, and resets list->error */
void dw_whatif_list_put3 (DwWhatifList *list, double value, const char *name, const char *suffix);
void dw_whatif_list_put (DwWhatifList *list, const char *name, double value);
/* sorts the list by key into @out (metrics, approximate flags, error bounds) and frees it */
void dw_whatif_list_finish (DwWhatifList *list, DwWhatifStepResult *out);
/* the bytes of an arena block: under glibc's mmap threshold, so that a freed block goes back to
 * the heap of the thread that made it; a result whose arrays need more has its own */
#define DW_WHATIF_ARENA_BLOCK (64 * 1024 - 64)

/* memory kept (NULL or @size bytes) */
typedef struct
{
  gpointer memory;
  gsize size;
} DwWhatifKept;

/* The memory an engine keeps from its freed results for its next evaluation (dw-whatif-spare.c;
 * dw_whatif_engine_set_interactive): kept only when @keep, else freed. */
typedef struct
{
  GMutex lock;
  gboolean keep;
  guint n_live;                            /* results of the engine not yet freed */
  DwWhatifKept results, rows;              /* a result's results and row_rejected_block */
  GPtrArray *blocks;                       /* free arena blocks (DW_WHATIF_ARENA_BLOCK bytes) */
  guint max_blocks;                        /* the most blocks an evaluation took: more are freed */
  gsize last_results_size, last_rows_size; /* the last evaluation's arrays */
} DwWhatifSpare;

void dw_whatif_spare_init (DwWhatifSpare *spare);
void dw_whatif_spare_clear (DwWhatifSpare *spare);
void dw_whatif_spare_set_keep (DwWhatifSpare *spare, gboolean keep);
/* a free arena block (its pages already mapped), or NULL when none is left */
gpointer dw_whatif_spare_take_block (DwWhatifSpare *spare);
/* @result's arrays for its n_steps steps (and @n_rows row outcomes when @rows): kept memory when
 * it is large enough; @result counts as live */
void dw_whatif_spare_take_arrays (DwWhatifSpare *spare, DwWhatifRunResult *result, gboolean rows,
                                  gsize n_rows);
/* @result made (its storage holds its blocks): what the next evaluation will need */
void dw_whatif_spare_made (DwWhatifSpare *spare, const DwWhatifRunResult *result);
/* @res freed: when kept, its arrays and blocks are taken (set to NULL or removed from it) */
void dw_whatif_spare_release (DwWhatifSpare *spare, DwWhatifRunResult *res);

/* Blocks the lists finished in one thread of an engine evaluation take their results' arrays
 * from (one allocation per 64 KB instead of three per step; the run result frees the blocks). */
typedef struct
{
  GPtrArray *blocks;
  guchar *next;
  gsize left;
  guint64 epoch;        /* the evaluation's (dw_whatif_list_new_epoch) */
  DwWhatifSpare *spare; /* where new blocks come from first (nullable) */
} DwWhatifArena;

/* a number for one engine evaluation, never given before (DwWhatifList.epoch) */
guint64 dw_whatif_list_new_epoch (void);

/* the arena of the lists this thread finishes from now on (NULL: each result allocates its own,
 * as outside an engine evaluation) */
void dw_whatif_list_set_arena (DwWhatifArena *arena);
/* frees the list without a result */
void dw_whatif_list_clear (DwWhatifList *list);
/* room for @n more entries */
void dw_whatif_list_reserve (DwWhatifList *list, guint n);
/* appends the keys of @table (a memo's: it must outlive the list) with @values, @errors and
 * @approximate flags, one per key */
void dw_whatif_list_put_table (DwWhatifList *list, const DwWhatifKeys *table, const double *values,
                               const double *errors, const guint8 *approximate);
/* the table of the keys of @list's entries from @first on, in the order put: @current (not
 * referenced again) when it holds them, else a new reference to the live table that does */
const DwWhatifKeys *dw_whatif_list_keys_from (const DwWhatifList *list, guint first,
                                              const DwWhatifKeys *current);
/* std and ESS of a clamped weight u from Σu and Σ R(u²) (docs/CORRECTION.md §3.3) */
void dw_whatif_list_spread_values (const DwWhatifStep *step, double sum, double sum_sq, double *std,
                                   double *ess);
/* puts <prefix>_std and <prefix>_eff_sample_size with their bounds from the sums' bounds */
void dw_whatif_list_put_spread (const DwWhatifStep *step, DwWhatifList *list, const char *prefix,
                                double sum, double sum_sq, double sum_error, double sum_sq_error);

/* the v0.8.0 / v0.9.0 IS metrics (dw-whatif-applied.c); FALSE when verl raises its
 * ZeroDivisionError (every applied weight zero) */
gboolean dw_whatif_applied_evaluate (const DwWhatifStep *step, DwWhatifList *list,
                                     const DwWhatifApplied *applied);

/* The plan of @config (dw_plan_build), or FALSE with @out failed: verl's error for a config it
 * rejects, or (@step nullable) the empty-batch error, which the trainer raises first. */
gboolean dw_whatif_eval_prepare (const DwWhatifStep *step, const DwConfig *config, DwPlan *plan,
                                 DwWhatifStepResult *out);
/* What a step's last evaluation put for one group of metrics (the IS metrics; the RS and
 * off-policy ones), under the id of the plan fields the group reads (DwWhatifMemoKeys): a slider
 * that moves one group's threshold leaves the other's entries as they were (dw-whatif-eval.c).
 * Owned by the engine, one per step, used by one evaluation at a time. */
#define DW_WHATIF_MEMO_KEY 384

/* bytes a memo keeps per entry: value, error bound, approximate flag */
#define DW_WHATIF_MEMO_ENTRY (2 * sizeof (double) + sizeof (guint8))

typedef struct
{
  gboolean valid;
  gboolean has_rows;
  guint64 key_id;
  const DwWhatifKeys *keys; /* the entries' keys in the order put (a reference): the values
                             * alone are kept per step, 17 bytes an entry instead of ~100 */
  double *values;           /* [capacity] values, then @errors and @approximate: one block */
  double *errors;           /* [capacity] error bounds, in the block of @values */
  guint8 *approximate;      /* [capacity] approximate flags, in the block of @values */
  guint n_entries, capacity;
  guint8 *row_rejected; /* [n_rows] when has_rows, of @row_capacity bytes */
  gsize row_capacity;
} DwWhatifGroupMemo;

typedef struct
{
  DwWhatifGroupMemo is, rs;
  /* the engine's: the step's rows and rejected rows per row label (dw_whatif_engine_set_row_labels
   * of generation @labels_generation) under the RS group of id @labels_rs_id (0: none kept) */
  guint64 labels_rs_id, labels_generation;
  guint32 label_rows[DW_WHATIF_MAX_LABELS], label_rejected[DW_WHATIF_MAX_LABELS];
} DwWhatifMemo;

void dw_whatif_memo_clear (DwWhatifMemo *memo);

enum
{
  DW_WHATIF_GROUP_IS,
  DW_WHATIF_GROUP_RS,
  DW_WHATIF_N_GROUPS
};

/* The plan fields each group read in the last evaluation, and their ids: a plan whose fields
 * equal the last one's keeps the id, other fields get a new one (ids are never reused), so a
 * step's memo is current when its id is the group's. Id 0: not memoised. */
typedef struct
{
  guint64 last_id;
  guint64 id[DW_WHATIF_N_GROUPS];
  gsize length[DW_WHATIF_N_GROUPS];
  guchar key[DW_WHATIF_N_GROUPS][DW_WHATIF_MEMO_KEY];
} DwWhatifMemoKeys;

/* the ids of @plan's group fields */
void dw_whatif_memo_keys_update (DwWhatifMemoKeys *keys, const DwPlan *plan);

/* Whether @plan is evaluated in an IS group and an RS group (the rollout_corr helper, verl
 * 0.6.1 on: only the RS group rejects rows), which a memo keeps; else in one piece. */
gboolean dw_whatif_eval_in_groups (const DwPlan *plan);

/* Evaluates @plan on @step into @out; @row_rejected (nullable, n_rows) gets the per-row outcome;
 * @memo (nullable) holds the groups of the step's previous evaluation and gets this one's, under
 * the ids of @keys (the keys of @plan). */
void dw_whatif_eval_step (const DwWhatifStep *step, const DwPlan *plan, DwWhatifStepResult *out,
                          guint8 *row_rejected, DwWhatifMemo *memo, const DwWhatifMemoKeys *keys);
/* Fetches into cache what dw_whatif_eval_step () will read first on @step, in two @stage s (0:
 * the memo's values and the rows' columns of the groups it will compute; 1: what stage 0's
 * lines point to, the sketch's first-level arrays): a slider move reads every step once, from
 * memory, and an evaluation fetches a few steps ahead (dw-whatif-engine.c). */
void dw_whatif_eval_prefetch (const DwWhatifStep *step, const DwPlan *plan,
                              const DwWhatifMemo *memo, const DwWhatifMemoKeys *keys, int stage);
/* Fetches the sketch's first-level search arrays and the ends of its tails. */
void dw_whatif_sketch_prefetch (const DwWhatifStep *step);
/* Marks @out failed with verl's empty-mask error. */
void dw_whatif_eval_empty_error (DwWhatifStepResult *out);

G_END_DECLS
