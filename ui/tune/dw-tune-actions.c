/* dw-tune-actions.c — the Tune page's Copy, Paste and Save Config actions, and the import of a
 * config's text
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-tune-actions"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "dw-tune-view-private.h"

#include "dw-tune-export.h"

/* Reads @text in whichever format it is written (YAML, Hydra overrides, …) and sets it. */
gboolean
dw_tune_actions_import (DwTuneView *self, const char *text, GError **error)
{
  DwConfig c;
  const char *format = NULL;
  if (!dw_tune_import_detect (text, self->gen, &c, &format, error))
    return FALSE;
  dw_tune_controls_set_config (self, NULL, &c);
  /* TRANSLATORS: first %s is a generation ("verl-0.7"), second a format ("yaml", "hydra") */
  g_autofree char *msg
    = g_strdup_printf (_ ("Imported a %s config (%s)"), dw_generation_name (c.generation), format);
  gtk_label_set_text (self->status_label, msg);
  return TRUE;
}

static const char *
dw_tune_actions_selected_format (DwTuneView *self)
{
  guint i = gtk_drop_down_get_selected (self->format_dropdown);
  return self->formats && i != GTK_INVALID_LIST_POSITION && self->formats[i] ? self->formats[i]
                                                                             : "yaml";
}

static void
dw_tune_actions_copy_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  DwTuneView *self = DW_TUNE_VIEW (widget);
  g_autoptr (GError) error = NULL;
  g_autofree char *text
    = dw_tune_export_config (&self->config, dw_tune_actions_selected_format (self), &error);
  if (!text)
    {
      g_autofree char *msg = g_strdup_printf (_ ("Cannot export the config: %s"), error->message);
      gtk_label_set_text (self->status_label, msg);
      return;
    }
  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), text);
  gtk_label_set_text (self->status_label, _ ("Config copied to the clipboard"));
}

static void
dw_tune_actions_paste_text_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (DwTuneView) self = user_data;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), result, &error);
  if (!text || !dw_tune_actions_import (self, text, &error))
    {
      g_autofree char *msg
        = g_strdup_printf (_ ("Cannot import the config: %s"),
                           error ? error->message : _ ("the clipboard holds no text"));
      gtk_label_set_text (self->status_label, msg);
    }
}

static void
dw_tune_actions_paste_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (widget), NULL,
                                 dw_tune_actions_paste_text_cb, g_object_ref (widget));
}

static void
dw_tune_actions_save_response_cb (GtkNativeDialog *dialog, int response, DwTuneView *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autoptr (GError) error = NULL;
      g_autofree char *text
        = dw_tune_export_config (&self->config, dw_tune_actions_selected_format (self), &error);
      if (text
          && g_file_replace_contents (file, text, strlen (text), NULL, FALSE,
                                      G_FILE_CREATE_REPLACE_DESTINATION, NULL, NULL, &error))
        {
          g_autofree char *name = g_file_get_parse_name (file);
          g_autofree char *msg = g_strdup_printf (_ ("Config saved to %s"), name);
          gtk_label_set_text (self->status_label, msg);
        }
      else
        {
          g_autofree char *msg = g_strdup_printf (_ ("Cannot save the config: %s"), error->message);
          gtk_label_set_text (self->status_label, msg);
        }
    }
  g_clear_object (&self->save_dialog);
}

static void
dw_tune_actions_save_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  DwTuneView *self = DW_TUNE_VIEW (widget);
  if (self->save_dialog)
    return;
  GtkRoot *root = gtk_widget_get_root (widget);
  self->save_dialog = gtk_file_chooser_native_new (
    _ ("Save Config"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
    GTK_FILE_CHOOSER_ACTION_SAVE, _ ("_Save"), _ ("_Cancel"));
  const char *f = dw_tune_actions_selected_format (self);
  gtk_file_chooser_set_current_name (
    GTK_FILE_CHOOSER (self->save_dialog),
    strcmp (f, "yaml") == 0 ? (
      dw_tune_controls_role_key (self, DW_ROLE_FUNCTION) ? "mis.yaml" : "rollout_correction.yaml")
                            : "rollout_correction.txt");
  g_signal_connect (self->save_dialog, "response", G_CALLBACK (dw_tune_actions_save_response_cb),
                    self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->save_dialog));
}

void
dw_tune_actions_install (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "tune.copy-config", NULL,
                                   dw_tune_actions_copy_action);
  gtk_widget_class_install_action (widget_class, "tune.save-config", NULL,
                                   dw_tune_actions_save_action);
  gtk_widget_class_install_action (widget_class, "tune.paste-config", NULL,
                                   dw_tune_actions_paste_action);
}
