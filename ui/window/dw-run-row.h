/* dw-run-row.h — one run in the sidebar: colour swatch, name, framework and state
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <gtk/gtk.h>

#include "dw-store.h"

G_BEGIN_DECLS

#define DW_TYPE_RUN_ROW (dw_run_row_get_type ())
G_DECLARE_FINAL_TYPE (DwRunRow, dw_run_row, DW, RUN_ROW, GtkListBoxRow)

GtkWidget *dw_run_row_new (const DwRunInfo *info, const GdkRGBA *color);

gint64 dw_run_row_get_run_id (DwRunRow *self);
const DwRunInfo *dw_run_row_get_info (DwRunRow *self);
/* Replaces the shown information (a follower appended, health changed the state). */
void dw_run_row_update (DwRunRow *self, const DwRunInfo *info);
/* Health of the run: a warning icon, and "collapsed" for a finished run with critical events. */
/* @n_at_end: how many warning or critical rules were still firing at the last point of their
 * series; a finished run with any of them (or any critical event) is shown as collapsed. */
void dw_run_row_set_health (DwRunRow *self, guint n_warnings, guint n_critical, guint n_at_end);
/* The text of the state badge: "live", "finished", "collapsed" or "collapsing" (translated). */
const char *dw_run_row_get_state_text (DwRunRow *self);
void dw_run_row_get_color (DwRunRow *self, GdkRGBA *color);

/* The colour of run @run_id: stable across sessions and selections. */
void dw_run_color (gint64 run_id, GdkRGBA *color);
DwRunInfo *dw_run_info_copy (const DwRunInfo *info);

G_END_DECLS
