/* dw-whatif-lanes.c — which variant of the what-if row loops this processor runs
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-whatif-engine.h"
#include "dw-whatif-lanes-private.h"

static gint lanes_level = -1; /* -1 before the first check, else a DwWhatifLanesLevel */

static DwWhatifLanesLevel
dw_whatif_lanes_best (void)
{
#ifdef DW_WHATIF_LANES_X86
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512dq")
      && __builtin_cpu_supports ("avx512vl") && __builtin_cpu_supports ("avx512bw"))
    return DW_WHATIF_LANES_AVX512;
  if (__builtin_cpu_supports ("avx2"))
    return DW_WHATIF_LANES_AVX2;
#endif
  return DW_WHATIF_LANES_BASELINE;
}

DwWhatifLanesLevel
dw_whatif_lanes_level (void)
{
  gint level = g_atomic_int_get (&lanes_level);
  if (level < 0)
    {
      level = dw_whatif_lanes_best ();
      g_atomic_int_set (&lanes_level, level);
    }
  return level;
}

static const char *const lanes_names[] = { "off", "avx2", "avx512" };

const char *
dw_whatif_set_vector_limit (const char *name)
{
  for (gint level = DW_WHATIF_LANES_BASELINE; level <= DW_WHATIF_LANES_AVX512; level++)
    if (g_strcmp0 (name, lanes_names[level]) == 0)
      {
        g_atomic_int_set (&lanes_level, MIN (level, (gint)dw_whatif_lanes_best ()));
        return lanes_names[dw_whatif_lanes_level ()];
      }
  return NULL;
}
