/* dw-metric-list.c — a growing list of prefixed metric keys and values
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Arithmetic follows torch (docs/CORRECTION.md §2): every elementwise result is
 * rounded to the input dtype, reductions accumulate in double.
 */
#include "dw-correction-private.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
dw_metric_list_put (DwMetricList *l, const char *name, double value)
{
  if (l->n == l->cap)
    {
      size_t cap = l->cap ? l->cap * 2 : 64;
      DwMetric *m = realloc (l->m, cap * sizeof *m);
      if (!m)
        {
          l->oom = true;
          return;
        }
      l->m = m;
      l->cap = cap;
    }
  DwMetric *e = &l->m[l->n++];
  snprintf (e->key, sizeof e->key, "%s%s", l->prefix, name);
  e->value = value;
}

void
dw_metric_list_putf (DwMetricList *l, double value, const char *fmt, ...)
{
  char name[DW_METRIC_KEY_MAX];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (name, sizeof name, fmt, ap);
  va_end (ap);
  dw_metric_list_put (l, name, value);
}

static int
dw_metric_list_compare (const void *a, const void *b)
{
  return strcmp (((const DwMetric *)a)->key, ((const DwMetric *)b)->key);
}

bool
dw_metric_list_finish (DwCorrectionResult *res, DwMetricList *L, DwCorrectionError *error)
{
  if (L->oom)
    {
      free (L->m);
      return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
    }
  if (L->n > 0) /* no metrics at all (mismatch_helper with threshold None): L->m is NULL */
    qsort (L->m, L->n, sizeof *L->m, dw_metric_list_compare);
  res->metrics = L->m;
  res->n_metrics = L->n;
  return true;
}
