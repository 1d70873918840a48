/* dw-store-catastrophes.h — the run-wide question of the token drill-down, over a store's batches
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * `driftwatch-cli tokens --run R` and the window's drill-down (ui/drill/) both ask it here, so
 * both count the same tokens the same way (dw-batch-tokens.h holds the per-batch questions).
 */
#pragma once

#include <gio/gio.h>

#include "dw-batch-tokens.h"
#include "dw-store.h"

G_BEGIN_DECLS

/* Every stored batch of @run_id added to a new DwCatastrophes at @threshold, step by step
 * (cancellable between steps). *@n_with_ids (optional): how many steps carry token ids. When
 * none does, NULL with DW_STORE_ERROR_NOT_FOUND ("run R has N stored batches and none carries
 * token ids …"); a batch that cannot be read fails with the store's error. */
DwCatastrophes *dw_store_catastrophes_collect (DwStore *store, gint64 run_id, double threshold,
                                               guint *n_with_ids, GCancellable *cancellable,
                                               GError **error);

G_END_DECLS
