/* test-health-store.c — health rules over stored runs: the demo runs, incremental polling, `check`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "dw-demo.h"
#include "dw-health.h"
#include "dw-log-reader.h"
#include "dw-store-private.h"
#include "dw-test-cli.h"

#define DEMO_STEPS 200

typedef struct
{
  DwStore *store;
  gint64 run_id;
  GHashTable *tags; /* name → id */
  gint64 max_step;  /* only points with step ≤ max_step are stored (G_MAXINT64: all) */
} Sink;

static void
on_point (const DwScalarPoint *p, gpointer user_data)
{
  Sink *s = user_data;
  if (p->step > s->max_step)
    return;
  gpointer id;
  if (!g_hash_table_lookup_extended (s->tags, p->tag, NULL, &id))
    {
      gint64 tid = dw_store_ensure_tag (s->store, s->run_id, p->tag, p->step_key, NULL);
      g_assert_cmpint (tid, >, 0);
      id = GINT_TO_POINTER ((int)tid);
      g_hash_table_insert (s->tags, g_strdup (p->tag), id);
    }
  g_assert_true (dw_store_put_point (s->store, s->run_id, GPOINTER_TO_INT (id), p->step,
                                     p->wall_time, p->value, NULL));
}

static void
on_diag (goffset offset, const char *message, gpointer user_data)
{
  g_error ("demo log diagnostic at %" G_GOFFSET_FORMAT ": %s", offset, message);
}

/* Stores the demo's metrics.jsonl (verl FileLogger lines) as run @name, steps ≤ @max_step. */
static gint64
store_jsonl (DwStore *store, const char *name, const char *jsonl, gint64 max_step)
{
  g_autofree char *text = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (jsonl, &text, &len, NULL));
  GError *error = NULL;
  g_assert_true (dw_store_begin (store, &error));
  Sink s = { store, dw_store_ensure_run (store, name, "verl", jsonl, &error),
             g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL), max_step };
  g_assert_no_error (error);
  g_autoptr (DwLogReader) r = dw_log_reader_new (DW_FORMAT_VERL_JSONL, jsonl);
  dw_log_reader_feed (r, 0, (const guint8 *)text, len, TRUE, on_point, on_diag, &s);
  g_assert_true (dw_store_commit (store, &error));
  g_hash_table_unref (s.tags);
  return s.run_id;
}

typedef struct
{
  char *dir;
  char *db;
  DwStore *store;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  GError *error = NULL;
  f->dir = g_dir_make_tmp ("dw-health-XXXXXX", &error);
  g_assert_no_error (error);
  f->db = g_build_filename (f->dir, "store.db", NULL);
  f->store = dw_store_open (f->db, &error);
  g_assert_no_error (error);
}

static void
rm_rf (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    {
      GDir *d = g_dir_open (path, 0, NULL);
      const char *n;
      while (d && (n = g_dir_read_name (d)))
        {
          g_autofree char *c = g_build_filename (path, n, NULL);
          rm_rf (c);
        }
      if (d)
        g_dir_close (d);
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->store);
  rm_rf (f->dir);
  g_free (f->db);
  g_free (f->dir);
}

static char *
write_demo (Fixture *f, DwDemoScenario scenario)
{
  g_autofree char *out = g_build_filename (f->dir, dw_demo_scenario_name (scenario), NULL);
  GError *error = NULL;
  g_assert_true (dw_demo_write (out, scenario, DEMO_STEPS, 1, &error));
  g_assert_no_error (error);
  return g_build_filename (out, "metrics.jsonl", NULL);
}

static void
log_events (GPtrArray *ev)
{
  for (guint i = 0; i < ev->len; i++)
    {
      DwHealthEvent *e = ev->pdata[i];
      g_test_message ("%s %s %s steps %" G_GINT64_FORMAT "-%" G_GINT64_FORMAT " value %g",
                      e->rule_id, dw_health_severity_name (e->severity), e->tag, e->first_step,
                      e->last_step, e->value);
    }
}

/* The collapse demo: the first warning comes at or before the collapse step, and it is a trend
 * rule (the hard thresholds come later); the healthy demo fires nothing. */
static void
test_demo (Fixture *f, gconstpointer data)
{
  g_autofree char *collapse = write_demo (f, DW_DEMO_COLLAPSE);
  g_autofree char *healthy = write_demo (f, DW_DEMO_HEALTHY);
  gint64 rc = store_jsonl (f->store, "collapse", collapse, G_MAXINT64);
  gint64 rh = store_jsonl (f->store, "healthy", healthy, G_MAXINT64);
  GError *error = NULL;

  g_autoptr (GPtrArray) ev = dw_health_check_run (f->store, rc, &error);
  g_assert_no_error (error);
  log_events (ev);
  g_assert_cmpuint (ev->len, >, 0);
  const DwHealthEvent *first = ev->pdata[0];
  gint64 collapse_step = dw_demo_collapse_step (DEMO_STEPS);
  g_assert_cmpint (first->first_step, <=, collapse_step);
  g_assert_true (g_str_has_suffix (first->rule_id, "-drift"));
  g_assert_cmpint (first->severity, ==, DW_HEALTH_WARNING);

  g_autoptr (GPtrArray) none = dw_health_check_run (f->store, rh, &error);
  g_assert_no_error (error);
  log_events (none);
  g_assert_cmpuint (none->len, ==, 0);

  /* an unknown run */
  g_autoptr (GPtrArray) nope = dw_health_check_run (f->store, 999, &error);
  g_assert_null (nope);
  g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
}

/* A live follower polling while the run grows finds the same events as one check at the end,
 * each reported once, by the poll that first saw its step. */
static void
test_poll (Fixture *f, gconstpointer data)
{
  g_autofree char *collapse = write_demo (f, DW_DEMO_COLLAPSE);
  g_autoptr (DwHealthMonitor) m = dw_health_monitor_new ();
  g_autoptr (GPtrArray) seen
    = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_health_event_free);
  gint64 run = 0;
  GError *error = NULL;
  for (gint64 upto = 10; upto <= DEMO_STEPS + 7; upto += 17)
    {
      run = store_jsonl (f->store, "live", collapse, upto);
      g_autoptr (GPtrArray) fired = dw_health_monitor_poll_run (m, f->store, run, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < fired->len; i++)
        {
          DwHealthEvent *e = fired->pdata[i];
          g_assert_cmpint (e->first_step, >, upto - 17);
          g_assert_cmpint (e->first_step, <=, upto);
          g_ptr_array_add (seen, dw_health_event_copy (e));
        }
    }
  g_autoptr (GPtrArray) all = dw_health_check_run (f->store, run, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) mon = dw_health_monitor_get_events (m);
  g_assert_cmpuint (seen->len, ==, all->len);
  g_assert_cmpuint (mon->len, ==, all->len);
  g_ptr_array_sort (seen, dw_health_event_compare);
  for (guint i = 0; i < all->len; i++)
    {
      const DwHealthEvent *a = all->pdata[i], *b = mon->pdata[i], *s = seen->pdata[i];
      g_assert_cmpstr (a->rule_id, ==, b->rule_id);
      g_assert_cmpstr (a->tag, ==, b->tag);
      g_assert_cmpint (a->first_step, ==, b->first_step);
      g_assert_cmpint (a->last_step, ==, b->last_step);
      g_assert_cmpint (a->n_steps, ==, b->n_steps);
      g_assert_cmpstr (s->rule_id, ==, a->rule_id);
      g_assert_cmpint (s->first_step, ==, a->first_step);
    }
}

/* per-option RS keys beside the aggregate: only the aggregate is watched */
static void
test_tag_choice (Fixture *f, gconstpointer data)
{
  GError *error = NULL;
  g_assert_true (dw_store_begin (f->store, &error));
  gint64 run = dw_store_ensure_run (f->store, "rs", "verl", "x", &error);
  gint64 agg
    = dw_store_ensure_tag (f->store, run, "rollout_corr/rollout_rs_masked_fraction", NULL, &error);
  gint64 opt = dw_store_ensure_tag (
    f->store, run, "rollout_corr/rollout_rs_token_k1_masked_fraction", NULL, &error);
  for (int s = 1; s <= 10; s++)
    {
      g_assert_true (dw_store_put_point (f->store, run, agg, s, NAN, s == 6 ? 0.4 : 0.1, &error));
      g_assert_true (dw_store_put_point (f->store, run, opt, s, NAN, 0.5, &error));
    }
  g_assert_true (dw_store_commit (f->store, &error));
  g_autoptr (GPtrArray) ev = dw_health_check_run (f->store, run, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ev->len, ==, 1);
  DwHealthEvent *e = ev->pdata[0];
  g_assert_cmpstr (e->rule_id, ==, "masked-fraction-high");
  g_assert_cmpstr (e->tag, ==, "rollout_corr/rollout_rs_masked_fraction");
  g_assert_cmpint (e->first_step, ==, 6);
  g_assert_cmpint (e->last_step, ==, 6);
}

/* The shown status: a warning that stopped firing before the end leaves a finished run finished;
 * one still firing at the last point, or any critical event, makes it collapsed; live stays live.
 */
static void
test_shown_status (Fixture *f, gconstpointer data)
{
  const struct
  {
    const char *name;
    double late; /* IS weight mean from step 11 on */
    double nan_at;
    DwRunStatus want;
    guint want_at_end, want_crit;
  } cases[] = {
    { "recovered", 1.0, -1, DW_RUN_STATUS_FINISHED, 0, 0 },
    { "ended-bad", 3.0, -1, DW_RUN_STATUS_COLLAPSED, 1, 0 },
    { "nan", 1.0, 4, DW_RUN_STATUS_COLLAPSED, 0, 1 },
  };

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      GError *error = NULL;
      gint64 run = dw_store_ensure_run (f->store, cases[c].name, "verl", NULL, &error);
      gint64 tag
        = dw_store_ensure_tag (f->store, run, "rollout_corr/rollout_is_mean", NULL, &error);
      g_autoptr (DwHealthMonitor) m = dw_health_monitor_new ();
      g_autoptr (GPtrArray) fired = NULL;
      g_autoptr (GPtrArray) events = NULL;
      g_autoptr (GPtrArray) runs = NULL;
      guint n_warn, n_crit, n_at_end;

      g_assert_no_error (error);
      for (gint64 s = 1; s <= 20; s++)
        {
          /* out of [0.5, 2] at steps 5–6 in every case */
          double v = s == cases[c].nan_at ? NAN
                     : (s == 5 || s == 6) ? 2.5
                     : s > 10             ? cases[c].late
                                          : 1.0;
          g_assert_true (dw_store_put_point (f->store, run, tag, s, 1.7e9 + s, v, &error));
        }
      fired = dw_health_monitor_poll_run (m, f->store, run, &error);
      g_assert_no_error (error);
      events = dw_health_monitor_get_events (m);
      dw_health_monitor_count (m, events, &n_warn, &n_crit, &n_at_end);
      g_assert_cmpuint (n_crit, ==, cases[c].want_crit);
      g_assert_cmpuint (n_at_end, ==, cases[c].want_at_end);
      g_assert_cmpint (dw_health_shown_status (DW_RUN_STATUS_FINISHED, n_crit, n_at_end), ==,
                       cases[c].want);
      g_assert_cmpint (dw_health_shown_status (DW_RUN_STATUS_LIVE, n_crit, n_at_end), ==,
                       DW_RUN_STATUS_LIVE);
      runs = dw_store_list_runs (f->store, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < runs->len; i++)
        {
          DwRunInfo *r = runs->pdata[i];
          if (r->id == run)
            g_assert_cmpint (dw_health_run_shown_status (f->store, r, NULL), ==, cases[c].want);
        }
    }
}

static void
test_cli (Fixture *f, gconstpointer data)
{
  g_autofree char *collapse = write_demo (f, DW_DEMO_COLLAPSE);
  g_autofree char *healthy = write_demo (f, DW_DEMO_HEALTHY);
  store_jsonl (f->store, "collapse", collapse, G_MAXINT64);
  gint64 rh = store_jsonl (f->store, "healthy", healthy, G_MAXINT64);
  g_clear_object (&f->store); /* the CLI opens the file itself */
  g_autofree char *rh_s = g_strdup_printf ("%" G_GINT64_FORMAT, rh);
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *a[] = { "check", "--run", "collapse", "--db", f->db, "--format", "json", NULL };
    g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 1);
    g_autoptr (JsonParser) p = json_parser_new ();
    g_assert_true (json_parser_load_from_data (p, out, -1, NULL));
    JsonObject *o = json_node_get_object (json_parser_get_root (p));
    g_assert_cmpstr (json_object_get_string_member (o, "run"), ==, "collapse");
    JsonObject *r = json_object_get_object_member (o, "report");
    g_assert_false (json_object_get_boolean_member (r, "healthy"));
    JsonArray *ev = json_object_get_array_member (r, "events");
    g_assert_cmpuint (json_array_get_length (ev), >, 0);
    JsonObject *e = json_array_get_object_element (ev, 0);
    g_assert_cmpint (json_object_get_int_member (e, "first_step"), <=,
                     dw_demo_collapse_step (DEMO_STEPS));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *a[] = { "check", "--run", rh_s, "--db", f->db, NULL };
    g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 0);
    g_autofree char *expect = g_strdup_printf ("Run “healthy” (id %s): healthy\n", rh_s);
    g_assert_cmpstr (out, ==, expect);
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *a[] = { "check", "--run", "collapse", "--db", f->db, "--format", "text", NULL };
    g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 1);
    g_assert_true (g_str_has_prefix (out, "Run “collapse” (id "));
    g_assert_nonnull (strstr (out, "\nWARNING  step"));
    g_assert_nonnull (strstr (out, "    Try: "));
  }
  {
    /* `runs` shows a finished run that ended unhealthy as collapsed, like the window's badge */
    g_autofree char *out = NULL, *err = NULL;
    const char *a[] = { "runs", "--db", f->db, "--format", "json", NULL };
    g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 0);
    g_autoptr (JsonParser) p = json_parser_new ();
    g_assert_true (json_parser_load_from_data (p, out, -1, NULL));
    JsonArray *runs = json_node_get_array (json_parser_get_root (p));
    g_assert_cmpuint (json_array_get_length (runs), ==, 2);
    for (guint i = 0; i < 2; i++)
      {
        JsonObject *r = json_array_get_object_element (runs, i);
        const char *name = json_object_get_string_member (r, "name");
        g_assert_cmpstr (json_object_get_string_member (r, "status"), ==,
                         g_str_equal (name, "collapse") ? "collapsed" : "finished");
      }
  }
  const struct
  {
    const char *args[8];
    int status;
    const char *err;
  } bad[] = {
    { { "check", NULL }, 2, "usage: check --run R" },
    { { "check", "--run", "nope", "--db", f->db, NULL }, 2, "nope" },
    { { "check", "--run", "collapse", "--db", f->db, "--format", "xml", NULL },
      2,
      "unknown format 'xml' (text or json)" },
    { { "check", "--run", "x", "--db", "/nonexistent/dir/store.db", NULL },
      1,
      "/nonexistent/dir/store.db" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *out = NULL, *err = NULL;
      int st = dw_test_run_cli (bad[i].args, NULL, &out, &err);
      if (st != bad[i].status || !strstr (err, bad[i].err))
        g_error ("case %" G_GSIZE_FORMAT ": status %d, stderr %s", i, st, err);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/health-store/demo", Fixture, NULL, fixture_set_up, test_demo, fixture_tear_down);
  g_test_add ("/health-store/poll", Fixture, NULL, fixture_set_up, test_poll, fixture_tear_down);
  g_test_add ("/health-store/tag-choice", Fixture, NULL, fixture_set_up, test_tag_choice,
              fixture_tear_down);
  g_test_add ("/health-store/shown-status", Fixture, NULL, fixture_set_up, test_shown_status,
              fixture_tear_down);
  g_test_add ("/health-store/cli", Fixture, NULL, fixture_set_up, test_cli, fixture_tear_down);
  return g_test_run ();
}
