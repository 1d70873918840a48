/* dw-batch-zip.c — the zip container shared by .npz and torch .pt files (libzip)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Opens a DwSource as a libzip archive (consistency-checked central directory), turns libzip
 * errors into DW_BATCH_ERROR codes with the file's name, and vets a member's declared sizes
 * before anything is allocated for it.
 */
#include "dw-batch-zip.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

void
dw_batch_zip_fail (GError **error, const char *name, const char *what, zip_error_t *ze,
                   guint64 size)
{
  int code = zip_error_code_zip (ze);
  DwBatchError error_item = DW_BATCH_ERROR_CORRUPT;

  if (code == ZIP_ER_NOZIP || code == ZIP_ER_EOF || code == ZIP_ER_SEEK)
    error_item = DW_BATCH_ERROR_TRUNCATED;
  else if (code == ZIP_ER_MEMORY)
    error_item = DW_BATCH_ERROR_TOO_LARGE;
  else if (code == ZIP_ER_OPEN || code == ZIP_ER_READ)
    error_item = DW_BATCH_ERROR_IO;
  if (code == ZIP_ER_EXISTS)
    /* libzip's "File already exists" when the archive names a member twice */
    dw_batch_set_error (error, error_item, name,
                        "%s: two members have the same name (numpy and torch would silently take "
                        "one of them; Driftwatch does not guess which)",
                        what);
  else if (code == ZIP_ER_NOZIP)
    dw_batch_set_error (error, error_item, name,
                        "%s: offset %" G_GUINT64_FORMAT ": no end-of-central-directory record "
                        "at the end of the file (truncated, or not a zip archive)",
                        what, size);
  else
    dw_batch_set_error (error, error_item, name, "%s: %s", what, zip_error_strerror (ze));
}

zip_t *
dw_batch_zip_open (const DwSource *src, GError **error)
{
  zip_error_t zip_error;
  zip_source_t *source;
  zip_t *za;

  zip_error_init (&zip_error);
  if (src->fd >= 0)
    {
      int descriptor = dup (src->fd);
      FILE *stream = descriptor >= 0 ? fdopen (descriptor, "rb") : NULL;
      if (!stream)
        {
          int saved = errno;
          if (descriptor >= 0)
            close (descriptor);
          dw_batch_set_error (error, DW_BATCH_ERROR_IO, src->name, "%s", g_strerror (saved));
          return NULL;
        }
      source = zip_source_filep_create (stream, 0, -1, &zip_error);
      if (!source)
        fclose (stream);
    }
  else
    source = zip_source_buffer_create (src->mem, src->size, 0, &zip_error);
  if (!source)
    {
      dw_batch_zip_fail (error, src->name, "zip archive", &zip_error, src->size);
      zip_error_fini (&zip_error);
      return NULL;
    }
  za = zip_open_from_source (source, ZIP_RDONLY | ZIP_CHECKCONS, &zip_error);
  if (!za)
    {
      zip_source_free (source);
      dw_batch_zip_fail (error, src->name, "zip archive", &zip_error, src->size);
      zip_error_fini (&zip_error);
      return NULL;
    }
  zip_error_fini (&zip_error);
  return za;
}

gboolean
dw_batch_zip_stat_member (zip_t *za, zip_uint64_t index, const DwSource *src, const char *ctx,
                          zip_stat_t *st, GError **error)
{
  const zip_uint64_t want = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;

  zip_stat_init (st);
  if (zip_stat_index (za, index, 0, st) < 0 || (st->valid & want) != want)
    {
      dw_batch_zip_fail (error, src->name, ctx, zip_get_error (za), src->size);
      return FALSE;
    }
  if (st->comp_method != ZIP_CM_STORE && st->comp_method != ZIP_CM_DEFLATE)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                          "%s: compression method %d is not supported (stored or deflate)", ctx,
                          (int)st->comp_method);
      return FALSE;
    }
  /* Refuse impossible sizes before allocating: stored members are as large as their data,
   * deflate expands at most 1032:1, and nothing may exceed the batch limit. */
  if (st->comp_size > src->size || (st->comp_method == ZIP_CM_STORE && st->size != st->comp_size)
      || (st->comp_method == ZIP_CM_DEFLATE && st->size / 1032 > st->comp_size + 1))
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                          "%s: declared size %" G_GUINT64_FORMAT " (compressed %" G_GUINT64_FORMAT
                          ") is impossible in an archive of %" G_GUINT64_FORMAT " bytes",
                          ctx, (guint64)st->size, (guint64)st->comp_size, src->size);
      return FALSE;
    }
  if (st->size > dw_batch_reader_get_max_bytes ())
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                          "%s: %" G_GUINT64_FORMAT " bytes exceed the reader's limit of "
                          "%" G_GUINT64_FORMAT,
                          ctx, (guint64)st->size, dw_batch_reader_get_max_bytes ());
      return FALSE;
    }
  return TRUE;
}

guint8 *
dw_batch_zip_read_member (zip_t *za, zip_uint64_t index, const DwSource *src, const char *ctx,
                          guint64 *len, GError **error)
{
  zip_stat_t stat;
  zip_file_t *zip_file;
  g_autofree guint8 *buf = NULL;
  guint64 done = 0;
  guint8 extra;

  if (!dw_batch_zip_stat_member (za, index, src, ctx, &stat, error))
    return NULL;
  buf = g_try_malloc (stat.size ? stat.size : 1);
  if (!buf)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                          "%s: out of memory for %" G_GUINT64_FORMAT " bytes", ctx,
                          (guint64)stat.size);
      return NULL;
    }
  zip_file = zip_fopen_index (za, index, 0);
  if (!zip_file)
    {
      dw_batch_zip_fail (error, src->name, ctx, zip_get_error (za), src->size);
      return NULL;
    }
  while (done < stat.size)
    {
      zip_int64_t got = zip_fread (zip_file, buf + done, stat.size - done);
      if (got <= 0)
        break;
      done += (guint64)got;
    }
  if (done != stat.size || zip_fread (zip_file, &extra, 1) != 0)
    {
      zip_error_t *file_error = zip_file_get_error (zip_file);
      if (zip_error_code_zip (file_error) != ZIP_ER_OK)
        dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                            "%s: offset %" G_GUINT64_FORMAT ": %s", ctx, done,
                            zip_error_strerror (file_error));
      else
        dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name,
                            "%s: offset %" G_GUINT64_FORMAT ": the member ends before its declared "
                            "%" G_GUINT64_FORMAT " bytes",
                            ctx, done, (guint64)stat.size);
      zip_fclose (zip_file);
      return NULL;
    }
  zip_fclose (zip_file);
  *len = stat.size;
  return g_steal_pointer (&buf);
}
