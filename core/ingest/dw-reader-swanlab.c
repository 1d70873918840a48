/* dw-reader-swanlab.c — SwanLab ≥ 0.8 run files (`swanlog/run-<time>-<id>/run-<id>.swanlab`)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * SwanLab's local/offline store (swanlab/sdk/internal/core_python/store, unchanged from v0.8.0
 * to v0.9.x): 7-byte header ":SWL" u16le 0xE1D6 u8 version 2, then LevelDB-log framing
 * (dw-leveldb-log.c). Each record is a swanlab.record.v1.Record protobuf (protos/swanlab/
 * record/v1/record.proto): num 1, timestamp 2 (google.protobuf.Timestamp{seconds 1, nanos 2}),
 * oneof start 10 / finish 11 / column 12 / scalar 13 / media 14 / log 16 / save 20. One
 * swanlab.log() call writes one ScalarRecord per key (metric/data/v1/data.proto): key 1,
 * step 2, type 3 (ColumnType, 1 = scalar), timestamp 4, value 5 = ScalarValue{double number
 * 1}. proto3 leaves zero fields out: a missing step or number is 0. Media, text, console and
 * file records are not scalars and are passed over. Protobuf decoded by hand with the shared
 * bounds-checked wire reader (no protobuf-c schema compiler in the build).
 */
#include "dw-pb.h"
#include "dw-reader-loggers.h"

#include <gio/gio.h>
#include <math.h>
#include <string.h>

#define SWL_VERSION 2

typedef struct
{
  GByteArray *rec;
  GString *key;
  char *start_name; /* StartRecord.name: the experiment name given to swanlab.init */
} SwlState;

static void
swl_state_free (gpointer p)
{
  SwlState *st = p;
  g_byte_array_unref (st->rec);
  g_string_free (st->key, TRUE);
  g_free (st->start_name);
  g_free (st);
}

static gboolean
swl_check_header (DwFeedCtx *ctx, const guint8 *h)
{
  if (memcmp (h, ":SWL\xd6\xe1", 6) != 0)
    {
      dw_reader_diag (ctx, 0, ".swanlab: bad header (not a SwanLab run file)");
      return FALSE;
    }
  if (h[6] != SWL_VERSION)
    {
      dw_reader_diag (ctx, 0,
                      ".swanlab: file format version %u (this reader knows version %u, "
                      "SwanLab 0.8 and later): skipped",
                      h[6], SWL_VERSION);
      return FALSE;
    }
  return TRUE;
}

/* google.protobuf.Timestamp → seconds since the epoch */
static gboolean
swl_timestamp (const guint8 *p, gsize len, double *out)
{
  const guint8 *end = p + len;
  DwPbField f;
  int rc;
  gint64 s = 0, ns = 0;
  while ((rc = dw_pb_next (&p, end, &f)) == 1)
    {
      if (f.field == 1 && f.wire == 0)
        s = (gint64)f.varint;
      else if (f.field == 2 && f.wire == 0)
        ns = (gint32)(guint32)f.varint;
    }
  if (rc < 0)
    return FALSE;
  *out = (double)s + (double)ns * 1e-9;
  return TRUE;
}

static gboolean
swl_scalar (SwlState *st, DwFeedCtx *ctx, const guint8 *p, gsize len, double rec_time)
{
  const guint8 *end = p + len;
  DwPbField f;
  int rc;
  gint64 step = 0;
  guint64 type = 0;
  double value = 0.0, wall = rec_time;
  gboolean have_key = FALSE;

  g_string_truncate (st->key, 0);
  while ((rc = dw_pb_next (&p, end, &f)) == 1)
    {
      switch (f.field)
        {
        case 1:
          if (f.wire != 2)
            return FALSE;
          g_string_truncate (st->key, 0);
          g_string_append_len (st->key, (const char *)f.bytes, (gssize)f.len);
          have_key = TRUE;
          break;
        case 2:
          if (f.wire != 0)
            return FALSE;
          step = (gint64)f.varint;
          break;
        case 3:
          if (f.wire != 0)
            return FALSE;
          type = f.varint;
          break;
        case 4:
          if (f.wire != 2 || !swl_timestamp (f.bytes, f.len, &wall))
            return FALSE;
          break;
        case 5:
          {
            const guint8 *q = f.bytes, *qe = f.bytes + f.len;
            DwPbField g;
            int r2;
            if (f.wire != 2)
              return FALSE;
            while ((r2 = dw_pb_next (&q, qe, &g)) == 1)
              if (g.field == 1 && g.wire == 1)
                memcpy (&value, &g.varint, sizeof value);
            if (r2 < 0)
              return FALSE;
            break;
          }
        default:
          break;
        }
    }
  if (rc < 0)
    return FALSE;
  if (!have_key || st->key->len == 0 || memchr (st->key->str, '\0', st->key->len) != NULL)
    return FALSE;
  if (type > 1)
    return TRUE; /* a column declared as media/text: not a scalar */
  dw_reader_emit (ctx, st->key->str, step, wall, value, NULL);
  return TRUE;
}

/* StartRecord{project 1, workspace 2, …, name 4, …}: keeps the name */
static gboolean
swl_start (SwlState *st, const guint8 *p, gsize len)
{
  const guint8 *end = p + len;
  DwPbField f;
  int rc;

  while ((rc = dw_pb_next (&p, end, &f)) == 1)
    if (f.field == 4 && f.wire == 2 && f.len > 0 && f.len < 1024 && st->start_name == NULL)
      {
        st->start_name = g_strndup ((const char *)f.bytes, f.len);
        if (strlen (st->start_name) != f.len || !g_utf8_validate (st->start_name, -1, NULL))
          g_clear_pointer (&st->start_name, g_free);
      }
  return rc == 0;
}

static gboolean
swl_record (gpointer state, DwFeedCtx *ctx, const guint8 *p, gsize len)
{
  const guint8 *end = p + len;
  const guint8 *scalar = NULL;
  gsize scalar_len = 0;
  double rec_time = NAN;
  DwPbField f;
  int rc;

  while ((rc = dw_pb_next (&p, end, &f)) == 1)
    {
      if (f.field == 2 && f.wire == 2)
        {
          if (!swl_timestamp (f.bytes, f.len, &rec_time))
            return FALSE;
        }
      else if (f.field == 13 && f.wire == 2)
        scalar = f.bytes, scalar_len = f.len;
      else if (f.field == 10 && f.wire == 2 && !swl_start (state, f.bytes, f.len))
        return FALSE;
    }
  if (rc < 0)
    return FALSE;
  if (scalar == NULL)
    return TRUE; /* start, finish, column, media, console, save: nothing to plot */
  return swl_scalar (state, ctx, scalar, scalar_len, rec_time);
}

static const DwLdbFormat swanlab_format = { ".swanlab", swl_check_header, swl_record };

static gsize
swanlab_feed (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const guint8 *data, gsize len,
              gboolean at_eof)
{
  SwlState *st = r->state;
  (void)at_eof;
  return dw_leveldb_log_feed (r, ctx, offset, data, len, &swanlab_format, st->rec, st);
}

char *
dw_swanlab_run_name (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GFileInputStream) in = g_file_read (file, NULL, NULL);
  g_autofree guint8 *head = NULL;
  DwLogReader reader = { .format = DW_FORMAT_SWANLAB, .path = (char *)path };
  DwFeedCtx ctx = { &reader, NULL, NULL, NULL, 0 };
  char *name;
  gsize n = 0;

  if (in == NULL)
    return NULL;
  head = g_malloc (DW_LDB_BLOCK);
  /* the start record is the file's first record */
  if (!g_input_stream_read_all (G_INPUT_STREAM (in), head, DW_LDB_BLOCK, &n, NULL, NULL)
      || n < DW_LDB_HEADER || memcmp (head, ":SWL\xd6\xe1", 6) != 0)
    return NULL;
  /* a reader of this format alone, fed without callbacks: the registry is not needed */
  dw_reader_swanlab_init (&reader);
  swanlab_feed (&reader, &ctx, 0, head, n, FALSE);
  name = g_strdup (((SwlState *)reader.state)->start_name);
  swl_state_free (reader.state);
  return name;
}

void
dw_reader_swanlab_init (DwLogReader *reader)
{
  SwlState *st = g_new0 (SwlState, 1);
  st->rec = g_byte_array_new ();
  st->key = g_string_new (NULL);
  reader->state = st;
  reader->state_free = swl_state_free;
  reader->feed = swanlab_feed;
}
