/* dw-schema.c — the configuration keys of every generation (see dw-schema.h for how to add one)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc only. Defaults are the ones the trainer uses when the key is not given: the helper's
 * keyword defaults as `cfg.get(key, default)` passes them (verl's RolloutCorrectionConfig
 * dataclass says rollout_is="sequence" but its YAML, which users run, says null: §10), slime's
 * argument defaults and mis.yaml.
 */
#include "dw-schema.h"

#include <string.h>

static const char *const dw_schema_levels_verl[] = { "token", "sequence", NULL };
static const char *const dw_schema_levels_all[] = { "token", "sequence", "geometric", NULL };
static const char *const dw_schema_modes_mismatch[] = { "truncate", "mask", NULL };
static const char *const dw_schema_modes_slime[] = { "truncate", "clip", "mask", NULL };
static const char *const dw_schema_functions_slime[] = { "vanilla", "icepop", "mis", NULL };
static const char *const dw_schema_loss_types[] = { "ppo_clip", "reinforce", NULL };
static const char *const dw_schema_rs_k_options[] = {
  "token_k1",    "token_k2",    "token_k3",    "seq_sum_k1", "seq_sum_k2", "seq_sum_k3",
  "seq_mean_k1", "seq_mean_k2", "seq_mean_k3", "seq_max_k2", "seq_max_k3", NULL,
};

#define DW_SCHEMA_IS_LEVEL_VERL                                                                 \
  {                                                                                             \
    "rollout_is", "str | None", DW_DEFAULT_NONE, dw_schema_levels_verl, DW_ROLE_IS_LEVEL, 0, 0, \
      DW_SLIDER_NONE, "IS level: token or sequence; None turns IS off"                          \
  }
#define DW_SCHEMA_IS_BATCH_NORMALIZE                                     \
  {                                                                      \
    "rollout_is_batch_normalize", "bool", DW_DEFAULT_BOOL (false), NULL, \
      DW_ROLE_IS_BATCH_NORMALIZE, 0, 0, DW_SLIDER_NONE,                  \
      "divide the truncated weights by their batch mean"                 \
  }
#define DW_SCHEMA_BYPASS_MODE                                                                  \
  {                                                                                            \
    "bypass_mode", "bool", DW_DEFAULT_BOOL (false), NULL, DW_ROLE_OTHER, 0, 0, DW_SLIDER_NONE, \
      "correct inside the loss against pi_theta instead of the trainer's pi_old"               \
  }
#define DW_SCHEMA_LOSS_TYPE                                                                     \
  {                                                                                             \
    "loss_type", "str", DW_DEFAULT_STR ("ppo_clip"), dw_schema_loss_types, DW_ROLE_OTHER, 0, 0, \
      DW_SLIDER_NONE, "bypass-mode loss: ppo_clip or reinforce"                                 \
  }

/* v0.7.1: rollout_rs k-options (§3, §4) */
static const DwSchemaKey dw_schema_verl_0_7_1_keys[] = {
  DW_SCHEMA_IS_LEVEL_VERL,
  { "rollout_is_threshold", "float | None", DW_DEFAULT_FLOAT (2.0), NULL, DW_ROLE_IS_THRESHOLD, 1.0,
    10.0, DW_SLIDER_LOG, "TIS upper bound U (weights truncated at U); None turns IS off" },
  DW_SCHEMA_IS_BATCH_NORMALIZE,
  { "rollout_rs", "str | None", DW_DEFAULT_NONE, dw_schema_rs_k_options, DW_ROLE_RS_OPTIONS, 0, 0,
    DW_SLIDER_NONE, "comma-separated RS options (token_k1 … seq_max_k3); None turns RS off" },
  { "rollout_rs_threshold", "str | float | None", DW_DEFAULT_NONE, NULL, DW_ROLE_RS_THRESHOLD, 0.0,
    0.0, DW_SLIDER_NONE,
    "one bound per option or one for all: \"lower_upper\" ratio bounds for k1, an upper bound "
    "for k2/k3" },
  DW_SCHEMA_BYPASS_MODE,
  DW_SCHEMA_LOSS_TYPE,
};

/* v0.8.0, v0.9.0: the IS threshold also takes "lower_upper" = IcePop (§3.5) */
static const DwSchemaKey dw_schema_verl_0_8_keys[] = {
  DW_SCHEMA_IS_LEVEL_VERL,
  { "rollout_is_threshold", "float | str | None", DW_DEFAULT_FLOAT (2.0), NULL,
    DW_ROLE_IS_THRESHOLD, 1.0, 10.0, DW_SLIDER_LOG,
    "TIS upper bound U, or \"lower_upper\" for IcePop (weights outside zeroed)" },
  DW_SCHEMA_IS_BATCH_NORMALIZE,
  { "rollout_rs", "str | None", DW_DEFAULT_NONE, dw_schema_rs_k_options, DW_ROLE_RS_OPTIONS, 0, 0,
    DW_SLIDER_NONE, "comma-separated RS options (token_k1 … seq_max_k3); None turns RS off" },
  { "rollout_rs_threshold", "str | float | None", DW_DEFAULT_NONE, NULL, DW_ROLE_RS_THRESHOLD, 0.0,
    0.0, DW_SLIDER_NONE,
    "one bound per option or one for all: \"lower_upper\" ratio bounds for k1, an upper bound "
    "for k2/k3" },
  DW_SCHEMA_BYPASS_MODE,
  DW_SCHEMA_LOSS_TYPE,
};

#define DW_SCHEMA_LEGACY_RS_KEYS                                         \
  DW_SCHEMA_IS_LEVEL_VERL,                                               \
    { "rollout_is_threshold",                                            \
      "float | None",                                                    \
      DW_DEFAULT_FLOAT (2.0),                                            \
      NULL,                                                              \
      DW_ROLE_IS_THRESHOLD,                                              \
      1.0,                                                               \
      10.0,                                                              \
      DW_SLIDER_LOG,                                                     \
      "TIS upper bound U (weights truncated at U); None turns IS off" }, \
    DW_SCHEMA_IS_BATCH_NORMALIZE,                                        \
    { "rollout_rs",                                                      \
      "str | None",                                                      \
      DW_DEFAULT_NONE,                                                   \
      dw_schema_levels_all,                                              \
      DW_ROLE_RS_OPTIONS,                                                \
      0,                                                                 \
      0,                                                                 \
      DW_SLIDER_NONE,                                                    \
      "RS level on the ratio: token, sequence or geometric" },           \
    { "rollout_rs_threshold",                                            \
      "float",                                                           \
      DW_DEFAULT_FLOAT (2.0),                                            \
      NULL,                                                              \
      DW_ROLE_RS_THRESHOLD,                                              \
      1.0,                                                               \
      10.0,                                                              \
      DW_SLIDER_LOG,                                                     \
      "RS upper ratio bound" },                                          \
    { "rollout_rs_threshold_lower",                                      \
      "float | None",                                                    \
      DW_DEFAULT_NONE,                                                   \
      NULL,                                                              \
      DW_ROLE_RS_THRESHOLD_LOWER,                                        \
      0.1,                                                               \
      1.0,                                                               \
      DW_SLIDER_LOG,                                                     \
      "RS lower ratio bound (None: 1/upper)" },                          \
    { "rollout_token_veto_threshold",                                    \
      "float | None",                                                    \
      DW_DEFAULT_NONE,                                                   \
      NULL,                                                              \
      DW_ROLE_VETO_THRESHOLD,                                            \
      1e-8,                                                              \
      1e-1,                                                              \
      DW_SLIDER_LOG,                                                     \
      "reject a whole row when one token's ratio is below this" },       \
    DW_SCHEMA_BYPASS_MODE

/* v0.6.1 and 2f2996b7d (§5) */
static const DwSchemaKey dw_schema_verl_0_6_1_keys[] = {
  DW_SCHEMA_LEGACY_RS_KEYS,
  { "use_policy_gradient", "bool", DW_DEFAULT_BOOL (false), NULL, DW_ROLE_OTHER, 0, 0,
    DW_SLIDER_NONE, "bypass mode: REINFORCE loss instead of PPO" },
};

/* v0.7.0 (§5) */
static const DwSchemaKey dw_schema_verl_0_7_0_keys[] = {
  DW_SCHEMA_LEGACY_RS_KEYS,
  DW_SCHEMA_LOSS_TYPE,
};

#define DW_SCHEMA_MISMATCH_KEYS                                                                \
  { "rollout_is",                                                                              \
    "bool",                                                                                    \
    DW_DEFAULT_BOOL (false),                                                                   \
    NULL,                                                                                      \
    DW_ROLE_OTHER,                                                                             \
    0,                                                                                         \
    0,                                                                                         \
    DW_SLIDER_NONE,                                                                            \
    "AlgoConfig switch: the trainer applies the IS weights in the loss" },                     \
    { "rollout_is_level",                                                                      \
      "str",                                                                                   \
      DW_DEFAULT_STR ("token"),                                                                \
      dw_schema_levels_all,                                                                    \
      DW_ROLE_IS_LEVEL,                                                                        \
      0,                                                                                       \
      0,                                                                                       \
      DW_SLIDER_NONE,                                                                          \
      "IS level: token, sequence or geometric" },                                              \
    { "rollout_is_mode",                                                                       \
      "str",                                                                                   \
      DW_DEFAULT_STR ("truncate"),                                                             \
      dw_schema_modes_mismatch,                                                                \
      DW_ROLE_IS_MODE,                                                                         \
      0,                                                                                       \
      0,                                                                                       \
      DW_SLIDER_NONE,                                                                          \
      "truncate weights at the upper bound, or mask ratios outside the bounds" },              \
    { "rollout_is_threshold",                                                                  \
      "float | None",                                                                          \
      DW_DEFAULT_NONE,                                                                         \
      NULL,                                                                                    \
      DW_ROLE_IS_THRESHOLD,                                                                    \
      1.0,                                                                                     \
      10.0,                                                                                    \
      DW_SLIDER_LOG,                                                                           \
      "upper ratio bound; None computes nothing" },                                            \
  {                                                                                            \
    "rollout_is_threshold_lower", "float | None", DW_DEFAULT_NONE, NULL,                       \
      DW_ROLE_IS_THRESHOLD_LOWER, 0.1, 1.0, DW_SLIDER_LOG, "lower ratio bound (None: 1/upper)" \
  }

/* v0.6.0: mismatch_helper 5d378b5f9 (§6) */
static const DwSchemaKey dw_schema_verl_0_6_0_keys[] = {
  DW_SCHEMA_MISMATCH_KEYS,
  { "rollout_is_veto_threshold", "float | None", DW_DEFAULT_FLOAT (1e-4), NULL,
    DW_ROLE_VETO_THRESHOLD, 1e-8, 1e-1, DW_SLIDER_LOG,
    "zero a whole row when one token's ratio is below this" },
};

/* 4424616d7 (§6) */
static const DwSchemaKey dw_schema_verl_4424616d7_keys[] = {
  DW_SCHEMA_MISMATCH_KEYS,
  { "rollout_is_veto_threshold", "float | None", DW_DEFAULT_NONE, NULL, DW_ROLE_VETO_THRESHOLD,
    1e-8, 1e-1, DW_SLIDER_LOG, "reject a whole row when one token's ratio is below this" },
};

/* slime: the built-in --use-tis paths (§7.2) and mis.py with mis.yaml (§7.1) */
static const DwSchemaKey dw_schema_slime_keys[] = {
  { "use_tis", "bool", DW_DEFAULT_BOOL (true), NULL, DW_ROLE_ENABLE, 0, 0, DW_SLIDER_NONE,
    "--use-tis: weight the policy loss", "--use-tis" },
  { "tis_function", "str | None", DW_DEFAULT_NONE, dw_schema_functions_slime, DW_ROLE_FUNCTION, 0,
    0, DW_SLIDER_NONE,
    "vanilla (default --use-tis), icepop (icepop_function) or mis (mis.py); None: mis unless "
    "tis_clip or tis_clip_low is given",
    "--custom-tis-function-path" },
  { "tis_clip", "float", DW_DEFAULT_FLOAT (2.0), NULL, DW_ROLE_IS_THRESHOLD, 1.0, 10.0,
    DW_SLIDER_LOG, "--tis-clip: upper ratio bound of the built-in paths", "--tis-clip" },
  { "tis_clip_low", "float", DW_DEFAULT_FLOAT (0.0), NULL, DW_ROLE_IS_THRESHOLD_LOWER, 0.0, 1.0,
    DW_SLIDER_LINEAR, "--tis-clip-low: lower ratio bound of the built-in paths", "--tis-clip-low" },
  { "calculate_per_token_loss", "bool", DW_DEFAULT_BOOL (false), NULL, DW_ROLE_PER_TOKEN, 0, 0,
    DW_SLIDER_NONE, "--calculate-per-token-loss: metrics per token instead of per sample",
    "--calculate-per-token-loss" },
  { "use_rs", "bool", DW_DEFAULT_BOOL (false), NULL, DW_ROLE_ENABLE, 0, 0, DW_SLIDER_NONE,
    "mis.py: rejection sampling (needs use_tis)" },
  { "tis_level", "str", DW_DEFAULT_STR ("token"), dw_schema_levels_all, DW_ROLE_IS_LEVEL, 0, 0,
    DW_SLIDER_NONE, "mis.py IS level" },
  { "rs_level", "str", DW_DEFAULT_STR ("token"), dw_schema_levels_all, DW_ROLE_RS_OPTIONS, 0, 0,
    DW_SLIDER_NONE, "mis.py RS level" },
  { "tis_mode", "str", DW_DEFAULT_STR ("truncate"), dw_schema_modes_slime, DW_ROLE_IS_MODE, 0, 0,
    DW_SLIDER_NONE, "mis.py: truncate, clip or mask" },
  { "tis_lower_bound", "float | None", DW_DEFAULT_NONE, NULL, DW_ROLE_IS_THRESHOLD_LOWER, 0.1, 1.0,
    DW_SLIDER_LOG, "mis.py lower ratio bound (None: 1/upper)" },
  { "tis_upper_bound", "float", DW_DEFAULT_FLOAT (2.0), NULL, DW_ROLE_IS_THRESHOLD, 1.0, 10.0,
    DW_SLIDER_LOG, "mis.py upper ratio bound" },
  { "rs_lower_bound", "float | None", DW_DEFAULT_NONE, NULL, DW_ROLE_RS_THRESHOLD_LOWER, 0.1, 1.0,
    DW_SLIDER_LOG, "mis.py RS lower bound (None: the IS lower bound)" },
  { "rs_upper_bound", "float | None", DW_DEFAULT_NONE, NULL, DW_ROLE_RS_THRESHOLD, 1.0, 10.0,
    DW_SLIDER_LOG, "mis.py RS upper bound (None: the IS upper bound)" },
  { "rs_veto_threshold", "float | None", DW_DEFAULT_NONE, NULL, DW_ROLE_VETO_THRESHOLD, 1e-8, 1e-1,
    DW_SLIDER_LOG, "mis.py veto (only with use_rs)" },
  { "tis_batch_normalize", "bool", DW_DEFAULT_BOOL (false), NULL, DW_ROLE_IS_BATCH_NORMALIZE, 0, 0,
    DW_SLIDER_NONE, "mis.py: divide the weights by their batch mean" },
};

#define DW_SCHEMA_ENTRY(gen, prefix, keys) \
  [gen] = { gen, prefix, sizeof keys / sizeof keys[0], keys }

static const DwSchema dw_schema_table[DW_N_GENERATIONS] = {
  DW_SCHEMA_ENTRY (DW_GEN_VERL_0_6_0, "mismatch/", dw_schema_verl_0_6_0_keys),
  DW_SCHEMA_ENTRY (DW_GEN_VERL_4424616D7, "mismatch/", dw_schema_verl_4424616d7_keys),
  DW_SCHEMA_ENTRY (DW_GEN_VERL_0_6_1, "rollout_corr/", dw_schema_verl_0_6_1_keys),
  DW_SCHEMA_ENTRY (DW_GEN_VERL_2F2996B7D, "rollout_corr/", dw_schema_verl_0_6_1_keys),
  DW_SCHEMA_ENTRY (DW_GEN_VERL_0_7_0, "rollout_corr/", dw_schema_verl_0_7_0_keys),
  DW_SCHEMA_ENTRY (DW_GEN_VERL_0_7_1, "rollout_corr/", dw_schema_verl_0_7_1_keys),
  DW_SCHEMA_ENTRY (DW_GEN_VERL_0_8_0, "rollout_corr/", dw_schema_verl_0_8_keys),
  DW_SCHEMA_ENTRY (DW_GEN_VERL_0_9_0, "rollout_corr/", dw_schema_verl_0_8_keys),
  DW_SCHEMA_ENTRY (DW_GEN_SLIME, "mis_", dw_schema_slime_keys),
};

const DwSchema *
dw_schema_get (DwGeneration gen)
{
  if ((int)gen < 0 || gen >= DW_N_GENERATIONS)
    return NULL;
  return &dw_schema_table[gen];
}

const DwSchemaKey *
dw_schema_find (DwGeneration gen, const char *key)
{
  const DwSchema *schema = dw_schema_get (gen);
  for (size_t index = 0; schema && key && index < schema->n_keys; index++)
    if (strcmp (schema->keys[index].name, key) == 0)
      return &schema->keys[index];
  return NULL;
}

const DwSchemaKey *
dw_schema_find_role (DwGeneration gen, DwKeyRole role)
{
  const DwSchema *schema = dw_schema_get (gen);
  for (size_t index = 0; schema && index < schema->n_keys; index++)
    if (schema->keys[index].role == role)
      return &schema->keys[index];
  return NULL;
}

DwValue
dw_schema_default (const DwSchemaKey *key)
{
  switch (key->default_value.kind)
    {
    case DW_VALUE_BOOL:
      return dw_value_bool (key->default_value.b);
    case DW_VALUE_INT:
      return dw_value_int ((int64_t)key->default_value.f);
    case DW_VALUE_FLOAT:
      return dw_value_float (key->default_value.f);
    case DW_VALUE_STR:
      return dw_value_str (key->default_value.s);
    default:
      return dw_value_none ();
    }
}

DwValue
dw_schema_value (const DwConfig *config, const char *key)
{
  const DwValue *given = dw_config_get (config, key);
  if (given)
    return *given;
  const DwSchemaKey *row = dw_schema_find (config->generation, key);
  return row ? dw_schema_default (row) : dw_value_none ();
}

const DwSchemaKey *
dw_schema_find_flag (DwGeneration gen, const char *flag)
{
  const DwSchema *schema = dw_schema_get (gen);
  for (size_t index = 0; schema && flag && index < schema->n_keys; index++)
    if (schema->keys[index].slime_flag && strcmp (schema->keys[index].slime_flag, flag) == 0)
      return &schema->keys[index];
  return NULL;
}

bool
dw_schema_flag_store_true (const DwSchemaKey *key)
{
  return key->slime_flag != NULL && strcmp (key->python_type, "bool") == 0;
}

bool
dw_schema_flag_dest (const DwSchemaKey *key, char *out, size_t size)
{
  if (key->slime_flag == NULL || strncmp (key->slime_flag, "--", 2) != 0)
    return false;
  const char *name = key->slime_flag + 2;
  size_t length = strlen (name);
  if (length >= size)
    return false;
  for (size_t index = 0; index <= length; index++)
    out[index] = name[index] == '-' ? '_' : name[index];
  return true;
}
