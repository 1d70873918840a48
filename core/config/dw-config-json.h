/* dw-config-json.h — GLib/json-glib glue for correction configs and results
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Config keys are verl's argument names / slime's mis.yaml names, as in the golden case files;
 * {"preset": NAME} applies that preset of the config's generation first (other keys override).
 */
#pragma once

#include <glib.h>

#include "dw-config.h"
#include "dw-correction.h"

G_BEGIN_DECLS

#define DW_CONFIG_JSON_ERROR (dw_config_json_error_quark ())
GQuark dw_config_json_error_quark (void);

typedef enum
{
  DW_CONFIG_JSON_ERROR_PARSE,       /* not JSON / not an object / bad KEY=VALUE */
  DW_CONFIG_JSON_ERROR_KEY,         /* key too long or too many keys */
  DW_CONFIG_JSON_ERROR_PRESET,      /* unknown preset */
  DW_CONFIG_JSON_ERROR_UNKNOWN_KEY, /* a key the generation's schema does not have */
} DwConfigJsonError;

/* Merges a JSON object into @config ("preset" applied first). A key the generation's schema does
 * not have is refused (DW_CONFIG_JSON_ERROR_UNKNOWN_KEY, naming the key and the accepted keys),
 * as verl's Hydra / slime's argparse would; a key given twice is refused by dw_json_load (PARSE,
 * with its offset). */
gboolean dw_config_merge_json (DwConfig *config, const char *json, GError **error);
/* The same, keeping keys the schema does not have: for a config a trainer's log printed (it may
 * carry keys of features Driftwatch does not model; they are stored as printed). */
gboolean dw_config_merge_json_lenient (DwConfig *config, const char *json, GError **error);
/* A `--config` argument: the name of a JSON file when it names a regular file or ends in ".json"
 * (at most 1 MiB; its name then starts every error message), else the JSON text itself. */
gboolean dw_config_merge_json_arg (DwConfig *config, const char *argument, GError **error);
/* The JSON text of a `--config` argument as above (g_free), *@from_file set; NULL on error. */
char *dw_config_json_arg_text (const char *argument, gboolean *from_file, GError **error);
/* "KEY=VALUE": VALUE parsed as JSON when it parses (2 → int, 2.0 → float, "x" → str, null → None,
 * true → bool), else taken as a bare string. KEY "preset" applies the preset. */
gboolean dw_config_set_assignment (DwConfig *config, const char *assignment, GError **error);

/* JSON renderings (appended to @out). Floats of configs as Python repr (round-trip, keeps 2.0 a
 * float), metric values as %.17g, non-finite values as the strings "nan", "inf", "-inf". */
void dw_json_append_value (GString *out, const DwValue *value);
void dw_json_append_config (GString *out, const DwConfig *config);
void dw_json_append_number (GString *out, double v);
void dw_json_append_string (GString *out, const char *s);
void dw_json_append_metrics (GString *out, const DwCorrectionResult *result);
/* [[...], ...] of a result array (weights or mask) */
void dw_json_append_array (GString *out, const void *data, DwDType dtype, size_t rows, size_t cols);
void dw_json_append_error (GString *out, const DwCorrectionError *error);

G_END_DECLS
