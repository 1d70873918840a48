/* dw-ingester.c — files and run folders into the store (see dw-ingester.h for the rules)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
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

#include "dw-batch-private.h"
#include "dw-batch-reader.h"
#include "dw-ingester.h"
#include "dw-log-reader-private.h"
#include "dw-reader-loggers.h"
#include "dw-store-private.h"

#define DEFAULT_CHUNK (4u << 20)
#define MAX_DEPTH     16
#define SNIFF_HEAD    65536

/* Precision rank of each source (dw_store_set_source_rank): float64 text beats tfevents'
 * float32, which beats console lines (verl ≤ 0.4.1 printed "%.3f"). */
static int
format_rank (DwFormat format)
{
  switch (format)
    {
    case DW_FORMAT_VERL_JSONL:
    case DW_FORMAT_WANDB_CSV:
    case DW_FORMAT_WANDB_OFFLINE:
    case DW_FORMAT_MLFLOW_SQLITE:
    case DW_FORMAT_MLFLOW_FILE:
    case DW_FORMAT_SWANLAB:
    case DW_FORMAT_TRACKIO_SQLITE:
      return 2;
    case DW_FORMAT_TFEVENTS:
    case DW_FORMAT_WANDB_PANEL_CSV:
      return 1;
    default:
      return 0;
    }
}

static const char *
format_framework (DwFormat format)
{
  switch (format)
    {
    case DW_FORMAT_VERL_CONSOLE:
    case DW_FORMAT_VERL_JSONL:
      return "verl";
    case DW_FORMAT_SLIME_CONSOLE:
      return "slime";
    case DW_FORMAT_WANDB_CSV:
    case DW_FORMAT_WANDB_PANEL_CSV:
    case DW_FORMAT_WANDB_OFFLINE:
      return "wandb";
    case DW_FORMAT_MLFLOW_SQLITE:
    case DW_FORMAT_MLFLOW_FILE:
      return "mlflow";
    case DW_FORMAT_SWANLAB:
      return "swanlab";
    case DW_FORMAT_TRACKIO_SQLITE:
      return "trackio";
    default:
      return "unknown";
    }
}

/* tfevents files say nothing about their writer: the key names do. */
static const char *
framework_from_tag (const char *tag)
{
  static const char *const verl[]
    = { "actor/",    "critic/",   "rollout_corr/",  "mismatch/",
        "timing_s/", "training/", "global_seqlen/", "response_length/" };
  static const char *const slime[] = { "train/", "rollout/", "passrate/", "multi_turn/" };

  for (guint i = 0; i < G_N_ELEMENTS (verl); i++)
    if (g_str_has_prefix (tag, verl[i]))
      return "verl";
  for (guint i = 0; i < G_N_ELEMENTS (slime); i++)
    if (g_str_has_prefix (tag, slime[i]))
      return "slime";
  return NULL;
}

static gboolean
is_batch_format (DwFormat f)
{
  return f == DW_FORMAT_BATCH_SAFETENSORS || f == DW_FORMAT_BATCH_NPZ || f == DW_FORMAT_BATCH_NPY
         || f == DW_FORMAT_BATCH_JSONL;
}

/* ------------------------------------------------------------------------------------------ */
/* Report                                                                                      */

void
dw_ingest_report_init (DwIngestReport *report)
{
  memset (report, 0, sizeof *report);
  report->diagnostics = g_ptr_array_new_with_free_func (g_free);
  report->notes = g_ptr_array_new_with_free_func (g_free);
  report->run_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  report->incomplete = g_ptr_array_new_with_free_func (g_free);
}

void
dw_ingest_report_clear (DwIngestReport *report)
{
  g_clear_pointer (&report->diagnostics, g_ptr_array_unref);
  g_clear_pointer (&report->notes, g_ptr_array_unref);
  g_clear_pointer (&report->run_ids, g_array_unref);
  g_clear_pointer (&report->incomplete, g_ptr_array_unref);
  memset (report, 0, sizeof *report);
}

static void report_note (DwIngestReport *report, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
report_note (DwIngestReport *report, const char *fmt, ...)
{
  va_list ap;

  if (report == NULL || report->notes == NULL)
    return;
  va_start (ap, fmt);
  g_ptr_array_add (report->notes, g_strdup_vprintf (fmt, ap));
  va_end (ap);
}

static void
report_run (DwIngestReport *report, gint64 run_id)
{
  if (report == NULL || report->run_ids == NULL)
    return;
  for (guint i = 0; i < report->run_ids->len; i++)
    if (g_array_index (report->run_ids, gint64, i) == run_id)
      return;
  g_array_append_val (report->run_ids, run_id);
}

/* ------------------------------------------------------------------------------------------ */
/* Object                                                                                      */

struct _DwIngester
{
  GObject parent_instance;

  DwStore *store;
  gsize chunk;
  char *store_path; /* canonical, to skip the store's own files inside an ingested folder */
};

G_DEFINE_FINAL_TYPE (DwIngester, dw_ingester, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_STORE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
dw_ingester_finalize (GObject *object)
{
  DwIngester *self = DW_INGESTER (object);

  g_clear_object (&self->store);
  g_free (self->store_path);
  G_OBJECT_CLASS (dw_ingester_parent_class)->finalize (object);
}

static void
dw_ingester_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwIngester *self = DW_INGESTER (object);

  switch (prop_id)
    {
    case PROP_STORE:
      g_value_set_object (value, self->store);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_ingester_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  DwIngester *self = DW_INGESTER (object);

  switch (prop_id)
    {
    case PROP_STORE:
      self->store = g_value_dup_object (value);
      if (self->store != NULL)
        self->store_path = g_canonicalize_filename (dw_store_get_path (self->store), NULL);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_ingester_class_init (DwIngesterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = dw_ingester_finalize;
  object_class->get_property = dw_ingester_get_property;
  object_class->set_property = dw_ingester_set_property;

  properties[PROP_STORE]
    = g_param_spec_object ("store", NULL, NULL, DW_TYPE_STORE,
                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
dw_ingester_init (DwIngester *self)
{
  const char *env = g_getenv ("DW_INGEST_CHUNK_BYTES"); /* tests: many small transactions */

  self->chunk = DEFAULT_CHUNK;
  if (env != NULL && g_ascii_strtoull (env, NULL, 10) >= 64)
    self->chunk = (gsize)g_ascii_strtoull (env, NULL, 10);
}

DwIngester *
dw_ingester_new (DwStore *store)
{
  g_return_val_if_fail (DW_IS_STORE (store), NULL);
  return g_object_new (DW_TYPE_INGESTER, "store", store, NULL);
}

DwStore *
dw_ingester_get_store (DwIngester *self)
{
  g_return_val_if_fail (DW_IS_INGESTER (self), NULL);
  return self->store;
}

void
dw_ingester_set_chunk_size (DwIngester *self, gsize bytes)
{
  g_return_if_fail (DW_IS_INGESTER (self));
  self->chunk = MAX (bytes, 64);
}

/* ------------------------------------------------------------------------------------------ */
/* Runs                                                                                        */

static const char *const part_dirs[]
  = { "tensorboard", "tensorboard_log", "tb", "batches", "rollout_batches", "logs", "events" };

static gboolean
is_part_dir (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (part_dirs); i++)
    if (g_ascii_strcasecmp (name, part_dirs[i]) == 0)
      return TRUE;
  return FALSE;
}

char *
dw_ingest_run_root_for_file (const char *path, DwFormat format)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autofree char *dir = NULL;

  if (format == DW_FORMAT_MLFLOW_FILE)
    {
      char *run = dw_mlflow_file_run_dir (abs);
      return run != NULL ? run : g_steal_pointer (&abs);
    }
  if (format != DW_FORMAT_TFEVENTS && !is_batch_format (format))
    return g_steal_pointer (&abs);
  dir = g_path_get_dirname (abs);
  for (int i = 0; i < MAX_DEPTH; i++)
    {
      g_autofree char *base = g_path_get_basename (dir);
      g_autofree char *parent = g_path_get_dirname (dir);

      if (!is_part_dir (base) || g_str_equal (parent, dir))
        break;
      g_free (dir);
      dir = g_steal_pointer (&parent);
    }
  return g_steal_pointer (&dir);
}

/* SwanLab's run folder swanlog/run-<time>-<id>/ holds run-<id>.swanlab: its experiment name */
static char *
swanlab_dir_run_name (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, "run-") && g_str_has_suffix (name, ".swanlab"))
      {
        g_autofree char *path = g_build_filename (dir, name, NULL);
        return dw_swanlab_run_name (path);
      }
  return NULL;
}

char *
dw_ingest_run_name (const char *run_root)
{
  g_autofree char *base = g_path_get_basename (run_root);
  char *dot;

  if (g_file_test (run_root, G_FILE_TEST_IS_DIR))
    {
      /* an MLflow file-store run folder is named by its run id: its meta.yaml has the name */
      char *named
        = dw_mlflow_file_is_run_dir (run_root) ? dw_mlflow_file_run_name (run_root) : NULL;
      if (named == NULL)
        named = swanlab_dir_run_name (run_root);
      return named != NULL ? named : g_steal_pointer (&base);
    }
  {
    /* a SwanLab run file (run-<id>.swanlab) names its experiment in its first record */
    char *named = dw_swanlab_run_name (run_root);
    if (named != NULL)
      return named;
  }
  dot = strrchr (base, '.');
  if (dot != NULL && dot != base)
    *dot = '\0';
  return g_steal_pointer (&base);
}

/* The run of @run_root: created when needed, inside the caller's transaction. A run of the same
 * name that came from elsewhere is not merged with: "parent/name" (then "…/name (N)"). */
static gint64
ensure_run_for_root (DwIngester *self, const char *run_root, const char *framework, GError **error)
{
  g_autofree char *name = dw_ingest_run_name (run_root);
  g_autoptr (GPtrArray) runs = dw_store_list_runs (self->store, error);

  if (runs == NULL)
    return 0;
  for (int attempt = 0; attempt < 100; attempt++)
    {
      DwRunInfo *same = NULL;

      for (guint i = 0; i < runs->len; i++)
        {
          DwRunInfo *r = runs->pdata[i];
          if (g_str_equal (r->name, name))
            same = r;
        }
      if (same == NULL || same->source == NULL || g_str_equal (same->source, run_root))
        break;
      if (attempt == 0)
        {
          g_autofree char *parent = g_path_get_dirname (run_root);
          g_autofree char *pbase = g_path_get_basename (parent);
          char *n = g_strdup_printf ("%s/%s", pbase, name);
          g_free (name);
          name = n;
        }
      else
        {
          g_autofree char *base = dw_ingest_run_name (run_root);
          g_autofree char *parent = g_path_get_dirname (run_root);
          g_autofree char *pbase = g_path_get_basename (parent);
          char *n = g_strdup_printf ("%s/%s (%d)", pbase, base, attempt + 1);
          g_free (name);
          name = n;
        }
    }
  return dw_store_ensure_run (self->store, name, framework, run_root, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Reading one file                                                                            */

typedef struct
{
  DwIngester *self;
  DwIngestReport *report;
  const char *path;
  gint64 run_id;
  GHashTable *tags; /* tag name → gint64 id, valid inside the current transaction */
  GError *error;    /* first store error: later callbacks do nothing */
  guint64 n_points;
  gint64 first_step; /* of the first point, G_MININT64 before any */
  gint64 max_step;
  const char *framework; /* guessed from tag names (tfevents) */
  GArray *pending;       /* Pending points of the chunk, written sorted by flush_points() */
} FeedCtx;

typedef struct
{
  gint64 tag_id, step;
  double wall_time, value;
  guint seq; /* arrival order: the later write of a (tag, step) wins */
} Pending;

static int
cmp_pending (gconstpointer a, gconstpointer b)
{
  const Pending *x = a, *y = b;

  if (x->tag_id != y->tag_id)
    return x->tag_id < y->tag_id ? -1 : 1;
  if (x->step != y->step)
    return x->step < y->step ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes the chunk's points in (tag, step) order: each insert then lands next to the previous
 * one in the points b-tree, several times faster than the logged order (all tags of a step). */
static void
flush_points (FeedCtx *c)
{
  if (c->error == NULL && c->pending->len > 0)
    {
      DwPointRow *rows = (DwPointRow *)(void *)c->pending->data;

      g_array_sort (c->pending, cmp_pending);
      /* compact in place: a DwPointRow is a Pending without its seq */
      for (guint i = 0; i < c->pending->len; i++)
        {
          const Pending p = g_array_index (c->pending, Pending, i);
          rows[i] = (DwPointRow){ p.tag_id, p.step, p.wall_time, p.value };
        }
      dw_store_put_points (c->self->store, c->run_id, rows, c->pending->len, &c->error);
    }
  g_array_set_size (c->pending, 0);
}

static gint64
tag_id (FeedCtx *c, const char *tag, const char *step_key)
{
  gint64 *id = g_hash_table_lookup (c->tags, tag);
  gint64 v;

  if (id != NULL)
    return *id;
  v = dw_store_ensure_tag (c->self->store, c->run_id, tag, step_key, &c->error);
  if (v == 0)
    return 0;
  if (c->framework == NULL)
    c->framework = framework_from_tag (tag);
  g_hash_table_insert (c->tags, g_strdup (tag), g_memdup2 (&v, sizeof v));
  return v;
}

static void
on_point (const DwScalarPoint *p, gpointer user_data)
{
  FeedCtx *c = user_data;
  gint64 id;

  if (G_UNLIKELY (c->error != NULL))
    return;
  id = tag_id (c, p->tag, p->step_key);
  if (G_UNLIKELY (id == 0))
    return;
  {
    Pending pp = { id, p->step, p->wall_time, p->value, c->pending->len };
    g_array_append_val (c->pending, pp);
  }
  if (c->first_step == G_MININT64)
    c->first_step = p->step;
  if (p->step > c->max_step)
    c->max_step = p->step;
  c->n_points++;
}

/* Reader messages read "PATH: byte offset N: message": the store keeps path and offset in
 * their own columns. */
static const char *
strip_place (const char *message, const char *path)
{
  const char *m = message;
  gsize pl = strlen (path);

  if (strncmp (m, path, pl) == 0 && m[pl] == ':' && m[pl + 1] == ' ')
    {
      m += pl + 2;
      if (g_str_has_prefix (m, "byte offset "))
        {
          const char *colon = strstr (m, ": ");
          if (colon != NULL)
            m = colon + 2;
        }
    }
  return m;
}

static void
on_diag (goffset offset, const char *message, gpointer user_data)
{
  FeedCtx *c = user_data;

  if (c->error != NULL)
    return;
  if (!dw_store_add_diagnostic (c->self->store, c->run_id, c->path, offset,
                                strip_place (message, c->path), &c->error))
    return;
  if (c->report != NULL)
    g_ptr_array_add (c->report->diagnostics, g_strdup (message));
}

static gboolean
read_at (int fd, const char *path, goffset offset, guint8 *buf, gsize n, GError **error)
{
  gsize done = 0;

  while (done < n)
    {
      ssize_t r = pread (fd, buf + done, n - done, (off_t)(offset + (goffset)done));
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        {
          int saved = errno;
          /* PARTIAL_INPUT: the file shrank under us (a writer truncating it) */
          g_set_error (error, G_IO_ERROR,
                       r < 0 ? g_io_error_from_errno (saved) : G_IO_ERROR_PARTIAL_INPUT,
                       _ ("%s: cannot read at byte offset %" PRId64 ": %s"), path,
                       (gint64)(offset + (goffset)done),
                       r < 0 ? g_strerror (saved) : _ ("the file shrank while being read"));
          return FALSE;
        }
      done += (gsize)r;
    }
  return TRUE;
}

/* CRC-32C of [0, len) of the file. */
static gboolean
prefix_crc (int fd, const char *path, gint64 len, guint32 *crc, GError **error)
{
  g_autofree guint8 *buf = g_malloc (MAX (len, 1));

  if (!read_at (fd, path, 0, buf, (gsize)len, error))
    return FALSE;
  *crc = dw_crc32c (0, buf, (gsize)len);
  return TRUE;
}

static void
fill_identity (DwFileRecord *rec, const struct stat *st)
{
  rec->dev = (guint64)st->st_dev;
  rec->inode = (guint64)st->st_ino;
  rec->size = (gint64)st->st_size;
  rec->mtime_us = (gint64)st->st_mtim.tv_sec * G_USEC_PER_SEC + st->st_mtim.tv_nsec / 1000;
}

static gboolean
same_identity (const DwFileRecord *rec, const struct stat *st)
{
  DwFileRecord now = { 0 };

  fill_identity (&now, st);
  return rec->dev == now.dev && rec->inode == now.inode && rec->size == now.size
         && rec->mtime_us == now.mtime_us;
}

/* Largest step of the other files of this run in this format (restart detection). */
static gint64
others_max_step (DwIngester *self, gint64 run_id, int format, const char *path, GError **error)
{
  g_autoptr (GPtrArray) files = dw_store_list_files (self->store, error);
  gint64 m = G_MININT64;

  if (files == NULL)
    return G_MININT64;
  for (guint i = 0; i < files->len; i++)
    {
      DwFileRecord *f = files->pdata[i];
      if (f->run_id == run_id && f->format == format && !g_str_equal (f->path, path)
          && f->max_step > m)
        m = f->max_step;
    }
  return m;
}

/* tfevents: the framework is known once key names were seen ("unknown" is upgraded only). */
static gboolean
upgrade_framework (DwIngester *self, gint64 run_id, const char *framework, GError **error)
{
  g_autoptr (DwRunInfo) run = dw_store_get_run (self->store, run_id, error);

  if (run == NULL)
    return FALSE;
  if (!g_str_equal (run->framework, "unknown"))
    return TRUE;
  return dw_store_ensure_run (self->store, run->name, framework, NULL, error) != 0;
}

static gboolean
fail_tx (DwIngester *self, GError **error, GError *err)
{
  dw_store_rollback (self->store);
  g_propagate_error (error, err);
  return FALSE;
}

/* A byte-stream log file from its stored offset on. */
static gboolean
ingest_log (DwIngester *self, const char *path, int fd, const struct stat *st, DwFormat format,
            DwFileRecord *rec, const char *run_root, DwIngestReport *report, GError **error)
{
  gint64 size = (gint64)st->st_size;
  gint64 pos, restart_ref = G_MININT64;
  gboolean rewritten = FALSE;
  g_autoptr (DwLogReader) reader = NULL;
  g_autoptr (GHashTable) tags = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GArray) pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  g_autofree guint8 *buf = NULL;
  gsize window = self->chunk, cap = 0;
  GError *err = NULL;

  /* Truncated or rewritten since last time? Then read it all again. */
  if (rec->id != 0 && rec->offset > 0)
    {
      if (dw_log_reader_file_was_truncated (rec->offset, size))
        rewritten = TRUE;
      else if (rec->prefix_len > 0)
        {
          guint32 crc;
          if (!prefix_crc (fd, path, rec->prefix_len, &crc, error))
            return FALSE;
          rewritten = crc != rec->prefix_crc;
        }
    }
  if (rewritten)
    {
      report_note (report,
                   _ ("%s: truncated or rewritten since the last ingest (a restarted run): read "
                      "again from the start, newer values replace older ones of the same step"),
                   path);
      restart_ref = rec->max_step;
      rec->offset = 0;
      rec->prefix_len = 0;
      rec->prefix_crc = 0;
      rec->max_step = G_MININT64;
    }
  pos = rec->offset;

  reader = dw_log_reader_new (format, path);
  g_assert (reader != NULL);
  if (pos > 0 && (format == DW_FORMAT_WANDB_CSV || format == DW_FORMAT_WANDB_PANEL_CSV))
    {
      /* CSV readers learn the columns from the header: prime with what was read before */
      g_autofree guint8 *head = g_malloc ((gsize)pos);
      if (!read_at (fd, path, 0, head, (gsize)pos, error))
        return FALSE;
      dw_log_reader_feed (reader, 0, head, (gsize)pos, FALSE, NULL, NULL, NULL);
    }

  while (pos < size)
    {
      gsize want = (gsize)MIN ((gint64)window, size - pos);
      gboolean at_eof = pos + (gint64)want == size;
      gsize consumed;
      gboolean new_run;
      FeedCtx c
        = { self, report, path, rec->run_id, tags, NULL, 0, G_MININT64, G_MININT64, NULL, pending };

      if (want > cap)
        {
          g_free (buf);
          buf = g_malloc (want);
          cap = want;
        }
      if (!read_at (fd, path, pos, buf, want, error))
        return FALSE;

      if (!dw_store_begin (self->store, error))
        return FALSE;
      g_hash_table_remove_all (tags);
      dw_store_set_source_rank (self->store, format_rank (format));
      new_run = rec->run_id == 0;
      if (new_run)
        {
          rec->run_id = ensure_run_for_root (self, run_root, format_framework (format), &err);
          if (rec->run_id == 0)
            return fail_tx (self, error, err);
          c.run_id = rec->run_id;
        }
      consumed = dw_log_reader_feed (reader, pos, buf, want, at_eof, on_point, on_diag, &c);
      flush_points (&c);
      if (c.error != NULL)
        return fail_tx (self, error, c.error);
      if (consumed == 0)
        {
          dw_store_rollback (self->store);
          if (new_run)
            rec->run_id = 0; /* its creation was rolled back too */
          if (at_eof)
            break;
          window *= 2; /* one record longer than the window: read it whole */
          continue;
        }

      /* restart: a rewritten file, or a new file whose steps go back into another's */
      if (c.first_step != G_MININT64 && pos == 0)
        {
          gint64 ref = restart_ref;
          if (!rewritten)
            {
              ref = others_max_step (self, rec->run_id, format, path, &err);
              if (err != NULL)
                return fail_tx (self, error, err);
            }
          if (ref != G_MININT64 && c.first_step <= ref
              && !dw_store_add_restart (self->store, rec->run_id, c.first_step, path, &err))
            return fail_tx (self, error, err);
        }
      if (c.framework != NULL && !upgrade_framework (self, rec->run_id, c.framework, &err))
        return fail_tx (self, error, err);

      if (rec->prefix_len < DW_INGEST_PREFIX_MAX && rec->prefix_len == pos)
        {
          gint64 add = MIN ((gint64)consumed, DW_INGEST_PREFIX_MAX - rec->prefix_len);
          rec->prefix_crc = dw_crc32c (rec->prefix_crc, buf, (gsize)add);
          rec->prefix_len += add;
        }
      rec->offset = pos + (gint64)consumed;
      rec->format = format;
      fill_identity (rec, st);
      /* the size seen so far is what was consumed: killed before the end, the next ingest must
       * not take the file for unchanged */
      rec->size = rec->offset;
      if (c.max_step > rec->max_step)
        rec->max_step = c.max_step;
      if (!dw_store_put_file (self->store, rec, &err) || !dw_store_commit (self->store, &err))
        return fail_tx (self, error, err);

      pos += (gint64)consumed;
      if (report != NULL)
        {
          report->n_points += c.n_points;
          report->n_bytes += consumed;
        }
      window = self->chunk;
    }

  if (pos < size)
    report_note (report,
                 _ ("%s: the last %" PRId64 " bytes (from byte offset %" PRId64
                    ") are not a complete line or record yet; they are read once the file grows"),
                 path, size - pos, pos);
  if (rec->id == 0 || !same_identity (rec, st))
    {
      /* a partial tail (or an empty file): remember that it was seen, so an unchanged file is
       * not read again */
      if (!dw_store_begin (self->store, error))
        return FALSE;
      if (rec->run_id == 0)
        {
          rec->run_id = ensure_run_for_root (self, run_root, format_framework (format), &err);
          if (rec->run_id == 0)
            return fail_tx (self, error, err);
        }
      rec->format = format;
      fill_identity (rec, st);
      if (!dw_store_put_file (self->store, rec, &err) || !dw_store_commit (self->store, &err))
        return fail_tx (self, error, err);
    }
  return TRUE;
}

/* ---- databases of several runs (trackio, MLflow's SQL store) ----------------------------- */

#define DB_READ_BUDGET_MS 20000

typedef struct
{
  FeedCtx *c;
  const char *path;
  const char *framework;
  char *cur_key;       /* run key of c->run_id */
  GHashTable *run_ids; /* run key → gint64 run id */
  gint64 first_run;
} MultiCtx;

/* The run @run_key of the database @m->path: found by its source "<db>#<key>", else created as
 * @run_name ("<group>/<run_name>", then "… (N)" when that name is taken by another source). */
static gint64
ensure_db_run (DwIngester *self, MultiCtx *m, const char *run_key, const char *run_name,
               const char *group, GError **error)
{
  g_autofree char *source = g_strdup_printf ("%s#%s", m->path, run_key);
  g_autoptr (GPtrArray) runs = dw_store_list_runs (self->store, error);
  g_autofree char *name = g_strdup (run_name[0] != '\0' ? run_name : run_key);

  if (runs == NULL)
    return 0;
  for (guint i = 0; i < runs->len; i++)
    {
      DwRunInfo *r = runs->pdata[i];
      if (g_strcmp0 (r->source, source) == 0)
        return r->id;
    }
  for (int attempt = 0; attempt < 100; attempt++)
    {
      gboolean taken = FALSE;
      for (guint i = 0; i < runs->len && !taken; i++)
        taken = g_str_equal (((DwRunInfo *)runs->pdata[i])->name, name);
      if (!taken)
        break;
      g_free (name);
      name = attempt == 0 ? g_strdup_printf ("%s/%s", group, run_name)
                          : g_strdup_printf ("%s/%s (%d)", group, run_name, attempt + 1);
    }
  return dw_store_ensure_run (self->store, name, m->framework, source, error);
}

static void
on_run_point (const char *run_key, const char *run_name, const char *group, const DwScalarPoint *p,
              gpointer user_data)
{
  MultiCtx *m = user_data;
  FeedCtx *c = m->c;

  if (G_UNLIKELY (c->error != NULL))
    return;
  if (G_UNLIKELY (m->cur_key == NULL || strcmp (m->cur_key, run_key) != 0))
    {
      gint64 *known = g_hash_table_lookup (m->run_ids, run_key);
      gint64 id
        = known != NULL ? *known : ensure_db_run (c->self, m, run_key, run_name, group, &c->error);
      if (id == 0)
        return;
      flush_points (c); /* the points so far belong to the previous run */
      g_hash_table_remove_all (c->tags);
      c->run_id = id;
      if (known == NULL)
        g_hash_table_insert (m->run_ids, g_strdup (run_key), g_memdup2 (&id, sizeof id));
      if (m->first_run == 0)
        m->first_run = id;
      report_run (c->report, id);
      g_free (m->cur_key);
      m->cur_key = g_strdup (run_key);
    }
  on_point (p, c);
}

static void
on_db_diag (goffset offset, const char *message, gpointer user_data)
{
  MultiCtx *m = user_data;

  if (m->c->run_id != 0)
    on_diag (offset, message, m->c);
  else if (m->c->report != NULL)
    g_ptr_array_add (m->c->report->diagnostics, g_strdup (message)); /* no run to keep it in */
}

/* A trackio project database or an MLflow SQL store: rows after the stored id, one Driftwatch
 * run per run of the database. */
static gboolean
ingest_run_db (DwIngester *self, const char *path, const struct stat *st, DwFormat format,
               DwFileRecord *rec, DwIngestReport *report, GError **error)
{
  g_autoptr (GHashTable) tags = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) run_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GArray) pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  FeedCtx c = { self, report, path, 0, tags, NULL, 0, G_MININT64, G_MININT64, NULL, pending };
  MultiCtx m = { &c, path, format_framework (format), NULL, run_ids, 0 };
  gint64 last;
  GError *err = NULL;
  gboolean read_ok;

  /* a database deleted and created again (a project started over) numbers its rows from 1
   * again: read it from its first row, newer values replace those of the same steps */
  if (rec->id != 0 && rec->offset > 0
      && (rec->inode != (guint64)st->st_ino || rec->dev != (guint64)st->st_dev
          || dw_sqlite_max_rowid (path, "metrics") < rec->offset))
    {
      report_note (report,
                   _ ("%s: a new database in place of the one read before: read from its "
                      "first row"),
                   path);
      rec->offset = 0;
    }
  last = rec->offset;
  if (!dw_store_begin (self->store, error))
    return FALSE;
  dw_store_set_source_rank (self->store, format_rank (format));
  read_ok = format == DW_FORMAT_TRACKIO_SQLITE
              ? dw_trackio_read (path, rec->offset, DB_READ_BUDGET_MS, on_run_point, on_db_diag, &m,
                                 &last, &err)
              : dw_mlflow_read_runs (path, rec->offset, DB_READ_BUDGET_MS, on_run_point, on_db_diag,
                                     &m, &last, &err);
  flush_points (&c);
  g_free (m.cur_key);
  if (!read_ok)
    {
      g_clear_error (&c.error);
      on_db_diag (0, err->message, &m);
      g_clear_error (&err);
    }
  if (c.error != NULL)
    return fail_tx (self, error, c.error);
  if (rec->run_id == 0)
    rec->run_id = m.first_run;
  if (rec->run_id == 0)
    {
      /* no metric row yet: nothing to remember, looked at again when it changes */
      dw_store_rollback (self->store);
      report_note (report, _ ("%s: no metric rows yet"), path);
      return TRUE;
    }
  rec->offset = last;
  rec->format = format;
  fill_identity (rec, st);
  if (c.max_step > rec->max_step)
    rec->max_step = c.max_step;
  if (!dw_store_put_file (self->store, rec, &err) || !dw_store_commit (self->store, &err))
    return fail_tx (self, error, err);
  if (report != NULL)
    report->n_points += c.n_points;
  return TRUE;
}

/* "X.old_log_prob.npy" of a sibling set "X.<tensor>.npy" is the batch; the other members are
 * part of it. NULL for a lone array. */
static char *
npy_set_prefix (const char *path)
{
  static const char *const required[] = { "old_log_prob", "rollout_log_prob", "response_mask" };
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  char *dot;

  if (!g_str_has_suffix (base, ".npy"))
    return NULL;
  base[strlen (base) - 4] = '\0';
  dot = strrchr (base, '.');
  if (dot == NULL)
    return NULL;
  *dot = '\0';
  for (guint i = 0; i < G_N_ELEMENTS (required); i++)
    {
      g_autofree char *n = g_strdup_printf ("%s.%s.npy", base, required[i]);
      g_autofree char *p = g_build_filename (dir, n, NULL);
      if (!g_file_test (p, G_FILE_TEST_IS_REGULAR))
        return NULL;
    }
  return g_build_filename (dir, base, NULL);
}

static gboolean
ingest_batch (DwIngester *self, const char *path, int fd, const struct stat *st, DwFormat format,
              DwFileRecord *rec, const char *run_root, DwIngestReport *report, GError **error)
{
  g_autoptr (GError) berr = NULL;
  g_autoptr (DwBatch) batch = NULL;
  gint64 plen = MIN ((gint64)st->st_size, DW_INGEST_PREFIX_MAX);
  guint32 crc = 0;
  GError *err = NULL;

  if (format == DW_FORMAT_BATCH_NPY)
    {
      g_autofree char *prefix = npy_set_prefix (path);
      if (prefix == NULL)
        {
          report_note (report,
                       _ ("%s: a single .npy array, not a batch (X.old_log_prob.npy needs "
                          "X.rollout_log_prob.npy and X.response_mask.npy beside it): skipped"),
                       path);
          return TRUE;
        }
      if (!g_str_has_suffix (path, ".old_log_prob.npy"))
        return TRUE; /* read with its set's old_log_prob member */
    }

  batch = dw_batch_read_file (path, &berr);
  if (batch == NULL && g_error_matches (berr, DW_BATCH_ERROR, DW_BATCH_ERROR_TRUNCATED))
    {
      /* maybe still being written: not remembered, so the next ingest tries again */
      report_note (report, _ ("%s (incomplete, read again on the next ingest)"), berr->message);
      if (report != NULL && report->incomplete != NULL)
        g_ptr_array_add (report->incomplete, g_strdup (berr->message));
      return TRUE;
    }
  if (!prefix_crc (fd, path, plen, &crc, error))
    return FALSE;

  if (!dw_store_begin (self->store, error))
    return FALSE;
  if (rec->run_id == 0)
    {
      rec->run_id = ensure_run_for_root (self, run_root, "unknown", &err);
      if (rec->run_id == 0)
        return fail_tx (self, error, err);
    }
  if (batch != NULL && batch->step < 0)
    {
      g_set_error (&berr, DW_BATCH_ERROR, DW_BATCH_ERROR_CORRUPT,
                   _ ("%s: no step in the metadata nor in the file name (step_000123.*)"), path);
      g_clear_pointer (&batch, dw_batch_free);
    }
  if (batch != NULL)
    {
      if (!dw_store_put_batch (self->store, rec->run_id, batch->step, batch, path, &err))
        return fail_tx (self, error, err);
      rec->max_step = batch->step;
    }
  else
    {
      if (!dw_store_add_diagnostic (self->store, rec->run_id, path, 0, berr->message, &err))
        return fail_tx (self, error, err);
    }
  rec->format = format;
  rec->offset = (gint64)st->st_size;
  rec->prefix_len = plen;
  rec->prefix_crc = crc;
  fill_identity (rec, st);
  if (!dw_store_put_file (self->store, rec, &err) || !dw_store_commit (self->store, &err))
    return fail_tx (self, error, err);

  if (report != NULL)
    {
      if (batch != NULL)
        {
          report->n_batches++;
          for (gsize i = 0; i < batch->rows * batch->cols; i++)
            report->n_tokens += dw_batch_mask_value (batch, i) != 0.0;
        }
      else
        g_ptr_array_add (report->diagnostics, g_strdup (berr->message));
    }
  return TRUE;
}

static gboolean
is_store_file (DwIngester *self, const char *abs)
{
  gsize n = strlen (self->store_path);

  if (strncmp (abs, self->store_path, n) != 0)
    return FALSE;
  return abs[n] == '\0' || g_str_equal (abs + n, "-wal") || g_str_equal (abs + n, "-shm")
         || g_str_equal (abs + n, "-journal");
}

/* Sniffs @path (already open as @fd). */
static DwFormat
sniff_fd (int fd, const char *path)
{
  g_autofree guint8 *head = g_malloc (SNIFF_HEAD);
  ssize_t n;

  do
    n = pread (fd, head, SNIFF_HEAD, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return DW_FORMAT_UNKNOWN;
  return dw_format_sniff (path, head, (gsize)n);
}

/* One file; @run_root NULL → stored run or the single-file rule. @explicit: named by the user
 * (an unknown format is then worth a diagnostic, not only a note). */
static gboolean
ingest_one (DwIngester *self, const char *path_in, const char *run_root, gboolean explicit,
            DwIngestReport *report, GError **error)
{
  g_autofree char *path = g_canonicalize_filename (path_in, NULL);
  g_autofree char *root = NULL;
  g_autoptr (DwFileRecord) rec = NULL;
  GError *err = NULL;
  struct stat st;
  DwFormat format;
  gboolean ok;
  int fd;

  if (is_store_file (self, path))
    return TRUE;
  rec = dw_store_get_file (self->store, path, &err);
  if (err != NULL)
    {
      g_propagate_error (error, err);
      return FALSE;
    }
  fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0 || fstat (fd, &st) != 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      if (explicit)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _ ("%s: %s"), path,
                       g_strerror (saved));
          return FALSE;
        }
      report_note (report, _ ("%s: cannot open: %s"), path, g_strerror (saved));
      return TRUE;
    }
  /* a database in WAL mode changes in <db>-wal only: always asked for rows after the last */
  if (rec != NULL && same_identity (rec, &st) && rec->format != DW_FORMAT_TRACKIO_SQLITE
      && rec->format != DW_FORMAT_MLFLOW_SQLITE)
    {
      close (fd);
      if (report != NULL)
        report->n_files++;
      return TRUE; /* unchanged since the last ingest */
    }
  format = rec != NULL ? (DwFormat)rec->format : sniff_fd (fd, path);
  if (format == DW_FORMAT_UNKNOWN)
    {
      close (fd);
      if (explicit && report != NULL)
        /* named by the user: bad input, not just a file lying around in a run folder */
        g_ptr_array_add (report->diagnostics,
                         g_strdup_printf (_ ("%s: not a recognised log or batch format "
                                             "(verl/slime console, verl JSONL, tfevents, W&B "
                                             "CSV or .wandb, MLflow, rollout batch): skipped"),
                                          path));
      else
        report_note (report, _ ("%s: not a recognised log or batch format: skipped"), path);
      return TRUE;
    }
  if (rec == NULL)
    {
      rec = g_new0 (DwFileRecord, 1);
      rec->path = g_strdup (path);
      rec->format = format;
      rec->max_step = G_MININT64;
    }
  if (rec->run_id == 0)
    root = run_root != NULL ? g_canonicalize_filename (run_root, NULL)
                            : dw_ingest_run_root_for_file (path, format);
  if (format == DW_FORMAT_MLFLOW_SQLITE || format == DW_FORMAT_TRACKIO_SQLITE)
    ok = ingest_run_db (self, path, &st, format, rec, report, &err);
  else if (is_batch_format (format))
    ok = ingest_batch (self, path, fd, &st, format, rec, root, report, &err);
  else
    ok = ingest_log (self, path, fd, &st, format, rec, root, report, &err);
  close (fd);
  if (!ok)
    {
      if (!g_error_matches (err, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT))
        {
          g_propagate_error (error, err);
          return FALSE;
        }
      /* truncated while being read (a restarting writer): what was committed is consistent;
       * the next ingest sees the shorter file and reads it again */
      report_note (report, _ ("%s (read again on the next ingest)"), err->message);
      g_error_free (err);
      return TRUE;
    }
  if (ok && rec->id != 0 && report != NULL)
    {
      report->n_files++;
      report->n_files_read++;
      report_run (report, rec->run_id);
    }
  return ok;
}

gboolean
dw_ingester_ingest_file (DwIngester *self, const char *path, const char *run_root,
                         DwIngestReport *report, GError **error)
{
  g_return_val_if_fail (DW_IS_INGESTER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  return ingest_one (self, path, run_root, TRUE, report, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Folders                                                                                     */

typedef struct
{
  GPtrArray *files; /* char* */
  GPtrArray *dirs;  /* char* */
} Listing;

static void
list_dir (const char *dir, Listing *l)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  l->files = g_ptr_array_new_with_free_func (g_free);
  l->dirs = g_ptr_array_new_with_free_func (g_free);
  if (d == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = NULL;
      if (name[0] == '.')
        continue;
      p = g_build_filename (dir, name, NULL);
      if (g_file_test (p, G_FILE_TEST_IS_SYMLINK) && g_file_test (p, G_FILE_TEST_IS_DIR))
        continue; /* no loops */
      if (g_file_test (p, G_FILE_TEST_IS_DIR))
        g_ptr_array_add (l->dirs, g_steal_pointer (&p));
      else if (g_file_test (p, G_FILE_TEST_IS_REGULAR))
        g_ptr_array_add (l->files, g_steal_pointer (&p));
    }
  g_ptr_array_sort (l->files, (GCompareFunc)g_strcmp0);
  g_ptr_array_sort (l->dirs, (GCompareFunc)g_strcmp0);
}

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

static void
listing_clear (Listing *l)
{
  g_clear_pointer (&l->files, g_ptr_array_unref);
  g_clear_pointer (&l->dirs, g_ptr_array_unref);
}

/* Is @path a file the ingester reads (stored already, or recognised by content)? */
static gboolean
is_data_file (DwIngester *self, const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autoptr (DwFileRecord) rec = NULL;
  DwFormat f;
  int fd;

  if (is_store_file (self, abs))
    return FALSE;
  rec = dw_store_get_file (self->store, abs, NULL);
  if (rec != NULL)
    return TRUE;
  fd = g_open (abs, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return FALSE;
  f = sniff_fd (fd, abs);
  close (fd);
  return f != DW_FORMAT_UNKNOWN;
}

static gboolean
has_data (DwIngester *self, const char *dir, int depth)
{
  Listing l;
  gboolean found = FALSE;

  if (depth > MAX_DEPTH)
    return FALSE;
  list_dir (dir, &l);
  for (guint i = 0; i < l.files->len && !found; i++)
    found = is_data_file (self, l.files->pdata[i]);
  for (guint i = 0; i < l.dirs->len && !found; i++)
    found = has_data (self, l.dirs->pdata[i], depth + 1);
  listing_clear (&l);
  return found;
}

/* Every regular file under @dir, sorted (paths order = ingest order: tfevents names carry the
 * creation time, so a restart's newer file comes later). */
static void
collect_files (const char *dir, GPtrArray *out, int depth)
{
  Listing l;

  if (depth > MAX_DEPTH)
    return;
  list_dir (dir, &l);
  for (guint i = 0; i < l.files->len; i++)
    g_ptr_array_add (out, g_strdup (l.files->pdata[i]));
  for (guint i = 0; i < l.dirs->len; i++)
    collect_files (l.dirs->pdata[i], out, depth + 1);
  listing_clear (&l);
}

/* Every file under @tree, into the run of @root. */
static gboolean
ingest_tree (DwIngester *self, const char *root, const char *tree, DwIngestReport *report,
             GError **error)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);

  collect_files (tree, files, 0);
  g_ptr_array_sort (files, cmp_str);
  for (guint i = 0; i < files->len; i++)
    if (!ingest_one (self, files->pdata[i], root, FALSE, report, error))
      return FALSE;
  return TRUE;
}

static gboolean
ingest_dir (DwIngester *self, const char *dir, DwIngestReport *report, int depth, GError **error)
{
  Listing l;
  gboolean direct = FALSE, all_parts = TRUE, any = FALSE, ok = TRUE;
  g_autoptr (GPtrArray) with_data = g_ptr_array_new ();

  if (depth > MAX_DEPTH)
    return TRUE;
  list_dir (dir, &l);
  for (guint i = 0; i < l.files->len && !direct; i++)
    direct = is_data_file (self, l.files->pdata[i]);
  direct = direct || dw_mlflow_file_is_run_dir (dir); /* its metrics/ folder is part of it */
  if (!direct)
    for (guint i = 0; i < l.dirs->len; i++)
      if (has_data (self, l.dirs->pdata[i], depth + 1))
        {
          g_autofree char *base = g_path_get_basename (l.dirs->pdata[i]);
          g_ptr_array_add (with_data, l.dirs->pdata[i]);
          any = TRUE;
          all_parts = all_parts && is_part_dir (base);
        }

  if (direct || (any && all_parts))
    ok = ingest_tree (self, dir, dir, report, error);
  else if (!any)
    report_note (report, _ ("%s: no log or batch file found"), dir);
  else
    {
      /* a folder of runs: part folders here would be orphans, give them to this folder */
      for (guint i = 0; i < with_data->len && ok; i++)
        {
          const char *sub = with_data->pdata[i];
          g_autofree char *base = g_path_get_basename (sub);
          if (is_part_dir (base))
            ok = ingest_tree (self, dir, sub, report, error);
          else
            ok = ingest_dir (self, sub, report, depth + 1, error);
        }
    }
  listing_clear (&l);
  return ok;
}

gboolean
dw_ingester_ingest_path (DwIngester *self, const char *path, DwIngestReport *report, GError **error)
{
  g_autofree char *abs = NULL;

  g_return_val_if_fail (DW_IS_INGESTER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  abs = g_canonicalize_filename (path, NULL);
  if (g_file_test (abs, G_FILE_TEST_IS_DIR))
    return ingest_dir (self, abs, report, 0, error);
  if (!g_file_test (abs, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _ ("%s: no such file or folder"), path);
      return FALSE;
    }
  return ingest_one (self, abs, NULL, TRUE, report, error);
}
