/* dw-whatif-sketch.c — a compact description of a step's token log-ratios
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A compact step (dw_whatif_step_new_compact) keeps every per-row statistic of a full step, so
 * everything computed per row (sequence-level IS and RS options, the rows a veto rejects, the
 * off-policy metrics) stays exact, but not its tokens. Its tokens are described by this sketch:
 *
 *   - the extreme tokens in full: the lowest and highest DW_WHATIF_SKETCH_TAIL fraction of the
 *     sorted ℓ (at least 256, at most 16384 a side), with block prefix sums of every quantity, so
 *     a bound that falls in a tail (where thresholds are set in practice) is answered exactly;
 *   - the bulk between them in DW_WHATIF_SKETCH_BINS bins of equal token counts, each with its
 *     smallest and largest ℓ and the exactly rounded sum of every quantity.
 *
 * A bound that falls strictly inside a bin splits that bin's tokens in an unknown way: the part
 * below it is estimated by linear interpolation of the bound's quantity between the bin's ends,
 * and the error of the estimate is at most max(f, 1 − f) · n_bin tokens for a count, and that
 * many times the largest |q| at the bin's ends for a sum (every quantity is monotone or convex in
 * ℓ, so its largest magnitude over the bin is at an end). docs/WHATIF.md states what that means
 * for each metric.
 */
#include "config.h"

#include "dw-whatif-private.h"

#include <stdlib.h>
#include <string.h>

/* fraction of the tokens kept in full on each side, and the number of bulk bins */
#define DW_WHATIF_SKETCH_TAIL     0.005
#define DW_WHATIF_SKETCH_TAIL_MIN 256
#define DW_WHATIF_SKETCH_TAIL_MAX 16384
#define DW_WHATIF_SKETCH_BINS     1024
/* tail tokens per block of the tails' prefix sums: a query sums at most block − 1 tokens'
 * quantities (each an exp) on top of a prefix. Small tails (steps under ~0.4 M tokens) take 4,
 * which keeps a slider move over thousands of small steps short (the sums are the same for any
 * block size: a prefix is the running sum's state at its block's start); larger ones the full
 * step's 64,
 * which keeps a 2 M-token step's prefix sums at 42 KB instead of 168 KB */
#define DW_WHATIF_SKETCH_BLOCK_SMALL 4
#define DW_WHATIF_SKETCH_SMALL_TAIL  2048

struct _DwWhatifSketch
{
  gsize n_tokens;
  gsize n_low, n_high;
  gsize block;                           /* tail tokens per prefix block */
  double *low, *high;                    /* sorted ℓ of the extreme tokens */
  DwWhatifSum *low_prefix, *high_prefix; /* [(n / BLOCK + 1) × N_QUANTITIES] */
  guint n_bins;
  gsize *bin_start;             /* [n_bins + 1] sorted positions */
  double *bin_first, *bin_last; /* [n_bins] */
  double *bin_last_weight;      /* [n_bins]: the IS weight w of bin_last (a weight query's
                                 * bisection over the bins without an exp a probe) */
  double *group_last_weight;    /* [n_bins / DW_WHATIF_SKETCH_GROUP]: bin_last_weight of each
                                 * group's last bin (dw_whatif_sketch_weight_bin) */
  DwWhatifSum *bin_prefix;      /* [(n_bins + 1) × N_QUANTITIES]: sums of the bins before */
  /* a sketch built from a stored token summary (dw_whatif_sketch_new_from_summary): the error
   * bounds of the bins' sums before each bin, [(n_bins + 1) × N_QUANTITIES]; NULL: exact */
  double *bin_error;
};

/* bins a group of the weight search's first level holds (dw_whatif_sketch_weight_bin) */
#define DW_WHATIF_SKETCH_GROUP 32

/* bin_last_weight from bin_last, and its groups' last values */
static void
dw_whatif_sketch_bin_weights (const DwWhatifStep *step, DwWhatifSketch *self)
{
  const guint n_groups = self->n_bins / DW_WHATIF_SKETCH_GROUP;

  self->bin_last_weight = g_new (double, self->n_bins ? self->n_bins : 1);
  for (guint bin = 0; bin < self->n_bins; bin++)
    self->bin_last_weight[bin] = dw_whatif_quantity (step, DW_WHATIF_Q_WEIGHT, self->bin_last[bin]);
  self->group_last_weight = g_new (double, n_groups ? n_groups : 1);
  for (guint group = 0; group < n_groups; group++)
    self->group_last_weight[group]
      = self->bin_last_weight[(group + 1) * DW_WHATIF_SKETCH_GROUP - 1];
}

static DwWhatifSum *
dw_whatif_sketch_block_sums (const DwWhatifStep *step, const double *values, gsize n, gsize block)
{
  const gsize n_blocks = n / block + 1;
  DwWhatifSum *prefix = g_new0 (DwWhatifSum, (n_blocks + 1) * DW_WHATIF_N_QUANTITIES);
  DwWhatifSum sum[DW_WHATIF_N_QUANTITIES];
  memset (sum, 0, sizeof sum);
  for (gsize index = 0; index <= n; index++)
    {
      if (index % block == 0)
        memcpy (prefix + (index / block) * DW_WHATIF_N_QUANTITIES, sum, sizeof sum);
      if (index == n)
        break;
      double value[DW_WHATIF_N_QUANTITIES];
      dw_whatif_quantities (step, values[index], value);
      for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
        sum[quantity] = dw_whatif_sum_add_value (sum[quantity], value[quantity]);
    }
  return prefix;
}

/* the block size of @self's tails and their prefix sums */
static void
dw_whatif_sketch_tail_sums (const DwWhatifStep *step, DwWhatifSketch *self)
{
  self->block = MAX (self->n_low, self->n_high) <= DW_WHATIF_SKETCH_SMALL_TAIL
                  ? DW_WHATIF_SKETCH_BLOCK_SMALL
                  : DW_WHATIF_BLOCK;
  self->low_prefix = dw_whatif_sketch_block_sums (step, self->low, self->n_low, self->block);
  self->high_prefix = dw_whatif_sketch_block_sums (step, self->high, self->n_high, self->block);
}

DwWhatifSketch *
dw_whatif_sketch_new (const DwWhatifStep *step)
{
  const gsize n_tokens = step->n_tokens;
  DwWhatifSketch *self = g_new0 (DwWhatifSketch, 1);
  self->n_tokens = n_tokens;
  gsize tail = (gsize)((double)n_tokens * DW_WHATIF_SKETCH_TAIL);
  tail = CLAMP (tail, DW_WHATIF_SKETCH_TAIL_MIN, DW_WHATIF_SKETCH_TAIL_MAX);
  self->n_low = MIN (tail, n_tokens / 2);
  self->n_high = MIN (tail, n_tokens - self->n_low);
  self->low = g_new (double, self->n_low ? self->n_low : 1);
  self->high = g_new (double, self->n_high ? self->n_high : 1);
  for (gsize index = 0; index < self->n_low; index++)
    self->low[index] = dw_whatif_sorted_value (step, index);
  for (gsize index = 0; index < self->n_high; index++)
    self->high[index] = dw_whatif_sorted_value (step, n_tokens - self->n_high + index);
  dw_whatif_sketch_tail_sums (step, self);

  const gsize bulk_start = self->n_low, bulk_n = n_tokens - self->n_low - self->n_high;
  self->n_bins = (guint)MIN ((gsize)DW_WHATIF_SKETCH_BINS, bulk_n);
  self->bin_start = g_new (gsize, self->n_bins + 1);
  self->bin_first = g_new (double, self->n_bins ? self->n_bins : 1);
  self->bin_last = g_new (double, self->n_bins ? self->n_bins : 1);
  self->bin_prefix = g_new0 (DwWhatifSum, (self->n_bins + 1) * DW_WHATIF_N_QUANTITIES);
  for (guint bin = 0; bin <= self->n_bins; bin++)
    self->bin_start[bin] = bulk_start + (self->n_bins ? bulk_n * bin / self->n_bins : 0);
  for (guint bin = 0; bin < self->n_bins; bin++)
    {
      const gsize start = self->bin_start[bin], end = self->bin_start[bin + 1];
      self->bin_first[bin] = dw_whatif_sorted_value (step, start);
      self->bin_last[bin] = dw_whatif_sorted_value (step, end - 1);
      for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
        self->bin_prefix[(bin + 1) * DW_WHATIF_N_QUANTITIES + quantity]
          = dw_whatif_sum_add (self->bin_prefix[bin * DW_WHATIF_N_QUANTITIES + quantity],
                               dw_whatif_range_sum (step, quantity, start, end));
    }
  dw_whatif_sketch_bin_weights (step, self);
  return self;
}

void
dw_whatif_sketch_free (DwWhatifSketch *self)
{
  if (!self)
    return;
  g_free (self->low);
  g_free (self->high);
  g_free (self->low_prefix);
  g_free (self->high_prefix);
  g_free (self->bin_start);
  g_free (self->bin_first);
  g_free (self->bin_last);
  g_free (self->bin_last_weight);
  g_free (self->group_last_weight);
  g_free (self->bin_prefix);
  g_free (self->bin_error);
  g_free (self);
}

gsize
dw_whatif_sketch_get_memory (const DwWhatifSketch *self)
{
  const gsize tails = self->n_low + self->n_high;
  return sizeof *self + tails * sizeof (double)
         + (tails / self->block + 4) * DW_WHATIF_N_QUANTITIES * sizeof (DwWhatifSum)
         + (self->n_bins + 1) * sizeof (gsize) + self->n_bins * 3 * sizeof (double)
         + self->n_bins / DW_WHATIF_SKETCH_GROUP * sizeof (double)
         + (self->n_bins + 1) * DW_WHATIF_N_QUANTITIES * sizeof (DwWhatifSum)
         + (self->bin_error ? (self->n_bins + 1) * DW_WHATIF_N_QUANTITIES * sizeof (double) : 0);
}

static inline gboolean
dw_whatif_sketch_compare (DwWhatifCompare op, double bound, double value)
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

static inline gboolean
dw_whatif_sketch_holds (const DwWhatifStep *step, int quantity, DwWhatifCompare op, double bound,
                        double log_ratio)
{
  return dw_whatif_sketch_compare (op, bound, dw_whatif_quantity (step, quantity, log_ratio));
}

/* adds the first @count values of a tail (sums from its block prefix) to @out */
static void
dw_whatif_sketch_add_tail (const DwWhatifStep *step, const double *values,
                           const DwWhatifSum *prefix, gsize count, DwWhatifSketchPart *out)
{
  const gsize block_size = step->sketch->block;
  const gsize block = count / block_size;
  DwWhatifSum sum[DW_WHATIF_N_QUANTITIES];
  memcpy (sum, prefix + block * DW_WHATIF_N_QUANTITIES, sizeof sum);
  /* token by token, every quantity from one exp; each quantity's sum in the same order */
  for (gsize index = block * block_size; index < count; index++)
    {
      double value[DW_WHATIF_N_QUANTITIES];
      dw_whatif_quantities (step, values[index], value);
      for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
        sum[quantity] = dw_whatif_sum_add_value (sum[quantity], value[quantity]);
    }
  for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
    out->total[quantity] = dw_whatif_sum_add (out->total[quantity], sum[quantity]);
  out->count += (double)count;
}

/* log(@bound) for dw_whatif_sketch_decide () when @quantity is the IS weight and the bound is
 * far from the clamp at ±DW_WHATIF_SAFETY_BOUND, else NAN (every probe computes its weight) */
static double
dw_whatif_sketch_log_bound (int quantity, double bound)
{
  if (quantity != DW_WHATIF_Q_WEIGHT || !(bound > 0) || !isfinite (bound))
    return NAN;
  const double log_bound = log (bound);
  return fabs (log_bound) < DW_WHATIF_SAFETY_BOUND - 1 ? log_bound : NAN;
}

/* dw_whatif_sketch_holds () without an exp when ℓ alone decides it: w = R(exp(clamp ℓ)) is
 * within a relative 1e-6 of exp ℓ (the exp's and the rounding's errors, ~1e-7 each), so an ℓ
 * more than 1e-4 below log(bound) has w < bound and one more than 1e-4 above has w > bound,
 * whatever the rounding (the clamp changes neither side: |log(bound)| < 19) */
#define DW_WHATIF_SKETCH_LOG_MARGIN 1e-4

static inline gboolean
dw_whatif_sketch_decide (const DwWhatifStep *step, int quantity, DwWhatifCompare op, double bound,
                         double log_bound, double log_ratio)
{
  if (log_ratio < log_bound - DW_WHATIF_SKETCH_LOG_MARGIN)
    return op == DW_WHATIF_LT || op == DW_WHATIF_LE;
  if (log_ratio > log_bound + DW_WHATIF_SKETCH_LOG_MARGIN)
    return op == DW_WHATIF_GT || op == DW_WHATIF_GE;
  return dw_whatif_sketch_holds (step, quantity, op, bound, log_ratio);
}

/* Where a bisection over sorted ℓ from @first to @last (n values) ends when ℓ alone decides every
 * probe the same way: all of them lie on one side of log(bound) beyond the margin, so every probe
 * gives the same answer and the bisection ends at @n (all hold) or 0 (none does); else G_MAXSIZE.
 * Spares the bisection's reads (cold memory for every step at each move). */
static inline gsize
dw_whatif_sketch_one_side (DwWhatifCompare op, double log_bound, double first, double last, gsize n)
{
  const gboolean below = op == DW_WHATIF_LT || op == DW_WHATIF_LE;
  if (n > 0 && last < log_bound - DW_WHATIF_SKETCH_LOG_MARGIN)
    return below ? n : 0;
  if (n > 0 && first > log_bound + DW_WHATIF_SKETCH_LOG_MARGIN)
    return below ? 0 : n;
  return G_MAXSIZE;
}

/* the first index of @values (sorted, @n) where the predicate fails */
static gsize
dw_whatif_sketch_search (const DwWhatifStep *step, const double *values, gsize n, int quantity,
                         DwWhatifCompare op, double bound)
{
  const double log_bound = dw_whatif_sketch_log_bound (quantity, bound);
  const gsize decided
    = n > 0 ? dw_whatif_sketch_one_side (op, log_bound, values[0], values[n - 1], n) : G_MAXSIZE;
  if (decided != G_MAXSIZE)
    return decided;
  gsize low = 0, high = n;
  while (low < high)
    {
      gsize middle = low + (high - low) / 2;
      if (dw_whatif_sketch_decide (step, quantity, op, bound, log_bound, values[middle]))
        low = middle + 1;
      else
        high = middle;
    }
  return low;
}

/* The first bin whose last weight fails the predicate (the weights monotone, as a bisection
 * assumes too): the groups' last weights scanned, then the bins of the first group that fails.
 * The same bin as a bisection, from 8 cache lines whose loads do not wait for one another
 * instead of 10 that do: at a slider move every step's bins are cold, and a bisection's
 * dependent misses were most of a weight query. */
static guint
dw_whatif_sketch_weight_bin (const DwWhatifSketch *self, DwWhatifCompare op, double bound)
{
  const guint n_groups = self->n_bins / DW_WHATIF_SKETCH_GROUP;
  guint group = 0, bin, end;

  while (group < n_groups && dw_whatif_sketch_compare (op, bound, self->group_last_weight[group]))
    group++;
  bin = group * DW_WHATIF_SKETCH_GROUP;
  end = MIN (bin + DW_WHATIF_SKETCH_GROUP, self->n_bins);
  while (bin < end && dw_whatif_sketch_compare (op, bound, self->bin_last_weight[bin]))
    bin++;
  return bin;
}

void
dw_whatif_sketch_prefetch (const DwWhatifStep *step)
{
  const DwWhatifSketch *self = step->sketch;
  const gsize n_groups = self->n_bins / DW_WHATIF_SKETCH_GROUP;

  for (gsize offset = 0; offset < n_groups * sizeof (double); offset += 64)
    __builtin_prefetch ((const char *)self->group_last_weight + offset);
  if (self->n_low > 0)
    {
      __builtin_prefetch (&self->low[0]);
      __builtin_prefetch (&self->low[self->n_low - 1]);
    }
  if (self->n_bins > 0)
    {
      __builtin_prefetch (&self->bin_last[0]);
      __builtin_prefetch (&self->bin_last[self->n_bins - 1]);
    }
  if (self->n_high > 0)
    {
      __builtin_prefetch (&self->high[0]);
      __builtin_prefetch (&self->high[self->n_high - 1]);
    }
}

/* bin @bin split by the predicate: interpolated share below, with its error */
static void
dw_whatif_sketch_add_split_bin (const DwWhatifStep *step, const DwWhatifSketch *self, guint bin,
                                int quantity, double bound, DwWhatifSketchPart *out)
{
  const double count = (double)(self->bin_start[bin + 1] - self->bin_start[bin]);
  /* every quantity at the bin's ends, one exp each (dw_whatif_quantities () gives the values
   * dw_whatif_quantity () gives) */
  double at_first[DW_WHATIF_N_QUANTITIES], at_last[DW_WHATIF_N_QUANTITIES];
  dw_whatif_quantities (step, self->bin_first[bin], at_first);
  dw_whatif_quantities (step, self->bin_last[bin], at_last);
  const double first = quantity < DW_WHATIF_N_QUANTITIES
                         ? at_first[quantity]
                         : dw_whatif_quantity (step, quantity, self->bin_first[bin]);
  const double last = quantity < DW_WHATIF_N_QUANTITIES
                        ? at_last[quantity]
                        : dw_whatif_quantity (step, quantity, self->bin_last[bin]);
  double share = last != first ? (bound - first) / (last - first) : 0.5;
  share = isnan (share) ? 0.5 : CLAMP (share, 0.0, 1.0);
  const double spread = MAX (share, 1.0 - share) * count;
  out->count += share * count;
  out->count_error += spread;
  for (int summed = 0; summed < DW_WHATIF_N_QUANTITIES; summed++)
    {
      double magnitude = MAX (fabs (at_first[summed]), fabs (at_last[summed]));
      const DwWhatifSum *prefix = self->bin_prefix + (gsize)bin * DW_WHATIF_N_QUANTITIES;
      double bin_sum = dw_whatif_sum_value (dw_whatif_sum_add (
        prefix[DW_WHATIF_N_QUANTITIES + summed], dw_whatif_sum_negate (prefix[summed])));
      out->split[summed] += share * bin_sum;
      out->sum_error[summed] += spread * magnitude;
      if (self->bin_error)
        out->sum_error[summed]
          += self->bin_error[((gsize)bin + 1) * DW_WHATIF_N_QUANTITIES + summed]
             - self->bin_error[(gsize)bin * DW_WHATIF_N_QUANTITIES + summed];
    }
}

static void
dw_whatif_sketch_prefix_parts (const DwWhatifStep *step, int quantity, DwWhatifCompare op,
                               double bound, DwWhatifSketchPart *out)
{
  const DwWhatifSketch *self = step->sketch;
  memset (out, 0, sizeof *out);

  /* the low tail */
  gsize in_low = dw_whatif_sketch_search (step, self->low, self->n_low, quantity, op, bound);
  dw_whatif_sketch_add_tail (step, self->low, self->low_prefix, in_low, out);
  if (in_low < self->n_low)
    return;

  /* whole bins (the first bin whose last value fails is found by bisection), then the one the
   * bound splits */
  guint low = 0, high = self->n_bins;
  const double log_bound = dw_whatif_sketch_log_bound (quantity, bound);
  const gsize decided
    = self->n_bins > 0 ? dw_whatif_sketch_one_side (op, log_bound, self->bin_last[0],
                                                    self->bin_last[self->n_bins - 1], self->n_bins)
                       : G_MAXSIZE;
  if (decided != G_MAXSIZE)
    low = high = (guint)decided;
  else if (quantity == DW_WHATIF_Q_WEIGHT && step->weight_monotone)
    low = high = dw_whatif_sketch_weight_bin (self, op, bound);
  while (low < high)
    {
      guint middle = low + (high - low) / 2;
      if (quantity == DW_WHATIF_Q_WEIGHT
            ? dw_whatif_sketch_compare (op, bound, self->bin_last_weight[middle])
            : dw_whatif_sketch_holds (step, quantity, op, bound, self->bin_last[middle]))
        low = middle + 1;
      else
        high = middle;
    }
  out->count += (double)(self->bin_start[low] - self->bin_start[0]);
  for (int summed = 0; summed < DW_WHATIF_N_QUANTITIES; summed++)
    {
      out->total[summed] = dw_whatif_sum_add (
        out->total[summed], self->bin_prefix[(gsize)low * DW_WHATIF_N_QUANTITIES + summed]);
      if (self->bin_error)
        out->sum_error[summed] += self->bin_error[(gsize)low * DW_WHATIF_N_QUANTITIES + summed];
    }
  if (low < self->n_bins)
    {
      if (dw_whatif_sketch_decide (step, quantity, op, bound, log_bound, self->bin_first[low]))
        dw_whatif_sketch_add_split_bin (step, self, low, quantity, bound, out);
      return;
    }

  /* the high tail */
  gsize in_high = dw_whatif_sketch_search (step, self->high, self->n_high, quantity, op, bound);
  dw_whatif_sketch_add_tail (step, self->high, self->high_prefix, in_high, out);
}

void
dw_whatif_sketch_prefix (const DwWhatifStep *step, int quantity, DwWhatifCompare op, double bound,
                         DwWhatifSketchPart *out)
{
  dw_whatif_sketch_prefix_parts (step, quantity, op, bound, out);
  for (int summed = 0; summed < DW_WHATIF_N_QUANTITIES; summed++)
    out->sum[summed]
      = dw_whatif_sum_value (dw_whatif_sum_add_value (out->total[summed], out->split[summed]));
}

double
dw_whatif_sketch_quantile (const DwWhatifStep *step, double q)
{
  const DwWhatifSketch *self = step->sketch;
  const gsize n_tokens = self->n_tokens;
  gsize position = (gsize)llround (dw_torch_clamp (q, 0, 1) * (double)(n_tokens - 1));
  if (position < self->n_low)
    return self->low[position];
  if (position >= n_tokens - self->n_high)
    return self->high[position - (n_tokens - self->n_high)];
  for (guint bin = 0; bin < self->n_bins; bin++)
    if (position < self->bin_start[bin + 1])
      {
        double share = (double)(position - self->bin_start[bin])
                       / (double)MAX (1, self->bin_start[bin + 1] - self->bin_start[bin] - 1);
        return self->bin_first[bin] + share * (self->bin_last[bin] - self->bin_first[bin]);
      }
  return NAN;
}

/* ------------------------------------------------------------------------------------------ */
/* a sketch from the store's token summary (docs/WHATIF.md §5, "From the store's summary")    */

/* the sums of one stored bin as the sketch's quantities, with their error bounds. The store sums
 * float64 terms in a float64 running sum; the engine sums the terms rounded to the batch's dtype
 * exactly: each float32 term is within a few 2⁻²⁴ relative units of the float64 one (expf
 * included), and every quantity's largest magnitude over a bin is at one of its ends (monotone or
 * convex in ℓ). Σ k2² is not stored: it lies in [(Σ k2)² / n, max k2 · Σ k2]. */
static void
dw_whatif_sketch_bin_sums (const DwWhatifStep *step, const DwTokenBin *bin, double *sum,
                           double *error)
{
  const double count = (double)bin->count;
  const double unit = step->f32 ? 0x1p-20 : 0x1p-48;
  double magnitude[DW_WHATIF_N_QUANTITIES];

  double at_first[DW_WHATIF_N_QUANTITIES], at_last[DW_WHATIF_N_QUANTITIES];

  dw_whatif_quantities (step, bin->first, at_first);
  dw_whatif_quantities (step, bin->last, at_last);
  for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
    magnitude[quantity] = fmax (fabs (at_first[quantity]), fabs (at_last[quantity]));
  const double weight_max = magnitude[DW_WHATIF_Q_WEIGHT], k3_max = magnitude[DW_WHATIF_Q_K3];
  const double k3_delta = unit * (weight_max + 1.0 + k3_max);
  sum[DW_WHATIF_Q_WEIGHT] = bin->sum_weight;
  sum[DW_WHATIF_Q_WEIGHT_SQ] = bin->sum_weight_sq;
  sum[DW_WHATIF_Q_LOG] = bin->sum_log;
  sum[DW_WHATIF_Q_LOG_SQ] = bin->sum_log_sq;
  sum[DW_WHATIF_Q_K2] = 0.5 * bin->sum_log_sq;
  sum[DW_WHATIF_Q_K3] = bin->sum_k3;
  sum[DW_WHATIF_Q_K3_SQ] = bin->sum_k3_sq;
  const double k2_sq_low = count > 0 ? sum[DW_WHATIF_Q_K2] * sum[DW_WHATIF_Q_K2] / count : 0.0;
  const double k2_sq_high = magnitude[DW_WHATIF_Q_K2] * sum[DW_WHATIF_Q_K2];
  sum[DW_WHATIF_Q_K2_SQ] = 0.5 * (k2_sq_low + k2_sq_high);

  double per_token[DW_WHATIF_N_QUANTITIES];
  per_token[DW_WHATIF_Q_WEIGHT] = unit * weight_max;
  per_token[DW_WHATIF_Q_WEIGHT_SQ] = 3 * unit * weight_max * weight_max;
  per_token[DW_WHATIF_Q_LOG] = 0;
  per_token[DW_WHATIF_Q_LOG_SQ] = unit * magnitude[DW_WHATIF_Q_LOG_SQ];
  per_token[DW_WHATIF_Q_K2] = unit * magnitude[DW_WHATIF_Q_K2];
  per_token[DW_WHATIF_Q_K2_SQ] = 2 * unit * magnitude[DW_WHATIF_Q_K2_SQ];
  per_token[DW_WHATIF_Q_K3] = k3_delta;
  per_token[DW_WHATIF_Q_K3_SQ]
    = 2 * k3_max * k3_delta + k3_delta * k3_delta + unit * k3_max * k3_max;
  for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
    /* the terms' rounding, then the float64 running sum's (n · 2⁻⁵³ · Σ|t| at most) */
    error[quantity] = count * per_token[quantity]
                      + count * count * 0x1p-52 * (magnitude[quantity] + per_token[quantity]);
  error[DW_WHATIF_Q_K2_SQ] += 0.5 * fabs (k2_sq_high - k2_sq_low);
}

DwWhatifSketch *
dw_whatif_sketch_new_from_summary (const DwWhatifStep *step, const DwTokenSummary *summary)
{
  DwWhatifSketch *self = g_new0 (DwWhatifSketch, 1);
  self->n_tokens = (gsize)summary->n_tokens;
  self->n_low = summary->n_low;
  self->n_high = summary->n_high;
  self->low = g_new (double, self->n_low ? self->n_low : 1);
  self->high = g_new (double, self->n_high ? self->n_high : 1);
  for (gsize index = 0; index < self->n_low; index++)
    self->low[index] = summary->low[index].log_ratio;
  for (gsize index = 0; index < self->n_high; index++)
    self->high[index] = summary->high[index].log_ratio;
  dw_whatif_sketch_tail_sums (step, self);

  self->n_bins = (guint)summary->n_bins;
  self->bin_start = g_new (gsize, self->n_bins + 1);
  self->bin_first = g_new (double, self->n_bins ? self->n_bins : 1);
  self->bin_last = g_new (double, self->n_bins ? self->n_bins : 1);
  self->bin_prefix = g_new0 (DwWhatifSum, (self->n_bins + 1) * DW_WHATIF_N_QUANTITIES);
  self->bin_error = g_new0 (double, (self->n_bins + 1) * DW_WHATIF_N_QUANTITIES);
  self->bin_start[0] = self->n_low;
  for (guint bin = 0; bin < self->n_bins; bin++)
    {
      const DwTokenBin *stored = &summary->bins[bin];
      double sum[DW_WHATIF_N_QUANTITIES], error[DW_WHATIF_N_QUANTITIES];
      self->bin_start[bin + 1] = self->bin_start[bin] + (gsize)stored->count;
      self->bin_first[bin] = stored->first;
      self->bin_last[bin] = stored->last;
      dw_whatif_sketch_bin_sums (step, stored, sum, error);
      for (int quantity = 0; quantity < DW_WHATIF_N_QUANTITIES; quantity++)
        {
          const gsize before = (gsize)bin * DW_WHATIF_N_QUANTITIES + quantity;
          self->bin_prefix[before + DW_WHATIF_N_QUANTITIES]
            = dw_whatif_sum_add_value (self->bin_prefix[before], sum[quantity]);
          self->bin_error[before + DW_WHATIF_N_QUANTITIES]
            = self->bin_error[before] + error[quantity];
        }
    }
  dw_whatif_sketch_bin_weights (step, self);
  return self;
}
