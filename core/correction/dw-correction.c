/* dw-correction.c — the entry points: check the batch, build the plan, run the generation's path
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. The paths live in one file each (dw-verl.c, dw-verl-mismatch.c,
 * dw-slime-mis.c, dw-slime-builtin.c, dw-correction-fast.c); docs/CORRECTION.md is the math.
 */
#include "dw-correction-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the batch checks verl makes before any config check (dtype, shape, a valid token) */
static bool
dw_correction_check_batch (const DwBatch *batch, DwCorrectionError *error)
{
  DwContext context;
  return dw_context_init (&context, batch, error);
}

static bool
dw_correction_dispatch (const DwBatch *batch, const DwPlan *plan, DwEntry entry,
                        DwCorrectionResult *result, DwCorrectionError *error)
{
  const bool share_mask = entry == DW_ENTRY_MASK_SHARED;
  if (share_mask)
    entry = DW_ENTRY_MASK; /* the other paths always return a copy */
  if (entry == DW_ENTRY_MASK)
    {
      int fast = -1;
      if (plan->path == DW_PATH_VERL_K_OPTIONS)
        fast = dw_correction_fast_run (batch, plan, share_mask, result, error);
      else if (plan->path == DW_PATH_SLIME_VANILLA || plan->path == DW_PATH_SLIME_ICEPOP)
        fast = dw_slime_builtin_fast_run (batch, plan, result, error);
      if (fast >= 0)
        return fast == 1;
    }
  DwContext context;
  if (!dw_context_init (&context, batch, error))
    return false;
  result->rows = context.rows;
  result->cols = context.cols;
  if (entry == DW_ENTRY_OFFPOLICY)
    return dw_verl_run (&context, plan, entry, result, error);
  switch (plan->path)
    {
    case DW_PATH_VERL_K_OPTIONS:
    case DW_PATH_VERL_LEGACY_RS:
      return dw_verl_run (&context, plan, entry, result, error);
    case DW_PATH_VERL_MISMATCH:
      return dw_verl_mismatch_run (&context, plan, result, error);
    case DW_PATH_SLIME_MIS:
      return dw_slime_mis_run (&context, plan, result, error);
    case DW_PATH_SLIME_VANILLA:
    case DW_PATH_SLIME_ICEPOP:
      return dw_slime_builtin_run (&context, plan, result, error);
    default:
      return dw_error_set (error, DW_ERROR_VALUE, "%s: unknown correction path %d.",
                           dw_generation_name (plan->generation), (int)plan->path);
    }
}

bool
dw_correction_run_plan (const DwBatch *batch, const DwPlan *plan, DwEntry entry,
                        DwCorrectionResult *result, DwCorrectionError *error)
{
  dw_correction_error_clear (error);
  dw_correction_result_init (result);
  if (batch == NULL || plan == NULL)
    return dw_error_set (error, DW_ERROR_VALUE, "no batch or no plan.");
  bool ok = dw_correction_dispatch (batch, plan, entry, result, error);
  if (!ok)
    dw_correction_result_clear (result);
  return ok;
}

bool
dw_correction_run_entry (const DwBatch *batch, const DwConfig *config, DwEntry entry,
                         DwCorrectionResult *result, DwCorrectionError *error)
{
  dw_correction_error_clear (error);
  dw_correction_result_init (result);
  if (batch == NULL || config == NULL)
    return dw_error_set (error, DW_ERROR_VALUE, "no batch or no config.");
  if (dw_config_get (config, "preset"))
    return dw_error_set (error, DW_ERROR_VALUE, "preset must be resolved with dw_preset_apply().");
  DwPlan plan;
  if (entry == DW_ENTRY_OFFPOLICY)
    {
      /* compute_rollout_corr_metrics_from_logprobs takes no configuration */
      memset (&plan, 0, sizeof plan);
      plan.generation = config->generation;
      plan.path = DW_PATH_VERL_K_OPTIONS;
    }
  else if (!dw_plan_build (config, &plan, error))
    {
      /* verl checks the batch first: its error wins */
      DwCorrectionError batch_error;
      if (!dw_correction_check_batch (batch, &batch_error))
        *error = batch_error;
      return false;
    }
  return dw_correction_run_plan (batch, &plan, entry, result, error);
}

bool
dw_correction_run (const DwBatch *batch, const DwConfig *config, DwCorrectionResult *result,
                   DwCorrectionError *error)
{
  return dw_correction_run_entry (batch, config, DW_ENTRY_MASK, result, error);
}

bool
dw_correction_check_config (const DwConfig *config, DwCorrectionError *error)
{
  DwPlan plan;
  if (config && dw_config_get (config, "preset"))
    return dw_error_set (error, DW_ERROR_VALUE, "preset must be resolved with dw_preset_apply().");
  return dw_plan_build (config, &plan, error);
}
