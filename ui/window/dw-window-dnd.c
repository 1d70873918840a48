/* dw-window-dnd.c — files and folders dropped on the window are opened
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-window"

#include "config.h"

#include <glib/gi18n.h>

#include "dw-window-private.h"

static gboolean
dw_window_dnd_drop_cb (GtkDropTarget *target, const GValue *value, double x, double y,
                       DwWindow *self)
{
  GSList *files;
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  g_auto (GStrv) paths = NULL;

  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  files = g_value_get_boxed (value);
  for (GSList *link = files; link != NULL; link = link->next)
    {
      g_autofree char *path = g_file_get_path (link->data);
      if (path != NULL)
        g_strv_builder_add (builder, path);
    }
  paths = g_strv_builder_end (builder);
  if (paths[0] == NULL)
    {
      _dw_window_toast (self, _ ("Only local files and folders can be opened"));
      return FALSE;
    }
  dw_window_ingest_paths (self, (const char *const *)paths);
  return TRUE;
}

void
_dw_window_dnd_init (DwWindow *self)
{
  GtkDropTarget *drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);

  g_signal_connect_object (drop, "drop", G_CALLBACK (dw_window_dnd_drop_cb), self, 0);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));
}
