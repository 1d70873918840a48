/* dw-cli-check.c — `driftwatch-cli check --run R [--db FILE] [--format text|json]`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Runs the health rules over a stored run and prints the report: the verdict, the generation
 * the keys were read under, the canonical metrics evaluated and the events. Exit codes: 0
 * healthy, 1 a warning or critical rule fired (or the store could not be read), 2 usage errors
 * and unknown runs, 3 no mismatch metric to judge (nothing fired, but "healthy" would be a guess:
 * SFT logs, verl ≤ 0.5 without rollout correction, W&B panel columns ingested as one run).
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <inttypes.h>

#include "dw-canonical.h"
#include "dw-cli.h"
#include "dw-config-json.h"
#include "dw-health.h"
#include "dw-store-writer.h"

int dw_cli_check (int argc, char **argv);

/* The metrics judged, as titles: "K3 KL, PPL ratio, …". */
static char *
dw_cli_check_evaluated_titles (const DwHealthReport *report)
{
  g_autoptr (GString) titles = g_string_new (NULL);

  for (guint i = 0; i < report->evaluated->len; i++)
    {
      const DwCanonicalMetric *m = dw_canonical_lookup (report->evaluated->pdata[i]);

      g_string_append (titles, i ? ", " : "");
      g_string_append (titles,
                       m != NULL ? _ (m->title) : (const char *)report->evaluated->pdata[i]);
    }
  return g_string_free (g_steal_pointer (&titles), FALSE);
}

static void
dw_cli_check_append_text (GString *out, const DwRunInfo *run, const DwHealthReport *report,
                          DwHealthVerdict verdict, const char *given)
{
  g_autofree char *titles = dw_cli_check_evaluated_titles (report);

  switch (verdict)
    {
    case DW_HEALTH_VERDICT_HEALTHY:
      /* TRANSLATORS: run name, run id */
      g_string_append_printf (out, _ ("Run “%s” (id %" PRId64 "): healthy\n"), run->name, run->id);
      break;
    case DW_HEALTH_VERDICT_NO_MISMATCH_DATA:
      /* TRANSLATORS: run name, run id */
      g_string_append_printf (out, _ ("Run “%s” (id %" PRId64 "): no mismatch metrics to judge\n"),
                              run->name, run->id);
      break;
    case DW_HEALTH_VERDICT_UNHEALTHY:
    default:
      /* TRANSLATORS: run name, run id, number of critical events, number of warnings */
      g_string_append_printf (out, _ ("Run “%s” (id %" PRId64 "): %u critical, %u warning(s)\n"),
                              run->name, run->id, report->n_critical, report->n_warning);
      break;
    }
  if (given != NULL && !report->generation_inferred && g_strcmp0 (given, report->generation) != 0)
    /* TRANSLATORS: the release given with --generation, and the generation whose key meanings
     * it shares ("verl-0.6.1" logs its keys as "verl-0.7.0" does) */
    g_string_append_printf (out, _ ("  generation: %s (given; keys as in %s)\n"), given,
                            report->generation);
  else if (g_strcmp0 (report->generation_source, "given") == 0)
    /* TRANSLATORS: the generation whose key meanings were used, as given with --generation */
    g_string_append_printf (out, _ ("  generation: %s (given)\n"), report->generation);
  else if (g_strcmp0 (report->generation_source, "log") == 0)
    /* TRANSLATORS: the generation whose key meanings were used, printed by the run itself */
    g_string_append_printf (out, _ ("  generation: %s (printed by the run)\n"), report->generation);
  else if (g_strcmp0 (report->generation_source, "config") == 0)
    /* TRANSLATORS: the generation whose key meanings were used, read from the run's printed
     * config */
    g_string_append_printf (out, _ ("  generation: %s (from the run's printed config)\n"),
                            report->generation);
  else
    /* TRANSLATORS: the generation whose key meanings were used, read from the logged keys */
    g_string_append_printf (out, _ ("  generation: %s (inferred from the logged keys)\n"),
                            report->generation != NULL ? report->generation : _ ("unknown"));
  if (verdict == DW_HEALTH_VERDICT_UNHEALTHY)
    {
      g_autofree char *headline = dw_health_headline (report->events, report->shown_status);

      g_string_append_printf (out, "  %s\n", headline);
    }
  /* TRANSLATORS: list of canonical metric titles the rules evaluated */
  g_string_append_printf (out, _ ("  evaluated: %s\n"),
                          report->evaluated->len ? titles : _ ("none"));
  if (report->panel_columns->len > 0)
    /* TRANSLATORS: %u columns, an example column */
    g_string_append_printf (out,
                            _ ("  %u tag(s) look like W&B panel columns (“%s”): several runs "
                               "ingested as one; no rule can read them\n"),
                            report->panel_columns->len,
                            (const char *)report->panel_columns->pdata[0]);
  else if (verdict == DW_HEALTH_VERDICT_NO_MISMATCH_DATA)
    /* TRANSLATORS: number of logged tags */
    g_string_append_printf (out, _ ("  none of the %u logged tag(s) is a mismatch metric\n"),
                            report->n_tags);
  for (guint i = 0; i < report->events->len; i++)
    {
      g_string_append_c (out, '\n');
      dw_health_append_event_text (out, report->events->pdata[i]);
    }
}

int
dw_cli_check (int argc, char **argv)
{
  g_autofree char *run_arg = NULL, *db = NULL, *format = NULL, *generation = NULL;
  GOptionEntry entries[] = {
    { "run", 'r', 0, G_OPTION_ARG_STRING, &run_arg, N_ ("Run id or name"), "R" },
    { "db", 'd', 0, G_OPTION_ARG_FILENAME, &db, N_ ("Store file (default: the user's store)"),
      "FILE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format, N_ ("text (default) or json"), "F" },
    { "generation", 'g', 0, G_OPTION_ARG_STRING, &generation,
      N_ ("Release that wrote the run (verl-0.7.1, verl-0.9.0, slime, …; default: read from its "
          "keys)"),
      "G" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (_ ("— health report of a stored run"));
  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 1)
    {
      dw_cli_error ("check", "%s", error ? error->message : _ ("unexpected argument"));
      return 2;
    }
  gboolean json = FALSE;
  if (format && g_str_equal (format, "json"))
    json = TRUE;
  else if (format && !g_str_equal (format, "text"))
    {
      dw_cli_error ("check", _ ("unknown format '%s' (text or json)"), format);
      return 2;
    }
  if (generation != NULL && dw_canonical_generation (generation) == NULL)
    {
      /* TRANSLATORS: the generation given, then the list of known ones */
      g_autofree char *known = g_strjoinv (", ", (char **)dw_canonical_generations (NULL));
      dw_cli_error ("check", _ ("unknown generation '%s' (one of: %s, verl)"), generation, known);
      return 2;
    }
  if (run_arg == NULL)
    {
      dw_cli_error ("check",
                    _ ("usage: check --run R [--db FILE] [--format text|json] [--generation G]"));
      return 2;
    }
  g_autofree char *path = db ? g_strdup (db) : dw_cli_default_db_path ();
  /* read-only: checking never creates, migrates or writes a store */
  g_autoptr (DwStore) store = dw_store_open_read_only (path, &error);
  if (store == NULL)
    {
      dw_cli_error ("check", "%s", error->message);
      return 1;
    }
  g_autoptr (DwRunInfo) run = dw_store_find_run (store, run_arg, &error);
  if (run == NULL)
    {
      dw_cli_error ("check", "%s", error->message);
      return g_error_matches (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND) ? 2 : 1;
    }
  g_autoptr (DwHealthReport) report = dw_health_report_run (store, run->id, generation, &error);
  if (report == NULL)
    {
      dw_cli_error ("check", "%s", error->message);
      return 1;
    }
  DwHealthVerdict verdict = dw_health_report_verdict (report);
  g_autoptr (GString) out = g_string_new (NULL);
  if (json)
    {
      g_string_append_printf (out, "{\"run_id\": %" G_GINT64_FORMAT ", \"run\": ", run->id);
      dw_json_append_string (out, run->name);
      g_string_append (out, ", \"report\": ");
      dw_health_append_report_json (out, report);
      g_string_append (out, "}\n");
    }
  else
    dw_cli_check_append_text (out, run, report, verdict, generation);
  fputs (out->str, stdout);
  switch (verdict)
    {
    case DW_HEALTH_VERDICT_HEALTHY:
      return 0;
    case DW_HEALTH_VERDICT_NO_MISMATCH_DATA:
      return 3;
    case DW_HEALTH_VERDICT_UNHEALTHY:
    default:
      return 1;
    }
}
