/* dw-ui-test-util.h — helpers shared by the GUI tests and benchmarks
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Dispatches every pending event of the default main context without blocking. */
void dw_ui_test_iterate (void);
/* The first toplevel window of @type (an instance of it or of a subtype), or NULL. */
GtkWindow *dw_ui_test_find_toplevel (GType type);
/* Resident set size of this process in KiB (VmRSS), or -1 where it cannot be read. */
long dw_ui_test_rss_kb (void);

/* Real input through the X server (the XTEST extension of Xvfb, libXtst loaded at run time), so
 * events take the whole path a person's do: X server → GDK → capture/bubble through the widget
 * tree. FALSE when not on X11 or without XTEST (the caller then skips). Coordinates are in
 * @widget's own coordinate space; each call waits until the events were dispatched. */
gboolean dw_ui_test_xtest_available (GtkWidget *widget);
gboolean dw_ui_test_pointer_move (GtkWidget *widget, double x, double y);
/* @notches > 0 scrolls down (button 5), < 0 up (button 4), one press/release per notch. */
gboolean dw_ui_test_wheel (GtkWidget *widget, double x, double y, int notches);
/* Button 1 pressed at (@x0, @y0), moved in steps to (@x1, @y1) and released there. */
gboolean dw_ui_test_drag (GtkWidget *widget, double x0, double y0, double x1, double y1);
/* Button 1 press and release at (@x, @y). */
gboolean dw_ui_test_click (GtkWidget *widget, double x, double y);
/* Press and release of X button @button (1 primary, 3 secondary) at (@x, @y). */
gboolean dw_ui_test_click_button (GtkWidget *widget, double x, double y, guint button);
/* Presses and releases the key of @keyval (with Control held when @control) in @widget's window,
 * the pointer first moved into @widget so the X focus (PointerRoot without a window manager)
 * is there. */
gboolean dw_ui_test_key (GtkWidget *widget, guint keyval, gboolean control);
/* Iterates the main context for @ms milliseconds. */
void dw_ui_test_iterate_ms (guint ms);
/* Deletes @path and everything below it (a test's temporary folder). */
void dw_ui_test_remove_tree (const char *path);
/* Runs the main loop until dw_window_is_ready() (@window is a DwWindow), then 100 ms more so that
 * the charts have drawn; FALSE after @timeout_ms. */
gboolean dw_ui_test_wait_window_ready (gpointer window, guint timeout_ms);
/* The first widget named @name (gtk_widget_set_name / the .ui id) in @widget's tree, or NULL. */
GtkWidget *dw_ui_test_find_named (GtkWidget *widget, const char *name);
/* Runs the main loop until the Tune page (@view is a DwTuneView) is no longer busy: a few
 * iterations first, since a change may still be waiting for its frame; fails after 120 s. */
void dw_ui_test_wait_tune_idle (gpointer view);

G_END_DECLS
