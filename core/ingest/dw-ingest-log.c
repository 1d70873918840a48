/* dw-ingest-log.c — a byte-stream log file from its stored offset on
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Chunk by chunk, each in its own transaction. The first window of the file (and a widened one)
 * is parsed here; every later one is parsed while the chunk before it is written, by the file's
 * one parse thread (DwIngestAheadRunner, dw-ingest-ahead.c): started with the first window it
 * parses, fed one window at a time in file order, stopped and joined in log_job_clear whether
 * the ingest ended or failed (the windows are freed first: each waits for a parse still
 * running). A file read in one chunk starts no thread.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <inttypes.h>

#include "dw-run-meta.h"

#include "dw-ingester-private.h"

/* The first run of a W&B panel export's header ("Step","<run> - <metric>",…) when it names two
 * runs or more (the reader then keeps the "<run> - " prefix), else NULL. */
static char *
panel_first_run (const guint8 *buf, gsize len)
{
  const guint8 *nl = memchr (buf, '\n', len);
  g_autofree char *header = g_strndup ((const char *)buf, nl ? (gsize)(nl - buf) : len);
  g_auto (GStrv) cols = g_strsplit (header, ",", -1);
  char *first = NULL;
  gboolean several = FALSE;

  for (guint i = 1; cols[i] != NULL && !several; i++)
    {
      char *c = g_strstrip (cols[i]);
      char *sep;
      if (*c == '"')
        c++;
      sep = strstr (c, " - ");
      if (sep == NULL)
        continue;
      *sep = '\0';
      if (first == NULL)
        first = g_strdup (c);
      else if (!g_str_equal (first, c))
        several = TRUE;
    }
  if (!several)
    g_clear_pointer (&first, g_free);
  return first;
}

/* One log file being read: what the phases below share. */
typedef struct
{
  DwIngester *self;
  const char *path;
  int fd;
  const struct stat *st;
  DwFormat format;
  DwFileRecord *rec;
  const char *run_root;
  DwIngestReport *report;
  gint64 size, pos;
  gint64 restart_ref; /* largest step of the file's earlier content when it was rewritten */
  gint64 launch_step; /* a later launch started here (G_MININT64: none) */
  gboolean rewritten, check_conflicts, checked_conflicts;
  GHashTable *purged;     /* tags whose stale points were purged */
  GHashTable *panel_runs; /* W&B panel export: run name → run id */
  GHashTable *tags;       /* tag name → id inside the current transaction */
  GArray *pending;
  DwLogReader *reader;
  /* @parse: the chunk being written; @next: the one after it, parsed meanwhile when
   * @next_started */
  DwIngestAhead *parse, *next;
  gboolean next_started;
  DwIngestAheadRunner *runner; /* the parse thread, started with the first parse ahead */
  const guint8 *data;          /* the bytes of the chunk being written */
  gsize window;
} LogJob;

static void
log_job_clear (LogJob *job)
{
  g_clear_pointer (&job->purged, g_hash_table_unref);
  g_clear_pointer (&job->panel_runs, g_hash_table_unref);
  g_clear_pointer (&job->tags, g_hash_table_unref);
  g_clear_pointer (&job->pending, g_array_unref);
  /* before their reader: a parse may still be running */
  g_clear_pointer (&job->parse, dw_ingest_ahead_free);
  g_clear_pointer (&job->next, dw_ingest_ahead_free);
  g_clear_pointer (&job->runner, dw_ingest_ahead_runner_free);
  g_clear_pointer (&job->reader, dw_log_reader_free);
}

/* A fresh FeedCtx for one transaction of @job. */
static void
log_feed_init (LogJob *job, FeedCtx *c)
{
  *c = (FeedCtx){ job->self,  job->report, job->path, job->rec->run_id, job->tags, NULL, 0,
                  G_MININT64, G_MININT64,  NULL,      job->pending };
  c->base_rank = c->cur_rank = dw_ingest_feed_format_rank (job->format);
  c->format = job->format;
  c->restart_ref = G_MININT64;
  c->restart_step = G_MININT64;
  c->launch_step = &job->launch_step;
  c->purged = job->purged;
  c->check_conflicts = job->check_conflicts;
  c->panel_runs = job->panel_runs;
}

/* Truncated or rewritten since last time? Then it is read again from the start. */
static gboolean
log_check_rewritten (LogJob *job, GError **error)
{
  DwFileRecord *rec = job->rec;

  if (rec->id != 0 && rec->offset > 0)
    {
      if (dw_log_reader_file_was_truncated (rec->offset, job->size))
        job->rewritten = TRUE;
      else if (rec->prefix_len > DW_INGEST_PREFIX_MAX)
        job->rewritten = TRUE; /* damaged bookkeeping: read again rather than trust it */
      else if (rec->prefix_len > 0)
        {
          guint32 crc;
          if (!dw_ingester_prefix_crc (job->fd, job->path, rec->prefix_len, &crc, error))
            return FALSE;
          job->rewritten = crc != rec->prefix_crc;
        }
    }
  if (job->rewritten)
    {
      dw_ingester_report_note (
        job->report,
        _ ("%s: truncated or rewritten since the last ingest (a restarted run): read "
           "again from the start, newer values replace older ones of the same step"),
        job->path);
      job->restart_ref = rec->max_step;
      rec->offset = 0;
      rec->prefix_len = 0;
      rec->prefix_crc = 0;
      rec->max_step = G_MININT64;
    }
  job->pos = rec->offset;
  return TRUE;
}

/* CSV readers learn the columns from the header: prime with the header line only (priming with
 * everything read before made watching a growing CSV quadratic: one line appended to a 313 MB
 * export re-read all of it). */
static gboolean
log_prime_csv_header (LogJob *job, GError **error)
{
  gsize len = MIN ((gsize)job->pos, 64 * 1024), header = 0;
  g_autofree guint8 *head = NULL;

  for (;;)
    {
      const guint8 *nl;

      head = g_realloc (head, len);
      if (!dw_ingester_read_at (job->fd, job->path, 0, head, len, error))
        return FALSE;
      nl = memchr (head, '\n', len);
      if (nl != NULL || len == (gsize)job->pos)
        {
          header = nl != NULL ? (gsize)(nl - head) + 1 : len;
          break;
        }
      len = MIN (len * 2, (gsize)job->pos);
    }
  dw_log_reader_feed (job->reader, 0, head, header, FALSE, NULL, NULL, NULL);
  return TRUE;
}

/* Inside the chunk's transaction: the file's run (created with its first chunk), whether it
 * meets other sources of the run, and the restart reference of a file read from its start. */
static gboolean
log_chunk_begin (LogJob *job, FeedCtx *c, gsize want, GError **error)
{
  DwFileRecord *rec = job->rec;

  if (rec->run_id == 0 && job->panel_runs != NULL && job->self->run_name == NULL)
    {
      /* a panel export of several runs: the file's home is its first run */
      g_autofree char *first_run = panel_first_run (job->data, want);
      if (first_run != NULL)
        {
          g_autofree char *source = g_strdup_printf ("%s#%s", job->path, first_run);
          rec->run_id = dw_ingest_runs_ensure_named (job->self, source, first_run, "wandb", error);
          if (rec->run_id == 0)
            return FALSE;
        }
    }
  if (rec->run_id == 0)
    {
      rec->run_id = dw_ingest_runs_for_new_log (job->self, job->fd, job->path, job->format,
                                                job->run_root, error);
      if (rec->run_id == 0)
        return FALSE;
    }
  c->run_id = rec->run_id;
  if (!job->checked_conflicts)
    {
      GError *err = NULL;
      job->check_conflicts
        = dw_ingest_runs_has_other_sources (job->self, rec->run_id, job->format, job->path, &err);
      if (err != NULL)
        {
          g_propagate_error (error, err);
          return FALSE;
        }
      job->checked_conflicts = TRUE;
    }
  c->check_conflicts = job->check_conflicts;
  if (job->pos == 0)
    {
      /* a rewritten file, or a new file whose steps go back into another's of the run.
       * MLflow's file store keeps one file per metric, a panel export several runs: such a
       * file is no launch */
      c->at_start = job->format != DW_FORMAT_MLFLOW_FILE && job->panel_runs == NULL;
      c->restart_ref = job->restart_ref;
      if (!job->rewritten)
        {
          GError *err = NULL;
          c->restart_ref
            = dw_ingest_runs_others_max_step (job->self, rec->run_id, job->format, job->path, &err);
          if (err != NULL)
            {
              g_propagate_error (error, err);
              return FALSE;
            }
        }
    }
  return TRUE;
}

/* After the chunk's points: its restart, conflict count, framework and the file's bookkeeping,
 * then the commit. */
static gboolean
log_chunk_commit (LogJob *job, FeedCtx *c, gsize consumed, GError **error)
{
  DwFileRecord *rec = job->rec;

  if (c->restart_step != G_MININT64)
    {
      if (!dw_store_add_restart (job->self->store, rec->run_id, c->restart_step, job->path, error))
        return FALSE;
      dw_ingester_report_note (job->report,
                               _ ("%s: a later launch of the run, starting again at step %" PRId64
                                  ": the earlier launch's points from that step on are replaced"),
                               job->path, c->restart_step);
    }
  if (c->n_conflicts > 3)
    dw_ingester_report_note (job->report,
                             _ ("%s: %u more values disagree with another source of the run"),
                             job->path, c->n_conflicts - 3);
  if (c->framework != NULL
      && !dw_ingest_runs_upgrade_framework (job->self, rec->run_id, c->framework, error))
    return FALSE;
  if (rec->prefix_len < DW_INGEST_PREFIX_MAX && rec->prefix_len == job->pos)
    {
      gint64 add = MIN ((gint64)consumed, DW_INGEST_PREFIX_MAX - rec->prefix_len);
      rec->prefix_crc = dw_crc32c (rec->prefix_crc, job->data, (gsize)add);
      rec->prefix_len += add;
    }
  rec->offset = job->pos + (gint64)consumed;
  rec->format = job->format;
  dw_ingester_fill_identity (rec, job->st);
  /* the size seen so far is what was consumed: killed before the end, the next ingest must
   * not take the file for unchanged */
  rec->size = rec->offset;
  if (c->max_step > rec->max_step)
    rec->max_step = c->max_step;
  return dw_store_put_file (job->self->store, rec, error)
         && dw_store_commit (job->self->store, error);
}

typedef enum
{
  LOG_CHUNK_DONE,  /* read and committed */
  LOG_CHUNK_WIDEN, /* one record longer than the window: read again wider */
  LOG_CHUNK_END,   /* nothing more to consume at the end of the file */
  LOG_CHUNK_FAILED
} LogChunk;

/* Starts parsing the window of the file from @pos into job->next (in the job's parse thread when
 * @in_thread). */
static void
log_parse_start (LogJob *job, gint64 pos, gsize window, gboolean in_thread)
{
  gsize want = (gsize)MIN ((gint64)window, job->size - pos);

  dw_ingest_ahead_start (job->next, pos, want, pos + (gint64)want == job->size,
                         in_thread ? job->runner : NULL);
  job->next_started = in_thread;
}

/* One window of the file from job->pos, in one transaction. Its points come from the parse
 * started while the previous chunk was written (here, for the first or a widened window); the
 * parse of the window after it starts before this one is written. */
static LogChunk
log_read_chunk (LogJob *job, GError **error)
{
  gboolean new_run = job->rec->run_id == 0, at_eof;
  DwIngestAhead *parse;
  GError *err = NULL;
  gsize want, consumed;
  FeedCtx c;

  if (!job->next_started)
    log_parse_start (job, job->pos, job->window, FALSE);
  parse = job->next;
  job->next = job->parse;
  job->parse = parse;
  job->next_started = FALSE;
  if (!dw_ingest_ahead_finish (parse, &job->data, &want, &consumed, error))
    return LOG_CHUNK_FAILED;
  at_eof = job->pos + (gint64)want == job->size;
  if (consumed > 0 && job->pos + (gint64)consumed < job->size)
    log_parse_start (job, job->pos + (gint64)consumed, job->self->chunk, TRUE);
  log_feed_init (job, &c);
  if (!dw_store_begin_appending (job->self->store, error))
    return LOG_CHUNK_FAILED;
  g_hash_table_remove_all (job->tags);
  dw_store_set_source_rank (job->self->store, c.base_rank);
  if (!log_chunk_begin (job, &c, want, &err))
    return dw_ingester_fail_tx (job->self, error, err), LOG_CHUNK_FAILED;
  dw_ingest_ahead_replay (parse, &c);
  dw_ingest_feed_flush (&c);
  if (c.error != NULL)
    return dw_ingester_fail_tx (job->self, error, c.error), LOG_CHUNK_FAILED;
  if (consumed == 0)
    {
      dw_store_rollback (job->self->store);
      if (new_run)
        job->rec->run_id = 0; /* its creation was rolled back too */
      if (job->panel_runs != NULL)
        g_hash_table_remove_all (job->panel_runs);
      return at_eof ? LOG_CHUNK_END : LOG_CHUNK_WIDEN;
    }
  if (!log_chunk_commit (job, &c, consumed, &err))
    return dw_ingester_fail_tx (job->self, error, err), LOG_CHUNK_FAILED;
  job->pos += (gint64)consumed;
  if (job->report != NULL)
    {
      job->report->n_points += c.n_points;
      job->report->n_bytes += consumed;
    }
  return LOG_CHUNK_DONE;
}

/* The last line has no newline (a log cut at the end, a W&B export): read it as it is now,
 * without moving the offset, so a file that grows later reads the line again whole and its
 * values replace these. Problems in it are not reported: it may be a line still being
 * written. */
static gboolean
log_read_tail (LogJob *job, GError **error)
{
  DwFileRecord *rec = job->rec;
  gsize tail = (gsize)(job->size - job->pos);
  g_autofree guint8 *line = g_malloc (tail + 1);
  GError *err = NULL;
  FeedCtx c;

  log_feed_init (job, &c);
  if (!dw_ingester_read_at (job->fd, job->path, job->pos, line, tail, error))
    return FALSE;
  line[tail] = '\n';
  if (!dw_store_begin_appending (job->self->store, error))
    return FALSE;
  g_hash_table_remove_all (job->tags);
  dw_store_set_source_rank (job->self->store, c.base_rank);
  if (rec->run_id == 0)
    {
      rec->run_id = dw_ingest_runs_for_new_log (job->self, job->fd, job->path, job->format,
                                                job->run_root, &err);
      if (rec->run_id == 0)
        return dw_ingester_fail_tx (job->self, error, err);
      c.run_id = rec->run_id;
    }
  dw_log_reader_feed (job->reader, job->pos, line, tail + 1, TRUE, dw_ingest_feed_point_cb, NULL,
                      &c);
  dw_ingest_feed_flush (&c);
  if (c.error != NULL)
    return dw_ingester_fail_tx (job->self, error, c.error);
  if (c.framework != NULL
      && !dw_ingest_runs_upgrade_framework (job->self, rec->run_id, c.framework, &err))
    return dw_ingester_fail_tx (job->self, error, err);
  if (c.max_step > rec->max_step)
    rec->max_step = c.max_step;
  rec->format = job->format;
  dw_ingester_fill_identity (rec, job->st);
  if (!dw_store_put_file (job->self->store, rec, &err) || !dw_store_commit (job->self->store, &err))
    return dw_ingester_fail_tx (job->self, error, err);
  if (job->report != NULL)
    job->report->n_points += c.n_points;
  if (c.n_points == 0)
    dw_ingester_report_note (job->report,
                             _ ("%s: the last %" PRId64 " bytes (from byte offset %" PRId64
                                ") are not a complete line or record yet; they are read again "
                                "once the file grows"),
                             job->path, job->size - job->pos, job->pos);
  return TRUE;
}

/* A partial tail (or an empty file): remember that it was seen, so an unchanged file is not
 * read again. */
static gboolean
log_remember_seen (LogJob *job, GError **error)
{
  DwFileRecord *rec = job->rec;
  GError *err = NULL;

  if (rec->id != 0 && dw_ingester_same_identity (rec, job->st))
    return TRUE;
  if (!dw_store_begin (job->self->store, error))
    return FALSE;
  if (rec->run_id == 0)
    {
      rec->run_id = dw_ingest_runs_for_new_log (job->self, job->fd, job->path, job->format,
                                                job->run_root, &err);
      if (rec->run_id == 0)
        return dw_ingester_fail_tx (job->self, error, err);
    }
  rec->format = job->format;
  dw_ingester_fill_identity (rec, job->st);
  if (!dw_store_put_file (job->self->store, rec, &err) || !dw_store_commit (job->self->store, &err))
    return dw_ingester_fail_tx (job->self, error, err);
  return TRUE;
}

/* A byte-stream log file from its stored offset on: chunk by chunk, each in its own
 * transaction with the file's bookkeeping, then an unterminated last line. */
gboolean
dw_ingest_log_read (DwIngester *self, const char *path, int fd, const struct stat *st,
                    DwFormat format, DwFileRecord *rec, const char *run_root,
                    DwIngestReport *report, GError **error)
{
  LogJob job = { self, path, fd, st, format, rec, run_root, report, (gint64)st->st_size, 0 };
  gboolean ok = FALSE;

  job.restart_ref = G_MININT64;
  job.launch_step = G_MININT64;
  job.purged = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (format == DW_FORMAT_WANDB_PANEL_CSV)
    job.panel_runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  job.tags = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  job.pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  job.window = self->chunk;
  if (!log_check_rewritten (&job, error))
    goto out;
  job.reader = dw_log_reader_new (format, path);
  g_assert (job.reader != NULL);
  job.parse = dw_ingest_ahead_new (job.reader, fd, path);
  job.next = dw_ingest_ahead_new (job.reader, fd, path);
  job.runner = dw_ingest_ahead_runner_new ();
  if (job.pos > 0 && (format == DW_FORMAT_WANDB_CSV || format == DW_FORMAT_WANDB_PANEL_CSV)
      && !log_prime_csv_header (&job, error))
    goto out;
  while (job.pos < job.size)
    {
      LogChunk step = log_read_chunk (&job, error);
      if (step == LOG_CHUNK_FAILED)
        goto out;
      if (step == LOG_CHUNK_END)
        break;
      job.window = step == LOG_CHUNK_WIDEN ? job.window * 2 : self->chunk;
    }
  if (job.pos < job.size && job.reader->line != NULL
      && job.size - job.pos <= (gint64)DW_READER_MAX_LINE)
    {
      if (!log_read_tail (&job, error))
        goto out;
    }
  else if (job.pos < job.size)
    dw_ingester_report_note (report,
                             _ ("%s: the last %" PRId64 " bytes (from byte offset %" PRId64
                                ") are not a complete line or record yet; they are read once "
                                "the file grows"),
                             path, job.size - job.pos, job.pos);
  ok
    = log_remember_seen (&job, error) && dw_ingest_runs_infer_generation (self, rec->run_id, error);
out:
  log_job_clear (&job);
  return ok;
}
