/* dw-workspace.c — per-thread scratch buffers and recycled result blocks
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Arithmetic follows torch (docs/CORRECTION.md §2): every elementwise result is
 * rounded to the input dtype, reductions accumulate in double.
 */
#include "dw-correction-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local struct
{
  void *p;
  size_t size;
} ws[DW_WORKSPACE_N_SLOTS];

void *
dw_workspace_get (int slot, size_t bytes)
{
  if (bytes == 0)
    bytes = 1;
  if (ws[slot].size < bytes)
    {
      free (ws[slot].p);
      ws[slot].p = malloc (bytes);
      ws[slot].size = ws[slot].p ? bytes : 0;
    }
  return ws[slot].p;
}

/* Result arrays (weights, masks) are plain malloc() blocks the caller owns. Large ones returned
 * through dw_correction_result_clear() are kept per thread and handed out again by the next run
 * instead of fresh mmaps whose page faults cost as much as the kernels themselves. Only blocks
 * this file allocated (recorded with their exact size in @issued) are recycled. */
#define RECYCLE_MIN ((size_t)256 * 1024)
enum
{
  N_RECYCLED = 2,
  N_ISSUED = 8
};
typedef struct
{
  void *p;
  size_t size;
} Block;
static _Thread_local Block recycled[N_RECYCLED], issued[N_ISSUED];
static _Thread_local unsigned issued_next;

void *
dw_workspace_alloc (size_t bytes)
{
  if (bytes == 0)
    bytes = 1;
  void *p = NULL;
  int best = -1;
  for (int i = 0; i < N_RECYCLED; i++)
    if (recycled[i].p && recycled[i].size >= bytes
        && recycled[i].size <= bytes + bytes / 2 /* do not pin a much larger block */
        && (best < 0 || recycled[i].size < recycled[best].size))
      best = i;
  size_t size = bytes;
  if (best >= 0)
    {
      p = recycled[best].p;
      size = recycled[best].size;
      recycled[best] = (Block){ NULL, 0 };
    }
  else
    p = malloc (bytes);
  if (!p)
    return NULL;
  /* a block freed by its owner with free() may come back at the same address: forget it */
  int slot = -1;
  for (int i = 0; i < N_ISSUED; i++)
    if (issued[i].p == p)
      {
        issued[i] = (Block){ NULL, 0 };
        slot = i;
      }
  if (size >= RECYCLE_MIN)
    {
      if (slot < 0)
        slot = (int)(issued_next++ % N_ISSUED);
      issued[slot] = (Block){ p, size };
    }
  return p;
}

void
dw_workspace_free (void *p)
{
  if (!p)
    return;
  for (int i = 0; i < N_ISSUED; i++)
    if (issued[i].p == p)
      {
        const Block blk = issued[i];
        issued[i] = (Block){ NULL, 0 };
        int slot = 0; /* an empty slot, else the smallest cached block */
        for (int k = 0; k < N_RECYCLED; k++)
          if (!recycled[k].p)
            {
              slot = k;
              break;
            }
          else if (recycled[k].size < recycled[slot].size)
            slot = k;
        if (recycled[slot].p && recycled[slot].size >= blk.size)
          break; /* the cache already holds larger blocks */
        free (recycled[slot].p);
        recycled[slot] = blk;
        return;
      }
  free (p);
}

void
dw_workspace_release (void)
{
  for (int i = 0; i < DW_WORKSPACE_N_SLOTS; i++)
    {
      free (ws[i].p);
      ws[i].p = NULL;
      ws[i].size = 0;
    }
  for (int i = 0; i < N_RECYCLED; i++)
    {
      free (recycled[i].p);
      recycled[i] = (Block){ NULL, 0 };
    }
  for (int i = 0; i < N_ISSUED; i++)
    issued[i] = (Block){ NULL, 0 };
}
