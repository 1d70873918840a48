/* dw-whatif-range.c — Σ of one quantity over a range of the sorted valid-token log-ratios
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The partial blocks at either end are summed value by value; the whole blocks between come from
 * the block prefix sums (double-double). Shared by the queries, the sketch and the applied view,
 * so none of them calls across into another.
 */
#include "config.h"

#include "dw-whatif-private.h"

DwWhatifSum
dw_whatif_range_sum (const DwWhatifStep *step, int quantity, gsize start, gsize end)
{
  DwWhatifSum sum = { 0, 0 };
  if (start >= end)
    return sum;
  const gsize first_block = start / DW_WHATIF_BLOCK, last_block = end / DW_WHATIF_BLOCK;
  if (first_block == last_block)
    {
      for (gsize index = start; index < end; index++)
        sum = dw_whatif_sum_add_value (
          sum, dw_whatif_quantity (step, quantity, dw_whatif_sorted_value (step, index)));
      return sum;
    }
  for (gsize index = start; index < (first_block + 1) * DW_WHATIF_BLOCK; index++)
    sum = dw_whatif_sum_add_value (
      sum, dw_whatif_quantity (step, quantity, dw_whatif_sorted_value (step, index)));
  const DwWhatifSum *prefix = step->prefix[quantity];
  sum = dw_whatif_sum_add (
    sum, dw_whatif_sum_add (prefix[last_block], dw_whatif_sum_negate (prefix[first_block + 1])));
  for (gsize index = last_block * DW_WHATIF_BLOCK; index < end; index++)
    sum = dw_whatif_sum_add_value (
      sum, dw_whatif_quantity (step, quantity, dw_whatif_sorted_value (step, index)));
  return sum;
}
