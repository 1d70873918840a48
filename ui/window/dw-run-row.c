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

struct _DwRunRow
{
  GtkListBoxRow parent_instance;

  GtkDrawingArea *swatch;
  GtkLabel *name_label;
  GtkLabel *detail_label;
  GtkLabel *state_label;
  GtkImage *warning_icon;

  DwRunInfo *info;
  GdkRGBA color;
  guint n_warnings;
  guint n_critical;
  guint n_at_end;
};

G_DEFINE_FINAL_TYPE (DwRunRow, dw_run_row, GTK_TYPE_LIST_BOX_ROW)

/* GNOME palette shades that read on light and dark backgrounds and stay clear of the meaning
 * colours: green (good, the healthy band), yellow/amber/orange (warning) and red (error) are
 * never a run's colour. Blues, purples, pink, brown, teal and grey only. */
static const char *const palette[] = {
  "#3584e4", "#9141ac", "#2190a4", "#c061cb", "#986a44", "#1a5fb4", "#613583", "#5e5c64",
};

void
dw_run_color (gint64 run_id, GdkRGBA *color)
{
  guint i = (guint)(((run_id > 0 ? run_id : 1) - 1) % G_N_ELEMENTS (palette));

  gdk_rgba_parse (color, palette[i]);
}

DwRunInfo *
dw_run_info_copy (const DwRunInfo *info)
{
  DwRunInfo *copy = g_new0 (DwRunInfo, 1);

  *copy = *info;
  copy->name = g_strdup (info->name);
  copy->framework = g_strdup (info->framework);
  copy->source = g_strdup (info->source);
  return copy;
}

static void
draw_swatch (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  DwRunRow *self = user_data;
  double r = MIN (width, height) / 2.0;

  gdk_cairo_set_source_rgba (cr, &self->color);
  cairo_arc (cr, width / 2.0, height / 2.0, r, 0, 2 * G_PI);
  cairo_fill (cr);
}

static void
dw_run_row_finalize (GObject *object)
{
  DwRunRow *self = DW_RUN_ROW (object);

  g_clear_pointer (&self->info, dw_run_info_free);
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
}

static void
dw_run_row_init (DwRunRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_drawing_area_set_draw_func (self->swatch, draw_swatch, self, NULL);
}

GtkWidget *
dw_run_row_new (const DwRunInfo *info, const GdkRGBA *color)
{
  DwRunRow *self;

  g_return_val_if_fail (info != NULL, NULL);
  self = g_object_new (DW_TYPE_RUN_ROW, NULL);
  if (color != NULL)
    self->color = *color;
  else
    dw_run_color (info->id, &self->color);
  dw_run_row_update (self, info);
  return GTK_WIDGET (self);
}

gint64
dw_run_row_get_run_id (DwRunRow *self)
{
  g_return_val_if_fail (DW_IS_RUN_ROW (self), 0);
  return self->info->id;
}

const DwRunInfo *
dw_run_row_get_info (DwRunRow *self)
{
  g_return_val_if_fail (DW_IS_RUN_ROW (self), NULL);
  return self->info;
}

void
dw_run_row_get_color (DwRunRow *self, GdkRGBA *color)
{
  g_return_if_fail (DW_IS_RUN_ROW (self));
  *color = self->color;
}

void
dw_run_row_update (DwRunRow *self, const DwRunInfo *info)
{
  static const char *const state_classes[] = { "finished", "live", "collapsed" };
  g_autofree char *detail = NULL;
  const char *state;
  DwRunStatus status;

  g_return_if_fail (DW_IS_RUN_ROW (self));
  g_clear_pointer (&self->info, dw_run_info_free);
  self->info = dw_run_info_copy (info);

  gtk_label_set_label (self->name_label, info->name);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->name_label), info->source);
  if (info->last_step >= info->first_step)
    /* TRANSLATORS: sidebar run details: framework, number of the last logged step */
    detail = g_strdup_printf (_ ("%s · step %" PRId64), info->framework, info->last_step);
  else
    detail = g_strdup (info->framework);
  gtk_label_set_label (self->detail_label, detail);

  status = info->status;
  /* A finished run on which a critical rule fired (NaN, …), or that ended with health rules
   * still firing (its training went off and never came back), is shown as collapsed. */
  status = dw_health_shown_status (status, self->n_critical, self->n_at_end);
  switch (status)
    {
    case DW_RUN_STATUS_LIVE:
      /* A run still being written on which a critical rule fired: say so now, not when it
       * ends (`driftwatch-cli runs` says "live" until then). */
      if (self->n_critical > 0)
        {
          /* TRANSLATORS: run state in the sidebar: still written, a critical rule fired */
          state = _ ("live · collapsed");
          status = DW_RUN_STATUS_COLLAPSED;
          break;
        }
      /* TRANSLATORS: run state in the sidebar */
      state = _ ("live");
      break;
    case DW_RUN_STATUS_COLLAPSED:
      /* TRANSLATORS: run state in the sidebar: a critical health rule fired */
      state = _ ("collapsed");
      break;
    case DW_RUN_STATUS_COLLAPSING:
      /* TRANSLATORS: run state in the sidebar: still written, and a critical rule fired */
      state = _ ("collapsing");
      break;
    case DW_RUN_STATUS_FINISHED:
    default:
      /* TRANSLATORS: run state in the sidebar */
      state = _ ("finished");
      break;
    }
  gtk_label_set_label (self->state_label, state);
  if (status == DW_RUN_STATUS_COLLAPSED && info->status == DW_RUN_STATUS_LIVE)
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->state_label),
                                 _ ("A critical health rule fired on this run while it is still "
                                    "being written"));
  else if (status == DW_RUN_STATUS_COLLAPSED && self->n_at_end > 0)
    {
      g_autofree char *why = g_strdup_printf (
        /* TRANSLATORS: tooltip of the "collapsed" badge of a run in the sidebar */
        ngettext ("%u health rule was still firing at the end of the run",
                  "%u health rules were still firing at the end of the run", self->n_at_end),
        self->n_at_end);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->state_label), why);
    }
  else if (status == DW_RUN_STATUS_COLLAPSED)
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->state_label),
                                 _ ("A critical health rule fired on this run"));
  else if (status == DW_RUN_STATUS_COLLAPSING)
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->state_label),
                                 _ ("Still being written, and a critical health rule fired"));
  else
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->state_label), NULL);
  for (guint i = 0; i < G_N_ELEMENTS (state_classes); i++)
    gtk_widget_remove_css_class (GTK_WIDGET (self->state_label), state_classes[i]);
  /* collapsing is drawn as collapsed (the error style) */
  gtk_widget_add_css_class (GTK_WIDGET (self->state_label),
                            state_classes[CLAMP ((int)status, 0, 2)]);
  gtk_widget_queue_draw (GTK_WIDGET (self->swatch));
}

const char *
dw_run_row_get_state_text (DwRunRow *self)
{
  g_return_val_if_fail (DW_IS_RUN_ROW (self), NULL);
  return gtk_label_get_label (self->state_label);
}

void
dw_run_row_set_health (DwRunRow *self, guint n_warnings, guint n_critical, guint n_at_end)
{
  g_autofree char *tooltip = NULL;
  g_autoptr (DwRunInfo) info = NULL;

  g_return_if_fail (DW_IS_RUN_ROW (self));
  self->n_warnings = n_warnings;
  self->n_critical = n_critical;
  self->n_at_end = n_at_end;
  if (n_warnings + n_critical > 0)
    tooltip = g_strdup_printf (
      /* TRANSLATORS: tooltip of the warning icon of a run in the sidebar */
      ngettext ("%u health warning", "%u health warnings", n_warnings + n_critical),
      n_warnings + n_critical);
  gtk_widget_set_visible (GTK_WIDGET (self->warning_icon), n_warnings + n_critical > 0);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->warning_icon), tooltip);
  info = dw_run_info_copy (self->info);
  dw_run_row_update (self, info);
}
