/* fuzz-log-sniff.c — libFuzzer target for recognising logs by content (dw-log-sniff.h) and
 * reading a run's printed config and version (dw-run-meta.h)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The input is written to a file (its first byte picks the name, so the document rule is
 * exercised too), examined in two steps as a growing file would be (the first half, then all),
 * and scanned for run metadata as a verl and as a slime console log; any metadata found must be
 * a JSON object.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "dw-log-sniff.h"
#include "dw-run-meta.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

static const char *const names[]
  = { "train.log", "README.md", "events.out.tfevents.1.h.1.0", "mlflow.db", "notes.txt" };
static char *dir;

static void
check_meta (int fd, const char *path, DwFormat format)
{
  g_autofree char *meta = dw_run_meta_scan (fd, path, format, G_USEC_PER_SEC);
  g_autoptr (JsonParser) parser = json_parser_new ();

  if (meta == NULL)
    return;
  if (!json_parser_load_from_data (parser, meta, -1, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    abort ();
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  g_autofree char *path = NULL;
  g_autoptr (DwSniffer) s = NULL;
  int fd;

  if (dir == NULL)
    dir = g_dir_make_tmp ("dw-fuzz-sniff-XXXXXX", NULL);
  if (size == 0)
    return 0;
  path = g_build_filename (dir, names[data[0] % G_N_ELEMENTS (names)], NULL);
  s = dw_sniffer_new (path);
  if (!g_file_set_contents (path, (const char *)data + 1, (gssize)(size - 1) / 2, NULL))
    abort ();
  fd = g_open (path, O_RDONLY, 0);
  if (fd < 0)
    abort ();
  dw_sniffer_step (s, fd, G_USEC_PER_SEC);
  close (fd);
  {
    /* grows in place (same inode): the sniffer goes on from where it stopped */
    FILE *fp = fopen (path, "ab");
    if (fp == NULL)
      abort ();
    fwrite (data + 1 + (size - 1) / 2, 1, size - 1 - (size - 1) / 2, fp);
    fclose (fp);
  }
  fd = g_open (path, O_RDONLY, 0);
  if (fd < 0)
    abort ();
  if (dw_sniffer_step (s, fd, G_USEC_PER_SEC) == DW_FORMAT_UNKNOWN
      && dw_sniffer_get_reason (s) == NULL)
    abort (); /* every file not recognised says why */
  check_meta (fd, path, DW_FORMAT_VERL_CONSOLE);
  check_meta (fd, path, DW_FORMAT_SLIME_CONSOLE);
  close (fd);
  g_unlink (path);
  return 0;
}
