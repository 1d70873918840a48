/* dw-reader-tfevents.c — TensorBoard event files (TFRecord framing of Event protobufs)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Framing: u64le length | u32le masked CRC-32C(length) | data | u32le masked CRC-32C(data).
 * Protobuf: a hand-written wire decoder for the five messages needed (Event, Summary,
 * Summary.Value, TensorProto, TensorShapeProto). Debian's C protobuf runtimes (protobuf-c,
 * nanopb) need generated code from TensorBoard's .proto files and a build-time protoc step for
 * a 5-field subset; the wire format of that subset is ~100 lines.
 *
 * Scalars: simple_value (float32), and rank-0 tensors of DT_FLOAT / DT_DOUBLE with one
 * float_val / double_val or a 4/8-byte tensor_content. Everything else (file_version, text,
 * histograms, images, graphs) is skipped silently.
 */
#include "dw-crc32c.h"
#include "dw-pb.h"
#include "dw-reader-formats.h"

#include <math.h>
#include <string.h>

enum
{
  DT_FLOAT = 1,
  DT_DOUBLE = 2
};

static guint32
masked (guint32 c)
{
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static guint32
rd32 (const guint8 *p)
{
  return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

static guint64
rd64 (const guint8 *p)
{
  return (guint64)rd32 (p) | (guint64)rd32 (p + 4) << 32;
}

/* TensorProto → scalar. Returns TRUE with *out for rank-0 float/double tensors. */
static gboolean
tensor_scalar (const guint8 *p, const guint8 *end, double *out)
{
  DwPbField f;
  int rc;
  guint64 dtype = 0;
  gboolean rank0 = TRUE;
  int nvals = 0;
  double val = 0;
  while ((rc = dw_pb_next (&p, end, &f)) == 1)
    {
      switch (f.field)
        {
        case 1:
          if (f.wire == 0)
            dtype = f.varint;
          break;
        case 2: /* TensorShapeProto: any dim (field 2) makes it rank ≥ 1 */
          if (f.wire == 2)
            {
              const guint8 *q = f.bytes, *qe = f.bytes + f.len;
              DwPbField g;
              int r2;
              while ((r2 = dw_pb_next (&q, qe, &g)) == 1)
                if (g.field == 2)
                  rank0 = FALSE;
              if (r2 < 0)
                return FALSE;
            }
          break;
        case 4: /* tensor_content */
          if (f.wire == 2)
            {
              if (dtype == DT_FLOAT && f.len == 4)
                {
                  guint32 u = rd32 (f.bytes);
                  float x;
                  memcpy (&x, &u, 4);
                  val = x, nvals++;
                }
              else if (dtype == DT_DOUBLE && f.len == 8)
                {
                  guint64 u = rd64 (f.bytes);
                  double x;
                  memcpy (&x, &u, 8);
                  val = x, nvals++;
                }
              else
                nvals += 2;
            }
          break;
        case 5: /* float_val, packed (wire 2) or not (wire 5) */
          if (f.wire == 5)
            {
              guint32 u = (guint32)f.varint;
              float x;
              memcpy (&x, &u, 4);
              val = x, nvals++;
            }
          else if (f.wire == 2)
            {
              if (f.len == 4)
                {
                  guint32 u = rd32 (f.bytes);
                  float x;
                  memcpy (&x, &u, 4);
                  val = x, nvals++;
                }
              else if (f.len > 0)
                nvals += 2;
            }
          break;
        case 6: /* double_val */
          if (f.wire == 1)
            {
              double x;
              memcpy (&x, &f.varint, 8);
              val = x, nvals++;
            }
          else if (f.wire == 2)
            {
              if (f.len == 8)
                {
                  guint64 u = rd64 (f.bytes);
                  double x;
                  memcpy (&x, &u, 8);
                  val = x, nvals++;
                }
              else if (f.len > 0)
                nvals += 2;
            }
          break;
        default:
          break;
        }
    }
  if (rc < 0 || !rank0 || nvals != 1 || (dtype != DT_FLOAT && dtype != DT_DOUBLE))
    return FALSE;
  /* a float_val on a DT_DOUBLE tensor (or vice versa) is what TensorBoard rejects too */
  *out = val;
  return TRUE;
}

typedef struct
{
  GString *tag;
} TfState;

static void
tf_state_free (gpointer p)
{
  TfState *st = p;
  g_string_free (st->tag, TRUE);
  g_free (st);
}

/* Returns FALSE when the Event is malformed. */
static gboolean
decode_event (DwLogReader *r, DwFeedCtx *ctx, const guint8 *p, const guint8 *end)
{
  TfState *st = r->state;
  DwPbField f;
  int rc;
  double wall = NAN;
  gint64 step = 0;
  const guint8 *summary = NULL;
  gsize summary_len = 0;
  while ((rc = dw_pb_next (&p, end, &f)) == 1)
    {
      if (f.field == 1 && f.wire == 1)
        memcpy (&wall, &f.varint, 8);
      else if (f.field == 2 && f.wire == 0)
        step = (gint64)f.varint;
      else if (f.field == 5 && f.wire == 2)
        summary = f.bytes, summary_len = f.len;
    }
  if (rc < 0)
    return FALSE;
  if (summary == NULL)
    return TRUE;
  const guint8 *q = summary, *qe = summary + summary_len;
  while ((rc = dw_pb_next (&q, qe, &f)) == 1)
    {
      if (f.field != 1 || f.wire != 2)
        continue;
      const guint8 *v = f.bytes, *ve = f.bytes + f.len;
      DwPbField g;
      int r2;
      gboolean have_tag = FALSE, have_val = FALSE;
      double val = 0;
      g_string_truncate (st->tag, 0);
      while ((r2 = dw_pb_next (&v, ve, &g)) == 1)
        {
          if (g.field == 1 && g.wire == 2)
            {
              g_string_truncate (st->tag, 0);
              g_string_append_len (st->tag, (const char *)g.bytes, (gssize)g.len);
              have_tag = TRUE;
            }
          else if (g.field == 2 && g.wire == 5)
            {
              guint32 u = (guint32)g.varint;
              float x;
              memcpy (&x, &u, 4);
              val = x;
              have_val = TRUE;
            }
          else if (g.field == 8 && g.wire == 2)
            have_val = tensor_scalar (g.bytes, g.bytes + g.len, &val);
        }
      if (r2 < 0)
        return FALSE;
      if (have_tag && have_val && memchr (st->tag->str, '\0', st->tag->len) == NULL)
        dw_reader_emit (ctx, st->tag->str, step, wall, val, NULL);
    }
  return rc >= 0;
}

static gsize
tfevents_feed (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const guint8 *data, gsize len,
               gboolean at_eof)
{
  (void)at_eof; /* a partial tail is left for later even at EOF: the writer may append */
  gsize pos = 0;
  while (len - pos >= 12)
    {
      const guint8 *h = data + pos;
      guint64 n = rd64 (h);
      if (rd32 (h + 8) != masked (dw_crc32c (0, h, 8)))
        {
          dw_reader_diag (ctx, offset + (goffset)pos,
                          "tfevents: bad length CRC, the rest of the file is skipped");
          r->dead = TRUE;
          return len;
        }
      if (n > DW_READER_MAX_RECORD)
        {
          dw_reader_diag (ctx, offset + (goffset)pos,
                          "tfevents: record length %" G_GUINT64_FORMAT
                          " exceeds %u bytes, the rest of the file is skipped",
                          n, DW_READER_MAX_RECORD);
          r->dead = TRUE;
          return len;
        }
      if (len - pos < 12 + n + 4)
        break; /* truncated tail: wait for more */
      const guint8 *d = h + 12;
      ctx->where = offset + (goffset)pos;
      if (rd32 (d + n) != masked (dw_crc32c (0, d, (gsize)n)))
        dw_reader_diag (ctx, offset + (goffset)pos, "tfevents: bad data CRC, record skipped");
      else if (!decode_event (r, ctx, d, d + n))
        dw_reader_diag (ctx, offset + (goffset)pos,
                        "tfevents: malformed Event protobuf, record skipped");
      pos += 12 + (gsize)n + 4;
    }
  return pos;
}

void
dw_reader_tfevents_init (DwLogReader *reader)
{
  TfState *st = g_new0 (TfState, 1);
  st->tag = g_string_new (NULL);
  reader->state = st;
  reader->state_free = tf_state_free;
  reader->feed = tfevents_feed;
}
