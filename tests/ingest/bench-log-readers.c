/* bench-log-readers.c — scalars parsed per second from verl JSONL and tfevents
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Generates the inputs in memory (JSONL: 120 keys per line like verl; tfevents: one
 * simple_value Event per record like torch's SummaryWriter), then times one full read.
 */
#include "dw-log-reader.h"

#include <math.h>
#include <string.h>

static guint64 n_points;

static void
count_point (const DwScalarPoint *p, gpointer user_data)
{
  (void)user_data;
  n_points += p->tag[0] != '\0';
}

static guint32 crc_table[256];

static guint32
crc32c (const guint8 *p, gsize n)
{
  guint32 c = ~0u;
  while (n--)
    c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}

static guint32
masked (guint32 c)
{
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static void
put_varint (GByteArray *b, guint64 v)
{
  while (v >= 0x80)
    {
      guint8 x = (guint8)(v | 0x80);
      g_byte_array_append (b, &x, 1);
      v >>= 7;
    }
  guint8 x = (guint8)v;
  g_byte_array_append (b, &x, 1);
}

static double
run (DwFormat fmt, const guint8 *data, gsize len, guint64 *points)
{
  g_autoptr (DwLogReader) r = dw_log_reader_new (fmt, "bench");
  n_points = 0;
  gint64 t0 = g_get_monotonic_time ();
  gsize c = dw_log_reader_feed (r, 0, data, len, TRUE, count_point, NULL, NULL);
  gint64 t1 = g_get_monotonic_time ();
  g_assert_cmpuint (c, ==, len);
  *points = n_points;
  return (double)(t1 - t0) / 1e6;
}

int
main (void)
{
  for (guint32 i = 0; i < 256; i++)
    {
      guint32 c = i;
      for (int k = 0; k < 8; k++)
        c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      crc_table[i] = c;
    }
  /* JSONL */
  GString *j = g_string_new (NULL);
  GRand *rnd = g_rand_new_with_seed (1);
  const guint lines = 20000, keys = 120;
  for (guint s = 0; s < lines; s++)
    {
      g_string_append_printf (j, "{\"step\":%u,\"data\":{", s);
      for (guint k = 0; k < keys; k++)
        {
          char num[G_ASCII_DTOSTR_BUF_SIZE];
          g_ascii_formatd (num, sizeof num, "%.17g", g_rand_double_range (rnd, -1, 1));
          g_string_append_printf (j, "%s\"rollout_corr/metric_%03u\":%s", k ? "," : "", k, num);
        }
      g_string_append (j, "}}\n");
    }
  guint64 pts;
  double best = INFINITY;
  for (int rep = 0; rep < 3; rep++)
    best = MIN (best, run (DW_FORMAT_VERL_JSONL, (const guint8 *)j->str, j->len, &pts));
  g_assert_cmpuint (pts, ==, (guint64)lines * keys);
  g_print ("verl-jsonl: %" G_GUINT64_FORMAT " scalars, %.1f MB in %.3f s: %.2f M scalars/s, "
           "%.0f MB/s\n",
           pts, j->len / 1e6, best, pts / best / 1e6, j->len / best / 1e6);

  /* tfevents */
  GByteArray *tf = g_byte_array_new ();
  const guint records = 2000000;
  for (guint i = 0; i < records; i++)
    {
      g_autoptr (GByteArray) ev = g_byte_array_new ();
      g_autoptr (GByteArray) val = g_byte_array_new ();
      char tag[64];
      int tl = g_snprintf (tag, sizeof tag, "rollout_corr/metric_%03u", i % keys);
      put_varint (val, 1 << 3 | 2);
      put_varint (val, (guint64)tl);
      g_byte_array_append (val, (const guint8 *)tag, (guint)tl);
      put_varint (val, 2 << 3 | 5);
      float f = (float)g_rand_double (rnd);
      g_byte_array_append (val, (const guint8 *)&f, 4);
      double wt = 1.7e9 + i;
      put_varint (ev, 1 << 3 | 1);
      g_byte_array_append (ev, (const guint8 *)&wt, 8);
      put_varint (ev, 2 << 3 | 0);
      put_varint (ev, i / keys + 1);
      put_varint (ev, 5 << 3 | 2);
      put_varint (ev, val->len + 2);
      put_varint (ev, 1 << 3 | 2);
      put_varint (ev, val->len);
      g_byte_array_append (ev, val->data, val->len);
      guint64 n = ev->len;
      guint32 lc = masked (crc32c ((const guint8 *)&n, 8));
      guint32 dc = masked (crc32c (ev->data, ev->len));
      g_byte_array_append (tf, (const guint8 *)&n, 8);
      g_byte_array_append (tf, (const guint8 *)&lc, 4);
      g_byte_array_append (tf, ev->data, ev->len);
      g_byte_array_append (tf, (const guint8 *)&dc, 4);
    }
  best = INFINITY;
  for (int rep = 0; rep < 3; rep++)
    best = MIN (best, run (DW_FORMAT_TFEVENTS, tf->data, tf->len, &pts));
  g_assert_cmpuint (pts, ==, records);
  g_print ("tfevents: %" G_GUINT64_FORMAT " scalars, %.1f MB in %.3f s: %.2f M scalars/s, "
           "%.0f MB/s\n",
           pts, tf->len / 1e6, best, pts / best / 1e6, tf->len / best / 1e6);
  g_byte_array_unref (tf);
  g_string_free (j, TRUE);
  g_rand_free (rnd);
  return 0;
}
