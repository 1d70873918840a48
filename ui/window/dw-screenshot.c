/* dw-screenshot.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-screenshot"

#include "config.h"

#include <glib/gi18n.h>

#include "dw-screenshot.h"

/* Frames drawn after the window says it is ready: the charts draw their data in the frame after
 * it arrives (one tick callback), and the hover/overlay layers in the same frame. */
#define SETTLE_FRAMES 3

typedef struct
{
  GtkWidget *window;
  char *path;
  DwReadyFunc ready;
  void (*done) (GtkWidget *window, const GError *error, gpointer data);
  gpointer data;
  guint frames;
  guint tick_id;
  guint timeout_id;
  gulong paint_id;
  GdkFrameClock *clock;
} Shot;

static void
shot_finish (Shot *shot, const GError *error)
{
  g_clear_handle_id (&shot->timeout_id, g_source_remove);
  if (shot->paint_id != 0)
    g_clear_signal_handler (&shot->paint_id, shot->clock);
  g_clear_object (&shot->clock);
  if (shot->tick_id != 0)
    gtk_widget_remove_tick_callback (shot->window, shot->tick_id);
  shot->tick_id = 0;
  shot->done (shot->window, error, shot->data);
  g_object_unref (shot->window);
  g_free (shot->path);
  g_free (shot);
}

gboolean
dw_screenshot_save (GtkWidget *widget, const char *path, GError **error)
{
  g_autoptr (GdkPaintable) paintable = NULL;
  g_autoptr (GskRenderNode) node = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  GtkSnapshot *snapshot;
  GskRenderer *renderer;
  GtkNative *native;
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);

  native = gtk_widget_get_native (widget);
  renderer = native ? gtk_native_get_renderer (native) : NULL;
  if (renderer == NULL || width <= 0 || height <= 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _ ("Cannot take a screenshot: the window is not shown"));
      return FALSE;
    }
  /* The same render nodes the window shows, rendered by its own renderer into a texture. */
  paintable = gtk_widget_paintable_new (widget);
  snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _ ("Cannot take a screenshot: the window drew nothing"));
      return FALSE;
    }
  texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (!gdk_texture_save_to_png (texture, path))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   /* TRANSLATORS: %s is a file path */
                   _ ("Could not write the screenshot to “%s”"), path);
      return FALSE;
    }
  return TRUE;
}

/* After the paint phase of a frame: every widget has its fresh render node. */
static void
on_after_paint (GdkFrameClock *clock, Shot *shot)
{
  g_autoptr (GError) error = NULL;

  if (!shot->ready (shot->window))
    {
      shot->frames = 0;
      return;
    }
  if (++shot->frames < SETTLE_FRAMES)
    return;
  g_debug ("saving %s", shot->path);
  dw_screenshot_save (shot->window, shot->path, &error);
  shot_finish (shot, error);
}

/* Keeps the frame clock running (a frame per refresh) until the shot is taken. */
static gboolean
on_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  Shot *shot = user_data;

  if (shot->paint_id == 0)
    {
      shot->clock = g_object_ref (clock);
      shot->paint_id = g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), shot);
    }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_timeout (gpointer user_data)
{
  Shot *shot = user_data;
  g_autoptr (GError) error = NULL;

  shot->timeout_id = 0;
  g_set_error (&error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
               _ ("Gave up on the screenshot: the window was still loading"));
  shot_finish (shot, error);
  return G_SOURCE_REMOVE;
}

void
dw_screenshot_window (GtkWidget *window, const char *path, DwReadyFunc ready, guint timeout_ms,
                      void (*done) (GtkWidget *window, const GError *error, gpointer data),
                      gpointer data)
{
  Shot *shot = g_new0 (Shot, 1);

  g_return_if_fail (GTK_IS_WIDGET (window));
  shot->window = g_object_ref (window);
  shot->path = g_strdup (path);
  shot->ready = ready;
  shot->done = done;
  shot->data = data;
  /* A tick callback keeps the frame clock running, so frames keep coming until we are done. */
  shot->tick_id = gtk_widget_add_tick_callback (window, on_tick, shot, NULL);
  shot->timeout_id = g_timeout_add (timeout_ms, on_timeout, shot);
}
