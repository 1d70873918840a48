/* dw-whatif-step.c — the sufficient statistics of one rollout batch
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every formula mirrors core/correction (which mirrors verl, docs/CORRECTION.md §3–§6): sums
 * that do not depend on a threshold are accumulated here in exactly the order the correction core
 * uses (same doubles); sums that do depend on one (clamped IS weights, clamped k statistics,
 * truncated weights) come from the sorted valid-token log-ratios and their block prefix sums in
 * double-double (dw-whatif-query.c), i.e. the exactly rounded sum, which is what the core's double
 * running sum gives whenever that sum is exact (float32 terms of a bounded range) and differs from
 * it by a few double ulps otherwise.
 */
#include "config.h"

#include "dw-whatif-private.h"
#include "dw-whatif-summary.h"

#include <stdlib.h>
#include <string.h>

/* the formatter would put spaces around the dashes of the domain string */
// clang-format off
G_DEFINE_QUARK (dw-whatif-error-quark, dw_whatif_error)
// clang-format on

/* ------------------------------------------------------------------------------------------ */
/* sorting                                                                                     */

static int
dw_whatif_step_compare_doubles (const void *a, const void *b)
{
  double left = *(const double *)a, right = *(const double *)b;
  return left < right ? -1 : left > right;
}

/* the bits of a float as an unsigned key that sorts like the float */
static inline guint32
dw_whatif_step_float_key (float value)
{
  guint32 bits;
  memcpy (&bits, &value, 4);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

static inline float
dw_whatif_step_key_float (guint32 key)
{
  guint32 bits = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
  float value;
  memcpy (&value, &bits, 4);
  return value;
}

/* LSD radix sort, 3 passes of 11 bits: @values (row order, row b at [row_start[b],
 * row_start[b + 1])) becomes globally sorted, and @rows gets each row's values sorted in place of
 * the row */
static void
dw_whatif_step_sort_floats (float *values, gsize n, float *rows, const gsize *row_start,
                            gsize n_rows)
{
  if (n == 0)
    return;
  guint32 *keys = g_new (guint32, n), *keys_out = g_new (guint32, n);
  guint32 *owner = g_new (guint32, n), *owner_out = g_new (guint32, n);
  for (gsize row = 0; row < n_rows; row++)
    for (gsize index = row_start[row]; index < row_start[row + 1]; index++)
      {
        keys[index] = dw_whatif_step_float_key (values[index]);
        owner[index] = (guint32)row;
      }
  for (int pass = 0; pass < 3; pass++)
    {
      gsize count[2049] = { 0 };
      int shift = pass * 11;
      for (gsize index = 0; index < n; index++)
        count[((keys[index] >> shift) & 2047) + 1]++;
      for (int digit = 0; digit < 2048; digit++)
        count[digit + 1] += count[digit];
      for (gsize index = 0; index < n; index++)
        {
          gsize slot = count[(keys[index] >> shift) & 2047]++;
          keys_out[slot] = keys[index];
          owner_out[slot] = owner[index];
        }
      guint32 *swap = keys;
      keys = keys_out;
      keys_out = swap;
      swap = owner;
      owner = owner_out;
      owner_out = swap;
    }
  gsize *cursor = g_memdup2 (row_start, n_rows * sizeof (gsize));
  for (gsize index = 0; index < n; index++)
    {
      values[index] = dw_whatif_step_key_float (keys[index]);
      rows[cursor[owner[index]]++] = values[index];
    }
  g_free (cursor);
  g_free (keys);
  g_free (keys_out);
  g_free (owner);
  g_free (owner_out);
}

/* ------------------------------------------------------------------------------------------ */
/* the shape of k2 / k3 over the sorted ℓ                                                      */

static void
dw_whatif_step_shape_init (const DwWhatifStep *self, const double *k, DwWhatifShape *shape)
{
  gsize n_tokens = self->n_tokens, end_left = 0, start_right = n_tokens;
  if (n_tokens > 0)
    {
      end_left = 1;
      while (end_left < n_tokens && k[end_left] <= k[end_left - 1])
        end_left++;
      start_right = n_tokens - 1;
      while (start_right > 0 && k[start_right - 1] <= k[start_right])
        start_right--;
    }
  if (end_left > start_right) /* [start_right, end_left) is constant: split there */
    end_left = start_right;
  shape->end_left = end_left;
  shape->start_right = start_right;
  shape->core_max = -INFINITY;
  shape->core_n = start_right - end_left;

  double *core = g_new (double, shape->core_n ? shape->core_n : 1);
  for (gsize index = end_left; index < start_right; index++)
    {
      shape->core_max = fmax (shape->core_max, k[index]);
      core[index - end_left] = k[index];
    }
  qsort (core, shape->core_n, sizeof (double), dw_whatif_step_compare_doubles);
  if (self->f32)
    {
      shape->core_f = g_new (float, shape->core_n ? shape->core_n : 1);
      for (gsize index = 0; index < shape->core_n; index++)
        shape->core_f[index] = (float)core[index];
      g_free (core);
    }
  else
    shape->core = core;

  gsize n_blocks = shape->core_n / DW_WHATIF_BLOCK + 1;
  shape->core_prefix = g_new0 (DwWhatifSum, n_blocks + 1);
  shape->core_prefix_sq = g_new0 (DwWhatifSum, n_blocks + 1);
  DwWhatifSum sum = { 0, 0 }, sum_sq = { 0, 0 };
  for (gsize index = 0; index <= shape->core_n; index++)
    {
      if (index % DW_WHATIF_BLOCK == 0)
        {
          shape->core_prefix[index / DW_WHATIF_BLOCK] = sum;
          shape->core_prefix_sq[index / DW_WHATIF_BLOCK] = sum_sq;
        }
      if (index == shape->core_n)
        break;
      double value = shape->core_f ? (double)shape->core_f[index] : shape->core[index];
      sum = dw_whatif_sum_add_value (sum, value);
      sum_sq = dw_whatif_sum_add_value (sum_sq, dw_whatif_round (self, value * value));
    }
}

static void
dw_whatif_step_shape_clear (DwWhatifShape *shape)
{
  g_free (shape->core);
  g_free (shape->core_f);
  g_free (shape->core_prefix);
  g_free (shape->core_prefix_sq);
}

/* ------------------------------------------------------------------------------------------ */
/* precompute                                                                                  */

static void
dw_whatif_step_build_cut_table (DwWhatifStep *self)
{
  const gsize n_rows = self->n_rows, n_tokens = self->n_tokens;
  if (self->n_cols > G_MAXUINT16 || n_tokens == 0)
    return;
  for (int cut = 0; cut < DW_WHATIF_N_CUTS; cut++)
    self->cut_value[cut] = dw_whatif_sorted_value (self, (gsize)cut * n_tokens / DW_WHATIF_N_CUTS);
  self->cut_count = g_new (guint16, (DW_WHATIF_N_CUTS + 1) * n_rows);
  for (gsize row = 0; row < n_rows; row++)
    {
      const gsize start = self->row_start[row], end = self->row_start[row + 1];
      gsize index = start;
      for (int cut = 0; cut < DW_WHATIF_N_CUTS; cut++)
        {
          while (index < end && dw_whatif_row_value (self, index) < self->cut_value[cut])
            index++;
          self->cut_count[(gsize)cut * n_rows + row] = (guint16)(index - start);
        }
      self->cut_count[(gsize)DW_WHATIF_N_CUTS * n_rows + row] = (guint16)(end - start);
    }
}

/* the step's off-policy metrics from @metrics [@n]: their values, and their keys interned (a
 * slider move compares the keys a step puts by their pointers, DwWhatifKeySource) */
static void
dw_whatif_step_set_offpolicy (DwWhatifStep *self, const DwMetric *metrics, gsize n)
{
  self->n_offpolicy = n;
  self->offpolicy_values = g_new (double, MAX (n, 1));
  self->offpolicy_keys = g_new (const char *, MAX (n, 1));
  for (gsize index = 0; index < n; index++)
    {
      self->offpolicy_values[index] = metrics[index].value;
      self->offpolicy_keys[index] = g_intern_string (metrics[index].key);
    }
}

static gboolean
dw_whatif_step_compute_offpolicy (DwWhatifStep *self, const DwBatch *batch)
{
  DwConfig config;
  DwCorrectionResult result;
  DwCorrectionError error;
  dw_config_init (&config, DW_GEN_VERL);
  if (!dw_correction_run_entry (batch, &config, DW_ENTRY_OFFPOLICY, &result, &error))
    return FALSE;
  dw_whatif_step_set_offpolicy (self, result.metrics, result.n_metrics);
  dw_correction_result_clear (&result);
  return TRUE;
}

static inline double
dw_whatif_step_log_prob_at (const void *log_probs, gboolean f32, gsize index)
{
  return f32 ? (double)((const float *)log_probs)[index] : ((const double *)log_probs)[index];
}

/* the first reason the fast path cannot be taken wins */
static void
dw_whatif_step_set_slow (DwWhatifStep *self, char *reason)
{
  if (self->fast)
    {
      self->fast = FALSE;
      self->reason = reason;
    }
  else
    g_free (reason);
}

/* the row values that follow from its sums: the token-level mean of w, the sequence and
 * geometric log-ratios and weights (@stats->n and ->sum_log set, @weight_sum = Σ w in token order)
 */
static void
dw_whatif_step_finish_row (const DwWhatifStep *self, DwWhatifRow *stats, double weight_sum)
{
  stats->mean_tok = dw_whatif_mean_row (self, weight_sum, stats->n);
  stats->log_seq = dw_whatif_round (self, stats->sum_log);
  stats->weight_seq = dw_whatif_round (
    self, dw_whatif_exp (self, dw_torch_clamp (stats->log_seq, -DW_WHATIF_SAFETY_BOUND,
                                               DW_WHATIF_SAFETY_BOUND)));
  stats->log_geo = dw_whatif_mean_row (self, stats->sum_log, stats->n);
  stats->weight_geo = dw_whatif_round (
    self, dw_whatif_exp (self, dw_torch_clamp (stats->log_geo, -DW_WHATIF_SAFETY_BOUND,
                                               DW_WHATIF_SAFETY_BOUND)));
}

/* one pass over the valid tokens of row @row: the row's sums and extremes, the step's token
 * sums, and the row's log-ratios appended (row order) to the unsorted value array */
static void
dw_whatif_step_scan_row (DwWhatifStep *self, const DwBatch *batch, gsize row)
{
  const gboolean f32 = self->f32;
  const gsize n_cols = self->n_cols;
  DwWhatifRow *stats = &self->rows[row];
  double mask_sum = 0, weight_sum = 0;
  double max_k[3] = { -INFINITY, -INFINITY, -INFINITY },
         min_k[3] = { INFINITY, INFINITY, INFINITY };
  stats->min_weight = stats->min_log = INFINITY;
  stats->max_weight = stats->max_log = -INFINITY;
  for (gsize column = 0; column < n_cols; column++)
    {
      gsize index = row * n_cols + column;
      double mask = dw_batch_mask_value (batch, index);
      if (mask == 0)
        continue;
      if (mask != 1.0 && self->fast)
        dw_whatif_step_set_slow (
          self, g_strdup_printf ("mask value %g at row %zu, column %zu is not 0 or 1", mask, row,
                                 column));
      double old_lp = dw_whatif_step_log_prob_at (batch->old_log_prob, f32, index);
      double rollout_lp = dw_whatif_step_log_prob_at (batch->rollout_log_prob, f32, index);
      double log_ratio = f32 ? (double)((float)old_lp - (float)rollout_lp) : old_lp - rollout_lp;
      if (isnan (log_ratio) && self->fast)
        dw_whatif_step_set_slow (
          self, g_strdup_printf ("NaN log-ratio at row %zu, column %zu", row, column));

      mask_sum += mask;
      stats->valid += 1;
      stats->sum_log += log_ratio * mask;
      double clamped = dw_torch_clamp (log_ratio, -DW_WHATIF_SAFETY_BOUND, DW_WHATIF_SAFETY_BOUND);
      double weight = dw_whatif_round (self, dw_whatif_exp (self, clamped));
      weight_sum += weight * mask;
      self->weight_sum_tok += weight * mask;
      self->max_weight = dw_torch_max (self->max_weight, weight);
      self->min_weight = dw_torch_min (self->min_weight, weight);
      stats->min_weight = dw_torch_min (stats->min_weight, weight);
      stats->max_weight = dw_torch_max (stats->max_weight, weight);
      stats->min_log = dw_torch_min (stats->min_log, log_ratio);
      stats->max_log = dw_torch_max (stats->max_log, log_ratio);
      double k[3]
        = { -clamped, dw_whatif_round (self, 0.5 * dw_whatif_round (self, clamped * clamped)),
            dw_whatif_round (self, dw_whatif_round (self, weight - 1.0) - clamped) };
      for (int estimator = 0; estimator < 3; estimator++)
        {
          stats->sum_k[estimator] += k[estimator] * mask;
          self->tok_sum_k[estimator] += k[estimator] * mask;
          max_k[estimator] = dw_torch_max (max_k[estimator], k[estimator]);
          min_k[estimator] = dw_torch_min (min_k[estimator], k[estimator]);
          self->max_k[estimator] = dw_torch_max (self->max_k[estimator], k[estimator]);
          self->min_k[estimator] = dw_torch_min (self->min_k[estimator], k[estimator]);
        }
      if (f32)
        self->sorted_f[self->n_tokens++] = (float)log_ratio;
      else
        self->sorted_d[self->n_tokens++] = log_ratio;
    }

  stats->n = dw_whatif_round (self, mask_sum);
  self->mask_sum += mask_sum;
  for (int estimator = 0; estimator < 3; estimator++)
    {
      stats->max_k[estimator] = stats->valid > 0 ? max_k[estimator] : 0.0;
      stats->min_k[estimator] = min_k[estimator];
    }
  dw_whatif_step_finish_row (self, stats, weight_sum);
}

/* @value as float32 into @copy; FALSE when that changes it (NaN stays NaN) */
static gboolean
dw_whatif_step_float_copy (double value, float *copy)
{
  *copy = (float)value;
  return (double)*copy == value || isnan (value);
}

/* the float32 copy of the columns the token-level IS of a compact step reads (is_lanes), when
 * every value is a float32 (a float32 batch's are: no copy changes one) */
static void
dw_whatif_step_fill_is_lanes (DwWhatifStep *self)
{
  static const int fields[DW_WHATIF_IS_LANES_FIELDS]
    = { DW_WHATIF_COL_MEAN_TOK, DW_WHATIF_COL_N, DW_WHATIF_COL_MAX_WEIGHT,
        DW_WHATIF_COL_MIN_WEIGHT };
  /* a padding lane: no token, never beyond a bound */
  static const float padding[DW_WHATIF_IS_LANES_FIELDS] = { 0.0f, 0.0f, -INFINITY, INFINITY };
  const gsize stride = dw_whatif_lanes_stride (self->n_rows);
  if (!self->f32 || self->n_rows == 0)
    return;
  /* the lanes stand for VALID by N: equal for the 0/1 masks of the fast path */
  for (gsize row = 0; row < self->n_rows; row++)
    if (dw_whatif_cell (self, DW_WHATIF_COL_N, row)
        != dw_whatif_cell (self, DW_WHATIF_COL_VALID, row))
      return;
  self->is_lanes = g_new (float, DW_WHATIF_IS_LANES_FIELDS *stride);
  for (int field = 0; field < DW_WHATIF_IS_LANES_FIELDS; field++)
    for (gsize row = 0; row < stride; row++)
      {
        float *copy = &self->is_lanes[field * stride + row];
        if (row >= self->n_rows)
          *copy = padding[field];
        else if (!dw_whatif_step_float_copy (dw_whatif_cell (self, fields[field], row), copy))
          {
            g_clear_pointer (&self->is_lanes, g_free);
            return;
          }
      }
}

/* the per-row columns, and the sums over tokens of row-constant values in token order (as the
 * correction core adds them) */
static void
dw_whatif_step_fill_columns (DwWhatifStep *self)
{
  const gsize n_rows = self->n_rows;
  self->columns = g_new (double, DW_WHATIF_N_COLUMNS *(n_rows ? n_rows : 1));
  for (gsize row = 0; row < n_rows; row++)
    {
      DwWhatifRow *stats = &self->rows[row];
      double value[DW_WHATIF_N_SO];
      for (int estimator = 0; estimator < 3; estimator++)
        {
          value[DW_WHATIF_SO_SUM_K1 + estimator] = dw_whatif_round (self, stats->sum_k[estimator]);
          value[DW_WHATIF_SO_MEAN_K1 + estimator]
            = dw_whatif_mean_row (self, stats->sum_k[estimator], stats->n);
        }
      value[DW_WHATIF_SO_MAX_K2] = stats->max_k[1];
      value[DW_WHATIF_SO_MAX_K3] = stats->max_k[2];
      double *columns = self->columns;
#define DW_WHATIF_STEP_SET(column, v) columns[(gsize)(column)*n_rows + row] = (v)
      for (int option = 0; option < DW_WHATIF_N_SO; option++)
        DW_WHATIF_STEP_SET (option, value[option]);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_N, stats->n);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_VALID, stats->valid);
      DW_WHATIF_STEP_SET (
        DW_WHATIF_COL_K1_MIN,
        -dw_torch_clamp (stats->max_log, -DW_WHATIF_SAFETY_BOUND, DW_WHATIF_SAFETY_BOUND));
      DW_WHATIF_STEP_SET (
        DW_WHATIF_COL_K1_MAX,
        -dw_torch_clamp (stats->min_log, -DW_WHATIF_SAFETY_BOUND, DW_WHATIF_SAFETY_BOUND));
      double row_sum_seq = 0, row_sum_geo = 0;
      /* the same additions in the same order, in scalar locals the compiler keeps in registers
       * (the fields of @self might alias @stats; an array stays in memory) */
      const double weight_seq = stats->weight_seq, weight_geo = stats->weight_geo;
      double sum_seq = self->weight_sum_seq, sum_geo = self->weight_sum_geo;
      G_STATIC_ASSERT (DW_WHATIF_N_SO == 8);
      double *sum_stat = self->seq_sum_stat;
      double stat_0 = sum_stat[0], stat_1 = sum_stat[1], stat_2 = sum_stat[2], stat_3 = sum_stat[3],
             stat_4 = sum_stat[4], stat_5 = sum_stat[5], stat_6 = sum_stat[6], stat_7 = sum_stat[7];
      for (gsize token = 0; token < (gsize)stats->valid; token++)
        {
          sum_seq += weight_seq;
          sum_geo += weight_geo;
          row_sum_seq += weight_seq;
          row_sum_geo += weight_geo;
          stat_0 += value[0];
          stat_1 += value[1];
          stat_2 += value[2];
          stat_3 += value[3];
          stat_4 += value[4];
          stat_5 += value[5];
          stat_6 += value[6];
          stat_7 += value[7];
        }
      self->weight_sum_seq = sum_seq;
      self->weight_sum_geo = sum_geo;
      sum_stat[0] = stat_0;
      sum_stat[1] = stat_1;
      sum_stat[2] = stat_2;
      sum_stat[3] = stat_3;
      sum_stat[4] = stat_4;
      sum_stat[5] = stat_5;
      sum_stat[6] = stat_6;
      sum_stat[7] = stat_7;
      stats->mean_seq = dw_whatif_mean_row (self, row_sum_seq, stats->n);
      stats->mean_geo = dw_whatif_mean_row (self, row_sum_geo, stats->n);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_MEAN_TOK, stats->mean_tok);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_MEAN_SEQ, stats->mean_seq);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_MEAN_GEO, stats->mean_geo);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_WEIGHT_SEQ, stats->weight_seq);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_WEIGHT_GEO, stats->weight_geo);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_LOG_SEQ, stats->log_seq);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_LOG_GEO, stats->log_geo);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_MIN_WEIGHT, stats->min_weight);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_MAX_WEIGHT, stats->max_weight);
      DW_WHATIF_STEP_SET (DW_WHATIF_COL_MIN_LOG, stats->min_log);
#undef DW_WHATIF_STEP_SET
    }
  dw_whatif_step_fill_is_lanes (self);
}

/* threshold-free statistics of the rows' weight means per level and of the RS row statistics */
static void
dw_whatif_step_row_summaries (DwWhatifStep *self)
{
  const gsize n_rows = self->n_rows;
  for (int level = 0; level < 3; level++)
    {
      DwWhatifLevelStat *stat = &self->level_stat[level];
      const double *mean = dw_whatif_column (self, DW_WHATIF_COL_MEAN_TOK + level);
      double sum = 0;
      for (gsize row = 0; row < n_rows; row++)
        sum += mean[row];
      stat->mean = sum / (double)n_rows;
      stat->sum_sq_dev = 0;
      stat->max = stat->max_dev = -INFINITY;
      stat->min = INFINITY;
      for (gsize row = 0; row < n_rows; row++)
        {
          stat->sum_sq_dev += (mean[row] - stat->mean) * (mean[row] - stat->mean);
          stat->max = fmax (stat->max, mean[row]);
          stat->min = fmin (stat->min, mean[row]);
          stat->max_dev = fmax (stat->max_dev, fabs (mean[row] - 1.0));
        }
      stat->log_max = -INFINITY;
      stat->log_min = INFINITY;
      if (level == DW_LEVEL_TOKEN)
        continue;
      const double *log_ratio = dw_whatif_column (
        self, level == DW_LEVEL_SEQUENCE ? DW_WHATIF_COL_LOG_SEQ : DW_WHATIF_COL_LOG_GEO);
      for (gsize row = 0; row < n_rows; row++)
        {
          stat->log_max = fmax (stat->log_max, log_ratio[row]);
          stat->log_min = fmin (stat->log_min, log_ratio[row]);
        }
    }
  for (int option = 0; option < DW_WHATIF_N_SO; option++)
    {
      DwWhatifRowStat *stat = &self->so_stat[option];
      const double *value = dw_whatif_column (self, option);
      const double *token_counts = dw_whatif_column (self, DW_WHATIF_COL_N);
      stat->sum = stat->count = stat->sum_sq_dev = 0;
      stat->max = stat->max_dev = -INFINITY;
      stat->min = INFINITY;
      for (gsize row = 0; row < n_rows; row++)
        {
          if (!(token_counts[row] > 0))
            continue;
          stat->sum += value[row];
          stat->count += 1;
          stat->max = dw_torch_max (stat->max, value[row]);
          stat->min = dw_torch_min (stat->min, value[row]);
          stat->max_dev = dw_torch_max (stat->max_dev, fabs (value[row]));
        }
      double mean = stat->count > 0 ? stat->sum / stat->count : 0.0;
      for (gsize row = 0; row < n_rows; row++)
        if (token_counts[row] > 0)
          stat->sum_sq_dev += (value[row] - mean) * (value[row] - mean);
    }
}

/* the valid-token ℓ sorted globally and within each row */
static void
dw_whatif_step_sort (DwWhatifStep *self)
{
  const gsize n_tokens = self->n_tokens;
  if (self->f32)
    {
      self->row_sorted_f = g_new (float, n_tokens);
      dw_whatif_step_sort_floats (self->sorted_f, n_tokens, self->row_sorted_f, self->row_start,
                                  self->n_rows);
      return;
    }
  self->row_sorted_d = g_memdup2 (self->sorted_d, n_tokens * sizeof (double));
  for (gsize row = 0; row < self->n_rows; row++)
    qsort (self->row_sorted_d + self->row_start[row],
           self->row_start[row + 1] - self->row_start[row], sizeof (double),
           dw_whatif_step_compare_doubles);
  qsort (self->sorted_d, n_tokens, sizeof (double), dw_whatif_step_compare_doubles);
}

/* The IS weights summed within each row in row-sorted order, for the row means of weights that
 * are truncated or zeroed beyond a bound: a window of the row's sorted tokens is the difference of
 * two sums. In float32 the running double sum of a row is exact (and so is every difference)
 * when the row's weights span at most 53 − 24 − ⌈log2 n⌉ binary orders of magnitude; other rows
 * are summed token by token when asked (dw_whatif_query_row_weight_sum). */
static void
dw_whatif_step_row_weight_sums (DwWhatifStep *self)
{
  self->row_weight_sum = g_new (double, self->n_tokens ? self->n_tokens : 1);
  self->row_weight_exact = g_new0 (guint8, self->n_rows ? self->n_rows : 1);
  for (gsize row = 0; row < self->n_rows; row++)
    {
      const gsize start = self->row_start[row], end = self->row_start[row + 1];
      double sum = 0;
      int min_exponent = G_MAXINT, max_exponent = G_MININT;
      for (gsize index = start; index < end; index++)
        {
          double weight
            = dw_whatif_quantity (self, DW_WHATIF_Q_WEIGHT, dw_whatif_row_value (self, index));
          int exponent;
          frexp (weight, &exponent);
          min_exponent = MIN (min_exponent, exponent);
          max_exponent = MAX (max_exponent, exponent);
          sum += weight;
          self->row_weight_sum[index] = sum;
        }
      const int length_bits = (int)g_bit_storage (end - start);
      self->row_weight_exact[row]
        = !self->f32 || end == start || max_exponent - min_exponent + 24 + length_bits <= 53;
    }
}

/* block prefix sums of every quantity over the sorted ℓ, and the shapes of k2 and k3 */
static void
dw_whatif_step_prefix_sums (DwWhatifStep *self)
{
  const gsize n_tokens = self->n_tokens;
  self->n_blocks = n_tokens / DW_WHATIF_BLOCK;
  double *k2_values = g_new (double, n_tokens ? n_tokens : 1),
         *k3_values = g_new (double, n_tokens ? n_tokens : 1);
  for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
    self->prefix[quantity] = g_new0 (DwWhatifSum, self->n_blocks + 1);
  DwWhatifSum sum[DW_WHATIF_N_QUANTITIES];
  memset (sum, 0, sizeof sum);
  self->weight_monotone = TRUE;
  double previous_weight = -INFINITY;
  for (gsize index = 0; index < n_tokens; index++)
    {
      if (index % DW_WHATIF_BLOCK == 0)
        for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
          self->prefix[quantity][index / DW_WHATIF_BLOCK] = sum[quantity];
      double value[DW_WHATIF_N_QUANTITIES];
      dw_whatif_quantities (self, dw_whatif_sorted_value (self, index), value);
      for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
        sum[quantity] = dw_whatif_sum_add_value (sum[quantity], value[quantity]);
      if (value[DW_WHATIF_Q_WEIGHT] < previous_weight)
        self->weight_monotone = FALSE;
      previous_weight = value[DW_WHATIF_Q_WEIGHT];
      k2_values[index] = value[DW_WHATIF_Q_K2];
      k3_values[index] = value[DW_WHATIF_Q_K3];
      if (value[DW_WHATIF_Q_K3] < 0)
        {
          self->neg_k3_sum += value[DW_WHATIF_Q_K3];
          self->neg_k3_sq += value[DW_WHATIF_Q_K3_SQ];
        }
    }
  if (n_tokens % DW_WHATIF_BLOCK == 0)
    for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
      self->prefix[quantity][n_tokens / DW_WHATIF_BLOCK] = sum[quantity];
  dw_whatif_step_shape_init (self, k2_values, &self->shape_k2);
  dw_whatif_step_shape_init (self, k3_values, &self->shape_k3);
  g_free (k2_values);
  g_free (k3_values);
}

DwWhatifStep *
dw_whatif_step_new (const DwBatch *batch, gint64 step, GError **error)
{
  g_return_val_if_fail (batch != NULL, NULL);
  if (batch->lp_dtype != DW_DTYPE_F32 && batch->lp_dtype != DW_DTYPE_F64)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_BATCH,
                   "step %" G_GINT64_FORMAT ": log-probs must be float32 or float64, got %s", step,
                   dw_dtype_name (batch->lp_dtype));
      return NULL;
    }
  const gsize n_rows = batch->rows, n_cols = batch->cols;
  if (n_cols != 0 && (n_rows * n_cols) / n_cols != n_rows)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_BATCH,
                   "step %" G_GINT64_FORMAT ": batch shape overflows", step);
      return NULL;
    }

  DwWhatifStep *self = g_new0 (DwWhatifStep, 1);
  g_mutex_init (&self->row_k_lock);
  self->number = step;
  self->f32 = batch->lp_dtype == DW_DTYPE_F32;
  self->n_rows = n_rows;
  self->n_cols = n_cols;
  self->fast = TRUE;
  self->rows = g_new0 (DwWhatifRow, n_rows ? n_rows : 1);
  gsize capacity = 0;
  for (gsize index = 0; index < n_rows * n_cols; index++)
    capacity += dw_batch_mask_value (batch, index) != 0;
  if (self->f32)
    self->sorted_f = g_new (float, capacity ? capacity : 1);
  else
    self->sorted_d = g_new (double, capacity ? capacity : 1);
  for (int shape_index = 0; shape_index < 3; shape_index++)
    {
      self->max_k[shape_index] = -INFINITY;
      self->min_k[shape_index] = INFINITY;
    }
  self->max_weight = -INFINITY;
  self->min_weight = INFINITY;

  /* token pass, row by row (the unsorted ℓ go into sorted_f/d in row order) */
  self->row_start = g_new0 (gsize, n_rows + 1);
  for (gsize row = 0; row < n_rows; row++)
    {
      self->row_start[row] = self->n_tokens;
      dw_whatif_step_scan_row (self, batch, row);
    }
  self->row_start[n_rows] = self->n_tokens;
  self->mask_count
    = dw_whatif_round (self, dw_whatif_round (self, self->mask_sum) + DW_WHATIF_MEAN_EPSILON);
  self->empty = self->n_tokens == 0;

  /* row pass */
  dw_whatif_step_fill_columns (self);
  dw_whatif_step_row_summaries (self);
  g_clear_pointer (&self->rows, g_free); /* everything an evaluation reads is in the columns */
  if (!self->fast || self->empty)
    return self;

  /* the sorted values and their sums */
  dw_whatif_step_sort (self);
  dw_whatif_step_build_cut_table (self);
  dw_whatif_step_prefix_sums (self);
  dw_whatif_step_row_weight_sums (self);
  if (!dw_whatif_step_compute_offpolicy (self, batch))
    dw_whatif_step_set_slow (self, g_strdup ("off-policy metrics failed"));
  return self;
}

/* the token arrays a compact step does not keep */
static void
dw_whatif_step_drop_tokens (DwWhatifStep *self)
{
  g_clear_pointer (&self->sorted_f, g_free);
  g_clear_pointer (&self->sorted_d, g_free);
  g_clear_pointer (&self->row_sorted_f, g_free);
  g_clear_pointer (&self->row_sorted_d, g_free);
  g_clear_pointer (&self->cut_count, g_free);
  g_clear_pointer (&self->row_weight_sum, g_free);
  g_clear_pointer (&self->row_weight_exact, g_free);
  g_clear_pointer (&self->row_k_f, g_free);
  g_clear_pointer (&self->row_k_d, g_free);
  for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
    g_clear_pointer (&self->prefix[quantity], g_free);
  dw_whatif_step_shape_clear (&self->shape_k2);
  dw_whatif_step_shape_clear (&self->shape_k3);
  memset (&self->shape_k2, 0, sizeof self->shape_k2);
  memset (&self->shape_k3, 0, sizeof self->shape_k3);
  self->n_blocks = 0;
}

DwWhatifStep *
dw_whatif_step_new_compact (const DwBatch *batch, gint64 step, GError **error)
{
  DwWhatifStep *self = dw_whatif_step_new (batch, step, error);
  if (self == NULL || !self->fast || self->empty)
    return self;
  self->sketch = dw_whatif_sketch_new (self);
  const DwWhatifShape *shapes[2] = { &self->shape_k2, &self->shape_k3 };
  for (int shape_index = 0; shape_index < 2; shape_index++)
    {
      self->core_n[shape_index] = shapes[shape_index]->core_n;
      self->core_low[shape_index] = self->core_high[shape_index] = 0;
      self->core_max[shape_index] = shapes[shape_index]->core_max;
      if (shapes[shape_index]->core_n > 0)
        {
          self->core_low[shape_index]
            = dw_whatif_sorted_value (self, shapes[shape_index]->end_left);
          self->core_high[shape_index]
            = dw_whatif_sorted_value (self, shapes[shape_index]->start_right - 1);
        }
    }
  dw_whatif_step_drop_tokens (self);
  return self;
}

gboolean
dw_whatif_step_is_compact (const DwWhatifStep *self)
{
  return self->sketch != NULL;
}

void
dw_whatif_step_free (DwWhatifStep *self)
{
  if (!self)
    return;
  g_free (self->reason);
  g_free (self->sorted_f);
  g_free (self->sorted_d);
  g_free (self->row_sorted_f);
  g_free (self->row_sorted_d);
  g_free (self->row_start);
  g_free (self->row_weight_sum);
  g_free (self->row_weight_exact);
  g_free (self->cut_count);
  g_free (self->row_k_f);
  g_free (self->row_k_d);
  g_mutex_clear (&self->row_k_lock);
  for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
    g_free (self->prefix[quantity]);
  dw_whatif_step_shape_clear (&self->shape_k2);
  dw_whatif_step_shape_clear (&self->shape_k3);
  g_free (self->rows);
  g_free (self->columns);
  g_free (self->is_lanes);
  g_free (self->offpolicy_values);
  g_free (self->offpolicy_keys);
  dw_whatif_sketch_free (self->sketch);
  g_free (self);
}

gint64
dw_whatif_step_get_step (const DwWhatifStep *self)
{
  return self->number;
}

gsize
dw_whatif_step_get_memory (const DwWhatifStep *self)
{
  const gsize value_size = self->f32 ? sizeof (float) : sizeof (double);
  gsize bytes = sizeof *self + self->n_offpolicy * (sizeof (double) + sizeof (const char *));
  bytes += DW_WHATIF_N_COLUMNS * self->n_rows * sizeof (double);
  if (self->is_lanes)
    bytes += DW_WHATIF_IS_LANES_FIELDS * dw_whatif_lanes_stride (self->n_rows) * sizeof (float);
  if (self->sorted_f || self->sorted_d)
    bytes += (self->row_sorted_f || self->row_sorted_d ? 2 : 1) * self->n_tokens * value_size;
  if (self->sketch)
    bytes += dw_whatif_sketch_get_memory (self->sketch);
  bytes += (self->n_rows + 1) * sizeof (gsize);
  if (self->row_weight_sum)
    bytes += self->n_tokens * sizeof (double) + self->n_rows;
  if (self->cut_count)
    bytes += (DW_WHATIF_N_CUTS + 1) * self->n_rows * sizeof (guint16);
  const DwWhatifShape *shapes[2] = { &self->shape_k2, &self->shape_k3 };
  for (int shape_index = 0; shape_index < 2; shape_index++)
    bytes += shapes[shape_index]->core_n * value_size
             + 2 * (shapes[shape_index]->core_n / DW_WHATIF_BLOCK + 2) * sizeof (DwWhatifSum);
  if (self->row_k_f || self->row_k_d)
    bytes += self->n_tokens * value_size;
  if (self->prefix[0])
    bytes += DW_WHATIF_N_QUANTITIES * (self->n_blocks + 1) * sizeof (DwWhatifSum);
  return bytes;
}

gsize
dw_whatif_step_get_n_tokens (const DwWhatifStep *self)
{
  return self->n_tokens;
}

gsize
dw_whatif_step_get_n_rows (const DwWhatifStep *self)
{
  return self->n_rows;
}

gboolean
dw_whatif_step_is_fast (const DwWhatifStep *self, const char **reason)
{
  if (reason)
    *reason = self->reason;
  return self->fast;
}

void
dw_whatif_step_histogram (const DwWhatifStep *self, double low, double high, guint n_bins,
                          guint64 *counts)
{
  memset (counts, 0, n_bins * sizeof (guint64));
  if (n_bins == 0 || self->n_tokens == 0 || !(high > low))
    return;
  if (self->sketch)
    {
      /* estimated counts: exact where an edge falls in a tail kept in full */
      double previous = 0;
      for (guint bin = 0; bin + 1 < n_bins; bin++)
        {
          double error;
          double edge = low + (high - low) * (double)(bin + 1) / n_bins;
          double below = dw_whatif_query_count_log_below (self, edge, &error);
          counts[bin] = (guint64)llround (MAX (0.0, below - previous));
          previous = MAX (previous, below);
        }
      counts[n_bins - 1] = (guint64)llround (MAX (0.0, (double)self->n_tokens - previous));
      return;
    }
  if (!self->sorted_f && !self->sorted_d)
    return;
  gsize previous = 0;
  for (guint bin = 0; bin + 1 < n_bins; bin++)
    {
      double edge = low + (high - low) * (double)(bin + 1) / n_bins;
      gsize index = dw_whatif_query_first_false (self, DW_WHATIF_Q_RAW, DW_WHATIF_LT, edge,
                                                 previous, self->n_tokens);
      counts[bin] = index - previous;
      previous = index;
    }
  counts[n_bins - 1] = self->n_tokens - previous;
}

double
dw_whatif_step_quantile (const DwWhatifStep *self, double q)
{
  if (self->n_tokens == 0)
    return NAN;
  if (self->sketch)
    return dw_whatif_sketch_quantile (self, q);
  if (!self->sorted_f && !self->sorted_d)
    return NAN;
  double position = dw_torch_clamp (q, 0, 1) * (double)(self->n_tokens - 1);
  return dw_whatif_sorted_value (self, (gsize)llround (position));
}

/* ------------------------------------------------------------------------------------------ */
/* evaluation (dw-whatif-eval.c does the work)                                                 */

void
dw_whatif_step_result_clear (DwWhatifStepResult *res)
{
  /* values, error_bound and approximate are one block (dw_whatif_list_finish) */
  if (!res->borrowed)
    g_free (res->values);
  dw_whatif_keys_unref (res->keys);
  dw_whatif_step_result_init (res);
}

void
dw_whatif_step_result_init (DwWhatifStepResult *res)
{
  res->n_metrics = 0;
  res->keys = NULL;
  res->values = res->error_bound = NULL;
  res->approximate = NULL;
  res->any_approximate = res->pending = res->failed = res->borrowed = FALSE;
  res->error.kind = DW_ERROR_NONE;
  res->error.message[0] = '\0';
}

/* the position of @key in @res's metrics, or n_metrics */
static gsize
dw_whatif_step_result_find (const DwWhatifStepResult *res, const char *key)
{
  gsize index = 0;

  while (index < res->n_metrics && strcmp (dw_whatif_keys_get (res->keys, index), key) != 0)
    index++;
  return index;
}

const double *
dw_whatif_step_result_get (const DwWhatifStepResult *res, const char *key, gboolean *approximate)
{
  const gsize index = dw_whatif_step_result_find (res, key);

  if (index >= res->n_metrics)
    return NULL;
  if (approximate)
    *approximate = res->approximate[index];
  return &res->values[index];
}

double
dw_whatif_step_result_get_error_bound (const DwWhatifStepResult *res, const char *key)
{
  const gsize index = dw_whatif_step_result_find (res, key);

  return index < res->n_metrics ? res->error_bound[index] : NAN;
}

gboolean
dw_whatif_step_evaluate (const DwWhatifStep *self, const DwConfig *config, DwWhatifStepResult *out)
{
  memset (out, 0, sizeof *out);
  DwPlan plan;
  if (!dw_whatif_eval_prepare (self, config, &plan, out))
    return FALSE;
  dw_whatif_eval_step (self, &plan, out, NULL, NULL, NULL);
  return !out->failed;
}

const double *
dw_whatif_step_get_row_lengths (const DwWhatifStep *self)
{
  return dw_whatif_column (self, DW_WHATIF_COL_VALID);
}

gboolean
dw_whatif_step_row_outcomes (const DwWhatifStep *self, const DwConfig *config, double *lengths,
                             guint8 *rejected)
{
  DwWhatifStepResult out;
  memset (&out, 0, sizeof out);
  for (gsize row = 0; row < self->n_rows; row++)
    lengths[row] = dw_whatif_cell (self, DW_WHATIF_COL_VALID, row);
  DwPlan plan;
  if (!dw_whatif_eval_prepare (self, config, &plan, &out))
    {
      dw_whatif_step_result_clear (&out);
      return FALSE;
    }
  dw_whatif_eval_step (self, &plan, &out, rejected, NULL, NULL);
  gboolean known = !out.pending;
  dw_whatif_step_result_clear (&out);
  return known;
}

/* whether @summary describes @self's tokens: the same count, sorted tails without NaN, bins of
 * positive counts in order */
static gboolean
dw_whatif_step_summary_fits (const DwWhatifStep *self, const DwTokenSummary *summary)
{
  gint64 counted = (gint64)(summary->n_low + summary->n_high);
  double previous = -INFINITY;

  if (summary->n_tokens != (gint64)self->n_tokens || summary->n_bins > G_MAXUINT)
    return FALSE;
  for (gsize index = 0; index < summary->n_low; index++)
    {
      if (!(summary->low[index].log_ratio >= previous))
        return FALSE;
      previous = summary->low[index].log_ratio;
    }
  for (gsize bin = 0; bin < summary->n_bins; bin++)
    {
      const DwTokenBin *stored = &summary->bins[bin];
      if (stored->count <= 0 || !(stored->first >= previous) || !(stored->last >= stored->first))
        return FALSE;
      previous = stored->last;
      counted += stored->count;
    }
  for (gsize index = 0; index < summary->n_high; index++)
    {
      if (!(summary->high[index].log_ratio >= previous))
        return FALSE;
      previous = summary->high[index].log_ratio;
    }
  return counted == summary->n_tokens;
}

gboolean
dw_whatif_step_set_token_summary (DwWhatifStep *self, const DwTokenSummary *summary, GError **error)
{
  g_return_val_if_fail (self != NULL && summary != NULL, FALSE);
  if (self->sketch == NULL || !dw_whatif_step_summary_fits (self, summary))
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_BATCH, "step %" G_GINT64_FORMAT ": %s",
                   self->number,
                   self->sketch == NULL ? "only a compact step takes a token summary"
                                        : "the token summary does not describe this step's tokens");
      return FALSE;
    }
  dw_whatif_sketch_free (self->sketch);
  self->sketch = dw_whatif_sketch_new_from_summary (self, summary);
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* a compact step from the store's statistics, without the tokens (docs/WHATIF.md §5)          */

/* the per-row sums and extremes of @stats into self->rows, and the step's token count */
static void
dw_whatif_step_rows_from_stats (DwWhatifStep *self, const DwStepStats *stats)
{
  self->rows = g_new0 (DwWhatifRow, self->n_rows ? self->n_rows : 1);
  self->row_start = g_new0 (gsize, self->n_rows + 1);
  for (gsize row = 0; row < self->n_rows; row++)
    {
      const DwStepRowStats *stored = &stats->row_stats[row];
      DwWhatifRow *row_stats = &self->rows[row];

      self->row_start[row] = self->n_tokens;
      self->n_tokens += (gsize)stored->n_valid;
      self->mask_sum += stored->n;
      row_stats->n = dw_whatif_round (self, stored->n);
      row_stats->valid = (double)stored->n_valid;
      row_stats->sum_log = stored->sum_l;
      row_stats->min_log = stored->min_l;
      row_stats->max_log = stored->max_l;
      row_stats->min_weight = stored->min_w;
      row_stats->max_weight = stored->max_w;
      for (int estimator = 0; estimator < 3; estimator++)
        {
          row_stats->sum_k[estimator] = stored->sum_k[estimator];
          row_stats->max_k[estimator] = stored->max_k[estimator];
        }
      dw_whatif_step_finish_row (self, row_stats, stored->sum_w);
    }
  self->row_start[self->n_rows] = self->n_tokens;
}

DwWhatifStep *
dw_whatif_step_new_from_stats (const DwStepStats *stats, const DwTokenSummary *summary,
                               GError **error)
{
  g_return_val_if_fail (stats != NULL && summary != NULL, NULL);
  g_autoptr (DwWhatifStep) self = g_new0 (DwWhatifStep, 1);
  g_mutex_init (&self->row_k_lock);
  self->number = stats->step;
  self->f32 = stats->f32;
  self->n_rows = (gsize)stats->rows;
  self->n_cols = (gsize)stats->cols;
  self->fast = stats->slow_reason == NULL;
  self->reason = g_strdup (stats->slow_reason);
  dw_whatif_step_rows_from_stats (self, stats);
  self->mask_count
    = dw_whatif_round (self, dw_whatif_round (self, self->mask_sum) + DW_WHATIF_MEAN_EPSILON);
  self->empty = self->n_tokens == 0;
  self->weight_sum_tok = stats->weight_sum;
  self->max_weight = stats->max_w;
  self->min_weight = stats->min_w;
  for (int estimator = 0; estimator < 3; estimator++)
    {
      self->tok_sum_k[estimator] = stats->sum_k[estimator];
      self->max_k[estimator] = stats->max_k[estimator];
      self->min_k[estimator] = stats->min_k[estimator];
    }
  dw_whatif_step_fill_columns (self);
  dw_whatif_step_row_summaries (self);
  g_clear_pointer (&self->rows, g_free);
  if (!self->fast || self->empty)
    return g_steal_pointer (&self);

  self->neg_k3_sum = stats->neg_k3_sum;
  self->neg_k3_sq = stats->neg_k3_sq;
  self->weight_monotone = stats->weight_monotone;
  for (int shape_index = 0; shape_index < 2; shape_index++)
    {
      self->core_n[shape_index] = (gsize)stats->core_n[shape_index];
      self->core_low[shape_index] = stats->core_low[shape_index];
      self->core_high[shape_index] = stats->core_high[shape_index];
      self->core_max[shape_index] = stats->core_max[shape_index];
    }
  dw_whatif_step_set_offpolicy (self, stats->offpolicy, stats->n_offpolicy);
  if (!dw_whatif_step_summary_fits (self, summary))
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_BATCH,
                   "step %" G_GINT64_FORMAT ": the token summary does not describe this step's "
                   "tokens",
                   self->number);
      return NULL;
    }
  self->sketch = dw_whatif_sketch_new_from_summary (self, summary);
  return g_steal_pointer (&self);
}
