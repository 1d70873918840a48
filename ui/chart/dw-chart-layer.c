/* dw-chart-layer.c — a chart layer: its own render node, redrawn only when invalidated
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * GTK keeps one render node per widget, so putting the data and the hover overlay into separate
 * widgets means pointer motion re-snapshots only the overlay; the data node is reused as is.
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include "dw-chart-private.h"

struct _DwChartLayer
{
  GtkWidget parent_instance;
  DwChartLayerKind kind;
  guint draw_count;
};

G_DEFINE_FINAL_TYPE (DwChartLayer, dw_chart_layer, GTK_TYPE_WIDGET)

static void
dw_chart_layer_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  DwChartLayer *self = DW_CHART_LAYER (widget);
  GtkWidget *chart = gtk_widget_get_parent (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  cairo_t *cr;

  if (width <= 0 || height <= 0 || !DW_IS_CHART (chart))
    return;
  self->draw_count++;
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (self->kind == DW_CHART_LAYER_DATA)
    _dw_chart_draw_data (DW_CHART (chart), cr, width, height);
  else
    _dw_chart_draw_overlay (DW_CHART (chart), cr, width, height);
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
  DwChartLayer *self = g_object_new (DW_TYPE_CHART_LAYER, NULL);

  self->kind = kind;
  return GTK_WIDGET (self);
}

DwChartLayerKind
dw_chart_layer_get_kind (DwChartLayer *self)
{
  return self->kind;
}

guint
dw_chart_layer_get_draw_count (DwChartLayer *self)
{
  return self->draw_count;
}
