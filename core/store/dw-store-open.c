/* dw-store-open.c — opening a store: the schema, its migrations, WAL, read-only media
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Layout (schema version 7, PRAGMA user_version; PRAGMA application_id 'DWst'):
 *   runs(id, name UNIQUE, framework, source, status, first/last step and wall time, updated)
 *   tags(id, run_id, name, canonical, step_key)               UNIQUE(run_id, name)
 *   points(tag_id, step, wall_time, value, special, rank)     PRIMARY KEY(tag_id, step)
 *       SQLite stores a NaN REAL as NULL and −0.0 as 0, so special says 1: NaN (value NULL),
 *       2: −0.0; ±inf are plain REALs.
 *       A second write of (tag, step) replaces the first (newest write wins) unless it comes
 *       from a less precise source (rank: tfevents float32 1 < JSONL float64 2).
 *   restarts(run_id, step, source)                            steps where a restart was seen
 *   runs.meta (schema 3): JSON object of what ingest found out about the run
 *       (dw_store_set_run_meta)
 *   batches(id, run_id, step, rows, cols, dtypes, flags, source, n_tokens, log-prob blobs…)
 *       the padded arrays as raw little-endian blobs in the batch's own dtypes
 *   batch_extras(batch_id, token_ids, rewards)                (schema 4)
 *   sequences(batch_id, row, n_valid, n, sums…)              per-sequence statistics
 *       (schema 7: sum_w, max_l, min_w, max_w, dw-store-stats.c)
 *   step_stats(batch_id, token-order sums, extremes…)        (schema 7) dw-store-stats.c
 *   batch_refs(batch_id, path, size, mtime_us)               (schema 6) raw data left in place
 *   token_summaries(batch_id, n_tokens, tails, bins, kept_rows) (schema 6) dw-store-tokens.c
 *   files(id, run_id, path, format, dev, inode, size, mtime, offset, prefix crc, max_step, state)
 *   diagnostics(run_id, path, offset, message)               bad input seen while ingesting
 * WAL journal, synchronous=NORMAL, foreign keys on.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "dw-store-private.h"

/* dw_store_open_migrations[v] brings a store from user_version v to v + 1. */
static const char *const dw_store_open_migrations[DW_STORE_SCHEMA_VERSION] = {
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
  /* 5 → 6: a bounded store (docs/STORE.md). A batch past its run's --keep-tokens budget keeps
   * zero-length arrays in batches and a reference to its source file in batch_refs; every batch
   * has a token summary (dw-store.h's DwTokenSummary: extreme tokens, bins, extreme rows). */
  "CREATE TABLE batch_refs ("
  "  batch_id INTEGER PRIMARY KEY REFERENCES batches (id) ON DELETE CASCADE,"
  "  path TEXT NOT NULL, size INTEGER NOT NULL, mtime_us INTEGER NOT NULL);"
  "CREATE TABLE token_summaries ("
  "  batch_id INTEGER PRIMARY KEY REFERENCES batches (id) ON DELETE CASCADE,"
  "  n_tokens INTEGER NOT NULL, n_low INTEGER NOT NULL, n_high INTEGER NOT NULL,"
  "  tails BLOB NOT NULL, bins BLOB NOT NULL, kept_rows BLOB NOT NULL);",
  /* 6 → 7: the step statistics the what-if engine builds a step from without its tokens
   * (dw-store-stats.c, docs/STORE.md): four per-row columns and one row per batch, filled by
   * _dw_store_batches_fill_stats () after this SQL; a batch without a step_stats row has none. */
  "ALTER TABLE sequences ADD COLUMN sum_w REAL;"
  "ALTER TABLE sequences ADD COLUMN max_l REAL;"
  "ALTER TABLE sequences ADD COLUMN min_w REAL;"
  "ALTER TABLE sequences ADD COLUMN max_w REAL;"
  "CREATE TABLE step_stats ("
  "  batch_id INTEGER PRIMARY KEY REFERENCES batches (id) ON DELETE CASCADE,"
  "  slow_reason TEXT, weight_sum REAL, sum_k1 REAL, sum_k2 REAL, sum_k3 REAL,"
  "  min_w REAL, max_w REAL, min_k1 REAL, min_k2 REAL, min_k3 REAL,"
  "  max_k1 REAL, max_k2 REAL, max_k3 REAL, neg_k3_sum REAL, neg_k3_sq REAL,"
  "  weight_monotone INTEGER NOT NULL,"
  "  core_n2 INTEGER NOT NULL, core_low2 REAL, core_high2 REAL, core_max2 REAL,"
  "  core_n3 INTEGER NOT NULL, core_low3 REAL, core_high3 REAL, core_max3 REAL,"
  "  offpolicy TEXT);",
};

/* Refuses a store whose schema version is negative (damage: dw_store_open_migrations[] is indexed
 * by it) or newer than this build's; the file is left untouched. */
static void
dw_store_open_refuse_version (DwStore *self, gint64 version, GError **error)
{
  if (version < 0)
    g_set_error (
      error, DW_STORE_ERROR, DW_STORE_ERROR_CORRUPT,
      _ ("%s: damaged Driftwatch store (schema version %" PRId64 "); the file was left untouched"),
      self->path, version);
  else
    g_set_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NEWER_SCHEMA,
                 _ ("%s: written by a newer Driftwatch (schema version %" PRId64
                    ", this version reads up to %d); the file was left untouched"),
                 self->path, version, DW_STORE_SCHEMA_VERSION);
}

/* Brings the schema up to DW_STORE_SCHEMA_VERSION inside one write transaction. */
static gboolean
dw_store_open_migrate (DwStore *self, GError **error)
{
  gboolean ok;
  gint64 version;

  if (!_dw_store_query_exec (self, "BEGIN IMMEDIATE", "creating the schema", error))
    return FALSE;
  /* Another process may have created or upgraded it meanwhile: read again under the lock. */
  version
    = _dw_store_query_int (self, "PRAGMA user_version", "reading the schema version", error, &ok);
  if (!ok)
    goto fail;
  if (version < 0 || version > DW_STORE_SCHEMA_VERSION)
    {
      dw_store_open_refuse_version (self, version, error);
      goto fail;
    }
  for (gint64 from = version; from < DW_STORE_SCHEMA_VERSION; from++)
    if (!_dw_store_query_exec (self, dw_store_open_migrations[from], "migrating the schema", error))
      goto fail;
  /* batches stored before schema 7 get their step statistics from their tokens */
  if (version >= 1 && version < 7 && !_dw_store_batches_fill_stats (self, error))
    goto fail;
  if (version < DW_STORE_SCHEMA_VERSION)
    {
      g_autofree char *sql
        = g_strdup_printf ("PRAGMA application_id = %d; PRAGMA user_version = %d",
                           DW_STORE_APPLICATION_ID, DW_STORE_SCHEMA_VERSION);
      if (!_dw_store_query_exec (self, sql, "setting the schema version", error))
        goto fail;
    }
  if (!_dw_store_query_exec (self, "COMMIT", "creating the schema", error))
    goto fail;
  return TRUE;

fail:
  sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
  return FALSE;
}

/* The schema version, application id and number of tables, read in one read transaction: another
 * process creating the store at this moment commits its tables, version and id together, and
 * three separate reads could see the tables without the id (a new store taken for a foreign file).
 */
static gboolean
dw_store_open_read_identity (DwStore *self, gint64 *version, gint64 *app_id, gint64 *n_tables,
                             GError **error)
{
  gboolean ok = FALSE;

  if (!_dw_store_query_exec (self, "BEGIN", "reading the schema", error))
    return FALSE;
  *version
    = _dw_store_query_int (self, "PRAGMA user_version", "reading the schema version", error, &ok);
  if (ok)
    *app_id = _dw_store_query_int (self, "PRAGMA application_id", "reading the application id",
                                   error, &ok);
  if (ok)
    *n_tables = _dw_store_query_int (self, "SELECT count(*) FROM sqlite_master",
                                     "reading the schema", error, &ok);
  if (!ok)
    {
      sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return _dw_store_query_exec (self, "COMMIT", "reading the schema", error);
}

/* Switching a rollback-journal file to WAL needs an exclusive lock. When two processes open a new
 * store at once, each holding a shared lock while asking for the exclusive one, SQLite breaks the
 * deadlock by returning SQLITE_BUSY at once, without calling the busy handler; so retry here, up to
 * the busy timeout like every other lock wait. */
static gboolean
dw_store_open_switch_to_wal (DwStore *self, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)self->busy_timeout_ms * 1000;
  int rc;

  while ((rc = sqlite3_exec (self->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL)) != SQLITE_OK
         && ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
         && g_get_monotonic_time () < deadline)
    g_usleep (5000 + g_random_int_range (0, 10000));
  if (rc != SQLITE_OK)
    {
      _dw_store_query_set_error (self, error, rc, "switching to WAL");
      return FALSE;
    }
  return TRUE;
}

/* An SQLite file is a whole number of pages. One that is not (a truncated copy, a 121-byte
 * fragment) reads as an empty database, and creating the schema in it and rolling back cut it to
 * nothing: refused, untouched, before anything is written. */
static gboolean
dw_store_open_whole_pages (DwStore *self, GError **error)
{
  GStatBuf st;
  gboolean ok;
  gint64 page_size
    = _dw_store_query_int (self, "PRAGMA page_size", "reading the page size", error, &ok);

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
dw_store_open_on_read_only_fs (const char *path)
{
  struct statvfs fs;

  return statvfs (path, &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
}

/* "file:PATH?immutable=1" with the characters a URI path cannot hold escaped */
static char *
dw_store_open_immutable_uri (const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autofree char *escaped = g_uri_escape_string (abs, "/", FALSE);

  return g_strconcat ("file:", escaped, "?immutable=1", NULL);
}

gboolean
_dw_store_open_db (DwStore *self, GError **error)
{
  int flags = self->read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  gint64 version, app_id, n_tables;
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

  if (self->read_only && dw_store_open_on_read_only_fs (self->path))
    {
      /* a WAL store cannot be opened read-only where its -shm index cannot be created (a
       * read-only mount, a snapshot): nobody can write there, so SQLite may treat the file as
       * immutable and read it without any lock or index */
      g_autofree char *uri = dw_store_open_immutable_uri (self->path);
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
        _dw_store_query_set_error (self, error, rc, "opening");
      return FALSE;
    }
  sqlite3_extended_result_codes (self->db, 0);
  sqlite3_busy_timeout (self->db, self->busy_timeout_ms);
  if (!_dw_store_feed_register (self, error))
    return FALSE;

  /* Look before writing anything: a newer or foreign file must stay untouched. */
  if (!dw_store_open_read_identity (self, &version, &app_id, &n_tables, error))
    return FALSE;
  if (version > DW_STORE_SCHEMA_VERSION && app_id == DW_STORE_APPLICATION_ID)
    {
      dw_store_open_refuse_version (self, version, error);
      return FALSE;
    }
  if (!self->read_only && !dw_store_open_whole_pages (self, error))
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
      /* dw_store_open_migrations[] is indexed by the version: a negative one is damage, never a
       * migration */
      dw_store_open_refuse_version (self, version, error);
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
      return _dw_store_query_exec (self, "PRAGMA foreign_keys = ON", "configuring", error);
    }

  /* migrate before switching to WAL: a migration that fails (a damaged store) is rolled back
   * and leaves the file exactly as it was */
  if (!_dw_store_query_exec (self, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
                             "configuring", error))
    return FALSE;
  if (version < DW_STORE_SCHEMA_VERSION && !dw_store_open_migrate (self, error))
    return FALSE;
  if (!dw_store_open_switch_to_wal (self, error))
    return FALSE;
  /* A checkpoint syncs the log and the file: every 1000 pages (SQLite's default) that was 25
   * fsync pairs for a million points. At 8192 pages (32 MiB of log) an ingest checkpoints a few
   * times and copies a page rewritten by several chunks once; commits are as durable as before
   * (docs/STORE.md, "Writing points fast"). */
  if (!_dw_store_query_exec (self, "PRAGMA wal_autocheckpoint = 8192", "configuring", error))
    return FALSE;

  return TRUE;
}

static DwStore *
dw_store_open_with_mode (const char *path, gboolean read_only, GError **error)
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
  if (!_dw_store_open_db (self, error))
    return NULL;
  return g_steal_pointer (&self);
}

DwStore *
dw_store_open (const char *path, GError **error)
{
  return dw_store_open_with_mode (path, FALSE, error);
}

DwStore *
dw_store_open_read_only (const char *path, GError **error)
{
  return dw_store_open_with_mode (path, TRUE, error);
}
