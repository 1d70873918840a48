/* test-ingest-kill.c — `driftwatch-cli ingest` killed at many moments, then run again, leaves a
 * store equal to one clean ingest, and PRAGMA integrity_check = ok
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A collapse demo run (JSONL + tfevents + per-step safetensors batches) is ingested with small
 * chunks (many transactions). Kill points: SIGKILL at 20 moments spread over the duration of a
 * clean ingest, plus deterministic crash points (exit inside a transaction before its COMMIT,
 * and right after a COMMIT) at commits spread over the whole ingest, from a library preloaded
 * into the CLI (dw-crash-hook.c).
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include "dw-demo.h"
#include "dw-store-writer.h"

#define N_KILLS 20

typedef struct
{
  char *dir;
  char *demo;
  char *reference; /* dump of a clean ingest */
  double clean_seconds;
  guint n_commits;
} Ctx;

static Ctx ctx;

static char **
ingest_argv (const char *db)
{
  /* small transactions: many commits, more places to be killed at */
  return g_strdupv ((char *[]){ (char *)g_getenv ("DW_CLI"), "ingest", "--quiet", "--chunk-bytes",
                                "4096", "--db", (char *)db, ctx.demo, NULL });
}

static char **
env_with (const char *var, const char *value)
{
  char **env = g_get_environ ();

  if (var != NULL)
    {
      /* the crash points live in a preloaded library (tests/ingest/dw-crash-hook.c) */
      env = g_environ_setenv (env, var, value, TRUE);
      env = g_environ_setenv (env, "LD_PRELOAD", DW_CRASH_HOOK, TRUE);
      env = g_environ_setenv (env, "ASAN_OPTIONS", "detect_leaks=0:verify_asan_link_order=0", TRUE);
    }
  return env;
}

static GPid
spawn (const char *db, const char *var, const char *value)
{
  g_auto (GStrv) argv = ingest_argv (db);
  g_auto (GStrv) env = env_with (var, value);
  g_autoptr (GError) error = NULL;
  GPid pid;

  g_assert_true (
    g_spawn_async (NULL, argv, env, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &error));
  g_assert_no_error (error);
  return pid;
}

static int
wait_status (GPid pid)
{
  int status;

  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  return status;
}

/* Runs the ingest to completion (exit 0) and returns the store's dump, after checking the
 * store's integrity. */
static char *
finish_and_dump (const char *db)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  int status = wait_status (spawn (db, NULL, NULL));
  char *dump;

  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  store = dw_store_open (db, &error);
  g_assert_no_error (error);
  g_assert_true (dw_store_check_integrity (store, &error));
  g_assert_no_error (error);
  dump = dw_store_dump (store, &error);
  g_assert_no_error (error);
  return dump;
}

static void
assert_same (const char *got, const char *what)
{
  if (g_strcmp0 (got, ctx.reference) != 0)
    {
      g_autofree char *a = g_build_filename (ctx.dir, "got.txt", NULL);
      g_autofree char *b = g_build_filename (ctx.dir, "want.txt", NULL);
      g_file_set_contents (a, got, -1, NULL);
      g_file_set_contents (b, ctx.reference, -1, NULL);
      g_error ("%s: the store differs from a clean ingest (diff %s %s)", what, a, b);
    }
}

static void
test_sigkill (void)
{
  guint killed_midway = 0;

  for (guint k = 0; k < N_KILLS; k++)
    {
      /* moments spread over a clean ingest's duration; when the machine was faster this time
       * and the ingest finished before the kill, try again earlier */
      double us = ctx.clean_seconds * 1e6 * (k + 0.5) / N_KILLS;

      for (guint attempt = 0; attempt < 6; attempt++, us *= 0.5)
        {
          g_autofree char *db = g_strdup_printf ("%s/kill-%u-%u.db", ctx.dir, k, attempt);
          g_autofree char *got = NULL;
          GPid pid = spawn (db, NULL, NULL);
          gboolean hit;
          int status;

          g_usleep ((gulong)us);
          kill (pid, SIGKILL);
          status = wait_status (pid);
          hit = WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL;
          got = finish_and_dump (db);
          assert_same (got, "SIGKILL");
          if (hit)
            {
              killed_midway++;
              break;
            }
        }
    }
  g_test_message ("%u of %d SIGKILLs hit a running ingest", killed_midway, N_KILLS);
  /* most kill points must really interrupt an ingest, or this test tests nothing */
  g_assert_cmpuint (killed_midway, >=, N_KILLS / 2);
}

/* The store's crash hooks: exit inside transaction n (before COMMIT), or right after it. */
static void
test_crash_hooks (void)
{
  static const char *const vars[] = { "DW_STORE_CRASH_IN_TX", "DW_STORE_CRASH_AFTER_TX" };
  guint points[10];

  for (guint i = 0; i < G_N_ELEMENTS (points); i++)
    points[i] = 1 + (guint)((ctx.n_commits - 1) * (double)i / (G_N_ELEMENTS (points) - 1));
  for (guint v = 0; v < G_N_ELEMENTS (vars); v++)
    for (guint i = 0; i < G_N_ELEMENTS (points); i++)
      {
        g_autofree char *db = g_strdup_printf ("%s/hook-%u-%u.db", ctx.dir, v, i);
        g_autofree char *n = g_strdup_printf ("%u", points[i]);
        g_autofree char *got = NULL;
        int status = wait_status (spawn (db, vars[v], n));

        g_assert_true (WIFEXITED (status));
        g_assert_cmpint (WEXITSTATUS (status), ==, 99); /* it did crash there */
        got = finish_and_dump (db);
        assert_same (got, vars[v]);
      }
}

/* Counts the transactions of a clean ingest: the first n where the after-commit hook no longer
 * fires. Binary search on the hook (each probe is a fresh store). */
static guint
count_commits (void)
{
  guint lo = 1, hi = 1;

  for (;;)
    {
      g_autofree char *db = g_strdup_printf ("%s/count-%u.db", ctx.dir, hi);
      g_autofree char *n = g_strdup_printf ("%u", hi);
      int status = wait_status (spawn (db, "DW_STORE_CRASH_AFTER_TX", n));
      g_assert_true (WIFEXITED (status));
      if (WEXITSTATUS (status) != 99)
        break;
      lo = hi;
      hi *= 2;
    }
  while (hi - lo > 1)
    {
      guint mid = (lo + hi) / 2;
      g_autofree char *db = g_strdup_printf ("%s/count-%u.db", ctx.dir, mid);
      g_autofree char *n = g_strdup_printf ("%u", mid);
      int status = wait_status (spawn (db, "DW_STORE_CRASH_AFTER_TX", n));
      if (WEXITSTATUS (status) == 99)
        lo = mid;
      else
        hi = mid;
    }
  return lo;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *clean_db = NULL;
  gint64 t0;
  int rc;

  g_test_init (&argc, &argv, NULL);
  ctx.dir = g_dir_make_tmp ("dw-kill-XXXXXX", &error);
  g_assert_no_error (error);
  ctx.demo = g_build_filename (ctx.dir, "demo-run", NULL);
  g_assert_true (dw_demo_write (ctx.demo, DW_DEMO_COLLAPSE, 40, 7, &error));
  g_assert_no_error (error);

  clean_db = g_build_filename (ctx.dir, "clean.db", NULL);
  t0 = g_get_monotonic_time ();
  {
    int status = wait_status (spawn (clean_db, NULL, NULL));
    g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  }
  ctx.clean_seconds = (g_get_monotonic_time () - t0) / 1e6;
  {
    g_autoptr (DwStore) store = dw_store_open (clean_db, &error);
    g_assert_no_error (error);
    ctx.reference = dw_store_dump (store, &error);
    g_assert_no_error (error);
    g_assert_nonnull (strstr (ctx.reference, "step_000040.safetensors"));
  }
  ctx.n_commits = count_commits ();
  g_test_message ("clean ingest: %.3f s, %u transactions", ctx.clean_seconds, ctx.n_commits);
  g_assert_cmpuint (ctx.n_commits, >=, 60);

  g_test_add_func ("/ingest-kill/sigkill", test_sigkill);
  g_test_add_func ("/ingest-kill/crash-hooks", test_crash_hooks);
  rc = g_test_run ();
  if (rc == 0)
    {
      g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", ctx.dir);
      g_assert_cmpint (system (cmd), ==, 0);
    }
  g_free (ctx.reference);
  g_free (ctx.demo);
  g_free (ctx.dir);
  return rc;
}
