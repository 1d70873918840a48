/* dw-pb.c — minimal protobuf wire decoding (tfevents, .wandb, .swanlab)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-pb.h"

#include <string.h>

gboolean
dw_pb_varint (const guint8 **pos, const guint8 *end, guint64 *out)
{
  return dw_pb_varint_inline (pos, end, out);
}

int
dw_pb_next_any (const guint8 **pos, const guint8 *end, DwPbField *f)
{
  guint64 key, n;
  if (*pos >= end)
    return 0;
  if (!dw_pb_varint (pos, end, &key))
    return -1;
  f->field = (guint32)(key >> 3);
  f->wire = (guint32)(key & 7);
  f->bytes = NULL;
  f->len = 0;
  f->varint = 0;
  switch (f->wire)
    {
    case 0:
      return dw_pb_varint (pos, end, &f->varint) ? 1 : -1;
    case 1:
      if (end - *pos < 8)
        return -1;
      memcpy (&f->varint, *pos, 8); /* little-endian hosts only (x86_64, aarch64) */
      *pos += 8;
      return 1;
    case 5:
      {
        guint32 v;
        if (end - *pos < 4)
          return -1;
        memcpy (&v, *pos, 4);
        f->varint = v;
        *pos += 4;
        return 1;
      }
    case 2:
      if (!dw_pb_varint (pos, end, &n) || n > (guint64)(end - *pos))
        return -1;
      f->bytes = *pos;
      f->len = (gsize)n;
      *pos += n;
      return 1;
    default:
      return -1;
    }
}
