/* dw-health-run.c — health rules over a stored run (`check`, `watch`, the GUI's health panel)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-health.h"

#include <string.h>

#include "dw-canonical.h"

/* The tags the rules watch: one per canonical metric. When several logged keys map to the same
 * metric (verl's per-option rollout_rs_<opt>_masked_fraction beside the aggregate), the shortest
 * name — the aggregate — is taken, then the one with more points. */
static GPtrArray *
watched_tags (DwStore *store, gint64 run_id, GError **error)
{
  g_autoptr (GPtrArray) tags = dw_store_list_tags (store, run_id, error);
  if (tags == NULL)
    return NULL;
  g_autoptr (GHashTable) best = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < tags->len; i++)
    {
      DwTagInfo *t = tags->pdata[i];
      const char *canonical = t->canonical ? t->canonical : dw_canonical_for_tag (t->name);
      if (canonical == NULL)
        continue;
      DwTagInfo *b = g_hash_table_lookup (best, canonical);
      if (b == NULL || strlen (t->name) < strlen (b->name)
          || (strlen (t->name) == strlen (b->name) && t->n_points > b->n_points))
        g_hash_table_insert (best, (gpointer)canonical, t);
    }
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < tags->len; i++)
    {
      DwTagInfo *t = tags->pdata[i];
      const char *canonical = t->canonical ? t->canonical : dw_canonical_for_tag (t->name);
      if (canonical && g_hash_table_lookup (best, canonical) == t)
        {
          g_ptr_array_add (out, g_strdup (t->name));
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
  g_autoptr (GPtrArray) tags = watched_tags (store, run_id, error);
  if (tags == NULL)
    return NULL;
  GPtrArray *fired = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_health_event_free);
  for (guint i = 0; i + 1 < tags->len; i += 2)
    {
      const char *tag = tags->pdata[i], *canonical = tags->pdata[i + 1];
      g_autoptr (DwSeries) s = dw_store_get_series (
        store, run_id, tag, dw_health_monitor_last_step (monitor, tag), error);
      if (s == NULL)
        {
          g_ptr_array_unref (fired);
          return NULL;
        }
      g_autoptr (GPtrArray) f
        = dw_health_monitor_feed (monitor, canonical, tag, s->steps, s->values, s->n);
      for (guint k = 0; k < f->len; k++)
        g_ptr_array_add (fired, dw_health_event_copy (f->pdata[k]));
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

  for (guint i = 0; i < events->len; i++)
    {
      const DwHealthEvent *e = g_ptr_array_index (events, i);

      crit += e->severity == DW_HEALTH_CRITICAL;
      warn += e->severity == DW_HEALTH_WARNING;
      if (e->severity >= DW_HEALTH_WARNING && e->tag != NULL
          && e->last_step >= dw_health_monitor_last_step (monitor, e->tag))
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
  return stored;
}

DwRunStatus
dw_health_run_shown_status (DwStore *store, const DwRunInfo *run, GError **error)
{
  g_autoptr (DwHealthMonitor) m = NULL;
  g_autoptr (GPtrArray) fired = NULL;
  g_autoptr (GPtrArray) events = NULL;
  guint n_critical, n_at_end;

  if (run->status != DW_RUN_STATUS_FINISHED)
    return run->status;
  m = dw_health_monitor_new ();
  fired = dw_health_monitor_poll_run (m, store, run->id, error);
  if (fired == NULL)
    return run->status;
  events = dw_health_monitor_get_events (m);
  dw_health_monitor_count (m, events, NULL, &n_critical, &n_at_end);
  return dw_health_shown_status (run->status, n_critical, n_at_end);
}
