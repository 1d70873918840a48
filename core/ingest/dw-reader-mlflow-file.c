/* dw-reader-mlflow-file.c — MLflow's file store (`mlruns/`, the default tracking URI of MLflow
 * before 3.x and any `file:` URI)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Layout (mlflow/store/tracking/file_store.py): mlruns/<experiment id>/meta.yaml (experiment
 * `name`), mlruns/<experiment id>/<run id>/meta.yaml (`run_name`, `run_id`, `status`, …),
 * …/<run id>/metrics/<key>, …/params/<key>, …/tags/<key>. A metric key may contain '/', which
 * makes nested folders below metrics/ (verl's "rollout_corr/kl" is metrics/rollout_corr/kl).
 * Each log_metric() appends one line "%s %s %s\n" % (timestamp ms, value, step) to the key's
 * file; the value is Python's str(float) ("0.25", "1e-06", "nan", "inf", "-inf"); files written
 * before steps existed have two fields (step 0, as MLflow reads them). A metric file is a line
 * format for the shared byte-stream machinery; the key comes from the file's path. meta.yaml is
 * read with libyaml.
 */
#include "dw-reader-loggers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct
{
  char *key;
} MlfState;

static void
mlf_state_free (gpointer p)
{
  MlfState *st = p;
  g_free (st->key);
  g_free (st);
}

/* Splits "ts value [step]"; FALSE when the line is not one. */
static gboolean
mlf_parse_line (const char *line, gsize len, gint64 *ts, double *value, gint64 *step)
{
  const char *f[4];
  gsize fl[4];
  guint n = 0;
  gsize i = 0;

  while (i < len && n < 4)
    {
      while (i < len && line[i] == ' ')
        i++;
      if (i >= len)
        break;
      f[n] = line + i;
      while (i < len && line[i] != ' ')
        i++;
      fl[n] = (gsize)(line + i - f[n]);
      n++;
    }
  if (n < 2 || n > 3 || i < len)
    return FALSE;
  for (guint k = 0; k < n; k += 2)
    {
      char buf[32];
      char *end;
      if (fl[k] == 0 || fl[k] >= sizeof buf)
        return FALSE;
      memcpy (buf, f[k], fl[k]);
      buf[fl[k]] = '\0';
      if (!(g_ascii_isdigit (buf[0]) || (buf[0] == '-' && g_ascii_isdigit (buf[1]))))
        return FALSE;
      gint64 v = g_ascii_strtoll (buf, &end, 10);
      if (*end != '\0')
        return FALSE;
      if (k == 0)
        *ts = v;
      else
        *step = v;
    }
  if (n == 2)
    *step = 0;
  return dw_parse_number (f[1], fl[1], value);
}

static void
mlf_line (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const char *line, gsize len)
{
  MlfState *st = r->state;
  gint64 ts = 0, step = 0;
  double v;

  while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
    len--;
  if (len == 0)
    return;
  if (!mlf_parse_line (line, len, &ts, &v, &step))
    {
      dw_reader_diag (ctx, offset,
                      "MLflow metric file: not a \"timestamp value step\" line, skipped");
      return;
    }
  dw_reader_emit (ctx, st->key, step, (double)ts / 1000.0, v, NULL);
}

void
dw_reader_mlflow_file_init (DwLogReader *reader)
{
  MlfState *st = g_new0 (MlfState, 1);
  st->key = dw_mlflow_file_key (reader->path);
  reader->state = st;
  reader->state_free = mlf_state_free;
  reader->line = mlf_line;
}

/* ---- layout ------------------------------------------------------------------------------ */

gboolean
dw_mlflow_file_is_run_dir (const char *dir)
{
  g_autofree char *meta = g_build_filename (dir, "meta.yaml", NULL);
  g_autofree char *metrics = g_build_filename (dir, "metrics", NULL);
  return g_file_test (meta, G_FILE_TEST_IS_REGULAR) && g_file_test (metrics, G_FILE_TEST_IS_DIR);
}

char *
dw_mlflow_file_run_dir (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  /* …/<run id>/metrics[/nested…]/<key>: the first ancestor named "metrics" whose parent is a
   * run folder (a key may itself contain "metrics/") */
  for (int depth = 0; depth < 64; depth++)
    {
      g_autofree char *base = g_path_get_basename (dir);
      g_autofree char *parent = g_path_get_dirname (dir);
      if (g_str_equal (parent, dir))
        return NULL;
      if (g_str_equal (base, "metrics") && dw_mlflow_file_is_run_dir (parent))
        {
          /* the outermost such folder is the run's (metrics/x/metrics/y is key x/metrics/y) */
          g_autofree char *outer = dw_mlflow_file_run_dir (parent);
          return outer != NULL ? g_steal_pointer (&outer) : g_steal_pointer (&parent);
        }
      g_free (dir);
      dir = g_steal_pointer (&parent);
    }
  return NULL;
}

char *
dw_mlflow_file_key (const char *path)
{
  g_autofree char *run = path != NULL ? dw_mlflow_file_run_dir (path) : NULL;

  if (run != NULL)
    {
      gsize n = strlen (run) + strlen (G_DIR_SEPARATOR_S "metrics" G_DIR_SEPARATOR_S);
      if (strlen (path) > n)
        return g_strdup (path + n);
    }
  return g_path_get_basename (path != NULL ? path : "metric");
}

gboolean
dw_mlflow_file_sniff (const char *path, const guint8 *head, gsize len)
{
  const guint8 *nl;
  gint64 ts, step;
  double v;
  g_autofree char *run = NULL;

  if (path == NULL || len == 0)
    return FALSE;
  nl = memchr (head, '\n', len);
  if (nl == NULL)
    return FALSE;
  if (!mlf_parse_line ((const char *)head, (gsize)(nl - head), &ts, &v, &step))
    return FALSE;
  run = dw_mlflow_file_run_dir (path);
  return run != NULL;
}

/* The scalar value of top-level key @key in a YAML mapping file, or NULL. */
static char *
yaml_top_scalar (const char *file, const char *key)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  yaml_parser_t parser;
  yaml_event_t ev;
  char *result = NULL;
  int depth = 0;
  gboolean want_value = FALSE, is_key = TRUE;

  if (!g_file_get_contents (file, &text, &len, NULL) || len > (1u << 20))
    return NULL;
  if (!yaml_parser_initialize (&parser))
    return NULL;
  yaml_parser_set_input_string (&parser, (const unsigned char *)text, len);
  for (;;)
    {
      if (!yaml_parser_parse (&parser, &ev))
        break;
      yaml_event_type_t t = ev.type;
      if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT)
        {
          if (depth == 1)
            is_key = TRUE, want_value = FALSE; /* a nested value of a top-level key */
          depth++;
        }
      else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT)
        depth--;
      else if (t == YAML_SCALAR_EVENT && depth == 1)
        {
          const char *s = (const char *)ev.data.scalar.value;
          if (is_key)
            want_value = g_str_equal (s, key);
          else if (want_value && result == NULL)
            result = g_strdup (s);
          is_key = !is_key;
        }
      if (depth == 1 && (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT))
        is_key = TRUE;
      gboolean done = t == YAML_STREAM_END_EVENT;
      yaml_event_delete (&ev);
      if (done || result != NULL)
        break;
    }
  yaml_parser_delete (&parser);
  if (result != NULL && result[0] == '\0')
    g_clear_pointer (&result, g_free);
  return result;
}

char *
dw_mlflow_file_run_name (const char *run_dir)
{
  g_autofree char *meta = g_build_filename (run_dir, "meta.yaml", NULL);
  g_autofree char *tag = g_build_filename (run_dir, "tags", "mlflow.runName", NULL);
  char *name = yaml_top_scalar (meta, "run_name");
  g_autofree char *text = NULL;

  if (name != NULL && g_utf8_validate (name, -1, NULL))
    return name;
  g_free (name);
  if (g_file_get_contents (tag, &text, NULL, NULL) && text[0] != '\0'
      && g_utf8_validate (text, -1, NULL) && strlen (text) < 1000)
    return g_strdup (g_strstrip (text));
  return NULL;
}
