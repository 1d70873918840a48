/* dw-batch-jsonl.c — batch JSONL reader and writer (one sample per line)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-batch-private.h"

DwBatch *
dw_jsonl_read (const DwSource *src, GError **error)
{
  dw_batch_set_error (error, DW_BATCH_ERROR_UNKNOWN_FORMAT, src->name,
                      "batch JSONL support is not in this build yet");
  return NULL;
}
