/* dw-batch-tokens.c — the drill-down from a step to its sequences and tokens
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-batch-tokens.h"

#include <math.h>
#include <string.h>

#include "dw-correction.h"

static const char *const seq_stat_names[DW_N_SEQ_STATS] = {
  [DW_SEQ_STAT_K1_SUM] = "k1_sum",   [DW_SEQ_STAT_K2_SUM] = "k2_sum",
  [DW_SEQ_STAT_K3_SUM] = "k3_sum",   [DW_SEQ_STAT_K1_MEAN] = "k1_mean",
  [DW_SEQ_STAT_K2_MEAN] = "k2_mean", [DW_SEQ_STAT_K3_MEAN] = "k3_mean",
  [DW_SEQ_STAT_K1_MAX] = "k1_max",   [DW_SEQ_STAT_K2_MAX] = "k2_max",
  [DW_SEQ_STAT_K3_MAX] = "k3_max",   [DW_SEQ_STAT_MAX_ABS_LOG_RATIO] = "max_abs_log_ratio",
  [DW_SEQ_STAT_LENGTH] = "length",   [DW_SEQ_STAT_REWARD] = "reward",
};

const char *
dw_batch_tokens_stat_name (DwSeqStat stat)
{
  return stat < DW_N_SEQ_STATS ? seq_stat_names[stat] : "?";
}

gboolean
dw_batch_tokens_stat_from_name (const char *name, DwSeqStat *stat)
{
  for (int index = 0; index < DW_N_SEQ_STATS; index++)
    if (g_strcmp0 (name, seq_stat_names[index]) == 0)
      {
        *stat = (DwSeqStat)index;
        return TRUE;
      }
  return FALSE;
}

static double
dw_batch_tokens_lp_value (const DwBatch *batch, const void *array, gsize index)
{
  return batch->lp_dtype == DW_DTYPE_F64 ? ((const double *)array)[index]
                                         : ((const float *)array)[index];
}

/* ------------------------------------------------------------------------------------------ */
/* Ranking sequences                                                                          */

static gint
dw_batch_tokens_ranked_cmp (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const DwSeqRanked *left = a, *right = b;
  DwSeqStat stat = GPOINTER_TO_INT (user_data);
  double left_value = left->stats[stat], right_value = right->stats[stat];

  if (isnan (left_value) != isnan (right_value))
    return isnan (left_value) ? 1 : -1;
  if (!isnan (left_value) && left_value != right_value)
    return left_value > right_value ? -1 : 1;
  return left->row < right->row ? -1 : left->row > right->row;
}

GArray *
dw_batch_tokens_rank (const DwBatch *batch, DwSeqStat by)
{
  g_autofree DwRowStats *rows = g_new0 (DwRowStats, MAX (batch->rows, 1));
  GArray *out = g_array_sized_new (FALSE, TRUE, sizeof (DwSeqRanked), (guint)batch->rows);

  dw_row_stats_compute (batch, rows);
  for (gsize row_index = 0; row_index < batch->rows; row_index++)
    {
      DwSeqRanked ranked = { (guint)row_index, rows[row_index].n_valid, { 0 } };
      double denom = rows[row_index].n + 1e-8, max_abs = 0.0;

      for (int estimator = 0; estimator < 3; estimator++)
        {
          ranked.stats[DW_SEQ_STAT_K1_SUM + estimator] = rows[row_index].sum_k[estimator];
          ranked.stats[DW_SEQ_STAT_K1_MEAN + estimator] = rows[row_index].sum_k[estimator] / denom;
          ranked.stats[DW_SEQ_STAT_K1_MAX + estimator] = rows[row_index].max_k[estimator];
        }
      /* k1 = −ℓ̃: its maximum is minus the smallest clamped log-ratio (0 for an empty row) */
      ranked.stats[DW_SEQ_STAT_K1_MAX]
        = rows[row_index].n_valid > 0 ? -CLAMP (rows[row_index].min_l, -20.0, 20.0) : 0.0;
      for (gsize token = 0; token < batch->cols; token++)
        {
          gsize index = row_index * batch->cols + token;
          if (dw_batch_mask_value (batch, index) != 0.0)
            {
              double l = dw_batch_tokens_lp_value (batch, batch->old_log_prob, index)
                         - dw_batch_tokens_lp_value (batch, batch->rollout_log_prob, index);
              if (fabs (l) > max_abs || isnan (l))
                max_abs = isnan (l) ? NAN : fabs (l);
              if (isnan (max_abs))
                break;
            }
        }
      ranked.stats[DW_SEQ_STAT_MAX_ABS_LOG_RATIO] = max_abs;
      ranked.stats[DW_SEQ_STAT_LENGTH] = (double)rows[row_index].n_valid;
      ranked.stats[DW_SEQ_STAT_REWARD] = batch->rewards ? batch->rewards[row_index] : NAN;
      g_array_append_val (out, ranked);
    }
  g_array_sort_with_data (out, dw_batch_tokens_ranked_cmp, GINT_TO_POINTER (by));
  return out;
}

/* ------------------------------------------------------------------------------------------ */
/* One sequence                                                                               */

GArray *
dw_batch_tokens_sequence (const DwBatch *batch, guint row)
{
  GArray *out = g_array_new (FALSE, TRUE, sizeof (DwTokenRow));
  gsize last = 0;

  if (row >= batch->rows)
    return out;
  for (gsize token = 0; token < batch->cols; token++)
    if (dw_batch_mask_value (batch, row * batch->cols + token) != 0.0)
      last = token + 1;
  for (gsize token = 0; token < last; token++)
    {
      gsize index = row * batch->cols + token;
      DwTokenRow token_row;
      token_row.position = (guint)token;
      token_row.token_id = batch->token_ids ? batch->token_ids[index] : -1;
      token_row.old_log_prob = dw_batch_tokens_lp_value (batch, batch->old_log_prob, index);
      token_row.rollout_log_prob = dw_batch_tokens_lp_value (batch, batch->rollout_log_prob, index);
      token_row.log_ratio = token_row.old_log_prob - token_row.rollout_log_prob;
      token_row.mask = dw_batch_mask_value (batch, index);
      g_array_append_val (out, token_row);
    }
  return out;
}

/* ------------------------------------------------------------------------------------------ */
/* Catastrophic tokens across a run                                                           */

struct _DwCatastrophes
{
  double threshold;
  GHashTable *by_token; /* gint64* → DwCatastrophicToken* */
  guint64 total;
};

static void
dw_batch_tokens_catastrophic_token_free (gpointer data)
{
  DwCatastrophicToken *token = data;
  g_array_unref (token->steps);
  g_array_unref (token->counts);
  g_free (token);
}

DwCatastrophes *
dw_batch_tokens_catastrophes_new (double threshold)
{
  DwCatastrophes *self = g_new0 (DwCatastrophes, 1);
  self->threshold = threshold;
  self->by_token = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                          dw_batch_tokens_catastrophic_token_free);
  return self;
}

void
dw_batch_tokens_catastrophes_free (DwCatastrophes *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->by_token);
  g_free (self);
}

gboolean
dw_batch_tokens_catastrophes_add (DwCatastrophes *self, const DwBatch *batch, gint64 step)
{
  gsize n_cells = batch->rows * batch->cols;

  if (batch->token_ids == NULL)
    return FALSE;
  for (gsize index = 0; index < n_cells; index++)
    {
      double logprob;
      DwCatastrophicToken *t;
      guint last;

      if (dw_batch_mask_value (batch, index) == 0.0)
        continue;
      logprob = dw_batch_tokens_lp_value (batch, batch->old_log_prob, index)
                - dw_batch_tokens_lp_value (batch, batch->rollout_log_prob, index);
      if (!(fabs (logprob) > self->threshold)) /* NaN counts too: a broken token is catastrophic */
        if (!isnan (logprob))
          continue;
      t = g_hash_table_lookup (self->by_token, &batch->token_ids[index]);
      if (t == NULL)
        {
          t = g_new0 (DwCatastrophicToken, 1);
          t->token_id = batch->token_ids[index];
          t->steps = g_array_new (FALSE, FALSE, sizeof (gint64));
          t->counts = g_array_new (FALSE, FALSE, sizeof (guint64));
          g_hash_table_insert (self->by_token, &t->token_id, t);
        }
      t->count++;
      self->total++;
      last = t->steps->len;
      if (last == 0 || g_array_index (t->steps, gint64, last - 1) != step)
        {
          guint64 zero = 0;
          g_array_append_val (t->steps, step);
          g_array_append_val (t->counts, zero);
          last++;
        }
      g_array_index (t->counts, guint64, last - 1)++;
    }
  return TRUE;
}

guint64
dw_batch_tokens_catastrophes_get_total (const DwCatastrophes *self)
{
  return self->total;
}

static gint
dw_batch_tokens_catastrophic_cmp (gconstpointer a, gconstpointer b)
{
  const DwCatastrophicToken *left = *(DwCatastrophicToken *const *)a;
  const DwCatastrophicToken *right = *(DwCatastrophicToken *const *)b;

  if (left->count != right->count)
    return left->count > right->count ? -1 : 1;
  return left->token_id < right->token_id ? -1 : left->token_id > right->token_id;
}

GPtrArray *
dw_batch_tokens_catastrophes_top (const DwCatastrophes *self, guint top)
{
  GPtrArray *all = g_ptr_array_new ();
  GPtrArray *out = g_ptr_array_new_with_free_func (dw_batch_tokens_catastrophic_token_free);
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->by_token);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (all, value);
  g_ptr_array_sort (all, dw_batch_tokens_catastrophic_cmp);
  for (guint index = 0; index < all->len && index < top; index++)
    {
      const DwCatastrophicToken *src = g_ptr_array_index (all, index);
      DwCatastrophicToken *copy = g_new0 (DwCatastrophicToken, 1);
      copy->token_id = src->token_id;
      copy->count = src->count;
      copy->steps = g_array_copy (src->steps);
      copy->counts = g_array_copy (src->counts);
      g_ptr_array_add (out, copy);
    }
  g_ptr_array_unref (all);
  return out;
}
