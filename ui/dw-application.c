/* dw-application.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-application"

#include "config.h"

#include <glib/gi18n.h>

#include "dw-application.h"
#include "dw-window.h"

struct _DwApplication
{
  AdwApplication parent_instance;
};

G_DEFINE_FINAL_TYPE (DwApplication, dw_application, ADW_TYPE_APPLICATION)

DwApplication *
dw_application_new (const char *application_id, GApplicationFlags flags)
{
  return g_object_new (DW_TYPE_APPLICATION, "application-id", application_id, "flags", flags,
                       "resource-base-path", RESOURCE_PATH, NULL);
}

static void
dw_application_activate (GApplication *app)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));

  if (window == NULL)
    window = g_object_new (DW_TYPE_WINDOW, "application", app, NULL);
  gtk_window_present (window);
}

static void
dw_application_class_init (DwApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  app_class->activate = dw_application_activate;
}

static void
dw_application_init (DwApplication *self)
{
}
