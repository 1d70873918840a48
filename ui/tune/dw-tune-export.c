/* dw-tune-export.c — config export and import for the tune view (see the header); the page's
 * Copy, Paste and Save Config actions are in dw-tune-actions.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-tune-export"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "dw-tune-export.h"

#include "dw-config-export.h"

static gboolean
dw_tune_export_parse_format (const char *format, DwExportFormat *f, GError **error)
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
  if (!dw_tune_export_parse_format (format, &f, error))
    return NULL;
  return dw_config_export (config, f, error);
}

const char *const *
dw_tune_export_formats (DwGeneration gen)
{
  static const char *lists[DW_N_GENERATIONS][DW_N_EXPORT_FORMATS + 1];
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      for (int g = 0; g < DW_N_GENERATIONS; g++)
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

void
dw_tune_export_drop_unread (DwConfig *config)
{
  DwConfig read = *config;

  /* decided on the config as it is, then removed together */
  for (size_t i = 0; i < config->n_keys; i++)
    if (!dw_export_key_read (config, config->keys[i]))
      dw_config_unset (&read, config->keys[i]);
  *config = read;
}

gboolean
dw_tune_import_config (const char *text, DwGeneration gen, const char *format, DwConfig *out,
                       GError **error)
{
  DwExportFormat f;
  if (!dw_tune_export_parse_format (format, &f, error))
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
  /* the page's generation when the text is in its vocabulary (verl-0.8.0 and verl-0.9.0 share
   * one, as do verl-0.6.1 and 2f2996b7d) and it reads there; else the one detected */
  if (prefer != gen && dw_generation_info (prefer)->family == dw_generation_info (gen)->family)
    {
      DwConfig trial;
      if (dw_config_import (text, -1, "clipboard", prefer, f, &trial, NULL))
        gen = prefer;
    }
  if (format_out)
    *format_out = dw_export_format_name (f);
  return dw_config_import (text, -1, "clipboard", gen, f, out, error);
}
