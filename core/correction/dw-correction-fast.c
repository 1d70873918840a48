/* dw-correction-fast.c — the float32 fast path: one streaming pass over the rows (§9.2)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Arithmetic follows torch (docs/CORRECTION.md §2): every elementwise result is
 * rounded to the input dtype, reductions accumulate in double.
 */
#include "dw-correction-private.h"

/* Glossary (spec symbols kept in this kernel driver): k the statistic of an RS option, 1, 2 or 3
 * (§4.3); DwRowIn / DwRowOut fields as dw-correction-private.h describes them. */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* target[t] = source[t] · keep[t] (keep ∈ {0, 1}) in the mask dtype; @keep NULL: every keep is 0.
 * Float masks multiply (−1·0 = −0, NaN stays NaN, as torch), integer and bool masks select. */
static void
dw_correction_fast_mask_row (DwDType dtype, const void *source_row, const float *keep,
                             void *target_row, size_t T)
{
#define SELECT_LOOP(TYPE)                                 \
  do                                                      \
    {                                                     \
      const TYPE *restrict src = source_row;              \
      TYPE *restrict dst = target_row;                    \
      if (!keep)                                          \
        memset (dst, 0, T * sizeof (TYPE));               \
      else                                                \
        for (size_t col = 0; col < T; col++)              \
          dst[col] = keep[col] != 0 ? src[col] : (TYPE)0; \
    }                                                     \
  while (0)
  switch (dtype)
    {
    case DW_DTYPE_F32:
      {
        const float *restrict src = source_row;
        float *restrict dst = target_row;
        for (size_t col = 0; col < T; col++)
          dst[col] = src[col] * (keep ? keep[col] : 0.0f);
      }
      break;
    case DW_DTYPE_F64:
      {
        const double *restrict src = source_row;
        double *restrict dst = target_row;
        for (size_t col = 0; col < T; col++)
          dst[col] = src[col] * (keep ? (double)keep[col] : 0.0);
      }
      break;
    default:
      switch (dw_dtype_size (dtype))
        {
        case 1:
          SELECT_LOOP (uint8_t);
          break;
        case 2:
          SELECT_LOOP (uint16_t);
          break;
        case 4:
          SELECT_LOOP (uint32_t);
          break;
        default:
          SELECT_LOOP (uint64_t);
          break;
        }
    }
#undef SELECT_LOOP
}

/* The state of one fast run. Every row is read once: its mask is converted to float in a small
 * buffer, one fused pass (dw_correction_simd_row_pass*) returns all of the row's masked sums and
 * writes its token weights, and the row's RS decisions and output mask follow while the row is
 * still in cache. Same formulas and the same exp as the reference paths; only the order of
 * additions inside a sum differs. */
typedef struct
{
  const DwBatch *batch;
  DwPlan plan;
  DwContext context;
  DwRowIn in;
  bool simd, fused_mask, token_is, sequence_is, any_token_option;
  bool stream;      /* a vector level and a large batch: results are streamed past the caches */
  bool mask_shared; /* no RS option: the output mask is the batch's own, not a copy */
  /* whole rows kept or rejected (no token option) from an int64 mask read in the fused pass: a
   * row's output mask is written during the next row's pass (DwRowIn.defer_to); pending_row is
   * the row still to write, pending_kept its decision */
  bool defer, pending, pending_kept;
  size_t pending_row;
  size_t n_options, mask_size;
  /* row buffers [T] */
  float *mask_row, *log_ratio_row, *exp_row, *keep_row;
  /* per-row values [B] */
  double *row_count, *row_log, *row_means, *raw_means, *row_truncated, *option_values;
  double *offpolicy_rows; /* [3 B] each row's Σold, Σrollout, Σℓ for the off-policy metrics */
  float *offpolicy_scratch; /* [6 B] */
  float *weights;           /* [B*T] result */
  unsigned char *masked;    /* [B*T] result in the mask dtype */
  /* batch sums */
  DwRatioSums ratio_sums;    /* ≤ v0.7.1 */
  DwVerlIsSums applied_sums; /* v0.8.0+ */
  DwRsSums rs_sums[DW_RS_N_OPTIONS];
  DwOffpolicySums offpolicy_sums;
  double total, normalize_sum, normalize_rows, rs_masked, rs_rows_rejected;
  size_t n_valid_rows;
  bool any_valid;
} DwCorrectionFast;

/* positions from which results are streamed (4 MiB of float32 weights) */
#define DW_CORRECTION_FAST_STREAM_MIN ((size_t)1 << 20)

/* whether @pointer starts a cache line (streamed stores write whole lines) */
static bool
dw_correction_fast_line_aligned (const void *pointer)
{
  return ((uintptr_t)pointer & 63) == 0;
}

/* float32 log-probs, a plain mask dtype, a verl k-option plan */
static bool
dw_correction_fast_applies (const DwBatch *batch, const DwPlan *plan)
{
  if (dw_correction_simd_get_reference () || plan->path != DW_PATH_VERL_K_OPTIONS
      || batch->lp_dtype != DW_DTYPE_F32 || batch->mask_dtype == DW_DTYPE_BF16
      || batch->mask_dtype == DW_DTYPE_F16 || batch->mask_dtype >= DW_N_DTYPES)
    return false;
  const size_t rows = batch->rows, cols = batch->cols;
  return rows > 0 && cols > 0 && (rows * cols) / cols == rows;
}

static void
dw_correction_fast_free (DwCorrectionFast *run)
{
  /* streamed stores still in flight must land before a block goes back to malloc */
  if (run->stream)
    dw_correction_simd_stream_fence ();
  dw_workspace_free (run->weights);
  dw_workspace_free (run->masked);
  run->weights = NULL;
  run->masked = NULL;
}

/* buffers, the row-pass inputs and the initial sums; false: out of memory */
static bool
dw_correction_fast_setup (DwCorrectionFast *run, const DwBatch *batch, const DwPlan *plan,
                          bool share_mask)
{
  memset (run, 0, sizeof *run);
  run->batch = batch;
  run->plan = *plan;
  const size_t rows = batch->rows, cols = batch->cols;
  run->n_options = plan->rs_on ? plan->rs.n : 0;
  run->mask_size = dw_dtype_size (batch->mask_dtype);
  run->token_is = plan->is_on && plan->is_level == DW_LEVEL_TOKEN;
  run->sequence_is = plan->is_on && plan->is_level != DW_LEVEL_TOKEN;
  float *row_buffer = dw_workspace_get (DW_WORKSPACE_FAST_ROW, 4 * cols * sizeof (float));
  double *per_row
    = dw_workspace_get (DW_WORKSPACE_FAST_B, (12 + run->n_options) * rows * sizeof (double));
  run->weights = plan->is_on ? dw_workspace_alloc (rows * cols * sizeof (float)) : NULL;
  run->mask_shared = share_mask && run->n_options == 0;
  run->masked = run->mask_shared ? NULL : dw_workspace_alloc (rows * cols * run->mask_size);
  if (!row_buffer || !per_row || (plan->is_on && !run->weights)
      || (!run->mask_shared && !run->masked))
    return false;
  run->mask_row = row_buffer;
  run->log_ratio_row = row_buffer + cols;
  run->exp_row = row_buffer + 2 * cols;
  run->keep_row = row_buffer + 3 * cols;
  run->row_count = per_row;
  run->row_log = per_row + rows;
  run->row_means = per_row + 2 * rows;
  run->raw_means = per_row + 3 * rows;
  run->row_truncated = per_row + 4 * rows;
  run->option_values = per_row + 6 * rows;
  run->offpolicy_rows = per_row + (6 + run->n_options) * rows;
  run->offpolicy_scratch = (float *)(per_row + (9 + run->n_options) * rows);

  DwContext *context = &run->context;
  context->batch = batch;
  context->rows = rows;
  context->cols = cols;
  context->f32 = true;
  context->row_count = run->row_count;

  DwRowIn *in = &run->in;
  in->T = cols;
  in->is_token = run->token_is;
  in->bn = plan->batch_normalize;
  in->applied = plan->is_on && plan->is_metrics != DW_IS_METRICS_RAW;
  in->icepop = plan->is_on && plan->is_mode == DW_IS_ZERO_OUTSIDE;
  const double upper = plan->is_on ? plan->is_upper : 2.0;
  in->C = (float)upper;
  in->c = (float)(plan->is_on ? plan->is_lower : 1.0 / upper);
  for (size_t option = 0; option < run->n_options; option++)
    {
      const DwRsOption name = plan->rs.bounds[option].option;
      if (dw_rs_option_agg (name) == DW_RS_AGG_TOKEN)
        run->any_token_option = true;
      else
        in->need_k[dw_rs_option_k (name) - 1] = true;
    }
  if (run->any_token_option)
    {
      in->l = run->log_ratio_row;
      in->e = run->exp_row;
    }
  run->simd = dw_correction_simd_enabled ();
  /* results beyond the L2 cache are not read back before they leave it: their lines are
   * written whole (non-temporal stores) instead of being read in first */
  run->stream = run->simd && rows * cols >= DW_CORRECTION_FAST_STREAM_MIN;
  run->fused_mask = batch->mask_dtype == DW_DTYPE_I64 && dw_correction_simd_row_pass_fuses_mask ();
  run->defer = run->stream && run->fused_mask && !run->mask_shared && !run->any_token_option;
  run->ratio_sums = (DwRatioSums){ 0, 0, 0, 0, 0, -INFINITY, INFINITY };
  dw_verl_is_sums_init (&run->applied_sums);
  for (size_t option = 0; option < run->n_options; option++)
    run->rs_sums[option] = (DwRsSums){ 0, 0, 0, 0, 0, -INFINITY, INFINITY, 0, 0 };
  dw_offpolicy_init (&run->offpolicy_sums);
  return true;
}

/* token IS: the kernel's sums of the row join the batch's */
static void
dw_correction_fast_token_is (DwCorrectionFast *run, size_t row, const DwRowOut *out)
{
  const DwContext *context = &run->context;
  if (run->in.applied)
    {
      DwVerlIsSums *sums = &run->applied_sums;
      sums->sum_applied += out->sw;
      sums->sum_clamped += out->su;
      sums->sum_clamped_squared += out->su2;
      sums->count_high += out->fh;
      sums->count_low += out->fl;
      if (out->n_valid)
        {
          sums->max_applied = dw_torch_max (sums->max_applied, out->wmax);
          sums->min_applied = dw_torch_min (sums->min_applied, out->wmin);
        }
      run->raw_means[row] = dw_context_row_mean (context, out->sw_raw, row);
    }
  else
    {
      DwRatioSums *sums = &run->ratio_sums;
      sums->sum += out->sw;
      sums->count_high += out->fh;
      sums->count_low += out->fl;
      sums->sum_clamped += out->su;
      sums->sum_clamped_squared += out->su2;
      if (out->n_valid)
        {
          sums->max = dw_torch_max (sums->max, out->wmax);
          sums->min = dw_torch_min (sums->min, out->wmin);
        }
    }
  run->row_means[row] = dw_context_row_mean (context, out->sw, row);
  run->normalize_sum += out->swt;
}

/* one valid token (or a binary row's @weight tokens at once) of sequence IS with ratio @raw and
 * applied weight @applied */
static void
dw_correction_fast_sequence_token (DwCorrectionFast *run, double raw, double applied, double weight)
{
  const double upper = run->in.C, lower = run->in.c;
  if (run->in.applied)
    {
      DwVerlIsSums *sums = &run->applied_sums;
      const double clamped = dw_torch_clamp (applied, 0.0, upper);
      sums->sum_applied += applied * weight;
      sums->sum_clamped += clamped * weight;
      sums->sum_clamped_squared += (double)(float)(clamped * clamped) * weight;
      sums->count_high += (raw > upper) * weight;
      sums->count_low += (raw < lower) * weight;
      return;
    }
  DwRatioSums *sums = &run->ratio_sums;
  const double clamped = dw_torch_clamp (raw, lower, upper);
  sums->sum += raw * weight;
  sums->count_high += (raw > upper) * weight;
  sums->count_low += (raw < lower) * weight;
  sums->max = dw_torch_max (sums->max, raw);
  sums->min = dw_torch_min (sums->min, raw);
  sums->sum_clamped += clamped * weight;
  sums->sum_clamped_squared += (double)(float)(clamped * clamped) * weight;
}

/* sequence IS: the row's weight exp(SAFE(Σℓ)) broadcast, applied, written and summed */
static void
dw_correction_fast_sequence_is (DwCorrectionFast *run, size_t row, const DwRowOut *out, bool binary)
{
  const DwContext *context = &run->context;
  const size_t cols = context->cols;
  const float *mask = run->mask_row;
  const bool icepop = run->in.icepop;
  const float upper = run->in.C, lower = run->in.c;
  run->row_log[row] = DW_ROUND (context, out->sl);
  const float row_weight
    = dw_torch_expf ((float)dw_torch_clamp (run->row_log[row], -DW_SAFETY_BOUND, DW_SAFETY_BOUND));
  float *weights = run->weights + row * cols;
  double raw_sum = 0, applied_sum = 0;
  if (binary && run->simd)
    dw_correction_simd_sequence_weights (weights, mask, row_weight, upper, lower, icepop, cols,
                                         run->stream && dw_correction_fast_line_aligned (weights));
  else
    for (size_t col = 0; col < cols; col++)
      {
        const float raw = row_weight * mask[col];
        weights[col] = dw_correction_sequence_applied (raw, upper, lower, icepop);
        if (binary || mask[col] == 0)
          continue;
        dw_correction_fast_sequence_token (run, raw, weights[col], mask[col]);
        raw_sum += (double)raw * mask[col];
        applied_sum += (double)weights[col] * mask[col];
      }
  if (binary && out->n_valid)
    {
      /* every valid token of a binary row has the same raw and applied weight */
      const float applied = dw_correction_sequence_applied (row_weight, upper, lower, icepop);
      dw_correction_fast_sequence_token (run, row_weight, applied, out->n);
      raw_sum = (double)row_weight * out->n;
      applied_sum = (double)applied * out->n;
    }
  const double raw_mean = dw_context_row_mean (context, raw_sum, row);
  const double applied_mean = dw_context_row_mean (context, applied_sum, row);
  run->row_means[row] = run->in.applied ? applied_mean : raw_mean;
  run->raw_means[row] = raw_mean;
  if (run->row_count[row] > 0)
    {
      run->normalize_sum += applied_mean;
      run->normalize_rows += 1;
    }
}

/* one sequence option: the row statistic decides the whole row; returns the keep decision */
static bool
dw_correction_fast_sequence_option (DwCorrectionFast *run, size_t option, size_t row,
                                    const DwRowOut *out)
{
  const DwContext *context = &run->context;
  const DwRsBound *bound = &run->plan.rs.bounds[option];
  const int k = dw_rs_option_k (bound->option);
  const DwRsAgg aggregation = dw_rs_option_agg (bound->option);
  const double upper = DW_ROUND (context, bound->log_upper);
  const double lower = k == 1 ? DW_ROUND (context, bound->log_lower) : 0.0;
  DwRsSums *sums = &run->rs_sums[option];
  double value;
  if (aggregation == DW_RS_AGG_MEAN)
    value = dw_context_row_mean (context, out->sk[k - 1], row);
  else if (aggregation == DW_RS_AGG_SUM)
    value = DW_ROUND (context, out->sk[k - 1]);
  else
    value = out->n_valid ? out->mk[k - 1] : 0.0;
  const bool kept = k == 1 ? (value <= upper && value >= lower) : (value <= upper);
  run->option_values[option * context->rows + row] = value;
  if (out->n_valid)
    {
      const double clamped = dw_torch_clamp (value, lower, upper);
      sums->sum += value * out->n;
      sums->sum_clamped += clamped * out->n;
      sums->sum_clamped_squared += DW_ROUND (context, clamped * clamped) * out->n;
      sums->masked += (1.0 - kept) * out->n;
      if (run->row_count[row] > 0 && !kept)
        sums->rows_masked += 1;
    }
  return kept;
}

/* one token option: each token decides for itself, into the row's keep buffer */
static void
dw_correction_fast_token_option (DwCorrectionFast *run, size_t option, size_t row)
{
  const DwContext *context = &run->context;
  const DwRsBound *bound = &run->plan.rs.bounds[option];
  const int k = dw_rs_option_k (bound->option);
  const double upper = DW_ROUND (context, bound->log_upper);
  const double lower = k == 1 ? DW_ROUND (context, bound->log_lower) : 0.0;
  const float upper_float = (float)upper, lower_float = (float)lower;
  const float *mask = run->mask_row;
  DwRsSums *sums = &run->rs_sums[option];
  double row_sum = 0;
  bool row_rejected = false;
  for (size_t col = 0; col < context->cols; col++)
    {
      const float clamped_log
        = (float)dw_torch_clamp (run->log_ratio_row[col], -DW_SAFETY_BOUND, DW_SAFETY_BOUND);
      const float statistic = k == 1   ? -clamped_log
                              : k == 2 ? 0.5f * (clamped_log * clamped_log)
                                       : (run->exp_row[col] - 1.0f) - clamped_log;
      const bool kept = k == 1 ? (statistic <= upper_float && statistic >= lower_float)
                               : (statistic <= upper_float);
      run->keep_row[col] *= kept;
      if (mask[col] == 0)
        continue;
      const double weight = mask[col], value = statistic;
      const double clamped = dw_torch_clamp (value, lower, upper);
      row_sum += value * weight;
      sums->sum += value * weight;
      sums->max = dw_torch_max (sums->max, value);
      sums->min = dw_torch_min (sums->min, value);
      sums->count_high += (value > upper) * weight;
      sums->count_low += (value < lower) * weight;
      sums->sum_clamped += clamped * weight;
      sums->sum_clamped_squared += DW_ROUND (context, clamped * clamped) * weight;
      sums->masked += (1.0 - kept) * weight;
      row_rejected |= !kept;
    }
  run->option_values[option * context->rows + row] = dw_context_row_mean (context, row_sum, row);
  if (run->row_count[row] > 0 && row_rejected)
    sums->rows_masked += 1;
}

/* RS of the row and its output mask = m · keep, in the mask dtype */
static void
dw_correction_fast_rejection (DwCorrectionFast *run, size_t row, const DwRowOut *out)
{
  const size_t cols = run->context.cols, offset = row * cols;
  if (run->mask_shared)
    return;
  bool row_kept = true;
  if (run->any_token_option)
    for (size_t col = 0; col < cols; col++)
      run->keep_row[col] = 1.0f;
  for (size_t option = 0; option < run->n_options; option++)
    if (dw_rs_option_agg (run->plan.rs.bounds[option].option) == DW_RS_AGG_TOKEN)
      dw_correction_fast_token_option (run, option, row);
    else
      row_kept &= dw_correction_fast_sequence_option (run, option, row, out);
  const DwDType dtype = run->batch->mask_dtype;
  unsigned char *target = run->masked + offset * run->mask_size;
  const unsigned char *source
    = (const unsigned char *)run->batch->response_mask + offset * run->mask_size;
  const bool integer_mask = dtype != DW_DTYPE_F32 && dtype != DW_DTYPE_F64;
  if (!row_kept)
    {
      /* the whole row rejected: Σ (1 − 0)·m over valid tokens is the row's Σ m */
      run->rs_masked += out->n;
      run->rs_rows_rejected += out->n_valid > 0;
    }
  if (run->defer)
    {
      /* written during the next row's pass, or at the end of the run */
      run->pending = true;
      run->pending_row = row;
      run->pending_kept = row_kept;
    }
  else if (run->n_options == 0 || (row_kept && !run->any_token_option))
    {
      if (run->stream)
        dw_correction_simd_stream_row (target, source, cols * run->mask_size);
      else
        memcpy (target, source, cols * run->mask_size);
    }
  else if (!row_kept && run->stream && integer_mask)
    dw_correction_simd_stream_row (target, NULL, cols * run->mask_size);
  else if (!row_kept)
    {
      /* a float mask keeps −0 and NaN: m·0 */
      dw_correction_fast_mask_row (dtype, source, NULL, target, cols);
    }
  else
    {
      bool rejected = false;
      double row_masked = 0;
      for (size_t col = 0; col < cols; col++)
        {
          /* padding adds (1 − keep)·0 = 0 */
          row_masked += (1.0 - run->keep_row[col]) * run->mask_row[col];
          rejected |= (run->mask_row[col] != 0) & (run->keep_row[col] == 0);
        }
      dw_correction_fast_mask_row (dtype, source, run->keep_row, target, cols);
      run->rs_masked += row_masked;
      run->rs_rows_rejected += rejected;
    }
}

/* the pending row's output mask from value @from on (the values a pass did not write) */
static void
dw_correction_fast_write_pending (DwCorrectionFast *run, size_t from)
{
  const size_t cols = run->context.cols, offset = run->pending_row * cols;
  int64_t *target = (int64_t *)run->masked + offset;
  const int64_t *source = (const int64_t *)run->batch->response_mask + offset;
  if (from < cols)
    dw_correction_simd_stream_row (target + from, run->pending_kept ? source + from : NULL,
                                   (cols - from) * sizeof (int64_t));
  run->pending = false;
}

/* one row: the fused pass, then IS, RS, the output mask and the off-policy sums; false when the
 * mask is not exactly float (the reference path takes over) */
static bool
dw_correction_fast_row (DwCorrectionFast *run, size_t row)
{
  const size_t offset = row * run->context.cols;
  DwRowIn *in = &run->in;
  in->o = (const float *)run->batch->old_log_prob + offset;
  in->r = (const float *)run->batch->rollout_log_prob + offset;
  in->m = run->mask_row;
  in->w = run->token_is ? run->weights + offset : NULL;
  in->stream_w = run->stream && in->w && dw_correction_fast_line_aligned (in->w);
  DwRowOut out;
  out.mask_not_binary = true;
  if (run->fused_mask)
    {
      /* the pass reads the int64 mask itself; a row with other values is done again below */
      in->m_i64 = (const int64_t *)run->batch->response_mask + offset;
      if (run->pending)
        {
          const size_t pending_offset = run->pending_row * run->context.cols;
          in->defer_to = (int64_t *)run->masked + pending_offset;
          in->defer_from = run->pending_kept
                             ? (const int64_t *)run->batch->response_mask + pending_offset
                             : NULL;
        }
      in->m_out = run->mask_row;
      /* only sequence IS and token RS options read the float mask row after the pass */
      in->skip_mask_row = !run->sequence_is && !run->any_token_option;
      dw_correction_simd_row_pass (in, &out);
      in->m_i64 = NULL;
      in->defer_to = NULL;
      if (run->pending)
        dw_correction_fast_write_pending (run, out.deferred);
    }
  bool binary = !out.mask_not_binary;
  if (out.mask_not_binary)
    {
      if (!dw_correction_simd_mask_row_to_float (run->batch, offset, run->context.cols,
                                                 run->mask_row, &binary))
        return false;
      if (run->simd && binary)
        dw_correction_simd_row_pass (in, &out);
      else
        dw_correction_scalar_row_pass (in, &out);
    }
  run->row_count[row] = DW_ROUND (&run->context, out.n);
  run->total += out.n;
  run->any_valid |= out.n_valid > 0;
  run->n_valid_rows += run->row_count[row] > 0;
  if (run->token_is)
    dw_correction_fast_token_is (run, row, &out);
  else if (run->sequence_is)
    dw_correction_fast_sequence_is (run, row, &out, binary);
  dw_correction_fast_rejection (run, row, &out);
  /* off-policy: Σ(rollout − old)·m is −Σℓ·m term by term */
  run->offpolicy_sums.kl += -out.sl;
  run->offpolicy_sums.k3_kl += out.k3kl;
  run->offpolicy_sums.chi2_token += out.chi;
  /* the per-row off-policy sums (three exps a row) are taken for all rows at the end */
  run->offpolicy_rows[3 * row] = out.so;
  run->offpolicy_rows[3 * row + 1] = out.sr;
  run->offpolicy_rows[3 * row + 2] = out.sl;
  return true;
}

/* the IS metrics, batch normalisation and the weights into @result */
static bool
dw_correction_fast_emit_is (DwCorrectionFast *run, DwMetricList *list, DwCorrectionResult *result,
                            DwCorrectionError *error)
{
  const DwContext *context = &run->context;
  const DwPlan *plan = &run->plan;
  const double *row_log = run->sequence_is ? run->row_log : NULL;
  if (run->in.applied)
    {
      if (!dw_verl_is_emit_applied (context, list, plan, &run->applied_sums, row_log,
                                    run->row_means, run->raw_means, error))
        return false;
    }
  else
    dw_ratio_metrics_emit (context, list, "rollout_is", &run->ratio_sums, row_log, plan->is_upper,
                           1.0 / plan->is_upper, run->row_means, false);
  if (plan->batch_normalize)
    {
      const double mean = run->token_is ? dw_context_mean (context, run->normalize_sum)
                                        : run->normalize_sum / fmax (run->normalize_rows, 1e-8);
      if (mean > 1e-8)
        {
          const float divisor = (float)mean;
          for (size_t index = 0; index < context->rows * context->cols; index++)
            run->weights[index] = run->weights[index] / divisor;
          dw_metric_list_put (list, "rollout_is_batch_norm_factor", mean);
        }
      else
        dw_metric_list_put (list, "rollout_is_batch_norm_factor", 1.0);
    }
  result->weights = run->weights;
  result->weights_dtype = DW_DTYPE_F32;
  run->weights = NULL;
  return true;
}

int
dw_correction_fast_run (const DwBatch *batch, const DwPlan *plan, bool share_mask,
                        DwCorrectionResult *result, DwCorrectionError *error)
{
  if (!dw_correction_fast_applies (batch, plan))
    return -1;
  DwCorrectionFast run;
  if (!dw_correction_fast_setup (&run, batch, plan, share_mask))
    {
      dw_correction_fast_free (&run);
      return -1;
    }
  for (size_t row = 0; row < batch->rows; row++)
    if (!dw_correction_fast_row (&run, row))
      {
        dw_correction_fast_free (&run);
        return -1;
      }
  if (!run.any_valid)
    {
      dw_correction_fast_free (&run);
      return -1; /* the reference path raises verl's error */
    }
  DwContext *context = &run.context;
  dw_offpolicy_add_rows (context, &run.offpolicy_sums, run.offpolicy_rows, run.offpolicy_scratch);
  context->total = run.total;
  context->mean_denominator
    = DW_ROUND (context, DW_ROUND (context, run.total) + DW_MASKED_MEAN_EPS);

  DwMetricList list = { .prefix = "rollout_corr/" };
  if (plan->is_on && !dw_correction_fast_emit_is (&run, &list, result, error))
    {
      free (list.m);
      dw_correction_fast_free (&run);
      return 0;
    }
  for (size_t option = 0; option < run.n_options; option++)
    dw_verl_rs_emit_option (context, &list, &plan->rs.bounds[option], &run.rs_sums[option],
                            run.option_values + option * batch->rows, run.n_valid_rows);
  if (run.n_options)
    {
      dw_metric_list_put (&list, "rollout_rs_masked_fraction",
                          dw_context_mean (context, run.rs_masked));
      dw_metric_list_put (&list, "rollout_rs_seq_masked_fraction",
                          run.rs_rows_rejected / (double)batch->rows);
    }
  if (run.pending)
    dw_correction_fast_write_pending (&run, 0);
  if (run.stream)
    dw_correction_simd_stream_fence ();
  result->mask = run.mask_shared ? (void *)batch->response_mask : run.masked;
  result->mask_borrowed = run.mask_shared;
  result->mask_dtype = batch->mask_dtype;
  run.masked = NULL;
  dw_offpolicy_emit (context, &list, &run.offpolicy_sums, false);
  result->rows = batch->rows;
  result->cols = batch->cols;
  return dw_metric_list_finish (result, &list, error) ? 1 : 0;
}
