/* dw-health-report.c — JSON and text renderings of health events (`check`, `watch`, the GUI)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-health.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <inttypes.h>

#include "dw-canonical.h"
#include "dw-config-json.h"

void
dw_health_append_event_json (GString *out, const DwHealthEvent *e)
{
  g_autofree char *crossing = dw_health_event_format_crossing (e);

  g_string_append (out, "{\"rule_id\": ");
  dw_json_append_string (out, e->rule_id);
  g_string_append (out, ", \"severity\": ");
  dw_json_append_string (out, dw_health_severity_name (e->severity));
  g_string_append (out, ", \"metric\": ");
  if (e->metric)
    dw_json_append_string (out, e->metric);
  else
    g_string_append (out, "null");
  g_string_append (out, ", \"tag\": ");
  dw_json_append_string (out, e->tag ? e->tag : "");
  g_string_append_printf (out,
                          ", \"first_step\": %" G_GINT64_FORMAT ", \"last_step\": %" G_GINT64_FORMAT
                          ", \"n_steps\": %" G_GINT64_FORMAT ", \"value\": ",
                          e->first_step, e->last_step, e->n_steps);
  dw_json_append_number (out, e->value);
  g_string_append (out, ", \"threshold\": ");
  if (isnan (e->threshold))
    g_string_append (out, "null");
  else
    dw_json_append_number (out, e->threshold);
  g_string_append (out, ", \"crossing\": ");
  dw_json_append_string (out, crossing);
  g_string_append (out, ", \"title\": ");
  dw_json_append_string (out, e->title);
  g_string_append (out, ", \"explanation\": ");
  dw_json_append_string (out, e->explanation);
  g_string_append (out, ", \"advice\": ");
  dw_json_append_string (out, e->advice);
  g_string_append_c (out, '}');
}

void
dw_health_append_report_json (GString *out, const DwHealthReport *report)
{
  DwHealthVerdict verdict = dw_health_report_verdict (report);
  GPtrArray *events = report->events;

  g_autofree char *headline = dw_health_headline (events, report->shown_status);

  g_string_append_printf (
    out, "{\"verdict\": \"%s\", \"healthy\": %s, \"headline\": ", dw_health_verdict_name (verdict),
    verdict == DW_HEALTH_VERDICT_HEALTHY ? "true" : "false");
  if (headline != NULL)
    dw_json_append_string (out, headline);
  else
    g_string_append (out, "null");
  g_string_append (out, ", \"generation\": ");
  if (report->generation != NULL)
    dw_json_append_string (out, report->generation);
  else
    g_string_append (out, "null");
  g_string_append (out, ", \"generation_source\": ");
  if (report->generation_source != NULL)
    dw_json_append_string (out, report->generation_source);
  else
    g_string_append (out, "null");
  g_string_append_printf (out, ", \"generation_inferred\": %s, \"evaluated\": [",
                          report->generation_inferred ? "true" : "false");
  for (guint index = 0; index < report->evaluated->len; index++)
    {
      g_string_append (out, index ? ", " : "");
      dw_json_append_string (out, report->evaluated->pdata[index]);
    }
  g_string_append_printf (out,
                          "], \"n_mismatch_metrics\": %u, \"n_tags\": %u, "
                          "\"n_unmapped\": %u, \"panel_columns\": %u, \"events\": [",
                          report->n_mismatch, report->n_tags, report->n_unmapped,
                          report->panel_columns->len);
  for (guint index = 0; index < events->len; index++)
    {
      g_string_append (out, index ? ",\n  " : "\n  ");
      dw_health_append_event_json (out, events->pdata[index]);
    }
  g_string_append (out, events->len ? "\n]}" : "]}");
}

static const char *
dw_health_severity_label (DwHealthSeverity s)
{
  switch (s)
    {
    case DW_HEALTH_CRITICAL:
      return _ ("CRITICAL");
    case DW_HEALTH_WARNING:
      return _ ("WARNING");
    default:
      return _ ("INFO");
    }
}

void
dw_health_append_event_text (GString *out, const DwHealthEvent *e)
{
  g_autofree char *crossing = dw_health_event_format_crossing (e);
  char value_text[G_ASCII_DTOSTR_BUF_SIZE];

  g_ascii_formatd (value_text, sizeof value_text, "%.6g", e->value);
  g_string_append_printf (out, "%s  ", dw_health_severity_label (e->severity));
  if (e->first_step == e->last_step)
    /* TRANSLATORS: health report line: step, rule title, rule id */
    g_string_append_printf (out, _ ("step %" PRId64 ": %s [%s]\n"), e->first_step, e->title,
                            e->rule_id);
  else
    /* TRANSLATORS: health report line: first step, last step, rule title, rule id */
    g_string_append_printf (out, _ ("steps %" PRId64 "–%" PRId64 ": %s [%s]\n"), e->first_step,
                            e->last_step, e->title, e->rule_id);
  if (isnan (e->threshold))
    /* TRANSLATORS: logged tag, value */
    g_string_append_printf (out, _ ("    %s = %s\n"), e->tag, value_text);
  else
    /* TRANSLATORS: logged tag, "value > threshold (ratio×)", number of steps */
    g_string_append_printf (out, _ ("    %s: %s, fired on %" PRId64 " step(s)\n"), e->tag, crossing,
                            e->n_steps);
  g_string_append_printf (out, "    %s\n", e->explanation);
  /* TRANSLATORS: prefix of the advice line of a health warning */
  g_string_append_printf (out, _ ("    Try: %s\n"), e->advice);
}

/* "K3 KL 0.00542 > 0.00532 (1×)": the metric's title and the crossing. */
static char *
dw_health_describe_crossing (const DwHealthEvent *event)
{
  const DwCanonicalMetric *metric = dw_canonical_lookup (event->metric);
  g_autofree char *crossing = dw_health_event_format_crossing (event);

  return g_strdup_printf ("%s %s", metric != NULL ? _ (metric->title) : event->tag, crossing);
}

char *
dw_health_headline (GPtrArray *events, DwRunStatus shown_status)
{
  const DwHealthEvent *first_critical = NULL, *first_warning = NULL;
  g_autofree char *what = NULL;
  GString *line;

  for (guint index = 0; index < events->len; index++)
    {
      const DwHealthEvent *event = events->pdata[index];

      if (event->severity == DW_HEALTH_CRITICAL && first_critical == NULL)
        first_critical = event;
      if (event->severity == DW_HEALTH_WARNING && first_warning == NULL)
        first_warning = event;
    }
  if (first_critical == NULL && first_warning == NULL)
    return NULL;

  line = g_string_new (NULL);
  if (first_critical != NULL)
    {
      what = dw_health_describe_crossing (first_critical);
      if (shown_status == DW_RUN_STATUS_COLLAPSED)
        /* TRANSLATORS: banner: step, rule title, "metric value > bound (ratio×)" */
        g_string_append_printf (line, _ ("Collapsed at step %" PRId64 " (%s): %s"),
                                first_critical->first_step, first_critical->title, what);
      else if (shown_status == DW_RUN_STATUS_COLLAPSING)
        /* TRANSLATORS: banner of a run still written: step, rule title, crossing */
        g_string_append_printf (line, _ ("Collapsing since step %" PRId64 " (%s): %s"),
                                first_critical->first_step, first_critical->title, what);
      else
        /* TRANSLATORS: banner: step, rule title, crossing */
        g_string_append_printf (line, _ ("Critical at step %" PRId64 " (%s): %s"),
                                first_critical->first_step, first_critical->title, what);
      if (first_warning != NULL && first_warning->first_step < first_critical->first_step)
        /* TRANSLATORS: appended to a banner: step, rule title */
        g_string_append_printf (line, _ ("; first warning at step %" PRId64 ": %s"),
                                first_warning->first_step, first_warning->title);
      return g_string_free (line, FALSE);
    }

  what = dw_health_describe_crossing (first_warning);
  /* TRANSLATORS: banner: step, rule title, crossing */
  g_string_append_printf (line, _ ("Warning since step %" PRId64 " (%s): %s"),
                          first_warning->first_step, first_warning->title, what);
  return g_string_free (line, FALSE);
}
