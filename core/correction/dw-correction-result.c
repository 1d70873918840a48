/* dw-correction-result.c — the result of a run: sorted metrics and the weight and mask arrays
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Arithmetic follows torch (docs/CORRECTION.md §2): every elementwise result is
 * rounded to the input dtype, reductions accumulate in double.
 */
#include "dw-correction-private.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
dw_correction_result_init (DwCorrectionResult *result)
{
  memset (result, 0, sizeof *result);
}

void
dw_correction_result_clear (DwCorrectionResult *result)
{
  free (result->metrics);
  dw_workspace_free (result->weights);
  dw_workspace_free (result->mask);
  dw_correction_result_init (result);
}

const double *
dw_correction_result_get (const DwCorrectionResult *result, const char *key)
{
  for (size_t i = 0; i < result->n_metrics; i++)
    if (strcmp (result->metrics[i].key, key) == 0)
      return &result->metrics[i].value;
  return NULL;
}

static void
dw_correction_result_store_value (void *arr, DwDType dt, size_t i, double v)
{
  switch (dt)
    {
    case DW_DTYPE_F32:
      ((float *)arr)[i] = (float)v;
      break;
    case DW_DTYPE_F64:
      ((double *)arr)[i] = v;
      break;
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      ((uint8_t *)arr)[i] = dt == DW_DTYPE_BOOL ? (v != 0) : (uint8_t)(int64_t)v;
      break;
    case DW_DTYPE_I8:
      ((int8_t *)arr)[i] = (int8_t)(int64_t)v;
      break;
    case DW_DTYPE_I16:
      ((int16_t *)arr)[i] = (int16_t)(int64_t)v;
      break;
    case DW_DTYPE_U16:
      ((uint16_t *)arr)[i] = (uint16_t)(int64_t)v;
      break;
    case DW_DTYPE_I32:
      ((int32_t *)arr)[i] = (int32_t)(int64_t)v;
      break;
    case DW_DTYPE_U32:
      ((uint32_t *)arr)[i] = (uint32_t)(int64_t)v;
      break;
    case DW_DTYPE_I64:
      ((int64_t *)arr)[i] = (int64_t)v;
      break;
    case DW_DTYPE_U64:
      ((uint64_t *)arr)[i] = (uint64_t)v;
      break;
    default:
      break;
    }
}

bool
dw_correction_result_set_array (DwCorrectionResult *res, bool weights, DwDType dt, const double *v,
                                size_t n, DwCorrectionError *error)
{
  void *a = dw_workspace_alloc (n * dw_dtype_size (dt));
  if (!a)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  if (dt == DW_DTYPE_F32)
    for (size_t i = 0; i < n; i++)
      ((float *)a)[i] = (float)v[i];
  else if (dt == DW_DTYPE_F64)
    memcpy (a, v, n * sizeof (double));
  else if (dt == DW_DTYPE_I64)
    for (size_t i = 0; i < n; i++)
      ((int64_t *)a)[i] = (int64_t)v[i];
  else
    for (size_t i = 0; i < n; i++)
      dw_correction_result_store_value (a, dt, i, v[i]);
  if (weights)
    {
      res->weights = a;
      res->weights_dtype = dt;
    }
  else
    {
      res->mask = a;
      res->mask_dtype = dt;
    }
  return true;
}
