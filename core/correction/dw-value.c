/* dw-value.c — a configuration value with its Python type, and Python's bool() and str() of it
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only; declared in dw-config.h.
 */
#include "dw-config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dw-python.h"

DwValue
dw_value_none (void)
{
  DwValue value;
  memset (&value, 0, sizeof value);
  value.kind = DW_VALUE_NONE;
  return value;
}

DwValue
dw_value_bool (bool flag)
{
  DwValue value = dw_value_none ();
  value.kind = DW_VALUE_BOOL;
  value.b = flag;
  return value;
}

DwValue
dw_value_int (int64_t integer)
{
  DwValue value = dw_value_none ();
  value.kind = DW_VALUE_INT;
  value.i = integer;
  return value;
}

DwValue
dw_value_float (double number)
{
  DwValue value = dw_value_none ();
  value.kind = DW_VALUE_FLOAT;
  value.f = number;
  return value;
}

DwValue
dw_value_str (const char *text)
{
  DwValue value = dw_value_none ();
  value.kind = DW_VALUE_STR;
  snprintf (value.s, sizeof value.s, "%s", text ? text : "");
  return value;
}

double
dw_value_number (const DwValue *value)
{
  switch (value->kind)
    {
    case DW_VALUE_BOOL:
      return value->b ? 1.0 : 0.0;
    case DW_VALUE_INT:
      return (double)value->i;
    case DW_VALUE_FLOAT:
      return value->f;
    default:
      return NAN;
    }
}

bool
dw_value_truthy (const DwValue *value)
{
  switch (value->kind)
    {
    case DW_VALUE_BOOL:
      return value->b;
    case DW_VALUE_INT:
      return value->i != 0;
    case DW_VALUE_FLOAT:
      return value->f != 0;
    case DW_VALUE_STR:
    case DW_VALUE_OTHER:
      return value->s[0] != '\0';
    default:
      return false;
    }
}

char *
dw_value_to_python_str (const DwValue *value, char *buf, size_t size)
{
  if (size == 0)
    return buf;
  switch (value->kind)
    {
    case DW_VALUE_NONE:
      snprintf (buf, size, "None");
      break;
    case DW_VALUE_BOOL:
      snprintf (buf, size, "%s", value->b ? "True" : "False");
      break;
    case DW_VALUE_INT:
      snprintf (buf, size, "%lld", (long long)value->i);
      break;
    case DW_VALUE_FLOAT:
      dw_python_float_repr (value->f, buf, size);
      break;
    case DW_VALUE_STR:
    case DW_VALUE_OTHER:
    default:
      snprintf (buf, size, "%s", value->s);
      break;
    }
  return buf;
}
