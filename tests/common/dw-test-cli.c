/* dw-test-cli.c — running driftwatch-cli from the tests (see dw-test-cli.h)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-test-cli.h"

#include <gio/gio.h>
#include <string.h>

static char *
bytes_to_string (GBytes *bytes)
{
  gsize len = 0;
  const char *data = bytes ? g_bytes_get_data (bytes, &len) : NULL;

  return g_strndup (data ? data : "", len);
}

int
dw_test_run_cli (const char *const *args, const char *input, char **out, char **err)
{
  const char *cli = g_getenv ("DW_CLI");
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GSubprocessLauncher) launcher = NULL;
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GBytes) stdin_buf = NULL, stdout_buf = NULL, stderr_buf = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_nonnull (cli);
  g_ptr_array_add (argv, (gpointer)cli);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add (argv, (gpointer)*a);
  g_ptr_array_add (argv, NULL);
  launcher
    = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                 | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  proc = g_subprocess_launcher_spawnv (launcher, (const char *const *)argv->pdata, &error);
  g_assert_no_error (error);
  stdin_buf = g_bytes_new (input ? input : "", input ? strlen (input) : 0);
  g_assert_true (
    g_subprocess_communicate (proc, stdin_buf, NULL, &stdout_buf, &stderr_buf, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (proc));
  if (out != NULL)
    *out = bytes_to_string (stdout_buf);
  if (err != NULL)
    *err = bytes_to_string (stderr_buf);
  return g_subprocess_get_exit_status (proc);
}
