/* dw-cli.c — driftwatch-cli: headless Driftwatch (links the core only, no display needed)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gi18n.h>

#include "dw-cli.h"

char *
dw_cli_default_db_path (void)
{
  return g_build_filename (g_get_user_data_dir (), "driftwatch", "driftwatch.db", NULL);
}

void
dw_cli_error (const char *command, const char *format, ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  fprintf (stderr, "driftwatch-cli %s: %s\n", command, message);
}

gboolean
dw_cli_parse_generation (const char *command, const char *name, DwGeneration *gen)
{
  const char *note = NULL;
  if (name == NULL)
    return TRUE;
  if (!dw_generation_resolve (name, gen, &note))
    {
      g_autoptr (GString) known = g_string_new (NULL);
      for (int g = 0; g < DW_N_GENERATIONS; g++)
        g_string_append_printf (known, "%s%s", g ? ", " : "", dw_generation_name (g));
      for (const char *const *alias = dw_generation_aliases (); *alias; alias++)
        g_string_append_printf (known, ", %s", *alias);
      dw_cli_error (command, _ ("unknown generation '%s' (known: %s)"), name, known->str);
      return FALSE;
    }
  /* an alias or a commit: say which generation it is, on stderr so JSON output stays clean */
  if (strcmp (name, dw_generation_name (*gen)) != 0)
    {
      if (note)
        dw_cli_error (command, _ ("generation '%s' resolves to %s: %s"), name,
                      dw_generation_name (*gen), note);
      else
        dw_cli_error (command, _ ("generation '%s' resolves to %s"), name,
                      dw_generation_name (*gen));
    }
  return TRUE;
}

const char *
dw_cli_generation_help (void)
{
  return N_ ("verl-0.6.0 … verl-0.9.0, verl (= newest, verl-0.9.0) or slime; old names "
             "verl-0.7, verl-0.6 and commit prefixes are accepted");
}

int dw_cli_version (int argc, char **argv);

int
dw_cli_version (int argc, char **argv)
{
  printf ("driftwatch-cli %s\n", PACKAGE_VERSION);
  return 0;
}

static void
print_usage (FILE *out)
{
  fprintf (out, "%s\n\n%s\n", _ ("Usage: driftwatch-cli COMMAND [ARGS…]"), _ ("Commands:"));
  for (const DwCliCommand *c = dw_cli_commands; c->name != NULL; c++)
    fprintf (out, "  %-14s %s\n", c->name, _ (c->summary));
  fprintf (out, "\n%s\n", _ ("Run “driftwatch-cli COMMAND --help” for the options of a command."));
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  /* Numbers are printed and parsed in the C locale whatever the user's locale. */
  setlocale (LC_NUMERIC, "C");

  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      print_usage (argc < 2 ? stderr : stdout);
      return argc < 2 ? 2 : 0;
    }
  if (strcmp (argv[1], "--version") == 0)
    return dw_cli_version (argc - 1, argv + 1);

  for (const DwCliCommand *c = dw_cli_commands; c->name != NULL; c++)
    if (strcmp (c->name, argv[1]) == 0)
      return c->func (argc - 1, argv + 1);

  fprintf (stderr, _ ("driftwatch-cli: unknown command “%s”\n\n"), argv[1]);
  print_usage (stderr);
  return 2;
}
