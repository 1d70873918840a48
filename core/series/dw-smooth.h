/* dw-smooth.h — TensorBoard's debiased exponential moving average and outlier-ignoring bounds
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Running state, so a live series is smoothed by appending (no re-smoothing of the past). */
typedef struct
{
  double weight;
  double last;
  double wk;         /* weight^k, updated by multiplication (pow per point costs 6x more) */
  guint64 k;         /* finite points so far */
  gboolean constant; /* every value so far equals the first (TensorBoard then draws raw) */
  double first;
  gsize n; /* values seen */
} DwEmaState;

void dw_ema_init (DwEmaState *state, double weight);
/* Smooths @n further values into @out. Returns FALSE when the series stopped being constant
 * with these values: the caller must then re-smooth from the start (TensorBoard draws a
 * constant series unsmoothed, issue tensorboard#786). */
gboolean dw_ema_append (DwEmaState *state, const double *values, gsize n, double *out);
/* The whole series at once (exact TensorBoard classicSmoothing). */
void dw_ema_smooth (const double *values, gsize n, double weight, double *out);

/* The k-th smallest of @a[0..@n), k < n > 0, by Hoare-style quickselect (O(n)): reorders @a so
 * that a[0..k) ≤ a[k] ≤ a(k..n) and returns a[k]. */
double dw_select_kth (double *a, gsize n, gsize k);

/* TensorBoard's "ignore outliers": over the finite values of @values[lo..hi), sorted, returns
 * sorted[ceil((n-1)*0.05)] and sorted[floor((n-1)*0.95)] when n > 2, else min and max.
 * Selection, not a sort (O(n)). Returns FALSE when there is no finite value. */
gboolean dw_quantile_bounds (const double *values, gsize n, double lo_q, double hi_q,
                             double *out_lo, double *out_hi);

G_END_DECLS
