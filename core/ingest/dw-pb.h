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
/* dw_pb_next for any field (dw-pb.c). */
int dw_pb_next_any (const guint8 **pos, const guint8 *end, DwPbField *f);
gboolean dw_pb_varint (const guint8 **pos, const guint8 *end, guint64 *out);

/* Reads the next field from *pos < end. Returns 1 on success, 0 at end, -1 on malformed data.
 * Inline for the common case, a one-byte key with a one-byte varint or length (most fields of a
 * tfevents or SwanLab record: walking them was a sixth of a SwanLab ingest); dw_pb_next_any
 * otherwise, with the same result. */
static inline int
dw_pb_next (const guint8 **pos, const guint8 *end, DwPbField *f)
{
  const guint8 *p = *pos;

  if (end - p >= 2 && p[0] < 0x80 && p[1] < 0x80)
    {
      guint32 wire = p[0] & 7;

      if (wire == 0 || (wire == 2 && (gsize)p[1] <= (gsize)(end - p - 2)))
        {
          f->field = p[0] >> 3;
          f->wire = wire;
          f->varint = wire == 0 ? p[1] : 0;
          f->bytes = wire == 2 ? p + 2 : NULL;
          f->len = wire == 2 ? p[1] : 0;
          *pos = p + 2 + f->len;
          return 1;
        }
    }
  return dw_pb_next_any (pos, end, f);
}

G_END_DECLS
