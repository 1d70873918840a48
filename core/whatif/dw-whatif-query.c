/* dw-whatif-query.c — threshold-dependent queries on the statistics of one step
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every count and sum that depends on a threshold is answered from the sorted valid-token
 * log-ratios: a binary search finds where a monotone quantity crosses the bound, and the block
 * prefix sums (double-double) give the exactly rounded sum of the quantity on either side. The
 * non-monotone middle of k2/k3 (float32 rounding noise near ℓ = 0) is kept sorted apart
 * (DwWhatifShape). Per-row counts come from the row-sorted copy of the same values.
 */
#include "config.h"

#include "dw-whatif-private.h"

#include <stdlib.h>
#include <string.h>

static inline gboolean
dw_whatif_query_compare (double value, DwWhatifCompare op, double bound)
{
  switch (op)
    {
    case DW_WHATIF_LT:
      return value < bound;
    case DW_WHATIF_LE:
      return value <= bound;
    case DW_WHATIF_GT:
      return value > bound;
    default:
      return value >= bound;
    }
}

gsize
dw_whatif_query_first_true (const DwWhatifStep *step, int quantity, DwWhatifCompare op,
                            double bound, gsize low, gsize high)
{
  while (low < high)
    {
      gsize middle = low + (high - low) / 2;
      double value = dw_whatif_quantity (step, quantity, dw_whatif_sorted_value (step, middle));
      if (dw_whatif_query_compare (value, op, bound))
        high = middle;
      else
        low = middle + 1;
    }
  return low;
}

gsize
dw_whatif_query_first_false (const DwWhatifStep *step, int quantity, DwWhatifCompare op,
                             double bound, gsize low, gsize high)
{
  while (low < high)
    {
      gsize middle = low + (high - low) / 2;
      double value = dw_whatif_quantity (step, quantity, dw_whatif_sorted_value (step, middle));
      if (dw_whatif_query_compare (value, op, bound))
        low = middle + 1;
      else
        high = middle;
    }
  return low;
}

/* ------------------------------------------------------------------------------------------ */
/* per-row counts                                                                              */

/* The bounds usually cut a few tokens off the tails of a row, so both ends are found by galloping
 * from the row's ends (a few probes in the row's first and last cache lines) before a binary
 * search over the remaining interval: a plain binary search over a 2048-token row misses the
 * cache on most of its 11 probes. */
gsize
dw_whatif_query_row_count_between (const DwWhatifStep *step, gsize row, double low, double high)
{
  const gsize row_begin = step->row_start[row], row_end = step->row_start[row + 1];

  /* first ≥ low: every index below `left` has ℓ < low, the answer is in [left, right] */
  gsize left = row_begin, right = row_end, stride = 1;
  for (gsize index = row_begin; index < row_end; stride *= 2)
    {
      if (dw_whatif_row_value (step, index) >= low)
        {
          right = index;
          break;
        }
      left = index + 1;
      index = row_begin + stride;
    }
  while (left < right)
    {
      gsize middle = left + (right - left) / 2;
      if (dw_whatif_row_value (step, middle) < low)
        left = middle + 1;
      else
        right = middle;
    }
  const gsize first = left;

  /* first > high: every index from `right` on has ℓ > high, the answer is in [left, right] */
  left = first;
  right = row_end;
  stride = 1;
  while (right > first)
    {
      gsize probe = row_end - first >= stride ? row_end - stride : first;
      if (dw_whatif_row_value (step, probe) <= high)
        {
          left = probe + 1;
          break;
        }
      right = probe;
      if (probe == first)
        break;
      stride *= 2;
    }
  while (left < right)
    {
      gsize middle = left + (right - left) / 2;
      if (dw_whatif_row_value (step, middle) <= high)
        left = middle + 1;
      else
        right = middle;
    }
  return left - first;
}

/* The count table turns a row count into a search over one short window of the row: tokens below
 * cut_value[c] ≤ x are counted by the table, tokens from cut_value[c + 1] > x on are not, and the
 * row's tokens between the two cuts (about row length / N_CUTS) are searched. The window's
 * position comes from the table without probing the row, so the rows' windows are fetched
 * independently of one another rather than by a chain of dependent probes. */

int
dw_whatif_query_cut_index (const DwWhatifStep *step, double x)
{
  int low = 0, high = DW_WHATIF_N_CUTS;
  while (low < high)
    {
      int middle = (low + high) / 2;
      if (step->cut_value[middle] <= x)
        low = middle + 1;
      else
        high = middle;
    }
  return low - 1;
}

gsize
dw_whatif_query_row_count_cut (const DwWhatifStep *step, gsize row, int cut, double x,
                               gboolean inclusive)
{
  if (cut < 0)
    return 0;
  const gsize base = step->row_start[row];
  gsize low = step->cut_count[(gsize)cut * step->n_rows + row];
  gsize high = step->cut_count[(gsize)(cut + 1) * step->n_rows + row];
  while (low < high)
    {
      gsize middle = low + (high - low) / 2;
      double value = dw_whatif_row_value (step, base + middle);
      if (inclusive ? value <= x : value < x)
        low = middle + 1;
      else
        high = middle;
    }
  return low;
}

gsize
dw_whatif_query_row_count_below (const DwWhatifStep *step, gsize row, int cut, double x)
{
  if (step->cut_count)
    return dw_whatif_query_row_count_cut (step, row, cut, x, FALSE);
  gsize low = step->row_start[row], high = step->row_start[row + 1];
  const gsize start = low;
  while (low < high)
    {
      gsize middle = low + (high - low) / 2;
      if (dw_whatif_row_value (step, middle) < x)
        low = middle + 1;
      else
        high = middle;
    }
  return low - start;
}

void
dw_whatif_query_row_prefetch (const DwWhatifStep *step, gsize row, int cut)
{
  if (cut < 0)
    return;
  const gsize base = step->row_start[row];
  gsize low = step->cut_count[(gsize)cut * step->n_rows + row];
  gsize high = step->cut_count[(gsize)(cut + 1) * step->n_rows + row];
  if (high <= low)
    return;
  if (step->f32)
    {
      __builtin_prefetch (&step->row_sorted_f[base + low]);
      __builtin_prefetch (&step->row_sorted_f[base + high - 1]);
    }
  else
    {
      __builtin_prefetch (&step->row_sorted_d[base + low]);
      __builtin_prefetch (&step->row_sorted_d[base + high - 1]);
    }
}

double
dw_whatif_query_row_weight_sum (const DwWhatifStep *step, gsize row, gsize start, gsize end)
{
  const gsize base = step->row_start[row];
  if (end <= start)
    return 0.0;
  if (step->row_weight_exact[row])
    {
      const double *sum = step->row_weight_sum + base;
      return sum[end - 1] - (start > 0 ? sum[start - 1] : 0.0);
    }
  DwWhatifSum sum = { 0, 0 };
  for (gsize index = base + start; index < base + end; index++)
    sum = dw_whatif_sum_add_value (
      sum, dw_whatif_quantity (step, DW_WHATIF_Q_WEIGHT, dw_whatif_row_value (step, index)));
  return dw_whatif_sum_value (sum);
}

/* ------------------------------------------------------------------------------------------ */
/* token-level IS weights                                                                      */

/* dw_whatif_query_clamp_weights on a compact step */
static void
dw_whatif_query_clamp_weights_sketch (const DwWhatifStep *step, double lower, double upper,
                                      DwWhatifClamped *out)
{
  const double n_tokens = (double)step->n_tokens;
  const int weight = DW_WHATIF_Q_WEIGHT, weight_sq = DW_WHATIF_Q_WEIGHT_SQ;
  DwWhatifSketchPart below, at_most;
  dw_whatif_sketch_prefix (step, weight, DW_WHATIF_LT, lower, &below);
  dw_whatif_sketch_prefix (step, weight, DW_WHATIF_LE, upper, &at_most);
  memset (out, 0, sizeof *out);
  out->n_low = below.count;
  out->n_low_error = below.count_error;
  out->n_high = n_tokens - at_most.count;
  out->n_high_error = at_most.count_error;
  out->n_kept = MAX (0.0, at_most.count - below.count);
  out->n_kept_error = below.count_error + at_most.count_error;
  const double lower_sq = dw_whatif_round (step, lower * lower);
  const double upper_sq = dw_whatif_round (step, upper * upper);
  if (lower > upper) /* every token contributes upper (torch.clamp) */
    {
      out->sum = dw_whatif_times (upper, n_tokens);
      out->sum_sq = dw_whatif_times (upper_sq, n_tokens);
      return;
    }
  out->sum = dw_whatif_times (lower, out->n_low) + (at_most.sum[weight] - below.sum[weight])
             + dw_whatif_times (upper, out->n_high);
  out->sum_sq = dw_whatif_times (lower_sq, out->n_low)
                + (at_most.sum[weight_sq] - below.sum[weight_sq])
                + dw_whatif_times (upper_sq, out->n_high);
  out->sum_error = below.sum_error[weight] + at_most.sum_error[weight]
                   + dw_whatif_times (lower, below.count_error)
                   + dw_whatif_times (upper, at_most.count_error);
  out->sum_sq_error = below.sum_error[weight_sq] + at_most.sum_error[weight_sq]
                      + dw_whatif_times (lower_sq, below.count_error)
                      + dw_whatif_times (upper_sq, at_most.count_error);
}

void
dw_whatif_query_clamp_weights (const DwWhatifStep *step, double lower, double upper,
                               DwWhatifClamped *out)
{
  if (step->sketch)
    {
      dw_whatif_query_clamp_weights_sketch (step, lower, upper, out);
      return;
    }
  memset (out, 0, sizeof *out);
  const gsize n_tokens = step->n_tokens;
  const int weight = DW_WHATIF_Q_WEIGHT;
  gsize n_below = dw_whatif_query_first_false (step, weight, DW_WHATIF_LT, lower, 0, n_tokens);
  gsize n_above
    = n_tokens - dw_whatif_query_first_true (step, weight, DW_WHATIF_GT, upper, 0, n_tokens);
  gsize low_end = n_below, high_start = MAX (n_below, n_tokens - n_above);
  if (lower > upper)
    low_end = high_start = 0;

  DwWhatifSum sum = dw_whatif_range_sum (step, weight, low_end, high_start);
  DwWhatifSum sum_sq = dw_whatif_range_sum (step, DW_WHATIF_Q_WEIGHT_SQ, low_end, high_start);
  if (low_end > 0)
    {
      sum = dw_whatif_sum_add_value (sum, lower * (double)low_end);
      sum_sq
        = dw_whatif_sum_add_value (sum_sq, dw_whatif_round (step, lower * lower) * (double)low_end);
    }
  if (n_tokens > high_start)
    {
      sum = dw_whatif_sum_add_value (sum, upper * (double)(n_tokens - high_start));
      sum_sq = dw_whatif_sum_add_value (sum_sq, dw_whatif_round (step, upper * upper)
                                                  * (double)(n_tokens - high_start));
    }
  out->sum = dw_whatif_sum_value (sum);
  out->sum_sq = dw_whatif_sum_value (sum_sq);
  out->n_high = (double)n_above;
  out->n_low = (double)n_below;

  gsize kept_end = dw_whatif_query_first_false (step, weight, DW_WHATIF_LE, upper, 0, n_tokens);
  gsize kept_start = dw_whatif_query_first_true (step, weight, DW_WHATIF_GE, lower, 0, n_tokens);
  out->n_kept = kept_end > kept_start ? (double)(kept_end - kept_start) : 0.0;
}

double
dw_whatif_query_truncated_sum (const DwWhatifStep *step, double cap, double *error)
{
  const gsize n_tokens = step->n_tokens;
  *error = 0;
  if (step->sketch)
    {
      DwWhatifSketchPart at_most;
      dw_whatif_sketch_prefix (step, DW_WHATIF_Q_WEIGHT, DW_WHATIF_LE, cap, &at_most);
      *error = at_most.sum_error[DW_WHATIF_Q_WEIGHT] + dw_whatif_times (cap, at_most.count_error);
      return at_most.sum[DW_WHATIF_Q_WEIGHT]
             + dw_whatif_times (cap, (double)n_tokens - at_most.count);
    }
  gsize start
    = dw_whatif_query_first_true (step, DW_WHATIF_Q_WEIGHT, DW_WHATIF_GT, cap, 0, n_tokens);
  DwWhatifSum sum = dw_whatif_range_sum (step, DW_WHATIF_Q_WEIGHT, 0, start);
  if (n_tokens > start)
    sum = dw_whatif_sum_add_value (sum, cap * (double)(n_tokens - start));
  return dw_whatif_sum_value (sum);
}

double
dw_whatif_query_count_log_below (const DwWhatifStep *step, double bound, double *error)
{
  *error = 0;
  if (step->sketch)
    {
      DwWhatifSketchPart below;
      dw_whatif_sketch_prefix (step, DW_WHATIF_Q_RAW, DW_WHATIF_LT, bound, &below);
      *error = below.count_error;
      return below.count;
    }
  return (double)dw_whatif_query_first_false (step, DW_WHATIF_Q_RAW, DW_WHATIF_LT, bound, 0,
                                              step->n_tokens);
}

/* ------------------------------------------------------------------------------------------ */
/* token-level RS options                                                                      */

/* the tokens of a compact step whose raw ℓ lies in [low, high]: their count and sums (from the
 * sketch's prefixes, with error bounds) */
void
dw_whatif_query_sketch_between (const DwWhatifStep *step, double low, double high,
                                DwWhatifSketchPart *inside)
{
  DwWhatifSketchPart below, at_most;
  dw_whatif_sketch_prefix (step, DW_WHATIF_Q_RAW, DW_WHATIF_LT, low, &below);
  dw_whatif_sketch_prefix (step, DW_WHATIF_Q_RAW, DW_WHATIF_LE, high, &at_most);
  memset (inside, 0, sizeof *inside);
  if (!(low <= high))
    return;
  inside->count = MAX (0.0, at_most.count - below.count);
  inside->count_error = at_most.count_error + below.count_error;
  for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
    {
      inside->sum[quantity] = at_most.sum[quantity] - below.sum[quantity];
      inside->sum_error[quantity] = at_most.sum_error[quantity] + below.sum_error[quantity];
    }
}

/* The last boundary dw_whatif_query_k_boundary found, per side and thread. It depends on the
 * step only through its dtype, and a move asks every step the same: one bisection (two sides of
 * ~60 exponentials) a move instead of one a step, a fifth of a token_k3 bound's move. */
typedef struct
{
  gboolean valid, f32;
  int quantity;
  double upper, boundary;
} DwWhatifKBoundary;

static _Thread_local DwWhatifKBoundary dw_whatif_k_boundary_last[2];

/* the boundary of {x : k(x) ≤ upper} on one side of 0 (@sign −1: the least x ≤ 0, +1: the
 * greatest x ≥ 0), by bisection over doubles (k falls towards 0 and rises after it) */
static double
dw_whatif_query_k_boundary (const DwWhatifStep *step, int quantity, double upper, int sign)
{
  DwWhatifKBoundary *last = &dw_whatif_k_boundary_last[sign > 0];
  if (last->valid && last->f32 == step->f32 && last->quantity == quantity
      && memcmp (&last->upper, &upper, sizeof upper) == 0)
    return last->boundary;
  last->valid = TRUE;
  last->f32 = step->f32;
  last->quantity = quantity;
  last->upper = upper;
  const double far = sign * (DW_WHATIF_SAFETY_BOUND + 1);
  if (dw_whatif_quantity (step, quantity, far) <= upper)
    return last->boundary = sign * INFINITY;
  double inside = 0, outside = far;
  for (int iteration = 0; iteration < 200; iteration++)
    {
      double middle = inside + (outside - inside) / 2;
      if (middle == inside || middle == outside)
        break;
      if (dw_whatif_quantity (step, quantity, middle) <= upper)
        inside = middle;
      else
        outside = middle;
    }
  return last->boundary = inside;
}

/* fills @out from the tokens whose raw ℓ is in [low, high] (kept; their statistic is @quantity,
 * negated for k1 = −ℓ̃); tokens below @low count @below_value, above @high @above_value (the
 * clamp bounds of the std), and the error bounds use the clamp range's largest magnitude */
static void
dw_whatif_query_token_sketch (const DwWhatifStep *step, double low, double high, int quantity,
                              int quantity_sq, gboolean negate, double below_value,
                              double above_value, DwWhatifTokenOption *out)
{
  const double n_tokens = (double)step->n_tokens;
  DwWhatifSketchPart inside, below;
  dw_whatif_query_sketch_between (step, low, high, &inside);
  dw_whatif_sketch_prefix (step, DW_WHATIF_Q_RAW, DW_WHATIF_LT, low, &below);
  memset (out, 0, sizeof *out);
  out->kept_low = low;
  out->kept_high = high;
  out->n_kept_estimate = inside.count;
  out->count_error = inside.count_error;
  const double n_below = below.count, n_above = MAX (0.0, n_tokens - inside.count - n_below);
  out->n_low = n_above;  /* k1's low side (x = −ℓ̃ < lower) is ℓ's high side */
  out->n_high = n_below; /* k1 = −ℓ̃ > upper ⇔ ℓ below low */
  const double sum_inside = negate ? -inside.sum[quantity] : inside.sum[quantity];
  out->sum
    = sum_inside + dw_whatif_times (below_value, n_below) + dw_whatif_times (above_value, n_above);
  out->sum_sq = inside.sum[quantity_sq]
                + dw_whatif_times (dw_whatif_round (step, below_value * below_value), n_below)
                + dw_whatif_times (dw_whatif_round (step, above_value * above_value), n_above);
  const double magnitude = MAX (fabs (below_value), fabs (above_value));
  const double count_error = inside.count_error + below.count_error;
  out->sum_error = inside.sum_error[quantity] + dw_whatif_times (magnitude, count_error);
  out->sum_sq_error
    = inside.sum_error[quantity_sq] + dw_whatif_times (magnitude * magnitude, count_error);
  out->n_kept = (gsize)llround (inside.count);
  out->approx = count_error != 0;
}

void
dw_whatif_query_token_k1 (const DwWhatifStep *step, double lower, double upper,
                          DwWhatifTokenOption *out)
{
  if (step->sketch)
    {
      /* lower ≤ −ℓ̃ ≤ upper ⇔ −upper ≤ ℓ ≤ −lower, the safety clamp aside */
      double low = -upper <= -DW_WHATIF_SAFETY_BOUND ? -INFINITY : -upper;
      double high = -lower >= DW_WHATIF_SAFETY_BOUND ? INFINITY : -lower;
      if (lower > upper) /* min(max(x, lower), upper) = upper for every token: nothing kept */
        {
          DwWhatifTokenOption counts;
          dw_whatif_query_token_sketch (step, low, INFINITY, DW_WHATIF_Q_LOG, DW_WHATIF_Q_LOG_SQ,
                                        TRUE, upper, lower, &counts);
          DwWhatifTokenOption high_side;
          dw_whatif_query_token_sketch (step, -INFINITY, high, DW_WHATIF_Q_LOG, DW_WHATIF_Q_LOG_SQ,
                                        TRUE, upper, lower, &high_side);
          memset (out, 0, sizeof *out);
          out->kept_low = 1;
          out->kept_high = 0;
          out->n_high = counts.n_high;
          out->n_low = high_side.n_low;
          out->count_error = counts.count_error + high_side.count_error;
          out->sum = dw_whatif_times (upper, (double)step->n_tokens);
          out->sum_sq
            = dw_whatif_times (dw_whatif_round (step, upper * upper), (double)step->n_tokens);
          out->approx = out->count_error != 0;
          return;
        }
      dw_whatif_query_token_sketch (step, low, high, DW_WHATIF_Q_LOG, DW_WHATIF_Q_LOG_SQ, TRUE,
                                    upper, lower, out);
      return;
    }

  /* x = −ℓ̃ is non-increasing in the sorted order */
  const gsize n_tokens = step->n_tokens;
  const int log = DW_WHATIF_Q_LOG;
  gsize n_above = dw_whatif_query_first_false (step, log, DW_WHATIF_LT, -upper, 0, n_tokens);
  gsize n_below
    = n_tokens - dw_whatif_query_first_true (step, log, DW_WHATIF_GT, -lower, 0, n_tokens);
  gsize below_start = n_tokens - n_below;
  gsize high_end = MIN (n_above, below_start);
  gsize middle_start = n_above, middle_end = MAX (n_above, below_start);
  gsize n_clamped_low = n_below;
  if (lower > upper) /* min(max(x, lower), upper) = upper for every token */
    {
      high_end = middle_start = middle_end = n_tokens;
      n_clamped_low = 0;
    }

  DwWhatifSum sum
    = dw_whatif_sum_negate (dw_whatif_range_sum (step, log, middle_start, middle_end));
  DwWhatifSum sum_sq = dw_whatif_range_sum (step, DW_WHATIF_Q_LOG_SQ, middle_start, middle_end);
  if (n_clamped_low > 0)
    {
      sum = dw_whatif_sum_add_value (sum, lower * (double)n_clamped_low);
      sum_sq = dw_whatif_sum_add_value (sum_sq, dw_whatif_round (step, lower * lower)
                                                  * (double)n_clamped_low);
    }
  if (high_end > 0)
    {
      sum = dw_whatif_sum_add_value (sum, upper * (double)high_end);
      sum_sq = dw_whatif_sum_add_value (sum_sq,
                                        dw_whatif_round (step, upper * upper) * (double)high_end);
    }
  out->sum = dw_whatif_sum_value (sum);
  out->sum_sq = dw_whatif_sum_value (sum_sq);
  out->n_high = (double)n_above;
  out->n_low = (double)n_below;

  /* x ≥ lower ⇔ ℓ̃ ≤ −lower: a prefix; x ≤ upper ⇔ ℓ̃ ≥ −upper: a suffix */
  gsize prefix_end = dw_whatif_query_first_false (step, log, DW_WHATIF_LE, -lower, 0, n_tokens);
  gsize suffix_start = dw_whatif_query_first_true (step, log, DW_WHATIF_GE, -upper, 0, n_tokens);
  out->kept_start = suffix_start;
  out->kept_end = prefix_end > suffix_start ? prefix_end : suffix_start;
  out->n_kept = out->kept_end - out->kept_start;
  out->approx = FALSE;
}

static inline double
dw_whatif_query_core_at (const DwWhatifShape *shape, gsize index)
{
  return shape->core_f ? (double)shape->core_f[index] : shape->core[index];
}

/* Σ of the core's sorted values [0, end) (@squares: of R(v²)) */
static DwWhatifSum
dw_whatif_query_core_sum (const DwWhatifStep *step, const DwWhatifShape *shape, gsize end,
                          gboolean squares)
{
  const DwWhatifSum *prefix = squares ? shape->core_prefix_sq : shape->core_prefix;
  DwWhatifSum sum = prefix[end / DW_WHATIF_BLOCK];
  for (gsize index = (end / DW_WHATIF_BLOCK) * DW_WHATIF_BLOCK; index < end; index++)
    {
      double value = dw_whatif_query_core_at (shape, index);
      sum = dw_whatif_sum_add_value (sum, squares ? dw_whatif_round (step, value * value) : value);
    }
  return sum;
}

/* k2/k3 ≤ upper: the statistic is non-increasing on [0, end_left), non-decreasing on
 * [start_right, N) (sorted ℓ) and arbitrary in between (float32 rounding noise of k3 near ℓ = 0),
 * where its values are kept sorted: counts and sums are exact; the kept set is an interval of
 * sorted positions only when no core value exceeds upper (out->approx otherwise) */
void
dw_whatif_query_token_k23 (const DwWhatifStep *step, int k, double upper, DwWhatifTokenOption *out)
{
  if (step->sketch)
    {
      const int quantity = k == 2 ? DW_WHATIF_Q_K2 : DW_WHATIF_Q_K3;
      double low = 1, high = 0; /* NaN bound: nothing kept */
      if (!isnan (upper))
        {
          low = dw_whatif_query_k_boundary (step, quantity, upper, -1);
          high = dw_whatif_query_k_boundary (step, quantity, upper, +1);
        }
      dw_whatif_query_token_sketch (step, low, high, quantity,
                                    k == 2 ? DW_WHATIF_Q_K2_SQ : DW_WHATIF_Q_K3_SQ, FALSE, upper,
                                    upper, out);
      if (k == 3) /* negative k3 (always kept) is clamped to 0 by the std's [0, upper] */
        {
          out->sum -= step->neg_k3_sum;
          out->sum_sq -= step->neg_k3_sq;
        }
      /* where k is not monotone (rounding noise near ℓ = 0), tokens inside the core's ℓ range
       * may be kept or not whatever the interval says */
      const int shape_index = k - 2;
      const gboolean cut_in_core
        = step->core_n[shape_index] > 0
          && (upper < step->core_max[shape_index]
              || (low >= step->core_low[shape_index] && low <= step->core_high[shape_index])
              || (high >= step->core_low[shape_index] && high <= step->core_high[shape_index]));
      if (cut_in_core)
        {
          const double per_token = fabs (upper) + fabs (step->min_k[k - 1]);
          out->count_error += (double)step->core_n[shape_index];
          out->sum_error += (double)step->core_n[shape_index] * per_token;
          out->sum_sq_error += (double)step->core_n[shape_index] * per_token * per_token;
          out->approx = TRUE;
        }
      /* both sides of the kept interval are above the bound */
      out->n_high = (double)step->n_tokens - out->n_kept_estimate;
      out->n_low = 0;
      return;
    }

  const gsize n_tokens = step->n_tokens;
  const DwWhatifShape *shape = k == 2 ? &step->shape_k2 : &step->shape_k3;
  const int quantity = k == 2 ? DW_WHATIF_Q_K2 : DW_WHATIF_Q_K3;
  const int quantity_sq = k == 2 ? DW_WHATIF_Q_K2_SQ : DW_WHATIF_Q_K3_SQ;
  const gsize end_left = shape->end_left, start_right = shape->start_right;
  const gboolean upper_nan = isnan (upper);
  gsize left_start = dw_whatif_query_first_false (step, quantity, DW_WHATIF_GT, upper, 0, end_left);
  gsize right_end
    = dw_whatif_query_first_true (step, quantity, DW_WHATIF_GT, upper, start_right, n_tokens);

  /* core values ≤ upper: a prefix of the sorted core */
  gsize low = 0, high = shape->core_n;
  while (low < high)
    {
      gsize middle = low + (high - low) / 2;
      if (dw_whatif_query_core_at (shape, middle) <= upper)
        low = middle + 1;
      else
        high = middle;
    }
  gsize core_kept = upper_nan ? shape->core_n : low;
  gsize n_above = left_start + (n_tokens - right_end) + (shape->core_n - core_kept);

  DwWhatifSum sum
    = dw_whatif_sum_add (dw_whatif_range_sum (step, quantity, left_start, end_left),
                         dw_whatif_range_sum (step, quantity, start_right, right_end));
  DwWhatifSum sum_sq
    = dw_whatif_sum_add (dw_whatif_range_sum (step, quantity_sq, left_start, end_left),
                         dw_whatif_range_sum (step, quantity_sq, start_right, right_end));
  sum = dw_whatif_sum_add (sum, dw_whatif_query_core_sum (step, shape, core_kept, FALSE));
  sum_sq = dw_whatif_sum_add (sum_sq, dw_whatif_query_core_sum (step, shape, core_kept, TRUE));
  if (k == 3)
    {
      sum = dw_whatif_sum_add_value (sum, -step->neg_k3_sum);
      sum_sq = dw_whatif_sum_add_value (sum_sq, -step->neg_k3_sq);
    }
  if (n_above > 0)
    {
      sum = dw_whatif_sum_add_value (sum, upper * (double)n_above);
      sum_sq
        = dw_whatif_sum_add_value (sum_sq, dw_whatif_round (step, upper * upper) * (double)n_above);
    }
  out->sum = dw_whatif_sum_value (sum);
  out->sum_sq = dw_whatif_sum_value (sum_sq);
  out->n_high = (double)n_above;
  out->n_low = 0;
  out->n_kept = upper_nan ? 0 : n_tokens - n_above;
  out->approx = !upper_nan && core_kept < shape->core_n;
  out->kept_start = upper_nan ? 0 : left_start;
  out->kept_end = upper_nan ? 0 : right_end;
}

/* ------------------------------------------------------------------------------------------ */
/* per-row sorted k values                                                                     */

static int
dw_whatif_query_compare_doubles (const void *a, const void *b)
{
  double left = *(const double *)a, right = *(const double *)b;
  return left < right ? -1 : left > right;
}

/* insertion sort of @values that gives up (FALSE, @values still a permutation) after @budget
 * moves */
static gboolean
dw_whatif_query_insertion_sort (double *values, gsize n, gsize budget)
{
  gsize moves = 0;
  for (gsize index = 1; index < n; index++)
    {
      double value = values[index];
      gsize slot = index;
      while (slot > 0 && values[slot - 1] > value)
        {
          values[slot] = values[slot - 1];
          slot--;
          if (++moves > budget)
            {
              values[slot] = value;
              return FALSE;
            }
        }
      values[slot] = value;
    }
  return TRUE;
}

/* the k values (@quantity) of row @row sorted into @out, @scratch a buffer of the row's length.
 * k is non-increasing in ℓ below 0 and non-decreasing above, but for rounding noise near 0: the
 * two runs (the first reversed) are nearly sorted, so they are finished by insertion sort and
 * merged in linear time; a row whose runs are far from sorted is sorted with qsort */
static void
dw_whatif_query_row_sort_k (const DwWhatifStep *step, int quantity, gsize row, double *scratch,
                            double *out)
{
  const gsize start = step->row_start[row], row_length = step->row_start[row + 1] - start;
  gsize n_negative = 0;
  while (n_negative < row_length && dw_whatif_row_value (step, start + n_negative) < 0)
    n_negative++;
  for (gsize index = 0; index < n_negative; index++)
    scratch[index] = dw_whatif_quantity (
      step, quantity, dw_whatif_row_value (step, start + n_negative - 1 - index));
  for (gsize index = n_negative; index < row_length; index++)
    scratch[index] = dw_whatif_quantity (step, quantity, dw_whatif_row_value (step, start + index));
  if (!dw_whatif_query_insertion_sort (scratch, n_negative, 8 * row_length)
      || !dw_whatif_query_insertion_sort (scratch + n_negative, row_length - n_negative,
                                          8 * row_length))
    {
      memcpy (out, scratch, row_length * sizeof (double));
      qsort (out, row_length, sizeof (double), dw_whatif_query_compare_doubles);
      return;
    }
  gsize left = 0, right = n_negative, written = 0;
  while (left < n_negative && right < row_length)
    out[written++] = scratch[right] < scratch[left] ? scratch[right++] : scratch[left++];
  while (left < n_negative)
    out[written++] = scratch[left++];
  while (right < row_length)
    out[written++] = scratch[right++];
}

/* builds (once per step and k) every row's sorted k values; called with row_k_lock held */
static void
dw_whatif_query_build_row_k (DwWhatifStep *step, int k)
{
  const int quantity = k == 2 ? DW_WHATIF_Q_K2 : DW_WHATIF_Q_K3;
  gsize max_length = 0;
  for (gsize row = 0; row < step->n_rows; row++)
    max_length = MAX (max_length, step->row_start[row + 1] - step->row_start[row]);
  double *scratch = g_new (double, max_length ? max_length : 1);
  g_clear_pointer (&step->row_k_f, g_free);
  g_clear_pointer (&step->row_k_d, g_free);
  if (step->f32)
    {
      double *sorted = g_new (double, max_length ? max_length : 1);
      float *values = g_new (float, step->n_tokens ? step->n_tokens : 1);
      for (gsize row = 0; row < step->n_rows; row++)
        {
          dw_whatif_query_row_sort_k (step, quantity, row, scratch, sorted);
          for (gsize index = step->row_start[row]; index < step->row_start[row + 1]; index++)
            values[index] = (float)sorted[index - step->row_start[row]]; /* float32: exact */
        }
      g_free (sorted);
      step->row_k_f = values;
    }
  else
    {
      double *values = g_new (double, step->n_tokens ? step->n_tokens : 1);
      for (gsize row = 0; row < step->n_rows; row++)
        dw_whatif_query_row_sort_k (step, quantity, row, scratch, values + step->row_start[row]);
      step->row_k_d = values;
    }
  step->row_k_which = k;
  g_free (scratch);
}

/* for a k2/k3 option whose kept set is not an interval of sorted ℓ: binary search in the row's
 * sorted k values (built once per step from the row's ℓ; a step is evaluated by one thread) */
gsize
dw_whatif_query_row_kept_k23 (const DwWhatifStep *const_step, gsize row, int k, double upper)
{
  DwWhatifStep *step = (DwWhatifStep *)const_step;
  g_mutex_lock (&step->row_k_lock);
  if (step->row_k_which != k)
    dw_whatif_query_build_row_k (step, k);
  g_mutex_unlock (&step->row_k_lock);
  gsize low = step->row_start[row], high = step->row_start[row + 1], start = low;
  while (low < high)
    {
      gsize middle = low + (high - low) / 2;
      double value = step->row_k_f ? (double)step->row_k_f[middle] : step->row_k_d[middle];
      if (value <= upper)
        low = middle + 1;
      else
        high = middle;
    }
  return low - start;
}
