/* dw-cli-config-io.c — `driftwatch-cli export-config` and `import-config`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * export-config (--preset P | --config JSON) --to G [--format yaml|hydra|args] [-o FILE]
 * import-config [--from G] [--format yaml|hydra|args] FILE|-
 * Exit codes: 0 ok; 1 unreadable/unwritable file or input that is not YAML/overrides; 2 usage
 * errors and configs verl/slime would reject.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "dw-cli.h"
#include "dw-config-export.h"
#include "dw-config-json.h"
#include "dw-correction.h"

int dw_cli_export_config (int argc, char **argv);
int dw_cli_import_config (int argc, char **argv);

int
dw_cli_export_config (int argc, char **argv)
{
  g_autofree char *preset = NULL, *config_json = NULL, *to = NULL, *format = NULL, *output = NULL;
  GOptionEntry entries[] = {
    { "preset", 'p', 0, G_OPTION_ARG_STRING, &preset, N_ ("Preset of the target generation"),
      "NAME" },
    { "config", 'c', 0, G_OPTION_ARG_STRING, &config_json,
      N_ ("Config as a JSON object (may contain \"preset\"), or a JSON file"), "JSON" },
    { "to", 't', 0, G_OPTION_ARG_STRING, &to, dw_cli_generation_help (), "G" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format, N_ ("yaml (default), hydra or args"), "F" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, N_ ("Write to FILE instead of stdout"),
      "FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx
    = g_option_context_new (_ ("— write a correction config for verl or slime"));
  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 1)
    {
      dw_cli_error ("export-config", "%s", error ? error->message : _ ("unexpected argument"));
      return 2;
    }
  if (to == NULL || (preset == NULL) == (config_json == NULL))
    {
      dw_cli_error ("export-config",
                    _ ("usage: export-config (--preset P | --config JSON) --to "
                       "verl|verl-0.7|verl-0.6.1|verl-0.6|slime [--format yaml|hydra|args] "
                       "[-o FILE]"));
      return 2;
    }
  DwGeneration gen;
  DwExportFormat fmt = DW_EXPORT_FORMAT_YAML;
  if (!dw_cli_parse_generation ("export-config", to, &gen))
    return 2;
  if (format && !dw_export_format_from_name (format, &fmt))
    {
      dw_cli_error ("export-config", _ ("unknown format '%s' (yaml, hydra or args)"), format);
      return 2;
    }
  DwConfig c;
  dw_config_init (&c, gen);
  if (preset)
    {
      DwCorrectionError ce;
      if (!dw_preset_apply (&c, preset, &ce))
        {
          dw_cli_error ("export-config", "%s", ce.message);
          return 2;
        }
    }
  else if (!dw_config_merge_json_arg (&c, config_json, &error))
    {
      dw_cli_error ("export-config", "%s", error->message);
      return 2;
    }
  g_autofree char *text = dw_config_export (&c, fmt, &error);
  if (text == NULL)
    {
      dw_cli_error ("export-config", "%s", error->message);
      return 2;
    }
  if (output)
    {
      if (!g_file_set_contents (output, text, -1, &error))
        {
          dw_cli_error ("export-config", "%s", error->message);
          return 1;
        }
    }
  else
    fputs (text, stdout);
  return 0;
}

int
dw_cli_import_config (int argc, char **argv)
{
  g_autofree char *from = NULL, *format = NULL;
  GOptionEntry entries[] = {
    { "from", 'f', 0, G_OPTION_ARG_STRING, &from, dw_cli_generation_help (), "G" },
    { "format", 'F', 0, G_OPTION_ARG_STRING, &format,
      N_ ("yaml, hydra or args (default: detected)"), "F" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx
    = g_option_context_new (_ ("FILE|- — read a verl/slime config back as JSON"));
  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 2)
    {
      dw_cli_error ("import-config", "%s",
                    error ? error->message
                          : _ ("usage: import-config [--from G] [--format yaml|hydra|args] "
                               "FILE|-"));
      return 2;
    }
  g_autofree char *text = NULL;
  gsize len = 0;
  const char *source = argv[1];
  if (strcmp (argv[1], "-") == 0)
    {
      source = "<stdin>";
      GString *in = g_string_new (NULL);
      char buf[65536];
      size_t n;
      while ((n = fread (buf, 1, sizeof buf, stdin)) > 0)
        g_string_append_len (in, buf, n);
      len = in->len;
      text = g_string_free (in, FALSE);
    }
  else if (!g_file_get_contents (argv[1], &text, &len, &error))
    {
      dw_cli_error ("import-config", "%s", error->message);
      return 1;
    }
  DwGeneration gen;
  DwExportFormat fmt;
  dw_config_import_detect (text, len, &gen, &fmt);
  if (!dw_cli_parse_generation ("import-config", from, &gen))
    return 2;
  if (format && !dw_export_format_from_name (format, &fmt))
    {
      dw_cli_error ("import-config", _ ("unknown format '%s' (yaml, hydra or args)"), format);
      return 2;
    }
  if (!from || !format)
    /* TRANSLATORS: generation and format the importer detected */
    fprintf (stderr, _ ("driftwatch-cli import-config: reading %s as %s %s\n"), source,
             dw_generation_name (gen), dw_export_format_name (fmt));
  DwConfig c;
  if (!dw_config_import (text, len, source, gen, fmt, &c, &error))
    {
      dw_cli_error ("import-config", "%s", error->message);
      return error->code == DW_EXPORT_ERROR_SYNTAX ? 1 : 2;
    }
  g_autoptr (GString) out = g_string_new (NULL);
  dw_json_append_config (out, &c);
  g_string_append_c (out, '\n');
  fputs (out->str, stdout);
  return 0;
}
