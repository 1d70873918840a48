/* dw-reader-wandb-offline.c — best-effort reader of offline W&B run files (`run-<id>.wandb`)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Framing (wandb datastore.py / core/pkg/leveldb): 7-byte header ":W&B" u16le 0xBEE1 u8 0 at
 * offset 0, then LevelDB-log chunks (dw-leveldb-log.c). Payload = wandb_internal.Record:
 * only `history` (field 2) is read: HistoryItem{key 1, nested_key 2, value_json 16} and
 * HistoryStep{num 1}. Values are JSON text; numbers, NaN and ±Infinity are kept, objects (media,
 * tables) skipped. `_step` and `_runtime` are not emitted, `_timestamp` becomes the wall time.
 * The schema is internal to wandb (no compatibility promise): prefer the CSV export.
 */
#include "dw-pb.h"
#include "dw-reader-formats.h"
#include "dw-reader-loggers.h"

#include <math.h>
#include <string.h>

#define HDR DW_LDB_HEADER

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

static gboolean
wandb_check_header (DwFeedCtx *ctx, const guint8 *h)
{
  if (memcmp (h, ":W&B\xe1\xbe\x00", HDR) == 0)
    return TRUE;
  dw_reader_diag (ctx, 0, ".wandb: bad header (not a W&B transaction log)");
  return FALSE;
}

static gboolean
wandb_record (gpointer state, DwFeedCtx *ctx, const guint8 *rec, gsize len)
{
  return decode_history (state, ctx, rec, rec + len);
}

static const DwLdbFormat wandb_format = { ".wandb", wandb_check_header, wandb_record };

static gsize
wandb_feed (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const guint8 *data, gsize len,
            gboolean at_eof)
{
  WbState *st = r->state;
  (void)at_eof;
  return dw_leveldb_log_feed (r, ctx, offset, data, len, &wandb_format, st->rec, st);
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
