/* dw-whatif-engine.c — sufficient statistics of rollout batches and fast re-evaluation
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every formula mirrors core/correction/dw-correction.c (which mirrors verl, see
 * ../shared/docs/ROLLOUT_CORRECTION.md §2, §5): sums that do not depend on a threshold are
 * accumulated here in exactly the order dw-correction.c uses (same doubles); sums that do depend on
 * one (clamped IS weights, clamped k statistics, truncated weights) come from the sorted
 * valid-token log-ratios and their block prefix sums in double-double, i.e. the exactly rounded
 * sum, which is what dw-correction.c's double running sum gives whenever that sum is exact
 * (float32 terms of a bounded range) and differs from it by a few double ulps otherwise.
 */
#include "config.h"

#include "dw-whatif-engine.h"
#include "dw-torch-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SAFETY 20.0
#define EPS    1e-8
#define BLOCK  64
/* cut values of the row count table (see row_count_cut) */
#define N_CUT 64

G_DEFINE_QUARK (dw - whatif - error - quark, dw_whatif_error)

/* ------------------------------------------------------------------------------------------ */
/* double-double sums                                                                          */

typedef struct
{
  double hi, lo;
} DD;

static inline DD
dd_add_d (DD a, double b)
{
  double s = a.hi + b;
  double bb = s - a.hi;
  double e = (a.hi - (s - bb)) + (b - bb);
  e += a.lo;
  double h = s + e;
  DD r = { h, e - (h - s) };
  return r;
}

static inline DD
dd_add (DD a, DD b)
{
  DD r = dd_add_d (a, b.hi);
  return dd_add_d (r, b.lo);
}

static inline DD
dd_neg (DD a)
{
  DD r = { -a.hi, -a.lo };
  return r;
}

static inline double
dd_val (DD a)
{
  return a.hi + a.lo;
}

/* ------------------------------------------------------------------------------------------ */
/* the statistics                                                                              */

enum
{
  Q_W,    /* w = R(exp(ℓ̃)) */
  Q_W2,   /* R(w·w) */
  Q_LS,   /* ℓ̃ */
  Q_LS2,  /* R(ℓ̃·ℓ̃) */
  Q_K2,   /* R(0.5·R(ℓ̃²)) */
  Q_K2SQ, /* R(k2·k2) */
  Q_K3,   /* R(R(R(exp ℓ̃) − 1) − ℓ̃) */
  Q_K3SQ, /* R(k3·k3) */
  N_Q,
  Q_RAW = N_Q /* ℓ itself (not summed) */
};

typedef struct
{
  double n;  /* R(Σ m) */
  double nv; /* # valid tokens (== Σ m: masks are 0/1 on the fast path) */
  double sum_l;
  double lrm_seq, w_seq, sm_seq; /* sequence level: R(Σℓ), exp, row mean of the weight */
  double lrm_geo, w_geo, sm_geo; /* geometric level (verl-0.7 RS, verl-0.6 IS) */
  double sm_tok;                 /* token level: row mean of w */
  double min_w, max_w;
  double min_l, max_l; /* raw ℓ (veto) */
  double sum_k[3], max_k[3], min_k[3];
} Row;

enum
{
  SO_SUM_K1,
  SO_SUM_K2,
  SO_SUM_K3,
  SO_MEAN_K1,
  SO_MEAN_K2,
  SO_MEAN_K3,
  SO_MAX_K2,
  SO_MAX_K3,
  N_SO
};

typedef enum
{
  L_TOKEN,
  L_SEQ,
  L_GEO
} Level;

/* per-row columns (struct of arrays: the row loops of an evaluation read a few contiguous
 * doubles per row instead of a 184-byte Row): the N_SO row statistics, then these */
enum
{
  C_N = N_SO, /* Row.n */
  C_NV,       /* Row.nv */
  C_X1MIN,    /* −clamp(max ℓ), −clamp(min ℓ): the row's extremes of k1 = −ℓ̃ */
  C_X1MAX,
  C_SM_TOK, /* Row.sm_tok, sm_seq, sm_geo: row means of the IS weight per level (Level order) */
  C_SM_SEQ,
  C_SM_GEO,
  C_W_SEQ, /* Row.w_seq, w_geo */
  C_W_GEO,
  C_LRM_SEQ, /* Row.lrm_seq, lrm_geo */
  C_LRM_GEO,
  N_COL
};

/* threshold-free statistics of the rows' weight means of one level over all rows (as ev_ratio
 * sums them), and the extremes of the rows' log-ratio (sequence and geometric levels) */
typedef struct
{
  double mean, s2, max, min, dev, lmax, lmin;
} LevelStat;

/* statistics of a row statistic over the valid rows (n > 0), in row order as ev_rs_head sums
 * them: they do not depend on a threshold */
typedef struct
{
  double sum, cnt, max, min, dev, s2;
} RowStat;

typedef struct
{
  gsize end_left;    /* [0, end_left): non-increasing */
  gsize start_right; /* [start_right, N): non-decreasing */
  double core_max;   /* max of the statistic on [end_left, start_right), -inf if empty */
  /* the core's values sorted, with block prefix sums of v and R(v²): exact counts and sums */
  gsize core_n;
  float *core_f; /* float32 batches (the values are float32) */
  double *core;  /* float64 batches */
  DD *core_p1, *core_p2;
} Shape;

struct _DwWhatifStep
{
  gint64 step;
  gboolean f32;
  gsize B, T;
  gboolean empty; /* no valid token: verl raises */
  gboolean fast;
  char *reason;
  double N, cnt_dt;
  gsize n_tok;
  float *lf;  /* sorted ℓ (f32 batches) */
  double *ld; /* sorted ℓ (f64 batches) */
  /* the same values sorted within each row: row b is [row_off[b], row_off[b + 1]) */
  float *rf;
  double *rd;
  gsize *row_off;
  /* row count table: cut_v[c] = the ℓ at sorted position c·N/N_CUT, cut_cnt[c·B + b] = tokens of
   * row b with ℓ < cut_v[c] (c = N_CUT: all of the row's tokens); NULL when a row may hold more
   * than 65535 tokens */
  double cut_v[N_CUT];
  guint16 *cut_cnt;
  /* per-row sorted k3 values, built on first need (token_k3 combined with sequence options) */
  GMutex row_k3_lock;
  float *row_k3f;
  double *row_k3d;
  gsize n_blocks;
  DD *prefix[N_Q]; /* [n_blocks + 1] */
  gboolean w_monotone;
  Shape shape_k2, shape_k3;
  double neg_k3_sum, neg_k3_sq; /* Σ over k3 < 0 of k3 and of R(k3²) (clamped to 0 by RS std) */
  Row *rows;
  double *col; /* [N_COL][B] */
  RowStat so_stat[N_SO];
  LevelStat lv_stat[3];
  double sw_tok, sw_seq, sw_geo;
  double tok_sum_k[3];
  double seq_sum_stat[N_SO];
  double mx_w, mn_w, mx_k[3], mn_k[3];
  /* the 13 off-policy metrics (unprefixed keys, as dw_correction_run_entry OFFPOLICY gives) */
  gsize n_off;
  DwMetric *off;
};

/* round to / exp in the step's dtype (dw-torch-private.h, as dw-correction.c) */
#define R(s, x)   dw_torch_round ((s)->f32, (x))
#define EXP(s, x) dw_torch_exp ((s)->f32, (x))

static inline double
mmean_b (const DwWhatifStep *s, double sum)
{
  return R (s, R (s, sum) / s->cnt_dt);
}

static inline double
mmean_r (const DwWhatifStep *s, double sum, double n)
{
  return R (s, R (s, sum) / R (s, n + EPS));
}

/* @acc += @v added @n times, as dw-correction.c adds a row-constant value once per valid token:
 * for float32 values and counts the product is exact and so is the sum in the bounded range the
 * metrics have; float64 values are added one by one so the rounding is the same */
static inline void
add_rep (const DwWhatifStep *s, double *acc, double v, double n)
{
  if (s->f32)
    *acc += v * n;
  else
    for (double k = 0; k < n; k++)
      *acc += v;
}

static inline double
lval (const DwWhatifStep *s, gsize i)
{
  return s->f32 ? (double)s->lf[i] : s->ld[i];
}

static inline double
qeval (const DwWhatifStep *s, int q, double l)
{
  double ls = dw_torch_clamp (l, -SAFETY, SAFETY), x;
  switch (q)
    {
    case Q_W:
      return R (s, EXP (s, ls));
    case Q_W2:
      x = R (s, EXP (s, ls));
      return R (s, x * x);
    case Q_LS:
      return ls;
    case Q_LS2:
      return R (s, ls * ls);
    case Q_K2:
      return R (s, 0.5 * R (s, ls * ls));
    case Q_K2SQ:
      x = R (s, 0.5 * R (s, ls * ls));
      return R (s, x * x);
    case Q_K3:
      return R (s, R (s, R (s, EXP (s, ls)) - 1.0) - ls);
    case Q_K3SQ:
      x = R (s, R (s, R (s, EXP (s, ls)) - 1.0) - ls);
      return R (s, x * x);
    default:
      return l;
    }
}

/* Σ of quantity @q over sorted positions [a, b) */
static DD
range_sum (const DwWhatifStep *s, int q, gsize a, gsize b)
{
  DD r = { 0, 0 };
  if (a >= b)
    return r;
  gsize ba = a / BLOCK, bb = b / BLOCK;
  if (ba == bb)
    {
      for (gsize i = a; i < b; i++)
        r = dd_add_d (r, qeval (s, q, lval (s, i)));
      return r;
    }
  for (gsize i = a; i < (ba + 1) * BLOCK; i++)
    r = dd_add_d (r, qeval (s, q, lval (s, i)));
  r = dd_add (r, dd_add (s->prefix[q][bb], dd_neg (s->prefix[q][ba + 1])));
  for (gsize i = bb * BLOCK; i < b; i++)
    r = dd_add_d (r, qeval (s, q, lval (s, i)));
  return r;
}

typedef enum
{
  OP_LT,
  OP_LE,
  OP_GT,
  OP_GE
} Op;

static inline gboolean
cmp (double x, Op op, double b)
{
  switch (op)
    {
    case OP_LT:
      return x < b;
    case OP_LE:
      return x <= b;
    case OP_GT:
      return x > b;
    default:
      return x >= b;
    }
}

/* first index in [lo, hi) where the predicate holds, assuming false…false true…true */
static gsize
first_true (const DwWhatifStep *s, int q, Op op, double bound, gsize lo, gsize hi)
{
  while (lo < hi)
    {
      gsize mid = lo + (hi - lo) / 2;
      if (cmp (qeval (s, q, lval (s, mid)), op, bound))
        hi = mid;
      else
        lo = mid + 1;
    }
  return lo;
}

/* first index in [lo, hi) where the predicate fails, assuming true…true false…false */
static gsize
first_false (const DwWhatifStep *s, int q, Op op, double bound, gsize lo, gsize hi)
{
  while (lo < hi)
    {
      gsize mid = lo + (hi - lo) / 2;
      if (cmp (qeval (s, q, lval (s, mid)), op, bound))
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static inline double
row_value (const DwWhatifStep *s, gsize i)
{
  return s->f32 ? (double)s->rf[i] : s->rd[i];
}

/* valid tokens of row @b with lo ≤ ℓ ≤ hi (raw ℓ). The bounds usually cut a few tokens off the
 * tails of a row, so both ends are found by galloping from the row's ends (a few probes in the
 * row's first and last cache lines) before a binary search over the remaining interval: a plain
 * binary search over a 2048-token row misses the cache on most of its 11 probes. */
static gsize
row_count_between (const DwWhatifStep *s, gsize b, double lo, double hi)
{
  const gsize a = s->row_off[b], e = s->row_off[b + 1];
  /* first ≥ lo: every index below x has ℓ < lo, the answer is in [x, y] */
  gsize x = a, y = e, d = 1;
  for (gsize i = a; i < e; d *= 2)
    {
      if (row_value (s, i) >= lo)
        {
          y = i;
          break;
        }
      x = i + 1;
      i = a + d;
    }
  while (x < y)
    {
      gsize m = x + (y - x) / 2;
      if (row_value (s, m) < lo)
        x = m + 1;
      else
        y = m;
    }
  const gsize first = x;
  /* first > hi: every index from y on has ℓ > hi, the answer is in [x, y] */
  x = first;
  y = e;
  d = 1;
  while (y > first)
    {
      gsize j = e - first >= d ? e - d : first;
      if (row_value (s, j) <= hi)
        {
          x = j + 1;
          break;
        }
      y = j;
      if (j == first)
        break;
      d *= 2;
    }
  while (x < y)
    {
      gsize m = x + (y - x) / 2;
      if (row_value (s, m) <= hi)
        x = m + 1;
      else
        y = m;
    }
  return x - first;
}

/* The count table turns a row count into a search over one short window of the row: tokens below
 * cut_v[c] ≤ x are counted by the table, tokens from cut_v[c + 1] > x on are not, and the row's
 * tokens between the two cuts (about row length / N_CUT) are searched. The window's position comes
 * from the table without probing the row, so the rows' windows are fetched independently of one
 * another rather than by a chain of dependent probes. */

/* the largest c with cut_v[c] ≤ x, or −1 */
static int
cut_index (const DwWhatifStep *s, double x)
{
  int lo = 0, hi = N_CUT;
  while (lo < hi)
    {
      int m = (lo + hi) / 2;
      if (s->cut_v[m] <= x)
        lo = m + 1;
      else
        hi = m;
    }
  return lo - 1;
}

/* tokens of row @b with ℓ < x (@le: ℓ ≤ x), @c = cut_index (s, x) */
static gsize
row_count_cut (const DwWhatifStep *s, gsize b, int c, double x, gboolean le)
{
  if (c < 0)
    return 0;
  const gsize base = s->row_off[b];
  gsize lo = s->cut_cnt[(gsize)c * s->B + b], hi = s->cut_cnt[(gsize)(c + 1) * s->B + b];
  while (lo < hi)
    {
      gsize m = lo + (hi - lo) / 2;
      double v = row_value (s, base + m);
      if (le ? v <= x : v < x)
        lo = m + 1;
      else
        hi = m;
    }
  return lo;
}

/* fetches the window row_count_cut (s, b, c, …) will search */
static inline void
row_count_prefetch (const DwWhatifStep *s, gsize b, int c)
{
  if (c < 0)
    return;
  const gsize base = s->row_off[b];
  gsize lo = s->cut_cnt[(gsize)c * s->B + b], hi = s->cut_cnt[(gsize)(c + 1) * s->B + b];
  if (hi <= lo)
    return;
  if (s->f32)
    {
      __builtin_prefetch (&s->rf[base + lo]);
      __builtin_prefetch (&s->rf[base + hi - 1]);
    }
  else
    {
      __builtin_prefetch (&s->rd[base + lo]);
      __builtin_prefetch (&s->rd[base + hi - 1]);
    }
}

static void
build_cut_table (DwWhatifStep *s)
{
  const gsize B = s->B, N = s->n_tok;
  if (s->T > G_MAXUINT16 || N == 0)
    return;
  for (int c = 0; c < N_CUT; c++)
    s->cut_v[c] = lval (s, (gsize)c * N / N_CUT);
  s->cut_cnt = g_new (guint16, (N_CUT + 1) * B);
  for (gsize b = 0; b < B; b++)
    {
      const gsize a = s->row_off[b], e = s->row_off[b + 1];
      gsize i = a;
      for (int c = 0; c < N_CUT; c++)
        {
          while (i < e && row_value (s, i) < s->cut_v[c])
            i++;
          s->cut_cnt[(gsize)c * B + b] = (guint16)(i - a);
        }
      s->cut_cnt[(gsize)N_CUT * B + b] = (guint16)(e - a);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* precompute                                                                                  */

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static inline guint32
float_key (float f)
{
  guint32 u;
  memcpy (&u, &f, 4);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static inline float
key_float (guint32 k)
{
  guint32 u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  float f;
  memcpy (&f, &u, 4);
  return f;
}

/* LSD radix sort, 3 passes of 11 bits: @v (row order, row b at [row_off[b], row_off[b + 1]))
 * becomes globally sorted, and @rows gets each row's values sorted in place of the row */
static void
sort_floats (float *v, gsize n, float *rows, const gsize *row_off, gsize n_rows)
{
  if (n == 0)
    return;
  guint32 *a = g_new (guint32, n), *b = g_new (guint32, n);
  guint32 *pa = g_new (guint32, n), *pb = g_new (guint32, n);
  for (gsize r = 0; r < n_rows; r++)
    for (gsize i = row_off[r]; i < row_off[r + 1]; i++)
      {
        a[i] = float_key (v[i]);
        pa[i] = (guint32)r;
      }
  for (int pass = 0; pass < 3; pass++)
    {
      gsize count[2049] = { 0 };
      int shift = pass * 11;
      for (gsize i = 0; i < n; i++)
        count[((a[i] >> shift) & 2047) + 1]++;
      for (int k = 0; k < 2048; k++)
        count[k + 1] += count[k];
      for (gsize i = 0; i < n; i++)
        {
          gsize d = count[(a[i] >> shift) & 2047]++;
          b[d] = a[i];
          pb[d] = pa[i];
        }
      guint32 *t = a;
      a = b;
      b = t;
      t = pa;
      pa = pb;
      pb = t;
    }
  gsize *cur = g_memdup2 (row_off, n_rows * sizeof (gsize));
  for (gsize i = 0; i < n; i++)
    {
      v[i] = key_float (a[i]);
      rows[cur[pa[i]]++] = v[i];
    }
  g_free (cur);
  g_free (a);
  g_free (b);
  g_free (pa);
  g_free (pb);
}

static inline double
core_at (const Shape *sh, gsize i)
{
  return sh->core_f ? (double)sh->core_f[i] : sh->core[i];
}

static void
shape_of (const DwWhatifStep *s, const double *k, Shape *sh)
{
  gsize n = s->n_tok, e = 0, st = n;
  if (n > 0)
    {
      e = 1;
      while (e < n && k[e] <= k[e - 1])
        e++;
      st = n - 1;
      while (st > 0 && k[st - 1] <= k[st])
        st--;
    }
  if (e > st) /* [st, e) is constant: split there */
    e = st;
  sh->end_left = e;
  sh->start_right = st;
  sh->core_max = -INFINITY;
  sh->core_n = st - e;
  double *core = g_new (double, sh->core_n ? sh->core_n : 1);
  for (gsize i = e; i < st; i++)
    {
      sh->core_max = fmax (sh->core_max, k[i]);
      core[i - e] = k[i];
    }
  qsort (core, sh->core_n, sizeof (double), cmp_double);
  if (s->f32)
    {
      sh->core_f = g_new (float, sh->core_n ? sh->core_n : 1);
      for (gsize i = 0; i < sh->core_n; i++)
        sh->core_f[i] = (float)core[i];
      g_free (core);
    }
  else
    sh->core = core;
  gsize nb = sh->core_n / BLOCK + 1;
  sh->core_p1 = g_new0 (DD, nb + 1);
  sh->core_p2 = g_new0 (DD, nb + 1);
  DD a1 = { 0, 0 }, a2 = { 0, 0 };
  for (gsize i = 0; i <= sh->core_n; i++)
    {
      if (i % BLOCK == 0)
        {
          sh->core_p1[i / BLOCK] = a1;
          sh->core_p2[i / BLOCK] = a2;
        }
      if (i == sh->core_n)
        break;
      double v = core_at (sh, i);
      a1 = dd_add_d (a1, v);
      a2 = dd_add_d (a2, R (s, v * v));
    }
}

static void
shape_clear (Shape *sh)
{
  g_free (sh->core);
  g_free (sh->core_f);
  g_free (sh->core_p1);
  g_free (sh->core_p2);
}

/* Σ of the core's sorted values [0, b) (sq: of R(v²)) */
static DD
core_sum (const DwWhatifStep *s, const Shape *sh, gsize b, gboolean sq)
{
  const DD *p = sq ? sh->core_p2 : sh->core_p1;
  DD r = p[b / BLOCK];
  for (gsize i = (b / BLOCK) * BLOCK; i < b; i++)
    {
      double v = core_at (sh, i);
      r = dd_add_d (r, sq ? R (s, v * v) : v);
    }
  return r;
}

static gboolean
offpolicy_metrics (DwWhatifStep *s, const DwBatch *batch)
{
  DwConfig cfg;
  DwCorrectionResult res;
  DwCorrectionError err;
  dw_config_init (&cfg, DW_GEN_VERL);
  if (!dw_correction_run_entry (batch, &cfg, DW_ENTRY_OFFPOLICY, &res, &err))
    return FALSE;
  s->n_off = res.n_metrics;
  s->off = g_memdup2 (res.metrics, res.n_metrics * sizeof (DwMetric));
  dw_correction_result_clear (&res);
  return TRUE;
}

static inline double
lp_at (const void *p, gboolean f32, gsize i)
{
  return f32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

DwWhatifStep *
dw_whatif_step_new (const DwBatch *batch, gint64 step, GError **error)
{
  g_return_val_if_fail (batch != NULL, NULL);
  if (batch->lp_dtype != DW_DTYPE_F32 && batch->lp_dtype != DW_DTYPE_F64)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_BATCH,
                   "step %" G_GINT64_FORMAT ": log-probs must be float32 or float64, got %s", step,
                   dw_dtype_name (batch->lp_dtype));
      return NULL;
    }
  const gsize B = batch->rows, T = batch->cols;
  if (T != 0 && (B * T) / T != B)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_BATCH,
                   "step %" G_GINT64_FORMAT ": batch shape overflows", step);
      return NULL;
    }
  DwWhatifStep *s = g_new0 (DwWhatifStep, 1);
  g_mutex_init (&s->row_k3_lock);
  s->step = step;
  s->f32 = batch->lp_dtype == DW_DTYPE_F32;
  s->B = B;
  s->T = T;
  s->fast = TRUE;
  s->rows = g_new0 (Row, B ? B : 1);
  const gboolean f32 = s->f32;
  /* token log-ratios of valid tokens, in row order first */
  gsize cap = 0;
  for (gsize i = 0; i < B * T; i++)
    cap += dw_batch_mask_value (batch, i) != 0;
  if (f32)
    s->lf = g_new (float, cap ? cap : 1);
  else
    s->ld = g_new (double, cap ? cap : 1);
  double N = 0;
  for (int j = 0; j < 3; j++)
    {
      s->mx_k[j] = -INFINITY;
      s->mn_k[j] = INFINITY;
    }
  s->mx_w = -INFINITY;
  s->mn_w = INFINITY;
  gsize n_tok = 0;
  s->row_off = g_new0 (gsize, B + 1);
  for (gsize b = 0; b < B; b++)
    {
      Row *r = &s->rows[b];
      s->row_off[b] = n_tok;
      double nb = 0, rw = 0;
      double mxk[3] = { -INFINITY, -INFINITY, -INFINITY },
             mnk[3] = { INFINITY, INFINITY, INFINITY };
      r->min_w = r->min_l = INFINITY;
      r->max_w = r->max_l = -INFINITY;
      for (gsize t = 0; t < T; t++)
        {
          gsize i = b * T + t;
          double mv = dw_batch_mask_value (batch, i);
          if (mv == 0)
            continue;
          if (mv != 1.0 && s->fast)
            {
              s->fast = FALSE;
              s->reason
                = g_strdup_printf ("mask value %g at row %zu, column %zu is not 0 or 1", mv, b, t);
            }
          double o = lp_at (batch->old_log_prob, f32, i),
                 ro = lp_at (batch->rollout_log_prob, f32, i);
          double l = f32 ? (double)((float)o - (float)ro) : o - ro;
          if (isnan (l) && s->fast)
            {
              s->fast = FALSE;
              s->reason = g_strdup_printf ("NaN log-ratio at row %zu, column %zu", b, t);
            }
          nb += mv;
          r->nv += 1;
          r->sum_l += l * mv;
          double ls = dw_torch_clamp (l, -SAFETY, SAFETY);
          double w = R (s, EXP (s, ls));
          rw += w * mv;
          s->sw_tok += w * mv;
          s->mx_w = dw_torch_max (s->mx_w, w);
          s->mn_w = dw_torch_min (s->mn_w, w);
          r->min_w = dw_torch_min (r->min_w, w);
          r->max_w = dw_torch_max (r->max_w, w);
          r->min_l = dw_torch_min (r->min_l, l);
          r->max_l = dw_torch_max (r->max_l, l);
          double k[3] = { -ls, R (s, 0.5 * R (s, ls * ls)), R (s, R (s, w - 1.0) - ls) };
          for (int j = 0; j < 3; j++)
            {
              r->sum_k[j] += k[j] * mv;
              s->tok_sum_k[j] += k[j] * mv;
              mxk[j] = dw_torch_max (mxk[j], k[j]);
              mnk[j] = dw_torch_min (mnk[j], k[j]);
              s->mx_k[j] = dw_torch_max (s->mx_k[j], k[j]);
              s->mn_k[j] = dw_torch_min (s->mn_k[j], k[j]);
            }
          if (f32)
            s->lf[n_tok++] = (float)l;
          else
            s->ld[n_tok++] = l;
        }
      r->n = R (s, nb);
      N += nb;
      for (int j = 0; j < 3; j++)
        {
          r->max_k[j] = r->nv > 0 ? mxk[j] : 0.0;
          r->min_k[j] = mnk[j];
        }
      r->sm_tok = mmean_r (s, rw, r->n);
      r->lrm_seq = R (s, r->sum_l);
      r->w_seq = R (s, EXP (s, dw_torch_clamp (r->lrm_seq, -SAFETY, SAFETY)));
      r->lrm_geo = mmean_r (s, r->sum_l, r->n);
      r->w_geo = R (s, EXP (s, dw_torch_clamp (r->lrm_geo, -SAFETY, SAFETY)));
    }
  s->row_off[B] = n_tok;
  s->n_tok = n_tok;
  s->N = N;
  s->cnt_dt = R (s, R (s, N) + EPS);
  s->empty = n_tok == 0;
  /* sums over tokens of row-constant values, in token order (as dw-correction.c adds them) */
  s->col = g_new (double, N_COL *(B ? B : 1));
  for (gsize b = 0; b < B; b++)
    {
      Row *r = &s->rows[b];
      double sv[N_SO];
      for (int j = 0; j < 3; j++)
        {
          sv[SO_SUM_K1 + j] = R (s, r->sum_k[j]);
          sv[SO_MEAN_K1 + j] = mmean_r (s, r->sum_k[j], r->n);
        }
      sv[SO_MAX_K2] = r->max_k[1];
      sv[SO_MAX_K3] = r->max_k[2];
      for (int o = 0; o < N_SO; o++)
        s->col[o * B + b] = sv[o];
      s->col[C_N * B + b] = r->n;
      s->col[C_NV * B + b] = r->nv;
      s->col[C_X1MIN * B + b] = -dw_torch_clamp (r->max_l, -SAFETY, SAFETY);
      s->col[C_X1MAX * B + b] = -dw_torch_clamp (r->min_l, -SAFETY, SAFETY);
      double rs = 0, rg = 0;
      for (gsize t = 0; t < (gsize)r->nv; t++)
        {
          s->sw_seq += r->w_seq;
          s->sw_geo += r->w_geo;
          rs += r->w_seq;
          rg += r->w_geo;
          for (int o = 0; o < N_SO; o++)
            s->seq_sum_stat[o] += sv[o];
        }
      r->sm_seq = mmean_r (s, rs, r->n);
      r->sm_geo = mmean_r (s, rg, r->n);
      s->col[C_SM_TOK * B + b] = r->sm_tok;
      s->col[C_SM_SEQ * B + b] = r->sm_seq;
      s->col[C_SM_GEO * B + b] = r->sm_geo;
      s->col[C_W_SEQ * B + b] = r->w_seq;
      s->col[C_W_GEO * B + b] = r->w_geo;
      s->col[C_LRM_SEQ * B + b] = r->lrm_seq;
      s->col[C_LRM_GEO * B + b] = r->lrm_geo;
    }
  for (int level = 0; level < 3; level++)
    {
      LevelStat *st = &s->lv_stat[level];
      const double *v = s->col + (C_SM_TOK + level) * B;
      double sm_sum = 0;
      for (gsize b = 0; b < B; b++)
        sm_sum += v[b];
      st->mean = sm_sum / (double)B;
      st->s2 = 0;
      st->max = st->dev = -INFINITY;
      st->min = INFINITY;
      for (gsize b = 0; b < B; b++)
        {
          st->s2 += (v[b] - st->mean) * (v[b] - st->mean);
          st->max = fmax (st->max, v[b]);
          st->min = fmin (st->min, v[b]);
          st->dev = fmax (st->dev, fabs (v[b] - 1.0));
        }
      st->lmax = -INFINITY;
      st->lmin = INFINITY;
      if (level == L_TOKEN)
        continue;
      const double *lr = s->col + (level == L_SEQ ? C_LRM_SEQ : C_LRM_GEO) * B;
      for (gsize b = 0; b < B; b++)
        {
          st->lmax = fmax (st->lmax, lr[b]);
          st->lmin = fmin (st->lmin, lr[b]);
        }
    }
  for (int o = 0; o < N_SO; o++)
    {
      RowStat *st = &s->so_stat[o];
      const double *v = s->col + o * B, *n = s->col + C_N * B;
      st->sum = st->cnt = st->s2 = 0;
      st->max = st->dev = -INFINITY;
      st->min = INFINITY;
      for (gsize b = 0; b < B; b++)
        {
          if (!(n[b] > 0))
            continue;
          st->sum += v[b];
          st->cnt += 1;
          st->max = dw_torch_max (st->max, v[b]);
          st->min = dw_torch_min (st->min, v[b]);
          st->dev = dw_torch_max (st->dev, fabs (v[b]));
        }
      double mean = st->cnt > 0 ? st->sum / st->cnt : 0.0;
      for (gsize b = 0; b < B; b++)
        if (n[b] > 0)
          st->s2 += (v[b] - mean) * (v[b] - mean);
    }
  if (!s->fast || s->empty)
    return s;
  if (f32)
    {
      s->rf = g_new (float, n_tok);
      sort_floats (s->lf, n_tok, s->rf, s->row_off, B);
    }
  else
    {
      s->rd = g_memdup2 (s->ld, n_tok * sizeof (double));
      for (gsize b = 0; b < B; b++)
        qsort (s->rd + s->row_off[b], s->row_off[b + 1] - s->row_off[b], sizeof (double),
               cmp_double);
      qsort (s->ld, n_tok, sizeof (double), cmp_double);
    }
  build_cut_table (s);
  /* block prefix sums, shapes */
  s->n_blocks = n_tok / BLOCK;
  double *k2 = g_new (double, n_tok ? n_tok : 1), *k3 = g_new (double, n_tok ? n_tok : 1);
  for (int q = 0; q < N_Q; q++)
    s->prefix[q] = g_new0 (DD, s->n_blocks + 1);
  DD acc[N_Q];
  memset (acc, 0, sizeof acc);
  s->w_monotone = TRUE;
  double prev_w = -INFINITY;
  for (gsize i = 0; i < n_tok; i++)
    {
      if (i % BLOCK == 0)
        for (int q = 0; q < N_Q; q++)
          s->prefix[q][i / BLOCK] = acc[q];
      double l = lval (s, i), ls = dw_torch_clamp (l, -SAFETY, SAFETY);
      double w = R (s, EXP (s, ls));
      double v[N_Q];
      v[Q_W] = w;
      v[Q_W2] = R (s, w * w);
      v[Q_LS] = ls;
      v[Q_LS2] = R (s, ls * ls);
      v[Q_K2] = R (s, 0.5 * v[Q_LS2]);
      v[Q_K2SQ] = R (s, v[Q_K2] * v[Q_K2]);
      v[Q_K3] = R (s, R (s, w - 1.0) - ls);
      v[Q_K3SQ] = R (s, v[Q_K3] * v[Q_K3]);
      for (int q = 0; q < N_Q; q++)
        acc[q] = dd_add_d (acc[q], v[q]);
      if (w < prev_w)
        s->w_monotone = FALSE;
      prev_w = w;
      k2[i] = v[Q_K2];
      k3[i] = v[Q_K3];
      if (v[Q_K3] < 0)
        {
          s->neg_k3_sum += v[Q_K3];
          s->neg_k3_sq += v[Q_K3SQ];
        }
    }
  if (n_tok % BLOCK == 0)
    for (int q = 0; q < N_Q; q++)
      s->prefix[q][n_tok / BLOCK] = acc[q];
  shape_of (s, k2, &s->shape_k2);
  shape_of (s, k3, &s->shape_k3);
  g_free (k2);
  g_free (k3);
  if (!offpolicy_metrics (s, batch))
    {
      s->fast = FALSE;
      s->reason = g_strdup ("off-policy metrics failed");
    }
  return s;
}

void
dw_whatif_step_free (DwWhatifStep *self)
{
  if (!self)
    return;
  g_free (self->reason);
  g_free (self->lf);
  g_free (self->ld);
  g_free (self->rf);
  g_free (self->rd);
  g_free (self->row_off);
  g_free (self->cut_cnt);
  g_free (self->row_k3f);
  g_free (self->row_k3d);
  g_mutex_clear (&self->row_k3_lock);
  for (int q = 0; q < N_Q; q++)
    g_free (self->prefix[q]);
  shape_clear (&self->shape_k2);
  shape_clear (&self->shape_k3);
  g_free (self->rows);
  g_free (self->col);
  g_free (self->off);
  g_free (self);
}

gint64
dw_whatif_step_get_step (const DwWhatifStep *self)
{
  return self->step;
}

gsize
dw_whatif_step_get_memory (const DwWhatifStep *self)
{
  gsize m = sizeof *self + self->B * sizeof (Row) + self->n_off * sizeof (DwMetric);
  m += N_COL * self->B * sizeof (double);
  m += (self->rf || self->rd ? 2 : 1) * self->n_tok
       * (self->f32 ? sizeof (float) : sizeof (double));
  m += (self->B + 1) * sizeof (gsize);
  if (self->cut_cnt)
    m += (N_CUT + 1) * self->B * sizeof (guint16);
  const gsize vsize = self->f32 ? sizeof (float) : sizeof (double);
  for (const Shape *sh = &self->shape_k2; sh; sh = sh == &self->shape_k2 ? &self->shape_k3 : NULL)
    m += sh->core_n * vsize + 2 * (sh->core_n / BLOCK + 2) * sizeof (DD);
  if (self->row_k3f || self->row_k3d)
    m += self->n_tok * vsize;
  if (self->prefix[0])
    m += N_Q * (self->n_blocks + 1) * sizeof (DD);
  return m;
}

gsize
dw_whatif_step_get_n_tokens (const DwWhatifStep *self)
{
  return self->n_tok;
}

gsize
dw_whatif_step_get_n_rows (const DwWhatifStep *self)
{
  return self->B;
}

gboolean
dw_whatif_step_is_fast (const DwWhatifStep *self, const char **reason)
{
  if (reason)
    *reason = self->reason;
  return self->fast;
}

/* ------------------------------------------------------------------------------------------ */
/* metric lists with approximate flags                                                         */

typedef struct
{
  DwMetric m;
  guint8 approx;
} Entry;

typedef struct
{
  const char *prefix;
  GArray *e; /* Entry */
  gboolean approx_now;
} ML;

/* appends the metric prefix + @a + @b (cut to the key size, like snprintf) */
static void
put3 (ML *l, double value, const char *a, const char *b)
{
  Entry e;
  const char *parts[3] = { l->prefix, a, b };
  gsize n = 0;
  for (int i = 0; i < 3; i++)
    for (const char *c = parts[i]; *c && n + 1 < sizeof e.m.key; c++)
      e.m.key[n++] = *c;
  e.m.key[n] = '\0';
  e.m.value = value;
  e.approx = l->approx_now;
  g_array_append_val (l->e, e);
}

static void
put (ML *l, const char *name, double value)
{
  put3 (l, value, name, "");
}

static int
entry_ptr_cmp (const void *a, const void *b)
{
  return strcmp ((*(const Entry *const *)a)->m.key, (*(const Entry *const *)b)->m.key);
}

static void
ml_finish (ML *l, DwWhatifStepResult *out)
{
  /* sorted through pointers: an Entry is ~100 bytes */
  gsize n = l->e->len;
  const Entry **order = g_new (const Entry *, n ? n : 1);
  for (gsize i = 0; i < n; i++)
    order[i] = &g_array_index (l->e, Entry, i);
  qsort (order, n, sizeof *order, entry_ptr_cmp);
  out->result.n_metrics = n;
  out->result.metrics = malloc ((n ? n : 1) * sizeof (DwMetric));
  out->approximate = g_new0 (guint8, n ? n : 1);
  for (gsize i = 0; i < n; i++)
    {
      const Entry *e = order[i];
      out->result.metrics[i] = e->m;
      out->approximate[i] = e->approx;
      out->any_approximate |= e->approx;
    }
  g_free (order);
  g_array_free (l->e, TRUE);
}

void
dw_whatif_step_result_clear (DwWhatifStepResult *res)
{
  dw_correction_result_clear (&res->result);
  g_free (res->approximate);
  memset (res, 0, sizeof *res);
}

const double *
dw_whatif_step_result_get (const DwWhatifStepResult *res, const char *key, gboolean *approximate)
{
  for (gsize i = 0; i < res->result.n_metrics; i++)
    if (strcmp (res->result.metrics[i].key, key) == 0)
      {
        if (approximate)
          *approximate = res->approximate && res->approximate[i];
        return &res->result.metrics[i].value;
      }
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* plans (configs already validated by dw_correction_check_config)                            */

typedef struct
{
  DwGeneration gen;
  gboolean is_on;
  Level is_level;
  double is_thr, is_lo; /* is_lo: verl-0.6 lower bound */
  gboolean bn;
  gboolean mask_mode; /* verl-0.6 */
  gboolean rs_on;
  DwRsParsed rs;
  Level rs_level;
  double rs_up, rs_lo;
  gboolean veto_on;
  double veto;
  gboolean nothing; /* verl-0.6 with threshold None: no metrics at all */
} Plan;

static Level
level_of (const DwValue *v)
{
  if (v->kind == DW_VALUE_STR && strcmp (v->s, "sequence") == 0)
    return L_SEQ;
  if (v->kind == DW_VALUE_STR && strcmp (v->s, "geometric") == 0)
    return L_GEO;
  return L_TOKEN;
}

static gboolean
make_plan (const DwConfig *config, Plan *p, DwCorrectionError *error)
{
  memset (p, 0, sizeof *p);
  p->gen = config->generation;
  if (!dw_correction_check_config (config, error))
    return FALSE;
  if (p->gen == DW_GEN_SLIME)
    return TRUE;
  if (p->gen == DW_GEN_VERL_0_6)
    {
      DwValue lvl = dw_config_get_or (config, "rollout_is_level", dw_value_str ("token"));
      DwValue mode = dw_config_get_or (config, "rollout_is_mode", dw_value_str ("truncate"));
      DwValue thr = dw_config_get_or (config, "rollout_is_threshold", dw_value_none ());
      DwValue lov = dw_config_get_or (config, "rollout_is_threshold_lower", dw_value_none ());
      DwValue veto = dw_config_get_or (config, "rollout_is_veto_threshold", dw_value_none ());
      if (thr.kind == DW_VALUE_NONE)
        {
          p->nothing = TRUE;
          return TRUE;
        }
      p->is_on = TRUE;
      p->is_level = level_of (&lvl);
      p->is_thr = dw_value_number (&thr);
      p->is_lo = lov.kind == DW_VALUE_NONE ? 1.0 / p->is_thr : dw_value_number (&lov);
      p->mask_mode = mode.kind == DW_VALUE_STR && strcmp (mode.s, "mask") == 0;
      p->veto_on = veto.kind != DW_VALUE_NONE;
      p->veto = dw_value_number (&veto);
      return TRUE;
    }
  DwValue lvl = dw_config_get_or (config, "rollout_is", dw_value_none ());
  DwValue thr = dw_config_get_or (config, "rollout_is_threshold", dw_value_float (2.0));
  if (lvl.kind != DW_VALUE_NONE && thr.kind != DW_VALUE_NONE)
    {
      p->is_on = TRUE;
      p->is_level = level_of (&lvl);
      p->is_thr = dw_value_number (&thr);
      DwValue bn = dw_config_get_or (config, "rollout_is_batch_normalize", dw_value_bool (FALSE));
      p->bn = dw_value_truthy (&bn);
    }
  DwValue rs = dw_config_get_or (config, "rollout_rs", dw_value_none ());
  if (p->gen == DW_GEN_VERL)
    {
      if (rs.kind != DW_VALUE_NONE)
        {
          DwValue rt = dw_config_get_or (config, "rollout_rs_threshold", dw_value_none ());
          if (!dw_rs_parse (&rs, &rt, &p->rs, error))
            return FALSE;
          p->rs_on = TRUE;
        }
      return TRUE;
    }
  if (rs.kind != DW_VALUE_NONE)
    {
      DwValue up = dw_config_get_or (config, "rollout_rs_threshold", dw_value_float (2.0));
      DwValue lo = dw_config_get_or (config, "rollout_rs_threshold_lower", dw_value_none ());
      p->rs_on = TRUE;
      p->rs_level = level_of (&rs);
      p->rs_up = dw_value_number (&up);
      p->rs_lo = lo.kind == DW_VALUE_NONE ? 1.0 / p->rs_up : dw_value_number (&lo);
    }
  DwValue veto = dw_config_get_or (config, "rollout_token_veto_threshold", dw_value_none ());
  if (veto.kind != DW_VALUE_NONE)
    {
      p->veto_on = TRUE;
      p->veto = dw_value_number (&veto);
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* token-level queries                                                                         */

/* Σ CLAMP(w, lo, hi) and Σ R(u²) over valid tokens, #(w > hi), #(w < lo), #(lo ≤ w ≤ hi);
 * CLAMP is min(max(w, lo), hi): every token contributes hi when lo > hi (the counts keep their
 * meaning with the given bounds, as dw-correction.c counts them) */
typedef struct
{
  double su, su2, n_hi, n_lo, n_kept;
} ClampW;

static void
clamp_w (const DwWhatifStep *s, double lo, double hi, ClampW *c)
{
  const gsize N = s->n_tok;
  gsize nb = first_false (s, Q_W, OP_LT, lo, 0, N);    /* prefix w < lo */
  gsize na = N - first_true (s, Q_W, OP_GT, hi, 0, N); /* suffix w > hi */
  gsize lo_end = nb, hi_start = MAX (nb, N - na);
  if (lo > hi)
    lo_end = hi_start = 0;
  DD su = range_sum (s, Q_W, lo_end, hi_start), su2 = range_sum (s, Q_W2, lo_end, hi_start);
  if (lo_end > 0)
    {
      su = dd_add_d (su, lo * (double)lo_end);
      su2 = dd_add_d (su2, R (s, lo * lo) * (double)lo_end);
    }
  if (N > hi_start)
    {
      su = dd_add_d (su, hi * (double)(N - hi_start));
      su2 = dd_add_d (su2, R (s, hi * hi) * (double)(N - hi_start));
    }
  c->su = dd_val (su);
  c->su2 = dd_val (su2);
  c->n_hi = (double)na;
  c->n_lo = (double)nb;
  gsize le = first_false (s, Q_W, OP_LE, hi, 0, N); /* prefix w ≤ hi */
  gsize ge = first_true (s, Q_W, OP_GE, lo, 0, N);  /* suffix w ≥ lo starts */
  c->n_kept = le > ge ? (double)(le - ge) : 0.0;
}

/* Σ_{w ≤ C} w + C·#(w > C) (truncated weights) */
static double
truncated_sum (const DwWhatifStep *s, double C)
{
  const gsize N = s->n_tok;
  gsize start = first_true (s, Q_W, OP_GT, C, 0, N);
  DD r = range_sum (s, Q_W, 0, start);
  if (N > start)
    r = dd_add_d (r, C * (double)(N - start));
  return dd_val (r);
}

/* token-level HEAD option statistics */
typedef struct
{
  double su, su2, fh, fl;
  gsize kept_a, kept_b; /* kept set = sorted positions [kept_a, kept_b) (see approx) */
  gsize n_kept;         /* exact */
  gboolean approx;      /* the kept set is not exactly that interval */
} TokOpt;

static void
tok_k1 (const DwWhatifStep *s, double lo, double hi, TokOpt *o)
{
  /* x = −ℓ̃ is non-increasing in the sorted order */
  const gsize N = s->n_tok;
  gsize n_above = first_false (s, Q_LS, OP_LT, -hi, 0, N);    /* x > hi ⇔ ℓ̃ < −hi */
  gsize n_below = N - first_true (s, Q_LS, OP_GT, -lo, 0, N); /* x < lo ⇔ ℓ̃ > −lo */
  gsize below_start = N - n_below;
  gsize hi_end = MIN (n_above, below_start);
  gsize mid_a = n_above, mid_b = MAX (n_above, below_start);
  gsize n_lo_c = n_below; /* tokens clamped to lo */
  if (lo > hi)            /* min(max(x, lo), hi) = hi for every token */
    {
      hi_end = mid_a = mid_b = N;
      n_lo_c = 0;
    }
  DD su = dd_neg (range_sum (s, Q_LS, mid_a, mid_b)), su2 = range_sum (s, Q_LS2, mid_a, mid_b);
  if (n_lo_c > 0)
    {
      su = dd_add_d (su, lo * (double)n_lo_c);
      su2 = dd_add_d (su2, R (s, lo * lo) * (double)n_lo_c);
    }
  if (hi_end > 0)
    {
      su = dd_add_d (su, hi * (double)hi_end);
      su2 = dd_add_d (su2, R (s, hi * hi) * (double)hi_end);
    }
  o->su = dd_val (su);
  o->su2 = dd_val (su2);
  o->fh = (double)n_above;
  o->fl = (double)n_below;
  gsize a = first_false (s, Q_LS, OP_LE, -lo, 0, N); /* x ≥ lo ⇔ ℓ̃ ≤ −lo: prefix */
  gsize b = first_true (s, Q_LS, OP_GE, -hi, 0, N); /* x ≤ hi ⇔ ℓ̃ ≥ −hi: suffix start */
  o->kept_a = b;
  o->kept_b = a > b ? a : b;
  o->n_kept = o->kept_b - o->kept_a;
  o->approx = FALSE;
}

/* k2/k3 ≤ up: the statistic is non-increasing on [0, end_left), non-decreasing on
 * [start_right, N) (sorted ℓ) and arbitrary in between (float32 rounding noise of k3 near ℓ = 0),
 * where its values are kept sorted: counts and sums are exact; the kept set is an interval of
 * sorted positions only when no core value exceeds up (o->approx otherwise) */
static void
tok_k23 (const DwWhatifStep *s, int k, double up, TokOpt *o)
{
  const gsize N = s->n_tok;
  const Shape *sh = k == 2 ? &s->shape_k2 : &s->shape_k3;
  const int q = k == 2 ? Q_K2 : Q_K3, qq = k == 2 ? Q_K2SQ : Q_K3SQ;
  const gsize e = sh->end_left, st = sh->start_right;
  const gboolean nan_up = isnan (up);
  gsize aL = first_false (s, q, OP_GT, up, 0, e);
  gsize bR = first_true (s, q, OP_GT, up, st, N);
  /* core values ≤ up: a prefix of the sorted core */
  gsize lo = 0, hi = sh->core_n;
  while (lo < hi)
    {
      gsize m = lo + (hi - lo) / 2;
      if (core_at (sh, m) <= up)
        lo = m + 1;
      else
        hi = m;
    }
  gsize c_le = nan_up ? sh->core_n : lo;
  gsize n_above = aL + (N - bR) + (sh->core_n - c_le);
  DD su = dd_add (range_sum (s, q, aL, e), range_sum (s, q, st, bR));
  DD su2 = dd_add (range_sum (s, qq, aL, e), range_sum (s, qq, st, bR));
  su = dd_add (su, core_sum (s, sh, c_le, FALSE));
  su2 = dd_add (su2, core_sum (s, sh, c_le, TRUE));
  if (k == 3)
    {
      su = dd_add_d (su, -s->neg_k3_sum);
      su2 = dd_add_d (su2, -s->neg_k3_sq);
    }
  if (n_above > 0)
    {
      su = dd_add_d (su, up * (double)n_above);
      su2 = dd_add_d (su2, R (s, up * up) * (double)n_above);
    }
  o->su = dd_val (su);
  o->su2 = dd_val (su2);
  o->fh = (double)n_above;
  o->fl = 0;
  o->n_kept = nan_up ? 0 : N - n_above;
  o->approx = !nan_up && c_le < sh->core_n;
  if (nan_up)
    o->kept_a = o->kept_b = 0;
  else
    {
      o->kept_a = aL;
      o->kept_b = bR;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* evaluation                                                                                  */

static double
row_w (const Row *r, Level level)
{
  return level == L_SEQ ? r->w_seq : r->w_geo;
}

/* dw-correction.c ratio_metrics_ex on the statistics */
static void
ev_ratio (const DwWhatifStep *s, ML *L, const char *pfx, Level level, double up, double lo,
          gboolean geo_tw)
{
  const gsize B = s->B;
  const double upr = R (s, up), lor = R (s, lo);
  double sw, su = 0, su2 = 0;
  gboolean was = L->approx_now;
  if (level == L_TOKEN)
    {
      ClampW c;
      clamp_w (s, lor, upr, &c);
      su = c.su;
      su2 = c.su2;
      sw = s->sw_tok;
      L->approx_now |= !s->w_monotone;
      put3 (L, mmean_b (s, sw), pfx, "_mean");
      put3 (L, s->mx_w, pfx, "_max");
      put3 (L, s->mn_w, pfx, "_min");
      put3 (L, mmean_b (s, c.n_hi), pfx, "_ratio_fraction_high");
      put3 (L, mmean_b (s, c.n_lo), pfx, "_ratio_fraction_low");
    }
  else
    {
      sw = level == L_SEQ ? s->sw_seq : s->sw_geo;
      const double *w = s->col + (level == L_SEQ ? C_W_SEQ : C_W_GEO) * B;
      const double *lrm = s->col + (level == L_SEQ ? C_LRM_SEQ : C_LRM_GEO) * B;
      const double *nv = s->col + C_NV * B, *n = s->col + C_N * B;
      for (gsize b = 0; b < B; b++)
        {
          double u = dw_torch_clamp (w[b], lor, upr);
          add_rep (s, &su, u, nv[b]);
          add_rep (s, &su2, R (s, u * u), nv[b]);
        }
      put3 (L, mmean_b (s, sw), pfx, "_mean");
      const double lmax = s->lv_stat[level].lmax, lmin = s->lv_stat[level].lmin;
      double h = 0, lo_n = 0;
      const double lu = (float)log ((float)up), ll = (float)log ((float)lo);
      for (gsize b = 0; b < B; b++)
        {
          double wgt = geo_tw ? n[b] : 1.0;
          h += (lrm[b] > lu) * wgt;
          lo_n += (lrm[b] < ll) * wgt;
        }
      put3 (L, R (s, EXP (s, fmin (lmax, SAFETY))), pfx, "_max");
      put3 (L, R (s, EXP (s, lmin)), pfx, "_min");
      put3 (L, geo_tw ? mmean_b (s, h) : h / (double)B, pfx, "_ratio_fraction_high");
      put3 (L, geo_tw ? mmean_b (s, lo_n) : lo_n / (double)B, pfx, "_ratio_fraction_low");
    }
  double mc = mmean_b (s, su);
  if (s->N > 1)
    {
      double var = R (s, mmean_b (s, su2) - R (s, mc * mc));
      put3 (L, sqrt (fmax (var, 0.0)), pfx, "_std");
    }
  else
    put3 (L, 0.0, pfx, "_std");
  double d = R (s, mc + EPS);
  put3 (L, 1.0 / mmean_b (s, su2 / (d * d)), pfx, "_eff_sample_size");
  L->approx_now = was;
  const LevelStat *st = &s->lv_stat[level];
  const double mean = st->mean, s2 = st->s2, smax = st->max, smin = st->min, dev = st->dev;
  const double *sm = s->col + (C_SM_TOK + level) * B;
  double hh = 0, ll2 = 0;
  for (gsize b = 0; b < B; b++)
    {
      hh += sm[b] > upr;
      ll2 += sm[b] < lor;
    }
  put3 (L, mean, pfx, "_seq_mean");
  put3 (L, B > 1 ? sqrt (s2 / (double)(B - 1)) : 0.0, pfx, "_seq_std");
  put3 (L, smax, pfx, "_seq_max");
  put3 (L, smin, pfx, "_seq_min");
  put3 (L, dev, pfx, "_seq_max_deviation");
  put3 (L, hh / (double)B, pfx, "_seq_fraction_high");
  put3 (L, ll2 / (double)B, pfx, "_seq_fraction_low");
}

static void
ev_is_bn (const DwWhatifStep *s, ML *L, const Plan *p)
{
  const double Cr = R (s, p->is_thr);
  double mu;
  if (p->is_level == L_TOKEN)
    {
      gboolean was = L->approx_now;
      L->approx_now |= !s->w_monotone;
      mu = mmean_b (s, truncated_sum (s, Cr));
      put (L, "rollout_is_batch_norm_factor", mu > 1e-8 ? mu : 1.0);
      L->approx_now = was;
      return;
    }
  double sum = 0, nv = 0;
  const gboolean all_rows = p->gen == DW_GEN_VERL_0_6_1;
  for (gsize b = 0; b < s->B; b++)
    {
      const Row *r = &s->rows[b];
      double w = r->w_seq > Cr ? Cr : r->w_seq;
      double rs = 0;
      add_rep (s, &rs, w, r->nv);
      double rv = mmean_r (s, rs, r->n);
      if (all_rows || r->n > 0)
        sum += rv, nv += 1;
    }
  mu = sum / fmax (nv, 1e-8);
  put (L, "rollout_is_batch_norm_factor", mu > 1e-8 ? mu : 1.0);
}

/* insertion sort of @v that gives up (FALSE, @v still a permutation) after @budget moves */
static gboolean
insertion_sort_budget (double *v, gsize n, gsize budget)
{
  gsize moves = 0;
  for (gsize i = 1; i < n; i++)
    {
      double x = v[i];
      gsize j = i;
      while (j > 0 && v[j - 1] > x)
        {
          v[j] = v[j - 1];
          j--;
          if (++moves > budget)
            {
              v[j] = x;
              return FALSE;
            }
        }
      v[j] = x;
    }
  return TRUE;
}

/* the k values (quantity @q) of row @r sorted into @out, @tmp a buffer of the row's length. k is
 * non-increasing in ℓ below 0 and non-decreasing above, but for rounding noise near 0: the two
 * runs (the first reversed) are nearly sorted, so they are finished by insertion sort and merged
 * in linear time; a row whose runs are far from sorted is sorted with qsort */
static void
row_sort_k (const DwWhatifStep *s, int q, gsize r, double *tmp, double *out)
{
  const gsize a = s->row_off[r], n = s->row_off[r + 1] - a;
  gsize m = 0;
  while (m < n && row_value (s, a + m) < 0)
    m++;
  for (gsize j = 0; j < m; j++)
    tmp[j] = qeval (s, q, row_value (s, a + m - 1 - j));
  for (gsize j = m; j < n; j++)
    tmp[j] = qeval (s, q, row_value (s, a + j));
  if (!insertion_sort_budget (tmp, m, 8 * n) || !insertion_sort_budget (tmp + m, n - m, 8 * n))
    {
      memcpy (out, tmp, n * sizeof (double));
      qsort (out, n, sizeof (double), cmp_double);
      return;
    }
  gsize i = 0, j = m, o = 0;
  while (i < m && j < n)
    out[o++] = tmp[j] < tmp[i] ? tmp[j++] : tmp[i++];
  while (i < m)
    out[o++] = tmp[i++];
  while (j < n)
    out[o++] = tmp[j++];
}

/* tokens of row @b with k ≤ up, for a k2/k3 option whose kept set is not an interval of sorted
 * ℓ: binary search in the row's sorted k values (built once per step from the row's ℓ) */
static gsize
row_kept_k23 (const DwWhatifStep *cs, gsize b, int k, double up, const TokOpt *o)
{
  DwWhatifStep *s = (DwWhatifStep *)cs;
  const int q = k == 2 ? Q_K2 : Q_K3;
  (void)o;
  g_mutex_lock (&s->row_k3_lock);
  if (!s->row_k3f && !s->row_k3d)
    {
      gsize max_len = 0;
      for (gsize r = 0; r < s->B; r++)
        max_len = MAX (max_len, s->row_off[r + 1] - s->row_off[r]);
      double *tmp = g_new (double, max_len ? max_len : 1);
      if (s->f32)
        {
          double *out = g_new (double, max_len ? max_len : 1);
          float *kv = g_new (float, s->n_tok ? s->n_tok : 1);
          for (gsize r = 0; r < s->B; r++)
            {
              row_sort_k (s, q, r, tmp, out);
              for (gsize j = s->row_off[r]; j < s->row_off[r + 1]; j++)
                kv[j] = (float)out[j - s->row_off[r]]; /* float32 values: exact */
            }
          g_free (out);
          s->row_k3f = kv;
        }
      else
        {
          double *kv = g_new (double, s->n_tok ? s->n_tok : 1);
          for (gsize r = 0; r < s->B; r++)
            row_sort_k (s, q, r, tmp, kv + s->row_off[r]);
          s->row_k3d = kv;
        }
      g_free (tmp);
    }
  g_mutex_unlock (&s->row_k3_lock);
  gsize lo = s->row_off[b], hi = s->row_off[b + 1], start = lo;
  while (lo < hi)
    {
      gsize m = lo + (hi - lo) / 2;
      double v = s->row_k3f ? (double)s->row_k3f[m] : s->row_k3d[m];
      if (v <= up)
        lo = m + 1;
      else
        hi = m;
    }
  return lo - start;
}

static void
ev_rs_head (const DwWhatifStep *s, ML *L, const Plan *p, guint8 *row_rej_out)
{
  const gsize B = s->B, N = s->n_tok;
  const gsize n_valid_rows = (gsize)s->so_stat[0].cnt;
  const double *col_n = s->col + C_N * B, *col_nv = s->col + C_NV * B;
  guint8 *srej = g_new0 (guint8, B ? B : 1), *trej = g_new0 (guint8, B ? B : 1);
  gsize ia = 0, ib = N; /* intersection of the token options' kept sets */
  gboolean any_tok = FALSE, tok_approx = FALSE;
  guint n_tok_opts = 0;
  double single_out = 0, single_up = 0;
  TokOpt single = { 0 };
  int single_k = 0;
  for (gsize oi = 0; oi < p->rs.n; oi++)
    {
      const DwRsBound *bd = &p->rs.bounds[oi];
      const int k = dw_rs_option_k (bd->option);
      const DwRsAgg agg = dw_rs_option_agg (bd->option);
      const gboolean k1 = k == 1;
      const double up_c = R (s, bd->log_upper);
      const double lo_c = k1 ? R (s, bd->log_lower) : 0.0;
      const double lo_metric = k1 ? lo_c : 0.0;
      char pf[64];
      g_snprintf (pf, sizeof pf, "rollout_rs_%s", dw_rs_option_name (bd->option));
      double sum_stat, su = 0, su2 = 0, masked = 0, seq_masked = 0, fh = 0, fl = 0;
      gboolean was = L->approx_now, opt_approx = FALSE;
      if (agg == DW_RS_AGG_TOKEN)
        {
          TokOpt o;
          if (k1)
            tok_k1 (s, lo_c, up_c, &o);
          else
            tok_k23 (s, k, up_c, &o);
          sum_stat = s->tok_sum_k[k - 1];
          su = o.su;
          su2 = o.su2;
          fh = o.fh;
          fl = o.fl;
          masked = (double)(N - o.n_kept);
          single_out = masked;
          single = o;
          single_k = k;
          single_up = up_c;
          n_tok_opts++;
          any_tok = TRUE;
          ia = MAX (ia, o.kept_a);
          ib = MIN (ib, o.kept_b);
          tok_approx |= o.approx;
          opt_approx = FALSE; /* the option's own metrics are exact */
          /* a row keeps all its tokens when its extremes are within the bounds */
          const double *x1 = s->col + C_X1MIN * B, *x2 = s->col + C_X1MAX * B;
          const double *mk = k1 ? NULL : s->col + (SO_MAX_K2 + k - 2) * B;
          for (gsize b = 0; b < B; b++)
            {
              gboolean keeps
                = col_nv[b] == 0 || (k1 ? x1[b] >= lo_c && x2[b] <= up_c : mk[b] <= up_c);
              if (!keeps)
                {
                  trej[b] = 1;
                  seq_masked += col_n[b] > 0;
                }
            }
        }
      else
        {
          int so = agg == DW_RS_AGG_SUM    ? SO_SUM_K1 + k - 1
                   : agg == DW_RS_AGG_MEAN ? SO_MEAN_K1 + k - 1
                                           : SO_MAX_K2 + k - 2;
          sum_stat = s->seq_sum_stat[so];
          const double *v = s->col + so * B;
          for (gsize b = 0; b < B; b++)
            {
              const double sv = v[b];
              gboolean ks = k1 ? (sv <= up_c && sv >= lo_c) : (sv <= up_c);
              double u = dw_torch_clamp (sv, lo_metric, up_c);
              add_rep (s, &su, u, col_nv[b]);
              add_rep (s, &su2, R (s, u * u), col_nv[b]);
              if (!ks)
                {
                  masked += col_nv[b];
                  if (col_n[b] > 0)
                    {
                      seq_masked += 1;
                      srej[b] = 1;
                    }
                }
            }
        }
      /* row values over valid rows: only the counts beyond the bounds depend on them */
      const int so_row = agg == DW_RS_AGG_SUM   ? SO_SUM_K1 + k - 1
                         : agg == DW_RS_AGG_MAX ? SO_MAX_K2 + k - 2
                                                : SO_MEAN_K1 + k - 1;
      const RowStat *st = &s->so_stat[so_row];
      const double *rv = s->col + so_row * B;
      const double cnt = st->cnt, smax = st->max, smin = st->min, dev = st->dev, s2 = st->s2;
      const double mean = cnt > 0 ? st->sum / cnt : 0.0;
      double hh = 0, ll = 0;
      for (gsize b = 0; b < B; b++)
        if (col_n[b] > 0)
          {
            hh += rv[b] > up_c;
            ll += rv[b] < lo_metric;
          }
      put3 (L, mmean_b (s, sum_stat), pf, "_mean");
      if (agg != DW_RS_AGG_TOKEN && cnt > 0)
        {
          put3 (L, smax, pf, "_max");
          put3 (L, smin, pf, "_min");
          put3 (L, hh / cnt, pf, "_fraction_high");
          put3 (L, k1 ? ll / cnt : 0.0, pf, "_fraction_low");
        }
      else
        {
          put3 (L, s->mx_k[k - 1], pf, "_max");
          put3 (L, s->mn_k[k - 1], pf, "_min");
          L->approx_now = was | opt_approx;
          put3 (L, mmean_b (s, fh), pf, "_fraction_high");
          L->approx_now = was;
          put3 (L, k1 ? mmean_b (s, fl) : 0.0, pf, "_fraction_low");
        }
      if (s->N > 1)
        {
          double mc = mmean_b (s, su);
          double var = R (s, mmean_b (s, su2) - R (s, mc * mc));
          L->approx_now = was | opt_approx;
          put3 (L, sqrt (fmax (var, 0.0)), pf, "_std");
        }
      else
        put3 (L, 0.0, pf, "_std");
      L->approx_now = was;
      put3 (L, mean, pf, "_seq_mean");
      put3 (L, cnt > 1 ? sqrt (s2 / (cnt - 1)) : 0.0, pf, "_seq_std");
      put3 (L, cnt > 0 ? smax : 0.0, pf, "_seq_max");
      put3 (L, cnt > 0 ? smin : 0.0, pf, "_seq_min");
      put3 (L, cnt > 0 ? dev : 0.0, pf, "_seq_max_deviation");
      put3 (L, cnt > 0 ? hh / cnt : 0.0, pf, "_seq_fraction_high");
      if (k1)
        put3 (L, cnt > 0 ? ll / cnt : 0.0, pf, "_seq_fraction_low");
      L->approx_now = was | opt_approx;
      put3 (L, mmean_b (s, masked), pf, "_masked_fraction");
      L->approx_now = was;
      put3 (L, n_valid_rows > 0 ? seq_masked / (double)n_valid_rows : 0.0, pf,
            "_seq_masked_fraction");
      L->approx_now = was;
    }
  /* overall: the token options keep the sorted positions [ia, ib), i.e. the raw ℓ values
   * [lval(ia), lval(ib − 1)] (keep is a function of ℓ); rows rejected by a sequence option lose
   * all their tokens, the others the tokens outside that range */
  double masked = 0, rows_rej = 0;
  gboolean approx = tok_approx && n_tok_opts > 1;
  gboolean kept_any = any_tok && ib > ia;
  double out_total = n_tok_opts == 1 ? single_out
                     : any_tok       ? (double)(N - (kept_any ? ib - ia : 0))
                                     : 0.0;
  double lo_v = kept_any ? lval (s, ia) : 0, hi_v = kept_any ? lval (s, ib - 1) : 0;
  const int c_lo = s->cut_cnt ? cut_index (s, lo_v) : 0,
            c_hi = s->cut_cnt ? cut_index (s, hi_v) : 0;
  masked = out_total;
  /* A row rejected by a sequence option loses its tokens the token options keep (the others are
   * counted in out_total). Their sum over the rows a token option also rejects equals the
   * step's kept tokens, less the tokens of the rows no token option touches (all kept), less the
   * kept tokens of the rows only a token option rejects: whichever of the two row sets is
   * smaller is counted. */
  const gboolean core = n_tok_opts == 1 && single.approx;
  gsize *both = g_new (gsize, B ? B : 1), n_both = 0;
  gsize *tok_only = g_new (gsize, B ? B : 1), n_tok_only = 0;
  double nv_untouched = 0;
  for (gsize b = 0; b < B; b++)
    {
      const double nv = col_nv[b];
      gboolean rej = nv > 0 && (srej[b] || trej[b]);
      rows_rej += rej;
      if (row_rej_out)
        row_rej_out[b] = rej;
      if (!trej[b])
        {
          nv_untouched += nv;
          if (srej[b])
            masked += nv;
        }
      else if (srej[b])
        {
          both[n_both++] = b;
          if (!core)
            approx |= tok_approx;
        }
      else
        tok_only[n_tok_only++] = b;
    }
  if (kept_any && n_both > 0)
    {
      const gboolean complement = n_tok_only < n_both;
      const gsize *list = complement ? tok_only : both, n_list = complement ? n_tok_only : n_both;
      gsize counted = 0;
      if (core)
        /* one k2/k3 option whose kept set is not an interval of ℓ: the rows' sorted k values */
        for (gsize j = 0; j < n_list; j++)
          counted += row_kept_k23 (s, list[j], single_k, single_up, &single);
      else if (s->cut_cnt)
        {
          /* prefetched a few rows ahead: the windows are scattered over the step's arrays and
           * almost never in cache */
          enum
          {
            AHEAD = 8
          };
          for (gsize j = 0; j < MIN (n_list, AHEAD); j++)
            {
              row_count_prefetch (s, list[j], c_hi);
              row_count_prefetch (s, list[j], c_lo);
            }
          for (gsize j = 0; j < n_list; j++)
            {
              if (j + AHEAD < n_list)
                {
                  row_count_prefetch (s, list[j + AHEAD], c_hi);
                  row_count_prefetch (s, list[j + AHEAD], c_lo);
                }
              const gsize b = list[j];
              gsize n_le = row_count_cut (s, b, c_hi, hi_v, TRUE);
              gsize n_lt = row_count_cut (s, b, c_lo, lo_v, FALSE);
              counted += n_le > n_lt ? n_le - n_lt : 0;
            }
        }
      else
        for (gsize j = 0; j < n_list; j++)
          counted += row_count_between (s, list[j], lo_v, hi_v);
      if (complement)
        {
          /* the step's kept tokens: the k option's exact count, or the tokens in [lo_v, hi_v] */
          const gsize total = core ? single.n_kept
                                   : first_false (s, Q_RAW, OP_LE, hi_v, 0, N)
                                       - first_false (s, Q_RAW, OP_LT, lo_v, 0, N);
          masked += (double)total - nv_untouched - (double)counted;
        }
      else
        masked += (double)counted;
    }
  g_free (both);
  g_free (tok_only);
  gboolean was = L->approx_now;
  L->approx_now |= approx;
  put (L, "rollout_rs_masked_fraction", mmean_b (s, masked));
  L->approx_now = was; /* row decisions come from per-row extremes: exact */
  put (L, "rollout_rs_seq_masked_fraction", rows_rej / (double)B);
  L->approx_now = was;
  g_free (srej);
  g_free (trej);
}

/* verl-0.7 / 0.6.1 RS (§5.1) and verl-0.6 mask mode: masked counts of [lo ≤ ρ ≤ up] */
static void
ev_ratio_mask (const DwWhatifStep *s, ML *L, Level level, double up, double lo,
               const char *k_masked, const char *k_seq, guint8 *row_rej_out)
{
  const double upr = R (s, up), lor = R (s, lo);
  double masked = 0, rows = 0;
  gboolean was = L->approx_now;
  if (level == L_TOKEN)
    {
      ClampW c;
      clamp_w (s, lor, upr, &c);
      masked = (double)s->n_tok - c.n_kept;
      L->approx_now |= !s->w_monotone;
      for (gsize b = 0; b < s->B; b++)
        {
          const Row *r = &s->rows[b];
          gboolean rej = r->nv > 0 && !(r->min_w >= lor && r->max_w <= upr);
          rows += rej;
          if (row_rej_out)
            row_rej_out[b] |= rej;
        }
    }
  else
    for (gsize b = 0; b < s->B; b++)
      {
        const Row *r = &s->rows[b];
        double rb = row_w (r, level);
        gboolean keep = rb >= lor && rb <= upr;
        if (!keep)
          masked += r->nv;
        rows += s->T > 0 ? !keep : 0;
        if (row_rej_out)
          row_rej_out[b] |= !keep && r->nv > 0;
      }
  put (L, k_masked, mmean_b (s, masked));
  put (L, k_seq, s->B ? rows / (double)s->B : 0.0);
  L->approx_now = was;
}

static void
ev_veto (const DwWhatifStep *s, ML *L, gboolean on, double V, guint8 *row_rej_out)
{
  double vetoed = 0, cat = 0;
  if (on)
    {
      const double lv = (float)log ((float)V);
      cat = (double)first_false (s, Q_RAW, OP_LT, lv, 0, s->n_tok);
      for (gsize b = 0; b < s->B; b++)
        {
          gboolean has = s->rows[b].nv > 0 && s->rows[b].min_l < lv;
          vetoed += has;
          if (row_rej_out)
            row_rej_out[b] |= has;
        }
    }
  put (L, "rollout_is_veto_fraction", vetoed / (double)s->B);
  put (L, "rollout_is_catastrophic_token_fraction", mmean_b (s, cat));
}

static void
ev_offpolicy (const DwWhatifStep *s, ML *L, gboolean g1)
{
  for (gsize i = 0; i < s->n_off; i++)
    {
      const char *k = s->off[i].key;
      if (g1 && g_str_has_prefix (k, "chi2_"))
        continue;
      put3 (L, s->off[i].value, g1 ? "mismatch_" : "", k);
    }
}

static gboolean
evaluate_plan (const DwWhatifStep *s, const Plan *p, DwWhatifStepResult *out, guint8 *row_rej)
{
  if (row_rej)
    memset (row_rej, 0, s->B);
  if (p->gen == DW_GEN_SLIME || !s->fast)
    {
      out->pending = TRUE;
      out->any_approximate = TRUE;
      return TRUE;
    }
  ML L = { .prefix = p->gen == DW_GEN_VERL_0_6 ? "mismatch/" : "rollout_corr/",
           .e = g_array_sized_new (FALSE, FALSE, sizeof (Entry), 96) };
  if (p->gen == DW_GEN_VERL_0_6)
    {
      if (!p->nothing)
        {
          ev_ratio (s, &L, "rollout_is", p->is_level, p->is_thr, p->is_lo, p->is_level == L_GEO);
          if (p->mask_mode)
            ev_ratio_mask (s, &L, p->is_level, p->is_thr, p->is_lo, "rollout_is_masked_fraction",
                           "rollout_is_seq_masked_fraction", row_rej);
          ev_veto (s, &L, p->veto_on, p->veto, row_rej);
          ev_offpolicy (s, &L, TRUE);
        }
      ml_finish (&L, out);
      return TRUE;
    }
  if (p->is_on)
    {
      ev_ratio (s, &L, "rollout_is", p->is_level, p->is_thr, 1.0 / p->is_thr, FALSE);
      if (p->bn)
        ev_is_bn (s, &L, p);
    }
  if (p->gen == DW_GEN_VERL)
    {
      if (p->rs_on)
        ev_rs_head (s, &L, p, row_rej);
    }
  else
    {
      if (p->rs_on)
        {
          ev_ratio (s, &L, "rollout_rs", p->rs_level, p->rs_up, p->rs_lo, FALSE);
          ev_ratio_mask (s, &L, p->rs_level, p->rs_up, p->rs_lo, "rollout_rs_masked_fraction",
                         "rollout_rs_seq_masked_fraction", row_rej);
        }
      ev_veto (s, &L, p->veto_on, p->veto, row_rej);
    }
  ev_offpolicy (s, &L, FALSE);
  ml_finish (&L, out);
  return TRUE;
}

static gboolean
fail (DwWhatifStepResult *out, const DwCorrectionError *err)
{
  out->failed = TRUE;
  out->error = *err;
  return FALSE;
}

static void
empty_error (DwWhatifStepResult *out)
{
  DwCorrectionError err;
  err.kind = DW_ERROR_VALUE;
  g_strlcpy (err.message, "response_mask must contain at least one valid token (1).",
             sizeof err.message);
  fail (out, &err);
}

static gboolean
prepare (const DwWhatifStep *s, const DwConfig *config, Plan *p, DwWhatifStepResult *out)
{
  DwCorrectionError err;
  dw_correction_error_clear (&err);
  if (dw_config_get (config, "preset"))
    {
      err.kind = DW_ERROR_VALUE;
      g_strlcpy (err.message, "preset must be resolved with dw_preset_apply().",
                 sizeof err.message);
      return fail (out, &err);
    }
  if (s && s->empty)
    {
      empty_error (out);
      return FALSE;
    }
  if (!make_plan (config, p, &err))
    return fail (out, &err);
  return TRUE;
}

gboolean
dw_whatif_step_evaluate (const DwWhatifStep *self, const DwConfig *config, DwWhatifStepResult *out)
{
  memset (out, 0, sizeof *out);
  Plan p;
  if (!prepare (self, config, &p, out))
    return FALSE;
  return evaluate_plan (self, &p, out, NULL);
}

gboolean
dw_whatif_step_row_outcomes (const DwWhatifStep *self, const DwConfig *config, double *lengths,
                             guint8 *rejected)
{
  DwWhatifStepResult out;
  memset (&out, 0, sizeof out);
  Plan p;
  for (gsize b = 0; b < self->B; b++)
    lengths[b] = self->rows[b].nv;
  if (!prepare (self, config, &p, &out))
    {
      dw_whatif_step_result_clear (&out);
      return FALSE;
    }
  evaluate_plan (self, &p, &out, rejected);
  gboolean ok = !out.pending;
  dw_whatif_step_result_clear (&out);
  return ok;
}

void
dw_whatif_step_histogram (const DwWhatifStep *self, double lo, double hi, guint n_bins,
                          guint64 *counts)
{
  memset (counts, 0, n_bins * sizeof (guint64));
  if (n_bins == 0 || self->n_tok == 0 || !(hi > lo) || (!self->lf && !self->ld))
    return;
  gsize prev = 0;
  for (guint k = 0; k + 1 < n_bins; k++)
    {
      double edge = lo + (hi - lo) * (double)(k + 1) / n_bins;
      gsize idx = first_false (self, Q_RAW, OP_LT, edge, prev, self->n_tok);
      counts[k] = idx - prev;
      prev = idx;
    }
  counts[n_bins - 1] = self->n_tok - prev;
}

double
dw_whatif_step_quantile (const DwWhatifStep *self, double q)
{
  if (self->n_tok == 0 || (!self->lf && !self->ld))
    return NAN;
  double pos = dw_torch_clamp (q, 0, 1) * (double)(self->n_tok - 1);
  return lval (self, (gsize)llround (pos));
}

/* ------------------------------------------------------------------------------------------ */
/* the engine                                                                                  */

struct _DwWhatifEngine
{
  GPtrArray *steps; /* DwWhatifStep* */
  guint n_threads;
  GThreadPool *pool;
  DwWhatifBatchLoader loader;
  gpointer loader_data;
  GDestroyNotify loader_destroy;
};

typedef struct
{
  DwWhatifEngine *engine;
  const Plan *plan;
  DwWhatifRunResult *res;
  gint *next; /* steps are taken one at a time: later steps cost more, and a thread that the
               * system holds back must not hold back half of the run */
  GMutex *lock;
  GCond *cond;
  guint *remaining;
} Chunk;

static void
chunk_run (gpointer data, gpointer user_data)
{
  Chunk *c = data;
  (void)user_data;
  for (;;)
    {
      guint i = (guint)g_atomic_int_add (c->next, 1);
      if (i >= c->res->n_steps)
        break;
      const DwWhatifStep *s = g_ptr_array_index (c->engine->steps, i);
      DwWhatifStepResult *r = &c->res->results[i];
      if (s->empty)
        {
          empty_error (r);
          continue;
        }
      evaluate_plan (s, c->plan, r, NULL);
    }
  g_mutex_lock (c->lock);
  if (--*c->remaining == 0)
    g_cond_signal (c->cond);
  g_mutex_unlock (c->lock);
}

DwWhatifEngine *
dw_whatif_engine_new (guint n_threads)
{
  DwWhatifEngine *self = g_atomic_rc_box_new0 (DwWhatifEngine);
  self->steps = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_whatif_step_free);
  self->n_threads = n_threads ? n_threads : MAX (1, g_get_num_processors ());
  return self;
}

DwWhatifEngine *
dw_whatif_engine_ref (DwWhatifEngine *self)
{
  return g_atomic_rc_box_acquire (self);
}

static void
engine_clear (DwWhatifEngine *self)
{
  if (self->pool)
    g_thread_pool_free (self->pool, TRUE, TRUE);
  g_ptr_array_unref (self->steps);
  if (self->loader_destroy)
    self->loader_destroy (self->loader_data);
}

void
dw_whatif_engine_unref (DwWhatifEngine *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify)engine_clear);
}

void
dw_whatif_engine_set_loader (DwWhatifEngine *self, DwWhatifBatchLoader loader, gpointer user_data,
                             GDestroyNotify destroy)
{
  if (self->loader_destroy)
    self->loader_destroy (self->loader_data);
  self->loader = loader;
  self->loader_data = user_data;
  self->loader_destroy = destroy;
}

void
dw_whatif_engine_add_step (DwWhatifEngine *self, DwWhatifStep *step)
{
  g_ptr_array_add (self->steps, step);
}

typedef struct
{
  DwWhatifEngine *engine;
  const gint64 *steps;
  gsize n;
  DwWhatifStep **out;
  gint next;
  GMutex lock;
  GError *error;
} LoadJob;

static gpointer
load_worker (gpointer data)
{
  LoadJob *j = data;
  for (;;)
    {
      gint i = g_atomic_int_add (&j->next, 1);
      if ((gsize)i >= j->n)
        break;
      GError *err = NULL;
      DwBatch *batch = j->engine->loader (j->steps[i], j->engine->loader_data, &err);
      DwWhatifStep *s = batch ? dw_whatif_step_new (batch, j->steps[i], &err) : NULL;
      if (batch)
        dw_batch_free (batch);
      dw_correction_release_workspace ();
      if (!s)
        {
          g_mutex_lock (&j->lock);
          if (!j->error)
            j->error = err;
          else
            g_clear_error (&err);
          g_mutex_unlock (&j->lock);
          continue;
        }
      j->out[i] = s;
    }
  return NULL;
}

gboolean
dw_whatif_engine_load_steps (DwWhatifEngine *self, const gint64 *steps, gsize n_steps,
                             GError **error)
{
  if (!self->loader)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_LOAD, "no batch loader set");
      return FALSE;
    }
  LoadJob j = { .engine = self, .steps = steps, .n = n_steps };
  j.out = g_new0 (DwWhatifStep *, n_steps ? n_steps : 1);
  g_mutex_init (&j.lock);
  guint nt = MIN (self->n_threads, MAX (1, (guint)n_steps));
  GThread **th = g_new (GThread *, nt);
  for (guint t = 0; t < nt; t++)
    th[t] = g_thread_new ("dw-whatif-load", load_worker, &j);
  for (guint t = 0; t < nt; t++)
    g_thread_join (th[t]);
  g_free (th);
  g_mutex_clear (&j.lock);
  if (j.error)
    {
      for (gsize i = 0; i < n_steps; i++)
        dw_whatif_step_free (j.out[i]);
      g_free (j.out);
      g_propagate_error (error, j.error);
      return FALSE;
    }
  for (gsize i = 0; i < n_steps; i++)
    g_ptr_array_add (self->steps, j.out[i]);
  g_free (j.out);
  return TRUE;
}

guint
dw_whatif_engine_get_n_steps (DwWhatifEngine *self)
{
  return self->steps->len;
}

const DwWhatifStep *
dw_whatif_engine_get_step (DwWhatifEngine *self, guint index)
{
  g_return_val_if_fail (index < self->steps->len, NULL);
  return g_ptr_array_index (self->steps, index);
}

gsize
dw_whatif_engine_get_memory (DwWhatifEngine *self)
{
  gsize m = 0;
  for (guint i = 0; i < self->steps->len; i++)
    m += dw_whatif_step_get_memory (g_ptr_array_index (self->steps, i));
  return m;
}

void
dw_whatif_run_result_free (DwWhatifRunResult *res)
{
  if (!res)
    return;
  for (guint i = 0; i < res->n_steps; i++)
    dw_whatif_step_result_clear (&res->results[i]);
  g_free (res->results);
  g_free (res->steps);
  g_free (res);
}

static DwWhatifRunResult *
run_result_new (DwWhatifEngine *self)
{
  DwWhatifRunResult *res = g_new0 (DwWhatifRunResult, 1);
  res->n_steps = self->steps->len;
  res->steps = g_new0 (gint64, res->n_steps ? res->n_steps : 1);
  res->results = g_new0 (DwWhatifStepResult, res->n_steps ? res->n_steps : 1);
  for (guint i = 0; i < res->n_steps; i++)
    res->steps[i] = dw_whatif_step_get_step (g_ptr_array_index (self->steps, i));
  return res;
}

DwWhatifRunResult *
dw_whatif_engine_evaluate (DwWhatifEngine *self, const DwConfig *config, GError **error)
{
  DwWhatifStepResult probe;
  memset (&probe, 0, sizeof probe);
  Plan plan;
  if (dw_config_get (config, "preset"))
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_CONFIG,
                   "preset must be resolved with dw_preset_apply()");
      return NULL;
    }
  DwWhatifRunResult *res = run_result_new (self);
  if (!prepare (NULL, config, &plan, &probe))
    {
      /* verl raises on every non-empty step alike (the empty-mask error comes first) */
      for (guint i = 0; i < res->n_steps; i++)
        {
          const DwWhatifStep *s = g_ptr_array_index (self->steps, i);
          if (!prepare (s, config, &plan, &res->results[i]))
            continue;
        }
      return res;
    }
  guint nt = MIN (self->n_threads, MAX (1u, res->n_steps / 8));
  if (nt <= 1)
    {
      for (guint i = 0; i < res->n_steps; i++)
        {
          const DwWhatifStep *s = g_ptr_array_index (self->steps, i);
          if (s->empty)
            empty_error (&res->results[i]);
          else
            evaluate_plan (s, &plan, &res->results[i], NULL);
        }
    }
  else
    {
      if (!self->pool)
        self->pool = g_thread_pool_new (chunk_run, NULL, (gint)self->n_threads, FALSE, NULL);
      GMutex lock;
      GCond cond;
      g_mutex_init (&lock);
      g_cond_init (&cond);
      guint remaining = nt;
      gint next = 0;
      Chunk *chunks = g_new0 (Chunk, nt);
      for (guint t = 0; t < nt; t++)
        chunks[t] = (Chunk){ self, &plan, res, &next, &lock, &cond, &remaining };
      /* the calling thread takes the last chunk itself */
      g_mutex_lock (&lock);
      for (guint t = 0; t + 1 < nt; t++)
        g_thread_pool_push (self->pool, &chunks[t], NULL);
      g_mutex_unlock (&lock);
      chunk_run (&chunks[nt - 1], NULL);
      g_mutex_lock (&lock);
      while (remaining > 0)
        g_cond_wait (&cond, &lock);
      g_mutex_unlock (&lock);
      g_free (chunks);
      g_mutex_clear (&lock);
      g_cond_clear (&cond);
    }
  for (guint i = 0; i < res->n_steps; i++)
    res->any_approximate |= res->results[i].any_approximate || res->results[i].pending;
  return res;
}

/* ------------------------------------------------------------------------------------------ */
/* exact pass                                                                                  */

typedef struct
{
  DwWhatifEngine *engine;
  DwConfig config;
} ExactData;

static void
exact_data_free (ExactData *d)
{
  dw_whatif_engine_unref (d->engine);
  g_free (d);
}

static DwWhatifRunResult *
exact_run (DwWhatifEngine *self, const DwConfig *config, GCancellable *cancellable, GError **error)
{
  if (!self->loader)
    {
      g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_LOAD, "no batch loader set");
      return NULL;
    }
  /* which steps need the raw batch is re-derived from the statistics (cheap) */
  DwWhatifRunResult *res = dw_whatif_engine_evaluate (self, config, error);
  if (!res)
    return NULL;
  for (guint i = 0; i < res->n_steps; i++)
    {
      DwWhatifStepResult *r = &res->results[i];
      if (!(r->any_approximate || r->pending) || r->failed)
        continue;
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          dw_whatif_run_result_free (res);
          return NULL;
        }
      GError *lerr = NULL;
      DwBatch *batch = self->loader (res->steps[i], self->loader_data, &lerr);
      if (!batch)
        {
          g_set_error (error, DW_WHATIF_ERROR, DW_WHATIF_ERROR_LOAD,
                       "step %" G_GINT64_FORMAT ": %s", res->steps[i], lerr->message);
          g_error_free (lerr);
          dw_whatif_run_result_free (res);
          return NULL;
        }
      dw_whatif_step_result_clear (r);
      DwCorrectionResult cr;
      if (dw_correction_run (batch, config, &cr, &r->error))
        {
          free (cr.weights);
          free (cr.mask);
          cr.weights = cr.mask = NULL;
          r->result = cr;
          r->approximate = g_new0 (guint8, cr.n_metrics ? cr.n_metrics : 1);
        }
      else
        r->failed = TRUE;
      dw_batch_free (batch);
    }
  res->any_approximate = FALSE;
  dw_correction_release_workspace ();
  return res;
}

static void
exact_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ExactData *d = task_data;
  GError *error = NULL;
  (void)source;
  DwWhatifRunResult *res = exact_run (d->engine, &d->config, cancellable, &error);
  if (res)
    g_task_return_pointer (task, res, (GDestroyNotify)dw_whatif_run_result_free);
  else
    g_task_return_error (task, error);
}

void
dw_whatif_engine_evaluate_exact_async (DwWhatifEngine *self, const DwConfig *config,
                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                       gpointer user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  ExactData *d = g_new0 (ExactData, 1);
  d->engine = dw_whatif_engine_ref (self);
  d->config = *config;
  g_task_set_task_data (task, d, (GDestroyNotify)exact_data_free);
  g_task_run_in_thread (task, exact_thread);
  g_object_unref (task);
}

DwWhatifRunResult *
dw_whatif_engine_evaluate_exact_finish (DwWhatifEngine *self, GAsyncResult *result, GError **error)
{
  (void)self;
  return g_task_propagate_pointer (G_TASK (result), error);
}

DwWhatifRunResult *
dw_whatif_engine_evaluate_exact (DwWhatifEngine *self, const DwConfig *config,
                                 GCancellable *cancellable, GError **error)
{
  return exact_run (self, config, cancellable, error);
}
