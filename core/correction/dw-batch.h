/* dw-batch.h — one rollout batch in memory, as the correction core consumes it
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc only: this header is shared by core/correction (no GLib) and the batch readers.
 * Layout is padded and row-major: element (b, t) of an array is at index b * cols + t.
 * Readers convert packed (cu_seqlens) layouts and BF16/F16 log-probs to this form.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

  typedef enum
  {
    DW_DTYPE_F32 = 0,
    DW_DTYPE_F64,
    DW_DTYPE_BF16, /* only as a source dtype: readers widen it to F32 and set DW_BATCH_LOSSY */
    DW_DTYPE_F16,  /* idem */
    DW_DTYPE_BOOL,
    DW_DTYPE_U8,
    DW_DTYPE_I8,
    DW_DTYPE_I16,
    DW_DTYPE_I32,
    DW_DTYPE_I64,
    DW_DTYPE_U16,
    DW_DTYPE_U32,
    DW_DTYPE_U64,
    DW_N_DTYPES
  } DwDType;

  typedef enum
  {
    DW_BATCH_LOSSY_LOGPROBS = 1 << 0, /* log-probs were BF16/F16 on disk: decisions may differ */
    DW_BATCH_PACKED_SOURCE = 1 << 1,  /* source was packed (cu_seqlens) and was padded on read */
  } DwBatchFlags;

  typedef struct
  {
    size_t rows;             /* B */
    size_t cols;             /* T (padded length) */
    DwDType lp_dtype;        /* DW_DTYPE_F32 or DW_DTYPE_F64: dtype of both log-prob arrays */
    void *old_log_prob;      /* [B,T] log pi_train (pi_old in decoupled mode, pi_theta in bypass) */
    void *rollout_log_prob;  /* [B,T] log pi_rollout */
    DwDType mask_dtype;      /* BOOL, U8, I8..I64, F32 or F64 */
    void *response_mask;     /* [B,T] */
    void *advantages;        /* optional [B,T] in lp_dtype, or NULL */
    uint32_t flags;          /* DwBatchFlags */
    int64_t step;            /* training step, or -1 when unknown */
    DwDType source_lp_dtype; /* dtype the log-probs had on disk (F32, F64, BF16, F16) */
    int64_t *token_ids;      /* optional [B,T] response token ids (malloc'd), or NULL */
    double *rewards;         /* optional [B] per-sequence reward (malloc'd), or NULL */
  } DwBatch;

  /* Size in bytes of one element of @dtype (BF16/F16: 2). */
  size_t dw_dtype_size (DwDType dtype);
  /* numpy-style name: "float32", "float64", "bfloat16", "float16", "bool", "uint8", "int64", … */
  const char *dw_dtype_name (DwDType dtype);

  /* A new batch with zero-filled arrays (advantages not allocated); NULL if out of memory or
   * rows * cols overflows. */
  DwBatch *dw_batch_new (size_t rows, size_t cols, DwDType lp_dtype, DwDType mask_dtype);
  void dw_batch_free (DwBatch *batch);

  /* Value of the mask at (b, t) as a double (bool/ints/floats), and as a boolean (!= 0). */
  double dw_batch_mask_value (const DwBatch *batch, size_t index);

#ifdef __cplusplus
}
#endif
