/* dw-reader-sqlite.c — trackio's per-project database, MLflow's SQL store read run by run, and
 * telling SQLite stores apart
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * trackio (gradio-app/trackio, trackio/sqlite_storage.py, SQLiteStorage.init_db) keeps one
 * database per project, {TRACKIO_DIR:-~/.cache/huggingface/trackio}/{project}.db, in WAL mode.
 * Table metrics(id INTEGER PRIMARY KEY AUTOINCREMENT, [run_id TEXT NOT NULL — since trackio's
 * run ids, 2026-04], timestamp TEXT ISO-8601, run_name TEXT, step INTEGER, metrics TEXT, plus
 * log_id/space_id added later). `metrics` is orjson of the logged dict after serialize_values():
 * NaN and ±inf become the strings "NaN", "Infinity", "-Infinity"; the Python sqlite3 module
 * stores orjson's bytes as a BLOB. A run is a run_id (or, in older databases, a run_name).
 * Rows are read after the last id seen, in id order, so following a live project never
 * re-reads a row. The database is opened read-only and never written to; a progress handler
 * bounds the time one read may take.
 *
 * A row's JSON is read by a small scanner when it is what trackio writes for scalars: one flat
 * object of plain ASCII keys and numbers, true/false/null or strings. Building a json-glib tree
 * for each row took two thirds of a trackio ingest (a hash table, a node per member, strtod); the
 * scanner reads numbers with dw_parse_number (exact, checked against strtod) and integers as
 * json-glib does (an int64 made a double, so -0 is 0). Any other row — nesting, escapes, non-ASCII
 * keys, anything that is not JSON by the grammar's number rules — is left to json-glib, which
 * then decides as before. The rows of tests/fuzz/corpus/trackio/ cover both.
 *
 * MLflow's SQLAlchemy store (mlflow/store/tracking/dbmodels/models.py): metrics(key, value,
 * timestamp ms, step, is_nan, run_uuid), runs(run_uuid, name, experiment_id, …),
 * experiments(experiment_id, name, …). SqlAlchemyStore writes NaN as value 0 with is_nan = 1
 * and ±inf as ±1.7976931348623157e308 (SQL has no infinities); both are turned back.
 */
#include "dw-reader-loggers.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

typedef struct
{
  gint64 deadline; /* monotonic µs, 0: none */
} Budget;

static int
budget_cb (void *user_data)
{
  const Budget *b = user_data;
  return b->deadline != 0 && g_get_monotonic_time () > b->deadline;
}

static gboolean
has_column (sqlite3 *db, const char *table, const char *column)
{
  g_autofree char *sql
    = g_strdup_printf ("SELECT 1 FROM pragma_table_info('%s') WHERE name = ?1", table);
  sqlite3_stmt *st = NULL;
  gboolean found = FALSE;

  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
    return FALSE;
  sqlite3_bind_text (st, 1, column, -1, SQLITE_STATIC);
  found = sqlite3_step (st) == SQLITE_ROW;
  sqlite3_finalize (st);
  return found;
}

static sqlite3 *
open_ro (const char *path, GError **error)
{
  sqlite3 *db = NULL;

  /* NOMUTEX: the connection never leaves this call, so SQLite need not lock it on every column
   * read (a tenth of an MLflow read) */
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: cannot open as SQLite: %s", path,
                   db ? sqlite3_errmsg (db) : "out of memory");
      sqlite3_close (db);
      return NULL;
    }
  sqlite3_busy_timeout (db, 2000);
  return db;
}

DwFormat
dw_sqlite_sniff (const char *path, char **why)
{
  sqlite3 *db = open_ro (path, NULL);
  DwFormat f = DW_FORMAT_UNKNOWN;
  Budget b = { g_get_monotonic_time () + 2 * G_USEC_PER_SEC };

  if (db == NULL)
    {
      if (why != NULL)
        *why = g_strdup ("SQLite file that cannot be opened");
      return DW_FORMAT_UNKNOWN;
    }
  sqlite3_progress_handler (db, 1000, budget_cb, &b);
  if (has_column (db, "metrics", "run_uuid") && has_column (db, "metrics", "key")
      && has_column (db, "metrics", "value"))
    f = DW_FORMAT_MLFLOW_SQLITE;
  else if (has_column (db, "metrics", "run_name") && has_column (db, "metrics", "step")
           && has_column (db, "metrics", "metrics") && has_column (db, "metrics", "timestamp"))
    f = DW_FORMAT_TRACKIO_SQLITE;
  else if (why != NULL)
    *why = g_strdup ("SQLite file that is neither an MLflow store nor a trackio project");
  sqlite3_close (db);
  return f;
}

gint64
dw_sqlite_max_rowid (const char *path, const char *table)
{
  sqlite3 *db = open_ro (path, NULL);
  sqlite3_stmt *st = NULL;
  g_autofree char *sql = g_strdup_printf ("SELECT coalesce (max (rowid), 0) FROM \"%s\"", table);
  gint64 max = G_MAXINT64;

  if (db == NULL)
    return G_MAXINT64;
  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
    max = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  sqlite3_close (db);
  return max;
}

char *
dw_sqlite_main_file (const char *path)
{
  static const char *const suffixes[] = { "-wal", "-journal" };

  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    if (g_str_has_suffix (path, suffixes[i]))
      {
        g_autofree char *db = g_strndup (path, strlen (path) - strlen (suffixes[i]));
        char head[16];
        FILE *f = fopen (db, "rb");
        gboolean is_db = FALSE;
        if (f != NULL)
          {
            is_db = fread (head, 1, 16, f) == 16 && memcmp (head, "SQLite format 3", 16) == 0;
            fclose (f);
          }
        return is_db ? g_steal_pointer (&db) : NULL;
      }
  return NULL;
}

/* ---- reading ---------------------------------------------------------------------------- */

/* The end of a row loop: the time budget ran out (a diagnostic, not an error), done, or an
 * SQLite error. */
static gboolean
read_end (sqlite3 *db, int rc, const char *path, guint budget_ms, DwDiagFunc on_diag,
          gpointer user_data, GError **error)
{
  if (rc == SQLITE_INTERRUPT)
    {
      if (on_diag != NULL)
        {
          g_autofree char *msg = g_strdup_printf (
            "%s: reading took longer than %u ms: the rest is read next time", path, budget_ms);
          on_diag (0, msg, user_data);
        }
      return TRUE;
    }
  if (rc != SQLITE_DONE)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: reading metrics: %s", path,
                   sqlite3_errmsg (db));
      return FALSE;
    }
  return TRUE;
}

typedef struct
{
  DwRunPointFunc on_point;
  gpointer user_data;
  const char *run_key, *run_name, *group;
  gint64 step;
  double wall;
  GString *tag;
  guint n;
} Emit;

static gboolean
json_scalar (JsonNode *node, double *v)
{
  if (!JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  switch (json_node_get_value_type (node))
    {
    case G_TYPE_DOUBLE:
      *v = json_node_get_double (node);
      return TRUE;
    case G_TYPE_INT64:
      *v = (double)json_node_get_int (node);
      return TRUE;
    case G_TYPE_BOOLEAN:
      *v = json_node_get_boolean (node) ? 1.0 : 0.0;
      return TRUE;
    case G_TYPE_STRING:
      {
        const char *s = json_node_get_string (node);
        if (g_str_equal (s, "NaN"))
          return *v = NAN, TRUE;
        if (g_str_equal (s, "Infinity"))
          return *v = INFINITY, TRUE;
        if (g_str_equal (s, "-Infinity"))
          return *v = -INFINITY, TRUE;
        return FALSE; /* text logged as a metric */
      }
    default:
      return FALSE;
    }
}

static void emit_object (Emit *e, JsonObject *o, int depth);

static void
emit_member_cb (JsonObject *o, const char *name, JsonNode *node, gpointer user_data)
{
  Emit *e = user_data;
  gsize keep = e->tag->len;
  double v;

  (void)o;
  if (keep > 0)
    g_string_append_c (e->tag, '/');
  g_string_append (e->tag, name);
  if (JSON_NODE_HOLDS_OBJECT (node))
    emit_object (e, json_node_get_object (node), 1);
  else if (json_scalar (node, &v) && e->tag->len > 0)
    {
      DwScalarPoint p = { e->tag->str, e->step, e->wall, v, NULL };
      e->on_point (e->run_key, e->run_name, e->group, &p, e->user_data);
      e->n++;
    }
  g_string_truncate (e->tag, keep);
}

static void
emit_object (Emit *e, JsonObject *o, int depth)
{
  if (depth > 8)
    return;
  json_object_foreach_member (o, emit_member_cb, e);
}

/* ---- trackio rows: the flat scanner ---------------------------------------------------- */

typedef struct
{
  const char *key; /* inside the row's JSON text, not NUL-terminated */
  gsize key_len;
  double value;
  gboolean is_point; /* FALSE: null or a text value, no point */
} FlatMember;

static const char *
flat_space (const char *p, const char *end)
{
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* A JSON string at @p (the opening quote) without escapes, control or non-ASCII bytes: its
 * contents; NULL otherwise (json-glib reads it). */
static const char *
flat_string (const char *p, const char *end, gsize *len)
{
  const char *start = ++p;

  while (p < end && *p != '"')
    {
      if (*p == '\\' || (guchar)*p < 0x20 || (guchar)*p >= 0x80)
        return NULL;
      p++;
    }
  if (p >= end)
    return NULL;
  *len = (gsize)(p - start);
  return start;
}

/* A JSON number token (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?) as json-glib reads it: an
 * integer of up to 18 digits as an int64, anything else as a double; FALSE for a token that is not
 * one, or not finite. */
static gboolean
flat_number (const char *s, gsize len, double *out)
{
  gsize i = 0, digits_start;
  gboolean integer = TRUE, negative = FALSE;
  gint64 whole = 0;

  if (i < len && s[i] == '-')
    negative = TRUE, i++;
  digits_start = i;
  if (i < len && s[i] == '0')
    i++;
  else
    while (i < len && g_ascii_isdigit (s[i]))
      whole = whole * 10 + (s[i] - '0'), i++;
  if (i == digits_start || i - digits_start > 18)
    return FALSE;
  if (i < len && s[i] == '.')
    {
      integer = FALSE;
      if (++i >= len || !g_ascii_isdigit (s[i]))
        return FALSE;
      while (i < len && g_ascii_isdigit (s[i]))
        i++;
    }
  if (i < len && (s[i] == 'e' || s[i] == 'E'))
    {
      integer = FALSE;
      if (++i < len && (s[i] == '+' || s[i] == '-'))
        i++;
      if (i >= len || !g_ascii_isdigit (s[i]))
        return FALSE;
      while (i < len && g_ascii_isdigit (s[i]))
        i++;
    }
  if (i != len)
    return FALSE;
  if (integer)
    return *out = (double)(negative ? -whole : whole), TRUE;
  return dw_parse_number (s, len, out) && isfinite (*out);
}

/* One member's value at @p into @member; the end of the value, NULL to leave the row to
 * json-glib. */
static const char *
flat_value (const char *p, const char *end, FlatMember *member)
{
  const char *start = p;
  gsize len;

  member->is_point = TRUE;
  if (*p == '"')
    {
      const char *text = flat_string (p, end, &len);
      if (text == NULL)
        return NULL;
      member->is_point = TRUE;
      if (len == 3 && memcmp (text, "NaN", 3) == 0)
        member->value = NAN;
      else if (len == 8 && memcmp (text, "Infinity", 8) == 0)
        member->value = INFINITY;
      else if (len == 9 && memcmp (text, "-Infinity", 9) == 0)
        member->value = -INFINITY;
      else
        member->is_point = FALSE; /* text logged as a metric */
      return text + len + 1;
    }
  while (p < end && (g_ascii_isalnum (*p) || *p == '-' || *p == '+' || *p == '.'))
    p++;
  len = (gsize)(p - start);
  if (len == 4 && memcmp (start, "true", 4) == 0)
    member->value = 1.0;
  else if (len == 5 && memcmp (start, "false", 5) == 0)
    member->value = 0.0;
  else if (len == 4 && memcmp (start, "null", 4) == 0)
    member->is_point = FALSE;
  else if (!flat_number (start, len, &member->value))
    return NULL; /* nested, or not JSON: json-glib decides */
  return p;
}

/* The members of a flat object [json, json+len) into @members; FALSE when the row is anything
 * else. */
static gboolean
flat_scan (const char *json, gsize len, GArray *members)
{
  const char *p = json, *end = json + len;

  g_array_set_size (members, 0);
  p = flat_space (p, end);
  if (p >= end || *p++ != '{')
    return FALSE;
  p = flat_space (p, end);
  if (p < end && *p == '}')
    return flat_space (p + 1, end) == end;
  for (;;)
    {
      FlatMember member = { 0 };

      if (p >= end || *p != '"' || (member.key = flat_string (p, end, &member.key_len)) == NULL)
        return FALSE;
      p = flat_space (member.key + member.key_len + 1, end);
      if (p >= end || *p++ != ':')
        return FALSE;
      p = flat_space (p, end);
      if (p >= end || (p = flat_value (p, end, &member)) == NULL)
        return FALSE;
      g_array_append_val (members, member);
      p = flat_space (p, end);
      if (p < end && *p == ',')
        {
          p = flat_space (p + 1, end);
          continue;
        }
      return p < end && *p == '}' && flat_space (p + 1, end) == end;
    }
}

/* Emits a flat row's points; FALSE when the row is not flat (nothing emitted). */
static gboolean
flat_emit (Emit *e, const char *json, gsize len, GArray *members)
{
  if (!flat_scan (json, len, members))
    return FALSE;
  for (guint i = 0; i < members->len; i++)
    {
      const FlatMember *member = &g_array_index (members, FlatMember, i);
      DwScalarPoint point = { NULL, e->step, e->wall, member->value, NULL };

      if (!member->is_point || member->key_len == 0)
        continue;
      g_string_truncate (e->tag, 0);
      g_string_append_len (e->tag, member->key, (gssize)member->key_len);
      point.tag = e->tag->str;
      e->on_point (e->run_key, e->run_name, e->group, &point, e->user_data);
      e->n++;
    }
  return TRUE;
}

gboolean
dw_trackio_read (const char *path, gint64 after_id, guint budget_ms, gint64 max_rows,
                 DwRunPointFunc on_point, DwDiagFunc on_diag, gpointer user_data, gint64 *last_id,
                 GError **error)
{
  sqlite3 *db = open_ro (path, error);
  sqlite3_stmt *st = NULL;
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  Budget b = { budget_ms ? g_get_monotonic_time () + (gint64)budget_ms * 1000 : 0 };
  gboolean ok = FALSE, with_ids;
  g_autofree char *base = g_path_get_basename (path);
  Emit e = { on_point, user_data, NULL, NULL, base, 0, NAN, g_string_new (NULL), 0 };
  g_autoptr (GTimeZone) utc = g_time_zone_new_utc ();
  g_autoptr (GArray) members = g_array_new (FALSE, FALSE, sizeof (FlatMember));
  g_autofree char *last_ts = NULL;
  int rc;

  if (db == NULL)
    goto out;
  if (strrchr (base, '.') != NULL && strrchr (base, '.') != base)
    *strrchr (base, '.') = '\0'; /* the project */
  sqlite3_progress_handler (db, 1000, budget_cb, &b);
  with_ids = has_column (db, "metrics", "run_id");
  if (sqlite3_prepare_v2 (db,
                          with_ids ? "SELECT id, run_id, run_name, step, timestamp, metrics "
                                     "FROM metrics WHERE id > ?1 ORDER BY id LIMIT ?2"
                                   : "SELECT id, run_name, run_name, step, timestamp, metrics "
                                     "FROM metrics WHERE id > ?1 ORDER BY id LIMIT ?2",
                          -1, &st, NULL)
      != SQLITE_OK)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                   "%s: not a trackio project database (metrics table): %s", path,
                   sqlite3_errmsg (db));
      goto out;
    }
  sqlite3_bind_int64 (st, 1, after_id);
  sqlite3_bind_int64 (st, 2, max_rows > 0 ? max_rows : -1);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (st, 0);
      const char *key = (const char *)sqlite3_column_text (st, 1);
      const char *name = (const char *)sqlite3_column_text (st, 2);
      const char *ts = (const char *)sqlite3_column_text (st, 4);
      const char *json = (const char *)sqlite3_column_blob (st, 5);
      int json_len = sqlite3_column_bytes (st, 5);
      g_autoptr (GError) jerr = NULL;
      JsonNode *root;

      if (last_id != NULL)
        *last_id = id;
      if (key == NULL || name == NULL || json == NULL)
        continue;
      e.run_key = key;
      e.run_name = name;
      e.step = sqlite3_column_int64 (st, 3);
      if (ts == NULL)
        {
          e.wall = NAN;
          g_clear_pointer (&last_ts, g_free);
        }
      else if (g_strcmp0 (ts, last_ts) != 0)
        {
          /* rows logged together share their timestamp: parsed once */
          g_autoptr (GDateTime) dt = g_date_time_new_from_iso8601 (ts, utc);
          e.wall = dt == NULL
                     ? NAN
                     : (double)g_date_time_to_unix (dt) + g_date_time_get_microsecond (dt) * 1e-6;
          g_free (last_ts);
          last_ts = g_strdup (ts);
        }
      if (flat_emit (&e, json, (gsize)json_len, members))
        continue;
      if (!json_parser_load_from_data (parser, json, json_len, &jerr)
          || (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
        {
          if (on_diag != NULL)
            {
              g_autofree char *msg = g_strdup_printf (
                "%s: metrics row id %" G_GINT64_FORMAT ": not a JSON object (%s), skipped", path,
                id, jerr ? jerr->message : "other JSON value");
              on_diag (0, msg, user_data);
            }
          continue;
        }
      g_string_truncate (e.tag, 0);
      emit_object (&e, json_node_get_object (root), 0);
    }
  ok = read_end (db, rc, path, budget_ms, on_diag, user_data, error);
out:
  g_string_free (e.tag, TRUE);
  sqlite3_finalize (st);
  sqlite3_close (db);
  return ok;
}

/* MLflow run uuid → its name and its experiment's name (runs, experiments), read once per call
 * instead of joined on every metric row. */
typedef struct
{
  char *name, *experiment;
} MlflowRun;

static void
mlflow_run_free (gpointer data)
{
  MlflowRun *run = data;

  g_free (run->name);
  g_free (run->experiment);
  g_free (run);
}

static GHashTable *
mlflow_runs (sqlite3 *db)
{
  GHashTable *runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, mlflow_run_free);
  gboolean with_runs = has_column (db, "runs", "run_uuid") && has_column (db, "runs", "name");
  gboolean with_experiments = with_runs && has_column (db, "runs", "experiment_id")
                              && has_column (db, "experiments", "experiment_id")
                              && has_column (db, "experiments", "name");
  sqlite3_stmt *st = NULL;

  if (!with_runs
      || sqlite3_prepare_v2 (db,
                             with_experiments
                               ? "SELECT r.run_uuid, r.name, e.name FROM runs r LEFT JOIN "
                                 "experiments e ON e.experiment_id = r.experiment_id"
                               : "SELECT run_uuid, name, NULL FROM runs",
                             -1, &st, NULL)
           != SQLITE_OK)
    return runs;
  while (sqlite3_step (st) == SQLITE_ROW)
    {
      const char *uuid = (const char *)sqlite3_column_text (st, 0);
      MlflowRun *run;

      if (uuid == NULL || g_hash_table_contains (runs, uuid))
        continue;
      run = g_new (MlflowRun, 1);
      run->name = g_strdup ((const char *)sqlite3_column_text (st, 1));
      run->experiment = g_strdup ((const char *)sqlite3_column_text (st, 2));
      g_hash_table_insert (runs, g_strdup (uuid), run);
    }
  sqlite3_finalize (st);
  return runs;
}

gboolean
dw_mlflow_read_runs (const char *path, gint64 after_rowid, guint budget_ms, gint64 max_rows,
                     DwRunPointFunc on_point, DwDiagFunc on_diag, gpointer user_data,
                     gint64 *last_rowid, GError **error)
{
  sqlite3 *db = open_ro (path, error);
  sqlite3_stmt *st = NULL;
  Budget b = { budget_ms ? g_get_monotonic_time () + (gint64)budget_ms * 1000 : 0 };
  g_autofree char *stem = g_path_get_basename (path);
  g_autoptr (GHashTable) runs = NULL;
  g_autofree char *last_run = NULL;
  const char *name = NULL, *experiment = NULL;
  gboolean ok = FALSE;
  int rc;

  if (db == NULL)
    return FALSE;
  if (strrchr (stem, '.') != NULL && strrchr (stem, '.') != stem)
    *strrchr (stem, '.') = '\0';
  sqlite3_progress_handler (db, 1000, budget_cb, &b);
  runs = mlflow_runs (db);
  if (sqlite3_prepare_v2 (db,
                          "SELECT rowid, key, value, timestamp, step, is_nan, run_uuid "
                          "FROM metrics WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
                          -1, &st, NULL)
      != SQLITE_OK)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                   "%s: not an MLflow store (metrics table): %s", path, sqlite3_errmsg (db));
      goto out;
    }
  sqlite3_bind_int64 (st, 1, after_rowid);
  sqlite3_bind_int64 (st, 2, max_rows > 0 ? max_rows : -1);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const char *key = (const char *)sqlite3_column_text (st, 1);
      const char *run = (const char *)sqlite3_column_text (st, 6);
      int value_type = sqlite3_column_type (st, 2);
      double v = sqlite3_column_double (st, 2);
      double wall = sqlite3_column_type (st, 3) == SQLITE_NULL
                      ? NAN
                      : (double)sqlite3_column_int64 (st, 3) / 1000.0;

      if (last_rowid != NULL)
        *last_rowid = sqlite3_column_int64 (st, 0);
      if (key == NULL || run == NULL)
        continue;
      if (last_run == NULL || strcmp (run, last_run) != 0)
        {
          const MlflowRun *known = g_hash_table_lookup (runs, run);
          name = known != NULL ? known->name : NULL;
          experiment = known != NULL ? known->experiment : NULL;
          g_free (last_run);
          last_run = g_strdup (run);
        }
      if (sqlite3_column_int (st, 5) != 0 || value_type == SQLITE_NULL)
        v = NAN;
      else if (v == G_MAXDOUBLE || v == -G_MAXDOUBLE)
        v = v > 0 ? INFINITY : -INFINITY;
      DwScalarPoint p = { key, sqlite3_column_int64 (st, 4), wall, v, NULL };
      on_point (run, name != NULL && *name != '\0' ? name : run,
                experiment != NULL && *experiment != '\0' ? experiment : stem, &p, user_data);
    }
  ok = read_end (db, rc, path, budget_ms, on_diag, user_data, error);
out:
  sqlite3_finalize (st);
  sqlite3_close (db);
  return ok;
}
