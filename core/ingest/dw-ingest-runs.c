/* dw-ingest-runs.c — run identity: which run a file belongs to, run names, run meta
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <inttypes.h>

#include <json-glib/json-glib.h>

#include "dw-reader-loggers.h"
#include "dw-log-sniff.h"
#include "dw-run-meta.h"

#include "dw-ingester-private.h"

const char *
dw_ingest_runs_format_framework (DwFormat format)
{
  switch (format)
    {
    case DW_FORMAT_VERL_CONSOLE:
    case DW_FORMAT_VERL_JSONL:
      return "verl";
    case DW_FORMAT_SLIME_CONSOLE:
      return "slime";
    case DW_FORMAT_WANDB_CSV:
    case DW_FORMAT_WANDB_PANEL_CSV:
    case DW_FORMAT_WANDB_OFFLINE:
      return "wandb";
    case DW_FORMAT_MLFLOW_SQLITE:
    case DW_FORMAT_MLFLOW_FILE:
      return "mlflow";
    case DW_FORMAT_SWANLAB:
      return "swanlab";
    case DW_FORMAT_TRACKIO_SQLITE:
      return "trackio";
    default:
      return "unknown";
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Runs                                                                                        */

/* Folders that are a part of the run of the folder holding them. Not "logs" (a folder of console
 * logs holds one run per log) nor "tensorboard_log" (verl and slime write
 * tensorboard_log/<project>/<experiment>/: one run per experiment). slime's --dump-details D
 * writes D/train_data/ and D/rollout_data/: parts of the run D. */
static const char *const part_dirs[]
  = { "tensorboard", "tb", "batches", "rollout_batches", "events", "train_data", "rollout_data" };

gboolean
dw_ingest_runs_is_part_dir (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (part_dirs); i++)
    if (g_ascii_strcasecmp (name, part_dirs[i]) == 0)
      return TRUE;
  return FALSE;
}

char *
dw_ingest_run_root_for_file (const char *path, DwFormat format)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autofree char *dir = NULL;

  if (format == DW_FORMAT_MLFLOW_FILE)
    {
      char *run = dw_mlflow_file_run_dir (abs);
      return run != NULL ? run : g_steal_pointer (&abs);
    }
  if (format != DW_FORMAT_TFEVENTS && !dw_ingester_is_batch_format (format))
    return g_steal_pointer (&abs);
  dir = g_path_get_dirname (abs);
  for (int i = 0; i < DW_INGESTER_MAX_DEPTH; i++)
    {
      g_autofree char *base = g_path_get_basename (dir);
      g_autofree char *parent = g_path_get_dirname (dir);

      if (!dw_ingest_runs_is_part_dir (base) || g_str_equal (parent, dir))
        break;
      g_free (dir);
      dir = g_steal_pointer (&parent);
    }
  return g_steal_pointer (&dir);
}

char *
dw_ingest_run_name (const char *run_root)
{
  g_autofree char *base = g_path_get_basename (run_root);
  char *named = dw_logger_run_name (run_root); /* an MLflow run folder, a SwanLab run */
  char *dot;

  if (named != NULL)
    return named;
  if (g_file_test (run_root, G_FILE_TEST_IS_DIR))
    return g_steal_pointer (&base);
  dot = strrchr (base, '.');
  if (dot != NULL && dot != base)
    *dot = '\0';
  return g_steal_pointer (&base);
}

/* The run of @run_root: created when needed, inside the caller's transaction. A run of the same
 * name that came from elsewhere is not merged with: "parent/name" (then "…/name (N)"). */
gint64
dw_ingest_runs_ensure_named (DwIngester *self, const char *run_root, const char *name_hint,
                             const char *framework, GError **error)
{
  g_autofree char *name = name_hint != NULL ? g_strdup (name_hint) : dw_ingest_run_name (run_root);
  g_autoptr (GPtrArray) runs = NULL;

  if (self->run_name != NULL)
    return dw_store_ensure_run (self->store, self->run_name, framework, run_root, error);
  runs = dw_store_list_runs (self->store, error);
  if (runs == NULL)
    return 0;
  for (int attempt = 0; attempt < 100; attempt++)
    {
      DwRunInfo *same = NULL;

      for (guint i = 0; i < runs->len; i++)
        {
          DwRunInfo *r = runs->pdata[i];
          if (g_str_equal (r->name, name))
            same = r;
        }
      if (same == NULL || same->source == NULL || g_str_equal (same->source, run_root))
        break;
      if (attempt == 0)
        {
          g_autofree char *parent = g_path_get_dirname (run_root);
          g_autofree char *pbase = g_path_get_basename (parent);
          char *n = g_strdup_printf ("%s/%s", pbase, name);
          g_free (name);
          name = n;
        }
      else
        {
          g_autofree char *base = dw_ingest_run_name (run_root);
          g_autofree char *parent = g_path_get_dirname (run_root);
          g_autofree char *pbase = g_path_get_basename (parent);
          char *n = g_strdup_printf ("%s/%s (%d)", pbase, base, attempt + 1);
          g_free (name);
          name = n;
        }
    }
  return dw_store_ensure_run (self->store, name, framework, run_root, error);
}

gint64
dw_ingest_runs_ensure_for_root (DwIngester *self, const char *run_root, const char *framework,
                                GError **error)
{
  return dw_ingest_runs_ensure_named (self, run_root, NULL, framework, error);
}

/* Largest step of the other files of this run in this format (restart detection). */
gint64
dw_ingest_runs_others_max_step (DwIngester *self, gint64 run_id, int format, const char *path,
                                GError **error)
{
  return dw_store_get_files_max_step (self->store, run_id, format, path, error);
}

/* tfevents: the framework is known once key names were seen ("unknown" is upgraded only). */
gboolean
dw_ingest_runs_upgrade_framework (DwIngester *self, gint64 run_id, const char *framework,
                                  GError **error)
{
  g_autoptr (DwRunInfo) run = dw_store_get_run (self->store, run_id, error);

  if (run == NULL)
    return FALSE;
  if (!g_str_equal (run->framework, "unknown"))
    return TRUE;
  return dw_store_ensure_run (self->store, run->name, framework, NULL, error) != 0;
}

static gboolean merge_run_meta (DwIngester *self, gint64 run_id, const char *add, GError **error);

/* A run whose log did not say its generation: the newest one consistent with its tag names. */
gboolean
dw_ingest_runs_infer_generation (DwIngester *self, gint64 run_id, GError **error)
{
  g_autofree char *meta = NULL, *gen = NULL, *src = NULL;
  g_autoptr (GPtrArray) names = NULL;
  GError *err = NULL;
  const char *inferred;

  if (run_id == 0)
    return TRUE;
  meta = dw_store_get_run_meta (self->store, run_id, &err);
  if (err != NULL)
    {
      g_propagate_error (error, err);
      return FALSE;
    }
  gen = dw_run_meta_get_string (meta, "generation");
  src = dw_run_meta_get_string (meta, "generation_source");
  if (gen != NULL && g_strcmp0 (src, "inferred") != 0)
    return TRUE;
  /* names only: counting each tag's points here made ingesting a folder of many files
   * quadratic (120 MLflow metric files: 3× slower) */
  names = dw_store_list_tag_names (self->store, run_id, error);
  if (names == NULL)
    return FALSE;
  inferred = dw_run_meta_infer_generation ((const char *const *)names->pdata, names->len);
  if (inferred == NULL || g_strcmp0 (inferred, gen) == 0)
    return TRUE;
  {
    g_autofree char *add
      = g_strdup_printf ("{\"generation\": \"%s\", \"generation_source\": \"inferred\"}", inferred);
    if (!dw_store_begin (self->store, error))
      return FALSE;
    if (!merge_run_meta (self, run_id, add, &err) || !dw_store_commit (self->store, &err))
      return dw_ingester_fail_tx (self, error, err);
  }
  return TRUE;
}

/* Could a point of @path meet a stored copy from another source of the run: a file of another
 * format (a console + TensorBoard pair), or another file of the same text format (two console
 * logs or JSONL files in one run folder, written side by side)? TensorBoard and MLflow
 * file-store files of one run are not checked against each other: a restart's newer event
 * file replaces the older one's points (a launch), and MLflow keeps one file per metric. */
gboolean
dw_ingest_runs_has_other_sources (DwIngester *self, gint64 run_id, int format, const char *path,
                                  GError **error)
{
  GError *err = NULL;
  gint64 other_max;

  /* indexed: listing every file record per file made ingest quadratic in files */
  if (dw_store_run_has_other_formats (self->store, run_id, format, &err))
    return TRUE;
  if (err != NULL)
    {
      g_propagate_error (error, err);
      return FALSE;
    }
  if (format != DW_FORMAT_VERL_CONSOLE && format != DW_FORMAT_SLIME_CONSOLE
      && format != DW_FORMAT_VERL_JSONL)
    return FALSE;
  other_max = dw_store_get_files_max_step (self->store, run_id, format, path, error);
  return other_max != G_MININT64;
}

/* Merges @add (a JSON object) into the run's stored meta: members of @add win, except that an
 * inferred generation never replaces one the log gave. */
/* @object as JSON text, its members in name order: the stored meta does not depend on which of a
 * run's files was read first (a folder ingested whole or watched as it is written). */
static char *
meta_to_sorted_json (JsonObject *object)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (GList) members = g_list_sort (json_object_get_members (object), (GCompareFunc)strcmp);
  g_autoptr (JsonObject) sorted = json_object_new ();
  g_autoptr (JsonNode) root = json_node_new (JSON_NODE_OBJECT);

  for (GList *l = members; l != NULL; l = l->next)
    json_object_set_member (sorted, l->data,
                            json_node_copy (json_object_get_member (object, l->data)));
  json_node_set_object (root, sorted);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

static gboolean
merge_run_meta (DwIngester *self, gint64 run_id, const char *add, GError **error)
{
  g_autofree char *old = dw_store_get_run_meta (self->store, run_id, error);
  g_autoptr (JsonParser) po = json_parser_new ();
  g_autoptr (JsonParser) pa = json_parser_new ();
  JsonObject *o, *a;
  g_autofree char *out = NULL;

  if (error != NULL && *error != NULL)
    return FALSE;
  if (!json_parser_load_from_data (pa, add, -1, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (pa)))
    return TRUE;
  a = json_node_get_object (json_parser_get_root (pa));
  if (old == NULL || !json_parser_load_from_data (po, old, -1, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (po)))
    {
      out = meta_to_sorted_json (a);
      return dw_store_set_run_meta (self->store, run_id, out, error);
    }
  o = json_node_get_object (json_parser_get_root (po));
  if (g_strcmp0 (json_object_get_string_member_with_default (a, "generation_source", ""),
                 "inferred")
        == 0
      && json_object_has_member (o, "generation"))
    return TRUE;
  {
    g_autoptr (GList) members = json_object_get_members (a);
    for (GList *l = members; l != NULL; l = l->next)
      json_object_set_member (o, l->data, json_node_copy (json_object_get_member (a, l->data)));
  }
  out = meta_to_sorted_json (o);
  return dw_store_set_run_meta (self->store, run_id, out, error);
}

/* verl/slime TensorBoard layout: .../tensorboard_log/<project>/<experiment>/ → (project,
 * experiment), else FALSE. */
static gboolean
tb_experiment_of (const char *run_root, char **project, char **experiment)
{
  g_autofree char *parent = g_path_get_dirname (run_root);
  g_autofree char *grand = g_path_get_dirname (parent);
  g_autofree char *gbase = g_path_get_basename (grand);

  if (g_strcmp0 (gbase, "tensorboard_log") != 0)
    return FALSE;
  *project = g_path_get_basename (parent);
  *experiment = g_path_get_basename (run_root);
  return TRUE;
}

/* The stored run that is the experiment (@project, @experiment), or 0. */
static gint64
run_of_experiment (DwIngester *self, const char *project, const char *experiment, GError **error)
{
  g_autoptr (GPtrArray) runs = dw_store_list_runs (self->store, error);

  if (runs == NULL)
    return 0;
  for (guint i = 0; i < runs->len; i++)
    {
      DwRunInfo *r = runs->pdata[i];
      g_autofree char *meta = dw_store_get_run_meta (self->store, r->id, NULL);
      g_autofree char *p = dw_run_meta_get_string (meta, "project");
      g_autofree char *e = dw_run_meta_get_string (meta, "experiment");
      if (e != NULL && g_str_equal (e, experiment)
          && (project == NULL || p == NULL || g_str_equal (p, project)))
        return r->id;
    }
  return 0;
}

/* The stored run whose source is @run_root, or 0. */
static gint64
run_of_source (DwIngester *self, const char *run_root, GError **error)
{
  g_autoptr (GPtrArray) runs = dw_store_list_runs (self->store, error);

  if (runs == NULL)
    return 0;
  for (guint i = 0; i < runs->len; i++)
    {
      DwRunInfo *r = runs->pdata[i];
      if (g_strcmp0 (r->source, run_root) == 0)
        return r->id;
    }
  return 0;
}

/* Is the stored run @run_id the experiment @experiment, or of no known experiment? */
static gboolean
run_is_experiment (DwIngester *self, gint64 run_id, const char *experiment)
{
  g_autofree char *meta = dw_store_get_run_meta (self->store, run_id, NULL);
  g_autofree char *known = dw_run_meta_get_string (meta, "experiment");

  return known == NULL || g_str_equal (known, experiment);
}

/* The run of a new log file: the experiment it belongs to when the log says (verl's printed
 * config names trainer.project_name / experiment_name; verl's TensorBoard folders are
 * tensorboard_log/<project>/<experiment>) and that experiment is already a run — the console
 * log and the TensorBoard folder of one run, or a later launch of it; else the run of its run
 * root. The log's metadata is stored with the run. */
gint64
dw_ingest_runs_for_new_log (DwIngester *self, int fd, const char *path, DwFormat format,
                            const char *run_root, GError **error)
{
  g_autofree char *meta = NULL, *project = NULL, *experiment = NULL;
  g_autofree char *dir = g_path_get_dirname (path);
  gint64 run_id = 0;

  if (format == DW_FORMAT_VERL_CONSOLE || format == DW_FORMAT_SLIME_CONSOLE)
    {
      meta = dw_run_meta_scan (fd, path, format, DW_SNIFF_BUDGET_US);
      project = dw_run_meta_get_string (meta, "project");
      experiment = dw_run_meta_get_string (meta, "experiment");
    }
  else if (format == DW_FORMAT_TFEVENTS && tb_experiment_of (dir, &project, &experiment))
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      g_autoptr (JsonGenerator) g = json_generator_new ();
      JsonNode *root;

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "project");
      json_builder_add_string_value (b, project);
      json_builder_set_member_name (b, "experiment");
      json_builder_add_string_value (b, experiment);
      json_builder_end_object (b);
      root = json_builder_get_root (b);
      json_generator_set_root (g, root);
      meta = json_generator_to_data (g, NULL);
      json_node_unref (root);
    }
  if (experiment != NULL && self->run_name == NULL)
    {
      run_id = run_of_experiment (self, project, experiment, error);
      if (error != NULL && *error != NULL)
        return 0;
    }
  if (run_id == 0 && format == DW_FORMAT_VERL_JSONL && self->run_name == NULL)
    {
      /* verl's file logger writes <project>/<experiment>.jsonl: it joins that experiment's run
       * when one exists (its name alone is too weak to name a new run after) */
      g_autofree char *jp = g_path_get_basename (dir);
      g_autofree char *je = dw_ingest_run_name (path);
      run_id = run_of_experiment (self, jp, je, error);
      if (error != NULL && *error != NULL)
        return 0;
    }
  if (run_id == 0 && self->run_name == NULL)
    {
      /* the run of this run folder already exists under the experiment's name */
      run_id = run_of_source (self, run_root, error);
      if (error != NULL && *error != NULL)
        return 0;
      if (run_id != 0 && experiment != NULL && !run_is_experiment (self, run_id, experiment))
        {
          /* a run folder whose run is another experiment: a second training started from the
           * same working directory (a new tensorboard_log/<project>/<experiment>/ appearing
           * under `watch`). Its own run, rooted where `ingest` of the tree roots it: the
           * experiment folder, or the log itself */
          run_id = 0;
          run_root = format == DW_FORMAT_TFEVENTS ? dir : path;
        }
    }
  if (run_id == 0)
    /* named after the experiment when the log names it: the same name whichever of its files
     * (console log, TensorBoard folder) is ingested first */
    run_id = dw_ingest_runs_ensure_named (self, run_root, experiment,
                                          dw_ingest_runs_format_framework (format), error);
  if (run_id != 0 && meta != NULL && !merge_run_meta (self, run_id, meta, error))
    return 0;
  return run_id;
}
