/* test-fastpath.c — the float32 fast path (fused row pass, scalar, AVX2, AVX-512) against the
 * reference path of the correction core, on random batches with extreme values
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Weights and masks must be bit-identical; every metric must agree to within a few float32 ulps
 * (only the order of additions inside a sum differs). The AVX2 exp must return the bits of the
 * scalar replica of torch's exp (dw_torch_expf) for every float.
 */
#include <malloc.h>
#include <math.h>
#include <string.h>

#include <glib.h>

#include "dw-correction-private.h"
#include "dw-correction.h"

static guint64 rs_state;

static double
rnd (void)
{
  rs_state ^= rs_state << 13;
  rs_state ^= rs_state >> 7;
  rs_state ^= rs_state << 17;
  return (double)(rs_state >> 11) * (1.0 / 9007199254740992.0);
}

static guint32
f2u (float f)
{
  guint32 u;
  memcpy (&u, &f, 4);
  return u;
}

/* the vector exp vs the scalar replica of torch's exp (dw_torch_expf) on a stride over every float
 * bit pattern plus the special values: every lane bit-identical */
static void
test_expf_bits_at (int level)
{
  if (dw_correction_simd_set_level (level) != level)
    {
      dw_correction_simd_set_enabled (TRUE);
      g_test_message ("vector level %d: not on this CPU", level);
      return;
    }
  enum
  {
    N = 1 << 16
  };
  static float x[N], y[N];
  guint64 bad = 0, n = 0;
  for (guint64 base = 0; base < (1ull << 32); base += (guint64)N * 61)
    {
      for (guint32 i = 0; i < N; i++)
        {
          guint32 u = (guint32)(base + (guint64)i * 61);
          memcpy (&x[i], &u, 4);
        }
      dw_correction_simd_expf_array (x, y, N);
      for (guint32 i = 0; i < N; i++, n++)
        {
          const float r = dw_torch_expf (x[i]);
          if (f2u (r) != f2u (y[i]) && !(isnan (r) && isnan (y[i])))
            {
              if (bad++ < 5)
                g_printerr ("exp(%a): scalar %a, vector %a\n", x[i], r, y[i]);
            }
        }
    }
  const float sp[]
    = { 0.0f,      -0.0f,      INFINITY,    -INFINITY,     NAN,           -NAN,       88.72283f,
        88.72284f, -87.33654f, -103.97208f, -103.9721f,    0x1p-126f,     -0x1p-149f, 20.0f,
        -20.0f,    1e30f,      -1e30f,      0x1.62e42ep6f, -0x1.9fe368p6f };
  float ys[G_N_ELEMENTS (sp)];
  dw_correction_simd_expf_array (sp, ys, G_N_ELEMENTS (sp));
  for (gsize i = 0; i < G_N_ELEMENTS (sp); i++)
    {
      const float r = dw_torch_expf (sp[i]);
      if (f2u (r) != f2u (ys[i]) && !(isnan (r) && isnan (ys[i])))
        {
          g_printerr ("exp(%a): scalar %a, vector %a\n", sp[i], r, ys[i]);
          bad++;
        }
    }
  dw_correction_simd_set_enabled (TRUE);
  g_assert_cmpuint (n, >, 1000000);
  g_assert_cmpuint (bad, ==, 0);
}

/* the AVX2 and the AVX-512 exp (each where the CPU has it) */
static void
test_expf_bits (void)
{
  test_expf_bits_at (DW_SIMD_AVX2);
  test_expf_bits_at (DW_SIMD_AVX512);
}

static float
extreme_value (void)
{
  static const float v[]
    = { NAN,    INFINITY, -INFINITY, -0.0f,  0.0f,  -1e30f, 1e30f,  -200.0f,
        150.0f, -88.9f,   89.0f,     -25.0f, 25.0f, 20.0f,  -20.0f, 0x1p-140f };
  return v[(size_t)(rnd () * G_N_ELEMENTS (v))];
}

static DwBatch *
random_batch (guint seed, size_t B, size_t T, DwDType md, gboolean extremes, gboolean nonbinary)
{
  DwBatch *b = dw_batch_new (B, T, DW_DTYPE_F32, md);
  float *o = b->old_log_prob, *r = b->rollout_log_prob;
  rs_state = 0x9e3779b97f4a7c15ull * seed + 7;
  for (size_t i = 0; i < B; i++)
    {
      /* row 1 all padding, the others random lengths with holes */
      const size_t len = i == 1 ? 0 : (size_t)(T * rnd ()) + (i == 0);
      for (size_t t = 0; t < T; t++)
        {
          const size_t k = i * T + t;
          double lp = -fabs (log (rnd () + 1e-12)) * 0.8;
          double d = (rnd () - 0.5) * (seed % 3 == 0 ? 3.0 : 0.1);
          o[k] = (float)lp;
          r[k] = (float)(lp + d);
          if (extremes && rnd () < 0.03)
            o[k] = extreme_value ();
          if (extremes && rnd () < 0.03)
            r[k] = extreme_value ();
          double mv = t < len && rnd () < 0.95;
          if (nonbinary && mv != 0 && rnd () < 0.1)
            mv = rnd () < 0.5 ? 0.5 : 2.0;
          switch (md)
            {
            case DW_DTYPE_BOOL:
            case DW_DTYPE_U8:
              ((guint8 *)b->response_mask)[k] = (guint8)mv;
              break;
            case DW_DTYPE_I32:
              ((gint32 *)b->response_mask)[k] = (gint32)mv;
              break;
            case DW_DTYPE_I64:
              ((gint64 *)b->response_mask)[k] = (gint64)mv;
              break;
            case DW_DTYPE_F32:
              ((float *)b->response_mask)[k] = (float)mv;
              break;
            case DW_DTYPE_F64:
              ((double *)b->response_mask)[k] = mv;
              break;
            default:
              g_assert_not_reached ();
            }
        }
    }
  return b;
}

/* float32 ulps between two metric values (both already float32-rounded) */
static double
ulps (double a, double b)
{
  if (isnan (a) && isnan (b))
    return 0;
  if (a == b)
    return 0;
  if (isnan (a) || isnan (b) || isinf (a) || isinf (b))
    return INFINITY;
  const double scale = fmax (fabs (a), fabs (b));
  return fabs (a - b) / (scale * 0x1p-23);
}

/* mode 0 reference, 1 fast scalar, 2 fast AVX2, 3 fast AVX-512 (where the CPU has it, else
 * AVX2 again); false with @e set when verl raises */
static gboolean
run_mode (const DwBatch *b, const DwConfig *c, int mode, DwCorrectionResult *res,
          DwCorrectionError *e)
{
  dw_correction_simd_set_reference (mode == 0);
  dw_correction_simd_set_level (mode == 3   ? DW_SIMD_AVX512
                                : mode == 2 ? DW_SIMD_AVX2
                                            : DW_SIMD_OFF);
  gboolean ok = dw_correction_run (b, c, res, e);
  dw_correction_simd_set_reference (FALSE);
  dw_correction_simd_set_enabled (TRUE);
  return ok;
}

static guint n_same_errors;

static double max_ulps_seen;

static void
compare (const DwBatch *b, const DwConfig *c, const char *what)
{
  DwCorrectionResult ref, fast;
  DwCorrectionError ref_error, fast_error;
  const gboolean ref_ok = run_mode (b, c, 0, &ref, &ref_error);
  for (int mode = 1; mode <= 3; mode++)
    {
      const gboolean fast_ok = run_mode (b, c, mode, &fast, &fast_error);
      if (!ref_ok)
        {
          /* an IcePop config whose bounds exclude every weight: verl's ZeroDivisionError */
          g_assert_false (fast_ok);
          g_assert_cmpint (ref_error.kind, ==, fast_error.kind);
          g_assert_cmpstr (ref_error.message, ==, fast_error.message);
          n_same_errors++;
          continue;
        }
      if (!fast_ok)
        g_error ("%s mode %d: %s", what, mode, fast_error.message);
      const size_t BT = b->rows * b->cols;
      g_assert_cmpuint (ref.n_metrics, ==, fast.n_metrics);
      for (size_t i = 0; i < ref.n_metrics; i++)
        {
          g_assert_cmpstr (ref.metrics[i].key, ==, fast.metrics[i].key);
          const double a = ref.metrics[i].value, d = fast.metrics[i].value;
          /* _std keys are sqrt of a cancelling float32 difference (§9.1): compare the variance
           * against the scale of the mean of squares, as the golden tests do */
          double u = ulps (a, d);
          if (g_str_has_suffix (ref.metrics[i].key, "_std") && isfinite (a) && isfinite (d))
            u = fabs (a * a - d * d) <= 1e-6 * fmax (1.0, fmax (a * a, d * d)) ? 0 : u;
          max_ulps_seen = fmax (max_ulps_seen, u);
          if (!(u <= 8))
            g_error ("%s mode %d: %s reference %.9g fast %.9g (%.1f ulps)", what, mode,
                     ref.metrics[i].key, a, d, u);
        }
      g_assert_cmpint (ref.weights == NULL, ==, fast.weights == NULL);
      if (ref.weights)
        for (size_t i = 0; i < BT; i++)
          {
            const float x = ((float *)ref.weights)[i], y = ((float *)fast.weights)[i];
            if (f2u (x) != f2u (y) && !(isnan (x) && isnan (y)))
              g_error ("%s mode %d: weight[%zu] reference %a fast %a", what, mode, i, x, y);
          }
      g_assert_cmpint (ref.mask_dtype, ==, fast.mask_dtype);
      g_assert_true (memcmp (ref.mask, fast.mask, BT * dw_dtype_size (ref.mask_dtype)) == 0);
      dw_correction_result_clear (&fast);
    }
  if (ref_ok)
    dw_correction_result_clear (&ref);
}

static void
set_s (DwConfig *c, const char *k, const char *v)
{
  DwValue x = dw_value_str (v);
  g_assert_true (dw_config_set (c, k, &x));
}

/* the extra option combinations, and for verl ≥ 0.8.0 IcePop bounds (@icepop non-NULL) */
static const struct
{
  const char *is, *rs, *thr;
  gboolean bn;
  double is_thr;      /* rollout_is_threshold, 0: the default */
  const char *icepop; /* "lower_upper" (v0.8.0+ only) */
} extra[] = {
  { "token", "token_k1,token_k2,token_k3", "0.8_1.25,0.02,0.01", TRUE, 0, NULL },
  { "sequence", "seq_max_k2,seq_max_k3,seq_sum_k2,seq_sum_k3", "0.5", TRUE, 0, NULL },
  { "token", "seq_sum_k1,seq_mean_k2,token_k3", "0.5_inf,inf,inf", FALSE, 0, NULL },
  { NULL, "token_k1", "0.999_1.001", FALSE, 0, NULL },
  /* lower bounds above the upper ones (C < 1: c = 1/C > C): the metric clamps see lo > hi and
   * give hi for every value (torch.clamp); v0.9.0 rejects the RS ones */
  { "token", "token_k1,seq_mean_k1", "2.0_0.5", FALSE, 0.5, NULL },
  { "sequence", "seq_sum_k1,token_k1", "1.5_0.9,1.2_0.8", TRUE, 0.7, NULL },
  { "token", "seq_mean_k3", "0.01", FALSE, 0, "0.8_1.25" },
  { "token", "token_k1", "0.5_2.0", TRUE, 0, "0.5_5.0" },
  { "sequence", "seq_sum_k1", "0.5_2.0", TRUE, 0, "0.5_2.0" },
  { "sequence", "seq_max_k2", "0.5", FALSE, 0, "1e-3_1e3" },
};

/* @extra[k] as a config of @gen; false when that release has no such config or rejects it */
static gboolean
extra_config (DwGeneration gen, gsize k, DwConfig *c)
{
  const gboolean icepop_release = gen == DW_GEN_VERL_0_8_0 || gen == DW_GEN_VERL_0_9_0;
  if (extra[k].icepop && !icepop_release)
    return FALSE;
  dw_config_init (c, gen);
  if (extra[k].is)
    set_s (c, "rollout_is", extra[k].is);
  DwValue bn = dw_value_bool (extra[k].bn);
  g_assert_true (dw_config_set (c, "rollout_is_batch_normalize", &bn));
  set_s (c, "rollout_rs", extra[k].rs);
  set_s (c, "rollout_rs_threshold", extra[k].thr);
  if (extra[k].is_thr > 0)
    {
      DwValue thr = dw_value_float (extra[k].is_thr);
      g_assert_true (dw_config_set (c, "rollout_is_threshold", &thr));
    }
  if (extra[k].icepop)
    set_s (c, "rollout_is_threshold", extra[k].icepop);
  DwCorrectionError e;
  return dw_correction_check_config (c, &e);
}

/* every preset and extra config of v0.7.1, v0.8.0 and v0.9.0: the fast path (scalar and AVX2)
 * equals the reference path */
static void
test_presets_and_options (void)
{
  static const DwGeneration generations[]
    = { DW_GEN_VERL_0_7_1, DW_GEN_VERL_0_8_0, DW_GEN_VERL_0_9_0 };
  const DwDType mds[] = { DW_DTYPE_I64, DW_DTYPE_BOOL, DW_DTYPE_F32, DW_DTYPE_U8, DW_DTYPE_F64 };
  const size_t shapes[][2] = { { 5, 37 }, { 3, 8 }, { 4, 3 }, { 2, 64 }, { 6, 129 } };
  guint n_cmp = 0, n_icepop = 0;
  for (guint seed = 1; seed <= 10; seed++)
    {
      const size_t *sh = shapes[seed % G_N_ELEMENTS (shapes)];
      const DwDType md = mds[seed % G_N_ELEMENTS (mds)];
      DwBatch *b = random_batch (seed, sh[0], sh[1], md, seed % 2 == 0,
                                 seed % 4 == 3 && md != DW_DTYPE_BOOL && md != DW_DTYPE_U8);
      char what[160];
      for (gsize g = 0; g < G_N_ELEMENTS (generations); g++)
        {
          const DwGeneration gen = generations[g];
          size_t n_presets;
          const DwPresetInfo *pl = dw_preset_list (gen, &n_presets);
          for (size_t p = 0; p < n_presets; p++)
            {
              DwConfig c;
              g_assert_true (dw_preset_config (gen, pl[p].name, &c, NULL));
              g_snprintf (what, sizeof what, "seed %u %s %s", seed, dw_generation_name (gen),
                          pl[p].name);
              compare (b, &c, what);
              n_cmp++;
            }
          for (gsize k = 0; k < G_N_ELEMENTS (extra); k++)
            {
              DwConfig c;
              if (!extra_config (gen, k, &c))
                continue;
              g_snprintf (what, sizeof what, "seed %u %s extra %" G_GSIZE_FORMAT, seed,
                          dw_generation_name (gen), k);
              compare (b, &c, what);
              n_cmp++;
              n_icepop += extra[k].icepop != NULL;
            }
        }
      dw_batch_free (b);
    }
  g_test_message ("%u comparisons (%u IcePop; %u raise the same error on both paths), largest "
                  "metric difference: %.2f float32 ulps",
                  n_cmp, n_icepop, n_same_errors / 2, max_ulps_seen);
  /* 17 + 19 + 19 presets, 6 + 10 + 8 extras per seed */
  g_assert_cmpuint (n_cmp, ==, 10 * (17 + 19 + 19 + 6 + 10 + 8));
  g_assert_cmpuint (n_icepop, ==, 10 * 8);
}

/* slime's built-in paths: the float32 row loop equals the reference path on every mask dtype */
static void
test_slime_builtin (void)
{
  const DwDType mds[] = { DW_DTYPE_I64, DW_DTYPE_BOOL, DW_DTYPE_F32, DW_DTYPE_U8, DW_DTYPE_F64 };
  static const struct
  {
    const char *function;
    double clip, clip_low;
    gboolean per_token;
  } paths[] = { { "vanilla", 2.0, 0.0, FALSE },
                { "vanilla", 1.5, 0.5, TRUE },
                { "icepop", 5.0, 0.5, FALSE },
                { "icepop", 1.25, 0.8, TRUE } };
  guint n_cmp = 0;
  for (guint seed = 1; seed <= 10; seed++)
    {
      const DwDType md = mds[seed % G_N_ELEMENTS (mds)];
      DwBatch *b = random_batch (seed, 3 + seed % 4, 17 + 9 * seed, md, seed % 2 == 0,
                                 seed % 4 == 3 && md != DW_DTYPE_BOOL && md != DW_DTYPE_U8);
      for (gsize k = 0; k < G_N_ELEMENTS (paths); k++)
        {
          DwConfig c;
          dw_config_init (&c, DW_GEN_SLIME);
          set_s (&c, "tis_function", paths[k].function);
          DwValue clip = dw_value_float (paths[k].clip), low = dw_value_float (paths[k].clip_low),
                  per_token = dw_value_bool (paths[k].per_token);
          g_assert_true (dw_config_set (&c, "tis_clip", &clip));
          g_assert_true (dw_config_set (&c, "tis_clip_low", &low));
          g_assert_true (dw_config_set (&c, "calculate_per_token_loss", &per_token));
          char what[96];
          g_snprintf (what, sizeof what, "seed %u slime %s %" G_GSIZE_FORMAT, seed,
                      paths[k].function, k);
          compare (b, &c, what);
          n_cmp++;
        }
      dw_batch_free (b);
    }
  g_assert_cmpuint (n_cmp, ==, 40);
}

/* DW_ENTRY_MASK_SHARED: the same metrics and weights bit for bit; without RS the mask is the
 * batch's own array (borrowed, not freed by the clear), with RS a copy equal to the unshared one */
static void
test_shared_mask (void)
{
  static const char *const presets[]
    = { "decoupled_token_is", "decoupled_seq_is_rs", "decoupled_k3_rs_token_tis" };
  DwBatch *b = random_batch (5, 9, 333, DW_DTYPE_I64, TRUE, FALSE);
  const size_t BT = b->rows * b->cols;
  for (gsize k = 0; k < G_N_ELEMENTS (presets); k++)
    {
      DwConfig c;
      DwCorrectionError e;
      g_assert_true (dw_preset_config (DW_GEN_VERL_0_7_1, presets[k], &c, &e));
      DwCorrectionResult copied, shared;
      g_assert_true (dw_correction_run_entry (b, &c, DW_ENTRY_MASK, &copied, &e));
      g_assert_true (dw_correction_run_entry (b, &c, DW_ENTRY_MASK_SHARED, &shared, &e));
      g_assert_false (copied.mask_borrowed);
      g_assert_cmpint (shared.mask_borrowed, ==, k == 0);
      g_assert_true ((shared.mask == b->response_mask) == (k == 0));
      g_assert_true (memcmp (copied.mask, shared.mask, BT * sizeof (gint64)) == 0);
      g_assert_true (memcmp (copied.weights, shared.weights, BT * sizeof (float)) == 0);
      g_assert_cmpuint (copied.n_metrics, ==, shared.n_metrics);
      g_assert_true (memcmp (copied.metrics, shared.metrics, copied.n_metrics * sizeof (DwMetric))
                     == 0);
      dw_correction_result_clear (&copied);
      dw_correction_result_clear (&shared);
      g_assert_null (shared.mask);
    }
  /* the batch still owns its mask */
  g_assert_nonnull (b->response_mask);
  dw_batch_free (b);
}

/* rows of @result's int64 mask equal to the batch's (kept) and all zero (rejected), counting
 * rows with a valid token only */
static void
count_kept_rows (const DwBatch *b, const DwCorrectionResult *result, guint *kept, guint *rejected)
{
  const gint64 *source = b->response_mask, *target = result->mask;
  for (size_t row = 0; row < b->rows; row++)
    {
      gboolean any_valid = FALSE, same = TRUE, zero = TRUE;
      for (size_t col = 0; col < b->cols; col++)
        {
          const size_t index = row * b->cols + col;
          any_valid |= source[index] != 0;
          same &= target[index] == source[index];
          zero &= target[index] == 0;
        }
      *kept += any_valid && same;
      *rejected += any_valid && zero;
    }
}

/* Batches of over 1 M positions, where the AVX-512 pass streams its results past the caches and
 * writes a row's output mask during the next row's pass: the same weights, masks and metrics as
 * the reference path, on rows that start on a cache line (T = 4096) and rows that do not, with
 * a tail of 13 tokens (T = 3501), with a few non-binary mask rows, and with extreme values. */
static void
test_large_batch (void)
{
  static const char *const presets[] = { "decoupled_token_is", "decoupled_seq_is_rs",
                                         "decoupled_k3_rs_token_tis", "decoupled_geo_rs_seq_tis" };
  static const struct
  {
    size_t rows, cols;
    guint seed;
    gboolean extremes, nonbinary;
  } batches[] = { { 256, 4096, 11, FALSE, FALSE },
                  { 300, 3501, 13, FALSE, TRUE },
                  { 256, 4096, 14, TRUE, FALSE } };
  for (gsize index = 0; index < G_N_ELEMENTS (batches); index++)
    {
      DwBatch *b = random_batch (batches[index].seed, batches[index].rows, batches[index].cols,
                                 DW_DTYPE_I64, batches[index].extremes, batches[index].nonbinary);
      for (gsize k = 0; k < G_N_ELEMENTS (presets); k++)
        {
          DwConfig c;
          char what[160];
          g_assert_true (dw_preset_config (DW_GEN_VERL_0_7_1, presets[k], &c, NULL));
          g_snprintf (what, sizeof what, "%zux%zu %s", b->rows, b->cols, presets[k]);
          compare (b, &c, what);
        }
      dw_batch_free (b);
      if (batches[index].extremes)
        continue; /* NaN and ±inf log-probs: nearly every row is rejected */
      /* both kinds of deferred row were written */
      b = random_batch (batches[index].seed, batches[index].rows, batches[index].cols, DW_DTYPE_I64,
                        FALSE, batches[index].nonbinary);
      DwConfig c;
      DwCorrectionResult result;
      DwCorrectionError e;
      guint kept = 0, rejected = 0;
      g_assert_true (dw_preset_config (DW_GEN_VERL_0_7_1, "decoupled_seq_is_rs", &c, NULL));
      g_assert_true (dw_correction_run (b, &c, &result, &e));
      count_kept_rows (b, &result, &kept, &rejected);
      g_assert_cmpuint (kept, >, 10);
      g_assert_cmpuint (rejected, >, 10);
      dw_correction_result_clear (&result);
      dw_batch_free (b);
    }
}

/* bytes malloc has handed out and not got back, every arena and mmapped chunk included */
static gint64
heap_in_use (void)
{
  const struct mallinfo2 info = mallinfo2 ();
  return (gint64)(info.uordblks + info.hblkhd);
}

typedef struct
{
  const DwBatch *batch;
  gint64 held; /* heap in use after the thread's runs, before it exits */
} WorkspaceJob;

/* runs the fast path (row buffers, recycled result blocks) and the reference path (the double
 * workspaces) and frees the results, as a what-if or loader thread does */
static gpointer
workspace_run_worker (gpointer data)
{
  WorkspaceJob *job = data;
  DwConfig c;
  DwCorrectionError e;
  g_assert_true (dw_preset_config (DW_GEN_VERL_0_7_1, "decoupled_k3_rs_token_tis", &c, &e));
  for (int reference = 0; reference < 2; reference++)
    {
      DwCorrectionResult result;
      dw_correction_simd_set_reference (reference);
      g_assert_true (dw_correction_run_entry (job->batch, &c, DW_ENTRY_MASK, &result, &e));
      dw_correction_result_clear (&result);
    }
  dw_correction_simd_set_reference (false);
  job->held = heap_in_use ();
  return NULL;
}

/* A thread's workspace goes when the thread exits, with no call from the caller: the leak the
 * fresh root's ASan run found when a loader thread forgot to release it (under ASan malloc is
 * not glibc's and LeakSanitizer is the check). */
static void
test_workspace_thread_exit (void)
{
#if defined(__SANITIZE_ADDRESS__)
  g_test_skip ("ASan's allocator: LeakSanitizer checks the thread-exit release");
  return;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  g_test_skip ("ASan's allocator: LeakSanitizer checks the thread-exit release");
  return;
#endif
#endif
  DwBatch *b = random_batch (3, 64, 4096, DW_DTYPE_I64, FALSE, FALSE);
  WorkspaceJob job = { b, 0 };
  const gint64 before = heap_in_use ();
  g_thread_join (g_thread_new ("workspace", workspace_run_worker, &job));
  const gint64 after = heap_in_use ();
  /* the reference path alone keeps ~5 doubles per token (10 MB) until the thread exits */
  g_assert_cmpint (job.held - before, >, 4 << 20);
  g_assert_cmpint (after - before, <, 256 << 10);
  dw_batch_free (b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fastpath/expf-bits", test_expf_bits);
  g_test_add_func ("/fastpath/presets-and-options", test_presets_and_options);
  g_test_add_func ("/fastpath/slime-builtin", test_slime_builtin);
  g_test_add_func ("/fastpath/shared-mask", test_shared_mask);
  g_test_add_func ("/fastpath/large-batch", test_large_batch);
  g_test_add_func ("/fastpath/workspace-thread-exit", test_workspace_thread_exit);
  return g_test_run ();
}
