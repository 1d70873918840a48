/* dw-correction.c — rollout correction as verl (every generation) and slime compute it
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc + libm only. Arithmetic follows torch: every elementwise op is rounded to the input dtype
 * (R()), reductions accumulate in double (torch: float32 pairwise; the difference is far below
 * the rtol 2e-5 of the golden cases), Python-float bounds are rounded to the input dtype before a
 * comparison. See ../shared/docs/ROLLOUT_CORRECTION.md for every formula referenced (§).
 */
#include "dw-correction.h"
#include "dw-correction-private.h"
#include "dw-torch-private.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAFETY 20.0
#define EPS    1e-8

/* ------------------------------------------------------------------------------------------ */
/* results and metric lists                                                                    */

void
dw_correction_result_init (DwCorrectionResult *result)
{
  memset (result, 0, sizeof *result);
}

static void result_free (void *p);

void
dw_correction_result_clear (DwCorrectionResult *result)
{
  free (result->metrics);
  result_free (result->weights);
  result_free (result->mask);
  dw_correction_result_init (result);
}

const double *
dw_correction_result_get (const DwCorrectionResult *result, const char *key)
{
  for (size_t i = 0; i < result->n_metrics; i++)
    if (strcmp (result->metrics[i].key, key) == 0)
      return &result->metrics[i].value;
  return NULL;
}

typedef struct
{
  const char *prefix;
  size_t n, cap;
  DwMetric *m;
  bool oom;
} MetricList;

static void
put (MetricList *l, const char *name, double value)
{
  if (l->n == l->cap)
    {
      size_t cap = l->cap ? l->cap * 2 : 64;
      DwMetric *m = realloc (l->m, cap * sizeof *m);
      if (!m)
        {
          l->oom = true;
          return;
        }
      l->m = m;
      l->cap = cap;
    }
  DwMetric *e = &l->m[l->n++];
  snprintf (e->key, sizeof e->key, "%s%s", l->prefix, name);
  e->value = value;
}

__attribute__ ((format (printf, 3, 4))) static void
putf (MetricList *l, double value, const char *fmt, ...)
{
  char name[DW_METRIC_KEY_MAX];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (name, sizeof name, fmt, ap);
  va_end (ap);
  put (l, name, value);
}

static int
metric_cmp (const void *a, const void *b)
{
  return strcmp (((const DwMetric *)a)->key, ((const DwMetric *)b)->key);
}

/* ------------------------------------------------------------------------------------------ */
/* per-thread workspace: the large temporaries of one run are kept between runs, so repeated
 * runs (benchmarks, recompute over a run's steps) do not pay page faults for fresh mmaps         */

enum
{
  WS_L,
  WS_M,
  WS_N,
  WS_W,
  WS_KEEP,
  WS_SCRATCH,
  WS_SLIME_W,
  WS_SLIME_NM,
  WS_FAST_ROW,
  WS_FAST_B,
  WS_N_SLOTS
};

static _Thread_local struct
{
  void *p;
  size_t size;
} ws[WS_N_SLOTS];

static void *
ws_get (int slot, size_t bytes)
{
  if (bytes == 0)
    bytes = 1;
  if (ws[slot].size < bytes)
    {
      free (ws[slot].p);
      ws[slot].p = malloc (bytes);
      ws[slot].size = ws[slot].p ? bytes : 0;
    }
  return ws[slot].p;
}

/* Result arrays (weights, masks) are plain malloc() blocks the caller owns. Large ones returned
 * through dw_correction_result_clear() are kept per thread and handed out again by the next run
 * instead of fresh mmaps whose page faults cost as much as the kernels themselves. Only blocks
 * this file allocated (recorded with their exact size in @issued) are recycled. */
#define RECYCLE_MIN ((size_t)256 * 1024)
enum
{
  N_RECYCLED = 2,
  N_ISSUED = 8
};
typedef struct
{
  void *p;
  size_t size;
} Block;
static _Thread_local Block recycled[N_RECYCLED], issued[N_ISSUED];
static _Thread_local unsigned issued_next;

static void *
result_alloc (size_t bytes)
{
  if (bytes == 0)
    bytes = 1;
  void *p = NULL;
  int best = -1;
  for (int i = 0; i < N_RECYCLED; i++)
    if (recycled[i].p && recycled[i].size >= bytes
        && recycled[i].size <= bytes + bytes / 2 /* do not pin a much larger block */
        && (best < 0 || recycled[i].size < recycled[best].size))
      best = i;
  size_t size = bytes;
  if (best >= 0)
    {
      p = recycled[best].p;
      size = recycled[best].size;
      recycled[best] = (Block){ NULL, 0 };
    }
  else
    p = malloc (bytes);
  if (!p)
    return NULL;
  /* a block freed by its owner with free() may come back at the same address: forget it */
  int slot = -1;
  for (int i = 0; i < N_ISSUED; i++)
    if (issued[i].p == p)
      {
        issued[i] = (Block){ NULL, 0 };
        slot = i;
      }
  if (size >= RECYCLE_MIN)
    {
      if (slot < 0)
        slot = (int)(issued_next++ % N_ISSUED);
      issued[slot] = (Block){ p, size };
    }
  return p;
}

static void
result_free (void *p)
{
  if (!p)
    return;
  for (int i = 0; i < N_ISSUED; i++)
    if (issued[i].p == p)
      {
        const Block blk = issued[i];
        issued[i] = (Block){ NULL, 0 };
        int slot = 0; /* an empty slot, else the smallest cached block */
        for (int k = 0; k < N_RECYCLED; k++)
          if (!recycled[k].p)
            {
              slot = k;
              break;
            }
          else if (recycled[k].size < recycled[slot].size)
            slot = k;
        if (recycled[slot].p && recycled[slot].size >= blk.size)
          break; /* the cache already holds larger blocks */
        free (recycled[slot].p);
        recycled[slot] = blk;
        return;
      }
  free (p);
}

void
dw_correction_release_workspace (void)
{
  for (int i = 0; i < WS_N_SLOTS; i++)
    {
      free (ws[i].p);
      ws[i].p = NULL;
      ws[i].size = 0;
    }
  for (int i = 0; i < N_RECYCLED; i++)
    {
      free (recycled[i].p);
      recycled[i] = (Block){ NULL, 0 };
    }
  for (int i = 0; i < N_ISSUED; i++)
    issued[i] = (Block){ NULL, 0 };
}

/* ------------------------------------------------------------------------------------------ */
/* batch context: ℓ, mask values and counts, computed once                                      */

typedef struct
{
  size_t B, T;
  bool f32;
  const DwBatch *batch;
  double *l;     /* [B*T] ℓ = old − rollout in the input dtype */
  double *m;     /* [B*T] mask as a number */
  double *n;     /* [B] Σ m per row (in dtype) */
  double N;      /* Σ m (double) */
  double cnt_dt; /* R(Σ m + 1e-8): MMEAN denominator over the batch */
} Ctx;

/* round to / exp in the batch dtype (dw-torch-private.h) */
#define R(c, x)   dw_torch_round ((c)->f32, (x))
#define EXP(c, x) dw_torch_exp ((c)->f32, (x))

static inline double
LP (const void *p, bool f32, size_t i)
{
  return f32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static inline bool
V (const Ctx *c, size_t i)
{
  return c->m[i] != 0;
}

/* MMEAN over the batch from a masked sum */
static inline double
mmean_b (const Ctx *c, double sum)
{
  return R (c, R (c, sum) / c->cnt_dt);
}

static inline double
mmean_r (const Ctx *c, double sum, size_t b)
{
  return R (c, R (c, sum) / R (c, c->n[b] + EPS));
}

static bool
ctx_init (Ctx *c, const DwBatch *batch, DwCorrectionError *error)
{
  memset (c, 0, sizeof *c);
  c->batch = batch;
  c->B = batch->rows;
  c->T = batch->cols;
  c->f32 = batch->lp_dtype == DW_DTYPE_F32;
  if (batch->lp_dtype != DW_DTYPE_F32 && batch->lp_dtype != DW_DTYPE_F64)
    return dw_error_set (error, DW_ERROR_TYPE, "log-probs must be float32 or float64, got %s.",
                         dw_dtype_name (batch->lp_dtype));
  size_t bt = c->B * c->T;
  if (c->T != 0 && bt / c->T != c->B)
    return dw_error_set (error, DW_ERROR_VALUE, "batch shape overflows.");
  c->l = ws_get (WS_L, bt * sizeof (double));
  c->m = ws_get (WS_M, bt * sizeof (double));
  c->n = ws_get (WS_N, c->B * sizeof (double));
  if (!c->l || !c->m || !c->n)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory for a %zux%zu batch.", c->B, c->T);
  /* mask values: one dtype switch per batch, not per element */
  const void *mp = batch->response_mask;
#define MASK_LOOP(TYPE)                      \
  for (size_t i = 0; i < bt; i++)            \
    c->m[i] = (double)((const TYPE *)mp)[i]; \
  break
  switch (batch->mask_dtype)
    {
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      MASK_LOOP (uint8_t);
    case DW_DTYPE_I8:
      MASK_LOOP (int8_t);
    case DW_DTYPE_I16:
      MASK_LOOP (int16_t);
    case DW_DTYPE_U16:
      MASK_LOOP (uint16_t);
    case DW_DTYPE_I32:
      MASK_LOOP (int32_t);
    case DW_DTYPE_U32:
      MASK_LOOP (uint32_t);
    case DW_DTYPE_I64:
      MASK_LOOP (int64_t);
    case DW_DTYPE_U64:
      MASK_LOOP (uint64_t);
    case DW_DTYPE_F32:
      MASK_LOOP (float);
    case DW_DTYPE_F64:
      MASK_LOOP (double);
    default:
      return dw_error_set (error, DW_ERROR_TYPE, "response_mask dtype %s is not supported.",
                           dw_dtype_name (batch->mask_dtype));
    }
#undef MASK_LOOP
  if (c->f32)
    {
      const float *o = batch->old_log_prob, *r = batch->rollout_log_prob;
      for (size_t i = 0; i < bt; i++)
        c->l[i] = (double)(o[i] - r[i]);
    }
  else
    {
      const double *o = batch->old_log_prob, *r = batch->rollout_log_prob;
      for (size_t i = 0; i < bt; i++)
        c->l[i] = o[i] - r[i];
    }
  bool any = false;
  for (size_t b = 0; b < c->B; b++)
    {
      double nb = 0;
      const double *m = c->m + b * c->T;
      for (size_t t = 0; t < c->T; t++)
        if (m[t] != 0)
          {
            any = true;
            nb += m[t];
          }
      c->n[b] = R (c, nb);
      c->N += nb;
    }
  c->cnt_dt = R (c, R (c, c->N) + EPS);
  if (!any)
    return dw_error_set (error, DW_ERROR_VALUE,
                         "response_mask must contain at least one valid token (1).");
  return true;
}

/* ------------------------------------------------------------------------------------------ */
/* ratio metrics: verl's compute_is_metrics (§2.2) for IS (up=C, lo=1/C) and G2 RS (§5.2)       */

/* @w: [B*T] per-token ratio (safety-clamped, exp'd); @lrm: [B] per-row log value for sequence
 * levels (NULL for token level); names "<prefix>_mean"… */
static void ratio_metrics_ex (const Ctx *c, MetricList *L, const char *pfx, const double *w,
                              const double *lrm, double up, double lo, double *sm, bool geo_tw);

static void
ratio_metrics (const Ctx *c, MetricList *L, const char *pfx, const double *w, const double *lrm,
               double up, double lo, double *sm /* [B] scratch */)
{
  ratio_metrics_ex (c, L, pfx, w, lrm, up, lo, sm, false);
}

typedef struct
{
  double sw, fh, fl, su, su2, mx, mn;
} RatioAcc;

static void ratio_emit (const Ctx *c, MetricList *L, const char *pfx, const RatioAcc *a,
                        const double *lrm, double up, double lo, const double *sm, bool geo_tw);

static void
ratio_metrics_ex (const Ctx *c, MetricList *L, const char *pfx, const double *w, const double *lrm,
                  double up, double lo, double *sm, bool geo_tw)
{
  const size_t B = c->B, T = c->T;
  double sw = 0, fh = 0, fl = 0, su = 0, su2 = 0, mx = -INFINITY, mn = INFINITY;
  const double upr = R (c, up), lor = R (c, lo);
  for (size_t b = 0; b < B; b++)
    {
      double rw = 0;
      for (size_t t = 0; t < T; t++)
        {
          size_t i = b * T + t;
          if (!V (c, i))
            continue;
          double mv = c->m[i], x = w[i];
          sw += x * mv;
          rw += x * mv;
          fh += (x > upr) * mv;
          fl += (x < lor) * mv;
          mx = dw_torch_max (mx, x);
          mn = dw_torch_min (mn, x);
          double u = dw_torch_clamp (x, lor, upr);
          su += u * mv;
          su2 += R (c, u * u) * mv;
        }
      sm[b] = mmean_r (c, rw, b);
    }
  RatioAcc a = { sw, fh, fl, su, su2, mx, mn };
  ratio_emit (c, L, pfx, &a, lrm, up, lo, sm, geo_tw);
}

/* the metrics of compute_is_metrics from the masked sums of @a and the per-row means @sm */
static void
ratio_emit (const Ctx *c, MetricList *L, const char *pfx, const RatioAcc *a, const double *lrm,
            double up, double lo, const double *sm, bool geo_tw)
{
  const size_t B = c->B;
  const double sw = a->sw, fh = a->fh, fl = a->fl, su = a->su, su2 = a->su2, mx = a->mx, mn = a->mn;
  const double upr = R (c, up), lor = R (c, lo);
  putf (L, mmean_b (c, sw), "%s_mean", pfx);
  if (lrm)
    {
      double lmax = -INFINITY, lmin = INFINITY, h = 0, lo_n = 0;
      const double lu = (float)log ((float)up), ll = (float)log ((float)lo);
      for (size_t b = 0; b < B; b++)
        {
          lmax = fmax (lmax, lrm[b]);
          lmin = fmin (lmin, lrm[b]);
          double wgt = geo_tw ? c->n[b] : 1.0;
          h += (lrm[b] > lu) * wgt;
          lo_n += (lrm[b] < ll) * wgt;
        }
      putf (L, R (c, EXP (c, fmin (lmax, SAFETY))), "%s_max", pfx);
      putf (L, R (c, EXP (c, lmin)), "%s_min", pfx);
      putf (L, geo_tw ? mmean_b (c, h) : h / (double)B, "%s_ratio_fraction_high", pfx);
      putf (L, geo_tw ? mmean_b (c, lo_n) : lo_n / (double)B, "%s_ratio_fraction_low", pfx);
    }
  else
    {
      putf (L, mx, "%s_max", pfx);
      putf (L, mn, "%s_min", pfx);
      putf (L, mmean_b (c, fh), "%s_ratio_fraction_high", pfx);
      putf (L, mmean_b (c, fl), "%s_ratio_fraction_low", pfx);
    }
  double mc = mmean_b (c, su);
  if (c->N > 1)
    {
      double var = R (c, mmean_b (c, su2) - R (c, mc * mc));
      putf (L, sqrt (fmax (var, 0.0)), "%s_std", pfx);
    }
  else
    putf (L, 0.0, "%s_std", pfx);
  double d = R (c, mc + EPS);
  putf (L, 1.0 / mmean_b (c, su2 / (d * d)), "%s_eff_sample_size", pfx);
  double s = 0, s2 = 0, smax = -INFINITY, smin = INFINITY, dev = -INFINITY, hh = 0, ll2 = 0;
  for (size_t b = 0; b < B; b++)
    s += sm[b];
  double mean = s / (double)B;
  for (size_t b = 0; b < B; b++)
    {
      s2 += (sm[b] - mean) * (sm[b] - mean);
      smax = fmax (smax, sm[b]);
      smin = fmin (smin, sm[b]);
      dev = fmax (dev, fabs (sm[b] - 1.0));
      hh += sm[b] > upr;
      ll2 += sm[b] < lor;
    }
  putf (L, mean, "%s_seq_mean", pfx);
  putf (L, B > 1 ? sqrt (s2 / (double)(B - 1)) : 0.0, "%s_seq_std", pfx);
  putf (L, smax, "%s_seq_max", pfx);
  putf (L, smin, "%s_seq_min", pfx);
  putf (L, dev, "%s_seq_max_deviation", pfx);
  putf (L, hh / (double)B, "%s_seq_fraction_high", pfx);
  putf (L, ll2 / (double)B, "%s_seq_fraction_low", pfx);
}

/* ------------------------------------------------------------------------------------------ */
/* IS weights (§2.1); bn_mode: 0 none, 1 non-empty rows (HEAD, 2f2996b7d), 2 all rows (2c6c65cb0) */

typedef DwLevel Level;

/* per-row log value for sequence (MSUM) / geometric (MMEAN) levels */
static void
row_log (const Ctx *c, Level level, double *lrm)
{
  for (size_t b = 0; b < c->B; b++)
    {
      double s = 0;
      for (size_t t = 0; t < c->T; t++)
        {
          size_t i = b * c->T + t;
          if (V (c, i))
            s += c->l[i] * c->m[i];
        }
      lrm[b] = level == DW_LEVEL_SEQUENCE ? R (c, s) : mmean_r (c, s, b);
    }
}

/* ratio per token: exp(SAFE(ℓ)) (token) or exp(SAFE(lrm_b)) broadcast */
static void
ratios (const Ctx *c, Level level, const double *lrm, double *w)
{
  for (size_t b = 0; b < c->B; b++)
    {
      double rb
        = level == DW_LEVEL_TOKEN ? 0 : R (c, EXP (c, dw_torch_clamp (lrm[b], -SAFETY, SAFETY)));
      for (size_t t = 0; t < c->T; t++)
        {
          size_t i = b * c->T + t;
          w[i] = level == DW_LEVEL_TOKEN ? R (c, EXP (c, dw_torch_clamp (c->l[i], -SAFETY, SAFETY)))
                                         : rb;
        }
    }
}

/* computes weights into @w (double [B*T]) and the IS metrics */
static void
is_weights (const Ctx *c, MetricList *L, Level level, double C, int bn_mode, double *w, double *lrm,
            double *sm)
{
  if (level != DW_LEVEL_TOKEN)
    row_log (c, level, lrm);
  ratios (c, level, lrm, w);
  for (size_t i = 0; i < c->B * c->T; i++)
    w[i] = R (c, w[i] * c->m[i]); /* NaN stays NaN on padding */
  ratio_metrics (c, L, "rollout_is", w, level == DW_LEVEL_TOKEN ? NULL : lrm, C, 1.0 / C, sm);
  const double Cr = R (c, C);
  for (size_t i = 0; i < c->B * c->T; i++)
    if (w[i] > Cr)
      w[i] = Cr;
  if (bn_mode == 0)
    return;
  double mu;
  if (level == DW_LEVEL_TOKEN)
    {
      double s = 0;
      for (size_t i = 0; i < c->B * c->T; i++)
        if (V (c, i))
          s += w[i] * c->m[i];
      mu = mmean_b (c, s);
    }
  else
    {
      double s = 0, nv = 0;
      for (size_t b = 0; b < c->B; b++)
        {
          double rs = 0;
          for (size_t t = 0; t < c->T; t++)
            {
              size_t i = b * c->T + t;
              if (V (c, i))
                rs += w[i] * c->m[i];
            }
          double r = mmean_r (c, rs, b);
          if (bn_mode == 2)
            s += r, nv += 1;
          else if (c->n[b] > 0)
            s += r, nv += 1;
        }
      mu = s / fmax (nv, 1e-8);
    }
  if (mu > 1e-8)
    {
      double mud = R (c, mu);
      for (size_t i = 0; i < c->B * c->T; i++)
        w[i] = R (c, w[i] / mud);
      put (L, "rollout_is_batch_norm_factor", mu);
    }
  else
    put (L, "rollout_is_batch_norm_factor", 1.0);
}

/* ------------------------------------------------------------------------------------------ */
/* off-policy metrics (§2.5)                                                                    */

static void offpolicy_ex (const Ctx *c, MetricList *L, bool g1);

static void
offpolicy (const Ctx *c, MetricList *L)
{
  offpolicy_ex (c, L, false);
}

typedef struct
{
  double kl, k3, chi;                                      /* token-level masked sums */
  double tp, tlp, rp, rlp, dsum, dabs, dmax, dmin, pr, cs; /* over rows */
} OffAcc;

static void
off_init (OffAcc *a)
{
  memset (a, 0, sizeof *a);
  a->dmax = -INFINITY;
  a->dmin = INFINITY;
}

/* row b's share of the per-row metrics from its masked sums of old, rollout and ℓ */
static void
off_row (const Ctx *c, OffAcc *a, size_t b, double so, double sr, double sl)
{
  double mt = mmean_r (c, so, b), mr = mmean_r (c, sr, b);
  a->tp += R (c, EXP (c, -mt));
  a->tlp += -mt;
  a->rp += R (c, EXP (c, -mr));
  a->rlp += -mr;
  double d = R (c, mr - mt);
  a->dsum += d;
  a->dabs += fabs (d);
  a->dmax = fmax (a->dmax, d);
  a->dmin = fmin (a->dmin, d);
  a->pr += R (c, EXP (c, d));
  double s = dw_torch_clamp (R (c, sl), -SAFETY, SAFETY);
  a->cs += R (c, exp (2.0 * s));
}

static void
off_emit (const Ctx *c, MetricList *L, const OffAcc *a, bool g1)
{
  const char *pp = g1 ? "mismatch_" : "";
  double Bd = (double)c->B;
  putf (L, a->tp / Bd, "%straining_ppl", pp);
  putf (L, a->tlp / Bd, "%straining_log_ppl", pp);
  putf (L, mmean_b (c, a->kl), "%skl", pp);
  putf (L, mmean_b (c, a->k3), "%sk3_kl", pp);
  putf (L, a->rp / Bd, "%srollout_ppl", pp);
  putf (L, a->rlp / Bd, "%srollout_log_ppl", pp);
  putf (L, a->dsum / Bd, "%slog_ppl_diff", pp);
  putf (L, a->dabs / Bd, "%slog_ppl_abs_diff", pp);
  putf (L, a->dmax, "%slog_ppl_diff_max", pp);
  putf (L, a->dmin, "%slog_ppl_diff_min", pp);
  putf (L, a->pr / Bd, "%sppl_ratio", pp);
  if (!g1)
    put (L, "chi2_token", mmean_b (c, a->chi) - 1.0);
  if (!g1)
    put (L, "chi2_seq", a->cs / Bd - 1.0);
}

static void
offpolicy_ex (const Ctx *c, MetricList *L, bool g1)
{
  const DwBatch *bt = c->batch;
  const size_t B = c->B, T = c->T;
  OffAcc a;
  off_init (&a);
  for (size_t b = 0; b < B; b++)
    {
      double so = 0, sr = 0, sl = 0;
      for (size_t t = 0; t < T; t++)
        {
          size_t i = b * T + t;
          if (!V (c, i))
            continue;
          double mv = c->m[i];
          double o = LP (bt->old_log_prob, c->f32, i), r = LP (bt->rollout_log_prob, c->f32, i);
          double l = c->l[i];
          so += o * mv;
          sr += r * mv;
          sl += l * mv;
          a.kl += R (c, r - o) * mv;
          double el = R (c, EXP (c, l));
          a.k3 += R (c, R (c, el - l) - 1.0) * mv;
          /* exp(SAFE(ℓ)) is exp(ℓ) inside the bounds: one exp per token */
          double rho = (l >= -SAFETY && l <= SAFETY)
                         ? el
                         : R (c, EXP (c, dw_torch_clamp (l, -SAFETY, SAFETY)));
          a.chi += R (c, rho * rho) * mv;
        }
      off_row (c, &a, b, so, sr, sl);
    }
  off_emit (c, L, &a, g1);
}

/* ------------------------------------------------------------------------------------------ */
/* HEAD rejection sampling (§2.3, §2.4)                                                         */

typedef struct
{
  double sum_stat, fh, fl, su, su2, mx, mn, masked, seq_masked;
} RsAcc;

/* the 14/15 keys of one option from its masked sums @a and the row values @sv */
static void
rs_option_emit (const Ctx *c, MetricList *L, const DwRsBound *bd, const RsAcc *a, const double *sv,
                size_t n_valid_rows)
{
  const size_t B = c->B;
  const int k = dw_rs_option_k (bd->option);
  const DwRsAgg agg = dw_rs_option_agg (bd->option);
  const bool k1 = k == 1;
  const double up_c = R (c, bd->log_upper);
  const double lo_c = k1 ? R (c, bd->log_lower) : 0.0;
  const double lo_metric = k1 ? lo_c : 0.0;
  const char *on = dw_rs_option_name (bd->option);
  const double sum_stat = a->sum_stat, fh = a->fh, fl = a->fl, su = a->su, su2 = a->su2, mx = a->mx,
               mn = a->mn, masked = a->masked, seq_masked = a->seq_masked;
  /* row-value statistics over valid rows */
  double s = 0, cnt = 0, smax = -INFINITY, smin = INFINITY, dev = -INFINITY, hh = 0, ll = 0;
  for (size_t b = 0; b < B; b++)
    if (c->n[b] > 0)
      {
        s += sv[b];
        cnt += 1;
        smax = dw_torch_max (smax, sv[b]);
        smin = dw_torch_min (smin, sv[b]);
        dev = dw_torch_max (dev, fabs (sv[b]));
        hh += sv[b] > up_c;
        ll += sv[b] < lo_metric;
      }
  double mean = cnt > 0 ? s / cnt : 0.0, s2 = 0;
  for (size_t b = 0; b < B; b++)
    if (c->n[b] > 0)
      s2 += (sv[b] - mean) * (sv[b] - mean);
  char p[64];
  snprintf (p, sizeof p, "rollout_rs_%s", on);
  putf (L, mmean_b (c, sum_stat), "%s_mean", p);
  if (agg != DW_RS_AGG_TOKEN && cnt > 0)
    {
      putf (L, smax, "%s_max", p);
      putf (L, smin, "%s_min", p);
      putf (L, hh / cnt, "%s_fraction_high", p);
      putf (L, k1 ? ll / cnt : 0.0, "%s_fraction_low", p);
    }
  else
    {
      putf (L, mx, "%s_max", p);
      putf (L, mn, "%s_min", p);
      putf (L, mmean_b (c, fh), "%s_fraction_high", p);
      putf (L, k1 ? mmean_b (c, fl) : 0.0, "%s_fraction_low", p);
    }
  if (c->N > 1)
    {
      double mc = mmean_b (c, su);
      double var = R (c, mmean_b (c, su2) - R (c, mc * mc));
      putf (L, sqrt (fmax (var, 0.0)), "%s_std", p);
    }
  else
    putf (L, 0.0, "%s_std", p);
  putf (L, mean, "%s_seq_mean", p);
  putf (L, cnt > 1 ? sqrt (s2 / (cnt - 1)) : 0.0, "%s_seq_std", p);
  putf (L, cnt > 0 ? smax : 0.0, "%s_seq_max", p);
  putf (L, cnt > 0 ? smin : 0.0, "%s_seq_min", p);
  putf (L, cnt > 0 ? dev : 0.0, "%s_seq_max_deviation", p);
  putf (L, cnt > 0 ? hh / cnt : 0.0, "%s_seq_fraction_high", p);
  if (k1)
    putf (L, cnt > 0 ? ll / cnt : 0.0, "%s_seq_fraction_low", p);
  putf (L, mmean_b (c, masked), "%s_masked_fraction", p);
  putf (L, n_valid_rows > 0 ? seq_masked / (double)n_valid_rows : 0.0, "%s_seq_masked_fraction", p);
}

/* @keep: [B*T] combined keep (1/0), initialised to 1 by the caller */
static void
rs_head (const Ctx *c, MetricList *L, const DwRsParsed *P, double *keep, double *scratch)
{
  const size_t B = c->B, T = c->T;
  double *kt = scratch;         /* [B*T] per-token statistic of the option */
  double *sv = scratch + B * T; /* [B] row values */
  double *ks = sv + B;          /* [B] row keep (sequence options) */
  size_t n_valid_rows = 0;
  for (size_t b = 0; b < B; b++)
    n_valid_rows += c->n[b] > 0;
  for (size_t oi = 0; oi < P->n; oi++)
    {
      const DwRsBound *bd = &P->bounds[oi];
      const int k = dw_rs_option_k (bd->option);
      const DwRsAgg agg = dw_rs_option_agg (bd->option);
      const bool k1 = k == 1;
      const double up_c = R (c, bd->log_upper);
      const double lo_c = k1 ? R (c, bd->log_lower) : 0.0;
      const double lo_metric = k1 ? lo_c : 0.0;
      for (size_t i = 0; i < B * T; i++)
        {
          double ls = dw_torch_clamp (c->l[i], -SAFETY, SAFETY);
          kt[i] = k == 1   ? -ls
                  : k == 2 ? R (c, 0.5 * R (c, ls * ls))
                           : R (c, R (c, R (c, EXP (c, ls)) - 1.0) - ls);
        }
      double sum_stat = 0, fh = 0, fl = 0, su = 0, su2 = 0, mx = -INFINITY, mn = INFINITY;
      double masked = 0, seq_masked = 0;
      for (size_t b = 0; b < B; b++)
        {
          double rs = 0, rmax = -INFINITY;
          bool any_valid = false;
          for (size_t t = 0; t < T; t++)
            {
              size_t i = b * T + t;
              if (!V (c, i))
                continue;
              any_valid = true;
              rs += kt[i] * c->m[i];
              rmax = dw_torch_max (rmax, kt[i]);
            }
          if (agg == DW_RS_AGG_TOKEN || agg == DW_RS_AGG_MEAN)
            sv[b] = mmean_r (c, rs, b);
          else if (agg == DW_RS_AGG_SUM)
            sv[b] = R (c, rs);
          else
            sv[b] = any_valid ? rmax : 0.0;
          ks[b] = k1 ? (sv[b] <= up_c && sv[b] >= lo_c) : (sv[b] <= up_c);
          bool row_rej = false;
          for (size_t t = 0; t < T; t++)
            {
              size_t i = b * T + t;
              double kp = agg == DW_RS_AGG_TOKEN
                            ? (k1 ? (kt[i] <= up_c && kt[i] >= lo_c) : (kt[i] <= up_c))
                            : ks[b];
              keep[i] *= kp;
              if (!V (c, i))
                continue;
              double mv = c->m[i];
              double x = agg == DW_RS_AGG_TOKEN ? kt[i] : sv[b];
              sum_stat += x * mv;
              if (agg == DW_RS_AGG_TOKEN)
                {
                  mx = dw_torch_max (mx, x);
                  mn = dw_torch_min (mn, x);
                  fh += (x > up_c) * mv;
                  fl += (x < lo_metric) * mv;
                }
              double u = dw_torch_clamp (x, lo_metric, up_c);
              su += u * mv;
              su2 += R (c, u * u) * mv;
              masked += (1.0 - kp) * mv;
              row_rej |= kp == 0;
            }
          if (c->n[b] > 0 && row_rej)
            seq_masked += 1;
        }
      RsAcc acc = { sum_stat, fh, fl, su, su2, mx, mn, masked, seq_masked };
      rs_option_emit (c, L, bd, &acc, sv, n_valid_rows);
    }
  double masked = 0, rows_rej = 0;
  for (size_t b = 0; b < B; b++)
    {
      bool rej = false;
      for (size_t t = 0; t < T; t++)
        {
          size_t i = b * T + t;
          if (!V (c, i))
            continue;
          masked += (1.0 - keep[i]) * c->m[i];
          rej |= !(keep[i] > 0.5);
        }
      rows_rej += rej;
    }
  put (L, "rollout_rs_masked_fraction", mmean_b (c, masked));
  put (L, "rollout_rs_seq_masked_fraction", rows_rej / (double)B);
}

/* ------------------------------------------------------------------------------------------ */
/* masks                                                                                        */

static void
store_value (void *arr, DwDType dt, size_t i, double v)
{
  switch (dt)
    {
    case DW_DTYPE_F32:
      ((float *)arr)[i] = (float)v;
      break;
    case DW_DTYPE_F64:
      ((double *)arr)[i] = v;
      break;
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      ((uint8_t *)arr)[i] = dt == DW_DTYPE_BOOL ? (v != 0) : (uint8_t)(int64_t)v;
      break;
    case DW_DTYPE_I8:
      ((int8_t *)arr)[i] = (int8_t)(int64_t)v;
      break;
    case DW_DTYPE_I16:
      ((int16_t *)arr)[i] = (int16_t)(int64_t)v;
      break;
    case DW_DTYPE_U16:
      ((uint16_t *)arr)[i] = (uint16_t)(int64_t)v;
      break;
    case DW_DTYPE_I32:
      ((int32_t *)arr)[i] = (int32_t)(int64_t)v;
      break;
    case DW_DTYPE_U32:
      ((uint32_t *)arr)[i] = (uint32_t)(int64_t)v;
      break;
    case DW_DTYPE_I64:
      ((int64_t *)arr)[i] = (int64_t)v;
      break;
    case DW_DTYPE_U64:
      ((uint64_t *)arr)[i] = (uint64_t)v;
      break;
    default:
      break;
    }
}

static bool
emit_array (DwCorrectionResult *res, bool weights, DwDType dt, const double *v, size_t n,
            DwCorrectionError *error)
{
  void *a = result_alloc (n * dw_dtype_size (dt));
  if (!a)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  if (dt == DW_DTYPE_F32)
    for (size_t i = 0; i < n; i++)
      ((float *)a)[i] = (float)v[i];
  else if (dt == DW_DTYPE_F64)
    memcpy (a, v, n * sizeof (double));
  else if (dt == DW_DTYPE_I64)
    for (size_t i = 0; i < n; i++)
      ((int64_t *)a)[i] = (int64_t)v[i];
  else
    for (size_t i = 0; i < n; i++)
      store_value (a, dt, i, v[i]);
  if (weights)
    {
      res->weights = a;
      res->weights_dtype = dt;
    }
  else
    {
      res->mask = a;
      res->mask_dtype = dt;
    }
  return true;
}

static bool
finish (DwCorrectionResult *res, MetricList *L, DwCorrectionError *error)
{
  if (L->oom)
    {
      free (L->m);
      return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
    }
  if (L->n > 0) /* no metrics at all (G0/G1 with threshold None): L->m is NULL */
    qsort (L->m, L->n, sizeof *L->m, metric_cmp);
  res->metrics = L->m;
  res->n_metrics = L->n;
  return true;
}

/* ------------------------------------------------------------------------------------------ */
/* verl entries                                                                                 */

static bool
run_verl (const Ctx *c, const DwPlan *plan, DwEntry entry, DwCorrectionResult *res,
          DwCorrectionError *error)
{
  const size_t B = c->B, T = c->T, BT = B * T;
  const DwPlan p = *plan;
  MetricList L = { .prefix = "rollout_corr/" };
  if (entry == DW_ENTRY_OFFPOLICY)
    {
      /* compute_rollout_corr_metrics_from_logprobs returns the 13 keys unprefixed; the actor
       * adds the prefix when it logs them */
      L.prefix = "";
      offpolicy (c, &L);
      return finish (res, &L, error);
    }
  double *w = ws_get (WS_W, BT * sizeof (double));
  double *keep = ws_get (WS_KEEP, BT * sizeof (double));
  double *scratch = ws_get (WS_SCRATCH, (BT + 3 * B + 1) * sizeof (double));
  if (!w || !keep || !scratch)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  double *lrm = scratch + BT, *sm = lrm + B;
  bool ok = true;
  if (p.is_on)
    {
      int bn = !p.batch_normalize ? 0 : p.bn_rows == DW_BN_ROWS_ALL ? 2 : 1;
      is_weights (c, &L, p.is_level, p.is_upper, bn, w, lrm, sm);
      ok &= emit_array (res, true, c->batch->lp_dtype, w, BT, error);
    }
  for (size_t i = 0; i < BT; i++)
    keep[i] = 1.0;
  DwDType mdt = c->batch->mask_dtype;
  if (p.path == DW_PATH_VERL_K_OPTIONS)
    {
      if (p.rs_on)
        rs_head (c, &L, &p.rs, keep, scratch);
    }
  else
    {
      bool changed = false;
      if (p.rs_on)
        {
          changed = true;
          double *rw = w; /* weights were already emitted */
          if (p.rs_level != DW_LEVEL_TOKEN)
            row_log (c, p.rs_level, lrm);
          ratios (c, p.rs_level, lrm, rw);
          const double lo = R (c, p.rs_lower), up = R (c, p.rs_upper);
          for (size_t i = 0; i < BT; i++)
            keep[i] = (rw[i] >= lo && rw[i] <= up) ? 1.0 : 0.0;
          ratio_metrics (c, &L, "rollout_rs", rw, p.rs_level == DW_LEVEL_TOKEN ? NULL : lrm,
                         p.rs_upper, p.rs_lower, sm);
          double masked = 0, rows = 0;
          for (size_t b = 0; b < B; b++)
            {
              double rm = 0;
              for (size_t t = 0; t < T; t++)
                {
                  size_t i = b * T + t;
                  if (V (c, i))
                    rm += (1.0 - keep[i]) * c->m[i];
                }
              masked += rm;
              if (p.rs_level == DW_LEVEL_TOKEN)
                rows += R (c, rm) > 0;
              else
                rows += T > 0 ? 1.0 - keep[b * T] : 0.0;
            }
          put (&L, "rollout_rs_masked_fraction", mmean_b (c, masked));
          put (&L, "rollout_rs_seq_masked_fraction", B ? rows / (double)B : 0.0);
        }
      if (p.veto_on)
        {
          changed = true;
          const double lv = (float)log ((float)p.veto);
          double vetoed = 0, cat = 0;
          for (size_t b = 0; b < B; b++)
            {
              bool has = false;
              for (size_t t = 0; t < T; t++)
                {
                  size_t i = b * T + t;
                  if (V (c, i) && c->l[i] < lv)
                    {
                      has = true;
                      cat += c->m[i];
                    }
                }
              vetoed += has;
              if (has)
                for (size_t t = 0; t < T; t++)
                  keep[b * T + t] = 0.0;
            }
          put (&L, "rollout_is_veto_fraction", vetoed / (double)B);
          put (&L, "rollout_is_catastrophic_token_fraction", mmean_b (c, cat));
        }
      else
        {
          put (&L, "rollout_is_veto_fraction", 0.0);
          put (&L, "rollout_is_catastrophic_token_fraction", 0.0);
        }
      if (changed)
        mdt = mdt == DW_DTYPE_F64 ? DW_DTYPE_F64 : DW_DTYPE_F32;
    }
  for (size_t i = 0; i < BT; i++)
    keep[i] = c->m[i] * keep[i];
  ok &= emit_array (res, false, mdt, keep, BT, error);
  offpolicy (c, &L);
  if (!ok)
    {
      free (L.m);
      return false;
    }
  return finish (res, &L, error);
}

/* ------------------------------------------------------------------------------------------ */
/* HEAD fast path for float32 log-probs: one streaming pass over the rows                       */

/* mo[t] = mi[t] · keep[t] (keep ∈ {0, 1}) in the mask dtype; @keep NULL: every keep is 0. Float
 * masks multiply (−1·0 = −0, NaN stays NaN, as torch), integer and bool masks select. */
static void
fast_mask_row (DwDType dt, const void *mi, const float *keep, void *mo, size_t T)
{
#define SELECT_LOOP(TYPE)                           \
  do                                                \
    {                                               \
      const TYPE *restrict src = mi;                \
      TYPE *restrict dst = mo;                      \
      if (!keep)                                    \
        memset (dst, 0, T * sizeof (TYPE));         \
      else                                          \
        for (size_t t = 0; t < T; t++)              \
          dst[t] = keep[t] != 0 ? src[t] : (TYPE)0; \
    }                                               \
  while (0)
  switch (dt)
    {
    case DW_DTYPE_F32:
      {
        const float *restrict src = mi;
        float *restrict dst = mo;
        for (size_t t = 0; t < T; t++)
          dst[t] = src[t] * (keep ? keep[t] : 0.0f);
      }
      break;
    case DW_DTYPE_F64:
      {
        const double *restrict src = mi;
        double *restrict dst = mo;
        for (size_t t = 0; t < T; t++)
          dst[t] = src[t] * (keep ? (double)keep[t] : 0.0);
      }
      break;
    default:
      switch (dw_dtype_size (dt))
        {
        case 1:
          SELECT_LOOP (uint8_t);
          break;
        case 2:
          SELECT_LOOP (uint16_t);
          break;
        case 4:
          SELECT_LOOP (uint32_t);
          break;
        default:
          SELECT_LOOP (uint64_t);
          break;
        }
    }
#undef SELECT_LOOP
}

/* Every row is read once: its mask is converted to float in a small buffer, one fused pass
 * (dw_row_pass_*) returns all of the row's masked sums and writes its token weights, and the
 * row's RS decisions and output mask follow while the row is still in cache. Same formulas and
 * the same exp as the reference path above; only the order of additions inside a sum differs.
 * Returns 1 done, 0 error (set), -1 not applicable (the caller runs the reference path, which
 * also reports batch errors in verl's order). */
static int
run_verl_fast (const DwBatch *batch, const DwPlan *plan, DwCorrectionResult *res,
               DwCorrectionError *error)
{
  if (dw_correction_get_reference () || plan->generation != DW_GEN_VERL_0_7_1
      || batch->lp_dtype != DW_DTYPE_F32 || batch->mask_dtype == DW_DTYPE_BF16
      || batch->mask_dtype == DW_DTYPE_F16 || batch->mask_dtype >= DW_N_DTYPES)
    return -1;
  const size_t B = batch->rows, T = batch->cols, BT = B * T;
  if (B == 0 || T == 0 || BT / T != B)
    return -1;
  const DwPlan p = *plan;
  const size_t n_opt = p.rs_on ? p.rs.n : 0;
  float *rowbuf = ws_get (WS_FAST_ROW, 4 * T * sizeof (float));
  double *bbuf = ws_get (WS_FAST_B, (4 + n_opt) * B * sizeof (double));
  if (!rowbuf || !bbuf)
    return -1;
  float *mf = rowbuf, *lrow = rowbuf + T, *erow = rowbuf + 2 * T, *keep = rowbuf + 3 * T;
  double *nb = bbuf, *lrm = bbuf + B, *sm = bbuf + 2 * B, *rowsw = bbuf + 3 * B;
  double *svs = bbuf + 4 * B;
  const size_t msz = dw_dtype_size (batch->mask_dtype);
  const bool is_tok = p.is_on && p.is_level == DW_LEVEL_TOKEN;
  const bool is_seq = p.is_on && p.is_level != DW_LEVEL_TOKEN;
  float *W = p.is_on ? result_alloc (BT * sizeof (float)) : NULL;
  unsigned char *MO = result_alloc (BT * msz);
  if ((p.is_on && !W) || !MO)
    {
      free (W);
      free (MO);
      return -1;
    }
  Ctx c;
  memset (&c, 0, sizeof c);
  c.batch = batch;
  c.B = B;
  c.T = T;
  c.f32 = true;
  c.n = nb;

  DwRowIn in;
  memset (&in, 0, sizeof in);
  in.T = T;
  in.is_token = is_tok;
  in.bn = p.batch_normalize;
  const double Cd = p.is_on ? p.is_upper : 2.0;
  in.C = (float)Cd;
  in.c = (float)(1.0 / Cd);
  const double Cr = in.C, cr = in.c;
  bool any_tok_opt = false;
  for (size_t oi = 0; oi < n_opt; oi++)
    {
      const DwRsOption o = p.rs.bounds[oi].option;
      if (dw_rs_option_agg (o) == DW_RS_AGG_TOKEN)
        any_tok_opt = true;
      else
        in.need_k[dw_rs_option_k (o) - 1] = true;
    }
  if (any_tok_opt)
    {
      in.l = lrow;
      in.e = erow;
    }
  const bool simd = dw_simd_enabled ();
  RatioAcc ra = { 0, 0, 0, 0, 0, -INFINITY, INFINITY };
  RsAcc racc[DW_RS_N_OPTIONS];
  for (size_t oi = 0; oi < n_opt; oi++)
    racc[oi] = (RsAcc){ 0, 0, 0, 0, 0, -INFINITY, INFINITY, 0, 0 };
  OffAcc oa;
  off_init (&oa);
  double N = 0, bn_s = 0, bn_nv = 0, rs_masked = 0, rs_rows_rej = 0;
  bool any = false;
  size_t n_valid_rows = 0;
  const float *O = batch->old_log_prob, *Rl = batch->rollout_log_prob;
  for (size_t b = 0; b < B; b++)
    {
      const size_t off = b * T;
      bool binary;
      if (!dw_mask_row_to_float (batch, off, T, mf, &binary))
        {
          free (W);
          free (MO);
          return -1;
        }
      in.o = O + off;
      in.r = Rl + off;
      in.m = mf;
      in.w = is_tok ? W + off : NULL;
      DwRowOut ro;
      if (simd && binary)
        dw_row_pass_simd (&in, &ro);
      else
        dw_row_pass_scalar (&in, &ro);
      nb[b] = R (&c, ro.n);
      N += ro.n;
      any |= ro.n_valid > 0;
      n_valid_rows += nb[b] > 0;
      const double nvd = ro.n; /* Σ m over valid tokens */

      /* IS */
      if (is_tok)
        {
          ra.sw += ro.sw;
          ra.fh += ro.fh;
          ra.fl += ro.fl;
          ra.su += ro.su;
          ra.su2 += ro.su2;
          if (ro.n_valid)
            {
              ra.mx = dw_torch_max (ra.mx, ro.wmax);
              ra.mn = dw_torch_min (ra.mn, ro.wmin);
            }
          sm[b] = mmean_r (&c, ro.sw, b);
          bn_s += ro.swt;
        }
      else if (is_seq)
        {
          lrm[b] = R (&c, ro.sl);
          const float wb = expf ((float)dw_torch_clamp (lrm[b], -SAFETY, SAFETY));
          float *w = W + off;
          double rw = 0, rwt = 0;
          if (binary)
            {
              for (size_t t = 0; t < T; t++)
                {
                  const float x = wb * mf[t];
                  w[t] = x > in.C ? in.C : x;
                }
              if (ro.n_valid)
                {
                  const double x = wb;
                  ra.sw += x * nvd;
                  ra.fh += (x > Cr) * nvd;
                  ra.fl += (x < cr) * nvd;
                  ra.mx = dw_torch_max (ra.mx, x);
                  ra.mn = dw_torch_min (ra.mn, x);
                  const double u = dw_torch_clamp (x, cr, Cr);
                  ra.su += u * nvd;
                  ra.su2 += R (&c, u * u) * nvd;
                  rw = x * nvd;
                  rwt = (x > Cr ? Cr : x) * nvd;
                }
            }
          else
            for (size_t t = 0; t < T; t++)
              {
                const float xf = wb * mf[t];
                w[t] = xf > in.C ? in.C : xf;
                if (mf[t] == 0)
                  continue;
                const double mv = mf[t], x = xf;
                ra.sw += x * mv;
                rw += x * mv;
                ra.fh += (x > Cr) * mv;
                ra.fl += (x < cr) * mv;
                ra.mx = dw_torch_max (ra.mx, x);
                ra.mn = dw_torch_min (ra.mn, x);
                const double u = dw_torch_clamp (x, cr, Cr);
                ra.su += u * mv;
                ra.su2 += R (&c, u * u) * mv;
                rwt += (double)w[t] * mv;
              }
          sm[b] = mmean_r (&c, rw, b);
          rowsw[b] = rwt;
          if (nb[b] > 0)
            bn_s += mmean_r (&c, rwt, b), bn_nv += 1;
        }

      /* RS: seq options decide the whole row, token options each token */
      bool row_keep = true;
      if (any_tok_opt)
        for (size_t t = 0; t < T; t++)
          keep[t] = 1.0f;
      for (size_t oi = 0; oi < n_opt; oi++)
        {
          const DwRsBound *bd = &p.rs.bounds[oi];
          const int k = dw_rs_option_k (bd->option);
          const DwRsAgg agg = dw_rs_option_agg (bd->option);
          const bool k1 = k == 1;
          const double up_c = R (&c, bd->log_upper);
          const double lo_c = k1 ? R (&c, bd->log_lower) : 0.0;
          const double lo_metric = k1 ? lo_c : 0.0;
          RsAcc *a = &racc[oi];
          double sv;
          bool row_rej = false;
          if (agg != DW_RS_AGG_TOKEN)
            {
              if (agg == DW_RS_AGG_MEAN)
                sv = mmean_r (&c, ro.sk[k - 1], b);
              else if (agg == DW_RS_AGG_SUM)
                sv = R (&c, ro.sk[k - 1]);
              else
                sv = ro.n_valid ? ro.mk[k - 1] : 0.0;
              const bool ks = k1 ? (sv <= up_c && sv >= lo_c) : (sv <= up_c);
              row_keep &= ks;
              if (ro.n_valid)
                {
                  a->sum_stat += sv * nvd;
                  const double u = dw_torch_clamp (sv, lo_metric, up_c);
                  a->su += u * nvd;
                  a->su2 += R (&c, u * u) * nvd;
                  a->masked += (1.0 - ks) * nvd;
                  row_rej = !ks;
                }
            }
          else
            {
              const float upf = (float)up_c, lof = (float)lo_c;
              double rs = 0;
              for (size_t t = 0; t < T; t++)
                {
                  const float ls = (float)dw_torch_clamp (lrow[t], -SAFETY, SAFETY);
                  const float kt = k == 1 ? -ls : k == 2 ? 0.5f * (ls * ls) : (erow[t] - 1.0f) - ls;
                  const bool kp = k1 ? (kt <= upf && kt >= lof) : (kt <= upf);
                  keep[t] *= kp;
                  if (mf[t] == 0)
                    continue;
                  const double mv = mf[t], x = kt;
                  rs += x * mv;
                  a->sum_stat += x * mv;
                  a->mx = dw_torch_max (a->mx, x);
                  a->mn = dw_torch_min (a->mn, x);
                  a->fh += (x > up_c) * mv;
                  a->fl += (x < lo_metric) * mv;
                  const double u = dw_torch_clamp (x, lo_metric, up_c);
                  a->su += u * mv;
                  a->su2 += R (&c, u * u) * mv;
                  a->masked += (1.0 - kp) * mv;
                  row_rej |= !kp;
                }
              sv = mmean_r (&c, rs, b);
            }
          svs[oi * B + b] = sv;
          if (nb[b] > 0 && row_rej)
            a->seq_masked += 1;
        }

      /* output mask = m · keep, in the mask dtype */
      unsigned char *mo = MO + off * msz;
      const unsigned char *mi = (const unsigned char *)batch->response_mask + off * msz;
      if (n_opt == 0 || (row_keep && !any_tok_opt))
        memcpy (mo, mi, T * msz);
      else if (!row_keep)
        {
          /* the whole row rejected: Σ (1 − 0)·m over valid tokens is the row's Σ m */
          fast_mask_row (batch->mask_dtype, mi, NULL, mo, T);
          rs_masked += ro.n;
          rs_rows_rej += ro.n_valid > 0;
        }
      else
        {
          bool rej = false;
          double rm = 0;
          for (size_t t = 0; t < T; t++)
            {
              /* padding adds (1 − keep)·0 = 0 */
              rm += (1.0 - keep[t]) * mf[t];
              rej |= (mf[t] != 0) & (keep[t] == 0);
            }
          fast_mask_row (batch->mask_dtype, mi, keep, mo, T);
          rs_masked += rm;
          rs_rows_rej += rej;
        }

      /* off-policy: Σ(rollout − old)·m is −Σℓ·m term by term */
      oa.kl += -ro.sl;
      oa.k3 += ro.k3kl;
      oa.chi += ro.chi;
      off_row (&c, &oa, b, ro.so, ro.sr, ro.sl);
    }
  if (!any)
    {
      free (W);
      free (MO);
      return -1; /* the reference path raises verl's error */
    }
  c.N = N;
  c.cnt_dt = R (&c, R (&c, N) + EPS);

  MetricList L = { .prefix = "rollout_corr/" };
  if (p.is_on)
    {
      ratio_emit (&c, &L, "rollout_is", &ra, is_seq ? lrm : NULL, p.is_upper, 1.0 / p.is_upper, sm,
                  false);
      if (p.batch_normalize)
        {
          const double mu = is_tok ? mmean_b (&c, bn_s) : bn_s / fmax (bn_nv, 1e-8);
          if (mu > 1e-8)
            {
              const float mud = (float)mu;
              for (size_t i = 0; i < BT; i++)
                W[i] = W[i] / mud;
              put (&L, "rollout_is_batch_norm_factor", mu);
            }
          else
            put (&L, "rollout_is_batch_norm_factor", 1.0);
        }
      res->weights = W;
      res->weights_dtype = DW_DTYPE_F32;
    }
  for (size_t oi = 0; oi < n_opt; oi++)
    rs_option_emit (&c, &L, &p.rs.bounds[oi], &racc[oi], svs + oi * B, n_valid_rows);
  if (n_opt)
    {
      put (&L, "rollout_rs_masked_fraction", mmean_b (&c, rs_masked));
      put (&L, "rollout_rs_seq_masked_fraction", rs_rows_rej / (double)B);
    }
  res->mask = MO;
  res->mask_dtype = batch->mask_dtype;
  off_emit (&c, &L, &oa, false);
  res->rows = B;
  res->cols = T;
  return finish (res, &L, error) ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* G1 (4424616d7): mismatch_helper.compute_rollout_importance_weights (§5.7)                    */

static bool
run_g1 (const Ctx *c, const DwPlan *plan, DwCorrectionResult *res, DwCorrectionError *error)
{
  const size_t B = c->B, T = c->T, BT = B * T;
  MetricList L = { .prefix = "mismatch/" };
  if (plan->nothing)
    {
      /* nothing computed: no weights, the mask unchanged */
      double *m = c->m;
      if (!emit_array (res, false, c->batch->mask_dtype, m, BT, error))
        return false;
      return finish (res, &L, error);
    }
  const Level level = plan->is_level;
  const bool mask_mode = plan->is_mode != DW_IS_TRUNCATE;
  const double up = plan->is_upper, lo = plan->is_lower;
  const bool veto_on = plan->veto_on;
  double *w = malloc ((BT ? BT : 1) * sizeof (double));
  double *keep = malloc ((BT ? BT : 1) * sizeof (double));
  double *lrm = calloc (2 * B + 1, sizeof (double));
  if (!w || !keep || !lrm)
    {
      free (w);
      free (keep);
      free (lrm);
      return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
    }
  double *sm = lrm + B;
  if (level != DW_LEVEL_TOKEN)
    row_log (c, level, lrm);
  ratios (c, level, lrm, w);
  ratio_metrics_ex (c, &L, "rollout_is", w, level == DW_LEVEL_TOKEN ? NULL : lrm, up, lo, sm,
                    level == DW_LEVEL_GEOMETRIC);
  const double upr = R (c, up), lor = R (c, lo);
  double masked = 0, rows_rej = 0;
  for (size_t b = 0; b < B; b++)
    {
      double rm = 0;
      for (size_t t = 0; t < T; t++)
        {
          size_t i = b * T + t;
          keep[i] = 1.0;
          if (mask_mode)
            keep[i] = (w[i] >= lor && w[i] <= upr) ? 1.0 : 0.0;
          else if (w[i] > upr)
            w[i] = upr;
          if (V (c, i))
            rm += (1.0 - keep[i]) * c->m[i];
        }
      masked += rm;
      rows_rej += level == DW_LEVEL_TOKEN ? (R (c, rm) > 0) : (T > 0 ? 1.0 - keep[b * T] : 0.0);
    }
  if (mask_mode)
    {
      put (&L, "rollout_is_masked_fraction", mmean_b (c, masked));
      put (&L, "rollout_is_seq_masked_fraction", rows_rej / (double)B);
    }
  double vetoed = 0, cat = 0;
  if (veto_on)
    {
      const double lv = (float)log ((float)plan->veto);
      for (size_t b = 0; b < B; b++)
        {
          bool has = false;
          for (size_t t = 0; t < T; t++)
            {
              size_t i = b * T + t;
              if (V (c, i) && c->l[i] < lv)
                has = true, cat += c->m[i];
            }
          vetoed += has;
          if (has)
            for (size_t t = 0; t < T; t++)
              keep[b * T + t] = 0.0;
        }
    }
  put (&L, "rollout_is_veto_fraction", vetoed / (double)B);
  put (&L, "rollout_is_catastrophic_token_fraction", mmean_b (c, cat));
  for (size_t i = 0; i < BT; i++)
    {
      w[i] = R (c, w[i] * c->m[i]);
      keep[i] = c->m[i] * keep[i];
    }
  DwDType mdt = c->batch->mask_dtype == DW_DTYPE_F64 ? DW_DTYPE_F64 : DW_DTYPE_F32;
  bool ok = emit_array (res, true, c->batch->lp_dtype, w, BT, error)
            && emit_array (res, false, mdt, keep, BT, error);
  offpolicy_ex (c, &L, true);
  free (w);
  free (keep);
  free (lrm);
  if (!ok)
    {
      free (L.m);
      return false;
    }
  return finish (res, &L, error);
}

/* ------------------------------------------------------------------------------------------ */
/* slime mis.py (§6): per-sample tensors reduced per sample, averaged over samples              */

enum
{
  S_TRAINING_LOG_PPL,
  S_TRAINING_PPL,
  S_ROLLOUT_LOG_PPL,
  S_ROLLOUT_PPL,
  S_KL,
  S_K3_KL,
  S_LOG_PPL_DIFF,
  S_LOG_PPL_ABS_DIFF,
  S_PPL_RATIO,
  S_CHI2_TOKEN,
  S_CHI2_SEQ,
  S_TIS_BEFORE,
  S_TIS_TRUNC,
  S_TIS_CLIP_LOW,
  S_TIS_CLIP_HIGH,
  S_TIS_MASK_LOW,
  S_TIS_MASK_HIGH,
  S_TIS_AFTER,
  S_RS_LOW,
  S_RS_HIGH,
  S_RS_CAT_TOKEN,
  S_RS_CAT_SEQ,
  S_AFTER_TIS_RS,
  S_BN,
  S_FINAL_MEAN,
  S_FINAL_MIN,
  S_FINAL_MAX,
  S_N
};

static const char *const slime_names[S_N] = {
  "training_log_ppl",
  "training_ppl",
  "rollout_log_ppl",
  "rollout_ppl",
  "kl",
  "k3_kl",
  "log_ppl_diff",
  "log_ppl_abs_diff",
  "ppl_ratio",
  "chi2_token",
  "chi2_seq",
  "tis_weight_before_bound",
  "tis_truncate_fraction",
  "tis_clip_fraction_low",
  "tis_clip_fraction_high",
  "tis_mask_fraction_low",
  "tis_mask_fraction_high",
  "tis_weight_after_bound",
  "rs_mask_fraction_low",
  "rs_mask_fraction_high",
  "rs_catastrophic_token_fraction",
  "rs_catastrophic_seq_fraction",
  "is_ratio_mean_after_tis_rs",
  "batch_norm_factor",
  "is_ratio_mean_final",
  "is_ratio_min_final",
  "is_ratio_max_final",
};

typedef struct
{
  double tot[S_N];
  bool used[S_N];
} SlimeAcc;

/* per-sample reduction of a per-token tensor x (NULL: the constant @k) */
static double
sred (const double *m, size_t T, const double *x, double k)
{
  double s = 0, n = 0;
  for (size_t t = 0; t < T; t++)
    {
      s += (x ? x[t] : k) * m[t];
      n += m[t];
    }
  return s / fmax (n, 1.0);
}

static bool
run_slime (const Ctx *c, const DwPlan *plan, DwCorrectionResult *res, DwCorrectionError *error)
{
  const size_t B = c->B, T = c->T, BT = B * T;
  const DwBatch *bt = c->batch;
  const bool use_tis = plan->slime_use_tis, use_rs = plan->slime_use_rs, bn = plan->batch_normalize;
  const Level tl = plan->is_level, rl = plan->rs_level;
  const int mode = plan->is_mode == DW_IS_TRUNCATE ? 0 : plan->is_mode == DW_IS_CLAMP ? 1 : 2;
  const bool veto_none = !plan->veto_on;
  const double up = plan->is_upper, tlo = plan->is_lower, rlo = plan->rs_lower,
               rup = plan->rs_upper, veto = plan->veto;
  double *W = ws_get (WS_SLIME_W, BT * sizeof (double));
  double *NM = ws_get (WS_SLIME_NM, BT * sizeof (double));
  double *tmp = ws_get (WS_SCRATCH, (3 * T + 1) * sizeof (double));
  if (!W || !NM || !tmp)
    return dw_error_set (error, DW_ERROR_VALUE, "out of memory");
  double *lr = tmp, *x = tmp + T, *rw = tmp + 2 * T;
  SlimeAcc A;
  memset (&A, 0, sizeof A);
#define ACC(id, val)      \
  do                      \
    {                     \
      A.tot[id] += (val); \
      A.used[id] = true;  \
    }                     \
  while (0)
  for (size_t b = 0; b < B; b++)
    {
      const double *mm = c->m + b * T;
      double *w = W + b * T, *nm = NM + b * T;
      double so = 0, sr = 0, n = 0, sl = 0;
      for (size_t t = 0; t < T; t++)
        {
          size_t i = b * T + t;
          double o = LP (bt->old_log_prob, c->f32, i), r = LP (bt->rollout_log_prob, c->f32, i);
          so += o * mm[t];
          sr += r * mm[t];
          n += mm[t];
          lr[t] = c->l[i];
          sl += lr[t] * mm[t];
        }
      double mt = so / fmax (n, 1.0), mr = sr / fmax (n, 1.0);
      ACC (S_TRAINING_LOG_PPL, sred (mm, T, NULL, -mt));
      ACC (S_TRAINING_PPL, sred (mm, T, NULL, exp (-mt)));
      ACC (S_ROLLOUT_LOG_PPL, sred (mm, T, NULL, -mr));
      ACC (S_ROLLOUT_PPL, sred (mm, T, NULL, exp (-mr)));
      for (size_t t = 0; t < T; t++)
        x[t] = -lr[t];
      ACC (S_KL, sred (mm, T, x, 0));
      for (size_t t = 0; t < T; t++)
        x[t] = R (c, R (c, R (c, EXP (c, lr[t])) - lr[t]) - 1.0);
      ACC (S_K3_KL, sred (mm, T, x, 0));
      ACC (S_LOG_PPL_DIFF, sred (mm, T, NULL, mr - mt));
      ACC (S_LOG_PPL_ABS_DIFF, sred (mm, T, NULL, fabs (mr - mt)));
      ACC (S_PPL_RATIO, sred (mm, T, NULL, exp (mr - mt)));
      for (size_t t = 0; t < T; t++)
        {
          double rho = exp (dw_torch_clamp (lr[t], -SAFETY, SAFETY));
          x[t] = rho * rho;
        }
      ACC (S_CHI2_TOKEN, sred (mm, T, NULL, sred (mm, T, x, 0) - 1.0));
      ACC (S_CHI2_SEQ, sred (mm, T, NULL, exp (2 * dw_torch_clamp (sl, -SAFETY, SAFETY)) - 1.0));
      if (!use_tis)
        {
          for (size_t t = 0; t < T; t++)
            nm[t] = mm[t];
          continue;
        }
      double nmax1 = fmax (n, 1.0);
      for (size_t t = 0; t < T; t++)
        {
          double llr = tl == DW_LEVEL_TOKEN ? lr[t] : tl == DW_LEVEL_SEQUENCE ? sl : sl / nmax1;
          w[t] = exp (dw_torch_clamp (llr, -SAFETY, SAFETY));
          nm[t] = mm[t];
        }
      ACC (S_TIS_BEFORE, sred (mm, T, w, 0));
      if (mode == 0)
        {
          for (size_t t = 0; t < T; t++)
            x[t] = w[t] > up;
          ACC (S_TIS_TRUNC, sred (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            w[t] = dw_torch_clamp (w[t], 0, up) * mm[t];
        }
      else if (mode == 1)
        {
          for (size_t t = 0; t < T; t++)
            x[t] = w[t] < tlo;
          ACC (S_TIS_CLIP_LOW, sred (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            x[t] = w[t] > up;
          ACC (S_TIS_CLIP_HIGH, sred (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            w[t] = dw_torch_clamp (w[t], tlo, up) * mm[t];
        }
      else
        {
          for (size_t t = 0; t < T; t++)
            x[t] = w[t] < tlo;
          ACC (S_TIS_MASK_LOW, sred (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            x[t] = w[t] > up;
          ACC (S_TIS_MASK_HIGH, sred (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            {
              nm[t] = mm[t] * (w[t] >= tlo && w[t] <= up);
              w[t] = w[t] * mm[t];
            }
        }
      ACC (S_TIS_AFTER, sred (mm, T, w, 0));
      if (use_rs)
        {
          for (size_t t = 0; t < T; t++)
            {
              double l2 = rl == DW_LEVEL_TOKEN ? lr[t] : rl == DW_LEVEL_SEQUENCE ? sl : sl / nmax1;
              rw[t] = exp (dw_torch_clamp (l2, -SAFETY, SAFETY));
            }
          for (size_t t = 0; t < T; t++)
            x[t] = rw[t] < rlo;
          ACC (S_RS_LOW, sred (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            x[t] = rw[t] > rup;
          ACC (S_RS_HIGH, sred (mm, T, x, 0));
          for (size_t t = 0; t < T; t++)
            nm[t] *= (rw[t] >= rlo && rw[t] <= rup);
          if (!veto_none)
            {
              double lv = log (veto);
              bool any = false;
              for (size_t t = 0; t < T; t++)
                {
                  x[t] = (lr[t] < lv && mm[t] != 0);
                  any |= x[t] != 0;
                }
              ACC (S_RS_CAT_TOKEN, sred (mm, T, x, 0));
              ACC (S_RS_CAT_SEQ, sred (mm, T, NULL, any ? 1.0 : 0.0));
              if (any)
                for (size_t t = 0; t < T; t++)
                  nm[t] = 0;
            }
        }
      ACC (S_AFTER_TIS_RS, sred (mm, T, w, 0));
    }
  if (use_tis)
    {
      if (bn)
        {
          double mean;
          if (tl == DW_LEVEL_TOKEN)
            {
              double s = 0, n = 0;
              for (size_t i = 0; i < BT; i++)
                s += W[i] * c->m[i], n += c->m[i];
              mean = s / fmax (n, 1.0);
            }
          else
            {
              double s = 0;
              for (size_t b = 0; b < B; b++)
                s += sred (c->m + b * T, T, W + b * T, 0);
              mean = s / (double)B;
            }
          bool apply = mean > 1e-8;
          if (apply)
            for (size_t i = 0; i < BT; i++)
              W[i] /= mean;
          for (size_t b = 0; b < B; b++)
            ACC (S_BN, sred (c->m + b * T, T, NULL, apply ? mean : 1.0));
        }
      for (size_t b = 0; b < B; b++)
        {
          const double *mm = c->m + b * T, *w = W + b * T;
          double vmin = INFINITY, vmax = -INFINITY;
          bool any = false;
          for (size_t t = 0; t < T; t++)
            if (mm[t] != 0)
              {
                any = true;
                vmin = dw_torch_min (vmin, w[t]);
                vmax = dw_torch_max (vmax, w[t]);
              }
          ACC (S_FINAL_MEAN, sred (mm, T, NULL, sred (mm, T, w, 0)));
          ACC (S_FINAL_MIN, sred (mm, T, NULL, any ? vmin : 0.0));
          ACC (S_FINAL_MAX, sred (mm, T, NULL, any ? vmax : 0.0));
        }
    }
#undef ACC
  MetricList L = { .prefix = "mis_" };
  for (int k = 0; k < S_N; k++)
    if (A.used[k])
      put (&L, slime_names[k], A.tot[k] / (double)B);
  bool ok = true;
  if (use_tis)
    ok &= emit_array (res, true, bt->lp_dtype, W, BT, error);
  ok &= emit_array (res, false, DW_DTYPE_F32, NM, BT, error); /* slime: float32 loss masks */
  if (!ok)
    {
      free (L.m);
      return false;
    }
  return finish (res, &L, error);
}

/* ------------------------------------------------------------------------------------------ */
/* entry points                                                                                 */

/* the batch checks verl makes before any config check (dtype, shape, a valid token) */
static bool
dw_correction_check_batch (const DwBatch *batch, DwCorrectionError *error)
{
  Ctx context;
  return ctx_init (&context, batch, error);
}

static bool
dw_correction_dispatch (const DwBatch *batch, const DwPlan *plan, DwEntry entry,
                        DwCorrectionResult *result, DwCorrectionError *error)
{
  if (entry == DW_ENTRY_MASK)
    {
      int fast = run_verl_fast (batch, plan, result, error);
      if (fast >= 0)
        return fast == 1;
    }
  Ctx context;
  if (!ctx_init (&context, batch, error))
    return false;
  result->rows = context.B;
  result->cols = context.T;
  if (entry == DW_ENTRY_OFFPOLICY)
    return run_verl (&context, plan, entry, result, error);
  if ((plan->is_on && plan->path == DW_PATH_VERL_K_OPTIONS && plan->is_metrics != DW_IS_METRICS_RAW)
      || plan->mismatch_quantiles)
    return dw_error_set (error, DW_ERROR_VALUE, "%s: IS is not implemented yet.",
                         dw_generation_name (plan->generation));
  switch (plan->path)
    {
    case DW_PATH_VERL_K_OPTIONS:
    case DW_PATH_VERL_LEGACY_RS:
      return run_verl (&context, plan, entry, result, error);
    case DW_PATH_VERL_MISMATCH:
      return run_g1 (&context, plan, result, error);
    case DW_PATH_SLIME_MIS:
      return run_slime (&context, plan, result, error);
    default:
      return dw_error_set (error, DW_ERROR_VALUE, "%s: path %d is not implemented.",
                           dw_generation_name (plan->generation), (int)plan->path);
    }
}

bool
dw_correction_run_plan (const DwBatch *batch, const DwPlan *plan, DwEntry entry,
                        DwCorrectionResult *result, DwCorrectionError *error)
{
  dw_correction_error_clear (error);
  dw_correction_result_init (result);
  if (batch == NULL || plan == NULL)
    return dw_error_set (error, DW_ERROR_VALUE, "no batch or no plan.");
  bool ok = dw_correction_dispatch (batch, plan, entry, result, error);
  if (!ok)
    dw_correction_result_clear (result);
  return ok;
}

bool
dw_correction_run_entry (const DwBatch *batch, const DwConfig *config, DwEntry entry,
                         DwCorrectionResult *result, DwCorrectionError *error)
{
  dw_correction_error_clear (error);
  dw_correction_result_init (result);
  if (batch == NULL || config == NULL)
    return dw_error_set (error, DW_ERROR_VALUE, "no batch or no config.");
  if (dw_config_get (config, "preset"))
    return dw_error_set (error, DW_ERROR_VALUE, "preset must be resolved with dw_preset_apply().");
  DwPlan plan;
  if (entry == DW_ENTRY_OFFPOLICY)
    {
      /* compute_rollout_corr_metrics_from_logprobs takes no configuration */
      memset (&plan, 0, sizeof plan);
      plan.generation = config->generation;
      plan.path = DW_PATH_VERL_K_OPTIONS;
    }
  else if (!dw_plan_build (config, &plan, error))
    {
      /* verl checks the batch first: its error wins */
      DwCorrectionError batch_error;
      if (!dw_correction_check_batch (batch, &batch_error))
        *error = batch_error;
      return false;
    }
  return dw_correction_run_plan (batch, &plan, entry, result, error);
}

bool
dw_correction_run (const DwBatch *batch, const DwConfig *config, DwCorrectionResult *result,
                   DwCorrectionError *error)
{
  return dw_correction_run_entry (batch, config, DW_ENTRY_MASK, result, error);
}

bool
dw_correction_check_config (const DwConfig *config, DwCorrectionError *error)
{
  DwPlan plan;
  if (config && dw_config_get (config, "preset"))
    return dw_error_set (error, DW_ERROR_VALUE, "preset must be resolved with dw_preset_apply().");
  return dw_plan_build (config, &plan, error);
}

/* ------------------------------------------------------------------------------------------ */
/* per-row sufficient statistics                                                                */

void
dw_row_stats_compute (const DwBatch *batch, DwRowStats *rows)
{
  const bool f32 = batch->lp_dtype == DW_DTYPE_F32;
  for (size_t b = 0; b < batch->rows; b++)
    {
      DwRowStats *s = &rows[b];
      memset (s, 0, sizeof *s);
      s->min_l = INFINITY;
      double mx[3] = { -INFINITY, -INFINITY, -INFINITY };
      for (size_t t = 0; t < batch->cols; t++)
        {
          size_t i = b * batch->cols + t;
          double mv = dw_batch_mask_value (batch, i);
          if (mv == 0)
            continue;
          double o = LP (batch->old_log_prob, f32, i), r = LP (batch->rollout_log_prob, f32, i);
          double l = f32 ? (double)(float)(o - r) : o - r;
          double ls = dw_torch_clamp (l, -SAFETY, SAFETY);
          double k[3];
          k[0] = -ls;
          k[1] = f32 ? (double)(float)(0.5 * (float)(ls * ls)) : 0.5 * ls * ls;
          k[2] = f32 ? (double)((float)((float)(expf ((float)ls)) - 1.0f) - (float)ls)
                     : exp (ls) - 1.0 - ls;
          s->n += mv;
          s->n_valid++;
          s->sum_l += l * mv;
          s->sum_old += o * mv;
          s->sum_roll += r * mv;
          for (int j = 0; j < 3; j++)
            {
              s->sum_k[j] += k[j] * mv;
              mx[j] = dw_torch_max (mx[j], k[j]);
            }
          s->min_l = dw_torch_min (s->min_l, l);
        }
      for (int j = 0; j < 3; j++)
        s->max_k[j] = s->n_valid ? mx[j] : 0.0;
    }
}
