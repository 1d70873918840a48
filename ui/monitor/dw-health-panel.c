/* dw-health-panel.c
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-health-panel"

#include "config.h"

#include <inttypes.h>

#include <math.h>

#include <adwaita.h>
#include <glib/gi18n.h>

#include "dw-canonical.h"
#include "dw-health-panel.h"

typedef struct
{
  gint64 run_id;
  char *run_name;
  DwHealthEvent *event;
} Entry;

struct _DwHealthPanel
{
  GtkWidget parent_instance;

  GtkStack *stack;
  GtkLabel *summary_label;
  GtkListBox *events_list;

  GPtrArray *entries; /* Entry*, display order */
};

G_DEFINE_FINAL_TYPE (DwHealthPanel, dw_health_panel, GTK_TYPE_WIDGET)

enum
{
  SHOW_STEP,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
entry_free (gpointer data)
{
  Entry *e = data;

  g_free (e->run_name);
  dw_health_event_free (e->event);
  g_free (e);
}

static int
entry_compare (gconstpointer a, gconstpointer b)
{
  const Entry *ea = *(const Entry *const *)a, *eb = *(const Entry *const *)b;
  const DwHealthEvent *pa = ea->event, *pb = eb->event;
  int c = dw_health_event_compare (&pa, &pb);

  if (c != 0)
    return c;
  return ea->run_id < eb->run_id ? -1 : ea->run_id > eb->run_id;
}

static GtkWidget *
section_label (const char *heading, const char *text)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *h = gtk_label_new (heading);
  GtkWidget *t = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (h), 0);
  gtk_widget_add_css_class (h, "heading");
  gtk_label_set_xalign (GTK_LABEL (t), 0);
  gtk_label_set_wrap (GTK_LABEL (t), TRUE);
  /* advice holds long config keys ("+actor_rollout_ref.rollout.engine_kwargs…"): broken inside
   * words when needed, or one key sets the window's minimum width */
  gtk_label_set_wrap_mode (GTK_LABEL (t), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (t), TRUE);
  gtk_box_append (GTK_BOX (box), h);
  gtk_box_append (GTK_BOX (box), t);
  return box;
}

static void
on_show_clicked (GtkButton *button, DwHealthPanel *self)
{
  guint index = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "dw-index"));

  dw_health_panel_activate_event (self, index);
}

static GtkWidget *
make_row (DwHealthPanel *self, Entry *e, guint index)
{
  const DwHealthEvent *ev = e->event;
  const DwCanonicalMetric *m = ev->metric ? dw_canonical_lookup (ev->metric) : NULL;
  const DwHealthRule *rule;
  GtkWidget *row = adw_expander_row_new ();
  GtkWidget *icon, *button, *actions, *content;
  g_autofree char *subtitle = NULL, *steps = NULL;

  /* run names and tags are the user's: never Pango markup ("a&b <x>" shows as written) */
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _ (ev->title));
  if (ev->last_step > ev->first_step)
    /* TRANSLATORS: health event: first and last step a rule fired on, and how many steps */
    steps = g_strdup_printf (_ ("steps %" PRId64 "–%" PRId64 " (%" PRId64 " firing)"),
                             ev->first_step, ev->last_step, ev->n_steps);
  else
    /* TRANSLATORS: health event: the step a rule fired on */
    steps = g_strdup_printf (_ ("step %" PRId64), ev->first_step);
  rule = dw_health_rule_lookup (ev->rule_id);
  if (rule != NULL && rule->kind == DW_HEALTH_RULE_DRIFT)
    /* TRANSLATORS: health event subtitle of a trend rule: run name · steps · metric title · the
     * rolling median it watches (of the value, |value| or |ln value|) when it fired */
    subtitle = g_strdup_printf (_ ("%s · %s · %s, rolling median %.4g"), e->run_name, steps,
                                m ? _ (m->title) : (ev->tag ? ev->tag : ""), ev->value);
  else
    /* TRANSLATORS: health event subtitle: run name · steps · metric title · value at first step */
    subtitle = g_strdup_printf (_ ("%s · %s · %s = %.4g"), e->run_name, steps,
                                m ? _ (m->title) : (ev->tag ? ev->tag : ""), ev->value);
  if (isfinite (ev->threshold))
    {
      /* TRANSLATORS: appended to a health event subtitle: the bound the value crossed */
      g_autofree char *with = g_strdup_printf (_ ("%s, threshold %.4g"), subtitle, ev->threshold);
      g_free (subtitle);
      subtitle = g_steal_pointer (&with);
    }
  adw_expander_row_set_subtitle (ADW_EXPANDER_ROW (row), subtitle);

  icon = gtk_image_new_from_icon_name (ev->severity == DW_HEALTH_CRITICAL ? "dialog-error-symbolic"
                                       : ev->severity == DW_HEALTH_WARNING
                                         ? "dialog-warning-symbolic"
                                         : "dialog-information-symbolic");
  gtk_widget_add_css_class (icon, "severity-icon");
  gtk_widget_add_css_class (row, ev->severity == DW_HEALTH_CRITICAL  ? "health-critical"
                                 : ev->severity == DW_HEALTH_WARNING ? "health-warning"
                                                                     : "health-info");
  adw_expander_row_add_prefix (ADW_EXPANDER_ROW (row), icon);

  /* the row's two actions stacked, so that the row fits a 360 px window */
  actions = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_valign (actions, GTK_ALIGN_CENTER);
  adw_expander_row_add_action (ADW_EXPANDER_ROW (row), actions);
  button = gtk_button_new_with_mnemonic (_ ("Show in _Charts"));
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_set_tooltip_text (button, _ ("Zoom the charts to the first step this rule fired on"));
  g_object_set_data (G_OBJECT (button), "dw-index", GUINT_TO_POINTER (index));
  g_signal_connect_object (button, "clicked", G_CALLBACK (on_show_clicked), self, 0);
  gtk_box_append (GTK_BOX (actions), button);
  /* the sequences and tokens of that step (win.show-tokens, ui/drill/) */
  button = gtk_button_new_with_mnemonic (_ ("_Tokens…"));
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_set_tooltip_text (button,
                               _ ("The sequences and tokens of the first step it fired on"));
  gtk_actionable_set_action_target (GTK_ACTIONABLE (button), "(xx)", e->run_id, ev->first_step);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "win.show-tokens");
  gtk_box_append (GTK_BOX (actions), button);

  content = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_margin_start (content, 12);
  gtk_widget_set_margin_end (content, 12);
  gtk_widget_set_margin_top (content, 12);
  gtk_widget_set_margin_bottom (content, 12);
  gtk_box_append (GTK_BOX (content), section_label (_ ("What it means"), _ (ev->explanation)));
  gtk_box_append (GTK_BOX (content), section_label (_ ("What to try"), _ (ev->advice)));
  adw_expander_row_add_row (ADW_EXPANDER_ROW (row), content);
  return row;
}

static void
rebuild (DwHealthPanel *self)
{
  GtkWidget *child;
  guint n_warn = 0, n_crit = 0;
  g_autofree char *summary = NULL;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->events_list))) != NULL)
    gtk_list_box_remove (self->events_list, child);
  g_ptr_array_sort (self->entries, entry_compare);
  for (guint i = 0; i < self->entries->len; i++)
    {
      Entry *e = g_ptr_array_index (self->entries, i);

      n_crit += e->event->severity == DW_HEALTH_CRITICAL;
      n_warn += e->event->severity == DW_HEALTH_WARNING;
      GtkWidget *row = make_row (self, e, i);

      /* The first event is where to start reading: open it. */
      if (i == 0)
        adw_expander_row_set_expanded (ADW_EXPANDER_ROW (row), TRUE);
      gtk_list_box_append (self->events_list, row);
    }
  if (self->entries->len > 0)
    {
      Entry *first = g_ptr_array_index (self->entries, 0);
      g_autofree char *crit
        = g_strdup_printf (ngettext ("%u critical", "%u critical", n_crit), n_crit);
      g_autofree char *warn
        = g_strdup_printf (ngettext ("%u warning", "%u warnings", n_warn), n_warn);

      if (n_crit > 0 && n_warn > 0)
        /* TRANSLATORS: health summary: "2 critical, 3 warnings — first at step 140" */
        summary = g_strdup_printf (_ ("%s, %s — first at step %" PRId64), crit, warn,
                                   first->event->first_step);
      else
        /* TRANSLATORS: health summary: "3 warnings — first at step 140" */
        summary = g_strdup_printf (_ ("%s — first at step %" PRId64), n_crit > 0 ? crit : warn,
                                   first->event->first_step);
    }
  gtk_label_set_label (self->summary_label, summary ? summary : "");
  gtk_stack_set_visible_child_name (self->stack, self->entries->len > 0 ? "events" : "empty");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "health.copy-report", self->entries->len > 0);
}

static void
copy_report_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  g_autofree char *report = dw_health_panel_dup_report (DW_HEALTH_PANEL (widget));

  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), report);
}

static void
dw_health_panel_dispose (GObject *object)
{
  DwHealthPanel *self = DW_HEALTH_PANEL (object);
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (dw_health_panel_parent_class)->dispose (object);
}

static void
dw_health_panel_finalize (GObject *object)
{
  DwHealthPanel *self = DW_HEALTH_PANEL (object);

  g_ptr_array_unref (self->entries);
  G_OBJECT_CLASS (dw_health_panel_parent_class)->finalize (object);
}

static void
dw_health_panel_class_init (DwHealthPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = dw_health_panel_dispose;
  object_class->finalize = dw_health_panel_finalize;

  /**
   * DwHealthPanel::show-step:
   * @self: the panel
   * @run_id: the run the event belongs to
   * @step: the first step the rule fired on
   *
   * The user asked to see an event on the charts.
   */
  signals[SHOW_STEP] = g_signal_new ("show-step", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                     NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT64, G_TYPE_INT64);

  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PATH "/dw-health-panel.ui");
  gtk_widget_class_bind_template_child (widget_class, DwHealthPanel, stack);
  gtk_widget_class_bind_template_child (widget_class, DwHealthPanel, summary_label);
  gtk_widget_class_bind_template_child (widget_class, DwHealthPanel, events_list);
  gtk_widget_class_install_action (widget_class, "health.copy-report", NULL, copy_report_action);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
dw_health_panel_init (DwHealthPanel *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->entries = g_ptr_array_new_with_free_func (entry_free);
  rebuild (self);
}

GtkWidget *
dw_health_panel_new (void)
{
  return g_object_new (DW_TYPE_HEALTH_PANEL, NULL);
}

void
dw_health_panel_clear (DwHealthPanel *self)
{
  g_return_if_fail (DW_IS_HEALTH_PANEL (self));
  g_ptr_array_set_size (self->entries, 0);
  rebuild (self);
}

void
dw_health_panel_add_events (DwHealthPanel *self, gint64 run_id, const char *run_name,
                            GPtrArray *events)
{
  g_return_if_fail (DW_IS_HEALTH_PANEL (self));
  if (events == NULL || events->len == 0)
    return;
  for (guint i = 0; i < events->len; i++)
    {
      Entry *e = g_new0 (Entry, 1);

      e->run_id = run_id;
      e->run_name = g_strdup (run_name);
      e->event = dw_health_event_copy (g_ptr_array_index (events, i));
      g_ptr_array_add (self->entries, e);
    }
  rebuild (self);
}

guint
dw_health_panel_get_n_events (DwHealthPanel *self)
{
  g_return_val_if_fail (DW_IS_HEALTH_PANEL (self), 0);
  return self->entries->len;
}

void
dw_health_panel_activate_event (DwHealthPanel *self, guint index)
{
  Entry *e;

  g_return_if_fail (DW_IS_HEALTH_PANEL (self));
  g_return_if_fail (index < self->entries->len);
  e = g_ptr_array_index (self->entries, index);
  g_signal_emit (self, signals[SHOW_STEP], 0, e->run_id, e->event->first_step);
}

char *
dw_health_panel_dup_report (DwHealthPanel *self)
{
  GString *out = g_string_new (NULL);
  const char *run = NULL;

  g_return_val_if_fail (DW_IS_HEALTH_PANEL (self), NULL);
  for (guint i = 0; i < self->entries->len; i++)
    {
      Entry *e = g_ptr_array_index (self->entries, i);

      if (g_strcmp0 (run, e->run_name) != 0)
        {
          run = e->run_name;
          g_string_append_printf (out, "%s%s\n", out->len ? "\n" : "", run);
        }
      dw_health_append_event_text (out, e->event);
    }
  return g_string_free (out, FALSE);
}
