/* dw-config-import.c — correction configs read back from verl YAML, Hydra overrides, command
 * lines and slime's flags / mis.yaml
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Keys are the generation's schema keys (a key it lacks, or one given twice, is refused with the
 * file and line); values keep the Python type the trainer's own loader gives them; the result is
 * checked by dw_plan_build, so an import fails with the trainer's exception where the trainer
 * would raise one.
 */
#include "config.h"

#include "dw-config-export.h"

#include <glib/gi18n-lib.h>
#include <string.h>
#include <yaml.h>

#include "dw-config-json.h"
#include "dw-config-syntax-private.h"
#include "dw-correction.h"
#include "dw-python.h"
#include "dw-yaml-scan.h"

typedef struct
{
  const char *source;
  DwGeneration gen;
  DwConfig *config;
  GHashTable *seen; /* key → line */
} DwConfigImporter;

static char *
dw_config_import_where (const DwConfigImporter *im, gsize line)
{
  return line ? g_strdup_printf ("%s:%" G_GSIZE_FORMAT, im->source, line) : g_strdup (im->source);
}

static gboolean
dw_config_import_key (DwConfigImporter *im, const char *key, const DwValue *v, gsize line,
                      GError **error)
{
  g_autofree char *position = dw_config_import_where (im, line);
  const char *sec = dw_export_section (im->gen);
  g_autofree char *full = *sec ? g_strdup_printf ("%s.%s", sec, key) : g_strdup (key);
  if (!dw_export_key_accepted (im->gen, key))
    {
      g_autofree char *accepted = g_strjoinv (", ", (char **)dw_export_accepted_keys (im->gen));
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                   _ ("%s: %s is not a key %s accepts (accepted: %s)"), position, full,
                   dw_generation_name (im->gen), accepted);
      return FALSE;
    }
  if (g_hash_table_contains (im->seen, key))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY, _ ("%s: %s is given twice"),
                   position, full);
      return FALSE;
    }
  g_hash_table_add (im->seen, g_strdup (key));
  dw_config_set (im->config, key, v);
  return TRUE;
}

static gboolean
dw_config_import_finish (DwConfigImporter *im, GError **error)
{
  DwCorrectionError config_error;
  if (!dw_correction_check_config (im->config, &config_error))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                   _ ("%s: %s would reject this config: %s: %s"), im->source,
                   dw_generation_name (im->gen), dw_error_kind_name (config_error.kind),
                   config_error.message);
      return FALSE;
    }
  return TRUE;
}

/* A YAML node as compact JSON (for DW_VALUE_OTHER: lists and mappings as values). */
static void
dw_config_import_node_to_json (yaml_document_t *doc, yaml_node_t *n, GString *out, int depth)
{
  /* aliases share nodes: a 586-byte "billion laughs" expanded to > 12.7 GB here. The value is
   * refused beyond DW_VALUE_STR_MAX anyway, so stop there (every call appends ≥ 1 byte). */
  if (out->len >= DW_VALUE_STR_MAX)
    return;
  if (n == NULL || depth > 16)
    {
      g_string_append (out, "null");
      return;
    }
  if (n->type == YAML_SCALAR_NODE)
    {
      g_autofree char *scalar
        = g_strndup ((const char *)n->data.scalar.value, n->data.scalar.length);
      dw_json_append_string (out, scalar);
    }
  else if (n->type == YAML_SEQUENCE_NODE)
    {
      g_string_append_c (out, '[');
      for (yaml_node_item_t *index = n->data.sequence.items.start;
           index < n->data.sequence.items.top; index++)
        {
          if (index != n->data.sequence.items.start)
            g_string_append (out, ", ");
          dw_config_import_node_to_json (doc, yaml_document_get_node (doc, *index), out, depth + 1);
        }
      g_string_append_c (out, ']');
    }
  else if (n->type == YAML_MAPPING_NODE)
    {
      g_string_append_c (out, '{');
      for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top;
           pair++)
        {
          if (pair != n->data.mapping.pairs.start)
            g_string_append (out, ", ");
          dw_config_import_node_to_json (doc, yaml_document_get_node (doc, pair->key), out,
                                         depth + 1);
          g_string_append (out, ": ");
          dw_config_import_node_to_json (doc, yaml_document_get_node (doc, pair->value), out,
                                         depth + 1);
        }
      g_string_append_c (out, '}');
    }
}

static yaml_node_t *
dw_config_import_mapping_get (yaml_document_t *doc, yaml_node_t *map, const char *key)
{
  if (map == NULL || map->type != YAML_MAPPING_NODE)
    return NULL;
  for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top;
       pair++)
    {
      yaml_node_t *key_node = yaml_document_get_node (doc, pair->key);
      if (key_node && key_node->type == YAML_SCALAR_NODE
          && key_node->data.scalar.length == strlen (key)
          && memcmp (key_node->data.scalar.value, key, key_node->data.scalar.length) == 0)
        return yaml_document_get_node (doc, pair->value);
    }
  return NULL;
}

static gboolean
dw_config_import_yaml_mapping (DwConfigImporter *im, yaml_document_t *doc, yaml_node_t *map,
                               gboolean only_rollout, GError **error)
{
  if (map->type != YAML_MAPPING_NODE)
    {
      g_autofree char *position = dw_config_import_where (im, map->start_mark.line + 1);
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                   _ ("%s: expected a mapping of config keys"), position);
      return FALSE;
    }
  for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top;
       pair++)
    {
      yaml_node_t *key_node = yaml_document_get_node (doc, pair->key);
      yaml_node_t *value_node = yaml_document_get_node (doc, pair->value);
      gsize line = key_node ? key_node->start_mark.line + 1 : 0;
      if (key_node == NULL || key_node->type != YAML_SCALAR_NODE || value_node == NULL)
        {
          g_autofree char *position = dw_config_import_where (im, line);
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                       _ ("%s: a config key must be a plain name"), position);
          return FALSE;
        }
      g_autofree char *key
        = g_strndup ((const char *)key_node->data.scalar.value, key_node->data.scalar.length);
      /* verl-0.6 keeps its keys among the other algorithm.* settings: only rollout_* are ours */
      if (only_rollout && !g_str_has_prefix (key, "rollout_"))
        continue;
      const DwSchemaKey *flag = im->gen == DW_GEN_SLIME ? dw_config_syntax_slime_flag (key) : NULL;
      if (flag && !dw_config_syntax_slime_flag_in_yaml (flag))
        {
          g_autofree char *position = dw_config_import_where (im, line);
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                       _ ("%s: %s is a command-line flag of slime (%s), not a mis.yaml key"),
                       position, key, flag->slime_flag);
          return FALSE;
        }
      DwValue val;
      gboolean success = TRUE;
      if (value_node->type == YAML_SCALAR_NODE)
        {
          g_autofree char *s = g_strndup ((const char *)value_node->data.scalar.value,
                                          value_node->data.scalar.length);
          double num;
          gboolean plain = value_node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
          if (plain && dw_config_syntax_yaml_int_overflows (s))
            {
              g_autofree char *position = dw_config_import_where (im, line);
              g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                           _ ("%s: %s: the integer %s does not fit in 64 bits"), position, key, s);
              return FALSE;
            }
          if (plain)
            success = dw_config_syntax_resolve_yaml_plain (s, im->gen != DW_GEN_SLIME, &val);
          else if (strlen (s) < DW_VALUE_STR_MAX)
            val = dw_value_str (s);
          else
            success = FALSE;
          if (success && plain && im->gen == DW_GEN_SLIME && val.kind == DW_VALUE_STR
              && (g_str_has_suffix (key, "_bound") || strcmp (key, "rs_veto_threshold") == 0)
              && dw_python_float (s, &num))
            {
              /* slime reads its YAML with yaml.safe_load (YAML 1.1): "1e-4" is a string there,
               * and slime fails on it where it takes the bound or its logarithm */
              g_autofree char *position = dw_config_import_where (im, line);
              g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                           _ ("%s: %s: slime's yaml.safe_load reads %s as a string, not a number "
                              "(write it with a '.', e.g. 1.0e-4)"),
                           position, key, s);
              return FALSE;
            }
        }
      else
        {
          g_autoptr (GString) j = g_string_new (NULL);
          dw_config_import_node_to_json (doc, value_node, j, 0);
          val = dw_value_none ();
          val.kind = DW_VALUE_OTHER;
          success = j->len < DW_VALUE_STR_MAX;
          g_strlcpy (val.s, j->str, sizeof val.s);
        }
      if (!success)
        {
          g_autofree char *position = dw_config_import_where (im, line);
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                       _ ("%s: the value of %s is longer than %d characters"), position, key,
                       DW_VALUE_STR_MAX - 1);
          return FALSE;
        }
      if (!dw_config_import_key (im, key, &val, line, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
dw_config_import_yaml (DwConfigImporter *im, const char *text, gsize len, GError **error)
{
  yaml_parser_t parser;
  yaml_document_t doc;
  gsize deep_line;
  if (!dw_yaml_scan_depth (text, len, DW_YAML_MAX_DEPTH, &deep_line))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                   _ ("%s:%zu: nested deeper than %d levels"), im->source, (size_t)deep_line,
                   DW_YAML_MAX_DEPTH);
      return FALSE;
    }
  if (!yaml_parser_initialize (&parser))
    g_error ("out of memory");
  yaml_parser_set_input_string (&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load (&parser, &doc))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                   _ ("%s:%zu:%zu: YAML syntax error: %s"), im->source,
                   (gsize)parser.problem_mark.line + 1, (gsize)parser.problem_mark.column + 1,
                   parser.problem ? parser.problem : "unknown");
      yaml_parser_delete (&parser);
      return FALSE;
    }
  gboolean success = TRUE;
  yaml_node_t *root = yaml_document_get_root_node (&doc);
  if (root == NULL)
    ; /* empty document: every key at its default */
  else
    {
      yaml_node_t *algo = dw_config_import_mapping_get (&doc, root, "algorithm");
      yaml_node_t *sec = root;
      gboolean only_rollout = FALSE;
      if (im->gen == DW_GEN_SLIME)
        ;
      else if (dw_generation_info (im->gen)->family == DW_FAMILY_VERL_MISMATCH)
        {
          if (algo)
            {
              sec = algo;
              only_rollout = TRUE;
            }
        }
      else if (algo)
        {
          sec = dw_config_import_mapping_get (&doc, algo, "rollout_correction");
          if (sec == NULL)
            {
              g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                           _ ("%s:%zu: algorithm has no rollout_correction "
                              "section"),
                           im->source, (gsize)algo->start_mark.line + 1);
              success = FALSE;
            }
        }
      else if (dw_config_import_mapping_get (&doc, root, "rollout_correction"))
        sec = dw_config_import_mapping_get (&doc, root, "rollout_correction");
      if (success && sec->type == YAML_SCALAR_NODE && sec->data.scalar.length == 0)
        ; /* "rollout_correction:" with nothing under it */
      else if (success)
        success = dw_config_import_yaml_mapping (im, &doc, sec, only_rollout, error);
    }
  yaml_document_delete (&doc);
  yaml_parser_delete (&parser);
  return success;
}

/* One Hydra override "[+|++]path=value"; *ignored when it is not one of ours. */
static gboolean
dw_config_import_override (DwConfigImporter *im, const char *ov, gsize line, GError **error)
{
  g_autofree char *position = dw_config_import_where (im, line);
  const char *cursor = ov;
  while (*cursor == '+')
    cursor++;
  const char *equals = strchr (cursor, '=');
  if (*cursor == '~' || equals == NULL || equals == cursor)
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                   _ ("%s: not a Hydra override (KEY=VALUE): %s"), position, ov);
      return FALSE;
    }
  g_autofree char *path = g_strstrip (g_strndup (cursor, equals - cursor));
  const char *sec = dw_export_section (im->gen);
  g_autofree char *prefix = g_strdup_printf ("%s.", sec);
  if (!g_str_has_prefix (path, prefix))
    return TRUE; /* another part of the trainer's config */
  const char *key = path + strlen (prefix);
  if (dw_generation_info (im->gen)->family == DW_FAMILY_VERL_MISMATCH
      && !g_str_has_prefix (key, "rollout_"))
    return TRUE;
  DwValue v;
  gboolean too_long;
  if (!dw_config_syntax_resolve_hydra (equals + 1, &v, &too_long))
    {
      if (too_long)
        g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                     _ ("%s: the value of %s is longer than %d characters"), position, path,
                     DW_VALUE_STR_MAX - 1);
      else
        g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                     _ ("%s: unterminated quoted value in %s"), position, ov);
      return FALSE;
    }
  return dw_config_import_key (im, key, &v, line, error);
}

static gboolean
dw_config_import_hydra (DwConfigImporter *im, const char *text, GError **error)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (gsize index = 0; lines[index]; index++)
    {
      g_autofree char *line = g_strstrip (g_strdup (lines[index]));
      if (*line == '\0' || *line == '#')
        continue;
      if (!dw_config_import_override (im, line, index + 1, error))
        return FALSE;
    }
  return TRUE;
}

/* @text without the lines of its here-documents, continuations joined, comments dropped */
static char *
dw_config_import_command_words (const char *text)
{
  g_autoptr (GRegex) start
    = g_regex_new ("<<-?\\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\\1", 0, 0, NULL);
  g_autoptr (GString) joined = g_string_new (NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *delimiter = NULL;
  for (gsize index = 0; lines[index]; index++)
    {
      g_autofree char *line = g_strstrip (g_strdup (lines[index]));
      if (delimiter)
        {
          if (strcmp (line, delimiter) == 0)
            g_clear_pointer (&delimiter, g_free);
          continue;
        }
      g_autoptr (GMatchInfo) match = NULL;
      if (g_regex_match (start, line, 0, &match))
        {
          delimiter = g_match_info_fetch (match, 2);
          continue; /* the "cat > mis.yaml <<'EOF'" line itself */
        }
      if (*line == '#')
        continue;
      if (g_str_has_suffix (line, "\\"))
        line[strlen (line) - 1] = ' ';
      g_string_append_printf (joined, "%s ", line);
    }
  return g_strdup (joined->str);
}

/* one of slime's TIS flags with its value (@value NULL for a store_true flag) */
static gboolean
dw_config_import_slime_flag (DwConfigImporter *im, const DwSchemaKey *flag, const char *value,
                             GError **error)
{
  DwValue parsed;
  double number;
  if (dw_schema_flag_store_true (flag))
    parsed = dw_value_bool (TRUE);
  else if (flag->role == DW_ROLE_FUNCTION) /* a dotted module path (slime's load_function) */
    {
      const char *name = strcmp (value, DW_CONFIG_SLIME_ICEPOP_FUNCTION) == 0 ? "icepop"
                         : strcmp (value, DW_CONFIG_SLIME_MIS_FUNCTION) == 0  ? "mis"
                         : g_str_has_suffix (value, ".vanilla_tis_function")  ? "vanilla"
                                                                              : NULL;
      if (name == NULL)
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                       _ ("%s: --custom-tis-function-path %s is a function Driftwatch cannot "
                          "reproduce (it knows %s and %s)"),
                       im->source, value, DW_CONFIG_SLIME_ICEPOP_FUNCTION,
                       DW_CONFIG_SLIME_MIS_FUNCTION);
          return FALSE;
        }
      /* mis.py is the path a config without built-in flags names: no key for it */
      if (strcmp (name, "mis") == 0)
        return TRUE;
      parsed = dw_value_str (name);
    }
  else if (dw_python_float (value, &number))
    parsed = dw_value_float (number);
  else
    {
      /* argparse's own message */
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                   _ ("%s: argument %s: invalid float value: '%s'"), im->source, flag->slime_flag,
                   value);
      return FALSE;
    }
  return dw_config_import_key (im, flag->name, &parsed, 0, error);
}

/* "--use-tis, --tis-clip, …": the flags slime's TIS takes, for a message */
static char *
dw_config_import_slime_flag_names (void)
{
  const DwSchemaKey *keys[DW_CONFIG_MAX_KEYS];
  const gsize n_keys = dw_config_syntax_slime_flag_keys (keys, G_N_ELEMENTS (keys));
  GString *names = g_string_new (NULL);
  for (gsize index = 0; index < n_keys; index++)
    g_string_append_printf (names, "%s%s", index ? ", " : "", keys[index]->slime_flag);
  return g_string_free (names, FALSE);
}

/* slime's TIS flags among a command line's words; other flags belong to the rest of slime */
static gboolean
dw_config_import_slime_flags (DwConfigImporter *im, char **argv, int argc, gboolean with_yaml,
                              gboolean *any, gboolean *mis, GError **error)
{
  for (int index = 0; index < argc; index++)
    {
      const char *word = argv[index];
      const char *dash = strstr (word, "--");
      if (dash == NULL || (dash != word && dash[-1] != '('))
        continue;
      g_autofree char *flag_name = g_strdup (dash);
      g_strdelimit (flag_name, ")", '\0');
      char *equals = strchr (flag_name, '=');
      if (equals)
        *equals = '\0';
      const DwSchemaKey *flag = dw_schema_find_flag (DW_GEN_SLIME, flag_name);
      if (flag == NULL)
        {
          if (g_str_has_prefix (flag_name, "--tis") || g_str_has_prefix (flag_name, "--use-tis"))
            {
              g_autofree char *known = dw_config_import_slime_flag_names ();
              g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                           _ ("%s: unrecognized arguments: %s (slime's TIS flags are %s)"),
                           im->source, flag_name, known);
              return FALSE;
            }
          continue;
        }
      /* with mis.yaml, use_tis is the YAML's; the flag only turns slime's TIS hook on */
      if (with_yaml && dw_config_syntax_slime_flag_in_yaml (flag))
        continue;
      g_autofree char *value = NULL;
      if (!dw_schema_flag_store_true (flag))
        {
          value = equals             ? g_strdup (equals + 1)
                  : index + 1 < argc ? g_strdup (argv[++index])
                                     : NULL;
          if (value)
            g_strdelimit (value, ")", '\0');
          if (value == NULL || *value == '\0')
            {
              g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                           _ ("%s: argument %s: expected one argument"), im->source,
                           flag->slime_flag);
              return FALSE;
            }
        }
      if (!dw_config_import_slime_flag (im, flag, value, error))
        return FALSE;
      *any = TRUE;
      *mis |= flag->role == DW_ROLE_FUNCTION && strcmp (value, DW_CONFIG_SLIME_MIS_FUNCTION) == 0;
    }
  return TRUE;
}

/* whether @config gives a bound only slime's built-in functions read (--tis-clip…) */
static gboolean
dw_config_import_builtin_bound_given (const DwConfig *config)
{
  const DwSchema *schema = dw_schema_get (DW_GEN_SLIME);
  for (gsize index = 0; index < schema->n_keys; index++)
    if (dw_config_syntax_slime_builtin_only (&schema->keys[index])
        && dw_config_get (config, schema->keys[index].name))
      return TRUE;
  return FALSE;
}

/* a slime command line: its TIS flags, and the mis.yaml here-document when there is one */
static gboolean
dw_config_import_slime_args (DwConfigImporter *im, const char *text, GError **error)
{
  g_autofree char *words = dw_config_import_command_words (text);
  int argc = 0;
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) shell_error = NULL;
  if (strspn (words, " ") != strlen (words)
      && !g_shell_parse_argv (words, &argc, &argv, &shell_error))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX, _ ("%s: %s"), im->source,
                   shell_error->message);
      return FALSE;
    }
  gboolean any_flag = FALSE, mis = FALSE;
  g_autofree char *body = dw_config_syntax_heredoc_body (text);
  if (body && !dw_config_import_yaml (im, body, strlen (body), error))
    return FALSE;
  if (!dw_config_import_slime_flags (im, argv, argc, body != NULL, &any_flag, &mis, error))
    return FALSE;
  const DwSchemaKey *function_key = dw_schema_find_role (DW_GEN_SLIME, DW_ROLE_FUNCTION);
  const DwValue *function = dw_config_get (im->config, function_key->name);
  if (body)
    return TRUE;
  if (mis || !any_flag)
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                   _ ("%s: no mis.yaml here-document: slime's flags only name the file "
                      "(--custom-config-path), import that YAML with --format yaml"),
                   im->source);
      return FALSE;
    }
  /* --use-tis without --custom-tis-function-path runs vanilla_tis_function; without --tis-clip
   * or --tis-clip-low the config must say so (it would otherwise name mis.py) */
  if (function == NULL && !dw_config_import_builtin_bound_given (im->config))
    {
      DwValue vanilla = dw_value_str ("vanilla");
      dw_config_set (im->config, function_key->name, &vanilla);
    }
  return TRUE;
}

static gboolean
dw_config_import_args (DwConfigImporter *im, const char *text, GError **error)
{
  if (im->gen == DW_GEN_SLIME)
    return dw_config_import_slime_args (im, text, error);
  /* a shell command line: join continuations, drop comments, split into words */
  g_autoptr (GString) joined = g_string_new (NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (gsize index = 0; lines[index]; index++)
    {
      g_autofree char *stripped = g_strstrip (g_strdup (lines[index]));
      if (*stripped == '#')
        continue;
      if (g_str_has_suffix (stripped, "\\"))
        stripped[strlen (stripped) - 1] = ' ';
      g_string_append_printf (joined, "%s ", stripped);
    }
  int argc = 0;
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) serr = NULL;
  if (joined->len && strspn (joined->str, " ") != joined->len
      && !g_shell_parse_argv (joined->str, &argc, &argv, &serr))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX, _ ("%s: %s"), im->source,
                   serr->message);
      return FALSE;
    }
  for (int index = 0; index < argc; index++)
    if (strchr (argv[index], '=') && argv[index][0] != '-'
        && !dw_config_import_override (im, argv[index], 0, error))
      return FALSE;
  return TRUE;
}

gboolean
dw_config_import (const char *text, gssize length, const char *source, DwGeneration gen,
                  DwExportFormat format, DwConfig *out, GError **error)
{
  g_return_val_if_fail (text != NULL && out != NULL, FALSE);
  g_autofree char *copy = length < 0 ? g_strdup (text) : g_strndup (text, length);
  dw_config_init (out, gen);
  if (!dw_export_format_supported (gen, format) || dw_export_format_name (format) == NULL
      || dw_generation_name (gen) == NULL)
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                   _ ("%s: slime takes no Hydra overrides: use --format args or --format yaml"),
                   source ? source : "<input>");
      return FALSE;
    }
  if (length >= 0 && memchr (text, '\0', length))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                   _ ("%s: contains a NUL byte (not a text file)"), source ? source : "<input>");
      return FALSE;
    }
  if (!g_utf8_validate (copy, -1, NULL))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX, _ ("%s: not valid UTF-8"),
                   source ? source : "<input>");
      return FALSE;
    }
  DwConfigImporter im = { source ? source : "<input>", gen, out,
                          g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) };
  gboolean success;
  if (format == DW_EXPORT_FORMAT_YAML)
    success = dw_config_import_yaml (&im, copy, strlen (copy), error);
  else if (format == DW_EXPORT_FORMAT_HYDRA)
    success = dw_config_import_hydra (&im, copy, error);
  else
    success = dw_config_import_args (&im, copy, error);
  g_hash_table_unref (im.seen);
  if (success)
    success = dw_config_import_finish (&im, error);
  if (!success)
    dw_config_init (out, gen);
  return success;
}

void
dw_config_import_detect (const char *text, gssize length, DwGeneration *gen, DwExportFormat *format)
{
  g_autofree char *t = length < 0 ? g_strdup (text) : g_strndup (text, length);
  if (strstr (t, "use_tis") || strstr (t, "tis_level") || strstr (t, "tis_upper_bound")
      || strstr (t, "custom-config-path") || strstr (t, "rs_veto_threshold")
      || strstr (t, "--use-tis") || strstr (t, "--tis-clip") || strstr (t, "tis_clip")
      || strstr (t, "custom-tis-function-path"))
    *gen = DW_GEN_SLIME;
  else if (strstr (t, "rollout_is_level") || strstr (t, "rollout_is_mode")
           || strstr (t, "rollout_is_veto_threshold") || strstr (t, "rollout_is_threshold_lower"))
    *gen = DW_GEN_VERL_0_6;
  else if (strstr (t, "rollout_token_veto_threshold") || strstr (t, "rollout_rs_threshold_lower")
           || strstr (t, "use_policy_gradient")
           || g_regex_match_simple (
             "rollout_rs\\s*[:=]\\s*['\"]?(token|sequence|geometric)['\"]?\\s*$", t,
             G_REGEX_MULTILINE, 0))
    *gen = strstr (t, "use_policy_gradient") ? DW_GEN_VERL_0_6_1 : DW_GEN_VERL_0_7_0;
  else
    *gen = DW_GEN_VERL_LATEST; /* the k-option keys of v0.7.1 and later: the newest reads them */
  g_autofree char *heredoc = dw_config_syntax_heredoc_body (t);
  /* a command line: a here-document, a program, or flags (also inside a bash array "=(--…") */
  if (heredoc
      || dw_config_syntax_regex_match (
        "(^|\\n)\\s*(python|--[A-Za-z]|[A-Za-z0-9_./-]+\\.(py|sh)\\b)", t)
      || dw_config_syntax_regex_match ("=\\(\\s*--[A-Za-z]", t) || strstr (t, "\\\n"))
    *format = DW_EXPORT_FORMAT_ARGS;
  else if (g_regex_match_simple ("^\\s*\\+*[A-Za-z_][A-Za-z0-9_.]*\\s*=", t, G_REGEX_MULTILINE, 0)
           && !g_regex_match_simple ("^\\s*[A-Za-z_][A-Za-z0-9_]*\\s*:", t, G_REGEX_MULTILINE, 0))
    *format = DW_EXPORT_FORMAT_HYDRA;
  else
    *format = DW_EXPORT_FORMAT_YAML;
}

char *
dw_config_import_string (const char *text, const char *target, const char *format, GError **error)
{
  DwGeneration gen;
  DwExportFormat fmt;
  dw_config_import_detect (text, -1, &gen, &fmt);
  if (!dw_config_syntax_parse_target (target, format, &gen, &fmt, error))
    return NULL;
  DwConfig config;
  if (!dw_config_import (text, -1, _ ("pasted text"), gen, fmt, &config, error))
    return NULL;
  GString *out = g_string_new (NULL);
  dw_json_append_config (out, &config);
  return g_string_free (out, FALSE);
}
