/* test-whatif.c — the what-if engine gives what dw_correction_run gives, for every preset of every
 * generation and grids of thresholds, on the golden batches and on random batches
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Comparison: the same keys, and every value within 1 float32 ulp of the reference (NaN = NaN,
 * ±inf = ±inf); the number of bit-identical doubles is counted and printed. Metrics the engine
 * flags approximate are compared by the exact pass (dw_whatif_engine_evaluate_exact), which must
 * then be bit-identical.
 */
#include <math.h>
#include <string.h>
#include <sys/resource.h>

#include <glib/gstdio.h>

#include "dw-batch-reader.h"
#include "dw-correction.h"
#include "dw-store-writer.h"
#include "dw-whatif-engine.h"
#include "dw-whatif-summary.h"

typedef struct
{
  guint64 configs, metrics, identical, within_ulp, approximate, errors_same, pending, f64_std;
} Stats;

static Stats stats;

static gint64
f32_ulps (double a, double b)
{
  float fa = (float)a, fb = (float)b;
  gint32 ia, ib;
  memcpy (&ia, &fa, 4);
  memcpy (&ib, &fb, 4);
  if (ia < 0)
    ia = (gint32)0x80000000 - ia;
  if (ib < 0)
    ib = (gint32)0x80000000 - ib;
  gint64 d = (gint64)ia - (gint64)ib;
  return d < 0 ? -d : d;
}

static gboolean
same_value (double a, double b)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  if (isinf (a) || isinf (b))
    return a == b;
  return f32_ulps (a, b) <= 1;
}

static char *
describe (const DwConfig *c)
{
  GString *s = g_string_new (dw_generation_name (c->generation));
  for (size_t i = 0; i < c->n_keys; i++)
    {
      char buf[DW_VALUE_STR_MAX];
      g_string_append_printf (s, " %s=%s", c->keys[i],
                              dw_value_to_python_str (&c->values[i], buf, sizeof buf));
    }
  return g_string_free (s, FALSE);
}

/* compares the engine with the reference on one batch/config */
/* float64 batches: `_std` = sqrt(E[x²] − E[x]²) is dominated by the summation order's rounding
 * when the spread is small (docs/CORRECTION.md §9.1); compared as variances, absolute 1e-12 */
static gboolean
std_close_f64 (const char *key, double a, double b)
{
  if (!g_str_has_suffix (key, "_std") || g_str_has_suffix (key, "seq_std"))
    return FALSE;
  return fabs (a * a - b * b) <= 1e-12;
}

static void
check_one (const char *name, const DwBatch *batch, const DwWhatifStep *step, const DwConfig *config)
{
  DwCorrectionResult ref;
  DwCorrectionError err;
  gboolean ok = dw_correction_run (batch, config, &ref, &err);
  DwWhatifStepResult got;
  gboolean gok = dw_whatif_step_evaluate (step, config, &got);
  g_autofree char *desc = describe (config);
  stats.configs++;
  if (!ok)
    {
      if (gok || !got.failed || got.error.kind != err.kind
          || strcmp (got.error.message, err.message))
        g_error ("%s: %s: reference raises %s: %s, engine %s: %s", name, desc,
                 dw_error_kind_name (err.kind), err.message,
                 got.failed ? dw_error_kind_name (got.error.kind) : "ok",
                 got.failed ? got.error.message : "");
      stats.errors_same++;
      dw_whatif_step_result_clear (&got);
      return;
    }
  if (!gok)
    g_error ("%s: %s: engine fails (%s) where the reference does not", name, desc,
             got.error.message);
  if (got.pending)
    {
      stats.pending++;
      dw_whatif_step_result_clear (&got);
      dw_correction_result_clear (&ref);
      return;
    }
  if (got.n_metrics != ref.n_metrics)
    {
      for (size_t i = 0; i < ref.n_metrics; i++)
        if (!dw_whatif_step_result_get (&got, ref.metrics[i].key, NULL))
          g_printerr ("missing %s\n", ref.metrics[i].key);
      for (size_t i = 0; i < got.n_metrics; i++)
        if (!dw_correction_result_get (&ref, dw_whatif_step_result_get_key (&got, i)))
          g_printerr ("extra %s\n", dw_whatif_step_result_get_key (&got, i));
      g_error ("%s: %s: %zu metrics, reference %zu", name, desc, got.n_metrics, ref.n_metrics);
    }
  for (size_t i = 0; i < ref.n_metrics; i++)
    {
      const DwMetric *r = &ref.metrics[i];
      const DwMetric *g = &(DwMetric){ .value = got.values[i] };
      g_strlcpy ((char *)g->key, dw_whatif_step_result_get_key (&got, i), sizeof g->key);
      if (strcmp (r->key, g->key) != 0)
        g_error ("%s: %s: key %zu is %s, reference %s", name, desc, i, g->key, r->key);
      stats.metrics++;
      if (got.approximate[i])
        {
          stats.approximate++;
          if (g_getenv ("DW_SHOW_APPROX"))
            g_printerr ("approx %s %s %s\n", name, desc, r->key);
          continue;
        }
      if (memcmp (&r->value, &g->value, sizeof (double)) == 0
          || (isnan (r->value) && isnan (g->value)))
        stats.identical++;
      else if (same_value (r->value, g->value))
        stats.within_ulp++;
      else if (batch->lp_dtype == DW_DTYPE_F64 && std_close_f64 (r->key, r->value, g->value))
        stats.f64_std++;
      else
        g_error ("%s: %s: %s = %.17g, reference %.17g (%" G_GINT64_FORMAT " float32 ulps)", name,
                 desc, r->key, g->value, r->value, f32_ulps (r->value, g->value));
    }
  dw_whatif_step_result_clear (&got);
  dw_correction_result_clear (&ref);
}

/* ------------------------------------------------------------------------------------------ */
/* config grids                                                                                */

typedef void (*ConfigFn) (const DwConfig *config, gpointer data);

static void
with (DwConfig *c, const char *key, DwValue v)
{
  g_assert_true (dw_config_set (c, key, &v));
}

/* rollout_is off, then every level × threshold × batch-normalize */
static void
grid_is (DwGeneration gen, const double *thr, gsize n_thr, ConfigFn fn, gpointer data)
{
  const char *levels[] = { NULL, "token", "sequence" };
  for (guint li = 0; li < G_N_ELEMENTS (levels); li++)
    for (guint ti = 0; ti < n_thr; ti++)
      for (int bn = 0; bn < 2; bn++)
        {
          if (!levels[li] && (ti > 0 || bn))
            continue;
          DwConfig c;
          dw_config_init (&c, gen);
          with (&c, "rollout_is", levels[li] ? dw_value_str (levels[li]) : dw_value_none ());
          with (&c, "rollout_is_threshold", dw_value_float (thr[ti]));
          with (&c, "rollout_is_batch_normalize", dw_value_bool (bn));
          fn (&c, data);
        }
}

/* verl >= 0.8.0: IcePop "lower_upper" thresholds (bounds in the bulk of the ratios, equal bounds,
 * lower above upper, Python's digit underscores) at both levels, with and without batch norm */
static void
grid_icepop (DwGeneration gen, ConfigFn fn, gpointer data)
{
  const char *specs[] = { "0.5_2.0",  "0.8_1.25", "0.99_1.01", "0.999_1.0", "1_1", "0.2_5",
                          "1e-3_1e3", "1.2_0.8",  "0.5_1_2",   "2.0",       " 3 ", "0_2" };
  const char *levels[] = { "token", "sequence" };
  for (guint li = 0; li < G_N_ELEMENTS (levels); li++)
    for (guint si = 0; si < G_N_ELEMENTS (specs); si++)
      for (int bn = 0; bn < 2; bn++)
        {
          DwConfig c;
          dw_config_init (&c, gen);
          with (&c, "rollout_is", dw_value_str (levels[li]));
          with (&c, "rollout_is_threshold", dw_value_str (specs[si]));
          with (&c, "rollout_is_batch_normalize", dw_value_bool (bn));
          if (si % 3 == 1)
            {
              with (&c, "rollout_rs", dw_value_str ("token_k1,seq_mean_k3"));
              with (&c, "rollout_rs_threshold", dw_value_str ("0.8_1.25,0.01"));
            }
          fn (&c, data);
        }
}

static void
grid_verl_head (DwGeneration gen, ConfigFn fn, gpointer data)
{
  const double thr[] = { 2.0, 0.5, 1.0, 1.5, 5.0, 100.0, INFINITY };
  grid_is (gen, thr, G_N_ELEMENTS (thr), fn, data);
  const struct
  {
    const char *opts, *thr;
  } rs[] = {
    { "token_k1", "0.5_2.0" },
    { "token_k1", "0.999_1.001" },
    { "token_k1", "1.5" },
    { "token_k1", "0.6_1.4" },
    { "token_k1", "1.2_0.8" },
    { "token_k1", "0.01_100" },
    { "token_k2", "0.01" },
    { "token_k2", "0.5" },
    { "token_k2", "inf" },
    { "token_k3", "0.001" },
    { "token_k3", "0.1" },
    { "token_k3", "2" },
    { "token_k3", "1e-9" },
    { "seq_sum_k1", "0.5_2.0" },
    { "seq_sum_k1", "0.01_100" },
    { "seq_sum_k2", "1" },
    { "seq_sum_k3", "0.5" },
    { "seq_mean_k1", "0.999_1.001" },
    { "seq_mean_k1", "0.9_1.2" },
    { "seq_mean_k2", "0.01" },
    { "seq_mean_k3", "0.01" },
    { "seq_mean_k3", "0.0001" },
    { "seq_max_k2", "0.5" },
    { "seq_max_k3", "0.5" },
    { "seq_max_k3", "5" },
    { "token_k1,seq_mean_k3", "0.5_2.0,0.01" },
    { "token_k2,token_k3,seq_max_k2", "0.2,0.3,2" },
    { "token_k1,token_k3", "0.8_1.25,0.05" },
    { "seq_sum_k1,seq_max_k3,token_k2", "0.5_2.0, 1, 0.1" },
    { "seq_mean_k1,seq_mean_k1", "0.999_1.001" },
    /* lower above upper: every clamped k1 value is the upper bound (torch.clamp) */
    { "seq_mean_k1", "1.2_0.8" },
    { "seq_sum_k1", "2.0_0.5" },
    { "token_k1,seq_mean_k1", "2.0_0.5" },
    /* rows rejected by a sequence option and a token_k3 bound (per-row sorted k3 counts) */
    { "token_k3,seq_mean_k3", "0.001,0.01" },
    { "token_k3,seq_mean_k3", "1e-9,0.0001" },
    { "token_k3,seq_max_k3", "1e-7,0.5" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rs); i++)
    for (int is = 0; is < 2; is++)
      {
        DwConfig c;
        dw_config_init (&c, gen);
        if (is)
          with (&c, "rollout_is", dw_value_str (i % 2 ? "token" : "sequence"));
        with (&c, "rollout_rs", dw_value_str (rs[i].opts));
        with (&c, "rollout_rs_threshold", dw_value_str (rs[i].thr));
        fn (&c, data);
      }
  /* verl's errors */
  DwConfig c;
  dw_config_init (&c, gen);
  with (&c, "rollout_rs", dw_value_str ("geometric"));
  with (&c, "rollout_rs_threshold", dw_value_float (2.0));
  fn (&c, data);
  dw_config_init (&c, gen);
  with (&c, "rollout_is", dw_value_str ("token"));
  with (&c, "rollout_is_threshold", dw_value_float (-1.0));
  fn (&c, data);
}

static void
grid_verl_g2 (DwGeneration gen, ConfigFn fn, gpointer data)
{
  const double thr[] = { 2.0, 0.7, 1.5, 10.0 };
  grid_is (gen, thr, G_N_ELEMENTS (thr), fn, data);
  const char *rsl[] = { "token", "sequence", "geometric" };
  const double up[] = { 1.001, 1.5, 2.0, 5.0 };
  const double lo[] = { NAN, 0.5, 0.999, 0.9 };
  const double veto[] = { NAN, 1e-4, 0.1, 0.9 };
  for (guint a = 0; a < G_N_ELEMENTS (rsl); a++)
    for (guint u = 0; u < G_N_ELEMENTS (up); u++)
      for (guint l = 0; l < G_N_ELEMENTS (lo); l++)
        {
          DwConfig c;
          dw_config_init (&c, gen);
          with (&c, "rollout_is", dw_value_str ((u + l) % 2 ? "token" : "sequence"));
          with (&c, "rollout_rs", dw_value_str (rsl[a]));
          with (&c, "rollout_rs_threshold", dw_value_float (up[u]));
          if (!isnan (lo[l]))
            with (&c, "rollout_rs_threshold_lower", dw_value_float (lo[l]));
          if (!isnan (veto[(a + u + l) % 4]))
            with (&c, "rollout_token_veto_threshold", dw_value_float (veto[(a + u + l) % 4]));
          fn (&c, data);
        }
  for (guint v = 1; v < G_N_ELEMENTS (veto); v++)
    {
      DwConfig c;
      dw_config_init (&c, gen);
      with (&c, "rollout_token_veto_threshold", dw_value_float (veto[v]));
      fn (&c, data);
    }
}

static void
grid_verl_g1 (ConfigFn fn, gpointer data)
{
  const char *levels[] = { "token", "sequence", "geometric" };
  const char *modes[] = { "truncate", "mask" };
  const double thr[] = { NAN, 2.0, 1.5, 1.001, 0.8 }; /* 0.8: default lower 1.25 > upper */
  const double lo[] = { NAN, 0.5, 0.999 };
  const double veto[] = { NAN, 1e-4, 0.5 };
  for (guint a = 0; a < G_N_ELEMENTS (levels); a++)
    for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
      for (guint t = 0; t < G_N_ELEMENTS (thr); t++)
        for (guint l = 0; l < G_N_ELEMENTS (lo); l++)
          {
            DwConfig c;
            dw_config_init (&c, DW_GEN_VERL_0_6);
            with (&c, "rollout_is_level", dw_value_str (levels[a]));
            with (&c, "rollout_is_mode", dw_value_str (modes[m]));
            if (!isnan (thr[t]))
              with (&c, "rollout_is_threshold", dw_value_float (thr[t]));
            if (!isnan (lo[l]))
              with (&c, "rollout_is_threshold_lower", dw_value_float (lo[l]));
            if (!isnan (veto[(a + m + t + l) % 3]))
              with (&c, "rollout_is_veto_threshold", dw_value_float (veto[(a + m + t + l) % 3]));
            fn (&c, data);
          }
}

static void
grid_presets (DwGeneration gen, ConfigFn fn, gpointer data)
{
  size_t n;
  const DwPresetInfo *p = dw_preset_list (gen, &n);
  for (size_t i = 0; i < n; i++)
    {
      DwConfig c;
      DwCorrectionError err;
      g_assert_true (dw_preset_config (gen, p[i].name, &c, &err));
      fn (&c, data);
    }
}

static void
grid_all (ConfigFn fn, gpointer data)
{
  for (int g = 0; g < DW_N_GENERATIONS; g++)
    grid_presets ((DwGeneration)g, fn, data);
  grid_verl_head (DW_GEN_VERL_0_7_1, fn, data);
  grid_verl_head (DW_GEN_VERL_0_8_0, fn, data);
  grid_verl_head (DW_GEN_VERL_0_9_0, fn, data);
  grid_icepop (DW_GEN_VERL_0_8_0, fn, data);
  grid_icepop (DW_GEN_VERL_0_9_0, fn, data);
  grid_verl_g2 (DW_GEN_VERL_0_7_0, fn, data);
  grid_verl_g2 (DW_GEN_VERL_0_7, fn, data);
  grid_verl_g2 (DW_GEN_VERL_0_6_1, fn, data);
  grid_verl_g1 (fn, data);
}

/* ------------------------------------------------------------------------------------------ */

typedef struct
{
  const char *name;
  const DwBatch *batch;
  const DwWhatifStep *step;
} Case;

static void
case_fn (const DwConfig *config, gpointer data)
{
  Case *c = data;
  check_one (c->name, c->batch, c->step, config);
}

static void
check_batch (const char *name, const DwBatch *batch)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwWhatifStep) step = dw_whatif_step_new (batch, 0, &error);
  g_assert_no_error (error);
  Case c = { name, batch, step };
  grid_all (case_fn, &c);
}

static void
test_golden (void)
{
  const char *shared = g_getenv ("DW_SHARED_DIR");
  g_assert_nonnull (shared);
  g_autofree char *dir = g_build_filename (shared, "golden", "batches", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  const char *f;
  guint n = 0;
  memset (&stats, 0, sizeof stats);
  while ((f = g_dir_read_name (d)))
    {
      if (!g_str_has_suffix (f, ".npz"))
        continue;
      g_autofree char *path = g_build_filename (dir, f, NULL);
      g_autoptr (GError) error = NULL;
      DwBatch *b = dw_batch_read_file (path, &error);
      g_assert_no_error (error);
      check_batch (f, b);
      dw_batch_free (b);
      n++;
    }
  g_assert_cmpuint (n, >=, 10);
  g_test_message ("golden: %u batches, %" G_GUINT64_FORMAT " configs, %" G_GUINT64_FORMAT
                  " metrics: %" G_GUINT64_FORMAT " bit-identical, %" G_GUINT64_FORMAT
                  " within 1 float32 ulp, %" G_GUINT64_FORMAT " approximate; %" G_GUINT64_FORMAT
                  " identical errors, %" G_GUINT64_FORMAT " pending (slime / non-binary masks)",
                  n, stats.configs, stats.metrics, stats.identical, stats.within_ulp,
                  stats.approximate, stats.errors_same, stats.pending);
  g_printerr ("golden: %" G_GUINT64_FORMAT " metrics, %" G_GUINT64_FORMAT
              " bit-identical, %" G_GUINT64_FORMAT " within 1 ulp, %" G_GUINT64_FORMAT
              " approximate, %" G_GUINT64_FORMAT " pending configs\n",
              stats.metrics, stats.identical, stats.within_ulp, stats.approximate, stats.pending);
  /* the engine must really evaluate (not leave everything pending/approximate) */
  g_assert_cmpuint (stats.identical + stats.within_ulp, >, 50000);
  g_assert_cmpuint (stats.approximate * 100, <, stats.metrics);
}

/* random batches: lengths 0..T, heavy tails, f32/f64, bool/int64/f32 masks */
static DwBatch *
random_batch (GRand *r, gsize B, gsize T, DwDType lp, DwDType md, double scale)
{
  DwBatch *b = dw_batch_new (B, T, lp, md);
  for (gsize row = 0; row < B; row++)
    {
      gsize len = g_rand_int_range (r, 0, 8) == 0 ? 0 : (gsize)g_rand_int_range (r, 1, (gint)T + 1);
      double drift = g_rand_double_range (r, -0.3, 0.3) * scale;
      for (gsize t = 0; t < T; t++)
        {
          gsize i = row * T + t;
          double roll = -g_rand_double_range (r, 0, 6);
          double l = drift + scale * (g_rand_double (r) - 0.5) * 0.4;
          if (g_rand_int_range (r, 0, 50) == 0)
            l *= 30; /* heavy tail, up to |ℓ| > 20 */
          if (g_rand_int_range (r, 0, 20) == 0)
            l = 0; /* exact ties at ℓ = 0 (k3 rounding noise) */
          double old = roll + l;
          if (lp == DW_DTYPE_F32)
            {
              ((float *)b->old_log_prob)[i] = (float)old;
              ((float *)b->rollout_log_prob)[i] = (float)roll;
            }
          else
            {
              ((double *)b->old_log_prob)[i] = old;
              ((double *)b->rollout_log_prob)[i] = roll;
            }
          gboolean v = t < len;
          switch (md)
            {
            case DW_DTYPE_BOOL:
              ((guint8 *)b->response_mask)[i] = v;
              break;
            case DW_DTYPE_I64:
              ((gint64 *)b->response_mask)[i] = v;
              break;
            default:
              ((float *)b->response_mask)[i] = v;
              break;
            }
        }
    }
  return b;
}

static void
test_random (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (20261123);
  memset (&stats, 0, sizeof stats);
  const DwDType lps[] = { DW_DTYPE_F32, DW_DTYPE_F64 };
  const DwDType mds[] = { DW_DTYPE_I64, DW_DTYPE_BOOL, DW_DTYPE_F32 };
  for (int k = 0; k < 12; k++)
    {
      gsize B = (gsize)g_rand_int_range (r, 1, 40), T = (gsize)g_rand_int_range (r, 1, 300);
      double scale = k % 3 == 0 ? 0.01 : k % 3 == 1 ? 0.3 : 2.0;
      DwBatch *b = random_batch (r, B, T, lps[k % 4 == 3], mds[k % 3], scale);
      g_autofree char *name
        = g_strdup_printf ("random-%d (%zux%zu, %s)", k, B, T, dw_dtype_name (b->lp_dtype));
      check_batch (name, b);
      dw_batch_free (b);
    }
  g_printerr ("random: %" G_GUINT64_FORMAT " metrics, %" G_GUINT64_FORMAT
              " bit-identical, %" G_GUINT64_FORMAT " within 1 ulp, %" G_GUINT64_FORMAT
              " float64 _std as variances, %" G_GUINT64_FORMAT " approximate\n",
              stats.metrics, stats.identical, stats.within_ulp, stats.f64_std, stats.approximate);
  g_assert_cmpuint (stats.identical + stats.within_ulp, >, 50000);
  g_assert_cmpuint (stats.approximate * 100, <, stats.metrics);
}

/* a larger batch: the block prefix sums are really used (blocks of 64 tokens) */
static void
test_large (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (7);
  memset (&stats, 0, sizeof stats);
  DwBatch *b = random_batch (r, 64, 1500, DW_DTYPE_F32, DW_DTYPE_I64, 0.5);
  check_batch ("large 64x1500", b);
  dw_batch_free (b);
  g_printerr ("large: %" G_GUINT64_FORMAT " metrics, %" G_GUINT64_FORMAT
              " bit-identical, %" G_GUINT64_FORMAT " within 1 ulp, %" G_GUINT64_FORMAT
              " approximate\n",
              stats.metrics, stats.identical, stats.within_ulp, stats.approximate);
}

/* std and ESS of a clamped statistic that is the constant @hi on all @N valid tokens, in float32
 * (docs/CORRECTION.md §2, §3.3, §4.4: MMEAN = R(Σ)/R(N + 1e-8), var = R(MMEAN(u²) − R(MMEAN(u)²)),
 * ESS = 1/MMEAN((u/R(ū + 1e-8))²)); 0 and 1 whenever N·hi and N·hi² are exact in float32 */
static void
const_std_ess (double hi, double N, double *std, double *ess)
{
  const double cnt = (float)((double)(float)N + 1e-8), h2 = (float)(hi * hi);
  const double mc = (float)((double)(float)(N * hi) / cnt);
  const double m2 = (float)((double)(float)(N * h2) / cnt);
  const double var = (float)(m2 - (double)(float)(mc * mc));
  const double d = (float)(mc + 1e-8);
  *std = N > 1 ? sqrt (fmax (var, 0.0)) : 0.0;
  *ess = 1.0 / (double)(float)((double)(float)(N * h2 / (d * d)) / cnt);
}

/* IS threshold / k1 spec below 1 (the Tune view's slider dragged under 1): the metric clamp
 * [lo, hi] has lo > hi and gives hi for every value (torch.clamp = min(max(x, lo), hi)), so the
 * clamped values are one constant, whatever the ratios (which here straddle both bounds): the
 * engine must give the std/ESS of a constant, and the same as dw_correction_run. */
static void
test_threshold_below_one (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (1123);
  memset (&stats, 0, sizeof stats);
  for (int k = 0; k < 4; k++)
    {
      DwBatch *b
        = random_batch (r, 12, 150, DW_DTYPE_F32, k % 2 ? DW_DTYPE_BOOL : DW_DTYPE_I64, 5.0);
      double N = 0;
      for (gsize i = 0; i < b->rows * b->cols; i++)
        N += dw_batch_mask_value (b, i) != 0;
      g_autoptr (GError) error = NULL;
      g_autoptr (DwWhatifStep) step = dw_whatif_step_new (b, k, &error);
      g_assert_no_error (error);
      const char *levels[] = { "token", "sequence" };
      const double thr[] = { 0.5, 0.8, 0.99 };
      for (guint li = 0; li < G_N_ELEMENTS (levels); li++)
        for (guint ti = 0; ti < G_N_ELEMENTS (thr); ti++)
          {
            DwConfig c;
            dw_config_init (&c, DW_GEN_VERL);
            with (&c, "rollout_is", dw_value_str (levels[li]));
            with (&c, "rollout_is_threshold", dw_value_float (thr[ti]));
            with (&c, "rollout_rs", dw_value_str ("token_k1,seq_mean_k1,seq_sum_k1"));
            with (&c, "rollout_rs_threshold", dw_value_str ("2.0_0.5,1.5_0.9,3_0.2"));
            DwWhatifStepResult got;
            g_assert_true (dw_whatif_step_evaluate (step, &c, &got));
            g_assert_false (got.pending);
            const struct
            {
              const char *key;
              double hi; /* the upper clamp bound, float32 */
            } cs[] = {
              { "rollout_corr/rollout_is", (float)thr[ti] },
              { "rollout_corr/rollout_rs_token_k1", (float)log (0.5) },
              { "rollout_corr/rollout_rs_seq_mean_k1", (float)log (0.9) },
              { "rollout_corr/rollout_rs_seq_sum_k1", (float)log (0.2) },
            };
            for (guint z = 0; z < G_N_ELEMENTS (cs); z++)
              {
                double want_std, want_ess;
                const_std_ess (cs[z].hi, N, &want_std, &want_ess);
                g_autofree char *ks = g_strdup_printf ("%s_std", cs[z].key);
                const double *v = dw_whatif_step_result_get (&got, ks, NULL);
                g_assert_nonnull (v);
                if (*v != want_std)
                  g_error ("batch %d %s %g: %s = %.9g, want %.9g", k, levels[li], thr[ti], ks, *v,
                           want_std);
                if (z == 0)
                  {
                    const double *e = dw_whatif_step_result_get (
                      &got, "rollout_corr/rollout_is_eff_sample_size", NULL);
                    g_assert_nonnull (e);
                    g_assert_cmpfloat (*e, ==, want_ess);
                    if (thr[ti] == 0.5) /* N·0.5 and N·0.25 are exact */
                      g_assert_true (want_std == 0.0 && want_ess == 1.0);
                  }
              }
            if (li == 0)
              {
                /* the ratios straddle the lower bound 1/C: a clamp sending values below it to it
                 * would give a spread */
                const double *fl = dw_whatif_step_result_get (
                  &got, "rollout_corr/rollout_is_ratio_fraction_low", NULL);
                g_assert_nonnull (fl);
                g_assert_cmpfloat (*fl, >, 0.05);
                g_assert_cmpfloat (*fl, <, 0.95);
              }
            dw_whatif_step_result_clear (&got);
            check_one ("threshold-below-one", b, step, &c);
          }
      dw_batch_free (b);
    }
  g_assert_cmpuint (stats.configs, ==, 4 * 2 * 3);
  g_assert_cmpuint (stats.identical + stats.within_ulp, >, 0);
}

/* approximate metrics and pending steps are made exact by the exact pass */
typedef struct
{
  GPtrArray *batches;
} Loader;

static DwBatch *
load_copy (gint64 step, gpointer data, GError **error)
{
  Loader *l = data;
  const DwBatch *src = g_ptr_array_index (l->batches, step);
  DwBatch *b = dw_batch_new (src->rows, src->cols, src->lp_dtype, src->mask_dtype);
  gsize n = src->rows * src->cols;
  memcpy (b->old_log_prob, src->old_log_prob, n * dw_dtype_size (src->lp_dtype));
  memcpy (b->rollout_log_prob, src->rollout_log_prob, n * dw_dtype_size (src->lp_dtype));
  memcpy (b->response_mask, src->response_mask, n * dw_dtype_size (src->mask_dtype));
  (void)error;
  return b;
}

/* dw_whatif_engine_evaluate_rows (): the same metrics as dw_whatif_engine_evaluate () (@fast),
 * bit for bit, and per step the row outcomes dw_whatif_step_row_outcomes () gives */
static void
check_evaluate_rows (DwWhatifEngine *engine, const DwConfig *config, const DwWhatifRunResult *fast)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwWhatifRunResult) rows = dw_whatif_engine_evaluate_rows (engine, config, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (rows->n_steps, ==, fast->n_steps);
  g_assert_cmpint (rows->any_approximate, ==, fast->any_approximate);
  for (guint i = 0; i < rows->n_steps; i++)
    {
      const DwWhatifStep *step = dw_whatif_engine_get_step (engine, i);
      gsize n_rows = dw_whatif_step_get_n_rows (step);
      g_autofree double *lengths = g_new (double, n_rows);
      g_autofree guint8 *rejected = g_new (guint8, n_rows);
      const DwWhatifStepResult *a = &rows->results[i], *b = &fast->results[i];

      g_assert_cmpint (a->pending, ==, b->pending);
      g_assert_cmpint (a->failed, ==, b->failed);
      g_assert_cmpuint (a->n_metrics, ==, b->n_metrics);
      for (gsize m = 0; m < a->n_metrics; m++)
        {
          g_assert_cmpstr (dw_whatif_step_result_get_key (a, m), ==,
                           dw_whatif_step_result_get_key (b, m));
          g_assert_true (memcmp (&a->values[m], &b->values[m], sizeof (double)) == 0);
        }
      if (!dw_whatif_step_row_outcomes (step, config, lengths, rejected))
        {
          g_assert_null (rows->row_rejected[i]);
          continue;
        }
      g_assert_nonnull (rows->row_rejected[i]);
      g_assert_true (memcmp (rows->row_rejected[i], rejected, n_rows) == 0);
      g_assert_true (
        memcmp (dw_whatif_step_get_row_lengths (step), lengths, n_rows * sizeof (double)) == 0);
    }
}

static void
test_exact_pass (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (99);
  Loader l = { g_ptr_array_new_with_free_func ((GDestroyNotify)dw_batch_free) };
  g_autoptr (DwWhatifEngine) engine = dw_whatif_engine_new (2);
  dw_whatif_engine_set_loader (engine, load_copy, &l, NULL);
  for (gint64 s = 0; s < 20; s++)
    {
      DwBatch *b = random_batch (r, 16, 200, DW_DTYPE_F32, DW_DTYPE_I64, 0.3);
      g_ptr_array_add (l.batches, b);
      g_autoptr (GError) error = NULL;
      DwWhatifStep *st = dw_whatif_step_new (b, s, &error);
      g_assert_no_error (error);
      dw_whatif_engine_add_step (engine, st);
    }
  /* token + sequence options rejecting in the same rows: masked_fraction is approximate */
  const char *configs[][3] = {
    { "verl-0.7.1", "token_k1,seq_mean_k1", "0.8_1.25,0.97_1.03" },
    { "slime", NULL, NULL },
    { "verl-0.7.1", "token_k3", "1e-9" },
  };
  for (guint k = 0; k < G_N_ELEMENTS (configs); k++)
    {
      DwConfig c;
      DwGeneration gen;
      g_assert_true (dw_generation_from_name (configs[k][0], &gen));
      dw_config_init (&c, gen);
      if (configs[k][1])
        {
          with (&c, "rollout_rs", dw_value_str (configs[k][1]));
          with (&c, "rollout_rs_threshold", dw_value_str (configs[k][2]));
        }
      else
        with (&c, "use_rs", dw_value_bool (TRUE));
      g_autoptr (GError) error = NULL;
      g_autoptr (DwWhatifRunResult) fast = dw_whatif_engine_evaluate (engine, &c, &error);
      g_assert_no_error (error);
      if (gen == DW_GEN_SLIME)
        g_assert_true (fast->any_approximate && fast->results[0].pending);
      check_evaluate_rows (engine, &c, fast);
      g_autoptr (DwWhatifRunResult) exact
        = dw_whatif_engine_evaluate_exact (engine, &c, NULL, &error);
      g_assert_no_error (error);
      g_assert_false (exact->any_approximate);
      for (guint i = 0; i < exact->n_steps; i++)
        {
          DwCorrectionResult ref;
          DwCorrectionError err;
          g_assert_true (dw_correction_run (g_ptr_array_index (l.batches, i), &c, &ref, &err));
          const DwWhatifStepResult *e = &exact->results[i];
          g_assert_false (e->pending);
          g_assert_cmpuint (e->n_metrics, ==, ref.n_metrics);
          for (size_t m = 0; m < ref.n_metrics; m++)
            {
              g_assert_cmpstr (dw_whatif_step_result_get_key (e, m), ==, ref.metrics[m].key);
              g_assert_false (e->approximate[m]);
              double a = e->values[m], b = ref.metrics[m].value;
              g_assert_true (memcmp (&a, &b, sizeof a) == 0 || (isnan (a) && isnan (b)));
            }
          dw_correction_result_clear (&ref);
        }
    }
  g_ptr_array_unref (l.batches);
}

/* the histogram counts every valid token once, and the veto count agrees with it */
static void
test_histogram (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (3);
  DwBatch *b = random_batch (r, 30, 100, DW_DTYPE_F32, DW_DTYPE_BOOL, 1.0);
  g_autoptr (DwWhatifStep) s = dw_whatif_step_new (b, 5, NULL);
  guint64 counts[40], total = 0, below = 0;
  dw_whatif_step_histogram (s, -2, 2, 40, counts);
  for (int i = 0; i < 40; i++)
    total += counts[i];
  g_assert_cmpuint (total, ==, dw_whatif_step_get_n_tokens (s));
  /* independent count of ℓ < −1.9 (first bin's upper edge) from the raw arrays */
  gsize n_valid = 0;
  for (gsize i = 0; i < b->rows * b->cols; i++)
    if (((guint8 *)b->response_mask)[i])
      {
        n_valid++;
        float l = ((float *)b->old_log_prob)[i] - ((float *)b->rollout_log_prob)[i];
        below += l < -1.9;
      }
  g_assert_cmpuint (n_valid, ==, total);
  g_assert_cmpuint (counts[0], ==, below);
  g_assert_cmpint (dw_whatif_step_get_step (s), ==, 5);
  dw_batch_free (b);
}

/* ------------------------------------------------------------------------------------------ */
/* compact steps: exact where they say so, within their error bound elsewhere                  */

typedef struct
{
  const char *name;
  const DwWhatifStep *full, *compact;
  guint64 configs, pending, metrics, exact, bounded, unbounded, failed_same;
  double worst_bound_use; /* largest |compact − full| / bound */
} CompactCase;

static void
compact_case_fn (const DwConfig *config, gpointer data)
{
  CompactCase *cc = data;
  DwWhatifStepResult full, compact;
  gboolean full_ok = dw_whatif_step_evaluate (cc->full, config, &full);
  gboolean compact_ok = dw_whatif_step_evaluate (cc->compact, config, &compact);
  g_autofree char *desc = describe (config);
  cc->configs++;
  if (!full_ok || full.pending)
    {
      /* a config error is the same; an IcePop step whose weights are all zero may be estimated */
      if (!full_ok && full.error.kind != DW_ERROR_ZERO_DIVISION)
        {
          g_assert_false (compact_ok);
          g_assert_cmpstr (compact.error.message, ==, full.error.message);
          cc->failed_same++;
        }
      dw_whatif_step_result_clear (&full);
      dw_whatif_step_result_clear (&compact);
      return;
    }
  if (!compact_ok || compact.pending)
    {
      cc->pending++;
      dw_whatif_step_result_clear (&full);
      dw_whatif_step_result_clear (&compact);
      return;
    }
  g_assert_cmpuint (compact.n_metrics, ==, full.n_metrics);
  for (gsize i = 0; i < full.n_metrics; i++)
    {
      const char *key = dw_whatif_step_result_get_key (&full, i);
      g_assert_cmpstr (dw_whatif_step_result_get_key (&compact, i), ==, key);
      double exact = full.values[i], value = compact.values[i];
      double bound = compact.error_bound[i];
      cc->metrics++;
      if (!compact.approximate[i])
        {
          if (!same_value (exact, value))
            g_error ("%s: %s: compact %s = %.17g, full %.17g", cc->name, desc, key, value, exact);
          cc->exact++;
          continue;
        }
      if (isnan (bound))
        {
          if (g_getenv ("DW_SHOW_APPROX"))
            g_printerr ("unbounded %s %s %s\n", cc->name, desc, key);
          cc->unbounded++;
          continue;
        }
      /* the bound is on the value before its last float32 rounding */
      double slack = 4 * fabs (nextafterf ((float)exact, INFINITY) - (float)exact) + 1e-12;
      if (!(fabs (value - exact) <= bound + slack))
        g_error ("%s: %s: compact %s = %.17g, full %.17g, beyond the bound %.3g", cc->name, desc,
                 key, value, exact, bound);
      if (bound > 0)
        cc->worst_bound_use = fmax (cc->worst_bound_use, fabs (value - exact) / bound);
      cc->bounded++;
    }
  dw_whatif_step_result_clear (&full);
  dw_whatif_step_result_clear (&compact);
}

static void
test_compact (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (424242);
  CompactCase total = { "all" };
  for (int k = 0; k < 6; k++)
    {
      /* a few thousand tokens per step at least, so that the bulk is binned */
      gsize B = (gsize)g_rand_int_range (r, 16, 64), T = (gsize)g_rand_int_range (r, 200, 1200);
      double scale = k % 3 == 0 ? 0.05 : k % 3 == 1 ? 0.4 : 2.0;
      DwBatch *b
        = random_batch (r, B, T, k == 5 ? DW_DTYPE_F64 : DW_DTYPE_F32, DW_DTYPE_BOOL, scale);
      g_autofree char *name = g_strdup_printf ("compact-%d (%zux%zu)", k, B, T);
      g_autoptr (GError) error = NULL;
      g_autoptr (DwWhatifStep) full = dw_whatif_step_new (b, 0, &error);
      g_autoptr (DwWhatifStep) compact = dw_whatif_step_new_compact (b, 0, &error);
      g_assert_no_error (error);
      g_assert_true (dw_whatif_step_is_compact (compact));
      g_assert_cmpuint (dw_whatif_step_get_memory (compact), <,
                        dw_whatif_step_get_memory (full) / 2 + 400000);
      CompactCase cc = { name, full, compact };
      grid_all (compact_case_fn, &cc);
      total.configs += cc.configs;
      total.pending += cc.pending;
      total.metrics += cc.metrics;
      total.exact += cc.exact;
      total.bounded += cc.bounded;
      total.unbounded += cc.unbounded;
      total.failed_same += cc.failed_same;
      total.worst_bound_use = fmax (total.worst_bound_use, cc.worst_bound_use);
      dw_batch_free (b);
    }
  g_printerr (
    "compact: %" G_GUINT64_FORMAT " configs (%" G_GUINT64_FORMAT " pending), %" G_GUINT64_FORMAT
    " metrics: %" G_GUINT64_FORMAT " exact, %" G_GUINT64_FORMAT
    " within their error bound (worst use %.2f of it), %" G_GUINT64_FORMAT
    " estimated without a bound; %" G_GUINT64_FORMAT " config errors as the full step's\n",
    total.configs, total.pending, total.metrics, total.exact, total.bounded, total.worst_bound_use,
    total.unbounded, total.failed_same);
  g_assert_cmpuint (total.exact * 10, >, total.metrics * 8);
  g_assert_cmpuint (total.unbounded, ==, 0);
}

/* The row loops' vector variants (dw-whatif-lanes-private.h): every config of the grid gives the
 * same values, flags, bounds and rejected rows, bit for bit, in each variant this processor runs as
 * in the baseline, on full and compact steps of row counts that fill no, one or several vectors
 * with a remainder (1, 3, 5, 61 rows), float32 and float64. */
typedef struct
{
  const DwWhatifStep *steps[2];
  GArray *reference;      /* the baseline's results, in grid order (recorded on the first pass) */
  GPtrArray *row_outcome; /* and its row outcomes (NULL where it gives none) */
  guint next;
  guint64 compared;
} VariantCase;

static void
variant_case_fn (const DwConfig *config, gpointer data)
{
  VariantCase *vc = data;
  for (int kind = 0; kind < 2; kind++)
    {
      DwWhatifStepResult result;
      dw_whatif_step_evaluate (vc->steps[kind], config, &result);
      /* the rows the RS options reject (the length-bias view's outcomes) */
      const gsize n_rows = dw_whatif_step_get_n_rows (vc->steps[kind]);
      g_autofree double *lengths = g_new (double, n_rows);
      guint8 *rejected = g_malloc (n_rows);
      if (!dw_whatif_step_row_outcomes (vc->steps[kind], config, lengths, rejected))
        g_clear_pointer (&rejected, g_free);
      if (vc->reference->len <= vc->next)
        {
          g_array_append_val (vc->reference, result);
          g_ptr_array_add (vc->row_outcome, rejected);
          vc->next++;
          continue;
        }
      const guint8 *baseline_rejected = g_ptr_array_index (vc->row_outcome, vc->next);
      g_assert_true ((rejected == NULL) == (baseline_rejected == NULL));
      if (rejected != NULL)
        g_assert_cmpmem (rejected, n_rows, baseline_rejected, n_rows);
      g_free (rejected);
      DwWhatifStepResult *baseline = &g_array_index (vc->reference, DwWhatifStepResult, vc->next++);
      g_assert_cmpint (result.failed, ==, baseline->failed);
      g_assert_cmpint (result.pending, ==, baseline->pending);
      g_assert_cmpuint (result.n_metrics, ==, baseline->n_metrics);
      g_assert_true (result.keys == baseline->keys);
      for (gsize index = 0; index < result.n_metrics; index++)
        {
          if (memcmp (&result.values[index], &baseline->values[index], sizeof (double)) != 0
              || memcmp (&result.error_bound[index], &baseline->error_bound[index], sizeof (double))
                   != 0
              || result.approximate[index] != baseline->approximate[index])
            g_error ("%s: %s is %.17g ± %g, %.17g ± %g in the baseline", kind ? "compact" : "full",
                     dw_whatif_step_result_get_key (&result, index), result.values[index],
                     result.error_bound[index], baseline->values[index],
                     baseline->error_bound[index]);
          vc->compared++;
        }
      dw_whatif_step_result_clear (&result);
    }
}

static void
test_vector_variants (void)
{
  static const char *const limits[] = { "off", "avx2", "avx512" };
  static const gsize row_counts[] = { 1, 3, 5, 61 };
  g_autoptr (GRand) r = g_rand_new_with_seed (737373);
  guint64 compared = 0;
  for (gsize shape = 0; shape < G_N_ELEMENTS (row_counts) * 2; shape++)
    {
      const gsize B = row_counts[shape / 2], T = (gsize)g_rand_int_range (r, 200, 900);
      g_autoptr (DwBatch) b = random_batch (r, B, T, shape % 2 ? DW_DTYPE_F64 : DW_DTYPE_F32,
                                            DW_DTYPE_BOOL, shape % 3 == 0 ? 0.05 : 0.6);
      g_autoptr (GError) error = NULL;
      g_autoptr (DwWhatifStep) full = dw_whatif_step_new (b, 0, &error);
      g_assert_no_error (error);
      g_autoptr (DwWhatifStep) compact = dw_whatif_step_new_compact (b, 0, &error);
      g_assert_no_error (error);
      VariantCase vc = { { full, compact },
                         g_array_new (FALSE, FALSE, sizeof (DwWhatifStepResult)),
                         g_ptr_array_new_with_free_func (g_free) };
      g_array_set_clear_func (vc.reference, (GDestroyNotify)dw_whatif_step_result_clear);
      const char *best = NULL;
      for (gsize limit = 0; limit < G_N_ELEMENTS (limits); limit++)
        {
          const char *used = dw_correction_set_vector_limit (limits[limit]);
          g_assert_nonnull (used);
          if (limit > 0 && g_strcmp0 (used, best) == 0)
            continue; /* the processor runs nothing wider */
          best = used;
          vc.next = 0;
          grid_all (variant_case_fn, &vc);
        }
      compared += vc.compared;
      g_array_unref (vc.reference);
      g_ptr_array_unref (vc.row_outcome);
    }
  g_assert_null (dw_correction_set_vector_limit ("sse9"));
  dw_correction_set_vector_limit ("avx512");
  g_printerr ("vector variants: %" G_GUINT64_FORMAT " values compared with the baseline's\n",
              compared);
}

/* compact steps whose token sketch comes from the store's token summary (what a run whose raw
 * tokens are referenced, not kept, has): exact where they say so, within their error bound
 * elsewhere, against the full step */
static void
test_compact_summary (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (515151);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("dw-whatif-summary-XXXXXX", &error);
  g_autofree char *db = g_build_filename (dir, "store.db", NULL);
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  g_assert_no_error (error);
  g_assert_true (dw_store_begin (store, &error));
  gint64 run_id = dw_store_ensure_run (store, "run", "verl", dir, &error);
  g_assert_no_error (error);
  CompactCase total = { "all" };
  for (int k = 0; k < 6; k++)
    {
      gsize B = (gsize)g_rand_int_range (r, 16, 64), T = (gsize)g_rand_int_range (r, 200, 1200);
      double scale = k % 3 == 0 ? 0.05 : k % 3 == 1 ? 0.4 : 2.0;
      g_autoptr (DwBatch) b
        = random_batch (r, B, T, k == 5 ? DW_DTYPE_F64 : DW_DTYPE_F32, DW_DTYPE_BOOL, scale);
      g_assert_true (dw_store_put_batch (store, run_id, k, b, NULL, &error));
      g_assert_no_error (error);
      g_autoptr (DwTokenSummary) summary = dw_store_get_token_summary (store, run_id, k, &error);
      g_assert_no_error (error);
      g_autofree char *name = g_strdup_printf ("summary-%d (%zux%zu)", k, B, T);
      g_autoptr (DwWhatifStep) full = dw_whatif_step_new (b, k, &error);
      g_autoptr (DwWhatifStep) compact = dw_whatif_step_new_compact (b, k, &error);
      g_assert_no_error (error);
      g_assert_true (dw_whatif_step_set_token_summary (compact, summary, &error));
      g_assert_no_error (error);
      /* a full step takes no summary */
      g_assert_false (dw_whatif_step_set_token_summary (full, summary, NULL));
      CompactCase cc = { name, full, compact };
      grid_all (compact_case_fn, &cc);
      total.configs += cc.configs;
      total.pending += cc.pending;
      total.metrics += cc.metrics;
      total.exact += cc.exact;
      total.bounded += cc.bounded;
      total.unbounded += cc.unbounded;
      total.failed_same += cc.failed_same;
      total.worst_bound_use = fmax (total.worst_bound_use, cc.worst_bound_use);
    }
  g_assert_true (dw_store_commit (store, &error));
  g_printerr ("compact from the store's summary: %" G_GUINT64_FORMAT " configs (%" G_GUINT64_FORMAT
              " pending), %" G_GUINT64_FORMAT " metrics: %" G_GUINT64_FORMAT
              " exact, %" G_GUINT64_FORMAT
              " within their error bound (worst use %.2f of it), %" G_GUINT64_FORMAT
              " estimated without a bound\n",
              total.configs, total.pending, total.metrics, total.exact, total.bounded,
              total.worst_bound_use, total.unbounded);
  g_assert_cmpuint (total.unbounded, ==, 0);
  g_clear_object (&store);
  g_autofree char *wal = g_strconcat (db, "-wal", NULL), *shm = g_strconcat (db, "-shm", NULL);
  g_unlink (wal);
  g_unlink (shm);
  g_unlink (db);
  g_rmdir (dir);
}

/* two steps that must evaluate identically: every key, value, flag and error bound */
typedef struct
{
  const char *name;
  const DwWhatifStep *expected, *actual;
  guint64 configs, metrics, exact;
} SameCase;

static void
same_case_fn (const DwConfig *config, gpointer data)
{
  SameCase *sc = data;
  DwWhatifStepResult expected, actual;
  gboolean expected_ok = dw_whatif_step_evaluate (sc->expected, config, &expected);
  gboolean actual_ok = dw_whatif_step_evaluate (sc->actual, config, &actual);
  g_autofree char *desc = describe (config);

  sc->configs++;
  g_assert_cmpint (actual_ok, ==, expected_ok);
  g_assert_cmpint (actual.pending, ==, expected.pending);
  g_assert_cmpint (actual.failed, ==, expected.failed);
  if (expected.failed)
    g_assert_cmpstr (actual.error.message, ==, expected.error.message);
  g_assert_cmpuint (actual.n_metrics, ==, expected.n_metrics);
  for (gsize i = 0; i < expected.n_metrics; i++)
    {
      const char *key = dw_whatif_step_result_get_key (&expected, i);
      g_assert_cmpstr (dw_whatif_step_result_get_key (&actual, i), ==, key);
      if (!same_value (actual.values[i], expected.values[i])
          || actual.approximate[i] != expected.approximate[i]
          || !same_value (actual.error_bound[i], expected.error_bound[i]))
        g_error ("%s: %s: from the stored statistics %s = %.17g (approximate %d, bound %.3g), "
                 "from the tokens %.17g (approximate %d, bound %.3g)",
                 sc->name, desc, key, actual.values[i], actual.approximate[i],
                 actual.error_bound[i], expected.values[i], expected.approximate[i],
                 expected.error_bound[i]);
      sc->metrics++;
      sc->exact += !actual.approximate[i];
    }
  dw_whatif_step_result_clear (&expected);
  dw_whatif_step_result_clear (&actual);
}

/* A step built from the store's step statistics and token summary (schema 7, what the Tune page
 * opens a large run with, never reading a token) evaluates exactly as the compact step built from
 * the batch's tokens with the same summary, under every config of the grid: float32 and float64,
 * empty rows, heavy tails, ties at ℓ = 0; a batch with a non-binary mask is pending in both. */
static void
test_stored_stats (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (616161);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("dw-whatif-stored-XXXXXX", &error);
  g_autofree char *db = g_build_filename (dir, "store.db", NULL);
  g_autoptr (DwStore) store = dw_store_open (db, &error);
  SameCase total = { "all" };

  g_assert_no_error (error);
  g_assert_true (dw_store_begin (store, &error));
  gint64 run_id = dw_store_ensure_run (store, "run", "verl", dir, &error);
  for (int k = 0; k < 7; k++)
    {
      gsize B = (gsize)g_rand_int_range (r, 16, 64), T = (gsize)g_rand_int_range (r, 200, 1200);
      double scale = k % 3 == 0 ? 0.05 : k % 3 == 1 ? 0.4 : 2.0;
      g_autoptr (DwBatch) b = random_batch (r, B, T, k == 5 ? DW_DTYPE_F64 : DW_DTYPE_F32,
                                            k == 6 ? DW_DTYPE_F32 : DW_DTYPE_BOOL, scale);
      if (k == 6)
        ((float *)b->response_mask)[0] = 0.5f; /* not 0 or 1: no fast path */
      g_assert_true (dw_store_put_batch (store, run_id, k, b, NULL, &error));
      g_assert_no_error (error);
      g_autoptr (DwTokenSummary) summary = dw_store_get_token_summary (store, run_id, k, &error);
      g_autoptr (DwStepStats) stats = dw_store_get_step_stats (store, run_id, k, &error);
      g_assert_no_error (error);
      g_autoptr (DwWhatifStep) compact = dw_whatif_step_new_compact (b, k, &error);
      g_autoptr (DwWhatifStep) stored = dw_whatif_step_new_from_stats (stats, summary, &error);
      g_assert_no_error (error);
      if (k == 6)
        {
          const char *reason = NULL;
          g_assert_false (dw_whatif_step_is_fast (stored, &reason));
          g_assert_cmpstr (reason, ==, "mask value 0.5 at row 0, column 0 is not 0 or 1");
        }
      else
        {
          g_assert_true (dw_whatif_step_set_token_summary (compact, summary, &error));
          g_assert_true (dw_whatif_step_is_compact (stored));
        }
      g_assert_cmpuint (dw_whatif_step_get_n_tokens (stored), ==,
                        dw_whatif_step_get_n_tokens (compact));
      g_assert_cmpint (dw_whatif_step_get_step (stored), ==, k);
      g_autofree char *name = g_strdup_printf ("stored-%d (%zux%zu)", k, B, T);
      SameCase sc = { name, compact, stored };
      grid_all (same_case_fn, &sc);
      total.configs += sc.configs;
      total.metrics += sc.metrics;
      total.exact += sc.exact;
    }
  g_assert_true (dw_store_commit (store, &error));
  g_printerr ("from the stored statistics: %" G_GUINT64_FORMAT " configs, %" G_GUINT64_FORMAT
              " metrics (%" G_GUINT64_FORMAT " exact) as from the tokens\n",
              total.configs, total.metrics, total.exact);
  g_assert_cmpuint (total.exact * 10, >, total.metrics * 8);
  g_clear_object (&store);
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (command), ==, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* the engine's per-step memo of metric groups                                                 */

typedef struct
{
  DwWhatifEngine *engine;
  guint configs, steps, labelled;
  guint8 *labels; /* the engine's row labels (dw_whatif_engine_set_row_labels) */
  gsize n_rows;
} MemoCase;

/* labels rows (every step's in order) as the length-bias view does, @kind one of two labellings;
 * some rows have none */
static void
memo_case_label (MemoCase *mc, int kind)
{
  gsize row = 0;
  for (guint i = 0; i < dw_whatif_engine_get_n_steps (mc->engine); i++)
    for (gsize b = 0; b < dw_whatif_step_get_n_rows (dw_whatif_engine_get_step (mc->engine, i));
         b++, row++)
      mc->labels[row] = b % 11 == 0 ? DW_WHATIF_NO_LABEL
                        : kind == 0 ? (guint8)((i * 7 + b) % 5)
                                    : (guint8)((i + b * 3) % DW_WHATIF_MAX_LABELS);
  dw_whatif_engine_set_row_labels (mc->engine, mc->labels, mc->n_rows);
}

/* @a (an engine evaluation) equals @b (the step evaluated alone) bit for bit */
static void
assert_same_step_result (const DwWhatifStepResult *a, const DwWhatifStepResult *b)
{
  g_assert_cmpint (a->pending, ==, b->pending);
  g_assert_cmpint (a->failed, ==, b->failed);
  g_assert_cmpint (a->any_approximate, ==, b->any_approximate);
  if (a->failed)
    {
      g_assert_cmpint (a->error.kind, ==, b->error.kind);
      g_assert_cmpstr (a->error.message, ==, b->error.message);
    }
  g_assert_cmpuint (a->n_metrics, ==, b->n_metrics);
  /* the keys' tables are interned: equal keys are one table, however the results were made */
  g_assert_true (a->n_metrics == 0 || a->keys == b->keys);
  for (gsize m = 0; m < a->n_metrics; m++)
    {
      g_assert_cmpstr (dw_whatif_step_result_get_key (a, m), ==,
                       dw_whatif_step_result_get_key (b, m));
      g_assert_true (memcmp (&a->values[m], &b->values[m], sizeof (double)) == 0);
      g_assert_cmpint (a->approximate[m], ==, b->approximate[m]);
      g_assert_true (memcmp (&a->error_bound[m], &b->error_bound[m], sizeof (double)) == 0);
    }
}

/* @config evaluated twice by the engine (the second time every group comes from the memo), each
 * time equal to every step evaluated alone, row outcomes included */
static void
memo_case_fn (const DwConfig *config, gpointer data)
{
  MemoCase *mc = data;
  for (int again = 0; again < 2; again++)
    {
      /* halfway, other labels, between the two evaluations of one config: the counts a step's
       * memo keeps are those of the labels set before */
      if (mc->configs == 701)
        memo_case_label (mc, 1);
      g_autoptr (GError) error = NULL;
      g_autoptr (DwWhatifRunResult) run
        = dw_whatif_engine_evaluate_rows (mc->engine, config, &error);
      g_assert_no_error (error);
      guint64 label_rows[DW_WHATIF_MAX_LABELS] = { 0 },
              label_rejected[DW_WHATIF_MAX_LABELS] = { 0 };
      const guint8 *labels = mc->labels;
      for (guint i = 0; i < run->n_steps; i++)
        {
          const DwWhatifStep *step = dw_whatif_engine_get_step (mc->engine, i);
          gsize n_rows = dw_whatif_step_get_n_rows (step);
          g_autofree double *lengths = g_new (double, n_rows + 1);
          g_autofree guint8 *rejected = g_new (guint8, n_rows + 1);
          DwWhatifStepResult alone;
          dw_whatif_step_evaluate (step, config, &alone);
          assert_same_step_result (&run->results[i], &alone);
          dw_whatif_step_result_clear (&alone);
          labels += n_rows;
          /* the rows of a step with known outcomes count: a failed step's as the engine gives
           * them, the others' as the step alone gives them */
          const guint8 *outcome = run->row_rejected[i];
          if (!run->results[i].failed)
            {
              if (dw_whatif_step_row_outcomes (step, config, lengths, rejected))
                g_assert_true (memcmp (run->row_rejected[i], rejected, n_rows) == 0);
              else
                g_assert_null (run->row_rejected[i]);
              mc->steps++;
            }
          for (gsize b = 0; outcome != NULL && b < n_rows; b++)
            if (labels[(gssize)b - (gssize)n_rows] != DW_WHATIF_NO_LABEL)
              {
                label_rows[labels[(gssize)b - (gssize)n_rows]]++;
                label_rejected[labels[(gssize)b - (gssize)n_rows]] += outcome[b] != 0;
              }
        }
      /* a config verl rejects fails every step before any is evaluated: no outcomes */
      if (!run->has_labels)
        {
          for (guint i = 0; i < run->n_steps; i++)
            g_assert_true (run->results[i].failed);
          mc->configs++;
          continue;
        }
      mc->labelled++;
      g_assert_cmpmem (run->label_rows, sizeof label_rows, label_rows, sizeof label_rows);
      g_assert_cmpmem (run->label_rejected, sizeof label_rejected, label_rejected,
                       sizeof label_rejected);
      mc->configs++;
    }
}

/* The engine keeps each step's IS metrics and its RS and off-policy metrics for the next
 * evaluation, and takes them again when the plan fields they read are unchanged (a slider moves
 * one of them); with them, the step's rows and rejected rows per row label. Over the whole grid in
 * order (neighbouring configs share a group) and each config twice, on full and compact steps of
 * both dtypes and an empty one, every evaluation equals the steps evaluated alone, values, flags,
 * bounds, row outcomes and their counts per label (the labels changed halfway). */
static void
test_engine_memo (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (7177);
  g_autoptr (DwWhatifEngine) engine = dw_whatif_engine_new (2);
  MemoCase mc = { engine };
  for (gint64 s = 0; s < 17; s++)
    {
      g_autoptr (DwBatch) b = random_batch (
        r, (gsize)g_rand_int_range (r, 8, 24), (gsize)g_rand_int_range (r, 200, 700),
        s % 4 == 3 ? DW_DTYPE_F64 : DW_DTYPE_F32, DW_DTYPE_BOOL, s % 3 == 0 ? 0.05 : 0.4);
      g_autoptr (GError) error = NULL;
      if (s == 16)
        memset (b->response_mask, 0, b->rows * b->cols); /* BOOL: a byte each */
      DwWhatifStep *step
        = s % 2 ? dw_whatif_step_new_compact (b, s, &error) : dw_whatif_step_new (b, s, &error);
      g_assert_no_error (error);
      dw_whatif_engine_add_step (engine, step);
      mc.n_rows += dw_whatif_step_get_n_rows (step);
    }
  g_autofree guint8 *labels = g_new (guint8, mc.n_rows);
  mc.labels = labels;
  memo_case_label (&mc, 0);
  grid_all (memo_case_fn, &mc);
  /* IcePop bounds no weight falls in fail every step before its RS group rejects a row; the
   * same RS group under bounds that do not fail rejects rows again */
  for (int bounds = 0; bounds < 2; bounds++)
    {
      DwConfig c;
      dw_config_init (&c, DW_GEN_VERL_0_9_0);
      with (&c, "rollout_is", dw_value_str ("token"));
      with (&c, "rollout_is_threshold", dw_value_str (bounds == 0 ? "1e6_2e6" : "0.8_1.25"));
      with (&c, "rollout_rs", dw_value_str ("token_k1,seq_mean_k3"));
      with (&c, "rollout_rs_threshold", dw_value_str ("0.8_1.25,0.01"));
      memo_case_fn (&c, &mc);
    }
  g_test_message ("engine memo: %u evaluations (%u with label counts), %u step results equal",
                  mc.configs, mc.labelled, mc.steps);
  g_assert_cmpuint (mc.configs, >, 1000);
  g_assert_cmpuint (mc.labelled, >, 1000);
}

/* minor page faults of the process so far */
static glong
minor_faults (void)
{
  struct rusage usage;
  g_assert_cmpint (getrusage (RUSAGE_SELF, &usage), ==, 0);
  return usage.ru_minflt;
}

/* page faults of a move of an interactive or plain engine over 2000 steps: evaluations 2 and 3,
 * each made while the one before is kept */
static glong
move_faults (gboolean interactive)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (5);
  g_autoptr (DwWhatifEngine) engine = dw_whatif_engine_new (2);
  dw_whatif_engine_set_interactive (engine, interactive);
  for (gint64 s = 0; s < 2000; s++)
    {
      g_autoptr (DwBatch) b = random_batch (r, 4, 32, DW_DTYPE_F32, DW_DTYPE_BOOL, 0.4);
      dw_whatif_engine_add_step (engine, dw_whatif_step_new (b, s, NULL));
    }
  DwWhatifRunResult *shown = NULL;
  glong faults = 0;
  for (int move = 0; move < 3; move++)
    {
      DwConfig c;
      dw_config_init (&c, DW_GEN_VERL_0_9_0);
      with (&c, "rollout_is", dw_value_str ("token"));
      with (&c, "rollout_is_threshold", dw_value_float (1.5 + move * 0.1));
      glong before = minor_faults ();
      DwWhatifRunResult *res = dw_whatif_engine_evaluate_rows (engine, &c, NULL);
      faults += move > 0 ? minor_faults () - before : 0;
      dw_whatif_run_result_free (shown);
      shown = res;
    }
  dw_whatif_run_result_free (shown);
  return faults;
}

/* An interactive engine (the Tune page's: each result kept until the next is made) gives the
 * values and row outcomes of an engine that frees everything, a run that grows between moves (a
 * live run) and a config verl rejects included; and its moves map no fresh memory, where a plain
 * engine's map their results' (1.1 MB for 2000 steps: 280 pages a move). What else a move maps is
 * under 100 pages (8–12 measured with gcc, 26 under clang's ASan, whose shadow memory counts). */
static void
test_engine_interactive (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (4242);
  g_autoptr (DwWhatifEngine) interactive = dw_whatif_engine_new (2);
  g_autoptr (DwWhatifEngine) plain = dw_whatif_engine_new (2);
  dw_whatif_engine_set_interactive (interactive, TRUE);
  DwWhatifRunResult *shown = NULL;
  guint n_steps = 0;
  for (guint move = 0; move < 60; move++)
    {
      /* a live run: 70 steps, then 40 more after move 20, so that the steps outgrow the room
       * the arrays were given */
      for (guint target = move < 20 ? 70 : 110; n_steps < target; n_steps++)
        {
          g_autoptr (DwBatch) b
            = random_batch (r, (gsize)g_rand_int_range (r, 4, 20), 300, DW_DTYPE_F32, DW_DTYPE_BOOL,
                            n_steps % 5 == 0 ? 0.05 : 0.4);
          g_autoptr (GError) error = NULL;
          for (int e = 0; e < 2; e++)
            {
              DwWhatifStep *step = n_steps % 2 ? dw_whatif_step_new_compact (b, n_steps, &error)
                                               : dw_whatif_step_new (b, n_steps, &error);
              g_assert_no_error (error);
              dw_whatif_engine_add_step (e ? plain : interactive, step);
            }
        }
      DwConfig c;
      dw_config_init (&c, DW_GEN_VERL_0_9_0);
      with (&c, "rollout_is", dw_value_str ("token"));
      with (&c, "rollout_is_threshold", dw_value_float (1.05 + move * 0.03));
      with (&c, "rollout_rs", dw_value_str ("seq_mean_k3"));
      /* move 40: a negative bound verl rejects */
      with (&c, "rollout_rs_threshold", dw_value_float (move == 40 ? -1.0 : 1e-4 * (1 + move % 7)));
      g_autoptr (GError) error = NULL;
      DwWhatifRunResult *res = dw_whatif_engine_evaluate_rows (interactive, &c, &error);
      g_assert_no_error (error);
      g_autoptr (DwWhatifRunResult) ref = dw_whatif_engine_evaluate_rows (plain, &c, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (res->n_steps, ==, n_steps);
      g_assert_cmpuint (ref->n_steps, ==, n_steps);
      for (guint i = 0; i < n_steps; i++)
        {
          assert_same_step_result (&res->results[i], &ref->results[i]);
          g_assert_true ((res->row_rejected[i] == NULL) == (ref->row_rejected[i] == NULL));
          if (ref->row_rejected[i] != NULL)
            g_assert_true (memcmp (res->row_rejected[i], ref->row_rejected[i],
                                   dw_whatif_step_get_n_rows (dw_whatif_engine_get_step (plain, i)))
                           == 0);
        }
      g_assert_cmpint (move == 40, ==, res->results[0].failed);
      dw_whatif_run_result_free (shown);
      shown = res;
    }
  dw_whatif_run_result_free (shown);
  glong plain_faults = move_faults (FALSE), interactive_faults = move_faults (TRUE);
  g_test_message ("page faults of two moves over 2000 steps: %ld plain, %ld interactive",
                  plain_faults, interactive_faults);
  g_assert_cmpint (plain_faults, >=, 2 * 280);
  g_assert_cmpint (interactive_faults, <, 100);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/whatif/golden", test_golden);
  g_test_add_func ("/whatif/random", test_random);
  g_test_add_func ("/whatif/large", test_large);
  g_test_add_func ("/whatif/threshold-below-one", test_threshold_below_one);
  g_test_add_func ("/whatif/exact-pass", test_exact_pass);
  g_test_add_func ("/whatif/histogram", test_histogram);
  g_test_add_func ("/whatif/compact", test_compact);
  g_test_add_func ("/whatif/compact-summary", test_compact_summary);
  g_test_add_func ("/whatif/vector-variants", test_vector_variants);
  g_test_add_func ("/whatif/stored-stats", test_stored_stats);
  g_test_add_func ("/whatif/engine-memo", test_engine_memo);
  g_test_add_func ("/whatif/engine-interactive", test_engine_interactive);
  return g_test_run ();
}
