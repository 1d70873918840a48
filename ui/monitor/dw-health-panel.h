/* dw-health-panel.h — the Health page: every health event of the shown runs
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One expandable row per event: the rule, the run and the first step it fired on; expanded, what
 * it means and what to try. "Show in Charts" emits ::show-step so the window can move the charts.
 */
#pragma once

#include <gtk/gtk.h>

#include "dw-health.h"

G_BEGIN_DECLS

#define DW_TYPE_HEALTH_PANEL (dw_health_panel_get_type ())
G_DECLARE_FINAL_TYPE (DwHealthPanel, dw_health_panel, DW, HEALTH_PANEL, GtkWidget)

GtkWidget *dw_health_panel_new (void);

void dw_health_panel_clear (DwHealthPanel *self);
/* Adds @events (DwHealthEvent*, copied) of run @run_id named @run_name. */
void dw_health_panel_add_events (DwHealthPanel *self, gint64 run_id, const char *run_name,
                                 GPtrArray *events);
guint dw_health_panel_get_n_events (DwHealthPanel *self);
/* What clicking "Show in Charts" on the @index-th row (display order) does. */
void dw_health_panel_activate_event (DwHealthPanel *self, guint index);
/* The report of every event as `driftwatch-cli check` prints it (the copy button). */
char *dw_health_panel_dup_report (DwHealthPanel *self);

G_END_DECLS
