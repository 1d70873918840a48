/* dw-chart.h — a cairo line chart for long scalar series
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Draws per-pixel-column min/max envelopes of every series (never a sample of the points), the
 * debiased EMA over the faded raw series, NaN/inf, restart, clipped-data and health markers and
 * threshold lines/bands. Each part is a layer (dw-chart-layer.h), a child widget of its own,
 * so pointer motion redraws only the overlay. Signals: "zoom-changed", "step-activated".
 */
#pragma once

#include <gtk/gtk.h>

#include "dw-plot-series.h"

G_BEGIN_DECLS

typedef enum
{
  DW_THRESHOLD_IDEAL = 0, /* the value a healthy run sits at */
  DW_THRESHOLD_GOOD,      /* above/below it is fine */
  DW_THRESHOLD_WARNING,   /* crossing it is a warning */
} DwThresholdKind;

typedef enum
{
  DW_MARKER_INFO = 0,
  DW_MARKER_WARNING,
  DW_MARKER_CRITICAL,
} DwMarkerSeverity;

typedef enum
{
  DW_EXPORT_PNG = 0,
  DW_EXPORT_SVG,
  DW_EXPORT_PDF,
} DwExportFormat;

typedef enum
{
  DW_CHART_SCALE_LINEAR = 0,
  DW_CHART_SCALE_LOG,    /* values > 0 only */
  DW_CHART_SCALE_SYMLOG, /* symmetric log: signed values, linear near 0, a decade a step beyond */
} DwChartScale;

GType dw_chart_scale_get_type (void);
#define DW_TYPE_CHART_SCALE (dw_chart_scale_get_type ())

#define DW_TYPE_CHART (dw_chart_get_type ())
G_DECLARE_FINAL_TYPE (DwChart, dw_chart, DW, CHART, GtkWidget)

GtkWidget *dw_chart_new (void);
/* A new chart with the same series (copied), thresholds, band, markers and settings (Enlarge). */
GtkWidget *dw_chart_new_copy (DwChart *self);

const char *dw_chart_get_title (DwChart *self);
void dw_chart_set_title (DwChart *self, const char *title);
gboolean dw_chart_get_log_y (DwChart *self);
void dw_chart_set_log_y (DwChart *self, gboolean log_y);
/* The y scale; "log-y" is TRUE exactly when it is DW_CHART_SCALE_LOG. */
DwChartScale dw_chart_get_y_scale (DwChart *self);
void dw_chart_set_y_scale (DwChart *self, DwChartScale scale);
/* A fixed y range [@y0, @y1] instead of the automatic one (a zoom still overrides it); NAN (or
 * an empty range) goes back to automatic. get returns whether a range is set. */
void dw_chart_set_y_range (DwChart *self, double y0, double y1);
gboolean dw_chart_get_y_range (DwChart *self, double *y0, double *y1);
/* Following the newest point of a live run: the x view ends at the last x as points arrive,
 * keeping its width (the span set, else the zoom's, else all the data). */
void dw_chart_set_follow_latest (DwChart *self, gboolean follow);
gboolean dw_chart_get_follow_latest (DwChart *self);
/* The x width a followed view shows (steps or seconds); 0: the zoom's width, or all. */
void dw_chart_set_follow_span (DwChart *self, double span);
/* Where the x-axis value @x (a step, or seconds) is drawn, in widget coordinates. */
double dw_chart_data_to_widget_x (DwChart *self, double x);
/* The y axis title, the unit of the values ("nats", "fraction", "tokens"; NULL or "" for none).
 * A "fraction" axis starts at 0. */
void dw_chart_set_y_unit (DwChart *self, const char *unit);
const char *dw_chart_get_y_unit (DwChart *self);
/* The width the chart asks for when there is room (420 px by default): a smaller one lets a
 * GtkFlowBox put more charts on a line. */
void dw_chart_set_natural_width (DwChart *self, int width);
DwXMode dw_chart_get_x_mode (DwChart *self);
void dw_chart_set_x_mode (DwChart *self, DwXMode mode);
double dw_chart_get_smoothing (DwChart *self);
void dw_chart_set_smoothing (DwChart *self, double smoothing);
gboolean dw_chart_get_ignore_outliers (DwChart *self);
void dw_chart_set_ignore_outliers (DwChart *self, gboolean ignore);
/* The shared cursor, in x-axis data coordinates (NAN: none). */
double dw_chart_get_cursor_x (DwChart *self);
void dw_chart_set_cursor_x (DwChart *self, double x);

/* Adds (or returns the existing) series @id; the chart owns it, fill it with
 * dw_plot_series_append() and call dw_chart_data_changed(). */
DwPlotSeries *dw_chart_add_series (DwChart *self, const char *id, const char *label,
                                   const GdkRGBA *color);
DwPlotSeries *dw_chart_get_series (DwChart *self, const char *id);
guint dw_chart_get_n_series (DwChart *self);
/* The series' labels, in drawing order (a run name, or "run · metric"). */
char **dw_chart_dup_series_labels (DwChart *self);
void dw_chart_remove_series (DwChart *self, const char *id);
void dw_chart_clear (DwChart *self);
/* Data changed: redrawn at the next frame, at most once per frame however often it is called. */
void dw_chart_data_changed (DwChart *self);

void dw_chart_add_threshold (DwChart *self, double value, DwThresholdKind kind, const char *label);
/* The acceptable band [lo, hi], shaded. */
void dw_chart_set_band (DwChart *self, double lo, double hi);
/* A health marker at @step; @title is in the hover read-out, and written above the plot when
 * @show_label and there is room (else "step N"). */
void dw_chart_add_marker (DwChart *self, gint64 step, DwMarkerSeverity severity, const char *title,
                          gboolean show_label);
void dw_chart_clear_markers (DwChart *self);

/* The visible data range (after zoom or automatic bounds). */
void dw_chart_get_view (DwChart *self, double *x0, double *x1, double *y0, double *y1);
void dw_chart_zoom (DwChart *self, double x0, double x1, double y0, double y1);
void dw_chart_reset_zoom (DwChart *self);
gboolean dw_chart_is_zoomed (DwChart *self);

/* Hover at widget coordinates (what pointer motion does), and the read-out shown. */
void dw_chart_hover (DwChart *self, double x, double y);
/* The pointer left: no cursor, no read-out. */
void dw_chart_leave (DwChart *self);
char *dw_chart_dup_hover_text (DwChart *self);
/* The read-out popover (a DwChartReadout) shown while the pointer is over the chart. */
GtkWidget *dw_chart_get_readout (DwChart *self);
/* Counts of what the last data draw marked (for tests). */
/* The marker labels written above the plot at the last drawing, one a line ("" when none). */
char *dw_chart_dup_marker_labels (DwChart *self);
void dw_chart_get_marker_counts (DwChart *self, guint *n_nonfinite, guint *n_clipped,
                                 guint *n_restarts);

gboolean dw_chart_export (DwChart *self, const char *path, DwExportFormat format, int width,
                          int height, GError **error);
gboolean dw_chart_export_csv (DwChart *self, const char *path, GError **error);

/* Draws the data layer of @self (@width × @height) on @cr, as a frame does; for benchmarks. */
void dw_chart_draw_frame (DwChart *self, cairo_t *cr, int width, int height);

G_END_DECLS
