/* dw-follower.c — follow run folders and log files live (GIO file monitors, no polling)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every event of every monitor only marks a path dirty; one GSource, whose ready time is moved
 * with each event (quiet period after the last event, bounded by max-delay after the first),
 * then ingests the dirty paths. Whether a dirty path is a new folder (monitored and scanned), a
 * regular file (ingested) or gone (skipped) is decided at flush time, from the file system, so
 * renames, atomic replaces and create/delete races need no special cases.
 *
 * A file that fails to ingest while it is still being written (modified less than SETTLE_US
 * ago: e.g. a batch file half written) is retried once it has been quiet for SETTLE_US; the
 * error is reported only if it still fails then (or after GIVE_UP_US of failing). The same
 * error for an unchanged file is reported once.
 */
#include "config.h"

#include "dw-follower.h"
#include "dw-reader-loggers.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "dw-ingester.h"
#include "dw-store-writer.h"

#define SETTLE_US  (1000 * G_TIME_SPAN_MILLISECOND)
#define GIVE_UP_US (5 * G_TIME_SPAN_SECOND)
/* GLib's default (800 ms between two CHANGED events of one file) would dominate the latency. */
#define MONITOR_RATE_LIMIT_MS 50
/* From the main loop, files are ingested in slices of about this long, so a large initial
 * ingest lets signals (Ctrl+C) and a GUI's redraws through between files. */
#define SLICE_US (50 * G_TIME_SPAN_MILLISECOND)
/* How long one look at a file not recognised yet may take (it goes on from there next time). */
#define SNIFF_BUDGET_US (200 * G_TIME_SPAN_MILLISECOND)

typedef struct
{
  gint64 first_fail_us; /* monotonic */
  gint64 retry_at_us;   /* monotonic; 0: none scheduled */
  char *reported;       /* message already reported for this file (suppresses repeats) */
} FailState;

struct _DwFollower
{
  GObject parent_instance;

  DwStore *store;
  DwIngester *ingester;
  char *store_path; /* the store's own files are never ingested (store inside a watched folder) */
  guint delay_ms;
  guint max_delay_ms;
  gsize chunk_size; /* 0: the ingester's default */

  GPtrArray *paths;     /* as given, NULL-terminated */
  GPtrArray *roots;     /* absolute, canonical; same order */
  GHashTable *monitors; /* absolute path → GFileMonitor */
  GHashTable *pending;  /* absolute path → NULL (a set) */
  GPtrArray *queue;     /* paths taken from pending, sorted, being ingested slice by slice */
  GHashTable *failed;   /* absolute path → FailState */
  GHashTable *skipped;  /* absolute path → the reason ::skipped gave for it */
  gint64 first_pending_us;
  gint64 last_event_us;

  GMainContext *context;
  GSource *source;
  gboolean flushing;

  DwFollowerIngestFunc func;
  gpointer func_data;
  GDestroyNotify func_destroy;
};

G_DEFINE_FINAL_TYPE (DwFollower, dw_follower, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_STORE,
  PROP_DELAY,
  PROP_MAX_DELAY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum
{
  SIGNAL_INGESTED,
  SIGNAL_ERROR,
  SIGNAL_FLUSHED,
  SIGNAL_SKIPPED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
fail_state_free (FailState *f)
{
  g_free (f->reported);
  g_free (f);
}

/* ---------------------------------------------------------------------------------------- */
/* Scheduling                                                                                 */

static void
update_ready_time (DwFollower *self)
{
  gint64 ready = -1;

  if (self->source == NULL)
    return;
  if (self->queue->len > 0 && !self->flushing)
    {
      /* a slice is done: go on as soon as the other sources (signals, redraws) had a turn */
      g_source_set_ready_time (self->source, 0);
      return;
    }
  if (g_hash_table_size (self->pending) > 0)
    ready = MIN (self->last_event_us + (gint64)self->delay_ms * G_TIME_SPAN_MILLISECOND,
                 self->first_pending_us + (gint64)self->max_delay_ms * G_TIME_SPAN_MILLISECOND);
  {
    GHashTableIter it;
    gpointer value;

    g_hash_table_iter_init (&it, self->failed);
    while (g_hash_table_iter_next (&it, NULL, &value))
      {
        FailState *f = value;
        if (f->retry_at_us > 0 && (ready < 0 || f->retry_at_us < ready))
          ready = f->retry_at_us;
      }
  }
  g_source_set_ready_time (self->source, ready);
}

static void
mark_dirty (DwFollower *self, const char *path)
{
  gint64 now = g_get_monotonic_time ();

  if (g_hash_table_size (self->pending) == 0)
    self->first_pending_us = now;
  self->last_event_us = now;
  if (!g_hash_table_contains (self->pending, path))
    g_hash_table_add (self->pending, g_strdup (path));
  update_ready_time (self);
}

static guint flush_for (DwFollower *self, gint64 budget_us);

static gboolean
source_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  DwFollower *self = user_data;
  gint64 now = g_get_monotonic_time ();
  gboolean due
    = g_hash_table_size (self->pending) > 0
      && (now >= self->last_event_us + (gint64)self->delay_ms * G_TIME_SPAN_MILLISECOND
          || now >= self->first_pending_us + (gint64)self->max_delay_ms * G_TIME_SPAN_MILLISECOND);
  GHashTableIter it;
  gpointer key, value;

  /* Retries that are due join the queue. */
  g_hash_table_iter_init (&it, self->failed);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      FailState *f = value;
      if (f->retry_at_us > 0 && f->retry_at_us <= now)
        {
          f->retry_at_us = 0;
          if (g_hash_table_size (self->pending) == 0)
            self->first_pending_us = now;
          g_hash_table_add (self->pending, g_strdup (key));
          due = TRUE;
        }
    }
  if (due || self->queue->len > 0)
    flush_for (self, SLICE_US);
  else
    update_ready_time (self);
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs source_funcs = {
  .dispatch = source_dispatch,
};

/* ---------------------------------------------------------------------------------------- */
/* Monitors                                                                                   */

static void on_monitor_changed (GFileMonitor *monitor, GFile *file, GFile *other,
                                GFileMonitorEvent event, gpointer user_data);

static gboolean
is_store_file (DwFollower *self, const char *path)
{
  gsize n;

  if (self->store_path == NULL || !g_str_has_prefix (path, self->store_path))
    return FALSE;
  n = strlen (self->store_path);
  return path[n] == '\0' || g_str_equal (path + n, "-wal") || g_str_equal (path + n, "-shm")
         || g_str_equal (path + n, "-journal");
}

static gboolean
watch (DwFollower *self, const char *path, gboolean is_dir, GError **error)
{
  g_autoptr (GFile) file = NULL;
  g_autoptr (GFileMonitor) monitor = NULL;

  if (g_hash_table_contains (self->monitors, path))
    return TRUE;
  file = g_file_new_for_path (path);
  if (is_dir)
    monitor = g_file_monitor_directory (file, G_FILE_MONITOR_WATCH_MOVES, NULL, error);
  else
    monitor = g_file_monitor_file (file, G_FILE_MONITOR_WATCH_MOVES, NULL, error);
  if (monitor == NULL)
    {
      g_prefix_error (error, _ ("%s: cannot follow: "), path);
      return FALSE;
    }
  g_file_monitor_set_rate_limit (monitor, MONITOR_RATE_LIMIT_MS);
  g_signal_connect (monitor, "changed", G_CALLBACK (on_monitor_changed), self);
  g_hash_table_insert (self->monitors, g_strdup (path), g_steal_pointer (&monitor));
  return TRUE;
}

static void
emit_error_literal (DwFollower *self, const char *path, GError *error)
{
  g_signal_emit (self, signals[SIGNAL_ERROR], 0, error, path);
}

/* Monitors @dir and everything below it (real folders only: symlinked folders are not followed,
 * so a link loop cannot recurse), and queues every file found. The folder is monitored before
 * it is listed, so a file created meanwhile is seen by one or the other. */
static gboolean
watch_tree (DwFollower *self, const char *dir, GError **error)
{
  g_autoptr (GDir) d = NULL;
  const char *name;

  if (!watch (self, dir, TRUE, error))
    return FALSE;
  d = g_dir_open (dir, 0, error);
  if (d == NULL)
    {
      g_prefix_error (error, "%s: ", dir);
      return FALSE;
    }
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *child = g_build_filename (dir, name, NULL);
      GStatBuf st;

      if (g_lstat (child, &st) != 0)
        continue;
      if (S_ISDIR (st.st_mode))
        {
          g_autoptr (GError) sub_error = NULL;
          if (!watch_tree (self, child, &sub_error))
            emit_error_literal (self, child, sub_error);
        }
      else if (!is_store_file (self, child))
        mark_dirty (self, child);
    }
  return TRUE;
}

/* A folder below a root went away: drop its monitors and the monitors below it. */
static void
unwatch_tree (DwFollower *self, const char *dir)
{
  g_autofree char *prefix = g_strconcat (dir, G_DIR_SEPARATOR_S, NULL);
  GHashTableIter it;
  gpointer key, value;

  g_hash_table_iter_init (&it, self->monitors);
  while (g_hash_table_iter_next (&it, &key, &value))
    if ((g_str_equal (key, dir) || g_str_has_prefix (key, prefix))
        && !g_ptr_array_find_with_equal_func (self->roots, key, g_str_equal, NULL))
      {
        g_file_monitor_cancel (value);
        g_signal_handlers_disconnect_by_data (value, self);
        g_hash_table_iter_remove (&it);
      }
}

static void
on_monitor_changed (GFileMonitor *monitor, GFile *file, GFile *other, GFileMonitorEvent event,
                    gpointer user_data)
{
  DwFollower *self = user_data;
  g_autofree char *path = file ? g_file_get_path (file) : NULL;
  g_autofree char *other_path = other ? g_file_get_path (other) : NULL;

  switch (event)
    {
    case G_FILE_MONITOR_EVENT_DELETED:
    case G_FILE_MONITOR_EVENT_MOVED_OUT:
    case G_FILE_MONITOR_EVENT_UNMOUNTED:
      /* Nothing stored is removed: the points stay. A folder's monitors go; a file that comes
       * back is seen as rewritten (shorter / other first bytes) by the ingester. */
      if (path != NULL)
        {
          unwatch_tree (self, path);
          g_hash_table_remove (self->pending, path);
          g_hash_table_remove (self->failed, path);
        }
      return;
    case G_FILE_MONITOR_EVENT_RENAMED:
      if (path != NULL)
        {
          unwatch_tree (self, path);
          g_hash_table_remove (self->pending, path);
          g_hash_table_remove (self->failed, path);
        }
      if (other_path != NULL && !is_store_file (self, other_path))
        mark_dirty (self, other_path);
      return;
    case G_FILE_MONITOR_EVENT_ATTRIBUTE_CHANGED:
    case G_FILE_MONITOR_EVENT_PRE_UNMOUNT:
      return;
    case G_FILE_MONITOR_EVENT_CHANGED:
    case G_FILE_MONITOR_EVENT_CHANGES_DONE_HINT:
    case G_FILE_MONITOR_EVENT_CREATED:
    case G_FILE_MONITOR_EVENT_MOVED_IN:
    case G_FILE_MONITOR_EVENT_MOVED:
    default:
      if (path != NULL && !is_store_file (self, path))
        {
          /* a WAL-mode SQLite writer (trackio, MLflow) commits into "<db>-wal" */
          g_autofree char *db = dw_sqlite_main_file (path);
          mark_dirty (self, db != NULL ? db : path);
        }
      return;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Ingest                                                                                     */

static const char *
root_of (DwFollower *self, const char *path)
{
  const char *best = NULL;

  for (guint i = 0; i < self->roots->len; i++)
    {
      const char *r = self->roots->pdata[i];
      gsize n = strlen (r);
      if (g_str_has_prefix (path, r) && (path[n] == '\0' || path[n] == G_DIR_SEPARATOR)
          && (best == NULL || n > strlen (best)))
        best = r;
    }
  return best;
}

/* The run folder a file not yet in the store belongs to: the deepest stored run whose source
 * is a folder holding @path, within @root. NULL when none (a new run, or a run folder's first
 * file). */
static char *
known_run_root (DwFollower *self, const char *root, const char *path, GError **error)
{
  g_autoptr (GPtrArray) runs = dw_store_list_runs (self->store, error);
  const char *best = NULL;

  if (runs == NULL)
    return NULL;
  for (guint i = 0; i < runs->len; i++)
    {
      const DwRunInfo *r = runs->pdata[i];
      gsize n = r->source ? strlen (r->source) : 0;

      if (n > 0 && g_str_has_prefix (path, r->source) && path[n] == G_DIR_SEPARATOR
          && g_str_has_prefix (r->source, root) && (best == NULL || n > strlen (best)))
        best = r->source;
    }
  return g_strdup (best);
}

/* The default ingest step: the store's ingester. A known file keeps its run; a new file goes
 * to the run folder of the stored run holding it; a recognised file outside any stored run
 * makes the followed folder be ingested as a whole, so runs are detected exactly as
 * `driftwatch-cli ingest FOLDER` detects them. */
static gboolean
ingest_with_ingester (DwFollower *self, const char *root, const char *path, DwIngestReport *report,
                      GError **error)
{
  g_autoptr (DwFileRecord) record = NULL;
  g_autofree char *run_root = NULL;
  GError *local = NULL;

  if (self->ingester == NULL)
    {
      self->ingester = dw_ingester_new (self->store);
      /* one look per change event stays short; a file not recognised yet is examined further
       * from where the last look stopped, as it grows */
      dw_ingester_set_sniff_budget (self->ingester, SNIFF_BUDGET_US);
      if (self->chunk_size > 0)
        dw_ingester_set_chunk_size (self->ingester, self->chunk_size);
    }
  if (g_str_equal (root, path))
    return dw_ingester_ingest_file (self->ingester, path, NULL, report, error);
  record = dw_store_get_file (self->store, path, &local);
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  if (record != NULL)
    return dw_ingester_ingest_file (self->ingester, path, NULL, report, error);
  {
    g_autofree char *reason = NULL;
    if (dw_ingester_recognise (self->ingester, path, &reason) == DW_FORMAT_UNKNOWN)
      {
        /* not (yet) a training log or batch: examined further when it changes, or at once
         * when the look ran out of time before the end of the file; a file refused for good
         * (a document, a binary file, another kind of SQLite file) is said once */
        if (dw_ingester_recognise_unfinished (self->ingester, path))
          mark_dirty (self, path);
        else if (dw_ingester_recognise_refused (self->ingester, path) && reason != NULL
                 && g_strcmp0 (g_hash_table_lookup (self->skipped, path), reason) != 0)
          {
            g_hash_table_insert (self->skipped, g_strdup (path), g_strdup (reason));
            g_signal_emit (self, signals[SIGNAL_SKIPPED], 0, path, reason);
          }
        return TRUE;
      }
  }
  run_root = known_run_root (self, root, path, &local);
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  if (run_root != NULL)
    return dw_ingester_ingest_file (self->ingester, path, run_root, report, error);
  return dw_ingester_ingest_path (self->ingester, root, report, error);
}

/* The error as the ::error signal carries it: naming the file. */
static GError *
error_naming (const char *path, const GError *error)
{
  GError *e = g_error_copy (error);
  const char *colon = strstr (e->message, ": ");
  g_autofree char *named = colon != NULL ? g_strndup (e->message, colon - e->message) : NULL;

  /* A message that starts with another file's path is about that file (reading a new run
   * folder reads all of it): prefixing the file that woke the follower blamed the wrong one. */
  if (strstr (e->message, path) == NULL
      && !(named != NULL && g_path_is_absolute (named) && g_file_test (named, G_FILE_TEST_EXISTS)))
    g_prefix_error (&e, "%s: ", path);
  return e;
}

static gboolean
ingest_one_reporting (DwFollower *self, const char *path, DwIngestReport *r)
{
  GStatBuf st;
  const char *root = root_of (self, path);
  g_autoptr (GError) error = NULL;
  FailState *fail;
  gboolean ok;

  if (root == NULL || g_stat (path, &st) != 0)
    return TRUE; /* gone (a temporary file renamed away, a deleted file): nothing to read */
  if (S_ISDIR (st.st_mode) && !g_str_equal (path, root)
      && g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    return TRUE; /* as `ingest` and README: symlinked folders are not followed (no loops) */
  if (S_ISDIR (st.st_mode))
    {
      /* A new (or moved-in) folder: follow it and queue what it holds. */
      if (!watch_tree (self, path, &error))
        {
          g_autoptr (GError) e = error_naming (path, error);
          emit_error_literal (self, path, e);
          return FALSE;
        }
      return TRUE;
    }
  if (!S_ISREG (st.st_mode))
    return TRUE;

  if (self->func != NULL)
    {
      gint64 run_id = 0, n_points = 0;

      ok = self->func (self->store, root, path, &run_id, &n_points, self->func_data, &error);
      if (ok && run_id > 0 && n_points > 0)
        g_array_append_val (r->run_ids, run_id);
      r->n_points = ok ? (guint64)MAX (n_points, 0) : 0;
    }
  else
    ok = ingest_with_ingester (self, root, path, r, &error);
  /* Bad input inside the file (garbage lines, corrupt records): stored and skipped by the
   * ingester, reported here with the file and the offset. */
  for (guint i = 0; i < r->diagnostics->len; i++)
    {
      g_autoptr (GError) e
        = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_INVALID_DATA, r->diagnostics->pdata[i]);
      emit_error_literal (self, path, e);
    }
  if (ok)
    {
      gint64 n_new = (gint64)(r->n_points + r->n_batches);

      for (guint i = 0; n_new > 0 && i < r->run_ids->len; i++)
        g_signal_emit (self, signals[SIGNAL_INGESTED], 0, g_array_index (r->run_ids, gint64, i),
                       n_new, path);
      if (r->incomplete->len == 0)
        {
          g_hash_table_remove (self->failed, path);
          return TRUE;
        }
      /* A batch file that ends early: still being written, or truncated for good. Handled as
       * a failure below: reported only once the file has stopped changing. */
      error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT, r->incomplete->pdata[0]);
    }
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)
           || g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    return TRUE; /* vanished between the event and the read */

  {
    gint64 now = g_get_monotonic_time ();
    gint64 age_us = g_get_real_time ()
                    - ((gint64)st.st_mtim.tv_sec * G_USEC_PER_SEC + st.st_mtim.tv_nsec / 1000);

    fail = g_hash_table_lookup (self->failed, path);
    if (fail == NULL)
      {
        fail = g_new0 (FailState, 1);
        fail->first_fail_us = now;
        g_hash_table_insert (self->failed, g_strdup (path), fail);
      }
    /* Still being written: wait until the file is quiet, then try again. */
    if (age_us < SETTLE_US && now - fail->first_fail_us < GIVE_UP_US)
      {
        fail->retry_at_us = now + MAX (SETTLE_US - age_us, 100 * G_TIME_SPAN_MILLISECOND);
        return FALSE;
      }
    fail->retry_at_us = 0;
    if (g_strcmp0 (fail->reported, error->message) != 0)
      {
        g_autoptr (GError) e = error_naming (path, error);
        g_free (fail->reported);
        fail->reported = g_strdup (error->message);
        emit_error_literal (self, path, e);
      }
  }
  return FALSE;
}

static gboolean
ingest_one (DwFollower *self, const char *path)
{
  DwIngestReport report;
  gboolean ok;

  dw_ingest_report_init (&report);
  ok = ingest_one_reporting (self, path, &report);
  dw_ingest_report_clear (&report);
  return ok;
}

static gint
compare_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* Ingests queued files for about @budget_us (< 0: until nothing is queued), emits ::flushed. */
static guint
flush_for (DwFollower *self, gint64 budget_us)
{
  gint64 start = g_get_monotonic_time ();
  guint n_ok = 0;

  if (self->flushing)
    return 0;
  self->flushing = TRUE;
  g_object_ref (self);
  for (;;)
    {
      if (self->queue->len == 0)
        {
          /* New folders found while ingesting queue more files: take them in the next round. */
          guint n = 0;
          char **batch;

          if (g_hash_table_size (self->pending) == 0)
            break;
          batch = (char **)g_hash_table_get_keys_as_array (self->pending, &n);
          g_hash_table_steal_all (self->pending);
          qsort (batch, n, sizeof (char *), compare_paths);
          /* reversed, so the next path is taken from the end */
          for (guint i = n; i > 0; i--)
            g_ptr_array_add (self->queue, batch[i - 1]);
          g_free (batch);
        }
      if (budget_us >= 0 && g_get_monotonic_time () - start >= budget_us)
        break;
      {
        g_autofree char *path = g_ptr_array_steal_index (self->queue, self->queue->len - 1);
        if (self->roots->len > 0 && ingest_one (self, path))
          n_ok++;
      }
    }
  self->flushing = FALSE;
  update_ready_time (self);
  g_signal_emit (self, signals[SIGNAL_FLUSHED], 0);
  g_object_unref (self);
  return n_ok;
}

guint
dw_follower_flush (DwFollower *self)
{
  g_return_val_if_fail (DW_IS_FOLLOWER (self), 0);
  return flush_for (self, -1);
}

/* ---------------------------------------------------------------------------------------- */
/* Public API                                                                                 */

DwFollower *
dw_follower_new (DwStore *store)
{
  g_return_val_if_fail (DW_IS_STORE (store), NULL);
  return g_object_new (DW_TYPE_FOLLOWER, "store", store, NULL);
}

DwStore *
dw_follower_get_store (DwFollower *self)
{
  g_return_val_if_fail (DW_IS_FOLLOWER (self), NULL);
  return self->store;
}

void
dw_follower_set_ingest_func (DwFollower *self, DwFollowerIngestFunc func, gpointer user_data,
                             GDestroyNotify destroy)
{
  g_return_if_fail (DW_IS_FOLLOWER (self));
  if (self->func_destroy != NULL)
    self->func_destroy (self->func_data);
  self->func = func;
  self->func_data = user_data;
  self->func_destroy = destroy;
}

void
dw_follower_set_chunk_size (DwFollower *self, gsize bytes)
{
  g_return_if_fail (DW_IS_FOLLOWER (self));

  self->chunk_size = bytes;
  if (self->ingester != NULL && bytes > 0)
    dw_ingester_set_chunk_size (self->ingester, bytes);
}

guint
dw_follower_get_delay (DwFollower *self)
{
  g_return_val_if_fail (DW_IS_FOLLOWER (self), 0);
  return self->delay_ms;
}

void
dw_follower_set_delay (DwFollower *self, guint delay_ms)
{
  g_return_if_fail (DW_IS_FOLLOWER (self));
  if (self->delay_ms == delay_ms)
    return;
  self->delay_ms = delay_ms;
  update_ready_time (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DELAY]);
}

guint
dw_follower_get_max_delay (DwFollower *self)
{
  g_return_val_if_fail (DW_IS_FOLLOWER (self), 0);
  return self->max_delay_ms;
}

void
dw_follower_set_max_delay (DwFollower *self, guint max_delay_ms)
{
  g_return_if_fail (DW_IS_FOLLOWER (self));
  if (self->max_delay_ms == max_delay_ms)
    return;
  self->max_delay_ms = max_delay_ms;
  update_ready_time (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_DELAY]);
}

gboolean
dw_follower_add_path (DwFollower *self, const char *path, GError **error)
{
  g_autofree char *abs = NULL, *canonical = NULL;
  GStatBuf st;

  g_return_val_if_fail (DW_IS_FOLLOWER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  abs = g_canonicalize_filename (path, NULL);
  if (g_stat (abs, &st) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _ ("%s: %s"), path,
                   g_strerror (saved));
      return FALSE;
    }
  /* The ingester keys files by g_canonicalize_filename() paths (symlinks not resolved), and
   * GIO reports events under the monitored path: both agree with this. */
  canonical = g_strdup (abs);
  if (g_ptr_array_find_with_equal_func (self->roots, canonical, g_str_equal, NULL))
    return TRUE;
  if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                   _ ("%s: neither a folder nor a regular file"), path);
      return FALSE;
    }
  g_ptr_array_add (self->roots, g_strdup (canonical));
  g_ptr_array_insert (self->paths, (gint)self->paths->len - 1, g_strdup (path));
  if (S_ISDIR (st.st_mode))
    {
      if (!watch_tree (self, canonical, error))
        goto fail;
    }
  else
    {
      if (!watch (self, canonical, FALSE, error))
        goto fail;
      mark_dirty (self, canonical);
    }
  return TRUE;

fail:
  g_ptr_array_remove_index (self->roots, self->roots->len - 1);
  g_ptr_array_remove_index (self->paths, self->paths->len - 2);
  return FALSE;
}

const char *const *
dw_follower_get_paths (DwFollower *self)
{
  g_return_val_if_fail (DW_IS_FOLLOWER (self), NULL);
  return (const char *const *)self->paths->pdata;
}

guint
dw_follower_get_n_pending (DwFollower *self)
{
  g_return_val_if_fail (DW_IS_FOLLOWER (self), 0);
  return g_hash_table_size (self->pending) + self->queue->len;
}

void
dw_follower_stop (DwFollower *self)
{
  GHashTableIter it;
  gpointer value;

  g_return_if_fail (DW_IS_FOLLOWER (self));
  g_hash_table_iter_init (&it, self->monitors);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      g_file_monitor_cancel (value);
      g_signal_handlers_disconnect_by_data (value, self);
    }
  g_hash_table_remove_all (self->monitors);
  g_hash_table_remove_all (self->pending);
  g_ptr_array_set_size (self->queue, 0);
  g_hash_table_remove_all (self->failed);
  update_ready_time (self);
}

/* ---------------------------------------------------------------------------------------- */
/* GObject                                                                                    */

static void
dw_follower_dispose (GObject *object)
{
  DwFollower *self = DW_FOLLOWER (object);

  if (self->monitors != NULL)
    dw_follower_stop (self);
  if (self->source != NULL)
    {
      g_source_destroy (self->source);
      g_clear_pointer (&self->source, g_source_unref);
    }
  dw_follower_set_ingest_func (self, NULL, NULL, NULL);
  g_clear_object (&self->ingester);
  g_clear_object (&self->store);
  G_OBJECT_CLASS (dw_follower_parent_class)->dispose (object);
}

static void
dw_follower_finalize (GObject *object)
{
  DwFollower *self = DW_FOLLOWER (object);

  g_clear_pointer (&self->monitors, g_hash_table_unref);
  g_clear_pointer (&self->pending, g_hash_table_unref);
  g_clear_pointer (&self->queue, g_ptr_array_unref);
  g_clear_pointer (&self->failed, g_hash_table_unref);
  g_clear_pointer (&self->skipped, g_hash_table_unref);
  g_clear_pointer (&self->paths, g_ptr_array_unref);
  g_clear_pointer (&self->roots, g_ptr_array_unref);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_clear_pointer (&self->store_path, g_free);
  G_OBJECT_CLASS (dw_follower_parent_class)->finalize (object);
}

static void
dw_follower_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwFollower *self = DW_FOLLOWER (object);

  switch (prop_id)
    {
    case PROP_STORE:
      g_value_set_object (value, self->store);
      break;
    case PROP_DELAY:
      g_value_set_uint (value, self->delay_ms);
      break;
    case PROP_MAX_DELAY:
      g_value_set_uint (value, self->max_delay_ms);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_follower_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  DwFollower *self = DW_FOLLOWER (object);

  switch (prop_id)
    {
    case PROP_STORE:
      g_set_object (&self->store, g_value_get_object (value));
      if (self->store != NULL && dw_store_get_path (self->store) != NULL)
        {
          g_free (self->store_path);
          self->store_path = g_canonicalize_filename (dw_store_get_path (self->store), NULL);
        }
      break;
    case PROP_DELAY:
      dw_follower_set_delay (self, g_value_get_uint (value));
      break;
    case PROP_MAX_DELAY:
      dw_follower_set_max_delay (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_follower_class_init (DwFollowerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = dw_follower_dispose;
  object_class->finalize = dw_follower_finalize;
  object_class->get_property = dw_follower_get_property;
  object_class->set_property = dw_follower_set_property;

  properties[PROP_STORE]
    = g_param_spec_object ("store", NULL, NULL, DW_TYPE_STORE,
                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_DELAY]
    = g_param_spec_uint ("delay", NULL, NULL, 0, 60000, DW_FOLLOWER_DEFAULT_DELAY_MS,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_MAX_DELAY]
    = g_param_spec_uint ("max-delay", NULL, NULL, 0, 600000, DW_FOLLOWER_DEFAULT_MAX_DELAY_MS,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * DwFollower::ingested:
   * @self: the follower
   * @run_id: the run the file belongs to
   * @n_points: new scalar points and batches stored from this file
   * @path: the file
   *
   * A changed file was ingested and brought something new.
   */
  signals[SIGNAL_INGESTED]
    = g_signal_new ("ingested", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                    G_TYPE_NONE, 3, G_TYPE_INT64, G_TYPE_INT64, G_TYPE_STRING);
  /**
   * DwFollower::error:
   * @self: the follower
   * @error: what went wrong, naming the file and the place (offset, line or step)
   * @path: the file or folder
   *
   * A file could not be ingested (after waiting for a half-written file to settle), or a
   * folder could not be followed. What was stored before is kept; following goes on.
   */
  signals[SIGNAL_ERROR]
    = g_signal_new ("error", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                    G_TYPE_NONE, 2, G_TYPE_ERROR, G_TYPE_STRING);
  /**
   * DwFollower::flushed:
   * @self: the follower
   *
   * A coalesced batch of changed files was ingested (emitted once per batch, after the
   * ::ingested and ::error signals of its files): the moment to look at the store.
   */
  /**
   * DwFollower::skipped:
   * @self: the follower
   * @path: the file
   * @reason: why it is no log ("a document (README.md), not a log…", "binary (…)", "SQLite
   *   file that is not an MLflow store…")
   *
   * A file is skipped for good (emitted once per file and reason). A file that may still become
   * a log (no metric line yet) is examined again as it grows and not reported.
   */
  signals[SIGNAL_SKIPPED]
    = g_signal_new ("skipped", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                    G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
  signals[SIGNAL_FLUSHED] = g_signal_new ("flushed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
dw_follower_init (DwFollower *self)
{
  self->delay_ms = DW_FOLLOWER_DEFAULT_DELAY_MS;
  self->max_delay_ms = DW_FOLLOWER_DEFAULT_MAX_DELAY_MS;
  self->paths = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (self->paths, NULL);
  self->roots = g_ptr_array_new_with_free_func (g_free);
  self->monitors = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->pending = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->queue = g_ptr_array_new_with_free_func (g_free);
  self->failed
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)fail_state_free);
  self->skipped = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->context = g_main_context_ref_thread_default ();
  self->source = g_source_new (&source_funcs, sizeof (GSource));
  g_source_set_callback (self->source, NULL, self, NULL);
  g_source_set_name (self->source, "DwFollower coalescing");
  g_source_set_ready_time (self->source, -1);
  g_source_attach (self->source, self->context);
}
