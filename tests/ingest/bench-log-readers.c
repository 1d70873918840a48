/* bench-log-readers.c — scalars parsed per second from verl JSONL and tfevents, then ingested
 * into a store (file → SQLite, committed), and batch tokens ingested per second from safetensors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Generates the inputs in memory (JSONL: 120 keys per line like verl; tfevents: one
 * simple_value Event per record like torch's SummaryWriter), then times one full read; the same
 * bytes are written to a temporary folder and ingested with DwIngester into a fresh store.
 */
#include "dw-batch-reader.h"
#include "dw-ingester.h"
#include "dw-log-reader.h"
#include "dw-store-writer.h"
#include "logger-fixtures.h"

#include <math.h>
#include <string.h>
#include <time.h>

static guint64 n_points;

static void
count_point (const DwScalarPoint *p, gpointer user_data)
{
  (void)user_data;
  n_points += p->tag[0] != '\0';
}

static guint32 crc_table[256];

static guint32
crc32c (const guint8 *p, gsize n)
{
  guint32 c = ~0u;
  while (n--)
    c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}

static guint32
masked (guint32 c)
{
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static void
put_varint (GByteArray *b, guint64 v)
{
  while (v >= 0x80)
    {
      guint8 x = (guint8)(v | 0x80);
      g_byte_array_append (b, &x, 1);
      v >>= 7;
    }
  guint8 x = (guint8)v;
  g_byte_array_append (b, &x, 1);
}

static double
run (DwFormat fmt, const guint8 *data, gsize len, guint64 *points)
{
  g_autoptr (DwLogReader) r = dw_log_reader_new (fmt, "bench");
  n_points = 0;
  gint64 t0 = g_get_monotonic_time ();
  gsize c = dw_log_reader_feed (r, 0, data, len, TRUE, count_point, NULL, NULL);
  gint64 t1 = g_get_monotonic_time ();
  g_assert_cmpuint (c, ==, len);
  *points = n_points;
  return (double)(t1 - t0) / 1e6;
}

static char *tmp_dir;

/* Writes @data to a file and ingests it into a fresh store; returns wall seconds (best of 2),
 * *@cpu the CPU seconds of that run (the machine is shared: wall time includes waiting for a
 * core). */
static double
ingest_file (const char *name, const guint8 *data, gsize len, guint64 *points, double *cpu)
{
  g_autofree char *path = g_build_filename (tmp_dir, name, NULL);
  double best = INFINITY;

  g_assert_true (g_file_set_contents (path, (const char *)data, (gssize)len, NULL));
  for (int rep = 0; rep < 2; rep++)
    {
      g_autofree char *db = g_strdup_printf ("%s/bench-%s-%d.db", tmp_dir, name, rep);
      g_autoptr (GError) error = NULL;
      g_autoptr (DwStore) store = dw_store_open (db, &error);
      g_autoptr (DwIngester) ing = dw_ingester_new (store);
      DwIngestReport r;
      gint64 t0, t1;

      g_assert_no_error (error);
      clock_t c0;
      dw_ingest_report_init (&r);
      t0 = g_get_monotonic_time ();
      c0 = clock ();
      g_assert_true (dw_ingester_ingest_file (ing, path, NULL, &r, &error));
      t1 = g_get_monotonic_time ();
      *points = r.n_points;
      dw_ingest_report_clear (&r);
      if ((t1 - t0) / 1e6 < best)
        {
          best = (t1 - t0) / 1e6;
          *cpu = (double)(clock () - c0) / CLOCKS_PER_SEC;
        }
    }
  return best;
}

/* Ingests @path (file or folder) into a fresh store, best wall time of 2. */
static double
ingest_path (const char *name, const char *path, guint64 *points, double *cpu)
{
  double best = INFINITY;

  for (int rep = 0; rep < 2; rep++)
    {
      g_autofree char *db = g_strdup_printf ("%s/bench-%s-%d.db", tmp_dir, name, rep);
      g_autoptr (GError) error = NULL;
      g_autoptr (DwStore) store = dw_store_open (db, &error);
      g_autoptr (DwIngester) ing = dw_ingester_new (store);
      DwIngestReport r;
      gint64 t0, t1;
      clock_t c0;

      g_assert_no_error (error);
      dw_ingest_report_init (&r);
      t0 = g_get_monotonic_time ();
      c0 = clock ();
      g_assert_true (dw_ingester_ingest_path (ing, path, &r, &error));
      g_assert_no_error (error);
      t1 = g_get_monotonic_time ();
      *points = r.n_points;
      dw_ingest_report_clear (&r);
      if ((t1 - t0) / 1e6 < best)
        {
          best = (t1 - t0) / 1e6;
          *cpu = (double)(clock () - c0) / CLOCKS_PER_SEC;
        }
    }
  return best;
}

static void
print_ingest (const char *what, guint64 pts, double best, double cpu)
{
  g_print ("ingest %s into the store: %" G_GUINT64_FORMAT " scalars in %.3f s wall "
           "(%.3f s CPU): %.2f M scalars/s wall, %.2f M scalars/s CPU\n",
           what, pts, best, cpu, pts / best / 1e6, pts / cpu / 1e6);
}

/* The trackers verl can log to besides TensorBoard and JSONL: @steps steps of @keys keys each,
 * written as SwanLab, MLflow's file store, trackio and MLflow's SQL store (verl's default
 * /tmp/mlruns.db) write them (logger-fixtures.c). */
static void
bench_loggers (guint steps, guint keys)
{
  g_autoptr (GRand) rnd = g_rand_new_with_seed (11);
  g_autoptr (GByteArray) swl = dw_fx_swanlab_new (2);
  g_autofree char *swl_dir = g_build_filename (tmp_dir, "swanlog", NULL);
  g_autofree char *swl_path = g_build_filename (swl_dir, "run-bench.swanlab", NULL);
  g_autofree char *mlruns = g_build_filename (tmp_dir, "mlruns", NULL);
  g_autofree char *tdb = g_build_filename (tmp_dir, "bench_project.db", NULL);
  g_autofree char *run_dir
    = dw_fx_mlflow_run (mlruns, "1", "bench", "00112233445566778899aabbccddeeff", "bench_run");
  GString **mlf = g_new0 (GString *, keys);
  GString *json = g_string_new (NULL);
  sqlite3 *db = dw_fx_trackio_create (tdb, TRUE);
  g_autofree char *mdb_path = g_build_filename (tmp_dir, "mlruns.db", NULL);
  sqlite3 *mdb = dw_fx_mlflow_sqlite_create (mdb_path);
  guint64 pts, n = (guint64)steps * keys;
  double best, cpu;
  gint64 num = 1;

  g_assert_cmpint (g_mkdir_with_parents (swl_dir, 0755), ==, 0);
  for (guint k = 0; k < keys; k++)
    mlf[k] = g_string_new (NULL);
  sqlite3_exec (db, "BEGIN", NULL, NULL, NULL);
  dw_fx_mlflow_sqlite_run (mdb, 1, "bench", "00112233445566778899aabbccddeeff", "bench_run");
  sqlite3_exec (mdb, "BEGIN", NULL, NULL, NULL);
  for (guint s = 0; s < steps; s++)
    {
      g_string_assign (json, "{");
      for (guint k = 0; k < keys; k++)
        {
          char key[64];
          double v = g_rand_double_range (rnd, -1, 1);
          g_autofree char *repr = dw_fx_py_repr (v);
          g_autoptr (GByteArray) rec = NULL;
          g_snprintf (key, sizeof key, "rollout_corr/metric_%03u", k);
          rec = dw_fx_swanlab_scalar (num++, key, s, v, 1767225600 + s, 0);
          dw_fx_swanlab_write (swl, rec->data, rec->len);
          g_string_append_printf (mlf[k], "%" G_GINT64_FORMAT " %s %u\n", (gint64)1767225600000 + s,
                                  repr, s);
          g_string_append_printf (json, "%s\"%s\":%s", k ? "," : "", key, repr);
          dw_fx_mlflow_sqlite_log (mdb, "00112233445566778899aabbccddeeff", key, v,
                                   (gint64)1767225600000 + s, s);
        }
      g_string_append_c (json, '}');
      dw_fx_trackio_log (db, TRUE, "bench-id", "bench_run", s, "2026-01-01T00:00:00+00:00",
                         json->str);
    }
  sqlite3_exec (db, "COMMIT", NULL, NULL, NULL);
  sqlite3_close (db);
  sqlite3_exec (mdb, "COMMIT", NULL, NULL, NULL);
  sqlite3_close (mdb);
  for (guint k = 0; k < keys; k++)
    {
      g_autofree char *dir = g_build_filename (run_dir, "metrics", "rollout_corr", NULL);
      g_autofree char *name = g_strdup_printf ("metric_%03u", k);
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      g_assert_true (g_file_set_contents (path, mlf[k]->str, (gssize)mlf[k]->len, NULL));
      g_string_free (mlf[k], TRUE);
    }
  g_free (mlf);
  g_string_free (json, TRUE);

  best = INFINITY;
  for (int rep = 0; rep < 3; rep++)
    best = MIN (best, run (DW_FORMAT_SWANLAB, swl->data, swl->len, &pts));
  g_assert_cmpuint (pts, ==, n);
  g_print ("swanlab: %" G_GUINT64_FORMAT " scalars, %.1f MB in %.3f s: %.2f M scalars/s, "
           "%.0f MB/s\n",
           pts, swl->len / 1e6, best, pts / best / 1e6, swl->len / best / 1e6);
  g_assert_true (g_file_set_contents (swl_path, (const char *)swl->data, (gssize)swl->len, NULL));
  best = ingest_path ("swanlab", swl_dir, &pts, &cpu);
  g_assert_cmpuint (pts, ==, n);
  print_ingest ("swanlab", pts, best, cpu);

  best = ingest_path ("mlflow-file", mlruns, &pts, &cpu);
  g_assert_cmpuint (pts, ==, n);
  print_ingest ("mlflow-file", pts, best, cpu);

  best = ingest_path ("trackio", tdb, &pts, &cpu);
  g_assert_cmpuint (pts, ==, n);
  print_ingest ("trackio", pts, best, cpu);

  best = ingest_path ("mlflow-sqlite", mdb_path, &pts, &cpu);
  g_assert_cmpuint (pts, ==, n);
  print_ingest ("mlflow-sqlite", pts, best, cpu);
}

/* @n_steps safetensors batches of rows × cols (about half the tokens masked in). */
static void
bench_batches (guint n_steps, guint rows, guint cols)
{
  g_autofree char *dir = g_build_filename (tmp_dir, "batch-run", NULL);
  g_autofree char *bdir = g_build_filename (dir, "batches", NULL);
  g_autoptr (GRand) rnd = g_rand_new_with_seed (5);
  g_autoptr (GError) error = NULL;
  double best = INFINITY, cpu = 0;
  guint64 tokens = 0, bytes = 0;

  g_assert_cmpint (g_mkdir_with_parents (bdir, 0755), ==, 0);
  for (guint s = 1; s <= n_steps; s++)
    {
      g_autoptr (DwBatch) b = dw_batch_new (rows, cols, DW_DTYPE_F32, DW_DTYPE_U8);
      g_autofree char *name = g_strdup_printf ("step_%06u.safetensors", s);
      g_autofree char *path = g_build_filename (bdir, name, NULL);
      float *old = b->old_log_prob, *roll = b->rollout_log_prob;
      guint8 *mask = b->response_mask;

      b->step = s;
      for (guint r = 0; r < rows; r++)
        {
          guint len = (guint)g_rand_int_range (rnd, 1, (gint32)cols + 1);
          for (guint t = 0; t < cols; t++)
            {
              gsize i = (gsize)r * cols + t;
              old[i] = (float)-g_rand_double_range (rnd, 0, 4);
              roll[i] = old[i] + (float)g_rand_double_range (rnd, -0.05, 0.05);
              mask[i] = t < len;
            }
        }
      g_assert_true (dw_batch_write_safetensors (b, path, &error));
      g_assert_no_error (error);
    }
  for (int rep = 0; rep < 2; rep++)
    {
      g_autofree char *db = g_strdup_printf ("%s/bench-batches-%d.db", tmp_dir, rep);
      g_autoptr (DwStore) store = dw_store_open (db, &error);
      g_autoptr (DwIngester) ing = dw_ingester_new (store);
      DwIngestReport r;
      gint64 t0, t1;

      clock_t c0;
      dw_ingest_report_init (&r);
      t0 = g_get_monotonic_time ();
      c0 = clock ();
      g_assert_true (dw_ingester_ingest_path (ing, dir, &r, &error));
      t1 = g_get_monotonic_time ();
      g_assert_cmpuint (r.n_batches, ==, n_steps);
      tokens = r.n_tokens;
      dw_ingest_report_clear (&r);
      if ((t1 - t0) / 1e6 < best)
        {
          best = (t1 - t0) / 1e6;
          cpu = (double)(clock () - c0) / CLOCKS_PER_SEC;
        }
    }
  bytes = (guint64)n_steps * rows * cols * 9;
  g_print ("ingest safetensors batches: %u steps of %u x %u, %" G_GUINT64_FORMAT
           " valid tokens (%" G_GUINT64_FORMAT " padded), %.1f MB in %.3f s wall (%.3f s CPU): "
           "%.2f M tokens/s wall, %.2f M tokens/s CPU (%.2f M padded positions/s wall)\n",
           n_steps, rows, cols, tokens, (guint64)n_steps * rows * cols, bytes / 1e6, best, cpu,
           tokens / best / 1e6, tokens / cpu / 1e6, (double)n_steps * rows * cols / best / 1e6);
}

int
main (void)
{
  for (guint32 i = 0; i < 256; i++)
    {
      guint32 c = i;
      for (int k = 0; k < 8; k++)
        c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      crc_table[i] = c;
    }
  /* JSONL */
  GString *j = g_string_new (NULL);
  GRand *rnd = g_rand_new_with_seed (1);
  const guint lines = 20000, keys = 120;
  for (guint s = 0; s < lines; s++)
    {
      g_string_append_printf (j, "{\"step\":%u,\"data\":{", s);
      for (guint k = 0; k < keys; k++)
        {
          char num[G_ASCII_DTOSTR_BUF_SIZE];
          g_ascii_formatd (num, sizeof num, "%.17g", g_rand_double_range (rnd, -1, 1));
          g_string_append_printf (j, "%s\"rollout_corr/metric_%03u\":%s", k ? "," : "", k, num);
        }
      g_string_append (j, "}}\n");
    }
  guint64 pts;
  double best = INFINITY, cpu = 0;
  for (int rep = 0; rep < 3; rep++)
    best = MIN (best, run (DW_FORMAT_VERL_JSONL, (const guint8 *)j->str, j->len, &pts));
  g_assert_cmpuint (pts, ==, (guint64)lines * keys);
  g_print ("verl-jsonl: %" G_GUINT64_FORMAT " scalars, %.1f MB in %.3f s: %.2f M scalars/s, "
           "%.0f MB/s\n",
           pts, j->len / 1e6, best, pts / best / 1e6, j->len / best / 1e6);
  tmp_dir = g_dir_make_tmp ("dw-bench-ingest-XXXXXX", NULL);
  g_assert_nonnull (tmp_dir);
  best = ingest_file ("metrics.jsonl", (const guint8 *)j->str, j->len, &pts, &cpu);
  g_assert_cmpuint (pts, ==, (guint64)lines * keys);
  g_print ("ingest verl-jsonl into the store: %" G_GUINT64_FORMAT " scalars in %.3f s wall "
           "(%.3f s CPU): %.2f M scalars/s wall, %.2f M scalars/s CPU\n",
           pts, best, cpu, pts / best / 1e6, pts / cpu / 1e6);

  /* tfevents */
  GByteArray *tf = g_byte_array_new ();
  const guint records = 2000000;
  for (guint i = 0; i < records; i++)
    {
      g_autoptr (GByteArray) ev = g_byte_array_new ();
      g_autoptr (GByteArray) val = g_byte_array_new ();
      char tag[64];
      int tl = g_snprintf (tag, sizeof tag, "rollout_corr/metric_%03u", i % keys);
      put_varint (val, 1 << 3 | 2);
      put_varint (val, (guint64)tl);
      g_byte_array_append (val, (const guint8 *)tag, (guint)tl);
      put_varint (val, 2 << 3 | 5);
      float f = (float)g_rand_double (rnd);
      g_byte_array_append (val, (const guint8 *)&f, 4);
      double wt = 1.7e9 + i;
      put_varint (ev, 1 << 3 | 1);
      g_byte_array_append (ev, (const guint8 *)&wt, 8);
      put_varint (ev, 2 << 3 | 0);
      put_varint (ev, i / keys + 1);
      put_varint (ev, 5 << 3 | 2);
      put_varint (ev, val->len + 2);
      put_varint (ev, 1 << 3 | 2);
      put_varint (ev, val->len);
      g_byte_array_append (ev, val->data, val->len);
      guint64 n = ev->len;
      guint32 lc = masked (crc32c ((const guint8 *)&n, 8));
      guint32 dc = masked (crc32c (ev->data, ev->len));
      g_byte_array_append (tf, (const guint8 *)&n, 8);
      g_byte_array_append (tf, (const guint8 *)&lc, 4);
      g_byte_array_append (tf, ev->data, ev->len);
      g_byte_array_append (tf, (const guint8 *)&dc, 4);
    }
  best = INFINITY;
  for (int rep = 0; rep < 3; rep++)
    best = MIN (best, run (DW_FORMAT_TFEVENTS, tf->data, tf->len, &pts));
  g_assert_cmpuint (pts, ==, records);
  g_print ("tfevents: %" G_GUINT64_FORMAT " scalars, %.1f MB in %.3f s: %.2f M scalars/s, "
           "%.0f MB/s\n",
           pts, tf->len / 1e6, best, pts / best / 1e6, tf->len / best / 1e6);
  best = ingest_file ("events.out.tfevents.1700000000.bench.0", tf->data, tf->len, &pts, &cpu);
  g_assert_cmpuint (pts, ==, records);
  g_print ("ingest tfevents into the store: %" G_GUINT64_FORMAT " scalars in %.3f s wall "
           "(%.3f s CPU): %.2f M scalars/s wall, %.2f M scalars/s CPU\n",
           pts, best, cpu, pts / best / 1e6, pts / cpu / 1e6);
  bench_batches (40, 64, 2048);
  bench_loggers (10000, keys);
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmp_dir);
    g_assert_cmpint (system (cmd), ==, 0);
  }
  g_free (tmp_dir);
  g_byte_array_unref (tf);
  g_string_free (j, TRUE);
  g_rand_free (rnd);
  return 0;
}
