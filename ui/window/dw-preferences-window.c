/* dw-preferences-window.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every row is bound to a key of the application's GSettings, so a change applies at once
 * (GNOME HIG: no Apply button) and the window owns no state of its own.
 */
#define G_LOG_DOMAIN "dw-preferences-window"

#include "config.h"

#include <glib/gi18n.h>

#include "dw-preferences-window.h"
#include "dw-wheel-guard.h"

struct _DwPreferencesWindow
{
  AdwPreferencesWindow parent_instance;

  GSettings *settings;

  GtkAdjustment *smoothing_adjustment;
  GtkScale *smoothing_scale;
  GtkSpinButton *refresh_spin;
  AdwComboRow *x_axis_row;
  GtkSwitch *log_scale_switch;
  GtkSwitch *ignore_outliers_switch;
  GtkSwitch *live_switch;
  AdwActionRow *refresh_row;
  GtkAdjustment *refresh_adjustment;
  GtkSwitch *notifications_switch;
  GtkAdjustment *recent_adjustment;
};

G_DEFINE_FINAL_TYPE (DwPreferencesWindow, dw_preferences_window, ADW_TYPE_PREFERENCES_WINDOW)

enum
{
  PROP_0,
  PROP_SETTINGS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* The x-axis key is an enum (nicks step|relative|wall); the combo row shows them in the
 * schema's value order, so the row position is the enum value. */
static gboolean
x_axis_get_mapping (GValue *value, GVariant *variant, gpointer user_data)
{
  GSettings *settings = user_data;

  (void)variant;
  g_value_set_uint (value, (guint)g_settings_get_enum (settings, "x-axis"));
  return TRUE;
}

static GVariant *
x_axis_set_mapping (const GValue *value, const GVariantType *expected_type, gpointer user_data)
{
  static const char *const nicks[] = { "step", "relative", "wall" };
  guint position = g_value_get_uint (value);

  (void)expected_type;
  (void)user_data;
  if (position >= G_N_ELEMENTS (nicks))
    return NULL;
  return g_variant_new_string (nicks[position]);
}

static void
dw_preferences_window_bind (DwPreferencesWindow *self)
{
  g_settings_bind (self->settings, "smoothing", self->smoothing_adjustment, "value",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind_with_mapping (self->settings, "x-axis", self->x_axis_row, "selected",
                                G_SETTINGS_BIND_DEFAULT, x_axis_get_mapping, x_axis_set_mapping,
                                self->settings, NULL);
  g_settings_bind (self->settings, "log-scale", self->log_scale_switch, "active",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "ignore-outliers", self->ignore_outliers_switch, "active",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "live", self->live_switch, "active", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "refresh-interval", self->refresh_adjustment, "value",
                   G_SETTINGS_BIND_DEFAULT);
  /* The interval only matters while runs are followed. */
  g_settings_bind (self->settings, "live", self->refresh_row, "sensitive", G_SETTINGS_BIND_GET);
  g_settings_bind (self->settings, "notifications", self->notifications_switch, "active",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "recent-runs-max", self->recent_adjustment, "value",
                   G_SETTINGS_BIND_DEFAULT);
}

static void
dw_preferences_window_constructed (GObject *object)
{
  DwPreferencesWindow *self = DW_PREFERENCES_WINDOW (object);

  G_OBJECT_CLASS (dw_preferences_window_parent_class)->constructed (object);

  g_assert (G_IS_SETTINGS (self->settings));
  dw_preferences_window_bind (self);
}

static void
dw_preferences_window_dispose (GObject *object)
{
  DwPreferencesWindow *self = DW_PREFERENCES_WINDOW (object);

  g_clear_object (&self->settings);
  G_OBJECT_CLASS (dw_preferences_window_parent_class)->dispose (object);
}

static void
dw_preferences_window_get_property (GObject *object, guint prop_id, GValue *value,
                                    GParamSpec *pspec)
{
  DwPreferencesWindow *self = DW_PREFERENCES_WINDOW (object);

  switch (prop_id)
    {
    case PROP_SETTINGS:
      g_value_set_object (value, self->settings);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_preferences_window_set_property (GObject *object, guint prop_id, const GValue *value,
                                    GParamSpec *pspec)
{
  DwPreferencesWindow *self = DW_PREFERENCES_WINDOW (object);

  switch (prop_id)
    {
    case PROP_SETTINGS:
      self->settings = g_value_dup_object (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_preferences_window_class_init (DwPreferencesWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->constructed = dw_preferences_window_constructed;
  object_class->dispose = dw_preferences_window_dispose;
  object_class->get_property = dw_preferences_window_get_property;
  object_class->set_property = dw_preferences_window_set_property;

  properties[PROP_SETTINGS]
    = g_param_spec_object ("settings", NULL, NULL, G_TYPE_SETTINGS,
                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               RESOURCE_PATH "/dw-preferences-window.ui");
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, smoothing_adjustment);
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, x_axis_row);
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, log_scale_switch);
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, ignore_outliers_switch);
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, live_switch);
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, refresh_row);
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, refresh_adjustment);
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, notifications_switch);
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, recent_adjustment);
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, smoothing_scale);
  gtk_widget_class_bind_template_child (widget_class, DwPreferencesWindow, refresh_spin);
}

static void
dw_preferences_window_init (DwPreferencesWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* scrolling the page with the wheel must not change a setting passing under the pointer */
  dw_wheel_guard_attach (GTK_WIDGET (self->smoothing_scale));
  dw_wheel_guard_attach (GTK_WIDGET (self->refresh_spin));
}

/**
 * dw_preferences_window_new:
 * @settings: the application's settings (schema io.github.driftwatch.Driftwatch)
 *
 * Returns: (transfer floating): a new preferences window bound to @settings
 */
GtkWidget *
dw_preferences_window_new (GSettings *settings)
{
  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);

  return g_object_new (DW_TYPE_PREFERENCES_WINDOW, "settings", settings, NULL);
}

/**
 * dw_preferences_window_get_settings:
 *
 * Returns: (transfer none): the settings the rows are bound to
 */
GSettings *
dw_preferences_window_get_settings (DwPreferencesWindow *self)
{
  g_return_val_if_fail (DW_IS_PREFERENCES_WINDOW (self), NULL);

  return self->settings;
}
