/* dw-store-writer.h — the writer side of the store (ingest, follower, demo, tests)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A public header of core/store: dw-store.h is what readers need, this is what writers need
 * (and what opens a store read-only or checks it). It used to be called dw-store-private.h
 * although half the project included it.
 *
 * Writes happen inside explicit transactions: dw_store_begin() … dw_store_commit(). A failed
 * write leaves the transaction open: the caller must dw_store_rollback(). Points, tags, batches
 * and the file bookkeeping of one chunk go into the same transaction, so a crash (kill -9,
 * power loss) leaves either all of a chunk or none of it, and the stored offset always matches
 * the stored points.
 */
#pragma once

#include "dw-store.h"

G_BEGIN_DECLS

/* Schema version this build writes and understands (PRAGMA user_version). */
#define DW_STORE_SCHEMA_VERSION 7
/* PRAGMA application_id of a Driftwatch store ("DWst"). */
#define DW_STORE_APPLICATION_ID 0x44577374

/* Opens an existing store read-only (never creates, migrates nor writes). */
DwStore *dw_store_open_read_only (const char *path, GError **error);
gboolean dw_store_is_read_only (DwStore *self);
/* How long a writer waits for another process's write lock before DW_STORE_ERROR_BUSY (ms). */
void dw_store_set_busy_timeout (DwStore *self, int timeout_ms);
/* Caps the store's size (PRAGMA max_page_count): writes beyond fail with DW_STORE_ERROR_FULL as on
 * a full disk. For quotas and tests; 0 lifts the cap. */
gboolean dw_store_set_max_size (DwStore *self, gint64 bytes, GError **error);
/* Caps the size of one stored value (SQLite's SQLITE_LIMIT_LENGTH, 1 GB by default): a batch
 * whose arrays are larger fails with DW_STORE_ERROR_TOO_LARGE. For tests of that limit. */
void dw_store_set_max_value_size (DwStore *self, int bytes);
/* Integrity check (PRAGMA integrity_check + foreign_key_check): FALSE with
 * DW_STORE_ERROR_CORRUPT and SQLite's first complaint. */
gboolean dw_store_check_integrity (DwStore *self, GError **error);
/* Canonical text dump of every table's contents (ids and bookkeeping excluded), for tests
 * comparing a crashed-and-resumed ingest with a clean one. */
char *dw_store_dump (DwStore *self, GError **error);

gboolean dw_store_begin (DwStore *self, GError **error);
/* dw_store_begin() for a transaction that only adds runs, tags, points, files, restarts and
 * diagnostics and deletes nothing but points (log ingest): SQLite's foreign-key checks are off
 * until its commit or rollback. Every id such a transaction writes was created or read inside
 * it; the check of each point's tag_id cost 10 % of the CPU time of an ingest. */
gboolean dw_store_begin_appending (DwStore *self, GError **error);
gboolean dw_store_commit (DwStore *self, GError **error);
void dw_store_rollback (DwStore *self);
gboolean dw_store_in_transaction (DwStore *self);

/* Runs by name (the run folder's name, or a file name). Creates it when absent; an existing run
 * keeps its id; framework is upgraded from "unknown". */
gint64 dw_store_ensure_run (DwStore *self, const char *name, const char *framework,
                            const char *source, GError **error);
gboolean dw_store_set_run_status (DwStore *self, gint64 run_id, DwRunStatus status, GError **error);

/* A tag of a run; @step_key as in DwScalarPoint (NULL for the format's only axis). Cached. */
gint64 dw_store_ensure_tag (DwStore *self, gint64 run_id, const char *name, const char *step_key,
                            GError **error);
/* Precision rank of the source of the points written from now on (0 by default): a point
 * replaces a stored one of the same (tag, step) only when its rank is ≥ the stored rank, so a
 * float32 copy (tfevents: 1) never overwrites the float64 value (JSONL: 2). */
void dw_store_set_source_rank (DwStore *self, int rank);
/* Inserts or replaces (newest write of the highest rank wins) the point (tag, step). NaN/±inf
 * kept. */
gboolean dw_store_put_point (DwStore *self, gint64 run_id, gint64 tag_id, gint64 step,
                             double wall_time, double value, GError **error);
/* The same for @n points of one run, in order (a later row of the same (tag, step) wins);
 * several times fewer SQLite calls per point. */
typedef struct
{
  gint64 tag_id;
  gint64 step;
  double wall_time;
  double value;
} DwPointRow;
gboolean dw_store_put_points (DwStore *self, gint64 run_id, const DwPointRow *rows, gsize n,
                              GError **error);
/* Records that a restart (steps going back / overlapping a previous file) was seen at @step. */
gboolean dw_store_add_restart (DwStore *self, gint64 run_id, gint64 step, const char *source,
                               GError **error);
/* Replaces what ingest found out about a run: a JSON object (dw_store_get_run_meta in dw-store.h
 * reads it back). */
gboolean dw_store_set_run_meta (DwStore *self, gint64 run_id, const char *meta_json,
                                GError **error);
/* A later launch of a run (TensorBoard's rule for stale points): deletes the points of @tag_id
 * at steps ≥ @step written by a source of precision rank @rank (the earlier launch's copy). */
gboolean dw_store_purge_points_from (DwStore *self, gint64 tag_id, gint64 step, int rank,
                                     GError **error);
/* The stored point (tag, step): FALSE (no error) when there is none. */
gboolean dw_store_get_point (DwStore *self, gint64 tag_id, gint64 step, double *value, int *rank,
                             GError **error);
/* Per-run budget of raw per-token data copied into the store, in bytes (--keep-tokens): a batch
 * that would take a run's kept arrays past it is not copied; its source file is referenced
 * instead (path, size, modification time) and read again when an exact pass needs it. Its
 * per-sequence statistics and token summary are kept either way. -1: no limit (copy all). */
#define DW_STORE_DEFAULT_KEEP_TOKENS ((gint64)64 << 20)
void dw_store_set_keep_tokens (DwStore *self, gint64 bytes);
gint64 dw_store_get_keep_tokens (DwStore *self);
/* Parses a size for --keep-tokens: "64M", "2G", "512k", "1000000" (bytes), "all" (-1, no limit);
 * FALSE with an error naming @text otherwise. */
gboolean dw_store_parse_size (const char *text, gint64 *bytes, GError **error);

/* Stores (or replaces) the batch of @step with its per-sequence statistics and token summary;
 * @source is the file it was read from (referenced when the run is over its budget). */
gboolean dw_store_put_batch (DwStore *self, gint64 run_id, gint64 step, const DwBatch *batch,
                             const char *source, GError **error);
/* A problem found in an input (corrupt record, garbage line…): kept for `ingest` reports. */
gboolean dw_store_add_diagnostic (DwStore *self, gint64 run_id, const char *path, goffset offset,
                                  const char *message, GError **error);

/* Per-sequence statistics of a stored batch (see DwRowStats in dw-correction.h). */
typedef struct
{
  gint64 row;
  gint64 n_valid;
  double n, sum_l, sum_old, sum_roll, sum_k[3], max_k[3], min_l;
} DwSequenceStats;
/* Element type DwSequenceStats (GArray), row order. */
GArray *dw_store_get_sequence_stats (DwStore *self, gint64 run_id, gint64 step, GError **error);

/* Ingest bookkeeping of one input file. */
typedef struct
{
  gint64 id; /* 0 when not stored yet */
  gint64 run_id;
  char *path;
  int format; /* DwFormat */
  guint64 dev, inode;
  gint64 size, mtime_us;
  gint64 offset;     /* bytes consumed (MLflow: last rowid read) */
  gint64 prefix_len; /* bytes covered by prefix_crc (≤ offset) */
  guint32 prefix_crc;
  gint64 max_step; /* largest step read from this file, G_MININT64 before any */
  GBytes *state;   /* reader state, format specific (may be NULL) */
} DwFileRecord;

void dw_file_record_free (DwFileRecord *record);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwFileRecord, dw_file_record_free)

/* The record of @path, or NULL (no error) when the file is unknown. */
DwFileRecord *dw_store_get_file (DwStore *self, const char *path, GError **error);
/* Inserts (id == 0: sets record->id) or updates the record. */
gboolean dw_store_put_file (DwStore *self, DwFileRecord *record, GError **error);
/* Every known file, element type DwFileRecord*. */
GPtrArray *dw_store_list_files (DwStore *self, GError **error);

/* The largest max_step of the files of @run_id in @format other than @except_path; G_MININT64
 * when there is none (or on error, then set). Indexed: ingest stays linear in the number of
 * files (listing every file per file made 16 k files take 106 s). */
gint64 dw_store_get_files_max_step (DwStore *self, gint64 run_id, int format,
                                    const char *except_path, GError **error);

/* Whether @run_id holds a file of another format than @format (indexed, see above). */
gboolean dw_store_run_has_other_formats (DwStore *self, gint64 run_id, int format, GError **error);

/* Diagnostics of a run: strings "PATH: offset N: MESSAGE". */
GPtrArray *dw_store_list_diagnostics (DwStore *self, gint64 run_id, GError **error);

G_END_DECLS
