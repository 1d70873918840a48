/* dw-chart.c — a cairo line chart for long scalar series
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <inttypes.h>

#include "dw-chart-axes.h"
#include "dw-chart-private.h"
#include "dw-chart-readout.h"
#include "dw-csv.h"
#include "dw-smooth.h"

#define MARGIN_LEFT   56 /* the export's title indent; the plot's is from its tick labels */
#define MARGIN_RIGHT  14
#define MARGIN_TOP    10
#define MARGIN_BOTTOM 24 /* tick labels; the axis title adds AXIS_TITLE */
#define AXIS_TITLE    14
#define LEGEND_BAND   16 /* above the plot, when a card draws several series */
#define N_TICKS_MAX   64
#define EXPORT_TITLE  30
#define MARKER_BAND   16 /* above the plot, for health marker labels */
#define MAX_COLUMNS   8192

typedef struct
{
  char *id;
  char *label;
  GdkRGBA color;
  DwPlotSeries *data;
} ChartSeries;

typedef struct
{
  double value;
  DwThresholdKind kind;
  char *label;
} Threshold;

typedef struct
{
  gint64 step;
  DwMarkerSeverity severity;
  char *title;         /* full text, in the hover read-out */
  gboolean show_label; /* also written in the band above the plot, when it fits */
} Marker;

/* Colours of one drawing: the widget's (theme-dependent) or an export's (always light). */
typedef struct
{
  GdkRGBA fg;
  GdkRGBA bg;
  GdkRGBA grid;
  GdkRGBA good;
  GdkRGBA warning;
  GdkRGBA error;
  double line_width;
  gboolean high_contrast;
  const PangoFontDescription *font;
} Style;

/* Data → pixel mapping of one drawing, with the y ticks the left margin was sized for. */
typedef struct
{
  double x0, x1, y0, y1; /* data range; y in data units */
  double ty0, ty1;       /* y range after the log transform */
  double px, py, pw, ph; /* plot rectangle */
  gboolean log_y;
  double legend_y; /* top of the legend band, < 0 when there is none */
  guint n_yticks;
  DwAxisTick yticks[N_TICKS_MAX];
} Frame;

struct _DwChart
{
  GtkWidget parent_instance;

  GtkWidget *data_layer;
  GtkWidget *overlay_layer;
  GtkWidget *readout; /* DwChartReadout: the hover read-out, a popover */

  char *title;
  gboolean log_y;
  DwXMode x_mode;
  double smoothing;
  gboolean ignore_outliers;
  int natural_width; /* preferred width, 420 unless dw_chart_set_natural_width () */
  char *y_unit;      /* "nats", "fraction", …: the y axis title; NULL for none */
  double cursor_x;

  GPtrArray *series; /* ChartSeries* */
  GPtrArray *thresholds;
  GPtrArray *markers;
  double band_lo, band_hi;

  gboolean zoomed;
  gboolean zoomed_y;
  double zx0, zx1, zy0, zy1;

  gboolean bounds_valid;
  double bx0, bx1, by0, by1;

  gboolean hovering;
  double hover_px, hover_py;

  gboolean dragging;
  double drag_x0, drag_y0, drag_x1, drag_y1;

  guint tick_id;
  DwColumn *columns;

  guint n_nonfinite, n_clipped, n_restarts;
  GString *band_labels; /* the marker labels of the last drawing, one a line */
};

G_DEFINE_FINAL_TYPE (DwChart, dw_chart, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_TITLE,
  PROP_LOG_Y,
  PROP_X_MODE,
  PROP_SMOOTHING,
  PROP_IGNORE_OUTLIERS,
  PROP_CURSOR_X,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum
{
  SIGNAL_ZOOM_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
chart_series_free (gpointer data)
{
  ChartSeries *s = data;

  g_free (s->id);
  g_free (s->label);
  dw_plot_series_free (s->data);
  g_free (s);
}

static void
threshold_free (gpointer data)
{
  Threshold *t = data;

  g_free (t->label);
  g_free (t);
}

static void
marker_free (gpointer data)
{
  Marker *m = data;

  g_free (m->title);
  g_free (m);
}

/* ---------------------------------------------------------------- transforms */

static inline double
ty (const Frame *f, double y)
{
  if (!f->log_y)
    return y;
  return y > 0 ? log10 (y) : -INFINITY;
}

static inline double
fx (const Frame *f, double x)
{
  return f->px + (x - f->x0) / (f->x1 - f->x0) * f->pw;
}

static inline double
fy (const Frame *f, double y)
{
  double t = ty (f, y);
  double p = f->py + f->ph - (t - f->ty0) / (f->ty1 - f->ty0) * f->ph;

  /* Keep far-off points at a distance cairo handles exactly. */
  if (!(p > -1e5))
    return -1e5;
  return MIN (p, 1e5);
}

static inline double
inv_fx (const Frame *f, double px)
{
  return f->x0 + (px - f->px) / f->pw * (f->x1 - f->x0);
}

static inline double
inv_fy (const Frame *f, double py)
{
  double t = f->ty0 + (f->py + f->ph - py) / f->ph * (f->ty1 - f->ty0);
  return f->log_y ? pow (10, t) : t;
}

/* ---------------------------------------------------------------- bounds */

static const DwPyramid *
main_pyramid (DwChart *self, ChartSeries *s)
{
  return self->smoothing > 0 ? dw_plot_series_get_smoothed (s->data)
                             : dw_plot_series_get_raw (s->data);
}

static void
x_extent (DwChart *self, double *x0, double *x1)
{
  *x0 = INFINITY;
  *x1 = -INFINITY;
  for (guint i = 0; i < self->series->len; i++)
    {
      ChartSeries *s = g_ptr_array_index (self->series, i);
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
y_extent (DwChart *self, double x0, double x1, double *y0, double *y1)
{
  g_autoptr (GArray) vals = g_array_new (FALSE, FALSE, sizeof (double));
  double lo = INFINITY, hi = -INFINITY;

  for (guint i = 0; i < self->series->len; i++)
    {
      ChartSeries *s = g_ptr_array_index (self->series, i);
      const DwPyramid *p = main_pyramid (self, s);
      gsize n = dw_pyramid_get_length (p);
      const double *x = dw_plot_series_get_x (s->data, self->x_mode);
      const double *v = dw_pyramid_get_values (p);
      gsize a = dw_lower_bound (x, n, x0);
      gsize b = dw_lower_bound (x, n, nextafter (x1, INFINITY));

      if ((self->ignore_outliers || self->log_y) && b - a > 20000)
        {
          /* Long series: quantiles of the per-column minima and maxima (2048 columns), so a
           * live 1 M-point chart does not re-select over every value at each append. */
          dw_pyramid_columns (p, x, x0, x1, 2048, self->columns);
          for (guint c = 0; c < 2048; c++)
            {
              DwColumn *col = &self->columns[c];
              if (col->hi == col->lo || !(col->max >= col->min))
                continue;
              if (!self->log_y || col->min > 0)
                g_array_append_val (vals, col->min);
              if (!self->log_y || col->max > 0)
                g_array_append_val (vals, col->max);
            }
        }
      else if (self->ignore_outliers || self->log_y)
        {
          for (gsize j = a; j < b; j++)
            if (isfinite (v[j]) && (!self->log_y || v[j] > 0))
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
  /* Threshold lines and the band stay in view: they are the reference the data is read against. */
  for (guint i = 0; i < self->thresholds->len; i++)
    {
      Threshold *t = g_ptr_array_index (self->thresholds, i);
      if (!self->log_y || t->value > 0)
        {
          lo = MIN (lo, t->value);
          hi = MAX (hi, t->value);
        }
    }
  if (!isfinite (lo) || !isfinite (hi))
    {
      lo = self->log_y ? 0.1 : 0;
      hi = self->log_y ? 10 : 1;
    }
  /* a fraction is read against 0 (and a fraction that is all 0 against [0, 1]) */
  if (!self->log_y && g_strcmp0 (self->y_unit, "fraction") == 0 && lo >= 0)
    {
      lo = 0;
      if (hi <= 0)
        hi = 1;
    }
  if (self->log_y)
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

static void
ensure_bounds (DwChart *self)
{
  if (self->bounds_valid)
    return;
  if (self->zoomed)
    {
      self->bx0 = self->zx0;
      self->bx1 = self->zx1;
    }
  else
    x_extent (self, &self->bx0, &self->bx1);
  if (self->zoomed_y)
    {
      self->by0 = self->zy0;
      self->by1 = self->zy1;
    }
  else
    y_extent (self, self->bx0, self->bx1, &self->by0, &self->by1);
  self->bounds_valid = TRUE;
}

static gboolean has_legend (DwChart *self);

/* Width of a tick label (drawn at 0.8 of the widget's font). */
static int
text_width (DwChart *self, const char *text)
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

static void
make_frame (DwChart *self, Frame *f, int width, int height)
{
  ensure_bounds (self);
  f->x0 = self->bx0;
  f->x1 = self->bx1;
  f->y0 = self->by0;
  f->y1 = self->by1;
  f->log_y = self->log_y;
  f->ty0 = ty (f, f->y0);
  f->ty1 = ty (f, f->y1);
  if (!isfinite (f->ty0) || !(f->ty1 > f->ty0))
    {
      f->ty0 = f->log_y ? -1 : f->y0;
      f->ty1 = f->ty0 + 1;
    }
  f->py = MARGIN_TOP;
  f->legend_y = -1;
  /* several metrics in one card: a legend band names them */
  if (has_legend (self))
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
  f->n_yticks
    = dw_chart_axes_ticks (f->log_y ? DW_AXIS_LOG : DW_AXIS_LINEAR, f->y0, f->y1,
                           MAX (2, (int)(f->ph / (f->log_y ? 16 : 28))), f->yticks, N_TICKS_MAX);
  f->px = 8 + (self->y_unit ? AXIS_TITLE : 0);
  {
    int widest = 0;

    for (guint i = 0; i < f->n_yticks; i++)
      if (f->yticks[i].labelled)
        widest = MAX (widest, text_width (self, f->yticks[i].label));
    f->px += widest + 6;
  }
  f->pw = MAX (width - f->px - MARGIN_RIGHT, 10);
}

/* ---------------------------------------------------------------- style */

static void
rgba (GdkRGBA *c, const char *spec)
{
  gdk_rgba_parse (c, spec);
}

static void
widget_style (DwChart *self, Style *st)
{
  AdwStyleManager *sm = adw_style_manager_get_default ();
  gboolean dark = adw_style_manager_get_dark (sm);
  gboolean hc = adw_style_manager_get_high_contrast (sm);
  GtkStyleContext *ctx = gtk_widget_get_style_context (GTK_WIDGET (self));

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (ctx, &st->fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  rgba (&st->bg, dark ? "#303030" : "#ffffff");
  st->grid = st->fg;
  st->grid.alpha = hc ? 0.35 : 0.10;
  /* libadwaita's success/warning/error colours for text on either background, taken from the
   * running theme's named colours when it defines them (so the chart follows the stylesheet in
   * dark and high-contrast modes); the literals are libadwaita 1.2's values, for other themes. */
  rgba (&st->good, dark ? "#8ff0a4" : "#1b8553");
  rgba (&st->warning, dark ? "#f8e45c" : "#9c6e03");
  rgba (&st->error, dark ? "#ff7b63" : "#c01c28");
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_lookup_color (ctx, "success_color", &st->good);
  gtk_style_context_lookup_color (ctx, "warning_color", &st->warning);
  gtk_style_context_lookup_color (ctx, "error_color", &st->error);
  G_GNUC_END_IGNORE_DEPRECATIONS
  st->line_width = hc ? 2.5 : 1.5;
  st->high_contrast = hc;
  st->font = pango_context_get_font_description (gtk_widget_get_pango_context (GTK_WIDGET (self)));
}

static void
export_style (DwChart *self, Style *st)
{
  rgba (&st->fg, "#241f31");
  rgba (&st->bg, "#ffffff");
  rgba (&st->grid, "rgba(36,31,49,0.12)");
  rgba (&st->good, "#1b8553");
  rgba (&st->warning, "#9c6e03");
  rgba (&st->error, "#c01c28");
  st->line_width = 1.5;
  st->high_contrast = FALSE;
  st->font = pango_context_get_font_description (gtk_widget_get_pango_context (GTK_WIDGET (self)));
}

static void
set_color (cairo_t *cr, const GdkRGBA *c, double alpha)
{
  cairo_set_source_rgba (cr, c->red, c->green, c->blue, c->alpha * alpha);
}

static PangoLayout *
make_layout (cairo_t *cr, const Style *st, const char *text, double scale, gboolean bold)
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
static void
draw_text (cairo_t *cr, const Style *st, const char *text, double x, double y, double ax, double ay,
           double scale, gboolean bold)
{
  g_autoptr (PangoLayout) layout = make_layout (cr, st, text, scale, bold);
  int w, h;

  pango_layout_get_pixel_size (layout, &w, &h);
  cairo_move_to (cr, round (x - ax * w), round (y - ay * h));
  pango_cairo_show_layout (cr, layout);
}

/* ---------------------------------------------------------------- ticks */

static char *
format_value (double v)
{
  double a = fabs (v);

  if (v == 0)
    return g_strdup ("0");
  if (a >= 1e5 || a < 1e-3)
    return g_strdup_printf ("%.2g", v);
  return g_strdup_printf ("%.4g", v);
}

static DwAxisKind
x_axis_kind (DwChart *self)
{
  return self->x_mode == DW_X_RELATIVE ? DW_AXIS_RELATIVE
         : self->x_mode == DW_X_WALL   ? DW_AXIS_WALL_TIME
                                       : DW_AXIS_STEP;
}

static const char *
x_axis_title (DwChart *self)
{
  return self->x_mode == DW_X_RELATIVE ? _ ("time since the start")
         : self->x_mode == DW_X_WALL   ? _ ("wall-clock time")
                                       : _ ("training step");
}

static void
draw_axes (DwChart *self, cairo_t *cr, const Frame *f, const Style *st, int width)
{
  DwAxisTick ticks[N_TICKS_MAX];
  guint n;
  double last_right = -INFINITY;
  int widest = 0, target_x;

  cairo_save (cr);
  cairo_set_line_width (cr, 1);

  for (guint i = 0; i < f->n_yticks; i++)
    {
      double y = round (fy (f, f->yticks[i].value)) + 0.5;

      if (y < f->py - 0.5 || y > f->py + f->ph + 0.5)
        continue;
      set_color (cr, &st->grid, f->yticks[i].labelled ? 1 : 0.5);
      cairo_move_to (cr, f->px, y);
      cairo_line_to (cr, f->px + f->pw, y);
      cairo_stroke (cr);
      if (!f->yticks[i].labelled)
        continue;
      set_color (cr, &st->fg, 0.7);
      draw_text (cr, st, f->yticks[i].label, f->px - 6, y, 1, 0.5, 0.8, FALSE);
    }

  /* x ticks: as many as fit labels as wide as the widest of a first pass, plus a gap */
  n = dw_chart_axes_ticks (x_axis_kind (self), f->x0, f->x1, MAX (2, (int)(f->pw / 60)), ticks,
                           N_TICKS_MAX);
  for (guint i = 0; i < n; i++)
    widest = MAX (widest, text_width (self, ticks[i].label));
  target_x = MAX (2, (int)(f->pw / (widest + 24)));
  n = dw_chart_axes_ticks (x_axis_kind (self), f->x0, f->x1, target_x, ticks, N_TICKS_MAX);
  for (guint i = 0; i < n; i++)
    {
      double x = round (fx (f, ticks[i].value)) + 0.5;
      int w = text_width (self, ticks[i].label);
      double left = CLAMP (x - w / 2.0, 0, width - w - 1);

      if (x < f->px - 0.5 || x > f->px + f->pw + 0.5)
        continue;
      set_color (cr, &st->grid, 1);
      cairo_move_to (cr, x, f->py);
      cairo_line_to (cr, x, f->py + f->ph);
      cairo_stroke (cr);
      /* kept inside the widget, and never over the previous label */
      if (left < last_right + 4)
        continue;
      set_color (cr, &st->fg, 0.7);
      draw_text (cr, st, ticks[i].label, left, f->py + f->ph + 4, 0, 0, 0.8, FALSE);
      last_right = left + w;
    }

  /* axis titles: the x quantity under its labels, the y unit along the left edge */
  set_color (cr, &st->fg, 0.55);
  draw_text (cr, st, x_axis_title (self), f->px + f->pw, f->py + f->ph + 4 + AXIS_TITLE, 1, 0, 0.75,
             FALSE);
  if (self->y_unit != NULL)
    {
      cairo_save (cr);
      cairo_translate (cr, 2, f->py + f->ph / 2);
      cairo_rotate (cr, -G_PI / 2);
      draw_text (cr, st, self->y_unit, 0, 0, 0.5, 0, 0.75, FALSE);
      cairo_restore (cr);
    }

  /* Plot frame: baseline and left axis. */
  set_color (cr, &st->fg, st->high_contrast ? 0.8 : 0.3);
  cairo_move_to (cr, f->px + 0.5, f->py);
  cairo_line_to (cr, f->px + 0.5, f->py + f->ph + 0.5);
  cairo_line_to (cr, f->px + f->pw, f->py + f->ph + 0.5);
  cairo_stroke (cr);
  cairo_restore (cr);
}

/* The part of a series label that names its line within the card: "run · metric" → "metric".
 * NULL for a label that only names a run (the sidebar's colours say which run a line is). */
static const char *
legend_text (const ChartSeries *s)
{
  const char *dot = strstr (s->label, " · ");

  return dot != NULL ? dot + strlen (" · ") : NULL;
}

/* Whether the card draws several metrics (not only several runs of one): it then has a legend. */
static gboolean
has_legend (DwChart *self)
{
  for (guint i = 0; i < self->series->len; i++)
    if (legend_text (g_ptr_array_index (self->series, i)) != NULL)
      return TRUE;
  return FALSE;
}

/* The names of a card's lines, over the plot: a swatch and a label for each metric (in the
 * colour of its first run), sharing the width; a label too long for its share is ellipsized. */
static void
draw_legend (DwChart *self, cairo_t *cr, const Frame *f, const Style *st, int width)
{
  g_autoptr (GPtrArray) shown = g_ptr_array_new ();
  double x = f->px, share;

  if (f->legend_y < 0)
    return;
  for (guint i = 0; i < self->series->len; i++)
    {
      ChartSeries *s = g_ptr_array_index (self->series, i);
      const char *text = legend_text (s);
      gboolean seen = FALSE;

      for (guint j = 0; text != NULL && j < shown->len; j++)
        seen |= g_str_equal (legend_text (g_ptr_array_index (shown, j)), text);
      if (text != NULL && !seen)
        g_ptr_array_add (shown, s);
    }
  share = (width - MARGIN_RIGHT - f->px) / MAX (shown->len, 1u);
  for (guint i = 0; i < shown->len; i++)
    {
      ChartSeries *s = g_ptr_array_index (shown, i);
      g_autoptr (PangoLayout) layout = make_layout (cr, st, legend_text (s), 0.8, FALSE);
      int w, h;

      pango_layout_set_width (layout, (int)MAX (share - 30, 10) * PANGO_SCALE);
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
      pango_layout_get_pixel_size (layout, &w, &h);
      set_color (cr, &s->color, 1);
      cairo_rectangle (cr, x, f->legend_y + 8, 12, 3);
      cairo_fill (cr);
      set_color (cr, &st->fg, 0.8);
      cairo_move_to (cr, round (x + 16), round (f->legend_y + 2));
      pango_cairo_show_layout (cr, layout);
      x += 16 + w + 14;
    }
}

static void
draw_references (DwChart *self, cairo_t *cr, const Frame *f, const Style *st)
{
  cairo_save (cr);
  cairo_rectangle (cr, f->px, f->py, f->pw, f->ph);
  cairo_clip (cr);

  if (isfinite (self->band_lo) && isfinite (self->band_hi))
    {
      double a = fy (f, self->band_hi), b = fy (f, self->band_lo);
      set_color (cr, &st->good, st->high_contrast ? 0.18 : 0.08);
      cairo_rectangle (cr, f->px, a, f->pw, b - a);
      cairo_fill (cr);
    }
  for (guint i = 0; i < self->thresholds->len; i++)
    {
      Threshold *t = g_ptr_array_index (self->thresholds, i);
      const GdkRGBA *c = t->kind == DW_THRESHOLD_WARNING ? &st->warning
                         : t->kind == DW_THRESHOLD_GOOD  ? &st->good
                                                         : &st->fg;
      double y = round (fy (f, t->value)) + 0.5;
      double dash[] = { 5, 4 };

      if (y < f->py || y > f->py + f->ph)
        continue;
      set_color (cr, c, t->kind == DW_THRESHOLD_IDEAL ? 0.45 : 0.85);
      cairo_set_line_width (cr, st->high_contrast ? 2 : 1);
      cairo_set_dash (cr, dash, t->kind == DW_THRESHOLD_IDEAL ? 0 : 2, 0);
      cairo_move_to (cr, f->px, y);
      cairo_line_to (cr, f->px + f->pw, y);
      cairo_stroke (cr);
      if (t->label != NULL)
        draw_text (cr, st, t->label, f->px + f->pw - 4, y - 2, 1, 1, 0.75, FALSE);
    }
  cairo_restore (cr);
}

/* ---------------------------------------------------------------- series */

/* One series as per-pixel-column envelopes: a bar from min to max in every column and a
 * connector from the last point of a column to the first of the next, which inks what a stroke
 * through every point would (up to antialiasing) at a cost independent of the number of points. */
static void
draw_envelope (DwChart *self, cairo_t *cr, const Frame *f, const Style *st, ChartSeries *s,
               const DwPyramid *p, double alpha, double lw, gboolean main)
{
  gsize n = dw_pyramid_get_length (p);
  const double *x = dw_plot_series_get_x (s->data, self->x_mode);
  const double *v = dw_pyramid_get_values (p);
  guint width = CLAMP ((guint)ceil (f->pw), 1, MAX_COLUMNS);
  DwColumn *cols = self->columns;
  gboolean have_prev = FALSE;
  double prev_x = 0, prev_y = 0;
  double top = f->py, bottom = f->py + f->ph;
  gboolean clip_run_top = FALSE, clip_run_bottom = FALSE;

  if (n == 0)
    return;
  dw_pyramid_columns (p, x, f->x0, f->x1, width, cols);

  /* Connect to the nearest point left of the view, so a zoomed line enters from the edge. */
  if (cols[0].lo > 0 && isfinite (v[cols[0].lo - 1]) && (!f->log_y || v[cols[0].lo - 1] > 0))
    {
      have_prev = TRUE;
      prev_x = fx (f, x[cols[0].lo - 1]);
      prev_y = fy (f, v[cols[0].lo - 1]);
    }

  cairo_save (cr);
  cairo_rectangle (cr, f->px - lw, f->py - lw, f->pw + 2 * lw, f->ph + 2 * lw);
  cairo_clip (cr);
  set_color (cr, &s->color, alpha);
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
            double seg[4] = { prev_x, prev_y, fx (f, x[col->lo]), fy (f, col->first) };
            g_array_append_vals (links, seg, 4);
          }
        if (has_range)
          {
            bx = col->hi - col->lo == 1 && prev_c + 1 != c ? round (fx (f, x[col->lo]) - bar_w / 2)
                                                           : f->px + c;
            a = floor (fy (f, hi_v) - bar_w / 2);
            b = ceil (fy (f, f->log_y && lo_v <= 0 ? f->y0 * 1e-3 : lo_v) + bar_w / 2);
            cairo_rectangle (cr, bx, a, bar_w, MAX (b - a, bar_w));
          }
        prev_c = c;
        prev_ok = last_ok;
        if (last_ok)
          {
            prev_x = fx (f, x[col->hi - 1]);
            prev_y = fy (f, col->last);
          }
      }
    {
      gsize after = cols[width - 1].hi;
      if (prev_ok && prev_c != G_MAXUINT && after < n && isfinite (v[after])
          && (!f->log_y || v[after] > 0))
        {
          double seg[4] = { prev_x, prev_y, fx (f, x[after]), fy (f, v[after]) };
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

  if (!main)
    return;

  /* Clipped data: a tick on the edge where data leaves the view, never silently hidden. */
  cairo_save (cr);
  set_color (cr, &s->color, 1);
  for (guint c = 0; c <= width; c++)
    {
      DwColumn *col = c < width ? &cols[c] : NULL;
      gboolean above
        = col && col->hi > col->lo && col->max >= col->min && fy (f, col->max) < top - 0.5;
      gboolean below = col && col->hi > col->lo && col->max >= col->min
                       && (fy (f, col->min) > bottom + 0.5 || (f->log_y && col->min <= 0));
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

/* NaN / ±inf: TensorBoard-style triangles, in the error colour, at the column they occur in. */
static void
draw_nonfinite (DwChart *self, cairo_t *cr, const Frame *f, const Style *st, ChartSeries *s)
{
  const DwPyramid *p = dw_plot_series_get_raw (s->data);
  const double *x = dw_plot_series_get_x (s->data, self->x_mode);
  guint width = CLAMP ((guint)ceil (f->pw), 1, MAX_COLUMNS);
  DwColumn *cols = self->columns;
  guint last_c = G_MAXUINT;

  if (dw_pyramid_get_length (p) == 0)
    return;
  dw_pyramid_columns (p, x, f->x0, f->x1, width, cols);
  cairo_save (cr);
  set_color (cr, &st->error, 1);
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

static double
x_of_step (DwChart *self, gint64 step)
{
  if (self->series->len == 0)
    return self->x_mode == DW_X_STEP ? (double)step : NAN;
  return dw_plot_series_x_of_step (((ChartSeries *)g_ptr_array_index (self->series, 0))->data,
                                   self->x_mode, step);
}

static const GdkRGBA *
marker_color (const Marker *m, const Style *st)
{
  return m->severity == DW_MARKER_CRITICAL  ? &st->error
         : m->severity == DW_MARKER_WARNING ? &st->warning
                                            : &st->fg;
}

/* the pixel-centred x of a health marker's line (NAN or outside the plot when not shown) */
static double
marker_x (DwChart *self, const Frame *f, const Marker *m)
{
  return round (fx (f, x_of_step (self, m->step))) + 0.5;
}

static void
draw_vmarkers (DwChart *self, cairo_t *cr, const Frame *f, const Style *st)
{
  double dash[] = { 2, 3 };

  cairo_save (cr);
  cairo_rectangle (cr, f->px, f->py - 2, f->pw, f->ph + 4);
  cairo_clip (cr);
  cairo_set_line_width (cr, 1);

  /* Restarts: thin dotted lines. */
  for (guint i = 0; i < self->series->len; i++)
    {
      ChartSeries *s = g_ptr_array_index (self->series, i);
      gsize nr;
      const gint64 *r = dw_plot_series_get_restarts (s->data, &nr);

      for (gsize j = 0; j < nr; j++)
        {
          double x = round (fx (f, dw_plot_series_x_of_step (s->data, self->x_mode, r[j]))) + 0.5;
          if (x < f->px || x > f->px + f->pw)
            continue;
          self->n_restarts++;
          set_color (cr, &st->fg, 0.55);
          cairo_set_dash (cr, dash, 2, 0);
          cairo_move_to (cr, x, f->py);
          cairo_line_to (cr, x, f->py + f->ph);
          cairo_stroke (cr);
          cairo_set_dash (cr, NULL, 0, 0);
          if (x > f->px + f->pw - 60)
            draw_text (cr, st, _ ("restart"), x - 3, f->py + f->ph - 2, 1, 1, 0.7, FALSE);
          else
            draw_text (cr, st, _ ("restart"), x + 3, f->py + f->ph - 2, 0, 1, 0.7, FALSE);
        }
    }

  /* Health events: a solid line at the first step a rule fired, with a flag. */
  for (guint i = 0; i < self->markers->len; i++)
    {
      Marker *m = g_ptr_array_index (self->markers, i);
      const GdkRGBA *c = marker_color (m, st);
      double x = marker_x (self, f, m);

      if (!isfinite (x) || x < f->px || x > f->px + f->pw)
        continue;
      set_color (cr, c, 0.9);
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
        Marker *m = g_ptr_array_index (self->markers, i);
        const GdkRGBA *c = marker_color (m, st);
        double x = marker_x (self, f, m);
        g_autofree char *short_text = NULL;
        const char *texts[3];

        if (!m->show_label || m->title == NULL || !isfinite (x) || x < f->px || x > f->px + f->pw
            || n_taken == G_N_ELEMENTS (taken_l))
          continue;
        /* TRANSLATORS: short label of a health marker on a chart when its title does not fit */
        short_text = g_strdup_printf (_ ("step %" PRId64), m->step);
        /* The title in bold, in regular weight (narrower), then the short text in bold. */
        texts[0] = texts[1] = m->title;
        texts[2] = short_text;
        for (guint k = 0; k < G_N_ELEMENTS (texts); k++)
          {
            g_autoptr (PangoLayout) layout = make_layout (cr, st, texts[k], 0.75, k != 1);
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
            set_color (cr, c, 1);
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
draw_data (DwChart *self, cairo_t *cr, int width, int height, const Style *st)
{
  Frame f;

  self->n_nonfinite = self->n_clipped = self->n_restarts = 0;
  make_frame (self, &f, width, height);
  draw_axes (self, cr, &f, st, width);
  draw_legend (self, cr, &f, st, width);
  draw_references (self, cr, &f, st);
  for (guint i = 0; i < self->series->len; i++)
    {
      ChartSeries *s = g_ptr_array_index (self->series, i);

      if (self->smoothing > 0)
        draw_envelope (self, cr, &f, st, s, dw_plot_series_get_raw (s->data), 0.25, 1.0, FALSE);
      draw_envelope (self, cr, &f, st, s, main_pyramid (self, s), 1.0, st->line_width, TRUE);
    }
  for (guint i = 0; i < self->series->len; i++)
    draw_nonfinite (self, cr, &f, st, g_ptr_array_index (self->series, i));
  draw_vmarkers (self, cr, &f, st);
}

void
_dw_chart_draw_data (DwChart *self, cairo_t *cr, int width, int height)
{
  Style st;

  widget_style (self, &st);
  draw_data (self, cr, width, height, &st);
}

void
dw_chart_draw_frame (DwChart *self, cairo_t *cr, int width, int height)
{
  g_return_if_fail (DW_IS_CHART (self));
  _dw_chart_draw_data (self, cr, width, height);
}

/* ---------------------------------------------------------------- hover overlay */

/* The health markers within a few pixels of the cursor, with their full titles. */
static void
hover_marker_rows (DwChart *self, double x, GPtrArray *rows)
{
  int width = gtk_widget_get_width (self->data_layer);
  int height = gtk_widget_get_height (self->data_layer);
  Frame f;

  if (self->markers->len == 0 || width <= 0 || height <= 0)
    return;
  make_frame (self, &f, width, height);
  for (guint i = 0; i < self->markers->len; i++)
    {
      Marker *m = g_ptr_array_index (self->markers, i);
      double mx = fx (&f, x_of_step (self, m->step));

      if (m->title == NULL || !isfinite (mx) || fabs (mx - fx (&f, x)) > 6)
        continue;
      if (m->severity == DW_MARKER_CRITICAL)
        /* TRANSLATORS: hover read-out of a health marker: training step, rule title */
        g_ptr_array_add (
          rows, g_strdup_printf (_ ("Critical from step %" PRId64 ": %s"), m->step, m->title));
      else if (m->severity == DW_MARKER_WARNING)
        /* TRANSLATORS: hover read-out of a health marker: training step, rule title */
        g_ptr_array_add (
          rows, g_strdup_printf (_ ("Warning from step %" PRId64 ": %s"), m->step, m->title));
      else
        /* TRANSLATORS: hover read-out of a health marker: training step, rule title */
        g_ptr_array_add (rows,
                         g_strdup_printf (_ ("From step %" PRId64 ": %s"), m->step, m->title));
    }
}

static GPtrArray *
hover_rows (DwChart *self, double x)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < self->series->len; i++)
    {
      ChartSeries *s = g_ptr_array_index (self->series, i);
      gssize j = dw_plot_series_nearest (s->data, self->x_mode, x);
      const double *raw, *sm;
      g_autofree char *rv = NULL, *sv = NULL;

      if (j < 0)
        continue;
      raw = dw_pyramid_get_values (dw_plot_series_get_raw (s->data));
      sm = dw_pyramid_get_values (main_pyramid (self, s));
      rv = format_value (raw[j]);
      sv = format_value (sm[j]);
      if (self->smoothing > 0)
        /* TRANSLATORS: hover read-out: run, smoothed value, raw value, training step */
        g_ptr_array_add (rows, g_strdup_printf (_ ("%s: %s (raw %s) at step %" PRId64), s->label,
                                                sv, rv, dw_plot_series_get_steps (s->data)[j]));
      else
        /* TRANSLATORS: hover read-out: run, value, training step */
        g_ptr_array_add (rows, g_strdup_printf (_ ("%s: %s at step %" PRId64), s->label, rv,
                                                dw_plot_series_get_steps (s->data)[j]));
    }
  hover_marker_rows (self, x, rows);
  return rows;
}

char *
dw_chart_dup_hover_text (DwChart *self)
{
  g_autoptr (GPtrArray) rows = NULL;

  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  if (!isfinite (self->cursor_x))
    return NULL;
  rows = hover_rows (self, self->cursor_x);
  g_ptr_array_add (rows, NULL);
  return g_strjoinv ("\n", (char **)rows->pdata);
}

void
_dw_chart_draw_overlay (DwChart *self, cairo_t *cr, int width, int height)
{
  Style st;
  Frame f;
  double cx;

  widget_style (self, &st);
  make_frame (self, &f, width, height);

  if (self->dragging)
    {
      double x0 = MIN (self->drag_x0, self->drag_x1), x1 = MAX (self->drag_x0, self->drag_x1);
      double y0 = f.py, y1 = f.py + f.ph;
      if (fabs (self->drag_y1 - self->drag_y0) >= 10)
        {
          y0 = MIN (self->drag_y0, self->drag_y1);
          y1 = MAX (self->drag_y0, self->drag_y1);
        }
      set_color (cr, &st.fg, 0.12);
      cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
      cairo_fill_preserve (cr);
      set_color (cr, &st.fg, 0.5);
      cairo_set_line_width (cr, 1);
      cairo_stroke (cr);
    }

  if (!isfinite (self->cursor_x))
    return;
  cx = fx (&f, self->cursor_x);
  if (cx < f.px || cx > f.px + f.pw)
    return;
  set_color (cr, &st.fg, 0.5);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, round (cx) + 0.5, f.py);
  cairo_line_to (cr, round (cx) + 0.5, f.py + f.ph);
  cairo_stroke (cr);

  /* Dots on every run's nearest real sample (hover snaps to data, never to an interpolation). */
  for (guint i = 0; i < self->series->len; i++)
    {
      ChartSeries *s = g_ptr_array_index (self->series, i);
      gssize j = dw_plot_series_nearest (s->data, self->x_mode, self->cursor_x);
      const double *v;
      double px, py;

      if (j < 0)
        continue;
      v = dw_pyramid_get_values (main_pyramid (self, s));
      if (!isfinite (v[j]))
        continue;
      px = fx (&f, dw_plot_series_get_x (s->data, self->x_mode)[j]);
      py = fy (&f, v[j]);
      if (py < f.py || py > f.py + f.ph)
        continue;
      set_color (cr, &st.bg, 1);
      cairo_arc (cr, px, py, 4.5, 0, 2 * G_PI);
      cairo_fill (cr);
      set_color (cr, &s->color, 1);
      cairo_arc (cr, px, py, 3, 0, 2 * G_PI);
      cairo_fill (cr);
    }
}

/* ---------------------------------------------------------------- input */

static void
queue_overlay (DwChart *self)
{
  gtk_widget_queue_draw (self->overlay_layer);
}

static void
queue_all (DwChart *self)
{
  self->bounds_valid = FALSE;
  gtk_widget_queue_draw (self->data_layer);
  gtk_widget_queue_draw (self->overlay_layer);
}

/* The read-out popover of the hovered chart: every series at the cursor, then its markers. */
static void
update_readout (DwChart *self, double x, double y)
{
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (DwReadoutRow));
  g_autoptr (GPtrArray) markers = g_ptr_array_new_with_free_func (g_free);

  if (!isfinite (self->cursor_x) || !gtk_widget_get_mapped (GTK_WIDGET (self)))
    return;
  for (guint i = 0; i < self->series->len; i++)
    {
      ChartSeries *s = g_ptr_array_index (self->series, i);
      gssize j = dw_plot_series_nearest (s->data, self->x_mode, self->cursor_x);
      gboolean wall = self->x_mode == DW_X_WALL;
      DwReadoutRow r;

      if (j < 0)
        continue;
      r.color = s->color;
      r.label = s->label;
      r.value = dw_pyramid_get_values (main_pyramid (self, s))[j];
      r.raw
        = self->smoothing > 0 ? dw_pyramid_get_values (dw_plot_series_get_raw (s->data))[j] : NAN;
      r.step = dw_plot_series_get_steps (s->data)[j];
      r.time = dw_plot_series_get_x (s->data, wall ? DW_X_WALL : DW_X_RELATIVE)[j];
      r.wall = wall;
      g_array_append_val (rows, r);
    }
  hover_marker_rows (self, self->cursor_x, markers);
  g_ptr_array_add (markers, NULL);
  if (rows->len == 0 && markers->len == 1)
    {
      gtk_popover_popdown (GTK_POPOVER (self->readout));
      return;
    }
  ensure_bounds (self);
  dw_chart_readout_set_rows (DW_CHART_READOUT (self->readout), (DwReadoutRow *)rows->data,
                             rows->len, (const char *const *)markers->pdata,
                             (self->by1 - self->by0) / 1000);
  dw_chart_readout_point_at (DW_CHART_READOUT (self->readout), x, y);
  if (!gtk_widget_get_visible (self->readout))
    gtk_popover_popup (GTK_POPOVER (self->readout));
}

GtkWidget *
dw_chart_get_readout (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  return self->readout;
}

void
dw_chart_hover (DwChart *self, double x, double y)
{
  Frame f;

  g_return_if_fail (DW_IS_CHART (self));
  make_frame (self, &f, gtk_widget_get_width (GTK_WIDGET (self)),
              gtk_widget_get_height (GTK_WIDGET (self)));
  self->hovering = TRUE;
  self->hover_px = x;
  self->hover_py = y;
  dw_chart_set_cursor_x (self, inv_fx (&f, CLAMP (x, f.px, f.px + f.pw)));
  update_readout (self, x, y);
}

static void
on_motion (GtkEventControllerMotion *motion, double x, double y, DwChart *self)
{
  dw_chart_hover (self, x, y);
}

void
dw_chart_leave (DwChart *self)
{
  g_return_if_fail (DW_IS_CHART (self));
  self->hovering = FALSE;
  gtk_popover_popdown (GTK_POPOVER (self->readout));
  dw_chart_set_cursor_x (self, NAN);
}

static void
on_leave (GtkEventControllerMotion *motion, DwChart *self)
{
  dw_chart_leave (self);
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, DwChart *self)
{
  self->drag_x0 = self->drag_x1 = x;
  self->drag_y0 = self->drag_y1 = y;
  self->dragging = FALSE;
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, DwChart *self)
{
  self->drag_x1 = self->drag_x0 + dx;
  self->drag_y1 = self->drag_y0 + dy;
  if (fabs (dx) >= 4)
    self->dragging = TRUE;
  if (self->dragging)
    queue_overlay (self);
}

static void
on_drag_end (GtkGestureDrag *gesture, double dx, double dy, DwChart *self)
{
  Frame f;
  double x0, x1;

  if (!self->dragging)
    return;
  self->dragging = FALSE;
  make_frame (self, &f, gtk_widget_get_width (GTK_WIDGET (self)),
              gtk_widget_get_height (GTK_WIDGET (self)));
  x0 = inv_fx (&f, MIN (self->drag_x0, self->drag_x0 + dx));
  x1 = inv_fx (&f, MAX (self->drag_x0, self->drag_x0 + dx));
  if (fabs (dy) >= 10)
    dw_chart_zoom (self, x0, x1, inv_fy (&f, MAX (self->drag_y0, self->drag_y0 + dy)),
                   inv_fy (&f, MIN (self->drag_y0, self->drag_y0 + dy)));
  else
    dw_chart_zoom (self, x0, x1, NAN, NAN);
}

static void
on_click (GtkGestureClick *gesture, int n_press, double x, double y, DwChart *self)
{
  if (n_press == 2)
    dw_chart_reset_zoom (self);
}

static void
on_style_changed (DwChart *self)
{
  gtk_widget_queue_draw (self->data_layer);
  gtk_widget_queue_draw (self->overlay_layer);
}

/* ---------------------------------------------------------------- GObject */

static void
dw_chart_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                  int *natural, int *minimum_baseline, int *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 220;
      *natural = MAX (DW_CHART (widget)->natural_width, 220);
    }
  else
    {
      *minimum = 150;
      *natural = 220;
    }
}

static void
dw_chart_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  DwChart *self = DW_CHART (widget);

  gtk_widget_allocate (self->data_layer, width, height, baseline, NULL);
  gtk_widget_allocate (self->overlay_layer, width, height, baseline, NULL);
  if (gtk_widget_get_visible (self->readout))
    gtk_popover_present (GTK_POPOVER (self->readout));
}

static void
dw_chart_dispose (GObject *object)
{
  DwChart *self = DW_CHART (object);

  if (self->tick_id != 0)
    {
      gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->tick_id);
      self->tick_id = 0;
    }
  g_clear_pointer (&self->data_layer, gtk_widget_unparent);
  g_clear_pointer (&self->overlay_layer, gtk_widget_unparent);
  g_clear_pointer (&self->readout, gtk_widget_unparent);
  G_OBJECT_CLASS (dw_chart_parent_class)->dispose (object);
}

static void
dw_chart_finalize (GObject *object)
{
  DwChart *self = DW_CHART (object);

  g_free (self->title);
  g_free (self->y_unit);
  g_ptr_array_unref (self->series);
  g_ptr_array_unref (self->thresholds);
  g_ptr_array_unref (self->markers);
  g_string_free (self->band_labels, TRUE);
  g_free (self->columns);
  G_OBJECT_CLASS (dw_chart_parent_class)->finalize (object);
}

static void
dw_chart_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwChart *self = DW_CHART (object);

  switch (prop_id)
    {
    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;
    case PROP_LOG_Y:
      g_value_set_boolean (value, self->log_y);
      break;
    case PROP_X_MODE:
      g_value_set_int (value, self->x_mode);
      break;
    case PROP_SMOOTHING:
      g_value_set_double (value, self->smoothing);
      break;
    case PROP_IGNORE_OUTLIERS:
      g_value_set_boolean (value, self->ignore_outliers);
      break;
    case PROP_CURSOR_X:
      g_value_set_double (value, self->cursor_x);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_chart_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  DwChart *self = DW_CHART (object);

  switch (prop_id)
    {
    case PROP_TITLE:
      dw_chart_set_title (self, g_value_get_string (value));
      break;
    case PROP_LOG_Y:
      dw_chart_set_log_y (self, g_value_get_boolean (value));
      break;
    case PROP_X_MODE:
      dw_chart_set_x_mode (self, g_value_get_int (value));
      break;
    case PROP_SMOOTHING:
      dw_chart_set_smoothing (self, g_value_get_double (value));
      break;
    case PROP_IGNORE_OUTLIERS:
      dw_chart_set_ignore_outliers (self, g_value_get_boolean (value));
      break;
    case PROP_CURSOR_X:
      dw_chart_set_cursor_x (self, g_value_get_double (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_chart_class_init (DwChartClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = dw_chart_dispose;
  object_class->finalize = dw_chart_finalize;
  object_class->get_property = dw_chart_get_property;
  object_class->set_property = dw_chart_set_property;
  widget_class->measure = dw_chart_measure;
  widget_class->size_allocate = dw_chart_size_allocate;

  /**
   * DwChart::zoom-changed:
   *
   * The view was zoomed (dragged, or dw_chart_zoom()) or reset to the data's extent.
   */
  signals[SIGNAL_ZOOM_CHANGED]
    = g_signal_new ("zoom-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                    NULL, G_TYPE_NONE, 0);

  properties[PROP_TITLE]
    = g_param_spec_string ("title", NULL, NULL, NULL,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_LOG_Y]
    = g_param_spec_boolean ("log-y", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_X_MODE]
    = g_param_spec_int ("x-mode", NULL, NULL, DW_X_STEP, DW_X_WALL, DW_X_STEP,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SMOOTHING]
    = g_param_spec_double ("smoothing", NULL, NULL, 0, 0.999, 0,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_IGNORE_OUTLIERS]
    = g_param_spec_boolean ("ignore-outliers", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CURSOR_X]
    = g_param_spec_double ("cursor-x", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "dwchart");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
dw_chart_init (DwChart *self)
{
  GtkEventController *motion;
  GtkGesture *drag, *click;

  self->series = g_ptr_array_new_with_free_func (chart_series_free);
  self->natural_width = 420;
  self->thresholds = g_ptr_array_new_with_free_func (threshold_free);
  self->markers = g_ptr_array_new_with_free_func (marker_free);
  self->band_labels = g_string_new (NULL);
  /* spikes are what a health tool exists to show: the axis covers them unless asked not to */
  self->ignore_outliers = FALSE;
  self->cursor_x = NAN;
  self->band_lo = self->band_hi = NAN;
  self->columns = g_new (DwColumn, MAX_COLUMNS);

  self->data_layer = dw_chart_layer_new (DW_CHART_LAYER_DATA);
  gtk_widget_set_parent (self->data_layer, GTK_WIDGET (self));
  self->overlay_layer = dw_chart_layer_new (DW_CHART_LAYER_OVERLAY);
  gtk_widget_set_parent (self->overlay_layer, GTK_WIDGET (self));
  self->readout = dw_chart_readout_new ();
  gtk_widget_set_parent (self->readout, GTK_WIDGET (self));

  motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "enter", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);

  drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));

  click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (on_click), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));

  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (on_style_changed), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (adw_style_manager_get_default (), "notify::high-contrast",
                           G_CALLBACK (on_style_changed), self, G_CONNECT_SWAPPED);
}

GtkWidget *
dw_chart_new (void)
{
  return g_object_new (DW_TYPE_CHART, NULL);
}

/* ---------------------------------------------------------------- properties */

const char *
dw_chart_get_title (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  return self->title;
}

void
dw_chart_set_title (DwChart *self, const char *title)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (g_strcmp0 (self->title, title) == 0)
    return;
  g_free (self->title);
  self->title = g_strdup (title);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  title ? title : "", -1);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TITLE]);
}

gboolean
dw_chart_get_log_y (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), FALSE);
  return self->log_y;
}

void
dw_chart_set_log_y (DwChart *self, gboolean log_y)
{
  g_return_if_fail (DW_IS_CHART (self));
  log_y = !!log_y;
  if (self->log_y == log_y)
    return;
  self->log_y = log_y;
  self->zoomed_y = FALSE;
  queue_all (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOG_Y]);
}

double
dw_chart_data_to_widget_x (DwChart *self, double x)
{
  Frame f;

  g_return_val_if_fail (DW_IS_CHART (self), NAN);
  make_frame (self, &f, gtk_widget_get_width (GTK_WIDGET (self)),
              gtk_widget_get_height (GTK_WIDGET (self)));
  return fx (&f, x);
}

void
dw_chart_set_y_unit (DwChart *self, const char *unit)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (unit != NULL && *unit == '\0')
    unit = NULL;
  if (g_strcmp0 (unit, self->y_unit) == 0)
    return;
  g_free (self->y_unit);
  self->y_unit = g_strdup (unit);
  queue_all (self);
}

const char *
dw_chart_get_y_unit (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  return self->y_unit;
}

void
dw_chart_set_natural_width (DwChart *self, int width)
{
  g_return_if_fail (DW_IS_CHART (self));
  self->natural_width = width;
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

DwXMode
dw_chart_get_x_mode (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), DW_X_STEP);
  return self->x_mode;
}

void
dw_chart_set_x_mode (DwChart *self, DwXMode mode)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (self->x_mode == mode)
    return;
  self->x_mode = mode;
  self->zoomed = self->zoomed_y = FALSE;
  self->cursor_x = NAN;
  queue_all (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_X_MODE]);
}

double
dw_chart_get_smoothing (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), 0);
  return self->smoothing;
}

void
dw_chart_set_smoothing (DwChart *self, double smoothing)
{
  g_return_if_fail (DW_IS_CHART (self));
  smoothing = CLAMP (smoothing, 0, 0.999);
  if (self->smoothing == smoothing)
    return;
  self->smoothing = smoothing;
  for (guint i = 0; i < self->series->len; i++)
    dw_plot_series_set_smoothing (((ChartSeries *)g_ptr_array_index (self->series, i))->data,
                                  smoothing);
  queue_all (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SMOOTHING]);
}

gboolean
dw_chart_get_ignore_outliers (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), FALSE);
  return self->ignore_outliers;
}

void
dw_chart_set_ignore_outliers (DwChart *self, gboolean ignore)
{
  g_return_if_fail (DW_IS_CHART (self));
  ignore = !!ignore;
  if (self->ignore_outliers == ignore)
    return;
  self->ignore_outliers = ignore;
  queue_all (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_IGNORE_OUTLIERS]);
}

double
dw_chart_get_cursor_x (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), NAN);
  return self->cursor_x;
}

void
dw_chart_set_cursor_x (DwChart *self, double x)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (self->cursor_x == x || (isnan (x) && isnan (self->cursor_x)))
    return;
  self->cursor_x = x;
  if (isnan (x))
    {
      self->hovering = FALSE;
      if (self->readout != NULL)
        gtk_popover_popdown (GTK_POPOVER (self->readout));
    }
  /* Only the overlay changes: the data layer keeps its render node. */
  queue_overlay (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CURSOR_X]);
}

/* ---------------------------------------------------------------- data */

DwPlotSeries *
dw_chart_add_series (DwChart *self, const char *id, const char *label, const GdkRGBA *color)
{
  ChartSeries *s;

  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  g_return_val_if_fail (id != NULL, NULL);
  if ((s = (gpointer)dw_chart_get_series (self, id)) != NULL)
    return (DwPlotSeries *)s;
  s = g_new0 (ChartSeries, 1);
  s->id = g_strdup (id);
  s->label = g_strdup (label ? label : id);
  if (color)
    s->color = *color;
  else
    rgba (&s->color, "#3584e4");
  s->data = dw_plot_series_new (self->smoothing);
  g_ptr_array_add (self->series, s);
  dw_chart_data_changed (self);
  return s->data;
}

DwPlotSeries *
dw_chart_get_series (DwChart *self, const char *id)
{
  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  for (guint i = 0; i < self->series->len; i++)
    {
      ChartSeries *s = g_ptr_array_index (self->series, i);
      if (g_str_equal (s->id, id))
        return s->data;
    }
  return NULL;
}

char **
dw_chart_dup_series_labels (DwChart *self)
{
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();

  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  for (guint i = 0; i < self->series->len; i++)
    g_strv_builder_add (b, ((ChartSeries *)g_ptr_array_index (self->series, i))->label);
  return g_strv_builder_end (b);
}

guint
dw_chart_get_n_series (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), 0);
  return self->series->len;
}

void
dw_chart_remove_series (DwChart *self, const char *id)
{
  g_return_if_fail (DW_IS_CHART (self));
  for (guint i = 0; i < self->series->len; i++)
    if (g_str_equal (((ChartSeries *)g_ptr_array_index (self->series, i))->id, id))
      {
        g_ptr_array_remove_index (self->series, i);
        dw_chart_data_changed (self);
        return;
      }
}

void
dw_chart_clear (DwChart *self)
{
  g_return_if_fail (DW_IS_CHART (self));
  g_ptr_array_set_size (self->series, 0);
  g_ptr_array_set_size (self->markers, 0);
  self->zoomed = self->zoomed_y = FALSE;
  dw_chart_data_changed (self);
}

static gboolean
on_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  DwChart *self = DW_CHART (widget);

  self->tick_id = 0;
  queue_all (self);
  return G_SOURCE_REMOVE;
}

void
dw_chart_data_changed (DwChart *self)
{
  g_return_if_fail (DW_IS_CHART (self));
  self->bounds_valid = FALSE;
  /* Coalesce: however many appends arrive, the chart redraws once, at the next frame. */
  if (self->tick_id == 0)
    self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), on_tick, NULL, NULL);
}

void
dw_chart_add_threshold (DwChart *self, double value, DwThresholdKind kind, const char *label)
{
  Threshold *t;

  g_return_if_fail (DW_IS_CHART (self));
  t = g_new0 (Threshold, 1);
  t->value = value;
  t->kind = kind;
  t->label = g_strdup (label);
  g_ptr_array_add (self->thresholds, t);
  queue_all (self);
}

void
dw_chart_set_band (DwChart *self, double lo, double hi)
{
  g_return_if_fail (DW_IS_CHART (self));
  self->band_lo = lo;
  self->band_hi = hi;
  queue_all (self);
}

void
dw_chart_add_marker (DwChart *self, gint64 step, DwMarkerSeverity severity, const char *title,
                     gboolean show_label)
{
  Marker *m;

  g_return_if_fail (DW_IS_CHART (self));
  m = g_new0 (Marker, 1);
  m->step = step;
  m->severity = severity;
  m->title = g_strdup (title);
  m->show_label = show_label;
  g_ptr_array_add (self->markers, m);
  queue_all (self);
}

void
dw_chart_clear_markers (DwChart *self)
{
  g_return_if_fail (DW_IS_CHART (self));
  g_ptr_array_set_size (self->markers, 0);
  queue_all (self);
}

void
dw_chart_get_view (DwChart *self, double *x0, double *x1, double *y0, double *y1)
{
  g_return_if_fail (DW_IS_CHART (self));
  ensure_bounds (self);
  if (x0)
    *x0 = self->bx0;
  if (x1)
    *x1 = self->bx1;
  if (y0)
    *y0 = self->by0;
  if (y1)
    *y1 = self->by1;
}

void
dw_chart_zoom (DwChart *self, double x0, double x1, double y0, double y1)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (!(x1 > x0))
    return;
  self->zoomed = TRUE;
  self->zx0 = x0;
  self->zx1 = x1;
  self->zoomed_y = isfinite (y0) && isfinite (y1) && y1 > y0;
  self->zy0 = y0;
  self->zy1 = y1;
  queue_all (self);
  g_signal_emit (self, signals[SIGNAL_ZOOM_CHANGED], 0);
}

void
dw_chart_reset_zoom (DwChart *self)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (!self->zoomed && !self->zoomed_y)
    return;
  self->zoomed = self->zoomed_y = FALSE;
  queue_all (self);
  g_signal_emit (self, signals[SIGNAL_ZOOM_CHANGED], 0);
}

gboolean
dw_chart_is_zoomed (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), FALSE);
  return self->zoomed;
}

void
dw_chart_get_marker_counts (DwChart *self, guint *n_nonfinite, guint *n_clipped, guint *n_restarts)
{
  g_return_if_fail (DW_IS_CHART (self));
  *n_nonfinite = self->n_nonfinite;
  *n_clipped = self->n_clipped;
  *n_restarts = self->n_restarts;
}

char *
dw_chart_dup_marker_labels (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  return g_strdup (self->band_labels->str);
}

GtkWidget *
_dw_chart_get_layer (DwChart *self, DwChartLayerKind kind)
{
  return kind == DW_CHART_LAYER_DATA ? self->data_layer : self->overlay_layer;
}

/* ---------------------------------------------------------------- export */

gboolean
dw_chart_export (DwChart *self, const char *path, DwExportFormat format, int width, int height,
                 GError **error)
{
  cairo_surface_t *surface;
  cairo_status_t status;
  cairo_t *cr;
  Style st;
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
  export_style (self, &st);

  /* Same drawing code as the widget, on a white page with the title and a legend on top. */
  set_color (cr, &st.bg, 1);
  cairo_paint (cr);
  set_color (cr, &st.fg, 1);
  draw_text (cr, &st, self->title ? self->title : "", MARGIN_LEFT, 8, 0, 0, 1.0, TRUE);
  lx = width - MARGIN_RIGHT;
  for (guint i = self->series->len; i > 0; i--)
    {
      ChartSeries *s = g_ptr_array_index (self->series, i - 1);
      g_autoptr (PangoLayout) layout = make_layout (cr, &st, s->label, 0.8, FALSE);
      int tw, th;

      pango_layout_get_pixel_size (layout, &tw, &th);
      lx -= tw;
      set_color (cr, &st.fg, 0.8);
      cairo_move_to (cr, lx, 10);
      pango_cairo_show_layout (cr, layout);
      set_color (cr, &s->color, 1);
      cairo_rectangle (cr, lx - 16, 10 + th / 2.0 - 2, 12, 4);
      cairo_fill (cr);
      lx -= 28;
    }
  cairo_translate (cr, 0, EXPORT_TITLE);
  draw_data (self, cr, width, height - EXPORT_TITLE, &st);
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
      ChartSeries *s = g_ptr_array_index (self->series, i);
      gsize n = dw_plot_series_get_length (s->data);
      const gint64 *steps = dw_plot_series_get_steps (s->data);
      const double *wall = dw_plot_series_get_x (s->data, DW_X_WALL);
      const double *raw = dw_pyramid_get_values (dw_plot_series_get_raw (s->data));
      const double *sm = dw_pyramid_get_values (dw_plot_series_get_smoothed (s->data));
      gboolean has_wall = dw_plot_series_has_wall_time (s->data);

      for (gsize j = 0; j < n; j++)
        {
          dw_csv_field (out, s->label);
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
