/* dw-whatif-eval.c — a correction plan evaluated on the statistics of one step
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each dw_whatif_eval_* metric group gives the keys and values the correction core gives for the
 * same config on the same batch (docs/CORRECTION.md §3–§4 for verl ≥ 0.7.1, §5–§6 for the older
 * generations), from the statistics of dw-whatif-step.c and the queries of dw-whatif-query.c.
 * A value that comes from an estimate is flagged approximate (see dw-whatif-engine.h).
 */
#include "config.h"

#include "dw-whatif-kernels-private.h"
#include "dw-whatif-private.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* the plan                                                                                    */

static void
dw_whatif_eval_fail (DwWhatifStepResult *out, const DwCorrectionError *error)
{
  out->failed = TRUE;
  out->error = *error;
}

void
dw_whatif_eval_empty_error (DwWhatifStepResult *out)
{
  DwCorrectionError error;
  error.kind = DW_ERROR_VALUE;
  g_strlcpy (error.message, "response_mask must contain at least one valid token (1).",
             sizeof error.message);
  dw_whatif_eval_fail (out, &error);
}

gboolean
dw_whatif_eval_prepare (const DwWhatifStep *step, const DwConfig *config, DwPlan *plan,
                        DwWhatifStepResult *out)
{
  DwCorrectionError error;
  /* the trainer checks the mask before the config; an unresolved preset is ours to refuse */
  if (step && step->empty && !dw_config_get (config, "preset"))
    {
      dw_whatif_eval_empty_error (out);
      return FALSE;
    }
  if (!dw_plan_build (config, plan, &error))
    {
      dw_whatif_eval_fail (out, &error);
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* IS ratio metrics                                                                            */

/* the ratio metrics of a token-level ratio (clamped to [lower, upper] for std and ESS) */
static void
dw_whatif_eval_ratio_token (const DwWhatifStep *step, DwWhatifList *list, const char *prefix,
                            double lower, double upper, double *sum, double *sum_sq,
                            double *sum_error, double *sum_sq_error)
{
  DwWhatifClamped clamped;
  dw_whatif_query_clamp_weights (step, lower, upper, &clamped);
  *sum = clamped.sum;
  *sum_sq = clamped.sum_sq;
  *sum_error = clamped.sum_error;
  *sum_sq_error = clamped.sum_sq_error;
  list->approximate |= !step->weight_monotone;
  dw_whatif_list_put3 (list, dw_whatif_mean_batch (step, step->weight_sum_tok), prefix, "_mean");
  dw_whatif_list_put3 (list, step->max_weight, prefix, "_max");
  dw_whatif_list_put3 (list, step->min_weight, prefix, "_min");
  list->error = clamped.n_high_error / step->mask_count;
  dw_whatif_list_put3 (list, dw_whatif_mean_batch (step, clamped.n_high), prefix,
                       "_ratio_fraction_high");
  list->error = clamped.n_low_error / step->mask_count;
  dw_whatif_list_put3 (list, dw_whatif_mean_batch (step, clamped.n_low), prefix,
                       "_ratio_fraction_low");
}

/* Whether Σ v_r · c_r over a float32 step's rows, for float32 values c_r in [@low, @high] and
 * token counts v_r that add up to @n_tokens, is exact however it is added: each c_r · v_r is a
 * multiple of the quantum 2^(e − 23) of @low's binade (e its exponent) and no partial sum reaches
 * 2^52 quanta, so every partial sum is a representable multiple of it. The ways of a vector loop
 * then give the bits of the scalar loop in row order (dw-whatif-kernels.c). */
static gboolean
dw_whatif_eval_sum_exact (double low, double high, double n_tokens)
{
  if (!(low > 0) || !(high >= low) || !isfinite (high))
    return FALSE;
  return high * n_tokens < ldexp (1.0, ilogb (low) - 23 + 52);
}

/* the same for a sequence or geometric ratio (one weight per row); @token_weighted: the
 * fractions count tokens (verl-0.6 geometric) rather than rows; @rows gets the rows' counts */
static void
dw_whatif_eval_ratio_rows (const DwWhatifStep *step, DwWhatifList *list, const char *prefix,
                           DwLevel level, double upper, double lower, gboolean token_weighted,
                           DwWhatifRatioRows *rows)
{
  const gsize n_rows = step->n_rows;
  const double upper_r = dw_whatif_round (step, upper), lower_r = dw_whatif_round (step, lower);
  const gboolean sequence = level == DW_LEVEL_SEQUENCE;
  /* the clamped weights lie in [min (lower, upper), upper], their squares' roundings in the
   * squares' */
  const double low = fmin (lower_r, upper_r), n_tokens = (double)step->n_tokens;
  rows->weight
    = dw_whatif_column (step, sequence ? DW_WHATIF_COL_WEIGHT_SEQ : DW_WHATIF_COL_WEIGHT_GEO);
  rows->log_ratio
    = dw_whatif_column (step, sequence ? DW_WHATIF_COL_LOG_SEQ : DW_WHATIF_COL_LOG_GEO);
  rows->valid = dw_whatif_column (step, DW_WHATIF_COL_VALID);
  rows->token_counts = dw_whatif_column (step, DW_WHATIF_COL_N);
  rows->log_upper = (float)log ((float)upper);
  rows->log_lower = (float)log ((float)lower);
  rows->token_weighted = token_weighted;
  rows->sums = step->f32 && dw_whatif_eval_sum_exact (low, upper_r, n_tokens)
               && dw_whatif_eval_sum_exact (dw_whatif_round (step, low * low),
                                            dw_whatif_round (step, upper_r * upper_r), n_tokens);
  dw_whatif_kernel_ratio_rows (rows);
  if (!rows->sums)
    {
      /* each row's weight added as many times as it has valid tokens, in row order */
      rows->sum = rows->sum_sq = 0;
      for (gsize row = 0; row < n_rows; row++)
        {
          double clamped = dw_torch_clamp (rows->weight[row], lower_r, upper_r);
          dw_whatif_add_repeated (step, &rows->sum, clamped, rows->valid[row]);
          dw_whatif_add_repeated (step, &rows->sum_sq, dw_whatif_round (step, clamped * clamped),
                                  rows->valid[row]);
        }
    }
  double weight_sum = sequence ? step->weight_sum_seq : step->weight_sum_geo;
  dw_whatif_list_put3 (list, dw_whatif_mean_batch (step, weight_sum), prefix, "_mean");

  const double log_max = step->level_stat[level].log_max, log_min = step->level_stat[level].log_min;
  const double n_high = rows->n_high, n_low = rows->n_low;
  dw_whatif_list_put3 (
    list, dw_whatif_round (step, dw_whatif_exp (step, fmin (log_max, DW_WHATIF_SAFETY_BOUND))),
    prefix, "_max");
  dw_whatif_list_put3 (list, dw_whatif_round (step, dw_whatif_exp (step, log_min)), prefix, "_min");
  dw_whatif_list_put3 (
    list, token_weighted ? dw_whatif_mean_batch (step, n_high) : n_high / (double)n_rows, prefix,
    "_ratio_fraction_high");
  dw_whatif_list_put3 (list,
                       token_weighted ? dw_whatif_mean_batch (step, n_low) : n_low / (double)n_rows,
                       prefix, "_ratio_fraction_low");
}

/* the per-sequence statistics of the rows' weight means (threshold-free but the fractions, the
 * rows counted in @rows) */
static void
dw_whatif_eval_ratio_seq (const DwWhatifStep *step, DwWhatifList *list, const char *prefix,
                          DwLevel level, const DwWhatifRatioRows *rows)
{
  const gsize n_rows = step->n_rows;
  const DwWhatifLevelStat *stat = &step->level_stat[level];
  dw_whatif_list_put3 (list, stat->mean, prefix, "_seq_mean");
  dw_whatif_list_put3 (list, n_rows > 1 ? sqrt (stat->sum_sq_dev / (double)(n_rows - 1)) : 0.0,
                       prefix, "_seq_std");
  dw_whatif_list_put3 (list, stat->max, prefix, "_seq_max");
  dw_whatif_list_put3 (list, stat->min, prefix, "_seq_min");
  dw_whatif_list_put3 (list, stat->max_dev, prefix, "_seq_max_deviation");
  dw_whatif_list_put3 (list, rows->seq_high / (double)n_rows, prefix, "_seq_fraction_high");
  dw_whatif_list_put3 (list, rows->seq_low / (double)n_rows, prefix, "_seq_fraction_low");
}

/* the correction core's ratio metrics of a ratio clamped to [lower, upper] */
static void
dw_whatif_eval_ratio (const DwWhatifStep *step, DwWhatifList *list, const char *prefix,
                      DwLevel level, double upper, double lower, gboolean token_weighted)
{
  const double upper_r = dw_whatif_round (step, upper), lower_r = dw_whatif_round (step, lower);
  double sum = 0, sum_sq = 0, sum_error = 0, sum_sq_error = 0;
  gboolean approximate_before = list->approximate;
  /* the rows whose weight mean lies beyond the bounds, and at the sequence and geometric
   * levels the rows' clamped weights */
  DwWhatifRatioRows rows = {
    .mean = dw_whatif_column (step, DW_WHATIF_COL_MEAN_TOK + level),
    .lower = lower_r,
    .upper = upper_r,
    .n_rows = step->n_rows,
  };
  if (level == DW_LEVEL_TOKEN)
    {
      dw_whatif_eval_ratio_token (step, list, prefix, lower_r, upper_r, &sum, &sum_sq, &sum_error,
                                  &sum_sq_error);
      dw_whatif_kernel_ratio_rows (&rows);
    }
  else
    {
      dw_whatif_eval_ratio_rows (step, list, prefix, level, upper, lower, token_weighted, &rows);
      sum = rows.sum;
      sum_sq = rows.sum_sq;
    }
  dw_whatif_list_put_spread (step, list, prefix, sum, sum_sq, sum_error, sum_sq_error);
  list->approximate = approximate_before;
  dw_whatif_eval_ratio_seq (step, list, prefix, level, &rows);
}

static void
dw_whatif_eval_batch_norm (const DwWhatifStep *step, DwWhatifList *list, const DwPlan *plan)
{
  const double cap = dw_whatif_round (step, plan->is_upper);
  double mean;
  if (plan->is_level == DW_LEVEL_TOKEN)
    {
      gboolean approximate_before = list->approximate;
      list->approximate |= !step->weight_monotone;
      double error;
      mean = dw_whatif_mean_batch (step, dw_whatif_query_truncated_sum (step, cap, &error));
      list->error = error / step->mask_count;
      dw_whatif_list_put (list, "rollout_is_batch_norm_factor", mean > 1e-8 ? mean : 1.0);
      list->approximate = approximate_before;
      return;
    }
  double sum = 0, n_counted = 0;
  const gboolean all_rows = plan->bn_rows == DW_BN_ROWS_ALL;
  for (gsize row = 0; row < step->n_rows; row++)
    {
      const double raw = dw_whatif_cell (step, DW_WHATIF_COL_WEIGHT_SEQ, row);
      const double row_tokens = dw_whatif_cell (step, DW_WHATIF_COL_N, row);
      double weight = raw > cap ? cap : raw;
      double row_sum = 0;
      dw_whatif_add_repeated (step, &row_sum, weight,
                              dw_whatif_cell (step, DW_WHATIF_COL_VALID, row));
      double row_mean = dw_whatif_mean_row (step, row_sum, row_tokens);
      if (all_rows || row_tokens > 0)
        sum += row_mean, n_counted += 1;
    }
  mean = sum / fmax (n_counted, 1e-8);
  dw_whatif_list_put (list, "rollout_is_batch_norm_factor", mean > 1e-8 ? mean : 1.0);
}

/* ------------------------------------------------------------------------------------------ */
/* verl ≥ 0.7.1 RS options                                                                     */

/* the step's RS state across options: which rows each kind of option rejects, and the token
 * options' kept interval */
typedef struct
{
  guint8 *seq_rejected, *tok_rejected; /* [n_rows] */
  gsize kept_start, kept_end;          /* intersection of the token options' kept sets */
  gboolean any_token, token_approx;
  guint n_token_options;
  double single_out, single_upper; /* the last token option: masked tokens, bound */
  DwWhatifTokenOption single;
  int single_k;
  double kept_low, kept_high; /* compact steps: the token options' kept ℓ interval */
} DwWhatifRsState;

/* rows a step's RS flags take on the stack */
#define DW_WHATIF_EVAL_STACK_ROWS 2048

/* one option's values before the metrics are put */
typedef struct
{
  const DwRsBound *bound;
  int k;
  DwRsAgg aggregation;
  double upper, lower, lower_metric;
  double sum_stat, sum, sum_sq, masked, seq_masked, n_high, n_low;
  double count_error, sum_error, sum_sq_error; /* compact steps */
} DwWhatifRsOption;

static void
dw_whatif_eval_rs_token_option (const DwWhatifStep *step, DwWhatifRsState *state,
                                DwWhatifRsOption *option)
{
  const gsize n_rows = step->n_rows;
  const int estimator = option->k;
  DwWhatifTokenOption token;
  if (estimator == 1)
    dw_whatif_query_token_k1 (step, option->lower, option->upper, &token);
  else
    dw_whatif_query_token_k23 (step, estimator, option->upper, &token);
  option->sum_stat = step->tok_sum_k[estimator - 1];
  option->sum = token.sum;
  option->sum_sq = token.sum_sq;
  option->n_high = token.n_high;
  option->n_low = token.n_low;
  option->masked = (double)(step->n_tokens - token.n_kept);
  if (step->sketch)
    {
      option->masked = (double)step->n_tokens - token.n_kept_estimate;
      option->count_error = token.count_error;
      option->sum_error = token.sum_error;
      option->sum_sq_error = token.sum_sq_error;
      state->kept_low = fmax (state->kept_low, token.kept_low);
      state->kept_high = fmin (state->kept_high, token.kept_high);
    }
  state->single_out = option->masked;
  state->single = token;
  state->single_k = estimator;
  state->single_upper = option->upper;
  state->n_token_options++;
  state->any_token = TRUE;
  state->kept_start = MAX (state->kept_start, token.kept_start);
  state->kept_end = MIN (state->kept_end, token.kept_end);
  state->token_approx |= token.approx;

  /* a row keeps all its tokens when its extremes are within the bounds */
  DwWhatifTokenRows rows = {
    .valid = dw_whatif_column (step, DW_WHATIF_COL_VALID),
    .token_counts = dw_whatif_column (step, DW_WHATIF_COL_N),
    .k1_min = estimator == 1 ? dw_whatif_column (step, DW_WHATIF_COL_K1_MIN) : NULL,
    .k1_max = estimator == 1 ? dw_whatif_column (step, DW_WHATIF_COL_K1_MAX) : NULL,
    .max_k = estimator == 1 ? NULL : dw_whatif_column (step, DW_WHATIF_SO_MAX_K2 + estimator - 2),
    .lower = option->lower,
    .upper = option->upper,
    .n_rows = n_rows,
    .rejected = state->tok_rejected,
  };
  dw_whatif_kernel_token_rows (&rows);
  option->seq_masked += rows.seq_masked;
}

static int
dw_whatif_eval_rs_row_statistic (int k, DwRsAgg aggregation)
{
  return aggregation == DW_RS_AGG_SUM   ? DW_WHATIF_SO_SUM_K1 + k - 1
         : aggregation == DW_RS_AGG_MAX ? DW_WHATIF_SO_MAX_K2 + k - 2
                                        : DW_WHATIF_SO_MEAN_K1 + k - 1;
}

static void
dw_whatif_eval_rs_seq_option (const DwWhatifStep *step, DwWhatifRsState *state,
                              DwWhatifRsOption *option)
{
  const int statistic = dw_whatif_eval_rs_row_statistic (option->k, option->aggregation);
  const double *value = dw_whatif_column (step, statistic);
  const double *valid = dw_whatif_column (step, DW_WHATIF_COL_VALID);
  DwWhatifSeqOption rows = {
    .value = value,
    .valid = valid,
    .token_counts = dw_whatif_column (step, DW_WHATIF_COL_N),
    .lower = option->lower,
    .upper = option->upper,
    .lower_metric = option->lower_metric,
    .two_sided = option->k == 1,
    .sums = step->f32,
    .n_rows = step->n_rows,
    .rejected = state->seq_rejected,
  };
  dw_whatif_kernel_seq_option (&rows);
  option->sum_stat = step->seq_sum_stat[statistic];
  option->masked += rows.masked;
  option->seq_masked += rows.seq_masked;
  if (step->f32)
    {
      option->sum += rows.sum;
      option->sum_sq += rows.sum_sq;
      return;
    }
  /* float64: each row's value added as many times as it has valid tokens, as torch sums them */
  for (gsize row = 0; row < step->n_rows; row++)
    {
      double clamped = dw_torch_clamp (value[row], option->lower_metric, option->upper);
      dw_whatif_add_repeated (step, &option->sum, clamped, valid[row]);
      dw_whatif_add_repeated (step, &option->sum_sq, dw_whatif_round (step, clamped * clamped),
                              valid[row]);
    }
}

/* "rollout_rs_<option>": one string per option for the whole process, as the keys a list puts
 * within an evaluation must be (DwWhatifKeySource) */
static const char *
dw_whatif_rs_prefix (DwRsOption option)
{
  static const char *prefixes[DW_RS_N_OPTIONS];
  static gsize made;

  if (g_once_init_enter (&made))
    {
      for (int index = 0; index < DW_RS_N_OPTIONS; index++)
        {
          g_autofree char *prefix
            = g_strdup_printf ("rollout_rs_%s", dw_rs_option_name ((DwRsOption)index));
          prefixes[index] = g_intern_string (prefix);
        }
      g_once_init_leave (&made, 1);
    }
  return prefixes[option];
}

/* the metrics of one option (rollout_rs_<option>_*) */
static void
dw_whatif_eval_rs_option_metrics (const DwWhatifStep *step, DwWhatifList *list,
                                  const DwWhatifRsOption *option)
{
  const gboolean is_k1 = option->k == 1;
  const int statistic = dw_whatif_eval_rs_row_statistic (option->k, option->aggregation);
  const DwWhatifRowStat *stat = &step->so_stat[statistic];
  const double *row_value = dw_whatif_column (step, statistic);
  const double *token_counts = dw_whatif_column (step, DW_WHATIF_COL_N);
  const double count = stat->count;
  const double mean = count > 0 ? stat->sum / count : 0.0;
  const char *prefix = dw_whatif_rs_prefix (option->bound->option);

  /* row values over valid rows: only the counts beyond the bounds depend on them */
  DwWhatifRowCounts counts = {
    .value = row_value,
    .token_counts = token_counts,
    .lower = option->lower_metric,
    .upper = option->upper,
    .n_rows = step->n_rows,
  };
  dw_whatif_kernel_row_counts (&counts);
  const double n_high = counts.n_high, n_low = counts.n_low;
  dw_whatif_list_put3 (list, dw_whatif_mean_batch (step, option->sum_stat), prefix, "_mean");
  if (option->aggregation != DW_RS_AGG_TOKEN && count > 0)
    {
      dw_whatif_list_put3 (list, stat->max, prefix, "_max");
      dw_whatif_list_put3 (list, stat->min, prefix, "_min");
      dw_whatif_list_put3 (list, n_high / count, prefix, "_fraction_high");
      dw_whatif_list_put3 (list, is_k1 ? n_low / count : 0.0, prefix, "_fraction_low");
    }
  else
    {
      dw_whatif_list_put3 (list, step->max_k[option->k - 1], prefix, "_max");
      dw_whatif_list_put3 (list, step->min_k[option->k - 1], prefix, "_min");
      list->error = option->count_error / step->mask_count;
      dw_whatif_list_put3 (list, dw_whatif_mean_batch (step, option->n_high), prefix,
                           "_fraction_high");
      list->error = is_k1 ? option->count_error / step->mask_count : 0.0;
      dw_whatif_list_put3 (list, is_k1 ? dw_whatif_mean_batch (step, option->n_low) : 0.0, prefix,
                           "_fraction_low");
    }
  double std, std_error, unused;
  dw_whatif_list_spread_values (step, option->sum, option->sum_sq, &std, &unused);
  std_error = 0;
  for (int corner = 0; (option->sum_error != 0 || option->sum_sq_error != 0) && corner < 4;
       corner++)
    {
      double corner_std;
      dw_whatif_list_spread_values (
        step, option->sum + (corner & 1 ? option->sum_error : -option->sum_error),
        option->sum_sq + (corner & 2 ? option->sum_sq_error : -option->sum_sq_error), &corner_std,
        &unused);
      std_error = fmax (std_error, fabs (corner_std - std));
    }
  list->error = std_error;
  dw_whatif_list_put3 (list, std, prefix, "_std");
  dw_whatif_list_put3 (list, mean, prefix, "_seq_mean");
  dw_whatif_list_put3 (list, count > 1 ? sqrt (stat->sum_sq_dev / (count - 1)) : 0.0, prefix,
                       "_seq_std");
  dw_whatif_list_put3 (list, count > 0 ? stat->max : 0.0, prefix, "_seq_max");
  dw_whatif_list_put3 (list, count > 0 ? stat->min : 0.0, prefix, "_seq_min");
  dw_whatif_list_put3 (list, count > 0 ? stat->max_dev : 0.0, prefix, "_seq_max_deviation");
  dw_whatif_list_put3 (list, count > 0 ? n_high / count : 0.0, prefix, "_seq_fraction_high");
  if (is_k1)
    dw_whatif_list_put3 (list, count > 0 ? n_low / count : 0.0, prefix, "_seq_fraction_low");
  list->error = option->count_error / step->mask_count;
  dw_whatif_list_put3 (list, dw_whatif_mean_batch (step, option->masked), prefix,
                       "_masked_fraction");
  dw_whatif_list_put3 (list, count > 0 ? option->seq_masked / count : 0.0, prefix,
                       "_seq_masked_fraction");
}

/* kept tokens (ℓ in [low, high], or k ≤ upper for a single non-interval k2/k3 option) of the
 * rows @rows */
static gsize
dw_whatif_eval_rs_count_kept (const DwWhatifStep *step, const DwWhatifRsState *state,
                              gboolean single_core, const gsize *rows, gsize n_list, double low,
                              double high)
{
  gsize counted = 0;
  if (single_core)
    {
      for (gsize list_index = 0; list_index < n_list; list_index++)
        counted += dw_whatif_query_row_kept_k23 (step, rows[list_index], state->single_k,
                                                 state->single_upper);
      return counted;
    }
  if (!step->cut_count)
    {
      for (gsize list_index = 0; list_index < n_list; list_index++)
        counted += dw_whatif_query_row_count_between (step, rows[list_index], low, high);
      return counted;
    }
  /* prefetched a few rows ahead: the windows are scattered over the step's arrays and almost
   * never in cache */
  enum
  {
    AHEAD = 8
  };
  const int cut_low = dw_whatif_query_cut_index (step, low);
  const int cut_high = dw_whatif_query_cut_index (step, high);
  for (gsize list_index = 0; list_index < MIN (n_list, AHEAD); list_index++)
    {
      dw_whatif_query_row_prefetch (step, rows[list_index], cut_high);
      dw_whatif_query_row_prefetch (step, rows[list_index], cut_low);
    }
  for (gsize list_index = 0; list_index < n_list; list_index++)
    {
      if (list_index + AHEAD < n_list)
        {
          dw_whatif_query_row_prefetch (step, rows[list_index + AHEAD], cut_high);
          dw_whatif_query_row_prefetch (step, rows[list_index + AHEAD], cut_low);
        }
      gsize n_le = dw_whatif_query_row_count_cut (step, rows[list_index], cut_high, high, TRUE);
      gsize n_lt = dw_whatif_query_row_count_cut (step, rows[list_index], cut_low, low, FALSE);
      counted += n_le > n_lt ? n_le - n_lt : 0;
    }
  return counted;
}

/* Overall: the token options keep the sorted positions [kept_start, kept_end), i.e. the raw ℓ
 * values [ℓ(kept_start), ℓ(kept_end − 1)] (keep is a function of ℓ); rows rejected by a sequence
 * option lose all their tokens, the others the tokens outside that range. A row rejected by a
 * sequence option loses its tokens the token options keep (the others are counted already).
 * Their sum over the rows a token option also rejects equals the step's kept tokens, less the
 * tokens of the rows no token option touches (all kept), less the kept tokens of the rows only a
 * token option rejects: whichever of the two row sets is smaller is counted. */
static void
dw_whatif_eval_rs_overall (const DwWhatifStep *step, DwWhatifList *list,
                           const DwWhatifRsState *state, guint8 *row_rejected)
{
  const gsize n_rows = step->n_rows, n_tokens = step->n_tokens;
  const double *valid = dw_whatif_column (step, DW_WHATIF_COL_VALID);
  gboolean approx = state->token_approx && state->n_token_options > 1;
  const gboolean kept_any = state->any_token && state->kept_end > state->kept_start;
  double masked = state->n_token_options == 1 ? state->single_out
                  : state->any_token
                    ? (double)(n_tokens - (kept_any ? state->kept_end - state->kept_start : 0))
                    : 0.0;
  double low = kept_any ? dw_whatif_sorted_value (step, state->kept_start) : 0;
  double high = kept_any ? dw_whatif_sorted_value (step, state->kept_end - 1) : 0;
  const gboolean single_core = state->n_token_options == 1 && state->single.approx;
  g_autofree gsize *both = g_new (gsize, n_rows ? n_rows : 1);
  g_autofree gsize *token_only = g_new (gsize, n_rows ? n_rows : 1);
  gsize n_both = 0, n_token_only = 0;
  double valid_untouched = 0, rows_rejected = 0;
  for (gsize row = 0; row < n_rows; row++)
    {
      gboolean rejected = valid[row] > 0 && (state->seq_rejected[row] || state->tok_rejected[row]);
      rows_rejected += rejected;
      if (row_rejected)
        row_rejected[row] = rejected;
      if (!state->tok_rejected[row])
        {
          valid_untouched += valid[row];
          if (state->seq_rejected[row])
            masked += valid[row];
        }
      else if (state->seq_rejected[row])
        {
          both[n_both++] = row;
          if (!single_core)
            approx |= state->token_approx;
        }
      else
        token_only[n_token_only++] = row;
    }
  if (kept_any && n_both > 0)
    {
      const gboolean complement = n_token_only < n_both;
      gsize counted
        = dw_whatif_eval_rs_count_kept (step, state, single_core, complement ? token_only : both,
                                        complement ? n_token_only : n_both, low, high);
      if (complement)
        {
          /* the step's kept tokens: the k option's exact count, or the tokens in [low, high] */
          const gsize total = single_core
                                ? state->single.n_kept
                                : dw_whatif_query_first_false (step, DW_WHATIF_Q_RAW, DW_WHATIF_LE,
                                                               high, 0, n_tokens)
                                    - dw_whatif_query_first_false (step, DW_WHATIF_Q_RAW,
                                                                   DW_WHATIF_LT, low, 0, n_tokens);
          masked += (double)total - valid_untouched - (double)counted;
        }
      else
        masked += (double)counted;
    }
  gboolean approximate_before = list->approximate;
  list->approximate |= approx;
  dw_whatif_list_put (list, "rollout_rs_masked_fraction", dw_whatif_mean_batch (step, masked));
  list->approximate = approximate_before; /* row decisions come from per-row extremes: exact */
  dw_whatif_list_put (list, "rollout_rs_seq_masked_fraction", rows_rejected / (double)n_rows);
}

/* dw_whatif_eval_rs_overall on a compact step: the tokens outside the token options' kept ℓ
 * interval come from the sketch; a row rejected by a sequence option loses all its tokens, and
 * of a row also rejected by a token option, the tokens the token options keep are estimated at
 * the step's kept share (error: the row's tokens) */
static void
dw_whatif_eval_rs_overall_sketch (const DwWhatifStep *step, DwWhatifList *list,
                                  const DwWhatifRsState *state, guint8 *row_rejected)
{
  const double n_tokens = (double)step->n_tokens;
  const double *valid = dw_whatif_column (step, DW_WHATIF_COL_VALID);
  double kept = n_tokens, kept_error = 0;
  if (state->n_token_options == 1)
    {
      kept = state->single.n_kept_estimate;
      kept_error = state->single.count_error;
    }
  else if (state->any_token)
    {
      DwWhatifSketchPart inside;
      dw_whatif_query_sketch_between (step, state->kept_low, state->kept_high, &inside);
      kept = inside.count;
      kept_error = inside.count_error;
    }
  DwWhatifRsRows rows = {
    .seq_rejected = state->seq_rejected,
    .tok_rejected = state->tok_rejected,
    .valid = valid,
    .kept_share = n_tokens > 0 ? kept / n_tokens : 0,
    .n_rows = step->n_rows,
    .row_rejected = row_rejected,
  };
  dw_whatif_kernel_rs_rows (&rows);
  const double masked = (n_tokens - kept) + rows.masked;
  const double masked_error = kept_error + rows.masked_error, rows_rejected = rows.rows_rejected;
  list->error = masked_error / step->mask_count;
  dw_whatif_list_put (list, "rollout_rs_masked_fraction", dw_whatif_mean_batch (step, masked));
  dw_whatif_list_put (list, "rollout_rs_seq_masked_fraction", rows_rejected / (double)step->n_rows);
}

static void
dw_whatif_eval_rs (const DwWhatifStep *step, DwWhatifList *list, const DwPlan *plan,
                   guint8 *row_rejected)
{
  const gsize n_rows = step->n_rows;
  DwWhatifRsState state = { 0 };
  /* on the stack for the usual step (a move evaluates thousands, a few hundred rows each) */
  guint8 on_stack[2 * DW_WHATIF_EVAL_STACK_ROWS];
  g_autofree guint8 *on_heap
    = n_rows > DW_WHATIF_EVAL_STACK_ROWS ? g_new (guint8, 2 * n_rows) : NULL;
  state.seq_rejected = on_heap != NULL ? on_heap : on_stack;
  state.tok_rejected = state.seq_rejected + MAX (n_rows, DW_WHATIF_EVAL_STACK_ROWS);
  memset (state.seq_rejected, 0, n_rows);
  memset (state.tok_rejected, 0, n_rows);
  state.kept_end = step->n_tokens;
  state.kept_low = -INFINITY;
  state.kept_high = INFINITY;
  for (gsize index = 0; index < plan->rs.n; index++)
    {
      DwWhatifRsOption option = { .bound = &plan->rs.bounds[index] };
      option.k = dw_rs_option_k (option.bound->option);
      option.aggregation = dw_rs_option_agg (option.bound->option);
      option.upper = dw_whatif_round (step, option.bound->log_upper);
      option.lower = option.k == 1 ? dw_whatif_round (step, option.bound->log_lower) : 0.0;
      option.lower_metric = option.lower;
      if (option.aggregation == DW_RS_AGG_TOKEN)
        dw_whatif_eval_rs_token_option (step, &state, &option);
      else
        dw_whatif_eval_rs_seq_option (step, &state, &option);
      dw_whatif_eval_rs_option_metrics (step, list, &option);
    }
  if (step->sketch)
    dw_whatif_eval_rs_overall_sketch (step, list, &state, row_rejected);
  else
    dw_whatif_eval_rs_overall (step, list, &state, row_rejected);
}

/* ------------------------------------------------------------------------------------------ */
/* verl ≤ 0.7.0 RS, verl-0.6 mask mode, veto, off-policy                                       */

/* masked counts of [lower ≤ ρ ≤ upper] (docs/CORRECTION.md §5.1) */
static void
dw_whatif_eval_ratio_mask (const DwWhatifStep *step, DwWhatifList *list, DwLevel level,
                           double upper, double lower, const char *key_masked, const char *key_seq,
                           guint8 *row_rejected)
{
  const double upper_r = dw_whatif_round (step, upper), lower_r = dw_whatif_round (step, lower);
  double masked = 0, masked_error = 0, rows = 0;
  gboolean approximate_before = list->approximate;
  if (level == DW_LEVEL_TOKEN)
    {
      DwWhatifClamped clamped;
      dw_whatif_query_clamp_weights (step, lower_r, upper_r, &clamped);
      masked = (double)step->n_tokens - clamped.n_kept;
      masked_error = clamped.n_kept_error;
      list->approximate |= !step->weight_monotone;
      for (gsize row = 0; row < step->n_rows; row++)
        {
          gboolean rejected
            = dw_whatif_cell (step, DW_WHATIF_COL_VALID, row) > 0
              && !(dw_whatif_cell (step, DW_WHATIF_COL_MIN_WEIGHT, row) >= lower_r
                   && dw_whatif_cell (step, DW_WHATIF_COL_MAX_WEIGHT, row) <= upper_r);
          rows += rejected;
          if (row_rejected)
            row_rejected[row] |= rejected;
        }
    }
  else
    {
      DwWhatifRatioMask mask = {
        .weight = dw_whatif_column (step, level == DW_LEVEL_SEQUENCE ? DW_WHATIF_COL_WEIGHT_SEQ
                                                                     : DW_WHATIF_COL_WEIGHT_GEO),
        .valid = dw_whatif_column (step, DW_WHATIF_COL_VALID),
        .lower = lower_r,
        .upper = upper_r,
        .n_rows = step->n_rows,
        .rejected = row_rejected,
      };
      dw_whatif_kernel_ratio_mask (&mask);
      masked = mask.masked;
      rows = step->n_cols > 0 ? mask.rows_masked : 0;
    }
  list->error = masked_error / step->mask_count;
  dw_whatif_list_put (list, key_masked, dw_whatif_mean_batch (step, masked));
  dw_whatif_list_put (list, key_seq, step->n_rows ? rows / (double)step->n_rows : 0.0);
  list->approximate = approximate_before;
}

static void
dw_whatif_eval_veto (const DwWhatifStep *step, DwWhatifList *list, gboolean on, double threshold,
                     guint8 *row_rejected)
{
  double vetoed = 0, catastrophic = 0, catastrophic_error = 0;
  if (on)
    {
      const double log_threshold = (float)log ((float)threshold);
      catastrophic = dw_whatif_query_count_log_below (step, log_threshold, &catastrophic_error);
      DwWhatifVetoRows rows = {
        .valid = dw_whatif_column (step, DW_WHATIF_COL_VALID),
        .min_log = dw_whatif_column (step, DW_WHATIF_COL_MIN_LOG),
        .log_threshold = log_threshold,
        .n_rows = step->n_rows,
        .rejected = row_rejected,
      };
      dw_whatif_kernel_veto_rows (&rows);
      vetoed = rows.vetoed;
    }
  dw_whatif_list_put (list, "rollout_is_veto_fraction", vetoed / (double)step->n_rows);
  list->error = catastrophic_error / step->mask_count;
  dw_whatif_list_put (list, "rollout_is_catastrophic_token_fraction",
                      dw_whatif_mean_batch (step, catastrophic));
}

/* @old_names: verl-0.6's mismatch_ keys, without chi2 */
static void
dw_whatif_eval_offpolicy (const DwWhatifStep *step, DwWhatifList *list, gboolean old_names)
{
  for (gsize index = 0; index < step->n_offpolicy; index++)
    {
      const char *key = step->offpolicy_keys[index];
      if (old_names && g_str_has_prefix (key, "chi2_"))
        continue;
      dw_whatif_list_put3 (list, step->offpolicy_values[index], old_names ? "mismatch_" : "", key);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* a plan on a step                                                                            */

/* mismatch_helper 4424616d7 (docs/CORRECTION.md §6) */
static void
dw_whatif_eval_mismatch (const DwWhatifStep *step, DwWhatifList *list, const DwPlan *plan,
                         guint8 *row_rejected)
{
  if (plan->nothing)
    return;
  dw_whatif_eval_ratio (step, list, "rollout_is", plan->is_level, plan->is_upper, plan->is_lower,
                        plan->is_level == DW_LEVEL_GEOMETRIC);
  if (plan->is_mode == DW_IS_MASK_OUTSIDE)
    dw_whatif_eval_ratio_mask (step, list, plan->is_level, plan->is_upper, plan->is_lower,
                               "rollout_is_masked_fraction", "rollout_is_seq_masked_fraction",
                               row_rejected);
  dw_whatif_eval_veto (step, list, plan->veto_on, plan->veto, row_rejected);
  dw_whatif_eval_offpolicy (step, list, TRUE);
}

/* the IS metrics of the rollout_corr helper (every generation from v0.6.1 on); FALSE when verl
 * raises (dw_whatif_applied_evaluate) */
static gboolean
dw_whatif_eval_is (const DwWhatifStep *step, DwWhatifList *list, const DwPlan *plan)
{
  if (plan->is_metrics != DW_IS_METRICS_RAW)
    {
      DwWhatifApplied applied = {
        .level = plan->is_level,
        .icepop = plan->is_mode == DW_IS_ZERO_OUTSIDE,
        .raw_seq_fractions = plan->is_metrics == DW_IS_METRICS_APPLIED_RAW_SEQ,
        .upper = plan->is_upper,
        .lower = plan->is_lower,
        .batch_normalize = plan->batch_normalize,
        .bn_all_rows = plan->bn_rows == DW_BN_ROWS_ALL,
      };
      return dw_whatif_applied_evaluate (step, list, &applied);
    }
  dw_whatif_eval_ratio (step, list, "rollout_is", plan->is_level, plan->is_upper, plan->is_lower,
                        FALSE);
  if (plan->batch_normalize)
    dw_whatif_eval_batch_norm (step, list, plan);
  return TRUE;
}

/* whether the statistics can answer @plan on @step (else the exact pass must) */
static gboolean
dw_whatif_eval_supported (const DwWhatifStep *step, const DwPlan *plan)
{
  if (!step->fast || plan->mismatch_quantiles)
    return FALSE;
  switch (plan->path)
    {
    case DW_PATH_VERL_K_OPTIONS:
      return TRUE;
    case DW_PATH_VERL_LEGACY_RS:
    case DW_PATH_VERL_MISMATCH:
      return TRUE;
    default:
      return FALSE; /* slime: per-sample reductions the statistics do not keep */
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the groups of a step's previous evaluation (DwWhatifGroupMemo)                              */

typedef struct
{
  guchar bytes[DW_WHATIF_MEMO_KEY];
  gsize length;
  gboolean fits;
} DwWhatifMemoKey;

static void
dw_whatif_memo_key_add (DwWhatifMemoKey *key, const void *value, gsize size)
{
  if (key->length + size > sizeof key->bytes)
    {
      key->fits = FALSE;
      return;
    }
  memcpy (key->bytes + key->length, value, size);
  key->length += size;
}

/* the fields every group's keys and values depend on: the generation, the path and the metric
 * prefix (its text) */
static void
dw_whatif_memo_key_start (DwWhatifMemoKey *key, const DwPlan *plan)
{
  memset (key, 0, sizeof *key);
  key->fits = TRUE;
  const gsize prefix_length = strlen (plan->metric_prefix);
  dw_whatif_memo_key_add (key, &plan->generation, sizeof plan->generation);
  dw_whatif_memo_key_add (key, &plan->path, sizeof plan->path);
  dw_whatif_memo_key_add (key, &prefix_length, sizeof prefix_length);
  dw_whatif_memo_key_add (key, plan->metric_prefix, prefix_length);
}

/* what dw_whatif_eval_is () reads of the plan */
static void
dw_whatif_memo_is_key (DwWhatifMemoKey *key, const DwPlan *plan)
{
  dw_whatif_memo_key_start (key, plan);
  dw_whatif_memo_key_add (key, &plan->is_on, sizeof plan->is_on);
  dw_whatif_memo_key_add (key, &plan->is_level, sizeof plan->is_level);
  dw_whatif_memo_key_add (key, &plan->is_mode, sizeof plan->is_mode);
  dw_whatif_memo_key_add (key, &plan->is_upper, sizeof plan->is_upper);
  dw_whatif_memo_key_add (key, &plan->is_lower, sizeof plan->is_lower);
  dw_whatif_memo_key_add (key, &plan->is_metrics, sizeof plan->is_metrics);
  dw_whatif_memo_key_add (key, &plan->batch_normalize, sizeof plan->batch_normalize);
  dw_whatif_memo_key_add (key, &plan->bn_rows, sizeof plan->bn_rows);
}

/* what dw_whatif_eval_rs_group () reads of the plan */
static void
dw_whatif_memo_rs_key (DwWhatifMemoKey *key, const DwPlan *plan)
{
  dw_whatif_memo_key_start (key, plan);
  dw_whatif_memo_key_add (key, &plan->rs_on, sizeof plan->rs_on);
  dw_whatif_memo_key_add (key, &plan->rs.n, sizeof plan->rs.n);
  for (gsize index = 0; index < plan->rs.n; index++)
    {
      const DwRsBound *bound = &plan->rs.bounds[index];
      dw_whatif_memo_key_add (key, &bound->option, sizeof bound->option);
      dw_whatif_memo_key_add (key, &bound->log_upper, sizeof bound->log_upper);
      dw_whatif_memo_key_add (key, &bound->log_lower, sizeof bound->log_lower);
    }
  if (plan->path != DW_PATH_VERL_K_OPTIONS)
    {
      /* verl ≤ 0.7.0: the RS ratio's level and bounds, the veto */
      dw_whatif_memo_key_add (key, &plan->rs_level, sizeof plan->rs_level);
      dw_whatif_memo_key_add (key, &plan->rs_upper, sizeof plan->rs_upper);
      dw_whatif_memo_key_add (key, &plan->rs_lower, sizeof plan->rs_lower);
      dw_whatif_memo_key_add (key, &plan->veto_on, sizeof plan->veto_on);
      dw_whatif_memo_key_add (key, &plan->veto, sizeof plan->veto);
    }
}

/* puts @memo's entries (and row outcomes) into @list when it holds the group of @key_id and the
 * list is in the state the group started from */
static gboolean
dw_whatif_memo_take (const DwWhatifGroupMemo *memo, guint64 key_id, DwWhatifList *list,
                     guint8 *row_rejected, gsize n_rows)
{
  if (!memo->valid || key_id == 0 || memo->key_id != key_id || list->approximate || list->error != 0
      || (row_rejected && !memo->has_rows))
    return FALSE;
  dw_whatif_list_put_table (list, memo->keys, memo->values, memo->errors, memo->approximate);
  if (row_rejected)
    memcpy (row_rejected, memo->row_rejected, n_rows);
  return TRUE;
}

/* keeps the entries @list got since @first (and the row outcomes) as the group of @key_id */
static void
dw_whatif_memo_keep (DwWhatifGroupMemo *memo, guint64 key_id, const DwWhatifList *list, guint first,
                     const guint8 *row_rejected, gsize n_rows)
{
  const guint n_entries = list->n_entries - first;
  const DwWhatifEntry *entries = list->entries + first;
  memo->valid = FALSE;
  if (key_id == 0 || list->approximate || list->error != 0)
    return;
  const DwWhatifKeys *keys = dw_whatif_list_keys_from (list, first, memo->keys);
  if (keys != memo->keys)
    {
      dw_whatif_keys_unref (memo->keys);
      memo->keys = keys;
    }
  if (n_entries > memo->capacity)
    {
      memo->capacity = MAX (n_entries, 16);
      g_free (memo->values);
      memo->values = g_malloc (memo->capacity * DW_WHATIF_MEMO_ENTRY);
      memo->errors = memo->values + memo->capacity;
      memo->approximate = (guint8 *)(memo->errors + memo->capacity);
    }
  for (guint index = 0; index < n_entries; index++)
    {
      memo->values[index] = entries[index].value;
      memo->errors[index] = entries[index].error;
      memo->approximate[index] = entries[index].approximate;
    }
  memo->n_entries = n_entries;
  memo->has_rows = row_rejected != NULL;
  if (row_rejected)
    {
      if (memo->row_capacity < MAX (n_rows, 1))
        {
          memo->row_capacity = MAX (n_rows, 1);
          memo->row_rejected = g_realloc (memo->row_rejected, memo->row_capacity);
        }
      memcpy (memo->row_rejected, row_rejected, n_rows);
    }
  memo->key_id = key_id;
  memo->valid = TRUE;
}

void
dw_whatif_memo_keys_update (DwWhatifMemoKeys *keys, const DwPlan *plan)
{
  for (int group = 0; group < DW_WHATIF_N_GROUPS; group++)
    {
      DwWhatifMemoKey key;
      if (group == DW_WHATIF_GROUP_IS)
        dw_whatif_memo_is_key (&key, plan);
      else
        dw_whatif_memo_rs_key (&key, plan);
      if (!key.fits)
        keys->id[group] = 0;
      else if (keys->id[group] == 0 || keys->length[group] != key.length
               || memcmp (keys->key[group], key.bytes, key.length) != 0)
        {
          keys->id[group] = ++keys->last_id;
          keys->length[group] = key.length;
          memcpy (keys->key[group], key.bytes, key.length);
        }
    }
}

void
dw_whatif_memo_clear (DwWhatifMemo *memo)
{
  dw_whatif_keys_unref (memo->is.keys);
  g_free (memo->is.values);
  g_free (memo->is.row_rejected);
  dw_whatif_keys_unref (memo->rs.keys);
  g_free (memo->rs.values);
  g_free (memo->rs.row_rejected);
  memset (memo, 0, sizeof *memo);
}

/* whether @memo holds @group's entries under the current id (dw_whatif_memo_take's test, less
 * the list's state) */
static gboolean
dw_whatif_memo_current (const DwWhatifGroupMemo *memo, guint64 key_id)
{
  return memo->valid && key_id != 0 && memo->key_id == key_id;
}

/* the lines of @size bytes from @address */
static void
dw_whatif_eval_prefetch_range (const void *address, gsize size)
{
  for (gsize offset = 0; offset < size; offset += 64)
    __builtin_prefetch ((const char *)address + offset);
}

void
dw_whatif_eval_prefetch (const DwWhatifStep *step, const DwPlan *plan, const DwWhatifMemo *memo,
                         const DwWhatifMemoKeys *keys, int stage)
{
  static const int token_columns[] = { DW_WHATIF_COL_MEAN_TOK, DW_WHATIF_COL_N, DW_WHATIF_COL_VALID,
                                       DW_WHATIF_COL_MAX_WEIGHT, DW_WHATIF_COL_MIN_WEIGHT };
  static const int sequence_columns[]
    = { DW_WHATIF_COL_WEIGHT_SEQ, DW_WHATIF_COL_N, DW_WHATIF_COL_VALID, DW_WHATIF_COL_LOG_SEQ,
        DW_WHATIF_COL_MEAN_SEQ };
  /* without a memo every group is computed */
  const gboolean is_kept
    = memo != NULL && dw_whatif_memo_current (&memo->is, keys->id[DW_WHATIF_GROUP_IS]);
  const gboolean rs_kept
    = memo != NULL && dw_whatif_memo_current (&memo->rs, keys->id[DW_WHATIF_GROUP_RS]);

  if (step->empty || plan->path != DW_PATH_VERL_K_OPTIONS)
    return;
  if (stage == 0)
    {
      /* what the next stage reads: the memo's block pointers are in the memo itself */
      if (is_kept)
        dw_whatif_eval_prefetch_range (memo->is.values, memo->is.capacity * DW_WHATIF_MEMO_ENTRY);
      if (rs_kept)
        dw_whatif_eval_prefetch_range (memo->rs.values, memo->rs.capacity * DW_WHATIF_MEMO_ENTRY);
      if (!is_kept && plan->is_on && plan->is_level == DW_LEVEL_TOKEN && step->sketch != NULL
          && step->is_lanes != NULL)
        {
          /* the float32 copy of the token columns is all the rows the move reads: TIS the
           * first three, IcePop also the fourth */
          const int n_fields = plan->is_mode == DW_IS_ZERO_OUTSIDE ? DW_WHATIF_IS_LANES_FIELDS
                                                                   : DW_WHATIF_IS_LANES_FIELDS - 1;
          dw_whatif_eval_prefetch_range (
            step->is_lanes, n_fields * dw_whatif_lanes_stride (step->n_rows) * sizeof (float));
          __builtin_prefetch (step->sketch);
        }
      else if (!is_kept && plan->is_on)
        {
          const int *columns = plan->is_level == DW_LEVEL_TOKEN ? token_columns : sequence_columns;
          for (gsize index = 0; index < G_N_ELEMENTS (token_columns); index++)
            dw_whatif_eval_prefetch_range (dw_whatif_column (step, columns[index]),
                                           step->n_rows * sizeof (double));
          if (step->sketch != NULL)
            __builtin_prefetch (step->sketch);
        }
      return;
    }
  if (!is_kept && plan->is_on && plan->is_level == DW_LEVEL_TOKEN && step->sketch != NULL)
    dw_whatif_sketch_prefetch (step);
}

/* the RS group of @plan's path: verl ≥ 0.7.1's RS options, or verl ≤ 0.7.0's RS ratio and
 * veto, and the off-policy metrics */
static void
dw_whatif_eval_rs_group (const DwWhatifStep *step, DwWhatifList *list, const DwPlan *plan,
                         guint8 *row_rejected)
{
  if (plan->path == DW_PATH_VERL_K_OPTIONS)
    {
      if (plan->rs_on)
        dw_whatif_eval_rs (step, list, plan, row_rejected);
      dw_whatif_eval_offpolicy (step, list, FALSE);
      return;
    }
  if (plan->rs_on)
    {
      dw_whatif_eval_ratio (step, list, "rollout_rs", plan->rs_level, plan->rs_upper,
                            plan->rs_lower, FALSE);
      dw_whatif_eval_ratio_mask (step, list, plan->rs_level, plan->rs_upper, plan->rs_lower,
                                 "rollout_rs_masked_fraction", "rollout_rs_seq_masked_fraction",
                                 row_rejected);
    }
  dw_whatif_eval_veto (step, list, plan->veto_on, plan->veto, row_rejected);
  dw_whatif_eval_offpolicy (step, list, FALSE);
}

/* verl ≥ 0.6.1 (the rollout_corr helper): the IS group, then the RS and off-policy group, each
 * from @memo when the plan's fields it reads are those of the step's previous evaluation
 * (@keys); FALSE when verl raises */
static gboolean
dw_whatif_eval_groups (const DwWhatifStep *step, DwWhatifList *list, const DwPlan *plan,
                       guint8 *row_rejected, DwWhatifMemo *memo, const DwWhatifMemoKeys *keys)
{
  const guint64 is_id = memo ? keys->id[DW_WHATIF_GROUP_IS] : 0;
  const guint64 rs_id = memo ? keys->id[DW_WHATIF_GROUP_RS] : 0;
  guint first = list->n_entries;
  if (plan->is_on && !(memo && dw_whatif_memo_take (&memo->is, is_id, list, NULL, 0)))
    {
      if (!dw_whatif_eval_is (step, list, plan))
        return FALSE;
      if (memo)
        dw_whatif_memo_keep (&memo->is, is_id, list, first, NULL, 0);
    }
  first = list->n_entries;
  if (memo && dw_whatif_memo_take (&memo->rs, rs_id, list, row_rejected, step->n_rows))
    return TRUE;
  dw_whatif_eval_rs_group (step, list, plan, row_rejected);
  if (memo)
    dw_whatif_memo_keep (&memo->rs, rs_id, list, first, row_rejected, step->n_rows);
  return TRUE;
}

gboolean
dw_whatif_eval_in_groups (const DwPlan *plan)
{
  return plan->path == DW_PATH_VERL_K_OPTIONS || plan->path == DW_PATH_VERL_LEGACY_RS;
}

void
dw_whatif_eval_step (const DwWhatifStep *step, const DwPlan *plan, DwWhatifStepResult *out,
                     guint8 *row_rejected, DwWhatifMemo *memo, const DwWhatifMemoKeys *keys)
{
  if (row_rejected)
    memset (row_rejected, 0, step->n_rows);
  if (!dw_whatif_eval_supported (step, plan))
    {
      out->pending = TRUE;
      out->any_approximate = TRUE;
      return;
    }
  DwWhatifList list;
  dw_whatif_list_init (&list, plan->metric_prefix);
  if (!dw_whatif_eval_in_groups (plan))
    {
      dw_whatif_eval_mismatch (step, &list, plan, row_rejected);
      dw_whatif_list_finish (&list, out);
      return;
    }
  if (!dw_whatif_eval_groups (step, &list, plan, row_rejected, memo, keys))
    {
      DwCorrectionError error = { .kind = DW_ERROR_ZERO_DIVISION };
      g_strlcpy (error.message, "float division by zero", sizeof error.message);
      dw_whatif_eval_fail (out, &error);
      dw_whatif_list_clear (&list);
      return;
    }
  dw_whatif_list_finish (&list, out);
}
