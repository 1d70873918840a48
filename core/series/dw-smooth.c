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
  double weight = state->weight;
  gboolean broke = FALSE;
  gsize start_n = state->n;

  for (gsize index = 0; index < n; index++)
    {
      double y_value = values[index];
      double sum;

      if (state->n == 0)
        state->first = y_value;
      /* NaN != NaN, as with TensorBoard's `d.y === data[0].y`. */
      if (state->constant && !(y_value == state->first))
        {
          state->constant = FALSE;
          if (start_n == 0 && index > 0)
            {
              /* The constant prefix was written by this call: rewrite it smoothed. */
              DwEmaState replay;
              dw_ema_init (&replay, weight);
              replay.constant = FALSE;
              dw_ema_append (&replay, values, index, out);
            }
          else
            broke = state->n > 0;
        }
      state->n++;
      if (!isfinite (y_value))
        {
          out[index] = y_value;
          continue;
        }
      state->last = weight * state->last + (1 - weight) * y_value;
      state->k++;
      if (weight == 1.0)
        sum = state->last;
      else
        {
          /* Once w^k underflows to 0 the debias divisor is exactly 1. */
          if (state->wk != 0.0)
            state->wk *= weight;
          sum = state->last / (1 - state->wk);
        }
      out[index] = state->constant ? y_value : sum;
    }
  return !broke;
}

void
dw_ema_smooth (const double *values, gsize n, double weight, double *out)
{
  DwEmaState state;
  gboolean constant = TRUE;

  for (gsize index = 1; index < n && constant; index++)
    constant = values[index] == values[0];
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
  gsize low = 0, high = n - 1;

  while (low < high)
    {
      double pivot = a[low + (high - low) / 2];
      gsize index = low, inner = high;

      while (index <= inner)
        {
          while (a[index] < pivot)
            index++;
          while (a[inner] > pivot)
            inner--;
          if (index <= inner)
            {
              double swap = a[index];
              a[index] = a[inner];
              a[inner] = swap;
              index++;
              if (inner == 0)
                break;
              inner--;
            }
        }
      if (k <= inner)
        high = inner;
      else if (k >= index)
        low = index;
      else
        break;
    }
  return a[k];
}

gboolean
dw_quantile_bounds (const double *values, gsize n, double lo_q, double hi_q, double *out_lo,
                    double *out_hi)
{
  g_autofree double *finite = g_new (double, MAX (n, 1));
  gsize finite_count = 0;

  for (gsize index = 0; index < n; index++)
    if (isfinite (values[index]))
      finite[finite_count++] = values[index];
  if (finite_count == 0)
    return FALSE;
  if (finite_count <= 2)
    {
      *out_lo = MIN (finite[0], finite[finite_count - 1]);
      *out_hi = MAX (finite[0], finite[finite_count - 1]);
      return TRUE;
    }
  *out_lo = dw_select_kth (finite, finite_count, (gsize)ceil ((finite_count - 1) * lo_q));
  *out_hi = dw_select_kth (finite, finite_count, (gsize)floor ((finite_count - 1) * hi_q));
  return TRUE;
}
