/* dw-plan.c — a configuration checked in the trainer's order and resolved into a DwPlan
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Every check here is one the trainer makes before it looks at the batch
 * values; the messages are the trainer's own (docs/CORRECTION.md §3.5, §4.2, §5, §6, §7).
 */
#include "dw-plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dw-python.h"
#include "dw-schema.h"

const char *
dw_plan_level_name (DwLevel level)
{
  switch (level)
    {
    case DW_LEVEL_TOKEN:
      return "token";
    case DW_LEVEL_SEQUENCE:
      return "sequence";
    case DW_LEVEL_GEOMETRIC:
      return "geometric";
    default:
      return NULL;
    }
}

static bool
dw_plan_is_number (const DwValue *value)
{
  return value->kind == DW_VALUE_BOOL || value->kind == DW_VALUE_INT
         || value->kind == DW_VALUE_FLOAT;
}

/* type(value).__name__ as Python prints it in a TypeError */
static const char *
dw_plan_python_type_name (const DwValue *value)
{
  switch (value->kind)
    {
    case DW_VALUE_NONE:
      return "NoneType";
    case DW_VALUE_BOOL:
      return "bool";
    case DW_VALUE_INT:
      return "int";
    case DW_VALUE_FLOAT:
      return "float";
    case DW_VALUE_STR:
      return "str";
    default:
      return "list";
    }
}

/* "token" / "sequence" / (when @allow_geometric) "geometric" */
static bool
dw_plan_level_from_value (const DwValue *value, bool allow_geometric, DwLevel *out)
{
  if (value->kind != DW_VALUE_STR)
    return false;
  if (strcmp (value->s, "token") == 0)
    *out = DW_LEVEL_TOKEN;
  else if (strcmp (value->s, "sequence") == 0)
    *out = DW_LEVEL_SEQUENCE;
  else if (allow_geometric && strcmp (value->s, "geometric") == 0)
    *out = DW_LEVEL_GEOMETRIC;
  else
    return false;
  return true;
}

/* rollout_is_threshold up to v0.7.1: `if rollout_is_threshold <= 0: raise ValueError` */
static bool
dw_plan_check_positive_threshold (const DwValue *threshold, DwCorrectionError *error)
{
  char text[DW_VALUE_STR_MAX];
  if (!dw_plan_is_number (threshold))
    return dw_error_set (error, DW_ERROR_TYPE,
                         "'<=' not supported between instances of '%s' and 'int'",
                         dw_plan_python_type_name (threshold));
  if (dw_value_number (threshold) <= 0)
    return dw_error_set (error, DW_ERROR_VALUE, "rollout_is_threshold must be positive, got %s.",
                         dw_value_to_python_str (threshold, text, sizeof text));
  return true;
}

bool
dw_plan_parse_is_threshold (const DwValue *threshold, double *upper, double *lower, bool *has_lower,
                            DwCorrectionError *error)
{
  char text[DW_VALUE_STR_MAX], repr[64];
  *has_lower = false;
  *lower = 0.0;
  if (threshold->kind == DW_VALUE_BOOL)
    return dw_error_set (error, DW_ERROR_TYPE,
                         "rollout_is_threshold must be specified as a float or a string "
                         "threshold specification, not a boolean.");
  if (threshold->kind == DW_VALUE_INT || threshold->kind == DW_VALUE_FLOAT)
    *upper = dw_value_number (threshold);
  else if (threshold->kind == DW_VALUE_STR)
    {
      size_t start = 0, end = strlen (threshold->s);
      while (start < end && dw_python_is_space ((unsigned char)threshold->s[start]))
        start++;
      while (end > start && dw_python_is_space ((unsigned char)threshold->s[end - 1]))
        end--;
      if (start == end)
        return dw_error_set (error, DW_ERROR_VALUE,
                             "rollout_is_threshold must not be an empty string.");
      snprintf (text, sizeof text, "%.*s", (int)(end - start), threshold->s + start);
      char *underscore = strchr (text, '_');
      bool parsed;
      if (underscore)
        {
          *underscore = '\0';
          parsed = dw_python_float (text, lower) && dw_python_float (underscore + 1, upper);
          *has_lower = true;
        }
      else
        parsed = dw_python_float (text, upper);
      if (!parsed)
        return dw_error_set (error, DW_ERROR_VALUE, "Invalid rollout_is_threshold '%s'.",
                             threshold->s);
    }
  else
    return dw_error_set (error, DW_ERROR_TYPE,
                         "rollout_is_threshold must be a float or a string threshold "
                         "specification.");
  if (*upper <= 0)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "rollout_is_threshold upper bound must be positive, got %s.",
                         dw_python_float_repr (*upper, repr, sizeof repr));
  if (*has_lower && *lower <= 0)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "rollout_is_threshold lower bound must be positive, got %s.",
                         dw_python_float_repr (*lower, repr, sizeof repr));
  if (*has_lower && *lower > *upper)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "rollout_is_threshold lower bound must be <= upper bound.");
  return true;
}

/* rollout_is / rollout_is_threshold / rollout_is_batch_normalize of the rollout_corr helper
 * (§3.1, §3.5): IS is on only when both the level and the threshold are not None */
static bool
dw_plan_build_verl_is (const DwConfig *config, DwPlan *plan, DwCorrectionError *error)
{
  char text[DW_VALUE_STR_MAX];
  DwValue level = dw_schema_value (config, "rollout_is");
  DwValue threshold = dw_schema_value (config, "rollout_is_threshold");
  if (level.kind == DW_VALUE_NONE || threshold.kind == DW_VALUE_NONE)
    return true;
  if (!dw_plan_level_from_value (&level, false, &plan->is_level))
    return dw_error_set (error, DW_ERROR_VALUE,
                         "Invalid rollout_is: %s. Must be one of {'sequence', 'token'}.",
                         dw_value_to_python_str (&level, text, sizeof text));
  const DwGeneration gen = config->generation;
  if (gen == DW_GEN_VERL_0_8_0 || gen == DW_GEN_VERL_0_9_0)
    {
      if (!dw_plan_parse_is_threshold (&threshold, &plan->is_upper, &plan->is_lower,
                                       &plan->is_lower_given, error))
        return false;
      plan->is_metrics
        = gen == DW_GEN_VERL_0_9_0 ? DW_IS_METRICS_APPLIED_RAW_SEQ : DW_IS_METRICS_APPLIED;
    }
  else
    {
      if (!dw_plan_check_positive_threshold (&threshold, error))
        return false;
      plan->is_upper = dw_value_number (&threshold);
      plan->is_metrics = DW_IS_METRICS_RAW;
    }
  plan->is_on = true;
  plan->is_mode = plan->is_lower_given ? DW_IS_ZERO_OUTSIDE : DW_IS_TRUNCATE;
  if (!plan->is_lower_given)
    plan->is_lower = 1.0 / plan->is_upper;
  DwValue normalize = dw_schema_value (config, "rollout_is_batch_normalize");
  plan->batch_normalize = dw_value_truthy (&normalize);
  return true;
}

/* rollout_rs token|sequence|geometric with ratio bounds, and the token veto (§5.1, §5.3) */
static bool
dw_plan_build_legacy_rs (const DwConfig *config, DwPlan *plan, DwCorrectionError *error)
{
  char text[DW_VALUE_STR_MAX];
  DwValue options = dw_schema_value (config, "rollout_rs");
  if (options.kind != DW_VALUE_NONE)
    {
      DwValue upper = dw_schema_value (config, "rollout_rs_threshold");
      if (upper.kind == DW_VALUE_NONE)
        return dw_error_set (error, DW_ERROR_VALUE,
                             "rollout_rs_threshold must be explicitly provided when rollout_rs "
                             "is enabled. Set rollout_rs_threshold to the desired threshold "
                             "value.");
      if (!dw_plan_level_from_value (&options, true, &plan->rs_level))
        return dw_error_set (error, DW_ERROR_VALUE,
                             "Invalid rollout_rs: %s. Must be one of {'sequence', 'geometric', "
                             "'token'}.",
                             dw_value_to_python_str (&options, text, sizeof text));
      if (!dw_plan_is_number (&upper))
        return dw_error_set (error, DW_ERROR_TYPE, "rollout_rs_threshold must be numeric, got %s.",
                             dw_plan_python_type_name (&upper));
      plan->rs_upper = dw_value_number (&upper);
      DwValue lower = dw_schema_value (config, "rollout_rs_threshold_lower");
      if (lower.kind == DW_VALUE_NONE)
        {
          if (plan->rs_upper == 0)
            return dw_error_set (error, DW_ERROR_ZERO_DIVISION, "float division by zero");
          plan->rs_lower = 1.0 / plan->rs_upper;
        }
      else if (!dw_plan_is_number (&lower))
        return dw_error_set (error, DW_ERROR_TYPE,
                             "rollout_rs_threshold_lower must be numeric, got %s.",
                             dw_plan_python_type_name (&lower));
      else
        plan->rs_lower = dw_value_number (&lower);
      plan->rs_on = true;
    }
  DwValue veto = dw_schema_value (config, "rollout_token_veto_threshold");
  if (veto.kind != DW_VALUE_NONE)
    {
      if (!dw_plan_is_number (&veto))
        return dw_error_set (error, DW_ERROR_TYPE,
                             "'<=' not supported between instances of '%s' and 'int'",
                             dw_plan_python_type_name (&veto));
      if (dw_value_number (&veto) <= 0)
        return dw_error_set (error, DW_ERROR_VALUE,
                             "rollout_token_veto_threshold must be positive, got %s.",
                             dw_value_to_python_str (&veto, text, sizeof text));
      plan->veto_on = true;
      plan->veto = dw_value_number (&veto);
    }
  plan->veto_keys_always = true;
  return true;
}

/* mismatch_helper.compute_rollout_importance_weights (§6) */
static bool
dw_plan_build_mismatch (const DwConfig *config, DwPlan *plan, DwCorrectionError *error)
{
  char text[DW_VALUE_STR_MAX];
  DwValue level = dw_schema_value (config, "rollout_is_level");
  DwValue mode = dw_schema_value (config, "rollout_is_mode");
  DwValue threshold = dw_schema_value (config, "rollout_is_threshold");
  DwValue lower = dw_schema_value (config, "rollout_is_threshold_lower");
  DwValue veto = dw_schema_value (config, "rollout_is_veto_threshold");
  const bool v0_6_0 = config->generation == DW_GEN_VERL_0_6_0;
  plan->returns_mask = !v0_6_0;
  plan->mismatch_quantiles = v0_6_0;
  if (threshold.kind == DW_VALUE_NONE)
    {
      plan->nothing = true;
      return true;
    }
  if (!dw_plan_level_from_value (&level, true, &plan->is_level))
    return dw_error_set (error, DW_ERROR_VALUE,
                         "Invalid rollout_is_level: %s. Must be 'token', 'sequence', or "
                         "'geometric'.",
                         dw_value_to_python_str (&level, text, sizeof text));
  if (!dw_plan_check_positive_threshold (&threshold, error))
    return false;
  if (mode.kind == DW_VALUE_STR && strcmp (mode.s, "truncate") == 0)
    plan->is_mode = DW_IS_TRUNCATE;
  else if (mode.kind == DW_VALUE_STR && strcmp (mode.s, "mask") == 0)
    plan->is_mode = v0_6_0 ? DW_IS_ZERO_OUTSIDE : DW_IS_MASK_OUTSIDE;
  else
    return dw_error_set (error, DW_ERROR_VALUE,
                         "Invalid rollout_is_mode: %s. Must be 'truncate' or 'mask'.",
                         dw_value_to_python_str (&mode, text, sizeof text));
  plan->is_on = true;
  plan->is_upper = dw_value_number (&threshold);
  plan->is_lower_given = lower.kind != DW_VALUE_NONE;
  plan->is_lower = plan->is_lower_given ? dw_value_number (&lower) : 1.0 / plan->is_upper;
  plan->veto_keys_always = true;
  if (veto.kind != DW_VALUE_NONE)
    {
      if (!dw_plan_is_number (&veto))
        return dw_error_set (error, DW_ERROR_TYPE, "rollout_is_veto_threshold must be numeric.");
      plan->veto_on = true;
      plan->veto = dw_value_number (&veto);
    }
  return true;
}

/* a number key of slime's arguments; a None (or not a number) gives @fallback */
static double
dw_plan_slime_number (const DwConfig *config, const char *key, double fallback, bool *is_none)
{
  DwValue value = dw_schema_value (config, key);
  if (is_none)
    *is_none = value.kind == DW_VALUE_NONE;
  return dw_plan_is_number (&value) ? dw_value_number (&value) : fallback;
}

/* slime: the built-in path or mis.py, chosen by tis_function (§7) */
static bool
dw_plan_build_slime (const DwConfig *config, DwPlan *plan, DwCorrectionError *error)
{
  char text[DW_VALUE_STR_MAX];
  DwValue function = dw_schema_value (config, "tis_function");
  DwValue use_tis = dw_schema_value (config, "use_tis");
  plan->slime_use_tis = dw_value_truthy (&use_tis);
  plan->nothing = !plan->slime_use_tis;
  if (function.kind == DW_VALUE_NONE)
    plan->path = dw_config_get (config, "tis_clip") || dw_config_get (config, "tis_clip_low")
                   ? DW_PATH_SLIME_VANILLA
                   : DW_PATH_SLIME_MIS;
  else if (function.kind == DW_VALUE_STR && strcmp (function.s, "vanilla") == 0)
    plan->path = DW_PATH_SLIME_VANILLA;
  else if (function.kind == DW_VALUE_STR && strcmp (function.s, "icepop") == 0)
    plan->path = DW_PATH_SLIME_ICEPOP;
  else if (function.kind == DW_VALUE_STR && strcmp (function.s, "mis") == 0)
    plan->path = DW_PATH_SLIME_MIS;
  else
    return dw_error_set (error, DW_ERROR_VALUE,
                         "Unsupported tis_function: %s. Must be 'vanilla', 'icepop' or 'mis'.",
                         dw_value_to_python_str (&function, text, sizeof text));
  if (plan->path != DW_PATH_SLIME_MIS)
    {
      plan->metric_prefix = "train/";
      plan->is_on = plan->slime_use_tis;
      plan->is_level = DW_LEVEL_TOKEN;
      plan->is_mode = plan->path == DW_PATH_SLIME_ICEPOP ? DW_IS_ZERO_OUTSIDE : DW_IS_CLAMP;
      plan->is_upper = dw_plan_slime_number (config, "tis_clip", 2.0, NULL);
      plan->is_lower = dw_plan_slime_number (config, "tis_clip_low", 0.0, NULL);
      plan->is_lower_given = true;
      DwValue per_token = dw_schema_value (config, "calculate_per_token_loss");
      plan->per_token_metrics = dw_value_truthy (&per_token);
      return true;
    }
  DwValue use_rs = dw_schema_value (config, "use_rs");
  DwValue tis_level = dw_schema_value (config, "tis_level");
  DwValue rs_level = dw_schema_value (config, "rs_level");
  DwValue mode = dw_schema_value (config, "tis_mode");
  DwValue normalize = dw_schema_value (config, "tis_batch_normalize");
  plan->slime_use_rs = dw_value_truthy (&use_rs);
  plan->batch_normalize = dw_value_truthy (&normalize);
  bool lower_none, rs_lower_none, rs_upper_none, veto_none;
  plan->is_upper = dw_plan_slime_number (config, "tis_upper_bound", 2.0, NULL);
  plan->is_lower = dw_plan_slime_number (config, "tis_lower_bound", 0.0, &lower_none);
  plan->rs_lower = dw_plan_slime_number (config, "rs_lower_bound", 0.0, &rs_lower_none);
  plan->rs_upper = dw_plan_slime_number (config, "rs_upper_bound", 0.0, &rs_upper_none);
  plan->veto = dw_plan_slime_number (config, "rs_veto_threshold", 0.0, &veto_none);
  if (!plan->slime_use_tis)
    return true;
  if (!dw_plan_level_from_value (&tis_level, true, &plan->is_level))
    return dw_error_set (error, DW_ERROR_VALUE, "Unsupported tis_level: %s",
                         dw_value_to_python_str (&tis_level, text, sizeof text));
  if (plan->slime_use_rs && !dw_plan_level_from_value (&rs_level, true, &plan->rs_level))
    return dw_error_set (error, DW_ERROR_VALUE, "Unsupported tis_level: %s",
                         dw_value_to_python_str (&rs_level, text, sizeof text));
  if (mode.kind == DW_VALUE_STR && strcmp (mode.s, "truncate") == 0)
    plan->is_mode = DW_IS_TRUNCATE;
  else if (mode.kind == DW_VALUE_STR && strcmp (mode.s, "clip") == 0)
    plan->is_mode = DW_IS_CLAMP;
  else if (mode.kind == DW_VALUE_STR && strcmp (mode.s, "mask") == 0)
    plan->is_mode = DW_IS_MASK_OUTSIDE;
  else
    return dw_error_set (error, DW_ERROR_VALUE, "Unsupported tis_mode: %s",
                         dw_value_to_python_str (&mode, text, sizeof text));
  if (plan->batch_normalize && plan->is_level == DW_LEVEL_GEOMETRIC)
    return dw_error_set (error, DW_ERROR_VALUE, "Unsupported tis_level: geometric");
  plan->is_on = true;
  plan->is_lower_given = !lower_none;
  if (lower_none)
    plan->is_lower = 1.0 / plan->is_upper;
  if (rs_lower_none)
    plan->rs_lower = plan->is_lower;
  if (rs_upper_none)
    plan->rs_upper = plan->is_upper;
  plan->rs_on = plan->slime_use_rs;
  plan->veto_on = plan->slime_use_rs && !veto_none;
  return true;
}

bool
dw_plan_build (const DwConfig *config, DwPlan *plan, DwCorrectionError *error)
{
  memset (plan, 0, sizeof *plan);
  dw_error_clear (error);
  const DwGenerationInfo *info = config ? dw_generation_info (config->generation) : NULL;
  if (info == NULL)
    return dw_error_set (error, DW_ERROR_VALUE, "unknown generation %d.",
                         config ? (int)config->generation : -1);
  if (dw_config_get (config, "preset"))
    return dw_error_set (error, DW_ERROR_VALUE, "preset must be resolved before running.");
  plan->generation = config->generation;
  plan->metric_prefix = dw_schema_get (config->generation)->metric_prefix;
  plan->returns_mask = true;
  switch (info->family)
    {
    case DW_FAMILY_VERL_K_OPTIONS:
      {
        plan->path = DW_PATH_VERL_K_OPTIONS;
        if (!dw_plan_build_verl_is (config, plan, error))
          return false;
        DwValue options = dw_schema_value (config, "rollout_rs");
        if (options.kind == DW_VALUE_NONE)
          return true;
        DwValue threshold = dw_schema_value (config, "rollout_rs_threshold");
        plan->rs_on = true;
        return dw_rs_parse_checked (&options, &threshold, config->generation == DW_GEN_VERL_0_9_0,
                                    &plan->rs, error);
      }
    case DW_FAMILY_VERL_LEGACY_RS:
      plan->path = DW_PATH_VERL_LEGACY_RS;
      plan->bn_rows
        = config->generation == DW_GEN_VERL_0_6_1 ? DW_BN_ROWS_ALL : DW_BN_ROWS_NON_EMPTY;
      return dw_plan_build_verl_is (config, plan, error)
             && dw_plan_build_legacy_rs (config, plan, error);
    case DW_FAMILY_VERL_MISMATCH:
      plan->path = DW_PATH_VERL_MISMATCH;
      return dw_plan_build_mismatch (config, plan, error);
    case DW_FAMILY_SLIME:
    default:
      return dw_plan_build_slime (config, plan, error);
    }
}
