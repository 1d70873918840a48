/* fuzz-batch.h — shared body of the rollout-batch fuzz targets
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Reads the input with dw_batch_read_bytes() (format by content, as the CLI does). Checks the
 * reader's contract: a batch or an error, never both; every error in DW_BATCH_ERROR and prefixed
 * with the name; a batch's arrays are as large as rows × cols (every element is read, so ASan
 * sees any short array); masks and log-probs are in the dtypes the header promises.
 */
#pragma once

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dw-batch-reader.h"

static inline int
fuzz_batch (const char *name, const guint8 *data, size_t size)
{
  GError *error = NULL;
  DwBatch *b;

  /* keep the fuzzer's memory small: a 64 MiB batch at most */
  dw_batch_reader_set_max_bytes (64u << 20);
  b = dw_batch_read_bytes (name, data, size, &error);
  if (b == NULL)
    {
      if (error == NULL || error->domain != DW_BATCH_ERROR
          || !g_str_has_prefix (error->message, name) || error->message[strlen (name)] != ':')
        abort ();
      g_error_free (error);
      return 0;
    }
  if (error != NULL)
    abort ();
  if ((b->lp_dtype != DW_DTYPE_F32 && b->lp_dtype != DW_DTYPE_F64)
      || dw_dtype_size (b->mask_dtype) == 0 || b->mask_dtype == DW_DTYPE_BF16
      || b->mask_dtype == DW_DTYPE_F16)
    abort ();
  {
    volatile double sink = 0;
    size_t n = b->rows * b->cols;
    for (size_t i = 0; i < n; i++)
      {
        double o, r;
        if (b->lp_dtype == DW_DTYPE_F32)
          o = ((float *)b->old_log_prob)[i], r = ((float *)b->rollout_log_prob)[i];
        else
          o = ((double *)b->old_log_prob)[i], r = ((double *)b->rollout_log_prob)[i];
        sink += o + r + dw_batch_mask_value (b, i);
        if (b->advantages)
          sink += b->lp_dtype == DW_DTYPE_F32 ? ((float *)b->advantages)[i]
                                              : ((double *)b->advantages)[i];
      }
    (void)sink;
  }
  dw_batch_free (b);
  return 0;
}
