/* test-export.c — config export/import: round trips, accepted keys, exact errors, the CLI
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "dw-config-export.h"
#include "dw-config-json.h"
#include "dw-correction.h"
#include "dw-test-cli.h"

static void
assert_config_equal (const DwConfig *a, const DwConfig *b)
{
  g_assert_cmpint (a->generation, ==, b->generation);
  g_assert_cmpuint (a->n_keys, ==, b->n_keys);
  for (size_t i = 0; i < a->n_keys; i++)
    {
      const DwValue *x = &a->values[i], *y = dw_config_get (b, a->keys[i]);
      if (y == NULL)
        g_error ("key %s lost", a->keys[i]);
      g_assert_cmpint (x->kind, ==, y->kind);
      switch (x->kind)
        {
        case DW_VALUE_BOOL:
          g_assert_cmpint (x->b, ==, y->b);
          break;
        case DW_VALUE_INT:
          g_assert_cmpint (x->i, ==, y->i);
          break;
        case DW_VALUE_FLOAT:
          if (isnan (x->f))
            g_assert_true (isnan (y->f));
          else
            g_assert_cmpfloat (x->f, ==, y->f);
          break;
        case DW_VALUE_STR:
          g_assert_cmpstr (x->s, ==, y->s);
          break;
        default:
          break;
        }
    }
}

static void
round_trip (const DwConfig *c, const char *what)
{
  for (int f = 0; f < DW_N_EXPORT_FORMATS; f++)
    {
      g_autoptr (GError) error = NULL;
      if (!dw_export_format_supported (c->generation, f))
        {
          g_autofree char *none = dw_config_export (c, f, &error);
          g_assert_null (none);
          g_assert_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT);
          continue;
        }
      g_autofree char *text = dw_config_export (c, f, &error);
      if (text == NULL)
        g_error ("%s %s: %s", what, dw_export_format_name (f), error->message);
      DwConfig back;
      if (!dw_config_import (text, -1, "exported", c->generation, f, &back, &error))
        g_error ("%s %s: %s\n%s", what, dw_export_format_name (f), error->message, text);
      assert_config_equal (c, &back);
      assert_config_equal (&back, c);

      /* detection finds the format, and a generation with the same keys */
      DwGeneration g;
      DwExportFormat df;
      if (c->n_keys == 0)
        continue; /* nothing to recognise an empty Hydra list by */
      dw_config_import_detect (text, -1, &g, &df);
      if ((int)df != f)
        g_error ("%s: %s detected as %s:\n%s", what, dw_export_format_name (f),
                 dw_export_format_name (df), text);
      /* the guessed generation accepts every key (0.6.1 and 0.7 share their keys, and a config
       * using only keys HEAD also has is read as HEAD) */
      for (size_t k = 0; k < c->n_keys; k++)
        g_assert_true (dw_export_key_accepted (g, c->keys[k]));
      if (c->generation == DW_GEN_SLIME || c->generation == DW_GEN_VERL_0_6)
        g_assert_cmpint (g, ==, c->generation);
      /* the k-option keys (v0.7.1 and later) are read as the newest release's */
      if (dw_generation_info (c->generation)->family == DW_FAMILY_VERL_K_OPTIONS)
        g_assert_cmpint (g, ==, DW_GEN_VERL_LATEST);
    }
}

static void
test_presets_round_trip (void)
{
  guint n_cases = 0;
  for (int g = 0; g < DW_N_GENERATIONS_PRE_RELEASE_NAMES; g++)
    {
      size_t n;
      const DwPresetInfo *l = dw_preset_list (g, &n);
      for (size_t i = 0; i < n; i++)
        {
          DwConfig c;
          g_assert_true (dw_preset_config (g, l[i].name, &c, NULL));
          g_autofree char *what = g_strdup_printf ("%s/%s", dw_generation_name (g), l[i].name);
          round_trip (&c, what);
          n_cases++;
        }
    }
  g_assert_cmpuint (n_cases, ==, 17 + 10 + 8 + 1);
}

/* configs that are not presets, with values whose type is easy to lose */
static void
test_tricky_round_trip (void)
{
  const struct
  {
    DwGeneration gen;
    const char *json;
  } cases[] = {
    { DW_GEN_VERL, "{\"rollout_rs\": \"token_k1\", \"rollout_rs_threshold\": \"2\"}" },
    { DW_GEN_VERL, "{\"rollout_rs\": \"token_k1\", \"rollout_rs_threshold\": 2}" },
    { DW_GEN_VERL, "{\"rollout_rs\": \"seq_sum_k1, token_k2\", \"rollout_rs_threshold\": "
                   "\"0.5_2.0,1e-05\"}" },
    { DW_GEN_VERL, "{\"rollout_rs\": \"token_k2\", \"rollout_rs_threshold\": \"inf\"}" },
    { DW_GEN_VERL, "{\"rollout_rs\": \"token_k3\", \"rollout_rs_threshold\": 1e-05, "
                   "\"rollout_is\": \"token\", \"rollout_is_threshold\": 1e+20}" },
    { DW_GEN_VERL, "{\"rollout_is\": \"sequence\", \"rollout_is_threshold\": 3, "
                   "\"loss_type\": \"it's \\\"odd\\\" \\\\ $x\", \"bypass_mode\": true}" },
    { DW_GEN_VERL, "{\"rollout_is\": \"token\", \"rollout_is_threshold\": null}" },
    { DW_GEN_VERL, "{\"loss_type\": \"null\", \"rollout_is\": null}" },
    { DW_GEN_VERL, "{\"loss_type\": \"true\"}" },
    { DW_GEN_VERL, "{\"loss_type\": \"1e-4\"}" },
    { DW_GEN_VERL, "{}" },
    { DW_GEN_VERL_0_7, "{\"rollout_rs\": \"geometric\", \"rollout_rs_threshold\": 1.001, "
                       "\"rollout_rs_threshold_lower\": 0.999, \"rollout_token_veto_threshold\": "
                       "1e-05, \"use_policy_gradient\": true}" },
    { DW_GEN_VERL_0_6_1, "{\"rollout_is\": \"token\", \"rollout_is_threshold\": 2.5}" },
    { DW_GEN_VERL_0_6, "{\"rollout_is_level\": \"geometric\", \"rollout_is_mode\": \"mask\", "
                       "\"rollout_is_threshold\": 1.001, \"rollout_is_threshold_lower\": 0.999, "
                       "\"rollout_is_veto_threshold\": 0.0001, \"rollout_is\": true}" },
    { DW_GEN_VERL_0_6, "{\"rollout_is_level\": \"sequence\", \"rollout_is_threshold\": 5.0, "
                       "\"rollout_is_veto_threshold\": null}" },
    { DW_GEN_SLIME, "{\"use_tis\": false, \"tis_upper_bound\": \"inf\", \"tis_mode\": \"nan\"}" },
    { DW_GEN_SLIME, "{\"use_tis\": true, \"use_rs\": false, \"tis_level\": \"geometric\", "
                    "\"tis_mode\": \"clip\", \"tis_upper_bound\": 1.5, \"rs_veto_threshold\": "
                    "1e-06, \"tis_batch_normalize\": false}" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      DwConfig c;
      g_autoptr (GError) error = NULL;
      dw_config_init (&c, cases[i].gen);
      g_assert_true (dw_config_merge_json (&c, cases[i].json, &error));
      round_trip (&c, cases[i].json);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* exported verl YAML keys ⊆ the keys the generation's config accepts (read independently from the
 * golden preset files: the dataclass defaults list every field) */

static GPtrArray *
golden_fields (const char *rev)
{
  const char *shared = g_getenv ("DW_SHARED_DIR");
  g_assert_nonnull (shared);
  g_autofree char *path = g_build_filename (shared, "golden", "presets", rev, NULL);
  g_autofree char *file = g_strconcat (path, ".json", NULL);
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_file (p, file, &error));
  JsonObject *o = json_node_get_object (json_parser_get_root (p));
  JsonObject *d
    = json_object_get_object_member (json_object_get_object_member (o, "presets"), "__defaults__");
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GList) m = json_object_get_members (d);
  for (GList *l = m; l; l = l->next)
    g_ptr_array_add (keys, g_strdup (l->data));
  return keys;
}

static gboolean
in_list (GPtrArray *keys, const char *k)
{
  for (guint i = 0; i < keys->len; i++)
    if (strcmp (keys->pdata[i], k) == 0)
      return TRUE;
  return FALSE;
}

/* Keys written at @indent under the section lines of the YAML (a plain line scan). */
static void
assert_yaml_keys_subset (const char *yaml, const char *indent, GPtrArray *accepted)
{
  g_auto (GStrv) lines = g_strsplit (yaml, "\n", -1);
  guint n = 0;
  for (gsize i = 0; lines[i]; i++)
    {
      if (!g_str_has_prefix (lines[i], indent) || lines[i][strlen (indent)] == ' '
          || lines[i][strlen (indent)] == '#' || lines[i][strlen (indent)] == '\0')
        continue;
      const char *k = lines[i] + strlen (indent);
      const char *colon = strchr (k, ':');
      g_assert_nonnull (colon);
      g_autofree char *key = g_strndup (k, colon - k);
      if (!in_list (accepted, key))
        g_error ("exported key %s not accepted:\n%s", key, yaml);
      n++;
    }
  g_assert_cmpuint (n, >, 0);
}

static void
test_accepted_keys (void)
{
  const struct
  {
    DwGeneration gen;
    const char *rev;
  } revs[] = { { DW_GEN_VERL, "b178a3cd5" },
               { DW_GEN_VERL_0_7, "2f2996b7d" },
               { DW_GEN_VERL_0_6_1, "2c6c65cb0" } };
  for (gsize r = 0; r < G_N_ELEMENTS (revs); r++)
    {
      g_autoptr (GPtrArray) accepted = golden_fields (revs[r].rev);
      size_t n;
      const DwPresetInfo *l = dw_preset_list (revs[r].gen, &n);
      for (size_t i = 0; i < n; i++)
        {
          DwConfig c;
          dw_preset_config (revs[r].gen, l[i].name, &c, NULL);
          g_autofree char *yaml = dw_config_export (&c, DW_EXPORT_FORMAT_YAML, NULL);
          g_assert_true (
            g_str_has_prefix (strchr (yaml, '\n') + 1, "algorithm:\n  rollout_correction:\n    "));
          assert_yaml_keys_subset (yaml, "    ", accepted);
        }
      /* and the table the importer uses is that list */
      const char *const *k = dw_export_accepted_keys (revs[r].gen);
      guint nk = 0;
      for (; k[nk]; nk++)
        g_assert_true (in_list (accepted, k[nk]));
      g_assert_cmpuint (nk, ==, accepted->len);
    }
  /* verl 0.6 (AlgoConfig fields of mismatch_helper) and slime (mis.yaml) */
  g_autoptr (GPtrArray) g1 = g_ptr_array_new ();
  const char *g1_keys[]
    = { "rollout_is",       "rollout_is_threshold", "rollout_is_threshold_lower",
        "rollout_is_level", "rollout_is_mode",      "rollout_is_veto_threshold" };
  for (gsize i = 0; i < G_N_ELEMENTS (g1_keys); i++)
    g_ptr_array_add (g1, (gpointer)g1_keys[i]);
  DwConfig c;
  dw_config_init (&c, DW_GEN_VERL_0_6);
  g_assert_true (
    dw_config_merge_json (&c,
                          "{\"rollout_is_level\": \"token\", \"rollout_is_threshold\": "
                          "2.0, \"rollout_is\": true}",
                          NULL));
  g_autofree char *yaml = dw_config_export (&c, DW_EXPORT_FORMAT_YAML, NULL);
  assert_yaml_keys_subset (yaml, "  ", g1);
  g_assert_cmpstr (dw_export_section (DW_GEN_VERL_0_6), ==, "algorithm");

  DwConfig s;
  dw_preset_config (DW_GEN_SLIME, "mis_yaml", &s, NULL);
  g_autofree char *sy = dw_config_export (&s, DW_EXPORT_FORMAT_YAML, NULL);
  g_autoptr (GPtrArray) mis = g_ptr_array_new ();
  for (size_t i = 0; i < s.n_keys; i++)
    g_ptr_array_add (mis, s.keys[i]);
  assert_yaml_keys_subset (sy, "", mis);
}

/* ------------------------------------------------------------------------------------------ */
/* exact errors */

static void
expect_import_error (const char *text, DwGeneration gen, DwExportFormat f, int code,
                     const char *message)
{
  DwConfig c;
  g_autoptr (GError) error = NULL;
  g_assert_false (dw_config_import (text, -1, "in.txt", gen, f, &c, &error));
  g_assert_error (error, DW_EXPORT_ERROR, code);
  g_assert_cmpstr (error->message, ==, message);
  g_assert_cmpuint (c.n_keys, ==, 0);
}

#define HEAD_KEYS                                                              \
  "rollout_is, rollout_is_threshold, rollout_is_batch_normalize, rollout_rs, " \
  "rollout_rs_threshold, bypass_mode, loss_type"

static void
test_import_errors (void)
{
  const DwExportFormat Y = DW_EXPORT_FORMAT_YAML, H = DW_EXPORT_FORMAT_HYDRA,
                       A = DW_EXPORT_FORMAT_ARGS;
  /* a G2 key in a HEAD config: Hydra's struct mode would refuse it */
  expect_import_error ("algorithm:\n  rollout_correction:\n    rollout_rs: token_k1\n"
                       "    rollout_token_veto_threshold: 0.0001\n",
                       DW_GEN_VERL, Y, DW_EXPORT_ERROR_KEY,
                       "in.txt:4: algorithm.rollout_correction.rollout_token_veto_threshold is not "
                       "a key verl-0.7.1 accepts (accepted: " HEAD_KEYS ")");
  expect_import_error (
    "algorithm.rollout_correction.rollout_is='token'\n"
    "algorithm.rollout_correction.rollout_is_level=token\n",
    DW_GEN_VERL, H, DW_EXPORT_ERROR_KEY,
    "in.txt:2: algorithm.rollout_correction.rollout_is_level is not a key verl-0.7.1 "
    "accepts (accepted: " HEAD_KEYS ")");
  expect_import_error ("rollout_is: token\nrollout_is: sequence\n", DW_GEN_VERL, Y,
                       DW_EXPORT_ERROR_KEY,
                       "in.txt:2: algorithm.rollout_correction.rollout_is is given twice");
  expect_import_error ("# c\n\nalgorithm.rollout_correction.rollout_is='token'\nrollout_is\n",
                       DW_GEN_VERL, H, DW_EXPORT_ERROR_SYNTAX,
                       "in.txt:4: not a Hydra override (KEY=VALUE): rollout_is");
  expect_import_error ("algorithm.rollout_correction.rollout_rs='token_k1\n", DW_GEN_VERL, H,
                       DW_EXPORT_ERROR_SYNTAX,
                       "in.txt:1: unterminated quoted value in "
                       "algorithm.rollout_correction.rollout_rs='token_k1");
  expect_import_error ("algorithm:\n  rollout_correction:\n   x: 1\n  y: : 2\n", DW_GEN_VERL, Y,
                       DW_EXPORT_ERROR_SYNTAX,
                       "in.txt:4:6: YAML syntax error: mapping values are not allowed in this "
                       "context");
  expect_import_error ("algorithm:\n  gamma: 1.0\n", DW_GEN_VERL, Y, DW_EXPORT_ERROR_FORMAT,
                       "in.txt:2: algorithm has no rollout_correction section");
  expect_import_error ("- a\n- b\n", DW_GEN_VERL, Y, DW_EXPORT_ERROR_SYNTAX,
                       "in.txt:1: expected a mapping of config keys");
  /* what verl itself raises (the spec's errors, via dw_correction_check_config) */
  expect_import_error (
    "rollout_rs: geometric\nrollout_rs_threshold: 1.001\n", DW_GEN_VERL, Y,
    DW_EXPORT_ERROR_REJECTED,
    "in.txt: verl-0.7.1 would reject this config: ValueError: Invalid rollout_rs "
    "option: geometric. Must be one of ['seq_max_k2', 'seq_max_k3', "
    "'seq_mean_k1', 'seq_mean_k2', 'seq_mean_k3', 'seq_sum_k1', 'seq_sum_k2', "
    "'seq_sum_k3', 'token_k1', 'token_k2', 'token_k3'].");
  expect_import_error (
    "rollout_rs: seq_sum_k1\n", DW_GEN_VERL, Y, DW_EXPORT_ERROR_REJECTED,
    "in.txt: verl-0.7.1 would reject this config: ValueError: rollout_rs_threshold "
    "must be explicitly provided when rollout_rs is enabled. Set "
    "rollout_rs_threshold to the desired threshold value.");
  expect_import_error (
    "rollout_rs: token_k1\nrollout_rs_threshold: 0\n", DW_GEN_VERL, Y, DW_EXPORT_ERROR_REJECTED,
    "in.txt: verl-0.7.1 would reject this config: ZeroDivisionError: float division "
    "by zero");
  expect_import_error (
    "rollout_rs: token_k1\nrollout_rs_threshold: [1, 2]\n", DW_GEN_VERL, Y,
    DW_EXPORT_ERROR_REJECTED,
    "in.txt: verl-0.7.1 would reject this config: TypeError: rollout_rs_threshold "
    "must be a string or numeric value specifying per-option thresholds.");
  expect_import_error (
    "python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8 \\\n"
    "  \"algorithm.rollout_correction.rollout_is='tokens'\"\n",
    DW_GEN_VERL, A, DW_EXPORT_ERROR_REJECTED,
    "in.txt: verl-0.7.1 would reject this config: ValueError: Invalid rollout_is: "
    "tokens. Must be one of {'sequence', 'token'}.");
  /* slime */
  expect_import_error ("x: 1\n", DW_GEN_SLIME, H, DW_EXPORT_ERROR_FORMAT,
                       "in.txt: slime takes no Hydra overrides: use --format args or --format "
                       "yaml");
  expect_import_error ("--custom-config-path mis.yaml\n", DW_GEN_SLIME, A, DW_EXPORT_ERROR_FORMAT,
                       "in.txt: no mis.yaml here-document: slime's flags only name the file "
                       "(--custom-config-path), import that YAML with --format yaml");
  expect_import_error (
    "use_tis: true\nrollout_is: token\n", DW_GEN_SLIME, Y, DW_EXPORT_ERROR_KEY,
    "in.txt:2: rollout_is is not a key slime accepts (accepted: use_tis, tis_function, tis_clip, "
    "tis_clip_low, calculate_per_token_loss, "
    "use_rs, tis_level, rs_level, tis_mode, tis_lower_bound, tis_upper_bound, "
    "rs_lower_bound, rs_upper_bound, rs_veto_threshold, tis_batch_normalize)");
}

static void
test_export_errors (void)
{
  DwConfig c;
  g_autoptr (GError) error = NULL;
  dw_config_init (&c, DW_GEN_VERL);
  /* lenient: the key reaches the export, whose refusal is tested here */
  g_assert_true (dw_config_merge_json_lenient (&c, "{\"rollout_is_level\": \"token\"}", NULL));
  g_assert_null (dw_config_export (&c, DW_EXPORT_FORMAT_YAML, &error));
  g_assert_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY);
  g_assert_cmpstr (error->message, ==,
                   "verl-0.7.1 does not accept the key 'rollout_is_level' (accepted: " HEAD_KEYS
                   ")");
  g_clear_error (&error);

  dw_config_init (&c, DW_GEN_VERL);
  g_assert_true (dw_config_merge_json (
    &c, "{\"rollout_rs\": \"token_k2\", \"rollout_rs_threshold\": \"1_2\"}", NULL));
  g_assert_null (dw_config_export (&c, DW_EXPORT_FORMAT_HYDRA, &error));
  g_assert_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED);
  g_assert_true (
    g_str_has_prefix (error->message, "verl-0.7.1 would reject this config: ValueError: "));
  g_clear_error (&error);

  g_assert_null (dw_config_export_string ("{\"preset\": \"nope\"}", "verl-0.7.1", "yaml", &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_null (dw_config_export_string ("{}", "verl-9", "yaml", &error));
  g_assert_cmpstr (error->message, ==,
                   "unknown target 'verl-9' (verl = the newest release, verl-0.6.0, verl-0.6.1, "
                   "verl-0.7.0, verl-0.7.1, verl-0.8.0, verl-0.9.0 or slime; old names such as "
                   "verl-0.7 still work)");
}

/* value resolution: PyYAML for slime, OmegaConf (which also reads 1e-4) for verl */
static void
test_scalar_types (void)
{
  DwConfig c;
  g_autoptr (GError) error = NULL;
  g_assert_true (dw_config_import ("rollout_is: token\nrollout_is_threshold: 1e-4\n"
                                   "rollout_is_batch_normalize: yes\nloss_type: '2'\n"
                                   "bypass_mode: ~\n",
                                   -1, "t", DW_GEN_VERL, DW_EXPORT_FORMAT_YAML, &c, &error));
  g_assert_no_error (error);
  g_assert_cmpint (dw_config_get (&c, "rollout_is_threshold")->kind, ==, DW_VALUE_FLOAT);
  g_assert_cmpfloat (dw_config_get (&c, "rollout_is_threshold")->f, ==, 1e-4);
  g_assert_cmpint (dw_config_get (&c, "rollout_is_batch_normalize")->kind, ==, DW_VALUE_BOOL);
  g_assert_cmpint (dw_config_get (&c, "loss_type")->kind, ==, DW_VALUE_STR);
  g_assert_cmpint (dw_config_get (&c, "bypass_mode")->kind, ==, DW_VALUE_NONE);

  /* yaml.safe_load: "1e-4" is a string (slime would fail on it), '1e-4' quoted is meant as one,
   * 2 is an int */
  expect_import_error ("use_rs: true\nrs_veto_threshold: 1e-4\n", DW_GEN_SLIME,
                       DW_EXPORT_FORMAT_YAML, DW_EXPORT_ERROR_REJECTED,
                       "in.txt:2: rs_veto_threshold: slime's yaml.safe_load reads 1e-4 as a "
                       "string, not a number (write it with a '.', e.g. 1.0e-4)");
  g_assert_true (dw_config_import ("rs_veto_threshold: '1e-4'\ntis_upper_bound: 2\n"
                                   "rs_upper_bound: 1.0e-4\n",
                                   -1, "t", DW_GEN_SLIME, DW_EXPORT_FORMAT_YAML, &c, &error));
  g_assert_no_error (error);
  g_assert_cmpint (dw_config_get (&c, "rs_veto_threshold")->kind, ==, DW_VALUE_STR);
  g_assert_cmpint (dw_config_get (&c, "tis_upper_bound")->kind, ==, DW_VALUE_INT);
  g_assert_cmpfloat (dw_config_get (&c, "rs_upper_bound")->f, ==, 1e-4);

  /* a whole trainer config: only algorithm.rollout_correction is read */
  g_assert_true (dw_config_import ("trainer:\n  n_gpus_per_node: 8\nalgorithm:\n  gamma: 1.0\n"
                                   "  rollout_correction:\n    rollout_is: token\n"
                                   "    rollout_is_threshold: 2.0\n",
                                   -1, "t", DW_GEN_VERL, DW_EXPORT_FORMAT_YAML, &c, &error));
  g_assert_cmpuint (c.n_keys, ==, 2);
  /* verl 0.6: the rollout_* keys among the other algorithm settings */
  g_assert_true (dw_config_import ("algorithm:\n  gamma: 1.0\n  rollout_is_threshold: 2.0\n"
                                   "  rollout_is_level: sequence\n",
                                   -1, "t", DW_GEN_VERL_0_6, DW_EXPORT_FORMAT_YAML, &c, &error));
  g_assert_cmpuint (c.n_keys, ==, 2);
  /* Hydra: other overrides and the + prefix */
  g_assert_true (dw_config_import ("trainer.total_epochs=3\n"
                                   "+algorithm.rollout_correction.rollout_rs_threshold=\"0.5_2\"\n"
                                   "algorithm.rollout_correction.rollout_rs=seq_sum_k1\n",
                                   -1, "t", DW_GEN_VERL, DW_EXPORT_FORMAT_HYDRA, &c, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (c.n_keys, ==, 2);
  g_assert_cmpstr (dw_config_get (&c, "rollout_rs_threshold")->s, ==, "0.5_2");
  g_assert_cmpstr (dw_config_get (&c, "rollout_rs")->s, ==, "seq_sum_k1");

  /* detection: a YAML document marker is not a command-line flag */
  DwGeneration dg;
  DwExportFormat df;
  dw_config_import_detect ("---\nalgorithm:\n  rollout_correction:\n    rollout_is: token\n", -1,
                           &dg, &df);
  g_assert_cmpint (df, ==, DW_EXPORT_FORMAT_YAML);
  g_assert_cmpint (dg, ==, DW_GEN_VERL_LATEST);
  dw_config_import_detect ("--custom-config-path mis.yaml\n", -1, &dg, &df);
  g_assert_cmpint (df, ==, DW_EXPORT_FORMAT_ARGS);
  g_assert_cmpint (dg, ==, DW_GEN_SLIME);
  dw_config_import_detect ("algorithm.rollout_is_level=token\n", -1, &dg, &df);
  g_assert_cmpint (df, ==, DW_EXPORT_FORMAT_HYDRA);
  g_assert_cmpint (dg, ==, DW_GEN_VERL_0_6);

  /* the GUI's string functions */
  g_autofree char *y
    = dw_config_export_string ("{\"preset\": \"decoupled_k3_rs\"}", "verl-0.7.1", "hydra", &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (y, "algorithm.rollout_correction.rollout_rs='seq_mean_k3'\n"));
  g_autofree char *j = dw_config_import_string (y, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (j, ==,
                   "{\"rollout_is\": null, \"rollout_is_threshold\": 2.0, "
                   "\"rollout_is_batch_normalize\": false, \"rollout_rs\": \"seq_mean_k3\", "
                   "\"rollout_rs_threshold\": 0.01, \"bypass_mode\": false, \"loss_type\": "
                   "\"ppo_clip\"}");
}

/* ------------------------------------------------------------------------------------------ */
/* CLI */

/* verl >= 0.8.0: IcePop's "lower_upper" threshold is a string in every format and comes back as
 * one; verl v0.7.1 compares the threshold with 0 and raises on a string (its TypeError) */
static void
test_icepop (void)
{
  const DwGeneration generations[] = { DW_GEN_VERL_0_8_0, DW_GEN_VERL_0_9_0 };
  for (gsize g = 0; g < G_N_ELEMENTS (generations); g++)
    {
      DwConfig c;
      dw_config_init (&c, generations[g]);
      g_assert_true (dw_config_merge_json (
        &c, "{\"rollout_is\": \"token\", \"rollout_is_threshold\": \"0.5_5.0\"}", NULL));
      round_trip (&c, "icepop");
      g_autoptr (GError) error = NULL;
      g_autofree char *yaml = dw_config_export (&c, DW_EXPORT_FORMAT_YAML, &error);
      g_assert_no_error (error);
      g_assert_nonnull (strstr (yaml, "    rollout_is_threshold: '0.5_5.0'\n"));
      g_autofree char *hydra = dw_config_export (&c, DW_EXPORT_FORMAT_HYDRA, &error);
      g_assert_nonnull (
        strstr (hydra, "algorithm.rollout_correction.rollout_is_threshold='0.5_5.0'\n"));
      /* the preset verl 0.8.0 added */
      DwConfig preset;
      g_assert_true (dw_preset_config (generations[g], "decoupled_token_icepop", &preset, NULL));
      round_trip (&preset, "decoupled_token_icepop");
    }

  /* the same config for verl 0.7.1 */
  g_autoptr (GError) error = NULL;
  g_assert_null (
    dw_config_export_string ("{\"rollout_is\": \"token\", \"rollout_is_threshold\": \"0.5_5.0\"}",
                             "verl-0.7.1", "yaml", &error));
  g_assert_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED);
  g_assert_cmpstr (error->message, ==,
                   "verl-0.7.1 would reject this config: TypeError: '<=' not supported between "
                   "instances of 'str' and 'int'");
  expect_import_error ("algorithm:\n  rollout_correction:\n    rollout_is: token\n"
                       "    rollout_is_threshold: '0.5_5.0'\n",
                       DW_GEN_VERL_0_7_1, DW_EXPORT_FORMAT_YAML, DW_EXPORT_ERROR_REJECTED,
                       "in.txt: verl-0.7.1 would reject this config: TypeError: '<=' not "
                       "supported between instances of 'str' and 'int'");
  /* and verl 0.9.0's own checks of the grammar */
  expect_import_error ("algorithm.rollout_correction.rollout_is=token\n"
                       "algorithm.rollout_correction.rollout_is_threshold='2.0_0.5'\n",
                       DW_GEN_VERL_0_9_0, DW_EXPORT_FORMAT_HYDRA, DW_EXPORT_ERROR_REJECTED,
                       "in.txt: verl-0.9.0 would reject this config: ValueError: "
                       "rollout_is_threshold lower bound must be <= upper bound.");
  /* a pasted IcePop config is read as the newest release's */
  DwGeneration detected;
  DwExportFormat format;
  dw_config_import_detect ("rollout_is: token\nrollout_is_threshold: 0.5_5.0\n", -1, &detected,
                           &format);
  g_assert_cmpint (detected, ==, DW_GEN_VERL_LATEST);
}

static void
assert_slime_args (const char *json, const char *expected)
{
  DwConfig c;
  dw_config_init (&c, DW_GEN_SLIME);
  g_assert_true (dw_config_merge_json (&c, json, NULL));
  g_autoptr (GError) error = NULL;
  g_autofree char *args = dw_config_export (&c, DW_EXPORT_FORMAT_ARGS, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (args, ==, expected);
  DwConfig back;
  g_assert_true (
    dw_config_import (args, -1, "exported", DW_GEN_SLIME, DW_EXPORT_FORMAT_ARGS, &back, &error));
  g_assert_no_error (error);
  assert_config_equal (&c, &back);
  assert_config_equal (&back, &c);
  DwGeneration detected;
  DwExportFormat format;
  dw_config_import_detect (args, -1, &detected, &format);
  g_assert_cmpint (detected, ==, DW_GEN_SLIME);
  g_assert_cmpint (format, ==, DW_EXPORT_FORMAT_ARGS);
}

/* slime's built-in TIS and IcePop are its command-line flags (slime/utils/arguments.py) */
static void
test_slime_builtin (void)
{
  assert_slime_args ("{\"use_tis\": true, \"tis_clip\": 3.0, \"tis_clip_low\": 0.5}",
                     "# slime's built-in TIS (slime/backends/megatron_utils/loss.py)\n"
                     "SLIME_TIS_ARGS=(--use-tis --tis-clip 3.0 --tis-clip-low 0.5)\n"
                     "# then add \"${SLIME_TIS_ARGS[@]}\" to the slime command line\n");
  assert_slime_args ("{\"use_tis\": true, \"tis_function\": \"icepop\", \"tis_clip\": 5.0, "
                     "\"tis_clip_low\": 0.5, \"calculate_per_token_loss\": true}",
                     "# slime's built-in TIS (slime/backends/megatron_utils/loss.py)\n"
                     "SLIME_TIS_ARGS=(--use-tis --tis-clip 5.0 --tis-clip-low 0.5 "
                     "--calculate-per-token-loss --custom-tis-function-path "
                     "slime.backends.megatron_utils.loss.icepop_function)\n"
                     "# then add \"${SLIME_TIS_ARGS[@]}\" to the slime command line\n");
  assert_slime_args ("{\"use_tis\": true, \"tis_function\": \"vanilla\"}",
                     "# slime's built-in TIS (slime/backends/megatron_utils/loss.py)\n"
                     "SLIME_TIS_ARGS=(--use-tis)\n"
                     "# then add \"${SLIME_TIS_ARGS[@]}\" to the slime command line\n");

  /* no YAML for flags; no mis.py key in a built-in config, no built-in flag in mis.py's */
  g_autoptr (GError) error = NULL;
  g_assert_null (
    dw_config_export_string ("{\"tis_function\": \"icepop\"}", "slime", "yaml", &error));
  g_assert_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT);
  g_clear_error (&error);
  g_assert_null (dw_config_export_string ("{\"tis_clip\": 2.0, \"tis_mode\": \"clip\"}", "slime",
                                          "args", &error));
  g_assert_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY);
  g_assert_cmpstr (error->message, ==,
                   "slime's built-in TIS has no flag for 'tis_mode' (a mis.py key): set "
                   "tis_function to mis, or drop the key");
  g_clear_error (&error);
  g_assert_null (dw_config_export_string ("{\"tis_function\": \"mis\", \"tis_clip\": 2.0}", "slime",
                                          "args", &error));
  g_assert_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY);
  g_clear_error (&error);

  /* import: slime's other flags are left alone, its TIS flags are checked */
  DwConfig c;
  g_assert_true (dw_config_import ("python3 train.py --lr 1e-6 \\\n  --use-tis --tis-clip=2.5 "
                                   "--custom-tis-function-path "
                                   "slime.backends.megatron_utils.loss.icepop_function\n",
                                   -1, "run.sh", DW_GEN_SLIME, DW_EXPORT_FORMAT_ARGS, &c, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (dw_config_get (&c, "tis_function")->s, ==, "icepop");
  g_assert_cmpfloat (dw_config_get (&c, "tis_clip")->f, ==, 2.5);
  const struct
  {
    const char *text;
    int code;
    const char *message;
  } bad[] = {
    { "--use-tis --tis-clip 2 --tis-clip 3\n", DW_EXPORT_ERROR_KEY,
      "in.txt: tis_clip is given twice" },
    { "--use-tis --tis-clip-high 3\n", DW_EXPORT_ERROR_KEY,
      "in.txt: unrecognized arguments: --tis-clip-high (slime's TIS flags are --use-tis, "
      "--tis-clip, --tis-clip-low, --calculate-per-token-loss, --custom-tis-function-path)" },
    { "--use-tis --tis-clip two\n", DW_EXPORT_ERROR_REJECTED,
      "in.txt: argument --tis-clip: invalid float value: 'two'" },
    { "--use-tis --tis-clip\n", DW_EXPORT_ERROR_SYNTAX,
      "in.txt: argument --tis-clip: expected one argument" },
    { "--use-tis --custom-tis-function-path my.module.tis\n", DW_EXPORT_ERROR_REJECTED,
      "in.txt: --custom-tis-function-path my.module.tis is a function Driftwatch cannot "
      "reproduce (it knows slime.backends.megatron_utils.loss.icepop_function and "
      "examples.train_infer_mismatch_helper.mis.compute_mis_weights_with_cp)" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    expect_import_error (bad[i].text, DW_GEN_SLIME, DW_EXPORT_FORMAT_ARGS, bad[i].code,
                         bad[i].message);
  expect_import_error ("use_tis: true\ntis_clip: 2.0\n", DW_GEN_SLIME, DW_EXPORT_FORMAT_YAML,
                       DW_EXPORT_ERROR_KEY,
                       "in.txt:2: tis_clip is a command-line flag of slime (--tis-clip), not a "
                       "mis.yaml key");
}

static void
test_cli (void)
{
  g_autofree char *dir = g_dir_make_tmp ("dw-export-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (dir, "rc.yaml", NULL);
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *a[]
      = { "export-config", "--preset", "decoupled_geo_rs", "--to", "verl-0.7.1", "-o", file, NULL };
    g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 0);
    g_assert_cmpstr (out, ==, "");
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *a[] = { "import-config", "--from", "verl-0.7.1", "--format", "yaml", file, NULL };
    g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 0);
    g_assert_cmpstr (out, ==,
                     "{\"rollout_is\": null, \"rollout_is_threshold\": 2.0, "
                     "\"rollout_is_batch_normalize\": false, \"rollout_rs\": \"seq_mean_k1\", "
                     "\"rollout_rs_threshold\": \"0.999_1.001\", \"bypass_mode\": false, "
                     "\"loss_type\": \"ppo_clip\"}\n");
    g_assert_cmpstr (err, ==, "");
  }
  {
    /* slime flags from a pipe */
    g_autofree char *sh = NULL, *out = NULL, *err = NULL, *e2 = NULL;
    const char *a[]
      = { "export-config", "--config", "{\"preset\": \"mis_yaml\", \"use_rs\": false}",
          "--to",          "slime",    "--format",
          "args",          NULL };
    g_assert_cmpint (dw_test_run_cli (a, NULL, &sh, &e2), ==, 0);
    g_assert_nonnull (strstr (sh, "--use-tis --custom-config-path mis.yaml "
                                  "--custom-tis-function-path "
                                  "examples.train_infer_mismatch_helper.mis."
                                  "compute_mis_weights_with_cp"));
    const char *b[] = { "import-config", "-", NULL };
    g_assert_cmpint (dw_test_run_cli (b, sh, &out, &err), ==, 0);
    g_assert_nonnull (strstr (out, "\"use_rs\": false"));
    g_assert_cmpstr (err, ==, "driftwatch-cli import-config: reading <stdin> as slime args\n");
  }
  const struct
  {
    const char *args[10];
    const char *input;
    int status;
    const char *err_contains;
  } bad[] = {
    { { "export-config", "--preset", "decoupled_geo_rs", NULL }, NULL, 2, "usage:" },
    { { "export-config", "--preset", "x", "--config", "{}", "--to", "verl-0.7.1", NULL },
      NULL,
      2,
      "usage:" },
    { { "export-config", "--preset", "nope", "--to", "verl-0.7.1", NULL },
      NULL,
      2,
      "Unknown preset 'nope' for verl-0.7.1." },
    { { "export-config", "--preset", "disabled", "--to", "verl-9", NULL },
      NULL,
      2,
      "unknown generation 'verl-9'" },
    { { "export-config", "--preset", "mis_yaml", "--to", "slime", "--format", "hydra", NULL },
      NULL,
      2,
      "slime takes no Hydra overrides" },
    { { "export-config", "--preset", "disabled", "--to", "verl-0.7.1", "--format", "toml", NULL },
      NULL,
      2,
      "unknown format 'toml' (yaml, hydra or args)" },
    { { "export-config", "--preset", "disabled", "--to", "verl-0.7.1", "-o", "/nonexistent/x/y",
        NULL },
      NULL,
      1,
      "/nonexistent/x/y" },
    { { "import-config", "/nonexistent/file.yaml", NULL }, NULL, 1, "/nonexistent/file.yaml" },
    { { "import-config", NULL }, NULL, 2, "usage:" },
    { { "import-config", "--from", "verl-0.7.1", "-", NULL },
      "a: [\n",
      1,
      "<stdin>:2:1: YAML syntax error:" },
    { { "import-config", "--from", "verl-0.7.1", "-", NULL },
      "rollout_rs: token_k1\n",
      2,
      "<stdin>: verl-0.7.1 would reject this config: ValueError: rollout_rs_threshold must be "
      "explicitly provided" },
    { { "import-config", "--from", "verl-0.7.1", "--format", "hydra", "-", NULL },
      "x=1\ny\n",
      1,
      "<stdin>:2: not a Hydra override (KEY=VALUE): y" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *out = NULL, *err = NULL;
      int st = dw_test_run_cli (bad[i].args, bad[i].input, &out, &err);
      if (st != bad[i].status || !strstr (err, bad[i].err_contains))
        g_error ("case %" G_GSIZE_FORMAT ": status %d, stderr %s", i, st, err);
      g_assert_cmpstr (out, ==, "");
    }
  g_unlink (file);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/export/presets-round-trip", test_presets_round_trip);
  g_test_add_func ("/export/tricky-round-trip", test_tricky_round_trip);
  g_test_add_func ("/export/accepted-keys", test_accepted_keys);
  g_test_add_func ("/export/import-errors", test_import_errors);
  g_test_add_func ("/export/export-errors", test_export_errors);
  g_test_add_func ("/export/scalar-types", test_scalar_types);
  g_test_add_func ("/export/icepop", test_icepop);
  g_test_add_func ("/export/slime-builtin", test_slime_builtin);
  g_test_add_func ("/export/cli", test_cli);
  return g_test_run ();
}
