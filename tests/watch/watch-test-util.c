/* watch-test-util.c — main-loop and temp-folder helpers of the watch tests and benchmark
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "watch-test-util.h"

#include <glib/gstdio.h>

void
dw_watch_test_rm_rf (const char *path)
{
  g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        dw_watch_test_rm_rf (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

gboolean
dw_watch_test_timeout_cb (gpointer data)
{
  *(gboolean *)data = TRUE;
  return G_SOURCE_REMOVE;
}

void
dw_watch_test_spin (guint ms)
{
  gboolean done = FALSE;

  g_timeout_add (ms, dw_watch_test_timeout_cb, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

gboolean
dw_watch_test_spin_until (gboolean (*cond) (gpointer data), gpointer data, guint ms)
{
  gboolean timed_out = FALSE, ok;
  guint id = g_timeout_add (ms, dw_watch_test_timeout_cb, &timed_out);

  while (!(ok = cond (data)) && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  if (!timed_out)
    g_source_remove (id);
  return ok;
}
