/* test-real-logs.c — training logs as users really have them (issue 12): recognised anywhere,
 * never merged with another run, no line lost, the most precise copy kept
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The files come from log-fixtures.c; each test names the real-world case it reproduces.
 */
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sqlite3.h>

#include "dw-ingester.h"
#include "dw-test-cli.h"
#include "dw-store-writer.h"
#include "log-fixtures.h"

typedef struct
{
  char *dir;
  char *db;
  DwStore *store;
  DwIngester *ing;
} Fixture;

static void
open_store (Fixture *f, const char *name)
{
  g_autoptr (GError) error = NULL;

  g_clear_object (&f->ing);
  g_clear_object (&f->store);
  g_free (f->db);
  f->db = g_build_filename (f->dir, name, NULL);
  f->store = dw_store_open (f->db, &error);
  g_assert_no_error (error);
  f->ing = dw_ingester_new (f->store);
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  (void)data;
  f->dir = g_dir_make_tmp ("dw-real-XXXXXX", &error);
  g_assert_no_error (error);
  open_store (f, "store.db");
}

static void
rm_rf (const char *path)
{
  g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
  const char *n;

  if (d != NULL)
    while ((n = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *p = g_build_filename (path, n, NULL);
        if (g_file_test (p, G_FILE_TEST_IS_DIR) && !g_file_test (p, G_FILE_TEST_IS_SYMLINK))
          rm_rf (p);
        else
          g_unlink (p);
      }
  g_rmdir (path);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void)data;
  g_clear_object (&f->ing);
  g_clear_object (&f->store);
  rm_rf (f->dir);
  g_free (f->dir);
  g_free (f->db);
}

static void
ingest (Fixture *f, const char *path, DwIngestReport *r)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (dw_ingester_ingest_path (f->ing, path, r, &error));
  g_assert_no_error (error);
}

static char *
dump (DwStore *store)
{
  g_autoptr (GError) error = NULL;
  char *d = dw_store_dump (store, &error);

  g_assert_no_error (error);
  return d;
}

static DwRunInfo *
run_named (DwStore *store, const char *name)
{
  g_autoptr (GError) error = NULL;
  DwRunInfo *r = dw_store_find_run (store, name, &error);

  if (r == NULL)
    g_error ("no run named %s: %s", name, error ? error->message : "");
  return r;
}

static guint
n_runs (DwStore *store)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) runs = dw_store_list_runs (store, &error);

  g_assert_no_error (error);
  return runs->len;
}

/* Every tag of the fixture has exactly steps [first, last] with values of @launch (float64, or
 * float32 when @f32) in @run. */
static void
assert_values (DwStore *store, gint64 run_id, gint64 first, gint64 last, guint launch,
               double offset, gboolean f32)
{
  for (guint t = 0; t < DW_FIXTURE_N_TAGS; t++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (DwSeries) s
        = dw_store_get_series (store, run_id, dw_fixture_tags[t], G_MININT64, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (s->n, ==, (gsize)(last - first + 1));
      for (gsize i = 0; i < s->n; i++)
        {
          double want = dw_fixture_value (t, first + (gint64)i, launch, offset);
          g_assert_cmpint (s->steps[i], ==, first + (gint64)i);
          if (f32)
            want = (float)want;
          g_assert_cmpfloat (s->values[i], ==, want);
        }
    }
}

static gboolean
notes_contain (const DwIngestReport *r, const char *a, const char *b)
{
  for (guint i = 0; i < r->notes->len; i++)
    if (strstr (r->notes->pdata[i], a) != NULL && (b == NULL || strstr (r->notes->pdata[i], b)))
      return TRUE;
  return FALSE;
}

/* Real case: a current verl console log under `ray job logs` — the first `step:` line 490 KB
 * in, after the pretty-printed config (interleaved with another worker's NCCL output), a NUL
 * byte NCCL printed, sample echoes containing "step:" in prose, and tqdm's bar on the same line
 * before each metric line. */
static void
test_preamble (Fixture *f, gconstpointer data)
{
  DwFixtureConsole spec = { .project = "gsm8k_rc",
                            .experiment = "qwen05b_tis",
                            .first_step = 1,
                            .last_step = 20,
                            .preamble_bytes = 490 * 1024,
                            .ray = TRUE,
                            .nul_in_head = TRUE,
                            .tqdm = TRUE };
  g_autoptr (GString) log = dw_fixture_verl_console (&spec);
  g_autofree char *path = g_build_filename (f->dir, "job-raysubmit_abc", "driver.log", NULL);
  g_autoptr (DwRunInfo) run = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *meta = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o, *cfg;
  DwIngestReport r;

  (void)data;
  g_assert_cmpuint (strstr (log->str, "\nstep:") == NULL, ==, TRUE);
  g_assert_cmpuint ((gsize)(g_strstr_len (log->str + 40, -1, "]step:1 ") - log->str), >,
                    480 * 1024);
  dw_fixture_write (path, log->str, (gssize)log->len);
  dw_ingest_report_init (&r);
  ingest (f, path, &r);
  g_assert_cmpuint (r.n_skipped, ==, 0);
  g_assert_cmpuint (r.diagnostics->len, ==, 0);
  g_assert_cmpuint (r.n_points, ==, 20 * DW_FIXTURE_N_TAGS);
  dw_ingest_report_clear (&r);
  /* named after the experiment its config names */
  run = run_named (f->store, "qwen05b_tis");
  assert_values (f->store, run->id, 1, 20, 0, 0, FALSE);
  meta = dw_store_get_run_meta (f->store, run->id, &error);
  g_assert_no_error (error);
  g_assert_nonnull (meta);
  g_assert_true (json_parser_load_from_data (parser, meta, -1, NULL));
  o = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (o, "project"), ==, "gsm8k_rc");
  g_assert_cmpstr (json_object_get_string_member (o, "generation"), ==, "verl-0.9.0");
  g_assert_cmpstr (json_object_get_string_member (o, "generation_source"), ==, "config");
  cfg = json_object_get_object_member (o, "config");
  g_assert_cmpstr (json_object_get_string_member (cfg, "rollout_is"), ==, "token");
  g_assert_cmpstr (json_object_get_string_member (cfg, "rollout_rs"), ==, "seq_mean_k3");
  g_assert_cmpfloat (json_object_get_double_member (cfg, "rollout_rs_threshold"), ==, 0.01);
  g_assert_false (json_object_get_boolean_member (cfg, "bypass_mode"));
  g_assert_false (json_object_has_member (cfg, "_target_"));
}

/* Real cases: a README (Markdown) and a notes file with a pasted "step:0" line, a .txt holding a
 * log quoted in a code block, an optuna.db next to the logs, a checkpoint shard: none is a log,
 * each says why; exit code the same for the file and its folder (CLI test). */
static void
test_not_logs (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_build_filename (f->dir, "stuff", NULL);
  g_autofree char *readme = g_build_filename (dir, "README.md", NULL);
  g_autofree char *notes = g_build_filename (dir, "notes.txt", NULL);
  g_autofree char *quoted = g_build_filename (dir, "issue-2060.txt", NULL);
  g_autofree char *optuna = g_build_filename (dir, "optuna.db", NULL);
  g_autofree char *shard = g_build_filename (dir, "model-00001.bin", NULL);
  const char *line = "step:0 - val-core/openai/gsm8k/acc/mean@1:0.38 - actor/pg_loss:0.125\n";
  g_autofree char *md = g_strdup_printf ("# My run\n\nThe log says:\n\n```\n%s```\n", line);
  g_autofree char *txt = g_strdup_printf ("Why are the log step:0 and subsequent steps in "
                                          "different formats? At step:0 - the values were odd.\n"
                                          "```text\n%s```\n",
                                          line);
  guint8 bin[4096];
  DwIngestReport r;

  (void)data;
  dw_fixture_write (readme, md, -1);
  const char *prose = "At step:0 the loss is 0.3, at step:12 - it drops.\n";
  g_autofree char *why_notes = g_strdup_printf ("no metric line in %zu bytes", strlen (prose));
  dw_fixture_write (notes, prose, -1);
  dw_fixture_write (quoted, txt, -1);
  for (guint i = 0; i < sizeof bin; i++)
    bin[i] = (guint8)(i * 131 % 251);
  dw_fixture_write (shard, bin, sizeof bin);
  {
    sqlite3 *db = NULL;
    g_assert_cmpint (sqlite3_open (optuna, &db), ==, SQLITE_OK);
    g_assert_cmpint (
      sqlite3_exec (db, "CREATE TABLE trials (trial_id INTEGER, value REAL)", NULL, NULL, NULL), ==,
      SQLITE_OK);
    sqlite3_close (db);
  }
  dw_ingest_report_init (&r);
  ingest (f, dir, &r);
  g_assert_cmpuint (r.n_files, ==, 0);
  g_assert_cmpuint (r.n_skipped, ==, 5);
  g_assert_cmpuint (n_runs (f->store), ==, 0);
  g_assert_true (notes_contain (&r, "README.md", "a document (README.md)"));
  g_assert_true (notes_contain (&r, "notes.txt", why_notes));
  g_assert_true (notes_contain (&r, "issue-2060.txt", "no metric line"));
  g_assert_true (notes_contain (&r, "optuna.db", "SQLite file that is not an MLflow store"));
  g_assert_true (notes_contain (&r, "model-00001.bin", "binary"));
  dw_ingest_report_clear (&r);
}

/* Real case: verl's default layout tensorboard_log/<project>/<experiment>/ with three
 * experiments, one of them restarted (a second event file whose steps go back: TensorBoard
 * drops the first launch's points from the restart step on). Whole tree, or each experiment
 * folder: the same store. */
static void
test_tb_tree (Fixture *f, gconstpointer data)
{
  g_autofree char *root = g_build_filename (f->dir, "tensorboard_log", NULL);
  const char *exps[] = { "grpo_a", "grpo_b", "grpo_c" };
  g_autofree char *whole = NULL;
  DwIngestReport r;

  (void)data;
  for (guint i = 0; i < G_N_ELEMENTS (exps); i++)
    {
      g_autoptr (GByteArray) ev = dw_fixture_tfevents (1, 10, 0, i, 1.79e9);
      g_autofree char *p
        = g_strdup_printf ("%s/proj/%s/events.out.tfevents.1795353214.node-a.100.0", root, exps[i]);
      dw_fixture_write (p, ev->data, ev->len);
    }
  {
    /* grpo_b's second launch, on another host, starts again at step 6 and reaches step 8 */
    g_autoptr (GByteArray) ev = dw_fixture_tfevents (6, 8, 1, 1, 1.80e9);
    g_autofree char *p
      = g_strdup_printf ("%s/proj/grpo_b/events.out.tfevents.1795999999.node-b.200.0", root);
    dw_fixture_write (p, ev->data, ev->len);
  }
  dw_ingest_report_init (&r);
  ingest (f, f->dir, &r);
  g_assert_true (notes_contain (&r, "node-b", "starting again at step 6"));
  dw_ingest_report_clear (&r);
  g_assert_cmpuint (n_runs (f->store), ==, 3);
  for (guint i = 0; i < G_N_ELEMENTS (exps); i++)
    {
      g_autoptr (DwRunInfo) run = run_named (f->store, exps[i]);
      if (i != 1)
        assert_values (f->store, run->id, 1, 10, 0, i, TRUE);
      else
        {
          g_autoptr (GError) error = NULL;
          g_autoptr (DwSeries) s
            = dw_store_get_series (f->store, run->id, dw_fixture_tags[0], G_MININT64, &error);
          g_assert_cmpuint (s->n, ==, 8); /* 1–5 of launch 0, 6–8 of launch 1 */
          for (gsize k = 0; k < s->n; k++)
            g_assert_cmpfloat (
              s->values[k], ==,
              (float)dw_fixture_value (0, (gint64)k + 1, k < 5 ? 0 : 1, k < 5 ? 1 : 1));
          g_assert_cmpuint (s->n_restarts, ==, 1);
          g_assert_cmpint (s->restart_steps[0], ==, 6);
        }
    }
  whole = dump (f->store);
  open_store (f, "parts.db");
  for (guint i = 0; i < G_N_ELEMENTS (exps); i++)
    {
      g_autofree char *p = g_strdup_printf ("%s/proj/%s", root, exps[i]);
      ingest (f, p, NULL);
    }
  {
    g_autofree char *d = dump (f->store);
    g_assert_cmpstr (d, ==, whole);
  }
}

/* Real case: a logs/ folder of four separate console logs (four runs, each printing its own
 * experiment), plus one without a printed config: five runs, whether the folder or each file
 * is ingested. */
static void
test_logs_folder (Fixture *f, gconstpointer data)
{
  g_autofree char *logs = g_build_filename (f->dir, "logs", NULL);
  g_autofree char *whole = NULL;

  (void)data;
  for (guint i = 0; i < 5; i++)
    {
      g_autofree char *exp = g_strdup_printf ("exp%u", i);
      DwFixtureConsole spec = { .project = i < 4 ? "proj" : NULL,
                                .experiment = exp,
                                .first_step = 1,
                                .last_step = 6,
                                .offset = i,
                                .preamble_bytes = 2000 };
      g_autoptr (GString) log = dw_fixture_verl_console (&spec);
      g_autofree char *name = g_strdup_printf ("%s/train_%u.log", logs, i);
      dw_fixture_write (name, log->str, (gssize)log->len);
    }
  ingest (f, logs, NULL);
  g_assert_cmpuint (n_runs (f->store), ==, 5);
  for (guint i = 0; i < 5; i++)
    {
      g_autofree char *name = i < 4 ? g_strdup_printf ("exp%u", i) : g_strdup ("train_4");
      g_autoptr (DwRunInfo) run = run_named (f->store, name);
      assert_values (f->store, run->id, 1, 6, 0, i, FALSE);
    }
  whole = dump (f->store);
  open_store (f, "each.db");
  for (guint i = 0; i < 5; i++)
    {
      g_autofree char *name = g_strdup_printf ("%s/train_%u.log", logs, i);
      ingest (f, name, NULL);
    }
  {
    g_autofree char *d = dump (f->store);
    g_assert_cmpstr (d, ==, whole);
  }
}

/* Real case: a verl log cut at the end (no newline after the last metric line): the last step
 * is read; when the file grows and that line changes, the new values replace it. */
static void
test_unterminated (Fixture *f, gconstpointer data)
{
  DwFixtureConsole spec
    = { .first_step = 1, .last_step = 5, .preamble_bytes = 300, .no_final_newline = TRUE };
  g_autoptr (GString) log = dw_fixture_verl_console (&spec);
  g_autofree char *path = g_build_filename (f->dir, "cut", "train.log", NULL);
  g_autoptr (DwRunInfo) run = NULL;
  gsize cut;

  (void)data;
  dw_fixture_write (path, log->str, (gssize)log->len);
  ingest (f, path, NULL);
  run = run_named (f->store, "train");
  assert_values (f->store, run->id, 1, 5, 0, 0, FALSE);
  /* ingesting it again changes nothing */
  {
    g_autofree char *before = dump (f->store);
    g_autofree char *after = NULL;
    ingest (f, path, NULL);
    after = dump (f->store);
    g_assert_cmpstr (before, ==, after);
  }
  /* the writer goes on: the last line was only half of step 5 (only its first field) */
  cut = (gsize)(strrchr (log->str, '\n') - log->str) + 1;
  {
    g_autoptr (GString) half = g_string_new_len (log->str, (gssize)cut);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf (half, "step:5 - %s:%s", dw_fixture_tags[0],
                            g_ascii_dtostr (buf, sizeof buf, 123.5));
    dw_fixture_write (path, half->str, (gssize)half->len);
  }
  open_store (f, "grow.db");
  ingest (f, path, NULL);
  {
    g_autoptr (DwRunInfo) r2 = run_named (f->store, "train");
    g_autoptr (DwSeries) s
      = dw_store_get_series (f->store, r2->id, dw_fixture_tags[0], G_MININT64, NULL);
    g_assert_cmpuint (s->n, ==, 5);
    g_assert_cmpfloat (s->values[4], ==, 123.5);
  }
  dw_fixture_write (path, log->str, (gssize)log->len); /* the line completed */
  g_string_append (log, "\n");
  dw_fixture_write (path, log->str, (gssize)log->len);
  ingest (f, path, NULL);
  {
    g_autoptr (DwRunInfo) r2 = run_named (f->store, "train");
    assert_values (f->store, r2->id, 1, 5, 0, 0, FALSE);
  }
}

/* Real case: a run folder with verl's stdout (full-precision repr values, printed config naming
 * the experiment) and its tensorboard_log/<project>/<experiment>/ (float32): one run, every
 * value from the console's float64 copy, no disagreement; whichever is ingested first. A
 * TensorBoard copy that really disagrees at one step is reported, not silently replaced. And
 * verl ≤ 0.4.1's "%.3f" console: the float32 TensorBoard copy wins. */
static void
test_pair (Fixture *f, gconstpointer data)
{
  g_autofree char *run_dir = g_build_filename (f->dir, "qwen-run", NULL);
  g_autofree char *log_path = g_build_filename (run_dir, "train.log", NULL);
  g_autofree char *tb_dir = g_build_filename (run_dir, "tensorboard_log", "proj", "exp_pair", NULL);
  g_autofree char *tb_path
    = g_build_filename (tb_dir, "events.out.tfevents.1795353214.vm.1.0", NULL);
  DwFixtureConsole spec = { .project = "proj",
                            .experiment = "exp_pair",
                            .first_step = 1,
                            .last_step = 8,
                            .preamble_bytes = 4000,
                            .ray = TRUE };
  g_autoptr (GString) log = dw_fixture_verl_console (&spec);
  g_autoptr (GByteArray) ev = dw_fixture_tfevents (1, 8, 0, 0, 1.79e9);
  g_autofree char *first = NULL;
  DwIngestReport r;

  (void)data;
  dw_fixture_write (log_path, log->str, (gssize)log->len);
  dw_fixture_write (tb_path, ev->data, ev->len);
  dw_ingest_report_init (&r);
  ingest (f, run_dir, &r);
  g_assert_false (notes_contain (&r, "disagree", NULL));
  dw_ingest_report_clear (&r);
  g_assert_cmpuint (n_runs (f->store), ==, 1);
  {
    g_autoptr (DwRunInfo) run = run_named (f->store, "exp_pair");
    assert_values (f->store, run->id, 1, 8, 0, 0, FALSE);
  }
  first = dump (f->store);
  /* TensorBoard folder first, then the log */
  open_store (f, "tb-first.db");
  ingest (f, tb_dir, NULL);
  ingest (f, log_path, NULL);
  {
    g_autoptr (DwRunInfo) run = run_named (f->store, "exp_pair");
    assert_values (f->store, run->id, 1, 8, 0, 0, FALSE);
    g_assert_cmpuint (n_runs (f->store), ==, 1);
  }

  /* a disagreeing copy: launch 1's values at every step */
  {
    g_autoptr (GByteArray) other = dw_fixture_tfevents (1, 8, 1, 0, 1.79e9);
    dw_fixture_write (tb_path, other->data, other->len);
  }
  open_store (f, "conflict.db");
  dw_ingest_report_init (&r);
  ingest (f, run_dir, &r);
  g_assert_true (
    notes_contain (&r, "two sources disagree", "this copy, as precise or more, is kept"));
  g_assert_true (notes_contain (&r, "more values disagree", NULL));
  dw_ingest_report_clear (&r);
  {
    g_autoptr (DwRunInfo) run = run_named (f->store, "exp_pair");
    assert_values (f->store, run->id, 1, 8, 0, 0, FALSE);
  }

  /* %.3f console + float32 TensorBoard: TensorBoard is the more precise copy */
  {
    g_autoptr (GByteArray) same = dw_fixture_tfevents (1, 8, 0, 0, 1.79e9);
    DwFixtureConsole legacy = spec;
    g_autoptr (GString) old = NULL;
    legacy.legacy_3f = TRUE;
    old = dw_fixture_verl_console (&legacy);
    dw_fixture_write (log_path, old->str, (gssize)old->len);
    dw_fixture_write (tb_path, same->data, same->len);
  }
  open_store (f, "legacy.db");
  dw_ingest_report_init (&r);
  ingest (f, run_dir, &r);
  g_assert_false (notes_contain (&r, "disagree", NULL));
  dw_ingest_report_clear (&r);
  {
    g_autoptr (DwRunInfo) run = run_named (f->store, "exp_pair");
    assert_values (f->store, run->id, 1, 8, 0, 0, TRUE);
  }
}

/* A folder of runs (all the cases above side by side) gives the same store as each sub-folder
 * ingested on its own. */
static void
test_folder_of_runs (Fixture *f, gconstpointer data)
{
  g_autofree char *root = g_build_filename (f->dir, "runs", NULL);
  const char *subs[] = { "a", "b", "logs", "tensorboard_log" };
  g_autofree char *whole = NULL;

  (void)data;
  for (guint i = 0; i < 2; i++)
    {
      DwFixtureConsole spec = { .project = "p",
                                .experiment = i == 0 ? "ea" : "eb",
                                .first_step = 1,
                                .last_step = 4,
                                .offset = i,
                                .preamble_bytes = 70000,
                                .ray = TRUE,
                                .tqdm = TRUE };
      g_autoptr (GString) log = dw_fixture_verl_console (&spec);
      g_autoptr (GByteArray) ev = dw_fixture_tfevents (1, 4, 0, i, 1.79e9);
      g_autofree char *p = g_strdup_printf ("%s/%s/out.log", root, subs[i]);
      g_autofree char *t = g_strdup_printf (
        "%s/%s/tensorboard_log/p/%s/events.out.tfevents.1.h.1.0", root, subs[i], spec.experiment);
      dw_fixture_write (p, log->str, (gssize)log->len);
      dw_fixture_write (t, ev->data, ev->len);
    }
  for (guint i = 0; i < 2; i++)
    {
      DwFixtureConsole spec
        = { .first_step = 1, .last_step = 3, .offset = 10 + i, .preamble_bytes = 100 };
      g_autoptr (GString) log = dw_fixture_verl_console (&spec);
      g_autofree char *p = g_strdup_printf ("%s/logs/job%u.log", root, i);
      dw_fixture_write (p, log->str, (gssize)log->len);
    }
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr (GByteArray) ev = dw_fixture_tfevents (1, 5, 0, 20 + i, 1.79e9);
      g_autofree char *p
        = g_strdup_printf ("%s/tensorboard_log/q/x%u/events.out.tfevents.1.h.1.0", root, i);
      dw_fixture_write (p, ev->data, ev->len);
    }
  ingest (f, root, NULL);
  g_assert_cmpuint (n_runs (f->store), ==, 6);
  whole = dump (f->store);
  open_store (f, "each.db");
  for (guint i = 0; i < G_N_ELEMENTS (subs); i++)
    {
      g_autofree char *p = g_build_filename (root, subs[i], NULL);
      ingest (f, p, NULL);
    }
  {
    g_autofree char *d = dump (f->store);
    g_assert_cmpstr (d, ==, whole);
  }
}

/* Real case: a W&B panel's "Export CSV" of three runs (`"<run> - <metric>"` columns with
 * `__MIN`/`__MAX` buckets, empty cells where a run has no point): three runs, no fourth named
 * after the file, each with its own values; the file grown by a row adds to each. */
static void
test_wandb_panel_runs (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "exports", "wandb_export_2026.csv", NULL);
  g_autoptr (GString) csv = g_string_new ("\"Step\"");
  const char *runs[] = { "grpo-seed1", "grpo-seed2", "grpo-icepop" };

  (void)data;
  for (guint r = 0; r < 3; r++)
    g_string_append_printf (csv,
                            ",\"%s - rollout_corr/kl\",\"%s - rollout_corr/kl__MIN\","
                            "\"%s - rollout_corr/kl__MAX\"",
                            runs[r], runs[r], runs[r]);
  g_string_append_c (csv, '\n');
  for (gint64 step = 1; step <= 6; step++)
    {
      g_string_append_printf (csv, "%" G_GINT64_FORMAT, step);
      for (guint r = 0; r < 3; r++)
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          if (r == 2 && step > 4)
            g_string_append (csv, ",,,"); /* the third run stopped at step 4 */
          else
            g_string_append_printf (
              csv, ",%s,0,1", g_ascii_dtostr (buf, sizeof buf, dw_fixture_value (1, step, 0, r)));
        }
      g_string_append_c (csv, '\n');
    }
  dw_fixture_write (path, csv->str, (gssize)csv->len);
  ingest (f, path, NULL);
  g_assert_cmpuint (n_runs (f->store), ==, 3);
  for (guint r = 0; r < 3; r++)
    {
      g_autoptr (DwRunInfo) run = run_named (f->store, runs[r]);
      g_autoptr (DwSeries) s
        = dw_store_get_series (f->store, run->id, "rollout_corr/kl", G_MININT64, NULL);
      g_assert_cmpuint (s->n, ==, r == 2 ? 4 : 6);
      for (gsize k = 0; k < s->n; k++)
        g_assert_cmpfloat (s->values[k], ==, dw_fixture_value (1, (gint64)k + 1, 0, r));
    }
}

/* Real case: verl's working directory (the shared sample: stdout logs, <project>/<exp>.jsonl of
 * the file logger, tensorboard_log/<project>/<exp>/) ingested whole is one run; ingested part by
 * part (TensorBoard folder first, then the JSONL's folder) the JSONL still joins the experiment's
 * run, with the same values (JSONL's float64 over TensorBoard's float32). */
static void
test_verl_workdir_parts (Fixture *f, gconstpointer data)
{
  g_autofree char *verl = g_build_filename (g_getenv ("DW_SHARED_DIR"), "samples", "verl", NULL);
  g_autofree char *tb = g_build_filename (verl, "tensorboard_log", "verl_examples",
                                          "qwen2_5_0_5b_grpo_rollout_corr", NULL);
  g_autofree char *jdir = g_build_filename (verl, "verl_examples", NULL);
  g_autoptr (GError) error = NULL;

  (void)data;
  ingest (f, tb, NULL);
  ingest (f, jdir, NULL);
  g_assert_cmpuint (n_runs (f->store), ==, 1);
  {
    g_autoptr (DwRunInfo) run = run_named (f->store, "qwen2_5_0_5b_grpo_rollout_corr");
    g_autoptr (DwSeries) s
      = dw_store_get_series (f->store, run->id, "rollout_corr/kl", G_MININT64, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (s->n, ==, 5);
    /* the JSONL's float64 (step 1 of the sample) */
    g_assert_cmpfloat (s->values[0], ==, -0.0001761995954439044);
  }
}

static JsonObject *
meta_of (DwStore *store, const char *run_name, JsonParser *parser)
{
  g_autoptr (DwRunInfo) run = run_named (store, run_name);
  g_autofree char *meta = dw_store_get_run_meta (store, run->id, NULL);

  g_assert_nonnull (meta);
  g_assert_true (json_parser_load_from_data (parser, meta, -1, NULL));
  return json_node_get_object (json_parser_get_root (parser));
}

/* What a log says about its run. Real cases: a verl log whose start-up shows `verl==0.8.1`
 * (the release is the generation's: verl-0.8.0); an IcePop config ("lower_upper" threshold, only
 * verl ≥ 0.8) and pprint's split string pieces; slime's Megatron argument dump with --use-tis; a
 * TensorBoard-only run whose keys alone tell the generation (and say it was inferred). */
static void
test_run_meta (Fixture *f, gconstpointer data)
{
  (void)data;
  {
    DwFixtureConsole spec = { .project = "p",
                              .experiment = "v081",
                              .first_step = 1,
                              .last_step = 2,
                              .preamble_bytes = 100,
                              .ray = TRUE,
                              .version = "0.8.1" };
    g_autoptr (GString) log = dw_fixture_verl_console (&spec);
    g_autofree char *p = g_build_filename (f->dir, "a", "v.log", NULL);
    g_autoptr (JsonParser) parser = json_parser_new ();
    JsonObject *o;
    dw_fixture_write (p, log->str, (gssize)log->len);
    ingest (f, p, NULL);
    o = meta_of (f->store, "v081", parser);
    g_assert_cmpstr (json_object_get_string_member (o, "framework_version"), ==, "0.8.1");
    g_assert_cmpstr (json_object_get_string_member (o, "generation"), ==, "verl-0.8.0");
    g_assert_cmpstr (json_object_get_string_member (o, "generation_source"), ==, "log");
  }
  {
    const char *log
      = "(TaskRunner pid=1) {'algorithm': {'rollout_correction': {'rollout_is': 'token',\n"
        "(WorkerDict pid=2) [rank0] NCCL INFO Bootstrap\n"
        "(TaskRunner pid=1)                                       'rollout_is_threshold': "
        "'0.5_5.0'}},\n"
        "(TaskRunner pid=1)  'trainer': {'experiment_name': ('icepop_'\n"
        "(TaskRunner pid=1)                                  'run'),\n"
        "(TaskRunner pid=1)              'project_name': 'p'}}\n"
        "(TaskRunner pid=1) step:1 - rollout_corr/rollout_is_oob_ratio:0.01\n";
    g_autofree char *p = g_build_filename (f->dir, "b", "ice.log", NULL);
    g_autoptr (JsonParser) parser = json_parser_new ();
    JsonObject *o, *cfg;
    dw_fixture_write (p, log, -1);
    ingest (f, p, NULL);
    o = meta_of (f->store, "icepop_run", parser);
    g_assert_cmpstr (json_object_get_string_member (o, "generation"), ==, "verl-0.9.0");
    g_assert_cmpstr (json_object_get_string_member (o, "generation_source"), ==, "config");
    cfg = json_object_get_object_member (o, "config");
    g_assert_cmpstr (json_object_get_string_member (cfg, "rollout_is_threshold"), ==, "0.5_5.0");
  }
  {
    const char *log
      = "------------------------ arguments ------------------------\n"
        "  custom_tis_function_path ........................ "
        "slime.backends.megatron_utils.loss.icepop_function\n"
        "  lr .............................................. 1e-06\n"
        "  tb_experiment_name .............................. qwen3-4B-mis\n"
        "  tb_project_name ................................. slime-mis\n"
        "  tis_clip ........................................ 2.0\n"
        "  tis_clip_low .................................... 0.5\n"
        "  use_tis ......................................... True\n"
        "-------------------- end of arguments ---------------------\n"
        "[2026-08-21 10:00:00] model.py:918 - step 0: {'train/loss': 0.5, 'train/tis': 1.01, "
        "'train/step': 0}\n";
    g_autofree char *p = g_build_filename (f->dir, "c", "slime.log", NULL);
    g_autoptr (JsonParser) parser = json_parser_new ();
    JsonObject *o, *cfg;
    dw_fixture_write (p, log, -1);
    ingest (f, p, NULL);
    o = meta_of (f->store, "qwen3-4B-mis", parser);
    g_assert_cmpstr (json_object_get_string_member (o, "generation"), ==, "slime");
    g_assert_cmpstr (json_object_get_string_member (o, "project"), ==, "slime-mis");
    cfg = json_object_get_object_member (o, "config");
    g_assert_true (json_object_get_boolean_member (cfg, "use_tis"));
    g_assert_cmpfloat (json_object_get_double_member (cfg, "tis_clip"), ==, 2.0);
    g_assert_cmpfloat (json_object_get_double_member (cfg, "tis_clip_low"), ==, 0.5);
    g_assert_cmpstr (json_object_get_string_member (cfg, "custom_tis_function_path"), ==,
                     "slime.backends.megatron_utils.loss.icepop_function");
    g_assert_false (json_object_has_member (cfg, "lr"));
    {
      /* slime's own TensorBoard folder tensorboard_log/<tb_project_name>/<tb_experiment_name>
       * joins the run of the console log that printed those arguments */
      g_autofree char *tb = g_build_filename (g_getenv ("DW_SHARED_DIR"), "samples", "slime",
                                              "tensorboard_log", "slime-mis", "qwen3-4B-mis", NULL);
      guint before = n_runs (f->store);
      ingest (f, tb, NULL);
      g_assert_cmpuint (n_runs (f->store), ==, before);
      g_autoptr (DwRunInfo) run = run_named (f->store, "qwen3-4B-mis");
      g_assert_cmpint (run->last_step, ==, 5);
    }
  }
  {
    /* a launcher that prints slime's parsed arguments with print(args): argparse's Namespace
     * repr, attributes sorted by name; the keys are the argparse dests of the schema's flags
     * (--custom-tis-function-path → custom_tis_function_path), others are not kept */
    const char *log
      = "Namespace(actor_num_nodes=1, calculate_per_token_loss=True, "
        "custom_tis_function_path='slime.backends.megatron_utils.loss.icepop_function', "
        "eps_clip=0.2, get_mismatch_metrics=False, lr=1e-06, tis_clip=5.0, tis_clip_low=0.5, "
        "use_rollout_logprobs=False, use_tis=True)\n"
        "[2026-08-21 10:00:00] model.py:918 - step 0: {'train/loss': 0.5, 'train/tis': 1.01, "
        "'train/step': 0}\n";
    g_autofree char *p = g_build_filename (f->dir, "ns", "namespace.log", NULL);
    g_autoptr (JsonParser) parser = json_parser_new ();
    JsonObject *o, *cfg;
    dw_fixture_write (p, log, -1);
    ingest (f, p, NULL);
    o = meta_of (f->store, "namespace", parser);
    g_assert_cmpstr (json_object_get_string_member (o, "generation"), ==, "slime");
    cfg = json_object_get_object_member (o, "config");
    g_assert_true (json_object_get_boolean_member (cfg, "use_tis"));
    g_assert_true (json_object_get_boolean_member (cfg, "calculate_per_token_loss"));
    g_assert_cmpfloat (json_object_get_double_member (cfg, "tis_clip"), ==, 5.0);
    g_assert_cmpfloat (json_object_get_double_member (cfg, "tis_clip_low"), ==, 0.5);
    g_assert_cmpstr (json_object_get_string_member (cfg, "custom_tis_function_path"), ==,
                     "slime.backends.megatron_utils.loss.icepop_function");
    g_assert_cmpuint (json_object_get_size (cfg), ==, 5);
  }
  {
    g_autoptr (GByteArray) ev = dw_fixture_tfevents (1, 3, 0, 0, 1.79e9);
    g_autofree char *p = g_build_filename (f->dir, "d", "tensorboard_log", "p", "tb_only",
                                           "events.out.tfevents.1.h.1.0", NULL);
    g_autoptr (JsonParser) parser = json_parser_new ();
    JsonObject *o;
    dw_fixture_write (p, ev->data, ev->len);
    ingest (f, p, NULL);
    o = meta_of (f->store, "tb_only", parser);
    g_assert_cmpstr (json_object_get_string_member (o, "generation"), ==, "verl-0.9.0");
    g_assert_cmpstr (json_object_get_string_member (o, "generation_source"), ==, "inferred");
    g_assert_cmpstr (json_object_get_string_member (o, "project"), ==, "p");
  }
}

static int
cli (char **out, char **err, ...)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  va_list ap;
  const char *a;
  int rc;

  va_start (ap, err);
  while ((a = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (args, (gpointer)a);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  rc = dw_test_run_cli ((const char *const *)args->pdata, NULL, out, err);
  return rc;
}

/* driftwatch-cli: the same exit code for a file that is no log and for the folder holding it,
 * each with the reason; `ingest --name`; `runs` shows the config and generation the log printed;
 * `recompute --run R` starts from that config without --preset/--config. */
static void
test_cli (Fixture *f, gconstpointer data)
{
  g_autofree char *docs = g_build_filename (f->dir, "docs", NULL);
  g_autofree char *readme = g_build_filename (docs, "README.md", NULL);
  g_autofree char *run_dir = g_build_filename (f->dir, "r1", NULL);
  g_autofree char *log_path = g_build_filename (run_dir, "train.log", NULL);
  g_autofree char *batch = g_build_filename (run_dir, "batches", "step_000001.safetensors", NULL);
  g_autofree char *sample = g_build_filename (g_getenv ("DW_SHARED_DIR"), "samples", "batch",
                                              "step_000001.safetensors", NULL);
  g_autofree char *db = g_build_filename (f->dir, "cli.db", NULL);
  DwFixtureConsole spec = { .project = "p1",
                            .experiment = "e1",
                            .first_step = 1,
                            .last_step = 3,
                            .preamble_bytes = 1000,
                            .ray = TRUE,
                            .g2_config = TRUE };
  g_autoptr (GString) log = dw_fixture_verl_console (&spec);

  (void)data;
  dw_fixture_write (readme, "# run\n\n```\nstep:1 - actor/pg_loss:0.5\n```\n", -1);
  dw_fixture_write (log_path, log->str, (gssize)log->len);
  {
    g_autofree char *bytes = NULL;
    gsize len;
    g_assert_true (g_file_get_contents (sample, &bytes, &len, NULL));
    dw_fixture_write (batch, bytes, (gssize)len);
  }
  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *out = NULL, *err = NULL;
      int rc = cli (&out, &err, "ingest", "--db", db, i == 0 ? readme : docs, NULL);
      g_assert_cmpint (rc, ==, 1);
      g_assert_nonnull (strstr (err, "nothing recognised"));
      g_assert_nonnull (
        strstr (err, "README.md: not a recognised log or batch format (a document"));
    }
  {
    g_autofree char *out = NULL, *err = NULL;
    g_assert_cmpint (cli (&out, &err, "ingest", "--db", db, "--name", "my run", run_dir, NULL), ==,
                     0);
    g_assert_nonnull (strstr (out, "run 1 \u201cmy run\u201d (verl): steps 1\u20133, 1 batches"));
  }
  {
    /* a run with a batch but no metric point yet: no "steps -1–-1" */
    g_autofree char *out = NULL, *err = NULL;
    g_autofree char *only
      = g_build_filename (f->dir, "only-batch", "batches", "step_000001.safetensors", NULL);
    g_autofree char *bytes = NULL;
    g_autofree char *only_dir = g_build_filename (f->dir, "only-batch", NULL);
    gsize len;
    g_assert_true (g_file_get_contents (sample, &bytes, &len, NULL));
    dw_fixture_write (only, bytes, (gssize)len);
    g_assert_cmpint (cli (&out, &err, "ingest", "--db", db, only_dir, NULL), ==, 0);
    g_assert_nonnull (
      strstr (out, "\u201conly-batch\u201d (unknown): no metric points yet, 1 batches"));
    g_assert_null (strstr (out, "-1"));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    g_assert_cmpint (cli (&out, &err, "runs", "--db", db, NULL), ==, 0);
    g_assert_nonnull (strstr (out, "generation verl-0.7.0 (from its printed config) \u00b7 p1/e1"));
    g_assert_nonnull (strstr (out, "\"rollout_token_veto_threshold\":0.0001"));
  }
  {
    /* no --preset, --config nor --generation: the run's own config and generation */
    g_autofree char *out = NULL, *err = NULL;
    g_assert_cmpint (cli (&out, &err, "recompute", "--db", db, "--run", "my run", NULL), ==, 0);
    g_assert_nonnull (strstr (out, "\"generation\": \"verl-0.7.0\""));
    g_assert_nonnull (strstr (err, "using the config run my run printed"));
    g_assert_nonnull (strstr (out, "\"rollout_rs\": \"geometric\""));
    g_assert_nonnull (strstr (out, "\"rollout_token_veto_threshold\": 0.0001"));
  }
}

/* Real case: two console logs of the same format in one run folder, both naming the same
 * experiment (two trainings launched with the same experiment_name, their stdout tee'd into the
 * same folder, written side by side). b.log goes on after a.log's last step; then a.log grows
 * with its own steps 4–5, which b.log already gave with other values. That is no later launch
 * (a.log does not go back), it is two sources disagreeing: reported, as across formats. */
static void
test_same_format_conflict (Fixture *f, gconstpointer data)
{
  g_autofree char *run_dir = g_build_filename (f->dir, "exp-run", NULL);
  g_autofree char *a_path = g_build_filename (run_dir, "a.log", NULL);
  g_autofree char *b_path = g_build_filename (run_dir, "b.log", NULL);
  DwFixtureConsole spec_a
    = { .project = "proj", .experiment = "exp_same", .first_step = 1, .last_step = 3 };
  DwFixtureConsole spec_b
    = { .project = "proj", .experiment = "exp_same", .first_step = 4, .last_step = 6 };
  DwFixtureConsole spec_grow = { .first_step = 4, .last_step = 5, .launch = 1 };
  g_autoptr (GString) a = dw_fixture_verl_console (&spec_a);
  g_autoptr (GString) b = dw_fixture_verl_console (&spec_b);
  g_autoptr (GString) grow = dw_fixture_verl_console (&spec_grow);
  DwIngestReport r;

  (void)data;
  dw_fixture_write (a_path, a->str, (gssize)a->len);
  dw_fixture_write (b_path, b->str, (gssize)b->len);
  dw_ingest_report_init (&r);
  ingest (f, run_dir, &r);
  g_assert_false (notes_contain (&r, "disagree", NULL));
  g_assert_false (notes_contain (&r, "later launch", NULL));
  dw_ingest_report_clear (&r);
  g_assert_cmpuint (n_runs (f->store), ==, 1);
  {
    g_autoptr (DwRunInfo) run = run_named (f->store, "exp_same");
    assert_values (f->store, run->id, 1, 6, 0, 0, FALSE);
  }

  g_string_append_len (a, grow->str, (gssize)grow->len);
  dw_fixture_write (a_path, a->str, (gssize)a->len);
  dw_ingest_report_init (&r);
  ingest (f, run_dir, &r);
  g_assert_true (notes_contain (&r, "a.log", "two sources disagree"));
  g_assert_true (notes_contain (&r, "more values disagree", NULL));
  dw_ingest_report_clear (&r);
  g_assert_cmpuint (n_runs (f->store), ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(name, fn) g_test_add (name, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/real-logs/preamble-490k-nul-tqdm", test_preamble);
  ADD ("/real-logs/not-logs", test_not_logs);
  ADD ("/real-logs/tensorboard-experiments-restart", test_tb_tree);
  ADD ("/real-logs/logs-folder", test_logs_folder);
  ADD ("/real-logs/unterminated-last-line", test_unterminated);
  ADD ("/real-logs/console-tensorboard-pair", test_pair);
  ADD ("/real-logs/folder-of-runs", test_folder_of_runs);
  ADD ("/real-logs/cli", test_cli);
  ADD ("/real-logs/run-meta", test_run_meta);
  ADD ("/real-logs/wandb-panel-runs", test_wandb_panel_runs);
  ADD ("/real-logs/verl-workdir-parts", test_verl_workdir_parts);
  ADD ("/real-logs/same-format-conflict", test_same_format_conflict);
  return g_test_run ();
}
