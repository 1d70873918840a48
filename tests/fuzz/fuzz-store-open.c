/* fuzz-store-open.c — libFuzzer target for opening and reading a store (crafted SQLite files)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The input is written as a store file and opened the ways the CLI and the window do: read-only
 * (every run, tag, series, batch, sequence statistics, file record, diagnostic and the dump read
 * back), then writable. Checks: each call gives a result or a DW_STORE_ERROR, never both; a store
 * that cannot be opened writable is left byte for byte as it was (a newer, foreign or damaged
 * file is never modified). Seeds (corpus/store-open/) are crafted stores: negative and huge
 * schema versions, NULL names, rows = 2^62, unknown format numbers, prefix_len = 1e12,
 * recursive views, foreign SQLite files.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dw-store-writer.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

static char *fuzz_dir, *fuzz_path;

static void
check_error (gboolean ok, GError *error)
{
  if (ok == (error != NULL) || (error != NULL && error->domain != DW_STORE_ERROR))
    abort ();
  g_clear_error (&error);
}

static void
read_all (DwStore *store)
{
  GError *error = NULL;
  GPtrArray *runs = dw_store_list_runs (store, &error);
  GPtrArray *files;
  char *dump;

  check_error (runs != NULL, error);
  error = NULL;
  for (guint r = 0; runs != NULL && r < MIN (runs->len, 8u); r++)
    {
      const DwRunInfo *run = runs->pdata[r];
      GPtrArray *tags, *diags;
      GArray *steps;

      if (run->name == NULL || run->framework == NULL)
        abort ();
      tags = dw_store_list_tags (store, run->id, &error);
      check_error (tags != NULL, error);
      error = NULL;
      for (guint t = 0; tags != NULL && t < MIN (tags->len, 16u); t++)
        {
          const DwTagInfo *tag = tags->pdata[t];
          DwSeries *series;

          if (tag->name == NULL)
            abort ();
          series = dw_store_get_series (store, run->id, tag->name, G_MININT64, &error);
          if (series == NULL && error == NULL)
            abort ();
          g_clear_error (&error);
          dw_series_free (series);
        }
      steps = dw_store_list_batch_steps (store, run->id, &error);
      check_error (steps != NULL, error);
      error = NULL;
      for (guint s = 0; steps != NULL && s < MIN (steps->len, 4u); s++)
        {
          gint64 step = g_array_index (steps, gint64, s);
          DwBatch *batch = dw_store_load_batch (store, run->id, step, &error);
          GArray *stats;

          check_error (batch != NULL, error);
          error = NULL;
          if (batch != NULL)
            {
              volatile double sink = 0;
              for (gsize i = 0; i < batch->rows * batch->cols; i++)
                sink += dw_batch_mask_value (batch, i);
              (void)sink;
            }
          g_clear_pointer (&batch, dw_batch_free);
          stats = dw_store_get_sequence_stats (store, run->id, step, &error);
          check_error (stats != NULL, error);
          error = NULL;
          g_clear_pointer (&stats, g_array_unref);
        }
      g_clear_pointer (&steps, g_array_unref);
      diags = dw_store_list_diagnostics (store, run->id, &error);
      check_error (diags != NULL, error);
      error = NULL;
      g_clear_pointer (&diags, g_ptr_array_unref);
      g_clear_pointer (&tags, g_ptr_array_unref);
    }
  g_clear_pointer (&runs, g_ptr_array_unref);
  files = dw_store_list_files (store, &error);
  check_error (files != NULL, error);
  error = NULL;
  for (guint i = 0; files != NULL && i < files->len; i++)
    {
      const DwFileRecord *f = files->pdata[i];
      if (f->path == NULL || f->offset < 0 || f->prefix_len < 0 || f->prefix_len > f->offset)
        abort ();
    }
  g_clear_pointer (&files, g_ptr_array_unref);
  dump = dw_store_dump (store, &error);
  check_error (dump != NULL, error);
  g_free (dump);
}

static void
remove_store (void)
{
  const char *suffixes[] = { "", "-wal", "-shm", "-journal" };

  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *p = g_strconcat (fuzz_path, suffixes[i], NULL);
      g_unlink (p);
    }
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  GError *error = NULL;
  DwStore *store;

  if (fuzz_dir == NULL)
    {
      fuzz_dir = g_dir_make_tmp ("dw-fuzz-store-XXXXXX", NULL);
      fuzz_path = g_build_filename (fuzz_dir, "store.db", NULL);
    }
  remove_store ();
  if (!g_file_set_contents (fuzz_path, (const char *)data, (gssize)size, NULL))
    abort ();

  store = dw_store_open_read_only (fuzz_path, &error);
  check_error (store != NULL, error);
  if (store != NULL)
    {
      dw_store_set_busy_timeout (store, 100);
      read_all (store);
      g_object_unref (store);
    }
  remove_store ();
  if (!g_file_set_contents (fuzz_path, (const char *)data, (gssize)size, NULL))
    abort ();

  error = NULL;
  store = dw_store_open (fuzz_path, &error);
  check_error (store != NULL, error);
  if (store == NULL)
    {
      /* refused: the file must be exactly as it was */
      char *after = NULL;
      gsize len = 0;

      if (!g_file_get_contents (fuzz_path, &after, &len, NULL) && size > 0)
        abort ();
      if (after != NULL && (len != size || memcmp (after, data, size) != 0))
        abort ();
      g_free (after);
    }
  else
    {
      dw_store_set_busy_timeout (store, 100);
      read_all (store);
      g_object_unref (store);
    }
  remove_store ();
  return 0;
}
