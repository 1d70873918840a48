/* dw-ui-test-util.c — helpers shared by the GUI tests and benchmarks (see dw-ui-test-util.h)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-ui-test-util.h"

#include <stdlib.h>
#include <string.h>

void
dw_ui_test_iterate (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

GtkWindow *
dw_ui_test_find_toplevel (GType type)
{
  GListModel *toplevels = gtk_window_get_toplevels (); /* transfer none */

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) window = g_list_model_get_item (toplevels, i);

      if (G_TYPE_CHECK_INSTANCE_TYPE (window, type))
        return window;
    }
  return NULL;
}

long
dw_ui_test_rss_kb (void)
{
  g_autofree char *status = NULL;
  const char *p;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return -1;
  p = strstr (status, "VmRSS:");
  return p ? atol (p + 6) : -1;
}
