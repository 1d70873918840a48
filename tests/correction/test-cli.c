/* test-cli.c — `driftwatch-cli metrics` and `presets` end to end (exit codes, JSON, errors)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "dw-test-cli.h"

static void
test_presets_json (void)
{
  g_autofree char *out = NULL, *err = NULL;
  const char *args[] = { "presets", "--generation", "verl", NULL };
  g_assert_cmpint (dw_test_run_cli (args, NULL, &out, &err), ==, 0);
  g_autoptr (JsonParser) p = json_parser_new ();
  g_assert_true (json_parser_load_from_data (p, out, -1, NULL));
  JsonObject *o = json_node_get_object (json_parser_get_root (p));
  g_assert_cmpstr (json_object_get_string_member (o, "generation"), ==, "verl-0.9.0");
  g_assert_nonnull (strstr (err, "'verl' resolves to verl-0.9.0"));
  JsonArray *a = json_object_get_array_member (o, "presets");
  g_assert_cmpuint (json_array_get_length (a), ==, 19);
  gboolean seen = FALSE;
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonObject *e = json_array_get_object_element (a, i);
      if (!g_str_equal (json_object_get_string_member (e, "name"), "decoupled_k3_rs"))
        continue;
      JsonObject *f = json_object_get_object_member (e, "fields");
      g_assert_cmpstr (json_object_get_string_member (f, "rollout_rs"), ==, "seq_mean_k3");
      /* 0.01 stays a float, 2.0 stays a float (Python repr) */
      g_assert_cmpfloat (json_object_get_double_member (f, "rollout_rs_threshold"), ==, 0.01);
      g_assert_true (strstr (out, "\"rollout_is_threshold\": 2.0") != NULL);
      seen = TRUE;
    }
  g_assert_true (seen);
}

static void
test_usage_errors (void)
{
  g_autofree char *out = NULL, *err = NULL;
  const char *a1[] = { "metrics", "x.npz", "--generation", "verl-9", "--preset", "disabled", NULL };
  g_assert_cmpint (dw_test_run_cli (a1, NULL, &out, &err), ==, 2);
  g_assert_nonnull (strstr (err, "verl-9"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  const char *a2[] = { "metrics", "x.npz", "--preset", "no_such_preset", NULL };
  g_assert_cmpint (dw_test_run_cli (a2, NULL, &out, &err), ==, 2);
  g_assert_nonnull (strstr (err, "no_such_preset"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  const char *a3[] = { "metrics", "x.npz", "--config", "{\"rollout_is\": ", NULL };
  g_assert_cmpint (dw_test_run_cli (a3, NULL, &out, &err), ==, 2);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  const char *a4[] = { "metrics", "x.npz", "--preset", "disabled", "--set", "novalue", NULL };
  g_assert_cmpint (dw_test_run_cli (a4, NULL, &out, &err), ==, 2);
  g_assert_nonnull (strstr (err, "KEY=VALUE"));
}

static void
test_unreadable_input (void)
{
  g_autofree char *out = NULL, *err = NULL;
  const char *a[] = { "metrics", "/nonexistent/dir/step_1.npz", "--preset", "disabled", NULL };
  g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 1);
  g_assert_nonnull (strstr (err, "/nonexistent/dir/step_1.npz"));
}

static JsonNode *
parse_member (JsonParser *p, const char *text, const char *member)
{
  g_assert_true (json_parser_load_from_data (p, text, -1, NULL));
  return json_object_get_member (json_node_get_object (json_parser_get_root (p)), member);
}

/* The sample batches of ../shared/samples/batch in every format: metrics equal the numpy oracle
 * (shared/reference/spec_ref.py) on the npz; BF16 log-probs are flagged as lossy; a lone .npy
 * whose sibling tensors are missing is an input error naming the file. */
static void
test_metrics_samples (void)
{
  const char *cfg = "{\"rollout_is\": \"token\", \"rollout_is_threshold\": 2.0, "
                    "\"rollout_rs\": \"seq_mean_k3\", \"rollout_rs_threshold\": 0.01}";
  g_autofree char *dir = g_build_filename (g_getenv ("DW_SHARED_DIR"), "samples", "batch", NULL);
  g_autofree char *npz = g_build_filename (dir, "step_000001.npz", NULL);
  g_autofree char *oracle = g_test_build_filename (G_TEST_DIST, "correction", "oracle.py", NULL);
  const char *py
    = g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE) ? "/usr/bin/python3" : "python3";
  char *oargv[] = { (char *)py, oracle, npz, (char *)"verl", (char *)cfg, NULL };
  g_autofree char *oout = NULL;
  int status = 0;
  g_assert_true (
    g_spawn_sync (NULL, oargv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &oout, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_autoptr (JsonParser) op = json_parser_new ();
  JsonObject *expected = json_node_get_object (parse_member (op, oout, "metrics"));
  g_assert_cmpuint (json_object_get_size (expected), >, 20);

  const char *exact[] = { "step_000001.npz", "step_000001.safetensors", "step_000001.jsonl" };
  for (gsize f = 0; f < G_N_ELEMENTS (exact); f++)
    {
      g_autofree char *path = g_build_filename (dir, exact[f], NULL);
      g_autofree char *out = NULL, *err = NULL;
      const char *a[] = { "metrics", path, "--generation", "verl-0.7.1", "--config", cfg, NULL };
      g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 0);
      g_autoptr (JsonParser) p = json_parser_new ();
      JsonObject *got = json_node_get_object (parse_member (p, out, "metrics"));
      g_assert_cmpuint (json_object_get_size (got), ==, json_object_get_size (expected));
      g_autoptr (GList) keys = json_object_get_members (expected);
      for (GList *k = keys; k; k = k->next)
        {
          JsonNode *e = json_object_get_member (expected, k->data);
          JsonNode *g = json_object_get_member (got, k->data);
          g_assert_nonnull (g);
          if (json_node_get_value_type (e) == G_TYPE_STRING)
            {
              g_assert_cmpstr (json_node_get_string (g), ==, json_node_get_string (e));
              continue;
            }
          double ev = json_node_get_double (e), gv = json_node_get_double (g);
          if (g_str_has_suffix (k->data, "_std")) /* compared as variances (§9.1) */
            g_assert_cmpfloat (fabs (ev * ev - gv * gv), <=, 1.6e-5 + 2e-5 * ev * ev);
          else
            g_assert_cmpfloat (fabs (ev - gv), <=, 2e-6 + 2e-5 * fabs (ev));
        }
      g_assert_cmpstr (err, ==, "");
    }

  g_autofree char *bf16 = g_build_filename (dir, "step_000001_bf16.safetensors", NULL);
  g_autofree char *out = NULL, *err = NULL;
  const char *a[] = { "metrics", bf16, "--generation", "verl-0.7.1", "--config", cfg, NULL };
  g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 0);
  g_assert_nonnull (strstr (err, bf16));
  g_assert_nonnull (strstr (err, "bfloat16"));
  g_autoptr (JsonParser) p = json_parser_new ();
  JsonObject *got = json_node_get_object (parse_member (p, out, "metrics"));
  g_assert_cmpuint (json_object_get_size (got), ==, json_object_get_size (expected));

  g_autofree char *npy = g_build_filename (dir, "step_000001.old_log_prob.npy", NULL);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  const char *b[] = { "metrics", npy, "--config", cfg, NULL };
  g_assert_cmpint (dw_test_run_cli (b, NULL, &out, &err), ==, 1);
  g_assert_nonnull (strstr (err, npy));
  g_assert_nonnull (strstr (err, "rollout_log_prob"));
}

/* a truncated batch file: exit 1 and an error naming the file */
static void
test_truncated_input (void)
{
  g_autofree char *src
    = g_build_filename (g_getenv ("DW_SHARED_DIR"), "golden", "batches", "tiny.npz", NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (src, &data, &len, NULL));
  g_autofree char *dir = g_dir_make_tmp ("dw-cli-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "step_7.npz", NULL);
  g_assert_true (g_file_set_contents (path, data, (gssize)(len / 2), NULL));
  g_autofree char *out = NULL, *err = NULL;
  const char *a[] = { "metrics", path, "--preset", "disabled", NULL };
  g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 1);
  g_assert_nonnull (strstr (err, path));
  g_assert_cmpstr (out, ==, "");
  g_unlink (path);
  g_rmdir (dir);
}

/* metrics on a golden batch equals the golden case */
static void
test_metrics_golden (void)
{
  g_autofree char *batch
    = g_build_filename (g_getenv ("DW_SHARED_DIR"), "golden", "batches", "tiny.npz", NULL);
  g_autofree char *out = NULL, *err = NULL;
  const char *a[] = { "metrics",      batch,
                      "--generation", "verl-0.7.1",
                      "--config",     "{\"rollout_is\": \"token\"}",
                      "--set",        "rollout_is_threshold=2.0",
                      "--set",        "rollout_rs=token_k1",
                      "--set",        "rollout_rs_threshold=0.6_1.4",
                      "--arrays",     NULL };
  int rc = dw_test_run_cli (a, NULL, &out, &err);
  g_assert_cmpint (rc, ==, 0);
  g_autoptr (JsonParser) p = json_parser_new ();
  g_assert_true (json_parser_load_from_data (p, out, -1, NULL));
  JsonObject *o = json_node_get_object (json_parser_get_root (p));
  JsonObject *m = json_object_get_object_member (o, "metrics");
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (m, "rollout_corr/rollout_is_mean"),
                                  0.8393239, 1e-6);
  g_assert_cmpfloat_with_epsilon (
    json_object_get_double_member (m, "rollout_corr/rollout_rs_token_k1_masked_fraction"), 2.0 / 9,
    1e-7);
  g_assert_true (json_node_is_null (json_object_get_member (o, "error")));
}

/* a config error still prints the JSON, with verl's error, and exits 2 */
static void
test_config_error_json (void)
{
  g_autofree char *batch
    = g_build_filename (g_getenv ("DW_SHARED_DIR"), "golden", "batches", "tiny.npz", NULL);
  g_autofree char *out = NULL, *err = NULL;
  const char *a[] = { "metrics",  batch,
                      "--preset", "disabled",
                      "--set",    "rollout_rs=seq_sum_k1",
                      "--set",    "rollout_rs_threshold=0",
                      NULL };
  int rc = dw_test_run_cli (a, NULL, &out, &err);
  g_assert_cmpint (rc, ==, 2);
  g_autoptr (JsonParser) p = json_parser_new ();
  g_assert_true (json_parser_load_from_data (p, out, -1, NULL));
  JsonObject *e
    = json_object_get_object_member (json_node_get_object (json_parser_get_root (p)), "error");
  g_assert_cmpstr (json_object_get_string_member (e, "type"), ==, "ZeroDivisionError");
  g_assert_cmpstr (json_object_get_string_member (e, "message"), ==, "float division by zero");
}

/* `--config FILE.json` with a misspelt key (rollout_is_treshold: the typo the issue saw exit 0)
 * or a key given twice is refused with exit 2, naming the file and the key, as verl's Hydra
 * refuses a key its struct lacks; the same file without the problem is accepted */
static void
test_config_file_keys (void)
{
  g_autofree char *batch
    = g_build_filename (g_getenv ("DW_SHARED_DIR"), "golden", "batches", "tiny.npz", NULL);
  g_autofree char *dir = g_dir_make_tmp ("dw-config-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "config.json", NULL);
  static const struct
  {
    const char *text, *message;
    int code;
  } cases[] = {
    { "{\"rollout_is\": \"token\", \"rollout_is_treshold\": 2.0}",
      "has no config key 'rollout_is_treshold' (Key 'rollout_is_treshold' is not in struct); "
      "accepted: rollout_is, rollout_is_threshold",
      2 },
    { "{\"rollout_is\": \"token\",\n \"rollout_is\": \"sequence\"}",
      "offset 25: key “rollout_is” appears twice in one object", 2 },
    { "{\"rollout_is\": \"token\", \"rollout_is_threshold\": 2.0}", NULL, 0 },
  };
  for (guint index = 0; index < G_N_ELEMENTS (cases); index++)
    {
      g_autofree char *out = NULL, *err = NULL;
      g_assert_true (g_file_set_contents (path, cases[index].text, -1, NULL));
      const char *arguments[] = { "metrics", batch, "--config", path, NULL };
      g_assert_cmpint (dw_test_run_cli (arguments, NULL, &out, &err), ==, cases[index].code);
      if (cases[index].message == NULL)
        continue;
      g_autofree char *expected = g_strdup_printf ("metrics: %s: config JSON: ", path);
      g_assert_nonnull (strstr (err, expected));
      g_assert_nonnull (strstr (err, cases[index].message));
    }
  /* the same refusal for the JSON given inline, and for export-config */
  g_autofree char *out = NULL, *err = NULL;
  const char *inline_arguments[]
    = { "export-config", "--config", cases[0].text, "--to", "verl-0.9.0", NULL };
  g_assert_cmpint (dw_test_run_cli (inline_arguments, NULL, &out, &err), ==, 2);
  g_assert_nonnull (strstr (err, cases[0].message));
  g_unlink (path);
  g_rmdir (dir);
}

/* verl v0.9.0's 19 presets with the field values of verl's classmethods, IcePop ones included */
static void
test_presets_icepop (void)
{
  g_autofree char *out = NULL, *err = NULL;
  const char *args[] = { "presets", "--generation", "verl-0.9.0", NULL };
  g_assert_cmpint (dw_test_run_cli (args, NULL, &out, &err), ==, 0);
  g_assert_cmpstr (err, ==, "");
  g_autoptr (JsonParser) p = json_parser_new ();
  g_assert_true (json_parser_load_from_data (p, out, -1, NULL));
  JsonArray *a
    = json_object_get_array_member (json_node_get_object (json_parser_get_root (p)), "presets");
  g_assert_cmpuint (json_array_get_length (a), ==, 19);
  guint seen = 0;
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonObject *e = json_array_get_object_element (a, i);
      const char *name = json_object_get_string_member (e, "name");
      JsonObject *f = json_object_get_object_member (e, "fields");
      if (!g_str_has_suffix (name, "_token_icepop"))
        continue;
      /* decoupled_token_icepop() and bypass_pg_token_icepop() of verl v0.8.0 / v0.9.0 */
      g_assert_cmpstr (json_object_get_string_member (f, "rollout_is"), ==, "token");
      g_assert_cmpstr (json_object_get_string_member (f, "rollout_is_threshold"), ==, "0.5_5.0");
      g_assert_true (json_node_is_null (json_object_get_member (f, "rollout_rs")));
      const gboolean bypass = g_str_equal (name, "bypass_pg_token_icepop");
      g_assert_cmpint (json_object_get_boolean_member (f, "bypass_mode"), ==, bypass);
      g_assert_cmpstr (json_object_get_string_member (f, "loss_type"), ==,
                       bypass ? "reinforce" : "ppo_clip");
      seen++;
    }
  g_assert_cmpuint (seen, ==, 2);
}

/* an IcePop threshold on the tiny golden batch: the metrics of verl v0.9.0's own code
 * (golden verl_v0.9.0/tiny__icepop_token_0.5_5), and v0.7.1 refusing it as v0.7.1 does */
static void
test_metrics_icepop (void)
{
  const char *shared = g_getenv ("DW_SHARED_DIR");
  g_autofree char *batch = g_build_filename (shared, "golden", "batches", "tiny.npz", NULL);
  g_autofree char *golden
    = g_build_filename (shared, "golden", "verl_v0.9.0", "tiny__icepop_token_0.5_5.json", NULL);
  g_autoptr (JsonParser) gp = json_parser_new ();
  g_assert_true (json_parser_load_from_file (gp, golden, NULL));
  JsonObject *expected
    = json_object_get_object_member (json_node_get_object (json_parser_get_root (gp)), "metrics");
  g_autofree char *out = NULL, *err = NULL;
  const char *a[] = { "metrics",  batch,
                      "--config", "{\"rollout_is\": \"token\"}",
                      "--set",    "rollout_is_threshold=0.5_5.0",
                      NULL };
  g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 0);
  g_autoptr (JsonParser) p = json_parser_new ();
  JsonObject *got = json_node_get_object (parse_member (p, out, "metrics"));
  g_assert_cmpuint (json_object_get_size (got), ==, json_object_get_size (expected));
  g_assert_true (json_object_has_member (got, "rollout_corr/rollout_is_oob_ratio"));
  g_autoptr (GList) keys = json_object_get_members (expected);
  for (GList *k = keys; k; k = k->next)
    {
      const double e = json_object_get_double_member (expected, k->data);
      const double g = json_object_get_double_member (got, k->data);
      if (g_str_has_suffix (k->data, "_std"))
        g_assert_cmpfloat (fabs (e * e - g * g), <=, 1.6e-5 + 2e-5 * e * e);
      else
        g_assert_cmpfloat (fabs (e - g), <=, 2e-6 + 2e-5 * fabs (e));
    }

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  const char *b[] = {
    "metrics",    batch,      "--generation",
    "verl-0.7.1", "--config", "{\"rollout_is\": \"token\", \"rollout_is_threshold\": \"0.5_5.0\"}",
    NULL
  };
  g_assert_cmpint (dw_test_run_cli (b, NULL, &out, &err), ==, 2);
  g_autoptr (JsonParser) ep = json_parser_new ();
  JsonObject *e = json_node_get_object (parse_member (ep, out, "error"));
  g_assert_cmpstr (json_object_get_string_member (e, "type"), ==, "TypeError");
  g_assert_cmpstr (json_object_get_string_member (e, "message"), ==,
                   "'<=' not supported between instances of 'str' and 'int'");
}

/* every generation name, old name and a commit prefix: accepted, and an alias says what it is */
static void
test_generation_names (void)
{
  g_autofree char *batch
    = g_build_filename (g_getenv ("DW_SHARED_DIR"), "golden", "batches", "tiny.npz", NULL);
  static const struct
  {
    const char *name, *canonical;
  } names[] = {
    { "verl-0.6.0", "verl-0.6.0" },
    { "verl-0.6.1", "verl-0.6.1" },
    { "verl-0.7.0", "verl-0.7.0" },
    { "verl-0.7.1", "verl-0.7.1" },
    { "verl-0.8.0", "verl-0.8.0" },
    { "verl-0.9.0", "verl-0.9.0" },
    { "slime", "slime" },
    { "verl", "verl-0.9.0" },
    { "verl-0.7", "verl-2f2996b7d" },
    { "verl-0.6", "verl-4424616d7" },
    { "b178a3cd5", "verl-0.7.1" },
    { "2c6c65cb0", "verl-0.6.1" },
    { "verl-2f2996b7d", "verl-2f2996b7d" },
    { "verl-4424616d7", "verl-4424616d7" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *out = NULL, *err = NULL;
      const char *a[] = { "metrics", batch, "--generation", names[i].name, "--config", "{}", NULL };
      g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 0);
      g_autoptr (JsonParser) p = json_parser_new ();
      g_assert_cmpstr (json_node_get_string (parse_member (p, out, "generation")), ==,
                       names[i].canonical);
      if (g_str_equal (names[i].name, names[i].canonical))
        g_assert_cmpstr (err, ==, "");
      else
        g_assert_nonnull (strstr (err, "resolves to"));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/presets-json", test_presets_json);
  g_test_add_func ("/cli/usage-errors", test_usage_errors);
  g_test_add_func ("/cli/unreadable-input", test_unreadable_input);
  g_test_add_func ("/cli/truncated-input", test_truncated_input);
  g_test_add_func ("/cli/metrics-samples", test_metrics_samples);
  g_test_add_func ("/cli/metrics-golden", test_metrics_golden);
  g_test_add_func ("/cli/config-error-json", test_config_error_json);
  g_test_add_func ("/cli/config-file-keys", test_config_file_keys);
  g_test_add_func ("/cli/presets-icepop", test_presets_icepop);
  g_test_add_func ("/cli/metrics-icepop", test_metrics_icepop);
  g_test_add_func ("/cli/generation-names", test_generation_names);
  return g_test_run ();
}
