/* test-store.c — the SQLite store: schema, refusal of newer/foreign files, points with NaN/±inf,
 * newest-write-wins, batches round trip, busy writer, disk full, read-only
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <sqlite3.h>

#include "dw-batch-reader.h"
#include "dw-correction.h"
#include "dw-store-writer.h"
#include "dw-test-store.h"

static void
test_create (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (f->path, &error);
  g_autofree char *version = NULL, *app_id = NULL, *mode = NULL, *tables = NULL;
  g_autoptr (GPtrArray) runs = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (store);
  g_assert_cmpstr (dw_store_get_path (store), ==, f->path);
  g_assert_false (dw_store_is_read_only (store));
  version = dw_test_store_raw_sql (f->path, "PRAGMA user_version");
  app_id = dw_test_store_raw_sql (f->path, "PRAGMA application_id");
  mode = dw_test_store_raw_sql (f->path, "PRAGMA journal_mode");
  tables = dw_test_store_raw_sql (f->path, "SELECT group_concat (name, ',') FROM (SELECT name FROM "
                                           "sqlite_master WHERE type = 'table' ORDER BY name)");
  g_assert_cmpstr (version, ==, G_STRINGIFY (DW_STORE_SCHEMA_VERSION));
  g_assert_cmpint (g_ascii_strtoll (app_id, NULL, 10), ==, DW_STORE_APPLICATION_ID);
  g_assert_cmpstr (mode, ==, "wal");
  g_assert_cmpstr (tables, ==,
                   "batch_extras,batch_refs,batches,diagnostics,files,points,restarts,runs,"
                   "sequences,step_stats,tags,token_summaries");
  runs = dw_store_list_runs (store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 0);
  g_assert_true (dw_store_check_integrity (store, &error));
  g_assert_no_error (error);

  /* Reopening an existing store does not migrate again. */
  g_clear_object (&store);
  store = dw_store_open (f->path, &error);
  g_assert_no_error (error);
}

static void
test_newer_schema (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (f->path, &error);
  g_autofree char *before = NULL, *after = NULL, *wal = g_strconcat (f->path, "-wal", NULL);
  g_autofree char *expected = NULL;

  g_assert_no_error (error);
  g_clear_object (&store);
  g_free (dw_test_store_raw_sql (f->path, "PRAGMA journal_mode = DELETE"));
  g_free (dw_test_store_raw_sql (f->path, "PRAGMA user_version = 8"));
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
  before = dw_test_store_file_sha (f->path);

  store = dw_store_open (f->path, &error);
  g_assert_null (store);
  expected = g_strdup_printf ("%s: written by a newer Driftwatch (schema version 8, this version "
                              "reads up to %d); the file was left untouched",
                              f->path, DW_STORE_SCHEMA_VERSION);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NEWER_SCHEMA);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  store = dw_store_open_read_only (f->path, &error);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NEWER_SCHEMA);
  after = dw_test_store_file_sha (f->path);
  g_assert_cmpstr (before, ==, after);
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
}

static void
test_foreign_files (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  g_autofree char *garbage = g_build_filename (f->dir, "garbage.db", NULL);
  g_autofree char *other = g_build_filename (f->dir, "other.db", NULL);
  g_autofree char *before = NULL, *after = NULL, *expected = NULL;
  char junk[4096];

  memset (junk, 'x', sizeof junk);
  g_assert_true (g_file_set_contents (garbage, junk, sizeof junk, NULL));
  store = dw_store_open (garbage, &error);
  g_assert_null (store);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT);
  g_assert_true (g_str_has_prefix (error->message, garbage));
  g_clear_error (&error);

  g_free (dw_test_store_raw_sql (other, "CREATE TABLE t (x)"));
  before = dw_test_store_file_sha (other);
  store = dw_store_open (other, &error);
  g_assert_null (store);
  expected = g_strdup_printf (
    "%s: an SQLite file, but not a Driftwatch store; the file was left untouched", other);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT);
  g_assert_cmpstr (error->message, ==, expected);
  after = dw_test_store_file_sha (other);
  g_assert_cmpstr (before, ==, after);
}

static gint64
add_run (DwStore *store, const char *name)
{
  g_autoptr (GError) error = NULL;
  gint64 id;

  g_assert_true (dw_store_begin (store, &error));
  id = dw_store_ensure_run (store, name, "verl", "/runs/x", &error);
  g_assert_no_error (error);
  g_assert_cmpint (id, >, 0);
  g_assert_true (dw_store_commit (store, &error));
  return id;
}

static void
test_points (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (f->path, &error);
  g_autoptr (DwSeries) series = NULL;
  g_autoptr (DwRunInfo) run = NULL;
  g_autoptr (GPtrArray) tags = NULL;
  const double values[] = { 0.5, NAN, INFINITY, -INFINITY, -0.0, 1e-300, -1.7976931348623157e308 };
  gint64 run_id, tag, old_tag;

  g_assert_no_error (error);
  run_id = add_run (store, "run-a");
  g_assert_cmpint (dw_store_ensure_run (store, "run-a", "slime", NULL, &error), ==, run_id);

  g_assert_true (dw_store_begin (store, &error));
  tag = dw_store_ensure_tag (store, run_id, "rollout_corr/k3_kl", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (dw_store_ensure_tag (store, run_id, "rollout_corr/k3_kl", NULL, &error), ==,
                   tag);
  /* Written out of order; step 3 twice (the second write wins). */
  for (int i = G_N_ELEMENTS (values) - 1; i >= 0; i--)
    g_assert_true (dw_store_put_point (store, run_id, tag, i * 10, 1000.0 + i, values[i], &error));
  g_assert_true (dw_store_put_point (store, run_id, tag, 30, NAN, 42.0, &error));
  old_tag = dw_store_ensure_tag (store, run_id, "mismatch/mismatch_k3_kl", NULL, &error);
  g_assert_true (dw_store_put_point (store, run_id, old_tag, 5, NAN, 7.0, &error));
  g_assert_true (dw_store_add_restart (store, run_id, 30, "events.1", &error));
  g_assert_true (dw_store_commit (store, &error));
  g_assert_no_error (error);

  series = dw_store_get_series (store, run_id, "rollout_corr/k3_kl", G_MININT64, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (series->n, ==, G_N_ELEMENTS (values));
  for (guint i = 0; i < series->n; i++)
    {
      double expected = i == 3 ? 42.0 : values[i];

      g_assert_cmpint (series->steps[i], ==, i * 10);
      if (isnan (expected))
        g_assert_true (isnan (series->values[i]));
      else
        {
          g_assert_cmpfloat (series->values[i], ==, expected);
          g_assert_cmpint (signbit (series->values[i]), ==, signbit (expected));
        }
      if (i == 3)
        g_assert_true (isnan (series->wall_times[i]));
      else
        g_assert_cmpfloat (series->wall_times[i], ==, 1000.0 + i);
    }
  g_assert_cmpuint (series->n_restarts, ==, 1);
  g_assert_cmpint (series->restart_steps[0], ==, 30);
  g_clear_pointer (&series, dw_series_free);

  /* after_step, and the canonical name picks the tag with the newest steps. */
  series = dw_store_get_series (store, run_id, "k3_kl", 35, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (series->n, ==, 3);
  g_assert_cmpint (series->steps[0], ==, 40);
  g_assert_cmpuint (series->n_restarts, ==, 0);
  g_clear_pointer (&series, dw_series_free);

  series = dw_store_get_series (store, run_id, "no/such", G_MININT64, &error);
  g_assert_null (series);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  tags = dw_store_list_tags (store, run_id, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tags->len, ==, 2);
  g_assert_cmpstr (((DwTagInfo *)tags->pdata[0])->name, ==, "mismatch/mismatch_k3_kl");
  g_assert_cmpstr (((DwTagInfo *)tags->pdata[0])->canonical, ==, "k3_kl");
  g_assert_cmpint (((DwTagInfo *)tags->pdata[0])->n_points, ==, 1);
  g_assert_cmpint (((DwTagInfo *)tags->pdata[1])->n_points, ==, G_N_ELEMENTS (values));
  {
    /* the same names, in the same order, without the counts */
    g_autoptr (GPtrArray) names = dw_store_list_tag_names (store, run_id, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (names->len, ==, tags->len);
    for (guint i = 0; i < names->len; i++)
      g_assert_cmpstr (names->pdata[i], ==, ((DwTagInfo *)tags->pdata[i])->name);
  }

  run = dw_store_find_run (store, "run-a", &error);
  g_assert_no_error (error);
  g_assert_cmpint (run->id, ==, run_id);
  g_assert_cmpstr (run->framework, ==, "verl");
  g_assert_cmpint (run->first_step, ==, 0);
  g_assert_cmpint (run->last_step, ==, 60);
  g_assert_cmpfloat (run->first_wall_time, ==, 1000.0);
  g_assert_cmpfloat (run->last_wall_time, ==, 1006.0);
  g_assert_cmpint (run->status, ==, DW_RUN_STATUS_FINISHED);
  g_clear_pointer (&run, dw_run_info_free);
  run = dw_store_find_run (store, "1", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (run->name, ==, "run-a");
  g_clear_pointer (&run, dw_run_info_free);
  run = dw_store_find_run (store, "run-b", &error);
  g_assert_null (run);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
}

static void
test_rollback (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (f->path, &error);
  g_autoptr (GPtrArray) tags = NULL;
  g_autoptr (DwRunInfo) run = NULL;
  gint64 run_id = add_run (store, "r"), tag;

  g_assert_true (dw_store_begin (store, &error));
  tag = dw_store_ensure_tag (store, run_id, "a", NULL, &error);
  g_assert_true (dw_store_put_point (store, run_id, tag, 1, NAN, 1.0, &error));
  dw_store_rollback (store);
  g_assert_false (dw_store_in_transaction (store));
  tags = dw_store_list_tags (store, run_id, &error);
  g_assert_cmpuint (tags->len, ==, 0);
  run = dw_store_get_run (store, run_id, &error);
  g_assert_cmpint (run->last_step, ==, -1);
  /* The tag cache forgot the rolled-back tag: it is created again. */
  g_assert_true (dw_store_begin (store, &error));
  tag = dw_store_ensure_tag (store, run_id, "a", NULL, &error);
  g_assert_true (dw_store_put_point (store, run_id, tag, 1, NAN, 1.0, &error));
  g_assert_true (dw_store_commit (store, &error));
  g_assert_no_error (error);
  g_assert_true (dw_store_check_integrity (store, &error));
}

static DwBatch *
make_batch (guint rows, guint cols, DwDType lp, guint seed)
{
  DwBatch *b = dw_batch_new (rows, cols, lp, DW_DTYPE_U8);
  GRand *rand = g_rand_new_with_seed (seed);

  for (gsize i = 0; i < (gsize)rows * cols; i++)
    {
      double old = -g_rand_double_range (rand, 0.0, 5.0);
      double roll = old + g_rand_double_range (rand, -0.1, 0.1);

      if (lp == DW_DTYPE_F32)
        {
          ((float *)b->old_log_prob)[i] = (float)old;
          ((float *)b->rollout_log_prob)[i] = (float)roll;
        }
      else
        {
          ((double *)b->old_log_prob)[i] = old;
          ((double *)b->rollout_log_prob)[i] = roll;
        }
      ((guint8 *)b->response_mask)[i] = (i % cols) < (cols - (i / cols) % cols) ? 1 : 0;
    }
  b->step = 3;
  g_rand_free (rand);
  return b;
}

static void
test_batches (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (f->path, &error);
  g_autoptr (DwBatch) b32 = make_batch (5, 7, DW_DTYPE_F32, 1);
  g_autoptr (DwBatch) b64 = make_batch (3, 4, DW_DTYPE_F64, 2);
  g_autoptr (DwBatch) back = NULL;
  g_autoptr (GArray) steps = NULL, stats = NULL;
  g_autoptr (DwRunInfo) run = NULL;
  gint64 run_id = add_run (store, "r");

  b32->advantages = g_new0 (float, 35);
  ((float *)b32->advantages)[4] = 2.5f;
  b32->flags = DW_BATCH_LOSSY_LOGPROBS;
  b32->source_lp_dtype = DW_DTYPE_BF16;
  g_assert_true (dw_store_begin (store, &error));
  g_assert_true (dw_store_put_batch (store, run_id, 3, b32, "step_3.safetensors", &error));
  g_assert_true (dw_store_put_batch (store, run_id, 1, b64, "step_1.npz", &error));
  g_assert_true (dw_store_commit (store, &error));
  g_assert_no_error (error);

  steps = dw_store_list_batch_steps (store, run_id, &error);
  g_assert_cmpuint (steps->len, ==, 2);
  g_assert_cmpint (g_array_index (steps, gint64, 0), ==, 1);
  g_assert_cmpint (g_array_index (steps, gint64, 1), ==, 3);
  run = dw_store_get_run (store, run_id, &error);
  g_assert_cmpint (run->n_batches, ==, 2);

  back = dw_store_load_batch (store, run_id, 3, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->rows, ==, 5);
  g_assert_cmpuint (back->cols, ==, 7);
  g_assert_cmpint (back->lp_dtype, ==, DW_DTYPE_F32);
  g_assert_cmpint (back->source_lp_dtype, ==, DW_DTYPE_BF16);
  g_assert_cmpint (back->mask_dtype, ==, DW_DTYPE_U8);
  g_assert_cmpint (back->flags, ==, DW_BATCH_LOSSY_LOGPROBS);
  g_assert_cmpint (back->step, ==, 3);
  g_assert_cmpmem (back->old_log_prob, 35 * 4, b32->old_log_prob, 35 * 4);
  g_assert_cmpmem (back->rollout_log_prob, 35 * 4, b32->rollout_log_prob, 35 * 4);
  g_assert_cmpmem (back->response_mask, 35, b32->response_mask, 35);
  g_assert_cmpmem (back->advantages, 35 * 4, b32->advantages, 35 * 4);
  g_clear_pointer (&back, dw_batch_free);
  back = dw_store_load_batch (store, run_id, 1, &error);
  g_assert_no_error (error);
  g_assert_null (back->advantages);
  g_assert_cmpmem (back->old_log_prob, 12 * 8, b64->old_log_prob, 12 * 8);
  g_clear_pointer (&back, dw_batch_free);
  back = dw_store_load_batch (store, run_id, 2, &error);
  g_assert_null (back);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* Per-sequence statistics, checked against a direct computation. */
  stats = dw_store_get_sequence_stats (store, run_id, 3, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (stats->len, ==, 5);
  for (guint r = 0; r < 5; r++)
    {
      DwSequenceStats *s = &g_array_index (stats, DwSequenceStats, r);
      gint64 n_valid = 0;
      double sum_l = 0, min_l = INFINITY;

      for (guint t = 0; t < 7; t++)
        if (((guint8 *)b32->response_mask)[r * 7 + t])
          {
            double l = (double)((float *)b32->old_log_prob)[r * 7 + t]
                       - (double)((float *)b32->rollout_log_prob)[r * 7 + t];
            n_valid++;
            sum_l += l;
            min_l = MIN (min_l, l);
          }
      g_assert_cmpint (s->row, ==, r);
      g_assert_cmpint (s->n_valid, ==, n_valid);
      g_assert_cmpfloat_with_epsilon (s->sum_l, sum_l, 1e-5);
      g_assert_cmpfloat_with_epsilon (s->min_l, min_l, 1e-6);
    }

  /* Replacing a batch replaces its statistics too. */
  g_assert_true (dw_store_begin (store, &error));
  g_assert_true (dw_store_put_batch (store, run_id, 3, b64, "again.npz", &error));
  g_assert_true (dw_store_commit (store, &error));
  g_clear_pointer (&stats, g_array_unref);
  stats = dw_store_get_sequence_stats (store, run_id, 3, &error);
  g_assert_cmpuint (stats->len, ==, 3);
  g_assert_true (dw_store_check_integrity (store, &error));
}

static void
test_rank_and_migration (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (f->path, &error);
  g_autoptr (DwSeries) series = NULL;
  g_autofree char *version = NULL;
  gint64 run_id = add_run (store, "r"), tag;

  g_assert_true (dw_store_begin (store, &error));
  tag = dw_store_ensure_tag (store, run_id, "x", NULL, &error);
  dw_store_set_source_rank (store, 2);
  g_assert_true (dw_store_put_point (store, run_id, tag, 1, NAN, 0.1, &error));
  g_assert_true (dw_store_put_point (store, run_id, tag, 2, NAN, 0.2, &error));
  dw_store_set_source_rank (store, 1);
  g_assert_true (dw_store_put_point (store, run_id, tag, 1, NAN, (float)0.1, &error));
  g_assert_true (dw_store_put_point (store, run_id, tag, 3, NAN, (float)0.3, &error));
  dw_store_set_source_rank (store, 2);
  g_assert_true (dw_store_put_point (store, run_id, tag, 2, NAN, 0.25, &error));
  g_assert_true (dw_store_commit (store, &error));
  g_assert_no_error (error);
  series = dw_store_get_series (store, run_id, "x", G_MININT64, &error);
  g_assert_cmpuint (series->n, ==, 3);
  g_assert_cmpfloat (series->values[0], ==, 0.1);
  g_assert_cmpfloat (series->values[1], ==, 0.25);
  g_assert_cmpfloat (series->values[2], ==, (float)0.3);
  g_clear_pointer (&series, dw_series_free);
  g_clear_object (&store);

  /* A version-1 store (no rank column, no runs.meta, no batch_extras) is migrated on open, its
   * points kept. */
  g_free (dw_test_store_raw_sql (f->path, "ALTER TABLE points DROP COLUMN rank"));
  g_free (dw_test_store_raw_sql (f->path, "ALTER TABLE runs DROP COLUMN meta"));
  g_free (dw_test_store_raw_sql (f->path, "DROP TABLE batch_extras"));
  g_free (dw_test_store_raw_sql (f->path, "DROP TABLE batch_refs"));
  g_free (dw_test_store_raw_sql (f->path, "DROP TABLE token_summaries"));
  g_free (dw_test_store_raw_sql (f->path, "DROP TABLE step_stats"));
  g_free (dw_test_store_raw_sql (f->path, "ALTER TABLE sequences DROP COLUMN sum_w"));
  g_free (dw_test_store_raw_sql (f->path, "ALTER TABLE sequences DROP COLUMN max_l"));
  g_free (dw_test_store_raw_sql (f->path, "ALTER TABLE sequences DROP COLUMN min_w"));
  g_free (dw_test_store_raw_sql (f->path, "ALTER TABLE sequences DROP COLUMN max_w"));
  g_free (dw_test_store_raw_sql (f->path, "PRAGMA user_version = 1"));
  version = dw_test_store_raw_sql (f->path, "PRAGMA user_version");
  g_assert_cmpstr (version, ==, "1");
  store = dw_store_open (f->path, &error);
  g_assert_no_error (error);
  g_clear_pointer (&version, g_free);
  version = dw_test_store_raw_sql (f->path, "PRAGMA user_version");
  g_assert_cmpstr (version, ==, G_STRINGIFY (DW_STORE_SCHEMA_VERSION));
  series = dw_store_get_series (store, run_id, "x", G_MININT64, &error);
  g_assert_cmpuint (series->n, ==, 3);
  g_assert_cmpfloat (series->values[1], ==, 0.25);
  g_assert_true (dw_store_check_integrity (store, &error));
  g_assert_no_error (error);
}

static void
test_busy (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) a = dw_store_open (f->path, &error);
  g_autoptr (DwStore) b = dw_store_open (f->path, &error);
  g_autofree char *expected = NULL;
  gint64 t0;

  g_assert_no_error (error);
  dw_store_set_busy_timeout (b, 200);
  g_assert_true (dw_store_begin (a, &error));
  t0 = g_get_monotonic_time ();
  g_assert_false (dw_store_begin (b, &error));
  g_assert_cmpint (g_get_monotonic_time () - t0, >=, 150000);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_BUSY);
  expected = g_strdup_printf ("%s: the store is locked by another process (another driftwatch-cli "
                              "ingest or watch, or the app, is writing); gave up starting a write "
                              "after 200 ms",
                              f->path);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  /* Readers are not blocked by the writer (WAL). */
  g_autoptr (GPtrArray) runs = dw_store_list_runs (b, &error);
  g_assert_no_error (error);
  g_assert_nonnull (runs);
  g_assert_true (dw_store_commit (a, &error));
  g_assert_true (dw_store_begin (b, &error));
  g_assert_true (dw_store_commit (b, &error));
  g_assert_no_error (error);
}

static void
test_full (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (f->path, &error);
  g_autoptr (DwSeries) series = NULL;
  gint64 run_id = add_run (store, "r"), tag;
  gboolean ok = TRUE;

  g_assert_true (dw_store_begin (store, &error));
  tag = dw_store_ensure_tag (store, run_id, "kept", NULL, &error);
  for (int i = 0; i < 100; i++)
    g_assert_true (dw_store_put_point (store, run_id, tag, i, NAN, i, &error));
  g_assert_true (dw_store_commit (store, &error));

  g_assert_true (dw_store_set_max_size (store, 256 * 1024, &error));
  g_assert_true (dw_store_begin (store, &error));
  for (int i = 100; ok && i < 1000000; i++)
    ok = dw_store_put_point (store, run_id, tag, i, NAN, i, &error);
  g_assert_false (ok);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FULL);
  g_assert_true (g_str_has_prefix (error->message, f->path));
  g_assert_nonnull (strstr (error->message, "disk full while storing a point"));
  g_clear_error (&error);
  dw_store_rollback (store);

  series = dw_store_get_series (store, run_id, "kept", G_MININT64, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (series->n, ==, 100);
  g_assert_true (dw_store_check_integrity (store, &error));
  g_assert_no_error (error);
  /* Space again: writing works. */
  g_assert_true (dw_store_set_max_size (store, 0, &error));
  g_assert_true (dw_store_begin (store, &error));
  g_assert_true (dw_store_put_point (store, run_id, tag, 100, NAN, 1, &error));
  g_assert_true (dw_store_commit (store, &error));
  g_assert_no_error (error);
}

static void
test_read_only (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (f->path, &error);
  g_autoptr (DwStore) ro = NULL;
  g_autoptr (GPtrArray) runs = NULL;
  g_autofree char *missing = g_build_filename (f->dir, "missing.db", NULL);

  add_run (store, "r");
  g_clear_object (&store);
  ro = dw_store_open_read_only (f->path, &error);
  g_assert_no_error (error);
  g_assert_true (dw_store_is_read_only (ro));
  runs = dw_store_list_runs (ro, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 1);
  g_assert_false (dw_store_begin (ro, &error));
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_READ_ONLY);
  g_clear_error (&error);
  g_assert_cmpint (dw_store_ensure_run (ro, "x", NULL, NULL, &error), ==, 0);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_READ_ONLY);
  g_clear_error (&error);

  g_clear_object (&ro);
  ro = dw_store_open_read_only (missing, &error);
  g_assert_null (ro);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
  g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
}

static void
test_files_and_dump (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (f->path, &error);
  g_autoptr (DwFileRecord) rec = g_new0 (DwFileRecord, 1);
  g_autoptr (DwFileRecord) back = NULL;
  g_autoptr (GPtrArray) diags = NULL;
  g_autofree char *dump = NULL;
  gint64 run_id = add_run (store, "r"), tag;

  rec->run_id = run_id;
  rec->path = g_strdup ("/x/metrics.jsonl");
  rec->format = 2;
  rec->dev = 2049;
  rec->inode = G_MAXUINT64 - 1;
  rec->size = 1234;
  rec->mtime_us = 1700000000123456;
  rec->offset = 1200;
  rec->prefix_len = 1200;
  rec->prefix_crc = 0xdeadbeef;
  rec->max_step = G_MININT64;
  rec->state = g_bytes_new ("abc", 3);
  g_assert_true (dw_store_begin (store, &error));
  g_assert_true (dw_store_put_file (store, rec, &error));
  g_assert_cmpint (rec->id, >, 0);
  rec->max_step = 17;
  g_assert_true (dw_store_put_file (store, rec, &error));
  tag = dw_store_ensure_tag (store, run_id, "t", "train/step", &error);
  g_assert_true (dw_store_put_point (store, run_id, tag, 2, 5.0, -INFINITY, &error));
  g_assert_true (
    dw_store_add_diagnostic (store, run_id, "/x/metrics.jsonl", 77, "bad line", &error));
  g_assert_true (
    dw_store_add_diagnostic (store, run_id, "/x/metrics.jsonl", 77, "bad line", &error));
  g_assert_true (dw_store_commit (store, &error));
  g_assert_no_error (error);

  back = dw_store_get_file (store, "/x/metrics.jsonl", &error);
  g_assert_no_error (error);
  g_assert_cmpint (back->id, ==, rec->id);
  g_assert_cmpuint (back->inode, ==, G_MAXUINT64 - 1);
  g_assert_cmpint (back->mtime_us, ==, 1700000000123456);
  g_assert_cmpuint (back->prefix_crc, ==, 0xdeadbeef);
  g_assert_cmpint (back->max_step, ==, 17);
  g_assert_cmpmem (g_bytes_get_data (back->state, NULL), g_bytes_get_size (back->state), "abc", 3);
  g_assert_null (dw_store_get_file (store, "/nope", &error));
  g_assert_no_error (error);

  diags = dw_store_list_diagnostics (store, run_id, &error);
  g_assert_cmpuint (diags->len, ==, 1);
  g_assert_cmpstr (diags->pdata[0], ==, "/x/metrics.jsonl: offset 77: bad line");

  dump = dw_store_dump (store, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (dump, ==,
                   "# runs\nr\tverl\t/runs/x\tNULL\t2\t2\t5\t5\n"
                   "# tags\nr\tt\tNULL\ttrain/step\n"
                   "# points\nr\tt\t2\t5\t-inf\t0\t0\n"
                   "# restarts\n# batches\n# sequences\n"
                   "# files\n/x/metrics.jsonl\tr\t2\t1200\t1200\t3735928559\t17\n"
                   "# diagnostics\nr\t/x/metrics.jsonl\t77\tbad line\n"
                   "# batch_refs\n# token_summaries\n");
}

/* dw_store_put_points (all rows in one statement reading dw_points_feed) stores exactly what the
 * same points through dw_store_put_point store: later rows of a (tag, step) win, NaN / -0.0 / inf
 * kept, the run's steps and wall times accounted, and a less precise source (lower rank) written
 * afterwards replaces nothing while an equally precise one replaces everything. */
static void
test_put_points (DwTestStore *f, gconstpointer data)
{
  g_autofree char *other = g_build_filename (f->dir, "other.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) a = dw_store_open (f->path, &error);
  g_autoptr (DwStore) b = dw_store_open (other, &error);
  g_autofree char *da = NULL, *db = NULL;
  DwPointRow rows[75];
  gint64 ta, tb, ra, rb;

  (void)data;
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      /* steps repeat every 40 rows: rows 40..74 overwrite 0..34, some across statements */
      double v = i == 43 ? NAN : i == 47 ? -0.0 : i == 69 ? INFINITY : i * 0.25;
      rows[i] = (DwPointRow){ 0, (gint64)(i % 40), i % 5 ? 1000.0 + i : NAN, v };
    }
  g_assert_true (dw_store_begin (a, &error) && dw_store_begin (b, &error));
  ra = dw_store_ensure_run (a, "r", "verl", "/x", &error);
  rb = dw_store_ensure_run (b, "r", "verl", "/x", &error);
  ta = dw_store_ensure_tag (a, ra, "t", NULL, &error);
  tb = dw_store_ensure_tag (b, rb, "t", NULL, &error);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      rows[i].tag_id = ta;
      g_assert_true (
        dw_store_put_point (a, ra, ta, rows[i].step, rows[i].wall_time, rows[i].value, &error));
      rows[i].tag_id = tb;
    }
  g_assert_true (dw_store_put_points (b, rb, rows, G_N_ELEMENTS (rows), &error));
  g_assert_no_error (error);
  for (int rank = 1; rank >= 0; rank--)
    {
      /* the rows written first had rank 0: a rank-1 copy replaces them all, a rank-0 one none */
      dw_store_set_source_rank (a, rank);
      dw_store_set_source_rank (b, rank);
      for (guint i = 11; i <= 20; i++)
        {
          DwPointRow lower = { tb, (gint64)i, 5.0, 100.0 + rank };
          g_assert_true (dw_store_put_point (a, ra, ta, lower.step, 5.0, lower.value, &error));
          g_assert_true (dw_store_put_points (b, rb, &lower, 1, &error));
        }
    }
  g_assert_true (dw_store_commit (a, &error) && dw_store_commit (b, &error));
  da = dw_store_dump (a, &error);
  db = dw_store_dump (b, &error);
  g_assert_cmpstr (da, ==, db);
  {
    g_autoptr (DwSeries) s = dw_store_get_series (b, rb, "t", G_MININT64, &error);
    g_assert_cmpuint (s->n, ==, 40);
    g_assert_cmpfloat (s->values[0], ==, 40 * 0.25); /* row 40 replaced row 0 */
    g_assert_cmpfloat (s->values[11], ==, 101.0);    /* the rank-1 copy, not the rank-0 one */
    g_assert_cmpfloat (s->values[20], ==, 101.0);
    g_assert_cmpfloat (s->values[39], ==, 39 * 0.25);
    g_assert_true (isnan (s->values[3]));
    g_assert_true (s->values[7] == 0.0 && signbit (s->values[7]));
    g_assert_true (isinf (s->values[29]) && s->values[29] > 0);
  }
}

/* dw_series_find_step: every stored step found at its index, gaps and out-of-range steps not. */
static void
test_series_find_step (void)
{
  gint64 steps[] = { -5, 0, 1, 4, 9, 10, 100 };
  DwSeries s = { G_N_ELEMENTS (steps), steps };
  DwSeries empty = { 0 };

  for (gsize i = 0; i < G_N_ELEMENTS (steps); i++)
    g_assert_cmpint (dw_series_find_step (&s, steps[i]), ==, (gssize)i);
  g_assert_cmpint (dw_series_find_step (&s, -6), ==, -1);
  g_assert_cmpint (dw_series_find_step (&s, 2), ==, -1);
  g_assert_cmpint (dw_series_find_step (&s, 99), ==, -1);
  g_assert_cmpint (dw_series_find_step (&s, 101), ==, -1);
  g_assert_cmpint (dw_series_find_step (&empty, 0), ==, -1);
}

/* dw_store_begin_appending (log ingest): foreign-key checks are off inside its transaction only.
 * A point naming no tag goes in there (the ingester never writes one: every tag id it writes was
 * created in the same transaction), and is refused again by the next ordinary transaction, also
 * after a rollback. */
static void
test_begin_appending (DwTestStore *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (f->path, &error);
  gint64 run;

  (void)data;
  g_assert_no_error (error);
  g_assert_true (dw_store_begin_appending (store, &error));
  run = dw_store_ensure_run (store, "r", "verl", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (dw_store_put_point (store, run, 999, 1, NAN, 1.0, &error));
  dw_store_rollback (store);
  g_assert_true (dw_store_begin (store, &error));
  run = dw_store_ensure_run (store, "r", "verl", NULL, &error);
  g_assert_false (dw_store_put_point (store, run, 999, 1, NAN, 1.0, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  dw_store_rollback (store);

  g_assert_true (dw_store_begin_appending (store, &error));
  run = dw_store_ensure_run (store, "r", "verl", NULL, &error);
  g_assert_true (dw_store_put_point (store, run, 999, 1, NAN, 1.0, &error));
  g_assert_true (dw_store_commit (store, &error));
  g_assert_true (dw_store_begin (store, &error));
  g_assert_false (dw_store_put_point (store, run, 998, 1, NAN, 1.0, &error));
  g_assert_nonnull (error);
  dw_store_rollback (store);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
/* each store in a folder that does not exist yet: opening it makes the folder */
#define ADD(name, func)                                                               \
  g_test_add ("/store/" name, DwTestStore, "sub/store.db", dw_test_store_setup, func, \
              dw_test_store_teardown)
  ADD ("create", test_create);
  ADD ("newer-schema", test_newer_schema);
  ADD ("foreign-files", test_foreign_files);
  ADD ("points", test_points);
  ADD ("rollback", test_rollback);
  ADD ("batches", test_batches);
  ADD ("rank-and-migration", test_rank_and_migration);
  ADD ("busy", test_busy);
  ADD ("full", test_full);
  ADD ("read-only", test_read_only);
  ADD ("files-and-dump", test_files_and_dump);
  ADD ("put-points", test_put_points);
  ADD ("begin-appending", test_begin_appending);
#undef ADD
  g_test_add_func ("/store/series-find-step", test_series_find_step);
  return g_test_run ();
}
