/* dw-csv.c — CSV fields and numbers (see dw-csv.h)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-csv.h"

#include <math.h>
#include <string.h>

void
dw_csv_field (GString *out, const char *text)
{
  if (strpbrk (text, ",\"\n\r") == NULL)
    {
      g_string_append (out, text);
      return;
    }
  g_string_append_c (out, '"');
  for (const char *cursor = text; *cursor; cursor++)
    {
      if (*cursor == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *cursor);
    }
  g_string_append_c (out, '"');
}

void
dw_csv_number (GString *out, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (isnan (v))
    g_string_append (out, "nan");
  else if (isinf (v))
    g_string_append (out, v > 0 ? "inf" : "-inf");
  else
    {
      /* the shortest of %.15g…%.17g that reads back as the same double (0.355, not
       * 0.35499999999999998) */
      for (int digits = 15; digits <= 17; digits++)
        {
          char fmt[8];
          g_snprintf (fmt, sizeof fmt, "%%.%dg", digits);
          g_ascii_formatd (buf, sizeof buf, fmt, v);
          if (digits == 17 || g_ascii_strtod (buf, NULL) == v)
            break;
        }
      g_string_append (out, buf);
    }
}
