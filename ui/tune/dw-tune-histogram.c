/* dw-tune-histogram.c — the token log-ratios of one step, with the config's token thresholds
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-tune-histogram"

#include "config.h"

#include <math.h>
#include <string.h>

#include "dw-tune-histogram.h"

#define N_BINS 60

struct _DwTuneHistogram
{
  GtkWidget parent_instance;

  const DwWhatifStep *step;
  DwTuneThreshold thresholds[DW_TUNE_HISTOGRAM_MAX_THRESHOLDS];
  guint n_thresholds;
};

G_DEFINE_FINAL_TYPE (DwTuneHistogram, dw_tune_histogram, GTK_TYPE_WIDGET)

static const GdkRGBA dw_tune_histogram_colors[] = {
  { 0.208f, 0.518f, 0.894f, 1.0f }, /* IS: blue 3 */
  { 0.878f, 0.106f, 0.141f, 1.0f }, /* RS: red 3 */
  { 0.569f, 0.255f, 0.675f, 1.0f }, /* veto: purple 3 */
};

static void
dw_tune_histogram_text (cairo_t *cr, double x, double y, const char *text, double xalign)
{
  cairo_text_extents_t extents;

  cairo_text_extents (cr, text, &extents);
  cairo_move_to (cr, x - xalign * extents.x_advance, y);
  cairo_show_text (cr, text);
}

/* the x range: the bulk of the tokens and every threshold, padded by 5 % */
static void
dw_tune_histogram_range (DwTuneHistogram *self, double *lower, double *upper)
{
  double lo = dw_whatif_step_quantile (self->step, 0.0005);
  double hi = dw_whatif_step_quantile (self->step, 0.9995);
  double pad;

  for (guint i = 0; i < self->n_thresholds; i++)
    {
      lo = MIN (lo, self->thresholds[i].x);
      hi = MAX (hi, self->thresholds[i].x);
    }
  lo = MAX (lo, -20.0);
  hi = MIN (hi, 20.0);
  pad = 0.05 * (hi - lo);
  if (!(pad > 0))
    pad = 0.01;
  *lower = lo - pad;
  *upper = hi + pad;
}

static void
dw_tune_histogram_draw_bars (DwTuneHistogram *self, cairo_t *cr, double lo, double hi,
                             const graphene_rect_t *plot)
{
  guint64 counts[N_BINS];
  guint64 largest = 1;
  double log_largest;

  dw_whatif_step_histogram (self->step, lo, hi, N_BINS, counts);
  for (guint i = 0; i < N_BINS; i++)
    largest = MAX (largest, counts[i]);
  /* counts on a log scale: the tails that thresholds cut are a few tokens among thousands */
  log_largest = log1p ((double)largest);
  cairo_set_source_rgba (cr, 0.208, 0.518, 0.894, 0.55);
  for (guint i = 0; i < N_BINS; i++)
    {
      double bar, left;

      if (!counts[i])
        continue;
      bar = log1p ((double)counts[i]) / log_largest * plot->size.height;
      left = plot->origin.x + plot->size.width * i / N_BINS;
      cairo_rectangle (cr, left + 0.5, plot->origin.y + plot->size.height - bar,
                       plot->size.width / N_BINS - 1, bar);
    }
  cairo_fill (cr);
}

static void
dw_tune_histogram_draw_axis (cairo_t *cr, const GdkRGBA *fg, double lo, double hi,
                             const graphene_rect_t *plot, int height)
{
  double ml = plot->origin.x, mt = plot->origin.y, pw = plot->size.width, ph = plot->size.height;
  char buffer[64];

  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.6);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, ml, mt + ph + 0.5);
  cairo_line_to (cr, ml + pw, mt + ph + 0.5);
  cairo_stroke (cr);
  for (int tick = 0; tick <= 4; tick++)
    {
      double value = lo + (hi - lo) * tick / 4;

      g_snprintf (buffer, sizeof buffer, "%.3g", value);
      dw_tune_histogram_text (cr, ml + pw * tick / 4, height - 6, buffer,
                              tick == 0   ? 0
                              : tick == 4 ? 1
                                          : 0.5);
    }
  /* ℓ = 0 */
  if (lo < 0 && hi > 0)
    {
      double zero = ml + pw * (0 - lo) / (hi - lo);

      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.3);
      cairo_move_to (cr, floor (zero) + 0.5, mt);
      cairo_line_to (cr, floor (zero) + 0.5, mt + ph);
      cairo_stroke (cr);
    }
}

static void
dw_tune_histogram_draw_thresholds (DwTuneHistogram *self, cairo_t *cr, double lo, double hi,
                                   const graphene_rect_t *plot)
{
  double ml = plot->origin.x, mt = plot->origin.y, pw = plot->size.width, ph = plot->size.height;
  double row_start[2] = { G_MAXDOUBLE, G_MAXDOUBLE }, row_end[2] = { -G_MAXDOUBLE, -G_MAXDOUBLE };

  for (guint i = 0; i < self->n_thresholds; i++)
    {
      const DwTuneThreshold *line = &self->thresholds[i];
      const GdkRGBA *color = &dw_tune_histogram_colors[line->kind];
      double x = ml + pw * (line->x - lo) / (hi - lo);
      cairo_text_extents_t extents;
      gboolean right;
      double start, end;
      guint row = 0;

      cairo_set_source_rgba (cr, color->red, color->green, color->blue, 1);
      cairo_set_line_width (cr, 2);
      cairo_move_to (cr, x, mt);
      cairo_line_to (cr, x, mt + ph);
      cairo_stroke (cr);
      /* each label goes to the first of two rows where it overlaps no earlier label, so that
       * close lines stay readable; a line with the same label as the previous one needs none */
      if (i > 0 && strcmp (line->label, self->thresholds[i - 1].label) == 0
          && fabs (x - (ml + pw * (self->thresholds[i - 1].x - lo) / (hi - lo))) < 60)
        continue;
      cairo_text_extents (cr, line->label, &extents);
      right = x > ml + pw / 2;
      start = right ? x - 3 - extents.x_advance : x + 3;
      end = start + extents.x_advance;
      while (row < 1 && !(end < row_start[row] || start > row_end[row]))
        row++;
      row_start[row] = MIN (row_start[row], start);
      row_end[row] = MAX (row_end[row], end);
      dw_tune_histogram_text (cr, start, mt - 4 - row * 13, line->label, 0);
    }
}

static void
dw_tune_histogram_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  DwTuneHistogram *self = DW_TUNE_HISTOGRAM (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  const double ml = 8, mr = 8, mt = 30, mb = 22;
  graphene_rect_t plot = GRAPHENE_RECT_INIT (ml, mt, width - ml - mr, height - mt - mb);
  cairo_t *cr;
  GdkRGBA fg;
  double lo, hi;

  if (self->step == NULL || dw_whatif_step_get_n_tokens (self->step) == 0)
    return;
  if (plot.size.width <= 10 || plot.size.height <= 10)
    return;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  cairo_select_font_face (cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 11);

  dw_tune_histogram_range (self, &lo, &hi);
  dw_tune_histogram_draw_bars (self, cr, lo, hi, &plot);
  dw_tune_histogram_draw_axis (cr, &fg, lo, hi, &plot, height);
  dw_tune_histogram_draw_thresholds (self, cr, lo, hi, &plot);
  cairo_destroy (cr);
}

static void
dw_tune_histogram_class_init (DwTuneHistogramClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  widget_class->snapshot = dw_tune_histogram_snapshot;
  gtk_widget_class_set_css_name (widget_class, "histogram");
}

static void
dw_tune_histogram_init (DwTuneHistogram *self)
{
  (void)self;
}

void
dw_tune_histogram_set_step (DwTuneHistogram *self, const DwWhatifStep *step)
{
  g_return_if_fail (DW_IS_TUNE_HISTOGRAM (self));
  self->step = step;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
dw_tune_histogram_set_thresholds (DwTuneHistogram *self, const DwTuneThreshold *thresholds,
                                  guint n_thresholds)
{
  g_return_if_fail (DW_IS_TUNE_HISTOGRAM (self));
  self->n_thresholds = MIN (n_thresholds, DW_TUNE_HISTOGRAM_MAX_THRESHOLDS);
  memcpy (self->thresholds, thresholds, self->n_thresholds * sizeof *thresholds);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}
