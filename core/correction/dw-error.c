/* dw-error.c — exception types and messages of the correction core (libc only)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-error.h"

#include <stdarg.h>
#include <stdio.h>

const char *
dw_error_kind_name (DwErrorKind kind)
{
  switch (kind)
    {
    case DW_ERROR_VALUE:
      return "ValueError";
    case DW_ERROR_TYPE:
      return "TypeError";
    case DW_ERROR_ZERO_DIVISION:
      return "ZeroDivisionError";
    case DW_ERROR_NONE:
    default:
      return NULL;
    }
}

void
dw_error_clear (DwCorrectionError *error)
{
  if (error)
    {
      error->kind = DW_ERROR_NONE;
      error->message[0] = '\0';
    }
}

bool
dw_error_set (DwCorrectionError *error, DwErrorKind kind, const char *format, ...)
{
  if (error)
    {
      va_list args;
      error->kind = kind;
      va_start (args, format);
      vsnprintf (error->message, sizeof error->message, format, args);
      va_end (args);
    }
  return false;
}
