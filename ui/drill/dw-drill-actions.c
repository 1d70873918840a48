/* dw-drill-actions.c — the window action that opens the token drill-down
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The drill-down is a window of its own rather than a page of the main window: it is opened
 * from a chart's step (or a health row) and looked at beside the charts it explains.
 */
#define G_LOG_DOMAIN "dw-drill"

#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>

#include "dw-drill-actions.h"
#include "dw-drill-view.h"

#define DW_DRILL_WINDOW_KEY "dw-drill-window"

static void
dw_drill_actions_show_tokens_cb (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  GtkApplicationWindow *window = user_data;
  GtkWindow *drill = dw_drill_get_window (window);
  DwStoreReader *reader = g_object_get_data (G_OBJECT (action), "dw-store-reader");
  gint64 run_id, step;

  g_variant_get (parameter, "(xx)", &run_id, &step);
  if (drill == NULL)
    {
      drill = GTK_WINDOW (adw_window_new ());
      gtk_window_set_title (drill, _ ("Tokens"));
      gtk_window_set_default_size (drill, 1100, 760);
      gtk_window_set_transient_for (drill, GTK_WINDOW (window));
      gtk_window_set_hide_on_close (drill, TRUE);
      gtk_window_set_destroy_with_parent (drill, TRUE);
      adw_window_set_content (ADW_WINDOW (drill), dw_drill_view_new (reader));
      /* closing hides it (the next step reuses it); it goes with the main window */
      g_object_set_data_full (G_OBJECT (window), DW_DRILL_WINDOW_KEY, g_object_ref (drill),
                              g_object_unref);
    }
  dw_drill_view_show_step (DW_DRILL_VIEW (adw_window_get_content (ADW_WINDOW (drill))), run_id,
                           step);
  gtk_window_present (drill);
}

void
dw_drill_install_actions (GtkApplicationWindow *window, DwStoreReader *reader)
{
  g_autoptr (GSimpleAction) action = g_simple_action_new ("show-tokens", G_VARIANT_TYPE ("(xx)"));

  g_return_if_fail (GTK_IS_APPLICATION_WINDOW (window) && DW_IS_STORE_READER (reader));
  g_object_set_data_full (G_OBJECT (action), "dw-store-reader", g_object_ref (reader),
                          g_object_unref);
  g_signal_connect_object (action, "activate", G_CALLBACK (dw_drill_actions_show_tokens_cb), window,
                           0);
  g_action_map_add_action (G_ACTION_MAP (window), G_ACTION (action));
}

GtkWindow *
dw_drill_get_window (GtkApplicationWindow *window)
{
  g_return_val_if_fail (GTK_IS_APPLICATION_WINDOW (window), NULL);
  return g_object_get_data (G_OBJECT (window), DW_DRILL_WINDOW_KEY);
}

static void
dw_drill_actions_step_activated_cb (GtkWidget *chart, double step, gpointer user_data)
{
  const gint64 *run_id = user_data;

  if (isfinite (step))
    gtk_widget_activate_action (chart, "win.show-tokens", "(xx)", *run_id, (gint64)llround (step));
}

void
dw_drill_connect_chart (GtkWidget *chart, gint64 run_id)
{
  g_return_if_fail (GTK_IS_WIDGET (chart));
  if (g_signal_lookup ("step-activated", G_OBJECT_TYPE (chart)) == 0)
    return;
  g_signal_connect_data (chart, "step-activated", G_CALLBACK (dw_drill_actions_step_activated_cb),
                         g_memdup2 (&run_id, sizeof run_id),
                         (GClosureNotify)(void (*) (void))g_free, 0);
}
