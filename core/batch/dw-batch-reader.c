/* dw-batch-reader.c — format detection, dispatch and the tensors → padded batch assembly
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-batch-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK (dw - batch - error - quark, dw_batch_error)

static guint64 max_batch_bytes = G_GUINT64_CONSTANT (4) << 30;

guint64
dw_batch_reader_get_max_bytes (void)
{
  return max_batch_bytes;
}

void
dw_batch_reader_set_max_bytes (guint64 max_bytes)
{
  max_batch_bytes = max_bytes;
}

void
dw_batch_set_error (GError **error, DwBatchError code, const char *name, const char *format, ...)
{
  va_list args;
  g_autofree char *msg = NULL;

  if (error == NULL)
    return;
  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, DW_BATCH_ERROR, code, "%s: %s", name, msg);
}

/* ------------------------------------------------------------------------------------------ */
/* Sources                                                                                    */

gboolean
dw_source_read (const DwSource *src, guint64 offset, void *buf, gsize n, const char *what,
                GError **error)
{
  if (offset > src->size || n > src->size - offset)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name,
                          "offset %" G_GUINT64_FORMAT ": %s needs %" G_GSIZE_FORMAT
                          " bytes but the file has %" G_GUINT64_FORMAT " bytes",
                          offset, what, n, src->size);
      return FALSE;
    }
  if (src->fd < 0)
    {
      if (n)
        memcpy (buf, src->mem + offset, n);
      return TRUE;
    }
  while (n > 0)
    {
      ssize_t r = pread (src->fd, buf, n, (off_t)offset);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int saved = errno;
          dw_batch_set_error (error, DW_BATCH_ERROR_IO, src->name,
                              "offset %" G_GUINT64_FORMAT ": reading %s: %s", offset, what,
                              g_strerror (saved));
          return FALSE;
        }
      if (r == 0)
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name,
                              "offset %" G_GUINT64_FORMAT ": file ended while reading %s "
                              "(it shrank while being read?)",
                              offset, what);
          return FALSE;
        }
      buf = (guint8 *)buf + r;
      n -= (gsize)r;
      offset += (guint64)r;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Tensors                                                                                    */

gint64
dw_step_from_name (const char *name)
{
  g_autofree char *base = NULL;
  const char *p;

  if (name == NULL)
    return -1;
  base = g_path_get_basename (name);
  p = strstr (base, "step");
  if (p)
    {
      p += 4;
      if (*p == '_' || *p == '-')
        p++;
    }
  else
    p = base;
  if (!g_ascii_isdigit (*p))
    return -1;
  return g_ascii_strtoll (p, NULL, 10);
}

DwTensor *
dw_tensor_new (const char *name, const char *where)
{
  DwTensor *t = g_new0 (DwTensor, 1);
  t->name = g_strdup (name);
  t->where = g_strdup (where);
  return t;
}

void
dw_tensor_free (DwTensor *tensor)
{
  if (tensor == NULL)
    return;
  g_free (tensor->name);
  g_free (tensor->where);
  if (tensor->fill_free && tensor->fill_ctx)
    tensor->fill_free (tensor->fill_ctx);
  g_free (tensor->owned);
  g_free (tensor);
}

gboolean
dw_tensor_load (DwTensor *t, GError **error)
{
  gsize nbytes = t->n_elems * dw_dtype_size (t->dtype);

  if (t->data)
    return TRUE;
  g_assert (t->fill != NULL);
  t->owned = g_try_malloc (nbytes ? nbytes : 1);
  if (!t->owned)
    {
      g_set_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_TOO_LARGE,
                   "%s: out of memory for %" G_GSIZE_FORMAT " bytes", t->where, nbytes);
      return FALSE;
    }
  if (!t->fill (t, t->owned, 0, t->n_elems, error))
    return FALSE;
  t->data = t->owned;
  return TRUE;
}

gboolean
dw_tensor_fill_from_source (DwTensor *t, guint8 *dst, guint64 start, guint64 n, GError **error)
{
  gsize es = dw_dtype_size (t->dtype);
  return dw_source_read (t->fill_ctx, t->fill_offset + start * es, dst, n * es, t->where, error);
}

char *
dw_shape_to_string (guint ndim, const guint64 *shape)
{
  GString *s = g_string_new ("[");
  for (guint i = 0; i < ndim; i++)
    g_string_append_printf (s, "%s%" G_GUINT64_FORMAT, i ? "," : "", shape[i]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

gboolean
dw_shape_product (guint ndim, const guint64 *shape, gsize elem_size, guint64 *n_elems)
{
  guint64 n = 1;
  gboolean zero = FALSE;

  for (guint i = 0; i < ndim; i++)
    if (shape[i] == 0)
      zero = TRUE;
  if (zero)
    {
      *n_elems = 0;
      return TRUE;
    }
  for (guint i = 0; i < ndim; i++)
    {
      if (n > G_MAXUINT64 / shape[i])
        return FALSE;
      n *= shape[i];
    }
  if (elem_size && n > G_MAXUINT64 / elem_size)
    return FALSE;
  *n_elems = n;
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Element conversion                                                                         */

double
dw_half_to_double (guint16 h)
{
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;

  if (exp == 0)
    v = ldexp ((double)mant, -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = ldexp ((double)(mant | 0x400), exp - 25);
  return sign ? -v : v;
}

float
dw_bf16_to_float (guint16 b)
{
  guint32 bits = (guint32)b << 16;
  float f;
  memcpy (&f, &bits, 4);
  return f;
}

static void
byteswap_inplace (guint8 *p, gsize size, gsize n)
{
  for (gsize i = 0; i < n; i++, p += size)
    for (gsize a = 0, b = size - 1; a < b; a++, b--)
      {
        guint8 tmp = p[a];
        p[a] = p[b];
        p[b] = tmp;
      }
}

static double
decode (const guint8 *p, DwDType dtype, gboolean swap)
{
  guint8 tmp[8];
  gsize size = dw_dtype_size (dtype);

  memcpy (tmp, p, size);
  if (swap)
    byteswap_inplace (tmp, size, 1);
  switch (dtype)
    {
    case DW_DTYPE_F32:
      {
        float f;
        memcpy (&f, tmp, 4);
        return f;
      }
    case DW_DTYPE_F64:
      {
        double d;
        memcpy (&d, tmp, 8);
        return d;
      }
    case DW_DTYPE_F16:
    case DW_DTYPE_BF16:
      {
        guint16 h;
        memcpy (&h, tmp, 2);
        return dtype == DW_DTYPE_F16 ? dw_half_to_double (h) : dw_bf16_to_float (h);
      }
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      return tmp[0];
    case DW_DTYPE_I8:
      return (gint8)tmp[0];
    case DW_DTYPE_I16:
      {
        gint16 v;
        memcpy (&v, tmp, 2);
        return v;
      }
    case DW_DTYPE_U16:
      {
        guint16 v;
        memcpy (&v, tmp, 2);
        return v;
      }
    case DW_DTYPE_I32:
      {
        gint32 v;
        memcpy (&v, tmp, 4);
        return v;
      }
    case DW_DTYPE_U32:
      {
        guint32 v;
        memcpy (&v, tmp, 4);
        return v;
      }
    case DW_DTYPE_I64:
      {
        gint64 v;
        memcpy (&v, tmp, 8);
        return (double)v;
      }
    case DW_DTYPE_U64:
      {
        guint64 v;
        memcpy (&v, tmp, 8);
        return (double)v;
      }
    case DW_N_DTYPES:
    default:
      return 0.0;
    }
}

static void
encode (void *dst, gsize i, DwDType dtype, double v)
{
  switch (dtype)
    {
    case DW_DTYPE_F32:
      ((float *)dst)[i] = (float)v;
      break;
    case DW_DTYPE_F64:
      ((double *)dst)[i] = v;
      break;
    default:
      /* Only float destinations are produced by conversion; integer masks are copied as-is. */
      g_assert_not_reached ();
    }
}

void
dw_convert (void *dst, DwDType dst_dtype, const guint8 *src, DwDType src_dtype, gboolean swap,
            gsize n)
{
  gsize ss = dw_dtype_size (src_dtype);

  if (n == 0)
    return;
  if (src_dtype == dst_dtype)
    {
      memcpy (dst, src, n * ss);
      if (swap && ss > 1)
        byteswap_inplace (dst, ss, n);
      return;
    }
  if (!swap && src_dtype == DW_DTYPE_F32 && dst_dtype == DW_DTYPE_F64)
    {
      const float *s = (const float *)(const void *)src;
      double *d = dst;
      if (((guintptr)src & 3) == 0)
        for (gsize i = 0; i < n; i++)
          d[i] = s[i];
      else
        for (gsize i = 0; i < n; i++)
          d[i] = decode (src + i * 4, DW_DTYPE_F32, FALSE);
      return;
    }
  if (!swap && src_dtype == DW_DTYPE_BF16 && dst_dtype == DW_DTYPE_F32)
    {
      float *d = dst;
      for (gsize i = 0; i < n; i++)
        {
          guint16 h;
          memcpy (&h, src + 2 * i, 2);
          d[i] = dw_bf16_to_float (h);
        }
      return;
    }
  for (gsize i = 0; i < n; i++)
    encode (dst, i, dst_dtype, decode (src + i * ss, src_dtype, swap));
}

/* ------------------------------------------------------------------------------------------ */
/* Tensors → batch                                                                            */

typedef enum
{
  ROLE_OLD,
  ROLE_ROLLOUT,
  ROLE_MASK,
  ROLE_ADV,
  ROLE_CU,
  N_ROLES
} Role;

/* First name is canonical; the others are the framework names docs/BATCHES.md §2 lists
 * (verl's batch keys, slime's sample keys). */
static const char *const role_names[N_ROLES][4] = {
  [ROLE_OLD] = { "old_log_prob", "old_log_probs", "log_probs", NULL },
  [ROLE_ROLLOUT] = { "rollout_log_prob", "rollout_log_probs", NULL },
  [ROLE_MASK] = { "response_mask", "loss_masks", "loss_mask", NULL },
  [ROLE_ADV] = { "advantages", "advantage", NULL },
  [ROLE_CU] = { "cu_seqlens", NULL },
};

gboolean
dw_batch_tensor_wanted (const char *name)
{
  for (int r = 0; r < N_ROLES; r++)
    for (int k = 0; role_names[r][k]; k++)
      if (strcmp (name, role_names[r][k]) == 0)
        return TRUE;
  return FALSE;
}

static DwTensor *
find_role (GPtrArray *tensors, Role role)
{
  /* canonical name first, then aliases in order */
  for (int k = 0; role_names[role][k]; k++)
    for (guint i = 0; i < tensors->len; i++)
      {
        DwTensor *t = g_ptr_array_index (tensors, i);
        if (strcmp (t->name, role_names[role][k]) == 0)
          return t;
      }
  return NULL;
}

static gboolean
is_float (DwDType d)
{
  return d == DW_DTYPE_F32 || d == DW_DTYPE_F64 || d == DW_DTYPE_F16 || d == DW_DTYPE_BF16;
}

static gboolean
is_int (DwDType d)
{
  return d != DW_DTYPE_BOOL && !is_float (d) && d < DW_N_DTYPES;
}

static gboolean
same_shape (const DwTensor *a, const DwTensor *b)
{
  if (a->ndim != b->ndim)
    return FALSE;
  for (guint i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i])
      return FALSE;
  return TRUE;
}

static gboolean
shape_error (GError **error, const char *name, const DwTensor *t, const DwTensor *ref)
{
  g_autofree char *s1 = dw_shape_to_string (t->ndim, t->shape);
  g_autofree char *s2 = dw_shape_to_string (ref->ndim, ref->shape);
  dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                      "%s: shape %s does not match %s %s", t->where, s1, ref->name, s2);
  return FALSE;
}

static gboolean
check_lp_dtype (const char *name, const DwTensor *t, GError **error)
{
  if (is_float (t->dtype))
    return TRUE;
  dw_batch_set_error (error, DW_BATCH_ERROR_UNSUPPORTED_DTYPE, name,
                      "%s: dtype %s cannot hold log-probs (want float32 or float64; bfloat16 "
                      "and float16 are read but flagged lossy)",
                      t->where, dw_dtype_name (t->dtype));
  return FALSE;
}

/* Copies @t (padded [B,T] C or Fortran order, [B] broadcast, or [1,T]/[T]) into @dst. */
static gboolean
copy_padded (void *dst, DwDType dd, DwTensor *t, gsize rows, gsize cols, GError **error)
{
  gsize ss = dw_dtype_size (t->dtype), ds = dw_dtype_size (dd);
  gboolean fortran = t->fortran_order && t->ndim == 2 && rows > 1 && cols > 1;

  if (!t->data && t->dtype == dd && (!t->big_endian || ss == 1) && !fortran
      && t->n_elems == rows * cols)
    return t->fill (t, dst, 0, t->n_elems, error); /* straight from the file into the batch */
  if (!dw_tensor_load (t, error))
    return FALSE;
  if (t->ndim == 1 && t->shape[0] == rows && rows * cols != t->n_elems)
    {
      /* [B] per-sequence value broadcast over its row (JSONL-style scalar advantage) */
      for (gsize b = 0; b < rows; b++)
        for (gsize c = 0; c < cols; c++)
          dw_convert ((guint8 *)dst + (b * cols + c) * ds, dd, t->data + b * ss, t->dtype,
                      t->big_endian, 1);
      return TRUE;
    }
  if (fortran)
    {
      for (gsize b = 0; b < rows; b++)
        for (gsize c = 0; c < cols; c++)
          dw_convert ((guint8 *)dst + (b * cols + c) * ds, dd, t->data + (c * rows + b) * ss,
                      t->dtype, t->big_endian, 1);
      return TRUE;
    }
  dw_convert (dst, dd, t->data, t->dtype, t->big_endian, rows * cols);
  return TRUE;
}

static gboolean
copy_packed (void *dst, DwDType dd, DwTensor *t, const guint64 *cu, gsize rows, gsize cols,
             GError **error)
{
  gsize ss = dw_dtype_size (t->dtype), ds = dw_dtype_size (dd);

  if (!t->data && t->dtype == dd && (!t->big_endian || ss == 1) && t->n_elems == cu[rows])
    {
      /* row by row straight from the file into the padded batch */
      for (gsize b = 0; b < rows; b++)
        if (cu[b + 1] > cu[b]
            && !t->fill (t, (guint8 *)dst + b * cols * ds, cu[b], cu[b + 1] - cu[b], error))
          return FALSE;
      return cu[rows] > 0 || t->fill (t, dst, 0, 0, error);
    }
  if (!dw_tensor_load (t, error))
    return FALSE;
  if (t->ndim == 1 && t->shape[0] == rows && cu[rows] != rows)
    {
      for (gsize b = 0; b < rows; b++)
        for (guint64 i = cu[b]; i < cu[b + 1]; i++)
          dw_convert ((guint8 *)dst + (b * cols + (i - cu[b])) * ds, dd, t->data + b * ss, t->dtype,
                      t->big_endian, 1);
      return TRUE;
    }
  for (gsize b = 0; b < rows; b++)
    dw_convert ((guint8 *)dst + b * cols * ds, dd, t->data + cu[b] * ss, t->dtype, t->big_endian,
                cu[b + 1] - cu[b]);
  return TRUE;
}

static gboolean
read_cu_seqlens (const char *name, const DwTensor *cu_t, guint64 n_tokens, guint64 **cu_out,
                 GError **error)
{
  g_autofree guint64 *cu = NULL;
  guint64 nb;

  if (!is_int (cu_t->dtype) || cu_t->ndim != 1 || cu_t->shape[0] < 1)
    {
      g_autofree char *s = dw_shape_to_string (cu_t->ndim, cu_t->shape);
      dw_batch_set_error (error,
                          is_int (cu_t->dtype) ? DW_BATCH_ERROR_SHAPE_MISMATCH
                                               : DW_BATCH_ERROR_UNSUPPORTED_DTYPE,
                          name, "%s: cu_seqlens must be a 1-D integer array [B+1], got %s %s",
                          cu_t->where, dw_dtype_name (cu_t->dtype), s);
      return FALSE;
    }
  nb = cu_t->shape[0];
  cu = g_new (guint64, nb);
  for (guint64 i = 0; i < nb; i++)
    {
      double v
        = decode (cu_t->data + i * dw_dtype_size (cu_t->dtype), cu_t->dtype, cu_t->big_endian);
      if (!(v >= 0 && v <= (double)n_tokens) || (i == 0 && v != 0)
          || (i > 0 && (guint64)v < cu[i - 1]))
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, name,
                              "%s: cu_seqlens[%" G_GUINT64_FORMAT "] = %.17g: cu_seqlens must "
                              "start at 0, never decrease and stay <= %" G_GUINT64_FORMAT,
                              cu_t->where, i, v, n_tokens);
          return FALSE;
        }
      cu[i] = (guint64)v;
    }
  if (cu[nb - 1] != n_tokens)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                          "%s: cu_seqlens ends at %" G_GUINT64_FORMAT
                          " but the packed tensors hold %" G_GUINT64_FORMAT " tokens",
                          cu_t->where, cu[nb - 1], n_tokens);
      return FALSE;
    }
  *cu_out = g_steal_pointer (&cu);
  return TRUE;
}

static gboolean
check_size (const char *name, guint64 rows, guint64 cols, DwDType lp, DwDType mask, gboolean adv,
            GError **error)
{
  guint64 per = 2 * dw_dtype_size (lp) + dw_dtype_size (mask) + (adv ? dw_dtype_size (lp) : 0);
  guint64 n;
  guint64 shape[2] = { rows, cols };

  if (!dw_shape_product (2, shape, per, &n) || n * per > dw_batch_reader_get_max_bytes ())
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, name,
                          "a batch of [%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                          "] needs more than the reader's limit of %" G_GUINT64_FORMAT " bytes",
                          rows, cols, dw_batch_reader_get_max_bytes ());
      return FALSE;
    }
  return TRUE;
}

DwBatch *
dw_batch_from_tensors (const char *name, GPtrArray *tensors, gint64 step, const char *layout,
                       GError **error)
{
  DwTensor *old, *roll, *mask, *adv, *cu_t;
  g_autoptr (DwBatch) batch = NULL;
  g_autoptr (GError) local = NULL;
  g_autofree guint64 *cu = NULL;
  DwDType lp, md;
  guint64 rows, cols;

  old = find_role (tensors, ROLE_OLD);
  roll = find_role (tensors, ROLE_ROLLOUT);
  mask = find_role (tensors, ROLE_MASK);
  adv = find_role (tensors, ROLE_ADV);
  cu_t = find_role (tensors, ROLE_CU);

  if (!old || !roll || !mask)
    {
      GString *found = g_string_new (NULL);
      for (guint i = 0; i < tensors->len; i++)
        g_string_append_printf (found, "%s%s", i ? ", " : "",
                                ((DwTensor *)g_ptr_array_index (tensors, i))->name);
      dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, name,
                          "no tensor '%s' (required: old_log_prob, rollout_log_prob, "
                          "response_mask; found: %s)",
                          !old    ? "old_log_prob"
                          : !roll ? "rollout_log_prob"
                                  : "response_mask",
                          found->len ? found->str : "none");
      g_string_free (found, TRUE);
      return NULL;
    }
  if (!check_lp_dtype (name, old, error) || !check_lp_dtype (name, roll, error))
    return NULL;
  if (!is_float (mask->dtype) && !is_int (mask->dtype) && mask->dtype != DW_DTYPE_BOOL)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_UNSUPPORTED_DTYPE, name,
                          "%s: dtype %s cannot hold a mask", mask->where,
                          dw_dtype_name (mask->dtype));
      return NULL;
    }
  if (adv && !is_float (adv->dtype) && !is_int (adv->dtype))
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_UNSUPPORTED_DTYPE, name,
                          "%s: dtype %s cannot hold advantages", adv->where,
                          dw_dtype_name (adv->dtype));
      return NULL;
    }
  if (layout && strcmp (layout, "packed") == 0 && !cu_t)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, name,
                          "layout is 'packed' but there is no cu_seqlens tensor");
      return NULL;
    }

  lp = (old->dtype == DW_DTYPE_F64 || roll->dtype == DW_DTYPE_F64) ? DW_DTYPE_F64 : DW_DTYPE_F32;
  md = (mask->dtype == DW_DTYPE_F16 || mask->dtype == DW_DTYPE_BF16) ? DW_DTYPE_F32 : mask->dtype;

  if (cu_t)
    {
      guint64 n;
      if (old->ndim != 1)
        {
          g_autofree char *s = dw_shape_to_string (old->ndim, old->shape);
          dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                              "%s: packed layout (cu_seqlens present) needs 1-D [N] tensors, "
                              "got %s",
                              old->where, s);
          return NULL;
        }
      if (!same_shape (roll, old))
        return shape_error (error, name, roll, old), NULL;
      if (!same_shape (mask, old))
        return shape_error (error, name, mask, old), NULL;
      n = old->shape[0];
      if (!dw_tensor_load (cu_t, &local))
        goto fail;
      if (!read_cu_seqlens (name, cu_t, n, &cu, error))
        return NULL;
      rows = cu_t->shape[0] - 1;
      if (adv && !same_shape (adv, old) && !(adv->ndim == 1 && adv->shape[0] == rows))
        return shape_error (error, name, adv, old), NULL;
      cols = 0;
      for (guint64 b = 0; b < rows; b++)
        cols = MAX (cols, cu[b + 1] - cu[b]);
    }
  else
    {
      if (old->ndim == 2)
        rows = old->shape[0], cols = old->shape[1];
      else if (old->ndim == 1)
        rows = 1, cols = old->shape[0];
      else
        {
          g_autofree char *s = dw_shape_to_string (old->ndim, old->shape);
          dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                              "%s: log-probs must be [B,T] (or packed [N] with cu_seqlens), got "
                              "%s",
                              old->where, s);
          return NULL;
        }
      if (!same_shape (roll, old))
        return shape_error (error, name, roll, old), NULL;
      if (!same_shape (mask, old))
        return shape_error (error, name, mask, old), NULL;
      if (adv && !same_shape (adv, old) && !(adv->ndim == 1 && adv->shape[0] == rows))
        return shape_error (error, name, adv, old), NULL;
    }

  if (!check_size (name, rows, cols, lp, md, adv != NULL, error))
    return NULL;
  batch = dw_batch_new (rows, cols, lp, md);
  if (batch && adv)
    {
      batch->advantages = calloc (rows * cols != 0 ? rows * cols : 1, dw_dtype_size (lp));
      if (!batch->advantages)
        g_clear_pointer (&batch, dw_batch_free);
    }
  if (!batch)
    {
      dw_batch_set_error (
        error, DW_BATCH_ERROR_TOO_LARGE, name,
        "out of memory for a batch of [%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "]", rows, cols);
      return NULL;
    }
  batch->step = step;
  if (old->dtype == DW_DTYPE_BF16 || roll->dtype == DW_DTYPE_BF16)
    batch->source_lp_dtype = DW_DTYPE_BF16;
  else if (old->dtype == DW_DTYPE_F16 || roll->dtype == DW_DTYPE_F16)
    batch->source_lp_dtype = DW_DTYPE_F16;
  else if (old->dtype == DW_DTYPE_F32 || roll->dtype == DW_DTYPE_F32)
    batch->source_lp_dtype = DW_DTYPE_F32;
  else
    batch->source_lp_dtype = DW_DTYPE_F64;
  if (batch->source_lp_dtype == DW_DTYPE_BF16 || batch->source_lp_dtype == DW_DTYPE_F16)
    batch->flags |= DW_BATCH_LOSSY_LOGPROBS;

  if (cu)
    {
      batch->flags |= DW_BATCH_PACKED_SOURCE;
      if (!copy_packed (batch->old_log_prob, lp, old, cu, rows, cols, &local)
          || !copy_packed (batch->rollout_log_prob, lp, roll, cu, rows, cols, &local)
          || !copy_packed (batch->response_mask, md, mask, cu, rows, cols, &local)
          || (adv && !copy_packed (batch->advantages, lp, adv, cu, rows, cols, &local)))
        goto fail;
    }
  else
    {
      if (!copy_padded (batch->old_log_prob, lp, old, rows, cols, &local)
          || !copy_padded (batch->rollout_log_prob, lp, roll, rows, cols, &local)
          || !copy_padded (batch->response_mask, md, mask, rows, cols, &local)
          || (adv && !copy_padded (batch->advantages, lp, adv, rows, cols, &local)))
        goto fail;
    }
  return g_steal_pointer (&batch);

fail:
  /* local carries its own "NAME: " prefix already when it comes from a DwSource */
  if (g_str_has_prefix (local->message, name))
    g_propagate_error (error, g_steal_pointer (&local));
  else
    dw_batch_set_error (error, (DwBatchError)local->code, name, "%s", local->message);
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Detection and dispatch                                                                     */

DwBatchFormat
dw_batch_detect_format (const guint8 *data, gsize len)
{
  if (len >= 4 && memcmp (data, "PK\003\004", 4) == 0)
    return DW_BATCH_FORMAT_NPZ;
  if (len >= 4 && memcmp (data, "PK\005\006", 4) == 0) /* empty zip */
    return DW_BATCH_FORMAT_NPZ;
  if (len >= 6 && memcmp (data, "\x93NUMPY", 6) == 0)
    return DW_BATCH_FORMAT_NPY;
  if (len >= 9 && data[8] == '{')
    {
      /* an 8-byte length then '{' — unless those 8 bytes are JSONL's own blank space + '{' */
      gsize i = 0;
      while (i < 8 && g_ascii_isspace (data[i]))
        i++;
      if (data[i] != '{')
        return DW_BATCH_FORMAT_SAFETENSORS;
    }
  for (gsize i = 0; i < len; i++)
    {
      if (data[i] == '{')
        return DW_BATCH_FORMAT_JSONL;
      if (!g_ascii_isspace (data[i]))
        break;
    }
  return DW_BATCH_FORMAT_UNKNOWN;
}

const char *
dw_batch_format_name (DwBatchFormat format)
{
  switch (format)
    {
    case DW_BATCH_FORMAT_NPZ:
      return "npz";
    case DW_BATCH_FORMAT_NPY:
      return "npy";
    case DW_BATCH_FORMAT_SAFETENSORS:
      return "safetensors";
    case DW_BATCH_FORMAT_JSONL:
      return "jsonl";
    case DW_BATCH_FORMAT_UNKNOWN:
    default:
      return "unknown";
    }
}

static DwBatch *
read_source (const DwSource *src, const char *path, GError **error)
{
  guint8 head[64];
  gsize n = MIN (sizeof head, src->size);

  if (src->size == 0)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name, "offset 0: empty file");
      return NULL;
    }
  if (!dw_source_read (src, 0, head, n, "the format signature", error))
    return NULL;
  switch (dw_batch_detect_format (head, n))
    {
    case DW_BATCH_FORMAT_NPZ:
      return dw_npz_read (src, path, error);
    case DW_BATCH_FORMAT_NPY:
      return dw_npy_read (src, error);
    case DW_BATCH_FORMAT_SAFETENSORS:
      return dw_safetensors_read (src, error);
    case DW_BATCH_FORMAT_JSONL:
      return dw_jsonl_read (src, error);
    case DW_BATCH_FORMAT_UNKNOWN:
    default:
      break;
    }
  if (src->size < 9)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name,
                          "offset %" G_GUINT64_FORMAT ": the file ends after %" G_GUINT64_FORMAT
                          " bytes, too short for any batch format",
                          src->size, src->size);
      return NULL;
    }
  {
    GString *hex = g_string_new (NULL);
    for (gsize i = 0; i < MIN (n, 8); i++)
      g_string_append_printf (hex, "%s%02x", i ? " " : "", head[i]);
    dw_batch_set_error (error, DW_BATCH_ERROR_UNKNOWN_FORMAT, src->name,
                        "offset 0: not a rollout batch (npz, npy, safetensors or JSONL); "
                        "starts with %s",
                        hex->str);
    g_string_free (hex, TRUE);
  }
  return NULL;
}

DwBatch *
dw_batch_read_bytes (const char *name_for_errors, const guint8 *data, gsize len, GError **error)
{
  DwSource src = { name_for_errors ? name_for_errors : "(memory)", data, -1, len };
  if (data == NULL)
    src.size = 0;
  return read_source (&src, NULL, error);
}

/* A set of .npy files: a directory of <tensor>.npy, or siblings PREFIX.<tensor>.npy. */
static DwBatch *
read_npy_set (const char *name, const char *dir, const char *prefix, GError **error)
{
  g_autoptr (GPtrArray) tensors = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_tensor_free);
  g_autoptr (GDir) d = NULL;
  const char *entry;
  gint64 step = -1;
  DwBatch *batch;

  d = g_dir_open (dir, 0, error);
  if (!d)
    {
      g_prefix_error (error, "%s: ", name);
      return NULL;
    }
  while ((entry = g_dir_read_name (d)))
    {
      g_autofree char *tname = NULL;
      g_autofree char *path = NULL;
      DwTensor *t;
      int fd;
      struct stat st;

      if (!g_str_has_suffix (entry, ".npy") || !g_str_has_prefix (entry, prefix))
        continue;
      tname = g_strndup (entry + strlen (prefix), strlen (entry) - strlen (prefix) - 4);
      if (!dw_batch_tensor_wanted (tname))
        continue;
      path = g_build_filename (dir, entry, NULL);
      fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
      if (fd < 0 || fstat (fd, &st) < 0)
        {
          int saved = errno;
          if (fd >= 0)
            close (fd);
          dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", g_strerror (saved));
          return NULL;
        }
      {
        DwSource src = { path, NULL, fd, (guint64)st.st_size };
        t = dw_npy_parse (&src, 0, src.size, tname, NULL, error);
      }
      close (fd);
      if (!t)
        return NULL;
      g_free (t->where);
      t->where = g_strdup (entry);
      g_ptr_array_add (tensors, t);
    }
  step = dw_step_from_name (*prefix ? prefix : dir);
  batch = dw_batch_from_tensors (name, tensors, step, NULL, error);
  if (!batch && *prefix && error && *error && (*error)->code == DW_BATCH_ERROR_MISSING_TENSOR)
    {
      /* say where the siblings were looked for */
      char *m
        = g_strdup_printf ("%s; looked for %s<tensor>.npy beside it", (*error)->message, prefix);
      g_free ((*error)->message);
      (*error)->message = m;
    }
  return batch;
}

static DwBatch *
read_npy_path (const char *path, const DwSource *src, GError **error)
{
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *dir = g_path_get_dirname (path);
  char *dot;

  /* PREFIX.<tensor>.npy with a wanted tensor name → read the sibling set */
  if (g_str_has_suffix (base, ".npy"))
    {
      base[strlen (base) - 4] = '\0';
      dot = strrchr (base, '.');
      if (dot && dw_batch_tensor_wanted (dot + 1))
        {
          dot[1] = '\0';
          return read_npy_set (path, dir, base, error);
        }
    }
  return dw_npy_read (src, error);
}

DwBatch *
dw_batch_read_file (const char *path, GError **error)
{
  struct stat st;
  int fd;
  DwBatch *batch;
  guint8 head[64];
  gsize n;

  g_return_val_if_fail (path != NULL, NULL);

  if (g_stat (path, &st) == 0 && S_ISDIR (st.st_mode))
    return read_npy_set (path, path, "", error);
  fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", g_strerror (saved));
      return NULL;
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "not a regular file");
      return NULL;
    }
  {
    DwSource src = { path, NULL, fd, (guint64)st.st_size };
    n = MIN (sizeof head, src.size);
    if (n > 0 && dw_source_read (&src, 0, head, n, "the format signature", NULL)
        && dw_batch_detect_format (head, n) == DW_BATCH_FORMAT_NPY)
      batch = read_npy_path (path, &src, error);
    else
      batch = read_source (&src, path, error);
  }
  close (fd);
  return batch;
}

double *
dw_batch_read_npy_array (const char *path, guint *ndim, guint64 shape[8], DwDType *dtype,
                         GError **error)
{
  g_autoptr (DwTensor) t = NULL;
  struct stat st;
  int fd;
  double *values;

  fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", g_strerror (saved));
      return NULL;
    }
  {
    DwSource src = { path, NULL, fd, (guint64)st.st_size };
    t = dw_npy_parse (&src, 0, src.size, "array", NULL, error);
  }
  close (fd);
  if (!t)
    return NULL;
  if (t->n_elems > dw_batch_reader_get_max_bytes () / sizeof (double))
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, path,
                          "%" G_GUINT64_FORMAT " elements exceed the reader's limit", t->n_elems);
      return NULL;
    }
  values = g_new (double, t->n_elems ? t->n_elems : 1);
  if (t->fortran_order && t->ndim > 1)
    {
      /* general Fortran → C order: walk C indices, compute Fortran offsets */
      guint64 idx[DW_TENSOR_MAX_DIMS] = { 0 };
      gsize es = dw_dtype_size (t->dtype);
      for (guint64 i = 0; i < t->n_elems; i++)
        {
          guint64 off = 0, stride = 1;
          for (guint d = 0; d < t->ndim; d++)
            {
              off += idx[d] * stride;
              stride *= t->shape[d];
            }
          values[i] = decode (t->data + off * es, t->dtype, t->big_endian);
          for (int d = (int)t->ndim - 1; d >= 0; d--)
            {
              if (++idx[d] < t->shape[d])
                break;
              idx[d] = 0;
            }
        }
    }
  else
    dw_convert (values, DW_DTYPE_F64, t->data, t->dtype, t->big_endian, t->n_elems);
  *ndim = t->ndim;
  memcpy (shape, t->shape, sizeof (guint64) * DW_TENSOR_MAX_DIMS);
  *dtype = t->dtype;
  return values;
}

gboolean
dw_batch_write_file (const char *path, const void *contents, gsize len, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (!g_file_set_contents (path, contents, (gssize)len, &local))
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", local->message);
      return FALSE;
    }
  return TRUE;
}
