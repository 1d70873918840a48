/* bench-batch.c — batch tokens read per second (safetensors, npz stored/deflate, JSONL)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The standard batch: 512 × 4096 float32 log-probs, uint8 mask with ~70% valid tokens (right
 * padded), float32 advantages. Each file is written once with the library's writers, then read
 * with dw_batch_read_file() (page cache warm) in a fresh child process per format, reading the
 * same file again and again as an ingest loop does; the median is reported as padded tokens (B×T)
 * per second and as input MB/s. Each format runs twice: with glibc's default allocator settings
 * (every 8 MB array is a fresh mmap whose pages fault in: expensive on this VM) and with the
 * allocator tuned to keep its heap (GLIBC_TUNABLES mmap_threshold/trim_threshold), which is what
 * a long-running ingest gets after its first batches. Given a python3 and make-bench-pt.py, it also
 * reads a slime train dump (torch .pt, format_version 2) of the same shape, written by torch.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dw-batch-reader.h"

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void
bench (const char *label, const char *path, gsize tokens, int reps, const char *alloc)
{
  double *t = g_new (double, reps);
  GStatBuf st;

  g_stat (path, &st);
  for (int i = 0; i < reps; i++)
    {
      g_autoptr (GError) error = NULL;
      gint64 t0 = g_get_monotonic_time ();
      DwBatch *b = dw_batch_read_file (path, &error);
      t[i] = (g_get_monotonic_time () - t0) / 1e6;
      if (!b)
        g_error ("%s", error->message);
      dw_batch_free (b);
    }
  qsort (t, reps, sizeof *t, cmp_double);
  printf ("%-20s %-8s %6.1f MB  median %8.2f ms  %8.1f M tokens/s  %8.1f MB/s\n", label, alloc,
          st.st_size / 1e6, t[reps / 2] * 1e3, tokens / t[reps / 2] / 1e6,
          st.st_size / t[reps / 2] / 1e6);
  fflush (stdout);
  g_free (t);
}

static void
run_child (const char *self, const char *label, const char *path, const char *reps, gboolean tuned)
{
  const char *argv[] = { self, label, path, reps, tuned ? "tuned" : "default", NULL };
  g_auto (GStrv) env = g_get_environ ();
  g_autoptr (GError) error = NULL;
  int status;

  env = g_environ_unsetenv (env, "MALLOC_CHECK_"); /* the test env's checking allocator */
  env = g_environ_unsetenv (env, "MALLOC_PERTURB_");
  if (tuned)
    env = g_environ_setenv (env, "GLIBC_TUNABLES",
                            "glibc.malloc.mmap_threshold=268435456:"
                            "glibc.malloc.trim_threshold=1073741824",
                            TRUE);
  else
    env = g_environ_unsetenv (env, "GLIBC_TUNABLES");
  if (!g_spawn_sync (NULL, (char **)argv, env, G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL, NULL, NULL,
                     &status, &error)
      || !g_spawn_check_wait_status (status, &error))
    g_error ("%s: %s", label, error->message);
}

int
main (int argc, char **argv)
{
  const gsize B = 512, T = 4096;
  g_autofree char *dir = g_dir_make_tmp ("dw-bench-batch-XXXXXX", NULL);
  g_autofree char *st = g_build_filename (dir, "step_000001.safetensors", NULL);
  g_autofree char *stp = g_build_filename (dir, "step_000001_packed.safetensors", NULL);
  g_autofree char *npz = g_build_filename (dir, "step_000001.npz", NULL);
  g_autofree char *npzd = g_build_filename (dir, "step_000001_deflate.npz", NULL);
  g_autofree char *jsonl = g_build_filename (dir, "step_000001.jsonl", NULL);
  g_autoptr (GError) error = NULL;
  DwBatch *b;
  GRand *rng;
  float *o, *r, *a;
  guint8 *m;
  gsize valid = 0;

  if (argc == 5) /* child: LABEL PATH REPS ALLOC */
    {
      bench (argv[1], argv[2], B * T, atoi (argv[3]), argv[4]);
      return 0;
    }
  b = dw_batch_new (B, T, DW_DTYPE_F32, DW_DTYPE_U8);
  rng = g_rand_new_with_seed (42);
  o = b->old_log_prob;
  r = b->rollout_log_prob;
  m = b->response_mask;
  b->advantages = g_malloc (B * T * sizeof (float));
  a = b->advantages;
  b->step = 1;
  for (gsize i = 0; i < B; i++)
    {
      gsize len = (gsize)(T * (0.4 + 0.6 * g_rand_double (rng))); /* mean 0.7 T */
      float adv = (float)g_rand_double_range (rng, -1, 1);
      for (gsize j = 0; j < T; j++)
        {
          gsize k = i * T + j;
          o[k] = (float)-g_rand_double_range (rng, 0, 3);
          r[k] = o[k] + (float)g_rand_double_range (rng, -0.05, 0.05);
          m[k] = j < len;
          a[k] = adv;
          valid += j < len;
        }
    }
  printf ("batch %zu x %zu float32, %.1f%% valid tokens\n", B, T, 100.0 * valid / (B * T));
  fflush (stdout);
  if (!dw_batch_write_safetensors (b, st, &error)
      || !dw_batch_write_safetensors_full (b, stp, DW_BATCH_WRITE_PACKED, NULL, &error)
      || !dw_batch_write_npz (b, npz, FALSE, &error) || !dw_batch_write_npz (b, npzd, TRUE, &error)
      || !dw_batch_write_jsonl (b, jsonl, &error))
    g_error ("%s", error->message);

  for (int tuned = 0; tuned < 2; tuned++)
    {
      run_child (argv[0], "safetensors padded", st, "21", tuned);
      run_child (argv[0], "safetensors packed", stp, "21", tuned);
      run_child (argv[0], "npz stored", npz, "21", tuned);
      run_child (argv[0], "npz deflate", npzd, "11", tuned);
      run_child (argv[0], "jsonl", jsonl, "3", tuned);
    }
  /* PYTHON make-bench-pt.py: a slime format_version 2 train dump of the same shape */
  if (argc == 3)
    {
      g_autofree char *pt = g_build_filename (dir, "train_data", "1.pt", NULL);
      g_autofree char *pt_dir = g_path_get_dirname (pt);
      const char *make[] = { argv[1], argv[2], dir, NULL };
      int status = 0;

      if (!g_spawn_sync (NULL, (char **)make, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                         &status, &error))
        g_error ("%s", error->message);
      if (g_spawn_check_wait_status (status, &error))
        for (int tuned = 0; tuned < 2; tuned++)
          run_child (argv[0], "torch .pt", pt, "7", tuned);
      else if (g_error_matches (error, G_SPAWN_EXIT_ERROR, 77)) /* make-bench-pt.py: no torch */
        {
          printf ("torch .pt: skipped (python3-torch is missing)\n");
          g_clear_error (&error);
        }
      else
        g_error ("%s %s: %s", argv[1], argv[2], error->message);
      g_unlink (pt);
      g_rmdir (pt_dir);
    }
  g_unlink (st);
  g_unlink (stp);
  g_unlink (npz);
  g_unlink (npzd);
  g_unlink (jsonl);
  g_rmdir (dir);
  dw_batch_free (b);
  g_rand_free (rng);
  return 0;
}
