/* dw-chart-markers-layer.c — restart lines, health flags and their labels, NaN/inf marks
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include <glib/gi18n.h>
#include <inttypes.h>

#include "dw-chart-private.h"

struct _DwChartMarkersLayer
{
  DwChartLayer parent_instance;
};

G_DEFINE_FINAL_TYPE (DwChartMarkersLayer, dw_chart_markers_layer, DW_TYPE_CHART_LAYER)

/* NaN / ±inf: TensorBoard-style triangles, in the error colour, at the column they occur in. */
static void
dw_chart_markers_layer_draw_nonfinite (DwChart *self, cairo_t *cr, const DwChartFrame *f,
                                       const DwChartStyle *st, DwChartSeries *series)
{
  const DwPyramid *pyramid = dw_plot_series_get_raw (series->data);
  const double *x = dw_plot_series_get_x (series->data, self->x_mode);
  guint width = CLAMP ((guint)ceil (f->pw), 1, MAX_COLUMNS);
  DwColumn *cols = self->columns;
  guint last_c = G_MAXUINT;

  if (dw_pyramid_get_length (pyramid) == 0)
    return;
  dw_pyramid_columns (pyramid, x, f->x0, f->x1, width, cols);
  cairo_save (cr);
  dw_chart_style_set_color (cr, &st->error, 1);
  for (guint c = 0; c < width; c++)
    {
      double cx = f->px + c + 0.5;
      if (cols[c].flags == 0)
        continue;
      /* Neighbouring columns share one marker. */
      if (last_c != G_MAXUINT && c - last_c < 6)
        continue;
      last_c = c;
      self->n_nonfinite++;
      if (cols[c].flags & (DW_RANGE_HAS_NAN | DW_RANGE_HAS_POSINF))
        {
          cairo_move_to (cr, cx - 5, f->py + 1);
          cairo_line_to (cr, cx + 5, f->py + 1);
          cairo_line_to (cr, cx, f->py + 9);
          cairo_close_path (cr);
        }
      if (cols[c].flags & DW_RANGE_HAS_NEGINF)
        {
          cairo_move_to (cr, cx - 5, f->py + f->ph - 1);
          cairo_line_to (cr, cx + 5, f->py + f->ph - 1);
          cairo_line_to (cr, cx, f->py + f->ph - 9);
          cairo_close_path (cr);
        }
      cairo_fill (cr);
    }
  cairo_restore (cr);
}

static const GdkRGBA *
dw_chart_markers_layer_color (const DwChartMarker *marker, const DwChartStyle *st)
{
  return marker->severity == DW_MARKER_CRITICAL  ? &st->error
         : marker->severity == DW_MARKER_WARNING ? &st->warning
                                                 : &st->fg;
}

/* the pixel-centred x of a health marker's line (NAN or outside the plot when not shown) */
static double
dw_chart_markers_layer_x (DwChart *self, const DwChartFrame *f, const DwChartMarker *marker)
{
  return round (dw_chart_frame_x (f, _dw_chart_x_of_step (self, marker->step))) + 0.5;
}

static void
dw_chart_markers_layer_draw_lines (DwChart *self, cairo_t *cr, const DwChartFrame *f,
                                   const DwChartStyle *st)
{
  double dash[] = { 2, 3 };

  cairo_save (cr);
  cairo_rectangle (cr, f->px, f->py - 2, f->pw, f->ph + 4);
  cairo_clip (cr);
  cairo_set_line_width (cr, 1);

  /* Restarts: thin dotted lines. */
  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *series = g_ptr_array_index (self->series, i);
      gsize n_restarts;
      const gint64 *r = dw_plot_series_get_restarts (series->data, &n_restarts);

      for (gsize j = 0; j < n_restarts; j++)
        {
          double x = round (dw_chart_frame_x (
                       f, dw_plot_series_x_of_step (series->data, self->x_mode, r[j])))
                     + 0.5;
          if (x < f->px || x > f->px + f->pw)
            continue;
          self->n_restarts++;
          dw_chart_style_set_color (cr, &st->fg, 0.55);
          cairo_set_dash (cr, dash, 2, 0);
          cairo_move_to (cr, x, f->py);
          cairo_line_to (cr, x, f->py + f->ph);
          cairo_stroke (cr);
          cairo_set_dash (cr, NULL, 0, 0);
          if (x > f->px + f->pw - 60)
            dw_chart_style_text (cr, st, _ ("restart"), x - 3, f->py + f->ph - 2, 1, 1, 0.7, FALSE);
          else
            dw_chart_style_text (cr, st, _ ("restart"), x + 3, f->py + f->ph - 2, 0, 1, 0.7, FALSE);
        }
    }

  /* Health events: a solid line at the first step a rule fired, with a flag. */
  for (guint i = 0; i < self->markers->len; i++)
    {
      DwChartMarker *marker = g_ptr_array_index (self->markers, i);
      const GdkRGBA *c = dw_chart_markers_layer_color (marker, st);
      double x = dw_chart_markers_layer_x (self, f, marker);

      if (!isfinite (x) || x < f->px || x > f->px + f->pw)
        continue;
      dw_chart_style_set_color (cr, c, 0.9);
      cairo_set_line_width (cr, st->high_contrast ? 2 : 1.25);
      cairo_move_to (cr, x, f->py);
      cairo_line_to (cr, x, f->py + f->ph);
      cairo_stroke (cr);
      cairo_move_to (cr, x, f->py);
      cairo_line_to (cr, x + 9, f->py + 4);
      cairo_line_to (cr, x, f->py + 8);
      cairo_close_path (cr);
      cairo_fill (cr);
    }
  cairo_restore (cr);

  /* Labels in the band above the plot: never clipped or ellipsized. The full title when the
   * band has room for it (from the flag rightwards, shifted left where the band ends; bold, else
   * regular weight), else the short "step N"; a label that would overlap an earlier one is left
   * out. The hover read-out always has the full text. */
  g_string_truncate (self->band_labels, 0);
  {
    double taken_l[8], taken_r[8];
    guint n_taken = 0;

    for (guint i = 0; i < self->markers->len; i++)
      {
        DwChartMarker *marker = g_ptr_array_index (self->markers, i);
        const GdkRGBA *c = dw_chart_markers_layer_color (marker, st);
        double x = dw_chart_markers_layer_x (self, f, marker);
        g_autofree char *short_text = NULL;
        const char *texts[3];

        if (!marker->show_label || marker->title == NULL || !isfinite (x) || x < f->px
            || x > f->px + f->pw || n_taken == G_N_ELEMENTS (taken_l))
          continue;
        /* TRANSLATORS: short label of a health marker on a chart when its title does not fit */
        short_text = g_strdup_printf (_ ("step %" PRId64), marker->step);
        /* The title in bold, in regular weight (narrower), then the short text in bold. */
        texts[0] = texts[1] = marker->title;
        texts[2] = short_text;
        for (guint k = 0; k < G_N_ELEMENTS (texts); k++)
          {
            g_autoptr (PangoLayout) layout = dw_chart_style_layout (cr, st, texts[k], 0.75, k != 1);
            double right = f->px + f->pw, lx;
            gboolean free_room = TRUE;
            int w, h;

            pango_layout_get_pixel_size (layout, &w, &h);
            if (w > right - 2)
              continue;
            lx = MAX (2, MIN (round (x - 0.5), right - w));
            for (guint t = 0; t < n_taken; t++)
              if (lx < taken_r[t] + 6 && lx + w + 6 > taken_l[t])
                free_room = FALSE;
            if (!free_room)
              continue;
            taken_l[n_taken] = lx;
            taken_r[n_taken++] = lx + w;
            dw_chart_style_set_color (cr, c, 1);
            cairo_move_to (cr, lx, round (f->py - MARKER_BAND + 1));
            pango_cairo_show_layout (cr, layout);
            g_string_append_printf (self->band_labels, "%s%s", self->band_labels->len ? "\n" : "",
                                    texts[k]);
            break;
          }
      }
  }
}

static void
dw_chart_markers_layer_draw (DwChartLayer *layer, DwChart *self, cairo_t *cr, const DwChartFrame *f,
                             const DwChartStyle *st)
{
  self->n_nonfinite = self->n_restarts = 0;
  for (guint i = 0; i < self->series->len; i++)
    dw_chart_markers_layer_draw_nonfinite (self, cr, f, st, g_ptr_array_index (self->series, i));
  dw_chart_markers_layer_draw_lines (self, cr, f, st);
}

static void
dw_chart_markers_layer_class_init (DwChartMarkersLayerClass *klass)
{
  DW_CHART_LAYER_CLASS (klass)->draw = dw_chart_markers_layer_draw;
}

static void
dw_chart_markers_layer_init (DwChartMarkersLayer *self)
{
}
