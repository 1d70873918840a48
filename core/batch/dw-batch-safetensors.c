/* dw-batch-safetensors.c — safetensors reader and writer
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Layout (huggingface/safetensors README, src/tensor.rs): u64le header length N, N bytes of
 * JSON ({"__metadata__": {str: str}, NAME: {"dtype", "shape", "data_offsets": [begin, end]}}),
 * then the byte buffer. Offsets are relative to the buffer, tensors are contiguous,
 * non-overlapping and cover it exactly. Debian has no C library for this; the JSON is json-glib's.
 */
#include "dw-batch-private.h"

#include <json-glib/json-glib.h>
#include "dw-json-scan.h"
#include <stdarg.h>
#include <string.h>

#define ST_MAX_HEADER 100000000u /* the reference implementation's limit */
/* A rollout batch's header names a handful of tensors (a few KB); json-glib needs ~25 bytes of
 * memory per header byte, so a 68 MB header for 8 tokens took 1.7 GB. */
#define ST_MAX_BATCH_HEADER (4u << 20)
/* {"name": {"shape": [..]}, "__metadata__": {..}} is 3 levels deep */
#define ST_MAX_DEPTH 8

typedef struct
{
  const char *name;
  DwDType dtype;
  gboolean known;
  guint ndim;
  guint64 shape[DW_TENSOR_MAX_DIMS];
  guint64 begin, end;
} StEntry;

static gboolean
st_dtype (const char *s, DwDType *dtype, gsize *size)
{
  static const struct
  {
    const char *name;
    DwDType dtype;
  } map[] = {
    { "F64", DW_DTYPE_F64 },   { "F32", DW_DTYPE_F32 }, { "F16", DW_DTYPE_F16 },
    { "BF16", DW_DTYPE_BF16 }, { "I64", DW_DTYPE_I64 }, { "I32", DW_DTYPE_I32 },
    { "I16", DW_DTYPE_I16 },   { "I8", DW_DTYPE_I8 },   { "U64", DW_DTYPE_U64 },
    { "U32", DW_DTYPE_U32 },   { "U16", DW_DTYPE_U16 }, { "U8", DW_DTYPE_U8 },
    { "BOOL", DW_DTYPE_BOOL },
  };
  for (gsize index = 0; index < G_N_ELEMENTS (map); index++)
    if (strcmp (s, map[index].name) == 0)
      {
        *dtype = map[index].dtype;
        *size = dw_dtype_size (map[index].dtype);
        return TRUE;
      }
  /* 8-bit floats exist in safetensors: sized, but not usable in a batch */
  if (g_str_has_prefix (s, "F8_"))
    {
      *dtype = DW_N_DTYPES;
      *size = 1;
      return TRUE;
    }
  return FALSE;
}

static const char *
st_dtype_name (DwDType dtype)
{
  switch (dtype)
    {
    case DW_DTYPE_F64:
      return "F64";
    case DW_DTYPE_F32:
      return "F32";
    case DW_DTYPE_F16:
      return "F16";
    case DW_DTYPE_BF16:
      return "BF16";
    case DW_DTYPE_I64:
      return "I64";
    case DW_DTYPE_I32:
      return "I32";
    case DW_DTYPE_I16:
      return "I16";
    case DW_DTYPE_I8:
      return "I8";
    case DW_DTYPE_U64:
      return "U64";
    case DW_DTYPE_U32:
      return "U32";
    case DW_DTYPE_U16:
      return "U16";
    case DW_DTYPE_U8:
      return "U8";
    case DW_DTYPE_BOOL:
      return "BOOL";
    case DW_N_DTYPES:
    default:
      return NULL;
    }
}

static gboolean
json_uint (JsonNode *node, guint64 *out)
{
  gint64 value;
  if (!node || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  value = json_node_get_int (node);
  if (value < 0)
    return FALSE;
  *out = (guint64)value;
  return TRUE;
}

static int
cmp_entry (gconstpointer a, gconstpointer b)
{
  const StEntry *left = a, *right = b;
  if (left->begin != right->begin)
    return left->begin < right->begin ? -1 : 1;
  return left->end < right->end ? -1 : left->end > right->end;
}

/* a header problem: "header: MESSAGE" at the file; always FALSE */
static gboolean G_GNUC_PRINTF (4, 5)
  st_header_fail (GError **error, const DwSource *src, int code, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  dw_batch_set_error (error, code, src->name, "header: %s", message);
  return FALSE;
}

/* phase 1: the 8-byte length and the header text, bounded, UTF-8, depth- and duplicate-checked;
 * NULL on error */
static char *
st_read_header_text (const DwSource *src, guint64 *header_length, GError **error)
{
  guint8 length_bytes[8];
  guint64 length = 0;
  DwJsonProblem problem;

  if (src->size < 8)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name,
                          "offset 0: the safetensors header length needs 8 bytes, the file has "
                          "%" G_GUINT64_FORMAT,
                          src->size);
      return NULL;
    }
  if (!dw_source_read (src, 0, length_bytes, 8, "the header length", error))
    return NULL;
  for (int index = 7; index >= 0; index--)
    length = length << 8 | length_bytes[index];
  if (length > ST_MAX_HEADER)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                          "offset 0: header length %" G_GUINT64_FORMAT
                          " exceeds the safetensors limit of %u bytes",
                          length, ST_MAX_HEADER);
      return NULL;
    }
  if (length > ST_MAX_BATCH_HEADER)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                          "offset 0: header length %" G_GUINT64_FORMAT
                          " bytes is more than a rollout batch needs (Driftwatch reads headers "
                          "up to %u bytes)",
                          length, ST_MAX_BATCH_HEADER);
      return NULL;
    }
  if (length > src->size - 8)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name,
                          "offset 8: header of %" G_GUINT64_FORMAT " bytes, only %" G_GUINT64_FORMAT
                          " present",
                          length, src->size - 8);
      return NULL;
    }
  g_autofree char *text = g_malloc (length + 1);
  if (!dw_source_read (src, 8, text, length, "the header", error))
    return NULL;
  text[length] = '\0';
  if (length == 0 || text[0] != '{')
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                          "offset 8: the header must be a JSON object starting with '{'");
      return NULL;
    }
  if (memchr (text, '\0', length) || !g_utf8_validate (text, (gssize)length, NULL))
    {
      const char *bad = NULL;
      g_utf8_validate (text, (gssize)length, &bad);
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                          "offset %" G_GUINT64_FORMAT ": the header is not valid UTF-8 text",
                          (guint64)(8 + (bad ? bad - text : 0)));
      return NULL;
    }
  /* json-glib recurses per nesting level and keeps the last of two same-named tensors */
  if (!dw_json_scan (text, (gssize)length, ST_MAX_DEPTH, &problem))
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                          "offset %" G_GUINT64_FORMAT ": header JSON: %s",
                          (guint64)(8 + problem.offset), problem.message);
      return NULL;
    }
  *header_length = length;
  return g_steal_pointer (&text);
}

/* phase 2: the header as a JSON object (owned by @parser); NULL on error */
static JsonObject *
st_parse_header (const DwSource *src, JsonParser *parser, const char *text, guint64 length,
                 GError **error)
{
  g_autoptr (GError) local = NULL;
  if (!json_parser_load_from_data (parser, text, (gssize)length, &local))
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name, "offset 8: header JSON: %s",
                          local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                          "offset 8: the header is not a JSON object");
      return NULL;
    }
  return json_node_get_object (root);
}

/* __metadata__: an object of strings */
static gboolean
st_check_metadata (const DwSource *src, JsonNode *node, JsonObject **metadata, GError **error)
{
  JsonObjectIter member_iter;
  const char *member_key;
  JsonNode *member_value;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT, "__metadata__ must be an object");
  *metadata = json_node_get_object (node);
  json_object_iter_init (&member_iter, *metadata);
  while (json_object_iter_next (&member_iter, &member_key, &member_value))
    if (!JSON_NODE_HOLDS_VALUE (member_value)
        || json_node_get_value_type (member_value) != G_TYPE_STRING)
      return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                             "__metadata__ key '%s': value must be a string", member_key);
  return TRUE;
}

/* phase 3: one tensor's entry (dtype, shape, data_offsets inside the @data_length data bytes) */
static gboolean
st_parse_entry (const DwSource *src, const char *key, JsonNode *node, guint64 data_length,
                StEntry *entry, GError **error)
{
  gsize element_size = 0;
  guint64 count;
  memset (entry, 0, sizeof *entry);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                           "tensor '%s': entry must be an object", key);
  JsonObject *object = json_node_get_object (node);
  JsonNode *dtype_node = json_object_get_member (object, "dtype");
  JsonNode *shape_node = json_object_get_member (object, "shape");
  JsonNode *offsets_node = json_object_get_member (object, "data_offsets");
  if (!dtype_node || !JSON_NODE_HOLDS_VALUE (dtype_node)
      || json_node_get_value_type (dtype_node) != G_TYPE_STRING)
    return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                           "tensor '%s': key dtype: missing or not a string", key);
  if (!shape_node || !JSON_NODE_HOLDS_ARRAY (shape_node))
    return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                           "tensor '%s': key shape: missing or not an array", key);
  if (!offsets_node || !JSON_NODE_HOLDS_ARRAY (offsets_node))
    return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                           "tensor '%s': key data_offsets: missing or not an array", key);
  const char *dtype_name = json_node_get_string (dtype_node);
  entry->name = key;
  entry->known = st_dtype (dtype_name, &entry->dtype, &element_size);
  if (!entry->known && dw_batch_tensor_wanted (key))
    return st_header_fail (error, src, DW_BATCH_ERROR_UNSUPPORTED_DTYPE,
                           "tensor '%s': key dtype: unknown dtype '%s'", key, dtype_name);
  JsonArray *shape = json_node_get_array (shape_node);
  if (json_array_get_length (shape) > DW_TENSOR_MAX_DIMS)
    return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                           "tensor '%s': key shape: more than %d dimensions", key,
                           DW_TENSOR_MAX_DIMS);
  entry->ndim = json_array_get_length (shape);
  for (guint dim = 0; dim < entry->ndim; dim++)
    if (!json_uint (json_array_get_element (shape, dim), &entry->shape[dim]))
      return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                             "tensor '%s': key shape: element %u is not a non-negative integer",
                             key, dim);
  JsonArray *offsets = json_node_get_array (offsets_node);
  if (json_array_get_length (offsets) != 2
      || !json_uint (json_array_get_element (offsets, 0), &entry->begin)
      || !json_uint (json_array_get_element (offsets, 1), &entry->end) || entry->begin > entry->end)
    return st_header_fail (
      error, src, DW_BATCH_ERROR_CORRUPT,
      "tensor '%s': key data_offsets: must be [begin, end] with 0 <= begin <= end", key);
  if (entry->end > data_length)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name,
                          "tensor '%s': data_offsets [%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                          "] end past the %" G_GUINT64_FORMAT
                          " bytes of data after the header (offset %" G_GUINT64_FORMAT
                          ": file truncated or still being written?)",
                          key, entry->begin, entry->end, data_length, src->size);
      return FALSE;
    }
  if (entry->known
      && (!dw_shape_product (entry->ndim, entry->shape, element_size, &count)
          || count * element_size != entry->end - entry->begin))
    {
      g_autofree char *shape_text = dw_shape_to_string (entry->ndim, entry->shape);
      return st_header_fail (
        error, src, DW_BATCH_ERROR_CORRUPT,
        "tensor '%s': shape %s of %s does not fit data_offsets [%" G_GUINT64_FORMAT
        ",%" G_GUINT64_FORMAT "] (%" G_GUINT64_FORMAT " bytes)",
        key, shape_text, dtype_name, entry->begin, entry->end, entry->end - entry->begin);
    }
  return TRUE;
}

/* phase 4: the entries, sorted, are contiguous, do not overlap and cover the data bytes */
static gboolean
st_check_coverage (const DwSource *src, GArray *entries, guint64 data_start, guint64 data_length,
                   GError **error)
{
  guint64 position = 0;
  g_array_sort (entries, cmp_entry);
  for (guint index = 0; index < entries->len; index++)
    {
      StEntry *entry = &g_array_index (entries, StEntry, index);
      if (entry->begin < position)
        return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                               "tensor '%s': data_offsets [%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                               "] overlap the previous tensor (which ends at %" G_GUINT64_FORMAT
                               ")",
                               entry->name, entry->begin, entry->end, position);
      if (entry->begin > position)
        return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                               "data bytes %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
                               " belong to no tensor (before '%s')",
                               position, entry->begin, entry->name);
      position = entry->end;
    }
  if (position != data_length)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_CORRUPT, src->name,
                          "offset %" G_GUINT64_FORMAT ": %" G_GUINT64_FORMAT
                          " bytes after the last tensor belong to no tensor",
                          data_start + position, data_length - position);
      return FALSE;
    }
  return TRUE;
}

/* phase 5: __metadata__'s step and layout, when given */
static gboolean
st_read_metadata (const DwSource *src, JsonObject *metadata, gint64 *step, char **layout,
                  GError **error)
{
  if (metadata == NULL)
    return TRUE;
  const char *step_text = json_object_get_string_member_with_default (metadata, "step", NULL);
  const char *layout_text = json_object_get_string_member_with_default (metadata, "layout", NULL);
  if (step_text)
    {
      char *end;
      gint64 value = g_ascii_strtoll (step_text, &end, 10);
      if (*step_text == '\0' || *end != '\0' || value < 0)
        return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                               "__metadata__ key 'step': '%s' is not a step", step_text);
      *step = value;
    }
  if (layout_text)
    {
      if (strcmp (layout_text, "padded") != 0 && strcmp (layout_text, "packed") != 0)
        return st_header_fail (error, src, DW_BATCH_ERROR_CORRUPT,
                               "__metadata__ key 'layout': '%s' (want 'padded' or 'packed')",
                               layout_text);
      *layout = g_strdup (layout_text);
    }
  return TRUE;
}

/* phase 6: a tensor for every wanted entry, its bytes mapped or read when the batch is built */
static gboolean
st_add_tensors (const DwSource *src, GArray *entries, guint64 data_start, GPtrArray *tensors,
                GError **error)
{
  for (guint index = 0; index < entries->len; index++)
    {
      StEntry *entry = &g_array_index (entries, StEntry, index);
      guint64 byte_count = entry->end - entry->begin;

      if (!dw_batch_tensor_wanted (entry->name))
        continue;
      if (entry->dtype == DW_N_DTYPES)
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_UNSUPPORTED_DTYPE, src->name,
                              "tensor '%s': 8-bit float dtypes are not supported", entry->name);
          return FALSE;
        }
      g_autofree char *where = g_strdup_printf ("tensor '%s' at offset %" G_GUINT64_FORMAT,
                                                entry->name, data_start + entry->begin);
      DwTensor *tensor = dw_tensor_new (entry->name, where);
      g_ptr_array_add (tensors, tensor);
      tensor->dtype = entry->dtype;
      tensor->ndim = entry->ndim;
      memcpy (tensor->shape, entry->shape, sizeof entry->shape);
      tensor->n_elems = byte_count / dw_dtype_size (entry->dtype);
      if (src->fd < 0)
        tensor->data = src->mem + data_start + entry->begin;
      else
        {
          /* read when the batch is built: straight into its arrays when the dtype matches */
          tensor->fill = dw_tensor_fill_from_source;
          tensor->fill_ctx = (gpointer)src;
          tensor->fill_offset = data_start + entry->begin;
        }
    }
  return TRUE;
}

DwBatch *
dw_safetensors_read (const DwSource *src, GError **error)
{
  g_autoptr (GPtrArray) tensors = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_tensor_free);
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  g_autoptr (GArray) entries = g_array_new (FALSE, TRUE, sizeof (StEntry));
  g_autofree char *layout = NULL;
  guint64 header_length = 0, wanted_bytes = 0;
  gint64 step = -1;
  JsonObject *metadata = NULL;
  JsonObjectIter iter;
  const char *key;
  JsonNode *node;

  g_autofree char *header = st_read_header_text (src, &header_length, error);
  if (header == NULL)
    return NULL;
  JsonObject *root = st_parse_header (src, parser, header, header_length, error);
  if (root == NULL)
    return NULL;
  const guint64 data_start = 8 + header_length, data_length = src->size - data_start;

  json_object_iter_init (&iter, root);
  while (json_object_iter_next (&iter, &key, &node))
    {
      StEntry entry;
      if (strcmp (key, "__metadata__") == 0)
        {
          if (!st_check_metadata (src, node, &metadata, error))
            return NULL;
          continue;
        }
      if (!st_parse_entry (src, key, node, data_length, &entry, error))
        return NULL;
      if (dw_batch_tensor_wanted (key))
        wanted_bytes += entry.end - entry.begin;
      g_array_append_val (entries, entry);
    }
  if (!st_check_coverage (src, entries, data_start, data_length, error))
    return NULL;
  if (wanted_bytes > dw_batch_reader_get_max_bytes ())
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                          "header: the batch tensors declare %" G_GUINT64_FORMAT
                          " bytes, more than the reader's limit of %" G_GUINT64_FORMAT,
                          wanted_bytes, dw_batch_reader_get_max_bytes ());
      return NULL;
    }
  if (!st_read_metadata (src, metadata, &step, &layout, error))
    return NULL;
  if (step < 0)
    step = dw_step_from_name (src->name);
  if (!st_add_tensors (src, entries, data_start, tensors, error))
    return NULL;
  return dw_batch_from_tensors (src->name, tensors, step, layout, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Writer                                                                                     */

static void
json_string (GString *s, const char *v)
{
  g_string_append_c (s, '"');
  for (const char *cursor = v; *cursor; cursor++)
    {
      guchar character = (guchar)*cursor;
      if (character == '"' || character == '\\')
        g_string_append_printf (s, "\\%c", character);
      else if (character < 0x20)
        g_string_append_printf (s, "\\u%04x", character);
      else
        g_string_append_c (s, (char)character);
    }
  g_string_append_c (s, '"');
}

typedef struct
{
  const char *name;
  DwDType dtype;
  guint ndim;
  guint64 shape[2];
  gconstpointer data;
  gsize nbytes;
} OutTensor;

/* Row lengths of the packed layout: each row is cut after its last non-zero mask element. */
static guint64 *
packed_lengths (const DwBatch *b)
{
  guint64 *cu_seqlens = g_new0 (guint64, b->rows + 1);
  for (gsize row = 0; row < b->rows; row++)
    {
      gsize len = 0;
      for (gsize col = b->cols; col > 0; col--)
        if (dw_batch_mask_value (b, row * b->cols + col - 1) != 0)
          {
            len = col;
            break;
          }
      cu_seqlens[row + 1] = cu_seqlens[row] + len;
    }
  return cu_seqlens;
}

static gpointer
pack (const void *src, gsize es, const DwBatch *b, const guint64 *cu)
{
  guint8 *out = g_malloc (cu[b->rows] * es + 1);
  for (gsize row = 0; row < b->rows; row++)
    memcpy (out + cu[row] * es, (const guint8 *)src + row * b->cols * es,
            (cu[row + 1] - cu[row]) * es);
  return out;
}

/* The __metadata__ object of the header: ours first, then the caller's (which may not override
 * format/version/layout, nor step when the batch has one). */
static void
dw_batch_safetensors_append_metadata (GString *h, const DwBatch *batch, gboolean packed,
                                      GHashTable *extra_metadata)
{
  g_string_append_printf (h,
                          "\"format\":\"rlmon.rollout_batch\",\"version\":\"1\",\"layout\":\"%s\"",
                          packed ? "packed" : "padded");
  if (batch->step >= 0)
    g_string_append_printf (h, ",\"step\":\"%" G_GINT64_FORMAT "\"", batch->step);
  if (extra_metadata)
    {
      gpointer key, value;
      g_autoptr (GList) keys = g_hash_table_get_keys (extra_metadata);
      keys = g_list_sort (keys, (GCompareFunc)strcmp);
      for (GList *link = keys; link; link = link->next)
        {
          key = link->data;
          if (strcmp (key, "format") == 0 || strcmp (key, "version") == 0
              || strcmp (key, "layout") == 0 || (strcmp (key, "step") == 0 && batch->step >= 0))
            continue;
          value = g_hash_table_lookup (extra_metadata, key);
          g_string_append_c (h, ',');
          json_string (h, key);
          g_string_append_c (h, ':');
          json_string (h, value);
        }
    }
  g_string_append (h, "}");
}

gboolean
dw_batch_write_safetensors_full (const DwBatch *batch, const char *path, DwBatchWriteFlags flags,
                                 GHashTable *extra_metadata, GError **error)
{
  g_autoptr (GString) h = g_string_new ("{\"__metadata__\":{");
  g_autoptr (GByteArray) out = NULL;
  g_autoptr (GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);
  g_autofree guint64 *cu_seqlens = NULL;
  OutTensor outputs[7];
  guint n_out = 0;
  gsize lps, mask_size, count, offset = 0;
  gboolean packed = (flags & DW_BATCH_WRITE_PACKED) != 0;

  g_return_val_if_fail (batch != NULL && path != NULL, FALSE);
  if (!st_dtype_name (batch->lp_dtype) || !st_dtype_name (batch->mask_dtype))
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_UNSUPPORTED_DTYPE, path,
                          "safetensors has no dtype for %s/%s", dw_dtype_name (batch->lp_dtype),
                          dw_dtype_name (batch->mask_dtype));
      return FALSE;
    }
  lps = dw_dtype_size (batch->lp_dtype);
  mask_size = dw_dtype_size (batch->mask_dtype);
  count = batch->rows * batch->cols;

  dw_batch_safetensors_append_metadata (h, batch, packed, extra_metadata);

  if (packed)
    {
      guint64 ntok;
      cu_seqlens = packed_lengths (batch);
      ntok = cu_seqlens[batch->rows];
      outputs[n_out++] = (OutTensor){ "cu_seqlens",           DW_DTYPE_I64, 1,
                                      { batch->rows + 1, 0 }, cu_seqlens,   (batch->rows + 1) * 8 };
      if (batch->advantages)
        {
          g_ptr_array_add (owned, pack (batch->advantages, lps, batch, cu_seqlens));
          outputs[n_out++] = (OutTensor){ "advantages",
                                          batch->lp_dtype,
                                          1,
                                          { ntok, 0 },
                                          g_ptr_array_index (owned, owned->len - 1),
                                          ntok * lps };
        }
      g_ptr_array_add (owned, pack (batch->old_log_prob, lps, batch, cu_seqlens));
      outputs[n_out++] = (OutTensor){
        "old_log_prob", batch->lp_dtype, 1, { ntok, 0 }, g_ptr_array_index (owned, owned->len - 1),
        ntok * lps
      };
      g_ptr_array_add (owned, pack (batch->rollout_log_prob, lps, batch, cu_seqlens));
      outputs[n_out++] = (OutTensor){ "rollout_log_prob",
                                      batch->lp_dtype,
                                      1,
                                      { ntok, 0 },
                                      g_ptr_array_index (owned, owned->len - 1),
                                      ntok * lps };
      g_ptr_array_add (owned, pack (batch->response_mask, mask_size, batch, cu_seqlens));
      outputs[n_out++] = (OutTensor){ "response_mask",
                                      batch->mask_dtype,
                                      1,
                                      { ntok, 0 },
                                      g_ptr_array_index (owned, owned->len - 1),
                                      ntok * mask_size };
    }
  else
    {
      if (batch->advantages)
        outputs[n_out++]
          = (OutTensor){ "advantages",      batch->lp_dtype, 2, { batch->rows, batch->cols },
                         batch->advantages, count * lps };
      outputs[n_out++]
        = (OutTensor){ "old_log_prob",      batch->lp_dtype, 2, { batch->rows, batch->cols },
                       batch->old_log_prob, count * lps };
      outputs[n_out++]
        = (OutTensor){ "rollout_log_prob",           batch->lp_dtype,         2,
                       { batch->rows, batch->cols }, batch->rollout_log_prob, count * lps };
      outputs[n_out++]
        = (OutTensor){ "response_mask",      batch->mask_dtype, 2, { batch->rows, batch->cols },
                       batch->response_mask, count * mask_size };
    }
  if (batch->token_ids && packed)
    {
      guint64 ntok = cu_seqlens[batch->rows];
      g_ptr_array_add (owned, pack (batch->token_ids, sizeof (gint64), batch, cu_seqlens));
      outputs[n_out++] = (OutTensor){ "token_ids",
                                      DW_DTYPE_I64,
                                      1,
                                      { ntok, 0 },
                                      g_ptr_array_index (owned, owned->len - 1),
                                      ntok * sizeof (gint64) };
    }
  else if (batch->token_ids)
    outputs[n_out++]
      = (OutTensor){ "token_ids",      DW_DTYPE_I64,           2, { batch->rows, batch->cols },
                     batch->token_ids, count * sizeof (gint64) };
  if (batch->rewards)
    outputs[n_out++]
      = (OutTensor){ "rewards",          DW_DTYPE_F64,   1,
                     { batch->rows, 0 }, batch->rewards, batch->rows * sizeof (double) };
  for (guint index = 0; index < n_out; index++)
    {
      g_string_append_printf (h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", outputs[index].name,
                              st_dtype_name (outputs[index].dtype));
      for (guint dim = 0; dim < outputs[index].ndim; dim++)
        g_string_append_printf (h, "%s%" G_GUINT64_FORMAT, dim ? "," : "",
                                outputs[index].shape[dim]);
      g_string_append_printf (h, "],\"data_offsets\":[%" G_GSIZE_FORMAT ",%" G_GSIZE_FORMAT "]}",
                              offset, offset + outputs[index].nbytes);
      offset += outputs[index].nbytes;
    }
  g_string_append_c (h, '}');
  while (h->len % 8)
    g_string_append_c (h, ' ');

  out = g_byte_array_sized_new ((guint)MIN (8 + h->len + offset, G_MAXUINT));
  {
    guint8 len8[8];
    guint64 header_len = h->len;
    for (int index = 0; index < 8; index++)
      len8[index] = (guint8)(header_len >> (8 * index));
    g_byte_array_append (out, len8, 8);
  }
  g_byte_array_append (out, (const guint8 *)h->str, (guint)h->len);
  for (guint index = 0; index < n_out; index++)
    g_byte_array_append (out, outputs[index].data, (guint)outputs[index].nbytes);
  return dw_batch_write_file (path, out->data, out->len, error);
}

gboolean
dw_batch_write_safetensors (const DwBatch *batch, const char *path, GError **error)
{
  return dw_batch_write_safetensors_full (batch, path, DW_BATCH_WRITE_DEFAULT, NULL, error);
}
