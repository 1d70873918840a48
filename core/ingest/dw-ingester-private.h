/* dw-ingester-private.h — what the files of the ingester share (core/ingest/ only)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * dw-ingester.c      the object and its entry points (a file, a folder)
 * dw-ingest-folder.c folders: which files form one run
 * dw-ingest-one.c    one file: is it the store's own, its format, the part that reads it
 * dw-ingest-log.c    a byte-stream log from its stored offset on
 * dw-ingest-db.c     databases of several runs (trackio, MLflow's SQL store)
 * dw-ingest-batch.c  rollout batch files
 * dw-ingest-ahead.c  a log's next chunk parsed by a worker thread while one is written
 * dw-ingest-feed.c   reader points into the store: ranks, (tag, step) order, conflicts, launches
 * dw-ingest-runs.c   run identity: the run of a file, run names, run meta
 * dw-ingest-util.c   reads, the prefix checksum, file identity, failed transactions
 * dw-ingest-report.c the report
 *
 * Each calls only files below it in this list, never one above.
 */
#pragma once

#include <sys/stat.h>

#include "dw-ingester.h"
#include "dw-log-reader-private.h"
#include "dw-store-writer.h"

G_BEGIN_DECLS

/* Bytes of a file covered by the stored prefix checksum. */
#define DW_INGEST_PREFIX_MAX (64 * 1024)

#define DW_INGESTER_DEFAULT_CHUNK (16u << 20)
#define DW_INGESTER_MAX_DEPTH     16

struct _DwIngester
{
  GObject parent_instance;

  DwStore *store;
  gsize chunk;
  char *store_path;     /* canonical, to skip the store's own files inside an ingested folder */
  GHashTable *sniffers; /* path → DwSniffer*: files not recognised yet, examined further as
                         * they grow */
  gint64 sniff_budget_us;
  char *run_name; /* --name: every file goes to this run */
};

typedef struct
{
  DwIngester *self;
  DwIngestReport *report;
  const char *path;
  gint64 run_id;
  GHashTable *tags; /* tag name → FeedTag (its first member the gint64 id), valid inside the
                     * current transaction */
  GError *error;    /* first store error: later callbacks do nothing */
  guint64 n_points;
  gint64 first_step; /* of the first point, G_MININT64 before any */
  gint64 max_step;
  const char *framework; /* guessed from tag names (tfevents) */
  GArray *pending;       /* Pending points of the chunk, written sorted by flush_points() */
  int base_rank;         /* the format's precision rank */
  int cur_rank;          /* rank of the pending points */
  /* restart detection at the file's first point (before anything of it is written) */
  gboolean at_start;
  gint64 restart_ref; /* largest step of the earlier launch, G_MININT64 when none */
  gint64 restart_step;
  /* a later launch started at *launch_step (G_MININT64: none): as in TensorBoard, each tag's
   * points at steps ≥ it from the earlier launch are stale; @purged: tags already purged */
  gint64 *launch_step;
  GHashTable *purged;
  DwFormat format;
  /* the run already holds points from files of other formats: report disagreements */
  gboolean check_conflicts;
  guint n_conflicts;
  /* W&B panel export of several runs: "<run> - <metric>" columns, one run each */
  GHashTable *panel_runs; /* run name → gint64 run id */
  /* the tags entry of the previous point (dw-ingest-feed.c's tag order predictor); NULL
   * whenever @tags is emptied */
  gpointer last_tag;
} FeedCtx;

typedef struct
{
  gint64 tag_id, step;
  double wall_time, value;
  guint seq; /* arrival order: the later write of a (tag, step) wins */
} Pending;

/* dw-ingest-report.c */
void dw_ingester_report_note (DwIngestReport *report, const char *fmt, ...) G_GNUC_PRINTF (2, 3);
void dw_ingester_report_run (DwIngestReport *report, gint64 run_id);

/* dw-ingest-util.c */
gboolean dw_ingester_is_batch_format (DwFormat format);
gboolean dw_ingester_read_at (int fd, const char *path, goffset offset, guint8 *buf, gsize n,
                              GError **error);
/* CRC-32C of [0, len) of the file. */
gboolean dw_ingester_prefix_crc (int fd, const char *path, gint64 len, guint32 *crc,
                                 GError **error);
void dw_ingester_fill_identity (DwFileRecord *rec, const struct stat *st);
gboolean dw_ingester_same_identity (const DwFileRecord *rec, const struct stat *st);
/* Rolls the transaction back and propagates @err: FALSE. */
gboolean dw_ingester_fail_tx (DwIngester *self, GError **error, GError *err);

/* dw-ingest-one.c */
gboolean dw_ingester_is_store_file (DwIngester *self, const char *abs);
DwFormat dw_ingester_recognise_fd (DwIngester *self, int fd, const char *path, char **reason);
gboolean dw_ingester_ingest_one (DwIngester *self, const char *path_in, const char *run_root,
                                 gboolean explicit, DwIngestReport *report, GError **error);

/* dw-ingest-runs.c */
const char *dw_ingest_runs_format_framework (DwFormat format);
gboolean dw_ingest_runs_is_part_dir (const char *name);
gint64 dw_ingest_runs_ensure_named (DwIngester *self, const char *run_root, const char *name_hint,
                                    const char *framework, GError **error);
gint64 dw_ingest_runs_ensure_for_root (DwIngester *self, const char *run_root,
                                       const char *framework, GError **error);
gint64 dw_ingest_runs_others_max_step (DwIngester *self, gint64 run_id, int format,
                                       const char *path, GError **error);
gboolean dw_ingest_runs_upgrade_framework (DwIngester *self, gint64 run_id, const char *framework,
                                           GError **error);
gboolean dw_ingest_runs_infer_generation (DwIngester *self, gint64 run_id, GError **error);
gboolean dw_ingest_runs_has_other_sources (DwIngester *self, gint64 run_id, int format,
                                           const char *path, GError **error);
gint64 dw_ingest_runs_for_new_log (DwIngester *self, int fd, const char *path, DwFormat format,
                                   const char *run_root, GError **error);

/* dw-ingest-ahead.c: one window of a log file read and fed to its reader, in the runner's worker
 * thread or in the caller's, the points and diagnostics kept in order for the chunk's
 * transaction. */
typedef struct _DwIngestAhead DwIngestAhead;
/* The one parse thread of a file's ingest, started with the first window handed to it; freeing
 * the runner stops and joins it. Free the windows before their runner. */
typedef struct _DwIngestAheadRunner DwIngestAheadRunner;
DwIngestAheadRunner *dw_ingest_ahead_runner_new (void);
void dw_ingest_ahead_runner_free (DwIngestAheadRunner *runner);
DwIngestAhead *dw_ingest_ahead_new (DwLogReader *reader, int fd, const char *path);
/* Reads [@pos, @pos + @want) and feeds it to the reader, in @runner's thread when @runner is not
 * NULL (one window at a time; the reader is the worker's until finished), else here. */
void dw_ingest_ahead_start (DwIngestAhead *ahead, gint64 pos, gsize want, gboolean at_eof,
                            DwIngestAheadRunner *runner);
/* Waits for the worker: the window's bytes, their number and the bytes the reader consumed;
 * FALSE when they could not be read. */
gboolean dw_ingest_ahead_finish (DwIngestAhead *ahead, const guint8 **data, gsize *want,
                                 gsize *consumed, GError **error);
/* The points and diagnostics into @c, in the order the reader gave them. */
void dw_ingest_ahead_replay (DwIngestAhead *ahead, FeedCtx *c);
/* Waits for a worker still running, then frees. */
void dw_ingest_ahead_free (DwIngestAhead *ahead);
/* Tag names interned for a batch of points: one strcmp for a tag that follows the tag it
 * followed last time, a hash lookup otherwise; the strings live until the names are freed. */
typedef struct _DwIngestAheadNames DwIngestAheadNames;
DwIngestAheadNames *dw_ingest_ahead_names_new (void);
const char *dw_ingest_ahead_names_intern (DwIngestAheadNames *names, const char *name);
void dw_ingest_ahead_names_free (DwIngestAheadNames *names);

/* dw-ingest-feed.c */
int dw_ingest_feed_format_rank (DwFormat format);
void dw_ingest_feed_flush (FeedCtx *c);
void dw_ingest_feed_point_cb (const DwScalarPoint *p, gpointer user_data);
void dw_ingest_feed_diag_cb (goffset offset, const char *message, gpointer user_data);

/* one file of each kind, from its record on (dw-ingest-log.c, -db.c, -batch.c) */
gboolean dw_ingest_log_read (DwIngester *self, const char *path, int fd, const struct stat *st,
                             DwFormat format, DwFileRecord *rec, const char *run_root,
                             DwIngestReport *report, GError **error);
gboolean dw_ingest_db_read (DwIngester *self, const char *path, const struct stat *st,
                            DwFormat format, DwFileRecord *rec, DwIngestReport *report,
                            GError **error);
gboolean dw_ingest_batch_read (DwIngester *self, const char *path, int fd, const struct stat *st,
                               DwFormat format, DwFileRecord *rec, const char *run_root,
                               DwIngestReport *report, GError **error);

/* dw-ingest-folder.c */
gboolean dw_ingest_folder_read (DwIngester *self, const char *dir, DwIngestReport *report,
                                int depth, GError **error);

G_END_DECLS
