/* test-i18n.c — the German catalogue built from po/de.po reaches the user: .ui templates,
 * C strings, plurals and the shortcuts window, as a German user would see them
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <locale.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gi18n.h>

#include "dw-application.h"
#include "dw-preferences-window.h"
#include "dw-store.h"
#include "dw-ui-test-util.h"
#include "dw-window.h"

static DwApplication *app;

static void
collect_labels (GtkWidget *widget, GString *out)
{
  if (GTK_IS_LABEL (widget))
    g_string_append_printf (out, "%s\n", gtk_label_get_label (GTK_LABEL (widget)));
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    collect_labels (c, out);
}

/* C strings from the core and the app, with and without plural forms. */
static void
test_c_strings (void)
{
  g_assert_cmpstr (_ ("Effective sample size"), ==, "Effektive Stichprobengröße");
  g_assert_cmpstr (g_dngettext (GETTEXT_PACKAGE, "%u run", "%u runs", 1), ==, "%u Lauf");
  g_assert_cmpstr (g_dngettext (GETTEXT_PACKAGE, "%u run", "%u runs", 3), ==, "%u Läufe");
}

/* GtkBuilder templates take their strings from the program's text domain. */
static void
test_preferences_window (void)
{
  GtkWindow *prefs;
  g_autoptr (GString) labels = g_string_new (NULL);

  g_action_group_activate_action (G_ACTION_GROUP (app), "preferences", NULL);
  dw_ui_test_iterate ();
  prefs = dw_ui_test_find_toplevel (DW_TYPE_PREFERENCES_WINDOW);
  g_assert_nonnull (prefs);
  g_assert_cmpstr (gtk_window_get_title (prefs), ==, "Einstellungen");
  collect_labels (GTK_WIDGET (prefs), labels);
  g_assert_nonnull (strstr (labels->str, "Diagramme"));
  g_assert_nonnull (strstr (labels->str, "Laufende Trainings"));
  g_assert_null (strstr (labels->str, "Live Runs"));
  gtk_window_destroy (prefs);
}

/* The shortcuts window's strings have a context ("shortcut window"). */
static void
test_shortcuts_window (void)
{
  g_autoptr (GtkBuilder) builder
    = gtk_builder_new_from_resource (RESOURCE_PATH "/gtk/help-overlay.ui");
  GtkWidget *overlay = GTK_WIDGET (gtk_builder_get_object (builder, "help_overlay"));
  g_autoptr (GString) labels = g_string_new (NULL);

  collect_labels (overlay, labels);
  g_assert_nonnull (strstr (labels->str, "Laufordner öffnen"));
  g_assert_nonnull (strstr (labels->str, "Diagramm exportieren"));
  g_assert_null (strstr (labels->str, "Open run folder"));
  gtk_window_destroy (GTK_WINDOW (overlay));
}

static void
test_about_credits (void)
{
  GtkWindow *about;

  g_action_group_activate_action (G_ACTION_GROUP (app), "about", NULL);
  dw_ui_test_iterate ();
  about = dw_ui_test_find_toplevel (ADW_TYPE_ABOUT_WINDOW);
  g_assert_nonnull (about);
  /* Translators replace the msgid "translator-credits" with their names. */
  g_assert_cmpstr (adw_about_window_get_translator_credits (ADW_ABOUT_WINDOW (about)), !=,
                   "translator-credits");
  g_assert_cmpstr (adw_about_window_get_comments (ADW_ABOUT_WINDOW (about)), ==,
                   "Die Abweichung zwischen Training und Inferenz von "
                   "LLM-Reinforcement-Learning-Läufen beobachten");
  gtk_window_destroy (about);
}

/* German words are longer than English ones: with the demo run loaded (run row, badge, health
 * rows, Tune panel, chart titles) the window must still fit the 360 px of a phone. One label that
 * does not wrap (a 52-character heading of the Tune page) once made it 480 px wide. */
static void
test_narrow_window (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("dw-test-i18n-XXXXXX", &error);
  g_autofree char *db = NULL;
  g_autofree char *demo = NULL;
  g_autoptr (DwStore) store = NULL;
  DwWindow *window;
  int minimum = 0, natural = 0;

  g_assert_no_error (error);
  db = g_build_filename (dir, "store.db", NULL);
  demo = g_build_filename (dir, "demo-collapse", NULL);
  store = dw_store_open (db, &error);
  g_assert_no_error (error);
  window = dw_window_new (NULL, store, FALSE);
  gtk_window_set_default_size (GTK_WINDOW (window), 360, 800);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (dw_ui_test_wait_window_ready (window, 10000));
  dw_window_load_demo (window, demo);
  g_assert_true (dw_ui_test_wait_window_ready (window, 60000));

  /* the content, not the window: the window adds its client-side decoration */
  gtk_widget_measure (gtk_window_get_child (GTK_WINDOW (window)), GTK_ORIENTATION_HORIZONTAL, -1,
                      &minimum, &natural, NULL, NULL);
  g_test_message ("German window content: minimum width %d px", minimum);
  g_assert_cmpint (minimum, <=, 360);

  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
  g_clear_object (&store);
  dw_ui_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int ret;

  /* German messages whatever locales are installed: LANGUAGE is honoured with C.UTF-8. */
  g_setenv ("LANGUAGE", "de", TRUE);
  g_setenv ("LC_ALL", "C.UTF-8", TRUE);
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, DW_PO_BUILDDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  gtk_test_init (&argc, &argv, NULL);
  app = dw_application_new (APP_ID, G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);

  g_test_add_func ("/Dw/I18n/c-strings", test_c_strings);
  g_test_add_func ("/Dw/I18n/preferences", test_preferences_window);
  g_test_add_func ("/Dw/I18n/shortcuts-window", test_shortcuts_window);
  g_test_add_func ("/Dw/I18n/about", test_about_credits);
  g_test_add_func ("/Dw/I18n/narrow-window", test_narrow_window);
  ret = g_test_run ();
  g_object_unref (app);
  return ret;
}
