/* dw-test-util.c — helpers shared by the correction tests
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-test-util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static DwDType
dtype_from_name (const char *n)
{
  static const struct
  {
    const char *n;
    DwDType d;
  } t[] = { { "float32", DW_DTYPE_F32 }, { "float64", DW_DTYPE_F64 }, { "bool", DW_DTYPE_BOOL },
            { "uint8", DW_DTYPE_U8 },    { "int8", DW_DTYPE_I8 },     { "int16", DW_DTYPE_I16 },
            { "int32", DW_DTYPE_I32 },   { "int64", DW_DTYPE_I64 } };
  for (gsize i = 0; i < G_N_ELEMENTS (t); i++)
    if (g_str_equal (n, t[i].n))
      return t[i].d;
  return DW_N_DTYPES;
}

DwBatch *
dw_test_load_npz (const char *path)
{
  g_autofree char *tmpdir = g_dir_make_tmp ("dw-golden-XXXXXX", NULL);
  g_autofree char *raw = g_build_filename (tmpdir, "batch.raw", NULL);
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "correction", "npz2raw.py", NULL);
  /* Debian python3 (python3-numpy in .ci/deps), not the first python3 in PATH */
  const char *py
    = g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE) ? "/usr/bin/python3" : "python3";
  char *argv[] = { (char *)py, script, (char *)path, raw, NULL };
  int status = 0;
  g_autoptr (GError) error = NULL;
  if (!g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, &status, &error)
      || !g_spawn_check_wait_status (status, &error))
    {
      g_printerr ("npz2raw %s: %s\n", path, error->message);
      return NULL;
    }
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents (raw, &data, &len, &error))
    return NULL;
  g_unlink (raw);
  g_rmdir (tmpdir);
  char *nl = memchr (data, '\n', len);
  g_assert_nonnull (nl);
  *nl = '\0';
  g_auto (GStrv) f = g_strsplit (data, " ", 4);
  g_assert_cmpuint (g_strv_length (f), ==, 4);
  size_t B = g_ascii_strtoull (f[0], NULL, 10), T = g_ascii_strtoull (f[1], NULL, 10);
  DwDType lp = dtype_from_name (f[2]), md = dtype_from_name (f[3]);
  g_assert_cmpint (lp, <, DW_N_DTYPES);
  g_assert_cmpint (md, <, DW_N_DTYPES);
  DwBatch *b = dw_batch_new (B, T, lp, md);
  g_assert_nonnull (b);
  const char *p = nl + 1;
  size_t lps = B * T * dw_dtype_size (lp), ms = B * T * dw_dtype_size (md);
  g_assert_cmpuint ((gsize)(p - data) + 2 * lps + ms, ==, len);
  memcpy (b->old_log_prob, p, lps);
  memcpy (b->rollout_log_prob, p + lps, lps);
  memcpy (b->response_mask, p + 2 * lps, ms);
  return b;
}

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
