/* dw-store.c — the SQLite store: the object, its limits, integrity, transactions and dump
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The schema and opening are in dw-store-open.c; runs and tags in dw-store-runs.c; points in
 * dw-store-points.c; batches in dw-store-batches.c; file bookkeeping in dw-store-files.c; the
 * query helpers every one of them uses in dw-store-query.c (dw-store-private.h lists them).
 */
#include "config.h"

#include <glib/gi18n.h>

#include "dw-store-private.h"

/* clang-format off */
G_DEFINE_QUARK (dw-store-error-quark, dw_store_error)
/* clang-format on */

G_DEFINE_FINAL_TYPE (DwStore, dw_store, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_PATH,
  PROP_READ_ONLY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* ------------------------------------------------------------------------------------------ */

/* GObject                                                                                     */

static void
dw_store_finalize (GObject *object)
{
  DwStore *self = DW_STORE (object);

  for (guint i = 0; i < DW_STORE_N_STMTS; i++)
    g_clear_pointer (&self->stmts[i], sqlite3_finalize);
  if (self->db != NULL)
    sqlite3_close (self->db);
  self->db = NULL;
  g_clear_pointer (&self->tag_cache, g_hash_table_unref);
  g_clear_pointer (&self->run_acc, g_hash_table_unref);
  g_clear_pointer (&self->path, g_free);
  G_OBJECT_CLASS (dw_store_parent_class)->finalize (object);
}

static void
dw_store_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwStore *self = DW_STORE (object);

  switch (prop_id)
    {
    case PROP_PATH:
      g_value_set_string (value, self->path);
      break;
    case PROP_READ_ONLY:
      g_value_set_boolean (value, self->read_only);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_store_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  DwStore *self = DW_STORE (object);

  switch (prop_id)
    {
    case PROP_PATH:
      g_free (self->path);
      self->path = g_value_dup_string (value);
      break;
    case PROP_READ_ONLY:
      self->read_only = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_store_class_init (DwStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = dw_store_finalize;
  object_class->get_property = dw_store_get_property;
  object_class->set_property = dw_store_set_property;

  properties[PROP_PATH] = g_param_spec_string (
    "path", NULL, NULL, NULL, G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_READ_ONLY]
    = g_param_spec_boolean ("read-only", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
dw_store_init (DwStore *self)
{
  self->busy_timeout_ms = 5000;
  self->keep_tokens = DW_STORE_DEFAULT_KEEP_TOKENS;
  self->tag_cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->run_acc = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
}

const char *
dw_store_get_path (DwStore *self)
{
  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  return self->path;
}

gboolean
dw_store_is_read_only (DwStore *self)
{
  g_return_val_if_fail (DW_IS_STORE (self), TRUE);
  return self->read_only;
}

void
dw_store_set_busy_timeout (DwStore *self, int timeout_ms)
{
  g_return_if_fail (DW_IS_STORE (self));
  self->busy_timeout_ms = timeout_ms;
  sqlite3_busy_timeout (self->db, timeout_ms);
}

gboolean
dw_store_set_max_size (DwStore *self, gint64 bytes, GError **error)
{
  g_autofree char *sql = NULL;
  gboolean ok;
  gint64 page_size;

  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  page_size = _dw_store_query_int (self, "PRAGMA page_size", "reading the page size", error, &ok);
  if (!ok)
    return FALSE;
  sql = g_strdup_printf ("PRAGMA max_page_count = %" G_GINT64_FORMAT,
                         bytes > 0 ? MAX (bytes / MAX (page_size, 1), 1) : (gint64)G_MAXUINT32 - 1);
  return _dw_store_query_exec (self, sql, "limiting the size", error);
}

void
dw_store_set_max_value_size (DwStore *self, int bytes)
{
  g_return_if_fail (DW_IS_STORE (self));
  sqlite3_limit (self->db, SQLITE_LIMIT_LENGTH, bytes);
}

gboolean
dw_store_check_integrity (DwStore *self, GError **error)
{
  const char *checks[] = { "PRAGMA integrity_check", "PRAGMA foreign_key_check" };

  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  for (guint i = 0; i < G_N_ELEMENTS (checks); i++)
    {
      g_autoptr (sqlite3_stmt) stmt = _dw_store_query_prepare (self, checks[i], error);
      const char *first;
      int found;

      if (stmt == NULL
          || (found = _dw_store_query_first_row (self, stmt, "checking integrity", error)) < 0)
        return FALSE;
      first = found ? (const char *)sqlite3_column_text (stmt, 0) : NULL;
      if (!found || (i == 0 && g_strcmp0 (first, "ok") == 0))
        continue;
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                   _ ("%s: integrity check failed: %s"), self->path,
                   i == 0 ? first : "foreign key violation");
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Transactions                                                                                */

/* The write-ahead log of a writable store was deleted while it was open (a cleanup script, a
 * user removing "stray" files): SQLite goes on writing into the unlinked file, which no other
 * process sees and which is lost if this one dies, so an acknowledged write could vanish. Its
 * frames are copied into the store file (a checkpoint through the still open descriptor), then
 * the store is opened again with a new log. */
static gboolean
dw_store_recover_lost_wal (DwStore *self, GError **error)
{
  g_autofree char *wal = g_strconcat (self->path, "-wal", NULL);

  if (!self->wal_seen || g_file_test (wal, G_FILE_TEST_EXISTS))
    return TRUE;
  self->wal_seen = FALSE;
  g_log_structured (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "MESSAGE",
                    "%s: the write-ahead log was deleted while the store was open; its contents "
                    "are written into the store and the store is opened again",
                    self->path);
  if (!_dw_store_query_exec (self, "PRAGMA wal_checkpoint(FULL)",
                             "saving the deleted write-ahead log", error))
    return FALSE;
  for (guint i = 0; i < DW_STORE_N_STMTS; i++)
    g_clear_pointer (&self->stmts[i], sqlite3_finalize);
  sqlite3_close (self->db);
  self->db = NULL;
  g_hash_table_remove_all (self->tag_cache);
  return _dw_store_open_db (self, error);
}

gboolean
dw_store_begin (DwStore *self, GError **error)
{
  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  if (!_dw_store_query_check_writable (self, error) || !dw_store_recover_lost_wal (self, error))
    return FALSE;
  return _dw_store_query_exec (self, "BEGIN IMMEDIATE", "starting a write", error);
}

gboolean
dw_store_begin_appending (DwStore *self, GError **error)
{
  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  if (!_dw_store_query_check_writable (self, error)
      || !_dw_store_query_exec (self, "PRAGMA foreign_keys = OFF", "starting a write", error))
    return FALSE;
  self->foreign_keys_off = TRUE;
  if (dw_store_begin (self, error))
    return TRUE;
  sqlite3_exec (self->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
  self->foreign_keys_off = FALSE;
  return FALSE;
}

/* After dw_store_begin_appending()'s transaction (a no-op inside one, so after it). */
static void
resume_foreign_keys (DwStore *self)
{
  if (self->foreign_keys_off && sqlite3_get_autocommit (self->db))
    {
      sqlite3_exec (self->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
      self->foreign_keys_off = FALSE;
    }
}

gboolean
dw_store_in_transaction (DwStore *self)
{
  return !sqlite3_get_autocommit (self->db);
}

gboolean
dw_store_commit (DwStore *self, GError **error)
{
  g_return_val_if_fail (DW_IS_STORE (self), FALSE);

  if (!_dw_store_points_flush_runs (self, error))
    {
      dw_store_rollback (self);
      return FALSE;
    }
  if (!_dw_store_query_exec (self, "COMMIT", "committing", error))
    {
      dw_store_rollback (self);
      return FALSE;
    }
  resume_foreign_keys (self);
  if (!self->wal_seen)
    {
      g_autofree char *wal = g_strconcat (self->path, "-wal", NULL);
      self->wal_seen = g_file_test (wal, G_FILE_TEST_EXISTS);
    }
  return TRUE;
}

void
dw_store_rollback (DwStore *self)
{
  g_return_if_fail (DW_IS_STORE (self));
  _dw_store_points_forget_runs (self);
  /* Tags created in the rolled-back transaction are gone: forget the cache. */
  g_hash_table_remove_all (self->tag_cache);
  if (!sqlite3_get_autocommit (self->db))
    sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
  resume_foreign_keys (self);
}

/* ------------------------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------------------------ */
/* Dump                                                                                        */

/* One row of the dump: its columns tab-separated, a blob by its SHA-256. */
static void
dw_store_dump_row_cb (sqlite3_stmt *stmt, gpointer user_data)
{
  GString *out = user_data;
  int n_columns = sqlite3_column_count (stmt);

  for (int col = 0; col < n_columns; col++)
    {
      if (col > 0)
        g_string_append_c (out, '\t');
      switch (sqlite3_column_type (stmt, col))
        {
        case SQLITE_NULL:
          g_string_append (out, "NULL");
          break;
        case SQLITE_INTEGER:
          g_string_append_printf (out, "%" G_GINT64_FORMAT,
                                  (gint64)sqlite3_column_int64 (stmt, col));
          break;
        case SQLITE_FLOAT:
          {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append (
              out, g_ascii_formatd (buf, sizeof buf, "%.17g", sqlite3_column_double (stmt, col)));
            break;
          }
        case SQLITE_BLOB:
          {
            g_autofree char *sum = g_compute_checksum_for_data (
              G_CHECKSUM_SHA256, sqlite3_column_blob (stmt, col), sqlite3_column_bytes (stmt, col));
            g_string_append_printf (out, "blob:%s", sum);
            break;
          }
        default:
          g_string_append (out, (const char *)sqlite3_column_text (stmt, col));
          break;
        }
    }
  g_string_append_c (out, '\n');
}

char *
dw_store_dump (DwStore *self, GError **error)
{
  static const char *const queries[][2] = {
    { "runs", "SELECT name, framework, source, meta, first_step, last_step, first_wall_time, "
              "last_wall_time FROM runs ORDER BY name" },
    { "tags", "SELECT r.name, t.name, t.canonical, t.step_key FROM tags t JOIN runs r ON "
              "r.id = t.run_id ORDER BY r.name, t.name" },
    { "points", "SELECT r.name, t.name, p.step, p.wall_time, p.value, p.special, p.rank FROM "
                "points p "
                "JOIN tags t ON t.id = p.tag_id JOIN runs r ON r.id = t.run_id "
                "ORDER BY r.name, t.name, p.step" },
    { "restarts", "SELECT r.name, x.step, x.source FROM restarts x JOIN runs r ON "
                  "r.id = x.run_id ORDER BY r.name, x.step, x.source" },
    { "batches", "SELECT r.name, b.step, b.rows, b.cols, b.lp_dtype, b.source_lp_dtype, "
                 "b.mask_dtype, b.flags, b.source, b.n_tokens, b.old_log_prob, "
                 "b.rollout_log_prob, b.response_mask, b.advantages FROM batches b JOIN runs r "
                 "ON r.id = b.run_id ORDER BY r.name, b.step" },
    { "sequences", "SELECT r.name, b.step, s.row, s.n_valid, s.n, s.sum_l, s.sum_old, "
                   "s.sum_roll, s.sum_k1, s.sum_k2, s.sum_k3, s.max_k1, s.max_k2, s.max_k3, "
                   "s.min_l FROM sequences s JOIN batches b ON b.id = s.batch_id JOIN runs r "
                   "ON r.id = b.run_id ORDER BY r.name, b.step, s.row" },
    { "files", "SELECT f.path, r.name, f.format, f.offset, f.prefix_len, f.prefix_crc, "
               "f.max_step FROM files f JOIN runs r ON r.id = f.run_id ORDER BY f.path" },
    { "diagnostics", "SELECT r.name, d.path, d.offset, d.message FROM diagnostics d JOIN runs r "
                     "ON r.id = d.run_id ORDER BY r.name, d.path, d.offset, d.message" },
    { "batch_refs", "SELECT r.name, b.step, x.path, x.size FROM batch_refs x JOIN batches b ON "
                    "b.id = x.batch_id JOIN runs r ON r.id = b.run_id ORDER BY r.name, b.step" },
    { "token_summaries", "SELECT r.name, b.step, t.n_tokens, t.n_low, t.n_high, t.tails, t.bins, "
                         "t.kept_rows FROM token_summaries t JOIN batches b ON b.id = t.batch_id "
                         "JOIN runs r ON r.id = b.run_id ORDER BY r.name, b.step" },
  };
  g_autoptr (GString) out = g_string_new (NULL);

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  for (guint i = 0; i < G_N_ELEMENTS (queries); i++)
    {
      g_string_append_printf (out, "# %s\n", queries[i][0]);
      if (!_dw_store_query_rows (self, error, "dumping the store", dw_store_dump_row_cb, out,
                                 queries[i][1], ""))
        return NULL;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}
