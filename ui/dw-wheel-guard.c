/* dw-wheel-guard.c — value widgets that never take the mouse wheel (see dw-wheel-guard.h)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-wheel-guard"

#include "config.h"

#include "dw-wheel-guard.h"

void
dw_wheel_guard_attach (GtkWidget *widget)
{
  g_autoptr (GListModel) controllers = NULL;
  g_autoptr (GPtrArray) scrolls = g_ptr_array_new_with_free_func (g_object_unref);

  g_return_if_fail (GTK_IS_WIDGET (widget));

  /* GtkRange and GtkSpinButton handle the wheel with a GtkEventControllerScroll of their own in
   * the bubble phase; without it the event goes on bubbling to the scrolled window. Removed
   * after the walk: the list model changes under removal. */
  controllers = gtk_widget_observe_controllers (widget);
  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GtkEventController) controller = g_list_model_get_item (controllers, i);

      if (GTK_IS_EVENT_CONTROLLER_SCROLL (controller))
        g_ptr_array_add (scrolls, g_steal_pointer (&controller));
    }
  for (guint i = 0; i < scrolls->len; i++)
    gtk_widget_remove_controller (widget, g_ptr_array_index (scrolls, i));
}
