/* dw-store-points.c — scalar points: written in batches (dw-store-feed.c), read back as series
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A point's NaN is stored as NULL with special = 1 and −0.0 as 0 with special = 2 (SQLite keeps
 * neither); a second write of (tag, step) wins unless its source is less precise (rank).
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>

#include <glib/gi18n.h>

#include "dw-store-private.h"

/* ------------------------------------------------------------------------------------------ */
/* Writers                                                                                     */

static DwStoreRunAcc *
dw_store_points_run_acc (DwStore *self, gint64 run_id)
{
  DwStoreRunAcc *acc;

  if (self->acc != NULL && self->acc_run_id == run_id)
    return self->acc;
  acc = g_hash_table_lookup (self->run_acc, &run_id);
  if (acc == NULL)
    {
      acc = g_new (DwStoreRunAcc, 1);
      acc->first_step = G_MAXINT64;
      acc->last_step = G_MININT64;
      acc->first_wall = NAN;
      acc->last_wall = NAN;
      g_hash_table_insert (self->run_acc, g_memdup2 (&run_id, sizeof run_id), acc);
    }
  self->acc = acc;
  self->acc_run_id = run_id;
  return acc;
}

static void
dw_store_points_bind (DwStore *self, sqlite3_stmt *stmt, gint64 tag_id, gint64 step,
                      double wall_time, double value)
{
  sqlite3_bind_int64 (stmt, 1, tag_id);
  sqlite3_bind_int64 (stmt, 2, step);
  if (isnan (wall_time))
    sqlite3_bind_null (stmt, 3);
  else
    sqlite3_bind_double (stmt, 3, wall_time);
  if (isnan (value))
    sqlite3_bind_null (stmt, 4);
  else
    sqlite3_bind_double (stmt, 4, value);
  sqlite3_bind_int (stmt, 5, _dw_store_points_special (value));
  sqlite3_bind_int (stmt, 6, self->rank);
}

static void
dw_store_points_account (DwStore *self, gint64 run_id, gint64 step, double wall_time)
{
  DwStoreRunAcc *acc = dw_store_points_run_acc (self, run_id);

  if (step < acc->first_step)
    acc->first_step = step;
  if (step > acc->last_step)
    acc->last_step = step;
  if (!isnan (wall_time))
    {
      if (isnan (acc->first_wall) || wall_time < acc->first_wall)
        acc->first_wall = wall_time;
      if (isnan (acc->last_wall) || wall_time > acc->last_wall)
        acc->last_wall = wall_time;
    }
}

gboolean
dw_store_put_point (DwStore *self, gint64 run_id, gint64 tag_id, gint64 step, double wall_time,
                    double value, GError **error)
{
  sqlite3_stmt *stmt = self->stmts[DW_STORE_STMT_PUT_POINT];
  int rc;

  if (G_UNLIKELY (stmt == NULL))
    {
      if (!_dw_store_query_check_writable (self, error)
          || (stmt = _dw_store_query_cached (self, DW_STORE_STMT_PUT_POINT, error)) == NULL)
        return FALSE;
    }
  dw_store_points_bind (self, stmt, tag_id, step, wall_time, value);
  rc = sqlite3_step (stmt);
  sqlite3_reset (stmt);
  if (G_UNLIKELY (rc != SQLITE_DONE))
    {
      _dw_store_query_set_error (self, error, rc, "storing a point");
      return FALSE;
    }
  dw_store_points_account (self, run_id, step, wall_time);
  return TRUE;
}

/* All @n rows in one statement reading them from dw_points_feed (dw-store-feed.c), in order, so a
 * later row of the same (tag, step) wins as with put_point. */
gboolean
dw_store_put_points (DwStore *self, gint64 run_id, const DwPointRow *rows, gsize n, GError **error)
{
  sqlite3_stmt *stmt;
  int rc;

  if (n == 0)
    return TRUE;
  if (!_dw_store_query_check_writable (self, error)
      || (stmt = _dw_store_query_cached (self, DW_STORE_STMT_PUT_POINTS, error)) == NULL)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    dw_store_points_account (self, run_id, rows[i].step, rows[i].wall_time);
  sqlite3_bind_int (stmt, 1, self->rank);
  self->feed_rows = rows;
  self->feed_n = n;
  rc = sqlite3_step (stmt);
  sqlite3_reset (stmt);
  self->feed_rows = NULL;
  self->feed_n = 0;
  if (G_UNLIKELY (rc != SQLITE_DONE))
    {
      _dw_store_query_set_error (self, error, rc, "storing points");
      return FALSE;
    }
  return TRUE;
}

void
dw_store_set_source_rank (DwStore *self, int rank)
{
  g_return_if_fail (DW_IS_STORE (self));
  self->rank = rank;
}

gboolean
dw_store_purge_points_from (DwStore *self, gint64 tag_id, gint64 step, int rank, GError **error)
{
  return _dw_store_query_check_writable (self, error)
         && _dw_store_query_run (
           self, error, "purging an earlier launch's points",
           "DELETE FROM points WHERE tag_id = ?1 AND step >= ?2 AND rank = ?3", "iin", tag_id, step,
           rank);
}

void
_dw_store_points_forget_runs (DwStore *self)
{
  g_hash_table_remove_all (self->run_acc);
  self->acc = NULL;
  self->acc_run_id = 0;
}

gboolean
_dw_store_points_flush_runs (DwStore *self, GError **error)
{
  GHashTableIter iter;
  gpointer key, value;
  double now = g_get_real_time () / 1e6;

  g_hash_table_iter_init (&iter, self->run_acc);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      DwStoreRunAcc *acc = value;
      sqlite3_stmt *stmt = _dw_store_query_cached (self, DW_STORE_STMT_FLUSH_RUN, error);

      if (stmt == NULL)
        return FALSE;
      _dw_store_query_bind (stmt, "iiiddd", *(gint64 *)key, acc->first_step, acc->last_step,
                            acc->first_wall, acc->last_wall, now);
      if (!_dw_store_query_step_done (self, stmt, "updating a run", error))
        return FALSE;
    }
  _dw_store_points_forget_runs (self);
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Readers                                                                                     */

gboolean
dw_store_get_point (DwStore *self, gint64 tag_id, gint64 step, double *value, int *rank,
                    GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = _dw_store_query_new (
    self, error, "SELECT value, special, rank FROM points WHERE tag_id = ?1 AND step = ?2", "ii",
    tag_id, step);

  if (stmt == NULL || _dw_store_query_first_row (self, stmt, "reading a point", error) <= 0)
    return FALSE;
  switch (sqlite3_column_int (stmt, 1))
    {
    case 1:
      *value = NAN;
      break;
    case 2:
      *value = -0.0;
      break;
    default:
      *value = sqlite3_column_double (stmt, 0);
    }
  *rank = sqlite3_column_int (stmt, 2);
  return TRUE;
}

void
dw_series_free (DwSeries *series)
{
  if (series == NULL)
    return;
  g_free (series->steps);
  g_free (series->wall_times);
  g_free (series->values);
  g_free (series->restart_steps);
  g_free (series);
}

gssize
dw_series_find_step (const DwSeries *series, gint64 step)
{
  gsize low = 0, high = series->n;

  while (low < high)
    {
      gsize middle = low + (high - low) / 2;
      if (series->steps[middle] < step)
        low = middle + 1;
      else
        high = middle;
    }
  return low < series->n && series->steps[low] == step ? (gssize)low : -1;
}

/* The tag id of @tag in @run: the logged name, else the newest tag whose canonical name (as
 * dw_store_list_tags resolves it) is @tag (largest last step, then the latest created). 0 when
 * none, -1 on an error. */
static gint64
dw_store_points_resolve_tag (DwStore *self, gint64 run_id, const char *tag, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GPtrArray) tags = NULL;
  g_autoptr (GString) ids = g_string_new (NULL);
  g_autofree char *sql = NULL;
  int found;

  stmt = _dw_store_query_new (self, error, "SELECT id FROM tags WHERE run_id = ?1 AND name = ?2",
                              "it", run_id, tag);
  if (stmt == NULL
      || (found = _dw_store_query_first_row (self, stmt, "looking up a tag", error)) < 0)
    return -1;
  if (found)
    return sqlite3_column_int64 (stmt, 0);
  g_clear_pointer (&stmt, sqlite3_finalize);

  if ((tags = _dw_store_runs_list_tag_ids (self, run_id, error)) == NULL)
    return -1;
  for (guint i = 0; i < tags->len; i++)
    {
      DwTagInfo *info = tags->pdata[i];

      if (g_strcmp0 (info->canonical, tag) == 0)
        g_string_append_printf (ids, "%s%" G_GINT64_FORMAT, ids->len ? ", " : "", info->id);
    }
  if (ids->len == 0)
    return 0;

  sql = g_strdup_printf ("SELECT id FROM tags t WHERE id IN (%s) ORDER BY "
                         "(SELECT max (step) FROM points p WHERE p.tag_id = t.id) DESC, id DESC "
                         "LIMIT 1",
                         ids->str);
  if ((stmt = _dw_store_query_prepare (self, sql, error)) == NULL
      || (found = _dw_store_query_first_row (self, stmt, "looking up a tag", error)) < 0)
    return -1;
  return found ? sqlite3_column_int64 (stmt, 0) : 0;
}

typedef struct
{
  GArray *steps, *walls, *values;
} DwStorePointsColumns;

static void
dw_store_points_series_cb (sqlite3_stmt *stmt, gpointer user_data)
{
  DwStorePointsColumns *columns = user_data;
  gint64 step = sqlite3_column_int64 (stmt, 0);
  double wall = _dw_store_query_column_double_or_nan (stmt, 1);
  double value = _dw_store_query_column_double_or_nan (stmt, 2);

  if (sqlite3_column_int (stmt, 3) == 2)
    value = -0.0;
  g_array_append_val (columns->steps, step);
  g_array_append_val (columns->walls, wall);
  g_array_append_val (columns->values, value);
}

DwSeries *
dw_store_get_series (DwStore *self, gint64 run_id, const char *tag, gint64 after_step,
                     GError **error)
{
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) walls = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) values = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) restarts = g_array_new (FALSE, FALSE, sizeof (gint64));
  DwStorePointsColumns columns = { steps, walls, values };
  /* G_MININT64 means every point, also one logged at step G_MININT64 */
  int every = after_step == G_MININT64;
  DwSeries *series;
  gint64 tag_id;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  g_return_val_if_fail (tag != NULL, NULL);
  tag_id = dw_store_points_resolve_tag (self, run_id, tag, error);
  if (tag_id < 0)
    return NULL;
  if (tag_id == 0)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND,
                   _ ("%s: run %" PRId64 " has no tag “%s”"), self->path, run_id, tag);
      return NULL;
    }

  if (!_dw_store_query_rows (self, error, "reading a series", dw_store_points_series_cb, &columns,
                             "SELECT step, wall_time, value, special FROM points WHERE "
                             "tag_id = ?1 AND (?3 OR step > ?2) ORDER BY step",
                             "iin", tag_id, after_step, every)
      || !_dw_store_query_rows (self, error, "reading restarts", _dw_store_query_append_int64_cb,
                                restarts,
                                "SELECT DISTINCT step FROM restarts WHERE run_id = ?1 AND "
                                "(?3 OR step > ?2) ORDER BY step",
                                "iin", run_id, after_step, every))
    return NULL;

  series = g_new0 (DwSeries, 1);
  series->n = steps->len;
  series->steps = (gint64 *)(void *)g_array_free (g_steal_pointer (&steps), FALSE);
  series->wall_times = (double *)(void *)g_array_free (g_steal_pointer (&walls), FALSE);
  series->values = (double *)(void *)g_array_free (g_steal_pointer (&values), FALSE);
  series->n_restarts = restarts->len;
  series->restart_steps = (gint64 *)(void *)g_array_free (g_steal_pointer (&restarts), FALSE);
  return series;
}
