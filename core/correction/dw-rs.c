/* dw-rs.c — verl's rollout_rs option list and rollout_rs_threshold grammar (§4.1, §4.2)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-rs.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dw-python.h"

static const char *const dw_rs_names[DW_RS_N_OPTIONS] = {
  "token_k1",    "token_k2",    "token_k3",    "seq_sum_k1", "seq_sum_k2", "seq_sum_k3",
  "seq_mean_k1", "seq_mean_k2", "seq_mean_k3", "seq_max_k2", "seq_max_k3",
};

const char *
dw_rs_option_name (DwRsOption option)
{
  if ((int)option < 0 || option >= DW_RS_N_OPTIONS)
    return NULL;
  return dw_rs_names[option];
}

int
dw_rs_option_k (DwRsOption option)
{
  static const int k_values[DW_RS_N_OPTIONS] = { 1, 2, 3, 1, 2, 3, 1, 2, 3, 2, 3 };
  return k_values[option];
}

DwRsAgg
dw_rs_option_agg (DwRsOption option)
{
  if (option <= DW_RS_TOKEN_K3)
    return DW_RS_AGG_TOKEN;
  if (option <= DW_RS_SEQ_SUM_K3)
    return DW_RS_AGG_SUM;
  if (option <= DW_RS_SEQ_MEAN_K3)
    return DW_RS_AGG_MEAN;
  return DW_RS_AGG_MAX;
}

static void
dw_rs_strip_copy (char *target, size_t capacity, const char *source, size_t length)
{
  while (length > 0 && dw_python_is_space ((unsigned char)*source))
    source++, length--;
  while (length > 0 && dw_python_is_space ((unsigned char)source[length - 1]))
    length--;
  if (length >= capacity)
    length = capacity - 1;
  memcpy (target, source, length);
  target[length] = '\0';
}

/* Python's str.split(",") + strip + drop empties. Returns the count, or -1 if too many. */
static int
dw_rs_split_commas (const char *text, char parts[][DW_VALUE_STR_MAX], int limit)
{
  int count = 0;
  const char *cursor = text;
  for (;;)
    {
      const char *comma = strchr (cursor, ',');
      size_t length = comma ? (size_t)(comma - cursor) : strlen (cursor);
      char stripped[DW_VALUE_STR_MAX];
      dw_rs_strip_copy (stripped, sizeof stripped, cursor, length);
      if (stripped[0] != '\0')
        {
          if (count >= limit)
            return -1;
          memcpy (parts[count++], stripped, sizeof stripped);
        }
      if (!comma)
        break;
      cursor = comma + 1;
    }
  return count;
}

static bool
dw_rs_parse_options (const DwValue *options, DwRsParsed *parsed, DwCorrectionError *error)
{
  char text_value[64];
  if (options == NULL || options->kind != DW_VALUE_STR)
    return dw_error_set (error, DW_ERROR_VALUE, "rollout_rs must be a string, got %s.",
                         options ? dw_value_to_python_str (options, text_value, sizeof text_value)
                                 : "None");
  char parts[64][DW_VALUE_STR_MAX];
  int count = dw_rs_split_commas (options->s, parts, 64);
  parsed->n = 0;
  for (int index = 0; index < (count < 0 ? 64 : count); index++)
    {
      int found = -1;
      for (int candidate = 0; candidate < DW_RS_N_OPTIONS; candidate++)
        if (strcmp (parts[index], dw_rs_names[candidate]) == 0)
          found = candidate;
      if (found < 0)
        return dw_error_set (error, DW_ERROR_VALUE,
                             "Invalid rollout_rs option: %s. Must be one of ['seq_max_k2', "
                             "'seq_max_k3', 'seq_mean_k1', 'seq_mean_k2', 'seq_mean_k3', "
                             "'seq_sum_k1', 'seq_sum_k2', 'seq_sum_k3', 'token_k1', 'token_k2', "
                             "'token_k3'].",
                             parts[index]);
      bool duplicate = false;
      for (size_t other = 0; other < parsed->n; other++)
        duplicate |= parsed->bounds[other].option == (DwRsOption)found;
      if (!duplicate)
        {
          memset (&parsed->bounds[parsed->n], 0, sizeof parsed->bounds[0]);
          parsed->bounds[parsed->n++].option = (DwRsOption)found;
        }
    }
  if (parsed->n == 0)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "rollout_rs must contain at least one valid option.");
  return true;
}

static bool
dw_rs_parse_thresholds (DwRsParsed *parsed, const DwValue *threshold, bool reject_inverted,
                        DwCorrectionError *error)
{
  char specs[DW_RS_N_OPTIONS + 1][DW_VALUE_STR_MAX];
  int count;
  if (threshold == NULL || threshold->kind == DW_VALUE_NONE)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "rollout_rs_threshold must be explicitly provided when rollout_rs is "
                         "enabled. Set rollout_rs_threshold to the desired threshold value.");
  if (threshold->kind == DW_VALUE_INT || threshold->kind == DW_VALUE_FLOAT
      || threshold->kind == DW_VALUE_BOOL)
    {
      dw_value_to_python_str (threshold, specs[0], sizeof specs[0]);
      count = 1;
    }
  else if (threshold->kind == DW_VALUE_STR)
    {
      count = dw_rs_split_commas (threshold->s, specs, DW_RS_N_OPTIONS + 1);
      if (count == 0)
        return dw_error_set (error, DW_ERROR_VALUE,
                             "rollout_rs_threshold must contain at least one threshold value.");
    }
  else
    return dw_error_set (error, DW_ERROR_TYPE,
                         "rollout_rs_threshold must be a string or numeric value specifying "
                         "per-option thresholds.");
  if (count != 1 && count != (int)parsed->n)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "rollout_rs_threshold expects either one threshold shared by all options "
                         "or exactly %zu thresholds to match the provided rollout_rs options.",
                         parsed->n);
  for (size_t index = 0; index < parsed->n; index++)
    {
      DwRsBound *bound = &parsed->bounds[index];
      const char *text = specs[count == 1 ? 0 : index];
      const char *option = dw_rs_names[bound->option];
      if (dw_rs_option_k (bound->option) == 1)
        {
          double lower, upper;
          const char *underscore = strchr (text, '_');
          if (underscore)
            {
              char lower_text[DW_VALUE_STR_MAX];
              memcpy (lower_text, text, (size_t)(underscore - text));
              lower_text[underscore - text] = '\0';
              if (!dw_python_float (lower_text, &lower)
                  || !dw_python_float (underscore + 1, &upper))
                return dw_error_set (error, DW_ERROR_VALUE,
                                     "Invalid numeric threshold '%s' for option '%s'.", text,
                                     option);
            }
          else
            {
              if (!dw_python_float (text, &upper))
                return dw_error_set (error, DW_ERROR_VALUE,
                                     "could not convert string to float: '%s'", text);
              if (upper == 0)
                return dw_error_set (error, DW_ERROR_ZERO_DIVISION, "float division by zero");
              lower = 1.0 / upper; /* float(str(1.0/up)) is exact: repr round-trips */
            }
          if (lower <= 0 || upper <= 0)
            return dw_error_set (error, DW_ERROR_VALUE,
                                 "Thresholds for option '%s' must be positive, got %s.", option,
                                 text);
          if (reject_inverted && lower > upper)
            return dw_error_set (error, DW_ERROR_VALUE,
                                 "Thresholds for option '%s' must be lower <= upper, got %s.",
                                 option, text);
          bound->has_lower = true;
          bound->lower = lower;
          bound->upper = upper;
          bound->log_lower = log (lower);
          bound->log_upper = log (upper);
        }
      else
        {
          double upper;
          if (strchr (text, '_'))
            return dw_error_set (error, DW_ERROR_VALUE,
                                 "rollout_rs_threshold for option '%s' must provide a single upper "
                                 "bound without '_'. Received '%s'.",
                                 option, text);
          if (!dw_python_float (text, &upper))
            return dw_error_set (error, DW_ERROR_VALUE,
                                 "Invalid numeric threshold '%s' for option '%s'.", text, option);
          if (upper <= 0)
            return dw_error_set (error, DW_ERROR_VALUE,
                                 "Threshold for option '%s' must be positive, got %s.", option,
                                 text);
          bound->has_lower = false;
          bound->lower = 0;
          bound->upper = upper;
          bound->log_lower = 0;
          bound->log_upper = upper;
        }
    }
  return true;
}

bool
dw_rs_parse (const DwValue *options, const DwValue *threshold, DwRsParsed *parsed,
             DwCorrectionError *error)
{
  memset (parsed, 0, sizeof *parsed);
  if (!dw_rs_parse_options (options, parsed, error))
    return false;
  return dw_rs_parse_thresholds (parsed, threshold, false, error);
}

bool
dw_rs_parse_checked (const DwValue *options, const DwValue *threshold, bool reject_inverted,
                     DwRsParsed *parsed, DwCorrectionError *error)
{
  memset (parsed, 0, sizeof *parsed);
  if (!dw_rs_parse_options (options, parsed, error))
    return false;
  return dw_rs_parse_thresholds (parsed, threshold, reject_inverted, error);
}
