/* dw-batch-npz.c — numpy .npy arrays and .npz archives (stored or deflate, zip64) via libzip
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The .npy header (a Python dict literal, numpy/lib/format.py) is parsed here; the zip container
 * (central directory, zip64 extras, inflate, CRC-32) is libzip's.
 */
#include "dw-batch-zip.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#define NPY_MAX_HEADER (1u << 16)

/* "member x.npy: offset 8" or "offset 8" */
static char *
place (const char *ctx, guint64 offset)
{
  if (ctx)
    return g_strdup_printf ("%s: offset %" G_GUINT64_FORMAT, ctx, offset);
  return g_strdup_printf ("offset %" G_GUINT64_FORMAT, offset);
}

gboolean
dw_npy_dtype_from_descr (const char *descr, DwDType *dtype, gboolean *big_endian)
{
  static const struct
  {
    const char *code;
    DwDType dtype;
  } codes[] = {
    { "f2", DW_DTYPE_F16 }, { "f4", DW_DTYPE_F32 }, { "f8", DW_DTYPE_F64 }, { "b1", DW_DTYPE_BOOL },
    { "?", DW_DTYPE_BOOL }, { "u1", DW_DTYPE_U8 },  { "u2", DW_DTYPE_U16 }, { "u4", DW_DTYPE_U32 },
    { "u8", DW_DTYPE_U64 }, { "i1", DW_DTYPE_I8 },  { "i2", DW_DTYPE_I16 }, { "i4", DW_DTYPE_I32 },
    { "i8", DW_DTYPE_I64 },
  };
  gboolean be = FALSE;

  if (*descr == '<' || *descr == '|' || *descr == '=')
    descr++;
  else if (*descr == '>')
    be = TRUE, descr++;
  for (gsize index = 0; index < G_N_ELEMENTS (codes); index++)
    if (strcmp (descr, codes[index].code) == 0)
      {
        *dtype = codes[index].dtype;
        *big_endian = be && dw_dtype_size (codes[index].dtype) > 1;
        return TRUE;
      }
  return FALSE;
}

typedef struct
{
  const char *s;
  gsize len, pos;
} Lex;

static void
lex_ws (Lex *l)
{
  while (l->pos < l->len
         && (l->s[l->pos] == ' ' || l->s[l->pos] == '\t' || l->s[l->pos] == '\n'
             || l->s[l->pos] == '\r'))
    l->pos++;
}

static gboolean
lex_char (Lex *l, char c)
{
  lex_ws (l);
  if (l->pos < l->len && l->s[l->pos] == c)
    {
      l->pos++;
      return TRUE;
    }
  return FALSE;
}

/* 'text' or "text" (no escapes: numpy never writes any in these keys) */
static char *
lex_string (Lex *l)
{
  char quote;
  gsize start;

  lex_ws (l);
  if (l->pos >= l->len || (l->s[l->pos] != '\'' && l->s[l->pos] != '"'))
    return NULL;
  quote = l->s[l->pos++];
  start = l->pos;
  while (l->pos < l->len && l->s[l->pos] != quote)
    {
      if (l->s[l->pos] == '\\' || l->s[l->pos] == '\n')
        return NULL;
      l->pos++;
    }
  if (l->pos >= l->len)
    return NULL;
  l->pos++;
  return g_strndup (l->s + start, l->pos - start - 1);
}

static gboolean
lex_word (Lex *l, const char *word)
{
  gsize count = strlen (word);
  lex_ws (l);
  if (l->len - l->pos >= count && memcmp (l->s + l->pos, word, count) == 0)
    {
      l->pos += count;
      return TRUE;
    }
  return FALSE;
}

static gboolean
lex_uint (Lex *l, guint64 *out)
{
  guint64 value = 0;
  gsize start;

  lex_ws (l);
  start = l->pos;
  while (l->pos < l->len && g_ascii_isdigit (l->s[l->pos]))
    {
      guint digit = (guint)(l->s[l->pos] - '0');
      if (value > (G_MAXUINT64 - digit) / 10)
        return FALSE;
      value = value * 10 + digit;
      l->pos++;
    }
  if (l->pos == start)
    return FALSE;
  if (l->pos < l->len && l->s[l->pos] == 'L') /* Python 2 long */
    l->pos++;
  *out = value;
  return TRUE;
}

typedef struct
{
  DwDType dtype;
  gboolean big_endian, fortran;
  guint ndim;
  guint64 shape[DW_TENSOR_MAX_DIMS];
  guint64 data_offset;
} NpyHeader;

/* phase 1: magic, version and header length; *@start is where the header text begins */
static gboolean
npy_preamble (const char *name, const char *ctx, const guint8 *hdr, gsize avail, guint64 total,
              guint64 *start, guint64 *header_length, GError **error)
{
  if (total < 10)
    {
      g_autofree char *where = place (ctx, 0);
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, name,
                          "%s: .npy preamble needs 10 bytes, there are %" G_GUINT64_FORMAT, where,
                          total);
      return FALSE;
    }
  if (memcmp (hdr, "\x93NUMPY", 6) != 0)
    {
      g_autofree char *where = place (ctx, 0);
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, name, "%s: no \\x93NUMPY magic", where);
      return FALSE;
    }
  const guint major = hdr[6], minor = hdr[7];
  if (major == 1)
    *header_length = hdr[8] | (guint)hdr[9] << 8, *start = 10;
  else if (major == 2 || major == 3)
    {
      if (total < 12)
        {
          g_autofree char *where = place (ctx, 8);
          dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, name,
                              "%s: .npy v%u header length needs 4 bytes", where, major);
          return FALSE;
        }
      *header_length = hdr[8] | (guint)hdr[9] << 8 | (guint)hdr[10] << 16 | (guint64)hdr[11] << 24;
      *start = 12;
    }
  else
    {
      g_autofree char *where = place (ctx, 6);
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, name,
                          "%s: unsupported .npy format version %u.%u", where, major, minor);
      return FALSE;
    }
  if (*header_length > NPY_MAX_HEADER)
    {
      g_autofree char *where = place (ctx, 8);
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, name,
                          "%s: .npy header length %" G_GUINT64_FORMAT " exceeds %u bytes", where,
                          *header_length, NPY_MAX_HEADER);
      return FALSE;
    }
  if (*start + *header_length > total || *start + *header_length > avail)
    {
      g_autofree char *where = place (ctx, *start);
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, name,
                          "%s: .npy header of %" G_GUINT64_FORMAT " bytes, only %" G_GUINT64_FORMAT
                          " present",
                          where, *header_length, total - *start);
      return FALSE;
    }
  return TRUE;
}

/* Where a header problem is reported: the file, the member, the header's first byte */
typedef struct
{
  const char *name, *ctx;
  guint64 start;
  GError **error;
} NpyWhere;

/* "<place>: .npy header: MESSAGE" at the lexer's position; always FALSE */
static gboolean G_GNUC_PRINTF (3, 4)
  npy_header_fail (const NpyWhere *at, const Lex *lex, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_autofree char *where = place (at->ctx, at->start + lex->pos);
  dw_batch_set_error (at->error, DW_BATCH_ERROR_CORRUPT, at->name, "%s: .npy header: %s", where,
                      message);
  return FALSE;
}

/* phase 2a: 'descr', a plain dtype string (a structured dtype's list is refused) */
static gboolean
npy_header_descr (const NpyWhere *at, Lex *lex, NpyHeader *h)
{
  g_autofree char *descr = NULL;
  const gsize descr_pos = lex->pos;
  lex_ws (lex);
  if (lex->pos < lex->len && lex->s[lex->pos] == '[')
    {
      g_autofree char *where = place (at->ctx, at->start + descr_pos);
      dw_batch_set_error (at->error, DW_BATCH_ERROR_UNSUPPORTED_DTYPE, at->name,
                          "%s: structured dtypes are not supported", where);
      return FALSE;
    }
  descr = lex_string (lex);
  if (!descr)
    return npy_header_fail (at, lex, "'descr' must be a string");
  if (!dw_npy_dtype_from_descr (descr, &h->dtype, &h->big_endian))
    {
      g_autofree char *where = place (at->ctx, at->start + descr_pos);
      dw_batch_set_error (at->error, DW_BATCH_ERROR_UNSUPPORTED_DTYPE, at->name,
                          "%s: unsupported dtype '%s'", where, descr);
      return FALSE;
    }
  return TRUE;
}

/* phase 2b: 'shape', a tuple of at most DW_TENSOR_MAX_DIMS whole numbers */
static gboolean
npy_header_shape (const NpyWhere *at, Lex *lex, NpyHeader *h)
{
  if (!lex_char (lex, '('))
    return npy_header_fail (at, lex, "'shape' must be a tuple");
  h->ndim = 0;
  while (!lex_char (lex, ')'))
    {
      guint64 dimension;
      if (h->ndim == DW_TENSOR_MAX_DIMS)
        return npy_header_fail (at, lex, "more than %d dimensions", DW_TENSOR_MAX_DIMS);
      if (!lex_uint (lex, &dimension))
        return npy_header_fail (at, lex, "bad dimension in 'shape'");
      h->shape[h->ndim++] = dimension;
      if (!lex_char (lex, ',') && !(lex_ws (lex), lex->pos < lex->len && lex->s[lex->pos] == ')'))
        return npy_header_fail (at, lex, "expected ',' or ')' in 'shape'");
    }
  return TRUE;
}

/* Parses the header of the .npy at @hdr (the first @avail bytes, or all of them). */
static gboolean
npy_header (const char *name, const char *ctx, const guint8 *hdr, gsize avail, guint64 total,
            NpyHeader *h, GError **error)
{
  guint64 header_length, start;
  gboolean have_descr = FALSE, have_fortran = FALSE, have_shape = FALSE;
  Lex lex;

  if (!npy_preamble (name, ctx, hdr, avail, total, &start, &header_length, error))
    return FALSE;
  const NpyWhere position = { name, ctx, start, error };
  lex.s = (const char *)hdr + start;
  lex.len = header_length;
  lex.pos = 0;
  if (!lex_char (&lex, '{'))
    return npy_header_fail (&position, &lex, "expected '{'");
  while (!lex_char (&lex, '}'))
    {
      g_autofree char *key = lex_string (&lex);
      if (!key)
        return npy_header_fail (&position, &lex, "expected a quoted key");
      if (!lex_char (&lex, ':'))
        return npy_header_fail (&position, &lex, "expected ':' after '%s'", key);
      if (strcmp (key, "descr") == 0)
        {
          if (!npy_header_descr (&position, &lex, h))
            return FALSE;
          have_descr = TRUE;
        }
      else if (strcmp (key, "fortran_order") == 0)
        {
          if (lex_word (&lex, "True"))
            h->fortran = TRUE;
          else if (lex_word (&lex, "False"))
            h->fortran = FALSE;
          else
            return npy_header_fail (&position, &lex, "'fortran_order' must be True or False");
          have_fortran = TRUE;
        }
      else if (strcmp (key, "shape") == 0)
        {
          if (!npy_header_shape (&position, &lex, h))
            return FALSE;
          have_shape = TRUE;
        }
      else
        return npy_header_fail (&position, &lex, "unknown key '%s'", key);
      if (!lex_char (&lex, ',') && !(lex_ws (&lex), lex.pos < lex.len && lex.s[lex.pos] == '}'))
        return npy_header_fail (&position, &lex, "expected ',' or '}'");
    }
  lex_ws (&lex);
  if (lex.pos != lex.len)
    return npy_header_fail (&position, &lex, "unexpected text after '}'");
  if (!have_descr || !have_fortran || !have_shape)
    return npy_header_fail (&position, &lex, "missing key '%s'",
                            !have_descr     ? "descr"
                            : !have_fortran ? "fortran_order"
                                            : "shape");
  h->data_offset = start + header_length;
  return TRUE;
}

/* Validates the data size of @h against @total and returns the byte count. */
static gboolean
npy_data_size (const char *name, const char *ctx, const NpyHeader *h, guint64 total,
               guint64 *n_elems, guint64 *nbytes, GError **error)
{
  gsize elem_size = dw_dtype_size (h->dtype);
  guint64 avail = total - h->data_offset;
  g_autofree char *shape = dw_shape_to_string (h->ndim, h->shape);
  g_autofree char *where = place (ctx, h->data_offset);

  if (!dw_shape_product (h->ndim, h->shape, elem_size, n_elems) || *n_elems * elem_size > avail)
    {
      g_autofree char *need = dw_shape_product (h->ndim, h->shape, elem_size, n_elems)
                                ? g_strdup_printf ("%" G_GUINT64_FORMAT, *n_elems * elem_size)
                                : g_strdup ("more than 2^64");
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, name,
                          "%s: shape %s of %s needs %s bytes but only %" G_GUINT64_FORMAT
                          " are present",
                          where, shape, dw_dtype_name (h->dtype), need, avail);
      return FALSE;
    }
  *nbytes = *n_elems * elem_size;
  if (*nbytes < avail)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, name,
                          "%s: %" G_GUINT64_FORMAT " bytes after the data of shape %s of %s", where,
                          avail - *nbytes, shape, dw_dtype_name (h->dtype));
      return FALSE;
    }
  if (*nbytes > dw_batch_reader_get_max_bytes ())
    {
      dw_batch_set_error (
        error, DW_BATCH_ERROR_TOO_LARGE, name,
        "%s: shape %s of %s is larger than the reader's limit of %" G_GUINT64_FORMAT " bytes",
        where, shape, dw_dtype_name (h->dtype), dw_batch_reader_get_max_bytes ());
      return FALSE;
    }
  return TRUE;
}

static DwTensor *
tensor_from_header (const char *tensor_name, const char *ctx, const NpyHeader *h, guint64 n)
{
  g_autofree char *where = place (ctx, h->data_offset);
  DwTensor *tensor = dw_tensor_new (tensor_name, where);
  tensor->dtype = h->dtype;
  tensor->big_endian = h->big_endian;
  tensor->fortran_order = h->fortran;
  tensor->ndim = h->ndim;
  memcpy (tensor->shape, h->shape, sizeof h->shape);
  tensor->n_elems = n;
  return tensor;
}

DwTensor *
dw_npy_parse (const DwSource *src, guint64 base, guint64 len, const char *tensor_name,
              const char *ctx, GError **error)
{
  NpyHeader h = { 0 };
  guint8 pre[12];
  g_autofree guint8 *hdr = NULL;
  guint64 hlen, count, nbytes;
  DwTensor *tensor;

  if (!dw_source_read (src, base, pre, MIN (len, 12), "the .npy preamble", error))
    return NULL;
  /* first pass on the preamble only, to learn the header length */
  if (len < 10)
    return npy_header (src->name, ctx, pre, len, len, &h, error), NULL;
  if (pre[6] == 1)
    hlen = 10 + (pre[8] | (guint)pre[9] << 8);
  else if (len >= 12)
    hlen = 12 + (pre[8] | (guint)pre[9] << 8 | (guint)pre[10] << 16 | (guint64)pre[11] << 24);
  else
    hlen = len;
  hlen = MIN (hlen, MIN (len, NPY_MAX_HEADER + 12));
  hdr = g_malloc (hlen);
  if (!dw_source_read (src, base, hdr, hlen, "the .npy header", error))
    return NULL;
  if (!npy_header (src->name, ctx, hdr, hlen, len, &h, error))
    return NULL;
  if (!npy_data_size (src->name, ctx, &h, len, &count, &nbytes, error))
    return NULL;
  tensor = tensor_from_header (tensor_name, ctx, &h, count);
  tensor->owned = g_try_malloc (nbytes ? nbytes : 1);
  if (!tensor->owned)
    {
      dw_tensor_free (tensor);
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                          "out of memory for %" G_GUINT64_FORMAT " bytes of %s", nbytes,
                          tensor_name);
      return NULL;
    }
  tensor->data = tensor->owned;
  if (!dw_source_read (src, base + h.data_offset, tensor->owned, nbytes, "the .npy data", error))
    {
      dw_tensor_free (tensor);
      return NULL;
    }
  return tensor;
}

DwBatch *
dw_npy_read (const DwSource *src, GError **error)
{
  g_autoptr (DwTensor) t = dw_npy_parse (src, 0, src->size, "array", NULL, error);
  g_autofree char *shape = NULL;

  if (!t)
    return NULL;
  shape = dw_shape_to_string (t->ndim, t->shape);
  dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, src->name,
                      "a single .npy array (%s %s) is not a batch: name it "
                      "PREFIX.<tensor>.npy beside PREFIX.old_log_prob.npy, "
                      "PREFIX.rollout_log_prob.npy and PREFIX.response_mask.npy, or use .npz",
                      dw_dtype_name (t->dtype), shape);
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* .npz                                                                                       */

typedef struct
{
  zip_file_t *zf;
  char *name;
  guint64 member_size;
  guint64 next; /* next element to read */
} NpzMember;

static void
npz_member_free (gpointer data)
{
  NpzMember *member = data;
  if (member->zf)
    zip_fclose (member->zf);
  g_free (member->name);
  g_free (member);
}

/* zip_fread until @n bytes or the end; returns the count or -1 */
static zip_int64_t
zread (zip_file_t *zf, void *buf, guint64 n)
{
  guint64 done = 0;
  while (done < n)
    {
      zip_int64_t got = zip_fread (zf, (guint8 *)buf + done, n - done);
      if (got < 0)
        return -1;
      if (got == 0)
        break;
      done += (guint64)got;
    }
  return (zip_int64_t)done;
}

static gboolean
npz_read_fail (const char *name, const char *what, zip_file_t *zf, zip_int64_t got, guint64 offset,
               guint64 want, GError **error)
{
  zip_error_t *file_error = zip_file_get_error (zf);
  if (got >= 0 && zip_error_code_zip (file_error) == ZIP_ER_OK)
    dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, name,
                        "%s: offset %" G_GUINT64_FORMAT ": member data ends before the declared "
                        "%" G_GUINT64_FORMAT " bytes",
                        what, offset + (guint64)got, want);
  else
    dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, name, "%s: %s", what,
                        zip_error_strerror (file_error));
  return FALSE;
}

/* Lazy fill: the member's data straight into @dst, in order; at the end one more read reaches
 * the end of the member, where libzip checks the CRC-32. */
static gboolean
npz_fill (DwTensor *t, guint8 *dst, guint64 start, guint64 n, GError **error)
{
  NpzMember *member = t->fill_ctx;
  gsize elem_size = dw_dtype_size (t->dtype);
  zip_int64_t got;
  guint8 extra;

  g_assert (start == member->next); /* callers fill in order */
  got = zread (member->zf, dst, n * elem_size);
  if (got == (zip_int64_t)(n * elem_size) && start + n == t->n_elems
      && zip_fread (member->zf, &extra, 1) != 0)
    got = -1;
  if (got != (zip_int64_t)(n * elem_size))
    return npz_read_fail (member->name, t->where, member->zf, got,
                          t->fill_offset + start * elem_size, member->member_size, error);
  member->next = start + n;
  if (member->next == t->n_elems)
    {
      zip_fclose (member->zf);
      member->zf = NULL;
    }
  return TRUE;
}

/* Reads the .npy preamble and header of an open member; the data stays lazy. Takes @zf. */
static DwTensor *
npz_member_header (const char *name, const char *ctx, const char *tname, zip_file_t *zf,
                   guint64 size, GError **error)
{
  NpyHeader h = { 0 };
  guint8 pre[12];
  g_autofree guint8 *hdr = NULL;
  guint64 hlen, count, nbytes, pre_len = MIN (size, 12);
  zip_int64_t got;
  NpzMember *member;
  DwTensor *tensor;

  got = zread (zf, pre, pre_len);
  if (got != (zip_int64_t)pre_len)
    {
      npz_read_fail (name, ctx, zf, got, 0, size, error);
      zip_fclose (zf);
      return NULL;
    }
  if (size < 10)
    hlen = size;
  else if (pre[6] == 1)
    hlen = 10 + (pre[8] | (guint)pre[9] << 8);
  else if (size >= 12)
    hlen = 12 + (pre[8] | (guint)pre[9] << 8 | (guint)pre[10] << 16 | (guint64)pre[11] << 24);
  else
    hlen = size;
  hlen = MAX (pre_len, MIN (hlen, MIN (size, NPY_MAX_HEADER + 12)));
  hdr = g_malloc (hlen);
  memcpy (hdr, pre, pre_len);
  got = zread (zf, hdr + pre_len, hlen - pre_len);
  if (got != (zip_int64_t)(hlen - pre_len))
    {
      npz_read_fail (name, ctx, zf, got, pre_len, size, error);
      zip_fclose (zf);
      return NULL;
    }
  if (!npy_header (name, ctx, hdr, hlen, size, &h, error)
      || !npy_data_size (name, ctx, &h, size, &count, &nbytes, error))
    {
      zip_fclose (zf);
      return NULL;
    }
  if (h.data_offset != hlen) /* cannot happen: hlen is the header's own length */
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, name, "%s: inconsistent .npy header", ctx);
      zip_fclose (zf);
      return NULL;
    }
  tensor = tensor_from_header (tname, ctx, &h, count);
  member = g_new0 (NpzMember, 1);
  member->zf = zf;
  member->name = g_strdup (name);
  member->member_size = size;
  tensor->fill = npz_fill;
  tensor->fill_ctx = member;
  tensor->fill_free = npz_member_free;
  tensor->fill_offset = h.data_offset;
  return tensor;
}

DwBatch *
dw_npz_read (const DwSource *src, const char *path, GError **error)
{
  g_autoptr (GPtrArray) tensors = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_tensor_free);
  zip_t *za;
  zip_int64_t n_entries;
  DwBatch *batch = NULL;
  g_autoptr (GHashTable) seen = NULL;
  guint64 total = 0;

  za = dw_batch_zip_open (src, error);
  if (!za)
    return NULL;

  n_entries = zip_get_num_entries (za, 0);
  seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (zip_int64_t index = 0; index < n_entries; index++)
    {
      const char *mname = zip_get_name (za, (zip_uint64_t)index, ZIP_FL_ENC_RAW);
      g_autofree char *tname = NULL;
      g_autofree char *ctx = NULL;
      zip_stat_t stat;
      zip_file_t *zip_file;
      DwTensor *tensor;

      if (!mname || !g_str_has_suffix (mname, ".npy"))
        continue;
      tname = g_strndup (mname, strlen (mname) - 4);
      if (!dw_batch_tensor_wanted (tname))
        continue;
      ctx = g_strdup_printf ("member %s", mname);
      if (!dw_batch_zip_stat_member (za, (zip_uint64_t)index, src, ctx, &stat, error))
        goto out;
      if (!g_hash_table_add (seen, g_strdup (tname)))
        {
          /* numpy's np.load would silently take one of them: refuse to guess which */
          dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                              "%s: two members have the same name", ctx);
          goto out;
        }
      /* the limit holds for the batch, not per member: a 3.9 MB deflate bomb of two 3.9 GB
       * members each under the limit reached 7.9 GB */
      total += (guint64)stat.size;
      if (total > dw_batch_reader_get_max_bytes ())
        {
          dw_batch_set_error (
            error, DW_BATCH_ERROR_TOO_LARGE, src->name,
            "%s: %" G_GUINT64_FORMAT " bytes, with the members before it %" G_GUINT64_FORMAT
            ", exceed the reader's limit of %" G_GUINT64_FORMAT " bytes for a batch",
            ctx, (guint64)stat.size, total, dw_batch_reader_get_max_bytes ());
          goto out;
        }
      zip_file = zip_fopen_index (za, (zip_uint64_t)index, 0);
      if (!zip_file)
        {
          dw_batch_zip_fail (error, src->name, ctx, zip_get_error (za), src->size);
          goto out;
        }
      {
        /* an optional extra (token ids, rewards) that is not a plain array is left out */
        GError *local = NULL;
        tensor = npz_member_header (src->name, ctx, tname, zip_file, stat.size, &local);
        if (!tensor && dw_batch_tensor_optional (tname))
          {
            g_clear_error (&local);
            continue;
          }
        if (!tensor)
          {
            g_propagate_error (error, local);
            goto out;
          }
      }
      g_ptr_array_add (tensors, tensor);
    }
  batch = dw_batch_from_tensors (src->name, tensors, dw_step_from_name (path ? path : src->name),
                                 NULL, error);
out:
  g_ptr_array_set_size (tensors, 0); /* closes the members before the archive */
  zip_discard (za);
  return batch;
}

/* ------------------------------------------------------------------------------------------ */
/* Writers                                                                                    */

static const char *
npy_descr (DwDType dtype)
{
  switch (dtype)
    {
    case DW_DTYPE_F16:
      return "<f2";
    case DW_DTYPE_F32:
      return "<f4";
    case DW_DTYPE_F64:
      return "<f8";
    case DW_DTYPE_BOOL:
      return "|b1";
    case DW_DTYPE_U8:
      return "|u1";
    case DW_DTYPE_I8:
      return "|i1";
    case DW_DTYPE_I16:
      return "<i2";
    case DW_DTYPE_U16:
      return "<u2";
    case DW_DTYPE_I32:
      return "<i4";
    case DW_DTYPE_U32:
      return "<u4";
    case DW_DTYPE_I64:
      return "<i8";
    case DW_DTYPE_U64:
      return "<u8";
    case DW_DTYPE_BF16:
    case DW_N_DTYPES:
    default:
      return NULL;
    }
}

GBytes *
dw_npy_encode (const void *data, DwDType dtype, guint ndim, const guint64 *shape)
{
  GString *header = g_string_new (NULL);
  GByteArray *out;
  guint64 count = 1;
  gsize total;

  g_string_append_printf (header, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                          npy_descr (dtype));
  for (guint index = 0; index < ndim; index++)
    {
      g_string_append_printf (header, "%" G_GUINT64_FORMAT "%s", shape[index],
                              ndim == 1 || index + 1 < ndim ? ", " : "");
      count *= shape[index];
    }
  if (ndim == 1)
    g_string_truncate (header, header->len - 1);
  g_string_append (header, "), }");
  /* pad with spaces so that 10 + len + 1 ('\n') is a multiple of 64 */
  total = 10 + header->len + 1;
  while (total % 64)
    g_string_append_c (header, ' '), total++;
  g_string_append_c (header, '\n');

  out = g_byte_array_sized_new ((guint)(10 + header->len + count * dw_dtype_size (dtype)));
  g_byte_array_append (out, (const guint8 *)"\x93NUMPY\x01\x00", 8);
  {
    guint8 header_len[2] = { (guint8)(header->len & 0xff), (guint8)(header->len >> 8) };
    g_byte_array_append (out, header_len, 2);
  }
  g_byte_array_append (out, (const guint8 *)header->str, (guint)header->len);
  g_byte_array_append (out, data, (guint)(count * dw_dtype_size (dtype)));
  g_string_free (header, TRUE);
  return g_byte_array_free_to_bytes (out);
}

static gboolean
npz_add (zip_t *za, const char *member, GBytes *bytes, gboolean compress, GError **error,
         const char *path, GPtrArray *keep)
{
  gsize len;
  const void *data = g_bytes_get_data (bytes, &len);
  zip_source_t *source = zip_source_buffer (za, data, len, 0);
  zip_int64_t idx;

  g_ptr_array_add (keep, bytes);
  if (!source || (idx = zip_file_add (za, member, source, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8)) < 0)
    {
      if (source)
        zip_source_free (source);
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "adding %s: %s", member,
                          zip_strerror (za));
      return FALSE;
    }
  if (zip_set_file_compression (za, (zip_uint64_t)idx, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                                compress ? 6 : 0)
      < 0)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "compressing %s: %s", member,
                          zip_strerror (za));
      return FALSE;
    }
  return TRUE;
}

gboolean
dw_batch_write_npz (const DwBatch *batch, const char *path, gboolean compress, GError **error)
{
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify)g_bytes_unref);
  g_autofree char *tmp = g_strdup_printf ("%s.tmp-%d", path, (int)getpid ());
  guint64 shape[2] = { batch->rows, batch->cols };
  int zerr = 0;
  zip_t *archive;
  gboolean success;

  g_return_val_if_fail (batch != NULL && path != NULL, FALSE);
  if (!npy_descr (batch->mask_dtype) || !npy_descr (batch->lp_dtype))
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_UNSUPPORTED_DTYPE, path,
                          "numpy has no dtype for %s", dw_dtype_name (batch->mask_dtype));
      return FALSE;
    }
  archive = zip_open (tmp, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
  if (!archive)
    {
      zip_error_t zip_error;
      zip_error_init_with_code (&zip_error, zerr);
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", zip_error_strerror (&zip_error));
      zip_error_fini (&zip_error);
      return FALSE;
    }
  success = npz_add (archive, "old_log_prob.npy",
                     dw_npy_encode (batch->old_log_prob, batch->lp_dtype, 2, shape), compress,
                     error, path, keep)
            && npz_add (archive, "rollout_log_prob.npy",
                        dw_npy_encode (batch->rollout_log_prob, batch->lp_dtype, 2, shape),
                        compress, error, path, keep)
            && npz_add (archive, "response_mask.npy",
                        dw_npy_encode (batch->response_mask, batch->mask_dtype, 2, shape), compress,
                        error, path, keep)
            && (!batch->advantages
                || npz_add (archive, "advantages.npy",
                            dw_npy_encode (batch->advantages, batch->lp_dtype, 2, shape), compress,
                            error, path, keep));
  if (!success)
    {
      zip_discard (archive);
      g_unlink (tmp);
      return FALSE;
    }
  if (zip_close (archive) < 0)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", zip_strerror (archive));
      zip_discard (archive);
      g_unlink (tmp);
      return FALSE;
    }
  if (g_rename (tmp, path) < 0)
    {
      int saved = errno;
      g_unlink (tmp);
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}
