/* dw-batch-slime.c — slime's and miles' torch dumps (--dump-details D, --save-debug-train-data)
 * → one padded DwBatch per rollout
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Layouts (docs/FORMATS-BATCH.md §2, read from slime and miles sources):
 *   v2   D/train_data/{id}.pt = {format_version: 2, rollout_id, rank, samples: [{log_probs,
 *        rollout_log_probs, loss_masks, tokens, response_lengths, total_lengths, rewards, …}],
 *        dp_shards}; per-token fields already restored to the full response.
 *   v1   D/train_data/{id}_{rank}.pt = {rollout_id, rank, rollout_data: {column: [per local
 *        sample]}}, one file per rank; log_probs / rollout_log_probs / advantages hold the rank's
 *        context-parallel slice; miles adds cp_rank, cp_size, qkv_format.
 *   rollout  D/rollout_data/{id}.pt = {rollout_id, samples: [Sample.to_dict()]}: joined on the
 *        sample's position (v2 rollout_position) or index (sample_index / sample_indices).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dw-batch-slime.h"
#include "dw-batch-torch.h"

/* Per-token fields split by context parallelism in v1 dumps (slime actor.py / loss.py). */
static const char *const cp_fields[] = { "log_probs", "rollout_log_probs", "advantages" };

typedef struct
{
  double *old, *roll, *mask, *adv, *tokens;
  guint64 n_old, n_roll, n_mask, n_adv, n_tokens;
  DwDType old_dtype, roll_dtype;
  gint64 total, resp;
  double reward;
  gboolean has_reward;
  gint64 position; /* index in the rollout dump, or -1 */
  gint64 index;    /* sample.index, or -1 */
} Sample;

static void
dw_batch_slime_sample_clear (gpointer data)
{
  Sample *sample = data;
  g_free (sample->old);
  g_free (sample->roll);
  g_free (sample->mask);
  g_free (sample->adv);
  g_free (sample->tokens);
}

/* One sample's fields: a dict (v2, rollout dumps) or row @row of column lists (v1). */
typedef struct
{
  DwTorchFile *file;
  const DwPickleValue *dict;
  const DwPickleValue *columns;
  guint64 row;
  const char *prefix; /* "samples[3]" or "rollout_data" */
} Ref;

static const DwPickleValue *
dw_batch_slime_ref_value (const Ref *ref, const char *key)
{
  if (ref->dict)
    return dw_pickle_dict_lookup (ref->dict, key);
  return dw_pickle_seq_get (dw_pickle_dict_lookup (ref->columns, key), ref->row);
}

static gboolean
dw_batch_slime_ref_number (const Ref *ref, const char *key, double *out)
{
  const DwPickleValue *value;
  guint64 count;

  if (ref->dict)
    {
      value = dw_pickle_dict_lookup (ref->dict, key);
      if (dw_pickle_value_number (value, out))
        return TRUE;
      /* a one-element tensor (torch.tensor(1.0)) */
      if (dw_pickle_value_tensor (value) && dw_pickle_value_tensor (value)->numel == 1)
        {
          DwDType dtype;
          g_autofree double *numbers
            = dw_batch_torch_numbers (ref->file, value, key, &count, &dtype, NULL);
          if (numbers)
            *out = numbers[0];
          return numbers != NULL;
        }
      return FALSE;
    }
  return dw_pickle_seq_number (dw_pickle_dict_lookup (ref->columns, key), ref->row, out);
}

static char *
dw_batch_slime_ref_where (const Ref *ref, const char *key)
{
  if (ref->dict)
    return g_strdup_printf ("%s.%s", ref->prefix, key);
  return g_strdup_printf ("%s.%s[%" G_GUINT64_FORMAT "]", ref->prefix, key, ref->row);
}

/* An optional array field; FALSE only on error. */
static gboolean
dw_batch_slime_ref_array (const Ref *ref, const char *key, double **out, guint64 *n, DwDType *dtype,
                          GError **error)
{
  const DwPickleValue *value = dw_batch_slime_ref_value (ref, key);
  g_autofree char *where = NULL;

  *out = NULL;
  *n = 0;
  if (value == NULL || dw_pickle_value_kind (value) == DW_PICKLE_NONE)
    return TRUE;
  where = dw_batch_slime_ref_where (ref, key);
  *out = dw_batch_torch_numbers (ref->file, value, where, n, dtype, error);
  return *out != NULL;
}

static gboolean
dw_batch_slime_ref_int (const Ref *ref, const char *key, gint64 *out)
{
  double number;
  if (!dw_batch_slime_ref_number (ref, key, &number) || number != floor (number)
      || fabs (number) > 9e15)
    return FALSE;
  *out = (gint64)number;
  return TRUE;
}

/* Reads what a training sample holds. Lengths are checked later, after CP reassembly. */
static gboolean
dw_batch_slime_sample_read (const Ref *ref, Sample *s, GError **error)
{
  DwDType dtype;
  double idx;

  s->position = s->index = -1;
  if (!dw_batch_slime_ref_int (ref, "response_lengths", &s->resp) || s->resp < 0)
    {
      g_autofree char *where = dw_batch_slime_ref_where (ref, "response_lengths");
      g_autofree char *note = dw_batch_torch_refused_note (ref->file);
      dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, dw_batch_torch_get_name (ref->file),
                          "%s: missing or not a non-negative integer%s", where, note);
      return FALSE;
    }
  if (!dw_batch_slime_ref_int (ref, "total_lengths", &s->total))
    s->total = -1;
  if (!dw_batch_slime_ref_array (ref, "log_probs", &s->old, &s->n_old, &s->old_dtype, error)
      || !dw_batch_slime_ref_array (ref, "rollout_log_probs", &s->roll, &s->n_roll, &s->roll_dtype,
                                    error)
      || !dw_batch_slime_ref_array (ref, "loss_masks", &s->mask, &s->n_mask, &dtype, error)
      || !dw_batch_slime_ref_array (ref, "advantages", &s->adv, &s->n_adv, &dtype, error)
      || !dw_batch_slime_ref_array (ref, "tokens", &s->tokens, &s->n_tokens, &dtype, error))
    return FALSE;
  s->has_reward = dw_batch_slime_ref_number (ref, "rewards", &s->reward);
  if (dw_batch_slime_ref_number (ref, "rollout_position", &idx))
    s->position = (gint64)idx;
  if (dw_batch_slime_ref_number (ref, "sample_index", &idx)
      || dw_batch_slime_ref_number (ref, "sample_indices", &idx))
    s->index = (gint64)idx;
  if (s->total < 0 && s->tokens)
    s->total = (gint64)s->n_tokens;
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Context-parallel reassembly (slime cp_utils.get_logits_and_tokens_offset_with_cp)          */

typedef struct
{
  gint64 start[2], end[2]; /* response positions held by one CP rank, [start, end) */
} CpSlice;

static gboolean
dw_batch_slime_cp_slice (gint64 dw_batch_slime_chunk_base, gint64 total, gint64 resp, guint cp,
                         guint rank, CpSlice *out)
{
  gint64 prompt = total - resp;
  gint64 chunk = (dw_batch_slime_chunk_base + 2 * (gint64)cp - 1) / (2 * (gint64)cp);
  gint64 c[2][2] = { { rank * chunk, (rank + 1) * chunk },
                     { (2 * (gint64)cp - rank - 1) * chunk, (2 * (gint64)cp - rank) * chunk } };

  if (prompt < 1)
    return FALSE;
  for (int bound = 0; bound < 2; bound++)
    {
      gint64 first = MAX (c[bound][0], prompt - 1), last = MIN (c[bound][1], total - 1);
      if (first >= last)
        first = last = prompt - 1; /* slime slices an empty range */
      out->start[bound] = first - (prompt - 1);
      out->end[bound] = last - (prompt - 1);
    }
  return TRUE;
}

static guint64
dw_batch_slime_cp_slice_length (const CpSlice *sl)
{
  return (guint64)(sl->end[0] - sl->start[0] + sl->end[1] - sl->start[1]);
}

/* Rebuilds a response-long array from the slices of ranks 0..cp-1; FALSE if they do not fit. */
static double *
dw_batch_slime_cp_join (double *const *slices, const guint64 *lens, const CpSlice *sl, guint cp,
                        gint64 resp)
{
  g_autofree double *out = g_new0 (double, resp > 0 ? resp : 1);
  g_autofree guint8 *seen = g_new0 (guint8, resp > 0 ? resp : 1);

  for (guint rank = 0; rank < cp; rank++)
    {
      guint64 filled = 0;
      if (lens[rank] != dw_batch_slime_cp_slice_length (&sl[rank]) || (lens[rank] && !slices[rank]))
        return NULL;
      for (int part = 0; part < 2; part++)
        for (gint64 index = sl[rank].start[part]; index < sl[rank].end[part]; index++, filled++)
          {
            if (index < 0 || index >= resp || seen[index])
              return NULL;
            seen[index] = 1;
            out[index] = slices[rank][filled];
          }
    }
  for (gint64 index = 0; index < resp; index++)
    if (!seen[index])
      return NULL;
  return g_steal_pointer (&out);
}

/* ------------------------------------------------------------------------------------------ */
/* Samples → batch                                                                            */

static gboolean
dw_batch_slime_check_len (const char *name, guint64 row, const char *field, guint64 n, gint64 resp,
                          GError **error)
{
  if ((gint64)n == resp)
    return TRUE;
  dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                      "sample %" G_GUINT64_FORMAT ": %s has %" G_GUINT64_FORMAT
                      " values for a response of %" G_GINT64_FORMAT " tokens",
                      row, field, n, resp);
  return FALSE;
}

static DwDType
dw_batch_slime_wider_lp (DwDType a, DwDType b)
{
  static const DwDType order[] = { DW_DTYPE_BF16, DW_DTYPE_F16, DW_DTYPE_F32, DW_DTYPE_F64 };
  guint first_index = 0, second_index = 0;
  for (guint index = 0; index < G_N_ELEMENTS (order); index++)
    {
      if (order[index] == a)
        first_index = index;
      if (order[index] == b)
        second_index = index;
    }
  return order[MIN (first_index, second_index)];
}

static DwBatch *
dw_batch_slime_batch_from_samples (const char *name, GArray *samples, gint64 step, GError **error)
{
  g_autoptr (DwBatch) batch = NULL;
  guint64 rows = samples->len, cols = 0;
  gboolean any_f64 = FALSE, any_adv = FALSE, all_tokens = rows > 0, all_rewards = rows > 0;
  DwDType narrowest = DW_DTYPE_F64;

  for (guint64 row = 0; row < rows; row++)
    {
      Sample *s = &g_array_index (samples, Sample, row);
      if (!s->old || !s->roll)
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, name,
                              "sample %" G_GUINT64_FORMAT ": no %s (the dump needs log_probs "
                              "from the training engine and rollout_log_probs from the rollout "
                              "engine; run slime with the rollout engine's log-probs kept)",
                              row, !s->old ? "log_probs" : "rollout_log_probs");
          return NULL;
        }
      if (!dw_batch_slime_check_len (name, row, "log_probs", s->n_old, s->resp, error)
          || !dw_batch_slime_check_len (name, row, "rollout_log_probs", s->n_roll, s->resp, error)
          || (s->mask
              && !dw_batch_slime_check_len (name, row, "loss_masks", s->n_mask, s->resp, error))
          || (s->adv
              && !dw_batch_slime_check_len (name, row, "advantages", s->n_adv, s->resp, error)))
        return NULL;
      if (s->tokens && (gint64)s->n_tokens < s->resp)
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                              "sample %" G_GUINT64_FORMAT ": tokens has %" G_GUINT64_FORMAT
                              " ids, fewer than the response's %" G_GINT64_FORMAT,
                              row, s->n_tokens, s->resp);
          return NULL;
        }
      cols = MAX (cols, (guint64)s->resp);
      any_f64 = any_f64 || s->old_dtype == DW_DTYPE_F64 || s->roll_dtype == DW_DTYPE_F64;
      narrowest = dw_batch_slime_wider_lp (narrowest,
                                           dw_batch_slime_wider_lp (s->old_dtype, s->roll_dtype));
      any_adv = any_adv || s->adv;
      all_tokens = all_tokens && s->tokens;
      all_rewards = all_rewards && s->has_reward;
    }
  {
    guint64 shape[2] = { rows, cols }, count;
    if (!dw_shape_product (2, shape, 40, &count) || count * 40 > dw_batch_reader_get_max_bytes ())
      {
        dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, name,
                            "a batch of [%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                            "] exceeds the reader's limit",
                            rows, cols);
        return NULL;
      }
  }
  batch = dw_batch_new (rows, cols, any_f64 ? DW_DTYPE_F64 : DW_DTYPE_F32, DW_DTYPE_F32);
  if (!batch)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, name, "out of memory for the batch");
      return NULL;
    }
  batch->step = step;
  batch->source_lp_dtype = narrowest;
  if (narrowest == DW_DTYPE_BF16 || narrowest == DW_DTYPE_F16)
    batch->flags |= DW_BATCH_LOSSY_LOGPROBS;
  batch->flags |= DW_BATCH_PACKED_SOURCE; /* ragged per-sample responses, padded here */
  if (any_adv)
    batch->advantages = g_malloc0 (MAX (rows * cols, 1) * dw_dtype_size (batch->lp_dtype));
  if (all_tokens)
    batch->token_ids = g_malloc0 (MAX (rows * cols, 1) * sizeof (gint64));
  if (all_rewards)
    batch->rewards = g_malloc0 (MAX (rows, 1) * sizeof (double));
  for (guint64 row = 0; row < rows; row++)
    {
      Sample *s = &g_array_index (samples, Sample, row);
      float *mask = batch->response_mask;
      for (gint64 token = 0; token < s->resp; token++)
        {
          gsize position = row * cols + (gsize)token;
          if (any_f64)
            {
              ((double *)batch->old_log_prob)[position] = s->old[token];
              ((double *)batch->rollout_log_prob)[position] = s->roll[token];
              if (s->adv)
                ((double *)batch->advantages)[position] = s->adv[token];
            }
          else
            {
              ((float *)batch->old_log_prob)[position] = (float)s->old[token];
              ((float *)batch->rollout_log_prob)[position] = (float)s->roll[token];
              if (s->adv)
                ((float *)batch->advantages)[position] = (float)s->adv[token];
            }
          mask[position] = s->mask ? (float)s->mask[token] : 1.0f;
          if (batch->token_ids)
            batch->token_ids[position]
              = (gint64)s->tokens[s->n_tokens - (guint64)s->resp + (guint64)token];
        }
      if (batch->rewards)
        batch->rewards[row] = s->reward;
    }
  return g_steal_pointer (&batch);
}

/* ------------------------------------------------------------------------------------------ */
/* The rollout side: D/rollout_data/{id}.pt joined on the sample                              */

static void
dw_batch_slime_join_rollout (const char *train_path, gint64 rollout_id, GArray *samples)
{
  g_autofree char *dir = g_path_get_dirname (train_path);
  g_autofree char *parent = g_path_get_dirname (dir);
  g_autofree char *base = g_strdup_printf ("%" G_GINT64_FORMAT ".pt", rollout_id);
  g_autofree char *path = g_build_filename (parent, "rollout_data", base, NULL);
  g_autoptr (DwTorchFile) file = NULL;
  const DwPickleValue *list;
  struct stat st;
  gboolean needed = FALSE;
  int descriptor;

  /* the rollout dump is only read for what the train dump lacks (it is the slower file: Python
   * lists of numbers) */
  for (guint position = 0; position < samples->len && !needed; position++)
    {
      const Sample *s = &g_array_index (samples, Sample, position);
      needed = !s->roll || !s->mask || !s->tokens || !s->has_reward;
    }
  if (!needed)
    return;
  descriptor = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (descriptor < 0)
    return;
  if (fstat (descriptor, &st) == 0 && S_ISREG (st.st_mode))
    {
      DwSource src = { path, NULL, descriptor, (guint64)st.st_size };
      file = dw_batch_torch_open (&src, NULL);
    }
  close (descriptor);
  if (!file)
    return; /* the rollout side is optional: the train dump alone is complete in v2 */
  list = dw_pickle_dict_lookup (dw_batch_torch_get_root (file), "samples");
  for (guint position = 0; position < samples->len; position++)
    {
      Sample *s = &g_array_index (samples, Sample, position);
      const DwPickleValue *rollout_sample = NULL;
      Ref ref = { file, NULL, NULL, 0, "rollout sample" };
      DwDType dtype;
      double idx;

      if (s->position >= 0)
        rollout_sample = dw_pickle_seq_get (list, (guint64)s->position);
      else if (s->index >= 0)
        for (guint64 filled = 0; filled < dw_pickle_seq_length (list) && !rollout_sample; filled++)
          {
            const DwPickleValue *candidate = dw_pickle_seq_get (list, filled);
            if (dw_pickle_value_number (dw_pickle_dict_lookup (candidate, "index"), &idx)
                && (gint64)idx == s->index)
              rollout_sample = candidate;
          }
      if (!rollout_sample)
        continue;
      ref.dict = rollout_sample;
      /* Python floats here; slime's trainer takes them .to(torch.float32) (actor.py) */
      if (!s->roll
          && dw_batch_slime_ref_array (&ref, "rollout_log_probs", &s->roll, &s->n_roll, &dtype,
                                       NULL)
          && s->roll)
        s->roll_dtype = DW_DTYPE_F32;
      if (!s->mask)
        dw_batch_slime_ref_array (&ref, "loss_mask", &s->mask, &s->n_mask, &dtype, NULL);
      if (!s->tokens)
        dw_batch_slime_ref_array (&ref, "tokens", &s->tokens, &s->n_tokens, &dtype, NULL);
      if (!s->has_reward)
        s->has_reward = dw_batch_slime_ref_number (&ref, "reward", &s->reward);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* v2: one file per rollout                                                                   */

static DwBatch *
dw_batch_slime_read_v2 (DwTorchFile *file, const char *path, gint64 step, GError **error)
{
  const DwPickleValue *list = dw_pickle_dict_lookup (dw_batch_torch_get_root (file), "samples");
  g_autoptr (GArray) samples = g_array_new (FALSE, TRUE, sizeof (Sample));
  guint64 count = dw_pickle_seq_length (list);

  g_array_set_clear_func (samples, dw_batch_slime_sample_clear);
  if (dw_pickle_value_kind (list) != DW_PICKLE_LIST)
    {
      g_autofree char *description = dw_pickle_value_describe (list);
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, dw_batch_torch_get_name (file),
                          "samples: expected a list, found %s", description);
      return NULL;
    }
  g_array_set_size (samples, (guint)count);
  for (guint64 index = 0; index < count; index++)
    {
      g_autofree char *prefix = g_strdup_printf ("samples[%" G_GUINT64_FORMAT "]", index);
      Ref ref = { file, dw_pickle_seq_get (list, index), NULL, 0, prefix };
      if (dw_pickle_value_kind (ref.dict) != DW_PICKLE_DICT)
        {
          g_autofree char *description = dw_pickle_value_describe (ref.dict);
          g_autofree char *note = dw_batch_torch_refused_note (file);
          dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, dw_batch_torch_get_name (file),
                              "%s: expected a dict, found %s%s", prefix, description, note);
          return NULL;
        }
      if (!dw_batch_slime_sample_read (&ref, &g_array_index (samples, Sample, index), error))
        return NULL;
    }
  if (path)
    dw_batch_slime_join_rollout (path, step, samples);
  return dw_batch_slime_batch_from_samples (dw_batch_torch_get_name (file), samples, step, error);
}

/* ------------------------------------------------------------------------------------------ */
/* v1 and miles: one file per rank, CP slices                                                 */

typedef struct
{
  DwTorchFile *file;
  gint64 rank;
  gint64 cp_rank, cp_size; /* miles writes them; -1 for slime */
  const char *qkv_format;
  const DwPickleValue *columns;
  guint64 n;
  char *signature;
} RankFile;

static void
dw_batch_slime_rank_file_clear (gpointer data)
{
  RankFile *rank_file = data;
  dw_batch_torch_close (rank_file->file);
  g_free (rank_file->signature);
}

static gint
dw_batch_slime_rank_file_cmp (gconstpointer a, gconstpointer b)
{
  const RankFile *left = a, *right = b;
  return left->rank < right->rank ? -1 : left->rank > right->rank;
}

/* The samples a rank holds, for grouping the ranks of one data-parallel group. */
static char *
dw_batch_slime_rank_signature (const RankFile *r)
{
  GString *text = g_string_new (NULL);
  const char *keys[] = { "total_lengths", "response_lengths", "sample_indices" };

  for (guint key_index = 0; key_index < G_N_ELEMENTS (keys); key_index++)
    {
      const DwPickleValue *col = dw_pickle_dict_lookup (r->columns, keys[key_index]);
      double number;
      for (guint64 index = 0; index < dw_pickle_seq_length (col); index++)
        if (dw_pickle_seq_number (col, index, &number))
          g_string_append_printf (text, "%.0f,", number);
      g_string_append_c (text, '|');
    }
  return g_string_free (text, FALSE);
}

static gboolean
dw_batch_slime_rank_file_load (const char *path, RankFile *r, GError **error)
{
  const DwPickleValue *root;
  struct stat st;
  int descriptor = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  double number;

  if (descriptor < 0 || fstat (descriptor, &st) < 0)
    {
      int saved = errno;
      if (descriptor >= 0)
        close (descriptor);
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", g_strerror (saved));
      return FALSE;
    }
  {
    DwSource src = { path, NULL, descriptor, (guint64)st.st_size };
    r->file = dw_batch_torch_open (&src, error);
  }
  close (descriptor);
  if (!r->file)
    return FALSE;
  root = dw_batch_torch_get_root (r->file);
  r->columns = dw_pickle_dict_lookup (root, "rollout_data");
  if (dw_pickle_value_kind (r->columns) != DW_PICKLE_DICT)
    {
      g_autofree char *note = dw_batch_torch_refused_note (r->file);
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, path,
                          "not a slime per-rank train dump (no rollout_data dict)%s", note);
      return FALSE;
    }
  r->rank
    = dw_pickle_value_number (dw_pickle_dict_lookup (root, "rank"), &number) ? (gint64)number : -1;
  r->cp_rank = dw_pickle_value_number (dw_pickle_dict_lookup (root, "cp_rank"), &number)
                 ? (gint64)number
                 : -1;
  r->cp_size = dw_pickle_value_number (dw_pickle_dict_lookup (root, "cp_size"), &number)
                 ? (gint64)number
                 : -1;
  r->qkv_format = dw_pickle_value_str (dw_pickle_dict_lookup (root, "qkv_format"));
  r->n = dw_pickle_seq_length (dw_pickle_dict_lookup (r->columns, "response_lengths"));
  r->signature = dw_batch_slime_rank_signature (r);
  return TRUE;
}

/* The rank files of rollout @id beside @path: "{id}_{rank}.pt", sorted by rank. */
static GArray *
dw_batch_slime_rank_files_list (const char *path, gint64 *id, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autoptr (GDir) d = NULL;
  g_autoptr (GArray) files = g_array_new (FALSE, TRUE, sizeof (RankFile));
  const char *entry;
  char *end = NULL;

  g_array_set_clear_func (files, dw_batch_slime_rank_file_clear);
  *id = g_ascii_strtoll (base, &end, 10);
  if (end == base || *end != '_')
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, path,
                          "a per-rank dump is named {rollout_id}_{rank}.pt");
      return NULL;
    }
  d = g_dir_open (dir, 0, error);
  if (!d)
    return NULL;
  while ((entry = g_dir_read_name (d)))
    {
      gint64 eid, erank;
      char *end_rank = NULL;
      g_autofree char *full = NULL;
      RankFile rank_file = { 0 };

      eid = g_ascii_strtoll (entry, &end, 10);
      if (end == entry || eid != *id || *end != '_')
        continue;
      erank = g_ascii_strtoll (end + 1, &end_rank, 10);
      if (end_rank == end + 1 || strcmp (end_rank, ".pt") != 0 || erank < 0)
        continue;
      full = g_build_filename (dir, entry, NULL);
      if (!dw_batch_slime_rank_file_load (full, &rank_file, error))
        {
          dw_batch_slime_rank_file_clear (&rank_file);
          return NULL;
        }
      if (rank_file.rank < 0)
        rank_file.rank = erank;
      g_array_append_val (files, rank_file);
    }
  g_array_sort (files, dw_batch_slime_rank_file_cmp);
  return g_steal_pointer (&files);
}

/* Per-sample chunk base: total_length (thd), or max_seq_len (miles bshd). */
static gboolean
dw_batch_slime_chunk_base (const RankFile *r, guint64 i, gint64 total, gint64 *base, GError **error)
{
  double number;

  if (r->qkv_format == NULL || strcmp (r->qkv_format, "thd") == 0)
    {
      *base = total;
      return TRUE;
    }
  if (strcmp (r->qkv_format, "bshd") == 0
      && dw_pickle_seq_number (dw_pickle_dict_lookup (r->columns, "max_seq_lens"), i, &number))
    {
      *base = (gint64)number;
      return TRUE;
    }
  dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, dw_batch_torch_get_name (r->file),
                      "cannot reassemble the context-parallel slices: qkv_format '%s' needs "
                      "max_seq_lens, which the dump does not hold",
                      r->qkv_format);
  return FALSE;
}

/* Joins one CP field of sample @i from the group's ranks (by cp rank); NULL, no error, when
 * the lengths do not fit this cp. */
static gboolean
dw_batch_slime_join_field (RankFile *const *by_cp, guint cp, guint64 i, const char *key,
                           gint64 total, gint64 resp, gint64 base, double **out, guint64 *n_out,
                           DwDType *dtype, gboolean *fits, GError **error)
{
  double *slices[64] = { 0 };
  guint64 lens[64] = { 0 };
  CpSlice slice_table[64];
  gboolean present = FALSE, success = TRUE;

  *fits = TRUE;
  *out = NULL;
  for (guint row = 0; row < cp && success; row++)
    {
      Ref ref = { by_cp[row]->file, NULL, by_cp[row]->columns, i, "rollout_data" };
      success = dw_batch_slime_ref_array (&ref, key, &slices[row], &lens[row], dtype, error);
      present = present || slices[row];
      if (!dw_batch_slime_cp_slice (base, total, resp, cp, row, &slice_table[row]))
        *fits = FALSE;
    }
  if (success && present && *fits)
    {
      /* slime keeps loss_masks whole on every rank; the other fields are the rank's slice */
      if (strcmp (key, "loss_masks") == 0 && lens[0] == (guint64)resp)
        *out = g_memdup2 (slices[0], MAX (lens[0], 1) * sizeof (double));
      else
        *out = dw_batch_slime_cp_join (slices, lens, slice_table, cp, resp);
      *n_out = (guint64)resp;
      *fits = *out != NULL;
    }
  for (guint row = 0; row < cp; row++)
    g_free (slices[row]);
  return success;
}

/* One data-parallel group (ranks holding the same samples) → its samples, trying @cp. */
static gboolean
dw_batch_slime_group_samples (GPtrArray *group, guint cp, GArray *samples, gboolean *fits,
                              GError **error)
{
  RankFile *by_cp[64] = { 0 };
  guint tp_size = group->len / cp;
  const RankFile *first = g_ptr_array_index (group, 0);
  guint start = samples->len;

  *fits = FALSE;
  if (cp == 0 || cp > 64 || group->len % cp != 0)
    return TRUE;
  for (guint inner = 0; inner < group->len; inner++)
    {
      RankFile *rank = g_ptr_array_index (group, inner);
      gint64 cp_rank = rank->cp_rank >= 0 ? rank->cp_rank : (gint64)((inner / tp_size) % cp);
      if (cp_rank < 0 || cp_rank >= (gint64)cp)
        return TRUE;
      if (!by_cp[cp_rank])
        by_cp[cp_rank] = rank;
    }
  for (guint rank = 0; rank < cp; rank++)
    if (!by_cp[rank])
      return TRUE;
  for (guint64 index = 0; index < first->n; index++)
    {
      Ref ref = { first->file, NULL, first->columns, index, "rollout_data" };
      Sample sample = { 0 };
      gint64 base;
      DwDType dtype;
      gboolean first_ok = TRUE, second_ok = TRUE, third_ok = TRUE, fourth_ok = TRUE;

      if (!dw_batch_slime_sample_read (&ref, &sample, error))
        {
          dw_batch_slime_sample_clear (&sample);
          return FALSE;
        }
      g_clear_pointer (&sample.old, g_free);
      g_clear_pointer (&sample.roll, g_free);
      g_clear_pointer (&sample.adv, g_free);
      g_clear_pointer (&sample.mask, g_free);
      if (sample.total < sample.resp
          || !dw_batch_slime_chunk_base (first, index, sample.total, &base, error))
        {
          if (sample.total < sample.resp)
            dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT,
                                dw_batch_torch_get_name (first->file),
                                "rollout_data.total_lengths[%" G_GUINT64_FORMAT
                                "]: missing or shorter than the response",
                                index);
          dw_batch_slime_sample_clear (&sample);
          return FALSE;
        }
      if (!dw_batch_slime_join_field (by_cp, cp, index, cp_fields[0], sample.total, sample.resp,
                                      base, &sample.old, &sample.n_old, &sample.old_dtype,
                                      &first_ok, error)
          || !dw_batch_slime_join_field (by_cp, cp, index, cp_fields[1], sample.total, sample.resp,
                                         base, &sample.roll, &sample.n_roll, &sample.roll_dtype,
                                         &second_ok, error)
          || !dw_batch_slime_join_field (by_cp, cp, index, cp_fields[2], sample.total, sample.resp,
                                         base, &sample.adv, &sample.n_adv, &dtype, &third_ok, error)
          || !dw_batch_slime_join_field (by_cp, cp, index, "loss_masks", sample.total, sample.resp,
                                         base, &sample.mask, &sample.n_mask, &dtype, &fourth_ok,
                                         error))
        {
          dw_batch_slime_sample_clear (&sample);
          return FALSE;
        }
      g_array_append_val (samples, sample);
      if (!(first_ok && second_ok && third_ok && fourth_ok))
        {
          g_array_set_size (samples, start);
          return TRUE;
        }
    }
  *fits = TRUE;
  return TRUE;
}

static gint
dw_batch_slime_sample_index_cmp (gconstpointer a, gconstpointer b)
{
  const Sample *left = a, *right = b;
  return left->index < right->index ? -1 : left->index > right->index;
}

static DwBatch *
dw_batch_slime_read_rank_set (const char *path, GError **error)
{
  g_autoptr (GArray) files = NULL;
  g_autoptr (GArray) samples = g_array_new (FALSE, TRUE, sizeof (Sample));
  g_autoptr (GHashTable) groups
    = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_ptr_array_unref);
  g_autoptr (GPtrArray) order = g_ptr_array_new ();
  gboolean all_indexed = TRUE;
  gint64 sample_id;

  g_array_set_clear_func (samples, dw_batch_slime_sample_clear);
  files = dw_batch_slime_rank_files_list (path, &sample_id, error);
  if (!files)
    return NULL;
  for (guint position = 0; position < files->len; position++)
    {
      RankFile *rank_file = &g_array_index (files, RankFile, position);
      GPtrArray *group;

      /* with pipeline parallelism only the last stage's ranks computed log_probs */
      if (dw_pickle_dict_lookup (rank_file->columns, "log_probs") == NULL)
        continue;
      group = g_hash_table_lookup (groups, rank_file->signature);
      if (!group)
        {
          group = g_ptr_array_new ();
          g_hash_table_insert (groups, rank_file->signature, group);
          g_ptr_array_add (order, group);
        }
      g_ptr_array_add (group, rank_file);
    }
  if (order->len == 0)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, path,
                          "none of the %u rank files of rollout %" G_GINT64_FORMAT
                          " holds log_probs (the training engine's)",
                          files->len, sample_id);
      return NULL;
    }
  for (guint position = 0; position < order->len; position++)
    {
      GPtrArray *group = g_ptr_array_index (order, position);
      const RankFile *first = g_ptr_array_index (group, 0);
      GString *tried = g_string_new (NULL);
      gboolean fits = FALSE;

      if (first->cp_size > 0)
        {
          if (!dw_batch_slime_group_samples (group, (guint)first->cp_size, samples, &fits, error))
            return g_string_free (tried, TRUE), NULL;
          g_string_append_printf (tried, "%" G_GINT64_FORMAT " (as the dump says)", first->cp_size);
        }
      else
        for (guint cp_size = 1; cp_size <= group->len && !fits; cp_size++)
          {
            if (group->len % cp_size != 0)
              continue;
            if (!dw_batch_slime_group_samples (group, cp_size, samples, &fits, error))
              return g_string_free (tried, TRUE), NULL;
            g_string_append_printf (tried, "%s%u", tried->len ? ", " : "", cp_size);
          }
      if (!fits)
        {
          GString *ranks = g_string_new (NULL);
          for (guint inner = 0; inner < group->len; inner++)
            g_string_append_printf (ranks, "%s%" G_GINT64_FORMAT, inner ? ", " : "",
                                    ((RankFile *)g_ptr_array_index (group, inner))->rank);
          dw_batch_set_error (
            error, DW_BATCH_ERROR_TRUNCATED, path,
            "cannot reassemble the context-parallel slices of rollout %" G_GINT64_FORMAT
            ": ranks %s hold the same samples but their log_probs slices fit "
            "no context-parallel size (tried cp = %s); rank files are missing "
            "or still being written",
            sample_id, ranks->str, tried->str);
          g_string_free (ranks, TRUE);
          g_string_free (tried, TRUE);
          return NULL;
        }
      g_string_free (tried, TRUE);
    }
  for (guint index = 0; index < samples->len; index++)
    all_indexed = all_indexed && g_array_index (samples, Sample, index).index >= 0;
  if (all_indexed)
    g_array_sort (samples, dw_batch_slime_sample_index_cmp);
  dw_batch_slime_join_rollout (path, sample_id, samples);
  {
    const RankFile *first = &g_array_index (files, RankFile, 0);
    double number;
    gint64 step
      = dw_pickle_value_number (
          dw_pickle_dict_lookup (dw_batch_torch_get_root (first->file), "rollout_id"), &number)
          ? (gint64)number
          : sample_id;
    return dw_batch_slime_batch_from_samples (path, samples, step, error);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Entry point                                                                                */

DwBatch *
dw_batch_slime_read (const DwSource *src, const char *path, GError **error)
{
  g_autoptr (DwTorchFile) file = dw_batch_torch_open (src, error);
  const DwPickleValue *root, *field_value;
  gint64 step;
  double number;

  if (!file)
    return NULL;
  root = dw_batch_torch_get_root (file);
  if (dw_pickle_value_kind (root) != DW_PICKLE_DICT)
    {
      g_autofree char *desc = dw_pickle_value_describe (root);
      g_autofree char *note = dw_batch_torch_refused_note (file);
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                          "the pickled object is %s, not a slime dump's dict%s", desc, note);
      return NULL;
    }
  step = dw_pickle_value_number (dw_pickle_dict_lookup (root, "rollout_id"), &number)
           ? (gint64)number
           : dw_step_from_name (path ? path : src->name);
  field_value = dw_pickle_dict_lookup (root, "format_version");
  if (dw_pickle_dict_lookup (root, "rollout_data"))
    {
      const DwPickleValue *cp_size_value = dw_pickle_dict_lookup (root, "cp_size");
      if (path && !(dw_pickle_value_number (cp_size_value, &number) && number == 1.0))
        {
          /* the whole per-rank set (also miles with cp > 1) */
          g_clear_pointer (&file, dw_batch_torch_close);
          return dw_batch_slime_read_rank_set (path, error);
        }
      else
        {
          /* one file read alone (from memory, or miles cp_size 1 which still may have DP
           * siblings: read the set when the path is known) */
          g_autoptr (GArray) samples = g_array_new (FALSE, TRUE, sizeof (Sample));
          const DwPickleValue *cols = dw_pickle_dict_lookup (root, "rollout_data");
          guint64 count = dw_pickle_seq_length (dw_pickle_dict_lookup (cols, "response_lengths"));
          if (path)
            {
              g_clear_pointer (&file, dw_batch_torch_close);
              return dw_batch_slime_read_rank_set (path, error);
            }
          g_array_set_clear_func (samples, dw_batch_slime_sample_clear);
          g_array_set_size (samples, (guint)count);
          for (guint64 index = 0; index < count; index++)
            {
              Ref ref = { file, NULL, cols, index, "rollout_data" };
              if (!dw_batch_slime_sample_read (&ref, &g_array_index (samples, Sample, index),
                                               error))
                return NULL;
            }
          return dw_batch_slime_batch_from_samples (src->name, samples, step, error);
        }
    }
  if (field_value && dw_pickle_value_number (field_value, &number) && number != 2.0)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                          "format_version %g: this reader knows slime's version 2", number);
      return NULL;
    }
  if (dw_pickle_dict_lookup (root, "samples"))
    {
      const DwPickleValue *first = dw_pickle_seq_get (dw_pickle_dict_lookup (root, "samples"), 0);
      if (!field_value && first && !dw_pickle_dict_lookup (first, "log_probs")
          && dw_pickle_dict_lookup (first, "response_length"))
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, src->name,
                              "a slime rollout dump (rollout_data/{id}.pt): it holds the rollout "
                              "engine's side only; it is joined to train_data/{id}.pt, which "
                              "has the training engine's log_probs");
          return NULL;
        }
      return dw_batch_slime_read_v2 (file, path, step, error);
    }
  {
    g_autofree char *note = dw_batch_torch_refused_note (file);
    dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                        "a torch file, but not a slime/miles dump (no 'samples' list nor "
                        "'rollout_data' dict)%s",
                        note);
  }
  return NULL;
}

char *
dw_batch_slime_set_leader (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *leader = NULL;
  g_autoptr (GDir) d = NULL;
  const char *entry;
  char *end = NULL;
  gint64 sample_id, rank;

  sample_id = g_ascii_strtoll (base, &end, 10);
  if (end == base || *end != '_')
    return g_strdup (path);
  rank = g_ascii_strtoll (end + 1, &end, 10);
  if (strcmp (end, ".pt") != 0)
    return g_strdup (path);
  d = g_dir_open (dir, 0, NULL);
  while (d && (entry = g_dir_read_name (d)))
    {
      char *end_id = NULL, *end_rank = NULL;
      gint64 eid = g_ascii_strtoll (entry, &end_id, 10), erank;
      if (end_id == entry || eid != sample_id || *end_id != '_')
        continue;
      erank = g_ascii_strtoll (end_id + 1, &end_rank, 10);
      if (end_rank != end_id + 1 && strcmp (end_rank, ".pt") == 0 && erank < rank)
        {
          rank = erank;
          g_free (leader);
          leader = g_build_filename (dir, entry, NULL);
        }
    }
  return leader ? g_steal_pointer (&leader) : g_strdup (path);
}

gboolean
dw_batch_slime_is_set_leader (const char *path)
{
  g_autofree char *leader = dw_batch_slime_set_leader (path);
  return strcmp (leader, path) == 0;
}
