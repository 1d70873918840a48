/* dw-run-row.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-run-row"

#include "config.h"

#include <inttypes.h>

#include <glib/gi18n.h>

#include "dw-health.h"
#include "dw-run-row.h"

#include "dw-run-color.h"

struct _DwRunRow
{
  GtkListBoxRow parent_instance;

  GtkDrawingArea *swatch;
  GtkLabel *name_label;
  GtkLabel *detail_label;
  GtkLabel *state_label;
  GtkImage *warning_icon;
  GtkToggleButton *visible_button;
  GtkMenuButton *menu_button;

  DwRunItem *item;
  GdkRGBA color;
};

G_DEFINE_FINAL_TYPE (DwRunRow, dw_run_row, GTK_TYPE_LIST_BOX_ROW)

static void
draw_swatch (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  DwRunRow *self = user_data;
  double r = MIN (width, height) / 2.0;

  gdk_cairo_set_source_rgba (cr, &self->color);
  cairo_arc (cr, width / 2.0, height / 2.0, r, 0, 2 * G_PI);
  cairo_fill (cr);
}

/* The eye button: the run is drawn on the charts or not; the selection stays as it is. */
static void
dw_run_row_visible_toggled_cb (GtkToggleButton *button, DwRunRow *self)
{
  gboolean visible = gtk_toggle_button_get_active (button);

  gtk_button_set_icon_name (GTK_BUTTON (button),
                            visible ? "view-reveal-symbolic" : "view-conceal-symbolic");
  gtk_widget_set_tooltip_text (GTK_WIDGET (button),
                               visible ? _ ("Hide from Charts") : _ ("Show on Charts"));
}

/* The row's menu acts on its run through the window's actions (target: the run id). */
static GMenuModel *
dw_run_row_build_menu (gint64 run_id)
{
  GMenu *menu = g_menu_new ();
  g_autoptr (GMenuItem) hide = NULL, remove = NULL;

  hide = g_menu_item_new (_ ("_Hide Run"), NULL);
  g_menu_item_set_action_and_target_value (hide, "win.hide-run", g_variant_new_int64 (run_id));
  g_menu_append_item (menu, hide);
  remove = g_menu_item_new (_ ("_Remove Run…"), NULL);
  g_menu_item_set_action_and_target_value (remove, "win.remove-run", g_variant_new_int64 (run_id));
  g_menu_append_item (menu, remove);
  return G_MENU_MODEL (menu);
}

static void
dw_run_row_finalize (GObject *object)
{
  DwRunRow *self = DW_RUN_ROW (object);

  g_clear_object (&self->item);
  G_OBJECT_CLASS (dw_run_row_parent_class)->finalize (object);
}

static void
dw_run_row_class_init (DwRunRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = dw_run_row_finalize;
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PATH "/dw-run-row.ui");
  gtk_widget_class_bind_template_child (widget_class, DwRunRow, swatch);
  gtk_widget_class_bind_template_child (widget_class, DwRunRow, name_label);
  gtk_widget_class_bind_template_child (widget_class, DwRunRow, detail_label);
  gtk_widget_class_bind_template_child (widget_class, DwRunRow, state_label);
  gtk_widget_class_bind_template_child (widget_class, DwRunRow, warning_icon);
  gtk_widget_class_bind_template_child (widget_class, DwRunRow, visible_button);
  gtk_widget_class_bind_template_child (widget_class, DwRunRow, menu_button);
  gtk_widget_class_bind_template_callback (widget_class, dw_run_row_visible_toggled_cb);
}

static void
dw_run_row_init (DwRunRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_drawing_area_set_draw_func (self->swatch, draw_swatch, self, NULL);
}

/* The item's information and health into the row: the badge says "collapsed" by the same rule
 * as `driftwatch-cli runs` (dw_health_shown_status) as soon as the rules have run. */
static void
dw_run_row_update_health (DwRunRow *self)
{
  g_autofree char *tooltip = NULL;
  guint n_warnings, n_critical, n_at_end;

  dw_run_item_get_health (self->item, &n_warnings, &n_critical, &n_at_end);
  if (n_warnings + n_critical > 0)
    tooltip = g_strdup_printf (
      /* TRANSLATORS: tooltip of the warning icon of a run in the sidebar */
      ngettext ("%u health warning", "%u health warnings", n_warnings + n_critical),
      n_warnings + n_critical);
  gtk_widget_set_visible (GTK_WIDGET (self->warning_icon), n_warnings + n_critical > 0);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->warning_icon), tooltip);
}

/* The state badge's text and the tooltip saying why. */
static const char *
dw_run_row_state (DwRunRow *self, DwRunStatus *status, char **why)
{
  const DwRunInfo *info = dw_run_item_get_info (self->item);
  guint n_critical, n_at_end;

  dw_run_item_get_health (self->item, NULL, &n_critical, &n_at_end);
  /* A finished run on which a critical rule fired (NaN, …), or that ended with health rules
   * still firing (its training went off and never came back), is shown as collapsed. */
  *status = dw_run_item_get_status (self->item);
  *why = NULL;
  switch (*status)
    {
    case DW_RUN_STATUS_LIVE:
      /* A run still being written on which a critical rule fired: say so now, not when it
       * ends (`driftwatch-cli runs` says "live" until then). */
      if (n_critical > 0)
        {
          *status = DW_RUN_STATUS_COLLAPSED;
          *why = g_strdup (_ ("A critical health rule fired on this run while it is still "
                              "being written"));
          /* TRANSLATORS: run state in the sidebar: still written, a critical rule fired */
          return _ ("live · collapsed");
        }
      /* TRANSLATORS: run state in the sidebar */
      return _ ("live");
    case DW_RUN_STATUS_COLLAPSED:
      if (info->status == DW_RUN_STATUS_LIVE)
        *why = g_strdup (_ ("A critical health rule fired on this run while it is still "
                            "being written"));
      else if (n_at_end > 0)
        *why = g_strdup_printf (
          /* TRANSLATORS: tooltip of the "collapsed" badge of a run in the sidebar */
          ngettext ("%u health rule was still firing at the end of the run",
                    "%u health rules were still firing at the end of the run", n_at_end),
          n_at_end);
      else
        *why = g_strdup (_ ("A critical health rule fired on this run"));
      /* TRANSLATORS: run state in the sidebar: a critical health rule fired */
      return _ ("collapsed");
    case DW_RUN_STATUS_COLLAPSING:
      *why = g_strdup (_ ("Still being written, and a critical health rule fired"));
      /* TRANSLATORS: run state in the sidebar: still written, and a critical rule fired */
      return _ ("collapsing");
    case DW_RUN_STATUS_FINISHED:
    default:
      /* TRANSLATORS: run state in the sidebar */
      return _ ("finished");
    }
}

static void
dw_run_row_update (DwRunRow *self)
{
  static const char *const state_classes[] = { "finished", "live", "collapsed" };
  const DwRunInfo *info = dw_run_item_get_info (self->item);
  g_autofree char *detail = NULL, *why = NULL;
  DwRunStatus status;
  const char *state;

  gtk_label_set_label (self->name_label, info->name);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->name_label), info->source);
  if (info->last_step >= info->first_step)
    /* TRANSLATORS: sidebar run details: framework, number of the last logged step */
    detail = g_strdup_printf (_ ("%s · step %" PRId64), info->framework, info->last_step);
  else
    detail = g_strdup (info->framework);
  gtk_label_set_label (self->detail_label, detail);

  dw_run_row_update_health (self);
  state = dw_run_row_state (self, &status, &why);
  gtk_label_set_label (self->state_label, state);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->state_label), why);
  for (guint i = 0; i < G_N_ELEMENTS (state_classes); i++)
    gtk_widget_remove_css_class (GTK_WIDGET (self->state_label), state_classes[i]);
  /* collapsing is drawn as collapsed (the error style) */
  gtk_widget_add_css_class (GTK_WIDGET (self->state_label),
                            state_classes[CLAMP ((int)status, 0, 2)]);
  gtk_widget_queue_draw (GTK_WIDGET (self->swatch));
}

GtkWidget *
dw_run_row_new (DwRunItem *item)
{
  g_autoptr (GMenuModel) menu = NULL;
  DwRunRow *self;

  g_return_val_if_fail (DW_IS_RUN_ITEM (item), NULL);
  self = g_object_new (DW_TYPE_RUN_ROW, NULL);
  menu = dw_run_row_build_menu (dw_run_item_get_id (item));
  self->item = g_object_ref (item);
  dw_run_color (dw_run_item_get_id (item), &self->color);
  gtk_menu_button_set_menu_model (self->menu_button, menu);
  g_object_bind_property (item, "visible", self->visible_button, "active",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_signal_connect_object (item, "changed", G_CALLBACK (dw_run_row_update), self,
                           G_CONNECT_SWAPPED);
  dw_run_row_update (self);
  return GTK_WIDGET (self);
}

DwRunItem *
dw_run_row_get_item (DwRunRow *self)
{
  g_return_val_if_fail (DW_IS_RUN_ROW (self), NULL);
  return self->item;
}

gint64
dw_run_row_get_run_id (DwRunRow *self)
{
  g_return_val_if_fail (DW_IS_RUN_ROW (self), 0);
  return dw_run_item_get_id (self->item);
}

const DwRunInfo *
dw_run_row_get_info (DwRunRow *self)
{
  g_return_val_if_fail (DW_IS_RUN_ROW (self), NULL);
  return dw_run_item_get_info (self->item);
}

void
dw_run_row_get_color (DwRunRow *self, GdkRGBA *color)
{
  g_return_if_fail (DW_IS_RUN_ROW (self));
  *color = self->color;
}

const char *
dw_run_row_get_state_text (DwRunRow *self)
{
  g_return_val_if_fail (DW_IS_RUN_ROW (self), NULL);
  return gtk_label_get_label (self->state_label);
}
