/* dw-tune-length-bias.c — the share of sequences a config rejects, by sequence length
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-tune-length-bias"

#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "dw-tune-length-bias.h"

#include "dw-correction.h"

#define N_BINS  DW_TUNE_LENGTH_BIAS_N_BINS
#define N_SLOTS 3 /* 0 = what-if, 1 = sequence bound reference, 2 = geometric reference */

struct _DwTuneLengthBias
{
  GtkWidget parent_instance;

  DwWhatifEngine *engine;
  double max_len;
  guint64 rows[N_SLOTS][N_BINS];
  guint64 rejected[N_SLOTS][N_BINS];
  gboolean valid[N_SLOTS];
  /* the steps whose rows' bins (from max_len) are the engine's row labels: a slider move counts
   * rejections without dividing 1.5 M lengths (3000 steps × 512 rows) again */
  guint n_row_bins_steps;
};

#define NO_BIN DW_WHATIF_NO_LABEL
G_STATIC_ASSERT (N_BINS <= DW_WHATIF_MAX_LABELS);

G_DEFINE_FINAL_TYPE (DwTuneLengthBias, dw_tune_length_bias, GTK_TYPE_WIDGET)

static guint
dw_tune_length_bias_bin (DwTuneLengthBias *self, double length)
{
  guint bin;

  if (!(self->max_len > 0))
    return 0;
  bin = (guint)(length / self->max_len * N_BINS);
  return MIN (bin, N_BINS - 1);
}

/* the bin of every row of the engine's steps, from max_len, as the engine's row labels: its
 * evaluations count the rows of each bin as they go (in its threads, while a step's outcomes are
 * in cache), so a move need not walk 1.5 M outcomes here */
static void
dw_tune_length_bias_bin_rows (DwTuneLengthBias *self)
{
  const guint n_steps = dw_whatif_engine_get_n_steps (self->engine);
  gsize n_rows = 0;

  for (guint index = 0; index < n_steps; index++)
    n_rows += dw_whatif_step_get_n_rows (dw_whatif_engine_get_step (self->engine, index));
  g_autofree guint8 *bins = g_new (guint8, MAX (n_rows, 1));
  n_rows = 0;
  for (guint index = 0; index < n_steps; index++)
    {
      const DwWhatifStep *step = dw_whatif_engine_get_step (self->engine, index);
      const double *lengths = dw_whatif_step_get_row_lengths (step);

      for (gsize row = 0; row < dw_whatif_step_get_n_rows (step); row++, n_rows++)
        bins[n_rows]
          = lengths[row] <= 0 ? NO_BIN : (guint8)dw_tune_length_bias_bin (self, lengths[row]);
    }
  dw_whatif_engine_set_row_labels (self->engine, bins, n_rows);
  self->n_row_bins_steps = n_steps;
}

/* Rejection per length bin of @result (row outcomes of the engine's steps) into slot @slot. */
static void
dw_tune_length_bias_outcomes (DwTuneLengthBias *self, const DwWhatifRunResult *result, guint slot)
{
  guint64 rows[DW_WHATIF_MAX_LABELS], rejected[DW_WHATIF_MAX_LABELS];

  memset (self->rows[slot], 0, sizeof self->rows[slot]);
  memset (self->rejected[slot], 0, sizeof self->rejected[slot]);
  self->valid[slot] = FALSE;
  if (!self->engine || !result || !result->row_rejected)
    return;
  if (self->n_row_bins_steps != dw_whatif_engine_get_n_steps (self->engine))
    dw_tune_length_bias_bin_rows (self); /* first use, or steps were added */
  if (!dw_whatif_engine_label_counts (self->engine, result, rows, rejected))
    return;
  memcpy (self->rows[slot], rows, sizeof self->rows[slot]);
  memcpy (self->rejected[slot], rejected, sizeof self->rejected[slot]);
  for (guint index = 0; index < result->n_steps && !self->valid[slot]; index++)
    self->valid[slot] = result->row_rejected[index] != NULL;
}

/* the longest sequence of the steps whose outcomes @result knows: the bins' range */
static void
dw_tune_length_bias_find_max (DwTuneLengthBias *self, const DwWhatifRunResult *result)
{
  if (!result || !result->row_rejected)
    return;
  for (guint index = 0; index < result->n_steps; index++)
    {
      const DwWhatifStep *step = dw_whatif_engine_get_step (self->engine, index);
      const double *lengths = dw_whatif_step_get_row_lengths (step);
      gsize n_rows = dw_whatif_step_get_n_rows (step);

      if (result->row_rejected[index] == NULL)
        continue;
      for (gsize row = 0; row < n_rows; row++)
        if (lengths[row] > self->max_len)
          self->max_len = lengths[row];
    }
}

/* the row outcomes of @config over the engine's steps (evaluated in parallel) */
static DwWhatifRunResult *
dw_tune_length_bias_evaluate (DwTuneLengthBias *self, const DwConfig *config)
{
  return dw_whatif_engine_evaluate_rows (self->engine, config, NULL);
}

/* The references: one RS option of the newest verl, its keys found by role. */
static void
dw_tune_length_bias_reference (DwConfig *config, const char *option, const char *spec)
{
  DwValue option_value = dw_value_str (option);
  DwValue spec_value = dw_value_str (spec);

  dw_config_init (config, DW_GEN_VERL_LATEST);
  dw_config_set (config, dw_schema_find_role (DW_GEN_VERL_LATEST, DW_ROLE_RS_OPTIONS)->name,
                 &option_value);
  dw_config_set (config, dw_schema_find_role (DW_GEN_VERL_LATEST, DW_ROLE_RS_THRESHOLD)->name,
                 &spec_value);
}

static void
dw_tune_length_bias_text (cairo_t *cr, double x, double y, const char *text, double xalign)
{
  cairo_text_extents_t extents;

  cairo_text_extents (cr, text, &extents);
  cairo_move_to (cr, x - xalign * extents.x_advance, y);
  cairo_show_text (cr, text);
}

static double
dw_tune_length_bias_largest_share (DwTuneLengthBias *self)
{
  double largest = 0.05;

  for (guint slot = 0; slot < N_SLOTS; slot++)
    for (guint bin = 0; bin < N_BINS; bin++)
      if (self->valid[slot] && self->rows[slot][bin])
        largest = MAX (largest, (double)self->rejected[slot][bin] / (double)self->rows[slot][bin]);
  return MIN (1.0, largest * 1.1);
}

static void
dw_tune_length_bias_draw_grid (DwTuneLengthBias *self, cairo_t *cr, const GdkRGBA *fg,
                               const graphene_rect_t *plot, double ymax)
{
  double ml = plot->origin.x, mt = plot->origin.y, pw = plot->size.width, ph = plot->size.height;
  char buffer[64];

  cairo_set_line_width (cr, 1);
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.15);
  for (int tick = 0; tick <= 4; tick++)
    {
      double y = mt + ph - ph * tick / 4;

      cairo_move_to (cr, ml, floor (y) + 0.5);
      cairo_line_to (cr, ml + pw, floor (y) + 0.5);
    }
  cairo_stroke (cr);
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.7);
  for (int tick = 0; tick <= 4; tick++)
    {
      double y = mt + ph - ph * tick / 4;

      g_snprintf (buffer, sizeof buffer, "%.0f%%", 100 * ymax * tick / 4);
      dw_tune_length_bias_text (cr, ml - 4, y + 4, buffer, 1);
      g_snprintf (buffer, sizeof buffer, "%.0f", self->max_len * tick / 4);
      dw_tune_length_bias_text (cr, ml + pw * tick / 4, mt + ph + 14, buffer,
                                tick == 0   ? 0
                                : tick == 4 ? 1
                                            : 0.5);
    }
}

static void
dw_tune_length_bias_draw_curves (DwTuneLengthBias *self, cairo_t *cr, const GdkRGBA *fg,
                                 const graphene_rect_t *plot, double ymax, int height)
{
  /* none of them green, amber or red: those colours mean good, warning, error */
  static const GdkRGBA colors[] = {
    { 0.569f, 0.255f, 0.675f, 1.0f }, /* what-if: purple, as in the charts */
    { 0.208f, 0.518f, 0.894f, 0.8f }, /* sequence bound: blue */
    { 0.129f, 0.565f, 0.643f, 0.9f }, /* geometric: teal */
  };
  const char *names[]
    = { _ ("What-if"), _ ("Sequence bound 0.5_2.0"), _ ("Geometric 0.999_1.001") };
  double ml = plot->origin.x, mt = plot->origin.y, pw = plot->size.width, ph = plot->size.height;
  double legend_x = ml;

  for (guint slot = 0; slot < N_SLOTS; slot++)
    {
      gboolean started = FALSE;
      cairo_text_extents_t extents;
      double legend_y = height - 8;

      if (!self->valid[slot])
        continue;
      cairo_set_source_rgba (cr, colors[slot].red, colors[slot].green, colors[slot].blue,
                             colors[slot].alpha);
      cairo_set_line_width (cr, slot == 0 ? 2.5 : 1.5);
      for (guint bin = 0; bin < N_BINS; bin++)
        {
          double x, y;

          if (!self->rows[slot][bin])
            continue;
          x = ml + pw * (bin + 0.5) / N_BINS;
          y = mt + ph
              - ph * ((double)self->rejected[slot][bin] / (double)self->rows[slot][bin]) / ymax;
          if (started)
            cairo_line_to (cr, x, y);
          else
            cairo_move_to (cr, x, y);
          started = TRUE;
        }
      cairo_stroke (cr);

      /* legend */
      cairo_rectangle (cr, legend_x, legend_y - 8, 12, 3);
      cairo_fill (cr);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.8);
      cairo_text_extents (cr, names[slot], &extents);
      cairo_move_to (cr, legend_x + 16, legend_y - 4);
      cairo_show_text (cr, names[slot]);
      legend_x += 16 + extents.x_advance + 14;
    }
}

static void
dw_tune_length_bias_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  DwTuneLengthBias *self = DW_TUNE_LENGTH_BIAS (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  const double ml = 40, mr = 8, mt = 8, mb = 40;
  graphene_rect_t plot = GRAPHENE_RECT_INIT (ml, mt, width - ml - mr, height - mt - mb);
  cairo_t *cr;
  GdkRGBA fg;
  double ymax;

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  cairo_select_font_face (cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 11);
  if (plot.size.width <= 10 || plot.size.height <= 10 || !(self->max_len > 0))
    {
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.6);
      dw_tune_length_bias_text (cr, width / 2.0, height / 2.0, _ ("No sequence statistics"), 0.5);
      cairo_destroy (cr);
      return;
    }

  ymax = dw_tune_length_bias_largest_share (self);
  dw_tune_length_bias_draw_grid (self, cr, &fg, &plot, ymax);
  dw_tune_length_bias_draw_curves (self, cr, &fg, &plot, ymax, height);
  cairo_destroy (cr);
}

static void
dw_tune_length_bias_finalize (GObject *object)
{
  DwTuneLengthBias *self = DW_TUNE_LENGTH_BIAS (object);

  g_clear_pointer (&self->engine, dw_whatif_engine_unref);
  G_OBJECT_CLASS (dw_tune_length_bias_parent_class)->finalize (object);
}

static void
dw_tune_length_bias_class_init (DwTuneLengthBiasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = dw_tune_length_bias_finalize;
  widget_class->snapshot = dw_tune_length_bias_snapshot;
  gtk_widget_class_set_css_name (widget_class, "lengthbias");
}

static void
dw_tune_length_bias_init (DwTuneLengthBias *self)
{
  (void)self;
}

void
dw_tune_length_bias_set_engine (DwTuneLengthBias *self, DwWhatifEngine *engine)
{
  DwConfig config;

  g_return_if_fail (DW_IS_TUNE_LENGTH_BIAS (self));
  if (engine != NULL)
    dw_whatif_engine_ref (engine);
  g_clear_pointer (&self->engine, dw_whatif_engine_unref);
  self->engine = engine;
  self->n_row_bins_steps = 0;
  memset (self->valid, 0, sizeof self->valid);
  self->max_len = 0;
  if (engine != NULL)
    {
      g_autoptr (DwWhatifRunResult) sequence = NULL;
      g_autoptr (DwWhatifRunResult) geometric = NULL;

      /* the bins span the longest sequence of the sequence-bound reference's steps */
      dw_tune_length_bias_reference (&config, "seq_sum_k1", "0.5_2.0");
      sequence = dw_tune_length_bias_evaluate (self, &config);
      dw_tune_length_bias_find_max (self, sequence);
      dw_tune_length_bias_bin_rows (self);
      dw_tune_length_bias_outcomes (self, sequence, 1);
      dw_tune_length_bias_reference (&config, "seq_mean_k1", "0.999_1.001");
      geometric = dw_tune_length_bias_evaluate (self, &config);
      dw_tune_length_bias_outcomes (self, geometric, 2);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
dw_tune_length_bias_set_result (DwTuneLengthBias *self, const DwWhatifRunResult *result)
{
  g_return_if_fail (DW_IS_TUNE_LENGTH_BIAS (self));
  dw_tune_length_bias_outcomes (self, result, 0);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
dw_tune_length_bias_get_counts (DwTuneLengthBias *self, guint64 *rows, guint64 *rejected,
                                double *max_length)
{
  g_return_val_if_fail (DW_IS_TUNE_LENGTH_BIAS (self), FALSE);
  memcpy (rows, self->rows[0], sizeof self->rows[0]);
  memcpy (rejected, self->rejected[0], sizeof self->rejected[0]);
  if (max_length != NULL)
    *max_length = self->max_len;
  return self->valid[0];
}
