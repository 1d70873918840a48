/* dw-chart-style.c — a chart drawing's colours (theme or export) and text
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include <adwaita.h>

#include "dw-chart-private.h"

void
dw_chart_style_parse (GdkRGBA *c, const char *spec)
{
  gdk_rgba_parse (c, spec);
}

void
dw_chart_style_widget (DwChart *self, DwChartStyle *st)
{
  AdwStyleManager *sm = adw_style_manager_get_default ();
  gboolean dark = adw_style_manager_get_dark (sm);
  gboolean hc = adw_style_manager_get_high_contrast (sm);
  GtkStyleContext *ctx = gtk_widget_get_style_context (GTK_WIDGET (self));

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (ctx, &st->fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  dw_chart_style_parse (&st->bg, dark ? "#303030" : "#ffffff");
  st->grid = st->fg;
  st->grid.alpha = hc ? 0.35 : 0.10;
  /* libadwaita's success/warning/error colours for text on either background, taken from the
   * running theme's named colours when it defines them (so the chart follows the stylesheet in
   * dark and high-contrast modes); the literals are libadwaita 1.2's values, for other themes. */
  dw_chart_style_parse (&st->good, dark ? "#8ff0a4" : "#1b8553");
  dw_chart_style_parse (&st->warning, dark ? "#f8e45c" : "#9c6e03");
  dw_chart_style_parse (&st->error, dark ? "#ff7b63" : "#c01c28");
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_lookup_color (ctx, "success_color", &st->good);
  gtk_style_context_lookup_color (ctx, "warning_color", &st->warning);
  gtk_style_context_lookup_color (ctx, "error_color", &st->error);
  G_GNUC_END_IGNORE_DEPRECATIONS
  st->line_width = hc ? 2.5 : 1.5;
  st->high_contrast = hc;
  st->font = pango_context_get_font_description (gtk_widget_get_pango_context (GTK_WIDGET (self)));
}

void
dw_chart_style_export (DwChart *self, DwChartStyle *st)
{
  dw_chart_style_parse (&st->fg, "#241f31");
  dw_chart_style_parse (&st->bg, "#ffffff");
  dw_chart_style_parse (&st->grid, "rgba(36,31,49,0.12)");
  dw_chart_style_parse (&st->good, "#1b8553");
  dw_chart_style_parse (&st->warning, "#9c6e03");
  dw_chart_style_parse (&st->error, "#c01c28");
  st->line_width = 1.5;
  st->high_contrast = FALSE;
  st->font = pango_context_get_font_description (gtk_widget_get_pango_context (GTK_WIDGET (self)));
}

void
dw_chart_style_set_color (cairo_t *cr, const GdkRGBA *c, double alpha)
{
  cairo_set_source_rgba (cr, c->red, c->green, c->blue, c->alpha * alpha);
}

PangoLayout *
dw_chart_style_layout (cairo_t *cr, const DwChartStyle *st, const char *text, double scale,
                       gboolean bold)
{
  PangoLayout *layout = pango_cairo_create_layout (cr);
  PangoFontDescription *desc = st->font ? pango_font_description_copy (st->font)
                                        : pango_font_description_from_string ("Sans 10");
  int size = pango_font_description_get_size (desc);

  if (size <= 0)
    size = 10 * PANGO_SCALE;
  pango_font_description_set_size (desc, (int)(size * scale));
  if (bold)
    pango_font_description_set_weight (desc, PANGO_WEIGHT_BOLD);
  pango_layout_set_font_description (layout, desc);
  pango_font_description_free (desc);
  pango_layout_set_text (layout, text, -1);
  return layout;
}

/* Draws @text with its anchor point at (x, y): ax/ay = 0 left/top, 0.5 centre, 1 right/bottom. */
void
dw_chart_style_text (cairo_t *cr, const DwChartStyle *st, const char *text, double x, double y,
                     double ax, double ay, double scale, gboolean bold)
{
  g_autoptr (PangoLayout) layout = dw_chart_style_layout (cr, st, text, scale, bold);
  int w, h;

  pango_layout_get_pixel_size (layout, &w, &h);
  cairo_move_to (cr, round (x - ax * w), round (y - ay * h));
  pango_cairo_show_layout (cr, layout);
}
