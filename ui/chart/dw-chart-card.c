/* dw-chart-card.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart-card"

#include "config.h"

#include <adwaita.h>
#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "dw-chart-card.h"

#define EXPORT_WIDTH  1200
#define EXPORT_HEIGHT 700

struct _DwChartCard
{
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkLabel *title_label;
  GtkLabel *subtitle_label;
  GtkMenuButton *menu_button;
  DwChart *chart;
  GtkLabel *empty_label;
  GtkWidget *range_popover; /* "Set Y Range…": min and max entries, Apply and Reset */
  GtkEditable *range_min;
  GtkEditable *range_max;
  GtkWidget *enlarged; /* the "Enlarge" window while it is open (weak) */

  char *id;
};

G_DEFINE_FINAL_TYPE (DwChartCard, dw_chart_card, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_LOG_Y,
  PROP_Y_SCALE,
  PROP_FOLLOW_LATEST,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
show_error (DwChartCard *self, const GError *error)
{
  GtkWidget *overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);

  /* toast titles are markup in libadwaita 1.2: a path with & or < must show as written */
  g_autofree char *markup = g_markup_escape_text (error->message, -1);

  if (overlay != NULL)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), adw_toast_new (markup));
  else
    g_warning ("%s", error->message);
}

gboolean
dw_chart_card_export (DwChartCard *self, const char *path, const char *format, GError **error)
{
  g_return_val_if_fail (DW_IS_CHART_CARD (self), FALSE);
  g_return_val_if_fail (path != NULL && format != NULL, FALSE);

  if (g_str_equal (format, "csv"))
    return dw_chart_export_csv (self->chart, path, error);
  if (g_str_equal (format, "png"))
    return dw_chart_export (self->chart, path, DW_EXPORT_PNG, EXPORT_WIDTH, EXPORT_HEIGHT, error);
  if (g_str_equal (format, "svg"))
    return dw_chart_export (self->chart, path, DW_EXPORT_SVG, EXPORT_WIDTH, EXPORT_HEIGHT, error);
  if (g_str_equal (format, "pdf"))
    return dw_chart_export (self->chart, path, DW_EXPORT_PDF, EXPORT_WIDTH, EXPORT_HEIGHT, error);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               /* TRANSLATORS: %s is a file format name given by a program, e.g. "png" */
               _ ("Unknown export format “%s”"), format);
  return FALSE;
}

static void
on_export_response (GtkNativeDialog *dialog, int response, DwChartCard *self)
{
  const char *format = g_object_get_data (G_OBJECT (dialog), "dw-format");

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      g_autoptr (GError) error = NULL;

      if (path != NULL && !dw_chart_card_export (self, path, format, &error))
        show_error (self, error);
      else if (path != NULL)
        {
          GtkWidget *overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);
          g_autofree char *base = g_file_get_basename (file);
          /* TRANSLATORS: toast after a chart was exported; %s is the file name */
          g_autofree char *text = g_strdup_printf (_ ("Saved “%s”"), base);
          g_autofree char *markup = g_markup_escape_text (text, -1);

          if (overlay != NULL)
            adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), adw_toast_new (markup));
        }
    }
  gtk_native_dialog_destroy (dialog);
  g_object_unref (dialog);
  g_object_unref (self);
}

/* "run name" or "run-a+2" (several runs), a word a file system takes */
static void
append_file_word (GString *out, const char *text)
{
  for (const char *p = text; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (g_unichar_isalnum (c) || c == '.' || c == '_' || c == '-')
        g_string_append_unichar (out, c);
      else if (out->len > 0 && out->str[out->len - 1] != '-')
        g_string_append_c (out, '-');
    }
  while (out->len > 0 && out->str[out->len - 1] == '-')
    g_string_truncate (out, out->len - 1);
}

char *
dw_chart_card_dup_export_name (DwChartCard *self, const char *format)
{
  g_auto (GStrv) labels = dw_chart_dup_series_labels (self->chart);
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func (g_free);
  GString *name = g_string_new (NULL);

  g_return_val_if_fail (DW_IS_CHART_CARD (self), NULL);
  /* the runs drawn: labels are "run" or "run · metric" */
  for (guint i = 0; labels[i] != NULL; i++)
    {
      g_autofree char *run = g_strdup (labels[i]);
      char *dot = strstr (run, " · ");

      if (dot != NULL)
        *dot = '\0';
      if (!g_ptr_array_find_with_equal_func (runs, run, g_str_equal, NULL))
        g_ptr_array_add (runs, g_steal_pointer (&run));
    }
  if (runs->len > 0)
    {
      append_file_word (name, g_ptr_array_index (runs, 0));
      if (runs->len > 1)
        g_string_append_printf (name, "+%u", runs->len - 1);
      g_string_append_c (name, '-');
    }
  append_file_word (name, dw_chart_card_get_title (self));
  g_string_append_printf (name, ".%s", format);
  return g_string_free (name, FALSE);
}

static void
export_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwChartCard *self = DW_CHART_CARD (widget);
  const char *format = g_variant_get_string (parameter, NULL);
  GtkRoot *root = gtk_widget_get_root (widget);
  g_autofree char *name = NULL;
  GtkFileChooserNative *dialog;

  name = dw_chart_card_dup_export_name (self, format);
  dialog = gtk_file_chooser_native_new (g_str_equal (format, "csv") ? _ ("Export Chart Data")
                                                                    : _ ("Export Chart"),
                                        GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                        GTK_FILE_CHOOSER_ACTION_SAVE, _ ("_Export"), NULL);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), name);
  g_object_set_data_full (G_OBJECT (dialog), "dw-format", g_strdup (format), g_free);
  g_signal_connect (dialog, "response", G_CALLBACK (on_export_response), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* ---- Set Y Range… */

static gboolean
dw_chart_card_parse_range_entry (GtkEditable *entry, double *value)
{
  const char *text = gtk_editable_get_text (entry);
  char *end = NULL;

  *value = g_ascii_strtod (text, &end);
  if (end == text || *g_strchug ((char *)end) != '\0' || !isfinite (*value))
    {
      gtk_widget_add_css_class (GTK_WIDGET (entry), "error");
      return FALSE;
    }
  gtk_widget_remove_css_class (GTK_WIDGET (entry), "error");
  return TRUE;
}

static void
dw_chart_card_range_apply_cb (DwChartCard *self)
{
  double low, high;
  gboolean ok = dw_chart_card_parse_range_entry (self->range_min, &low);

  ok = dw_chart_card_parse_range_entry (self->range_max, &high) && ok;
  if (ok && !(high > low))
    {
      gtk_widget_add_css_class (GTK_WIDGET (self->range_max), "error");
      ok = FALSE;
    }
  if (!ok)
    return;
  dw_chart_set_y_range (self->chart, low, high);
  gtk_popover_popdown (GTK_POPOVER (self->range_popover));
}

static void
dw_chart_card_range_reset_cb (DwChartCard *self)
{
  dw_chart_set_y_range (self->chart, NAN, NAN);
  gtk_popover_popdown (GTK_POPOVER (self->range_popover));
}

static GtkEditable *
dw_chart_card_range_entry (DwChartCard *self, GtkGrid *grid, int row, const char *label)
{
  GtkWidget *title = gtk_label_new_with_mnemonic (label);
  GtkWidget *entry = gtk_entry_new ();

  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_label_set_mnemonic_widget (GTK_LABEL (title), entry);
  gtk_editable_set_width_chars (GTK_EDITABLE (entry), 12);
  gtk_entry_set_input_purpose (GTK_ENTRY (entry), GTK_INPUT_PURPOSE_NUMBER);
  g_signal_connect_swapped (entry, "activate", G_CALLBACK (dw_chart_card_range_apply_cb), self);
  gtk_grid_attach (grid, title, 0, row, 1, 1);
  gtk_grid_attach (grid, entry, 1, row, 1, 1);
  return GTK_EDITABLE (entry);
}

static void
dw_chart_card_build_range_popover (DwChartCard *self)
{
  GtkWidget *grid = gtk_grid_new ();
  GtkWidget *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *reset = gtk_button_new_with_mnemonic (_ ("_Reset"));
  GtkWidget *apply = gtk_button_new_with_mnemonic (_ ("_Apply"));

  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 12);
  /* TRANSLATORS: the lower end of a chart's y axis */
  self->range_min = dw_chart_card_range_entry (self, GTK_GRID (grid), 0, _ ("_Minimum"));
  /* TRANSLATORS: the upper end of a chart's y axis */
  self->range_max = dw_chart_card_range_entry (self, GTK_GRID (grid), 1, _ ("Ma_ximum"));
  gtk_widget_set_tooltip_text (reset, _ ("Back to the range of the data"));
  gtk_widget_add_css_class (apply, "suggested-action");
  gtk_widget_set_hexpand (reset, TRUE);
  gtk_widget_set_halign (reset, GTK_ALIGN_START);
  g_signal_connect_swapped (reset, "clicked", G_CALLBACK (dw_chart_card_range_reset_cb), self);
  g_signal_connect_swapped (apply, "clicked", G_CALLBACK (dw_chart_card_range_apply_cb), self);
  gtk_box_append (GTK_BOX (buttons), reset);
  gtk_box_append (GTK_BOX (buttons), apply);
  gtk_grid_attach (GTK_GRID (grid), buttons, 0, 2, 2, 1);
  self->range_popover = gtk_popover_new ();
  gtk_popover_set_child (GTK_POPOVER (self->range_popover), grid);
  gtk_widget_set_parent (self->range_popover, GTK_WIDGET (self));
}

static void
dw_chart_card_set_y_range_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwChartCard *self = DW_CHART_CARD (widget);
  graphene_rect_t bounds;
  double low, high;
  char text[G_ASCII_DTOSTR_BUF_SIZE];

  /* the entries start at the range set, else at the range shown */
  if (!dw_chart_get_y_range (self->chart, &low, &high))
    dw_chart_get_view (self->chart, NULL, NULL, &low, &high);
  gtk_editable_set_text (self->range_min, g_ascii_formatd (text, sizeof text, "%.6g", low));
  gtk_editable_set_text (self->range_max, g_ascii_formatd (text, sizeof text, "%.6g", high));
  gtk_widget_remove_css_class (GTK_WIDGET (self->range_min), "error");
  gtk_widget_remove_css_class (GTK_WIDGET (self->range_max), "error");
  if (gtk_widget_compute_bounds (GTK_WIDGET (self->menu_button), widget, &bounds))
    gtk_popover_set_pointing_to (GTK_POPOVER (self->range_popover),
                                 &(GdkRectangle){ (int)bounds.origin.x, (int)bounds.origin.y,
                                                  (int)bounds.size.width,
                                                  (int)bounds.size.height });
  gtk_popover_popup (GTK_POPOVER (self->range_popover));
  gtk_widget_grab_focus (GTK_WIDGET (self->range_min));
}

GtkWidget *
dw_chart_card_get_range_popover (DwChartCard *self)
{
  g_return_val_if_fail (DW_IS_CHART_CARD (self), NULL);
  return self->range_popover;
}

void
dw_chart_card_get_range_entries (DwChartCard *self, GtkEditable **minimum, GtkEditable **maximum)
{
  g_return_if_fail (DW_IS_CHART_CARD (self));
  *minimum = self->range_min;
  *maximum = self->range_max;
}

/* ---- Enlarge */

/* a step activated on the enlarged copy is one activated on the card's chart (the drill-down) */
static void
dw_chart_card_enlarged_step_activated_cb (DwChart *copy, double step, DwChart *chart)
{
  g_signal_emit_by_name (chart, "step-activated", step);
}

static void
dw_chart_card_enlarge_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwChartCard *self = DW_CHART_CARD (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  GtkWidget *window = adw_window_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = adw_header_bar_new ();
  GtkWidget *chart = dw_chart_new_copy (self->chart);
  GtkEventController *shortcuts = gtk_shortcut_controller_new ();

  gtk_window_set_title (GTK_WINDOW (window), dw_chart_card_get_title (self));
  gtk_window_set_default_size (GTK_WINDOW (window), 1000, 640);
  gtk_window_set_modal (GTK_WINDOW (window), TRUE);
  if (GTK_IS_WINDOW (root))
    gtk_window_set_transient_for (GTK_WINDOW (window), GTK_WINDOW (root));
  gtk_window_set_destroy_with_parent (GTK_WINDOW (window), TRUE);
  gtk_widget_set_vexpand (chart, TRUE);
  g_signal_connect_object (chart, "step-activated",
                           G_CALLBACK (dw_chart_card_enlarged_step_activated_cb), self->chart, 0);
  gtk_widget_set_margin_start (chart, 12);
  gtk_widget_set_margin_end (chart, 12);
  gtk_widget_set_margin_bottom (chart, 12);
  gtk_box_append (GTK_BOX (box), header);
  gtk_box_append (GTK_BOX (box), chart);
  adw_window_set_content (ADW_WINDOW (window), box);
  /* Escape closes it, from any focus inside */
  gtk_shortcut_controller_set_scope (GTK_SHORTCUT_CONTROLLER (shortcuts),
                                     GTK_SHORTCUT_SCOPE_GLOBAL);
  gtk_shortcut_controller_add_shortcut (
    GTK_SHORTCUT_CONTROLLER (shortcuts),
    gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Escape, 0),
                      gtk_named_action_new ("window.close")));
  gtk_widget_add_controller (window, shortcuts);
  g_set_weak_pointer (&self->enlarged, window);
  gtk_window_present (GTK_WINDOW (window));
}

GtkWindow *
dw_chart_card_get_enlarged (DwChartCard *self)
{
  g_return_val_if_fail (DW_IS_CHART_CARD (self), NULL);
  return self->enlarged != NULL ? GTK_WINDOW (self->enlarged) : NULL;
}

static void
reset_zoom_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  dw_chart_reset_zoom (DW_CHART_CARD (widget)->chart);
}

/* Cards flow at this natural width, so four fit beside the sidebar of a 1400 px window; they
 * still grow to share the width of the row. */
#define CARD_NATURAL_WIDTH 236

static void
dw_chart_card_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                       int *natural, int *minimum_baseline, int *natural_baseline)
{
  DwChartCard *self = DW_CHART_CARD (widget);

  gtk_widget_measure (self->box, orientation, for_size, minimum, natural, NULL, NULL);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *natural = MAX (*minimum, CARD_NATURAL_WIDTH);
}

static void
dw_chart_card_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  DwChartCard *self = DW_CHART_CARD (widget);

  gtk_widget_allocate (self->box, width, height, baseline, NULL);
  if (self->range_popover != NULL && gtk_widget_get_visible (self->range_popover))
    gtk_popover_present (GTK_POPOVER (self->range_popover));
}

static void
dw_chart_card_dispose (GObject *object)
{
  DwChartCard *self = DW_CHART_CARD (object);

  g_clear_pointer (&self->box, gtk_widget_unparent);
  g_clear_pointer (&self->range_popover, gtk_widget_unparent);
  g_clear_weak_pointer (&self->enlarged);
  G_OBJECT_CLASS (dw_chart_card_parent_class)->dispose (object);
}

static void
dw_chart_card_finalize (GObject *object)
{
  DwChartCard *self = DW_CHART_CARD (object);

  g_free (self->id);
  G_OBJECT_CLASS (dw_chart_card_parent_class)->finalize (object);
}

static void
dw_chart_card_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwChartCard *self = DW_CHART_CARD (object);

  switch (prop_id)
    {
    case PROP_LOG_Y:
      g_value_set_boolean (value, dw_chart_card_get_log_y (self));
      break;
    case PROP_Y_SCALE:
      g_value_set_enum (value, self->chart != NULL ? dw_chart_get_y_scale (self->chart)
                                                   : DW_CHART_SCALE_LINEAR);
      break;
    case PROP_FOLLOW_LATEST:
      g_value_set_boolean (value, self->chart != NULL && dw_chart_get_follow_latest (self->chart));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_chart_card_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  DwChartCard *self = DW_CHART_CARD (object);

  switch (prop_id)
    {
    case PROP_LOG_Y:
      dw_chart_card_set_log_y (self, g_value_get_boolean (value));
      break;
    case PROP_Y_SCALE:
      dw_chart_set_y_scale (self->chart, g_value_get_enum (value));
      break;
    case PROP_FOLLOW_LATEST:
      dw_chart_set_follow_latest (self->chart, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_chart_card_class_init (DwChartCardClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = dw_chart_card_dispose;
  object_class->finalize = dw_chart_card_finalize;
  object_class->get_property = dw_chart_card_get_property;
  object_class->set_property = dw_chart_card_set_property;

  properties[PROP_LOG_Y]
    = g_param_spec_boolean ("log-y", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_Y_SCALE]
    = g_param_spec_enum ("y-scale", NULL, NULL, DW_TYPE_CHART_SCALE, DW_CHART_SCALE_LINEAR,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FOLLOW_LATEST]
    = g_param_spec_boolean ("follow-latest", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (DW_TYPE_CHART);
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PATH "/dw-chart-card.ui");
  gtk_widget_class_bind_template_child (widget_class, DwChartCard, box);
  gtk_widget_class_bind_template_child (widget_class, DwChartCard, title_label);
  gtk_widget_class_bind_template_child (widget_class, DwChartCard, subtitle_label);
  gtk_widget_class_bind_template_child (widget_class, DwChartCard, menu_button);
  gtk_widget_class_bind_template_child (widget_class, DwChartCard, chart);
  gtk_widget_class_bind_template_child (widget_class, DwChartCard, empty_label);

  gtk_widget_class_install_property_action (widget_class, "card.log-y", "log-y");
  gtk_widget_class_install_property_action (widget_class, "card.y-scale", "y-scale");
  gtk_widget_class_install_property_action (widget_class, "card.follow-latest", "follow-latest");
  gtk_widget_class_install_action (widget_class, "card.set-y-range", NULL,
                                   dw_chart_card_set_y_range_action);
  gtk_widget_class_install_action (widget_class, "card.enlarge", NULL,
                                   dw_chart_card_enlarge_action);
  gtk_widget_class_install_action (widget_class, "card.reset-zoom", NULL, reset_zoom_action);
  gtk_widget_class_install_action (widget_class, "card.export", "s", export_action);

  widget_class->measure = dw_chart_card_measure;
  widget_class->size_allocate = dw_chart_card_size_allocate;
  gtk_widget_class_set_css_name (widget_class, "dwchartcard");
}

static void
on_chart_log_y (DwChartCard *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOG_Y]);
}

static void
dw_chart_card_chart_y_scale_cb (DwChartCard *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_Y_SCALE]);
}

static void
dw_chart_card_chart_follow_latest_cb (DwChartCard *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FOLLOW_LATEST]);
}

static void
dw_chart_card_init (DwChartCard *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_connect_object (self->chart, "notify::log-y", G_CALLBACK (on_chart_log_y), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->chart, "notify::y-scale",
                           G_CALLBACK (dw_chart_card_chart_y_scale_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->chart, "notify::follow-latest",
                           G_CALLBACK (dw_chart_card_chart_follow_latest_cb), self,
                           G_CONNECT_SWAPPED);
  dw_chart_card_build_range_popover (self);
}

GtkWidget *
dw_chart_card_new (const char *id, const char *title, const char *subtitle)
{
  DwChartCard *self = g_object_new (DW_TYPE_CHART_CARD, NULL);

  self->id = g_strdup (id);
  gtk_label_set_label (self->title_label, title);
  gtk_label_set_label (self->subtitle_label, subtitle ? subtitle : "");
  gtk_widget_set_visible (GTK_WIDGET (self->subtitle_label), subtitle != NULL && *subtitle);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->subtitle_label), subtitle);
  dw_chart_set_title (self->chart, title);
  return GTK_WIDGET (self);
}

const char *
dw_chart_card_get_id (DwChartCard *self)
{
  g_return_val_if_fail (DW_IS_CHART_CARD (self), NULL);
  return self->id;
}

const char *
dw_chart_card_get_title (DwChartCard *self)
{
  g_return_val_if_fail (DW_IS_CHART_CARD (self), NULL);
  return gtk_label_get_label (self->title_label);
}

DwChart *
dw_chart_card_get_chart (DwChartCard *self)
{
  g_return_val_if_fail (DW_IS_CHART_CARD (self), NULL);
  return self->chart;
}

gboolean
dw_chart_card_get_log_y (DwChartCard *self)
{
  g_return_val_if_fail (DW_IS_CHART_CARD (self), FALSE);
  /* The property action reads the state while the template is still being built. */
  return self->chart != NULL && dw_chart_get_log_y (self->chart);
}

void
dw_chart_card_set_log_y (DwChartCard *self, gboolean log_y)
{
  g_return_if_fail (DW_IS_CHART_CARD (self));
  /* The chart notifies, and on_chart_log_y forwards it to the card's property and action. */
  dw_chart_set_log_y (self->chart, log_y);
}

void
dw_chart_card_set_empty_text (DwChartCard *self, const char *text)
{
  g_return_if_fail (DW_IS_CHART_CARD (self));
  gtk_label_set_label (self->empty_label, text ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (self->empty_label), text != NULL);
}
