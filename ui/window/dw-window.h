/* dw-window.h — the main window: runs sidebar, Monitor / Tune / Health pages
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <adwaita.h>

#include "dw-store.h"

G_BEGIN_DECLS

#define DW_TYPE_WINDOW (dw_window_get_type ())
G_DECLARE_FINAL_TYPE (DwWindow, dw_window, DW, WINDOW, AdwApplicationWindow)

/* @restore_state: size and maximized state are restored from and saved to GSettings (off for
 * screenshots and tests). */
DwWindow *dw_window_new (GtkApplication *app, DwStore *store, gboolean restore_state);
DwStore *dw_window_get_store (DwWindow *self);

/* Ingests files or folders in a worker thread, then shows the runs that received data. Errors
 * and skipped bad input are reported as toasts. */
void dw_window_ingest_paths (DwWindow *self, const char *const *paths);
/* Writes the collapse demo to @dir (NULL: $XDG_CACHE_HOME/driftwatch/demo-collapse) and ingests it.
 */
void dw_window_load_demo (DwWindow *self, const char *dir);
/* Re-reads the run list (a run appeared or changed outside the window). */
void dw_window_reload_runs (DwWindow *self);
/* Selects the runs @run_ids (overlaid in the Monitor page). */
void dw_window_select_runs (DwWindow *self, const gint64 *run_ids, guint n);

/* "monitor", "tune" or "health". */
void dw_window_set_view (DwWindow *self, const char *name);
/* TRUE while nothing is being ingested or loaded and the shown runs' charts have their data. */
gboolean dw_window_is_ready (DwWindow *self);
/* Appends what was stored since the last look for the shown runs and evaluates their health
 * rules on it (what the refresh timer and the follower do). */
void dw_window_refresh (DwWindow *self);

GtkWidget *dw_window_get_monitor_view (DwWindow *self);
GtkWidget *dw_window_get_health_panel (DwWindow *self);
GtkListBox *dw_window_get_run_list (DwWindow *self);
/* The "live · last point N s ago" text ("" when no shown run is live). */
const char *dw_window_get_live_text (DwWindow *self);
/* The texts of the toasts shown so far (the last 64), oldest first; transfer none. */
GPtrArray *dw_window_get_toasts (DwWindow *self);

/* The verdict line shown over the pages ("Collapsed at step 140: …"), NULL when hidden. */
const char *dw_window_get_verdict (DwWindow *self);

G_END_DECLS
