/* dw-tune-schema.c — which config key a Tune control writes (see the header)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dw-tune-schema.h"

#include "dw-generation.h"

static DwKeyRole
dw_tune_schema_role (DwTuneField field)
{
  switch (field)
    {
    case DW_TUNE_FIELD_IS_UPPER:
      return DW_ROLE_IS_THRESHOLD;
    case DW_TUNE_FIELD_IS_LOWER:
      return DW_ROLE_IS_THRESHOLD_LOWER;
    case DW_TUNE_FIELD_RS_UPPER:
      return DW_ROLE_RS_THRESHOLD;
    case DW_TUNE_FIELD_RS_LOWER:
      return DW_ROLE_RS_THRESHOLD_LOWER;
    case DW_TUNE_FIELD_VETO:
      return DW_ROLE_VETO_THRESHOLD;
    case DW_TUNE_FIELD_IS_SWITCH:
    case DW_TUNE_FIELD_RS_SWITCH:
    default:
      return DW_ROLE_ENABLE;
    }
}

/* The plan's value for @field (a number; a switch: whether the feature is on). */
static double
dw_tune_schema_plan_value (const DwPlan *plan, DwTuneField field)
{
  switch (field)
    {
    case DW_TUNE_FIELD_IS_UPPER:
      return plan->is_upper;
    case DW_TUNE_FIELD_IS_LOWER:
      return plan->is_lower;
    case DW_TUNE_FIELD_RS_UPPER:
      return plan->rs_upper;
    case DW_TUNE_FIELD_RS_LOWER:
      return plan->rs_lower;
    case DW_TUNE_FIELD_VETO:
      return plan->veto;
    case DW_TUNE_FIELD_IS_SWITCH:
      return plan->is_on && !plan->nothing;
    case DW_TUNE_FIELD_RS_SWITCH:
    default:
      return plan->rs_on;
    }
}

/* Whether writing @key moves the plan's @field without changing the path @config runs. */
static gboolean
dw_tune_schema_key_moves (const DwConfig *config, const DwPlan *base, const DwSchemaKey *key,
                          DwTuneField field)
{
  gboolean is_switch = field == DW_TUNE_FIELD_IS_SWITCH || field == DW_TUNE_FIELD_RS_SWITCH;
  /* values no preset uses, inside every bound's valid range */
  double probes[2] = { 0.3713, 3.713 };
  if (field == DW_TUNE_FIELD_VETO)
    probes[0] = probes[1] = 3.713e-5;

  for (int attempt = 0; attempt < 2; attempt++)
    {
      DwConfig trial = *config;
      DwValue value = is_switch ? dw_value_bool (attempt == 1) : dw_value_float (probes[attempt]);
      DwPlan plan;
      DwCorrectionError error;

      dw_config_set (&trial, key->name, &value);
      if (!dw_plan_build (&trial, &plan, &error) || plan.path != base->path)
        continue;
      if (is_switch)
        {
          DwConfig off = *config;
          DwValue no = dw_value_bool (FALSE);
          DwPlan plan_off;

          dw_config_set (&off, key->name, &no);
          if (dw_plan_build (&off, &plan_off, &error)
              && dw_tune_schema_plan_value (&plan, field)
                   != dw_tune_schema_plan_value (&plan_off, field))
            return TRUE;
          return FALSE;
        }
      if (fabs (dw_tune_schema_plan_value (&plan, field) - probes[attempt])
          <= 1e-12 * probes[attempt])
        return TRUE;
    }
  return FALSE;
}

const DwSchemaKey *
dw_tune_schema_key (const DwConfig *config, DwTuneField field)
{
  const DwSchema *schema = dw_schema_get (config->generation);
  DwKeyRole role = dw_tune_schema_role (field);
  const DwSchemaKey *first = NULL;
  guint n_candidates = 0;
  DwPlan base;
  DwCorrectionError error;
  gboolean have_base;

  for (size_t index = 0; schema && index < schema->n_keys; index++)
    if (schema->keys[index].role == role)
      {
        n_candidates++;
        if (first == NULL)
          first = &schema->keys[index];
      }
  if (n_candidates == 0 || (n_candidates == 1 && role != DW_ROLE_ENABLE))
    return first;

  /* several keys share the role (or a switch that may switch something else): the one the plan
   * of this config reads */
  have_base = dw_plan_build (config, &base, &error);
  for (size_t index = 0; have_base && index < schema->n_keys; index++)
    if (schema->keys[index].role == role
        && dw_tune_schema_key_moves (config, &base, &schema->keys[index], field))
      return &schema->keys[index];
  return role == DW_ROLE_ENABLE ? NULL : first;
}

gboolean
dw_tune_schema_key_takes_none (const DwSchemaKey *key)
{
  return key != NULL && strstr (key->python_type, "None") != NULL;
}

gboolean
dw_tune_schema_key_takes_str (const DwSchemaKey *key)
{
  return key != NULL && strstr (key->python_type, "float") != NULL
         && strstr (key->python_type, "str") != NULL;
}

const char *const *
dw_tune_schema_choices (DwGeneration gen, DwKeyRole role)
{
  const DwSchemaKey *key = dw_schema_find_role (gen, role);
  return key ? key->choices : NULL;
}

/* 0: a release of the first framework (verl), 1: another framework, 2: a commit */
static int
dw_tune_schema_generation_group (const DwGenerationInfo *info)
{
  if (strcmp (info->framework, "verl") != 0)
    return 1;
  return info->release != NULL ? 0 : 2;
}

static int
dw_tune_schema_generation_compare (const void *a, const void *b)
{
  const DwGenerationInfo *ia = dw_generation_info (*(const DwGeneration *)a);
  const DwGenerationInfo *ib = dw_generation_info (*(const DwGeneration *)b);
  int ga = dw_tune_schema_generation_group (ia), gb = dw_tune_schema_generation_group (ib);

  if (ga != gb)
    return ga - gb;
  if (ia->release && ib->release)
    return -strverscmp (ia->release, ib->release); /* newest first */
  return strcmp (ia->name, ib->name);
}

void
dw_tune_schema_generation_order (DwGeneration order[DW_N_GENERATIONS])
{
  for (int gen = 0; gen < DW_N_GENERATIONS; gen++)
    order[gen] = (DwGeneration)gen;
  qsort (order, DW_N_GENERATIONS, sizeof order[0], dw_tune_schema_generation_compare);
}
