/* dw-canonical.c — the canonical metric table and the key table of every verl release and slime
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What each key means in each release is restated in docs/HEALTH.md §1–§3 (read from the
 * releases' code and checked against their golden outputs in tests/metrics). Adding a key is one
 * row of `keys[]`.
 */
#include "dw-canonical.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_(s) (s)

/* ------------------------------------------------------------------------------------------ */
/* generations                                                                                  */

typedef enum
{
  GEN_VERL_0_5 = 0, /* before 0.6.0: no rollout-correction keys */
  GEN_VERL_0_6_0,   /* mismatch_helper, `mismatch/` prefix */
  GEN_VERL_0_7_0,   /* 0.6.1 and 0.7.0: `rollout_corr/`, one RS level (ratio bounds) + veto */
  GEN_VERL_0_7_1,   /* per-option RS (k1/k2/k3), IS metrics of the raw ratio */
  GEN_VERL_0_8_0,   /* IS metrics of the applied weights, IcePop, rollout_is_oob_ratio */
  GEN_VERL_0_9_0,   /* as 0.8.0, sequence high/low fractions of the raw per-row mean */
  GEN_SLIME,
  N_GENS
} Gen;

static const char *const gen_names[N_GENS + 1] = {
  "verl-0.5.0", "verl-0.6.0", "verl-0.7.0", "verl-0.7.1", "verl-0.8.0", "verl-0.9.0", "slime", NULL,
};

/* verl commits whose helper a release ships, and the commits older Driftwatch names stood for
 * (golden/README.md). */
static const struct
{
  const char *commit;
  Gen gen;
} commit_gens[] = {
  { "21271aabb", GEN_VERL_0_6_0 }, { "5d378b5f9", GEN_VERL_0_6_0 }, { "4f1c489e4", GEN_VERL_0_6_0 },
  { "4424616d7", GEN_VERL_0_6_0 }, { "418f964ab", GEN_VERL_0_7_0 }, { "2c6c65cb0", GEN_VERL_0_7_0 },
  { "504696245", GEN_VERL_0_7_0 }, { "5d429bd80", GEN_VERL_0_7_0 }, { "2a36450b7", GEN_VERL_0_7_0 },
  { "2f2996b7d", GEN_VERL_0_7_0 }, { "518bada21", GEN_VERL_0_7_0 }, { "97eac9048", GEN_VERL_0_7_1 },
  { "b178a3cd5", GEN_VERL_0_7_1 }, { "d2916f5a0", GEN_VERL_0_8_0 }, { "7fbc00a9c", GEN_VERL_0_9_0 },
  { "1dda039b9", GEN_VERL_0_9_0 },
};

#define GEN_UNKNOWN N_GENS

/* A release number → its generation. */
static Gen
dw_canonical_gen_for_version (guint major, guint minor, guint micro)
{
  guint version = major * 10000 + minor * 100 + micro;

  if (version < 600)
    return GEN_VERL_0_5;
  if (version < 601)
    return GEN_VERL_0_6_0;
  if (version < 701)
    return GEN_VERL_0_7_0;
  if (version < 800)
    return GEN_VERL_0_7_1;
  if (version < 900)
    return GEN_VERL_0_8_0;
  return GEN_VERL_0_9_0;
}

/* "0.8.0", "0.8", "0.9.0.post1", "0.7.1rc2" → the generation; GEN_UNKNOWN when not a version. */
static Gen
dw_canonical_gen_for_version_text (const char *text)
{
  guint parts[3] = { 0, 0, 0 };
  guint n_parts = 0;
  const char *cursor = text;

  while (n_parts < 3 && g_ascii_isdigit (*cursor))
    {
      char *end;
      guint64 part = g_ascii_strtoull (cursor, &end, 10);

      if (part > 1000)
        return GEN_UNKNOWN;
      parts[n_parts++] = (guint)part;
      cursor = end;
      if (*cursor != '.' || !g_ascii_isdigit (cursor[1]))
        break;
      cursor++;
    }
  if (n_parts < 2)
    return GEN_UNKNOWN;
  return dw_canonical_gen_for_version (parts[0], parts[1], parts[2]);
}

static Gen
dw_canonical_gen_parse (const char *generation)
{
  const char *rest;

  if (generation == NULL || *generation == '\0' || g_ascii_strcasecmp (generation, "unknown") == 0)
    return GEN_UNKNOWN;
  for (guint g = 0; g < N_GENS; g++)
    if (strcmp (generation, gen_names[g]) == 0)
      return (Gen)g;
  if (g_ascii_strncasecmp (generation, "slime", 5) == 0)
    return GEN_SLIME;
  if (g_ascii_strcasecmp (generation, "verl") == 0)
    return GEN_VERL_0_9_0;
  for (guint index = 0; index < G_N_ELEMENTS (commit_gens); index++)
    if (strlen (generation) >= 7 && g_str_has_prefix (commit_gens[index].commit, generation))
      return commit_gens[index].gen;
  rest = generation;
  if (g_ascii_strncasecmp (rest, "verl", 4) == 0)
    {
      rest += 4;
      while (*rest == '-' || *rest == ' ' || *rest == '=' || *rest == '_')
        rest++;
      /* the correction core's names of commits between releases: "verl-2f2996b7d" */
      for (guint index = 0; index < G_N_ELEMENTS (commit_gens); index++)
        if (strlen (rest) >= 7 && g_str_has_prefix (commit_gens[index].commit, rest))
          return commit_gens[index].gen;
    }
  if (*rest == 'v' || *rest == 'V')
    rest++;
  return dw_canonical_gen_for_version_text (rest);
}

const char *const *
dw_canonical_generations (guint *n_generations)
{
  if (n_generations != NULL)
    *n_generations = N_GENS;
  return gen_names;
}

const char *
dw_canonical_generation (const char *generation)
{
  Gen gen = dw_canonical_gen_parse (generation);

  return gen == GEN_UNKNOWN ? NULL : gen_names[gen];
}

/* ------------------------------------------------------------------------------------------ */
/* canonical metrics                                                                            */

static const DwCanonicalMetric metrics[] = {
  /* importance-sampling weights as the correction applies them */
  { "is_mean", N_ ("IS weight mean (applied weights)"), "", 1.0, FALSE, TRUE },
  { "is_std", N_ ("IS weight std"), "", 0.0, FALSE, TRUE },
  { "is_max", N_ ("IS weight max (applied weights)"), "", 1.0, TRUE, TRUE },
  { "is_min", N_ ("IS weight min (applied weights)"), "", 1.0, TRUE, TRUE },
  { "ess", N_ ("Effective sample size"), "fraction", 1.0, FALSE, TRUE },
  { "is_seq_mean", N_ ("Per-sequence IS weight mean (applied)"), "", 1.0, FALSE, TRUE },
  { "is_seq_std", N_ ("Per-sequence IS weight std (applied)"), "", 0.0, FALSE, TRUE },
  { "is_seq_max", N_ ("Per-sequence IS weight max (applied)"), "", 1.0, TRUE, TRUE },
  { "is_seq_min", N_ ("Per-sequence IS weight min (applied)"), "", 1.0, TRUE, TRUE },
  { "is_seq_max_deviation", N_ ("Per-sequence IS weight max |w − 1| (applied)"), "", 0.0, TRUE,
    TRUE },
  { "is_seq_fraction_high", N_ ("Sequences whose applied weight is above the IS bound"), "fraction",
    0.0, FALSE, TRUE },
  { "is_seq_fraction_low", N_ ("Sequences whose applied weight is below the lower bound"),
    "fraction", 0.0, FALSE, TRUE },
  { "is_oob_fraction", N_ ("Tokens outside the IS bounds (weight truncated or zeroed)"), "fraction",
    0.0, FALSE, TRUE },
  { "is_oob_seq_fraction", N_ ("Sequences outside the IS bounds (weights zeroed)"), "fraction", 0.0,
    FALSE, TRUE },
  { "is_batch_norm_factor", N_ ("IS batch-normalisation factor"), "", 1.0, FALSE, TRUE },
  { "is_final_mean", N_ ("IS weight mean after batch normalisation"), "", 1.0, FALSE, TRUE },
  { "is_final_max", N_ ("IS weight max after batch normalisation"), "", 1.0, TRUE, TRUE },
  { "is_final_min", N_ ("IS weight min after batch normalisation"), "", 1.0, TRUE, TRUE },
  /* the raw ratio π_train / π_rollout, before any bound */
  { "is_raw_mean", N_ ("Raw IS ratio mean"), "", 1.0, FALSE, TRUE },
  { "is_raw_max", N_ ("Raw IS ratio max"), "", 1.0, TRUE, TRUE },
  { "is_raw_min", N_ ("Raw IS ratio min"), "", 1.0, TRUE, TRUE },
  { "is_raw_abs_deviation", N_ ("Mean |raw IS ratio − 1|"), "", 0.0, TRUE, TRUE },
  { "is_raw_fraction_high", N_ ("Raw IS ratios above the upper bound"), "fraction", 0.0, FALSE,
    TRUE },
  { "is_raw_fraction_low", N_ ("Raw IS ratios below the lower bound"), "fraction", 0.0, FALSE,
    TRUE },
  { "is_raw_seq_mean", N_ ("Per-sequence raw IS ratio mean"), "", 1.0, FALSE, TRUE },
  { "is_raw_seq_std", N_ ("Per-sequence raw IS ratio std"), "", 0.0, FALSE, TRUE },
  { "is_raw_seq_max", N_ ("Per-sequence raw IS ratio max"), "", 1.0, TRUE, TRUE },
  { "is_raw_seq_min", N_ ("Per-sequence raw IS ratio min"), "", 1.0, TRUE, TRUE },
  { "is_raw_seq_max_deviation", N_ ("Per-sequence raw IS ratio max |r − 1|"), "", 0.0, TRUE, TRUE },
  { "is_raw_seq_fraction_high", N_ ("Sequences whose raw ratio is above the upper bound"),
    "fraction", 0.0, FALSE, TRUE },
  { "is_raw_seq_fraction_low", N_ ("Sequences whose raw ratio is below the lower bound"),
    "fraction", 0.0, FALSE, TRUE },
  { "is_raw_p25", N_ ("Raw IS ratio, 25th percentile"), "", 1.0, FALSE, TRUE },
  { "is_raw_p50", N_ ("Raw IS ratio, median"), "", 1.0, FALSE, TRUE },
  { "is_raw_p75", N_ ("Raw IS ratio, 75th percentile"), "", 1.0, FALSE, TRUE },
  { "is_raw_p95", N_ ("Raw IS ratio, 95th percentile"), "", 1.0, FALSE, TRUE },
  { "is_raw_p99", N_ ("Raw IS ratio, 99th percentile"), "", 1.0, FALSE, TRUE },
  /* rejection sampling and veto */
  { "rs_masked_fraction", N_ ("Rejected token fraction"), "fraction", 0.0, FALSE, TRUE },
  { "rs_seq_masked_fraction", N_ ("Rejected sequence fraction"), "fraction", 0.0, FALSE, TRUE },
  { "rs_masked_fraction_high", N_ ("Tokens rejected above the RS upper bound"), "fraction", 0.0,
    FALSE, TRUE },
  { "rs_masked_fraction_low", N_ ("Tokens rejected below the RS lower bound"), "fraction", 0.0,
    FALSE, TRUE },
  { "rs_option_masked_fraction", N_ ("Tokens rejected by one RS option"), "fraction", 0.0, FALSE,
    TRUE },
  { "rs_option_seq_masked_fraction", N_ ("Sequences rejected by one RS option"), "fraction", 0.0,
    FALSE, TRUE },
  { "rs_stat_mean", N_ ("RS statistic mean"), "", 0.0, FALSE, TRUE },
  { "rs_stat_std", N_ ("RS statistic std"), "", 0.0, FALSE, TRUE },
  { "rs_stat_max", N_ ("RS statistic max"), "", 0.0, FALSE, TRUE },
  { "rs_stat_min", N_ ("RS statistic min"), "", 0.0, FALSE, TRUE },
  { "rs_stat_fraction_high", N_ ("RS statistic above its upper bound"), "fraction", 0.0, FALSE,
    TRUE },
  { "rs_stat_fraction_low", N_ ("RS statistic below its lower bound"), "fraction", 0.0, FALSE,
    TRUE },
  { "rs_stat_seq_mean", N_ ("RS statistic, per-sequence mean"), "", 0.0, FALSE, TRUE },
  { "rs_stat_seq_std", N_ ("RS statistic, per-sequence std"), "", 0.0, FALSE, TRUE },
  { "rs_stat_seq_max", N_ ("RS statistic, per-sequence max"), "", 0.0, FALSE, TRUE },
  { "rs_stat_seq_min", N_ ("RS statistic, per-sequence min"), "", 0.0, FALSE, TRUE },
  { "rs_stat_seq_max_deviation", N_ ("RS statistic, per-sequence max |s|"), "", 0.0, FALSE, TRUE },
  { "rs_stat_seq_fraction_high", N_ ("Sequences whose RS statistic is above its bound"), "fraction",
    0.0, FALSE, TRUE },
  { "rs_stat_seq_fraction_low", N_ ("Sequences whose RS statistic is below its lower bound"),
    "fraction", 0.0, FALSE, TRUE },
  { "rs_ratio_mean", N_ ("RS ratio mean"), "", 1.0, FALSE, TRUE },
  { "rs_ratio_std", N_ ("RS ratio std"), "", 0.0, FALSE, TRUE },
  { "rs_ratio_max", N_ ("RS ratio max"), "", 1.0, TRUE, TRUE },
  { "rs_ratio_min", N_ ("RS ratio min"), "", 1.0, TRUE, TRUE },
  { "rs_ratio_ess", N_ ("RS ratio effective sample size"), "fraction", 1.0, FALSE, TRUE },
  { "rs_ratio_fraction_high", N_ ("RS ratios above the upper bound"), "fraction", 0.0, FALSE,
    TRUE },
  { "rs_ratio_fraction_low", N_ ("RS ratios below the lower bound"), "fraction", 0.0, FALSE, TRUE },
  { "rs_ratio_seq_mean", N_ ("Per-sequence RS ratio mean"), "", 1.0, FALSE, TRUE },
  { "rs_ratio_seq_std", N_ ("Per-sequence RS ratio std"), "", 0.0, FALSE, TRUE },
  { "rs_ratio_seq_max", N_ ("Per-sequence RS ratio max"), "", 1.0, TRUE, TRUE },
  { "rs_ratio_seq_min", N_ ("Per-sequence RS ratio min"), "", 1.0, TRUE, TRUE },
  { "rs_ratio_seq_max_deviation", N_ ("Per-sequence RS ratio max |ρ − 1|"), "", 0.0, TRUE, TRUE },
  { "rs_ratio_seq_fraction_high", N_ ("Sequences whose RS ratio is above the upper bound"),
    "fraction", 0.0, FALSE, TRUE },
  { "rs_ratio_seq_fraction_low", N_ ("Sequences whose RS ratio is below the lower bound"),
    "fraction", 0.0, FALSE, TRUE },
  { "veto_fraction", N_ ("Veto fraction"), "fraction", 0.0, FALSE, TRUE },
  { "catastrophic_fraction", N_ ("Catastrophic token fraction"), "fraction", 0.0, FALSE, TRUE },
  /* off-policy diagnostics */
  { "kl", N_ ("KL (rollout − training)"), "nats", 0.0, TRUE, TRUE },
  { "k3_kl", N_ ("K3 KL"), "nats", 0.0, TRUE, TRUE },
  { "ppl_ratio", N_ ("PPL ratio"), "", 1.0, FALSE, TRUE },
  { "log_ppl_abs_diff", N_ ("|log PPL difference|"), "nats", 0.0, TRUE, TRUE },
  { "log_ppl_diff", N_ ("Log PPL difference"), "nats", 0.0, FALSE, FALSE },
  { "log_ppl_diff_max", N_ ("Log PPL difference, max over sequences"), "nats", 0.0, FALSE, FALSE },
  { "log_ppl_diff_min", N_ ("Log PPL difference, min over sequences"), "nats", 0.0, FALSE, FALSE },
  { "chi2_token", N_ ("χ² (token)"), "", 0.0, TRUE, TRUE },
  { "chi2_seq", N_ ("χ² (sequence)"), "", 0.0, TRUE, TRUE },
  { "training_ppl", N_ ("Training PPL"), "", NAN, FALSE, FALSE },
  { "rollout_ppl", N_ ("Rollout PPL"), "", NAN, FALSE, FALSE },
  { "training_log_ppl", N_ ("Training log PPL"), "nats", NAN, FALSE, FALSE },
  { "rollout_log_ppl", N_ ("Rollout log PPL"), "nats", NAN, FALSE, FALSE },
  { "logprob_abs_diff", N_ ("Mean |log-prob difference|"), "nats", 0.0, TRUE, TRUE },
  { "probs_diff_mean", N_ ("Mean |probability difference|"), "", 0.0, TRUE, TRUE },
  { "probs_diff_max", N_ ("Max |probability difference|"), "", 0.0, TRUE, TRUE },
  { "probs_diff_std", N_ ("Std of |probability difference|"), "", 0.0, TRUE, TRUE },
  { "probs_diff_valid", N_ ("Probability difference computed"), "", 1.0, FALSE, FALSE },
  { "probs_pearson", N_ ("Train/rollout probability correlation"), "", 1.0, FALSE, FALSE },
  { "policy_ratio", N_ ("Current/old policy ratio"), "", 1.0, FALSE, FALSE },
  /* training signals */
  { "reward", N_ ("Reward"), "", NAN, FALSE, FALSE },
  { "response_length", N_ ("Response length"), "tokens", NAN, FALSE, FALSE },
  { "entropy", N_ ("Entropy"), "nats", NAN, FALSE, FALSE },
  { "grad_norm", N_ ("Gradient norm"), "", NAN, TRUE, FALSE },
  { "pg_clipfrac", N_ ("PG clip fraction"), "fraction", NAN, FALSE, FALSE },
  { "ppo_kl", N_ ("PPO KL"), "nats", 0.0, TRUE, FALSE },
};

/* ------------------------------------------------------------------------------------------ */
/* the key table                                                                                */

typedef struct
{
  const char *pattern; /* "*" = one RS option name */
  Gen from, to;        /* generations that log the key with this meaning (inclusive) */
  const char *canonical;
  const char *meaning;
} KeyRow;

#define V05  GEN_VERL_0_5
#define V060 GEN_VERL_0_6_0
#define V070 GEN_VERL_0_7_0
#define V071 GEN_VERL_0_7_1
#define V080 GEN_VERL_0_8_0
#define V090 GEN_VERL_0_9_0
#define SL   GEN_SLIME

/* Repeated meanings (one string each, so translators see them once). */
#define M_KL N_ ("Token-weighted mean of log π_rollout − log π_train (can be negative).")
#define M_K3 \
  N_ ("Token-weighted mean of exp(ℓ) − ℓ − 1, ℓ = log π_train − log π_rollout, unclamped.")
#define M_PPL_T  N_ ("Mean over sequences of exp(−mean training log-prob).")
#define M_PPL_R  N_ ("Mean over sequences of exp(−mean rollout log-prob).")
#define M_LPPL_T N_ ("Mean over sequences of −mean training log-prob.")
#define M_LPPL_R N_ ("Mean over sequences of −mean rollout log-prob.")
#define M_LPD    N_ ("Mean over sequences of (mean rollout − mean training log-prob).")
#define M_LPAD   N_ ("Mean over sequences of |mean rollout − mean training log-prob|.")
#define M_LPDMAX N_ ("Largest per-sequence log PPL difference of the batch.")
#define M_LPDMIN N_ ("Smallest per-sequence log PPL difference of the batch.")
#define M_PPLR   N_ ("Mean over sequences of exp(per-sequence log PPL difference).")
#define M_CHI2T  N_ ("Token-weighted mean of exp(clamp(ℓ, ±20))² − 1.")
#define M_CHI2S  N_ ("Mean over sequences of exp(2·clamp(Σℓ, ±20)) − 1.")
#define M_RAW_MEAN                                                                             \
  N_ ("Mean of the raw ratio exp(clamp(ℓ, ±20)) before truncation, token-weighted (at "     \
      "sequence level every token carries its sequence's ratio); one outlying token can move " \
      "it by orders of magnitude.")
#define M_RAW_MAX N_ ("Largest raw ratio of the batch (sequence level: of the sequence log-sums).")
#define M_RAW_MIN N_ ("Smallest raw ratio of the batch (sequence level: of the sequence log-sums).")
#define M_STD_RAW N_ ("Std of the raw ratios clamped to [1/U, U] (U = rollout_is_threshold).")
#define M_ESS_RAW N_ ("1 / mean((u/mean u)²) of the raw ratios u clamped to [1/U, U]; a fraction.")
#define M_FRAC_HI N_ ("Fraction of tokens (sequence level: sequences) whose raw ratio exceeds U.")
#define M_FRAC_LO                                                                          \
  N_ ("Fraction of tokens (sequence level: sequences) whose raw ratio is below the lower " \
      "bound (1/U, or L with IcePop).")
#define M_RAW_SEQ_MEAN N_ ("Mean over all sequences of each sequence's mean raw ratio.")
#define M_RAW_SEQ_STD  N_ ("Std (N−1) over sequences of each sequence's mean raw ratio.")
#define M_RAW_SEQ_MAX  N_ ("Largest per-sequence mean raw ratio.")
#define M_RAW_SEQ_MIN  N_ ("Smallest per-sequence mean raw ratio.")
#define M_RAW_SEQ_DEV  N_ ("Largest |per-sequence mean raw ratio − 1|.")
#define M_RAW_SEQ_HI   N_ ("Fraction of sequences whose mean raw ratio exceeds U.")
#define M_RAW_SEQ_LO   N_ ("Fraction of sequences whose mean raw ratio is below the lower bound.")
#define M_VETO \
  N_ ("Fraction of sequences vetoed: they hold a token with ℓ below log(veto threshold).")
#define M_CATA N_ ("Fraction of tokens with ℓ below log(veto threshold).")
#define M_BN \
  N_ ("The mean the applied weights were divided by (1 when batch normalisation is off).")
#define M_RS_TOK N_ ("Fraction of valid tokens the rejection step masked out of the loss.")
#define M_RS_SEQ N_ ("Fraction of sequences with at least one rejected token.")
#define M_OPT    N_ ("Per RS option (*): ")

static const KeyRow keys[] = {
  /* verl 0.6.0: mismatch_helper, prefix mismatch/ */
  { "mismatch/mismatch_kl", V060, V060, "kl", M_KL },
  { "mismatch/mismatch_k3_kl", V060, V060, "k3_kl", M_K3 },
  { "mismatch/mismatch_training_ppl", V060, V060, "training_ppl", M_PPL_T },
  { "mismatch/mismatch_training_log_ppl", V060, V060, "training_log_ppl", M_LPPL_T },
  { "mismatch/mismatch_rollout_ppl", V060, V060, "rollout_ppl", M_PPL_R },
  { "mismatch/mismatch_rollout_log_ppl", V060, V060, "rollout_log_ppl", M_LPPL_R },
  { "mismatch/mismatch_log_ppl_diff", V060, V060, "log_ppl_diff", M_LPD },
  { "mismatch/mismatch_log_ppl_abs_diff", V060, V060, "log_ppl_abs_diff", M_LPAD },
  { "mismatch/mismatch_log_ppl_diff_max", V060, V060, "log_ppl_diff_max", M_LPDMAX },
  { "mismatch/mismatch_log_ppl_diff_min", V060, V060, "log_ppl_diff_min", M_LPDMIN },
  { "mismatch/mismatch_ppl_ratio", V060, V060, "ppl_ratio", M_PPLR },
  { "mismatch/rollout_is_mean", V060, V060, "is_raw_mean", M_RAW_MEAN },
  { "mismatch/rollout_is_max", V060, V060, "is_raw_max", M_RAW_MAX },
  { "mismatch/rollout_is_min", V060, V060, "is_raw_min", M_RAW_MIN },
  { "mismatch/rollout_is_std", V060, V060, "is_std", M_STD_RAW },
  { "mismatch/rollout_is_eff_sample_size", V060, V060, "ess", M_ESS_RAW },
  { "mismatch/rollout_is_ratio_fraction_high", V060, V060, "is_raw_fraction_high", M_FRAC_HI },
  { "mismatch/rollout_is_ratio_fraction_low", V060, V060, "is_raw_fraction_low", M_FRAC_LO },
  { "mismatch/rollout_is_seq_mean", V060, V060, "is_raw_seq_mean", M_RAW_SEQ_MEAN },
  { "mismatch/rollout_is_seq_std", V060, V060, "is_raw_seq_std", M_RAW_SEQ_STD },
  { "mismatch/rollout_is_seq_max", V060, V060, "is_raw_seq_max", M_RAW_SEQ_MAX },
  { "mismatch/rollout_is_seq_min", V060, V060, "is_raw_seq_min", M_RAW_SEQ_MIN },
  { "mismatch/rollout_is_seq_max_deviation", V060, V060, "is_raw_seq_max_deviation",
    M_RAW_SEQ_DEV },
  { "mismatch/rollout_is_seq_fraction_high", V060, V060, "is_raw_seq_fraction_high", M_RAW_SEQ_HI },
  { "mismatch/rollout_is_seq_fraction_low", V060, V060, "is_raw_seq_fraction_low", M_RAW_SEQ_LO },
  { "mismatch/rollout_is_veto_fraction", V060, V060, "veto_fraction", M_VETO },
  { "mismatch/rollout_is_catastrophic_token_fraction", V060, V060, "catastrophic_fraction",
    M_CATA },
  { "mismatch/rollout_is_masked_fraction", V060, V060, "rs_masked_fraction",
    N_ ("Mode mask: fraction of tokens masked out because their ratio is outside [L, U].") },
  { "mismatch/rollout_is_seq_masked_fraction", V060, V060, "rs_seq_masked_fraction",
    N_ ("Mode mask: fraction of sequences with a token masked out of bounds.") },
  { "mismatch/rollout_is_clipped_fraction", V060, V060, "is_oob_fraction",
    N_ ("Mode clip: fraction of tokens whose weight was zeroed (ratio outside [L, U]).") },
  { "mismatch/rollout_is_seq_clipped_fraction", V060, V060, "is_oob_seq_fraction",
    N_ ("Mode clip: fraction of sequences whose weights were zeroed.") },
  { "mismatch/rollout_is_p25", V060, V060, "is_raw_p25",
    N_ ("25th percentile of the raw ratios.") },
  { "mismatch/rollout_is_p50", V060, V060, "is_raw_p50", N_ ("Median of the raw ratios.") },
  { "mismatch/rollout_is_p75", V060, V060, "is_raw_p75",
    N_ ("75th percentile of the raw ratios.") },
  { "mismatch/rollout_is_p95", V060, V060, "is_raw_p95",
    N_ ("95th percentile of the raw ratios.") },
  { "mismatch/rollout_is_p99", V060, V060, "is_raw_p99",
    N_ ("99th percentile of the raw ratios.") },

  /* verl 0.6.1 …: rollout_corr/ off-policy diagnostics, unchanged since */
  { "rollout_corr/kl", V070, V090, "kl", M_KL },
  { "rollout_corr/k3_kl", V070, V090, "k3_kl", M_K3 },
  { "rollout_corr/training_ppl", V070, V090, "training_ppl", M_PPL_T },
  { "rollout_corr/training_log_ppl", V070, V090, "training_log_ppl", M_LPPL_T },
  { "rollout_corr/rollout_ppl", V070, V090, "rollout_ppl", M_PPL_R },
  { "rollout_corr/rollout_log_ppl", V070, V090, "rollout_log_ppl", M_LPPL_R },
  { "rollout_corr/log_ppl_diff", V070, V090, "log_ppl_diff", M_LPD },
  { "rollout_corr/log_ppl_abs_diff", V070, V090, "log_ppl_abs_diff", M_LPAD },
  { "rollout_corr/log_ppl_diff_max", V070, V090, "log_ppl_diff_max", M_LPDMAX },
  { "rollout_corr/log_ppl_diff_min", V070, V090, "log_ppl_diff_min", M_LPDMIN },
  { "rollout_corr/ppl_ratio", V070, V090, "ppl_ratio", M_PPLR },
  { "rollout_corr/chi2_token", V070, V090, "chi2_token", M_CHI2T },
  { "rollout_corr/chi2_seq", V070, V090, "chi2_seq", M_CHI2S },

  /* IS metrics up to 0.7.1: of the raw weights */
  { "rollout_corr/rollout_is_mean", V070, V071, "is_raw_mean", M_RAW_MEAN },
  { "rollout_corr/rollout_is_max", V070, V071, "is_raw_max", M_RAW_MAX },
  { "rollout_corr/rollout_is_min", V070, V071, "is_raw_min", M_RAW_MIN },
  { "rollout_corr/rollout_is_std", V070, V071, "is_std", M_STD_RAW },
  { "rollout_corr/rollout_is_eff_sample_size", V070, V071, "ess", M_ESS_RAW },
  { "rollout_corr/rollout_is_seq_mean", V070, V071, "is_raw_seq_mean", M_RAW_SEQ_MEAN },
  { "rollout_corr/rollout_is_seq_std", V070, V071, "is_raw_seq_std", M_RAW_SEQ_STD },
  { "rollout_corr/rollout_is_seq_max", V070, V071, "is_raw_seq_max", M_RAW_SEQ_MAX },
  { "rollout_corr/rollout_is_seq_min", V070, V071, "is_raw_seq_min", M_RAW_SEQ_MIN },
  { "rollout_corr/rollout_is_seq_max_deviation", V070, V071, "is_raw_seq_max_deviation",
    M_RAW_SEQ_DEV },
  { "rollout_corr/rollout_is_seq_fraction_high", V070, V071, "is_raw_seq_fraction_high",
    M_RAW_SEQ_HI },
  { "rollout_corr/rollout_is_seq_fraction_low", V070, V071, "is_raw_seq_fraction_low",
    M_RAW_SEQ_LO },
  /* from 0.8.0: of the applied weights (docs/HEALTH.md §1) */
  { "rollout_corr/rollout_is_mean", V080, V090, "is_mean",
    N_ ("Mean of the applied weights (truncated to U, or zeroed outside [L, U] with IcePop), "
        "before batch normalisation, token-weighted; with TIS it cannot exceed U.") },
  { "rollout_corr/rollout_is_max", V080, V090, "is_max",
    N_ ("Token level: largest applied weight (≤ U). Sequence level: verl still logs the raw "
        "sequence ratio exp(min(max Σℓ, 20)) here.") },
  { "rollout_corr/rollout_is_min", V080, V090, "is_min",
    N_ ("Token level: smallest applied weight (0 when IcePop zeroed a token). Sequence level: "
        "the raw exp(min Σℓ).") },
  { "rollout_corr/rollout_is_std", V080, V090, "is_std",
    N_ ("Std of the applied weights clamped to [0, U].") },
  { "rollout_corr/rollout_is_eff_sample_size", V080, V090, "ess",
    N_ ("1 / mean((u/mean u)²) of the applied weights u clamped to [0, U]; a fraction.") },
  { "rollout_corr/rollout_is_seq_mean", V080, V090, "is_seq_mean",
    N_ ("Mean over all sequences of each sequence's mean applied weight.") },
  { "rollout_corr/rollout_is_seq_std", V080, V090, "is_seq_std",
    N_ ("Std (N−1) over sequences of each sequence's mean applied weight.") },
  { "rollout_corr/rollout_is_seq_max", V080, V090, "is_seq_max",
    N_ ("Largest per-sequence mean applied weight.") },
  { "rollout_corr/rollout_is_seq_min", V080, V090, "is_seq_min",
    N_ ("Smallest per-sequence mean applied weight.") },
  { "rollout_corr/rollout_is_seq_max_deviation", V080, V090, "is_seq_max_deviation",
    N_ ("Largest |per-sequence mean applied weight − 1|.") },
  { "rollout_corr/rollout_is_seq_fraction_high", V080, V080, "is_seq_fraction_high",
    N_ ("Fraction of sequences whose mean applied weight exceeds U (always 0 under TIS).") },
  { "rollout_corr/rollout_is_seq_fraction_low", V080, V080, "is_seq_fraction_low",
    N_ ("Fraction of sequences whose mean applied weight is below the lower bound.") },
  { "rollout_corr/rollout_is_seq_fraction_high", V090, V090, "is_raw_seq_fraction_high",
    M_RAW_SEQ_HI },
  { "rollout_corr/rollout_is_seq_fraction_low", V090, V090, "is_raw_seq_fraction_low",
    M_RAW_SEQ_LO },
  { "rollout_corr/rollout_is_oob_ratio", V080, V090, "is_oob_fraction",
    N_ ("IcePop: fraction of tokens whose raw ratio is outside [L, U]; their weights are 0.") },
  /* raw-ratio fractions and batch normalisation: the same in every rollout_corr/ release */
  { "rollout_corr/rollout_is_ratio_fraction_high", V070, V090, "is_raw_fraction_high", M_FRAC_HI },
  { "rollout_corr/rollout_is_ratio_fraction_low", V070, V090, "is_raw_fraction_low", M_FRAC_LO },
  { "rollout_corr/rollout_is_batch_norm_factor", V070, V090, "is_batch_norm_factor", M_BN },

  /* 0.6.1 and 0.7.0: one RS level on the ratio, and the veto */
  { "rollout_corr/rollout_is_veto_fraction", V070, V070, "veto_fraction", M_VETO },
  { "rollout_corr/rollout_is_catastrophic_token_fraction", V070, V070, "catastrophic_fraction",
    M_CATA },
  { "rollout_corr/rollout_rs_mean", V070, V070, "rs_ratio_mean",
    N_ ("Mean of the RS ratio ρ (token, sequence or geometric), token-weighted.") },
  { "rollout_corr/rollout_rs_max", V070, V070, "rs_ratio_max", N_ ("Largest RS ratio.") },
  { "rollout_corr/rollout_rs_min", V070, V070, "rs_ratio_min", N_ ("Smallest RS ratio.") },
  { "rollout_corr/rollout_rs_std", V070, V070, "rs_ratio_std",
    N_ ("Std of the RS ratios clamped to [L, U].") },
  { "rollout_corr/rollout_rs_eff_sample_size", V070, V070, "rs_ratio_ess",
    N_ ("Effective sample size of the RS ratios clamped to [L, U].") },
  { "rollout_corr/rollout_rs_ratio_fraction_high", V070, V070, "rs_ratio_fraction_high",
    N_ ("Fraction of tokens (sequence levels: sequences) whose RS ratio exceeds U.") },
  { "rollout_corr/rollout_rs_ratio_fraction_low", V070, V070, "rs_ratio_fraction_low",
    N_ ("Fraction of tokens (sequence levels: sequences) whose RS ratio is below L.") },
  { "rollout_corr/rollout_rs_seq_mean", V070, V070, "rs_ratio_seq_mean",
    N_ ("Mean over sequences of each sequence's mean RS ratio.") },
  { "rollout_corr/rollout_rs_seq_std", V070, V070, "rs_ratio_seq_std",
    N_ ("Std over sequences of each sequence's mean RS ratio.") },
  { "rollout_corr/rollout_rs_seq_max", V070, V070, "rs_ratio_seq_max",
    N_ ("Largest per-sequence mean RS ratio.") },
  { "rollout_corr/rollout_rs_seq_min", V070, V070, "rs_ratio_seq_min",
    N_ ("Smallest per-sequence mean RS ratio.") },
  { "rollout_corr/rollout_rs_seq_max_deviation", V070, V070, "rs_ratio_seq_max_deviation",
    N_ ("Largest |per-sequence mean RS ratio − 1|.") },
  { "rollout_corr/rollout_rs_seq_fraction_high", V070, V070, "rs_ratio_seq_fraction_high",
    N_ ("Fraction of sequences whose mean RS ratio exceeds U.") },
  { "rollout_corr/rollout_rs_seq_fraction_low", V070, V070, "rs_ratio_seq_fraction_low",
    N_ ("Fraction of sequences whose mean RS ratio is below L.") },
  /* RS overall: every rollout_corr/ release */
  { "rollout_corr/rollout_rs_masked_fraction", V070, V090, "rs_masked_fraction", M_RS_TOK },
  { "rollout_corr/rollout_rs_seq_masked_fraction", V070, V090, "rs_seq_masked_fraction", M_RS_SEQ },
  /* 0.7.1 …: per RS option; * = token_k1 … seq_max_k3 */
  { "rollout_corr/rollout_rs_*_masked_fraction", V071, V090, "rs_option_masked_fraction",
    N_ ("Per RS option (*): fraction of valid tokens this option rejected.") },
  { "rollout_corr/rollout_rs_*_seq_masked_fraction", V071, V090, "rs_option_seq_masked_fraction",
    N_ ("Per RS option (*): fraction of non-empty sequences this option rejected.") },
  { "rollout_corr/rollout_rs_*_mean", V071, V090, "rs_stat_mean",
    N_ ("Per RS option (*): token-weighted mean of its k1/k2/k3 statistic.") },
  { "rollout_corr/rollout_rs_*_std", V071, V090, "rs_stat_std",
    N_ ("Per RS option (*): std of its statistic clamped to the bounds.") },
  { "rollout_corr/rollout_rs_*_max", V071, V090, "rs_stat_max",
    N_ ("Per RS option (*): largest statistic (tokens or sequences).") },
  { "rollout_corr/rollout_rs_*_min", V071, V090, "rs_stat_min",
    N_ ("Per RS option (*): smallest statistic (tokens or sequences).") },
  { "rollout_corr/rollout_rs_*_fraction_high", V071, V090, "rs_stat_fraction_high",
    N_ ("Per RS option (*): fraction of tokens or sequences above the upper bound.") },
  { "rollout_corr/rollout_rs_*_fraction_low", V071, V090, "rs_stat_fraction_low",
    N_ ("Per RS option (*): fraction below the lower bound (k1 only; else 0).") },
  { "rollout_corr/rollout_rs_*_seq_mean", V071, V090, "rs_stat_seq_mean",
    N_ ("Per RS option (*): mean over sequences of the per-sequence statistic.") },
  { "rollout_corr/rollout_rs_*_seq_std", V071, V090, "rs_stat_seq_std",
    N_ ("Per RS option (*): std (N−1) over sequences of the per-sequence statistic.") },
  { "rollout_corr/rollout_rs_*_seq_max", V071, V090, "rs_stat_seq_max",
    N_ ("Per RS option (*): largest per-sequence statistic.") },
  { "rollout_corr/rollout_rs_*_seq_min", V071, V090, "rs_stat_seq_min",
    N_ ("Per RS option (*): smallest per-sequence statistic.") },
  { "rollout_corr/rollout_rs_*_seq_max_deviation", V071, V090, "rs_stat_seq_max_deviation",
    N_ ("Per RS option (*): largest |per-sequence statistic|.") },
  { "rollout_corr/rollout_rs_*_seq_fraction_high", V071, V090, "rs_stat_seq_fraction_high",
    N_ ("Per RS option (*): fraction of sequences whose statistic is above the bound.") },
  { "rollout_corr/rollout_rs_*_seq_fraction_low", V071, V090, "rs_stat_seq_fraction_low",
    N_ ("Per RS option (*, k1 only): fraction of sequences below the lower bound.") },

  /* verl trainer-side debug metrics */
  { "training/rollout_probs_diff_mean", V05, V090, "probs_diff_mean",
    N_ ("Mean |exp(old log-prob) − exp(rollout log-prob)| (probabilities, not log-probs); verl's "
        "FAQ: < 0.005 normal, > 0.01 a precision problem.") },
  { "training/rollout_probs_diff_max", V05, V090, "probs_diff_max",
    N_ ("Largest |probability difference| of the batch.") },
  { "training/rollout_probs_diff_std", V05, V090, "probs_diff_std",
    N_ ("Std of the |probability difference|.") },
  { "training/rollout_probs_diff_valid", V060, V090, "probs_diff_valid",
    N_ ("1 when the probability differences could be computed.") },
  { "training/rollout_actor_probs_pearson_corr", V060, V090, "probs_pearson",
    N_ ("Pearson correlation of rollout and training token probabilities.") },

  /* verl training signals */
  { "critic/score/mean", V05, V090, "reward", N_ ("Mean task score of the batch.") },
  { "response_length/mean", V05, V090, "response_length", N_ ("Mean response length.") },
  { "actor/entropy", V05, V090, "entropy", N_ ("Mean token entropy of the policy.") },
  { "actor/entropy_loss", V05, V090, "entropy",
    N_ ("verl ≤ 0.3's name of the mean token entropy of the policy.") },
  { "actor/grad_norm", V05, V090, "grad_norm", N_ ("Actor gradient norm before clipping.") },
  { "actor/pg_clipfrac", V05, V090, "pg_clipfrac", N_ ("Fraction of PPO-clipped tokens.") },
  { "actor/ppo_kl", V05, V090, "ppo_kl", N_ ("KL between the current and the old policy.") },

  /* slime's built-in TIS / IcePop, per-sample means averaged over samples */
  { "train/tis", SL, SL, "is_raw_mean",
    N_ ("Mean of the raw ratio exp(old − rollout) (no safety clamp), not of the weights.") },
  { "train/tis_clipfrac", SL, SL, "is_oob_fraction",
    N_ ("Fraction of tokens whose weight differs from the raw ratio (outside [tis-clip-low, "
        "tis-clip]: truncated, or zeroed by IcePop).") },
  { "train/tis_abs", SL, SL, "is_raw_abs_deviation", N_ ("Mean |raw ratio − 1|.") },
  { "train/ois", SL, SL, "policy_ratio",
    N_ ("exp(−ppo_kl): current over old policy (1 on the first on-policy mini-batch).") },
  { "train/train_rollout_logprob_abs_diff", SL, SL, "logprob_abs_diff",
    N_ ("Mean |training − rollout log-prob| per token.") },
  /* slime mis.py, logged as train/mis_<name> */
  { "train/mis_kl", SL, SL, "kl", M_KL },
  { "train/mis_k3_kl", SL, SL, "k3_kl", M_K3 },
  { "train/mis_training_ppl", SL, SL, "training_ppl", M_PPL_T },
  { "train/mis_training_log_ppl", SL, SL, "training_log_ppl", M_LPPL_T },
  { "train/mis_rollout_ppl", SL, SL, "rollout_ppl", M_PPL_R },
  { "train/mis_rollout_log_ppl", SL, SL, "rollout_log_ppl", M_LPPL_R },
  { "train/mis_log_ppl_diff", SL, SL, "log_ppl_diff", M_LPD },
  { "train/mis_log_ppl_abs_diff", SL, SL, "log_ppl_abs_diff", M_LPAD },
  { "train/mis_ppl_ratio", SL, SL, "ppl_ratio", M_PPLR },
  { "train/mis_chi2_token", SL, SL, "chi2_token", M_CHI2T },
  { "train/mis_chi2_seq", SL, SL, "chi2_seq", M_CHI2S },
  { "train/mis_tis_weight_before_bound", SL, SL, "is_raw_mean",
    N_ ("Mean raw ratio exp(clamp(ℓ, ±20)) at the configured level, before the bound.") },
  { "train/mis_tis_weight_after_bound", SL, SL, "is_mean",
    N_ ("Mean weight after truncate/clip/mask, before batch normalisation.") },
  { "train/mis_is_ratio_mean_after_tis_rs", SL, SL, "is_mean",
    N_ ("Mean weight after the bound and rejection, before batch normalisation.") },
  { "train/mis_tis_truncate_fraction", SL, SL, "is_raw_fraction_high",
    N_ ("Truncate mode: fraction of tokens whose raw ratio exceeds the upper bound.") },
  { "train/mis_tis_clip_fraction_high", SL, SL, "is_raw_fraction_high",
    N_ ("Clip mode: fraction of tokens whose raw ratio exceeds the upper bound.") },
  { "train/mis_tis_clip_fraction_low", SL, SL, "is_raw_fraction_low",
    N_ ("Clip mode: fraction of tokens whose raw ratio is below the lower bound.") },
  { "train/mis_tis_mask_fraction_high", SL, SL, "is_raw_fraction_high",
    N_ ("Mask mode: fraction of tokens masked for a raw ratio above the upper bound.") },
  { "train/mis_tis_mask_fraction_low", SL, SL, "is_raw_fraction_low",
    N_ ("Mask mode: fraction of tokens masked for a raw ratio below the lower bound.") },
  { "train/mis_rs_mask_fraction_high", SL, SL, "rs_masked_fraction_high",
    N_ ("Fraction of tokens rejected for a ratio above the RS upper bound.") },
  { "train/mis_rs_mask_fraction_low", SL, SL, "rs_masked_fraction_low",
    N_ ("Fraction of tokens rejected for a ratio below the RS lower bound.") },
  { "train/mis_rs_catastrophic_seq_fraction", SL, SL, "veto_fraction", M_VETO },
  { "train/mis_rs_catastrophic_token_fraction", SL, SL, "catastrophic_fraction", M_CATA },
  { "train/mis_batch_norm_factor", SL, SL, "is_batch_norm_factor", M_BN },
  { "train/mis_is_ratio_mean_final", SL, SL, "is_final_mean",
    N_ ("Mean final weight (after batch normalisation).") },
  { "train/mis_is_ratio_min_final", SL, SL, "is_final_min",
    N_ ("Smallest final weight (after batch normalisation).") },
  { "train/mis_is_ratio_max_final", SL, SL, "is_final_max",
    N_ ("Largest final weight (after batch normalisation).") },
  /* slime training signals */
  { "train/grad_norm", SL, SL, "grad_norm", N_ ("Gradient norm.") },
  { "train/pg_clipfrac", SL, SL, "pg_clipfrac", N_ ("Fraction of PPO-clipped tokens.") },
  { "train/ppo_kl", SL, SL, "ppo_kl", N_ ("KL between the current and the old policy.") },
  { "train/entropy_loss", SL, SL, "entropy", N_ ("Mean token entropy of the policy.") },
  { "rollout/raw_reward", SL, SL, "reward", N_ ("Mean raw reward of the rollout.") },
  { "rollout/rewards", SL, SL, "reward", N_ ("Mean reward of the rollout.") },
  { "rollout/response_len/mean", SL, SL, "response_length", N_ ("Mean response length.") },
  { "rollout/response_lengths", SL, SL, "response_length", N_ ("Mean response length.") },
  { "rollout/entropy", SL, SL, "entropy", N_ ("Mean token entropy at rollout.") },
};

/* verl's RS options, the names a "*" in a key pattern stands for. */
static const char *const rs_options[] = {
  "token_k1",    "token_k2",    "token_k3",    "seq_sum_k1", "seq_sum_k2", "seq_sum_k3",
  "seq_mean_k1", "seq_mean_k2", "seq_mean_k3", "seq_max_k2", "seq_max_k3",
};

static gboolean
dw_canonical_is_rs_option (const char *text, gsize len)
{
  for (gsize index = 0; index < G_N_ELEMENTS (rs_options); index++)
    if (strlen (rs_options[index]) == len && strncmp (rs_options[index], text, len) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
dw_canonical_key_matches (const char *pattern, const char *key)
{
  const char *star = strchr (pattern, '*');
  gsize prefix_len, suffix_len, key_len;

  if (star == NULL)
    return strcmp (pattern, key) == 0;
  prefix_len = (gsize)(star - pattern);
  suffix_len = strlen (star + 1);
  key_len = strlen (key);
  if (key_len <= prefix_len + suffix_len || strncmp (key, pattern, prefix_len) != 0
      || strcmp (key + key_len - suffix_len, star + 1) != 0)
    return FALSE;
  return dw_canonical_is_rs_option (key + prefix_len, key_len - prefix_len - suffix_len);
}

/* The row @key means under @gen: the row covering @gen, else (unknown generation, or a key that
 * generation does not log) the row of the newest generation that logs it. */
static const KeyRow *
dw_canonical_find_row (const char *key, Gen gen)
{
  const KeyRow *newest = NULL;

  if (key == NULL)
    return NULL;
  for (gsize index = 0; index < G_N_ELEMENTS (keys); index++)
    {
      const KeyRow *row = &keys[index];

      if (!dw_canonical_key_matches (row->pattern, key))
        continue;
      if (gen != GEN_UNKNOWN && row->from <= gen && gen <= row->to)
        return row;
      if (newest == NULL || row->to > newest->to)
        newest = row;
    }
  return newest;
}

const char *
dw_canonical_for_key (const char *key, const char *generation)
{
  const KeyRow *row = dw_canonical_find_row (key, dw_canonical_gen_parse (generation));

  return row != NULL ? row->canonical : NULL;
}

const char *
dw_canonical_for_tag (const char *tag)
{
  return dw_canonical_for_key (tag, NULL);
}

gboolean
dw_canonical_describe_key (const char *key, const char *generation, DwCanonicalKeyInfo *info)
{
  /* "from – to" of every row, built once */
  static char *ranges[G_N_ELEMENTS (keys)];
  const KeyRow *row = dw_canonical_find_row (key, dw_canonical_gen_parse (generation));
  gsize index;

  if (row == NULL)
    return FALSE;
  index = (gsize)(row - keys);
  if (g_once_init_enter (&ranges[index]))
    {
      char *range = row->from == row->to
                      ? g_strdup (gen_names[row->from])
                      : g_strdup_printf ("%s – %s", gen_names[row->from], gen_names[row->to]);
      g_once_init_leave (&ranges[index], range);
    }
  if (info != NULL)
    {
      info->pattern = row->pattern;
      info->canonical = row->canonical;
      info->meaning = row->meaning;
      info->generations = ranges[index];
    }
  return TRUE;
}

const char *
dw_canonical_infer_generation (const char *const *key_list, gsize n_keys)
{
  guint consistent[N_GENS] = { 0 };
  guint n_known = 0, best_count = 0;
  Gen best = GEN_UNKNOWN;

  for (gsize key_index = 0; key_index < n_keys; key_index++)
    {
      guint mask = 0;

      for (gsize index = 0; index < G_N_ELEMENTS (keys); index++)
        if (dw_canonical_key_matches (keys[index].pattern, key_list[key_index]))
          for (Gen gen = keys[index].from; gen <= keys[index].to; gen++)
            mask |= 1u << gen;
      if (mask == 0)
        continue;
      n_known++;
      for (Gen gen = 0; gen < N_GENS; gen++)
        consistent[gen] += (mask >> gen) & 1u;
    }
  if (n_known == 0)
    return NULL;
  /* newest first; slime is not newer than any verl, but slime and verl keys never overlap */
  for (int gen = GEN_VERL_0_9_0; gen >= 0; gen--)
    if (consistent[gen] > best_count)
      {
        best = (Gen)gen;
        best_count = consistent[gen];
      }
  if (consistent[GEN_SLIME] > best_count)
    best = GEN_SLIME;
  return gen_names[best];
}

const DwCanonicalMetric *
dw_canonical_metrics (guint *n_metrics)
{
  if (n_metrics)
    *n_metrics = G_N_ELEMENTS (metrics);
  return metrics;
}

const DwCanonicalMetric *
dw_canonical_lookup (const char *id)
{
  if (id == NULL)
    return NULL;
  for (gsize index = 0; index < G_N_ELEMENTS (metrics); index++)
    if (strcmp (metrics[index].id, id) == 0)
      return &metrics[index];
  return NULL;
}
