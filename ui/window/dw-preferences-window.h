/* dw-preferences-window.h — the Preferences window, bound to the application's GSettings
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define DW_TYPE_PREFERENCES_WINDOW (dw_preferences_window_get_type ())

G_DECLARE_FINAL_TYPE (DwPreferencesWindow, dw_preferences_window, DW, PREFERENCES_WINDOW,
                      AdwPreferencesWindow)

GtkWidget *dw_preferences_window_new (GSettings *settings);
GSettings *dw_preferences_window_get_settings (DwPreferencesWindow *self);

G_END_DECLS
