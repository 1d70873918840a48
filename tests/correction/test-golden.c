/* test-golden.c — every golden case of ../shared/golden against the correction core
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One GTest case per golden group; a case the core cannot express is a failure, not a skip.
 * Batches are read by core/batch, as driftwatch-cli reads them.
 */
#include <math.h>
#include <string.h>

#include "dw-batch-reader.h"
#include "dw-correction.h"
#include "dw-test-util.h"

static char *golden_dir;
static GHashTable *batches; /* name → DwBatch* */
static JsonArray *index_cases;
static JsonParser *index_parser;

static const DwBatch *
get_batch (const char *name)
{
  DwBatch *b = g_hash_table_lookup (batches, name);
  if (!b)
    {
      g_autofree char *fn = g_strdup_printf ("%s.npz", name);
      g_autofree char *path = g_build_filename (golden_dir, "batches", fn, NULL);
      g_autoptr (GError) error = NULL;
      b = dw_batch_read_file (path, &error);
      g_assert_no_error (error);
      g_hash_table_insert (batches, g_strdup (name), b);
    }
  return b;
}

static double
arr_get (const void *a, DwDType dt, size_t i)
{
  switch (dt)
    {
    case DW_DTYPE_F32:
      return ((const float *)a)[i];
    case DW_DTYPE_F64:
      return ((const double *)a)[i];
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      return ((const uint8_t *)a)[i];
    case DW_DTYPE_I32:
      return ((const int32_t *)a)[i];
    case DW_DTYPE_I64:
      return (double)((const int64_t *)a)[i];
    default:
      g_assert_not_reached ();
    }
}

static double
node_num (JsonNode *n)
{
  if (json_node_get_value_type (n) == G_TYPE_STRING)
    {
      const char *s = json_node_get_string (n);
      return g_str_equal (s, "nan") ? NAN : g_str_equal (s, "-inf") ? -INFINITY : INFINITY;
    }
  if (json_node_get_value_type (n) == G_TYPE_BOOLEAN)
    return json_node_get_boolean (n);
  return json_node_get_double (n);
}

static gboolean
num_close (double a, double b, double rtol, double atol)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  if (isinf (a) || isinf (b))
    return a == b;
  return fabs (a - b) <= atol + rtol * fabs (a);
}

/* checks one returned array against "arrays" (exact for masks) or "array_stats" */
static void
check_array (GString *pr, JsonObject *res, const char *name, const void *arr, DwDType dt, size_t B,
             size_t T, gboolean exact)
{
  JsonObject *st
    = json_object_get_object_member (json_object_get_object_member (res, "array_stats"), name);
  const char *edt = json_object_get_string_member (st, "dtype");
  if (!g_str_equal (edt, dw_dtype_name (dt)))
    g_string_append_printf (pr, " %s dtype %s != %s;", name, dw_dtype_name (dt), edt);
  if (json_object_has_member (res, "arrays")
      && json_object_has_member (json_object_get_object_member (res, "arrays"), name))
    {
      JsonArray *rows
        = json_object_get_array_member (json_object_get_object_member (res, "arrays"), name);
      if (json_array_get_length (rows) != B)
        {
          g_string_append_printf (pr, " %s rows;", name);
          return;
        }
      for (size_t b = 0; b < B; b++)
        {
          JsonArray *r = json_array_get_array_element (rows, b);
          for (size_t t = 0; t < T && t < json_array_get_length (r); t++)
            {
              double e = node_num (json_array_get_element (r, t));
              double g = arr_get (arr, dt, b * T + t);
              gboolean ok
                = exact ? (e == g || (isnan (e) && isnan (g))) : num_close (e, g, 2e-5, 1e-7);
              if (!ok)
                {
                  g_string_append_printf (pr, " %s[%zu,%zu] %.9g != %.9g;", name, b, t, g, e);
                  return;
                }
            }
        }
      return;
    }
  double sum = 0, mn = INFINITY, mx = -INFINITY;
  gint64 nz = 0, nnan = 0, ninf = 0;
  JsonArray *rs = json_object_get_array_member (st, "row_sum");
  for (size_t b = 0; b < B; b++)
    {
      double rsum = 0;
      for (size_t t = 0; t < T; t++)
        {
          double v = arr_get (arr, dt, b * T + t);
          nz += v != 0;
          nnan += isnan (v);
          ninf += isinf (v);
          if (isfinite (v))
            {
              rsum += v;
              mn = fmin (mn, v);
              mx = fmax (mx, v);
            }
        }
      sum += rsum;
      if (b < json_array_get_length (rs)
          && !num_close (node_num (json_array_get_element (rs, b)), rsum, exact ? 0 : 1e-4,
                         exact ? 0 : 1e-5))
        g_string_append_printf (pr, " %s row_sum[%zu] %.9g;", name, b, rsum);
    }
  if (!num_close (node_num (json_object_get_member (st, "sum")), sum, exact ? 0 : 1e-4,
                  exact ? 0 : 1e-5))
    g_string_append_printf (pr, " %s sum %.9g != %.9g;", name, sum,
                            node_num (json_object_get_member (st, "sum")));
  if (json_object_get_int_member (st, "nonzero") != nz && exact)
    g_string_append_printf (pr, " %s nonzero %" G_GINT64_FORMAT ";", name, nz);
  if (json_object_get_int_member (st, "nan") != nnan)
    g_string_append_printf (pr, " %s nan %" G_GINT64_FORMAT ";", name, nnan);
  if (json_object_get_int_member (st, "inf") != ninf)
    g_string_append_printf (pr, " %s inf %" G_GINT64_FORMAT ";", name, ninf);
}

/* which generation (by name, as a user writes it) reproduces each golden group */
typedef struct
{
  const char *group;
  const char *generation;
  DwEntry entry;
  gboolean builtin; /* slime's built-in paths: "function" names the path, two metric sets */
} GoldenGroup;

static const GoldenGroup golden_groups[] = {
  { "verl_v0.6.0", "verl-0.6.0", DW_ENTRY_MASK },
  { "verl_v0.6.1", "verl-0.6.1", DW_ENTRY_MASK },
  { "verl_v0.7.0", "verl-0.7.0", DW_ENTRY_MASK },
  { "verl_HEAD", "verl-0.7.1", DW_ENTRY_MASK },
  { "verl_HEAD_offpolicy", "verl-0.7.1", DW_ENTRY_OFFPOLICY },
  { "verl_v0.8.0", "verl-0.8.0", DW_ENTRY_MASK },
  { "verl_v0.9.0", "verl-0.9.0", DW_ENTRY_MASK },
  { "verl_v0.9.0_offpolicy", "verl-0.9.0", DW_ENTRY_OFFPOLICY },
  /* commits between releases, under their old names */
  { "verl_2f2996b7d", "verl-0.7", DW_ENTRY_MASK },
  { "verl_2c6c65cb0", "2c6c65cb0", DW_ENTRY_MASK },
  { "verl_4424616d7", "verl-0.6", DW_ENTRY_MASK },
  { "slime_HEAD", "slime", DW_ENTRY_MASK },
  { "slime_HEAD_builtin", "slime", DW_ENTRY_MASK, TRUE },
};

static const GoldenGroup *
group_find (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (golden_groups); i++)
    if (g_str_equal (golden_groups[i].group, name))
      return &golden_groups[i];
  g_assert_not_reached ();
}

/* every golden metric present and close, no extra key */
static void
compare_metrics (GString *pr, JsonObject *gm, const DwCorrectionResult *r)
{
  g_autoptr (GList) keys = json_object_get_members (gm);
  for (GList *l = keys; l; l = l->next)
    {
      const double *v = dw_correction_result_get (r, l->data);
      if (!v)
        g_string_append_printf (pr, " missing %s;", (char *)l->data);
      else if (!dw_test_close (json_object_get_member (gm, l->data), *v,
                               g_str_has_suffix (l->data, "_std")))
        g_string_append_printf (pr, " %s %.9g != %.9g;", (char *)l->data, *v,
                                node_num (json_object_get_member (gm, l->data)));
    }
  for (size_t i = 0; i < r->n_metrics; i++)
    if (!json_object_has_member (gm, r->metrics[i].key))
      g_string_append_printf (pr, " extra %s;", r->metrics[i].key);
}

static void
run_case (JsonObject *ic, const char *grp, GString *pr)
{
  const GoldenGroup *group = group_find (grp);
  const gboolean offp = group->entry == DW_ENTRY_OFFPOLICY;
  DwGeneration gen;
  g_assert_true (dw_generation_from_name (group->generation, &gen));
  const char *file = json_object_get_string_member (ic, "file");
  g_autofree char *path = g_build_filename (golden_dir, file, NULL);
  g_autoptr (JsonParser) jp = json_parser_new ();
  g_autoptr (GError) err = NULL;
  if (!json_parser_load_from_file (jp, path, &err))
    {
      g_string_append_printf (pr, " cannot read: %s", err->message);
      return;
    }
  JsonObject *res = json_node_get_object (json_parser_get_root (jp));
  const DwBatch *b = get_batch (json_object_get_string_member (ic, "batch"));
  DwConfig config;
  dw_config_init (&config, gen);
  JsonObject *co = json_object_get_object_member (res, "config");
  DwCorrectionError e;
  dw_correction_error_clear (&e);
  if (json_object_has_member (co, "preset"))
    {
      if (!dw_preset_apply (&config, json_object_get_string_member (co, "preset"), &e))
        {
          g_string_append_printf (pr, " preset: %s", e.message);
          return;
        }
    }
  else if (group->builtin)
    {
      /* the golden harness passes the function and slime's --tis-clip / --tis-clip-low */
      const char *function = json_object_get_string_member (co, "function");
      DwValue use_tis = dw_value_bool (TRUE);
      DwValue chosen
        = dw_value_str (g_str_equal (function, "icepop_function") ? "icepop" : "vanilla");
      DwValue clip = dw_value_float (json_object_get_double_member (co, "tis_clip"));
      DwValue clip_low = dw_value_float (json_object_get_double_member (co, "tis_clip_low"));
      dw_config_set (&config, "use_tis", &use_tis);
      dw_config_set (&config, "tis_function", &chosen);
      dw_config_set (&config, "tis_clip", &clip);
      dw_config_set (&config, "tis_clip_low", &clip_low);
    }
  else if (!dw_test_config_from_json (&config, co))
    {
      g_string_append (pr, " config not expressible");
      return;
    }
  DwCorrectionResult r;
  gboolean ok
    = dw_correction_run_entry (b, &config, offp ? DW_ENTRY_OFFPOLICY : DW_ENTRY_MASK, &r, &e);
  JsonNode *en = json_object_get_member (res, "error");
  if (en && !JSON_NODE_HOLDS_NULL (en))
    {
      JsonObject *eo = json_node_get_object (en);
      const char *et = json_object_get_string_member (eo, "type");
      const char *em = json_object_get_string_member (eo, "message");
      if (ok)
        g_string_append_printf (pr, " expected %s, got success", et);
      else if (g_strcmp0 (dw_error_kind_name (e.kind), et) != 0 || !g_str_equal (e.message, em))
        g_string_append_printf (pr, " error %s '%s' != %s '%s'", dw_error_kind_name (e.kind),
                                e.message, et, em);
      if (ok)
        dw_correction_result_clear (&r);
      return;
    }
  if (!ok)
    {
      g_string_append_printf (pr, " unexpected %s: %s", dw_error_kind_name (e.kind), e.message);
      return;
    }
  compare_metrics (pr, json_object_get_object_member (res, "metrics"), &r);
  if (group->builtin)
    {
      /* --calculate-per-token-loss: the same keys reduced over tokens */
      DwCorrectionResult per_token;
      DwValue yes = dw_value_bool (TRUE);
      dw_config_set (&config, "calculate_per_token_loss", &yes);
      if (!dw_correction_run (b, &config, &per_token, &e))
        g_string_append_printf (pr, " per token: %s", e.message);
      else
        {
          compare_metrics (pr, json_object_get_object_member (res, "metrics_per_token"),
                           &per_token);
          dw_correction_result_clear (&per_token);
        }
    }
  if (!offp && json_object_has_member (res, "array_stats"))
    {
      JsonObject *st = json_object_get_object_member (res, "array_stats");
      gboolean ew = json_object_has_member (st, "rollout_is_weights");
      if (ew != (r.weights != NULL))
        g_string_append_printf (pr, " weights presence %d != %d;", r.weights != NULL, ew);
      else if (ew)
        check_array (pr, res, "rollout_is_weights", r.weights, r.weights_dtype, r.rows, r.cols,
                     FALSE);
      if (json_object_has_member (st, "modified_response_mask"))
        check_array (pr, res, "modified_response_mask", r.mask, r.mask_dtype, r.rows, r.cols, TRUE);
    }
  dw_correction_result_clear (&r);
}

static void
test_group (gconstpointer data)
{
  const char *grp = data;
  guint n_ok = 0, n_bad = 0;
  for (guint i = 0; i < json_array_get_length (index_cases); i++)
    {
      JsonObject *ic = json_array_get_object_element (index_cases, i);
      const char *file = json_object_get_string_member (ic, "file");
      g_autofree char *g = g_strndup (file, strchr (file, '/') - file);
      if (!g_str_equal (g, grp))
        continue;
      g_autoptr (GString) pr = g_string_new (NULL);
      run_case (ic, grp, pr);
      if (pr->len)
        {
          n_bad++;
          if (n_bad <= 30)
            g_printerr ("MISMATCH %s:%s\n", file, pr->str);
        }
      else
        n_ok++;
    }
  g_printerr ("GOLDEN %s: %u pass, %u fail\n", grp, n_ok, n_bad);
  if (n_ok == 0 || n_bad > 0)
    g_test_fail ();
}

/* presets/<rev>.json: every preset's field values */
static void
test_presets (gconstpointer data)
{
  const char *spec = data; /* "rev:gen" */
  g_auto (GStrv) parts = g_strsplit (spec, ":", 2);
  DwGeneration gen;
  g_assert_true (dw_generation_from_name (parts[1], &gen));
  g_autofree char *fn = g_strdup_printf ("%s.json", parts[0]);
  g_autofree char *path = g_build_filename (golden_dir, "presets", fn, NULL);
  g_autoptr (JsonParser) jp = json_parser_new ();
  g_assert_true (json_parser_load_from_file (jp, path, NULL));
  JsonObject *pres
    = json_object_get_object_member (json_node_get_object (json_parser_get_root (jp)), "presets");
  g_autoptr (GList) names = json_object_get_members (pres);
  size_t n_ours = 0, n_checked = 0;
  dw_preset_list (gen, &n_ours);
  for (GList *l = names; l; l = l->next)
    {
      if (g_str_equal (l->data, "__defaults__"))
        continue;
      n_checked++;
      DwConfig c, want;
      DwCorrectionError e;
      g_assert_true (dw_preset_config (gen, l->data, &c, &e));
      g_assert_nonnull (dw_preset_lookup (gen, l->data));
      dw_config_init (&want, gen);
      JsonObject *f
        = json_object_get_object_member (json_object_get_object_member (pres, l->data), "fields");
      g_assert_true (dw_test_config_from_json (&want, f));
      g_assert_cmpuint (c.n_keys, ==, want.n_keys);
      for (size_t k = 0; k < want.n_keys; k++)
        {
          const DwValue *a = dw_config_get (&c, want.keys[k]), *b = &want.values[k];
          char sa[300], sb[300];
          g_assert_nonnull (a);
          g_assert_cmpint (a->kind, ==, b->kind);
          g_assert_cmpstr (dw_value_to_python_str (a, sa, sizeof sa), ==,
                           dw_value_to_python_str (b, sb, sizeof sb));
        }
    }
  g_assert_cmpuint (n_checked, ==, n_ours);
  g_printerr ("GOLDEN presets/%s: %zu presets match\n", parts[0], n_checked);
}

/* the expected error of a grammar case, or NULL */
static JsonObject *
case_error (JsonObject *c)
{
  JsonNode *en = json_object_get_member (c, "error");
  return en && !JSON_NODE_HOLDS_NULL (en) ? json_node_get_object (en) : NULL;
}

static void
assert_same_error (JsonObject *expected, gboolean ok, const DwCorrectionError *e)
{
  g_assert_false (ok);
  g_assert_cmpstr (dw_error_kind_name (e->kind), ==,
                   json_object_get_string_member (expected, "type"));
  g_assert_cmpstr (e->message, ==, json_object_get_string_member (expected, "message"));
}

/* the "threshold" member of a case as a DwValue with its Python type */
static DwValue
case_threshold (JsonObject *c)
{
  DwConfig tmp;
  dw_config_init (&tmp, DW_GEN_VERL_0_9_0);
  JsonObject *wrap = json_object_new ();
  json_object_set_member (wrap, "t", json_node_copy (json_object_get_member (c, "threshold")));
  g_assert_true (dw_test_config_from_json (&tmp, wrap));
  json_object_unref (wrap);
  return *dw_config_get (&tmp, "t");
}

/* rollout_rs + rollout_rs_threshold → parsed bounds or the error (@reject_inverted: v0.9.0) */
static void
check_rs_case (JsonObject *c, gboolean reject_inverted)
{
  JsonArray *opts = json_object_get_array_member (c, "options");
  g_autoptr (GString) os = g_string_new (NULL);
  for (guint j = 0; j < json_array_get_length (opts); j++)
    g_string_append_printf (os, "%s%s", j ? "," : "", json_array_get_string_element (opts, j));
  DwValue ov = dw_value_str (os->str), threshold = case_threshold (c);
  DwRsParsed p;
  DwCorrectionError e;
  gboolean ok = dw_rs_parse_checked (&ov, &threshold, reject_inverted, &p, &e);
  JsonObject *expected_error = case_error (c);
  if (expected_error)
    {
      assert_same_error (expected_error, ok, &e);
      return;
    }
  if (!ok)
    g_error ("%s: unexpected error %s", os->str, e.message);
  JsonObject *parsed = json_object_get_object_member (c, "parsed");
  g_assert_cmpuint (p.n, ==, json_object_get_size (parsed));
  for (size_t k = 0; k < p.n; k++)
    {
      JsonObject *bo
        = json_object_get_object_member (parsed, dw_rs_option_name (p.bounds[k].option));
      g_assert_nonnull (bo);
      JsonNode *lo = json_object_get_member (bo, "lower");
      g_assert_true (
        num_close (node_num (json_object_get_member (bo, "upper")), p.bounds[k].upper, 0, 0));
      if (JSON_NODE_HOLDS_NULL (lo))
        g_assert_false (p.bounds[k].has_lower);
      else
        g_assert_true (num_close (node_num (lo), p.bounds[k].lower, 0, 0));
    }
}

/* v0.8.0+ rollout_is_threshold → (upper, lower | None) or the error */
static void
check_is_case (JsonObject *c)
{
  DwValue threshold = case_threshold (c);
  double upper, lower;
  bool has_lower;
  DwCorrectionError e;
  gboolean ok = dw_plan_parse_is_threshold (&threshold, &upper, &lower, &has_lower, &e);
  JsonObject *expected_error = case_error (c);
  if (expected_error)
    {
      assert_same_error (expected_error, ok, &e);
      return;
    }
  g_assert_true (ok);
  JsonObject *parsed = json_object_get_object_member (c, "parsed");
  g_assert_true (num_close (node_num (json_object_get_member (parsed, "upper")), upper, 0, 0));
  JsonNode *lo = json_object_get_member (parsed, "lower");
  g_assert_cmpint (has_lower, ==, !JSON_NODE_HOLDS_NULL (lo));
  if (has_lower)
    g_assert_true (num_close (node_num (lo), lower, 0, 0));
}

/* thresholds_HEAD.json (v0.7.1's RS grammar) and thresholds_v0.9.0.json (both grammars) */
static void
test_thresholds (gconstpointer data)
{
  const char *file = data;
  const gboolean v0_9 = strstr (file, "v0.9.0") != NULL;
  g_autofree char *path = g_build_filename (golden_dir, file, NULL);
  g_autoptr (JsonParser) jp = json_parser_new ();
  g_assert_true (json_parser_load_from_file (jp, path, NULL));
  JsonArray *cases
    = json_object_get_array_member (json_node_get_object (json_parser_get_root (jp)), "cases");
  guint n_rs = 0, n_is = 0;
  for (guint i = 0; i < json_array_get_length (cases); i++)
    {
      JsonObject *c = json_array_get_object_element (cases, i);
      const char *kind = json_object_has_member (c, "kind")
                           ? json_object_get_string_member (c, "kind")
                           : "rollout_rs_threshold";
      if (g_str_equal (kind, "rollout_is_threshold"))
        check_is_case (c), n_is++;
      else
        check_rs_case (c, v0_9), n_rs++;
    }
  g_printerr ("GOLDEN %s: %u rollout_rs_threshold + %u rollout_is_threshold cases pass\n", file,
              n_rs, n_is);
  g_assert_cmpuint (n_rs + n_is, ==, json_array_get_length (cases));
  g_assert_cmpuint (n_rs, >, 30);
  if (v0_9)
    g_assert_cmpuint (n_is, >, 10);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  const char *shared = g_getenv ("DW_SHARED_DIR");
  golden_dir = g_build_filename (shared ? shared : "../shared", "golden", NULL);
  batches = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)dw_batch_free);
  g_autofree char *ip = g_build_filename (golden_dir, "index.json", NULL);
  index_parser = json_parser_new ();
  if (!json_parser_load_from_file (index_parser, ip, NULL))
    g_error ("cannot read %s", ip);
  index_cases = json_object_get_array_member (
    json_node_get_object (json_parser_get_root (index_parser)), "cases");
  for (gsize i = 0; i < G_N_ELEMENTS (golden_groups); i++)
    {
      g_autofree char *tp = g_strdup_printf ("/golden/%s", golden_groups[i].group);
      g_test_add_data_func (tp, golden_groups[i].group, test_group);
    }
  /* presets/<rev>.json against the generation that names it */
  static const char *const preset_files[]
    = { "v0.6.1:verl-0.6.1",    "v0.7.0:verl-0.7.0",    "v0.8.0:verl-0.8.0",
        "v0.9.0:verl-0.9.0",    "97eac9048:verl-0.7.1", "b178a3cd5:verl-0.7.1",
        "518bada21:verl-0.7.0", "504696245:verl-0.6.1", "2c6c65cb0:verl-0.6.1",
        "2f2996b7d:verl-0.7" };
  for (gsize i = 0; i < G_N_ELEMENTS (preset_files); i++)
    {
      g_autofree char *rev = g_strndup (preset_files[i], strcspn (preset_files[i], ":"));
      g_autofree char *tp = g_strdup_printf ("/golden/presets/%s", rev);
      g_test_add_data_func (tp, preset_files[i], test_presets);
    }
  g_test_add_data_func ("/golden/thresholds_HEAD", "thresholds_HEAD.json", test_thresholds);
  g_test_add_data_func ("/golden/thresholds_v0.9.0", "thresholds_v0.9.0.json", test_thresholds);
  int rc = g_test_run ();
  g_hash_table_destroy (batches);
  g_object_unref (index_parser);
  g_free (golden_dir);
  return rc;
}
