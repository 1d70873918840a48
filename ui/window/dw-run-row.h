/* dw-run-row.h — one run in the sidebar: colour swatch, name, framework and state
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <gtk/gtk.h>

#include "dw-run-item.h"

G_BEGIN_DECLS

#define DW_TYPE_RUN_ROW (dw_run_row_get_type ())
G_DECLARE_FINAL_TYPE (DwRunRow, dw_run_row, DW, RUN_ROW, GtkListBoxRow)

/* A row showing @item, kept up to date as the session changes it. */
GtkWidget *dw_run_row_new (DwRunItem *item);
DwRunItem *dw_run_row_get_item (DwRunRow *self);

gint64 dw_run_row_get_run_id (DwRunRow *self);
const DwRunInfo *dw_run_row_get_info (DwRunRow *self);
/* The text of the state badge: "live", "finished", "collapsed" or "collapsing" (translated). */
const char *dw_run_row_get_state_text (DwRunRow *self);
void dw_run_row_get_color (DwRunRow *self, GdkRGBA *color);

G_END_DECLS
