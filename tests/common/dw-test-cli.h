/* dw-test-cli.h — running driftwatch-cli from the tests
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Runs $DW_CLI with @args (NULL-terminated, without the program) and @input on its standard input
 * (NULL: none), storing its standard output and error in @out and @err (either may be NULL: not
 * kept). Asserts that the CLI could be started and exited normally; returns its exit status. */
int dw_test_run_cli (const char *const *args, const char *input, char **out, char **err);

G_END_DECLS
