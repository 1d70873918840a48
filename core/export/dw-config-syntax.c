/* dw-config-syntax.c — the syntax configs are written in: YAML 1.1 / OmegaConf plain scalars,
 * Hydra override values, shell here-documents, slime's TIS flags
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Hand-written where no Debian library parses the trainer's dialect: libyaml gives the scalar
 * text and its style, not PyYAML's or OmegaConf's type for it, and Hydra's override grammar has
 * no C implementation; the rules below are those resolvers' (docs/WHATIF.md, "Config
 * export/import").
 */
#include "config.h"

#include "dw-config-syntax-private.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "dw-python.h"

gboolean
dw_config_syntax_regex_match (const char *pattern, const char *s)
{
  return g_regex_match_simple (pattern, s, 0, 0);
}

/* PyYAML's float literal with the '_' digit separators removed, as float(). */
static double
dw_config_syntax_parse_float (const char *s)
{
  g_autoptr (GString) t = g_string_new (NULL);
  for (const char *cursor = s; *cursor; cursor++)
    if (*cursor != '_')
      g_string_append_c (t, *cursor);
  const char *cursor_digits = t->str;
  gboolean neg = *cursor_digits == '-';
  if (*cursor_digits == '-' || *cursor_digits == '+')
    cursor_digits++;
  if (g_ascii_strcasecmp (cursor_digits, ".inf") == 0
      || g_ascii_strcasecmp (cursor_digits, "inf") == 0)
    return neg ? -INFINITY : INFINITY;
  if (g_ascii_strcasecmp (cursor_digits, ".nan") == 0
      || g_ascii_strcasecmp (cursor_digits, "nan") == 0)
    return NAN;
  return g_ascii_strtod (t->str, NULL);
}

/* PyYAML's SafeLoader (and OmegaConf's, which keeps it) int forms, YAML 1.1: binary, octal
 * ("010" is 8), decimal, hexadecimal ("0x10" is 16) and base 60 ("1:30" is 90). */
#define YAML_INT_RE \
  "^[-+]?(0b[0-1_]+|0[0-7_]+|0|[1-9][0-9_]*|0x[0-9a-fA-F_]+|[1-9][0-9_]*(:[0-5]?[0-9])+)$"

/* An int in one of the forms above (or Hydra's decimal); FALSE when it does not fit in 64 bits
 * (2^63 and more wrapped to negative numbers: "must be positive, got -1"). */
static gboolean
dw_config_syntax_parse_int (const char *s, DwValue *v)
{
  g_autoptr (GString) t = g_string_new (NULL);
  gboolean negative = *s == '-';
  guint64 magnitude = 0, part;
  const char *digits;
  guint base = 10;

  for (const char *cursor = s + (*s == '-' || *s == '+'); *cursor; cursor++)
    if (*cursor != '_')
      g_string_append_c (t, *cursor);
  digits = t->str;
  if (strchr (digits, ':') != NULL)
    {
      g_auto (GStrv) parts = g_strsplit (digits, ":", -1);
      for (char **part_text = parts; *part_text; part_text++)
        {
          if (!g_ascii_string_to_unsigned (*part_text, 10, 0, G_MAXUINT64, &part, NULL)
              || magnitude > (G_MAXUINT64 - part) / 60)
            return FALSE;
          magnitude = magnitude * 60 + part;
        }
    }
  else
    {
      if (g_str_has_prefix (digits, "0b") || g_str_has_prefix (digits, "0x"))
        {
          base = digits[1] == 'b' ? 2 : 16;
          digits += 2;
        }
      else if (digits[0] == '0' && digits[1] != '\0')
        {
          base = 8;
          digits += 1;
        }
      if (!g_ascii_string_to_unsigned (digits, base, 0, G_MAXUINT64, &magnitude, NULL))
        return FALSE;
    }
  if (magnitude > (guint64)G_MAXINT64 + (negative ? 1 : 0))
    return FALSE;
  *v = dw_value_int (negative ? (gint64)(0 - magnitude) : (gint64)magnitude);
  return TRUE;
}

gboolean
dw_config_syntax_yaml_int_overflows (const char *s)
{
  DwValue value;

  return dw_config_syntax_regex_match (YAML_INT_RE, s) && !dw_config_syntax_parse_int (s, &value);
}

/* A YAML 1.1 plain scalar as PyYAML's SafeLoader resolves it; @omegaconf adds OmegaConf's float
 * form without a '.' ("1e-4"). Returns FALSE when a string is too long for a DwValue. */
gboolean
dw_config_syntax_resolve_yaml_plain (const char *s, gboolean omegaconf, DwValue *v)
{
  if (*s == '\0' || strcmp (s, "~") == 0 || dw_config_syntax_regex_match ("^(null|Null|NULL)$", s))
    *v = dw_value_none ();
  else if (dw_config_syntax_regex_match ("^(true|True|TRUE|yes|Yes|YES|on|On|ON)$", s))
    *v = dw_value_bool (TRUE);
  else if (dw_config_syntax_regex_match ("^(false|False|FALSE|no|No|NO|off|Off|OFF)$", s))
    *v = dw_value_bool (FALSE);
  else if (dw_config_syntax_regex_match (YAML_INT_RE, s) && dw_config_syntax_parse_int (s, v))
    ;
  else if (dw_config_syntax_regex_match ("^([-+]?[0-9][0-9_]*\\.[0-9_]*([eE][-+][0-9]+)?"
                                         "|\\.[0-9][0-9_]*([eE][-+][0-9]+)?"
                                         "|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$",
                                         s)
           || (omegaconf && dw_config_syntax_regex_match ("^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$", s)))
    *v = dw_value_float (dw_config_syntax_parse_float (s));
  else if (strlen (s) < DW_VALUE_STR_MAX)
    *v = dw_value_str (s);
  else
    return FALSE;
  return TRUE;
}

/* A Hydra override value (the part after '='). Returns FALSE on an unterminated quote; *too_long
 * when a string does not fit. */
gboolean
dw_config_syntax_resolve_hydra (const char *raw, DwValue *v, gboolean *too_long)
{
  g_autofree char *stripped = g_strstrip (g_strdup (raw));
  gsize count = strlen (stripped);
  *too_long = FALSE;
  if (count && (stripped[0] == '\'' || stripped[0] == '"'))
    {
      char quote = stripped[0];
      g_autoptr (GString) out = g_string_new (NULL);
      gsize index = 1;
      for (; index < count && stripped[index] != quote; index++)
        {
          if (stripped[index] == '\\' && index + 1 < count
              && (stripped[index + 1] == quote || stripped[index + 1] == '\\'))
            index++;
          g_string_append_c (out, stripped[index]);
        }
      if (index != count - 1)
        return FALSE;
      if (out->len >= DW_VALUE_STR_MAX)
        {
          *too_long = TRUE;
          return FALSE;
        }
      *v = dw_value_str (out->str);
      return TRUE;
    }
  if (count && (stripped[0] == '[' || stripped[0] == '{'))
    {
      *v = dw_value_none ();
      v->kind = DW_VALUE_OTHER;
      g_strlcpy (v->s, stripped, sizeof v->s);
      return TRUE;
    }
  if (g_ascii_strcasecmp (stripped, "null") == 0)
    *v = dw_value_none ();
  else if (g_ascii_strcasecmp (stripped, "true") == 0)
    *v = dw_value_bool (TRUE);
  else if (g_ascii_strcasecmp (stripped, "false") == 0)
    *v = dw_value_bool (FALSE);
  else if (dw_config_syntax_regex_match ("^[-+]?(0|[1-9](_?[0-9])*)$", stripped)
           && dw_config_syntax_parse_int (stripped, v))
    ;
  else if (dw_config_syntax_regex_match (
             "^[-+]?(([0-9](_?[0-9])*)?\\.[0-9](_?[0-9])*|[0-9](_?[0-9])*\\.?)"
             "([eE][-+]?[0-9](_?[0-9])*)?$",
             stripped)
           || dw_config_syntax_regex_match ("^[-+]?([iI][nN][fF]|[nN][aA][nN])$", stripped))
    *v = dw_value_float (dw_config_syntax_parse_float (stripped));
  else if (count < DW_VALUE_STR_MAX)
    *v = dw_value_str (stripped);
  else
    {
      *too_long = TRUE;
      return FALSE;
    }
  return TRUE;
}

/* The body of the first here-document (<<'EOF' / <<EOF / <<-EOF), or NULL. */
char *
dw_config_syntax_heredoc_body (const char *text)
{
  g_autoptr (GRegex) re
    = g_regex_new ("<<-?\\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\\1[^\\n]*\\n", 0, 0, NULL);
  g_autoptr (GMatchInfo) mi = NULL;
  if (!g_regex_match (re, text, 0, &mi))
    return NULL;
  g_autofree char *delim = g_match_info_fetch (mi, 2);
  int start, end;
  g_match_info_fetch_pos (mi, 0, &start, &end);
  GString *body = g_string_new (NULL);
  g_auto (GStrv) lines = g_strsplit (text + end, "\n", -1);
  for (gsize index = 0; lines[index]; index++)
    {
      g_autofree char *t = g_strstrip (g_strdup (lines[index]));
      if (strcmp (t, delim) == 0)
        return g_string_free (body, FALSE);
      g_string_append_printf (body, "%s\n", lines[index]);
    }
  g_string_free (body, TRUE);
  return NULL;
}

const DwSchemaKey *
dw_config_syntax_slime_flag (const char *key)
{
  const DwSchemaKey *row = dw_schema_find (DW_GEN_SLIME, key);
  return row && row->slime_flag ? row : NULL;
}

gsize
dw_config_syntax_slime_flag_keys (const DwSchemaKey **out, gsize max)
{
  const DwSchema *schema = dw_schema_get (DW_GEN_SLIME);
  gsize count = 0;
  /* two passes: the function path is written last, after the switches and bounds it modifies */
  for (int function_pass = 0; function_pass < 2; function_pass++)
    for (gsize index = 0; index < schema->n_keys && count < max; index++)
      if (schema->keys[index].slime_flag
          && (schema->keys[index].role == DW_ROLE_FUNCTION) == (function_pass == 1))
        out[count++] = &schema->keys[index];
  return count;
}

gboolean
dw_config_syntax_slime_flag_in_yaml (const DwSchemaKey *key)
{
  return key->slime_flag != NULL && key->role == DW_ROLE_ENABLE;
}

gboolean
dw_config_syntax_slime_builtin_only (const DwSchemaKey *key)
{
  return key->slime_flag != NULL
         && (key->role == DW_ROLE_IS_THRESHOLD || key->role == DW_ROLE_IS_THRESHOLD_LOWER);
}

static int
dw_config_syntax_compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

gboolean
dw_config_syntax_parse_target (const char *target, const char *format, DwGeneration *gen,
                               DwExportFormat *fmt, GError **error)
{
  if (target && !dw_generation_from_name (target, gen))
    {
      g_autoptr (GPtrArray) releases = g_ptr_array_new ();
      for (int generation = 0; generation < DW_N_GENERATIONS; generation++)
        {
          const DwGenerationInfo *info = dw_generation_info ((DwGeneration)generation);
          if (info->release && strcmp (info->framework, "verl") == 0)
            g_ptr_array_add (releases, (gpointer)info->name);
        }
      g_ptr_array_sort (releases, dw_config_syntax_compare_names);
      g_ptr_array_add (releases, NULL);
      g_autofree char *names = g_strjoinv (", ", (char **)releases->pdata);
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                   _ ("unknown target '%s' (verl = the newest release, %s or slime; old names "
                      "such as verl-0.7 still work)"),
                   target, names);
      return FALSE;
    }
  if (format && !dw_export_format_from_name (format, fmt))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                   _ ("unknown format '%s' (yaml, hydra or args)"), format);
      return FALSE;
    }
  return TRUE;
}
