/* dw-smooth.c — debiased EMA and quantile bounds
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-series"

#include "config.h"

#include "dw-smooth.h"

#include <math.h>
#include <string.h>

void
dw_ema_init (DwEmaState *state, double weight)
{
  memset (state, 0, sizeof *state);
  if (isnan (weight))
    weight = 0;
  state->weight = CLAMP (weight, 0.0, 1.0);
  state->wk = 1.0;
  state->constant = TRUE;
}

gboolean
dw_ema_append (DwEmaState *state, const double *values, gsize n, double *out)
{
  double w = state->weight;
  gboolean broke = FALSE;
  gsize start_n = state->n;

  for (gsize i = 0; i < n; i++)
    {
      double y = values[i];
      double s;

      if (state->n == 0)
        state->first = y;
      /* NaN != NaN, as with TensorBoard's `d.y === data[0].y`. */
      if (state->constant && !(y == state->first))
        {
          state->constant = FALSE;
          if (start_n == 0 && i > 0)
            {
              /* The constant prefix was written by this call: rewrite it smoothed. */
              DwEmaState replay;
              dw_ema_init (&replay, w);
              replay.constant = FALSE;
              dw_ema_append (&replay, values, i, out);
            }
          else
            broke = state->n > 0;
        }
      state->n++;
      if (!isfinite (y))
        {
          out[i] = y;
          continue;
        }
      state->last = w * state->last + (1 - w) * y;
      state->k++;
      if (w == 1.0)
        s = state->last;
      else
        {
          /* Once w^k underflows to 0 the debias divisor is exactly 1. */
          if (state->wk != 0.0)
            state->wk *= w;
          s = state->last / (1 - state->wk);
        }
      out[i] = state->constant ? y : s;
    }
  return !broke;
}

void
dw_ema_smooth (const double *values, gsize n, double weight, double *out)
{
  DwEmaState state;
  gboolean constant = TRUE;

  for (gsize i = 1; i < n && constant; i++)
    constant = values[i] == values[0];
  if (constant)
    {
      memcpy (out, values, n * sizeof (double));
      return;
    }
  dw_ema_init (&state, weight);
  state.constant = FALSE;
  dw_ema_append (&state, values, n, out);
}

double
dw_select_kth (double *a, gsize n, gsize k)
{
  gsize lo = 0, hi = n - 1;

  while (lo < hi)
    {
      double pivot = a[lo + (hi - lo) / 2];
      gsize i = lo, j = hi;

      while (i <= j)
        {
          while (a[i] < pivot)
            i++;
          while (a[j] > pivot)
            j--;
          if (i <= j)
            {
              double t = a[i];
              a[i] = a[j];
              a[j] = t;
              i++;
              if (j == 0)
                break;
              j--;
            }
        }
      if (k <= j)
        hi = j;
      else if (k >= i)
        lo = i;
      else
        break;
    }
  return a[k];
}

gboolean
dw_quantile_bounds (const double *values, gsize n, double lo_q, double hi_q, double *out_lo,
                    double *out_hi)
{
  g_autofree double *a = g_new (double, MAX (n, 1));
  gsize m = 0;

  for (gsize i = 0; i < n; i++)
    if (isfinite (values[i]))
      a[m++] = values[i];
  if (m == 0)
    return FALSE;
  if (m <= 2)
    {
      *out_lo = MIN (a[0], a[m - 1]);
      *out_hi = MAX (a[0], a[m - 1]);
      return TRUE;
    }
  *out_lo = dw_select_kth (a, m, (gsize)ceil ((m - 1) * lo_q));
  *out_hi = dw_select_kth (a, m, (gsize)floor ((m - 1) * hi_q));
  return TRUE;
}
