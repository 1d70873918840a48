/* dw-window-actions.c — the window's win.* actions
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Accelerators are set in dw-application.c and listed in ui/gtk/help-overlay.ui.
 */
#define G_LOG_DOMAIN "dw-window"

#include "config.h"

#include <glib/gi18n.h>

#include "dw-window-private.h"

/* ---------------------------------------------------------------- opening runs */

static void
dw_window_actions_folder_chosen_cb (GtkNativeDialog *dialog, int response, DwWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GListModel) files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
      g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
      g_auto (GStrv) paths = NULL;

      for (guint i = 0; i < g_list_model_get_n_items (files); i++)
        {
          g_autoptr (GFile) file = g_list_model_get_item (files, i);
          g_autofree char *path = g_file_get_path (file);
          if (path != NULL)
            g_strv_builder_add (builder, path);
        }
      paths = g_strv_builder_end (builder);
      if (paths[0] != NULL)
        dw_window_ingest_paths (self, (const char *const *)paths);
    }
  gtk_native_dialog_destroy (dialog);
  g_object_unref (dialog);
}

static void
dw_window_actions_open_folder (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  GtkFileChooserNative *dialog
    = gtk_file_chooser_native_new (_ ("Open Run Folder"), GTK_WINDOW (widget),
                                   GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, _ ("_Open"), NULL);

  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (dw_window_actions_folder_chosen_cb), widget);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
dw_window_actions_open_recent (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwWindow *self = DW_WINDOW (widget);
  const char *path = g_variant_get_string (parameter, NULL);
  const char *paths[] = { path, NULL };

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      /* TRANSLATORS: a recent run folder was moved or deleted; %s is its path */
      g_autofree char *text = g_strdup_printf (_ ("%s no longer exists"), path);
      _dw_window_toast (self, text);
      return;
    }
  dw_window_ingest_paths (self, paths);
}

/* "Open Recent" in the primary menu, from the recent-runs setting. */
void
_dw_window_actions_update_recent (DwWindow *self)
{
  g_auto (GStrv) recent = NULL;
  g_autoptr (GMenu) submenu = NULL;

  g_menu_remove_all (self->recent_section);
  if (self->settings == NULL)
    return;
  recent = g_settings_get_strv (self->settings, "recent-runs");
  if (recent[0] == NULL)
    return;
  submenu = g_menu_new ();
  for (guint i = 0; recent[i] != NULL; i++)
    {
      g_autofree char *base = g_path_get_basename (recent[i]);
      g_auto (GStrv) parts = g_strsplit (base, "_", -1);
      /* Underscores would be read as mnemonics. */
      g_autofree char *label = g_strjoinv ("__", parts);
      g_autoptr (GMenuItem) item = g_menu_item_new (label, NULL);

      g_menu_item_set_action_and_target_value (item, "win.open-recent",
                                               g_variant_new_string (recent[i]));
      g_menu_append_item (submenu, item);
    }
  g_menu_append_submenu (self->recent_section, _ ("Open _Recent"), G_MENU_MODEL (submenu));
}

void
_dw_window_actions_remember_recent (DwWindow *self, char **paths)
{
  g_autoptr (GStrvBuilder) builder = NULL;
  g_auto (GStrv) old = NULL, recent = NULL;
  guint n_kept = 0, max_kept;

  if (self->settings == NULL)
    return;
  max_kept = g_settings_get_uint (self->settings, "recent-runs-max");
  builder = g_strv_builder_new ();
  for (guint i = 0; paths[i] != NULL && n_kept < max_kept; i++, n_kept++)
    g_strv_builder_add (builder, paths[i]);
  old = g_settings_get_strv (self->settings, "recent-runs");
  for (guint i = 0; old[i] != NULL && n_kept < max_kept; i++)
    if (!g_strv_contains ((const char *const *)paths, old[i]))
      {
        g_strv_builder_add (builder, old[i]);
        n_kept++;
      }
  recent = g_strv_builder_end (builder);
  g_settings_set_strv (self->settings, "recent-runs", (const char *const *)recent);
}

static void
dw_window_actions_load_demo (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  dw_window_load_demo (DW_WINDOW (widget), NULL);
}

/* ---------------------------------------------------------------- the runs table */

static void
dw_window_actions_hide_run (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwWindow *self = DW_WINDOW (widget);
  DwRunItem *item = dw_session_lookup (self->session, g_variant_get_int64 (parameter), NULL);

  if (item != NULL)
    dw_run_item_set_hidden (item, TRUE);
}

static void
dw_window_actions_remove_response_cb (AdwMessageDialog *dialog, const char *response,
                                      DwWindow *self)
{
  gint64 run_id = GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (dialog), "dw-run-id"));
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  DwRunItem *item;

  if (g_strcmp0 (response, "remove") != 0)
    return;
  item = dw_session_lookup (self->session, run_id, NULL);
  /* TRANSLATORS: toast after a run was deleted from the store; %s is its name */
  text = g_strdup_printf (_ ("Removed “%s”"), item ? dw_run_item_get_name (item) : "");
  if (!dw_session_remove_run (self->session, run_id, &error))
    _dw_window_toast (self, error->message);
  else
    _dw_window_toast (self, text);
}

/* Asks first: the run's points and batches are deleted from the store (its files stay). */
static void
dw_window_actions_remove_run (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwWindow *self = DW_WINDOW (widget);
  gint64 run_id = g_variant_get_int64 (parameter);
  DwRunItem *item = dw_session_lookup (self->session, run_id, NULL);
  g_autofree char *body = NULL;
  GtkWidget *dialog;

  if (item == NULL)
    return;
  body = g_strdup_printf (
    /* TRANSLATORS: body of the Remove Run dialog; %s is the run name */
    _ ("“%s” and everything stored for it will be deleted from the store. Its log files stay "
       "where they are and can be opened again."),
    dw_run_item_get_name (item));
  dialog = adw_message_dialog_new (GTK_WINDOW (self), _ ("Remove Run?"), body);
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog), "cancel", _ ("_Cancel"), "remove",
                                    _ ("_Remove"), NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "remove",
                                              ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_object_set_data (G_OBJECT (dialog), "dw-run-id", GSIZE_TO_POINTER ((gsize)run_id));
  g_signal_connect_object (dialog, "response", G_CALLBACK (dw_window_actions_remove_response_cb),
                           self, 0);
  gtk_window_present (GTK_WINDOW (dialog));
}

/* ---------------------------------------------------------------- pages and charts */

static void
dw_window_actions_show_runs (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  adw_leaflet_navigate (DW_WINDOW (widget)->leaflet, ADW_NAVIGATION_DIRECTION_BACK);
}

static void
dw_window_actions_view (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  dw_window_set_view (DW_WINDOW (widget), g_variant_get_string (parameter, NULL));
}

static void
dw_window_actions_log_scale (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwChartCard *card = dw_monitor_view_get_current_card (DW_WINDOW (widget)->monitor_view);

  if (card != NULL)
    dw_chart_card_set_log_y (card, !dw_chart_card_get_log_y (card));
}

static void
dw_window_actions_tag_filter (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwWindow *self = DW_WINDOW (widget);

  dw_window_set_view (self, "monitor");
  dw_monitor_view_focus_tag_entry (self->monitor_view);
}

static void
dw_window_actions_reset_zoom (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  dw_monitor_view_reset_zoom (DW_WINDOW (widget)->monitor_view);
}

static void
dw_window_actions_export_chart (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwChartCard *card = dw_monitor_view_get_current_card (DW_WINDOW (widget)->monitor_view);

  if (card != NULL)
    gtk_widget_activate_action (GTK_WIDGET (card), "card.export", "s", "png");
}

void
_dw_window_actions_install (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.open-folder", NULL,
                                   dw_window_actions_open_folder);
  gtk_widget_class_install_action (widget_class, "win.load-demo", NULL,
                                   dw_window_actions_load_demo);
  gtk_widget_class_install_action (widget_class, "win.open-recent", "s",
                                   dw_window_actions_open_recent);
  gtk_widget_class_install_action (widget_class, "win.show-runs", NULL,
                                   dw_window_actions_show_runs);
  gtk_widget_class_install_action (widget_class, "win.view", "s", dw_window_actions_view);
  gtk_widget_class_install_action (widget_class, "win.log-scale", NULL,
                                   dw_window_actions_log_scale);
  gtk_widget_class_install_action (widget_class, "win.tag-filter", NULL,
                                   dw_window_actions_tag_filter);
  gtk_widget_class_install_action (widget_class, "win.reset-zoom", NULL,
                                   dw_window_actions_reset_zoom);
  gtk_widget_class_install_action (widget_class, "win.export-chart", NULL,
                                   dw_window_actions_export_chart);
  gtk_widget_class_install_action (widget_class, "win.hide-run", "x", dw_window_actions_hide_run);
  gtk_widget_class_install_action (widget_class, "win.remove-run", "x",
                                   dw_window_actions_remove_run);
  gtk_widget_class_install_property_action (widget_class, "win.show-hidden-runs",
                                            "show-hidden-runs");
}
