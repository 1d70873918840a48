/* dw-chart-private.h — what a chart shares with its layers and its export
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The chart (dw-chart.c) owns the data, the bounds and the frame (data → pixel mapping); each
 * layer (dw-chart-*-layer.c) draws one part of the picture from them; dw-chart-export.c draws the
 * same layers on a file's surface.
 */
#pragma once

#include <math.h>

#include "dw-chart-axes.h"
#include "dw-chart-layer.h"
#include "dw-chart.h"

G_BEGIN_DECLS

#define MARGIN_LEFT   56 /* the export's title indent; the plot's is from its tick labels */
#define MARGIN_RIGHT  14
#define MARGIN_TOP    10
#define MARGIN_BOTTOM 24 /* tick labels; the axis title adds AXIS_TITLE */
#define AXIS_TITLE    14
#define LEGEND_BAND   16 /* above the plot, when a card draws several series */
#define N_TICKS_MAX   64
#define EXPORT_TITLE  30
#define MARKER_BAND   16 /* above the plot, for health marker labels */
#define MAX_COLUMNS   8192

typedef struct
{
  char *id;
  char *label;
  GdkRGBA color;
  DwPlotSeries *data;
} DwChartSeries;

typedef struct
{
  double value;
  DwThresholdKind kind;
  char *label;
} DwChartThreshold;

typedef struct
{
  gint64 step;
  DwMarkerSeverity severity;
  char *title;         /* full text, in the hover read-out */
  gboolean show_label; /* also written in the band above the plot, when it fits */
} DwChartMarker;

/* Colours of one drawing: the widget's (theme-dependent) or an export's (always light). */
struct _DwChartStyle
{
  GdkRGBA fg;
  GdkRGBA bg;
  GdkRGBA grid;
  GdkRGBA good;
  GdkRGBA warning;
  GdkRGBA error;
  double line_width;
  gboolean high_contrast;
  const PangoFontDescription *font;
};

/* Data → pixel mapping of one drawing, with the y ticks the left margin was sized for. */
struct _DwChartFrame
{
  double x0, x1, y0, y1; /* data range; y in data units */
  double ty0, ty1;       /* y range after the scale's transform */
  double px, py, pw, ph; /* plot rectangle */
  int width, height;     /* of the whole drawing */
  DwChartScale scale;
  gboolean log_y;   /* scale == DW_CHART_SCALE_LOG: values <= 0 are not drawn */
  double linthresh; /* symlog: the linear part around 0 is [-linthresh, linthresh] */
  double legend_y;  /* top of the legend band, < 0 when there is none */
  guint n_yticks;
  DwAxisTick yticks[N_TICKS_MAX];
};

struct _DwChart
{
  GtkWidget parent_instance;

  /* the layers by DwChartLayerKind; they are children in drawing order (dw_chart_init) */
  GtkWidget *layers[DW_CHART_N_LAYERS];
  GtkWidget *readout; /* DwChartReadout: the hover read-out, a popover */

  char *title;
  DwChartScale y_scale;
  DwXMode x_mode;
  double smoothing;
  gboolean ignore_outliers;
  int natural_width; /* preferred width, 420 unless dw_chart_set_natural_width () */
  char *y_unit;      /* "nats", "fraction", …: the y axis title; NULL for none */
  double cursor_x;

  GPtrArray *series; /* DwChartSeries* */
  GPtrArray *thresholds;
  GPtrArray *markers;
  double band_lo, band_hi;

  gboolean zoomed;
  gboolean zoomed_y;
  double zx0, zx1, zy0, zy1;

  double range_y0, range_y1; /* the card's own y range (NAN: automatic) */
  gboolean follow_latest;    /* the x view ends at the newest point */
  double follow_span;        /* how much x the followed view shows (0: the zoom's or all) */

  gboolean bounds_valid;
  double bx0, bx1, by0, by1;
  double linthresh;

  /* the frame of the last size drawn, while the bounds hold */
  gboolean frame_valid;
  DwChartFrame frame;

  gboolean hovering;
  double hover_px, hover_py;

  gboolean dragging;
  double drag_x0, drag_y0, drag_x1, drag_y1;

  guint tick_id;
  DwColumn *columns;

  guint n_nonfinite, n_clipped, n_restarts;
  GString *band_labels; /* the marker labels of the last drawing, one a line */
};

/* Data → pixel transforms of a frame. */

static inline double
dw_chart_frame_t (const DwChartFrame *f, double y)
{
  if (f->scale == DW_CHART_SCALE_SYMLOG)
    return y >= 0 ? log10 (1 + y / f->linthresh) : -log10 (1 - y / f->linthresh);
  if (!f->log_y)
    return y;
  return y > 0 ? log10 (y) : -INFINITY;
}

static inline double
dw_chart_frame_x (const DwChartFrame *f, double x)
{
  return f->px + (x - f->x0) / (f->x1 - f->x0) * f->pw;
}

static inline double
dw_chart_frame_y (const DwChartFrame *f, double y)
{
  double t = dw_chart_frame_t (f, y);
  double p = f->py + f->ph - (t - f->ty0) / (f->ty1 - f->ty0) * f->ph;

  /* Keep far-off points at a distance cairo handles exactly. */
  if (!(p > -1e5))
    return -1e5;
  return MIN (p, 1e5);
}

static inline double
dw_chart_frame_inv_x (const DwChartFrame *f, double px)
{
  return f->x0 + (px - f->px) / f->pw * (f->x1 - f->x0);
}

static inline double
dw_chart_frame_inv_y (const DwChartFrame *f, double py)
{
  double t = f->ty0 + (f->py + f->ph - py) / f->ph * (f->ty1 - f->ty0);

  if (f->scale == DW_CHART_SCALE_SYMLOG)
    return t >= 0 ? f->linthresh * (pow (10, t) - 1) : -f->linthresh * (pow (10, -t) - 1);
  return f->log_y ? pow (10, t) : t;
}

/* dw-chart-frame.c: the view (bounds) and the frame of a drawing of @width × @height */
void _dw_chart_ensure_bounds (DwChart *self);
void _dw_chart_make_frame (DwChart *self, DwChartFrame *f, int width, int height);
const DwPyramid *_dw_chart_main_pyramid (DwChart *self, DwChartSeries *s);
int _dw_chart_text_width (DwChart *self, const char *text);
/* The legend: what names a series' line within the card, and whether the frame has its band. */
const char *_dw_chart_legend_text (const DwChartSeries *s);
gboolean _dw_chart_has_legend (DwChart *self);

/* dw-chart.c: the shared state layers draw from */
double _dw_chart_x_of_step (DwChart *self, gint64 step);
GtkWidget *_dw_chart_get_layer (DwChart *self, DwChartLayerKind kind);
/* Draws every layer but the overlay, as the widget does, on @cr (export, benchmarks). */
void _dw_chart_draw_layers (DwChart *self, cairo_t *cr, const DwChartFrame *f,
                            const DwChartStyle *st);

/* dw-chart-style.c: colours and text */
void dw_chart_style_parse (GdkRGBA *c, const char *spec);
void dw_chart_style_widget (DwChart *self, DwChartStyle *st);
void dw_chart_style_export (DwChart *self, DwChartStyle *st);
void dw_chart_style_set_color (cairo_t *cr, const GdkRGBA *c, double alpha);
PangoLayout *dw_chart_style_layout (cairo_t *cr, const DwChartStyle *st, const char *text,
                                    double scale, gboolean bold);
void dw_chart_style_text (cairo_t *cr, const DwChartStyle *st, const char *text, double x, double y,
                          double ax, double ay, double scale, gboolean bold);

/* the layers (one file each) */
#define DW_TYPE_CHART_AXES_LAYER (dw_chart_axes_layer_get_type ())
G_DECLARE_FINAL_TYPE (DwChartAxesLayer, dw_chart_axes_layer, DW, CHART_AXES_LAYER, DwChartLayer)
#define DW_TYPE_CHART_THRESHOLDS_LAYER (dw_chart_thresholds_layer_get_type ())
G_DECLARE_FINAL_TYPE (DwChartThresholdsLayer, dw_chart_thresholds_layer, DW, CHART_THRESHOLDS_LAYER,
                      DwChartLayer)
#define DW_TYPE_CHART_SERIES_LAYER (dw_chart_series_layer_get_type ())
G_DECLARE_FINAL_TYPE (DwChartSeriesLayer, dw_chart_series_layer, DW, CHART_SERIES_LAYER,
                      DwChartLayer)
#define DW_TYPE_CHART_MARKERS_LAYER (dw_chart_markers_layer_get_type ())
G_DECLARE_FINAL_TYPE (DwChartMarkersLayer, dw_chart_markers_layer, DW, CHART_MARKERS_LAYER,
                      DwChartLayer)
#define DW_TYPE_CHART_OVERLAY_LAYER (dw_chart_overlay_layer_get_type ())
G_DECLARE_FINAL_TYPE (DwChartOverlayLayer, dw_chart_overlay_layer, DW, CHART_OVERLAY_LAYER,
                      DwChartLayer)

G_END_DECLS
