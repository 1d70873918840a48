/* dw-batch-assemble.c — tensors found in a file → the padded DwBatch (roles and aliases, dtype and
 * shape checks, padded/packed copies)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-batch-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Tensors → batch                                                                            */

typedef enum
{
  ROLE_OLD,
  ROLE_ROLLOUT,
  ROLE_MASK,
  ROLE_ADV,
  ROLE_CU,
  ROLE_TOKENS,
  ROLE_REWARD,
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
  /* optional, for the token drill-down: verl's response token ids, a reward per sequence */
  [ROLE_TOKENS] = { "token_ids", "responses", NULL },
  [ROLE_REWARD] = { "rewards", "reward", NULL },
};

gboolean
dw_batch_tensor_wanted (const char *name)
{
  for (int role = 0; role < N_ROLES; role++)
    for (int letter = 0; role_names[role][letter]; letter++)
      if (strcmp (name, role_names[role][letter]) == 0)
        return TRUE;
  return FALSE;
}

gboolean
dw_batch_tensor_optional (const char *name)
{
  for (int role = ROLE_TOKENS; role <= ROLE_REWARD; role++)
    for (int letter = 0; role_names[role][letter]; letter++)
      if (strcmp (name, role_names[role][letter]) == 0)
        return TRUE;
  return FALSE;
}

static DwTensor *
find_role (GPtrArray *tensors, Role role)
{
  /* canonical name first, then aliases in order */
  for (int letter = 0; role_names[role][letter]; letter++)
    for (guint index = 0; index < tensors->len; index++)
      {
        DwTensor *tensor = g_ptr_array_index (tensors, index);
        if (strcmp (tensor->name, role_names[role][letter]) == 0)
          return tensor;
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
  for (guint index = 0; index < a->ndim; index++)
    if (a->shape[index] != b->shape[index])
      return FALSE;
  return TRUE;
}

static gboolean
shape_error (GError **error, const char *name, const DwTensor *t, const DwTensor *ref)
{
  g_autofree char *first = dw_shape_to_string (t->ndim, t->shape);
  g_autofree char *ref_shape = dw_shape_to_string (ref->ndim, ref->shape);
  dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                      "%s: shape %s does not match %s %s", t->where, first, ref->name, ref_shape);
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
  gsize src_size = dw_dtype_size (t->dtype), dst_size = dw_dtype_size (dd);
  gboolean fortran = t->fortran_order && t->ndim == 2 && rows > 1 && cols > 1;

  if (!t->data && t->dtype == dd && (!t->big_endian || src_size == 1) && !fortran
      && t->n_elems == rows * cols)
    return t->fill (t, dst, 0, t->n_elems, error); /* straight from the file into the batch */
  if (!dw_tensor_load (t, error))
    return FALSE;
  if (t->ndim == 1 && t->shape[0] == rows && rows * cols != t->n_elems)
    {
      /* [B] per-sequence value broadcast over its row (JSONL-style scalar advantage) */
      for (gsize row = 0; row < rows; row++)
        for (gsize col = 0; col < cols; col++)
          dw_convert ((guint8 *)dst + (row * cols + col) * dst_size, dd, t->data + row * src_size,
                      t->dtype, t->big_endian, 1);
      return TRUE;
    }
  if (fortran)
    {
      for (gsize row = 0; row < rows; row++)
        for (gsize col = 0; col < cols; col++)
          dw_convert ((guint8 *)dst + (row * cols + col) * dst_size, dd,
                      t->data + (col * rows + row) * src_size, t->dtype, t->big_endian, 1);
      return TRUE;
    }
  dw_convert (dst, dd, t->data, t->dtype, t->big_endian, rows * cols);
  return TRUE;
}

static gboolean
copy_packed (void *dst, DwDType dd, DwTensor *t, const guint64 *cu, gsize rows, gsize cols,
             GError **error)
{
  gsize src_size = dw_dtype_size (t->dtype), dst_size = dw_dtype_size (dd);

  if (!t->data && t->dtype == dd && (!t->big_endian || src_size == 1) && t->n_elems == cu[rows])
    {
      /* row by row straight from the file into the padded batch */
      for (gsize row = 0; row < rows; row++)
        if (cu[row + 1] > cu[row]
            && !t->fill (t, (guint8 *)dst + row * cols * dst_size, cu[row], cu[row + 1] - cu[row],
                         error))
          return FALSE;
      return cu[rows] > 0 || t->fill (t, dst, 0, 0, error);
    }
  if (!dw_tensor_load (t, error))
    return FALSE;
  if (t->ndim == 1 && t->shape[0] == rows && cu[rows] != rows)
    {
      for (gsize row = 0; row < rows; row++)
        for (guint64 index = cu[row]; index < cu[row + 1]; index++)
          dw_convert ((guint8 *)dst + (row * cols + (index - cu[row])) * dst_size, dd,
                      t->data + row * src_size, t->dtype, t->big_endian, 1);
      return TRUE;
    }
  for (gsize row = 0; row < rows; row++)
    dw_convert ((guint8 *)dst + row * cols * dst_size, dd, t->data + cu[row] * src_size, t->dtype,
                t->big_endian, cu[row + 1] - cu[row]);
  return TRUE;
}

static gboolean
read_cu_seqlens (const char *name, const DwTensor *cu_t, guint64 n_tokens, guint64 **cu_out,
                 GError **error)
{
  g_autofree guint64 *bounds = NULL;
  guint64 n_bounds;

  if (!is_int (cu_t->dtype) || cu_t->ndim != 1 || cu_t->shape[0] < 1)
    {
      g_autofree char *shape = dw_shape_to_string (cu_t->ndim, cu_t->shape);
      dw_batch_set_error (error,
                          is_int (cu_t->dtype) ? DW_BATCH_ERROR_SHAPE_MISMATCH
                                               : DW_BATCH_ERROR_UNSUPPORTED_DTYPE,
                          name, "%s: cu_seqlens must be a 1-D integer array [B+1], got %s %s",
                          cu_t->where, dw_dtype_name (cu_t->dtype), shape);
      return FALSE;
    }
  n_bounds = cu_t->shape[0];
  bounds = g_new (guint64, n_bounds);
  for (guint64 index = 0; index < n_bounds; index++)
    {
      double v = dw_decode_element (cu_t->data + index * dw_dtype_size (cu_t->dtype), cu_t->dtype,
                                    cu_t->big_endian);
      if (!(v >= 0 && v <= (double)n_tokens) || (index == 0 && v != 0)
          || (index > 0 && (guint64)v < bounds[index - 1]))
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, name,
                              "%s: cu_seqlens[%" G_GUINT64_FORMAT "] = %.17g: cu_seqlens must "
                              "start at 0, never decrease and stay <= %" G_GUINT64_FORMAT,
                              cu_t->where, index, v, n_tokens);
          return FALSE;
        }
      bounds[index] = (guint64)v;
    }
  if (bounds[n_bounds - 1] != n_tokens)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                          "%s: cu_seqlens ends at %" G_GUINT64_FORMAT
                          " but the packed tensors hold %" G_GUINT64_FORMAT " tokens",
                          cu_t->where, bounds[n_bounds - 1], n_tokens);
      return FALSE;
    }
  *cu_out = g_steal_pointer (&bounds);
  return TRUE;
}

static gboolean
check_size (const char *name, guint64 rows, guint64 cols, DwDType lp, DwDType mask, gboolean adv,
            GError **error)
{
  guint64 per = 2 * dw_dtype_size (lp) + dw_dtype_size (mask) + (adv ? dw_dtype_size (lp) : 0);
  guint64 count;
  guint64 shape[2] = { rows, cols };

  if (!dw_shape_product (2, shape, per, &count) || count * per > dw_batch_reader_get_max_bytes ())
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, name,
                          "a batch of [%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                          "] needs more than the reader's limit of %" G_GUINT64_FORMAT " bytes",
                          rows, cols, dw_batch_reader_get_max_bytes ());
      return FALSE;
    }
  return TRUE;
}

/* Token ids ([B,T] like the log-probs, or packed [N]) and rewards ([B]) when present and
 * well-formed; they are extras the correction does not need, so malformed ones are left out. */
static gboolean
copy_extras (const char *name, DwBatch *batch, DwTensor *tok, DwTensor *rew, const DwTensor *old,
             const guint64 *cu, GError **error)
{
  gsize rows = batch->rows, cols = batch->cols;

  if (tok)
    {
      /* optional: integers shaped like the log-probs, else left out */
      if (!is_int (tok->dtype) || !same_shape (tok, old) || (tok->fortran_order && tok->ndim > 1)
          || !dw_tensor_load (tok, NULL))
        tok = NULL;
    }
  if (tok)
    {
      gsize elem_size = dw_dtype_size (tok->dtype);
      batch->token_ids = g_malloc0 (MAX (rows * cols, 1) * sizeof (gint64));
      for (gsize row = 0; row < rows; row++)
        {
          guint64 start = cu ? cu[row] : row * cols, len = cu ? cu[row + 1] - cu[row] : cols;
          for (guint64 token = 0; token < len; token++)
            batch->token_ids[row * cols + token] = (gint64)dw_decode_element (
              tok->data + (start + token) * elem_size, tok->dtype, tok->big_endian);
        }
    }
  if (rew)
    {
      gsize elem_size = dw_dtype_size (rew->dtype);
      /* optional: one number per sequence, else left out */
      if (rew->dtype == DW_DTYPE_BOOL || rew->n_elems != rows || rew->ndim > 2
          || !dw_tensor_load (rew, NULL))
        return TRUE;
      batch->rewards = g_malloc0 (MAX (rows, 1) * sizeof (double));
      for (gsize row = 0; row < rows; row++)
        batch->rewards[row]
          = dw_decode_element (rew->data + row * elem_size, rew->dtype, rew->big_endian);
    }
  return TRUE;
}

/* The tensors a batch is assembled from, by role */
typedef struct
{
  DwTensor *old, *roll, *mask, *adv, *cu;
} AssembleRoles;

/* a problem of a tensor's data (from its source, with or without the file's name) under @name */
static DwBatch *
assemble_fail (const char *name, GError *local, GError **error)
{
  /* local carries its own "NAME: " prefix already when it comes from a DwSource */
  if (g_str_has_prefix (local->message, name))
    g_propagate_error (error, g_error_copy (local));
  else
    dw_batch_set_error (error, (DwBatchError)local->code, name, "%s", local->message);
  return NULL;
}

/* phase 1: the three required tensors are there, and every dtype can hold its role */
static gboolean
assemble_check_roles (const char *name, GPtrArray *tensors, const AssembleRoles *roles,
                      const char *layout, GError **error)
{
  if (!roles->old || !roles->roll || !roles->mask)
    {
      g_autoptr (GString) found = g_string_new (NULL);
      for (guint index = 0; index < tensors->len; index++)
        g_string_append_printf (found, "%s%s", index ? ", " : "",
                                ((DwTensor *)g_ptr_array_index (tensors, index))->name);
      dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, name,
                          "no tensor '%s' (required: old_log_prob, rollout_log_prob, "
                          "response_mask; found: %s)",
                          !roles->old    ? "old_log_prob"
                          : !roles->roll ? "rollout_log_prob"
                                         : "response_mask",
                          found->len ? found->str : "none");
      return FALSE;
    }
  if (!check_lp_dtype (name, roles->old, error) || !check_lp_dtype (name, roles->roll, error))
    return FALSE;
  const DwTensor *mask = roles->mask, *adv = roles->adv;
  if (!is_float (mask->dtype) && !is_int (mask->dtype) && mask->dtype != DW_DTYPE_BOOL)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_UNSUPPORTED_DTYPE, name,
                          "%s: dtype %s cannot hold a mask", mask->where,
                          dw_dtype_name (mask->dtype));
      return FALSE;
    }
  if (adv && !is_float (adv->dtype) && !is_int (adv->dtype))
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_UNSUPPORTED_DTYPE, name,
                          "%s: dtype %s cannot hold advantages", adv->where,
                          dw_dtype_name (adv->dtype));
      return FALSE;
    }
  if (layout && strcmp (layout, "packed") == 0 && !roles->cu)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, name,
                          "layout is 'packed' but there is no cu_seqlens tensor");
      return FALSE;
    }
  return TRUE;
}

/* phase 2: [rows, cols] from the shapes (packed: from cu_seqlens, read into *@cu); every tensor
 * agrees with old_log_prob's shape (advantages may also be one per row) */
static gboolean
assemble_shape (const char *name, const AssembleRoles *roles, guint64 **cu, guint64 *rows,
                guint64 *cols, GError **local, GError **error)
{
  const DwTensor *old = roles->old;
  if (roles->cu && old->ndim != 1)
    {
      g_autofree char *shape = dw_shape_to_string (old->ndim, old->shape);
      dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                          "%s: packed layout (cu_seqlens present) needs 1-D [N] tensors, "
                          "got %s",
                          old->where, shape);
      return FALSE;
    }
  if (!roles->cu && old->ndim != 1 && old->ndim != 2)
    {
      g_autofree char *shape = dw_shape_to_string (old->ndim, old->shape);
      dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                          "%s: log-probs must be [B,T] (or packed [N] with cu_seqlens), got "
                          "%s",
                          old->where, shape);
      return FALSE;
    }
  if (!same_shape (roles->roll, old))
    return shape_error (error, name, roles->roll, old), FALSE;
  if (!same_shape (roles->mask, old))
    return shape_error (error, name, roles->mask, old), FALSE;
  if (roles->cu)
    {
      if (!dw_tensor_load (roles->cu, local))
        return FALSE;
      if (!read_cu_seqlens (name, roles->cu, old->shape[0], cu, error))
        return FALSE;
      *rows = roles->cu->shape[0] - 1;
      *cols = 0;
      for (guint64 row = 0; row < *rows; row++)
        *cols = MAX (*cols, (*cu)[row + 1] - (*cu)[row]);
    }
  else if (old->ndim == 2)
    *rows = old->shape[0], *cols = old->shape[1];
  else
    *rows = 1, *cols = old->shape[0];
  const DwTensor *adv = roles->adv;
  if (adv && !same_shape (adv, old) && !(adv->ndim == 1 && adv->shape[0] == *rows))
    return shape_error (error, name, adv, old), FALSE;
  return TRUE;
}

/* phase 3: the batch's arrays, and the log-probs' source dtype (bf16/f16 flagged lossy) */
static DwBatch *
assemble_allocate (const char *name, const AssembleRoles *roles, guint64 rows, guint64 cols,
                   DwDType lp, DwDType md, GError **error)
{
  const DwTensor *old = roles->old, *roll = roles->roll;
  if (!check_size (name, rows, cols, lp, md, roles->adv != NULL, error))
    return NULL;
  DwBatch *batch = dw_batch_new (rows, cols, lp, md);
  if (batch && roles->adv)
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
  return batch;
}

/* phase 4: the tensors' values into the batch, packed rows unpacked */
static gboolean
assemble_copy (DwBatch *batch, const AssembleRoles *roles, const guint64 *cu, GError **local)
{
  const guint64 rows = batch->rows, cols = batch->cols;
  const DwDType lp_dtype = batch->lp_dtype, mask_dtype = batch->mask_dtype;
  if (cu)
    {
      batch->flags |= DW_BATCH_PACKED_SOURCE;
      return copy_packed (batch->old_log_prob, lp_dtype, roles->old, cu, rows, cols, local)
             && copy_packed (batch->rollout_log_prob, lp_dtype, roles->roll, cu, rows, cols, local)
             && copy_packed (batch->response_mask, mask_dtype, roles->mask, cu, rows, cols, local)
             && (!roles->adv
                 || copy_packed (batch->advantages, lp_dtype, roles->adv, cu, rows, cols, local));
    }
  return copy_padded (batch->old_log_prob, lp_dtype, roles->old, rows, cols, local)
         && copy_padded (batch->rollout_log_prob, lp_dtype, roles->roll, rows, cols, local)
         && copy_padded (batch->response_mask, mask_dtype, roles->mask, rows, cols, local)
         && (!roles->adv
             || copy_padded (batch->advantages, lp_dtype, roles->adv, rows, cols, local));
}

DwBatch *
dw_batch_from_tensors (const char *name, GPtrArray *tensors, gint64 step, const char *layout,
                       GError **error)
{
  g_autoptr (DwBatch) batch = NULL;
  g_autoptr (GError) local = NULL;
  g_autofree guint64 *cu_seqlens = NULL;
  guint64 rows = 0, cols = 0;
  const AssembleRoles roles = { find_role (tensors, ROLE_OLD), find_role (tensors, ROLE_ROLLOUT),
                                find_role (tensors, ROLE_MASK), find_role (tensors, ROLE_ADV),
                                find_role (tensors, ROLE_CU) };

  if (!assemble_check_roles (name, tensors, &roles, layout, error))
    return NULL;
  const DwDType lp = (roles.old->dtype == DW_DTYPE_F64 || roles.roll->dtype == DW_DTYPE_F64)
                       ? DW_DTYPE_F64
                       : DW_DTYPE_F32;
  const DwDType md = (roles.mask->dtype == DW_DTYPE_F16 || roles.mask->dtype == DW_DTYPE_BF16)
                       ? DW_DTYPE_F32
                       : roles.mask->dtype;
  if (!assemble_shape (name, &roles, &cu_seqlens, &rows, &cols, &local, error))
    return local ? assemble_fail (name, local, error) : NULL;
  batch = assemble_allocate (name, &roles, rows, cols, lp, md, error);
  if (!batch)
    return NULL;
  batch->step = step;
  if (!assemble_copy (batch, &roles, cu_seqlens, &local)
      || !copy_extras (name, batch, find_role (tensors, ROLE_TOKENS),
                       find_role (tensors, ROLE_REWARD), roles.old, cu_seqlens, &local))
    return assemble_fail (name, local, error);
  return g_steal_pointer (&batch);
}
