/* dw-ingest-db.c — databases of several runs (trackio, MLflow's SQL store)
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

#include "dw-reader-loggers.h"

#include "dw-ingester-private.h"

/* ---- databases of several runs (trackio, MLflow's SQL store) ----------------------------- */

#define DB_READ_BUDGET_MS 20000

typedef struct
{
  FeedCtx *c;
  const char *path;
  const char *framework;
  char *cur_key;       /* run key of c->run_id */
  GHashTable *run_ids; /* run key → gint64 run id */
  gint64 first_run;
} MultiCtx;

/* The run @run_key of the database @m->path: found by its source "<db>#<key>", else created as
 * @run_name ("<group>/<run_name>", then "… (N)" when that name is taken by another source). */
static gint64
ensure_db_run (DwIngester *self, MultiCtx *m, const char *run_key, const char *run_name,
               const char *group, GError **error)
{
  g_autofree char *source = g_strdup_printf ("%s#%s", m->path, run_key);
  g_autoptr (GPtrArray) runs = dw_store_list_runs (self->store, error);
  g_autofree char *name = g_strdup (run_name[0] != '\0' ? run_name : run_key);

  if (runs == NULL)
    return 0;
  for (guint i = 0; i < runs->len; i++)
    {
      DwRunInfo *r = runs->pdata[i];
      if (g_strcmp0 (r->source, source) == 0)
        return r->id;
    }
  for (int attempt = 0; attempt < 100; attempt++)
    {
      gboolean taken = FALSE;
      for (guint i = 0; i < runs->len && !taken; i++)
        taken = g_str_equal (((DwRunInfo *)runs->pdata[i])->name, name);
      if (!taken)
        break;
      g_free (name);
      name = attempt == 0 ? g_strdup_printf ("%s/%s", group, run_name)
                          : g_strdup_printf ("%s/%s (%d)", group, run_name, attempt + 1);
    }
  return dw_store_ensure_run (self->store, name, m->framework, source, error);
}

static void
on_run_point_cb (const char *run_key, const char *run_name, const char *group,
                 const DwScalarPoint *p, gpointer user_data)
{
  MultiCtx *m = user_data;
  FeedCtx *c = m->c;

  if (G_UNLIKELY (c->error != NULL))
    return;
  if (G_UNLIKELY (m->cur_key == NULL || strcmp (m->cur_key, run_key) != 0))
    {
      gint64 *known = g_hash_table_lookup (m->run_ids, run_key);
      gint64 id
        = known != NULL ? *known : ensure_db_run (c->self, m, run_key, run_name, group, &c->error);
      if (id == 0)
        return;
      dw_ingest_feed_flush (c); /* the points so far belong to the previous run */
      g_hash_table_remove_all (c->tags);
      c->last_tag = NULL;
      c->run_id = id;
      if (known == NULL)
        g_hash_table_insert (m->run_ids, g_strdup (run_key), g_memdup2 (&id, sizeof id));
      if (m->first_run == 0)
        m->first_run = id;
      dw_ingester_report_run (c->report, id);
      g_free (m->cur_key);
      m->cur_key = g_strdup (run_key);
    }
  dw_ingest_feed_point_cb (p, c);
}

static void
on_db_diag_cb (goffset offset, const char *message, gpointer user_data)
{
  MultiCtx *m = user_data;

  if (m->c->run_id != 0)
    dw_ingest_feed_diag_cb (offset, message, m->c);
  else if (m->c->report != NULL)
    g_ptr_array_add (m->c->report->diagnostics, g_strdup (message)); /* no run to keep it in */
}

/* The foreign database is read into memory first, a batch of rows at a time, and only then
 * written in a transaction of the store: reading it (up to DB_READ_BUDGET_MS, SQLite's busy wait
 * on a database another process is committing to) never holds the store's write lock, so a
 * concurrent writer (watch, the window) is not blocked for that long. */
#define DB_BATCH_ROWS_MLFLOW  262144 /* one point per row */
#define DB_BATCH_ROWS_TRACKIO 2048   /* a row holds every metric of a step */

typedef struct
{
  const char *key, *name, *group; /* interned in DbBatch.strings */
} DbRun;

typedef struct
{
  guint run; /* index into DbBatch.runs */
  int precision;
  const char *tag, *step_key; /* interned */
  gint64 step;
  double wall_time, value;
} DbPoint;

typedef struct
{
  GStringChunk *strings;
  DwIngestAheadNames *tags; /* the points' tags, interned */
  GArray *runs;             /* DbRun */
  GHashTable *run_index;    /* interned key → index + 1 */
  GArray *points;           /* DbPoint */
  GPtrArray *diags;         /* messages of the reader */
  guint last_run;
} DbBatch;

static void
db_batch_reset (DbBatch *batch)
{
  g_clear_pointer (&batch->strings, g_string_chunk_free);
  g_clear_pointer (&batch->tags, dw_ingest_ahead_names_free);
  g_clear_pointer (&batch->run_index, g_hash_table_unref);
  g_clear_pointer (&batch->runs, g_array_unref);
  g_clear_pointer (&batch->points, g_array_unref);
  g_clear_pointer (&batch->diags, g_ptr_array_unref);
}

static void
db_batch_init (DbBatch *batch)
{
  batch->strings = g_string_chunk_new (4096);
  batch->tags = dw_ingest_ahead_names_new ();
  batch->runs = g_array_new (FALSE, FALSE, sizeof (DbRun));
  batch->run_index = g_hash_table_new (g_str_hash, g_str_equal);
  batch->points = g_array_new (FALSE, FALSE, sizeof (DbPoint));
  batch->diags = g_ptr_array_new_with_free_func (g_free);
  batch->last_run = G_MAXUINT;
}

static void
collect_point_cb (const char *run_key, const char *run_name, const char *group,
                  const DwScalarPoint *p, gpointer user_data)
{
  DbBatch *batch = user_data;
  guint run = batch->last_run;
  DbPoint point;

  if (run == G_MAXUINT || strcmp (g_array_index (batch->runs, DbRun, run).key, run_key) != 0)
    {
      gpointer found = g_hash_table_lookup (batch->run_index, run_key);

      if (found == NULL)
        {
          DbRun added = { g_string_chunk_insert_const (batch->strings, run_key),
                          g_string_chunk_insert_const (batch->strings, run_name),
                          g_string_chunk_insert_const (batch->strings, group) };
          g_array_append_val (batch->runs, added);
          run = batch->runs->len - 1;
          g_hash_table_insert (batch->run_index, (gpointer)added.key, GUINT_TO_POINTER (run + 1));
        }
      else
        run = GPOINTER_TO_UINT (found) - 1;
      batch->last_run = run;
    }
  point = (DbPoint){ run,
                     p->precision,
                     dw_ingest_ahead_names_intern (batch->tags, p->tag),
                     p->step_key != NULL ? g_string_chunk_insert_const (batch->strings, p->step_key)
                                         : NULL,
                     p->step,
                     p->wall_time,
                     p->value };
  g_array_append_val (batch->points, point);
}

static void
collect_diag_cb (goffset offset, const char *message, gpointer user_data)
{
  DbBatch *batch = user_data;

  g_ptr_array_add (batch->diags, g_strdup (message));
}

/* Writes what one batch read (@read_error: the read failed after it) in one transaction, the
 * file's record moved on to @last. *@stop when there was nothing to remember. */
static gboolean
db_write_batch (MultiCtx *m, DwFormat format, DwFileRecord *rec, const struct stat *st,
                DbBatch *batch, GError *read_error, gint64 last, gboolean *stop, GError **error)
{
  DwIngester *self = m->c->self;
  FeedCtx *c = m->c;
  GError *err = NULL;

  if (!dw_store_begin_appending (self->store, error))
    return FALSE;
  dw_store_set_source_rank (self->store, dw_ingest_feed_format_rank (format));
  for (guint i = 0; i < batch->points->len && c->error == NULL; i++)
    {
      const DbPoint *point = &g_array_index (batch->points, DbPoint, i);
      const DbRun *run = &g_array_index (batch->runs, DbRun, point->run);
      DwScalarPoint sp = { point->tag,   point->step,     point->wall_time,
                           point->value, point->step_key, point->precision };

      on_run_point_cb (run->key, run->name, run->group, &sp, m);
    }
  dw_ingest_feed_flush (c);
  for (guint i = 0; i < batch->diags->len; i++)
    on_db_diag_cb (0, batch->diags->pdata[i], m);
  if (read_error != NULL)
    {
      g_clear_error (&c->error);
      on_db_diag_cb (0, read_error->message, m);
    }
  if (c->error != NULL)
    return dw_ingester_fail_tx (self, error, g_steal_pointer (&c->error));
  if (rec->run_id == 0)
    rec->run_id = m->first_run;
  if (rec->run_id == 0)
    {
      /* no metric row yet: nothing to remember, looked at again when it changes */
      dw_store_rollback (self->store);
      dw_ingester_report_note (c->report, _ ("%s: no metric rows yet"), m->path);
      *stop = TRUE;
      return TRUE;
    }
  rec->offset = last;
  rec->format = format;
  dw_ingester_fill_identity (rec, st);
  if (c->max_step > rec->max_step)
    rec->max_step = c->max_step;
  if (!dw_store_put_file (self->store, rec, &err) || !dw_store_commit (self->store, &err))
    return dw_ingester_fail_tx (self, error, err);
  return TRUE;
}

/* One batch of rows read from the foreign database: by a worker thread while the main thread
 * writes the batch before it into the store (reading is a third of an MLflow ingest, writing
 * most of the rest; on two cores they overlap). The worker touches nothing but this struct: the
 * foreign file is opened read-only on a connection of its own, within the time budget. */
typedef struct
{
  const char *path;
  DwFormat format;
  gint64 after, last;
  gint64 deadline; /* monotonic µs */
  DbBatch batch;
  GError *error;
  gboolean ok, expired; /* expired: the budget was used up before the read began */
  GThread *thread;
} DbRead;

static gpointer
db_read_worker (gpointer data)
{
  DbRead *read = data;
  gint64 left_ms = (read->deadline - g_get_monotonic_time ()) / 1000;

  read->last = read->after;
  if (left_ms <= 0)
    {
      read->expired = TRUE; /* the reader said so; the rest is read next time */
      return NULL;
    }
  read->ok = read->format == DW_FORMAT_TRACKIO_SQLITE
               ? dw_trackio_read (read->path, read->after, (guint)left_ms, DB_BATCH_ROWS_TRACKIO,
                                  collect_point_cb, collect_diag_cb, &read->batch, &read->last,
                                  &read->error)
               : dw_mlflow_read_runs (read->path, read->after, (guint)left_ms, DB_BATCH_ROWS_MLFLOW,
                                      collect_point_cb, collect_diag_cb, &read->batch, &read->last,
                                      &read->error);
  return NULL;
}

/* Starts reading the rows after @after in a worker thread. */
static DbRead *
db_read_start (const char *path, DwFormat format, gint64 after, gint64 deadline)
{
  DbRead *read = g_new0 (DbRead, 1);

  read->path = path;
  read->format = format;
  read->after = after;
  read->deadline = deadline;
  db_batch_init (&read->batch);
  read->thread = g_thread_new ("dw-db-read", db_read_worker, read);
  return read;
}

/* Waits for @read to finish. */
static DbRead *
db_read_finish (DbRead *read)
{
  g_thread_join (g_steal_pointer (&read->thread));
  return read;
}

static void
db_read_free (DbRead *read)
{
  if (read == NULL)
    return;
  if (read->thread != NULL)
    db_read_finish (read);
  g_clear_error (&read->error);
  db_batch_reset (&read->batch);
  g_free (read);
}

/* A trackio project database or an MLflow SQL store: rows after the stored id, one Driftwatch
 * run per run of the database, read a batch at a time outside the store's transaction, the next
 * batch read while this one is written. */
gboolean
dw_ingest_db_read (DwIngester *self, const char *path, const struct stat *st, DwFormat format,
                   DwFileRecord *rec, DwIngestReport *report, GError **error)
{
  g_autoptr (GHashTable) tags = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) run_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GArray) pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  FeedCtx c = { self, report, path, 0, tags, NULL, 0, G_MININT64, G_MININT64, NULL, pending };
  MultiCtx m = { &c, path, dw_ingest_runs_format_framework (format), NULL, run_ids, 0 };
  gint64 deadline = g_get_monotonic_time () + (gint64)DB_READ_BUDGET_MS * 1000;
  gboolean ok = TRUE, stop = FALSE;
  DbRead *next = NULL;

  /* a database deleted and created again (a project started over) numbers its rows from 1
   * again: read it from its first row, newer values replace those of the same steps */
  if (rec->id != 0 && rec->offset > 0
      && (rec->inode != (guint64)st->st_ino || rec->dev != (guint64)st->st_dev
          || dw_sqlite_max_rowid (path, "metrics") < rec->offset))
    {
      dw_ingester_report_note (
        report, _ ("%s: a new database in place of the one read before: read from its first row"),
        path);
      rec->offset = 0;
    }
  next = db_read_start (path, format, rec->offset, deadline);
  while (ok && !stop)
    {
      DbRead *read = db_read_finish (g_steal_pointer (&next));

      if (read->expired)
        {
          db_read_free (read);
          break;
        }
      stop = !read->ok || read->last == read->after;
      if (!stop)
        next = db_read_start (path, format, read->last, deadline);
      g_clear_pointer (&m.cur_key, g_free); /* a new transaction: the run is looked up again */
      c.n_points = 0;
      ok
        = db_write_batch (&m, format, rec, st, &read->batch, read->error, read->last, &stop, error);
      if (ok && report != NULL)
        report->n_points += c.n_points;
      db_read_free (read);
    }
  db_read_free (next); /* read ahead of a write that failed or found no run: dropped */
  g_free (m.cur_key);
  return ok;
}
