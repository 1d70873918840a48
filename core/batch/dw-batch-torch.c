/* dw-batch-torch.c — torch.save files: the zip container, data.pkl and the raw storages
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A torch.save file (torch ≥ 1.6) is a zip of stored, 64-byte-aligned members under one prefix
 * (the file's stem, or "archive"): <prefix>/data.pkl (the object, pickled with persistent ids
 * for storages), <prefix>/data/<key> (each storage's raw bytes), <prefix>/version and, since
 * torch 2.1, <prefix>/byteorder ("little" or "big"). The zip is libzip's (dw-batch-zip.c), the
 * pickle the restricted unpickler's (dw-pickle.c); storages are read only when a tensor the
 * caller wants refers to them, each once, all within the reader's byte limit.
 */
#include "dw-batch-torch.h"

#include <string.h>

#include "dw-batch-zip.h"

struct _DwTorchFile
{
  char *name;
  DwSource src; /* name and size only: reads go through libzip */
  zip_t *za;
  char *prefix;
  gboolean big_endian;
  DwPickle *pickle;
  GHashTable *storages; /* key → GBytes */
  guint64 loaded;
};

void
dw_batch_torch_close (DwTorchFile *file)
{
  if (file == NULL)
    return;
  if (file->za)
    zip_discard (file->za);
  if (file->storages)
    g_hash_table_unref (file->storages);
  dw_pickle_free (file->pickle);
  g_free (file->prefix);
  g_free (file->name);
  g_free (file);
}

static gboolean
dw_batch_torch_find_pickle (DwTorchFile *file, zip_uint64_t *index, GError **error)
{
  zip_int64_t count = zip_get_num_entries (file->za, 0);

  for (zip_int64_t position = 0; position < count; position++)
    {
      const char *mname = zip_get_name (file->za, (zip_uint64_t)position, ZIP_FL_ENC_RAW);
      const char *slash = mname ? strchr (mname, '/') : NULL;
      if (slash && slash != mname && strcmp (slash, "/data.pkl") == 0)
        {
          file->prefix = g_strndup (mname, (gsize)(slash - mname));
          *index = (zip_uint64_t)position;
          return TRUE;
        }
    }
  dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, file->name,
                      "zip archive has no <prefix>/data.pkl member: not a torch.save file");
  return FALSE;
}

static void
dw_batch_torch_read_byteorder (DwTorchFile *file)
{
  g_autofree char *mname = g_strdup_printf ("%s/byteorder", file->prefix);
  zip_int64_t idx = zip_name_locate (file->za, mname, ZIP_FL_ENC_RAW);
  g_autofree guint8 *buf = NULL;
  guint64 len = 0;

  if (idx < 0)
    return; /* before torch 2.1: native order, little-endian on every machine torch runs */
  buf = dw_batch_zip_read_member (file->za, (zip_uint64_t)idx, &file->src, mname, &len, NULL);
  file->big_endian = buf && len >= 3 && memcmp (buf, "big", 3) == 0;
}

DwTorchFile *
dw_batch_torch_open (const DwSource *src, GError **error)
{
  g_autoptr (DwTorchFile) file = g_new0 (DwTorchFile, 1);
  g_autofree guint8 *pkl = NULL;
  g_autofree char *ctx = NULL;
  zip_uint64_t index;
  guint64 len;

  file->name = g_strdup (src->name);
  file->src = *src;
  file->src.name = file->name;
  file->za = dw_batch_zip_open (src, error);
  if (!file->za || !dw_batch_torch_find_pickle (file, &index, error))
    return NULL;
  ctx = g_strdup_printf ("member %s/data.pkl", file->prefix);
  pkl = dw_batch_zip_read_member (file->za, index, &file->src, ctx, &len, error);
  if (!pkl)
    return NULL;
  dw_batch_torch_read_byteorder (file);
  {
    g_autofree char *pname = g_strdup_printf ("%s: %s", file->name, ctx);
    GError *local = NULL;
    file->pickle = dw_pickle_load (pname, pkl, len, dw_batch_reader_get_max_bytes (), &local);
    if (!file->pickle)
      {
        /* the message already starts with the file name */
        g_propagate_error (error, local);
        return NULL;
      }
  }
  file->storages
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_bytes_unref);
  return g_steal_pointer (&file);
}

const char *
dw_batch_torch_get_name (const DwTorchFile *file)
{
  return file->name;
}

const DwPickleValue *
dw_batch_torch_get_root (const DwTorchFile *file)
{
  return dw_pickle_get_root (file->pickle);
}

char *
dw_batch_torch_refused_note (const DwTorchFile *file)
{
  const GPtrArray *refused = dw_pickle_get_refused (file->pickle);
  GString *text;

  if (refused->len == 0)
    return g_strdup ("");
  text = g_string_new ("; globals refused, never executed: ");
  for (guint index = 0; index < refused->len; index++)
    g_string_append_printf (text, "%s%s", index ? ", " : "",
                            (const char *)g_ptr_array_index (refused, index));
  return g_string_free (text, FALSE);
}

static GBytes *
dw_batch_torch_load_storage (DwTorchFile *file, const DwPickleTensor *t, const char *where,
                             GError **error)
{
  GBytes *bytes = g_hash_table_lookup (file->storages, t->storage_key);
  g_autofree char *mname = NULL;
  g_autofree char *ctx = NULL;
  zip_int64_t idx;
  guint8 *buf;
  guint64 len, want;

  if (bytes)
    return bytes;
  mname = g_strdup_printf ("%s/data/%s", file->prefix, t->storage_key);
  ctx = g_strdup_printf ("%s: member %s", where, mname);
  idx = zip_name_locate (file->za, mname, ZIP_FL_ENC_RAW);
  if (idx < 0)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, file->name,
                          "%s: the storage member is missing", ctx);
      return NULL;
    }
  want = t->storage_numel * dw_dtype_size (t->dtype);
  if (want
      > dw_batch_reader_get_max_bytes () - MIN (file->loaded, dw_batch_reader_get_max_bytes ()))
    {
      dw_batch_set_error (
        error, DW_BATCH_ERROR_TOO_LARGE, file->name,
        "%s: storages of this file exceed the reader's limit of %" G_GUINT64_FORMAT " bytes", ctx,
        dw_batch_reader_get_max_bytes ());
      return NULL;
    }
  buf = dw_batch_zip_read_member (file->za, (zip_uint64_t)idx, &file->src, ctx, &len, error);
  if (!buf)
    return NULL;
  if (len < want)
    {
      g_free (buf);
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, file->name,
                          "%s: holds %" G_GUINT64_FORMAT
                          " bytes, the pickle declares %" G_GUINT64_FORMAT
                          " elements of %s (%" G_GUINT64_FORMAT " bytes)",
                          ctx, len, t->storage_numel, dw_dtype_name (t->dtype), want);
      return NULL;
    }
  file->loaded += len;
  bytes = g_bytes_new_take (buf, len);
  g_hash_table_insert (file->storages, g_strdup (t->storage_key), bytes);
  return bytes;
}

static double *
dw_batch_torch_tensor_numbers (DwTorchFile *file, const DwPickleTensor *t, const char *where,
                               guint64 *n, GError **error)
{
  GBytes *bytes = dw_batch_torch_load_storage (file, t, where, error);
  const guint8 *base;
  gsize elem_size = dw_dtype_size (t->dtype);
  guint64 idx[8] = { 0 };
  double *out;

  if (!bytes)
    return NULL;
  base = g_bytes_get_data (bytes, NULL);
  out = g_try_new (double, t->numel ? t->numel : 1);
  if (!out)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, file->name, "%s: out of memory", where);
      return NULL;
    }
  for (guint64 index = 0; index < t->numel; index++)
    {
      guint64 off = t->offset;
      for (guint dim = 0; dim < t->ndim; dim++)
        off += idx[dim] * t->stride[dim];
      out[index] = dw_decode_element (base + off * elem_size, t->dtype, file->big_endian);
      for (int dim = (int)t->ndim - 1; dim >= 0; dim--)
        {
          if (++idx[dim] < t->shape[dim])
            break;
          idx[dim] = 0;
        }
    }
  *n = t->numel;
  return out;
}

double *
dw_batch_torch_numbers (DwTorchFile *file, const DwPickleValue *value, const char *where,
                        guint64 *n, DwDType *src_dtype, GError **error)
{
  const DwPickleTensor *t = dw_pickle_value_tensor (value);
  DwPickleKind kind = dw_pickle_value_kind (value);

  if (t)
    {
      *src_dtype = t->dtype;
      return dw_batch_torch_tensor_numbers (file, t, where, n, error);
    }
  if (value && (kind == DW_PICKLE_LIST || kind == DW_PICKLE_TUPLE))
    {
      guint64 len = dw_pickle_seq_length (value);
      g_autofree double *out = g_try_new (double, len ? len : 1);
      if (!out)
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, file->name, "%s: out of memory",
                              where);
          return NULL;
        }
      for (guint64 index = 0; index < len; index++)
        if (!dw_pickle_seq_number (value, index, &out[index]))
          {
            g_autofree char *description
              = dw_pickle_value_describe (dw_pickle_seq_get (value, index));
            dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, file->name,
                                "%s[%" G_GUINT64_FORMAT "]: expected a number, found %s", where,
                                index, description);
            return NULL;
          }
      *n = len;
      *src_dtype = DW_DTYPE_F64;
      return g_steal_pointer (&out);
    }
  {
    g_autofree char *description = dw_pickle_value_describe (value);
    g_autofree char *note = dw_batch_torch_refused_note (file);
    dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, file->name,
                        "%s: expected a tensor or a list of numbers, found %s%s", where,
                        description, note);
  }
  return NULL;
}
