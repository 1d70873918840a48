/* dw-test-util.c — helpers shared by the correction tests
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-test-util.h"

#include <math.h>
#include <string.h>

gboolean
dw_test_config_from_json (DwConfig *config, JsonObject *obj)
{
  g_autoptr (GList) members = json_object_get_members (obj);
  for (GList *l = members; l; l = l->next)
    {
      const char *k = l->data;
      JsonNode *n = json_object_get_member (obj, k);
      DwValue v = dw_value_none ();
      if (JSON_NODE_HOLDS_NULL (n))
        v = dw_value_none ();
      else if (JSON_NODE_HOLDS_VALUE (n))
        {
          GType t = json_node_get_value_type (n);
          if (t == G_TYPE_BOOLEAN)
            v = dw_value_bool (json_node_get_boolean (n));
          else if (t == G_TYPE_INT64)
            v = dw_value_int (json_node_get_int (n));
          else if (t == G_TYPE_DOUBLE)
            v = dw_value_float (json_node_get_double (n));
          else
            v = dw_value_str (json_node_get_string (n));
        }
      else
        {
          g_autofree char *s = json_to_string (n, FALSE);
          v.kind = DW_VALUE_OTHER;
          g_strlcpy (v.s, s, sizeof v.s);
        }
      if (!dw_config_set (config, k, &v))
        return FALSE;
    }
  return TRUE;
}

gboolean
dw_test_close (JsonNode *expected, double got, gboolean is_std)
{
  if (JSON_NODE_HOLDS_VALUE (expected) && json_node_get_value_type (expected) == G_TYPE_STRING)
    {
      const char *s = json_node_get_string (expected);
      if (g_str_equal (s, "nan"))
        return isnan (got);
      if (g_str_equal (s, "inf"))
        return got == INFINITY;
      if (g_str_equal (s, "-inf"))
        return got == -INFINITY;
      return FALSE;
    }
  double a = json_node_get_double (expected);
  if (!isfinite (got))
    return FALSE;
  if (is_std)
    return fabs (a * a - got * got) <= 1e-6 * 16 + 2e-5 * a * a;
  return fabs (a - got) <= 2e-6 + 2e-5 * fabs (a);
}
