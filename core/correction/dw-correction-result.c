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
  if (!result->mask_borrowed)
    dw_workspace_free (result->mask);
  dw_correction_result_init (result);
}

const double *
dw_correction_result_get (const DwCorrectionResult *result, const char *key)
{
  for (size_t index = 0; index < result->n_metrics; index++)
    if (strcmp (result->metrics[index].key, key) == 0)
      return &result->metrics[index].value;
  return NULL;
}

/* A mask value back in a 64-bit integer dtype. An int64 mask holding INT64_MAX is 2^63 as a
 * double: converting that back is undefined (UBSan float-cast-overflow) and gave INT64_MIN, a
 * flipped sign in the output mask; the value saturates instead, which restores it exactly. */
static int64_t
dw_correction_result_int64 (double value)
{
  if (value >= 9223372036854775808.0)
    return INT64_MAX;
  if (value < -9223372036854775808.0)
    return INT64_MIN;
  return value == value ? (int64_t)value : 0;
}

static uint64_t
dw_correction_result_uint64 (double value)
{
  if (value >= 18446744073709551616.0)
    return UINT64_MAX;
  return value > 0 ? (uint64_t)value : 0;
}

static void
dw_correction_result_store_value (void *array, DwDType dtype, size_t index, double value)
{
  switch (dtype)
    {
    case DW_DTYPE_F32:
      ((float *)array)[index] = (float)value;
      break;
    case DW_DTYPE_F64:
      ((double *)array)[index] = value;
      break;
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      ((uint8_t *)array)[index]
        = dtype == DW_DTYPE_BOOL ? (value != 0) : (uint8_t)dw_correction_result_int64 (value);
      break;
    case DW_DTYPE_I8:
      ((int8_t *)array)[index] = (int8_t)dw_correction_result_int64 (value);
      break;
    case DW_DTYPE_I16:
      ((int16_t *)array)[index] = (int16_t)dw_correction_result_int64 (value);
      break;
    case DW_DTYPE_U16:
      ((uint16_t *)array)[index] = (uint16_t)dw_correction_result_int64 (value);
      break;
    case DW_DTYPE_I32:
      ((int32_t *)array)[index] = (int32_t)dw_correction_result_int64 (value);
      break;
    case DW_DTYPE_U32:
      ((uint32_t *)array)[index] = (uint32_t)dw_correction_result_int64 (value);
      break;
    case DW_DTYPE_I64:
      ((int64_t *)array)[index] = dw_correction_result_int64 (value);
      break;
    case DW_DTYPE_U64:
      ((uint64_t *)array)[index] = dw_correction_result_uint64 (value);
      break;
    default:
      break;
    }
}

bool
dw_correction_result_set_array (DwCorrectionResult *result, bool weights, DwDType dtype,
                                const double *value, size_t count, DwCorrectionError *error)
{
  void *array_out = dw_workspace_alloc (count * dw_dtype_size (dtype));
  if (!array_out)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  if (dtype == DW_DTYPE_F32)
    for (size_t index = 0; index < count; index++)
      ((float *)array_out)[index] = (float)value[index];
  else if (dtype == DW_DTYPE_F64)
    memcpy (array_out, value, count * sizeof (double));
  else if (dtype == DW_DTYPE_I64)
    for (size_t index = 0; index < count; index++)
      ((int64_t *)array_out)[index] = dw_correction_result_int64 (value[index]);
  else
    for (size_t index = 0; index < count; index++)
      dw_correction_result_store_value (array_out, dtype, index, value[index]);
  if (weights)
    {
      result->weights = array_out;
      result->weights_dtype = dtype;
    }
  else
    {
      result->mask = array_out;
      result->mask_dtype = dtype;
    }
  return true;
}
