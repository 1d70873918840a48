/* dw-health-run.c — health rules over a stored run (`check`, `watch`, the GUI's health panel)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-health.h"

#include <string.h>

#include "dw-canonical.h"

/* Reads the run's keys under the monitor's generation (given, else the run's: printed by it or
 * read from its keys): each tag's canonical metric is the one it has under that generation. */
static void
dw_health_resolve_tags (DwHealthMonitor *monitor, DwStore *store, gint64 run_id, GPtrArray *tags)
{
  const char *source = NULL;
  g_autofree char *generation = dw_store_get_run_generation (store, run_id, &source, NULL);

  dw_health_monitor_adopt_generation (monitor, generation, source);
  for (guint index = 0; index < tags->len; index++)
    {
      DwTagInfo *tag = tags->pdata[index];

      g_free (tag->canonical);
      tag->canonical
        = g_strdup (dw_canonical_for_key (tag->name, dw_health_monitor_get_generation (monitor)));
    }
}

/* The tags the rules watch: one per canonical metric. When several logged keys map to the same
 * metric (slime's train/tis_clipfrac beside a custom function's, a W&B export beside the
 * TensorBoard copy), the shortest name is taken, then the one with more points. */
static GPtrArray *
dw_health_watched_tags (GPtrArray *tags)
{
  g_autoptr (GHashTable) best = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint index = 0; index < tags->len; index++)
    {
      DwTagInfo *tag_info = tags->pdata[index];
      const char *canonical = tag_info->canonical;
      if (canonical == NULL)
        continue;
      DwTagInfo *best_tag = g_hash_table_lookup (best, canonical);
      if (best_tag == NULL || strlen (tag_info->name) < strlen (best_tag->name)
          || (strlen (tag_info->name) == strlen (best_tag->name)
              && tag_info->n_points > best_tag->n_points))
        g_hash_table_insert (best, (gpointer)canonical, tag_info);
    }
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  for (guint index = 0; index < tags->len; index++)
    {
      DwTagInfo *tag_info = tags->pdata[index];
      const char *canonical = tag_info->canonical;
      if (canonical && g_hash_table_lookup (best, canonical) == tag_info)
        {
          g_ptr_array_add (out, g_strdup (tag_info->name));
          g_ptr_array_add (out, g_strdup (canonical));
        }
    }
  return out;
}

GPtrArray *
dw_health_monitor_poll_run (DwHealthMonitor *monitor, DwStore *store, gint64 run_id, GError **error)
{
  g_autoptr (DwRunInfo) run = dw_store_get_run (store, run_id, error);
  if (run == NULL)
    return NULL;
  g_autoptr (GPtrArray) all = dw_store_list_tags (store, run_id, error);
  if (all == NULL)
    return NULL;
  dw_health_resolve_tags (monitor, store, run_id, all);
  g_autoptr (GPtrArray) tags = dw_health_watched_tags (all);
  GPtrArray *fired = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_health_event_free);
  for (guint index = 0; index + 1 < tags->len; index += 2)
    {
      const char *tag = tags->pdata[index], *canonical = tags->pdata[index + 1];
      g_autoptr (DwSeries) s = dw_store_get_series (
        store, run_id, tag, dw_health_monitor_last_step (monitor, tag), error);
      if (s == NULL)
        {
          g_ptr_array_unref (fired);
          return NULL;
        }
      g_autoptr (GPtrArray) f
        = dw_health_monitor_feed (monitor, canonical, tag, s->steps, s->values, s->n);
      for (guint event_index = 0; event_index < f->len; event_index++)
        g_ptr_array_add (fired, dw_health_event_copy (f->pdata[event_index]));
    }
  g_ptr_array_sort (fired, dw_health_event_compare);
  return fired;
}

GPtrArray *
dw_health_check_run (DwStore *store, gint64 run_id, GError **error)
{
  g_autoptr (DwHealthMonitor) m = dw_health_monitor_new ();
  g_autoptr (GPtrArray) fired = dw_health_monitor_poll_run (m, store, run_id, error);
  if (fired == NULL)
    return NULL;
  return dw_health_monitor_get_events (m);
}

void
dw_health_monitor_count (DwHealthMonitor *monitor, GPtrArray *events, guint *n_warning,
                         guint *n_critical, guint *n_at_end)
{
  guint warn = 0, crit = 0, at_end = 0;

  for (guint index = 0; index < events->len; index++)
    {
      const DwHealthEvent *event = g_ptr_array_index (events, index);

      crit += event->severity == DW_HEALTH_CRITICAL;
      warn += event->severity == DW_HEALTH_WARNING;
      if (event->severity >= DW_HEALTH_WARNING && event->tag != NULL
          && event->last_step >= dw_health_monitor_last_step (monitor, event->tag))
        at_end++;
    }
  if (n_warning != NULL)
    *n_warning = warn;
  if (n_critical != NULL)
    *n_critical = crit;
  if (n_at_end != NULL)
    *n_at_end = at_end;
}

DwRunStatus
dw_health_shown_status (DwRunStatus stored, guint n_critical, guint n_at_end)
{
  if (stored == DW_RUN_STATUS_FINISHED && (n_critical > 0 || n_at_end > 0))
    return DW_RUN_STATUS_COLLAPSED;
  if (stored == DW_RUN_STATUS_LIVE && n_critical > 0)
    return DW_RUN_STATUS_COLLAPSING;
  return stored;
}

DwRunStatus
dw_health_run_shown_status (DwStore *store, const DwRunInfo *run, GError **error)
{
  g_autoptr (DwHealthMonitor) m = NULL;
  g_autoptr (GPtrArray) fired = NULL;
  g_autoptr (GPtrArray) events = NULL;
  guint n_critical, n_at_end;

  if (run->status != DW_RUN_STATUS_FINISHED && run->status != DW_RUN_STATUS_LIVE)
    return run->status;
  m = dw_health_monitor_new ();
  fired = dw_health_monitor_poll_run (m, store, run->id, error);
  if (fired == NULL)
    return run->status;
  events = dw_health_monitor_get_events (m);
  dw_health_monitor_count (m, events, NULL, &n_critical, &n_at_end);
  return dw_health_shown_status (run->status, n_critical, n_at_end);
}

/* ------------------------------------------------------------------------------------------ */
/* the verdict                                                                                  */

void
dw_health_report_free (DwHealthReport *report)
{
  if (report == NULL)
    return;
  g_clear_pointer (&report->events, g_ptr_array_unref);
  g_clear_pointer (&report->evaluated, g_ptr_array_unref);
  g_clear_pointer (&report->panel_columns, g_ptr_array_unref);
  g_free (report->generation);
  g_free (report);
}

/* "<run> - <metric>" (optionally "__MIN" / "__MAX"): a column of a W&B panel export whose metric
 * part names a canonical metric, i.e. several runs' columns ingested as one run. */
static gboolean
dw_health_is_panel_column (const char *tag, const char *generation)
{
  const char *sep = strstr (tag, " - ");
  g_autofree char *metric = NULL;

  if (sep == NULL)
    return FALSE;
  metric = g_strdup (sep + 3);
  if (g_str_has_suffix (metric, "__MIN") || g_str_has_suffix (metric, "__MAX"))
    metric[strlen (metric) - 5] = '\0';
  return dw_canonical_for_key (metric, generation) != NULL;
}

DwHealthReport *
dw_health_report_run (DwStore *store, gint64 run_id, const char *generation, GError **error)
{
  g_autoptr (DwHealthMonitor) monitor = dw_health_monitor_new ();
  g_autoptr (DwHealthReport) report = g_new0 (DwHealthReport, 1);
  g_autoptr (GPtrArray) fired = NULL;
  g_autoptr (GPtrArray) tags = NULL;
  g_autoptr (DwRunInfo) run = NULL;
  guint n_at_end = 0;

  if ((run = dw_store_get_run (store, run_id, error)) == NULL)
    return NULL;
  dw_health_monitor_set_generation (monitor, generation);
  fired = dw_health_monitor_poll_run (monitor, store, run_id, error);
  if (fired == NULL || (tags = dw_store_list_tags (store, run_id, error)) == NULL)
    return NULL;
  dw_health_resolve_tags (monitor, store, run_id, tags);
  report->generation_source = dw_health_monitor_get_generation_source (monitor);
  report->generation_inferred
    = g_strcmp0 (report->generation_source, "keys") == 0 || report->generation_source == NULL;
  report->events = dw_health_monitor_get_events (monitor);
  report->evaluated = dw_health_monitor_get_evaluated (monitor);
  report->generation = g_strdup (dw_health_monitor_get_generation (monitor));
  report->panel_columns = g_ptr_array_new_with_free_func (g_free);
  for (guint index = 0; index < report->evaluated->len; index++)
    {
      const DwCanonicalMetric *metric = dw_canonical_lookup (report->evaluated->pdata[index]);

      report->n_mismatch += metric != NULL && metric->mismatch;
    }
  dw_health_monitor_count (monitor, report->events, &report->n_warning, &report->n_critical,
                           &n_at_end);
  report->shown_status = dw_health_shown_status (run->status, report->n_critical, n_at_end);
  report->n_tags = tags->len;
  for (guint index = 0; index < tags->len; index++)
    {
      DwTagInfo *tag_info = tags->pdata[index];

      if (tag_info->canonical != NULL)
        continue;
      report->n_unmapped++;
      if (dw_health_is_panel_column (tag_info->name, report->generation))
        g_ptr_array_add (report->panel_columns, g_strdup (tag_info->name));
    }
  return g_steal_pointer (&report);
}

DwHealthVerdict
dw_health_report_verdict (const DwHealthReport *report)
{
  if (report->n_warning + report->n_critical > 0)
    return DW_HEALTH_VERDICT_UNHEALTHY;
  if (report->n_mismatch == 0)
    return DW_HEALTH_VERDICT_NO_MISMATCH_DATA;
  return DW_HEALTH_VERDICT_HEALTHY;
}

const char *
dw_health_verdict_name (DwHealthVerdict verdict)
{
  switch (verdict)
    {
    case DW_HEALTH_VERDICT_HEALTHY:
      return "healthy";
    case DW_HEALTH_VERDICT_UNHEALTHY:
      return "unhealthy";
    case DW_HEALTH_VERDICT_NO_MISMATCH_DATA:
      return "no-mismatch-metrics";
    default:
      return "unknown";
    }
}
