/* dw-config.c — rollout-correction configuration values (libc only)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dw-python.h"

void
dw_config_init (DwConfig *config, DwGeneration gen)
{
  memset (config, 0, sizeof *config);
  config->generation = gen;
}

static int
dw_config_find_key (const DwConfig *config, const char *key)
{
  for (size_t i = 0; i < config->n_keys; i++)
    if (strcmp (config->keys[i], key) == 0)
      return (int)i;
  return -1;
}

bool
dw_config_set (DwConfig *config, const char *key, const DwValue *value)
{
  if (key == NULL || value == NULL || strlen (key) >= DW_CONFIG_KEY_MAX)
    return false;
  int i = dw_config_find_key (config, key);
  if (i < 0)
    {
      if (config->n_keys >= DW_CONFIG_MAX_KEYS)
        return false;
      i = (int)config->n_keys++;
      snprintf (config->keys[i], DW_CONFIG_KEY_MAX, "%s", key);
    }
  config->values[i] = *value;
  return true;
}

bool
dw_config_unset (DwConfig *config, const char *key)
{
  int i = dw_config_find_key (config, key);
  if (i < 0)
    return false;
  for (size_t j = (size_t)i; j + 1 < config->n_keys; j++)
    {
      memcpy (config->keys[j], config->keys[j + 1], DW_CONFIG_KEY_MAX);
      config->values[j] = config->values[j + 1];
    }
  config->n_keys--;
  return true;
}

const DwValue *
dw_config_get (const DwConfig *config, const char *key)
{
  int i = dw_config_find_key (config, key);
  return i < 0 ? NULL : &config->values[i];
}

DwValue
dw_value_none (void)
{
  DwValue v;
  memset (&v, 0, sizeof v);
  v.kind = DW_VALUE_NONE;
  return v;
}

DwValue
dw_value_bool (bool b)
{
  DwValue v = dw_value_none ();
  v.kind = DW_VALUE_BOOL;
  v.b = b;
  return v;
}

DwValue
dw_value_int (int64_t i)
{
  DwValue v = dw_value_none ();
  v.kind = DW_VALUE_INT;
  v.i = i;
  return v;
}

DwValue
dw_value_float (double f)
{
  DwValue v = dw_value_none ();
  v.kind = DW_VALUE_FLOAT;
  v.f = f;
  return v;
}

DwValue
dw_value_str (const char *s)
{
  DwValue v = dw_value_none ();
  v.kind = DW_VALUE_STR;
  snprintf (v.s, sizeof v.s, "%s", s ? s : "");
  return v;
}

DwValue
dw_config_get_or (const DwConfig *config, const char *key, DwValue def)
{
  const DwValue *v = dw_config_get (config, key);
  return v ? *v : def;
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
