/* dw-reader-wandb-offline.c — best-effort reader of offline W&B run files (`run-<id>.wandb`)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Framing (wandb datastore.py / core/pkg/leveldb): 7-byte header ":W&B" u16le 0xBEE1 u8 0 at
 * offset 0, then LevelDB-log chunks in 32 KiB blocks: u32le CRC-32 IEEE (zlib) over
 * type||payload, u16le length, u8 type (1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST); chunks never cross a
 * block; fewer than 7 bytes left in a block are zero padding. Payload = wandb_internal.Record:
 * only `history` (field 2) is read: HistoryItem{key 1, nested_key 2, value_json 16} and
 * HistoryStep{num 1}. Values are JSON text; numbers, NaN and ±Infinity are kept, objects (media,
 * tables) skipped. `_step` and `_runtime` are not emitted, `_timestamp` becomes the wall time.
 * The schema is internal to wandb (no compatibility promise): prefer the CSV export.
 */
#include "dw-log-reader-private.h"

#include <math.h>
#include <string.h>
#include <zlib.h>

#define BLOCK 32768u
#define HDR   7u

typedef struct
{
  GByteArray *rec;
  GString *key;
  GPtrArray *tags;
  GArray *vals;
} WbState;

static void
wb_state_free (gpointer p)
{
  WbState *st = p;
  g_byte_array_unref (st->rec);
  g_string_free (st->key, TRUE);
  g_ptr_array_unref (st->tags);
  g_array_unref (st->vals);
  g_free (st);
}

static gboolean
decode_history (WbState *st, DwFeedCtx *ctx, const guint8 *p, const guint8 *end)
{
  DwPbField f;
  int rc;
  const guint8 *hist = NULL;
  gsize hl = 0;
  while ((rc = dw_pb_next (&p, end, &f)) == 1)
    if (f.field == 2 && f.wire == 2)
      hist = f.bytes, hl = f.len;
  if (rc < 0)
    return FALSE;
  if (hist == NULL)
    return TRUE; /* not a history record */
  g_ptr_array_set_size (st->tags, 0);
  g_array_set_size (st->vals, 0);
  gboolean have_step = FALSE;
  gint64 step = 0;
  double wall = NAN, step_key = NAN;
  const guint8 *q = hist, *qe = hist + hl;
  while ((rc = dw_pb_next (&q, qe, &f)) == 1)
    {
      if (f.field == 2 && f.wire == 2)
        {
          const guint8 *s = f.bytes, *se = f.bytes + f.len;
          DwPbField g;
          int r2;
          while ((r2 = dw_pb_next (&s, se, &g)) == 1)
            if (g.field == 1 && g.wire == 0)
              step = (gint64)g.varint, have_step = TRUE;
          if (r2 < 0)
            return FALSE;
          continue;
        }
      if (f.field != 1 || f.wire != 2)
        continue;
      const guint8 *s = f.bytes, *se = f.bytes + f.len;
      DwPbField g;
      int r2;
      g_string_truncate (st->key, 0);
      gboolean nested = FALSE;
      const guint8 *vj = NULL;
      gsize vl = 0;
      while ((r2 = dw_pb_next (&s, se, &g)) == 1)
        {
          if (g.field == 1 && g.wire == 2 && !nested)
            {
              g_string_truncate (st->key, 0);
              g_string_append_len (st->key, (const char *)g.bytes, (gssize)g.len);
            }
          else if (g.field == 2 && g.wire == 2)
            {
              if (!nested)
                g_string_truncate (st->key, 0);
              else
                g_string_append_c (st->key, '/');
              nested = TRUE;
              g_string_append_len (st->key, (const char *)g.bytes, (gssize)g.len);
            }
          else if (g.field == 16 && g.wire == 2)
            vj = g.bytes, vl = g.len;
        }
      if (r2 < 0)
        return FALSE;
      double v;
      if (vj == NULL || st->key->len == 0 || memchr (st->key->str, '\0', st->key->len) != NULL
          || !dw_parse_number ((const char *)vj, vl, &v))
        continue;
      if (strcmp (st->key->str, "_timestamp") == 0)
        wall = v;
      else if (strcmp (st->key->str, "_step") == 0)
        step_key = v;
      else if (strcmp (st->key->str, "_runtime") != 0)
        {
          g_ptr_array_add (st->tags, g_strdup (st->key->str));
          g_array_append_val (st->vals, v);
        }
    }
  if (rc < 0)
    return FALSE;
  if (!have_step && isfinite (step_key))
    step = (gint64)step_key;
  for (guint i = 0; i < st->tags->len; i++)
    dw_reader_emit (ctx, g_ptr_array_index (st->tags, i), step, wall,
                    g_array_index (st->vals, double, i), NULL);
  return TRUE;
}

static gsize
wandb_feed (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const guint8 *data, gsize len,
            gboolean at_eof)
{
  (void)at_eof;
  WbState *st = r->state;
  gsize pos = 0, consumed = 0;
  goffset rec_start = -1;
  if (offset == 0)
    {
      if (len < HDR)
        return 0;
      if (memcmp (data, ":W&B\xe1\xbe\x00", HDR) != 0)
        {
          dw_reader_diag (ctx, 0, ".wandb: bad header (not a W&B transaction log)");
          r->dead = TRUE;
          return len;
        }
      pos = consumed = HDR;
    }
  g_byte_array_set_size (st->rec, 0);
  while (pos < len)
    {
      goffset abs = offset + (goffset)pos;
      gsize left = BLOCK - (gsize)(abs % BLOCK);
      if (left < HDR)
        {
          if (len - pos < left)
            break;
          pos += left;
          if (rec_start < 0)
            consumed = pos;
          continue;
        }
      if (len - pos < HDR)
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
      if (HDR + n > left || type < 1 || type > 4)
        {
          dw_reader_diag (ctx, abs, ".wandb: corrupt chunk header, rest of the block skipped");
          if (len - pos < left)
            {
              /* the block's remainder is not here yet: skip what we have */
              g_byte_array_set_size (st->rec, 0);
              rec_start = -1;
              pos = consumed = len;
              break;
            }
          pos += left;
          g_byte_array_set_size (st->rec, 0);
          rec_start = -1;
          consumed = pos;
          continue;
        }
      if (len - pos < HDR + n)
        break;
      const guint8 *payload = h + HDR;
      guint32 c = (guint32)crc32 (0L, &type, 1);
      c = (guint32)crc32 (c, payload, (uInt)n);
      pos += HDR + n;
      if (c != crc)
        {
          dw_reader_diag (ctx, abs, ".wandb: bad chunk CRC, record skipped");
          g_byte_array_set_size (st->rec, 0);
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
            dw_reader_diag (ctx, rec_start, ".wandb: record without its LAST fragment, skipped");
          g_byte_array_set_size (st->rec, 0);
          rec_start = -1;
          rec = payload, rl = n;
          break;
        case 2:
          if (rec_start >= 0)
            dw_reader_diag (ctx, rec_start, ".wandb: record without its LAST fragment, skipped");
          g_byte_array_set_size (st->rec, 0);
          g_byte_array_append (st->rec, payload, (guint)n);
          rec_start = abs;
          break;
        default:
          if (rec_start < 0)
            {
              dw_reader_diag (ctx, abs, ".wandb: fragment without its FIRST chunk, skipped");
              consumed = pos;
              continue;
            }
          if (st->rec->len + n > DW_READER_MAX_RECORD)
            {
              dw_reader_diag (ctx, rec_start, ".wandb: record larger than %u bytes, skipped",
                              DW_READER_MAX_RECORD);
              g_byte_array_set_size (st->rec, 0);
              rec_start = -1;
              consumed = pos;
              continue;
            }
          g_byte_array_append (st->rec, payload, (guint)n);
          if (type == 4)
            {
              rec = st->rec->data, rl = st->rec->len;
              roff = rec_start;
              rec_start = -1;
            }
          break;
        }
      if (rec != NULL)
        {
          ctx->where = roff;
          if (!decode_history (st, ctx, rec, rec + rl))
            dw_reader_diag (ctx, roff, ".wandb: malformed Record protobuf, skipped");
          consumed = pos;
        }
    }
  g_byte_array_set_size (st->rec, 0);
  return consumed;
}

void
dw_reader_wandb_offline_init (DwLogReader *reader)
{
  WbState *st = g_new0 (WbState, 1);
  st->rec = g_byte_array_new ();
  st->key = g_string_new (NULL);
  st->tags = g_ptr_array_new_with_free_func (g_free);
  st->vals = g_array_new (FALSE, FALSE, sizeof (double));
  reader->state = st;
  reader->state_free = wb_state_free;
  reader->feed = wandb_feed;
}
