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
#include "dw-ui-test-util.h"

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
  ret = g_test_run ();
  g_object_unref (app);
  return ret;
}
