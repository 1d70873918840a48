/* dw-window.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The window shows what its session (dw-session.h) holds: the sidebar is bound to the session's
 * run list, the pages show the selected runs. Its actions are in dw-window-actions.c, drag and
 * drop in dw-window-dnd.c.
 */
#define G_LOG_DOMAIN "dw-window"

#include "config.h"

#include <inttypes.h>

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "dw-drill-actions.h"
#include "dw-health.h"
#include "dw-window-private.h"

/* A run counts as live for this long after its last new point. */
#define LIVE_WINDOW_S 60

G_DEFINE_FINAL_TYPE (DwWindow, dw_window, ADW_TYPE_APPLICATION_WINDOW)

enum
{
  PROP_0,
  PROP_STORE,
  PROP_SHOW_HIDDEN_RUNS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define MAX_TOAST_LOG 64

void
_dw_window_toast (DwWindow *self, const char *text)
{
  /* libadwaita 1.2 toast titles are Pango markup: a path with & or < must show as written */
  g_autofree char *escaped = g_markup_escape_text (text, -1);
  AdwToast *toast = adw_toast_new (escaped);

  g_debug ("toast: %s", text);
  if (self->toasts->len == MAX_TOAST_LOG)
    g_ptr_array_remove_index (self->toasts, 0);
  g_ptr_array_add (self->toasts, g_strdup (text));
  adw_toast_set_timeout (toast, 8);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

/* ---------------------------------------------------------------- runs and selection */

DwRunRow *
_dw_window_find_row (DwWindow *self, gint64 run_id)
{
  guint position;

  if (dw_session_lookup (self->session, run_id, &position) == NULL)
    return NULL;
  return DW_RUN_ROW (gtk_list_box_get_row_at_index (self->run_list, (int)position));
}

static void
update_health_badge (DwWindow *self)
{
  guint n = dw_health_panel_get_n_events (self->health_panel);

  adw_view_stack_page_set_needs_attention (self->health_page, n > 0);
  adw_view_stack_page_set_badge_number (self->health_page, n);
}

static gboolean
is_shown (DwWindow *self, gint64 run_id)
{
  for (guint i = 0; i < self->shown->len; i++)
    if (g_array_index (self->shown, gint64, i) == run_id)
      return TRUE;
  return FALSE;
}

/* The one-line verdict over the pages for the first shown run in trouble: where it collapsed
 * and why, and the first sign before that ("Collapsed at step 140: … · first sign at step 87:
 * …"); a warning line when rules fire without a collapse; hidden for a healthy run. */
static void
update_verdict (DwWindow *self)
{
  g_autofree char *text = NULL;
  gboolean critical = FALSE;

  for (guint i = 0; i < self->shown->len && text == NULL; i++)
    {
      gint64 id = g_array_index (self->shown, gint64, i);
      DwRunItem *item = dw_session_lookup (self->session, id, NULL);
      DwHealthMonitor *monitor = item ? dw_run_item_get_monitor (item) : NULL;
      g_autoptr (GPtrArray) events = NULL;
      const DwHealthEvent *first = NULL, *crit = NULL;
      guint n_warn, n_crit, n_at_end;
      g_autofree char *line = NULL;

      if (monitor == NULL)
        continue;
      events = dw_health_monitor_get_events (monitor);
      dw_health_monitor_count (monitor, events, &n_warn, &n_crit, &n_at_end);
      for (guint j = 0; j < events->len; j++)
        {
          const DwHealthEvent *ev = g_ptr_array_index (events, j);

          if (ev->severity < DW_HEALTH_WARNING)
            continue;
          if (first == NULL)
            first = ev;
          if (crit == NULL && ev->severity == DW_HEALTH_CRITICAL)
            crit = ev;
        }
      if (first == NULL)
        continue;
      critical = crit != NULL || dw_run_item_get_status (item) == DW_RUN_STATUS_COLLAPSED;
      if (crit != NULL)
        /* TRANSLATORS: verdict banner: the step and rule of the first critical event */
        line = g_strdup_printf (_ ("Collapsed at step %" PRId64 ": %s"), crit->first_step,
                                _ (crit->title));
      else if (critical)
        /* TRANSLATORS: verdict banner: a run that ended with health rules still firing */
        line = g_strdup_printf (ngettext ("Collapsed: %u rule still firing at the end",
                                          "Collapsed: %u rules still firing at the end", n_at_end),
                                n_at_end);
      else
        /* TRANSLATORS: verdict banner: the first warning of a run that did not collapse */
        line = g_strdup_printf (_ ("Warning since step %" PRId64 ": %s"), first->first_step,
                                _ (first->title));
      if (critical && first != crit)
        {
          /* TRANSLATORS: verdict banner, after the collapse: the earliest sign of it */
          g_autofree char *since = g_strdup_printf (_ ("%s · first sign at step %" PRId64 ": %s"),
                                                    line, first->first_step, _ (first->title));
          g_free (line);
          line = g_steal_pointer (&since);
        }
      if (self->shown->len > 1)
        text = g_strdup_printf ("%s — %s", dw_run_item_get_name (item), line);
      else
        text = g_steal_pointer (&line);
    }
  gtk_label_set_text (self->verdict_label, text ? text : "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->verdict_label), text);
  if (critical)
    {
      gtk_widget_add_css_class (self->verdict_box, "critical");
      gtk_widget_remove_css_class (self->verdict_box, "warning");
    }
  else
    {
      gtk_widget_add_css_class (self->verdict_box, "warning");
      gtk_widget_remove_css_class (self->verdict_box, "critical");
    }
  gtk_revealer_set_reveal_child (self->verdict_revealer, text != NULL);
}

const char *
dw_window_get_verdict (DwWindow *self)
{
  g_return_val_if_fail (DW_IS_WINDOW (self), NULL);
  return gtk_revealer_get_reveal_child (self->verdict_revealer)
           ? gtk_label_get_text (self->verdict_label)
           : NULL;
}

static void
show_health (DwWindow *self)
{
  dw_health_panel_clear (self->health_panel);
  for (guint i = 0; i < self->shown->len; i++)
    {
      gint64 id = g_array_index (self->shown, gint64, i);
      DwRunItem *item = dw_session_lookup (self->session, id, NULL);
      DwHealthMonitor *monitor = item ? dw_run_item_get_monitor (item) : NULL;
      g_autoptr (GPtrArray) events = NULL;

      if (monitor == NULL)
        continue;
      events = dw_health_monitor_get_events (monitor);
      dw_health_panel_add_events (self->health_panel, id, dw_run_item_get_name (item), events);
      dw_monitor_view_set_events (self->monitor_view, id, events);
    }
  update_health_badge (self);
  update_verdict (self);
}

/* The Tune page re-derives the run's batches in a worker: only worth it once it is looked at. */
static void
sync_tune_view (DwWindow *self)
{
  const char *page = adw_view_stack_get_visible_child_name (self->view_stack);
  gint64 run_id = self->shown->len > 0 ? g_array_index (self->shown, gint64, 0) : 0;

  if (g_strcmp0 (page, "tune") != 0 || run_id == 0)
    return;
  if (dw_tune_view_get_run_id (self->tune_view) != run_id)
    dw_tune_view_set_run (self->tune_view, dw_session_get_store (self->session), run_id);
}

/* The title names the shown run, or how many are overlaid. */
static void
update_title (DwWindow *self, GPtrArray *infos)
{
  if (infos->len == 1)
    adw_view_switcher_title_set_title (self->switcher_title,
                                       ((DwRunInfo *)g_ptr_array_index (infos, 0))->name);
  else if (infos->len > 1)
    {
      /* TRANSLATORS: window title when several runs are overlaid */
      g_autofree char *title
        = g_strdup_printf (ngettext ("%u run", "%u runs", infos->len), infos->len);
      adw_view_switcher_title_set_title (self->switcher_title, title);
    }
  else
    adw_view_switcher_title_set_title (self->switcher_title, _ ("Driftwatch"));
}

static int
compare_row_index (gconstpointer a, gconstpointer b)
{
  return gtk_list_box_row_get_index ((GtkListBoxRow *)a)
         - gtk_list_box_row_get_index ((GtkListBoxRow *)b);
}

static void
show_selected (DwWindow *self)
{
  g_autoptr (GList) rows = gtk_list_box_get_selected_rows (self->run_list);
  g_autoptr (GPtrArray) infos = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_run_info_free);
  g_autoptr (GPtrArray) drawn = g_ptr_array_new ();

  /* Keep the sidebar order (newest first), so colours and legend order are stable. */
  rows = g_list_sort (rows, (GCompareFunc)compare_row_index);
  g_array_set_size (self->shown, 0);
  for (GList *link = rows; link != NULL; link = link->next)
    {
      DwRunInfo *info = dw_run_info_copy (dw_run_row_get_info (link->data));

      g_ptr_array_add (infos, info);
      g_array_append_val (self->shown, info->id);
      /* the eye button: selected but not drawn */
      if (dw_run_item_get_visible (dw_run_row_get_item (link->data)))
        g_ptr_array_add (drawn, info);
    }

  dw_monitor_view_set_runs (self->monitor_view, drawn);
  show_health (self);

  if (infos->len > 0 && self->settings != NULL)
    {
      /* keyed by the store: a run id means nothing in another store */
      g_autofree char *id = g_strdup_printf (
        "%s\t%" G_GINT64_FORMAT, dw_store_get_path (dw_session_get_store (self->session)),
        ((DwRunInfo *)g_ptr_array_index (infos, 0))->id);
      g_settings_set_string (self->settings, "last-run", id);
    }
  update_title (self, infos);
  if (infos->len > 0)
    adw_leaflet_navigate (self->leaflet, ADW_NAVIGATION_DIRECTION_FORWARD);
  sync_tune_view (self);
}

static void
on_selection_changed (GtkListBox *list, DwWindow *self)
{
  if (self->keynav_kept != NULL && !self->updating_list)
    {
      /* Moving the keyboard focus (Tab, arrows) must not change what is shown: GtkListBox
       * selects the row the focus lands on, which dropped a multi-run overlay. Put it back. */
      self->updating_list = TRUE;
      gtk_list_box_unselect_all (list);
      for (guint i = 0; i < self->keynav_kept->len; i++)
        {
          DwRunRow *row = _dw_window_find_row (self, g_array_index (self->keynav_kept, gint64, i));
          if (row != NULL)
            gtk_list_box_select_row (list, GTK_LIST_BOX_ROW (row));
        }
      self->updating_list = FALSE;
      return;
    }
  /* Disposing the list unselects its rows: nothing to show any more. */
  if (!self->updating_list && !gtk_widget_in_destruction (GTK_WIDGET (self)))
    show_selected (self);
}

/* The sidebar filter: runs whose name or source contains the text (any case), and that are not
 * hidden unless hidden runs are shown. A row filtered out is made invisible rather than removed:
 * a filtered-out run stays selected, and shown in the charts. (A list box bound to a model has
 * no filter function of its own.) */
static gboolean
run_matches_filter (DwWindow *self, DwRunItem *item)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->run_filter));
  const DwRunInfo *info = dw_run_item_get_info (item);
  g_autofree char *needle = NULL, *name = NULL, *source = NULL;

  if (dw_run_item_get_hidden (item) && !self->show_hidden)
    return FALSE;
  if (text == NULL || *text == '\0')
    return TRUE;
  needle = g_utf8_casefold (text, -1);
  name = g_utf8_casefold (info->name ? info->name : "", -1);
  source = g_utf8_casefold (info->source ? info->source : "", -1);
  return strstr (name, needle) != NULL || strstr (source, needle) != NULL;
}

void
_dw_window_apply_run_filter (DwWindow *self)
{
  GtkListBoxRow *row;

  for (int i = 0; (row = gtk_list_box_get_row_at_index (self->run_list, i)) != NULL; i++)
    gtk_widget_set_visible (GTK_WIDGET (row),
                            run_matches_filter (self, dw_run_row_get_item (DW_RUN_ROW (row))));
}

static void
on_run_filter_changed (GtkSearchEntry *entry, DwWindow *self)
{
  _dw_window_apply_run_filter (self);
}

static void
keynav_done_cb (gpointer data)
{
  DwWindow *self = data;

  g_clear_pointer (&self->keynav_kept, g_array_unref);
  g_object_unref (self);
}

/* A focus key in the run list: the selection is kept until the key has been handled. Space,
 * Enter and Ctrl+Space (select, toggle) are not focus keys and go on selecting. */
static gboolean
on_run_list_key (GtkEventControllerKey *controller, guint keyval, guint keycode,
                 GdkModifierType state, DwWindow *self)
{
  static const guint focus_keys[]
    = { GDK_KEY_Tab,  GDK_KEY_ISO_Left_Tab, GDK_KEY_KP_Tab,   GDK_KEY_Up,
        GDK_KEY_Down, GDK_KEY_KP_Up,        GDK_KEY_KP_Down,  GDK_KEY_Home,
        GDK_KEY_End,  GDK_KEY_Page_Up,      GDK_KEY_Page_Down };

  if (self->keynav_kept != NULL
      || ((state & (GDK_CONTROL_MASK | GDK_SHIFT_MASK)) != 0 && keyval != GDK_KEY_ISO_Left_Tab))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (focus_keys); i++)
    if (keyval == focus_keys[i])
      {
        self->keynav_kept = g_array_copy (self->shown);
        g_idle_add_once (keynav_done_cb, g_object_ref (self));
        break;
      }
  return FALSE;
}

/* At start-up, the run shown when the window was closed; else the newest. */
static void
select_first_run (DwWindow *self)
{
  g_autofree char *last
    = self->settings ? g_settings_get_string (self->settings, "last-run") : NULL;
  const char *tab = last ? strrchr (last, '\t') : NULL;
  const char *path = dw_store_get_path (dw_session_get_store (self->session));
  DwRunRow *row = NULL;

  /* "<store path>\t<run id>": only when it was this store */
  if (tab != NULL && strncmp (last, path, tab - last) == 0 && path[tab - last] == '\0')
    row = _dw_window_find_row (self, g_ascii_strtoll (tab + 1, NULL, 10));
  gtk_list_box_select_row (self->run_list, row ? GTK_LIST_BOX_ROW (row)
                                               : gtk_list_box_get_row_at_index (self->run_list, 0));
}

/* The session re-read its runs: rows of the runs still there kept their selection. */
static void
on_session_reloaded (DwSession *session, DwWindow *self)
{
  guint n_runs = g_list_model_get_n_items (dw_session_get_runs (session));

  if (gtk_widget_in_destruction (GTK_WIDGET (self)))
    return;
  self->updating_list = TRUE;
  if (n_runs > 0 && gtk_list_box_get_selected_row (self->run_list) == NULL)
    select_first_run (self);
  self->updating_list = FALSE;
  gtk_stack_set_visible_child_name (self->main_stack, n_runs > 0 ? "runs" : "empty");
  show_selected (self);
}

void
dw_window_reload_runs (DwWindow *self)
{
  g_autoptr (GError) error = NULL;

  g_return_if_fail (DW_IS_WINDOW (self));
  if (!dw_session_reload (self->session, &error))
    _dw_window_toast (self, error->message);
}

void
dw_window_select_runs (DwWindow *self, const gint64 *run_ids, guint n)
{
  g_return_if_fail (DW_IS_WINDOW (self));
  if (n == 0)
    return;
  self->updating_list = TRUE;
  gtk_list_box_unselect_all (self->run_list);
  for (guint i = 0; i < n; i++)
    {
      DwRunRow *row = _dw_window_find_row (self, run_ids[i]);
      if (row != NULL)
        gtk_list_box_select_row (self->run_list, GTK_LIST_BOX_ROW (row));
    }
  self->updating_list = FALSE;
  show_selected (self);
}

static void
on_session_health_changed (DwSession *session, gint64 run_id, DwWindow *self)
{
  if (is_shown (self, run_id) && !gtk_widget_in_destruction (GTK_WIDGET (self)))
    show_health (self);
}

/* ---------------------------------------------------------------- live updates */

static void
notify_events (DwWindow *self, const DwRunInfo *info, GPtrArray *fired)
{
  GApplication *app = G_APPLICATION (gtk_window_get_application (GTK_WINDOW (self)));

  if (fired == NULL || fired->len == 0)
    return;
  /* In the window, whatever the desktop notification setting */
  for (guint i = 0; i < fired->len; i++)
    {
      const DwHealthEvent *ev = g_ptr_array_index (fired, i);
      g_autofree char *text = NULL;

      if (ev->severity < DW_HEALTH_WARNING)
        continue;
      /* TRANSLATORS: toast when a health rule fires on a live run: run name, rule title, step */
      text = g_strdup_printf (_ ("%s: %s at step %" PRId64), info->name, _ (ev->title),
                              ev->first_step);
      _dw_window_toast (self, text);
    }
  if (app == NULL)
    return;
  if (self->settings != NULL && !g_settings_get_boolean (self->settings, "notifications"))
    return;
  for (guint i = 0; i < fired->len; i++)
    {
      const DwHealthEvent *ev = g_ptr_array_index (fired, i);
      g_autoptr (GNotification) n = NULL;
      g_autofree char *title = NULL, *body = NULL, *id = NULL;

      if (ev->severity < DW_HEALTH_WARNING)
        continue;
      /* TRANSLATORS: desktop notification title; %s is the run name */
      title = g_strdup_printf (_ ("Health warning in %s"), info->name);
      /* TRANSLATORS: desktop notification body: rule title, then the step it fired on */
      body = g_strdup_printf (_ ("%s (step %" PRId64 ")"), _ (ev->title), ev->first_step);
      n = g_notification_new (title);
      g_notification_set_body (n, body);
      g_notification_set_priority (n, ev->severity == DW_HEALTH_CRITICAL
                                        ? G_NOTIFICATION_PRIORITY_URGENT
                                        : G_NOTIFICATION_PRIORITY_HIGH);
      g_notification_set_default_action_and_target (n, "app.activate", NULL);
      id = g_strdup_printf ("health-%" G_GINT64_FORMAT "-%s", info->id, ev->rule_id);
      g_application_send_notification (app, id, n);
    }
}

static void
on_session_health_fired (DwSession *session, DwRunItem *item, GPtrArray *fired, DwWindow *self)
{
  notify_events (self, dw_run_item_get_info (item), fired);
}

static void
update_live_text (DwWindow *self)
{
  gint64 now_us = g_get_monotonic_time ();
  double now_wall = g_get_real_time () / 1e6;
  double newest_ago = INFINITY;
  g_autofree char *text = NULL;

  for (guint i = 0; i < self->shown->len; i++)
    {
      DwRunItem *item
        = dw_session_lookup (self->session, g_array_index (self->shown, gint64, i), NULL);
      const DwRunInfo *info = item ? dw_run_item_get_info (item) : NULL;
      gint64 seen_growth_us = item ? dw_run_item_get_seen_growth (item) : 0;
      double ago = INFINITY;

      if (info == NULL)
        continue;
      /* When the window saw the last point arrive; else the log's own wall time of it (the
       * trainer's clock may differ from ours, so only when nothing was seen here). */
      if (seen_growth_us > 0)
        ago = (now_us - seen_growth_us) / 1e6;
      else if (isfinite (info->last_wall_time) && info->last_wall_time <= now_wall + 5)
        ago = MAX (0, now_wall - info->last_wall_time);
      if (info->status == DW_RUN_STATUS_LIVE || (seen_growth_us > 0 && ago < LIVE_WINDOW_S))
        newest_ago = MIN (newest_ago, ago);
    }
  if (isfinite (newest_ago))
    /* TRANSLATORS: header subtitle while a shown run is being written */
    text = g_strdup_printf (_ ("live · last point %.0f s ago"), newest_ago);
  else
    text = g_strdup ("");
  /* the refresh runs every second: an unchanged header draws nothing */
  if (g_strcmp0 (text, self->live_text) == 0)
    return;
  g_free (self->live_text);
  self->live_text = g_steal_pointer (&text);
  gtk_label_set_label (self->live_label, self->live_text);
  gtk_widget_set_visible (GTK_WIDGET (self->live_label), *self->live_text != '\0');
}

static void
on_session_refreshed (DwSession *session, GArray *grown, DwWindow *self)
{
  gboolean shown_grew = FALSE;

  for (guint i = 0; i < grown->len; i++)
    shown_grew |= is_shown (self, g_array_index (grown, gint64, i));
  if (shown_grew)
    {
      /* Only the new tail is read and appended; each chart redraws at most once per frame. */
      dw_monitor_view_refresh (self->monitor_view);
      show_health (self);
    }
  update_live_text (self);
}

void
dw_window_refresh (DwWindow *self)
{
  g_return_if_fail (DW_IS_WINDOW (self));
  dw_session_refresh (self->session);
}

static void
start_refresh_timer (DwWindow *self)
{
  guint interval = self->settings ? g_settings_get_uint (self->settings, "refresh-interval") : 1000;

  dw_session_set_refresh_interval (self->session, interval);
}

/* ---------------------------------------------------------------- ingest */

static void
on_session_message (DwSession *session, const char *text, DwWindow *self)
{
  _dw_window_toast (self, text);
}

static void
on_session_ingested (DwSession *session, char **paths, GArray *run_ids, gboolean demo,
                     DwWindow *self)
{
  if (gtk_widget_in_destruction (GTK_WIDGET (self)))
    return;
  if (!demo && run_ids->len > 0)
    _dw_window_actions_remember_recent (self, paths);
  if (run_ids->len > 0)
    dw_window_select_runs (self, (const gint64 *)(gpointer)run_ids->data, run_ids->len);
}

void
dw_window_ingest_paths (DwWindow *self, const char *const *paths)
{
  g_return_if_fail (DW_IS_WINDOW (self));
  g_return_if_fail (paths != NULL);
  dw_session_set_follow (self->session,
                         self->settings == NULL || g_settings_get_boolean (self->settings, "live"));
  dw_session_ingest_paths (self->session, paths);
}

void
dw_window_load_demo (DwWindow *self, const char *dir)
{
  g_autofree char *path = NULL;

  g_return_if_fail (DW_IS_WINDOW (self));
  path = dir ? g_strdup (dir)
             : g_build_filename (g_get_user_cache_dir (), "driftwatch", "demo-collapse", NULL);
  dw_session_load_demo (self->session, path);
}

static void
on_show_step (DwHealthPanel *panel, gint64 run_id, gint64 step, DwWindow *self)
{
  dw_window_set_view (self, "monitor");
  dw_monitor_view_show_step (self->monitor_view, step);
}

/* ---------------------------------------------------------------- GObject */

static void
dw_window_dispose (GObject *object)
{
  DwWindow *self = DW_WINDOW (object);

  if (self->session != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->session, self);
      dw_session_set_refresh_interval (self->session, 0);
    }
  if (self->run_list != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->run_list, self);
      gtk_list_box_bind_model (self->run_list, NULL, NULL, NULL, NULL);
    }
  g_clear_object (&self->session);
  gtk_widget_dispose_template (GTK_WIDGET (self), DW_TYPE_WINDOW);
  G_OBJECT_CLASS (dw_window_parent_class)->dispose (object);
}

static void
dw_window_finalize (GObject *object)
{
  DwWindow *self = DW_WINDOW (object);

  g_clear_object (&self->settings);
  g_array_unref (self->shown);
  g_free (self->live_text);
  g_ptr_array_unref (self->toasts);
  G_OBJECT_CLASS (dw_window_parent_class)->finalize (object);
}

static void
dw_window_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwWindow *self = DW_WINDOW (object);

  switch (prop_id)
    {
    case PROP_STORE:
      g_value_set_object (value, self->session ? dw_session_get_store (self->session) : NULL);
      break;
    case PROP_SHOW_HIDDEN_RUNS:
      g_value_set_boolean (value, self->show_hidden);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_window_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  DwWindow *self = DW_WINDOW (object);

  switch (prop_id)
    {
    case PROP_STORE:
      g_assert (self->session == NULL);
      self->session = dw_session_new (g_value_get_object (value));
      break;
    case PROP_SHOW_HIDDEN_RUNS:
      self->show_hidden = g_value_get_boolean (value);
      _dw_window_apply_run_filter (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* The eye button of a run was toggled: the charts show the visible selected runs. */
static void
on_run_visible_changed (DwRunItem *item, GParamSpec *pspec, DwWindow *self)
{
  if (!gtk_widget_in_destruction (GTK_WIDGET (self)))
    show_selected (self);
}

static void
on_run_hidden_changed (DwRunItem *item, GParamSpec *pspec, DwWindow *self)
{
  DwRunRow *row = _dw_window_find_row (self, dw_run_item_get_id (item));

  /* a run hidden from the list leaves the charts too */
  if (row != NULL && dw_run_item_get_hidden (item) && !self->show_hidden)
    gtk_list_box_unselect_row (self->run_list, GTK_LIST_BOX_ROW (row));
  _dw_window_apply_run_filter (self);
}

static GtkWidget *
create_run_row (gpointer item, gpointer user_data)
{
  DwWindow *self = user_data;
  GtkWidget *row = dw_run_row_new (DW_RUN_ITEM (item));

  gtk_widget_set_visible (row, run_matches_filter (self, item));
  /* for as long as the window lives; an item gets one row per window */
  if (g_object_get_data (G_OBJECT (item), "dw-window-connected") != self)
    {
      g_object_set_data (G_OBJECT (item), "dw-window-connected", self);
      g_signal_connect_object (item, "notify::visible", G_CALLBACK (on_run_visible_changed), self,
                               0);
      g_signal_connect_object (item, "notify::hidden", G_CALLBACK (on_run_hidden_changed), self, 0);
    }
  return row;
}

/* The sidebar shows the session's runs; the window follows the session through its signals. */
static void
bind_session (DwWindow *self)
{
  gtk_list_box_bind_model (self->run_list, dw_session_get_runs (self->session), create_run_row,
                           self, NULL);
  g_signal_connect_object (self->session, "message", G_CALLBACK (on_session_message), self, 0);
  g_signal_connect_object (self->session, "reloaded", G_CALLBACK (on_session_reloaded), self, 0);
  g_signal_connect_object (self->session, "ingested", G_CALLBACK (on_session_ingested), self, 0);
  g_signal_connect_object (self->session, "health-changed", G_CALLBACK (on_session_health_changed),
                           self, 0);
  g_signal_connect_object (self->session, "health-fired", G_CALLBACK (on_session_health_fired),
                           self, 0);
  g_signal_connect_object (self->session, "refreshed", G_CALLBACK (on_session_refreshed), self, 0);
}

static void
dw_window_constructed (GObject *object)
{
  DwWindow *self = DW_WINDOW (object);

  G_OBJECT_CLASS (dw_window_parent_class)->constructed (object);
  g_assert (self->session != NULL);
  bind_session (self);
  dw_monitor_view_set_reader (self->monitor_view, dw_session_get_store (self->session),
                              dw_session_get_reader (self->session));
  dw_drill_install_actions (GTK_APPLICATION_WINDOW (self), dw_session_get_reader (self->session));
  dw_window_reload_runs (self);
}

static void
dw_window_class_init (DwWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = dw_window_dispose;
  object_class->finalize = dw_window_finalize;
  object_class->get_property = dw_window_get_property;
  object_class->set_property = dw_window_set_property;
  object_class->constructed = dw_window_constructed;

  properties[PROP_STORE]
    = g_param_spec_object ("store", NULL, NULL, DW_TYPE_STORE,
                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /* runs hidden with "Hide Run" are listed too */
  properties[PROP_SHOW_HIDDEN_RUNS] = g_param_spec_boolean (
    "show-hidden-runs", NULL, NULL, FALSE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (DW_TYPE_MONITOR_VIEW);
  g_type_ensure (DW_TYPE_HEALTH_PANEL);
  g_type_ensure (DW_TYPE_TUNE_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PATH "/dw-window.ui");
  gtk_widget_class_bind_template_child (widget_class, DwWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, main_stack);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, leaflet);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, run_list);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, run_filter);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, switcher_title);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, live_label);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, verdict_revealer);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, verdict_box);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, verdict_label);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, view_stack);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, health_page);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, monitor_view);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, health_panel);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, tune_view);
  gtk_widget_class_bind_template_child (widget_class, DwWindow, recent_section);

  _dw_window_actions_install (widget_class);
}

static void
bind_window_state (DwWindow *self)
{
  g_autoptr (GSettingsSchema) schema = NULL;
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();

  /* Uninstalled runs may lack the compiled schema: the window then uses its defaults. */
  if (source == NULL || (schema = g_settings_schema_source_lookup (source, APP_ID, TRUE)) == NULL)
    return;
  self->settings = g_settings_new (APP_ID);
}

static void
dw_window_init (DwWindow *self)
{
  GtkEventController *keys = gtk_event_controller_key_new ();

  gtk_widget_init_template (GTK_WIDGET (self));
  self->shown = g_array_new (FALSE, FALSE, sizeof (gint64));
  self->live_text = g_strdup ("");
  self->toasts = g_ptr_array_new_with_free_func (g_free);
  bind_window_state (self);

  g_signal_connect_object (self->run_list, "selected-rows-changed",
                           G_CALLBACK (on_selection_changed), self, 0);
  g_signal_connect_object (self->run_filter, "search-changed", G_CALLBACK (on_run_filter_changed),
                           self, 0);
  gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
  g_signal_connect_object (keys, "key-pressed", G_CALLBACK (on_run_list_key), self, 0);
  gtk_widget_add_controller (GTK_WIDGET (self->run_list), keys);
  g_signal_connect_object (self->health_panel, "show-step", G_CALLBACK (on_show_step), self, 0);
  g_signal_connect_object (self->view_stack, "notify::visible-child-name",
                           G_CALLBACK (sync_tune_view), self, G_CONNECT_SWAPPED);
  _dw_window_dnd_init (self);
}

/* ---------------------------------------------------------------- API */

DwWindow *
dw_window_new (GtkApplication *app, DwStore *store, gboolean restore_state)
{
  DwWindow *self;

  g_return_val_if_fail (DW_IS_STORE (store), NULL);
  self = g_object_new (DW_TYPE_WINDOW, "application", app, "store", store, NULL);
  if (self->settings != NULL && restore_state)
    {
      g_settings_bind (self->settings, "window-width", self, "default-width",
                       G_SETTINGS_BIND_DEFAULT);
      g_settings_bind (self->settings, "window-height", self, "default-height",
                       G_SETTINGS_BIND_DEFAULT);
      g_settings_bind (self->settings, "window-maximized", self, "maximized",
                       G_SETTINGS_BIND_DEFAULT);
    }
  if (self->settings != NULL)
    g_signal_connect_object (self->settings, "changed::recent-runs",
                             G_CALLBACK (_dw_window_actions_update_recent), self,
                             G_CONNECT_SWAPPED);
  _dw_window_actions_update_recent (self);
  if (self->settings != NULL)
    g_signal_connect_object (self->settings, "changed::refresh-interval",
                             G_CALLBACK (start_refresh_timer), self, G_CONNECT_SWAPPED);
  start_refresh_timer (self);
  return self;
}

DwStore *
dw_window_get_store (DwWindow *self)
{
  g_return_val_if_fail (DW_IS_WINDOW (self), NULL);
  return dw_session_get_store (self->session);
}

void
dw_window_set_view (DwWindow *self, const char *name)
{
  g_return_if_fail (DW_IS_WINDOW (self));
  if (adw_view_stack_get_child_by_name (self->view_stack, name) != NULL)
    adw_view_stack_set_visible_child_name (self->view_stack, name);
}

gboolean
dw_window_is_ready (DwWindow *self)
{
  g_return_val_if_fail (DW_IS_WINDOW (self), FALSE);
  if (dw_session_is_busy (self->session) || dw_monitor_view_is_loading (self->monitor_view)
      || gtk_stack_get_transition_running (self->main_stack))
    return FALSE;
  if (g_strcmp0 (adw_view_stack_get_visible_child_name (self->view_stack), "tune") == 0
      && self->shown->len > 0
      && (dw_tune_view_get_busy (self->tune_view)
          || dw_tune_view_get_result (self->tune_view) == NULL))
    return FALSE;
  return TRUE;
}

GtkWidget *
dw_window_get_monitor_view (DwWindow *self)
{
  g_return_val_if_fail (DW_IS_WINDOW (self), NULL);
  return GTK_WIDGET (self->monitor_view);
}

GtkWidget *
dw_window_get_health_panel (DwWindow *self)
{
  g_return_val_if_fail (DW_IS_WINDOW (self), NULL);
  return GTK_WIDGET (self->health_panel);
}

GtkListBox *
dw_window_get_run_list (DwWindow *self)
{
  g_return_val_if_fail (DW_IS_WINDOW (self), NULL);
  return self->run_list;
}

const char *
dw_window_get_live_text (DwWindow *self)
{
  g_return_val_if_fail (DW_IS_WINDOW (self), NULL);
  return self->live_text;
}

GPtrArray *
dw_window_get_toasts (DwWindow *self)
{
  g_return_val_if_fail (DW_IS_WINDOW (self), NULL);
  return self->toasts;
}
