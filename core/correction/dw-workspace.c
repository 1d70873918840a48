/* dw-workspace.c — per-thread scratch buffers and dw_workspace_recycled result blocks
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only (C11 <threads.h>, part of libc). The buffers of a thread are freed when the
 * thread exits: the first buffer a thread keeps sets a thread-specific value whose destructor
 * (C11 tss, pthread keys in glibc) releases them, so no caller has to remember to. A process's
 * main thread keeps its buffers until exit, reachable through its thread-local storage.
 */
#include "dw-correction-private.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

static _Thread_local struct
{
  void *block;
  size_t size;
} dw_workspace_slots[DW_WORKSPACE_N_SLOTS];

static once_flag dw_workspace_key_once = ONCE_FLAG_INIT;
static tss_t dw_workspace_key;
static bool dw_workspace_key_created;
/* this thread's key value is set: its destructor will run at thread exit */
static _Thread_local bool dw_workspace_registered;

static void dw_workspace_release (void);

/* thread exit: the destructor of the key's value (the value is only a non-NULL token) */
static void
dw_workspace_thread_exit_cb (void *token)
{
  (void)token;
  dw_workspace_registered = false;
  dw_workspace_release ();
}

static void
dw_workspace_key_create (void)
{
  dw_workspace_key_created
    = tss_create (&dw_workspace_key, dw_workspace_thread_exit_cb) == thrd_success;
}

/* called before a thread keeps a block: arms the release at its exit (once per thread) */
static void
dw_workspace_register (void)
{
  if (dw_workspace_registered)
    return;
  call_once (&dw_workspace_key_once, dw_workspace_key_create);
  if (dw_workspace_key_created
      && tss_set (dw_workspace_key, (void *)&dw_workspace_registered) == thrd_success)
    dw_workspace_registered = true;
}

void *
dw_workspace_get (int slot, size_t bytes)
{
  if (bytes == 0)
    bytes = 1;
  if (dw_workspace_slots[slot].size < bytes)
    {
      dw_workspace_register ();
      free (dw_workspace_slots[slot].block);
      dw_workspace_slots[slot].block = malloc (bytes);
      dw_workspace_slots[slot].size = dw_workspace_slots[slot].block ? bytes : 0;
    }
  return dw_workspace_slots[slot].block;
}

/* Result arrays (weights, masks) are plain malloc() blocks the caller owns. Large ones returned
 * through dw_correction_result_clear() are kept per thread and handed out again by the next run
 * instead of fresh mmaps whose page faults cost as much as the kernels themselves. Only blocks
 * this file allocated (recorded with their exact size in dw_workspace_issued) are
 * dw_workspace_recycled. */
#define RECYCLE_MIN ((size_t)256 * 1024)
enum
{
  N_RECYCLED = 2,
  N_ISSUED = 8
};
typedef struct
{
  void *block;
  size_t size;
} DwWorkspaceBlock;
static _Thread_local DwWorkspaceBlock dw_workspace_recycled[N_RECYCLED],
  dw_workspace_issued[N_ISSUED];
static _Thread_local unsigned dw_workspace_issued_next;

void *
dw_workspace_alloc (size_t bytes)
{
  if (bytes == 0)
    bytes = 1;
  void *block = NULL;
  int best = -1;
  for (int index = 0; index < N_RECYCLED; index++)
    if (dw_workspace_recycled[index].block && dw_workspace_recycled[index].size >= bytes
        && dw_workspace_recycled[index].size
             <= bytes + bytes / 2 /* do not pin a much larger block */
        && (best < 0 || dw_workspace_recycled[index].size < dw_workspace_recycled[best].size))
      best = index;
  size_t size = bytes;
  if (best >= 0)
    {
      block = dw_workspace_recycled[best].block;
      size = dw_workspace_recycled[best].size;
      dw_workspace_recycled[best] = (DwWorkspaceBlock){ NULL, 0 };
    }
  else if (bytes < RECYCLE_MIN || posix_memalign (&block, 64, bytes) != 0)
    block = malloc (bytes); /* large blocks start on a cache line: the vector passes stream whole
                             * lines into them (dw_correction_simd_stream_row) */
  if (!block)
    return NULL;
  /* a block freed by its owner with free() may come back at the same address: forget it */
  int slot = -1;
  for (int index = 0; index < N_ISSUED; index++)
    if (dw_workspace_issued[index].block == block)
      {
        dw_workspace_issued[index] = (DwWorkspaceBlock){ NULL, 0 };
        slot = index;
      }
  if (size >= RECYCLE_MIN)
    {
      if (slot < 0)
        slot = (int)(dw_workspace_issued_next++ % N_ISSUED);
      dw_workspace_issued[slot] = (DwWorkspaceBlock){ block, size };
    }
  return block;
}

void
dw_workspace_free (void *block)
{
  if (!block)
    return;
  for (int index = 0; index < N_ISSUED; index++)
    if (dw_workspace_issued[index].block == block)
      {
        const DwWorkspaceBlock freed = dw_workspace_issued[index];
        dw_workspace_issued[index] = (DwWorkspaceBlock){ NULL, 0 };
        int slot = 0; /* an empty slot, else the smallest cached block */
        for (int candidate = 0; candidate < N_RECYCLED; candidate++)
          if (!dw_workspace_recycled[candidate].block)
            {
              slot = candidate;
              break;
            }
          else if (dw_workspace_recycled[candidate].size < dw_workspace_recycled[slot].size)
            slot = candidate;
        if (dw_workspace_recycled[slot].block && dw_workspace_recycled[slot].size >= freed.size)
          break; /* the cache already holds larger blocks */
        dw_workspace_register ();
        free (dw_workspace_recycled[slot].block);
        dw_workspace_recycled[slot] = freed;
        return;
      }
  free (block);
}

/* frees this thread's buffers and cached blocks (at thread exit) */
static void
dw_workspace_release (void)
{
  for (int index = 0; index < DW_WORKSPACE_N_SLOTS; index++)
    {
      free (dw_workspace_slots[index].block);
      dw_workspace_slots[index].block = NULL;
      dw_workspace_slots[index].size = 0;
    }
  for (int index = 0; index < N_RECYCLED; index++)
    {
      free (dw_workspace_recycled[index].block);
      dw_workspace_recycled[index] = (DwWorkspaceBlock){ NULL, 0 };
    }
  for (int index = 0; index < N_ISSUED; index++)
    dw_workspace_issued[index] = (DwWorkspaceBlock){ NULL, 0 };
}
