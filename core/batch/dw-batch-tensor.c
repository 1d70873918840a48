/* dw-batch-tensor.c — what every batch format reader calls down to: errors and limits, byte
 * sources, tensors and shapes, element decoding and dtype conversion
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

/* clang-format off */
G_DEFINE_QUARK (dw-batch-error-quark, dw_batch_error)
/* clang-format on */

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
      ssize_t got = pread (src->fd, buf, n, (off_t)offset);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        {
          int saved = errno;
          dw_batch_set_error (error, DW_BATCH_ERROR_IO, src->name,
                              "offset %" G_GUINT64_FORMAT ": reading %s: %s", offset, what,
                              g_strerror (saved));
          return FALSE;
        }
      if (got == 0)
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name,
                              "offset %" G_GUINT64_FORMAT ": file ended while reading %s "
                              "(it shrank while being read?)",
                              offset, what);
          return FALSE;
        }
      buf = (guint8 *)buf + got;
      n -= (gsize)got;
      offset += (guint64)got;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Tensors                                                                                    */

gint64
dw_step_from_name (const char *name)
{
  g_autofree char *base = NULL;
  const char *cursor;

  if (name == NULL)
    return -1;
  base = g_path_get_basename (name);
  cursor = strstr (base, "step");
  if (cursor)
    {
      cursor += 4;
      if (*cursor == '_' || *cursor == '-')
        cursor++;
    }
  else
    cursor = base;
  if (!g_ascii_isdigit (*cursor))
    return -1;
  return g_ascii_strtoll (cursor, NULL, 10);
}

DwTensor *
dw_tensor_new (const char *name, const char *where)
{
  DwTensor *tensor = g_new0 (DwTensor, 1);
  tensor->name = g_strdup (name);
  tensor->where = g_strdup (where);
  return tensor;
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
  gsize elem_size = dw_dtype_size (t->dtype);
  return dw_source_read (t->fill_ctx, t->fill_offset + start * elem_size, dst, n * elem_size,
                         t->where, error);
}

char *
dw_shape_to_string (guint ndim, const guint64 *shape)
{
  GString *text = g_string_new ("[");
  for (guint index = 0; index < ndim; index++)
    g_string_append_printf (text, "%s%" G_GUINT64_FORMAT, index ? "," : "", shape[index]);
  g_string_append_c (text, ']');
  return g_string_free (text, FALSE);
}

gboolean
dw_shape_product (guint ndim, const guint64 *shape, gsize elem_size, guint64 *n_elems)
{
  guint64 count = 1;
  gboolean zero = FALSE;

  for (guint index = 0; index < ndim; index++)
    if (shape[index] == 0)
      zero = TRUE;
  if (zero)
    {
      *n_elems = 0;
      return TRUE;
    }
  for (guint index = 0; index < ndim; index++)
    {
      if (count > G_MAXUINT64 / shape[index])
        return FALSE;
      count *= shape[index];
    }
  if (elem_size && count > G_MAXUINT64 / elem_size)
    return FALSE;
  *n_elems = count;
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Element conversion                                                                         */

double
dw_half_to_double (guint16 h)
{
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double value;

  if (exp == 0)
    value = ldexp ((double)mant, -24);
  else if (exp == 31)
    value = mant ? NAN : INFINITY;
  else
    value = ldexp ((double)(mant | 0x400), exp - 25);
  return sign ? -value : value;
}

float
dw_bf16_to_float (guint16 b)
{
  guint32 bits = (guint32)b << 16;
  float single;
  memcpy (&single, &bits, 4);
  return single;
}

static void
byteswap_inplace (guint8 *p, gsize size, gsize n)
{
  for (gsize index = 0; index < n; index++, p += size)
    for (gsize low = 0, high = size - 1; low < high; low++, high--)
      {
        guint8 tmp = p[low];
        p[low] = p[high];
        p[high] = tmp;
      }
}

double
dw_decode_element (const guint8 *p, DwDType dtype, gboolean swap)
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
        float single;
        memcpy (&single, tmp, 4);
        return single;
      }
    case DW_DTYPE_F64:
      {
        double number;
        memcpy (&number, tmp, 8);
        return number;
      }
    case DW_DTYPE_F16:
    case DW_DTYPE_BF16:
      {
        guint16 half;
        memcpy (&half, tmp, 2);
        return dtype == DW_DTYPE_F16 ? dw_half_to_double (half) : dw_bf16_to_float (half);
      }
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      return tmp[0];
    case DW_DTYPE_I8:
      return (gint8)tmp[0];
    case DW_DTYPE_I16:
      {
        gint16 value;
        memcpy (&value, tmp, 2);
        return value;
      }
    case DW_DTYPE_U16:
      {
        guint16 value;
        memcpy (&value, tmp, 2);
        return value;
      }
    case DW_DTYPE_I32:
      {
        gint32 value;
        memcpy (&value, tmp, 4);
        return value;
      }
    case DW_DTYPE_U32:
      {
        guint32 value;
        memcpy (&value, tmp, 4);
        return value;
      }
    case DW_DTYPE_I64:
      {
        gint64 value;
        memcpy (&value, tmp, 8);
        return (double)value;
      }
    case DW_DTYPE_U64:
      {
        guint64 value;
        memcpy (&value, tmp, 8);
        return (double)value;
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
  gsize src_size = dw_dtype_size (src_dtype);

  if (n == 0)
    return;
  if (src_dtype == dst_dtype)
    {
      memcpy (dst, src, n * src_size);
      if (swap && src_size > 1)
        byteswap_inplace (dst, src_size, n);
      return;
    }
  if (!swap && src_dtype == DW_DTYPE_F32 && dst_dtype == DW_DTYPE_F64)
    {
      const float *source = (const float *)(const void *)src;
      double *out = dst;
      if (((guintptr)src & 3) == 0)
        for (gsize index = 0; index < n; index++)
          out[index] = source[index];
      else
        for (gsize index = 0; index < n; index++)
          out[index] = dw_decode_element (src + index * 4, DW_DTYPE_F32, FALSE);
      return;
    }
  if (!swap && src_dtype == DW_DTYPE_BF16 && dst_dtype == DW_DTYPE_F32)
    {
      float *out = dst;
      for (gsize index = 0; index < n; index++)
        {
          guint16 half;
          memcpy (&half, src + 2 * index, 2);
          out[index] = dw_bf16_to_float (half);
        }
      return;
    }
  for (gsize index = 0; index < n; index++)
    encode (dst, index, dst_dtype, dw_decode_element (src + index * src_size, src_dtype, swap));
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
