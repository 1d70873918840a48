/* dw-rs.h — the option and threshold grammar of verl's rollout_rs (v0.7.1 and later)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Exact reproductions of verl's parsers, including Python's float() and str()
 * quirks and the exception types and messages (docs/CORRECTION.md §4.1, §4.2).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "dw-config.h"
#include "dw-error.h"

#ifdef __cplusplus
extern "C"
{
#endif

  typedef enum
  {
    DW_RS_TOKEN_K1 = 0,
    DW_RS_TOKEN_K2,
    DW_RS_TOKEN_K3,
    DW_RS_SEQ_SUM_K1,
    DW_RS_SEQ_SUM_K2,
    DW_RS_SEQ_SUM_K3,
    DW_RS_SEQ_MEAN_K1,
    DW_RS_SEQ_MEAN_K2,
    DW_RS_SEQ_MEAN_K3,
    DW_RS_SEQ_MAX_K2,
    DW_RS_SEQ_MAX_K3,
    DW_RS_N_OPTIONS
  } DwRsOption;

  typedef enum
  {
    DW_RS_AGG_TOKEN = 0,
    DW_RS_AGG_SUM,
    DW_RS_AGG_MEAN,
    DW_RS_AGG_MAX,
  } DwRsAgg;

  /* "token_k1", …; NULL for an invalid value. */
  const char *dw_rs_option_name (DwRsOption opt);
  /* 1, 2 or 3 */
  int dw_rs_option_k (DwRsOption opt);
  DwRsAgg dw_rs_option_agg (DwRsOption opt);

  typedef struct
  {
    DwRsOption option;
    bool has_lower;   /* k1 options only */
    double lower;     /* ratio-space lower bound (k1), as float() parsed it */
    double upper;     /* ratio-space upper (k1) or the statistic's upper bound (k2/k3) */
    double log_lower; /* math.log(lower) in double (k1); the comparison rounds it to float32 */
    double log_upper; /* math.log(upper) (k1); == upper for k2/k3 */
  } DwRsBound;

  typedef struct
  {
    size_t n; /* deduplicated options, first occurrence order */
    DwRsBound bounds[DW_RS_N_OPTIONS];
  } DwRsParsed;

  /* Parses rollout_rs (@options, a DwValue: must be a str) and rollout_rs_threshold (@threshold,
   * None → ValueError) exactly as verl v0.7.1 does, including Python's float() and str() quirks
   * and the error types/messages. */
  bool dw_rs_parse (const DwValue *options, const DwValue *threshold, DwRsParsed *out,
                    DwCorrectionError *error);
  /* As dw_rs_parse; @reject_inverted adds v0.9.0's "lower <= upper" check for k1 options. */
  bool dw_rs_parse_checked (const DwValue *options, const DwValue *threshold, bool reject_inverted,
                            DwRsParsed *out, DwCorrectionError *error);

#ifdef __cplusplus
}
#endif
