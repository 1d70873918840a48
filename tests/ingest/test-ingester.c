/* test-ingester.c — files and run folders into the store: exact values, no duplicates on
 * re-ingest, growing / truncated / rewritten files, bad records reported and skipped
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Expected values: tests/data/ingest/expected/<name>.tsv, derived independently of the C
 * readers by tests/ingest/make-expected.py (../shared/reference/tfevents_dump.py and
 * wandb_log.py, Python's json / csv / ast); the TensorBoard sample is also checked against
 * tfevents_dump.py run now by /usr/bin/python3.
 */
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <sqlite3.h>

#include "dw-batch-reader.h"
#include "dw-ingester.h"
#include "dw-store-writer.h"

typedef struct
{
  char *dir;
  char *db;
  DwStore *store;
  DwIngester *ing;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  (void)data;
  f->dir = g_dir_make_tmp ("dw-ingest-XXXXXX", &error);
  g_assert_no_error (error);
  f->db = g_build_filename (f->dir, "store.db", NULL);
  f->store = dw_store_open (f->db, &error);
  g_assert_no_error (error);
  f->ing = dw_ingester_new (f->store);
}

static void
rm_rf (const char *dir)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (cmd), ==, 0);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  (void)data;
  g_clear_object (&f->ing);
  g_clear_object (&f->store);
  rm_rf (f->dir);
  g_free (f->dir);
  g_free (f->db);
}

static char *
shared_path (const char *rel)
{
  return g_build_filename (g_getenv ("DW_SHARED_DIR"), "samples", rel, NULL);
}

static char *
data_path (const char *rel)
{
  return g_build_filename (g_getenv ("DW_TEST_DATA"), "ingest", rel, NULL);
}

/* (tag, step) → value, the last line of the file winning (what the store must keep) */
typedef struct
{
  GHashTable *map; /* "tag\tstep" → double* */
  GHashTable *tags;
} Expected;

static void
expected_add (Expected *e, const char *tag, gint64 step, double v)
{
  char *key = g_strdup_printf ("%s\t%" G_GINT64_FORMAT, tag, step);
  g_hash_table_replace (e->map, key, g_memdup2 (&v, sizeof v));
  g_hash_table_add (e->tags, g_strdup (tag));
}

static void
expected_init (Expected *e)
{
  e->map = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  e->tags = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
expected_clear (Expected *e)
{
  g_hash_table_unref (e->map);
  g_hash_table_unref (e->tags);
}

/* Lines "tag\tstep\tpython repr" */
static void
expected_load_tsv (Expected *e, const char *text)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) fl = NULL;
      if (lines[i][0] == '\0')
        continue;
      fl = g_strsplit (lines[i], "\t", 3);
      g_assert_cmpuint (g_strv_length (fl), ==, 3);
      expected_add (e, fl[0], g_ascii_strtoll (fl[1], NULL, 10), g_ascii_strtod (fl[2], NULL));
    }
}

static void
expected_load (Expected *e, const char *name)
{
  g_autofree char *base = g_strconcat ("expected/", name, ".tsv", NULL);
  g_autofree char *path = data_path (base);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  expected_load_tsv (e, text);
}

static gboolean
same_double (double a, double b)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  return a == b && signbit (a) == signbit (b);
}

/* Every stored point of @run equals the expected one, and nothing is missing or extra. */
static void
assert_run_equals (DwStore *store, gint64 run_id, Expected *e, const char *what)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) tags = dw_store_list_tags (store, run_id, &error);
  guint n = 0;

  g_assert_no_error (error);
  g_assert_cmpuint (tags->len, ==, g_hash_table_size (e->tags));
  for (guint i = 0; i < tags->len; i++)
    {
      DwTagInfo *t = tags->pdata[i];
      g_autoptr (DwSeries) s = dw_store_get_series (store, run_id, t->name, G_MININT64, &error);

      g_assert_no_error (error);
      g_assert_true (g_hash_table_contains (e->tags, t->name));
      for (gsize k = 0; k < s->n; k++)
        {
          g_autofree char *key = g_strdup_printf ("%s\t%" G_GINT64_FORMAT, t->name, s->steps[k]);
          double *v = g_hash_table_lookup (e->map, key);
          if (v == NULL || !same_double (*v, s->values[k]))
            g_error ("%s: %s = %.17g, expected %.17g", what, key, s->values[k], v ? *v : NAN);
          n++;
        }
      g_ptr_array_set_free_func (tags, (GDestroyNotify)dw_tag_info_free);
    }
  g_assert_cmpuint (n, ==, g_hash_table_size (e->map));
}

static gint64
only_run (DwStore *store)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) runs = dw_store_list_runs (store, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 1);
  return ((DwRunInfo *)runs->pdata[0])->id;
}

static char *
dump (DwStore *store)
{
  g_autoptr (GError) error = NULL;
  char *d = dw_store_dump (store, &error);

  g_assert_no_error (error);
  return d;
}

static void
ingest (Fixture *f, const char *path, DwIngestReport *report)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (dw_ingester_ingest_path (f->ing, path, report, &error));
  g_assert_no_error (error);
}

/* ---- every sample, alone ---------------------------------------------------------------- */

typedef struct
{
  const char *name; /* expected/<name>.tsv */
  gboolean shared;
  const char *rel;
  const char *framework;
  guint n_diags;
  gint64 diag_offset; /* of the first diagnostic, -1: not checked */
} Case;

static const Case cases[] = {
  { "verl_console_numpy1", TRUE, "verl/console_stdout_numpy1.log", "verl", 0, -1 },
  { "verl_console_legacy", TRUE, "verl/console_legacy_v0.4.log", "verl", 0, -1 },
  { "verl_console_ray_numpy2", FALSE, "verl_console_ray_numpy2.log", "verl", 2, -1 },
  { "verl_jsonl", TRUE, "verl/verl_examples/qwen2_5_0_5b_grpo_rollout_corr.jsonl", "verl", 0, -1 },
  { "verl_tb_0", TRUE,
    "verl/tensorboard_log/verl_examples/qwen2_5_0_5b_grpo_rollout_corr/"
    "events.out.tfevents.1795353214.vm.18664.0",
    "verl", 0, -1 },
  { "slime_tb", TRUE,
    "slime/tensorboard_log/slime-mis/qwen3-4B-mis/events.out.tfevents.1795353214.vm.18664.2",
    "slime", 0, -1 },
  { "torch_new_style", TRUE,
    "tfevents_edge/torch_new_style/events.out.tfevents.1795353214.vm.18664.3", "verl", 0, -1 },
  { "truncated_tail", TRUE,
    "tfevents_edge/truncated_tail/events.out.tfevents.1795353214.vm.18664.0", "verl", 0, -1 },
  { "tensorboardx", FALSE, "tensorboardx/events.out.tfevents.1767225600.host", "verl", 0, -1 },
  { "bad_crc", FALSE, "bad_crc/events.out.tfevents.1795353214.vm.18664.0", "verl", 1, 227 },
  { "slime_console", FALSE, "slime_console.log", "slime", 2, -1 },
  { "wandb_api_csv", TRUE, "wandb_emulated/api_history_to_csv.csv", "wandb", 0, -1 },
  { "wandb_panel", FALSE, "wandb_panel.csv", "wandb", 2, -1 },
  { "wandb_offline", TRUE, "wandb_emulated/offline-run-20260101_000000-r0llc0rr/run-r0llc0rr.wandb",
    "wandb", 0, -1 },
};

static void
test_sample (Fixture *f, gconstpointer data)
{
  const Case *c = data;
  g_autofree char *path = c->shared ? shared_path (c->rel) : data_path (c->rel);
  g_autoptr (GError) error = NULL;
  g_autofree char *first = NULL, *second = NULL;
  g_autoptr (GPtrArray) diags = NULL;
  g_autoptr (DwRunInfo) run = NULL;
  DwIngestReport r;
  Expected e;
  gint64 run_id;

  expected_init (&e);
  expected_load (&e, c->name);
  dw_ingest_report_init (&r);
  ingest (f, path, &r);
  run_id = only_run (f->store);
  assert_run_equals (f->store, run_id, &e, c->name);
  run = dw_store_get_run (f->store, run_id, &error);
  g_assert_cmpstr (run->framework, ==, c->framework);
  g_assert_cmpuint (r.n_files, ==, 1);

  /* bad records: reported with the file and the byte offset, stored, skipped */
  g_assert_cmpuint (r.diagnostics->len, ==, c->n_diags);
  diags = dw_store_list_diagnostics (f->store, run_id, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (diags->len, ==, c->n_diags);
  for (guint i = 0; i < r.diagnostics->len; i++)
    {
      const char *m = r.diagnostics->pdata[i];
      g_assert_true (g_str_has_prefix (m, path));
      g_assert_nonnull (strstr (m, "byte offset "));
      g_assert_true (g_str_has_prefix (diags->pdata[i], path));
    }
  if (c->diag_offset >= 0)
    {
      g_autofree char *at
        = g_strdup_printf ("%s: byte offset %" G_GINT64_FORMAT ": ", path, c->diag_offset);
      g_autofree char *stored
        = g_strdup_printf ("%s: offset %" G_GINT64_FORMAT ": ", path, c->diag_offset);
      g_assert_true (g_str_has_prefix (r.diagnostics->pdata[0], at));
      g_assert_true (g_str_has_prefix (diags->pdata[0], stored));
    }
  dw_ingest_report_clear (&r);

  /* a second ingest adds nothing */
  first = dump (f->store);
  dw_ingest_report_init (&r);
  ingest (f, path, &r);
  g_assert_cmpuint (r.n_points, ==, 0);
  g_assert_cmpuint (r.n_files_read, ==, 0);
  g_assert_cmpuint (r.diagnostics->len, ==, 0);
  dw_ingest_report_clear (&r);
  second = dump (f->store);
  g_assert_cmpstr (first, ==, second);
  expected_clear (&e);
}

/* The TensorBoard sample against the shared reference reader, run now. */
static void
test_tfevents_reference (Fixture *f, gconstpointer data)
{
  g_autofree char *path = shared_path ("verl/tensorboard_log/verl_examples/"
                                       "qwen2_5_0_5b_grpo_rollout_corr/"
                                       "events.out.tfevents.1795353214.vm.18664.0");
  g_autofree char *script
    = g_build_filename (g_getenv ("DW_SHARED_DIR"), "reference", "tfevents_dump.py", NULL);
  g_autofree char *out = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) tsv = g_string_new (NULL);
  g_auto (GStrv) lines = NULL;
  const char *argv[] = { "/usr/bin/python3", script, path, "--all", NULL };
  int status;
  Expected e;

  (void)data;
  if (!g_file_test (argv[0], G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no /usr/bin/python3");
      return;
    }
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                               &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  /* scalar lines of the dump: "@OFF: ok step=N tag='T' simple_value=V plugin=P" */
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *s = strstr (lines[i], " step=");
      const char *t = strstr (lines[i], " tag='");
      const char *v = strstr (lines[i], "' simple_value=");
      g_autofree char *step = NULL, *tag = NULL, *val = NULL;

      if (s == NULL || t == NULL || v == NULL)
        continue;
      step = g_strndup (s + 6, strcspn (s + 6, " "));
      tag = g_strndup (t + 6, (gsize)(v - (t + 6)));
      val = g_strndup (v + 15, strcspn (v + 15, " "));
      g_string_append_printf (tsv, "%s\t%s\t%s\n", tag, step, val);
    }
  g_assert_cmpuint (tsv->len, >, 0);
  expected_init (&e);
  expected_load_tsv (&e, tsv->str);
  ingest (f, path, NULL);
  assert_run_equals (f->store, only_run (f->store), &e, "tfevents_dump.py");
  expected_clear (&e);
}

/* ---- folders and runs ---------------------------------------------------------------- */

static void
write_file (const char *path, const char *text, gssize len)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, text, len, &error));
}

static void
append_file (const char *path, const char *data, gsize len)
{
  FILE *fp = fopen (path, "ab");

  g_assert_nonnull (fp);
  g_assert_cmpuint (fwrite (data, 1, len, fp), ==, len);
  fclose (fp);
}

static void
copy_file (const char *from, const char *to)
{
  g_autofree char *text = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (from, &text, &len, NULL));
  write_file (to, text, (gssize)len);
}

/* The verl sample folder is one run; for every key the JSONL float64 value wins over the float32
 * tfevents copy and the console lines, whatever order the files come in. */
static void
test_verl_folder (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = shared_path ("verl");
  g_autoptr (GError) error = NULL;
  g_autoptr (DwRunInfo) run = NULL;
  g_autoptr (GPtrArray) tags = NULL;
  DwIngestReport r;
  Expected jsonl;
  GHashTableIter it;
  gpointer k, v;
  gint64 run_id;

  (void)data;
  dw_ingest_report_init (&r);
  ingest (f, dir, &r);
  g_assert_cmpuint (r.n_files, ==, 5); /* 2 consoles, JSONL, 2 tfevents */
  g_assert_cmpuint (r.diagnostics->len, ==, 0);
  run_id = only_run (f->store);
  run = dw_store_get_run (f->store, run_id, &error);
  g_assert_cmpstr (run->name, ==, "verl");
  g_assert_cmpstr (run->framework, ==, "verl");
  g_assert_cmpint (run->first_step, ==, 0);
  g_assert_cmpint (run->last_step, ==, 5);
  dw_ingest_report_clear (&r);

  expected_init (&jsonl);
  expected_load (&jsonl, "verl_jsonl");
  g_hash_table_iter_init (&it, jsonl.map);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      g_auto (GStrv) kv = g_strsplit (k, "\t", 2);
      gint64 step = g_ascii_strtoll (kv[1], NULL, 10);
      g_autoptr (DwSeries) s = dw_store_get_series (f->store, run_id, kv[0], step - 1, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (s->n, >=, 1);
      g_assert_cmpint (s->steps[0], ==, step);
      if (!same_double (s->values[0], *(double *)v))
        g_error ("%s: %.17g, JSONL says %.17g", (char *)k, s->values[0], *(double *)v);
    }
  tags = dw_store_list_tags (f->store, run_id, &error);
  g_ptr_array_set_free_func (tags, (GDestroyNotify)dw_tag_info_free);
  g_assert_cmpuint (tags->len, ==, g_hash_table_size (jsonl.tags));
  expected_clear (&jsonl);
}

/* A folder of runs; part folders (tensorboard/, batches/) belong to their parent's run; a single
 * file given alone goes to its folder's run. */
static void
test_run_detection (Fixture *f, gconstpointer data)
{
  g_autofree char *root = g_build_filename (f->dir, "runs", NULL);
  g_autofree char *a_jsonl = g_build_filename (root, "exp-a", "metrics.jsonl", NULL);
  g_autofree char *a_tb = g_build_filename (root, "exp-a", "tensorboard",
                                            "events.out.tfevents.1795353214.vm.18664.0", NULL);
  g_autofree char *b_batch
    = g_build_filename (root, "exp-b", "batches", "step_000001.safetensors", NULL);
  g_autofree char *c_tb = g_build_filename (f->dir, "single", "exp-c", "tb",
                                            "events.out.tfevents.1795353214.vm.18664.0", NULL);
  g_autofree char *sample_tb = shared_path ("verl/tensorboard_log/verl_examples/"
                                            "qwen2_5_0_5b_grpo_rollout_corr/"
                                            "events.out.tfevents.1795353214.vm.18664.0");
  g_autofree char *sample_st = shared_path ("batch/step_000001.safetensors");
  g_autoptr (GPtrArray) runs = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) steps = NULL;
  const char *line = "{\"step\":1,\"data\":{\"rollout_corr/kl\":0.5}}\n";
  DwRunInfo *a = NULL, *b = NULL, *c = NULL;

  (void)data;
  write_file (a_jsonl, line, -1);
  copy_file (sample_tb, a_tb);
  copy_file (sample_st, b_batch);
  copy_file (sample_tb, c_tb);
  {
    g_autofree char *readme = g_build_filename (root, "README.txt", NULL);
    write_file (readme, "notes\n", -1);
  }
  ingest (f, root, NULL);
  ingest (f, c_tb, NULL);

  runs = dw_store_list_runs (f->store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 3);
  for (guint i = 0; i < runs->len; i++)
    {
      DwRunInfo *r = runs->pdata[i];
      if (g_str_equal (r->name, "exp-a"))
        a = r;
      else if (g_str_equal (r->name, "exp-b"))
        b = r;
      else if (g_str_equal (r->name, "exp-c"))
        c = r;
    }
  g_assert_nonnull (a);
  g_assert_nonnull (b);
  g_assert_nonnull (c);
  g_assert_cmpstr (a->framework, ==, "verl");
  g_assert_cmpint (a->last_step, ==, 5); /* the tfevents copy is in exp-a */
  g_assert_cmpint (b->n_batches, ==, 1);
  steps = dw_store_list_batch_steps (f->store, b->id, &error);
  g_assert_cmpuint (steps->len, ==, 1);
  g_assert_cmpint (g_array_index (steps, gint64, 0), ==, 1);
  g_assert_cmpint (c->last_step, ==, 5);
  {
    /* exp-a's JSONL value (float64, 0.5) beat the tfevents step 1 value */
    g_autoptr (DwSeries) s = dw_store_get_series (f->store, a->id, "rollout_corr/kl", 0, &error);
    g_assert_cmpfloat (s->values[0], ==, 0.5);
  }
  g_ptr_array_set_free_func (runs, (GDestroyNotify)dw_run_info_free);
}

/* ---- growing, truncated, rewritten files ------------------------------------------------ */

/* A file written in random pieces (cut anywhere, mid-line or mid-record) and ingested after
 * each piece, with tiny chunks, ends up exactly as one clean ingest of the whole file. The first
 * piece is 4 bytes: a follower may look while the logger's first line is half written (CI's
 * watch test once looked at `{"st` and never told verl's JSONL again). */
static void
check_growing (Fixture *f, const char *sample, const char *name, guint32 seed)
{
  g_autofree char *path = g_build_filename (f->dir, "grow", name, NULL);
  g_autofree char *clean_db = g_build_filename (f->dir, "clean.db", NULL);
  g_autofree char *text = NULL, *got = NULL, *want = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  gsize len, pos = 0;
  guint64 n_points = 0;

  g_assert_true (g_file_get_contents (sample, &text, &len, NULL));
  write_file (path, "", 0);
  dw_ingester_set_chunk_size (f->ing, 100);
  while (pos < len)
    {
      gsize size = pos == 0 ? 4 : (gsize)g_rand_int_range (rand, 1, (gint32)(len / 7) + 2);
      gsize piece = MIN (len - pos, size); /* MIN evaluates twice: not the call itself */
      DwIngestReport r;
      append_file (path, text + pos, piece);
      pos += piece;
      dw_ingest_report_init (&r);
      dw_ingester_ingest_file (f->ing, path, NULL, &r, &error);
      g_assert_no_error (error);
      n_points += r.n_points;
      dw_ingest_report_clear (&r);
    }
  got = dump (f->store);
  {
    g_autoptr (DwStore) clean = dw_store_open (clean_db, &error);
    g_autoptr (DwIngester) ing = dw_ingester_new (clean);
    DwIngestReport r;
    dw_ingest_report_init (&r);
    g_assert_true (dw_ingester_ingest_file (ing, path, NULL, &r, &error));
    g_assert_cmpuint (r.n_points, ==, n_points); /* nothing written twice, nothing skipped */
    dw_ingest_report_clear (&r);
    want = dump (clean);
  }
  g_assert_cmpstr (got, ==, want);
}

static void
test_growing (Fixture *f, gconstpointer data)
{
  g_autofree char *jsonl = shared_path ("verl/verl_examples/qwen2_5_0_5b_grpo_rollout_corr.jsonl");
  g_autofree char *tb = shared_path ("verl/tensorboard_log/verl_examples/"
                                     "qwen2_5_0_5b_grpo_rollout_corr/"
                                     "events.out.tfevents.1795353214.vm.18664.0");
  g_autofree char *wb
    = shared_path ("wandb_emulated/offline-run-20260101_000000-r0llc0rr/run-r0llc0rr.wandb");
  g_autofree char *csv = shared_path ("wandb_emulated/api_history_to_csv.csv");
  g_autofree char *slime = data_path ("slime_console.log");

  (void)data;
  check_growing (f, jsonl, "run.jsonl", 1);
  check_growing (f, tb, "events.out.tfevents.1795353214.vm.18664.0", 2);
  check_growing (f, wb, "run-x.wandb", 3); /* a 56 KB record split over blocks */
  check_growing (f, csv, "history.csv", 4);
  check_growing (f, slime, "slime.log", 5);
}

/* The truncated sample, then the 23 missing bytes arrive: the same as the whole file. */
static void
test_truncated_tail_completes (Fixture *f, gconstpointer data)
{
  g_autofree char *full = shared_path ("verl/tensorboard_log/verl_examples/"
                                       "qwen2_5_0_5b_grpo_rollout_corr/"
                                       "events.out.tfevents.1795353214.vm.18664.0");
  g_autofree char *cut
    = shared_path ("tfevents_edge/truncated_tail/events.out.tfevents.1795353214.vm.18664.0");
  g_autofree char *path
    = g_build_filename (f->dir, "live", "events.out.tfevents.1795353214.vm.18664.0", NULL);
  g_autofree char *text = NULL;
  gsize len, cut_len;
  DwIngestReport r;
  Expected e;

  (void)data;
  g_assert_true (g_file_get_contents (full, &text, &len, NULL));
  copy_file (cut, path);
  {
    GStatBuf st;
    g_assert_cmpint (g_stat (cut, &st), ==, 0);
    cut_len = (gsize)st.st_size;
  }
  g_assert_cmpuint (cut_len + 23, ==, len);
  dw_ingest_report_init (&r);
  ingest (f, path, &r);
  g_assert_cmpuint (r.notes->len, ==, 1);
  g_assert_nonnull (strstr (r.notes->pdata[0], "not a complete line or record yet"));
  dw_ingest_report_clear (&r);
  append_file (path, text + cut_len, 23);
  ingest (f, path, NULL);
  expected_init (&e);
  expected_load (&e, "verl_tb_0");
  assert_run_equals (f->store, only_run (f->store), &e, "completed tail");
  expected_clear (&e);
}

static char *
jsonl_lines (gint64 first, gint64 last, double offset)
{
  GString *s = g_string_new (NULL);

  for (gint64 i = first; i <= last; i++)
    g_string_append_printf (s, "{\"step\":%" G_GINT64_FORMAT ",\"data\":{\"x\":%g}}\n", i,
                            offset + (double)i);
  return g_string_free (s, FALSE);
}

/* verl's FileLogger truncates its JSONL on a restart: re-read from 0, newer values replace the
 * older ones of the same steps, and as in TensorBoard the earlier launch's points after the
 * restart step are stale and dropped; a restart is recorded and reported. */
static void
test_truncated_rewrite (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "r", "exp.jsonl", NULL);
  g_autofree char *a = jsonl_lines (1, 10, 0), *b = jsonl_lines (5, 7, 100);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwSeries) s = NULL;
  DwIngestReport r;
  gint64 run;

  (void)data;
  write_file (path, a, -1);
  ingest (f, path, NULL);
  write_file (path, b, -1); /* shorter: truncated and rewritten */
  dw_ingest_report_init (&r);
  ingest (f, path, &r);
  g_assert_cmpuint (r.n_points, ==, 3);
  g_assert_cmpuint (r.notes->len, ==, 2);
  g_assert_nonnull (strstr (r.notes->pdata[0], "truncated or rewritten"));
  g_assert_nonnull (
    strstr (r.notes->pdata[1], "a later launch of the run, starting again at step 5"));
  dw_ingest_report_clear (&r);
  run = only_run (f->store);
  s = dw_store_get_series (f->store, run, "x", G_MININT64, &error);
  g_assert_cmpuint (s->n, ==, 7); /* 1–4 of the first launch, 5–7 of the second */
  for (gsize i = 0; i < 7; i++)
    g_assert_cmpfloat (s->values[i], ==,
                       (s->steps[i] >= 5 && s->steps[i] <= 7 ? 100 : 0) + s->steps[i]);
  g_assert_cmpuint (s->n_restarts, ==, 1);
  g_assert_cmpint (s->restart_steps[0], ==, 5);
}

/* A rewritten file that already grew past the old offset: the prefix checksum catches it. */
static void
test_rewrite_longer (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "r", "exp.jsonl", NULL);
  g_autofree char *a = jsonl_lines (1, 3, 0), *b = jsonl_lines (1, 8, 1000);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwSeries) s = NULL;

  (void)data;
  write_file (path, a, -1);
  ingest (f, path, NULL);
  write_file (path, b, -1);
  ingest (f, path, NULL);
  s = dw_store_get_series (f->store, only_run (f->store), "x", G_MININT64, &error);
  g_assert_cmpuint (s->n, ==, 8);
  for (gsize i = 0; i < 8; i++)
    g_assert_cmpfloat (s->values[i], ==, 1000 + s->steps[i]);
  g_assert_cmpuint (s->n_restarts, ==, 1);
  g_assert_cmpint (s->restart_steps[0], ==, 1);
}

/* Garbage between good lines: reported at the garbage line's offset, the rest kept; appending
 * more later goes on from there. */
static void
test_garbage_lines (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "g", "exp.jsonl", NULL);
  g_autofree char *good1 = jsonl_lines (1, 2, 0), *good2 = jsonl_lines (3, 4, 0);
  g_autofree char *text = g_strconcat (good1, "}}garbage{{\n", good2, NULL);
  g_autofree char *at = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (DwSeries) s = NULL;
  g_autoptr (GPtrArray) stored = NULL;
  DwIngestReport r;
  gint64 run;

  (void)data;
  write_file (path, text, -1);
  dw_ingest_report_init (&r);
  ingest (f, path, &r);
  run = only_run (f->store);
  g_assert_cmpuint (r.diagnostics->len, ==, 1);
  at = g_strdup_printf ("%s: byte offset %zu: ", path, strlen (good1));
  g_assert_true (g_str_has_prefix (r.diagnostics->pdata[0], at));
  dw_ingest_report_clear (&r);
  stored = dw_store_list_diagnostics (f->store, run, &error);
  g_assert_cmpuint (stored->len, ==, 1);
  g_free (at);
  at = g_strdup_printf ("%s: offset %zu: ", path, strlen (good1));
  g_assert_true (g_str_has_prefix (stored->pdata[0], at));
  s = dw_store_get_series (f->store, run, "x", G_MININT64, &error);
  g_assert_cmpuint (s->n, ==, 4);
}

/* The store fails in the middle of a log (a disk that fills: here a trigger that refuses the
 * points after step 100) while the parse thread is reading the chunk after the failing one, with
 * the 100-byte chunks that hand every chunk after the first to the thread: the ingest fails
 * naming the store's error, the thread is joined (ASan/LSan: nothing leaks, nothing hangs), the
 * committed chunks stay, and once the store accepts points again the next ingest completes the
 * file exactly as one clean ingest does. */
static void
test_store_fails_mid_file (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "full", "exp.jsonl", NULL);
  g_autofree char *clean_db = g_build_filename (f->dir, "clean.db", NULL);
  g_autofree char *text = jsonl_lines (1, 200, 0), *got = NULL, *want = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (DwSeries) s = NULL;
  sqlite3 *db = NULL;

  (void)data;
  write_file (path, text, -1);
  g_assert_cmpint (sqlite3_open (f->db, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db,
                                 "CREATE TRIGGER test_full BEFORE INSERT ON points "
                                 "WHEN NEW.step > 100 BEGIN "
                                 "SELECT RAISE (ABORT, 'database or disk is full (test)'); END",
                                 NULL, NULL, NULL),
                   ==, SQLITE_OK);
  dw_ingester_set_chunk_size (f->ing, 100);
  g_assert_false (dw_ingester_ingest_path (f->ing, path, NULL, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "database or disk is full (test)"));
  g_clear_error (&error);
  s = dw_store_get_series (f->store, only_run (f->store), "x", G_MININT64, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (s->n, >=, 95); /* the chunks before the failing one (3 lines each) */
  g_assert_cmpuint (s->n, <=, 100);
  for (gsize i = 0; i < s->n; i++)
    g_assert_cmpint (s->steps[i], ==, (gint64)i + 1);

  g_assert_cmpint (sqlite3_exec (db, "DROP TRIGGER test_full", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  ingest (f, path, NULL);
  got = dump (f->store);
  {
    g_autoptr (DwStore) clean = dw_store_open (clean_db, &error);
    g_autoptr (DwIngester) ing = dw_ingester_new (clean);
    g_assert_no_error (error);
    g_assert_true (dw_ingester_ingest_file (ing, path, NULL, NULL, &error));
    g_assert_no_error (error);
    want = dump (clean);
  }
  g_assert_cmpstr (got, ==, want);
}

/* ---- batches ---------------------------------------------------------------------------- */

static void
assert_batches_equal (const DwBatch *a, const DwBatch *b)
{
  gsize n = a->rows * a->cols;

  g_assert_cmpuint (a->rows, ==, b->rows);
  g_assert_cmpuint (a->cols, ==, b->cols);
  g_assert_cmpint (a->lp_dtype, ==, b->lp_dtype);
  g_assert_cmpint (a->mask_dtype, ==, b->mask_dtype);
  g_assert_cmpint (a->flags, ==, b->flags);
  g_assert_cmpint (memcmp (a->old_log_prob, b->old_log_prob, n * dw_dtype_size (a->lp_dtype)), ==,
                   0);
  g_assert_cmpint (
    memcmp (a->rollout_log_prob, b->rollout_log_prob, n * dw_dtype_size (a->lp_dtype)), ==, 0);
  g_assert_cmpint (memcmp (a->response_mask, b->response_mask, n * dw_dtype_size (a->mask_dtype)),
                   ==, 0);
}

static void
test_batches (Fixture *f, gconstpointer data)
{
  static const char *const files[] = { "step_000001.safetensors", "step_000001.npz",
                                       "step_000001.jsonl", "step_000001_bf16.safetensors" };
  g_autoptr (GError) error = NULL;

  (void)data;
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *rel = g_build_filename ("batch", files[i], NULL);
      g_autofree char *src = shared_path (rel);
      g_autofree char *root = g_build_filename (f->dir, "b", files[i], NULL);
      g_autofree char *path = g_build_filename (root, files[i], NULL);
      g_autoptr (DwBatch) want = dw_batch_read_file (src, &error);
      g_autoptr (DwBatch) got = NULL;
      g_autoptr (GArray) seqs = NULL;
      g_autoptr (DwRunInfo) run = NULL;
      DwIngestReport r;
      gint64 n_valid = 0, want_valid = 0;

      g_assert_no_error (error);
      copy_file (src, path);
      dw_ingest_report_init (&r);
      ingest (f, root, &r);
      g_assert_cmpuint (r.n_batches, ==, 1);
      g_assert_cmpuint (r.diagnostics->len, ==, 0);
      run = dw_store_find_run (f->store, files[i], &error);
      g_assert_no_error (error);
      got = dw_store_load_batch (f->store, run->id, 1, &error);
      g_assert_no_error (error);
      assert_batches_equal (got, want);
      seqs = dw_store_get_sequence_stats (f->store, run->id, 1, &error);
      g_assert_cmpuint (seqs->len, ==, want->rows);
      for (guint k = 0; k < seqs->len; k++)
        n_valid += g_array_index (seqs, DwSequenceStats, k).n_valid;
      for (gsize k = 0; k < want->rows * want->cols; k++)
        want_valid += dw_batch_mask_value (want, k) != 0.0;
      g_assert_cmpint (n_valid, ==, want_valid);
      g_assert_cmpuint (r.n_tokens, ==, (guint64)want_valid);
      dw_ingest_report_clear (&r);
    }
}

/* A half-written batch is not remembered (read again next time); a corrupt one is reported
 * with its file and place and skipped; the good one beside it is stored. */
static void
test_bad_batches (Fixture *f, gconstpointer data)
{
  g_autofree char *src = shared_path ("batch/step_000001.safetensors");
  g_autofree char *root = g_build_filename (f->dir, "bad", NULL);
  g_autofree char *half = g_build_filename (root, "batches", "step_000002.safetensors", NULL);
  g_autofree char *bad = g_build_filename (root, "batches", "step_000003.safetensors", NULL);
  g_autofree char *good = g_build_filename (root, "batches", "step_000001.safetensors", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) steps = NULL;
  g_autoptr (GPtrArray) diags = NULL;
  DwIngestReport r;
  gsize len;
  gint64 run;

  (void)data;
  g_assert_true (g_file_get_contents (src, &text, &len, NULL));
  write_file (good, text, (gssize)len);
  write_file (half, text, (gssize)(len - 100));
  text[8] = '[';
  write_file (bad, text, (gssize)len);
  dw_ingest_report_init (&r);
  ingest (f, root, &r);
  g_assert_cmpuint (r.n_batches, ==, 1);
  g_assert_cmpuint (r.diagnostics->len, ==, 1);
  g_assert_true (g_str_has_prefix (r.diagnostics->pdata[0], bad));
  dw_ingest_report_clear (&r);
  run = only_run (f->store);
  diags = dw_store_list_diagnostics (f->store, run, &error);
  g_assert_cmpuint (diags->len, ==, 1);
  g_assert_true (g_str_has_prefix (diags->pdata[0], bad));
  /* the half-written one completes */
  copy_file (src, half);
  dw_ingest_report_init (&r);
  ingest (f, root, &r);
  g_assert_cmpuint (r.n_batches, ==, 1);
  g_assert_cmpuint (r.diagnostics->len, ==, 0);
  dw_ingest_report_clear (&r);
  /* the copies carry "step": "1" in their metadata, which beats the file name */
  steps = dw_store_list_batch_steps (f->store, run, &error);
  g_assert_cmpuint (steps->len, ==, 1);
  g_assert_cmpint (g_array_index (steps, gint64, 0), ==, 1);
}

/* ---- MLflow ----------------------------------------------------------------------------- */

static void
test_mlflow (Fixture *f, gconstpointer data)
{
  g_autofree char *path = data_path ("mlflow.db");
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  Expected e;

  (void)data;
  /* expected straight from MLflow's table */
  expected_init (&e);
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (
    sqlite3_prepare_v2 (db, "SELECT key, step, value, is_nan FROM metrics ORDER BY rowid", -1, &st,
                        NULL),
    ==, SQLITE_OK);
  while (sqlite3_step (st) == SQLITE_ROW)
    expected_add (&e, (const char *)sqlite3_column_text (st, 0), sqlite3_column_int64 (st, 1),
                  sqlite3_column_int (st, 3) ? NAN : sqlite3_column_double (st, 2));
  sqlite3_finalize (st);
  sqlite3_close (db);
  g_assert_cmpuint (g_hash_table_size (e.map), ==, 5);
  ingest (f, path, NULL);
  assert_run_equals (f->store, only_run (f->store), &e, "mlflow");
  expected_clear (&e);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/ingester/sample/%s", cases[i].name);
      g_test_add (name, Fixture, &cases[i], fixture_setup, test_sample, fixture_teardown);
    }
  g_test_add ("/ingester/tfevents-reference", Fixture, NULL, fixture_setup, test_tfevents_reference,
              fixture_teardown);
  g_test_add ("/ingester/verl-folder", Fixture, NULL, fixture_setup, test_verl_folder,
              fixture_teardown);
  g_test_add ("/ingester/run-detection", Fixture, NULL, fixture_setup, test_run_detection,
              fixture_teardown);
  g_test_add ("/ingester/growing", Fixture, NULL, fixture_setup, test_growing, fixture_teardown);
  g_test_add ("/ingester/truncated-tail-completes", Fixture, NULL, fixture_setup,
              test_truncated_tail_completes, fixture_teardown);
  g_test_add ("/ingester/truncated-rewrite", Fixture, NULL, fixture_setup, test_truncated_rewrite,
              fixture_teardown);
  g_test_add ("/ingester/rewrite-longer", Fixture, NULL, fixture_setup, test_rewrite_longer,
              fixture_teardown);
  g_test_add ("/ingester/garbage-lines", Fixture, NULL, fixture_setup, test_garbage_lines,
              fixture_teardown);
  g_test_add ("/ingester/store-fails-mid-file", Fixture, NULL, fixture_setup,
              test_store_fails_mid_file, fixture_teardown);
  g_test_add ("/ingester/batches", Fixture, NULL, fixture_setup, test_batches, fixture_teardown);
  g_test_add ("/ingester/bad-batches", Fixture, NULL, fixture_setup, test_bad_batches,
              fixture_teardown);
  g_test_add ("/ingester/mlflow", Fixture, NULL, fixture_setup, test_mlflow, fixture_teardown);
  return g_test_run ();
}
