/* dw-run-item.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-run-item"

#include "config.h"

#include <math.h>

#include "dw-run-item.h"

struct _DwRunItem
{
  GObject parent_instance;

  DwRunInfo *info;
  DwHealthMonitor *monitor;
  guint n_warnings;
  guint n_critical;
  guint n_at_end;
  gint64 seen_growth_us;
  gboolean visible;
  gboolean hidden;
};

G_DEFINE_FINAL_TYPE (DwRunItem, dw_run_item, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_NAME,
  PROP_VISIBLE,
  PROP_HIDDEN,
  N_PROPS
};

enum
{
  SIGNAL_CHANGED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

DwRunInfo *
dw_run_info_copy (const DwRunInfo *info)
{
  DwRunInfo *copy = g_new0 (DwRunInfo, 1);

  *copy = *info;
  copy->name = g_strdup (info->name);
  copy->framework = g_strdup (info->framework);
  copy->source = g_strdup (info->source);
  return copy;
}

static void
dw_run_item_finalize (GObject *object)
{
  DwRunItem *self = DW_RUN_ITEM (object);

  g_clear_pointer (&self->info, dw_run_info_free);
  g_clear_pointer (&self->monitor, dw_health_monitor_free);
  G_OBJECT_CLASS (dw_run_item_parent_class)->finalize (object);
}

static void
dw_run_item_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwRunItem *self = DW_RUN_ITEM (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_value_set_string (value, self->info->name);
      break;
    case PROP_VISIBLE:
      g_value_set_boolean (value, self->visible);
      break;
    case PROP_HIDDEN:
      g_value_set_boolean (value, self->hidden);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_run_item_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  DwRunItem *self = DW_RUN_ITEM (object);

  switch (prop_id)
    {
    case PROP_VISIBLE:
      dw_run_item_set_visible (self, g_value_get_boolean (value));
      break;
    case PROP_HIDDEN:
      dw_run_item_set_hidden (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_run_item_class_init (DwRunItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = dw_run_item_finalize;
  object_class->get_property = dw_run_item_get_property;
  object_class->set_property = dw_run_item_set_property;

  properties[PROP_NAME]
    = g_param_spec_string ("name", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_VISIBLE]
    = g_param_spec_boolean ("visible", NULL, NULL, TRUE,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_HIDDEN]
    = g_param_spec_boolean ("hidden", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* The information or the health counts changed: whatever shows the run redraws it. */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
dw_run_item_init (DwRunItem *self)
{
  self->visible = TRUE;
}

DwRunItem *
dw_run_item_new (const DwRunInfo *info)
{
  DwRunItem *self;

  g_return_val_if_fail (info != NULL, NULL);
  self = g_object_new (DW_TYPE_RUN_ITEM, NULL);
  self->info = dw_run_info_copy (info);
  return self;
}

gint64
dw_run_item_get_id (DwRunItem *self)
{
  g_return_val_if_fail (DW_IS_RUN_ITEM (self), 0);
  return self->info->id;
}

const char *
dw_run_item_get_name (DwRunItem *self)
{
  g_return_val_if_fail (DW_IS_RUN_ITEM (self), NULL);
  return self->info->name;
}

const DwRunInfo *
dw_run_item_get_info (DwRunItem *self)
{
  g_return_val_if_fail (DW_IS_RUN_ITEM (self), NULL);
  return self->info;
}

DwRunStatus
dw_run_item_get_status (DwRunItem *self)
{
  g_return_val_if_fail (DW_IS_RUN_ITEM (self), DW_RUN_STATUS_FINISHED);
  return dw_health_shown_status (self->info->status, self->n_critical, self->n_at_end);
}

void
dw_run_item_get_health (DwRunItem *self, guint *n_warnings, guint *n_critical, guint *n_at_end)
{
  g_return_if_fail (DW_IS_RUN_ITEM (self));
  if (n_warnings != NULL)
    *n_warnings = self->n_warnings;
  if (n_critical != NULL)
    *n_critical = self->n_critical;
  if (n_at_end != NULL)
    *n_at_end = self->n_at_end;
}

DwHealthMonitor *
dw_run_item_get_monitor (DwRunItem *self)
{
  g_return_val_if_fail (DW_IS_RUN_ITEM (self), NULL);
  return self->monitor;
}

gint64
dw_run_item_get_seen_growth (DwRunItem *self)
{
  g_return_val_if_fail (DW_IS_RUN_ITEM (self), 0);
  return self->seen_growth_us;
}

gboolean
dw_run_item_get_visible (DwRunItem *self)
{
  g_return_val_if_fail (DW_IS_RUN_ITEM (self), TRUE);
  return self->visible;
}

void
dw_run_item_set_visible (DwRunItem *self, gboolean visible)
{
  g_return_if_fail (DW_IS_RUN_ITEM (self));
  if (self->visible == !!visible)
    return;
  self->visible = !!visible;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VISIBLE]);
}

gboolean
dw_run_item_get_hidden (DwRunItem *self)
{
  g_return_val_if_fail (DW_IS_RUN_ITEM (self), FALSE);
  return self->hidden;
}

void
dw_run_item_set_hidden (DwRunItem *self, gboolean hidden)
{
  g_return_if_fail (DW_IS_RUN_ITEM (self));
  if (self->hidden == !!hidden)
    return;
  self->hidden = !!hidden;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HIDDEN]);
}

static gboolean
dw_run_item_same_time (double a, double b)
{
  return a == b || (isnan (a) && isnan (b));
}

static gboolean
dw_run_item_same_info (const DwRunInfo *a, const DwRunInfo *b)
{
  return a->id == b->id && g_strcmp0 (a->name, b->name) == 0
         && g_strcmp0 (a->framework, b->framework) == 0 && g_strcmp0 (a->source, b->source) == 0
         && a->first_step == b->first_step && a->last_step == b->last_step
         && dw_run_item_same_time (a->first_wall_time, b->first_wall_time)
         && dw_run_item_same_time (a->last_wall_time, b->last_wall_time) && a->status == b->status
         && a->n_batches == b->n_batches;
}

void
dw_run_item_set_info (DwRunItem *self, const DwRunInfo *info)
{
  gboolean renamed;

  g_return_if_fail (DW_IS_RUN_ITEM (self));
  g_return_if_fail (info != NULL && info->id == self->info->id);
  /* The live refresh reads every run each second: an unchanged run costs nothing to draw. */
  if (dw_run_item_same_info (self->info, info))
    return;
  renamed = g_strcmp0 (info->name, self->info->name) != 0;
  g_clear_pointer (&self->info, dw_run_info_free);
  self->info = dw_run_info_copy (info);
  if (renamed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NAME]);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

void
dw_run_item_set_monitor (DwRunItem *self, DwHealthMonitor *monitor)
{
  g_return_if_fail (DW_IS_RUN_ITEM (self));
  g_clear_pointer (&self->monitor, dw_health_monitor_free);
  self->monitor = monitor;
  dw_run_item_update_health (self);
}

void
dw_run_item_update_health (DwRunItem *self)
{
  g_autoptr (GPtrArray) events = NULL;

  g_return_if_fail (DW_IS_RUN_ITEM (self));
  if (self->monitor == NULL)
    return;
  events = dw_health_monitor_get_events (self->monitor);
  dw_health_monitor_count (self->monitor, events, &self->n_warnings, &self->n_critical,
                           &self->n_at_end);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

void
dw_run_item_set_seen_growth (DwRunItem *self, gint64 monotonic_us)
{
  g_return_if_fail (DW_IS_RUN_ITEM (self));
  self->seen_growth_us = monotonic_us;
}
