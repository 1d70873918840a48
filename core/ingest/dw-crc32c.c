/* dw-crc32c.c — CRC-32C (Castagnoli): TFRecord framing, and the ingester's checksum
 * of a file's first bytes
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-crc32c.h"

/* CRC-32C (Castagnoli, reflected 0x82F63B78), slicing-by-8. */
static guint32 crc32c_table[8][256];

static gpointer
crc32c_init (gpointer unused)
{
  (void)unused;
  for (guint32 i = 0; i < 256; i++)
    {
      guint32 c = i;
      for (int k = 0; k < 8; k++)
        c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      crc32c_table[0][i] = c;
    }
  for (guint32 i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      crc32c_table[t][i]
        = (crc32c_table[t - 1][i] >> 8) ^ crc32c_table[0][crc32c_table[t - 1][i] & 0xff];
  return NULL;
}

guint32
dw_crc32c (guint32 crc, const guint8 *p, gsize len)
{
  static GOnce once = G_ONCE_INIT;
  g_once (&once, crc32c_init, NULL);
  guint32 c = ~crc;
  while (len >= 8)
    {
      guint32 lo
        = c ^ ((guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24);
      guint32 hi = (guint32)p[4] | (guint32)p[5] << 8 | (guint32)p[6] << 16 | (guint32)p[7] << 24;
      c = crc32c_table[7][lo & 0xff] ^ crc32c_table[6][(lo >> 8) & 0xff]
          ^ crc32c_table[5][(lo >> 16) & 0xff] ^ crc32c_table[4][lo >> 24]
          ^ crc32c_table[3][hi & 0xff] ^ crc32c_table[2][(hi >> 8) & 0xff]
          ^ crc32c_table[1][(hi >> 16) & 0xff] ^ crc32c_table[0][hi >> 24];
      p += 8;
      len -= 8;
    }
  while (len--)
    c = crc32c_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}
