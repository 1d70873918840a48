/* bench-correction.c — correction kernels on the standard 512x4096 float32 batch (~70% valid)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Single thread. Prints: preset, median ms, M valid tokens/s; a reference line for verl's torch CPU
 * code (PERF_ANCHOR: ~23 M valid tokens/s token IS, 15-17 M/s with sequence RS) and the bandwidth
 * of a plain read of the same input arrays (the memory-bound limit of reading the inputs once).
 * Usage: bench-correction [--only=NAME,…] [--shape=ROWSxCOLS] [--simd=avx512|avx2|off] [RUNS]
 * (512x4096 and the CPU's best vector level by default).
 * Runs use DW_ENTRY_MASK_SHARED: a preset without RS returns the batch's own mask (verl returns
 * its input tensor there too) instead of a copy.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dw-correction.h"

static double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_d (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double
urand (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (rng >> 11) * (1.0 / 9007199254740992.0);
}

static DwBatch *
make_batch (size_t B, size_t T, double *n_valid)
{
  DwBatch *b = dw_batch_new (B, T, DW_DTYPE_F32, DW_DTYPE_I64);
  float *o = b->old_log_prob, *r = b->rollout_log_prob;
  int64_t *m = b->response_mask;
  *n_valid = 0;
  for (size_t i = 0; i < B; i++)
    {
      /* lengths uniform in [0.4T, T]: ~70% valid on average */
      size_t len = (size_t)(T * (0.4 + 0.6 * urand ()));
      for (size_t t = 0; t < T; t++)
        {
          double lp = -fabs (log (urand () + 1e-12)) * 0.8;
          double noise = (urand () - 0.5) * 0.1 + ((urand () < 0.001) ? -5 : 0);
          o[i * T + t] = (float)lp;
          r[i * T + t] = (float)(lp + noise);
          m[i * T + t] = t < len;
          *n_valid += t < len;
        }
    }
  return b;
}

/* whether @name is one of the comma-separated @list */
static int
bench_listed (const char *list, const char *name)
{
  size_t n = strlen (name);
  for (const char *p = list; p && *p; p = strchr (p, ','), p = p ? p + 1 : NULL)
    if (strncmp (p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
      return 1;
  return 0;
}

static double
cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* median process CPU time of the last bench () call (robust on a loaded machine) */
static double last_cpu_ms;

static double
bench (const DwBatch *b, const DwConfig *c, int reps)
{
  double *t = calloc ((size_t)reps, sizeof (double));
  double *cpu = calloc ((size_t)reps, sizeof (double));
  for (int i = 0; i < reps; i++)
    {
      DwCorrectionResult r;
      DwCorrectionError e;
      double c0 = cpu_ms ();
      double t0 = now_ms ();
      /* the batch outlives the result: an unchanged mask is returned as the batch's own, as
       * verl returns its input tensor when no RS option rejects anything */
      if (!dw_correction_run_entry (b, c, DW_ENTRY_MASK_SHARED, &r, &e))
        {
          fprintf (stderr, "error: %s\n", e.message);
          exit (1);
        }
      t[i] = now_ms () - t0;
      cpu[i] = cpu_ms () - c0;
      dw_correction_result_clear (&r);
    }
  qsort (t, (size_t)reps, sizeof (double), cmp_d);
  qsort (cpu, (size_t)reps, sizeof (double), cmp_d);
  double med = t[reps / 2];
  last_cpu_ms = cpu[reps / 2];
  free (t);
  free (cpu);
  return med;
}

int
main (int argc, char **argv)
{
  size_t B = 512, T = 4096;
  /* --only=NAME,NAME (v0.7.1 presets): just those rows, for the paired runner (bench-paired.py) */
  const char *only = NULL;
  if (argc > 1 && strncmp (argv[1], "--only=", 7) == 0)
    {
      only = argv[1] + 7;
      argc--;
      argv++;
    }
  /* --shape=ROWSxCOLS: another batch shape (short rows show the per-row costs) */
  if (argc > 1 && strncmp (argv[1], "--shape=", 8) == 0)
    {
      if (sscanf (argv[1] + 8, "%zux%zu", &B, &T) != 2 || B == 0 || T == 0)
        {
          fprintf (stderr, "bench-correction: --shape=ROWSxCOLS, e.g. --shape=8192x256\n");
          return 2;
        }
      argc--;
      argv++;
    }
  /* --simd=LEVEL: at most that vector level (the levels' passes compared on one machine) */
  const char *simd = "best";
  if (argc > 1 && strncmp (argv[1], "--simd=", 7) == 0)
    {
      simd = dw_correction_set_vector_limit (argv[1] + 7);
      if (!simd)
        {
          fprintf (stderr, "bench-correction: --simd=avx512, avx2 or off\n");
          return 2;
        }
      argc--;
      argv++;
    }
  int reps = argc > 1 ? atoi (argv[1]) : 7;
  double nv;
  DwBatch *b = make_batch (B, T, &nv);
  printf ("correction kernels: %zux%zu float32, mask int64, %.1f%% valid, %d runs, 1 thread, "
          "simd %s\n",
          B, T, 100.0 * nv / (double)(B * T), reps, simd);
  printf ("%-34s %10s %14s\n", "preset", "median ms", "M valid tok/s");
  /* plain read of the inputs: the memory-bandwidth floor */
  {
    double best = 1e30, sink = 0;
    for (int k = 0; k < reps; k++)
      {
        double t0 = now_ms ();
        const float *o = b->old_log_prob, *r = b->rollout_log_prob;
        const int64_t *m = b->response_mask;
        double s = 0;
        for (size_t i = 0; i < B * T; i++)
          s += (double)(o[i] - r[i]) * (double)m[i];
        sink += s;
        double dt = now_ms () - t0;
        best = dt < best ? dt : best;
      }
    double bytes = (double)B * T * (4 + 4 + 8);
    printf ("%-34s %10.2f %14.1f   (%.1f GB/s; sink %g)\n", "[plain read of the inputs]", best,
            nv / best / 1e3, bytes / best / 1e6, sink > 0 ? 0.0 : 1.0);
  }
  /* every preset of verl v0.7.1 (unprefixed, as the table has always named them), of v0.9.0 and
   * of slime, then slime's built-in --use-tis paths */
  static const struct
  {
    DwGeneration generation;
    const char *label;
  } sets[]
    = { { DW_GEN_VERL_0_7_1, "" }, { DW_GEN_VERL_0_9_0, "v0_9_0 " }, { DW_GEN_SLIME, "slime " } };
  for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
    {
      size_t n;
      const DwPresetInfo *l = dw_preset_list (sets[s].generation, &n);
      for (size_t i = 0; i < n; i++)
        {
          if (only && (s != 0 || !bench_listed (only, l[i].name)))
            continue;
          DwConfig c;
          DwCorrectionError e;
          dw_preset_config (sets[s].generation, l[i].name, &c, &e);
          double ms = bench (b, &c, reps);
          char name[80];
          snprintf (name, sizeof name, "%s%s", sets[s].label, l[i].name);
          printf ("%-34s %10.2f %14.1f\n", name, ms, nv / ms / 1e3);
          if (only) /* the paired runner also compares CPU time */
            printf ("cpu %-30s %10.2f %14.1f\n", name, last_cpu_ms, nv / last_cpu_ms / 1e3);
        }
    }
  static const char *const builtin[] = { "vanilla", "icepop" };
  for (size_t i = 0; i < (only ? 0u : 2u); i++)
    {
      DwConfig c;
      dw_config_init (&c, DW_GEN_SLIME);
      DwValue function = dw_value_str (builtin[i]), clip = dw_value_float (i ? 5.0 : 2.0),
              clip_low = dw_value_float (i ? 0.5 : 0.0);
      dw_config_set (&c, "tis_function", &function);
      dw_config_set (&c, "tis_clip", &clip);
      dw_config_set (&c, "tis_clip_low", &clip_low);
      double ms = bench (b, &c, reps);
      char name[80];
      snprintf (name, sizeof name, "slime builtin_%s", builtin[i]);
      printf ("%-34s %10.2f %14.1f\n", name, ms, nv / ms / 1e3);
    }
  printf ("%-34s %10s %14s\n", "[reference: verl torch CPU, token IS]", "", "23");
  printf ("%-34s %10s %14s\n", "[reference: verl torch CPU, seq RS]", "", "15-17");
  dw_batch_free (b);
  return 0;
}
