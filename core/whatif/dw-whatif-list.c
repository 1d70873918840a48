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

void
dw_whatif_list_init (DwWhatifList *list, const char *prefix)
{
  list->prefix = prefix;
  list->entries = list->inline_entries;
  list->n_entries = 0;
  list->capacity = DW_WHATIF_LIST_INLINE;
  list->approximate = FALSE;
  list->error = 0;
}

void
dw_whatif_list_clear (DwWhatifList *list)
{
  if (list->entries != list->inline_entries)
    g_free (list->entries);
  list->entries = list->inline_entries;
  list->n_entries = 0;
}

/* room for @n more entries */
static void
dw_whatif_list_reserve (DwWhatifList *list, guint n)
{
  if (list->n_entries + n <= list->capacity)
    return;
  guint capacity = list->capacity;
  while (list->n_entries + n > capacity)
    capacity *= 2;
  DwWhatifEntry *grown = g_new (DwWhatifEntry, capacity);
  memcpy (grown, list->entries, list->n_entries * sizeof *grown);
  if (list->entries != list->inline_entries)
    g_free (list->entries);
  list->entries = grown;
  list->capacity = capacity;
}

void
dw_whatif_list_append (DwWhatifList *list, const DwWhatifEntry *entries, guint n)
{
  dw_whatif_list_reserve (list, n);
  memcpy (list->entries + list->n_entries, entries, n * sizeof *entries);
  list->n_entries += n;
}

/* appends the metric prefix + @name + @suffix (cut to the key size, like snprintf) */
void
dw_whatif_list_put3 (DwWhatifList *list, double value, const char *name, const char *suffix)
{
  dw_whatif_list_reserve (list, 1);
  DwWhatifEntry *entry = &list->entries[list->n_entries++];
  const char *parts[3] = { list->prefix, name, suffix };
  gsize length = 0;
  /* zero-padded (a fixed size: a few vector stores): a finished list copies and compares whole
   * keys without a length-dependent loop */
  memset (entry->metric.key, 0, sizeof entry->metric.key);
  for (int part = 0; part < 3; part++)
    {
      gsize part_length = strnlen (parts[part], sizeof entry->metric.key - 1 - length);
      memcpy (entry->metric.key + length, parts[part], part_length);
      length += part_length;
    }
  entry->key_length = (guint8)length;
  entry->metric.value = value;
  entry->approximate = list->approximate || list->error != 0;
  entry->error = list->approximate && list->error == 0 ? NAN : list->error;
  list->error = 0;
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

/* The keys of the last list this thread sorted, in the order they were put, and their sorted
 * order: the steps of one evaluation put the same keys in the same order, so the next list with
 * those keys takes that order instead of sorting (a slider move sorts 3000 lists otherwise). No
 * heap: nothing to release when the thread ends. */
#define DW_WHATIF_LIST_MEMO_MAX 128
static _Thread_local struct
{
  guint n_keys;
  guint8 key_length[DW_WHATIF_LIST_MEMO_MAX];
  guint8 order[DW_WHATIF_LIST_MEMO_MAX]; /* [sorted position] = index in the put order */
  char keys[DW_WHATIF_LIST_MEMO_MAX][DW_METRIC_KEY_MAX];
} dw_whatif_list_memo;

/* whether @list puts exactly the memo's keys, in the same order */
static gboolean
dw_whatif_list_memo_matches (const DwWhatifList *list)
{
  if (list->n_entries != dw_whatif_list_memo.n_keys || list->n_entries == 0)
    return FALSE;
  for (guint index = 0; index < list->n_entries; index++)
    {
      const DwWhatifEntry *entry = &list->entries[index];
      if (entry->key_length != dw_whatif_list_memo.key_length[index]
          || memcmp (entry->metric.key, dw_whatif_list_memo.keys[index], DW_METRIC_KEY_MAX) != 0)
        return FALSE;
    }
  return TRUE;
}

/* sorts @list's entries by key (through pointers: an entry is ~100 bytes) into @order, and keeps
 * the keys and order in the memo when they fit */
static void
dw_whatif_list_sort (const DwWhatifList *list, guint *order)
{
  const guint count = list->n_entries;
  const DwWhatifEntry **sorted = g_new (const DwWhatifEntry *, count ? count : 1);
  for (guint index = 0; index < count; index++)
    sorted[index] = &list->entries[index];
  qsort (sorted, count, sizeof *sorted, dw_whatif_list_entry_compare);
  for (guint index = 0; index < count; index++)
    order[index] = (guint)(sorted[index] - list->entries);
  g_free (sorted);
  dw_whatif_list_memo.n_keys = 0;
  if (count > DW_WHATIF_LIST_MEMO_MAX)
    return;
  for (guint index = 0; index < count; index++)
    {
      const DwWhatifEntry *entry = &list->entries[index];
      memcpy (dw_whatif_list_memo.keys[index], entry->metric.key, DW_METRIC_KEY_MAX);
      dw_whatif_list_memo.key_length[index] = entry->key_length;
      dw_whatif_list_memo.order[index] = (guint8)order[index];
    }
  dw_whatif_list_memo.n_keys = count;
}

static _Thread_local DwWhatifArena *dw_whatif_list_arena;

void
dw_whatif_list_set_arena (DwWhatifArena *arena)
{
  dw_whatif_list_arena = arena;
}

static gpointer
dw_whatif_list_arena_alloc (DwWhatifArena *arena, gsize size)
{
  size = (size + 15) & ~(gsize)15;
  if (size > arena->left)
    {
      /* under glibc's mmap threshold: freed blocks go back to the heap of the thread that made
       * them, for its next evaluation */
      const gsize block = MAX (size, 64 * 1024 - 64);
      arena->next = g_malloc (block);
      arena->left = block;
      g_ptr_array_add (arena->blocks, arena->next);
    }
  gpointer memory = arena->next;
  arena->next += size;
  arena->left -= size;
  return memory;
}

/* @out's arrays for @count metrics: from the thread's arena, or each on the heap */
static void
dw_whatif_list_alloc_result (DwWhatifStepResult *out, guint count)
{
  const gsize n = count ? count : 1;
  if (dw_whatif_list_arena == NULL)
    {
      out->result.metrics = malloc (n * sizeof (DwMetric));
      out->approximate = g_new (guint8, n);
      out->error_bound = g_new (double, n);
      return;
    }
  guchar *memory = dw_whatif_list_arena_alloc (
    dw_whatif_list_arena, n * (sizeof (DwMetric) + sizeof (double) + sizeof (guint8)));
  out->result.metrics = (DwMetric *)(gpointer)memory;
  out->error_bound = (double *)(gpointer)(memory + n * sizeof (DwMetric));
  out->approximate = memory + n * (sizeof (DwMetric) + sizeof (double));
  out->borrowed = TRUE;
}

void
dw_whatif_list_finish (DwWhatifList *list, DwWhatifStepResult *out)
{
  const guint count = list->n_entries;
  guint inline_order[DW_WHATIF_LIST_INLINE];
  guint *order = count <= DW_WHATIF_LIST_INLINE ? inline_order : g_new (guint, count);
  if (dw_whatif_list_memo_matches (list))
    for (guint index = 0; index < count; index++)
      order[index] = dw_whatif_list_memo.order[index];
  else
    dw_whatif_list_sort (list, order);
  out->result.n_metrics = count;
  dw_whatif_list_alloc_result (out, count);
  for (guint index = 0; index < count; index++)
    {
      const DwWhatifEntry *entry = &list->entries[order[index]];
      DwMetric *metric = &out->result.metrics[index];
      /* zero-padded as the correction core's keys: equal results are equal byte for byte */
      memcpy (metric->key, entry->metric.key, sizeof metric->key);
      metric->value = entry->metric.value;
      out->approximate[index] = entry->approximate;
      out->error_bound[index] = entry->error;
      out->any_approximate |= entry->approximate;
    }
  if (order != inline_order)
    g_free (order);
  dw_whatif_list_clear (list);
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
