/* dw-store-runs.c — runs and their tags, metadata, restarts and diagnostics
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>

#include <glib/gi18n.h>

#include "dw-canonical.h"
#include "dw-store-private.h"

/* ------------------------------------------------------------------------------------------ */
/* Writers                                                                                     */

gint64
dw_store_ensure_run (DwStore *self, const char *name, const char *framework, const char *source,
                     GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  int found;

  g_return_val_if_fail (DW_IS_STORE (self), 0);
  g_return_val_if_fail (name != NULL, 0);
  if (!_dw_store_query_check_writable (self, error))
    return 0;
  stmt = _dw_store_query_new (self, error,
                              "INSERT INTO runs (name, framework, source) VALUES (?1, ?2, ?3) "
                              "ON CONFLICT (name) DO UPDATE SET framework = CASE WHEN "
                              "framework = 'unknown' THEN excluded.framework ELSE framework END, "
                              "source = coalesce (source, excluded.source) RETURNING id",
                              "ttt", name, framework != NULL ? framework : "unknown", source);
  if (stmt == NULL)
    return 0;
  found = _dw_store_query_first_row (self, stmt, "adding a run", error);
  if (found == 0) /* RETURNING always gives the row */
    _dw_store_query_set_error (self, error, SQLITE_DONE, "adding a run");
  return found > 0 ? sqlite3_column_int64 (stmt, 0) : 0;
}

gboolean
dw_store_set_run_status (DwStore *self, gint64 run_id, DwRunStatus status, GError **error)
{
  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  return _dw_store_query_check_writable (self, error)
         && _dw_store_query_run (self, error, "setting a run status",
                                 "UPDATE runs SET status = ?2, updated = ?3 WHERE id = ?1", "ind",
                                 run_id, (int)status, g_get_real_time () / 1e6);
}

gboolean
dw_store_set_run_meta (DwStore *self, gint64 run_id, const char *meta_json, GError **error)
{
  return _dw_store_query_check_writable (self, error)
         && _dw_store_query_run (self, error, "storing a run's metadata",
                                 "UPDATE runs SET meta = ?1 WHERE id = ?2", "ti", meta_json,
                                 run_id);
}

gboolean
dw_store_add_restart (DwStore *self, gint64 run_id, gint64 step, const char *source, GError **error)
{
  return _dw_store_query_check_writable (self, error)
         && _dw_store_query_run (
           self, error, "recording a restart",
           "INSERT OR IGNORE INTO restarts (run_id, step, source) VALUES (?1, ?2, ?3)", "iit",
           run_id, step, source != NULL ? source : "");
}

gboolean
dw_store_add_diagnostic (DwStore *self, gint64 run_id, const char *path, goffset offset,
                         const char *message, GError **error)
{
  return _dw_store_query_check_writable (self, error)
         && _dw_store_query_run (
           self, error, "recording a diagnostic",
           "INSERT OR IGNORE INTO diagnostics (run_id, path, offset, message) "
           "VALUES (?1, ?2, ?3, ?4)",
           "itit", run_id, path, (gint64)offset, message);
}

/* The id of tag @name of @run_id, 0 when it has none, -1 on an error. */
static gint64
dw_store_runs_lookup_tag (DwStore *self, gint64 run_id, const char *name, GError **error)
{
  sqlite3_stmt *stmt = _dw_store_query_cached (self, DW_STORE_STMT_GET_TAG, error);
  gint64 id;
  int found;

  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_text (stmt, 2, name, -1, SQLITE_STATIC);
  found = _dw_store_query_first_row (self, stmt, "looking up a tag", error);
  id = found > 0 ? sqlite3_column_int64 (stmt, 0) : found;
  sqlite3_reset (stmt);
  return id;
}

gint64
dw_store_ensure_tag (DwStore *self, gint64 run_id, const char *name, const char *step_key,
                     GError **error)
{
  g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT "\x1f%s", run_id, name);
  gint64 *cached_id = g_hash_table_lookup (self->tag_cache, key);
  sqlite3_stmt *stmt;
  gint64 id;

  if (cached_id != NULL)
    return *cached_id;
  if (!_dw_store_query_check_writable (self, error))
    return 0;
  id = dw_store_runs_lookup_tag (self, run_id, name, error);
  if (id < 0)
    return 0;
  if (id == 0)
    {
      if ((stmt = _dw_store_query_cached (self, DW_STORE_STMT_INSERT_TAG, error)) == NULL)
        return 0;
      sqlite3_bind_int64 (stmt, 1, run_id);
      sqlite3_bind_text (stmt, 2, name, -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 3, dw_canonical_for_tag (name), -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 4, step_key, -1, SQLITE_STATIC);
      if (!_dw_store_query_step_done (self, stmt, "adding a tag", error))
        return 0;
      id = sqlite3_last_insert_rowid (self->db);
    }
  g_hash_table_insert (self->tag_cache, g_steal_pointer (&key), g_memdup2 (&id, sizeof id));
  return id;
}

/* ------------------------------------------------------------------------------------------ */
/* Readers                                                                                     */

void
dw_run_info_free (DwRunInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->name);
  g_free (info->framework);
  g_free (info->source);
  g_free (info);
}

void
dw_tag_info_free (DwTagInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->name);
  g_free (info->canonical);
  g_free (info);
}

char *
dw_store_get_run_meta (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = _dw_store_query_new (self, error, "SELECT meta FROM runs WHERE id = ?1", "i", run_id);
  if (stmt == NULL
      || _dw_store_query_first_row (self, stmt, "reading a run's metadata", error) <= 0)
    return NULL;
  return g_strdup ((const char *)sqlite3_column_text (stmt, 0));
}

static void
dw_store_runs_diagnostic_cb (sqlite3_stmt *stmt, gpointer out)
{
  g_ptr_array_add (out, g_strdup_printf ("%s: offset %" G_GINT64_FORMAT ": %s",
                                         (const char *)sqlite3_column_text (stmt, 0) ?: "?",
                                         (gint64)sqlite3_column_int64 (stmt, 1),
                                         (const char *)sqlite3_column_text (stmt, 2) ?: "?"));
}

GPtrArray *
dw_store_list_diagnostics (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_free);

  if (!_dw_store_query_rows (self, error, "reading diagnostics", dw_store_runs_diagnostic_cb, out,
                             "SELECT path, offset, message FROM diagnostics WHERE run_id = ?1 "
                             "ORDER BY path, offset, message",
                             "i", run_id))
    return NULL;
  return g_steal_pointer (&out);
}

#define DW_STORE_RUNS_SELECT                                                                     \
  "SELECT id, name, framework, source, first_step, last_step, first_wall_time, last_wall_time, " \
  "status, updated, (SELECT count(*) FROM batches b WHERE b.run_id = runs.id) FROM runs "

static DwRunInfo *
dw_store_runs_from_row (sqlite3_stmt *stmt)
{
  DwRunInfo *info = g_new0 (DwRunInfo, 1);
  double updated = _dw_store_query_column_double_or_nan (stmt, 9);

  info->id = sqlite3_column_int64 (stmt, 0);
  info->name = sqlite3_column_type (stmt, 1) != SQLITE_NULL
                 ? _dw_store_query_column_text_or (stmt, 1, "")
                 : g_strdup_printf ("run %" G_GINT64_FORMAT, info->id);
  info->framework = _dw_store_query_column_text_or (stmt, 2, "unknown");
  info->source = g_strdup ((const char *)sqlite3_column_text (stmt, 3));
  info->first_step
    = sqlite3_column_type (stmt, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64 (stmt, 4);
  info->last_step
    = sqlite3_column_type (stmt, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64 (stmt, 5);
  info->first_wall_time = _dw_store_query_column_double_or_nan (stmt, 6);
  info->last_wall_time = _dw_store_query_column_double_or_nan (stmt, 7);
  info->status = sqlite3_column_int (stmt, 8);
  /* "live" decays: a run nobody appended to for a minute is finished. */
  if (info->status == DW_RUN_STATUS_LIVE
      && (isnan (updated) || g_get_real_time () / 1e6 - updated > 60.0))
    info->status = DW_RUN_STATUS_FINISHED;
  info->n_batches = sqlite3_column_int64 (stmt, 10);
  return info;
}

static void
dw_store_runs_append_cb (sqlite3_stmt *stmt, gpointer runs)
{
  g_ptr_array_add (runs, dw_store_runs_from_row (stmt));
}

GPtrArray *
dw_store_list_runs (DwStore *self, GError **error)
{
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_run_info_free);

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  if (!_dw_store_query_rows (self, error, "listing runs", dw_store_runs_append_cb, runs,
                             DW_STORE_RUNS_SELECT "ORDER BY id DESC", ""))
    return NULL;
  return g_steal_pointer (&runs);
}

DwRunInfo *
dw_store_get_run (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  int found;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = _dw_store_query_new (self, error, DW_STORE_RUNS_SELECT "WHERE id = ?1", "i", run_id);
  if (stmt == NULL || (found = _dw_store_query_first_row (self, stmt, "reading a run", error)) < 0)
    return NULL;
  if (found)
    return dw_store_runs_from_row (stmt);
  g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND, _ ("%s: no run with id %" PRId64),
               self->path, run_id);
  return NULL;
}

DwRunInfo *
dw_store_find_run (DwStore *self, const char *id_or_name, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  char *end = NULL;
  gint64 id;
  int found;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  g_return_val_if_fail (id_or_name != NULL, NULL);
  /* A name wins over an id, so a run named "3" can still be reached. */
  stmt = _dw_store_query_new (self, error, DW_STORE_RUNS_SELECT "WHERE name = ?1", "t", id_or_name);
  if (stmt == NULL || (found = _dw_store_query_first_row (self, stmt, "reading a run", error)) < 0)
    return NULL;
  if (found)
    return dw_store_runs_from_row (stmt);
  id = g_ascii_strtoll (id_or_name, &end, 10);
  if (*id_or_name != '\0' && end != NULL && *end == '\0')
    {
      g_autoptr (GError) local = NULL;
      DwRunInfo *info = dw_store_get_run (self, id, &local);
      if (info != NULL)
        return info;
      if (!g_error_matches (local, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
    }
  g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND, _ ("%s: no run named “%s”"),
               self->path, id_or_name);
  return NULL;
}

/* The generation ingest found printed by the run or by its config (runs.meta), as the map names
 * it; NULL when the run did not print it (or the store has no metadata). @source gets "log" or
 * "config". */
static char *
dw_store_runs_printed_generation (DwStore *self, gint64 run_id, const char **source)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  const char *generation, *said_by;

  stmt = _dw_store_query_new (self, NULL,
                              "SELECT json_extract (meta, '$.generation'), "
                              "json_extract (meta, '$.generation_source') FROM runs "
                              "WHERE id = ?1 AND json_valid (meta)",
                              "i", run_id);
  if (stmt == NULL || _dw_store_query_first_row (self, stmt, "reading a run's metadata", NULL) <= 0)
    return NULL;
  generation = dw_canonical_generation ((const char *)sqlite3_column_text (stmt, 0));
  said_by = (const char *)sqlite3_column_text (stmt, 1);
  if (generation == NULL || (g_strcmp0 (said_by, "log") != 0 && g_strcmp0 (said_by, "config") != 0))
    return NULL;
  if (source != NULL)
    *source = g_strcmp0 (said_by, "log") == 0 ? "log" : "config";
  return g_strdup ((const char *)sqlite3_column_text (stmt, 0));
}

/* The run's tag names (char*), @order_by_name or in the store's order. */
static GPtrArray *
dw_store_runs_tag_names (DwStore *self, gint64 run_id, gboolean order_by_name, GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  if (!_dw_store_query_rows (self, error, "listing tags", _dw_store_query_append_text_cb, names,
                             order_by_name ? "SELECT name FROM tags WHERE run_id = ?1 ORDER BY name"
                                           : "SELECT name FROM tags WHERE run_id = ?1",
                             "i", run_id))
    return NULL;
  return g_steal_pointer (&names);
}

char *
dw_store_get_run_generation (DwStore *self, gint64 run_id, const char **source, GError **error)
{
  g_autoptr (GPtrArray) names = NULL;
  char *printed;
  const char *inferred;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  if (source != NULL)
    *source = NULL;
  if ((printed = dw_store_runs_printed_generation (self, run_id, source)) != NULL)
    return printed;
  if ((names = dw_store_runs_tag_names (self, run_id, FALSE, error)) == NULL)
    return NULL;
  inferred = dw_canonical_infer_generation ((const char *const *)names->pdata, names->len);
  if (inferred != NULL && source != NULL)
    *source = "keys";
  return g_strdup (inferred);
}

/* What a logged key means can depend on the run's generation (verl's rollout_is_mean is the raw
 * ratio up to 0.7.1, the applied weight from 0.8.0), and a tag is stored before the run's other
 * keys are known: so the canonical name of each tag is resolved when read, under the generation
 * the run printed (runs.meta), else the one its whole key set shows (dw-canonical.h). The stored
 * column keeps the key-only guess. */
static void
dw_store_runs_resolve_canonical (DwStore *self, gint64 run_id, GPtrArray *tags)
{
  g_autofree const char **names = g_new (const char *, tags->len + 1);
  g_autofree char *printed = dw_store_runs_printed_generation (self, run_id, NULL);
  const char *generation = printed;

  for (guint i = 0; i < tags->len; i++)
    names[i] = ((DwTagInfo *)tags->pdata[i])->name;
  if (generation == NULL)
    generation = dw_canonical_infer_generation (names, tags->len);
  for (guint i = 0; i < tags->len; i++)
    {
      DwTagInfo *info = tags->pdata[i];

      g_free (info->canonical);
      info->canonical = g_strdup (dw_canonical_for_key (info->name, generation));
    }
}

GPtrArray *
dw_store_list_tag_names (DwStore *self, gint64 run_id, GError **error)
{
  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  return dw_store_runs_tag_names (self, run_id, TRUE, error);
}

static void
dw_store_runs_tag_cb (sqlite3_stmt *stmt, gpointer tags)
{
  DwTagInfo *info = g_new0 (DwTagInfo, 1);

  info->id = sqlite3_column_int64 (stmt, 0);
  info->name = _dw_store_query_column_text_or (stmt, 1, "");
  info->canonical = g_strdup ((const char *)sqlite3_column_text (stmt, 2));
  info->n_points = sqlite3_column_int64 (stmt, 3);
  g_ptr_array_add (tags, info);
}

GPtrArray *
dw_store_list_tags (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (GPtrArray) tags = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_tag_info_free);

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  if (!_dw_store_query_rows (self, error, "listing tags", dw_store_runs_tag_cb, tags,
                             "SELECT id, name, canonical, (SELECT count(*) FROM points p WHERE "
                             "p.tag_id = tags.id) FROM tags WHERE run_id = ?1 ORDER BY name",
                             "i", run_id))
    return NULL;
  dw_store_runs_resolve_canonical (self, run_id, tags);
  return g_steal_pointer (&tags);
}

/* The run's tags (id and name only: no point counts), their canonical names resolved. */
GPtrArray *
_dw_store_runs_list_tag_ids (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (GPtrArray) tags = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_tag_info_free);

  if (!_dw_store_query_rows (self, error, "looking up a tag", dw_store_runs_tag_cb, tags,
                             "SELECT id, name, NULL, 0 FROM tags WHERE run_id = ?1", "i", run_id))
    return NULL;
  dw_store_runs_resolve_canonical (self, run_id, tags);
  return g_steal_pointer (&tags);
}
