/* dw-session.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Threads: everything here runs on the main thread except the bodies of ingest jobs
 * (dw_session_ingest_worker: a writable connection of its own) and of first health evaluations
 * (the store reader's worker); their results come back to the main thread through GTask.
 */
#define G_LOG_DOMAIN "dw-session"

#include "config.h"

#include <glib/gi18n.h>

#include "dw-demo.h"
#include "dw-follower.h"
#include "dw-ingester.h"
#include "dw-session.h"
#include "dw-store-delete.h"

struct _DwSession
{
  GObject parent_instance;

  DwStore *store;
  DwStoreReader *reader;
  GListStore *runs;    /* DwRunItem, newest first */
  GHashTable *items;   /* run id → DwRunItem*, also of runs gone from the list */
  GHashTable *pending; /* run ids (gint64*) whose first health evaluation is running */
  GHashTable *polled;  /* run id → gint64*: its last step the live refresh has seen */
  DwFollower *follower;
  gboolean follow;
  guint n_ingesting;
  guint refresh_id;
  guint refresh_delay_ms;
  GFileMonitor *store_monitors[2]; /* the store file and its write-ahead log */
  GCancellable *cancellable;
};

G_DEFINE_FINAL_TYPE (DwSession, dw_session, G_TYPE_OBJECT)

enum
{
  SIGNAL_MESSAGE,
  SIGNAL_RELOADED,
  SIGNAL_INGESTED,
  SIGNAL_HEALTH_CHANGED,
  SIGNAL_HEALTH_FIRED,
  SIGNAL_REFRESHED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
dw_session_message (DwSession *self, const char *text)
{
  g_signal_emit (self, signals[SIGNAL_MESSAGE], 0, text);
}

/* ---------------------------------------------------------------- health */

typedef struct
{
  DwSession *session;
  gint64 run_id;
} DwSessionHealthJob;

static void
dw_session_health_done_cb (GObject *object, GAsyncResult *result, gpointer user_data)
{
  DwSessionHealthJob *job = user_data;
  DwSession *self = job->session;
  g_autoptr (GError) error = NULL;
  DwHealthMonitor *monitor
    = dw_store_reader_evaluate_health_finish (DW_STORE_READER (object), result, &error);
  DwRunItem *item = g_hash_table_lookup (self->items, &job->run_id);

  g_hash_table_remove (self->pending, &job->run_id);
  if (monitor == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_warning ("Health rules on run %" G_GINT64_FORMAT ": %s", job->run_id, error->message);
    }
  else if (item != NULL && dw_run_item_get_monitor (item) == NULL)
    {
      dw_run_item_set_monitor (item, monitor);
      g_signal_emit (self, signals[SIGNAL_HEALTH_CHANGED], 0, job->run_id);
    }
  else
    dw_health_monitor_free (monitor);
  g_object_unref (self);
  g_free (job);
}

/* The first evaluation of a run's health reads all its ruled series: in the reader's worker. */
static void
dw_session_evaluate_health (DwSession *self, DwRunItem *item)
{
  DwSessionHealthJob *job;
  gint64 *key;

  if (dw_run_item_get_monitor (item) != NULL)
    return;
  key = g_new (gint64, 1);
  *key = dw_run_item_get_id (item);
  if (!g_hash_table_add (self->pending, key))
    return;
  job = g_new0 (DwSessionHealthJob, 1);
  job->session = g_object_ref (self);
  job->run_id = *key;
  dw_store_reader_evaluate_health_async (self->reader, job->run_id, self->cancellable,
                                         dw_session_health_done_cb, job);
}

/* ---------------------------------------------------------------- the run list */

static DwRunItem *
dw_session_ensure_item (DwSession *self, const DwRunInfo *info)
{
  DwRunItem *item = g_hash_table_lookup (self->items, &info->id);

  if (item == NULL)
    {
      gint64 *key = g_new (gint64, 1);

      *key = info->id;
      item = dw_run_item_new (info);
      g_hash_table_insert (self->items, key, item);
      g_hash_table_insert (self->polled, g_memdup2 (key, sizeof *key),
                           g_memdup2 (&info->last_step, sizeof info->last_step));
    }
  else
    dw_run_item_set_info (item, info);
  return item;
}

/* The list becomes @wanted (DwRunItem*, in order) with as few changes as possible: items of
 * runs still there stay where they are, so their rows (and the selection) are kept. */
static void
dw_session_splice (DwSession *self, GPtrArray *wanted)
{
  GHashTable *keep = g_hash_table_new (NULL, NULL);
  guint n_items = g_list_model_get_n_items (G_LIST_MODEL (self->runs));

  for (guint i = 0; i < wanted->len; i++)
    g_hash_table_add (keep, g_ptr_array_index (wanted, i));
  for (guint i = n_items; i > 0; i--)
    {
      g_autoptr (DwRunItem) item = g_list_model_get_item (G_LIST_MODEL (self->runs), i - 1);

      if (!g_hash_table_contains (keep, item))
        g_list_store_remove (self->runs, i - 1);
    }
  for (guint i = 0; i < wanted->len; i++)
    {
      g_autoptr (DwRunItem) there = g_list_model_get_item (G_LIST_MODEL (self->runs), i);

      if (there != g_ptr_array_index (wanted, i))
        g_list_store_insert (self->runs, i, g_ptr_array_index (wanted, i));
    }
  g_hash_table_unref (keep);
}

gboolean
dw_session_reload (DwSession *self, GError **error)
{
  g_autoptr (GPtrArray) runs = NULL;
  g_autoptr (GPtrArray) wanted = g_ptr_array_new ();

  g_return_val_if_fail (DW_IS_SESSION (self), FALSE);
  runs = dw_store_list_runs (self->store, error);
  if (runs == NULL)
    return FALSE;
  for (guint i = 0; i < runs->len; i++)
    g_ptr_array_add (wanted, dw_session_ensure_item (self, g_ptr_array_index (runs, i)));
  dw_session_splice (self, wanted);

  /* Every run's verdict, not only the shown ones: the sidebar badges are right from the start
   * (a collapsed run does not read "finished" until it is clicked). */
  for (guint i = 0; i < wanted->len; i++)
    dw_session_evaluate_health (self, g_ptr_array_index (wanted, i));
  g_debug ("%u runs in %s", runs->len, dw_store_get_path (self->store));
  g_signal_emit (self, signals[SIGNAL_RELOADED], 0);
  return TRUE;
}

/* ---------------------------------------------------------------- live refresh */

/* A run that got new points: its health monitor reads them (small: on the main thread). */
static void
dw_session_run_grew (DwSession *self, DwRunItem *item)
{
  DwHealthMonitor *monitor = dw_run_item_get_monitor (item);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) fired = NULL;

  dw_run_item_set_seen_growth (item, g_get_monotonic_time ());
  if (monitor == NULL)
    return;
  fired = dw_health_monitor_poll_run (monitor, self->store, dw_run_item_get_id (item), &error);
  if (fired == NULL)
    {
      g_warning ("Health rules on run %" G_GINT64_FORMAT ": %s", dw_run_item_get_id (item),
                 error->message);
      return;
    }
  dw_run_item_update_health (item);
  g_signal_emit (self, signals[SIGNAL_HEALTH_CHANGED], 0, dw_run_item_get_id (item));
  if (fired->len > 0)
    g_signal_emit (self, signals[SIGNAL_HEALTH_FIRED], 0, item, fired);
}

void
dw_session_refresh (DwSession *self)
{
  g_autoptr (GArray) grown = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint n_items;

  g_return_if_fail (DW_IS_SESSION (self));
  /* Every run of the list: a run written in the background gets its verdict on every new
   * point too, not only the one looked at. */
  n_items = g_list_model_get_n_items (G_LIST_MODEL (self->runs));
  for (guint i = 0; i < n_items; i++)
    {
      g_autoptr (DwRunItem) item = g_list_model_get_item (G_LIST_MODEL (self->runs), i);
      gint64 run_id = dw_run_item_get_id (item);
      gint64 *polled = g_hash_table_lookup (self->polled, &run_id);
      g_autoptr (DwRunInfo) info = dw_store_get_run (self->store, run_id, NULL);

      if (info == NULL)
        continue;
      dw_run_item_set_info (item, info);
      if (info->last_step == *polled)
        continue;
      *polled = info->last_step;
      g_array_append_val (grown, run_id);
      dw_session_run_grew (self, item);
    }
  g_signal_emit (self, signals[SIGNAL_REFRESHED], 0, grown);
}

/* One refresh after the store changed on disk: new runs (ingested by `driftwatch-cli watch` in
 * another process) appear in the list, runs that grew get their new points and verdicts. */
static gboolean
dw_session_refresh_cb (gpointer user_data)
{
  DwSession *self = user_data;
  g_autoptr (GPtrArray) runs = NULL;

  if (self->n_ingesting > 0)
    return G_SOURCE_CONTINUE; /* again after the delay: the ingest is still writing */
  self->refresh_id = 0;
  if ((runs = dw_store_list_runs (self->store, NULL)) != NULL
      && runs->len != g_list_model_get_n_items (G_LIST_MODEL (self->runs)))
    {
      g_autoptr (GError) error = NULL;

      if (!dw_session_reload (self, &error))
        dw_session_message (self, error->message);
      return G_SOURCE_REMOVE;
    }
  dw_session_refresh (self);
  return G_SOURCE_REMOVE;
}

static void
dw_session_store_changed_cb (GFileMonitor *monitor, GFile *file, GFile *other,
                             GFileMonitorEvent event, DwSession *self)
{
  if (event == G_FILE_MONITOR_EVENT_CHANGES_DONE_HINT
      || event == G_FILE_MONITOR_EVENT_ATTRIBUTE_CHANGED)
    return;
  /* coalesced: at most one refresh per delay, however many pages a writer commits */
  if (self->refresh_id == 0)
    self->refresh_id = g_timeout_add (self->refresh_delay_ms, dw_session_refresh_cb, self);
}

static void
dw_session_stop_monitors (DwSession *self)
{
  for (guint i = 0; i < G_N_ELEMENTS (self->store_monitors); i++)
    if (self->store_monitors[i] != NULL)
      {
        g_signal_handlers_disconnect_by_data (self->store_monitors[i], self);
        g_file_monitor_cancel (self->store_monitors[i]);
        g_clear_object (&self->store_monitors[i]);
      }
}

/* Watches the store file and its write-ahead log (GIO file monitors: no wake-up while nothing
 * is written); a change refreshes after @delay_ms, so a busy writer costs at most one refresh per
 * delay. 0 stops watching. */
void
dw_session_set_refresh_interval (DwSession *self, guint delay_ms)
{
  const char *path;

  g_return_if_fail (DW_IS_SESSION (self));
  g_clear_handle_id (&self->refresh_id, g_source_remove);
  dw_session_stop_monitors (self);
  if (delay_ms == 0)
    return;
  self->refresh_delay_ms = MAX (delay_ms, 100);
  path = dw_store_get_path (self->store);
  for (guint i = 0; path != NULL && i < G_N_ELEMENTS (self->store_monitors); i++)
    {
      g_autofree char *name = g_strconcat (path, i == 0 ? "" : "-wal", NULL);
      g_autoptr (GFile) file = g_file_new_for_path (name);

      self->store_monitors[i] = g_file_monitor_file (file, G_FILE_MONITOR_NONE, NULL, NULL);
      if (self->store_monitors[i] != NULL)
        g_signal_connect (self->store_monitors[i], "changed",
                          G_CALLBACK (dw_session_store_changed_cb), self);
    }
}

/* ---------------------------------------------------------------- following */

static void
dw_session_follower_flushed_cb (DwFollower *follower, DwSession *self)
{
  /* Right away rather than at the next refresh tick: the charts append at the next frame. */
  dw_session_refresh (self);
}

static void
dw_session_follower_error_cb (DwFollower *follower, const GError *error, const char *path,
                              DwSession *self)
{
  dw_session_message (self, error->message);
}

void
dw_session_set_follow (DwSession *self, gboolean follow)
{
  g_return_if_fail (DW_IS_SESSION (self));
  self->follow = follow;
}

/* Opened folders keep being read while their run is written (the follower ingests only what
 * was appended); the refresh then tells the window which runs grew. */
static void
dw_session_follow_paths (DwSession *self, char **paths)
{
  if (!self->follow)
    return;
  if (self->follower == NULL)
    {
      self->follower = dw_follower_new (self->store);
      g_signal_connect_object (self->follower, "flushed",
                               G_CALLBACK (dw_session_follower_flushed_cb), self, 0);
      g_signal_connect_object (self->follower, "error", G_CALLBACK (dw_session_follower_error_cb),
                               self, 0);
    }
  for (guint i = 0; paths[i] != NULL; i++)
    {
      const char *const *followed = dw_follower_get_paths (self->follower);
      g_autoptr (GError) error = NULL;

      if (followed != NULL && g_strv_contains (followed, paths[i]))
        continue;
      if (!dw_follower_add_path (self->follower, paths[i], &error))
        dw_session_message (self, error->message);
    }
}

/* ---------------------------------------------------------------- ingest */

typedef struct
{
  char *db_path;
  char **paths;
  char *demo_dir;
  GArray *run_ids;
  GPtrArray *problems; /* char*: bad input skipped */
  GPtrArray *errors;   /* char*: paths that could not be ingested */
} DwSessionIngestJob;

static void
dw_session_ingest_job_free (gpointer data)
{
  DwSessionIngestJob *job = data;

  g_free (job->db_path);
  g_strfreev (job->paths);
  g_free (job->demo_dir);
  g_array_unref (job->run_ids);
  g_ptr_array_unref (job->problems);
  g_ptr_array_unref (job->errors);
  g_free (job);
}

static void
dw_session_ingest_run (GTask *task, DwSessionIngestJob *job)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwIngester) ingester = NULL;
  DwIngestReport report;

  if (job->demo_dir != NULL
      && !dw_demo_write (job->demo_dir, DW_DEMO_COLLAPSE, DW_DEMO_DEFAULT_STEPS, 1, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  store = dw_store_open (job->db_path, &error);
  if (store == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  ingester = dw_ingester_new (store);
  dw_ingest_report_init (&report);
  for (guint i = 0; job->paths[i] != NULL; i++)
    {
      g_clear_error (&error);
      if (!dw_ingester_ingest_path (ingester, job->paths[i], &report, &error))
        g_ptr_array_add (job->errors, g_strdup (error->message));
    }
  g_array_append_vals (job->run_ids, report.run_ids->data, report.run_ids->len);
  for (guint i = 0; i < report.diagnostics->len; i++)
    g_ptr_array_add (job->problems, g_strdup (g_ptr_array_index (report.diagnostics, i)));
  dw_ingest_report_clear (&report);
  g_task_return_boolean (task, TRUE);
}

/* In a worker thread with its own store connection (SQLite WAL: the window keeps reading while
 * the worker writes). */
static void
dw_session_ingest_worker (GTask *task, gpointer source, gpointer task_data,
                          GCancellable *cancellable)
{
  dw_session_ingest_run (task, task_data);
}

static void
dw_session_report_ingest (DwSession *self, DwSessionIngestJob *job)
{
  for (guint i = 0; i < job->errors->len; i++)
    dw_session_message (self, g_ptr_array_index (job->errors, i));
  if (job->problems->len > 0)
    {
      /* The first problem names the file and the offset; the rest are in `driftwatch-cli
       * ingest`. */
      g_autofree char *text = g_strdup_printf (
        /* TRANSLATORS: %u problems were skipped while reading; %s is the first one */
        ngettext ("%u bad record skipped: %s", "%u bad records skipped, first: %s",
                  job->problems->len),
        job->problems->len, (char *)g_ptr_array_index (job->problems, 0));
      dw_session_message (self, text);
    }
  if (job->run_ids->len == 0 && job->errors->len == 0)
    dw_session_message (self, _ ("No training logs or rollout batches found there"));
}

static void
dw_session_ingest_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  DwSession *self = DW_SESSION (source);
  DwSessionIngestJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;

  self->n_ingesting--;
  g_debug ("ingest done: %u runs, %u errors, %u problems", job->run_ids->len, job->errors->len,
           job->problems->len);
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      dw_session_message (self, error->message);
      return;
    }
  dw_session_report_ingest (self, job);
  if (job->demo_dir == NULL && job->run_ids->len > 0)
    dw_session_follow_paths (self, job->paths);
  if (!dw_session_reload (self, &error))
    dw_session_message (self, error->message);
  g_signal_emit (self, signals[SIGNAL_INGESTED], 0, job->paths, job->run_ids,
                 job->demo_dir != NULL);
}

static void
dw_session_start_ingest (DwSession *self, const char *const *paths, const char *demo_dir)
{
  g_autoptr (GTask) task = g_task_new (self, NULL, dw_session_ingest_done_cb, NULL);
  DwSessionIngestJob *job = g_new0 (DwSessionIngestJob, 1);

  job->db_path = g_strdup (dw_store_get_path (self->store));
  job->paths = g_strdupv ((char **)paths);
  job->demo_dir = g_strdup (demo_dir);
  job->run_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  job->problems = g_ptr_array_new_with_free_func (g_free);
  job->errors = g_ptr_array_new_with_free_func (g_free);
  g_task_set_task_data (task, job, dw_session_ingest_job_free);
  g_task_set_source_tag (task, dw_session_start_ingest);
  g_task_set_name (task, "dw-ingest");
  self->n_ingesting++;
  g_debug ("ingesting %s", paths[0]);
  g_task_run_in_thread (task, dw_session_ingest_worker);
}

void
dw_session_ingest_paths (DwSession *self, const char *const *paths)
{
  g_return_if_fail (DW_IS_SESSION (self));
  g_return_if_fail (paths != NULL);
  dw_session_start_ingest (self, paths, NULL);
}

void
dw_session_load_demo (DwSession *self, const char *dir)
{
  const char *paths[] = { dir, NULL };

  g_return_if_fail (DW_IS_SESSION (self));
  g_return_if_fail (dir != NULL);
  dw_session_start_ingest (self, paths, dir);
}

gboolean
dw_session_remove_run (DwSession *self, gint64 run_id, GError **error)
{
  g_return_val_if_fail (DW_IS_SESSION (self), FALSE);
  if (!dw_store_delete_run (self->store, run_id, error))
    return FALSE;
  if (!dw_session_reload (self, error))
    return FALSE;
  /* SQLite may give the id to the next new run: nothing of this one may stick to it */
  g_hash_table_remove (self->items, &run_id);
  g_hash_table_remove (self->polled, &run_id);
  return TRUE;
}

/* ---------------------------------------------------------------- GObject */

static void
dw_session_dispose (GObject *object)
{
  DwSession *self = DW_SESSION (object);

  g_clear_handle_id (&self->refresh_id, g_source_remove);
  dw_session_stop_monitors (self);
  g_cancellable_cancel (self->cancellable);
  if (self->follower != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->follower, self);
      dw_follower_stop (self->follower);
      g_clear_object (&self->follower);
    }
  G_OBJECT_CLASS (dw_session_parent_class)->dispose (object);
}

static void
dw_session_finalize (GObject *object)
{
  DwSession *self = DW_SESSION (object);

  g_clear_object (&self->runs);
  g_hash_table_unref (self->items);
  g_hash_table_unref (self->pending);
  g_hash_table_unref (self->polled);
  g_clear_object (&self->reader);
  g_clear_object (&self->store);
  g_clear_object (&self->cancellable);
  G_OBJECT_CLASS (dw_session_parent_class)->finalize (object);
}

static void
dw_session_class_init (DwSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GType type = G_TYPE_FROM_CLASS (klass);

  object_class->dispose = dw_session_dispose;
  object_class->finalize = dw_session_finalize;

  signals[SIGNAL_MESSAGE] = g_signal_new ("message", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_RELOADED]
    = g_signal_new ("reloaded", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_INGESTED]
    = g_signal_new ("ingested", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 3,
                    G_TYPE_STRV, G_TYPE_ARRAY, G_TYPE_BOOLEAN);
  signals[SIGNAL_HEALTH_CHANGED] = g_signal_new ("health-changed", type, G_SIGNAL_RUN_LAST, 0, NULL,
                                                 NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT64);
  signals[SIGNAL_HEALTH_FIRED]
    = g_signal_new ("health-fired", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                    DW_TYPE_RUN_ITEM, G_TYPE_PTR_ARRAY);
  signals[SIGNAL_REFRESHED] = g_signal_new ("refreshed", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                            NULL, G_TYPE_NONE, 1, G_TYPE_ARRAY);
}

static void
dw_session_init (DwSession *self)
{
  self->runs = g_list_store_new (DW_TYPE_RUN_ITEM);
  self->items = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref);
  self->pending = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  self->polled = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  self->cancellable = g_cancellable_new ();
  self->follow = TRUE;
}

DwSession *
dw_session_new (DwStore *store)
{
  DwSession *self;

  g_return_val_if_fail (DW_IS_STORE (store), NULL);
  self = g_object_new (DW_TYPE_SESSION, NULL);
  self->store = g_object_ref (store);
  self->reader = dw_store_reader_new (dw_store_get_path (store));
  return self;
}

DwStore *
dw_session_get_store (DwSession *self)
{
  g_return_val_if_fail (DW_IS_SESSION (self), NULL);
  return self->store;
}

DwStoreReader *
dw_session_get_reader (DwSession *self)
{
  g_return_val_if_fail (DW_IS_SESSION (self), NULL);
  return self->reader;
}

GListModel *
dw_session_get_runs (DwSession *self)
{
  g_return_val_if_fail (DW_IS_SESSION (self), NULL);
  return G_LIST_MODEL (self->runs);
}

DwRunItem *
dw_session_lookup (DwSession *self, gint64 run_id, guint *position)
{
  DwRunItem *item;

  g_return_val_if_fail (DW_IS_SESSION (self), NULL);
  item = g_hash_table_lookup (self->items, &run_id);
  if (item == NULL || !g_list_store_find (self->runs, item, position))
    return NULL;
  return item;
}

gboolean
dw_session_is_busy (DwSession *self)
{
  g_return_val_if_fail (DW_IS_SESSION (self), FALSE);
  return self->n_ingesting > 0 || g_hash_table_size (self->pending) > 0;
}
