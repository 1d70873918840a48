/* dw-error-window.h — the window shown when the store cannot be opened
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A store that is not a Driftwatch file, has a newer schema or cannot be read gets a window that
 * says so (AdwStatusPage: the file, SQLite's or the store's message, what to do), not only a
 * line on stderr; the file is left untouched.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

/* A new window of @app about @path and @error. */
GtkWidget *dw_error_window_new (GtkApplication *app, const char *path, const GError *error);
/* The status page's title and description (tests). */
const char *dw_error_window_get_title (GtkWidget *window);
const char *dw_error_window_get_description (GtkWidget *window);

G_END_DECLS
