/* dw-pb.h — private to core/ingest: minimal protobuf wire decoding (bounds-checked)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>
#include <string.h>

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

/* A varint at *pos < end (at most 10 bytes); FALSE when cut or longer. dw_pb_varint calls it. */
static inline gboolean
dw_pb_varint_inline (const guint8 **pos, const guint8 *end, guint64 *out)
{
  guint64 r = 0;
  const guint8 *p = *pos;

  for (int shift = 0; shift < 64; shift += 7)
    {
      guint8 b;

      if (p >= end)
        return FALSE;
      b = *p++;
      r |= (guint64)(b & 0x7f) << shift;
      if (b < 0x80)
        {
          *pos = p;
          *out = r;
          return TRUE;
        }
    }
  return FALSE;
}

/* Reads the next field from *pos < end. Returns 1 on success, 0 at end, -1 on malformed data.
 * Inline for the common case, a one-byte key (field < 16) with a varint, a fixed 32 or 64 bits
 * or a length of one byte (nearly every field of a tfevents or SwanLab record: walking them was
 * a sixth of a SwanLab ingest, then a tenth with only one-byte varints inline); dw_pb_next_any
 * otherwise, and for anything malformed, with the same result. */
static inline int
dw_pb_next (const guint8 **pos, const guint8 *end, DwPbField *f)
{
  const guint8 *p = *pos, *q = p + 1;

  if (end - p >= 2 && p[0] < 0x80)
    {
      guint32 wire = p[0] & 7;
      guint64 value = 0;

      switch (wire)
        {
        case 0:
          if (!dw_pb_varint_inline (&q, end, &value))
            return dw_pb_next_any (pos, end, f);
          break;
        case 1:
          if (end - q < 8)
            return dw_pb_next_any (pos, end, f);
          memcpy (&value, q, 8); /* little-endian hosts only, as dw_pb_next_any */
          q += 8;
          break;
        case 5:
          {
            guint32 word;

            if (end - q < 4)
              return dw_pb_next_any (pos, end, f);
            memcpy (&word, q, 4);
            value = word;
            q += 4;
            break;
          }
        case 2:
          if (p[1] >= 0x80 || (gsize)p[1] > (gsize)(end - p - 2))
            return dw_pb_next_any (pos, end, f);
          f->field = p[0] >> 3;
          f->wire = 2;
          f->varint = 0;
          f->bytes = p + 2;
          f->len = p[1];
          *pos = p + 2 + f->len;
          return 1;
        default:
          return dw_pb_next_any (pos, end, f);
        }
      f->field = p[0] >> 3;
      f->wire = wire;
      f->varint = value;
      f->bytes = NULL;
      f->len = 0;
      *pos = q;
      return 1;
    }
  return dw_pb_next_any (pos, end, f);
}

G_END_DECLS
