/* test-recompute.c — recompute equals `metrics` on each stored step's batch file, for every
 * preset of every generation; the comparison with logged values flags a wrong config; the CLI
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Fixture: `driftwatch-cli demo --scenario collapse` writes a run folder; its batches and its
 * metrics.jsonl are put into a fresh store with the store's writer API and the verl JSONL reader
 * (what `ingest` does for these two files).
 */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "dw-batch-reader.h"
#include "dw-correction.h"
#include "dw-demo.h"
#include "dw-log-reader.h"
#include "dw-recompute.h"
#include "dw-store-writer.h"
#include "dw-store.h"
#include "dw-test-cli.h"

#define N_STEPS 16

typedef struct
{
  char *dir, *db;
  DwStore *store;
  gint64 run_id;
} Fixture;

static Fixture fx;

typedef struct
{
  DwStore *store;
  gint64 run_id;
} PointCtx;

static void
on_point (const DwScalarPoint *p, gpointer data)
{
  PointCtx *c = data;
  g_autoptr (GError) error = NULL;
  gint64 tag = dw_store_ensure_tag (c->store, c->run_id, p->tag, p->step_key, &error);
  g_assert_no_error (error);
  g_assert_true (
    dw_store_put_point (c->store, c->run_id, tag, p->step, p->wall_time, p->value, &error));
}

static void
on_diag (goffset offset, const char *message, gpointer data)
{
  g_error ("diagnostic at %" G_GOFFSET_FORMAT ": %s", offset, message);
}

static char *
batch_path (gint64 step)
{
  g_autofree char *name = g_strdup_printf ("step_%06" G_GINT64_FORMAT ".safetensors", step);
  return g_build_filename (fx.dir, "batches", name, NULL);
}

static void
fixture_setup (void)
{
  g_autoptr (GError) error = NULL;
  fx.dir = g_dir_make_tmp ("dw-recompute-XXXXXX", &error);
  g_assert_no_error (error);
  g_assert_true (dw_demo_write (fx.dir, DW_DEMO_COLLAPSE, N_STEPS, 1, &error));
  g_assert_no_error (error);
  fx.db = g_build_filename (fx.dir, "store.db", NULL);
  fx.store = dw_store_open (fx.db, &error);
  g_assert_no_error (error);
  fx.run_id = dw_store_ensure_run (fx.store, "demo-collapse", "verl", fx.dir, &error);
  g_assert_no_error (error);
  for (gint64 s = 1; s <= N_STEPS; s++)
    {
      g_autofree char *path = batch_path (s);
      DwBatch *b = dw_batch_read_file (path, &error);
      g_assert_no_error (error);
      /* the demo's batches are log-probs: ≤ 0 in both engines on every valid token */
      g_assert_cmpint (b->lp_dtype, ==, DW_DTYPE_F32);
      for (gsize i = 0; i < b->rows * b->cols; i++)
        if (dw_batch_mask_value (b, i) != 0)
          {
            g_assert_cmpfloat (((const float *)b->old_log_prob)[i], <=, 0.0f);
            g_assert_cmpfloat (((const float *)b->rollout_log_prob)[i], <=, 0.0f);
          }
      g_assert_true (dw_store_put_batch (fx.store, fx.run_id, s, b, path, &error));
      dw_batch_free (b);
    }
  g_autofree char *jsonl = g_build_filename (fx.dir, "metrics.jsonl", NULL);
  g_autofree char *data = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (jsonl, &data, &len, &error));
  g_autoptr (DwLogReader) reader = dw_log_reader_new (DW_FORMAT_VERL_JSONL, jsonl);
  PointCtx ctx = { fx.store, fx.run_id };
  g_assert_true (dw_store_begin (fx.store, &error));
  gsize used
    = dw_log_reader_feed (reader, 0, (const guint8 *)data, len, TRUE, on_point, on_diag, &ctx);
  g_assert_cmpuint (used, ==, len);
  g_assert_true (dw_store_commit (fx.store, &error));
}

static void
fixture_teardown (void)
{
  g_clear_object (&fx.store);
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", fx.dir);
  g_assert_cmpint (system (cmd), ==, 0);
  g_free (fx.dir);
  g_free (fx.db);
}

/* every preset of every generation: the recomputed metrics of every stored step are
 * bit-identical to dw_correction_run on that step's batch file (what `metrics` prints) */
static void
test_all_presets (void)
{
  guint n_cases = 0;
  for (int g = 0; g < DW_N_GENERATIONS; g++)
    {
      size_t n;
      const DwPresetInfo *p = dw_preset_list ((DwGeneration)g, &n);
      for (size_t i = 0; i < n; i++)
        {
          DwConfig c;
          dw_config_init (&c, (DwGeneration)g);
          DwValue v = dw_value_str (p[i].name);
          dw_config_set (&c, "preset", &v);
          g_autoptr (GError) error = NULL;
          g_autoptr (DwRecomputeResult) res
            = dw_recompute_run (fx.store, fx.run_id, &c, (DwGeneration)g, NULL, NULL, &error);
          g_assert_no_error (error);
          g_assert_cmpuint (res->n_steps, ==, N_STEPS);
          DwConfig ref_cfg;
          DwCorrectionError err;
          g_assert_true (dw_preset_config ((DwGeneration)g, p[i].name, &ref_cfg, &err));
          for (guint s = 0; s < res->n_steps; s++)
            {
              const DwRecomputeStep *st = &res->steps[s];
              g_assert_cmpint (st->step, ==, s + 1);
              g_autofree char *path = batch_path (st->step);
              DwBatch *b = dw_batch_read_file (path, &error);
              g_assert_no_error (error);
              DwCorrectionResult ref;
              gboolean ok = dw_correction_run (b, &ref_cfg, &ref, &err);
              g_assert_cmpint (ok, ==, !st->failed);
              if (ok)
                {
                  g_assert_cmpuint (st->result.n_metrics, ==, ref.n_metrics);
                  for (gsize m = 0; m < ref.n_metrics; m++)
                    {
                      g_assert_cmpstr (st->result.metrics[m].key, ==, ref.metrics[m].key);
                      double a = st->result.metrics[m].value, r = ref.metrics[m].value;
                      if (!(isnan (a) && isnan (r)) && memcmp (&a, &r, sizeof a) != 0)
                        g_error ("%s/%s step %" G_GINT64_FORMAT ": %s %.17g vs metrics %.17g",
                                 dw_generation_name ((DwGeneration)g), p[i].name, st->step,
                                 ref.metrics[m].key, a, r);
                    }
                  dw_correction_result_clear (&ref);
                }
              else
                g_assert_cmpstr (st->error.message, ==, err.message);
              dw_batch_free (b);
              n_cases++;
            }
        }
    }
  g_assert_cmpuint (n_cases, >=, N_STEPS * 30);
}

/* the config the demo trainer used agrees with its log under the release it ran (verl 0.9.0);
 * under v0.7.1 the IS keys meant the raw ratio and disagree; the preset's own threshold does
 * not agree either */
static void
test_logged (void)
{
  g_autoptr (GError) error = NULL;
  DwConfig c;
  dw_config_init (&c, DW_GEN_VERL_LATEST);
  DwValue v = dw_value_str ("decoupled_k3_rs_token_tis");
  dw_config_set (&c, "preset", &v);
  v = dw_value_float (0.05);
  dw_config_set (&c, "rollout_rs_threshold", &v);
  g_autoptr (DwRecomputeResult) same
    = dw_recompute_run (fx.store, fx.run_id, &c, DW_GEN_VERL_LATEST, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (same->n_flagged, ==, 0);
  g_assert_null (dw_config_get (&same->config, "preset"));
  for (guint s = 0; s < same->n_steps; s++)
    g_assert_cmpuint (same->steps[s].n_compared, >=, 40); /* 13 off-policy + IS + RS keys */
  {
    DwConfig old = c;
    old.generation = DW_GEN_VERL_0_7_1;
    g_autoptr (DwRecomputeResult) v071
      = dw_recompute_run (fx.store, fx.run_id, &old, DW_GEN_VERL_0_7_1, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (v071->n_flagged, >, 0);
    for (guint s = 0; s < v071->n_steps; s++)
      for (guint d = 0; v071->steps[s].diffs != NULL && d < v071->steps[s].diffs->len; d++)
        g_assert_true (
          g_str_has_prefix (((DwRecomputeDiff *)g_ptr_array_index (v071->steps[s].diffs, d))->key,
                            "rollout_corr/rollout_is_"));
  }

  dw_config_unset (&c, "rollout_rs_threshold");
  g_autoptr (DwRecomputeResult) other
    = dw_recompute_run (fx.store, fx.run_id, &c, DW_GEN_VERL_LATEST, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (other->n_flagged, >, 0);
  guint rs_diffs = 0;
  for (guint s = 0; s < other->n_steps; s++)
    for (guint d = 0; d < other->steps[s].diffs->len; d++)
      {
        DwRecomputeDiff *df = g_ptr_array_index (other->steps[s].diffs, d);
        /* only what the threshold changes can disagree */
        g_assert_true (g_str_has_prefix (df->key, "rollout_corr/rollout_rs_"));
        g_assert_cmpstr (df->key, ==, df->tag);
        rs_diffs++;
      }
  g_assert_cmpuint (rs_diffs, >, 0);
}

static void
test_agree_rule (void)
{
  g_assert_true (dw_recompute_values_agree (NAN, NAN, 2e-5, 1e-7));
  g_assert_false (dw_recompute_values_agree (NAN, 1, 2e-5, 1e-7));
  g_assert_true (dw_recompute_values_agree (INFINITY, INFINITY, 2e-5, 1e-7));
  g_assert_false (dw_recompute_values_agree (INFINITY, -INFINITY, 2e-5, 1e-7));
  g_assert_true (dw_recompute_values_agree (1.0, 1.0 + 1e-5, 2e-5, 0));
  g_assert_false (dw_recompute_values_agree (1.0, 1.0 + 3e-5, 2e-5, 0));
  g_assert_true (dw_recompute_values_agree (0, 5e-8, 2e-5, 1e-7));
}

/* ------------------------------------------------------------------------------------------ */
/* CLI                                                                                          */

static double
json_num (JsonNode *n)
{
  if (JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING)
    {
      const char *s = json_node_get_string (n);
      return strcmp (s, "nan") == 0 ? NAN : strcmp (s, "inf") == 0 ? INFINITY : -INFINITY;
    }
  return json_node_get_double (n);
}

/* `recompute --format json` equals `metrics FILE` for each step (compared as printed) */
static void
test_cli_json (void)
{
  const char *presets[][2] = { { "verl-0.7.1", "decoupled_geo_rs_token_tis" },
                               { "verl-0.7", "decoupled_geo_rs" },
                               { "slime", NULL },
                               /* IcePop, added in verl 0.8.0 */
                               { "verl-0.9.0", "decoupled_token_icepop" },
                               { "verl-0.8.0", "bypass_pg_token_icepop" } };
  for (guint k = 0; k < G_N_ELEMENTS (presets); k++)
    {
      size_t n;
      DwGeneration gen;
      g_assert_true (dw_generation_from_name (presets[k][0], &gen));
      const char *preset = presets[k][1] ? presets[k][1] : dw_preset_list (gen, &n)[0].name;
      g_autofree char *out = NULL, *err = NULL;
      const char *args[] = { "recompute", "--db", fx.db,          "--run",       "demo-collapse",
                             "--preset",  preset, "--generation", presets[k][0], NULL };
      g_assert_cmpint (dw_test_run_cli (args, NULL, &out, &err), ==, 0);
      g_autoptr (JsonParser) p = json_parser_new ();
      g_assert_true (json_parser_load_from_data (p, out, -1, NULL));
      JsonObject *root = json_node_get_object (json_parser_get_root (p));
      JsonArray *steps = json_object_get_array_member (root, "steps");
      g_assert_cmpuint (json_array_get_length (steps), ==, N_STEPS);
      for (guint s = 0; s < N_STEPS; s += 5)
        {
          JsonObject *st = json_array_get_object_element (steps, s);
          gint64 step = json_object_get_int_member (st, "step");
          g_autofree char *path = batch_path (step);
          g_autofree char *mout = NULL, *merr = NULL;
          const char *margs[]
            = { "metrics", path, "--preset", preset, "--generation", presets[k][0], NULL };
          g_assert_cmpint (dw_test_run_cli (margs, NULL, &mout, &merr), ==, 0);
          g_autoptr (JsonParser) mp = json_parser_new ();
          g_assert_true (json_parser_load_from_data (mp, mout, -1, NULL));
          JsonObject *mm = json_object_get_object_member (
            json_node_get_object (json_parser_get_root (mp)), "metrics");
          JsonObject *rm = json_object_get_object_member (st, "metrics");
          g_assert_cmpuint (json_object_get_size (mm), ==, json_object_get_size (rm));
          g_assert_cmpuint (json_object_get_size (mm), >, 10);
          if (strstr (preset, "icepop"))
            g_assert_true (json_object_has_member (rm, "rollout_corr/rollout_is_oob_ratio"));
          g_autoptr (GList) members = json_object_get_members (mm);
          for (GList *l = members; l; l = l->next)
            {
              double a = json_num (json_object_get_member (mm, l->data));
              double b = json_num (json_object_get_member (rm, l->data));
              g_assert_true ((isnan (a) && isnan (b)) || a == b);
            }
        }
    }
}

static void
test_cli_csv_and_errors (void)
{
  g_autofree char *out = NULL, *err = NULL;
  const char *args[]
    = { "recompute",
        "--db",
        fx.db,
        "--run",
        "demo-collapse",
        "--config",
        "{\"preset\": \"decoupled_k3_rs_token_tis\", \"rollout_rs_threshold\": 0.05}",
        "--format",
        "csv",
        NULL };
  g_assert_cmpint (dw_test_run_cli (args, NULL, &out, &err), ==, 0);
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, N_STEPS + 2); /* header, rows, final "" */
  g_assert_true (g_str_has_prefix (lines[0], "step,rollout_corr/chi2_seq,"));
  g_assert_true (
    g_str_has_suffix (lines[0], ",error,logged_compared,logged_disagree,disagreeing_keys"));
  g_assert_true (g_str_has_prefix (lines[1], "1,"));
  g_assert_true (g_str_has_suffix (lines[1], ",0,")); /* nothing disagrees */
  /* no --generation: the run's, from the verl-0.9.0 keys it logged (no log printed one here) */
  g_assert_cmpstr (err, ==, "recompute: generation verl-0.9.0 (inferred from its metric keys)\n");

  struct
  {
    const char *args[12];
    int code;
    const char *msg;
  } bad[] = {
    { { "recompute", "--db", fx.db, "--run", "nope", "--preset", "disabled", NULL }, 1, "nope" },
    { { "recompute", "--db", fx.db, "--run", "demo-collapse", "--preset", "nope", NULL },
      2,
      "nope" },
    { { "recompute", "--db", fx.db, "--run", "demo-collapse", "--config", "[1]", NULL },
      2,
      "not a JSON object" },
    { { "recompute", "--db", fx.db, "--run", "demo-collapse", NULL }, 2, "usage" },
    { { "recompute", "--db", fx.db, "--run", "demo-collapse", "--preset", "disabled", "--format",
        "xml", NULL },
      2,
      "xml" },
    { { "recompute", "--db", fx.db, "--run", "demo-collapse", "--config",
        "{\"rollout_rs\": \"geometric\", \"rollout_rs_threshold\": 2.0}", NULL },
      2,
      "Invalid rollout_rs option: geometric" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *o = NULL, *e = NULL;
      g_assert_cmpint (dw_test_run_cli (bad[i].args, NULL, &o, &e), ==, bad[i].code);
      if (!strstr (e, bad[i].msg))
        g_error ("case %u: stderr '%s' lacks '%s'", i, e, bad[i].msg);
    }
}

/* `recompute --run R` alone on the demo as `demo --ingest` stores it: the config and release its
 * console log printed (verl==0.9.0, the pprint-ed algorithm.rollout_correction), and the
 * recompute agrees with every logged value. A run that says nothing about its generation (no
 * version, no config, no correction keys) is recomputed as the newest verl, and says so. */
static void
test_cli_generation_sources (void)
{
  g_autofree char *dir = g_build_filename (fx.dir, "ingested", NULL);
  g_autofree char *db = g_build_filename (fx.dir, "ingested.db", NULL);
  g_autoptr (GError) error = NULL;
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[]
      = { "demo", dir, "--scenario", "collapse", "--steps", "30", "--ingest", "--db", db, NULL };
    g_assert_cmpint (dw_test_run_cli (args, NULL, &out, &err), ==, 0);
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "recompute", "--db", db, "--run", "ingested", NULL };
    g_assert_cmpint (dw_test_run_cli (args, NULL, &out, &err), ==, 0);
    g_assert_cmpstr (err, ==,
                     "recompute: using the config run ingested printed\n"
                     "recompute: generation verl-0.9.0 (from the run's log)\n");
    g_autoptr (JsonParser) p = json_parser_new ();
    g_assert_true (json_parser_load_from_data (p, out, -1, NULL));
    JsonObject *root = json_node_get_object (json_parser_get_root (p));
    g_assert_cmpstr (json_object_get_string_member (root, "generation"), ==, "verl-0.9.0");
    g_assert_cmpstr (json_object_get_string_member (root, "generation_source"), ==, "log");
    g_assert_cmpint (json_object_get_int_member (root, "n_steps"), ==, 30);
    g_assert_cmpint (json_object_get_int_member (root, "n_flagged"), ==, 0);
    JsonObject *cfg = json_object_get_object_member (root, "config");
    g_assert_cmpstr (json_object_get_string_member (cfg, "rollout_rs"), ==, "seq_mean_k3");
    g_assert_cmpfloat (json_object_get_double_member (cfg, "rollout_rs_threshold"), ==, 0.05);
    JsonArray *steps = json_object_get_array_member (root, "steps");
    for (guint i = 0; i < json_array_get_length (steps); i++)
      {
        JsonObject *logged
          = json_object_get_object_member (json_array_get_object_element (steps, i), "logged");
        g_assert_cmpint (json_object_get_int_member (logged, "compared"), >=, 40);
      }
  }
  {
    /* check names where the generation came from (it printed "(null) (given; …)" for a run
     * whose log printed it and no --generation) */
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "check", "--db", db, "--run", "ingested", NULL };
    dw_test_run_cli (args, NULL, &out, &err);
    g_assert_nonnull (strstr (out, "  generation: verl-0.9.0 (printed by the run)\n"));
    g_assert_null (strstr (out, "(null)"));
  }
  {
    /* a run holding a batch and nothing else */
    g_autoptr (DwStore) store = dw_store_open (db, &error);
    g_autofree char *path = batch_path (1);
    g_autoptr (DwBatch) b = dw_batch_read_file (path, &error);
    g_assert_no_error (error);
    gint64 id = dw_store_ensure_run (store, "bare", "verl", "/nowhere/bare", &error);
    g_assert_no_error (error);
    g_assert_true (dw_store_put_batch (store, id, 1, b, path, &error));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[]
      = { "recompute", "--db", db, "--run", "bare", "--preset", "decoupled_k3_rs_token_tis", NULL };
    g_assert_cmpint (dw_test_run_cli (args, NULL, &out, &err), ==, 0);
    g_assert_cmpstr (err, ==, "recompute: generation verl-0.9.0 (default: newest verl)\n");
    g_assert_nonnull (strstr (out, "\"generation\": \"verl-0.9.0\", \"generation_source\": "
                                   "\"default\""));
  }
  {
    /* a given generation wins, and is said to be given */
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = {
      "recompute",    "--db",       db,  "--run", "bare", "--preset", "decoupled_k3_rs_token_tis",
      "--generation", "verl-0.7.1", NULL
    };
    g_assert_cmpint (dw_test_run_cli (args, NULL, &out, &err), ==, 0);
    g_assert_cmpstr (err, ==, "");
    g_assert_nonnull (strstr (out, "\"generation\": \"verl-0.7.1\", \"generation_source\": "
                                   "\"given\""));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  fixture_setup ();
  g_test_add_func ("/recompute/all-presets", test_all_presets);
  g_test_add_func ("/recompute/logged", test_logged);
  g_test_add_func ("/recompute/agree-rule", test_agree_rule);
  g_test_add_func ("/recompute/cli-json", test_cli_json);
  g_test_add_func ("/recompute/cli-csv-errors", test_cli_csv_and_errors);
  g_test_add_func ("/recompute/cli-generation-sources", test_cli_generation_sources);
  int r = g_test_run ();
  fixture_teardown ();
  return r;
}
