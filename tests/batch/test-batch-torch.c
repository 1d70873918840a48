/* test-batch-torch.c — slime / miles torch dumps and hostile pickles
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The dumps in tests/data/torch/ were written by make-torch-dumps.py with Debian's python3-torch
 * in the layouts slime and miles write (see that script). Each case has expected.safetensors: the
 * same data written independently as the padded batch. The .pt reader must return exactly that
 * batch (bit for bit), and the correction core must give the same per-step metrics on both.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dw-batch-reader.h"
#include "dw-ingester.h"
#include "dw-store.h"
#include "dw-config.h"
#include "dw-correction.h"

static char *
torch_path (const char *rel)
{
  return g_build_filename (g_getenv ("DW_TEST_DATA"), "torch", rel, NULL);
}

/* token_ids and rewards of expected.safetensors (the reader's writers do not emit them) */
static void
read_extras (const char *path, gint64 **tokens, double **rewards, gsize *n_tok, gsize *n_rew)
{
  g_autofree char *data = NULL;
  gsize len;
  guint64 hlen;
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  memcpy (&hlen, data, 8);
  {
    g_autofree char *hdr = g_strndup (data + 8, hlen);

    const char *names[2] = { "\"token_ids\"", "\"rewards\"" };
    for (int k = 0; k < 2; k++)
      {
        const char *p = strstr (hdr, names[k]);
        const char *o;
        guint64 a, b;
        g_assert_nonnull (p);
        o = strstr (p, "data_offsets\":[");
        g_assert_nonnull (o);
        g_assert_cmpint (
          sscanf (o, "data_offsets\":[%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "]", &a, &b), ==,
          2);
        if (k == 0)
          {
            *tokens = g_memdup2 (data + 8 + hlen + a, b - a);
            *n_tok = (b - a) / 8;
          }
        else
          {
            *rewards = g_memdup2 (data + 8 + hlen + a, b - a);
            *n_rew = (b - a) / 8;
          }
      }
  }
}

static void
assert_metrics_equal (const DwBatch *a, const DwBatch *b, DwGeneration gen, const char *preset)
{
  DwConfig config;
  DwCorrectionResult ra, rb;
  DwCorrectionError err = { 0 };

  dw_config_init (&config, gen);
  if (preset)
    g_assert_true (dw_preset_apply (&config, preset, &err));
  else
    {
      DwValue is = dw_value_str ("token"), rs = dw_value_str ("token_k1");
      DwValue th = dw_value_str ("0.5_2");
      dw_config_set (&config, "rollout_is", &is);
      dw_config_set (&config, "rollout_rs", &rs);
      dw_config_set (&config, "rollout_rs_threshold", &th);
    }
  dw_correction_result_init (&ra);
  dw_correction_result_init (&rb);
  if (!dw_correction_run (a, &config, &ra, &err))
    g_error ("%s", err.message);
  g_assert_true (dw_correction_run (b, &config, &rb, &err));
  g_assert_cmpuint (ra.n_metrics, ==, rb.n_metrics);
  g_assert_cmpuint (ra.n_metrics, >, 5);
  for (gsize i = 0; i < ra.n_metrics; i++)
    {
      g_assert_cmpstr (ra.metrics[i].key, ==, rb.metrics[i].key);
      if (isnan (ra.metrics[i].value))
        g_assert_true (isnan (rb.metrics[i].value));
      else
        g_assert_cmpfloat (ra.metrics[i].value, ==, rb.metrics[i].value);
    }
  dw_correction_result_clear (&ra);
  dw_correction_result_clear (&rb);
}

/* @dump: the path given to the reader; @dir: the case directory. */
static void
check_case (const char *dir, const char *dump)
{
  g_autofree char *pt = torch_path (dump);
  g_autofree char *st_rel = g_build_filename (dir, "expected.safetensors", NULL);
  g_autofree char *st = torch_path (st_rel);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) got = NULL, want = NULL;
  g_autofree gint64 *tokens = NULL;
  g_autofree double *rewards = NULL;
  gsize n_tok = 0, n_rew = 0, n;

  got = dw_batch_read_file (pt, &error);
  g_assert_no_error (error);
  want = dw_batch_read_file (st, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (got->rows, ==, want->rows);
  g_assert_cmpuint (got->cols, ==, want->cols);
  g_assert_cmpint (got->lp_dtype, ==, DW_DTYPE_F32);
  g_assert_cmpint (got->mask_dtype, ==, want->mask_dtype);
  g_assert_cmpint (got->step, ==, 3);
  n = got->rows * got->cols;
  g_assert_cmpmem (got->old_log_prob, n * 4, want->old_log_prob, n * 4);
  g_assert_cmpmem (got->rollout_log_prob, n * 4, want->rollout_log_prob, n * 4);
  g_assert_cmpmem (got->response_mask, n * 4, want->response_mask, n * 4);
  read_extras (st, &tokens, &rewards, &n_tok, &n_rew);
  g_assert_nonnull (got->token_ids);
  g_assert_nonnull (got->rewards);
  g_assert_cmpuint (n_tok, ==, n);
  g_assert_cmpmem (got->token_ids, n * 8, tokens, n * 8);
  g_assert_cmpmem (got->rewards, got->rows * 8, rewards, n_rew * 8);
  assert_metrics_equal (got, want, DW_GEN_VERL, NULL);
  assert_metrics_equal (got, want, DW_GEN_VERL, "bypass_pg_geo_rs_token_tis");
  assert_metrics_equal (got, want, DW_GEN_SLIME, NULL);
}

static void
test_v2 (void)
{
  check_case ("slime_v2", "slime_v2/train_data/3.pt");
}

static void
test_v2_case (gconstpointer data)
{
  g_autofree char *dump = g_build_filename ((const char *)data, "train_data", "3.pt", NULL);
  check_case (data, dump);
}

static void
test_v2_join (void)
{
  /* rollout_log_probs only in rollout_data/3.pt, joined on rollout_position */
  check_case ("slime_v2_join", "slime_v2_join/train_data/3.pt");
}

static void
test_v1 (gconstpointer data)
{
  const char *dir = data;
  g_autofree char *dump = g_build_filename (dir, "train_data", "3_0.pt", NULL);
  g_autofree char *other = g_build_filename (dir, "train_data", "3_1.pt", NULL);
  g_autofree char *p0 = torch_path (dump);
  g_autofree char *p1 = torch_path (other);

  check_case (dir, dump);
  /* any rank file reads the whole set; only the lowest rank leads it */
  check_case (dir, other);
  g_assert_true (dw_batch_slime_is_set_leader (p0));
  g_assert_false (dw_batch_slime_is_set_leader (p1));
}

static void
test_v1_missing_rank (void)
{
  g_autofree char *pt = torch_path ("slime_v1_cp2_missing/train_data/3_0.pt");
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) b = dw_batch_read_file (pt, &error);

  g_assert_null (b);
  g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_TRUNCATED);
  g_assert_nonnull (strstr (error->message, "cannot reassemble the context-parallel slices of "
                                            "rollout 3: ranks 2 hold the same samples"));
  g_assert_nonnull (strstr (error->message, "rank files are missing"));
}

static void
expect_refused (const char *rel, DwBatchError code, const char *needle)
{
  g_autofree char *pt = torch_path (rel);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) b = NULL;

  g_remove ("/tmp/driftwatch-pwned");
  b = dw_batch_read_file (pt, &error);
  g_assert_null (b);
  g_assert_error (error, DW_BATCH_ERROR, (gint)code);
  if (!strstr (error->message, needle))
    g_error ("%s: message '%s' lacks '%s'", rel, error->message, needle);
  g_assert_true (g_str_has_prefix (error->message, pt));
  /* nothing was executed */
  g_assert_false (g_file_test ("/tmp/driftwatch-pwned", G_FILE_TEST_EXISTS));
}

static void
test_hostile (void)
{
  expect_refused ("hostile/posix_system.pt", DW_BATCH_ERROR_CORRUPT,
                  ": the pickled object is an object of the refused global posix.system (not "
                  "executed), not a slime dump's dict; globals refused, never executed: "
                  "posix.system (offset 2)");
  expect_refused ("hostile/posix_in_sample.pt", DW_BATCH_ERROR_CORRUPT,
                  "samples[0].log_probs: expected a tensor or a list of numbers, found an object "
                  "of the refused global posix.system (not executed); globals refused, never "
                  "executed: posix.system");
  expect_refused ("hostile/deep.pt", DW_BATCH_ERROR_CORRUPT,
                  "member archive/data.pkl: offset 5066: containers nested deeper than 64 levels");
  expect_refused ("hostile/huge_storage.pt", DW_BATCH_ERROR_TOO_LARGE,
                  "storage '0' declares 1099511627776 elements, more than the reader's limit");
  expect_refused ("hostile/past_storage.pt", DW_BATCH_ERROR_CORRUPT,
                  "tensor [1073741824] at offset 0 reaches past its storage '0' of 4 elements");
  expect_refused ("hostile/duplicate_pkl.pt", DW_BATCH_ERROR_CORRUPT,
                  ": zip archive: two members have the same name");
  expect_refused ("hostile/truncated.pt", DW_BATCH_ERROR_TRUNCATED,
                  "no end-of-central-directory record");
}

/* Every prefix of a real dump fails cleanly (a file still being written), never crashes. */
static void
test_prefixes (void)
{
  g_autofree char *pt = torch_path ("slime_v2/train_data/3.pt");
  g_autofree char *data = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (pt, &data, &len, NULL));
  for (gsize cut = 0; cut < len; cut += 97)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (DwBatch) b = dw_batch_read_bytes ("cut.pt", (const guint8 *)data, cut, &error);
      g_assert_null (b);
      g_assert_nonnull (error);
      g_assert_true (g_str_has_prefix (error->message, "cut.pt: "));
    }
  {
    /* and the whole file from memory: v2 needs no siblings */
    g_autoptr (GError) error = NULL;
    g_autoptr (DwBatch) b = dw_batch_read_bytes ("3.pt", (const guint8 *)data, len, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (b->rows, ==, 6);
  }
}

static void
copy_tree (const char *from, const char *to)
{
  g_autoptr (GDir) d = g_dir_open (from, 0, NULL);
  const char *entry;

  g_assert_nonnull (d);
  g_mkdir_with_parents (to, 0700);
  while ((entry = g_dir_read_name (d)))
    {
      g_autofree char *src = g_build_filename (from, entry, NULL);
      g_autofree char *dst = g_build_filename (to, entry, NULL);
      g_autofree char *data = NULL;
      gsize len;
      if (g_file_test (src, G_FILE_TEST_IS_DIR))
        {
          copy_tree (src, dst);
          continue;
        }
      g_assert_true (g_file_get_contents (src, &data, &len, NULL));
      g_assert_true (g_file_set_contents (dst, data, (gssize)len, NULL));
    }
}

/* A --dump-details directory ingests as one run: the batch of rollout 3 with its token ids and
 * rewards comes back from the store as the reader gave it; rollout_data/ and the other rank
 * files add no batch of their own. */
static void
test_ingest (gconstpointer data)
{
  const char *dir = data;
  g_autofree char *tmp = g_dir_make_tmp ("dw-torch-XXXXXX", NULL);
  g_autofree char *dump = g_build_filename (tmp, "dump", NULL);
  g_autofree char *db = g_build_filename (tmp, "store.db", NULL);
  g_autofree char *src_train = NULL, *src_rollout = NULL, *dst = NULL, *dst_r = NULL;
  g_autofree char *case_dir = torch_path (dir);
  g_autofree char *st = g_build_filename (case_dir, "expected.safetensors", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwIngester) ing = NULL;
  g_autoptr (DwBatch) want = NULL, back = NULL;
  g_autoptr (GPtrArray) runs = NULL;
  DwIngestReport report;
  gsize n;

  src_train = g_build_filename (case_dir, "train_data", NULL);
  src_rollout = g_build_filename (case_dir, "rollout_data", NULL);
  dst = g_build_filename (dump, "train_data", NULL);
  dst_r = g_build_filename (dump, "rollout_data", NULL);
  copy_tree (src_train, dst);
  if (g_file_test (src_rollout, G_FILE_TEST_IS_DIR))
    copy_tree (src_rollout, dst_r);
  store = dw_store_open (db, &error);
  g_assert_no_error (error);
  ing = dw_ingester_new (store);
  dw_ingest_report_init (&report);
  g_assert_true (dw_ingester_ingest_path (ing, dump, &report, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (report.n_batches, ==, 1);
  g_assert_cmpuint (report.diagnostics->len, ==, 0);
  runs = dw_store_list_runs (store, &error);
  g_assert_cmpuint (runs->len, ==, 1);
  back = dw_store_load_batch (store, ((DwRunInfo *)g_ptr_array_index (runs, 0))->id, 3, &error);
  g_assert_no_error (error);
  want = dw_batch_read_file (st, &error);
  g_assert_no_error (error);
  n = want->rows * want->cols;
  g_assert_cmpuint (back->rows * back->cols, ==, n);
  g_assert_cmpmem (back->old_log_prob, n * 4, want->old_log_prob, n * 4);
  g_assert_cmpmem (back->rollout_log_prob, n * 4, want->rollout_log_prob, n * 4);
  g_assert_nonnull (back->token_ids);
  g_assert_nonnull (back->rewards);
  {
    g_autofree gint64 *tokens = NULL;
    g_autofree double *rewards = NULL;
    gsize n_tok, n_rew;
    read_extras (st, &tokens, &rewards, &n_tok, &n_rew);
    g_assert_cmpmem (back->token_ids, n * 8, tokens, n_tok * 8);
    g_assert_cmpmem (back->rewards, back->rows * 8, rewards, n_rew * 8);
  }
  assert_metrics_equal (back, want, DW_GEN_SLIME, NULL);
  dw_ingest_report_clear (&report);
  g_clear_object (&ing);
  g_clear_object (&store);
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmp);
    g_assert_cmpint (system (cmd), ==, 0);
  }
}

/* slime's torch.save writes in place: a follower first sees a partial zip. It is reported as
 * incomplete and not remembered, and the completed file is read on the next pass. */
static void
test_ingest_growing (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("dw-torch-XXXXXX", NULL);
  g_autofree char *train = g_build_filename (tmp, "dump", "train_data", NULL);
  g_autofree char *dump = g_build_filename (tmp, "dump", NULL);
  g_autofree char *dst = g_build_filename (train, "3.pt", NULL);
  g_autofree char *db = g_build_filename (tmp, "store.db", NULL);
  g_autofree char *src = torch_path ("slime_v2/train_data/3.pt");
  g_autofree char *data = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwIngester) ing = NULL;
  DwIngestReport report;
  gsize len;

  g_assert_true (g_file_get_contents (src, &data, &len, NULL));
  g_mkdir_with_parents (train, 0700);
  g_assert_true (g_file_set_contents (dst, data, (gssize)len / 2, NULL));
  store = dw_store_open (db, &error);
  ing = dw_ingester_new (store);
  dw_ingest_report_init (&report);
  g_assert_true (dw_ingester_ingest_path (ing, dump, &report, &error));
  g_assert_cmpuint (report.n_batches, ==, 0);
  g_assert_cmpuint (report.incomplete->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (report.incomplete, 0), "3.pt: zip archive"));
  dw_ingest_report_clear (&report);

  g_assert_true (g_file_set_contents (dst, data, (gssize)len, NULL));
  dw_ingest_report_init (&report);
  g_assert_true (dw_ingester_ingest_path (ing, dump, &report, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (report.n_batches, ==, 1);
  dw_ingest_report_clear (&report);
  g_clear_object (&ing);
  g_clear_object (&store);
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmp);
    g_assert_cmpint (system (cmd), ==, 0);
  }
}

/* Live per-rank dump (slime v1, cp 2): rank 0's file lands first and cannot be reassembled
 * alone; when rank 1's file arrives, the follower is told about that file only, and it reads the
 * set through it. */
static void
test_ingest_ranks_arriving (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("dw-torch-XXXXXX", NULL);
  g_autofree char *dump = g_build_filename (tmp, "dump", NULL);
  g_autofree char *train = g_build_filename (dump, "train_data", NULL);
  g_autofree char *db = g_build_filename (tmp, "store.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwIngester) ing = NULL;
  DwIngestReport report;

  g_mkdir_with_parents (train, 0700);
  for (int rank = 0; rank < 2; rank++)
    {
      g_autofree char *name = g_strdup_printf ("3_%d.pt", rank);
      g_autofree char *rel = g_build_filename ("slime_v1_cp4", "train_data", name, NULL);
      g_autofree char *src = torch_path (rel);
      g_autofree char *dst = g_build_filename (train, name, NULL);
      g_autofree char *data = NULL;
      gsize len;

      g_assert_true (g_file_get_contents (src, &data, &len, NULL));
      g_assert_true (g_file_set_contents (dst, data, (gssize)len, NULL));
      if (rank == 0)
        {
          store = dw_store_open (db, &error);
          ing = dw_ingester_new (store);
          dw_ingest_report_init (&report);
          g_assert_true (dw_ingester_ingest_path (ing, dump, &report, &error));
          g_assert_cmpuint (report.n_batches, ==, 0);
          g_assert_cmpuint (report.incomplete->len, ==, 1);
          g_assert_nonnull (strstr (g_ptr_array_index (report.incomplete, 0),
                                    "cannot reassemble the context-parallel slices"));
          dw_ingest_report_clear (&report);
        }
    }
  /* cp 4 needs ranks 0–3: still incomplete with two of them */
  {
    g_autofree char *p1 = g_build_filename (train, "3_1.pt", NULL);
    dw_ingest_report_init (&report);
    g_assert_true (dw_ingester_ingest_file (ing, p1, dump, &report, &error));
    g_assert_cmpuint (report.n_batches, ==, 0);
    dw_ingest_report_clear (&report);
  }
  for (int rank = 2; rank < 4; rank++)
    {
      g_autofree char *name = g_strdup_printf ("3_%d.pt", rank);
      g_autofree char *rel = g_build_filename ("slime_v1_cp4", "train_data", name, NULL);
      g_autofree char *src = torch_path (rel);
      g_autofree char *dst = g_build_filename (train, name, NULL);
      g_autofree char *data = NULL;
      gsize len;

      g_assert_true (g_file_get_contents (src, &data, &len, NULL));
      g_assert_true (g_file_set_contents (dst, data, (gssize)len, NULL));
      dw_ingest_report_init (&report);
      g_assert_true (dw_ingester_ingest_file (ing, dst, dump, &report, &error));
      g_assert_no_error (error);
      /* the last rank completes the set: read through it */
      g_assert_cmpuint (report.n_batches, ==, rank == 3 ? 1 : 0);
      dw_ingest_report_clear (&report);
    }
  g_clear_object (&ing);
  g_clear_object (&store);
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmp);
    g_assert_cmpint (system (cmd), ==, 0);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/batch-torch/slime-v2", test_v2);
  g_test_add_func ("/batch-torch/slime-v2-rollout-join", test_v2_join);
  g_test_add_data_func ("/batch-torch/slime-v2-protocol-4", "slime_v2_p4", test_v2_case);
  g_test_add_data_func ("/batch-torch/slime-v2-protocol-5", "slime_v2_p5", test_v2_case);
  g_test_add_data_func ("/batch-torch/slime-v1-cp1", "slime_v1_cp1", test_v1);
  g_test_add_data_func ("/batch-torch/slime-v1-cp2", "slime_v1_cp2", test_v1);
  g_test_add_data_func ("/batch-torch/slime-v1-cp4", "slime_v1_cp4", test_v1);
  g_test_add_data_func ("/batch-torch/slime-v1-cp2-cuda", "slime_v1_cp2_cuda", test_v1);
  g_test_add_data_func ("/batch-torch/slime-v1-tp2-cp2-pp2", "slime_v1_tp2_cp2_pp2", test_v1);
  g_test_add_data_func ("/batch-torch/slime-v1-cp2-rollout-join", "slime_v1_cp2_join", test_v1);
  g_test_add_data_func ("/batch-torch/miles-cp2", "miles_cp2", test_v1);
  g_test_add_data_func ("/batch-torch/miles-bshd-cp2", "miles_bshd_cp2", test_v1);
  g_test_add_func ("/batch-torch/slime-v1-missing-rank", test_v1_missing_rank);
  g_test_add_func ("/batch-torch/hostile", test_hostile);
  g_test_add_func ("/batch-torch/prefixes", test_prefixes);
  g_test_add_data_func ("/batch-torch/ingest-v2", "slime_v2", test_ingest);
  g_test_add_data_func ("/batch-torch/ingest-v1-cp4", "slime_v1_cp4", test_ingest);
  g_test_add_data_func ("/batch-torch/ingest-miles", "miles_cp2", test_ingest);
  g_test_add_func ("/batch-torch/ingest-growing", test_ingest_growing);
  g_test_add_func ("/batch-torch/ingest-ranks-arriving", test_ingest_ranks_arriving);
  return g_test_run ();
}
