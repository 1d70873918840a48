/* dw-pickle-machine.c — the restricted unpickler's machine: the stream, the stack, the memo, the
 * opcode interpreter (one function per opcode family) and dw_pickle_load, which runs it; the
 * values it builds and their accessors are in dw-pickle.c, below it
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The opcode meanings follow CPython's Lib/pickletools.py. The machine builds values only: no
 * global is ever imported or called (see dw-pickle.c and docs/FORMATS-BATCH.md).
 */
#include <math.h>
#include <string.h>

#include "dw-pickle-private.h"

typedef struct
{
  DwPickle *pk;
  const char *name;
  const guint8 *data;
  gsize len;
  gsize pos;
  gsize op_pos; /* offset of the opcode being run, for messages */
  GPtrArray *stack;
  GArray *marks;
  GHashTable *memo;
  GError **error;
} Machine;

static gboolean dw_pickle_machine_fail (Machine *m, DwBatchError code, const char *format, ...)
  G_GNUC_PRINTF (3, 4);

static gboolean
dw_pickle_machine_fail (Machine *m, DwBatchError code, const char *format, ...)
{
  va_list args;
  g_autofree char *msg = NULL;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  if (m->error && *m->error == NULL)
    dw_batch_set_error (m->error, code, m->name, "offset %" G_GSIZE_FORMAT ": %s", m->op_pos, msg);
  return FALSE;
}

/* Counts @n more bytes of value memory against the limit. */
static gboolean
dw_pickle_machine_charge (Machine *m, guint64 n)
{
  m->pk->bytes += n;
  if (m->pk->bytes > m->pk->max_bytes)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_TOO_LARGE,
                                   "the pickle needs more than %" G_GUINT64_FORMAT
                                   " bytes of memory to hold its values (the reader's limit)",
                                   m->pk->max_bytes);
  return TRUE;
}

static DwPickleValue *
dw_pickle_value_new (Machine *m, DwPickleKind kind)
{
  DwPickleValue *value;

  if (m->pk->spare->len > 0)
    {
      /* a number folded into a compact list gave back its struct and arena slot */
      guint slot;
      value = g_ptr_array_steal_index_fast (m->pk->spare, m->pk->spare->len - 1);
      slot = value->slot;
      memset (value, 0, sizeof *value);
      value->slot = slot;
      g_ptr_array_index (m->pk->arena, slot) = value;
      if (!dw_pickle_machine_charge (m, sizeof (DwPickleValue)))
        return NULL;
    }
  else
    {
      if (!dw_pickle_machine_charge (m, sizeof (DwPickleValue) + sizeof (gpointer)))
        return NULL;
      value = g_new0 (DwPickleValue, 1);
      value->slot = m->pk->arena->len;
      g_ptr_array_add (m->pk->arena, value);
    }
  value->kind = kind;
  if (kind == DW_PICKLE_LIST || kind == DW_PICKLE_TUPLE)
    value->u.seq.items = g_ptr_array_new ();
  else if (kind == DW_PICKLE_DICT)
    {
      value->u.dict.keys = g_ptr_array_new ();
      value->u.dict.vals = g_ptr_array_new ();
    }
  return value;
}

/* Frees a scalar that nothing else refers to (it was folded into a compact list). */
static void
dw_pickle_value_release (Machine *m, DwPickleValue *v)
{
  if (v->memoized)
    return;
  /* only plain numbers come here: nothing to free inside, keep the struct for the next value */
  g_ptr_array_index (m->pk->arena, v->slot) = NULL;
  g_ptr_array_add (m->pk->spare, v);
  m->pk->bytes -= sizeof (DwPickleValue); /* the arena slot stays charged */
}

static gboolean
dw_pickle_adopt_child (Machine *m, DwPickleValue *parent, const DwPickleValue *child)
{
  if (child->depth + 1 > parent->depth)
    parent->depth = child->depth + 1;
  if (parent->depth > DW_PICKLE_MAX_DEPTH)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                                   "containers nested deeper than %d levels (a training dump nests "
                                   "a handful)",
                                   DW_PICKLE_MAX_DEPTH);
  return TRUE;
}

static gboolean
dw_pickle_is_plain_number (const DwPickleValue *v)
{
  return !v->memoized
         && (v->kind == DW_PICKLE_FLOAT
             || (v->kind == DW_PICKLE_INT && v->u.i <= (G_GINT64_CONSTANT (1) << 53)
                 && v->u.i >= -(G_GINT64_CONSTANT (1) << 53)));
}

/* A compact list gets a real element: its numbers become values first. */
static gboolean
dw_pickle_seq_expand (Machine *m, DwPickleValue *seq)
{
  GArray *nums = seq->u.seq.nums;

  if (nums == NULL)
    return TRUE;
  seq->u.seq.nums = NULL;
  seq->u.seq.items = g_ptr_array_sized_new (nums->len + 1);
  for (guint index = 0; index < nums->len; index++)
    {
      double number = g_array_index (nums, double, index);
      DwPickleValue *v
        = dw_pickle_value_new (m, seq->u.seq.nums_int ? DW_PICKLE_INT : DW_PICKLE_FLOAT);
      if (!v || !dw_pickle_machine_charge (m, sizeof (gpointer)))
        {
          g_array_unref (nums);
          return FALSE;
        }
      if (seq->u.seq.nums_int)
        v->u.i = (gint64)number;
      else
        v->u.f = number;
      g_ptr_array_add (seq->u.seq.items, v);
    }
  g_array_unref (nums);
  return TRUE;
}

static gboolean
dw_pickle_seq_append (Machine *m, DwPickleValue *seq, DwPickleValue *item)
{
  gboolean empty = (seq->u.seq.items && seq->u.seq.items->len == 0) || seq->u.seq.nums;

  if (seq->kind == DW_PICKLE_LIST && empty && dw_pickle_is_plain_number (item)
      && (seq->u.seq.nums == NULL || seq->u.seq.nums_int == (item->kind == DW_PICKLE_INT)))
    {
      double number = item->kind == DW_PICKLE_INT ? (double)item->u.i : item->u.f;
      if (seq->u.seq.nums == NULL)
        {
          g_ptr_array_unref (seq->u.seq.items);
          seq->u.seq.items = NULL;
          seq->u.seq.nums = g_array_new (FALSE, FALSE, sizeof (double));
          seq->u.seq.nums_int = item->kind == DW_PICKLE_INT;
        }
      if (!dw_pickle_machine_charge (m, sizeof (double)))
        return FALSE;
      g_array_append_val (seq->u.seq.nums, number);
      dw_pickle_value_release (m, item);
      return TRUE;
    }
  if (!dw_pickle_seq_expand (m, seq) || !dw_pickle_machine_charge (m, sizeof (gpointer))
      || !dw_pickle_adopt_child (m, seq, item))
    return FALSE;
  g_ptr_array_add (seq->u.seq.items, item);
  return TRUE;
}

static gboolean
dw_pickle_dict_set (Machine *m, DwPickleValue *dict, DwPickleValue *key, DwPickleValue *val)
{
  if (!dw_pickle_machine_charge (m, 2 * sizeof (gpointer)) || !dw_pickle_adopt_child (m, dict, val))
    return FALSE;
  /* a repeated string key replaces the earlier value, as in Python */
  if (key->kind == DW_PICKLE_STR)
    for (guint index = 0; index < dict->u.dict.keys->len; index++)
      {
        DwPickleValue *existing_key = g_ptr_array_index (dict->u.dict.keys, index);
        if (existing_key->kind == DW_PICKLE_STR && existing_key->u.str.len == key->u.str.len
            && memcmp (existing_key->u.str.s, key->u.str.s, existing_key->u.str.len) == 0)
          {
            g_ptr_array_index (dict->u.dict.vals, index) = val;
            return TRUE;
          }
      }
  g_ptr_array_add (dict->u.dict.keys, key);
  g_ptr_array_add (dict->u.dict.vals, val);
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Reading the stream                                                                         */

static gboolean
dw_pickle_take (Machine *m, gsize n, const guint8 **out)
{
  if (n > m->len - m->pos)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_TRUNCATED,
                                   "the pickle ends inside an opcode (needs %" G_GSIZE_FORMAT
                                   " more bytes, %" G_GSIZE_FORMAT " left)",
                                   n, m->len - m->pos);
  *out = m->data + m->pos;
  m->pos += n;
  return TRUE;
}

static gboolean
dw_pickle_take_uint (Machine *m, guint width, guint64 *out)
{
  const guint8 *bytes = NULL;
  guint64 value = 0;

  if (!dw_pickle_take (m, width, &bytes))
    return FALSE;
  for (guint index = 0; index < width; index++)
    value |= (guint64)bytes[index] << (8 * index);
  *out = value;
  return TRUE;
}

/* A text line (protocol 0 arguments), without its newline. */
static gboolean
dw_pickle_take_line (Machine *m, char **out)
{
  const guint8 *start = m->data + m->pos;
  const guint8 *nl = memchr (start, '\n', m->len - m->pos);

  if (nl == NULL || nl - start > 4096)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "text argument without a newline");
  *out = g_strndup ((const char *)start, (gsize)(nl - start));
  m->pos += (gsize)(nl - start) + 1;
  return TRUE;
}

static gboolean
dw_pickle_push (Machine *m, DwPickleValue *v)
{
  if (v == NULL)
    return FALSE;
  /* the stack holds values already charged; its own size is bounded by their number */
  g_ptr_array_add (m->stack, v);
  return TRUE;
}

static DwPickleValue *
dw_pickle_pop (Machine *m)
{
  DwPickleValue *value;
  guint floor = m->marks->len ? g_array_index (m->marks, guint, m->marks->len - 1) : 0;

  if (m->stack->len <= floor)
    {
      dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "stack underflow");
      return NULL;
    }
  value = g_ptr_array_index (m->stack, m->stack->len - 1);
  g_ptr_array_set_size (m->stack, m->stack->len - 1);
  return value;
}

static DwPickleValue *
dw_pickle_top (Machine *m)
{
  guint floor = m->marks->len ? g_array_index (m->marks, guint, m->marks->len - 1) : 0;

  if (m->stack->len <= floor)
    {
      dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "stack underflow");
      return NULL;
    }
  return g_ptr_array_index (m->stack, m->stack->len - 1);
}

/* Start of the items above the last MARK; the mark is removed. */
static gboolean
dw_pickle_pop_mark (Machine *m, guint *start)
{
  if (m->marks->len == 0)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "no MARK on the stack");
  *start = g_array_index (m->marks, guint, m->marks->len - 1);
  g_array_set_size (m->marks, m->marks->len - 1);
  if (*start > m->stack->len) /* stale: items below it were popped since (POP, a build) */
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "MARK above the top of the stack");
  return TRUE;
}

static gboolean
dw_pickle_push_str (Machine *m, gsize n, gboolean is_text)
{
  const guint8 *bytes = NULL;
  DwPickleValue *value;

  if (!dw_pickle_take (m, n, &bytes) || !dw_pickle_machine_charge (m, n + 1))
    return FALSE;
  if (is_text && !g_utf8_validate ((const char *)bytes, (gssize)n, NULL))
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "string is not valid UTF-8");
  value = dw_pickle_value_new (m, DW_PICKLE_STR);
  if (!value)
    return FALSE;
  value->u.str.s = g_strndup ((const char *)bytes, n);
  value->u.str.len = n;
  if (n && memchr (bytes, 0, n))
    memcpy (value->u.str.s, bytes, n); /* g_strndup stopped at the NUL */
  return dw_pickle_push (m, value);
}

static gboolean
dw_pickle_push_int (Machine *m, gint64 i)
{
  DwPickleValue *value = dw_pickle_value_new (m, DW_PICKLE_INT);
  if (!value)
    return FALSE;
  value->u.i = i;
  return dw_pickle_push (m, value);
}

/* LONG1/LONG4: little-endian two's complement of @n bytes; more than 8 do not fit. */
static gboolean
dw_pickle_push_long (Machine *m, gsize n)
{
  const guint8 *position = NULL;
  guint64 number = 0;

  if (!dw_pickle_take (m, n, &position))
    return FALSE;
  if (n > 8)
    {
      /* accept only sign extension beyond 8 bytes */
      guint8 ext = (position[7] & 0x80) ? 0xff : 0x00;
      for (gsize index = 8; index < n; index++)
        if (position[index] != ext)
          return dw_pickle_machine_fail (
            m, DW_BATCH_ERROR_CORRUPT,
            "integer of %" G_GSIZE_FORMAT " bytes does not fit in 64 bits", n);
      n = 8;
    }
  for (gsize index = 0; index < n; index++)
    number |= (guint64)position[index] << (8 * index);
  if (n > 0 && n < 8 && (position[n - 1] & 0x80))
    number |= ~G_GUINT64_CONSTANT (0) << (8 * n);
  return dw_pickle_push_int (m, (gint64)number);
}

/* ------------------------------------------------------------------------------------------ */
/* Globals: the only meanings a global can have                                               */

static const struct
{
  const char *name;
  DwDType dtype;
} storage_types[] = {
  { "FloatStorage", DW_DTYPE_F32 }, { "DoubleStorage", DW_DTYPE_F64 },
  { "HalfStorage", DW_DTYPE_F16 },  { "BFloat16Storage", DW_DTYPE_BF16 },
  { "LongStorage", DW_DTYPE_I64 },  { "IntStorage", DW_DTYPE_I32 },
  { "ShortStorage", DW_DTYPE_I16 }, { "CharStorage", DW_DTYPE_I8 },
  { "ByteStorage", DW_DTYPE_U8 },   { "BoolStorage", DW_DTYPE_BOOL },
};

static const char *const allowed_globals[] = {
  "collections.OrderedDict",
  "torch._utils._rebuild_tensor_v2",
  "torch._utils._rebuild_tensor",
};

static gboolean
dw_pickle_storage_dtype (const char *global, DwDType *dtype)
{
  if (!g_str_has_prefix (global, "torch."))
    return FALSE;
  for (guint index = 0; index < G_N_ELEMENTS (storage_types); index++)
    if (strcmp (global + 6, storage_types[index].name) == 0)
      {
        *dtype = storage_types[index].dtype;
        return TRUE;
      }
  return FALSE;
}

static gboolean
dw_pickle_push_global (Machine *m, const char *module, const char *name)
{
  g_autofree char *full = g_strdup_printf ("%s.%s", module, name);
  gboolean allowed = FALSE;
  DwDType dtype;
  DwPickleValue *value;

  for (guint index = 0; index < G_N_ELEMENTS (allowed_globals); index++)
    allowed = allowed || strcmp (full, allowed_globals[index]) == 0;
  allowed = allowed || dw_pickle_storage_dtype (full, &dtype);
  if (!allowed)
    {
      g_autofree char *note = g_strdup_printf ("%s (offset %" G_GSIZE_FORMAT ")", full, m->op_pos);
      gboolean seen = FALSE;
      for (guint index = 0; index < m->pk->refused->len; index++)
        {
          const char *known = g_ptr_array_index (m->pk->refused, index);
          seen = seen || (g_str_has_prefix (known, full) && known[strlen (full)] == ' ');
        }
      if (!seen && m->pk->refused->len < 64)
        g_ptr_array_add (m->pk->refused, g_steal_pointer (&note));
    }
  value = dw_pickle_value_new (m, allowed ? DW_PICKLE_GLOBAL : DW_PICKLE_REFUSED);
  if (!value || !dw_pickle_machine_charge (m, strlen (full) + 1))
    return FALSE;
  value->u.global = g_steal_pointer (&full);
  return dw_pickle_push (m, value);
}

static gboolean
dw_pickle_tuple_of_uints (const DwPickleValue *t, guint max, guint *n, guint64 *out)
{
  guint64 len;

  if (t->kind != DW_PICKLE_TUPLE && t->kind != DW_PICKLE_LIST)
    return FALSE;
  len = dw_pickle_seq_length (t);
  if (len > max)
    return FALSE;
  for (guint64 index = 0; index < len; index++)
    {
      double number;
      if (!dw_pickle_seq_number (t, index, &number) || number < 0 || number != floor (number)
          || number > 9.0e15)
        return FALSE;
      out[index] = (guint64)number;
    }
  *n = (guint)len;
  return TRUE;
}

/* torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
 * backward_hooks[, metadata]) → a tensor description, checked against its storage. */
static DwPickleValue *
dw_pickle_rebuild_tensor (Machine *m, const DwPickleValue *args)
{
  const DwPickleValue *storage, *size, *stride, *offset;
  DwPickleTensor t = { 0 };
  guint nstride = 0;
  guint64 last = 0;
  gint64 off;
  DwPickleValue *value;

  if (args->kind != DW_PICKLE_TUPLE || dw_pickle_seq_length (args) < 4)
    {
      dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                              "_rebuild_tensor_v2 needs (storage, offset, size, stride, …)");
      return NULL;
    }
  storage = dw_pickle_seq_get (args, 0);
  offset = dw_pickle_seq_get (args, 1);
  size = dw_pickle_seq_get (args, 2);
  stride = dw_pickle_seq_get (args, 3);
  if (storage == NULL || storage->kind != DW_PICKLE_STORAGE)
    {
      dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                              "_rebuild_tensor_v2: argument 0 is not a storage");
      return NULL;
    }
  if (offset == NULL || !dw_pickle_value_int (offset, &off) || off < 0)
    {
      dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "_rebuild_tensor_v2: bad storage offset");
      return NULL;
    }
  if (size == NULL || stride == NULL || !dw_pickle_tuple_of_uints (size, 8, &t.ndim, t.shape)
      || !dw_pickle_tuple_of_uints (stride, 8, &nstride, t.stride) || nstride != t.ndim)
    {
      dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                              "_rebuild_tensor_v2: size and stride must be tuples of at most 8 "
                              "non-negative integers of the same length");
      return NULL;
    }
  t.dtype = storage->u.storage.dtype;
  t.storage_numel = storage->u.storage.numel;
  t.offset = (guint64)off;
  if (!dw_shape_product (t.ndim, t.shape, dw_dtype_size (t.dtype), &t.numel))
    {
      dw_pickle_machine_fail (m, DW_BATCH_ERROR_TOO_LARGE, "tensor size overflows");
      return NULL;
    }
  if (t.numel > 0)
    {
      last = t.offset;
      for (guint index = 0; index < t.ndim; index++)
        {
          /* each term < 2^53 · 2^53 would overflow: bound by the storage first */
          if (t.shape[index] - 1 > 0 && t.stride[index] > t.storage_numel)
            {
              last = G_MAXUINT64;
              break;
            }
          last += (t.shape[index] - 1) * t.stride[index];
        }
      if (last >= t.storage_numel)
        {
          g_autofree char *shape = dw_shape_to_string (t.ndim, t.shape);
          dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                                  "tensor %s at offset %" G_GUINT64_FORMAT
                                  " reaches past its storage '%s' of %" G_GUINT64_FORMAT
                                  " elements",
                                  shape, t.offset, storage->u.storage.key, t.storage_numel);
          return NULL;
        }
    }
  value = dw_pickle_value_new (m, DW_PICKLE_TENSOR);
  if (!value)
    return NULL;
  t.storage_key = g_strdup (storage->u.storage.key);
  value->u.tensor = t;
  return value;
}

/* REDUCE / NEWOBJ: only allowed globals mean something; anything else stays refused. */
static gboolean
dw_pickle_op_call (Machine *m, DwPickleValue *callable, DwPickleValue *args)
{
  DwPickleValue *item;

  if (callable->kind == DW_PICKLE_REFUSED)
    return dw_pickle_push (m, callable);
  if (callable->kind != DW_PICKLE_GLOBAL)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                                   "call of a value that is not a global");
  if (strcmp (callable->u.global, "collections.OrderedDict") == 0)
    {
      item = dw_pickle_value_new (m, DW_PICKLE_DICT);
      if (!item)
        return FALSE;
      /* OrderedDict([(k, v), …]) */
      if (args->kind == DW_PICKLE_TUPLE && dw_pickle_seq_length (args) == 1)
        {
          const DwPickleValue *pairs = dw_pickle_seq_get (args, 0);
          for (guint64 index = 0;
               pairs && pairs->u.seq.items && index < dw_pickle_seq_length (pairs); index++)
            {
              const DwPickleValue *pair = dw_pickle_seq_get (pairs, index);
              if (pair && pair->kind == DW_PICKLE_TUPLE && pair->u.seq.items
                  && pair->u.seq.items->len == 2
                  && !dw_pickle_dict_set (m, item, g_ptr_array_index (pair->u.seq.items, 0),
                                          g_ptr_array_index (pair->u.seq.items, 1)))
                return FALSE;
            }
        }
      return dw_pickle_push (m, item);
    }
  if (g_str_has_prefix (callable->u.global, "torch._utils._rebuild_tensor"))
    return dw_pickle_push (m, dw_pickle_rebuild_tensor (m, args));
  /* a storage type called directly (never done by torch.save): not data */
  return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "%s cannot be called here",
                                 callable->u.global);
}

/* BINPERSID: ('storage', torch.XStorage, key, location, numel) */
static gboolean
dw_pickle_op_persid (Machine *m, DwPickleValue *pid)
{
  const DwPickleValue *tag, *type, *key, *numel;
  DwDType dtype;
  gint64 count;
  DwPickleValue *value;

  if (pid->kind != DW_PICKLE_TUPLE || dw_pickle_seq_length (pid) != 5
      || (tag = dw_pickle_seq_get (pid, 0)) == NULL || dw_pickle_value_str (tag) == NULL
      || strcmp (dw_pickle_value_str (tag), "storage") != 0)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                                   "persistent id is not ('storage', type, key, location, numel)");
  type = dw_pickle_seq_get (pid, 1);
  key = dw_pickle_seq_get (pid, 2);
  numel = dw_pickle_seq_get (pid, 4);
  if (type == NULL || type->kind == DW_PICKLE_REFUSED)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_UNSUPPORTED_DTYPE,
                                   "storage type %s is not one of the tensor storage types",
                                   type ? type->u.global : "?");
  if (type->kind != DW_PICKLE_GLOBAL || !dw_pickle_storage_dtype (type->u.global, &dtype))
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_UNSUPPORTED_DTYPE,
                                   "storage type is not a torch.*Storage global");
  if (key == NULL || dw_pickle_value_str (key) == NULL || strchr (key->u.str.s, '/') != NULL
      || key->u.str.len == 0 || key->u.str.len > 64)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "storage key is not a plain name");
  if (numel == NULL || !dw_pickle_value_int (numel, &count) || count < 0)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                                   "storage size is not a non-negative integer");
  if ((guint64)count > dw_batch_reader_get_max_bytes () / dw_dtype_size (dtype))
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_TOO_LARGE,
                                   "storage '%s' declares %" G_GINT64_FORMAT
                                   " elements, more than the reader's limit of %" G_GUINT64_FORMAT
                                   " bytes",
                                   key->u.str.s, count, dw_batch_reader_get_max_bytes ());
  value = dw_pickle_value_new (m, DW_PICKLE_STORAGE);
  if (!value)
    return FALSE;
  value->u.storage.dtype = dtype;
  value->u.storage.key = g_strdup (key->u.str.s);
  value->u.storage.numel = (guint64)count;
  return dw_pickle_push (m, value);
}

/* ------------------------------------------------------------------------------------------ */
/* The machine                                                                                */

static gboolean
dw_pickle_op_memo_put (Machine *m, guint64 index)
{
  DwPickleValue *value = dw_pickle_top (m);

  if (!value)
    return FALSE;
  if (g_hash_table_size (m->memo) >= m->len)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "memo larger than the pickle");
  if (!dw_pickle_machine_charge (m, 48))
    return FALSE;
  value->memoized = TRUE;
  g_hash_table_insert (m->memo, GSIZE_TO_POINTER ((gsize)index + 1), value);
  return TRUE;
}

static gboolean
dw_pickle_op_memo_get (Machine *m, guint64 index)
{
  DwPickleValue *value = g_hash_table_lookup (m->memo, GSIZE_TO_POINTER ((gsize)index + 1));

  if (!value)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                                   "memo key %" G_GUINT64_FORMAT " is not set", index);
  return dw_pickle_push (m, value);
}

static gboolean
dw_pickle_op_build_seq (Machine *m, DwPickleKind kind, guint start)
{
  DwPickleValue *value = dw_pickle_value_new (m, kind);

  if (!value)
    return FALSE;
  for (guint index = start; index < m->stack->len; index++)
    if (!dw_pickle_seq_append (m, value, g_ptr_array_index (m->stack, index)))
      return FALSE;
  g_ptr_array_set_size (m->stack, start);
  return dw_pickle_push (m, value);
}

static gboolean
dw_pickle_op_tuple_n (Machine *m, guint n)
{
  guint floor = m->marks->len ? g_array_index (m->marks, guint, m->marks->len - 1) : 0;

  if (m->stack->len < floor + n)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "stack underflow");
  return dw_pickle_op_build_seq (m, DW_PICKLE_TUPLE, m->stack->len - n);
}

static gboolean
dw_pickle_op_appends (Machine *m, guint start)
{
  DwPickleValue *list;

  if (start == 0)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "APPENDS without a list");
  list = g_ptr_array_index (m->stack, start - 1);
  if (list->kind == DW_PICKLE_REFUSED)
    {
      g_ptr_array_set_size (m->stack, start);
      return TRUE;
    }
  if (list->kind != DW_PICKLE_LIST)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "append to a non-list");
  for (guint index = start; index < m->stack->len; index++)
    if (!dw_pickle_seq_append (m, list, g_ptr_array_index (m->stack, index)))
      return FALSE;
  g_ptr_array_set_size (m->stack, start);
  return TRUE;
}

static gboolean
dw_pickle_op_setitems (Machine *m, guint start)
{
  DwPickleValue *dict;

  if (start == 0 || (m->stack->len - start) % 2 != 0)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                                   "SETITEMS without a dict or with an odd number of items");
  dict = g_ptr_array_index (m->stack, start - 1);
  if (dict->kind == DW_PICKLE_REFUSED)
    {
      g_ptr_array_set_size (m->stack, start);
      return TRUE;
    }
  if (dict->kind != DW_PICKLE_DICT)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "item assignment to a non-dict");
  for (guint index = start; index + 1 < m->stack->len; index += 2)
    if (!dw_pickle_dict_set (m, dict, g_ptr_array_index (m->stack, index),
                             g_ptr_array_index (m->stack, index + 1)))
      return FALSE;
  g_ptr_array_set_size (m->stack, start);
  return TRUE;
}

static gboolean
dw_pickle_op_simple_value (Machine *m, DwPickleKind kind, gint64 i)
{
  DwPickleValue *value = dw_pickle_value_new (m, kind);
  if (!value)
    return FALSE;
  value->u.i = i;
  if (kind == DW_PICKLE_BOOL)
    value->u.b = i != 0;
  return dw_pickle_push (m, value);
}

static gboolean
dw_pickle_op_text_number (Machine *m, gboolean is_float)
{
  g_autofree char *line = NULL;
  char *end = NULL;
  DwPickleValue *value;

  if (!dw_pickle_take_line (m, &line))
    return FALSE;
  if (!is_float)
    {
      gint64 index;
      if (strcmp (line, "00") == 0 || strcmp (line, "01") == 0)
        return dw_pickle_op_simple_value (m, DW_PICKLE_BOOL, line[1] == '1');
      if (g_str_has_suffix (line, "L"))
        line[strlen (line) - 1] = '\0';
      index = g_ascii_strtoll (line, &end, 10);
      if (end == line || *end)
        return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "bad integer literal");
      return dw_pickle_push_int (m, index);
    }
  value = dw_pickle_value_new (m, DW_PICKLE_FLOAT);
  if (!value)
    return FALSE;
  value->u.f = g_ascii_strtod (line, &end);
  if (end == line || *end)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "bad float literal");
  return dw_pickle_push (m, value);
}

static gboolean
dw_pickle_op_global_text (Machine *m)
{
  g_autofree char *module = NULL;
  g_autofree char *name = NULL;

  if (!dw_pickle_take_line (m, &module) || !dw_pickle_take_line (m, &name))
    return FALSE;
  return dw_pickle_push_global (m, module, name);
}

static gboolean
dw_pickle_op_stack_global (Machine *m)
{
  DwPickleValue *name = dw_pickle_pop (m), *module = name ? dw_pickle_pop (m) : NULL;

  if (!module || !dw_pickle_value_str (module) || !dw_pickle_value_str (name))
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "STACK_GLOBAL needs two strings");
  return dw_pickle_push_global (m, module->u.str.s, name->u.str.s);
}

/* The opcode families. Each runs the opcodes it knows and sets *handled to FALSE for the others,
 * so dw_pickle_machine_step can ask them in turn. */

/* PROTO, FRAME, STOP and the stack's own opcodes (MARK, POP, POP_MARK, DUP) */
static gboolean
dw_pickle_machine_step_control (Machine *m, guint8 op, gboolean *done, gboolean *handled)
{
  const guint8 *bytes = NULL;
  guint64 count;
  guint start;
  DwPickleValue *value;

  switch (op)
    {
    case 0x80: /* PROTO */
      if (!dw_pickle_take (m, 1, &bytes))
        return FALSE;
      if (*bytes > 5)
        return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "pickle protocol %d is unknown",
                                       *bytes);
      return TRUE;
    case 0x95: /* FRAME */
      return dw_pickle_take_uint (m, 8, &count);
    case '.': /* STOP */
      *done = TRUE;
      return TRUE;
    case '(': /* MARK */
      if (m->marks->len > 1u << 20)
        return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "too many MARKs");
      g_array_append_val (m->marks, m->stack->len);
      return dw_pickle_machine_charge (m, sizeof (guint));
    case '0': /* POP */
      return dw_pickle_pop (m) != NULL;
    case '1': /* POP_MARK */
      if (!dw_pickle_pop_mark (m, &start))
        return FALSE;
      g_ptr_array_set_size (m->stack, start);
      return TRUE;
    case '2': /* DUP: the value now has two owners, never fold it into a compact list */
      if ((value = dw_pickle_top (m)) == NULL)
        return FALSE;
      value->memoized = TRUE;
      return dw_pickle_push (m, value);
    default:
      *handled = FALSE;
      return FALSE;
    }
}

/* BINFLOAT: an IEEE double, big-endian */
static gboolean
dw_pickle_op_binfloat (Machine *m)
{
  const guint8 *bytes = NULL;
  guint64 bits = 0;
  double number;
  DwPickleValue *value;

  if (!dw_pickle_take (m, 8, &bytes))
    return FALSE;
  for (int index = 0; index < 8; index++)
    bits = bits << 8 | bytes[index];
  memcpy (&number, &bits, 8);
  value = dw_pickle_value_new (m, DW_PICKLE_FLOAT);
  if (!value)
    return FALSE;
  value->u.f = number;
  return dw_pickle_push (m, value);
}

/* None, booleans, integers and floats */
static gboolean
dw_pickle_machine_step_scalar (Machine *m, guint8 op, gboolean *handled)
{
  guint64 count;

  switch (op)
    {
    case 'N':
      return dw_pickle_op_simple_value (m, DW_PICKLE_NONE, 0);
    case 0x88: /* NEWTRUE */
    case 0x89: /* NEWFALSE */
      return dw_pickle_op_simple_value (m, DW_PICKLE_BOOL, op == 0x88);
    case 'I': /* INT */
    case 'L': /* LONG */
      return dw_pickle_op_text_number (m, FALSE);
    case 'F':
      return dw_pickle_op_text_number (m, TRUE);
    case 'J': /* BININT */
      return dw_pickle_take_uint (m, 4, &count) && dw_pickle_push_int (m, (gint32)(guint32)count);
    case 'K': /* BININT1 */
      return dw_pickle_take_uint (m, 1, &count) && dw_pickle_push_int (m, (gint64)count);
    case 'M': /* BININT2 */
      return dw_pickle_take_uint (m, 2, &count) && dw_pickle_push_int (m, (gint64)count);
    case 0x8a: /* LONG1 */
      return dw_pickle_take_uint (m, 1, &count) && dw_pickle_push_long (m, count);
    case 0x8b: /* LONG4 */
      return dw_pickle_take_uint (m, 4, &count) && dw_pickle_push_long (m, count);
    case 'G': /* BINFLOAT */
      return dw_pickle_op_binfloat (m);
    default:
      *handled = FALSE;
      return FALSE;
    }
}

/* text and byte strings, each with a length of 1, 4 or 8 bytes before it */
static gboolean
dw_pickle_machine_step_string (Machine *m, guint8 op, gboolean *handled)
{
  guint64 count;

  switch (op)
    {
    case 'X': /* BINUNICODE */
      return dw_pickle_take_uint (m, 4, &count) && dw_pickle_push_str (m, count, TRUE);
    case 0x8c: /* SHORT_BINUNICODE */
      return dw_pickle_take_uint (m, 1, &count) && dw_pickle_push_str (m, count, TRUE);
    case 0x8d: /* BINUNICODE8 */
      return dw_pickle_take_uint (m, 8, &count) && dw_pickle_push_str (m, count, TRUE);
    case 'T': /* BINSTRING */
    case 'B': /* BINBYTES */
      return dw_pickle_take_uint (m, 4, &count) && dw_pickle_push_str (m, count, FALSE);
    case 'U': /* SHORT_BINSTRING */
    case 'C': /* SHORT_BINBYTES */
      return dw_pickle_take_uint (m, 1, &count) && dw_pickle_push_str (m, count, FALSE);
    case 0x8e: /* BINBYTES8 */
      return dw_pickle_take_uint (m, 8, &count) && dw_pickle_push_str (m, count, FALSE);
    default:
      *handled = FALSE;
      return FALSE;
    }
}

/* DICT: the items above the mark become a new dict */
static gboolean
dw_pickle_op_dict (Machine *m)
{
  guint start;
  DwPickleValue *dict;

  if (!dw_pickle_pop_mark (m, &start)
      || !dw_pickle_push (m, dw_pickle_value_new (m, DW_PICKLE_DICT)))
    return FALSE;
  /* move the dict below its items, then SETITEMS */
  dict = g_ptr_array_steal_index (m->stack, m->stack->len - 1);
  g_ptr_array_insert (m->stack, (gint)start, dict);
  return dw_pickle_op_setitems (m, start + 1);
}

/* dicts, lists, sets and tuples: the empty ones, the built ones and the appends to them */
static gboolean
dw_pickle_machine_step_container (Machine *m, guint8 op, gboolean *handled)
{
  guint start;

  switch (op)
    {
    case '}':
      return dw_pickle_push (m, dw_pickle_value_new (m, DW_PICKLE_DICT));
    case ']':
    case 0x8f: /* EMPTY_SET */
      return dw_pickle_push (m, dw_pickle_value_new (m, DW_PICKLE_LIST));
    case ')':
      return dw_pickle_push (m, dw_pickle_value_new (m, DW_PICKLE_TUPLE));
    case 'd': /* DICT */
      return dw_pickle_op_dict (m);
    case 'l':  /* LIST */
    case 0x91: /* FROZENSET */
      return dw_pickle_pop_mark (m, &start) && dw_pickle_op_build_seq (m, DW_PICKLE_LIST, start);
    case 't': /* TUPLE */
      return dw_pickle_pop_mark (m, &start) && dw_pickle_op_build_seq (m, DW_PICKLE_TUPLE, start);
    case 0x85:
      return dw_pickle_op_tuple_n (m, 1);
    case 0x86:
      return dw_pickle_op_tuple_n (m, 2);
    case 0x87:
      return dw_pickle_op_tuple_n (m, 3);
    case 'a': /* APPEND */
      return m->stack->len >= 2 && dw_pickle_op_appends (m, m->stack->len - 1);
    case 'e':  /* APPENDS */
    case 0x90: /* ADDITEMS */
      return dw_pickle_pop_mark (m, &start) && dw_pickle_op_appends (m, start);
    case 's': /* SETITEM */
      return m->stack->len >= 3 && dw_pickle_op_setitems (m, m->stack->len - 2);
    case 'u': /* SETITEMS */
      return dw_pickle_pop_mark (m, &start) && dw_pickle_op_setitems (m, start);
    default:
      *handled = FALSE;
      return FALSE;
    }
}

/* PUT and GET: the memo index as a decimal line */
static gboolean
dw_pickle_op_memo_text (Machine *m, guint8 op)
{
  g_autofree char *line = NULL;
  char *end = NULL;
  guint64 index;

  if (!dw_pickle_take_line (m, &line))
    return FALSE;
  index = g_ascii_strtoull (line, &end, 10);
  if (end == line || *end)
    return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT, "bad memo index");
  return op == 'p' ? dw_pickle_op_memo_put (m, index) : dw_pickle_op_memo_get (m, index);
}

/* the memo: PUT, GET and their binary forms, MEMOIZE */
static gboolean
dw_pickle_machine_step_memo (Machine *m, guint8 op, gboolean *handled)
{
  guint64 index;

  switch (op)
    {
    case 'q': /* BINPUT */
      return dw_pickle_take_uint (m, 1, &index) && dw_pickle_op_memo_put (m, index);
    case 'r': /* LONG_BINPUT */
      return dw_pickle_take_uint (m, 4, &index) && dw_pickle_op_memo_put (m, index);
    case 0x94: /* MEMOIZE */
      return dw_pickle_op_memo_put (m, g_hash_table_size (m->memo));
    case 'h': /* BINGET */
      return dw_pickle_take_uint (m, 1, &index) && dw_pickle_op_memo_get (m, index);
    case 'j': /* LONG_BINGET */
      return dw_pickle_take_uint (m, 4, &index) && dw_pickle_op_memo_get (m, index);
    case 'p': /* PUT */
    case 'g': /* GET */
      return dw_pickle_op_memo_text (m, op);
    default:
      *handled = FALSE;
      return FALSE;
    }
}

/* globals, calls (REDUCE, NEWOBJ), BUILD and persistent ids; object instantiation is refused */
static gboolean
dw_pickle_machine_step_object (Machine *m, guint8 op, gboolean *handled)
{
  DwPickleValue *callable, *args, *kwargs, *pid;

  switch (op)
    {
    case 'c': /* GLOBAL */
      return dw_pickle_op_global_text (m);
    case 0x93: /* STACK_GLOBAL */
      return dw_pickle_op_stack_global (m);
    case 'R':  /* REDUCE */
    case 0x81: /* NEWOBJ */
      return (args = dw_pickle_pop (m)) != NULL && (callable = dw_pickle_pop (m)) != NULL
             && dw_pickle_op_call (m, callable, args);
    case 0x92: /* NEWOBJ_EX */
      return (kwargs = dw_pickle_pop (m)) != NULL && (args = dw_pickle_pop (m)) != NULL
             && (callable = dw_pickle_pop (m)) != NULL && dw_pickle_op_call (m, callable, args);
    case 'b': /* BUILD: state for an object; data objects here take none that matters */
      return dw_pickle_pop (m) != NULL && dw_pickle_top (m) != NULL;
    case 'Q': /* BINPERSID */
      return (pid = dw_pickle_pop (m)) != NULL && dw_pickle_op_persid (m, pid);
    case 'P': /* PERSID */
      return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                                     "text persistent ids are not torch's");
    case 'i': /* INST */
    case 'o': /* OBJ */
      return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                                     "protocol-0 object instantiation (INST/OBJ) is refused");
    default:
      *handled = FALSE;
      return FALSE;
    }
}

/* One opcode; *done at STOP. */
static gboolean
dw_pickle_machine_step (Machine *m, gboolean *done)
{
  const guint8 *bytes = NULL;
  gboolean handled = TRUE, success;
  guint8 op;

  m->op_pos = m->pos;
  if (!dw_pickle_take (m, 1, &bytes))
    return FALSE;
  op = *bytes;
  success = dw_pickle_machine_step_control (m, op, done, &handled);
  if (handled)
    return success;
  handled = TRUE;
  success = dw_pickle_machine_step_scalar (m, op, &handled);
  if (handled)
    return success;
  handled = TRUE;
  success = dw_pickle_machine_step_string (m, op, &handled);
  if (handled)
    return success;
  handled = TRUE;
  success = dw_pickle_machine_step_container (m, op, &handled);
  if (handled)
    return success;
  handled = TRUE;
  success = dw_pickle_machine_step_memo (m, op, &handled);
  if (handled)
    return success;
  handled = TRUE;
  success = dw_pickle_machine_step_object (m, op, &handled);
  if (handled)
    return success;
  return dw_pickle_machine_fail (m, DW_BATCH_ERROR_CORRUPT,
                                 "opcode 0x%02x is not a pickle opcode this reader accepts", op);
}

/* Runs the machine over data until STOP; the root value is left in pk->root. */
static gboolean
dw_pickle_machine_run (DwPickle *pk, const char *name, const guint8 *data, gsize len,
                       GError **error)
{
  Machine machine = { 0 };
  gboolean done = FALSE, success = TRUE;

  machine.pk = pk;
  machine.name = name;
  machine.data = data;
  machine.len = len;
  machine.stack = g_ptr_array_new ();
  machine.marks = g_array_new (FALSE, FALSE, sizeof (guint));
  machine.memo = g_hash_table_new (NULL, NULL);
  machine.error = error;
  while (success && !done)
    {
      if (machine.pos >= machine.len)
        {
          machine.op_pos = machine.pos;
          success = dw_pickle_machine_fail (&machine, DW_BATCH_ERROR_TRUNCATED,
                                            "the pickle ends without STOP");
          break;
        }
      success = dw_pickle_machine_step (&machine, &done);
    }
  if (success && machine.stack->len != 1)
    success
      = dw_pickle_machine_fail (&machine, DW_BATCH_ERROR_CORRUPT,
                                "STOP with %u values on the stack, not 1", machine.stack->len);
  if (success)
    pk->root = g_ptr_array_index (machine.stack, 0);
  else if (error && *error == NULL)
    dw_pickle_machine_fail (&machine, DW_BATCH_ERROR_CORRUPT, "malformed pickle");
  g_ptr_array_unref (machine.stack);
  g_array_unref (machine.marks);
  g_hash_table_unref (machine.memo);
  return success;
}

DwPickle *
dw_pickle_load (const char *name, const guint8 *data, gsize len, guint64 max_bytes, GError **error)
{
  g_autoptr (DwPickle) pk = g_new0 (DwPickle, 1);

  pk->arena = g_ptr_array_new ();
  pk->spare = g_ptr_array_new_with_free_func (g_free);
  pk->refused = g_ptr_array_new_with_free_func (g_free);
  pk->max_bytes = max_bytes;
  if (!dw_pickle_machine_run (pk, name, data, len, error))
    return NULL;
  return g_steal_pointer (&pk);
}
