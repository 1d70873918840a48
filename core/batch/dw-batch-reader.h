/* dw-batch-reader.h — read and write rollout batches (npz/npy, safetensors, JSONL, torch .pt dumps)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Canonical tensor names and layouts: ../shared/docs/FORMATS.md §4.4. Every reader returns a
 * padded row-major DwBatch (see dw-batch.h): packed (cu_seqlens) sources are padded, BF16/F16
 * log-probs are widened to F32 and flagged DW_BATCH_LOSSY_LOGPROBS, the mask keeps its dtype.
 *
 * Errors are in DW_BATCH_ERROR and name the file and the place ("step_1.npz: member
 * old_log_prob.npy: offset 80: …", "x.safetensors: header offset 8: …", "x.jsonl: line 3,
 * key old_log_prob: …"). No reader allocates more than the data really present in the input
 * (plus the padded batch itself), and none allocates more than dw_batch_reader_get_max_bytes().
 */
#pragma once

#include <glib.h>

#include "dw-batch.h"

G_BEGIN_DECLS

#define DW_BATCH_ERROR (dw_batch_error_quark ())

typedef enum
{
  DW_BATCH_ERROR_IO,                /* cannot open/read the file */
  DW_BATCH_ERROR_UNKNOWN_FORMAT,    /* not npz, npy, safetensors nor JSONL */
  DW_BATCH_ERROR_TRUNCATED,         /* the data ends before what the headers declare */
  DW_BATCH_ERROR_CORRUPT,           /* malformed header, archive, JSON, offsets, … */
  DW_BATCH_ERROR_UNSUPPORTED_DTYPE, /* a dtype the batch cannot hold (e.g. int log-probs) */
  DW_BATCH_ERROR_SHAPE_MISMATCH,    /* tensors disagree in shape or length */
  DW_BATCH_ERROR_MISSING_TENSOR,    /* a required tensor is absent */
  DW_BATCH_ERROR_TOO_LARGE,         /* declared sizes exceed the reader's limit */
} DwBatchError;

typedef enum
{
  DW_BATCH_FORMAT_UNKNOWN = 0,
  DW_BATCH_FORMAT_NPZ,
  DW_BATCH_FORMAT_NPY,
  DW_BATCH_FORMAT_SAFETENSORS,
  DW_BATCH_FORMAT_JSONL,
  DW_BATCH_FORMAT_TORCH, /* torch.save zip: slime / miles dumps */
} DwBatchFormat;

GQuark dw_batch_error_quark (void);

/* Format by content: zip magic → npz, \x93NUMPY → npy, safetensors header length + '{' →
 * safetensors, '{' (after optional blank space) → JSONL. @len may be a prefix of the file
 * (16 bytes suffice). */
DwBatchFormat dw_batch_detect_format (const guint8 *data, gsize len);
const char *dw_batch_format_name (DwBatchFormat format);

/* Reads one batch. A directory or a sibling set "X.<tensor>.npy" is read as one batch: @path
 * may be the directory holding <tensor>.npy files, or any one "X.<tensor>.npy" file whose
 * siblings "X.rollout_log_prob.npy", "X.response_mask.npy", … exist; a lone .npy array that has
 * no siblings fails with DW_BATCH_ERROR_MISSING_TENSOR (use dw_batch_read_npy_array()). */
DwBatch *dw_batch_read_file (const char *path, GError **error);
/* Same from memory; @name_for_errors prefixes every message. Directories/siblings don't apply. */
DwBatch *dw_batch_read_bytes (const char *name_for_errors, const guint8 *data, gsize len,
                              GError **error);

/* One .npy array for inspection: returns its values widened to double (C order), its shape
 * and source dtype. */
double *dw_batch_read_npy_array (const char *path, guint *ndim, guint64 shape[8], DwDType *dtype,
                                 GError **error);

/* Largest in-memory batch (all arrays, bytes) a reader will build; default 4 GiB. */
guint64 dw_batch_reader_get_max_bytes (void);
void dw_batch_reader_set_max_bytes (guint64 max_bytes);

typedef enum
{
  DW_BATCH_WRITE_DEFAULT = 0,
  DW_BATCH_WRITE_PACKED = 1 << 0, /* safetensors: packed layout with cu_seqlens */
} DwBatchWriteFlags;

/* Canonical safetensors file (FORMATS.md §4.4): log-probs in the batch's lp_dtype, mask in its
 * dtype, advantages if present, __metadata__ with format, version, layout and step. Written to a
 * temporary file and renamed, so readers never see a half-written file. Packed: each row is cut
 * after its last non-zero mask element. */
gboolean dw_batch_write_safetensors (const DwBatch *batch, const char *path, GError **error);
gboolean dw_batch_write_safetensors_full (const DwBatch *batch, const char *path,
                                          DwBatchWriteFlags flags, GHashTable *extra_metadata,
                                          GError **error);
/* A slime v1 / miles dump is one file per rank, "{rollout_id}_{rank}.pt"; reading any of them
 * reads the whole set. FALSE for a rank file whose set has a lower rank beside it (the ingester
 * reads each set once, through its lowest rank); TRUE for every other path. */
gboolean dw_batch_slime_is_set_leader (const char *path);
/* The path of that lowest rank's file (a copy of @path when it is not a rank file). */
char *dw_batch_slime_set_leader (const char *path);

/* numpy .npz (stored, or deflate when @compress), members <name>.npy with .npy v1.0 headers. */
gboolean dw_batch_write_npz (const DwBatch *batch, const char *path, gboolean compress,
                             GError **error);
/* One sample per line, ragged (rows cut after their last non-zero mask element). */
gboolean dw_batch_write_jsonl (const DwBatch *batch, const char *path, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwBatch, dw_batch_free)

G_END_DECLS
