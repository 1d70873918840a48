/* dw-json-scan.c — nesting depth and duplicate member names of JSON text, without recursion
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Written here rather than taken from a library: json-glib (the parser used after this check) has
 * no depth limit in Debian bookworm's 1.6, and the check must not itself recurse. Member names
 * are compared as written (escapes not decoded), which is what a duplicate looks like in practice.
 */
#include "dw-json-scan.h"

#include <string.h>

typedef struct
{
  gboolean is_object;
  GHashTable *keys; /* member names seen in this object, or NULL for an array */
} ScanLevel;

static void
scan_level_clear (ScanLevel *level)
{
  g_clear_pointer (&level->keys, g_hash_table_unref);
}

static gboolean scan_fail (DwJsonProblem *problem, gsize offset, const char *format, ...)
  G_GNUC_PRINTF (3, 4);

static gboolean
scan_fail (DwJsonProblem *problem, gsize offset, const char *format, ...)
{
  va_list args;

  problem->offset = offset;
  va_start (args, format);
  g_vsnprintf (problem->message, sizeof problem->message, format, args);
  va_end (args);
  return FALSE;
}

static gboolean
json_scan_int_fits (const char *digits, gsize n)
{
  g_autofree char *copy = g_strndup (digits, n);
  gint64 v;

  return g_ascii_string_to_signed (copy, 10, G_MININT64, G_MAXINT64, &v, NULL)
         || !g_ascii_isdigit (copy[n - 1]); /* not a number: json-glib's error */
}

gboolean
dw_json_scan (const char *text, gssize len, guint max_depth, DwJsonProblem *problem)
{
  g_autoptr (GArray) stack = g_array_new (FALSE, TRUE, sizeof (ScanLevel));
  gsize length = len < 0 ? strlen (text) : (gsize)len;
  gboolean expect_key = FALSE;

  g_array_set_clear_func (stack, (GDestroyNotify)scan_level_clear);
  for (gsize i = 0; i < length; i++)
    {
      char c = text[i];
      ScanLevel *top = stack->len ? &g_array_index (stack, ScanLevel, stack->len - 1) : NULL;

      if (c == '"')
        {
          gsize start = ++i;

          while (i < length && text[i] != '"')
            i += text[i] == '\\' ? 2 : 1;
          if (i >= length)
            return TRUE; /* unterminated: json-glib reports it */
          if (expect_key && top != NULL && top->is_object)
            {
              g_autofree char *key = g_strndup (text + start, i - start);

              if (g_hash_table_contains (top->keys, key))
                return scan_fail (problem, start - 1, "key “%.100s” appears twice in one object",
                                  key);
              g_hash_table_add (top->keys, g_steal_pointer (&key));
            }
          expect_key = FALSE;
        }
      else if (c == '{' || c == '[')
        {
          ScanLevel level = { c == '{', NULL };

          if (stack->len >= max_depth)
            return scan_fail (problem, i, "nested deeper than %u levels", max_depth);
          if (level.is_object)
            level.keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
          g_array_append_val (stack, level);
          expect_key = level.is_object;
        }
      else if (c == '}' || c == ']')
        {
          if (stack->len > 0)
            g_array_set_size (stack, stack->len - 1);
          expect_key = FALSE;
        }
      else if (c == ',')
        expect_key = top != NULL && top->is_object;
      else if (c == '-' || g_ascii_isdigit (c))
        {
          gsize start = i;
          gboolean integer = TRUE;

          while (i + 1 < length && text[i + 1] != '\0'
                 && (g_ascii_isdigit (text[i + 1]) || strchr ("+-.eE", text[i + 1])))
            {
              i++;
              if (strchr (".eE", text[i]) != NULL)
                integer = FALSE;
            }
          /* json-glib wraps 2^63 and more to negative numbers ("must be positive, got -1") */
          if (integer && !json_scan_int_fits (text + start, i + 1 - start))
            return scan_fail (problem, start, "the integer %.*s does not fit in 64 bits",
                              (int)MIN (i + 1 - start, 40), text + start);
        }
    }
  return TRUE;
}

gboolean
dw_json_load (JsonParser *parser, const char *text, gssize len, GError **error)
{
  DwJsonProblem problem;

  if (!dw_json_scan (text, len, DW_JSON_MAX_DEPTH, &problem))
    {
      g_set_error (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA,
                   "offset %" G_GSIZE_FORMAT ": %s", problem.offset, problem.message);
      return FALSE;
    }
  return json_parser_load_from_data (parser, text, len, error);
}
