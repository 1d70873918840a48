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

G_END_DECLS
