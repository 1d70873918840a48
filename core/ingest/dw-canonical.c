/* dw-canonical.c — canonical metric names
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-canonical.h"

#include <math.h>
#include <string.h>

#define N_(s) (s)

static const DwCanonicalMetric metrics[] = {
  { "is_mean", N_ ("IS weight mean"), "", 1.0, FALSE, TRUE },
  { "is_std", N_ ("IS weight std"), "", 0.0, FALSE, TRUE },
  { "is_max", N_ ("IS weight max"), "", 1.0, TRUE, TRUE },
  { "is_min", N_ ("IS weight min"), "", 1.0, TRUE, TRUE },
  { "ess", N_ ("Effective sample size"), "fraction", 1.0, FALSE, TRUE },
  { "veto_fraction", N_ ("Veto fraction"), "fraction", 0.0, FALSE, TRUE },
  { "rs_masked_fraction", N_ ("Rejected token fraction"), "fraction", 0.0, FALSE, TRUE },
  { "rs_seq_masked_fraction", N_ ("Rejected sequence fraction"), "fraction", 0.0, FALSE, TRUE },
  { "catastrophic_fraction", N_ ("Catastrophic token fraction"), "fraction", 0.0, FALSE, TRUE },
  { "kl", N_ ("KL (rollout − training)"), "nats", 0.0, TRUE, TRUE },
  { "k3_kl", N_ ("K3 KL"), "nats", 0.0, TRUE, TRUE },
  { "ppl_ratio", N_ ("PPL ratio"), "", 1.0, FALSE, TRUE },
  { "log_ppl_abs_diff", N_ ("|log PPL difference|"), "nats", 0.0, TRUE, TRUE },
  { "log_ppl_diff", N_ ("Log PPL difference"), "nats", 0.0, FALSE, FALSE },
  { "chi2_token", N_ ("χ² (token)"), "", 0.0, TRUE, TRUE },
  { "chi2_seq", N_ ("χ² (sequence)"), "", 0.0, TRUE, TRUE },
  { "training_ppl", N_ ("Training PPL"), "", NAN, FALSE, FALSE },
  { "rollout_ppl", N_ ("Rollout PPL"), "", NAN, FALSE, FALSE },
  { "logprob_abs_diff", N_ ("Mean |log-prob difference|"), "nats", 0.0, TRUE, TRUE },
  { "probs_diff_mean", N_ ("Mean |probability difference|"), "", 0.0, TRUE, TRUE },
  { "probs_pearson", N_ ("Train/rollout probability correlation"), "", 1.0, FALSE, FALSE },
  { "reward", N_ ("Reward"), "", NAN, FALSE, FALSE },
  { "response_length", N_ ("Response length"), "tokens", NAN, FALSE, FALSE },
  { "entropy", N_ ("Entropy"), "nats", NAN, FALSE, FALSE },
  { "grad_norm", N_ ("Gradient norm"), "", NAN, TRUE, FALSE },
  { "pg_clipfrac", N_ ("PG clip fraction"), "fraction", NAN, FALSE, FALSE },
  { "ppo_kl", N_ ("PPO KL"), "nats", 0.0, TRUE, FALSE },
};

typedef struct
{
  const char *suffix; /* after the version's prefix */
  const char *id;
} Map;

/* rollout_corr/<x> (v0.6.1+) and mismatch/<x> after removing "mismatch_" (v0.6.0) */
static const Map verl_map[] = {
  { "rollout_is_mean", "is_mean" },
  { "rollout_is_std", "is_std" },
  { "rollout_is_max", "is_max" },
  { "rollout_is_min", "is_min" },
  { "rollout_is_eff_sample_size", "ess" },
  { "rollout_is_veto_fraction", "veto_fraction" },
  { "rollout_is_catastrophic_token_fraction", "catastrophic_fraction" },
  { "rollout_is_masked_fraction", "rs_masked_fraction" },
  { "rollout_rs_masked_fraction", "rs_masked_fraction" },
  { "rollout_rs_seq_masked_fraction", "rs_seq_masked_fraction" },
  { "kl", "kl" },
  { "k3_kl", "k3_kl" },
  { "ppl_ratio", "ppl_ratio" },
  { "log_ppl_abs_diff", "log_ppl_abs_diff" },
  { "log_ppl_diff", "log_ppl_diff" },
  { "chi2_token", "chi2_token" },
  { "chi2_seq", "chi2_seq" },
  { "training_ppl", "training_ppl" },
  { "rollout_ppl", "rollout_ppl" },
};

static const Map slime_map[] = {
  { "mis_kl", "kl" },
  { "mis_k3_kl", "k3_kl" },
  { "mis_ppl_ratio", "ppl_ratio" },
  { "mis_log_ppl_abs_diff", "log_ppl_abs_diff" },
  { "mis_log_ppl_diff", "log_ppl_diff" },
  { "mis_chi2_token", "chi2_token" },
  { "mis_chi2_seq", "chi2_seq" },
  { "mis_training_ppl", "training_ppl" },
  { "mis_rollout_ppl", "rollout_ppl" },
  { "mis_is_ratio_mean_final", "is_mean" },
  { "mis_is_ratio_min_final", "is_min" },
  { "mis_is_ratio_max_final", "is_max" },
  { "mis_rs_catastrophic_seq_fraction", "veto_fraction" },
  { "mis_rs_catastrophic_token_fraction", "catastrophic_fraction" },
  { "train_rollout_logprob_abs_diff", "logprob_abs_diff" },
  { "tis", "is_mean" },
  { "grad_norm", "grad_norm" },
  { "pg_clipfrac", "pg_clipfrac" },
  { "ppo_kl", "ppo_kl" },
};

static const Map plain_map[] = {
  { "critic/score/mean", "reward" },
  { "rollout/raw_reward", "reward" },
  { "rollout/rewards", "reward" },
  { "response_length/mean", "response_length" },
  { "rollout/response_len/mean", "response_length" },
  { "rollout/response_lengths", "response_length" },
  { "actor/entropy", "entropy" },
  { "rollout/entropy", "entropy" },
  { "actor/grad_norm", "grad_norm" },
  { "actor/pg_clipfrac", "pg_clipfrac" },
  { "actor/ppo_kl", "ppo_kl" },
  { "training/rollout_probs_diff_mean", "probs_diff_mean" },
  { "training/rollout_actor_probs_pearson_corr", "probs_pearson" },
};

static const char *
lookup_map (const Map *m, gsize n, const char *key)
{
  for (gsize i = 0; i < n; i++)
    if (strcmp (m[i].suffix, key) == 0)
      return m[i].id;
  return NULL;
}

static const char *const rs_options[] = {
  "token_k1",    "token_k2",    "token_k3",    "seq_sum_k1", "seq_sum_k2", "seq_sum_k3",
  "seq_mean_k1", "seq_mean_k2", "seq_mean_k3", "seq_max_k2", "seq_max_k3",
};

const char *
dw_canonical_for_tag (const char *tag)
{
  if (tag == NULL)
    return NULL;
  const char *id = lookup_map (plain_map, G_N_ELEMENTS (plain_map), tag);
  if (id != NULL)
    return id;
  if (g_str_has_prefix (tag, "rollout_corr/"))
    {
      const char *k = tag + strlen ("rollout_corr/");
      id = lookup_map (verl_map, G_N_ELEMENTS (verl_map), k);
      if (id != NULL)
        return id;
      /* per-option RS keys (after v0.7.0): rollout_rs_<opt>_masked_fraction etc. The
       * aggregate keys were matched above; a per-option key maps only when it is the sole
       * source, so the aggregate wins in charts that show both. */
      if (g_str_has_prefix (k, "rollout_rs_"))
        {
          const char *o = k + strlen ("rollout_rs_");
          for (gsize i = 0; i < G_N_ELEMENTS (rs_options); i++)
            {
              gsize l = strlen (rs_options[i]);
              if (strncmp (o, rs_options[i], l) == 0 && o[l] == '_')
                {
                  if (strcmp (o + l + 1, "masked_fraction") == 0)
                    return "rs_masked_fraction";
                  if (strcmp (o + l + 1, "seq_masked_fraction") == 0)
                    return "rs_seq_masked_fraction";
                  return NULL;
                }
            }
        }
      return NULL;
    }
  if (g_str_has_prefix (tag, "mismatch/"))
    {
      const char *k = tag + strlen ("mismatch/");
      if (g_str_has_prefix (k, "mismatch_"))
        k += strlen ("mismatch_");
      return lookup_map (verl_map, G_N_ELEMENTS (verl_map), k);
    }
  if (g_str_has_prefix (tag, "train/"))
    return lookup_map (slime_map, G_N_ELEMENTS (slime_map), tag + strlen ("train/"));
  return NULL;
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
  for (gsize i = 0; i < G_N_ELEMENTS (metrics); i++)
    if (strcmp (metrics[i].id, id) == 0)
      return &metrics[i];
  return NULL;
}
