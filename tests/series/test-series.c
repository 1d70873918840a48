/* test-series.c — pyramid, envelopes, debiased EMA, quantile bounds, plot series
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Expectations are derived independently: brute-force scans over the raw values, hand-computed
 * EMA values (TensorBoard's formula worked out on paper), sorted-array quantiles.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>

#include "dw-csv.h"
#include "dw-plot-series.h"
#include "dw-pyramid.h"
#include "dw-smooth.h"

static double *
random_values (GRand *rand, gsize n, gboolean specials)
{
  double *v = g_new (double, n);

  for (gsize i = 0; i < n; i++)
    {
      v[i] = g_rand_double_range (rand, -1000, 1000);
      if (specials)
        {
          guint32 r = g_rand_int_range (rand, 0, 100);
          if (r == 0)
            v[i] = NAN;
          else if (r == 1)
            v[i] = INFINITY;
          else if (r == 2)
            v[i] = -INFINITY;
        }
    }
  return v;
}

static void
brute_range (const double *v, gsize lo, gsize hi, DwRange *r)
{
  r->min = INFINITY;
  r->max = -INFINITY;
  r->flags = 0;
  for (gsize i = lo; i < hi; i++)
    {
      if (isnan (v[i]))
        r->flags |= DW_RANGE_HAS_NAN;
      else if (v[i] == INFINITY)
        r->flags |= DW_RANGE_HAS_POSINF;
      else if (v[i] == -INFINITY)
        r->flags |= DW_RANGE_HAS_NEGINF;
      else
        {
          r->min = MIN (r->min, v[i]);
          r->max = MAX (r->max, v[i]);
        }
    }
}

static void
test_pyramid_range (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (42);
  gsize n = 5003;
  g_autofree double *v = random_values (rand, n, TRUE);
  g_autoptr (DwPyramid) p = dw_pyramid_new ();

  /* Appended in uneven chunks, as a live run would be. */
  for (gsize done = 0; done < n;)
    {
      gsize chunk = MIN (n - done, (gsize)g_rand_int_range (rand, 1, 700));
      dw_pyramid_append (p, v + done, chunk);
      done += chunk;
    }
  g_assert_cmpuint (dw_pyramid_get_length (p), ==, n);

  for (guint t = 0; t < 4000; t++)
    {
      gsize lo = g_rand_int_range (rand, 0, n);
      gsize hi = g_rand_int_range (rand, lo, n + 1);
      DwRange got, want;

      if (t < 10)
        lo = 0, hi = n - t;
      dw_pyramid_range (p, lo, hi, &got);
      brute_range (v, lo, hi, &want);
      g_assert_cmpfloat (got.min, ==, want.min);
      g_assert_cmpfloat (got.max, ==, want.max);
      g_assert_cmpuint (got.flags, ==, want.flags);
    }
}

static void
test_pyramid_truncate (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  g_autofree double *v = random_values (rand, 3000, TRUE);
  g_autofree double *w = random_values (rand, 500, FALSE);
  g_autoptr (DwPyramid) p = dw_pyramid_new ();
  DwRange got, want;

  dw_pyramid_append (p, v, 3000);
  dw_pyramid_truncate (p, 1234);
  dw_pyramid_append (p, w, 500);
  /* Expected: v[0..1234) followed by w. */
  memcpy (v + 1234, w, 500 * sizeof (double));
  g_assert_cmpuint (dw_pyramid_get_length (p), ==, 1734);
  for (gsize lo = 0; lo < 1734; lo += 97)
    for (gsize hi = lo; hi <= 1734; hi += 131)
      {
        dw_pyramid_range (p, lo, hi, &got);
        brute_range (v, lo, hi, &want);
        g_assert_cmpfloat (got.min, ==, want.min);
        g_assert_cmpfloat (got.max, ==, want.max);
        g_assert_cmpuint (got.flags, ==, want.flags);
      }
  dw_pyramid_truncate (p, 0);
  g_assert_cmpuint (dw_pyramid_get_length (p), ==, 0);
  dw_pyramid_range (p, 0, 10, &got);
  g_assert_cmpfloat (got.min, ==, INFINITY);
}

/* A one-step spike in a million points must land, exactly, in its pixel column. */
static void
test_columns_spike (void)
{
  gsize n = 1000000;
  g_autofree double *x = g_new (double, n);
  g_autofree double *v = g_new0 (double, n);
  g_autoptr (DwPyramid) p = dw_pyramid_new ();
  DwColumn cols[1600];
  guint spike_col = 0;

  for (gsize i = 0; i < n; i++)
    x[i] = i;
  v[123457] = 1e6;
  v[999999] = NAN;
  dw_pyramid_append (p, v, n);
  dw_pyramid_columns (p, x, 0, n - 1, 1600, cols);
  for (guint c = 0; c < 1600; c++)
    {
      double dx = (double)(n - 1) / 1600;
      /* Brute force: the column of index i is floor(i / dx); the last includes x1. */
      gsize lo = (gsize)ceil (c * dx), hi = c == 1599 ? n : (gsize)ceil ((c + 1) * dx);
      g_assert_cmpuint (cols[c].lo, ==, lo);
      g_assert_cmpuint (cols[c].hi, ==, hi);
      if (123457 >= lo && 123457 < hi)
        spike_col = c;
    }
  g_assert_cmpuint (spike_col, ==, (guint)floor (123457 / ((n - 1) / 1600.0)));
  g_assert_cmpfloat (cols[spike_col].max, ==, 1e6);
  g_assert_cmpfloat (cols[spike_col].min, ==, 0);
  g_assert_cmpfloat (cols[spike_col + 1].max, ==, 0);
  g_assert_cmpuint (cols[1599].flags, ==, DW_RANGE_HAS_NAN);
  g_assert_true (isnan (cols[1599].last));
  g_assert_cmpuint (cols[1598].flags, ==, 0);

  /* Zoomed: [100, 110] over 4 columns of 2.5 steps: {100,101,102} {103,104} {105,106,107}
   * {108,109,110}. */
  dw_pyramid_columns (p, x, 100, 110, 4, cols);
  g_assert_cmpuint (cols[0].lo, ==, 100);
  g_assert_cmpuint (cols[0].hi, ==, 103);
  g_assert_cmpuint (cols[1].hi, ==, 105);
  g_assert_cmpuint (cols[2].hi, ==, 108);
  g_assert_cmpuint (cols[3].hi, ==, 111);
}

static void
test_ema_values (void)
{
  double y[] = { 1, 2, 3 };
  double nan_y[] = { 1, NAN, 3, INFINITY };
  double c[] = { 5, 5, 5, 5 };
  double out[4];

  /* w = 0.5: last = 0.5, 1.25, 2.125; debias 1 - 0.5^k = 0.5, 0.75, 0.875. */
  dw_ema_smooth (y, 3, 0.5, out);
  g_assert_cmpfloat_with_epsilon (out[0], 1.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (out[1], 1.25 / 0.75, 1e-15);
  g_assert_cmpfloat_with_epsilon (out[2], 2.125 / 0.875, 1e-15);

  /* NaN / inf pass through and are not accumulated: second finite point has k = 2. */
  dw_ema_smooth (nan_y, 4, 0.5, out);
  g_assert_cmpfloat_with_epsilon (out[0], 1.0, 1e-15);
  g_assert_true (isnan (out[1]));
  g_assert_cmpfloat_with_epsilon (out[2], 1.75 / 0.75, 1e-15);
  g_assert_cmpfloat (out[3], ==, INFINITY);

  /* A constant series is drawn as is (tensorboard#786). */
  dw_ema_smooth (c, 4, 0.9, out);
  for (guint i = 0; i < 4; i++)
    g_assert_cmpfloat (out[i], ==, 5);

  /* w = 0: no smoothing. */
  dw_ema_smooth (y, 3, 0.0, out);
  g_assert_cmpfloat (out[2], ==, 3);
}

static void
test_ema_incremental (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  gsize n = 20000;
  g_autofree double *v = random_values (rand, n, TRUE);
  g_autofree double *whole = g_new (double, n);
  g_autofree double *parts = g_new (double, n);
  DwEmaState st;
  double two[] = { 2, 2 }, three = 3, out[2];

  dw_ema_smooth (v, n, 0.6, whole);
  dw_ema_init (&st, 0.6);
  for (gsize done = 0; done < n;)
    {
      gsize chunk = MIN (n - done, (gsize)g_rand_int_range (rand, 1, 900));
      g_assert_true (dw_ema_append (&st, v + done, chunk, parts + done));
      done += chunk;
    }
  for (gsize i = 0; i < n; i++)
    if (!(isnan (whole[i]) && isnan (parts[i])))
      g_assert_cmpfloat (whole[i], ==, parts[i]);

  /* A constant prefix then a change: the caller is told to re-smooth. */
  dw_ema_init (&st, 0.6);
  g_assert_true (dw_ema_append (&st, two, 2, out));
  g_assert_cmpfloat (out[1], ==, 2);
  g_assert_false (dw_ema_append (&st, &three, 1, out));
}

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void
test_quantile_bounds (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  double v[103];
  double lo, hi;

  for (guint i = 0; i <= 100; i++)
    v[i] = 100 - i;
  v[101] = NAN;
  v[102] = INFINITY;
  /* 101 finite values 0..100: sorted[ceil(100*0.05)] = 5, sorted[floor(100*0.95)] = 95. */
  g_assert_true (dw_quantile_bounds (v, 103, 0.05, 0.95, &lo, &hi));
  g_assert_cmpfloat (lo, ==, 5);
  g_assert_cmpfloat (hi, ==, 95);

  for (guint t = 0; t < 50; t++)
    {
      gsize n = g_rand_int_range (rand, 3, 3000);
      g_autofree double *r = random_values (rand, n, FALSE);
      g_autofree double *s = g_memdup2 (r, n * sizeof (double));

      if (t % 2)
        for (gsize i = 0; i < n; i++)
          r[i] = s[i] = floor (r[i] / 100); /* many duplicates */
      qsort (s, n, sizeof (double), cmp_double);
      g_assert_true (dw_quantile_bounds (r, n, 0.05, 0.95, &lo, &hi));
      g_assert_cmpfloat (lo, ==, s[(gsize)ceil ((n - 1) * 0.05)]);
      g_assert_cmpfloat (hi, ==, s[(gsize)floor ((n - 1) * 0.95)]);
    }
  v[0] = NAN;
  g_assert_false (dw_quantile_bounds (v, 1, 0.05, 0.95, &lo, &hi));
}

static void
test_plot_series_restart (void)
{
  g_autoptr (DwPlotSeries) s = dw_plot_series_new (0.0);
  gint64 steps[10], steps2[3] = { 6, 7, 8 };
  double wall[10], vals[10], vals2[3] = { -1, -2, -3 };
  gsize n_restarts;
  const gint64 *restarts;
  DwRange r;

  for (guint i = 0; i < 10; i++)
    {
      steps[i] = i + 1;
      wall[i] = 1000 + 10 * i;
      vals[i] = i;
    }
  dw_plot_series_append (s, steps, wall, vals, 10);
  dw_plot_series_append (s, steps2, NULL, vals2, 3);
  /* Steps 1..5 kept, 6..8 replaced by the newest write, 9..10 dropped. */
  g_assert_cmpuint (dw_plot_series_get_length (s), ==, 8);
  g_assert_cmpint (dw_plot_series_get_steps (s)[7], ==, 8);
  g_assert_cmpfloat (dw_pyramid_get_values (dw_plot_series_get_raw (s))[5], ==, -1);
  restarts = dw_plot_series_get_restarts (s, &n_restarts);
  g_assert_cmpuint (n_restarts, ==, 1);
  g_assert_cmpint (restarts[0], ==, 6);
  dw_pyramid_range (dw_plot_series_get_raw (s), 0, 8, &r);
  g_assert_cmpfloat (r.min, ==, -3);
  g_assert_cmpfloat (r.max, ==, 4);
  /* Unknown wall times carry the last known one; relative time starts at 0. */
  g_assert_cmpfloat (dw_plot_series_get_x (s, DW_X_WALL)[7], ==, 1040);
  g_assert_cmpfloat (dw_plot_series_get_x (s, DW_X_RELATIVE)[4], ==, 40);
  g_assert_cmpint (dw_plot_series_nearest (s, DW_X_STEP, 3.4), ==, 2);
  g_assert_cmpint (dw_plot_series_nearest (s, DW_X_STEP, 100), ==, 7);
}

static void
test_plot_series_smoothing (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  gsize n = 5000;
  g_autofree double *v = random_values (rand, n, TRUE);
  g_autofree gint64 *steps = g_new (gint64, n);
  g_autofree double *want = g_new (double, n);
  g_autoptr (DwPlotSeries) live = dw_plot_series_new (0.6);
  g_autoptr (DwPlotSeries) once = dw_plot_series_new (0.0);
  const double *got;

  for (gsize i = 0; i < n; i++)
    steps[i] = 2 * i;
  for (gsize done = 0; done < n; done += 250)
    dw_plot_series_append (live, steps + done, NULL, v + done, 250);
  dw_plot_series_append (once, steps, NULL, v, n);
  dw_plot_series_set_smoothing (once, 0.6);
  dw_ema_smooth (v, n, 0.6, want);
  got = dw_pyramid_get_values (dw_plot_series_get_smoothed (live));
  for (gsize i = 0; i < n; i++)
    if (!isnan (want[i]))
      g_assert_cmpfloat (got[i], ==, want[i]);
  got = dw_pyramid_get_values (dw_plot_series_get_smoothed (once));
  for (gsize i = 0; i < n; i++)
    if (!isnan (want[i]))
      g_assert_cmpfloat (got[i], ==, want[i]);
  dw_plot_series_set_smoothing (once, 0.0);
  g_assert_true (dw_plot_series_get_smoothed (once) == dw_plot_series_get_raw (once));
}

/* CSV fields: RFC 4180 quoting only where needed; numbers: shortest round-trip, C locale. */
static void
test_csv (void)
{
  static const struct
  {
    const char *in, *want;
  } fields[] = {
    { "", "" },
    { "run a", "run a" },
    { "a,b", "\"a,b\"" },
    { "say \"hi\"", "\"say \"\"hi\"\"\"" },
    { "\"", "\"\"\"\"" },
    { "two\nlines", "\"two\nlines\"" },
    { "cr\rhere", "\"cr\rhere\"" },
    { "ünïcode;tab\t", "ünïcode;tab\t" },
  };
  static const struct
  {
    double in;
    const char *want;
  } numbers[] = {
    { 0.0, "0" },
    { 1.0, "1" },
    { -1.5, "-1.5" },
    { 0.355, "0.355" },
    { 0.1 + 0.2, "0.30000000000000004" },
    { 1e-300, "1e-300" },
    { 1700000000.0, "1700000000" },
    { INFINITY, "inf" },
    { -INFINITY, "-inf" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      g_autoptr (GString) out = g_string_new ("x,");

      dw_csv_field (out, fields[i].in);
      g_assert_cmpstr (out->str + 2, ==, fields[i].want);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (numbers); i++)
    {
      g_autoptr (GString) out = g_string_new (NULL);

      dw_csv_number (out, numbers[i].in);
      g_assert_cmpstr (out->str, ==, numbers[i].want);
      g_assert_true (g_ascii_strtod (out->str, NULL) == numbers[i].in);
    }
  {
    g_autoptr (GString) out = g_string_new (NULL);

    dw_csv_number (out, NAN);
    dw_csv_number (out, -NAN);
    g_assert_cmpstr (out->str, ==, "nannan");
  }
  /* every double reads back exactly */
  {
    g_autoptr (GRand) rand = g_rand_new_with_seed (7);

    for (guint i = 0; i < 10000; i++)
      {
        union
        {
          guint64 u;
          double d;
        } x;
        g_autoptr (GString) out = g_string_new (NULL);

        x.u = ((guint64)g_rand_int (rand) << 32) | g_rand_int (rand);
        if (!isfinite (x.d))
          continue;
        dw_csv_number (out, x.d);
        g_assert_true (g_ascii_strtod (out->str, NULL) == x.d);
        g_assert_null (strchr (out->str, ','));
      }
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/Dw/Series/pyramid-range", test_pyramid_range);
  g_test_add_func ("/Dw/Series/pyramid-truncate", test_pyramid_truncate);
  g_test_add_func ("/Dw/Series/columns-spike", test_columns_spike);
  g_test_add_func ("/Dw/Series/ema-values", test_ema_values);
  g_test_add_func ("/Dw/Series/ema-incremental", test_ema_incremental);
  g_test_add_func ("/Dw/Series/quantile-bounds", test_quantile_bounds);
  g_test_add_func ("/Dw/Series/plot-series-restart", test_plot_series_restart);
  g_test_add_func ("/Dw/Series/plot-series-smoothing", test_plot_series_smoothing);
  g_test_add_func ("/Dw/Series/csv", test_csv);
  return g_test_run ();
}
