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
dw_config_get_or (const DwConfig *config, const char *key, DwValue fallback)
{
  const DwValue *value = dw_config_get (config, key);
  return value ? *value : fallback;
}
