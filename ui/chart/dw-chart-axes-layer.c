/* dw-chart-axes-layer.c — the grid, tick labels, axis titles and legend of a chart
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include <glib/gi18n.h>

#include "dw-chart-private.h"

struct _DwChartAxesLayer
{
  DwChartLayer parent_instance;
};

G_DEFINE_FINAL_TYPE (DwChartAxesLayer, dw_chart_axes_layer, DW_TYPE_CHART_LAYER)

static DwAxisKind
dw_chart_axes_layer_x_kind (DwChart *self)
{
  return self->x_mode == DW_X_RELATIVE ? DW_AXIS_RELATIVE
         : self->x_mode == DW_X_WALL   ? DW_AXIS_WALL_TIME
                                       : DW_AXIS_STEP;
}

static const char *
dw_chart_axes_layer_x_title (DwChart *self)
{
  return self->x_mode == DW_X_RELATIVE ? _ ("time since the start")
         : self->x_mode == DW_X_WALL   ? _ ("wall-clock time")
                                       : _ ("training step");
}

/* The y unit as the reader sees it: the canonical units ("fraction", "nats", "tokens") are
 * identifiers the frame compares ("fraction" starts the axis at 0), translated only where drawn. */
static const char *
dw_chart_axes_layer_y_title (DwChart *self)
{
  if (g_strcmp0 (self->y_unit, "fraction") == 0)
    return C_ ("y axis unit", "fraction");
  if (g_strcmp0 (self->y_unit, "nats") == 0)
    return C_ ("y axis unit", "nats");
  if (g_strcmp0 (self->y_unit, "tokens") == 0)
    return C_ ("y axis unit", "tokens");
  return self->y_unit;
}

static void
dw_chart_axes_layer_draw_axes (DwChart *self, cairo_t *cr, const DwChartFrame *f,
                               const DwChartStyle *st, int width)
{
  DwAxisTick ticks[N_TICKS_MAX];
  guint n;
  double last_right = -INFINITY;
  int widest = 0, target_x;

  cairo_save (cr);
  cairo_set_line_width (cr, 1);

  for (guint i = 0; i < f->n_yticks; i++)
    {
      double y = round (dw_chart_frame_y (f, f->yticks[i].value)) + 0.5;

      if (y < f->py - 0.5 || y > f->py + f->ph + 0.5)
        continue;
      dw_chart_style_set_color (cr, &st->grid, f->yticks[i].labelled ? 1 : 0.5);
      cairo_move_to (cr, f->px, y);
      cairo_line_to (cr, f->px + f->pw, y);
      cairo_stroke (cr);
      if (!f->yticks[i].labelled)
        continue;
      dw_chart_style_set_color (cr, &st->fg, 0.7);
      dw_chart_style_text (cr, st, f->yticks[i].label, f->px - 6, y, 1, 0.5, 0.8, FALSE);
    }

  /* x ticks: as many as fit labels as wide as the widest of a first pass, plus a gap */
  n = dw_chart_axes_ticks (dw_chart_axes_layer_x_kind (self), f->x0, f->x1,
                           MAX (2, (int)(f->pw / 60)), ticks, N_TICKS_MAX);
  for (guint i = 0; i < n; i++)
    widest = MAX (widest, _dw_chart_text_width (self, ticks[i].label));
  target_x = MAX (2, (int)(f->pw / (widest + 24)));
  n = dw_chart_axes_ticks (dw_chart_axes_layer_x_kind (self), f->x0, f->x1, target_x, ticks,
                           N_TICKS_MAX);
  for (guint i = 0; i < n; i++)
    {
      double x = round (dw_chart_frame_x (f, ticks[i].value)) + 0.5;
      int w = _dw_chart_text_width (self, ticks[i].label);
      double left = CLAMP (x - w / 2.0, 0, width - w - 1);

      if (x < f->px - 0.5 || x > f->px + f->pw + 0.5)
        continue;
      dw_chart_style_set_color (cr, &st->grid, 1);
      cairo_move_to (cr, x, f->py);
      cairo_line_to (cr, x, f->py + f->ph);
      cairo_stroke (cr);
      /* kept inside the widget, and never over the previous label */
      if (left < last_right + 4)
        continue;
      dw_chart_style_set_color (cr, &st->fg, 0.7);
      dw_chart_style_text (cr, st, ticks[i].label, left, f->py + f->ph + 4, 0, 0, 0.8, FALSE);
      last_right = left + w;
    }

  /* axis titles: the x quantity under its labels, the y unit along the left edge */
  dw_chart_style_set_color (cr, &st->fg, 0.55);
  dw_chart_style_text (cr, st, dw_chart_axes_layer_x_title (self), f->px + f->pw,
                       f->py + f->ph + 4 + AXIS_TITLE, 1, 0, 0.75, FALSE);
  if (self->y_unit != NULL)
    {
      cairo_save (cr);
      cairo_translate (cr, 2, f->py + f->ph / 2);
      cairo_rotate (cr, -G_PI / 2);
      dw_chart_style_text (cr, st, dw_chart_axes_layer_y_title (self), 0, 0, 0.5, 0, 0.75, FALSE);
      cairo_restore (cr);
    }

  /* Plot frame: baseline and left axis. */
  dw_chart_style_set_color (cr, &st->fg, st->high_contrast ? 0.8 : 0.3);
  cairo_move_to (cr, f->px + 0.5, f->py);
  cairo_line_to (cr, f->px + 0.5, f->py + f->ph + 0.5);
  cairo_line_to (cr, f->px + f->pw, f->py + f->ph + 0.5);
  cairo_stroke (cr);
  cairo_restore (cr);
}

/* The names of a card's lines, over the plot: a swatch and a label for each metric (in the
 * colour of its first run), sharing the width; a label too long for its share is ellipsized. */
static void
dw_chart_axes_layer_draw_legend (DwChart *self, cairo_t *cr, const DwChartFrame *f,
                                 const DwChartStyle *st, int width)
{
  g_autoptr (GPtrArray) shown = g_ptr_array_new ();
  double x = f->px, share;

  if (f->legend_y < 0)
    return;
  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *series = g_ptr_array_index (self->series, i);
      const char *text = _dw_chart_legend_text (series);
      gboolean seen = FALSE;

      for (guint j = 0; text != NULL && j < shown->len; j++)
        seen |= g_str_equal (_dw_chart_legend_text (g_ptr_array_index (shown, j)), text);
      if (text != NULL && !seen)
        g_ptr_array_add (shown, series);
    }
  share = (width - MARGIN_RIGHT - f->px) / MAX (shown->len, 1u);
  for (guint i = 0; i < shown->len; i++)
    {
      DwChartSeries *series = g_ptr_array_index (shown, i);
      g_autoptr (PangoLayout) layout
        = dw_chart_style_layout (cr, st, _dw_chart_legend_text (series), 0.8, FALSE);
      int w, h;

      pango_layout_set_width (layout, (int)MAX (share - 30, 10) * PANGO_SCALE);
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
      pango_layout_get_pixel_size (layout, &w, &h);
      dw_chart_style_set_color (cr, &series->color, 1);
      cairo_rectangle (cr, x, f->legend_y + 8, 12, 3);
      cairo_fill (cr);
      dw_chart_style_set_color (cr, &st->fg, 0.8);
      cairo_move_to (cr, round (x + 16), round (f->legend_y + 2));
      pango_cairo_show_layout (cr, layout);
      x += 16 + w + 14;
    }
}

static void
dw_chart_axes_layer_draw (DwChartLayer *layer, DwChart *self, cairo_t *cr, const DwChartFrame *f,
                          const DwChartStyle *st)
{
  dw_chart_axes_layer_draw_axes (self, cr, f, st, f->width);
  dw_chart_axes_layer_draw_legend (self, cr, f, st, f->width);
}

static void
dw_chart_axes_layer_class_init (DwChartAxesLayerClass *klass)
{
  DW_CHART_LAYER_CLASS (klass)->draw = dw_chart_axes_layer_draw;
}

static void
dw_chart_axes_layer_init (DwChartAxesLayer *self)
{
}
