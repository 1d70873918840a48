/* dw-run-color.h — the colour a run is drawn in, in the sidebar and on every chart
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <gdk/gdk.h>

G_BEGIN_DECLS

/* The colour of run @run_id: stable across sessions and selections. */
void dw_run_color (gint64 run_id, GdkRGBA *color);

G_END_DECLS
