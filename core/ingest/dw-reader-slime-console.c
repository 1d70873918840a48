/* dw-reader-slime-console.c — slime's console metric lines: `… - step N: {'train/loss': …}`
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The `{…}` is a Python dict literal (repr of str keys and numeric values, numpy-2 wrappers
 * `np.float64(…)`, True/False/None, nan/inf). A tiny Python-literal scanner reads it. Each key's
 * step comes from its own axis (docs/FORMATS.md §7.1): `train/…` → the dict's `train/step`,
 * `eval/…` → `eval/step`, everything else (`rollout/…`, `perf/…`, `passrate/…`, `multi_turn/…`)
 * → `rollout/step`; when the dict lacks that key, the number of the line's `<word> N:` prefix.
 * The step keys themselves are the x axis and are not emitted. Lines without a
 * `<word> N: {` marker are ignored; a marker line whose dict cannot be read is reported.
 */
#include "dw-reader-formats.h"

#include <math.h>
#include <string.h>

typedef struct
{
  char *key;
  double value;
} Item;

static const char *
axis_of (const char *key)
{
  if (g_str_has_prefix (key, "train/"))
    return "train/step";
  if (g_str_has_prefix (key, "eval/"))
    return "eval/step";
  return "rollout/step";
}

/* Python string literal '…' or "…" (escapes kept verbatim except \' \" \\). */
static char *
py_string (const char **pp, const char *end)
{
  const char *p = *pp;
  char q = *p++;
  GString *s = g_string_new (NULL);
  while (p < end && *p != q)
    {
      if (*p == '\\' && p + 1 < end)
        {
          if (p[1] == q || p[1] == '\\')
            p++;
          else
            g_string_append_c (s, *p++);
        }
      g_string_append_c (s, *p++);
    }
  if (p >= end)
    {
      g_string_free (s, TRUE);
      return NULL;
    }
  *pp = p + 1;
  return g_string_free (s, FALSE);
}

static void
skip_sp (const char **p, const char *end)
{
  while (*p < end && (**p == ' ' || **p == '\t'))
    (*p)++;
}

/* Skips a non-scalar value up to the next top-level ',' or '}' (bracket-balanced). */
static gboolean
skip_py_value (const char **pp, const char *end)
{
  int depth = 0;
  const char *p = *pp;
  while (p < end)
    {
      char c = *p;
      if (c == '\'' || c == '"')
        {
          g_autofree char *s = py_string (&p, end);
          if (s == NULL)
            return FALSE;
          continue;
        }
      if (c == '(' || c == '[' || c == '{')
        depth++;
      else if (c == ')' || c == ']' || c == '}')
        {
          if (depth == 0)
            break;
          depth--;
        }
      else if (c == ',' && depth == 0)
        break;
      p++;
    }
  *pp = p;
  return depth == 0 && p < end;
}

typedef enum
{
  SLIME_VALUE_NUMBER,
  SLIME_VALUE_SKIP,   /* None, a string, a list: not a scalar, skipped quietly */
  SLIME_VALUE_BAD,    /* not a number: reported, the rest of the dict is read */
  SLIME_VALUE_BROKEN, /* the dict literal is malformed from here */
} SlimeValue;

/* The value of @key at *@pp: a scalar token up to ',' or '}' at depth 0 (numbers, np.float64(…),
 * np.True_), or a non-scalar value skipped whole. */
static SlimeValue
slime_console_value (DwFeedCtx *ctx, goffset offset, const char *buf, const char **pp,
                     const char *end, const char *key, double *value)
{
  const char *p = *pp;
  const char *vb = p, *ve;
  int depth = 0;
  gsize vl;

  while (p < end && !(depth == 0 && (*p == ',' || *p == '}')))
    {
      if (*p == '(')
        depth++;
      else if (*p == ')')
        depth--;
      else if (*p == '\'' || *p == '"' || *p == '[' || *p == '{')
        break;
      p++;
    }
  ve = p;
  while (ve > vb && ve[-1] == ' ')
    ve--;
  vl = (gsize)(ve - vb);
  *pp = p;
  if (p < end && (*p == '\'' || *p == '"' || *p == '[' || *p == '{'))
    {
      gboolean skipped = skip_py_value (pp, end);
      return skipped ? SLIME_VALUE_SKIP : SLIME_VALUE_BROKEN;
    }
  if (vl == 4 && memcmp (vb, "None", 4) == 0)
    return SLIME_VALUE_SKIP;
  if (vl == 8 && memcmp (vb, "np.True_", 8) == 0)
    {
      *value = 1;
      return SLIME_VALUE_NUMBER;
    }
  if (vl == 9 && memcmp (vb, "np.False_", 9) == 0)
    {
      *value = 0;
      return SLIME_VALUE_NUMBER;
    }
  if (vl > 3 && memcmp (vb, "np.", 3) == 0)
    {
      const char *lp = memchr (vb, '(', vl);
      if (lp != NULL && ve[-1] == ')' && dw_parse_number (lp + 1, (gsize)(ve - 1 - lp - 1), value))
        return SLIME_VALUE_NUMBER;
    }
  else if (dw_parse_number (vb, vl, value))
    return SLIME_VALUE_NUMBER;
  dw_reader_diag (ctx, offset + (vb - buf), "slime console: value of key \"%s\" is not a number",
                  key);
  return SLIME_VALUE_BAD;
}

/* The dict's scalars, each at the step of its axis (train/rollout/eval) when the dict gives
 * it, else at the line's "<word> N:" step; the step keys themselves are not series. */
static void
slime_console_emit (DwFeedCtx *ctx, GArray *items, const double steps[3], gint64 line_step)
{
  for (guint i = 0; i < items->len; i++)
    {
      Item *it = &g_array_index (items, Item, i);
      const char *axis = axis_of (it->key);
      if (g_str_has_suffix (it->key, "/step")
          && (strcmp (it->key, "train/step") == 0 || strcmp (it->key, "rollout/step") == 0
              || strcmp (it->key, "eval/step") == 0))
        continue;
      double sv = axis[0] == 't' ? steps[0] : axis[0] == 'e' ? steps[2] : steps[1];
      gint64 step = isfinite (sv) ? (gint64)sv : line_step;
      dw_reader_emit (ctx, it->key, step, NAN, it->value, axis);
    }
}

static void
slime_console_line (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const char *line, gsize len)
{
  (void)r;
  const char *brace = memchr (line, '{', len);
  if (brace == NULL || brace - line < 4 || brace[-1] != ' ' || brace[-2] != ':')
    return;
  /* "<word> N: {" */
  const char *q = brace - 3;
  if (!g_ascii_isdigit (*q))
    return;
  while (q > line && g_ascii_isdigit (q[-1]))
    q--;
  if (q == line || q[-1] != ' ')
    return;
  gint64 line_step = g_ascii_strtoll (q, NULL, 10);
  const char *w = q - 1;
  while (w > line && (g_ascii_isalnum (w[-1]) || w[-1] == '_'))
    w--;
  if (w == q - 1)
    return;

  g_autofree char *buf = g_strndup (line, len);
  gsize n = memchr (buf, '\033', len) ? dw_strip_ansi (buf, len) : len;
  const char *end = buf + n;
  const char *p = buf + (brace - line);
  /* ANSI codes before the brace would shift it; find it again in the stripped copy */
  if (p >= end || *p != '{')
    {
      p = strchr (buf, '{');
      if (p == NULL)
        return;
    }
  const char *start = p;
  p++;
  GArray *items = g_array_new (FALSE, FALSE, sizeof (Item));
  double steps[3] = { NAN, NAN, NAN }; /* train, rollout, eval */
  gboolean ok = FALSE;
  skip_sp (&p, end);
  if (p < end && *p == '}')
    ok = TRUE;
  else
    for (;;)
      {
        skip_sp (&p, end);
        if (p >= end || (*p != '\'' && *p != '"'))
          break;
        char *key = py_string (&p, end);
        if (key == NULL)
          break;
        skip_sp (&p, end);
        if (p >= end || *p != ':')
          {
            g_free (key);
            break;
          }
        p++;
        skip_sp (&p, end);
        double v;
        SlimeValue kind = slime_console_value (ctx, offset, buf, &p, end, key, &v);
        if (kind == SLIME_VALUE_BROKEN)
          {
            g_free (key);
            break;
          }
        if (kind == SLIME_VALUE_BAD)
          {
            g_free (key);
            goto next;
          }
        gboolean is_num = kind == SLIME_VALUE_NUMBER;
        if (is_num)
          {
            if (strcmp (key, "train/step") == 0)
              steps[0] = v;
            else if (strcmp (key, "rollout/step") == 0)
              steps[1] = v;
            else if (strcmp (key, "eval/step") == 0)
              steps[2] = v;
            Item it = { key, v };
            g_array_append_val (items, it);
          }
        else
          g_free (key);
      next:
        skip_sp (&p, end);
        if (p < end && *p == ',')
          {
            p++;
            skip_sp (&p, end);
            if (p < end && *p == '}')
              {
                ok = TRUE;
                break;
              }
            continue;
          }
        if (p < end && *p == '}')
          ok = TRUE;
        break;
      }
  if (!ok)
    dw_reader_diag (ctx, offset + (p - buf),
                    "slime console: malformed dict literal (starts at byte %" G_GINT64_FORMAT
                    "), line skipped",
                    (gint64)(offset + (start - buf)));
  else
    slime_console_emit (ctx, items, steps, line_step);
  for (guint i = 0; i < items->len; i++)
    g_free (g_array_index (items, Item, i).key);
  g_array_free (items, TRUE);
}

void
dw_reader_slime_console_init (DwLogReader *reader)
{
  reader->line = slime_console_line;
}

gboolean
dw_slime_console_is_metric_line (const char *line, gsize len)
{
  static const char *const families[]
    = { "'train/", "'rollout/", "'perf/", "'eval/", "'passrate/", "'multi_turn/" };
  const char *m = memmem (line, len, ": {'", 4);

  if (m == NULL || m - line < 3)
    return FALSE;
  /* "<word> N: {'family/" */
  const char *q = m;
  if (!g_ascii_isdigit (q[-1]))
    return FALSE;
  while (q > line && g_ascii_isdigit (q[-1]))
    q--;
  if (q == line || q[-1] != ' ' || q - 1 == line || !g_ascii_isalpha (q[-2]))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (families); i++)
    {
      gsize fl = strlen (families[i]);
      if ((gsize)(line + len - (m + 3)) > fl && memcmp (m + 3, families[i], fl) == 0)
        return memchr (m, '}', (gsize)(line + len - m)) != NULL; /* a whole dict on the line */
    }
  return FALSE;
}
