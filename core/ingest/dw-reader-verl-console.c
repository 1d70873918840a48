/* dw-reader-verl-console.c — verl's console backend: `step:N - key:value - …`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Accepts the three value renderings (legacy `%.3f`, `repr`, numpy-2 `np.float64(…)`), Ray
 * prefixes `(TaskRunner pid=…)`, ANSI colour codes, tqdm output on the same line before the
 * marker (`… 71/435 [03:21<17:19, 2.86s/it]step:71 - …`) and `[repeated Nx across cluster]`
 * suffixes. Lines that carry no `step:N` marker (tqdm bars, banners, the printed config) are
 * ignored silently; a metric line whose field cannot be read is reported with the offset of that
 * field and the rest is kept.
 *
 * The line also tells how precisely its values were written: verl ≤ 0.4.1 printed every float
 * with `%.3f`; later releases print `repr`, the shortest string that gives the float64 back. A
 * line whose non-integer values all have exactly three decimals and no exponent is taken for the
 * `%.3f` form (DW_PRECISION_3F); any other line is full float64 (DW_PRECISION_FLOAT64).
 */
#include "dw-reader-formats.h"

#include <math.h>
#include <string.h>

/* Unwraps np.float64(x) / np.int64(x) / np.True_ / np.False_; returns FALSE if malformed. */
static gboolean
parse_value (const char *v, gsize n, double *out)
{
  if (n >= 3 && memcmp (v, "np.", 3) == 0)
    {
      if (n == 8 && memcmp (v, "np.True_", 8) == 0)
        return *out = 1.0, TRUE;
      if (n == 9 && memcmp (v, "np.False_", 9) == 0)
        return *out = 0.0, TRUE;
      const char *lp = memchr (v, '(', n);
      if (lp == NULL || v[n - 1] != ')')
        return FALSE;
      for (const char *t = v + 3; t < lp; t++)
        if (!g_ascii_isalnum (*t) && *t != '_')
          return FALSE;
      return dw_parse_number (lp + 1, (gsize)(v + n - 1 - (lp + 1)), out);
    }
  return dw_parse_number (v, n, out);
}

/* Does the value text look like `%.3f` output ("0.125", "-12.000")? Integers, bools and nan/inf
 * say nothing (NULL), a 3-decimal fixed-point float says yes, anything else no. */
static int
value_is_3f (const char *v, gsize n)
{
  if (n >= 3 && memcmp (v, "np.", 3) == 0)
    {
      const char *lp = memchr (v, '(', n);
      if (lp == NULL || v[n - 1] != ')')
        return -1;
      n = (gsize)(v + n - 1 - (lp + 1));
      v = lp + 1;
    }
  const char *dot = memchr (v, '.', n);
  if (dot == NULL)
    return -1; /* an int, a bool, nan, inf */
  if (memchr (v, 'e', n) != NULL || memchr (v, 'E', n) != NULL)
    return 0;
  return (gsize)(v + n - dot - 1) == 3 ? 1 : 0;
}

static gboolean
key_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '/' || c == '.' || c == '-' || c == '@';
}

const char *
dw_verl_console_marker (const char *s, gsize n)
{
  const char *end = s + n;
  const char *p = s;

  while (p + 6 <= end)
    {
      const char *m = memmem (p, (gsize)(end - p), "step:", 5);
      if (m == NULL)
        return NULL;
      p = m + 5;
      /* inside a key ("training/global_step:5") or a word: not the marker */
      if (m > s && key_char (m[-1]))
        continue;
      const char *d = m + 5;
      if (d >= end || !g_ascii_isdigit (*d))
        continue;
      while (d < end && g_ascii_isdigit (*d))
        d++;
      if (d == end || (end - d >= 3 && memcmp (d, " - ", 3) == 0)
          || (end - d >= 11 && memcmp (d, " [repeated ", 11) == 0))
        return m;
    }
  return NULL;
}

/* Parses the metric line that starts at @s ("step:N…", ANSI already stripped, NUL-terminated at
 * @e). @ctx NULL: only checks; returns the number of good fields, or -1 when a field is bad
 * (always -1 for an empty field list when checking). */
static int
parse_fields (DwFeedCtx *ctx, goffset offset, char *buf, char *s, char *e)
{
  char *rep = strstr (s, " [repeated ");
  if (rep != NULL && strstr (rep, "across cluster]") != NULL)
    e = rep;
  while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
    e--;
  char save_e = *e;
  *e = '\0';

  char *p = s + 5;
  char *endp = NULL;
  gint64 step = g_ascii_strtoll (p, &endp, 10);
  int good = 0, bad = 0, n3f = 0, nfull = 0;
  p = endp;
  /* first pass decides the precision, the second emits */
  for (int pass = 0; pass < 2; pass++)
    {
      if (pass == 1 && (ctx == NULL || good == 0))
        break;
      if (pass == 1)
        ctx->reader->point_precision = n3f > 0 && nfull == 0 ? DW_PRECISION_3F : 0;
      p = endp;
      while (*p != '\0')
        {
          p += 3; /* " - " */
          char *next = strstr (p, " - ");
          char *fend = next != NULL ? next : e;
          char *colon = NULL;
          for (char *q = fend - 1; q >= p; q--)
            if (*q == ':')
              {
                colon = q;
                break;
              }
          double v;
          if (colon == NULL || colon == p)
            {
              if (pass == 0)
                bad++;
              else
                {
                  g_autofree char *field = g_strndup (p, MIN ((gsize)(fend - p), (gsize)60));
                  dw_reader_diag (ctx, offset + (p - buf),
                                  "verl console: field \"%s\" is not key:value", field);
                }
            }
          else if (!parse_value (colon + 1, (gsize)(fend - colon - 1), &v))
            {
              if (pass == 0)
                bad++;
              else
                {
                  g_autofree char *key = g_strndup (p, (gsize)(colon - p));
                  dw_reader_diag (ctx, offset + (colon + 1 - buf),
                                  "verl console: value of key \"%s\" is not a number", key);
                }
            }
          else if (pass == 0)
            {
              int f = value_is_3f (colon + 1, (gsize)(fend - colon - 1));
              good++;
              n3f += f == 1;
              nfull += f == 0;
            }
          else
            {
              char save = *colon;
              *colon = '\0';
              dw_reader_emit (ctx, p, step, NAN, v, NULL);
              *colon = save;
            }
          p = fend;
        }
    }
  if (ctx != NULL)
    ctx->reader->point_precision = 0;
  *e = save_e;
  if (ctx == NULL)
    return bad > 0 || good == 0 ? -1 : good;
  return good;
}

gboolean
dw_verl_console_is_metric_line (const char *line, gsize len)
{
  if (len < 8 || memmem (line, len, "step:", 5) == NULL)
    return FALSE;
  g_autofree char *buf = g_strndup (line, len);
  gsize n = strlen (buf); /* a NUL byte ends the line's text */
  if (memchr (buf, '\033', n) != NULL)
    n = dw_strip_ansi (buf, n);
  buf[n] = '\0';
  char *s = (char *)dw_verl_console_marker (buf, n);
  if (s == NULL)
    return FALSE;
  return parse_fields (NULL, 0, buf, s, buf + n) > 0;
}

static void
verl_console_line (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const char *line, gsize len)
{
  (void)r;
  /* fast reject: a metric line contains "step:" */
  if (len < 6 || memmem (line, len, "step:", 5) == NULL)
    return;
  g_autofree char *buf = g_strndup (line, len);
  gsize n = strlen (buf);
  /* ANSI codes are stripped; offsets of fields below are reported relative to the stripped
   * line when the line had colour codes (the line offset stays exact) */
  if (memchr (buf, '\033', n) != NULL)
    n = dw_strip_ansi (buf, n);
  buf[n] = '\0';
  char *s = (char *)dw_verl_console_marker (buf, n);
  if (s == NULL)
    return;
  parse_fields (ctx, offset, buf, s, buf + n);
}

void
dw_reader_verl_console_init (DwLogReader *reader)
{
  reader->line = verl_console_line;
}
