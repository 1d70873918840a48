/* dw-reader-util.c — what every format reader calls: diagnostics, emitting points,
 * parsing numbers, stripping ANSI escapes
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-reader-util.h"

#include <float.h>
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

/* Most tags are ASCII: a cheaper test than g_utf8_validate's. */
static inline gboolean
dw_reader_util_is_ascii (const char *text)
{
  guchar any = 0;

  for (; *text != '\0'; text++)
    any |= (guchar)*text;
  return any < 0x80;
}

void
dw_reader_emit (DwFeedCtx *ctx, const char *tag, gint64 step, double wall_time, double value,
                const char *step_key)
{
  if (ctx->on_point == NULL)
    return;
  DwScalarPoint p = { tag, step, wall_time, value, step_key, ctx->reader->point_precision };
  if (G_UNLIKELY (!dw_reader_util_is_ascii (tag) && !g_utf8_validate (tag, -1, NULL)))
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

/* Exact powers of ten: 10^k is a double without rounding up to 10^22 (5^22 < 2^53), and a long
 * double up to 10^27 (5^27 < 2^64). */
static const double dw_reader_util_pow10[] = {
  1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* Both paths need each operation rounded once, in its own type (no wider evaluation). */
#if FLT_EVAL_METHOD == 0
#define DW_READER_UTIL_FAST 1
#endif
#if FLT_EVAL_METHOD == 0 && LDBL_MANT_DIG == 64
#define DW_READER_UTIL_LONG_FAST 1
static const long double dw_reader_util_pow10_long[] = {
  1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
  1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};
#endif

/* The digits m × 10^exponent as the double nearest to it, without strtod, when that can be done
 * exactly; FALSE when strtod is needed.
 *
 * Clinger's fast path (W. D. Clinger, "How to read floating point numbers accurately", PLDI
 * 1990): when m <= 2^53 and |exponent| <= 22, m and 10^|exponent| are both exact doubles and one
 * IEEE multiplication or division rounds their product or quotient correctly. Python's repr of a
 * float64 mostly has 16-17 significant digits (m up to 10^17 > 2^53), so on x86 the same is done
 * in the x87 80-bit format (m < 2^64 and 10^k for k <= 27 exact), whose one rounding is then
 * rounded again to a double: that second rounding gives the nearest double unless the long
 * double result lies exactly on the midpoint between two doubles (its 11 low mantissa bits are
 * 0x400; a midpoint is a long double, so the nearest long double of a value on either side of it
 * is on the same side or the midpoint itself), in which case strtod decides.
 * tests/ingest/test-parse-number.c compares every result bit for bit with strtod on millions of
 * inputs. */
static gboolean
dw_reader_util_scaled (guint64 mantissa, int exponent, gboolean negative, double *out)
{
  double value;

#ifndef DW_READER_UTIL_FAST
  return FALSE;
#endif
  if (mantissa <= ((guint64)1 << 53) && exponent >= -22 && exponent <= 22)
    value = exponent >= 0 ? (double)mantissa * dw_reader_util_pow10[exponent]
                          : (double)mantissa / dw_reader_util_pow10[-exponent];
  else
    {
#ifdef DW_READER_UTIL_LONG_FAST
      long double wide;
      guint64 bits;

      if (exponent < -27 || exponent > 27)
        return FALSE;
      wide = exponent >= 0 ? (long double)mantissa * dw_reader_util_pow10_long[exponent]
                           : (long double)mantissa / dw_reader_util_pow10_long[-exponent];
      memcpy (&bits, &wide, sizeof bits); /* the 64-bit significand, explicit leading bit */
      if ((bits & 0x7ff) == 0x400)
        return FALSE;
      value = (double)wide;
#else
      return FALSE;
#endif
    }
  *out = negative ? -value : value;
  return TRUE;
}

/* [+-]digits[.digits][(e|E)[+-]digits] (or .digits), the whole of [s, s+len), read exactly
 * (dw_reader_util_scaled); FALSE for anything else or anything it cannot do exactly (more than 19
 * significant digits, a large exponent): strtod then reads the token. */
static gboolean
dw_reader_util_parse_decimal (const char *s, gsize len, double *out)
{
  const char *end = s + len;
  guint64 mantissa = 0;
  int n_significant = 0, n_digits = 0, scale = 0, exponent = 0;
  gboolean negative = FALSE;

  if (s < end && (*s == '-' || *s == '+'))
    negative = *s++ == '-';
  for (; s < end && g_ascii_isdigit (*s); s++, n_digits++)
    if (mantissa != 0 || *s != '0')
      {
        mantissa = mantissa * 10 + (guint64)(*s - '0');
        n_significant++;
      }
  if (s < end && *s == '.')
    for (s++; s < end && g_ascii_isdigit (*s); s++, n_digits++)
      {
        scale--;
        if (mantissa != 0 || *s != '0')
          {
            mantissa = mantissa * 10 + (guint64)(*s - '0');
            n_significant++;
          }
      }
  if (n_digits == 0 || n_significant > 19)
    return FALSE;
  if (s < end && (*s == 'e' || *s == 'E'))
    {
      gboolean exponent_negative = FALSE;
      int n_exponent_digits = 0;

      s++;
      if (s < end && (*s == '-' || *s == '+'))
        exponent_negative = *s++ == '-';
      for (; s < end && g_ascii_isdigit (*s) && n_exponent_digits < 4; s++, n_exponent_digits++)
        exponent = exponent * 10 + (*s - '0');
      if (n_exponent_digits == 0)
        return FALSE;
      if (exponent_negative)
        exponent = -exponent;
    }
  if (s != end)
    return FALSE;
  if (mantissa == 0)
    {
      *out = negative ? -0.0 : 0.0;
      return TRUE;
    }
  return dw_reader_util_scaled (mantissa, exponent + scale, negative, out);
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
  if (dw_reader_util_parse_decimal (s, len, out))
    return TRUE;
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
