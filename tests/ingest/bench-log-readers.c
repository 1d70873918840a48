/* bench-log-readers.c — scalars per second from every log format: parsed in memory, and ingested
 * into a fresh store by a real `driftwatch-cli ingest`; batch tokens ingested per second
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The inputs are generated at the shape real runs have: 120 keys per step like verl's
 * rollout-correction metrics, values written as the logger writes them (Python repr for verl's
 * console, JSONL, MLflow, trackio and W&B; float32 Event protobufs for tfevents; SwanLab's
 * LevelDB-log records), into files of a temporary folder. Each format is then ingested three
 * times by `$DW_CLI ingest --quiet --db FRESH PATH`, a new store every time, and the median wall
 * time and the median CPU time (user + system of the child, from wait4) are printed: the wall time
 * is the figure the issue judges (≥ 1 M scalars/s), the CPU time the one to compare on a loaded
 * machine. Every ingest is checked to have stored all the scalars.
 *
 * Usage: bench-log-readers [--write-only DIR] — with --write-only, the inputs are written into
 * DIR (kept) and nothing is timed: for profiling `driftwatch-cli ingest` on them.
 */
#include "dw-batch-reader.h"
#include "dw-ingester.h"
#include "dw-log-reader.h"
#include "dw-store-writer.h"
#include "logger-fixtures.h"

#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include <glib/gstdio.h>

#define BENCH_KEYS 120

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

/* Times the in-memory parse of @data (best of 3) and prints it. */
static void
bench_parse (const char *name, DwFormat format, const guint8 *data, gsize len, guint64 expected)
{
  double best = INFINITY;
  guint64 points = 0;

  for (int rep = 0; rep < 3; rep++)
    best = MIN (best, run (format, data, len, &points));
  g_assert_cmpuint (points, ==, expected);
  g_print ("%s: %" G_GUINT64_FORMAT " scalars, %.1f MB in %.3f s: %.2f M scalars/s, %.0f MB/s\n",
           name, points, len / 1e6, best, points / best / 1e6, len / best / 1e6);
}

static char *tmp_dir;

static int
compare_doubles (const void *a, const void *b)
{
  double left = *(const double *)a, right = *(const double *)b;

  return (left > right) - (left < right);
}

/* The number of points in the store @db. */
static guint64
store_points (const char *db)
{
  sqlite3 *handle = NULL;
  sqlite3_stmt *stmt = NULL;
  guint64 count;

  g_assert_cmpint (sqlite3_open_v2 (db, &handle, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (handle, "SELECT count(*) FROM points", -1, &stmt, NULL), ==,
                   SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  count = (guint64)sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (handle);
  return count;
}

/* One `driftwatch-cli ingest --quiet --db @db @path`: its wall seconds, *@cpu its user + system
 * seconds. */
static double
cli_ingest_once (const char *db, const char *path, double *cpu)
{
  const char *argv[] = { g_getenv ("DW_CLI"), "ingest", "--quiet", "--db", db, path, NULL };
  g_autoptr (GError) error = NULL;
  struct rusage usage;
  GPid pid;
  int status;
  gint64 start = g_get_monotonic_time ();

  g_assert_nonnull (argv[0]);
  if (!g_spawn_async (NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
                      &error))
    g_error ("%s: %s", argv[0], error->message);
  g_assert_cmpint (wait4 (pid, &status, 0, &usage), ==, pid);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  *cpu = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec
         + usage.ru_stime.tv_usec / 1e6;
  return (g_get_monotonic_time () - start) / 1e6;
}

/* Ingests @path three times into fresh stores with the CLI and prints the median wall and CPU
 * rates; every run must store @expected points. */
static void
bench_cli_ingest (const char *name, const char *path, guint64 expected)
{
  double walls[3], cpus[3];

  for (int rep = 0; rep < 3; rep++)
    {
      g_autofree char *db = g_strdup_printf ("%s/bench-%s-%d.db", tmp_dir, name, rep);
      g_autofree char *wal = g_strdup_printf ("%s-wal", db);
      g_autofree char *shm = g_strdup_printf ("%s-shm", db);

      walls[rep] = cli_ingest_once (db, path, &cpus[rep]);
      g_assert_cmpuint (store_points (db), ==, expected);
      g_remove (db);
      g_remove (wal);
      g_remove (shm);
    }
  qsort (walls, 3, sizeof walls[0], compare_doubles);
  qsort (cpus, 3, sizeof cpus[0], compare_doubles);
  g_print ("ingest %s into the store: %" G_GUINT64_FORMAT " scalars, driftwatch-cli ingest into a "
           "fresh store, median of 3: %.3f s wall (%.3f s CPU): %.2f M scalars/s wall, %.2f M "
           "scalars/s CPU\n",
           name, expected, walls[1], cpus[1], expected / walls[1] / 1e6, expected / cpus[1] / 1e6);
}

static char *
bench_write (const char *name, const void *data, gsize len)
{
  char *path = g_build_filename (tmp_dir, name, NULL);

  g_assert_true (g_file_set_contents (path, data, (gssize)len, NULL));
  return path;
}

/* verl's JSONL logger: {"step":N,"data":{…}} per line, values as json.dumps writes floats. */
static GString *
make_jsonl (GRand *random, guint lines)
{
  GString *text = g_string_new (NULL);

  for (guint step = 0; step < lines; step++)
    {
      g_string_append_printf (text, "{\"step\":%u,\"data\":{", step);
      for (guint key = 0; key < BENCH_KEYS; key++)
        {
          g_autofree char *repr = dw_fx_py_repr (g_rand_double_range (random, -1, 1));
          g_string_append_printf (text, "%s\"rollout_corr/metric_%03u\":%s", key ? "," : "", key,
                                  repr);
        }
      g_string_append (text, "}}\n");
    }
  return text;
}

/* verl's console logger since 0.5 (repr values) after a printed config, and slime's dict lines. */
static GString *
make_console (GRand *random, guint lines, gboolean slime)
{
  GString *text = g_string_new (NULL);

  for (guint line = 0; line < 2000; line++)
    g_string_append_printf (text, "  config_entry_%04u: some value of the printed config\n", line);
  for (guint step = 1; step <= lines; step++)
    {
      if (slime)
        g_string_append_printf (text,
                                "[2026-01-01 00:00:00] model.py:918 - step %u: {'rollout/step': "
                                "%u",
                                step, step);
      else
        g_string_append_printf (text, "(TaskRunner pid=1234) step:%u", step);
      for (guint key = 0; key < BENCH_KEYS; key++)
        {
          g_autofree char *repr = dw_fx_py_repr (g_rand_double_range (random, -1, 1));
          if (slime)
            g_string_append_printf (text, ", 'rollout/metric_%03u': %s", key, repr);
          else
            g_string_append_printf (text, " - rollout_corr/metric_%03u:%s", key, repr);
        }
      g_string_append (text, slime ? "}\n" : "\n");
    }
  return text;
}

/* run.history().to_csv(): pandas index, _step, _runtime, _timestamp, one column per metric. */
static GString *
make_wandb_csv (GRand *random, guint rows)
{
  GString *text = g_string_new (",_step,_runtime,_timestamp");

  for (guint key = 0; key < BENCH_KEYS; key++)
    g_string_append_printf (text, ",rollout_corr/metric_%03u", key);
  g_string_append_c (text, '\n');
  for (guint row = 0; row < rows; row++)
    {
      g_string_append_printf (text, "%u,%u,%u.5,%u.25", row, row, row * 10, 1767225600 + row);
      for (guint key = 0; key < BENCH_KEYS; key++)
        {
          g_autofree char *repr = dw_fx_py_repr (g_rand_double_range (random, -1, 1));
          g_string_append_printf (text, ",%s", repr);
        }
      g_string_append_c (text, '\n');
    }
  return text;
}

/* torch's SummaryWriter: one simple_value Event per record, @records of them. */
static GByteArray *
make_tfevents (GRand *random, guint records)
{
  GByteArray *tf = g_byte_array_new ();

  for (guint i = 0; i < records; i++)
    {
      g_autoptr (GByteArray) ev = g_byte_array_new ();
      g_autoptr (GByteArray) val = g_byte_array_new ();
      char tag[64];
      int tl = g_snprintf (tag, sizeof tag, "rollout_corr/metric_%03u", i % BENCH_KEYS);
      put_varint (val, 1 << 3 | 2);
      put_varint (val, (guint64)tl);
      g_byte_array_append (val, (const guint8 *)tag, (guint)tl);
      put_varint (val, 2 << 3 | 5);
      float f = (float)g_rand_double (random);
      g_byte_array_append (val, (const guint8 *)&f, 4);
      double wt = 1.7e9 + i;
      put_varint (ev, 1 << 3 | 1);
      g_byte_array_append (ev, (const guint8 *)&wt, 8);
      put_varint (ev, 2 << 3 | 0);
      put_varint (ev, i / BENCH_KEYS + 1);
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
  return tf;
}

/* The trackers verl can log to besides TensorBoard and JSONL: @steps steps of BENCH_KEYS keys
 * each, written as SwanLab, MLflow's file store, trackio and MLflow's SQL store (verl's default
 * /tmp/mlruns.db) write them (logger-fixtures.c). Returns the SwanLab file's bytes. */
static GByteArray *
make_loggers (GRand *rnd, guint steps)
{
  GByteArray *swl = dw_fx_swanlab_new (2);
  g_autofree char *swl_dir = g_build_filename (tmp_dir, "swanlog", NULL);
  g_autofree char *swl_path = g_build_filename (swl_dir, "run-bench.swanlab", NULL);
  g_autofree char *mlruns = g_build_filename (tmp_dir, "mlruns", NULL);
  g_autofree char *tdb = g_build_filename (tmp_dir, "bench_project.db", NULL);
  g_autofree char *run_dir
    = dw_fx_mlflow_run (mlruns, "1", "bench", "00112233445566778899aabbccddeeff", "bench_run");
  GString **mlf = g_new0 (GString *, BENCH_KEYS);
  GString *json = g_string_new (NULL);
  sqlite3 *db = dw_fx_trackio_create (tdb, TRUE);
  g_autofree char *mdb_path = g_build_filename (tmp_dir, "mlruns.db", NULL);
  sqlite3 *mdb = dw_fx_mlflow_sqlite_create (mdb_path);
  gint64 num = 1;

  g_assert_cmpint (g_mkdir_with_parents (swl_dir, 0755), ==, 0);
  for (guint k = 0; k < BENCH_KEYS; k++)
    mlf[k] = g_string_new (NULL);
  sqlite3_exec (db, "BEGIN", NULL, NULL, NULL);
  dw_fx_mlflow_sqlite_run (mdb, 1, "bench", "00112233445566778899aabbccddeeff", "bench_run");
  sqlite3_exec (mdb, "BEGIN", NULL, NULL, NULL);
  for (guint s = 0; s < steps; s++)
    {
      g_string_assign (json, "{");
      for (guint k = 0; k < BENCH_KEYS; k++)
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
  for (guint k = 0; k < BENCH_KEYS; k++)
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
  g_assert_true (g_file_set_contents (swl_path, (const char *)swl->data, (gssize)swl->len, NULL));
  return swl;
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
main (int argc, char **argv)
{
  g_autoptr (GRand) random = g_rand_new_with_seed (1);
  const guint jsonl_lines = 20000, tf_records = 2000000, logger_steps = 10000;
  const guint64 logger_points = (guint64)logger_steps * BENCH_KEYS;
  gboolean write_only = argc == 3 && strcmp (argv[1], "--write-only") == 0;
  g_autoptr (GString) jsonl = NULL, verl_console = NULL, slime_console = NULL, csv = NULL;
  g_autoptr (GByteArray) tf = NULL, swanlab = NULL;
  g_autofree char *jsonl_path = NULL, *tf_path = NULL, *verl_path = NULL, *slime_path = NULL;
  g_autofree char *csv_path = NULL, *swl_dir = NULL, *mlruns = NULL, *trackio = NULL;
  g_autofree char *mlflow_db = NULL, *command = NULL;

  for (guint32 i = 0; i < 256; i++)
    {
      guint32 c = i;
      for (int k = 0; k < 8; k++)
        c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      crc_table[i] = c;
    }
  tmp_dir = write_only ? g_strdup (argv[2]) : g_dir_make_tmp ("dw-bench-ingest-XXXXXX", NULL);
  g_assert_nonnull (tmp_dir);
  g_assert_cmpint (g_mkdir_with_parents (tmp_dir, 0755), ==, 0);

  jsonl = make_jsonl (random, jsonl_lines);
  jsonl_path = bench_write ("metrics.jsonl", jsonl->str, jsonl->len);
  tf = make_tfevents (random, tf_records);
  tf_path = bench_write ("events.out.tfevents.1700000000.bench.0", tf->data, tf->len);
  verl_console = make_console (random, logger_steps, FALSE);
  verl_path = bench_write ("verl-run.log", verl_console->str, verl_console->len);
  slime_console = make_console (random, logger_steps, TRUE);
  slime_path = bench_write ("slime-run.log", slime_console->str, slime_console->len);
  csv = make_wandb_csv (random, logger_steps);
  csv_path = bench_write ("wandb_history.csv", csv->str, csv->len);
  swanlab = make_loggers (random, logger_steps);
  swl_dir = g_build_filename (tmp_dir, "swanlog", NULL);
  mlruns = g_build_filename (tmp_dir, "mlruns", NULL);
  trackio = g_build_filename (tmp_dir, "bench_project.db", NULL);
  mlflow_db = g_build_filename (tmp_dir, "mlruns.db", NULL);
  if (write_only)
    return 0;

  bench_parse ("verl-jsonl", DW_FORMAT_VERL_JSONL, (const guint8 *)jsonl->str, jsonl->len,
               (guint64)jsonl_lines * BENCH_KEYS);
  bench_parse ("tfevents", DW_FORMAT_TFEVENTS, tf->data, tf->len, tf_records);
  bench_parse ("swanlab", DW_FORMAT_SWANLAB, swanlab->data, swanlab->len, logger_points);
  bench_parse ("verl-console", DW_FORMAT_VERL_CONSOLE, (const guint8 *)verl_console->str,
               verl_console->len, logger_points);

  bench_cli_ingest ("verl-jsonl", jsonl_path, (guint64)jsonl_lines * BENCH_KEYS);
  bench_cli_ingest ("tfevents", tf_path, tf_records);
  bench_cli_ingest ("verl-console", verl_path, logger_points);
  bench_cli_ingest ("slime-console", slime_path, logger_points);
  bench_cli_ingest ("wandb-csv", csv_path, logger_points);
  bench_cli_ingest ("swanlab", swl_dir, logger_points);
  bench_cli_ingest ("mlflow-file", mlruns, logger_points);
  bench_cli_ingest ("trackio", trackio, logger_points);
  bench_cli_ingest ("mlflow-sqlite", mlflow_db, logger_points);
  bench_batches (40, 64, 2048);

  command = g_strdup_printf ("rm -rf '%s'", tmp_dir);
  g_assert_cmpint (system (command), ==, 0);
  g_free (tmp_dir);
  return 0;
}
