/* dw-leveldb-log.c — LevelDB-log framing shared by the .wandb and .swanlab readers
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * W&B (core/pkg/leveldb, sdk/internal/datastore.py) and SwanLab ≥ 0.8
 * (swanlab/sdk/internal/core_python/store) both write leveldb's log format after a 7-byte file
 * header of their own, with zlib's CRC-32 over type||payload (leveldb itself uses a masked
 * CRC-32C), computed by dw_crc32_ieee (zlib's crc32 () is slow on chunks this short). Written
 * by hand: Debian has no C library for the log format alone (libleveldb reads it only as part
 * of a database, with CRC-32C). A partial record at the end of what is fed is
 * left unconsumed (a file still being written, or a truncated tail).
 */
#include "dw-crc32c.h"
#include "dw-reader-loggers.h"

#include <string.h>

gsize
dw_leveldb_log_feed (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const guint8 *data, gsize len,
                     const DwLdbFormat *fmt, GByteArray *buf, gpointer state)
{
  gsize pos = 0, consumed = 0;
  goffset rec_start = -1;
  const char *label = fmt->label;

  if (offset == 0)
    {
      if (len < DW_LDB_HEADER)
        return 0;
      if (!fmt->check_header (ctx, data))
        {
          r->dead = TRUE;
          return len;
        }
      pos = consumed = DW_LDB_HEADER;
    }
  g_byte_array_set_size (buf, 0);
  while (pos < len)
    {
      goffset abs = offset + (goffset)pos;
      gsize left = DW_LDB_BLOCK - (gsize)(abs % DW_LDB_BLOCK);
      if (left < DW_LDB_HEADER)
        {
          if (len - pos < left)
            break;
          pos += left;
          if (rec_start < 0)
            consumed = pos;
          continue;
        }
      if (len - pos < DW_LDB_HEADER)
        break;
      const guint8 *h = data + pos;
      guint32 crc = (guint32)h[0] | (guint32)h[1] << 8 | (guint32)h[2] << 16 | (guint32)h[3] << 24;
      gsize n = (gsize)h[4] | (gsize)h[5] << 8;
      guint8 type = h[6];
      if (crc == 0 && n == 0 && type == 0)
        {
          /* zeroed tail of a block: only trust it once the whole block is there */
          if (len - pos < left)
            break;
          pos += left;
          if (rec_start < 0)
            consumed = pos;
          continue;
        }
      if (DW_LDB_HEADER + n > left || type < 1 || type > 4)
        {
          dw_reader_diag (ctx, abs, "%s: corrupt chunk header, rest of the block skipped", label);
          if (len - pos < left)
            {
              /* the block's remainder is not here yet: skip what we have */
              g_byte_array_set_size (buf, 0);
              return len;
            }
          pos += left;
          g_byte_array_set_size (buf, 0);
          rec_start = -1;
          consumed = pos;
          continue;
        }
      if (len - pos < DW_LDB_HEADER + n)
        break;
      const guint8 *payload = h + DW_LDB_HEADER;
      guint32 c = dw_crc32_ieee (dw_crc32_ieee (0, &type, 1), payload, n);
      pos += DW_LDB_HEADER + n;
      if (c != crc)
        {
          dw_reader_diag (ctx, abs, "%s: bad chunk CRC, record skipped", label);
          g_byte_array_set_size (buf, 0);
          rec_start = -1;
          consumed = pos;
          continue;
        }
      const guint8 *rec = NULL;
      gsize rl = 0;
      goffset roff = abs;
      switch (type)
        {
        case 1:
          if (rec_start >= 0)
            dw_reader_diag (ctx, rec_start, "%s: record without its LAST fragment, skipped", label);
          g_byte_array_set_size (buf, 0);
          rec_start = -1;
          rec = payload, rl = n;
          break;
        case 2:
          if (rec_start >= 0)
            dw_reader_diag (ctx, rec_start, "%s: record without its LAST fragment, skipped", label);
          g_byte_array_set_size (buf, 0);
          g_byte_array_append (buf, payload, (guint)n);
          rec_start = abs;
          break;
        default:
          if (rec_start < 0)
            {
              dw_reader_diag (ctx, abs, "%s: fragment without its FIRST chunk, skipped", label);
              consumed = pos;
              continue;
            }
          if (buf->len + n > DW_READER_MAX_RECORD)
            {
              dw_reader_diag (ctx, rec_start, "%s: record larger than %u bytes, skipped", label,
                              DW_READER_MAX_RECORD);
              g_byte_array_set_size (buf, 0);
              rec_start = -1;
              consumed = pos;
              continue;
            }
          g_byte_array_append (buf, payload, (guint)n);
          if (type == 4)
            {
              rec = buf->data, rl = buf->len;
              roff = rec_start;
              rec_start = -1;
            }
          break;
        }
      if (rec != NULL)
        {
          ctx->where = roff;
          if (!fmt->record (state, ctx, rec, rl))
            dw_reader_diag (ctx, roff, "%s: malformed record protobuf, skipped", label);
          consumed = pos;
        }
    }
  g_byte_array_set_size (buf, 0);
  return consumed;
}
