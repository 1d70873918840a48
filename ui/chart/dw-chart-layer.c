/* dw-chart-layer.c — the base class of a chart's layers: its own render node, redrawn only when
 * invalidated
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * GTK keeps one render node per widget, so putting each layer into a widget of its own means
 * pointer motion re-snapshots only the overlay; the data layers' nodes are reused as they are.
 * A layer's snapshot asks its chart for the frame of this size and the theme's style, then calls
 * the subclass's draw ().
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include "dw-chart-private.h"

typedef struct
{
  DwChartLayerKind kind;
  guint draw_count;
} DwChartLayerPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (DwChartLayer, dw_chart_layer, GTK_TYPE_WIDGET)

static void
dw_chart_layer_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  DwChartLayer *self = DW_CHART_LAYER (widget);
  DwChartLayerPrivate *priv = dw_chart_layer_get_instance_private (self);
  GtkWidget *chart = gtk_widget_get_parent (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  DwChartStyle style;
  DwChartFrame frame;
  cairo_t *cr;

  if (width <= 0 || height <= 0 || !DW_IS_CHART (chart))
    return;
  priv->draw_count++;
  dw_chart_style_widget (DW_CHART (chart), &style);
  _dw_chart_make_frame (DW_CHART (chart), &frame, width, height);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  dw_chart_layer_draw (self, DW_CHART (chart), cr, &frame, &style);
  cairo_destroy (cr);
}

static void
dw_chart_layer_class_init (DwChartLayerClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  widget_class->snapshot = dw_chart_layer_snapshot;
}

static void
dw_chart_layer_init (DwChartLayer *self)
{
  gtk_widget_set_can_target (GTK_WIDGET (self), FALSE);
  gtk_widget_set_can_focus (GTK_WIDGET (self), FALSE);
}

GtkWidget *
dw_chart_layer_new (DwChartLayerKind kind)
{
  GType type;
  DwChartLayer *self;

  switch (kind)
    {
    case DW_CHART_LAYER_AXES:
      type = DW_TYPE_CHART_AXES_LAYER;
      break;
    case DW_CHART_LAYER_THRESHOLDS:
      type = DW_TYPE_CHART_THRESHOLDS_LAYER;
      break;
    case DW_CHART_LAYER_MARKERS:
      type = DW_TYPE_CHART_MARKERS_LAYER;
      break;
    case DW_CHART_LAYER_OVERLAY:
      type = DW_TYPE_CHART_OVERLAY_LAYER;
      break;
    case DW_CHART_LAYER_DATA:
    case DW_CHART_N_LAYERS:
    default:
      type = DW_TYPE_CHART_SERIES_LAYER;
      kind = DW_CHART_LAYER_DATA;
      break;
    }
  self = g_object_new (type, NULL);
  ((DwChartLayerPrivate *)dw_chart_layer_get_instance_private (self))->kind = kind;
  return GTK_WIDGET (self);
}

DwChartLayerKind
dw_chart_layer_get_kind (DwChartLayer *self)
{
  DwChartLayerPrivate *priv = dw_chart_layer_get_instance_private (self);

  g_return_val_if_fail (DW_IS_CHART_LAYER (self), DW_CHART_LAYER_DATA);
  return priv->kind;
}

void
dw_chart_layer_draw (DwChartLayer *self, DwChart *chart, cairo_t *cr, const DwChartFrame *frame,
                     const DwChartStyle *style)
{
  g_return_if_fail (DW_IS_CHART_LAYER (self));
  if (DW_CHART_LAYER_GET_CLASS (self)->draw != NULL)
    DW_CHART_LAYER_GET_CLASS (self)->draw (self, chart, cr, frame, style);
}

guint
dw_chart_layer_get_draw_count (DwChartLayer *self)
{
  DwChartLayerPrivate *priv = dw_chart_layer_get_instance_private (self);

  g_return_val_if_fail (DW_IS_CHART_LAYER (self), 0);
  return priv->draw_count;
}
