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
  gsize index = 0;

  *line = 1;
  while (index < len)
    {
      gsize indent = 0, items = 0;
      char prev = ' ';

      /* block level: indentation, then "- " items opening further levels on the same line */
      while (index < len && text[index] == ' ')
        index++, indent++;
      while (index + 1 < len && text[index] == '-'
             && (text[index + 1] == ' ' || text[index + 1] == '\n'))
        {
          index += 2, items++;
          while (index < len && text[index] == ' ')
            index++;
        }
      if (flow == 0 && index < len && text[index] != '\n' && text[index] != '#')
        {
          while (indents->len > 0 && g_array_index (indents, gsize, indents->len - 1) >= indent)
            g_array_set_size (indents, indents->len - 1);
          g_array_append_val (indents, indent);
        }
      if (indents->len + items + flow > max_depth)
        return FALSE;

      /* the rest of the line: flow collections, quoted scalars, a comment */
      for (; index < len && text[index] != '\n'; index++)
        {
          char character = text[index];

          if ((character == '\'' || character == '"')
              && (prev == ' ' || prev == ':' || prev == '[' || prev == '{' || prev == ','
                  || prev == '-'))
            {
              gsize end = yaml_scan_skip_quoted (text, len, index);

              for (gsize position = index; position < end; position++)
                *line += text[position] == '\n';
              index = end;
            }
          else if (character == '#' && prev == ' ')
            {
              while (index < len && text[index] != '\n')
                index++;
              break;
            }
          else if (character == '[' || character == '{')
            {
              if (indents->len + items + ++flow > max_depth)
                return FALSE;
            }
          else if ((character == ']' || character == '}') && flow > 0)
            flow--;
          if (index < len)
            prev = text[index];
        }
      if (index < len)
        index++, (*line)++;
    }
  return TRUE;
}
