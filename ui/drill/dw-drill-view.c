/* dw-drill-view.c — the drill-down from a step to its sequences and tokens
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-drill"

#include "config.h"

#include <glib/gi18n.h>
#include <inttypes.h>
#include <math.h>

#include "dw-drill-item.h"
#include "dw-drill-loader.h"
#include "dw-drill-view.h"

/* More token cells than this make the flow box slow to lay out; the rest is said, not shown. */
#define DW_DRILL_MAX_TOKENS 4000
/* Token ids listed on the "Across the Run" page. */
#define DW_DRILL_RUN_TOP 50
/* The colour classes' edges, as fractions of the catastrophic threshold (0.01 … 2 at 2.0). */
static const double dw_drill_view_edges[] = { 0.005, 0.05, 0.25, 0.5, 1.0 };

static const char *const dw_drill_view_stat_titles[DW_N_SEQ_STATS] = {
  [DW_SEQ_STAT_K1_SUM] = N_ ("k1 sum"),   [DW_SEQ_STAT_K2_SUM] = N_ ("k2 sum"),
  [DW_SEQ_STAT_K3_SUM] = N_ ("k3 sum"),   [DW_SEQ_STAT_K1_MEAN] = N_ ("k1 mean"),
  [DW_SEQ_STAT_K2_MEAN] = N_ ("k2 mean"), [DW_SEQ_STAT_K3_MEAN] = N_ ("k3 mean"),
  [DW_SEQ_STAT_K1_MAX] = N_ ("k1 max"),   [DW_SEQ_STAT_K2_MAX] = N_ ("k2 max"),
  [DW_SEQ_STAT_K3_MAX] = N_ ("k3 max"),   [DW_SEQ_STAT_MAX_ABS_LOG_RATIO] = N_ ("max |log-ratio|"),
  [DW_SEQ_STAT_LENGTH] = N_ ("length"),   [DW_SEQ_STAT_REWARD] = N_ ("reward"),
};

typedef enum
{
  DW_DRILL_COLUMN_RANK,
  DW_DRILL_COLUMN_SEQUENCE,
  DW_DRILL_COLUMN_CHOSEN,
  DW_DRILL_COLUMN_LENGTH,
  DW_DRILL_COLUMN_REWARD,
  DW_DRILL_COLUMN_MAX_ABS,
  DW_DRILL_COLUMN_TOKEN_ID,
  DW_DRILL_COLUMN_TEXT,
  DW_DRILL_COLUMN_COUNT,
  DW_DRILL_COLUMN_N_STEPS,
  DW_DRILL_COLUMN_PER_STEP,
} DwDrillColumn;

struct _DwDrillView
{
  GtkWidget parent_instance;

  AdwViewSwitcherTitle *switcher_title;
  GtkButton *tokenizer_button;
  AdwViewStack *view_stack;
  GtkStack *step_stack;
  GtkSpinner *step_spinner;
  AdwStatusPage *step_status;
  GtkLabel *step_label;
  GtkDropDown *stat_dropdown;
  GtkColumnView *sequence_view;
  GtkColumnViewColumn *chosen_column;
  GtkStack *tokens_stack;
  GtkLabel *sequence_label;
  GtkBox *legend_box;
  GtkLabel *tokenizer_label;
  GtkFlowBox *token_flow;
  GtkLabel *run_label;
  GtkSpinButton *threshold_spin;
  GtkAdjustment *threshold_adjustment;
  GtkStack *run_stack;
  GtkSpinner *run_spinner;
  AdwStatusPage *run_status;
  GtkColumnView *run_view;

  DwStoreReader *reader;
  gint64 run_id;
  gint64 step;
  DwSeqStat by;
  DwDrillStep *current;
  GListStore *sequences;
  GtkSingleSelection *sequence_selection;
  GListStore *tokens;
  GListStore *run_tokens;
  DwTokenizer *tokenizer; /* the run folder's, or the one the user chose */
  char *tokenizer_path;
  gboolean tokenizer_chosen;
  gint64 run_loaded; /* the run (and threshold) the "Across the Run" page shows, or -1 */
  double run_loaded_threshold;
  GCancellable *step_cancellable;
  GCancellable *run_cancellable;
  GCancellable *tokenizer_cancellable;
  guint n_loading;
};

G_DEFINE_FINAL_TYPE (DwDrillView, dw_drill_view, GTK_TYPE_WIDGET)

/* ------------------------------------------------------------------------- colours */

/* The colour class of @log_ratio: "dw-lr-n5" … "dw-lr-0" … "dw-lr-p5" (NaN: the darkest). */
static const char *
dw_drill_view_color_class (double log_ratio, double threshold)
{
  static const char *const negative[]
    = { "dw-lr-0", "dw-lr-n1", "dw-lr-n2", "dw-lr-n3", "dw-lr-n4", "dw-lr-n5" };
  static const char *const positive[]
    = { "dw-lr-0", "dw-lr-p1", "dw-lr-p2", "dw-lr-p3", "dw-lr-p4", "dw-lr-p5" };
  double magnitude = fabs (log_ratio);
  guint level = 0;

  if (isnan (log_ratio))
    return positive[5];
  while (level < G_N_ELEMENTS (dw_drill_view_edges)
         && magnitude >= dw_drill_view_edges[level] * threshold)
    level++;
  return log_ratio < 0 ? negative[level] : positive[level];
}

/* A swatch per colour class with the edges between them, most negative first. */
static void
dw_drill_view_build_legend (DwDrillView *self)
{
  double threshold = gtk_adjustment_get_value (self->threshold_adjustment);
  GtkWidget *child;
  int n_edges = (int)G_N_ELEMENTS (dw_drill_view_edges);

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->legend_box))) != NULL)
    gtk_box_remove (self->legend_box, child);
  child = gtk_label_new (_ ("log-ratio"));
  gtk_widget_add_css_class (child, "caption");
  gtk_widget_set_margin_end (child, 6);
  gtk_box_append (self->legend_box, child);
  for (int level = -n_edges; level <= n_edges; level++)
    {
      double edge = level == 0 ? 0.0 : copysign (dw_drill_view_edges[ABS (level) - 1], level);
      double middle = level == 0 ? 0.0 : edge * threshold * 1.01;
      GtkWidget *swatch = gtk_label_new (NULL);
      g_autofree char *tip = NULL;

      gtk_widget_add_css_class (swatch, "dw-swatch");
      gtk_widget_add_css_class (swatch, dw_drill_view_color_class (middle, threshold));
      if (level == 0)
        tip = g_strdup_printf (_ ("|log-ratio| < %g"), dw_drill_view_edges[0] * threshold);
      else if (ABS (level) == n_edges)
        tip = g_strdup_printf (level < 0 ? _ ("log-ratio ≤ −%g (catastrophic)")
                                         : _ ("log-ratio ≥ %g (catastrophic)"),
                               threshold);
      else
        tip = g_strdup_printf (
          _ ("%g ≤ |log-ratio| < %g, %s"), dw_drill_view_edges[ABS (level) - 1] * threshold,
          dw_drill_view_edges[ABS (level)] * threshold,
          level < 0 ? _ ("rollout engine more likely") : _ ("trainer more likely"));
      gtk_widget_set_tooltip_text (swatch, tip);
      gtk_box_append (self->legend_box, swatch);
      if (ABS (level) == n_edges || level == 0)
        {
          g_autofree char *text = level == 0
                                    ? g_strdup ("0")
                                    : g_strdup_printf ("%s%g", level < 0 ? "−" : "+", threshold);
          GtkWidget *label = gtk_label_new (text);
          gtk_widget_add_css_class (label, "caption");
          gtk_widget_add_css_class (label, "numeric");
          gtk_widget_set_margin_start (label, 2);
          gtk_widget_set_margin_end (label, 2);
          gtk_box_append (self->legend_box, label);
        }
    }
}

/* ------------------------------------------------------------------------- text */

static char *
dw_drill_view_number (double value)
{
  return isnan (value) ? g_strdup ("—") : g_strdup_printf ("%.4g", value);
}

/* The token's text with its spaces shown ("·"), or "#id" when no tokenizer knows it (so an id
 * never reads as the text "42"). */
static char *
dw_drill_view_token_label (DwDrillItem *item)
{
  const char *text = dw_drill_item_get_text (item);
  GString *out;

  if (text == NULL)
    return dw_drill_item_get_token_id (item) < 0
             ? g_strdup ("?")
             : g_strdup_printf ("#%" PRId64, dw_drill_item_get_token_id (item));
  if (*text == '\0')
    return g_strdup ("∅");
  out = g_string_new (NULL);
  for (const char *p = text; *p; p++)
    if (*p == ' ')
      g_string_append (out, "·");
    else
      g_string_append_c (out, *p);
  return g_string_free (out, FALSE);
}

/* What a person hovering a token reads: id, text, ℓ, ratio, both log-probs, position. */
static char *
dw_drill_view_token_tooltip (DwDrillItem *item)
{
  const DwTokenRow *t = dw_drill_item_get_token (item);
  const char *text = dw_drill_item_get_text (item);
  g_autofree char *id = t->token_id < 0 ? g_strdup (_ ("unknown id"))
                                        : g_strdup_printf (_ ("token %" PRId64), t->token_id);
  g_autofree char *shown = text ? g_strdup_printf (" “%s”", text) : g_strdup ("");

  return g_strdup_printf (_ ("%s%s · position %u\n"
                             "log-ratio %.6g · ratio %.6g\n"
                             "log π training %.6g · log π rollout %.6g%s"),
                          id, shown, t->position, t->log_ratio, exp (t->log_ratio), t->old_log_prob,
                          t->rollout_log_prob,
                          t->mask == 0.0 ? _ ("\nmasked out: not trained on") : "");
}

/* ------------------------------------------------------------------------- columns */

static void
dw_drill_view_setup_cell_cb (GtkSignalListItemFactory *factory, GtkListItem *list_item,
                             gpointer user_data)
{
  DwDrillColumn column = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (factory), "dw-column"));
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (
    GTK_LABEL (label),
    column == DW_DRILL_COLUMN_TEXT || column == DW_DRILL_COLUMN_PER_STEP ? 0.0f : 1.0f);
  if (column == DW_DRILL_COLUMN_PER_STEP || column == DW_DRILL_COLUMN_TEXT)
    gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  if (column != DW_DRILL_COLUMN_TEXT)
    gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (list_item, label);
}

static char *
dw_drill_view_per_step_text (DwDrillItem *item)
{
  const DwCatastrophicToken *t = dw_drill_item_get_catastrophic (item);
  GString *out = g_string_new (NULL);

  for (guint k = 0; k < t->steps->len; k++)
    g_string_append_printf (out, "%s%" PRId64 ":%" G_GUINT64_FORMAT, k ? " " : "",
                            g_array_index (t->steps, gint64, k),
                            g_array_index (t->counts, guint64, k));
  return g_string_free (out, FALSE);
}

static char *
dw_drill_view_cell_text (DwDrillView *self, DwDrillColumn column, DwDrillItem *item)
{
  switch (column)
    {
    case DW_DRILL_COLUMN_RANK:
      return g_strdup_printf ("%u", dw_drill_item_get_rank (item) + 1);
    case DW_DRILL_COLUMN_SEQUENCE:
      return g_strdup_printf ("%u", dw_drill_item_get_row (item));
    case DW_DRILL_COLUMN_CHOSEN:
      return dw_drill_view_number (dw_drill_item_get_stat (item, self->by));
    case DW_DRILL_COLUMN_LENGTH:
      return dw_drill_view_number (dw_drill_item_get_stat (item, DW_SEQ_STAT_LENGTH));
    case DW_DRILL_COLUMN_REWARD:
      return dw_drill_view_number (dw_drill_item_get_stat (item, DW_SEQ_STAT_REWARD));
    case DW_DRILL_COLUMN_MAX_ABS:
      return dw_drill_view_number (dw_drill_item_get_stat (item, DW_SEQ_STAT_MAX_ABS_LOG_RATIO));
    case DW_DRILL_COLUMN_TOKEN_ID:
      return g_strdup_printf ("%" PRId64, dw_drill_item_get_token_id (item));
    case DW_DRILL_COLUMN_TEXT:
      return g_strdup (dw_drill_item_get_text (item) ? dw_drill_item_get_text (item) : "");
    case DW_DRILL_COLUMN_COUNT:
      return g_strdup_printf ("%" G_GUINT64_FORMAT, dw_drill_item_get_count (item));
    case DW_DRILL_COLUMN_N_STEPS:
      return g_strdup_printf ("%u", dw_drill_item_get_catastrophic (item)->steps->len);
    case DW_DRILL_COLUMN_PER_STEP:
    default:
      return dw_drill_view_per_step_text (item);
    }
}

static void
dw_drill_view_bind_cell_cb (GtkSignalListItemFactory *factory, GtkListItem *list_item,
                            DwDrillView *self)
{
  DwDrillColumn column = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (factory), "dw-column"));
  DwDrillItem *item = gtk_list_item_get_item (list_item);
  GtkLabel *label = GTK_LABEL (gtk_list_item_get_child (list_item));
  g_autofree char *text = dw_drill_view_cell_text (self, column, item);

  gtk_label_set_text (label, text);
  gtk_widget_set_tooltip_text (GTK_WIDGET (label),
                               column == DW_DRILL_COLUMN_PER_STEP ? text : NULL);
}

static GtkColumnViewColumn *
dw_drill_view_add_column (DwDrillView *self, GtkColumnView *view, const char *title,
                          DwDrillColumn column, gboolean expand)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  GtkColumnViewColumn *out;

  g_object_set_data (G_OBJECT (factory), "dw-column", GINT_TO_POINTER (column));
  g_signal_connect (factory, "setup", G_CALLBACK (dw_drill_view_setup_cell_cb), NULL);
  g_signal_connect_object (factory, "bind", G_CALLBACK (dw_drill_view_bind_cell_cb), self, 0);
  out = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_expand (out, expand);
  gtk_column_view_column_set_resizable (out, TRUE);
  gtk_column_view_append_column (view, out);
  g_object_unref (out);
  return out;
}

/* ------------------------------------------------------------------------- tokens */

static GtkWidget *
dw_drill_view_create_token_cb (gpointer object, gpointer user_data)
{
  DwDrillView *self = user_data;
  DwDrillItem *item = object;
  const DwTokenRow *t = dw_drill_item_get_token (item);
  g_autofree char *text = dw_drill_view_token_label (item);
  g_autofree char *tip = dw_drill_view_token_tooltip (item);
  GtkWidget *label = gtk_label_new (text);

  gtk_widget_add_css_class (label, "dw-token");
  if (t->mask == 0.0)
    gtk_widget_add_css_class (label, "dw-token-masked");
  else
    gtk_widget_add_css_class (
      label, dw_drill_view_color_class (t->log_ratio,
                                        gtk_adjustment_get_value (self->threshold_adjustment)));
  gtk_widget_set_tooltip_text (label, tip);
  return label;
}

static void
dw_drill_view_update_tokenizer_label (DwDrillView *self, const char *problem)
{
  g_autofree char *text = NULL;

  if (problem != NULL)
    text = g_strdup (problem);
  else if (self->tokenizer != NULL)
    /* TRANSLATORS: %s is the tokenizer file, %u the size of its vocabulary */
    text = g_strdup_printf (_ ("Token text from %s (%u ids); hover a token for its values."),
                            self->tokenizer_path, dw_tokenizer_get_size (self->tokenizer));
  else
    text = g_strdup (_ ("Token ids shown: no tokenizer.json in the run’s folder (choose one with "
                        "Tokenizer…); hover a token for its values."));
  gtk_label_set_text (self->tokenizer_label, text);
}

/* Shows the tokens of the sequence in row @row of the current batch. */
static void
dw_drill_view_show_sequence (DwDrillView *self, guint row)
{
  g_autoptr (GArray) tokens = dw_batch_tokens_sequence (self->current->batch, row);
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree char *heading = NULL;
  guint n_bad = 0, n_valid = 0;
  double threshold = gtk_adjustment_get_value (self->threshold_adjustment);

  for (guint i = 0; i < tokens->len; i++)
    {
      const DwTokenRow *t = &g_array_index (tokens, DwTokenRow, i);
      g_autofree char *text = self->tokenizer && t->token_id >= 0
                                ? dw_tokenizer_display (self->tokenizer, t->token_id)
                                : NULL;
      if (t->mask != 0.0)
        {
          n_valid++;
          n_bad += !(fabs (t->log_ratio) <= threshold);
        }
      if (i < DW_DRILL_MAX_TOKENS)
        g_ptr_array_add (items, dw_drill_item_new_token (t, text));
    }
  g_list_store_splice (self->tokens, 0, g_list_model_get_n_items (G_LIST_MODEL (self->tokens)),
                       items->pdata, items->len);
  heading = g_strdup_printf (
    /* TRANSLATORS: sequence N: its valid tokens, how many beyond the catastrophic threshold */
    _ ("Sequence %u · %u tokens · %u with |log-ratio| > %g%s"), row, n_valid, n_bad, threshold,
    tokens->len > DW_DRILL_MAX_TOKENS ? _ (" · the first 4000 shown") : "");
  gtk_label_set_text (self->sequence_label, heading);
  dw_drill_view_update_tokenizer_label (self, NULL);
  gtk_stack_set_visible_child_name (self->tokens_stack, "tokens");
}

static void
dw_drill_view_selection_cb (GtkSingleSelection *selection, GParamSpec *pspec, DwDrillView *self)
{
  DwDrillItem *item = gtk_single_selection_get_selected_item (selection);

  if (item == NULL || self->current == NULL)
    gtk_stack_set_visible_child_name (self->tokens_stack, "none");
  else
    dw_drill_view_show_sequence (self, dw_drill_item_get_row (item));
}

/* ------------------------------------------------------------------------- loading */

static void
dw_drill_view_busy (DwDrillView *self, gboolean busy)
{
  self->n_loading = busy ? self->n_loading + 1 : self->n_loading - 1;
}

static void
dw_drill_view_set_ranked (DwDrillView *self, GArray *ranked)
{
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < ranked->len; i++)
    g_ptr_array_add (items,
                     dw_drill_item_new_sequence (&g_array_index (ranked, DwSeqRanked, i), i));
  gtk_column_view_column_set_title (self->chosen_column, _ (dw_drill_view_stat_titles[self->by]));
  g_list_store_splice (self->sequences, 0,
                       g_list_model_get_n_items (G_LIST_MODEL (self->sequences)), items->pdata,
                       items->len);
  gtk_single_selection_set_selected (self->sequence_selection, GTK_INVALID_LIST_POSITION);
  gtk_stack_set_visible_child_name (self->tokens_stack, "none");
}

static void
dw_drill_view_show_status (AdwStatusPage *page, GtkStack *stack, const GError *error)
{
  gboolean none = g_error_matches (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND);

  adw_status_page_set_icon_name (page, none ? "edit-find-symbolic" : "dialog-error-symbolic");
  adw_status_page_set_title (page, none ? _ ("No Per-Token Data") : _ ("Cannot Read the Batches"));
  adw_status_page_set_description (page, error->message);
  gtk_stack_set_visible_child_name (stack, "status");
}

static void
dw_drill_view_step_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwDrillStep) step
    = dw_drill_loader_step_finish (DW_STORE_READER (source), result, &error);
  DwDrillView *self = user_data;
  g_autofree char *subtitle = NULL, *heading = NULL;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  dw_drill_view_busy (self, FALSE);
  gtk_spinner_stop (self->step_spinner);
  if (step == NULL)
    {
      dw_drill_view_show_status (self->step_status, self->step_stack, error);
      return;
    }
  if (step->tokenizer != NULL && !self->tokenizer_chosen)
    {
      g_clear_pointer (&self->tokenizer, dw_tokenizer_free);
      self->tokenizer = g_steal_pointer (&step->tokenizer);
      g_free (self->tokenizer_path);
      self->tokenizer_path = g_strdup (step->tokenizer_path);
    }
  g_clear_pointer (&self->current, dw_drill_step_unref);
  self->current = dw_drill_step_ref (step);
  self->step = step->step;
  subtitle = g_strdup_printf (_ ("%s · step %" PRId64), step->run_name, step->step);
  adw_view_switcher_title_set_subtitle (self->switcher_title, subtitle);
  heading
    = step->step == step->step_asked
        ? g_strdup_printf (_ ("Step %" PRId64 " · %zu sequences"), step->step, step->batch->rows)
        /* TRANSLATORS: the step asked for has no stored batch: the nearest is shown */
        : g_strdup_printf (_ ("Step %" PRId64 " (nearest stored to %" PRId64 ") · %zu "
                              "sequences"),
                           step->step, step->step_asked, step->batch->rows);
  gtk_label_set_text (self->step_label, heading);
  dw_drill_view_set_ranked (self, step->ranked);
  dw_drill_view_update_tokenizer_label (self, step->tokenizer_error);
  gtk_stack_set_visible_child_name (self->step_stack, "content");
}

static void
dw_drill_view_load_step (DwDrillView *self)
{
  g_cancellable_cancel (self->step_cancellable);
  g_clear_object (&self->step_cancellable);
  self->step_cancellable = g_cancellable_new ();
  dw_drill_view_busy (self, TRUE);
  gtk_spinner_start (self->step_spinner);
  gtk_stack_set_visible_child_name (self->step_stack, "loading");
  dw_drill_loader_step_async (self->reader, self->run_id, self->step, self->by,
                              !self->tokenizer_chosen, self->step_cancellable,
                              dw_drill_view_step_done_cb, self);
}

static void
dw_drill_view_rank_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ranked = dw_drill_loader_rank_finish (result, &error);
  DwDrillView *self = user_data;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  dw_drill_view_busy (self, FALSE);
  gtk_stack_set_visible_child_name (self->step_stack, "content");
  if (ranked != NULL)
    dw_drill_view_set_ranked (self, ranked);
}

static void
dw_drill_view_statistic_cb (GtkDropDown *dropdown, GParamSpec *pspec, DwDrillView *self)
{
  guint selected = gtk_drop_down_get_selected (dropdown);

  if (selected >= DW_N_SEQ_STATS || (DwSeqStat)selected == self->by)
    return;
  self->by = (DwSeqStat)selected;
  if (self->current == NULL)
    return;
  g_cancellable_cancel (self->step_cancellable);
  g_clear_object (&self->step_cancellable);
  self->step_cancellable = g_cancellable_new ();
  dw_drill_view_busy (self, TRUE);
  dw_drill_loader_rank_async (self->current, self->by, self->step_cancellable,
                              dw_drill_view_rank_done_cb, self);
}

static void
dw_drill_view_run_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwDrillRunTokens) run
    = dw_drill_loader_run_finish (DW_STORE_READER (source), result, &error);
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  DwDrillView *self = user_data;
  g_autofree char *heading = NULL;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  dw_drill_view_busy (self, FALSE);
  gtk_spinner_stop (self->run_spinner);
  if (run == NULL)
    {
      dw_drill_view_show_status (self->run_status, self->run_stack, error);
      return;
    }
  for (guint i = 0; i < run->top->len; i++)
    {
      const DwCatastrophicToken *t = g_ptr_array_index (run->top, i);
      g_autofree char *text
        = self->tokenizer ? dw_tokenizer_display (self->tokenizer, t->token_id) : NULL;
      g_ptr_array_add (items, dw_drill_item_new_catastrophic (t, text));
    }
  g_list_store_splice (self->run_tokens, 0,
                       g_list_model_get_n_items (G_LIST_MODEL (self->run_tokens)), items->pdata,
                       items->len);
  heading = g_strdup_printf (
    /* TRANSLATORS: catastrophic tokens of the run, in how many steps that carry token ids */
    _ ("%" PRIu64 " catastrophic tokens in %u steps with token ids · the %u ids most "
       "often behind them"),
    run->total, run->n_with_ids, run->top->len);
  gtk_label_set_text (self->run_label, heading);
  gtk_stack_set_visible_child_name (self->run_stack, "content");
}

/* The "Across the Run" page reads every batch of the run: only when it is shown. */
static void
dw_drill_view_load_run (DwDrillView *self)
{
  double threshold = gtk_adjustment_get_value (self->threshold_adjustment);

  if (self->run_id < 0 || g_strcmp0 (dw_drill_view_get_page (self), "run") != 0
      || (self->run_loaded == self->run_id && self->run_loaded_threshold == threshold))
    return;
  self->run_loaded = self->run_id;
  self->run_loaded_threshold = threshold;
  g_cancellable_cancel (self->run_cancellable);
  g_clear_object (&self->run_cancellable);
  self->run_cancellable = g_cancellable_new ();
  dw_drill_view_busy (self, TRUE);
  gtk_spinner_start (self->run_spinner);
  gtk_label_set_text (self->run_label, _ ("Reading every batch of the run…"));
  gtk_stack_set_visible_child_name (self->run_stack, "loading");
  dw_drill_loader_run_async (self->reader, self->run_id, threshold, DW_DRILL_RUN_TOP,
                             self->run_cancellable, dw_drill_view_run_done_cb, self);
}

static void
dw_drill_view_page_cb (DwDrillView *self)
{
  dw_drill_view_load_run (self);
}

static void
dw_drill_view_threshold_cb (DwDrillView *self)
{
  DwDrillItem *item;

  dw_drill_view_build_legend (self);
  item = gtk_single_selection_get_selected_item (self->sequence_selection);
  if (item != NULL && self->current != NULL)
    dw_drill_view_show_sequence (self, dw_drill_item_get_row (item));
  dw_drill_view_load_run (self);
}

/* ------------------------------------------------------------------------- tokenizer */

static void
dw_drill_view_tokenizer_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  DwTokenizer *tokenizer = dw_drill_loader_tokenizer_finish (result, &error);
  DwDrillView *self = user_data;
  DwDrillItem *item;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  dw_drill_view_busy (self, FALSE);
  if (tokenizer == NULL)
    {
      dw_drill_view_update_tokenizer_label (self, error->message);
      return;
    }
  g_clear_pointer (&self->tokenizer, dw_tokenizer_free);
  self->tokenizer = tokenizer;
  self->tokenizer_chosen = TRUE;
  item = gtk_single_selection_get_selected_item (self->sequence_selection);
  if (item != NULL && self->current != NULL)
    dw_drill_view_show_sequence (self, dw_drill_item_get_row (item));
  dw_drill_view_update_tokenizer_label (self, NULL);
  self->run_loaded = -1; /* its text column */
  dw_drill_view_load_run (self);
}

void
dw_drill_view_set_tokenizer_path (DwDrillView *self, const char *path)
{
  g_return_if_fail (DW_IS_DRILL_VIEW (self) && path != NULL);
  g_cancellable_cancel (self->tokenizer_cancellable);
  g_clear_object (&self->tokenizer_cancellable);
  self->tokenizer_cancellable = g_cancellable_new ();
  g_free (self->tokenizer_path);
  self->tokenizer_path = g_strdup (path);
  dw_drill_view_busy (self, TRUE);
  dw_drill_loader_tokenizer_async (path, self->tokenizer_cancellable,
                                   dw_drill_view_tokenizer_done_cb, self);
}

static void
dw_drill_view_tokenizer_chosen_cb (GtkNativeDialog *dialog, int response, DwDrillView *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      if (path != NULL)
        dw_drill_view_set_tokenizer_path (self, path);
    }
  gtk_native_dialog_destroy (dialog);
  g_object_unref (dialog);
}

static void
dw_drill_view_tokenizer_clicked_cb (DwDrillView *self)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
    _ ("Choose a Tokenizer"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
    GTK_FILE_CHOOSER_ACTION_OPEN, _ ("_Open"), _ ("_Cancel"));
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, _ ("Hugging Face tokenizer (tokenizer.json)"));
  gtk_file_filter_add_pattern (filter, "*.json");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), filter);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect_object (dialog, "response", G_CALLBACK (dw_drill_view_tokenizer_chosen_cb), self,
                           0);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* ------------------------------------------------------------------------- object */

static void
dw_drill_view_dispose (GObject *object)
{
  DwDrillView *self = DW_DRILL_VIEW (object);
  GtkWidget *child;

  g_cancellable_cancel (self->step_cancellable);
  g_cancellable_cancel (self->run_cancellable);
  g_cancellable_cancel (self->tokenizer_cancellable);
  gtk_widget_dispose_template (GTK_WIDGET (self), DW_TYPE_DRILL_VIEW);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (dw_drill_view_parent_class)->dispose (object);
}

static void
dw_drill_view_finalize (GObject *object)
{
  DwDrillView *self = DW_DRILL_VIEW (object);

  g_clear_object (&self->step_cancellable);
  g_clear_object (&self->run_cancellable);
  g_clear_object (&self->tokenizer_cancellable);
  g_clear_pointer (&self->current, dw_drill_step_unref);
  g_clear_pointer (&self->tokenizer, dw_tokenizer_free);
  g_clear_object (&self->sequences);
  g_clear_object (&self->sequence_selection);
  g_clear_object (&self->tokens);
  g_clear_object (&self->run_tokens);
  g_free (self->tokenizer_path);
  g_clear_object (&self->reader);
  G_OBJECT_CLASS (dw_drill_view_parent_class)->finalize (object);
}

static void
dw_drill_view_class_init (DwDrillViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = dw_drill_view_dispose;
  object_class->finalize = dw_drill_view_finalize;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/driftwatch/Driftwatch/dw-drill-view.ui");
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, switcher_title);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, tokenizer_button);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, view_stack);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, step_stack);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, step_spinner);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, step_status);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, step_label);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, stat_dropdown);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, sequence_view);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, tokens_stack);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, sequence_label);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, legend_box);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, tokenizer_label);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, token_flow);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, run_label);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, threshold_spin);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, threshold_adjustment);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, run_stack);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, run_spinner);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, run_status);
  gtk_widget_class_bind_template_child (widget_class, DwDrillView, run_view);
}

/* The token colours, once per display. */
static void
dw_drill_view_load_css (void)
{
  static gboolean loaded;
  GtkCssProvider *provider;

  if (loaded || gdk_display_get_default () == NULL)
    return;
  loaded = TRUE;
  provider = gtk_css_provider_new ();
  gtk_css_provider_load_from_resource (provider, "/io/github/driftwatch/Driftwatch/dw-drill.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (),
                                              GTK_STYLE_PROVIDER (provider),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_object_unref (provider);
}

static void
dw_drill_view_init_columns (DwDrillView *self)
{
  GtkColumnView *seq = self->sequence_view, *run = self->run_view;

  dw_drill_view_add_column (self, seq, "#", DW_DRILL_COLUMN_RANK, FALSE);
  dw_drill_view_add_column (self, seq, _ ("Sequence"), DW_DRILL_COLUMN_SEQUENCE, FALSE);
  self->chosen_column = dw_drill_view_add_column (
    self, seq, _ (dw_drill_view_stat_titles[self->by]), DW_DRILL_COLUMN_CHOSEN, FALSE);
  dw_drill_view_add_column (self, seq, _ ("Tokens"), DW_DRILL_COLUMN_LENGTH, FALSE);
  dw_drill_view_add_column (self, seq, _ ("Reward"), DW_DRILL_COLUMN_REWARD, FALSE);
  dw_drill_view_add_column (self, seq, _ ("max |ℓ|"), DW_DRILL_COLUMN_MAX_ABS, FALSE);
  dw_drill_view_add_column (self, run, _ ("Token id"), DW_DRILL_COLUMN_TOKEN_ID, FALSE);
  dw_drill_view_add_column (self, run, _ ("Text"), DW_DRILL_COLUMN_TEXT, FALSE);
  dw_drill_view_add_column (self, run, _ ("Count"), DW_DRILL_COLUMN_COUNT, FALSE);
  dw_drill_view_add_column (self, run, _ ("Steps"), DW_DRILL_COLUMN_N_STEPS, FALSE);
  dw_drill_view_add_column (self, run, _ ("Per step (step:count)"), DW_DRILL_COLUMN_PER_STEP, TRUE);
}

static void
dw_drill_view_init (DwDrillView *self)
{
  g_autoptr (GtkStringList) stats = gtk_string_list_new (NULL);
  GtkNoSelection *run_selection;

  gtk_widget_init_template (GTK_WIDGET (self));
  dw_drill_view_load_css ();
  self->run_id = -1;
  self->run_loaded = -1;
  self->by = DW_SEQ_STAT_K3_SUM;
  self->sequences = g_list_store_new (DW_TYPE_DRILL_ITEM);
  self->tokens = g_list_store_new (DW_TYPE_DRILL_ITEM);
  self->run_tokens = g_list_store_new (DW_TYPE_DRILL_ITEM);
  self->sequence_selection
    = gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->sequences)));
  gtk_single_selection_set_autoselect (self->sequence_selection, FALSE);
  gtk_single_selection_set_can_unselect (self->sequence_selection, TRUE);
  gtk_column_view_set_model (self->sequence_view, GTK_SELECTION_MODEL (self->sequence_selection));
  run_selection = gtk_no_selection_new (G_LIST_MODEL (g_object_ref (self->run_tokens)));
  gtk_column_view_set_model (self->run_view, GTK_SELECTION_MODEL (run_selection));
  g_object_unref (run_selection);
  dw_drill_view_init_columns (self);
  gtk_flow_box_bind_model (self->token_flow, G_LIST_MODEL (self->tokens),
                           dw_drill_view_create_token_cb, self, NULL);

  for (guint i = 0; i < DW_N_SEQ_STATS; i++)
    gtk_string_list_append (stats, _ (dw_drill_view_stat_titles[i]));
  gtk_drop_down_set_model (self->stat_dropdown, G_LIST_MODEL (stats));
  gtk_drop_down_set_selected (self->stat_dropdown, self->by);
  dw_drill_view_build_legend (self);

  g_signal_connect_object (self->sequence_selection, "notify::selected",
                           G_CALLBACK (dw_drill_view_selection_cb), self, 0);
  g_signal_connect_object (self->stat_dropdown, "notify::selected",
                           G_CALLBACK (dw_drill_view_statistic_cb), self, 0);
  g_signal_connect_object (self->view_stack, "notify::visible-child-name",
                           G_CALLBACK (dw_drill_view_page_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->threshold_adjustment, "value-changed",
                           G_CALLBACK (dw_drill_view_threshold_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->tokenizer_button, "clicked",
                           G_CALLBACK (dw_drill_view_tokenizer_clicked_cb), self,
                           G_CONNECT_SWAPPED);
}

GtkWidget *
dw_drill_view_new (DwStoreReader *reader)
{
  DwDrillView *self;

  g_return_val_if_fail (DW_IS_STORE_READER (reader), NULL);
  self = g_object_new (DW_TYPE_DRILL_VIEW, NULL);
  self->reader = g_object_ref (reader);
  return GTK_WIDGET (self);
}

void
dw_drill_view_show_step (DwDrillView *self, gint64 run_id, gint64 step)
{
  g_return_if_fail (DW_IS_DRILL_VIEW (self));
  if (run_id != self->run_id && !self->tokenizer_chosen)
    {
      g_clear_pointer (&self->tokenizer, dw_tokenizer_free);
      g_clear_pointer (&self->tokenizer_path, g_free);
    }
  self->run_id = run_id;
  self->step = step;
  adw_view_stack_set_visible_child_name (self->view_stack, "step");
  dw_drill_view_load_step (self);
}

gboolean
dw_drill_view_is_loading (DwDrillView *self)
{
  g_return_val_if_fail (DW_IS_DRILL_VIEW (self), FALSE);
  return self->n_loading > 0;
}

gint64
dw_drill_view_get_run_id (DwDrillView *self)
{
  g_return_val_if_fail (DW_IS_DRILL_VIEW (self), -1);
  return self->run_id;
}

gint64
dw_drill_view_get_step (DwDrillView *self)
{
  g_return_val_if_fail (DW_IS_DRILL_VIEW (self), -1);
  return self->step;
}

guint
dw_drill_view_get_statistic (DwDrillView *self)
{
  g_return_val_if_fail (DW_IS_DRILL_VIEW (self), 0);
  return self->by;
}

GListModel *
dw_drill_view_get_sequences (DwDrillView *self)
{
  g_return_val_if_fail (DW_IS_DRILL_VIEW (self), NULL);
  return G_LIST_MODEL (self->sequences);
}

GListModel *
dw_drill_view_get_tokens (DwDrillView *self)
{
  g_return_val_if_fail (DW_IS_DRILL_VIEW (self), NULL);
  return G_LIST_MODEL (self->tokens);
}

GListModel *
dw_drill_view_get_run_tokens (DwDrillView *self)
{
  g_return_val_if_fail (DW_IS_DRILL_VIEW (self), NULL);
  return G_LIST_MODEL (self->run_tokens);
}

double
dw_drill_view_get_threshold (DwDrillView *self)
{
  g_return_val_if_fail (DW_IS_DRILL_VIEW (self), 0.0);
  return gtk_adjustment_get_value (self->threshold_adjustment);
}

void
dw_drill_view_set_threshold (DwDrillView *self, double threshold)
{
  g_return_if_fail (DW_IS_DRILL_VIEW (self));
  gtk_adjustment_set_value (self->threshold_adjustment, threshold);
}

const char *
dw_drill_view_get_page (DwDrillView *self)
{
  g_return_val_if_fail (DW_IS_DRILL_VIEW (self), NULL);
  return adw_view_stack_get_visible_child_name (self->view_stack);
}
