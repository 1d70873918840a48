/* dw-store.c — the SQLite store
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Layout (schema version 5, PRAGMA user_version; PRAGMA application_id 'DWst'):
 *   runs(id, name UNIQUE, framework, source, status, first/last step and wall time, updated)
 *   tags(id, run_id, name, canonical, step_key)               UNIQUE(run_id, name)
 *   points(tag_id, step, wall_time, value, special, rank)     PRIMARY KEY(tag_id, step)
 *       SQLite stores a NaN REAL as NULL and −0.0 as 0, so special says 1: NaN (value NULL),
 *       2: −0.0; ±inf are plain REALs.
 *       A second write of (tag, step) replaces the first (newest write wins) unless it comes
 *       from a less precise source (rank: tfevents float32 1 < JSONL float64 2).
 *   restarts(run_id, step, source)                            steps where a restart was seen
 *   runs.meta (schema 3): JSON object of what ingest found out about the run
 * (dw_store_set_run_meta) batches(id, run_id, step, rows, cols, dtypes, flags, source, n_tokens,
 * log-prob blobs…) the padded arrays as raw little-endian blobs in the batch's own dtypes
 *   sequences(batch_id, row, n_valid, n, sums…)              per-sequence statistics
 *   files(id, run_id, path, format, dev, inode, size, mtime, offset, prefix crc, max_step, state)
 *   diagnostics(run_id, path, offset, message)               bad input seen while ingesting
 * WAL journal, synchronous=NORMAL, foreign keys on.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <inttypes.h>

#include "dw-batch-reader.h"
#include "dw-canonical.h"
#include "dw-correction.h"
#include "dw-store-writer.h"

/* clang-format off */
G_DEFINE_QUARK (dw-store-error-quark, dw_store_error)
/* clang-format on */

typedef enum
{
  STMT_PUT_POINT,
  STMT_PUT_POINTS, /* PUT_POINTS_ROWS rows per statement */
  STMT_GET_TAG,
  STMT_INSERT_TAG,
  STMT_FLUSH_RUN,
  N_STMTS
} StmtId;

static const char *const stmt_sql[N_STMTS] = {
  [STMT_PUT_POINT] = "INSERT INTO points (tag_id, step, wall_time, value, special, rank) "
                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (tag_id, step) DO UPDATE SET "
                     "wall_time = excluded.wall_time, value = excluded.value, "
                     "special = excluded.special, rank = excluded.rank "
                     "WHERE excluded.rank >= points.rank",
  [STMT_PUT_POINTS] = NULL, /* built by put_points_sql () */
  [STMT_GET_TAG] = "SELECT id FROM tags WHERE run_id = ?1 AND name = ?2",
  [STMT_INSERT_TAG]
  = "INSERT INTO tags (run_id, name, canonical, step_key) VALUES (?1, ?2, ?3, ?4)",
  [STMT_FLUSH_RUN]
  = "UPDATE runs SET "
    "first_step = CASE WHEN first_step IS NULL OR ?2 < first_step THEN ?2 ELSE first_step END, "
    "last_step = CASE WHEN last_step IS NULL OR ?3 > last_step THEN ?3 ELSE last_step END, "
    "first_wall_time = CASE WHEN ?4 IS NULL THEN first_wall_time WHEN first_wall_time IS NULL "
    "  OR ?4 < first_wall_time THEN ?4 ELSE first_wall_time END, "
    "last_wall_time = CASE WHEN ?5 IS NULL THEN last_wall_time WHEN last_wall_time IS NULL "
    "  OR ?5 > last_wall_time THEN ?5 ELSE last_wall_time END, "
    "updated = ?6 WHERE id = ?1",
};

typedef struct
{
  gint64 first_step, last_step;
  double first_wall, last_wall;
} RunAcc;

struct _DwStore
{
  GObject parent_instance;

  char *path;
  sqlite3 *db;
  gboolean read_only;
  int busy_timeout_ms;
  sqlite3_stmt *stmts[N_STMTS];
  GHashTable *tag_cache; /* "run_id\x1fname" → gint64 id */
  GHashTable *run_acc;   /* gint64* run id → RunAcc*, flushed at commit */
  gint64 acc_run_id;     /* one-entry cache of run_acc */
  int rank;              /* precision rank of the points being written */
  RunAcc *acc;
  gboolean wal_seen; /* the -wal file existed after our last commit (recover_lost_wal) */
};

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
/* Schema                                                                                      */

/* migrations[v] brings a store from user_version v to v + 1. */
static const char *const migrations[DW_STORE_SCHEMA_VERSION] = {
  /* 0 → 1 */
  "CREATE TABLE runs ("
  "  id INTEGER PRIMARY KEY,"
  "  name TEXT NOT NULL UNIQUE,"
  "  framework TEXT NOT NULL DEFAULT 'unknown',"
  "  source TEXT,"
  "  status INTEGER NOT NULL DEFAULT 0,"
  "  first_step INTEGER, last_step INTEGER,"
  "  first_wall_time REAL, last_wall_time REAL,"
  "  updated REAL);"
  "CREATE TABLE tags ("
  "  id INTEGER PRIMARY KEY,"
  "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  name TEXT NOT NULL,"
  "  canonical TEXT,"
  "  step_key TEXT,"
  "  UNIQUE (run_id, name));"
  "CREATE INDEX tags_canonical ON tags (run_id, canonical);"
  "CREATE TABLE points ("
  "  tag_id INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,"
  "  step INTEGER NOT NULL,"
  "  wall_time REAL,"
  "  value REAL,"
  "  special INTEGER NOT NULL DEFAULT 0,"
  "  PRIMARY KEY (tag_id, step)) WITHOUT ROWID;"
  "CREATE TABLE restarts ("
  "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  step INTEGER NOT NULL,"
  "  source TEXT NOT NULL DEFAULT '',"
  "  PRIMARY KEY (run_id, step, source)) WITHOUT ROWID;"
  "CREATE TABLE batches ("
  "  id INTEGER PRIMARY KEY,"
  "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  step INTEGER NOT NULL,"
  "  rows INTEGER NOT NULL, cols INTEGER NOT NULL,"
  "  lp_dtype INTEGER NOT NULL, source_lp_dtype INTEGER NOT NULL, mask_dtype INTEGER NOT NULL,"
  "  flags INTEGER NOT NULL,"
  "  source TEXT,"
  "  n_tokens INTEGER NOT NULL,"
  "  old_log_prob BLOB NOT NULL, rollout_log_prob BLOB NOT NULL, response_mask BLOB NOT NULL,"
  "  advantages BLOB,"
  "  UNIQUE (run_id, step));"
  "CREATE TABLE sequences ("
  "  batch_id INTEGER NOT NULL REFERENCES batches (id) ON DELETE CASCADE,"
  "  row INTEGER NOT NULL,"
  "  n_valid INTEGER NOT NULL, n REAL, sum_l REAL, sum_old REAL, sum_roll REAL,"
  "  sum_k1 REAL, sum_k2 REAL, sum_k3 REAL, max_k1 REAL, max_k2 REAL, max_k3 REAL, min_l REAL,"
  "  PRIMARY KEY (batch_id, row)) WITHOUT ROWID;"
  "CREATE TABLE files ("
  "  id INTEGER PRIMARY KEY,"
  "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  path TEXT NOT NULL UNIQUE,"
  "  format INTEGER NOT NULL,"
  "  dev INTEGER, inode INTEGER, size INTEGER, mtime_us INTEGER,"
  "  offset INTEGER NOT NULL DEFAULT 0,"
  "  prefix_len INTEGER NOT NULL DEFAULT 0, prefix_crc INTEGER NOT NULL DEFAULT 0,"
  "  max_step INTEGER,"
  "  state BLOB);"
  "CREATE TABLE diagnostics ("
  "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  path TEXT NOT NULL,"
  "  offset INTEGER NOT NULL,"
  "  message TEXT NOT NULL,"
  "  UNIQUE (run_id, path, offset, message));",
  /* 1 → 2: precision rank of a point's source, so a float32 copy (tfevents) of a value never
   * replaces the float64 one (JSONL) of the same step, whatever order they arrive in. */
  "ALTER TABLE points ADD COLUMN rank INTEGER NOT NULL DEFAULT 0;",
  /* 2 → 3: what ingest found out about a run (framework version, generation, its
   * rollout-correction config, project/experiment), as a JSON object */
  "ALTER TABLE runs ADD COLUMN meta TEXT;",
  /* 3 → 4: a batch's response token ids ([B,T] int64) and rewards ([B] float64) when its
   * source has them (slime dumps, the verl hook), for `driftwatch-cli tokens`. */
  "CREATE TABLE batch_extras ("
  "  batch_id INTEGER PRIMARY KEY REFERENCES batches (id) ON DELETE CASCADE,"
  "  token_ids BLOB, rewards BLOB);",
  /* 4 → 5: restart detection asks, per file, for the largest step of the run's other files of
   * its format; without an index that read every file record per file (quadratic ingest). */
  "CREATE INDEX IF NOT EXISTS files_run_format ON files (run_id, format, max_step);",
};

/* ------------------------------------------------------------------------------------------ */
/* Errors                                                                                      */

static void
set_error (DwStore *self, GError **error, int rc, const char *what)
{
  const char *msg = self->db != NULL ? sqlite3_errmsg (self->db) : sqlite3_errstr (rc);

  switch (rc & 0xff)
    {
    case SQLITE_FULL:
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FULL,
                   _ ("%s: disk full while %s; the transaction was rolled back (%s)"), self->path,
                   what, msg);
      break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_BUSY,
                   _ ("%s: the store is locked by another process (another driftwatch-cli ingest "
                      "or watch, or the app, is writing); gave up %s after %d ms"),
                   self->path, what, self->busy_timeout_ms);
      break;
    case SQLITE_READONLY:
    case SQLITE_PERM:
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_READ_ONLY,
                   _ ("%s: the store is read-only; cannot finish %s"), self->path, what);
      break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                   _ ("%s: not a Driftwatch store or damaged (%s) while %s"), self->path, msg,
                   what);
      break;
    default:
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED, _ ("%s: %s failed: %s"),
                   self->path, what, msg);
      break;
    }
}

static gboolean
check_writable (DwStore *self, GError **error)
{
  if (self->read_only)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_READ_ONLY,
                   _ ("%s: the store was opened read-only"), self->path);
      return FALSE;
    }
  return TRUE;
}

static gboolean
exec (DwStore *self, const char *sql, const char *what, GError **error)
{
  int rc = sqlite3_exec (self->db, sql, NULL, NULL, NULL);

  if (rc != SQLITE_OK)
    {
      set_error (self, error, rc, what);
      return FALSE;
    }
  return TRUE;
}

static sqlite3_stmt *
prepare (DwStore *self, const char *sql, GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (self->db, sql, -1, &stmt, NULL);

  if (rc != SQLITE_OK)
    {
      set_error (self, error, rc, "preparing a query");
      return NULL;
    }
  return stmt;
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

/* A text column as a new string; @fallback when the (crafted or damaged) store holds NULL. */
static char *
column_text_or (sqlite3_stmt *stmt, int col, const char *fallback)
{
  const char *text = (const char *)sqlite3_column_text (stmt, col);

  return g_strdup (text != NULL ? text : fallback);
}

#define PUT_POINTS_ROWS 32

/* STMT_PUT_POINT with PUT_POINTS_ROWS rows of VALUES: one statement step per 32 points. */
static char *
put_points_sql (void)
{
  const char *one = stmt_sql[STMT_PUT_POINT];
  const char *values = strstr (one, "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  const char *rest = values + strlen ("VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  GString *sql = g_string_new_len (one, values - one);

  g_string_append (sql, "VALUES ");
  for (int r = 0; r < PUT_POINTS_ROWS; r++)
    g_string_append (sql, r ? ", (?, ?, ?, ?, ?, ?)" : "(?, ?, ?, ?, ?, ?)");
  g_string_append (sql, rest);
  return g_string_free (sql, FALSE);
}

static sqlite3_stmt *
cached (DwStore *self, StmtId id, GError **error)
{
  if (self->stmts[id] == NULL && id == STMT_PUT_POINTS)
    {
      g_autofree char *sql = put_points_sql ();
      self->stmts[id] = prepare (self, sql, error);
    }
  else if (self->stmts[id] == NULL)
    self->stmts[id] = prepare (self, stmt_sql[id], error);
  else
    sqlite3_reset (self->stmts[id]);
  return self->stmts[id];
}

/* Runs a statement that returns no rows (or ignores them), resetting it after. */
static gboolean
step_done (DwStore *self, sqlite3_stmt *stmt, const char *what, GError **error)
{
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    ;
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, what);
      return FALSE;
    }
  return TRUE;
}

static gint64
query_int (DwStore *self, const char *sql, const char *what, GError **error, gboolean *ok)
{
  g_autoptr (sqlite3_stmt) stmt = prepare (self, sql, error);
  gint64 v = 0;
  int rc;

  *ok = FALSE;
  if (stmt == NULL)
    return 0;
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    v = sqlite3_column_int64 (stmt, 0);
  else if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, what);
      return 0;
    }
  *ok = TRUE;
  return v;
}

/* ------------------------------------------------------------------------------------------ */
/* GObject                                                                                     */

static void
dw_store_finalize (GObject *object)
{
  DwStore *self = DW_STORE (object);

  for (guint i = 0; i < N_STMTS; i++)
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
  self->tag_cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->run_acc = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
}

/* Brings the schema up to DW_STORE_SCHEMA_VERSION inside one write transaction. */
static gboolean
migrate (DwStore *self, GError **error)
{
  gboolean ok;
  gint64 version;

  if (!exec (self, "BEGIN IMMEDIATE", "creating the schema", error))
    return FALSE;
  /* Another process may have created or upgraded it meanwhile: read again under the lock. */
  version = query_int (self, "PRAGMA user_version", "reading the schema version", error, &ok);
  if (!ok)
    goto fail;
  if (version < 0)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                   _ ("%s: damaged Driftwatch store (schema version %" PRId64
                      "); the file was left untouched"),
                   self->path, version);
      goto fail;
    }
  if (version > DW_STORE_SCHEMA_VERSION)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NEWER_SCHEMA,
                   _ ("%s: written by a newer Driftwatch (schema version %" PRId64
                      ", this version reads up to %d); the file was left untouched"),
                   self->path, version, DW_STORE_SCHEMA_VERSION);
      goto fail;
    }
  for (gint64 v = version; v < DW_STORE_SCHEMA_VERSION; v++)
    if (!exec (self, migrations[v], "migrating the schema", error))
      goto fail;
  if (version < DW_STORE_SCHEMA_VERSION)
    {
      g_autofree char *sql
        = g_strdup_printf ("PRAGMA application_id = %d; PRAGMA user_version = %d",
                           DW_STORE_APPLICATION_ID, DW_STORE_SCHEMA_VERSION);
      if (!exec (self, sql, "setting the schema version", error))
        goto fail;
    }
  if (!exec (self, "COMMIT", "creating the schema", error))
    goto fail;
  return TRUE;

fail:
  sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
  return FALSE;
}

/* Switching a rollback-journal file to WAL needs an exclusive lock. When two processes open a new
 * store at once, each holding a shared lock while asking for the exclusive one, SQLite breaks the
 * deadlock by returning SQLITE_BUSY at once, without calling the busy handler; so retry here, up to
 * the busy timeout like every other lock wait. */
static gboolean
switch_to_wal (DwStore *self, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)self->busy_timeout_ms * 1000;
  int rc;

  while ((rc = sqlite3_exec (self->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL)) != SQLITE_OK
         && ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
         && g_get_monotonic_time () < deadline)
    g_usleep (5000 + g_random_int_range (0, 10000));
  if (rc != SQLITE_OK)
    {
      set_error (self, error, rc, "switching to WAL");
      return FALSE;
    }
  return TRUE;
}

/* An SQLite file is a whole number of pages. One that is not (a truncated copy, a 121-byte
 * fragment) reads as an empty database, and creating the schema in it and rolling back cut it to
 * nothing: refused, untouched, before anything is written. */
static gboolean
whole_pages (DwStore *self, GError **error)
{
  GStatBuf st;
  gboolean ok;
  gint64 page_size = query_int (self, "PRAGMA page_size", "reading the page size", error, &ok);

  if (!ok)
    return FALSE;
  if (g_stat (self->path, &st) != 0 || page_size <= 0 || st.st_size % page_size == 0)
    return TRUE;
  g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
               _ ("%s: damaged SQLite file (%" PRId64 " bytes, not a whole number of "
                  "%" PRId64 "-byte pages); the file was left untouched"),
               self->path, (int64_t)st.st_size, (int64_t)page_size);
  return FALSE;
}

static gboolean
on_read_only_fs (const char *path)
{
  struct statvfs fs;

  return statvfs (path, &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
}

/* "file:PATH?immutable=1" with the characters a URI path cannot hold escaped */
static char *
immutable_uri (const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autofree char *escaped = g_uri_escape_string (abs, "/", FALSE);

  return g_strconcat ("file:", escaped, "?immutable=1", NULL);
}

static gboolean
open_db (DwStore *self, GError **error)
{
  int flags = self->read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  gint64 version, app_id, n_tables;
  gboolean ok;
  int rc;

  if (!self->read_only)
    {
      g_autofree char *dir = g_path_get_dirname (self->path);
      if (g_mkdir_with_parents (dir, 0755) != 0)
        {
          int saved = errno;
          g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED,
                       _ ("%s: cannot create the folder: %s"), dir, g_strerror (saved));
          return FALSE;
        }
      /* A store the user cannot write (permissions) is opened read-only. */
      if (g_file_test (self->path, G_FILE_TEST_EXISTS) && access (self->path, W_OK) != 0)
        {
          self->read_only = TRUE;
          flags = SQLITE_OPEN_READONLY;
        }
    }

  if (self->read_only && on_read_only_fs (self->path))
    {
      /* a WAL store cannot be opened read-only where its -shm index cannot be created (a
       * read-only mount, a snapshot): nobody can write there, so SQLite may treat the file as
       * immutable and read it without any lock or index */
      g_autofree char *uri = immutable_uri (self->path);
      rc = sqlite3_open_v2 (uri, &self->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    }
  else
    rc = sqlite3_open_v2 (self->path, &self->db, flags, NULL);
  if (rc != SQLITE_OK)
    {
      if (self->read_only && !g_file_test (self->path, G_FILE_TEST_EXISTS))
        g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND, _ ("%s: no such store"),
                     self->path);
      else
        set_error (self, error, rc, "opening");
      return FALSE;
    }
  sqlite3_extended_result_codes (self->db, 0);
  sqlite3_busy_timeout (self->db, self->busy_timeout_ms);

  /* Look before writing anything: a newer or foreign file must stay untouched. */
  version = query_int (self, "PRAGMA user_version", "reading the schema version", error, &ok);
  if (!ok)
    return FALSE;
  app_id = query_int (self, "PRAGMA application_id", "reading the application id", error, &ok);
  if (!ok)
    return FALSE;
  n_tables
    = query_int (self, "SELECT count(*) FROM sqlite_master", "reading the schema", error, &ok);
  if (!ok)
    return FALSE;
  if (version > DW_STORE_SCHEMA_VERSION && app_id == DW_STORE_APPLICATION_ID)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NEWER_SCHEMA,
                   _ ("%s: written by a newer Driftwatch (schema version %" PRId64
                      ", this version reads up to %d); the file was left untouched"),
                   self->path, version, DW_STORE_SCHEMA_VERSION);
      return FALSE;
    }
  if (!self->read_only && !whole_pages (self, error))
    return FALSE;
  if ((n_tables > 0 || version != 0) && app_id != DW_STORE_APPLICATION_ID)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                   _ ("%s: an SQLite file, but not a Driftwatch store; the file was left "
                      "untouched"),
                   self->path);
      return FALSE;
    }

  if (version < 0)
    {
      /* migrations[] is indexed by the version: a negative one is damage, never a migration */
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                   _ ("%s: damaged Driftwatch store (schema version %" PRId64
                      "); the file was left untouched"),
                   self->path, version);
      return FALSE;
    }
  if (self->read_only)
    {
      if (version < DW_STORE_SCHEMA_VERSION)
        {
          g_set_error (
            error, DW_STORE_ERROR, DW_STORE_ERROR_READ_ONLY,
            _ ("%s: the store needs an upgrade (schema version %" PRId64 ") but is read-only"),
            self->path, version);
          return FALSE;
        }
      return exec (self, "PRAGMA foreign_keys = ON", "configuring", error);
    }

  /* migrate before switching to WAL: a migration that fails (a damaged store) is rolled back
   * and leaves the file exactly as it was */
  if (!exec (self, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", "configuring", error))
    return FALSE;
  if (version < DW_STORE_SCHEMA_VERSION && !migrate (self, error))
    return FALSE;
  if (!switch_to_wal (self, error))
    return FALSE;

  return TRUE;
}

static DwStore *
store_open (const char *path, gboolean read_only, GError **error)
{
  g_autofree char *default_path = NULL;
  g_autoptr (DwStore) self = NULL;

  if (path == NULL)
    path = default_path
      = g_build_filename (g_get_user_data_dir (), "driftwatch", "driftwatch.db", NULL);
  if (*path == '\0')
    {
      /* SQLite opens "" as a private temporary database: everything written would be lost */
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED,
                   _ ("the store path is empty (give --db a file name)"));
      return NULL;
    }
  self = g_object_new (DW_TYPE_STORE, "path", path, "read-only", read_only, NULL);
  if (!open_db (self, error))
    return NULL;
  return g_steal_pointer (&self);
}

DwStore *
dw_store_open (const char *path, GError **error)
{
  return store_open (path, FALSE, error);
}

DwStore *
dw_store_open_read_only (const char *path, GError **error)
{
  return store_open (path, TRUE, error);
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
  page_size = query_int (self, "PRAGMA page_size", "reading the page size", error, &ok);
  if (!ok)
    return FALSE;
  sql = g_strdup_printf ("PRAGMA max_page_count = %" G_GINT64_FORMAT,
                         bytes > 0 ? MAX (bytes / MAX (page_size, 1), 1) : (gint64)G_MAXUINT32 - 1);
  return exec (self, sql, "limiting the size", error);
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
  g_autoptr (sqlite3_stmt) stmt = NULL;
  const char *checks[] = { "PRAGMA integrity_check", "PRAGMA foreign_key_check" };

  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  for (guint i = 0; i < G_N_ELEMENTS (checks); i++)
    {
      int rc;

      g_clear_pointer (&stmt, sqlite3_finalize);
      if ((stmt = prepare (self, checks[i], error)) == NULL)
        return FALSE;
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        {
          const char *first = (const char *)sqlite3_column_text (stmt, 0);
          if (i == 0 && g_strcmp0 (first, "ok") == 0)
            continue;
          g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
                       _ ("%s: integrity check failed: %s"), self->path,
                       i == 0 ? first : "foreign key violation");
          return FALSE;
        }
      if (rc != SQLITE_DONE)
        {
          set_error (self, error, rc, "checking integrity");
          return FALSE;
        }
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
recover_lost_wal (DwStore *self, GError **error)
{
  g_autofree char *wal = g_strconcat (self->path, "-wal", NULL);

  if (!self->wal_seen || g_file_test (wal, G_FILE_TEST_EXISTS))
    return TRUE;
  self->wal_seen = FALSE;
  g_log_structured (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "MESSAGE",
                    "%s: the write-ahead log was deleted while the store was open; its contents "
                    "are written into the store and the store is opened again",
                    self->path);
  if (!exec (self, "PRAGMA wal_checkpoint(FULL)", "saving the deleted write-ahead log", error))
    return FALSE;
  for (guint i = 0; i < N_STMTS; i++)
    g_clear_pointer (&self->stmts[i], sqlite3_finalize);
  sqlite3_close (self->db);
  self->db = NULL;
  g_hash_table_remove_all (self->tag_cache);
  return open_db (self, error);
}

gboolean
dw_store_begin (DwStore *self, GError **error)
{
  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  if (!check_writable (self, error) || !recover_lost_wal (self, error))
    return FALSE;
  return exec (self, "BEGIN IMMEDIATE", "starting a write", error);
}

gboolean
dw_store_in_transaction (DwStore *self)
{
  return !sqlite3_get_autocommit (self->db);
}

static void
forget_acc (DwStore *self)
{
  g_hash_table_remove_all (self->run_acc);
  self->acc = NULL;
  self->acc_run_id = 0;
}

static gboolean
flush_runs (DwStore *self, GError **error)
{
  GHashTableIter iter;
  gpointer key, value;
  double now = g_get_real_time () / 1e6;

  g_hash_table_iter_init (&iter, self->run_acc);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      RunAcc *acc = value;
      sqlite3_stmt *stmt = cached (self, STMT_FLUSH_RUN, error);

      if (stmt == NULL)
        return FALSE;
      sqlite3_bind_int64 (stmt, 1, *(gint64 *)key);
      sqlite3_bind_int64 (stmt, 2, acc->first_step);
      sqlite3_bind_int64 (stmt, 3, acc->last_step);
      if (isnan (acc->first_wall))
        sqlite3_bind_null (stmt, 4);
      else
        sqlite3_bind_double (stmt, 4, acc->first_wall);
      if (isnan (acc->last_wall))
        sqlite3_bind_null (stmt, 5);
      else
        sqlite3_bind_double (stmt, 5, acc->last_wall);
      sqlite3_bind_double (stmt, 6, now);
      if (!step_done (self, stmt, "updating a run", error))
        return FALSE;
    }
  forget_acc (self);
  return TRUE;
}

gboolean
dw_store_commit (DwStore *self, GError **error)
{
  g_return_val_if_fail (DW_IS_STORE (self), FALSE);

  if (!flush_runs (self, error))
    {
      dw_store_rollback (self);
      return FALSE;
    }
  if (!exec (self, "COMMIT", "committing", error))
    {
      dw_store_rollback (self);
      return FALSE;
    }
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
  forget_acc (self);
  /* Tags created in the rolled-back transaction are gone: forget the cache. */
  g_hash_table_remove_all (self->tag_cache);
  if (!sqlite3_get_autocommit (self->db))
    sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* Writers                                                                                     */

gint64
dw_store_ensure_run (DwStore *self, const char *name, const char *framework, const char *source,
                     GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), 0);
  g_return_val_if_fail (name != NULL, 0);
  if (!check_writable (self, error))
    return 0;
  stmt = prepare (self,
                  "INSERT INTO runs (name, framework, source) VALUES (?1, ?2, ?3) "
                  "ON CONFLICT (name) DO UPDATE SET framework = CASE WHEN "
                  "framework = 'unknown' THEN excluded.framework ELSE framework END, "
                  "source = coalesce (source, excluded.source) RETURNING id",
                  error);
  if (stmt == NULL)
    return 0;
  sqlite3_bind_text (stmt, 1, name, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text (stmt, 2, framework != NULL ? framework : "unknown", -1, SQLITE_TRANSIENT);
  sqlite3_bind_text (stmt, 3, source, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      set_error (self, error, rc, "adding a run");
      return 0;
    }
  return sqlite3_column_int64 (stmt, 0);
}

gboolean
dw_store_set_run_status (DwStore *self, gint64 run_id, DwRunStatus status, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  if (!check_writable (self, error))
    return FALSE;
  stmt = prepare (self, "UPDATE runs SET status = ?2, updated = ?3 WHERE id = ?1", error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_int (stmt, 2, status);
  sqlite3_bind_double (stmt, 3, g_get_real_time () / 1e6);
  return step_done (self, stmt, "setting a run status", error);
}

gint64
dw_store_ensure_tag (DwStore *self, gint64 run_id, const char *name, const char *step_key,
                     GError **error)
{
  g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT "\x1f%s", run_id, name);
  gint64 *cached_id = g_hash_table_lookup (self->tag_cache, key);
  sqlite3_stmt *stmt;
  gint64 id;
  int rc;

  if (cached_id != NULL)
    return *cached_id;
  if (!check_writable (self, error))
    return 0;
  if ((stmt = cached (self, STMT_GET_TAG, error)) == NULL)
    return 0;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_text (stmt, 2, name, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    id = sqlite3_column_int64 (stmt, 0);
  else if (rc == SQLITE_DONE)
    {
      const char *canonical = dw_canonical_for_tag (name);

      sqlite3_reset (stmt);
      if ((stmt = cached (self, STMT_INSERT_TAG, error)) == NULL)
        return 0;
      sqlite3_bind_int64 (stmt, 1, run_id);
      sqlite3_bind_text (stmt, 2, name, -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 3, canonical, -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 4, step_key, -1, SQLITE_STATIC);
      if (!step_done (self, stmt, "adding a tag", error))
        return 0;
      id = sqlite3_last_insert_rowid (self->db);
    }
  else
    {
      sqlite3_reset (stmt);
      set_error (self, error, rc, "looking up a tag");
      return 0;
    }
  sqlite3_reset (stmt);
  g_hash_table_insert (self->tag_cache, g_steal_pointer (&key), g_memdup2 (&id, sizeof id));
  return id;
}

static RunAcc *
run_acc (DwStore *self, gint64 run_id)
{
  RunAcc *acc;

  if (self->acc != NULL && self->acc_run_id == run_id)
    return self->acc;
  acc = g_hash_table_lookup (self->run_acc, &run_id);
  if (acc == NULL)
    {
      acc = g_new (RunAcc, 1);
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
bind_point (DwStore *self, sqlite3_stmt *stmt, int base, gint64 tag_id, gint64 step,
            double wall_time, double value)
{
  sqlite3_bind_int64 (stmt, base + 1, tag_id);
  sqlite3_bind_int64 (stmt, base + 2, step);
  if (isnan (wall_time))
    sqlite3_bind_null (stmt, base + 3);
  else
    sqlite3_bind_double (stmt, base + 3, wall_time);
  if (isnan (value))
    sqlite3_bind_null (stmt, base + 4);
  else
    sqlite3_bind_double (stmt, base + 4, value);
  sqlite3_bind_int (stmt, base + 5, isnan (value) ? 1 : (value == 0.0 && signbit (value)) ? 2 : 0);
  sqlite3_bind_int (stmt, base + 6, self->rank);
}

static void
account_point (DwStore *self, gint64 run_id, gint64 step, double wall_time)
{
  RunAcc *acc = run_acc (self, run_id);

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
  sqlite3_stmt *stmt = self->stmts[STMT_PUT_POINT];
  int rc;

  if (G_UNLIKELY (stmt == NULL))
    {
      if (!check_writable (self, error) || (stmt = cached (self, STMT_PUT_POINT, error)) == NULL)
        return FALSE;
    }
  bind_point (self, stmt, 0, tag_id, step, wall_time, value);
  rc = sqlite3_step (stmt);
  sqlite3_reset (stmt);
  if (G_UNLIKELY (rc != SQLITE_DONE))
    {
      set_error (self, error, rc, "storing a point");
      return FALSE;
    }
  account_point (self, run_id, step, wall_time);
  return TRUE;
}

gboolean
dw_store_put_points (DwStore *self, gint64 run_id, const DwPointRow *rows, gsize n, GError **error)
{
  sqlite3_stmt *stmt = self->stmts[STMT_PUT_POINTS];
  gsize i = 0;

  if (n >= PUT_POINTS_ROWS && G_UNLIKELY (stmt == NULL))
    {
      if (!check_writable (self, error) || (stmt = cached (self, STMT_PUT_POINTS, error)) == NULL)
        return FALSE;
    }
  /* rows are written in order, so a later row of the same (tag, step) wins as with put_point */
  for (; i + PUT_POINTS_ROWS <= n; i += PUT_POINTS_ROWS)
    {
      int rc;
      for (int r = 0; r < PUT_POINTS_ROWS; r++)
        {
          const DwPointRow *p = &rows[i + (gsize)r];
          bind_point (self, stmt, r * 6, p->tag_id, p->step, p->wall_time, p->value);
          account_point (self, run_id, p->step, p->wall_time);
        }
      rc = sqlite3_step (stmt);
      sqlite3_reset (stmt);
      if (G_UNLIKELY (rc != SQLITE_DONE))
        {
          set_error (self, error, rc, "storing points");
          return FALSE;
        }
    }
  for (; i < n; i++)
    if (!dw_store_put_point (self, run_id, rows[i].tag_id, rows[i].step, rows[i].wall_time,
                             rows[i].value, error))
      return FALSE;
  return TRUE;
}

void
dw_store_set_source_rank (DwStore *self, int rank)
{
  g_return_if_fail (DW_IS_STORE (self));
  self->rank = rank;
}

gboolean
dw_store_set_run_meta (DwStore *self, gint64 run_id, const char *meta_json, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  if (!check_writable (self, error))
    return FALSE;
  stmt = prepare (self, "UPDATE runs SET meta = ? WHERE id = ?", error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, meta_json, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (stmt, 2, run_id);
  return step_done (self, stmt, "storing a run's metadata", error);
}

char *
dw_store_get_run_meta (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = prepare (self, "SELECT meta FROM runs WHERE id = ?", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return g_strdup ((const char *)sqlite3_column_text (stmt, 0));
  if (rc != SQLITE_DONE)
    set_error (self, error, rc, "reading a run's metadata");
  return NULL;
}

gboolean
dw_store_purge_points_from (DwStore *self, gint64 tag_id, gint64 step, int rank, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  if (!check_writable (self, error))
    return FALSE;
  stmt = prepare (self, "DELETE FROM points WHERE tag_id = ?1 AND step >= ?2 AND rank = ?3", error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, tag_id);
  sqlite3_bind_int64 (stmt, 2, step);
  sqlite3_bind_int (stmt, 3, rank);
  return step_done (self, stmt, "purging an earlier launch's points", error);
}

gboolean
dw_store_get_point (DwStore *self, gint64 tag_id, gint64 step, double *value, int *rank,
                    GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  int rc;

  stmt = prepare (self, "SELECT value, special, rank FROM points WHERE tag_id = ? AND step = ?",
                  error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, tag_id);
  sqlite3_bind_int64 (stmt, 2, step);
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      if (rc != SQLITE_DONE)
        set_error (self, error, rc, "reading a point");
      return FALSE;
    }
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

gboolean
dw_store_add_restart (DwStore *self, gint64 run_id, gint64 step, const char *source, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  if (!check_writable (self, error))
    return FALSE;
  stmt = prepare (self, "INSERT OR IGNORE INTO restarts (run_id, step, source) VALUES (?, ?, ?)",
                  error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_int64 (stmt, 2, step);
  sqlite3_bind_text (stmt, 3, source != NULL ? source : "", -1, SQLITE_STATIC);
  return step_done (self, stmt, "recording a restart", error);
}

gboolean
dw_store_add_diagnostic (DwStore *self, gint64 run_id, const char *path, goffset offset,
                         const char *message, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  if (!check_writable (self, error))
    return FALSE;
  stmt = prepare (self,
                  "INSERT OR IGNORE INTO diagnostics (run_id, path, offset, message) "
                  "VALUES (?, ?, ?, ?)",
                  error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_text (stmt, 2, path, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (stmt, 3, offset);
  sqlite3_bind_text (stmt, 4, message, -1, SQLITE_STATIC);
  return step_done (self, stmt, "recording a diagnostic", error);
}

static gboolean
bind_array (sqlite3_stmt *stmt, int index, const void *data, DwDType dtype, gsize n)
{
  gsize bytes = dw_dtype_size (dtype) * n;

  if (data == NULL)
    return sqlite3_bind_null (stmt, index) == SQLITE_OK;
  if (bytes > G_MAXINT)
    return FALSE;
  return sqlite3_bind_blob (stmt, index, data, (int)bytes, SQLITE_STATIC) == SQLITE_OK;
}

/* Token ids and rewards beside the batch (or none: a replaced batch loses stale ones). */
static gboolean
put_batch_extras (DwStore *self, gint64 batch_id, const DwBatch *batch, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  if (batch->token_ids == NULL && batch->rewards == NULL)
    stmt = prepare (self, "DELETE FROM batch_extras WHERE batch_id = ?1", error);
  else
    stmt = prepare (self,
                    "INSERT OR REPLACE INTO batch_extras (batch_id, token_ids, rewards) "
                    "VALUES (?1, ?2, ?3)",
                    error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, batch_id);
  if ((batch->token_ids || batch->rewards)
      && (!bind_array (stmt, 2, batch->token_ids, DW_DTYPE_I64, batch->rows * batch->cols)
          || !bind_array (stmt, 3, batch->rewards, DW_DTYPE_F64, batch->rows)))
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED,
                   _ ("%s: token ids too large for the store"), self->path);
      return FALSE;
    }
  return step_done (self, stmt, "storing token ids", error);
}

/* A batch whose padded arrays exceed SQLite's length limit (1 GB by default: a 4 MB packed file
 * can pad past it) cannot be stored: said before anything is written, naming the input, so the
 * ingester skips that one file. */
static gboolean
check_batch_fits (DwStore *self, const DwBatch *batch, gint64 step, const char *source,
                  GError **error)
{
  gsize n, bytes;
  gint64 limit = sqlite3_limit (self->db, SQLITE_LIMIT_LENGTH, -1);

  if (g_size_checked_mul (&n, batch->rows, batch->cols)
      && g_size_checked_mul (&bytes, n,
                             MAX (dw_dtype_size (batch->lp_dtype), batch->token_ids ? 8u : 1u))
      && (gint64)bytes <= limit)
    return TRUE;
  g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_TOO_LARGE,
               _ ("%s: step %" PRId64 ": the batch pads to %zu × %zu tokens, more than one "
                  "store value can hold (%" PRId64 " bytes per array): skipped"),
               source, step, batch->rows, batch->cols, limit);
  return FALSE;
}

gboolean
dw_store_put_batch (DwStore *self, gint64 run_id, gint64 step, const DwBatch *batch,
                    const char *source, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (sqlite3_stmt) seq = NULL;
  g_autofree DwRowStats *rows = NULL;
  gsize n = batch->rows * batch->cols;
  gint64 n_tokens = 0, batch_id;
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  if (!check_writable (self, error))
    return FALSE;
  if (batch->lp_dtype != DW_DTYPE_F32 && batch->lp_dtype != DW_DTYPE_F64)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED,
                   _ ("%s: step %" PRId64 ": log-probs must be float32 or float64"), source, step);
      return FALSE;
    }
  if (!check_batch_fits (self, batch, step, source, error))
    return FALSE;
  rows = g_new0 (DwRowStats, MAX (batch->rows, 1));
  dw_row_stats_compute (batch, rows);
  for (gsize r = 0; r < batch->rows; r++)
    n_tokens += rows[r].n_valid;

  stmt = prepare (self,
                  "INSERT INTO batches (run_id, step, rows, cols, lp_dtype, source_lp_dtype, "
                  "mask_dtype, flags, source, n_tokens, old_log_prob, rollout_log_prob, "
                  "response_mask, advantages) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                  "?11, ?12, ?13, ?14) ON CONFLICT (run_id, step) DO UPDATE SET "
                  "rows = excluded.rows, cols = excluded.cols, lp_dtype = excluded.lp_dtype, "
                  "source_lp_dtype = excluded.source_lp_dtype, mask_dtype = excluded.mask_dtype, "
                  "flags = excluded.flags, source = excluded.source, n_tokens = excluded.n_tokens, "
                  "old_log_prob = excluded.old_log_prob, "
                  "rollout_log_prob = excluded.rollout_log_prob, "
                  "response_mask = excluded.response_mask, advantages = excluded.advantages "
                  "RETURNING id",
                  error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_int64 (stmt, 2, step);
  sqlite3_bind_int64 (stmt, 3, (gint64)batch->rows);
  sqlite3_bind_int64 (stmt, 4, (gint64)batch->cols);
  sqlite3_bind_int (stmt, 5, batch->lp_dtype);
  sqlite3_bind_int (stmt, 6, batch->source_lp_dtype);
  sqlite3_bind_int (stmt, 7, batch->mask_dtype);
  sqlite3_bind_int64 (stmt, 8, batch->flags);
  sqlite3_bind_text (stmt, 9, source, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (stmt, 10, n_tokens);
  if (!bind_array (stmt, 11, batch->old_log_prob, batch->lp_dtype, n)
      || !bind_array (stmt, 12, batch->rollout_log_prob, batch->lp_dtype, n)
      || !bind_array (stmt, 13, batch->response_mask, batch->mask_dtype, n)
      || !bind_array (stmt, 14, batch->advantages, batch->lp_dtype, n))
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_FAILED,
                   _ ("%s: step %" PRId64 ": batch too large for the store"), source, step);
      return FALSE;
    }
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      set_error (self, error, rc, "storing a batch");
      return FALSE;
    }
  batch_id = sqlite3_column_int64 (stmt, 0);
  if (!put_batch_extras (self, batch_id, batch, error))
    return FALSE;

  seq = prepare (self,
                 "INSERT OR REPLACE INTO sequences (batch_id, row, n_valid, n, sum_l, sum_old, "
                 "sum_roll, sum_k1, sum_k2, sum_k3, max_k1, max_k2, max_k3, min_l) VALUES "
                 "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                 error);
  if (seq == NULL)
    return FALSE;
  {
    g_autoptr (sqlite3_stmt) del
      = prepare (self, "DELETE FROM sequences WHERE batch_id = ?1 AND row >= ?2", error);
    if (del == NULL)
      return FALSE;
    sqlite3_bind_int64 (del, 1, batch_id);
    sqlite3_bind_int64 (del, 2, (gint64)batch->rows);
    if (!step_done (self, del, "storing sequence statistics", error))
      return FALSE;
  }
  for (gsize r = 0; r < batch->rows; r++)
    {
      const DwRowStats *s = &rows[r];
      double v[] = { s->n,        s->sum_l,    s->sum_old,  s->sum_roll, s->sum_k[0], s->sum_k[1],
                     s->sum_k[2], s->max_k[0], s->max_k[1], s->max_k[2], s->min_l };

      sqlite3_bind_int64 (seq, 1, batch_id);
      sqlite3_bind_int64 (seq, 2, (gint64)r);
      sqlite3_bind_int64 (seq, 3, s->n_valid);
      for (guint i = 0; i < G_N_ELEMENTS (v); i++)
        {
          if (isnan (v[i]))
            sqlite3_bind_null (seq, 4 + i);
          else
            sqlite3_bind_double (seq, 4 + i, v[i]);
        }
      if (!step_done (self, seq, "storing sequence statistics", error))
        return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* File bookkeeping                                                                            */

void
dw_file_record_free (DwFileRecord *record)
{
  if (record == NULL)
    return;
  g_free (record->path);
  g_clear_pointer (&record->state, g_bytes_unref);
  g_free (record);
}

#define FILE_COLUMNS                                                                       \
  "id, run_id, path, format, dev, inode, size, mtime_us, offset, prefix_len, prefix_crc, " \
  "max_step, state"

static DwFileRecord *
file_from_row (sqlite3_stmt *stmt)
{
  DwFileRecord *r = g_new0 (DwFileRecord, 1);
  const void *state;

  r->id = sqlite3_column_int64 (stmt, 0);
  r->run_id = sqlite3_column_int64 (stmt, 1);
  r->path = column_text_or (stmt, 2, "");
  r->format = sqlite3_column_int (stmt, 3);
  r->dev = (guint64)sqlite3_column_int64 (stmt, 4);
  r->inode = (guint64)sqlite3_column_int64 (stmt, 5);
  r->size = sqlite3_column_int64 (stmt, 6);
  r->mtime_us = sqlite3_column_int64 (stmt, 7);
  r->offset = sqlite3_column_int64 (stmt, 8);
  r->prefix_len = sqlite3_column_int64 (stmt, 9);
  r->prefix_crc = (guint32)sqlite3_column_int64 (stmt, 10);
  r->max_step
    = sqlite3_column_type (stmt, 11) == SQLITE_NULL ? G_MININT64 : sqlite3_column_int64 (stmt, 11);
  state = sqlite3_column_blob (stmt, 12);
  if (state != NULL)
    r->state = g_bytes_new (state, sqlite3_column_bytes (stmt, 12));
  if (r->offset < 0 || r->prefix_len < 0 || r->prefix_len > r->offset || r->size < 0)
    {
      /* damaged bookkeeping (prefix_len = 1e12 made ingest allocate a terabyte): the file is
       * read again from the start, which is always correct, only slower */
      r->offset = r->prefix_len = 0;
      r->prefix_crc = 0;
      r->size = -1;
      r->max_step = G_MININT64;
      g_clear_pointer (&r->state, g_bytes_unref);
    }
  return r;
}

DwFileRecord *
dw_store_get_file (DwStore *self, const char *path, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = prepare (self, "SELECT " FILE_COLUMNS " FROM files WHERE path = ?", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_text (stmt, 1, path, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return file_from_row (stmt);
  if (rc != SQLITE_DONE)
    set_error (self, error, rc, "reading the ingest bookkeeping");
  return NULL;
}

GPtrArray *
dw_store_list_files (DwStore *self, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GPtrArray) files
    = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_file_record_free);
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = prepare (self, "SELECT " FILE_COLUMNS " FROM files ORDER BY path", error);
  if (stmt == NULL)
    return NULL;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (files, file_from_row (stmt));
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "reading the ingest bookkeeping");
      return NULL;
    }
  return g_steal_pointer (&files);
}

gboolean
dw_store_put_file (DwStore *self, DwFileRecord *r, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;

  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  if (!check_writable (self, error))
    return FALSE;
  if (r->id == 0)
    stmt = prepare (self,
                    "INSERT INTO files (run_id, path, format, dev, inode, size, mtime_us, offset, "
                    "prefix_len, prefix_crc, max_step, state) VALUES (?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                    "?9, ?10, ?11, ?12, ?13)",
                    error);
  else
    stmt = prepare (self,
                    "UPDATE files SET run_id = ?2, path = ?3, format = ?4, dev = ?5, inode = ?6, "
                    "size = ?7, mtime_us = ?8, offset = ?9, prefix_len = ?10, prefix_crc = ?11, "
                    "max_step = ?12, state = ?13 WHERE id = ?1",
                    error);
  if (stmt == NULL)
    return FALSE;
  if (r->id != 0)
    sqlite3_bind_int64 (stmt, 1, r->id);
  sqlite3_bind_int64 (stmt, 2, r->run_id);
  sqlite3_bind_text (stmt, 3, r->path, -1, SQLITE_STATIC);
  sqlite3_bind_int (stmt, 4, r->format);
  sqlite3_bind_int64 (stmt, 5, (gint64)r->dev);
  sqlite3_bind_int64 (stmt, 6, (gint64)r->inode);
  sqlite3_bind_int64 (stmt, 7, r->size);
  sqlite3_bind_int64 (stmt, 8, r->mtime_us);
  sqlite3_bind_int64 (stmt, 9, r->offset);
  sqlite3_bind_int64 (stmt, 10, r->prefix_len);
  sqlite3_bind_int64 (stmt, 11, r->prefix_crc);
  if (r->max_step == G_MININT64)
    sqlite3_bind_null (stmt, 12);
  else
    sqlite3_bind_int64 (stmt, 12, r->max_step);
  if (r->state != NULL)
    {
      gsize len;
      const void *data = g_bytes_get_data (r->state, &len);
      sqlite3_bind_blob (stmt, 13, data != NULL ? data : "", (int)len, SQLITE_STATIC);
    }
  else
    sqlite3_bind_null (stmt, 13);
  if (!step_done (self, stmt, "updating the ingest bookkeeping", error))
    return FALSE;
  if (r->id == 0)
    r->id = sqlite3_last_insert_rowid (self->db);
  return TRUE;
}

gint64
dw_store_get_files_max_step (DwStore *self, gint64 run_id, int format, const char *except_path,
                             GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), G_MININT64);
  /* the two largest: one of them is not @except_path */
  stmt = prepare (self,
                  "SELECT max_step, path FROM files WHERE run_id = ?1 AND format = ?2 AND "
                  "max_step IS NOT NULL ORDER BY max_step DESC LIMIT 2",
                  error);
  if (stmt == NULL)
    return G_MININT64;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_int (stmt, 2, format);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    if (g_strcmp0 ((const char *)sqlite3_column_text (stmt, 1), except_path) != 0)
      return sqlite3_column_int64 (stmt, 0);
  if (rc != SQLITE_DONE)
    set_error (self, error, rc, "reading the ingest bookkeeping");
  return G_MININT64;
}

gboolean
dw_store_run_has_other_formats (DwStore *self, gint64 run_id, int format, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), FALSE);
  /* two index seeks on (run_id, format): "format <> ?" would walk the run's files */
  stmt = prepare (self,
                  "SELECT EXISTS (SELECT 1 FROM files WHERE run_id = ?1 AND format < ?2) OR "
                  "EXISTS (SELECT 1 FROM files WHERE run_id = ?1 AND format > ?2)",
                  error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_int (stmt, 2, format);
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      set_error (self, error, rc, "reading the ingest bookkeeping");
      return FALSE;
    }
  return sqlite3_column_int (stmt, 0) != 0;
}

GPtrArray *
dw_store_list_diagnostics (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  int rc;

  stmt = prepare (self,
                  "SELECT path, offset, message FROM diagnostics WHERE run_id = ? "
                  "ORDER BY path, offset, message",
                  error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (out, g_strdup_printf ("%s: offset %" G_GINT64_FORMAT ": %s",
                                           (const char *)sqlite3_column_text (stmt, 0) ?: "?",
                                           (gint64)sqlite3_column_int64 (stmt, 1),
                                           (const char *)sqlite3_column_text (stmt, 2) ?: "?"));
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "reading diagnostics");
      return NULL;
    }
  return g_steal_pointer (&out);
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
  gsize lo = 0, hi = series->n;

  while (lo < hi)
    {
      gsize mid = lo + (hi - lo) / 2;
      if (series->steps[mid] < step)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo < series->n && series->steps[lo] == step ? (gssize)lo : -1;
}

static double
column_double_or_nan (sqlite3_stmt *stmt, int col)
{
  return sqlite3_column_type (stmt, col) == SQLITE_NULL ? NAN : sqlite3_column_double (stmt, col);
}

#define RUN_SELECT                                                                               \
  "SELECT id, name, framework, source, first_step, last_step, first_wall_time, last_wall_time, " \
  "status, updated, (SELECT count(*) FROM batches b WHERE b.run_id = runs.id) FROM runs "

static DwRunInfo *
run_from_row (sqlite3_stmt *stmt)
{
  DwRunInfo *info = g_new0 (DwRunInfo, 1);
  double updated = column_double_or_nan (stmt, 9);

  info->id = sqlite3_column_int64 (stmt, 0);
  info->name = sqlite3_column_type (stmt, 1) != SQLITE_NULL
                 ? column_text_or (stmt, 1, "")
                 : g_strdup_printf ("run %" G_GINT64_FORMAT, info->id);
  info->framework = column_text_or (stmt, 2, "unknown");
  info->source = g_strdup ((const char *)sqlite3_column_text (stmt, 3));
  info->first_step
    = sqlite3_column_type (stmt, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64 (stmt, 4);
  info->last_step
    = sqlite3_column_type (stmt, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64 (stmt, 5);
  info->first_wall_time = column_double_or_nan (stmt, 6);
  info->last_wall_time = column_double_or_nan (stmt, 7);
  info->status = sqlite3_column_int (stmt, 8);
  /* "live" decays: a run nobody appended to for a minute is finished. */
  if (info->status == DW_RUN_STATUS_LIVE
      && (isnan (updated) || g_get_real_time () / 1e6 - updated > 60.0))
    info->status = DW_RUN_STATUS_FINISHED;
  info->n_batches = sqlite3_column_int64 (stmt, 10);
  return info;
}

GPtrArray *
dw_store_list_runs (DwStore *self, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_run_info_free);
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = prepare (self, RUN_SELECT "ORDER BY id DESC", error);
  if (stmt == NULL)
    return NULL;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (runs, run_from_row (stmt));
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "listing runs");
      return NULL;
    }
  return g_steal_pointer (&runs);
}

DwRunInfo *
dw_store_get_run (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = prepare (self, RUN_SELECT "WHERE id = ?", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return run_from_row (stmt);
  if (rc == SQLITE_DONE)
    g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND, _ ("%s: no run with id %" PRId64),
                 self->path, run_id);
  else
    set_error (self, error, rc, "reading a run");
  return NULL;
}

DwRunInfo *
dw_store_find_run (DwStore *self, const char *id_or_name, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  char *end = NULL;
  gint64 id;
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  g_return_val_if_fail (id_or_name != NULL, NULL);
  /* A name wins over an id, so a run named "3" can still be reached. */
  stmt = prepare (self, RUN_SELECT "WHERE name = ?", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_text (stmt, 1, id_or_name, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return run_from_row (stmt);
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "reading a run");
      return NULL;
    }
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
run_printed_generation (DwStore *self, gint64 run_id, const char **source)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  const char *generation;
  char *out = NULL;

  stmt = prepare (self,
                  "SELECT json_extract (meta, '$.generation'), "
                  "json_extract (meta, '$.generation_source') FROM runs "
                  "WHERE id = ?1 AND json_valid (meta)",
                  NULL);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  if (sqlite3_step (stmt) != SQLITE_ROW)
    return NULL;
  generation = dw_canonical_generation ((const char *)sqlite3_column_text (stmt, 0));
  if (generation != NULL
      && (g_strcmp0 ((const char *)sqlite3_column_text (stmt, 1), "log") == 0
          || g_strcmp0 ((const char *)sqlite3_column_text (stmt, 1), "config") == 0))
    {
      out = g_strdup ((const char *)sqlite3_column_text (stmt, 0));
      if (source != NULL)
        *source
          = g_strcmp0 ((const char *)sqlite3_column_text (stmt, 1), "log") == 0 ? "log" : "config";
    }
  return out;
}

char *
dw_store_get_run_generation (DwStore *self, gint64 run_id, const char **source, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  char *printed;
  const char *inferred;
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  if (source != NULL)
    *source = NULL;
  if ((printed = run_printed_generation (self, run_id, source)) != NULL)
    return printed;
  if ((stmt = prepare (self, "SELECT name FROM tags WHERE run_id = ?1", error)) == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (names, column_text_or (stmt, 0, ""));
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "listing tags");
      return NULL;
    }
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
resolve_canonical (DwStore *self, gint64 run_id, GPtrArray *tags)
{
  g_autofree const char **names = g_new (const char *, tags->len + 1);
  g_autofree char *printed = run_printed_generation (self, run_id, NULL);
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
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = prepare (self, "SELECT name FROM tags WHERE run_id = ? ORDER BY name", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (names, column_text_or (stmt, 0, "")); /* NULL in a crafted store */
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "listing tags");
      return NULL;
    }
  return g_steal_pointer (&names);
}

GPtrArray *
dw_store_list_tags (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GPtrArray) tags = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_tag_info_free);
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = prepare (self,
                  "SELECT id, name, canonical, (SELECT count(*) FROM points p WHERE p.tag_id = "
                  "tags.id) FROM tags WHERE run_id = ? ORDER BY name",
                  error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      DwTagInfo *info = g_new0 (DwTagInfo, 1);
      info->id = sqlite3_column_int64 (stmt, 0);
      info->name = column_text_or (stmt, 1, "");
      info->canonical = g_strdup ((const char *)sqlite3_column_text (stmt, 2));
      info->n_points = sqlite3_column_int64 (stmt, 3);
      g_ptr_array_add (tags, info);
    }
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "listing tags");
      return NULL;
    }
  resolve_canonical (self, run_id, tags);
  return g_steal_pointer (&tags);
}

/* The tag id of @tag in @run: the logged name, else the newest tag whose canonical name (as
 * dw_store_list_tags resolves it) is @tag (largest last step, then the latest created). 0 when
 * none. */
static gint64
resolve_tag (DwStore *self, gint64 run_id, const char *tag, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GPtrArray) tags = NULL;
  g_autoptr (GString) ids = g_string_new (NULL);
  g_autofree char *sql = NULL;
  int rc;

  stmt = prepare (self, "SELECT id FROM tags WHERE run_id = ?1 AND name = ?2", error);
  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_text (stmt, 2, tag, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return sqlite3_column_int64 (stmt, 0);
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "looking up a tag");
      return -1;
    }
  g_clear_pointer (&stmt, sqlite3_finalize);

  /* the run's tag names only (dw_store_list_tags also counts every tag's points) */
  tags = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_tag_info_free);
  if ((stmt = prepare (self, "SELECT id, name FROM tags WHERE run_id = ?1", error)) == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      DwTagInfo *info = g_new0 (DwTagInfo, 1);

      info->id = sqlite3_column_int64 (stmt, 0);
      info->name = column_text_or (stmt, 1, "");
      g_ptr_array_add (tags, info);
    }
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "looking up a tag");
      return -1;
    }
  g_clear_pointer (&stmt, sqlite3_finalize);
  resolve_canonical (self, run_id, tags);
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
  if ((stmt = prepare (self, sql, error)) == NULL)
    return -1;
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return sqlite3_column_int64 (stmt, 0);
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "looking up a tag");
      return -1;
    }
  return 0;
}

DwSeries *
dw_store_get_series (DwStore *self, gint64 run_id, const char *tag, gint64 after_step,
                     GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (DwSeries) series = NULL;
  g_autoptr (GArray) steps = NULL, walls = NULL, values = NULL, restarts = NULL;
  gint64 tag_id;
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  g_return_val_if_fail (tag != NULL, NULL);
  tag_id = resolve_tag (self, run_id, tag, error);
  if (tag_id < 0)
    return NULL;
  if (tag_id == 0)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND,
                   _ ("%s: run %" PRId64 " has no tag “%s”"), self->path, run_id, tag);
      return NULL;
    }

  steps = g_array_new (FALSE, FALSE, sizeof (gint64));
  walls = g_array_new (FALSE, FALSE, sizeof (double));
  values = g_array_new (FALSE, FALSE, sizeof (double));
  stmt = prepare (self,
                  "SELECT step, wall_time, value, special FROM points WHERE tag_id = ?1 AND "
                  "(?3 OR step > ?2) ORDER BY step",
                  error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, tag_id);
  sqlite3_bind_int64 (stmt, 2, after_step);
  /* G_MININT64 means every point, also one logged at step G_MININT64 */
  sqlite3_bind_int (stmt, 3, after_step == G_MININT64);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 step = sqlite3_column_int64 (stmt, 0);
      double wall = column_double_or_nan (stmt, 1);
      double value = column_double_or_nan (stmt, 2);

      if (sqlite3_column_int (stmt, 3) == 2)
        value = -0.0;

      g_array_append_val (steps, step);
      g_array_append_val (walls, wall);
      g_array_append_val (values, value);
    }
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "reading a series");
      return NULL;
    }
  g_clear_pointer (&stmt, sqlite3_finalize);

  restarts = g_array_new (FALSE, FALSE, sizeof (gint64));
  stmt = prepare (
    self,
    "SELECT DISTINCT step FROM restarts WHERE run_id = ?1 AND (?3 OR step > ?2) ORDER BY step",
    error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_int64 (stmt, 2, after_step);
  sqlite3_bind_int (stmt, 3, after_step == G_MININT64);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 step = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (restarts, step);
    }
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "reading restarts");
      return NULL;
    }

  series = g_new0 (DwSeries, 1);
  series->n = steps->len;
  series->steps = (gint64 *)(void *)g_array_free (g_steal_pointer (&steps), FALSE);
  series->wall_times = (double *)(void *)g_array_free (g_steal_pointer (&walls), FALSE);
  series->values = (double *)(void *)g_array_free (g_steal_pointer (&values), FALSE);
  series->n_restarts = restarts->len;
  series->restart_steps = (gint64 *)(void *)g_array_free (g_steal_pointer (&restarts), FALSE);
  return g_steal_pointer (&series);
}

GArray *
dw_store_list_batch_steps (DwStore *self, gint64 run_id, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (gint64));
  int rc;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = prepare (self, "SELECT step FROM batches WHERE run_id = ? ORDER BY step", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 step = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (steps, step);
    }
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "listing batches");
      return NULL;
    }
  return g_steal_pointer (&steps);
}

/* Whether column @col holds exactly @n elements of @dtype. */
static gboolean
blob_fits (sqlite3_stmt *stmt, int col, gsize n, int dtype)
{
  gsize bytes;

  return g_size_checked_mul (&bytes, n, dw_dtype_size (dtype))
         && (gsize)sqlite3_column_bytes (stmt, col) == bytes;
}

static gboolean
copy_blob (sqlite3_stmt *stmt, int col, void *dest, gsize bytes)
{
  if (sqlite3_column_type (stmt, col) == SQLITE_NULL)
    return dest == NULL;
  if (dest == NULL || (gsize)sqlite3_column_bytes (stmt, col) != bytes)
    return FALSE;
  memcpy (dest, sqlite3_column_blob (stmt, col), bytes);
  return TRUE;
}

DwBatch *
dw_store_load_batch (DwStore *self, gint64 run_id, gint64 step, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (DwBatch) batch = NULL;
  gint64 rows, cols;
  int lp_dtype, mask_dtype, rc;
  gsize n;

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  stmt = prepare (self,
                  "SELECT rows, cols, lp_dtype, source_lp_dtype, mask_dtype, flags, "
                  "old_log_prob, rollout_log_prob, response_mask, advantages, x.token_ids, "
                  "x.rewards FROM batches LEFT JOIN batch_extras x ON x.batch_id = batches.id "
                  "WHERE run_id = ? AND step = ?",
                  error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_int64 (stmt, 2, step);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_DONE)
    {
      g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND,
                   _ ("%s: run %" PRId64 " has no batch at step %" PRId64), self->path, run_id,
                   step);
      return NULL;
    }
  if (rc != SQLITE_ROW)
    {
      set_error (self, error, rc, "reading a batch");
      return NULL;
    }
  rows = sqlite3_column_int64 (stmt, 0);
  cols = sqlite3_column_int64 (stmt, 1);
  lp_dtype = sqlite3_column_int (stmt, 2);
  mask_dtype = sqlite3_column_int (stmt, 4);
  /* the sizes must agree with the stored blobs before anything is allocated: a crafted row
   * count (rows = 2^62) would otherwise ask for exabytes */
  if (rows < 0 || cols < 0 || (lp_dtype != DW_DTYPE_F32 && lp_dtype != DW_DTYPE_F64)
      || mask_dtype < 0 || mask_dtype >= DW_N_DTYPES
      || !g_size_checked_mul (&n, (gsize)rows, (gsize)cols) || !blob_fits (stmt, 6, n, lp_dtype)
      || !blob_fits (stmt, 7, n, lp_dtype) || !blob_fits (stmt, 8, n, mask_dtype)
      || (sqlite3_column_type (stmt, 9) != SQLITE_NULL && !blob_fits (stmt, 9, n, lp_dtype))
      || (batch = dw_batch_new ((size_t)rows, (size_t)cols, lp_dtype, mask_dtype)) == NULL)
    goto corrupt;
  batch->source_lp_dtype = sqlite3_column_int (stmt, 3);
  batch->flags = (uint32_t)sqlite3_column_int64 (stmt, 5);
  batch->step = step;
  if (sqlite3_column_type (stmt, 9) != SQLITE_NULL)
    batch->advantages = g_malloc (MAX (n * dw_dtype_size (lp_dtype), 1));
  if (!copy_blob (stmt, 6, batch->old_log_prob, n * dw_dtype_size (lp_dtype))
      || !copy_blob (stmt, 7, batch->rollout_log_prob, n * dw_dtype_size (lp_dtype))
      || !copy_blob (stmt, 8, batch->response_mask, n * dw_dtype_size (mask_dtype))
      || !copy_blob (stmt, 9, batch->advantages, n * dw_dtype_size (lp_dtype)))
    goto corrupt;
  if (sqlite3_column_type (stmt, 10) != SQLITE_NULL)
    batch->token_ids = g_malloc (MAX (n * sizeof (gint64), 1));
  if (sqlite3_column_type (stmt, 11) != SQLITE_NULL)
    batch->rewards = g_malloc (MAX ((gsize)rows * sizeof (double), 1));
  if (!copy_blob (stmt, 10, batch->token_ids, n * sizeof (gint64))
      || !copy_blob (stmt, 11, batch->rewards, (gsize)rows * sizeof (double)))
    goto corrupt;
  return g_steal_pointer (&batch);

corrupt:
  g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
               _ ("%s: the stored batch of run %" PRId64 " step %" PRId64 " is damaged"),
               self->path, run_id, step);
  return NULL;
}

GArray *
dw_store_get_sequence_stats (DwStore *self, gint64 run_id, gint64 step, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = NULL;
  g_autoptr (GArray) out = g_array_new (FALSE, TRUE, sizeof (DwSequenceStats));
  int rc;

  stmt = prepare (self,
                  "SELECT s.row, s.n_valid, s.n, s.sum_l, s.sum_old, s.sum_roll, s.sum_k1, "
                  "s.sum_k2, s.sum_k3, s.max_k1, s.max_k2, s.max_k3, s.min_l FROM sequences s "
                  "JOIN batches b ON b.id = s.batch_id WHERE b.run_id = ? AND b.step = ? "
                  "ORDER BY s.row",
                  error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, run_id);
  sqlite3_bind_int64 (stmt, 2, step);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      DwSequenceStats s;
      s.row = sqlite3_column_int64 (stmt, 0);
      s.n_valid = sqlite3_column_int64 (stmt, 1);
      s.n = column_double_or_nan (stmt, 2);
      s.sum_l = column_double_or_nan (stmt, 3);
      s.sum_old = column_double_or_nan (stmt, 4);
      s.sum_roll = column_double_or_nan (stmt, 5);
      for (int k = 0; k < 3; k++)
        {
          s.sum_k[k] = column_double_or_nan (stmt, 6 + k);
          s.max_k[k] = column_double_or_nan (stmt, 9 + k);
        }
      s.min_l = column_double_or_nan (stmt, 12);
      g_array_append_val (out, s);
    }
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "reading sequence statistics");
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* ------------------------------------------------------------------------------------------ */
/* Dump                                                                                        */

static gboolean
dump_query (DwStore *self, GString *out, const char *title, const char *sql, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = prepare (self, sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  g_string_append_printf (out, "# %s\n", title);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      int n = sqlite3_column_count (stmt);
      for (int i = 0; i < n; i++)
        {
          if (i > 0)
            g_string_append_c (out, '\t');
          switch (sqlite3_column_type (stmt, i))
            {
            case SQLITE_NULL:
              g_string_append (out, "NULL");
              break;
            case SQLITE_INTEGER:
              g_string_append_printf (out, "%" G_GINT64_FORMAT,
                                      (gint64)sqlite3_column_int64 (stmt, i));
              break;
            case SQLITE_FLOAT:
              {
                char buf[G_ASCII_DTOSTR_BUF_SIZE];
                g_string_append (
                  out, g_ascii_formatd (buf, sizeof buf, "%.17g", sqlite3_column_double (stmt, i)));
                break;
              }
            case SQLITE_BLOB:
              {
                g_autofree char *sum = g_compute_checksum_for_data (
                  G_CHECKSUM_SHA256, sqlite3_column_blob (stmt, i), sqlite3_column_bytes (stmt, i));
                g_string_append_printf (out, "blob:%s", sum);
                break;
              }
            default:
              g_string_append (out, (const char *)sqlite3_column_text (stmt, i));
              break;
            }
        }
      g_string_append_c (out, '\n');
    }
  if (rc != SQLITE_DONE)
    {
      set_error (self, error, rc, "dumping the store");
      return FALSE;
    }
  return TRUE;
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
  };
  g_autoptr (GString) out = g_string_new (NULL);

  g_return_val_if_fail (DW_IS_STORE (self), NULL);
  for (guint i = 0; i < G_N_ELEMENTS (queries); i++)
    if (!dump_query (self, out, queries[i][0], queries[i][1], error))
      return NULL;
  return g_string_free (g_steal_pointer (&out), FALSE);
}
