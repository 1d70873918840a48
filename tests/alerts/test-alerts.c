/* test-alerts.c — health events to a command and to an HTTP webhook (core/alerts), and
 * `driftwatch-cli watch --exec CMD --webhook URL`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The webhook end is a small HTTP server started by the test on 127.0.0.1 (an ephemeral port),
 * answering each request with the next status of a script; every loop is bounded by a
 * deadline. Nothing leaves the machine.
 */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <locale.h>
#include <signal.h>
#include <string.h>

#include "dw-alerts.h"
#include "dw-demo.h"
#include "dw-test-cli.h"

/* ---- test server -------------------------------------------------------------------------- */

typedef struct
{
  GSocket *listener;
  guint16 port;
  GThread *thread;
  GMutex lock;
  GPtrArray *requests; /* char*: request line, headers and body as received */
  GArray *script;      /* guint statuses; after the last: its last entry again; 0: never answer */
  gboolean stop;
} Server;

static char *
read_request (GSocket *s)
{
  GString *r = g_string_new (NULL);
  char buf[4096];
  gssize content_length = -1;
  const char *end_of_headers = NULL;
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

  g_socket_set_timeout (s, 5);
  while (g_get_monotonic_time () < deadline)
    {
      gssize n = g_socket_receive (s, buf, sizeof buf, NULL, NULL);
      if (n <= 0)
        break;
      g_string_append_len (r, buf, n);
      end_of_headers = strstr (r->str, "\r\n\r\n");
      if (end_of_headers != NULL)
        {
          const char *cl = strstr (r->str, "Content-Length: ");
          content_length = cl ? (gssize)g_ascii_strtoll (cl + 16, NULL, 10) : 0;
          if ((gssize)(r->len - (gsize)(end_of_headers + 4 - r->str)) >= content_length)
            break;
        }
    }
  return g_string_free (r, FALSE);
}

static gpointer
server_worker (gpointer data)
{
  Server *sv = data;
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GSocket) c = NULL;
      guint status, n;

      g_mutex_lock (&sv->lock);
      if (sv->stop)
        {
          g_mutex_unlock (&sv->lock);
          break;
        }
      g_mutex_unlock (&sv->lock);
      /* wake up every 100 ms to look at sv->stop */
      if (!g_socket_condition_timed_wait (sv->listener, G_IO_IN, 100000, NULL, NULL))
        continue;
      c = g_socket_accept (sv->listener, NULL, &error);
      if (c == NULL)
        continue;
      g_socket_set_blocking (c, TRUE);
      char *req = read_request (c);
      g_mutex_lock (&sv->lock);
      n = sv->requests->len;
      g_ptr_array_add (sv->requests, req);
      status = g_array_index (sv->script, guint, MIN (n, sv->script->len - 1));
      g_mutex_unlock (&sv->lock);
      if (status == 0)
        {
          g_usleep (3 * G_USEC_PER_SEC); /* a hung endpoint: holds the connection, no answer */
          continue;
        }
      g_autofree char *answer
        = g_strdup_printf ("HTTP/1.1 %u Status\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
                           "Connection: close\r\n\r\nok",
                           status);
      g_socket_send (c, answer, strlen (answer), NULL, NULL);
      g_socket_close (c, NULL);
    }
  return NULL;
}

static void
server_start (Server *sv, const guint *statuses, guint n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) addr = g_inet_socket_address_new (lo, 0);
  g_autoptr (GSocketAddress) bound = NULL;

  memset (sv, 0, sizeof *sv);
  g_mutex_init (&sv->lock);
  sv->requests = g_ptr_array_new_with_free_func (g_free);
  sv->script = g_array_new (FALSE, FALSE, sizeof (guint));
  g_array_append_vals (sv->script, statuses, n);
  sv->listener
    = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_assert_true (g_socket_bind (sv->listener, addr, TRUE, &error));
  g_assert_true (g_socket_listen (sv->listener, &error));
  g_socket_set_timeout (sv->listener, 0);
  g_socket_set_blocking (sv->listener, TRUE);
  bound = g_socket_get_local_address (sv->listener, &error);
  sv->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  sv->thread = g_thread_new ("test-http", server_worker, sv);
}

static guint
server_n_requests (Server *sv)
{
  guint n;
  g_mutex_lock (&sv->lock);
  n = sv->requests->len;
  g_mutex_unlock (&sv->lock);
  return n;
}

static void
server_stop (Server *sv)
{
  g_mutex_lock (&sv->lock);
  sv->stop = TRUE;
  g_mutex_unlock (&sv->lock);
  g_thread_join (sv->thread);
  g_object_unref (sv->listener);
  g_ptr_array_unref (sv->requests);
  g_array_unref (sv->script);
  g_mutex_clear (&sv->lock);
}

/* The "text" of a request's JSON body (asserts the body is exactly {"text": string}). */
static char *
request_text (const char *req)
{
  const char *body = strstr (req, "\r\n\r\n");
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonObject *o;

  g_assert_nonnull (body);
  g_assert_true (json_parser_load_from_data (p, body + 4, -1, &error));
  g_assert_no_error (error);
  o = json_node_get_object (json_parser_get_root (p));
  g_assert_cmpuint (json_object_get_size (o), ==, 1);
  return g_strdup (json_object_get_string_member (o, "text"));
}

static void
collect_error_cb (const char *message, gpointer user_data)
{
  static GMutex m;
  g_mutex_lock (&m);
  g_ptr_array_add (user_data, g_strdup (message));
  g_mutex_unlock (&m);
}

/* ---- unit tests --------------------------------------------------------------------------- */

/* 503, 503, 200: delivered on the third attempt, after backoff; the body is Slack's shape. */
static void
test_webhook_retry (void)
{
  static const guint script[] = { 503, 503, 200 };
  Server sv;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) errors = g_ptr_array_new_with_free_func (g_free);
  DwAlerts *a = dw_alerts_new (16);
  g_autofree char *url = NULL;
  gint64 t0;

  server_start (&sv, script, G_N_ELEMENTS (script));
  url = g_strdup_printf ("http://127.0.0.1:%u/hooks/T000/B000?x=1", sv.port);
  g_assert_true (dw_alerts_add_webhook (a, url, &error));
  dw_alerts_set_retry (a, 5, 100);
  dw_alerts_set_error_func (a, collect_error_cb, errors);
  t0 = g_get_monotonic_time ();
  dw_alerts_post (a, "{\"x\": 1}", "Run “a” (id 1): IS weight mean 3.2 > 2 “quoted”\nline 2");
  g_assert_true (dw_alerts_flush (a, 10000));
  /* two backoffs: 100 ms then 200 ms */
  g_assert_cmpint (g_get_monotonic_time () - t0, >=, 300000);
  g_assert_cmpuint (dw_alerts_get_n_delivered (a), ==, 1);
  g_assert_cmpuint (dw_alerts_get_n_failed (a), ==, 0);
  g_assert_cmpuint (errors->len, ==, 0);
  g_assert_cmpuint (server_n_requests (&sv), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      const char *req = sv.requests->pdata[i];
      g_autofree char *text = request_text (req);
      g_assert_true (g_str_has_prefix (req, "POST /hooks/T000/B000?x=1 HTTP/1.1\r\n"));
      g_assert_nonnull (strstr (req, "\r\nContent-Type: application/json\r\n"));
      g_assert_cmpstr (text, ==, "Run “a” (id 1): IS weight mean 3.2 > 2 “quoted”\nline 2");
    }
  dw_alerts_free (a, 0);
  server_stop (&sv);
}

/* A 404 is final; an unreachable endpoint is retried up to the limit; both are reported. */
static void
test_webhook_failures (void)
{
  static const guint script[] = { 404 };
  Server sv;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) errors = g_ptr_array_new_with_free_func (g_free);
  DwAlerts *a = dw_alerts_new (16);
  g_autofree char *url = NULL, *dead = NULL, *expect = NULL;
  guint16 closed_port;

  server_start (&sv, script, 1);
  url = g_strdup_printf ("http://127.0.0.1:%u/", sv.port);
  {
    /* a port nobody listens on: bind one, note it, close it */
    g_autoptr (GSocketListener) l = g_socket_listener_new ();
    closed_port = g_socket_listener_add_any_inet_port (l, NULL, &error);
    g_assert_no_error (error);
    g_socket_listener_close (l);
  }
  dead = g_strdup_printf ("http://127.0.0.1:%u/hook", closed_port);
  g_assert_true (dw_alerts_add_webhook (a, url, &error));
  g_assert_true (dw_alerts_add_webhook (a, dead, &error));
  g_assert_false (dw_alerts_add_webhook (a, "ftp://example.org/x", &error));
  g_assert_cmpstr (error->message, ==,
                   "--webhook ftp://example.org/x: not an http:// or https:// URL");
  dw_alerts_set_retry (a, 3, 20);
  dw_alerts_set_error_func (a, collect_error_cb, errors);
  dw_alerts_post (a, "{}", "event");
  g_assert_true (dw_alerts_flush (a, 10000));
  g_assert_cmpuint (server_n_requests (&sv), ==, 1); /* 404: not retried */
  g_assert_cmpuint (dw_alerts_get_n_failed (a), ==, 2);
  g_assert_cmpuint (errors->len, ==, 2);
  expect = g_strdup_printf ("--webhook %s: HTTP 404 (after 1 attempt)", url);
  g_assert_cmpstr (errors->pdata[0], ==, expect);
  g_test_message ("%s", (char *)errors->pdata[1]);
  g_free (expect);
  expect = g_strdup_printf ("--webhook %s: ", dead);
  g_assert_true (g_str_has_prefix (errors->pdata[1], expect));
  g_assert_true (g_str_has_suffix (errors->pdata[1], "(after 3 attempts)"));
  dw_alerts_free (a, 0);
  server_stop (&sv);
}

/* Commands: the event JSON on stdin; a failing command and one that hangs are reported. */
static void
test_exec (void)
{
  g_autofree char *dir = g_dir_make_tmp ("dw-alerts-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "events.jsonl", NULL);
  g_autofree char *cmd = g_strdup_printf ("cat >> '%s'", out);
  g_autoptr (GPtrArray) errors = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *text = NULL;
  DwAlerts *a = dw_alerts_new (16);

  dw_alerts_add_exec (a, cmd);
  dw_alerts_add_exec (a, "exit 3");
  dw_alerts_add_exec (a, "sleep 10");
  dw_alerts_set_timeout (a, 300);
  dw_alerts_set_error_func (a, collect_error_cb, errors);
  dw_alerts_post (a, "{\"run_id\": 1, \"event\": {\"rule_id\": \"a\"}}", "a");
  dw_alerts_post (a, "{\"run_id\": 1, \"event\": {\"rule_id\": \"b\"}}", "b");
  g_assert_true (dw_alerts_flush (a, 10000));
  g_assert_true (g_file_get_contents (out, &text, NULL, NULL));
  g_assert_cmpstr (text, ==,
                   "{\"run_id\": 1, \"event\": {\"rule_id\": \"a\"}}\n"
                   "{\"run_id\": 1, \"event\": {\"rule_id\": \"b\"}}\n");
  g_assert_cmpuint (dw_alerts_get_n_delivered (a), ==, 2);
  g_assert_cmpuint (errors->len, ==, 4);
  g_assert_cmpstr (errors->pdata[0], ==, "--exec exit 3: exited with status 3");
  g_assert_cmpstr (errors->pdata[1], ==, "--exec sleep 10: still running after 300 ms, stopped");
  dw_alerts_free (a, 0);
  g_unlink (out);
  g_rmdir (dir);
}

/* An endpoint that never answers: posting stays instant, the queue stays bounded (oldest events
 * dropped and counted), and freeing does not wait for the hung connection's retries. */
static void
test_never_blocks (void)
{
  static const guint script[] = { 0 };
  Server sv;
  g_autoptr (GError) error = NULL;
  DwAlerts *a = dw_alerts_new (8);
  g_autofree char *url = NULL;
  gint64 t0, t1;

  server_start (&sv, script, 1);
  url = g_strdup_printf ("http://127.0.0.1:%u/", sv.port);
  g_assert_true (dw_alerts_add_webhook (a, url, &error));
  dw_alerts_set_timeout (a, 1000);
  dw_alerts_set_retry (a, 5, 500);
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < 1000; i++)
    dw_alerts_post (a, "{}", "event");
  t1 = g_get_monotonic_time ();
  g_test_message ("1000 posts: %.2f ms", (t1 - t0) / 1000.0);
  g_assert_cmpint (t1 - t0, <, 500000); /* generous for sanitizers; typically well under 5 ms */
  g_assert_cmpuint (dw_alerts_get_n_dropped (a), >=, 1000 - 8 - 1);
  g_assert_false (dw_alerts_flush (a, 200));
  t0 = g_get_monotonic_time ();
  dw_alerts_free (a, 0);
  t1 = g_get_monotonic_time ();
  /* at most the one request in flight (1 s socket timeout) */
  g_assert_cmpint (t1 - t0, <, 2500000);
  server_stop (&sv);
}

/* ---- driftwatch-cli watch ----------------------------------------------------------------- */

/* `watch --json --exec CMD --webhook URL` on a collapse demo run: every event printed on stdout
 * reaches the command (same JSON line) and the webhook (its text), the first POST after one
 * retry; SIGTERM exits 0. */
static void
test_cli (void)
{
  static const guint script[] = { 500, 200 };
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("dw-alerts-cli-XXXXXX", NULL);
  g_autofree char *run = g_build_filename (dir, "run-a", NULL);
  g_autofree char *db = g_build_filename (dir, "store.db", NULL);
  g_autofree char *events = g_build_filename (dir, "events.jsonl", NULL);
  /* the command also prints: that must not reach watch's stdout (JSON lines only) */
  g_autofree char *cmd = g_strdup_printf ("tee -a '%s'", events);
  g_autofree char *url = NULL, *stdout_text = NULL, *got = NULL;
  g_autoptr (GSubprocessLauncher) launcher = NULL;
  g_autoptr (GSubprocess) proc = NULL;
  Server sv;
  gint64 deadline;
  guint n_events = 0;

  g_assert_true (dw_demo_write (run, DW_DEMO_COLLAPSE, 120, 5, &error));
  g_assert_no_error (error);
  server_start (&sv, script, G_N_ELEMENTS (script));
  url = g_strdup_printf ("http://127.0.0.1:%u/slack", sv.port);
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                        | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  proc = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("DW_CLI"), "watch", run, "--db",
                                      db, "--json", "--exec", cmd, "--webhook", url, NULL);
  g_assert_no_error (error);

  /* the demo's collapse fires several events once the run is ingested; wait until the command
   * has them and the webhook has had one request per event plus the retried one */
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (g_get_monotonic_time () < deadline)
    {
      g_autofree char *text = NULL;
      if (g_file_get_contents (events, &text, NULL, NULL))
        {
          n_events = 0;
          for (const char *p = text; (p = strchr (p, '\n')) != NULL; p++)
            n_events++;
          if (n_events > 0 && server_n_requests (&sv) == n_events + 1)
            {
              g_usleep (300000); /* nothing more comes */
              if (server_n_requests (&sv) == n_events + 1)
                break;
            }
        }
      g_usleep (20000);
    }
  g_assert_cmpuint (n_events, >, 0);
  g_assert_cmpuint (server_n_requests (&sv), ==, n_events + 1);
  g_subprocess_send_signal (proc, SIGTERM);
  g_assert_true (g_subprocess_communicate_utf8 (proc, NULL, NULL, &stdout_text, NULL, &error));
  g_assert_true (g_subprocess_get_if_exited (proc));
  g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, 0);

  /* the command got exactly the JSON lines watch printed */
  g_assert_true (g_file_get_contents (events, &got, NULL, NULL));
  g_assert_cmpstr (got, ==, stdout_text);
  /* each webhook text names the run and the event's rule */
  {
    g_auto (GStrv) json_lines = g_strsplit (stdout_text, "\n", -1);
    for (guint i = 0; i < n_events; i++)
      {
        g_autoptr (JsonParser) p = json_parser_new ();
        g_assert_true (json_parser_load_from_data (p, json_lines[i], -1, &error));
        JsonObject *ev = json_object_get_object_member (
          json_node_get_object (json_parser_get_root (p)), "event");
        g_autofree char *text = request_text (sv.requests->pdata[i + 1]);
        g_assert_true (g_str_has_prefix (text, "Driftwatch: Run “run-a” (id 1):\n"));
        g_assert_nonnull (strstr (text, json_object_get_string_member (ev, "title")));
      }
    /* the first attempt (HTTP 500) carried the same text as the retry */
    g_autofree char *t0 = request_text (sv.requests->pdata[0]);
    g_autofree char *t1 = request_text (sv.requests->pdata[1]);
    g_assert_cmpstr (t0, ==, t1);
  }
  server_stop (&sv);
  {
    const char *args[] = { "rm", "-rf", dir, NULL };
    g_spawn_sync (NULL, (char **)args, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL,
                  NULL);
  }
}

/* A webhook that is not an http(s) URL is a usage error (exit 2), said before anything is read. */
static void
test_cli_usage (void)
{
  g_autofree char *dir = g_dir_make_tmp ("dw-alerts-usage-XXXXXX", NULL);
  g_autofree char *db = g_build_filename (dir, "store.db", NULL);
  g_autofree char *out = NULL, *err = NULL;
  const char *args[] = { "watch", dir, "--db", db, "--webhook", "ftp://example.org/hook", NULL };

  g_assert_cmpint (dw_test_run_cli (args, NULL, &out, &err), ==, 2);
  g_assert_cmpstr (err, ==,
                   "driftwatch-cli watch: --webhook ftp://example.org/hook: not an http:// or "
                   "https:// URL\n");
  g_assert_cmpstr (out, ==, "");
  g_assert_false (g_file_test (db, G_FILE_TEST_EXISTS)); /* no store was created */
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "C.UTF-8");
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/alerts/webhook-retry", test_webhook_retry);
  g_test_add_func ("/alerts/webhook-failures", test_webhook_failures);
  g_test_add_func ("/alerts/exec", test_exec);
  g_test_add_func ("/alerts/never-blocks", test_never_blocks);
  g_test_add_func ("/alerts/cli", test_cli);
  g_test_add_func ("/alerts/cli-usage", test_cli_usage);
  return g_test_run ();
}
