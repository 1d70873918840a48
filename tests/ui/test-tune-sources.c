/* test-tune-sources.c — the Tune page on a large run whose raw tokens are referenced, not kept:
 * it opens from the stored statistics, and says so when a referenced file is gone
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Fixture: the collapse demo run folder (dw_demo_write) ingested with a zero --keep-tokens budget,
 * so every batch is a reference to its batches/step_NNNNNN.safetensors file as a run past its
 * budget has (docs/STORE.md); the page is forced into compact mode (every run compact), so it
 * builds every step from the step statistics and token summaries (docs/TUNE.md "Large runs").
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "dw-demo.h"
#include "dw-ingester.h"
#include "dw-store-writer.h"
#include "dw-tune-view.h"
#include "dw-ui-test-util.h"

#define N_STEPS 12

static const char *
status_text (GtkWidget *view)
{
  GtkWidget *label = dw_ui_test_find_named (view, "status-label");

  g_assert_nonnull (label);
  return gtk_label_get_text (GTK_LABEL (label));
}

static void
exec_sql (const char *path, const char *sql)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
}

/* The demo ingested with every batch referenced; *run_id gets its run. */
static DwStore *
make_referenced_store (const char *dir, gint64 *run_id)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *run = g_build_filename (dir, "demo-collapse", NULL);
  g_autofree char *db = g_build_filename (dir, "store.db", NULL);
  DwStore *store;
  DwIngestReport report;

  g_assert_true (dw_demo_write (run, DW_DEMO_COLLAPSE, N_STEPS, 1, &error));
  store = dw_store_open (db, &error);
  g_assert_no_error (error);
  dw_store_set_keep_tokens (store, 0);
  g_autoptr (DwIngester) ingester = dw_ingester_new (store);
  dw_ingest_report_init (&report);
  g_assert_true (dw_ingester_ingest_path (ingester, run, &report, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (report.n_batches, ==, N_STEPS);
  *run_id = g_array_index (report.run_ids, gint64, 0);
  dw_ingest_report_clear (&report);
  return store;
}

/* A referenced file gone: the page opens from the statistics (it reads no token), the refinement
 * makes every other step exact and leaves that one at its summary values, and the status line
 * says how many steps stay approximate and names the file. With its statistics missing too (a
 * store migrated from schema 6 without that file), the step is left out, and the page says so. */
static void
test_source_gone (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("dw-tune-sources-XXXXXX", &error);
  gint64 run_id;
  g_autoptr (DwStore) store = make_referenced_store (dir, &run_id);
  g_autoptr (GArray) steps = dw_store_list_batch_steps (store, run_id, &error);
  const gint64 gone_step = g_array_index (steps, gint64, 3);
  g_autoptr (DwTokenSummary) summary
    = dw_store_get_token_summary (store, run_id, gone_step, &error);
  GtkWidget *window = gtk_window_new ();
  GtkWidget *widget = dw_tune_view_new ();
  DwTuneView *view = DW_TUNE_VIEW (widget);
  const DwWhatifRunResult *result;
  GtkWidget *entry;

  g_assert_no_error (error);
  g_assert_nonnull (summary->source); /* referenced, not kept */
  g_assert_cmpint (g_unlink (summary->source), ==, 0);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_set_child (GTK_WINDOW (window), widget);
  gtk_window_present (GTK_WINDOW (window));
  dw_tune_view_set_compact_tokens (view, 0);
  dw_tune_view_set_run (view, store, run_id);
  dw_ui_test_wait_tune_idle (view);
  g_assert_true (dw_tune_view_get_compact (view));

  /* a token IS cap inside the bulk of the log-ratios: approximate on every step at first */
  entry = dw_ui_test_find_named (widget, "bound-is-threshold");
  g_assert_nonnull (entry);
  gtk_editable_set_text (GTK_EDITABLE (entry), "1.01");
  g_signal_emit_by_name (entry, "activate");
  dw_ui_test_wait_tune_idle (view);
  result = dw_tune_view_get_result (view);
  g_assert_cmpuint (result->n_steps, ==, N_STEPS);
  for (guint index = 0; index < result->n_steps; index++)
    g_assert_cmpint (result->results[index].any_approximate, ==, index == 3);
  g_test_message ("status: %s", status_text (widget));
  g_assert_nonnull (strstr (status_text (widget), "values marked ≈ are approximate"));
  g_assert_nonnull (strstr (status_text (widget), "1 of 12 steps keep the values of the stored "
                                                  "summaries, their raw tokens being gone or "
                                                  "changed"));
  g_assert_nonnull (strstr (status_text (widget), summary->source));

  /* its statistics missing as well: left out, said */
  g_autofree char *sql
    = g_strdup_printf ("DELETE FROM step_stats WHERE batch_id = (SELECT id FROM batches WHERE "
                       "run_id = %" G_GINT64_FORMAT " AND step = %" G_GINT64_FORMAT ")",
                       run_id, gone_step);
  exec_sql (dw_store_get_path (store), sql);
  dw_tune_view_set_run (view, store, run_id);
  dw_ui_test_wait_tune_idle (view);
  result = dw_tune_view_get_result (view);
  g_assert_cmpuint (result->n_steps, ==, N_STEPS - 1);
  for (guint index = 0; index < result->n_steps; index++)
    g_assert_cmpint (result->steps[index], !=, gone_step);
  g_test_message ("status: %s", status_text (widget));
  g_assert_nonnull (strstr (status_text (widget), "1 of 12 steps are left out: they have no "
                                                  "stored statistics and their raw tokens cannot "
                                                  "be read"));
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (50);
  g_clear_object (&store);
  dw_ui_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add_func ("/Dw/TuneView/source-gone", test_source_gone);
  return g_test_run ();
}
