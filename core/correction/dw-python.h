/* dw-python.h — the few Python built-ins whose exact behaviour the trainers' checks depend on
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only (docs/CORRECTION.md §8).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C"
{
#endif

  /* str.strip()'s whitespace: space, \t, \n, \v, \f, \r. */
  bool dw_python_is_space (int c);
  /* Python float(str) semantics (whitespace, '_' between digits, inf/nan/infinity, no hex).
   * Returns false when Python would raise ValueError. */
  bool dw_python_float (const char *s, double *out);
  /* Python repr() of a double ("0.5", "1e-05", "inf", "nan") into @buf. */
  char *dw_python_float_repr (double v, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
