/* test-demo.c — the demo run folder: the logged rollout_corr values are what the core computes
 * from the written batches, tfevents agree with the JSONL, the collapse happens where it says,
 * and the output is deterministic
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "dw-batch-reader.h"
#include "dw-correction.h"
#include "dw-demo.h"
#include "dw-log-reader.h"
#include "dw-run-meta.h"

static char *
make_tmp (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("dw-demo-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

static void
rm_rf (const char *dir)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (cmd), ==, 0);
}

/* step → JsonObject of its data */
static GPtrArray *
read_jsonl (const char *path)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)json_object_unref);

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      g_autoptr (JsonParser) parser = json_parser_new ();
      JsonObject *o;

      g_assert_true (json_parser_load_from_data (parser, lines[i], -1, NULL));
      o = json_node_get_object (json_parser_get_root (parser));
      g_assert_cmpint (json_object_get_int_member (o, "step"), ==, i + 1);
      g_ptr_array_add (out, json_object_ref (json_object_get_object_member (o, "data")));
    }
  return out;
}

static double
get (JsonObject *data, const char *key)
{
  JsonNode *n = json_object_get_member (data, key);

  g_assert_nonnull (n);
  return JSON_NODE_HOLDS_NULL (n) ? NAN : json_node_get_double (n);
}

typedef struct
{
  GHashTable *values; /* "tag@step" → double* */
} TbSink;

static void
on_point (const DwScalarPoint *p, gpointer user_data)
{
  TbSink *s = user_data;
  g_hash_table_insert (s->values, g_strdup_printf ("%s@%" G_GINT64_FORMAT, p->tag, p->step),
                       g_memdup2 (&p->value, sizeof p->value));
}

static void
on_diag (goffset offset, const char *message, gpointer user_data)
{
  g_error ("unexpected diagnostic at %" G_GINT64_FORMAT ": %s", (gint64)offset, message);
}

/* The console log (train.log: the driver's stdout, as `… | tee train.log` keeps it) starts as a
 * verl v0.9.0 run's does: the version, the pprint-ed config with the rollout_correction the demo
 * trains with (Ray's lines in between), engine start-up; then one `step:` line a step whose
 * values are the JSONL's, bit for bit. */
static void
check_console (const char *dir, GPtrArray *steps)
{
  g_autofree char *path = g_build_filename (dir, "train.log", NULL);
  g_autofree char *text = NULL, *meta = NULL;
  g_autoptr (DwLogReader) reader = dw_log_reader_new (DW_FORMAT_VERL_CONSOLE, path);
  g_autoptr (JsonParser) parser = json_parser_new ();
  TbSink sink = { g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free) };
  JsonObject *o, *cfg;
  gsize len;
  int fd;
  guint n_points = 0;

  g_assert_true (g_file_get_contents (path, &text, &len, NULL));
  /* the preamble comes before the first metric line, and holds the Ray worker line */
  g_assert_true (g_str_has_prefix (text, "verl==0.9.0\n"));
  g_assert_nonnull (strstr (text, "(raylet) WARNING"));
  g_assert_cmpint (strstr (text, "'rollout_correction'") - text, <,
                   strstr (text, "step:1 - ") - text);

  fd = open (path, O_RDONLY);
  g_assert_cmpint (fd, >=, 0);
  meta = dw_run_meta_scan (fd, path, DW_FORMAT_VERL_CONSOLE, -1);
  close (fd);
  g_assert_nonnull (meta);
  g_assert_true (json_parser_load_from_data (parser, meta, -1, NULL));
  o = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (o, "generation"), ==, "verl-0.9.0");
  g_assert_cmpstr (json_object_get_string_member (o, "generation_source"), ==, "log");
  g_assert_cmpstr (json_object_get_string_member (o, "framework_version"), ==, "0.9.0");
  cfg = json_object_get_object_member (o, "config");
  g_assert_cmpuint (json_object_get_size (cfg), ==, 7);
  g_assert_cmpstr (json_object_get_string_member (cfg, "rollout_is"), ==, "token");
  g_assert_cmpfloat (json_object_get_double_member (cfg, "rollout_is_threshold"), ==, 2.0);
  g_assert_cmpstr (json_object_get_string_member (cfg, "rollout_rs"), ==, "seq_mean_k3");
  g_assert_cmpfloat (json_object_get_double_member (cfg, "rollout_rs_threshold"), ==, 0.05);
  g_assert_false (json_object_get_boolean_member (cfg, "bypass_mode"));
  g_assert_false (json_object_get_boolean_member (cfg, "rollout_is_batch_normalize"));
  g_assert_cmpstr (json_object_get_string_member (cfg, "loss_type"), ==, "ppo_clip");

  g_assert_cmpuint (
    dw_log_reader_feed (reader, 0, (const guint8 *)text, len, TRUE, on_point, on_diag, &sink), ==,
    len);
  for (guint s = 1; s <= steps->len; s++)
    {
      JsonObject *data = steps->pdata[s - 1];
      g_autoptr (GList) keys = json_object_get_members (data);

      for (GList *k = keys; k != NULL; k = k->next)
        {
          g_autofree char *key = g_strdup_printf ("%s@%u", (const char *)k->data, s);
          double *v = g_hash_table_lookup (sink.values, key), want = get (data, k->data);

          g_assert_nonnull (v);
          if (isnan (want))
            g_assert_true (isnan (*v));
          else
            g_assert_cmpfloat (*v, ==, want);
          n_points++;
        }
    }
  g_assert_cmpuint (g_hash_table_size (sink.values), ==, n_points);
  g_hash_table_unref (sink.values);
}

static void
test_collapse (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *jsonl = g_build_filename (dir, "metrics.jsonl", NULL);
  g_autofree char *events = g_build_filename (
    dir, "tensorboard", "events.out.tfevents.1795353214.driftwatch-demo.0", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) steps = NULL;
  g_autoptr (DwLogReader) reader = NULL;
  g_autofree char *tb = NULL;
  gsize tb_len;
  const guint n_steps = 40;
  gint64 collapse = dw_demo_collapse_step (n_steps);
  TbSink sink = { g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free) };
  DwConfig config;
  DwCorrectionError cerr;
  DwValue threshold = dw_value_float (0.05);

  g_assert_cmpint (collapse, ==, 28);
  g_assert_true (dw_demo_write (dir, DW_DEMO_COLLAPSE, n_steps, 7, &error));
  g_assert_no_error (error);
  steps = read_jsonl (jsonl);
  g_assert_cmpuint (steps->len, ==, n_steps);

  g_assert_true (g_file_get_contents (events, &tb, &tb_len, NULL));
  reader = dw_log_reader_new (DW_FORMAT_TFEVENTS, events);
  g_assert_cmpuint (
    dw_log_reader_feed (reader, 0, (const guint8 *)tb, tb_len, TRUE, on_point, on_diag, &sink), ==,
    tb_len);

  dw_config_init (&config, DW_GEN_VERL_LATEST); /* the demo trains as verl 0.9.0 */
  g_assert_true (dw_preset_apply (&config, "decoupled_k3_rs_token_tis", &cerr));
  g_assert_true (dw_config_set (&config, "rollout_rs_threshold", &threshold));

  for (guint s = 1; s <= n_steps; s++)
    {
      g_autofree char *name = g_strdup_printf ("step_%06u.safetensors", s);
      g_autofree char *path = g_build_filename (dir, "batches", name, NULL);
      g_autoptr (DwBatch) batch = dw_batch_read_file (path, &error);
      JsonObject *data = steps->pdata[s - 1];
      DwCorrectionResult res;
      double len_sum = 0;
      guint n_clipped = 0;

      g_assert_no_error (error);
      g_assert_cmpuint (batch->rows, ==, DW_DEMO_ROWS);
      g_assert_cmpuint (batch->cols, ==, DW_DEMO_COLS);
      g_assert_cmpint (batch->step, ==, s);
      dw_correction_result_init (&res);
      g_assert_true (dw_correction_run (batch, &config, &res, &cerr));
      g_assert_cmpuint (res.n_metrics, >, 40);
      for (size_t i = 0; i < res.n_metrics; i++)
        {
          double logged = get (data, res.metrics[i].key), v = res.metrics[i].value;
          g_autofree char *key = g_strdup_printf ("%s@%u", res.metrics[i].key, s);
          double *tb_value = g_hash_table_lookup (sink.values, key);

          if (isfinite (v))
            g_assert_cmpfloat (logged, ==, v);
          else
            g_assert_true (isnan (logged)); /* JSONL null, as orjson writes NaN/inf */
          g_assert_nonnull (tb_value);
          if (isnan (v))
            g_assert_true (isnan (*tb_value));
          else
            g_assert_cmpfloat (*tb_value, ==, (double)(float)v);
        }
      dw_correction_result_clear (&res);

      for (gsize r = 0; r < batch->rows; r++)
        {
          gsize len = 0;
          for (gsize t = 0; t < batch->cols; t++)
            len += ((guint8 *)batch->response_mask)[r * batch->cols + t] != 0;
          len_sum += (double)len;
          n_clipped += len == batch->cols;
        }
      g_assert_cmpfloat_with_epsilon (get (data, "response_length/mean"), len_sum / batch->rows,
                                      1e-9);
      g_assert_cmpfloat_with_epsilon (get (data, "response_length/clip_ratio"),
                                      (double)n_clipped / batch->rows, 1e-12);
      g_assert_cmpfloat (get (data, "training/global_step"), ==, s);
    }

  /* The story: quiet start, drift before the collapse, collapse at the announced step. */
  g_assert_cmpfloat (get (steps->pdata[0], "rollout_corr/k3_kl"), <, 1e-3);
  g_assert_cmpfloat (get (steps->pdata[collapse - 3], "rollout_corr/k3_kl"), >,
                     10 * get (steps->pdata[0], "rollout_corr/k3_kl"));
  g_assert_cmpfloat (get (steps->pdata[collapse - 2], "rollout_corr/kl"), <, 0.2);
  g_assert_cmpfloat (get (steps->pdata[collapse - 1], "rollout_corr/kl"), >, 0.2);
  g_assert_cmpfloat (get (steps->pdata[collapse - 1], "rollout_corr/rollout_is_eff_sample_size"), <,
                     0.8);
  g_assert_cmpfloat (get (steps->pdata[n_steps - 1], "critic/score/mean"), <, 0.3);
  g_assert_cmpfloat (get (steps->pdata[n_steps - 1], "response_length/clip_ratio"), >, 0.3);

  check_console (dir, steps);
  g_hash_table_unref (sink.values);
  rm_rf (dir);
}

static char *
tree_digest (const char *dir)
{
  g_autofree char *cmd
    = g_strdup_printf ("cd '%s' && find . -type f | sort | xargs sha256sum | sha256sum", dir);
  char *argv[] = { "sh", "-c", cmd, NULL };
  char *out = NULL;

  g_assert_true (
    g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, NULL, NULL, NULL));
  g_assert_cmpuint (strlen (out), >, 64);
  return out;
}

static void
test_healthy_deterministic (void)
{
  g_autofree char *tmp_a = make_tmp (), *tmp_b = make_tmp ();
  /* same folder name in both: the experiment name the console log prints is the folder's */
  g_autofree char *a = g_build_filename (tmp_a, "run", NULL);
  g_autofree char *b = g_build_filename (tmp_b, "run", NULL);
  g_autofree char *da = NULL, *db = NULL, *jsonl = g_build_filename (a, "metrics.jsonl", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) steps = NULL;

  g_assert_true (dw_demo_write (a, DW_DEMO_HEALTHY, 30, 3, &error));
  g_assert_true (dw_demo_write (b, DW_DEMO_HEALTHY, 60, 3, &error));
  /* Writing again into the same folder replaces the earlier demo (fewer steps: extra batches go).
   */
  g_assert_true (dw_demo_write (b, DW_DEMO_HEALTHY, 30, 3, &error));
  g_assert_no_error (error);
  da = tree_digest (a);
  db = tree_digest (b);
  g_assert_cmpstr (da, ==, db);

  steps = read_jsonl (jsonl);
  for (guint i = 0; i < steps->len; i++)
    {
      g_assert_cmpfloat (fabs (get (steps->pdata[i], "rollout_corr/kl")), <, 0.01);
      g_assert_cmpfloat (get (steps->pdata[i], "rollout_corr/rollout_is_eff_sample_size"), >, 0.9);
      g_assert_cmpfloat (get (steps->pdata[i], "training/rollout_probs_diff_mean"), <, 0.01);
    }
  rm_rf (tmp_a);
  rm_rf (tmp_b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/demo/collapse", test_collapse);
  g_test_add_func ("/demo/healthy-deterministic", test_healthy_deterministic);
  return g_test_run ();
}
