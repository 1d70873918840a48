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
DW_CLI_DECLARE (metrics)
DW_CLI_DECLARE (presets)
DW_CLI_DECLARE (demo)
DW_CLI_DECLARE (export_config)
DW_CLI_DECLARE (import_config)
DW_CLI_DECLARE (recompute)
DW_CLI_DECLARE (check)
DW_CLI_DECLARE (ingest)
DW_CLI_DECLARE (runs)
DW_CLI_DECLARE (tags)
DW_CLI_DECLARE (series)
DW_CLI_DECLARE (export)
DW_CLI_DECLARE (watch)
DW_CLI_DECLARE (tokens)
#undef DW_CLI_DECLARE

const DwCliCommand dw_cli_commands[] = {
  { "version", dw_cli_version, N_ ("Print the version") },
  { "metrics", dw_cli_metrics, N_ ("Rollout-correction metrics of one batch as JSON") },
  { "presets", dw_cli_presets, N_ ("List correction presets as JSON") },
  { "demo", dw_cli_demo, N_ ("Write a demo run folder (healthy or collapsing run)") },
  { "export-config", dw_cli_export_config,
    N_ ("Write a correction config as verl YAML, Hydra overrides or slime flags") },
  { "import-config", dw_cli_import_config, N_ ("Read a verl/slime config back as JSON") },
  { "recompute", dw_cli_recompute,
    N_ ("Recompute a stored run's correction metrics under a config, against its log") },
  { "check", dw_cli_check, N_ ("Health report of a stored run (exit 1 when a rule fired)") },
  { "ingest", dw_cli_ingest,
    N_ ("Ingest log files, rollout batches and run folders into the store") },
  { "watch", dw_cli_watch, N_ ("Ingest run folders and follow them live, printing health events") },
  { "runs", dw_cli_runs, N_ ("List the stored runs") },
  { "tags", dw_cli_tags, N_ ("List the tags of a stored run") },
  { "series", dw_cli_series,
    N_ ("Print one series of a stored run (CSV or JSON, full resolution)") },
  { "export", dw_cli_export, N_ ("Print every series of a stored run (CSV or JSON)") },
  { "tokens", dw_cli_tokens,
    N_ ("Sequences and tokens behind a step's ratios; catastrophic token ids of a run") },
  { NULL, NULL, NULL },
};
