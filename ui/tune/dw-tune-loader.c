/* dw-tune-loader.c — the Tune page's reads: the precompute, the refinement, the config check
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every job is a read of the page's store reader (dw-store-reader.h): it runs in the reader's
 * worker on a read-only connection lent for the call. The engine's batch loader (the exact
 * passes) reads through the connection lent to the thread it is called on.
 */
#define G_LOG_DOMAIN "dw-tune-loader"

#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#include <glib/gi18n.h>

#include "dw-tune-loader.h"

#include "dw-batch-reader.h"
#include "dw-whatif-summary.h"

/* ------------------------------------------------------------------------------------------ */
/* The batch loader the engine calls: through the connection lent to this thread's read        */

typedef struct
{
  DwStore *store;
  gboolean source_gone; /* a batch's referenced file was gone or changed */
} DwTuneLoaderLent;

static GPrivate dw_tune_loader_lent;

static DwBatch *
dw_tune_loader_load_batch (gint64 step, gpointer user_data, GError **error)
{
  const gint64 *run_id = user_data;
  DwTuneLoaderLent *lent = g_private_get (&dw_tune_loader_lent);
  DwBatch *batch;

  if (lent == NULL)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_LOAD,
                   "step %" G_GINT64_FORMAT ": batches are read only inside a store read", step);
      return NULL;
    }
  batch = dw_store_load_batch (lent->store, *run_id, step, error);
  if (batch == NULL && error != NULL
      && g_error_matches (*error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED))
    lent->source_gone = TRUE;
  return batch;
}

/* ------------------------------------------------------------------------------------------ */
/* Precompute                                                                                  */

typedef struct
{
  gint64 run_id;
  guint64 compact_tokens;
  DwWhatifEngine *engine;
  guint n_steps, n_raw, n_left_out; /* steps; built from raw tokens; left out */
  char *left_out_reason;
} DwTuneLoaderLoad;

static void
dw_tune_loader_load_free (gpointer data)
{
  DwTuneLoaderLoad *load = data;

  g_clear_pointer (&load->engine, dw_whatif_engine_unref);
  g_free (load->left_out_reason);
  g_free (load);
}

/* a compact step from the raw batch: for a batch stored before schema 7 without its statistics
 * (the summary, when there is one, replaces the batch's own sketch) */
static DwWhatifStep *
dw_tune_loader_raw_compact_step (DwStore *store, gint64 run_id, gint64 step,
                                 const DwTokenSummary *summary, GError **error)
{
  g_autoptr (DwBatch) batch = dw_store_load_batch (store, run_id, step, error);
  g_autoptr (DwWhatifStep) built = NULL;

  if (batch == NULL || (built = dw_whatif_step_new_compact (batch, step, error)) == NULL)
    return NULL;
  if (summary != NULL && dw_whatif_step_is_compact (built)
      && !dw_whatif_step_set_token_summary (built, summary, error))
    return NULL;
  return g_steal_pointer (&built);
}

/* The step from the store's statistics and token summary, without reading a token; from the raw
 * batch where the statistics are missing (a store migrated from schema 6, @load->n_raw). */
static DwWhatifStep *
dw_tune_loader_stored_step (DwStore *store, DwTuneLoaderLoad *load, gint64 step, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (DwTokenSummary) summary
    = dw_store_get_token_summary (store, load->run_id, step, &local);
  g_autoptr (DwStepStats) stats = NULL;

  if (summary == NULL && !g_error_matches (local, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  g_clear_error (&local);
  if (summary != NULL
      && (stats = dw_store_get_step_stats (store, load->run_id, step, &local)) != NULL)
    return dw_whatif_step_new_from_stats (stats, summary, error);
  if (local != NULL && !g_error_matches (local, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  load->n_raw++;
  return dw_tune_loader_raw_compact_step (store, load->run_id, step, summary, error);
}

/* One step: a full step from the raw batch in a small run, else (or when the raw batch's file is
 * gone) from the stored statistics. NULL with @error when neither can be built. */
static DwWhatifStep *
dw_tune_loader_build_step (DwStore *store, DwTuneLoaderLoad *load, gboolean compact, gint64 step,
                           GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (DwBatch) batch = NULL;

  if (compact)
    return dw_tune_loader_stored_step (store, load, step, error);
  batch = dw_store_load_batch (store, load->run_id, step, &local);
  if (batch != NULL)
    return dw_whatif_step_new (batch, step, error);
  if (!g_error_matches (local, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  return dw_tune_loader_stored_step (store, load, step, error);
}

/* Steps are read in chunks of this many on the reader's thread and built from what was read in
 * parallel (every processor): reading a step's statistics and summary is sequential SQLite, its
 * sketch and row table are arithmetic. */
#define DW_TUNE_LOADER_CHUNK 32

/* one step of a chunk: what the store gave, then the step built from it */
typedef struct
{
  gint64 step;
  DwStepStats *stats; /* with @summary: built in the pool */
  DwTokenSummary *summary;
  DwWhatifStep *built;
  GError *error;
} DwTuneLoaderSlot;

typedef struct
{
  GMutex lock;
  GCond done;
  guint pending; /* slots pushed to the pool and not built yet */
} DwTuneLoaderChunk;

/* in a pool thread: the step from its stored statistics and summary */
static void
dw_tune_loader_build_slot_cb (gpointer data, gpointer user_data)
{
  DwTuneLoaderSlot *slot = data;
  DwTuneLoaderChunk *chunk = user_data;

  slot->built = dw_whatif_step_new_from_stats (slot->stats, slot->summary, &slot->error);
  g_mutex_lock (&chunk->lock);
  if (--chunk->pending == 0)
    g_cond_signal (&chunk->done);
  g_mutex_unlock (&chunk->lock);
}

/* on the reader's thread: a compact step's statistics and summary for the pool, or (a full step,
 * missing statistics, a raw fallback) the step built at once */
static void
dw_tune_loader_read_slot (DwStore *store, DwTuneLoaderLoad *load, gboolean compact,
                          DwTuneLoaderSlot *slot)
{
  if (compact)
    {
      slot->summary = dw_store_get_token_summary (store, load->run_id, slot->step, NULL);
      slot->stats = slot->summary != NULL
                      ? dw_store_get_step_stats (store, load->run_id, slot->step, NULL)
                      : NULL;
      if (slot->stats != NULL)
        return;
      g_clear_pointer (&slot->summary, dw_token_summary_free);
    }
  slot->built = dw_tune_loader_build_step (store, load, compact, slot->step, &slot->error);
}

/* the built steps of a chunk into the engine, in order; FALSE with @error on a failure that is
 * not a step left out (its raw file gone and no statistics) */
static gboolean
dw_tune_loader_add_slots (DwTuneLoaderLoad *load, DwTuneLoaderSlot *slots, guint n_slots,
                          GError **error)
{
  for (guint index = 0; index < n_slots; index++)
    {
      DwTuneLoaderSlot *slot = &slots[index];

      if (slot->built != NULL)
        {
          dw_whatif_engine_add_step (load->engine, g_steal_pointer (&slot->built));
          continue;
        }
      if (!g_error_matches (slot->error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED))
        {
          g_propagate_error (error, g_steal_pointer (&slot->error));
          return FALSE;
        }
      /* neither statistics nor raw tokens: the step is left out, and the page says so */
      if (load->n_left_out++ == 0)
        load->left_out_reason = g_strdup (slot->error->message);
    }
  return TRUE;
}

static void
dw_tune_loader_clear_slots (DwTuneLoaderSlot *slots, guint n_slots)
{
  for (guint index = 0; index < n_slots; index++)
    {
      g_clear_pointer (&slots[index].stats, dw_step_stats_free);
      g_clear_pointer (&slots[index].summary, dw_token_summary_free);
      g_clear_pointer (&slots[index].built, dw_whatif_step_free);
      g_clear_error (&slots[index].error);
    }
}

/* Reads and builds the steps [@start, @start + @n_slots) of @steps. */
static gboolean
dw_tune_loader_load_chunk (DwStore *store, DwTuneLoaderLoad *load, gboolean compact,
                           const GArray *steps, guint start, guint n_slots, GThreadPool *pool,
                           DwTuneLoaderChunk *chunk, GCancellable *cancellable, GError **error)
{
  DwTuneLoaderSlot slots[DW_TUNE_LOADER_CHUNK];
  gboolean ok = TRUE;

  memset (slots, 0, sizeof slots);
  for (guint index = 0; index < n_slots; index++)
    {
      if ((ok = !g_cancellable_set_error_if_cancelled (cancellable, error)) == FALSE)
        break;
      slots[index].step = g_array_index (steps, gint64, start + index);
      dw_tune_loader_read_slot (store, load, compact, &slots[index]);
      if (slots[index].stats == NULL)
        continue;
      g_mutex_lock (&chunk->lock);
      chunk->pending++;
      g_mutex_unlock (&chunk->lock);
      g_thread_pool_push (pool, &slots[index], NULL);
    }
  g_mutex_lock (&chunk->lock);
  while (chunk->pending > 0)
    g_cond_wait (&chunk->done, &chunk->lock);
  g_mutex_unlock (&chunk->lock);
  ok = ok && dw_tune_loader_add_slots (load, slots, n_slots, error);
  dw_tune_loader_clear_slots (slots, n_slots);
  return ok;
}

static gboolean
dw_tune_loader_load_read (DwStore *store, gpointer data, GCancellable *cancellable, GError **error)
{
  DwTuneLoaderLoad *load = data;
  g_autoptr (GArray) steps = dw_store_list_batch_steps (store, load->run_id, error);
  DwTuneLoaderChunk chunk = { 0 };
  GThreadPool *pool;
  gint64 n_tokens;
  gboolean compact, ok = TRUE;

  if (steps == NULL || (n_tokens = dw_store_count_batch_tokens (store, load->run_id, error)) < 0)
    return FALSE;
  /* a large run is built from the stored statistics, not its tokens (docs/TUNE.md) */
  compact = (guint64)n_tokens > load->compact_tokens;
  load->engine = dw_whatif_engine_new (0);
  dw_whatif_engine_set_interactive (load->engine, TRUE);
  dw_whatif_engine_set_loader (load->engine, dw_tune_loader_load_batch,
                               g_memdup2 (&load->run_id, sizeof load->run_id), g_free);
  load->n_steps = steps->len;
  g_mutex_init (&chunk.lock);
  g_cond_init (&chunk.done);
  pool = g_thread_pool_new (dw_tune_loader_build_slot_cb, &chunk,
                            (gint)MAX (1u, g_get_num_processors ()), FALSE, NULL);
  for (guint start = 0; ok && start < steps->len; start += DW_TUNE_LOADER_CHUNK)
    ok = dw_tune_loader_load_chunk (store, load, compact, steps, start,
                                    MIN (DW_TUNE_LOADER_CHUNK, steps->len - start), pool, &chunk,
                                    cancellable, error);
  g_thread_pool_free (pool, FALSE, TRUE);
  g_mutex_clear (&chunk.lock);
  g_cond_clear (&chunk.done);
  return ok;
}

void
dw_tune_loader_load_async (DwStoreReader *reader, gint64 run_id, guint64 compact_tokens,
                           GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data)
{
  DwTuneLoaderLoad *load = g_new0 (DwTuneLoaderLoad, 1);

  load->run_id = run_id;
  load->compact_tokens = compact_tokens;
  dw_store_reader_read_async (reader, dw_tune_loader_load_read, load, dw_tune_loader_load_free,
                              cancellable, callback, user_data);
}

DwWhatifEngine *
dw_tune_loader_load_finish (DwStoreReader *reader, GAsyncResult *result, char **note,
                            GError **error)
{
  DwTuneLoaderLoad *load = NULL;

  if (note != NULL)
    *note = NULL;
  if (!dw_store_reader_read_finish (reader, result, (gpointer *)&load, error))
    return NULL;
  if (note != NULL && load->n_left_out > 0)
    /* TRANSLATORS: %u of %u steps; %s says why (a file gone or changed) */
    *note = g_strdup_printf (_ ("%u of %u steps are left out: they have no stored statistics "
                                "and their raw tokens cannot be read (%s)"),
                             load->n_left_out, load->n_steps, load->left_out_reason);
  return g_steal_pointer (&load->engine);
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
  GMainContext *context; /* where @each runs */
  GCancellable *cancellable;
  guint n_gone; /* steps left approximate: their raw file is gone or changed */
  char *gone_reason;
} DwTuneLoaderRefine;

typedef struct
{
  DwTuneRefineFunc each;
  gpointer each_data;
  GCancellable *cancellable;
  guint index;
  DwWhatifStepResult exact;
} DwTuneLoaderExact;

static void
dw_tune_loader_refine_free (gpointer data)
{
  DwTuneLoaderRefine *refine = data;

  dw_whatif_engine_unref (refine->engine);
  g_main_context_unref (refine->context);
  g_clear_object (&refine->cancellable);
  g_free (refine->indices);
  g_free (refine->gone_reason);
  g_free (refine);
}

static void
dw_tune_loader_exact_free (gpointer data)
{
  DwTuneLoaderExact *exact = data;

  dw_whatif_step_result_clear (&exact->exact);
  g_clear_object (&exact->cancellable);
  g_free (exact);
}

/* on the main thread: one exact step to the caller, unless the job was cancelled meanwhile (it may
 * run after the read is over: @each_data, which the caller keeps alive, is all it reads) */
static gboolean
dw_tune_loader_deliver_cb (gpointer data)
{
  DwTuneLoaderExact *exact = data;

  if (!g_cancellable_is_cancelled (exact->cancellable))
    exact->each (exact->index, &exact->exact, exact->each_data);
  return G_SOURCE_REMOVE;
}

/* One step made exact; a step whose raw file is gone or changed keeps its approximate values
 * from the summaries (counted), any other failure stops the refinement. */
static gboolean
dw_tune_loader_refine_step (DwTuneLoaderRefine *refine, DwTuneLoaderLent *lent, guint position,
                            GError **error)
{
  g_autoptr (GError) local = NULL;
  DwTuneLoaderExact *exact = g_new0 (DwTuneLoaderExact, 1);

  exact->each = refine->each;
  exact->each_data = refine->each_data;
  exact->cancellable = refine->cancellable ? g_object_ref (refine->cancellable) : NULL;
  exact->index = refine->indices[position];
  lent->source_gone = FALSE;
  if (!dw_whatif_engine_evaluate_exact_step (refine->engine, &refine->config, exact->index,
                                             &exact->exact, &local))
    {
      dw_tune_loader_exact_free (exact);
      if (!lent->source_gone)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      if (refine->n_gone++ == 0)
        refine->gone_reason = g_strdup (local->message);
      return TRUE;
    }
  g_main_context_invoke_full (refine->context, G_PRIORITY_DEFAULT, dw_tune_loader_deliver_cb, exact,
                              dw_tune_loader_exact_free);
  return TRUE;
}

/* The refinement runs where no other thread wants the processor (Linux's SCHED_IDLE for this
 * thread while it refines; the policy it had is returned, -1 when unchanged): a slider move
 * cancels it, but the step it is in the middle of took one of the evaluation's processors
 * until it ended (1-3 ms of a move after a rest, docs/BENCHMARKS.md). */
static int
dw_tune_loader_background_begin (struct sched_param *saved)
{
#ifdef SCHED_IDLE
  const struct sched_param idle = { 0 };
  int policy;

  if (pthread_getschedparam (pthread_self (), &policy, saved) != 0
      || pthread_setschedparam (pthread_self (), SCHED_IDLE, &idle) != 0)
    return -1;
  return policy;
#else
  return -1;
#endif
}

/* back to the policy before (the thread is a pool thread that runs other tasks next) */
static void
dw_tune_loader_background_end (int policy, const struct sched_param *saved)
{
  if (policy >= 0)
    pthread_setschedparam (pthread_self (), policy, saved);
}

static gboolean
dw_tune_loader_refine_read (DwStore *store, gpointer data, GCancellable *cancellable,
                            GError **error)
{
  DwTuneLoaderRefine *refine = data;
  DwTuneLoaderLent lent = { store, FALSE };
  gboolean ok = TRUE;
  struct sched_param saved;
  const int policy = dw_tune_loader_background_begin (&saved);

  g_private_set (&dw_tune_loader_lent, &lent);
  for (guint position = 0; ok && position < refine->n_indices; position++)
    ok = !g_cancellable_set_error_if_cancelled (cancellable, error)
         && dw_tune_loader_refine_step (refine, &lent, position, error);
  g_private_set (&dw_tune_loader_lent, NULL);
  dw_tune_loader_background_end (policy, &saved);
  if (ok && refine->n_gone > 0)
    {
      /* TRANSLATORS: %u of %u steps; %s names the file and what happened to it */
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_SOURCE_CHANGED,
                   _ ("%u of %u steps keep the values of the stored summaries, their raw tokens "
                      "being gone or changed: %s"),
                   refine->n_gone, refine->n_indices, refine->gone_reason);
      return FALSE;
    }
  return ok;
}

void
dw_tune_loader_refine_async (DwStoreReader *reader, DwWhatifEngine *engine, const DwConfig *config,
                             const guint *indices, guint n_indices, GCancellable *cancellable,
                             DwTuneRefineFunc each, gpointer each_data,
                             GAsyncReadyCallback callback, gpointer user_data)
{
  DwTuneLoaderRefine *refine = g_new0 (DwTuneLoaderRefine, 1);

  refine->engine = dw_whatif_engine_ref (engine);
  refine->config = *config;
  refine->indices = g_memdup2 (indices, sizeof *indices * MAX (n_indices, 1u));
  refine->n_indices = n_indices;
  refine->each = each;
  refine->each_data = each_data;
  refine->context = g_main_context_ref_thread_default ();
  refine->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  dw_store_reader_read_async (reader, dw_tune_loader_refine_read, refine,
                              dw_tune_loader_refine_free, cancellable, callback, user_data);
}

gboolean
dw_tune_loader_refine_finish (DwStoreReader *reader, GAsyncResult *result, GError **error)
{
  return dw_store_reader_read_finish (reader, result, NULL, error);
}

/* ------------------------------------------------------------------------------------------ */
/* The run's logged metrics against a recompute under its own config                           */

typedef struct
{
  gint64 run_id;
  DwRunCheck check;
} DwTuneLoaderCheck;

/* Recomputes every step from its raw batch (seconds to minutes for a large run): in the
 * background, as the refinement, with the recompute's threads, which inherit the policy; at
 * normal priority it took a processor from the first slider moves after the page opened. */
static gboolean
dw_tune_loader_check_read (DwStore *store, gpointer data, GCancellable *cancellable, GError **error)
{
  DwTuneLoaderCheck *job = data;
  struct sched_param saved;
  const int policy = dw_tune_loader_background_begin (&saved);
  const gboolean ok = dw_run_config_check (store, job->run_id, &job->check, cancellable, error);

  dw_tune_loader_background_end (policy, &saved);
  return ok;
}

void
dw_tune_loader_check_async (DwStoreReader *reader, gint64 run_id, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data)
{
  DwTuneLoaderCheck *job = g_new0 (DwTuneLoaderCheck, 1);

  job->run_id = run_id;
  dw_store_reader_read_async (reader, dw_tune_loader_check_read, job, g_free, cancellable, callback,
                              user_data);
}

DwRunCheck *
dw_tune_loader_check_finish (DwStoreReader *reader, GAsyncResult *result, GError **error)
{
  DwTuneLoaderCheck *job = NULL;

  if (!dw_store_reader_read_finish (reader, result, (gpointer *)&job, error))
    return NULL;
  return g_memdup2 (&job->check, sizeof job->check);
}
