/* dw-chart-thresholds-layer.c — threshold lines and the acceptable band of a chart
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include "dw-chart-private.h"

struct _DwChartThresholdsLayer
{
  DwChartLayer parent_instance;
};

G_DEFINE_FINAL_TYPE (DwChartThresholdsLayer, dw_chart_thresholds_layer, DW_TYPE_CHART_LAYER)

static void
dw_chart_thresholds_layer_draw_lines (DwChart *self, cairo_t *cr, const DwChartFrame *f,
                                      const DwChartStyle *st)
{
  cairo_save (cr);
  cairo_rectangle (cr, f->px, f->py, f->pw, f->ph);
  cairo_clip (cr);

  if (isfinite (self->band_lo) && isfinite (self->band_hi))
    {
      double a = dw_chart_frame_y (f, self->band_hi), b = dw_chart_frame_y (f, self->band_lo);
      dw_chart_style_set_color (cr, &st->good, st->high_contrast ? 0.18 : 0.08);
      cairo_rectangle (cr, f->px, a, f->pw, b - a);
      cairo_fill (cr);
    }
  for (guint i = 0; i < self->thresholds->len; i++)
    {
      DwChartThreshold *threshold = g_ptr_array_index (self->thresholds, i);
      const GdkRGBA *color = threshold->kind == DW_THRESHOLD_WARNING ? &st->warning
                             : threshold->kind == DW_THRESHOLD_GOOD  ? &st->good
                                                                     : &st->fg;
      double y = round (dw_chart_frame_y (f, threshold->value)) + 0.5;
      double dash[] = { 5, 4 };

      if (y < f->py || y > f->py + f->ph)
        continue;
      dw_chart_style_set_color (cr, color, threshold->kind == DW_THRESHOLD_IDEAL ? 0.45 : 0.85);
      cairo_set_line_width (cr, st->high_contrast ? 2 : 1);
      cairo_set_dash (cr, dash, threshold->kind == DW_THRESHOLD_IDEAL ? 0 : 2, 0);
      cairo_move_to (cr, f->px, y);
      cairo_line_to (cr, f->px + f->pw, y);
      cairo_stroke (cr);
      if (threshold->label != NULL)
        dw_chart_style_text (cr, st, threshold->label, f->px + f->pw - 4, y - 2, 1, 1, 0.75, FALSE);
    }
  cairo_restore (cr);
}

static void
dw_chart_thresholds_layer_draw (DwChartLayer *layer, DwChart *self, cairo_t *cr,
                                const DwChartFrame *f, const DwChartStyle *st)
{
  dw_chart_thresholds_layer_draw_lines (self, cr, f, st);
}

static void
dw_chart_thresholds_layer_class_init (DwChartThresholdsLayerClass *klass)
{
  DW_CHART_LAYER_CLASS (klass)->draw = dw_chart_thresholds_layer_draw;
}

static void
dw_chart_thresholds_layer_init (DwChartThresholdsLayer *self)
{
}
