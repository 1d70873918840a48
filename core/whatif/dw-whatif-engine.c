/* dw-whatif-engine.c — the what-if engine over a run: loading threads, parallel evaluation, the
 * exact pass
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Threads: dw_whatif_engine_load_steps () runs *_worker threads that load and precompute steps;
 * dw_whatif_engine_evaluate () splits the steps over a GThreadPool (the caller waits for it);
 * the exact pass runs in a GTask thread and reloads batches through the loader.
 */
#include "config.h"

#include "dw-whatif-private.h"

#include <stdlib.h>
#include <string.h>

struct _DwWhatifEngine
{
  GPtrArray *steps; /* DwWhatifStep* */
  guint n_threads;
  GThreadPool *pool;
  DwWhatifBatchLoader loader;
  gpointer loader_data;
  GDestroyNotify loader_destroy;
  gboolean compact;
  /* DwWhatifMemo per step: the metric groups of its previous evaluation, for the next one
   * (a slider moves one group's threshold); used by one evaluation at a time (@memo_lock, taken
   * with a trylock: a concurrent evaluation, the exact pass's, goes without) */
  GArray *memos;
  DwWhatifMemoKeys memo_keys; /* the plan fields of the memos' groups */
  GMutex memo_lock;
  /* dw_whatif_engine_set_row_labels: a label per row, step @index's rows from
   * label_start[index]; for the first n_labelled steps */
  guint8 *labels;
  gsize *label_start;
  guint32 *label_rows; /* [n_labelled][DW_WHATIF_MAX_LABELS]: each step's rows of each label */
  guint n_labelled;
  guint64 labels_generation; /* counts the labels set (DwWhatifMemo.labels_generation) */
  DwWhatifSpare spare;
};

/* an evaluation's per-label counts (DwWhatifRunResult.label_rows, label_rejected) */
typedef struct
{
  guint64 rows[DW_WHATIF_MAX_LABELS], rejected[DW_WHATIF_MAX_LABELS];
} DwWhatifLabelCounts;

/* one share of an evaluation: a pool thread (or the caller) takes steps until none is left */
typedef struct
{
  DwWhatifEngine *engine;
  const DwPlan *plan;
  DwWhatifRunResult *result;
  gint *next; /* steps are taken a chunk at a time: later steps cost more, and a thread that
               * the system holds back must not hold back half of the run */
  GMutex *lock;
  GCond *cond;
  guint *remaining;
  DwWhatifMemo *memos; /* [n_steps] or NULL */
  DwWhatifArena arena; /* the share's results' arrays */
  DwWhatifLabelCounts counts;
} DwWhatifShare;

/* adds the rows of step @index with their outcomes @rejected to @counts. The rows of each label
 * are counted once, when the labels are set; of the outcomes, 8 rows are read at a time, and
 * only those with a rejected row among them are counted row by row (an RS option rejects as a
 * rule a few rows of a step). */
static void
dw_whatif_engine_count_labels (DwWhatifEngine *self, guint index, const guint8 *rejected,
                               DwWhatifLabelCounts *counts)
{
  const guint8 *labels = self->labels + self->label_start[index];
  const guint32 *label_rows = self->label_rows + (gsize)index * DW_WHATIF_MAX_LABELS;
  const gsize n_rows = self->label_start[index + 1] - self->label_start[index];
  /* a row without a label counts in the last slot, which is dropped */
  guint32 rejected_rows[DW_WHATIF_MAX_LABELS + 1] = { 0 };
  for (gsize row = 0; row < n_rows; row += 8)
    {
      const gsize end = MIN (row + 8, n_rows);
      guint64 word = 0;
      memcpy (&word, rejected + row, end - row);
      if (word == 0)
        continue;
      for (gsize at = row; at < end; at++)
        rejected_rows[MIN (labels[at], DW_WHATIF_MAX_LABELS)] += rejected[at] != 0;
    }
  for (guint label = 0; label < DW_WHATIF_MAX_LABELS; label++)
    {
      counts->rows[label] += label_rows[label];
      counts->rejected[label] += rejected_rows[label];
    }
}

/* dw_whatif_engine_count_labels of a step evaluated under @plan with @memo (nullable). From
 * verl 0.6.1 on (the rollout_corr helper), the RS group alone rejects rows (verl ≤ 0.7.0: its
 * RS ratio and veto): under the id of its plan fields, a step that
 * did not fail rejects the rows of its last such evaluation, whose counts its memo keeps. A
 * slider of the IS group then reads 128 bytes of a step instead of its rows' labels. */
static void
dw_whatif_engine_count_step_labels (DwWhatifEngine *self, const DwPlan *plan, guint index,
                                    const guint8 *rejected, DwWhatifMemo *memo,
                                    const DwWhatifStepResult *out, DwWhatifLabelCounts *counts)
{
  const guint64 rs_id = self->memo_keys.id[DW_WHATIF_GROUP_RS];
  if (memo == NULL || rs_id == 0 || !dw_whatif_eval_in_groups (plan) || out->failed)
    {
      dw_whatif_engine_count_labels (self, index, rejected, counts);
      return;
    }
  if (memo->labels_rs_id != rs_id || memo->labels_generation != self->labels_generation)
    {
      DwWhatifLabelCounts step = { { 0 } };
      dw_whatif_engine_count_labels (self, index, rejected, &step);
      for (guint label = 0; label < DW_WHATIF_MAX_LABELS; label++)
        {
          memo->label_rows[label] = (guint32)step.rows[label];
          memo->label_rejected[label] = (guint32)step.rejected[label];
        }
      memo->labels_rs_id = rs_id;
      memo->labels_generation = self->labels_generation;
    }
  for (guint label = 0; label < DW_WHATIF_MAX_LABELS; label++)
    {
      counts->rows[label] += memo->label_rows[label];
      counts->rejected[label] += memo->label_rejected[label];
    }
}

static void
dw_whatif_engine_evaluate_range (DwWhatifEngine *self, const DwPlan *plan,
                                 DwWhatifRunResult *result, guint index, DwWhatifMemo *memos,
                                 DwWhatifLabelCounts *counts)
{
  const DwWhatifStep *step = g_ptr_array_index (self->steps, index);
  DwWhatifMemo *memo = memos ? &memos[index] : NULL;
  const DwWhatifMemoKeys *keys = &self->memo_keys;
  if (step->empty)
    {
      dw_whatif_eval_empty_error (&result->results[index]);
      return;
    }
  if (!result->row_rejected)
    {
      dw_whatif_eval_step (step, plan, &result->results[index], NULL, memo, keys);
      return;
    }
  /* as dw_whatif_step_row_outcomes (): known unless pending; the pointer set before the
   * evaluation is the step's place in row_rejected_block */
  guint8 *rejected = result->row_rejected[index];
  dw_whatif_eval_step (step, plan, &result->results[index], rejected, memo, keys);
  if (result->results[index].pending)
    result->row_rejected[index] = NULL;
  else if (result->has_labels)
    dw_whatif_engine_count_step_labels (self, plan, index, rejected, memo, &result->results[index],
                                        counts);
}

/* steps a thread takes at a time, fetched ahead together (dw_whatif_engine_evaluate_chunk) */
#define DW_WHATIF_ENGINE_CHUNK 8

/* Evaluates the steps [@first, @end). A slider move reads every step's statistics once, from
 * memory: each step's reads wait on misses that depend on one another (step → its columns and
 * sketch → the sketch's arrays). Fetching the chunk's steps stage by stage first lets those
 * misses overlap across the chunk's steps instead of following one another. */
static void
dw_whatif_engine_evaluate_chunk (DwWhatifEngine *self, const DwPlan *plan,
                                 DwWhatifRunResult *result, guint first, guint end,
                                 DwWhatifMemo *memos, DwWhatifLabelCounts *counts)
{
  for (guint index = first; index < end; index++)
    {
      __builtin_prefetch (g_ptr_array_index (self->steps, index));
      if (memos != NULL)
        __builtin_prefetch (&memos[index]);
    }
  for (int stage = 0; stage < 2; stage++)
    for (guint index = first; index < end; index++)
      dw_whatif_eval_prefetch (g_ptr_array_index (self->steps, index), plan,
                               memos != NULL ? &memos[index] : NULL, &self->memo_keys, stage);
  for (guint index = first; index < end; index++)
    dw_whatif_engine_evaluate_range (self, plan, result, index, memos, counts);
}

static void
dw_whatif_engine_share_worker (gpointer data, gpointer user_data)
{
  DwWhatifShare *share = data;
  (void)user_data;
  dw_whatif_list_set_arena (&share->arena);
  for (;;)
    {
      guint first = (guint)g_atomic_int_add (share->next, DW_WHATIF_ENGINE_CHUNK);
      if (first >= share->result->n_steps)
        break;
      dw_whatif_engine_evaluate_chunk (share->engine, share->plan, share->result, first,
                                       MIN (first + DW_WHATIF_ENGINE_CHUNK, share->result->n_steps),
                                       share->memos, &share->counts);
    }
  dw_whatif_list_set_arena (NULL);
  g_mutex_lock (share->lock);
  if (--*share->remaining == 0)
    g_cond_signal (share->cond);
  g_mutex_unlock (share->lock);
}

DwWhatifEngine *
dw_whatif_engine_new (guint n_threads)
{
  DwWhatifEngine *self = g_atomic_rc_box_new0 (DwWhatifEngine);
  self->steps = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_whatif_step_free);
  self->memos = g_array_new (FALSE, TRUE, sizeof (DwWhatifMemo));
  g_array_set_clear_func (self->memos, (GDestroyNotify)dw_whatif_memo_clear);
  g_mutex_init (&self->memo_lock);
  dw_whatif_spare_init (&self->spare);
  self->n_threads = n_threads ? n_threads : MAX (1, g_get_num_processors ());
  return self;
}

DwWhatifEngine *
dw_whatif_engine_ref (DwWhatifEngine *self)
{
  return g_atomic_rc_box_acquire (self);
}

static void
dw_whatif_engine_clear (DwWhatifEngine *self)
{
  if (self->pool)
    g_thread_pool_free (self->pool, TRUE, TRUE);
  g_ptr_array_unref (self->steps);
  g_array_unref (self->memos);
  g_mutex_clear (&self->memo_lock);
  dw_whatif_spare_clear (&self->spare);
  g_free (self->labels);
  g_free (self->label_start);
  g_free (self->label_rows);
  if (self->loader_destroy)
    self->loader_destroy (self->loader_data);
}

void
dw_whatif_engine_unref (DwWhatifEngine *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify)dw_whatif_engine_clear);
}

void
dw_whatif_engine_set_loader (DwWhatifEngine *self, DwWhatifBatchLoader loader, gpointer user_data,
                             GDestroyNotify destroy)
{
  if (self->loader_destroy)
    self->loader_destroy (self->loader_data);
  self->loader = loader;
  self->loader_data = user_data;
  self->loader_destroy = destroy;
}

void
dw_whatif_engine_set_compact (DwWhatifEngine *self, gboolean compact)
{
  self->compact = compact;
}

void
dw_whatif_engine_set_interactive (DwWhatifEngine *self, gboolean interactive)
{
  dw_whatif_spare_set_keep (&self->spare, interactive);
}

void
dw_whatif_engine_set_row_labels (DwWhatifEngine *self, const guint8 *labels, gsize n_rows)
{
  gsize total = 0;
  g_clear_pointer (&self->labels, g_free);
  g_clear_pointer (&self->label_start, g_free);
  g_clear_pointer (&self->label_rows, g_free);
  self->n_labelled = 0;
  if (labels == NULL)
    return;
  self->label_start = g_new (gsize, self->steps->len + 1);
  for (guint index = 0; index < self->steps->len; index++)
    {
      self->label_start[index] = total;
      total += dw_whatif_step_get_n_rows (g_ptr_array_index (self->steps, index));
    }
  self->label_start[self->steps->len] = total;
  g_return_if_fail (n_rows == total);
  for (gsize row = 0; row < n_rows; row++)
    g_return_if_fail (labels[row] < DW_WHATIF_MAX_LABELS || labels[row] == DW_WHATIF_NO_LABEL);
  self->labels = g_memdup2 (labels, MAX (n_rows, 1));
  self->label_rows = g_new0 (guint32, (gsize)MAX (self->steps->len, 1u) * DW_WHATIF_MAX_LABELS);
  for (guint index = 0; index < self->steps->len; index++)
    for (gsize row = self->label_start[index]; row < self->label_start[index + 1]; row++)
      if (labels[row] < DW_WHATIF_MAX_LABELS)
        self->label_rows[(gsize)index * DW_WHATIF_MAX_LABELS + labels[row]]++;
  self->n_labelled = self->steps->len;
  self->labels_generation++;
}

void
dw_whatif_engine_add_step (DwWhatifEngine *self, DwWhatifStep *step)
{
  g_ptr_array_add (self->steps, step);
}

typedef struct
{
  DwWhatifEngine *engine;
  const gint64 *steps;
  gsize n_steps;
  DwWhatifStep **out;
  gint next;
  GMutex lock;
  GError *error;
} DwWhatifLoadJob;

static gpointer
dw_whatif_engine_load_worker (gpointer data)
{
  DwWhatifLoadJob *job = data;
  for (;;)
    {
      gint index = g_atomic_int_add (&job->next, 1);
      if ((gsize)index >= job->n_steps)
        break;
      GError *error = NULL;
      DwBatch *batch = job->engine->loader (job->steps[index], job->engine->loader_data, &error);
      DwWhatifStep *step = NULL;
      if (batch && job->engine->compact)
        step = dw_whatif_step_new_compact (batch, job->steps[index], &error);
      else if (batch)
        step = dw_whatif_step_new (batch, job->steps[index], &error);
      if (batch)
        dw_batch_free (batch);
      if (!step)
        {
          g_mutex_lock (&job->lock);
          if (!job->error)
            job->error = error;
          else
            g_clear_error (&error);
          g_mutex_unlock (&job->lock);
          continue;
        }
      job->out[index] = step;
    }
  return NULL;
}

gboolean
dw_whatif_engine_load_steps (DwWhatifEngine *self, const gint64 *steps, gsize n_steps,
                             GError **error)
{
  if (!self->loader)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_LOAD, "no batch loader set");
      return FALSE;
    }
  DwWhatifLoadJob job = { .engine = self, .steps = steps, .n_steps = n_steps };
  job.out = g_new0 (DwWhatifStep *, n_steps ? n_steps : 1);
  g_mutex_init (&job.lock);
  guint n_threads = MIN (self->n_threads, MAX (1, (guint)n_steps));
  GThread **threads = g_new (GThread *, n_threads);
  for (guint thread = 0; thread < n_threads; thread++)
    threads[thread] = g_thread_new ("dw-whatif-load", dw_whatif_engine_load_worker, &job);
  for (guint thread = 0; thread < n_threads; thread++)
    g_thread_join (threads[thread]);
  g_free (threads);
  g_mutex_clear (&job.lock);
  if (job.error)
    {
      for (gsize index = 0; index < n_steps; index++)
        dw_whatif_step_free (job.out[index]);
      g_free (job.out);
      g_propagate_error (error, job.error);
      return FALSE;
    }
  for (gsize index = 0; index < n_steps; index++)
    g_ptr_array_add (self->steps, job.out[index]);
  g_free (job.out);
  return TRUE;
}

guint
dw_whatif_engine_get_n_steps (DwWhatifEngine *self)
{
  return self->steps->len;
}

const DwWhatifStep *
dw_whatif_engine_get_step (DwWhatifEngine *self, guint index)
{
  g_return_val_if_fail (index < self->steps->len, NULL);
  return g_ptr_array_index (self->steps, index);
}

gsize
dw_whatif_engine_get_memory (DwWhatifEngine *self)
{
  gsize bytes = 0;
  for (guint index = 0; index < self->steps->len; index++)
    bytes += dw_whatif_step_get_memory (g_ptr_array_index (self->steps, index));
  return bytes;
}

void
dw_whatif_run_result_free (DwWhatifRunResult *res)
{
  if (!res)
    return;
  for (guint index = 0; index < res->n_steps; index++)
    dw_whatif_step_result_clear (&res->results[index]);
  if (res->engine != NULL)
    {
      dw_whatif_spare_release (&res->engine->spare, res);
      dw_whatif_engine_unref (res->engine);
    }
  g_free (res->row_rejected_block);
  g_free (res->row_rejected);
  if (res->storage)
    g_ptr_array_unref (res->storage);
  g_free (res->results);
  g_free (res->steps);
  g_free (res);
}

static DwWhatifRunResult *
dw_whatif_engine_result_new (DwWhatifEngine *self, gboolean rows)
{
  DwWhatifRunResult *result = g_new0 (DwWhatifRunResult, 1);
  result->n_steps = self->steps->len;
  result->steps = g_new0 (gint64, result->n_steps ? result->n_steps : 1);
  result->engine = dw_whatif_engine_ref (self);
  gsize n_rows = 0;
  if (rows)
    for (guint index = 0; index < result->n_steps; index++)
      n_rows += dw_whatif_step_get_n_rows (g_ptr_array_index (self->steps, index));
  dw_whatif_spare_take_arrays (&self->spare, result, rows, n_rows);
  for (guint index = 0; index < result->n_steps; index++)
    {
      dw_whatif_step_result_init (&result->results[index]);
      result->steps[index] = dw_whatif_step_get_step (g_ptr_array_index (self->steps, index));
    }
  return result;
}

/* adds a share's label counts to the result's */
static void
dw_whatif_engine_add_counts (DwWhatifRunResult *result, const DwWhatifLabelCounts *counts)
{
  for (guint label = 0; label < DW_WHATIF_MAX_LABELS; label++)
    {
      result->label_rows[label] += counts->rows[label];
      result->label_rejected[label] += counts->rejected[label];
    }
}

gboolean
dw_whatif_engine_label_counts (DwWhatifEngine *self, const DwWhatifRunResult *result, guint64 *rows,
                               guint64 *rejected)
{
  DwWhatifLabelCounts counts = { { 0 } };
  if (result->has_labels)
    {
      memcpy (rows, result->label_rows, sizeof result->label_rows);
      memcpy (rejected, result->label_rejected, sizeof result->label_rejected);
      return TRUE;
    }
  if (self->labels == NULL || result->row_rejected == NULL || result->n_steps > self->n_labelled)
    return FALSE;
  for (guint index = 0; index < result->n_steps; index++)
    if (result->row_rejected[index] != NULL)
      dw_whatif_engine_count_labels (self, index, result->row_rejected[index], &counts);
  memcpy (rows, counts.rows, sizeof counts.rows);
  memcpy (rejected, counts.rejected, sizeof counts.rejected);
  return TRUE;
}

/* evaluates @plan on every step: in the calling thread for a short run, else shared with the pool
 */
static void
dw_whatif_engine_evaluate_all (DwWhatifEngine *self, const DwPlan *plan, DwWhatifRunResult *result,
                               DwWhatifMemo *memos)
{
  guint n_shares = MIN (self->n_threads, MAX (1u, result->n_steps / 8));
  result->storage = g_ptr_array_new_with_free_func (g_free);
  if (n_shares <= 1)
    {
      DwWhatifArena arena = { result->storage, NULL, 0, dw_whatif_list_new_epoch (), &self->spare };
      DwWhatifLabelCounts counts = { { 0 } };
      dw_whatif_list_set_arena (&arena);
      for (guint index = 0; index < result->n_steps; index += DW_WHATIF_ENGINE_CHUNK)
        dw_whatif_engine_evaluate_chunk (self, plan, result, index,
                                         MIN (index + DW_WHATIF_ENGINE_CHUNK, result->n_steps),
                                         memos, &counts);
      dw_whatif_list_set_arena (NULL);
      dw_whatif_engine_add_counts (result, &counts);
      return;
    }
  if (!self->pool)
    self->pool
      = g_thread_pool_new (dw_whatif_engine_share_worker, NULL, (gint)self->n_threads, FALSE, NULL);
  GMutex lock;
  GCond cond;
  g_mutex_init (&lock);
  g_cond_init (&cond);
  guint remaining = n_shares;
  gint next = 0;
  const guint64 epoch = dw_whatif_list_new_epoch ();
  DwWhatifShare *shares = g_new0 (DwWhatifShare, n_shares);
  for (guint share = 0; share < n_shares; share++)
    shares[share]
      = (DwWhatifShare){ self,       plan,  result,
                         &next,      &lock, &cond,
                         &remaining, memos, { g_ptr_array_new (), NULL, 0, epoch, &self->spare } };
  /* Every share goes to the pool and the calling thread waits. A caller that took a share itself
   * went on computing on the processor where the scheduler tends to put the worker it had just
   * woken: after a rest, both then shared one processor until the load balancer moved one, some
   * milliseconds later (a click after a rest took twice a drag's move, docs/BENCHMARKS.md). A
   * caller that sleeps leaves its processor to a worker. */
  g_mutex_lock (&lock);
  for (guint share = 0; share < n_shares; share++)
    g_thread_pool_push (self->pool, &shares[share], NULL);
  while (remaining > 0)
    g_cond_wait (&cond, &lock);
  g_mutex_unlock (&lock);
  for (guint share = 0; share < n_shares; share++)
    {
      g_ptr_array_extend_and_steal (result->storage, shares[share].arena.blocks);
      dw_whatif_engine_add_counts (result, &shares[share].counts);
    }
  g_free (shares);
  g_mutex_clear (&lock);
  g_cond_clear (&cond);
}

/* every step's row outcomes in one block (result->row_rejected_block): each non-empty step's
 * place in it, for dw_whatif_engine_evaluate_range () to fill */
static void
dw_whatif_engine_rows_new (DwWhatifEngine *self, DwWhatifRunResult *result)
{
  gsize n_rows = 0;
  for (guint index = 0; index < result->n_steps; index++)
    {
      const DwWhatifStep *step = g_ptr_array_index (self->steps, index);
      if (!step->empty)
        result->row_rejected[index] = result->row_rejected_block + n_rows;
      n_rows += step->n_rows;
    }
}

static DwWhatifRunResult *
dw_whatif_engine_evaluate_with (DwWhatifEngine *self, const DwConfig *config, gboolean rows,
                                GError **error)
{
  if (dw_config_get (config, "preset"))
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_CONFIG,
                   "preset must be resolved with dw_preset_apply()");
      return NULL;
    }
  DwWhatifRunResult *result = dw_whatif_engine_result_new (self, rows);
  if (rows)
    result->row_rejected = g_new0 (guint8 *, result->n_steps ? result->n_steps : 1);
  DwWhatifStepResult probe;
  memset (&probe, 0, sizeof probe);
  DwPlan plan;
  if (!dw_whatif_eval_prepare (NULL, config, &plan, &probe))
    {
      /* verl raises on every non-empty step alike (the empty-mask error comes first) */
      for (guint index = 0; index < result->n_steps; index++)
        {
          const DwWhatifStep *step = g_ptr_array_index (self->steps, index);
          dw_whatif_eval_prepare (step, config, &plan, &result->results[index]);
        }
      return result;
    }
  if (rows)
    {
      dw_whatif_engine_rows_new (self, result);
      result->has_labels = self->labels != NULL && self->n_labelled == result->n_steps;
    }
  if (g_mutex_trylock (&self->memo_lock))
    {
      /* a step's memo is zeroed when it is first evaluated (steps are only ever appended) */
      if (self->memos->len < result->n_steps)
        g_array_set_size (self->memos, result->n_steps);
      dw_whatif_memo_keys_update (&self->memo_keys, &plan);
      dw_whatif_engine_evaluate_all (self, &plan, result,
                                     (DwWhatifMemo *)(gpointer)self->memos->data);
      g_mutex_unlock (&self->memo_lock);
    }
  else
    dw_whatif_engine_evaluate_all (self, &plan, result, NULL);
  dw_whatif_spare_made (&self->spare, result);
  for (guint index = 0; index < result->n_steps; index++)
    result->any_approximate
      |= result->results[index].any_approximate || result->results[index].pending;
  return result;
}

DwWhatifRunResult *
dw_whatif_engine_evaluate (DwWhatifEngine *self, const DwConfig *config, GError **error)
{
  return dw_whatif_engine_evaluate_with (self, config, FALSE, error);
}

DwWhatifRunResult *
dw_whatif_engine_evaluate_rows (DwWhatifEngine *self, const DwConfig *config, GError **error)
{
  return dw_whatif_engine_evaluate_with (self, config, TRUE, error);
}

/* ------------------------------------------------------------------------------------------ */
/* exact pass                                                                                  */

typedef struct
{
  DwWhatifEngine *engine;
  DwConfig config;
} DwWhatifExactData;

static void
dw_whatif_engine_exact_data_free (DwWhatifExactData *data)
{
  dw_whatif_engine_unref (data->engine);
  g_free (data);
}

/* replaces @out by dw_correction_run () on the reloaded batch of its step */
static gboolean
dw_whatif_engine_exact_step (DwWhatifEngine *self, const DwConfig *config, gint64 step,
                             DwWhatifStepResult *out, GError **error)
{
  GError *load_error = NULL;
  DwBatch *batch = self->loader (step, self->loader_data, &load_error);
  if (!batch)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_LOAD, "step %" G_GINT64_FORMAT ": %s",
                   step, load_error->message);
      g_error_free (load_error);
      return FALSE;
    }
  dw_whatif_step_result_clear (out);
  DwCorrectionResult result;
  /* only the metrics are kept: an unchanged mask is not even copied */
  if (dw_correction_run_entry (batch, config, DW_ENTRY_MASK_SHARED, &result, &out->error))
    {
      /* through a list: the keys' table is shared with the other steps' results */
      DwWhatifList list;
      dw_whatif_list_init (&list, "");
      list.epoch = 0; /* its keys are the result's, freed below: compared as text */
      for (gsize index = 0; index < result.n_metrics; index++)
        dw_whatif_list_put (&list, result.metrics[index].key, result.metrics[index].value);
      dw_whatif_list_finish (&list, out);
      dw_correction_result_clear (&result);
    }
  else
    out->failed = TRUE;
  dw_batch_free (batch);
  return TRUE;
}

gboolean
dw_whatif_engine_evaluate_exact_step (DwWhatifEngine *self, const DwConfig *config, guint index,
                                      DwWhatifStepResult *out, GError **error)
{
  g_return_val_if_fail (index < self->steps->len, FALSE);
  if (!self->loader)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_LOAD, "no batch loader set");
      return FALSE;
    }
  return dw_whatif_engine_exact_step (
    self, config, dw_whatif_step_get_step (g_ptr_array_index (self->steps, index)), out, error);
}

static DwWhatifRunResult *
dw_whatif_engine_exact_run (DwWhatifEngine *self, const DwConfig *config, GCancellable *cancellable,
                            GError **error)
{
  if (!self->loader)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_LOAD, "no batch loader set");
      return NULL;
    }
  /* which steps need the raw batch is re-derived from the statistics (cheap) */
  DwWhatifRunResult *result = dw_whatif_engine_evaluate (self, config, error);
  if (!result)
    return NULL;
  for (guint index = 0; index < result->n_steps; index++)
    {
      DwWhatifStepResult *out = &result->results[index];
      if (!(out->any_approximate || out->pending) || out->failed)
        continue;
      if (g_cancellable_set_error_if_cancelled (cancellable, error)
          || !dw_whatif_engine_exact_step (self, config, result->steps[index], out, error))
        {
          dw_whatif_run_result_free (result);
          return NULL;
        }
    }
  result->any_approximate = FALSE;
  return result;
}

static void
dw_whatif_engine_exact_worker (GTask *task, gpointer source, gpointer task_data,
                               GCancellable *cancellable)
{
  DwWhatifExactData *data = task_data;
  GError *error = NULL;
  (void)source;
  DwWhatifRunResult *result
    = dw_whatif_engine_exact_run (data->engine, &data->config, cancellable, &error);
  if (result)
    g_task_return_pointer (task, result, (GDestroyNotify)dw_whatif_run_result_free);
  else
    g_task_return_error (task, error);
}

void
dw_whatif_engine_evaluate_exact_async (DwWhatifEngine *self, const DwConfig *config,
                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                       gpointer user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, dw_whatif_engine_evaluate_exact_async);
  DwWhatifExactData *data = g_new0 (DwWhatifExactData, 1);
  data->engine = dw_whatif_engine_ref (self);
  data->config = *config;
  g_task_set_task_data (task, data, (GDestroyNotify)dw_whatif_engine_exact_data_free);
  g_task_run_in_thread (task, dw_whatif_engine_exact_worker);
  g_object_unref (task);
}

DwWhatifRunResult *
dw_whatif_engine_evaluate_exact_finish (DwWhatifEngine *self, GAsyncResult *result, GError **error)
{
  (void)self;
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

DwWhatifRunResult *
dw_whatif_engine_evaluate_exact (DwWhatifEngine *self, const DwConfig *config,
                                 GCancellable *cancellable, GError **error)
{
  return dw_whatif_engine_exact_run (self, config, cancellable, error);
}
