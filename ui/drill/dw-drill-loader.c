/* dw-drill-loader.c — the drill-down's reads, off the main thread
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-drill"

#include "config.h"

#include <glib/gi18n.h>
#include <inttypes.h>

#include "dw-batch-reader.h"
#include "dw-drill-loader.h"
#include "dw-store-catastrophes.h"
#include "dw-store-writer.h"
#include "dw-store.h"

/* ------------------------------------------------------------------------------ a step */

static void
dw_drill_step_clear (DwDrillStep *self)
{
  g_free (self->run_name);
  g_clear_pointer (&self->batch, dw_batch_free);
  g_clear_pointer (&self->ranked, g_array_unref);
  g_clear_pointer (&self->tokenizer, dw_tokenizer_free);
  g_free (self->tokenizer_path);
  g_free (self->tokenizer_error);
}

DwDrillStep *
dw_drill_step_ref (DwDrillStep *self)
{
  return g_atomic_rc_box_acquire (self);
}

void
dw_drill_step_unref (DwDrillStep *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify)dw_drill_step_clear);
}

typedef struct
{
  gint64 run_id;
  gint64 step;
  DwSeqStat by;
  gboolean find_tokenizer;
  DwDrillStep *out; /* the worker's result, taken by _finish */
} StepJob;

static void
dw_drill_loader_step_job_free (gpointer data)
{
  StepJob *job = data;

  g_clear_pointer (&job->out, dw_drill_step_unref);
  g_free (job);
}

/* The stored step nearest to @step (the earlier one on a tie). */
static gint64
dw_drill_loader_nearest (GArray *steps, gint64 step)
{
  gint64 best = g_array_index (steps, gint64, 0);

  for (guint i = 1; i < steps->len; i++)
    {
      gint64 candidate = g_array_index (steps, gint64, i);
      if (ABS (candidate - step) < ABS (best - step))
        best = candidate;
    }
  return best;
}

/* tokenizer.json in the run's folder (or beside its first file), if there is one. */
static void
dw_drill_loader_find_tokenizer (DwDrillStep *out, const char *source)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;
  g_autoptr (GError) error = NULL;

  if (source == NULL || *source == '\0')
    return;
  dir = g_file_test (source, G_FILE_TEST_IS_DIR) ? g_strdup (source) : g_path_get_dirname (source);
  path = g_build_filename (dir, "tokenizer.json", NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return;
  out->tokenizer = dw_tokenizer_load (path, &error);
  if (out->tokenizer == NULL)
    out->tokenizer_error = g_strdup (error->message);
  out->tokenizer_path = g_steal_pointer (&path);
}

/* Runs in the store reader's worker, on a read-only connection it lends. */
static gboolean
dw_drill_loader_step_worker (DwStore *store, gpointer data, GCancellable *cancellable,
                             GError **error)
{
  StepJob *job = data;
  g_autoptr (DwRunInfo) info = NULL;
  g_autoptr (GArray) steps = NULL;
  g_autoptr (DwDrillStep) out = g_atomic_rc_box_new0 (DwDrillStep);

  if ((info = dw_store_get_run (store, job->run_id, error)) == NULL
      || (steps = dw_store_list_batch_steps (store, job->run_id, error)) == NULL)
    return FALSE;
  if (steps->len == 0)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND,
                   _ ("The run “%s” has no per-token batches: only its logged metrics are "
                      "stored."),
                   info->name);
      return FALSE;
    }
  out->run_id = job->run_id;
  out->run_name = g_strdup (info->name);
  out->step_asked = job->step;
  out->step = dw_drill_loader_nearest (steps, job->step);
  out->n_batch_steps = steps->len;
  out->by = job->by;
  out->batch = dw_store_load_batch (store, job->run_id, out->step, error);
  if (out->batch == NULL || g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  out->ranked = dw_batch_tokens_rank (out->batch, job->by);
  if (job->find_tokenizer)
    dw_drill_loader_find_tokenizer (out, info->source);
  job->out = g_steal_pointer (&out);
  return TRUE;
}

void
dw_drill_loader_step_async (DwStoreReader *reader, gint64 run_id, gint64 step, DwSeqStat by,
                            gboolean find_tokenizer, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data)
{
  StepJob *job = g_new0 (StepJob, 1);

  job->run_id = run_id;
  job->step = step;
  job->by = by;
  job->find_tokenizer = find_tokenizer;
  dw_store_reader_read_async (reader, dw_drill_loader_step_worker, job,
                              dw_drill_loader_step_job_free, cancellable, callback, user_data);
}

DwDrillStep *
dw_drill_loader_step_finish (DwStoreReader *reader, GAsyncResult *result, GError **error)
{
  StepJob *job = NULL;

  if (!dw_store_reader_read_finish (reader, result, (gpointer *)&job, error))
    return NULL;
  return g_steal_pointer (&job->out);
}

/* ------------------------------------------------------------------------------ ranking */

static void
dw_drill_loader_rank_worker (GTask *task, gpointer source_object, gpointer task_data,
                             GCancellable *cancellable)
{
  DwDrillStep *step = task_data;
  DwSeqStat by = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (task), "dw-by"));

  g_task_return_pointer (task, dw_batch_tokens_rank (step->batch, by),
                         (GDestroyNotify)g_array_unref);
}

void
dw_drill_loader_rank_async (DwDrillStep *step, DwSeqStat by, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, dw_drill_loader_rank_async);
  g_task_set_task_data (task, dw_drill_step_ref (step), (GDestroyNotify)dw_drill_step_unref);
  g_object_set_data (G_OBJECT (task), "dw-by", GINT_TO_POINTER (by));
  g_task_run_in_thread (task, dw_drill_loader_rank_worker);
}

GArray *
dw_drill_loader_rank_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------------------------ the run */

typedef struct
{
  gint64 run_id;
  double threshold;
  guint top;
  DwDrillRunTokens *out; /* the worker's result, taken by _finish */
} RunJob;

void
dw_drill_run_tokens_free (DwDrillRunTokens *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->top, g_ptr_array_unref);
  g_free (self);
}

static void
dw_drill_loader_run_job_free (gpointer data)
{
  RunJob *job = data;

  g_clear_pointer (&job->out, dw_drill_run_tokens_free);
  g_free (job);
}

/* Runs in the store reader's worker: every batch of the run is read. */
static gboolean
dw_drill_loader_run_worker (DwStore *store, gpointer data, GCancellable *cancellable,
                            GError **error)
{
  RunJob *job = data;
  g_autoptr (DwCatastrophes) catastrophes = NULL;
  g_autoptr (DwDrillRunTokens) out = g_new0 (DwDrillRunTokens, 1);

  catastrophes = dw_store_catastrophes_collect (store, job->run_id, job->threshold,
                                                &out->n_with_ids, cancellable, error);
  if (catastrophes == NULL)
    return FALSE;
  out->threshold = job->threshold;
  out->total = dw_batch_tokens_catastrophes_get_total (catastrophes);
  out->top = dw_batch_tokens_catastrophes_top (catastrophes, job->top);
  job->out = g_steal_pointer (&out);
  return TRUE;
}

void
dw_drill_loader_run_async (DwStoreReader *reader, gint64 run_id, double threshold, guint top,
                           GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data)
{
  RunJob *job = g_new0 (RunJob, 1);

  job->run_id = run_id;
  job->threshold = threshold;
  job->top = top;
  dw_store_reader_read_async (reader, dw_drill_loader_run_worker, job, dw_drill_loader_run_job_free,
                              cancellable, callback, user_data);
}

DwDrillRunTokens *
dw_drill_loader_run_finish (DwStoreReader *reader, GAsyncResult *result, GError **error)
{
  RunJob *job = NULL;

  if (!dw_store_reader_read_finish (reader, result, (gpointer *)&job, error))
    return NULL;
  return g_steal_pointer (&job->out);
}

/* ------------------------------------------------------------------------------ tokenizer */

static void
dw_drill_loader_tokenizer_worker (GTask *task, gpointer source_object, gpointer task_data,
                                  GCancellable *cancellable)
{
  GError *error = NULL;
  DwTokenizer *tokenizer = dw_tokenizer_load (task_data, &error);

  if (tokenizer == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, tokenizer, (GDestroyNotify)dw_tokenizer_free);
}

void
dw_drill_loader_tokenizer_async (const char *path, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, dw_drill_loader_tokenizer_async);
  g_task_set_task_data (task, g_strdup (path), g_free);
  g_task_run_in_thread (task, dw_drill_loader_tokenizer_worker);
}

DwTokenizer *
dw_drill_loader_tokenizer_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}
