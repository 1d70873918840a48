/* dw-batch.c — a padded batch in memory: allocation and mask values
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-batch.h"

#include <stdlib.h>
#include <string.h>

DwBatch *
dw_batch_new (size_t rows, size_t cols, DwDType lp_dtype, DwDType mask_dtype)
{
  DwBatch *batch;
  size_t n, lp_size, mask_size;

  if (lp_dtype != DW_DTYPE_F32 && lp_dtype != DW_DTYPE_F64)
    return NULL;
  if (cols != 0 && rows > SIZE_MAX / cols)
    return NULL;
  n = rows * cols;
  lp_size = dw_dtype_size (lp_dtype);
  mask_size = dw_dtype_size (mask_dtype);
  if (mask_size == 0 || (n != 0 && n > SIZE_MAX / 8))
    return NULL;

  batch = calloc (1, sizeof *batch);
  if (batch == NULL)
    return NULL;
  batch->rows = rows;
  batch->cols = cols;
  batch->lp_dtype = lp_dtype;
  batch->source_lp_dtype = lp_dtype;
  batch->mask_dtype = mask_dtype;
  batch->step = -1;
  batch->old_log_prob = calloc (n ? n : 1, lp_size);
  batch->rollout_log_prob = calloc (n ? n : 1, lp_size);
  batch->response_mask = calloc (n ? n : 1, mask_size);
  if (!batch->old_log_prob || !batch->rollout_log_prob || !batch->response_mask)
    {
      dw_batch_free (batch);
      return NULL;
    }
  return batch;
}

void
dw_batch_free (DwBatch *batch)
{
  if (batch == NULL)
    return;
  free (batch->old_log_prob);
  free (batch->rollout_log_prob);
  free (batch->response_mask);
  free (batch->advantages);
  free (batch->token_ids);
  free (batch->rewards);
  free (batch);
}

double
dw_batch_mask_value (const DwBatch *batch, size_t i)
{
  const void *m = batch->response_mask;

  switch (batch->mask_dtype)
    {
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      return ((const uint8_t *)m)[i];
    case DW_DTYPE_I8:
      return ((const int8_t *)m)[i];
    case DW_DTYPE_I16:
      return ((const int16_t *)m)[i];
    case DW_DTYPE_U16:
      return ((const uint16_t *)m)[i];
    case DW_DTYPE_I32:
      return ((const int32_t *)m)[i];
    case DW_DTYPE_U32:
      return ((const uint32_t *)m)[i];
    case DW_DTYPE_I64:
      return (double)((const int64_t *)m)[i];
    case DW_DTYPE_U64:
      return (double)((const uint64_t *)m)[i];
    case DW_DTYPE_F32:
      return ((const float *)m)[i];
    case DW_DTYPE_F64:
      return ((const double *)m)[i];
    case DW_DTYPE_BF16:
    case DW_DTYPE_F16:
    case DW_N_DTYPES:
    default:
      return 0.0;
    }
}
