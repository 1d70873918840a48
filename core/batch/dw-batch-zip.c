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
  DwBatchError e = DW_BATCH_ERROR_CORRUPT;

  if (code == ZIP_ER_NOZIP || code == ZIP_ER_EOF || code == ZIP_ER_SEEK)
    e = DW_BATCH_ERROR_TRUNCATED;
  else if (code == ZIP_ER_MEMORY)
    e = DW_BATCH_ERROR_TOO_LARGE;
  else if (code == ZIP_ER_OPEN || code == ZIP_ER_READ)
    e = DW_BATCH_ERROR_IO;
  if (code == ZIP_ER_EXISTS)
    /* libzip's "File already exists" when the archive names a member twice */
    dw_batch_set_error (error, e, name,
                        "%s: two members have the same name (numpy and torch would silently take "
                        "one of them; Driftwatch does not guess which)",
                        what);
  else if (code == ZIP_ER_NOZIP)
    dw_batch_set_error (error, e, name,
                        "%s: offset %" G_GUINT64_FORMAT ": no end-of-central-directory record "
                        "at the end of the file (truncated, or not a zip archive)",
                        what, size);
  else
    dw_batch_set_error (error, e, name, "%s: %s", what, zip_error_strerror (ze));
}

zip_t *
dw_batch_zip_open (const DwSource *src, GError **error)
{
  zip_error_t ze;
  zip_source_t *zs;
  zip_t *za;

  zip_error_init (&ze);
  if (src->fd >= 0)
    {
      int descriptor = dup (src->fd);
      FILE *fp = descriptor >= 0 ? fdopen (descriptor, "rb") : NULL;
      if (!fp)
        {
          int saved = errno;
          if (descriptor >= 0)
            close (descriptor);
          dw_batch_set_error (error, DW_BATCH_ERROR_IO, src->name, "%s", g_strerror (saved));
          return NULL;
        }
      zs = zip_source_filep_create (fp, 0, -1, &ze);
      if (!zs)
        fclose (fp);
    }
  else
    zs = zip_source_buffer_create (src->mem, src->size, 0, &ze);
  if (!zs)
    {
      dw_batch_zip_fail (error, src->name, "zip archive", &ze, src->size);
      zip_error_fini (&ze);
      return NULL;
    }
  za = zip_open_from_source (zs, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
  if (!za)
    {
      zip_source_free (zs);
      dw_batch_zip_fail (error, src->name, "zip archive", &ze, src->size);
      zip_error_fini (&ze);
      return NULL;
    }
  zip_error_fini (&ze);
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
  zip_stat_t st;
  zip_file_t *zf;
  g_autofree guint8 *buf = NULL;
  guint64 done = 0;
  guint8 extra;

  if (!dw_batch_zip_stat_member (za, index, src, ctx, &st, error))
    return NULL;
  buf = g_try_malloc (st.size ? st.size : 1);
  if (!buf)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                          "%s: out of memory for %" G_GUINT64_FORMAT " bytes", ctx,
                          (guint64)st.size);
      return NULL;
    }
  zf = zip_fopen_index (za, index, 0);
  if (!zf)
    {
      dw_batch_zip_fail (error, src->name, ctx, zip_get_error (za), src->size);
      return NULL;
    }
  while (done < st.size)
    {
      zip_int64_t r = zip_fread (zf, buf + done, st.size - done);
      if (r <= 0)
        break;
      done += (guint64)r;
    }
  if (done != st.size || zip_fread (zf, &extra, 1) != 0)
    {
      zip_error_t *fe = zip_file_get_error (zf);
      if (zip_error_code_zip (fe) != ZIP_ER_OK)
        dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                            "%s: offset %" G_GUINT64_FORMAT ": %s", ctx, done,
                            zip_error_strerror (fe));
      else
        dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name,
                            "%s: offset %" G_GUINT64_FORMAT ": the member ends before its declared "
                            "%" G_GUINT64_FORMAT " bytes",
                            ctx, done, (guint64)st.size);
      zip_fclose (zf);
      return NULL;
    }
  zip_fclose (zf);
  *len = st.size;
  return g_steal_pointer (&buf);
}
