/* dw-batch-reader.c — format detection (a table of formats), dispatch, .npy sets, whole files
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-batch-private.h"
#include "dw-batch-slime.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------ */
/* Detection and dispatch                                                                     */

static gboolean
sniff_zip (const guint8 *data, gsize len)
{
  return len >= 4 && (memcmp (data, "PK\003\004", 4) == 0 || memcmp (data, "PK\005\006", 4) == 0);
}

/* torch.save: a zip whose first member is "<prefix>/data.pkl" */
static gboolean
sniff_torch (const guint8 *data, gsize len)
{
  gsize name_len;

  if (len < 30 || memcmp (data, "PK\003\004", 4) != 0)
    return FALSE;
  name_len = (gsize)data[26] | (gsize)data[27] << 8;
  return name_len >= 9 && 30 + name_len <= len
         && memcmp (data + 30 + name_len - 9, "/data.pkl", 9) == 0;
}

static gboolean
sniff_npy (const guint8 *data, gsize len)
{
  return len >= 6 && memcmp (data, "\x93NUMPY", 6) == 0;
}

static gboolean
sniff_safetensors (const guint8 *data, gsize len)
{
  gsize index = 0;

  if (len < 9 || data[8] != '{')
    return FALSE;
  /* an 8-byte length then '{' — unless those 8 bytes are JSONL's own blank space + '{' */
  while (index < 8 && g_ascii_isspace (data[index]))
    index++;
  return data[index] != '{';
}

static gboolean
sniff_jsonl (const guint8 *data, gsize len)
{
  for (gsize index = 0; index < len; index++)
    {
      if (data[index] == '{')
        return TRUE;
      if (!g_ascii_isspace (data[index]))
        break;
    }
  return FALSE;
}

static DwBatch *
read_npy_cb (const DwSource *src, const char *path, GError **error)
{
  (void)path;
  return dw_npy_read (src, error);
}

static DwBatch *
read_safetensors_cb (const DwSource *src, const char *path, GError **error)
{
  (void)path;
  return dw_safetensors_read (src, error);
}

static DwBatch *
read_jsonl_cb (const DwSource *src, const char *path, GError **error)
{
  (void)path;
  return dw_jsonl_read (src, error);
}

/* The formats, in the order their signatures are tried (torch before npz: both are zips). */
static const struct
{
  DwBatchFormat format;
  const char *name;
  gboolean (*sniff) (const guint8 *data, gsize len);
  DwBatch *(*read) (const DwSource *src, const char *path, GError **error);
} batch_formats[] = {
  { DW_BATCH_FORMAT_TORCH, "torch", sniff_torch, dw_batch_slime_read },
  { DW_BATCH_FORMAT_NPZ, "npz", sniff_zip, dw_npz_read },
  { DW_BATCH_FORMAT_NPY, "npy", sniff_npy, read_npy_cb },
  { DW_BATCH_FORMAT_SAFETENSORS, "safetensors", sniff_safetensors, read_safetensors_cb },
  { DW_BATCH_FORMAT_JSONL, "jsonl", sniff_jsonl, read_jsonl_cb },
};

DwBatchFormat
dw_batch_detect_format (const guint8 *data, gsize len)
{
  for (guint index = 0; index < G_N_ELEMENTS (batch_formats); index++)
    if (batch_formats[index].sniff (data, len))
      return batch_formats[index].format;
  return DW_BATCH_FORMAT_UNKNOWN;
}

const char *
dw_batch_format_name (DwBatchFormat format)
{
  for (guint index = 0; index < G_N_ELEMENTS (batch_formats); index++)
    if (batch_formats[index].format == format)
      return batch_formats[index].name;
  return "unknown";
}

static DwBatch *
read_source (const DwSource *src, const char *path, GError **error)
{
  guint8 head[512];
  gsize count = MIN (sizeof head, src->size);
  DwBatchFormat format;

  if (src->size == 0)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name, "offset 0: empty file");
      return NULL;
    }
  if (!dw_source_read (src, 0, head, count, "the format signature", error))
    return NULL;
  format = dw_batch_detect_format (head, count);
  for (guint index = 0; index < G_N_ELEMENTS (batch_formats); index++)
    if (batch_formats[index].format == format)
      return batch_formats[index].read (src, path, error);
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
    for (gsize index = 0; index < MIN (count, 8); index++)
      g_string_append_printf (hex, "%s%02x", index ? " " : "", head[index]);
    dw_batch_set_error (error, DW_BATCH_ERROR_UNKNOWN_FORMAT, src->name,
                        "offset 0: not a rollout batch (npz, npy, safetensors, JSONL or a torch "
                        ".pt dump); starts with %s",
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
      int descriptor;
      struct stat st;

      if (!g_str_has_suffix (entry, ".npy") || !g_str_has_prefix (entry, prefix))
        continue;
      tname = g_strndup (entry + strlen (prefix), strlen (entry) - strlen (prefix) - 4);
      if (!dw_batch_tensor_wanted (tname))
        continue;
      path = g_build_filename (dir, entry, NULL);
      descriptor = g_open (path, O_RDONLY | O_CLOEXEC, 0);
      if (descriptor < 0 || fstat (descriptor, &st) < 0)
        {
          int saved = errno;
          if (descriptor >= 0)
            close (descriptor);
          dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", g_strerror (saved));
          return NULL;
        }
      {
        DwSource src = { path, NULL, descriptor, (guint64)st.st_size };
        t = dw_npy_parse (&src, 0, src.size, tname, NULL, error);
      }
      close (descriptor);
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
  int descriptor;
  DwBatch *batch;
  guint8 head[64];
  gsize count;

  g_return_val_if_fail (path != NULL, NULL);

  if (g_stat (path, &st) == 0 && S_ISDIR (st.st_mode))
    return read_npy_set (path, path, "", error);
  /* O_NONBLOCK: opening a FIFO with no writer would block forever (no effect on files) */
  descriptor = g_open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
  if (descriptor < 0 || fstat (descriptor, &st) < 0)
    {
      int saved = errno;
      if (descriptor >= 0)
        close (descriptor);
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", g_strerror (saved));
      return NULL;
    }
  if (!S_ISREG (st.st_mode))
    {
      close (descriptor);
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path,
                          "%s, not a regular file (a batch is read from a file)",
                          S_ISFIFO (st.st_mode) ? "a pipe" : "a special file");
      return NULL;
    }
  {
    DwSource src = { path, NULL, descriptor, (guint64)st.st_size };
    count = MIN (sizeof head, src.size);
    if (count > 0 && dw_source_read (&src, 0, head, count, "the format signature", NULL)
        && dw_batch_detect_format (head, count) == DW_BATCH_FORMAT_NPY)
      batch = read_npy_path (path, &src, error);
    else
      batch = read_source (&src, path, error);
  }
  close (descriptor);
  return batch;
}

double *
dw_batch_read_npy_array (const char *path, guint *ndim, guint64 shape[8], DwDType *dtype,
                         GError **error)
{
  g_autoptr (DwTensor) t = NULL;
  struct stat st;
  int descriptor;
  double *values;

  descriptor = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (descriptor < 0 || fstat (descriptor, &st) < 0)
    {
      int saved = errno;
      if (descriptor >= 0)
        close (descriptor);
      dw_batch_set_error (error, DW_BATCH_ERROR_IO, path, "%s", g_strerror (saved));
      return NULL;
    }
  {
    DwSource src = { path, NULL, descriptor, (guint64)st.st_size };
    t = dw_npy_parse (&src, 0, src.size, "array", NULL, error);
  }
  close (descriptor);
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
      gsize elem_size = dw_dtype_size (t->dtype);
      for (guint64 index = 0; index < t->n_elems; index++)
        {
          guint64 off = 0, stride = 1;
          for (guint dim = 0; dim < t->ndim; dim++)
            {
              off += idx[dim] * stride;
              stride *= t->shape[dim];
            }
          values[index] = dw_decode_element (t->data + off * elem_size, t->dtype, t->big_endian);
          for (int dim = (int)t->ndim - 1; dim >= 0; dim--)
            {
              if (++idx[dim] < t->shape[dim])
                break;
              idx[dim] = 0;
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
