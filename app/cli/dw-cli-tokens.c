/* dw-cli-tokens.c — `driftwatch-cli tokens --run R [--step S] [--seq I] [--top N]
 *                    [--by STAT] [--threshold T] [--tokenizer FILE] [--format text|json]`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The drill-down from a trend to its tokens, over the batches stored for a run:
 *   --run R                 the token ids most often behind catastrophic ratios (|ℓ| > T) with
 *                           their counts per step;
 *   --run R --step S        the step's sequences ranked by a per-sequence statistic (--by);
 *   --run R --step S --seq I  one sequence's tokens: id (text with --tokenizer), log-probs, ℓ.
 * Exit codes: 0 ok, 1 the store cannot be read, 2 usage errors, unknown runs, steps or rows.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "dw-batch-reader.h"
#include "dw-batch-tokens.h"
#include "dw-cli.h"
#include "dw-config-json.h"
#include "dw-store.h"
#include "dw-store-catastrophes.h"
#include "dw-tokenizer.h"

int dw_cli_tokens (int argc, char **argv);

typedef struct
{
  gboolean json;
  guint top;
  double threshold;
  DwTokenizer *tokenizer;
} TokensOutput;

static void
dw_cli_tokens_append_text (GString *out, const TokensOutput *o, gint64 id, gboolean json)
{
  g_autofree char *text = NULL;

  if (o->tokenizer == NULL || id < 0)
    return;
  text = dw_tokenizer_display (o->tokenizer, id);
  if (json)
    {
      g_string_append (out, ", \"text\": ");
      if (text)
        dw_json_append_string (out, text);
      else
        g_string_append (out, "null");
    }
  else
    g_string_append_printf (out, "  %s", text ? text : _ ("(unknown id)"));
}

static void
dw_cli_tokens_number (GString *out, double v)
{
  if (isfinite (v))
    g_string_append_printf (out, "%.9g", v);
  else
    g_string_append (out, "null");
}

/* --run R: catastrophic token ids across the run */
static int
dw_cli_tokens_run (DwStore *store, const DwRunInfo *run, const TokensOutput *o, GString *out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) top = NULL;
  guint with_ids = 0;
  g_autoptr (DwCatastrophes) cat
    = dw_store_catastrophes_collect (store, run->id, o->threshold, &with_ids, NULL, &error);

  if (cat == NULL)
    {
      dw_cli_error ("tokens", "%s", error->message);
      return g_error_matches (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND) ? 2 : 1;
    }
  top = dw_batch_tokens_catastrophes_top (cat, o->top);
  if (o->json)
    {
      g_string_append_printf (out,
                              "{\"run\": %" PRId64 ", \"threshold\": %.9g, \"steps_with_tokens\": "
                              "%u, \"catastrophic_tokens\": %" G_GUINT64_FORMAT ", \"top\": [",
                              run->id, o->threshold, with_ids,
                              dw_batch_tokens_catastrophes_get_total (cat));
      for (guint i = 0; i < top->len; i++)
        {
          const DwCatastrophicToken *t = g_ptr_array_index (top, i);
          g_string_append_printf (out,
                                  "%s\n  {\"token_id\": %" PRId64 ", \"count\": %" G_GUINT64_FORMAT,
                                  i ? "," : "", t->token_id, t->count);
          dw_cli_tokens_append_text (out, o, t->token_id, TRUE);
          g_string_append (out, ", \"per_step\": {");
          for (guint k = 0; k < t->steps->len; k++)
            g_string_append_printf (out, "%s\"%" PRId64 "\": %" G_GUINT64_FORMAT, k ? ", " : "",
                                    g_array_index (t->steps, gint64, k),
                                    g_array_index (t->counts, guint64, k));
          g_string_append (out, "}}");
        }
      g_string_append (out, "]}\n");
      return 0;
    }
  g_string_append_printf (out,
                          _ ("%" PRIu64 " catastrophic tokens (|log ratio| > %g) in %u "
                             "steps with token ids\n"),
                          (uint64_t)dw_batch_tokens_catastrophes_get_total (cat), o->threshold,
                          with_ids);
  g_string_append_printf (out, "%-10s %8s  %s\n", _ ("token id"), _ ("count"),
                          _ ("per step (step:count)"));
  for (guint i = 0; i < top->len; i++)
    {
      const DwCatastrophicToken *t = g_ptr_array_index (top, i);
      g_string_append_printf (out, "%-10" PRId64 " %8" G_GUINT64_FORMAT " ", t->token_id, t->count);
      for (guint k = 0; k < t->steps->len; k++)
        g_string_append_printf (out, " %" PRId64 ":%" G_GUINT64_FORMAT,
                                g_array_index (t->steps, gint64, k),
                                g_array_index (t->counts, guint64, k));
      dw_cli_tokens_append_text (out, o, t->token_id, FALSE);
      g_string_append_c (out, '\n');
    }
  return 0;
}

/* --step S: sequences ranked */
static int
dw_cli_tokens_step (const DwBatch *batch, DwSeqStat by, const TokensOutput *o, GString *out)
{
  g_autoptr (GArray) ranked = dw_batch_tokens_rank (batch, by);
  static const DwSeqStat shown[] = { DW_SEQ_STAT_LENGTH,  DW_SEQ_STAT_REWARD,
                                     DW_SEQ_STAT_K1_SUM,  DW_SEQ_STAT_K3_SUM,
                                     DW_SEQ_STAT_K1_MEAN, DW_SEQ_STAT_K3_MEAN,
                                     DW_SEQ_STAT_K2_MAX,  DW_SEQ_STAT_MAX_ABS_LOG_RATIO };

  if (o->json)
    {
      g_string_append_printf (out,
                              "{\"step\": %" PRId64 ", \"by\": \"%s\", \"rows\": %" G_GSIZE_FORMAT
                              ", \"sequences\": [",
                              batch->step, dw_batch_tokens_stat_name (by), batch->rows);
      for (guint i = 0; i < ranked->len && i < o->top; i++)
        {
          const DwSeqRanked *s = &g_array_index (ranked, DwSeqRanked, i);
          g_string_append_printf (out, "%s\n  {\"seq\": %u", i ? "," : "", s->row);
          for (int k = 0; k < DW_N_SEQ_STATS; k++)
            {
              g_string_append_printf (out, ", \"%s\": ", dw_batch_tokens_stat_name ((DwSeqStat)k));
              dw_cli_tokens_number (out, s->stats[k]);
            }
          g_string_append_c (out, '}');
        }
      g_string_append (out, "]}\n");
      return 0;
    }
  g_string_append_printf (out, _ ("step %" PRId64 ": %zu sequences by %s\n"), batch->step,
                          batch->rows, dw_batch_tokens_stat_name (by));
  g_string_append_printf (out, "%5s", "seq");
  for (guint k = 0; k < G_N_ELEMENTS (shown); k++)
    g_string_append_printf (out, " %*s", k + 1 == G_N_ELEMENTS (shown) ? 17 : 10,
                            dw_batch_tokens_stat_name (shown[k]));
  g_string_append_c (out, '\n');
  for (guint i = 0; i < ranked->len && i < o->top; i++)
    {
      const DwSeqRanked *s = &g_array_index (ranked, DwSeqRanked, i);
      g_string_append_printf (out, "%5u", s->row);
      for (guint k = 0; k < G_N_ELEMENTS (shown); k++)
        g_string_append_printf (out, " %*.4g", k + 1 == G_N_ELEMENTS (shown) ? 17 : 10,
                                s->stats[shown[k]]);
      g_string_append_c (out, '\n');
    }
  return 0;
}

/* --seq I: one sequence's tokens */
static int
dw_cli_tokens_sequence (const DwBatch *batch, guint row, const TokensOutput *o, GString *out)
{
  g_autoptr (GArray) tokens = NULL;

  if (row >= batch->rows)
    {
      dw_cli_error ("tokens", _ ("step %" PRId64 " has %zu sequences (0–%zu)"), batch->step,
                    batch->rows, batch->rows ? batch->rows - 1 : 0);
      return 2;
    }
  tokens = dw_batch_tokens_sequence (batch, row);
  if (o->json)
    {
      g_string_append_printf (out, "{\"step\": %" PRId64 ", \"seq\": %u, \"tokens\": [",
                              batch->step, row);
      for (guint i = 0; i < tokens->len; i++)
        {
          const DwTokenRow *t = &g_array_index (tokens, DwTokenRow, i);
          g_string_append_printf (out, "%s\n  {\"pos\": %u, \"token_id\": ", i ? "," : "",
                                  t->position);
          if (t->token_id >= 0)
            g_string_append_printf (out, "%" PRId64, t->token_id);
          else
            g_string_append (out, "null");
          dw_cli_tokens_append_text (out, o, t->token_id, TRUE);
          g_string_append (out, ", \"old_log_prob\": ");
          dw_cli_tokens_number (out, t->old_log_prob);
          g_string_append (out, ", \"rollout_log_prob\": ");
          dw_cli_tokens_number (out, t->rollout_log_prob);
          g_string_append (out, ", \"log_ratio\": ");
          dw_cli_tokens_number (out, t->log_ratio);
          g_string_append (out, ", \"mask\": ");
          dw_cli_tokens_number (out, t->mask);
          g_string_append_c (out, '}');
        }
      g_string_append (out, "]}\n");
      return 0;
    }
  g_string_append_printf (out, _ ("step %" PRId64 " sequence %u: %u tokens (* |log ratio| > %g)\n"),
                          batch->step, row, tokens->len, o->threshold);
  g_string_append_printf (out, "%5s %10s %12s %12s %12s %4s\n", "pos", _ ("token id"), "old",
                          "rollout", "log_ratio", "mask");
  for (guint i = 0; i < tokens->len; i++)
    {
      const DwTokenRow *t = &g_array_index (tokens, DwTokenRow, i);
      gboolean bad = t->mask != 0.0 && !(fabs (t->log_ratio) <= o->threshold);
      g_string_append_printf (out, "%5u %10" PRId64 " %12.6g %12.6g %12.6g %4g%s", t->position,
                              t->token_id, t->old_log_prob, t->rollout_log_prob, t->log_ratio,
                              t->mask, bad ? " *" : "  ");
      dw_cli_tokens_append_text (out, o, t->token_id, FALSE);
      g_string_append_c (out, '\n');
    }
  return 0;
}

int
dw_cli_tokens (int argc, char **argv)
{
  g_autofree char *run_arg = NULL, *db = NULL, *format = NULL, *by_name = NULL;
  g_autofree char *tokenizer_path = NULL;
  gint64 step = G_MININT64, seq = -1;
  gint top = 20;
  double threshold = 2.0;
  GOptionEntry entries[] = {
    { "run", 'r', 0, G_OPTION_ARG_STRING, &run_arg, N_ ("Run id or name"), "R" },
    { "step", 's', 0, G_OPTION_ARG_INT64, &step, N_ ("Training step of a stored batch"), "S" },
    { "seq", 'i', 0, G_OPTION_ARG_INT64, &seq, N_ ("Sequence (row) of that step"), "I" },
    { "top", 'n', 0, G_OPTION_ARG_INT, &top, N_ ("How many rows to print (default 20)"), "N" },
    { "by", 'b', 0, G_OPTION_ARG_STRING, &by_name,
      N_ ("Sequence statistic to rank by (default k3_sum): k1_sum, k2_sum, k3_sum, k1_mean, "
          "k2_mean, k3_mean, k1_max, k2_max, k3_max, max_abs_log_ratio, length, reward"),
      "STAT" },
    { "threshold", 't', 0, G_OPTION_ARG_DOUBLE, &threshold,
      N_ ("Catastrophic |log ratio| (default 2.0)"), "T" },
    { "tokenizer", 'k', 0, G_OPTION_ARG_FILENAME, &tokenizer_path,
      N_ ("Hugging Face tokenizer.json to print token text"), "FILE" },
    { "db", 'd', 0, G_OPTION_ARG_FILENAME, &db, N_ ("Store file (default: the user's store)"),
      "FILE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format, N_ ("text (default) or json"), "F" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx
    = g_option_context_new (_ ("— sequences and tokens behind a step's ratios"));
  g_autoptr (GError) error = NULL;
  g_autoptr (DwTokenizer) tokenizer = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  TokensOutput o = { FALSE, 20, 2.0, NULL };
  DwSeqStat by = DW_SEQ_STAT_K3_SUM;
  int rc;

  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 1)
    {
      dw_cli_error ("tokens", "%s", error ? error->message : _ ("unexpected argument"));
      return 2;
    }
  if (run_arg == NULL || (seq >= 0 && step == G_MININT64) || top < 1 || !(threshold >= 0))
    {
      dw_cli_error ("tokens", "%s",
                    _ ("usage: tokens --run R [--step S [--seq I]] [--top N] [--by STAT] "
                       "[--threshold T] [--tokenizer FILE] [--db FILE] [--format text|json]"));
      return 2;
    }
  if (by_name && !dw_batch_tokens_stat_from_name (by_name, &by))
    {
      dw_cli_error ("tokens", _ ("unknown statistic '%s' (see --help)"), by_name);
      return 2;
    }
  if (format && !g_str_equal (format, "json") && !g_str_equal (format, "text"))
    {
      dw_cli_error ("tokens", _ ("unknown format '%s' (text or json)"), format);
      return 2;
    }
  if (tokenizer_path)
    {
      tokenizer = dw_tokenizer_load (tokenizer_path, &error);
      if (tokenizer == NULL)
        {
          dw_cli_error ("tokens", "%s", error->message);
          return 2;
        }
    }
  o.json = format && g_str_equal (format, "json");
  o.top = (guint)top;
  o.threshold = threshold;
  o.tokenizer = tokenizer;

  g_autofree char *path = db ? g_strdup (db) : dw_cli_default_db_path ();
  g_autoptr (DwStore) store = dw_store_open (path, &error);
  if (store == NULL)
    {
      dw_cli_error ("tokens", "%s", error->message);
      return 1;
    }
  g_autoptr (DwRunInfo) run = dw_store_find_run (store, run_arg, &error);
  if (run == NULL)
    {
      dw_cli_error ("tokens", "%s", error->message);
      return 2;
    }
  if (step == G_MININT64)
    rc = dw_cli_tokens_run (store, run, &o, out);
  else
    {
      g_autoptr (DwBatch) batch = dw_store_load_batch (store, run->id, step, &error);
      if (batch == NULL)
        {
          dw_cli_error ("tokens", "%s", error->message);
          return g_error_matches (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND) ? 2 : 1;
        }
      rc = seq >= 0 ? dw_cli_tokens_sequence (batch, (guint)MIN (seq, G_MAXUINT), &o, out)
                    : dw_cli_tokens_step (batch, by, &o, out);
    }
  fputs (out->str, stdout);
  return rc;
}
