/* dw-chart-layer.h — one drawing layer of a DwChart, a derivable class
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A DwChart is a container of layers laid over each other, each a widget of its own (so each has
 * its own render node: pointer motion redraws the overlay only). A subclass implements draw (),
 * which paints its part of the picture from the chart's shared frame (data → pixel mapping) and
 * style; the export draws the same layers on a file's surface.
 */
#pragma once

#include <gtk/gtk.h>

#include "dw-chart.h"

G_BEGIN_DECLS

typedef enum
{
  DW_CHART_LAYER_DATA = 0, /* the series: lines, envelopes, EMA */
  DW_CHART_LAYER_OVERLAY,  /* hover cursor and zoom rectangle */
  DW_CHART_LAYER_AXES,     /* grid, ticks, axis titles, legend */
  DW_CHART_LAYER_THRESHOLDS,
  DW_CHART_LAYER_MARKERS, /* restarts, health flags, NaN/inf marks */
  DW_CHART_N_LAYERS
} DwChartLayerKind;

typedef struct _DwChartFrame DwChartFrame;
typedef struct _DwChartStyle DwChartStyle;

#define DW_TYPE_CHART_LAYER (dw_chart_layer_get_type ())
G_DECLARE_DERIVABLE_TYPE (DwChartLayer, dw_chart_layer, DW, CHART_LAYER, GtkWidget)

struct _DwChartLayerClass
{
  GtkWidgetClass parent_class;

  /* Paints the layer of @chart on @cr with the frame and style of this drawing. */
  void (*draw) (DwChartLayer *self, DwChart *chart, cairo_t *cr, const DwChartFrame *frame,
                const DwChartStyle *style);

  gpointer padding[4];
};

/* A layer of @kind (the chart makes one of each). */
GtkWidget *dw_chart_layer_new (DwChartLayerKind kind);
DwChartLayerKind dw_chart_layer_get_kind (DwChartLayer *self);
void dw_chart_layer_draw (DwChartLayer *self, DwChart *chart, cairo_t *cr,
                          const DwChartFrame *frame, const DwChartStyle *style);
/* Number of times the layer drew itself (tests check hover leaves the data layer alone). */
guint dw_chart_layer_get_draw_count (DwChartLayer *self);

G_END_DECLS
