/* fuzz-threshold.c — libFuzzer target for the RS option list + threshold grammar (dw_rs_parse)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Input: "<options>\n<threshold>" where the threshold line is tried as a str, and, when Python's
 * float() accepts it, also as a float. Checks invariants: success ⇔ no error kind; bounds are
 * positive or NaN; k1 options carry a lower bound; no duplicate options.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dw-correction.h"

static void
check (const DwValue *opts, const DwValue *thr)
{
  DwRsParsed p;
  DwCorrectionError e;
  dw_correction_error_clear (&e);
  bool ok = dw_rs_parse (opts, thr, &p, &e);
  if (ok != (e.kind == DW_ERROR_NONE))
    abort ();
  if (!ok)
    {
      if (e.message[0] == '\0' || dw_error_kind_name (e.kind) == NULL)
        abort ();
      return;
    }
  if (p.n == 0 || p.n > DW_RS_N_OPTIONS)
    abort ();
  for (size_t i = 0; i < p.n; i++)
    {
      const DwRsBound *b = &p.bounds[i];
      if (!(b->upper > 0) && !isnan (b->upper))
        abort ();
      if ((dw_rs_option_k (b->option) == 1) != b->has_lower)
        abort ();
      for (size_t j = 0; j < i; j++)
        if (p.bounds[j].option == b->option)
          abort ();
    }
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > 2 * DW_VALUE_STR_MAX)
    return 0;
  char buf[2 * DW_VALUE_STR_MAX + 1];
  memcpy (buf, data, size);
  buf[size] = '\0';
  char *nl = strchr (buf, '\n');
  const char *t = nl ? nl + 1 : "";
  if (nl)
    *nl = '\0';
  if (strlen (buf) >= DW_VALUE_STR_MAX || strlen (t) >= DW_VALUE_STR_MAX)
    return 0;
  DwValue opts = dw_value_str (buf), thr = dw_value_str (t);
  check (&opts, &thr);
  double f;
  if (dw_python_float (t, &f))
    {
      DwValue fv = dw_value_float (f);
      check (&opts, &fv);
      char r[64];
      dw_python_float_repr (f, r, sizeof r);
      double back;
      if (!dw_python_float (r, &back) || !(back == f || (isnan (back) && isnan (f))))
        abort ();
    }
  return 0;
}
