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
dw_metric_list_put (DwMetricList *list, const char *name, double value)
{
  if (list->n == list->cap)
    {
      size_t capacity = list->cap ? list->cap * 2 : 64;
      DwMetric *grown = realloc (list->m, capacity * sizeof *grown);
      if (!grown)
        {
          list->oom = true;
          return;
        }
      list->m = grown;
      list->cap = capacity;
    }
  DwMetric *entry = &list->m[list->n++];
  /* the bytes after the key's NUL are zero too: two equal results compare equal byte for byte
   * (test-fastpath's shared-mask case failed outside meson, whose MALLOC_PERTURB_ hid it) */
  memset (entry->key, 0, sizeof entry->key);
  snprintf (entry->key, sizeof entry->key, "%s%s", list->prefix, name);
  entry->value = value;
}

void
dw_metric_list_putf (DwMetricList *list, double value, const char *format, ...)
{
  char name[DW_METRIC_KEY_MAX];
  va_list args;
  va_start (args, format);
  vsnprintf (name, sizeof name, format, args);
  va_end (args);
  dw_metric_list_put (list, name, value);
}

static int
dw_metric_list_compare (const void *left, const void *right)
{
  return strcmp (((const DwMetric *)left)->key, ((const DwMetric *)right)->key);
}

bool
dw_metric_list_finish (DwCorrectionResult *result, DwMetricList *list, DwCorrectionError *error)
{
  if (list->oom)
    {
      free (list->m);
      return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
    }
  if (list->n > 0) /* no metrics at all (mismatch_helper with threshold None): L->m is NULL */
    qsort (list->m, list->n, sizeof *list->m, dw_metric_list_compare);
  result->metrics = list->m;
  result->n_metrics = list->n;
  return true;
}
