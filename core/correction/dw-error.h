/* dw-error.h — the errors of the correction core: a Python exception type and its message
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc only. Every error the trainer would raise is returned as a DwCorrectionError carrying the
 * exception type and the trainer's exact message, never an abort.
 */
#pragma once

#include <stdbool.h>

#ifdef __cplusplus
extern "C"
{
#endif

  typedef enum
  {
    DW_ERROR_NONE = 0,
    DW_ERROR_VALUE,         /* Python ValueError */
    DW_ERROR_TYPE,          /* Python TypeError */
    DW_ERROR_ZERO_DIVISION, /* Python ZeroDivisionError */
  } DwErrorKind;

#define DW_ERROR_MESSAGE_MAX 512

  typedef struct
  {
    DwErrorKind kind;
    char message[DW_ERROR_MESSAGE_MAX]; /* verl's / Python's message, without the type name */
  } DwCorrectionError;

  /* "ValueError", "TypeError", "ZeroDivisionError"; NULL for DW_ERROR_NONE. */
  const char *dw_error_kind_name (DwErrorKind kind);
  void dw_error_clear (DwCorrectionError *error);
  /* Sets @error (when non-NULL) from a printf format; always returns false. */
  bool dw_error_set (DwCorrectionError *error, DwErrorKind kind, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

/* the name callers have always used */
#define dw_correction_error_clear dw_error_clear

#ifdef __cplusplus
}
#endif
