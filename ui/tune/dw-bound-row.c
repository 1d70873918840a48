/* dw-bound-row.c — one bound of the correction config: a log-scale slider and an exact entry
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-bound-row"

#include "config.h"

#include <math.h>

#include "dw-bound-row.h"

#include "dw-correction.h"
#include "dw-wheel-guard.h"

struct _DwBoundRow
{
  GtkWidget parent_instance;

  /* template */
  GtkWidget *box;
  GtkLabel *title_label;
  GtkEntry *entry;
  GtkScale *scale;
  GtkAdjustment *adjustment;
  GtkLabel *error_label; /* why the typed value was refused, in verl's (Python's) words */

  double value;
  gboolean syncing;
  DwBoundRowCheck check;
  gpointer check_data;
};

G_DEFINE_FINAL_TYPE (DwBoundRow, dw_bound_row, GTK_TYPE_WIDGET)

enum
{
  SIGNAL_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static char *
dw_bound_row_format (double value)
{
  char buffer[64];
  return g_strdup (dw_python_float_repr (value, buffer, sizeof buffer));
}

static double
dw_bound_row_round_significant (double value)
{
  char buffer[32];
  g_snprintf (buffer, sizeof buffer, "%.3g", value);
  return g_ascii_strtod (buffer, NULL);
}

static void
dw_bound_row_set_error (DwBoundRow *self, const char *message)
{
  if (message != NULL)
    gtk_widget_add_css_class (GTK_WIDGET (self->entry), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->entry), "error");
  gtk_label_set_text (self->error_label, message ? message : "");
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), message != NULL);
}

/* the slider at @value (a bound ≤ 0 or not finite leaves it where it is) */
static void
dw_bound_row_move_slider (DwBoundRow *self, double value)
{
  if (value > 0 && isfinite (value))
    gtk_adjustment_set_value (self->adjustment,
                              CLAMP (log10 (value), gtk_adjustment_get_lower (self->adjustment),
                                     gtk_adjustment_get_upper (self->adjustment)));
}

static void
dw_bound_row_show (DwBoundRow *self)
{
  g_autofree char *text = dw_bound_row_format (self->value);

  self->syncing = TRUE;
  gtk_editable_set_text (GTK_EDITABLE (self->entry), text);
  dw_bound_row_set_error (self, NULL);
  dw_bound_row_move_slider (self, self->value);
  self->syncing = FALSE;
}

static void
dw_bound_row_adjustment_changed_cb (GtkAdjustment *adjustment, DwBoundRow *self)
{
  g_autofree char *text = NULL;

  if (self->syncing)
    return;
  self->value = dw_bound_row_round_significant (pow (10.0, gtk_adjustment_get_value (adjustment)));
  text = dw_bound_row_format (self->value);
  self->syncing = TRUE;
  gtk_editable_set_text (GTK_EDITABLE (self->entry), text);
  dw_bound_row_set_error (self, NULL);
  self->syncing = FALSE;
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

static void
dw_bound_row_entry_activate_cb (GtkEntry *entry, DwBoundRow *self)
{
  double value;
  const char *text = gtk_editable_get_text (GTK_EDITABLE (entry));
  g_autofree char *refused = NULL;

  /* Python's float(), as verl reads the value; the message is the one Python gives */
  if (!dw_python_float (text, &value))
    refused = g_strdup_printf ("ValueError: could not convert string to float: '%s'", text);
  else if (self->check != NULL)
    refused = self->check (self, value, self->check_data);
  if (refused != NULL)
    {
      dw_bound_row_set_error (self, refused);
      return;
    }

  dw_bound_row_set_error (self, NULL);
  self->value = value;
  self->syncing = TRUE;
  dw_bound_row_move_slider (self, value);
  self->syncing = FALSE;
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

static void
dw_bound_row_focus_leave_cb (GtkEventControllerFocus *focus, DwBoundRow *self)
{
  double value;

  if (dw_python_float (gtk_editable_get_text (GTK_EDITABLE (self->entry)), &value)
      && value == self->value)
    return;
  dw_bound_row_entry_activate_cb (self->entry, self);
}

static void
dw_bound_row_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), DW_TYPE_BOUND_ROW);
  G_OBJECT_CLASS (dw_bound_row_parent_class)->dispose (object);
}

static void
dw_bound_row_class_init (DwBoundRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = dw_bound_row_dispose;

  /**
   * DwBoundRow::changed:
   *
   * The user took a new value (dragged the slider, or typed one the check accepted).
   */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PATH "/dw-bound-row.ui");
  gtk_widget_class_bind_template_child (widget_class, DwBoundRow, box);
  gtk_widget_class_bind_template_child (widget_class, DwBoundRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, DwBoundRow, entry);
  gtk_widget_class_bind_template_child (widget_class, DwBoundRow, scale);
  gtk_widget_class_bind_template_child (widget_class, DwBoundRow, adjustment);
  gtk_widget_class_bind_template_child (widget_class, DwBoundRow, error_label);
  gtk_widget_class_bind_template_callback (widget_class, dw_bound_row_adjustment_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, dw_bound_row_entry_activate_cb);
}

static void
dw_bound_row_init (DwBoundRow *self)
{
  GtkEventController *focus = gtk_event_controller_focus_new ();

  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_connect (focus, "leave", G_CALLBACK (dw_bound_row_focus_leave_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self->entry), focus);
  /* the wheel scrolls the page: a slider passing under the pointer must not change the config */
  dw_wheel_guard_attach (GTK_WIDGET (self->scale));
}

GtkWidget *
dw_bound_row_new (const char *name, const char *title, double lower, double upper, double value)
{
  DwBoundRow *self = g_object_new (DW_TYPE_BOUND_ROW, NULL);
  g_autofree char *entry_name = g_strdup_printf ("bound-%s", name);
  g_autofree char *scale_name = g_strdup_printf ("scale-%s", name);
  g_autofree char *error_name = g_strdup_printf ("error-%s", name);

  gtk_label_set_text (self->title_label, title);
  gtk_widget_set_name (GTK_WIDGET (self->entry), entry_name);
  gtk_widget_set_name (GTK_WIDGET (self->scale), scale_name);
  gtk_widget_set_name (GTK_WIDGET (self->error_label), error_name);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->entry), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  title, -1);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->scale), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  title, -1);

  self->syncing = TRUE;
  gtk_adjustment_configure (self->adjustment, log10 (CLAMP (value, lower, upper)), log10 (lower),
                            log10 (upper), 0.01, 0.1, 0);
  self->syncing = FALSE;
  self->value = value;
  dw_bound_row_show (self);
  return GTK_WIDGET (self);
}

double
dw_bound_row_get_value (DwBoundRow *self)
{
  g_return_val_if_fail (DW_IS_BOUND_ROW (self), NAN);
  return self->value;
}

void
dw_bound_row_set_value (DwBoundRow *self, double value)
{
  g_return_if_fail (DW_IS_BOUND_ROW (self));
  self->value = value;
  dw_bound_row_show (self);
}

void
dw_bound_row_set_check_func (DwBoundRow *self, DwBoundRowCheck check, gpointer user_data)
{
  g_return_if_fail (DW_IS_BOUND_ROW (self));
  self->check = check;
  self->check_data = user_data;
}
