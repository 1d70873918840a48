/* dw-tune-loader.h — the Tune page's worker threads: precompute, refinement, the config check
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each job runs in a GTask thread with a read-only store connection of its own (the window's
 * connection is used on the main thread meanwhile), _async / _finish with a source tag, the
 * thread bodies *_worker. docs/TUNE.md, "Large runs", says when a run is loaded compact and how
 * the refinement makes its values exact.
 */
#pragma once

#include <gio/gio.h>

#include "dw-run-config.h"
#include "dw-whatif-engine.h"

G_BEGIN_DECLS

/* A run with more valid tokens than this (estimated: the first stored batch's valid tokens times
 * the number of stored batches) is loaded as compact steps: ~0.2–0.5 bytes a token instead of
 * ~23, so 32 Mi tokens ≈ 740 MB of full statistics is where the page stops holding every token. */
#define DW_TUNE_COMPACT_TOKENS ((guint64)32 << 20)

/* Precomputes the stored batches of @run_id in the store at @db_path (compact steps when the run
 * has more than @compact_tokens valid tokens); the engine keeps a loader on its own connection
 * for the exact passes. */
void dw_tune_loader_load_async (const char *db_path, gint64 run_id, guint64 compact_tokens,
                                GCancellable *cancellable, GAsyncReadyCallback callback,
                                gpointer user_data);
DwWhatifEngine *dw_tune_loader_load_finish (GAsyncResult *result, GError **error);

/* Called on the main thread with the exact result of the step at @index; take its contents
 * (swap them out), the struct is cleared after the call. */
typedef void (*DwTuneRefineFunc) (guint index, DwWhatifStepResult *exact, gpointer user_data);

/* Makes the steps @indices exact one by one in a thread, handing each result to @each (with
 * @each_data, which must outlive the job: pass the object @user_data holds) as it arrives. */
void dw_tune_loader_refine_async (DwWhatifEngine *engine, const DwConfig *config,
                                  const guint *indices, guint n_indices, GCancellable *cancellable,
                                  DwTuneRefineFunc each, gpointer each_data,
                                  GAsyncReadyCallback callback, gpointer user_data);
gboolean dw_tune_loader_refine_finish (GAsyncResult *result, GError **error);

/* dw_run_config_check () of the run in a thread: its logged metrics against a recompute under its
 * own config. */
void dw_tune_loader_check_async (const char *db_path, gint64 run_id, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
DwRunCheck *dw_tune_loader_check_finish (GAsyncResult *result, GError **error);

G_END_DECLS
