/* main.c — driftwatch, the GNOME application
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <locale.h>

#include <glib/gi18n.h>

#include "dw-application.h"

int
main (int argc, char **argv)
{
  g_autoptr (DwApplication) app = NULL;
  int status;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  app = dw_application_new (APP_ID, G_APPLICATION_HANDLES_OPEN);
  status = g_application_run (G_APPLICATION (app), argc, argv);
  return status != 0 ? status : dw_application_get_exit_status (app);
}
