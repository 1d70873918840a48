/* dw-application.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-application"

#include "config.h"

#include <glib/gi18n.h>

#include "dw-application.h"
#include "dw-preferences-window.h"
#include "dw-window.h"

struct _DwApplication
{
  AdwApplication parent_instance;

  GSettings *settings; /* NULL when the schema is not installed (uninstalled run) */
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

/* The one table of accelerators; the shortcuts window (gtk/help-overlay.ui) shows the same
 * list. win.* actions are installed by the window; an accel for an action that does not exist
 * yet is harmless. Escape (reset zoom) is bound locally by the monitor view, not here, so it
 * never steals Escape from entries and popovers. */
static const struct
{
  const char *action;
  const char *accels[3];
} dw_accels[] = {
  /* clang-format off */
  { "app.quit",          { "<Control>q", NULL } },
  { "app.preferences",   { "<Control>comma", NULL } },
  { "win.open-folder",   { "<Control>o", NULL } },
  { "win.view::monitor", { "<Control>1", NULL } },
  { "win.view::tune",    { "<Control>2", NULL } },
  { "win.view::health",  { "<Control>3", NULL } },
  { "win.log-scale",     { "<Control>l", NULL } },
  { "win.tag-filter",    { "<Control>f", NULL } },
  { "win.export-chart",  { "<Control>e", NULL } },
  /* clang-format on */
};

static void
dw_application_about (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  static const char *developers[] = { "The Driftwatch developers", NULL };
  GtkApplication *app = GTK_APPLICATION (user_data);
  AdwAboutWindow *about = ADW_ABOUT_WINDOW (adw_about_window_new ());

  adw_about_window_set_application_name (about, _ ("Driftwatch"));
  adw_about_window_set_application_icon (about, APP_ID);
  adw_about_window_set_version (about, PACKAGE_VERSION);
  adw_about_window_set_developer_name (about, _ ("The Driftwatch developers"));
  adw_about_window_set_developers (about, developers);
  adw_about_window_set_comments (
    about, _ ("Watch the training–inference mismatch of LLM reinforcement-learning runs"));
  adw_about_window_set_copyright (about, "© 2026 The Driftwatch developers");
  adw_about_window_set_license_type (about, GTK_LICENSE_GPL_3_0);
  adw_about_window_set_website (about, DW_WEBSITE);
  adw_about_window_set_issue_url (about, DW_ISSUE_URL);
  /* Translators: replace "translator-credits" with your names, one name per line. */
  adw_about_window_set_translator_credits (about, _ ("translator-credits"));
  adw_about_window_set_release_notes_version (about, PACKAGE_VERSION);
  adw_about_window_set_release_notes (
    about, _ ("<p>First release: live mismatch charts with health warnings, what-if threshold "
              "tuning and config export for verl and slime.</p>"));
  gtk_window_set_transient_for (GTK_WINDOW (about), gtk_application_get_active_window (app));
  gtk_window_set_modal (GTK_WINDOW (about), TRUE);
  gtk_window_present (GTK_WINDOW (about));
}

static void
dw_application_preferences (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  DwApplication *self = DW_APPLICATION (user_data);
  GtkWidget *preferences;

  g_return_if_fail (self->settings != NULL);
  preferences = dw_preferences_window_new (self->settings);
  gtk_window_set_transient_for (GTK_WINDOW (preferences),
                                gtk_application_get_active_window (GTK_APPLICATION (self)));
  gtk_window_present (GTK_WINDOW (preferences));
}

static void
dw_application_quit (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  GtkApplication *app = GTK_APPLICATION (user_data);
  GList *windows = NULL;

  for (GList *l = gtk_application_get_windows (app); l != NULL; l = l->next)
    windows = g_list_prepend (windows, g_object_ref (l->data));

  /* Close (not destroy) every window so each gets close-request and saves its state, as when
   * the window manager closes it; a window may refuse, then the application keeps running. */
  for (GList *l = windows; l != NULL; l = l->next)
    gtk_window_close (GTK_WINDOW (l->data));
  g_list_free_full (windows, g_object_unref);

  if (gtk_application_get_windows (app) == NULL)
    g_application_quit (G_APPLICATION (app));
}

static const GActionEntry dw_app_entries[] = {
  { "about", dw_application_about },
  { "preferences", dw_application_preferences },
  { "quit", dw_application_quit },
};

static void
dw_application_startup (GApplication *app)
{
  DwApplication *self = DW_APPLICATION (app);
  GSettingsSchemaSource *source;
  g_autoptr (GSettingsSchema) schema = NULL;

  G_APPLICATION_CLASS (dw_application_parent_class)->startup (app);

  /* Running from the build tree without GSETTINGS_SCHEMA_DIR must not abort: the app then
   * works with built-in defaults and no Preferences. */
  source = g_settings_schema_source_get_default ();
  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, "io.github.driftwatch.Driftwatch", TRUE);
  if (schema != NULL)
    self->settings = g_settings_new_full (schema, NULL, NULL);
  else
    g_message (
      "GSettings schema io.github.driftwatch.Driftwatch not found; settings are not saved");

  g_action_map_add_action_entries (G_ACTION_MAP (app), dw_app_entries,
                                   G_N_ELEMENTS (dw_app_entries), app);
  g_simple_action_set_enabled (
    G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (app), "preferences")),
    self->settings != NULL);

  for (guint i = 0; i < G_N_ELEMENTS (dw_accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (app), dw_accels[i].action,
                                           dw_accels[i].accels);
}

static void
dw_application_dispose (GObject *object)
{
  DwApplication *self = DW_APPLICATION (object);

  g_clear_object (&self->settings);
  G_OBJECT_CLASS (dw_application_parent_class)->dispose (object);
}

static void
dw_application_class_init (DwApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  object_class->dispose = dw_application_dispose;
  app_class->startup = dw_application_startup;
  app_class->activate = dw_application_activate;
}

static void
dw_application_init (DwApplication *self)
{
}

/**
 * dw_application_get_settings:
 *
 * Returns: (transfer none) (nullable): the application's settings (schema
 *   io.github.driftwatch.Driftwatch), or %NULL when the schema is not installed
 */
GSettings *
dw_application_get_settings (DwApplication *self)
{
  g_return_val_if_fail (DW_IS_APPLICATION (self), NULL);

  return self->settings;
}
