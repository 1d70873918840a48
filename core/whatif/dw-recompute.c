/* dw-recompute.c — a stored run's correction metrics under a config, compared with the log
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-recompute.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dw-canonical.h"
#include "dw-whatif-engine.h"

#define DEFAULT_RTOL 2e-5
#define DEFAULT_ATOL 1e-7

gboolean
dw_recompute_values_agree (double logged, double recomputed, double rtol, double atol)
{
  if (isnan (logged) || isnan (recomputed))
    return isnan (logged) && isnan (recomputed);
  if (isinf (logged) || isinf (recomputed))
    return logged == recomputed;
  return fabs (logged - recomputed) <= rtol * fmax (fabs (logged), fabs (recomputed)) + atol;
}

static void
dw_recompute_diff_free (DwRecomputeDiff *d)
{
  g_free (d->key);
  g_free (d->tag);
  g_free (d);
}

void
dw_recompute_result_free (DwRecomputeResult *res)
{
  if (!res)
    return;
  for (guint index = 0; index < res->n_steps; index++)
    {
      dw_correction_result_clear (&res->steps[index].result);
      if (res->steps[index].diffs)
        g_ptr_array_unref (res->steps[index].diffs);
    }
  g_free (res->steps);
  g_free (res);
}

typedef struct
{
  DwStore *store;
  DwRecomputeResult *res;
  GCancellable *cancellable;
  gint next;
  GMutex lock; /* the store's connection */
  GError *error;
} DwRecomputeJob;

static gpointer
dw_recompute_worker (gpointer data)
{
  DwRecomputeJob *job = data;
  for (;;)
    {
      gint index = g_atomic_int_add (&job->next, 1);
      if ((guint)index >= job->res->n_steps || g_cancellable_is_cancelled (job->cancellable))
        break;
      DwRecomputeStep *step = &job->res->steps[index];
      GError *error = NULL;
      g_mutex_lock (&job->lock);
      DwBatch *batch = job->error
                         ? NULL
                         : dw_store_load_batch (job->store, job->res->run_id, step->step, &error);
      g_mutex_unlock (&job->lock);
      if (!batch)
        {
          g_mutex_lock (&job->lock);
          if (!job->error && error)
            job->error = error;
          else
            g_clear_error (&error);
          g_mutex_unlock (&job->lock);
          break;
        }
      /* only the metrics are kept: an unchanged mask is not even copied */
      if (dw_correction_run_entry (batch, &job->res->config, DW_ENTRY_MASK_SHARED, &step->result,
                                   &step->error))
        {
          free (step->result.weights);
          if (!step->result.mask_borrowed)
            free (step->result.mask);
          step->result.weights = step->result.mask = NULL;
          step->result.mask_borrowed = false;
        }
      else
        step->failed = TRUE;
      dw_batch_free (batch);
    }
  return NULL;
}

/* recomputed key → logged tag: the same name, else the only logged tag of the same canonical
 * metric when only one recomputed key maps to that canonical metric */
static GHashTable *
dw_recompute_match_tags (DwStore *store, gint64 run_id, const DwRecomputeResult *res,
                         GError **error)
{
  g_autoptr (GPtrArray) tags = dw_store_list_tags (store, run_id, error);
  if (!tags)
    return NULL;
  GHashTable *map = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) canon_tags = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) canon_tag_count = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint index = 0; index < tags->len; index++)
    {
      DwTagInfo *tag_info = g_ptr_array_index (tags, index);
      g_hash_table_add (names, tag_info->name);
      if (tag_info->canonical)
        {
          g_hash_table_insert (canon_tags, tag_info->canonical, tag_info->name);
          guint seen
            = GPOINTER_TO_UINT (g_hash_table_lookup (canon_tag_count, tag_info->canonical));
          g_hash_table_insert (canon_tag_count, tag_info->canonical, GUINT_TO_POINTER (seen + 1));
        }
    }
  /* all recomputed keys over all steps */
  g_autoptr (GHashTable) keys = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) canon_keys = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint index = 0; index < res->n_steps; index++)
    for (gsize metric_index = 0; metric_index < res->steps[index].result.n_metrics; metric_index++)
      {
        const char *metric_key = res->steps[index].result.metrics[metric_index].key;
        if (g_hash_table_contains (keys, metric_key))
          continue;
        g_hash_table_add (keys, (gpointer)metric_key);
        const char *canonical = dw_canonical_for_tag (metric_key);
        if (canonical)
          {
            guint seen = GPOINTER_TO_UINT (g_hash_table_lookup (canon_keys, canonical));
            g_hash_table_insert (canon_keys, (gpointer)canonical, GUINT_TO_POINTER (seen + 1));
          }
      }
  GHashTableIter iter;
  gpointer metric_key;
  g_hash_table_iter_init (&iter, keys);
  while (g_hash_table_iter_next (&iter, &metric_key, NULL))
    {
      const char *key = metric_key;
      if (g_hash_table_contains (names, key))
        {
          g_hash_table_insert (map, g_strdup (key), g_strdup (key));
          continue;
        }
      const char *canonical = dw_canonical_for_tag (key);
      if (canonical && GPOINTER_TO_UINT (g_hash_table_lookup (canon_keys, canonical)) == 1
          && GPOINTER_TO_UINT (g_hash_table_lookup (canon_tag_count, canonical)) == 1)
        g_hash_table_insert (map, g_strdup (key),
                             g_strdup (g_hash_table_lookup (canon_tags, canonical)));
    }
  return map;
}

static gboolean
dw_recompute_compare_logged (DwStore *store, DwRecomputeResult *res, double rtol, double atol,
                             GError **error)
{
  g_autoptr (GHashTable) map = dw_recompute_match_tags (store, res->run_id, res, error);
  if (!map)
    return FALSE;
  g_autoptr (GHashTable) series
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)dw_series_free);
  for (guint index = 0; index < res->n_steps; index++)
    {
      DwRecomputeStep *step = &res->steps[index];
      step->diffs = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_recompute_diff_free);
      for (gsize metric_index = 0; metric_index < step->result.n_metrics; metric_index++)
        {
          const DwMetric *met = &step->result.metrics[metric_index];
          const char *tag = g_hash_table_lookup (map, met->key);
          if (!tag)
            continue;
          DwSeries *logged_series = g_hash_table_lookup (series, tag);
          if (!logged_series)
            {
              logged_series = dw_store_get_series (store, res->run_id, tag, G_MININT64, error);
              if (!logged_series)
                return FALSE;
              g_hash_table_insert (series, g_strdup (tag), logged_series);
            }
          gssize idx = dw_series_find_step (logged_series, step->step);
          if (idx < 0)
            continue;
          step->n_compared++;
          double logged = logged_series->values[idx];
          if (!dw_recompute_values_agree (logged, met->value, rtol, atol))
            {
              DwRecomputeDiff *diff = g_new0 (DwRecomputeDiff, 1);
              diff->key = g_strdup (met->key);
              diff->tag = g_strdup (tag);
              diff->logged = logged;
              diff->recomputed = met->value;
              g_ptr_array_add (step->diffs, diff);
            }
        }
      res->n_flagged += step->diffs->len > 0;
    }
  return TRUE;
}

DwRecomputeResult *
dw_recompute_run (DwStore *store, gint64 run_id, const DwConfig *config, DwGeneration generation,
                  const DwRecomputeOptions *options, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (DW_IS_STORE (store), NULL);
  g_return_val_if_fail (config != NULL, NULL);
  gint64 started = g_get_monotonic_time ();
  DwRecomputeOptions opt = { DEFAULT_RTOL, DEFAULT_ATOL, 0 };
  if (options)
    {
      opt = *options;
      if (opt.rtol == 0 && opt.atol == 0)
        {
          opt.rtol = DEFAULT_RTOL;
          opt.atol = DEFAULT_ATOL;
        }
    }
  DwConfig cfg = *config;
  cfg.generation = generation;
  const DwValue *preset_value = dw_config_get (&cfg, "preset");
  if (preset_value)
    {
      /* the preset first, then the other keys override it */
      DwConfig resolved;
      DwCorrectionError cerr;
      char name[DW_VALUE_STR_MAX];
      dw_value_to_python_str (preset_value, name, sizeof name);
      if (!dw_preset_config (generation, name, &resolved, &cerr))
        {
          g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_CONFIG, "%s", cerr.message);
          return NULL;
        }
      for (size_t index = 0; index < cfg.n_keys; index++)
        if (strcmp (cfg.keys[index], "preset") != 0)
          dw_config_set (&resolved, cfg.keys[index], &cfg.values[index]);
      cfg = resolved;
    }
  g_autoptr (GArray) steps = dw_store_list_batch_steps (store, run_id, error);
  if (!steps)
    return NULL;
  if (steps->len == 0)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND,
                   "run %" G_GINT64_FORMAT " has no stored rollout batch to recompute from",
                   run_id);
      return NULL;
    }
  DwRecomputeResult *res = g_new0 (DwRecomputeResult, 1);
  res->run_id = run_id;
  res->config = cfg;
  res->n_steps = steps->len;
  res->steps = g_new0 (DwRecomputeStep, steps->len);
  for (guint index = 0; index < steps->len; index++)
    res->steps[index].step = g_array_index (steps, gint64, index);
  DwRecomputeJob job = { .store = store, .res = res, .cancellable = cancellable };
  g_mutex_init (&job.lock);
  guint n_threads = opt.n_threads ? opt.n_threads : MAX (1, g_get_num_processors ());
  n_threads = MIN (n_threads, res->n_steps);
  GThread **threads = g_new (GThread *, n_threads);
  for (guint thread_index = 0; thread_index < n_threads; thread_index++)
    threads[thread_index] = g_thread_new ("dw-recompute", dw_recompute_worker, &job);
  for (guint thread_index = 0; thread_index < n_threads; thread_index++)
    g_thread_join (threads[thread_index]);
  g_free (threads);
  g_mutex_clear (&job.lock);
  if (job.error)
    {
      g_propagate_error (error, job.error);
      dw_recompute_result_free (res);
      return NULL;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error)
      || !dw_recompute_compare_logged (store, res, opt.rtol, opt.atol, error))
    {
      dw_recompute_result_free (res);
      return NULL;
    }
  for (guint index = 0; index < res->n_steps; index++)
    res->n_failed += res->steps[index].failed;
  res->seconds = (g_get_monotonic_time () - started) / 1e6;
  return res;
}
