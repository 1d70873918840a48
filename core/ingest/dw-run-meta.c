/* dw-run-meta.c — framework version, project/experiment and correction config from a log
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * verl's config dump is Python (pprint), not JSON: a small converter turns the Python literal
 * into JSON text (strings re-quoted, True/False/None, tuples as arrays, pprint's implicitly
 * concatenated string pieces `('abc' 'def')` joined, nan/inf as strings), which json-glib then
 * parses. No Debian library reads Python literals from C.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "dw-log-reader-private.h"
#include "dw-run-meta.h"
#include "dw-schema.h"

#define CHUNK      (1u << 20)
#define MAX_CONFIG (16u << 20)

/* ---- Python literal → JSON ----------------------------------------------------------- */

static gboolean
py_string_to (const char **pp, const char *end, GString *raw)
{
  const char *p = *pp;
  char q = *p++;

  while (p < end && *p != q)
    {
      if (*p == '\\' && p + 1 < end)
        {
          char c = p[1];
          g_string_append_c (raw, c == 'n' ? '\n' : c == 't' ? '\t' : c);
          p += 2;
          continue;
        }
      g_string_append_c (raw, *p++);
    }
  if (p >= end)
    return FALSE;
  *pp = p + 1;
  return TRUE;
}

static void
json_quote (GString *out, const char *s, gsize n)
{
  g_string_append_c (out, '"');
  for (gsize i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char)s[i];
      if (c == '"' || c == '\\')
        g_string_append_printf (out, "\\%c", c);
      else if (c < 0x20)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_c (out, (char)c);
    }
  g_string_append_c (out, '"');
}

static void
skip_ws (const char **p, const char *end)
{
  while (*p < end && g_ascii_isspace (**p))
    (*p)++;
}

/* Is the parenthesised group at *p only string pieces? Then joins them into @out. */
static gboolean
string_group (const char **pp, const char *end, GString *out)
{
  const char *p = *pp + 1;
  g_autoptr (GString) raw = g_string_new (NULL);
  gboolean any = FALSE;

  for (;;)
    {
      skip_ws (&p, end);
      if (p < end && *p == ')')
        break;
      if (p >= end || (*p != '\'' && *p != '"'))
        return FALSE;
      if (!py_string_to (&p, end, raw))
        return FALSE;
      any = TRUE;
    }
  if (!any)
    return FALSE;
  json_quote (out, raw->str, raw->len);
  *pp = p + 1;
  return TRUE;
}

static char *
py_to_json (const char *s, gsize n)
{
  const char *p = s, *end = s + n;
  GString *out = g_string_sized_new (n + 64);

  while (p < end)
    {
      char c = *p;
      if (c == '\'' || c == '"')
        {
          g_autoptr (GString) raw = g_string_new (NULL);
          if (!py_string_to (&p, end, raw))
            break;
          json_quote (out, raw->str, raw->len);
          continue;
        }
      if (c == '(')
        {
          if (string_group (&p, end, out))
            continue;
          g_string_append_c (out, '[');
          p++;
          continue;
        }
      if (c == ')')
        {
          g_string_append_c (out, ']');
          p++;
          continue;
        }
      if (g_ascii_isdigit (c))
        {
          /* a number, with its exponent: verl's default actor lr prints as 1e-06 (the 'e' is
           * not a name) */
          while (p < end && (g_ascii_isdigit (*p) || *p == '.'))
            g_string_append_c (out, *p++);
          if (p < end && (*p == 'e' || *p == 'E'))
            {
              g_string_append_c (out, *p++);
              if (p < end && (*p == '+' || *p == '-'))
                g_string_append_c (out, *p++);
              while (p < end && g_ascii_isdigit (*p))
                g_string_append_c (out, *p++);
            }
          continue;
        }
      if (g_ascii_isalpha (c) || c == '_')
        {
          const char *b = p;
          while (p < end && (g_ascii_isalnum (*p) || *p == '_' || *p == '.'))
            p++;
          gsize l = (gsize)(p - b);
          if (l == 4 && memcmp (b, "True", 4) == 0)
            g_string_append (out, "true");
          else if (l == 5 && memcmp (b, "False", 5) == 0)
            g_string_append (out, "false");
          else if (l == 4 && memcmp (b, "None", 4) == 0)
            g_string_append (out, "null");
          else
            json_quote (out, b, l); /* nan, inf, odd objects: kept as text */
          continue;
        }
      if (c == '-' && p + 4 <= end && memcmp (p, "-inf", 4) == 0)
        {
          g_string_append (out, "\"-inf\"");
          p += 4;
          continue;
        }
      g_string_append_c (out, c);
      p++;
    }
  return g_string_free (out, FALSE);
}

/* ---- lines --------------------------------------------------------------------------- */

/* Splits "(Name pid=123[, ip=…]) rest" into prefix and content (ANSI already stripped). */
static const char *
ray_prefix (const char *s, gsize *prefix_len)
{
  const char *p = s;
  *prefix_len = 0;
  while (*p == ' ')
    p++;
  if (*p == '(')
    {
      const char *cp = strchr (p, ')');
      const char *pid = strstr (p, "pid=");
      if (cp != NULL && pid != NULL && pid < cp)
        {
          *prefix_len = (gsize)(cp + 1 - s);
          p = cp + 1;
          if (*p == ' ')
            p++;
          return p;
        }
    }
  return s;
}

typedef struct
{
  DwFormat format;
  /* verl config dump */
  gboolean collecting;
  char *prefix; /* Ray prefix of the dump's first line */
  GString *dump;
  int depth;
  char quote; /* inside a string literal of the dump across lines? ('\0' if not) */
  JsonNode *config;
  /* slime */
  gboolean in_args;
  JsonObject *args;
  char *slime_project, *slime_experiment;
  /* both */
  char *version;
  gboolean metric_seen;
} Scan;

/* Brackets left open after @s (strings skipped; the string state carried in @sc). */
static void
track_depth (Scan *sc, const char *s)
{
  for (const char *p = s; *p; p++)
    {
      if (sc->quote != '\0')
        {
          if (*p == '\\' && p[1] != '\0')
            p++;
          else if (*p == sc->quote)
            sc->quote = '\0';
          continue;
        }
      if (*p == '\'' || *p == '"')
        sc->quote = *p;
      else if (*p == '{' || *p == '[' || *p == '(')
        sc->depth++;
      else if (*p == '}' || *p == ']' || *p == ')')
        sc->depth--;
    }
  sc->quote = '\0'; /* pprint never continues a string literal on the next line */
}

static void
finish_dump (Scan *sc)
{
  g_autofree char *json = py_to_json (sc->dump->str, sc->dump->len);
  g_autoptr (JsonParser) parser = json_parser_new ();

  sc->collecting = FALSE;
  g_string_set_size (sc->dump, 0);
  if (!json_parser_load_from_data (parser, json, -1, NULL))
    return;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return;
  JsonObject *o = json_node_get_object (root);
  /* verl's config: has the algorithm or trainer section */
  if (json_object_has_member (o, "algorithm") || json_object_has_member (o, "trainer"))
    {
      if (sc->config != NULL)
        json_node_unref (sc->config);
      sc->config = json_node_copy (root);
    }
}

static void
version_from_line (Scan *sc, const char *s)
{
  static GRegex *re = NULL;
  g_autoptr (GMatchInfo) m = NULL;

  if (sc->version != NULL || (strstr (s, "verl") == NULL && strstr (s, "slime") == NULL))
    return;
  if (g_once_init_enter (&re))
    g_once_init_leave (&re, g_regex_new ("\\b(?:verl|slime)(?:==| version:? v?| v)([0-9]+\\."
                                         "[0-9]+(?:\\.[0-9]+)?)",
                                         G_REGEX_OPTIMIZE, 0, NULL));
  if (g_regex_match (re, s, 0, &m))
    sc->version = g_match_info_fetch (m, 1);
}

/* The slime schema key whose flag's argparse dest is @dest ("tis_clip_low"), or NULL. */
static const DwSchemaKey *
slime_flag_key (const char *dest)
{
  const DwSchema *schema = dw_schema_get (DW_GEN_SLIME);
  char flag_dest[64];
  for (gsize index = 0; index < schema->n_keys; index++)
    if (dw_schema_flag_dest (&schema->keys[index], flag_dest, sizeof flag_dest)
        && strcmp (flag_dest, dest) == 0)
      return &schema->keys[index];
  return NULL;
}

/* slime / Megatron: "  name ....... value" between the arguments banners. */
static void
slime_arg_line (Scan *sc, const char *s)
{
  if (strstr (s, "--- arguments ---") != NULL || strstr (s, "- arguments -") != NULL)
    {
      sc->in_args = TRUE;
      return;
    }
  if (strstr (s, "end of arguments") != NULL)
    {
      sc->in_args = FALSE;
      return;
    }
  if (!sc->in_args)
    return;
  const char *b = s;
  while (*b == ' ')
    b++;
  const char *dots = strstr (b, " ..");
  if (dots == NULL)
    return;
  g_autofree char *name = g_strndup (b, (gsize)(dots - b));
  const char *v = dots;
  while (*v == ' ' || *v == '.')
    v++;
  if (g_str_equal (name, "tb_project_name") || g_str_equal (name, "tb_experiment_name"))
    {
      /* slime's TensorBoard folder is tensorboard_log/<tb_project_name>/<tb_experiment_name> */
      char **slot = name[3] == 'p' ? &sc->slime_project : &sc->slime_experiment;
      g_free (*slot);
      *slot = g_strdup (g_strstrip ((char *)v));
      if (g_str_equal (*slot, "None"))
        g_clear_pointer (slot, g_free);
      return;
    }
  /* the schema's slime flags, the rest of slime's TIS family (kept in the run's metadata even
   * when Driftwatch does not model it) and --get-mismatch-metrics, which turns the TIS hook on
   * for its metrics alone (slime loss.py) */
  if (!g_str_has_prefix (name, "tis") && !g_str_has_prefix (name, "use_tis")
      && !g_str_has_prefix (name, "custom_tis") && slime_flag_key (name) == NULL
      && strcmp (name, "get_mismatch_metrics") != 0)
    return;
  if (sc->args == NULL)
    sc->args = json_object_new ();
  g_autofree char *json = py_to_json (v, strlen (v));
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (json_parser_load_from_data (parser, json, -1, NULL) && json_parser_get_root (parser))
    json_object_set_member (sc->args, name, json_node_copy (json_parser_get_root (parser)));
  else
    json_object_set_string_member (sc->args, name, v);
}

/* slime: argparse "Namespace(use_tis=True, tis_clip=2.0, …)": the dests of the schema's slime
 * flags. */
static void
slime_namespace_line (Scan *sc, const char *s)
{
  const char *ns = strstr (s, "Namespace(");
  if (ns == NULL)
    return;
  const DwSchema *schema = dw_schema_get (DW_GEN_SLIME);
  for (gsize i = 0; i < schema->n_keys; i++)
    {
      char dest[64];
      if (!dw_schema_flag_dest (&schema->keys[i], dest, sizeof dest))
        continue; /* a mis.yaml key: not in slime's Namespace */
      g_autofree char *pat = g_strdup_printf ("%s=", dest);
      const char *k = strstr (ns, pat);
      if (k == NULL || (k[-1] != '(' && k[-1] != ' '))
        continue;
      const char *v = k + strlen (pat), *e = v;
      char q = (*v == '\'' || *v == '"') ? *v : '\0';
      if (q != '\0')
        e = strchr (v + 1, q) ? strchr (v + 1, q) + 1 : v + strlen (v);
      else
        while (*e && *e != ',' && *e != ')')
          e++;
      g_autofree char *json = py_to_json (v, (gsize)(e - v));
      g_autoptr (JsonParser) parser = json_parser_new ();
      if (sc->args == NULL)
        sc->args = json_object_new ();
      if (json_parser_load_from_data (parser, json, -1, NULL) && json_parser_get_root (parser))
        json_object_set_member (sc->args, dest, json_node_copy (json_parser_get_root (parser)));
    }
}

static void
scan_line (Scan *sc, const char *line, gsize len)
{
  g_autofree char *buf = g_strndup (line, len);
  gsize n = strlen (buf);
  gsize plen;

  if (memchr (buf, '\033', n) != NULL)
    n = dw_strip_ansi (buf, n);
  buf[n] = '\0';
  if (n > 0 && buf[n - 1] == '\r')
    buf[--n] = '\0';
  if (!g_utf8_validate (buf, (gssize)n, NULL))
    {
      /* what is kept ends up in JSON: invalid bytes become U+FFFD */
      char *valid = g_utf8_make_valid (buf, (gssize)n);
      g_free (buf);
      buf = valid;
      n = strlen (buf);
    }
  const char *content = ray_prefix (buf, &plen);

  if (sc->collecting)
    {
      if (plen != strlen (sc->prefix) || strncmp (buf, sc->prefix, plen) != 0)
        return; /* another worker's line in between */
      g_string_append (sc->dump, content);
      g_string_append_c (sc->dump, '\n');
      track_depth (sc, content);
      if (sc->depth <= 0)
        finish_dump (sc);
      else if (sc->dump->len > MAX_CONFIG)
        {
          sc->collecting = FALSE;
          g_string_set_size (sc->dump, 0);
        }
      return;
    }
  if (sc->format == DW_FORMAT_VERL_CONSOLE && dw_verl_console_marker (buf, n) != NULL
      && dw_verl_console_is_metric_line (line, len))
    {
      sc->metric_seen = TRUE;
      return;
    }
  if (sc->format == DW_FORMAT_SLIME_CONSOLE && dw_slime_console_is_metric_line (line, len))
    {
      sc->metric_seen = TRUE;
      return;
    }
  version_from_line (sc, content);
  if (sc->format == DW_FORMAT_SLIME_CONSOLE)
    {
      slime_arg_line (sc, content);
      slime_namespace_line (sc, content);
      return;
    }
  if (sc->config == NULL && content[0] == '{' && (content[1] == '\'' || content[1] == '"'))
    {
      g_free (sc->prefix);
      sc->prefix = g_strndup (buf, plen);
      sc->collecting = TRUE;
      sc->depth = 0;
      sc->quote = '\0';
      g_string_assign (sc->dump, content);
      g_string_append_c (sc->dump, '\n');
      track_depth (sc, content);
      if (sc->depth <= 0)
        finish_dump (sc);
    }
}

static JsonNode *
path_get (JsonNode *root, const char *a, const char *b)
{
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  JsonObject *o = json_node_get_object (root);
  JsonNode *n = json_object_get_member (o, a);
  if (n == NULL || b == NULL)
    return n;
  if (!JSON_NODE_HOLDS_OBJECT (n))
    return NULL;
  return json_object_get_member (json_node_get_object (n), b);
}

static const char *const known_verl[] = { "0.6.0", "0.6.1", "0.7.0", "0.7.1", "0.8.0", "0.9.0" };

/* The newest known release not newer than @version ("0.8.2" → verl-0.8.0). */
static char *
generation_of_version (const char *version)
{
  const char *best = NULL;
  g_auto (GStrv) v = g_strsplit (version, ".", 3);
  int vx = v[0] ? atoi (v[0]) : 0, vy = v[0] && v[1] ? atoi (v[1]) : 0;
  int vz = v[0] && v[1] && v[2] ? atoi (v[2]) : 0;

  for (guint i = 0; i < G_N_ELEMENTS (known_verl); i++)
    {
      int x, y, z;
      if (sscanf (known_verl[i], "%d.%d.%d", &x, &y, &z) != 3)
        continue;
      if (x < vx || (x == vx && (y < vy || (y == vy && z <= vz))))
        best = known_verl[i];
    }
  return g_strdup_printf ("verl-%s", best != NULL ? best : known_verl[0]);
}

/* The generation a verl rollout_correction config implies (the newest consistent with it). */
static const char *
generation_of_config (JsonObject *rc)
{
  JsonNode *thr = json_object_get_member (rc, "rollout_is_threshold");
  JsonNode *rs = json_object_get_member (rc, "rollout_rs");

  if (thr != NULL && JSON_NODE_HOLDS_VALUE (thr) && json_node_get_value_type (thr) == G_TYPE_STRING
      && strchr (json_node_get_string (thr), '_') != NULL)
    return "verl-0.9.0"; /* IcePop "lower_upper": v0.8.0 and later */
  if (json_object_has_member (rc, "rollout_token_veto_threshold")
      || json_object_has_member (rc, "rollout_rs_threshold_lower"))
    return "verl-0.7.0";
  if (rs != NULL && JSON_NODE_HOLDS_VALUE (rs) && json_node_get_value_type (rs) == G_TYPE_STRING)
    {
      const char *v = json_node_get_string (rs);
      if (g_str_equal (v, "token") || g_str_equal (v, "sequence") || g_str_equal (v, "geometric"))
        return "verl-0.7.0";
    }
  return "verl-0.9.0";
}

char *
dw_run_meta_scan (int fd, const char *path, DwFormat format, gint64 budget_us)
{
  Scan sc = { 0 };
  gint64 deadline = budget_us < 0 ? G_MAXINT64 : g_get_monotonic_time () + budget_us;
  g_autofree guint8 *buf = g_malloc (CHUNK);
  gint64 off = 0;
  (void)path;

  if (format != DW_FORMAT_VERL_CONSOLE && format != DW_FORMAT_SLIME_CONSOLE)
    return NULL;
  sc.format = format;
  sc.dump = g_string_new (NULL);
  while (!sc.metric_seen && g_get_monotonic_time () < deadline)
    {
      ssize_t r = pread (fd, buf, CHUNK, (off_t)off);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      gsize pos = 0, whole = (gsize)r;
      const guint8 *last = memrchr (buf, '\n', (gsize)r);
      if (last != NULL)
        whole = (gsize)(last - buf) + 1;
      while (pos < whole && !sc.metric_seen)
        {
          const guint8 *nl = memchr (buf + pos, '\n', whole - pos);
          gsize e = nl != NULL ? (gsize)(nl - buf) : whole;
          scan_line (&sc, (const char *)buf + pos, e - pos);
          pos = e + 1;
        }
      off += (gint64)whole;
      if ((gsize)r < CHUNK && last == NULL)
        break;
    }

  g_autoptr (JsonBuilder) b = json_builder_new ();
  gboolean any = FALSE;
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "framework");
  json_builder_add_string_value (b, format == DW_FORMAT_SLIME_CONSOLE ? "slime" : "verl");
  if (sc.version != NULL)
    {
      json_builder_set_member_name (b, "framework_version");
      json_builder_add_string_value (b, sc.version);
      any = TRUE;
    }
  JsonNode *project = path_get (sc.config, "trainer", "project_name");
  JsonNode *experiment = path_get (sc.config, "trainer", "experiment_name");
  if (project != NULL && JSON_NODE_HOLDS_VALUE (project))
    {
      json_builder_set_member_name (b, "project");
      json_builder_add_string_value (b, json_node_get_string (project));
      any = TRUE;
    }
  if (experiment != NULL && JSON_NODE_HOLDS_VALUE (experiment))
    {
      json_builder_set_member_name (b, "experiment");
      json_builder_add_string_value (b, json_node_get_string (experiment));
      any = TRUE;
    }
  if (format == DW_FORMAT_SLIME_CONSOLE && sc.slime_experiment != NULL)
    {
      if (sc.slime_project != NULL)
        {
          json_builder_set_member_name (b, "project");
          json_builder_add_string_value (b, sc.slime_project);
        }
      json_builder_set_member_name (b, "experiment");
      json_builder_add_string_value (b, sc.slime_experiment);
      any = TRUE;
    }
  JsonNode *rc = path_get (sc.config, "algorithm", "rollout_correction");
  const char *gen = NULL, *gen_source = NULL;
  g_autofree char *gen_owned = NULL;
  if (format == DW_FORMAT_SLIME_CONSOLE)
    {
      if (sc.args != NULL)
        {
          json_builder_set_member_name (b, "config");
          JsonNode *n = json_node_new (JSON_NODE_OBJECT);
          json_node_take_object (n, g_steal_pointer (&sc.args));
          json_builder_add_value (b, n);
          gen = "slime";
          gen_source = "config";
          any = TRUE;
        }
    }
  else if (rc != NULL && JSON_NODE_HOLDS_OBJECT (rc))
    {
      /* only the scalar keys: what a correction config holds */
      JsonObject *o = json_node_get_object (rc);
      g_autoptr (GList) members = json_object_get_members (o);
      json_builder_set_member_name (b, "config");
      json_builder_begin_object (b);
      for (GList *l = members; l != NULL; l = l->next)
        {
          JsonNode *v = json_object_get_member (o, l->data);
          if (g_str_has_prefix (l->data, "_") || JSON_NODE_HOLDS_OBJECT (v)
              || JSON_NODE_HOLDS_ARRAY (v))
            continue;
          json_builder_set_member_name (b, l->data);
          json_builder_add_value (b, json_node_copy (v));
        }
      json_builder_end_object (b);
      gen = generation_of_config (o);
      gen_source = "config";
      any = TRUE;
    }
  if (sc.version != NULL && format == DW_FORMAT_VERL_CONSOLE)
    {
      gen_owned = generation_of_version (sc.version);
      gen = gen_owned;
      gen_source = "log";
    }
  if (gen != NULL)
    {
      json_builder_set_member_name (b, "generation");
      json_builder_add_string_value (b, gen);
      json_builder_set_member_name (b, "generation_source");
      json_builder_add_string_value (b, gen_source);
    }
  json_builder_end_object (b);

  char *out = NULL;
  if (any)
    {
      g_autoptr (JsonGenerator) g = json_generator_new ();
      JsonNode *root = json_builder_get_root (b);
      json_generator_set_root (g, root);
      out = json_generator_to_data (g, NULL);
      json_node_unref (root);
    }
  if (sc.config != NULL)
    json_node_unref (sc.config);
  if (sc.args != NULL)
    json_object_unref (sc.args);
  g_string_free (sc.dump, TRUE);
  g_free (sc.prefix);
  g_free (sc.version);
  g_free (sc.slime_project);
  g_free (sc.slime_experiment);
  return out;
}

const char *
dw_run_meta_infer_generation (const char *const *tags, gsize n)
{
  gboolean verl = FALSE, g2 = FALSE, icepop = FALSE, mismatch = FALSE, slime = FALSE;

  for (gsize i = 0; i < n; i++)
    {
      const char *t = tags[i];
      if (g_str_has_prefix (t, "mismatch/"))
        mismatch = TRUE;
      else if (g_str_has_prefix (t, "rollout_corr/"))
        {
          verl = TRUE;
          icepop |= g_str_equal (t, "rollout_corr/rollout_is_oob_ratio");
          g2 |= g_str_equal (t, "rollout_corr/rollout_is_veto_fraction")
                || g_str_equal (t, "rollout_corr/rollout_is_catastrophic_token_fraction")
                || g_str_equal (t, "rollout_corr/rollout_rs_mean");
        }
      else if (g_str_equal (t, "train/tis") || g_str_equal (t, "train/tis_clipfrac")
               || g_str_has_prefix (t, "train/train_rollout_logprob_abs_diff"))
        slime = TRUE;
    }
  if (icepop)
    return "verl-0.9.0";
  if (g2)
    return "verl-0.7.0";
  if (verl)
    return "verl-0.9.0";
  if (mismatch)
    return "verl-0.6.0";
  if (slime)
    return "slime";
  return NULL;
}

char *
dw_run_meta_get_string (const char *meta_json, const char *member)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonNode *root, *n;

  if (meta_json == NULL || !json_parser_load_from_data (parser, meta_json, -1, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  n = json_object_get_member (json_node_get_object (root), member);
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
    return NULL;
  return g_strdup (json_node_get_string (n));
}
