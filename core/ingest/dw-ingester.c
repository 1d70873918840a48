/* dw-ingester.c — the ingester object, its report, recognition and one file into the store (see
 * dw-ingester.h for the rules)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <inttypes.h>

#include "dw-log-sniff.h"

#include "dw-ingester-private.h"

gboolean
dw_ingester_is_batch_format (DwFormat f)
{
  return f == DW_FORMAT_BATCH_SAFETENSORS || f == DW_FORMAT_BATCH_NPZ || f == DW_FORMAT_BATCH_NPY
         || f == DW_FORMAT_BATCH_JSONL || f == DW_FORMAT_BATCH_TORCH;
}

/* ------------------------------------------------------------------------------------------ */
/* Report                                                                                      */

void
dw_ingest_report_init (DwIngestReport *report)
{
  memset (report, 0, sizeof *report);
  report->diagnostics = g_ptr_array_new_with_free_func (g_free);
  report->notes = g_ptr_array_new_with_free_func (g_free);
  report->run_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  report->incomplete = g_ptr_array_new_with_free_func (g_free);
}

void
dw_ingest_report_clear (DwIngestReport *report)
{
  g_clear_pointer (&report->diagnostics, g_ptr_array_unref);
  g_clear_pointer (&report->notes, g_ptr_array_unref);
  g_clear_pointer (&report->run_ids, g_array_unref);
  g_clear_pointer (&report->incomplete, g_ptr_array_unref);
  memset (report, 0, sizeof *report);
}

void
dw_ingester_report_note (DwIngestReport *report, const char *fmt, ...)
{
  va_list ap;

  if (report == NULL || report->notes == NULL)
    return;
  va_start (ap, fmt);
  g_ptr_array_add (report->notes, g_strdup_vprintf (fmt, ap));
  va_end (ap);
}

void
dw_ingester_report_run (DwIngestReport *report, gint64 run_id)
{
  if (report == NULL || report->run_ids == NULL)
    return;
  for (guint i = 0; i < report->run_ids->len; i++)
    if (g_array_index (report->run_ids, gint64, i) == run_id)
      return;
  g_array_append_val (report->run_ids, run_id);
}

/* ------------------------------------------------------------------------------------------ */
/* Object                                                                                      */

G_DEFINE_FINAL_TYPE (DwIngester, dw_ingester, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_STORE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
dw_ingester_finalize (GObject *object)
{
  DwIngester *self = DW_INGESTER (object);

  g_clear_object (&self->store);
  g_free (self->store_path);
  g_clear_pointer (&self->sniffers, g_hash_table_unref);
  g_free (self->run_name);
  G_OBJECT_CLASS (dw_ingester_parent_class)->finalize (object);
}

static void
dw_ingester_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwIngester *self = DW_INGESTER (object);

  switch (prop_id)
    {
    case PROP_STORE:
      g_value_set_object (value, self->store);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_ingester_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  DwIngester *self = DW_INGESTER (object);

  switch (prop_id)
    {
    case PROP_STORE:
      self->store = g_value_dup_object (value);
      if (self->store != NULL)
        self->store_path = g_canonicalize_filename (dw_store_get_path (self->store), NULL);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_ingester_class_init (DwIngesterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = dw_ingester_finalize;
  object_class->get_property = dw_ingester_get_property;
  object_class->set_property = dw_ingester_set_property;

  properties[PROP_STORE]
    = g_param_spec_object ("store", NULL, NULL, DW_TYPE_STORE,
                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
dw_ingester_init (DwIngester *self)
{
  self->chunk = DW_INGESTER_DEFAULT_CHUNK;
  self->sniffers
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)dw_sniffer_free);
  self->sniff_budget_us = DW_SNIFF_BUDGET_US;
}

DwIngester *
dw_ingester_new (DwStore *store)
{
  g_return_val_if_fail (DW_IS_STORE (store), NULL);
  return g_object_new (DW_TYPE_INGESTER, "store", store, NULL);
}

DwStore *
dw_ingester_get_store (DwIngester *self)
{
  g_return_val_if_fail (DW_IS_INGESTER (self), NULL);
  return self->store;
}

void
dw_ingester_set_run_name (DwIngester *self, const char *name)
{
  g_return_if_fail (DW_IS_INGESTER (self));
  g_free (self->run_name);
  self->run_name = g_strdup (name);
}

void
dw_ingester_set_chunk_size (DwIngester *self, gsize bytes)
{
  g_return_if_fail (DW_IS_INGESTER (self));
  self->chunk = MAX (bytes, 64);
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

gboolean
dw_ingester_is_store_file (DwIngester *self, const char *abs)
{
  gsize n = strlen (self->store_path);

  if (strncmp (abs, self->store_path, n) != 0)
    return FALSE;
  return abs[n] == '\0' || g_str_equal (abs + n, "-wal") || g_str_equal (abs + n, "-shm")
         || g_str_equal (abs + n, "-journal");
}

/* Recognises @path (already open as @fd) by content, going on from where the last look at it
 * stopped (a growing file is examined further, never again from the start). */
DwFormat
dw_ingester_recognise_fd (DwIngester *self, int fd, const char *path, char **reason)
{
  DwSniffer *s = g_hash_table_lookup (self->sniffers, path);
  DwFormat f;

  if (s == NULL)
    {
      s = dw_sniffer_new (path);
      g_hash_table_insert (self->sniffers, g_strdup (path), s);
    }
  f = dw_sniffer_step (s, fd, self->sniff_budget_us);
  if (reason != NULL)
    *reason = f == DW_FORMAT_UNKNOWN ? g_strdup (dw_sniffer_get_reason (s)) : NULL;
  return f;
}

gboolean
dw_ingester_recognise_unfinished (DwIngester *self, const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  DwSniffer *s = g_hash_table_lookup (self->sniffers, abs);

  return s != NULL && dw_sniffer_is_unfinished (s);
}

gboolean
dw_ingester_recognise_refused (DwIngester *self, const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  DwSniffer *s = g_hash_table_lookup (self->sniffers, abs);

  return s != NULL && dw_sniffer_is_final (s) && dw_sniffer_get_reason (s) != NULL;
}

void
dw_ingester_set_sniff_budget (DwIngester *self, gint64 budget_us)
{
  g_return_if_fail (DW_IS_INGESTER (self));
  self->sniff_budget_us = budget_us;
}

DwFormat
dw_ingester_recognise (DwIngester *self, const char *path, char **reason)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autoptr (DwFileRecord) rec = NULL;
  DwFormat f;
  int fd;

  g_return_val_if_fail (DW_IS_INGESTER (self), DW_FORMAT_UNKNOWN);
  if (reason != NULL)
    *reason = NULL;
  if (dw_ingester_is_store_file (self, abs))
    return DW_FORMAT_UNKNOWN;
  rec = dw_store_get_file (self->store, abs, NULL);
  if (rec != NULL)
    return (DwFormat)rec->format;
  /* O_NONBLOCK: a FIFO in a watched folder must not block the follower */
  fd = g_open (abs, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0)
    {
      if (reason != NULL)
        *reason = g_strdup_printf (_ ("cannot open: %s"), g_strerror (errno));
      return DW_FORMAT_UNKNOWN;
    }
  {
    struct stat st = { 0 };

    if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
      {
        if (reason != NULL)
          *reason
            = g_strdup_printf (_ ("%s, not a regular file"), dw_ingest_file_kind (st.st_mode));
        close (fd);
        return DW_FORMAT_UNKNOWN;
      }
  }
  f = dw_ingester_recognise_fd (self, fd, abs, reason);
  close (fd);
  return f;
}

/* One file; @run_root NULL → stored run or the single-file rule. @explicit: named by the user
 * (an unknown format is then worth a diagnostic, not only a note). */
gboolean
dw_ingester_ingest_one (DwIngester *self, const char *path_in, const char *run_root,
                        gboolean explicit, DwIngestReport *report, GError **error)
{
  g_autofree char *path = g_canonicalize_filename (path_in, NULL);
  g_autofree char *root = NULL;
  g_autoptr (DwFileRecord) rec = NULL;
  GError *err = NULL;
  struct stat st;
  DwFormat format;
  gboolean ok;
  int fd;

  if (dw_ingester_is_store_file (self, path))
    return TRUE;
  rec = dw_store_get_file (self->store, path, &err);
  if (err != NULL)
    {
      g_propagate_error (error, err);
      return FALSE;
    }
  /* O_NONBLOCK: opening a FIFO with no writer would block forever (no effect on files) */
  fd = g_open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0 || fstat (fd, &st) != 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      if (explicit)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _ ("%s: %s"), path,
                       g_strerror (saved));
          return FALSE;
        }
      dw_ingester_report_note (report, _ ("%s: cannot open: %s"), path, g_strerror (saved));
      return TRUE;
    }
  if (!S_ISREG (st.st_mode))
    {
      const char *what = dw_ingest_file_kind (st.st_mode);

      close (fd);
      if (explicit)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                       _ ("%s: %s, not a regular file: Driftwatch reads files it can read "
                          "again (save the output to a file first)"),
                       path, what);
          return FALSE;
        }
      dw_ingester_report_note (report, _ ("%s: %s, not a regular file: skipped"), path, what);
      return TRUE;
    }
  /* a database in WAL mode changes in <db>-wal only: always asked for rows after the last */
  if (rec != NULL && dw_ingester_same_identity (rec, &st) && rec->format != DW_FORMAT_TRACKIO_SQLITE
      && rec->format != DW_FORMAT_MLFLOW_SQLITE)
    {
      close (fd);
      if (report != NULL)
        report->n_files++;
      return TRUE; /* unchanged since the last ingest */
    }
  {
    g_autofree char *reason = NULL;

    if (rec != NULL && (rec->format <= DW_FORMAT_UNKNOWN || rec->format >= DW_N_FORMATS))
      {
        /* damaged bookkeeping (a format number this build does not know): read it as new */
        rec->format = DW_FORMAT_UNKNOWN;
        rec->offset = rec->prefix_len = 0;
        rec->max_step = G_MININT64;
        g_clear_pointer (&rec->state, g_bytes_unref);
      }
    format = rec != NULL && rec->format != DW_FORMAT_UNKNOWN
               ? (DwFormat)rec->format
               : dw_ingester_recognise_fd (self, fd, path, &reason);
    if (format == DW_FORMAT_UNKNOWN)
      {
        close (fd);
        /* the same whether the file was named or found in a folder: the caller decides what
         * a path that gave nothing means (driftwatch-cli ingest: exit 1) */
        dw_ingester_report_note (
          report,
          _ ("%s: not a recognised log or batch format (%s; formats: verl/slime console, verl "
             "JSONL, tfevents, W&B CSV or .wandb, MLflow, rollout batch): skipped"),
          path, reason);
        if (report != NULL)
          report->n_skipped++;
        return TRUE;
      }
  }
  if (rec == NULL)
    {
      rec = g_new0 (DwFileRecord, 1);
      rec->path = g_strdup (path);
      rec->format = format;
      rec->max_step = G_MININT64;
    }
  if (rec->run_id == 0)
    root = run_root != NULL ? g_canonicalize_filename (run_root, NULL)
                            : dw_ingest_run_root_for_file (path, format);
  if (format == DW_FORMAT_MLFLOW_SQLITE || format == DW_FORMAT_TRACKIO_SQLITE)
    ok = dw_ingest_db_read (self, path, &st, format, rec, report, &err);
  else if (dw_ingester_is_batch_format (format))
    ok = dw_ingest_batch_read (self, path, fd, &st, format, rec, root, report, &err);
  else
    ok = dw_ingest_log_read (self, path, fd, &st, format, rec, root, report, &err);
  close (fd);
  if (!ok)
    {
      if (!g_error_matches (err, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT))
        {
          g_propagate_error (error, err);
          return FALSE;
        }
      /* truncated while being read (a restarting writer): what was committed is consistent;
       * the next ingest sees the shorter file and reads it again */
      dw_ingester_report_note (report, _ ("%s (read again on the next ingest)"), err->message);
      g_error_free (err);
      return TRUE;
    }
  if (ok && rec->id != 0 && report != NULL)
    {
      report->n_files++;
      report->n_files_read++;
      dw_ingester_report_run (report, rec->run_id);
    }
  return ok;
}

gboolean
dw_ingester_ingest_file (DwIngester *self, const char *path, const char *run_root,
                         DwIngestReport *report, GError **error)
{
  g_return_val_if_fail (DW_IS_INGESTER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  return dw_ingester_ingest_one (self, path, run_root, TRUE, report, error);
}

gboolean
dw_ingester_ingest_path (DwIngester *self, const char *path, DwIngestReport *report, GError **error)
{
  g_autofree char *abs = NULL;

  g_return_val_if_fail (DW_IS_INGESTER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  abs = g_canonicalize_filename (path, NULL);
  if (g_file_test (abs, G_FILE_TEST_IS_DIR))
    return dw_ingest_folder_read (self, abs, report, 0, error);
  if (!g_file_test (abs, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _ ("%s: no such file or folder"), path);
      return FALSE;
    }
  return dw_ingester_ingest_one (self, abs, NULL, TRUE, report, error);
}
