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

/* ------------------------------------------------------------------------------------------ */
/* metric lists with approximate flags                                                         */

/* the arena of this thread's results and the evaluation its lists are part of
 * (dw_whatif_list_set_arena; NULL and 0: none) */
static _Thread_local DwWhatifArena *dw_whatif_list_arena;
static _Thread_local guint64 dw_whatif_list_epoch;

guint64
dw_whatif_list_new_epoch (void)
{
  static guint64 last; /* 64 bits: never wraps */

  return __atomic_add_fetch (&last, 1, __ATOMIC_RELAXED);
}

void
dw_whatif_list_init (DwWhatifList *list, const char *prefix)
{
  list->prefix = prefix;
  list->epoch = dw_whatif_list_epoch;
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

/* appends the metric prefix + @name + @suffix: the strings are kept, the key is made only when
 * the list's keys are not those of the list before (dw_whatif_list_finish) */
void
dw_whatif_list_put3 (DwWhatifList *list, double value, const char *name, const char *suffix)
{
  if (G_UNLIKELY (list->n_entries == list->capacity))
    dw_whatif_list_reserve (list, 1);
  DwWhatifEntry *entry = &list->entries[list->n_entries++];
  entry->source = (DwWhatifKeySource){ list->prefix, name, suffix, 0, 0 };
  entry->table = NULL;
  entry->value = value;
  entry->approximate = list->approximate || list->error != 0;
  entry->error = list->approximate && list->error == 0 ? NAN : list->error;
  list->error = 0;
}

void
dw_whatif_list_put (DwWhatifList *list, const char *name, double value)
{
  dw_whatif_list_put3 (list, value, name, "");
}

/* ------------------------------------------------------------------------------------------ */
/* key tables (DwWhatifKeys): interned, so equal tables are one pointer                        */

struct _DwWhatifKeys
{
  gint ref_count; /* taken with the intern lock held when it may reach 0 (below) */
  guint hash;
  guint64 serial; /* never given to another table (DwWhatifKeySource.table) */
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

/* The keys of some entries as text, zero-padded: a fixed size, so that tables copy and compare
 * whole keys without a length-dependent loop */
typedef struct
{
  char (*key)[DW_METRIC_KEY_MAX];
  guint8 *length;
  char (*inline_key)[DW_METRIC_KEY_MAX];
} DwWhatifKeyText;

#define DW_WHATIF_KEY_TEXT_INLINE 64

/* @entries' keys (@count of them) into @text, whose inline room is @room (for
 * DW_WHATIF_KEY_TEXT_INLINE keys) */
static void
dw_whatif_key_text_make (DwWhatifKeyText *text, char (*room)[DW_METRIC_KEY_MAX],
                         guint8 *room_length, const DwWhatifEntry *entries, gsize count)
{
  text->inline_key = room;
  text->key = count <= DW_WHATIF_KEY_TEXT_INLINE ? room : g_malloc (count * DW_METRIC_KEY_MAX);
  text->length = count <= DW_WHATIF_KEY_TEXT_INLINE ? room_length : g_malloc (count);
  for (gsize index = 0; index < count; index++)
    {
      const DwWhatifEntry *entry = &entries[index];
      char *key = text->key[index];
      if (entry->table != NULL)
        {
          memcpy (key, entry->table->keys[entry->source.index], DW_METRIC_KEY_MAX);
          text->length[index] = entry->table->lengths[entry->source.index];
          continue;
        }
      const char *parts[3] = { entry->source.prefix, entry->source.name, entry->source.suffix };
      gsize length = 0;
      memset (key, 0, DW_METRIC_KEY_MAX);
      /* cut to the key size, like snprintf */
      for (int part = 0; part < 3; part++)
        {
          gsize part_length = strnlen (parts[part], DW_METRIC_KEY_MAX - 1 - length);
          memcpy (key + length, parts[part], part_length);
          length += part_length;
        }
      text->length[index] = (guint8)length;
    }
}

static void
dw_whatif_key_text_free (DwWhatifKeyText *text)
{
  if (text->key != text->inline_key)
    {
      g_free (text->key);
      g_free (text->length);
    }
}

/* whether @keys holds the keys @text [@count], in the order @order gives (NULL: as they are) */
static gboolean
dw_whatif_keys_match (const DwWhatifKeys *keys, const DwWhatifKeyText *text, gsize count,
                      const guint *order)
{
  if (keys == NULL || keys->n_keys != count)
    return FALSE;
  for (gsize index = 0; index < count; index++)
    if (memcmp (keys->keys[index], text->key[order != NULL ? order[index] : index],
                DW_METRIC_KEY_MAX)
        != 0)
      return FALSE;
  return TRUE;
}

/* the table of the keys @text [@count] (in the order @order gives, nullable: as they are), a new
 * reference: the live table with these keys, or a new one */
static const DwWhatifKeys *
dw_whatif_keys_intern (const DwWhatifKeyText *text, gsize count, const guint *order)
{
  static guint64 last_serial;
  DwWhatifKeys *table = g_malloc (sizeof *table + count * (DW_METRIC_KEY_MAX + 1));
  DwWhatifKeys *found;

  table->ref_count = 1;
  table->n_keys = count;
  table->lengths = (guint8 *)table->keys[count];
  table->hash = 5381;
  for (gsize index = 0; index < count; index++)
    {
      const gsize from = order != NULL ? order[index] : index;

      memcpy (table->keys[index], text->key[from], DW_METRIC_KEY_MAX);
      table->lengths[index] = text->length[from];
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
    {
      table->serial = ++last_serial;
      g_hash_table_add (dw_whatif_keys_interned, table);
    }
  g_mutex_unlock (&dw_whatif_keys_lock);
  return table;
}

void
dw_whatif_list_put_table (DwWhatifList *list, const DwWhatifKeys *table, const double *values,
                          const double *errors, const guint8 *approximate)
{
  const guint count = (guint)table->n_keys;

  dw_whatif_list_reserve (list, count);
  DwWhatifEntry *entries = list->entries + list->n_entries;
  for (guint index = 0; index < count; index++)
    entries[index] = (DwWhatifEntry){
      .source = { NULL, NULL, NULL, table->serial, index },
      .table = table,
      .value = values[index],
      .error = errors[index],
      .approximate = approximate[index],
    };
  list->n_entries += count;
}

/* ------------------------------------------------------------------------------------------ */
/* the keys of the list before                                                                 */

/* What this thread last made of some entries' keys: their sources, the evaluation they were put
 * in, and (in @holder) the table made of them, sorted through @order (a finished list) or as put
 * (a memo's group). The steps of one evaluation put the same keys from the same strings in the
 * same order: the next list with those sources in the same evaluation takes the table (and
 * order) without making its keys' text; one of another evaluation compares the text (a slider
 * move sorts 3000 lists otherwise). The table is released when the thread ends. */
#define DW_WHATIF_LIST_MEMO_MAX 128
typedef struct
{
  guint64 epoch;
  guint n_keys;
  GPrivate *holder;
  guint order[DW_WHATIF_LIST_MEMO_MAX]; /* [sorted position] = index in the put order */
  DwWhatifKeySource source[DW_WHATIF_LIST_MEMO_MAX];
} DwWhatifListMemo;

static void
dw_whatif_list_memo_table_free_cb (gpointer data)
{
  dw_whatif_keys_unref (data);
}

static GPrivate dw_whatif_list_finished_table = G_PRIVATE_INIT (dw_whatif_list_memo_table_free_cb);
static GPrivate dw_whatif_list_kept_tables[2] = {
  G_PRIVATE_INIT (dw_whatif_list_memo_table_free_cb),
  G_PRIVATE_INIT (dw_whatif_list_memo_table_free_cb),
};
/* the last finished list; the last two groups kept (a step keeps its IS and its RS group) */
static _Thread_local DwWhatifListMemo dw_whatif_list_finished
  = { .holder = &dw_whatif_list_finished_table };
static _Thread_local DwWhatifListMemo dw_whatif_list_kept[2]
  = { { .holder = &dw_whatif_list_kept_tables[0] }, { .holder = &dw_whatif_list_kept_tables[1] } };
static _Thread_local guint dw_whatif_list_kept_next;

static gboolean
dw_whatif_key_source_equal (const DwWhatifKeySource *a, const DwWhatifKeySource *b)
{
  return a->prefix == b->prefix && a->name == b->name && a->suffix == b->suffix
         && a->table == b->table && a->index == b->index;
}

/* whether @entries [@count], put in evaluation @epoch, have the sources @memo's table was made of
 */
static gboolean
dw_whatif_list_memo_same_sources (const DwWhatifListMemo *memo, guint64 epoch,
                                  const DwWhatifEntry *entries, guint count)
{
  if (epoch == 0 || memo->epoch != epoch || memo->n_keys != count || count == 0)
    return FALSE;
  for (guint index = 0; index < count; index++)
    if (!dw_whatif_key_source_equal (&entries[index].source, &memo->source[index]))
      return FALSE;
  return TRUE;
}

/* @memo made of @entries [@count] of evaluation @epoch, with @table (a new reference taken) and,
 * for a finished list, @order */
static void
dw_whatif_list_memo_keep (DwWhatifListMemo *memo, guint64 epoch, const DwWhatifEntry *entries,
                          guint count, const DwWhatifKeys *table, const guint *order)
{
  memo->n_keys = 0;
  if (count > DW_WHATIF_LIST_MEMO_MAX)
    return;
  for (guint index = 0; index < count; index++)
    {
      memo->source[index] = entries[index].source;
      if (order != NULL)
        memo->order[index] = order[index];
    }
  memo->n_keys = count;
  memo->epoch = epoch;
  g_private_replace (memo->holder, (gpointer)dw_whatif_keys_ref (table));
}

const DwWhatifKeys *
dw_whatif_list_keys_from (const DwWhatifList *list, guint first, const DwWhatifKeys *current)
{
  const DwWhatifEntry *entries = list->entries + first;
  const guint count = list->n_entries - first;
  char room[DW_WHATIF_KEY_TEXT_INLINE][DW_METRIC_KEY_MAX];
  guint8 room_length[DW_WHATIF_KEY_TEXT_INLINE];
  DwWhatifKeyText text;
  const DwWhatifKeys *table;

  for (guint slot = 0; slot < G_N_ELEMENTS (dw_whatif_list_kept); slot++)
    if (dw_whatif_list_memo_same_sources (&dw_whatif_list_kept[slot], list->epoch, entries, count))
      {
        table = g_private_get (dw_whatif_list_kept[slot].holder);
        return table == current ? current : dw_whatif_keys_ref (table);
      }
  /* the step's keys are as a rule those of its last evaluation: compared with its table, which
   * every step shares (in cache), instead of interned again */
  dw_whatif_key_text_make (&text, room, room_length, entries, count);
  table = dw_whatif_keys_match (current, &text, count, NULL)
            ? current
            : dw_whatif_keys_intern (&text, count, NULL);
  dw_whatif_key_text_free (&text);
  dw_whatif_list_memo_keep (&dw_whatif_list_kept[dw_whatif_list_kept_next], list->epoch, entries,
                            count, table, NULL);
  dw_whatif_list_kept_next = (dw_whatif_list_kept_next + 1) % G_N_ELEMENTS (dw_whatif_list_kept);
  return table;
}

static _Thread_local const DwWhatifKeyText *dw_whatif_list_sorting;

static int
dw_whatif_list_key_compare (const void *a, const void *b)
{
  return strcmp (dw_whatif_list_sorting->key[*(const guint *)a],
                 dw_whatif_list_sorting->key[*(const guint *)b]);
}

/* the sorted order of @list's keys into @order and their table (a new reference), kept as the
 * thread's finished list */
static const DwWhatifKeys *
dw_whatif_list_sort (const DwWhatifList *list, guint *order)
{
  const guint count = list->n_entries;
  char room[DW_WHATIF_KEY_TEXT_INLINE][DW_METRIC_KEY_MAX];
  guint8 room_length[DW_WHATIF_KEY_TEXT_INLINE];
  DwWhatifListMemo *memo = &dw_whatif_list_finished;
  DwWhatifKeyText text;
  const DwWhatifKeys *table = g_private_get (memo->holder);

  dw_whatif_key_text_make (&text, room, room_length, list->entries, count);
  if (memo->n_keys == count && count > 0 && dw_whatif_keys_match (table, &text, count, memo->order))
    {
      /* the keys of the list before, put in another evaluation: its order, found by the text */
      memcpy (order, memo->order, count * sizeof *order);
      table = dw_whatif_keys_ref (table);
    }
  else
    {
      for (guint index = 0; index < count; index++)
        order[index] = index;
      dw_whatif_list_sorting = &text;
      qsort (order, count, sizeof *order, dw_whatif_list_key_compare);
      dw_whatif_list_sorting = NULL;
      table = dw_whatif_keys_intern (&text, count, order);
    }
  dw_whatif_list_memo_keep (memo, list->epoch, list->entries, count, table, order);
  dw_whatif_key_text_free (&text);
  return table;
}

void
dw_whatif_list_set_arena (DwWhatifArena *arena)
{
  dw_whatif_list_arena = arena;
  dw_whatif_list_epoch = arena != NULL ? arena->epoch : 0;
}

/* @size (at most DW_WHATIF_ARENA_BLOCK) bytes of the arena */
static gpointer
dw_whatif_list_arena_alloc (DwWhatifArena *arena, gsize size)
{
  size = (size + 15) & ~(gsize)15;
  if (size > arena->left)
    {
      arena->next = arena->spare != NULL ? dw_whatif_spare_take_block (arena->spare) : NULL;
      if (arena->next == NULL)
        arena->next = g_malloc (DW_WHATIF_ARENA_BLOCK);
      arena->left = DW_WHATIF_ARENA_BLOCK;
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
  const gboolean borrowed = dw_whatif_list_arena != NULL && size <= DW_WHATIF_ARENA_BLOCK;
  guchar *memory
    = borrowed ? dw_whatif_list_arena_alloc (dw_whatif_list_arena, size) : g_malloc (size);
  out->values = (double *)(gpointer)memory;
  out->error_bound = (double *)(gpointer)(memory + n * sizeof (double));
  out->approximate = memory + 2 * n * sizeof (double);
  out->borrowed = borrowed;
}

void
dw_whatif_list_finish (DwWhatifList *list, DwWhatifStepResult *out)
{
  const guint count = list->n_entries;
  guint inline_order[DW_WHATIF_LIST_INLINE];
  guint *order = count <= DW_WHATIF_LIST_INLINE ? inline_order : g_new (guint, count);
  if (dw_whatif_list_memo_same_sources (&dw_whatif_list_finished, list->epoch, list->entries,
                                        count))
    {
      memcpy (order, dw_whatif_list_finished.order, count * sizeof *order);
      out->keys = dw_whatif_keys_ref (g_private_get (dw_whatif_list_finished.holder));
    }
  else
    out->keys = dw_whatif_list_sort (list, order);
  out->n_metrics = count;
  dw_whatif_list_alloc_result (out, count);
  for (guint index = 0; index < count; index++)
    {
      const DwWhatifEntry *entry = &list->entries[order[index]];
      out->values[index] = entry->value;
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
