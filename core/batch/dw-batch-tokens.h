/* dw-batch-tokens.h — the drill-down from a step to its sequences and tokens
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Three questions over stored batches (docs/FORMATS-BATCH.md §5): which sequences of a step stand
 * out by a per-sequence statistic; what each token of one sequence contributed (log-ratio
 * ℓ = old − rollout, with its token id); and which token ids are most often behind catastrophic
 * ratios (|ℓ| > threshold) across a run. Statistics follow the correction core's definitions
 * (dw_row_stats_compute: k1 = −ℓ̃, k2 = ½ ℓ̃², k3 = exp ℓ̃ − 1 − ℓ̃ with ℓ̃ = clamp(ℓ, −20, 20)).
 */
#pragma once

#include <glib.h>

#include "dw-batch.h"

G_BEGIN_DECLS

typedef enum
{
  DW_SEQ_STAT_K1_SUM,
  DW_SEQ_STAT_K2_SUM,
  DW_SEQ_STAT_K3_SUM,
  DW_SEQ_STAT_K1_MEAN,
  DW_SEQ_STAT_K2_MEAN,
  DW_SEQ_STAT_K3_MEAN,
  DW_SEQ_STAT_K1_MAX,
  DW_SEQ_STAT_K2_MAX,
  DW_SEQ_STAT_K3_MAX,
  DW_SEQ_STAT_MAX_ABS_LOG_RATIO,
  DW_SEQ_STAT_LENGTH,
  DW_SEQ_STAT_REWARD,
  DW_N_SEQ_STATS
} DwSeqStat;

/* "k1_sum", "k3_mean", "k2_max", "max_abs_log_ratio", "length", "reward", … */
const char *dw_batch_tokens_stat_name (DwSeqStat stat);
gboolean dw_batch_tokens_stat_from_name (const char *name, DwSeqStat *stat);

typedef struct
{
  guint row;
  gint64 n_valid;
  double stats[DW_N_SEQ_STATS]; /* NaN where unknown (reward without rewards) */
} DwSeqRanked;

/* Every row of @batch with its statistics, sorted by @by, largest first (NaN last, ties by
 * row). */
GArray *dw_batch_tokens_rank (const DwBatch *batch, DwSeqStat by);

typedef struct
{
  guint position;  /* index in the response */
  gint64 token_id; /* -1 when the batch has no token ids */
  double old_log_prob, rollout_log_prob;
  double log_ratio; /* old − rollout */
  double mask;
} DwTokenRow;

/* The valid and padded tokens of row @row up to its last non-zero mask element. */
GArray *dw_batch_tokens_sequence (const DwBatch *batch, guint row);

/* Counts of catastrophic tokens (|ℓ| > threshold on a valid token) per token id and step. */
typedef struct _DwCatastrophes DwCatastrophes;

typedef struct
{
  gint64 token_id;
  guint64 count;
  GArray *steps;  /* gint64 step, in increasing order */
  GArray *counts; /* guint64, parallel to @steps */
} DwCatastrophicToken;

DwCatastrophes *dw_batch_tokens_catastrophes_new (double threshold);
void dw_batch_tokens_catastrophes_free (DwCatastrophes *self);
/* Adds @batch's tokens; FALSE (nothing added) when it has no token ids. */
gboolean dw_batch_tokens_catastrophes_add (DwCatastrophes *self, const DwBatch *batch, gint64 step);
guint64 dw_batch_tokens_catastrophes_get_total (const DwCatastrophes *self);
/* The @top token ids by count (ties by id), each a DwCatastrophicToken owned by the array. */
GPtrArray *dw_batch_tokens_catastrophes_top (const DwCatastrophes *self, guint top);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwCatastrophes, dw_batch_tokens_catastrophes_free)

G_END_DECLS
