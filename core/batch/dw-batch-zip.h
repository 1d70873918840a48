/* dw-batch-zip.h — zip container helpers of the batch readers (private to core/batch)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <zip.h>

#include "dw-batch-private.h"

G_BEGIN_DECLS

/* libzip error → DW_BATCH_ERROR ("NAME: WHAT: …"); @size is the file size for messages. */
void dw_batch_zip_fail (GError **error, const char *name, const char *what, zip_error_t *ze,
                        guint64 size);
/* Opens @src read-only with a consistency-checked central directory; zip_discard() it. */
zip_t *dw_batch_zip_open (const DwSource *src, GError **error);
/* Stats member @index and refuses impossible or over-limit sizes; @ctx names it in messages. */
gboolean dw_batch_zip_stat_member (zip_t *za, zip_uint64_t index, const DwSource *src,
                                   const char *ctx, zip_stat_t *st, GError **error);
/* The whole member (vetted by dw_batch_zip_stat_member, CRC checked by libzip at the end). */
guint8 *dw_batch_zip_read_member (zip_t *za, zip_uint64_t index, const DwSource *src,
                                  const char *ctx, guint64 *len, GError **error);

G_END_DECLS
