/* dw-tune-export.c — config export for the tune view (see the header)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-tune-export.h"

#include "dw-config-export.h"

static gboolean
parse_format (const char *format, DwExportFormat *f, GError **error)
{
  if (dw_export_format_from_name (format, f))
    return TRUE;
  g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT, "unknown format %s", format);
  return FALSE;
}

char *
dw_tune_export_config (const DwConfig *config, const char *format, GError **error)
{
  DwExportFormat f;
  if (!parse_format (format, &f, error))
    return NULL;
  return dw_config_export (config, f, error);
}

const char *const *
dw_tune_export_formats (DwGeneration gen)
{
  static const char *lists[DW_N_GENERATIONS_PRE_RELEASE_NAMES][DW_N_EXPORT_FORMATS + 1];
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      for (int g = 0; g < DW_N_GENERATIONS_PRE_RELEASE_NAMES; g++)
        {
          int n = 0;
          for (int f = 0; f < DW_N_EXPORT_FORMATS; f++)
            if (dw_export_format_supported ((DwGeneration)g, (DwExportFormat)f))
              lists[g][n++] = dw_export_format_name ((DwExportFormat)f);
          lists[g][n] = NULL;
        }
      g_once_init_leave (&once, 1);
    }
  return (const char *const *)lists[gen];
}

gboolean
dw_tune_export_key_accepted (DwGeneration gen, const char *key)
{
  return dw_export_key_accepted (gen, key);
}

gboolean
dw_tune_import_config (const char *text, DwGeneration gen, const char *format, DwConfig *out,
                       GError **error)
{
  DwExportFormat f;
  if (!parse_format (format, &f, error))
    return FALSE;
  return dw_config_import (text, -1, format, gen, f, out, error);
}

gboolean
dw_tune_import_detect (const char *text, DwGeneration prefer, DwConfig *out,
                       const char **format_out, GError **error)
{
  DwGeneration gen;
  DwExportFormat f;
  dw_config_import_detect (text, -1, &gen, &f);
  /* the Tune page offers the generations of before the release names: read a pasted config as
   * the one of those with the same keys */
  if (gen >= DW_N_GENERATIONS_PRE_RELEASE_NAMES)
    {
      const DwFamily family = dw_generation_info (gen)->family;
      gen = family == DW_FAMILY_VERL_K_OPTIONS   ? DW_GEN_VERL
            : family == DW_FAMILY_VERL_LEGACY_RS ? DW_GEN_VERL_0_7
            : family == DW_FAMILY_VERL_MISMATCH  ? DW_GEN_VERL_0_6
                                                 : DW_GEN_SLIME;
    }
  if (gen == DW_GEN_VERL_0_7 && prefer == DW_GEN_VERL_0_6_1)
    gen = prefer;
  if (format_out)
    *format_out = dw_export_format_name (f);
  return dw_config_import (text, -1, "clipboard", gen, f, out, error);
}
