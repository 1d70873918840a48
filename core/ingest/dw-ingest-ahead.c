/* dw-ingest-ahead.c — a log file's next chunk, read and parsed by a worker thread while the main
 * thread writes the chunk before it into the store
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Parsing a chunk (JSONL numbers, console lines, protobuf records and their CRCs) is 15–30 % of
 * a log ingest and writing its points into the store (SQLite's B-tree) most of the rest; on two
 * cores the two now overlap. The worker touches only its DwIngestAhead and the file's reader,
 * which the main thread leaves alone until the worker has handed the window back: it reads the
 * chunk's bytes (pread, so the main thread may read the same file meanwhile) and feeds them to the
 * reader, which records every point and diagnostic in order instead of handing it to the store. The
 * main thread then replays them, in the same order, into the chunk's transaction
 * (dw_ingest_feed_point_cb, dw_ingest_feed_diag_cb): what is stored is exactly what feeding the
 * reader inside the transaction stored. The reader is fed the chunks in file order, one at a
 * time, as before.
 *
 * One thread per file ingest, not one per chunk: a DwIngestAheadRunner starts its thread
 * (dw_ingest_ahead_runner_worker) with the first window handed to it and keeps it until the
 * ingest ends or fails (dw_ingest_ahead_runner_free stops and joins it). The runner holds one
 * window at a time under its mutex: the main thread hands a window over (request), the worker
 * parses it with the mutex released and hands it back (request = NULL, the condition
 * signalled); the mutex orders the worker's writes before the main thread's reads. Starting a
 * thread for every chunk cost more than parsing it when chunks are small, as the 64–160-byte
 * chunks of the ingester fuzz target and of the growing-file tests are (2412 thread starts for
 * the 451 inputs of a fuzz corpus run, 354 now).
 * Every window after the first of a file is parsed in the worker whatever its size, so the tests
 * with small chunks (the growing-file tests, the ingester fuzz target) replay windows the worker
 * parsed. Parsing windows under 4 KB here instead was measured and left out: it saved about 10 %
 * of the fuzz target's CPU over its corpus and nothing at the default chunk size (a file's only
 * small window there is its last), and those tests would then need a knob to force the thread.
 */
#include "config.h"

#include <string.h>

#include "dw-ingester-private.h"

/* A tag seen in the file, and the tag that followed it last time: loggers write a step's tags in
 * the same order every step, so one strcmp usually finds a point's tag (the hash table
 * otherwise). */
typedef struct DwIngestAheadTag
{
  const char *name; /* in DwIngestAheadNames.strings */
  struct DwIngestAheadTag *next;
} DwIngestAheadTag;

struct _DwIngestAheadNames
{
  GStringChunk *strings;
  GHashTable *tags; /* name → DwIngestAheadTag */
  DwIngestAheadTag *last;
};

DwIngestAheadNames *
dw_ingest_ahead_names_new (void)
{
  DwIngestAheadNames *names = g_new0 (DwIngestAheadNames, 1);

  names->strings = g_string_chunk_new (4096);
  names->tags = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  return names;
}

const char *
dw_ingest_ahead_names_intern (DwIngestAheadNames *names, const char *name)
{
  DwIngestAheadTag *last = names->last, *entry;

  if (last != NULL && last->next != NULL && strcmp (last->next->name, name) == 0)
    entry = last->next;
  else if ((entry = g_hash_table_lookup (names->tags, name)) == NULL)
    {
      entry = g_new0 (DwIngestAheadTag, 1);
      entry->name = g_string_chunk_insert (names->strings, name);
      g_hash_table_insert (names->tags, (gpointer)entry->name, entry);
    }
  if (last != NULL)
    last->next = entry;
  names->last = entry;
  return entry->name;
}

/* Forgets every name (the strings handed out are gone); the memory is kept. */
static void
dw_ingest_ahead_names_clear (DwIngestAheadNames *names)
{
  g_hash_table_remove_all (names->tags);
  names->last = NULL;
  g_string_chunk_clear (names->strings);
}

void
dw_ingest_ahead_names_free (DwIngestAheadNames *names)
{
  if (names == NULL)
    return;
  g_hash_table_unref (names->tags);
  g_string_chunk_free (names->strings);
  g_free (names);
}

struct _DwIngestAhead
{
  DwLogReader *reader;
  int fd;
  const char *path;
  /* the window being parsed */
  gint64 pos;
  gsize want;
  gboolean at_eof;
  guint8 *buf;
  gsize cap;
  /* what the worker produced */
  gsize consumed;
  GError *error; /* the window could not be read */
  /* the reader's output in order: a point, or when its tag is NULL a diagnostic (its offset in
   * .step, its message in .step_key); the strings live in @names. Kept from one window to the
   * next with their memory. */
  GArray *events;
  DwIngestAheadNames *names;
  /* the runner parsing the window, until finished (set and cleared by the main thread only) */
  DwIngestAheadRunner *runner;
};

struct _DwIngestAheadRunner
{
  GThread *thread; /* started with the first window */
  GMutex lock;
  GCond cond;
  DwIngestAhead *request; /* under @lock: the window handed to the worker, NULL once parsed */
  gboolean stop;          /* under @lock: the ingest is over */
};

static void
dw_ingest_ahead_point_cb (const DwScalarPoint *point, gpointer user_data)
{
  DwIngestAhead *ahead = user_data;
  DwScalarPoint event = *point;

  event.tag = dw_ingest_ahead_names_intern (ahead->names, point->tag);
  if (point->step_key != NULL)
    event.step_key = g_string_chunk_insert_const (ahead->names->strings, point->step_key);
  g_array_append_val (ahead->events, event);
}

static void
dw_ingest_ahead_diag_cb (goffset offset, const char *message, gpointer user_data)
{
  DwIngestAhead *ahead = user_data;
  DwScalarPoint event
    = { NULL, offset, 0, 0, g_string_chunk_insert (ahead->names->strings, message), 0 };

  g_array_append_val (ahead->events, event);
}

/* Reads the window and feeds it to the reader, in whichever thread has the window. */
static void
dw_ingest_ahead_parse (DwIngestAhead *ahead)
{
  if (dw_ingester_read_at (ahead->fd, ahead->path, ahead->pos, ahead->buf, ahead->want,
                           &ahead->error))
    ahead->consumed
      = dw_log_reader_feed (ahead->reader, ahead->pos, ahead->buf, ahead->want, ahead->at_eof,
                            dw_ingest_ahead_point_cb, dw_ingest_ahead_diag_cb, ahead);
}

/* The runner's thread: parses each window handed over, until told to stop. A window handed
 * over before the stop is parsed all the same (the main thread may be waiting for it). */
static gpointer
dw_ingest_ahead_runner_worker (gpointer data)
{
  DwIngestAheadRunner *runner = data;

  g_mutex_lock (&runner->lock);
  for (;;)
    {
      DwIngestAhead *ahead;

      while (runner->request == NULL && !runner->stop)
        g_cond_wait (&runner->cond, &runner->lock);
      if (runner->request == NULL)
        break;
      ahead = runner->request;
      g_mutex_unlock (&runner->lock);
      dw_ingest_ahead_parse (ahead);
      g_mutex_lock (&runner->lock);
      runner->request = NULL;
      g_cond_broadcast (&runner->cond);
    }
  g_mutex_unlock (&runner->lock);
  return NULL;
}

DwIngestAheadRunner *
dw_ingest_ahead_runner_new (void)
{
  DwIngestAheadRunner *runner = g_new0 (DwIngestAheadRunner, 1);

  g_mutex_init (&runner->lock);
  g_cond_init (&runner->cond);
  return runner;
}

/* Hands @ahead to the runner's thread, started now if it is not yet. */
static void
dw_ingest_ahead_runner_push (DwIngestAheadRunner *runner, DwIngestAhead *ahead)
{
  g_mutex_lock (&runner->lock);
  g_assert (runner->request == NULL && !runner->stop);
  runner->request = ahead;
  ahead->runner = runner;
  if (runner->thread == NULL)
    runner->thread = g_thread_new ("dw-log-parse", dw_ingest_ahead_runner_worker, runner);
  else
    g_cond_broadcast (&runner->cond);
  g_mutex_unlock (&runner->lock);
}

/* Until the runner has parsed @ahead's window (at once when it has none). */
static void
dw_ingest_ahead_wait (DwIngestAhead *ahead)
{
  DwIngestAheadRunner *runner = ahead->runner;

  if (runner == NULL)
    return;
  g_mutex_lock (&runner->lock);
  while (runner->request == ahead)
    g_cond_wait (&runner->cond, &runner->lock);
  g_mutex_unlock (&runner->lock);
  ahead->runner = NULL;
}

void
dw_ingest_ahead_runner_free (DwIngestAheadRunner *runner)
{
  if (runner == NULL)
    return;
  if (runner->thread != NULL)
    {
      g_mutex_lock (&runner->lock);
      runner->stop = TRUE;
      g_cond_broadcast (&runner->cond);
      g_mutex_unlock (&runner->lock);
      g_thread_join (g_steal_pointer (&runner->thread));
    }
  g_mutex_clear (&runner->lock);
  g_cond_clear (&runner->cond);
  g_free (runner);
}

DwIngestAhead *
dw_ingest_ahead_new (DwLogReader *reader, int fd, const char *path)
{
  DwIngestAhead *ahead = g_new0 (DwIngestAhead, 1);

  ahead->reader = reader;
  ahead->fd = fd;
  ahead->path = path;
  ahead->events = g_array_new (FALSE, FALSE, sizeof (DwScalarPoint));
  ahead->names = dw_ingest_ahead_names_new ();
  return ahead;
}

/* The previous window's points and strings go. */
static void
dw_ingest_ahead_reset (DwIngestAhead *ahead)
{
  g_array_set_size (ahead->events, 0);
  dw_ingest_ahead_names_clear (ahead->names);
  g_clear_error (&ahead->error);
  ahead->consumed = 0;
}

void
dw_ingest_ahead_start (DwIngestAhead *ahead, gint64 pos, gsize want, gboolean at_eof,
                       DwIngestAheadRunner *runner)
{
  g_return_if_fail (ahead->runner == NULL);
  dw_ingest_ahead_reset (ahead);
  if (want > ahead->cap)
    {
      g_free (ahead->buf);
      ahead->buf = g_malloc (want);
      ahead->cap = want;
    }
  ahead->pos = pos;
  ahead->want = want;
  ahead->at_eof = at_eof;
  if (runner != NULL)
    dw_ingest_ahead_runner_push (runner, ahead);
  else
    dw_ingest_ahead_parse (ahead);
}

gboolean
dw_ingest_ahead_finish (DwIngestAhead *ahead, const guint8 **data, gsize *want, gsize *consumed,
                        GError **error)
{
  dw_ingest_ahead_wait (ahead);
  if (ahead->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&ahead->error));
      return FALSE;
    }
  *data = ahead->buf;
  *want = ahead->want;
  *consumed = ahead->consumed;
  return TRUE;
}

void
dw_ingest_ahead_replay (DwIngestAhead *ahead, FeedCtx *c)
{
  for (guint i = 0; i < ahead->events->len && c->error == NULL; i++)
    {
      const DwScalarPoint *event = &g_array_index (ahead->events, DwScalarPoint, i);

      if (event->tag != NULL)
        dw_ingest_feed_point_cb (event, c);
      else
        dw_ingest_feed_diag_cb (event->step, event->step_key, c);
    }
}

void
dw_ingest_ahead_free (DwIngestAhead *ahead)
{
  if (ahead == NULL)
    return;
  dw_ingest_ahead_wait (ahead);
  dw_ingest_ahead_reset (ahead);
  g_array_unref (ahead->events);
  dw_ingest_ahead_names_free (ahead->names);
  g_free (ahead->buf);
  g_free (ahead);
}
