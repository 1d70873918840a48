/* dw-tune-export.h — config export for the tune view
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A separate unit because core/export's DwExportFormat and the chart's DwExportFormat share a
 * name: the tune view includes the chart, this file includes core/export.
 */
#pragma once

#include <glib.h>

#include "dw-config.h"

G_BEGIN_DECLS

/* @format: "yaml", "hydra" or "args" (slime). Returns the text for the config's generation. */
char *dw_tune_export_config (const DwConfig *config, const char *format, GError **error);
/* The formats the config's generation supports, NULL-terminated static array. */
const char *const *dw_tune_export_formats (DwGeneration gen);

/* Reads @text (as exported in @format for @gen) back into @out. */
gboolean dw_tune_import_config (const char *text, DwGeneration gen, const char *format,
                                DwConfig *out, GError **error);
/* Reads a pasted verl YAML / Hydra overrides / slime flags text, detecting generation and format
 * (verl-0.7 and verl-0.6.1 share a vocabulary: @prefer decides between them). @format_out gets
 * the format's name. Errors name the place ("clipboard:LINE: …") and say what verl rejects. */
gboolean dw_tune_import_detect (const char *text, DwGeneration prefer, DwConfig *out,
                                const char **format_out, GError **error);
/* Whether the config's generation accepts @key (export writes only those). */
gboolean dw_tune_export_key_accepted (DwGeneration gen, const char *key);
/* Drops the keys of @config the path it runs does not read (slime: mis.py keys under the
 * built-in TIS / IcePop, tis_clip under mis.py), so that it exports. */
void dw_tune_export_drop_unread (DwConfig *config);

G_END_DECLS
