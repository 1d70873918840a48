/* dw-plot-series.c — a scalar series prepared for plotting
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-series"

#include "config.h"

#include "dw-plot-series.h"

#include <math.h>

#include "dw-smooth.h"

struct _DwPlotSeries
{
  GArray *steps;             /* gint64 */
  GArray *x[3];              /* double per DwXMode */
  GArray *restarts;          /* gint64, in the order added */
  GHashTable *restart_steps; /* the same steps as a set: adding is O(1), not O(markers) */
  gboolean has_wall;
  double first_wall;
  double smoothing;
  DwEmaState ema;
  DwPyramid *raw;
  DwPyramid *smoothed; /* NULL when smoothing == 0 */
};

DwPlotSeries *
dw_plot_series_new (double smoothing)
{
  DwPlotSeries *self = g_new0 (DwPlotSeries, 1);

  self->steps = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint index = 0; index < G_N_ELEMENTS (self->x); index++)
    self->x[index] = g_array_new (FALSE, FALSE, sizeof (double));
  self->restarts = g_array_new (FALSE, FALSE, sizeof (gint64));
  self->restart_steps = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  self->raw = dw_pyramid_new ();
  self->first_wall = NAN;
  dw_plot_series_set_smoothing (self, smoothing);
  return self;
}

void
dw_plot_series_free (DwPlotSeries *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->steps);
  for (guint index = 0; index < G_N_ELEMENTS (self->x); index++)
    g_array_unref (self->x[index]);
  g_array_unref (self->restarts);
  g_hash_table_unref (self->restart_steps);
  dw_pyramid_free (self->raw);
  dw_pyramid_free (self->smoothed);
  g_free (self);
}

static void
resmooth (DwPlotSeries *self)
{
  gsize count = dw_pyramid_get_length (self->raw);
  g_autofree double *out = NULL;

  g_clear_pointer (&self->smoothed, dw_pyramid_free);
  dw_ema_init (&self->ema, self->smoothing);
  if (self->smoothing <= 0.0)
    return;
  self->smoothed = dw_pyramid_new ();
  out = g_new (double, MAX (count, 1));
  if (!dw_ema_append (&self->ema, dw_pyramid_get_values (self->raw), count, out))
    dw_ema_smooth (dw_pyramid_get_values (self->raw), count, self->smoothing, out);
  dw_pyramid_append (self->smoothed, out, count);
}

void
dw_plot_series_set_smoothing (DwPlotSeries *self, double smoothing)
{
  if (isnan (smoothing))
    smoothing = 0;
  smoothing = CLAMP (smoothing, 0.0, 0.999);
  if (smoothing == self->smoothing && (smoothing == 0.0 || self->smoothed != NULL))
    return;
  self->smoothing = smoothing;
  resmooth (self);
}

double
dw_plot_series_get_smoothing (const DwPlotSeries *self)
{
  return self->smoothing;
}

static void
truncate_at (DwPlotSeries *self, gsize length)
{
  g_array_set_size (self->steps, length);
  for (guint index = 0; index < G_N_ELEMENTS (self->x); index++)
    g_array_set_size (self->x[index], length);
  dw_pyramid_truncate (self->raw, length);
}

void
dw_plot_series_add_restart (DwPlotSeries *self, gint64 step)
{
  /* a linear search per marker made 1 M restart markers quadratic */
  if (!g_hash_table_add (self->restart_steps, g_memdup2 (&step, sizeof step)))
    return;
  g_array_append_val (self->restarts, step);
}

void
dw_plot_series_append (DwPlotSeries *self, const gint64 *steps, const double *wall_times,
                       const double *values, gsize n)
{
  gsize old_len;
  gboolean truncated = FALSE;

  if (n == 0)
    return;
  /* A restart rewrites steps: drop what it replaces (TensorBoard's newest-write-wins). */
  if (self->steps->len > 0 && steps[0] <= g_array_index (self->steps, gint64, self->steps->len - 1))
    {
      gsize keep = 0, high = self->steps->len;
      while (keep < high)
        {
          gsize mid = keep + (high - keep) / 2;
          if (g_array_index (self->steps, gint64, mid) < steps[0])
            keep = mid + 1;
          else
            high = mid;
        }
      truncate_at (self, keep);
      dw_plot_series_add_restart (self, steps[0]);
      truncated = TRUE;
    }
  old_len = self->steps->len;
  /* the arrays grow once, then every point is written in place (a call per value was most of a
   * Tune page's chart update: 4 × 3000 points × 7 charts a slider move) */
  g_array_set_size (self->steps, old_len + n);
  for (guint mode = 0; mode < G_N_ELEMENTS (self->x); mode++)
    g_array_set_size (self->x[mode], old_len + n);
  for (gsize index = 0; index < n; index++)
    {
      double prev_wall = old_len + index > 0
                           ? g_array_index (self->x[DW_X_WALL], double, old_len + index - 1)
                           : NAN;
      double wall = wall_times != NULL ? wall_times[index] : NAN;
      double step_x = (double)steps[index];
      double rel;

      if (isfinite (wall))
        {
          if (!self->has_wall)
            self->first_wall = wall;
          self->has_wall = TRUE;
        }
      /* Keep x non-decreasing: carry the last known time over gaps and clock steps back. */
      if (!isfinite (wall) || (isfinite (prev_wall) && wall < prev_wall))
        wall = prev_wall;
      rel = isfinite (wall) ? wall - self->first_wall : NAN;
      g_array_index (self->steps, gint64, old_len + index) = steps[index];
      g_array_index (self->x[DW_X_STEP], double, old_len + index) = step_x;
      g_array_index (self->x[DW_X_WALL], double, old_len + index) = wall;
      g_array_index (self->x[DW_X_RELATIVE], double, old_len + index) = rel;
    }
  dw_pyramid_append (self->raw, values, n);

  if (self->smoothing > 0.0)
    {
      if (truncated)
        resmooth (self);
      else
        {
          g_autofree double *out = g_new (double, n);
          if (dw_ema_append (&self->ema, values, n, out))
            dw_pyramid_append (self->smoothed, out, n);
          else
            resmooth (self);
        }
    }
}

gsize
dw_plot_series_get_length (const DwPlotSeries *self)
{
  return self->steps->len;
}

const gint64 *
dw_plot_series_get_steps (const DwPlotSeries *self)
{
  return (const gint64 *)(gpointer)self->steps->data;
}

gboolean
dw_plot_series_has_wall_time (const DwPlotSeries *self)
{
  return self->has_wall;
}

const double *
dw_plot_series_get_x (const DwPlotSeries *self, DwXMode mode)
{
  /* Without wall times every mode falls back to steps, so a chart never loses its x axis. */
  if (!self->has_wall)
    mode = DW_X_STEP;
  return (const double *)(gpointer)self->x[mode]->data;
}

const DwPyramid *
dw_plot_series_get_raw (const DwPlotSeries *self)
{
  return self->raw;
}

const DwPyramid *
dw_plot_series_get_smoothed (const DwPlotSeries *self)
{
  return self->smoothed != NULL ? self->smoothed : self->raw;
}

const gint64 *
dw_plot_series_get_restarts (const DwPlotSeries *self, gsize *n_restarts)
{
  *n_restarts = self->restarts->len;
  return (const gint64 *)(gpointer)self->restarts->data;
}

gsize
dw_plot_series_get_memory (const DwPlotSeries *self)
{
  gsize bytes = sizeof *self + self->steps->len * (sizeof (gint64) + 3 * sizeof (double));

  bytes += dw_pyramid_get_memory (self->raw);
  if (self->smoothed != NULL)
    bytes += dw_pyramid_get_memory (self->smoothed);
  return bytes;
}

gssize
dw_plot_series_nearest (const DwPlotSeries *self, DwXMode mode, double x)
{
  gsize count = self->steps->len;
  const double *values = dw_plot_series_get_x (self, mode);
  gsize index;

  if (count == 0)
    return -1;
  index = dw_lower_bound (values, count, x);
  if (index == count)
    return count - 1;
  if (index > 0 && x - values[index - 1] <= values[index] - x)
    {
      /* Several points can share an x (wall time carried over): take the first of them. */
      index = dw_lower_bound (values, count, values[index - 1]);
    }
  return index;
}

double
dw_plot_series_x_of_step (const DwPlotSeries *self, DwXMode mode, gint64 step)
{
  gssize index = dw_plot_series_nearest (self, DW_X_STEP, (double)step);

  if (index < 0)
    return NAN;
  return dw_plot_series_get_x (self, mode)[index];
}
