/* dw-store.h — the SQLite store (contract for ingest, the GUI, health rules and what-if)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One SQLite file (WAL, foreign keys, versioned schema). Readers below are what the GUI, `check`,
 * `series`, `export` and `recompute` use; the writer side is in dw-store-writer.h / ingest.
 * This header is the agreed interface: extend it, do not change what is here without updating
 * every caller.
 */
#pragma once

#include <gio/gio.h>

#include "dw-batch.h"
#include "dw-correction.h"

G_BEGIN_DECLS

#define DW_STORE_ERROR (dw_store_error_quark ())
GQuark dw_store_error_quark (void);

typedef enum
{
  DW_STORE_ERROR_FAILED,
  DW_STORE_ERROR_NEWER_SCHEMA, /* written by a newer Driftwatch: refused, file untouched */
  DW_STORE_ERROR_CORRUPT,      /* not a Driftwatch store, or integrity check failed */
  DW_STORE_ERROR_BUSY,         /* another process holds the write lock too long */
  DW_STORE_ERROR_NOT_FOUND,    /* no such run / tag / step */
  DW_STORE_ERROR_READ_ONLY,
  DW_STORE_ERROR_FULL,      /* disk full: the transaction was rolled back */
  DW_STORE_ERROR_TOO_LARGE, /* one value (a batch's array) exceeds SQLite's length limit */
  /* a batch's raw per-token data is referenced in its source file (not copied: the run is over
   * its --keep-tokens budget) and that file changed or is gone: the stored summaries remain */
  DW_STORE_ERROR_SOURCE_CHANGED,
} DwStoreError;

typedef enum
{
  DW_RUN_STATUS_FINISHED = 0,
  DW_RUN_STATUS_LIVE,      /* a follower appended within the last minute */
  DW_RUN_STATUS_COLLAPSED, /* a critical health rule fired */
  /* never stored: how a live run with a critical event is shown (dw_health_shown_status) */
  DW_RUN_STATUS_COLLAPSING,
} DwRunStatus;

typedef struct
{
  gint64 id;
  char *name;
  char *framework; /* "verl", "slime", "wandb", "mlflow", "unknown" */
  char *source;    /* the run folder or first file */
  gint64 first_step;
  gint64 last_step;
  double first_wall_time; /* NAN if unknown */
  double last_wall_time;
  DwRunStatus status;
  gint64 n_batches;
} DwRunInfo;

void dw_run_info_free (DwRunInfo *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwRunInfo, dw_run_info_free)

typedef struct
{
  gint64 id;
  char *name;      /* as logged */
  char *canonical; /* canonical metric (dw-canonical.h) under the run's generation, or NULL */
  gint64 n_points;
} DwTagInfo;

void dw_tag_info_free (DwTagInfo *info);

/* A scalar series, sorted by step; after a restart with overlapping steps the newest write of a
 * step wins (TensorBoard's rule). restart_steps lists the steps where a restart was detected. */
typedef struct
{
  gsize n;
  gint64 *steps;
  double *wall_times; /* NAN when unknown */
  double *values;     /* NaN / ±inf kept */
  gsize n_restarts;
  gint64 *restart_steps;
} DwSeries;

void dw_series_free (DwSeries *series);
/* The index of @step in @series (binary search), or -1 when it has no point at that step. */
gssize dw_series_find_step (const DwSeries *series, gint64 step);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwSeries, dw_series_free)

#define DW_TYPE_STORE (dw_store_get_type ())
G_DECLARE_FINAL_TYPE (DwStore, dw_store, DW, STORE, GObject)

/* Opens (creating and migrating if needed) the store at @path; NULL → the default
 * $XDG_DATA_HOME/driftwatch/driftwatch.db. */
DwStore *dw_store_open (const char *path, GError **error);
const char *dw_store_get_path (DwStore *self);

/* Runs, newest first. Element type DwRunInfo*, owned by the array. */
GPtrArray *dw_store_list_runs (DwStore *self, GError **error);
DwRunInfo *dw_store_get_run (DwStore *self, gint64 run_id, GError **error);
/* Run by id (decimal string) or by name. */
DwRunInfo *dw_store_find_run (DwStore *self, const char *id_or_name, GError **error);

/* What ingest found out about the run, a JSON object (NULL when nothing): "framework_version",
 * "generation" (e.g. "verl-0.9.0", "slime"), "generation_source" ("log": printed by the run,
 * "config": from its printed config, "inferred": from the metric keys present), "config" (the
 * run's algorithm.rollout_correction / slime TIS arguments, verl's key names), "project",
 * "experiment". */
char *dw_store_get_run_meta (DwStore *self, gint64 run_id, GError **error);

/* The generation the run's keys are read under (dw-canonical.h's names): the one the run or its
 * config printed (run metadata, @source "log" / "config"), else the newest consistent with its
 * keys (@source "keys"); NULL (and @source NULL) when neither tells, or on error. */
char *dw_store_get_run_generation (DwStore *self, gint64 run_id, const char **source,
                                   GError **error);

/* Tags of a run, by name. Element type DwTagInfo*. */
GPtrArray *dw_store_list_tags (DwStore *self, gint64 run_id, GError **error);
/* The tag names of a run, by name (char*), without dw_store_list_tags()'s point counts: cheap
 * whatever the run's size. */
GPtrArray *dw_store_list_tag_names (DwStore *self, gint64 run_id, GError **error);

/* The series of @tag (a logged name, or a canonical name: then the newest logged key that maps to
 * it) with step > @after_step (G_MININT64 for all). */
DwSeries *dw_store_get_series (DwStore *self, gint64 run_id, const char *tag, gint64 after_step,
                               GError **error);

/* Stored rollout batches: the steps that have one, ascending. */
GArray *dw_store_list_batch_steps (DwStore *self, gint64 run_id, GError **error);
/* The batch of @step, rebuilt from the stored float32/float64 blobs (padded layout). */
DwBatch *dw_store_load_batch (DwStore *self, gint64 run_id, gint64 step, GError **error);

/* The compact description of a step's token log-ratios ℓ = log π_old − log π_rollout that the
 * store keeps for every batch (docs/STORE.md): the extreme tokens in full, the bulk between them
 * in bins of equal token counts, and the rows with the largest |ℓ| in full. */
typedef struct
{
  double log_ratio;
  gint32 row, col;
  gint64 token_id; /* -1 when the source had no token ids */
} DwTokenRecord;

typedef struct
{
  double first, last; /* smallest and largest ℓ of the bin */
  gint64 count;
  /* sums over the bin's tokens, in float64, of ℓ clamped to ±20 (verl's SAFETY_BOUND), its
   * square, w = exp(clamped ℓ), w², k3 = w − 1 − clamped ℓ and k3² */
  double sum_log, sum_log_sq, sum_weight, sum_weight_sq, sum_k3, sum_k3_sq;
} DwTokenBin;

typedef struct
{
  gint64 row;
  gsize n;           /* its valid tokens, in column order */
  float *log_ratio;  /* [n] */
  gint32 *token_ids; /* [n], -1 where unknown */
} DwKeptRow;

typedef struct
{
  gint64 n_tokens; /* valid tokens of the step */
  gsize n_low, n_high;
  DwTokenRecord *low;  /* [n_low] the smallest ℓ, ascending */
  DwTokenRecord *high; /* [n_high] the largest ℓ, ascending (NaN last) */
  gsize n_bins;
  DwTokenBin *bins; /* [n_bins] the tokens between, ascending */
  GPtrArray *rows;  /* DwKeptRow*: the rows of largest max |ℓ| in full */
  /* where the raw tokens are: NULL when the store holds them in full, else the source file
   * (its size and modification time when ingested) */
  char *source;
  gint64 source_size, source_mtime_us;
} DwTokenSummary;

void dw_token_summary_free (DwTokenSummary *summary);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwTokenSummary, dw_token_summary_free)

/* The token summary of the batch of @step (DW_STORE_ERROR_NOT_FOUND when it has none). */
DwTokenSummary *dw_store_get_token_summary (DwStore *self, gint64 run_id, gint64 step,
                                            GError **error);

/* What the what-if engine needs of a step to evaluate every sequence-level option and IS level
 * exactly without its tokens (schema 7, docs/STORE.md "Step statistics"): per row the sums and
 * extremes of `sequences`, per step the token-order sums and extremes and where k2 / k3 are not
 * monotone along the sorted ℓ. Arithmetic as the engine's (dw-torch.h, the batch's dtype). */
typedef struct
{
  gint64 n_valid;
  double n, sum_l, sum_k[3], max_k[3], min_l; /* as in sequences (DwSequenceStats) */
  double sum_w; /* Σ w = R(exp(clamp(ℓ, ±20))) over the row's valid tokens, in column order */
  double max_l; /* max raw ℓ (−inf for an empty row) */
  double min_w, max_w; /* the row's extremes of w (+inf / −inf for an empty row) */
} DwStepRowStats;

typedef struct
{
  gint64 step, rows, cols;
  gboolean f32;      /* float32 log-probs (else float64) */
  char *slow_reason; /* NULL, or why the what-if engine has no fast path (mask, NaN ℓ) */
  double weight_sum; /* Σ w over the step's valid tokens in token order */
  double sum_k[3];   /* Σ k1, k2, k3 in token order */
  double min_w, max_w, min_k[3], max_k[3];
  double neg_k3_sum, neg_k3_sq; /* Σ k3 and Σ R(k3²) over tokens with k3 < 0, in sorted order */
  gboolean weight_monotone;     /* w never decreases along the sorted ℓ */
  /* [0] k2, [1] k3: the tokens between the non-increasing left and non-decreasing right parts
   * of k along the sorted ℓ: their number, their ℓ range, their largest k */
  gint64 core_n[2];
  double core_low[2], core_high[2], core_max[2];
  gsize n_offpolicy;
  DwMetric *offpolicy;       /* the 13 off-policy metrics (dw_correction_run_entry OFFPOLICY) */
  DwStepRowStats *row_stats; /* [rows] */
} DwStepStats;

void dw_step_stats_free (DwStepStats *stats);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwStepStats, dw_step_stats_free)

/* The step statistics of the batch of @step: DW_STORE_ERROR_NOT_FOUND when there is no batch, or
 * when they are missing (a store migrated from schema 6 whose raw tokens were gone). */
DwStepStats *dw_store_get_step_stats (DwStore *self, gint64 run_id, gint64 step, GError **error);
/* The valid tokens of the run's stored batches, summed (cheap: one query). */
gint64 dw_store_count_batch_tokens (DwStore *self, gint64 run_id, GError **error);

G_END_DECLS
