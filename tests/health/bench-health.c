/* bench-health.c — health rules over long series and the cost of a live poll step
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Prints: ns per point for a threshold-only metric (ESS), a drift metric (K3 KL: 10-point rolling
 * median + 20-point Theil–Sen slope per point) and all twelve mismatch metrics of a 100 000-step
 * run; and the cost of feeding one new point to a monitor that has seen the whole run.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>

#include "dw-health.h"

static double
normal (GRand *r)
{
  double u1 = g_rand_double_range (r, 1e-12, 1.0), u2 = g_rand_double (r);
  return sqrt (-2 * log (u1)) * cos (2 * G_PI * u2);
}

static double
bench_series (const char *canonical, const gint64 *steps, const double *v, gsize n, int reps)
{
  double best = INFINITY;
  for (int r = 0; r < reps; r++)
    {
      gint64 t0 = g_get_monotonic_time ();
      g_ptr_array_unref (dw_health_check_series (canonical, steps, v, n));
      double us = (double)(g_get_monotonic_time () - t0);
      best = MIN (best, us);
    }
  return best * 1e3 / (double)n;
}

int
main (void)
{
  const gsize n = 100000;
  g_autofree gint64 *steps = g_new (gint64, n);
  g_autofree double *k3 = g_new (double, n), *ess = g_new (double, n);
  g_autoptr (GRand) r = g_rand_new_with_seed (1);
  for (gsize i = 0; i < n; i++)
    {
      steps[i] = (gint64)i;
      k3[i] = 1e-3 * exp (0.5 * normal (r));
      ess[i] = CLAMP (0.85 + 0.04 * normal (r), 0, 1);
    }
  printf ("health rules, %" G_GSIZE_FORMAT " points per series, best of 5\n", n);
  printf ("  threshold metric (ess):   %8.1f ns/point\n", bench_series ("ess", steps, ess, n, 5));
  printf ("  drift metric (k3_kl):     %8.1f ns/point\n", bench_series ("k3_kl", steps, k3, n, 5));

  const char *all[] = { "is_mean",
                        "is_std",
                        "ess",
                        "veto_fraction",
                        "rs_masked_fraction",
                        "rs_seq_masked_fraction",
                        "catastrophic_fraction",
                        "kl",
                        "k3_kl",
                        "ppl_ratio",
                        "log_ppl_abs_diff",
                        "chi2_token" };
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (DwHealthMonitor) m = dw_health_monitor_new ();
  for (gsize k = 0; k < G_N_ELEMENTS (all); k++)
    {
      g_ptr_array_unref (dw_health_monitor_feed (m, all[k], all[k], steps,
                                                 g_str_has_prefix (all[k], "k3") ? k3 : ess, n));
    }
  double ms = (double)(g_get_monotonic_time () - t0) / 1e3;
  printf ("  12 mismatch metrics:      %8.1f ms for the whole run\n", ms);

  /* live: one new step of every metric */
  const int live = 1000;
  t0 = g_get_monotonic_time ();
  for (int s = 0; s < live; s++)
    for (gsize k = 0; k < G_N_ELEMENTS (all); k++)
      {
        gint64 st = (gint64)(n + s);
        double v = 1e-3;
        g_ptr_array_unref (dw_health_monitor_feed (m, all[k], all[k], &st, &v, 1));
      }
  double us = (double)(g_get_monotonic_time () - t0) / live;
  printf ("  live step (12 metrics):   %8.1f µs per new step\n", us);
  return 0;
}
