/* dw-yaml-scan.c — nesting depth of YAML text, without recursion and in linear time
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libyaml has no depth limit, and its scanner looks back over every open flow level for each
 * token: 200 KB of "[[[[…" took 38 s in import-config (quadratic in depth). This pass sees each
 * byte once and refuses deep text before libyaml starts. It over-approximates (a quote inside a
 * plain scalar, a bracket inside a block scalar), which can only make it refuse a text whose
 * nesting is already near the limit.
 */
#include "dw-yaml-scan.h"

/* Skips a quoted scalar starting at text[i] (a ' or "); returns the index of its closing quote,
 * or @len when it does not end on this text. */
static gsize
yaml_scan_skip_quoted (const char *text, gsize len, gsize i)
{
  char quote = text[i];

  for (i++; i < len; i++)
    {
      if (quote == '"' && text[i] == '\\')
        i++;
      else if (text[i] == quote)
        {
          if (quote == '\'' && i + 1 < len && text[i + 1] == '\'')
            i++; /* '' is an escaped quote */
          else
            return i;
        }
    }
  return len;
}

gboolean
dw_yaml_scan_depth (const char *text, gsize len, guint max_depth, gsize *line)
{
  g_autoptr (GArray) indents = g_array_new (FALSE, FALSE, sizeof (gsize));
  guint flow = 0;
  gsize i = 0;

  *line = 1;
  while (i < len)
    {
      gsize indent = 0, items = 0;
      char prev = ' ';

      /* block level: indentation, then "- " items opening further levels on the same line */
      while (i < len && text[i] == ' ')
        i++, indent++;
      while (i + 1 < len && text[i] == '-' && (text[i + 1] == ' ' || text[i + 1] == '\n'))
        {
          i += 2, items++;
          while (i < len && text[i] == ' ')
            i++;
        }
      if (flow == 0 && i < len && text[i] != '\n' && text[i] != '#')
        {
          while (indents->len > 0 && g_array_index (indents, gsize, indents->len - 1) >= indent)
            g_array_set_size (indents, indents->len - 1);
          g_array_append_val (indents, indent);
        }
      if (indents->len + items + flow > max_depth)
        return FALSE;

      /* the rest of the line: flow collections, quoted scalars, a comment */
      for (; i < len && text[i] != '\n'; i++)
        {
          char c = text[i];

          if ((c == '\'' || c == '"')
              && (prev == ' ' || prev == ':' || prev == '[' || prev == '{' || prev == ','
                  || prev == '-'))
            {
              gsize end = yaml_scan_skip_quoted (text, len, i);

              for (gsize k = i; k < end; k++)
                *line += text[k] == '\n';
              i = end;
            }
          else if (c == '#' && prev == ' ')
            {
              while (i < len && text[i] != '\n')
                i++;
              break;
            }
          else if (c == '[' || c == '{')
            {
              if (indents->len + items + ++flow > max_depth)
                return FALSE;
            }
          else if ((c == ']' || c == '}') && flow > 0)
            flow--;
          if (i < len)
            prev = text[i];
        }
      if (i < len)
        i++, (*line)++;
    }
  return TRUE;
}
