/* test-canonical.c — the canonical metric map: every key every release logs, meaning by generation
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The key sets come from ../shared/golden: each group was produced by the real code of one verl
 * release or slime path (golden/README.md), so "every key of every release" is checked against
 * what those releases really emit, not against a list typed here.
 */
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "dw-canonical.h"

static char *
golden_path (const char *rel)
{
  const char *shared = g_getenv ("DW_SHARED_DIR");

  return g_build_filename (shared ? shared : "../shared", "golden", rel, NULL);
}

/* Every metric key of every non-error case of @group (with @prefix prepended), sorted, unique. */
static GPtrArray *
group_keys (const char *group, const char *prefix)
{
  g_autofree char *dir_path = golden_path (group);
  g_autoptr (GDir) dir = g_dir_open (dir_path, 0, NULL);
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (dir == NULL)
    {
      g_test_skip ("../shared/golden is missing");
      return out;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir_path, name, NULL);
      g_autoptr (JsonParser) parser = json_parser_new ();
      JsonObject *root, *metrics;
      GList *members;

      if (!g_str_has_suffix (name, ".json"))
        continue;
      g_assert_true (json_parser_load_from_file (parser, path, NULL));
      root = json_node_get_object (json_parser_get_root (parser));
      if (!json_object_has_member (root, "metrics")
          || JSON_NODE_HOLDS_NULL (json_object_get_member (root, "metrics")))
        continue;
      metrics = json_object_get_object_member (root, "metrics");
      members = json_object_get_members (metrics);
      for (GList *l = members; l != NULL; l = l->next)
        {
          char *key = g_strconcat (prefix, l->data, NULL);

          if (g_hash_table_add (seen, key))
            g_ptr_array_add (out, g_strdup (key));
        }
      g_list_free (members);
    }
  g_ptr_array_sort (out, (GCompareFunc)g_strcmp0);
  return out;
}

typedef struct
{
  const char *group;
  const char *prefix;     /* prepended to the golden keys (slime mis.py logs train/mis_<key>) */
  const char *generation; /* the release the group was produced by */
  const char *inferred;   /* what the keys alone tell: the newest consistent generation */
} Group;

static const Group groups[] = {
  { "verl_21271aabb", "", "21271aabb", "verl-0.6.0" },
  { "verl_4424616d7", "", "verl-0.6", "verl-0.6.0" },
  { "verl_v0.6.0", "", "verl-0.6.0", "verl-0.6.0" },
  { "verl_418f964ab", "", "418f964ab", "verl-0.7.0" },
  { "verl_2c6c65cb0", "", "verl-0.6.1", "verl-0.7.0" },
  { "verl_v0.6.1", "", "verl-0.6.1", "verl-0.7.0" },
  { "verl_2f2996b7d", "", "verl-0.7", "verl-0.7.0" },
  { "verl_v0.7.0", "", "verl 0.7.0", "verl-0.7.0" },
  /* 0.7.1 and 0.8.0+ log the same key set under TIS: the keys alone say "newest" */
  { "verl_HEAD", "", "verl-0.7.1", "verl-0.9.0" },
  { "verl_v0.8.0", "", "v0.8.0", "verl-0.9.0" },
  { "verl_v0.9.0", "", "verl-0.9.0", "verl-0.9.0" },
  { "verl_v0.9.0_offpolicy", "rollout_corr/", "verl", "verl-0.9.0" },
  { "slime_HEAD", "train/", "slime", "slime" },
  { "slime_HEAD_builtin", "", "slime", "slime" },
};

/* Every key of every release maps to a canonical metric of the table, under its own generation,
 * and the keys tell the generation they can. */
static void
test_every_key (void)
{
  for (gsize g = 0; g < G_N_ELEMENTS (groups); g++)
    {
      g_autoptr (GPtrArray) keys = group_keys (groups[g].group, groups[g].prefix);

      if (keys->len == 0) /* skipped: no golden directory */
        continue;
      for (guint i = 0; i < keys->len; i++)
        {
          const char *key = keys->pdata[i];
          const char *canonical = dw_canonical_for_key (key, groups[g].generation);
          DwCanonicalKeyInfo info;

          if (canonical == NULL || dw_canonical_lookup (canonical) == NULL)
            g_error ("%s: %s maps to %s", groups[g].group, key, canonical);
          g_assert_true (dw_canonical_describe_key (key, groups[g].generation, &info));
          g_assert_cmpstr (info.canonical, ==, canonical);
          g_assert_true (info.meaning[0] != '\0' && info.generations[0] != '\0');
        }
      g_assert_cmpstr (dw_canonical_infer_generation ((const char *const *)keys->pdata, keys->len),
                       ==, groups[g].inferred);
    }
}

/* The keys whose meaning changed: exact canonical metric per generation. */
static void
test_meaning_by_generation (void)
{
  static const struct
  {
    const char *key;
    const char *generation;
    const char *canonical;
  } cases[] = {
    /* the IS mean: raw ratio up to 0.7.1, applied weights from 0.8.0 (docs/HEALTH.md §1) */
    { "mismatch/rollout_is_mean", "verl-0.6.0", "is_raw_mean" },
    { "rollout_corr/rollout_is_mean", "verl-0.6.1", "is_raw_mean" },
    { "rollout_corr/rollout_is_mean", "verl-0.7.0", "is_raw_mean" },
    { "rollout_corr/rollout_is_mean", "verl-0.7.1", "is_raw_mean" },
    { "rollout_corr/rollout_is_mean", "b178a3cd5", "is_raw_mean" },
    { "rollout_corr/rollout_is_mean", "verl-0.8.0", "is_mean" },
    { "rollout_corr/rollout_is_mean", "verl-0.9.0", "is_mean" },
    { "rollout_corr/rollout_is_mean", "verl", "is_mean" },
    { "rollout_corr/rollout_is_mean", NULL, "is_mean" },
    { "rollout_corr/rollout_is_mean", "0.9.1.post2", "is_mean" },
    { "rollout_corr/rollout_is_max", "verl-0.7.1", "is_raw_max" },
    { "rollout_corr/rollout_is_max", "verl-0.8.0", "is_max" },
    { "rollout_corr/rollout_is_seq_mean", "verl-0.7.1", "is_raw_seq_mean" },
    { "rollout_corr/rollout_is_seq_mean", "verl-0.8.0", "is_seq_mean" },
    /* sequence high/low fractions: applied in 0.8.0, raw again in 0.9.0 (#6806) */
    { "rollout_corr/rollout_is_seq_fraction_high", "verl-0.7.1", "is_raw_seq_fraction_high" },
    { "rollout_corr/rollout_is_seq_fraction_high", "verl-0.8.0", "is_seq_fraction_high" },
    { "rollout_corr/rollout_is_seq_fraction_high", "verl-0.9.0", "is_raw_seq_fraction_high" },
    { "rollout_corr/rollout_is_ratio_fraction_high", "verl-0.9.0", "is_raw_fraction_high" },
    { "rollout_corr/rollout_is_ratio_fraction_low", "verl-0.6.1", "is_raw_fraction_low" },
    { "rollout_corr/rollout_is_oob_ratio", "verl-0.9.0", "is_oob_fraction" },
    { "rollout_corr/rollout_is_eff_sample_size", "verl-0.7.1", "ess" },
    { "rollout_corr/rollout_is_eff_sample_size", "verl-0.8.0", "ess" },
    /* slime's built-in TIS logs the raw ratio, not the weight */
    { "train/tis", "slime", "is_raw_mean" },
    { "train/tis", NULL, "is_raw_mean" },
    { "train/tis_clipfrac", "slime", "is_oob_fraction" },
    { "train/tis_abs", "slime", "is_raw_abs_deviation" },
    { "train/ois", "slime", "policy_ratio" },
    { "train/train_rollout_logprob_abs_diff", "slime", "logprob_abs_diff" },
    { "train/mis_tis_weight_before_bound", "slime", "is_raw_mean" },
    { "train/mis_tis_weight_after_bound", "slime", "is_mean" },
    { "train/mis_is_ratio_mean_final", "slime", "is_final_mean" },
    { "train/mis_k3_kl", "slime", "k3_kl" },
    /* RS: one level on the ratio in 0.6.1–0.7.0, per option from 0.7.1 */
    { "rollout_corr/rollout_rs_mean", "verl-0.7.0", "rs_ratio_mean" },
    { "rollout_corr/rollout_rs_masked_fraction", "verl-0.7.0", "rs_masked_fraction" },
    { "rollout_corr/rollout_rs_masked_fraction", "verl-0.9.0", "rs_masked_fraction" },
    { "rollout_corr/rollout_rs_seq_mean_k3_masked_fraction", "verl-0.9.0",
      "rs_option_masked_fraction" },
    { "rollout_corr/rollout_rs_seq_mean_k3_seq_masked_fraction", NULL,
      "rs_option_seq_masked_fraction" },
    { "rollout_corr/rollout_rs_token_k1_seq_fraction_low", "verl-0.7.1",
      "rs_stat_seq_fraction_low" },
    { "rollout_corr/rollout_rs_seq_mean_k3_mean", "verl-0.7.1", "rs_stat_mean" },
    { "rollout_corr/rollout_is_veto_fraction", "verl-0.7.0", "veto_fraction" },
    { "mismatch/rollout_is_masked_fraction", "verl-0.6.0", "rs_masked_fraction" },
    { "mismatch/rollout_is_clipped_fraction", NULL, "is_oob_fraction" },
    { "mismatch/rollout_is_p95", NULL, "is_raw_p95" },
    /* a key the stated generation does not log is mapped by the key itself */
    { "mismatch/mismatch_k3_kl", "verl-0.9.0", "k3_kl" },
    { "rollout_corr/rollout_is_mean", "slime", "is_mean" },
    /* the trainer-side and training-signal keys */
    { "training/rollout_probs_diff_mean", "verl-0.5.0", "probs_diff_mean" },
    { "training/rollout_actor_probs_pearson_corr", NULL, "probs_pearson" },
    { "actor/entropy_loss", "verl-0.3.0", "entropy" },
    { "actor/entropy", NULL, "entropy" },
    { "critic/score/mean", NULL, "reward" },
    { "train/grad_norm", "slime", "grad_norm" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *got = dw_canonical_for_key (cases[i].key, cases[i].generation);

      if (g_strcmp0 (got, cases[i].canonical) != 0)
        g_error ("%s under %s: %s, want %s", cases[i].key, cases[i].generation, got,
                 cases[i].canonical);
      g_assert_nonnull (dw_canonical_lookup (got));
    }
  /* no canonical metric: unknown keys, a bad RS option, an option-less per-option suffix */
  g_assert_null (dw_canonical_for_key ("timing_s/step", NULL));
  g_assert_null (dw_canonical_for_key ("rollout_corr/rollout_rs_seq_mean_k4_mean", NULL));
  g_assert_null (dw_canonical_for_key ("rollout_corr/rollout_rs__mean", NULL));
  g_assert_null (dw_canonical_for_key ("run-a - rollout_corr/kl", NULL));
  g_assert_null (dw_canonical_for_key (NULL, NULL));
  g_assert_cmpstr (dw_canonical_for_tag ("rollout_corr/k3_kl"), ==, "k3_kl");
}

static void
test_generation_names (void)
{
  static const char *const cases[][2] = {
    { "verl-0.6.0", "verl-0.6.0" },     { "verl-0.6.1", "verl-0.7.0" },
    { "verl-0.7.0", "verl-0.7.0" },     { "verl-0.7.1", "verl-0.7.1" },
    { "verl-0.8.0", "verl-0.8.0" },     { "verl-0.9.0", "verl-0.9.0" },
    { "verl", "verl-0.9.0" },           { "slime", "slime" },
    { "verl-0.7", "verl-0.7.0" },       { "verl-0.6", "verl-0.6.0" },
    { "verl 0.8.1", "verl-0.8.0" },     { "v0.4.1", "verl-0.5.0" },
    { "0.10.0", "verl-0.9.0" },         { "2c6c65cb0", "verl-0.7.0" },
    { "97eac90", "verl-0.7.1" },        { "d2916f5a0", "verl-0.8.0" },
    { "verl-2f2996b7d", "verl-0.7.0" }, { "verl-4424616d7", "verl-0.6.0" },
  };
  static const char *const unknown[] = { NULL, "", "unknown", "pytorch", "verl-x", "97eac", "0" };
  guint n;
  const char *const *names = dw_canonical_generations (&n);

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    g_assert_cmpstr (dw_canonical_generation (cases[i][0]), ==, cases[i][1]);
  for (gsize i = 0; i < G_N_ELEMENTS (unknown); i++)
    g_assert_null (dw_canonical_generation (unknown[i]));
  g_assert_cmpuint (n, ==, 7);
  for (guint i = 0; i < n; i++)
    g_assert_cmpstr (dw_canonical_generation (names[i]), ==, names[i]);
}

static void
test_infer (void)
{
  const char *none[] = { "timing_s/step", "perf/throughput" };
  const char *icepop[] = { "rollout_corr/kl", "rollout_corr/rollout_is_oob_ratio" };
  const char *old_rs[] = { "rollout_corr/kl", "rollout_corr/rollout_rs_mean" };
  const char *per_option[] = { "rollout_corr/rollout_rs_token_k1_mean", "rollout_corr/kl" };
  const char *legacy[] = { "actor/entropy_loss", "critic/score/mean", "timing_s/gen" };
  const char *slime[] = { "train/tis", "train/grad_norm", "rollout/raw_reward" };
  /* a restart on a newer release in the same run: most keys win, newest on a tie */
  const char *mixed[] = { "mismatch/mismatch_kl", "rollout_corr/kl", "rollout_corr/k3_kl" };

  g_assert_null (dw_canonical_infer_generation (none, G_N_ELEMENTS (none)));
  g_assert_null (dw_canonical_infer_generation (NULL, 0));
  g_assert_cmpstr (dw_canonical_infer_generation (icepop, 2), ==, "verl-0.9.0");
  g_assert_cmpstr (dw_canonical_infer_generation (old_rs, 2), ==, "verl-0.7.0");
  g_assert_cmpstr (dw_canonical_infer_generation (per_option, 2), ==, "verl-0.9.0");
  g_assert_cmpstr (dw_canonical_infer_generation (legacy, 3), ==, "verl-0.9.0");
  g_assert_cmpstr (dw_canonical_infer_generation (slime, 3), ==, "slime");
  g_assert_cmpstr (dw_canonical_infer_generation (mixed, 3), ==, "verl-0.9.0");
}

/* The meanings the map claims, checked on the releases' own numbers: on the same batch and
 * config (extreme, token TIS, threshold 2), v0.7.1's rollout_is_mean is the raw ratio mean (far
 * above 2), v0.8.0's is the applied weight mean (≤ 2), and both log the same raw fraction. */
static void
test_meaning_on_goldens (void)
{
  const char *files[]
    = { "verl_HEAD/extreme__tis_token_t2.json", "verl_v0.8.0/extreme__tis_token_t2.json" };
  double mean[2], frac[2];

  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *path = golden_path (files[i]);
      g_autoptr (JsonParser) parser = json_parser_new ();
      JsonObject *metrics;

      if (!json_parser_load_from_file (parser, path, NULL))
        {
          g_test_skip ("../shared/golden is missing");
          return;
        }
      metrics = json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)),
                                               "metrics");
      mean[i] = json_object_get_double_member (metrics, "rollout_corr/rollout_is_mean");
      frac[i]
        = json_object_get_double_member (metrics, "rollout_corr/rollout_is_ratio_fraction_high");
    }
  g_assert_cmpfloat (mean[0], >, 1e8);
  g_assert_cmpfloat (mean[1], <=, 2.0);
  g_assert_cmpfloat (frac[0], ==, frac[1]);
  g_assert_cmpstr (dw_canonical_for_key ("rollout_corr/rollout_is_mean", "verl-0.7.1"), ==,
                   "is_raw_mean");
  g_assert_cmpstr (dw_canonical_for_key ("rollout_corr/rollout_is_mean", "verl-0.8.0"), ==,
                   "is_mean");
}

static void
test_table (void)
{
  guint n;
  const DwCanonicalMetric *m = dw_canonical_metrics (&n);
  DwCanonicalKeyInfo info;

  g_assert_cmpuint (n, >, 40);
  for (guint i = 0; i < n; i++)
    {
      g_assert_true (m[i].id != NULL && m[i].title != NULL && m[i].unit != NULL);
      g_assert_true (dw_canonical_lookup (m[i].id) == &m[i]);
      for (guint j = 0; j < i; j++)
        g_assert_cmpstr (m[i].id, !=, m[j].id);
    }
  g_assert_null (dw_canonical_lookup ("nope"));
  g_assert_null (dw_canonical_lookup (NULL));
  g_assert_true (
    dw_canonical_describe_key ("rollout_corr/rollout_rs_seq_max_k2_masked_fraction", NULL, &info));
  g_assert_cmpstr (info.pattern, ==, "rollout_corr/rollout_rs_*_masked_fraction");
  g_assert_cmpstr (info.generations, ==, "verl-0.7.1 – verl-0.9.0");
  g_assert_true (dw_canonical_describe_key ("train/tis", "slime", &info));
  g_assert_cmpstr (info.generations, ==, "slime");
  g_assert_nonnull (strstr (info.meaning, "raw ratio"));
  g_assert_false (dw_canonical_describe_key ("timing_s/step", NULL, &info));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/metrics/every-key", test_every_key);
  g_test_add_func ("/metrics/meaning-by-generation", test_meaning_by_generation);
  g_test_add_func ("/metrics/generation-names", test_generation_names);
  g_test_add_func ("/metrics/infer", test_infer);
  g_test_add_func ("/metrics/meaning-on-goldens", test_meaning_on_goldens);
  g_test_add_func ("/metrics/table", test_table);
  return g_test_run ();
}
