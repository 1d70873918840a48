/* dw-export-format.h — the export formats by name and the export error domain
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Shared by the exporter, the importer and the syntax helpers below them, so that none of them
 * reaches up into dw-config-export.c for these.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define DW_EXPORT_ERROR (dw_export_error_quark ())
GQuark dw_export_error_quark (void);

typedef enum
{
  DW_EXPORT_ERROR_SYNTAX,   /* not YAML / not a Hydra override / unterminated quote */
  DW_EXPORT_ERROR_KEY,      /* a key the generation does not accept, or given twice */
  DW_EXPORT_ERROR_REJECTED, /* verl / slime would raise on this config (their message) */
  DW_EXPORT_ERROR_FORMAT,   /* format not available for the target, or nothing to import */
} DwExportError;

typedef enum
{
  DW_EXPORT_FORMAT_YAML = 0,
  DW_EXPORT_FORMAT_HYDRA,
  DW_EXPORT_FORMAT_ARGS,
  DW_N_EXPORT_FORMATS
} DwExportFormat;

/* "yaml", "hydra", "args" */
const char *dw_export_format_name (DwExportFormat format);
gboolean dw_export_format_from_name (const char *name, DwExportFormat *out);

G_END_DECLS
