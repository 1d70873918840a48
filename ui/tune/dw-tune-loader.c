/* dw-tune-loader.c — the Tune page's worker threads: precompute, refinement, the config check
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-tune-loader"

#include "config.h"

#include <string.h>

#include "dw-tune-loader.h"

#include "dw-store-writer.h"

/* ------------------------------------------------------------------------------------------ */
/* The batch loader the engine calls from its threads                                          */

typedef struct
{
  DwStore *store;
  GMutex lock;
  gint64 run_id;
} DwTuneLoaderBatches;

static void
dw_tune_loader_batches_free (gpointer data)
{
  DwTuneLoaderBatches *batches = data;

  g_clear_object (&batches->store);
  g_mutex_clear (&batches->lock);
  g_free (batches);
}

static DwBatch *
dw_tune_loader_load_batch (gint64 step, gpointer user_data, GError **error)
{
  DwTuneLoaderBatches *batches = user_data;
  DwBatch *batch;

  g_mutex_lock (&batches->lock);
  batch = dw_store_load_batch (batches->store, batches->run_id, step, error);
  g_mutex_unlock (&batches->lock);
  return batch;
}

/* ------------------------------------------------------------------------------------------ */
/* Precompute                                                                                  */

typedef struct
{
  char *path;
  gint64 run_id;
  guint64 compact_tokens;
} DwTuneLoaderJob;

static void
dw_tune_loader_job_free (DwTuneLoaderJob *job)
{
  g_free (job->path);
  g_free (job);
}

/* the run's valid tokens, estimated from its first batch: steps of one run have alike sizes */
static guint64
dw_tune_loader_estimate_tokens (DwTuneLoaderBatches *batches, const GArray *steps)
{
  g_autoptr (GError) error = NULL;
  DwBatch *batch;
  guint64 valid = 0;

  if (steps->len == 0)
    return 0;
  batch = dw_tune_loader_load_batch (g_array_index (steps, gint64, 0), batches, &error);
  if (batch == NULL)
    return 0; /* the load proper reports it */
  for (size_t index = 0; index < batch->rows * batch->cols; index++)
    valid += dw_batch_mask_value (batch, index) != 0;
  dw_batch_free (batch);
  return valid * steps->len;
}

static void
dw_tune_loader_load_worker (GTask *task, gpointer source, gpointer task_data,
                            GCancellable *cancellable)
{
  DwTuneLoaderJob *job = task_data;
  GError *error = NULL;
  DwTuneLoaderBatches *batches;
  g_autoptr (GArray) steps = NULL;
  DwWhatifEngine *engine;
  /* a connection of our own: the window's is used on the main thread meanwhile */
  DwStore *store = dw_store_open_read_only (job->path, &error);

  if (!store)
    {
      g_task_return_error (task, error);
      return;
    }
  steps = dw_store_list_batch_steps (store, job->run_id, &error);
  if (!steps)
    {
      g_object_unref (store);
      g_task_return_error (task, error);
      return;
    }
  batches = g_new0 (DwTuneLoaderBatches, 1);
  batches->store = store;
  batches->run_id = job->run_id;
  g_mutex_init (&batches->lock);
  engine = dw_whatif_engine_new (0);
  dw_whatif_engine_set_loader (engine, dw_tune_loader_load_batch, batches,
                               dw_tune_loader_batches_free);

  /* a large run keeps a sketch of its tokens, not every token (docs/TUNE.md) */
  if (dw_tune_loader_estimate_tokens (batches, steps) > job->compact_tokens)
    dw_whatif_engine_set_compact (engine, TRUE);
  if (!dw_whatif_engine_load_steps (engine, (const gint64 *)(gpointer)steps->data, steps->len,
                                    &error))
    {
      dw_whatif_engine_unref (engine);
      g_task_return_error (task, error);
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    {
      dw_whatif_engine_unref (engine);
      return;
    }
  g_task_return_pointer (task, engine, (GDestroyNotify)dw_whatif_engine_unref);
}

void
dw_tune_loader_load_async (const char *db_path, gint64 run_id, guint64 compact_tokens,
                           GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data)
{
  DwTuneLoaderJob *job = g_new0 (DwTuneLoaderJob, 1);
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  job->path = g_strdup (db_path);
  job->run_id = run_id;
  job->compact_tokens = compact_tokens;
  g_task_set_source_tag (task, dw_tune_loader_load_async);
  g_task_set_task_data (task, job, (GDestroyNotify)dw_tune_loader_job_free);
  g_task_set_priority (task, G_PRIORITY_LOW);
  g_task_run_in_thread (task, dw_tune_loader_load_worker);
}

DwWhatifEngine *
dw_tune_loader_load_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == dw_tune_loader_load_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------------------------------------ */
/* Refinement: exact values step by step                                                       */

typedef struct
{
  DwWhatifEngine *engine;
  DwConfig config;
  guint *indices;
  guint n_indices;
  DwTuneRefineFunc each;
  gpointer each_data;
} DwTuneLoaderRefine;

typedef struct
{
  GTask *task;
  guint index;
  DwWhatifStepResult exact;
} DwTuneLoaderExact;

static void
dw_tune_loader_refine_free (DwTuneLoaderRefine *refine)
{
  dw_whatif_engine_unref (refine->engine);
  g_free (refine->indices);
  g_free (refine);
}

static void
dw_tune_loader_exact_free (gpointer data)
{
  DwTuneLoaderExact *exact = data;

  dw_whatif_step_result_clear (&exact->exact);
  g_object_unref (exact->task);
  g_free (exact);
}

/* on the main thread: one exact step to the caller, unless the job was cancelled meanwhile */
static gboolean
dw_tune_loader_deliver_cb (gpointer data)
{
  DwTuneLoaderExact *exact = data;
  DwTuneLoaderRefine *refine = g_task_get_task_data (exact->task);

  if (!g_cancellable_is_cancelled (g_task_get_cancellable (exact->task)))
    refine->each (exact->index, &exact->exact, refine->each_data);
  return G_SOURCE_REMOVE;
}

static void
dw_tune_loader_refine_worker (GTask *task, gpointer source, gpointer task_data,
                              GCancellable *cancellable)
{
  DwTuneLoaderRefine *refine = task_data;
  GError *error = NULL;

  for (guint position = 0; position < refine->n_indices; position++)
    {
      DwTuneLoaderExact *exact = g_new0 (DwTuneLoaderExact, 1);

      exact->task = g_object_ref (task);
      exact->index = refine->indices[position];
      if (g_cancellable_set_error_if_cancelled (cancellable, &error)
          || !dw_whatif_engine_evaluate_exact_step (refine->engine, &refine->config, exact->index,
                                                    &exact->exact, &error))
        {
          dw_tune_loader_exact_free (exact);
          dw_correction_release_workspace ();
          g_task_return_error (task, error);
          return;
        }
      g_main_context_invoke_full (g_task_get_context (task), G_PRIORITY_DEFAULT,
                                  dw_tune_loader_deliver_cb, exact, dw_tune_loader_exact_free);
    }
  dw_correction_release_workspace ();
  g_task_return_boolean (task, TRUE);
}

void
dw_tune_loader_refine_async (DwWhatifEngine *engine, const DwConfig *config, const guint *indices,
                             guint n_indices, GCancellable *cancellable, DwTuneRefineFunc each,
                             gpointer each_data, GAsyncReadyCallback callback, gpointer user_data)
{
  DwTuneLoaderRefine *refine = g_new0 (DwTuneLoaderRefine, 1);
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  refine->engine = dw_whatif_engine_ref (engine);
  refine->config = *config;
  refine->indices = g_memdup2 (indices, sizeof *indices * MAX (n_indices, 1u));
  refine->n_indices = n_indices;
  refine->each = each;
  refine->each_data = each_data;
  g_task_set_source_tag (task, dw_tune_loader_refine_async);
  g_task_set_task_data (task, refine, (GDestroyNotify)dw_tune_loader_refine_free);
  g_task_set_priority (task, G_PRIORITY_LOW);
  g_task_run_in_thread (task, dw_tune_loader_refine_worker);
}

gboolean
dw_tune_loader_refine_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* ------------------------------------------------------------------------------------------ */
/* The run's logged metrics against a recompute under its own config                           */

typedef struct
{
  char *path;
  gint64 run_id;
} DwTuneLoaderCheck;

static void
dw_tune_loader_check_free (DwTuneLoaderCheck *check)
{
  g_free (check->path);
  g_free (check);
}

static void
dw_tune_loader_check_worker (GTask *task, gpointer source, gpointer task_data,
                             GCancellable *cancellable)
{
  DwTuneLoaderCheck *job = task_data;
  GError *error = NULL;
  DwRunCheck *check = g_new0 (DwRunCheck, 1);
  g_autoptr (DwStore) store = dw_store_open_read_only (job->path, &error);

  if (store == NULL || !dw_run_config_check (store, job->run_id, check, cancellable, &error))
    {
      g_free (check);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, check, g_free);
}

void
dw_tune_loader_check_async (const char *db_path, gint64 run_id, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data)
{
  DwTuneLoaderCheck *job = g_new0 (DwTuneLoaderCheck, 1);
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  job->path = g_strdup (db_path);
  job->run_id = run_id;
  g_task_set_source_tag (task, dw_tune_loader_check_async);
  g_task_set_task_data (task, job, (GDestroyNotify)dw_tune_loader_check_free);
  g_task_set_priority (task, G_PRIORITY_LOW);
  g_task_run_in_thread (task, dw_tune_loader_check_worker);
}

DwRunCheck *
dw_tune_loader_check_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
