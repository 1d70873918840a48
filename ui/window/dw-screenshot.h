/* dw-screenshot.h — render a window to a PNG once its charts have data and have been drawn
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* TRUE when the window has nothing left to load (see dw_window_is_ready()). */
typedef gboolean (*DwReadyFunc) (GtkWidget *window);

/* Waits (from the main loop) until @ready says so and two more frames have been drawn, then saves
 * @window's rendering to @path and calls @done with the error, if any. Gives up after
 * @timeout_ms. */
void dw_screenshot_window (GtkWidget *window, const char *path, DwReadyFunc ready, guint timeout_ms,
                           void (*done) (GtkWidget *window, const GError *error, gpointer data),
                           gpointer data);

/* Renders @widget (allocated, realized) to @path as PNG, now. */
gboolean dw_screenshot_save (GtkWidget *widget, const char *path, GError **error);

G_END_DECLS
