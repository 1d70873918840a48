/* dw-batch-safetensors.c — safetensors reader and writer
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-batch-private.h"

DwBatch *
dw_safetensors_read (const DwSource *src, GError **error)
{
  dw_batch_set_error (error, DW_BATCH_ERROR_UNKNOWN_FORMAT, src->name,
                      "safetensors support is not in this build yet");
  return NULL;
}
