/* dw-error-window.c — the window shown when the store cannot be opened (see the header)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-error-window"

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "dw-error-window.h"

static AdwStatusPage *
status_page (GtkWidget *window)
{
  return ADW_STATUS_PAGE (g_object_get_data (G_OBJECT (window), "dw-status-page"));
}

GtkWidget *
dw_error_window_new (GtkApplication *app, const char *path, const GError *error)
{
  GtkWidget *window = adw_application_window_new (app);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *page = adw_status_page_new ();
  GtkWidget *quit = gtk_button_new_with_mnemonic (_ ("_Quit"));
  g_autofree char *where = g_filename_display_name (path ? path : "");
  g_autofree char *text = NULL, *markup = NULL;

  g_return_val_if_fail (error != NULL, NULL);
  gtk_window_set_title (GTK_WINDOW (window), _ ("Driftwatch"));
  gtk_window_set_default_size (GTK_WINDOW (window), 720, 560);
  gtk_box_append (GTK_BOX (box), adw_header_bar_new ());
  adw_status_page_set_icon_name (ADW_STATUS_PAGE (page), "dialog-error-symbolic");
  adw_status_page_set_title (ADW_STATUS_PAGE (page), _ ("Cannot Open the Store"));
  /* TRANSLATORS: the error (naming the store file), then what to do */
  text = g_strdup_printf (_ ("%s\n\nThe file was not changed. Open another store with "
                             "“driftwatch --db FILE”, or move this one aside to start a new one."),
                          error->message);
  if (*where && strstr (error->message, where) == NULL)
    {
      g_autofree char *with = g_strdup_printf ("%s\n\n%s", where, text);
      g_free (text);
      text = g_steal_pointer (&with);
    }
  /* the description is Pango markup in libadwaita 1.2: a path with & or < shows as written */
  markup = g_markup_escape_text (text, -1);
  adw_status_page_set_description (ADW_STATUS_PAGE (page), markup);
  g_object_set_data_full (G_OBJECT (window), "dw-description", g_steal_pointer (&text), g_free);
  gtk_widget_set_halign (quit, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (quit, "pill");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (quit), "window.close");
  adw_status_page_set_child (ADW_STATUS_PAGE (page), quit);
  gtk_widget_set_vexpand (page, TRUE);
  gtk_box_append (GTK_BOX (box), page);
  adw_application_window_set_content (ADW_APPLICATION_WINDOW (window), box);
  g_object_set_data (G_OBJECT (window), "dw-status-page", page);
  return window;
}

const char *
dw_error_window_get_title (GtkWidget *window)
{
  return adw_status_page_get_title (status_page (window));
}

const char *
dw_error_window_get_description (GtkWidget *window)
{
  return g_object_get_data (G_OBJECT (window), "dw-description");
}
