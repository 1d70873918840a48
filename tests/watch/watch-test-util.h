/* watch-test-util.h — main-loop and temp-folder helpers of the watch tests and benchmark
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Removes @path and everything below it (symlinks are removed, not followed). */
void dw_watch_test_rm_rf (const char *path);
/* A GSourceFunc setting the gboolean at @data to TRUE, once. */
gboolean dw_watch_test_timeout_cb (gpointer data);
/* Runs the default main context for @ms milliseconds (events are dispatched as they come). */
void dw_watch_test_spin (guint ms);
/* Runs the default main context until @cond (@data) is TRUE — checked after every dispatch —
 * or @ms milliseconds passed. Returns the last value of @cond. */
gboolean dw_watch_test_spin_until (gboolean (*cond) (gpointer data), gpointer data, guint ms);

G_END_DECLS
