/* dw-tune-values.c — the Tune page's charts' values from a what-if result
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each chart shows one metric; a step result lists its metrics in an interned table of keys
 * (DwWhatifKeys), which the steps of an evaluation share. The chart's position in a table is
 * looked up once per table, and every chart's values are read in one walk over the steps.
 */
#define G_LOG_DOMAIN "dw-tune-view"

#include "config.h"

#include <math.h>
#include <string.h>

#include "dw-tune-view-private.h"

#include "dw-canonical.h"

/* The position in @keys of @spec's metric (or its alternative): the shortest such key (the
 * option-independent key rather than a per-option one); the table's length when none. */
static gsize
dw_tune_view_canonical_position (const DwWhatifKeys *keys, const DwTuneChartSpec *spec)
{
  const gsize n_keys = dw_whatif_keys_get_length (keys);
  gsize best = n_keys;

  for (gsize index = 0; index < n_keys; index++)
    {
      const char *key = dw_whatif_keys_get (keys, index);
      const char *canonical = dw_canonical_for_tag (key);
      const char *slash = strrchr (key, '/');
      gboolean same = canonical != NULL ? strcmp (canonical, spec->canonical) == 0
                                            || g_strcmp0 (canonical, spec->alternative) == 0
                                        : strcmp (slash ? slash + 1 : key, spec->canonical) == 0;

      if (same && (best == n_keys || strlen (key) < strlen (dw_whatif_keys_get (keys, best))))
        best = index;
    }
  return best;
}

/* The position of chart @chart's metric in @keys (its length when absent), looked up once per
 * table: the steps of one evaluation share their keys' table, and so do the next evaluations */
static gsize
dw_tune_view_chart_position (DwTuneView *self, const DwWhatifKeys *keys, guint chart)
{
  DwTuneViewKeyPositions *entry = NULL;

  for (guint index = 0; index < DW_TUNE_VIEW_KEY_TABLES && entry == NULL; index++)
    if (self->key_positions[index].keys == keys)
      entry = &self->key_positions[index];
  if (entry == NULL)
    {
      entry = &self->key_positions[self->key_positions_next];
      self->key_positions_next = (self->key_positions_next + 1) % DW_TUNE_VIEW_KEY_TABLES;
      dw_whatif_keys_unref (entry->keys);
      entry->keys = dw_whatif_keys_ref (keys);
      for (guint other = 0; other < DW_TUNE_N_CHARTS; other++)
        entry->position[other] = DW_TUNE_VIEW_UNKNOWN;
    }
  if (entry->position[chart] == DW_TUNE_VIEW_UNKNOWN)
    entry->position[chart] = dw_tune_view_canonical_position (keys, &dw_tune_chart_specs[chart]);
  return entry->position[chart];
}

/* One walk over the steps for all charts: a walk per chart read each step's result six times
 * (0.47 ms of the page's 1.1 ms after a move at 3000 steps; one walk 0.38 ms, most of it the
 * results' cache misses, written by the evaluation's threads on other processors) */
void
dw_tune_view_whatif_values (DwTuneView *self, double **values, double **bounds,
                            gboolean *any_approx)
{
  const DwWhatifRunResult *res = self->result;
  const gsize n = res->n_steps;
  const DwWhatifKeys *last_keys = NULL;
  gsize position[DW_TUNE_N_CHARTS] = { 0 };

  if (self->chart_values_room < 2 * DW_TUNE_N_CHARTS * MAX (n, 1))
    {
      g_free (self->chart_values);
      self->chart_values_room = 2 * DW_TUNE_N_CHARTS * MAX (n, 1);
      self->chart_values = g_new (double, self->chart_values_room);
    }
  double *v = *values = self->chart_values;
  double *e = *bounds = self->chart_values + DW_TUNE_N_CHARTS * MAX (n, 1);
  for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
    any_approx[c] = FALSE;
  for (gsize i = 0; i < n; i++)
    {
      const DwWhatifStepResult *r = &res->results[i];
      const gboolean none = r->failed || r->pending || r->n_metrics == 0;

      if (!none && r->keys != last_keys)
        {
          for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
            position[c] = dw_tune_view_chart_position (self, r->keys, c);
          last_keys = r->keys;
        }
      for (guint c = 0; c < DW_TUNE_N_CHARTS; c++)
        {
          const gboolean known = !none && position[c] < r->n_metrics;
          const gboolean approx = known && r->approximate[position[c]];

          v[c * n + i] = known ? r->values[position[c]] : NAN;
          e[c * n + i] = approx ? r->error_bound[position[c]] : 0;
          any_approx[c] |= approx || r->pending;
        }
    }
}
