/* test-cli-ingest.c — driftwatch-cli ingest / runs / tags / series / export: output against the
 * store and the input files, exit codes, error messages
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "dw-demo.h"
#include "dw-store-writer.h"
#include "dw-test-cli.h"

static char *tmp_dir;

typedef struct
{
  int status;
  char *out;
  char *err;
} Run;

static void
run_clear (Run *r)
{
  g_free (r->out);
  g_free (r->err);
}

/* driftwatch-cli ARGS… (NULL-terminated) */
static Run
cli (const char *first, ...)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  Run r = { 0 };
  va_list ap;

  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (args, (char *)a);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  r.status = dw_test_run_cli ((const char *const *)args->pdata, NULL, &r.out, &r.err);
  return r;
}

static JsonNode *
parse_json (const char *text)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (json_parser_load_from_data (p, text, -1, &error));
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (p));
}

static double
csv_value (const char *s)
{
  return g_ascii_strtod (s, NULL); /* nan, inf, -inf included */
}

static gboolean
same_double (double a, double b)
{
  return (isnan (a) && isnan (b)) || a == b;
}

/* The demo run, ingested; runs/tags/series/export agree with the store and with the JSONL the
 * demo wrote. */
static void
test_demo_roundtrip (void)
{
  g_autofree char *demo = g_build_filename (tmp_dir, "demo-healthy", NULL);
  g_autofree char *db = g_build_filename (tmp_dir, "cli.db", NULL);
  g_autofree char *jsonl = g_build_filename (demo, "metrics.jsonl", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) runs = NULL, tags = NULL, series = NULL;
  g_auto (GStrv) lines = NULL, csv = NULL;
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwSeries) s = NULL;
  JsonObject *run;
  Run r;

  g_assert_true (dw_demo_write (demo, DW_DEMO_HEALTHY, 12, 3, &error));
  r = cli ("ingest", "--db", db, demo, NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "12 batches"));
  g_assert_nonnull (strstr (r.out, "“demo-healthy” (verl): steps 1–12"));
  run_clear (&r);

  r = cli ("runs", "--db", db, "--format", "json", NULL);
  g_assert_cmpint (r.status, ==, 0);
  runs = parse_json (r.out);
  g_assert_cmpuint (json_array_get_length (json_node_get_array (runs)), ==, 1);
  run = json_array_get_object_element (json_node_get_array (runs), 0);
  g_assert_cmpstr (json_object_get_string_member (run, "name"), ==, "demo-healthy");
  g_assert_cmpstr (json_object_get_string_member (run, "framework"), ==, "verl");
  g_assert_cmpint (json_object_get_int_member (run, "first_step"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (run, "last_step"), ==, 12);
  g_assert_cmpint (json_object_get_int_member (run, "n_batches"), ==, 12);
  run_clear (&r);

  /* every key of the JSONL's first line is a tag */
  g_assert_true (g_file_get_contents (jsonl, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  {
    g_autoptr (JsonNode) first = parse_json (lines[0]);
    JsonObject *data = json_object_get_object_member (json_node_get_object (first), "data");
    g_autoptr (GList) keys = json_object_get_members (data);
    r = cli ("tags", "--db", db, "--run", "demo-healthy", "--format", "json", NULL);
    g_assert_cmpint (r.status, ==, 0);
    tags = parse_json (r.out);
    g_assert_cmpuint (json_array_get_length (json_node_get_array (tags)), ==, g_list_length (keys));
    run_clear (&r);
  }

  /* series CSV = the JSONL values of that key, step by step, at full resolution */
  r = cli ("series", "--db", db, "--run", "demo-healthy", "--tag", "rollout_corr/k3_kl", NULL);
  g_assert_cmpint (r.status, ==, 0);
  csv = g_strsplit (r.out, "\n", -1);
  g_assert_cmpstr (csv[0], ==, "step,value");
  for (guint i = 0; i < 12; i++)
    {
      g_autoptr (JsonNode) line = parse_json (lines[i]);
      JsonObject *data = json_object_get_object_member (json_node_get_object (line), "data");
      g_auto (GStrv) f = g_strsplit (csv[i + 1], ",", 2);
      g_assert_cmpint (g_ascii_strtoll (f[0], NULL, 10), ==, i + 1);
      g_assert_cmpfloat (csv_value (f[1]), ==,
                         json_object_get_double_member (data, "rollout_corr/k3_kl"));
    }
  g_assert_cmpstr (csv[13], ==, "");
  run_clear (&r);

  /* series JSON by canonical id = the store's series */
  store = dw_store_open_read_only (db, &error);
  g_assert_no_error (error);
  s = dw_store_get_series (store, 1, "k3_kl", G_MININT64, &error);
  g_assert_no_error (error);
  r = cli ("series", "--db", db, "--run", "1", "--tag", "k3_kl", "--format", "json", NULL);
  g_assert_cmpint (r.status, ==, 0);
  series = parse_json (r.out);
  {
    JsonArray *v = json_object_get_array_member (json_node_get_object (series), "values");
    g_assert_cmpuint (json_array_get_length (v), ==, s->n);
    for (guint i = 0; i < s->n; i++)
      g_assert_cmpfloat (json_array_get_double_element (v, i), ==, s->values[i]);
  }
  run_clear (&r);

  /* export CSV: every stored point once */
  r = cli ("export", "--db", db, "--run", "demo-healthy", NULL);
  g_assert_cmpint (r.status, ==, 0);
  {
    g_auto (GStrv) rows = g_strsplit (r.out, "\n", -1);
    g_autoptr (GPtrArray) tl = dw_store_list_tags (store, 1, &error);
    gint64 total = 0;
    for (guint i = 0; i < tl->len; i++)
      total += ((DwTagInfo *)tl->pdata[i])->n_points;
    g_ptr_array_set_free_func (tl, (GDestroyNotify)dw_tag_info_free);
    g_assert_cmpstr (rows[0], ==, "tag,step,wall_time,value");
    g_assert_cmpuint (g_strv_length (rows), ==, (guint)total + 2); /* header + final "" */
  }
  run_clear (&r);
}

/* NaN and ±inf survive ingest → series CSV/JSON; verl's JSONL writes them as null. */
static void
test_non_finite (void)
{
  g_autofree char *dir = g_build_filename (tmp_dir, "nf", NULL);
  g_autofree char *path = g_build_filename (dir, "nf.jsonl", NULL);
  g_autofree char *csvp = g_build_filename (dir, "history.csv", NULL);
  g_autofree char *db = g_build_filename (tmp_dir, "nf.db", NULL);
  Run r;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (
    path, "{\"step\":1,\"data\":{\"x\":null}}\n{\"step\":2,\"data\":{\"x\":-0.5}}\n", -1, NULL));
  g_assert_true (g_file_set_contents (csvp, "_step,y\n1,inf\n2,-inf\n3,nan\n", -1, NULL));
  r = cli ("ingest", "--db", db, path, csvp, NULL);
  g_assert_cmpint (r.status, ==, 0);
  run_clear (&r);
  r = cli ("series", "--db", db, "--run", "nf", "--tag", "x", NULL);
  g_assert_cmpstr (r.out, ==, "step,value\n1,nan\n2,-0.5\n");
  run_clear (&r);
  r = cli ("series", "--db", db, "--run", "history", "--tag", "y", NULL);
  g_assert_cmpstr (r.out, ==, "step,value\n1,inf\n2,-inf\n3,nan\n");
  run_clear (&r);
  r = cli ("series", "--db", db, "--run", "history", "--tag", "y", "--format", "json", NULL);
  g_assert_nonnull (strstr (r.out, "\"values\": [\"inf\", \"-inf\", \"nan\"]"));
  run_clear (&r);
  g_assert_true (same_double (csv_value ("nan"), NAN));
}

/* Exit codes and messages. */
static void
test_errors (void)
{
  g_autofree char *db = g_build_filename (tmp_dir, "err.db", NULL);
  g_autofree char *missing_db = g_build_filename (tmp_dir, "missing.db", NULL);
  g_autofree char *bad = g_build_filename (tmp_dir, "bad", "bad.jsonl", NULL);
  g_autofree char *bad_dir = g_path_get_dirname (bad);
  g_autofree char *nowhere = g_build_filename (tmp_dir, "nowhere", NULL);
  g_autofree char *want = NULL;
  Run r;

  g_assert_cmpint (g_mkdir_with_parents (bad_dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (
    bad, "{\"step\":1,\"data\":{\"x\":1}}\n{\"step\":2,\"da\n{\"step\":3,\"data\":{\"x\":3}}\n", -1,
    NULL));

  /* bad input: reported with file and offset, the rest stored, exit 1 */
  r = cli ("ingest", "--db", db, bad, NULL);
  g_assert_cmpint (r.status, ==, 1);
  want = g_strdup_printf ("%s: byte offset ", bad);
  g_assert_true (g_str_has_prefix (r.err, want));
  {
    /* the offset points into the broken second line, [27, 41) */
    gint64 off = g_ascii_strtoll (r.err + strlen (want), NULL, 10);
    g_assert_cmpint (off, >=, 27);
    g_assert_cmpint (off, <, 41);
  }
  run_clear (&r);
  r = cli ("series", "--db", db, "--run", "bad", "--tag", "x", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "step,value\n1,1\n3,3\n");
  run_clear (&r);

  /* a missing path: 1, named; the other paths are still ingested */
  r = cli ("ingest", "--db", db, nowhere, bad, NULL);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "nowhere: no such file or folder"));
  run_clear (&r);

  /* a file named on the command line that is no known format: 1, named */
  r = cli ("ingest", "--db", db, db, NULL);
  g_assert_cmpint (r.status, ==, 0); /* the store itself is never ingested */
  run_clear (&r);
  {
    g_autofree char *txt = g_build_filename (tmp_dir, "notes.txt", NULL);
    g_assert_true (g_file_set_contents (txt, "just some notes\n", -1, NULL));
    r = cli ("ingest", "--db", db, txt, NULL);
    g_assert_cmpint (r.status, ==, 1);
    g_assert_nonnull (strstr (r.err, "notes.txt: not a recognised log or batch format"));
    run_clear (&r);
  }

  /* usage: 2 */
  r = cli ("ingest", "--db", db, NULL);
  g_assert_cmpint (r.status, ==, 2);
  run_clear (&r);
  r = cli ("series", "--db", db, "--run", "bad", NULL);
  g_assert_cmpint (r.status, ==, 2);
  run_clear (&r);
  r = cli ("series", "--db", db, "--run", "bad", "--tag", "x", "--format", "xml", NULL);
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "unknown format 'xml'"));
  run_clear (&r);
  /* unknown run or tag: 2 */
  r = cli ("tags", "--db", db, "--run", "nope", NULL);
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "nope"));
  run_clear (&r);
  r = cli ("series", "--db", db, "--run", "bad", "--tag", "nope", NULL);
  g_assert_cmpint (r.status, ==, 2);
  run_clear (&r);
  /* no store: 1, and it is not created */
  r = cli ("runs", "--db", missing_db, NULL);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "no such store"));
  g_assert_false (g_file_test (missing_db, G_FILE_TEST_EXISTS));
  run_clear (&r);
}

/* `demo OUT --ingest` leaves the run in the store, equal to `demo` then `ingest`. */
static void
test_demo_ingest (void)
{
  g_autofree char *out = g_build_filename (tmp_dir, "demo-ingest", "run", NULL);
  g_autofree char *db = g_build_filename (tmp_dir, "demo-ingest", "a.db", NULL);
  g_autofree char *db2 = g_build_filename (tmp_dir, "demo-ingest", "b.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *d1 = NULL, *d2 = NULL;
  Run r;

  r = cli ("demo", out, "--steps", "4", "--scenario", "collapse", "--ingest", "--db", db, NULL);
  g_assert_cmpint (r.status, ==, 0);
  run_clear (&r);
  r = cli ("ingest", "--db", db2, out, NULL);
  g_assert_cmpint (r.status, ==, 0);
  run_clear (&r);
  {
    g_autoptr (DwStore) a = dw_store_open_read_only (db, &error);
    g_autoptr (DwStore) b = dw_store_open_read_only (db2, &error);
    g_autoptr (DwRunInfo) run = dw_store_find_run (a, "run", &error);
    g_assert_no_error (error);
    g_assert_cmpint (run->last_step, ==, 4);
    g_assert_cmpint (run->n_batches, ==, 4);
    d1 = dw_store_dump (a, &error);
    d2 = dw_store_dump (b, &error);
  }
  g_assert_cmpstr (d1, ==, d2);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int rc;

  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("dw-cli-ingest-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/cli-ingest/demo-roundtrip", test_demo_roundtrip);
  g_test_add_func ("/cli-ingest/non-finite", test_non_finite);
  g_test_add_func ("/cli-ingest/errors", test_errors);
  g_test_add_func ("/cli-ingest/demo-ingest", test_demo_ingest);
  rc = g_test_run ();
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmp_dir);
    g_assert_cmpint (system (cmd), ==, 0);
  }
  g_free (tmp_dir);
  return rc;
}
