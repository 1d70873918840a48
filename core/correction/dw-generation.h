/* dw-generation.h — the verl releases and slime paths the correction core reproduces
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc only. A generation is what a user's `pip show verl` reports (verl-0.6.0 … verl-0.9.0) or
 * slime; two commits between releases stay selectable because stored configs and scripts name
 * them (their old names are aliases, see dw_generation_resolve). docs/CORRECTION.md §1 lists
 * what changed between generations.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C"
{
#endif

  /* The numeric values of the first five are the ones stores and tests have always used. */
  typedef enum
  {
    DW_GEN_VERL_0_7_1 = 0, /* v0.7.1: helper 97eac9048 (= b178a3cd5), k-option RS */
    DW_GEN_VERL_2F2996B7D, /* commit between v0.6.1 and v0.7.0 (old name "verl-0.7") */
    DW_GEN_VERL_0_6_1,     /* v0.6.1: helper 504696245 (= 2c6c65cb0), token/sequence/geometric RS */
    DW_GEN_VERL_4424616D7, /* commit between v0.6.0 and v0.6.1 (old name "verl-0.6") */
    DW_GEN_SLIME,          /* slime 624b824a8: mis.py and the built-in TIS / IcePop */
    DW_GEN_VERL_0_6_0,     /* v0.6.0: mismatch_helper 5d378b5f9 */
    DW_GEN_VERL_0_7_0,     /* v0.7.0: helper 518bada21 */
    DW_GEN_VERL_0_8_0,     /* v0.8.0: helper d2916f5a0, IcePop */
    DW_GEN_VERL_0_9_0,     /* v0.9.0: helper 7fbc00a9c */
    DW_N_GENERATIONS
  } DwGeneration;

/* The generations that existed before generations were named by release (values 0 … 4). Code
 * that has not adopted the schema yet (what-if engine, Tune page) offers only these. */
#define DW_N_GENERATIONS_PRE_RELEASE_NAMES 5

/* What the name "verl" means: the newest release. */
#define DW_GEN_VERL_LATEST DW_GEN_VERL_0_9_0

/* Enumerator names from before generations were named by release (same values, same
 * behaviour). DW_GEN_VERL is b178a3cd5 = v0.7.1, NOT what the name "verl" resolves to now. */
#define DW_GEN_VERL     DW_GEN_VERL_0_7_1
#define DW_GEN_VERL_0_7 DW_GEN_VERL_2F2996B7D
#define DW_GEN_VERL_0_6 DW_GEN_VERL_4424616D7

  /* The code path a generation runs (docs/CORRECTION.md §1). */
  typedef enum
  {
    DW_FAMILY_VERL_MISMATCH = 0, /* mismatch_helper: rollout_is_level / rollout_is_mode (§6) */
    DW_FAMILY_VERL_LEGACY_RS,    /* rollout_rs token|sequence|geometric + veto (§5) */
    DW_FAMILY_VERL_K_OPTIONS,    /* rollout_rs k-options, comma lists (§3, §4) */
    DW_FAMILY_SLIME,             /* mis.py or the built-in paths (§7) */
  } DwFamily;

  typedef struct
  {
    DwGeneration generation;
    const char *name;          /* canonical: "verl-0.9.0", "verl-2f2996b7d", "slime" */
    const char *framework;     /* "verl" or "slime" */
    const char *release;       /* "v0.9.0"; NULL for a commit between releases */
    const char *helper_commit; /* the commit of the correction helper that generation runs */
    DwFamily family;
    const char *summary; /* one line: what it computes differently from its predecessor */
  } DwGenerationInfo;

  /* Static description of @gen, or NULL for an invalid value. */
  const DwGenerationInfo *dw_generation_info (DwGeneration gen);

  /* The canonical name ("verl-0.9.0", …); NULL for an invalid value. */
  const char *dw_generation_name (DwGeneration gen);

  /* Parses a canonical name, "verl" (the newest release), an old name ("verl-0.7",
   * "verl-0.6") or a commit prefix of ≥ 7 hex digits (b178a3cd5, 97eac9048, 2c6c65cb0, …).
   * When @name is not the canonical name and @note is non-NULL, *@note gets a static sentence
   * saying what it resolves to ("'verl-0.7' is commit 2f2996b7d, between v0.6.1 and v0.7.0 …");
   * else NULL. */
  bool dw_generation_resolve (const char *name, DwGeneration *out, const char **note);

  /* dw_generation_resolve without the note. */
  bool dw_generation_from_name (const char *name, DwGeneration *out);

  /* Every name dw_generation_resolve accepts besides the canonical ones (NULL-terminated), for
   * help texts. */
  const char *const *dw_generation_aliases (void);

#ifdef __cplusplus
}
#endif
