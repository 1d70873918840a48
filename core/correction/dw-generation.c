/* dw-generation.c — the generations by release name, their aliases and commit prefixes
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc only. Which helper each release ships is in docs/CORRECTION.md §1.
 */
#include "dw-generation.h"

#include <string.h>

static const DwGenerationInfo dw_generation_table[DW_N_GENERATIONS] = {
  [DW_GEN_VERL_0_6_0]
  = { DW_GEN_VERL_0_6_0, "verl-0.6.0", "verl", "v0.6.0", "5d378b5f9", DW_FAMILY_VERL_MISMATCH,
      "mismatch_helper: rollout_is_level/mode, weights only, veto 1e-4" },
  [DW_GEN_VERL_4424616D7]
  = { DW_GEN_VERL_4424616D7, "verl-4424616d7", "verl", NULL, "4424616d7", DW_FAMILY_VERL_MISMATCH,
      "mismatch_helper returning a modified mask, no default veto" },
  [DW_GEN_VERL_0_6_1]
  = { DW_GEN_VERL_0_6_1, "verl-0.6.1", "verl", "v0.6.1", "504696245", DW_FAMILY_VERL_LEGACY_RS,
      "rollout_corr/: token/sequence/geometric RS, veto, batch norm over "
      "all rows" },
  [DW_GEN_VERL_2F2996B7D]
  = { DW_GEN_VERL_2F2996B7D, "verl-2f2996b7d", "verl", NULL, "2f2996b7d", DW_FAMILY_VERL_LEGACY_RS,
      "as v0.7.0 (batch norm over non-empty rows), older presets" },
  [DW_GEN_VERL_0_7_0]
  = { DW_GEN_VERL_0_7_0, "verl-0.7.0", "verl", "v0.7.0", "518bada21", DW_FAMILY_VERL_LEGACY_RS,
      "sequence batch norm over non-empty rows; loss_type presets" },
  [DW_GEN_VERL_0_7_1]
  = { DW_GEN_VERL_0_7_1, "verl-0.7.1", "verl", "v0.7.1", "97eac9048", DW_FAMILY_VERL_K_OPTIONS,
      "rollout_rs k1/k2/k3 options and lists, veto removed, k3 presets" },
  [DW_GEN_VERL_0_8_0]
  = { DW_GEN_VERL_0_8_0, "verl-0.8.0", "verl", "v0.8.0", "d2916f5a0", DW_FAMILY_VERL_K_OPTIONS,
      "IcePop \"lower_upper\" IS bounds; IS metrics of the applied weights" },
  [DW_GEN_VERL_0_9_0]
  = { DW_GEN_VERL_0_9_0, "verl-0.9.0", "verl", "v0.9.0", "7fbc00a9c", DW_FAMILY_VERL_K_OPTIONS,
      "sequence fractions from raw row means; RS lower > upper rejected" },
  [DW_GEN_SLIME] = { DW_GEN_SLIME, "slime", "slime", NULL, "624b824a8", DW_FAMILY_SLIME,
                     "mis.py, and the built-in TIS / IcePop of --use-tis" },
};

typedef struct
{
  const char *name;
  DwGeneration generation;
  const char *note;
} DwGenerationAlias;

/* Names that are not canonical: old names kept for stored configs and scripts, and commit
 * prefixes of the goldens. */
static const DwGenerationAlias dw_generation_alias_table[] = {
  { "verl", DW_GEN_VERL_LATEST,
    "'verl' is the newest release, verl-0.9.0 (before generations were named by release it "
    "meant b178a3cd5 = verl-0.7.1)" },
  { "verl-0.7", DW_GEN_VERL_2F2996B7D,
    "'verl-0.7' is commit 2f2996b7d (verl-2f2996b7d), between v0.6.1 and v0.7.0: the correction "
    "of verl-0.7.0 with older presets" },
  { "verl-0.6", DW_GEN_VERL_4424616D7,
    "'verl-0.6' is commit 4424616d7 (verl-4424616d7), between v0.6.0 and v0.6.1; the v0.6.0 "
    "release is verl-0.6.0" },
  { "b178a3cd5", DW_GEN_VERL_0_7_1,
    "commit b178a3cd5 ships the helper of v0.7.1 (97eac9048): verl-0.7.1" },
  { "2c6c65cb0", DW_GEN_VERL_0_6_1,
    "commit 2c6c65cb0 computes what v0.6.1 (504696245) computes: verl-0.6.1" },
  { "1dda039b9", DW_GEN_VERL_0_9_0, "commit 1dda039b9 is verl main at v0.9.0: verl-0.9.0" },
  { "624b824a8", DW_GEN_SLIME, "slime commit 624b824a8: slime" },
};

static const char *const dw_generation_alias_names[] = {
  "verl",
  "verl-0.7",
  "verl-0.6",
  NULL,
};

const DwGenerationInfo *
dw_generation_info (DwGeneration gen)
{
  if ((int)gen < 0 || gen >= DW_N_GENERATIONS)
    return NULL;
  return &dw_generation_table[gen];
}

const char *
dw_generation_name (DwGeneration gen)
{
  const DwGenerationInfo *info = dw_generation_info (gen);
  return info ? info->name : NULL;
}

/* @name is a prefix (≥ 7 characters) of the 9-digit commit @commit */
static bool
dw_generation_commit_matches (const char *name, const char *commit)
{
  size_t length = strlen (name);
  if (length < 7 || length > 40)
    return false;
  return strncmp (name, commit, length < 9 ? length : 9) == 0;
}

bool
dw_generation_resolve (const char *name, DwGeneration *out, const char **note)
{
  if (note)
    *note = NULL;
  if (name == NULL)
    return false;
  for (int gen = 0; gen < DW_N_GENERATIONS; gen++)
    if (strcmp (name, dw_generation_table[gen].name) == 0)
      {
        *out = (DwGeneration)gen;
        return true;
      }
  size_t n_aliases = sizeof dw_generation_alias_table / sizeof dw_generation_alias_table[0];
  for (size_t index = 0; index < n_aliases; index++)
    {
      const DwGenerationAlias *alias = &dw_generation_alias_table[index];
      bool is_commit = alias->name[0] >= '0' && alias->name[0] <= '9';
      if (is_commit ? dw_generation_commit_matches (name, alias->name)
                    : strcmp (name, alias->name) == 0)
        {
          *out = alias->generation;
          if (note)
            *note = alias->note;
          return true;
        }
    }
  for (int gen = 0; gen < DW_N_GENERATIONS; gen++)
    if (dw_generation_commit_matches (name, dw_generation_table[gen].helper_commit))
      {
        *out = (DwGeneration)gen;
        if (note)
          *note = NULL;
        return true;
      }
  return false;
}

bool
dw_generation_from_name (const char *name, DwGeneration *out)
{
  return dw_generation_resolve (name, out, NULL);
}

const char *const *
dw_generation_aliases (void)
{
  return dw_generation_alias_names;
}
