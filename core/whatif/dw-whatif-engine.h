/* dw-whatif-engine.h — interactive what-if re-evaluation of rollout correction over a run
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * GTK-free (GLib only). A DwWhatifStep holds the sufficient statistics of one batch (per-row sums,
 * means and extremes of the log-ratio, IS weight and k1/k2/k3, accumulated in the order the
 * correction core uses, plus the valid-token log-ratios sorted globally and per row with block
 * prefix sums); a config is planned by dw_plan_build and evaluated on them without the raw
 * tokens, giving the keys and values dw_correction_run() gives on the same batch. docs/WHATIF.md
 * describes the statistics, what is exact, and the compact steps of long runs.
 *
 * Exact from the statistics (to float32 rounding, checked against the core and verl's goldens):
 * every verl release v0.6.1 … v0.9.0 (TIS and IcePop, every RS option, veto, batch norm) and
 * commit 4424616d7, for 0/1 masks and valid log-ratios that are not NaN. Flagged approximate
 * (exact values from dw_whatif_engine_evaluate_exact*(), which reloads the batches):
 *   - v0.7.1+ `rollout_rs_masked_fraction` when token_k3 (or token_k2) is combined with another
 *     token-level option and its kept set is not an interval of ℓ;
 *   - token-level IS metrics if libm's expf were not monotone on the step's data (checked);
 *   - on compact steps, token-level values whose bound falls inside a bin (with error_bound).
 * Pending (no values until the exact pass): slime, verl v0.6.0 (quantiles), batches with
 * non-binary masks or NaN log-ratios on valid tokens.
 */
#pragma once

#include <gio/gio.h>

#include "dw-batch.h"
#include "dw-config.h"
#include "dw-correction.h"

G_BEGIN_DECLS

#define DW_WHATIF_ERROR (dw_whatif_error_quark ())
GQuark dw_whatif_error_quark (void);

typedef enum
{
  DW_WHATIF_ERROR_BATCH,  /* the batch cannot be precomputed (dtype, size) */
  DW_WHATIF_ERROR_CONFIG, /* verl/slime would reject the config: message is theirs */
  DW_WHATIF_ERROR_LOAD,   /* the batch loader failed */
} DwWhatifError;

/* ------------------------------------------------------------------------------------------ */
/* One step                                                                                   */

typedef struct _DwWhatifStep DwWhatifStep;

/* Precomputes the statistics of @batch (not kept: the step does not reference it). */
DwWhatifStep *dw_whatif_step_new (const DwBatch *batch, gint64 step, GError **error);
/* A compact step (bounded memory, docs/WHATIF.md): every per-row statistic of a full step, so
 * every sequence-level option and IS level stays exact, and instead of the tokens a sketch of
 * their log-ratios (the extreme tokens in full, equal-count bins of the bulk): token-level values
 * whose bound falls inside a bin are approximate, with an error bound (error_bound). About
 * 320 KB per step plus ~190 bytes per row. */
DwWhatifStep *dw_whatif_step_new_compact (const DwBatch *batch, gint64 step, GError **error);
gboolean dw_whatif_step_is_compact (const DwWhatifStep *self);
void dw_whatif_step_free (DwWhatifStep *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwWhatifStep, dw_whatif_step_free)

gint64 dw_whatif_step_get_step (const DwWhatifStep *self);
/* Bytes held by the statistics (sorted log-ratios, prefix sums, per-row arrays). */
gsize dw_whatif_step_get_memory (const DwWhatifStep *self);
/* Valid tokens and rows of the batch. */
gsize dw_whatif_step_get_n_tokens (const DwWhatifStep *self);
gsize dw_whatif_step_get_n_rows (const DwWhatifStep *self);
/* FALSE when nothing can be evaluated from statistics (see above); then the reason. */
gboolean dw_whatif_step_is_fast (const DwWhatifStep *self, const char **reason);

/* The keys of a step result's metrics, sorted. One table is shared by every result that lists
 * the same keys (the steps of an evaluation, as a rule, and of the next one), so an evaluation
 * of 3000 steps writes their values, not 3000 copies of the same keys: equal tables are the same
 * pointer (interned), and a position found in one result holds in every result with that table. */
typedef struct _DwWhatifKeys DwWhatifKeys;

/* A new reference to @keys (nullable). */
const DwWhatifKeys *dw_whatif_keys_ref (const DwWhatifKeys *keys);
void dw_whatif_keys_unref (const DwWhatifKeys *keys);
gsize dw_whatif_keys_get_length (const DwWhatifKeys *keys);
const char *dw_whatif_keys_get (const DwWhatifKeys *keys, gsize index);

typedef struct
{
  gsize n_metrics;
  const DwWhatifKeys *keys; /* the metrics' keys, sorted (a reference; NULL when none) */
  double *values;           /* [n_metrics]: the values dw_correction_run () gives the keys */
  guint8 *approximate;      /* [n_metrics]: 1 = value from an estimate, exact pending */
  double *error_bound;      /* [n_metrics]: bound on |value − exact| of an approximate
                             * value (compact steps, docs/WHATIF.md), NAN when none is known; 0
                             * for exact values */
  gboolean any_approximate;
  gboolean pending; /* no values at all from statistics: exact pass needed */
  gboolean failed;  /* verl/slime would raise: @error holds kind and message */
  DwCorrectionError error;
  /* (private) values, approximate and error_bound live in the storage of the run result that
   * holds this one (an engine evaluation): dw_whatif_step_result_clear () does not free them */
  gboolean borrowed;
} DwWhatifStepResult;

/* The key of metric @index (< res->n_metrics). */
const char *dw_whatif_step_result_get_key (const DwWhatifStepResult *res, gsize index);
/* Makes @res empty: no metrics, not failed, the error's message empty. Only the fields before
 * the message and its first byte are written: the rest of the message is read only when @failed
 * (a result is 576 bytes; a move of 3000 steps would clear 1.7 MB as it makes them and again
 * as it frees them). */
void dw_whatif_step_result_init (DwWhatifStepResult *res);
/* Frees what @res holds and makes it empty (dw_whatif_step_result_init). */
void dw_whatif_step_result_clear (DwWhatifStepResult *res);
/* The value of @key, or NULL; @approximate (nullable) says whether it is an estimate. */
const double *dw_whatif_step_result_get (const DwWhatifStepResult *res, const char *key,
                                         gboolean *approximate);
/* The error bound of @key (0 for an exact value, NAN when unknown or absent). */
double dw_whatif_step_result_get_error_bound (const DwWhatifStepResult *res, const char *key);

/* Evaluates @config (a "preset" key must be resolved: dw_preset_apply()) on the statistics.
 * Fills @out (cleared first). Returns FALSE when verl/slime would raise (out->failed). */
gboolean dw_whatif_step_evaluate (const DwWhatifStep *self, const DwConfig *config,
                                  DwWhatifStepResult *out);

/* Per-row outcome for the length-bias view: @lengths[b] = valid tokens of row b, @rejected[b] =
 * 1 when the config's RS options or veto reject at least one valid token of row b (the whole row
 * for sequence-level options). Exact for the generations evaluated exactly (verl*); FALSE for
 * slime or a pending step. Arrays of dw_whatif_step_get_n_rows() elements. */
/* The valid tokens of every row: dw_whatif_step_get_n_rows () values, owned by @self. */
const double *dw_whatif_step_get_row_lengths (const DwWhatifStep *self);
gboolean dw_whatif_step_row_outcomes (const DwWhatifStep *self, const DwConfig *config,
                                      double *lengths, guint8 *rejected);

/* Histogram of the valid-token log-ratios ℓ = old − rollout in @n_bins equal bins over [lo, hi)
 * (values outside are clamped into the first/last bin). Exact counts. */
void dw_whatif_step_histogram (const DwWhatifStep *self, double lo, double hi, guint n_bins,
                               guint64 *counts);
/* Quantile @q ∈ [0,1] of the valid-token ℓ (nearest rank), NAN for an empty step. */
double dw_whatif_step_quantile (const DwWhatifStep *self, double q);

/* ------------------------------------------------------------------------------------------ */
/* A run                                                                                      */

typedef struct _DwWhatifEngine DwWhatifEngine;

/* Loads the batch of a step for the exact pass; returns a new batch or NULL with @error set.
 * Called from a worker thread. */
typedef DwBatch *(*DwWhatifBatchLoader) (gint64 step, gpointer user_data, GError **error);

/* @n_threads: evaluation threads (0 = number of processors). */
DwWhatifEngine *dw_whatif_engine_new (guint n_threads);
DwWhatifEngine *dw_whatif_engine_ref (DwWhatifEngine *self);
void dw_whatif_engine_unref (DwWhatifEngine *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwWhatifEngine, dw_whatif_engine_unref)

void dw_whatif_engine_set_loader (DwWhatifEngine *self, DwWhatifBatchLoader loader,
                                  gpointer user_data, GDestroyNotify destroy);
/* Takes ownership of @step. Steps are kept in the order added. Not thread-safe against
 * concurrent evaluation. */
void dw_whatif_engine_add_step (DwWhatifEngine *self, DwWhatifStep *step);
/* Whether dw_whatif_engine_load_steps() builds compact steps (default FALSE). */
void dw_whatif_engine_set_compact (DwWhatifEngine *self, gboolean compact);
/* Labels the rows of every step added so far (@labels: one per row, the steps' rows in order,
 * @n_rows of them; each < DW_WHATIF_MAX_LABELS or DW_WHATIF_NO_LABEL), for the per-label counts of
 * dw_whatif_engine_evaluate_rows () (copied; NULL clears them; steps added later have none, and
 * the counts stop until labels are set again). Not thread-safe against a concurrent evaluation. */
void dw_whatif_engine_set_row_labels (DwWhatifEngine *self, const guint8 *labels, gsize n_rows);
/* Whether evaluations follow each other while the caller keeps the previous result (a page whose
 * sliders move; default FALSE). Then the engine keeps the memory of a freed result, and after
 * the first evaluation maps as much again, for the next result: a move does not fault in fresh
 * pages (about 5 MB for 3000 steps of 512 rows, docs/BENCHMARKS.md). */
void dw_whatif_engine_set_interactive (DwWhatifEngine *self, gboolean interactive);
/* Precomputes and adds the batches of @steps using the loader, in parallel. */
gboolean dw_whatif_engine_load_steps (DwWhatifEngine *self, const gint64 *steps, gsize n_steps,
                                      GError **error);
guint dw_whatif_engine_get_n_steps (DwWhatifEngine *self);
const DwWhatifStep *dw_whatif_engine_get_step (DwWhatifEngine *self, guint index);
gsize dw_whatif_engine_get_memory (DwWhatifEngine *self);

/* labels of rows (dw_whatif_engine_set_row_labels) */
#define DW_WHATIF_MAX_LABELS 16
#define DW_WHATIF_NO_LABEL   G_MAXUINT8

typedef struct
{
  guint n_steps;
  gint64 *steps;
  DwWhatifStepResult *results; /* [n_steps] */
  gboolean any_approximate;    /* some metric approximate or some step pending */
  /* dw_whatif_engine_evaluate_rows () only, else NULL: [n_steps] arrays of each step's
   * dw_whatif_step_get_n_rows () rejection flags as dw_whatif_step_row_outcomes () gives them,
   * NULL for a step whose outcomes are unknown (slime, pending, empty) */
  guint8 **row_rejected;
  guint8 *row_rejected_block; /* (private) the storage row_rejected points into */
  /* dw_whatif_engine_evaluate_rows () with row labels set: per label, the rows whose outcome is
   * known and those rejected, over all steps (has_labels FALSE otherwise) */
  gboolean has_labels;
  guint64 label_rows[DW_WHATIF_MAX_LABELS], label_rejected[DW_WHATIF_MAX_LABELS];
  GPtrArray *storage; /* (private) the blocks the results' borrowed arrays live in */
  /* (private) the engine that made the result (a reference) and the bytes allocated for results
   * and row_rejected_block, which it takes back when the result is freed
   * (dw_whatif_engine_set_interactive) */
  DwWhatifEngine *engine;
  gsize results_size, rows_size;
} DwWhatifRunResult;

void dw_whatif_run_result_free (DwWhatifRunResult *res);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwWhatifRunResult, dw_whatif_run_result_free)

/* Evaluates @config on every step from the statistics (parallel). Errors of verl/slime are
 * per step (results[i].failed); @error is only for an unresolved preset. */
DwWhatifRunResult *dw_whatif_engine_evaluate (DwWhatifEngine *self, const DwConfig *config,
                                              GError **error);
/* The same, with every step's row outcomes (result->row_rejected) from the same evaluation: the
 * length-bias view's curve without a second pass over the run; with row labels set, also their
 * counts per label (result->label_rows, label_rejected), taken in the evaluation's threads while
 * a step's outcomes are in cache. */
DwWhatifRunResult *dw_whatif_engine_evaluate_rows (DwWhatifEngine *self, const DwConfig *config,
                                                   GError **error);
/* The rows and rejections of each label over the steps of @result (an evaluate_rows () result)
 * whose outcomes are known, into @rows and @rejected (DW_WHATIF_MAX_LABELS each): the
 * evaluation's counts when it had the labels, else counted now (a result evaluated before they
 * were set). FALSE when the labels do not cover its steps. */
gboolean dw_whatif_engine_label_counts (DwWhatifEngine *self, const DwWhatifRunResult *result,
                                        guint64 *rows, guint64 *rejected);

/* Exact pass in a GTask thread: evaluates @config from the statistics, then for every step with
 * an approximate metric or pending, reloads the batch through the loader and runs
 * dw_correction_run(). The finished result has any_approximate = FALSE. */
void dw_whatif_engine_evaluate_exact_async (DwWhatifEngine *self, const DwConfig *config,
                                            GCancellable *cancellable, GAsyncReadyCallback callback,
                                            gpointer user_data);
DwWhatifRunResult *dw_whatif_engine_evaluate_exact_finish (DwWhatifEngine *self,
                                                           GAsyncResult *result, GError **error);
/* The exact result of @config on the step at @index alone (its batch reloaded through the loader,
 * dw_correction_run()): @out is cleared and refilled, failed when the trainer would raise. For a
 * refinement that shows exact values step by step as they arrive; thread-safe against
 * evaluation like the exact pass. FALSE with @error when the batch cannot be loaded. */
gboolean dw_whatif_engine_evaluate_exact_step (DwWhatifEngine *self, const DwConfig *config,
                                               guint index, DwWhatifStepResult *out,
                                               GError **error);
/* The same, synchronously (CLI, tests). */
DwWhatifRunResult *dw_whatif_engine_evaluate_exact (DwWhatifEngine *self, const DwConfig *config,
                                                    GCancellable *cancellable, GError **error);

G_END_DECLS
