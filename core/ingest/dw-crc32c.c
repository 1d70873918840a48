/* dw-crc32c.c — CRC-32C (Castagnoli): TFRecord framing, and the ingester's checksum
 * of a file's first bytes; and zlib's CRC-32 for the LevelDB-log framing of W&B and SwanLab
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-crc32c.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>
#define DW_CRC32C_HARDWARE 1
#endif

/* CRC-32C (Castagnoli, reflected 0x82F63B78) and CRC-32 (zlib's, reflected 0xEDB88320),
 * slicing-by-8. */
static guint32 crc32c_table[8][256];
static guint32 crc32_ieee_table[8][256];
static gboolean crc32c_hardware; /* SSE 4.2 is there: the CRC-32C tables are not used */
static GOnce crc32c_once = G_ONCE_INIT;

static void
crc32c_fill_tables (guint32 table[8][256], guint32 polynomial)
{
  for (guint32 i = 0; i < 256; i++)
    {
      guint32 c = i;
      for (int k = 0; k < 8; k++)
        c = (c & 1) ? (c >> 1) ^ polynomial : c >> 1;
      table[0][i] = c;
    }
  for (guint32 i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

static gpointer
crc32c_init (gpointer unused)
{
  (void)unused;
#ifdef DW_CRC32C_HARDWARE
  crc32c_hardware = __builtin_cpu_supports ("sse4.2");
#endif
  crc32c_fill_tables (crc32c_table, 0x82F63B78u);
  crc32c_fill_tables (crc32_ieee_table, 0xEDB88320u);
  return NULL;
}

/* Slicing-by-8 over @table: eight independent lookups per 8 bytes. @c is the register (the CRC
 * inverted). */
static guint32
crc32c_slice8 (const guint32 table[8][256], guint32 c, const guint8 *p, gsize len)
{
  while (len >= 8)
    {
      guint32 lo
        = c ^ ((guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24);
      guint32 hi = (guint32)p[4] | (guint32)p[5] << 8 | (guint32)p[6] << 16 | (guint32)p[7] << 24;
      c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff]
          ^ table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff]
          ^ table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
      p += 8;
      len -= 8;
    }
  while (len--)
    c = table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return c;
}

#ifdef DW_CRC32C_HARDWARE
/* SSE 4.2's crc32 instruction computes this very CRC (reflected 0x82F63B78, no inversion of its
 * own): 8 bytes a cycle or so, where the tables took a tenth of a tfevents ingest (a CRC of the
 * length and one of the data for every short record). */
__attribute__ ((target ("sse4.2"))) static guint32
dw_crc32c_hardware (guint32 c, const guint8 *p, gsize len)
{
  while (len >= 8)
    {
      guint64 word;
      memcpy (&word, p, 8);
      c = (guint32)_mm_crc32_u64 (c, word);
      p += 8;
      len -= 8;
    }
  while (len--)
    c = _mm_crc32_u8 (c, *p++);
  return c;
}
#endif

guint32
dw_crc32c (guint32 crc, const guint8 *p, gsize len)
{
  g_once (&crc32c_once, crc32c_init, NULL);
#ifdef DW_CRC32C_HARDWARE
  if (crc32c_hardware)
    return ~dw_crc32c_hardware (~crc, p, len);
#endif
  return ~crc32c_slice8 (crc32c_table, ~crc, p, len);
}

/* zlib's crc32 () computes the same value; its braided code starts paying off only past 47
 * bytes and the LevelDB-log chunks of a SwanLab or W&B scalar record are 60–80 bytes, so it went
 * byte by byte, a table lookup per byte on one dependency chain: 16 % of a SwanLab ingest. */
guint32
dw_crc32_ieee (guint32 crc, const guint8 *p, gsize len)
{
  g_once (&crc32c_once, crc32c_init, NULL);
  return ~crc32c_slice8 (crc32_ieee_table, ~crc, p, len);
}
