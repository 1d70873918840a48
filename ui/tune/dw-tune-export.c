/* dw-tune-export.c — config export for the tune view (see the header), and the page's Copy,
 * Paste and Save Config actions
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-tune-export"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "dw-tune-export.h"

#include "dw-config-export.h"
#include "dw-tune-view-private.h"

static gboolean
dw_tune_export_parse_format (const char *format, DwExportFormat *f, GError **error)
{
  if (dw_export_format_from_name (format, f))
    return TRUE;
  g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT, "unknown format %s", format);
  return FALSE;
}

char *
dw_tune_export_config (const DwConfig *config, const char *format, GError **error)
{
  DwExportFormat f;
  if (!dw_tune_export_parse_format (format, &f, error))
    return NULL;
  return dw_config_export (config, f, error);
}

const char *const *
dw_tune_export_formats (DwGeneration gen)
{
  static const char *lists[DW_N_GENERATIONS][DW_N_EXPORT_FORMATS + 1];
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      for (int g = 0; g < DW_N_GENERATIONS; g++)
        {
          int n = 0;
          for (int f = 0; f < DW_N_EXPORT_FORMATS; f++)
            if (dw_export_format_supported ((DwGeneration)g, (DwExportFormat)f))
              lists[g][n++] = dw_export_format_name ((DwExportFormat)f);
          lists[g][n] = NULL;
        }
      g_once_init_leave (&once, 1);
    }
  return (const char *const *)lists[gen];
}

gboolean
dw_tune_export_key_accepted (DwGeneration gen, const char *key)
{
  return dw_export_key_accepted (gen, key);
}

void
dw_tune_export_drop_unread (DwConfig *config)
{
  DwConfig read = *config;

  /* decided on the config as it is, then removed together */
  for (size_t i = 0; i < config->n_keys; i++)
    if (!dw_export_key_read (config, config->keys[i]))
      dw_config_unset (&read, config->keys[i]);
  *config = read;
}

gboolean
dw_tune_import_config (const char *text, DwGeneration gen, const char *format, DwConfig *out,
                       GError **error)
{
  DwExportFormat f;
  if (!dw_tune_export_parse_format (format, &f, error))
    return FALSE;
  return dw_config_import (text, -1, format, gen, f, out, error);
}

gboolean
dw_tune_import_detect (const char *text, DwGeneration prefer, DwConfig *out,
                       const char **format_out, GError **error)
{
  DwGeneration gen;
  DwExportFormat f;
  dw_config_import_detect (text, -1, &gen, &f);
  /* the page's generation when the text is in its vocabulary (verl-0.8.0 and verl-0.9.0 share
   * one, as do verl-0.6.1 and 2f2996b7d) and it reads there; else the one detected */
  if (prefer != gen && dw_generation_info (prefer)->family == dw_generation_info (gen)->family)
    {
      DwConfig trial;
      if (dw_config_import (text, -1, "clipboard", prefer, f, &trial, NULL))
        gen = prefer;
    }
  if (format_out)
    *format_out = dw_export_format_name (f);
  return dw_config_import (text, -1, "clipboard", gen, f, out, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Actions: Copy, Paste and Save Config */

static const char *
dw_tune_export_selected_format (DwTuneView *self)
{
  guint i = gtk_drop_down_get_selected (self->format_dropdown);
  return self->formats && i != GTK_INVALID_LIST_POSITION && self->formats[i] ? self->formats[i]
                                                                             : "yaml";
}

static void
dw_tune_export_copy_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  DwTuneView *self = DW_TUNE_VIEW (widget);
  g_autoptr (GError) error = NULL;
  g_autofree char *text
    = dw_tune_view_export_config (self, dw_tune_export_selected_format (self), &error);
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
dw_tune_export_paste_text_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (DwTuneView) self = user_data;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), result, &error);
  if (!text || !dw_tune_view_import_config (self, text, &error))
    {
      g_autofree char *msg
        = g_strdup_printf (_ ("Cannot import the config: %s"),
                           error ? error->message : _ ("the clipboard holds no text"));
      gtk_label_set_text (self->status_label, msg);
    }
}

static void
dw_tune_export_paste_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (widget), NULL,
                                 dw_tune_export_paste_text_cb, g_object_ref (widget));
}

static void
dw_tune_export_save_response_cb (GtkNativeDialog *dialog, int response, DwTuneView *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autoptr (GError) error = NULL;
      g_autofree char *text
        = dw_tune_view_export_config (self, dw_tune_export_selected_format (self), &error);
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
dw_tune_export_save_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  DwTuneView *self = DW_TUNE_VIEW (widget);
  if (self->save_dialog)
    return;
  GtkRoot *root = gtk_widget_get_root (widget);
  self->save_dialog = gtk_file_chooser_native_new (
    _ ("Save Config"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
    GTK_FILE_CHOOSER_ACTION_SAVE, _ ("_Save"), _ ("_Cancel"));
  const char *f = dw_tune_export_selected_format (self);
  gtk_file_chooser_set_current_name (
    GTK_FILE_CHOOSER (self->save_dialog),
    strcmp (f, "yaml") == 0 ? (
      dw_tune_controls_role_key (self, DW_ROLE_FUNCTION) ? "mis.yaml" : "rollout_correction.yaml")
                            : "rollout_correction.txt");
  g_signal_connect (self->save_dialog, "response", G_CALLBACK (dw_tune_export_save_response_cb),
                    self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->save_dialog));
}

void
dw_tune_export_install_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "tune.copy-config", NULL,
                                   dw_tune_export_copy_action);
  gtk_widget_class_install_action (widget_class, "tune.save-config", NULL,
                                   dw_tune_export_save_action);
  gtk_widget_class_install_action (widget_class, "tune.paste-config", NULL,
                                   dw_tune_export_paste_action);
}
