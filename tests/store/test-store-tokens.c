/* test-store-tokens.c — the bounded store (docs/STORE.md): the --keep-tokens budget, batches
 * referenced in their source files and read back from them, the token summary kept for every
 * batch, a referenced file that changed or is gone, the 5 → 6 and 6 → 7 migrations, the step
 * statistics (schema 7), crafted summaries and statistics
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The batches are written as safetensors files as verl's dump hook writes them
 * (batches/step_NNNNNN.safetensors next to the run's logs), then ingested by path like the
 * ingester does, with a budget small enough that only the first one is copied.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <sqlite3.h>

#include "dw-batch-reader.h"
#include "dw-correction.h"
#include "dw-recompute.h"
#include "dw-store-writer.h"
#include "dw-test-store.h"
#include "dw-test-cli.h"
#include "dw-torch.h"

#define ROWS 16
#define COLS 300

/* A float32 batch of @step: row r has 100 + 12 r valid tokens, ℓ from a fixed sequence with one
 * catastrophic token (ℓ = −9) in row 5 and one (ℓ = +7) in row 11; token ids 1000 + column. */
static DwBatch *
make_batch (gint64 step)
{
  DwBatch *batch = dw_batch_new (ROWS, COLS, DW_DTYPE_F32, DW_DTYPE_U8);

  batch->step = step;
  batch->token_ids = g_new0 (gint64, ROWS * COLS);
  for (gsize row = 0; row < ROWS; row++)
    for (gsize col = 0; col < 100 + 12 * row; col++)
      {
        gsize index = row * COLS + col;
        double log_ratio = 0.01 * sin ((double)(index + (gsize)step * 7));

        if (row == 5 && col == 3)
          log_ratio = -9.0;
        if (row == 11 && col == 40)
          log_ratio = 7.0;
        ((float *)batch->rollout_log_prob)[index] = -1.0f - 0.001f * (float)col;
        ((float *)batch->old_log_prob)[index]
          = ((float *)batch->rollout_log_prob)[index] + (float)log_ratio;
        ((guint8 *)batch->response_mask)[index] = 1;
        batch->token_ids[index] = 1000 + (gint64)col;
      }
  return batch;
}

static gint64
valid_tokens (void)
{
  gint64 n = 0;

  for (gint64 row = 0; row < ROWS; row++)
    n += 100 + 12 * row;
  return n;
}

/* Writes steps 1..@n_steps as files and stores them with a budget that holds one batch. */
static DwStore *
store_run (DwTestStore *fixture, int n_steps, gint64 *run_id)
{
  g_autoptr (GError) error = NULL;
  DwStore *store = dw_store_open (fixture->path, &error);
  g_autofree char *batches = g_build_filename (fixture->dir, "batches", NULL);

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (batches, 0755), ==, 0);
  /* one batch is 16 × 300 × (4 + 4 + 1 + 8) = 81600 bytes */
  dw_store_set_keep_tokens (store, 100000);
  g_assert_true (dw_store_begin (store, &error));
  *run_id = dw_store_ensure_run (store, "run", "verl", fixture->dir, &error);
  for (int step = 1; step <= n_steps; step++)
    {
      g_autoptr (DwBatch) batch = make_batch (step);
      g_autofree char *name = g_strdup_printf ("step_%06d.safetensors", step);
      g_autofree char *path = g_build_filename (batches, name, NULL);

      g_assert_true (dw_batch_write_safetensors (batch, path, &error));
      g_assert_no_error (error);
      g_assert_true (dw_store_put_batch (store, *run_id, step, batch, path, &error));
      g_assert_no_error (error);
    }
  g_assert_true (dw_store_commit (store, &error));
  return store;
}

static void
assert_same_batch (const DwBatch *got, const DwBatch *want)
{
  gsize n = want->rows * want->cols;

  g_assert_cmpuint (got->rows, ==, want->rows);
  g_assert_cmpuint (got->cols, ==, want->cols);
  g_assert_cmpmem (got->old_log_prob, n * 4, want->old_log_prob, n * 4);
  g_assert_cmpmem (got->rollout_log_prob, n * 4, want->rollout_log_prob, n * 4);
  for (gsize index = 0; index < n; index++)
    g_assert_cmpfloat (dw_batch_mask_value (got, index), ==, dw_batch_mask_value (want, index));
  g_assert_nonnull (got->token_ids);
  g_assert_cmpmem (got->token_ids, n * 8, want->token_ids, n * 8);
}

/* Over the budget, a batch keeps its shape, statistics and summary but no arrays; it is read back
 * from its file equal to what was ingested. */
static void
test_budget_and_reference (DwTestStore *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run_id;
  g_autoptr (DwStore) store = store_run (fixture, 3, &run_id);
  g_autofree char *referenced = dw_test_store_raw_sql (
    fixture->path, "SELECT group_concat (b.step) FROM batch_refs r JOIN batches b ON "
                   "b.id = r.batch_id");
  g_autofree char *empty
    = dw_test_store_raw_sql (fixture->path, "SELECT group_concat (step) FROM batches WHERE "
                                            "length (old_log_prob) = 0");
  g_autofree char *ids = dw_test_store_raw_sql (fixture->path, "SELECT count(*) FROM batch_extras");
  g_autofree char *sequences
    = dw_test_store_raw_sql (fixture->path, "SELECT count(*) FROM sequences");

  g_assert_cmpstr (referenced, ==, "2,3");
  g_assert_cmpstr (empty, ==, "2,3");
  g_assert_cmpstr (ids, ==, "1"); /* token ids of a referenced batch stay in its file */
  g_assert_cmpstr (sequences, ==, "48");
  for (int step = 1; step <= 3; step++)
    {
      g_autoptr (DwBatch) want = make_batch (step);
      g_autoptr (DwBatch) got = dw_store_load_batch (store, run_id, step, &error);

      g_assert_no_error (error);
      assert_same_batch (got, want);
      g_assert_cmpint (got->step, ==, step);
    }
  /* a run without a limit copies everything, as before the budget existed */
  dw_store_set_keep_tokens (store, -1);
  {
    g_autoptr (DwBatch) batch = make_batch (3);
    g_autofree char *path
      = g_build_filename (fixture->dir, "batches", "step_000003.safetensors", NULL);
    g_autofree char *left = NULL;

    g_assert_true (dw_store_begin (store, &error));
    g_assert_true (dw_store_put_batch (store, run_id, 3, batch, path, &error));
    g_assert_true (dw_store_commit (store, &error));
    left = dw_test_store_raw_sql (fixture->path,
                                  "SELECT group_concat (b.step) FROM batch_refs r JOIN batches b "
                                  "ON b.id = r.batch_id");
    g_assert_cmpstr (left, ==, "2");
  }
}

/* The summary: the tails in full and sorted, the bins between them covering every other token
 * with their exact sums, the catastrophic tokens' rows kept in full with their token ids. */
static void
test_summary (DwTestStore *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run_id;
  g_autoptr (DwStore) store = store_run (fixture, 2, &run_id);
  g_autoptr (DwTokenSummary) summary = dw_store_get_token_summary (store, run_id, 2, &error);
  g_autoptr (DwBatch) batch = make_batch (2);
  gint64 in_bins = 0;
  double sum_log = 0, want_sum_log = 0;
  gboolean saw_row_5 = FALSE, saw_row_11 = FALSE;

  g_assert_no_error (error);
  g_assert_cmpint (summary->n_tokens, ==, valid_tokens ());
  /* 0.5 % of 2736 tokens is 13: the minimum of 256 a side applies */
  g_assert_cmpuint (summary->n_low, ==, 256);
  g_assert_cmpuint (summary->n_high, ==, 256);
  g_assert_cmpfloat (summary->low[0].log_ratio, ==,
                     (double)((float)(-1.0f - 0.001f * 3 - 9.0f) - (float)(-1.0f - 0.001f * 3)));
  g_assert_cmpint (summary->low[0].row, ==, 5);
  g_assert_cmpint (summary->low[0].col, ==, 3);
  g_assert_cmpint (summary->low[0].token_id, ==, 1003);
  g_assert_cmpint (summary->high[summary->n_high - 1].row, ==, 11);
  g_assert_cmpint (summary->high[summary->n_high - 1].col, ==, 40);
  for (gsize index = 1; index < summary->n_low; index++)
    g_assert_cmpfloat (summary->low[index - 1].log_ratio, <=, summary->low[index].log_ratio);
  g_assert_cmpfloat (summary->low[summary->n_low - 1].log_ratio, <=, summary->bins[0].first);
  for (gsize bin = 0; bin < summary->n_bins; bin++)
    {
      in_bins += summary->bins[bin].count;
      sum_log += summary->bins[bin].sum_log;
      g_assert_cmpfloat (summary->bins[bin].first, <=, summary->bins[bin].last);
    }
  g_assert_cmpfloat (summary->bins[summary->n_bins - 1].last, <=, summary->high[0].log_ratio);
  g_assert_cmpint (in_bins + 512, ==, summary->n_tokens);
  for (gsize index = 0; index < summary->n_low; index++)
    sum_log += summary->low[index].log_ratio;
  for (gsize index = 0; index < summary->n_high; index++)
    sum_log += summary->high[index].log_ratio;
  for (gsize index = 0; index < ROWS * COLS; index++)
    if (dw_batch_mask_value (batch, index) != 0)
      want_sum_log += (double)(((float *)batch->old_log_prob)[index]
                               - ((float *)batch->rollout_log_prob)[index]);
  g_assert_cmpfloat (fabs (sum_log - want_sum_log), <, 1e-9);
  for (guint index = 0; index < summary->rows->len; index++)
    {
      DwKeptRow *row = g_ptr_array_index (summary->rows, index);

      g_assert_cmpuint (row->n, ==, 100 + 12 * (gsize)row->row);
      g_assert_cmpint (row->token_ids[7], ==, 1007);
      saw_row_5 |= row->row == 5 && row->log_ratio[3] < -8.9f;
      saw_row_11 |= row->row == 11 && row->log_ratio[40] > 6.9f;
    }
  g_assert_true (saw_row_5 && saw_row_11);
  {
    g_autofree char *name = g_path_get_basename (summary->source);
    g_assert_cmpstr (name, ==, "step_000002.safetensors");
  }
  g_clear_pointer (&summary, dw_token_summary_free);
  summary = dw_store_get_token_summary (store, run_id, 1, &error);
  g_assert_no_error (error);
  g_assert_null (summary->source); /* kept in full */
}

/* A referenced file that changed or is gone: a clear error naming it; the summaries remain. */
static void
test_source_changed (DwTestStore *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run_id;
  g_autoptr (DwStore) store = store_run (fixture, 3, &run_id);
  g_autofree char *second
    = g_build_filename (fixture->dir, "batches", "step_000002.safetensors", NULL);
  g_autofree char *third
    = g_build_filename (fixture->dir, "batches", "step_000003.safetensors", NULL);
  g_autofree char *want = NULL;
  g_autoptr (DwBatch) batch = NULL;
  g_autoptr (DwTokenSummary) summary = NULL;
  FILE *file;

  g_assert_cmpint (g_unlink (second), ==, 0);
  batch = dw_store_load_batch (store, run_id, 2, &error);
  g_assert_null (batch);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED);
  want = g_strdup_printf ("%s: the raw tokens of step 2 are referenced in this file, which is "
                          "gone (No such file or directory); only the stored summaries remain "
                          "(error bounds apply)",
                          second);
  g_assert_cmpstr (error->message, ==, want);
  g_clear_error (&error);

  file = fopen (third, "ab");
  g_assert_nonnull (file);
  fputs ("x", file);
  fclose (file);
  batch = dw_store_load_batch (store, run_id, 3, &error);
  g_assert_null (batch);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED);
  g_assert_true (g_str_has_prefix (error->message, third));
  g_assert_nonnull (strstr (error->message, "changed since it was ingested"));
  g_clear_error (&error);

  for (int step = 2; step <= 3; step++)
    {
      g_clear_pointer (&summary, dw_token_summary_free);
      summary = dw_store_get_token_summary (store, run_id, step, &error);
      g_assert_no_error (error);
      g_assert_cmpint (summary->n_tokens, ==, valid_tokens ());
    }
}

/* the store at @path as schema 6 had it: no step statistics */
static void
downgrade_to_6 (const char *path)
{
  g_free (dw_test_store_raw_sql (path, "DROP TABLE step_stats"));
  for (int column = 0; column < 4; column++)
    {
      static const char *const names[] = { "sum_w", "max_l", "min_w", "max_w" };
      g_autofree char *sql
        = g_strdup_printf ("ALTER TABLE sequences DROP COLUMN %s", names[column]);
      g_free (dw_test_store_raw_sql (path, sql));
    }
  g_free (dw_test_store_raw_sql (path, "PRAGMA user_version = 6"));
}

/* A schema-5 store (a copied batch, no summary tables) opens as schema 7, its batch intact; a
 * batch it gains afterwards has a summary. */
static void
test_migration_from_5 (DwTestStore *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run_id;
  g_autoptr (DwStore) store = store_run (fixture, 1, &run_id);
  g_autofree char *version = NULL;
  g_autoptr (DwBatch) batch = NULL, want = make_batch (1);
  g_autoptr (DwTokenSummary) summary = NULL;

  g_clear_object (&store);
  downgrade_to_6 (fixture->path);
  g_free (dw_test_store_raw_sql (fixture->path, "DROP TABLE token_summaries"));
  g_free (dw_test_store_raw_sql (fixture->path, "DROP TABLE batch_refs"));
  g_free (dw_test_store_raw_sql (fixture->path, "PRAGMA user_version = 5"));
  store = dw_store_open (fixture->path, &error);
  g_assert_no_error (error);
  version = dw_test_store_raw_sql (fixture->path, "PRAGMA user_version");
  g_assert_cmpstr (version, ==, "7");
  batch = dw_store_load_batch (store, run_id, 1, &error);
  g_assert_no_error (error);
  assert_same_batch (batch, want);
  summary = dw_store_get_token_summary (store, run_id, 1, &error);
  g_assert_null (summary);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_true (dw_store_begin (store, &error));
  g_assert_true (dw_store_put_batch (store, run_id, 1, want, "step_000001.safetensors", &error));
  g_assert_true (dw_store_commit (store, &error));
  summary = dw_store_get_token_summary (store, run_id, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (summary->n_tokens, ==, valid_tokens ());
  g_assert_true (dw_store_check_integrity (store, &error));
}

/* The step statistics (schema 7) of make_batch (): each row's Σ w in column order, its largest ℓ
 * and its extremes of w, computed here token by token with torch's float32 expf (dw-torch.h); the
 * step's off-policy metrics equal the correction core's on the batch. */
static void
assert_step_stats (const DwStepStats *stats, gint64 step)
{
  g_autoptr (DwBatch) batch = make_batch (step);
  DwConfig config;
  DwCorrectionResult result;
  DwCorrectionError error;

  g_assert_cmpint (stats->rows, ==, ROWS);
  g_assert_cmpint (stats->cols, ==, COLS);
  g_assert_true (stats->f32);
  g_assert_null (stats->slow_reason);
  for (gsize row = 0; row < ROWS; row++)
    {
      const DwStepRowStats *row_stats = &stats->row_stats[row];
      double sum_w = 0, max_l = -INFINITY, min_w = INFINITY, max_w = -INFINITY;
      for (gsize col = 0; col < 100 + 12 * row; col++)
        {
          gsize index = row * COLS + col;
          float log_ratio
            = ((float *)batch->old_log_prob)[index] - ((float *)batch->rollout_log_prob)[index];
          double weight = dw_torch_expf (dw_torch_clampf (log_ratio, -20.0f, 20.0f));
          sum_w += weight;
          max_l = MAX (max_l, (double)log_ratio);
          min_w = MIN (min_w, weight);
          max_w = MAX (max_w, weight);
        }
      g_assert_cmpint (row_stats->n_valid, ==, 100 + 12 * (gint64)row);
      g_assert_cmpfloat (row_stats->sum_w, ==, sum_w);
      g_assert_cmpfloat (row_stats->max_l, ==, max_l);
      g_assert_cmpfloat (row_stats->min_w, ==, min_w);
      g_assert_cmpfloat (row_stats->max_w, ==, max_w);
    }
  g_assert_cmpfloat (stats->row_stats[11].max_l, ==, (double)(float)7.0);
  dw_config_init (&config, DW_GEN_VERL);
  g_assert_true (dw_correction_run_entry (batch, &config, DW_ENTRY_OFFPOLICY, &result, &error));
  g_assert_cmpuint (stats->n_offpolicy, ==, result.n_metrics);
  for (gsize index = 0; index < result.n_metrics; index++)
    {
      g_assert_cmpstr (stats->offpolicy[index].key, ==, result.metrics[index].key);
      g_assert_cmpfloat (stats->offpolicy[index].value, ==, result.metrics[index].value);
    }
  dw_correction_result_clear (&result);
}

/* Every batch has its step statistics, kept in full or referenced. */
static void
test_step_stats (DwTestStore *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run_id;
  g_autoptr (DwStore) store = store_run (fixture, 3, &run_id);

  for (int step = 1; step <= 3; step++)
    {
      g_autoptr (DwStepStats) stats = dw_store_get_step_stats (store, run_id, step, &error);
      g_assert_no_error (error);
      assert_step_stats (stats, step);
    }
  g_assert_null (dw_store_get_step_stats (store, run_id, 9, &error));
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
  g_assert_cmpint (dw_store_count_batch_tokens (store, run_id, NULL), ==, 3 * valid_tokens ());
}

/* A schema-6 store opens as schema 7 with the step statistics of every batch whose tokens it can
 * read (step 1 kept in full, step 2 referenced), the same as ingest writes; a batch whose file is
 * gone (step 3) keeps them missing and still opens. */
static void
test_migration_from_6 (DwTestStore *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run_id;
  g_autoptr (DwStore) store = store_run (fixture, 3, &run_id);
  g_autofree char *third
    = g_build_filename (fixture->dir, "batches", "step_000003.safetensors", NULL);
  g_autofree char *version = NULL, *missing = NULL;

  g_clear_object (&store);
  downgrade_to_6 (fixture->path);
  g_assert_cmpint (g_unlink (third), ==, 0);
  store = dw_store_open (fixture->path, &error);
  g_assert_no_error (error);
  version = dw_test_store_raw_sql (fixture->path, "PRAGMA user_version");
  g_assert_cmpstr (version, ==, "7");
  for (int step = 1; step <= 2; step++)
    {
      g_autoptr (DwStepStats) stats = dw_store_get_step_stats (store, run_id, step, &error);
      g_assert_no_error (error);
      assert_step_stats (stats, step);
    }
  g_assert_null (dw_store_get_step_stats (store, run_id, 3, &error));
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  missing
    = dw_test_store_raw_sql (fixture->path, "SELECT count(*) FROM sequences WHERE sum_w IS NULL");
  g_assert_cmpstr (missing, ==, G_STRINGIFY (ROWS));
  g_assert_true (dw_store_check_integrity (store, &error));
}

/* Crafted step statistics: refused as damaged, never read past their rows. */
static void
test_crafted_step_stats (DwTestStore *fixture, gconstpointer data)
{
  static const char *const crafts[] = {
    "UPDATE step_stats SET core_n2 = -1",
    "UPDATE step_stats SET offpolicy = 'kl'",
    "UPDATE step_stats SET offpolicy = 'kl' || char(9) || 'x1'",
    "UPDATE step_stats SET offpolicy = replace(hex(zeroblob(100)), '0', 'k') || char(9) || '1'",
    "DELETE FROM sequences WHERE row = 3",
    "UPDATE sequences SET row = row + 100 WHERE row = 0",
    "UPDATE sequences SET n_valid = 100000 WHERE row = 2",
    "UPDATE sequences SET n_valid = -5 WHERE row = 2",
    "UPDATE batches SET rows = 1000000000000",
  };
  g_autoptr (GError) error = NULL;
  gint64 run_id;
  g_autoptr (DwStore) store = store_run (fixture, 2, &run_id);
  g_autofree char *pristine = NULL;
  gsize len;

  g_clear_object (&store);
  g_assert_true (g_file_get_contents (fixture->path, &pristine, &len, NULL));
  for (guint index = 0; index < G_N_ELEMENTS (crafts); index++)
    {
      g_autoptr (DwStepStats) stats = NULL;

      g_test_message ("%s", crafts[index]);
      g_assert_true (g_file_set_contents (fixture->path, pristine, (gssize)len, NULL));
      g_free (dw_test_store_raw_sql (fixture->path, crafts[index]));
      store = dw_store_open (fixture->path, &error);
      g_assert_no_error (error);
      stats = dw_store_get_step_stats (store, run_id, 2, &error);
      g_assert_null (stats);
      g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT);
      g_assert_true (g_str_has_prefix (error->message, fixture->path));
      g_clear_error (&error);
      g_clear_object (&store);
    }
}

/* Crafted summaries (a store written by hand or damaged): refused as damaged, never read past
 * their blobs. */
static void
test_crafted (DwTestStore *fixture, gconstpointer data)
{
  static const char *const crafts[] = {
    "UPDATE token_summaries SET n_low = n_low + 1",
    "UPDATE token_summaries SET n_low = -1",
    "UPDATE token_summaries SET n_tokens = 3",
    "UPDATE token_summaries SET tails = x'00'",
    "UPDATE token_summaries SET bins = x'0102030405'",
    "UPDATE token_summaries SET kept_rows = x'0000000000000010'",
    "UPDATE token_summaries SET kept_rows = x'05000000ffffff7f'",
    "UPDATE token_summaries SET kept_rows = x'050000'",
  };
  g_autoptr (GError) error = NULL;
  gint64 run_id;
  g_autoptr (DwStore) store = store_run (fixture, 2, &run_id);
  g_autofree char *copy = g_build_filename (fixture->dir, "pristine.db", NULL);
  g_autofree char *pristine = NULL;
  gsize len;

  g_clear_object (&store);
  g_assert_true (g_file_get_contents (fixture->path, &pristine, &len, NULL));
  g_assert_true (g_file_set_contents (copy, pristine, (gssize)len, NULL));
  for (guint index = 0; index < G_N_ELEMENTS (crafts); index++)
    {
      g_autoptr (DwTokenSummary) summary = NULL;
      g_autofree char *want = NULL;

      g_assert_true (g_file_set_contents (fixture->path, pristine, (gssize)len, NULL));
      g_free (dw_test_store_raw_sql (fixture->path, crafts[index]));
      store = dw_store_open (fixture->path, &error);
      g_assert_no_error (error);
      summary = dw_store_get_token_summary (store, run_id, 2, &error);
      g_assert_null (summary);
      g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT);
      want = g_strdup_printf ("%s: the stored token summary of run %" G_GINT64_FORMAT
                              " step 2 is damaged",
                              fixture->path, run_id);
      g_assert_cmpstr (error->message, ==, want);
      g_clear_error (&error);
      g_clear_object (&store);
    }
  /* a reference to a device (a crafted store) is refused before anything is read from it */
  g_assert_true (g_file_set_contents (fixture->path, pristine, (gssize)len, NULL));
  g_free (
    dw_test_store_raw_sql (fixture->path, "UPDATE batch_refs SET path = '/dev/zero', size = 0"));
  store = dw_store_open (fixture->path, &error);
  g_assert_null (dw_store_load_batch (store, run_id, 2, &error));
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED);
  g_assert_nonnull (strstr (error->message, "/dev/zero: the raw tokens of step 2 are referenced "
                                            "in this file, which is no longer a regular file"));
  g_clear_error (&error);
  g_clear_object (&store);
  /* a reference whose path is an empty string is a changed source, not a crash */
  g_assert_true (g_file_set_contents (fixture->path, pristine, (gssize)len, NULL));
  g_free (dw_test_store_raw_sql (fixture->path, "UPDATE batch_refs SET path = ''"));
  store = dw_store_open (fixture->path, &error);
  g_assert_null (dw_store_load_batch (store, run_id, 2, &error));
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED);
}

/* recompute, an exact pass, reads the referenced batches from their files: every metric equals
 * the correction core's on the batch as generated; with a file gone it stops naming that file. */
static void
test_recompute (DwTestStore *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run_id;
  g_autoptr (DwStore) store = store_run (fixture, 3, &run_id);
  g_autoptr (DwRecomputeResult) result = NULL;
  g_autofree char *second
    = g_build_filename (fixture->dir, "batches", "step_000002.safetensors", NULL);
  DwValue preset = dw_value_str ("decoupled_k3_rs_token_tis");
  DwConfig config;

  dw_config_init (&config, DW_GEN_VERL_LATEST);
  dw_config_set (&config, "preset", &preset);
  result = dw_recompute_run (store, run_id, &config, DW_GEN_VERL_LATEST, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (result->n_steps, ==, 3);
  for (guint index = 0; index < result->n_steps; index++)
    {
      g_autoptr (DwBatch) batch = make_batch (result->steps[index].step);
      DwCorrectionResult want = { 0 };
      DwCorrectionError failure = { 0 };

      g_assert_false (result->steps[index].failed);
      g_assert_true (dw_correction_run (batch, &result->config, &want, &failure));
      g_assert_cmpuint (result->steps[index].result.n_metrics, ==, want.n_metrics);
      for (gsize metric = 0; metric < want.n_metrics; metric++)
        {
          g_assert_cmpstr (result->steps[index].result.metrics[metric].key, ==,
                           want.metrics[metric].key);
          g_assert_cmpmem (&result->steps[index].result.metrics[metric].value, sizeof (double),
                           &want.metrics[metric].value, sizeof (double));
        }
      dw_correction_result_clear (&want);
    }
  g_clear_pointer (&result, dw_recompute_result_free);

  g_assert_cmpint (g_unlink (second), ==, 0);
  result = dw_recompute_run (store, run_id, &config, DW_GEN_VERL_LATEST, NULL, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED);
  g_assert_true (g_str_has_prefix (error->message, second));
}

/* driftwatch-cli ingest --keep-tokens: the budget from the command line; a bad size refused. */
static void
test_cli (DwTestStore *fixture, gconstpointer data)
{
  gint64 run_id;
  g_autoptr (DwStore) store = store_run (fixture, 3, &run_id);
  g_autofree char *db = g_build_filename (fixture->dir, "cli.db", NULL);
  g_autofree char *out = NULL, *err = NULL, *referenced = NULL;

  g_clear_object (&store);
  g_assert_cmpint (dw_test_run_cli ((const char *[]){ "ingest", "--quiet", "--keep-tokens", "100k",
                                                      "--db", db, fixture->dir, NULL },
                                    NULL, &out, &err),
                   ==, 0);
  referenced = dw_test_store_raw_sql (db, "SELECT count(*) FROM batch_refs");
  g_assert_cmpstr (referenced, ==, "2");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (dw_test_run_cli ((const char *[]){ "ingest", "--keep-tokens", "12x", "--db", db,
                                                      fixture->dir, NULL },
                                    NULL, &out, &err),
                   ==, 2);
  g_assert_nonnull (strstr (err, "--keep-tokens: “12x” is not a size"));
}

static void
test_parse_size (void)
{
  static const struct
  {
    const char *text;
    gint64 bytes;
  } good[] = { { "64M", 64 << 20 },
               { "2G", (gint64)2 << 30 },
               { "512k", 512 << 10 },
               { "1000", 1000 },
               { "0", 0 },
               { "all", -1 },
               { "1.5m", 3 << 19 },
               { "8MiB", 8 << 20 },
               { "3gb", (gint64)3 << 30 } };
  static const char *const bad[] = { "", "M", "12x", "-5", "5MM", "nan", "9e30G" };

  for (guint index = 0; index < G_N_ELEMENTS (good); index++)
    {
      g_autoptr (GError) error = NULL;
      gint64 bytes = 0;

      g_assert_true (dw_store_parse_size (good[index].text, &bytes, &error));
      g_assert_no_error (error);
      g_assert_cmpint (bytes, ==, good[index].bytes);
    }
  for (guint index = 0; index < G_N_ELEMENTS (bad); index++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *want = g_strdup_printf (
        "“%s” is not a size (e.g. 64M, 2G, 512k, a number of bytes, or “all”)", bad[index]);
      gint64 bytes = 0;

      g_assert_false (dw_store_parse_size (bad[index], &bytes, &error));
      g_assert_cmpstr (error->message, ==, want);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(name, func)                                                            \
  g_test_add ("/store-tokens/" name, DwTestStore, NULL, dw_test_store_setup, func, \
              dw_test_store_teardown)
  ADD ("budget-and-reference", test_budget_and_reference);
  ADD ("summary", test_summary);
  ADD ("source-changed", test_source_changed);
  ADD ("migration-from-5", test_migration_from_5);
  ADD ("crafted", test_crafted);
  ADD ("cli", test_cli);
  ADD ("recompute", test_recompute);
  ADD ("step-stats", test_step_stats);
  ADD ("migration-from-6", test_migration_from_6);
  ADD ("crafted-step-stats", test_crafted_step_stats);
#undef ADD
  g_test_add_func ("/store-tokens/parse-size", test_parse_size);
  return g_test_run ();
}
