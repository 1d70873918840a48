/* dw-python.c — Python's float() and repr() of a float, as the trainers' checks see them (§8)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-python.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool
dw_python_is_space (int c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool
dw_python_float (const char *s, double *out)
{
  if (s == NULL)
    return false;
  size_t len = strlen (s);
  size_t a = 0, b = len;
  while (a < b && dw_python_is_space ((unsigned char)s[a]))
    a++;
  while (b > a && dw_python_is_space ((unsigned char)s[b - 1]))
    b--;
  if (a == b || b - a > 400)
    return false;
  char buf[512];
  size_t n = 0;
  for (size_t i = a; i < b; i++)
    {
      char c = s[i];
      if (c == '_')
        {
          /* PEP 515: only between two digits */
          if (i == a || i + 1 >= b || !isdigit ((unsigned char)s[i - 1])
              || !isdigit ((unsigned char)s[i + 1]))
            return false;
          continue;
        }
      buf[n++] = c;
    }
  buf[n] = '\0';
  const char *p = buf;
  bool neg = false;
  if (*p == '+' || *p == '-')
    neg = *p++ == '-';
  if (strcasecmp (p, "inf") == 0 || strcasecmp (p, "infinity") == 0)
    {
      *out = neg ? -INFINITY : INFINITY;
      return true;
    }
  if (strcasecmp (p, "nan") == 0)
    {
      *out = neg ? -NAN : NAN;
      return true;
    }
  /* digits [. digits] [e [sign] digits], at least one mantissa digit */
  const char *q = p;
  size_t nd = 0;
  while (isdigit ((unsigned char)*q))
    q++, nd++;
  if (*q == '.')
    {
      q++;
      while (isdigit ((unsigned char)*q))
        q++, nd++;
    }
  if (nd == 0)
    return false;
  if (*q == 'e' || *q == 'E')
    {
      q++;
      if (*q == '+' || *q == '-')
        q++;
      if (!isdigit ((unsigned char)*q))
        return false;
      while (isdigit ((unsigned char)*q))
        q++;
    }
  if (*q != '\0')
    return false;
  *out = strtod (buf, NULL);
  return true;
}

char *
dw_python_float_repr (double v, char *buf, size_t size)
{
  if (isnan (v))
    {
      snprintf (buf, size, "nan");
      return buf;
    }
  if (isinf (v))
    {
      snprintf (buf, size, v > 0 ? "inf" : "-inf");
      return buf;
    }
  if (v == 0)
    {
      snprintf (buf, size, signbit (v) ? "-0.0" : "0.0");
      return buf;
    }
  char tmp[64];
  int prec;
  for (prec = 1; prec <= 17; prec++)
    {
      snprintf (tmp, sizeof tmp, "%.*e", prec - 1, v);
      if (strtod (tmp, NULL) == v)
        break;
    }
  /* tmp = [-]d[.ddd]e±XX */
  char digits[32];
  size_t nd = 0;
  const char *p = tmp;
  bool neg = false;
  if (*p == '-')
    neg = true, p++;
  for (; *p && *p != 'e'; p++)
    if (isdigit ((unsigned char)*p))
      digits[nd++] = *p;
  digits[nd] = '\0';
  while (nd > 1 && digits[nd - 1] == '0')
    digits[--nd] = '\0';
  int exp = atoi (p + 1);
  char out[64];
  size_t o = 0;
  if (neg)
    out[o++] = '-';
  if (exp < -4 || exp >= 16)
    {
      out[o++] = digits[0];
      if (nd > 1)
        {
          out[o++] = '.';
          for (size_t i = 1; i < nd; i++)
            out[o++] = digits[i];
        }
      snprintf (out + o, sizeof out - o, "e%c%02d", exp < 0 ? '-' : '+', abs (exp));
    }
  else if (exp < 0)
    {
      out[o++] = '0';
      out[o++] = '.';
      for (int i = -1; i > exp; i--)
        out[o++] = '0';
      for (size_t i = 0; i < nd; i++)
        out[o++] = digits[i];
      out[o] = '\0';
    }
  else
    {
      for (int i = 0; i <= exp; i++)
        out[o++] = (size_t)i < nd ? digits[i] : '0';
      out[o++] = '.';
      if ((size_t)exp + 1 < nd)
        for (size_t i = (size_t)exp + 1; i < nd; i++)
          out[o++] = digits[i];
      else
        out[o++] = '0';
      out[o] = '\0';
    }
  snprintf (buf, size, "%s", out);
  return buf;
}
