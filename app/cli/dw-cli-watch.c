/* dw-cli-watch.c — `driftwatch-cli watch DIR… [--db FILE] [--json]`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Ingests what the folders (or files) already hold, then follows them with a DwFollower (GIO
 * file monitors, no polling). After each coalesced batch of ingests the health rules are fed
 * the new points of every run that changed (one DwHealthMonitor per run) and each event that
 * fires for the first time is printed: a text block, or with --json one JSON object per line
 * on stdout. Ingest problems go to stderr with the file and the place. SIGINT / SIGTERM stop
 * following between two files (all ingested data is committed; files still queued are resumed
 * by the next run from their stored offsets), live runs are marked finished, exit 0.
 * With --exec CMD and/or --webhook URL (each may be repeated) every printed event is also
 * delivered by the alerts worker (core/alerts): CMD run by /bin/sh with the event's JSON line on
 * stdin, URL sent a Slack-compatible {"text": …} POST, retried with backoff; neither ever
 * blocks ingest. On exit, queued alerts get a few seconds to go out.
 * Exit codes: 0 stopped by a signal, 1 a path cannot be followed or the store cannot be opened,
 * 2 usage errors.
 */
#include "config.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <signal.h>
#include <stdio.h>
#include <inttypes.h>

#include "dw-alerts.h"
#include "dw-cli.h"
#include "dw-config-json.h"
#include "dw-follower.h"
#include "dw-health.h"
#include "dw-store-writer.h"

int dw_cli_watch (int argc, char **argv);

typedef struct
{
  DwStore *store;
  DwFollower *follower;
  GMainLoop *loop;
  gboolean json;
  GHashTable *monitors; /* run id (gint64*) → DwHealthMonitor */
  GHashTable *dirty;    /* run ids (gint64*) changed since the last health poll */
  GHashTable *live;     /* run ids marked live by this watch */
  int n_paths;
  gboolean announced; /* the initial ingest is done and said so */
  gboolean signal_received;
  DwAlerts *alerts; /* NULL without --exec / --webhook */
} Watch;

#define ALERTS_DRAIN_MS 5000

static void
watch_clear (Watch *w)
{
  /* alerts still queued get a few seconds to go out */
  if (w->alerts != NULL)
    {
      guint64 dropped = dw_alerts_get_n_dropped (w->alerts); /* only posting drops */
      if (dropped > 0)
        dw_cli_error ("watch",
                      _ ("%" PRIu64 " alert(s) were dropped: more events came than "
                         "--exec/--webhook could deliver"),
                      (uint64_t)dropped);
      dw_alerts_free (w->alerts, ALERTS_DRAIN_MS);
    }
  w->alerts = NULL;
  g_clear_object (&w->follower);
  g_clear_object (&w->store);
  g_hash_table_unref (w->monitors);
  g_hash_table_unref (w->dirty);
  g_hash_table_unref (w->live);
  g_main_loop_unref (w->loop);
}

static void
print_line (FILE *out, GString *text)
{
  fputs (text->str, out);
  fflush (out);
}

static void
set_status (Watch *w, gint64 run_id, DwRunStatus status)
{
  g_autoptr (GError) error = NULL;

  if (!dw_store_begin (w->store, &error)
      || !dw_store_set_run_status (w->store, run_id, status, &error)
      || !dw_store_commit (w->store, &error))
    {
      if (dw_store_in_transaction (w->store))
        dw_store_rollback (w->store);
      dw_cli_error ("watch", "%s", error->message);
    }
}

static void
event_json (GString *out, const DwRunInfo *run, const DwHealthEvent *event)
{
  g_string_append_printf (out, "{\"run_id\": %" G_GINT64_FORMAT ", \"run\": ", run->id);
  dw_json_append_string (out, run->name);
  g_string_append (out, ", \"event\": ");
  dw_health_append_event_json (out, event);
  g_string_append (out, "}");
}

static void
event_text (GString *out, const DwRunInfo *run, const DwHealthEvent *event)
{
  /* TRANSLATORS: run name, run id: heading of a health event printed by `watch` */
  g_string_append_printf (out, _ ("Run “%s” (id %" PRId64 "):\n"), run->name, run->id);
  dw_health_append_event_text (out, event);
}

static void
print_event (Watch *w, const DwRunInfo *run, const DwHealthEvent *event)
{
  g_autoptr (GString) out = g_string_new (NULL);

  if (w->json)
    {
      event_json (out, run, event);
      g_string_append_c (out, '\n');
    }
  else
    event_text (out, run, event);
  print_line (stdout, out);
  if (w->alerts != NULL)
    {
      g_autoptr (GString) json = g_string_new (NULL);
      g_autoptr (GString) text = g_string_new ("Driftwatch: ");
      event_json (json, run, event);
      event_text (text, run, event);
      dw_alerts_post (w->alerts, json->str, text->str);
    }
}

static void
on_alert_error_cb (const char *message, gpointer user_data)
{
  (void)user_data;
  dw_cli_error ("watch", "%s", message); /* from the alerts worker: one fprintf, thread-safe */
}

static void
poll_run (Watch *w, gint64 run_id)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwRunInfo) run = NULL;
  g_autoptr (GPtrArray) fired = NULL;
  DwHealthMonitor *monitor = g_hash_table_lookup (w->monitors, &run_id);

  if (monitor == NULL)
    {
      gint64 *key = g_memdup2 (&run_id, sizeof run_id);
      monitor = dw_health_monitor_new ();
      g_hash_table_insert (w->monitors, key, monitor);
    }
  run = dw_store_get_run (w->store, run_id, &error);
  if (run != NULL)
    fired = dw_health_monitor_poll_run (monitor, w->store, run_id, &error);
  if (fired == NULL)
    {
      dw_cli_error ("watch", "%s", error->message);
      return;
    }
  for (guint i = 0; i < fired->len; i++)
    {
      const DwHealthEvent *e = fired->pdata[i];
      print_event (w, run, e);
      if (e->severity == DW_HEALTH_CRITICAL && run->status != DW_RUN_STATUS_COLLAPSED)
        {
          set_status (w, run_id, DW_RUN_STATUS_COLLAPSED);
          run->status = DW_RUN_STATUS_COLLAPSED;
          g_hash_table_remove (w->live, &run_id);
        }
    }
}

static void
on_ingested (DwFollower *follower, gint64 run_id, gint64 n_points, const char *path, Watch *w)
{
  if (!g_hash_table_contains (w->dirty, &run_id))
    g_hash_table_add (w->dirty, g_memdup2 (&run_id, sizeof run_id));
}

/* Says once that what was there is ingested and following has begun. */
static void
announce_if_idle (Watch *w)
{
  if (w->announced || dw_follower_get_n_pending (w->follower) > 0)
    return;
  w->announced = TRUE;
  /* TRANSLATORS: status line on stderr once what was there is ingested; %d is the number of
   * folders/files followed */
  fprintf (stderr, _ ("driftwatch-cli watch: following %d path(s); Ctrl+C stops\n"), w->n_paths);
  fflush (stderr);
}

static void
on_flushed (DwFollower *follower, Watch *w)
{
  g_autofree gint64 **ids = NULL;
  guint n = 0;

  ids = (gint64 **)g_hash_table_get_keys_as_array (w->dirty, &n);
  for (guint i = 0; i < n; i++)
    {
      gint64 id = *ids[i];
      g_autoptr (DwRunInfo) run = dw_store_get_run (w->store, id, NULL);

      if (run != NULL && run->status == DW_RUN_STATUS_FINISHED
          && !g_hash_table_contains (w->live, &id))
        {
          set_status (w, id, DW_RUN_STATUS_LIVE);
          g_hash_table_add (w->live, g_memdup2 (&id, sizeof id));
        }
      poll_run (w, id);
    }
  g_hash_table_remove_all (w->dirty);
  announce_if_idle (w);
}

/* A file that is no log, said once on stderr (as ingest says it). */
static void
on_skipped (DwFollower *follower, const char *path, const char *reason, Watch *w)
{
  g_printerr (_ ("%s: not a recognised log or batch format (%s): skipped\n"), path, reason);
}

static void
on_error (DwFollower *follower, GError *error, const char *path, Watch *w)
{
  dw_cli_error ("watch", "%s", error->message);
}

static gboolean
on_signal (gpointer user_data)
{
  Watch *w = user_data;

  w->signal_received = TRUE;
  g_main_loop_quit (w->loop);
  return G_SOURCE_CONTINUE; /* removed when watch returns */
}

int
dw_cli_watch (int argc, char **argv)
{
  g_autofree char *db = NULL;
  gboolean json = FALSE;
  gint64 chunk_bytes = 0;
  g_auto (GStrv) execs = NULL, webhooks = NULL;
  GOptionEntry entries[] = {
    { "exec", 'e', 0, G_OPTION_ARG_STRING_ARRAY, &execs,
      N_ ("Run CMD (with /bin/sh) for each health event, the event's JSON on stdin"), "CMD" },
    { "webhook", 'w', 0, G_OPTION_ARG_STRING_ARRAY, &webhooks,
      N_ ("POST each health event to URL as Slack-compatible JSON {\"text\": …}"), "URL" },
    { "db", 'd', 0, G_OPTION_ARG_FILENAME, &db, N_ ("Store file (default: the user's store)"),
      "FILE" },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, N_ ("Print health events as JSON, one per line"),
      NULL },
    { "chunk-bytes", 0, 0, G_OPTION_ARG_INT64, &chunk_bytes,
      N_ ("Bytes of a log read and committed per transaction (default 16 MiB)"), "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx
    = g_option_context_new (_ ("DIR… — ingest run folders and follow them live"));
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  Watch w = { 0 };
  guint sigint_id, sigterm_id;
  GHashTableIter it;
  gpointer key;

  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      dw_cli_error ("watch", "%s", error->message);
      return 2;
    }
  if (argc < 2)
    {
      dw_cli_error ("watch",
                    _ ("usage: watch DIR… [--db FILE] [--json] [--exec CMD] [--webhook URL]"));
      return 2;
    }
  if (execs != NULL || webhooks != NULL)
    {
      w.alerts = dw_alerts_new (DW_ALERTS_DEFAULT_QUEUE);
      dw_alerts_set_error_func (w.alerts, on_alert_error_cb, NULL);
      for (guint i = 0; execs != NULL && execs[i] != NULL; i++)
        dw_alerts_add_exec (w.alerts, execs[i]);
      for (guint i = 0; webhooks != NULL && webhooks[i] != NULL; i++)
        if (!dw_alerts_add_webhook (w.alerts, webhooks[i], &error))
          {
            dw_cli_error ("watch", "%s", error->message);
            dw_alerts_free (w.alerts, 0);
            return 2;
          }
    }
  path = db ? g_strdup (db) : dw_cli_default_db_path ();
  if (db == NULL)
    {
      g_autofree char *dir = g_path_get_dirname (path);
      g_mkdir_with_parents (dir, 0700);
    }
  w.store = dw_store_open (path, &error);
  if (w.store == NULL)
    {
      dw_cli_error ("watch", "%s", error->message);
      dw_alerts_free (w.alerts, 0);
      return 1;
    }
  w.json = json;
  w.monitors = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                      (GDestroyNotify)dw_health_monitor_free);
  w.dirty = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  w.live = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  w.loop = g_main_loop_new (NULL, FALSE);
  w.follower = dw_follower_new (w.store);
  if (chunk_bytes > 0)
    dw_follower_set_chunk_size (w.follower, (gsize)chunk_bytes);
  g_signal_connect (w.follower, "ingested", G_CALLBACK (on_ingested), &w);
  g_signal_connect (w.follower, "flushed", G_CALLBACK (on_flushed), &w);
  g_signal_connect (w.follower, "error", G_CALLBACK (on_error), &w);
  g_signal_connect (w.follower, "skipped", G_CALLBACK (on_skipped), &w);

  for (int i = 1; i < argc; i++)
    if (!dw_follower_add_path (w.follower, argv[i], &error))
      {
        dw_cli_error ("watch", "%s", error->message);
        watch_clear (&w);
        return 1;
      }

  sigint_id = g_unix_signal_add (SIGINT, on_signal, &w);
  sigterm_id = g_unix_signal_add (SIGTERM, on_signal, &w);
  /* What is already there is ingested from the loop, in slices (Ctrl+C works meanwhile), then
   * followed. */
  w.n_paths = argc - 1;
  announce_if_idle (&w);
  g_main_loop_run (w.loop);

  /* Stopped: everything ingested so far is committed (chunk by chunk); files still queued are
   * picked up by the next watch or ingest from their stored offsets. Runs this watch made live
   * are marked finished. */
  dw_follower_stop (w.follower);
  g_hash_table_iter_init (&it, w.live);
  while (g_hash_table_iter_next (&it, &key, NULL))
    set_status (&w, *(gint64 *)key, DW_RUN_STATUS_FINISHED);

  g_source_remove (sigint_id);
  g_source_remove (sigterm_id);
  watch_clear (&w);
  return 0;
}
