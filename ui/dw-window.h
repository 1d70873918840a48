/* dw-window.h
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define DW_TYPE_WINDOW (dw_window_get_type ())

G_DECLARE_FINAL_TYPE (DwWindow, dw_window, DW, WINDOW, AdwApplicationWindow)

G_END_DECLS
