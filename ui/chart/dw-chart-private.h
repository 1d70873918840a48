/* dw-chart-private.h — what the chart layers call back into
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include "dw-chart.h"
#include "dw-chart-layer.h"

G_BEGIN_DECLS

void _dw_chart_draw_data (DwChart *self, cairo_t *cr, int width, int height);
void _dw_chart_draw_overlay (DwChart *self, cairo_t *cr, int width, int height);
GtkWidget *_dw_chart_get_layer (DwChart *self, DwChartLayerKind kind);

G_END_DECLS
