/* test-loggers.c — SwanLab, trackio and MLflow file-store readers, offline and followed live
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every input is generated here by logger-fixtures.c from the formats' published layouts
 * (SwanLab's DataStoreWriter and record.proto, trackio's init_db schema and orjson rows,
 * MLflow's FileStore tree); the expected values are the ones written, compared bit for bit.
 */
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <zlib.h>

#include "dw-crc32c.h"
#include "dw-follower.h"
#include "dw-ingester.h"
#include "dw-log-reader.h"
#include "dw-reader-loggers.h"
#include "dw-store-writer.h"
#include "dw-test-cli.h"
#include "logger-fixtures.h"

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct
{
  GHashTable *map;  /* "tag\tstep" → double */
  GHashTable *tags; /* tag set */
  GPtrArray *diags;
  guint n;
} Points;

static void
points_init (Points *p)
{
  p->map = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  p->tags = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  p->diags = g_ptr_array_new_with_free_func (g_free);
  p->n = 0;
}

static void
points_clear (Points *p)
{
  g_hash_table_unref (p->map);
  g_hash_table_unref (p->tags);
  g_ptr_array_unref (p->diags);
}

static void
points_add (Points *p, const char *tag, gint64 step, double v)
{
  g_hash_table_replace (p->map, g_strdup_printf ("%s\t%" G_GINT64_FORMAT, tag, step),
                        g_memdup2 (&v, sizeof v));
  g_hash_table_add (p->tags, g_strdup (tag));
  p->n++;
}

static void
on_point (const DwScalarPoint *pt, gpointer user_data)
{
  points_add (user_data, pt->tag, pt->step, pt->value);
}

static void
on_diag (goffset offset, const char *message, gpointer user_data)
{
  Points *p = user_data;
  g_ptr_array_add (p->diags, g_strdup_printf ("%" G_GINT64_FORMAT "|%s", (gint64)offset, message));
}

static gboolean
same_double (double a, double b)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  return a == b && signbit (a) == signbit (b);
}

static void
assert_points_equal (Points *got, Points *want)
{
  GHashTableIter it;
  gpointer k, v;

  g_hash_table_iter_init (&it, want->map);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      double *g = g_hash_table_lookup (got->map, k);
      if (g == NULL || !same_double (*g, *(double *)v))
        g_error ("%s = %.17g, expected %.17g", (char *)k, g ? *g : NAN, *(double *)v);
    }
  g_assert_cmpuint (g_hash_table_size (got->map), ==, g_hash_table_size (want->map));
}

/* The stored points of @run_id, as Points. */
static void
store_points (DwStore *store, gint64 run_id, Points *out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) tags = dw_store_list_tags (store, run_id, &error);

  g_assert_no_error (error);
  g_ptr_array_set_free_func (tags, (GDestroyNotify)dw_tag_info_free);
  for (guint i = 0; i < tags->len; i++)
    {
      DwTagInfo *t = tags->pdata[i];
      g_autoptr (DwSeries) s = dw_store_get_series (store, run_id, t->name, G_MININT64, &error);
      g_assert_no_error (error);
      for (gsize k = 0; k < s->n; k++)
        points_add (out, t->name, s->steps[k], s->values[k]);
    }
}

/* The id of the run named @name (fails when there is none). */
static gint64
run_named (DwStore *store, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) runs = dw_store_list_runs (store, &error);

  g_assert_no_error (error);
  for (guint i = 0; i < runs->len; i++)
    if (g_str_equal (((DwRunInfo *)runs->pdata[i])->name, name))
      return ((DwRunInfo *)runs->pdata[i])->id;
  g_error ("no run named %s", name);
  return 0;
}

static guint
n_runs (DwStore *store)
{
  g_autoptr (GPtrArray) runs = dw_store_list_runs (store, NULL);
  return runs->len;
}

static void
rm_rf (const char *path)
{
  g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
  const char *name;

  if (d != NULL)
    while ((name = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *child = g_build_filename (path, name, NULL);
        if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
          rm_rf (child);
        else
          g_unlink (child);
      }
  g_rmdir (path);
}

typedef struct
{
  char *dir;
  DwStore *store;
  DwIngester *ing;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *db = NULL;

  (void)data;
  f->dir = g_dir_make_tmp ("dw-loggers-XXXXXX", &error);
  g_assert_no_error (error);
  db = g_build_filename (f->dir, "store.db", NULL);
  f->store = dw_store_open (db, &error);
  g_assert_no_error (error);
  f->ing = dw_ingester_new (f->store);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  (void)data;
  g_clear_object (&f->ing);
  g_clear_object (&f->store);
  rm_rf (f->dir);
  g_free (f->dir);
}

static void
ingest (Fixture *f, const char *path, DwIngestReport *out)
{
  g_autoptr (GError) error = NULL;
  DwIngestReport r;

  dw_ingest_report_init (&r);
  g_assert_true (dw_ingester_ingest_path (f->ing, path, &r, &error));
  g_assert_no_error (error);
  if (out != NULL)
    *out = r;
  else
    dw_ingest_report_clear (&r);
}

/* ---- SwanLab ------------------------------------------------------------------------------ */

static const char *const swl_keys[]
  = { "rollout_corr/kl", "rollout_corr/rollout_is_mean", "actor/grad_norm", "critic/score/mean" };

/* A SwanLab run as swanlab.init + log × n_steps + a long console line + media writes it;
 * @want gets every scalar written. Returns how many times a block tail < 7 bytes was padded. */
static GByteArray *
swl_make_run (guint n_steps, Points *want, guint *n_padded)
{
  GByteArray *f = dw_fx_swanlab_new (2);
  g_autoptr (GRand) rnd = g_rand_new_with_seed (7);
  gint64 num = 1;

  *n_padded = 0;
  {
    g_autoptr (GByteArray) r = dw_fx_swanlab_start ("verl_grpo", "qwen-7b-fp8", "abc123");
    dw_fx_swanlab_write (f, r->data, r->len);
  }
  for (guint s = 0; s < n_steps; s++)
    for (guint k = 0; k < G_N_ELEMENTS (swl_keys); k++)
      {
        double v = g_rand_double_range (rnd, -1, 1) * pow (10, -(double)(k * 3));
        if (s == 0 && k == 0)
          v = 0.0; /* proto3 leaves value.number out */
        else if (s == 2 && k == 0)
          v = NAN;
        else if (s == 3 && k == 1)
          v = INFINITY;
        else if (s == 3 && k == 2)
          v = -INFINITY;
        g_autoptr (GByteArray) r
          = dw_fx_swanlab_scalar (num++, swl_keys[k], s, v, 1767225600 + s, 250000000);
        if (32768 - f->len % 32768 < 7)
          (*n_padded)++;
        dw_fx_swanlab_write (f, r->data, r->len);
        points_add (want, swl_keys[k], s, v);
        if (s == 5 && k == 0)
          {
            /* a 70 KB console line: FIRST + MIDDLE + LAST chunks over three blocks */
            g_autoptr (GByteArray) c = dw_fx_swanlab_console (num++, 70000);
            g_autoptr (GByteArray) m = dw_fx_swanlab_media (num++, "val/generations", s, "a.png");
            dw_fx_swanlab_write (f, c->data, c->len);
            dw_fx_swanlab_write (f, m->data, m->len);
          }
      }
  return f;
}

static void
test_swanlab_read (void)
{
  Points want, got, grown;
  guint padded = 0;
  g_autoptr (GByteArray) f = NULL;

  points_init (&want);
  points_init (&got);
  points_init (&grown);
  f = swl_make_run (3000, &want, &padded);
  g_assert_cmpuint (f->len, >, 4 * 32768);
  g_assert_cmpuint (padded, >, 0); /* the zero-padded block tail case is in the file */
  g_assert_cmpint (dw_format_sniff ("run-abc123.swanlab", f->data, 64), ==, DW_FORMAT_SWANLAB);

  /* whole file */
  {
    g_autoptr (DwLogReader) r = dw_log_reader_new (DW_FORMAT_SWANLAB, "run-abc123.swanlab");
    gsize c = dw_log_reader_feed (r, 0, f->data, f->len, TRUE, on_point, on_diag, &got);
    g_assert_cmpuint (c, ==, f->len);
  }
  g_assert_cmpuint (got.diags->len, ==, 0);
  assert_points_equal (&got, &want);
  g_assert_cmpuint (got.n, ==, 3000 * G_N_ELEMENTS (swl_keys));

  /* the same bytes arriving as a file being written, 997 bytes at a time */
  {
    g_autoptr (DwLogReader) r = dw_log_reader_new (DW_FORMAT_SWANLAB, "run-abc123.swanlab");
    gsize consumed = 0, visible = 0;
    while (visible < f->len)
      {
        visible = MIN (f->len, visible + 997);
        consumed += dw_log_reader_feed (r, (goffset)consumed, f->data + consumed,
                                        visible - consumed, TRUE, on_point, on_diag, &grown);
        g_assert_cmpuint (consumed, <=, visible);
      }
    g_assert_cmpuint (consumed, ==, f->len);
  }
  g_assert_cmpuint (grown.diags->len, ==, 0);
  assert_points_equal (&grown, &want);
  g_assert_cmpuint (grown.n, ==, got.n); /* nothing read twice */
  points_clear (&want);
  points_clear (&got);
  points_clear (&grown);
}

/* A truncated tail (a killed writer: DataStoreWriter does not flush per record) loses only the
 * cut record; bad CRCs are reported with their offset; another version is refused by name. */
static void
test_swanlab_damaged (void)
{
  Points want, got;
  guint padded;
  g_autoptr (GByteArray) f = NULL;

  points_init (&want);
  points_init (&got);
  f = swl_make_run (40, &want, &padded);
  {
    g_autoptr (DwLogReader) r = dw_log_reader_new (DW_FORMAT_SWANLAB, "cut.swanlab");
    gsize cut = f->len - 11;
    gsize c = dw_log_reader_feed (r, 0, f->data, cut, TRUE, on_point, on_diag, &got);
    g_assert_cmpuint (c, <, cut); /* the partial record is left for when the file grows */
    g_assert_cmpuint (got.n, ==, 40 * G_N_ELEMENTS (swl_keys) - 1);
    g_assert_cmpuint (got.diags->len, ==, 0);
    c += dw_log_reader_feed (r, (goffset)c, f->data + c, f->len - c, TRUE, on_point, on_diag, &got);
    g_assert_cmpuint (c, ==, f->len);
    assert_points_equal (&got, &want);
  }
  /* one flipped payload bit in the 10th record after the header */
  {
    g_autoptr (GByteArray) bad = g_byte_array_new ();
    Points p;
    gsize off = 7;
    g_byte_array_append (bad, f->data, f->len);
    for (int i = 0; i < 10; i++)
      off += 7 + ((gsize)bad->data[off + 4] | (gsize)bad->data[off + 5] << 8);
    bad->data[off + 7 + 3] ^= 0x10;
    points_init (&p);
    g_autoptr (DwLogReader) r = dw_log_reader_new (DW_FORMAT_SWANLAB, "bad.swanlab");
    g_assert_cmpuint (dw_log_reader_feed (r, 0, bad->data, bad->len, TRUE, on_point, on_diag, &p),
                      ==, bad->len);
    g_assert_cmpuint (p.diags->len, ==, 1);
    g_autofree char *expect
      = g_strdup_printf ("%" G_GSIZE_FORMAT "|bad.swanlab: byte offset %" G_GSIZE_FORMAT
                         ": .swanlab: bad chunk CRC, record skipped",
                         off, off);
    g_assert_cmpstr (p.diags->pdata[0], ==, expect);
    g_assert_cmpuint (p.n, ==, 40 * G_N_ELEMENTS (swl_keys) - 1);
    points_clear (&p);
  }
  /* SwanLab < 0.8 / a future version */
  {
    g_autoptr (GByteArray) old = dw_fx_swanlab_new (1);
    Points p;
    points_init (&p);
    g_byte_array_append (old, f->data + 7, f->len - 7);
    g_autoptr (DwLogReader) r = dw_log_reader_new (DW_FORMAT_SWANLAB, "v1.swanlab");
    dw_log_reader_feed (r, 0, old->data, old->len, TRUE, on_point, on_diag, &p);
    g_assert_cmpuint (p.n, ==, 0);
    g_assert_cmpuint (p.diags->len, ==, 1);
    g_assert_nonnull (strstr (p.diags->pdata[0], "v1.swanlab: byte offset 0: .swanlab: file "
                                                 "format version 1"));
    points_clear (&p);
  }
  points_clear (&want);
  points_clear (&got);
}

/* swanlog/run-<time>-<id>/run-<id>.swanlab ingested and re-ingested: one run, exact values. */
static void
test_swanlab_ingest (Fixture *f, gconstpointer data)
{
  Points want, got;
  guint padded;
  g_autoptr (GByteArray) b = NULL;
  g_autofree char *dir = g_build_filename (f->dir, "swanlog", "run-20260101_000000-abc123", NULL);
  g_autofree char *path = g_build_filename (dir, "run-abc123.swanlab", NULL);
  DwIngestReport r;

  (void)data;
  points_init (&want);
  points_init (&got);
  b = swl_make_run (500, &want, &padded);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, (const char *)b->data, (gssize)b->len, NULL));
  ingest (f, dir, &r);
  g_assert_cmpuint (r.n_points, ==, 500 * G_N_ELEMENTS (swl_keys));
  dw_ingest_report_clear (&r);
  ingest (f, dir, &r);
  g_assert_cmpuint (r.n_points, ==, 0);
  dw_ingest_report_clear (&r);
  g_assert_cmpuint (n_runs (f->store), ==, 1);
  {
    g_autoptr (GPtrArray) runs = dw_store_list_runs (f->store, NULL);
    DwRunInfo *run = runs->pdata[0];
    g_assert_cmpstr (run->framework, ==, "swanlab");
    g_assert_cmpstr (run->name, ==, "qwen-7b-fp8"); /* swanlab.init's experiment name */
    store_points (f->store, run->id, &got);
  }
  assert_points_equal (&got, &want);
  points_clear (&want);
  points_clear (&got);
}

/* ---- MLflow file store -------------------------------------------------------------------- */

/* verl's Tracking with trackio.logger mlflow and MLFLOW_TRACKING_URI=file://…/mlruns: key names
 * already sanitised by verl ("@" → "_at_"), experiment = project, run name = experiment_name. */
static const char *const mlf_keys[]
  = { "rollout_corr/kl", "rollout_corr/rollout_is_eff_sample_size", "actor/grad_norm",
      "val-core/openai/gsm8k/acc/mean_at_1" };

static void
mlf_make_run (const char *mlruns, const char *run_id, const char *name, guint steps, guint seed,
              Points *want)
{
  g_autofree char *run = dw_fx_mlflow_run (mlruns, "1", "verl_grpo", run_id, name);
  g_autoptr (GRand) rnd = g_rand_new_with_seed (seed);

  for (guint s = 1; s <= steps; s++)
    for (guint k = 0; k < G_N_ELEMENTS (mlf_keys); k++)
      {
        double v = g_rand_double_range (rnd, -2, 2) * pow (10, -(double)(k * 2));
        if (s == 3 && k == 0)
          v = NAN;
        if (s == 4 && k == 1)
          v = INFINITY;
        if (s == 5 && k == 2)
          v = 120.0;
        g_autofree char *repr = dw_fx_py_repr (v);
        dw_fx_mlflow_log (run, mlf_keys[k], 1767225600000 + s * 1000, repr, s, TRUE);
        if (want != NULL)
          points_add (want, mlf_keys[k], s, v);
      }
}

static void
test_mlflow_file (Fixture *f, gconstpointer data)
{
  g_autofree char *mlruns = g_build_filename (f->dir, "mlruns", NULL);
  g_autofree char *trash = g_build_filename (mlruns, ".trash", NULL);
  g_autofree char *exp0 = NULL;
  Points want_a, want_b, got_a, got_b;
  DwIngestReport r;

  (void)data;
  points_init (&want_a);
  points_init (&want_b);
  points_init (&got_a);
  points_init (&got_b);
  mlf_make_run (mlruns, "5f2a9c0e1b7d4e6f8a9b0c1d2e3f4a5b", "qwen7b_grpo_bf16", 30, 1, &want_a);
  mlf_make_run (mlruns, "0e1f2a3b4c5d6e7f8091a2b3c4d5e6f7", "qwen7b_grpo_fp8", 20, 2, &want_b);
  /* a legacy two-field line (MLflow < 1.0 wrote no step: read as step 0) */
  {
    g_autofree char *path = g_build_filename (mlruns, "1", "0e1f2a3b4c5d6e7f8091a2b3c4d5e6f7",
                                              "metrics", "legacy_metric", NULL);
    g_assert_true (g_file_set_contents (path, "1767225600000 0.5\n", -1, NULL));
    points_add (&want_b, "legacy_metric", 0, 0.5);
  }
  /* the default experiment 0, empty, and the .trash folder MLflow keeps */
  exp0 = dw_fx_mlflow_run (mlruns, "0", "Default", "ffffffffffffffffffffffffffffffff", "empty");
  g_assert_cmpint (g_mkdir_with_parents (trash, 0755), ==, 0);

  {
    g_autofree char *head = NULL;
    gsize n = 0;
    g_autofree char *p = g_build_filename (mlruns, "1", "5f2a9c0e1b7d4e6f8a9b0c1d2e3f4a5b",
                                           "metrics", "rollout_corr", "kl", NULL);
    g_assert_true (g_file_get_contents (p, &head, &n, NULL));
    g_assert_cmpint (dw_format_sniff (p, (const guint8 *)head, n), ==, DW_FORMAT_MLFLOW_FILE);
    g_autofree char *key = dw_mlflow_file_key (p);
    g_assert_cmpstr (key, ==, "rollout_corr/kl");
    /* the same line outside an MLflow run folder is not taken for one */
    g_assert_cmpint (dw_format_sniff ("/tmp/kl", (const guint8 *)head, n), ==, DW_FORMAT_UNKNOWN);
  }

  ingest (f, mlruns, &r);
  g_assert_cmpuint (r.diagnostics->len, ==, 0);
  dw_ingest_report_clear (&r);
  /* two runs named as verl named them, nothing else (the empty run has no metric file) */
  g_assert_cmpuint (n_runs (f->store), ==, 2);
  store_points (f->store, run_named (f->store, "qwen7b_grpo_bf16"), &got_a);
  store_points (f->store, run_named (f->store, "qwen7b_grpo_fp8"), &got_b);
  assert_points_equal (&got_a, &want_a);
  assert_points_equal (&got_b, &want_b);

  /* a run that keeps logging: only the new lines, into the same run */
  {
    g_autofree char *run = g_build_filename (mlruns, "1", "5f2a9c0e1b7d4e6f8a9b0c1d2e3f4a5b", NULL);
    dw_fx_mlflow_log (run, "rollout_corr/kl", 1767225700000, "0.000123", 31, TRUE);
    points_add (&want_a, "rollout_corr/kl", 31, 0.000123);
    ingest (f, mlruns, &r);
    g_assert_cmpuint (r.n_points, ==, 1);
    dw_ingest_report_clear (&r);
    /* a metric file named alone joins its run */
    dw_fx_mlflow_log (run, "actor/entropy", 1767225700000, "0.61", 31, TRUE);
    points_add (&want_a, "actor/entropy", 31, 0.61);
    g_autofree char *one = g_build_filename (run, "metrics", "actor", "entropy", NULL);
    ingest (f, one, NULL);
  }
  g_assert_cmpuint (n_runs (f->store), ==, 2);
  points_clear (&got_a);
  points_init (&got_a);
  store_points (f->store, run_named (f->store, "qwen7b_grpo_bf16"), &got_a);
  assert_points_equal (&got_a, &want_a);

  points_clear (&want_a);
  points_clear (&want_b);
  points_clear (&got_a);
  points_clear (&got_b);
}

static void
test_mlflow_file_lines (void)
{
  Points p;
  g_autoptr (DwLogReader) r = dw_log_reader_new (DW_FORMAT_MLFLOW_FILE, "/x/metrics/loss");
  const char *text = "1767225600000 0.5 1\n"
                     "1767225601000 nan 2\n"
                     "1767225602000 -inf 3\n"
                     "1767225603000 1e-06 4\n"
                     "garbage here\n"
                     "1767225604000 0.25 5 6\n"
                     "1767225605000 0.125 -1\n";
  points_init (&p);
  g_assert_cmpuint (
    dw_log_reader_feed (r, 0, (const guint8 *)text, strlen (text), TRUE, on_point, on_diag, &p), ==,
    strlen (text));
  g_assert_cmpuint (p.n, ==, 5);
  g_assert_cmpuint (p.diags->len, ==, 2);
  g_assert_cmpstr (p.diags->pdata[0], ==,
                   "83|/x/metrics/loss: byte offset 83: MLflow metric file: not a \"timestamp "
                   "value step\" line, skipped");
  {
    double *v = g_hash_table_lookup (p.map, "loss\t4");
    g_assert_nonnull (v);
    g_assert_cmpfloat (*v, ==, 1e-06);
    v = g_hash_table_lookup (p.map, "loss\t3");
    g_assert_true (isinf (*v) && *v < 0);
    v = g_hash_table_lookup (p.map, "loss\t-1");
    g_assert_cmpfloat (*v, ==, 0.125);
  }
  points_clear (&p);
}

/* verl's default MLflow URI is sqlite:////tmp/mlruns.db, shared by every verl run on the node:
 * `driftwatch-cli ingest` of a store of that name gives one run per MLflow run, named as verl
 * named it (experiment_name), with MLflow's NaN (is_nan) and ±inf (±DBL_MAX) turned back. */
static void
test_mlflow_tmp_db (Fixture *f, gconstpointer data)
{
  g_autofree char *dst = g_build_filename (f->dir, "mlruns.db", NULL);
  g_autofree char *store = g_build_filename (f->dir, "cli.db", NULL);
  g_autofree char *out = NULL, *err = NULL, *head = NULL;
  g_autoptr (GRand) rnd = g_rand_new_with_seed (12);
  const char *args[] = { "ingest", dst, "--db", store, NULL };
  const char *const runs[][2] = { { "a1b2c3d4e5f60718293a4b5c6d7e8f90", "qwen7b_grpo_bf16" },
                                  { "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "qwen7b_grpo_fp8" } };
  Points want[2];
  gsize len = 0;
  sqlite3 *db = dw_fx_mlflow_sqlite_create (dst);

  (void)data;
  for (guint r = 0; r < 2; r++)
    {
      points_init (&want[r]);
      dw_fx_mlflow_sqlite_run (db, 1, "verl_gsm8k", runs[r][0], runs[r][1]);
    }
  for (gint64 s = 1; s <= 20; s++)
    for (guint r = 0; r < 2; r++)
      {
        double kl = s == 4 ? NAN : g_rand_double_range (rnd, -1e-3, 1e-3);
        double is = s == 5 ? INFINITY : s == 6 ? -INFINITY : g_rand_double_range (rnd, 0.5, 2);
        /* verl's _sanitize_key: "@" → "_at_" */
        dw_fx_mlflow_sqlite_log (db, runs[r][0], "rollout_corr/kl", kl, 1767225600000 + s, s);
        dw_fx_mlflow_sqlite_log (db, runs[r][0], "rollout_corr/rollout_is_mean", is,
                                 1767225600000 + s, s);
        dw_fx_mlflow_sqlite_log (db, runs[r][0], "val-core/gsm8k/acc/mean_at_1", 0.25 * r,
                                 1767225600000 + s, s);
        points_add (&want[r], "rollout_corr/kl", s, kl);
        points_add (&want[r], "rollout_corr/rollout_is_mean", s, is);
        points_add (&want[r], "val-core/gsm8k/acc/mean_at_1", s, 0.25 * r);
      }
  sqlite3_close (db);
  g_assert_true (g_file_get_contents (dst, &head, &len, NULL));
  g_assert_cmpint (dw_format_sniff (dst, (const guint8 *)head, len), ==, DW_FORMAT_MLFLOW_SQLITE);
  g_assert_cmpint (dw_test_run_cli (args, NULL, &out, &err), ==, 0);
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (DwStore) s = dw_store_open (store, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (n_runs (s), ==, 2);
    for (guint r = 0; r < 2; r++)
      {
        Points got;
        points_init (&got);
        store_points (s, run_named (s, runs[r][1]), &got);
        assert_points_equal (&got, &want[r]);
        points_clear (&got);
        points_clear (&want[r]);
      }
  }
}

/* Reading a foreign MLflow store must not hold our store's write lock (issue 14: the read of a
 * foreign file used to run inside the store's transaction). Real case: verl's /tmp/mlruns.db
 * while the trainer commits to it (a rollback-journal SQLite file locked EXCLUSIVE by the
 * trainer's commit, so our read waits in SQLite's busy handler), and `watch` or the window
 * writing to the same store meanwhile. That other writer (a 300 ms busy timeout) is never
 * refused while the ingest waits on the foreign file; the rows come in on the next ingest. */
typedef struct
{
  DwIngester *ing;
  const char *path;
  int done;
  gboolean ok;
} IngestJob;

static gpointer
ingest_worker (gpointer data)
{
  IngestJob *job = data;
  g_autoptr (GError) error = NULL;
  DwIngestReport r;

  dw_ingest_report_init (&r);
  job->ok = dw_ingester_ingest_path (job->ing, job->path, &r, &error);
  dw_ingest_report_clear (&r);
  g_atomic_int_set (&job->done, 1);
  return NULL;
}

static void
test_mlflow_read_unlocked (Fixture *f, gconstpointer data)
{
  g_autofree char *dst = g_build_filename (f->dir, "mlruns.db", NULL);
  g_autofree char *store_path = g_build_filename (f->dir, "store.db", NULL);
  const char *uuid = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
  IngestJob job = { f->ing, dst, 0, FALSE };
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) other = NULL;
  g_autoptr (GThread) thread = NULL;
  guint attempts = 0, refused = 0;
  sqlite3 *db = dw_fx_mlflow_sqlite_create (dst);
  sqlite3 *locker = NULL;
  gint64 t0;

  (void)data;
  dw_fx_mlflow_sqlite_run (db, 1, "verl_gsm8k", uuid, "qwen7b_grpo");
  for (gint64 s = 1; s <= 3; s++)
    dw_fx_mlflow_sqlite_log (db, uuid, "rollout_corr/kl", 0.001 * (double)s, 1767225600000 + s, s);
  sqlite3_close (db);
  ingest (f, dst, NULL);
  g_assert_cmpint (sqlite3_open (dst, &db), ==, SQLITE_OK);
  for (gint64 s = 4; s <= 6; s++)
    dw_fx_mlflow_sqlite_log (db, uuid, "rollout_corr/kl", 0.001 * (double)s, 1767225600000 + s, s);
  sqlite3_close (db);

  /* the trainer's commit holds the foreign file */
  g_assert_cmpint (sqlite3_open (dst, &locker), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (locker, "BEGIN EXCLUSIVE", NULL, NULL, NULL), ==, SQLITE_OK);
  other = dw_store_open (store_path, &error);
  g_assert_no_error (error);
  dw_store_set_busy_timeout (other, 300);
  thread = g_thread_new ("ingest", ingest_worker, &job);
  t0 = g_get_monotonic_time ();
  while (!g_atomic_int_get (&job.done) && g_get_monotonic_time () - t0 < 10 * G_USEC_PER_SEC)
    {
      g_autoptr (GError) busy = NULL;
      g_autofree char *name = g_strdup_printf ("other-writer-%u", attempts);

      attempts++;
      if (!dw_store_begin (other, &busy)
          || dw_store_ensure_run (other, name, "unknown", NULL, &busy) == 0
          || !dw_store_commit (other, &busy))
        {
          g_test_message ("refused after %.2f s: %s",
                          (double)(g_get_monotonic_time () - t0) / G_USEC_PER_SEC, busy->message);
          refused++;
          if (dw_store_in_transaction (other))
            dw_store_rollback (other);
        }
      g_usleep (100 * 1000);
    }
  g_thread_join (g_steal_pointer (&thread));
  sqlite3_exec (locker, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_close (locker);
  g_assert_true (job.ok);
  /* the ingest waited on the foreign file for seconds (SQLite's busy wait) */
  g_assert_cmpint (g_get_monotonic_time () - t0, >, G_USEC_PER_SEC);
  g_assert_cmpuint (attempts, >=, 5);
  g_assert_cmpuint (refused, ==, 0);

  /* the rows the locked read could not get come in on the next ingest */
  ingest (f, dst, NULL);
  {
    Points got;
    points_init (&got);
    store_points (f->store, run_named (f->store, "qwen7b_grpo"), &got);
    g_assert_cmpuint (got.n, ==, 6);
    points_clear (&got);
  }
}

/* The bare metrics table of tests/data/ingest/mlflow.db (no runs table): runs are named by
 * their run_uuid. */
static void
test_mlflow_bare (Fixture *f, gconstpointer data)
{
  g_autofree char *src = g_build_filename (g_getenv ("DW_TEST_DATA"), "ingest", "mlflow.db", NULL);
  g_autoptr (GPtrArray) runs = NULL;

  (void)data;
  ingest (f, src, NULL);
  runs = dw_store_list_runs (f->store, NULL);
  g_assert_cmpuint (runs->len, ==, 1);
  g_assert_cmpuint (strlen (((DwRunInfo *)runs->pdata[0])->name), >, 0);
  g_assert_cmpstr (((DwRunInfo *)runs->pdata[0])->framework, ==, "mlflow");
}

/* ---- trackio ------------------------------------------------------------------------------ */

/* verl's Tracking(trackio): trackio.init(project=project_name, name=experiment_name) and
 * trackio.log(data, step); what orjson writes after serialize_values(). */
static void
trackio_log_step (sqlite3 *db, gboolean ids, const char *run_id, const char *run, gint64 step,
                  GRand *rnd, Points *want)
{
  double kl = g_rand_double_range (rnd, -1e-3, 1e-3);
  double is = g_rand_double_range (rnd, 0.5, 2);
  gint64 len = g_rand_int_range (rnd, 100, 4000);
  g_autofree char *kl_s = dw_fx_py_repr (kl), *is_s = dw_fx_py_repr (is);
  g_autofree char *ts
    = g_strdup_printf ("2026-01-01T00:%02d:%02d.%06d+00:00", (int)(step / 60) % 60,
                       (int)(step % 60), (int)(step * 1234 % 1000000));
  g_autofree char *json = NULL;

  if (step == 3)
    json = g_strdup_printf ("{\"rollout_corr/kl\":\"NaN\",\"rollout_corr/rollout_is_mean\":"
                            "\"Infinity\",\"response_length/mean\":%" G_GINT64_FORMAT
                            ",\"note\":\"text is not a metric\",\"val\":{\"acc\":-0.0}}",
                            len);
  else
    json = g_strdup_printf ("{\"rollout_corr/kl\":%s,\"rollout_corr/rollout_is_mean\":%s,"
                            "\"response_length/mean\":%" G_GINT64_FORMAT ",\"val\":{\"acc\":%s}}",
                            kl_s, is_s, len, is_s);
  dw_fx_trackio_log (db, ids, run_id, run, step, ts, json);
  points_add (want, "rollout_corr/kl", step, step == 3 ? NAN : kl);
  points_add (want, "rollout_corr/rollout_is_mean", step, step == 3 ? INFINITY : is);
  points_add (want, "response_length/mean", step, (double)len);
  points_add (want, "val/acc", step, step == 3 ? -0.0 : is);
}

static guint32
file_crc (const char *path)
{
  g_autofree char *c = NULL;
  gsize n = 0;
  if (!g_file_get_contents (path, &c, &n, NULL))
    return 0;
  return dw_crc32c (0, (const guint8 *)c, n);
}

static void
test_trackio (Fixture *f, gconstpointer data)
{
  gboolean ids = GPOINTER_TO_INT (data);
  g_autofree char *tdir = g_build_filename (f->dir, "huggingface", "trackio", NULL);
  g_autofree char *path = g_build_filename (tdir, "verl_gsm8k.db", NULL);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autoptr (GRand) rnd = g_rand_new_with_seed (3);
  Points want_a, want_b, got;
  DwIngestReport r;
  sqlite3 *db;
  guint32 crc_db, crc_wal;

  points_init (&want_a);
  points_init (&want_b);
  g_assert_cmpint (g_mkdir_with_parents (tdir, 0755), ==, 0);
  db = dw_fx_trackio_create (path, ids);
  for (gint64 s = 0; s < 50; s++)
    {
      /* two experiments of one project logging at the same time */
      trackio_log_step (db, ids, "run-a1", "qwen_grpo_bf16", s, rnd, &want_a);
      if (s < 40)
        trackio_log_step (db, ids, "run-b2", "qwen_grpo_fp8", s, rnd, &want_b);
    }
  {
    g_autofree char *head = NULL;
    gsize n = 0;
    g_assert_true (g_file_get_contents (path, &head, &n, NULL));
    g_assert_cmpint (dw_format_sniff (path, (const guint8 *)head, MIN (n, 4096)), ==,
                     DW_FORMAT_TRACKIO_SQLITE);
  }
  crc_db = file_crc (path);
  crc_wal = file_crc (wal);
  ingest (f, tdir, &r);
  g_assert_cmpuint (r.n_points, ==, 90 * 4);
  g_assert_cmpuint (r.run_ids->len, ==, 2);
  g_assert_cmpuint (r.diagnostics->len, ==, 0);
  dw_ingest_report_clear (&r);
  /* read-only: neither the database nor its WAL changed */
  g_assert_cmpuint (file_crc (path), ==, crc_db);
  g_assert_cmpuint (file_crc (wal), ==, crc_wal);

  g_assert_cmpuint (n_runs (f->store), ==, 2);
  points_init (&got);
  store_points (f->store, run_named (f->store, "qwen_grpo_bf16"), &got);
  assert_points_equal (&got, &want_a);
  points_clear (&got);

  /* the run goes on: only the new rows are read */
  for (gint64 s = 40; s < 45; s++)
    trackio_log_step (db, ids, "run-b2", "qwen_grpo_fp8", s, rnd, &want_b);
  ingest (f, tdir, &r);
  g_assert_cmpuint (r.n_points, ==, 5 * 4);
  dw_ingest_report_clear (&r);
  points_init (&got);
  store_points (f->store, run_named (f->store, "qwen_grpo_fp8"), &got);
  assert_points_equal (&got, &want_b);
  points_clear (&got);
  g_assert_cmpuint (n_runs (f->store), ==, 2);

  sqlite3_close (db);
  points_clear (&want_a);
  points_clear (&want_b);
}

/* trackio's own run ids: two runs that share a name are two runs, not one. */
static void
test_trackio_same_name (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "proj.db", NULL);
  g_autoptr (GRand) rnd = g_rand_new_with_seed (4);
  Points a, b;
  sqlite3 *db = dw_fx_trackio_create (path, TRUE);

  (void)data;
  points_init (&a);
  points_init (&b);
  for (gint64 s = 0; s < 5; s++)
    trackio_log_step (db, TRUE, "id-1", "exp", s, rnd, &a);
  for (gint64 s = 0; s < 5; s++)
    trackio_log_step (db, TRUE, "id-2", "exp", s, rnd, &b);
  sqlite3_close (db);
  ingest (f, path, NULL);
  g_assert_cmpuint (n_runs (f->store), ==, 2);
  {
    Points got;
    points_init (&got);
    store_points (f->store, run_named (f->store, "exp"), &got);
    assert_points_equal (&got, &a);
    points_clear (&got);
    points_init (&got);
    store_points (f->store, run_named (f->store, "proj/exp"), &got);
    assert_points_equal (&got, &b);
    points_clear (&got);
  }
  points_clear (&a);
  points_clear (&b);
}

/* A project deleted and started again: the new database numbers its rows from 1, so it is read
 * from its first row and its values replace those of the same steps. */
static void
test_trackio_recreated (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "proj.db", NULL);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);
  g_autoptr (GRand) rnd = g_rand_new_with_seed (5);
  Points old, fresh, got;
  DwIngestReport r;
  sqlite3 *db = dw_fx_trackio_create (path, TRUE);

  (void)data;
  points_init (&old);
  points_init (&fresh);
  for (gint64 s = 0; s < 8; s++)
    trackio_log_step (db, TRUE, "id-1", "exp", s, rnd, &old);
  sqlite3_close (db);
  ingest (f, path, NULL);
  g_unlink (path);
  g_unlink (wal);
  g_unlink (shm);
  db = dw_fx_trackio_create (path, TRUE);
  for (gint64 s = 0; s < 3; s++)
    trackio_log_step (db, TRUE, "id-1", "exp", s, rnd, &fresh);
  sqlite3_close (db);
  ingest (f, path, &r);
  g_assert_cmpuint (r.n_points, ==, 3 * 4);
  dw_ingest_report_clear (&r);
  /* steps 0–2 from the new database, 3–7 as read before */
  {
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init (&it, fresh.map);
    while (g_hash_table_iter_next (&it, &k, &v))
      g_hash_table_replace (old.map, g_strdup (k), g_memdup2 (v, sizeof (double)));
  }
  points_init (&got);
  store_points (f->store, run_named (f->store, "exp"), &got);
  assert_points_equal (&got, &old);
  g_assert_cmpuint (n_runs (f->store), ==, 1);
  points_clear (&got);
  points_clear (&old);
  points_clear (&fresh);
}

static void
count_run_point (const char *run_key, const char *run_name, const char *group,
                 const DwScalarPoint *p, gpointer user_data)
{
  (void)run_key;
  (void)run_name;
  g_assert_cmpstr (group, ==, "big");
  points_add (user_data, p->tag, p->step, p->value);
}

/* A read that runs out of its time budget stops with a diagnostic and resumes where it stopped:
 * after as many reads as it takes, every row was read exactly once. */
static void
test_trackio_budget (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "big.db", NULL);
  g_autoptr (GRand) rnd = g_rand_new_with_seed (6);
  Points want, got;
  gint64 last = 0;
  guint reads = 0, interrupted = 0;
  sqlite3 *db = dw_fx_trackio_create (path, TRUE);

  (void)data;
  points_init (&want);
  points_init (&got);
  sqlite3_exec (db, "BEGIN", NULL, NULL, NULL);
  for (gint64 s = 0; s < 20000; s++)
    trackio_log_step (db, TRUE, "id", "exp", s, rnd, &want);
  sqlite3_exec (db, "COMMIT", NULL, NULL, NULL);
  sqlite3_close (db);
  while (reads < 100000)
    {
      g_autoptr (GError) error = NULL;
      guint before = got.diags->len;
      gint64 from = last;
      reads++;
      g_assert_true (
        dw_trackio_read (path, last, 5, 0, count_run_point, on_diag, &got, &last, &error));
      g_assert_no_error (error);
      if (got.diags->len > before)
        {
          interrupted++;
          g_assert_nonnull (strstr (got.diags->pdata[before],
                                    "big.db: reading took longer than 5 ms: the rest is read "
                                    "next time"));
        }
      else if (last == from)
        break; /* nothing new and not interrupted: done */
    }
  g_test_message ("%u reads, %u interrupted", reads, interrupted);
  g_assert_cmpuint (interrupted, >, 0);
  g_assert_cmpint (last, ==, 20000);
  g_assert_cmpuint (got.n, ==, 20000 * 4); /* each row exactly once */
  assert_points_equal (&got, &want);
  points_clear (&want);
  points_clear (&got);
}

/* Another SQLite database (an optuna study) is not taken for a logger's store. */
static void
test_sqlite_other (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "optuna.db", NULL);
  g_autofree char *why = NULL;
  sqlite3 *db = NULL;

  (void)data;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db,
                                 "CREATE TABLE studies (study_id INTEGER PRIMARY KEY, study_name "
                                 "VARCHAR(512)); CREATE TABLE trial_values (trial_value_id "
                                 "INTEGER PRIMARY KEY, value FLOAT)",
                                 NULL, NULL, NULL),
                   ==, SQLITE_OK);
  sqlite3_close (db);
  g_assert_cmpint (dw_sqlite_sniff (path, &why), ==, DW_FORMAT_UNKNOWN);
  g_assert_cmpstr (why, ==, "SQLite file that is neither an MLflow store nor a trackio project");
}

/* ---- followed live ------------------------------------------------------------------------ */

typedef struct
{
  DwStore *store;
  guint64 want;
} Until;

static guint64
store_total_points (DwStore *store)
{
  g_autoptr (GPtrArray) runs = dw_store_list_runs (store, NULL);
  guint64 n = 0;
  for (guint i = 0; i < runs->len; i++)
    {
      g_autoptr (GPtrArray) tags
        = dw_store_list_tags (store, ((DwRunInfo *)runs->pdata[i])->id, NULL);
      g_ptr_array_set_free_func (tags, (GDestroyNotify)dw_tag_info_free);
      for (guint k = 0; k < tags->len; k++)
        n += (guint64)((DwTagInfo *)tags->pdata[k])->n_points;
    }
  return n;
}

static gboolean
enough_points (gpointer data)
{
  Until *u = data;
  return store_total_points (u->store) >= u->want;
}

static gboolean
spin_until (Until *u, guint ms)
{
  gint64 end = g_get_monotonic_time () + (gint64)ms * 1000;
  while (!enough_points (u) && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, FALSE), g_usleep (5000);
  return enough_points (u);
}

/* `watch` on the trackio folder (created before the project exists), a swanlog folder and an
 * mlruns folder: a trackio writer committing into the WAL, a .swanlab file written in small
 * chunks, and an MLflow run folder created while followed whose metric file grows line by line. */
static void
test_follow (Fixture *f, gconstpointer data)
{
  g_autofree char *tdir = g_build_filename (f->dir, "trackio", NULL);
  g_autofree char *sdir = g_build_filename (f->dir, "swanlog", NULL);
  g_autofree char *rdir = g_build_filename (sdir, "run-20260101_000000-abc", NULL);
  g_autofree char *spath = g_build_filename (rdir, "run-abc.swanlab", NULL);
  g_autofree char *tpath = g_build_filename (tdir, "proj.db", NULL);
  g_autofree char *mlruns = g_build_filename (f->dir, "mlruns", NULL);
  g_autoptr (DwFollower) fol = dw_follower_new (f->store);
  g_autoptr (GError) error = NULL;
  g_autoptr (GRand) rnd = g_rand_new_with_seed (9);
  g_autoptr (GByteArray) run = NULL;
  Points want, swl_want;
  guint padded;
  Until u = { f->store, 0 };
  sqlite3 *db;
  FILE *out;

  (void)data;
  points_init (&want);
  points_init (&swl_want);
  g_assert_cmpint (g_mkdir_with_parents (tdir, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (sdir, 0755), ==, 0);
  dw_follower_set_delay (fol, 50);
  dw_follower_set_max_delay (fol, 200);
  g_assert_true (dw_follower_add_path (fol, tdir, &error));
  g_assert_true (dw_follower_add_path (fol, sdir, &error));
  g_assert_cmpint (g_mkdir_with_parents (mlruns, 0755), ==, 0);
  g_assert_true (dw_follower_add_path (fol, mlruns, &error));
  dw_follower_flush (fol);

  db = dw_fx_trackio_create (tpath, TRUE);
  GStatBuf st0, st1;
  g_assert_cmpint (g_stat (tpath, &st0), ==, 0);
  for (gint64 s = 0; s < 10; s++)
    {
      trackio_log_step (db, TRUE, "r1", "live", s, rnd, &want);
      u.want = (guint64)(s + 1) * 4;
      g_assert_true (spin_until (&u, 5000));
    }
  /* the database file itself did not change since creation: the points came from the WAL */
  g_assert_cmpint (g_stat (tpath, &st1), ==, 0);
  g_assert_cmpint (st1.st_size, ==, st0.st_size);
  g_assert_cmpint (st1.st_mtime, ==, st0.st_mtime);
  {
    Points got;
    points_init (&got);
    store_points (f->store, run_named (f->store, "live"), &got);
    assert_points_equal (&got, &want);
    points_clear (&got);
  }
  sqlite3_close (db);

  /* SwanLab: the file appears after following began, written 700 bytes at a time */
  run = swl_make_run (200, &swl_want, &padded);
  g_assert_cmpint (g_mkdir_with_parents (rdir, 0755), ==, 0);
  out = fopen (spath, "wb");
  g_assert_nonnull (out);
  for (gsize off = 0; off < run->len; off += 700)
    {
      fwrite (run->data + off, 1, MIN (700, run->len - off), out);
      fflush (out);
      if (off % 7000 == 0)
        g_main_context_iteration (NULL, FALSE);
    }
  fclose (out);
  u.want = 40 + 200 * G_N_ELEMENTS (swl_keys);
  g_assert_true (spin_until (&u, 10000));
  {
    Points got;
    g_autoptr (GPtrArray) runs = dw_store_list_runs (f->store, NULL);
    gint64 id = 0;
    for (guint i = 0; i < runs->len; i++)
      if (g_str_equal (((DwRunInfo *)runs->pdata[i])->framework, "swanlab"))
        id = ((DwRunInfo *)runs->pdata[i])->id;
    g_assert_cmpint (id, !=, 0);
    points_init (&got);
    store_points (f->store, id, &got);
    assert_points_equal (&got, &swl_want);
    points_clear (&got);
  }
  /* MLflow file store: a run folder created while followed, lines appended one by one */
  {
    g_autofree char *run_dir
      = dw_fx_mlflow_run (mlruns, "1", "verl_grpo", "1234567890abcdef1234567890abcdef", "live_mlf");
    Points mlf_want, got;
    guint64 before = store_total_points (f->store);
    points_init (&mlf_want);
    for (gint64 s = 1; s <= 10; s++)
      {
        double v = g_rand_double_range (rnd, -1, 1);
        g_autofree char *repr = dw_fx_py_repr (v);
        dw_fx_mlflow_log (run_dir, "rollout_corr/kl", 1767225600000 + s, repr, s, TRUE);
        points_add (&mlf_want, "rollout_corr/kl", s, v);
        u.want = before + (guint64)s;
        g_assert_true (spin_until (&u, 5000));
      }
    points_init (&got);
    store_points (f->store, run_named (f->store, "live_mlf"), &got);
    assert_points_equal (&got, &mlf_want);
    points_clear (&got);
    points_clear (&mlf_want);
  }
  dw_follower_stop (fol);
  points_clear (&want);
  points_clear (&swl_want);
}

/* The LevelDB-log framing's CRC-32 (dw_crc32_ieee) against zlib's crc32 (), which W&B and
 * SwanLab use: every length up to 300 at every alignment, whole and split in two calls. */
static void
test_crc32_ieee (void)
{
  g_autoptr (GRand) random = g_rand_new_with_seed (12);
  guint8 bytes[320];

  for (guint i = 0; i < sizeof bytes; i++)
    bytes[i] = (guint8)g_rand_int (random);
  for (gsize len = 0; len <= 300; len++)
    for (gsize start = 0; start < 8; start++)
      {
        guint32 want = (guint32)crc32 (crc32 (0L, Z_NULL, 0), bytes + start, (uInt)len);
        gsize half = len / 3;

        g_assert_cmphex (dw_crc32_ieee (0, bytes + start, len), ==, want);
        g_assert_cmphex (
          dw_crc32_ieee (dw_crc32_ieee (0, bytes + start, half), bytes + start + half, len - half),
          ==, want);
      }
  g_assert_cmphex (dw_crc32_ieee (0, (const guint8 *)"123456789", 9), ==, 0xCBF43926u);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/loggers/leveldb-log/crc32", test_crc32_ieee);
  g_test_add_func ("/loggers/swanlab/read", test_swanlab_read);
  g_test_add_func ("/loggers/swanlab/damaged", test_swanlab_damaged);
  g_test_add ("/loggers/swanlab/ingest", Fixture, NULL, fixture_setup, test_swanlab_ingest,
              fixture_teardown);
  g_test_add_func ("/loggers/mlflow-file/lines", test_mlflow_file_lines);
  g_test_add ("/loggers/mlflow-file/ingest", Fixture, NULL, fixture_setup, test_mlflow_file,
              fixture_teardown);
  g_test_add ("/loggers/mlflow-sqlite/read-outside-store-lock", Fixture, NULL, fixture_setup,
              test_mlflow_read_unlocked, fixture_teardown);
  g_test_add ("/loggers/mlflow-sqlite/bare", Fixture, NULL, fixture_setup, test_mlflow_bare,
              fixture_teardown);
  g_test_add ("/loggers/mlflow-sqlite/tmp-mlruns-db", Fixture, NULL, fixture_setup,
              test_mlflow_tmp_db, fixture_teardown);
  g_test_add ("/loggers/trackio/run-ids", Fixture, GINT_TO_POINTER (TRUE), fixture_setup,
              test_trackio, fixture_teardown);
  g_test_add ("/loggers/trackio/run-names", Fixture, GINT_TO_POINTER (FALSE), fixture_setup,
              test_trackio, fixture_teardown);
  g_test_add ("/loggers/trackio/same-name", Fixture, NULL, fixture_setup, test_trackio_same_name,
              fixture_teardown);
  g_test_add ("/loggers/trackio/recreated", Fixture, NULL, fixture_setup, test_trackio_recreated,
              fixture_teardown);
  g_test_add ("/loggers/trackio/time-budget", Fixture, NULL, fixture_setup, test_trackio_budget,
              fixture_teardown);
  g_test_add ("/loggers/sqlite/other", Fixture, NULL, fixture_setup, test_sqlite_other,
              fixture_teardown);
  g_test_add ("/loggers/follow", Fixture, NULL, fixture_setup, test_follow, fixture_teardown);
  return g_test_run ();
}
