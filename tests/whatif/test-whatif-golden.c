/* test-whatif-golden.c — the what-if engine against verl's own numbers
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * test-whatif compares the engine with dw_correction_run on the same batch. This test compares it
 * with the golden cases of every verl release the engine evaluates from statistics (../shared/
 * golden, produced by each release's real code), so a generation the correction core does not
 * compute yet (v0.8.0 / v0.9.0 IS with IcePop) is still checked against the trainer: every metric
 * the engine gives as exact must equal verl's to float32 rounding of the trainer's reductions
 * (the golden tolerance of tests/correction), every error must be verl's, and the cases the
 * engine leaves pending are counted and bounded.
 */
#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "dw-batch-reader.h"
#include "dw-correction.h"
#include "dw-test-util.h"
#include "dw-whatif-engine.h"

static char *golden_dir;
static GHashTable *batches; /* name → DwBatch* */
static JsonArray *index_cases;

typedef struct
{
  const char *group, *generation;
  guint min_evaluated; /* cases the engine must answer from statistics (not pending) */
} Group;

static const Group groups[] = {
  { "verl_v0.9.0", "verl-0.9.0", 600 }, { "verl_v0.8.0", "verl-0.8.0", 600 },
  { "verl_HEAD", "verl-0.7.1", 450 },   { "verl_v0.7.0", "verl-0.7.0", 200 },
  { "verl_v0.6.1", "verl-0.6.1", 200 },
};

static const DwBatch *
test_batch (const char *name)
{
  DwBatch *batch = g_hash_table_lookup (batches, name);
  if (batch)
    return batch;
  g_autofree char *file = g_strdup_printf ("%s.npz", name);
  g_autofree char *path = g_build_filename (golden_dir, "batches", file, NULL);
  g_autoptr (GError) error = NULL;
  batch = dw_batch_read_file (path, &error);
  g_assert_no_error (error);
  g_hash_table_insert (batches, g_strdup (name), batch);
  return batch;
}

typedef struct
{
  guint cases, evaluated, pending, errors, metrics, approximate;
} Counts;

/* one case: appends what differs to @problems */
static void
test_case (JsonObject *entry, DwGeneration generation, Counts *counts, GString *problems)
{
  g_autofree char *path
    = g_build_filename (golden_dir, json_object_get_string_member (entry, "file"), NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, path, NULL));
  JsonObject *golden = json_node_get_object (json_parser_get_root (parser));
  JsonObject *config_object = json_object_get_object_member (golden, "config");
  DwConfig config;
  DwCorrectionError error;
  dw_config_init (&config, generation);
  if (json_object_has_member (config_object, "preset"))
    g_assert_true (
      dw_preset_apply (&config, json_object_get_string_member (config_object, "preset"), &error));
  else if (!dw_test_config_from_json (&config, config_object))
    return;
  counts->cases++;

  g_autoptr (GError) step_error = NULL;
  g_autoptr (DwWhatifStep) step = dw_whatif_step_new (
    test_batch (json_object_get_string_member (entry, "batch")), 0, &step_error);
  g_assert_no_error (step_error);
  DwWhatifStepResult got;
  gboolean ok = dw_whatif_step_evaluate (step, &config, &got);
  JsonNode *error_node = json_object_get_member (golden, "error");
  if (error_node && !JSON_NODE_HOLDS_NULL (error_node))
    {
      JsonObject *expected = json_node_get_object (error_node);
      counts->errors++;
      if (ok || !got.failed
          || g_strcmp0 (dw_error_kind_name (got.error.kind),
                        json_object_get_string_member (expected, "type"))
               != 0
          || strcmp (got.error.message, json_object_get_string_member (expected, "message")))
        g_string_append_printf (problems, " error %s '%s' != %s '%s';",
                                got.failed ? dw_error_kind_name (got.error.kind) : "none",
                                got.failed ? got.error.message : "",
                                json_object_get_string_member (expected, "type"),
                                json_object_get_string_member (expected, "message"));
      dw_whatif_step_result_clear (&got);
      return;
    }
  if (!ok)
    {
      g_string_append_printf (problems, " engine raises %s", got.error.message);
      return;
    }
  if (got.pending)
    {
      counts->pending++;
      dw_whatif_step_result_clear (&got);
      return;
    }
  counts->evaluated++;
  JsonObject *metrics = json_object_get_object_member (golden, "metrics");
  g_autoptr (GList) keys = json_object_get_members (metrics);
  for (GList *link = keys; link; link = link->next)
    {
      gboolean approximate;
      const double *value = dw_whatif_step_result_get (&got, link->data, &approximate);
      counts->metrics++;
      if (!value)
        g_string_append_printf (problems, " missing %s;", (char *)link->data);
      else if (approximate)
        counts->approximate++;
      else if (!dw_test_close (json_object_get_member (metrics, link->data), *value,
                               g_str_has_suffix (link->data, "_std")))
        g_string_append_printf (problems, " %s = %.9g;", (char *)link->data, *value);
    }
  for (gsize index = 0; index < got.n_metrics; index++)
    if (!json_object_has_member (metrics, dw_whatif_step_result_get_key (&got, index)))
      g_string_append_printf (problems, " extra %s;", dw_whatif_step_result_get_key (&got, index));
  dw_whatif_step_result_clear (&got);
}

static void
test_group (gconstpointer data)
{
  const Group *group = data;
  DwGeneration generation;
  g_assert_true (dw_generation_from_name (group->generation, &generation));
  Counts counts = { 0 };
  guint n_bad = 0;
  g_autofree char *prefix = g_strdup_printf ("%s/", group->group);
  for (guint index = 0; index < json_array_get_length (index_cases); index++)
    {
      JsonObject *entry = json_array_get_object_element (index_cases, index);
      const char *file = json_object_get_string_member (entry, "file");
      if (!g_str_has_prefix (file, prefix)
          || g_strcmp0 (json_object_get_string_member (entry, "entry"), "mask") != 0)
        continue;
      g_autoptr (GString) problems = g_string_new (NULL);
      test_case (entry, generation, &counts, problems);
      if (problems->len && ++n_bad <= 20)
        g_printerr ("MISMATCH %s:%s\n", file, problems->str);
    }
  g_printerr ("%s: %u cases, %u evaluated from statistics (%u metrics, %u approximate), "
              "%u errors as verl's, %u pending, %u differ\n",
              group->group, counts.cases, counts.evaluated, counts.metrics, counts.approximate,
              counts.errors, counts.pending, n_bad);
  g_assert_cmpuint (n_bad, ==, 0);
  g_assert_cmpuint (counts.evaluated, >=, group->min_evaluated);
  g_assert_cmpuint (counts.approximate * 100, <, counts.metrics + 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  const char *shared = g_getenv ("DW_SHARED_DIR");
  g_assert_nonnull (shared);
  golden_dir = g_build_filename (shared, "golden", NULL);
  batches = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)dw_batch_free);
  g_autofree char *index_path = g_build_filename (golden_dir, "index.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, index_path, NULL))
    g_error ("cannot read %s", index_path);
  index_cases
    = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "cases");
  for (gsize index = 0; index < G_N_ELEMENTS (groups); index++)
    {
      g_autofree char *path = g_strdup_printf ("/whatif-golden/%s", groups[index].group);
      g_test_add_data_func (path, &groups[index], test_group);
    }
  int status = g_test_run ();
  g_hash_table_unref (batches);
  g_free (golden_dir);
  return status;
}
