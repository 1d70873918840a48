/* test-health.c — health rules on constructed series: exact firing steps, no false positives
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "dw-health.h"

static GPtrArray *
check (const char *canonical, const double *v, gsize n)
{
  g_autofree gint64 *steps = g_new (gint64, n);
  for (gsize i = 0; i < n; i++)
    steps[i] = (gint64)i;
  return dw_health_check_series (canonical, steps, v, n);
}

/* The event of @rule_id at @severity (one per rule, severity and series). */
static const DwHealthEvent *
find_event_at (GPtrArray *events, const char *rule_id, DwHealthSeverity severity)
{
  const DwHealthEvent *found = NULL;
  for (guint i = 0; i < events->len; i++)
    {
      const DwHealthEvent *e = events->pdata[i];
      if (strcmp (e->rule_id, rule_id) == 0 && e->severity == severity)
        {
          g_assert_null (found);
          found = e;
        }
    }
  return found;
}

/* The rule's first-level event (warning, or critical for first-nan). */
static const DwHealthEvent *
find_event (GPtrArray *events, const char *rule_id)
{
  const DwHealthRule *rule = dw_health_rule_lookup (rule_id);
  g_assert_nonnull (rule);
  return find_event_at (events, rule_id, rule->severity);
}

/* ------------------------------------------------------------------------------------------ */
/* documented thresholds: the bound itself does not fire, the first value past it does */

typedef struct
{
  const char *canonical;
  const char *rule_id;
  double ok;        /* exactly on the bound: must not fire */
  double bad;       /* just past the bound */
  double threshold; /* expected threshold reported */
} ThresholdCase;

static const ThresholdCase threshold_cases[] = {
  { "is_raw_mean", "is-mean-range", 2.0, 2.0001, 2.0 },
  { "is_raw_mean", "is-mean-range", 0.5, 0.4999, 0.5 },
  { "is_mean", "is-weight-mean-low", 0.5, 0.4999, 0.5 },
  { "is_raw_fraction_high", "is-ratio-high", 0.05, 0.0501, 0.05 },
  { "is_raw_fraction_low", "is-ratio-low", 0.05, 0.0501, 0.05 },
  { "is_oob_fraction", "is-oob-high", 0.2, 0.2001, 0.2 },
  { "probs_diff_mean", "probs-diff-high", 0.01, 0.0101, 0.01 },
  { "logprob_abs_diff", "logprob-diff-high", 0.2, 0.21, 0.2 },
  { "ess", "ess-low", 0.3, 0.2999, 0.3 },
  { "veto_fraction", "veto-fraction-high", 0.1, 0.1001, 0.1 },
  { "rs_seq_masked_fraction", "rejection-fraction-high", 0.1, 0.125, 0.1 },
  { "is_std", "is-std-high", 1.0, 1.01, 1.0 },
  { "kl", "kl-high", 0.1, 0.1001, 0.1 },
  { "kl", "kl-high", -0.1, -0.1001, 0.1 },
  { "chi2_token", "chi2-token-high", 1.0, 1.5, 1.0 },
  { "catastrophic_fraction", "catastrophic-fraction-high", 0.01, 0.0101, 0.01 },
  { "rs_masked_fraction", "masked-fraction-high", 0.3, 0.31, 0.3 },
};

static void
test_thresholds (void)
{
  for (gsize c = 0; c < G_N_ELEMENTS (threshold_cases); c++)
    {
      const ThresholdCase *tc = &threshold_cases[c];
      /* steps 0..29 on the bound, bad at 12 and 20, back on the bound in between */
      double v[30];
      for (int i = 0; i < 30; i++)
        v[i] = tc->ok;
      v[12] = v[20] = tc->bad;
      g_autoptr (GPtrArray) ev = check (tc->canonical, v, 30);
      g_assert_cmpuint (ev->len, ==, 1);
      const DwHealthEvent *e = find_event (ev, tc->rule_id);
      g_assert_nonnull (e);
      g_assert_cmpstr (e->metric, ==, tc->canonical);
      g_assert_cmpint (e->severity, ==, DW_HEALTH_WARNING);
      g_assert_cmpint (e->first_step, ==, 12);
      g_assert_cmpint (e->last_step, ==, 20);
      g_assert_cmpint (e->n_steps, ==, 2);
      g_assert_cmpfloat (e->value, ==, tc->bad);
      g_assert_cmpfloat (e->threshold, ==, tc->threshold);
      g_assert_true (e->title[0] && e->explanation[0] && e->advice[0]);

      /* only on the bound: nothing */
      g_autoptr (GPtrArray) none = check (tc->canonical, v, 12);
      g_assert_cmpuint (none->len, ==, 0);
    }
}

static void
test_first_nan (void)
{
  double v[20];
  for (int i = 0; i < 20; i++)
    v[i] = 1.0;
  v[7] = NAN;
  v[9] = INFINITY;
  v[15] = -INFINITY;
  g_autoptr (GPtrArray) ev = check ("is_mean", v, 20);
  g_assert_cmpuint (ev->len, ==, 1);
  const DwHealthEvent *e = find_event (ev, "first-nan");
  g_assert_nonnull (e);
  g_assert_cmpint (e->severity, ==, DW_HEALTH_CRITICAL);
  g_assert_cmpint (e->first_step, ==, 7);
  g_assert_cmpint (e->last_step, ==, 15);
  g_assert_cmpint (e->n_steps, ==, 3);
  g_assert_true (isnan (e->value));
  g_assert_true (isnan (e->threshold));

  /* a tag that is no canonical metric has no rules at all */
  g_autoptr (DwHealthMonitor) m = dw_health_monitor_new ();
  gint64 steps[20];
  for (int i = 0; i < 20; i++)
    steps[i] = i;
  g_autoptr (GPtrArray) fired = dw_health_monitor_feed (m, NULL, "custom/thing", steps, v, 20);
  g_assert_cmpuint (fired->len, ==, 0);
  /* a logged verl key is mapped to its canonical id */
  g_autoptr (GPtrArray) fired2
    = dw_health_monitor_feed (m, NULL, "rollout_corr/rollout_is_mean", steps, v, 20);
  g_assert_cmpuint (fired2->len, ==, 1);
  g_assert_cmpstr (((DwHealthEvent *)fired2->pdata[0])->metric, ==, "is_mean");
  g_assert_cmpstr (((DwHealthEvent *)fired2->pdata[0])->tag, ==, "rollout_corr/rollout_is_mean");
  /* … under the monitor's generation: verl 0.7.1 logs the raw ratio mean under that key */
  g_autoptr (DwHealthMonitor) old = dw_health_monitor_new ();
  dw_health_monitor_set_generation (old, "verl-0.7.1");
  g_assert_cmpstr (dw_health_monitor_get_generation (old), ==, "verl-0.7.1");
  g_autoptr (GPtrArray) fired3
    = dw_health_monitor_feed (old, NULL, "rollout_corr/rollout_is_mean", steps, v, 20);
  g_assert_cmpstr (((DwHealthEvent *)fired3->pdata[0])->metric, ==, "is_raw_mean");
  g_autoptr (GPtrArray) evaluated = dw_health_monitor_get_evaluated (old);
  g_assert_cmpuint (evaluated->len, ==, 1);
  g_assert_cmpstr (evaluated->pdata[0], ==, "is_raw_mean");
}

/* Collapse-level bounds: a second, critical event of the same rule, inclusive of the bound; the
 * warning event keeps its own steps. */
typedef struct
{
  const char *canonical;
  const char *rule_id;
  double ok, warn, crit; /* crit is exactly on the critical bound */
} CriticalCase;

static const CriticalCase critical_cases[] = {
  { "rs_seq_masked_fraction", "rejection-fraction-high", 0.0, 0.2, 0.5 },
  { "veto_fraction", "veto-fraction-high", 0.0, 0.2, 0.5 },
  { "rs_masked_fraction", "masked-fraction-high", 0.0, 0.4, 0.5 },
  { "kl", "kl-high", 0.0, 0.2, 1.0 },
  { "kl", "kl-high", 0.0, -0.2, -1.0 },
  { "is_raw_mean", "is-mean-range", 1.0, 3.0, 20.0 },
  { "is_raw_mean", "is-mean-range", 1.0, 0.4, 0.05 },
  { "is_mean", "is-weight-mean-low", 1.0, 0.4, 0.05 },
  { "ess", "ess-low", 0.9, 0.2, 0.03 },
  { "is_std", "is-std-high", 0.1, 2.0, 10.0 },
  { "chi2_token", "chi2-token-high", 0.1, 2.0, 10.0 },
  { "catastrophic_fraction", "catastrophic-fraction-high", 0.0, 0.05, 0.1 },
  { "is_raw_fraction_high", "is-ratio-high", 0.0, 0.1, 0.5 },
  { "is_oob_fraction", "is-oob-high", 0.0, 0.3, 0.5 },
  { "probs_diff_mean", "probs-diff-high", 0.001, 0.02, 0.1 },
  { "logprob_abs_diff", "logprob-diff-high", 0.01, 0.3, 2.0 },
};

static void
test_critical (void)
{
  for (gsize c = 0; c < G_N_ELEMENTS (critical_cases); c++)
    {
      const CriticalCase *cc = &critical_cases[c];
      const DwHealthRule *rule = dw_health_rule_lookup (cc->rule_id);
      double v[20];
      for (int i = 0; i < 20; i++)
        v[i] = cc->ok;
      v[5] = cc->warn;
      v[10] = v[12] = cc->crit;
      g_autoptr (GPtrArray) ev = check (cc->canonical, v, 20);
      g_assert_cmpuint (ev->len, ==, 2);
      const DwHealthEvent *w = find_event_at (ev, cc->rule_id, DW_HEALTH_WARNING);
      const DwHealthEvent *k = find_event_at (ev, cc->rule_id, DW_HEALTH_CRITICAL);
      g_assert_nonnull (w);
      g_assert_nonnull (k);
      g_assert_cmpint (w->first_step, ==, 5);
      g_assert_cmpint (w->last_step, ==, 12);
      g_assert_cmpint (w->n_steps, ==, 3);
      g_assert_cmpint (k->first_step, ==, 10);
      g_assert_cmpint (k->last_step, ==, 12);
      g_assert_cmpint (k->n_steps, ==, 2);
      g_assert_cmpfloat (k->value, ==, cc->crit);
      g_assert_true (g_str_has_suffix (k->title, " — collapse level"));
      g_assert_true (g_str_has_prefix (k->title, w->title));
      g_assert_cmpfloat (k->threshold, ==,
                         isfinite (rule->crit_hi) && cc->crit > cc->ok
                           ? rule->crit_hi
                           : (isfinite (rule->crit_lo) ? rule->crit_lo : rule->crit_hi));
      /* sorted: the warning (step 5) before the critical event (step 10) */
      g_assert_true (ev->pdata[0] == w);
    }
}

/* The row a health panel shows: the value, the bound crossed and how far past it. */
static void
test_crossing (void)
{
  double k3[160];
  for (int i = 0; i < 160; i++)
    k3[i] = i < 100 ? 1e-3 : 1e-2 + 1e-3 * (i - 100);
  const struct
  {
    const char *canonical;
    double bad;
    const char *want;
  } cases[] = {
    { "kl", 0.43, "|0.43| > 0.1 (4.3×)" },
    { "kl", -1.08, "|-1.08| > 1 (1.08×)" }, /* critical first: its own bound */
    { "ess", 0.2, "0.2 < 0.3 (0.667×)" },
    { "rs_seq_masked_fraction", 0.75, "0.75 > 0.5 (1.5×)" },
    { "rs_seq_masked_fraction", 0.25, "0.25 > 0.1 (2.5×)" },
    { "chi2_token", 9.5, "9.5 > 1 (9.5×)" },
  };
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      double v[3] = { cases[c].canonical[0] == 'e' ? 0.9 : 0.0, cases[c].bad, 0.0 };
      g_autoptr (GPtrArray) ev = check (cases[c].canonical, v, 2);
      g_autofree char *text = dw_health_event_format_crossing (ev->pdata[0]);
      g_assert_cmpstr (text, ==, cases[c].want);
    }
  /* a drift event: the rolling median against the drift bound; its critical event at 10× */
  g_autoptr (GPtrArray) drift = check ("k3_kl", k3, 160);
  g_autofree char *w
    = dw_health_event_format_crossing (find_event_at (drift, "k3-kl-drift", DW_HEALTH_WARNING));
  g_autofree char *k
    = dw_health_event_format_crossing (find_event_at (drift, "k3-kl-drift", DW_HEALTH_CRITICAL));
  g_assert_cmpstr (w, ==, "0.0125 > 0.003 (4.17×)");
  g_assert_cmpstr (k, ==, "0.0305 > 0.03 (1.02×)");
  /* no threshold: the value alone */
  double nan_v[2] = { 1.0, NAN };
  g_autoptr (GPtrArray) nan_ev = check ("k3_kl", nan_v, 2);
  g_autofree char *n = dw_health_event_format_crossing (nan_ev->pdata[0]);
  g_assert_cmpstr (n, ==, "nan");
}

/* ------------------------------------------------------------------------------------------ */
/* drift: a step change followed by growth */

static void
test_drift_exact (void)
{
  double v[160];
  for (int i = 0; i < 160; i++)
    v[i] = i < 100 ? 1e-3 : 1e-2 + 1e-3 * (i - 100);
  g_autoptr (GPtrArray) ev = check ("k3_kl", v, 160);
  g_assert_cmpuint (ev->len, ==, 2);
  const DwHealthEvent *e = find_event (ev, "k3-kl-drift");
  g_assert_nonnull (e);
  /* Baseline = 1e-3, bound = max(3·1e-3, 1e-3 + 5e-4) = 3e-3.
   * Step 104: the last 10 points are 5 × 1e-3 and 5 new ones, median 5.5e-3 > bound, but of the
   * 190 pairwise slopes over the last 20 points 105 are 0 (old–old) and 85 positive, so the
   * Theil–Sen median is 0: not drifting. Step 105: 91 zero and 99 positive slopes → drifting
   * (1st), 106 (2nd), 107 (3rd) → fires at 107 with the median of steps 98..107:
   * (1.2e-2 + 1.3e-2) / 2. The growth continues, so it keeps firing up to step 159. */
  g_assert_cmpint (e->first_step, ==, 107);
  g_assert_cmpfloat_with_epsilon (e->value, 1.25e-2, 1e-15);
  g_assert_cmpfloat_with_epsilon (e->threshold, 3e-3, 1e-18);
  g_assert_cmpint (e->last_step, ==, 159);
  g_assert_cmpint (e->n_steps, ==, 159 - 107 + 1);
  /* critical once the median passes 10 × 3e-3: median at step s is 1e-2 + 1e-3 (s − 104.5),
   * above 3e-2 from s = 125 (0.0305) */
  e = find_event_at (ev, "k3-kl-drift", DW_HEALTH_CRITICAL);
  g_assert_nonnull (e);
  g_assert_cmpint (e->first_step, ==, 125);
  g_assert_cmpfloat_with_epsilon (e->value, 3.05e-2, 1e-15);
  g_assert_cmpfloat_with_epsilon (e->threshold, 3e-2, 1e-17);
  g_assert_cmpint (e->last_step, ==, 159);

  /* a plateau stops it: Theil–Sen slope 0 once 11 of the last 20 points are equal */
  double p[160];
  for (int i = 0; i < 160; i++)
    p[i] = i < 100 ? 1e-3 : (i < 110 ? 1e-2 + 1e-3 * (i - 100) : 2e-2);
  g_autoptr (GPtrArray) ev2 = check ("k3_kl", p, 160);
  e = find_event (ev2, "k3-kl-drift");
  g_assert_nonnull (e);
  g_assert_cmpint (e->first_step, ==, 107);
  /* at step s ≥ 110 the last 20 points hold s − 109 points equal to 2e-2 and 10 rising ones below
   * it; pairs among the plateau give 0, pairs plateau–ramp and ramp–ramp are positive, old–x
   * positive. Zero slopes: C(s−109, 2); the median (of 190) is 0 once C(k,2) ≥ 96, k = 15 → s =
   * 124 is the first non-drifting step, so the last drifting one is 123. */
  g_assert_cmpint (e->last_step, ==, 123);
  g_assert_null (find_event_at (ev2, "k3-kl-drift", DW_HEALTH_CRITICAL)); /* plateau < 3e-2 */

  /* a single spike, however large, never drifts */
  double s[200];
  for (int i = 0; i < 200; i++)
    s[i] = 1e-3;
  s[120] = 10.0;
  g_autoptr (GPtrArray) ev3 = check ("k3_kl", s, 200);
  g_assert_cmpuint (ev3->len, ==, 0);

  /* the PPL ratio drifts in |ln r|: 1.001 → growing 1.05, 1.06, … below 1 works the same */
  double r[160];
  for (int i = 0; i < 160; i++)
    r[i] = i < 100 ? 1.001 : exp (-(0.05 + 0.01 * (i - 100)));
  g_autoptr (GPtrArray) ev4 = check ("ppl_ratio", r, 160);
  e = find_event (ev4, "ppl-ratio-drift");
  g_assert_nonnull (e);
  g_assert_cmpint (e->first_step, ==, 107);
  g_assert_cmpfloat_with_epsilon (e->value, (0.07 + 0.08) / 2, 1e-12);
  g_assert_cmpfloat_with_epsilon (e->threshold, fabs (log (1.001)) + 0.01, 1e-12);
}

/* ------------------------------------------------------------------------------------------ */
/* noisy series */

static double
normal (GRand *r)
{
  double u1 = g_rand_double_range (r, 1e-12, 1.0), u2 = g_rand_double (r);
  return sqrt (-2 * log (u1)) * cos (2 * G_PI * u2);
}

typedef struct
{
  const char *canonical;
  double (*gen) (GRand *r, int i, gboolean collapse);
} NoisyMetric;

#define COLLAPSE_AT 300

static double
growth (int i, gboolean collapse)
{
  return collapse && i >= COLLAPSE_AT ? exp (0.05 * (i - COLLAPSE_AT)) : 1.0;
}

static double
gen_k3 (GRand *r, int i, gboolean collapse)
{
  double spike = g_rand_double (r) < 0.01 ? 20.0 : 1.0; /* 1% isolated 20× spikes */
  return 1e-3 * exp (0.5 * normal (r)) * spike * growth (i, collapse);
}

static double
gen_ppl_ratio (GRand *r, int i, gboolean collapse)
{
  /* a systematic shift of the log-ratio growing with the collapse, plus 1% noise */
  return exp (0.01 * (growth (i, collapse) - 1) + 0.01 * normal (r));
}

static double
gen_log_ppl (GRand *r, int i, gboolean collapse)
{
  return 0.02 * exp (0.3 * normal (r)) * growth (i, collapse);
}

static double
gen_ess (GRand *r, int i, gboolean collapse)
{
  return CLAMP (0.85 + 0.04 * normal (r), 0.0, 1.0);
}

static double
gen_is_mean (GRand *r, int i, gboolean collapse)
{
  return 1.0 + 0.05 * normal (r);
}

static double
gen_kl (GRand *r, int i, gboolean collapse)
{
  return 0.002 * normal (r);
}

static const NoisyMetric noisy[] = {
  { "k3_kl", gen_k3 }, { "ppl_ratio", gen_ppl_ratio }, { "log_ppl_abs_diff", gen_log_ppl },
  { "ess", gen_ess },  { "is_mean", gen_is_mean },     { "kl", gen_kl },
};

static void
make_series (guint32 seed, const NoisyMetric *m, gboolean collapse, int n, gint64 *steps, double *v)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (seed);
  for (int i = 0; i < n; i++)
    {
      steps[i] = i;
      v[i] = m->gen (r, i, collapse);
    }
}

static void
test_healthy_noisy (void)
{
  const int n = 2000;
  g_autofree gint64 *steps = g_new (gint64, n);
  g_autofree double *v = g_new (double, n);
  for (guint32 seed = 1; seed <= 25; seed++)
    for (gsize k = 0; k < G_N_ELEMENTS (noisy); k++)
      {
        make_series (seed, &noisy[k], FALSE, n, steps, v);
        g_autoptr (GPtrArray) ev = dw_health_check_series (noisy[k].canonical, steps, v, n);
        if (ev->len)
          g_error ("seed %u %s: %s fired at step %" G_GINT64_FORMAT, seed, noisy[k].canonical,
                   ((DwHealthEvent *)ev->pdata[0])->rule_id,
                   ((DwHealthEvent *)ev->pdata[0])->first_step);
      }
}

static void
test_noisy_collapse (void)
{
  const int n = 500;
  gint64 steps[500];
  double v[500];
  const char *drift_rule[] = { "k3-kl-drift", "ppl-ratio-drift", "log-ppl-drift" };
  for (guint32 seed = 1; seed <= 25; seed++)
    for (gsize k = 0; k < 3; k++)
      {
        make_series (seed, &noisy[k], TRUE, n, steps, v);
        g_autoptr (GPtrArray) ev = dw_health_check_series (noisy[k].canonical, steps, v, n);
        const DwHealthEvent *e = find_event (ev, drift_rule[k]);
        g_assert_nonnull (e);
        g_test_message ("seed %u %s fires at %" G_GINT64_FORMAT, seed, noisy[k].canonical,
                        e->first_step);
        /* growth e^{0.05 t}: ×3 after 22 steps; the median window and confirmation add ≤ 10 */
        g_assert_cmpint (e->first_step, >=, COLLAPSE_AT);
        g_assert_cmpint (e->first_step, <=, COLLAPSE_AT + 40);
        /* and it is the first warning of the series (before any hard threshold) */
        g_assert_true (ev->pdata[0] == e);
      }
}

/* feeding in chunks gives the same events as one pass; repeated points are ignored */
static void
test_incremental (void)
{
  const int n = 500;
  gint64 steps[500];
  double v[500];
  make_series (7, &noisy[0], TRUE, n, steps, v);
  v[450] = INFINITY;
  g_autoptr (GPtrArray) once = dw_health_check_series ("k3_kl", steps, v, n);
  g_assert_cmpuint (once->len, ==, 3); /* drift warning, drift critical, first-nan */

  g_autoptr (DwHealthMonitor) m = dw_health_monitor_new ();
  g_autoptr (GRand) r = g_rand_new_with_seed (3);
  g_autoptr (GPtrArray) fired_all
    = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_health_event_free);
  int i = 0;
  while (i < n)
    {
      int chunk = g_rand_int_range (r, 1, 38);
      chunk = MIN (chunk, n - i);
      /* overlap: re-send up to 5 already-fed points (a restart re-logging steps) */
      int back = MIN (i, g_rand_int_range (r, 0, 6));
      g_autoptr (GPtrArray) fired = dw_health_monitor_feed (
        m, "k3_kl", "rollout_corr/k3_kl", steps + i - back, v + i - back, chunk + back);
      for (guint k = 0; k < fired->len; k++)
        {
          DwHealthEvent *e = fired->pdata[k];
          g_assert_cmpint (e->first_step, >=, i);
          g_assert_cmpint (e->first_step, <, i + chunk);
          g_ptr_array_add (fired_all, dw_health_event_copy (e));
        }
      i += chunk;
      g_assert_cmpint (dw_health_monitor_last_step (m, "rollout_corr/k3_kl"), ==, i - 1);
    }
  g_assert_cmpint (dw_health_monitor_last_step (m, "other"), ==, G_MININT64);
  g_autoptr (GPtrArray) all = dw_health_monitor_get_events (m);
  g_assert_cmpuint (all->len, ==, once->len);
  g_assert_cmpuint (fired_all->len, ==, once->len);
  for (guint k = 0; k < all->len; k++)
    {
      const DwHealthEvent *a = all->pdata[k], *b = once->pdata[k], *f = fired_all->pdata[k];
      g_assert_cmpstr (a->rule_id, ==, b->rule_id);
      g_assert_cmpint (a->severity, ==, b->severity);
      g_assert_cmpstr (f->rule_id, ==, b->rule_id);
      g_assert_cmpint (a->first_step, ==, b->first_step);
      g_assert_cmpint (f->first_step, ==, b->first_step);
      g_assert_cmpint (a->last_step, ==, b->last_step);
      g_assert_cmpint (a->n_steps, ==, b->n_steps);
      g_assert_cmpfloat (a->value, ==, b->value);
    }
  /* sorted by first step */
  g_assert_cmpstr (((DwHealthEvent *)all->pdata[0])->rule_id, ==, "k3-kl-drift");
  g_assert_cmpint (((DwHealthEvent *)all->pdata[0])->severity, ==, DW_HEALTH_WARNING);
  g_assert_cmpstr (((DwHealthEvent *)all->pdata[1])->rule_id, ==, "k3-kl-drift");
  g_assert_cmpint (((DwHealthEvent *)all->pdata[1])->severity, ==, DW_HEALTH_CRITICAL);
  g_assert_cmpstr (((DwHealthEvent *)all->pdata[2])->rule_id, ==, "first-nan");
  g_assert_cmpint (((DwHealthEvent *)all->pdata[2])->first_step, ==, 450);
}

/* same step: critical before warning */
static void
test_sort (void)
{
  g_autoptr (DwHealthMonitor) m = dw_health_monitor_new ();
  gint64 s[3] = { 5, 6, 7 };
  double ess[3] = { 0.9, 0.1, 0.9 }, mean[3] = { 1.0, NAN, 1.0 };
  g_autoptr (GPtrArray) a = dw_health_monitor_feed (m, "ess", "ess", s, ess, 3);
  g_autoptr (GPtrArray) b = dw_health_monitor_feed (m, "is_mean", "is_mean", s, mean, 3);
  g_assert_cmpuint (a->len, ==, 1);
  g_assert_cmpuint (b->len, ==, 1);
  g_autoptr (GPtrArray) all = dw_health_monitor_get_events (m);
  g_assert_cmpuint (all->len, ==, 2);
  g_assert_cmpstr (((DwHealthEvent *)all->pdata[0])->rule_id, ==, "first-nan");
  g_assert_cmpstr (((DwHealthEvent *)all->pdata[1])->rule_id, ==, "ess-low");
}

static void
test_report_json (void)
{
  double v[3] = { 0.9, 0.2, 0.25 };
  g_autoptr (GPtrArray) ev = check ("ess", v, 3);
  g_autoptr (GString) out = g_string_new (NULL);
  g_autoptr (GPtrArray) evaluated = g_ptr_array_new ();
  g_ptr_array_add (evaluated, (gpointer) "ess");
  g_autoptr (GPtrArray) columns = g_ptr_array_new ();
  DwHealthReport report
    = { ev, evaluated, 1, 1, 0, 12, 3, (char *)"verl-0.9.0", TRUE, "keys", columns };
  g_assert_cmpint (dw_health_report_verdict (&report), ==, DW_HEALTH_VERDICT_UNHEALTHY);
  dw_health_append_report_json (out, &report);
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (p, out->str, -1, &error));
  g_assert_no_error (error);
  JsonObject *o = json_node_get_object (json_parser_get_root (p));
  g_assert_false (json_object_get_boolean_member (o, "healthy"));
  g_assert_cmpstr (json_object_get_string_member (o, "verdict"), ==, "unhealthy");
  g_assert_cmpstr (json_object_get_string_member (o, "generation"), ==, "verl-0.9.0");
  g_assert_cmpint (json_object_get_int_member (o, "n_tags"), ==, 12);
  g_assert_cmpint (json_object_get_int_member (o, "n_unmapped"), ==, 3);
  JsonArray *evaluated_json = json_object_get_array_member (o, "evaluated");
  g_assert_cmpuint (json_array_get_length (evaluated_json), ==, 1);
  g_assert_cmpstr (json_array_get_string_element (evaluated_json, 0), ==, "ess");
  JsonArray *a = json_object_get_array_member (o, "events");
  g_assert_cmpuint (json_array_get_length (a), ==, 1);
  JsonObject *e = json_array_get_object_element (a, 0);
  g_assert_cmpstr (json_object_get_string_member (e, "rule_id"), ==, "ess-low");
  g_assert_cmpstr (json_object_get_string_member (e, "severity"), ==, "warning");
  g_assert_cmpint (json_object_get_int_member (e, "first_step"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (e, "last_step"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (e, "n_steps"), ==, 2);
  g_assert_cmpfloat (json_object_get_double_member (e, "value"), ==, 0.2);
  g_assert_cmpfloat (json_object_get_double_member (e, "threshold"), ==, 0.3);
  g_assert_cmpstr (json_object_get_string_member (e, "crossing"), ==, "0.2 < 0.3 (0.667×)");

  /* nothing fired: healthy only when a mismatch metric was judged */
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  report.events = none;
  report.n_warning = 0;
  g_assert_cmpint (dw_health_report_verdict (&report), ==, DW_HEALTH_VERDICT_HEALTHY);
  g_string_truncate (out, 0);
  dw_health_append_report_json (out, &report);
  g_assert_cmpstr (
    out->str, ==,
    "{\"verdict\": \"healthy\", \"healthy\": true, \"headline\": null, "
    "\"generation\": "
    "\"verl-0.9.0\", \"generation_source\": \"keys\", \"generation_inferred\": true, "
    "\"evaluated\": [\"ess\"], "
    "\"n_mismatch_metrics\": 1, \"n_tags\": 12, \"n_unmapped\": 3, "
    "\"panel_columns\": 0, \"events\": []}");
  g_ptr_array_set_size (evaluated, 0);
  report.n_mismatch = 0;
  report.generation = NULL;
  report.generation_source = NULL;
  g_assert_cmpint (dw_health_report_verdict (&report), ==, DW_HEALTH_VERDICT_NO_MISMATCH_DATA);
  g_string_truncate (out, 0);
  dw_health_append_report_json (out, &report);
  g_assert_true (g_str_has_prefix (out->str, "{\"verdict\": \"no-mismatch-metrics\", \"healthy\": "
                                             "false, \"headline\": null, \"generation\": null,"));

  g_string_truncate (out, 0);
  dw_health_append_event_text (out, ev->pdata[0]);
  g_assert_true (g_str_has_prefix (out->str, "WARNING  steps 1–2: Effective sample size below 0.3 "
                                             "[ess-low]\n    ess: 0.2 < 0.3 (0.667×), fired on "
                                             "2 step(s)\n"));
}

static void
test_rule_table (void)
{
  guint n;
  const DwHealthRule *r = dw_health_rules (&n);
  g_assert_cmpuint (n, >=, 12);
  for (guint i = 0; i < n; i++)
    {
      g_assert_true (dw_health_rule_lookup (r[i].id) == &r[i]);
      for (guint j = 0; j < i; j++)
        g_assert_cmpstr (r[i].id, !=, r[j].id);
    }
  g_assert_null (dw_health_rule_lookup ("nope"));
}

/* The banner line: the first critical event with the status, the first warning before it. */
static void
test_headline (void)
{
  g_autoptr (DwHealthMonitor) m = dw_health_monitor_new ();
  gint64 steps[6] = { 1, 2, 3, 4, 5, 6 };
  double kl[6] = { 0.0, 0.2, 0.2, 0.3, 1.5, 1.5 };
  double rs[6] = { 0.0, 0.0, 0.0, 0.75, 0.75, 0.75 };
  g_autoptr (GPtrArray) a = dw_health_monitor_feed (m, "kl", "rollout_corr/kl", steps, kl, 6);
  g_autoptr (GPtrArray) b = dw_health_monitor_feed (
    m, "rs_seq_masked_fraction", "rollout_corr/rollout_rs_seq_masked_fraction", steps, rs, 6);
  g_assert_nonnull (a);
  g_assert_nonnull (b);
  g_autoptr (GPtrArray) events = dw_health_monitor_get_events (m);
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  g_autofree char *collapsed = dw_health_headline (events, DW_RUN_STATUS_COLLAPSED);
  g_autofree char *collapsing = dw_health_headline (events, DW_RUN_STATUS_COLLAPSING);
  g_autofree char *warning = NULL;
  double ess[3] = { 0.9, 0.2, 0.9 };
  g_autoptr (GPtrArray) only_warning = check ("ess", ess, 3);

  g_assert_cmpstr (collapsed, ==,
                   "Collapsed at step 4 (Rejected sequence fraction above 10% — collapse level): "
                   "Rejected sequence fraction 0.75 > 0.5 (1.5×); first warning at step 2: |KL| "
                   "between rollout and training above 0.1");
  g_assert_true (g_str_has_prefix (collapsing, "Collapsing since step 4 (Rejected sequence"));
  warning = dw_health_headline (only_warning, DW_RUN_STATUS_FINISHED);
  g_assert_cmpstr (warning, ==,
                   "Warning since step 1 (Effective sample size below 0.3): Effective sample "
                   "size 0.2 < 0.3 (0.667×)");
  g_assert_null (dw_health_headline (none, DW_RUN_STATUS_FINISHED));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/health/thresholds", test_thresholds);
  g_test_add_func ("/health/first-nan", test_first_nan);
  g_test_add_func ("/health/critical", test_critical);
  g_test_add_func ("/health/crossing", test_crossing);
  g_test_add_func ("/health/headline", test_headline);
  g_test_add_func ("/health/drift-exact", test_drift_exact);
  g_test_add_func ("/health/healthy-noisy", test_healthy_noisy);
  g_test_add_func ("/health/noisy-collapse", test_noisy_collapse);
  g_test_add_func ("/health/incremental", test_incremental);
  g_test_add_func ("/health/sort", test_sort);
  g_test_add_func ("/health/report-json", test_report_json);
  g_test_add_func ("/health/rule-table", test_rule_table);
  return g_test_run ();
}
