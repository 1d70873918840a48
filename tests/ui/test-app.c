/* test-app.c — the application shell: app actions, the accelerator table against the
 * shortcuts window, the about window, quit and the preferences window bound to GSettings
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <string.h>

#include <adwaita.h>

#include "dw-application.h"
#include "dw-preferences-window.h"
#include "dw-ui-test-util.h"

static DwApplication *app;

static void
collect_shortcuts (GtkWidget *widget, GPtrArray *out)
{
  if (GTK_IS_SHORTCUTS_SHORTCUT (widget))
    g_ptr_array_add (out, widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect_shortcuts (child, out);
}

/* Accelerator strings as (keyval, modifiers) pairs so "<Ctrl>q" equals "<Control>q". */
static char *
canonical_accel (const char *accel)
{
  guint key = 0;
  GdkModifierType mods = 0;

  g_assert_true (gtk_accelerator_parse (accel, &key, &mods));
  g_assert_cmpuint (key, !=, 0);
  return gtk_accelerator_name (key, mods);
}

static void
test_actions (void)
{
  const char *const names[] = { "about", "preferences", "quit" };
  g_auto (GStrv) quit_accels = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      GAction *action = g_action_map_lookup_action (G_ACTION_MAP (app), names[i]);

      g_assert_nonnull (action);
      g_assert_true (g_action_get_enabled (action));
    }
  quit_accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app), "app.quit");
  g_assert_cmpstrv (quit_accels, ((const char *const[]){ "<Control>q", NULL }));
  g_assert_nonnull (dw_application_get_settings (app));
}

/* Every accelerator the application registers is listed in the shortcuts window, and the
 * window lists nothing else except the keys bound by widgets themselves (Escape: reset zoom
 * in the monitor view; F10: primary menu). */
static void
test_shortcuts_window_matches_accels (void)
{
  g_autoptr (GtkBuilder) builder
    = gtk_builder_new_from_resource (RESOURCE_PATH "/gtk/help-overlay.ui");
  GtkWidget *overlay = GTK_WIDGET (gtk_builder_get_object (builder, "help_overlay"));
  g_autoptr (GPtrArray) shortcuts = g_ptr_array_new ();
  g_autoptr (GHashTable) shown = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) bound = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto (GStrv) actions = NULL;
  GHashTableIter iter;
  const char *accel;

  g_assert_true (GTK_IS_SHORTCUTS_WINDOW (overlay));
  collect_shortcuts (overlay, shortcuts);
  g_assert_cmpuint (shortcuts->len, >=, 13);
  for (guint i = 0; i < shortcuts->len; i++)
    {
      g_autofree char *accels = NULL;
      g_autofree char *title = NULL;
      GtkShortcutType type;

      g_object_get (shortcuts->pdata[i], "accelerator", &accels, "title", &title, "shortcut-type",
                    &type, NULL);
      g_assert_nonnull (title);
      if (type != GTK_SHORTCUT_ACCELERATOR)
        continue;
      g_assert_nonnull (accels);
      {
        g_auto (GStrv) parts = g_strsplit (accels, " ", -1);

        for (guint j = 0; parts[j] != NULL; j++)
          g_hash_table_add (shown, canonical_accel (parts[j]));
      }
    }

  actions = gtk_application_list_action_descriptions (GTK_APPLICATION (app));
  for (guint i = 0; actions[i] != NULL; i++)
    {
      g_auto (GStrv) accels
        = gtk_application_get_accels_for_action (GTK_APPLICATION (app), actions[i]);

      for (guint j = 0; accels[j] != NULL; j++)
        {
          char *c = canonical_accel (accels[j]);

          if (!g_hash_table_contains (shown, c))
            g_error ("%s (%s) is bound but not in the shortcuts window", accels[j], actions[i]);
          g_hash_table_add (bound, c);
        }
    }
  /* Ctrl+? comes from GtkApplication itself because gtk/help-overlay.ui is in the resources. */
  g_assert_true (g_hash_table_contains (bound, "<Control>question"));
  g_assert_true (g_hash_table_contains (bound, "<Control>1"));

  g_hash_table_iter_init (&iter, shown);
  while (g_hash_table_iter_next (&iter, (gpointer *)&accel, NULL))
    if (!g_hash_table_contains (bound, accel) && g_strcmp0 (accel, "Escape") != 0
        && g_strcmp0 (accel, "F10") != 0)
      g_error ("the shortcuts window shows %s, which nothing binds", accel);
  gtk_window_destroy (GTK_WINDOW (overlay));
}

static void
test_about (void)
{
  GtkWindow *about;

  g_action_group_activate_action (G_ACTION_GROUP (app), "about", NULL);
  dw_ui_test_iterate ();
  about = dw_ui_test_find_toplevel (ADW_TYPE_ABOUT_WINDOW);
  g_assert_nonnull (about);
  g_assert_cmpstr (adw_about_window_get_version (ADW_ABOUT_WINDOW (about)), ==, PACKAGE_VERSION);
  g_assert_cmpstr (adw_about_window_get_application_icon (ADW_ABOUT_WINDOW (about)), ==, APP_ID);
  g_assert_cmpint (adw_about_window_get_license_type (ADW_ABOUT_WINDOW (about)), ==,
                   GTK_LICENSE_GPL_3_0);
  g_assert_true (
    g_str_has_prefix (adw_about_window_get_issue_url (ADW_ABOUT_WINDOW (about)), "https://"));
  /* Untranslated (C locale): the msgid itself, as translators expect. */
  g_assert_cmpstr (adw_about_window_get_translator_credits (ADW_ABOUT_WINDOW (about)), ==,
                   "translator-credits");
  gtk_window_destroy (about);
}

static void
test_preferences_bound_to_settings (void)
{
  GSettings *settings = dw_application_get_settings (app);
  GtkWindow *prefs;
  GtkWidget *root;
  AdwComboRow *x_axis = NULL;

  g_settings_set_enum (settings, "x-axis", 2);
  g_settings_set_double (settings, "smoothing", 0.25);
  g_action_group_activate_action (G_ACTION_GROUP (app), "preferences", NULL);
  dw_ui_test_iterate ();
  prefs = dw_ui_test_find_toplevel (DW_TYPE_PREFERENCES_WINDOW);
  g_assert_nonnull (prefs);
  g_assert_true (dw_preferences_window_get_settings (DW_PREFERENCES_WINDOW (prefs)) == settings);

  /* Find the widgets as a user would see them: the combo row and the scale. */
  root = GTK_WIDGET (prefs);
  {
    GQueue queue = G_QUEUE_INIT;
    GtkRange *scale = NULL;

    g_queue_push_tail (&queue, root);
    while (!g_queue_is_empty (&queue))
      {
        GtkWidget *w = g_queue_pop_head (&queue);

        if (ADW_IS_COMBO_ROW (w))
          x_axis = ADW_COMBO_ROW (w);
        if (GTK_IS_SCALE (w))
          scale = GTK_RANGE (w);
        for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
          g_queue_push_tail (&queue, c);
      }
    g_assert_nonnull (x_axis);
    g_assert_nonnull (scale);

    /* Settings → widgets. */
    g_assert_cmpuint (adw_combo_row_get_selected (x_axis), ==, 2);
    g_assert_cmpfloat (gtk_range_get_value (scale), ==, 0.25);

    /* Widgets → settings. */
    adw_combo_row_set_selected (x_axis, 1);
    g_assert_cmpint (g_settings_get_enum (settings, "x-axis"), ==, 1);
    {
      g_autofree char *nick = g_settings_get_string (settings, "x-axis");
      g_assert_cmpstr (nick, ==, "relative");
    }
    gtk_range_set_value (scale, 0.9);
    g_assert_cmpfloat (g_settings_get_double (settings, "smoothing"), ==, 0.9);
    /* The schema's range caps the slider: 0.999 is the largest TensorBoard allows. */
    gtk_range_set_value (scale, 5.0);
    g_assert_cmpfloat (g_settings_get_double (settings, "smoothing"), ==, 0.999);
  }
  gtk_window_destroy (prefs);
}

static gboolean
count_close_request (GtkWindow *window, guint *count)
{
  (*count)++;
  return FALSE; /* let it close */
}

/* app.quit closes windows the way the window manager does, so each one gets close-request
 * (where the window saves its size and last run). */
static void
test_quit_closes_windows (void)
{
  GtkWidget *window = gtk_application_window_new (GTK_APPLICATION (app));
  guint close_requests = 0;

  g_signal_connect (window, "close-request", G_CALLBACK (count_close_request), &close_requests);
  gtk_window_present (GTK_WINDOW (window));
  dw_ui_test_iterate ();
  g_assert_nonnull (gtk_application_get_windows (GTK_APPLICATION (app)));
  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  dw_ui_test_iterate ();
  g_assert_cmpuint (close_requests, ==, 1);
  g_assert_null (gtk_application_get_windows (GTK_APPLICATION (app)));
}

static void
css_parsing_error (GtkCssProvider *provider, GtkCssSection *section, const GError *error,
                   gpointer user_data)
{
  g_autofree char *where = gtk_css_section_to_string (section);

  g_error ("%s: %s: %s", (const char *)user_data, where, error->message);
}

/* The stylesheets parse without error, and use only libadwaita's named colours, so dark mode
 * and high contrast come from the theme instead of colours picked for one of them. */
static void
test_stylesheets (void)
{
  const char *const sheets[] = { "style.css", "style-hc.css" };
  g_autoptr (GRegex) literal
    = g_regex_new ("#[0-9a-fA-F]{3,8}\\b|\\brgba?\\s*\\(|\\bhsla?\\s*\\(", 0, 0, NULL);
  g_autoptr (GRegex) comment = g_regex_new ("/\\*.*?\\*/", G_REGEX_DOTALL, 0, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (sheets); i++)
    {
      g_autofree char *path = g_strconcat (RESOURCE_PATH "/", sheets[i], NULL);
      g_autoptr (GBytes) bytes = g_resources_lookup_data (path, 0, NULL);
      g_autoptr (GtkCssProvider) provider = gtk_css_provider_new ();
      g_autofree char *text = NULL;
      g_autofree char *code = NULL;
      g_autoptr (GMatchInfo) match = NULL;

      g_assert_nonnull (bytes);
      g_signal_connect (provider, "parsing-error", G_CALLBACK (css_parsing_error),
                        (gpointer)sheets[i]);
      gtk_css_provider_load_from_resource (provider, path);

      text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
      code = g_regex_replace_literal (comment, text, -1, 0, "", 0, NULL);
      if (g_regex_match (literal, code, 0, &match))
        {
          g_autofree char *what = g_match_info_fetch (match, 0);
          g_error ("%s uses the literal colour %s; use a libadwaita named colour", sheets[i], what);
        }
      g_assert_nonnull (strstr (code, "@"));
    }
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int ret;

  gtk_test_init (&argc, &argv, NULL);
  app = dw_application_new (APP_ID, G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);

  g_test_add_func ("/Dw/App/actions", test_actions);
  g_test_add_func ("/Dw/App/shortcuts-window", test_shortcuts_window_matches_accels);
  g_test_add_func ("/Dw/App/about", test_about);
  g_test_add_func ("/Dw/App/preferences", test_preferences_bound_to_settings);
  g_test_add_func ("/Dw/App/quit", test_quit_closes_windows);
  g_test_add_func ("/Dw/App/stylesheets", test_stylesheets);
  ret = g_test_run ();
  g_object_unref (app);
  return ret;
}
