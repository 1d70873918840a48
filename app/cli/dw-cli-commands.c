/* dw-cli-commands.c — the sub-command table of driftwatch-cli
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Add a line here and a dw-cli-<name>.c beside it; nothing else needs to change.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "dw-cli.h"

#define DW_CLI_DECLARE(name) int dw_cli_##name (int argc, char **argv);
DW_CLI_DECLARE (version)
#undef DW_CLI_DECLARE

const DwCliCommand dw_cli_commands[] = {
  { "version", dw_cli_version, N_ ("Print the version") },
  { NULL, NULL, NULL },
};
