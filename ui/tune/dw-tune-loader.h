/* dw-tune-loader.h — the Tune page's reads: precompute, refinement, the config check
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each job is a read of the page's DwStoreReader (its worker thread, a read-only connection lent
 * for the call; the window's connection is used on the main thread meanwhile), _async / _finish.
 * docs/TUNE.md, "Large runs", says when a run is built from the stored statistics and how the
 * refinement makes its values exact.
 */
#pragma once

#include <gio/gio.h>

#include "dw-run-config.h"
#include "dw-store-reader.h"
#include "dw-whatif-engine.h"

G_BEGIN_DECLS

/* A run with more valid tokens than this (the stored batches' counts) is loaded as compact steps
 * built from the store's step statistics and token summaries, reading no token: ~190 bytes a row
 * plus the sketch instead of ~23 bytes a token, so 32 Mi tokens ≈ 740 MB of full statistics is
 * where the page stops holding every token. */
#define DW_TUNE_COMPACT_TOKENS ((guint64)32 << 20)

/* Precomputes the stored batches of @run_id: full steps from the raw batches when the run has at
 * most @compact_tokens valid tokens, else compact steps from the stored statistics and summaries
 * (from the raw batch where a step has no statistics, a store migrated from schema 6). A step
 * whose raw file is gone falls back to its statistics; one that has neither is left out, and
 * @note (nullable; free it) says how many and why. The engine's loader reads batches only inside
 * dw_tune_loader_refine_async (). */
void dw_tune_loader_load_async (DwStoreReader *reader, gint64 run_id, guint64 compact_tokens,
                                GCancellable *cancellable, GAsyncReadyCallback callback,
                                gpointer user_data);
DwWhatifEngine *dw_tune_loader_load_finish (DwStoreReader *reader, GAsyncResult *result,
                                            char **note, GError **error);

/* Called on the main thread with the exact result of the step at @index; take its contents
 * (swap them out), the struct is cleared after the call. */
typedef void (*DwTuneRefineFunc) (guint index, DwWhatifStepResult *exact, gpointer user_data);

/* Makes the steps @indices exact one by one in a read, handing each result to @each (with
 * @each_data, which must outlive the job: pass the object @user_data holds) as it arrives. A step
 * whose referenced raw file is gone or changed keeps its values from the summaries and the
 * refinement goes on; it then finishes with DW_STORE_ERROR_SOURCE_CHANGED saying how many steps
 * stay approximate and naming the first file. */
void dw_tune_loader_refine_async (DwStoreReader *reader, DwWhatifEngine *engine,
                                  const DwConfig *config, const guint *indices, guint n_indices,
                                  GCancellable *cancellable, DwTuneRefineFunc each,
                                  gpointer each_data, GAsyncReadyCallback callback,
                                  gpointer user_data);
gboolean dw_tune_loader_refine_finish (DwStoreReader *reader, GAsyncResult *result, GError **error);

/* dw_run_config_check () of the run in a thread: its logged metrics against a recompute under its
 * own config. */
void dw_tune_loader_check_async (DwStoreReader *reader, gint64 run_id, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
DwRunCheck *dw_tune_loader_check_finish (DwStoreReader *reader, GAsyncResult *result,
                                         GError **error);

G_END_DECLS
