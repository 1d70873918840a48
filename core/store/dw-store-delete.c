/* dw-store-delete.c — removing a run from the store
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <inttypes.h>

#include <glib/gi18n.h>

#include "dw-store-delete.h"
#include "dw-store-private.h"

gboolean
dw_store_delete_run (DwStore *self, gint64 run_id, GError **error)
{
  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  if (!_dw_store_query_check_writable (self, error))
    return FALSE;
  if (dw_store_in_transaction (self))
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED,
                   _ ("%s: a run cannot be deleted inside a transaction"), self->path);
      return FALSE;
    }

  /* the schema cascades to tags, points, batches, sequences, files, restarts, diagnostics */
  if (!_dw_store_query_run (self, error, "deleting a run", "DELETE FROM runs WHERE id = ?1", "i",
                            run_id))
    return FALSE;
  if (sqlite3_changes (self->db) == 0)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND,
                   /* TRANSLATORS: store file, run id */
                   _ ("%s: no run with id %" PRId64), self->path, run_id);
      return FALSE;
    }

  /* SQLite may give the id to the next new run: no cached tag id of this one may stick to it */
  g_hash_table_remove_all (self->tag_cache);
  return TRUE;
}
