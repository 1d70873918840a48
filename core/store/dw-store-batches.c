/* dw-store-batches.c — rollout batches and their per-sequence statistics
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A batch is stored as its padded arrays, raw little-endian blobs in the batch's own dtypes, with
 * one row of statistics per sequence (DwRowStats of dw-correction.h) beside it.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "dw-batch-reader.h"
#include "dw-correction.h"
#include "dw-store-private.h"

/* ------------------------------------------------------------------------------------------ */
/* Writers                                                                                     */

static gboolean
dw_store_batches_bind_array (sqlite3_stmt *stmt, int index, const void *data, DwDType dtype,
                             gsize n)
{
  gsize bytes = dw_dtype_size (dtype) * n;

  if (data == NULL)
    return sqlite3_bind_null (stmt, index) == SQLITE_OK;
  if (bytes > G_MAXINT)
    return FALSE;
  return sqlite3_bind_blob (stmt, index, data, (int)bytes, SQLITE_STATIC) == SQLITE_OK;
}

/* Token ids (when @in_full) and rewards beside the batch (or none: a replaced batch loses stale
 * ones). */
static gboolean
dw_store_batches_put_extras (DwStore *self, gint64 batch_id, const DwBatch *batch, gboolean in_full,
                             GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  const gint64 *token_ids = in_full ? batch->token_ids : NULL;

  if (token_ids == NULL && batch->rewards == NULL)
    return _dw_store_query_run (self, error, "storing token ids",
                                "DELETE FROM batch_extras WHERE batch_id = ?1", "i", batch_id);
  stmt = _dw_store_query_new (self, error,
                              "INSERT OR REPLACE INTO batch_extras (batch_id, token_ids, rewards) "
                              "VALUES (?1, ?2, ?3)",
                              "i", batch_id);
  if (stmt == NULL)
    return FALSE;
  if (!dw_store_batches_bind_array (stmt, 2, token_ids, DW_DTYPE_I64, batch->rows * batch->cols)
      || !dw_store_batches_bind_array (stmt, 3, batch->rewards, DW_DTYPE_F64, batch->rows))
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED,
                   _ ("%s: token ids too large for the store"), self->path);
      return FALSE;
    }
  return _dw_store_query_step_done (self, stmt, "storing token ids", error);
}

/* A batch whose padded arrays exceed SQLite's length limit (1 GB by default: a 4 MB packed file
 * can pad past it) cannot be stored: said before anything is written, naming the input, so the
 * ingester skips that one file. */
static gboolean
dw_store_batches_check_fits (DwStore *self, const DwBatch *batch, gint64 step, const char *source,
                             GError **error)
{
  gsize n, bytes;
  gint64 limit = sqlite3_limit (self->db, SQLITE_LIMIT_LENGTH, -1);

  if (batch->lp_dtype != DW_DTYPE_F32 && batch->lp_dtype != DW_DTYPE_F64)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED,
                   _ ("%s: step %" PRId64 ": log-probs must be float32 or float64"), source, step);
      return FALSE;
    }
  if (g_size_checked_mul (&n, batch->rows, batch->cols)
      && g_size_checked_mul (&bytes, n,
                             MAX (dw_dtype_size (batch->lp_dtype), batch->token_ids ? 8u : 1u))
      && (gint64)bytes <= limit)
    return TRUE;
  g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_TOO_LARGE,
               _ ("%s: step %" PRId64 ": the batch pads to %zu × %zu tokens, more than one "
                  "store value can hold (%" PRId64 " bytes per array): skipped"),
               source, step, batch->rows, batch->cols, limit);
  return FALSE;
}

/* The batches row of (@run_id, @step), inserted or replaced: its id, 0 on an error. */
static gint64
dw_store_batches_put_row (DwStore *self, gint64 run_id, gint64 step, const DwBatch *batch,
                          gint64 n_tokens, gboolean in_full, const char *source, GError **error)
{
  /* a batch left in its source file keeps zero-length arrays (its shape stays) */
  gsize n = in_full ? batch->rows * batch->cols : 0;
  static const guint8 none[1];
  g_autoptr (sqlite3_stmt) stmt = _dw_store_query_new (
    self, error,
    "INSERT INTO batches (run_id, step, rows, cols, lp_dtype, source_lp_dtype, "
    "mask_dtype, flags, source, n_tokens, old_log_prob, rollout_log_prob, "
    "response_mask, advantages) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
    "?11, ?12, ?13, ?14) ON CONFLICT (run_id, step) DO UPDATE SET "
    "rows = excluded.rows, cols = excluded.cols, lp_dtype = excluded.lp_dtype, "
    "source_lp_dtype = excluded.source_lp_dtype, mask_dtype = excluded.mask_dtype, "
    "flags = excluded.flags, source = excluded.source, n_tokens = excluded.n_tokens, "
    "old_log_prob = excluded.old_log_prob, "
    "rollout_log_prob = excluded.rollout_log_prob, "
    "response_mask = excluded.response_mask, advantages = excluded.advantages "
    "RETURNING id",
    "iiiinnniti", run_id, step, (gint64)batch->rows, (gint64)batch->cols, (int)batch->lp_dtype,
    (int)batch->source_lp_dtype, (int)batch->mask_dtype, (gint64)batch->flags, source, n_tokens);
  int found;

  if (stmt == NULL)
    return 0;
  if (!dw_store_batches_bind_array (stmt, 11, in_full ? batch->old_log_prob : none, batch->lp_dtype,
                                    n)
      || !dw_store_batches_bind_array (stmt, 12, in_full ? batch->rollout_log_prob : none,
                                       batch->lp_dtype, n)
      || !dw_store_batches_bind_array (stmt, 13, in_full ? batch->response_mask : none,
                                       batch->mask_dtype, n)
      || !dw_store_batches_bind_array (stmt, 14, in_full ? batch->advantages : NULL,
                                       batch->lp_dtype, n))
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED,
                   _ ("%s: step %" PRId64 ": batch too large for the store"), source, step);
      return 0;
    }
  found = _dw_store_query_first_row (self, stmt, "storing a batch", error);
  if (found == 0) /* RETURNING always gives the row */
    _dw_store_query_set_error (self, error, SQLITE_DONE, "storing a batch");
  return found > 0 ? sqlite3_column_int64 (stmt, 0) : 0;
}

/* The per-sequence statistics of @batch_id's @n_rows rows (rows past them, of a replaced larger
 * batch, deleted). */
static gboolean
dw_store_batches_put_sequences (DwStore *self, gint64 batch_id, const DwRowStats *rows,
                                gsize n_rows, GError **error)
{
  g_autoptr (sqlite3_stmt) seq = NULL;

  if (!_dw_store_query_run (self, error, "storing sequence statistics",
                            "DELETE FROM sequences WHERE batch_id = ?1 AND row >= ?2", "ii",
                            batch_id, (gint64)n_rows))
    return FALSE;
  seq = _dw_store_query_prepare (
    self,
    "INSERT OR REPLACE INTO sequences (batch_id, row, n_valid, n, sum_l, sum_old, sum_roll, "
    "sum_k1, sum_k2, sum_k3, max_k1, max_k2, max_k3, min_l) VALUES "
    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    error);
  if (seq == NULL)
    return FALSE;
  for (gsize row = 0; row < n_rows; row++)
    {
      const DwRowStats *stats = &rows[row];

      _dw_store_query_bind (seq, "iiiddddddddddd", batch_id, (gint64)row, (gint64)stats->n_valid,
                            stats->n, stats->sum_l, stats->sum_old, stats->sum_roll,
                            stats->sum_k[0], stats->sum_k[1], stats->sum_k[2], stats->max_k[0],
                            stats->max_k[1], stats->max_k[2], stats->min_l);
      if (!_dw_store_query_step_done (self, seq, "storing sequence statistics", error))
        return FALSE;
    }
  return TRUE;
}

gboolean
dw_store_put_batch (DwStore *self, gint64 run_id, gint64 step, const DwBatch *batch,
                    const char *source, GError **error)
{
  g_autofree DwRowStats *rows = NULL;
  g_autofree DwTokenRecord *sorted = NULL;
  gsize n_sorted;
  gint64 n_tokens = 0, batch_id, source_size, source_mtime_us, bytes;
  gboolean in_full;

  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  if (!_dw_store_query_check_writable (self, error)
      || !dw_store_batches_check_fits (self, batch, step, source, error))
    return FALSE;
  rows = g_new0 (DwRowStats, MAX (batch->rows, 1));
  dw_row_stats_compute (batch, rows);
  for (gsize row = 0; row < batch->rows; row++)
    n_tokens += rows[row].n_valid;

  bytes = (gint64)(batch->rows * batch->cols)
          * (gint64)(2 * dw_dtype_size (batch->lp_dtype) + dw_dtype_size (batch->mask_dtype)
                     + (batch->advantages ? dw_dtype_size (batch->lp_dtype) : 0)
                     + (batch->token_ids ? sizeof (gint64) : 0));
  if (!_dw_store_tokens_keep_in_full (self, run_id, step, bytes, source, &in_full, &source_size,
                                      &source_mtime_us, error))
    return FALSE;

  batch_id = dw_store_batches_put_row (self, run_id, step, batch, n_tokens, in_full, source, error);
  if (batch_id == 0 || !dw_store_batches_put_extras (self, batch_id, batch, in_full, error)
      || !dw_store_batches_put_sequences (self, batch_id, rows, batch->rows, error))
    return FALSE;
  /* the step statistics read the sorted tokens before the summary moves its tails together */
  sorted = _dw_store_tokens_sorted (batch, &n_sorted);
  return _dw_store_stats_put (self, batch_id, batch, sorted, n_sorted, error)
         && _dw_store_tokens_put (self, batch_id, batch, sorted, n_sorted, in_full ? NULL : source,
                                  source_size, source_mtime_us, error);
}
/* ------------------------------------------------------------------------------------------ */
/* The 6 → 7 migration                                                                         */

typedef struct
{
  gint64 batch_id, run_id, step;
} DwStoreBatchesStats;

static void
dw_store_batches_stats_batch_cb (sqlite3_stmt *stmt, gpointer user_data)
{
  DwStoreBatchesStats batch = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1),
                                sqlite3_column_int64 (stmt, 2) };

  g_array_append_val ((GArray *)user_data, batch);
}

gboolean
_dw_store_batches_fill_stats (DwStore *self, GError **error)
{
  g_autoptr (GArray) batches = g_array_new (FALSE, FALSE, sizeof (DwStoreBatchesStats));

  if (!_dw_store_query_rows (self, error, "migrating step statistics",
                             dw_store_batches_stats_batch_cb, batches,
                             "SELECT b.id, b.run_id, b.step FROM batches b WHERE NOT EXISTS "
                             "(SELECT 1 FROM step_stats s WHERE s.batch_id = b.id) ORDER BY b.id",
                             ""))
    return FALSE;
  for (guint index = 0; index < batches->len; index++)
    {
      const DwStoreBatchesStats *entry = &g_array_index (batches, DwStoreBatchesStats, index);
      g_autoptr (GError) local = NULL;
      g_autoptr (DwBatch) batch = dw_store_load_batch (self, entry->run_id, entry->step, &local);
      g_autofree DwTokenRecord *sorted = NULL;
      gsize n_tokens;

      if (batch == NULL)
        {
          /* the raw tokens are gone (or damaged): the statistics stay missing, said once */
          g_message ("%s: step %" PRId64 " of run %" PRId64 " keeps no step statistics: %s",
                     self->path, entry->step, entry->run_id, local->message);
          continue;
        }
      sorted = _dw_store_tokens_sorted (batch, &n_tokens);
      if (!_dw_store_stats_put (self, entry->batch_id, batch, sorted, n_tokens, error))
        return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Readers                                                                                     */

GArray *
dw_store_list_batch_steps (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (gint64));

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  if (!_dw_store_query_rows (self, error, "listing batches", _dw_store_query_append_int64_cb, steps,
                             "SELECT step FROM batches WHERE run_id = ?1 ORDER BY step", "i",
                             run_id))
    return NULL;
  return g_steal_pointer (&steps);
}

/* Whether column @col holds exactly @n elements of @dtype. */
static gboolean
dw_store_batches_blob_fits (sqlite3_stmt *stmt, int col, gsize n, int dtype)
{
  gsize bytes;

  return g_size_checked_mul (&bytes, n, dw_dtype_size (dtype))
         && (gsize)sqlite3_column_bytes (stmt, col) == bytes;
}

static gboolean
dw_store_batches_copy_blob (sqlite3_stmt *stmt, int col, void *dest, gsize bytes)
{
  if (sqlite3_column_type (stmt, col) == SQLITE_NULL)
    return dest == NULL;
  if (dest == NULL || (gsize)sqlite3_column_bytes (stmt, col) != bytes)
    return FALSE;
  memcpy (dest, sqlite3_column_blob (stmt, col), bytes);
  return TRUE;
}

/* The batch of the row @stmt is on (see dw_store_load_batch's query), NULL when its sizes and
 * blobs disagree (a damaged or crafted store). */
static DwBatch *
dw_store_batches_from_row (sqlite3_stmt *stmt, gint64 step)
{
  g_autoptr (DwBatch) batch = NULL;
  gint64 rows = sqlite3_column_int64 (stmt, 0), cols = sqlite3_column_int64 (stmt, 1);
  int lp_dtype = sqlite3_column_int (stmt, 2), mask_dtype = sqlite3_column_int (stmt, 4);
  gsize n, lp_size;

  /* the sizes must agree with the stored blobs before anything is allocated: a crafted row
   * count (rows = 2^62) would otherwise ask for exabytes */
  if (rows < 0 || cols < 0 || (lp_dtype != DW_DTYPE_F32 && lp_dtype != DW_DTYPE_F64)
      || mask_dtype < 0 || mask_dtype >= DW_N_DTYPES
      || !g_size_checked_mul (&n, (gsize)rows, (gsize)cols)
      || !dw_store_batches_blob_fits (stmt, 6, n, lp_dtype)
      || !dw_store_batches_blob_fits (stmt, 7, n, lp_dtype)
      || !dw_store_batches_blob_fits (stmt, 8, n, mask_dtype)
      || (sqlite3_column_type (stmt, 9) != SQLITE_NULL
          && !dw_store_batches_blob_fits (stmt, 9, n, lp_dtype))
      || (batch = dw_batch_new ((size_t)rows, (size_t)cols, lp_dtype, mask_dtype)) == NULL)
    return NULL;
  lp_size = n * dw_dtype_size (lp_dtype);
  batch->source_lp_dtype = sqlite3_column_int (stmt, 3);
  batch->flags = (uint32_t)sqlite3_column_int64 (stmt, 5);
  batch->step = step;
  if (sqlite3_column_type (stmt, 9) != SQLITE_NULL)
    batch->advantages = g_malloc (MAX (lp_size, 1));
  if (sqlite3_column_type (stmt, 10) != SQLITE_NULL)
    batch->token_ids = g_malloc (MAX (n * sizeof (gint64), 1));
  if (sqlite3_column_type (stmt, 11) != SQLITE_NULL)
    batch->rewards = g_malloc (MAX ((gsize)rows * sizeof (double), 1));
  if (!dw_store_batches_copy_blob (stmt, 6, batch->old_log_prob, lp_size)
      || !dw_store_batches_copy_blob (stmt, 7, batch->rollout_log_prob, lp_size)
      || !dw_store_batches_copy_blob (stmt, 8, batch->response_mask, n * dw_dtype_size (mask_dtype))
      || !dw_store_batches_copy_blob (stmt, 9, batch->advantages, lp_size)
      || !dw_store_batches_copy_blob (stmt, 10, batch->token_ids, n * sizeof (gint64))
      || !dw_store_batches_copy_blob (stmt, 11, batch->rewards, (gsize)rows * sizeof (double)))
    return NULL;
  return g_steal_pointer (&batch);
}

DwBatch *
dw_store_load_batch (DwStore *self, gint64 run_id, gint64 step, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  DwBatch *batch;
  int found;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = _dw_store_query_new (
    self, error,
    "SELECT rows, cols, lp_dtype, source_lp_dtype, mask_dtype, flags, old_log_prob, "
    "rollout_log_prob, response_mask, advantages, x.token_ids, x.rewards, r.path, r.size, "
    "r.mtime_us FROM batches LEFT JOIN batch_extras x ON x.batch_id = batches.id "
    "LEFT JOIN batch_refs r ON r.batch_id = batches.id WHERE run_id = ?1 AND step = ?2",
    "ii", run_id, step);
  if (stmt == NULL
      || (found = _dw_store_query_first_row (self, stmt, "reading a batch", error)) < 0)
    return NULL;
  if (found == 0)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND,
                   _ ("%s: run %" PRId64 " has no batch at step %" PRId64), self->path, run_id,
                   step);
      return NULL;
    }
  if (sqlite3_column_type (stmt, 12) != SQLITE_NULL)
    return _dw_store_tokens_read_source (
      self, step, (const char *)sqlite3_column_text (stmt, 12), sqlite3_column_int64 (stmt, 13),
      sqlite3_column_int64 (stmt, 14), sqlite3_column_int64 (stmt, 0),
      sqlite3_column_int64 (stmt, 1), error);
  if ((batch = dw_store_batches_from_row (stmt, step)) == NULL)
    g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                 _ ("%s: the stored batch of run %" PRId64 " step %" PRId64 " is damaged"),
                 self->path, run_id, step);
  return batch;
}

static void
dw_store_batches_sequence_cb (sqlite3_stmt *stmt, gpointer out)
{
  DwSequenceStats stats;

  stats.row = sqlite3_column_int64 (stmt, 0);
  stats.n_valid = sqlite3_column_int64 (stmt, 1);
  stats.n = _dw_store_query_column_double_or_nan (stmt, 2);
  stats.sum_l = _dw_store_query_column_double_or_nan (stmt, 3);
  stats.sum_old = _dw_store_query_column_double_or_nan (stmt, 4);
  stats.sum_roll = _dw_store_query_column_double_or_nan (stmt, 5);
  for (int k = 0; k < 3; k++)
    {
      stats.sum_k[k] = _dw_store_query_column_double_or_nan (stmt, 6 + k);
      stats.max_k[k] = _dw_store_query_column_double_or_nan (stmt, 9 + k);
    }
  stats.min_l = _dw_store_query_column_double_or_nan (stmt, 12);
  g_array_append_val ((GArray *)out, stats);
}

GArray *
dw_store_get_sequence_stats (DwStore *self, gint64 run_id, gint64 step, GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, TRUE, sizeof (DwSequenceStats));

  if (
    !_dw_store_query_rows (
      self, error, "reading sequence statistics", dw_store_batches_sequence_cb, out,
      "SELECT s.row, s.n_valid, s.n, s.sum_l, s.sum_old, s.sum_roll, s.sum_k1, s.sum_k2, s.sum_k3, "
      "s.max_k1, s.max_k2, s.max_k3, s.min_l FROM sequences s JOIN batches b ON b.id = s.batch_id "
      "WHERE b.run_id = ?1 AND b.step = ?2 ORDER BY s.row",
      "ii", run_id, step))
    return NULL;
  return g_steal_pointer (&out);
}
