/* dw-store-delete.h — removing a run from the store
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include "dw-store.h"

G_BEGIN_DECLS

/* Deletes run @run_id and everything stored for it (tags, points, batches, files, restarts,
 * diagnostics: the schema's ON DELETE CASCADE) in one statement, outside any transaction.
 * DW_STORE_ERROR_NOT_FOUND when there is no such run, DW_STORE_ERROR_READ_ONLY for a store
 * opened read-only. A followed file of the run is ingested again as a new run on its next
 * change. */
gboolean dw_store_delete_run (DwStore *store, gint64 run_id, GError **error);

G_END_DECLS
