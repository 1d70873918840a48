/* dw-cli-recompute.c — `driftwatch-cli recompute --run R [--preset P | --config JSON]`:
 * a stored run's correction metrics under another config, compared with what the run logged.
 * Without --preset/--config the config the run printed; without --generation the run's own
 * generation (printed by its log, else inferred from its metric keys), else the newest verl.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <gio/gio.h>
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dw-cli.h"
#include "dw-csv.h"
#include "dw-config-json.h"
#include "dw-json-scan.h"
#include "dw-recompute.h"
#include "dw-store.h"
#include "dw-whatif-engine.h"
#include <json-glib/json-glib.h>

int dw_cli_recompute (int argc, char **argv);

static int
cmp_key (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* step,<key…>,flagged,disagreeing_keys: one row per step, the union of keys as columns */
static GString *
render_csv (const DwRecomputeResult *res)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < res->n_steps; i++)
    for (gsize m = 0; m < res->steps[i].result.n_metrics; m++)
      {
        const char *k = res->steps[i].result.metrics[m].key;
        if (g_hash_table_add (seen, (gpointer)k))
          g_ptr_array_add (keys, (gpointer)k);
      }
  g_ptr_array_sort (keys, cmp_key);
  GString *out = g_string_new ("step");
  for (guint k = 0; k < keys->len; k++)
    {
      g_string_append_c (out, ',');
      dw_csv_field (out, g_ptr_array_index (keys, k));
    }
  g_string_append (out, ",error,logged_compared,logged_disagree,disagreeing_keys\n");
  for (guint i = 0; i < res->n_steps; i++)
    {
      const DwRecomputeStep *st = &res->steps[i];
      g_string_append_printf (out, "%" G_GINT64_FORMAT, st->step);
      for (guint k = 0; k < keys->len; k++)
        {
          g_string_append_c (out, ',');
          const double *v = dw_correction_result_get (&st->result, g_ptr_array_index (keys, k));
          if (v)
            dw_csv_number (out, *v);
        }
      g_string_append_c (out, ',');
      if (st->failed)
        {
          g_autofree char *e
            = g_strdup_printf ("%s: %s", dw_error_kind_name (st->error.kind), st->error.message);
          dw_csv_field (out, e);
        }
      g_string_append_printf (out, ",%u,%u,", st->n_compared, st->diffs ? st->diffs->len : 0);
      g_autoptr (GString) dk = g_string_new (NULL);
      for (guint d = 0; st->diffs && d < st->diffs->len; d++)
        {
          DwRecomputeDiff *df = g_ptr_array_index (st->diffs, d);
          g_string_append_printf (dk, "%s%s", d ? ";" : "", df->key);
        }
      dw_csv_field (out, dk->str);
      g_string_append_c (out, '\n');
    }
  return out;
}

static GString *
render_json (const DwRecomputeResult *res, const DwRunInfo *run, const char *gen_source)
{
  GString *out = g_string_new ("{\"run\": {\"id\": ");
  g_string_append_printf (out, "%" G_GINT64_FORMAT ", \"name\": ", run->id);
  dw_json_append_string (out, run->name);
  g_string_append (out, "}, \"generation\": ");
  dw_json_append_string (out, dw_generation_name (res->config.generation));
  /* "given", "log" (printed by the run), "keys" (inferred from its metric keys), "default" */
  g_string_append (out, ", \"generation_source\": ");
  dw_json_append_string (out, gen_source);
  g_string_append (out, ", \"config\": ");
  dw_json_append_config (out, &res->config);
  g_string_append_printf (out,
                          ", \"n_steps\": %u, \"n_flagged\": %u, \"n_failed\": %u, \"steps\": [",
                          res->n_steps, res->n_flagged, res->n_failed);
  for (guint i = 0; i < res->n_steps; i++)
    {
      const DwRecomputeStep *st = &res->steps[i];
      g_string_append_printf (
        out, "%s\n  {\"step\": %" G_GINT64_FORMAT ", \"metrics\": ", i ? "," : "", st->step);
      if (st->failed)
        g_string_append (out, "{}");
      else
        dw_json_append_metrics (out, &st->result);
      g_string_append (out, ", \"error\": ");
      dw_json_append_error (out, st->failed ? &st->error : NULL);
      g_string_append_printf (out, ", \"logged\": {\"compared\": %u, \"disagree\": [",
                              st->n_compared);
      for (guint d = 0; st->diffs && d < st->diffs->len; d++)
        {
          DwRecomputeDiff *df = g_ptr_array_index (st->diffs, d);
          g_string_append (out, d ? ", {\"key\": " : "{\"key\": ");
          dw_json_append_string (out, df->key);
          g_string_append (out, ", \"tag\": ");
          dw_json_append_string (out, df->tag);
          g_string_append (out, ", \"logged\": ");
          dw_json_append_number (out, df->logged);
          g_string_append (out, ", \"recomputed\": ");
          dw_json_append_number (out, df->recomputed);
          g_string_append_c (out, '}');
        }
      g_string_append (out, "]}}");
    }
  g_string_append (out, "\n]}\n");
  return out;
}

/* The generation: the one given, else the run's (printed by its log, or the newest its metric keys
 * are consistent with), else the newest release — said on stderr, and in the JSON. FALSE (after
 * the error) when the given name is not a generation. */
static gboolean
dw_cli_recompute_generation (DwStore *store, DwRunInfo *run, const char *generation,
                             DwGeneration *gen, const char **gen_source)
{
  if (generation == NULL)
    {
      const char *source = NULL;
      g_autofree char *run_gen = dw_store_get_run_generation (store, run->id, &source, NULL);
      DwGeneration parsed;
      if (run_gen != NULL && dw_generation_from_name (run_gen, &parsed))
        {
          *gen = parsed;
          *gen_source = g_strcmp0 (source, "keys") == 0 ? "keys" : "log";
        }
      else
        *gen_source = "default";
      g_printerr (_ ("recompute: generation %s (%s)\n"), dw_generation_name (*gen),
                  g_str_equal (*gen_source, "log")    ? _ ("from the run's log")
                  : g_str_equal (*gen_source, "keys") ? _ ("inferred from its metric keys")
                                                      : _ ("default: newest verl"));
    }
  else if (!dw_cli_parse_generation ("recompute", generation, gen))
    return FALSE;
  return TRUE;
}

/* --config JSON (text or file): keys as given override the preset; a "preset" inside is set as
 * the preset. FALSE (after the error) when it is not a JSON object of known keys. */
static gboolean
dw_cli_recompute_merge_config (DwConfig *config, DwGeneration gen, const char *config_json)
{
  g_autoptr (GError) error = NULL;
  /* keys as given (a "preset" inside is resolved by the recompute, others override it) */
  DwConfig tmp;
  dw_config_init (&tmp, gen);
  g_autoptr (JsonParser) parser = json_parser_new ();
  gboolean from_file = FALSE;
  g_autofree char *config_text = dw_config_json_arg_text (config_json, &from_file, &error);
  if (config_text == NULL)
    {
      dw_cli_error ("recompute", _ ("--config: %s"), error->message);
      return FALSE;
    }
  if (!dw_json_load (parser, config_text, -1, &error)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      dw_cli_error ("recompute", _ ("--config: %s%s%s"), from_file ? config_json : "",
                    from_file ? ": " : "", error ? error->message : _ ("not a JSON object"));
      return FALSE;
    }
  JsonObject *obj = json_node_get_object (json_parser_get_root (parser));
  if (json_object_has_member (obj, "preset"))
    {
      const char *preset_name = json_object_get_string_member (obj, "preset");
      if (!preset_name)
        {
          dw_cli_error ("recompute", "%s", _ ("--config: \"preset\" must be a string"));
          return FALSE;
        }
      DwValue v = dw_value_str (preset_name);
      dw_config_set (config, "preset", &v);
      json_object_remove_member (obj, "preset");
    }
  g_autoptr (JsonGenerator) jg = json_generator_new ();
  json_generator_set_root (jg, json_parser_get_root (parser));
  g_autofree char *rest = json_generator_to_data (jg, NULL);
  if (!dw_config_merge_json (&tmp, rest, &error))
    {
      dw_cli_error ("recompute", _ ("--config: %s%s%s"), from_file ? config_json : "",
                    from_file ? ": " : "", error->message);
      return FALSE;
    }
  for (size_t i = 0; i < tmp.n_keys; i++)
    dw_config_set (config, tmp.keys[i], &tmp.values[i]);
  return TRUE;
}

int
dw_cli_recompute (int argc, char **argv)
{
  g_autofree char *run_arg = NULL, *preset = NULL, *config_json = NULL, *generation = NULL;
  g_autofree char *format = NULL, *db = NULL;
  double rtol = 0, atol = 0;
  GOptionEntry entries[] = {
    { "run", 'r', 0, G_OPTION_ARG_STRING, &run_arg, N_ ("Run id or name"), "RUN" },
    { "preset", 'p', 0, G_OPTION_ARG_STRING, &preset, N_ ("Preset name"), "NAME" },
    { "config", 'c', 0, G_OPTION_ARG_STRING, &config_json,
      N_ ("Config as a JSON object (may hold \"preset\"), or a JSON file"), "JSON" },
    { "generation", 'g', 0, G_OPTION_ARG_STRING, &generation, dw_cli_generation_help (), "G" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format, N_ ("csv or json (default json)"), "FMT" },
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db, N_ ("Store file (default: the user's store)"),
      "FILE" },
    { "rtol", 0, 0, G_OPTION_ARG_DOUBLE, &rtol,
      N_ ("Relative tolerance against logged values (default 2e-5)"), "X" },
    { "atol", 0, 0, G_OPTION_ARG_DOUBLE, &atol,
      N_ ("Absolute tolerance against logged values (default 1e-7)"), "X" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx
    = g_option_context_new (_ ("— recompute a stored run's correction metrics under a config"));
  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      dw_cli_error ("recompute", "%s", error->message);
      return 2;
    }
  if (argc == 1 && run_arg && !preset && !config_json)
    {
      /* the config the run's own log showed (driftwatch-cli runs) */
      g_autofree char *run_gen = NULL;
      if (dw_cli_run_stored_config (db, run_arg, &config_json, &run_gen) && config_json != NULL)
        g_printerr (_ ("recompute: using the config run %s printed\n"), run_arg);
    }
  if (argc != 1 || !run_arg || (!preset && !config_json))
    {
      dw_cli_error ("recompute", "%s",
                    _ ("usage: recompute --run R [--preset P | --config JSON] [--generation G] "
                       "[--format csv|json] [--db FILE]"));
      return 2;
    }
  if (format && strcmp (format, "csv") != 0 && strcmp (format, "json") != 0)
    {
      dw_cli_error ("recompute", _ ("unknown format '%s' (csv or json)"), format);
      return 2;
    }
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  if (!store)
    {
      dw_cli_error ("recompute", "%s", error->message);
      return 1;
    }
  g_autoptr (DwRunInfo) run = dw_store_find_run (store, run_arg, &error);
  if (!run)
    {
      dw_cli_error ("recompute", "%s", error->message);
      return 1;
    }
  DwGeneration gen = DW_GEN_VERL_LATEST;
  const char *gen_source = "given";
  if (!dw_cli_recompute_generation (store, run, generation, &gen, &gen_source))
    return 2;
  DwConfig config;
  dw_config_init (&config, gen);
  if (preset)
    {
      DwValue v = dw_value_str (preset);
      dw_config_set (&config, "preset", &v);
    }
  if (config_json && !dw_cli_recompute_merge_config (&config, gen, config_json))
    return 2;
  DwRecomputeOptions opt = { rtol, atol, 0 };
  g_autoptr (DwRecomputeResult) res
    = dw_recompute_run (store, run->id, &config, gen, &opt, NULL, &error);
  if (!res)
    {
      dw_cli_error ("recompute", "%s", error->message);
      return error->domain == DW_WHATIF_ERROR ? 2 : 1;
    }
  g_autoptr (GString) out
    = format && strcmp (format, "csv") == 0 ? render_csv (res) : render_json (res, run, gen_source);
  fputs (out->str, stdout);
  if (res->n_flagged > 0)
    g_printerr (_ ("recompute: %u of %u steps disagree with the values the run logged\n"),
                res->n_flagged, res->n_steps);
  /* verl/slime reject the config on every step: a config error */
  if (res->n_failed == res->n_steps)
    {
      dw_cli_error ("recompute", "%s: %s", dw_error_kind_name (res->steps[0].error.kind),
                    res->steps[0].error.message);
      return 2;
    }
  return 0;
}
