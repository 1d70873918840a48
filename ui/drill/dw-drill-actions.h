/* dw-drill-actions.h — the window action that opens the token drill-down
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <gtk/gtk.h>

#include "dw-store-reader.h"

G_BEGIN_DECLS

/* Adds `win.show-tokens` with parameter "(xx)" (run id, step) to @window: it presents the
 * drill-down (a window of its own, transient for @window, reused for every later call) on that
 * step of that run, read through @reader (the session's). */
void dw_drill_install_actions (GtkApplicationWindow *window, DwStoreReader *reader);
/* Connects @chart's "step-activated" (a DwChart's secondary click on a step) to
 * `win.show-tokens` for @run_id at that step; nothing when the chart has no such signal. */
void dw_drill_connect_chart (GtkWidget *chart, gint64 run_id);
/* The drill-down window of @window, or NULL before the action first ran. */
GtkWindow *dw_drill_get_window (GtkApplicationWindow *window);

G_END_DECLS
