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
#include "dw-store-private.h"

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
  return g_test_run ();
}
