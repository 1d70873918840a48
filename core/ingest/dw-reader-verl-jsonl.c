/* dw-reader-verl-jsonl.c — verl's `file` logger: one `{"step":N,"data":{…}}` object per line
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A small purpose-built JSON scanner instead of json-glib: the line shape is fixed, values of
 * interest are numbers, and building a JsonNode tree per line costs several times the parse
 * (the benchmark needs > 1 M scalars/s). Nested objects, arrays and strings are skipped.
 * orjson writes NaN/±inf as `null`: such a value is kept as NaN (the sign of an infinity is
 * lost by the writer). true/false give 1/0.
 */
#include "dw-log-reader-private.h"

#include <math.h>
#include <string.h>

typedef struct
{
  const char *p, *end;
} Scan;

static void
ws (Scan *s)
{
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
    s->p++;
}

/* Parses a JSON string at s->p (which is '"'); appends the unescaped text to @out if non-NULL. */
static gboolean
scan_string (Scan *s, GString *out)
{
  if (s->p >= s->end || *s->p != '"')
    return FALSE;
  s->p++;
  const char *start = s->p;
  while (s->p < s->end)
    {
      char c = *s->p;
      if (c == '"')
        {
          if (out)
            g_string_append_len (out, start, s->p - start);
          s->p++;
          return TRUE;
        }
      if ((unsigned char)c < 0x20)
        return FALSE;
      if (c == '\\')
        {
          if (out)
            g_string_append_len (out, start, s->p - start);
          if (s->end - s->p < 2)
            return FALSE;
          char e = s->p[1];
          s->p += 2;
          if (e == 'u')
            {
              if (s->end - s->p < 4)
                return FALSE;
              guint32 cp = 0;
              for (int i = 0; i < 4; i++)
                {
                  int d = g_ascii_xdigit_value (s->p[i]);
                  if (d < 0)
                    return FALSE;
                  cp = cp * 16 + (guint32)d;
                }
              s->p += 4;
              if (cp >= 0xd800 && cp < 0xdc00 && s->end - s->p >= 6 && s->p[0] == '\\'
                  && s->p[1] == 'u')
                {
                  guint32 lo = 0;
                  gboolean ok = TRUE;
                  for (int i = 0; i < 4; i++)
                    {
                      int d = g_ascii_xdigit_value (s->p[2 + i]);
                      ok = ok && d >= 0;
                      lo = lo * 16 + (guint32)MAX (d, 0);
                    }
                  if (ok && lo >= 0xdc00 && lo < 0xe000)
                    {
                      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                      s->p += 6;
                    }
                }
              if (cp >= 0xd800 && cp < 0xe000)
                cp = 0xfffd;
              /* a NUL would end the key as a C string, merging "a\u0000b" into "a": shown as
               * U+2400 SYMBOL FOR NULL, a key of its own */
              if (cp == 0)
                cp = 0x2400;
              if (out)
                g_string_append_unichar (out, cp);
            }
          else
            {
              const char *m = strchr ("\"\\/bfnrt", e);
              if (m == NULL || e == '\0')
                return FALSE;
              if (out)
                g_string_append_c (out, "\"\\/\b\f\n\r\t"[m - "\"\\/bfnrt"]);
            }
          start = s->p;
          continue;
        }
      s->p++;
    }
  return FALSE;
}

static gboolean skip_value (Scan *s, int depth);

static gboolean
scan_number (Scan *s, double *out)
{
  const char *b = s->p;
  while (s->p < s->end && (g_ascii_isalnum (*s->p) || *s->p == '-' || *s->p == '+' || *s->p == '.'))
    s->p++;
  return dw_parse_number (b, (gsize)(s->p - b), out);
}

static gboolean
skip_value (Scan *s, int depth)
{
  if (depth > 64)
    return FALSE;
  ws (s);
  if (s->p >= s->end)
    return FALSE;
  char c = *s->p;
  if (c == '"')
    return scan_string (s, NULL);
  if (c == '{' || c == '[')
    {
      char close = c == '{' ? '}' : ']';
      s->p++;
      ws (s);
      if (s->p < s->end && *s->p == close)
        return s->p++, TRUE;
      for (;;)
        {
          if (c == '{')
            {
              ws (s);
              if (!scan_string (s, NULL))
                return FALSE;
              ws (s);
              if (s->p >= s->end || *s->p != ':')
                return FALSE;
              s->p++;
            }
          if (!skip_value (s, depth + 1))
            return FALSE;
          ws (s);
          if (s->p >= s->end)
            return FALSE;
          if (*s->p == ',')
            {
              s->p++;
              continue;
            }
          if (*s->p == close)
            return s->p++, TRUE;
          return FALSE;
        }
    }
  double d;
  return scan_number (s, &d);
}

typedef struct
{
  GString *key;
  GString *tag;
} JsonlState;

static void
jsonl_state_free (gpointer p)
{
  JsonlState *st = p;
  g_string_free (st->key, TRUE);
  g_string_free (st->tag, TRUE);
  g_free (st);
}

/* Scans the "data" object; numbers are queued in @tags/@vals until the step is known. */
typedef struct
{
  char *tag;
  double value;
} Pending;

static void
verl_jsonl_line (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const char *line, gsize len)
{
  JsonlState *st = r->state;
  Scan s = { line, line + len };
  ws (&s);
  if (s.p == s.end)
    return; /* blank line */
  if (*s.p != '{')
    {
      dw_reader_diag (ctx, offset, "verl JSONL: line is not a JSON object");
      return;
    }
  s.p++;
  gboolean have_step = FALSE, have_data = FALSE;
  gint64 step = 0;
  double wall = NAN;
  /* data values are collected first: "step" may follow "data" in a hand-written file */
  GArray *pend = NULL;
  GString *names = NULL;
  ws (&s);
  if (s.p < s.end && *s.p == '}')
    goto bad;
  for (;;)
    {
      ws (&s);
      g_string_truncate (st->key, 0);
      if (!scan_string (&s, st->key))
        goto bad;
      ws (&s);
      if (s.p >= s.end || *s.p != ':')
        goto bad;
      s.p++;
      ws (&s);
      if (strcmp (st->key->str, "step") == 0)
        {
          double d;
          if (!scan_number (&s, &d) || !isfinite (d) || d != floor (d) || fabs (d) > 9e18)
            {
              dw_reader_diag (ctx, offset + (s.p - line), "verl JSONL: \"step\" is not an integer");
              goto out;
            }
          step = (gint64)d;
          have_step = TRUE;
        }
      else if (strcmp (st->key->str, "data") == 0 && s.p < s.end && *s.p == '{')
        {
          have_data = TRUE;
          pend = g_array_new (FALSE, FALSE, sizeof (Pending));
          names = g_string_new (NULL);
          s.p++;
          ws (&s);
          if (s.p < s.end && *s.p == '}')
            s.p++;
          else
            for (;;)
              {
                ws (&s);
                g_string_truncate (st->tag, 0);
                if (!scan_string (&s, st->tag))
                  goto bad;
                ws (&s);
                if (s.p >= s.end || *s.p != ':')
                  goto bad;
                s.p++;
                ws (&s);
                if (s.p >= s.end)
                  goto bad;
                char c = *s.p;
                Pending pv = { NULL, NAN };
                gboolean keep = FALSE;
                if (c == 'n')
                  {
                    if (s.end - s.p < 4 || memcmp (s.p, "null", 4) != 0)
                      goto bad;
                    s.p += 4;
                    keep = TRUE;
                  }
                else if (c == '-' || g_ascii_isdigit (c) || c == 't' || c == 'f' || c == 'N'
                         || c == 'I')
                  {
                    const char *vb = s.p;
                    if (!scan_number (&s, &pv.value))
                      {
                        dw_reader_diag (ctx, offset + (vb - line),
                                        "verl JSONL: value of key \"%s\" is not a number",
                                        st->tag->str);
                        goto out;
                      }
                    keep = TRUE;
                  }
                else if (!skip_value (&s, 0)) /* strings, lists, objects: not scalars */
                  goto bad;
                if (keep)
                  {
                    pv.tag = GSIZE_TO_POINTER (names->len);
                    g_string_append_len (names, st->tag->str, (gssize)st->tag->len + 1);
                    g_array_append_val (pend, pv);
                  }
                ws (&s);
                if (s.p < s.end && *s.p == ',')
                  {
                    s.p++;
                    continue;
                  }
                if (s.p < s.end && *s.p == '}')
                  {
                    s.p++;
                    break;
                  }
                goto bad;
              }
        }
      else if (strcmp (st->key->str, "wall_time") == 0 || strcmp (st->key->str, "_timestamp") == 0)
        {
          if (!scan_number (&s, &wall))
            goto bad;
        }
      else if (!skip_value (&s, 0))
        goto bad;
      ws (&s);
      if (s.p < s.end && *s.p == ',')
        {
          s.p++;
          continue;
        }
      if (s.p < s.end && *s.p == '}')
        {
          s.p++;
          break;
        }
      goto bad;
    }
  ws (&s);
  if (s.p != s.end)
    goto bad;
  if (!have_step || !have_data)
    {
      dw_reader_diag (ctx, offset, "verl JSONL: object without %s",
                      !have_step ? "\"step\"" : "\"data\"");
      goto out;
    }
  for (guint i = 0; i < pend->len; i++)
    {
      Pending *pv = &g_array_index (pend, Pending, i);
      dw_reader_emit (ctx, names->str + GPOINTER_TO_SIZE (pv->tag), step, wall, pv->value, NULL);
    }
  goto out;
bad:
  dw_reader_diag (ctx, offset + (s.p - line), "verl JSONL: malformed JSON");
out:
  if (pend)
    g_array_free (pend, TRUE);
  if (names)
    g_string_free (names, TRUE);
}

void
dw_reader_verl_jsonl_init (DwLogReader *reader)
{
  JsonlState *st = g_new0 (JsonlState, 1);
  st->key = g_string_new (NULL);
  st->tag = g_string_new (NULL);
  reader->state = st;
  reader->state_free = jsonl_state_free;
  reader->line = verl_jsonl_line;
}
