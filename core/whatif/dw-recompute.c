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
  for (guint i = 0; i < res->n_steps; i++)
    {
      dw_correction_result_clear (&res->steps[i].result);
      if (res->steps[i].diffs)
        g_ptr_array_unref (res->steps[i].diffs);
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
      if (dw_correction_run (batch, &job->res->config, &step->result, &step->error))
        {
          free (step->result.weights);
          free (step->result.mask);
          step->result.weights = step->result.mask = NULL;
        }
      else
        step->failed = TRUE;
      dw_batch_free (batch);
    }
  dw_correction_release_workspace ();
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
  for (guint i = 0; i < tags->len; i++)
    {
      DwTagInfo *t = g_ptr_array_index (tags, i);
      g_hash_table_add (names, t->name);
      if (t->canonical)
        {
          g_hash_table_insert (canon_tags, t->canonical, t->name);
          guint n = GPOINTER_TO_UINT (g_hash_table_lookup (canon_tag_count, t->canonical));
          g_hash_table_insert (canon_tag_count, t->canonical, GUINT_TO_POINTER (n + 1));
        }
    }
  /* all recomputed keys over all steps */
  g_autoptr (GHashTable) keys = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) canon_keys = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < res->n_steps; i++)
    for (gsize m = 0; m < res->steps[i].result.n_metrics; m++)
      {
        const char *k = res->steps[i].result.metrics[m].key;
        if (g_hash_table_contains (keys, k))
          continue;
        g_hash_table_add (keys, (gpointer)k);
        const char *c = dw_canonical_for_tag (k);
        if (c)
          {
            guint n = GPOINTER_TO_UINT (g_hash_table_lookup (canon_keys, c));
            g_hash_table_insert (canon_keys, (gpointer)c, GUINT_TO_POINTER (n + 1));
          }
      }
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init (&it, keys);
  while (g_hash_table_iter_next (&it, &k, NULL))
    {
      const char *key = k;
      if (g_hash_table_contains (names, key))
        {
          g_hash_table_insert (map, g_strdup (key), g_strdup (key));
          continue;
        }
      const char *c = dw_canonical_for_tag (key);
      if (c && GPOINTER_TO_UINT (g_hash_table_lookup (canon_keys, c)) == 1
          && GPOINTER_TO_UINT (g_hash_table_lookup (canon_tag_count, c)) == 1)
        g_hash_table_insert (map, g_strdup (key), g_strdup (g_hash_table_lookup (canon_tags, c)));
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
  for (guint i = 0; i < res->n_steps; i++)
    {
      DwRecomputeStep *st = &res->steps[i];
      st->diffs = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_recompute_diff_free);
      for (gsize m = 0; m < st->result.n_metrics; m++)
        {
          const DwMetric *met = &st->result.metrics[m];
          const char *tag = g_hash_table_lookup (map, met->key);
          if (!tag)
            continue;
          DwSeries *s = g_hash_table_lookup (series, tag);
          if (!s)
            {
              s = dw_store_get_series (store, res->run_id, tag, G_MININT64, error);
              if (!s)
                return FALSE;
              g_hash_table_insert (series, g_strdup (tag), s);
            }
          gssize idx = dw_series_find_step (s, st->step);
          if (idx < 0)
            continue;
          st->n_compared++;
          double logged = s->values[idx];
          if (!dw_recompute_values_agree (logged, met->value, rtol, atol))
            {
              DwRecomputeDiff *d = g_new0 (DwRecomputeDiff, 1);
              d->key = g_strdup (met->key);
              d->tag = g_strdup (tag);
              d->logged = logged;
              d->recomputed = met->value;
              g_ptr_array_add (st->diffs, d);
            }
        }
      res->n_flagged += st->diffs->len > 0;
    }
  return TRUE;
}

DwRecomputeResult *
dw_recompute_run (DwStore *store, gint64 run_id, const DwConfig *config, DwGeneration generation,
                  const DwRecomputeOptions *options, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (DW_IS_STORE (store), NULL);
  g_return_val_if_fail (config != NULL, NULL);
  gint64 t0 = g_get_monotonic_time ();
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
  const DwValue *pv = dw_config_get (&cfg, "preset");
  if (pv)
    {
      /* the preset first, then the other keys override it */
      DwConfig resolved;
      DwCorrectionError cerr;
      char name[DW_VALUE_STR_MAX];
      dw_value_to_python_str (pv, name, sizeof name);
      if (!dw_preset_config (generation, name, &resolved, &cerr))
        {
          g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_CONFIG, "%s", cerr.message);
          return NULL;
        }
      for (size_t i = 0; i < cfg.n_keys; i++)
        if (strcmp (cfg.keys[i], "preset") != 0)
          dw_config_set (&resolved, cfg.keys[i], &cfg.values[i]);
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
  for (guint i = 0; i < steps->len; i++)
    res->steps[i].step = g_array_index (steps, gint64, i);
  DwRecomputeJob j = { .store = store, .res = res, .cancellable = cancellable };
  g_mutex_init (&j.lock);
  guint nt = opt.n_threads ? opt.n_threads : MAX (1, g_get_num_processors ());
  nt = MIN (nt, res->n_steps);
  GThread **th = g_new (GThread *, nt);
  for (guint t = 0; t < nt; t++)
    th[t] = g_thread_new ("dw-recompute", dw_recompute_worker, &j);
  for (guint t = 0; t < nt; t++)
    g_thread_join (th[t]);
  g_free (th);
  g_mutex_clear (&j.lock);
  if (j.error)
    {
      g_propagate_error (error, j.error);
      dw_recompute_result_free (res);
      return NULL;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error)
      || !dw_recompute_compare_logged (store, res, opt.rtol, opt.atol, error))
    {
      dw_recompute_result_free (res);
      return NULL;
    }
  for (guint i = 0; i < res->n_steps; i++)
    res->n_failed += res->steps[i].failed;
  res->seconds = (g_get_monotonic_time () - t0) / 1e6;
  return res;
}
