/* fuzz-ingester.c — libFuzzer target for DwIngester (file bookkeeping, resume, rewrite detection)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The input's first byte picks one of a few file names (and so the name hint of the sniffer);
 * the rest is written there, over what an earlier input left (so growth, truncation and
 * rewrites of a known file are exercised), ingested with tiny chunks, then ingested again:
 * the second ingest of an unchanged file must add nothing. The store's integrity is checked
 * now and then.
 */
#include <stdlib.h>

#include <glib/gstdio.h>

#include "dw-ingester.h"
#include "dw-store-writer.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

static const char *const names[] = {
  "run/metrics.jsonl",
  "run/console.log",
  "run/tensorboard/events.out.tfevents.1700000000.fuzz.0",
  "run/tensorboard/events.out.tfevents.1700000001.fuzz.0",
  "run/history.csv",
  "run/run-fuzz.wandb",
  "run/batches/step_000001.safetensors",
  "run/batches/step_000002.npz",
};

static char *dir;
static DwStore *store;
static DwIngester *ingester;
static guint n_inputs;

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  g_autofree char *path = NULL, *parent = NULL;
  DwIngestReport r;

  if (dir == NULL)
    {
      g_autofree char *db = NULL;
      dir = g_dir_make_tmp ("dw-fuzz-ingester-XXXXXX", NULL);
      db = g_build_filename (dir, "store.db", NULL);
      store = dw_store_open (db, NULL);
      if (store == NULL)
        abort ();
      ingester = dw_ingester_new (store);
    }
  if (size == 0)
    return 0;
  path = g_build_filename (dir, names[data[0] % G_N_ELEMENTS (names)], NULL);
  parent = g_path_get_dirname (path);
  g_mkdir_with_parents (parent, 0755);
  /* a first byte with the high bit set appends to the file, others replace it */
  if (data[0] & 0x80)
    {
      FILE *fp = fopen (path, "ab");
      if (fp == NULL)
        abort ();
      fwrite (data + 1, 1, size - 1, fp);
      fclose (fp);
    }
  else if (!g_file_set_contents (path, (const char *)data + 1, (gssize)size - 1, NULL))
    abort ();

  dw_ingester_set_chunk_size (ingester, 64 + data[0] % 97);
  dw_ingest_report_init (&r);
  if (!dw_ingester_ingest_path (ingester, dir, &r, NULL))
    abort (); /* bad input never fails an ingest; only the store could */
  dw_ingest_report_clear (&r);
  dw_ingest_report_init (&r);
  if (!dw_ingester_ingest_path (ingester, dir, &r, NULL))
    abort ();
  if (r.n_points != 0 || r.n_batches != 0)
    abort (); /* nothing changed: nothing new */
  dw_ingest_report_clear (&r);
  if (++n_inputs % 256 == 0 && !dw_store_check_integrity (store, NULL))
    abort ();
  return 0;
}
