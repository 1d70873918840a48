/* dw-chart-export.c — a chart as PNG, SVG or PDF (its layers drawn on a file's surface, light,
 * with the title and a legend above) and its data as CSV (every stored point)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <glib/gi18n.h>

#include "dw-chart-private.h"
#include "dw-csv.h"

gboolean
dw_chart_export (DwChart *self, const char *path, DwExportFormat format, int width, int height,
                 GError **error)
{
  cairo_surface_t *surface;
  cairo_status_t status;
  cairo_t *cr;
  DwChartStyle st;
  DwChartFrame f;
  double lx;

  g_return_val_if_fail (DW_IS_CHART (self), FALSE);
  g_return_val_if_fail (width > 0 && height > EXPORT_TITLE, FALSE);

  if (format == DW_EXPORT_SVG)
    surface = cairo_svg_surface_create (path, width, height);
  else if (format == DW_EXPORT_PDF)
    surface = cairo_pdf_surface_create (path, width, height);
  else
    surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cr = cairo_create (surface);
  dw_chart_style_export (self, &st);

  /* Same drawing code as the widget, on a white page with the title and a legend on top. */
  dw_chart_style_set_color (cr, &st.bg, 1);
  cairo_paint (cr);
  dw_chart_style_set_color (cr, &st.fg, 1);
  dw_chart_style_text (cr, &st, self->title ? self->title : "", MARGIN_LEFT, 8, 0, 0, 1.0, TRUE);
  lx = width - MARGIN_RIGHT;
  for (guint i = self->series->len; i > 0; i--)
    {
      DwChartSeries *series = g_ptr_array_index (self->series, i - 1);
      g_autoptr (PangoLayout) layout = dw_chart_style_layout (cr, &st, series->label, 0.8, FALSE);
      int tw, th;

      pango_layout_get_pixel_size (layout, &tw, &th);
      lx -= tw;
      dw_chart_style_set_color (cr, &st.fg, 0.8);
      cairo_move_to (cr, lx, 10);
      pango_cairo_show_layout (cr, layout);
      dw_chart_style_set_color (cr, &series->color, 1);
      cairo_rectangle (cr, lx - 16, 10 + th / 2.0 - 2, 12, 4);
      cairo_fill (cr);
      lx -= 28;
    }
  cairo_translate (cr, 0, EXPORT_TITLE);
  _dw_chart_make_frame (self, &f, width, height - EXPORT_TITLE);
  _dw_chart_draw_layers (self, cr, &f, &st);
  cairo_destroy (cr);

  if (format == DW_EXPORT_PNG)
    status = cairo_surface_write_to_png (surface, path);
  else
    {
      cairo_surface_finish (surface);
      status = cairo_surface_status (surface);
    }
  cairo_surface_destroy (surface);
  if (status != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _ ("Could not write the chart to “%s”: %s"), path,
                   cairo_status_to_string (status));
      return FALSE;
    }
  return TRUE;
}

gboolean
dw_chart_export_csv (DwChart *self, const char *path, GError **error)
{
  g_autoptr (GString) out = g_string_new ("series,step,wall_time,value,smoothed\n");

  g_return_val_if_fail (DW_IS_CHART (self), FALSE);
  /* Every stored point at full resolution, not what is drawn. */
  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *series = g_ptr_array_index (self->series, i);
      gsize n = dw_plot_series_get_length (series->data);
      const gint64 *steps = dw_plot_series_get_steps (series->data);
      const double *wall = dw_plot_series_get_x (series->data, DW_X_WALL);
      const double *raw = dw_pyramid_get_values (dw_plot_series_get_raw (series->data));
      const double *sm = dw_pyramid_get_values (dw_plot_series_get_smoothed (series->data));
      gboolean has_wall = dw_plot_series_has_wall_time (series->data);

      for (gsize j = 0; j < n; j++)
        {
          dw_csv_field (out, series->label);
          g_string_append_printf (out, ",%" G_GINT64_FORMAT ",", steps[j]);
          if (has_wall)
            dw_csv_number (out, wall[j]);
          g_string_append_c (out, ',');
          dw_csv_number (out, raw[j]);
          g_string_append_c (out, ',');
          dw_csv_number (out, sm[j]);
          g_string_append_c (out, '\n');
        }
    }
  if (!g_file_set_contents (path, out->str, out->len, error))
    {
      g_prefix_error (error, _ ("Could not export the chart data: "));
      return FALSE;
    }
  return TRUE;
}
