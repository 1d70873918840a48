/* dw-store-catastrophes.c — the run-wide question of the token drill-down, over a store's batches
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <inttypes.h>

#include "dw-batch-reader.h"
#include "dw-store-catastrophes.h"

DwCatastrophes *
dw_store_catastrophes_collect (DwStore *store, gint64 run_id, double threshold, guint *n_with_ids,
                               GCancellable *cancellable, GError **error)
{
  g_autoptr (GArray) steps = dw_store_list_batch_steps (store, run_id, error);
  g_autoptr (DwCatastrophes) catastrophes = NULL;
  guint with_ids = 0;

  if (steps == NULL)
    return NULL;
  catastrophes = dw_batch_tokens_catastrophes_new (threshold);
  for (guint index = 0; index < steps->len; index++)
    {
      gint64 step = g_array_index (steps, gint64, index);
      g_autoptr (DwBatch) batch = NULL;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      batch = dw_store_load_batch (store, run_id, step, error);
      if (batch == NULL)
        return NULL;
      with_ids += dw_batch_tokens_catastrophes_add (catastrophes, batch, step);
    }
  if (with_ids == 0)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND,
                   _ ("run %" PRId64 " has %u stored batches and none carries token ids "
                      "(slime dumps, the verl hook and the demo do)"),
                   run_id, steps->len);
      return NULL;
    }
  if (n_with_ids != NULL)
    *n_with_ids = with_ids;
  return g_steal_pointer (&catastrophes);
}
