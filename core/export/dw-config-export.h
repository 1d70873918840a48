/* dw-config-export.h — correction configs to and from verl YAML / Hydra overrides / slime flags
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * GTK-free. Export writes only the keys the config's generation accepts:
 *   verl (b178a3cd5), verl-0.7, verl-0.6.1: algorithm.rollout_correction.<key>
 *   verl-0.6 (mismatch_helper): algorithm.<key>
 *   slime: the --custom-config-path YAML (mis.yaml keys), plus the flags that load it.
 * Import reads any of these back into a DwConfig and refuses what verl/slime would reject: keys the
 * generation does not accept, and every config error dw_correction_check_config() reproduces.
 */
#pragma once

#include <glib.h>

#include "dw-config.h"
#include "dw-export-format.h"

G_BEGIN_DECLS

/* Keys @gen accepts, in export order (NULL-terminated, static). */
const char *const *dw_export_accepted_keys (DwGeneration gen);
gboolean dw_export_key_accepted (DwGeneration gen, const char *key);
/* Whether an export of @config may name @key: the generation accepts it and the path @config
 * runs reads it (slime's built-in TIS / IcePop read only their flags, mis.py not tis_clip /
 * tis_clip_low). The Tune page drops the others when the path changes. */
gboolean dw_export_key_read (const DwConfig *config, const char *key);
/* The dotted config path the keys live under: "algorithm.rollout_correction", "algorithm", or ""
 * for slime (its YAML is flat). */
const char *dw_export_section (DwGeneration gen);
/* Whether @format exists for @gen (slime has no Hydra overrides). */
gboolean dw_export_format_supported (DwGeneration gen, DwExportFormat format);

/* Renders @config (its generation is the target) in @format. Refuses keys the generation does not
 * accept, values it cannot render (lists), and configs dw_correction_check_config() rejects. */
char *dw_config_export (const DwConfig *config, DwExportFormat format, GError **error);

/* Parses @text (@length bytes, -1: NUL-terminated) as @format for @gen into @out. @source names
 * the input in error messages ("FILE:LINE: …"). */
gboolean dw_config_import (const char *text, gssize length, const char *source, DwGeneration gen,
                           DwExportFormat format, DwConfig *out, GError **error);

/* Guesses the generation and format of a pasted text (for import without --from / --format). */
void dw_config_import_detect (const char *text, gssize length, DwGeneration *gen,
                              DwExportFormat *format);

/* For the GUI (copy to clipboard / save): @config_json (as `--config`, may hold "preset") for
 * generation @target ("verl", "verl-0.7", …, "slime") rendered in @format ("yaml", "hydra",
 * "args"). */
char *dw_config_export_string (const char *config_json, const char *target, const char *format,
                               GError **error);
/* For the GUI's paste box: any text → the config as JSON ({"key": value, …}); @target / @format
 * NULL to detect them. */
char *dw_config_import_string (const char *text, const char *target, const char *format,
                               GError **error);

G_END_DECLS
