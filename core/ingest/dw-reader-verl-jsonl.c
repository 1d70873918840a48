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
#include "dw-reader-formats.h"

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

/* A value of "data", queued until the step is known ("step" may follow "data"). */
typedef struct
{
  char *tag; /* offset into JsonlState.names */
  double value;
} Pending;

typedef struct
{
  GString *key;
  GString *tag;
  GArray *pending; /* Pending of the line's "data", reused from line to line */
  GString *names;  /* their tag names, NUL-separated */
} JsonlState;

static void
jsonl_state_free (gpointer p)
{
  JsonlState *st = p;
  g_string_free (st->key, TRUE);
  g_string_free (st->tag, TRUE);
  g_array_unref (st->pending);
  g_string_free (st->names, TRUE);
  g_free (st);
}

typedef enum
{
  JSONL_OK,
  JSONL_BAD,     /* malformed JSON at s->p */
  JSONL_REPORTED /* a problem already reported: the line is skipped */
} JsonlResult;

/* The "data" object (s->p after its '{'): numbers and nulls queued in st->pending. */
static JsonlResult
verl_jsonl_data (JsonlState *st, DwFeedCtx *ctx, goffset offset, const char *line, Scan *s)
{
  ws (s);
  if (s->p < s->end && *s->p == '}')
    {
      s->p++;
      return JSONL_OK;
    }
  for (;;)
    {
      Pending value = { NULL, NAN };
      gboolean keep = FALSE;
      char first;

      ws (s);
      g_string_truncate (st->tag, 0);
      if (!scan_string (s, st->tag))
        return JSONL_BAD;
      ws (s);
      if (s->p >= s->end || *s->p != ':')
        return JSONL_BAD;
      s->p++;
      ws (s);
      if (s->p >= s->end)
        return JSONL_BAD;
      first = *s->p;
      if (first == 'n')
        {
          if (s->end - s->p < 4 || memcmp (s->p, "null", 4) != 0)
            return JSONL_BAD;
          s->p += 4;
          keep = TRUE;
        }
      else if (first == '-' || g_ascii_isdigit (first) || first == 't' || first == 'f'
               || first == 'N' || first == 'I')
        {
          const char *begin = s->p;
          if (!scan_number (s, &value.value))
            {
              dw_reader_diag (ctx, offset + (begin - line),
                              "verl JSONL: value of key \"%s\" is not a number", st->tag->str);
              return JSONL_REPORTED;
            }
          keep = TRUE;
        }
      else if (!skip_value (s, 0)) /* strings, lists, objects: not scalars */
        return JSONL_BAD;
      if (keep)
        {
          value.tag = GSIZE_TO_POINTER (st->names->len);
          g_string_append_len (st->names, st->tag->str, (gssize)st->tag->len + 1);
          g_array_append_val (st->pending, value);
        }
      ws (s);
      if (s->p < s->end && *s->p == ',')
        {
          s->p++;
          continue;
        }
      if (s->p < s->end && *s->p == '}')
        {
          s->p++;
          return JSONL_OK;
        }
      return JSONL_BAD;
    }
}

/* One member of the line's object (s->p at its key). */
static JsonlResult
verl_jsonl_member (JsonlState *st, DwFeedCtx *ctx, goffset offset, const char *line, Scan *s,
                   gint64 *step, gboolean *have_step, gboolean *have_data, double *wall)
{
  ws (s);
  g_string_truncate (st->key, 0);
  if (!scan_string (s, st->key))
    return JSONL_BAD;
  ws (s);
  if (s->p >= s->end || *s->p != ':')
    return JSONL_BAD;
  s->p++;
  ws (s);
  if (strcmp (st->key->str, "step") == 0)
    {
      double number;
      if (!scan_number (s, &number) || !isfinite (number) || number != floor (number)
          || fabs (number) > 9e18)
        {
          dw_reader_diag (ctx, offset + (s->p - line), "verl JSONL: \"step\" is not an integer");
          return JSONL_REPORTED;
        }
      *step = (gint64)number;
      *have_step = TRUE;
      return JSONL_OK;
    }
  if (strcmp (st->key->str, "data") == 0 && s->p < s->end && *s->p == '{')
    {
      *have_data = TRUE;
      g_array_set_size (st->pending, 0);
      g_string_truncate (st->names, 0);
      s->p++;
      return verl_jsonl_data (st, ctx, offset, line, s);
    }
  if (strcmp (st->key->str, "wall_time") == 0 || strcmp (st->key->str, "_timestamp") == 0)
    return scan_number (s, wall) ? JSONL_OK : JSONL_BAD;
  return skip_value (s, 0) ? JSONL_OK : JSONL_BAD;
}

static void
verl_jsonl_line (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const char *line, gsize len)
{
  JsonlState *st = r->state;
  Scan s = { line, line + len };
  gboolean have_step = FALSE, have_data = FALSE;
  gint64 step = 0;
  double wall = NAN;
  JsonlResult result = JSONL_OK;

  ws (&s);
  if (s.p == s.end)
    return; /* blank line */
  if (*s.p != '{')
    {
      dw_reader_diag (ctx, offset, "verl JSONL: line is not a JSON object");
      return;
    }
  s.p++;
  ws (&s);
  if (s.p < s.end && *s.p == '}')
    result = JSONL_BAD;
  while (result == JSONL_OK)
    {
      result = verl_jsonl_member (st, ctx, offset, line, &s, &step, &have_step, &have_data, &wall);
      if (result != JSONL_OK)
        break;
      ws (&s);
      if (s.p < s.end && *s.p == ',')
        {
          s.p++;
          continue;
        }
      if (s.p < s.end && *s.p == '}')
        {
          s.p++;
          ws (&s);
          if (s.p != s.end)
            result = JSONL_BAD;
          break;
        }
      result = JSONL_BAD;
    }
  if (result == JSONL_BAD)
    dw_reader_diag (ctx, offset + (s.p - line), "verl JSONL: malformed JSON");
  if (result != JSONL_OK)
    return;
  if (!have_step || !have_data)
    {
      dw_reader_diag (ctx, offset, "verl JSONL: object without %s",
                      !have_step ? "\"step\"" : "\"data\"");
      return;
    }
  for (guint i = 0; i < st->pending->len; i++)
    {
      Pending *value = &g_array_index (st->pending, Pending, i);
      dw_reader_emit (ctx, st->names->str + GPOINTER_TO_SIZE (value->tag), step, wall, value->value,
                      NULL);
    }
}

void
dw_reader_verl_jsonl_init (DwLogReader *reader)
{
  JsonlState *st = g_new0 (JsonlState, 1);
  st->key = g_string_new (NULL);
  st->tag = g_string_new (NULL);
  st->pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  st->names = g_string_new (NULL);
  reader->state = st;
  reader->state_free = jsonl_state_free;
  reader->line = verl_jsonl_line;
}
