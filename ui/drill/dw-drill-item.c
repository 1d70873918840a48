/* dw-drill-item.c — one row of the drill-down's lists
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include "dw-drill-item.h"

struct _DwDrillItem
{
  GObject parent_instance;

  guint rank;
  DwSeqRanked sequence;
  DwTokenRow token;
  DwCatastrophicToken catastrophic; /* steps and counts owned */
  gint64 token_id;
  char *text;
};

G_DEFINE_FINAL_TYPE (DwDrillItem, dw_drill_item, G_TYPE_OBJECT)

static void
dw_drill_item_finalize (GObject *object)
{
  DwDrillItem *self = DW_DRILL_ITEM (object);

  g_clear_pointer (&self->catastrophic.steps, g_array_unref);
  g_clear_pointer (&self->catastrophic.counts, g_array_unref);
  g_free (self->text);
  G_OBJECT_CLASS (dw_drill_item_parent_class)->finalize (object);
}

static void
dw_drill_item_class_init (DwDrillItemClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = dw_drill_item_finalize;
}

static void
dw_drill_item_init (DwDrillItem *self)
{
  self->token_id = -1;
}

DwDrillItem *
dw_drill_item_new_sequence (const DwSeqRanked *sequence, guint rank)
{
  DwDrillItem *self = g_object_new (DW_TYPE_DRILL_ITEM, NULL);

  self->sequence = *sequence;
  self->rank = rank;
  return self;
}

DwDrillItem *
dw_drill_item_new_token (const DwTokenRow *token, const char *text)
{
  DwDrillItem *self = g_object_new (DW_TYPE_DRILL_ITEM, NULL);

  self->token = *token;
  self->token_id = token->token_id;
  self->text = g_strdup (text);
  return self;
}

DwDrillItem *
dw_drill_item_new_catastrophic (const DwCatastrophicToken *token, const char *text)
{
  DwDrillItem *self = g_object_new (DW_TYPE_DRILL_ITEM, NULL);

  self->catastrophic.token_id = token->token_id;
  self->catastrophic.count = token->count;
  self->catastrophic.steps = g_array_copy (token->steps);
  self->catastrophic.counts = g_array_copy (token->counts);
  self->token_id = token->token_id;
  self->text = g_strdup (text);
  return self;
}

guint
dw_drill_item_get_row (DwDrillItem *self)
{
  g_return_val_if_fail (DW_IS_DRILL_ITEM (self), 0);
  return self->sequence.row;
}

guint
dw_drill_item_get_rank (DwDrillItem *self)
{
  g_return_val_if_fail (DW_IS_DRILL_ITEM (self), 0);
  return self->rank;
}

double
dw_drill_item_get_stat (DwDrillItem *self, DwSeqStat stat)
{
  g_return_val_if_fail (DW_IS_DRILL_ITEM (self) && stat < DW_N_SEQ_STATS, 0.0);
  return self->sequence.stats[stat];
}

const DwTokenRow *
dw_drill_item_get_token (DwDrillItem *self)
{
  g_return_val_if_fail (DW_IS_DRILL_ITEM (self), NULL);
  return &self->token;
}

gint64
dw_drill_item_get_token_id (DwDrillItem *self)
{
  g_return_val_if_fail (DW_IS_DRILL_ITEM (self), -1);
  return self->token_id;
}

const char *
dw_drill_item_get_text (DwDrillItem *self)
{
  g_return_val_if_fail (DW_IS_DRILL_ITEM (self), NULL);
  return self->text;
}

guint64
dw_drill_item_get_count (DwDrillItem *self)
{
  g_return_val_if_fail (DW_IS_DRILL_ITEM (self), 0);
  return self->catastrophic.count;
}

const DwCatastrophicToken *
dw_drill_item_get_catastrophic (DwDrillItem *self)
{
  g_return_val_if_fail (DW_IS_DRILL_ITEM (self), NULL);
  return &self->catastrophic;
}
