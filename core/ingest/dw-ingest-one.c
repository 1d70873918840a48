/* dw-ingest-one.c — one file into the store: is it the store's own, what format is it (by
 * content, going on where the last look stopped), and which part of the ingester reads it
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "dw-log-sniff.h"

#include "dw-ingester-private.h"

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
