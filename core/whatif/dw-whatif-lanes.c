/* dw-whatif-lanes.c — the calls to the variant of the what-if row loops for the vector level in
 * use: the correction core's (dw_correction_get_vector_level), so dw_correction_set_vector_limit
 * caps both
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-correction.h"
#include "dw-whatif-kernels-private.h"

#ifdef DW_WHATIF_LANES_X86
#define DW_WHATIF_KERNEL_CALL(NAME, PASS)      \
  switch (dw_correction_get_vector_level ())   \
    {                                          \
    case DW_VECTOR_AVX512:                     \
      dw_whatif_kernel_##NAME##_avx512 PASS;   \
      return;                                  \
    case DW_VECTOR_AVX2:                       \
      dw_whatif_kernel_##NAME##_avx2 PASS;     \
      return;                                  \
    case DW_VECTOR_OFF:                        \
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
dw_whatif_kernel_applied_rows_sketch (const DwWhatifAppliedRowsSketch *rows,
                                      DwWhatifAppliedSeqStats *stats)
{
  DW_WHATIF_KERNEL_CALL (applied_rows_sketch, (rows, stats));
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

void
dw_whatif_kernel_seq_option (DwWhatifSeqOption *option)
{
  DW_WHATIF_KERNEL_CALL (seq_option, (option));
}

void
dw_whatif_kernel_rs_rows (DwWhatifRsRows *rows)
{
  DW_WHATIF_KERNEL_CALL (rs_rows, (rows));
}

void
dw_whatif_kernel_ratio_rows (DwWhatifRatioRows *rows)
{
  DW_WHATIF_KERNEL_CALL (ratio_rows, (rows));
}

void
dw_whatif_kernel_ratio_mask (DwWhatifRatioMask *mask)
{
  DW_WHATIF_KERNEL_CALL (ratio_mask, (mask));
}

void
dw_whatif_kernel_veto_rows (DwWhatifVetoRows *veto)
{
  DW_WHATIF_KERNEL_CALL (veto_rows, (veto));
}
