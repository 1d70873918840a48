/* dw-wheel-guard.h — value widgets that never take the mouse wheel
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A GtkRange (GtkScale) or GtkSpinButton changes its value on every wheel notch over it, so
 * scrolling a page of controls with the wheel edits whatever slider passes under the pointer.
 * Guarded widgets let the wheel through to the scrolled window around them: the page scrolls,
 * the value stays. The keyboard (arrows, Page Up/Down) and dragging still change it.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Stops @widget from taking wheel events: its own scroll controllers are removed, so the events
 * propagate to its ancestors (the enclosing GtkScrolledWindow scrolls). */
void dw_wheel_guard_attach (GtkWidget *widget);

G_END_DECLS
