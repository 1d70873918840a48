/* dw-cli-check.c — `driftwatch-cli check --run R [--db FILE] [--format text|json]`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Runs the health rules over a stored run and prints the report. Exit codes: 0 healthy, 1 a
 * warning or critical rule fired (or the store could not be read), 2 usage errors and unknown
 * runs.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <inttypes.h>

#include "dw-cli.h"
#include "dw-config-json.h"
#include "dw-health.h"
#include "dw-store-private.h"

int dw_cli_check (int argc, char **argv);

int
dw_cli_check (int argc, char **argv)
{
  g_autofree char *run_arg = NULL, *db = NULL, *format = NULL;
  GOptionEntry entries[] = {
    { "run", 'r', 0, G_OPTION_ARG_STRING, &run_arg, N_ ("Run id or name"), "R" },
    { "db", 'd', 0, G_OPTION_ARG_FILENAME, &db, N_ ("Store file (default: the user's store)"),
      "FILE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format, N_ ("text (default) or json"), "F" },
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
  if (run_arg == NULL)
    {
      dw_cli_error ("check", _ ("usage: check --run R [--db FILE] [--format text|json]"));
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
  g_autoptr (GPtrArray) events = dw_health_check_run (store, run->id, &error);
  if (events == NULL)
    {
      dw_cli_error ("check", "%s", error->message);
      return 1;
    }
  guint n_warn = 0, n_crit = 0;
  for (guint i = 0; i < events->len; i++)
    {
      DwHealthSeverity s = ((DwHealthEvent *)events->pdata[i])->severity;
      n_warn += s == DW_HEALTH_WARNING;
      n_crit += s == DW_HEALTH_CRITICAL;
    }
  g_autoptr (GString) out = g_string_new (NULL);
  if (json)
    {
      g_string_append_printf (out, "{\"run_id\": %" G_GINT64_FORMAT ", \"run\": ", run->id);
      dw_json_append_string (out, run->name);
      g_string_append (out, ", \"report\": ");
      dw_health_append_report_json (out, events);
      g_string_append (out, "}\n");
    }
  else
    {
      if (n_warn + n_crit == 0)
        /* TRANSLATORS: run name, run id */
        g_string_append_printf (out, _ ("Run “%s” (id %" PRId64 "): healthy\n"), run->name,
                                run->id);
      else
        /* TRANSLATORS: run name, run id, number of critical events, number of warnings */
        g_string_append_printf (out,
                                _ ("Run “%s” (id %" PRId64 "): %u critical, %u "
                                   "warning(s)\n"),
                                run->name, run->id, n_crit, n_warn);
      for (guint i = 0; i < events->len; i++)
        {
          g_string_append_c (out, '\n');
          dw_health_append_event_text (out, events->pdata[i]);
        }
    }
  fputs (out->str, stdout);
  return n_warn + n_crit > 0 ? 1 : 0;
}
