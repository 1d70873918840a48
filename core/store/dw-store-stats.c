/* dw-store-stats.c — the step statistics of a batch (schema 7): what the what-if engine needs to
 * evaluate every sequence-level option and IS level without the batch's tokens
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * docs/STORE.md "Step statistics". Per row, four columns of `sequences` (sum_w, max_l, min_w,
 * max_w; NULL: missing); per step, one row of `step_stats`. Computed at ingest from the batch and
 * its tokens sorted by ℓ (the token summary's sort), and by the 6 → 7 migration
 * (dw-store-batches.c) from the kept tokens or the referenced file; a batch whose raw tokens are
 * gone keeps them missing (no step_stats row), and the what-if engine then needs its raw tokens,
 * which it cannot have.
 *
 * The arithmetic is the engine's (core/whatif/dw-whatif-step.c, dw_whatif_step_scan_row and
 * dw_whatif_step_prefix_sums): ℓ in the batch's dtype, w = R(exp(clamp(ℓ, ±20))), k1 = −ℓ̃,
 * k2 = R(½R(ℓ̃²)), k3 = R(R(w − 1) − ℓ̃), sums in float64 in token order (sorted order for
 * the k3 < 0 sums); tests/whatif/test-whatif-stored.c checks a step built from them equals one
 * built from the tokens.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "dw-store-private.h"
#include "dw-torch.h"

void
dw_step_stats_free (DwStepStats *stats)
{
  if (stats == NULL)
    return;
  g_free (stats->slow_reason);
  g_free (stats->offpolicy);
  g_free (stats->row_stats);
  g_free (stats);
}

/* ------------------------------------------------------------------------------------------ */
/* Computing                                                                                   */

static inline double
dw_store_stats_log_prob_at (const DwBatch *batch, const void *log_probs, gsize index)
{
  return batch->lp_dtype == DW_DTYPE_F32 ? (double)((const float *)log_probs)[index]
                                         : ((const double *)log_probs)[index];
}

static void
dw_store_stats_set_slow (DwStepStats *stats, char *reason)
{
  if (stats->slow_reason == NULL)
    stats->slow_reason = reason;
  else
    g_free (reason);
}

/* the token pass in token order: each row's sums and extremes, the step's */
static void
dw_store_stats_scan (const DwBatch *batch, DwStepStats *stats)
{
  const gboolean f32 = stats->f32;

  for (gsize row = 0; row < batch->rows; row++)
    {
      DwStepRowStats *row_stats = &stats->row_stats[row];
      row_stats->min_w = INFINITY;
      row_stats->max_w = row_stats->max_l = -INFINITY;
      for (gsize column = 0; column < batch->cols; column++)
        {
          const gsize index = row * batch->cols + column;
          const double mask = dw_batch_mask_value (batch, index);
          if (mask == 0)
            continue;
          if (mask != 1.0)
            dw_store_stats_set_slow (
              stats, g_strdup_printf ("mask value %g at row %zu, column %zu is not 0 or 1", mask,
                                      row, column));
          double old_lp = dw_store_stats_log_prob_at (batch, batch->old_log_prob, index);
          double rollout_lp = dw_store_stats_log_prob_at (batch, batch->rollout_log_prob, index);
          double log_ratio
            = f32 ? (double)((float)old_lp - (float)rollout_lp) : old_lp - rollout_lp;
          if (isnan (log_ratio))
            dw_store_stats_set_slow (
              stats, g_strdup_printf ("NaN log-ratio at row %zu, column %zu", row, column));
          double clamped
            = dw_torch_clamp (log_ratio, -DW_TORCH_SAFETY_BOUND, DW_TORCH_SAFETY_BOUND);
          double weight = dw_torch_round (f32, dw_torch_exp (f32, clamped));
          double k[3]
            = { -clamped, dw_torch_round (f32, 0.5 * dw_torch_round (f32, clamped * clamped)),
                dw_torch_round (f32, dw_torch_round (f32, weight - 1.0) - clamped) };
          row_stats->sum_w += weight * mask;
          row_stats->max_l = dw_torch_max (row_stats->max_l, log_ratio);
          row_stats->min_w = dw_torch_min (row_stats->min_w, weight);
          row_stats->max_w = dw_torch_max (row_stats->max_w, weight);
          stats->weight_sum += weight * mask;
          stats->min_w = dw_torch_min (stats->min_w, weight);
          stats->max_w = dw_torch_max (stats->max_w, weight);
          for (int which = 0; which < 3; which++)
            {
              stats->sum_k[which] += k[which] * mask;
              stats->min_k[which] = dw_torch_min (stats->min_k[which], k[which]);
              stats->max_k[which] = dw_torch_max (stats->max_k[which], k[which]);
            }
        }
    }
}

/* the sorted pass: the k3 < 0 sums, whether w is monotone, the cores of k2 and k3 */
static void
dw_store_stats_sorted_pass (const DwTokenRecord *sorted, gsize n_tokens, DwStepStats *stats)
{
  const gboolean f32 = stats->f32;
  g_autofree double *k_values = g_new (double, 2 * MAX (n_tokens, 1));
  double previous_weight = -INFINITY;

  stats->weight_monotone = TRUE;
  for (gsize index = 0; index < n_tokens; index++)
    {
      double clamped
        = dw_torch_clamp (sorted[index].log_ratio, -DW_TORCH_SAFETY_BOUND, DW_TORCH_SAFETY_BOUND);
      double weight = dw_torch_round (f32, dw_torch_exp (f32, clamped));
      double k2 = dw_torch_round (f32, 0.5 * dw_torch_round (f32, clamped * clamped));
      double k3 = dw_torch_round (f32, dw_torch_round (f32, weight - 1.0) - clamped);
      if (weight < previous_weight)
        stats->weight_monotone = FALSE;
      previous_weight = weight;
      if (k3 < 0)
        {
          stats->neg_k3_sum += k3;
          stats->neg_k3_sq += dw_torch_round (f32, k3 * k3);
        }
      k_values[index] = k2;
      k_values[n_tokens + index] = k3;
    }
  for (int shape = 0; shape < 2; shape++)
    {
      const double *k = k_values + (gsize)shape * n_tokens;
      gsize end_left = 0, start_right = n_tokens;
      if (n_tokens > 0)
        {
          end_left = 1;
          while (end_left < n_tokens && k[end_left] <= k[end_left - 1])
            end_left++;
          start_right = n_tokens - 1;
          while (start_right > 0 && k[start_right - 1] <= k[start_right])
            start_right--;
        }
      if (end_left > start_right)
        end_left = start_right;
      stats->core_n[shape] = (gint64)(start_right - end_left);
      stats->core_max[shape] = -INFINITY;
      stats->core_low[shape] = stats->core_high[shape] = 0;
      for (gsize index = end_left; index < start_right; index++)
        stats->core_max[shape] = fmax (stats->core_max[shape], k[index]);
      if (start_right > end_left)
        {
          stats->core_low[shape] = sorted[end_left].log_ratio;
          stats->core_high[shape] = sorted[start_right - 1].log_ratio;
        }
    }
}

static void
dw_store_stats_offpolicy (const DwBatch *batch, DwStepStats *stats)
{
  DwConfig config;
  DwCorrectionResult result;
  DwCorrectionError error;

  dw_config_init (&config, DW_GEN_VERL);
  if (!dw_correction_run_entry (batch, &config, DW_ENTRY_OFFPOLICY, &result, &error))
    {
      dw_store_stats_set_slow (stats, g_strdup ("off-policy metrics failed"));
      return;
    }
  stats->n_offpolicy = result.n_metrics;
  stats->offpolicy = g_memdup2 (result.metrics, result.n_metrics * sizeof (DwMetric));
  dw_correction_result_clear (&result);
}

/* The step statistics of @batch, whose valid tokens sorted by ℓ are @sorted. */
static DwStepStats *
dw_store_stats_compute (const DwBatch *batch, const DwTokenRecord *sorted, gsize n_tokens)
{
  DwStepStats *stats = g_new0 (DwStepStats, 1);

  stats->rows = (gint64)batch->rows;
  stats->cols = (gint64)batch->cols;
  stats->f32 = batch->lp_dtype == DW_DTYPE_F32;
  stats->row_stats = g_new0 (DwStepRowStats, MAX (batch->rows, 1));
  stats->min_w = INFINITY;
  stats->max_w = -INFINITY;
  for (int which = 0; which < 3; which++)
    {
      stats->min_k[which] = INFINITY;
      stats->max_k[which] = -INFINITY;
    }
  if (batch->lp_dtype != DW_DTYPE_F32 && batch->lp_dtype != DW_DTYPE_F64)
    dw_store_stats_set_slow (stats, g_strdup_printf ("log-probs must be float32 or float64, got %s",
                                                     dw_dtype_name (batch->lp_dtype)));
  else
    dw_store_stats_scan (batch, stats);
  if (stats->slow_reason == NULL && n_tokens > 0)
    {
      dw_store_stats_sorted_pass (sorted, n_tokens, stats);
      dw_store_stats_offpolicy (batch, stats);
    }
  return stats;
}

/* ------------------------------------------------------------------------------------------ */
/* Writing                                                                                     */

/* "key\tvalue\n" lines (%.17g: the double round-trips) */
static char *
dw_store_stats_offpolicy_text (const DwStepStats *stats)
{
  GString *text = g_string_new (NULL);

  for (gsize index = 0; index < stats->n_offpolicy; index++)
    {
      char number[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append_printf (
        text, "%s\t%s\n", stats->offpolicy[index].key,
        g_ascii_formatd (number, sizeof number, "%.17g", stats->offpolicy[index].value));
    }
  return g_string_free (text, FALSE);
}

static gboolean
dw_store_stats_put_rows (DwStore *self, gint64 batch_id, const DwStepStats *stats, GError **error)
{
  g_autoptr (sqlite3_stmt) update = _dw_store_query_prepare (
    self,
    "UPDATE sequences SET sum_w = ?3, max_l = ?4, min_w = ?5, max_w = ?6 "
    "WHERE batch_id = ?1 AND row = ?2",
    error);

  if (update == NULL)
    return FALSE;
  for (gint64 row = 0; row < stats->rows; row++)
    {
      const DwStepRowStats *row_stats = &stats->row_stats[row];
      _dw_store_query_bind (update, "iidddd", batch_id, row, row_stats->sum_w, row_stats->max_l,
                            row_stats->min_w, row_stats->max_w);
      if (!_dw_store_query_step_done (self, update, "storing step statistics", error))
        return FALSE;
    }
  return TRUE;
}

gboolean
_dw_store_stats_put (DwStore *self, gint64 batch_id, const DwBatch *batch,
                     const DwTokenRecord *sorted, gsize n_tokens, GError **error)
{
  g_autoptr (DwStepStats) stats = dw_store_stats_compute (batch, sorted, n_tokens);
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autofree char *offpolicy = dw_store_stats_offpolicy_text (stats);

  if (!dw_store_stats_put_rows (self, batch_id, stats, error))
    return FALSE;
  stmt = _dw_store_query_prepare (
    self,
    "INSERT OR REPLACE INTO step_stats (batch_id, slow_reason, weight_sum, sum_k1, sum_k2, "
    "sum_k3, min_w, max_w, min_k1, min_k2, min_k3, max_k1, max_k2, max_k3, neg_k3_sum, "
    "neg_k3_sq, weight_monotone, core_n2, core_low2, core_high2, core_max2, core_n3, core_low3, "
    "core_high3, core_max3, offpolicy) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
    "?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)",
    error);
  if (stmt == NULL)
    return FALSE;
  _dw_store_query_bind (
    stmt, "itddddddddddddddiidddidddt", batch_id, stats->slow_reason, stats->weight_sum,
    stats->sum_k[0], stats->sum_k[1], stats->sum_k[2], stats->min_w, stats->max_w, stats->min_k[0],
    stats->min_k[1], stats->min_k[2], stats->max_k[0], stats->max_k[1], stats->max_k[2],
    stats->neg_k3_sum, stats->neg_k3_sq, (gint64)stats->weight_monotone, stats->core_n[0],
    stats->core_low[0], stats->core_high[0], stats->core_max[0], stats->core_n[1],
    stats->core_low[1], stats->core_high[1], stats->core_max[1], offpolicy);
  return _dw_store_query_step_done (self, stmt, "storing step statistics", error);
}

/* ------------------------------------------------------------------------------------------ */
/* Reading                                                                                     */

/* the step row; FALSE when a value a crafted store could damage is out of range */
static gboolean
dw_store_stats_from_row (sqlite3_stmt *stmt, DwStepStats *stats)
{
  int column = 3;

  stats->rows = sqlite3_column_int64 (stmt, 0);
  stats->cols = sqlite3_column_int64 (stmt, 1);
  stats->f32 = sqlite3_column_int64 (stmt, 2) == DW_DTYPE_F32;
  if (sqlite3_column_int64 (stmt, 2) != DW_DTYPE_F32
      && sqlite3_column_int64 (stmt, 2) != DW_DTYPE_F64)
    return FALSE;
  stats->slow_reason = sqlite3_column_type (stmt, column) == SQLITE_NULL
                         ? NULL
                         : _dw_store_query_column_text_or (stmt, column, "");
  column++;
  stats->weight_sum = _dw_store_query_column_double_or_nan (stmt, column++);
  for (int which = 0; which < 3; which++)
    stats->sum_k[which] = _dw_store_query_column_double_or_nan (stmt, column++);
  stats->min_w = _dw_store_query_column_double_or_nan (stmt, column++);
  stats->max_w = _dw_store_query_column_double_or_nan (stmt, column++);
  for (int which = 0; which < 3; which++)
    stats->min_k[which] = _dw_store_query_column_double_or_nan (stmt, column++);
  for (int which = 0; which < 3; which++)
    stats->max_k[which] = _dw_store_query_column_double_or_nan (stmt, column++);
  stats->neg_k3_sum = _dw_store_query_column_double_or_nan (stmt, column++);
  stats->neg_k3_sq = _dw_store_query_column_double_or_nan (stmt, column++);
  stats->weight_monotone = sqlite3_column_int64 (stmt, column++) != 0;
  for (int shape = 0; shape < 2; shape++)
    {
      stats->core_n[shape] = sqlite3_column_int64 (stmt, column++);
      stats->core_low[shape] = _dw_store_query_column_double_or_nan (stmt, column++);
      stats->core_high[shape] = _dw_store_query_column_double_or_nan (stmt, column++);
      stats->core_max[shape] = _dw_store_query_column_double_or_nan (stmt, column++);
    }
  return stats->rows >= 0 && stats->cols >= 0 && stats->rows <= G_MAXINT32
         && stats->cols <= G_MAXINT32 && stats->core_n[0] >= 0 && stats->core_n[1] >= 0;
}

/* "key\tvalue\n" lines back into metrics; FALSE on anything else */
static gboolean
dw_store_stats_parse_offpolicy (const char *text, DwStepStats *stats)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n_lines = g_strv_length (lines);

  stats->offpolicy = g_new0 (DwMetric, MAX (n_lines, 1));
  for (guint index = 0; index < n_lines; index++)
    {
      const char *tab = strchr (lines[index], '\t');
      char *end = NULL;
      if (lines[index][0] == '\0' && index + 1 == n_lines)
        break;
      if (tab == NULL || (gsize)(tab - lines[index]) >= DW_METRIC_KEY_MAX)
        return FALSE;
      DwMetric *metric = &stats->offpolicy[stats->n_offpolicy++];
      memcpy (metric->key, lines[index], (gsize)(tab - lines[index]));
      metric->value = g_ascii_strtod (tab + 1, &end);
      if (end == tab + 1 || *end != '\0')
        return FALSE;
    }
  return TRUE;
}

static void
dw_store_stats_row_cb (sqlite3_stmt *stmt, gpointer user_data)
{
  GArray *rows = user_data;
  DwStepRowStats row_stats;
  int column = 2;

  if (sqlite3_column_int64 (stmt, 0) != (gint64)rows->len)
    return; /* rows out of order or missing: the caller sees the count is short */
  row_stats.n_valid = sqlite3_column_int64 (stmt, 1);
  row_stats.n = _dw_store_query_column_double_or_nan (stmt, column++);
  row_stats.sum_l = _dw_store_query_column_double_or_nan (stmt, column++);
  for (int which = 0; which < 3; which++)
    row_stats.sum_k[which] = _dw_store_query_column_double_or_nan (stmt, column++);
  for (int which = 0; which < 3; which++)
    row_stats.max_k[which] = _dw_store_query_column_double_or_nan (stmt, column++);
  row_stats.min_l = _dw_store_query_column_double_or_nan (stmt, column++);
  row_stats.sum_w = _dw_store_query_column_double_or_nan (stmt, column++);
  row_stats.max_l = _dw_store_query_column_double_or_nan (stmt, column++);
  row_stats.min_w = _dw_store_query_column_double_or_nan (stmt, column++);
  row_stats.max_w = _dw_store_query_column_double_or_nan (stmt, column++);
  g_array_append_val (rows, row_stats);
}

static gboolean
dw_store_stats_read_rows (DwStore *self, gint64 batch_id, DwStepStats *stats, GError **error)
{
  g_autoptr (GArray) rows = g_array_new (FALSE, TRUE, sizeof (DwStepRowStats));
  gint64 n_tokens = 0;

  if (!_dw_store_query_rows (
        self, error, "reading step statistics", dw_store_stats_row_cb, rows,
        "SELECT row, n_valid, n, sum_l, sum_k1, sum_k2, sum_k3, max_k1, max_k2, max_k3, min_l, "
        "sum_w, max_l, min_w, max_w FROM sequences WHERE batch_id = ?1 ORDER BY row",
        "i", batch_id))
    return FALSE;
  for (guint row = 0; row < rows->len; row++)
    {
      const gint64 n_valid = g_array_index (rows, DwStepRowStats, row).n_valid;
      if (n_valid < 0 || n_valid > stats->cols)
        break;
      n_tokens += n_valid;
    }
  if ((gint64)rows->len != stats->rows || n_tokens > stats->rows * stats->cols)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                   _ ("%s: the sequence statistics of step %" PRId64 " are damaged or missing "
                      "(%u of %" PRId64 " rows readable)"),
                   self->path, stats->step, rows->len, stats->rows);
      return FALSE;
    }
  for (guint row = 0; row < rows->len; row++)
    if (g_array_index (rows, DwStepRowStats, row).n_valid > stats->cols
        || g_array_index (rows, DwStepRowStats, row).n_valid < 0)
      {
        g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                     _ ("%s: the sequence statistics of step %" PRId64 " are damaged (row %u)"),
                     self->path, stats->step, row);
        return FALSE;
      }
  stats->row_stats = (DwStepRowStats *)(gpointer)g_array_free (g_steal_pointer (&rows), FALSE);
  return TRUE;
}

DwStepStats *
dw_store_get_step_stats (DwStore *self, gint64 run_id, gint64 step, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (DwStepStats) stats = g_new0 (DwStepStats, 1);
  gint64 batch_id;
  int found;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stats->step = step;
  stmt = _dw_store_query_new (
    self, error,
    "SELECT b.rows, b.cols, b.lp_dtype, s.slow_reason, s.weight_sum, s.sum_k1, s.sum_k2, "
    "s.sum_k3, s.min_w, s.max_w, s.min_k1, s.min_k2, s.min_k3, s.max_k1, s.max_k2, s.max_k3, "
    "s.neg_k3_sum, s.neg_k3_sq, s.weight_monotone, s.core_n2, s.core_low2, s.core_high2, "
    "s.core_max2, s.core_n3, s.core_low3, s.core_high3, s.core_max3, s.offpolicy, b.id "
    "FROM batches b JOIN step_stats s ON s.batch_id = b.id WHERE b.run_id = ?1 AND b.step = ?2",
    "ii", run_id, step);
  if (stmt == NULL
      || (found = _dw_store_query_first_row (self, stmt, "reading step statistics", error)) < 0)
    return NULL;
  if (found == 0)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND,
                   _ ("%s: step %" PRId64 " of run %" PRId64 " has no stored step statistics"),
                   self->path, step, run_id);
      return NULL;
    }
  batch_id = sqlite3_column_int64 (stmt, 28);
  if (!dw_store_stats_from_row (stmt, stats)
      || (sqlite3_column_type (stmt, 27) == SQLITE_TEXT
          && !dw_store_stats_parse_offpolicy ((const char *)sqlite3_column_text (stmt, 27), stats)))
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                   _ ("%s: the step statistics of step %" PRId64 " are damaged"), self->path, step);
      return NULL;
    }
  g_clear_pointer (&stmt, sqlite3_finalize);
  if (!dw_store_stats_read_rows (self, batch_id, stats, error))
    return NULL;
  return g_steal_pointer (&stats);
}

gint64
dw_store_count_batch_tokens (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  g_return_val_if_fail (DW_IS_STORE (self), -1);
  stmt = _dw_store_query_new (self, error, "SELECT total(n_tokens) FROM batches WHERE run_id = ?1",
                              "i", run_id);
  if (stmt == NULL || _dw_store_query_first_row (self, stmt, "counting tokens", error) <= 0)
    return -1;
  return (gint64)sqlite3_column_double (stmt, 0);
}
