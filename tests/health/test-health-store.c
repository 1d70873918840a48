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
#include "dw-store-writer.h"
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
  g_assert_cmpint (first->severity, ==, DW_HEALTH_WARNING);
  /* the warnings come before the collapse, the critical events at or after it; a trend rule
   * warns before any critical event */
  gint64 first_drift = G_MAXINT64, first_critical = G_MAXINT64;
  for (guint i = 0; i < ev->len; i++)
    {
      const DwHealthEvent *e = ev->pdata[i];
      if (g_str_has_suffix (e->rule_id, "-drift"))
        first_drift = MIN (first_drift, e->first_step);
      if (e->severity == DW_HEALTH_CRITICAL)
        first_critical = MIN (first_critical, e->first_step);
    }
  g_assert_cmpint (first_drift, <, collapse_step);
  g_assert_cmpint (first_drift, <, first_critical);

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
 * one still firing at the last point, or any critical event, makes it collapsed. A live run with
 * a critical event is "collapsing"; warnings alone leave it live. The series is slime's train/tis
 * (the raw ratio mean, judged by is-mean-range). */
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
    DwRunStatus want_live;
  } cases[] = {
    { "recovered", 1.0, -1, DW_RUN_STATUS_FINISHED, 0, 0, DW_RUN_STATUS_LIVE },
    { "ended-bad", 3.0, -1, DW_RUN_STATUS_COLLAPSED, 1, 0, DW_RUN_STATUS_LIVE },
    { "nan", 1.0, 4, DW_RUN_STATUS_COLLAPSED, 0, 1, DW_RUN_STATUS_COLLAPSING },
    { "collapsed", 25.0, -1, DW_RUN_STATUS_COLLAPSED, 2, 1, DW_RUN_STATUS_COLLAPSING },
  };

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      GError *error = NULL;
      gint64 run = dw_store_ensure_run (f->store, cases[c].name, "verl", NULL, &error);
      gint64 tag = dw_store_ensure_tag (f->store, run, "train/tis", NULL, &error);
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
                       cases[c].want_live);
      /* what `watch` stored stays: a run it marked collapsed is shown collapsed */
      g_assert_cmpint (dw_health_shown_status (DW_RUN_STATUS_COLLAPSED, 0, 0), ==,
                       DW_RUN_STATUS_COLLAPSED);
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
    g_assert_cmpstr (json_object_get_string_member (r, "verdict"), ==, "unhealthy");
    /* the demo's first critical event is the K3 KL drift at ten times its bound, at step 110 */
    g_assert_true (g_str_has_prefix (json_object_get_string_member (r, "headline"),
                                     "Collapsed at step 110 (K3 KL drifting upwards — collapse "
                                     "level): K3 KL "));
    g_assert_cmpstr (json_object_get_string_member (r, "generation"), ==, "verl-0.9.0");
    g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "evaluated")), ==,
                      13);
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
    g_autofree char *expect = g_strdup_printf (
      "Run “healthy” (id %s): healthy\n"
      "  generation: verl-0.9.0 (inferred from the logged keys)\n"
      "  evaluated: IS weight mean (applied weights), IS weight std, Effective sample size, Raw IS "
      "ratios above the upper bound, Raw IS ratios below the lower bound, Rejected token fraction, "
      "Rejected sequence fraction, KL (rollout − training), K3 KL, PPL ratio, |log PPL "
      "difference|, χ² (token), Mean |probability difference|\n",
      rh_s);
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

/* Runs without mismatch metrics are not called healthy: exit 3 and their own verdict. Real cases:
 * an SFT / pre-0.6 verl log (reward, entropy, lengths only), and a W&B multi-run panel export
 * whose "<run> - <metric>" columns were ingested as one run. A verl 0.5 log with
 * only training/rollout_probs_diff_* is judged (and healthy). */
static void
test_cli_no_mismatch (Fixture *f, gconstpointer data)
{
  const struct
  {
    const char *run;
    const char *tags[4];
    int status;
    const char *verdict;
    const char *text;
  } cases[] = {
    { "sft",
      { "critic/score/mean", "actor/entropy", "response_length/mean", "timing_s/step" },
      3,
      "no-mismatch-metrics",
      "  none of the 4 logged tag(s) is a mismatch metric\n" },
    { "panel",
      { "run-a - rollout_corr/k3_kl", "run-a - rollout_corr/k3_kl__MIN",
        "run-b - rollout_corr/k3_kl", "Step" },
      3,
      "no-mismatch-metrics",
      "  3 tag(s) look like W&B panel columns (“run-a - rollout_corr/k3_kl”)" },
    { "verl-0.5",
      { "training/rollout_probs_diff_mean", "training/rollout_probs_diff_max", "actor/entropy",
        NULL },
      0,
      "healthy",
      "  evaluated: Mean |probability difference|\n" },
  };
  GError *error = NULL;

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      gint64 run = dw_store_ensure_run (f->store, cases[c].run, "verl", NULL, &error);
      g_assert_no_error (error);
      for (guint t = 0; t < 4 && cases[c].tags[t] != NULL; t++)
        {
          gint64 tag = dw_store_ensure_tag (f->store, run, cases[c].tags[t], NULL, &error);
          g_assert_no_error (error);
          for (gint64 s = 1; s <= 30; s++)
            g_assert_true (dw_store_put_point (f->store, run, tag, s, NAN, 1e-4 * s, &error));
        }
    }
  g_clear_object (&f->store);
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *out = NULL, *err = NULL, *json = NULL;
      const char *text[] = { "check", "--run", cases[c].run, "--db", f->db, NULL };
      const char *js[]
        = { "check", "--run", cases[c].run, "--db", f->db, "--format", "json", NULL };
      g_autoptr (JsonParser) p = json_parser_new ();

      g_assert_cmpint (dw_test_run_cli (text, NULL, &out, &err), ==, cases[c].status);
      if (strstr (out, cases[c].text) == NULL)
        g_error ("%s: %s", cases[c].run, out);
      g_assert_false (cases[c].status != 0 && strstr (out, "): healthy") != NULL);
      g_clear_pointer (&err, g_free);
      g_assert_cmpint (dw_test_run_cli (js, NULL, &json, &err), ==, cases[c].status);
      g_assert_true (json_parser_load_from_data (p, json, -1, NULL));
      JsonObject *r
        = json_object_get_object_member (json_node_get_object (json_parser_get_root (p)), "report");
      g_assert_cmpstr (json_object_get_string_member (r, "verdict"), ==, cases[c].verdict);
      g_assert_cmpint (json_object_get_boolean_member (r, "healthy"), ==, cases[c].status == 0);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Runs of each generation, built from the releases' own numbers: each step logs exactly the
 * metrics dict one golden case holds (the keys and values that release's helper emits for that
 * batch and config), healthy batches first, then a heavy-tailed batch, then an extreme one. */

typedef struct
{
  const char *group;
  const char *prefix; /* slime mis.py keys are logged as train/mis_<key> */
  const char *config; /* the golden case's config part of the name */
} GenRun;

static void
store_golden_run (DwStore *store, const char *name, const GenRun *g)
{
  const struct
  {
    const char *batch;
    gint64 first, last;
  } phases[] = { { "moderate", 1, 30 }, { "heavy_tail", 31, 40 }, { "extreme", 41, 45 } };
  GError *error = NULL;
  gint64 run;

  g_assert_true (dw_store_begin (store, &error));
  run = dw_store_ensure_run (store, name, "verl", NULL, &error);
  g_assert_no_error (error);
  for (gsize ph = 0; ph < G_N_ELEMENTS (phases); ph++)
    {
      const char *shared = g_getenv ("DW_SHARED_DIR");
      g_autofree char *file = g_strdup_printf ("%s__%s.json", phases[ph].batch, g->config);
      g_autofree char *path
        = g_build_filename (shared ? shared : "../shared", "golden", g->group, file, NULL);
      g_autoptr (JsonParser) p = json_parser_new ();
      JsonObject *metrics;
      GList *members;

      g_assert_true (json_parser_load_from_file (p, path, &error));
      metrics = json_object_get_object_member (json_node_get_object (json_parser_get_root (p)),
                                               "metrics");
      members = json_object_get_members (metrics);
      for (GList *l = members; l != NULL; l = l->next)
        {
          g_autofree char *key = g_strconcat (g->prefix, l->data, NULL);
          JsonNode *node = json_object_get_member (metrics, l->data);
          double v
            = JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING
                ? g_ascii_strtod (json_node_get_string (node), NULL)
                : json_node_get_double (node);
          gint64 tag = dw_store_ensure_tag (store, run, key, NULL, &error);

          g_assert_no_error (error);
          for (gint64 s = phases[ph].first; s <= phases[ph].last; s++)
            g_assert_true (dw_store_put_point (store, run, tag, s, NAN, v, &error));
        }
      g_list_free (members);
    }
  g_assert_true (dw_store_commit (store, &error));
}

/* "rule severity first-last" per event, in report order. */
static char *
summarize (GPtrArray *events)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < events->len; i++)
    {
      const DwHealthEvent *e = events->pdata[i];

      g_string_append_printf (out, "%s%s %s %" G_GINT64_FORMAT "-%" G_GINT64_FORMAT, i ? "; " : "",
                              e->rule_id, dw_health_severity_name (e->severity), e->first_step,
                              e->last_step);
    }
  return g_string_free (out, FALSE);
}

/* What must hold: a v0.7.1 run read under its own generation fires is-mean-range at step 31
 * (raw ratio mean 453854 ≥ 20: critical); the same batches logged by v0.8.0 cannot (the applied
 * mean stays ≤ 2) and fire is-ratio-high instead (7.4 % of raw ratios above 2). When nothing says
 * which release wrote the run, its keys read as the newest consistent release (v0.7.1 and v0.8.0
 * log the same keys under TIS), so the v0.7.1 run is judged as v0.8.0 would be: the raw-ratio
 * fractions still fire, the raw-mean rule does not. slime's train/tis is the raw mean. */
static void
test_generations (Fixture *f, gconstpointer data)
{
  const struct
  {
    const char *name;
    GenRun source;
    const char *inferred; /* the generation the keys tell */
    const char *inferred_events;
    const char *events; /* under the run's own generation */
  } cases[] = {
    { "verl-0.6.0",
      { "verl_v0.6.0", "", "token_truncate_t2_defaultveto" },
      "verl-0.6.0",
      "is-mean-range critical 31-45; is-mean-range warning 31-45; "
      "is-ratio-high warning 31-45; is-ratio-low warning 31-45; "
      "veto-fraction-high warning 31-45; k3-kl-drift critical 40-45; "
      "k3-kl-drift warning 40-45; ppl-ratio-drift warning 40-45; "
      "log-ppl-drift warning 40-45; veto-fraction-high critical 41-45; "
      "kl-high critical 41-45; catastrophic-fraction-high critical 41-45; "
      "kl-high warning 41-45; catastrophic-fraction-high warning 41-45; "
      "ppl-ratio-drift critical 45-45; log-ppl-drift critical 45-45",
      "is-mean-range critical 31-45; is-mean-range warning 31-45; "
      "is-ratio-high warning 31-45; is-ratio-low warning 31-45; "
      "veto-fraction-high warning 31-45; k3-kl-drift critical 40-45; "
      "k3-kl-drift warning 40-45; ppl-ratio-drift warning 40-45; "
      "log-ppl-drift warning 40-45; veto-fraction-high critical 41-45; "
      "kl-high critical 41-45; catastrophic-fraction-high critical 41-45; "
      "kl-high warning 41-45; catastrophic-fraction-high warning 41-45; "
      "ppl-ratio-drift critical 45-45; log-ppl-drift critical 45-45" },
    { "verl-0.7.1",
      { "verl_HEAD", "", "tis_token_t2" },
      "verl-0.9.0",
      "chi2-token-high critical 31-45; is-ratio-high warning 31-45; "
      "is-ratio-low warning 31-45; chi2-token-high warning 31-45; "
      "k3-kl-drift critical 40-45; k3-kl-drift warning 40-45; "
      "ppl-ratio-drift warning 40-45; log-ppl-drift warning 40-45; "
      "kl-high critical 41-45; kl-high warning 41-45; ppl-ratio-drift critical 45-45; "
      "log-ppl-drift critical 45-45",
      "is-mean-range critical 31-45; chi2-token-high critical 31-45; "
      "is-mean-range warning 31-45; is-ratio-high warning 31-45; "
      "is-ratio-low warning 31-45; chi2-token-high warning 31-45; "
      "k3-kl-drift critical 40-45; k3-kl-drift warning 40-45; "
      "ppl-ratio-drift warning 40-45; log-ppl-drift warning 40-45; "
      "kl-high critical 41-45; kl-high warning 41-45; ppl-ratio-drift critical 45-45; "
      "log-ppl-drift critical 45-45" },
    { "verl-0.8.0",
      { "verl_v0.8.0", "", "tis_token_t2" },
      "verl-0.9.0",
      "chi2-token-high critical 31-45; is-ratio-high warning 31-45; "
      "is-ratio-low warning 31-45; chi2-token-high warning 31-45; "
      "k3-kl-drift critical 40-45; k3-kl-drift warning 40-45; "
      "ppl-ratio-drift warning 40-45; log-ppl-drift warning 40-45; "
      "kl-high critical 41-45; kl-high warning 41-45; ppl-ratio-drift critical 45-45; "
      "log-ppl-drift critical 45-45",
      "chi2-token-high critical 31-45; is-ratio-high warning 31-45; "
      "is-ratio-low warning 31-45; chi2-token-high warning 31-45; "
      "k3-kl-drift critical 40-45; k3-kl-drift warning 40-45; "
      "ppl-ratio-drift warning 40-45; log-ppl-drift warning 40-45; "
      "kl-high critical 41-45; kl-high warning 41-45; ppl-ratio-drift critical 45-45; "
      "log-ppl-drift critical 45-45" },
    { "slime",
      { "slime_HEAD_builtin", "", "vanilla_tis_0.5_2" },
      "slime",
      "is-mean-range critical 31-45; is-mean-range warning 31-45; "
      "is-oob-high critical 41-45; is-oob-high warning 41-45",
      "is-mean-range critical 31-45; is-mean-range warning 31-45; "
      "is-oob-high critical 41-45; is-oob-high warning 41-45" },
  };
  GError *error = NULL;

  if (!g_file_test ("../shared/golden", G_FILE_TEST_IS_DIR) && g_getenv ("DW_SHARED_DIR") == NULL)
    {
      g_test_skip ("../shared/golden is missing");
      return;
    }
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    store_golden_run (f->store, cases[c].name, &cases[c].source);
  /* a series asked for by canonical name is found under the run's generation: verl 0.6.0's
   * mismatch/rollout_is_mean and slime's train/tis are raw ratio means, v0.8.0's is not */
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (DwRunInfo) run = dw_store_find_run (f->store, cases[c].name, &error);
      g_autoptr (DwSeries) raw = NULL;

      g_assert_no_error (error);
      raw = dw_store_get_series (f->store, run->id, "is_raw_mean", G_MININT64, &error);
      if (g_str_equal (cases[c].inferred, "verl-0.9.0"))
        {
          g_assert_null (raw);
          g_assert_error (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);
          g_clear_error (&error);
        }
      else
        {
          g_assert_no_error (error);
          g_assert_cmpuint (raw->n, ==, 45);
        }
    }
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (DwRunInfo) run = dw_store_find_run (f->store, cases[c].name, &error);
      g_autoptr (DwHealthReport) report = NULL;
      g_autofree char *got = NULL;

      g_assert_no_error (error);
      report = dw_health_report_run (f->store, run->id, NULL, &error);
      g_assert_no_error (error);
      got = summarize (report->events);
      g_test_message ("%s (%s): %s", cases[c].name, report->generation, got);
      g_assert_cmpstr (report->generation, ==, cases[c].inferred);
      g_assert_true (report->generation_inferred);
      g_assert_cmpstr (got, ==, cases[c].inferred_events);
      /* the release that wrote it, as ingest or --generation can tell it */
      g_clear_pointer (&report, dw_health_report_free);
      g_clear_pointer (&got, g_free);
      report = dw_health_report_run (f->store, run->id, cases[c].name, &error);
      g_assert_no_error (error);
      got = summarize (report->events);
      g_test_message ("%s (given): %s", cases[c].name, got);
      g_assert_false (report->generation_inferred);
      g_assert_cmpstr (got, ==, cases[c].events);
    }

  /* A v0.7.1 run whose log printed its version (ingest keeps it in the run's metadata) is read
   * under it without being told: the store and the rules both. */
  {
    GenRun v071 = { "verl_HEAD", "", "tis_token_t2" };
    g_autoptr (DwRunInfo) run = NULL;
    g_autoptr (DwHealthReport) report = NULL;
    g_autoptr (DwSeries) raw = NULL;
    g_autofree char *got = NULL, *generation = NULL;
    const char *source = NULL;

    store_golden_run (f->store, "printed-0.7.1", &v071);
    run = dw_store_find_run (f->store, "printed-0.7.1", &error);
    g_assert_no_error (error);
    g_assert_true (
      dw_store_set_run_meta (f->store, run->id,
                             "{\"framework_version\": \"0.7.1\", \"generation\": \"verl-0.7.1\", "
                             "\"generation_source\": \"log\"}",
                             &error));
    generation = dw_store_get_run_generation (f->store, run->id, &source, &error);
    g_assert_cmpstr (generation, ==, "verl-0.7.1");
    g_assert_cmpstr (source, ==, "log");
    raw = dw_store_get_series (f->store, run->id, "is_raw_mean", G_MININT64, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (raw->n, ==, 45);
    report = dw_health_report_run (f->store, run->id, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (report->generation, ==, "verl-0.7.1");
    g_assert_cmpstr (report->generation_source, ==, "log");
    g_assert_false (report->generation_inferred);
    got = summarize (report->events);
    g_assert_cmpstr (got, ==, cases[1].events);
  }
}

/* `tags` shows each key with the canonical metric and meaning it has under the run's
 * generation: the same key means different things in different releases. */
static void
test_cli_tags (Fixture *f, gconstpointer data)
{
  const GenRun old = { "verl_v0.6.0", "", "token_truncate_t2_defaultveto" };
  const GenRun slime = { "slime_HEAD_builtin", "", "vanilla_tis_0.5_2" };
  const GenRun g070 = { "verl_v0.7.0", "", "tis_token_t2" };
  const GenRun icepop = { "verl_v0.9.0", "", "icepop_token_0.5_5" };
  const struct
  {
    const char *run;
    const GenRun *source;
    const char *key;
    const char *canonical;
    const char *generation;
    const char *logged_by;
    const char *meaning_part;
  } cases[] = {
    { "old", &old, "mismatch/rollout_is_mean", "is_raw_mean", "verl-0.6.0", "verl-0.6.0",
      "raw ratio" },
    { "g070", &g070, "rollout_corr/rollout_is_mean", "is_raw_mean", "verl-0.7.0",
      "verl-0.7.0 – verl-0.7.1", "before truncation" },
    { "icepop", &icepop, "rollout_corr/rollout_is_mean", "is_mean", "verl-0.9.0",
      "verl-0.8.0 – verl-0.9.0", "applied weights" },
    { "icepop", &icepop, "rollout_corr/rollout_is_oob_ratio", "is_oob_fraction", "verl-0.9.0",
      "verl-0.8.0 – verl-0.9.0", "IcePop" },
    { "slime", &slime, "train/tis", "is_raw_mean", "slime", "slime", "not of the weights" },
  };

  if (!g_file_test ("../shared/golden", G_FILE_TEST_IS_DIR) && g_getenv ("DW_SHARED_DIR") == NULL)
    {
      g_test_skip ("../shared/golden is missing");
      return;
    }
  store_golden_run (f->store, "old", &old);
  store_golden_run (f->store, "g070", &g070);
  store_golden_run (f->store, "icepop", &icepop);
  store_golden_run (f->store, "slime", &slime);
  g_clear_object (&f->store);
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *out = NULL, *err = NULL, *text = NULL;
      const char *js[] = { "tags", "--run", cases[c].run, "--db", f->db, "--format", "json", NULL };
      const char *tx[] = { "tags", "--run", cases[c].run, "--db", f->db, NULL };
      g_autoptr (JsonParser) p = json_parser_new ();
      JsonArray *tags;
      JsonObject *found = NULL;

      g_assert_cmpint (dw_test_run_cli (js, NULL, &out, &err), ==, 0);
      g_assert_true (json_parser_load_from_data (p, out, -1, NULL));
      tags = json_node_get_array (json_parser_get_root (p));
      for (guint i = 0; i < json_array_get_length (tags); i++)
        {
          JsonObject *t = json_array_get_object_element (tags, i);
          g_assert_cmpstr (json_object_get_string_member (t, "generation"), ==,
                           cases[c].generation);
          /* every key the release logged maps */
          g_assert_false (JSON_NODE_HOLDS_NULL (json_object_get_member (t, "canonical")));
          if (g_str_equal (json_object_get_string_member (t, "name"), cases[c].key))
            found = t;
        }
      g_assert_nonnull (found);
      g_assert_cmpstr (json_object_get_string_member (found, "canonical"), ==, cases[c].canonical);
      g_assert_cmpstr (json_object_get_string_member (found, "logged_by"), ==, cases[c].logged_by);
      if (strstr (json_object_get_string_member (found, "meaning"), cases[c].meaning_part) == NULL)
        g_error ("%s: %s", cases[c].key, json_object_get_string_member (found, "meaning"));

      g_clear_pointer (&err, g_free);
      g_assert_cmpint (dw_test_run_cli (tx, NULL, &text, &err), ==, 0);
      g_autofree char *head = g_strdup_printf ("# generation: %s (inferred from the logged keys)\n",
                                               cases[c].generation);
      g_autofree char *line = g_strdup_printf ("\n%s\t%s\t45\t", cases[c].key, cases[c].canonical);
      g_assert_true (g_str_has_prefix (text, head));
      g_assert_nonnull (strstr (text, line));
    }
}

/* The same, end to end as a user has it: verl's FileLogger JSONL (one {"step","data"} line per
 * step, NaN as null) written from the releases' golden metrics, ingested with `driftwatch-cli
 * ingest`, judged with `check`. The v0.7.1 log is judged once from its keys and once with
 * --generation verl-0.7.1 (its printed version). */
static char *
write_golden_jsonl (const char *dir, const char *name, const GenRun *g)
{
  const struct
  {
    const char *batch;
    gint64 first, last;
  } phases[] = { { "moderate", 1, 30 }, { "heavy_tail", 31, 40 }, { "extreme", 41, 45 } };
  g_autofree char *folder = g_build_filename (dir, name, NULL);
  g_autofree char *path = g_build_filename (folder, "metrics.jsonl", NULL);
  g_autoptr (GString) text = g_string_new (NULL);

  g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  for (gsize ph = 0; ph < G_N_ELEMENTS (phases); ph++)
    {
      const char *shared = g_getenv ("DW_SHARED_DIR");
      g_autofree char *file = g_strdup_printf ("%s__%s.json", phases[ph].batch, g->config);
      g_autofree char *golden
        = g_build_filename (shared ? shared : "../shared", "golden", g->group, file, NULL);
      g_autoptr (JsonParser) p = json_parser_new ();
      g_autoptr (JsonGenerator) gen = json_generator_new ();
      JsonObject *metrics;
      g_autofree char *data = NULL;

      g_assert_true (json_parser_load_from_file (p, golden, NULL));
      metrics = json_object_get_object_member (json_node_get_object (json_parser_get_root (p)),
                                               "metrics");
      /* orjson writes NaN and ±inf as null */
      {
        GList *members = json_object_get_members (metrics);
        for (GList *l = members; l != NULL; l = l->next)
          if (json_node_get_value_type (json_object_get_member (metrics, l->data)) == G_TYPE_STRING)
            json_object_set_null_member (metrics, l->data);
        g_list_free (members);
      }
      json_generator_set_root (
        gen, json_object_get_member (json_node_get_object (json_parser_get_root (p)), "metrics"));
      data = json_generator_to_data (gen, NULL);
      for (gint64 step = phases[ph].first; step <= phases[ph].last; step++)
        g_string_append_printf (text, "{\"step\":%" G_GINT64_FORMAT ",\"data\":%s}\n", step, data);
    }
  g_assert_true (g_file_set_contents (path, text->str, text->len, NULL));
  return g_steal_pointer (&folder);
}

static void
test_cli_generations (Fixture *f, gconstpointer data)
{
  const GenRun v071 = { "verl_HEAD", "", "tis_token_t2" };
  const GenRun v080 = { "verl_v0.8.0", "", "tis_token_t2" };
  const struct
  {
    const char *run;
    const char *generation; /* --generation, or NULL */
    const char *first_events[3];
    const char *want_generation;
  } cases[] = {
    { "run071",
      NULL,
      { "chi2-token-high critical 31", "is-ratio-high warning 31", NULL },
      "verl-0.9.0" },
    { "run071",
      "verl-0.7.1",
      { "is-mean-range critical 31", "chi2-token-high critical 31", "is-mean-range warning 31" },
      "verl-0.7.1" },
    { "run080",
      NULL,
      { "chi2-token-high critical 31", "is-ratio-high warning 31", NULL },
      "verl-0.9.0" },
  };
  g_autofree char *d071 = NULL, *d080 = NULL;

  if (!g_file_test ("../shared/golden", G_FILE_TEST_IS_DIR) && g_getenv ("DW_SHARED_DIR") == NULL)
    {
      g_test_skip ("../shared/golden is missing");
      return;
    }
  g_clear_object (&f->store);
  d071 = write_golden_jsonl (f->dir, "run071", &v071);
  d080 = write_golden_jsonl (f->dir, "run080", &v080);
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *a[] = { "ingest", "--db", f->db, d071, d080, NULL };
    g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 0);
  }
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *out = NULL, *err = NULL;
      const char *a[] = { "check",
                          "--run",
                          cases[c].run,
                          "--db",
                          f->db,
                          "--format",
                          "json",
                          cases[c].generation ? "--generation" : NULL,
                          cases[c].generation,
                          NULL };
      g_autoptr (JsonParser) p = json_parser_new ();
      JsonObject *report;
      JsonArray *events;

      g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 1);
      g_assert_true (json_parser_load_from_data (p, out, -1, NULL));
      report
        = json_object_get_object_member (json_node_get_object (json_parser_get_root (p)), "report");
      g_assert_cmpstr (json_object_get_string_member (report, "generation"), ==,
                       cases[c].want_generation);
      g_assert_cmpint (json_object_get_boolean_member (report, "generation_inferred"), ==,
                       cases[c].generation == NULL);
      events = json_object_get_array_member (report, "events");
      for (guint i = 0; i < 3 && cases[c].first_events[i] != NULL; i++)
        {
          JsonObject *e = json_array_get_object_element (events, i);
          g_autofree char *got = g_strdup_printf ("%s %s %" G_GINT64_FORMAT,
                                                  json_object_get_string_member (e, "rule_id"),
                                                  json_object_get_string_member (e, "severity"),
                                                  json_object_get_int_member (e, "first_step"));
          g_assert_cmpstr (got, ==, cases[c].first_events[i]);
        }
    }
  {
    /* the text names the generation; a release that shares another's keys says so */
    g_autofree char *out = NULL, *err = NULL, *out2 = NULL;
    const char *a[]
      = { "check", "--run", "run071", "--db", f->db, "--generation", "verl-0.7.1", NULL };
    const char *b[]
      = { "check", "--run", "run071", "--db", f->db, "--generation", "verl-0.6.1", NULL };
    g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 1);
    if (strstr (out, "\n  generation: verl-0.7.1 (given)\n  Collapsed at step 31 "
                     "(Raw IS ratio mean outside [0.5, 2] — collapse level): Raw IS "
                     "ratio mean ")
        == NULL)
      g_error ("%s", out);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (dw_test_run_cli (b, NULL, &out2, &err), ==, 1);
    g_assert_nonnull (strstr (out2, "\n  generation: verl-0.6.1 (given; keys as in verl-0.7.0)\n"));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *a[]
      = { "check", "--run", "run071", "--db", f->db, "--generation", "verl-1x", NULL };
    g_assert_cmpint (dw_test_run_cli (a, NULL, &out, &err), ==, 2);
    g_assert_nonnull (strstr (err, "unknown generation 'verl-1x'"));
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
  g_test_add ("/health-store/cli-no-mismatch", Fixture, NULL, fixture_set_up, test_cli_no_mismatch,
              fixture_tear_down);
  g_test_add ("/health-store/generations", Fixture, NULL, fixture_set_up, test_generations,
              fixture_tear_down);
  g_test_add ("/health-store/cli-tags", Fixture, NULL, fixture_set_up, test_cli_tags,
              fixture_tear_down);
  g_test_add ("/health-store/cli-generations", Fixture, NULL, fixture_set_up, test_cli_generations,
              fixture_tear_down);
  return g_test_run ();
}
