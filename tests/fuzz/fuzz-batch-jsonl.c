/* fuzz-batch-jsonl.c — libFuzzer target for the rollout-batch reader: batch JSONL (one sample per
 * line)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "fuzz-batch.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  return fuzz_batch ("fuzz.jsonl", data, size);
}
