/* dw-crash-hook.c — deterministic crash points for test-ingest-kill, preloaded into the CLI
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * LD_PRELOAD=libdw-crash-hook.so driftwatch-cli ingest …: counts the store's COMMITs (which go
 * through sqlite3_exec) and exits with status 99 inside the n-th transaction, before its COMMIT
 * (DW_STORE_CRASH_IN_TX=n), or right after it (DW_STORE_CRASH_AFTER_TX=n). Kept out of the
 * store itself: production code has no test hooks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*ExecFunc) (sqlite3 *, const char *, int (*) (void *, int, char **, char **), void *,
                         char **);

static unsigned n_commits;

static unsigned
crash_hook_env (const char *name)
{
  const char *v = getenv (name);

  return v != NULL ? (unsigned)strtoul (v, NULL, 10) : 0;
}

int
sqlite3_exec (sqlite3 *db, const char *sql, int (*callback) (void *, int, char **, char **),
              void *data, char **errmsg)
{
  static ExecFunc real_exec;
  int rc;

  if (real_exec == NULL)
    real_exec = (ExecFunc)dlsym (RTLD_NEXT, "sqlite3_exec");
  if (sql == NULL || strcmp (sql, "COMMIT") != 0)
    return real_exec (db, sql, callback, data, errmsg);
  n_commits++;
  if (n_commits == crash_hook_env ("DW_STORE_CRASH_IN_TX"))
    _exit (99);
  rc = real_exec (db, sql, callback, data, errmsg);
  if (rc == SQLITE_OK && n_commits == crash_hook_env ("DW_STORE_CRASH_AFTER_TX"))
    _exit (99);
  return rc;
}
