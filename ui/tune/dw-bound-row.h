/* dw-bound-row.h — one bound of the correction config: a log-scale slider and an exact entry
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The entry reads what it is given as Python's float() reads it (verl's own parsing) and the
 * slider moves in log10 steps, rounded to three significant digits. A value typed or dragged is
 * first offered to the check function (what the trainer would raise for it): a refusal is shown
 * under the entry in the trainer's words and the value is not taken. "changed" is emitted for a
 * value the user took, never for dw_bound_row_set_value(). The wheel scrolls the page, never the
 * slider (dw-wheel-guard.h).
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define DW_TYPE_BOUND_ROW (dw_bound_row_get_type ())
G_DECLARE_FINAL_TYPE (DwBoundRow, dw_bound_row, DW, BOUND_ROW, GtkWidget)

/* What the trainer would raise with @value in @row (a new string), or NULL when it accepts it. */
typedef char *(*DwBoundRowCheck) (DwBoundRow *row, double value, gpointer user_data);

/* @name: widget name suffix for tests ("bound-NAME" entry, "scale-NAME" slider, "error-NAME" the
 * refusal under the entry); the slider spans [@lower, @upper] on a log scale. */
GtkWidget *dw_bound_row_new (const char *name, const char *title, double lower, double upper,
                             double value);

double dw_bound_row_get_value (DwBoundRow *self);
/* Shows @value (entry and slider) without emitting "changed"; clears a shown refusal. */
void dw_bound_row_set_value (DwBoundRow *self, double value);
void dw_bound_row_set_check_func (DwBoundRow *self, DwBoundRowCheck check, gpointer user_data);

G_END_DECLS
