/* dw-export-format.c — the export formats by name and the export error domain
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-export-format.h"

#include <string.h>

/* the formatter would put spaces around the dashes of the domain string */
// clang-format off
G_DEFINE_QUARK (dw-export-error-quark, dw_export_error)
// clang-format on

static const char *const dw_export_format_names[DW_N_EXPORT_FORMATS] = { "yaml", "hydra", "args" };

const char *
dw_export_format_name (DwExportFormat format)
{
  return (int)format >= 0 && format < DW_N_EXPORT_FORMATS ? dw_export_format_names[format] : NULL;
}

gboolean
dw_export_format_from_name (const char *name, DwExportFormat *out)
{
  for (int format = 0; name && format < DW_N_EXPORT_FORMATS; format++)
    if (strcmp (name, dw_export_format_names[format]) == 0)
      {
        *out = (DwExportFormat)format;
        return TRUE;
      }
  return FALSE;
}
