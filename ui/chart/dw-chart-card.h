/* dw-chart-card.h — a DwChart with its title, scale toggle, zoom reset and export menu
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <gtk/gtk.h>

#include "dw-chart.h"

G_BEGIN_DECLS

#define DW_TYPE_CHART_CARD (dw_chart_card_get_type ())
G_DECLARE_FINAL_TYPE (DwChartCard, dw_chart_card, DW, CHART_CARD, GtkWidget)

GtkWidget *dw_chart_card_new (const char *id, const char *title, const char *subtitle);

const char *dw_chart_card_get_id (DwChartCard *self);
const char *dw_chart_card_get_title (DwChartCard *self);
DwChart *dw_chart_card_get_chart (DwChartCard *self);
gboolean dw_chart_card_get_log_y (DwChartCard *self);
void dw_chart_card_set_log_y (DwChartCard *self, gboolean log_y);
/* Text shown over the chart while it has no data (NULL: none). */
void dw_chart_card_set_empty_text (DwChartCard *self, const char *text);

/* The "Set Y Range…" popover and its two entries (tests fill them as a person would). */
GtkWidget *dw_chart_card_get_range_popover (DwChartCard *self);
void dw_chart_card_get_range_entries (DwChartCard *self, GtkEditable **minimum,
                                      GtkEditable **maximum);
/* The "Enlarge" window while it is open, else NULL. */
GtkWindow *dw_chart_card_get_enlarged (DwChartCard *self);

/* What the export menu items do once a file is chosen: @format is "png", "svg", "pdf" or "csv". */
/* The file name the export dialog proposes: the run (and how many more are overlaid), the
 * card's title, @format ("demo-collapse-KL-rollout-training.png"). */
char *dw_chart_card_dup_export_name (DwChartCard *self, const char *format);
gboolean dw_chart_card_export (DwChartCard *self, const char *path, const char *format,
                               GError **error);

G_END_DECLS
