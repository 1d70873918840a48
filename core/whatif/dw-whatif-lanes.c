/* dw-whatif-lanes.c — which variant of the what-if row loops this processor runs, and the calls
 * to it
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-whatif-engine.h"
#include "dw-whatif-kernels-private.h"

static gint lanes_level = -1; /* -1 before the first check, else a DwWhatifLanesLevel */

static DwWhatifLanesLevel
dw_whatif_lanes_best (void)
{
#ifdef DW_WHATIF_LANES_X86
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512dq")
      && __builtin_cpu_supports ("avx512vl") && __builtin_cpu_supports ("avx512bw"))
    return DW_WHATIF_LANES_AVX512;
  if (__builtin_cpu_supports ("avx2"))
    return DW_WHATIF_LANES_AVX2;
#endif
  return DW_WHATIF_LANES_BASELINE;
}

DwWhatifLanesLevel
dw_whatif_lanes_level (void)
{
  gint level = g_atomic_int_get (&lanes_level);
  if (level < 0)
    {
      level = dw_whatif_lanes_best ();
      g_atomic_int_set (&lanes_level, level);
    }
  return level;
}

static const char *const lanes_names[] = { "off", "avx2", "avx512" };

const char *
dw_whatif_set_vector_limit (const char *name)
{
  for (gint level = DW_WHATIF_LANES_BASELINE; level <= DW_WHATIF_LANES_AVX512; level++)
    if (g_strcmp0 (name, lanes_names[level]) == 0)
      {
        g_atomic_int_set (&lanes_level, MIN (level, (gint)dw_whatif_lanes_best ()));
        return lanes_names[dw_whatif_lanes_level ()];
      }
  return NULL;
}

#ifdef DW_WHATIF_LANES_X86
#define DW_WHATIF_KERNEL_CALL(NAME, PASS)      \
  switch (dw_whatif_lanes_level ())            \
    {                                          \
    case DW_WHATIF_LANES_AVX512:               \
      dw_whatif_kernel_##NAME##_avx512 PASS;   \
      return;                                  \
    case DW_WHATIF_LANES_AVX2:                 \
      dw_whatif_kernel_##NAME##_avx2 PASS;     \
      return;                                  \
    case DW_WHATIF_LANES_BASELINE:             \
    default:                                   \
      dw_whatif_kernel_##NAME##_baseline PASS; \
      return;                                  \
    }
#else
#define DW_WHATIF_KERNEL_CALL(NAME, PASS) dw_whatif_kernel_##NAME##_baseline PASS
#endif

void
dw_whatif_kernel_applied_seq_stats (DwWhatifAppliedSeqStats *stats)
{
  DW_WHATIF_KERNEL_CALL (applied_seq_stats, (stats));
}

void
dw_whatif_kernel_applied_rows_sketch (const DwWhatifAppliedRowsSketch *rows)
{
  DW_WHATIF_KERNEL_CALL (applied_rows_sketch, (rows));
}

void
dw_whatif_kernel_token_rows (DwWhatifTokenRows *rows)
{
  DW_WHATIF_KERNEL_CALL (token_rows, (rows));
}

void
dw_whatif_kernel_row_counts (DwWhatifRowCounts *counts)
{
  DW_WHATIF_KERNEL_CALL (row_counts, (counts));
}
