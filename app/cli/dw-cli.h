/* dw-cli.h — driftwatch-cli sub-commands
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One file per sub-command (dw-cli-<name>.c) defining `int dw_cli_<name> (int argc, char **argv)`;
 * argv[0] is the sub-command name. Exit codes: 0 ok, 1 unreadable input / runtime failure,
 * 2 usage or configuration error (see docs/CLI.md).
 */
#pragma once

#include <glib.h>

#include "dw-config.h"

G_BEGIN_DECLS

typedef int (*DwCliFunc) (int argc, char **argv);

typedef struct
{
  const char *name;
  DwCliFunc func;
  const char *summary;
} DwCliCommand;

/* The table, in dw-cli-commands.c. */
extern const DwCliCommand dw_cli_commands[];

/* Shared helpers (dw-cli.c). */
char *dw_cli_default_db_path (void);
/* Print "driftwatch-cli NAME: MESSAGE" to stderr. */
void dw_cli_error (const char *command, const char *format, ...) G_GNUC_PRINTF (2, 3);
/* Parses a --generation value into @gen (@name NULL: @gen unchanged). An unknown name is reported
 * as "unknown generation 'NAME'" and gives FALSE (exit code 2). */
/* Parses --generation (canonical names, "verl", old names, commit prefixes) and tells on stderr
 * which generation an alias resolves to. */
gboolean dw_cli_parse_generation (const char *command, const char *name, DwGeneration *gen);
/* The --generation help text shared by every command (untranslated; pass through _()). */
const char *dw_cli_generation_help (void);
/* The correction config (a JSON object) and generation ingest stored with run @run of the store
 * @db (NULL: the default); each NULL when the run has none. FALSE when the store or run cannot
 * be read (the caller reports it as it would anyway). */
gboolean dw_cli_run_stored_config (const char *db, const char *run, char **config_json,
                                   char **generation);

G_END_DECLS
