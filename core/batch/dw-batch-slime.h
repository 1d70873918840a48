/* dw-batch-slime.h — slime and miles torch dumps → DwBatch (private to core/batch)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include "dw-batch-private.h"

G_BEGIN_DECLS

/* A slime/miles dump (docs/FORMATS-BATCH.md §2): v2, per-rank v1 and miles sets (read whole from
 * @path; from memory only a single file), rollout dumps joined when found beside train_data/. */
DwBatch *dw_batch_slime_read (const DwSource *src, const char *path, GError **error);

G_END_DECLS
