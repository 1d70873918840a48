/* dw-whatif-kernels.c — the row loops of a slider move (dw-whatif-kernels-private.h)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Compiled twice (core/whatif/meson.build): DW_WHATIF_LANES=2 defines the baseline variants,
 * DW_WHATIF_LANES=4 the AVX2 and AVX-512 ones. Each loop is an always-inline body on the lane
 * vectors; DW_WHATIF_KERNEL_VARIANT compiles it for one instruction set.
 */
#include "config.h"

#include "dw-whatif-kernels-private.h"

/* The four-lane build holds the AVX2 and AVX-512 variants only: its helpers and bodies are
 * compiled for AVX2 (which AVX-512 includes), so that the intrinsics of the lane conversions
 * inline into them (dw-whatif-lanes-private.h). */
#if DW_WHATIF_LANES == 4 && defined(DW_WHATIF_LANES_X86)
#include <immintrin.h>
#define DW_WHATIF_KERNELS_FOR_AVX2 1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
#endif

#include "dw-whatif-lanes-private.h"
#include "dw-whatif-private.h"

/* The sums of a loop are kept as DW_WHATIF_SUM_WAYS interleaved partial sums, row r in way
 * r % DW_WHATIF_SUM_WAYS, added up in way order at the end: the same additions in the same order
 * whatever the width of the variant, so every variant gives the same bits. */
#define DW_WHATIF_SUM_WAYS  4
#define DW_WHATIF_SUM_PARTS (DW_WHATIF_SUM_WAYS / DW_WHATIF_LANES)

typedef struct
{
  DwWhatifLanes part[DW_WHATIF_SUM_PARTS];
} DwWhatifWays;

DW_WHATIF_LANES_INLINE double
dw_whatif_ways_total (const DwWhatifWays *ways)
{
  double total = 0;
  for (guint part = 0; part < DW_WHATIF_SUM_PARTS; part++)
    for (guint lane = 0; lane < DW_WHATIF_LANES; lane++)
      total += ways->part[part][lane];
  return total;
}

/* the live lanes of part @part of the rows from @block (FALSE: past the last part or row) */
DW_WHATIF_LANES_INLINE gboolean
dw_whatif_ways_live (gsize n_rows, gsize block, guint part, guint *live)
{
  const gsize start = block + part * DW_WHATIF_LANES;
  if (part >= DW_WHATIF_SUM_PARTS || start >= n_rows)
    return FALSE;
  *live = MIN (DW_WHATIF_LANES, n_rows - start);
  return TRUE;
}

/* the rows of a loop in whole blocks, then the parts of the last block: BODY (start, part, live)
 * sees a constant @live in the whole blocks (every lane live, so the compiler drops the masks) */
#define DW_WHATIF_FOR_PARTS(N_ROWS, BODY)                                                          \
  do                                                                                               \
    {                                                                                              \
      const gsize whole_ = (N_ROWS) - (N_ROWS) % DW_WHATIF_SUM_WAYS;                               \
      for (gsize block_ = 0; block_ < whole_; block_ += DW_WHATIF_SUM_WAYS)                        \
        for (guint part_ = 0; part_ < DW_WHATIF_SUM_PARTS; part_++)                                \
          BODY (block_ + part_ * DW_WHATIF_LANES, part_, DW_WHATIF_LANES);                         \
      for (guint part_ = 0, live_; dw_whatif_ways_live ((N_ROWS), whole_, part_, &live_); part_++) \
        BODY (whole_ + part_ * DW_WHATIF_LANES, part_, live_);                                     \
    }                                                                                              \
  while (0)

/* The statistics of the rows' applied means r_b (DwWhatifAppliedSeqStats), accumulated one part
 * of DW_WHATIF_LANES rows at a time: by dw_whatif_applied_seq_stats_lanes from the means, by
 * dw_whatif_applied_rows_sketch_lanes as it makes them */
typedef struct
{
  DwWhatifLanes upper, lower, max, min, max_dev, error_max;
  DwWhatifMask n_high, n_low, n_unsure_high, n_unsure_low; /* tallies */
  DwWhatifWays sum, error_sum, error_sq;
} DwWhatifSeqStatsLanes;

DW_WHATIF_LANES_INLINE void
dw_whatif_seq_stats_lanes_init (DwWhatifSeqStatsLanes *acc, const DwWhatifAppliedSeqStats *stats)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0);
  acc->upper = dw_whatif_lanes_splat (stats->upper_r);
  acc->lower = dw_whatif_lanes_splat (stats->lower_r);
  acc->max = acc->max_dev = dw_whatif_lanes_splat (-INFINITY);
  acc->min = dw_whatif_lanes_splat (INFINITY);
  acc->error_max = zero;
  acc->n_high = acc->n_low = acc->n_unsure_high = acc->n_unsure_low = (DwWhatifMask)zero;
  for (guint part = 0; part < DW_WHATIF_SUM_PARTS; part++)
    acc->sum.part[part] = acc->error_sum.part[part] = acc->error_sq.part[part] = zero;
}

/* part @part of a block of exact means: the rows' means @mean (0 in a dead lane), the values
 * compared with the bounds; @in: the live lanes */
DW_WHATIF_LANES_INLINE void
dw_whatif_seq_stats_lanes_add_exact (DwWhatifSeqStatsLanes *acc, guint part, DwWhatifMask in,
                                     DwWhatifLanes mean, DwWhatifLanes compared)
{
  const DwWhatifLanes one = dw_whatif_lanes_splat (1.0);
  const DwWhatifLanes lowest = dw_whatif_lanes_splat (-INFINITY);
  const DwWhatifLanes highest = dw_whatif_lanes_splat (INFINITY);
  acc->sum.part[part] += mean;
  acc->max = dw_whatif_lanes_max (acc->max, dw_whatif_lanes_select (in, mean, lowest));
  acc->min = dw_whatif_lanes_min (acc->min, dw_whatif_lanes_select (in, mean, highest));
  acc->max_dev = dw_whatif_lanes_max (
    acc->max_dev, dw_whatif_lanes_select (in, dw_whatif_lanes_abs (mean - one), lowest));
  acc->n_high = dw_whatif_lanes_tally (acc->n_high, in & (compared > acc->upper));
  acc->n_low = dw_whatif_lanes_tally (acc->n_low, in & (compared < acc->lower));
}

/* the same with the means' error bounds @error (0 in a dead lane). Where every error is 0, what
 * this adds to the error sums, their maximum and the unsure tallies changes none of them: an
 * error sum only ever holds +0 or more, x + 0 is x, and dw_whatif_lanes_max (x, 0) is x for
 * x ≥ 0 and NaN, so dw_whatif_seq_stats_lanes_add_exact gives the same bits */
DW_WHATIF_LANES_INLINE void
dw_whatif_seq_stats_lanes_add (DwWhatifSeqStatsLanes *acc, guint part, DwWhatifMask in,
                               DwWhatifLanes mean, DwWhatifLanes compared, DwWhatifLanes error)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0);
  dw_whatif_seq_stats_lanes_add_exact (acc, part, in, mean, compared);
  acc->error_sum.part[part] += error;
  acc->error_max = dw_whatif_lanes_max (acc->error_max, error);
  acc->error_sq.part[part] += error * error;
  const DwWhatifMask unsure = error > zero;
  acc->n_unsure_high = dw_whatif_lanes_tally (
    acc->n_unsure_high, unsure & (dw_whatif_lanes_abs (mean - acc->upper) <= error));
  acc->n_unsure_low = dw_whatif_lanes_tally (
    acc->n_unsure_low, unsure & (dw_whatif_lanes_abs (mean - acc->lower) <= error));
}

/* part @part of the squared deviations of the means from @centre (0 in a dead lane) */
DW_WHATIF_LANES_INLINE void
dw_whatif_sum_sq_dev_part (DwWhatifWays *sum_sq_dev, const double *row_mean, DwWhatifLanes centre,
                           gsize start, guint part, guint live)
{
  const DwWhatifLanes deviation = dw_whatif_lanes_load (row_mean + start, live, 0.0) - centre;
  sum_sq_dev->part[part] += dw_whatif_lanes_select (
    dw_whatif_lanes_live (live), deviation * deviation, dw_whatif_lanes_splat (0.0));
}

/* the totals, then the deviations from the mean: a second pass over the means (in cache) */
DW_WHATIF_LANES_INLINE void
dw_whatif_seq_stats_lanes_finish (const DwWhatifSeqStatsLanes *acc, DwWhatifAppliedSeqStats *stats)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0);
  stats->sum = dw_whatif_ways_total (&acc->sum);
  stats->max = dw_whatif_lanes_reduce_max (acc->max);
  stats->min = dw_whatif_lanes_reduce_min (acc->min);
  stats->max_dev = dw_whatif_lanes_reduce_max (acc->max_dev);
  stats->n_high = dw_whatif_lanes_tally_total (acc->n_high);
  stats->n_low = dw_whatif_lanes_tally_total (acc->n_low);
  stats->error_sum = dw_whatif_ways_total (&acc->error_sum);
  stats->error_max = dw_whatif_lanes_reduce_max (acc->error_max);
  stats->error_sq = dw_whatif_ways_total (&acc->error_sq);
  stats->n_unsure_high = dw_whatif_lanes_tally_total (acc->n_unsure_high);
  stats->n_unsure_low = dw_whatif_lanes_tally_total (acc->n_unsure_low);
  const DwWhatifLanes centre = dw_whatif_lanes_splat (stats->sum / (double)stats->n_rows);
  DwWhatifWays sum_sq_dev;
  for (guint part = 0; part < DW_WHATIF_SUM_PARTS; part++)
    sum_sq_dev.part[part] = zero;
#define DW_WHATIF_SUM_SQ_DEV_PART(start, part, live) \
  dw_whatif_sum_sq_dev_part (&sum_sq_dev, stats->row_mean, centre, start, part, live)
  DW_WHATIF_FOR_PARTS (stats->n_rows, DW_WHATIF_SUM_SQ_DEV_PART);
#undef DW_WHATIF_SUM_SQ_DEV_PART
  stats->sum_sq_dev = dw_whatif_ways_total (&sum_sq_dev);
}

DW_WHATIF_LANES_INLINE void
dw_whatif_applied_seq_stats_part (DwWhatifSeqStatsLanes *acc, const DwWhatifAppliedSeqStats *stats,
                                  gsize start, guint part, guint live)
{
  dw_whatif_seq_stats_lanes_add (acc, part, dw_whatif_lanes_live (live),
                                 dw_whatif_lanes_load (stats->row_mean + start, live, 0.0),
                                 dw_whatif_lanes_load (stats->compared + start, live, 1.0),
                                 dw_whatif_lanes_splat (0.0));
}

DW_WHATIF_LANES_INLINE void
dw_whatif_applied_seq_stats_lanes (DwWhatifAppliedSeqStats *stats)
{
  DwWhatifSeqStatsLanes acc;
  dw_whatif_seq_stats_lanes_init (&acc, stats);
#define DW_WHATIF_SEQ_STATS_PART(start, part, live) \
  dw_whatif_applied_seq_stats_part (&acc, stats, start, part, live)
  DW_WHATIF_FOR_PARTS (stats->n_rows, DW_WHATIF_SEQ_STATS_PART);
#undef DW_WHATIF_SEQ_STATS_PART
  dw_whatif_seq_stats_lanes_finish (&acc, stats);
}

/* One part of a compact step's token-level row means (dw_whatif_applied_rows_sketch_lanes): the
 * row's raw sum, rebuilt from its float32 mean, less the most extreme token's part; the other
 * valid − 1 tokens may be beyond the bounds too, each by at most as much (TIS: max − U above;
 * IcePop: max above, L below). A padding lane has no token and no extreme beyond a bound: its
 * mean and error are 0, as dw_whatif_applied_seq_stats_lanes loads them. */
DW_WHATIF_LANES_INLINE void
dw_whatif_applied_rows_sketch_part (const DwWhatifAppliedRowsSketch *rows,
                                    DwWhatifSeqStatsLanes *acc, gsize start, guint part, guint live)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0), one = dw_whatif_lanes_splat (1.0);
  const DwWhatifLanes upper = dw_whatif_lanes_splat (rows->upper_r);
  const DwWhatifLanes lower = dw_whatif_lanes_splat (rows->lower_r);
  /* 2 ulps of a float32 mean */
  const DwWhatifLanes rebuilt_error = dw_whatif_lanes_splat (2.4e-7);
  const DwWhatifMask icepop = (DwWhatifMask)zero - (gint64)rows->icepop;
  DwWhatifLanes raw, tokens, valid, max_weight, min_weight;
  /* the columns one after the other, rows [start, start + lanes) of each */
  const float *row = rows->lanes != NULL ? rows->lanes + start : NULL;
  if (row != NULL)
    {
      raw = dw_whatif_lanes_load_f32 (row);
      max_weight = dw_whatif_lanes_load_f32 (row + 2 * rows->lanes_stride);
      min_weight = rows->icepop ? dw_whatif_lanes_load_f32 (row + 3 * rows->lanes_stride)
                                : dw_whatif_lanes_splat (INFINITY);
    }
  else
    {
      raw = dw_whatif_lanes_load (rows->raw_mean + start, live, 0.0);
      max_weight = dw_whatif_lanes_load (rows->max_weight + start, live, -INFINITY);
      min_weight = dw_whatif_lanes_load (rows->min_weight + start, live, INFINITY);
    }
  const DwWhatifMask high = max_weight > upper;
  const DwWhatifMask low = icepop & (min_weight < lower);
  const DwWhatifMask changed = high | low;
  /* as a rule most rows have no token beyond the bounds: their means are their raw means, exact
   * (the general case below gives the same bits, with every error 0) */
  if (!dw_whatif_lanes_any (changed))
    {
      dw_whatif_lanes_store (rows->row_mean + start, raw, live);
      dw_whatif_seq_stats_lanes_add_exact (acc, part, dw_whatif_lanes_live (live), raw, raw);
      return;
    }
  if (row != NULL)
    tokens = valid = dw_whatif_lanes_load_f32 (row + rows->lanes_stride);
  else
    {
      tokens = dw_whatif_lanes_load (rows->row_tokens + start, live, 0.0);
      valid = dw_whatif_lanes_load (rows->valid + start, live, 0.0);
    }
  DwWhatifLanes sum = raw * tokens;
  DwWhatifLanes error = dw_whatif_lanes_abs (sum) * rebuilt_error;
  const DwWhatifLanes beyond = rows->icepop ? max_weight : max_weight - upper;
  sum = sum - dw_whatif_lanes_select (high, beyond, zero);
  error = error + dw_whatif_lanes_select (high, (valid - one) * beyond, zero);
  sum = sum - dw_whatif_lanes_select (low, min_weight, zero);
  error = error + dw_whatif_lanes_select (low, (valid - one) * lower, zero);
  const DwWhatifLanes estimate = dw_whatif_lanes_round (
    rows->f32,
    dw_whatif_lanes_round (rows->f32, sum)
      / dw_whatif_lanes_round (rows->f32, tokens + dw_whatif_lanes_splat (DW_WHATIF_MEAN_EPSILON)));
  const DwWhatifLanes mean = dw_whatif_lanes_select (changed, estimate, raw);
  dw_whatif_lanes_store (rows->row_mean + start, mean, live);
  dw_whatif_seq_stats_lanes_add (
    acc, part, dw_whatif_lanes_live (live), mean, rows->raw_compared ? raw : mean,
    dw_whatif_lanes_select (changed & (tokens > zero), error / tokens, zero));
}

/* The row means of one compact step's token-level applied weights, and their statistics as
 * they are made (the means are stored for the second pass and the batch normalisation; their
 * errors and the raw means stay in registers). */
DW_WHATIF_LANES_INLINE void
dw_whatif_applied_rows_sketch_lanes (const DwWhatifAppliedRowsSketch *rows,
                                     DwWhatifAppliedSeqStats *stats)
{
  /* a copy the loop's stores cannot alias: its fields stay in registers */
  const DwWhatifAppliedRowsSketch local = *rows;
  DwWhatifSeqStatsLanes acc;
  dw_whatif_seq_stats_lanes_init (&acc, stats);
#define DW_WHATIF_ROWS_SKETCH_PART(start, part, live) \
  dw_whatif_applied_rows_sketch_part (&local, &acc, start, part, live)
  DW_WHATIF_FOR_PARTS (rows->n_rows, DW_WHATIF_ROWS_SKETCH_PART);
#undef DW_WHATIF_ROWS_SKETCH_PART
  dw_whatif_seq_stats_lanes_finish (&acc, stats);
}

DW_WHATIF_LANES_INLINE void
dw_whatif_token_rows_lanes (DwWhatifTokenRows *rows)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0);
  const DwWhatifLanes lower = dw_whatif_lanes_splat (rows->lower);
  const DwWhatifLanes upper = dw_whatif_lanes_splat (rows->upper);
  DwWhatifLanes seq_masked = zero;
  for (gsize start = 0; start < rows->n_rows; start += DW_WHATIF_LANES)
    {
      const guint live = MIN (DW_WHATIF_LANES, rows->n_rows - start);
      const DwWhatifLanes valid = dw_whatif_lanes_load (rows->valid + start, live, 0.0);
      const DwWhatifLanes tokens = dw_whatif_lanes_load (rows->token_counts + start, live, 0.0);
      DwWhatifMask within;
      if (rows->k1_min != NULL)
        within = (dw_whatif_lanes_load (rows->k1_min + start, live, 0.0) >= lower)
                 & (dw_whatif_lanes_load (rows->k1_max + start, live, 0.0) <= upper);
      else
        within = dw_whatif_lanes_load (rows->max_k + start, live, 0.0) <= upper;
      /* padding lanes have no valid token: they keep */
      const DwWhatifMask loses = ~((valid == zero) | within);
      seq_masked += dw_whatif_lanes_count (loses & (tokens > zero));
      dw_whatif_lanes_store_flags (rows->rejected + start, loses, live, TRUE);
    }
  rows->seq_masked = dw_whatif_lanes_sum (seq_masked);
}

/* rows [start, start + live) of dw_whatif_row_counts_lanes into way part @part */
DW_WHATIF_LANES_INLINE void
dw_whatif_row_counts_part (const DwWhatifRowCounts *counts, DwWhatifWays *n_high,
                           DwWhatifWays *n_low, gsize start, guint part, guint live)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0);
  const DwWhatifMask valid = dw_whatif_lanes_load (counts->token_counts + start, live, 0.0) > zero;
  const DwWhatifLanes value = dw_whatif_lanes_load (counts->value + start, live, 0.0);
  n_high->part[part]
    += dw_whatif_lanes_count (valid & (value > dw_whatif_lanes_splat (counts->upper)));
  n_low->part[part]
    += dw_whatif_lanes_count (valid & (value < dw_whatif_lanes_splat (counts->lower)));
}

DW_WHATIF_LANES_INLINE void
dw_whatif_row_counts_lanes (DwWhatifRowCounts *counts)
{
  const DwWhatifRowCounts local = *counts;
  DwWhatifWays n_high, n_low;
  for (guint part = 0; part < DW_WHATIF_SUM_PARTS; part++)
    n_high.part[part] = n_low.part[part] = dw_whatif_lanes_splat (0.0);
#define DW_WHATIF_ROW_COUNTS_PART(start, part, live) \
  dw_whatif_row_counts_part (&local, &n_high, &n_low, start, part, live)
  DW_WHATIF_FOR_PARTS (local.n_rows, DW_WHATIF_ROW_COUNTS_PART);
#undef DW_WHATIF_ROW_COUNTS_PART
  counts->n_high = dw_whatif_ways_total (&n_high);
  counts->n_low = dw_whatif_ways_total (&n_low);
}

/* the running counts and sums of dw_whatif_seq_option_lanes */
typedef struct
{
  DwWhatifWays sum, sum_sq, masked, seq_masked;
} DwWhatifSeqOptionState;

/* rows [start, start + live) of dw_whatif_seq_option_lanes into way part @part, @sums a constant
 * (each case compiles without its test) */
DW_WHATIF_LANES_INLINE void
dw_whatif_seq_option_part (const DwWhatifSeqOption *option, DwWhatifSeqOptionState *state,
                           gsize start, guint part, guint live, gboolean sums)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0);
  const DwWhatifLanes lower = dw_whatif_lanes_splat (option->lower);
  const DwWhatifLanes upper = dw_whatif_lanes_splat (option->upper);
  const DwWhatifMask two_sided = (DwWhatifMask)zero - (gint64)option->two_sided;
  /* padding lanes: no valid token, no token, kept */
  const DwWhatifLanes value = dw_whatif_lanes_load (option->value + start, live, 0.0);
  const DwWhatifLanes valid = dw_whatif_lanes_load (option->valid + start, live, 0.0);
  const DwWhatifLanes tokens = dw_whatif_lanes_load (option->token_counts + start, live, 0.0);
  const DwWhatifMask keeps
    = (value <= upper) & ((value >= lower) | ~two_sided) & dw_whatif_lanes_live (live);
  if (sums)
    {
      /* torch.clamp (dw_torch_clamp): NaN stays NaN */
      const DwWhatifLanes lower_metric = dw_whatif_lanes_splat (option->lower_metric);
      DwWhatifLanes clamped = dw_whatif_lanes_select (value < lower_metric, lower_metric, value);
      clamped = dw_whatif_lanes_select (clamped > upper, upper, clamped);
      state->sum.part[part] += clamped * valid;
      state->sum_sq.part[part] += dw_whatif_lanes_round (TRUE, clamped * clamped) * valid;
    }
  state->masked.part[part] += dw_whatif_lanes_select (keeps, zero, valid);
  const DwWhatifMask loses = ~keeps & (tokens > zero);
  state->seq_masked.part[part] += dw_whatif_lanes_count (loses);
  dw_whatif_lanes_store_flags (option->rejected + start, loses, live, TRUE);
}

DW_WHATIF_LANES_INLINE void
dw_whatif_seq_option_lanes (DwWhatifSeqOption *option)
{
  /* a copy the loop's stores (byte flags) cannot alias: its fields stay in registers */
  const DwWhatifSeqOption local = *option;
  DwWhatifSeqOptionState state;
  for (guint part = 0; part < DW_WHATIF_SUM_PARTS; part++)
    state.sum.part[part] = state.sum_sq.part[part] = state.masked.part[part]
      = state.seq_masked.part[part] = dw_whatif_lanes_splat (0.0);
#define DW_WHATIF_SEQ_OPTION_SUMS(start, part, live) \
  dw_whatif_seq_option_part (&local, &state, start, part, live, TRUE)
#define DW_WHATIF_SEQ_OPTION_COUNTS(start, part, live) \
  dw_whatif_seq_option_part (&local, &state, start, part, live, FALSE)
  if (local.sums)
    DW_WHATIF_FOR_PARTS (local.n_rows, DW_WHATIF_SEQ_OPTION_SUMS);
  else
    DW_WHATIF_FOR_PARTS (local.n_rows, DW_WHATIF_SEQ_OPTION_COUNTS);
#undef DW_WHATIF_SEQ_OPTION_SUMS
#undef DW_WHATIF_SEQ_OPTION_COUNTS
  option->sum = dw_whatif_ways_total (&state.sum);
  option->sum_sq = dw_whatif_ways_total (&state.sum_sq);
  option->masked = dw_whatif_ways_total (&state.masked);
  option->seq_masked = dw_whatif_ways_total (&state.seq_masked);
}

/* the running counts and sums of dw_whatif_rs_rows_lanes */
typedef struct
{
  DwWhatifWays rejected_rows, masked, masked_error;
} DwWhatifRsRowsState;

/* rows [start, start + live) of dw_whatif_rs_rows_lanes into way part @part */
DW_WHATIF_LANES_INLINE void
dw_whatif_rs_rows_part (const DwWhatifRsRows *rows, DwWhatifRsRowsState *state, gsize start,
                        guint part, guint live)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0);
  const DwWhatifMask seq = dw_whatif_lanes_load_flags (rows->seq_rejected + start, live);
  const DwWhatifMask tok = dw_whatif_lanes_load_flags (rows->tok_rejected + start, live);
  const DwWhatifLanes valid = dw_whatif_lanes_load (rows->valid + start, live, 0.0);
  const DwWhatifMask rejected = (valid > zero) & (seq | tok);
  state->rejected_rows.part[part] += dw_whatif_lanes_count (rejected);
  if (rows->row_rejected != NULL)
    dw_whatif_lanes_store_flags (rows->row_rejected + start, rejected, live, FALSE);
  state->masked.part[part] += dw_whatif_lanes_select (
    seq, dw_whatif_lanes_select (tok, valid * dw_whatif_lanes_splat (rows->kept_share), valid),
    zero);
  state->masked_error.part[part] += dw_whatif_lanes_select (seq & tok, valid, zero);
}

DW_WHATIF_LANES_INLINE void
dw_whatif_rs_rows_lanes (DwWhatifRsRows *rows)
{
  const DwWhatifRsRows local = *rows;
  DwWhatifRsRowsState state;
  for (guint part = 0; part < DW_WHATIF_SUM_PARTS; part++)
    state.rejected_rows.part[part] = state.masked.part[part] = state.masked_error.part[part]
      = dw_whatif_lanes_splat (0.0);
#define DW_WHATIF_RS_ROWS_PART(start, part, live) \
  dw_whatif_rs_rows_part (&local, &state, start, part, live)
  DW_WHATIF_FOR_PARTS (local.n_rows, DW_WHATIF_RS_ROWS_PART);
#undef DW_WHATIF_RS_ROWS_PART
  rows->rows_rejected = dw_whatif_ways_total (&state.rejected_rows);
  rows->masked = dw_whatif_ways_total (&state.masked);
  rows->masked_error = dw_whatif_ways_total (&state.masked_error);
}

/* the running counts and sums of dw_whatif_ratio_rows_lanes */
typedef struct
{
  DwWhatifLanes n_high, n_low, seq_high, seq_low;
  DwWhatifWays sum, sum_sq;
} DwWhatifRatioRowsState;

/* the rows [start, start + live) of dw_whatif_ratio_rows_lanes into way part @part, its options
 * as constants (@weights: the clamped weights' loop, @token_weighted, @sums) so that each
 * combination, and the whole vectors (@live DW_WHATIF_LANES), compile without their tests */
DW_WHATIF_LANES_INLINE void
dw_whatif_ratio_rows_vector (const DwWhatifRatioRows *rows, DwWhatifRatioRowsState *state,
                             gsize start, guint live, guint part, gboolean weights,
                             gboolean token_weighted, gboolean sums)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0), one = dw_whatif_lanes_splat (1.0);
  const DwWhatifLanes lower = dw_whatif_lanes_splat (rows->lower);
  const DwWhatifLanes upper = dw_whatif_lanes_splat (rows->upper);
  const DwWhatifMask in = dw_whatif_lanes_live (live);
  const DwWhatifLanes mean = dw_whatif_lanes_load (rows->mean + start, live, 0.0);
  state->seq_high += dw_whatif_lanes_count (in & (mean > upper));
  state->seq_low += dw_whatif_lanes_count (in & (mean < lower));
  if (!weights)
    return;
  const DwWhatifLanes log_ratio = dw_whatif_lanes_load (rows->log_ratio + start, live, 0.0);
  const DwWhatifLanes row_weight
    = token_weighted ? dw_whatif_lanes_load (rows->token_counts + start, live, 0.0) : one;
  state->n_high += dw_whatif_lanes_select (
    in & (log_ratio > dw_whatif_lanes_splat (rows->log_upper)), row_weight, zero);
  state->n_low += dw_whatif_lanes_select (
    in & (log_ratio < dw_whatif_lanes_splat (rows->log_lower)), row_weight, zero);
  if (!sums)
    return;
  /* padding lanes: no valid token, a product of 0; dw_torch_clamp: NaN stays NaN */
  const DwWhatifLanes weight = dw_whatif_lanes_load (rows->weight + start, live, 0.0);
  const DwWhatifLanes valid = dw_whatif_lanes_load (rows->valid + start, live, 0.0);
  DwWhatifLanes clamped = dw_whatif_lanes_select (weight < lower, lower, weight);
  clamped = dw_whatif_lanes_select (clamped > upper, upper, clamped);
  state->sum.part[part] += clamped * valid;
  state->sum_sq.part[part] += dw_whatif_lanes_round (TRUE, clamped * clamped) * valid;
}

/* dw_whatif_ratio_rows_lanes for one combination of its options (DW_WHATIF_FOR_PARTS: row r in
 * way r % DW_WHATIF_SUM_WAYS) */
DW_WHATIF_LANES_INLINE void
dw_whatif_ratio_rows_pass (DwWhatifRatioRows *rows, gboolean weights, gboolean token_weighted,
                           gboolean sums)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0);
  const gsize n_rows = rows->n_rows;
  DwWhatifRatioRowsState state = { zero, zero, zero, zero };
  for (guint part = 0; part < DW_WHATIF_SUM_PARTS; part++)
    state.sum.part[part] = state.sum_sq.part[part] = zero;
#define DW_WHATIF_RATIO_ROWS_PART(start, part, live) \
  dw_whatif_ratio_rows_vector (rows, &state, start, live, part, weights, token_weighted, sums)
  DW_WHATIF_FOR_PARTS (n_rows, DW_WHATIF_RATIO_ROWS_PART);
#undef DW_WHATIF_RATIO_ROWS_PART
  rows->sum = dw_whatif_ways_total (&state.sum);
  rows->sum_sq = dw_whatif_ways_total (&state.sum_sq);
  rows->n_high = dw_whatif_lanes_sum (state.n_high);
  rows->n_low = dw_whatif_lanes_sum (state.n_low);
  rows->seq_high = dw_whatif_lanes_sum (state.seq_high);
  rows->seq_low = dw_whatif_lanes_sum (state.seq_low);
}

DW_WHATIF_LANES_INLINE void
dw_whatif_ratio_rows_lanes (DwWhatifRatioRows *rows)
{
  if (rows->weight == NULL)
    dw_whatif_ratio_rows_pass (rows, FALSE, FALSE, FALSE);
  else if (rows->token_weighted && rows->sums)
    dw_whatif_ratio_rows_pass (rows, TRUE, TRUE, TRUE);
  else if (rows->token_weighted)
    dw_whatif_ratio_rows_pass (rows, TRUE, TRUE, FALSE);
  else if (rows->sums)
    dw_whatif_ratio_rows_pass (rows, TRUE, FALSE, TRUE);
  else
    dw_whatif_ratio_rows_pass (rows, TRUE, FALSE, FALSE);
}

/* the rows [start, start + live) of dw_whatif_ratio_mask_lanes (@flags: rows to set) */
DW_WHATIF_LANES_INLINE void
dw_whatif_ratio_mask_vector (const DwWhatifRatioMask *mask, gsize start, guint live, gboolean flags,
                             DwWhatifLanes *masked, DwWhatifLanes *rows_masked)
{
  const DwWhatifLanes zero = dw_whatif_lanes_splat (0.0);
  const DwWhatifLanes weight = dw_whatif_lanes_load (mask->weight + start, live, 1.0);
  const DwWhatifLanes valid = dw_whatif_lanes_load (mask->valid + start, live, 0.0);
  /* a NaN weight loses, as the scalar test does */
  const DwWhatifMask loses = ~((weight >= dw_whatif_lanes_splat (mask->lower))
                               & (weight <= dw_whatif_lanes_splat (mask->upper)))
                             & dw_whatif_lanes_live (live);
  *masked += dw_whatif_lanes_select (loses, valid, zero);
  *rows_masked += dw_whatif_lanes_count (loses);
  if (flags)
    dw_whatif_lanes_store_flags (mask->rejected + start, loses & (valid > zero), live, TRUE);
}

DW_WHATIF_LANES_INLINE void
dw_whatif_ratio_mask_pass (DwWhatifRatioMask *mask, gboolean flags)
{
  DwWhatifLanes masked = dw_whatif_lanes_splat (0.0), rows_masked = masked;
#define DW_WHATIF_RATIO_MASK_PART(start, part, live) \
  dw_whatif_ratio_mask_vector (mask, start, live, flags, &masked, &rows_masked)
  DW_WHATIF_FOR_PARTS (mask->n_rows, DW_WHATIF_RATIO_MASK_PART);
#undef DW_WHATIF_RATIO_MASK_PART
  mask->masked = dw_whatif_lanes_sum (masked);
  mask->rows_masked = dw_whatif_lanes_sum (rows_masked);
}

DW_WHATIF_LANES_INLINE void
dw_whatif_ratio_mask_lanes (DwWhatifRatioMask *mask)
{
  if (mask->rejected != NULL)
    dw_whatif_ratio_mask_pass (mask, TRUE);
  else
    dw_whatif_ratio_mask_pass (mask, FALSE);
}

/* the rows [start, start + live) of dw_whatif_veto_rows_lanes (@flags: rows to set) */
DW_WHATIF_LANES_INLINE void
dw_whatif_veto_rows_vector (const DwWhatifVetoRows *veto, gsize start, guint live, gboolean flags,
                            DwWhatifLanes *vetoed)
{
  /* padding lanes have no valid token */
  const DwWhatifLanes valid = dw_whatif_lanes_load (veto->valid + start, live, 0.0);
  const DwWhatifLanes min_log = dw_whatif_lanes_load (veto->min_log + start, live, 0.0);
  const DwWhatifMask has = (valid > dw_whatif_lanes_splat (0.0))
                           & (min_log < dw_whatif_lanes_splat (veto->log_threshold));
  *vetoed += dw_whatif_lanes_count (has);
  if (flags)
    dw_whatif_lanes_store_flags (veto->rejected + start, has, live, TRUE);
}

DW_WHATIF_LANES_INLINE void
dw_whatif_veto_rows_pass (DwWhatifVetoRows *veto, gboolean flags)
{
  DwWhatifLanes vetoed = dw_whatif_lanes_splat (0.0);
#define DW_WHATIF_VETO_ROWS_PART(start, part, live) \
  dw_whatif_veto_rows_vector (veto, start, live, flags, &vetoed)
  DW_WHATIF_FOR_PARTS (veto->n_rows, DW_WHATIF_VETO_ROWS_PART);
#undef DW_WHATIF_VETO_ROWS_PART
  veto->vetoed = dw_whatif_lanes_sum (vetoed);
}

DW_WHATIF_LANES_INLINE void
dw_whatif_veto_rows_lanes (DwWhatifVetoRows *veto)
{
  if (veto->rejected != NULL)
    dw_whatif_veto_rows_pass (veto, TRUE);
  else
    dw_whatif_veto_rows_pass (veto, FALSE);
}

#ifdef DW_WHATIF_KERNELS_FOR_AVX2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

/* dw_whatif_kernel_<NAME>_<VARIANT> (ARGS): BODY compiled with TARGET */
#define DW_WHATIF_KERNEL_VARIANT(NAME, VARIANT, TARGET, ARGS, PASS) \
  TARGET void dw_whatif_kernel_##NAME##_##VARIANT ARGS              \
  {                                                                 \
    dw_whatif_##NAME##_lanes PASS;                                  \
  }

#define DW_WHATIF_KERNELS(VARIANT, TARGET)                                                         \
  DW_WHATIF_KERNEL_VARIANT (applied_seq_stats, VARIANT, TARGET, (DwWhatifAppliedSeqStats * stats), \
                            (stats))                                                               \
  DW_WHATIF_KERNEL_VARIANT (                                                                       \
    applied_rows_sketch, VARIANT, TARGET,                                                          \
    (const DwWhatifAppliedRowsSketch *rows, DwWhatifAppliedSeqStats *stats), (rows, stats))        \
  DW_WHATIF_KERNEL_VARIANT (token_rows, VARIANT, TARGET, (DwWhatifTokenRows * rows), (rows))       \
  DW_WHATIF_KERNEL_VARIANT (row_counts, VARIANT, TARGET, (DwWhatifRowCounts * counts), (counts))   \
  DW_WHATIF_KERNEL_VARIANT (seq_option, VARIANT, TARGET, (DwWhatifSeqOption * option), (option))   \
  DW_WHATIF_KERNEL_VARIANT (rs_rows, VARIANT, TARGET, (DwWhatifRsRows * rows), (rows))             \
  DW_WHATIF_KERNEL_VARIANT (ratio_rows, VARIANT, TARGET, (DwWhatifRatioRows * rows), (rows))       \
  DW_WHATIF_KERNEL_VARIANT (ratio_mask, VARIANT, TARGET, (DwWhatifRatioMask * mask), (mask))       \
  DW_WHATIF_KERNEL_VARIANT (veto_rows, VARIANT, TARGET, (DwWhatifVetoRows * veto), (veto))

#if DW_WHATIF_LANES == 2
DW_WHATIF_KERNELS (baseline, )
#elif defined(DW_WHATIF_LANES_X86)
DW_WHATIF_KERNELS (avx2, DW_WHATIF_LANES_TARGET_AVX2)
DW_WHATIF_KERNELS (avx512, DW_WHATIF_LANES_TARGET_AVX512)
#endif
