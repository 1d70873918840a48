/* dw-store-reader.h — the one way the views read the store off the main thread
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A read (a view's charts, a run's first health evaluation) runs in a GTask worker on a read-only
 * connection of the reader's own (SQLite WAL: readers never block the writer or each other); the
 * main thread's connection is never used off the main thread. Connections are opened on first
 * need and kept for the next read, at most one per concurrent read. Every read is an
 * `_async` / `_finish` pair with a source tag; the callback runs on the thread that started it.
 */
#pragma once

#include <gio/gio.h>

#include "dw-health.h"
#include "dw-store.h"

G_BEGIN_DECLS

#define DW_TYPE_STORE_READER (dw_store_reader_get_type ())
G_DECLARE_FINAL_TYPE (DwStoreReader, dw_store_reader, DW, STORE_READER, GObject)

DwStoreReader *dw_store_reader_new (const char *db_path);
const char *dw_store_reader_get_path (DwStoreReader *self);

/* A read in a worker thread: @store is a read-only connection lent for the call. */
typedef gboolean (*DwStoreReadFunc) (DwStore *store, gpointer data, GCancellable *cancellable,
                                     GError **error);

/* Runs @func (@data, owned by the read and freed with @data_free when it is done) in a worker. */
void dw_store_reader_read_async (DwStoreReader *self, DwStoreReadFunc func, gpointer data,
                                 GDestroyNotify data_free, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
/* @data: the read's data (transfer none, valid while @result is). */
gboolean dw_store_reader_read_finish (DwStoreReader *self, GAsyncResult *result, gpointer *data,
                                      GError **error);

/* The first health evaluation of a run: every ruled series, into a new monitor. */
void dw_store_reader_evaluate_health_async (DwStoreReader *self, gint64 run_id,
                                            GCancellable *cancellable, GAsyncReadyCallback callback,
                                            gpointer user_data);
/* The monitor (transfer full), NULL with @error. */
DwHealthMonitor *dw_store_reader_evaluate_health_finish (DwStoreReader *self, GAsyncResult *result,
                                                         GError **error);

G_END_DECLS
