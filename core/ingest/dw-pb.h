/* dw-pb.h — private to core/ingest: minimal protobuf wire decoding (bounds-checked)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  guint32 field;
  guint32 wire;
  guint64 varint;      /* wire 0, 1 (raw 64 bits), 5 (raw 32 bits) */
  const guint8 *bytes; /* wire 2 */
  gsize len;           /* wire 2 */
} DwPbField;
/* Reads the next field from *pos < end. Returns 1 on success, 0 at end, -1 on malformed data. */
int dw_pb_next (const guint8 **pos, const guint8 *end, DwPbField *f);
gboolean dw_pb_varint (const guint8 **pos, const guint8 *end, guint64 *out);

G_END_DECLS
