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
dw_python_is_space (int character)
{
  return character == ' ' || character == '\t' || character == '\n' || character == '\v'
         || character == '\f' || character == '\r';
}

bool
dw_python_float (const char *text, double *output)
{
  if (text == NULL)
    return false;
  size_t length = strlen (text);
  size_t start = 0, end = length;
  while (start < end && dw_python_is_space ((unsigned char)text[start]))
    start++;
  while (end > start && dw_python_is_space ((unsigned char)text[end - 1]))
    end--;
  if (start == end || end - start > 400)
    return false;
  char digits_only[512];
  size_t length_out = 0;
  for (size_t position = start; position < end; position++)
    {
      char character = text[position];
      if (character == '_')
        {
          /* PEP 515: only between two digits */
          if (position == start || position + 1 >= end
              || !isdigit ((unsigned char)text[position - 1])
              || !isdigit ((unsigned char)text[position + 1]))
            return false;
          continue;
        }
      digits_only[length_out++] = character;
    }
  digits_only[length_out] = '\0';
  const char *cursor = digits_only;
  bool negative = false;
  if (*cursor == '+' || *cursor == '-')
    negative = *cursor++ == '-';
  if (strcasecmp (cursor, "inf") == 0 || strcasecmp (cursor, "infinity") == 0)
    {
      *output = negative ? -INFINITY : INFINITY;
      return true;
    }
  if (strcasecmp (cursor, "nan") == 0)
    {
      *output = negative ? -NAN : NAN;
      return true;
    }
  /* digits [. digits] [e [sign] digits], at least one mantissa digit */
  const char *scan = cursor;
  size_t n_digits = 0;
  while (isdigit ((unsigned char)*scan))
    scan++, n_digits++;
  if (*scan == '.')
    {
      scan++;
      while (isdigit ((unsigned char)*scan))
        scan++, n_digits++;
    }
  if (n_digits == 0)
    return false;
  if (*scan == 'e' || *scan == 'E')
    {
      scan++;
      if (*scan == '+' || *scan == '-')
        scan++;
      if (!isdigit ((unsigned char)*scan))
        return false;
      while (isdigit ((unsigned char)*scan))
        scan++;
    }
  if (*scan != '\0')
    return false;
  *output = strtod (digits_only, NULL);
  return true;
}

char *
dw_python_float_repr (double value, char *buffer, size_t size)
{
  if (isnan (value))
    {
      snprintf (buffer, size, "nan");
      return buffer;
    }
  if (isinf (value))
    {
      snprintf (buffer, size, value > 0 ? "inf" : "-inf");
      return buffer;
    }
  if (value == 0)
    {
      snprintf (buffer, size, signbit (value) ? "-0.0" : "0.0");
      return buffer;
    }
  char scientific[64];
  int precision;
  for (precision = 1; precision <= 17; precision++)
    {
      snprintf (scientific, sizeof scientific, "%.*e", precision - 1, value);
      if (strtod (scientific, NULL) == value)
        break;
    }
  /* scientific = [-]d[.ddd]e±XX */
  char mantissa[32];
  size_t n_digits = 0;
  const char *cursor = scientific;
  bool negative = false;
  if (*cursor == '-')
    negative = true, cursor++;
  for (; *cursor && *cursor != 'e'; cursor++)
    if (isdigit ((unsigned char)*cursor))
      mantissa[n_digits++] = *cursor;
  mantissa[n_digits] = '\0';
  while (n_digits > 1 && mantissa[n_digits - 1] == '0')
    mantissa[--n_digits] = '\0';
  int exponent = atoi (cursor + 1);
  char output[64];
  size_t written = 0;
  if (negative)
    output[written++] = '-';
  if (exponent < -4 || exponent >= 16)
    {
      output[written++] = mantissa[0];
      if (n_digits > 1)
        {
          output[written++] = '.';
          for (size_t position = 1; position < n_digits; position++)
            output[written++] = mantissa[position];
        }
      snprintf (output + written, sizeof output - written, "e%c%02d", exponent < 0 ? '-' : '+',
                abs (exponent));
    }
  else if (exponent < 0)
    {
      output[written++] = '0';
      output[written++] = '.';
      for (int position = -1; position > exponent; position--)
        output[written++] = '0';
      for (size_t position = 0; position < n_digits; position++)
        output[written++] = mantissa[position];
      output[written] = '\0';
    }
  else
    {
      for (int position = 0; position <= exponent; position++)
        output[written++] = (size_t)position < n_digits ? mantissa[position] : '0';
      output[written++] = '.';
      if ((size_t)exponent + 1 < n_digits)
        for (size_t position = (size_t)exponent + 1; position < n_digits; position++)
          output[written++] = mantissa[position];
      else
        output[written++] = '0';
      output[written] = '\0';
    }
  snprintf (buffer, size, "%s", output);
  return buffer;
}
