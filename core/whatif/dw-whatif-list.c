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
void
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

/* ------------------------------------------------------------------------------------------ */
/* key tables (DwWhatifKeys): interned, so equal tables are one pointer                        */

struct _DwWhatifKeys
{
  gint ref_count; /* taken with the intern lock held when it may reach 0 (below) */
  guint hash;
  gsize n_keys;
  guint8 *lengths;                /* [n_keys] strlen of each key, after the keys */
  char keys[][DW_METRIC_KEY_MAX]; /* zero-padded */
};

/* Every live table, by content. A table leaves it when its last reference goes: the count drops
 * to 0 only with @dw_whatif_keys_lock held, and a table is found (and referenced) only with it
 * held, so a table found is never one being freed. A reference from a holder is taken without
 * the lock (the count is ≥ 1 then). */
static GMutex dw_whatif_keys_lock;
static GHashTable *dw_whatif_keys_interned;

static guint
dw_whatif_keys_hash_cb (gconstpointer data)
{
  return ((const DwWhatifKeys *)data)->hash;
}

static gboolean
dw_whatif_keys_equal_cb (gconstpointer a, gconstpointer b)
{
  const DwWhatifKeys *first = a, *second = b;

  return first->n_keys == second->n_keys
         && memcmp (first->keys, second->keys, first->n_keys * DW_METRIC_KEY_MAX) == 0;
}

const DwWhatifKeys *
dw_whatif_keys_ref (const DwWhatifKeys *keys)
{
  if (keys != NULL)
    g_atomic_int_inc (&((DwWhatifKeys *)keys)->ref_count);
  return keys;
}

void
dw_whatif_keys_unref (const DwWhatifKeys *keys)
{
  DwWhatifKeys *table = (DwWhatifKeys *)keys;

  if (table == NULL)
    return;
  /* not the last reference: no lock (a result freed at each slider move, 3000 a move) */
  for (gint count = g_atomic_int_get (&table->ref_count); count > 1;
       count = g_atomic_int_get (&table->ref_count))
    if (g_atomic_int_compare_and_exchange (&table->ref_count, count, count - 1))
      return;
  g_mutex_lock (&dw_whatif_keys_lock);
  if (g_atomic_int_dec_and_test (&table->ref_count))
    {
      g_hash_table_remove (dw_whatif_keys_interned, table);
      g_free (table);
    }
  g_mutex_unlock (&dw_whatif_keys_lock);
}

gsize
dw_whatif_keys_get_length (const DwWhatifKeys *keys)
{
  return keys != NULL ? keys->n_keys : 0;
}

const char *
dw_whatif_keys_get (const DwWhatifKeys *keys, gsize index)
{
  g_return_val_if_fail (keys != NULL && index < keys->n_keys, NULL);
  return keys->keys[index];
}

const char *
dw_whatif_step_result_get_key (const DwWhatifStepResult *res, gsize index)
{
  g_return_val_if_fail (index < res->n_metrics, NULL);
  return dw_whatif_keys_get (res->keys, index);
}

gboolean
dw_whatif_keys_match (const DwWhatifKeys *keys, const DwWhatifEntry *entries, gsize count)
{
  if (keys == NULL || keys->n_keys != count)
    return FALSE;
  for (gsize index = 0; index < count; index++)
    if (memcmp (keys->keys[index], entries[index].metric.key, DW_METRIC_KEY_MAX) != 0)
      return FALSE;
  return TRUE;
}

const DwWhatifKeys *
dw_whatif_keys_intern (const DwWhatifEntry *entries, gsize count, const guint *order)
{
  DwWhatifKeys *table = g_malloc (sizeof *table + count * (DW_METRIC_KEY_MAX + 1));
  DwWhatifKeys *found;

  table->ref_count = 1;
  table->n_keys = count;
  table->lengths = (guint8 *)table->keys[count];
  table->hash = 5381;
  for (gsize index = 0; index < count; index++)
    {
      const DwWhatifEntry *entry = &entries[order != NULL ? order[index] : index];

      memcpy (table->keys[index], entry->metric.key, DW_METRIC_KEY_MAX);
      table->lengths[index] = entry->key_length;
      table->hash = table->hash * 33 + g_str_hash (table->keys[index]);
    }
  g_mutex_lock (&dw_whatif_keys_lock);
  if (dw_whatif_keys_interned == NULL)
    dw_whatif_keys_interned = g_hash_table_new (dw_whatif_keys_hash_cb, dw_whatif_keys_equal_cb);
  found = g_hash_table_lookup (dw_whatif_keys_interned, table);
  if (found != NULL)
    {
      g_atomic_int_inc (&found->ref_count);
      g_free (table);
      table = found;
    }
  else
    g_hash_table_add (dw_whatif_keys_interned, table);
  g_mutex_unlock (&dw_whatif_keys_lock);
  return table;
}

void
dw_whatif_keys_to_entries (const DwWhatifKeys *keys, DwWhatifEntry *entries)
{
  for (gsize index = 0; index < keys->n_keys; index++)
    {
      memcpy (entries[index].metric.key, keys->keys[index], DW_METRIC_KEY_MAX);
      entries[index].key_length = keys->lengths[index];
    }
}

/* The keys of the last list this thread sorted, in the order they were put, their sorted order
 * and their table: the steps of one evaluation put the same keys in the same order, so the next
 * list with those keys takes that order and table instead of sorting (a slider move sorts 3000
 * lists otherwise). The table is held through @dw_whatif_list_memo_table, released when the
 * thread ends. */
#define DW_WHATIF_LIST_MEMO_MAX 128
static _Thread_local struct
{
  guint n_keys;
  guint8 key_length[DW_WHATIF_LIST_MEMO_MAX];
  guint8 order[DW_WHATIF_LIST_MEMO_MAX]; /* [sorted position] = index in the put order */
  char keys[DW_WHATIF_LIST_MEMO_MAX][DW_METRIC_KEY_MAX];
} dw_whatif_list_memo;

static void
dw_whatif_list_memo_table_free_cb (gpointer data)
{
  dw_whatif_keys_unref (data);
}

static GPrivate dw_whatif_list_memo_table = G_PRIVATE_INIT (dw_whatif_list_memo_table_free_cb);

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

/* sorts @list's entries by key (through pointers: an entry is ~100 bytes) into @order, and
 * returns their table (a new reference); keeps the keys, order and table in the memo when they
 * fit */
static const DwWhatifKeys *
dw_whatif_list_sort (const DwWhatifList *list, guint *order)
{
  const guint count = list->n_entries;
  const DwWhatifEntry **sorted = g_new (const DwWhatifEntry *, count ? count : 1);
  const DwWhatifKeys *table;

  for (guint index = 0; index < count; index++)
    sorted[index] = &list->entries[index];
  qsort (sorted, count, sizeof *sorted, dw_whatif_list_entry_compare);
  for (guint index = 0; index < count; index++)
    order[index] = (guint)(sorted[index] - list->entries);
  g_free (sorted);
  table = dw_whatif_keys_intern (list->entries, count, order);
  dw_whatif_list_memo.n_keys = 0;
  if (count > DW_WHATIF_LIST_MEMO_MAX)
    return table;
  for (guint index = 0; index < count; index++)
    {
      const DwWhatifEntry *entry = &list->entries[index];
      memcpy (dw_whatif_list_memo.keys[index], entry->metric.key, DW_METRIC_KEY_MAX);
      dw_whatif_list_memo.key_length[index] = entry->key_length;
      dw_whatif_list_memo.order[index] = (guint8)order[index];
    }
  dw_whatif_list_memo.n_keys = count;
  g_private_replace (&dw_whatif_list_memo_table, (gpointer)dw_whatif_keys_ref (table));
  return table;
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

/* @out's arrays for @count metrics: from the thread's arena, or one heap block */
static void
dw_whatif_list_alloc_result (DwWhatifStepResult *out, guint count)
{
  const gsize n = count ? count : 1;
  const gsize size = n * (2 * sizeof (double) + sizeof (guint8));
  guchar *memory = dw_whatif_list_arena != NULL
                     ? dw_whatif_list_arena_alloc (dw_whatif_list_arena, size)
                     : g_malloc (size);
  out->values = (double *)(gpointer)memory;
  out->error_bound = (double *)(gpointer)(memory + n * sizeof (double));
  out->approximate = memory + 2 * n * sizeof (double);
  out->borrowed = dw_whatif_list_arena != NULL;
}

void
dw_whatif_list_finish (DwWhatifList *list, DwWhatifStepResult *out)
{
  const guint count = list->n_entries;
  guint inline_order[DW_WHATIF_LIST_INLINE];
  guint *order = count <= DW_WHATIF_LIST_INLINE ? inline_order : g_new (guint, count);
  if (dw_whatif_list_memo_matches (list))
    {
      for (guint index = 0; index < count; index++)
        order[index] = dw_whatif_list_memo.order[index];
      out->keys = dw_whatif_keys_ref (g_private_get (&dw_whatif_list_memo_table));
    }
  else
    out->keys = dw_whatif_list_sort (list, order);
  out->n_metrics = count;
  dw_whatif_list_alloc_result (out, count);
  for (guint index = 0; index < count; index++)
    {
      const DwWhatifEntry *entry = &list->entries[order[index]];
      out->values[index] = entry->metric.value;
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
