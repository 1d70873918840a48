/* dw-log-reader.c — format dispatch, sniffing, line splitting and shared helpers
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-log-reader-private.h"
#include "dw-reader-loggers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const format_names[DW_N_FORMATS] = {
  [DW_FORMAT_UNKNOWN] = "unknown",
  [DW_FORMAT_VERL_CONSOLE] = "verl-console",
  [DW_FORMAT_VERL_JSONL] = "verl-jsonl",
  [DW_FORMAT_TFEVENTS] = "tfevents",
  [DW_FORMAT_SLIME_CONSOLE] = "slime-console",
  [DW_FORMAT_WANDB_CSV] = "wandb-csv",
  [DW_FORMAT_WANDB_PANEL_CSV] = "wandb-panel-csv",
  [DW_FORMAT_WANDB_OFFLINE] = "wandb-offline",
  [DW_FORMAT_MLFLOW_SQLITE] = "mlflow-sqlite",
  [DW_FORMAT_BATCH_SAFETENSORS] = "batch-safetensors",
  [DW_FORMAT_BATCH_NPZ] = "batch-npz",
  [DW_FORMAT_BATCH_NPY] = "batch-npy",
  [DW_FORMAT_BATCH_JSONL] = "batch-jsonl",
  [DW_FORMAT_SWANLAB] = "swanlab",
  [DW_FORMAT_MLFLOW_FILE] = "mlflow-file",
  [DW_FORMAT_TRACKIO_SQLITE] = "trackio-sqlite",
  [DW_FORMAT_BATCH_TORCH] = "batch-torch",
};

const char *
dw_format_name (DwFormat format)
{
  if ((int)format < 0 || format >= DW_N_FORMATS)
    return "unknown";
  return format_names[format];
}

/* ---- helpers ---------------------------------------------------------------------------- */

void
dw_reader_diag (DwFeedCtx *ctx, goffset offset, const char *fmt, ...)
{
  if (ctx->on_diag == NULL)
    return;
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_autofree char *full = g_strdup_printf ("%s: byte offset %" G_GINT64_FORMAT ": %s",
                                           ctx->reader->path, (gint64)offset, msg);
  ctx->on_diag (offset, full, ctx->user_data);
}

void
dw_reader_emit (DwFeedCtx *ctx, const char *tag, gint64 step, double wall_time, double value,
                const char *step_key)
{
  if (ctx->on_point == NULL)
    return;
  DwScalarPoint p = { tag, step, wall_time, value, step_key, ctx->reader->point_precision };
  if (G_UNLIKELY (!g_utf8_validate (tag, -1, NULL)))
    {
      /* Tags end up in the store, JSON output and GTK labels, which all need UTF-8: the point
       * is kept under the tag with each invalid byte replaced by U+FFFD, reported once. */
      g_autofree char *valid = g_utf8_make_valid (tag, -1);
      DwLogReader *r = ctx->reader;
      if (r->bad_tags == NULL)
        r->bad_tags = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      if (g_hash_table_add (r->bad_tags, g_strdup (tag)))
        dw_reader_diag (ctx, ctx->where,
                        "tag is not valid UTF-8: its points are kept under \"%s\" (invalid bytes "
                        "replaced by U+FFFD)",
                        valid);
      p.tag = valid;
      ctx->on_point (&p, ctx->user_data);
      return;
    }
  ctx->on_point (&p, ctx->user_data);
}

gboolean
dw_parse_number (const char *s, gsize len, double *out)
{
  char buf[64];
  while (len > 0 && (*s == ' ' || *s == '\t'))
    s++, len--;
  while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
    len--;
  if (len == 0 || len >= sizeof buf)
    return FALSE;
  if ((len == 4 && memcmp (s, "True", 4) == 0) || (len == 4 && memcmp (s, "true", 4) == 0))
    return *out = 1.0, TRUE;
  if ((len == 5 && memcmp (s, "False", 5) == 0) || (len == 5 && memcmp (s, "false", 5) == 0))
    return *out = 0.0, TRUE;
  /* only characters a number can hold: keeps strtod from accepting hex floats or "infinity"
   * spelled oddly, and makes the token check exact */
  for (gsize i = 0; i < len; i++)
    {
      char c = s[i];
      if (!(g_ascii_isdigit (c) || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'
            || c == 'n' || c == 'a' || c == 'N' || c == 'i' || c == 'f' || c == 'I' || c == 't'
            || c == 'y'))
        return FALSE;
    }
  memcpy (buf, s, len);
  buf[len] = '\0';
  char *end = NULL;
  double v = g_ascii_strtod (buf, &end);
  if (end != buf + len || end == buf)
    return FALSE;
  if (buf[0] == 'x' || (len > 1 && (buf[1] == 'x' || buf[1] == 'X')))
    return FALSE;
  *out = v;
  return TRUE;
}

gsize
dw_strip_ansi (char *s, gsize len)
{
  gsize o = 0;
  for (gsize i = 0; i < len; i++)
    {
      if (s[i] == '\033' && i + 1 < len && s[i + 1] == '[')
        {
          gsize j = i + 2;
          while (j < len && !(s[j] >= 0x40 && s[j] <= 0x7e))
            j++;
          i = j; /* skip the final byte too */
          continue;
        }
      s[o++] = s[i];
    }
  return o;
}

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

gboolean
dw_pb_varint (const guint8 **pos, const guint8 *end, guint64 *out)
{
  guint64 r = 0;
  const guint8 *p = *pos;
  for (int shift = 0; shift < 64; shift += 7)
    {
      if (p >= end)
        return FALSE;
      guint8 b = *p++;
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

int
dw_pb_next (const guint8 **pos, const guint8 *end, DwPbField *f)
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

/* ---- reader ----------------------------------------------------------------------------- */

DwLogReader *
dw_log_reader_new (DwFormat format, const char *path)
{
  DwLogReader *r = g_new0 (DwLogReader, 1);
  r->format = format;
  r->path = g_strdup (path != NULL ? path : "(unnamed)");
  switch (format)
    {
    case DW_FORMAT_VERL_CONSOLE:
      dw_reader_verl_console_init (r);
      break;
    case DW_FORMAT_VERL_JSONL:
      dw_reader_verl_jsonl_init (r);
      break;
    case DW_FORMAT_TFEVENTS:
      dw_reader_tfevents_init (r);
      break;
    case DW_FORMAT_SLIME_CONSOLE:
      dw_reader_slime_console_init (r);
      break;
    case DW_FORMAT_WANDB_CSV:
    case DW_FORMAT_WANDB_PANEL_CSV:
      dw_reader_wandb_csv_init (r);
      break;
    case DW_FORMAT_WANDB_OFFLINE:
      dw_reader_wandb_offline_init (r);
      break;
    case DW_FORMAT_SWANLAB:
      dw_reader_swanlab_init (r);
      break;
    case DW_FORMAT_MLFLOW_FILE:
      dw_reader_mlflow_file_init (r);
      break;
    default:
      g_free (r->path);
      g_free (r);
      return NULL;
    }
  return r;
}

void
dw_log_reader_free (DwLogReader *reader)
{
  if (reader == NULL)
    return;
  if (reader->state_free != NULL && reader->state != NULL)
    reader->state_free (reader->state);
  g_clear_pointer (&reader->bad_tags, g_hash_table_unref);
  g_free (reader->meta);
  g_free (reader->path);
  g_free (reader);
}

gboolean
dw_log_reader_file_was_truncated (goffset stored_offset, goffset file_size)
{
  return file_size < stored_offset;
}

static gsize
feed_lines (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const guint8 *data, gsize len)
{
  gsize pos = 0;
  while (pos < len)
    {
      const guint8 *nl = memchr (data + pos, '\n', len - pos);
      if (nl == NULL)
        {
          if (len - pos > DW_READER_MAX_LINE)
            {
              dw_reader_diag (ctx, offset + (goffset)pos,
                              "line longer than %u bytes without a newline, skipped",
                              DW_READER_MAX_LINE);
              return len;
            }
          break; /* partial last line: left for the next feed */
        }
      gsize end = (gsize)(nl - data);
      gsize l = end - pos;
      if (l > 0 && data[pos + l - 1] == '\r')
        l--;
      ctx->where = offset + (goffset)pos;
      r->line (r, ctx, offset + (goffset)pos, (const char *)data + pos, l);
      pos = end + 1;
    }
  return pos;
}

gsize
dw_log_reader_feed (DwLogReader *reader, goffset offset, const guint8 *data, gsize len,
                    gboolean at_eof, DwPointFunc on_point, DwDiagFunc on_diag, gpointer user_data)
{
  g_return_val_if_fail (reader != NULL, 0);
  if (len == 0)
    return 0;
  DwFeedCtx ctx = { reader, on_point, on_diag, user_data, offset };
  if (reader->dead)
    return len;
  if (reader->feed != NULL)
    return reader->feed (reader, &ctx, offset, data, len, at_eof);
  return feed_lines (reader, &ctx, offset, data, len);
}

/* ---- sniffing --------------------------------------------------------------------------- */

static gboolean
has_suffix (const char *path, const char *suffix)
{
  return path != NULL && g_str_has_suffix (path, suffix);
}

static gboolean
tfrecord_head_ok (const guint8 *h, gsize n)
{
  if (n < 12)
    return FALSE;
  guint32 crc;
  memcpy (&crc, h + 8, 4);
  guint32 c = dw_crc32c (0, h, 8);
  guint32 masked = ((c >> 15) | (c << 17)) + 0xa282ead8u;
  return crc == masked;
}

gboolean
dw_path_is_document (const char *path)
{
  static const char *const exts[] = { ".md",  ".markdown", ".rst", ".adoc", ".ipynb", ".html",
                                      ".htm", ".tex",      ".py",  ".sh",   ".pdf" };
  if (path == NULL)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (exts); i++)
    if (has_suffix (path, exts[i]))
      return TRUE;
  return FALSE;
}

static gboolean
is_fence (const guint8 *l, gsize n)
{
  while (n > 0 && (*l == ' ' || *l == '\t'))
    l++, n--;
  return n >= 3 && (memcmp (l, "```", 3) == 0 || memcmp (l, "~~~", 3) == 0);
}

DwFormat
dw_format_sniff_lines (const char *path, const guint8 *data, gsize n, gboolean *in_fence)
{
  gboolean fence_local = FALSE;
  gboolean *fence = in_fence != NULL ? in_fence : &fence_local;
  gsize pos = 0;

  if (dw_path_is_document (path))
    return DW_FORMAT_UNKNOWN;
  while (pos < n)
    {
      const guint8 *nl = memchr (data + pos, '\n', n - pos);
      gsize e = nl != NULL ? (gsize)(nl - data) : n;
      const char *l = (const char *)data + pos;
      gsize len = e - pos;

      if (is_fence (data + pos, len))
        *fence = !*fence;
      else if (!*fence)
        {
          if (memmem (l, len, "step:", 5) != NULL && dw_verl_console_is_metric_line (l, len))
            return DW_FORMAT_VERL_CONSOLE;
          if (memmem (l, len, ": {'", 4) != NULL && dw_slime_console_is_metric_line (l, len))
            return DW_FORMAT_SLIME_CONSOLE;
        }
      pos = e + 1;
    }
  return DW_FORMAT_UNKNOWN;
}

DwFormat
dw_format_sniff (const char *path, const guint8 *head, gsize n)
{
  if (head == NULL)
    n = 0;
  if (n >= 7 && memcmp (head, ":W&B", 4) == 0 && head[4] == 0xe1 && head[5] == 0xbe)
    return DW_FORMAT_WANDB_OFFLINE;
  if (n >= 7 && memcmp (head, ":SWL\xd6\xe1", 6) == 0)
    return DW_FORMAT_SWANLAB;
  if (n >= 16 && memcmp (head, "SQLite format 3", 16) == 0)
    return path != NULL && g_file_test (path, G_FILE_TEST_IS_REGULAR) ? dw_sqlite_sniff (path, NULL)
                                                                      : DW_FORMAT_MLFLOW_SQLITE;
  if (dw_mlflow_file_sniff (path, head, n))
    return DW_FORMAT_MLFLOW_FILE;
  if (tfrecord_head_ok (head, n))
    return DW_FORMAT_TFEVENTS;
  if (n >= 6 && memcmp (head, "\x93NUMPY", 6) == 0)
    return DW_FORMAT_BATCH_NPY;
  if (n >= 4 && memcmp (head, "PK\x03\x04", 4) == 0)
    {
      /* np.savez members are "<name>.npy"; torch.save zips (.pt) hold "<prefix>/data.pkl" */
      if (n >= 30)
        {
          gsize name_len = (gsize)head[26] | (gsize)head[27] << 8;
          if (30 + name_len <= n && name_len >= 4
              && memcmp (head + 30 + name_len - 4, ".npy", 4) == 0)
            return DW_FORMAT_BATCH_NPZ;
          if (30 + name_len <= n && name_len >= 9
              && memcmp (head + 30 + name_len - 9, "/data.pkl", 9) == 0)
            return DW_FORMAT_BATCH_TORCH;
        }
      return has_suffix (path, ".npz") ? DW_FORMAT_BATCH_NPZ : DW_FORMAT_UNKNOWN;
    }
  if (n >= 9 && head[8] == '{')
    {
      guint64 hl = 0;
      memcpy (&hl, head, 8);
      if (hl > 1 && hl < 100000000)
        return DW_FORMAT_BATCH_SAFETENSORS;
    }
  /* text formats: look at the first few lines */
  g_autofree char *text = g_strndup ((const char *)head, MIN (n, (gsize)65536));
  if (g_str_has_prefix (text, "{"))
    {
      if (strstr (text, "\"old_log_prob\"") != NULL
          || strstr (text, "\"rollout_log_prob\"") != NULL)
        return DW_FORMAT_BATCH_JSONL;
      if (g_str_has_prefix (text, "{\"step\"") || strstr (text, "\"data\":{") != NULL
          || strstr (text, "\"data\": {") != NULL)
        return DW_FORMAT_VERL_JSONL;
    }
  char *nl = strchr (text, '\n');
  g_autofree char *first = nl ? g_strndup (text, (gsize)(nl - text)) : g_strdup (text);
  if (strstr (first, "__MIN\"") != NULL || strstr (first, "__MIN,") != NULL
      || g_str_has_suffix (first, "__MIN") || strstr (first, "__MAX") != NULL)
    return DW_FORMAT_WANDB_PANEL_CSV;
  if (strstr (first, "_step") != NULL && strchr (first, ',') != NULL)
    return DW_FORMAT_WANDB_CSV;
  /* console logs: a well-formed verl metric line, or a slime dict line, anywhere in the head
   * (NUL bytes do not end the text; documents quoting a log are not logs) */
  {
    DwFormat f = dw_format_sniff_lines (path, head, n, NULL);
    if (f != DW_FORMAT_UNKNOWN)
      return f;
  }
  /* name as tie-breaker */
  if (path != NULL)
    {
      g_autofree char *base = g_path_get_basename (path);
      if (strstr (base, "tfevents") != NULL)
        return DW_FORMAT_TFEVENTS;
      if (has_suffix (base, ".wandb"))
        return DW_FORMAT_WANDB_OFFLINE;
      if (has_suffix (base, ".swanlab"))
        return DW_FORMAT_SWANLAB;
      if (has_suffix (base, ".safetensors"))
        return DW_FORMAT_BATCH_SAFETENSORS;
      if (has_suffix (base, ".npz"))
        return DW_FORMAT_BATCH_NPZ;
      if (has_suffix (base, ".npy"))
        return DW_FORMAT_BATCH_NPY;
      if (has_suffix (base, ".db") && n == 0)
        return DW_FORMAT_MLFLOW_SQLITE;
    }
  return DW_FORMAT_UNKNOWN;
}
