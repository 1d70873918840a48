/* dw-ingest-util.c — what the parts of the ingester share: reads at an offset, the prefix
 * checksum, a file's identity and kind, rolling a failed transaction back
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <inttypes.h>

#include "dw-ingester-private.h"

gboolean
dw_ingester_is_batch_format (DwFormat f)
{
  return f == DW_FORMAT_BATCH_SAFETENSORS || f == DW_FORMAT_BATCH_NPZ || f == DW_FORMAT_BATCH_NPY
         || f == DW_FORMAT_BATCH_JSONL || f == DW_FORMAT_BATCH_TORCH;
}

gboolean
dw_ingester_read_at (int fd, const char *path, goffset offset, guint8 *buf, gsize n, GError **error)
{
  gsize done = 0;

  while (done < n)
    {
      ssize_t r = pread (fd, buf + done, n - done, (off_t)(offset + (goffset)done));
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        {
          int saved = errno;
          /* PARTIAL_INPUT: the file shrank under us (a writer truncating it) */
          g_set_error (error, G_IO_ERROR,
                       r < 0 ? g_io_error_from_errno (saved) : G_IO_ERROR_PARTIAL_INPUT,
                       _ ("%s: cannot read at byte offset %" PRId64 ": %s"), path,
                       (gint64)(offset + (goffset)done),
                       r < 0 ? g_strerror (saved) : _ ("the file shrank while being read"));
          return FALSE;
        }
      done += (gsize)r;
    }
  return TRUE;
}

/* CRC-32C of [0, len) of the file. */
gboolean
dw_ingester_prefix_crc (int fd, const char *path, gint64 len, guint32 *crc, GError **error)
{
  g_autofree guint8 *buf = g_malloc (MAX (len, 1));

  if (!dw_ingester_read_at (fd, path, 0, buf, (gsize)len, error))
    return FALSE;
  *crc = dw_crc32c (0, buf, (gsize)len);
  return TRUE;
}

void
dw_ingester_fill_identity (DwFileRecord *rec, const struct stat *st)
{
  rec->dev = (guint64)st->st_dev;
  rec->inode = (guint64)st->st_ino;
  rec->size = (gint64)st->st_size;
  rec->mtime_us = (gint64)st->st_mtim.tv_sec * G_USEC_PER_SEC + st->st_mtim.tv_nsec / 1000;
}

gboolean
dw_ingester_same_identity (const DwFileRecord *rec, const struct stat *st)
{
  DwFileRecord now = { 0 };

  dw_ingester_fill_identity (&now, st);
  return rec->dev == now.dev && rec->inode == now.inode && rec->size == now.size
         && rec->mtime_us == now.mtime_us;
}

const char *
dw_ingest_file_kind (mode_t mode)
{
  if (S_ISFIFO (mode))
    return _ ("a FIFO (named pipe)");
  if (S_ISSOCK (mode))
    return _ ("a socket");
  if (S_ISCHR (mode) || S_ISBLK (mode))
    return _ ("a device");
  if (S_ISDIR (mode))
    return _ ("a folder");
  return S_ISREG (mode) ? _ ("a file") : _ ("a special file");
}

gboolean
dw_ingester_fail_tx (DwIngester *self, GError **error, GError *err)
{
  dw_store_rollback (self->store);
  g_propagate_error (error, err);
  return FALSE;
}
