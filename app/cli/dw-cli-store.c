/* dw-cli-store.c — reading the store: `runs`, `tags --run R`, `series --run R --tag T`,
 * `export --run R`, all with [--db FILE] [--format …]
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The store is opened read-only (never created, migrated nor written). Values are printed at
 * full resolution (%.17g: round-trips a float64), NaN and ±inf as nan / inf / -inf (in JSON as the
 * strings "nan", "inf", "-inf", JSON having no such numbers). Exit codes: 0 ok, 1 the store
 * cannot be read, 2 usage errors, unknown runs and tags.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>

#include "dw-canonical.h"
#include "dw-cli.h"
#include "dw-csv.h"
#include "dw-health.h"
#include "dw-config-json.h"
#include "dw-run-config.h"
#include "dw-store-writer.h"

#include <json-glib/json-glib.h>

static void append_run_meta (GString *out, DwStore *store, gint64 run_id);

int dw_cli_runs (int argc, char **argv);
int dw_cli_tags (int argc, char **argv);
int dw_cli_series (int argc, char **argv);
int dw_cli_export (int argc, char **argv);

typedef struct
{
  const char *command;
  char *db;
  char *run;
  char *tag;
  char *format;
  gboolean json;
} Args;

static void
args_clear (Args *a)
{
  g_free (a->db);
  g_free (a->run);
  g_free (a->tag);
  g_free (a->format);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Args, args_clear)

/* Parses the common options; @want_run / @want_tag make them required. Returns 0 or the exit
 * code. */
static int
parse (Args *a, int argc, char **argv, gboolean want_run, gboolean want_tag, const char *text,
       const char *usage, gboolean text_format)
{
  GOptionEntry entries[] = {
    { "db", 'd', 0, G_OPTION_ARG_FILENAME, &a->db, N_ ("Store file (default: the user's store)"),
      "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_STRING, &a->run, N_ ("Run id or name"), "R" },
    { "tag", 't', 0, G_OPTION_ARG_STRING, &a->tag, N_ ("Tag as logged, or a canonical metric id"),
      "T" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &a->format,
      text_format ? N_ ("text (default) or json") : N_ ("csv (default) or json"), "F" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (text);
  g_autoptr (GError) error = NULL;

  if (!want_run)
    entries[1].flags = G_OPTION_FLAG_HIDDEN;
  if (!want_tag)
    entries[2].flags = G_OPTION_FLAG_HIDDEN;
  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 1)
    {
      dw_cli_error (a->command, "%s", error ? error->message : _ ("unexpected argument"));
      return 2;
    }
  if ((want_run && a->run == NULL) || (want_tag && a->tag == NULL))
    {
      dw_cli_error (a->command, "%s", usage);
      return 2;
    }
  if (a->format != NULL && !g_str_equal (a->format, "json")
      && !g_str_equal (a->format, text_format ? "text" : "csv"))
    {
      dw_cli_error (a->command, _ ("unknown format '%s' (%s or json)"), a->format,
                    text_format ? "text" : "csv");
      return 2;
    }
  a->json = a->format != NULL && g_str_equal (a->format, "json");
  return 0;
}

static DwStore *
open_store (Args *a, int *rc)
{
  g_autofree char *path = a->db ? g_strdup (a->db) : dw_cli_default_db_path ();
  g_autoptr (GError) error = NULL;
  DwStore *store = dw_store_open_read_only (path, &error);

  if (store == NULL)
    {
      dw_cli_error (a->command, "%s", error->message);
      *rc = 1;
    }
  return store;
}

static DwRunInfo *
find_run (Args *a, DwStore *store, int *rc)
{
  g_autoptr (GError) error = NULL;
  DwRunInfo *run = dw_store_find_run (store, a->run, &error);

  if (run == NULL)
    {
      dw_cli_error (a->command, "%s", error->message);
      *rc = g_error_matches (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND) ? 2 : 1;
    }
  return run;
}

static void
write_out (GString *out)
{
  fwrite (out->str, 1, out->len, stdout);
}

static const char *const status_names[] = { "finished", "live", "collapsed", "collapsing" };

static const char *
status_name (DwRunStatus s)
{
  return (guint)s < G_N_ELEMENTS (status_names) ? status_names[s] : "unknown";
}

static void append_run_check (GString *out, DwStore *store, gint64 run_id, gboolean json);

/* ---- runs ------------------------------------------------------------------------------- */

int
dw_cli_runs (int argc, char **argv)
{
  g_auto (Args) a = { "runs" };
  g_autoptr (DwStore) store = NULL;
  g_autoptr (GPtrArray) runs = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  int rc = parse (&a, argc, argv, FALSE, FALSE, _ ("— list the stored runs"),
                  _ ("usage: runs [--db FILE] [--format text|json]"), TRUE);

  if (rc == 0 && (store = open_store (&a, &rc)) != NULL)
    {
      runs = dw_store_list_runs (store, &error);
      if (runs == NULL)
        {
          dw_cli_error (a.command, "%s", error->message);
          rc = 1;
        }
    }
  if (rc != 0)
    return rc;
  g_ptr_array_set_free_func (runs, (GDestroyNotify)dw_run_info_free);
  if (a.json)
    g_string_append (out, "[");
  else
    g_string_append_printf (out, "%-5s %-28s %-9s %-9s %-15s %7s  %s\n", _ ("ID"), _ ("NAME"),
                            _ ("FRAMEWORK"), _ ("STATUS"), _ ("STEPS"), _ ("BATCHES"),
                            _ ("SOURCE"));
  for (guint i = 0; i < runs->len; i++)
    {
      DwRunInfo *r = runs->pdata[i];
      gboolean has_steps = r->last_step >= r->first_step && r->first_step >= 0;
      /* as the window's badge shows it: a finished run that ended unhealthy is collapsed */
      DwRunStatus status = dw_health_run_shown_status (store, r, NULL);
      if (a.json)
        {
          g_string_append_printf (
            out, "%s\n  {\"id\": %" G_GINT64_FORMAT ", \"name\": ", i ? "," : "", r->id);
          dw_json_append_string (out, r->name);
          g_string_append (out, ", \"framework\": ");
          dw_json_append_string (out, r->framework);
          g_string_append_printf (out, ", \"status\": \"%s\", ", status_name (status));
          if (has_steps)
            g_string_append_printf (
              out, "\"first_step\": %" G_GINT64_FORMAT ", \"last_step\": %" G_GINT64_FORMAT ", ",
              r->first_step, r->last_step);
          else
            g_string_append (out, "\"first_step\": null, \"last_step\": null, ");
          g_string_append_printf (
            out, "\"n_batches\": %" G_GINT64_FORMAT ", \"source\": ", r->n_batches);
          if (r->source != NULL)
            dw_json_append_string (out, r->source);
          else
            g_string_append (out, "null");
          {
            /* what ingest found out: generation, its source, config, version, experiment */
            g_autofree char *meta = dw_store_get_run_meta (store, r->id, NULL);
            g_string_append_printf (out, ", \"meta\": %s", meta != NULL ? meta : "null");
          }
          append_run_check (out, store, r->id, TRUE);
          g_string_append (out, "}");
        }
      else
        {
          g_autofree char *steps = has_steps
                                     ? g_strdup_printf ("%" G_GINT64_FORMAT "–%" G_GINT64_FORMAT,
                                                        r->first_step, r->last_step)
                                     : g_strdup ("—");
          g_string_append_printf (
            out, "%-5" G_GINT64_FORMAT " %-28s %-9s %-9s %-15s %7" G_GINT64_FORMAT "  %s\n", r->id,
            r->name, r->framework, status_name (status), steps, r->n_batches,
            r->source ? r->source : "");
          append_run_meta (out, store, r->id);
        }
    }
  if (a.json)
    g_string_append (out, runs->len ? "\n]\n" : "]\n");
  write_out (out);
  return 0;
}

/* Whether the run's logged metrics agree with a recompute under the config its log printed
 * (dw_run_config_check): an indented line of the table ("⚠ logged metrics disagree …"), or a
 * "config_check" member of its JSON object. Nothing when the run has no stored config. */
static void
append_run_check (GString *out, DwStore *store, gint64 run_id, gboolean json)
{
  DwRunCheck check;
  g_autofree char *text = NULL;

  if (!dw_run_config_check (store, run_id, &check, NULL, NULL)
      || (check.agreement == DW_RUN_AGREEMENT_UNKNOWN && check.n_steps == 0))
    return;
  text = dw_run_check_describe (&check);
  if (json)
    {
      g_string_append_printf (out,
                              ", \"config_check\": {\"agrees\": %s, \"n_steps\": %u, "
                              "\"n_flagged\": %u, \"n_failed\": %u, \"message\": ",
                              check.agreement == DW_RUN_AGREEMENT_AGREES      ? "true"
                              : check.agreement == DW_RUN_AGREEMENT_DISAGREES ? "false"
                                                                              : "null",
                              check.n_steps, check.n_flagged, check.n_failed);
      dw_json_append_string (out, text);
      g_string_append (out, "}");
      return;
    }
  g_string_append_printf (out, "      %s%s\n",
                          check.agreement == DW_RUN_AGREEMENT_DISAGREES ? "⚠ " : "", text);
}

/* One indented line under a run of the `runs` table: the generation and config ingest found
 * ("generation verl-0.9.0 (from its printed config) · verl 0.9.0 · gsm8k/exp · config {…}"). */
static void
append_run_meta (GString *out, DwStore *store, gint64 run_id)
{
  g_autofree char *meta = dw_store_get_run_meta (store, run_id, NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;
  const char *gen, *src, *ver, *project, *exp;

  if (meta == NULL || !json_parser_load_from_data (parser, meta, -1, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return;
  o = json_node_get_object (json_parser_get_root (parser));
  gen = json_object_get_string_member_with_default (o, "generation", NULL);
  src = json_object_get_string_member_with_default (o, "generation_source", "");
  ver = json_object_get_string_member_with_default (o, "framework_version", NULL);
  project = json_object_get_string_member_with_default (o, "project", NULL);
  exp = json_object_get_string_member_with_default (o, "experiment", NULL);
  g_string_append (out, "      ");
  if (gen != NULL)
    g_string_append_printf (out, _ ("generation %s (%s)"), gen,
                            g_str_equal (src, "log")      ? _ ("the version the log printed")
                            : g_str_equal (src, "config") ? _ ("from its printed config")
                                                          : _ ("inferred from its metric keys"));
  else
    g_string_append (out, _ ("generation unknown (no correction metrics, no printed config)"));
  if (ver != NULL)
    g_string_append_printf (out, " · %s", ver);
  if (exp != NULL)
    g_string_append_printf (out, " · %s%s%s", project ? project : "", project ? "/" : "", exp);
  if (json_object_has_member (o, "config"))
    {
      g_autoptr (JsonGenerator) g = json_generator_new ();
      g_autofree char *cfg = NULL;
      json_generator_set_root (g, json_object_get_member (o, "config"));
      cfg = json_generator_to_data (g, NULL);
      g_string_append_printf (out, _ (" · config %s"), cfg);
    }
  g_string_append_c (out, '\n');
  append_run_check (out, store, run_id, FALSE);
}

gboolean
dw_cli_run_stored_config (const char *db, const char *run_arg, char **config_json,
                          char **generation)
{
  g_autofree char *path = db != NULL ? g_strdup (db) : dw_cli_default_db_path ();
  g_autoptr (DwStore) store = dw_store_open_read_only (path, NULL);
  g_autoptr (DwRunInfo) run = NULL;
  g_autofree char *meta = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;

  *config_json = NULL;
  *generation = NULL;
  if (store == NULL || (run = dw_store_find_run (store, run_arg, NULL)) == NULL)
    return FALSE;
  meta = dw_store_get_run_meta (store, run->id, NULL);
  if (meta == NULL || !json_parser_load_from_data (parser, meta, -1, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return TRUE;
  o = json_node_get_object (json_parser_get_root (parser));
  *generation = g_strdup (json_object_get_string_member_with_default (o, "generation", NULL));
  if (json_object_has_member (o, "config"))
    {
      g_autoptr (JsonGenerator) g = json_generator_new ();
      json_generator_set_root (g, json_object_get_member (o, "config"));
      *config_json = json_generator_to_data (g, NULL);
    }
  return TRUE;
}

/* ---- tags / export: commands on the tags of one run -------------------------------------- */

/* Writes the output of a command on the tags of @run into @out; returns the exit code. */
typedef int (*TagsFunc) (Args *a, DwStore *store, const DwRunInfo *run, GPtrArray *tags,
                         GString *out);

/* Parses the options (--run required), opens the store, finds the run and lists its tags, then
 * lets @func write the output. */
static int
run_tags_command (int argc, char **argv, const char *command, const char *text, const char *usage,
                  gboolean text_format, TagsFunc func)
{
  g_auto (Args) a = { command };
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwRunInfo) run = NULL;
  g_autoptr (GPtrArray) tags = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  int rc = parse (&a, argc, argv, TRUE, FALSE, text, usage, text_format);

  if (rc == 0 && (store = open_store (&a, &rc)) != NULL && (run = find_run (&a, store, &rc)))
    {
      tags = dw_store_list_tags (store, run->id, &error);
      if (tags == NULL)
        {
          dw_cli_error (a.command, "%s", error->message);
          rc = 1;
        }
    }
  if (rc != 0)
    return rc;
  g_ptr_array_set_free_func (tags, (GDestroyNotify)dw_tag_info_free);
  rc = func (&a, store, run, tags, out);
  if (rc == 0)
    write_out (out);
  return rc;
}

/* Each tag with the canonical metric it names and what the logged number means, under the
 * generation the run's keys show (the one the store, `check` and the window read them under). */
static int
write_tags (Args *a, DwStore *store, const DwRunInfo *run, GPtrArray *tags, GString *out)
{
  const char *source = NULL;
  g_autofree char *generation = dw_store_get_run_generation (store, run->id, &source, NULL);

  if (a->json)
    g_string_append (out, "[");
  else if (g_strcmp0 (source, "log") == 0 || g_strcmp0 (source, "config") == 0)
    /* TRANSLATORS: first line of `tags`: the generation the run printed (its version or config) */
    g_string_append_printf (out, _ ("# generation: %s (printed by the run)\n"), generation);
  else
    /* TRANSLATORS: first line of `tags`: the generation whose key meanings are shown */
    g_string_append_printf (out, _ ("# generation: %s (inferred from the logged keys)\n"),
                            generation != NULL ? generation : _ ("unknown"));
  for (guint i = 0; i < tags->len; i++)
    {
      DwTagInfo *t = tags->pdata[i];
      DwCanonicalKeyInfo info = { NULL, NULL, NULL, NULL };
      gboolean known = dw_canonical_describe_key (t->name, generation, &info);

      if (a->json)
        {
          g_string_append_printf (out, "%s\n  {\"name\": ", i ? "," : "");
          dw_json_append_string (out, t->name);
          g_string_append (out, ", \"canonical\": ");
          if (t->canonical != NULL)
            dw_json_append_string (out, t->canonical);
          else
            g_string_append (out, "null");
          g_string_append_printf (
            out, ", \"n_points\": %" G_GINT64_FORMAT ", \"generation\": ", t->n_points);
          if (generation != NULL)
            dw_json_append_string (out, generation);
          else
            g_string_append (out, "null");
          g_string_append (out, ", \"meaning\": ");
          if (known)
            {
              dw_json_append_string (out, _ (info.meaning));
              g_string_append (out, ", \"logged_by\": ");
              dw_json_append_string (out, info.generations);
            }
          else
            g_string_append (out, "null, \"logged_by\": null");
          g_string_append_c (out, '}');
        }
      else
        g_string_append_printf (out, "%s\t%s\t%" G_GINT64_FORMAT "\t%s\n", t->name,
                                t->canonical ? t->canonical : "-", t->n_points,
                                known ? _ (info.meaning) : "-");
    }
  if (a->json)
    g_string_append (out, tags->len ? "\n]\n" : "]\n");
  return 0;
}

int
dw_cli_tags (int argc, char **argv)
{
  return run_tags_command (argc, argv, "tags",
                           _ ("— list the tags of a stored run, the canonical metric each names "
                              "and what it means"),
                           _ ("usage: tags --run R [--db FILE] [--format text|json]"), TRUE,
                           write_tags);
}

/* ---- series / export -------------------------------------------------------------------- */

static void
append_series_csv (GString *out, const char *tag, const DwSeries *s)
{
  for (gsize i = 0; i < s->n; i++)
    {
      if (tag != NULL)
        {
          dw_csv_field (out, tag);
          g_string_append_c (out, ',');
        }
      g_string_append_printf (out, "%" G_GINT64_FORMAT ",", s->steps[i]);
      if (tag != NULL)
        {
          if (!isnan (s->wall_times[i]))
            dw_csv_number (out, s->wall_times[i]);
          g_string_append_c (out, ',');
        }
      dw_csv_number (out, s->values[i]);
      g_string_append_c (out, '\n');
    }
}

static void
append_series_json (GString *out, const char *tag, const DwSeries *s)
{
  g_string_append (out, "{\"tag\": ");
  dw_json_append_string (out, tag);
  g_string_append (out, ", \"steps\": [");
  for (gsize i = 0; i < s->n; i++)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT, i ? ", " : "", s->steps[i]);
  g_string_append (out, "], \"values\": [");
  for (gsize i = 0; i < s->n; i++)
    {
      if (i)
        g_string_append (out, ", ");
      dw_json_append_number (out, s->values[i]);
    }
  g_string_append (out, "], \"wall_times\": [");
  for (gsize i = 0; i < s->n; i++)
    {
      if (i)
        g_string_append (out, ", ");
      if (isnan (s->wall_times[i]))
        g_string_append (out, "null");
      else
        dw_json_append_number (out, s->wall_times[i]);
    }
  g_string_append (out, "], \"restart_steps\": [");
  for (gsize i = 0; i < s->n_restarts; i++)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT, i ? ", " : "", s->restart_steps[i]);
  g_string_append (out, "]}");
}

int
dw_cli_series (int argc, char **argv)
{
  g_auto (Args) a = { "series" };
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwRunInfo) run = NULL;
  g_autoptr (DwSeries) s = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  int rc = parse (&a, argc, argv, TRUE, TRUE, _ ("— one series of a stored run, full resolution"),
                  _ ("usage: series --run R --tag T [--db FILE] [--format csv|json]"), FALSE);

  if (rc == 0 && (store = open_store (&a, &rc)) != NULL && (run = find_run (&a, store, &rc)))
    {
      s = dw_store_get_series (store, run->id, a.tag, G_MININT64, &error);
      if (s == NULL)
        {
          dw_cli_error (a.command, "%s", error->message);
          rc = g_error_matches (error, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND) ? 2 : 1;
        }
    }
  if (rc != 0)
    return rc;
  if (a.json)
    {
      append_series_json (out, a.tag, s);
      g_string_append_c (out, '\n');
    }
  else
    {
      g_string_append (out, "step,value\n");
      append_series_csv (out, NULL, s);
    }
  write_out (out);
  return 0;
}

static int
write_export (Args *a, DwStore *store, const DwRunInfo *run, GPtrArray *tags, GString *out)
{
  if (a->json)
    {
      g_string_append_printf (out, "{\"run\": ");
      dw_json_append_string (out, run->name);
      g_string_append (out, ", \"framework\": ");
      dw_json_append_string (out, run->framework);
      g_string_append (out, ", \"series\": [");
    }
  else
    g_string_append (out, "tag,step,wall_time,value\n");
  for (guint i = 0; i < tags->len; i++)
    {
      DwTagInfo *t = tags->pdata[i];
      g_autoptr (GError) error = NULL;
      g_autoptr (DwSeries) s = dw_store_get_series (store, run->id, t->name, G_MININT64, &error);
      if (s == NULL)
        {
          dw_cli_error (a->command, "%s", error->message);
          return 1;
        }
      if (a->json)
        {
          g_string_append (out, i ? ",\n  " : "\n  ");
          append_series_json (out, t->name, s);
        }
      else
        append_series_csv (out, t->name, s);
      if (out->len > (1u << 20))
        {
          write_out (out);
          g_string_truncate (out, 0);
        }
    }
  if (a->json)
    g_string_append (out, tags->len ? "\n]}\n" : "]}\n");
  return 0;
}

int
dw_cli_export (int argc, char **argv)
{
  return run_tags_command (argc, argv, "export", _ ("— every series of a stored run"),
                           _ ("usage: export --run R [--db FILE] [--format csv|json]"), FALSE,
                           write_export);
}
