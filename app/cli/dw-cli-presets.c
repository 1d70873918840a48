/* dw-cli-presets.c — `driftwatch-cli presets [--generation G]`: presets and their fields as JSON
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>

#include "dw-cli.h"
#include "dw-config-json.h"
#include "dw-correction.h"

static void
append_generation (GString *out, DwGeneration gen)
{
  size_t n;
  const DwPresetInfo *l = dw_preset_list (gen, &n);
  g_string_append (out, "{\"generation\": ");
  dw_json_append_string (out, dw_generation_name (gen));
  g_string_append (out, ", \"presets\": [");
  for (size_t i = 0; i < n; i++)
    {
      DwConfig c;
      dw_preset_config (gen, l[i].name, &c, NULL);
      g_string_append (out, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
      dw_json_append_string (out, l[i].name);
      g_string_append (out, ", \"description\": ");
      dw_json_append_string (out, l[i].description);
      g_string_append (out, ", \"fields\": ");
      dw_json_append_config (out, &c);
      g_string_append_c (out, '}');
    }
  g_string_append (out, "]}");
}

int dw_cli_presets (int argc, char **argv);

int
dw_cli_presets (int argc, char **argv)
{
  g_autofree char *generation = NULL;
  GOptionEntry entries[]
    = { { "generation", 'g', 0, G_OPTION_ARG_STRING, &generation, dw_cli_generation_help (), "G" },
        { NULL } };
  g_autoptr (GOptionContext) ctx = g_option_context_new (_ ("— list correction presets"));
  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 1)
    {
      dw_cli_error ("presets", "%s", error ? error->message : _ ("unexpected argument"));
      return 2;
    }
  g_autoptr (GString) out = g_string_new (NULL);
  if (generation)
    {
      DwGeneration gen;
      if (!dw_cli_parse_generation ("presets", generation, &gen))
        return 2;
      append_generation (out, gen);
    }
  else
    {
      g_string_append_c (out, '[');
      for (int g = 0; g < DW_N_GENERATIONS; g++)
        {
          if (g)
            g_string_append (out, ",\n");
          append_generation (out, (DwGeneration)g);
        }
      g_string_append_c (out, ']');
    }
  g_string_append_c (out, '\n');
  fputs (out->str, stdout);
  return 0;
}
