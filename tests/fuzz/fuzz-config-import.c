/* fuzz-config-import.c — libFuzzer target for the config importer (verl YAML, Hydra, shell args,
 * slime here-documents)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Input: one byte choosing the generation (b % 5) and the format (b / 5 % 3), then the text.
 * Checks: failure ⇔ a GError with a message, and an empty config; an accepted config only holds
 * keys its generation accepts; exporting it (when it has no list/dict values) and importing the
 * export again gives the same config.
 */
#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dw-config-export.h"

static int
same_value (const DwValue *a, const DwValue *b)
{
  if (a->kind != b->kind)
    return 0;
  switch (a->kind)
    {
    case DW_VALUE_BOOL:
      return a->b == b->b;
    case DW_VALUE_INT:
      return a->i == b->i;
    case DW_VALUE_FLOAT:
      return (isnan (a->f) && isnan (b->f)) || a->f == b->f;
    case DW_VALUE_STR:
      return strcmp (a->s, b->s) == 0;
    default:
      return 1;
    }
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1 || size > 65536)
    return 0;
  DwGeneration gen = (DwGeneration)(data[0] % DW_N_GENERATIONS);
  DwExportFormat fmt = (DwExportFormat)(data[0] / DW_N_GENERATIONS % DW_N_EXPORT_FORMATS);
  DwConfig c;
  GError *error = NULL;
  DwGeneration dg;
  DwExportFormat df;
  dw_config_import_detect ((const char *)data + 1, (gssize)size - 1, &dg, &df);
  if ((int)dg < 0 || dg >= DW_N_GENERATIONS || (int)df < 0 || df >= DW_N_EXPORT_FORMATS)
    abort ();
  gboolean ok
    = dw_config_import ((const char *)data + 1, (gssize)size - 1, "fuzz", gen, fmt, &c, &error);
  if (!ok)
    {
      if (error == NULL || error->message == NULL || error->message[0] == '\0' || c.n_keys != 0)
        abort ();
      g_error_free (error);
      return 0;
    }
  if (error != NULL)
    abort ();
  int has_other = 0;
  for (size_t i = 0; i < c.n_keys; i++)
    {
      if (!dw_export_key_accepted (gen, c.keys[i]))
        abort ();
      has_other |= c.values[i].kind == DW_VALUE_OTHER;
    }
  if (has_other)
    return 0;
  char *text = dw_config_export (&c, fmt, &error);
  if (text == NULL)
    {
      /* the importer accepted it, so verl would: it must export, unless a string holds a
       * newline or another control character that Hydra overrides cannot carry */
      if (fmt == DW_EXPORT_FORMAT_YAML
          || !g_error_matches (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT))
        abort ();
      g_error_free (error);
      return 0;
    }
  DwConfig back;
  if (!dw_config_import (text, -1, "re-import", gen, fmt, &back, &error))
    abort ();
  if (back.n_keys != c.n_keys)
    abort ();
  for (size_t i = 0; i < c.n_keys; i++)
    {
      const DwValue *v = dw_config_get (&back, c.keys[i]);
      if (v == NULL || !same_value (&c.values[i], v))
        abort ();
    }
  g_free (text);
  return 0;
}
