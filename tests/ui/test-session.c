/* test-session.c — the session without a window: its run list as a GListModel, health
 * evaluations through the store reader, the live refresh, removing a run, and the reader's
 * generic read
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Fixture: two runs written as `driftwatch-cli ingest` writes them (one healthy, one whose IS
 * weight mean falls out of [0.5, 2] — the collapse the health rules exist to catch).
 */
#include "config.h"

#include <glib/gstdio.h>

#include "dw-session.h"
#include "dw-store-reader.h"
#include "dw-store-writer.h"

typedef struct
{
  char *dir;
  DwStore *store;
  gint64 healthy, collapsing;
  guint n_health_changed;
  GArray *grown;
} Fixture;

static void
put_is_mean (DwStore *store, gint64 run_id, gint64 from, gint64 to, double late_value)
{
  g_autoptr (GError) error = NULL;
  gint64 tag_id;

  g_assert_true (dw_store_begin (store, &error));
  tag_id = dw_store_ensure_tag (store, run_id, "rollout_corr/rollout_is_mean", NULL, &error);
  g_assert_no_error (error);
  for (gint64 step = from; step <= to; step++)
    g_assert_true (dw_store_put_point (store, run_id, tag_id, step, 1.7e9 + step,
                                       step < 30 ? 1.0 : late_value, &error));
  g_assert_true (dw_store_commit (store, &error));
}

static void
fixture_setup (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = NULL;

  fx->dir = g_dir_make_tmp ("dw-test-session-XXXXXX", &error);
  db = g_build_filename (fx->dir, "store.db", NULL);
  fx->store = dw_store_open (db, &error);
  g_assert_no_error (error);
  g_assert_true (dw_store_begin (fx->store, &error));
  fx->healthy = dw_store_ensure_run (fx->store, "healthy", "verl", "/runs/healthy", &error);
  fx->collapsing
    = dw_store_ensure_run (fx->store, "collapsing", "verl", "/runs/collapsing", &error);
  g_assert_true (dw_store_commit (fx->store, &error));
  put_is_mean (fx->store, fx->healthy, 1, 50, 1.0);
  put_is_mean (fx->store, fx->collapsing, 1, 50, 0.2);
  fx->grown = g_array_new (FALSE, FALSE, sizeof (gint64));
}

static void
fixture_teardown (Fixture *fx, gconstpointer data)
{
  g_autofree char *db = g_build_filename (fx->dir, "store.db", NULL);
  g_autofree char *wal = g_strconcat (db, "-wal", NULL);
  g_autofree char *shm = g_strconcat (db, "-shm", NULL);

  g_clear_object (&fx->store);
  g_unlink (db);
  g_unlink (wal);
  g_unlink (shm);
  g_rmdir (fx->dir);
  g_free (fx->dir);
  g_array_unref (fx->grown);
}

static void
health_changed_cb (DwSession *session, gint64 run_id, Fixture *fx)
{
  fx->n_health_changed++;
}

static void
refreshed_cb (DwSession *session, GArray *grown, Fixture *fx)
{
  g_array_append_vals (fx->grown, grown->data, grown->len);
}

static void
wait_idle (DwSession *session)
{
  gint64 until = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (dw_session_is_busy (session) && g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (dw_session_is_busy (session));
}

/* The list is the store's runs, newest first; each run's health is evaluated in the reader's
 * worker and lands in its item: the collapsing run is shown collapsed, the healthy one not. */
static void
test_runs_and_health (Fixture *fx, gconstpointer data)
{
  g_autoptr (DwSession) session = dw_session_new (fx->store);
  g_autoptr (GError) error = NULL;
  GListModel *runs = dw_session_get_runs (session);
  g_autoptr (DwRunItem) first = NULL;
  DwRunItem *item;
  guint n_warnings, n_critical, position;

  g_signal_connect (session, "health-changed", G_CALLBACK (health_changed_cb), fx);
  g_assert_true (dw_session_reload (session, &error));
  g_assert_cmpuint (g_list_model_get_n_items (runs), ==, 2);
  first = g_list_model_get_item (runs, 0);
  g_assert_cmpint (dw_run_item_get_id (first), ==, fx->collapsing);
  wait_idle (session);
  g_assert_cmpuint (fx->n_health_changed, ==, 2);

  item = dw_session_lookup (session, fx->collapsing, &position);
  g_assert_nonnull (item);
  g_assert_cmpuint (position, ==, 0);
  g_assert_nonnull (dw_run_item_get_monitor (item));
  dw_run_item_get_health (item, &n_warnings, &n_critical, NULL);
  g_assert_cmpuint (n_warnings + n_critical, >, 0);
  g_assert_cmpint (dw_run_item_get_status (item), ==, DW_RUN_STATUS_COLLAPSED);
  item = dw_session_lookup (session, fx->healthy, &position);
  g_assert_cmpuint (position, ==, 1);
  dw_run_item_get_health (item, &n_warnings, &n_critical, NULL);
  g_assert_cmpuint (n_warnings + n_critical, ==, 0);
  g_assert_cmpint (dw_run_item_get_status (item), ==, DW_RUN_STATUS_FINISHED);

  /* a second reload keeps the items (the rows and the selection of a window stay) */
  g_assert_true (dw_session_reload (session, &error));
  g_assert_true (dw_session_lookup (session, fx->collapsing, NULL) == first);
}

/* New points of one run: the refresh names that run only, and its item shows the new step. */
static void
test_refresh (Fixture *fx, gconstpointer data)
{
  g_autoptr (DwSession) session = dw_session_new (fx->store);
  g_autoptr (GError) error = NULL;

  g_signal_connect (session, "refreshed", G_CALLBACK (refreshed_cb), fx);
  g_assert_true (dw_session_reload (session, &error));
  wait_idle (session);
  dw_session_refresh (session);
  g_assert_cmpuint (fx->grown->len, ==, 0);

  put_is_mean (fx->store, fx->healthy, 51, 60, 1.0);
  dw_session_refresh (session);
  g_assert_cmpuint (fx->grown->len, ==, 1);
  g_assert_cmpint (g_array_index (fx->grown, gint64, 0), ==, fx->healthy);
  g_assert_cmpint (dw_run_item_get_info (dw_session_lookup (session, fx->healthy, NULL))->last_step,
                   ==, 60);
  g_assert_cmpint (dw_run_item_get_seen_growth (dw_session_lookup (session, fx->healthy, NULL)), >,
                   0);
}

/* Removing a run deletes it from the store and the list; an unknown id is an error. */
static void
test_remove (Fixture *fx, gconstpointer data)
{
  g_autoptr (DwSession) session = dw_session_new (fx->store);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwRunInfo) gone = NULL;
  g_autoptr (GPtrArray) tags = NULL;

  g_assert_true (dw_session_reload (session, &error));
  wait_idle (session);
  g_assert_true (dw_session_remove_run (session, fx->collapsing, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_list_model_get_n_items (dw_session_get_runs (session)), ==, 1);
  g_assert_null (dw_session_lookup (session, fx->collapsing, NULL));
  gone = dw_store_get_run (fx->store, fx->collapsing, &error);
  g_assert_null (gone);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  tags = dw_store_list_tags (fx->store, fx->collapsing, &error);
  g_assert_cmpuint (tags->len, ==, 0);

  g_assert_false (dw_session_remove_run (session, fx->collapsing, &error));
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
}

static gboolean
count_points_worker (DwStore *store, gpointer data, GCancellable *cancellable, GError **error)
{
  gint64 *run_and_count = data;
  g_autoptr (DwSeries) series
    = dw_store_get_series (store, run_and_count[0], "is_mean", G_MININT64, error);

  if (series == NULL)
    return FALSE;
  run_and_count[1] = (gint64)series->n;
  return TRUE;
}

static void
read_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

/* The reader runs a read in a worker on its own read-only connection; the data comes back. */
static void
test_reader (Fixture *fx, gconstpointer data)
{
  g_autoptr (DwStoreReader) reader = dw_store_reader_new (dw_store_get_path (fx->store));
  g_autoptr (GAsyncResult) result = NULL;
  g_autoptr (GError) error = NULL;
  gint64 *run_and_count = g_new0 (gint64, 2);
  gpointer read_data = NULL;

  run_and_count[0] = fx->collapsing;
  dw_store_reader_read_async (reader, count_points_worker, run_and_count, g_free, NULL,
                              read_done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (dw_store_reader_read_finish (reader, result, &read_data, &error));
  g_assert_no_error (error);
  g_assert_cmpint (((gint64 *)read_data)[1], ==, 50);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/Dw/Session/runs-and-health", Fixture, NULL, fixture_setup, test_runs_and_health,
              fixture_teardown);
  g_test_add ("/Dw/Session/refresh", Fixture, NULL, fixture_setup, test_refresh, fixture_teardown);
  g_test_add ("/Dw/Session/remove", Fixture, NULL, fixture_setup, test_remove, fixture_teardown);
  g_test_add ("/Dw/Session/reader", Fixture, NULL, fixture_setup, test_reader, fixture_teardown);
  return g_test_run ();
}
