/* dw-ingest-feed.c — reader points into the store: precision ranks, (tag, step) order, conflicts,
 * launches
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

#include "dw-ingester-private.h"

/* Precision rank of each source (dw_store_set_source_rank), judged by how the value was written:
 * float64 text (verl JSONL, W&B, MLflow, and the console's repr since verl 0.5) beats tfevents'
 * float32, which beats verl ≤ 0.4.1's "%.3f" console lines (DW_PRECISION_3F, rank 0). */
int
dw_ingest_feed_format_rank (DwFormat format)
{
  switch (format)
    {
    case DW_FORMAT_VERL_CONSOLE:
    case DW_FORMAT_SLIME_CONSOLE:
    case DW_FORMAT_VERL_JSONL:
    case DW_FORMAT_WANDB_CSV:
    case DW_FORMAT_WANDB_OFFLINE:
    case DW_FORMAT_MLFLOW_SQLITE:
    case DW_FORMAT_MLFLOW_FILE:
    case DW_FORMAT_SWANLAB:
    case DW_FORMAT_TRACKIO_SQLITE:
      return 2;
    case DW_FORMAT_TFEVENTS:
    case DW_FORMAT_WANDB_PANEL_CSV:
      return 1;
    default:
      return 0;
    }
}

/* tfevents files say nothing about their writer: the key names do. */
static const char *
framework_from_tag (const char *tag)
{
  static const char *const verl[]
    = { "actor/",    "critic/",   "rollout_corr/",  "mismatch/",
        "timing_s/", "training/", "global_seqlen/", "response_length/" };
  static const char *const slime[] = { "train/", "rollout/", "passrate/", "multi_turn/" };

  for (guint i = 0; i < G_N_ELEMENTS (verl); i++)
    if (g_str_has_prefix (tag, verl[i]))
      return "verl";
  for (guint i = 0; i < G_N_ELEMENTS (slime); i++)
    if (g_str_has_prefix (tag, slime[i]))
      return "slime";
  return NULL;
}

static int
cmp_pending (gconstpointer a, gconstpointer b)
{
  const Pending *x = a, *y = b;

  if (x->tag_id != y->tag_id)
    return x->tag_id < y->tag_id ? -1 : 1;
  if (x->step != y->step)
    return x->step < y->step ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes the chunk's points in (tag, step) order: each insert then lands next to the previous
 * one in the points b-tree, several times faster than the logged order (all tags of a step). */
/* Does a stored copy of rank @stored_rank disagree with @v (rank @rank) by more than the less
 * precise copy's rounding? */
static gboolean
values_conflict (double stored, int stored_rank, double v, int rank)
{
  int r = MIN (stored_rank, rank);
  double tol;

  if (isnan (stored) && isnan (v))
    return FALSE;
  if (isnan (stored) || isnan (v) || isinf (stored) || isinf (v))
    return stored != v;
  tol = r == 0   ? 0.0005 + 1e-9
        : r == 1 ? 1e-6 * MAX (fabs (stored), fabs (v)) + 1e-30
                 : 1e-12 * MAX (fabs (stored), fabs (v));
  return fabs (stored - v) > tol;
}

static void
report_conflicts (FeedCtx *c)
{
  for (guint i = 0; i < c->pending->len && c->error == NULL; i++)
    {
      const Pending *p = &g_array_index (c->pending, Pending, i);
      double stored;
      int stored_rank;

      if (!dw_store_get_point (c->self->store, p->tag_id, p->step, &stored, &stored_rank,
                               &c->error))
        continue;
      if (!values_conflict (stored, stored_rank, p->value, c->cur_rank))
        continue;
      if (++c->n_conflicts <= 3 && c->report != NULL)
        {
          g_autofree char *msg = NULL;
          GHashTableIter it;
          gpointer k, v;
          const char *tag = "?";

          g_hash_table_iter_init (&it, c->tags);
          while (g_hash_table_iter_next (&it, &k, &v))
            if (*(gint64 *)v == p->tag_id)
              tag = k;
          msg = g_strdup_printf (_ ("%s: %s at step %" PRId64 " is %.17g here but %.17g in "
                                    "another source of the same run: two sources disagree (%s)"),
                                 c->path, tag, p->step, p->value, stored,
                                 c->cur_rank >= stored_rank
                                   ? _ ("this copy, as precise or more, is kept")
                                   : _ ("the more precise stored copy is kept"));
          g_ptr_array_add (c->report->notes, g_steal_pointer (&msg));
        }
    }
}

/* The pending points as rows in (tag, arrival) order: a counting sort by tag, stable, so a later
 * write of a (tag, step) stays after the earlier one and wins. Each tag's steps mostly come in
 * increasing order, so every insert lands next to the previous one in the points b-tree
 * (several times faster than the logged order, all tags of a step). The comparison sort it
 * replaces took 5 % of an ingest. NULL when the tag ids are too sparse for it. */
static DwPointRow *
rows_by_tag (GArray *pending)
{
  const Pending *points = (const Pending *)(void *)pending->data;
  gint64 low = G_MAXINT64, high = G_MININT64;
  g_autofree guint *starts = NULL;
  DwPointRow *rows;
  gsize range;

  for (guint i = 0; i < pending->len; i++)
    {
      low = MIN (low, points[i].tag_id);
      high = MAX (high, points[i].tag_id);
    }
  range = (gsize)(high - low) + 1;
  if (high - low < 0 || range > MAX (4096u, 2u * (gsize)pending->len))
    return NULL;
  starts = g_new0 (guint, range + 1);
  for (guint i = 0; i < pending->len; i++)
    starts[points[i].tag_id - low + 1]++;
  for (gsize k = 1; k <= range; k++)
    starts[k] += starts[k - 1];
  rows = g_new (DwPointRow, pending->len);
  for (guint i = 0; i < pending->len; i++)
    rows[starts[points[i].tag_id - low]++]
      = (DwPointRow){ points[i].tag_id, points[i].step, points[i].wall_time, points[i].value };
  return rows;
}

void
dw_ingest_feed_flush (FeedCtx *c)
{
  if (c->error == NULL && c->pending->len > 0)
    {
      g_autofree DwPointRow *sorted = NULL;
      DwPointRow *rows;

      if (c->check_conflicts)
        report_conflicts (c);
      if (c->error != NULL)
        return;
      sorted = rows_by_tag (c->pending);
      rows = sorted;
      if (rows == NULL)
        {
          g_array_sort (c->pending, cmp_pending);
          /* compact in place: a DwPointRow is a Pending without its seq */
          rows = (DwPointRow *)(void *)c->pending->data;
          for (guint i = 0; i < c->pending->len; i++)
            {
              const Pending p = g_array_index (c->pending, Pending, i);
              rows[i] = (DwPointRow){ p.tag_id, p.step, p.wall_time, p.value };
            }
        }
      dw_store_put_points (c->self->store, c->run_id, rows, c->pending->len, &c->error);
    }
  g_array_set_size (c->pending, 0);
}

/* An entry of FeedCtx.tags. The id comes first: the table's values are read as gint64 *. */
typedef struct FeedTag
{
  gint64 id;
  struct FeedTag *next; /* the tag that followed this one last time */
  const char *name;     /* the table's key */
} FeedTag;

/* The id of @tag (@name in the store: the tag without a panel export's "<run> - " prefix).
 * Loggers write a step's tags in the same order every step, so the tag that followed the previous
 * point's tag last time is tried first (one strcmp); the hash table otherwise. */
static gint64
tag_id (FeedCtx *c, const char *tag, const char *name, const char *step_key)
{
  FeedTag *last = c->last_tag, *entry;

  if (last != NULL && last->next != NULL && strcmp (last->next->name, tag) == 0)
    entry = last->next;
  else if ((entry = g_hash_table_lookup (c->tags, tag)) == NULL)
    {
      gint64 v = dw_store_ensure_tag (c->self->store, c->run_id, name, step_key, &c->error);
      char *key;

      if (v == 0)
        return 0;
      if (c->framework == NULL)
        c->framework = framework_from_tag (name);
      key = g_strdup (tag);
      entry = g_new0 (FeedTag, 1);
      entry->id = v;
      entry->name = key;
      g_hash_table_insert (c->tags, key, entry);
    }
  if (last != NULL)
    last->next = entry;
  c->last_tag = entry;
  return entry->id;
}

/* A W&B panel export of several runs: the point of column "<run> - <metric>" goes to the run
 * <run> (created on first sight, its source "FILE#<run>"); returns the metric name. */
static const char *
panel_route (FeedCtx *c, const char *tag)
{
  const char *sep = strstr (tag, " - ");
  g_autofree char *name = NULL;
  gint64 *run;

  if (sep == NULL || sep == tag || c->self->run_name != NULL)
    return tag;
  name = g_strndup (tag, (gsize)(sep - tag));
  run = g_hash_table_lookup (c->panel_runs, name);
  if (run == NULL)
    {
      g_autofree char *source = g_strdup_printf ("%s#%s", c->path, name);
      gint64 id = dw_ingest_runs_ensure_named (c->self, source, name, "wandb", &c->error);
      if (id == 0)
        return NULL;
      run = g_memdup2 (&id, sizeof id);
      g_hash_table_insert (c->panel_runs, g_strdup (name), run);
    }
  if (*run != c->run_id)
    {
      dw_ingest_feed_flush (c); /* the pending points are the other run's */
      c->run_id = *run;
    }
  return sep + 3;
}

void
dw_ingest_feed_point_cb (const DwScalarPoint *p, gpointer user_data)
{
  FeedCtx *c = user_data;
  gint64 id;

  if (G_UNLIKELY (c->error != NULL))
    return;
  if (G_UNLIKELY (c->at_start))
    {
      /* the file's first point: a later launch of a run going back to an earlier step? Then
       * TensorBoard's rule: the earlier launch's points from that step on are stale */
      c->at_start = FALSE;
      if (c->restart_ref != G_MININT64 && p->step <= c->restart_ref)
        {
          c->restart_step = p->step;
          *c->launch_step = p->step;
        }
    }
  {
    int rank = p->precision == DW_PRECISION_3F ? 0 : c->base_rank;
    if (G_UNLIKELY (rank != c->cur_rank))
      {
        dw_ingest_feed_flush (c);
        c->cur_rank = rank;
        dw_store_set_source_rank (c->self->store, rank);
      }
  }
  if (G_UNLIKELY (c->panel_runs != NULL))
    {
      const char *name = panel_route (c, p->tag);
      if (name == NULL)
        return;
      id = tag_id (c, p->tag, name, p->step_key);
    }
  else
    id = tag_id (c, p->tag, p->tag, p->step_key);
  if (G_UNLIKELY (id == 0))
    return;
  if (G_UNLIKELY (c->launch_step != NULL && *c->launch_step != G_MININT64)
      && !g_hash_table_contains (c->purged, p->tag))
    {
      g_hash_table_add (c->purged, g_strdup (p->tag));
      if (!dw_store_purge_points_from (c->self->store, id, *c->launch_step, c->base_rank,
                                       &c->error))
        return;
    }
  {
    Pending pp = { id, p->step, p->wall_time, p->value, c->pending->len };
    g_array_append_val (c->pending, pp);
  }
  if (c->first_step == G_MININT64)
    c->first_step = p->step;
  if (p->step > c->max_step)
    c->max_step = p->step;
  c->n_points++;
}

/* Reader messages read "PATH: byte offset N: message": the store keeps path and offset in
 * their own columns. */
static const char *
strip_place (const char *message, const char *path)
{
  const char *m = message;
  gsize pl = strlen (path);

  if (strncmp (m, path, pl) == 0 && m[pl] == ':' && m[pl + 1] == ' ')
    {
      m += pl + 2;
      if (g_str_has_prefix (m, "byte offset "))
        {
          const char *colon = strstr (m, ": ");
          if (colon != NULL)
            m = colon + 2;
        }
    }
  return m;
}

void
dw_ingest_feed_diag_cb (goffset offset, const char *message, gpointer user_data)
{
  FeedCtx *c = user_data;

  if (c->error != NULL)
    return;
  if (!dw_store_add_diagnostic (c->self->store, c->run_id, c->path, offset,
                                strip_place (message, c->path), &c->error))
    return;
  if (c->report != NULL)
    g_ptr_array_add (c->report->diagnostics, g_strdup (message));
}
