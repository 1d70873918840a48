/* dw-window-private.h — what dw-window.c shares with its actions and drag-and-drop files
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include "dw-health-panel.h"
#include "dw-monitor-view.h"
#include "dw-run-row.h"
#include "dw-session.h"
#include "dw-tune-view.h"
#include "dw-window.h"

G_BEGIN_DECLS

struct _DwWindow
{
  AdwApplicationWindow parent_instance;

  AdwToastOverlay *toast_overlay;
  GtkStack *main_stack;
  AdwLeaflet *leaflet;
  GtkListBox *run_list;
  GtkSearchEntry *run_filter;
  AdwViewSwitcherTitle *switcher_title;
  GtkLabel *live_label;
  GtkRevealer *verdict_revealer;
  GtkWidget *verdict_box;
  GtkLabel *verdict_label;
  AdwViewStack *view_stack;
  AdwViewStackPage *health_page;
  DwMonitorView *monitor_view;
  DwHealthPanel *health_panel;
  DwTuneView *tune_view;
  GMenu *recent_section;

  GSettings *settings;
  DwSession *session;
  GArray *shown; /* gint64 run ids shown, selection order */
  gboolean updating_list;
  gboolean show_hidden; /* runs the user hid are listed too */
  GArray *keynav_kept;  /* run ids selected before a focus key; NULL when no key is handled */
  char *live_text;
  GPtrArray *toasts; /* texts of the toasts shown, newest last (at most MAX_TOAST_LOG) */
};

/* A toast in the window (and in dw_window_get_toasts). */
void _dw_window_toast (DwWindow *self, const char *text);
/* Shows the rows of the runs that match the filter text and are not hidden, hides the rest. */
void _dw_window_apply_run_filter (DwWindow *self);
/* The sidebar row of @run_id, NULL when it is not in the list. */
DwRunRow *_dw_window_find_row (DwWindow *self, gint64 run_id);

/* dw-window-actions.c: the win.* actions, and "Open Recent" kept in step with the setting. */
void _dw_window_actions_install (GtkWidgetClass *widget_class);
void _dw_window_actions_update_recent (DwWindow *self);
void _dw_window_actions_remember_recent (DwWindow *self, char **paths);

/* dw-window-dnd.c: files and folders dropped on the window are opened. */
void _dw_window_dnd_init (DwWindow *self);

G_END_DECLS
