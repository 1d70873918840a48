/* dw-alerts.c — see dw-alerts.h
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One worker thread (alerts_worker) takes events from a bounded queue guarded by a mutex and a
 * condition variable. Backoff sleeps wait on the same condition, so freeing the object wakes
 * the worker at once; what is still queued then gets at most the drain time.
 */
#include "config.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <unistd.h>

#include "dw-alerts.h"

typedef struct
{
  char *json;
  char *text;
} Item;

typedef struct
{
  char *url;
  char *host; /* for the Host header (IPv6 in brackets) */
  char *connect_host;
  guint16 port;
  char *target; /* path?query */
  gboolean tls;
} Webhook;

struct _DwAlerts
{
  GMutex lock;
  GCond cond;
  GQueue queue;
  guint queue_max;
  gboolean busy;      /* the worker is delivering an item */
  gboolean stopping;  /* free() was called */
  gint64 drain_until; /* monotonic µs: deliveries end then */
  GThread *thread;

  GPtrArray *commands; /* char* */
  GPtrArray *webhooks; /* Webhook* */
  guint max_attempts, backoff_ms, timeout_ms;
  DwAlertsErrorFunc error_func;
  gpointer error_data;

  guint64 n_delivered, n_failed, n_dropped;
};

static void
item_free (Item *it)
{
  g_free (it->json);
  g_free (it->text);
  g_free (it);
}

static void
webhook_free (Webhook *w)
{
  g_free (w->url);
  g_free (w->host);
  g_free (w->connect_host);
  g_free (w->target);
  g_free (w);
}

char *
dw_alerts_webhook_body (const char *text)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "text");
  json_builder_add_string_value (b, text);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

/* ---- delivery ----------------------------------------------------------------------------- */

static void report_failure (DwAlerts *self, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
report_failure (DwAlerts *self, const char *fmt, ...)
{
  va_list args;
  g_autofree char *msg = NULL;

  va_start (args, fmt);
  msg = g_strdup_vprintf (fmt, args);
  va_end (args);
  g_mutex_lock (&self->lock);
  self->n_failed++;
  g_mutex_unlock (&self->lock);
  if (self->error_func != NULL)
    self->error_func (msg, self->error_data);
}

static void
count_delivered (DwAlerts *self)
{
  g_mutex_lock (&self->lock);
  self->n_delivered++;
  g_mutex_unlock (&self->lock);
}

/* Sleeps @ms unless the object is being freed past its drain time; FALSE: give up. */
static gboolean
backoff_sleep (DwAlerts *self, guint ms)
{
  gint64 until = g_get_monotonic_time () + (gint64)ms * 1000;
  gboolean go_on = TRUE;

  g_mutex_lock (&self->lock);
  for (;;)
    {
      if (self->stopping && self->drain_until < until)
        {
          go_on = FALSE;
          break;
        }
      if (!g_cond_wait_until (&self->cond, &self->lock, until))
        break; /* slept the full time */
    }
  g_mutex_unlock (&self->lock);
  return go_on;
}

static void
run_command (DwAlerts *self, const char *command, const char *json)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) proc = NULL;
  g_autofree char *input = g_strconcat (json, "\n", NULL);
  GOutputStream *in;
  gint64 deadline = g_get_monotonic_time () + (gint64)self->timeout_ms * 1000;

  g_autoptr (GSubprocessLauncher) launcher
    = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE);
  int out_fd = dup (STDERR_FILENO);

  /* the command's output goes to stderr: stdout stays watch's own (one JSON object per line) */
  if (out_fd >= 0)
    g_subprocess_launcher_take_stdout_fd (launcher, out_fd);
  proc = g_subprocess_launcher_spawn (launcher, &error, "/bin/sh", "-c", command, NULL);
  if (proc == NULL)
    {
      report_failure (self, "--exec %s: %s", command, error->message);
      return;
    }
  in = g_subprocess_get_stdin_pipe (proc);
  /* a command that does not read its stdin is fine: a write error (EPIPE) is ignored */
  g_output_stream_write_all (in, input, strlen (input), NULL, NULL, NULL);
  g_output_stream_close (in, NULL, NULL);
  /* GSubprocess reaps the child in GLib's worker thread: the identifier goes NULL then */
  while (g_subprocess_get_identifier (proc) != NULL && g_get_monotonic_time () < deadline)
    g_usleep (5000);
  if (g_subprocess_get_identifier (proc) != NULL)
    {
      g_subprocess_force_exit (proc);
      g_subprocess_wait (proc, NULL, NULL);
      report_failure (self, "--exec %s: still running after %u ms, stopped", command,
                      self->timeout_ms);
      return;
    }
  g_subprocess_wait (proc, NULL, NULL);
  if (!g_subprocess_get_successful (proc))
    {
      report_failure (self, "--exec %s: exited with status %d", command,
                      g_subprocess_get_if_exited (proc) ? g_subprocess_get_exit_status (proc)
                                                        : 128 + g_subprocess_get_term_sig (proc));
      return;
    }
  count_delivered (self);
}

/* One POST; *@status gets the HTTP status (0 when there was no answer). */
static gboolean
http_post (DwAlerts *self, const Webhook *w, const char *body, guint *status, GError **error)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = NULL;
  g_autoptr (GDataInputStream) in = NULL;
  g_autofree char *request = NULL, *line = NULL;
  guint timeout_s = MAX (1, (self->timeout_ms + 999) / 1000);

  *status = 0;
  g_socket_client_set_timeout (client, timeout_s);
  g_socket_client_set_tls (client, w->tls);
  conn = g_socket_client_connect_to_host (client, w->connect_host, w->port, NULL, error);
  if (conn == NULL)
    return FALSE;
  request = g_strdup_printf ("POST %s HTTP/1.1\r\n"
                             "Host: %s\r\n"
                             "User-Agent: driftwatch\r\n"
                             "Content-Type: application/json\r\n"
                             "Content-Length: %zu\r\n"
                             "Connection: close\r\n"
                             "\r\n"
                             "%s",
                             w->target, w->host, strlen (body), body);
  if (!g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), request,
                                  strlen (request), NULL, NULL, error))
    return FALSE;
  in = g_data_input_stream_new (g_io_stream_get_input_stream (G_IO_STREAM (conn)));
  g_data_input_stream_set_newline_type (in, G_DATA_STREAM_NEWLINE_TYPE_ANY);
  line = g_data_input_stream_read_line (in, NULL, NULL, error);
  if (line == NULL)
    {
      if (error != NULL && *error == NULL)
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                             "connection closed without an answer");
      return FALSE;
    }
  /* "HTTP/1.1 200 OK" */
  if (!g_str_has_prefix (line, "HTTP/") || strchr (line, ' ') == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "not an HTTP answer: %.80s", line);
      return FALSE;
    }
  *status = (guint)g_ascii_strtoull (strchr (line, ' ') + 1, NULL, 10);
  g_io_stream_close (G_IO_STREAM (conn), NULL, NULL);
  return TRUE;
}

static void
post_webhook (DwAlerts *self, const Webhook *w, const char *text)
{
  g_autofree char *body = dw_alerts_webhook_body (text);
  guint delay = self->backoff_ms;

  for (guint attempt = 1;; attempt++)
    {
      g_autoptr (GError) error = NULL;
      guint status = 0;
      gboolean answered = http_post (self, w, body, &status, &error);
      gboolean retry;
      g_autofree char *why = NULL;

      if (answered && status >= 200 && status < 300)
        {
          count_delivered (self);
          return;
        }
      why = answered ? g_strdup_printf ("HTTP %u", status) : g_strdup (error->message);
      retry = !answered || status == 429 || status >= 500;
      if (!retry || attempt >= self->max_attempts)
        {
          report_failure (self, "--webhook %s: %s (after %u attempt%s)", w->url, why, attempt,
                          attempt == 1 ? "" : "s");
          return;
        }
      if (!backoff_sleep (self, delay))
        {
          report_failure (self, "--webhook %s: %s; not retried, watch is stopping", w->url, why);
          return;
        }
      delay = MIN (delay * 2, 60000u);
    }
}

static gpointer
alerts_worker (gpointer data)
{
  DwAlerts *self = data;

  for (;;)
    {
      Item *item;

      g_mutex_lock (&self->lock);
      while (g_queue_is_empty (&self->queue) && !self->stopping)
        g_cond_wait (&self->cond, &self->lock);
      if (g_queue_is_empty (&self->queue)
          || (self->stopping && g_get_monotonic_time () > self->drain_until))
        {
          g_mutex_unlock (&self->lock);
          break;
        }
      item = g_queue_pop_head (&self->queue);
      self->busy = TRUE;
      g_mutex_unlock (&self->lock);

      for (guint index = 0; index < self->commands->len; index++)
        run_command (self, self->commands->pdata[index], item->json);
      for (guint index = 0; index < self->webhooks->len; index++)
        post_webhook (self, self->webhooks->pdata[index], item->text);
      item_free (item);

      g_mutex_lock (&self->lock);
      self->busy = FALSE;
      g_cond_broadcast (&self->cond);
      g_mutex_unlock (&self->lock);
    }
  return NULL;
}

/* ---- API ---------------------------------------------------------------------------------- */

DwAlerts *
dw_alerts_new (guint queue_max)
{
  DwAlerts *self = g_new0 (DwAlerts, 1);

  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  g_queue_init (&self->queue);
  self->queue_max = MAX (queue_max, 1);
  self->commands = g_ptr_array_new_with_free_func (g_free);
  self->webhooks = g_ptr_array_new_with_free_func ((GDestroyNotify)webhook_free);
  self->max_attempts = DW_ALERTS_DEFAULT_ATTEMPTS;
  self->backoff_ms = DW_ALERTS_DEFAULT_BACKOFF_MS;
  self->timeout_ms = DW_ALERTS_DEFAULT_TIMEOUT_MS;
  return self;
}

void
dw_alerts_set_error_func (DwAlerts *self, DwAlertsErrorFunc func, gpointer user_data)
{
  self->error_func = func;
  self->error_data = user_data;
}

void
dw_alerts_set_retry (DwAlerts *self, guint max_attempts, guint first_backoff_ms)
{
  self->max_attempts = MAX (max_attempts, 1);
  self->backoff_ms = MAX (first_backoff_ms, 1);
}

void
dw_alerts_set_timeout (DwAlerts *self, guint timeout_ms)
{
  self->timeout_ms = MAX (timeout_ms, 1);
}

void
dw_alerts_add_exec (DwAlerts *self, const char *command)
{
  g_ptr_array_add (self->commands, g_strdup (command));
}

gboolean
dw_alerts_add_webhook (DwAlerts *self, const char *url, GError **error)
{
  g_autoptr (GUri) uri = g_uri_parse (url, G_URI_FLAGS_NONE, error);
  const char *scheme, *host, *path, *query;
  Webhook *w;

  if (uri == NULL)
    {
      g_prefix_error (error, "--webhook %s: ", url);
      return FALSE;
    }
  scheme = g_uri_get_scheme (uri);
  host = g_uri_get_host (uri);
  if ((g_ascii_strcasecmp (scheme, "http") != 0 && g_ascii_strcasecmp (scheme, "https") != 0)
      || host == NULL || *host == '\0')
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "--webhook %s: not an http:// or https:// URL", url);
      return FALSE;
    }
  w = g_new0 (Webhook, 1);
  w->url = g_strdup (url);
  w->tls = g_ascii_strcasecmp (scheme, "https") == 0;
  w->port = g_uri_get_port (uri) > 0 ? (guint16)g_uri_get_port (uri) : (w->tls ? 443 : 80);
  w->connect_host = g_strdup (host);
  w->host = strchr (host, ':') != NULL ? g_strdup_printf ("[%s]:%u", host, w->port)
                                       : g_strdup_printf ("%s:%u", host, w->port);
  path = g_uri_get_path (uri);
  query = g_uri_get_query (uri);
  w->target = g_strdup_printf ("%s%s%s", (path && *path) ? path : "/", query ? "?" : "",
                               query ? query : "");
  g_ptr_array_add (self->webhooks, w);
  return TRUE;
}

gboolean
dw_alerts_is_empty (DwAlerts *self)
{
  return self->commands->len == 0 && self->webhooks->len == 0;
}

void
dw_alerts_post (DwAlerts *self, const char *json, const char *text)
{
  Item *item;

  if (dw_alerts_is_empty (self))
    return;
  item = g_new0 (Item, 1);
  item->json = g_strdup (json);
  item->text = g_strdup (text);
  g_mutex_lock (&self->lock);
  if (self->thread == NULL)
    self->thread = g_thread_new ("dw-alerts", alerts_worker, self);
  while (g_queue_get_length (&self->queue) >= self->queue_max)
    {
      item_free (g_queue_pop_head (&self->queue));
      self->n_dropped++;
    }
  g_queue_push_tail (&self->queue, item);
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

gboolean
dw_alerts_flush (DwAlerts *self, guint timeout_ms)
{
  gint64 until = g_get_monotonic_time () + (gint64)timeout_ms * 1000;
  gboolean empty;

  g_mutex_lock (&self->lock);
  while (!(g_queue_is_empty (&self->queue) && !self->busy))
    if (!g_cond_wait_until (&self->cond, &self->lock, until))
      break;
  empty = g_queue_is_empty (&self->queue) && !self->busy;
  g_mutex_unlock (&self->lock);
  return empty;
}

static guint64
read_counter (DwAlerts *self, const guint64 *counter)
{
  guint64 value;
  g_mutex_lock (&self->lock);
  value = *counter;
  g_mutex_unlock (&self->lock);
  return value;
}

guint64
dw_alerts_get_n_delivered (DwAlerts *self)
{
  return read_counter (self, &self->n_delivered);
}

guint64
dw_alerts_get_n_failed (DwAlerts *self)
{
  return read_counter (self, &self->n_failed);
}

guint64
dw_alerts_get_n_dropped (DwAlerts *self)
{
  return read_counter (self, &self->n_dropped);
}

void
dw_alerts_free (DwAlerts *self, guint drain_ms)
{
  if (self == NULL)
    return;
  g_mutex_lock (&self->lock);
  self->stopping = TRUE;
  self->drain_until = g_get_monotonic_time () + (gint64)drain_ms * 1000;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  if (self->thread != NULL)
    g_thread_join (self->thread);
  g_queue_clear_full (&self->queue, (GDestroyNotify)item_free);
  g_ptr_array_unref (self->commands);
  g_ptr_array_unref (self->webhooks);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self);
}
