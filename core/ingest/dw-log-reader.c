/* dw-log-reader.c — the format registry: names and readers of the formats, sniffing, line
 * splitting (the helpers the formats share are in dw-reader-util.c, dw-crc32c.c and dw-pb.c)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-log-reader-private.h"
#include "dw-reader-loggers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The registry: every format's name and, for the byte-stream formats, the function that makes
 * a reader of it (SQLite stores and batch dumps are read elsewhere). */
typedef struct
{
  const char *name;
  void (*init) (DwLogReader *reader);
} DwLogReaderFormat;

static const DwLogReaderFormat formats[DW_N_FORMATS] = {
  [DW_FORMAT_UNKNOWN] = { "unknown", NULL },
  [DW_FORMAT_VERL_CONSOLE] = { "verl-console", dw_reader_verl_console_init },
  [DW_FORMAT_VERL_JSONL] = { "verl-jsonl", dw_reader_verl_jsonl_init },
  [DW_FORMAT_TFEVENTS] = { "tfevents", dw_reader_tfevents_init },
  [DW_FORMAT_SLIME_CONSOLE] = { "slime-console", dw_reader_slime_console_init },
  [DW_FORMAT_WANDB_CSV] = { "wandb-csv", dw_reader_wandb_csv_init },
  [DW_FORMAT_WANDB_PANEL_CSV] = { "wandb-panel-csv", dw_reader_wandb_csv_init },
  [DW_FORMAT_WANDB_OFFLINE] = { "wandb-offline", dw_reader_wandb_offline_init },
  [DW_FORMAT_MLFLOW_SQLITE] = { "mlflow-sqlite", NULL },
  [DW_FORMAT_BATCH_SAFETENSORS] = { "batch-safetensors", NULL },
  [DW_FORMAT_BATCH_NPZ] = { "batch-npz", NULL },
  [DW_FORMAT_BATCH_NPY] = { "batch-npy", NULL },
  [DW_FORMAT_BATCH_JSONL] = { "batch-jsonl", NULL },
  [DW_FORMAT_SWANLAB] = { "swanlab", dw_reader_swanlab_init },
  [DW_FORMAT_MLFLOW_FILE] = { "mlflow-file", dw_reader_mlflow_file_init },
  [DW_FORMAT_TRACKIO_SQLITE] = { "trackio-sqlite", NULL },
  [DW_FORMAT_BATCH_TORCH] = { "batch-torch", NULL },
};

const char *
dw_format_name (DwFormat format)
{
  if ((int)format < 0 || format >= DW_N_FORMATS)
    return "unknown";
  return formats[format].name;
}

/* ---- reader ----------------------------------------------------------------------------- */

DwLogReader *
dw_log_reader_new (DwFormat format, const char *path)
{
  if ((int)format < 0 || format >= DW_N_FORMATS || formats[format].init == NULL)
    return NULL;
  DwLogReader *r = g_new0 (DwLogReader, 1);
  r->format = format;
  r->path = g_strdup (path != NULL ? path : "(unnamed)");
  formats[format].init (r);
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
