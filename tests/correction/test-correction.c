/* test-correction.c — unit tests on batches nobody has seen: worked examples, extremes, dtypes,
 * and a randomized cross-check against the numpy restatement of the spec (oracle.py)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "dw-correction.h"
#include "dw-test-util.h"

static DwBatch *
batch_from (size_t B, size_t T, DwDType lp, DwDType md, const double *old, const double *roll,
            const double *mask)
{
  DwBatch *b = dw_batch_new (B, T, lp, md);
  g_assert_nonnull (b);
  for (size_t i = 0; i < B * T; i++)
    {
      if (lp == DW_DTYPE_F32)
        {
          ((float *)b->old_log_prob)[i] = (float)old[i];
          ((float *)b->rollout_log_prob)[i] = (float)roll[i];
        }
      else
        {
          ((double *)b->old_log_prob)[i] = old[i];
          ((double *)b->rollout_log_prob)[i] = roll[i];
        }
      switch (md)
        {
        case DW_DTYPE_BOOL:
        case DW_DTYPE_U8:
          ((uint8_t *)b->response_mask)[i] = (uint8_t)mask[i];
          break;
        case DW_DTYPE_I32:
          ((int32_t *)b->response_mask)[i] = (int32_t)mask[i];
          break;
        case DW_DTYPE_I64:
          ((int64_t *)b->response_mask)[i] = (int64_t)mask[i];
          break;
        case DW_DTYPE_F32:
          ((float *)b->response_mask)[i] = (float)mask[i];
          break;
        case DW_DTYPE_F64:
          ((double *)b->response_mask)[i] = mask[i];
          break;
        default:
          g_assert_not_reached ();
        }
    }
  return b;
}

static double
metric (const DwCorrectionResult *r, const char *key)
{
  const double *v = dw_correction_result_get (r, key);
  if (!v)
    g_error ("missing metric %s", key);
  return *v;
}

static double
mask_at (const DwCorrectionResult *r, size_t i)
{
  switch (r->mask_dtype)
    {
    case DW_DTYPE_F32:
      return ((float *)r->mask)[i];
    case DW_DTYPE_F64:
      return ((double *)r->mask)[i];
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      return ((uint8_t *)r->mask)[i];
    case DW_DTYPE_I32:
      return ((int32_t *)r->mask)[i];
    case DW_DTYPE_I64:
      return (double)((int64_t *)r->mask)[i];
    default:
      g_assert_not_reached ();
    }
}

static double
weight_at (const DwCorrectionResult *r, size_t i)
{
  return r->weights_dtype == DW_DTYPE_F32 ? ((float *)r->weights)[i] : ((double *)r->weights)[i];
}

static void
set_s (DwConfig *c, const char *k, const char *v)
{
  DwValue x = dw_value_str (v);
  g_assert_true (dw_config_set (c, k, &x));
}

static void
set_f (DwConfig *c, const char *k, double v)
{
  DwValue x = dw_value_float (v);
  g_assert_true (dw_config_set (c, k, &x));
}

/* §4.3: k1 bounds the inverse ratio since v0.7.1, §5.1: before, RS bounds the ratio itself */
static void
test_worked_k1_inverts (void)
{
  const double r[4] = { 0.65, 1.6, 1.0, 0.55 };
  double old[4], roll[4], m[4] = { 1, 1, 1, 1 };
  for (int i = 0; i < 4; i++)
    roll[i] = -1, old[i] = -1 + log (r[i]);
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_batch_free);
  DwBatch *b = batch_from (1, 4, DW_DTYPE_F32, DW_DTYPE_I64, old, roll, m);
  g_ptr_array_add (keep, b);
  DwConfig c;
  DwCorrectionResult res;
  DwCorrectionError e;
  dw_config_init (&c, DW_GEN_VERL);
  set_s (&c, "rollout_rs", "token_k1");
  set_s (&c, "rollout_rs_threshold", "0.6_1.4");
  g_assert_true (dw_correction_run (b, &c, &res, &e));
  const double head[4] = { 0, 1, 1, 0 }, g2[4] = { 1, 0, 1, 0 };
  g_assert_cmpint (res.mask_dtype, ==, DW_DTYPE_I64);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat (mask_at (&res, i), ==, head[i]);
  g_assert_null (res.weights);
  dw_correction_result_clear (&res);
  dw_config_init (&c, DW_GEN_VERL_0_7);
  set_s (&c, "rollout_is", "token");
  set_s (&c, "rollout_rs", "token");
  set_f (&c, "rollout_rs_threshold", 1.4);
  set_f (&c, "rollout_rs_threshold_lower", 0.6);
  g_assert_true (dw_correction_run (b, &c, &res, &e));
  g_assert_cmpint (res.mask_dtype, ==, DW_DTYPE_F32); /* G2 returns float32 for int64 masks */
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat (mask_at (&res, i), ==, g2[i]);
  g_assert_nonnull (res.weights);
  dw_correction_result_clear (&res);
}

/* §4.3: per-token clamp before the RS sum; §3.1: clamp after the sum for IS */
static void
test_worked_clamp_order (void)
{
  const double l[6] = { 25, -10, 0, 0, 0, 0 };
  double old[6], roll[6], m[6] = { 1, 1, 1, 1, 1, 1 };
  for (int i = 0; i < 6; i++)
    roll[i] = -30, old[i] = -30 + l[i];
  DwBatch *b = batch_from (2, 3, DW_DTYPE_F32, DW_DTYPE_F32, old, roll, m);
  DwConfig c;
  DwCorrectionResult res;
  DwCorrectionError e;
  dw_config_init (&c, DW_GEN_VERL);
  set_s (&c, "rollout_is", "sequence");
  set_f (&c, "rollout_is_threshold", INFINITY);
  set_s (&c, "rollout_rs", "seq_sum_k1,seq_sum_k2");
  set_s (&c, "rollout_rs_threshold", "1e-9_1e9,1000");
  g_assert_true (dw_correction_run (b, &c, &res, &e));
  g_assert_cmpfloat_with_epsilon (weight_at (&res, 0), 3269017.5, 1.0); /* e^15, not clamped */
  g_assert_cmpfloat (metric (&res, "rollout_corr/rollout_rs_seq_sum_k1_seq_min"), ==, -10.0);
  g_assert_cmpfloat (metric (&res, "rollout_corr/rollout_rs_seq_sum_k2_seq_max"), ==, 250.0);
  double chi2 = metric (&res, "rollout_corr/chi2_seq");
  g_assert_cmpfloat (fabs (chi2 - ((exp (30) + 1) / 2 - 1)) / chi2, <, 1e-6);
  dw_correction_result_clear (&res);
  dw_batch_free (b);
}

/* Thresholds whose lower clamp bound exceeds the upper one: torch.clamp(x, min=lo, max=hi) and
 * np.clip are min(max(x, lo), hi), so every value becomes hi. rollout_is_threshold C = 0.5 makes
 * the std/ESS clamp [1/C, C] = [2, 0.5] (§3.3), a k1 spec "2.0_0.5" the RS std clamp
 * [log 2, log 0.5] (§4.4), slime clip with L = 3 > U = 0.5 the weights themselves (§7.1). The
 * ratios below mix values under both bounds, between them and above both, so a clamp that sends
 * values below lo to lo gives a spread (std > 0) where the spec gives a constant. */
static void
test_worked_threshold_below_one (void)
{
  /* row 0: ratios 0.1, 0.25, 3 (product 0.075, mean k1 = 0.863 > log 2); row 1: 3, 1.9, padding
   * (product 5.7, mean k1 = −0.870 < log 0.5) */
  const double r[6] = { 0.1, 0.25, 3.0, 3.0, 1.9, 1.0 }, m[6] = { 1, 1, 1, 1, 1, 0 };
  const double N = 5, eps = 1e-8;
  double old[6], roll[6];
  for (int i = 0; i < 6; i++)
    roll[i] = -2, old[i] = -2 + log (r[i]);
  const DwDType lps[] = { DW_DTYPE_F32, DW_DTYPE_F64 };
  const char *levels[] = { "token", "sequence" };
  for (gsize d = 0; d < G_N_ELEMENTS (lps); d++)
    for (gsize lv = 0; lv < G_N_ELEMENTS (levels); lv++)
      {
        DwBatch *b = batch_from (2, 3, lps[d], DW_DTYPE_I64, old, roll, m);
        DwConfig c;
        DwCorrectionResult res;
        DwCorrectionError e;
        dw_config_init (&c, DW_GEN_VERL);
        set_s (&c, "rollout_is", levels[lv]);
        set_f (&c, "rollout_is_threshold", 0.5);
        set_s (&c, "rollout_rs", "token_k1,seq_mean_k1");
        set_s (&c, "rollout_rs_threshold", "2.0_0.5");
        g_assert_true (dw_correction_run (b, &c, &res, &e));
        /* u = hi for each of the N valid tokens: MMEAN(u) = hi·N/(N + ε), MMEAN(u²) = hi²·N/(N + ε)
         * give var = hi²·N·ε/(N + ε)² and ESS = 1/MMEAN((u/(ū + ε))²) = (ū + ε)²·(N + ε)/(hi²·N).
         * In float32 N + ε rounds to N and each MMEAN is R(R(Σ)/N): for hi = 0.5 ū = hi
         * exactly, var = 0, ESS = 1; for hi = R(log 0.5) the float32 sums N·hi, N·R(hi²) round. */
        const double is_hi = 0.5, rs_hi = fabs ((double)(float)log (0.5));
        const char *std_keys[]
          = { "rollout_corr/rollout_is_std", "rollout_corr/rollout_rs_token_k1_std",
              "rollout_corr/rollout_rs_seq_mean_k1_std" };
        const double his[] = { is_hi, rs_hi, rs_hi };
        for (gsize k = 0; k < G_N_ELEMENTS (std_keys); k++)
          {
            const double got = metric (&res, std_keys[k]);
            if (lps[d] == DW_DTYPE_F32)
              {
                const double h = his[k], h2 = (float)(h * h);
                const double mc = (float)((double)(float)(N * h) / N);
                const double m2 = (float)((double)(float)(N * h2) / N);
                const double var = (float)(m2 - (double)(float)(mc * mc));
                g_assert_cmpfloat (got, ==, sqrt (fmax (var, 0.0)));
                if (k == 0)
                  g_assert_cmpfloat (got, ==, 0.0);
              }
            else
              {
                const double want = his[k] * sqrt (N * eps) / (N + eps);
                if (!(fabs (got - want) <= 1e-6 * want))
                  g_error ("%s %s %s = %.9g, want %.9g", dw_dtype_name (lps[d]), levels[lv],
                           std_keys[k], got, want);
              }
          }
        const double ess = metric (&res, "rollout_corr/rollout_is_eff_sample_size");
        if (lps[d] == DW_DTYPE_F32)
          g_assert_cmpfloat (ess, ==, 1.0);
        else
          {
            const double ub = is_hi * N / (N + eps) + eps;
            const double want = ub * ub * (N + eps) / (is_hi * is_hi * N);
            g_assert_cmpfloat (fabs (ess - want), <=, 1e-12);
          }
        /* the counts keep their meaning with the given bounds: ratio > C = 0.5 and < 1/C = 2 */
        if (lv == 0)
          {
            g_assert_cmpfloat_with_epsilon (
              metric (&res, "rollout_corr/rollout_is_ratio_fraction_high"), 3 / (N + eps), 1e-7);
            g_assert_cmpfloat_with_epsilon (
              metric (&res, "rollout_corr/rollout_is_ratio_fraction_low"), 3 / (N + eps), 1e-7);
          }
        /* verl accepts lower > upper for k1 (§4.2): every token is rejected */
        g_assert_cmpfloat_with_epsilon (metric (&res, "rollout_corr/rollout_rs_masked_fraction"),
                                        N / (N + eps), 1e-7);
        for (int i = 0; i < 6; i++)
          g_assert_cmpfloat (mask_at (&res, i), ==, 0);
        dw_correction_result_clear (&res);

        /* slime clip mode, L = 3 > U = 0.5: w = clamp(w, L, U)·m = U on every valid token */
        dw_config_init (&c, DW_GEN_SLIME);
        set_s (&c, "tis_level", levels[lv]);
        set_s (&c, "tis_mode", "clip");
        set_f (&c, "tis_lower_bound", 3.0);
        set_f (&c, "tis_upper_bound", 0.5);
        DwValue no = dw_value_bool (FALSE);
        g_assert_true (dw_config_set (&c, "tis_batch_normalize", &no));
        g_assert_true (dw_correction_run (b, &c, &res, &e));
        g_assert_nonnull (res.weights);
        for (int i = 0; i < 6; i++)
          g_assert_cmpfloat (weight_at (&res, i), ==, 0.5 * m[i]);
        /* per-sample means of the bounded weight, averaged over the 2 samples */
        g_assert_cmpfloat_with_epsilon (metric (&res, "mis_tis_weight_after_bound"), 0.5, 1e-7);
        dw_correction_result_clear (&res);
        dw_batch_free (b);
      }
}

/* the tiny batch with token IS, C = 2 (golden verl_HEAD/tiny__tis_token_t2), for every mask dtype:
 * same metrics, HEAD keeps the mask dtype */
static const double tiny_old[12]
  = { -0.5, -1.0, -0.2, -2.0, -0.1, -0.3, -4.0, -0.7, -1.0, -1.0, -1.0, -1.0 };
static const double tiny_roll[12]
  = { -0.6, -0.9, -0.2, -1.0, -0.1, -0.2, -1.0, -9.9, -1.0, -1.2, -0.1, -3.0 };
static const double tiny_mask[12] = { 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0 };

static void
test_mask_dtypes (void)
{
  const DwDType dts[]
    = { DW_DTYPE_BOOL, DW_DTYPE_U8, DW_DTYPE_I32, DW_DTYPE_I64, DW_DTYPE_F32, DW_DTYPE_F64 };
  for (gsize k = 0; k < G_N_ELEMENTS (dts); k++)
    {
      DwBatch *b = batch_from (3, 4, DW_DTYPE_F32, dts[k], tiny_old, tiny_roll, tiny_mask);
      DwConfig c;
      DwCorrectionResult res;
      DwCorrectionError e;
      dw_config_init (&c, DW_GEN_VERL);
      set_s (&c, "rollout_is", "token");
      set_f (&c, "rollout_is_threshold", 2.0);
      set_s (&c, "rollout_rs", "token_k1");
      set_s (&c, "rollout_rs_threshold", "0.6_1.4");
      g_assert_true (dw_correction_run (b, &c, &res, &e));
      g_assert_cmpint (res.mask_dtype, ==, dts[k]);
      g_assert_cmpfloat_with_epsilon (metric (&res, "rollout_corr/rollout_is_mean"), 0.8393239,
                                      1e-6);
      g_assert_cmpfloat_with_epsilon (metric (&res, "rollout_corr/rollout_is_eff_sample_size"),
                                      0.9369107, 1e-6);
      g_assert_cmpfloat_with_epsilon (metric (&res, "rollout_corr/kl"), 0.4333333, 1e-6);
      g_assert_cmpfloat_with_epsilon (
        metric (&res, "rollout_corr/rollout_rs_token_k1_masked_fraction"), 2.0 / 9, 1e-7);
      const double want[12] = { 1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 0, 0 };
      for (int i = 0; i < 12; i++)
        g_assert_cmpfloat (mask_at (&res, i), ==, want[i]);
      dw_correction_result_clear (&res);
      dw_batch_free (b);
    }
}

/* float64 input: every op in float64, results agree with float32 to float32 rounding */
static void
test_f64_vs_f32 (void)
{
  DwBatch *b32 = batch_from (3, 4, DW_DTYPE_F32, DW_DTYPE_I64, tiny_old, tiny_roll, tiny_mask);
  DwBatch *b64 = batch_from (3, 4, DW_DTYPE_F64, DW_DTYPE_I64, tiny_old, tiny_roll, tiny_mask);
  DwConfig c;
  dw_preset_config (DW_GEN_VERL, "decoupled_geo_rs_seq_tis", &c, NULL);
  DwCorrectionResult r32, r64;
  DwCorrectionError e;
  g_assert_true (dw_correction_run (b32, &c, &r32, &e));
  g_assert_true (dw_correction_run (b64, &c, &r64, &e));
  g_assert_cmpint (r64.weights_dtype, ==, DW_DTYPE_F64);
  g_assert_cmpuint (r32.n_metrics, ==, r64.n_metrics);
  for (size_t i = 0; i < r32.n_metrics; i++)
    {
      g_assert_cmpstr (r32.metrics[i].key, ==, r64.metrics[i].key);
      double a = r32.metrics[i].value, d = r64.metrics[i].value;
      if (!(fabs (a - d) <= 1e-5 + 1e-5 * fabs (d)))
        g_error ("%s: f32 %.9g f64 %.9g", r32.metrics[i].key, a, d);
    }
  dw_correction_result_clear (&r32);
  dw_correction_result_clear (&r64);
  dw_batch_free (b32);
  dw_batch_free (b64);
}

/* extremes: B=1/T=1, all-padding rows, NaN/±inf on padding, −0.0 */
static void
test_extremes (void)
{
  DwConfig c;
  DwCorrectionResult res;
  DwCorrectionError e;
  /* B = 1, T = 1 */
  double o1 = -0.0, r1 = 0.0, m1 = 1;
  DwBatch *b = batch_from (1, 1, DW_DTYPE_F32, DW_DTYPE_BOOL, &o1, &r1, &m1);
  dw_preset_config (DW_GEN_VERL, "decoupled_token_is", &c, NULL);
  g_assert_true (dw_correction_run (b, &c, &res, &e));
  g_assert_cmpfloat (metric (&res, "rollout_corr/rollout_is_std"), ==, 0.0); /* N = 1 */
  g_assert_cmpfloat (metric (&res, "rollout_corr/rollout_is_seq_std"), ==, 0.0);
  g_assert_cmpfloat (weight_at (&res, 0), ==, 1.0);
  dw_correction_result_clear (&res);
  dw_batch_free (b);
  /* NaN and -inf on padding; an all-padding row */
  double old[6] = { -1, NAN, -INFINITY, 0, 0, 0 }, roll[6] = { -1, NAN, -INFINITY, 0, 0, 0 };
  double m[6] = { 1, 0, 0, 0, 0, 0 };
  b = batch_from (2, 3, DW_DTYPE_F32, DW_DTYPE_I64, old, roll, m);
  g_assert_true (dw_correction_run (b, &c, &res, &e));
  g_assert_true (isnan (weight_at (&res, 1))); /* token-level zeroing is a multiplication */
  g_assert_cmpfloat (weight_at (&res, 3), ==, 0.0);
  g_assert_true (isfinite (metric (&res, "rollout_corr/rollout_is_mean")));
  g_assert_cmpfloat (metric (&res, "rollout_corr/rollout_is_seq_min"), ==, 0.0); /* empty row */
  g_assert_cmpfloat_with_epsilon (metric (&res, "rollout_corr/training_ppl"), (exp (1.0) + 1.0) / 2,
                                  1e-6);
  dw_correction_result_clear (&res);
  dw_preset_config (DW_GEN_VERL, "decoupled_seq_is", &c, NULL);
  g_assert_true (dw_correction_run (b, &c, &res, &e));
  g_assert_cmpfloat (weight_at (&res, 1), ==, 0.0); /* sequence level uses where: immune */
  dw_correction_result_clear (&res);
  /* +inf log ratio on a valid token: k3_kl overflows to +inf, weights clamp at e^20 */
  old[0] = 0, roll[0] = -200;
  dw_batch_free (b);
  b = batch_from (2, 3, DW_DTYPE_F32, DW_DTYPE_I64, old, roll, m);
  dw_preset_config (DW_GEN_VERL, "decoupled_token_is", &c, NULL);
  g_assert_true (dw_correction_run (b, &c, &res, &e));
  g_assert_cmpfloat (metric (&res, "rollout_corr/k3_kl"), ==, INFINITY);
  g_assert_cmpfloat_with_epsilon (metric (&res, "rollout_corr/rollout_is_max"), expf (20.0f), 1);
  dw_correction_result_clear (&res);
  dw_batch_free (b);
  /* an all-zero mask: verl's first error */
  double z = 0;
  b = batch_from (1, 1, DW_DTYPE_F32, DW_DTYPE_F32, &z, &z, &z);
  g_assert_false (dw_correction_run (b, &c, &res, &e));
  g_assert_cmpint (e.kind, ==, DW_ERROR_VALUE);
  g_assert_cmpstr (e.message, ==, "response_mask must contain at least one valid token (1).");
  dw_batch_free (b);
}

static void
test_check_config (void)
{
  DwConfig c;
  DwCorrectionError e;
  dw_config_init (&c, DW_GEN_VERL);
  set_s (&c, "rollout_rs", "seq_sum_k1");
  set_s (&c, "rollout_rs_threshold", "0");
  g_assert_false (dw_correction_check_config (&c, &e));
  g_assert_cmpstr (dw_error_kind_name (e.kind), ==, "ZeroDivisionError");
  set_s (&c, "rollout_is", "geometric");
  g_assert_false (dw_correction_check_config (&c, &e)); /* IS errors come first */
  g_assert_cmpstr (e.message, ==,
                   "Invalid rollout_is: geometric. Must be one of {'sequence', 'token'}.");
  for (int g = 0; g < DW_N_GENERATIONS; g++)
    {
      size_t n;
      const DwPresetInfo *l = dw_preset_list ((DwGeneration)g, &n);
      for (size_t i = 0; i < n; i++)
        {
          g_assert_true (dw_preset_config ((DwGeneration)g, l[i].name, &c, &e));
          g_assert_true (dw_correction_check_config (&c, &e));
          g_assert_cmpuint (strlen (l[i].description), >, 5);
        }
    }
  g_assert_false (dw_preset_config (DW_GEN_VERL, "decoupled_k1_rs", &c, &e)); /* doc-only name */
}

/* randomized cross-check against oracle.py (spec_ref.py) on fresh shapes, seeds and extremes */
static guint64 rs_state;
static double
rnd (void)
{
  rs_state ^= rs_state << 13;
  rs_state ^= rs_state >> 7;
  rs_state ^= rs_state << 17;
  return (rs_state >> 11) * (1.0 / 9007199254740992.0);
}

static void
write_raw (const char *path, const DwBatch *b)
{
  g_autoptr (GString) s = g_string_new (NULL);
  g_string_append_printf (s, "%zu %zu %s %s\n", b->rows, b->cols, dw_dtype_name (b->lp_dtype),
                          dw_dtype_name (b->mask_dtype));
  size_t n = b->rows * b->cols;
  g_string_append_len (s, b->old_log_prob, n * dw_dtype_size (b->lp_dtype));
  g_string_append_len (s, b->rollout_log_prob, n * dw_dtype_size (b->lp_dtype));
  g_string_append_len (s, b->response_mask, n * dw_dtype_size (b->mask_dtype));
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
}

static void
test_random_vs_oracle (void)
{
  static const struct
  {
    const char *gen;
    DwGeneration g;
    const char *json;
  } cfgs[] = {
    { "verl", DW_GEN_VERL, "{\"rollout_is\": \"token\", \"rollout_is_threshold\": 2.0}" },
    { "verl", DW_GEN_VERL,
      "{\"rollout_is\": \"sequence\", \"rollout_is_threshold\": 3.0, "
      "\"rollout_is_batch_normalize\": true, \"rollout_rs\": \"seq_max_k3,token_k1, seq_mean_k1\", "
      "\"rollout_rs_threshold\": \"2.0,0.5_1.5,0.9\"}" },
    { "verl", DW_GEN_VERL,
      "{\"rollout_is\": \"token\", \"rollout_is_batch_normalize\": true, \"rollout_rs\": "
      "\"seq_sum_k2,token_k3,seq_mean_k3\", \"rollout_rs_threshold\": 0.05}" },
    { "verl-0.7", DW_GEN_VERL_0_7,
      "{\"rollout_is\": \"sequence\", \"rollout_is_batch_normalize\": true, \"rollout_rs\": "
      "\"geometric\", \"rollout_rs_threshold\": 1.05, \"rollout_token_veto_threshold\": 0.01}" },
    { "verl-0.6.1", DW_GEN_VERL_0_6_1,
      "{\"rollout_is\": \"sequence\", \"rollout_is_batch_normalize\": true, \"rollout_rs\": "
      "\"token\", \"rollout_rs_threshold\": 1.5}" },
    { "slime", DW_GEN_SLIME,
      "{\"use_tis\": true, \"use_rs\": true, \"tis_level\": \"sequence\", \"rs_level\": "
      "\"geometric\", \"tis_mode\": \"clip\", \"tis_upper_bound\": 2.0, \"rs_veto_threshold\": "
      "0.001, \"tis_batch_normalize\": true}" },
    /* lower clamp bounds above the upper ones (torch.clamp / np.clip give the upper bound) */
    { "verl", DW_GEN_VERL,
      "{\"rollout_is\": \"token\", \"rollout_is_threshold\": 0.5, \"rollout_rs\": "
      "\"token_k1,seq_sum_k1,seq_mean_k1\", \"rollout_rs_threshold\": "
      "\"2.0_0.5,1.5_0.9,1.2_0.8\"}" },
    { "verl", DW_GEN_VERL, "{\"rollout_is\": \"sequence\", \"rollout_is_threshold\": 0.7}" },
    { "verl-0.7", DW_GEN_VERL_0_7,
      "{\"rollout_is\": \"token\", \"rollout_is_threshold\": 0.4, \"rollout_rs\": "
      "\"sequence\", \"rollout_rs_threshold\": 0.8, \"rollout_rs_threshold_lower\": 1.5}" },
    { "slime", DW_GEN_SLIME,
      "{\"use_tis\": true, \"tis_level\": \"token\", \"tis_mode\": \"clip\", "
      "\"tis_lower_bound\": 3.0, \"tis_upper_bound\": 0.5, \"tis_batch_normalize\": false}" },
  };
  g_autofree char *dir = g_dir_make_tmp ("dw-oracle-XXXXXX", NULL);
  g_autofree char *raw = g_build_filename (dir, "b.raw", NULL);
  g_autofree char *oracle = g_test_build_filename (G_TEST_DIST, "correction", "oracle.py", NULL);
  guint n_cmp = 0;
  for (guint seed = 1; seed <= 4; seed++)
    {
      rs_state = 0x12345678u * seed + 1;
      size_t B = 1 + (size_t)(rnd () * 9), T = 1 + (size_t)(rnd () * 40);
      DwDType lp = seed % 2 ? DW_DTYPE_F32 : DW_DTYPE_F64;
      DwDType md = (DwDType[]){ DW_DTYPE_BOOL, DW_DTYPE_I64, DW_DTYPE_F32, DW_DTYPE_U8 }[seed % 4];
      DwBatch *b = dw_batch_new (B, T, lp, md);
      gboolean any = FALSE;
      for (size_t i = 0; i < B * T; i++)
        {
          double o = -fabs (log (rnd () + 1e-9)), r = o + (rnd () - 0.5) * (seed == 3 ? 8 : 0.6);
          gboolean v = rnd () < 0.7 && (i / T) != 1; /* row 1 all padding when B > 1 */
          if (!v && rnd () < 0.3)
            o = NAN, r = NAN; /* garbage on padding */
          if (v && rnd () < 0.02)
            r = o + 30; /* extreme log ratio */
          any |= v;
          if (lp == DW_DTYPE_F32)
            ((float *)b->old_log_prob)[i] = (float)o, ((float *)b->rollout_log_prob)[i] = (float)r;
          else
            ((double *)b->old_log_prob)[i] = o, ((double *)b->rollout_log_prob)[i] = r;
          double mv = v;
          if (md == DW_DTYPE_F32)
            ((float *)b->response_mask)[i] = (float)mv;
          else if (md == DW_DTYPE_I64)
            ((int64_t *)b->response_mask)[i] = (int64_t)mv;
          else
            ((uint8_t *)b->response_mask)[i] = (uint8_t)mv;
        }
      if (!any)
        {
          dw_batch_free (b);
          continue;
        }
      write_raw (raw, b);
      for (gsize k = 0; k < G_N_ELEMENTS (cfgs); k++)
        {
          const char *py = g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE)
                             ? "/usr/bin/python3"
                             : "python3";
          char *argv[]
            = { (char *)py, oracle, raw, (char *)cfgs[k].gen, (char *)cfgs[k].json, NULL };
          g_autofree char *out = NULL;
          int status;
          g_autoptr (GError) err = NULL;
          g_assert_true (g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                                       NULL, &status, &err));
          g_assert_true (g_spawn_check_wait_status (status, NULL));
          g_autoptr (JsonParser) jp = json_parser_new ();
          g_assert_true (json_parser_load_from_data (jp, out, -1, NULL));
          JsonObject *o = json_node_get_object (json_parser_get_root (jp));
          DwConfig c;
          dw_config_init (&c, cfgs[k].g);
          g_autoptr (JsonParser) cp = json_parser_new ();
          g_assert_true (json_parser_load_from_data (cp, cfgs[k].json, -1, NULL));
          g_assert_true (
            dw_test_config_from_json (&c, json_node_get_object (json_parser_get_root (cp))));
          DwCorrectionResult res;
          DwCorrectionError e;
          gboolean ok = dw_correction_run (b, &c, &res, &e);
          JsonNode *en = json_object_get_member (o, "error");
          if (!JSON_NODE_HOLDS_NULL (en))
            {
              g_assert_false (ok);
              g_assert_cmpstr (dw_error_kind_name (e.kind), ==, json_node_get_string (en));
              continue;
            }
          if (!ok)
            g_error ("seed %u cfg %zu: %s", seed, k, e.message);
          JsonObject *mo = json_object_get_object_member (o, "metrics");
          g_assert_cmpuint (json_object_get_size (mo), ==, res.n_metrics);
          for (size_t i = 0; i < res.n_metrics; i++)
            {
              JsonNode *n = json_object_get_member (mo, res.metrics[i].key);
              if (!n)
                g_error ("seed %u cfg %zu: extra %s", seed, k, res.metrics[i].key);
              if (!dw_test_close (n, res.metrics[i].value,
                                  g_str_has_suffix (res.metrics[i].key, "_std")))
                g_error ("seed %u cfg %zu (%s): %s = %.9g, oracle %s", seed, k, cfgs[k].gen,
                         res.metrics[i].key, res.metrics[i].value, json_to_string (n, FALSE));
              n_cmp++;
            }
          JsonArray *ma = json_object_get_array_member (o, "mask");
          for (size_t i = 0; i < B * T; i++)
            {
              double want = json_array_get_double_element (ma, i);
              if (mask_at (&res, i) != want)
                g_error ("seed %u cfg %zu: mask[%zu] %g != %g", seed, k, i, mask_at (&res, i),
                         want);
            }
          dw_correction_result_clear (&res);
        }
      dw_batch_free (b);
    }
  g_unlink (raw);
  g_rmdir (dir);
  g_assert_cmpuint (n_cmp, >, 100);
}

/* Config value helpers shared by the correction plan, the what-if engine and the tune view. */
static void
test_config_values (void)
{
  DwConfig c;
  DwValue other = dw_value_none ();

  other.kind = DW_VALUE_OTHER;
  snprintf (other.s, sizeof other.s, "[]");
  g_assert_false (dw_value_truthy (&(DwValue){ 0 }));
  g_assert_false (dw_value_truthy (&(DwValue){ .kind = DW_VALUE_BOOL, .b = false }));
  g_assert_true (dw_value_truthy (&(DwValue){ .kind = DW_VALUE_BOOL, .b = true }));
  g_assert_false (dw_value_truthy (&(DwValue){ .kind = DW_VALUE_INT, .i = 0 }));
  g_assert_true (dw_value_truthy (&(DwValue){ .kind = DW_VALUE_INT, .i = -3 }));
  g_assert_false (dw_value_truthy (&(DwValue){ .kind = DW_VALUE_FLOAT, .f = -0.0 }));
  g_assert_true (dw_value_truthy (&(DwValue){ .kind = DW_VALUE_FLOAT, .f = NAN }));
  g_assert_false (dw_value_truthy (&(DwValue){ .kind = DW_VALUE_STR, .s = "" }));
  g_assert_true (dw_value_truthy (&(DwValue){ .kind = DW_VALUE_STR, .s = "False" }));
  g_assert_true (dw_value_truthy (&other));

  g_assert_cmpfloat (dw_value_number (&(DwValue){ .kind = DW_VALUE_BOOL, .b = true }), ==, 1.0);
  g_assert_cmpfloat (dw_value_number (&(DwValue){ .kind = DW_VALUE_INT, .i = -7 }), ==, -7.0);
  g_assert_cmpfloat (dw_value_number (&(DwValue){ .kind = DW_VALUE_FLOAT, .f = 0.25 }), ==, 0.25);
  g_assert_true (isnan (dw_value_number (&(DwValue){ .kind = DW_VALUE_STR, .s = "2" })));
  g_assert_true (isnan (dw_value_number (&(DwValue){ 0 })));

  dw_config_init (&c, DW_GEN_VERL);
  g_assert_true (
    dw_config_set (&c, "rollout_is_threshold", &(DwValue){ .kind = DW_VALUE_INT, .i = 3 }));
  g_assert_cmpint (dw_config_get_or (&c, "rollout_is_threshold", dw_value_float (2.0)).kind, ==,
                   DW_VALUE_INT);
  g_assert_cmpint (dw_config_get_or (&c, "rollout_is_threshold", dw_value_float (2.0)).i, ==, 3);
  g_assert_cmpfloat (dw_config_get_or (&c, "rollout_rs_threshold", dw_value_float (2.0)).f, ==,
                     2.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/correction/worked/k1-inverts", test_worked_k1_inverts);
  g_test_add_func ("/correction/worked/clamp-order", test_worked_clamp_order);
  g_test_add_func ("/correction/worked/threshold-below-one", test_worked_threshold_below_one);
  g_test_add_func ("/correction/mask-dtypes", test_mask_dtypes);
  g_test_add_func ("/correction/config-values", test_config_values);
  g_test_add_func ("/correction/f64-vs-f32", test_f64_vs_f32);
  g_test_add_func ("/correction/extremes", test_extremes);
  g_test_add_func ("/correction/check-config", test_check_config);
  g_test_add_func ("/correction/random-vs-oracle", test_random_vs_oracle);
  return g_test_run ();
}
