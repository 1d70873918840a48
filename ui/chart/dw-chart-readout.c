/* dw-chart-readout.c — the hover read-out of a chart: a popover beside the cursor (see header)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include <inttypes.h>
#include <math.h>

#include <glib/gi18n.h>

#include "dw-chart-axes.h"
#include "dw-chart-readout.h"

struct _DwChartReadout
{
  GtkPopover parent_instance;

  GtkGrid *grid;
  GString *text;
};

G_DEFINE_FINAL_TYPE (DwChartReadout, dw_chart_readout, GTK_TYPE_POPOVER)

static int
row_compare (gconstpointer a, gconstpointer b)
{
  const DwReadoutRow *ra = a, *rb = b;

  /* largest first; NaN last */
  if (isnan (ra->value) || isnan (rb->value))
    return isnan (ra->value) - isnan (rb->value);
  return ra->value < rb->value ? 1 : ra->value > rb->value ? -1 : 0;
}

static GtkWidget *
cell (const char *text, gboolean numeric, gboolean dim)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), numeric ? 1 : 0);
  if (numeric)
    gtk_widget_add_css_class (label, "numeric");
  if (dim)
    gtk_widget_add_css_class (label, "dim-label");
  return label;
}

static void
swatch_draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  GdkRGBA *color = data;

  gdk_cairo_set_source_rgba (cr, color);
  cairo_arc (cr, width / 2.0, height / 2.0, MIN (width, height) / 2.0, 0, 2 * G_PI);
  cairo_fill (cr);
}

static void
format_time (const DwReadoutRow *r, char *buf, gsize size)
{
  if (!isfinite (r->time))
    g_strlcpy (buf, "", size);
  else if (r->wall)
    {
      g_autoptr (GDateTime) dt = g_date_time_new_from_unix_local ((gint64)floor (r->time));
      g_autofree char *t = dt ? g_date_time_format (dt, "%H:%M:%S") : NULL;
      g_strlcpy (buf, t ? t : "", size);
    }
  else
    {
      gint64 s = (gint64)floor (r->time);
      g_snprintf (buf, size, "%" PRId64 ":%02" PRId64 ":%02" PRId64, s / 3600, s / 60 % 60, s % 60);
    }
}

void
dw_chart_readout_set_rows (DwChartReadout *self, DwReadoutRow *rows, guint n_rows,
                           const char *const *markers, double resolution)
{
  GtkWidget *child;
  gboolean smoothed = FALSE;
  int col = 0;

  g_return_if_fail (DW_IS_CHART_READOUT (self));
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->grid))) != NULL)
    gtk_grid_remove (self->grid, child);
  g_string_truncate (self->text, 0);
  qsort (rows, n_rows, sizeof *rows, row_compare);
  for (guint i = 0; i < n_rows; i++)
    smoothed |= isfinite (rows[i].raw);

  /* header */
  gtk_grid_attach (self->grid, cell (_ ("Run"), FALSE, TRUE), 1, 0, 1, 1);
  gtk_grid_attach (self->grid, cell (smoothed ? _ ("Smoothed") : _ ("Value"), TRUE, TRUE), 2, 0, 1,
                   1);
  col = 3;
  if (smoothed)
    gtk_grid_attach (self->grid, cell (_ ("Raw"), TRUE, TRUE), col++, 0, 1, 1);
  gtk_grid_attach (self->grid, cell (_ ("Step"), TRUE, TRUE), col++, 0, 1, 1);
  gtk_grid_attach (self->grid, cell (_ ("Time"), TRUE, TRUE), col++, 0, 1, 1);

  for (guint i = 0; i < n_rows; i++)
    {
      const DwReadoutRow *r = &rows[i];
      GtkWidget *swatch = gtk_drawing_area_new ();
      GdkRGBA *color = g_new (GdkRGBA, 1);
      char value[48], raw[48], step[32], time[32];

      *color = r->color;
      gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (swatch), 10);
      gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (swatch), 10);
      gtk_widget_set_valign (swatch, GTK_ALIGN_CENTER);
      gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (swatch), swatch_draw, color, g_free);
      dw_chart_axes_format (r->value, resolution, value, sizeof value);
      dw_chart_axes_format (r->raw, resolution, raw, sizeof raw);
      g_snprintf (step, sizeof step, "%" PRId64, r->step);
      format_time (r, time, sizeof time);
      gtk_grid_attach (self->grid, swatch, 0, (int)i + 1, 1, 1);
      gtk_grid_attach (self->grid, cell (r->label, FALSE, FALSE), 1, (int)i + 1, 1, 1);
      gtk_grid_attach (self->grid, cell (value, TRUE, FALSE), 2, (int)i + 1, 1, 1);
      col = 3;
      if (smoothed)
        gtk_grid_attach (self->grid, cell (isfinite (r->raw) ? raw : "", TRUE, TRUE), col++,
                         (int)i + 1, 1, 1);
      gtk_grid_attach (self->grid, cell (step, TRUE, TRUE), col++, (int)i + 1, 1, 1);
      gtk_grid_attach (self->grid, cell (time, TRUE, TRUE), col++, (int)i + 1, 1, 1);
      g_string_append_printf (self->text, "%s%s\t%s", self->text->len ? "\n" : "", r->label, value);
      if (smoothed && isfinite (r->raw))
        g_string_append_printf (self->text, "\t%s %s", _ ("raw"), raw);
      g_string_append_printf (self->text, "\t%s %s", _ ("step"), step);
      if (*time)
        g_string_append_printf (self->text, "\t%s", time);
    }
  for (guint i = 0; markers != NULL && markers[i] != NULL; i++)
    {
      GtkWidget *line = cell (markers[i], FALSE, FALSE);

      gtk_label_set_wrap (GTK_LABEL (line), TRUE);
      gtk_label_set_max_width_chars (GTK_LABEL (line), 48);
      gtk_grid_attach (self->grid, line, 0, (int)(n_rows + 1 + i), col, 1);
      g_string_append_printf (self->text, "%s%s", self->text->len ? "\n" : "", markers[i]);
    }
}

void
dw_chart_readout_point_at (DwChartReadout *self, double x, double y)
{
  GtkWidget *parent = gtk_widget_get_parent (GTK_WIDGET (self));
  GtkRoot *root = parent ? gtk_widget_get_root (parent) : NULL;
  double wx, wy;
  int min_h, nat_h, min_w, nat_w;
  int root_w, root_h;

  g_return_if_fail (DW_IS_CHART_READOUT (self));
  if (root == NULL || !gtk_widget_translate_coordinates (parent, GTK_WIDGET (root), x, y, &wx, &wy))
    return;
  root_w = gtk_widget_get_width (GTK_WIDGET (root));
  root_h = gtk_widget_get_height (GTK_WIDGET (root));
  gtk_widget_measure (GTK_WIDGET (self), GTK_ORIENTATION_HORIZONTAL, -1, &min_w, &nat_w, NULL,
                      NULL);
  gtk_widget_measure (GTK_WIDGET (self), GTK_ORIENTATION_VERTICAL, nat_w, &min_h, &nat_h, NULL,
                      NULL);
  /* the side of the cursor with more room; 16 px off it, so the pointer never lands on it */
  gtk_popover_set_position (GTK_POPOVER (self), wx > root_w / 2.0 ? GTK_POS_LEFT : GTK_POS_RIGHT);
  /* centred on the cursor's height, moved so that it stays inside the window */
  wy = CLAMP (wy, nat_h / 2.0 + 4, MAX (nat_h / 2.0 + 4, root_h - nat_h / 2.0 - 4));
  gtk_widget_translate_coordinates (GTK_WIDGET (root), parent, wx, wy, &x, &y);
  gtk_popover_set_pointing_to (GTK_POPOVER (self), &(GdkRectangle){ (int)x - 16, (int)y, 32, 1 });
}

char *
dw_chart_readout_dup_text (DwChartReadout *self)
{
  g_return_val_if_fail (DW_IS_CHART_READOUT (self), NULL);
  return g_strdup (self->text->str);
}

static void
dw_chart_readout_finalize (GObject *object)
{
  DwChartReadout *self = DW_CHART_READOUT (object);

  g_string_free (self->text, TRUE);
  G_OBJECT_CLASS (dw_chart_readout_parent_class)->finalize (object);
}

/* GtkPopover gives its surface an input region (its frame) each time the surface is laid out,
 * also when it only moves. A read-out that the pointer can land on takes the chart's press when a
 * fast move crosses its stale position before the chart has moved it away, so after GtkPopover's
 * own layout handler the region is made empty: the pointer goes through it to the chart, on X11
 * (XShape) as on Wayland. */
static void
dw_chart_readout_surface_layout_cb (GdkSurface *surface, int width, int height, gpointer user_data)
{
  cairo_region_t *nothing = cairo_region_create ();

  gdk_surface_set_input_region (surface, nothing);
  cairo_region_destroy (nothing);
}

static void
dw_chart_readout_realize (GtkWidget *widget)
{
  GdkSurface *surface;

  GTK_WIDGET_CLASS (dw_chart_readout_parent_class)->realize (widget);
  surface = gtk_native_get_surface (GTK_NATIVE (widget));
  g_signal_connect_after (surface, "layout", G_CALLBACK (dw_chart_readout_surface_layout_cb), NULL);
  dw_chart_readout_surface_layout_cb (surface, 0, 0, NULL);
}

static void
dw_chart_readout_unrealize (GtkWidget *widget)
{
  g_signal_handlers_disconnect_by_func (gtk_native_get_surface (GTK_NATIVE (widget)),
                                        dw_chart_readout_surface_layout_cb, NULL);
  GTK_WIDGET_CLASS (dw_chart_readout_parent_class)->unrealize (widget);
}

static void
dw_chart_readout_class_init (DwChartReadoutClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = dw_chart_readout_finalize;
  GTK_WIDGET_CLASS (klass)->realize = dw_chart_readout_realize;
  GTK_WIDGET_CLASS (klass)->unrealize = dw_chart_readout_unrealize;
}

static void
dw_chart_readout_init (DwChartReadout *self)
{
  self->text = g_string_new (NULL);
  self->grid = GTK_GRID (gtk_grid_new ());
  gtk_grid_set_column_spacing (self->grid, 10);
  gtk_grid_set_row_spacing (self->grid, 2);
  gtk_popover_set_child (GTK_POPOVER (self), GTK_WIDGET (self->grid));
  /* a read-out, not a menu: it takes neither the keyboard nor clicks away from the chart */
  gtk_popover_set_autohide (GTK_POPOVER (self), FALSE);
  gtk_popover_set_has_arrow (GTK_POPOVER (self), FALSE);
  gtk_widget_set_can_focus (GTK_WIDGET (self), FALSE);
  gtk_widget_set_can_target (GTK_WIDGET (self), FALSE);
  gtk_widget_add_css_class (GTK_WIDGET (self), "chart-readout");
}

GtkWidget *
dw_chart_readout_new (void)
{
  return g_object_new (DW_TYPE_CHART_READOUT, NULL);
}
