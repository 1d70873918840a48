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
dw_rs_option_name (DwRsOption opt)
{
  if ((int)opt < 0 || opt >= DW_RS_N_OPTIONS)
    return NULL;
  return dw_rs_names[opt];
}

int
dw_rs_option_k (DwRsOption opt)
{
  static const int k[DW_RS_N_OPTIONS] = { 1, 2, 3, 1, 2, 3, 1, 2, 3, 2, 3 };
  return k[opt];
}

DwRsAgg
dw_rs_option_agg (DwRsOption opt)
{
  if (opt <= DW_RS_TOKEN_K3)
    return DW_RS_AGG_TOKEN;
  if (opt <= DW_RS_SEQ_SUM_K3)
    return DW_RS_AGG_SUM;
  if (opt <= DW_RS_SEQ_MEAN_K3)
    return DW_RS_AGG_MEAN;
  return DW_RS_AGG_MAX;
}

static void
dw_rs_strip_copy (char *dst, size_t size, const char *a, size_t len)
{
  while (len > 0 && dw_python_is_space ((unsigned char)*a))
    a++, len--;
  while (len > 0 && dw_python_is_space ((unsigned char)a[len - 1]))
    len--;
  if (len >= size)
    len = size - 1;
  memcpy (dst, a, len);
  dst[len] = '\0';
}

/* Python's str.split(",") + strip + drop empties. Returns the count, or -1 if too many. */
static int
dw_rs_split_commas (const char *s, char parts[][DW_VALUE_STR_MAX], int max)
{
  int n = 0;
  const char *p = s;
  for (;;)
    {
      const char *c = strchr (p, ',');
      size_t len = c ? (size_t)(c - p) : strlen (p);
      char tmp[DW_VALUE_STR_MAX];
      dw_rs_strip_copy (tmp, sizeof tmp, p, len);
      if (tmp[0] != '\0')
        {
          if (n >= max)
            return -1;
          memcpy (parts[n++], tmp, sizeof tmp);
        }
      if (!c)
        break;
      p = c + 1;
    }
  return n;
}

static bool
dw_rs_parse_options (const DwValue *options, DwRsParsed *out, DwCorrectionError *error)
{
  char buf[64];
  if (options == NULL || options->kind != DW_VALUE_STR)
    return dw_error_set (error, DW_ERROR_VALUE, "rollout_rs must be a string, got %s.",
                         options ? dw_value_to_python_str (options, buf, sizeof buf) : "None");
  char parts[64][DW_VALUE_STR_MAX];
  int n = dw_rs_split_commas (options->s, parts, 64);
  out->n = 0;
  for (int i = 0; i < (n < 0 ? 64 : n); i++)
    {
      int found = -1;
      for (int o = 0; o < DW_RS_N_OPTIONS; o++)
        if (strcmp (parts[i], dw_rs_names[o]) == 0)
          found = o;
      if (found < 0)
        return dw_error_set (error, DW_ERROR_VALUE,
                             "Invalid rollout_rs option: %s. Must be one of ['seq_max_k2', "
                             "'seq_max_k3', 'seq_mean_k1', 'seq_mean_k2', 'seq_mean_k3', "
                             "'seq_sum_k1', 'seq_sum_k2', 'seq_sum_k3', 'token_k1', 'token_k2', "
                             "'token_k3'].",
                             parts[i]);
      bool dup = false;
      for (size_t j = 0; j < out->n; j++)
        dup |= out->bounds[j].option == (DwRsOption)found;
      if (!dup)
        {
          memset (&out->bounds[out->n], 0, sizeof out->bounds[0]);
          out->bounds[out->n++].option = (DwRsOption)found;
        }
    }
  if (out->n == 0)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "rollout_rs must contain at least one valid option.");
  return true;
}

static bool
dw_rs_parse_thresholds (DwRsParsed *out, const DwValue *threshold, bool reject_inverted,
                        DwCorrectionError *error)
{
  char local[DW_RS_N_OPTIONS + 1][DW_VALUE_STR_MAX];
  int n;
  if (threshold == NULL || threshold->kind == DW_VALUE_NONE)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "rollout_rs_threshold must be explicitly provided when rollout_rs is "
                         "enabled. Set rollout_rs_threshold to the desired threshold value.");
  if (threshold->kind == DW_VALUE_INT || threshold->kind == DW_VALUE_FLOAT
      || threshold->kind == DW_VALUE_BOOL)
    {
      dw_value_to_python_str (threshold, local[0], sizeof local[0]);
      n = 1;
    }
  else if (threshold->kind == DW_VALUE_STR)
    {
      n = dw_rs_split_commas (threshold->s, local, DW_RS_N_OPTIONS + 1);
      if (n == 0)
        return dw_error_set (error, DW_ERROR_VALUE,
                             "rollout_rs_threshold must contain at least one threshold value.");
    }
  else
    return dw_error_set (error, DW_ERROR_TYPE,
                         "rollout_rs_threshold must be a string or numeric value specifying "
                         "per-option thresholds.");
  if (n != 1 && n != (int)out->n)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "rollout_rs_threshold expects either one threshold shared by all options "
                         "or exactly %zu thresholds to match the provided rollout_rs options.",
                         out->n);
  for (size_t i = 0; i < out->n; i++)
    {
      DwRsBound *bd = &out->bounds[i];
      const char *s = local[n == 1 ? 0 : i];
      const char *opt = dw_rs_names[bd->option];
      if (dw_rs_option_k (bd->option) == 1)
        {
          double lo, up;
          const char *us = strchr (s, '_');
          if (us)
            {
              char lo_s[DW_VALUE_STR_MAX];
              memcpy (lo_s, s, (size_t)(us - s));
              lo_s[us - s] = '\0';
              if (!dw_python_float (lo_s, &lo) || !dw_python_float (us + 1, &up))
                return dw_error_set (error, DW_ERROR_VALUE,
                                     "Invalid numeric threshold '%s' for option '%s'.", s, opt);
            }
          else
            {
              if (!dw_python_float (s, &up))
                return dw_error_set (error, DW_ERROR_VALUE,
                                     "could not convert string to float: '%s'", s);
              if (up == 0)
                return dw_error_set (error, DW_ERROR_ZERO_DIVISION, "float division by zero");
              lo = 1.0 / up; /* float(str(1.0/up)) is exact: repr round-trips */
            }
          if (lo <= 0 || up <= 0)
            return dw_error_set (error, DW_ERROR_VALUE,
                                 "Thresholds for option '%s' must be positive, got %s.", opt, s);
          if (reject_inverted && lo > up)
            return dw_error_set (error, DW_ERROR_VALUE,
                                 "Thresholds for option '%s' must be lower <= upper, got %s.", opt,
                                 s);
          bd->has_lower = true;
          bd->lower = lo;
          bd->upper = up;
          bd->log_lower = log (lo);
          bd->log_upper = log (up);
        }
      else
        {
          double up;
          if (strchr (s, '_'))
            return dw_error_set (error, DW_ERROR_VALUE,
                                 "rollout_rs_threshold for option '%s' must provide a single upper "
                                 "bound without '_'. Received '%s'.",
                                 opt, s);
          if (!dw_python_float (s, &up))
            return dw_error_set (error, DW_ERROR_VALUE,
                                 "Invalid numeric threshold '%s' for option '%s'.", s, opt);
          if (up <= 0)
            return dw_error_set (error, DW_ERROR_VALUE,
                                 "Threshold for option '%s' must be positive, got %s.", opt, s);
          bd->has_lower = false;
          bd->lower = 0;
          bd->upper = up;
          bd->log_lower = 0;
          bd->log_upper = up;
        }
    }
  return true;
}

bool
dw_rs_parse (const DwValue *options, const DwValue *threshold, DwRsParsed *out,
             DwCorrectionError *error)
{
  memset (out, 0, sizeof *out);
  if (!dw_rs_parse_options (options, out, error))
    return false;
  return dw_rs_parse_thresholds (out, threshold, false, error);
}

bool
dw_rs_parse_checked (const DwValue *options, const DwValue *threshold, bool reject_inverted,
                     DwRsParsed *out, DwCorrectionError *error)
{
  memset (out, 0, sizeof *out);
  if (!dw_rs_parse_options (options, out, error))
    return false;
  return dw_rs_parse_thresholds (out, threshold, reject_inverted, error);
}
