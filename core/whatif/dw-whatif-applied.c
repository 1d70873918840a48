/* dw-whatif-applied.c — the IS metrics of verl v0.8.0 and v0.9.0 (TIS or IcePop) on the
 * statistics of one step: they describe the weights the loss applies
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-whatif-kernels-private.h"
#include "dw-whatif-private.h"

#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* verl ≥ 0.8.0 IS: metrics of the applied weights (docs/CORRECTION.md §3.6)                    */

/* the statistics of the per-row means r_b = MMEAN(w, row) of the applied weights, to be taken
 * from @row_mean (dw_whatif_kernel_applied_seq_stats), or as a compact step's token level makes
 * them (dw_whatif_kernel_applied_rows_sketch) */
static DwWhatifAppliedSeqStats
dw_whatif_applied_seq_stats (const DwWhatifStep *step, const DwWhatifApplied *applied,
                             const double *row_mean)
{
  /* v0.9.0 compares the raw rows' means with the bounds, v0.8.0 the applied ones */
  return (DwWhatifAppliedSeqStats){
    .row_mean = row_mean,
    .compared
    = !applied->raw_seq_fractions
        ? row_mean
        : dw_whatif_column (step, applied->level == DW_LEVEL_TOKEN ? DW_WHATIF_COL_MEAN_TOK
                                                                   : DW_WHATIF_COL_MEAN_SEQ),
    .n_rows = step->n_rows,
    .upper_r = dw_whatif_round (step, applied->upper),
    .lower_r = dw_whatif_round (step, applied->lower),
  };
}

/* the metrics of the rows' means r_b from their statistics */
static void
dw_whatif_applied_seq (DwWhatifList *list, const DwWhatifApplied *applied,
                       const DwWhatifAppliedSeqStats *stats)
{
  const gboolean approximate_before = list->approximate;
  const gsize n_rows = stats->n_rows;
  /* bounds from the rows' errors (compact steps): the mean moves by their mean, an extreme by
   * the largest, the std by at most their root mean square (centering does not lengthen a
   * vector), a fraction by the rows whose interval straddles the bound */
  list->error = stats->error_sum / (double)n_rows;
  dw_whatif_list_put (list, "rollout_is_seq_mean", stats->sum / (double)n_rows);
  list->error = n_rows > 1 ? sqrt (stats->error_sq / (double)(n_rows - 1)) : 0.0;
  dw_whatif_list_put (list, "rollout_is_seq_std",
                      n_rows > 1 ? sqrt (stats->sum_sq_dev / (double)(n_rows - 1)) : 0.0);
  list->error = stats->error_max;
  dw_whatif_list_put (list, "rollout_is_seq_max", stats->max);
  list->error = stats->error_max;
  dw_whatif_list_put (list, "rollout_is_seq_min", stats->min);
  list->error = stats->error_max;
  dw_whatif_list_put (list, "rollout_is_seq_max_deviation", stats->max_dev);
  list->error = applied->raw_seq_fractions ? 0.0 : stats->n_unsure_high / (double)n_rows;
  dw_whatif_list_put (list, "rollout_is_seq_fraction_high", stats->n_high / (double)n_rows);
  list->error = applied->raw_seq_fractions ? 0.0 : stats->n_unsure_low / (double)n_rows;
  dw_whatif_list_put (list, "rollout_is_seq_fraction_low", stats->n_low / (double)n_rows);
  list->approximate = approximate_before;
}

/* the batch normalisation factor of the applied weights: the token mean (@token_mean) or the
 * mean of the non-empty rows' means (docs/CORRECTION.md §3.2) */
static void
dw_whatif_applied_batch_norm (const DwWhatifStep *step, DwWhatifList *list,
                              const DwWhatifApplied *applied, double token_mean,
                              const double *row_mean)
{
  double factor = token_mean;
  if (applied->level != DW_LEVEL_TOKEN)
    {
      double sum = 0, n_counted = 0;
      for (gsize row = 0; row < step->n_rows; row++)
        if (applied->bn_all_rows || dw_whatif_cell (step, DW_WHATIF_COL_N, row) > 0)
          sum += row_mean[row], n_counted += 1;
      factor = sum / fmax (n_counted, 1e-8);
    }
  const double shown = factor > 1e-8 ? factor : 1.0, error = list->error;
  if (error > 0 && factor - error <= 1e-8)
    /* the true factor may be verl's fallback 1 (mean ≤ 1e-8) or anywhere in the estimate's
     * interval: the bound covers both */
    list->error = fmax (fmax (fabs (shown - 1.0), fabs (shown - (factor + error))),
                        fabs (shown - fmax (factor - error, 0.0)));
  dw_whatif_list_put (list, "rollout_is_batch_norm_factor", shown);
}

/* the token-level sums of the applied weights and the counts beyond the bounds */
typedef struct
{
  double sum, sum_sq, n_below, n_above;
  double sum_error, sum_sq_error, n_below_error, n_above_error;
  double max, min;
  double max_error, min_error; /* compact IcePop: bounds of the estimated max and min */
} DwWhatifAppliedSums;

/* the same on a compact step, from the sketch */
static void
dw_whatif_applied_token_sketch (const DwWhatifStep *step, const DwWhatifApplied *applied,
                                DwWhatifAppliedSums *out)
{
  const double upper_r = dw_whatif_round (step, applied->upper);
  const double lower_r = dw_whatif_round (step, applied->lower);
  const int weight = DW_WHATIF_Q_WEIGHT, weight_sq = DW_WHATIF_Q_WEIGHT_SQ;
  DwWhatifSketchPart below, at_most;
  dw_whatif_sketch_prefix (step, weight, DW_WHATIF_LT, lower_r, &below);
  dw_whatif_sketch_prefix (step, weight, DW_WHATIF_LE, upper_r, &at_most);
  out->n_below = below.count;
  out->n_below_error = below.count_error;
  out->n_above = (double)step->n_tokens - at_most.count;
  out->n_above_error = at_most.count_error;
  out->sum = at_most.sum[weight];
  out->sum_sq = at_most.sum[weight_sq];
  out->sum_error = at_most.sum_error[weight];
  out->sum_sq_error = at_most.sum_error[weight_sq];
  if (applied->icepop)
    {
      out->sum -= below.sum[weight];
      out->sum_sq -= below.sum[weight_sq];
      out->sum_error += below.sum_error[weight];
      out->sum_sq_error += below.sum_error[weight_sq];
      /* the largest kept weight lies in [L, min(max w, U)]; the smallest weight is 0 as soon as a
       * token is out, which the counts may leave unsure */
      const double kept = at_most.count - below.count;
      const double kept_error = at_most.count_error + below.count_error;
      const double out_count = out->n_below + out->n_above;
      const double largest = fmin (step->max_weight, upper_r);
      out->max = kept > 0 ? largest : 0.0;
      out->max_error = kept_error > 0 || kept > 0 ? fmax (largest - lower_r, 0.0) : 0.0;
      if (kept_error > 0 && kept <= kept_error)
        out->max_error = fmax (out->max_error, largest);
      out->min = out_count > 0 ? 0.0 : step->min_weight;
      const double out_error = out->n_below_error + out->n_above_error;
      out->min_error
        = out_count > out_error || (out_count == 0 && out_error == 0) ? 0.0 : step->min_weight;
      return;
    }
  const double upper_sq = dw_whatif_round (step, upper_r * upper_r);
  out->sum += dw_whatif_times (upper_r, out->n_above);
  out->sum_sq += dw_whatif_times (upper_sq, out->n_above);
  out->sum_error += dw_whatif_times (upper_r, at_most.count_error);
  out->sum_sq_error += dw_whatif_times (upper_sq, at_most.count_error);
  out->max = fmin (step->max_weight, upper_r);
  out->min = fmin (step->min_weight, upper_r);
}

/* the row means of the applied weights on a compact step: exact for a row with no token beyond
 * the bounds (its raw mean), else estimated as if only its most extreme token were beyond them
 * (dw_whatif_kernel_applied_rows_sketch, which takes their statistics @stats as it makes them) */
static void
dw_whatif_applied_token_rows_sketch (const DwWhatifStep *step, const DwWhatifApplied *applied,
                                     double *row_mean, DwWhatifAppliedSeqStats *stats)
{
  const DwWhatifAppliedRowsSketch rows = {
    .raw_mean = dw_whatif_column (step, DW_WHATIF_COL_MEAN_TOK),
    .row_tokens = dw_whatif_column (step, DW_WHATIF_COL_N),
    .valid = dw_whatif_column (step, DW_WHATIF_COL_VALID),
    .max_weight = dw_whatif_column (step, DW_WHATIF_COL_MAX_WEIGHT),
    .min_weight = dw_whatif_column (step, DW_WHATIF_COL_MIN_WEIGHT),
    .lanes = step->is_lanes,
    .lanes_stride = dw_whatif_lanes_stride (step->n_rows),
    .n_rows = step->n_rows,
    .upper_r = dw_whatif_round (step, applied->upper),
    .lower_r = dw_whatif_round (step, applied->lower),
    .icepop = applied->icepop,
    .f32 = step->f32,
    .raw_compared = applied->raw_seq_fractions,
    .row_mean = row_mean,
  };
  dw_whatif_kernel_applied_rows_sketch (&rows, stats);
}

/* the row means of token-level applied weights. A row with no token beyond the bounds keeps
 * its raw mean. In the others, the tokens with w ≤ U (TIS) or L ≤ w ≤ U (IcePop) are a window
 * of the row's sorted tokens, found from the ℓ where the step's sorted weights cross the bounds
 * (@low_position, @high_position) */
static void
dw_whatif_applied_token_rows (const DwWhatifStep *step, const DwWhatifApplied *applied,
                              gsize low_position, gsize high_position, double *row_mean)
{
  const gsize n_tokens = step->n_tokens;
  const double upper_r = dw_whatif_round (step, applied->upper);
  const double lower_r = dw_whatif_round (step, applied->lower);
  /* tokens with ℓ < high_log have w ≤ U; tokens with ℓ < low_log have w < L */
  const double high_log
    = high_position < n_tokens ? dw_whatif_sorted_value (step, high_position) : INFINITY;
  const double low_log
    = low_position < n_tokens ? dw_whatif_sorted_value (step, low_position) : INFINITY;
  const int high_cut = step->cut_count ? dw_whatif_query_cut_index (step, high_log) : 0;
  const int low_cut = step->cut_count ? dw_whatif_query_cut_index (step, low_log) : 0;
  const double *max_weight = dw_whatif_column (step, DW_WHATIF_COL_MAX_WEIGHT);
  const double *min_weight = dw_whatif_column (step, DW_WHATIF_COL_MIN_WEIGHT);
  const double *raw_mean = dw_whatif_column (step, DW_WHATIF_COL_MEAN_TOK);
  const double *mask_n = dw_whatif_column (step, DW_WHATIF_COL_N);
  enum
  {
    AHEAD = 8
  };
  for (gsize row = 0; row < step->n_rows; row++)
    {
      const gboolean high = max_weight[row] > upper_r;
      const gboolean low = applied->icepop && min_weight[row] < lower_r;
      if (step->cut_count && row + AHEAD < step->n_rows)
        {
          if (max_weight[row + AHEAD] > upper_r)
            dw_whatif_query_row_prefetch (step, row + AHEAD, high_cut);
          if (applied->icepop && min_weight[row + AHEAD] < lower_r)
            dw_whatif_query_row_prefetch (step, row + AHEAD, low_cut);
        }
      if (!high && !low)
        {
          row_mean[row] = raw_mean[row];
          continue;
        }
      const gsize length = step->row_start[row + 1] - step->row_start[row];
      gsize kept_end
        = high ? dw_whatif_query_row_count_below (step, row, high_cut, high_log) : length;
      gsize kept_start = low ? dw_whatif_query_row_count_below (step, row, low_cut, low_log) : 0;
      kept_start = MIN (kept_start, kept_end);
      double sum = dw_whatif_query_row_weight_sum (step, row, kept_start, kept_end);
      if (!applied->icepop)
        sum += dw_whatif_times (upper_r, (double)(length - kept_end));
      row_mean[row] = dw_whatif_mean_row (step, sum, mask_n[row]);
    }
}

/* token level: sums of the applied weights over the step's sorted tokens */
static void
dw_whatif_applied_token_sums (const DwWhatifStep *step, const DwWhatifApplied *applied,
                              DwWhatifAppliedSums *out, gsize *low_position, gsize *high_position)
{
  const gsize n_tokens = step->n_tokens;
  const double upper_r = dw_whatif_round (step, applied->upper);
  const double lower_r = dw_whatif_round (step, applied->lower);
  const int weight = DW_WHATIF_Q_WEIGHT;
  /* [0, n_below): w < L; [high_position, n): w > U */
  const gsize n_below
    = dw_whatif_query_first_false (step, weight, DW_WHATIF_LT, lower_r, 0, n_tokens);
  const gsize high = dw_whatif_query_first_true (step, weight, DW_WHATIF_GT, upper_r, 0, n_tokens);
  const gsize kept_start = applied->icepop ? MIN (n_below, high) : 0;
  DwWhatifSum total = dw_whatif_range_sum (step, weight, kept_start, high);
  DwWhatifSum total_sq = dw_whatif_range_sum (step, DW_WHATIF_Q_WEIGHT_SQ, kept_start, high);
  out->n_below = (double)n_below;
  out->n_above = (double)(n_tokens - high);
  if (applied->icepop)
    {
      const gboolean some_out = kept_start > 0 || high < n_tokens;
      out->max = high > kept_start
                   ? dw_whatif_quantity (step, weight, dw_whatif_sorted_value (step, high - 1))
                   : 0.0;
      out->min = some_out || n_tokens == 0 ? 0.0 : step->min_weight;
    }
  else
    {
      total = dw_whatif_sum_add_value (total, dw_whatif_times (upper_r, out->n_above));
      total_sq = dw_whatif_sum_add_value (
        total_sq, dw_whatif_times (dw_whatif_round (step, upper_r * upper_r), out->n_above));
      out->max = fmin (step->max_weight, upper_r);
      out->min = fmin (step->min_weight, upper_r);
    }
  out->sum = dw_whatif_sum_value (total);
  out->sum_sq = dw_whatif_sum_value (total_sq);
  *low_position = n_below;
  *high_position = high;
}

/* token level: the metrics that come from the token sums, and the rows' means */
static void
dw_whatif_applied_token (const DwWhatifStep *step, DwWhatifList *list,
                         const DwWhatifApplied *applied, DwWhatifAppliedSums *sums,
                         double *row_mean, DwWhatifAppliedSeqStats *stats)
{
  memset (sums, 0, sizeof *sums);
  if (step->sketch)
    {
      dw_whatif_applied_token_sketch (step, applied, sums);
      dw_whatif_applied_token_rows_sketch (step, applied, row_mean, stats);
    }
  else
    {
      gsize low_position, high_position;
      dw_whatif_applied_token_sums (step, applied, sums, &low_position, &high_position);
      dw_whatif_applied_token_rows (step, applied, low_position, high_position, row_mean);
    }
  gboolean approximate_before = list->approximate;
  list->error = sums->max_error;
  dw_whatif_list_put (list, "rollout_is_max", sums->max);
  list->error = sums->min_error;
  dw_whatif_list_put (list, "rollout_is_min", sums->min);
  list->approximate = approximate_before;
  if (applied->icepop)
    {
      list->error = (sums->n_below_error + sums->n_above_error) / step->mask_count;
      dw_whatif_list_put (list, "rollout_is_oob_ratio",
                          dw_whatif_mean_batch (step, sums->n_below + sums->n_above));
    }
  list->error = sums->n_above_error / step->mask_count;
  dw_whatif_list_put (list, "rollout_is_ratio_fraction_high",
                      dw_whatif_mean_batch (step, sums->n_above));
  list->error = sums->n_below_error / step->mask_count;
  dw_whatif_list_put (list, "rollout_is_ratio_fraction_low",
                      dw_whatif_mean_batch (step, sums->n_below));
}

/* sequence level: one applied weight per row */
static void
dw_whatif_applied_rows (const DwWhatifStep *step, DwWhatifList *list,
                        const DwWhatifApplied *applied, double *sum, double *sum_sq,
                        double *row_mean)
{
  const double upper_r = dw_whatif_round (step, applied->upper);
  const double lower_r = dw_whatif_round (step, applied->lower);
  const double *raw = dw_whatif_column (step, DW_WHATIF_COL_WEIGHT_SEQ);
  const double *valid = dw_whatif_column (step, DW_WHATIF_COL_VALID);
  double n_out = 0;
  for (gsize row = 0; row < step->n_rows; row++)
    {
      double weight;
      if (applied->icepop)
        {
          gboolean inside = raw[row] >= lower_r && raw[row] <= upper_r;
          weight = inside ? raw[row] : 0.0;
          n_out += inside ? 0.0 : valid[row];
        }
      else
        weight = raw[row] > upper_r ? upper_r : raw[row];
      double row_sum = 0;
      dw_whatif_add_repeated (step, &row_sum, weight, valid[row]);
      dw_whatif_add_repeated (step, sum, weight, valid[row]);
      dw_whatif_add_repeated (step, sum_sq, dw_whatif_round (step, weight * weight), valid[row]);
      row_mean[row]
        = dw_whatif_mean_row (step, row_sum, dw_whatif_cell (step, DW_WHATIF_COL_N, row));
    }
  if (applied->icepop)
    dw_whatif_list_put (list, "rollout_is_oob_ratio", dw_whatif_mean_batch (step, n_out));
  /* max, min and the ratio fractions come from the rows' log-ratio sums, as before v0.8.0 */
  const DwWhatifLevelStat *stat = &step->level_stat[DW_LEVEL_SEQUENCE];
  const double *log_ratio = dw_whatif_column (step, DW_WHATIF_COL_LOG_SEQ);
  const double log_upper = (float)log ((float)applied->upper);
  const double log_lower = (float)log ((float)applied->lower);
  double n_high = 0, n_low = 0;
  for (gsize row = 0; row < step->n_rows; row++)
    {
      n_high += log_ratio[row] > log_upper;
      n_low += log_ratio[row] < log_lower;
    }
  dw_whatif_list_put (
    list, "rollout_is_max",
    dw_whatif_round (step, dw_whatif_exp (step, fmin (stat->log_max, DW_WHATIF_SAFETY_BOUND))));
  dw_whatif_list_put (list, "rollout_is_min",
                      dw_whatif_round (step, dw_whatif_exp (step, stat->log_min)));
  dw_whatif_list_put (list, "rollout_is_ratio_fraction_high", n_high / (double)step->n_rows);
  dw_whatif_list_put (list, "rollout_is_ratio_fraction_low", n_low / (double)step->n_rows);
}

#define DW_WHATIF_APPLIED_STACK_ROWS 1024

/* the IS metrics of verl v0.8.0 / v0.9.0 (TIS or IcePop); FALSE when verl raises: with every
 * applied weight zero (IcePop bounds no token falls in), the ESS's final reciprocal is Python's
 * 1.0 / 0.0 */
gboolean
dw_whatif_applied_evaluate (const DwWhatifStep *step, DwWhatifList *list,
                            const DwWhatifApplied *applied)
{
  /* the rows' means: on the stack for the usual step (a slider move evaluates thousands, each
   * of a few hundred rows, a thousand at most) */
  double on_stack[DW_WHATIF_APPLIED_STACK_ROWS];
  const gsize n_rows = MAX (step->n_rows, 1);
  g_autofree double *on_heap
    = n_rows > DW_WHATIF_APPLIED_STACK_ROWS ? g_new (double, n_rows) : NULL;
  double *row_mean = on_heap != NULL ? on_heap : on_stack;
  DwWhatifAppliedSums sums = { 0 };
  gboolean approximate_before = list->approximate;
  /* a compact step's token level estimates the rows' means, with error bounds, and takes their
   * statistics as it goes; the other rows' means are exact, their statistics taken after */
  const gboolean token_sketch = applied->level == DW_LEVEL_TOKEN && step->sketch != NULL;
  DwWhatifAppliedSeqStats stats = dw_whatif_applied_seq_stats (step, applied, row_mean);
  if (applied->level == DW_LEVEL_TOKEN)
    {
      list->approximate |= !step->weight_monotone;
      dw_whatif_applied_token (step, list, applied, &sums, row_mean, &stats);
    }
  else
    dw_whatif_applied_rows (step, list, applied, &sums.sum, &sums.sum_sq, row_mean);
  /* std and ESS of u = clamp(w, 0, U) = w */
  const double mean = dw_whatif_mean_batch (step, sums.sum);
  const double denominator = dw_whatif_round (step, mean + DW_WHATIF_MEAN_EPSILON);
  if (dw_whatif_mean_batch (step, sums.sum_sq / (denominator * denominator)) == 0.0
      && sums.sum_sq_error == 0)
    return FALSE;
  list->error = sums.sum_error / step->mask_count;
  dw_whatif_list_put (list, "rollout_is_mean", mean);
  dw_whatif_list_put_spread (step, list, "rollout_is", sums.sum, sums.sum_sq, sums.sum_error,
                             sums.sum_sq_error);
  if (!token_sketch)
    dw_whatif_kernel_applied_seq_stats (&stats);
  dw_whatif_applied_seq (list, applied, &stats);
  if (applied->batch_normalize)
    {
      list->error = sums.sum_error / step->mask_count;
      dw_whatif_applied_batch_norm (step, list, applied, mean, row_mean);
    }
  list->approximate = approximate_before;
  return TRUE;
}
