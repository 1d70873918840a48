/* dw-ui-test-util.h — helpers shared by the GUI tests and benchmarks
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Dispatches every pending event of the default main context without blocking. */
void dw_ui_test_iterate (void);
/* The first toplevel window of @type (an instance of it or of a subtype), or NULL. */
GtkWindow *dw_ui_test_find_toplevel (GType type);
/* Resident set size of this process in KiB (VmRSS), or -1 where it cannot be read. */
long dw_ui_test_rss_kb (void);

G_END_DECLS
