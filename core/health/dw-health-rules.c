/* dw-health-rules.c — the health rule table and its incremental evaluation
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Warning thresholds are the ones verl documents for its rollout-correction diagnostics (IS mean
 * in [0.5, 2], ESS ≥ 0.3, IS std ≤ 1, |KL| ≤ 0.1, χ² ≤ 1, probability difference ≤ 0.01);
 * critical ones mark collapse-level evidence (half the batch rejected, ten times a threshold,
 * NaN); docs/HEALTH.md §4 gives the reasons. The advice follows from what each metric measures
 * and which knob changes it. No store here: everything works on (step, value) arrays.
 */
#include "config.h"

#include "dw-health.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "dw-canonical.h"
#include "dw-smooth.h"

#define DRIFT_NONE               \
  {                              \
    0, 0, 0, 0, 0, 0.0, 0.0, 0.0 \
  }

/* Drift parameters: 20-point baseline, 10-point rolling median, 20-point Theil–Sen slope, three
 * consecutive drifting points; critical at ten times the drift bound. */
#define DRIFT(tr, factor, delta)           \
  {                                        \
    tr, 20, 10, 20, 3, factor, delta, 10.0 \
  }

static const DwHealthRule rules[] = {
  { "first-nan", NULL, DW_HEALTH_RULE_NONFINITE, DW_HEALTH_CRITICAL, NAN, NAN, NAN, NAN, DRIFT_NONE,
    N_ ("Non-finite value"),
    N_ (
      "The series produced NaN or infinity. In the mismatch metrics this means a log-ratio "
      "overflowed (k3 KL is computed without the ±20 safety clamp and becomes +inf once a token's "
      "log-ratio exceeds about 88) or the trainer's log-probabilities are already NaN; training "
      "has usually collapsed at or just after this step."),
    N_ ("Find the first step with a non-finite value and inspect that step's rollout batch "
        "(driftwatch-cli metrics): look for tokens whose training and rollout log-probabilities "
        "differ by tens of nats. Check the rollout engine and the trainer for precision problems "
        "(bf16 logits, different kernels), lower the learning rate, and enable rejection sampling "
        "(seq_max_k2 / seq_mean_k3) so that such tokens are masked before they reach the loss.") },
  { "is-mean-range", "is_raw_mean", DW_HEALTH_RULE_OUTSIDE, DW_HEALTH_WARNING, 0.5, 2.0, 0.05, 20.0,
    DRIFT_NONE, N_ ("Raw IS ratio mean outside [0.5, 2]"),
    N_ ("The mean of the raw importance ratio π_train/π_rollout should stay close to 1. Outside "
        "[0.5, 2] the rollout engine samples from a distribution that differs systematically "
        "from the one the trainer optimises (or a few tokens have enormous ratios), and the "
        "correction itself becomes a large, noisy factor."),
    N_ ("Check that the rollout engine and the trainer use the same sampling parameters "
        "(temperature, top-p/top-k), the same weights (sync every step) and compatible precision; "
        "compare training and rollout PPL. Keep truncated IS on (rollout_is_threshold 2.0) and "
        "consider geometric rejection (seq_mean_k1) to drop the most shifted sequences.") },
  { "is-weight-mean-low", "is_mean", DW_HEALTH_RULE_BELOW, DW_HEALTH_WARNING, 0.5, NAN, 0.05, NAN,
    DRIFT_NONE, N_ ("Applied IS weight mean below 0.5"),
    N_ ("The weights the correction applies average below 0.5: most tokens have a training "
        "probability far below their rollout probability, or IcePop zeroed a large part of the "
        "batch, so the gradient is scaled down and carried by few tokens. (The applied mean "
        "cannot exceed the IS threshold under truncation; the upper side is judged from the raw "
        "ratio fractions.)"),
    N_ ("Compare training and rollout PPL and check weight synchronisation and sampling "
        "parameters. With IcePop, look at rollout_is_oob_ratio: widen the bounds only after "
        "finding why so many ratios fall outside them.") },
  { "is-ratio-high", "is_raw_fraction_high", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING, NAN, 0.05,
    NAN, 0.5, DRIFT_NONE,
    /* xgettext:no-c-format */
    N_ ("Raw IS ratios above the IS threshold for over 5% of tokens"),
    /* xgettext:no-c-format */
    N_ ("More than 5% of the tokens (sequence-level IS: sequences) have a raw ratio "
        "π_train/π_rollout above the IS threshold; from half of them on, the median ratio itself "
        "lies beyond it. This is the shift the raw-ratio mean shows up to verl 0.7.1: verl ≥ 0.8 "
        "logs the mean of the truncated weights, which stays below the threshold by "
        "construction."),
    N_ ("Check sampling parameters, weight synchronisation and precision of the rollout engine "
        "before touching the threshold; add sequence-mean rejection (seq_mean_k1 / seq_mean_k3) "
        "while investigating.") },
  { "is-ratio-low", "is_raw_fraction_low", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING, NAN, 0.05, NAN,
    0.5, DRIFT_NONE,
    /* xgettext:no-c-format */
    N_ ("Raw IS ratios below the lower bound for over 5% of tokens"),
    /* xgettext:no-c-format */
    N_ ("More than 5% of the tokens have a raw ratio below the lower IS bound (1/threshold, or "
        "the IcePop lower bound): the trainer finds many sampled tokens much less likely than the "
        "rollout engine did."),
    N_ ("Check sampling parameters (temperature applied on both sides), weight synchronisation "
        "and precision; add sequence-mean rejection (seq_mean_k1 / seq_mean_k3) while "
        "investigating.") },
  { "is-oob-high", "is_oob_fraction", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING, NAN, 0.2, NAN, 0.5,
    DRIFT_NONE, N_ ("Tokens outside the IS bounds above 20%"),
    /* xgettext:no-c-format */
    N_ ("More than 20% of the tokens have a ratio outside the IS bounds: their weights are "
        "truncated (slime TIS) or zeroed (IcePop), so a large part of the batch no longer carries "
        "its own gradient."),
    N_ ("Look for the source of the mismatch (sampling parameters, stale weights, precision); "
        "the bounds are a safety net, not a fix. With IcePop, compare rollout_is_ratio_fraction_"
        "high and _low to see which side is hit.") },
  { "ess-low", "ess", DW_HEALTH_RULE_BELOW, DW_HEALTH_WARNING, 0.3, NAN, 0.03, NAN, DRIFT_NONE,
    N_ ("Effective sample size below 0.3"),
    /* xgettext:no-c-format */
    N_ ("Fewer than 30% of the tokens effectively carry the gradient: a few sequences with very "
        "large weights dominate, so the importance-sampling estimate has high variance."),
    N_ (
      "Lower rollout_is_threshold (for example 2.0 → 1.5), prefer token-level IS (sequence-level "
      "weights multiply per-token ratios and explode with length), or add rejection sampling "
      "(seq_mean_k1 or seq_mean_k3) so the outlying sequences are dropped instead of weighted.") },
  { "veto-fraction-high", "veto_fraction", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING, NAN, 0.1, NAN,
    0.5, DRIFT_NONE, N_ ("Veto fraction above 10%"),
    N_ ("More than one sequence in ten contains a catastrophic token (a log-ratio below the veto "
        "threshold) and is dropped entirely, so a large part of the batch is wasted."),
    N_ (
      "Inspect the vetoed sequences: tokens the trainer finds nearly impossible usually come from "
      "a tokenizer or chat-template mismatch, numerics of the rollout engine, or stale weights. "
      "Raising the veto threshold only hides the symptom; current verl replaces the veto by "
      "seq_max_k2 / seq_max_k3 rejection.") },
  { "rejection-fraction-high", "rs_seq_masked_fraction", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING,
    NAN, 0.1, NAN, 0.5, DRIFT_NONE, N_ ("Rejected sequence fraction above 10%"),
    /* xgettext:no-c-format */
    N_ ("Rejection sampling drops more than 10% of the sequences. The bounds are tight for the "
        "current mismatch, and the surviving batch may be biased (for example towards short "
        "sequences)."),
    N_ (
      "Beware the length trap: sequence-sum bounds (seq_sum_k1) reject long sequences far more "
      "often than geometric ones (seq_mean_k1, seq_mean_k3). Widen rollout_rs_threshold or switch "
      "to a per-token-mean statistic, and look for the source of the growing mismatch.") },
  { "masked-fraction-high", "rs_masked_fraction", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING, NAN, 0.3,
    NAN, 0.5, DRIFT_NONE, N_ ("Masked token fraction above 30%"),
    /* xgettext:no-c-format */
    N_ ("More than 30% of the response tokens are masked out of the loss by rejection sampling; "
        "the effective batch is much smaller than configured."),
    N_ ("Loosen rollout_rs_threshold, or move from token-level to sequence-mean rejection so that "
        "fewer tokens are lost; if the fraction keeps rising, the mismatch itself is growing — fix "
        "its source rather than the threshold.") },
  { "is-std-high", "is_std", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING, NAN, 1.0, NAN, 10.0,
    DRIFT_NONE, N_ ("IS weight std above 1"),
    N_ ("The importance weights (clamped to the IS bounds) spread by more than 1 around their "
        "mean: the correction adds a lot of variance to the gradient."),
    N_ ("Lower rollout_is_threshold, use token-level instead of sequence-level IS, or combine IS "
        "with rejection sampling of the extreme sequences (seq_mean_k1 / seq_mean_k3).") },
  { "kl-high", "kl", DW_HEALTH_RULE_ABS_ABOVE, DW_HEALTH_WARNING, NAN, 0.1, NAN, 1.0, DRIFT_NONE,
    N_ ("|KL| between rollout and training above 0.1"),
    N_ (
      "The mean log-ratio between the rollout and the training policy exceeds 0.1 nats per token: "
      "the two engines no longer compute the same distribution."),
    N_ ("Check weight synchronisation, sampling parameters and precision of the rollout engine; "
        "use decoupled IS (decoupled_token_is / decoupled_seq_is) and, if the KL grows, rejection "
        "sampling (decoupled_geo_rs, decoupled_k3_rs).") },
  { "chi2-token-high", "chi2_token", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING, NAN, 1.0, NAN, 10.0,
    DRIFT_NONE, N_ ("χ² (token) above 1"),
    N_ ("The second moment of the token importance ratio, E[ρ²] − 1, exceeds 1: token weights have "
        "heavy tails and the per-token IS estimate has high variance."),
    N_ ("Use truncated token-level IS with a smaller rollout_is_threshold, or reject tokens with "
        "large k2/k3 (token_k2, token_k3, seq_max_k2).") },
  { "catastrophic-fraction-high", "catastrophic_fraction", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING,
    NAN, 0.01, NAN, 0.1, DRIFT_NONE, N_ ("Catastrophic token fraction above 1%"),
    /* xgettext:no-c-format */
    N_ ("More than 1% of the tokens have a training probability far below their rollout "
        "probability (below the veto threshold): the rollout engine samples tokens the trainer "
        "considers nearly impossible."),
    N_ ("Inspect those tokens in the step's batch: special tokens, tokenizer or chat-template "
        "differences and low-precision logits are the usual causes. Keep the veto (or seq_max_k2 "
        "rejection) on until the source is fixed.") },
  { "probs-diff-high", "probs_diff_mean", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING, NAN, 0.01, NAN,
    0.1, DRIFT_NONE, N_ ("Mean probability difference above 0.01"),
    N_ ("The mean |π_train − π_rollout| per token exceeds 0.01; verl's FAQ calls values below "
        "0.005 normal and above 0.01 a precision problem of the inference engine."),
    N_ ("Known causes: non-Hopper GPUs, long outputs, vLLM's cascade attention (try "
        "+actor_rollout_ref.rollout.engine_kwargs.vllm.disable_cascade_attn=True), a temperature "
        "applied on one side only. Enable rollout correction (decoupled_token_is) meanwhile.") },
  { "logprob-diff-high", "logprob_abs_diff", DW_HEALTH_RULE_ABOVE, DW_HEALTH_WARNING, NAN, 0.2, NAN,
    2.0, DRIFT_NONE, N_ ("Mean |log-prob difference| above 0.2"),
    N_ ("The training and rollout engines disagree by more than 0.2 nats per token on average "
        "(about 0.01 is typical at the start of a healthy run): the samples are strongly "
        "off-policy."),
    N_ ("Reduce off-policyness (fewer epochs per rollout, a lower learning rate, a larger rollout "
        "batch), check weight synchronisation and precision, and turn on TIS (--use-tis) or "
        "IcePop.") },
  { "k3-kl-drift", "k3_kl", DW_HEALTH_RULE_DRIFT, DW_HEALTH_WARNING, NAN, NAN, NAN, NAN,
    DRIFT (DW_HEALTH_DRIFT_VALUE, 3.0, 5e-4), N_ ("K3 KL drifting upwards"),
    N_ ("The rolling median of the K3 KL estimate has risen to several times its early-run "
        "baseline and is still growing. A steadily growing mismatch between the rollout and the "
        "training policy typically precedes a collapse."),
    N_ (
      "Act before the hard thresholds fire: check weight synchronisation and precision, enable or "
      "tighten rejection sampling (decoupled_k3_rs with rollout_rs_threshold 0.01, or "
      "decoupled_geo_rs), lower the learning rate, and watch ESS and the veto fraction.") },
  { "ppl-ratio-drift", "ppl_ratio", DW_HEALTH_RULE_DRIFT, DW_HEALTH_WARNING, NAN, NAN, NAN, NAN,
    DRIFT (DW_HEALTH_DRIFT_ABS_LOG, 3.0, 0.01), N_ ("PPL ratio drifting away from 1"),
    N_ ("The rolling median of |ln PPL ratio| (rollout against training perplexity) has moved to "
        "several times its baseline and keeps moving: the two engines diverge more every step."),
    N_ ("Compare training and rollout PPL to see which side moves; check sampling parameters and "
        "weight synchronisation, and enable geometric rejection (seq_mean_k1) or k3 rejection "
        "before the mismatch becomes a collapse.") },
  { "log-ppl-drift", "log_ppl_abs_diff", DW_HEALTH_RULE_DRIFT, DW_HEALTH_WARNING, NAN, NAN, NAN,
    NAN, DRIFT (DW_HEALTH_DRIFT_VALUE, 3.0, 0.01), N_ ("|log PPL difference| drifting upwards"),
    N_ ("The rolling median of the per-sequence |log PPL difference| has risen to several times "
        "its baseline and keeps growing."),
    N_ (
      "Check the rollout engine against the trainer (sampling parameters, weights, precision) and "
      "enable sequence-mean rejection (seq_mean_k1 / seq_mean_k3) while investigating.") },
  { "logprob-diff-drift", "logprob_abs_diff", DW_HEALTH_RULE_DRIFT, DW_HEALTH_WARNING, NAN, NAN,
    NAN, NAN, DRIFT (DW_HEALTH_DRIFT_VALUE, 3.0, 0.005),
    N_ ("|log-prob difference| drifting upwards"),
    N_ ("The rolling median of the mean |training − rollout log-prob| has risen to several times "
        "its early-run value and keeps growing (seen before slime + SGLang runs went off)."),
    N_ ("Check that the rollout engine receives every weight update and computes in the same "
        "precision; lower the learning rate and enable TIS or IcePop while investigating.") },
};

const DwHealthRule *
dw_health_rules (guint *n_rules)
{
  if (n_rules)
    *n_rules = G_N_ELEMENTS (rules);
  return rules;
}

static gint
dw_health_rule_index (const char *id)
{
  for (guint index = 0; id && index < G_N_ELEMENTS (rules); index++)
    if (strcmp (rules[index].id, id) == 0)
      return (gint)index;
  return G_N_ELEMENTS (rules);
}

const DwHealthRule *
dw_health_rule_lookup (const char *rule_id)
{
  gint index = dw_health_rule_index (rule_id);
  return index < (gint)G_N_ELEMENTS (rules) ? &rules[index] : NULL;
}

const char *
dw_health_severity_name (DwHealthSeverity severity)
{
  switch (severity)
    {
    case DW_HEALTH_INFO:
      return "info";
    case DW_HEALTH_WARNING:
      return "warning";
    case DW_HEALTH_CRITICAL:
      return "critical";
    default:
      return "unknown";
    }
}

/* %.3g, but %.1e for tiny or huge magnitudes (locale-independent). */
static void
dw_health_format_number (char *buf, gsize size, double v)
{
  double magnitude = fabs (v);

  g_ascii_formatd (buf, size,
                   magnitude != 0 && (magnitude < 1e-3 || magnitude >= 1e5) ? "%.2e" : "%.3g", v);
}

char *
dw_health_event_format_crossing (const DwHealthEvent *event)
{
  const DwHealthRule *rule = dw_health_rule_lookup (event->rule_id);
  gboolean abs_rule = rule != NULL && rule->kind == DW_HEALTH_RULE_ABS_ABOVE;
  char value_text[G_ASCII_DTOSTR_BUF_SIZE], threshold_text[G_ASCII_DTOSTR_BUF_SIZE],
    ratio_text[G_ASCII_DTOSTR_BUF_SIZE + 8];
  double compared = abs_rule ? fabs (event->value) : event->value;

  dw_health_format_number (value_text, sizeof value_text, event->value);
  if (isnan (event->threshold) || !isfinite (event->value))
    return g_strdup (value_text);
  dw_health_format_number (threshold_text, sizeof threshold_text, event->threshold);
  /* the ratio to the bound, unless the bound is 0 */
  if (event->threshold != 0)
    {
      g_ascii_formatd (ratio_text + 2, sizeof ratio_text - 4,
                       fabs (compared / event->threshold) >= 10 ? "%.1f" : "%.3g",
                       compared / event->threshold);
      ratio_text[0] = ' ';
      ratio_text[1] = '(';
      strcat (ratio_text, "×)");
    }
  else
    ratio_text[0] = '\0';
  return g_strdup_printf (abs_rule ? "|%s| %s %s%s" : "%s %s %s%s", value_text,
                          compared < event->threshold ? "<" : ">", threshold_text, ratio_text);
}

/* ------------------------------------------------------------------------------------------ */
/* events                                                                                       */

void
dw_health_event_free (DwHealthEvent *event)
{
  if (event == NULL)
    return;
  g_free (event->rule_id);
  g_free (event->metric);
  g_free (event->tag);
  g_free (event->title);
  g_free (event->explanation);
  g_free (event->advice);
  g_free (event);
}

DwHealthEvent *
dw_health_event_copy (const DwHealthEvent *event)
{
  DwHealthEvent *copy = g_new (DwHealthEvent, 1);
  *copy = *event;
  copy->rule_id = g_strdup (event->rule_id);
  copy->metric = g_strdup (event->metric);
  copy->tag = g_strdup (event->tag);
  copy->title = g_strdup (event->title);
  copy->explanation = g_strdup (event->explanation);
  copy->advice = g_strdup (event->advice);
  return copy;
}

gint
dw_health_event_compare (gconstpointer pa, gconstpointer pb)
{
  const DwHealthEvent *left = *(DwHealthEvent *const *)pa, *right = *(DwHealthEvent *const *)pb;
  if (left->first_step != right->first_step)
    return left->first_step < right->first_step ? -1 : 1;
  if (left->severity != right->severity)
    return left->severity > right->severity ? -1 : 1;
  gint left_rank = dw_health_rule_index (left->rule_id),
       right_rank = dw_health_rule_index (right->rule_id);
  if (left_rank != right_rank)
    return left_rank < right_rank ? -1 : 1;
  return g_strcmp0 (left->tag, right->tag);
}

static DwHealthEvent *
dw_health_event_new (const DwHealthRule *rule, const char *metric, const char *tag, gint64 step,
                     double value, double threshold)
{
  DwHealthEvent *event = g_new0 (DwHealthEvent, 1);
  event->rule_id = g_strdup (rule->id);
  event->severity = rule->severity;
  event->metric = g_strdup (metric);
  event->tag = g_strdup (tag);
  event->first_step = event->last_step = step;
  event->value = value;
  event->threshold = threshold;
  event->title = g_strdup (_ (rule->title));
  event->explanation = g_strdup (_ (rule->explanation));
  event->advice = g_strdup (_ (rule->advice));
  event->n_steps = 1;
  return event;
}

/* ------------------------------------------------------------------------------------------ */
/* robust statistics                                                                            */

/* Median of a[0..n) (reorders a; the mean of the two middle values for even n). */
static double
dw_health_median_inplace (double *a, gsize n)
{
  double upper = dw_select_kth (a, n, n / 2);
  if (n % 2)
    return upper;
  double lower = a[0];
  for (gsize index = 1; index < n / 2; index++)
    lower = MAX (lower, a[index]);
  return 0.5 * (lower + upper);
}

/* Whether the Theil–Sen slope, the median over pairs i < j of (x_j − x_i) / (s_j − s_i), is
 * positive (0 without a pair). Only its sign is needed: with p of the n slopes positive, the
 * median (the middle one, or the mean of the two middle ones, as dw_health_median_inplace takes
 * it) is positive when p > n / 2, not when p < n / 2, and for p = n / 2 (n even) it is the mean
 * of the smallest positive slope and the largest other one. A count instead of a selection:
 * the rule runs at every point of every drift series (docs/BENCHMARKS.md, health rules). */
static gboolean
dw_health_theil_sen_rising (const double *x, const gint64 *s, gsize n)
{
  gsize slope_count = 0, positive = 0;
  double smallest_positive = INFINITY, largest_other = -INFINITY;
  for (gsize index = 0; index < n; index++)
    for (gsize inner = index + 1; inner < n; inner++)
      if (s[inner] != s[index])
        {
          const double slope = (x[inner] - x[index]) / (double)(s[inner] - s[index]);
          slope_count++;
          if (slope > 0)
            {
              positive++;
              smallest_positive = MIN (smallest_positive, slope);
            }
          else
            largest_other = MAX (largest_other, slope);
        }
  if (slope_count % 2 == 1 || positive != slope_count / 2)
    return 2 * positive > slope_count;
  return slope_count > 0 && 0.5 * (largest_other + smallest_positive) > 0;
}

/* ------------------------------------------------------------------------------------------ */
/* monitor                                                                                      */

typedef struct
{
  const DwHealthRule *rule;
  DwHealthEvent *event;          /* owned; NULL until fired */
  DwHealthEvent *critical_event; /* owned; NULL until the critical bound was reached */
  /* drift */
  gboolean has_baseline;
  double baseline;
  double baseline_sigma; /* 1.4826 · MAD of the baseline points */
  guint consecutive;
  GArray *x;      /* double: baseline points, then a sliding buffer of recent points */
  GArray *steps;  /* gint64, parallel to x */
  GArray *window; /* double: the last rule->drift.window points, sorted */
} RuleState;

/* the position of @value in @window (sorted): before the values equal to it, or after them
 * when @after_equal */
static guint
dw_health_window_position (const GArray *window, double value, gboolean after_equal)
{
  const double *sorted = (const double *)window->data;
  guint low = 0, high = window->len;
  while (low < high)
    {
      const guint middle = low + (high - low) / 2;
      if (sorted[middle] < value || (after_equal && sorted[middle] == value))
        low = middle + 1;
      else
        high = middle;
    }
  return low;
}

/* @value enters @st's sorted window, and the point it pushes out leaves (before x is trimmed:
 * the point is still in it): a rolling median is then an index, not a selection per point */
static void
dw_health_window_add (RuleState *st, guint size, double value)
{
  g_array_insert_val (st->window, dw_health_window_position (st->window, value, TRUE), value);
  if (st->window->len <= size)
    return;
  const double leaving = g_array_index (st->x, double, st->x->len - 1 - size);
  g_array_remove_index (st->window, dw_health_window_position (st->window, leaving, FALSE));
}

/* the median of a sorted window (as dw_health_median_inplace takes it) */
static double
dw_health_window_median (const GArray *window)
{
  const double *sorted = (const double *)window->data;
  const guint n = window->len;
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

typedef struct
{
  char *tag;
  char *canonical;
  gboolean has_last;
  gint64 last_step;
  guint n_rules;
  RuleState *states;
} SeriesState;

struct _DwHealthMonitor
{
  GHashTable *series;            /* tag → SeriesState* */
  GPtrArray *order;              /* SeriesState*, creation order */
  GArray *scratch;               /* double, for medians and slopes */
  const char *generation;        /* dw_canonical_generation() name, or NULL */
  const char *generation_source; /* "given", "log", "config", "keys"; NULL when unknown */
};

static void
dw_health_series_state_free (gpointer p)
{
  SeriesState *state = p;
  for (guint index = 0; index < state->n_rules; index++)
    {
      dw_health_event_free (state->states[index].event);
      dw_health_event_free (state->states[index].critical_event);
      if (state->states[index].x)
        g_array_unref (state->states[index].x);
      if (state->states[index].steps)
        g_array_unref (state->states[index].steps);
      if (state->states[index].window)
        g_array_unref (state->states[index].window);
    }
  g_free (state->states);
  g_free (state->tag);
  g_free (state->canonical);
  g_free (state);
}

DwHealthMonitor *
dw_health_monitor_new (void)
{
  DwHealthMonitor *monitor = g_new0 (DwHealthMonitor, 1);
  monitor->series = g_hash_table_new (g_str_hash, g_str_equal);
  monitor->order = g_ptr_array_new_with_free_func (dw_health_series_state_free);
  monitor->scratch = g_array_new (FALSE, FALSE, sizeof (double));
  return monitor;
}

void
dw_health_monitor_free (DwHealthMonitor *monitor)
{
  if (monitor == NULL)
    return;
  g_hash_table_unref (monitor->series);
  g_ptr_array_unref (monitor->order);
  g_array_unref (monitor->scratch);
  g_free (monitor);
}

static SeriesState *
dw_health_series_state (DwHealthMonitor *m, const char *canonical, const char *tag)
{
  SeriesState *state = g_hash_table_lookup (m->series, tag);
  if (state)
    return state;
  state = g_new0 (SeriesState, 1);
  state->tag = g_strdup (tag);
  state->canonical = g_strdup (canonical);
  state->states = g_new0 (RuleState, G_N_ELEMENTS (rules));
  for (guint index = 0; index < G_N_ELEMENTS (rules); index++)
    {
      const DwHealthRule *rule = &rules[index];
      gboolean applies
        = rule->metric ? g_strcmp0 (rule->metric, canonical) == 0 : canonical != NULL;
      if (!applies)
        continue;
      RuleState *rule_state = &state->states[state->n_rules++];
      rule_state->rule = rule;
      if (rule->kind == DW_HEALTH_RULE_DRIFT)
        {
          rule_state->x = g_array_new (FALSE, FALSE, sizeof (double));
          rule_state->steps = g_array_new (FALSE, FALSE, sizeof (gint64));
          rule_state->window = g_array_new (FALSE, FALSE, sizeof (double));
        }
    }
  g_hash_table_insert (m->series, state->tag, state);
  g_ptr_array_add (m->order, state);
  return state;
}

void
dw_health_monitor_set_generation (DwHealthMonitor *monitor, const char *generation)
{
  g_return_if_fail (monitor != NULL);
  monitor->generation = dw_canonical_generation (generation);
  monitor->generation_source = monitor->generation != NULL ? "given" : NULL;
}

const char *
dw_health_monitor_get_generation_source (DwHealthMonitor *monitor)
{
  g_return_val_if_fail (monitor != NULL, NULL);
  return monitor->generation_source;
}

void
dw_health_monitor_adopt_generation (DwHealthMonitor *monitor, const char *generation,
                                    const char *source)
{
  g_return_if_fail (monitor != NULL);
  if (g_strcmp0 (monitor->generation_source, "given") == 0)
    return;
  monitor->generation = dw_canonical_generation (generation);
  monitor->generation_source = monitor->generation == NULL         ? NULL
                               : g_strcmp0 (source, "log") == 0    ? "log"
                               : g_strcmp0 (source, "config") == 0 ? "config"
                                                                   : "keys";
}

const char *
dw_health_monitor_get_generation (DwHealthMonitor *monitor)
{
  g_return_val_if_fail (monitor != NULL, NULL);
  return monitor->generation;
}

static double *
dw_health_scratch (DwHealthMonitor *m, gsize n)
{
  if (m->scratch->len < n)
    g_array_set_size (m->scratch, n);
  return (double *)m->scratch->data;
}

static double
dw_health_drift_transform (DwHealthDriftTransform t, double v)
{
  switch (t)
    {
    case DW_HEALTH_DRIFT_ABS:
      return fabs (v);
    case DW_HEALTH_DRIFT_ABS_LOG:
      return v > 0 ? fabs (log (v)) : NAN;
    default:
      return v;
    }
}

/* One point against one level of a rule: did it cross, and what (value, bound). */
typedef struct
{
  gboolean fired;
  double value;
  double threshold;
} Crossing;

/* Returns TRUE when the point fires (fills *value / *threshold). */
static gboolean
dw_health_eval_drift (DwHealthMonitor *m, RuleState *st, gint64 step, double v, double *value,
                      double *threshold)
{
  const DwHealthDriftParams *params = &st->rule->drift;
  double transformed = dw_health_drift_transform (params->transform, v);
  if (!isfinite (transformed))
    return FALSE; /* skipped: neither drifting nor breaking the confirmation run */
  g_array_append_val (st->x, transformed);
  g_array_append_val (st->steps, step);
  dw_health_window_add (st, params->window, transformed);
  if (!st->has_baseline)
    {
      if (st->x->len == params->baseline_points)
        {
          double *scratch = dw_health_scratch (m, st->x->len);
          memcpy (scratch, st->x->data, st->x->len * sizeof (double));
          st->baseline = dw_health_median_inplace (scratch, st->x->len);
          for (guint index = 0; index < st->x->len; index++)
            scratch[index] = fabs (g_array_index (st->x, double, index) - st->baseline);
          st->baseline_sigma = 1.4826 * dw_health_median_inplace (scratch, st->x->len);
          st->has_baseline = TRUE;
        }
      return FALSE;
    }
  /* keep a sliding buffer of the points the windows need */
  guint keep = MAX (params->window, params->slope_window);
  if (st->x->len > 4 * keep)
    {
      g_array_remove_range (st->x, 0, st->x->len - keep);
      g_array_remove_range (st->steps, 0, st->steps->len - keep);
    }
  const double *values = (const double *)st->x->data;
  const gint64 *steps = (const gint64 *)st->steps->data;
  guint len = st->x->len;
  /* the median of the last min(window, len) points */
  double med = dw_health_window_median (st->window);
  double bound = MAX (st->baseline * params->factor, st->baseline + params->min_delta);
  bound = MAX (bound, st->baseline + 3.0 * st->baseline_sigma);
  gboolean drifting = FALSE;
  if (med > bound)
    {
      guint slope_window = MIN (params->slope_window, len);
      drifting = dw_health_theil_sen_rising (values + len - slope_window,
                                             steps + len - slope_window, slope_window);
    }
  if (!drifting)
    {
      st->consecutive = 0;
      return FALSE;
    }
  st->consecutive++;
  if (st->event == NULL && st->consecutive < params->confirm)
    return FALSE;
  *value = med;
  *threshold = bound;
  return TRUE;
}

/* The collapse-level check of a bound rule: inclusive bounds ("≥ 50 % rejected"). */
static void
dw_health_eval_critical (const DwHealthRule *r, double v, Crossing *crit)
{
  gboolean below = isfinite (r->crit_lo) && v <= r->crit_lo;
  gboolean above = isfinite (r->crit_hi) && v >= r->crit_hi;

  switch (r->kind)
    {
    case DW_HEALTH_RULE_ABOVE:
      crit->fired = above;
      crit->threshold = r->crit_hi;
      break;
    case DW_HEALTH_RULE_BELOW:
      crit->fired = below;
      crit->threshold = r->crit_lo;
      break;
    case DW_HEALTH_RULE_OUTSIDE:
      crit->fired = below || above;
      crit->threshold = below ? r->crit_lo : r->crit_hi;
      break;
    case DW_HEALTH_RULE_ABS_ABOVE:
      crit->fired = isfinite (r->crit_hi) && fabs (v) >= r->crit_hi;
      crit->threshold = r->crit_hi;
      break;
    default:
      break;
    }
}

/* Evaluates one point: @base at the rule's own severity, @crit at the critical level. */
static void
dw_health_eval_rule (DwHealthMonitor *m, RuleState *st, gint64 step, double v, Crossing *base,
                     Crossing *crit)
{
  const DwHealthRule *rule = st->rule;

  *base = (Crossing){ FALSE, v, NAN };
  *crit = (Crossing){ FALSE, v, NAN };
  if (rule->kind == DW_HEALTH_RULE_NONFINITE)
    {
      base->fired = !isfinite (v);
      return;
    }
  if (!isfinite (v))
    return; /* reported by first-nan; the bounds compare finite values only */
  switch (rule->kind)
    {
    case DW_HEALTH_RULE_ABOVE:
      base->threshold = rule->hi;
      base->fired = v > rule->hi;
      break;
    case DW_HEALTH_RULE_BELOW:
      base->threshold = rule->lo;
      base->fired = v < rule->lo;
      break;
    case DW_HEALTH_RULE_OUTSIDE:
      base->threshold = v < rule->lo ? rule->lo : rule->hi;
      base->fired = v < rule->lo || v > rule->hi;
      break;
    case DW_HEALTH_RULE_ABS_ABOVE:
      base->threshold = rule->hi;
      base->fired = fabs (v) > rule->hi;
      break;
    case DW_HEALTH_RULE_DRIFT:
      base->fired = dw_health_eval_drift (m, st, step, v, &base->value, &base->threshold);
      if (base->fired && rule->drift.critical_factor > 0)
        {
          crit->value = base->value;
          crit->threshold = rule->drift.critical_factor * base->threshold;
          crit->fired = base->value > crit->threshold;
        }
      return;
    default:
      return;
    }
  dw_health_eval_critical (rule, v, crit);
}

/* Records a crossing in *slot: extends the event, or creates it (then also added to @fired). */
static void
dw_health_record (DwHealthEvent **slot, const DwHealthRule *rule, DwHealthSeverity severity,
                  const SeriesState *s, gint64 step, const Crossing *c, GPtrArray *fired)
{
  if (*slot != NULL)
    {
      (*slot)->last_step = step;
      (*slot)->n_steps++;
      return;
    }
  *slot = dw_health_event_new (rule, s->canonical, s->tag, step, c->value, c->threshold);
  if (severity != rule->severity)
    {
      /* the collapse-level event of a warning rule: its title says so (the bound is in the
       * crossing) */
      g_free ((*slot)->title);
      /* TRANSLATORS: title of a critical health event: the rule's title */
      (*slot)->title = g_strdup_printf (_ ("%s — collapse level"), _ (rule->title));
      (*slot)->severity = severity;
    }
  g_ptr_array_add (fired, *slot);
}

GPtrArray *
dw_health_monitor_feed (DwHealthMonitor *monitor, const char *canonical, const char *tag,
                        const gint64 *steps, const double *values, gsize n)
{
  g_return_val_if_fail (monitor != NULL && tag != NULL, NULL);
  if (canonical == NULL)
    canonical = dw_canonical_for_key (tag, monitor->generation);
  SeriesState *state = dw_health_series_state (monitor, canonical, tag);
  g_autoptr (GPtrArray) fired = g_ptr_array_new ();
  for (gsize index = 0; index < n; index++)
    {
      if (state->has_last && steps[index] <= state->last_step)
        continue;
      state->has_last = TRUE;
      state->last_step = steps[index];
      for (guint rule_index = 0; rule_index < state->n_rules; rule_index++)
        {
          RuleState *rule_state = &state->states[rule_index];
          Crossing base, crit;

          dw_health_eval_rule (monitor, rule_state, steps[index], values[index], &base, &crit);
          if (base.fired)
            dw_health_record (&rule_state->event, rule_state->rule, rule_state->rule->severity,
                              state, steps[index], &base, fired);
          if (crit.fired)
            dw_health_record (&rule_state->critical_event, rule_state->rule, DW_HEALTH_CRITICAL,
                              state, steps[index], &crit, fired);
        }
    }
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_health_event_free);
  for (guint index = 0; index < fired->len; index++)
    g_ptr_array_add (out, dw_health_event_copy (fired->pdata[index]));
  g_ptr_array_sort (out, dw_health_event_compare);
  return out;
}

GPtrArray *
dw_health_monitor_get_events (DwHealthMonitor *monitor)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_health_event_free);
  for (guint index = 0; index < monitor->order->len; index++)
    {
      SeriesState *state = monitor->order->pdata[index];
      for (guint rule_index = 0; rule_index < state->n_rules; rule_index++)
        {
          if (state->states[rule_index].event)
            g_ptr_array_add (out, dw_health_event_copy (state->states[rule_index].event));
          if (state->states[rule_index].critical_event)
            g_ptr_array_add (out, dw_health_event_copy (state->states[rule_index].critical_event));
        }
    }
  g_ptr_array_sort (out, dw_health_event_compare);
  return out;
}

GPtrArray *
dw_health_monitor_get_evaluated (DwHealthMonitor *monitor)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *out = g_ptr_array_new ();
  const DwCanonicalMetric *table;
  guint n_table;

  for (guint index = 0; index < monitor->order->len; index++)
    {
      SeriesState *state = monitor->order->pdata[index];

      if (state->canonical == NULL || !state->has_last)
        continue;
      for (guint rule_index = 0; rule_index < state->n_rules; rule_index++)
        if (state->states[rule_index].rule->metric
            != NULL) /* a rule of its own, not only the NaN check */
          g_hash_table_add (seen, state->canonical);
    }
  table = dw_canonical_metrics (&n_table);
  for (guint index = 0; index < n_table; index++)
    if (g_hash_table_contains (seen, table[index].id))
      g_ptr_array_add (out, (gpointer)table[index].id);
  return out;
}

gint64
dw_health_monitor_last_step (DwHealthMonitor *monitor, const char *tag)
{
  SeriesState *state = g_hash_table_lookup (monitor->series, tag);
  return state && state->has_last ? state->last_step : G_MININT64;
}

GPtrArray *
dw_health_check_series (const char *canonical, const gint64 *steps, const double *values, gsize n)
{
  g_autoptr (DwHealthMonitor) m = dw_health_monitor_new ();
  const char *tag = canonical ? canonical : "series";
  g_ptr_array_unref (dw_health_monitor_feed (m, canonical, tag, steps, values, n));
  return dw_health_monitor_get_events (m);
}
