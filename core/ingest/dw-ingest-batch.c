/* dw-ingest-batch.c — rollout batch files (safetensors, npz, npy sets, JSONL, slime .pt dumps)
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

#include "dw-batch-reader.h"

#include "dw-ingester-private.h"

/* "X.old_log_prob.npy" of a sibling set "X.<tensor>.npy" is the batch; the other members are
 * part of it. NULL for a lone array. */
static char *
npy_set_prefix (const char *path)
{
  static const char *const required[] = { "old_log_prob", "rollout_log_prob", "response_mask" };
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  char *dot;

  if (!g_str_has_suffix (base, ".npy"))
    return NULL;
  base[strlen (base) - 4] = '\0';
  dot = strrchr (base, '.');
  if (dot == NULL)
    return NULL;
  *dot = '\0';
  for (guint i = 0; i < G_N_ELEMENTS (required); i++)
    {
      g_autofree char *n = g_strdup_printf ("%s.%s.npy", base, required[i]);
      g_autofree char *p = g_build_filename (dir, n, NULL);
      if (!g_file_test (p, G_FILE_TEST_IS_REGULAR))
        return NULL;
    }
  return g_build_filename (dir, base, NULL);
}

/* Was the lowest rank's file of this per-rank set read (and remembered) already? It is not
 * when it found its set incomplete: then a later rank file reads the set. */
static gboolean
torch_set_read (DwIngester *self, const char *path)
{
  g_autofree char *leader = dw_batch_slime_set_leader (path);
  g_autoptr (DwFileRecord) record = dw_store_get_file (self->store, leader, NULL);
  return record != NULL;
}

gboolean
dw_ingest_batch_read (DwIngester *self, const char *path, int fd, const struct stat *st,
                      DwFormat format, DwFileRecord *rec, const char *run_root,
                      DwIngestReport *report, GError **error)
{
  g_autoptr (GError) berr = NULL;
  g_autoptr (DwBatch) batch = NULL;
  gint64 plen = MIN ((gint64)st->st_size, DW_INGEST_PREFIX_MAX);
  guint32 crc = 0;
  GError *err = NULL;

  if (format == DW_FORMAT_BATCH_NPY)
    {
      g_autofree char *prefix = npy_set_prefix (path);
      if (prefix == NULL)
        {
          dw_ingester_report_note (
            report,
            _ ("%s: a single .npy array, not a batch (X.old_log_prob.npy needs "
               "X.rollout_log_prob.npy and X.response_mask.npy beside it): skipped"),
            path);
          return TRUE;
        }
      if (!g_str_has_suffix (path, ".old_log_prob.npy"))
        return TRUE; /* read with its set's old_log_prob member */
    }

  if (format == DW_FORMAT_BATCH_TORCH)
    {
      g_autofree char *parent = g_path_get_dirname (path);
      g_autofree char *dir = g_path_get_basename (parent);
      /* slime's rollout side is joined to train_data/{id}.pt when that is read */
      if (strcmp (dir, "rollout_data") == 0)
        return TRUE;
      /* A per-rank dump is read whole through its lowest rank. A later rank file reads the set
       * only when that one was not remembered: live, it may have been written first and found
       * its set incomplete. */
      if (!dw_batch_slime_is_set_leader (path) && torch_set_read (self, path))
        return TRUE;
    }

  batch = dw_batch_read_file (path, &berr);
  if (batch == NULL && g_error_matches (berr, DW_BATCH_ERROR, DW_BATCH_ERROR_TRUNCATED))
    {
      /* maybe still being written: not remembered, so the next ingest tries again */
      dw_ingester_report_note (report, _ ("%s (incomplete, read again on the next ingest)"),
                               berr->message);
      if (report != NULL && report->incomplete != NULL)
        g_ptr_array_add (report->incomplete, g_strdup (berr->message));
      return TRUE;
    }
  if (!dw_ingester_prefix_crc (fd, path, plen, &crc, error))
    return FALSE;

  if (!dw_store_begin (self->store, error))
    return FALSE;
  if (rec->run_id == 0)
    {
      rec->run_id = dw_ingest_runs_ensure_for_root (self, run_root, "unknown", &err);
      if (rec->run_id == 0)
        return dw_ingester_fail_tx (self, error, err);
    }
  if (batch != NULL && batch->step < 0)
    {
      g_set_error (&berr, DW_BATCH_ERROR, DW_BATCH_ERROR_CORRUPT,
                   _ ("%s: no step in the metadata nor in the file name (step_000123.*)"), path);
      g_clear_pointer (&batch, dw_batch_free);
    }
  if (batch != NULL
      && !dw_store_put_batch (self->store, rec->run_id, batch->step, batch, path, &berr))
    {
      /* one batch too large for the store: that file is skipped with a diagnostic naming it,
       * the rest of the folder is read (it stopped every ingest of the folder) */
      if (!g_error_matches (berr, DW_STORE_ERROR, DW_STORE_ERROR_TOO_LARGE))
        return dw_ingester_fail_tx (self, error, g_steal_pointer (&berr));
      g_clear_pointer (&batch, dw_batch_free);
    }
  else if (batch != NULL)
    rec->max_step = batch->step;
  if (batch == NULL)
    {
      if (!dw_store_add_diagnostic (self->store, rec->run_id, path, 0, berr->message, &err))
        return dw_ingester_fail_tx (self, error, err);
    }
  rec->format = format;
  rec->offset = (gint64)st->st_size;
  rec->prefix_len = plen;
  rec->prefix_crc = crc;
  dw_ingester_fill_identity (rec, st);
  if (!dw_store_put_file (self->store, rec, &err) || !dw_store_commit (self->store, &err))
    return dw_ingester_fail_tx (self, error, err);

  if (report != NULL)
    {
      if (batch != NULL)
        {
          report->n_batches++;
          for (gsize i = 0; i < batch->rows * batch->cols; i++)
            report->n_tokens += dw_batch_mask_value (batch, i) != 0.0;
        }
      else
        g_ptr_array_add (report->diagnostics, g_strdup (berr->message));
    }
  return TRUE;
}
