/* dw-plot-series.h — one run's scalar series prepared for plotting
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Holds the x coordinates of every point for each x mode, the raw values and their debiased EMA,
 * each with a min/max pyramid. Appending (live runs) smooths and summarises only the new tail.
 */
#pragma once

#include <glib.h>

#include "dw-pyramid.h"

G_BEGIN_DECLS

typedef enum
{
  DW_X_STEP = 0,
  DW_X_RELATIVE, /* seconds since the run's first point */
  DW_X_WALL,     /* Unix time, seconds */
} DwXMode;

typedef struct _DwPlotSeries DwPlotSeries;

DwPlotSeries *dw_plot_series_new (double smoothing);
void dw_plot_series_free (DwPlotSeries *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwPlotSeries, dw_plot_series_free)

/* Appends points sorted by step. A step not above the last one is a restart: points from that
 * step on are replaced (the newest write wins) and the step is recorded as a restart. Unknown
 * wall times are NAN (the previous known time is carried forward). */
void dw_plot_series_append (DwPlotSeries *self, const gint64 *steps, const double *wall_times,
                            const double *values, gsize n);
void dw_plot_series_add_restart (DwPlotSeries *self, gint64 step);
void dw_plot_series_set_smoothing (DwPlotSeries *self, double smoothing);
double dw_plot_series_get_smoothing (const DwPlotSeries *self);

gsize dw_plot_series_get_length (const DwPlotSeries *self);
const gint64 *dw_plot_series_get_steps (const DwPlotSeries *self);
/* Non-decreasing x of every point in @mode. */
const double *dw_plot_series_get_x (const DwPlotSeries *self, DwXMode mode);
const DwPyramid *dw_plot_series_get_raw (const DwPlotSeries *self);
/* The smoothed series (the raw one when smoothing is 0). */
const DwPyramid *dw_plot_series_get_smoothed (const DwPlotSeries *self);
const gint64 *dw_plot_series_get_restarts (const DwPlotSeries *self, gsize *n_restarts);
gboolean dw_plot_series_has_wall_time (const DwPlotSeries *self);
gsize dw_plot_series_get_memory (const DwPlotSeries *self);

/* Index of the point whose x is nearest to @x (-1 when empty). */
gssize dw_plot_series_nearest (const DwPlotSeries *self, DwXMode mode, double x);
/* x of @step in @mode (the nearest stored point's), NAN when empty. */
double dw_plot_series_x_of_step (const DwPlotSeries *self, DwXMode mode, gint64 step);

G_END_DECLS
