/* test-schema.c — the configuration schema and the generation names against what the trainers
 * really take
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The schema must list every key a release's code reads: every key of every golden case (each
 * produced by that release's own code) and of every preset must be a row of its generation, with
 * a default of the type the row declares; every preset must pass the plan's checks.
 */
#include <json-glib/json-glib.h>
#include <string.h>

#include "dw-correction.h"

/* golden group → generation whose schema must know every key its cases pass */
static const struct
{
  const char *group, *generation;
} groups[] = {
  { "verl_v0.6.0", "verl-0.6.0" },        { "verl_v0.6.1", "verl-0.6.1" },
  { "verl_v0.7.0", "verl-0.7.0" },        { "verl_HEAD", "verl-0.7.1" },
  { "verl_v0.8.0", "verl-0.8.0" },        { "verl_v0.9.0", "verl-0.9.0" },
  { "verl_2f2996b7d", "verl-2f2996b7d" }, { "verl_2c6c65cb0", "verl-0.6.1" },
  { "verl_4424616d7", "verl-4424616d7" }, { "slime_HEAD", "slime" },
  { "slime_HEAD_builtin", "slime" },
};

/* "float | None" accepts a float or None default, and so on */
static gboolean
type_allows (const char *python_type, DwValueKind kind)
{
  switch (kind)
    {
    case DW_VALUE_NONE:
      return strstr (python_type, "None") != NULL;
    case DW_VALUE_BOOL:
      return strstr (python_type, "bool") != NULL;
    case DW_VALUE_FLOAT:
    case DW_VALUE_INT:
      return strstr (python_type, "float") != NULL;
    case DW_VALUE_STR:
      return strstr (python_type, "str") != NULL;
    default:
      return FALSE;
    }
}

static void
test_rows (void)
{
  for (int gen = 0; gen < DW_N_GENERATIONS; gen++)
    {
      const DwSchema *schema = dw_schema_get (gen);
      g_assert_nonnull (schema);
      g_assert_cmpint (schema->generation, ==, gen);
      g_assert_cmpuint (schema->n_keys, >=, 5);
      for (size_t i = 0; i < schema->n_keys; i++)
        {
          const DwSchemaKey *key = &schema->keys[i];
          g_assert_true (dw_schema_find (gen, key->name) == key); /* names are unique */
          if (!type_allows (key->python_type, key->default_value.kind))
            g_error ("%s.%s: default of kind %d is not a %s", dw_generation_name (gen), key->name,
                     key->default_value.kind, key->python_type);
          if (key->default_value.kind == DW_VALUE_STR && key->choices)
            {
              gboolean listed = FALSE;
              for (const char *const *choice = key->choices; *choice; choice++)
                listed |= g_str_equal (*choice, key->default_value.s);
              g_assert_true (listed);
            }
          if (key->slider_scale != DW_SLIDER_NONE)
            g_assert_cmpfloat (key->slider_min, <, key->slider_max);
          g_assert_true (key->hint && *key->hint);
        }
      /* what generic code looks up by role exists everywhere */
      g_assert_nonnull (dw_schema_find_role (gen, DW_ROLE_IS_THRESHOLD));
      g_assert_nonnull (dw_schema_find_role (gen, DW_ROLE_IS_LEVEL));
    }
  g_assert_null (dw_schema_get (DW_N_GENERATIONS));
  /* the IcePop bound is a string from v0.8.0 on, a number before */
  g_assert_nonnull (
    strstr (dw_schema_find (DW_GEN_VERL_0_9_0, "rollout_is_threshold")->python_type, "str"));
  g_assert_null (
    strstr (dw_schema_find (DW_GEN_VERL_0_7_1, "rollout_is_threshold")->python_type, "str"));
}

/* slime's flags as slime/utils/arguments.py (624b824a8) declares them: flag, argparse dest,
 * action="store_true" or a value; no verl key has a flag */
static void
test_slime_flags (void)
{
  static const struct
  {
    const char *key, *flag, *dest;
    gboolean store_true;
  } declared[] = {
    { "use_tis", "--use-tis", "use_tis", TRUE },
    { "tis_clip", "--tis-clip", "tis_clip", FALSE },
    { "tis_clip_low", "--tis-clip-low", "tis_clip_low", FALSE },
    { "tis_function", "--custom-tis-function-path", "custom_tis_function_path", FALSE },
    { "calculate_per_token_loss", "--calculate-per-token-loss", "calculate_per_token_loss", TRUE },
  };
  guint n_flags = 0;
  for (int gen = 0; gen < DW_N_GENERATIONS; gen++)
    {
      const DwSchema *schema = dw_schema_get (gen);
      for (size_t index = 0; index < schema->n_keys; index++)
        if (schema->keys[index].slime_flag)
          {
            g_assert_cmpint (gen, ==, DW_GEN_SLIME);
            g_assert_true (dw_schema_find_flag (gen, schema->keys[index].slime_flag)
                           == &schema->keys[index]);
            n_flags++;
          }
    }
  g_assert_cmpuint (n_flags, ==, G_N_ELEMENTS (declared));
  for (gsize index = 0; index < G_N_ELEMENTS (declared); index++)
    {
      const DwSchemaKey *key = dw_schema_find_flag (DW_GEN_SLIME, declared[index].flag);
      g_assert_nonnull (key);
      g_assert_cmpstr (key->name, ==, declared[index].key);
      g_assert_cmpint (dw_schema_flag_store_true (key), ==, declared[index].store_true);
      char dest[64];
      g_assert_true (dw_schema_flag_dest (key, dest, sizeof dest));
      g_assert_cmpstr (dest, ==, declared[index].dest);
      /* too small a buffer is refused, not truncated */
      g_assert_false (dw_schema_flag_dest (key, dest, strlen (declared[index].dest)));
    }
  /* a mis.yaml key has no flag, so no dest */
  char dest[64];
  g_assert_false (
    dw_schema_flag_dest (dw_schema_find (DW_GEN_SLIME, "tis_mode"), dest, sizeof dest));
  g_assert_null (dw_schema_find_flag (DW_GEN_SLIME, "--tis-clip-high"));
  g_assert_null (dw_schema_find_flag (DW_GEN_VERL_0_9_0, "--use-tis"));
}

/* every preset's keys are schema rows, and the plan accepts every preset */
static void
test_presets (void)
{
  guint n_presets = 0;
  for (int gen = 0; gen < DW_N_GENERATIONS; gen++)
    {
      size_t n;
      const DwPresetInfo *list = dw_preset_list (gen, &n);
      for (size_t i = 0; i < n; i++)
        {
          DwConfig config;
          DwCorrectionError error;
          g_assert_true (dw_preset_config (gen, list[i].name, &config, &error));
          for (size_t k = 0; k < config.n_keys; k++)
            if (!dw_schema_find (gen, config.keys[k]))
              g_error ("%s preset %s sets %s, not in the schema", dw_generation_name (gen),
                       list[i].name, config.keys[k]);
          DwPlan plan;
          if (!dw_plan_build (&config, &plan, &error))
            g_error ("%s preset %s: %s", dw_generation_name (gen), list[i].name, error.message);
          n_presets++;
        }
    }
  g_assert_cmpuint (n_presets, >=, 8 + 10 + 11 + 17 + 19 + 19 + 1);
}

/* every key the golden cases pass (verl's and slime's own code read them) is a schema row */
static void
test_golden_keys (void)
{
  const char *shared = g_getenv ("DW_SHARED_DIR");
  g_autofree char *path
    = g_build_filename (shared ? shared : "../shared", "golden", "index.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, path, NULL));
  JsonArray *cases
    = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "cases");
  guint n_keys = 0;
  for (guint i = 0; i < json_array_get_length (cases); i++)
    {
      JsonObject *item = json_array_get_object_element (cases, i);
      const char *file = json_object_get_string_member (item, "file");
      for (gsize g = 0; g < G_N_ELEMENTS (groups); g++)
        {
          if (!g_str_has_prefix (file, groups[g].group) || file[strlen (groups[g].group)] != '/')
            continue;
          DwGeneration gen;
          g_assert_true (dw_generation_from_name (groups[g].generation, &gen));
          JsonObject *config = json_object_get_object_member (item, "config");
          g_autoptr (GList) keys = json_object_get_members (config);
          for (GList *k = keys; k; k = k->next)
            {
              if (g_str_equal (k->data, "preset"))
                continue;
              /* the built-in cases name loss.py's function (icepop_function …), which a run
               * chooses with --custom-tis-function-path: the schema's tis_function */
              const char *key = g_str_equal (k->data, "function") ? "tis_function" : k->data;
              if (!dw_schema_find (gen, key))
                g_error ("%s: key %s is not in the schema of %s", file, (char *)k->data,
                         groups[g].generation);
              n_keys++;
            }
        }
    }
  g_assert_cmpuint (n_keys, >, 3000);
}

/* canonical names round-trip, old names and commits resolve with a sentence, typos do not */
static void
test_generation_names (void)
{
  for (int gen = 0; gen < DW_N_GENERATIONS; gen++)
    {
      DwGeneration back;
      const char *note = "unset";
      g_assert_true (dw_generation_resolve (dw_generation_name (gen), &back, &note));
      g_assert_cmpint (back, ==, gen);
      g_assert_null (note);
      g_assert_nonnull (dw_generation_info (gen)->summary);
    }
  static const struct
  {
    const char *name;
    DwGeneration generation;
  } aliases[] = { { "verl", DW_GEN_VERL_0_9_0 },         { "verl-0.7", DW_GEN_VERL_2F2996B7D },
                  { "verl-0.6", DW_GEN_VERL_4424616D7 }, { "b178a3cd5", DW_GEN_VERL_0_7_1 },
                  { "97eac9048", DW_GEN_VERL_0_7_1 },    { "2c6c65cb0", DW_GEN_VERL_0_6_1 },
                  { "d2916f5a0", DW_GEN_VERL_0_8_0 },    { "7fbc00a9", DW_GEN_VERL_0_9_0 } };
  for (gsize i = 0; i < G_N_ELEMENTS (aliases); i++)
    {
      DwGeneration gen;
      const char *note = NULL;
      g_assert_true (dw_generation_resolve (aliases[i].name, &gen, &note));
      g_assert_cmpint (gen, ==, aliases[i].generation);
    }
  DwGeneration gen;
  const char *note = NULL;
  g_assert_true (dw_generation_resolve ("verl-0.7", &gen, &note));
  g_assert_nonnull (strstr (note, "2f2996b7d"));
  g_assert_false (dw_generation_from_name ("verl-9", &gen));
  g_assert_false (dw_generation_from_name ("b178a3", &gen)); /* fewer than 7 digits */
  g_assert_false (dw_generation_from_name (NULL, &gen));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/schema/rows", test_rows);
  g_test_add_func ("/schema/slime-flags", test_slime_flags);
  g_test_add_func ("/schema/presets", test_presets);
  g_test_add_func ("/schema/golden-keys", test_golden_keys);
  g_test_add_func ("/schema/generation-names", test_generation_names);
  return g_test_run ();
}
