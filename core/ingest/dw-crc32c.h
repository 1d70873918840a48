/* dw-crc32c.h — private to core/ingest: CRC-32C (Castagnoli, reflected 0x82F63B78) and CRC-32
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

guint32 dw_crc32c (guint32 crc, const guint8 *data, gsize len);
/* zlib's CRC-32 (reflected 0xEDB88320), the value crc32 () of zlib gives. */
guint32 dw_crc32_ieee (guint32 crc, const guint8 *data, gsize len);

G_END_DECLS
