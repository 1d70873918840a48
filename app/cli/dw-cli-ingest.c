/* dw-cli-ingest.c — `driftwatch-cli ingest PATH... [--db FILE]`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Ingests files and run folders into the store (dw-ingester.h: formats by content, runs by
 * folder, resumable, never duplicating). Bad records are reported on stderr with file and byte
 * offset, skipped, and the rest is kept. Exit codes: 0 everything read, 1 some input was bad or
 * missing, a PATH held nothing recognised, or the store failed (what could be read is stored), 2
 * usage errors.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <inttypes.h>

#include "dw-cli.h"
#include "dw-ingester.h"
#include "dw-store-writer.h"

int dw_cli_ingest (int argc, char **argv);

int
dw_cli_ingest (int argc, char **argv)
{
  g_autofree char *db = NULL;
  g_autofree char *name = NULL;
  gboolean quiet = FALSE;
  gint64 chunk_bytes = 0;
  g_autofree char *keep_tokens = NULL;
  gint64 keep_bytes = DW_STORE_DEFAULT_KEEP_TOKENS;
  GOptionEntry entries[] = {
    { "name", 'n', 0, G_OPTION_ARG_STRING, &name,
      N_ ("Run name: every file given goes to this one run"), "NAME" },
    { "db", 'd', 0, G_OPTION_ARG_FILENAME, &db, N_ ("Store file (default: the user's store)"),
      "FILE" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, N_ ("Print only problems"), NULL },
    { "chunk-bytes", 0, 0, G_OPTION_ARG_INT64, &chunk_bytes,
      N_ ("Bytes of a log read and committed per transaction (default 16 MiB)"), "N" },
    { "keep-tokens", 0, 0, G_OPTION_ARG_STRING, &keep_tokens,
      N_ ("Raw per-token data copied into the store per run (default 64M; “all”: no limit); "
          "beyond it batches are read from their files when needed"),
      "SIZE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx
    = g_option_context_new (_ ("PATH… — ingest log files, rollout batches and run folders"));
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwIngester) ingester = NULL;
  g_autofree char *path = NULL;
  DwIngestReport report;
  int rc = 0;

  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc < 2)
    {
      dw_cli_error ("ingest", "%s", error ? error->message : _ ("usage: ingest PATH… [--db FILE]"));
      return 2;
    }
  if (keep_tokens != NULL && !dw_store_parse_size (keep_tokens, &keep_bytes, &error))
    {
      dw_cli_error ("ingest", "--keep-tokens: %s", error->message);
      return 2;
    }
  path = db ? g_strdup (db) : dw_cli_default_db_path ();
  store = dw_store_open (path, &error);
  if (store == NULL)
    {
      dw_cli_error ("ingest", "%s", error->message);
      return 1;
    }
  dw_store_set_keep_tokens (store, keep_bytes);
  ingester = dw_ingester_new (store);
  dw_ingest_report_init (&report);
  if (name != NULL)
    dw_ingester_set_run_name (ingester, name);
  if (chunk_bytes > 0)
    dw_ingester_set_chunk_size (ingester, (gsize)chunk_bytes);
  for (int i = 1; i < argc; i++)
    {
      guint files_before = report.n_files, skipped_before = report.n_skipped;
      guint notes_before = report.notes->len;

      if (!dw_ingester_ingest_path (ingester, argv[i], &report, &error))
        {
          dw_cli_error ("ingest", "%s", error->message);
          rc = 1;
          /* a missing path does not stop the others; a store failure does */
          if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
            break;
          g_clear_error (&error);
          continue;
        }
      /* A path that held files but nothing recognised is bad input, whether it names the file
       * or a folder holding it: exit 1, each file with the reason it was skipped (also with
       * --quiet). */
      if (report.n_files == files_before && report.n_skipped > skipped_before)
        {
          dw_cli_error ("ingest", _ ("%s: nothing recognised"), argv[i]);
          for (guint k = notes_before; k < report.notes->len; k++)
            if (quiet)
              fprintf (stderr, "%s\n", (const char *)report.notes->pdata[k]);
          rc = 1;
        }
    }

  for (guint i = 0; i < report.diagnostics->len; i++)
    fprintf (stderr, "%s\n", (const char *)report.diagnostics->pdata[i]);
  if (report.diagnostics->len > 0)
    rc = 1;
  if (!quiet)
    {
      for (guint i = 0; i < report.notes->len; i++)
        fprintf (stderr, "%s\n", (const char *)report.notes->pdata[i]);
      printf (_ ("%u files (%u with new data): %" PRIu64 " points, %" PRIu64 " batches (%" PRIu64
                 " tokens), %u bad records skipped\n"),
              report.n_files, report.n_files_read, report.n_points, report.n_batches,
              report.n_tokens, report.diagnostics->len);
      for (guint i = 0; i < report.run_ids->len; i++)
        {
          g_autoptr (DwRunInfo) run
            = dw_store_get_run (store, g_array_index (report.run_ids, gint64, i), NULL);
          if (run == NULL)
            continue;
          if (run->first_step < 0 || run->last_step < run->first_step)
            printf (_ ("run %" PRId64 " “%s” (%s): no metric points yet, %" PRId64 " batches\n"),
                    run->id, run->name, run->framework, run->n_batches);
          else
            printf (
              _ ("run %" PRId64 " “%s” (%s): steps %" PRId64 "–%" PRId64 ", %" PRId64 " batches\n"),
              run->id, run->name, run->framework, run->first_step, run->last_step, run->n_batches);
        }
    }
  dw_ingest_report_clear (&report);
  return rc;
}
