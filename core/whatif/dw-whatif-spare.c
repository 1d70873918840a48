/* dw-whatif-spare.c — the memory an interactive engine keeps from its freed results for the next
 * evaluation
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A slider move of the Tune page makes a result of 3000 steps (their metrics, 576 bytes a step;
 * every row's outcome; the arena blocks of the values) while the result before it is still
 * shown. Fresh memory of that size costs a page fault per 4 KB: 10–17 ms for a move on a virtual
 * machine, where the move itself takes 8 (docs/BENCHMARKS.md). An interactive engine
 * (dw_whatif_engine_set_interactive) keeps the memory of each freed result instead, and maps as
 * much again after its first evaluation, so that a move, the first one too, writes only pages
 * already mapped. Threads: the lock covers everything; blocks are taken by the evaluation's pool
 * threads, results made and freed in any thread.
 */
#include "config.h"

#include "dw-whatif-private.h"

#include <string.h>

void
dw_whatif_spare_init (DwWhatifSpare *spare)
{
  memset (spare, 0, sizeof *spare);
  g_mutex_init (&spare->lock);
  spare->blocks = g_ptr_array_new_with_free_func (g_free);
}

void
dw_whatif_spare_clear (DwWhatifSpare *spare)
{
  g_mutex_clear (&spare->lock);
  g_free (spare->results.memory);
  g_free (spare->rows.memory);
  g_ptr_array_unref (spare->blocks);
}

void
dw_whatif_spare_set_keep (DwWhatifSpare *spare, gboolean keep)
{
  g_mutex_lock (&spare->lock);
  spare->keep = keep;
  g_mutex_unlock (&spare->lock);
}

gpointer
dw_whatif_spare_take_block (DwWhatifSpare *spare)
{
  g_mutex_lock (&spare->lock);
  gpointer block = spare->blocks->len > 0
                     ? g_ptr_array_steal_index_fast (spare->blocks, spare->blocks->len - 1)
                     : NULL;
  g_mutex_unlock (&spare->lock);
  return block;
}

/* @size bytes of @kept's memory when it holds enough, else new ones */
static gpointer
dw_whatif_kept_take (DwWhatifKept *kept, gsize size)
{
  if (kept->memory == NULL || kept->size < size)
    return g_malloc (size);
  return g_steal_pointer (&kept->memory);
}

/* keeps @memory (@size bytes, nullable) or what @kept holds, the larger; frees the other */
static void
dw_whatif_kept_put (DwWhatifKept *kept, gpointer memory, gsize size)
{
  if (kept->memory != NULL && kept->size >= size)
    {
      g_free (memory);
      return;
    }
  g_free (kept->memory);
  *kept = (DwWhatifKept){ memory, size };
}

/* @size new bytes, their pages mapped: written, as calloc () does not write memory it maps */
static gpointer
dw_whatif_spare_mapped (gsize size)
{
  return memset (g_malloc (size), 0, size);
}

/* @kept holds at least @size bytes, their pages mapped */
static void
dw_whatif_kept_fill (DwWhatifKept *kept, gsize size)
{
  if (kept->memory == NULL || kept->size < size)
    dw_whatif_kept_put (kept, dw_whatif_spare_mapped (size), size);
}

/* When the interactive engine's one live result is the one shown, the spare holds as much memory
 * as the last evaluation made, its pages mapped, for the next one (made while that result is still
 * shown): after the first evaluation, and after a free that left a smaller result's memory (the
 * steps of a run that is still loading or being written). The lock held. */
static void
dw_whatif_spare_fill (DwWhatifSpare *spare)
{
  if (!spare->keep || spare->n_live != 1)
    return;
  dw_whatif_kept_fill (&spare->results, spare->last_results_size);
  if (spare->last_rows_size > 0)
    dw_whatif_kept_fill (&spare->rows, spare->last_rows_size);
  while (spare->blocks->len < spare->max_blocks)
    g_ptr_array_add (spare->blocks, dw_whatif_spare_mapped (DW_WHATIF_ARENA_BLOCK));
}

void
dw_whatif_spare_release (DwWhatifSpare *spare, DwWhatifRunResult *res)
{
  g_mutex_lock (&spare->lock);
  spare->n_live--;
  if (spare->keep)
    {
      dw_whatif_kept_put (&spare->results, g_steal_pointer (&res->results), res->results_size);
      dw_whatif_kept_put (&spare->rows, g_steal_pointer (&res->row_rejected_block), res->rows_size);
      if (res->storage != NULL)
        while (res->storage->len > 0 && spare->blocks->len < spare->max_blocks)
          g_ptr_array_add (spare->blocks,
                           g_ptr_array_steal_index_fast (res->storage, res->storage->len - 1));
      dw_whatif_spare_fill (spare);
    }
  g_mutex_unlock (&spare->lock);
}

/* the bytes an interactive engine gives an array of @n items of @item bytes: room for a live
 * run's next steps */
static gsize
dw_whatif_spare_size (const DwWhatifSpare *spare, gsize n, gsize item)
{
  return (MAX (n, 1) + (spare->keep ? n / 8 + 64 : 0)) * item;
}

void
dw_whatif_spare_take_arrays (DwWhatifSpare *spare, DwWhatifRunResult *result, gboolean rows,
                             gsize n_rows)
{
  g_mutex_lock (&spare->lock);
  spare->n_live++;
  result->results_size = dw_whatif_spare_size (spare, result->n_steps, sizeof *result->results);
  result->results = dw_whatif_kept_take (&spare->results, result->results_size);
  if (rows)
    {
      result->rows_size = dw_whatif_spare_size (spare, n_rows, 1);
      result->row_rejected_block = dw_whatif_kept_take (&spare->rows, result->rows_size);
    }
  g_mutex_unlock (&spare->lock);
}

void
dw_whatif_spare_made (DwWhatifSpare *spare, const DwWhatifRunResult *result)
{
  g_mutex_lock (&spare->lock);
  spare->max_blocks = MAX (spare->max_blocks, result->storage->len);
  spare->last_results_size = result->results_size;
  spare->last_rows_size = result->rows_size;
  dw_whatif_spare_fill (spare);
  g_mutex_unlock (&spare->lock);
}
