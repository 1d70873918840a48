/* bench-row-pass.c — the fused row pass of the float32 fast path against the read-once floor
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A benchmark (meson suite 'bench'), white-box: it lives beside the correction tests because it
 * calls the private row pass (dw-correction-private.h). Same batch as bench-correction.c
 * (512×4096 float32, int64 mask, lengths uniform in [0.4T, T]). Times, single thread, median of
 * the runs: a plain read of the three input arrays (the floor: every byte read once), and the
 * row pass as the fast path runs it — the mask row converted to float, then one fused pass that
 * writes the token weights and returns the row's sums (on AVX-512 the pass reads the int64 mask
 * itself) — for token IS and for sequence k1 RS.
 * Usage: bench-row-pass [--simd=avx512|avx2|off] [RUNS].
 * Prints each pass's M valid tokens/s and its time as a multiple of the floor's (the median of the
 * per-run ratios, floor and passes alternating; also in process CPU time).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dw-correction-private.h"

enum
{
  ROWS = 512,
  COLS = 4096
};

/* the sums go here, so the compiler cannot drop the passes */
volatile double bench_sink;

static uint64_t bench_state = 0x9e3779b97f4a7c15ull;

static double
bench_uniform (void)
{
  bench_state ^= bench_state << 13;
  bench_state ^= bench_state >> 7;
  bench_state ^= bench_state << 17;
  return (double)(bench_state >> 11) * (1.0 / 9007199254740992.0);
}

static double
bench_now_ms (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

static int
bench_compare_cb (const void *left, const void *right)
{
  const double first = *(const double *)left, second = *(const double *)right;
  return first < second ? -1 : first > second;
}

static double
bench_median (double *times, int runs)
{
  qsort (times, (size_t)runs, sizeof *times, bench_compare_cb);
  return times[runs / 2];
}

static double
bench_cpu_ms (void)
{
  struct timespec now;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &now);
  return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

/* one timing: wall and process CPU milliseconds */
typedef struct
{
  double wall, cpu;
} BenchTime;

/* the plain read: Σ (o − r)·m over the whole batch */
static BenchTime
bench_floor_once (const DwBatch *batch)
{
  const double start = bench_now_ms (), cpu_start = bench_cpu_ms ();
  const float *old = batch->old_log_prob, *rollout = batch->rollout_log_prob;
  const int64_t *mask = batch->response_mask;
  double total = 0;
  for (size_t index = 0; index < (size_t)ROWS * COLS; index++)
    total += (double)(old[index] - rollout[index]) * (double)mask[index];
  bench_sink = total;
  return (BenchTime){ bench_now_ms () - start, bench_cpu_ms () - cpu_start };
}

/* the fast path's per-row work for one configuration of @in */
static BenchTime
bench_row_pass_once (const DwBatch *batch, DwRowIn *in, float *mask_row, float *weights)
{
  const double start = bench_now_ms (), cpu_start = bench_cpu_ms ();
  double total = 0;
  for (size_t row = 0; row < ROWS; row++)
    {
      const size_t offset = row * COLS;
      in->o = (const float *)batch->old_log_prob + offset;
      in->r = (const float *)batch->rollout_log_prob + offset;
      in->m = mask_row;
      in->w = in->is_token ? weights + offset : NULL;
      in->m_i64 = NULL;
      DwRowOut out;
      if (dw_correction_simd_row_pass_fuses_mask ())
        {
          /* AVX-512: the pass reads the int64 mask itself, as the fast path runs it */
          in->m_i64 = (const int64_t *)batch->response_mask + offset;
          in->m_out = mask_row;
        }
      else
        {
          bool binary;
          if (!dw_correction_simd_mask_row_to_float (batch, offset, COLS, mask_row, &binary))
            abort ();
        }
      dw_correction_simd_row_pass (in, &out);
      if (out.mask_not_binary)
        abort ();
      total += out.sw + out.sk[0];
    }
  bench_sink = total;
  return (BenchTime){ bench_now_ms () - start, bench_cpu_ms () - cpu_start };
}

int
main (int argc, char **argv)
{
  /* --simd=LEVEL: at most that vector level (avx512, avx2, off) */
  if (argc > 1 && strncmp (argv[1], "--simd=", 7) == 0)
    {
      if (!dw_correction_set_vector_limit (argv[1] + 7))
        {
          fprintf (stderr, "bench-row-pass: --simd=avx512, avx2 or off\n");
          return 2;
        }
      argc--;
      argv++;
    }
  const int runs = argc > 1 ? atoi (argv[1]) : 9;
  DwBatch *batch = dw_batch_new (ROWS, COLS, DW_DTYPE_F32, DW_DTYPE_I64);
  float *old = batch->old_log_prob, *rollout = batch->rollout_log_prob;
  int64_t *mask = batch->response_mask;
  double valid = 0;
  for (size_t row = 0; row < ROWS; row++)
    {
      const size_t length = (size_t)(COLS * (0.4 + 0.6 * bench_uniform ()));
      for (size_t col = 0; col < COLS; col++)
        {
          const double log_prob = -fabs (log (bench_uniform () + 1e-12)) * 0.8;
          const double noise
            = (bench_uniform () - 0.5) * 0.1 + ((bench_uniform () < 0.001) ? -5 : 0);
          old[row * COLS + col] = (float)log_prob;
          rollout[row * COLS + col] = (float)(log_prob + noise);
          mask[row * COLS + col] = col < length;
          valid += col < length;
        }
    }
  float *mask_row = malloc (COLS * sizeof (float));
  float *weights = malloc ((size_t)ROWS * COLS * sizeof (float));
  printf ("row pass: %dx%d float32, mask int64, %.1f%% valid, %d runs, 1 thread, simd %s\n", ROWS,
          COLS, 100.0 * valid / ((double)ROWS * COLS), runs,
          dw_correction_simd_get_level () == DW_SIMD_AVX512 ? "avx512"
          : dw_correction_simd_enabled ()                   ? "avx2"
                                                            : "off");
  /* floor and passes alternate within each run, so a load change hits them alike; the ratio is
   * taken per run (wall and CPU time) and its median printed */
  double *floor_wall = calloc ((size_t)runs, sizeof (double));
  double *ratio_wall[2], *ratio_cpu[2], *pass_wall[2];
  for (int pass = 0; pass < 2; pass++)
    {
      ratio_wall[pass] = calloc ((size_t)runs, sizeof (double));
      ratio_cpu[pass] = calloc ((size_t)runs, sizeof (double));
      pass_wall[pass] = calloc ((size_t)runs, sizeof (double));
    }
  DwRowIn configs[2] = { { .T = COLS, .is_token = true, .C = 2.0f, .c = 0.5f },
                         { .T = COLS, .C = 2.0f, .c = 0.5f, .need_k = { true, false, false } } };
  for (int run = 0; run < runs; run++)
    {
      const BenchTime floor_time = bench_floor_once (batch);
      floor_wall[run] = floor_time.wall;
      for (int pass = 0; pass < 2; pass++)
        {
          const BenchTime pass_time
            = bench_row_pass_once (batch, &configs[pass], mask_row, weights);
          pass_wall[pass][run] = pass_time.wall;
          ratio_wall[pass][run] = pass_time.wall / floor_time.wall;
          ratio_cpu[pass][run] = pass_time.cpu / floor_time.cpu;
        }
    }
  const double floor_ms = bench_median (floor_wall, runs);
  printf ("[row pass floor: plain read]       %8.2f ms %8.1f M tok/s\n", floor_ms,
          valid / floor_ms / 1e3);
  static const char *const labels[2] = { "[row pass token IS]   ", "[row pass seq k1 RS]  " };
  for (int pass = 0; pass < 2; pass++)
    {
      const double pass_ms = bench_median (pass_wall[pass], runs);
      printf ("%s             %8.2f ms %8.1f M tok/s  %.2fx the floor (CPU time %.2fx)\n",
              labels[pass], pass_ms, valid / pass_ms / 1e3, bench_median (ratio_wall[pass], runs),
              bench_median (ratio_cpu[pass], runs));
      free (ratio_wall[pass]);
      free (ratio_cpu[pass]);
      free (pass_wall[pass]);
    }
  free (floor_wall);
  free (weights);
  free (mask_row);
  dw_batch_free (batch);
  return 0;
}
