/* dw-store-private.h — what the files of core/store/ share (never included outside it)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The store is one object split by concern:
 *   dw-store.c          the object, limits, integrity, transactions, the canonical dump
 *   dw-store-open.c     opening, the schema and its migrations
 *   dw-store-query.c    the one way to run a query (prepare, bind, step, errors)
 *   dw-store-runs.c     runs, tags, their metadata, restarts and diagnostics
 *   dw-store-points.c   scalar points: writing (batched) and reading series
 *   dw-store-feed.c     the points being written, as the virtual table dw_points_feed
 *   dw-store-batches.c  rollout batches and their per-sequence statistics
 *   dw-store-tokens.c   the token summary of a batch, the --keep-tokens budget, raw data read
 *                       back from a referenced source file
 *   dw-store-stats.c    the step statistics of a batch (schema 7), for the what-if engine
 *   dw-store-files.c    ingest bookkeeping of input files
 */
#pragma once

#include <math.h>
#include <sqlite3.h>

#include "dw-store-writer.h"

G_BEGIN_DECLS

typedef enum
{
  DW_STORE_STMT_PUT_POINT,
  DW_STORE_STMT_PUT_POINTS, /* every row of dw_points_feed (dw-store-feed.c) */
  DW_STORE_STMT_GET_TAG,
  DW_STORE_STMT_INSERT_TAG,
  DW_STORE_STMT_FLUSH_RUN,
  DW_STORE_N_STMTS
} DwStoreStmtId;

/* First/last step and wall time of the points a transaction wrote to one run. */
typedef struct
{
  gint64 first_step, last_step;
  double first_wall, last_wall;
} DwStoreRunAcc;

struct _DwStore
{
  GObject parent_instance;

  char *path;
  sqlite3 *db;
  gboolean read_only;
  int busy_timeout_ms;
  sqlite3_stmt *stmts[DW_STORE_N_STMTS];
  GHashTable *tag_cache; /* "run_id\x1fname" → gint64 id */
  GHashTable *run_acc;   /* gint64* run id → DwStoreRunAcc*, flushed at commit */
  gint64 acc_run_id;     /* one-entry cache of run_acc */
  int rank;              /* precision rank of the points being written */
  gint64 keep_tokens;    /* per-run budget of copied per-token bytes, -1: no limit */
  DwStoreRunAcc *acc;
  const DwPointRow *feed_rows; /* what dw_points_feed returns while dw_store_put_points runs */
  gsize feed_n;
  gboolean wal_seen;         /* the -wal file existed after our last commit (recover_lost_wal) */
  gboolean foreign_keys_off; /* dw_store_begin_appending() until commit or rollback */
};

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

/* dw-store-query.c ------------------------------------------------------------------------- */

/* Called for each row of a query (_dw_store_query_rows). */
typedef void (*DwStoreRowFunc) (sqlite3_stmt *stmt, gpointer user_data);

void _dw_store_query_set_error (DwStore *self, GError **error, int rc, const char *what);
gboolean _dw_store_query_check_writable (DwStore *self, GError **error);
gboolean _dw_store_query_exec (DwStore *self, const char *sql, const char *what, GError **error);
sqlite3_stmt *_dw_store_query_prepare (DwStore *self, const char *sql, GError **error);
/* Binds @stmt's parameters ?1, ?2, … in order from the arguments, one per letter of @types:
 * 'i' gint64, 'n' int, 't' const char * (NULL binds NULL), 'd' double (NaN binds NULL). */
void _dw_store_query_bind (sqlite3_stmt *stmt, const char *types, ...);
/* Prepares @sql and binds its parameters as _dw_store_query_bind. */
sqlite3_stmt *_dw_store_query_new (DwStore *self, GError **error, const char *sql,
                                   const char *types, ...);
/* One of the statements kept prepared for the hot paths, reset. */
sqlite3_stmt *_dw_store_query_cached (DwStore *self, DwStoreStmtId id, GError **error);
/* Runs @stmt to its end (rows ignored) and resets it; FALSE with an error naming @what. */
gboolean _dw_store_query_step_done (DwStore *self, sqlite3_stmt *stmt, const char *what,
                                    GError **error);
/* Prepares, binds (as _dw_store_query_new), runs and finalizes a statement returning no rows. */
gboolean _dw_store_query_run (DwStore *self, GError **error, const char *what, const char *sql,
                              const char *types, ...);
/* Steps @stmt to its first row: 1 a row, 0 none, -1 an error (set, naming @what). */
int _dw_store_query_first_row (DwStore *self, sqlite3_stmt *stmt, const char *what, GError **error);
/* Prepares and binds @sql (as _dw_store_query_new) and calls @each_row for every row; FALSE
 * with an error naming @what. */
gboolean _dw_store_query_rows (DwStore *self, GError **error, const char *what,
                               DwStoreRowFunc each_row, gpointer user_data, const char *sql,
                               const char *types, ...);
/* The first column of the first row of @sql as an integer (0 without a row); *ok says success. */
gint64 _dw_store_query_int (DwStore *self, const char *sql, const char *what, GError **error,
                            gboolean *ok);
/* A text column as a new string; @fallback when the (crafted or damaged) store holds NULL. */
char *_dw_store_query_column_text_or (sqlite3_stmt *stmt, int col, const char *fallback);
double _dw_store_query_column_double_or_nan (sqlite3_stmt *stmt, int col);
/* Appends the first column of each row (an integer) to a GArray of gint64 (a DwStoreRowFunc). */
void _dw_store_query_append_int64_cb (sqlite3_stmt *stmt, gpointer steps);
/* Appends the first column of each row (text, "" for NULL) to a GPtrArray of strings. */
void _dw_store_query_append_text_cb (sqlite3_stmt *stmt, gpointer names);

/* dw-store-open.c -------------------------------------------------------------------------- */

/* Opens self->path (creating and migrating the schema when writable). */
gboolean _dw_store_open_db (DwStore *self, GError **error);

/* dw-store-feed.c -------------------------------------------------------------------------- */

/* Makes dw_points_feed known to the connection (its rows: self->feed_rows, self->feed_n). */
gboolean _dw_store_feed_register (DwStore *self, GError **error);

/* dw-store-points.c ------------------------------------------------------------------------ */

/* The special column of a point of @value: 1 NaN (stored as NULL), 2 −0.0 (stored as 0), else 0. */
static inline int
_dw_store_points_special (double value)
{
  return isnan (value) ? 1 : (value == 0.0 && signbit (value)) ? 2 : 0;
}

/* Writes the first/last step and wall time the transaction's points gave each run. */
gboolean _dw_store_points_flush_runs (DwStore *self, GError **error);
/* Forgets them (a rollback). */
void _dw_store_points_forget_runs (DwStore *self);

/* dw-store-runs.c -------------------------------------------------------------------------- */

/* The run's tags (id and name only, no point counts), their canonical names resolved. */
GPtrArray *_dw_store_runs_list_tag_ids (DwStore *self, gint64 run_id, GError **error);

/* dw-store-tokens.c ------------------------------------------------------------------------ */

/* *in_full: whether the batch of @step (@bytes of arrays) is copied in full into @run_id: within
 * its budget, or its @source cannot be referenced (not a regular file); *size and *mtime_us get
 * @source's. FALSE on an error. */
gboolean _dw_store_tokens_keep_in_full (DwStore *self, gint64 run_id, gint64 step, gint64 bytes,
                                        const char *source, gboolean *in_full, gint64 *size,
                                        gint64 *mtime_us, GError **error);
/* Stores the token summary of @batch, whose valid tokens sorted by ℓ are @tokens (reordered: the
 * high tail is moved after the low one), and its reference (or none when @source is NULL). */
gboolean _dw_store_tokens_put (DwStore *self, gint64 batch_id, const DwBatch *batch,
                               DwTokenRecord *tokens, gsize n_tokens, const char *source,
                               gint64 size, gint64 mtime_us, GError **error);
/* The batch of (@run_id, @step) read again from its referenced @source, checked against what was
 * ingested (file size and time, step, shape); DW_STORE_ERROR_SOURCE_CHANGED naming the file. */
DwBatch *_dw_store_tokens_read_source (DwStore *self, gint64 step, const char *source, gint64 size,
                                       gint64 mtime_us, gint64 rows, gint64 cols, GError **error);
/* Every valid token of @batch, sorted by ℓ (NaN last); *n_tokens gets their number. */
DwTokenRecord *_dw_store_tokens_sorted (const DwBatch *batch, gsize *n_tokens);

/* dw-store-stats.c ------------------------------------------------------------------------- */

/* Stores the step statistics of @batch (stored as @batch_id, its sequences already written),
 * whose valid tokens sorted by ℓ are @sorted. */
gboolean _dw_store_stats_put (DwStore *self, gint64 batch_id, const DwBatch *batch,
                              const DwTokenRecord *sorted, gsize n_tokens, GError **error);

/* dw-store-batches.c ---------------------------------------------------------------------- */

/* The 6 → 7 migration: the step statistics of every batch that has none, from its kept tokens or
 * its referenced file; a batch whose tokens cannot be read keeps them missing. */
gboolean _dw_store_batches_fill_stats (DwStore *self, GError **error);

G_END_DECLS
