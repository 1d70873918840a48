/* dw-schema.h — every configuration key of every generation, in one table
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc only. The schema is the single description of a generation's configuration: the CLI's
 * --set parser and help, the what-if engine, config export/import and the Tune page's controls
 * all read it instead of knowing key names. dw_plan_build (dw-plan.h) is the single place that
 * checks values against it, in verl's order with verl's messages.
 *
 * How to add a key (one edit, in dw-schema.c): append a DwSchemaKey row to the key table of
 * the generation(s) that have it — name, Python type, default, allowed strings, role, slider
 * range, hint and (slime) the command-line flag. Example, the IcePop bounds of verl v0.8.0 are one
 * row of verl_0_8_keys:
 *
 *   { "rollout_is_threshold", "float | str | None", DW_DEFAULT_FLOAT (2.0), NULL,
 *     DW_ROLE_IS_THRESHOLD, 1.0, 10.0, DW_SLIDER_LOG,
 *     "TIS upper bound U, or \"lower_upper\" for IcePop (weights outside zeroed)" },
 *
 * A key with a new meaning (a role no path reads yet) also needs its use in dw_plan_build.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "dw-config.h"

#ifdef __cplusplus
extern "C"
{
#endif

  /* What a key does, so generic code (controls, export, what-if) can find "the IS threshold"
   * of any generation without knowing its name. */
  typedef enum
  {
    DW_ROLE_OTHER = 0,          /* carried along (bypass_mode, loss_type, …) */
    DW_ROLE_IS_LEVEL,           /* rollout_is / rollout_is_level / tis_level */
    DW_ROLE_IS_MODE,            /* rollout_is_mode / tis_mode */
    DW_ROLE_IS_THRESHOLD,       /* upper bound (verl ≥ 0.8: also "lower_upper") */
    DW_ROLE_IS_THRESHOLD_LOWER, /* explicit lower bound (mismatch_helper, slime) */
    DW_ROLE_IS_BATCH_NORMALIZE,
    DW_ROLE_RS_OPTIONS,   /* rollout_rs / rs_level */
    DW_ROLE_RS_THRESHOLD, /* rollout_rs_threshold / rs_upper_bound */
    DW_ROLE_RS_THRESHOLD_LOWER,
    DW_ROLE_VETO_THRESHOLD,
    DW_ROLE_ENABLE,    /* slime use_tis / use_rs */
    DW_ROLE_FUNCTION,  /* slime tis_function: vanilla | icepop | mis */
    DW_ROLE_PER_TOKEN, /* slime calculate_per_token_loss */
  } DwKeyRole;

  typedef enum
  {
    DW_SLIDER_NONE = 0, /* not a number (choice, flag, option list) */
    DW_SLIDER_LINEAR,
    DW_SLIDER_LOG, /* the control moves in log space (ratio bounds) */
  } DwSliderScale;

  typedef struct
  {
    DwValueKind kind;
    bool b;
    double f;
    const char *s;
  } DwDefault;

#define DW_DEFAULT_NONE             \
  {                                 \
    DW_VALUE_NONE, false, 0.0, NULL \
  }
#define DW_DEFAULT_BOOL(b)        \
  {                               \
    DW_VALUE_BOOL, (b), 0.0, NULL \
  }
#define DW_DEFAULT_FLOAT(f)          \
  {                                  \
    DW_VALUE_FLOAT, false, (f), NULL \
  }
#define DW_DEFAULT_STR(s)         \
  {                               \
    DW_VALUE_STR, false, 0.0, (s) \
  }

  typedef struct
  {
    const char *name;           /* the trainer's argument name */
    const char *python_type;    /* as the trainer annotates it: "float | str | None" */
    DwDefault default_value;    /* the value when the key is not given */
    const char *const *choices; /* allowed strings (NULL-terminated), or NULL */
    DwKeyRole role;
    double slider_min, slider_max; /* a useful range for a control; any value is accepted */
    DwSliderScale slider_scale;
    const char *hint; /* one line for tooltips and --help */
    /* slime: the command-line flag that sets the key ("--tis-clip"), NULL for a mis.yaml or verl
     * key. A "bool" key is action="store_true"; argparse's dest (the name slime prints in its
     * Namespace and argument dump) is the flag without "--", '-' → '_' (dw_schema_flag_dest).
     * Last, so that rows without a flag need not name it. */
    const char *slime_flag;
  } DwSchemaKey;

  typedef struct
  {
    DwGeneration generation;
    const char *metric_prefix; /* "rollout_corr/", "mismatch/", "mis_" or "train/" */
    size_t n_keys;
    const DwSchemaKey *keys;
  } DwSchema;

  /* The schema of @gen (static), or NULL for an invalid value. */
  const DwSchema *dw_schema_get (DwGeneration gen);
  /* The row of @key in @gen's schema, or NULL when the generation has no such key. */
  const DwSchemaKey *dw_schema_find (DwGeneration gen, const char *key);
  /* The first key of @gen with @role, or NULL. */
  const DwSchemaKey *dw_schema_find_role (DwGeneration gen, DwKeyRole role);
  /* The key's default as a DwValue. */
  DwValue dw_schema_default (const DwSchemaKey *key);
  /* The value @config gives @key, or the schema default (a key the generation lacks: None). */
  DwValue dw_schema_value (const DwConfig *config, const char *key);
  /* The key of @gen set by command-line @flag ("--tis-clip"), or NULL. */
  const DwSchemaKey *dw_schema_find_flag (DwGeneration gen, const char *flag);
  /* Whether @key's flag takes no value (argparse action="store_true": a "bool" key). */
  bool dw_schema_flag_store_true (const DwSchemaKey *key);
  /* argparse's dest of @key's flag ("--custom-tis-function-path" → "custom_tis_function_path")
   * into @out; false when the key has no flag or @size is too small. */
  bool dw_schema_flag_dest (const DwSchemaKey *key, char *out, size_t size);

#ifdef __cplusplus
}
#endif
