/* dw-store-tokens.c — a bounded store: the token summary of every batch, the per-run budget of
 * raw per-token data copied in full, and raw data read back from a referenced source file
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * docs/STORE.md says what is kept and what is referenced. The summary's blobs are arrays of the
 * public structs of dw-store.h in the machine's (little-endian) byte order, like the batch arrays:
 *   tails      (n_low + n_high) × DwTokenRecord, the low tail then the high tail, ascending
 *   bins       n_bins × DwTokenBin
 *   kept_rows  per row: gint32 row, gint32 n, n × float ℓ, n × gint32 token id
 * A reader checks every length against the counts before it copies anything.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "dw-batch-reader.h"
#include "dw-store-private.h"
#include "dw-torch.h"

/* the fraction of the tokens kept in full on each side (at least 256, at most 16384 a side), the
 * bins of the bulk between them (at most 1024, at least 64 tokens each), and the rows kept in full
 * (at most 32768 tokens together) */
#define DW_STORE_TOKENS_TAIL           0.005
#define DW_STORE_TOKENS_TAIL_MIN       256
#define DW_STORE_TOKENS_TAIL_MAX       16384
#define DW_STORE_TOKENS_BINS           1024
#define DW_STORE_TOKENS_BIN_TOKENS     64
#define DW_STORE_TOKENS_ROWS           4
#define DW_STORE_TOKENS_ROWS_MAX_CELLS 32768

void
dw_store_set_keep_tokens (DwStore *self, gint64 bytes)
{
  g_return_if_fail (DW_IS_STORE (self));
  self->keep_tokens = bytes < 0 ? -1 : bytes;
}

gint64
dw_store_get_keep_tokens (DwStore *self)
{
  g_return_val_if_fail (DW_IS_STORE (self), -1);
  return self->keep_tokens;
}

gboolean
dw_store_parse_size (const char *text, gint64 *bytes, GError **error)
{
  g_autofree char *lower = g_ascii_strdown (text != NULL ? text : "", -1);
  char *end = NULL;
  double value;
  double unit = 1;

  if (g_strcmp0 (lower, "all") == 0 || g_strcmp0 (lower, "unlimited") == 0)
    {
      *bytes = -1;
      return TRUE;
    }
  value = g_ascii_strtod (lower, &end);
  if (end != lower && *end != '\0')
    {
      unit = strchr ("kmgt", *end) != NULL && *end != '\0'
               ? pow (1024.0, (double)(strchr ("kmgt", *end) - "kmgt" + 1))
               : 0;
      if (end[1] != '\0' && g_strcmp0 (end + 1, "b") != 0 && g_strcmp0 (end + 1, "ib") != 0)
        unit = 0;
    }
  if (end == lower || unit == 0 || !(value >= 0) || value * unit > (double)G_MAXINT64 / 2)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED,
                   _ ("“%s” is not a size (e.g. 64M, 2G, 512k, a number of bytes, or “all”)"),
                   text != NULL ? text : "");
      return FALSE;
    }
  *bytes = (gint64)(value * unit);
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* The budget and the reference                                                               */

gboolean
_dw_store_tokens_keep_in_full (DwStore *self, gint64 run_id, gint64 step, gint64 bytes,
                               const char *source, gboolean *in_full, gint64 *size,
                               gint64 *mtime_us, GError **error)
{
  GStatBuf info;
  gboolean ok;
  g_autofree char *sql = NULL;
  gint64 kept;

  *size = *mtime_us = 0;
  *in_full = TRUE;
  if (self->keep_tokens < 0 || source == NULL || g_stat (source, &info) != 0
      || !S_ISREG (info.st_mode))
    return TRUE; /* no limit, or nothing to reference: copied as before the budget existed */
  *size = info.st_size;
  *mtime_us = (gint64)info.st_mtim.tv_sec * G_USEC_PER_SEC + info.st_mtim.tv_nsec / 1000;
  sql = g_strdup_printf (
    "SELECT coalesce (sum (length (old_log_prob) + length (rollout_log_prob) + "
    "length (response_mask) + coalesce (length (advantages), 0) + coalesce ((SELECT length "
    "(token_ids) FROM batch_extras x WHERE x.batch_id = batches.id), 0)), 0) FROM batches "
    "WHERE run_id = %" G_GINT64_FORMAT " AND step <> %" G_GINT64_FORMAT,
    run_id, step);
  kept = _dw_store_query_int (self, sql, "reading the run's kept tokens", error, &ok);
  if (!ok)
    return FALSE;
  *in_full = kept + bytes <= self->keep_tokens;
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* The summary                                                                                 */

/* ascending ℓ, NaN last */
static int
dw_store_tokens_compare (const void *a, const void *b)
{
  double left = ((const DwTokenRecord *)a)->log_ratio,
         right = ((const DwTokenRecord *)b)->log_ratio;

  if (isnan (left) || isnan (right))
    return isnan (left) - isnan (right);
  return (left > right) - (left < right);
}

static inline double
dw_store_tokens_log_prob_at (const DwBatch *batch, const void *log_probs, gsize index)
{
  return batch->lp_dtype == DW_DTYPE_F32 ? (double)((const float *)log_probs)[index]
                                         : ((const double *)log_probs)[index];
}

/* ℓ of the valid token at @index, as the what-if engine computes it (in the batch's dtype) */
static inline double
dw_store_tokens_log_ratio (const DwBatch *batch, gsize index)
{
  double old_lp = dw_store_tokens_log_prob_at (batch, batch->old_log_prob, index);
  double rollout_lp = dw_store_tokens_log_prob_at (batch, batch->rollout_log_prob, index);

  return batch->lp_dtype == DW_DTYPE_F32 ? (double)((float)old_lp - (float)rollout_lp)
                                         : old_lp - rollout_lp;
}

DwTokenRecord *
_dw_store_tokens_sorted (const DwBatch *batch, gsize *n_tokens)
{
  gsize n_cells = batch->rows * batch->cols, n = 0, n_valid = 0;
  DwTokenRecord *tokens;

  /* sized by the valid tokens, not the padded cells (a 512 × 8192 step half padding) */
  for (gsize index = 0; index < n_cells; index++)
    n_valid += dw_batch_mask_value (batch, index) != 0;
  tokens = g_new (DwTokenRecord, MAX (n_valid, 1));
  for (gsize index = 0; index < n_cells; index++)
    {
      if (dw_batch_mask_value (batch, index) == 0)
        continue;
      tokens[n].log_ratio = dw_store_tokens_log_ratio (batch, index);
      tokens[n].row = (gint32)(index / batch->cols);
      tokens[n].col = (gint32)(index % batch->cols);
      tokens[n].token_id = batch->token_ids != NULL ? batch->token_ids[index] : -1;
      n++;
    }
  qsort (tokens, n, sizeof *tokens, dw_store_tokens_compare);
  *n_tokens = n;
  return tokens;
}

static void
dw_store_tokens_bin_add (DwTokenBin *bin, double log_ratio)
{
  double clamped = dw_torch_clamp (log_ratio, -DW_TORCH_SAFETY_BOUND, DW_TORCH_SAFETY_BOUND);
  double weight = exp (clamped), k3 = weight - 1.0 - clamped;

  if (bin->count == 0)
    bin->first = log_ratio;
  bin->last = log_ratio;
  bin->count++;
  bin->sum_log += clamped;
  bin->sum_log_sq += clamped * clamped;
  bin->sum_weight += weight;
  bin->sum_weight_sq += weight * weight;
  bin->sum_k3 += k3;
  bin->sum_k3_sq += k3 * k3;
}

/* The bulk tokens[start, end) in bins of equal counts: DW_STORE_TOKENS_BINS, fewer for a small
 * step (at least DW_STORE_TOKENS_BIN_TOKENS tokens a bin, so a summary never outweighs its data).
 */
static GByteArray *
dw_store_tokens_bins (const DwTokenRecord *tokens, gsize start, gsize end)
{
  gsize n = end - start;
  gsize n_bins = CLAMP (n / DW_STORE_TOKENS_BIN_TOKENS, MIN (n, 1), DW_STORE_TOKENS_BINS);
  GByteArray *bins = g_byte_array_sized_new (n_bins * sizeof (DwTokenBin));

  for (gsize bin_index = 0; bin_index < n_bins; bin_index++)
    {
      DwTokenBin bin = { 0 };
      gsize first = start + n * bin_index / n_bins, last = start + n * (bin_index + 1) / n_bins;

      for (gsize index = first; index < last; index++)
        dw_store_tokens_bin_add (&bin, tokens[index].log_ratio);
      g_byte_array_append (bins, (const guint8 *)&bin, sizeof bin);
    }
  return bins;
}

/* The DW_STORE_TOKENS_ROWS rows of largest max |ℓ| (NaN first), in full. */
static GByteArray *
dw_store_tokens_kept_rows (const DwBatch *batch, const DwTokenRecord *tokens, gsize n_tokens)
{
  GByteArray *out = g_byte_array_new ();
  g_autoptr (GHashTable) chosen = g_hash_table_new (NULL, NULL);
  gsize cells = 0;

  /* the most extreme tokens, from both ends inwards, name the rows */
  for (gsize low = 0, high = n_tokens;
       low < high && g_hash_table_size (chosen) < DW_STORE_TOKENS_ROWS;)
    {
      const DwTokenRecord *pick
        = isnan (tokens[high - 1].log_ratio)
              || fabs (tokens[high - 1].log_ratio) >= fabs (tokens[low].log_ratio)
            ? &tokens[--high]
            : &tokens[low++];
      gsize row = (gsize)pick->row, n_valid = 0;

      if (g_hash_table_contains (chosen, GSIZE_TO_POINTER (row + 1)))
        continue;
      for (gsize col = 0; col < batch->cols; col++)
        n_valid += dw_batch_mask_value (batch, row * batch->cols + col) != 0;
      g_hash_table_add (chosen, GSIZE_TO_POINTER (row + 1));
      if (cells + n_valid > DW_STORE_TOKENS_ROWS_MAX_CELLS)
        continue;
      cells += n_valid;
      {
        gint32 header[2] = { (gint32)row, (gint32)n_valid };
        g_byte_array_append (out, (const guint8 *)header, sizeof header);
      }
      for (gsize col = 0; col < batch->cols; col++)
        if (dw_batch_mask_value (batch, row * batch->cols + col) != 0)
          {
            float value = (float)dw_store_tokens_log_ratio (batch, row * batch->cols + col);
            g_byte_array_append (out, (const guint8 *)&value, sizeof value);
          }
      for (gsize col = 0; col < batch->cols; col++)
        if (dw_batch_mask_value (batch, row * batch->cols + col) != 0)
          {
            gint32 id
              = batch->token_ids != NULL
                  ? (gint32)CLAMP (batch->token_ids[row * batch->cols + col], -1, G_MAXINT32)
                  : -1;
            g_byte_array_append (out, (const guint8 *)&id, sizeof id);
          }
    }
  return out;
}

gboolean
_dw_store_tokens_put (DwStore *self, gint64 batch_id, const DwBatch *batch, DwTokenRecord *tokens,
                      gsize n_tokens, const char *source, gint64 size, gint64 mtime_us,
                      GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GByteArray) bins = NULL, kept_rows = NULL;
  gsize tail, n_low, n_high;

  tail = CLAMP ((gsize)((double)n_tokens * DW_STORE_TOKENS_TAIL), DW_STORE_TOKENS_TAIL_MIN,
                DW_STORE_TOKENS_TAIL_MAX);
  n_low = MIN (tail, n_tokens / 2);
  n_high = MIN (tail, n_tokens - n_low);
  bins = dw_store_tokens_bins (tokens, n_low, n_tokens - n_high);
  kept_rows = dw_store_tokens_kept_rows (batch, tokens, n_tokens);
  /* the high tail follows the low one in the blob */
  memmove (tokens + n_low, tokens + n_tokens - n_high, n_high * sizeof *tokens);

  stmt = _dw_store_query_new (self, error,
                              "INSERT OR REPLACE INTO token_summaries (batch_id, n_tokens, n_low, "
                              "n_high, tails, bins, kept_rows) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                              "iiii", batch_id, (gint64)n_tokens, (gint64)n_low, (gint64)n_high);
  if (stmt == NULL)
    return FALSE;
  /* a NULL pointer would bind NULL, not an empty blob */
  sqlite3_bind_blob64 (stmt, 5, tokens, (n_low + n_high) * sizeof *tokens, SQLITE_STATIC);
  sqlite3_bind_blob64 (stmt, 6, bins->len ? (const void *)bins->data : "", bins->len,
                       SQLITE_STATIC);
  sqlite3_bind_blob64 (stmt, 7, kept_rows->len ? (const void *)kept_rows->data : "", kept_rows->len,
                       SQLITE_STATIC);
  if (!_dw_store_query_step_done (self, stmt, "storing a token summary", error))
    return FALSE;
  if (source == NULL)
    return _dw_store_query_run (self, error, "storing a batch reference",
                                "DELETE FROM batch_refs WHERE batch_id = ?1", "i", batch_id);
  return _dw_store_query_run (self, error, "storing a batch reference",
                              "INSERT OR REPLACE INTO batch_refs (batch_id, path, size, mtime_us) "
                              "VALUES (?1, ?2, ?3, ?4)",
                              "itii", batch_id, source, size, mtime_us);
}

/* ------------------------------------------------------------------------------------------ */
/* Reading back                                                                                */

DwBatch *
_dw_store_tokens_read_source (DwStore *self, gint64 step, const char *source, gint64 size,
                              gint64 mtime_us, gint64 rows, gint64 cols, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (DwBatch) batch = NULL;
  GStatBuf info;
  gint64 now_mtime_us;

  if (g_stat (source, &info) != 0)
    {
      int saved = errno;
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED,
                   _ ("%s: the raw tokens of step %" PRId64 " are referenced in this file, which "
                      "is gone (%s); only the stored summaries remain (error bounds apply)"),
                   source, step, g_strerror (saved));
      return NULL;
    }
  now_mtime_us = (gint64)info.st_mtim.tv_sec * G_USEC_PER_SEC + info.st_mtim.tv_nsec / 1000;
  if (!S_ISREG (info.st_mode))
    {
      /* only a regular file is ever referenced: a crafted store naming a FIFO or a device must not
       * make a reader block or read without end */
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED,
                   _ ("%s: the raw tokens of step %" PRId64 " are referenced in this file, which "
                      "is no longer a regular file; only the stored summaries remain (error "
                      "bounds apply)"),
                   source, step);
      return NULL;
    }
  if (info.st_size != size || now_mtime_us != mtime_us)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED,
                   _ ("%s: the raw tokens of step %" PRId64 " are referenced in this file, which "
                      "changed since it was ingested (%" PRId64 " bytes then, %" PRId64
                      " now; modified again); only the stored summaries remain (error bounds "
                      "apply)"),
                   source, step, size, (gint64)info.st_size);
      return NULL;
    }
  batch = dw_batch_read_file (source, &local);
  if (batch == NULL)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED,
                   _ ("%s: the raw tokens of step %" PRId64 " cannot be read again: %s"), source,
                   step, local->message);
      return NULL;
    }
  if ((gint64)batch->rows != rows || (gint64)batch->cols != cols
      || (batch->step >= 0 && batch->step != step))
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED,
                   _ ("%s: holds step %" PRId64 " as %zu × %zu tokens now, not step %" PRId64
                      " as %" PRId64 " × %" PRId64 " when ingested; only the stored summaries "
                      "remain (error bounds apply)"),
                   source, (gint64)batch->step, batch->rows, batch->cols, step, rows, cols);
      return NULL;
    }
  batch->step = step;
  return g_steal_pointer (&batch);
}

void
dw_token_summary_free (DwTokenSummary *summary)
{
  if (summary == NULL)
    return;
  g_free (summary->low);
  g_free (summary->high);
  g_free (summary->bins);
  g_clear_pointer (&summary->rows, g_ptr_array_unref);
  g_free (summary->source);
  g_free (summary);
}

static void
dw_store_tokens_kept_row_free (gpointer data)
{
  DwKeptRow *row = data;

  g_free (row->log_ratio);
  g_free (row->token_ids);
  g_free (row);
}

/* Parses the kept_rows blob; FALSE when its lengths disagree (a damaged or crafted store). */
static gboolean
dw_store_tokens_parse_rows (const guint8 *data, gsize len, GPtrArray *rows)
{
  gsize offset = 0;

  while (offset < len)
    {
      gint32 header[2];
      DwKeptRow *row;

      if (len - offset < sizeof header)
        return FALSE;
      memcpy (header, data + offset, sizeof header);
      offset += sizeof header;
      if (header[0] < 0 || header[1] < 0 || (len - offset) / 8 < (gsize)header[1])
        return FALSE;
      row = g_new0 (DwKeptRow, 1);
      row->row = header[0];
      row->n = (gsize)header[1];
      row->log_ratio = g_memdup2 (data + offset, row->n * sizeof (float));
      row->token_ids
        = g_memdup2 (data + offset + row->n * sizeof (float), row->n * sizeof (gint32));
      offset += row->n * 8;
      g_ptr_array_add (rows, row);
    }
  return TRUE;
}

/* The summary on the row @stmt is on; NULL when its blobs disagree with its counts. */
static DwTokenSummary *
dw_store_tokens_summary_from_row (sqlite3_stmt *stmt)
{
  g_autoptr (DwTokenSummary) summary = g_new0 (DwTokenSummary, 1);
  gint64 n_low = sqlite3_column_int64 (stmt, 1), n_high = sqlite3_column_int64 (stmt, 2);
  gsize tails_len = (gsize)sqlite3_column_bytes (stmt, 3);
  gsize bins_len = (gsize)sqlite3_column_bytes (stmt, 4);
  const guint8 *tails = sqlite3_column_blob (stmt, 3);

  summary->n_tokens = sqlite3_column_int64 (stmt, 0);
  summary->rows = g_ptr_array_new_with_free_func (dw_store_tokens_kept_row_free);
  if (n_low < 0 || n_high < 0 || summary->n_tokens < n_low + n_high
      || tails_len / sizeof (DwTokenRecord) != (gsize)(n_low + n_high)
      || tails_len % sizeof (DwTokenRecord) != 0 || bins_len % sizeof (DwTokenBin) != 0)
    return NULL;
  summary->n_low = (gsize)n_low;
  summary->n_high = (gsize)n_high;
  summary->low = g_memdup2 (tails, summary->n_low * sizeof (DwTokenRecord));
  summary->high = g_memdup2 (tails != NULL ? tails + summary->n_low * sizeof (DwTokenRecord) : NULL,
                             summary->n_high * sizeof (DwTokenRecord));
  summary->n_bins = bins_len / sizeof (DwTokenBin);
  summary->bins = g_memdup2 (sqlite3_column_blob (stmt, 4), bins_len);
  if (!dw_store_tokens_parse_rows (sqlite3_column_blob (stmt, 5),
                                   (gsize)sqlite3_column_bytes (stmt, 5), summary->rows))
    return NULL;
  if (sqlite3_column_type (stmt, 6) != SQLITE_NULL)
    {
      summary->source = _dw_store_query_column_text_or (stmt, 6, "");
      summary->source_size = sqlite3_column_int64 (stmt, 7);
      summary->source_mtime_us = sqlite3_column_int64 (stmt, 8);
    }
  return g_steal_pointer (&summary);
}

DwTokenSummary *
dw_store_get_token_summary (DwStore *self, gint64 run_id, gint64 step, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  DwTokenSummary *summary;
  int found;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = _dw_store_query_new (
    self, error,
    "SELECT t.n_tokens, t.n_low, t.n_high, t.tails, t.bins, t.kept_rows, r.path, r.size, "
    "r.mtime_us FROM batches b JOIN token_summaries t ON t.batch_id = b.id LEFT JOIN batch_refs r "
    "ON r.batch_id = b.id WHERE b.run_id = ?1 AND b.step = ?2",
    "ii", run_id, step);
  if (stmt == NULL
      || (found = _dw_store_query_first_row (self, stmt, "reading a token summary", error)) < 0)
    return NULL;
  if (found == 0)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND,
                   _ ("%s: run %" PRId64 " has no token summary at step %" PRId64), self->path,
                   run_id, step);
      return NULL;
    }
  if ((summary = dw_store_tokens_summary_from_row (stmt)) == NULL)
    g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                 _ ("%s: the stored token summary of run %" PRId64 " step %" PRId64 " is damaged"),
                 self->path, run_id, step);
  return summary;
}
