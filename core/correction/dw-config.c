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
  for (size_t index = 0; index < config->n_keys; index++)
    if (strcmp (config->keys[index], key) == 0)
      return (int)index;
  return -1;
}

bool
dw_config_set (DwConfig *config, const char *key, const DwValue *value)
{
  if (key == NULL || value == NULL || strlen (key) >= DW_CONFIG_KEY_MAX)
    return false;
  int index = dw_config_find_key (config, key);
  if (index < 0)
    {
      if (config->n_keys >= DW_CONFIG_MAX_KEYS)
        return false;
      index = (int)config->n_keys++;
      snprintf (config->keys[index], DW_CONFIG_KEY_MAX, "%s", key);
    }
  config->values[index] = *value;
  return true;
}

bool
dw_config_unset (DwConfig *config, const char *key)
{
  int index = dw_config_find_key (config, key);
  if (index < 0)
    return false;
  for (size_t next = (size_t)index; next + 1 < config->n_keys; next++)
    {
      memcpy (config->keys[next], config->keys[next + 1], DW_CONFIG_KEY_MAX);
      config->values[next] = config->values[next + 1];
    }
  config->n_keys--;
  return true;
}

const DwValue *
dw_config_get (const DwConfig *config, const char *key)
{
  int index = dw_config_find_key (config, key);
  return index < 0 ? NULL : &config->values[index];
}

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
dw_value_int (int64_t index)
{
  DwValue value = dw_value_none ();
  value.kind = DW_VALUE_INT;
  value.i = index;
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

DwValue
dw_config_get_or (const DwConfig *config, const char *key, DwValue fallback)
{
  const DwValue *value = dw_config_get (config, key);
  return value ? *value : fallback;
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
