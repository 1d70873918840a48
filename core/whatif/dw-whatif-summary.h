/* dw-whatif-summary.h — what-if steps from the store's summaries (docs/WHATIF.md §5)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include "dw-store.h"
#include "dw-whatif-engine.h"

G_BEGIN_DECLS

/* Replaces the token sketch of the compact step @self by one built from @summary, the store's
 * token summary of the same batch (dw_store_get_token_summary): its extreme tokens in full, its
 * bins with their float64 sums. Token-level values then carry the bounds of docs/WHATIF.md §5 plus
 * the rounding of the stored sums; per-row values are unchanged. FALSE (DW_WHATIF_ERROR_BATCH)
 * when @self is not compact or @summary does not describe its tokens (counts, order). */
gboolean dw_whatif_step_set_token_summary (DwWhatifStep *self, const DwTokenSummary *summary,
                                           GError **error);

/* A compact step built from the store's statistics of a batch without reading its tokens:
 * @stats (dw_store_get_step_stats) give every per-row value a step built from the batch has, so
 * every sequence-level option and IS level is exact, and @summary (dw_store_get_token_summary)
 * its token sketch, as dw_whatif_step_set_token_summary () gives. A step whose statistics say it
 * has no fast path (non-binary masks, NaN ℓ) is built like dw_whatif_step_new () builds it:
 * pending until the exact pass. FALSE (DW_WHATIF_ERROR_BATCH) when @summary does not describe
 * the tokens @stats count. */
DwWhatifStep *dw_whatif_step_new_from_stats (const DwStepStats *stats,
                                             const DwTokenSummary *summary, GError **error);

G_END_DECLS
