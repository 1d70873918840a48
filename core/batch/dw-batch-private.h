/* dw-batch-private.h — shared pieces of the batch readers (not installed, not for other modules)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

#include "dw-batch-reader.h"

G_BEGIN_DECLS

#define DW_TENSOR_MAX_DIMS 8

/* Where the bytes come from: memory, or a file descriptor read with pread (never mmap: a file
 * that shrinks while mapped would raise SIGBUS). */
typedef struct
{
  const char *name; /* for messages */
  const guint8 *mem;
  int fd; /* -1 in memory mode */
  guint64 size;
} DwSource;

gboolean dw_source_read (const DwSource *src, guint64 offset, void *buf, gsize n, const char *what,
                         GError **error);

/* One array as found in the file. @data holds exactly n_elems * dtype size bytes. */
typedef struct _DwTensor
{
  char *name;
  char *where; /* "member old_log_prob.npy: offset 80", "tensor 'old_log_prob'", … */
  DwDType dtype;
  gboolean big_endian;
  gboolean fortran_order;
  guint ndim;
  guint64 shape[DW_TENSOR_MAX_DIMS];
  guint64 n_elems;
  const guint8 *data; /* points into @owned or the source; NULL while lazy */
  gpointer owned;
  /* Lazy data: while @data is NULL, @fill writes elements [start, start + n) to @dst. Calls
   * cover [0, n_elems) in increasing order (streams such as a deflate member need that); the
   * call that reaches n_elems also checks the end (CRC-32 of a zip member). Same-dtype arrays
   * go straight from the file into the batch this way, row by row for packed layouts. */
  gboolean (*fill) (struct _DwTensor *t, guint8 *dst, guint64 start, guint64 n, GError **error);
  gpointer fill_ctx;
  guint64 fill_offset;
  GDestroyNotify fill_free;
} DwTensor;

/* Makes @t->data available (runs the lazy fill into a new buffer). */
gboolean dw_tensor_load (DwTensor *t, GError **error);
/* Lazy fill from a DwSource (fill_ctx) at fill_offset. */
gboolean dw_tensor_fill_from_source (DwTensor *t, guint8 *dst, guint64 start, guint64 n,
                                     GError **error);

DwTensor *dw_tensor_new (const char *name, const char *where);
void dw_tensor_free (DwTensor *tensor);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwTensor, dw_tensor_free)

/* "[3,4]" */
char *dw_shape_to_string (guint ndim, const guint64 *shape);
/* Product of @shape into @n_elems; FALSE on overflow past G_MAXUINT64 / @elem_size. */
gboolean dw_shape_product (guint ndim, const guint64 *shape, gsize elem_size, guint64 *n_elems);

/* Step number from a file name: "step_000123.npz" → 123, "17.jsonl" → 17, else -1. */
gint64 dw_step_from_name (const char *name);

/* Is @name one of the tensors the batch uses (canonical name or alias)? */
gboolean dw_batch_tensor_wanted (const char *name);
/* …and one the batch can do without (token ids, rewards): a malformed one is left out. */
gboolean dw_batch_tensor_optional (const char *name);

/* Builds the padded batch from tensors (by canonical name or alias): validates dtypes and
 * shapes, pads packed layouts, converts. @step may be -1. Takes nothing from @tensors. */
DwBatch *dw_batch_from_tensors (const char *name, GPtrArray *tensors, gint64 step,
                                const char *layout, GError **error);

/* Convert @n elements from (@src, @src_dtype, @swap) to (@dst, @dst_dtype). */
void dw_convert (void *dst, DwDType dst_dtype, const guint8 *src, DwDType src_dtype, gboolean swap,
                 gsize n);
double dw_half_to_double (guint16 h);
/* One element at @p as a double (@swap: byte-swap first). */
double dw_decode_element (const guint8 *p, DwDType dtype, gboolean swap);
float dw_bf16_to_float (guint16 b);

/* Parses one .npy array of @len bytes at @src offset @base ("where" prefixes messages). */
/* @ctx ("member x.npy") prefixes places in messages, or NULL. */
DwTensor *dw_npy_parse (const DwSource *src, guint64 base, guint64 len, const char *tensor_name,
                        const char *ctx, GError **error);
GBytes *dw_npy_encode (const void *data, DwDType dtype, guint ndim, const guint64 *shape);
gboolean dw_npy_dtype_from_descr (const char *descr, DwDType *dtype, gboolean *big_endian);

DwBatch *dw_npz_read (const DwSource *src, const char *path, GError **error);
DwBatch *dw_npy_read (const DwSource *src, GError **error);
DwBatch *dw_safetensors_read (const DwSource *src, GError **error);
DwBatch *dw_jsonl_read (const DwSource *src, GError **error);

/* Error helper: "NAME: <formatted>" */
void dw_batch_set_error (GError **error, DwBatchError code, const char *name, const char *format,
                         ...) G_GNUC_PRINTF (4, 5);

/* Atomic write of @contents to @path (temp file + rename). */
gboolean dw_batch_write_file (const char *path, const void *contents, gsize len, GError **error);

G_END_DECLS
