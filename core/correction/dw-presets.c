/* dw-presets.c — preset classmethods of every generation, field values as the code returns them
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Generated from ../shared/golden/presets/<rev>.json (verl) and slime's mis.yaml; libc only.
 */
#include <stdio.h>
#include <string.h>

#include "dw-correction.h"

typedef struct
{
  const char *key;
  struct
  {
    DwValueKind kind;
    int b;
    double f;
    const char *s;
  } v;
} PF;

typedef struct
{
  const char *name;
  const char *description;
  int n_fields;
  PF fields[12];
} PresetDef;

/* b178a3cd5 */
static const PresetDef presets_b178a3cd5[] = {
  { "bypass_pg_geo_rs",
    "bypass REINFORCE + geometric RS",
    7,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k1" } },
      { "rollout_rs_threshold", { DW_VALUE_STR, 0, 0, "0.999_1.001" } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "reinforce" } } } },
  { "bypass_pg_geo_rs_seq_tis",
    "bypass REINFORCE + geometric RS + sequence IS",
    7,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k1" } },
      { "rollout_rs_threshold", { DW_VALUE_STR, 0, 0, "0.999_1.001" } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "reinforce" } } } },
  { "bypass_pg_geo_rs_token_tis",
    "bypass REINFORCE + geometric RS + token IS",
    7,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "token" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k1" } },
      { "rollout_rs_threshold", { DW_VALUE_STR, 0, 0, "0.999_1.001" } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "reinforce" } } } },
  { "bypass_pg_is",
    "bypass REINFORCE with sequence-level IS",
    7,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "reinforce" } } } },
  { "bypass_ppo_clip",
    "bypass mode, PPO clip on pi_rollout, no correction",
    7,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "bypass_ppo_clip_geo_rs",
    "bypass PPO clip + geometric RS",
    7,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k1" } },
      { "rollout_rs_threshold", { DW_VALUE_STR, 0, 0, "0.999_1.001" } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "bypass_ppo_clip_k3_rs",
    "bypass PPO clip + K3 rejection",
    7,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k3" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 0.01, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "decoupled_geo_rs",
    "geometric-mean rejection sampling, no IS",
    7,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k1" } },
      { "rollout_rs_threshold", { DW_VALUE_STR, 0, 0, "0.999_1.001" } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "decoupled_geo_rs_seq_tis",
    "geometric RS + sequence-level truncated IS",
    7,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k1" } },
      { "rollout_rs_threshold", { DW_VALUE_STR, 0, 0, "0.999_1.001" } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "decoupled_geo_rs_token_tis",
    "geometric RS + token-level truncated IS",
    7,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "token" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k1" } },
      { "rollout_rs_threshold", { DW_VALUE_STR, 0, 0, "0.999_1.001" } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "decoupled_k3_rs",
    "sequence-mean K3 rejection (0.01), no IS",
    7,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k3" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 0.01, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "decoupled_k3_rs_seq_tis",
    "K3 rejection + sequence-level truncated IS",
    7,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k3" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 0.01, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "decoupled_k3_rs_token_tis",
    "K3 rejection + token-level truncated IS",
    7,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "token" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_mean_k3" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 0.01, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "decoupled_seq_is",
    "sequence-level truncated IS (C=2), decoupled mode",
    7,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "decoupled_seq_is_rs",
    "sequence IS + sequence-level rejection sampling",
    7,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "seq_sum_k1" } },
      { "rollout_rs_threshold", { DW_VALUE_STR, 0, 0, "0.5_2.0" } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "decoupled_token_is",
    "token-level truncated IS (C=2), decoupled mode",
    7,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "token" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { "disabled",
    "no IS, no RS (off-policy metrics only)",
    7,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "loss_type", { DW_VALUE_STR, 0, 0, "ppo_clip" } } } },
  { NULL, NULL, 0, { { NULL, { 0, 0, 0, NULL } } } },
};

/* 2f2996b7d */
static const PresetDef presets_2f2996b7d[] = {
  { "decoupled_geo_rs",
    "geometric-mean rejection sampling, no IS",
    9,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "geometric" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 1.001, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_FLOAT, 0, 0.0001, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "decoupled_seq_is",
    "sequence-level truncated IS (C=2), decoupled mode",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "decoupled_seq_is_rs",
    "sequence IS + sequence-level rejection sampling",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "decoupled_token_is",
    "token-level truncated IS (C=2), decoupled mode",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "token" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "disabled",
    "no IS, no RS (off-policy metrics only)",
    9,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "geo_rs_seq_tis",
    "geometric RS (1.001) + veto + sequence IS",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "geometric" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 1.001, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_FLOAT, 0, 0.0001, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "pg_geo_rs_seq_tis",
    "bypass policy gradient + geometric RS + veto + sequence IS",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "geometric" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 1.001, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_FLOAT, 0, 0.0001, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "pg_is",
    "bypass policy gradient with sequence IS",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "pg_rs",
    "bypass policy gradient + geometric RS + veto, no IS",
    9,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "geometric" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 1.001, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_FLOAT, 0, 0.0001, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "ppo_is_bypass",
    "bypass PPO with token-level IS",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "token" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { NULL, NULL, 0, { { NULL, { 0, 0, 0, NULL } } } },
};

/* 2c6c65cb0 */
static const PresetDef presets_2c6c65cb0[] = {
  { "decoupled_geo_rs",
    "geometric-mean rejection sampling, no IS",
    9,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "geometric" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 1.001, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_FLOAT, 0, 0.0001, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "decoupled_seq_is",
    "sequence-level truncated IS (C=2), decoupled mode",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "decoupled_seq_is_rs",
    "sequence IS + sequence-level rejection sampling",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "decoupled_token_is",
    "token-level truncated IS (C=2), decoupled mode",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "token" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "disabled",
    "no IS, no RS (off-policy metrics only)",
    9,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "pg_is",
    "bypass policy gradient with sequence IS",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "sequence" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "pg_rs",
    "bypass policy gradient + geometric RS + veto, no IS",
    9,
    { { "rollout_is", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_STR, 0, 0, "geometric" } },
      { "rollout_rs_threshold", { DW_VALUE_FLOAT, 0, 1.001, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_FLOAT, 0, 0.0001, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { "ppo_is_bypass",
    "bypass PPO with token-level IS",
    9,
    { { "rollout_is", { DW_VALUE_STR, 0, 0, "token" } },
      { "rollout_is_threshold", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rollout_rs", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_rs_threshold_lower", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rollout_token_veto_threshold", { DW_VALUE_NONE, 0, 0, NULL } },
      { "bypass_mode", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "use_policy_gradient", { DW_VALUE_BOOL, 0, 0, NULL } },
      { "rollout_is_batch_normalize", { DW_VALUE_BOOL, 0, 0, NULL } } } },
  { NULL, NULL, 0, { { NULL, { 0, 0, 0, NULL } } } },
};

/* 624b824a8 */
static const PresetDef presets_624b824a8[] = {
  { "mis_yaml",
    "the values of examples/train_infer_mismatch_helper/mis.yaml",
    11,
    { { "use_tis", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "use_rs", { DW_VALUE_BOOL, 1, 0, NULL } },
      { "tis_level", { DW_VALUE_STR, 0, 0, "token" } },
      { "rs_level", { DW_VALUE_STR, 0, 0, "token" } },
      { "tis_mode", { DW_VALUE_STR, 0, 0, "truncate" } },
      { "tis_lower_bound", { DW_VALUE_FLOAT, 0, 0.5, NULL } },
      { "tis_upper_bound", { DW_VALUE_FLOAT, 0, 2.0, NULL } },
      { "rs_lower_bound", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rs_upper_bound", { DW_VALUE_NONE, 0, 0, NULL } },
      { "rs_veto_threshold", { DW_VALUE_FLOAT, 0, 0.0001, NULL } },
      { "tis_batch_normalize", { DW_VALUE_BOOL, 1, 0, NULL } } } },
  { NULL, NULL, 0, { { NULL, { 0, 0, 0, NULL } } } },
};

static const PresetDef *
table (DwGeneration gen)
{
  switch (gen)
    {
    case DW_GEN_VERL:
      return presets_b178a3cd5;
    case DW_GEN_VERL_0_7:
      return presets_2f2996b7d;
    case DW_GEN_VERL_0_6_1:
      return presets_2c6c65cb0;
    case DW_GEN_SLIME:
      return presets_624b824a8;
    default:
      return NULL;
    }
}

#define MAX_PRESETS 32
static DwPresetInfo infos[DW_N_GENERATIONS][MAX_PRESETS + 1];

const DwPresetInfo *
dw_preset_list (DwGeneration gen, size_t *n_out)
{
  static const DwPresetInfo empty[1] = { { NULL, NULL } };
  const PresetDef *t = table (gen);
  size_t n = 0;
  if (t == NULL)
    {
      if (n_out)
        *n_out = 0;
      return empty;
    }
  /* the table is constant: filling it again from any thread writes the same values */
  for (; t[n].name && n < MAX_PRESETS; n++)
    {
      infos[gen][n].name = t[n].name;
      infos[gen][n].description = t[n].description;
    }
  infos[gen][n].name = NULL;
  infos[gen][n].description = NULL;
  if (n_out)
    *n_out = n;
  return infos[gen];
}

static const PresetDef *
find (DwGeneration gen, const char *name)
{
  const PresetDef *t = table (gen);
  for (size_t i = 0; t && name && t[i].name; i++)
    if (strcmp (t[i].name, name) == 0)
      return &t[i];
  return NULL;
}

const DwPresetInfo *
dw_preset_lookup (DwGeneration gen, const char *name)
{
  const PresetDef *p = find (gen, name);
  if (!p)
    return NULL;
  const DwPresetInfo *l = dw_preset_list (gen, NULL);
  for (size_t i = 0; l[i].name; i++)
    if (strcmp (l[i].name, name) == 0)
      return &l[i];
  return NULL;
}

bool
dw_preset_apply (DwConfig *config, const char *name, DwCorrectionError *error)
{
  const PresetDef *p = find (config->generation, name);
  if (!p)
    {
      if (error)
        {
          error->kind = DW_ERROR_VALUE;
          snprintf (error->message, sizeof error->message, "Unknown preset '%s' for %s.",
                    name ? name : "(null)", dw_generation_name (config->generation));
        }
      return false;
    }
  dw_config_unset (config, "preset");
  for (int i = 0; i < p->n_fields; i++)
    {
      DwValue v = dw_value_none ();
      switch (p->fields[i].v.kind)
        {
        case DW_VALUE_BOOL:
          v = dw_value_bool (p->fields[i].v.b);
          break;
        case DW_VALUE_INT:
          v = dw_value_int ((int64_t)p->fields[i].v.f);
          break;
        case DW_VALUE_FLOAT:
          v = dw_value_float (p->fields[i].v.f);
          break;
        case DW_VALUE_STR:
          v = dw_value_str (p->fields[i].v.s);
          break;
        default:
          break;
        }
      dw_config_set (config, p->fields[i].key, &v);
    }
  return true;
}

bool
dw_preset_config (DwGeneration gen, const char *name, DwConfig *out, DwCorrectionError *error)
{
  dw_config_init (out, gen);
  return dw_preset_apply (out, name, error);
}
