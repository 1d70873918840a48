/* dw-reader-verl-console.c — verl's console backend: `step:N - key:value - …`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Accepts the three value renderings (legacy `%.3f`, `repr`, numpy-2 `np.float64(…)`), Ray
 * prefixes `(TaskRunner pid=…)`, ANSI colour codes and `[repeated Nx across cluster]` suffixes.
 * Lines that carry no `step:N - ` marker (tqdm bars, banners) are ignored silently; a metric line
 * whose field cannot be read is reported with the offset of that field and the rest is kept.
 */
#include "dw-log-reader-private.h"

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

static void
verl_console_line (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const char *line, gsize len)
{
  (void)r;
  /* fast reject: a metric line contains "step:" */
  if (len < 6 || g_strstr_len (line, (gssize)len, "step:") == NULL)
    return;
  g_autofree char *buf = g_strndup (line, len);
  /* ANSI codes are stripped; offsets of fields below are reported relative to the stripped
   * line when the line had colour codes (the line offset stays exact) */
  gboolean had_ansi = memchr (buf, '\033', len) != NULL;
  gsize n = had_ansi ? dw_strip_ansi (buf, len) : len;
  buf[n] = '\0';
  char *s = buf;
  /* Ray prefix "(Name pid=123) " or "(Name pid=123, ip=…) " */
  while (*s == ' ')
    s++;
  if (*s == '(')
    {
      char *cp = strchr (s, ')');
      if (cp == NULL || strstr (s, "pid=") == NULL || strstr (s, "pid=") > cp)
        return;
      s = cp + 1;
      while (*s == ' ')
        s++;
    }
  if (strncmp (s, "step:", 5) != 0)
    return;
  char *e = buf + n;
  /* Ray's dedup suffix */
  char *rep = strstr (s, " [repeated ");
  if (rep != NULL && strstr (rep, "across cluster]") != NULL)
    e = rep;
  while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
    e--;
  *e = '\0';

  char *p = s + 5;
  char *endp = NULL;
  if (!g_ascii_isdigit (*p))
    {
      dw_reader_diag (ctx, offset + (s - buf), "verl console: step is not a number");
      return;
    }
  gint64 step = g_ascii_strtoll (p, &endp, 10);
  if (*endp != '\0' && strncmp (endp, " - ", 3) != 0)
    {
      dw_reader_diag (ctx, offset + (s - buf), "verl console: malformed step field");
      return;
    }
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
          g_autofree char *field = g_strndup (p, MIN ((gsize)(fend - p), (gsize)60));
          dw_reader_diag (ctx, offset + (p - buf), "verl console: field \"%s\" is not key:value",
                          field);
        }
      else if (!parse_value (colon + 1, (gsize)(fend - colon - 1), &v))
        {
          g_autofree char *key = g_strndup (p, (gsize)(colon - p));
          dw_reader_diag (ctx, offset + (colon + 1 - buf),
                          "verl console: value of key \"%s\" is not a number", key);
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

void
dw_reader_verl_console_init (DwLogReader *reader)
{
  reader->line = verl_console_line;
}
