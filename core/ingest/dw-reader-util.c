/* dw-reader-util.c — what every format reader calls: diagnostics, emitting points,
 * parsing numbers, stripping ANSI escapes
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-reader-util.h"

#include <string.h>

void
dw_reader_diag (DwFeedCtx *ctx, goffset offset, const char *fmt, ...)
{
  if (ctx->on_diag == NULL)
    return;
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_autofree char *full = g_strdup_printf ("%s: byte offset %" G_GINT64_FORMAT ": %s",
                                           ctx->reader->path, (gint64)offset, msg);
  ctx->on_diag (offset, full, ctx->user_data);
}

void
dw_reader_emit (DwFeedCtx *ctx, const char *tag, gint64 step, double wall_time, double value,
                const char *step_key)
{
  if (ctx->on_point == NULL)
    return;
  DwScalarPoint p = { tag, step, wall_time, value, step_key, ctx->reader->point_precision };
  if (G_UNLIKELY (!g_utf8_validate (tag, -1, NULL)))
    {
      /* Tags end up in the store, JSON output and GTK labels, which all need UTF-8: the point
       * is kept under the tag with each invalid byte replaced by U+FFFD, reported once. */
      g_autofree char *valid = g_utf8_make_valid (tag, -1);
      DwLogReader *r = ctx->reader;
      if (r->bad_tags == NULL)
        r->bad_tags = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      if (g_hash_table_add (r->bad_tags, g_strdup (tag)))
        dw_reader_diag (ctx, ctx->where,
                        "tag is not valid UTF-8: its points are kept under \"%s\" (invalid bytes "
                        "replaced by U+FFFD)",
                        valid);
      p.tag = valid;
      ctx->on_point (&p, ctx->user_data);
      return;
    }
  ctx->on_point (&p, ctx->user_data);
}

gboolean
dw_parse_number (const char *s, gsize len, double *out)
{
  char buf[64];
  while (len > 0 && (*s == ' ' || *s == '\t'))
    s++, len--;
  while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
    len--;
  if (len == 0 || len >= sizeof buf)
    return FALSE;
  if ((len == 4 && memcmp (s, "True", 4) == 0) || (len == 4 && memcmp (s, "true", 4) == 0))
    return *out = 1.0, TRUE;
  if ((len == 5 && memcmp (s, "False", 5) == 0) || (len == 5 && memcmp (s, "false", 5) == 0))
    return *out = 0.0, TRUE;
  /* only characters a number can hold: keeps strtod from accepting hex floats or "infinity"
   * spelled oddly, and makes the token check exact */
  for (gsize i = 0; i < len; i++)
    {
      char c = s[i];
      if (!(g_ascii_isdigit (c) || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'
            || c == 'n' || c == 'a' || c == 'N' || c == 'i' || c == 'f' || c == 'I' || c == 't'
            || c == 'y'))
        return FALSE;
    }
  memcpy (buf, s, len);
  buf[len] = '\0';
  char *end = NULL;
  double v = g_ascii_strtod (buf, &end);
  if (end != buf + len || end == buf)
    return FALSE;
  if (buf[0] == 'x' || (len > 1 && (buf[1] == 'x' || buf[1] == 'X')))
    return FALSE;
  *out = v;
  return TRUE;
}

gsize
dw_strip_ansi (char *s, gsize len)
{
  gsize o = 0;
  for (gsize i = 0; i < len; i++)
    {
      if (s[i] == '\033' && i + 1 < len && s[i + 1] == '[')
        {
          gsize j = i + 2;
          while (j < len && !(s[j] >= 0x40 && s[j] <= 0x7e))
            j++;
          i = j; /* skip the final byte too */
          continue;
        }
      s[o++] = s[i];
    }
  return o;
}
