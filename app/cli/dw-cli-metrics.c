/* dw-cli-metrics.c — `driftwatch-cli metrics BATCH`: rollout correction of one batch as JSON
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <gio/gio.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dw-cli.h"
#include "dw-config-export.h"
#include "dw-config-json.h"
#include "dw-correction.h"

#include "dw-batch-reader.h"

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int dw_cli_metrics (int argc, char **argv);

int
dw_cli_metrics (int argc, char **argv)
{
  g_autofree char *generation = NULL, *preset = NULL, *config_json = NULL;
  g_auto (GStrv) sets = NULL;
  gboolean arrays = FALSE;
  int repeat = 0;
  GOptionEntry entries[]
    = { { "generation", 'g', 0, G_OPTION_ARG_STRING, &generation, dw_cli_generation_help (), "G" },
        { "preset", 'p', 0, G_OPTION_ARG_STRING, &preset, N_ ("Preset name"), "NAME" },
        { "config", 'c', 0, G_OPTION_ARG_STRING, &config_json,
          N_ ("Config as a JSON object, or a JSON file"), "JSON" },
        { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, N_ ("Override one config key"),
          "KEY=VALUE" },
        { "arrays", 0, 0, G_OPTION_ARG_NONE, &arrays,
          N_ ("Also print weights and the modified mask"), NULL },
        { "repeat", 0, 0, G_OPTION_ARG_INT, &repeat, N_ ("Run N times and report the median time"),
          "N" },
        { NULL } };
  g_autoptr (GOptionContext) ctx = g_option_context_new (_ ("BATCH — rollout correction metrics"));
  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      dw_cli_error ("metrics", "%s", error->message);
      return 2;
    }
  if (argc != 2 || (!preset && !config_json))
    {
      dw_cli_error ("metrics", "%s",
                    _ ("usage: metrics BATCH [--generation G] (--preset NAME | --config JSON) "
                       "[--set KEY=VALUE]... [--arrays] [--repeat N]"));
      return 2;
    }
  DwGeneration gen = DW_GEN_VERL_LATEST;
  if (!dw_cli_parse_generation ("metrics", generation, &gen))
    return 2;
  DwConfig config;
  dw_config_init (&config, gen);
  if (preset)
    {
      g_autoptr (GString) pj = g_string_new ("{\"preset\": ");
      dw_json_append_string (pj, preset);
      g_string_append_c (pj, '}');
      if (!dw_config_merge_json (&config, pj->str, &error))
        {
          dw_cli_error ("metrics", "%s", error->message);
          return 2;
        }
    }
  if (config_json && !dw_config_merge_json_arg (&config, config_json, &error))
    {
      dw_cli_error ("metrics", "%s", error->message);
      return 2;
    }
  for (char **s = sets; s && *s; s++)
    {
      g_autofree char *key = g_strndup (*s, strcspn (*s, "="));

      /* verl's Hydra refuses a key its config does not have ("Key '…' is not in struct");
       * ignoring it (a typo such as rollout_is_treshold) computed something else silently */
      if (strchr (*s, '=') != NULL && *key != '\0' && strcmp (key, "preset") != 0
          && !dw_export_key_accepted (gen, key))
        {
          g_autofree char *accepted = g_strjoinv (", ", (char **)dw_export_accepted_keys (gen));
          dw_cli_error ("metrics",
                        _ ("--set %s: %s has no config key '%s' (Key '%s' is not in struct); "
                           "accepted: %s"),
                        *s, dw_generation_name (gen), key, key, accepted);
          return 2;
        }
      if (!dw_config_set_assignment (&config, *s, &error))
        {
          dw_cli_error ("metrics", "%s", error->message);
          return 2;
        }
    }
  DwBatch *batch = dw_batch_read_file (argv[1], &error);
  if (!batch)
    {
      dw_cli_error ("metrics", "%s", error->message);
      return 1;
    }
  if (batch->flags & DW_BATCH_LOSSY_LOGPROBS)
    dw_cli_error ("metrics",
                  _ ("%s: log-probs are stored as %s: thresholds decided on rounded values may "
                     "differ from the trainer's float32"),
                  argv[1], dw_dtype_name (batch->source_lp_dtype));
  DwCorrectionResult res;
  DwCorrectionError cerr;
  /* the batch outlives the result: an unchanged mask is not copied (DW_ENTRY_MASK_SHARED) */
  gboolean ok = dw_correction_run_entry (batch, &config, DW_ENTRY_MASK_SHARED, &res, &cerr);
  double median = 0;
  if (ok && repeat > 0)
    {
      g_autofree double *t = g_new (double, repeat);
      for (int i = 0; i < repeat; i++)
        {
          DwCorrectionResult r2;
          gint64 t0 = g_get_monotonic_time ();
          dw_correction_run_entry (batch, &config, DW_ENTRY_MASK_SHARED, &r2, &cerr);
          t[i] = (g_get_monotonic_time () - t0) / 1e3;
          dw_correction_result_clear (&r2);
        }
      qsort (t, (size_t)repeat, sizeof (double), cmp_double);
      median = t[repeat / 2];
    }
  g_autoptr (GString) out = g_string_new ("{\"generation\": ");
  dw_json_append_string (out, dw_generation_name (gen));
  g_string_append (out, ", \"config\": ");
  dw_json_append_config (out, &config);
  g_string_append (out, ", \"metrics\": ");
  if (ok)
    dw_json_append_metrics (out, &res);
  else
    g_string_append (out, "{}");
  g_string_append (out, ", \"error\": ");
  dw_json_append_error (out, ok ? NULL : &cerr);
  if (arrays && ok)
    {
      g_string_append (out, ", \"arrays\": {\"rollout_is_weights\": ");
      if (res.weights)
        dw_json_append_array (out, res.weights, res.weights_dtype, res.rows, res.cols);
      else
        g_string_append (out, "null");
      g_string_append (out, ", \"modified_response_mask\": ");
      dw_json_append_array (out, res.mask, res.mask_dtype, res.rows, res.cols);
      g_string_append_c (out, '}');
    }
  if (repeat > 0 && ok)
    {
      g_string_append (out, ", \"timing\": {\"median_ms\": ");
      dw_json_append_number (out, median);
      g_string_append (out, "}");
    }
  g_string_append (out, "}\n");
  fputs (out->str, stdout);
  if (ok)
    dw_correction_result_clear (&res);
  dw_batch_free (batch);
  return ok ? 0 : 2;
}
