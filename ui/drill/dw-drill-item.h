/* dw-drill-item.h — one row of the drill-down's lists: a sequence, a token or a token id
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The items of the three GListModels DwDrillView shows: a ranked sequence (DwSeqRanked), a token
 * of one sequence (DwTokenRow, with its text when a tokenizer is known) and a token id behind
 * catastrophic ratios across the run (DwCatastrophicToken). The values are the core's
 * (dw-batch-tokens.h), copied as they are.
 */
#pragma once

#include <glib-object.h>

#include "dw-batch-tokens.h"

G_BEGIN_DECLS

#define DW_TYPE_DRILL_ITEM (dw_drill_item_get_type ())
G_DECLARE_FINAL_TYPE (DwDrillItem, dw_drill_item, DW, DRILL_ITEM, GObject)

DwDrillItem *dw_drill_item_new_sequence (const DwSeqRanked *sequence, guint rank);
/* @text: the token's printable text, NULL when no tokenizer knows it */
DwDrillItem *dw_drill_item_new_token (const DwTokenRow *token, const char *text);
DwDrillItem *dw_drill_item_new_catastrophic (const DwCatastrophicToken *token, const char *text);

/* Sequences: the row in the batch, its rank (0 = first), a statistic. */
guint dw_drill_item_get_row (DwDrillItem *self);
guint dw_drill_item_get_rank (DwDrillItem *self);
double dw_drill_item_get_stat (DwDrillItem *self, DwSeqStat stat);
/* Tokens: the core's row. */
const DwTokenRow *dw_drill_item_get_token (DwDrillItem *self);
/* Tokens and catastrophic ids: the id (-1 when unknown) and text (NULL when unknown). */
gint64 dw_drill_item_get_token_id (DwDrillItem *self);
const char *dw_drill_item_get_text (DwDrillItem *self);
/* Catastrophic ids: the count over the run, and the steps with their counts. */
guint64 dw_drill_item_get_count (DwDrillItem *self);
const DwCatastrophicToken *dw_drill_item_get_catastrophic (DwDrillItem *self);

G_END_DECLS
