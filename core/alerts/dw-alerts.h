/* dw-alerts.h — deliver health events where the run is: to a command and to an HTTP webhook
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * `driftwatch-cli watch --exec CMD --webhook URL`: every health event is queued here and
 * delivered by one worker thread, so a slow command or an unreachable endpoint never holds up
 * ingest. The queue is bounded: when it is full the oldest waiting event is dropped (and
 * counted). A command gets the event's JSON on stdin (`/bin/sh -c CMD`), its output goes to
 * stderr, and it is stopped after the exec timeout. A webhook gets a Slack-compatible POST body
 * {"text": "…"}; connection errors, HTTP 429 and 5xx are retried with exponential backoff (first
 * delay, doubled each attempt, up to the attempt limit), other 4xx answers are final. HTTP/1.1 over
 * GIO's GSocketClient (https through GIO's TLS backend when installed).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _DwAlerts DwAlerts;

/* Called from the worker thread for every delivery that failed for good (message names the
 * target and the reason). */
typedef void (*DwAlertsErrorFunc) (const char *message, gpointer user_data);

#define DW_ALERTS_DEFAULT_QUEUE      256
#define DW_ALERTS_DEFAULT_ATTEMPTS   5
#define DW_ALERTS_DEFAULT_BACKOFF_MS 500
#define DW_ALERTS_DEFAULT_TIMEOUT_MS 10000

DwAlerts *dw_alerts_new (guint queue_max);
void dw_alerts_set_error_func (DwAlerts *self, DwAlertsErrorFunc func, gpointer user_data);
/* Retry policy of webhooks and the per-delivery timeout (connect + answer, or the command's
 * run time). Set before the first post. */
void dw_alerts_set_retry (DwAlerts *self, guint max_attempts, guint first_backoff_ms);
void dw_alerts_set_timeout (DwAlerts *self, guint timeout_ms);

void dw_alerts_add_exec (DwAlerts *self, const char *command);
/* FALSE with @error when @url is not an http:// or https:// URL. */
gboolean dw_alerts_add_webhook (DwAlerts *self, const char *url, GError **error);
gboolean dw_alerts_is_empty (DwAlerts *self);

/* Queues one event: @json (one JSON object, for commands) and @text (the webhook's message).
 * Returns at once. */
void dw_alerts_post (DwAlerts *self, const char *json, const char *text);

/* Waits until every queued event was delivered (or given up), at most @timeout_ms; TRUE when
 * the queue is empty and nothing is in flight. */
gboolean dw_alerts_flush (DwAlerts *self, guint timeout_ms);

guint64 dw_alerts_get_n_delivered (DwAlerts *self); /* target deliveries that succeeded */
guint64 dw_alerts_get_n_failed (DwAlerts *self);    /* target deliveries given up */
guint64 dw_alerts_get_n_dropped (DwAlerts *self);   /* events dropped from a full queue */

/* Delivers what is queued for at most @drain_ms more, then stops the worker and frees. */
void dw_alerts_free (DwAlerts *self, guint drain_ms);

/* The Slack-compatible body {"text": @text}. */
char *dw_alerts_webhook_body (const char *text);

G_END_DECLS
