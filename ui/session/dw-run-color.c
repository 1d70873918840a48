/* dw-run-color.c — the colour a run is drawn in, in the sidebar and on every chart
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-run-color.h"

/* GNOME palette shades that read on light and dark backgrounds and stay clear of the meaning
 * colours: green (good, the healthy band), yellow/amber/orange (warning) and red (error) are
 * never a run's colour. Blues, purples, pink, brown, teal and grey only. */
static const char *const palette[] = {
  "#3584e4", "#9141ac", "#2190a4", "#c061cb", "#986a44", "#1a5fb4", "#613583", "#5e5c64",
};

void
dw_run_color (gint64 run_id, GdkRGBA *color)
{
  guint i = (guint)(((run_id > 0 ? run_id : 1) - 1) % G_N_ELEMENTS (palette));

  gdk_rgba_parse (color, palette[i]);
}
