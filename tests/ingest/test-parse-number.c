/* test-parse-number.c — dw_parse_number's exact fast path against strtod, bit for bit
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * dw_parse_number reads most decimal numbers without strtod (dw-reader-util.c: Clinger's fast
 * path in double, and in the x87 80-bit format for the 16-19 digit mantissas of Python's repr).
 * Its answer must be the one strtod gives, bit for bit, for every input a log can hold. The
 * reference below is the strtod-only parser it replaced (same token rules: only characters a
 * number can hold, the whole token, no hex), and every case compares acceptance and the 64 bits
 * of the result. The inputs are what loggers write: random float64 printed as %.17g and as
 * Python's repr (the shortest string that reads back), verl ≤ 0.4's %.3f, exponent forms, signs,
 * random digit strings with random decimal points and exponents (near the 19-digit and 10^±27
 * limits of the fast path), the exact midpoints between two doubles that a short decimal can
 * name (odd integers in [2^53, 2^64)), and the inf/nan/True/False spellings the readers accept
 * and malformed tokens they reject.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "dw-reader-util.h"

/* The parser before the fast path: g_ascii_strtod on the trimmed token. */
static gboolean
reference_parse (const char *s, gsize len, double *out)
{
  char buf[64];
  char *end = NULL;
  double v;

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
  for (gsize i = 0; i < len; i++)
    if (!strchr ("0123456789.-+eEnaNifIty", s[i]))
      return FALSE;
  memcpy (buf, s, len);
  buf[len] = '\0';
  v = g_ascii_strtod (buf, &end);
  if (end != buf + len || end == buf)
    return FALSE;
  if (buf[0] == 'x' || (len > 1 && (buf[1] == 'x' || buf[1] == 'X')))
    return FALSE;
  *out = v;
  return TRUE;
}

static guint64 n_checked;

static void
check (const char *text)
{
  double fast = 0, slow = 0;
  gboolean fast_ok = dw_parse_number (text, strlen (text), &fast);
  gboolean slow_ok = reference_parse (text, strlen (text), &slow);
  guint64 fast_bits, slow_bits;

  if (fast_ok != slow_ok)
    g_error ("\"%s\": accepted %d, strtod-only parser %d", text, fast_ok, slow_ok);
  n_checked++;
  if (!fast_ok)
    return;
  if (isnan (fast) && isnan (slow))
    return;
  memcpy (&fast_bits, &fast, 8);
  memcpy (&slow_bits, &slow, 8);
  if (fast_bits != slow_bits)
    g_error ("\"%s\": %.17g (0x%016" G_GINT64_MODIFIER "x), strtod %.17g (0x%016" G_GINT64_MODIFIER
             "x)",
             text, fast, fast_bits, slow, slow_bits);
}

static double
random_finite (GRand *random)
{
  for (;;)
    {
      guint64 bits = (guint64)g_rand_int (random) << 32 | g_rand_int (random);
      double v;
      memcpy (&v, &bits, 8);
      if (isfinite (v))
        return v;
    }
}

/* Python's repr: the shortest %.Ng that reads back. */
static void
print_repr (char *buf, gsize size, double v)
{
  for (int precision = 1; precision <= 17; precision++)
    {
      g_snprintf (buf, size, "%.*g", precision, v);
      if (g_ascii_strtod (buf, NULL) == v)
        return;
    }
}

/* Random doubles over every exponent and in the ranges metrics live in, in each way loggers
 * print them. */
static void
test_printed_doubles (void)
{
  g_autoptr (GRand) random = g_rand_new_with_seed (20261124);
  char buf[64];

  for (guint i = 0; i < 250000; i++)
    {
      double anywhere = random_finite (random);
      double metric
        = g_rand_double_range (random, -1, 1) * pow (10, g_rand_int_range (random, -8, 9));

      g_snprintf (buf, sizeof buf, "%.17g", anywhere);
      check (buf);
      print_repr (buf, sizeof buf, anywhere);
      check (buf);
      g_snprintf (buf, sizeof buf, "%.17g", metric);
      check (buf);
      print_repr (buf, sizeof buf, metric);
      check (buf);
      g_snprintf (buf, sizeof buf, "%.3f", metric);
      check (buf);
      g_snprintf (buf, sizeof buf, "%.6e", metric);
      check (buf);
      g_snprintf (buf, sizeof buf, "%.16e", metric);
      check (buf);
      g_snprintf (buf, sizeof buf, "%g", metric);
      check (buf);
      g_snprintf (buf, sizeof buf, "%.15g", (float)metric); /* tfevents values via the console */
      check (buf);
    }
}

/* Random digit strings: 1-22 digits, a decimal point anywhere (or none), leading zeros, an
 * exponent from -40 to 40 in every spelling, signs. */
static void
test_digit_strings (void)
{
  g_autoptr (GRand) random = g_rand_new_with_seed (12);
  static const char *const exponent_forms[] = { "e", "E", "e+", "e-", "E-", "e+0", "e-0" };
  char buf[64];

  for (guint i = 0; i < 1000000; i++)
    {
      int n_digits = g_rand_int_range (random, 1, 23);
      int point = g_rand_int_range (random, -1, n_digits + 1);
      int o = 0;

      if (g_rand_boolean (random))
        buf[o++] = g_rand_boolean (random) ? '-' : '+';
      if (g_rand_int_range (random, 0, 4) == 0)
        for (int z = g_rand_int_range (random, 1, 6); z > 0; z--)
          buf[o++] = '0';
      for (int d = 0; d < n_digits; d++)
        {
          if (d == point)
            buf[o++] = '.';
          buf[o++] = (char)('0' + g_rand_int_range (random, 0, 10));
        }
      if (point == n_digits)
        buf[o++] = '.';
      buf[o] = '\0';
      if (g_rand_boolean (random))
        g_snprintf (buf + o, sizeof buf - (gsize)o, "%s%d",
                    exponent_forms[g_rand_int_range (random, 0, G_N_ELEMENTS (exponent_forms))],
                    g_rand_int_range (random, 0, 41));
      check (buf);
    }
}

/* Odd integers in [2^53, 2^64) are exactly halfway between two doubles: the one case where
 * rounding twice (long double, then double) could differ from strtod's single rounding. Also
 * scaled, and neighbours of powers of two and ten. */
static void
test_midpoints (void)
{
  g_autoptr (GRand) random = g_rand_new_with_seed (53);
  char buf[64];

  for (guint i = 0; i < 200000; i++)
    {
      /* doubles in [2^(53+s), 2^(54+s)) are 2^(s+1) apart: base + k 2^(s+1) + 2^s is halfway */
      int shift = g_rand_int_range (random, 0, 11);
      guint64 base = (guint64)1 << (53 + shift);
      guint64 k
        = ((guint64)g_rand_int (random) << 32 | g_rand_int (random)) % (base >> (shift + 1));
      guint64 midpoint = base + (k << (shift + 1)) + ((guint64)1 << shift);

      g_snprintf (buf, sizeof buf, "%" G_GUINT64_FORMAT, midpoint);
      check (buf);
      g_snprintf (buf, sizeof buf, "%" G_GUINT64_FORMAT ".0", midpoint);
      check (buf);
      g_snprintf (buf, sizeof buf, "%" G_GUINT64_FORMAT "e-%d", midpoint,
                  g_rand_int_range (random, 0, 28));
      check (buf);
      g_snprintf (buf, sizeof buf, "-%" G_GUINT64_FORMAT "e%d", midpoint - 1,
                  g_rand_int_range (random, 0, 28));
      check (buf);
      g_snprintf (buf, sizeof buf, "%" G_GUINT64_FORMAT, midpoint + 1);
      check (buf);
    }
  for (int p = 0; p < 64; p++)
    for (int delta = -3; delta <= 3; delta++)
      {
        g_snprintf (buf, sizeof buf, "%" G_GUINT64_FORMAT, ((guint64)1 << p) + (guint64)delta);
        check (buf);
      }
  for (int p = -30; p <= 30; p++)
    {
      g_snprintf (buf, sizeof buf, "1e%d", p);
      check (buf);
      g_snprintf (buf, sizeof buf, "9999999999999999999e%d", p);
      check (buf);
      g_snprintf (buf, sizeof buf, "18446744073709551615e%d", p);
      check (buf);
    }
}

/* The spellings readers accept (and keep) and malformed tokens they reject. */
static void
test_spellings (void)
{
  static const char *const tokens[] = {
    "0",
    "-0",
    "+0",
    "0.0",
    "-0.0",
    "-0e5",
    "0e-400",
    ".5",
    "5.",
    "-.5e-3",
    "+.5E+3",
    "1e400",
    "-1e400",
    "1e-400",
    "4.9406564584124654e-324",
    "2.2250738585072014e-308",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "inf",
    "-inf",
    "+inf",
    "Infinity",
    "-Infinity",
    "nan",
    "NaN",
    "-nan",
    "True",
    "False",
    "true",
    "false",
    " 1.5 ",
    "\t2",
    "1e",
    "e5",
    "--1",
    "1.2.3",
    "",
    "+",
    "-",
    ".",
    "1e+",
    "1e-",
    "0x10",
    "1_000",
    "1,5",
    "12a",
    "1e5.5",
    "00000000000000000000001",
    "0.000000000000000000000000000001",
    "123456789012345678901234567890",
    "1e99999",
    "1e-99999",
    "9007199254740993",
    "9007199254740992.5",
    "0.30000000000000004",
    "0.1",
    "0.2",
    "0.3",
  };

  for (guint i = 0; i < G_N_ELEMENTS (tokens); i++)
    check (tokens[i]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/parse-number/spellings", test_spellings);
  g_test_add_func ("/parse-number/printed-doubles", test_printed_doubles);
  g_test_add_func ("/parse-number/digit-strings", test_digit_strings);
  g_test_add_func ("/parse-number/midpoints", test_midpoints);
  int status = g_test_run ();
  g_print ("# %" G_GUINT64_FORMAT " tokens compared with strtod\n", n_checked);
  return status;
}
