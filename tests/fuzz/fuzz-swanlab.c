/* fuzz-swanlab.c — libFuzzer target for the swanlab log reader
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "fuzz-log-reader.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  return fuzz_log_reader (DW_FORMAT_SWANLAB, data, size);
}
