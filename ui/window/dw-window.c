/* dw-window.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-window"

#include "config.h"

#include <inttypes.h>

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "dw-correction.h"
#include "dw-demo.h"
#include "dw-follower.h"
#include "dw-health-panel.h"
#include "dw-health.h"
#include "dw-ingester.h"
#include "dw-monitor-view.h"
#include "dw-run-row.h"
#include "dw-store-writer.h"
#include "dw-tune-view.h"
#include "dw-window.h"

/* A run counts as live for this long after its last new point. */
#define LIVE_WINDOW_S 60

typedef struct
{
  gint64 run_id;
  gint64 last_step;
  gint64 seen_growth_us;    /* monotonic time new points were last seen, 0: never */
  DwHealthMonitor *monitor; /* NULL until its first evaluation (in a worker) is back */
  gboolean evaluating;
} RunState;

struct _DwWindow
{
  AdwApplicationWindow parent_instance;

  AdwToastOverlay *toast_overlay;
  GtkStack *main_stack;
  AdwLeaflet *leaflet;
  GtkListBox *run_list;
  GtkSearchEntry *run_filter;
  AdwViewSwitcherTitle *switcher_title;
  GtkLabel *live_label;
  GtkRevealer *verdict_revealer;
  GtkWidget *verdict_box;
  GtkLabel *verdict_label;
  AdwViewStack *view_stack;
  AdwViewStackPage *health_page;
  DwMonitorView *monitor_view;
  DwHealthPanel *health_panel;
  DwTuneView *tune_view;
  GMenu *recent_section;

  GSettings *settings;
  DwStore *store;
  DwFollower *follower;
  GHashTable *run_states; /* run id → RunState* */
  GArray *shown;          /* gint64 run ids shown, selection order */
  guint n_ingesting;
  guint n_evaluating;
  guint refresh_id;
  guint n_refreshes;
  gboolean updating_list;
  GArray *keynav_kept; /* run ids selected before a focus key; NULL when no key is handled */
  char *live_text;
  GPtrArray *toasts; /* texts of the toasts shown, newest last (at most MAX_TOAST_LOG) */
};

G_DEFINE_FINAL_TYPE (DwWindow, dw_window, ADW_TYPE_APPLICATION_WINDOW)

enum
{
  PROP_0,
  PROP_STORE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
run_state_free (gpointer data)
{
  RunState *st = data;

  g_clear_pointer (&st->monitor, dw_health_monitor_free);
  g_free (st);
}

#define MAX_TOAST_LOG 64

static void
toast (DwWindow *self, const char *text)
{
  /* libadwaita 1.2 toast titles are Pango markup: a path with & or < must show as written */
  g_autofree char *escaped = g_markup_escape_text (text, -1);
  AdwToast *t = adw_toast_new (escaped);

  g_debug ("toast: %s", text);
  if (self->toasts->len == MAX_TOAST_LOG)
    g_ptr_array_remove_index (self->toasts, 0);
  g_ptr_array_add (self->toasts, g_strdup (text));
  adw_toast_set_timeout (t, 8);
  adw_toast_overlay_add_toast (self->toast_overlay, t);
}

/* ---------------------------------------------------------------- runs and selection */

static RunState *
run_state (DwWindow *self, gint64 run_id)
{
  RunState *st = g_hash_table_lookup (self->run_states, &run_id);

  if (st == NULL)
    {
      st = g_new0 (RunState, 1);
      st->run_id = run_id;
      st->last_step = G_MININT64;
      g_hash_table_insert (self->run_states, &st->run_id, st);
    }
  return st;
}

static DwRunRow *
find_row (DwWindow *self, gint64 run_id)
{
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->run_list)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (DW_IS_RUN_ROW (child) && dw_run_row_get_run_id (DW_RUN_ROW (child)) == run_id)
      return DW_RUN_ROW (child);
  return NULL;
}

static void
update_health_badge (DwWindow *self)
{
  guint n = dw_health_panel_get_n_events (self->health_panel);

  adw_view_stack_page_set_needs_attention (self->health_page, n > 0);
  adw_view_stack_page_set_badge_number (self->health_page, n);
}

/* The counts of the run's health monitor into its sidebar row: the badge says "collapsed" by the
 * same rule as `driftwatch-cli runs` (dw_health_shown_status) as soon as the rules have run. */
static void
apply_row_health (DwWindow *self, RunState *st)
{
  DwRunRow *row = find_row (self, st->run_id);
  g_autoptr (GPtrArray) events = NULL;
  guint n_warn, n_crit, n_at_end;

  if (row == NULL || st->monitor == NULL)
    return;
  events = dw_health_monitor_get_events (st->monitor);
  dw_health_monitor_count (st->monitor, events, &n_warn, &n_crit, &n_at_end);
  dw_run_row_set_health (row, n_warn, n_crit, n_at_end);
}

static gboolean
is_shown (DwWindow *self, gint64 run_id)
{
  for (guint i = 0; i < self->shown->len; i++)
    if (g_array_index (self->shown, gint64, i) == run_id)
      return TRUE;
  return FALSE;
}

/* Feeds the health monitor of a run everything stored since it last looked; returns the
 * events that fired for the first time (NULL on error, reported once as a toast). */
static GPtrArray *
poll_health (DwWindow *self, RunState *st)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *fired;

  if (st->monitor == NULL)
    return NULL;
  fired = dw_health_monitor_poll_run (st->monitor, self->store, st->run_id, &error);

  if (fired == NULL)
    g_warning ("Health rules on run %" G_GINT64_FORMAT ": %s", st->run_id, error->message);
  return fired;
}

typedef struct
{
  char *db_path;
  gint64 run_id;
  DwHealthMonitor *monitor;
} HealthJob;

static void
health_job_free (gpointer data)
{
  HealthJob *job = data;

  g_free (job->db_path);
  g_clear_pointer (&job->monitor, dw_health_monitor_free);
  g_free (job);
}

/* The first evaluation reads every ruled series of the run: in a worker with its own store
 * connection; the monitor then moves to the main thread for the live increments. */
static void
health_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  HealthJob *job = task_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = dw_store_open_read_only (job->db_path, &error);
  g_autoptr (GPtrArray) fired = NULL;

  if (store != NULL)
    fired = dw_health_monitor_poll_run (job->monitor, store, job->run_id, &error);
  if (fired == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_boolean (task, TRUE);
}

static void show_health (DwWindow *self);

static void
on_health_done (GObject *object, GAsyncResult *result, gpointer user_data)
{
  DwWindow *self = DW_WINDOW (object);
  HealthJob *job = g_task_get_task_data (G_TASK (result));
  RunState *st = run_state (self, job->run_id);
  g_autoptr (GError) error = NULL;

  st->evaluating = FALSE;
  self->n_evaluating--;
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      g_warning ("Health rules on run %" G_GINT64_FORMAT ": %s", job->run_id, error->message);
      return;
    }
  st->monitor = g_steal_pointer (&job->monitor);
  if (gtk_widget_in_destruction (GTK_WIDGET (self)))
    return;
  apply_row_health (self, st);
  if (is_shown (self, st->run_id))
    show_health (self);
}

static void
evaluate_health_async (DwWindow *self, RunState *st)
{
  g_autoptr (GTask) task = g_task_new (self, NULL, on_health_done, NULL);
  HealthJob *job = g_new0 (HealthJob, 1);

  job->db_path = g_strdup (dw_store_get_path (self->store));
  job->run_id = st->run_id;
  job->monitor = dw_health_monitor_new ();
  st->evaluating = TRUE;
  self->n_evaluating++;
  g_task_set_task_data (task, job, health_job_free);
  g_task_set_name (task, "dw-health");
  g_task_run_in_thread (task, health_thread);
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
      RunState *st = run_state (self, id);
      DwRunRow *row = find_row (self, id);
      g_autoptr (GPtrArray) events = NULL;
      const DwHealthEvent *first = NULL, *crit = NULL;
      guint n_warn, n_crit, n_at_end;
      g_autofree char *line = NULL;

      if (st->monitor == NULL || row == NULL)
        continue;
      events = dw_health_monitor_get_events (st->monitor);
      dw_health_monitor_count (st->monitor, events, &n_warn, &n_crit, &n_at_end);
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
      critical = crit != NULL
                 || dw_health_shown_status (dw_run_row_get_info (row)->status, n_crit, n_at_end)
                      == DW_RUN_STATUS_COLLAPSED;
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
        text = g_strdup_printf ("%s — %s", dw_run_row_get_info (row)->name, line);
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
      RunState *st = run_state (self, id);
      DwRunRow *row = find_row (self, id);
      g_autoptr (GPtrArray) events = NULL;
      guint n_warn, n_crit, n_at_end;

      if (st->monitor == NULL)
        continue;
      events = dw_health_monitor_get_events (st->monitor);
      dw_health_monitor_count (st->monitor, events, &n_warn, &n_crit, &n_at_end);
      if (row != NULL)
        dw_run_row_set_health (row, n_warn, n_crit, n_at_end);
      dw_health_panel_add_events (self->health_panel, id,
                                  row ? dw_run_row_get_info (row)->name : "", events);
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
    dw_tune_view_set_run (self->tune_view, self->store, run_id);
}

static void
show_selected (DwWindow *self)
{
  /* Copies: updating a row's health replaces the info it holds. */
  g_autoptr (GPtrArray) infos = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_run_info_free);

  /* Keep the sidebar order (newest first), so colours and legend order are stable. */
  g_array_set_size (self->shown, 0);
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->run_list)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (DW_IS_RUN_ROW (child) && gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (child)))
      {
        DwRunInfo *info = dw_run_info_copy (dw_run_row_get_info (DW_RUN_ROW (child)));
        g_ptr_array_add (infos, info);
        g_array_append_val (self->shown, info->id);
      }

  dw_monitor_view_set_runs (self->monitor_view, infos);
  for (guint i = 0; i < infos->len; i++)
    {
      const DwRunInfo *info = g_ptr_array_index (infos, i);
      RunState *st = run_state (self, info->id);

      if (st->last_step == G_MININT64)
        st->last_step = info->last_step;
      if (st->monitor == NULL && !st->evaluating)
        evaluate_health_async (self, st);
    }
  show_health (self);

  if (infos->len > 0 && self->settings != NULL)
    {
      /* keyed by the store: a run id means nothing in another store */
      g_autofree char *id
        = g_strdup_printf ("%s\t%" G_GINT64_FORMAT, dw_store_get_path (self->store),
                           ((DwRunInfo *)g_ptr_array_index (infos, 0))->id);
      g_settings_set_string (self->settings, "last-run", id);
    }
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
          DwRunRow *row = find_row (self, g_array_index (self->keynav_kept, gint64, i));
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

/* The sidebar filter: runs whose name or source contains the text (any case); a filtered-out
 * run stays shown in the charts if it was selected. */
static gboolean
run_filter_func (GtkListBoxRow *row, gpointer data)
{
  DwWindow *self = data;
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->run_filter));
  g_autofree char *needle = NULL, *name = NULL, *source = NULL;
  const DwRunInfo *info;

  if (!DW_IS_RUN_ROW (row) || text == NULL || *text == '\0')
    return TRUE;
  info = dw_run_row_get_info (DW_RUN_ROW (row));
  needle = g_utf8_casefold (text, -1);
  name = g_utf8_casefold (info->name ? info->name : "", -1);
  source = g_utf8_casefold (info->source ? info->source : "", -1);
  return strstr (name, needle) != NULL || strstr (source, needle) != NULL;
}

static void
on_run_filter_changed (GtkSearchEntry *entry, DwWindow *self)
{
  gtk_list_box_invalidate_filter (self->run_list);
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

void
dw_window_reload_runs (DwWindow *self)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) runs = NULL;
  g_autoptr (GArray) selected = g_array_new (FALSE, FALSE, sizeof (gint64));
  GtkWidget *child;
  gboolean any_selected = FALSE;

  g_return_if_fail (DW_IS_WINDOW (self));
  runs = dw_store_list_runs (self->store, &error);
  if (runs == NULL)
    {
      toast (self, error->message);
      return;
    }
  for (child = gtk_widget_get_first_child (GTK_WIDGET (self->run_list)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (DW_IS_RUN_ROW (child) && gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (child)))
      {
        gint64 id = dw_run_row_get_run_id (DW_RUN_ROW (child));
        g_array_append_val (selected, id);
      }

  self->updating_list = TRUE;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->run_list))) != NULL)
    gtk_list_box_remove (self->run_list, child);
  for (guint i = 0; i < runs->len; i++)
    {
      const DwRunInfo *info = g_ptr_array_index (runs, i);
      GtkWidget *row = dw_run_row_new (info, NULL);

      gtk_list_box_append (self->run_list, row);
      for (guint j = 0; j < selected->len; j++)
        if (g_array_index (selected, gint64, j) == info->id)
          {
            gtk_list_box_select_row (self->run_list, GTK_LIST_BOX_ROW (row));
            any_selected = TRUE;
          }
    }
  if (!any_selected && runs->len > 0)
    {
      /* At start-up, the run shown when the window was closed; else the newest. */
      g_autofree char *last
        = self->settings ? g_settings_get_string (self->settings, "last-run") : NULL;
      const char *tab = last ? strrchr (last, '\t') : NULL;
      DwRunRow *row = NULL;

      /* "<store path>\t<run id>": only when it was this store */
      if (tab != NULL && strncmp (last, dw_store_get_path (self->store), tab - last) == 0
          && dw_store_get_path (self->store)[tab - last] == '\0')
        row = find_row (self, g_ascii_strtoll (tab + 1, NULL, 10));

      gtk_list_box_select_row (self->run_list,
                               row ? GTK_LIST_BOX_ROW (row)
                                   : gtk_list_box_get_row_at_index (self->run_list, 0));
    }
  self->updating_list = FALSE;

  /* Every run's verdict, not only the shown ones: the sidebar badges are right from the start
   * (a collapsed run does not read "finished" until it is clicked). */
  for (guint i = 0; i < runs->len; i++)
    {
      const DwRunInfo *info = g_ptr_array_index (runs, i);
      RunState *st = run_state (self, info->id);

      if (st->last_step == G_MININT64)
        st->last_step = info->last_step;
      if (st->monitor != NULL)
        apply_row_health (self, st);
      else if (!st->evaluating)
        evaluate_health_async (self, st);
    }

  g_debug ("%u runs in %s", runs->len, dw_store_get_path (self->store));
  gtk_stack_set_visible_child_name (self->main_stack, runs->len > 0 ? "runs" : "empty");
  show_selected (self);
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
      DwRunRow *row = find_row (self, run_ids[i]);
      if (row != NULL)
        gtk_list_box_select_row (self->run_list, GTK_LIST_BOX_ROW (row));
    }
  self->updating_list = FALSE;
  show_selected (self);
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
      toast (self, text);
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
update_live_text (DwWindow *self)
{
  gint64 now_us = g_get_monotonic_time ();
  double now_wall = g_get_real_time () / 1e6;
  double newest_ago = INFINITY;

  for (guint i = 0; i < self->shown->len; i++)
    {
      gint64 id = g_array_index (self->shown, gint64, i);
      RunState *st = run_state (self, id);
      DwRunRow *row = find_row (self, id);
      const DwRunInfo *info = row ? dw_run_row_get_info (row) : NULL;
      double ago = INFINITY;

      if (info == NULL)
        continue;
      /* When the window saw the last point arrive; else the log's own wall time of it (the
       * trainer's clock may differ from ours, so only when nothing was seen here). */
      if (st->seen_growth_us > 0)
        ago = (now_us - st->seen_growth_us) / 1e6;
      else if (isfinite (info->last_wall_time) && info->last_wall_time <= now_wall + 5)
        ago = MAX (0, now_wall - info->last_wall_time);
      if (info->status == DW_RUN_STATUS_LIVE || (st->seen_growth_us > 0 && ago < LIVE_WINDOW_S))
        newest_ago = MIN (newest_ago, ago);
    }
  g_free (self->live_text);
  if (isfinite (newest_ago))
    /* TRANSLATORS: header subtitle while a shown run is being written */
    self->live_text = g_strdup_printf (_ ("live · last point %.0f s ago"), newest_ago);
  else
    self->live_text = g_strdup ("");
  gtk_label_set_label (self->live_label, self->live_text);
  gtk_widget_set_visible (GTK_WIDGET (self->live_label), *self->live_text != '\0');
}

void
dw_window_refresh (DwWindow *self)
{
  gboolean grew = FALSE;

  g_return_if_fail (DW_IS_WINDOW (self));
  /* Every run of the sidebar: a run written in the background gets its verdict on every new
   * point too, not only the one looked at. */
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->run_list)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      DwRunRow *row = DW_IS_RUN_ROW (child) ? DW_RUN_ROW (child) : NULL;
      gint64 id = row ? dw_run_row_get_run_id (row) : 0;
      RunState *st = row ? run_state (self, id) : NULL;
      g_autoptr (DwRunInfo) info = row ? dw_store_get_run (self->store, id, NULL) : NULL;

      if (info == NULL)
        continue;
      dw_run_row_update (row, info);
      if (info->last_step != st->last_step)
        {
          g_autoptr (GPtrArray) fired = poll_health (self, st);

          st->last_step = info->last_step;
          st->seen_growth_us = g_get_monotonic_time ();
          grew |= is_shown (self, id);
          apply_row_health (self, st);
          if (fired != NULL && fired->len > 0)
            notify_events (self, info, fired);
        }
    }
  if (grew)
    {
      /* Only the new tail is read and appended; each chart redraws at most once per frame. */
      dw_monitor_view_refresh (self->monitor_view);
      show_health (self);
    }
  update_live_text (self);
}

static gboolean
on_refresh_timeout (gpointer user_data)
{
  DwWindow *self = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) runs = NULL;

  if (self->n_ingesting > 0)
    return G_SOURCE_CONTINUE;
  /* New runs (ingested by `driftwatch-cli watch` in another process) appear in the sidebar. */
  if (++self->n_refreshes % 5 == 0 && (runs = dw_store_list_runs (self->store, &error)) != NULL)
    {
      guint n_rows = 0;
      for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (self->run_list)); c != NULL;
           c = gtk_widget_get_next_sibling (c))
        n_rows++;
      if (runs->len != n_rows)
        {
          dw_window_reload_runs (self);
          return G_SOURCE_CONTINUE;
        }
    }
  dw_window_refresh (self);
  return G_SOURCE_CONTINUE;
}

static void
start_refresh_timer (DwWindow *self)
{
  guint interval = self->settings ? g_settings_get_uint (self->settings, "refresh-interval") : 1000;

  g_clear_handle_id (&self->refresh_id, g_source_remove);
  self->refresh_id = g_timeout_add (MAX (interval, 100), on_refresh_timeout, self);
}

/* ---------------------------------------------------------------- ingest */

typedef struct
{
  char *db_path;
  char **paths;
  char *demo_dir;
  GArray *run_ids;
  GPtrArray *problems; /* char*: bad input skipped */
  GPtrArray *errors;   /* char*: paths that could not be ingested */
} IngestJob;

static void
ingest_job_free (IngestJob *job)
{
  g_free (job->db_path);
  g_strfreev (job->paths);
  g_free (job->demo_dir);
  g_array_unref (job->run_ids);
  g_ptr_array_unref (job->problems);
  g_ptr_array_unref (job->errors);
  g_free (job);
}

static void ingest_thread_body (GTask *task, IngestJob *job);

/* Runs in a worker thread with its own store connection (SQLite WAL: the window keeps reading
 * while the worker writes). */
static void
ingest_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ingest_thread_body (task, task_data);
  /* The demo writer and batch ingest run the correction kernels, which keep a per-thread
   * workspace: pool threads come and go, so give it back before this one is reused or exits. */
  dw_correction_release_workspace ();
}

static void
ingest_thread_body (GTask *task, IngestJob *job)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwIngester) ingester = NULL;
  DwIngestReport report;

  if (job->demo_dir != NULL
      && !dw_demo_write (job->demo_dir, DW_DEMO_COLLAPSE, DW_DEMO_DEFAULT_STEPS, 1, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  store = dw_store_open (job->db_path, &error);
  if (store == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  ingester = dw_ingester_new (store);
  dw_ingest_report_init (&report);
  for (guint i = 0; job->paths[i] != NULL; i++)
    {
      g_clear_error (&error);
      if (!dw_ingester_ingest_path (ingester, job->paths[i], &report, &error))
        g_ptr_array_add (job->errors, g_strdup (error->message));
    }
  g_array_append_vals (job->run_ids, report.run_ids->data, report.run_ids->len);
  for (guint i = 0; i < report.diagnostics->len; i++)
    g_ptr_array_add (job->problems, g_strdup (g_ptr_array_index (report.diagnostics, i)));
  dw_ingest_report_clear (&report);
  g_task_return_boolean (task, TRUE);
}

static void
remember_recent (DwWindow *self, char **paths)
{
  g_autoptr (GStrvBuilder) builder = NULL;
  g_auto (GStrv) old = NULL, recent = NULL;
  guint n = 0, max;

  if (self->settings == NULL)
    return;
  max = g_settings_get_uint (self->settings, "recent-runs-max");
  builder = g_strv_builder_new ();
  for (guint i = 0; paths[i] != NULL && n < max; i++, n++)
    g_strv_builder_add (builder, paths[i]);
  old = g_settings_get_strv (self->settings, "recent-runs");
  for (guint i = 0; old[i] != NULL && n < max; i++)
    if (!g_strv_contains ((const char *const *)paths, old[i]))
      {
        g_strv_builder_add (builder, old[i]);
        n++;
      }
  recent = g_strv_builder_end (builder);
  g_settings_set_strv (self->settings, "recent-runs", (const char *const *)recent);
}

static void
on_follower_flushed (DwFollower *follower, DwWindow *self)
{
  /* Right away rather than at the next refresh tick: the charts append at the next frame. */
  dw_window_refresh (self);
}

static void
on_follower_error (DwFollower *follower, const GError *error, const char *path, DwWindow *self)
{
  toast (self, error->message);
}

/* Opened folders keep being read while their run is written (the follower ingests only what
 * was appended); the refresh then appends the new points to the charts. */
static void
follow_paths (DwWindow *self, char **paths)
{
  if (self->settings != NULL && !g_settings_get_boolean (self->settings, "live"))
    return;
  if (self->follower == NULL)
    {
      self->follower = dw_follower_new (self->store);
      g_signal_connect_object (self->follower, "flushed", G_CALLBACK (on_follower_flushed), self,
                               0);
      g_signal_connect_object (self->follower, "error", G_CALLBACK (on_follower_error), self, 0);
    }
  for (guint i = 0; paths[i] != NULL; i++)
    {
      const char *const *followed = dw_follower_get_paths (self->follower);
      g_autoptr (GError) error = NULL;

      if (followed != NULL && g_strv_contains (followed, paths[i]))
        continue;
      if (!dw_follower_add_path (self->follower, paths[i], &error))
        toast (self, error->message);
    }
}

static void
on_ingest_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  DwWindow *self = DW_WINDOW (source);
  IngestJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;

  self->n_ingesting--;
  if (gtk_widget_in_destruction (GTK_WIDGET (self)))
    return;
  g_debug ("ingest done: %u runs, %u errors, %u problems", job->run_ids->len, job->errors->len,
           job->problems->len);
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      toast (self, error->message);
      return;
    }
  for (guint i = 0; i < job->errors->len; i++)
    toast (self, g_ptr_array_index (job->errors, i));
  if (job->problems->len > 0)
    {
      /* The first problem names the file and the offset; the rest are in `driftwatch-cli ingest`.
       */
      g_autofree char *text = g_strdup_printf (
        /* TRANSLATORS: %u problems were skipped while reading; %s is the first one */
        ngettext ("%u bad record skipped: %s", "%u bad records skipped, first: %s",
                  job->problems->len),
        job->problems->len, (char *)g_ptr_array_index (job->problems, 0));
      toast (self, text);
    }
  if (job->run_ids->len == 0 && job->errors->len == 0)
    toast (self, _ ("No training logs or rollout batches found there"));
  if (job->demo_dir == NULL && job->run_ids->len > 0)
    {
      remember_recent (self, job->paths);
      follow_paths (self, job->paths);
    }

  dw_window_reload_runs (self);
  if (job->run_ids->len > 0)
    dw_window_select_runs (self, (const gint64 *)job->run_ids->data, job->run_ids->len);
}

static void
start_ingest (DwWindow *self, const char *const *paths, const char *demo_dir)
{
  g_autoptr (GTask) task = g_task_new (self, NULL, on_ingest_done, NULL);
  IngestJob *job = g_new0 (IngestJob, 1);

  job->db_path = g_strdup (dw_store_get_path (self->store));
  job->paths = g_strdupv ((char **)paths);
  job->demo_dir = g_strdup (demo_dir);
  job->run_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  job->problems = g_ptr_array_new_with_free_func (g_free);
  job->errors = g_ptr_array_new_with_free_func (g_free);
  g_task_set_task_data (task, job, (GDestroyNotify)ingest_job_free);
  g_task_set_name (task, "dw-ingest");
  self->n_ingesting++;
  g_debug ("ingesting %s", paths[0]);
  g_task_run_in_thread (task, ingest_thread);
}

void
dw_window_ingest_paths (DwWindow *self, const char *const *paths)
{
  g_return_if_fail (DW_IS_WINDOW (self));
  g_return_if_fail (paths != NULL);
  start_ingest (self, paths, NULL);
}

void
dw_window_load_demo (DwWindow *self, const char *dir)
{
  g_autofree char *path = NULL;
  const char *paths[2];

  g_return_if_fail (DW_IS_WINDOW (self));
  path = dir ? g_strdup (dir)
             : g_build_filename (g_get_user_cache_dir (), "driftwatch", "demo-collapse", NULL);
  paths[0] = path;
  paths[1] = NULL;
  start_ingest (self, paths, path);
}

/* ---------------------------------------------------------------- actions */

static void
on_folder_chosen (GtkNativeDialog *dialog, int response, DwWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GListModel) files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
      g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
      g_auto (GStrv) paths = NULL;

      for (guint i = 0; i < g_list_model_get_n_items (files); i++)
        {
          g_autoptr (GFile) file = g_list_model_get_item (files, i);
          g_autofree char *path = g_file_get_path (file);
          if (path != NULL)
            g_strv_builder_add (builder, path);
        }
      paths = g_strv_builder_end (builder);
      if (paths[0] != NULL)
        dw_window_ingest_paths (self, (const char *const *)paths);
    }
  gtk_native_dialog_destroy (dialog);
  g_object_unref (dialog);
}

static void
open_folder_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  GtkFileChooserNative *dialog
    = gtk_file_chooser_native_new (_ ("Open Run Folder"), GTK_WINDOW (widget),
                                   GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, _ ("_Open"), NULL);

  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_folder_chosen), widget);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
open_recent_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwWindow *self = DW_WINDOW (widget);
  const char *path = g_variant_get_string (parameter, NULL);
  const char *paths[] = { path, NULL };

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      /* TRANSLATORS: a recent run folder was moved or deleted; %s is its path */
      g_autofree char *text = g_strdup_printf (_ ("%s no longer exists"), path);
      toast (self, text);
      return;
    }
  dw_window_ingest_paths (self, paths);
}

/* "Open Recent" in the primary menu, from the recent-runs setting. */
static void
update_recent_menu (DwWindow *self)
{
  g_auto (GStrv) recent = NULL;
  g_autoptr (GMenu) submenu = NULL;

  g_menu_remove_all (self->recent_section);
  if (self->settings == NULL)
    return;
  recent = g_settings_get_strv (self->settings, "recent-runs");
  if (recent[0] == NULL)
    return;
  submenu = g_menu_new ();
  for (guint i = 0; recent[i] != NULL; i++)
    {
      g_autofree char *base = g_path_get_basename (recent[i]);
      g_auto (GStrv) parts = g_strsplit (base, "_", -1);
      /* Underscores would be read as mnemonics. */
      g_autofree char *label = g_strjoinv ("__", parts);
      g_autoptr (GMenuItem) item = g_menu_item_new (label, NULL);

      g_menu_item_set_action_and_target_value (item, "win.open-recent",
                                               g_variant_new_string (recent[i]));
      g_menu_append_item (submenu, item);
    }
  g_menu_append_submenu (self->recent_section, _ ("Open _Recent"), G_MENU_MODEL (submenu));
}

static void
load_demo_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  dw_window_load_demo (DW_WINDOW (widget), NULL);
}

static void
show_runs_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  adw_leaflet_navigate (DW_WINDOW (widget)->leaflet, ADW_NAVIGATION_DIRECTION_BACK);
}

static void
view_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  dw_window_set_view (DW_WINDOW (widget), g_variant_get_string (parameter, NULL));
}

static void
log_scale_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwChartCard *card = dw_monitor_view_get_current_card (DW_WINDOW (widget)->monitor_view);

  if (card != NULL)
    dw_chart_card_set_log_y (card, !dw_chart_card_get_log_y (card));
}

static void
tag_filter_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwWindow *self = DW_WINDOW (widget);

  dw_window_set_view (self, "monitor");
  dw_monitor_view_focus_tag_entry (self->monitor_view);
}

static void
reset_zoom_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  dw_monitor_view_reset_zoom (DW_WINDOW (widget)->monitor_view);
}

static void
export_chart_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  DwChartCard *card = dw_monitor_view_get_current_card (DW_WINDOW (widget)->monitor_view);

  if (card != NULL)
    gtk_widget_activate_action (GTK_WIDGET (card), "card.export", "s", "png");
}

static void
on_show_step (DwHealthPanel *panel, gint64 run_id, gint64 step, DwWindow *self)
{
  dw_window_set_view (self, "monitor");
  dw_monitor_view_show_step (self->monitor_view, step);
}

/* ---------------------------------------------------------------- drag and drop */

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, DwWindow *self)
{
  GSList *files;
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  g_auto (GStrv) paths = NULL;

  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  files = g_value_get_boxed (value);
  for (GSList *l = files; l != NULL; l = l->next)
    {
      g_autofree char *path = g_file_get_path (l->data);
      if (path != NULL)
        g_strv_builder_add (builder, path);
    }
  paths = g_strv_builder_end (builder);
  if (paths[0] == NULL)
    {
      toast (self, _ ("Only local files and folders can be opened"));
      return FALSE;
    }
  dw_window_ingest_paths (self, (const char *const *)paths);
  return TRUE;
}

/* ---------------------------------------------------------------- GObject */

static void
dw_window_dispose (GObject *object)
{
  DwWindow *self = DW_WINDOW (object);

  g_clear_handle_id (&self->refresh_id, g_source_remove);
  if (self->follower != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->follower, self);
      dw_follower_stop (self->follower);
      g_clear_object (&self->follower);
    }
  if (self->run_list != NULL)
    g_signal_handlers_disconnect_by_data (self->run_list, self);
  gtk_widget_dispose_template (GTK_WIDGET (self), DW_TYPE_WINDOW);
  G_OBJECT_CLASS (dw_window_parent_class)->dispose (object);
}

static void
dw_window_finalize (GObject *object)
{
  DwWindow *self = DW_WINDOW (object);

  g_clear_object (&self->settings);
  g_clear_object (&self->store);
  g_hash_table_unref (self->run_states);
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
      g_value_set_object (value, self->store);
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
      self->store = g_value_dup_object (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_window_constructed (GObject *object)
{
  DwWindow *self = DW_WINDOW (object);

  G_OBJECT_CLASS (dw_window_parent_class)->constructed (object);
  g_assert (self->store != NULL);
  dw_monitor_view_set_store (self->monitor_view, self->store);
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

  /* Names and accelerators: /work/notes/shortcuts.md (accels are set in dw-application.c). */
  gtk_widget_class_install_action (widget_class, "win.open-folder", NULL, open_folder_action);
  gtk_widget_class_install_action (widget_class, "win.load-demo", NULL, load_demo_action);
  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", open_recent_action);
  gtk_widget_class_install_action (widget_class, "win.show-runs", NULL, show_runs_action);
  gtk_widget_class_install_action (widget_class, "win.view", "s", view_action);
  gtk_widget_class_install_action (widget_class, "win.log-scale", NULL, log_scale_action);
  gtk_widget_class_install_action (widget_class, "win.tag-filter", NULL, tag_filter_action);
  gtk_widget_class_install_action (widget_class, "win.reset-zoom", NULL, reset_zoom_action);
  gtk_widget_class_install_action (widget_class, "win.export-chart", NULL, export_chart_action);
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
  GtkDropTarget *drop;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->run_states = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, run_state_free);
  self->shown = g_array_new (FALSE, FALSE, sizeof (gint64));
  self->live_text = g_strdup ("");
  self->toasts = g_ptr_array_new_with_free_func (g_free);
  bind_window_state (self);

  g_signal_connect_object (self->run_list, "selected-rows-changed",
                           G_CALLBACK (on_selection_changed), self, 0);
  gtk_list_box_set_filter_func (self->run_list, run_filter_func, self, NULL);
  g_signal_connect_object (self->run_filter, "search-changed", G_CALLBACK (on_run_filter_changed),
                           self, 0);
  {
    GtkEventController *keys = gtk_event_controller_key_new ();

    gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
    g_signal_connect_object (keys, "key-pressed", G_CALLBACK (on_run_list_key), self, 0);
    gtk_widget_add_controller (GTK_WIDGET (self->run_list), keys);
  }
  g_signal_connect_object (self->health_panel, "show-step", G_CALLBACK (on_show_step), self, 0);
  g_signal_connect_object (self->view_stack, "notify::visible-child-name",
                           G_CALLBACK (sync_tune_view), self, G_CONNECT_SWAPPED);

  drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect_object (drop, "drop", G_CALLBACK (on_drop), self, 0);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));
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
                             G_CALLBACK (update_recent_menu), self, G_CONNECT_SWAPPED);
  update_recent_menu (self);
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
  return self->store;
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
  if (self->n_ingesting > 0 || self->n_evaluating > 0
      || dw_monitor_view_is_loading (self->monitor_view)
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
