/* dw-session.h — what the window shows, without the window: the store, its runs, their health
 * and the work that changes them
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The session owns the store (main-thread connection), the one store reader every view reads
 * through (dw-store-reader.h), the runs as a GListModel of DwRunItem (newest first, as
 * dw_store_list_runs gives them), each run's live state and health monitor, the follower of
 * opened folders (GIO file monitors), ingest jobs and first health evaluations (GTask workers).
 * It knows nothing of the window: it talks through the list model and its signals, all emitted
 * on the main thread.
 */
#pragma once

#include <gio/gio.h>

#include "dw-run-item.h"
#include "dw-store-reader.h"
#include "dw-store.h"

G_BEGIN_DECLS

#define DW_TYPE_SESSION (dw_session_get_type ())
G_DECLARE_FINAL_TYPE (DwSession, dw_session, DW, SESSION, GObject)

/* Signals:
 *   ::message (const char *text)  something went wrong or was skipped: say it (a toast)
 *   ::reloaded ()                 the run list was re-read (runs may have come or gone)
 *   ::ingested (GStrv paths, GArray *run_ids, gboolean demo)  an ingest job is done; its runs
 *                                 are in the list already
 *   ::health-changed (gint64 run_id)  a run's health monitor was created or fed
 *   ::health-fired (DwRunItem *item, GPtrArray *events)  rules fired for the first time on new
 *                                 points of a run (DwHealthEvent*)
 *   ::refreshed (GArray *grown)   the live refresh is done; run ids that got new points (gint64)
 */

DwSession *dw_session_new (DwStore *store);
DwStore *dw_session_get_store (DwSession *self);
DwStoreReader *dw_session_get_reader (DwSession *self);

/* The runs (DwRunItem), newest first. */
GListModel *dw_session_get_runs (DwSession *self);
/* The item of @run_id (transfer none) and its position in the list, or NULL. */
DwRunItem *dw_session_lookup (DwSession *self, gint64 run_id, guint *position);

/* Re-reads the run list (in place: items of runs still there are kept) and starts the first
 * health evaluation of every run that has none. */
gboolean dw_session_reload (DwSession *self, GError **error);
/* Reads every run's information again; feeds the health monitors of runs that got new points. */
void dw_session_refresh (DwSession *self);
/* Watches the store on disk (GIO file monitors on the file and its write-ahead log) and refreshes
 * at most every @delay_ms after it changed (0: stops watching); new runs written by another
 * process appear, runs that grew get their points. */
void dw_session_set_refresh_interval (DwSession *self, guint delay_ms);
/* Whether opened folders are followed live (the "live" setting). */
void dw_session_set_follow (DwSession *self, gboolean follow);

/* Ingests files or folders in a worker thread (then ::ingested), following them when live. */
void dw_session_ingest_paths (DwSession *self, const char *const *paths);
/* Writes the collapse demo to @dir and ingests it. */
void dw_session_load_demo (DwSession *self, const char *dir);
/* Deletes a run and everything stored for it; the list drops it. */
gboolean dw_session_remove_run (DwSession *self, gint64 run_id, GError **error);

/* TRUE while an ingest job or a first health evaluation is running. */
gboolean dw_session_is_busy (DwSession *self);

G_END_DECLS
