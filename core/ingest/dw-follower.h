/* dw-follower.h — follow run folders and log files live (GIO file monitors, no polling)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A DwFollower watches folders (recursively: new subfolders and new files such as
 * batches/step_000123.safetensors are picked up) and single files with GFileMonitor. Change
 * events are coalesced: a changed file is ingested once the folder has been quiet for
 * #DwFollower:delay ms (at the latest #DwFollower:max-delay ms after its first unhandled change,
 * so a file written continuously is still ingested promptly). Each changed file is ingested on
 * its own, incrementally (only the bytes appended since the stored offset; a truncated or
 * rewritten file is re-read from the start; a partial last record waits for more bytes).
 *
 * It runs in the thread-default GMainContext of the thread that created it (a headless
 * GMainLoop for `driftwatch-cli watch`, the GTK main loop in the GUI).
 */
#pragma once

#include <gio/gio.h>

#include "dw-store.h"

G_BEGIN_DECLS

#define DW_FOLLOWER_DEFAULT_DELAY_MS     150
#define DW_FOLLOWER_DEFAULT_MAX_DELAY_MS 500

/* Ingests @path (a file below @root, or @root itself when a single file is followed). Sets
 * *@run_id to the run the file belongs to (0 when the file is not a training log or batch and
 * was skipped) and *@n_points to the number of new scalar points plus new batches stored.
 * FALSE with @error when the file could not be ingested; the error names the file and the
 * place (offset, line, step). A file that vanished before it could be read is not an error. */
typedef gboolean (*DwFollowerIngestFunc) (DwStore *store, const char *root, const char *path,
                                          gint64 *run_id, gint64 *n_points, gpointer user_data,
                                          GError **error);

#define DW_TYPE_FOLLOWER (dw_follower_get_type ())
G_DECLARE_FINAL_TYPE (DwFollower, dw_follower, DW, FOLLOWER, GObject)

/* A follower that ingests into @store (a reference is taken). */
DwFollower *dw_follower_new (DwStore *store);
DwStore *dw_follower_get_store (DwFollower *self);

/* Replaces the ingest step (default: the store's ingester). For tests and tools that do
 * something else with changed files; @func NULL restores the default. */
void dw_follower_set_ingest_func (DwFollower *self, DwFollowerIngestFunc func, gpointer user_data,
                                  GDestroyNotify destroy);

/* Bytes of a log read and committed per transaction by the follower's ingester (0: the
 * ingester's default; see dw_ingester_set_chunk_size). */
void dw_follower_set_chunk_size (DwFollower *self, gsize bytes);

guint dw_follower_get_delay (DwFollower *self);
void dw_follower_set_delay (DwFollower *self, guint delay_ms);
guint dw_follower_get_max_delay (DwFollower *self);
void dw_follower_set_max_delay (DwFollower *self, guint max_delay_ms);

/* Starts following @path: a folder (recursively) or a file. Every file already there is queued
 * for ingest (dw_follower_flush() ingests the queue at once; otherwise it happens from the main
 * loop after #DwFollower:delay). FALSE with @error when @path does not exist or cannot be
 * monitored. */
gboolean dw_follower_add_path (DwFollower *self, const char *path, GError **error);
/* The followed paths, as given (NULL-terminated, owned by the follower). */
const char *const *dw_follower_get_paths (DwFollower *self);

/* Ingests every queued file now (in path order). Emits ::ingested / ::error per file and
 * ::flushed at the end. Returns the number of files ingested without error. (From the main
 * loop, queued files are ingested in slices of ~50 ms, each ending with ::flushed, so signal
 * handlers and redraws run between files during a large initial ingest.) */
guint dw_follower_flush (DwFollower *self);
/* Files waiting for the coalescing timeout or for their slice: 0 once everything seen so far
 * has been ingested. */
guint dw_follower_get_n_pending (DwFollower *self);

/* Stops following (monitors cancelled, queue dropped). Also done on dispose. */
void dw_follower_stop (DwFollower *self);

G_END_DECLS
