/* dw-chart-series-layer.c — a chart's series: min/max envelopes, the EMA over the faded raw line,
 * and ticks where data leaves the view
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include "dw-chart-private.h"

struct _DwChartSeriesLayer
{
  DwChartLayer parent_instance;
};

G_DEFINE_FINAL_TYPE (DwChartSeriesLayer, dw_chart_series_layer, DW_TYPE_CHART_LAYER)

/* Clipped data: a tick on the edge where data leaves the view, never silently hidden. */
static void
dw_chart_series_layer_draw_clipped (DwChart *self, cairo_t *cr, const DwChartFrame *f,
                                    DwChartSeries *s, const DwColumn *cols, guint width)
{
  double top = f->py, bottom = f->py + f->ph;
  gboolean clip_run_top = FALSE, clip_run_bottom = FALSE;

  cairo_save (cr);
  dw_chart_style_set_color (cr, &s->color, 1);
  for (guint c = 0; c <= width; c++)
    {
      const DwColumn *col = c < width ? &cols[c] : NULL;
      gboolean above = col && col->hi > col->lo && col->max >= col->min
                       && dw_chart_frame_y (f, col->max) < top - 0.5;
      gboolean below
        = col && col->hi > col->lo && col->max >= col->min
          && (dw_chart_frame_y (f, col->min) > bottom + 0.5 || (f->log_y && col->min <= 0));
      double cx = f->px + c + 0.5;

      if (above && !clip_run_top)
        {
          cairo_move_to (cr, cx - 4, top + 5);
          cairo_line_to (cr, cx + 4, top + 5);
          cairo_line_to (cr, cx, top - 1);
          cairo_close_path (cr);
          cairo_fill (cr);
          self->n_clipped++;
        }
      if (above)
        cairo_rectangle (cr, cx - 0.5, top - 1, 1, 2);
      if (below && !clip_run_bottom)
        {
          cairo_move_to (cr, cx - 4, bottom - 5);
          cairo_line_to (cr, cx + 4, bottom - 5);
          cairo_line_to (cr, cx, bottom + 1);
          cairo_close_path (cr);
          cairo_fill (cr);
          self->n_clipped++;
        }
      if (below)
        cairo_rectangle (cr, cx - 0.5, bottom - 1, 1, 2);
      cairo_fill (cr);
      clip_run_top = above;
      clip_run_bottom = below;
    }
  cairo_restore (cr);
}

/* One series as per-pixel-column envelopes: a bar from min to max in every column and a
 * connector from the last point of a column to the first of the next, which inks what a stroke
 * through every point would (up to antialiasing) at a cost independent of the number of points. */
static void
dw_chart_series_layer_draw_envelope (DwChart *self, cairo_t *cr, const DwChartFrame *f,
                                     const DwChartStyle *st, DwChartSeries *s, const DwPyramid *p,
                                     double alpha, double lw, gboolean main)
{
  gsize n = dw_pyramid_get_length (p);
  const double *x = dw_plot_series_get_x (s->data, self->x_mode);
  const double *v = dw_pyramid_get_values (p);
  guint width = CLAMP ((guint)ceil (f->pw), 1, MAX_COLUMNS);
  DwColumn *cols = self->columns;
  gboolean have_prev = FALSE;
  double prev_x = 0, prev_y = 0;

  if (n == 0)
    return;
  dw_pyramid_columns (p, x, f->x0, f->x1, width, cols);

  /* Connect to the nearest point left of the view, so a zoomed line enters from the edge. */
  if (cols[0].lo > 0 && isfinite (v[cols[0].lo - 1]) && (!f->log_y || v[cols[0].lo - 1] > 0))
    {
      have_prev = TRUE;
      prev_x = dw_chart_frame_x (f, x[cols[0].lo - 1]);
      prev_y = dw_chart_frame_y (f, v[cols[0].lo - 1]);
    }

  cairo_save (cr);
  cairo_rectangle (cr, f->px - lw, f->py - lw, f->pw + 2 * lw, f->ph + 2 * lw);
  cairo_clip (cr);
  dw_chart_style_set_color (cr, &s->color, alpha);
  cairo_set_line_width (cr, lw);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);

  /* Columns next to each other join by stretching the bar to the previous column's last
   * value: everything is then a pixel-aligned rectangle, cairo's fast path. Only columns with
   * empty columns between them (a zoomed-in, sparse view) need a stroked connector. */
  {
    double bar_w = MAX (1, round (lw));
    guint prev_c = G_MAXUINT;
    g_autoptr (GArray) links = g_array_new (FALSE, FALSE, sizeof (double));
    gboolean prev_ok = have_prev;

    for (guint c = 0; c < width; c++)
      {
        DwColumn *col = &cols[c];
        gboolean first_ok, last_ok, has_range;
        double lo_v, hi_v, a, b, bx;

        if (col->hi == col->lo)
          continue;
        first_ok = isfinite (col->first) && (!f->log_y || col->first > 0);
        last_ok = isfinite (col->last) && (!f->log_y || col->last > 0);
        has_range = col->max >= col->min && (!f->log_y || col->max > 0);
        lo_v = col->min;
        hi_v = col->max;
        if (prev_ok && first_ok && prev_c != G_MAXUINT && prev_c + 1 == c)
          {
            double pv = cols[prev_c].last;
            lo_v = has_range ? MIN (lo_v, pv) : pv;
            hi_v = has_range ? MAX (hi_v, pv) : pv;
            has_range = TRUE;
          }
        else if (prev_ok && first_ok)
          {
            double seg[4] = { prev_x, prev_y, dw_chart_frame_x (f, x[col->lo]),
                              dw_chart_frame_y (f, col->first) };
            g_array_append_vals (links, seg, 4);
          }
        if (has_range)
          {
            bx = col->hi - col->lo == 1 && prev_c + 1 != c
                   ? round (dw_chart_frame_x (f, x[col->lo]) - bar_w / 2)
                   : f->px + c;
            a = floor (dw_chart_frame_y (f, hi_v) - bar_w / 2);
            b = ceil (dw_chart_frame_y (f, f->log_y && lo_v <= 0 ? f->y0 * 1e-3 : lo_v)
                      + bar_w / 2);
            cairo_rectangle (cr, bx, a, bar_w, MAX (b - a, bar_w));
          }
        prev_c = c;
        prev_ok = last_ok;
        if (last_ok)
          {
            prev_x = dw_chart_frame_x (f, x[col->hi - 1]);
            prev_y = dw_chart_frame_y (f, col->last);
          }
      }
    {
      gsize after = cols[width - 1].hi;
      if (prev_ok && prev_c != G_MAXUINT && after < n && isfinite (v[after])
          && (!f->log_y || v[after] > 0))
        {
          double seg[4]
            = { prev_x, prev_y, dw_chart_frame_x (f, x[after]), dw_chart_frame_y (f, v[after]) };
          g_array_append_vals (links, seg, 4);
        }
    }
    cairo_fill (cr);
    for (guint i = 0; i < links->len; i += 4)
      {
        const double *seg = &g_array_index (links, double, i);
        cairo_move_to (cr, seg[0], seg[1]);
        cairo_line_to (cr, seg[2], seg[3]);
      }
    cairo_stroke (cr);
  }
  cairo_restore (cr);

  if (main)
    dw_chart_series_layer_draw_clipped (self, cr, f, s, cols, width);
}

static void
dw_chart_series_layer_draw (DwChartLayer *layer, DwChart *self, cairo_t *cr, const DwChartFrame *f,
                            const DwChartStyle *st)
{
  self->n_clipped = 0;
  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *s = g_ptr_array_index (self->series, i);

      if (self->smoothing > 0)
        dw_chart_series_layer_draw_envelope (self, cr, f, st, s, dw_plot_series_get_raw (s->data),
                                             0.25, 1.0, FALSE);
      dw_chart_series_layer_draw_envelope (self, cr, f, st, s, _dw_chart_main_pyramid (self, s),
                                           1.0, st->line_width, TRUE);
    }
}

static void
dw_chart_series_layer_class_init (DwChartSeriesLayerClass *klass)
{
  DW_CHART_LAYER_CLASS (klass)->draw = dw_chart_series_layer_draw;
}

static void
dw_chart_series_layer_init (DwChartSeriesLayer *self)
{
}
