/* dw-chart.c — a cairo line chart for long scalar series: the container of its layers
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The chart owns the series, thresholds and markers, the view (automatic bounds, zoom, the
 * card's own y range, following the newest point) and the input (hover, drag to zoom, the
 * secondary click and Enter that activate a step); it lays its layers over each other, and each
 * layer draws its part from the frame computed here (see dw-chart-layer.h).
 */
#define G_LOG_DOMAIN "dw-chart"

#include "config.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gi18n.h>
#include <inttypes.h>

#include "dw-chart-private.h"
#include "dw-chart-readout.h"
#include "dw-smooth.h"

G_DEFINE_FINAL_TYPE (DwChart, dw_chart, GTK_TYPE_WIDGET)

/* the nicks are the targets of the card menu's "card.y-scale" items */
G_DEFINE_ENUM_TYPE (DwChartScale, dw_chart_scale,
                    G_DEFINE_ENUM_VALUE (DW_CHART_SCALE_LINEAR, "linear"),
                    G_DEFINE_ENUM_VALUE (DW_CHART_SCALE_LOG, "log"),
                    G_DEFINE_ENUM_VALUE (DW_CHART_SCALE_SYMLOG, "symlog"))

enum
{
  PROP_0,
  PROP_TITLE,
  PROP_LOG_Y,
  PROP_Y_SCALE,
  PROP_X_MODE,
  PROP_SMOOTHING,
  PROP_IGNORE_OUTLIERS,
  PROP_CURSOR_X,
  PROP_FOLLOW_LATEST,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum
{
  SIGNAL_ZOOM_CHANGED,
  SIGNAL_STEP_ACTIVATED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
dw_chart_series_free (gpointer data)
{
  DwChartSeries *s = data;

  g_free (s->id);
  g_free (s->label);
  dw_plot_series_free (s->data);
  g_free (s);
}

static void
dw_chart_threshold_free (gpointer data)
{
  DwChartThreshold *t = data;

  g_free (t->label);
  g_free (t);
}

static void
dw_chart_marker_free (gpointer data)
{
  DwChartMarker *m = data;

  g_free (m->title);
  g_free (m);
}

double
_dw_chart_x_of_step (DwChart *self, gint64 step)
{
  if (self->series->len == 0)
    return self->x_mode == DW_X_STEP ? (double)step : NAN;
  return dw_plot_series_x_of_step (((DwChartSeries *)g_ptr_array_index (self->series, 0))->data,
                                   self->x_mode, step);
}

static char *
dw_chart_format_value (double v)
{
  double a = fabs (v);

  if (v == 0)
    return g_strdup ("0");
  if (a >= 1e5 || a < 1e-3)
    return g_strdup_printf ("%.2g", v);
  return g_strdup_printf ("%.4g", v);
}

/* ---------------------------------------------------------------- layers */

void
_dw_chart_draw_layers (DwChart *self, cairo_t *cr, const DwChartFrame *f, const DwChartStyle *st)
{
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (DW_IS_CHART_LAYER (child) && child != self->layers[DW_CHART_LAYER_OVERLAY])
      dw_chart_layer_draw (DW_CHART_LAYER (child), self, cr, f, st);
}

void
dw_chart_draw_frame (DwChart *self, cairo_t *cr, int width, int height)
{
  DwChartStyle st;
  DwChartFrame f;

  g_return_if_fail (DW_IS_CHART (self));
  dw_chart_style_widget (self, &st);
  _dw_chart_make_frame (self, &f, width, height);
  _dw_chart_draw_layers (self, cr, &f, &st);
}

GtkWidget *
_dw_chart_get_layer (DwChart *self, DwChartLayerKind kind)
{
  g_return_val_if_fail (kind < DW_CHART_N_LAYERS, NULL);
  return self->layers[kind];
}

/* ---------------------------------------------------------------- hover overlay */

/* The health markers within a few pixels of the cursor, with their full titles. */
static void
dw_chart_hover_marker_rows (DwChart *self, double x, GPtrArray *rows)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  int height = gtk_widget_get_height (GTK_WIDGET (self));
  DwChartFrame f;

  if (self->markers->len == 0 || width <= 0 || height <= 0)
    return;
  _dw_chart_make_frame (self, &f, width, height);
  for (guint i = 0; i < self->markers->len; i++)
    {
      DwChartMarker *m = g_ptr_array_index (self->markers, i);
      double mx = dw_chart_frame_x (&f, _dw_chart_x_of_step (self, m->step));

      if (m->title == NULL || !isfinite (mx) || fabs (mx - dw_chart_frame_x (&f, x)) > 6)
        continue;
      if (m->severity == DW_MARKER_CRITICAL)
        /* TRANSLATORS: hover read-out of a health marker: training step, rule title */
        g_ptr_array_add (
          rows, g_strdup_printf (_ ("Critical from step %" PRId64 ": %s"), m->step, m->title));
      else if (m->severity == DW_MARKER_WARNING)
        /* TRANSLATORS: hover read-out of a health marker: training step, rule title */
        g_ptr_array_add (
          rows, g_strdup_printf (_ ("Warning from step %" PRId64 ": %s"), m->step, m->title));
      else
        /* TRANSLATORS: hover read-out of a health marker: training step, rule title */
        g_ptr_array_add (rows,
                         g_strdup_printf (_ ("From step %" PRId64 ": %s"), m->step, m->title));
    }
}

static GPtrArray *
dw_chart_hover_rows (DwChart *self, double x)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *s = g_ptr_array_index (self->series, i);
      gssize j = dw_plot_series_nearest (s->data, self->x_mode, x);
      const double *raw, *sm;
      g_autofree char *rv = NULL, *sv = NULL;

      if (j < 0)
        continue;
      raw = dw_pyramid_get_values (dw_plot_series_get_raw (s->data));
      sm = dw_pyramid_get_values (_dw_chart_main_pyramid (self, s));
      rv = dw_chart_format_value (raw[j]);
      sv = dw_chart_format_value (sm[j]);
      if (self->smoothing > 0)
        /* TRANSLATORS: hover read-out: run, smoothed value, raw value, training step */
        g_ptr_array_add (rows, g_strdup_printf (_ ("%s: %s (raw %s) at step %" PRId64), s->label,
                                                sv, rv, dw_plot_series_get_steps (s->data)[j]));
      else
        /* TRANSLATORS: hover read-out: run, value, training step */
        g_ptr_array_add (rows, g_strdup_printf (_ ("%s: %s at step %" PRId64), s->label, rv,
                                                dw_plot_series_get_steps (s->data)[j]));
    }
  dw_chart_hover_marker_rows (self, x, rows);
  return rows;
}

char *
dw_chart_dup_hover_text (DwChart *self)
{
  g_autoptr (GPtrArray) rows = NULL;

  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  if (!isfinite (self->cursor_x))
    return NULL;
  rows = dw_chart_hover_rows (self, self->cursor_x);
  g_ptr_array_add (rows, NULL);
  return g_strjoinv ("\n", (char **)rows->pdata);
}

/* ---------------------------------------------------------------- input */

static void
dw_chart_queue_overlay (DwChart *self)
{
  gtk_widget_queue_draw (self->layers[DW_CHART_LAYER_OVERLAY]);
}

static void
dw_chart_queue_all (DwChart *self)
{
  self->bounds_valid = FALSE;
  self->frame_valid = FALSE;
  for (guint i = 0; i < DW_CHART_N_LAYERS; i++)
    gtk_widget_queue_draw (self->layers[i]);
}

/* The read-out popover of the hovered chart: every series at the cursor, then its markers. */
static void
dw_chart_update_readout (DwChart *self, double x, double y)
{
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (DwReadoutRow));
  g_autoptr (GPtrArray) markers = g_ptr_array_new_with_free_func (g_free);

  if (!isfinite (self->cursor_x) || !gtk_widget_get_mapped (GTK_WIDGET (self)))
    return;
  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *s = g_ptr_array_index (self->series, i);
      gssize j = dw_plot_series_nearest (s->data, self->x_mode, self->cursor_x);
      gboolean wall = self->x_mode == DW_X_WALL;
      DwReadoutRow r;

      if (j < 0)
        continue;
      r.color = s->color;
      r.label = s->label;
      r.value = dw_pyramid_get_values (_dw_chart_main_pyramid (self, s))[j];
      r.raw
        = self->smoothing > 0 ? dw_pyramid_get_values (dw_plot_series_get_raw (s->data))[j] : NAN;
      r.step = dw_plot_series_get_steps (s->data)[j];
      r.time = dw_plot_series_get_x (s->data, wall ? DW_X_WALL : DW_X_RELATIVE)[j];
      r.wall = wall;
      g_array_append_val (rows, r);
    }
  dw_chart_hover_marker_rows (self, self->cursor_x, markers);
  g_ptr_array_add (markers, NULL);
  if (rows->len == 0 && markers->len == 1)
    {
      gtk_popover_popdown (GTK_POPOVER (self->readout));
      return;
    }
  _dw_chart_ensure_bounds (self);
  dw_chart_readout_set_rows (DW_CHART_READOUT (self->readout), (DwReadoutRow *)rows->data,
                             rows->len, (const char *const *)markers->pdata,
                             (self->by1 - self->by0) / 1000);
  dw_chart_readout_point_at (DW_CHART_READOUT (self->readout), x, y);
  if (!gtk_widget_get_visible (self->readout))
    gtk_popover_popup (GTK_POPOVER (self->readout));
}

GtkWidget *
dw_chart_get_readout (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  return self->readout;
}

void
dw_chart_hover (DwChart *self, double x, double y)
{
  DwChartFrame f;

  g_return_if_fail (DW_IS_CHART (self));
  _dw_chart_make_frame (self, &f, gtk_widget_get_width (GTK_WIDGET (self)),
                        gtk_widget_get_height (GTK_WIDGET (self)));
  self->hovering = TRUE;
  self->hover_px = x;
  self->hover_py = y;
  dw_chart_set_cursor_x (self, dw_chart_frame_inv_x (&f, CLAMP (x, f.px, f.px + f.pw)));
  dw_chart_update_readout (self, x, y);
}

static void
dw_chart_motion_cb (GtkEventControllerMotion *motion, double x, double y, DwChart *self)
{
  /* a motion event where the pointer already was (X repeats them, GTK synthesizes them after a
   * relayout) leaves a cursor the keyboard moved where it is */
  if (self->hovering && x == self->hover_px && y == self->hover_py)
    return;
  dw_chart_hover (self, x, y);
}

void
dw_chart_leave (DwChart *self)
{
  g_return_if_fail (DW_IS_CHART (self));
  self->hovering = FALSE;
  gtk_popover_popdown (GTK_POPOVER (self->readout));
  dw_chart_set_cursor_x (self, NAN);
}

static void
dw_chart_leave_cb (GtkEventControllerMotion *motion, DwChart *self)
{
  dw_chart_leave (self);
}

static void
dw_chart_drag_begin_cb (GtkGestureDrag *gesture, double x, double y, DwChart *self)
{
  self->drag_x0 = self->drag_x1 = x;
  self->drag_y0 = self->drag_y1 = y;
  self->dragging = FALSE;
}

static void
dw_chart_drag_update_cb (GtkGestureDrag *gesture, double dx, double dy, DwChart *self)
{
  self->drag_x1 = self->drag_x0 + dx;
  self->drag_y1 = self->drag_y0 + dy;
  if (fabs (dx) >= 4)
    self->dragging = TRUE;
  if (self->dragging)
    dw_chart_queue_overlay (self);
}

static void
dw_chart_drag_end_cb (GtkGestureDrag *gesture, double dx, double dy, DwChart *self)
{
  DwChartFrame f;
  double x0, x1;

  if (!self->dragging)
    return;
  self->dragging = FALSE;
  _dw_chart_make_frame (self, &f, gtk_widget_get_width (GTK_WIDGET (self)),
                        gtk_widget_get_height (GTK_WIDGET (self)));
  x0 = dw_chart_frame_inv_x (&f, MIN (self->drag_x0, self->drag_x0 + dx));
  x1 = dw_chart_frame_inv_x (&f, MAX (self->drag_x0, self->drag_x0 + dx));
  if (fabs (dy) >= 10)
    dw_chart_zoom (self, x0, x1, dw_chart_frame_inv_y (&f, MAX (self->drag_y0, self->drag_y0 + dy)),
                   dw_chart_frame_inv_y (&f, MIN (self->drag_y0, self->drag_y0 + dy)));
  else
    dw_chart_zoom (self, x0, x1, NAN, NAN);
}

static void
dw_chart_click_cb (GtkGestureClick *gesture, int n_press, double x, double y, DwChart *self)
{
  if (n_press == 2)
    dw_chart_reset_zoom (self);
}

/* The step of the sample nearest to @x over every series (what a drill-down opens); NAN when the
 * chart has no data there. */
static double
dw_chart_step_at (DwChart *self, double x)
{
  double best_distance = INFINITY, step = NAN;

  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *s = g_ptr_array_index (self->series, i);
      gssize j = dw_plot_series_nearest (s->data, self->x_mode, x);
      double distance;

      if (j < 0)
        continue;
      distance = fabs (dw_plot_series_get_x (s->data, self->x_mode)[j] - x);
      if (distance < best_distance)
        {
          best_distance = distance;
          step = (double)dw_plot_series_get_steps (s->data)[j];
        }
    }
  return step;
}

static void
dw_chart_activate_step_at (DwChart *self, double x)
{
  double step = dw_chart_step_at (self, x);

  if (isfinite (step))
    g_signal_emit (self, signals[SIGNAL_STEP_ACTIVATED], 0, step);
}

/* The secondary button on the plot area activates the step under the pointer. */
static void
dw_chart_secondary_click_cb (GtkGestureClick *gesture, int n_press, double x, double y,
                             DwChart *self)
{
  DwChartFrame f;

  _dw_chart_make_frame (self, &f, gtk_widget_get_width (GTK_WIDGET (self)),
                        gtk_widget_get_height (GTK_WIDGET (self)));
  if (x < f.px || x > f.px + f.pw || y < f.py || y > f.py + f.ph)
    return;
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  dw_chart_activate_step_at (self, dw_chart_frame_inv_x (&f, x));
}

/* Left/Right with the keyboard focus: the cursor moves to the previous/next sample of the first
 * series with data (starting at the newest one in view), and the read-out follows, so a step can
 * be found and activated without a pointer. */
static gboolean
dw_chart_move_cursor (DwChart *self, int direction)
{
  DwChartFrame f;

  _dw_chart_make_frame (self, &f, gtk_widget_get_width (GTK_WIDGET (self)),
                        gtk_widget_get_height (GTK_WIDGET (self)));
  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *series = g_ptr_array_index (self->series, i);
      const double *xs = dw_plot_series_get_x (series->data, self->x_mode);
      gsize length = dw_plot_series_get_length (series->data);
      gssize index;

      if (length == 0)
        continue;
      if (isfinite (self->cursor_x))
        index = dw_plot_series_nearest (series->data, self->x_mode, self->cursor_x) + direction;
      else
        index = dw_plot_series_nearest (series->data, self->x_mode, f.x1);
      index = CLAMP (index, 0, (gssize)length - 1);
      if (xs[index] < f.x0 || xs[index] > f.x1)
        return TRUE;
      self->hovering = TRUE;
      dw_chart_set_cursor_x (self, xs[index]);
      dw_chart_update_readout (self, dw_chart_frame_x (&f, xs[index]), f.py + f.ph / 2);
      return TRUE;
    }
  return FALSE;
}

/* Enter (or the keypad's) while the chart has the focus: the step at the cursor. */
static gboolean
dw_chart_key_pressed_cb (GtkEventControllerKey *key, guint keyval, guint keycode,
                         GdkModifierType state, DwChart *self)
{
  if (keyval == GDK_KEY_Left || keyval == GDK_KEY_KP_Left)
    return dw_chart_move_cursor (self, -1);
  if (keyval == GDK_KEY_Right || keyval == GDK_KEY_KP_Right)
    return dw_chart_move_cursor (self, 1);
  if (keyval != GDK_KEY_Return && keyval != GDK_KEY_KP_Enter && keyval != GDK_KEY_ISO_Enter)
    return FALSE;
  if (!isfinite (self->cursor_x))
    return FALSE;
  dw_chart_activate_step_at (self, self->cursor_x);
  return TRUE;
}

static void
dw_chart_style_changed_cb (DwChart *self)
{
  self->frame_valid = FALSE;
  for (guint i = 0; i < DW_CHART_N_LAYERS; i++)
    gtk_widget_queue_draw (self->layers[i]);
}

/* ---------------------------------------------------------------- GObject */

static void
dw_chart_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                  int *natural, int *minimum_baseline, int *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 220;
      *natural = MAX (DW_CHART (widget)->natural_width, 220);
    }
  else
    {
      *minimum = 150;
      *natural = 220;
    }
}

static void
dw_chart_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  DwChart *self = DW_CHART (widget);

  /* every layer covers the whole chart: they draw over each other */
  for (guint i = 0; i < DW_CHART_N_LAYERS; i++)
    gtk_widget_allocate (self->layers[i], width, height, baseline, NULL);
  if (gtk_widget_get_visible (self->readout))
    gtk_popover_present (GTK_POPOVER (self->readout));
}

static void
dw_chart_dispose (GObject *object)
{
  DwChart *self = DW_CHART (object);

  if (self->tick_id != 0)
    {
      gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->tick_id);
      self->tick_id = 0;
    }
  for (guint i = 0; i < DW_CHART_N_LAYERS; i++)
    g_clear_pointer (&self->layers[i], gtk_widget_unparent);
  g_clear_pointer (&self->readout, gtk_widget_unparent);
  G_OBJECT_CLASS (dw_chart_parent_class)->dispose (object);
}

static void
dw_chart_finalize (GObject *object)
{
  DwChart *self = DW_CHART (object);

  g_free (self->title);
  g_free (self->y_unit);
  g_ptr_array_unref (self->series);
  g_ptr_array_unref (self->thresholds);
  g_ptr_array_unref (self->markers);
  g_string_free (self->band_labels, TRUE);
  g_free (self->columns);
  G_OBJECT_CLASS (dw_chart_parent_class)->finalize (object);
}

static void
dw_chart_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwChart *self = DW_CHART (object);

  switch (prop_id)
    {
    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;
    case PROP_LOG_Y:
      g_value_set_boolean (value, self->y_scale == DW_CHART_SCALE_LOG);
      break;
    case PROP_Y_SCALE:
      g_value_set_enum (value, self->y_scale);
      break;
    case PROP_X_MODE:
      g_value_set_int (value, self->x_mode);
      break;
    case PROP_SMOOTHING:
      g_value_set_double (value, self->smoothing);
      break;
    case PROP_IGNORE_OUTLIERS:
      g_value_set_boolean (value, self->ignore_outliers);
      break;
    case PROP_CURSOR_X:
      g_value_set_double (value, self->cursor_x);
      break;
    case PROP_FOLLOW_LATEST:
      g_value_set_boolean (value, self->follow_latest);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_chart_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  DwChart *self = DW_CHART (object);

  switch (prop_id)
    {
    case PROP_TITLE:
      dw_chart_set_title (self, g_value_get_string (value));
      break;
    case PROP_LOG_Y:
      dw_chart_set_log_y (self, g_value_get_boolean (value));
      break;
    case PROP_Y_SCALE:
      dw_chart_set_y_scale (self, g_value_get_enum (value));
      break;
    case PROP_X_MODE:
      dw_chart_set_x_mode (self, g_value_get_int (value));
      break;
    case PROP_SMOOTHING:
      dw_chart_set_smoothing (self, g_value_get_double (value));
      break;
    case PROP_IGNORE_OUTLIERS:
      dw_chart_set_ignore_outliers (self, g_value_get_boolean (value));
      break;
    case PROP_CURSOR_X:
      dw_chart_set_cursor_x (self, g_value_get_double (value));
      break;
    case PROP_FOLLOW_LATEST:
      dw_chart_set_follow_latest (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_chart_class_init (DwChartClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = dw_chart_dispose;
  object_class->finalize = dw_chart_finalize;
  object_class->get_property = dw_chart_get_property;
  object_class->set_property = dw_chart_set_property;
  widget_class->measure = dw_chart_measure;
  widget_class->size_allocate = dw_chart_size_allocate;

  /**
   * DwChart::zoom-changed:
   *
   * The view was zoomed (dragged, or dw_chart_zoom()) or reset to the data's extent.
   */
  signals[SIGNAL_ZOOM_CHANGED]
    = g_signal_new ("zoom-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                    NULL, G_TYPE_NONE, 0);

  /**
   * DwChart::step-activated:
   * @step: the training step of the sample nearest to the pointer (or to the cursor)
   *
   * The user asked to look into a step: a secondary click on the plot area, or Enter while the
   * chart has the keyboard focus and a hover position.
   */
  signals[SIGNAL_STEP_ACTIVATED]
    = g_signal_new ("step-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                    NULL, G_TYPE_NONE, 1, G_TYPE_DOUBLE);

  properties[PROP_TITLE]
    = g_param_spec_string ("title", NULL, NULL, NULL,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_LOG_Y]
    = g_param_spec_boolean ("log-y", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_Y_SCALE]
    = g_param_spec_enum ("y-scale", NULL, NULL, DW_TYPE_CHART_SCALE, DW_CHART_SCALE_LINEAR,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_X_MODE]
    = g_param_spec_int ("x-mode", NULL, NULL, DW_X_STEP, DW_X_WALL, DW_X_STEP,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SMOOTHING]
    = g_param_spec_double ("smoothing", NULL, NULL, 0, 0.999, 0,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_IGNORE_OUTLIERS]
    = g_param_spec_boolean ("ignore-outliers", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CURSOR_X]
    = g_param_spec_double ("cursor-x", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FOLLOW_LATEST]
    = g_param_spec_boolean ("follow-latest", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "dwchart");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static const DwChartLayerKind dw_chart_layer_order[] = {
  DW_CHART_LAYER_AXES,    DW_CHART_LAYER_THRESHOLDS, DW_CHART_LAYER_DATA,
  DW_CHART_LAYER_MARKERS, DW_CHART_LAYER_OVERLAY,
};

static void
dw_chart_init (DwChart *self)
{
  GtkEventController *motion, *key;
  GtkGesture *drag, *click;

  self->series = g_ptr_array_new_with_free_func (dw_chart_series_free);
  self->natural_width = 420;
  self->thresholds = g_ptr_array_new_with_free_func (dw_chart_threshold_free);
  self->markers = g_ptr_array_new_with_free_func (dw_chart_marker_free);
  self->band_labels = g_string_new (NULL);
  /* spikes are what a health tool exists to show: the axis covers them unless asked not to */
  self->ignore_outliers = FALSE;
  self->cursor_x = NAN;
  self->band_lo = self->band_hi = NAN;
  self->columns = g_new (DwColumn, MAX_COLUMNS);

  self->range_y0 = self->range_y1 = NAN;
  self->linthresh = 1;
  /* children in drawing order: what is drawn later is on top */
  for (guint i = 0; i < G_N_ELEMENTS (dw_chart_layer_order); i++)
    {
      self->layers[dw_chart_layer_order[i]] = dw_chart_layer_new (dw_chart_layer_order[i]);
      gtk_widget_set_parent (self->layers[dw_chart_layer_order[i]], GTK_WIDGET (self));
    }
  self->readout = dw_chart_readout_new ();
  gtk_widget_set_parent (self->readout, GTK_WIDGET (self));

  motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "enter", G_CALLBACK (dw_chart_motion_cb), self);
  g_signal_connect (motion, "motion", G_CALLBACK (dw_chart_motion_cb), self);
  g_signal_connect (motion, "leave", G_CALLBACK (dw_chart_leave_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);

  drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (dw_chart_drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (dw_chart_drag_update_cb), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (dw_chart_drag_end_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));

  click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (dw_chart_click_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));

  click = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_SECONDARY);
  g_signal_connect (click, "pressed", G_CALLBACK (dw_chart_secondary_click_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));

  key = gtk_event_controller_key_new ();
  g_signal_connect (key, "key-pressed", G_CALLBACK (dw_chart_key_pressed_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), key);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);

  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (dw_chart_style_changed_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (adw_style_manager_get_default (), "notify::high-contrast",
                           G_CALLBACK (dw_chart_style_changed_cb), self, G_CONNECT_SWAPPED);
}

GtkWidget *
dw_chart_new (void)
{
  return g_object_new (DW_TYPE_CHART, NULL);
}

static void
dw_chart_copy_series (DwChart *copy, DwChartSeries *s)
{
  DwPlotSeries *data = dw_chart_add_series (copy, s->id, s->label, &s->color);
  gsize n = dw_plot_series_get_length (s->data), n_restarts;
  const gint64 *restarts = dw_plot_series_get_restarts (s->data, &n_restarts);

  dw_plot_series_append (
    data, dw_plot_series_get_steps (s->data),
    dw_plot_series_has_wall_time (s->data) ? dw_plot_series_get_x (s->data, DW_X_WALL) : NULL,
    dw_pyramid_get_values (dw_plot_series_get_raw (s->data)), n);
  for (gsize i = 0; i < n_restarts; i++)
    dw_plot_series_add_restart (data, restarts[i]);
}

GtkWidget *
dw_chart_new_copy (DwChart *self)
{
  DwChart *copy;

  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  copy = g_object_new (DW_TYPE_CHART, "title", self->title, "x-mode", self->x_mode, "smoothing",
                       self->smoothing, "ignore-outliers", self->ignore_outliers, "y-scale",
                       self->y_scale, NULL);
  dw_chart_set_y_unit (copy, self->y_unit);
  for (guint i = 0; i < self->series->len; i++)
    dw_chart_copy_series (copy, g_ptr_array_index (self->series, i));
  for (guint i = 0; i < self->thresholds->len; i++)
    {
      DwChartThreshold *threshold = g_ptr_array_index (self->thresholds, i);
      dw_chart_add_threshold (copy, threshold->value, threshold->kind, threshold->label);
    }
  for (guint i = 0; i < self->markers->len; i++)
    {
      DwChartMarker *marker = g_ptr_array_index (self->markers, i);
      dw_chart_add_marker (copy, marker->step, marker->severity, marker->title, marker->show_label);
    }
  dw_chart_set_band (copy, self->band_lo, self->band_hi);
  dw_chart_set_y_range (copy, self->range_y0, self->range_y1);
  if (self->zoomed)
    dw_chart_zoom (copy, self->zx0, self->zx1, self->zoomed_y ? self->zy0 : NAN,
                   self->zoomed_y ? self->zy1 : NAN);
  dw_chart_set_follow_latest (copy, self->follow_latest);
  copy->follow_span = self->follow_span;
  return GTK_WIDGET (copy);
}

/* ---------------------------------------------------------------- properties */

const char *
dw_chart_get_title (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  return self->title;
}

void
dw_chart_set_title (DwChart *self, const char *title)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (g_strcmp0 (self->title, title) == 0)
    return;
  g_free (self->title);
  self->title = g_strdup (title);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  title ? title : "", -1);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TITLE]);
}

gboolean
dw_chart_get_log_y (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), FALSE);
  return self->y_scale == DW_CHART_SCALE_LOG;
}

void
dw_chart_set_log_y (DwChart *self, gboolean log_y)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (log_y)
    dw_chart_set_y_scale (self, DW_CHART_SCALE_LOG);
  else if (self->y_scale == DW_CHART_SCALE_LOG)
    dw_chart_set_y_scale (self, DW_CHART_SCALE_LINEAR);
}

DwChartScale
dw_chart_get_y_scale (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), DW_CHART_SCALE_LINEAR);
  return self->y_scale;
}

void
dw_chart_set_y_scale (DwChart *self, DwChartScale scale)
{
  gboolean was_log;

  g_return_if_fail (DW_IS_CHART (self));
  g_return_if_fail (scale <= DW_CHART_SCALE_SYMLOG);
  if (self->y_scale == scale)
    return;
  was_log = self->y_scale == DW_CHART_SCALE_LOG;
  self->y_scale = scale;
  self->zoomed_y = FALSE;
  dw_chart_queue_all (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_Y_SCALE]);
  if (was_log != (scale == DW_CHART_SCALE_LOG))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOG_Y]);
}

void
dw_chart_set_y_range (DwChart *self, double y0, double y1)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (!(isfinite (y0) && isfinite (y1) && y1 > y0))
    y0 = y1 = NAN;
  self->range_y0 = y0;
  self->range_y1 = y1;
  self->zoomed_y = FALSE;
  dw_chart_queue_all (self);
}

gboolean
dw_chart_get_y_range (DwChart *self, double *y0, double *y1)
{
  g_return_val_if_fail (DW_IS_CHART (self), FALSE);
  if (y0 != NULL)
    *y0 = self->range_y0;
  if (y1 != NULL)
    *y1 = self->range_y1;
  return isfinite (self->range_y0);
}

void
dw_chart_set_follow_latest (DwChart *self, gboolean follow)
{
  g_return_if_fail (DW_IS_CHART (self));
  follow = !!follow;
  if (self->follow_latest == follow)
    return;
  self->follow_latest = follow;
  dw_chart_queue_all (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FOLLOW_LATEST]);
}

gboolean
dw_chart_get_follow_latest (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), FALSE);
  return self->follow_latest;
}

void
dw_chart_set_follow_span (DwChart *self, double span)
{
  g_return_if_fail (DW_IS_CHART (self));
  self->follow_span = isfinite (span) && span > 0 ? span : 0;
  dw_chart_queue_all (self);
}

double
dw_chart_data_to_widget_x (DwChart *self, double x)
{
  DwChartFrame f;

  g_return_val_if_fail (DW_IS_CHART (self), NAN);
  _dw_chart_make_frame (self, &f, gtk_widget_get_width (GTK_WIDGET (self)),
                        gtk_widget_get_height (GTK_WIDGET (self)));
  return dw_chart_frame_x (&f, x);
}

void
dw_chart_set_y_unit (DwChart *self, const char *unit)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (unit != NULL && *unit == '\0')
    unit = NULL;
  if (g_strcmp0 (unit, self->y_unit) == 0)
    return;
  g_free (self->y_unit);
  self->y_unit = g_strdup (unit);
  dw_chart_queue_all (self);
}

const char *
dw_chart_get_y_unit (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  return self->y_unit;
}

void
dw_chart_set_natural_width (DwChart *self, int width)
{
  g_return_if_fail (DW_IS_CHART (self));
  self->natural_width = width;
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

DwXMode
dw_chart_get_x_mode (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), DW_X_STEP);
  return self->x_mode;
}

void
dw_chart_set_x_mode (DwChart *self, DwXMode mode)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (self->x_mode == mode)
    return;
  self->x_mode = mode;
  self->zoomed = self->zoomed_y = FALSE;
  self->cursor_x = NAN;
  dw_chart_queue_all (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_X_MODE]);
}

double
dw_chart_get_smoothing (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), 0);
  return self->smoothing;
}

void
dw_chart_set_smoothing (DwChart *self, double smoothing)
{
  g_return_if_fail (DW_IS_CHART (self));
  smoothing = CLAMP (smoothing, 0, 0.999);
  if (self->smoothing == smoothing)
    return;
  self->smoothing = smoothing;
  for (guint i = 0; i < self->series->len; i++)
    dw_plot_series_set_smoothing (((DwChartSeries *)g_ptr_array_index (self->series, i))->data,
                                  smoothing);
  dw_chart_queue_all (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SMOOTHING]);
}

gboolean
dw_chart_get_ignore_outliers (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), FALSE);
  return self->ignore_outliers;
}

void
dw_chart_set_ignore_outliers (DwChart *self, gboolean ignore)
{
  g_return_if_fail (DW_IS_CHART (self));
  ignore = !!ignore;
  if (self->ignore_outliers == ignore)
    return;
  self->ignore_outliers = ignore;
  dw_chart_queue_all (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_IGNORE_OUTLIERS]);
}

double
dw_chart_get_cursor_x (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), NAN);
  return self->cursor_x;
}

void
dw_chart_set_cursor_x (DwChart *self, double x)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (self->cursor_x == x || (isnan (x) && isnan (self->cursor_x)))
    return;
  self->cursor_x = x;
  if (isnan (x))
    {
      self->hovering = FALSE;
      if (self->readout != NULL)
        gtk_popover_popdown (GTK_POPOVER (self->readout));
    }
  /* Only the overlay changes: the data layer keeps its render node. */
  dw_chart_queue_overlay (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CURSOR_X]);
}

/* ---------------------------------------------------------------- data */

DwPlotSeries *
dw_chart_add_series (DwChart *self, const char *id, const char *label, const GdkRGBA *color)
{
  DwChartSeries *s;

  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  g_return_val_if_fail (id != NULL, NULL);
  if ((s = (gpointer)dw_chart_get_series (self, id)) != NULL)
    return (DwPlotSeries *)s;
  s = g_new0 (DwChartSeries, 1);
  s->id = g_strdup (id);
  s->label = g_strdup (label ? label : id);
  if (color)
    s->color = *color;
  else
    dw_chart_style_parse (&s->color, "#3584e4");
  s->data = dw_plot_series_new (self->smoothing);
  g_ptr_array_add (self->series, s);
  dw_chart_data_changed (self);
  return s->data;
}

DwPlotSeries *
dw_chart_get_series (DwChart *self, const char *id)
{
  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  for (guint i = 0; i < self->series->len; i++)
    {
      DwChartSeries *s = g_ptr_array_index (self->series, i);
      if (g_str_equal (s->id, id))
        return s->data;
    }
  return NULL;
}

char **
dw_chart_dup_series_labels (DwChart *self)
{
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();

  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  for (guint i = 0; i < self->series->len; i++)
    g_strv_builder_add (b, ((DwChartSeries *)g_ptr_array_index (self->series, i))->label);
  return g_strv_builder_end (b);
}

guint
dw_chart_get_n_series (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), 0);
  return self->series->len;
}

void
dw_chart_remove_series (DwChart *self, const char *id)
{
  g_return_if_fail (DW_IS_CHART (self));
  for (guint i = 0; i < self->series->len; i++)
    if (g_str_equal (((DwChartSeries *)g_ptr_array_index (self->series, i))->id, id))
      {
        g_ptr_array_remove_index (self->series, i);
        dw_chart_data_changed (self);
        return;
      }
}

void
dw_chart_clear (DwChart *self)
{
  g_return_if_fail (DW_IS_CHART (self));
  g_ptr_array_set_size (self->series, 0);
  g_ptr_array_set_size (self->markers, 0);
  self->zoomed = self->zoomed_y = FALSE;
  dw_chart_data_changed (self);
}

static gboolean
dw_chart_tick_cb (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  DwChart *self = DW_CHART (widget);

  self->tick_id = 0;
  dw_chart_queue_all (self);
  return G_SOURCE_REMOVE;
}

void
dw_chart_data_changed (DwChart *self)
{
  g_return_if_fail (DW_IS_CHART (self));
  self->bounds_valid = FALSE;
  /* Coalesce: however many appends arrive, the chart redraws once, at the next frame. */
  if (self->tick_id == 0)
    self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), dw_chart_tick_cb, NULL, NULL);
}

void
dw_chart_add_threshold (DwChart *self, double value, DwThresholdKind kind, const char *label)
{
  DwChartThreshold *t;

  g_return_if_fail (DW_IS_CHART (self));
  t = g_new0 (DwChartThreshold, 1);
  t->value = value;
  t->kind = kind;
  t->label = g_strdup (label);
  g_ptr_array_add (self->thresholds, t);
  dw_chart_queue_all (self);
}

void
dw_chart_set_band (DwChart *self, double lo, double hi)
{
  g_return_if_fail (DW_IS_CHART (self));
  self->band_lo = lo;
  self->band_hi = hi;
  dw_chart_queue_all (self);
}

void
dw_chart_add_marker (DwChart *self, gint64 step, DwMarkerSeverity severity, const char *title,
                     gboolean show_label)
{
  DwChartMarker *m;

  g_return_if_fail (DW_IS_CHART (self));
  m = g_new0 (DwChartMarker, 1);
  m->step = step;
  m->severity = severity;
  m->title = g_strdup (title);
  m->show_label = show_label;
  g_ptr_array_add (self->markers, m);
  dw_chart_queue_all (self);
}

void
dw_chart_clear_markers (DwChart *self)
{
  g_return_if_fail (DW_IS_CHART (self));
  g_ptr_array_set_size (self->markers, 0);
  dw_chart_queue_all (self);
}

void
dw_chart_get_view (DwChart *self, double *x0, double *x1, double *y0, double *y1)
{
  g_return_if_fail (DW_IS_CHART (self));
  _dw_chart_ensure_bounds (self);
  if (x0)
    *x0 = self->bx0;
  if (x1)
    *x1 = self->bx1;
  if (y0)
    *y0 = self->by0;
  if (y1)
    *y1 = self->by1;
}

void
dw_chart_zoom (DwChart *self, double x0, double x1, double y0, double y1)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (!(x1 > x0))
    return;
  self->zoomed = TRUE;
  self->zx0 = x0;
  self->zx1 = x1;
  self->zoomed_y = isfinite (y0) && isfinite (y1) && y1 > y0;
  self->zy0 = y0;
  self->zy1 = y1;
  dw_chart_queue_all (self);
  g_signal_emit (self, signals[SIGNAL_ZOOM_CHANGED], 0);
}

void
dw_chart_reset_zoom (DwChart *self)
{
  g_return_if_fail (DW_IS_CHART (self));
  if (!self->zoomed && !self->zoomed_y)
    return;
  self->zoomed = self->zoomed_y = FALSE;
  dw_chart_queue_all (self);
  g_signal_emit (self, signals[SIGNAL_ZOOM_CHANGED], 0);
}

gboolean
dw_chart_is_zoomed (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), FALSE);
  return self->zoomed;
}

void
dw_chart_get_marker_counts (DwChart *self, guint *n_nonfinite, guint *n_clipped, guint *n_restarts)
{
  g_return_if_fail (DW_IS_CHART (self));
  *n_nonfinite = self->n_nonfinite;
  *n_clipped = self->n_clipped;
  *n_restarts = self->n_restarts;
}

char *
dw_chart_dup_marker_labels (DwChart *self)
{
  g_return_val_if_fail (DW_IS_CHART (self), NULL);
  return g_strdup (self->band_labels->str);
}
