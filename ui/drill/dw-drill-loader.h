/* dw-drill-loader.h — the drill-down's reads, off the main thread
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The store is read through the session's DwStoreReader (dw_store_reader_read_async: a worker on
 * a lent read-only connection; SQLite WAL: the window keeps reading and the ingester keeps
 * writing), asking the core (dw-batch-tokens.h, dw-store-tokens.h) the same questions
 * `driftwatch-cli tokens` asks. Re-ranking and reading a chosen tokenizer.json touch no store:
 * they run in GTask workers of their own.
 */
#pragma once

#include <gio/gio.h>

#include "dw-batch-tokens.h"
#include "dw-store-reader.h"
#include "dw-tokenizer.h"

G_BEGIN_DECLS

/* A step's batch, ranked; reference-counted (a re-ranking worker holds the batch too). */
typedef struct
{
  gint64 run_id;
  char *run_name;
  gint64 step_asked;
  gint64 step; /* the stored batch nearest to step_asked */
  guint n_batch_steps;
  DwBatch *batch;
  DwSeqStat by;
  GArray *ranked; /* DwSeqRanked, by @by */
  /* tokenizer.json found in the run's folder (when asked for), or why it could not be read */
  DwTokenizer *tokenizer;
  char *tokenizer_path;
  char *tokenizer_error;
} DwDrillStep;

DwDrillStep *dw_drill_step_ref (DwDrillStep *self);
void dw_drill_step_unref (DwDrillStep *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwDrillStep, dw_drill_step_unref)

/* Loads the batch of @step (or of the nearest stored step) of @run_id and ranks it by @by;
 * with @find_tokenizer, also reads tokenizer.json from the run's folder when there is one.
 * Errors: DW_STORE_ERROR_NOT_FOUND when the run has no stored batch at all. */
void dw_drill_loader_step_async (DwStoreReader *reader, gint64 run_id, gint64 step, DwSeqStat by,
                                 gboolean find_tokenizer, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
DwDrillStep *dw_drill_loader_step_finish (DwStoreReader *reader, GAsyncResult *result,
                                          GError **error);

/* Ranks @step's batch again, by @by: a GArray of DwSeqRanked. */
void dw_drill_loader_rank_async (DwDrillStep *step, DwSeqStat by, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
GArray *dw_drill_loader_rank_finish (GAsyncResult *result, GError **error);

/* The @top token ids most often behind |ℓ| > @threshold across the run. */
typedef struct
{
  GPtrArray *top; /* DwCatastrophicToken*, owned */
  guint64 total;
  guint n_with_ids;
  double threshold;
} DwDrillRunTokens;

void dw_drill_run_tokens_free (DwDrillRunTokens *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwDrillRunTokens, dw_drill_run_tokens_free)

void dw_drill_loader_run_async (DwStoreReader *reader, gint64 run_id, double threshold, guint top,
                                GCancellable *cancellable, GAsyncReadyCallback callback,
                                gpointer user_data);
DwDrillRunTokens *dw_drill_loader_run_finish (DwStoreReader *reader, GAsyncResult *result,
                                              GError **error);

/* Reads a tokenizer.json the user chose. */
void dw_drill_loader_tokenizer_async (const char *path, GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data);
DwTokenizer *dw_drill_loader_tokenizer_finish (GAsyncResult *result, GError **error);

G_END_DECLS
