/* dw-cli-demo.c — `driftwatch-cli demo OUTDIR [--scenario healthy|collapse] [--steps N]
 *                  [--ingest [--db FILE]]`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <stdio.h>

#include <glib/gi18n.h>
#include <inttypes.h>

#include "dw-cli.h"
#include "dw-demo.h"
#include "dw-ingester.h"

int dw_cli_demo (int argc, char **argv);

int
dw_cli_demo (int argc, char **argv)
{
  g_autofree char *scenario_name = NULL;
  gint steps = DW_DEMO_DEFAULT_STEPS, interval_ms = 0;
  gint64 seed = 1;
  gboolean ingest = FALSE;
  g_autofree char *db = NULL;
  GOptionEntry entries[] = {
    { "ingest", 0, 0, G_OPTION_ARG_NONE, &ingest,
      N_ ("Also ingest the written run into the store (with --interval: as it grows)"), NULL },
    { "db", 'd', 0, G_OPTION_ARG_FILENAME, &db,
      N_ ("Store file for --ingest (default: the user's store)"), "FILE" },
    { "scenario", 0, 0, G_OPTION_ARG_STRING, &scenario_name,
      N_ ("healthy or collapse (default healthy)"), "NAME" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &steps, N_ ("Training steps to write (default 200)"), "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, N_ ("Random seed (default 1)"), "SEED" },
    { "interval", 0, 0, G_OPTION_ARG_INT, &interval_ms,
      N_ ("Write one step every MS milliseconds, like a live run (default 0: all at once)"), "MS" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx
    = g_option_context_new (_ ("OUTDIR — write a demo run folder (logs and batches)"));
  g_autoptr (GError) error = NULL;
  g_autoptr (DwDemo) demo = NULL;
  DwDemoScenario scenario = DW_DEMO_HEALTHY;
  gboolean done = FALSE;
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwIngester) ingester = NULL;

  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 2)
    {
      dw_cli_error ("demo", "%s", error ? error->message : _ ("expected one OUTDIR"));
      return 2;
    }
  if (scenario_name != NULL && !dw_demo_scenario_from_name (scenario_name, &scenario))
    {
      dw_cli_error ("demo", _ ("unknown scenario “%s” (healthy or collapse)"), scenario_name);
      return 2;
    }
  if (steps < 1 || steps > 1000000 || interval_ms < 0)
    {
      dw_cli_error ("demo", _ ("--steps must be between 1 and 1000000, --interval ≥ 0"));
      return 2;
    }
  demo = dw_demo_new (argv[1], scenario, (guint)steps, (guint64)seed, &error);
  if (demo == NULL)
    {
      dw_cli_error ("demo", "%s", error->message);
      return 1;
    }
  if (ingest)
    {
      g_autofree char *path = db ? g_strdup (db) : dw_cli_default_db_path ();
      store = dw_store_open (path, &error);
      if (store == NULL)
        {
          dw_cli_error ("demo", "%s", error->message);
          return 1;
        }
      ingester = dw_ingester_new (store);
    }
  while (!done)
    {
      if (!dw_demo_write_step (demo, &done, &error))
        {
          dw_cli_error ("demo", "%s", error->message);
          return 1;
        }
      /* live: ingest after every step; all at once: after the last */
      if (ingester != NULL && (interval_ms > 0 || done)
          && !dw_ingester_ingest_path (ingester, argv[1], NULL, &error))
        {
          dw_cli_error ("demo", "%s", error->message);
          return 1;
        }
      if (interval_ms > 0 && !done)
        g_usleep ((gulong)interval_ms * 1000);
    }
  if (scenario == DW_DEMO_COLLAPSE)
    printf (_ ("%s: %d steps, collapse at step %" PRId64 "\n"), argv[1], steps,
            dw_demo_collapse_step ((guint)steps));
  else
    printf (_ ("%s: %d steps, healthy\n"), argv[1], steps);
  return 0;
}
