/* dw-ui-test-util.c — helpers shared by the GUI tests and benchmarks (see dw-ui-test-util.h)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-ui-test-util.h"

#include <glib/gstdio.h>

#include "dw-tune-view.h"
#include "dw-window.h"

#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

#include <gdk/x11/gdkx.h>

void
dw_ui_test_iterate (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

GtkWindow *
dw_ui_test_find_toplevel (GType type)
{
  GListModel *toplevels = gtk_window_get_toplevels (); /* transfer none */

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) window = g_list_model_get_item (toplevels, i);

      if (G_TYPE_CHECK_INSTANCE_TYPE (window, type))
        return window;
    }
  return NULL;
}

long
dw_ui_test_rss_kb (void)
{
  g_autofree char *status = NULL;
  const char *p;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return -1;
  p = strstr (status, "VmRSS:");
  return p ? atol (p + 6) : -1;
}

void
dw_ui_test_iterate_ms (guint ms)
{
  gint64 until = g_get_monotonic_time () + (gint64)ms * 1000;

  while (g_get_monotonic_time () < until)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
}

/* libXtst's entry points (declared here: only the runtime library is installed, not its
 * headers; the signatures are those of <X11/extensions/XTest.h>), and the three Xlib calls this
 * file makes, from libX11 (so the tests link no X library: the build needs nothing beyond GTK). */
typedef int (*FakeMotionFunc) (Display *dpy, int screen, int x, int y, unsigned long delay);
typedef int (*FakeButtonFunc) (Display *dpy, unsigned int button, Bool is_press,
                               unsigned long delay);
typedef int (*FakeKeyFunc) (Display *dpy, unsigned int keycode, Bool is_press, unsigned long delay);
typedef Bool (*TranslateFunc) (Display *dpy, Window src, Window dest, int x, int y, int *rx,
                               int *ry, Window *child);
typedef int (*SyncFunc) (Display *dpy, Bool discard);
typedef KeyCode (*KeysymToKeycodeFunc) (Display *dpy, KeySym keysym);

static struct
{
  gboolean tried;
  FakeMotionFunc motion;
  FakeButtonFunc button;
  FakeKeyFunc key;
  TranslateFunc translate;
  SyncFunc sync;
  KeysymToKeycodeFunc keysym_to_keycode;
} xtest;

static Display *
xtest_display (GtkWidget *widget)
{
  GdkDisplay *display = gtk_widget_get_display (widget);

  if (!GDK_IS_X11_DISPLAY (display))
    return NULL;
  if (!xtest.tried)
    {
      void *tst = dlopen ("libXtst.so.6", RTLD_NOW | RTLD_LOCAL);
      void *x11 = dlopen ("libX11.so.6", RTLD_NOW | RTLD_LOCAL);

      xtest.tried = TRUE;
      if (tst != NULL && x11 != NULL)
        {
          *(void **)&xtest.motion = dlsym (tst, "XTestFakeMotionEvent");
          *(void **)&xtest.button = dlsym (tst, "XTestFakeButtonEvent");
          *(void **)&xtest.key = dlsym (tst, "XTestFakeKeyEvent");
          *(void **)&xtest.translate = dlsym (x11, "XTranslateCoordinates");
          *(void **)&xtest.sync = dlsym (x11, "XSync");
          *(void **)&xtest.keysym_to_keycode = dlsym (x11, "XKeysymToKeycode");
        }
      if (!xtest.button || !xtest.key || !xtest.translate || !xtest.sync
          || !xtest.keysym_to_keycode)
        xtest.motion = NULL;
    }
  return xtest.motion ? gdk_x11_display_get_xdisplay (display) : NULL;
}

gboolean
dw_ui_test_xtest_available (GtkWidget *widget)
{
  return xtest_display (widget) != NULL;
}

/* @widget's (@x, @y) on the root window. */
static gboolean
root_point (GtkWidget *widget, double x, double y, int *rx, int *ry)
{
  GtkNative *native = gtk_widget_get_native (widget);
  Display *dpy = xtest_display (widget);
  double nx, ny, sx, sy;
  Window child;

  if (dpy == NULL || native == NULL || gtk_native_get_surface (native) == NULL
      || !gtk_widget_get_mapped (widget)
      || !gtk_widget_translate_coordinates (widget, GTK_WIDGET (native), x, y, &nx, &ny))
    return FALSE;
  gtk_native_get_surface_transform (native, &sx, &sy);
  return xtest.translate (dpy, gdk_x11_surface_get_xid (gtk_native_get_surface (native)),
                          DefaultRootWindow (dpy), (int)(nx + sx), (int)(ny + sy), rx, ry, &child);
}

static void
xtest_settle (Display *dpy)
{
  xtest.sync (dpy, False);
  dw_ui_test_iterate_ms (60);
}

gboolean
dw_ui_test_pointer_move (GtkWidget *widget, double x, double y)
{
  Display *dpy = xtest_display (widget);
  int rx, ry;

  if (dpy == NULL || !root_point (widget, x, y, &rx, &ry))
    return FALSE;
  xtest.motion (dpy, -1, rx, ry, 0);
  xtest_settle (dpy);
  return TRUE;
}

gboolean
dw_ui_test_wheel (GtkWidget *widget, double x, double y, int notches)
{
  Display *dpy = xtest_display (widget);

  if (!dw_ui_test_pointer_move (widget, x, y))
    return FALSE;
  for (int i = 0; i < ABS (notches); i++)
    {
      xtest.button (dpy, notches > 0 ? 5 : 4, True, 0);
      xtest.button (dpy, notches > 0 ? 5 : 4, False, 0);
      xtest_settle (dpy);
    }
  return TRUE;
}

static void
pointer_arrived_cb (GtkEventControllerMotion *motion, double x, double y, gboolean *arrived)
{
  *arrived = TRUE;
}

/* Moves the pointer to @widget's (@x, @y) and waits (at most 3 s) until @widget has seen it there,
 * as a person sees the hover before pressing: a window that was just presented, or the stacking
 * of a window that was just destroyed, can keep X from delivering the first motion to it, and a
 * press sent then lands elsewhere. */
static gboolean
pointer_reaches (GtkWidget *widget, double x, double y)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();
  gboolean arrived = FALSE;
  gint64 deadline = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;

  gtk_event_controller_set_propagation_phase (motion, GTK_PHASE_CAPTURE);
  g_signal_connect (motion, "motion", G_CALLBACK (pointer_arrived_cb), &arrived);
  g_signal_connect (motion, "enter", G_CALLBACK (pointer_arrived_cb), &arrived);
  gtk_widget_add_controller (widget, motion);
  for (int i = 0; !arrived && g_get_monotonic_time () < deadline; i++)
    if (!dw_ui_test_pointer_move (widget, x + (i % 2), y))
      break;
  gtk_widget_remove_controller (widget, motion);
  return arrived;
}

gboolean
dw_ui_test_click_button (GtkWidget *widget, double x, double y, guint button)
{
  Display *dpy = xtest_display (widget);

  if (!pointer_reaches (widget, x, y))
    return FALSE;
  xtest.button (dpy, button, True, 0);
  xtest_settle (dpy);
  xtest.button (dpy, button, False, 0);
  xtest_settle (dpy);
  return TRUE;
}

gboolean
dw_ui_test_click (GtkWidget *widget, double x, double y)
{
  return dw_ui_test_click_button (widget, x, y, 1);
}

gboolean
dw_ui_test_key (GtkWidget *widget, guint keyval, gboolean control)
{
  Display *dpy = xtest_display (widget);
  KeyCode code, ctrl;

  if (dpy == NULL
      || !dw_ui_test_pointer_move (widget, gtk_widget_get_width (widget) / 2.0,
                                   gtk_widget_get_height (widget) / 2.0))
    return FALSE;
  code = xtest.keysym_to_keycode (dpy, keyval); /* GDK keyvals are X keysyms */
  ctrl = xtest.keysym_to_keycode (dpy, GDK_KEY_Control_L);
  if (code == 0)
    return FALSE;
  if (control)
    xtest.key (dpy, ctrl, True, 0);
  xtest.key (dpy, code, True, 0);
  xtest.key (dpy, code, False, 0);
  if (control)
    xtest.key (dpy, ctrl, False, 0);
  xtest_settle (dpy);
  return TRUE;
}

gboolean
dw_ui_test_drag (GtkWidget *widget, double x0, double y0, double x1, double y1)
{
  Display *dpy = xtest_display (widget);

  if (!pointer_reaches (widget, x0, y0))
    return FALSE;
  xtest.button (dpy, 1, True, 0);
  xtest_settle (dpy);
  for (int i = 1; i <= 8; i++)
    dw_ui_test_pointer_move (widget, x0 + (x1 - x0) * i / 8, y0 + (y1 - y0) * i / 8);
  xtest.button (dpy, 1, False, 0);
  xtest_settle (dpy);
  return TRUE;
}

void
dw_ui_test_remove_tree (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        dw_ui_test_remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

gboolean
dw_ui_test_wait_window_ready (gpointer window, guint timeout_ms)
{
  gint64 until = g_get_monotonic_time () + (gint64)timeout_ms * 1000;

  while (g_get_monotonic_time () < until)
    {
      g_main_context_iteration (NULL, FALSE);
      if (dw_window_is_ready (DW_WINDOW (window)))
        {
          dw_ui_test_iterate_ms (100);
          return TRUE;
        }
      g_usleep (1000);
    }
  return FALSE;
}

GtkWidget *
dw_ui_test_find_named (GtkWidget *widget, const char *name)
{
  if (g_strcmp0 (gtk_widget_get_name (widget), name) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = dw_ui_test_find_named (child, name);
      if (found != NULL)
        return found;
    }
  return NULL;
}

void
dw_ui_test_wait_tune_idle (gpointer view)
{
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;

  for (int iteration = 0; iteration < 5; iteration++)
    g_main_context_iteration (NULL, FALSE);
  while (dw_tune_view_get_busy (DW_TUNE_VIEW (view)))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
    }
}
