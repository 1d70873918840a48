/* dw-run-item.h — one run of the session's run list (the sidebar's model item)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What the sidebar shows of a run: its stored information, the counts of its health events, and
 * two choices of the person looking at it: "visible" (drawn on the charts when selected; the eye
 * button) and "hidden" (left out of the list until "Show Hidden Runs"). The session owns the
 * items and updates them on the main thread; rows and the window only read them, and set the two
 * choices.
 */
#pragma once

#include <glib-object.h>

#include "dw-health.h"
#include "dw-store.h"

G_BEGIN_DECLS

#define DW_TYPE_RUN_ITEM (dw_run_item_get_type ())
G_DECLARE_FINAL_TYPE (DwRunItem, dw_run_item, DW, RUN_ITEM, GObject)

DwRunItem *dw_run_item_new (const DwRunInfo *info);

gint64 dw_run_item_get_id (DwRunItem *self);
const char *dw_run_item_get_name (DwRunItem *self);
/* The stored information (transfer none: replaced by dw_run_item_set_info). */
const DwRunInfo *dw_run_item_get_info (DwRunItem *self);
/* The status shown (dw_health_shown_status of the stored one and the health counts). */
DwRunStatus dw_run_item_get_status (DwRunItem *self);
void dw_run_item_get_health (DwRunItem *self, guint *n_warnings, guint *n_critical,
                             guint *n_at_end);
/* The run's health monitor once its first evaluation is back (transfer none), else NULL. */
DwHealthMonitor *dw_run_item_get_monitor (DwRunItem *self);
/* Monotonic time new points of the run were last seen in this session, 0: never. */
gint64 dw_run_item_get_seen_growth (DwRunItem *self);

gboolean dw_run_item_get_visible (DwRunItem *self);
void dw_run_item_set_visible (DwRunItem *self, gboolean visible);
gboolean dw_run_item_get_hidden (DwRunItem *self);
void dw_run_item_set_hidden (DwRunItem *self, gboolean hidden);

/* For the session: each emits "changed" (the row redraws) when something it shows changed. */
void dw_run_item_set_info (DwRunItem *self, const DwRunInfo *info);
void dw_run_item_set_monitor (DwRunItem *self, DwHealthMonitor *monitor);
/* Recounts the health events of the monitor into the item. */
void dw_run_item_update_health (DwRunItem *self);
void dw_run_item_set_seen_growth (DwRunItem *self, gint64 monotonic_us);

DwRunInfo *dw_run_info_copy (const DwRunInfo *info);

G_END_DECLS
