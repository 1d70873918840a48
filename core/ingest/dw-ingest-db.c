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

/* A trackio project database or an MLflow SQL store: rows after the stored id, one Driftwatch
 * run per run of the database. */
gboolean
dw_ingest_db_read (DwIngester *self, const char *path, const struct stat *st, DwFormat format,
                   DwFileRecord *rec, DwIngestReport *report, GError **error)
{
  g_autoptr (GHashTable) tags = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) run_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GArray) pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  FeedCtx c = { self, report, path, 0, tags, NULL, 0, G_MININT64, G_MININT64, NULL, pending };
  MultiCtx m = { &c, path, dw_ingest_runs_format_framework (format), NULL, run_ids, 0 };
  gint64 last;
  GError *err = NULL;
  gboolean read_ok;

  /* a database deleted and created again (a project started over) numbers its rows from 1
   * again: read it from its first row, newer values replace those of the same steps */
  if (rec->id != 0 && rec->offset > 0
      && (rec->inode != (guint64)st->st_ino || rec->dev != (guint64)st->st_dev
          || dw_sqlite_max_rowid (path, "metrics") < rec->offset))
    {
      dw_ingester_report_note (
        report,
        _ ("%s: a new database in place of the one read before: read from its "
           "first row"),
        path);
      rec->offset = 0;
    }
  last = rec->offset;
  if (!dw_store_begin (self->store, error))
    return FALSE;
  dw_store_set_source_rank (self->store, dw_ingest_feed_format_rank (format));
  read_ok = format == DW_FORMAT_TRACKIO_SQLITE
              ? dw_trackio_read (path, rec->offset, DB_READ_BUDGET_MS, on_run_point_cb,
                                 on_db_diag_cb, &m, &last, &err)
              : dw_mlflow_read_runs (path, rec->offset, DB_READ_BUDGET_MS, on_run_point_cb,
                                     on_db_diag_cb, &m, &last, &err);
  dw_ingest_feed_flush (&c);
  g_free (m.cur_key);
  if (!read_ok)
    {
      g_clear_error (&c.error);
      on_db_diag_cb (0, err->message, &m);
      g_clear_error (&err);
    }
  if (c.error != NULL)
    return dw_ingester_fail_tx (self, error, c.error);
  if (rec->run_id == 0)
    rec->run_id = m.first_run;
  if (rec->run_id == 0)
    {
      /* no metric row yet: nothing to remember, looked at again when it changes */
      dw_store_rollback (self->store);
      dw_ingester_report_note (report, _ ("%s: no metric rows yet"), path);
      return TRUE;
    }
  rec->offset = last;
  rec->format = format;
  dw_ingester_fill_identity (rec, st);
  if (c.max_step > rec->max_step)
    rec->max_step = c.max_step;
  if (!dw_store_put_file (self->store, rec, &err) || !dw_store_commit (self->store, &err))
    return dw_ingester_fail_tx (self, error, err);
  if (report != NULL)
    report->n_points += c.n_points;
  return TRUE;
}
