/* dw-chart-frame.c — a chart's view and frame: the x and y bounds (automatic, zoomed, the card's
 * own y range, following the newest point; linear, log or symmetric-log), and the data → pixel
 * frame every layer of a drawing shares (plot rectangle, y ticks, margins sized to the labels)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include <math.h>
#include <string.h>

#include "dw-chart-private.h"
#include "dw-smooth.h"

const DwPyramid *
_dw_chart_main_pyramid (DwChart *self, DwChartSeries *s)
{
  return self->smoothing > 0 ? dw_plot_series_get_smoothed (s->data)
                             : dw_plot_series_get_raw (s->data);
}

static void
dw_chart_frame_x_extent (DwChart *self, double *x0, double *x1)
{
  *x0 = INFINITY;
  *x1 = -INFINITY;
  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *s = g_ptr_array_index (self->series, i);
      gsize n = dw_plot_series_get_length (s->data);
      const double *x = dw_plot_series_get_x (s->data, self->x_mode);

      if (n == 0 || !isfinite (x[0]))
        continue;
      *x0 = MIN (*x0, x[0]);
      *x1 = MAX (*x1, x[n - 1]);
    }
  if (!isfinite (*x0))
    {
      *x0 = 0;
      *x1 = 1;
    }
  if (*x1 <= *x0)
    {
      *x0 -= 0.5;
      *x1 += 0.5;
    }
  /* a run logged from step 1 (or a few seconds in) is drawn from 0, where training starts */
  if (self->x_mode != DW_X_WALL && *x0 > 0 && *x0 <= 0.1 * (*x1 - *x0))
    *x0 = 0;
}

/* y bounds of the visible x range: all finite values, or TensorBoard's 5–95 % quantiles. */
static void
dw_chart_frame_y_extent (DwChart *self, double x0, double x1, double *y0, double *y1)
{
  g_autoptr (GArray) vals = g_array_new (FALSE, FALSE, sizeof (double));
  gboolean log_y = self->y_scale == DW_CHART_SCALE_LOG;
  double lo = INFINITY, hi = -INFINITY;

  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *s = g_ptr_array_index (self->series, i);
      const DwPyramid *p = _dw_chart_main_pyramid (self, s);
      gsize n = dw_pyramid_get_length (p);
      const double *x = dw_plot_series_get_x (s->data, self->x_mode);
      const double *v = dw_pyramid_get_values (p);
      gsize a = dw_lower_bound (x, n, x0);
      gsize b = dw_lower_bound (x, n, nextafter (x1, INFINITY));

      if ((self->ignore_outliers || log_y) && b - a > 20000)
        {
          /* Long series: quantiles of the per-column minima and maxima (2048 columns), so a
           * live 1 M-point chart does not re-select over every value at each append. */
          dw_pyramid_columns (p, x, x0, x1, 2048, self->columns);
          for (guint c = 0; c < 2048; c++)
            {
              DwColumn *col = &self->columns[c];
              if (col->hi == col->lo || !(col->max >= col->min))
                continue;
              if (!log_y || col->min > 0)
                g_array_append_val (vals, col->min);
              if (!log_y || col->max > 0)
                g_array_append_val (vals, col->max);
            }
        }
      else if (self->ignore_outliers || log_y)
        {
          for (gsize j = a; j < b; j++)
            if (isfinite (v[j]) && (!log_y || v[j] > 0))
              g_array_append_val (vals, v[j]);
        }
      else
        {
          DwRange r;
          dw_pyramid_range (p, a, b, &r);
          lo = MIN (lo, r.min);
          hi = MAX (hi, r.max);
        }
    }
  if (vals->len > 0)
    {
      if (self->ignore_outliers)
        dw_quantile_bounds ((double *)(gpointer)vals->data, vals->len, 0.05, 0.95, &lo, &hi);
      else
        for (guint j = 0; j < vals->len; j++)
          {
            lo = MIN (lo, g_array_index (vals, double, j));
            hi = MAX (hi, g_array_index (vals, double, j));
          }
    }
  /* DwChartThreshold lines and the band stay in view: they are the reference the data is read
   * against. */
  for (guint i = 0; i < self->thresholds->len; i++)
    {
      DwChartThreshold *t = g_ptr_array_index (self->thresholds, i);
      if (!log_y || t->value > 0)
        {
          lo = MIN (lo, t->value);
          hi = MAX (hi, t->value);
        }
    }
  if (!isfinite (lo) || !isfinite (hi))
    {
      lo = log_y ? 0.1 : 0;
      hi = log_y ? 10 : 1;
    }
  /* a fraction is read against 0 (and a fraction that is all 0 against [0, 1]) */
  if (!log_y && g_strcmp0 (self->y_unit, "fraction") == 0 && lo >= 0)
    {
      lo = 0;
      if (hi <= 0)
        hi = 1;
    }
  if (self->y_scale == DW_CHART_SCALE_SYMLOG)
    {
      /* padded in the scale's own space, once the linear part is known (ensure_bounds) */
      *y0 = lo;
      *y1 = hi;
    }
  else if (log_y)
    {
      double l0 = log10 (lo), l1 = log10 (hi);
      double pad = MAX ((l1 - l0) * 0.08, 0.05);
      *y0 = pow (10, l0 - pad);
      *y1 = pow (10, l1 + pad);
    }
  else
    {
      double span = hi - lo;
      /* a constant is drawn in the middle of a range of its own size (1e-6 in [0.9e-6, 1.1e-6],
       * not on the "0" line of [-0.5, 0.5]) */
      double pad = span > 0 ? span * 0.08 : hi != 0 ? fabs (hi) * 0.1 : 0.5;
      *y0 = lo == 0 && span > 0 ? lo - span * 0.02 : lo - pad;
      *y1 = hi + pad;
    }
}

/* The linear part of a symmetric-log axis: three decades below the largest magnitude shown,
 * so small values near 0 are drawn linearly and the rest a decade per step on either side. */
static double
dw_chart_frame_symlog_linthresh (double y0, double y1)
{
  double largest = MAX (fabs (y0), fabs (y1));

  if (!(largest > 0) || !isfinite (largest))
    return 1;
  return pow (10, floor (log10 (largest)) - 3);
}

static double
dw_chart_frame_symlog_inverse (double t, double linthresh)
{
  return t >= 0 ? linthresh * (pow (10, t) - 1) : -linthresh * (pow (10, -t) - 1);
}

/* Pads the automatic y range of a symmetric-log axis by 6 % of its height, in the scale's space. */
static void
dw_chart_frame_symlog_pad (DwChart *self)
{
  DwChartFrame f = { .scale = DW_CHART_SCALE_SYMLOG };
  double t0, t1, pad;

  if (self->by0 == self->by1)
    {
      double half = self->by0 != 0 ? fabs (self->by0) * 0.1 : 0.5;
      self->by0 -= half;
      self->by1 += half;
    }
  f.linthresh = self->linthresh = dw_chart_frame_symlog_linthresh (self->by0, self->by1);
  t0 = dw_chart_frame_t (&f, self->by0);
  t1 = dw_chart_frame_t (&f, self->by1);
  pad = (t1 - t0) * 0.06;
  self->by0 = self->by0 == 0 ? 0 : dw_chart_frame_symlog_inverse (t0 - pad, f.linthresh);
  self->by1 = dw_chart_frame_symlog_inverse (t1 + pad, f.linthresh);
}

/* Following the newest point: the view ends at the last x and keeps its width (the zoom's, or
 * the span asked for; all of the data when neither). */
static void
dw_chart_frame_follow_bounds (DwChart *self, double *x0, double *x1)
{
  double first, last, span;

  dw_chart_frame_x_extent (self, &first, &last);
  span = self->follow_span > 0 ? self->follow_span : self->zoomed ? self->zx1 - self->zx0 : 0;
  if (!(span > 0) || span >= last - first)
    {
      *x0 = first;
      *x1 = last;
      return;
    }
  *x1 = last;
  *x0 = last - span;
  if (self->zoomed)
    {
      self->zx0 = *x0;
      self->zx1 = *x1;
    }
}

void
_dw_chart_ensure_bounds (DwChart *self)
{
  if (self->bounds_valid)
    return;
  if (self->follow_latest)
    dw_chart_frame_follow_bounds (self, &self->bx0, &self->bx1);
  else if (self->zoomed)
    {
      self->bx0 = self->zx0;
      self->bx1 = self->zx1;
    }
  else
    dw_chart_frame_x_extent (self, &self->bx0, &self->bx1);
  if (self->zoomed_y)
    {
      self->by0 = self->zy0;
      self->by1 = self->zy1;
    }
  else if (isfinite (self->range_y0) && isfinite (self->range_y1))
    {
      self->by0 = self->range_y0;
      self->by1 = self->range_y1;
    }
  else
    {
      dw_chart_frame_y_extent (self, self->bx0, self->bx1, &self->by0, &self->by1);
      if (self->y_scale == DW_CHART_SCALE_SYMLOG)
        dw_chart_frame_symlog_pad (self);
    }
  if (self->y_scale == DW_CHART_SCALE_SYMLOG && (self->zoomed_y || isfinite (self->range_y0)))
    self->linthresh = dw_chart_frame_symlog_linthresh (self->by0, self->by1);
  self->bounds_valid = TRUE;
  self->frame_valid = FALSE;
}

/* Width of a tick label (drawn at 0.8 of the widget's font). */
int
_dw_chart_text_width (DwChart *self, const char *text)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  const PangoFontDescription *font
    = pango_context_get_font_description (gtk_widget_get_pango_context (GTK_WIDGET (self)));
  PangoFontDescription *desc
    = font ? pango_font_description_copy (font) : pango_font_description_from_string ("Sans 10");
  int size = pango_font_description_get_size (desc), w, h;

  pango_font_description_set_size (desc, (int)((size > 0 ? size : 10 * PANGO_SCALE) * 0.8));
  pango_layout_set_font_description (layout, desc);
  pango_font_description_free (desc);
  pango_layout_get_pixel_size (layout, &w, &h);
  return w;
}

/* The part of a series label that names its line within the card: "run · metric" → "metric".
 * NULL for a label that only names a run (the sidebar's colours say which run a line is). */
const char *
_dw_chart_legend_text (const DwChartSeries *s)
{
  const char *dot = strstr (s->label, " · ");

  return dot != NULL ? dot + strlen (" · ") : NULL;
}

/* Whether the card draws several metrics (not only several runs of one): it then has a legend. */
gboolean
_dw_chart_has_legend (DwChart *self)
{
  for (guint i = 0; i < self->series->len; i++)
    if (_dw_chart_legend_text (g_ptr_array_index (self->series, i)) != NULL)
      return TRUE;
  return FALSE;
}

void
_dw_chart_make_frame (DwChart *self, DwChartFrame *f, int width, int height)
{
  DwAxisKind y_kind;

  _dw_chart_ensure_bounds (self);
  /* every layer of a drawing asks: the tick labels are measured once per size and view */
  if (self->frame_valid && self->frame.width == width && self->frame.height == height)
    {
      *f = self->frame;
      return;
    }
  f->width = width;
  f->height = height;
  f->x0 = self->bx0;
  f->x1 = self->bx1;
  f->y0 = self->by0;
  f->y1 = self->by1;
  f->scale = self->y_scale;
  f->log_y = self->y_scale == DW_CHART_SCALE_LOG;
  f->linthresh = self->linthresh;
  f->ty0 = dw_chart_frame_t (f, f->y0);
  f->ty1 = dw_chart_frame_t (f, f->y1);
  if (!isfinite (f->ty0) || !(f->ty1 > f->ty0))
    {
      f->ty0 = f->log_y ? -1 : f->y0;
      f->ty1 = f->ty0 + 1;
    }
  f->py = MARGIN_TOP;
  f->legend_y = -1;
  /* several metrics in one card: a legend band names them */
  if (_dw_chart_has_legend (self))
    {
      f->legend_y = f->py - 4;
      f->py += LEGEND_BAND;
    }
  /* Markers get a band of their own above the plot for their flags and labels, so they never
   * hide data; every chart with markers has it, so plots of a row of cards stay aligned. */
  if (self->markers->len > 0)
    f->py += MARKER_BAND;
  f->ph = MAX (height - f->py - MARGIN_BOTTOM - AXIS_TITLE, 10);
  /* y ticks from the plot's height (a label every ~40 px), then a left margin as wide as the
   * widest label (and the unit title): labels are never cut */
  y_kind = f->scale == DW_CHART_SCALE_LOG ? DW_AXIS_LOG : DW_AXIS_LINEAR;
  if (f->scale == DW_CHART_SCALE_SYMLOG)
    f->n_yticks = dw_chart_axes_symlog_ticks (f->y0, f->y1, f->linthresh,
                                              MAX (2, (int)(f->ph / 18)), f->yticks, N_TICKS_MAX);
  else
    f->n_yticks = dw_chart_axes_ticks (
      y_kind, f->y0, f->y1, MAX (2, (int)(f->ph / (f->log_y ? 16 : 28))), f->yticks, N_TICKS_MAX);
  f->px = 8 + (self->y_unit ? AXIS_TITLE : 0);
  {
    int widest = 0;

    for (guint i = 0; i < f->n_yticks; i++)
      if (f->yticks[i].labelled)
        widest = MAX (widest, _dw_chart_text_width (self, f->yticks[i].label));
    f->px += widest + 6;
  }
  f->pw = MAX (width - f->px - MARGIN_RIGHT, 10);
  self->frame = *f;
  self->frame_valid = TRUE;
}
