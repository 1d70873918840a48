/* dw-store-reader.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-store-reader"

#include "config.h"

#include "dw-store-reader.h"
#include "dw-store-writer.h"

struct _DwStoreReader
{
  GObject parent_instance;

  char *db_path;
  GMutex lock;
  GPtrArray *idle; /* DwStore*: read-only connections no read is using (under lock) */
};

G_DEFINE_FINAL_TYPE (DwStoreReader, dw_store_reader, G_TYPE_OBJECT)

/* At most this many idle connections are kept (one per core of a small machine is plenty). */
#define MAX_IDLE_CONNECTIONS 4

static void
dw_store_reader_finalize (GObject *object)
{
  DwStoreReader *self = DW_STORE_READER (object);

  g_ptr_array_unref (self->idle);
  g_mutex_clear (&self->lock);
  g_free (self->db_path);
  G_OBJECT_CLASS (dw_store_reader_parent_class)->finalize (object);
}

static void
dw_store_reader_class_init (DwStoreReaderClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = dw_store_reader_finalize;
}

static void
dw_store_reader_init (DwStoreReader *self)
{
  g_mutex_init (&self->lock);
  self->idle = g_ptr_array_new_with_free_func (g_object_unref);
}

DwStoreReader *
dw_store_reader_new (const char *db_path)
{
  DwStoreReader *self;

  g_return_val_if_fail (db_path != NULL, NULL);
  self = g_object_new (DW_TYPE_STORE_READER, NULL);
  self->db_path = g_strdup (db_path);
  return self;
}

const char *
dw_store_reader_get_path (DwStoreReader *self)
{
  g_return_val_if_fail (DW_IS_STORE_READER (self), NULL);
  return self->db_path;
}

/* A connection for one read: an idle one, else a new one (in the worker: opening reads the
 * schema). */
static DwStore *
dw_store_reader_borrow (DwStoreReader *self, GError **error)
{
  DwStore *store = NULL;

  g_mutex_lock (&self->lock);
  if (self->idle->len > 0)
    store = g_ptr_array_steal_index (self->idle, self->idle->len - 1);
  g_mutex_unlock (&self->lock);
  return store != NULL ? store : dw_store_open_read_only (self->db_path, error);
}

static void
dw_store_reader_give_back (DwStoreReader *self, DwStore *store)
{
  g_mutex_lock (&self->lock);
  if (self->idle->len < MAX_IDLE_CONNECTIONS)
    g_ptr_array_add (self->idle, g_steal_pointer (&store));
  g_mutex_unlock (&self->lock);
  g_clear_object (&store);
}

/* ---------------------------------------------------------------- any read */

typedef struct
{
  DwStoreReadFunc func;
  gpointer data;
  GDestroyNotify data_free;
} DwStoreReaderRead;

static void
dw_store_reader_read_free (gpointer pointer)
{
  DwStoreReaderRead *read = pointer;

  if (read->data_free != NULL)
    read->data_free (read->data);
  g_free (read);
}

static void
dw_store_reader_read_worker (GTask *task, gpointer source, gpointer task_data,
                             GCancellable *cancellable)
{
  DwStoreReader *self = source;
  DwStoreReaderRead *read = task_data;
  g_autoptr (GError) error = NULL;
  DwStore *store = dw_store_reader_borrow (self, &error);
  gboolean ok;

  if (store == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  ok = read->func (store, read->data, cancellable, &error);
  dw_store_reader_give_back (self, store);
  if (!ok)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_boolean (task, TRUE);
}

void
dw_store_reader_read_async (DwStoreReader *self, DwStoreReadFunc func, gpointer data,
                            GDestroyNotify data_free, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  DwStoreReaderRead *read;

  g_return_if_fail (DW_IS_STORE_READER (self));
  g_return_if_fail (func != NULL);
  read = g_new0 (DwStoreReaderRead, 1);
  read->func = func;
  read->data = data;
  read->data_free = data_free;
  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, dw_store_reader_read_async);
  g_task_set_name (task, "dw-store-read");
  g_task_set_task_data (task, read, dw_store_reader_read_free);
  g_task_run_in_thread (task, dw_store_reader_read_worker);
}

gboolean
dw_store_reader_read_finish (DwStoreReader *self, GAsyncResult *result, gpointer *data,
                             GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == dw_store_reader_read_async,
                        FALSE);
  if (data != NULL)
    *data = ((DwStoreReaderRead *)g_task_get_task_data (G_TASK (result)))->data;
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* ---------------------------------------------------------------- health */

typedef struct
{
  gint64 run_id;
  DwHealthMonitor *monitor;
} DwStoreReaderHealth;

static void
dw_store_reader_health_free (gpointer pointer)
{
  DwStoreReaderHealth *health = pointer;

  g_clear_pointer (&health->monitor, dw_health_monitor_free);
  g_free (health);
}

/* The first evaluation reads every ruled series of the run; the monitor then moves to the main
 * thread for the live increments. */
static void
dw_store_reader_health_worker (GTask *task, gpointer source, gpointer task_data,
                               GCancellable *cancellable)
{
  DwStoreReader *self = source;
  DwStoreReaderHealth *health = task_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) fired = NULL;
  DwStore *store = dw_store_reader_borrow (self, &error);

  if (store != NULL)
    {
      fired = dw_health_monitor_poll_run (health->monitor, store, health->run_id, &error);
      dw_store_reader_give_back (self, store);
    }
  if (fired == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, g_steal_pointer (&health->monitor),
                           (GDestroyNotify)dw_health_monitor_free);
}

void
dw_store_reader_evaluate_health_async (DwStoreReader *self, gint64 run_id,
                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                       gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  DwStoreReaderHealth *health;

  g_return_if_fail (DW_IS_STORE_READER (self));
  health = g_new0 (DwStoreReaderHealth, 1);
  health->run_id = run_id;
  health->monitor = dw_health_monitor_new ();
  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, dw_store_reader_evaluate_health_async);
  g_task_set_name (task, "dw-health");
  g_task_set_task_data (task, health, dw_store_reader_health_free);
  g_task_run_in_thread (task, dw_store_reader_health_worker);
}

DwHealthMonitor *
dw_store_reader_evaluate_health_finish (DwStoreReader *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (
    g_task_get_source_tag (G_TASK (result)) == dw_store_reader_evaluate_health_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
