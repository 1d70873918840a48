/* dw-window.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-window"

#include "config.h"

#include <glib/gi18n.h>

#include "dw-window.h"

struct _DwWindow
{
  AdwApplicationWindow parent_instance;
};

G_DEFINE_FINAL_TYPE (DwWindow, dw_window, ADW_TYPE_APPLICATION_WINDOW)

static void
dw_window_class_init (DwWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PATH "/dw-window.ui");
}

static void
dw_window_init (DwWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
