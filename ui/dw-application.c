/* dw-application.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-application"

#include "config.h"

#include <stdio.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "dw-application.h"
#include "dw-preferences-window.h"
#include "dw-error-window.h"
#include "dw-run-row.h"
#include "dw-screenshot.h"
#include "dw-window.h"

#define SCREENSHOT_WIDTH      1400
#define SCREENSHOT_HEIGHT     900
#define SCREENSHOT_TIMEOUT_MS 120000

struct _DwApplication
{
  AdwApplication parent_instance;

  GSettings *settings; /* NULL when the schema is not installed (uninstalled run) */

  DwStore *store;
  char *db_path;
  char *screenshot;
  char *view;
  char *size;  /* --size WxH of the screenshot */
  int overlay; /* --overlay N: the N newest runs shown together */
  gboolean demo;
  gboolean dark;
  char *tmpdir; /* --demo: the temporary store and demo run, removed on shutdown */
  int exit_status;
};

G_DEFINE_FINAL_TYPE (DwApplication, dw_application, ADW_TYPE_APPLICATION)

static const GOptionEntry options[]
  = { { "screenshot", 0, 0, G_OPTION_ARG_FILENAME, NULL,
        N_ ("Render the window to a PNG file and exit"), N_ ("FILE") },
      { "view", 0, 0, G_OPTION_ARG_STRING, NULL, N_ ("Page to show: monitor, tune or health"),
        N_ ("VIEW") },
      { "demo", 0, 0, G_OPTION_ARG_NONE, NULL,
        N_ ("Show the collapse demo run from a temporary store"), NULL },
      { "db", 0, 0, G_OPTION_ARG_FILENAME, NULL, N_ ("Store to open instead of the default one"),
        N_ ("FILE") },
      { "dark", 0, 0, G_OPTION_ARG_NONE, NULL, N_ ("Use the dark style"), NULL },
      { "overlay", 0, 0, G_OPTION_ARG_INT, NULL, N_ ("Show the N newest runs overlaid"), N_ ("N") },
      { "size", 0, 0, G_OPTION_ARG_STRING, NULL,
        N_ ("Window size of the screenshot (default 1400x900)"), N_ ("WxH") },
      { NULL } };

DwApplication *
dw_application_new (const char *application_id, GApplicationFlags flags)
{
  return g_object_new (DW_TYPE_APPLICATION, "application-id", application_id, "flags", flags,
                       "resource-base-path", RESOURCE_PATH, NULL);
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

  /* GTK's cairo renderer unless the user asks for another (GSK_RENDERER=gl): the charts are
   * cairo drawings either way, and on software GL (llvmpipe: VNC, X forwarding, no GPU) the GL
   * renderer took 145–550 ms from a Tune slider move to its painted frame and 19–37 % of a core
   * on the idle Monitor page, the cairo renderer 44–113 ms and 1–2 % (tests/ui/bench-renderer.c).
   * GTK reads the variable when it makes the first window's renderer, after this. */
  g_setenv ("GSK_RENDERER", "cairo", FALSE);

  /* Screenshots are light unless --dark, whatever the desktop's preference. */
  if (self->dark)
    adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                        ADW_COLOR_SCHEME_FORCE_DARK);
  else if (self->screenshot != NULL)
    adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                        ADW_COLOR_SCHEME_FORCE_LIGHT);

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
remove_tree (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

DwStore *
dw_application_get_store (DwApplication *self, GError **error)
{
  g_return_val_if_fail (DW_IS_APPLICATION (self), NULL);
  if (self->store == NULL)
    {
      g_autofree char *path = g_strdup (self->db_path);

      if (path == NULL && self->demo)
        {
          self->tmpdir = g_dir_make_tmp ("driftwatch-demo-XXXXXX", error);
          if (self->tmpdir == NULL)
            return NULL;
          path = g_build_filename (self->tmpdir, "driftwatch.db", NULL);
        }
      self->store = dw_store_open (path, error);
    }
  return self->store;
}

static int
dw_application_handle_local_options (GApplication *app, GVariantDict *dict)
{
  DwApplication *self = DW_APPLICATION (app);

  g_variant_dict_lookup (dict, "screenshot", "^ay", &self->screenshot);
  g_variant_dict_lookup (dict, "db", "^ay", &self->db_path);
  g_variant_dict_lookup (dict, "view", "s", &self->view);
  g_variant_dict_lookup (dict, "size", "s", &self->size);
  g_variant_dict_lookup (dict, "overlay", "i", &self->overlay);
  self->demo = g_variant_dict_contains (dict, "demo");
  self->dark = g_variant_dict_contains (dict, "dark");

  if (self->view != NULL && !g_str_equal (self->view, "monitor")
      && !g_str_equal (self->view, "tune") && !g_str_equal (self->view, "health"))
    {
      /* TRANSLATORS: --view got an unknown page name */
      g_printerr (_ ("Unknown view “%s”: use monitor, tune or health\n"), self->view);
      return 2;
    }
  /* A screenshot, another store or the demo is its own instance, never a remote call into an
   * already running Driftwatch. */
  if (self->screenshot != NULL || self->db_path != NULL || self->demo)
    g_application_set_flags (app, g_application_get_flags (app) | G_APPLICATION_NON_UNIQUE);
  return -1;
}

static gboolean
window_ready (GtkWidget *window)
{
  /* the store error window has nothing to load */
  return !DW_IS_WINDOW (window) || dw_window_is_ready (DW_WINDOW (window));
}

static void
on_screenshot_done (GtkWidget *window, const GError *error, gpointer data)
{
  DwApplication *self = data;

  if (error != NULL)
    {
      g_printerr ("driftwatch: %s\n", error->message);
      self->exit_status = 1;
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
dw_application_activate (GApplication *app)
{
  DwApplication *self = DW_APPLICATION (app);
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));
  g_autoptr (GError) error = NULL;
  DwStore *store;

  if (window != NULL)
    {
      gtk_window_present (window);
      return;
    }
  store = dw_application_get_store (self, &error);
  if (store == NULL)
    {
      /* said in a window of its own, and on stderr for scripts; exit status 1 */
      g_printerr ("driftwatch: %s\n", error->message);
      self->exit_status = 1;
      window = GTK_WINDOW (dw_error_window_new (GTK_APPLICATION (app), self->db_path, error));
      gtk_window_present (window);
      if (self->screenshot != NULL)
        dw_screenshot_window (GTK_WIDGET (window), self->screenshot, window_ready,
                              SCREENSHOT_TIMEOUT_MS, on_screenshot_done, self);
      return;
    }

  window = GTK_WINDOW (dw_window_new (GTK_APPLICATION (app), store, self->screenshot == NULL));
  if (self->screenshot != NULL)
    {
      int width = SCREENSHOT_WIDTH, height = SCREENSHOT_HEIGHT;

      if (self->size != NULL && sscanf (self->size, "%dx%d", &width, &height) != 2)
        width = SCREENSHOT_WIDTH, height = SCREENSHOT_HEIGHT;
      gtk_window_set_default_size (window, MAX (width, 360), MAX (height, 400));
    }
  if (self->overlay > 1)
    {
      g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
      GtkListBox *list = dw_window_get_run_list (DW_WINDOW (window));

      for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (list));
           c != NULL && ids->len < (guint)self->overlay; c = gtk_widget_get_next_sibling (c))
        if (DW_IS_RUN_ROW (c))
          {
            gint64 id = dw_run_row_get_run_id (DW_RUN_ROW (c));
            g_array_append_val (ids, id);
          }
      dw_window_select_runs (DW_WINDOW (window), (const gint64 *)(gpointer)ids->data, ids->len);
    }
  if (self->view != NULL)
    dw_window_set_view (DW_WINDOW (window), self->view);
  if (self->demo)
    {
      g_autofree char *dir = g_build_filename (
        self->tmpdir ? self->tmpdir : g_get_user_cache_dir (),
        self->tmpdir ? "demo-collapse" : "driftwatch", self->tmpdir ? NULL : "demo-collapse", NULL);
      dw_window_load_demo (DW_WINDOW (window), dir);
    }
  gtk_window_present (window);
  if (self->screenshot != NULL)
    dw_screenshot_window (GTK_WIDGET (window), self->screenshot, window_ready,
                          SCREENSHOT_TIMEOUT_MS, on_screenshot_done, self);
}

static void
dw_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  GtkWindow *window;

  g_application_activate (app);
  window = gtk_application_get_active_window (GTK_APPLICATION (app));
  if (!DW_IS_WINDOW (window))
    return;
  for (int i = 0; i < n_files; i++)
    {
      char *path = g_file_get_path (files[i]);
      if (path != NULL)
        g_ptr_array_add (paths, path);
    }
  g_ptr_array_add (paths, NULL);
  if (paths->len > 1)
    dw_window_ingest_paths (DW_WINDOW (window), (const char *const *)paths->pdata);
}

static void
dw_application_shutdown (GApplication *app)
{
  DwApplication *self = DW_APPLICATION (app);

  G_APPLICATION_CLASS (dw_application_parent_class)->shutdown (app);
  g_clear_object (&self->store);
  if (self->tmpdir != NULL)
    remove_tree (self->tmpdir);
}

static void
dw_application_dispose (GObject *object)
{
  DwApplication *self = DW_APPLICATION (object);

  g_clear_object (&self->settings);
  g_clear_object (&self->store);
  G_OBJECT_CLASS (dw_application_parent_class)->dispose (object);
}

static void
dw_application_finalize (GObject *object)
{
  DwApplication *self = DW_APPLICATION (object);

  g_free (self->db_path);
  g_free (self->screenshot);
  g_free (self->size);
  g_free (self->view);
  g_free (self->tmpdir);
  G_OBJECT_CLASS (dw_application_parent_class)->finalize (object);
}

static void
dw_application_class_init (DwApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  object_class->dispose = dw_application_dispose;
  object_class->finalize = dw_application_finalize;
  app_class->handle_local_options = dw_application_handle_local_options;
  app_class->startup = dw_application_startup;
  app_class->activate = dw_application_activate;
  app_class->open = dw_application_open;
  app_class->shutdown = dw_application_shutdown;
}

static void
dw_application_init (DwApplication *self)
{
  g_application_add_main_option_entries (G_APPLICATION (self), options);
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

int
dw_application_get_exit_status (DwApplication *self)
{
  g_return_val_if_fail (DW_IS_APPLICATION (self), 1);
  return self->exit_status;
}
