/* dw-chart-layer.h — one drawing layer of a DwChart (data or hover overlay)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef enum
{
  DW_CHART_LAYER_DATA = 0,
  DW_CHART_LAYER_OVERLAY,
} DwChartLayerKind;

#define DW_TYPE_CHART_LAYER (dw_chart_layer_get_type ())
G_DECLARE_FINAL_TYPE (DwChartLayer, dw_chart_layer, DW, CHART_LAYER, GtkWidget)

GtkWidget *dw_chart_layer_new (DwChartLayerKind kind);
DwChartLayerKind dw_chart_layer_get_kind (DwChartLayer *self);
/* Number of times the layer drew itself (tests check hover leaves the data layer alone). */
guint dw_chart_layer_get_draw_count (DwChartLayer *self);

G_END_DECLS
