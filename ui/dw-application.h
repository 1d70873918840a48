/* dw-application.h
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <adwaita.h>

#include "dw-store.h"

G_BEGIN_DECLS

#define DW_TYPE_APPLICATION (dw_application_get_type ())

G_DECLARE_FINAL_TYPE (DwApplication, dw_application, DW, APPLICATION, AdwApplication)

DwApplication *dw_application_new (const char *application_id, GApplicationFlags flags);
GSettings *dw_application_get_settings (DwApplication *self);

/* The store windows show: --db FILE, a temporary one with --demo, else the default
 * $XDG_DATA_HOME/driftwatch/driftwatch.db. NULL with @error when it cannot be opened. */
DwStore *dw_application_get_store (DwApplication *self, GError **error);

/* 1 when a --screenshot failed or the store could not be opened. */
int dw_application_get_exit_status (DwApplication *self);

G_END_DECLS
