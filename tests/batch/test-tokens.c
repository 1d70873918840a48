/* test-tokens.c — the token drill-down: core statistics, tokenizer.json decoding, and
 * `driftwatch-cli tokens` on the collapse demo and on a slime dump
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * tests/data/torch/tokenizer.json is a byte-level BPE vocabulary cut down to a few pieces in the
 * shape of Qwen's/GPT-2's tokenizer.json ("Ġthe" = " the", "Ċ" = "\n", "ä½ł" = "你", an added
 * special token, a lone byte that is not UTF-8).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dw-batch-reader.h"
#include "dw-batch-tokens.h"
#include "dw-demo.h"
#include "dw-ingester.h"
#include "dw-store.h"
#include "dw-test-cli.h"
#include "dw-tokenizer.h"

static char *
torch_path (const char *rel)
{
  return g_build_filename (g_getenv ("DW_TEST_DATA"), "torch", rel, NULL);
}

static void
test_tokenizer (void)
{
  g_autofree char *path = torch_path ("tokenizer.json");
  g_autoptr (GError) error = NULL;
  g_autoptr (DwTokenizer) tok = dw_tokenizer_load (path, &error);
  const char *want[] = { " the", "\\n", "你", "hello", " ", "\\t", "\\xc3", "<|endoftext|>" };

  g_assert_no_error (error);
  g_assert_cmpuint (dw_tokenizer_get_size (tok), ==, 8);
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      g_autofree char *text = dw_tokenizer_display (tok, i);
      g_assert_cmpstr (text, ==, want[i]);
    }
  {
    gsize len;
    const guint8 *raw = g_bytes_get_data ((GBytes *)dw_tokenizer_decode (tok, 1), &len);
    g_assert_cmpuint (len, ==, 1);
    g_assert_cmpint (raw[0], ==, '\n');
  }
  g_assert_null (dw_tokenizer_display (tok, 8));
  g_assert_null (dw_tokenizer_display (tok, -1));

  /* SentencePiece pieces as Llama 2's tokenizer.json has them (BPE, byte fallback) */
  {
    static const char llama[]
      = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\xe2\x96\x81the\": 0, \"<0x0A>\": 1, "
        "\"a\": 2}}, \"added_tokens\": [{\"id\": 3, \"content\": \"</s>\"}], "
        "\"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"ByteFallback\"}]}}";
    const char *want_sp[] = { " the", "\\n", "a", "</s>" };
    g_autoptr (DwTokenizer) sp
      = dw_tokenizer_load_from_data ("llama.json", llama, sizeof llama - 1, &error);
    g_assert_no_error (error);
    for (guint i = 0; i < G_N_ELEMENTS (want_sp); i++)
      {
        g_autofree char *text = dw_tokenizer_display (sp, i);
        g_assert_cmpstr (text, ==, want_sp[i]);
      }
  }

  /* not a tokenizer: a clear error naming the file */
  {
    g_autofree char *other = torch_path ("slime_v2/expected.safetensors");
    g_autoptr (DwTokenizer) none = dw_tokenizer_load (other, &error);
    g_assert_null (none);
    g_assert_nonnull (error);
    g_assert_true (g_str_has_prefix (error->message, other));
  }
}

/* A 3×4 batch with known ratios: ranking, per-token rows and catastrophes by hand. */
static void
test_rank_and_catastrophes (void)
{
  g_autoptr (DwBatch) b = dw_batch_new (3, 4, DW_DTYPE_F32, DW_DTYPE_F32);
  float *old = b->old_log_prob, *roll = b->rollout_log_prob, *mask = b->response_mask;
  /* ℓ per row: row 0 small, row 1 one catastrophic token (−3), row 2 two tokens of +2.5 */
  const float l[3][4]
    = { { 0.1f, -0.1f, 0.f, 0.f }, { 0.f, -3.f, 0.2f, 0.f }, { 2.5f, 2.5f, 0, 0 } };
  const int len[3] = { 2, 3, 2 };
  g_autoptr (GArray) ranked = NULL, seq = NULL;
  g_autoptr (DwCatastrophes) cat = dw_batch_tokens_catastrophes_new (2.0);
  g_autoptr (GPtrArray) top = NULL;

  b->token_ids = g_new0 (gint64, 12);
  b->rewards = g_new0 (double, 3);
  for (int r = 0; r < 3; r++)
    {
      b->rewards[r] = r == 2 ? 1.0 : 0.0;
      for (int t = 0; t < 4; t++)
        {
          old[r * 4 + t] = -1.0f + l[r][t];
          roll[r * 4 + t] = -1.0f;
          mask[r * 4 + t] = t < len[r];
          b->token_ids[r * 4 + t] = 100 + t;
        }
    }
  ranked = dw_batch_tokens_rank (b, DW_SEQ_STAT_K3_SUM);
  g_assert_cmpuint (ranked->len, ==, 3);
  /* k3 = exp ℓ − 1 − ℓ: row 2: 2 × (e^2.5 − 3.5) = 17.3649…, row 1: e^−3 + 2 + (e^0.2 − 1.2) */
  g_assert_cmpuint (g_array_index (ranked, DwSeqRanked, 0).row, ==, 2);
  g_assert_cmpfloat_with_epsilon (g_array_index (ranked, DwSeqRanked, 0).stats[DW_SEQ_STAT_K3_SUM],
                                  2 * (exp (2.5) - 3.5), 1e-5);
  g_assert_cmpuint (g_array_index (ranked, DwSeqRanked, 1).row, ==, 1);
  g_assert_cmpfloat_with_epsilon (g_array_index (ranked, DwSeqRanked, 1).stats[DW_SEQ_STAT_K3_SUM],
                                  exp (-3.0) + 2.0 + exp (0.2) - 1.2, 1e-5);
  g_assert_cmpfloat (g_array_index (ranked, DwSeqRanked, 1).stats[DW_SEQ_STAT_LENGTH], ==, 3);
  g_assert_cmpfloat_with_epsilon (g_array_index (ranked, DwSeqRanked, 1).stats[DW_SEQ_STAT_K1_MAX],
                                  3.0, 1e-6);
  g_array_unref (g_steal_pointer (&ranked));
  ranked = dw_batch_tokens_rank (b, DW_SEQ_STAT_REWARD);
  g_assert_cmpuint (g_array_index (ranked, DwSeqRanked, 0).row, ==, 2);
  g_assert_cmpuint (g_array_index (ranked, DwSeqRanked, 1).row, ==, 0); /* ties by row */

  seq = dw_batch_tokens_sequence (b, 1);
  g_assert_cmpuint (seq->len, ==, 3);
  g_assert_cmpint (g_array_index (seq, DwTokenRow, 1).token_id, ==, 101);
  g_assert_cmpfloat_with_epsilon (g_array_index (seq, DwTokenRow, 1).log_ratio, -3.0, 1e-6);

  g_assert_true (dw_batch_tokens_catastrophes_add (cat, b, 7));
  g_assert_true (dw_batch_tokens_catastrophes_add (cat, b, 9));
  g_assert_cmpuint (dw_batch_tokens_catastrophes_get_total (cat), ==,
                    6); /* 3 per step: 101, 100, 101 */
  top = dw_batch_tokens_catastrophes_top (cat, 10);
  g_assert_cmpuint (top->len, ==, 2);
  {
    const DwCatastrophicToken *t = g_ptr_array_index (top, 0);
    g_assert_cmpint (t->token_id, ==, 101);
    g_assert_cmpuint (t->count, ==, 4);
    g_assert_cmpuint (t->steps->len, ==, 2);
    g_assert_cmpint (g_array_index (t->steps, gint64, 1), ==, 9);
    g_assert_cmpuint (g_array_index (t->counts, guint64, 1), ==, 2);
  }
}

static JsonObject *
cli_json (JsonParser *parser, const char *const *args)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = dw_test_run_cli (args, NULL, &out, &err);

  if (status != 0)
    g_error ("tokens exited %d: %s", status, err);
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  return json_node_get_object (json_parser_get_root (parser));
}

/* The three questions on the collapse demo, against counts made here from the stored batches. */
static void
test_cli_demo (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("dw-tokens-XXXXXX", NULL);
  g_autofree char *run_dir = g_build_filename (tmp, "demo", NULL);
  g_autofree char *db = g_build_filename (tmp, "store.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwIngester) ing = NULL;
  g_autoptr (GHashTable) counts = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr (JsonParser) p1 = json_parser_new (), p2 = json_parser_new (), p3 = json_parser_new ();
  g_autoptr (DwBatch) b60 = NULL;
  g_autofree char *path_tok = torch_path ("tokenizer.json");
  DwIngestReport report;
  gint64 best_id = -1;
  guint best = 0;
  JsonObject *o;
  JsonArray *a;

  g_assert_true (dw_demo_write (run_dir, DW_DEMO_COLLAPSE, 60, 1, &error));
  g_assert_no_error (error);
  store = dw_store_open (db, &error);
  ing = dw_ingester_new (store);
  dw_ingest_report_init (&report);
  g_assert_true (dw_ingester_ingest_path (ing, run_dir, &report, &error));
  dw_ingest_report_clear (&report);
  for (gint64 step = 1; step <= 60; step++)
    {
      g_autoptr (DwBatch) b = dw_store_load_batch (store, 1, step, &error);
      g_assert_no_error (error);
      g_assert_nonnull (b->token_ids);
      for (gsize i = 0; i < b->rows * b->cols; i++)
        {
          float l = ((float *)b->old_log_prob)[i] - ((float *)b->rollout_log_prob)[i];
          if (((guint8 *)b->response_mask)[i] && fabsf (l) > 2.0f)
            {
              gint64 id = b->token_ids[i];
              guint c = GPOINTER_TO_UINT (g_hash_table_lookup (counts, &id)) + 1;
              g_hash_table_replace (counts, g_memdup2 (&id, sizeof id), GUINT_TO_POINTER (c));
              if (c > best || (c == best && id < best_id))
                best = c, best_id = id;
            }
        }
    }
  g_assert_cmpuint (best, >, 20); /* the collapse concentrates on a few token ids */

  /* 1. across the run */
  o = cli_json (p1, (const char *[]){ "tokens", "--db", db, "--run", "1", "--top", "3", "--format",
                                      "json", NULL });
  a = json_object_get_array_member (o, "top");
  g_assert_cmpuint (json_array_get_length (a), ==, 3);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (a, 0), "token_id"),
                   ==, best_id);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (a, 0), "count"), ==,
                   best);
  g_assert_cmpint (json_object_get_int_member (o, "steps_with_tokens"), ==, 60);

  /* 2. a step's sequences by k3_sum: the first has the largest sum */
  b60 = dw_store_load_batch (store, 1, 60, &error);
  o = cli_json (p2, (const char *[]){ "tokens", "--db", db, "--run", "1", "--step", "60", "--by",
                                      "k3_sum", "--top", "32", "--format", "json", NULL });
  a = json_object_get_array_member (o, "sequences");
  g_assert_cmpuint (json_array_get_length (a), ==, b60->rows);
  for (guint i = 1; i < json_array_get_length (a); i++)
    g_assert_cmpfloat (
      json_object_get_double_member (json_array_get_object_element (a, i - 1), "k3_sum"), >=,
      json_object_get_double_member (json_array_get_object_element (a, i), "k3_sum"));

  /* 3. one sequence's tokens: ids and ratios as stored, text from the tokenizer */
  o = cli_json (p3, (const char *[]){ "tokens", "--db", db, "--run", "1", "--step", "60", "--seq",
                                      "5", "--tokenizer", path_tok, "--format", "json", NULL });
  a = json_object_get_array_member (o, "tokens");
  g_assert_cmpuint (json_array_get_length (a), >, 10);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonObject *t = json_array_get_object_element (a, i);
      gsize at = 5 * b60->cols + i;
      g_assert_cmpint (json_object_get_int_member (t, "token_id"), ==, b60->token_ids[at]);
      g_assert_cmpfloat_with_epsilon (
        json_object_get_double_member (t, "log_ratio"),
        ((float *)b60->old_log_prob)[at] - ((float *)b60->rollout_log_prob)[at], 1e-6);
      g_assert_true (json_object_has_member (t, "text"));
    }
  g_clear_object (&ing);
  g_clear_object (&store);
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmp);
    g_assert_cmpint (system (cmd), ==, 0);
  }
}

/* A slime dump ingested, then asked for its worst sequence: the one the generator spiked. */
static void
test_cli_slime (void)
{
  g_autofree char *dump = torch_path ("slime_v2");
  g_autofree char *tmp = g_dir_make_tmp ("dw-tokens-XXXXXX", NULL);
  g_autofree char *db = g_build_filename (tmp, "store.db", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;
  JsonArray *a;

  g_assert_cmpint (dw_test_run_cli ((const char *[]){ "ingest", "--quiet", "--db", db, dump, NULL },
                                    NULL, &out, &err),
                   ==, 0);
  o = cli_json (parser, (const char *[]){ "tokens", "--db", db, "--run", "1", "--step", "3", "--by",
                                          "max_abs_log_ratio", "--format", "json", NULL });
  a = json_object_get_array_member (o, "sequences");
  /* make-torch-dumps.py moves one token by −4 in samples 1 and 4 (i % 3 == 1) */
  g_assert_cmpfloat (
    json_object_get_double_member (json_array_get_object_element (a, 0), "max_abs_log_ratio"), >,
    3.9);
  g_assert_cmpfloat (
    json_object_get_double_member (json_array_get_object_element (a, 1), "max_abs_log_ratio"), >,
    3.9);
  g_assert_cmpfloat (
    json_object_get_double_member (json_array_get_object_element (a, 2), "max_abs_log_ratio"), <,
    1.0);
  {
    guint r0 = json_object_get_int_member (json_array_get_object_element (a, 0), "seq");
    guint r1 = json_object_get_int_member (json_array_get_object_element (a, 1), "seq");
    g_assert_true ((r0 == 1 && r1 == 4) || (r0 == 4 && r1 == 1));
  }
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmp);
    g_assert_cmpint (system (cmd), ==, 0);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tokens/tokenizer", test_tokenizer);
  g_test_add_func ("/tokens/rank-and-catastrophes", test_rank_and_catastrophes);
  g_test_add_func ("/tokens/cli-demo", test_cli_demo);
  g_test_add_func ("/tokens/cli-slime", test_cli_slime);
  return g_test_run ();
}
