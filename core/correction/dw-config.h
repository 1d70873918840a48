/* dw-config.h — a rollout-correction configuration, as verl or slime would receive it
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc only. Values keep their Python type (None, bool, int, float, str, or "other" such as a
 * list), because verl's behaviour depends on it: `rollout_rs_threshold=2` is str()'d to "2",
 * `True` to "True", a list raises TypeError. Keys are verl's argument names
 * (rollout_is, rollout_is_threshold, rollout_is_batch_normalize, rollout_rs, rollout_rs_threshold,
 * rollout_rs_threshold_lower, rollout_token_veto_threshold, rollout_is_level, rollout_is_mode,
 * rollout_is_threshold_lower, rollout_is_veto_threshold, bypass_mode, loss_type, …) or slime's
 * mis.yaml names (use_tis, use_rs, tis_level, rs_level, tis_mode, tis_lower_bound,
 * tis_upper_bound, rs_lower_bound, rs_upper_bound, rs_veto_threshold, tis_batch_normalize).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dw-generation.h"

#ifdef __cplusplus
extern "C"
{
#endif

  typedef enum
  {
    DW_VALUE_NONE = 0, /* Python None (also: key absent → default applies, see dw_config_get) */
    DW_VALUE_BOOL,
    DW_VALUE_INT,
    DW_VALUE_FLOAT,
    DW_VALUE_STR,
    DW_VALUE_OTHER, /* list, dict…: kept only so the error verl raises can be reproduced */
  } DwValueKind;

#define DW_VALUE_STR_MAX 256

  typedef struct
  {
    DwValueKind kind;
    bool b;
    int64_t i;
    double f;
    char s[DW_VALUE_STR_MAX]; /* DW_VALUE_STR; for DW_VALUE_OTHER a short JSON rendering */
  } DwValue;

#define DW_CONFIG_MAX_KEYS 32
#define DW_CONFIG_KEY_MAX  48

  typedef struct
  {
    DwGeneration generation;
    size_t n_keys;
    char keys[DW_CONFIG_MAX_KEYS][DW_CONFIG_KEY_MAX];
    DwValue values[DW_CONFIG_MAX_KEYS];
  } DwConfig;

  void dw_config_init (DwConfig *config, DwGeneration gen);
  /* Sets (or replaces) @key. Returns false when the table is full or the key too long. */
  bool dw_config_set (DwConfig *config, const char *key, const DwValue *value);
  bool dw_config_unset (DwConfig *config, const char *key);
  /* The value of @key, or NULL when the key was not given (the generation's default applies). */
  const DwValue *dw_config_get (const DwConfig *config, const char *key);

  /* The value of @key, or @def when the key was not given. */
  DwValue dw_config_get_or (const DwConfig *config, const char *key, DwValue def);

  DwValue dw_value_none (void);
  DwValue dw_value_bool (bool b);
  DwValue dw_value_int (int64_t i);
  DwValue dw_value_float (double f);
  DwValue dw_value_str (const char *s);

  /* A bool, int or float as a double (False/True as 0/1); NAN for any other kind. */
  double dw_value_number (const DwValue *value);
  /* Python's bool() of the value: None and False, 0, 0.0 and "" are false (a list or dict by its
   * rendering, so always true). */
  bool dw_value_truthy (const DwValue *value);

  /* Python's str() of the value into @buf ("None", "True", "2", "2.0", "1e-05", "inf", the string
   * itself). Returns @buf. */
  char *dw_value_to_python_str (const DwValue *value, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
