/* dw-application.h
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define DW_TYPE_APPLICATION (dw_application_get_type ())

G_DECLARE_FINAL_TYPE (DwApplication, dw_application, DW, APPLICATION, AdwApplication)

DwApplication *dw_application_new (const char *application_id, GApplicationFlags flags);
GSettings *dw_application_get_settings (DwApplication *self);

G_END_DECLS
