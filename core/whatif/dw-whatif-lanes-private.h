/* dw-whatif-lanes-private.h — vectors of DW_WHATIF_LANES doubles for the row loops
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Included by dw-whatif-kernels.c only, which the build compiles with DW_WHATIF_LANES 2 and 4
 * (dw-whatif-kernels-private.h). GCC/clang vector extensions: IEEE operations lane by lane, the
 * same roundings as scalar code with -ffp-contract=off. The helpers are always inlined, so no
 * vector crosses a call (the ABI of a vector argument depends on the instruction set).
 *
 * Measured on the compact steps of a 600-step × 512-row run (bench-whatif, IcePop slider, ms a
 * move; baseline / AVX2 / AVX-512): scalar code 2.53; 2 lanes 2.32 / 2.19 / 2.04; 4 lanes
 * 6.38 / 1.73 / 1.67: gcc 12 compiles the comparisons of a vector wider than the target's
 * registers one lane at a time through the stack, so the baseline takes 2 lanes, the others 4.
 */
#pragma once

#include <glib.h>
#include <string.h>

G_BEGIN_DECLS

/* gcc notes that a vector argument would be passed differently with other instruction sets: none
 * is passed, every helper is inlined */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#if !defined(DW_WHATIF_LANES) || (DW_WHATIF_LANES != 2 && DW_WHATIF_LANES != 4)
#error "dw-whatif-kernels.c is compiled with DW_WHATIF_LANES 2 or 4"
#endif

typedef double DwWhatifLanes __attribute__ ((vector_size (DW_WHATIF_LANES * sizeof (double))));
typedef gint64 DwWhatifMask __attribute__ ((vector_size (DW_WHATIF_LANES * sizeof (gint64))));
typedef float DwWhatifLanesF __attribute__ ((vector_size (DW_WHATIF_LANES * sizeof (float))));

#define DW_WHATIF_LANES_INLINE static inline __attribute__ ((always_inline))

/* @value in every lane */
DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_splat (double value)
{
#if DW_WHATIF_LANES == 2
  DwWhatifLanes lanes = { value, value };
#else
  DwWhatifLanes lanes = { value, value, value, value };
#endif
  return lanes;
}

/* lanes [0, @live) from @source, the others @fill */
DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_load (const double *source, guint live, double fill)
{
  DwWhatifLanes lanes;
  if (live == DW_WHATIF_LANES)
    {
      memcpy (&lanes, source, sizeof lanes);
      return lanes;
    }
  lanes = dw_whatif_lanes_splat (fill);
  for (guint lane = 0; lane < live; lane++)
    lanes[lane] = source[lane];
  return lanes;
}

/* Float32 lanes to doubles (exact) and back (rounded to nearest, as a scalar cast). gcc 12
 * widens a __builtin_convertvector of four floats in two halves and an insert, three
 * instructions for vcvtps2pd's one: the four-lane variants (AVX2, AVX-512) say the instruction
 * (the same IEEE conversions, so the same bits; dw-whatif-kernels.c compiles its four-lane
 * bodies for AVX2, so that the intrinsics inline). */
#if DW_WHATIF_LANES == 4 && defined(DW_WHATIF_LANES_X86)
DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_widen (DwWhatifLanesF lanes)
{
  return (DwWhatifLanes)_mm256_cvtps_pd ((__m128)lanes);
}

DW_WHATIF_LANES_INLINE DwWhatifLanesF
dw_whatif_lanes_narrow (DwWhatifLanes lanes)
{
  return (DwWhatifLanesF)_mm256_cvtpd_ps ((__m256d)lanes);
}
#else
DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_widen (DwWhatifLanesF lanes)
{
  return __builtin_convertvector(lanes, DwWhatifLanes);
}

DW_WHATIF_LANES_INLINE DwWhatifLanesF
dw_whatif_lanes_narrow (DwWhatifLanes lanes)
{
  return __builtin_convertvector(lanes, DwWhatifLanesF);
}
#endif

/* DW_WHATIF_LANES float32 values from @source, as doubles (exact) */
DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_load_f32 (const float *source)
{
  DwWhatifLanesF lanes;
  memcpy (&lanes, source, sizeof lanes);
  return dw_whatif_lanes_widen (lanes);
}

typedef guint8 DwWhatifBytes __attribute__ ((vector_size (DW_WHATIF_LANES)));

#if DW_WHATIF_LANES == 4 && defined(DW_WHATIF_LANES_X86)
/* Four lanes on x86: gcc 12 widens four bytes to four 64-bit lanes and narrows them back one byte
 * at a time through general registers, some 50 instructions a merged store, most of the RS
 * option loop. vpmovzxbq widens in one; a mask's four signs (vmovmskpd) index the bytes. */
DW_WHATIF_LANES_INLINE DwWhatifMask
dw_whatif_lanes_widen_flags (DwWhatifBytes bytes)
{
  guint32 word;
  memcpy (&word, &bytes, sizeof word);
  return (DwWhatifMask)_mm256_cvtepu8_epi64 (_mm_cvtsi32_si128 ((int)word));
}

/* the flags 0 / 1 of the four lanes of a mask's signs, lane 0 the lowest byte */
DW_WHATIF_LANES_INLINE DwWhatifBytes
dw_whatif_lanes_narrow_flags (DwWhatifMask mask)
{
  static const guint32 flags[16] = {
    0x00000000, 0x00000001, 0x00000100, 0x00000101, 0x00010000, 0x00010001, 0x00010100, 0x00010101,
    0x01000000, 0x01000001, 0x01000100, 0x01000101, 0x01010000, 0x01010001, 0x01010100, 0x01010101,
  };
  DwWhatifBytes bytes;
  memcpy (&bytes, &flags[_mm256_movemask_pd ((__m256d)mask)], sizeof bytes);
  return bytes;
}
#else
DW_WHATIF_LANES_INLINE DwWhatifMask
dw_whatif_lanes_widen_flags (DwWhatifBytes bytes)
{
  return __builtin_convertvector(bytes, DwWhatifMask);
}

DW_WHATIF_LANES_INLINE DwWhatifBytes
dw_whatif_lanes_narrow_flags (DwWhatifMask mask)
{
  return __builtin_convertvector(mask & 1, DwWhatifBytes);
}
#endif

/* lanes [0, @live) of byte flags from @source as a mask (set where a flag is not 0): one load
 * widened, not a lane at a time through the stack (a stalled store forwarding) */
DW_WHATIF_LANES_INLINE DwWhatifMask
dw_whatif_lanes_load_flags (const guint8 *source, guint live)
{
  DwWhatifBytes bytes = { 0 };
  if (live == DW_WHATIF_LANES)
    memcpy (&bytes, source, sizeof bytes);
  else
    for (guint lane = 0; lane < live; lane++)
      bytes[lane] = source[lane];
  return dw_whatif_lanes_widen_flags (bytes) != 0;
}

/* lanes [0, @live) of @mask (every lane all ones or 0) to @target as byte flags 0 / 1, or'ed
 * into them when @merge */
DW_WHATIF_LANES_INLINE void
dw_whatif_lanes_store_flags (guint8 *target, DwWhatifMask mask, guint live, gboolean merge)
{
  if (merge)
    mask |= dw_whatif_lanes_load_flags (target, live);
  const DwWhatifBytes bytes = dw_whatif_lanes_narrow_flags (mask);
  if (live == DW_WHATIF_LANES)
    memcpy (target, &bytes, sizeof bytes);
  else
    for (guint lane = 0; lane < live; lane++)
      target[lane] = bytes[lane];
}

/* lanes [0, @live) to @target */
DW_WHATIF_LANES_INLINE void
dw_whatif_lanes_store (double *target, DwWhatifLanes lanes, guint live)
{
  if (live == DW_WHATIF_LANES)
    memcpy (target, &lanes, sizeof lanes);
  else
    for (guint lane = 0; lane < live; lane++)
      target[lane] = lanes[lane];
}

/* the lanes below @live */
DW_WHATIF_LANES_INLINE DwWhatifMask
dw_whatif_lanes_live (guint live)
{
#if DW_WHATIF_LANES == 2
  const DwWhatifLanes index = { 0, 1 };
#else
  const DwWhatifLanes index = { 0, 1, 2, 3 };
#endif
  return index < dw_whatif_lanes_splat ((double)live);
}

/* @when ? @yes : @no, lane by lane (C has no vector ?:) */
DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_select (DwWhatifMask when, DwWhatifLanes yes, DwWhatifLanes no)
{
  return (DwWhatifLanes)(((DwWhatifMask)yes & when) | ((DwWhatifMask)no & ~when));
}

/* whether @when holds in any lane (four lanes on x86: the lanes' signs in one vmovmskpd, where
 * gcc 12 takes each lane out of the vector) */
DW_WHATIF_LANES_INLINE gboolean
dw_whatif_lanes_any (DwWhatifMask when)
{
#if DW_WHATIF_LANES == 4 && defined(DW_WHATIF_LANES_X86)
  return _mm256_movemask_pd ((__m256d)when) != 0;
#else
  gint64 any = 0;
  for (guint lane = 0; lane < DW_WHATIF_LANES; lane++)
    any |= when[lane];
  return any != 0;
#endif
}

/* 1.0 where @when holds, else 0.0 (a count) */
DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_count (DwWhatifMask when)
{
  return (DwWhatifLanes)((DwWhatifMask)dw_whatif_lanes_splat (1.0) & when);
}

/* @tally counting the lanes where @when holds (a mask is −1 there: one integer subtraction, no
 * constant to and in), and the count it holds */
DW_WHATIF_LANES_INLINE DwWhatifMask
dw_whatif_lanes_tally (DwWhatifMask tally, DwWhatifMask when)
{
  return tally - when;
}

DW_WHATIF_LANES_INLINE double
dw_whatif_lanes_tally_total (DwWhatifMask tally)
{
  gint64 total = 0;
  for (guint lane = 0; lane < DW_WHATIF_LANES; lane++)
    total += tally[lane];
  return (double)total;
}

DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_abs (DwWhatifLanes lanes)
{
  return (DwWhatifLanes)((DwWhatifMask)lanes & ~(DwWhatifMask)dw_whatif_lanes_splat (-0.0));
}

/* the step's dtype rounding R (dw_whatif_round): through float32 for a float32 batch */
DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_round (gboolean f32, DwWhatifLanes lanes)
{
  return f32 ? dw_whatif_lanes_widen (dw_whatif_lanes_narrow (lanes)) : lanes;
}

/* larger / smaller of two lanes: the first where they compare equal or one is NaN (the rows'
 * values are finite on the fast path) */
DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_max (DwWhatifLanes x, DwWhatifLanes y)
{
  return dw_whatif_lanes_select (x < y, y, x);
}

DW_WHATIF_LANES_INLINE DwWhatifLanes
dw_whatif_lanes_min (DwWhatifLanes x, DwWhatifLanes y)
{
  return dw_whatif_lanes_select (x > y, y, x);
}

/* Σ of the lanes, lane 0 first */
DW_WHATIF_LANES_INLINE double
dw_whatif_lanes_sum (DwWhatifLanes lanes)
{
  double sum = 0;
  for (guint lane = 0; lane < DW_WHATIF_LANES; lane++)
    sum += lanes[lane];
  return sum;
}

DW_WHATIF_LANES_INLINE double
dw_whatif_lanes_reduce_max (DwWhatifLanes lanes)
{
  double max = lanes[0];
  for (guint lane = 1; lane < DW_WHATIF_LANES; lane++)
    max = lanes[lane] > max ? lanes[lane] : max;
  return max;
}

DW_WHATIF_LANES_INLINE double
dw_whatif_lanes_reduce_min (DwWhatifLanes lanes)
{
  double min = lanes[0];
  for (guint lane = 1; lane < DW_WHATIF_LANES; lane++)
    min = lanes[lane] < min ? lanes[lane] : min;
  return min;
}

G_END_DECLS
