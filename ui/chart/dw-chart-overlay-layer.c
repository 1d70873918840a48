/* dw-chart-overlay-layer.c — what follows the pointer: the hover cursor with a dot on every
 * series' nearest sample, and the zoom rectangle while dragging
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include "dw-chart-private.h"

struct _DwChartOverlayLayer
{
  DwChartLayer parent_instance;
};

G_DEFINE_FINAL_TYPE (DwChartOverlayLayer, dw_chart_overlay_layer, DW_TYPE_CHART_LAYER)

static void
dw_chart_overlay_layer_draw (DwChartLayer *layer, DwChart *self, cairo_t *cr, const DwChartFrame *f,
                             const DwChartStyle *st)
{
  double cx;

  if (self->dragging)
    {
      double x0 = MIN (self->drag_x0, self->drag_x1), x1 = MAX (self->drag_x0, self->drag_x1);
      double y0 = f->py, y1 = f->py + f->ph;
      if (fabs (self->drag_y1 - self->drag_y0) >= 10)
        {
          y0 = MIN (self->drag_y0, self->drag_y1);
          y1 = MAX (self->drag_y0, self->drag_y1);
        }
      dw_chart_style_set_color (cr, &st->fg, 0.12);
      cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
      cairo_fill_preserve (cr);
      dw_chart_style_set_color (cr, &st->fg, 0.5);
      cairo_set_line_width (cr, 1);
      cairo_stroke (cr);
    }

  if (!isfinite (self->cursor_x))
    return;
  cx = dw_chart_frame_x (f, self->cursor_x);
  if (cx < f->px || cx > f->px + f->pw)
    return;
  dw_chart_style_set_color (cr, &st->fg, 0.5);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, round (cx) + 0.5, f->py);
  cairo_line_to (cr, round (cx) + 0.5, f->py + f->ph);
  cairo_stroke (cr);

  /* Dots on every run's nearest real sample (hover snaps to data, never to an interpolation). */
  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *series = g_ptr_array_index (self->series, i);
      gssize j = dw_plot_series_nearest (series->data, self->x_mode, self->cursor_x);
      const double *v;
      double px, py;

      if (j < 0)
        continue;
      v = dw_pyramid_get_values (_dw_chart_main_pyramid (self, series));
      if (!isfinite (v[j]))
        continue;
      px = dw_chart_frame_x (f, dw_plot_series_get_x (series->data, self->x_mode)[j]);
      py = dw_chart_frame_y (f, v[j]);
      if (py < f->py || py > f->py + f->ph)
        continue;
      dw_chart_style_set_color (cr, &st->bg, 1);
      cairo_arc (cr, px, py, 4.5, 0, 2 * G_PI);
      cairo_fill (cr);
      dw_chart_style_set_color (cr, &series->color, 1);
      cairo_arc (cr, px, py, 3, 0, 2 * G_PI);
      cairo_fill (cr);
    }
}

static void
dw_chart_overlay_layer_class_init (DwChartOverlayLayerClass *klass)
{
  DW_CHART_LAYER_CLASS (klass)->draw = dw_chart_overlay_layer_draw;
}

static void
dw_chart_overlay_layer_init (DwChartOverlayLayer *self)
{
}
