/* bench-store.c — the bounded store at real-run shape: bytes per step and per token, ingest rate,
 * what-if open time and memory from the bounded store, slider moves
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A generated run of STEPS batches of ROWS × COLS (float32 log-probs, bool mask, response lengths
 * uniform in [COLS/8, COLS], int64 token ids, one catastrophic token in 2000) is written as
 * batches/step_NNNNNN.safetensors (the verl hook's layout) and ingested with the real ingester
 * twice: with the default --keep-tokens budget, and with a budget of 0 (every batch referenced),
 * whose size divided by the steps is what each further step of a long run adds. Then the what-if
 * engine (compact steps, 2 threads) opens the run from the default store, reading the referenced
 * batches back from their files, and 24 slider moves of a token-IS threshold are timed.
 * Usage: bench-store [STEPS [ROWS COLS]] (CI: 24 × 256 × 2048; docs/BENCHMARKS.md gives the
 * full-size run).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "dw-batch-reader.h"
#include "dw-ingester.h"
#include "dw-store-writer.h"
#include "dw-whatif-engine.h"
#include "dw-whatif-summary.h"

static guint n_steps = 24;
static gsize n_rows = 256, n_cols = 2048;

static DwBatch *
bench_store_make_batch (gint64 step)
{
  GRand *random = g_rand_new_with_seed (7000 + (guint32)step);
  DwBatch *batch = dw_batch_new (n_rows, n_cols, DW_DTYPE_F32, DW_DTYPE_BOOL);
  double spread = 0.02 + 0.3 * (double)step / n_steps;

  batch->step = step;
  batch->token_ids = g_new (gint64, n_rows * n_cols);
  for (gsize row = 0; row < n_rows; row++)
    {
      gsize length = (gsize)g_rand_int_range (random, (gint32)(n_cols / 8), (gint32)n_cols + 1);
      for (gsize col = 0; col < n_cols; col++)
        {
          gsize index = row * n_cols + col;
          double rollout = -g_rand_double (random) * 3.0;
          double log_ratio = spread * (g_rand_double (random) - 0.5);

          if (g_rand_int_range (random, 0, 2000) == 0)
            log_ratio -= 12;
          ((float *)batch->rollout_log_prob)[index] = (float)rollout;
          ((float *)batch->old_log_prob)[index] = (float)(rollout + log_ratio);
          ((guint8 *)batch->response_mask)[index] = col < length;
          batch->token_ids[index] = g_rand_int_range (random, 0, 151000);
        }
    }
  g_rand_free (random);
  return batch;
}

static gint64
bench_store_file_size (const char *path)
{
  GStatBuf info;

  return g_stat (path, &info) == 0 ? (gint64)info.st_size : 0;
}

/* Ingests @run_dir into a new store at @db with @budget; returns the seconds it took. */
static double
bench_store_ingest (const char *run_dir, const char *db, gint64 budget, guint64 *n_tokens)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  g_autoptr (DwIngester) ingester = NULL;
  DwIngestReport report;
  gint64 start;

  g_assert_no_error (error);
  dw_store_set_keep_tokens (store, budget);
  ingester = dw_ingester_new (store);
  dw_ingest_report_init (&report);
  start = g_get_monotonic_time ();
  if (!dw_ingester_ingest_path (ingester, run_dir, &report, &error))
    g_error ("ingest: %s", error->message);
  *n_tokens = report.n_tokens;
  if (report.n_batches != n_steps)
    g_error ("ingest stored %" G_GUINT64_FORMAT " batches of %u", report.n_batches, n_steps);
  dw_ingest_report_clear (&report);
  g_clear_object (&ingester);
  g_clear_object (&store); /* closing checkpoints the write-ahead log into the file */
  return (g_get_monotonic_time () - start) / 1e6;
}

static long
bench_store_status_kb (const char *field)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL)
      || (line = strstr (status, field)) == NULL)
    return -1;
  return strtol (line + strlen (field), NULL, 10);
}

typedef struct
{
  DwStore *store;
  gint64 run_id;
  GMutex lock;
} BenchStoreLoader;

static DwBatch *
bench_store_load_cb (gint64 step, gpointer user_data, GError **error)
{
  BenchStoreLoader *loader = user_data;
  DwBatch *batch;

  g_mutex_lock (&loader->lock);
  batch = dw_store_load_batch (loader->store, loader->run_id, step, error);
  g_mutex_unlock (&loader->lock);
  return batch;
}

static int
bench_store_compare (const void *a, const void *b)
{
  double left = *(const double *)a, right = *(const double *)b;

  return (left > right) - (left < right);
}

/* Opens the run in the what-if engine from @db and times slider moves. */
static void
bench_store_whatif (const char *db)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwWhatifEngine) engine = dw_whatif_engine_new (2);
  g_autoptr (GPtrArray) runs = NULL;
  g_autoptr (GArray) steps = NULL;
  BenchStoreLoader loader = { 0 };
  double moves[24];
  long rss_before = bench_store_status_kb ("VmRSS:");
  gint64 start;

  loader.store = dw_store_open_read_only (db, &error);
  g_assert_no_error (error);
  runs = dw_store_list_runs (loader.store, &error);
  loader.run_id = ((DwRunInfo *)g_ptr_array_index (runs, 0))->id;
  g_mutex_init (&loader.lock);
  steps = dw_store_list_batch_steps (loader.store, loader.run_id, &error);
  dw_whatif_engine_set_loader (engine, bench_store_load_cb, &loader, NULL);
  dw_whatif_engine_set_compact (engine, TRUE);
  start = g_get_monotonic_time ();
  if (!dw_whatif_engine_load_steps (engine, (const gint64 *)(void *)steps->data, steps->len,
                                    &error))
    g_error ("what-if open: %s", error->message);
  printf ("what-if open from the bounded store (compact steps, 2 threads): %.2f s for %u steps, "
          "RSS %.0f MB (+%.0f MB), peak %.0f MB\n",
          (g_get_monotonic_time () - start) / 1e6, steps->len,
          bench_store_status_kb ("VmRSS:") / 1024.0,
          (bench_store_status_kb ("VmRSS:") - rss_before) / 1024.0,
          bench_store_status_kb ("VmHWM:") / 1024.0);

  for (guint move = 0; move < G_N_ELEMENTS (moves); move++)
    {
      DwConfig config;
      DwValue kind = dw_value_str ("token");
      DwValue threshold = dw_value_float (exp (log (1.05) + log (10 / 1.05) * move / 24.0));
      g_autoptr (DwWhatifRunResult) result = NULL;

      dw_config_init (&config, DW_GEN_VERL);
      dw_config_set (&config, "rollout_is", &kind);
      dw_config_set (&config, "rollout_is_threshold", &threshold);
      start = g_get_monotonic_time ();
      result = dw_whatif_engine_evaluate (engine, &config, &error);
      moves[move] = (g_get_monotonic_time () - start) / 1e3;
      g_assert_no_error (error);
    }
  qsort (moves, G_N_ELEMENTS (moves), sizeof moves[0], bench_store_compare);
  printf ("slider move on the bounded store (token IS threshold, %u steps): p50 %.2f ms, p95 "
          "%.2f ms\n",
          steps->len, moves[11], moves[22]);
  g_clear_object (&loader.store);
  g_mutex_clear (&loader.lock);
}

/* Per step: what an open from the summaries reads (the token summary and the per-sequence
 * statistics) against what an open from the raw data does (the batch read back from its file and
 * a compact step built from it). */
static void
bench_store_summary_read (const char *db)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  g_autoptr (GPtrArray) runs = NULL;
  g_autoptr (GArray) steps = NULL;
  gint64 run_id, summary_us = 0, raw_us = 0;

  g_assert_no_error (error);
  runs = dw_store_list_runs (store, &error);
  g_assert_no_error (error);
  run_id = ((DwRunInfo *)runs->pdata[0])->id;
  steps = dw_store_list_batch_steps (store, run_id, &error);
  g_assert_no_error (error);
  for (guint index = 0; index < steps->len; index++)
    {
      gint64 step = g_array_index (steps, gint64, index), start = g_get_monotonic_time ();
      g_autoptr (DwTokenSummary) summary = dw_store_get_token_summary (store, run_id, step, &error);
      g_autoptr (GArray) sequences = dw_store_get_sequence_stats (store, run_id, step, &error);
      g_assert_no_error (error);
      g_assert_nonnull (summary);
      g_assert_nonnull (sequences);
      summary_us += g_get_monotonic_time () - start;
      start = g_get_monotonic_time ();
      g_autoptr (DwBatch) batch = dw_store_load_batch (store, run_id, step, &error);
      g_assert_no_error (error);
      g_autoptr (DwWhatifStep) compact = dw_whatif_step_new_compact (batch, step, &error);
      g_assert_no_error (error);
      raw_us += g_get_monotonic_time () - start;
      g_assert_true (dw_whatif_step_set_token_summary (compact, summary, &error));
    }
  printf ("per step, one thread: reading its token summary and sequence statistics %.1f ms; "
          "reading its batch back and building a compact step %.1f ms\n",
          summary_us / 1e3 / steps->len, raw_us / 1e3 / steps->len);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("dw-bench-store-XXXXXX", &error);
  g_autofree char *run_dir = g_build_filename (dir, "run", NULL);
  g_autofree char *batches = g_build_filename (run_dir, "batches", NULL);
  g_autofree char *db_default = g_build_filename (dir, "default.db", NULL);
  g_autofree char *db_bounded = g_build_filename (dir, "referenced.db", NULL);
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", dir);
  guint64 n_tokens = 0;
  double seconds, per_step, per_token, full_step;
  gint64 size_default, size_bounded, raw = 0;

  if (argc > 1)
    n_steps = (guint)atoi (argv[1]);
  if (argc > 3)
    {
      n_rows = (gsize)atol (argv[2]);
      n_cols = (gsize)atol (argv[3]);
    }
  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (batches, 0755), ==, 0);
  for (guint step = 1; step <= n_steps; step++)
    {
      g_autoptr (DwBatch) batch = bench_store_make_batch (step);
      g_autofree char *name = g_strdup_printf ("step_%06u.safetensors", step);
      g_autofree char *path = g_build_filename (batches, name, NULL);

      if (!dw_batch_write_safetensors (batch, path, &error))
        g_error ("%s", error->message);
      raw += bench_store_file_size (path);
    }
  printf ("bounded store benchmark: %u steps x %zu x %zu, float32, int64 token ids, %.0f MB of "
          "batch files\n",
          n_steps, n_rows, n_cols, raw / 1e6);

  seconds = bench_store_ingest (run_dir, db_default, DW_STORE_DEFAULT_KEEP_TOKENS, &n_tokens);
  size_default = bench_store_file_size (db_default);
  printf ("ingest into the bounded store: %.2f steps/s, %.2f s per step of %.2f M valid tokens "
          "(aim: a step every 10 s at 2 M tokens)\n",
          n_steps / seconds, seconds / n_steps, n_tokens / 1e6 / n_steps);
  printf ("store, default budget (--keep-tokens %.0f MiB): %.1f MB for %u steps, %.2f bytes per "
          "valid token\n",
          DW_STORE_DEFAULT_KEEP_TOKENS / 1048576.0, size_default / 1e6, n_steps,
          (double)size_default / (double)n_tokens);
  bench_store_ingest (run_dir, db_bounded, 0, &n_tokens);
  size_bounded = bench_store_file_size (db_bounded);
  per_step = (double)size_bounded / n_steps;
  per_token = (double)size_bounded / (double)n_tokens;
  full_step = (double)n_rows * n_cols * 17; /* f32 + f32 + bool + int64 id per padded token */
  printf ("store per referenced step: %.3f MB per step, %.3f bytes per valid token (a copy: %.1f "
          "MB per step)\n",
          per_step / 1e6, per_token, full_step / 1e6);
  printf ("store scaling to 3000 steps x 2 M valid tokens: %.1f GB (budget %.0f MiB + 3000 x %.2f "
          "MB at %.3f bytes per token)\n",
          (DW_STORE_DEFAULT_KEEP_TOKENS + 3000.0 * 2e6 * per_token) / 1e9,
          DW_STORE_DEFAULT_KEEP_TOKENS / 1048576.0, 2e6 * per_token / 1e6, per_token);

  bench_store_whatif (db_default);
  bench_store_summary_read (db_bounded);
  if (system (command) != 0)
    g_warning ("could not remove %s", dir);
  return 0;
}
