/* dw-csv.h — CSV output shared by driftwatch-cli and the chart export
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * RFC 4180 fields: a field holding a comma, a double quote, CR or LF is written in double quotes
 * with every double quote doubled; any other field as it is. Numbers at full resolution: the
 * shortest of %.15g…%.17g (C locale) that reads back as the same double, and nan, inf, -inf.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

void dw_csv_field (GString *out, const char *text);
void dw_csv_number (GString *out, double v);

G_END_DECLS
