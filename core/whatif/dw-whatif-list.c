/* dw-whatif-list.c — the metric list of one step's evaluation: keys, values, approximate flags
 * and error bounds
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-whatif-private.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* metric lists with approximate flags                                                         */

/* appends the metric prefix + @name + @suffix (cut to the key size, like snprintf) */
void
dw_whatif_list_put3 (DwWhatifList *list, double value, const char *name, const char *suffix)
{
  DwWhatifEntry entry;
  const char *parts[3] = { list->prefix, name, suffix };
  gsize length = 0;
  for (int part = 0; part < 3; part++)
    for (const char *cursor = parts[part]; *cursor && length + 1 < sizeof entry.metric.key;
         cursor++)
      entry.metric.key[length++] = *cursor;
  entry.metric.key[length] = '\0';
  entry.metric.value = value;
  entry.approximate = list->approximate || list->error != 0;
  entry.error = list->approximate && list->error == 0 ? NAN : list->error;
  list->error = 0;
  g_array_append_val (list->entries, entry);
}

void
dw_whatif_list_put (DwWhatifList *list, const char *name, double value)
{
  dw_whatif_list_put3 (list, value, name, "");
}

static int
dw_whatif_list_entry_compare (const void *a, const void *b)
{
  return strcmp ((*(const DwWhatifEntry *const *)a)->metric.key,
                 (*(const DwWhatifEntry *const *)b)->metric.key);
}

void
dw_whatif_list_finish (DwWhatifList *list, DwWhatifStepResult *out)
{
  /* sorted through pointers: an entry is ~100 bytes */
  gsize count = list->entries->len;
  const DwWhatifEntry **order = g_new (const DwWhatifEntry *, count ? count : 1);
  for (gsize index = 0; index < count; index++)
    order[index] = &g_array_index (list->entries, DwWhatifEntry, index);
  qsort (order, count, sizeof *order, dw_whatif_list_entry_compare);
  out->result.n_metrics = count;
  out->result.metrics = malloc ((count ? count : 1) * sizeof (DwMetric));
  out->approximate = g_new0 (guint8, count ? count : 1);
  out->error_bound = g_new0 (double, count ? count : 1);
  for (gsize index = 0; index < count; index++)
    {
      out->result.metrics[index] = order[index]->metric;
      out->approximate[index] = order[index]->approximate;
      out->error_bound[index] = order[index]->error;
      out->any_approximate |= order[index]->approximate;
    }
  g_free (order);
  g_array_free (list->entries, TRUE);
}

/* std and ESS of a clamped weight u from Σu and Σ R(u²) (docs/CORRECTION.md §3.3) */
void
dw_whatif_list_spread_values (const DwWhatifStep *step, double sum, double sum_sq, double *std,
                              double *ess)
{
  double mean_clamped = dw_whatif_mean_batch (step, sum);
  *std = 0.0;
  if (step->mask_sum > 1)
    {
      double variance
        = dw_whatif_round (step, dw_whatif_mean_batch (step, sum_sq)
                                   - dw_whatif_round (step, mean_clamped * mean_clamped));
      *std = sqrt (fmax (variance, 0.0));
    }
  double denominator = dw_whatif_round (step, mean_clamped + DW_WHATIF_MEAN_EPSILON);
  *ess = 1.0 / dw_whatif_mean_batch (step, sum_sq / (denominator * denominator));
}

/* puts <prefix>_std and <prefix>_eff_sample_size; with error bounds on the sums (a compact step),
 * the bounds of std and ESS are their largest change over the corners of the sums' box (std²
 * and 1/ESS are monotone in each sum) */
void
dw_whatif_list_put_spread (const DwWhatifStep *step, DwWhatifList *list, const char *prefix,
                           double sum, double sum_sq, double sum_error, double sum_sq_error)
{
  double std, ess;
  dw_whatif_list_spread_values (step, sum, sum_sq, &std, &ess);
  double std_error = 0, ess_error = 0;
  if (sum_error != 0 || sum_sq_error != 0)
    for (int corner = 0; corner < 4; corner++)
      {
        double corner_std, corner_ess;
        dw_whatif_list_spread_values (step, sum + (corner & 1 ? sum_error : -sum_error),
                                      sum_sq + (corner & 2 ? sum_sq_error : -sum_sq_error),
                                      &corner_std, &corner_ess);
        std_error = fmax (std_error, fabs (corner_std - std));
        ess_error = fmax (ess_error, fabs (corner_ess - ess));
      }
  list->error = std_error;
  dw_whatif_list_put3 (list, std, prefix, "_std");
  list->error = ess_error;
  dw_whatif_list_put3 (list, ess, prefix, "_eff_sample_size");
}
