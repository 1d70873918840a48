/* dw-chart-readout.h — the hover read-out of a chart: a popover beside the cursor
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One row per series at the cursor (colour swatch, series, value, raw value when smoothed, step,
 * time), sorted by value, largest first, then the health markers under the cursor. A popover is
 * a surface of its own, so the read-out is never clipped by the card or the window edge; it is
 * placed on the side of the cursor with room and kept inside the window.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef struct
{
  GdkRGBA color;
  const char *label;
  double value;
  double raw; /* NAN: not smoothed, no raw column */
  gint64 step;
  double time; /* seconds since the start, or Unix time (@wall); NAN unknown */
  gboolean wall;
} DwReadoutRow;

#define DW_TYPE_CHART_READOUT (dw_chart_readout_get_type ())
G_DECLARE_FINAL_TYPE (DwChartReadout, dw_chart_readout, DW, CHART_READOUT, GtkPopover)

GtkWidget *dw_chart_readout_new (void);
/* Replaces the rows (sorted here by value) and the marker lines. @resolution: values are
 * printed with enough digits to tell apart values that far apart. */
void dw_chart_readout_set_rows (DwChartReadout *self, DwReadoutRow *rows, guint n_rows,
                                const char *const *markers, double resolution);
/* Points the popover at (@x, @y) of its parent, on the side of it with more room in the window,
 * and moved up or down so all of it is inside the window. */
void dw_chart_readout_point_at (DwChartReadout *self, double x, double y);
/* The text shown, one row a line (tests). */
char *dw_chart_readout_dup_text (DwChartReadout *self);

G_END_DECLS
