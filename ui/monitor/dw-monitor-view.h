/* dw-monitor-view.h — the Monitor page: a grid of chart cards over the selected runs
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * By default the rollout–training mismatch family (IS weight mean, ESS, veto / rejection
 * fraction, KL, K3 KL, PPL ratio) and, when logged, reward, response length, entropy and gradient
 * norm; plus one card per tag matching the user's regex, grouped by the prefix before the first
 * '/'. Every selected run is overlaid in its colour, all cards share the x cursor, and each card
 * marks the first step its health rules fired.
 */
#pragma once

#include <gtk/gtk.h>

#include "dw-chart-card.h"
#include "dw-store-reader.h"
#include "dw-store.h"

G_BEGIN_DECLS

#define DW_TYPE_MONITOR_VIEW (dw_monitor_view_get_type ())
G_DECLARE_FINAL_TYPE (DwMonitorView, dw_monitor_view, DW, MONITOR_VIEW, GtkWidget)

GtkWidget *dw_monitor_view_new (void);

void dw_monitor_view_set_store (DwMonitorView *self, DwStore *store);
/* The session's store (main thread) and the reader its first loads go through. */
void dw_monitor_view_set_reader (DwMonitorView *self, DwStore *store, DwStoreReader *reader);
/* Shows @runs (DwRunInfo*, copied), reading their series from the store. */
void dw_monitor_view_set_runs (DwMonitorView *self, GPtrArray *runs);
guint dw_monitor_view_get_n_runs (DwMonitorView *self);
/* Health events (DwHealthEvent*, copied) of a shown run, marked on the charts at their first
 * step; they replace the run's previous events. */
void dw_monitor_view_set_events (DwMonitorView *self, gint64 run_id, GPtrArray *events);

/* Appends the points stored since the last read for every shown run (a live run grew) without
 * re-reading nor re-summarising what is shown. Returns the number of new points. */
gsize dw_monitor_view_refresh (DwMonitorView *self);

/* Shows @step: zooms every chart around it and puts the shared cursor on it. */
void dw_monitor_view_show_step (DwMonitorView *self, gint64 step);

/* Adds a card for every tag of the shown runs matching @regex (case-insensitive; NULL or "" for
 * none). FALSE with @error for an invalid expression (the entry shows the error too). */
gboolean dw_monitor_view_set_tag_filter (DwMonitorView *self, const char *regex, GError **error);

double dw_monitor_view_get_smoothing (DwMonitorView *self);
void dw_monitor_view_set_smoothing (DwMonitorView *self, double smoothing);
DwXMode dw_monitor_view_get_x_mode (DwMonitorView *self);
void dw_monitor_view_set_x_mode (DwMonitorView *self, DwXMode mode);

/* The card the pointer was last over (what Ctrl+L and Ctrl+E act on), else the first one. */
DwChartCard *dw_monitor_view_get_current_card (DwMonitorView *self);
void dw_monitor_view_reset_zoom (DwMonitorView *self);
void dw_monitor_view_focus_tag_entry (DwMonitorView *self);

/* Cards in display order (DwChartCard*, transfer container), and by id ("is_mean", "tag:NAME"). */
GPtrArray *dw_monitor_view_get_cards (DwMonitorView *self);
DwChartCard *dw_monitor_view_find_card (DwMonitorView *self, const char *id);
/* TRUE while the shown runs' series are being read ("loading" property). */
gboolean dw_monitor_view_is_loading (DwMonitorView *self);
/* Points currently plotted over all cards (for start-up readiness and tests). */
gsize dw_monitor_view_get_n_points (DwMonitorView *self);

G_END_DECLS
