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
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>

#include "dw-batch-reader.h"
#include "dw-ingester.h"
#include "dw-log-reader-private.h"
#include "dw-log-sniff.h"
#include "dw-reader-loggers.h"
#include "dw-run-meta.h"
#include "dw-store-writer.h"

#define DEFAULT_CHUNK (4u << 20)
#define MAX_DEPTH     16
#define SNIFF_HEAD    65536

/* Precision rank of each source (dw_store_set_source_rank), judged by how the value was written:
 * float64 text (verl JSONL, W&B, MLflow, and the console's repr since verl 0.5) beats tfevents'
 * float32, which beats verl ≤ 0.4.1's "%.3f" console lines (DW_PRECISION_3F, rank 0). */
static int
format_rank (DwFormat format)
{
  switch (format)
    {
    case DW_FORMAT_VERL_CONSOLE:
    case DW_FORMAT_SLIME_CONSOLE:
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
         || f == DW_FORMAT_BATCH_JSONL || f == DW_FORMAT_BATCH_TORCH;
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
  char *store_path;     /* canonical, to skip the store's own files inside an ingested folder */
  GHashTable *sniffers; /* path → DwSniffer*: files not recognised yet, examined further as
                         * they grow */
  gint64 sniff_budget_us;
  char *run_name; /* --name: every file goes to this run */
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
  g_clear_pointer (&self->sniffers, g_hash_table_unref);
  g_free (self->run_name);
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
  self->chunk = DEFAULT_CHUNK;
  self->sniffers
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)dw_sniffer_free);
  self->sniff_budget_us = DW_SNIFF_BUDGET_US;
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
dw_ingester_set_run_name (DwIngester *self, const char *name)
{
  g_return_if_fail (DW_IS_INGESTER (self));
  g_free (self->run_name);
  self->run_name = g_strdup (name);
}

void
dw_ingester_set_chunk_size (DwIngester *self, gsize bytes)
{
  g_return_if_fail (DW_IS_INGESTER (self));
  self->chunk = MAX (bytes, 64);
}

/* ------------------------------------------------------------------------------------------ */
/* Runs                                                                                        */

/* Folders that are a part of the run of the folder holding them. Not "logs" (a folder of console
 * logs holds one run per log) nor "tensorboard_log" (verl and slime write
 * tensorboard_log/<project>/<experiment>/: one run per experiment). slime's --dump-details D
 * writes D/train_data/ and D/rollout_data/: parts of the run D. */
static const char *const part_dirs[]
  = { "tensorboard", "tb", "batches", "rollout_batches", "events", "train_data", "rollout_data" };

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

char *
dw_ingest_run_name (const char *run_root)
{
  g_autofree char *base = g_path_get_basename (run_root);
  char *named = dw_logger_run_name (run_root); /* an MLflow run folder, a SwanLab run */
  char *dot;

  if (named != NULL)
    return named;
  if (g_file_test (run_root, G_FILE_TEST_IS_DIR))
    return g_steal_pointer (&base);
  dot = strrchr (base, '.');
  if (dot != NULL && dot != base)
    *dot = '\0';
  return g_steal_pointer (&base);
}

/* The run of @run_root: created when needed, inside the caller's transaction. A run of the same
 * name that came from elsewhere is not merged with: "parent/name" (then "…/name (N)"). */
static gint64
ensure_named_run (DwIngester *self, const char *run_root, const char *name_hint,
                  const char *framework, GError **error)
{
  g_autofree char *name = name_hint != NULL ? g_strdup (name_hint) : dw_ingest_run_name (run_root);
  g_autoptr (GPtrArray) runs = NULL;

  if (self->run_name != NULL)
    return dw_store_ensure_run (self->store, self->run_name, framework, run_root, error);
  runs = dw_store_list_runs (self->store, error);
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

static gint64
ensure_run_for_root (DwIngester *self, const char *run_root, const char *framework, GError **error)
{
  return ensure_named_run (self, run_root, NULL, framework, error);
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
/* Does a stored copy of rank @stored_rank disagree with @v (rank @rank) by more than the less
 * precise copy's rounding? */
static gboolean
values_conflict (double stored, int stored_rank, double v, int rank)
{
  int r = MIN (stored_rank, rank);
  double tol;

  if (isnan (stored) && isnan (v))
    return FALSE;
  if (isnan (stored) || isnan (v) || isinf (stored) || isinf (v))
    return stored != v;
  tol = r == 0   ? 0.0005 + 1e-9
        : r == 1 ? 1e-6 * MAX (fabs (stored), fabs (v)) + 1e-30
                 : 1e-12 * MAX (fabs (stored), fabs (v));
  return fabs (stored - v) > tol;
}

static void
report_conflicts (FeedCtx *c)
{
  for (guint i = 0; i < c->pending->len && c->error == NULL; i++)
    {
      const Pending *p = &g_array_index (c->pending, Pending, i);
      double stored;
      int stored_rank;

      if (!dw_store_get_point (c->self->store, p->tag_id, p->step, &stored, &stored_rank,
                               &c->error))
        continue;
      if (!values_conflict (stored, stored_rank, p->value, c->cur_rank))
        continue;
      if (++c->n_conflicts <= 3 && c->report != NULL)
        {
          g_autofree char *msg = NULL;
          GHashTableIter it;
          gpointer k, v;
          const char *tag = "?";

          g_hash_table_iter_init (&it, c->tags);
          while (g_hash_table_iter_next (&it, &k, &v))
            if (*(gint64 *)v == p->tag_id)
              tag = k;
          msg = g_strdup_printf (_ ("%s: %s at step %" PRId64 " is %.17g here but %.17g in "
                                    "another source of the same run: two sources disagree (%s)"),
                                 c->path, tag, p->step, p->value, stored,
                                 c->cur_rank >= stored_rank
                                   ? _ ("this copy, as precise or more, is kept")
                                   : _ ("the more precise stored copy is kept"));
          g_ptr_array_add (c->report->notes, g_steal_pointer (&msg));
        }
    }
}

static void
flush_points (FeedCtx *c)
{
  if (c->error == NULL && c->pending->len > 0)
    {
      DwPointRow *rows = (DwPointRow *)(void *)c->pending->data;

      if (c->check_conflicts)
        report_conflicts (c);
      if (c->error != NULL)
        return;
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

/* The id of @tag (@name in the store: the tag without a panel export's "<run> - " prefix). */
static gint64
tag_id (FeedCtx *c, const char *tag, const char *name, const char *step_key)
{
  gint64 *id = g_hash_table_lookup (c->tags, tag);
  gint64 v;

  if (id != NULL)
    return *id;
  v = dw_store_ensure_tag (c->self->store, c->run_id, name, step_key, &c->error);
  if (v == 0)
    return 0;
  if (c->framework == NULL)
    c->framework = framework_from_tag (name);
  g_hash_table_insert (c->tags, g_strdup (tag), g_memdup2 (&v, sizeof v));
  return v;
}

static gint64 ensure_named_run (DwIngester *self, const char *run_root, const char *name_hint,
                                const char *framework, GError **error);

/* A W&B panel export of several runs: the point of column "<run> - <metric>" goes to the run
 * <run> (created on first sight, its source "FILE#<run>"); returns the metric name. */
static const char *
panel_route (FeedCtx *c, const char *tag)
{
  const char *sep = strstr (tag, " - ");
  g_autofree char *name = NULL;
  gint64 *run;

  if (sep == NULL || sep == tag || c->self->run_name != NULL)
    return tag;
  name = g_strndup (tag, (gsize)(sep - tag));
  run = g_hash_table_lookup (c->panel_runs, name);
  if (run == NULL)
    {
      g_autofree char *source = g_strdup_printf ("%s#%s", c->path, name);
      gint64 id = ensure_named_run (c->self, source, name, "wandb", &c->error);
      if (id == 0)
        return NULL;
      run = g_memdup2 (&id, sizeof id);
      g_hash_table_insert (c->panel_runs, g_strdup (name), run);
    }
  if (*run != c->run_id)
    {
      flush_points (c); /* the pending points are the other run's */
      c->run_id = *run;
    }
  return sep + 3;
}

static void
on_point (const DwScalarPoint *p, gpointer user_data)
{
  FeedCtx *c = user_data;
  gint64 id;

  if (G_UNLIKELY (c->error != NULL))
    return;
  if (G_UNLIKELY (c->at_start))
    {
      /* the file's first point: a later launch of a run going back to an earlier step? Then
       * TensorBoard's rule: the earlier launch's points from that step on are stale */
      c->at_start = FALSE;
      if (c->restart_ref != G_MININT64 && p->step <= c->restart_ref)
        {
          c->restart_step = p->step;
          *c->launch_step = p->step;
        }
    }
  {
    int rank = p->precision == DW_PRECISION_3F ? 0 : c->base_rank;
    if (G_UNLIKELY (rank != c->cur_rank))
      {
        flush_points (c);
        c->cur_rank = rank;
        dw_store_set_source_rank (c->self->store, rank);
      }
  }
  if (G_UNLIKELY (c->panel_runs != NULL))
    {
      const char *name = panel_route (c, p->tag);
      if (name == NULL)
        return;
      id = tag_id (c, p->tag, name, p->step_key);
    }
  else
    id = tag_id (c, p->tag, p->tag, p->step_key);
  if (G_UNLIKELY (id == 0))
    return;
  if (G_UNLIKELY (c->launch_step != NULL && *c->launch_step != G_MININT64)
      && !g_hash_table_contains (c->purged, p->tag))
    {
      g_hash_table_add (c->purged, g_strdup (p->tag));
      if (!dw_store_purge_points_from (c->self->store, id, *c->launch_step, c->base_rank,
                                       &c->error))
        return;
    }
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

const char *
dw_ingest_file_kind (mode_t mode)
{
  if (S_ISFIFO (mode))
    return _ ("a FIFO (named pipe)");
  if (S_ISSOCK (mode))
    return _ ("a socket");
  if (S_ISCHR (mode) || S_ISBLK (mode))
    return _ ("a device");
  if (S_ISDIR (mode))
    return _ ("a folder");
  return S_ISREG (mode) ? _ ("a file") : _ ("a special file");
}

/* Largest step of the other files of this run in this format (restart detection). */
static gint64
others_max_step (DwIngester *self, gint64 run_id, int format, const char *path, GError **error)
{
  return dw_store_get_files_max_step (self->store, run_id, format, path, error);
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

static gboolean merge_run_meta (DwIngester *self, gint64 run_id, const char *add, GError **error);

/* A run whose log did not say its generation: the newest one consistent with its tag names. */
static gboolean
infer_generation (DwIngester *self, gint64 run_id, GError **error)
{
  g_autofree char *meta = NULL, *gen = NULL, *src = NULL;
  g_autoptr (GPtrArray) names = NULL;
  GError *err = NULL;
  const char *inferred;

  if (run_id == 0)
    return TRUE;
  meta = dw_store_get_run_meta (self->store, run_id, &err);
  if (err != NULL)
    {
      g_propagate_error (error, err);
      return FALSE;
    }
  gen = dw_run_meta_get_string (meta, "generation");
  src = dw_run_meta_get_string (meta, "generation_source");
  if (gen != NULL && g_strcmp0 (src, "inferred") != 0)
    return TRUE;
  /* names only: counting each tag's points here made ingesting a folder of many files
   * quadratic (120 MLflow metric files: 3× slower) */
  names = dw_store_list_tag_names (self->store, run_id, error);
  if (names == NULL)
    return FALSE;
  inferred = dw_run_meta_infer_generation ((const char *const *)names->pdata, names->len);
  if (inferred == NULL || g_strcmp0 (inferred, gen) == 0)
    return TRUE;
  {
    g_autofree char *add
      = g_strdup_printf ("{\"generation\": \"%s\", \"generation_source\": \"inferred\"}", inferred);
    if (!dw_store_begin (self->store, error))
      return FALSE;
    if (!merge_run_meta (self, run_id, add, &err) || !dw_store_commit (self->store, &err))
      return fail_tx (self, error, err);
  }
  return TRUE;
}

/* Does the run hold files of another format than @format (a console + TensorBoard pair)? */
static gboolean
run_has_other_formats (DwIngester *self, gint64 run_id, int format, GError **error)
{
  /* indexed: listing every file record per file made ingest quadratic in files */
  return dw_store_run_has_other_formats (self->store, run_id, format, error);
}

/* Merges @add (a JSON object) into the run's stored meta: members of @add win, except that an
 * inferred generation never replaces one the log gave. */
static gboolean
merge_run_meta (DwIngester *self, gint64 run_id, const char *add, GError **error)
{
  g_autofree char *old = dw_store_get_run_meta (self->store, run_id, error);
  g_autoptr (JsonParser) po = json_parser_new ();
  g_autoptr (JsonParser) pa = json_parser_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  JsonObject *o, *a;
  g_autofree char *out = NULL;

  if (error != NULL && *error != NULL)
    return FALSE;
  if (!json_parser_load_from_data (pa, add, -1, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (pa)))
    return TRUE;
  a = json_node_get_object (json_parser_get_root (pa));
  if (old == NULL || !json_parser_load_from_data (po, old, -1, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (po)))
    return dw_store_set_run_meta (self->store, run_id, add, error);
  o = json_node_get_object (json_parser_get_root (po));
  if (g_strcmp0 (json_object_get_string_member_with_default (a, "generation_source", ""),
                 "inferred")
        == 0
      && json_object_has_member (o, "generation"))
    return TRUE;
  {
    g_autoptr (GList) members = json_object_get_members (a);
    for (GList *l = members; l != NULL; l = l->next)
      json_object_set_member (o, l->data, json_node_copy (json_object_get_member (a, l->data)));
  }
  json_generator_set_root (gen, json_parser_get_root (po));
  out = json_generator_to_data (gen, NULL);
  return dw_store_set_run_meta (self->store, run_id, out, error);
}

/* verl/slime TensorBoard layout: .../tensorboard_log/<project>/<experiment>/ → (project,
 * experiment), else FALSE. */
static gboolean
tb_experiment_of (const char *run_root, char **project, char **experiment)
{
  g_autofree char *parent = g_path_get_dirname (run_root);
  g_autofree char *grand = g_path_get_dirname (parent);
  g_autofree char *gbase = g_path_get_basename (grand);

  if (g_strcmp0 (gbase, "tensorboard_log") != 0)
    return FALSE;
  *project = g_path_get_basename (parent);
  *experiment = g_path_get_basename (run_root);
  return TRUE;
}

/* The stored run that is the experiment (@project, @experiment), or 0. */
static gint64
run_of_experiment (DwIngester *self, const char *project, const char *experiment, GError **error)
{
  g_autoptr (GPtrArray) runs = dw_store_list_runs (self->store, error);

  if (runs == NULL)
    return 0;
  for (guint i = 0; i < runs->len; i++)
    {
      DwRunInfo *r = runs->pdata[i];
      g_autofree char *meta = dw_store_get_run_meta (self->store, r->id, NULL);
      g_autofree char *p = dw_run_meta_get_string (meta, "project");
      g_autofree char *e = dw_run_meta_get_string (meta, "experiment");
      if (e != NULL && g_str_equal (e, experiment)
          && (project == NULL || p == NULL || g_str_equal (p, project)))
        return r->id;
    }
  return 0;
}

/* The stored run whose source is @run_root, or 0. */
static gint64
run_of_source (DwIngester *self, const char *run_root, GError **error)
{
  g_autoptr (GPtrArray) runs = dw_store_list_runs (self->store, error);

  if (runs == NULL)
    return 0;
  for (guint i = 0; i < runs->len; i++)
    {
      DwRunInfo *r = runs->pdata[i];
      if (g_strcmp0 (r->source, run_root) == 0)
        return r->id;
    }
  return 0;
}

/* The run of a new log file: the experiment it belongs to when the log says (verl's printed
 * config names trainer.project_name / experiment_name; verl's TensorBoard folders are
 * tensorboard_log/<project>/<experiment>) and that experiment is already a run — the console
 * log and the TensorBoard folder of one run, or a later launch of it; else the run of its run
 * root. The log's metadata is stored with the run. */
static gint64
run_for_new_log (DwIngester *self, int fd, const char *path, DwFormat format, const char *run_root,
                 GError **error)
{
  g_autofree char *meta = NULL, *project = NULL, *experiment = NULL;
  g_autofree char *dir = g_path_get_dirname (path);
  gint64 run_id = 0;

  if (format == DW_FORMAT_VERL_CONSOLE || format == DW_FORMAT_SLIME_CONSOLE)
    {
      meta = dw_run_meta_scan (fd, path, format, DW_SNIFF_BUDGET_US);
      project = dw_run_meta_get_string (meta, "project");
      experiment = dw_run_meta_get_string (meta, "experiment");
    }
  else if (format == DW_FORMAT_TFEVENTS && tb_experiment_of (dir, &project, &experiment))
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      g_autoptr (JsonGenerator) g = json_generator_new ();
      JsonNode *root;

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "project");
      json_builder_add_string_value (b, project);
      json_builder_set_member_name (b, "experiment");
      json_builder_add_string_value (b, experiment);
      json_builder_end_object (b);
      root = json_builder_get_root (b);
      json_generator_set_root (g, root);
      meta = json_generator_to_data (g, NULL);
      json_node_unref (root);
    }
  if (experiment != NULL && self->run_name == NULL)
    {
      run_id = run_of_experiment (self, project, experiment, error);
      if (error != NULL && *error != NULL)
        return 0;
    }
  if (run_id == 0 && format == DW_FORMAT_VERL_JSONL && self->run_name == NULL)
    {
      /* verl's file logger writes <project>/<experiment>.jsonl: it joins that experiment's run
       * when one exists (its name alone is too weak to name a new run after) */
      g_autofree char *jp = g_path_get_basename (dir);
      g_autofree char *je = dw_ingest_run_name (path);
      run_id = run_of_experiment (self, jp, je, error);
      if (error != NULL && *error != NULL)
        return 0;
    }
  if (run_id == 0 && self->run_name == NULL)
    {
      /* the run of this run folder already exists under the experiment's name */
      run_id = run_of_source (self, run_root, error);
      if (error != NULL && *error != NULL)
        return 0;
    }
  if (run_id == 0)
    /* named after the experiment when the log names it: the same name whichever of its files
     * (console log, TensorBoard folder) is ingested first */
    run_id = ensure_named_run (self, run_root, experiment, format_framework (format), error);
  if (run_id != 0 && meta != NULL && !merge_run_meta (self, run_id, meta, error))
    return 0;
  return run_id;
}

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

/* A byte-stream log file from its stored offset on. */
static gboolean
ingest_log (DwIngester *self, const char *path, int fd, const struct stat *st, DwFormat format,
            DwFileRecord *rec, const char *run_root, DwIngestReport *report, GError **error)
{
  gint64 size = (gint64)st->st_size;
  gint64 pos, restart_ref = G_MININT64, launch_step = G_MININT64;
  g_autoptr (GHashTable) purged = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gboolean rewritten = FALSE, check_conflicts = FALSE, checked_conflicts = FALSE;
  g_autoptr (GHashTable) panel_runs
    = format == DW_FORMAT_WANDB_PANEL_CSV
        ? g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free)
        : NULL;
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
      else if (rec->prefix_len > DW_INGEST_PREFIX_MAX)
        rewritten = TRUE; /* damaged bookkeeping: read again rather than trust it */
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
      /* CSV readers learn the columns from the header: prime with the header line only
       * (priming with everything read before made watching a growing CSV quadratic: one line
       * appended to a 313 MB export re-read all of it) */
      gsize len = MIN ((gsize)pos, 64 * 1024), header = 0;
      g_autofree guint8 *head = NULL;

      for (;;)
        {
          const guint8 *nl;

          head = g_realloc (head, len);
          if (!read_at (fd, path, 0, head, len, error))
            return FALSE;
          nl = memchr (head, '\n', len);
          if (nl != NULL || len == (gsize)pos)
            {
              header = nl != NULL ? (gsize)(nl - head) + 1 : len;
              break;
            }
          len = MIN (len * 2, (gsize)pos);
        }
      dw_log_reader_feed (reader, 0, head, header, FALSE, NULL, NULL, NULL);
    }

  while (pos < size)
    {
      gsize want = (gsize)MIN ((gint64)window, size - pos);
      gboolean at_eof = pos + (gint64)want == size;
      gsize consumed;
      gboolean new_run;
      FeedCtx c
        = { self, report, path, rec->run_id, tags, NULL, 0, G_MININT64, G_MININT64, NULL, pending };

      c.base_rank = c.cur_rank = format_rank (format);
      c.format = format;
      c.restart_ref = G_MININT64;
      c.restart_step = G_MININT64;
      c.launch_step = &launch_step;
      c.purged = purged;
      c.panel_runs = panel_runs;
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
      dw_store_set_source_rank (self->store, c.base_rank);
      new_run = rec->run_id == 0;
      if (new_run && panel_runs != NULL && self->run_name == NULL)
        {
          /* a panel export of several runs: the file's home is its first run */
          g_autofree char *first_run = panel_first_run (buf, want);
          if (first_run != NULL)
            {
              g_autofree char *source = g_strdup_printf ("%s#%s", path, first_run);
              rec->run_id = ensure_named_run (self, source, first_run, "wandb", &err);
              if (rec->run_id == 0)
                return fail_tx (self, error, err);
              c.run_id = rec->run_id;
            }
        }
      if (rec->run_id == 0)
        {
          rec->run_id = run_for_new_log (self, fd, path, format, run_root, &err);
          if (rec->run_id == 0)
            return fail_tx (self, error, err);
          c.run_id = rec->run_id;
        }
      if (!checked_conflicts)
        {
          check_conflicts = run_has_other_formats (self, rec->run_id, format, &err);
          if (err != NULL)
            return fail_tx (self, error, err);
          checked_conflicts = TRUE;
        }
      c.check_conflicts = check_conflicts;
      if (pos == 0)
        {
          /* a rewritten file, or a new file whose steps go back into another's of the run */
          /* MLflow's file store keeps one file per metric, a panel export several runs: such
           * a file is no launch */
          c.at_start = format != DW_FORMAT_MLFLOW_FILE && panel_runs == NULL;
          c.restart_ref = restart_ref;
          if (!rewritten)
            {
              c.restart_ref = others_max_step (self, rec->run_id, format, path, &err);
              if (err != NULL)
                return fail_tx (self, error, err);
            }
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
          if (panel_runs != NULL)
            g_hash_table_remove_all (panel_runs);
          if (at_eof)
            break;
          window *= 2; /* one record longer than the window: read it whole */
          continue;
        }

      if (c.restart_step != G_MININT64)
        {
          if (!dw_store_add_restart (self->store, rec->run_id, c.restart_step, path, &err))
            return fail_tx (self, error, err);
          report_note (report,
                       _ ("%s: a later launch of the run, starting again at step %" PRId64
                          ": the earlier launch's points from that step on are replaced"),
                       path, c.restart_step);
        }
      if (c.n_conflicts > 3)
        report_note (report, _ ("%s: %u more values disagree with another source of the run"), path,
                     c.n_conflicts - 3);
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

  if (pos < size && reader->line != NULL && size - pos <= (gint64)DW_READER_MAX_LINE)
    {
      /* The last line has no newline (a log cut at the end, a W&B export): read it as it is
       * now, without moving the offset, so a file that grows later reads the line again
       * whole and its values replace these. Problems in it are not reported: it may be a
       * line still being written. */
      gsize tail = (gsize)(size - pos);
      g_autofree guint8 *line = g_malloc (tail + 1);
      FeedCtx c
        = { self, report, path, rec->run_id, tags, NULL, 0, G_MININT64, G_MININT64, NULL, pending };

      c.base_rank = c.cur_rank = format_rank (format);
      c.format = format;
      c.restart_ref = G_MININT64;
      c.restart_step = G_MININT64;
      c.launch_step = &launch_step;
      c.purged = purged;
      c.check_conflicts = check_conflicts;
      c.panel_runs = panel_runs;
      if (!read_at (fd, path, pos, line, tail, error))
        return FALSE;
      line[tail] = '\n';
      if (!dw_store_begin (self->store, error))
        return FALSE;
      g_hash_table_remove_all (tags);
      dw_store_set_source_rank (self->store, c.base_rank);
      if (rec->run_id == 0)
        {
          rec->run_id = run_for_new_log (self, fd, path, format, run_root, &err);
          if (rec->run_id == 0)
            return fail_tx (self, error, err);
          c.run_id = rec->run_id;
        }
      dw_log_reader_feed (reader, pos, line, tail + 1, TRUE, on_point, NULL, &c);
      flush_points (&c);
      if (c.error != NULL)
        return fail_tx (self, error, c.error);
      if (c.framework != NULL && !upgrade_framework (self, rec->run_id, c.framework, &err))
        return fail_tx (self, error, err);
      if (c.max_step > rec->max_step)
        rec->max_step = c.max_step;
      rec->format = format;
      fill_identity (rec, st);
      if (!dw_store_put_file (self->store, rec, &err) || !dw_store_commit (self->store, &err))
        return fail_tx (self, error, err);
      if (report != NULL)
        report->n_points += c.n_points;
      if (c.n_points == 0)
        report_note (report,
                     _ ("%s: the last %" PRId64 " bytes (from byte offset %" PRId64
                        ") are not a complete line or record yet; they are read again once the "
                        "file grows"),
                     path, size - pos, pos);
    }
  else if (pos < size)
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
          rec->run_id = run_for_new_log (self, fd, path, format, run_root, &err);
          if (rec->run_id == 0)
            return fail_tx (self, error, err);
        }
      rec->format = format;
      fill_identity (rec, st);
      if (!dw_store_put_file (self->store, rec, &err) || !dw_store_commit (self->store, &err))
        return fail_tx (self, error, err);
    }
  if (!infer_generation (self, rec->run_id, error))
    return FALSE;
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

/* Was the lowest rank's file of this per-rank set read (and remembered) already? It is not
 * when it found its set incomplete: then a later rank file reads the set. */
static gboolean
torch_set_read (DwIngester *self, const char *path)
{
  g_autofree char *leader = dw_batch_slime_set_leader (path);
  g_autoptr (DwFileRecord) record = dw_store_get_file (self->store, leader, NULL);
  return record != NULL;
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

  if (format == DW_FORMAT_BATCH_TORCH)
    {
      g_autofree char *parent = g_path_get_dirname (path);
      g_autofree char *dir = g_path_get_basename (parent);
      /* slime's rollout side is joined to train_data/{id}.pt when that is read */
      if (strcmp (dir, "rollout_data") == 0)
        return TRUE;
      /* A per-rank dump is read whole through its lowest rank. A later rank file reads the set
       * only when that one was not remembered: live, it may have been written first and found
       * its set incomplete. */
      if (!dw_batch_slime_is_set_leader (path) && torch_set_read (self, path))
        return TRUE;
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
  if (batch != NULL
      && !dw_store_put_batch (self->store, rec->run_id, batch->step, batch, path, &berr))
    {
      /* one batch too large for the store: that file is skipped with a diagnostic naming it,
       * the rest of the folder is read (it stopped every ingest of the folder) */
      if (!g_error_matches (berr, DW_STORE_ERROR, DW_STORE_ERROR_TOO_LARGE))
        return fail_tx (self, error, g_steal_pointer (&berr));
      g_clear_pointer (&batch, dw_batch_free);
    }
  else if (batch != NULL)
    rec->max_step = batch->step;
  if (batch == NULL)
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

/* Recognises @path (already open as @fd) by content, going on from where the last look at it
 * stopped (a growing file is examined further, never again from the start). */
static DwFormat
recognise_fd (DwIngester *self, int fd, const char *path, char **reason)
{
  DwSniffer *s = g_hash_table_lookup (self->sniffers, path);
  DwFormat f;

  if (s == NULL)
    {
      s = dw_sniffer_new (path);
      g_hash_table_insert (self->sniffers, g_strdup (path), s);
    }
  f = dw_sniffer_step (s, fd, self->sniff_budget_us);
  if (reason != NULL)
    *reason = f == DW_FORMAT_UNKNOWN ? g_strdup (dw_sniffer_get_reason (s)) : NULL;
  return f;
}

gboolean
dw_ingester_recognise_unfinished (DwIngester *self, const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  DwSniffer *s = g_hash_table_lookup (self->sniffers, abs);

  return s != NULL && dw_sniffer_is_unfinished (s);
}

gboolean
dw_ingester_recognise_refused (DwIngester *self, const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  DwSniffer *s = g_hash_table_lookup (self->sniffers, abs);

  return s != NULL && dw_sniffer_is_final (s) && dw_sniffer_get_reason (s) != NULL;
}

void
dw_ingester_set_sniff_budget (DwIngester *self, gint64 budget_us)
{
  g_return_if_fail (DW_IS_INGESTER (self));
  self->sniff_budget_us = budget_us;
}

DwFormat
dw_ingester_recognise (DwIngester *self, const char *path, char **reason)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autoptr (DwFileRecord) rec = NULL;
  DwFormat f;
  int fd;

  g_return_val_if_fail (DW_IS_INGESTER (self), DW_FORMAT_UNKNOWN);
  if (reason != NULL)
    *reason = NULL;
  if (is_store_file (self, abs))
    return DW_FORMAT_UNKNOWN;
  rec = dw_store_get_file (self->store, abs, NULL);
  if (rec != NULL)
    return (DwFormat)rec->format;
  /* O_NONBLOCK: a FIFO in a watched folder must not block the follower */
  fd = g_open (abs, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0)
    {
      if (reason != NULL)
        *reason = g_strdup_printf (_ ("cannot open: %s"), g_strerror (errno));
      return DW_FORMAT_UNKNOWN;
    }
  {
    struct stat st = { 0 };

    if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
      {
        if (reason != NULL)
          *reason
            = g_strdup_printf (_ ("%s, not a regular file"), dw_ingest_file_kind (st.st_mode));
        close (fd);
        return DW_FORMAT_UNKNOWN;
      }
  }
  f = recognise_fd (self, fd, abs, reason);
  close (fd);
  return f;
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
  /* O_NONBLOCK: opening a FIFO with no writer would block forever (no effect on files) */
  fd = g_open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
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
  if (!S_ISREG (st.st_mode))
    {
      const char *what = dw_ingest_file_kind (st.st_mode);

      close (fd);
      if (explicit)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                       _ ("%s: %s, not a regular file: Driftwatch reads files it can read "
                          "again (save the output to a file first)"),
                       path, what);
          return FALSE;
        }
      report_note (report, _ ("%s: %s, not a regular file: skipped"), path, what);
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
  {
    g_autofree char *reason = NULL;

    if (rec != NULL && (rec->format <= DW_FORMAT_UNKNOWN || rec->format >= DW_N_FORMATS))
      {
        /* damaged bookkeeping (a format number this build does not know): read it as new */
        rec->format = DW_FORMAT_UNKNOWN;
        rec->offset = rec->prefix_len = 0;
        rec->max_step = G_MININT64;
        g_clear_pointer (&rec->state, g_bytes_unref);
      }
    format = rec != NULL && rec->format != DW_FORMAT_UNKNOWN
               ? (DwFormat)rec->format
               : recognise_fd (self, fd, path, &reason);
    if (format == DW_FORMAT_UNKNOWN)
      {
        close (fd);
        /* the same whether the file was named or found in a folder: the caller decides what
         * a path that gave nothing means (driftwatch-cli ingest: exit 1) */
        report_note (
          report,
          _ ("%s: not a recognised log or batch format (%s; formats: verl/slime console, verl "
             "JSONL, tfevents, W&B CSV or .wandb, MLflow, rollout batch): skipped"),
          path, reason);
        if (report != NULL)
          report->n_skipped++;
        return TRUE;
      }
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
  fd = g_open (abs, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0)
    return FALSE;
  f = recognise_fd (self, fd, abs, NULL);
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

/* The project of @dir/tensorboard_log when it holds exactly one <project>/<experiment> with
 * data, else NULL. */
static char *
single_tb_project (DwIngester *self, const char *dir, int depth)
{
  g_autofree char *tb = g_build_filename (dir, "tensorboard_log", NULL);
  Listing projects;
  char *project = NULL;
  guint n = 0;

  if (!g_file_test (tb, G_FILE_TEST_IS_DIR))
    return NULL;
  list_dir (tb, &projects);
  for (guint i = 0; i < projects.dirs->len; i++)
    {
      Listing exps;
      list_dir (projects.dirs->pdata[i], &exps);
      for (guint k = 0; k < exps.dirs->len; k++)
        if (has_data (self, exps.dirs->pdata[k], depth + 3))
          {
            n++;
            g_free (project);
            project = g_path_get_basename (projects.dirs->pdata[i]);
          }
      listing_clear (&exps);
    }
  listing_clear (&projects);
  if (n != 1)
    g_clear_pointer (&project, g_free);
  return project;
}

static gboolean
is_console_format (DwFormat f)
{
  return f == DW_FORMAT_VERL_CONSOLE || f == DW_FORMAT_SLIME_CONSOLE;
}

/* A folder: its own data files and part folders (tensorboard/, batches/, …) are one run named
 * after it, except the console logs of a folder named "logs" (one run per log, unless a log's
 * printed config names an experiment that is already a run); every other folder holding data is
 * resolved the same way, on its own (tensorboard_log/<project>/<experiment>/: one run per
 * experiment). So a folder of runs gives the same runs as each sub-folder. */
static gboolean
ingest_dir (DwIngester *self, const char *dir, DwIngestReport *report, int depth, GError **error)
{
  Listing l;
  gboolean ok = TRUE;
  g_autoptr (GPtrArray) run_files = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) own = g_ptr_array_new ();
  g_autoptr (GPtrArray) sub_runs = g_ptr_array_new ();
  g_autofree char *dbase = g_path_get_basename (dir);
  guint n_console = 0;
  /* an MLflow file-store run folder: its metrics/ (params/, tags/) folders are part of it */
  gboolean mlflow_run = dw_mlflow_file_is_run_dir (dir);

  if (depth > MAX_DEPTH)
    return TRUE;
  list_dir (dir, &l);
  for (guint i = 0; i < l.files->len; i++)
    {
      const char *f = l.files->pdata[i];
      g_autofree char *abs = g_canonicalize_filename (f, NULL);
      DwFormat fmt;

      if (!is_data_file (self, f))
        {
          g_ptr_array_add (run_files, g_strdup (f)); /* skipped with its reason by ingest_one */
          continue;
        }
      fmt = dw_ingester_recognise (self, f, NULL);
      if (is_console_format (fmt))
        {
          n_console++;
          g_ptr_array_add (own, (gpointer)f);
        }
      else
        g_ptr_array_add (run_files, g_strdup (f));
    }
  if (n_console > 0 && g_ascii_strcasecmp (dbase, "logs") != 0)
    {
      /* console logs beside other files of a run folder: part of the folder's run */
      for (guint i = 0; i < own->len; i++)
        g_ptr_array_add (run_files, g_strdup (own->pdata[i]));
      g_ptr_array_set_size (own, 0);
    }
  /* A run folder (it holds logs itself) whose tensorboard_log/ holds ONE experiment: that is
   * the folder's own run (verl's working directory: stdout, tensorboard_log/<project>/<exp>/,
   * <project>/<exp>.jsonl). With several experiments each is a run of its own. */
  g_autofree char *single_project = NULL;
  if (run_files->len > 0)
    single_project = single_tb_project (self, dir, depth);
  for (guint i = 0; i < l.dirs->len; i++)
    {
      const char *sub = l.dirs->pdata[i];
      g_autofree char *base = g_path_get_basename (sub);

      if (!has_data (self, sub, depth + 1))
        continue;
      if (is_part_dir (base) || mlflow_run
          || (single_project != NULL
              && (g_str_equal (base, "tensorboard_log") || g_str_equal (base, single_project))))
        collect_files (sub, run_files, depth + 1);
      else
        g_ptr_array_add (sub_runs, (gpointer)sub);
    }
  g_ptr_array_sort (run_files, cmp_str);
  {
    gboolean any_data = own->len > 0 || sub_runs->len > 0;
    for (guint i = 0; i < run_files->len && !any_data; i++)
      any_data = is_data_file (self, run_files->pdata[i]);
    if (!any_data)
      {
        /* nothing recognised: each file still says why it was skipped */
        for (guint i = 0; i < run_files->len && ok; i++)
          ok = ingest_one (self, run_files->pdata[i], dir, FALSE, report, error);
        if (run_files->len == 0)
          report_note (report, _ ("%s: no log or batch file found"), dir);
        listing_clear (&l);
        return ok;
      }
  }
  for (guint i = 0; i < run_files->len && ok; i++)
    ok = ingest_one (self, run_files->pdata[i], dir, FALSE, report, error);
  for (guint i = 0; i < own->len && ok; i++)
    ok = ingest_one (self, own->pdata[i], own->pdata[i], FALSE, report, error);
  for (guint i = 0; i < sub_runs->len && ok; i++)
    ok = ingest_dir (self, sub_runs->pdata[i], report, depth + 1, error);
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
