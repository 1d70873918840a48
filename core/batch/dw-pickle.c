/* dw-pickle.c — a restricted, data-only unpickler for torch.save files
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Written here because Debian has no C library for restricted unpickling (see
 * docs/FORMATS-BATCH.md). The opcode meanings follow CPython's Lib/pickletools.py. The machine
 * builds values only: no global is ever imported or called. Values live in an arena freed at
 * once, so nothing here recurses over the tree (a hostile pickle may nest or even cycle through
 * the memo; consumers walk fixed paths). Plain number lists, which slime's rollout dumps are full
 * of, are stored as arrays of doubles, not one value per element.
 */
#include "dw-pickle.h"

#include <math.h>
#include <string.h>

#include "dw-pickle-private.h"

/* ------------------------------------------------------------------------------------------ */
/* Values                                                                                     */

void
dw_pickle_value_free (DwPickleValue *v)
{
  switch (v->kind)
    {
    case DW_PICKLE_STR:
      g_free (v->u.str.s);
      break;
    case DW_PICKLE_LIST:
    case DW_PICKLE_TUPLE:
      if (v->u.seq.items)
        g_ptr_array_unref (v->u.seq.items);
      if (v->u.seq.nums)
        g_array_unref (v->u.seq.nums);
      break;
    case DW_PICKLE_DICT:
      g_ptr_array_unref (v->u.dict.keys);
      g_ptr_array_unref (v->u.dict.vals);
      break;
    case DW_PICKLE_GLOBAL:
    case DW_PICKLE_REFUSED:
      g_free (v->u.global);
      break;
    case DW_PICKLE_STORAGE:
      g_free (v->u.storage.key);
      break;
    case DW_PICKLE_TENSOR:
      g_free ((char *)v->u.tensor.storage_key);
      break;
    case DW_PICKLE_NONE:
    case DW_PICKLE_BOOL:
    case DW_PICKLE_INT:
    case DW_PICKLE_FLOAT:
    case DW_PICKLE_MARK:
    default:
      break;
    }
  g_free (v);
}

void
dw_pickle_free (DwPickle *pickle)
{
  if (pickle == NULL)
    return;
  for (guint index = 0; index < pickle->arena->len; index++)
    if (g_ptr_array_index (pickle->arena, index))
      dw_pickle_value_free (g_ptr_array_index (pickle->arena, index));
  g_ptr_array_unref (pickle->arena);
  g_ptr_array_unref (pickle->spare);
  g_ptr_array_unref (pickle->refused);
  g_free (pickle);
}

/* ------------------------------------------------------------------------------------------ */
/* Accessors                                                                                  */

const DwPickleValue *
dw_pickle_get_root (const DwPickle *pickle)
{
  return pickle->root;
}

const GPtrArray *
dw_pickle_get_refused (const DwPickle *pickle)
{
  return pickle->refused;
}

DwPickleKind
dw_pickle_value_kind (const DwPickleValue *value)
{
  return value ? value->kind : DW_PICKLE_NONE;
}

char *
dw_pickle_value_describe (const DwPickleValue *value)
{
  if (value == NULL)
    return g_strdup ("nothing");
  switch (value->kind)
    {
    case DW_PICKLE_NONE:
      return g_strdup ("None");
    case DW_PICKLE_BOOL:
      return g_strdup (value->u.b ? "True" : "False");
    case DW_PICKLE_INT:
      return g_strdup_printf ("the integer %" G_GINT64_FORMAT, value->u.i);
    case DW_PICKLE_FLOAT:
      return g_strdup_printf ("the float %.17g", value->u.f);
    case DW_PICKLE_STR:
      return g_strdup ("a string");
    case DW_PICKLE_LIST:
    case DW_PICKLE_TUPLE:
      return g_strdup_printf ("a %s of %" G_GUINT64_FORMAT,
                              value->kind == DW_PICKLE_LIST ? "list" : "tuple",
                              dw_pickle_seq_length (value));
    case DW_PICKLE_DICT:
      return g_strdup_printf ("a dict of %u", value->u.dict.keys->len);
    case DW_PICKLE_GLOBAL:
      return g_strdup_printf ("the global %s", value->u.global);
    case DW_PICKLE_STORAGE:
      return g_strdup ("a bare storage");
    case DW_PICKLE_TENSOR:
      {
        g_autofree char *shape = dw_shape_to_string (value->u.tensor.ndim, value->u.tensor.shape);
        return g_strdup_printf ("a %s tensor %s", dw_dtype_name (value->u.tensor.dtype), shape);
      }
    case DW_PICKLE_REFUSED:
      return g_strdup_printf ("an object of the refused global %s (not executed)", value->u.global);
    case DW_PICKLE_MARK:
    default:
      return g_strdup ("?");
    }
}

const DwPickleValue *
dw_pickle_dict_lookup (const DwPickleValue *dict, const char *key)
{
  gsize klen = strlen (key);

  if (dict == NULL || dict->kind != DW_PICKLE_DICT)
    return NULL;
  for (guint index = 0; index < dict->u.dict.keys->len; index++)
    {
      const DwPickleValue *value = g_ptr_array_index (dict->u.dict.keys, index);
      if (value->kind == DW_PICKLE_STR && value->u.str.len == klen
          && memcmp (value->u.str.s, key, klen) == 0)
        return g_ptr_array_index (dict->u.dict.vals, index);
    }
  return NULL;
}

guint
dw_pickle_dict_size (const DwPickleValue *dict)
{
  return dict && dict->kind == DW_PICKLE_DICT ? dict->u.dict.keys->len : 0;
}

const char *
dw_pickle_dict_key (const DwPickleValue *dict, guint i)
{
  return dw_pickle_value_str (g_ptr_array_index (dict->u.dict.keys, i));
}

const DwPickleValue *
dw_pickle_dict_value (const DwPickleValue *dict, guint i)
{
  return g_ptr_array_index (dict->u.dict.vals, i);
}

guint64
dw_pickle_seq_length (const DwPickleValue *seq)
{
  if (seq == NULL || (seq->kind != DW_PICKLE_LIST && seq->kind != DW_PICKLE_TUPLE))
    return 0;
  return seq->u.seq.nums ? seq->u.seq.nums->len : seq->u.seq.items->len;
}

const DwPickleValue *
dw_pickle_seq_get (const DwPickleValue *seq, guint64 i)
{
  if (seq == NULL || (seq->kind != DW_PICKLE_LIST && seq->kind != DW_PICKLE_TUPLE)
      || seq->u.seq.items == NULL || i >= seq->u.seq.items->len)
    return NULL;
  return g_ptr_array_index (seq->u.seq.items, i);
}

gboolean
dw_pickle_seq_number (const DwPickleValue *seq, guint64 i, double *out)
{
  if (seq == NULL || (seq->kind != DW_PICKLE_LIST && seq->kind != DW_PICKLE_TUPLE))
    return FALSE;
  if (seq->u.seq.nums)
    {
      if (i >= seq->u.seq.nums->len)
        return FALSE;
      *out = g_array_index (seq->u.seq.nums, double, i);
      return TRUE;
    }
  return dw_pickle_value_number (dw_pickle_seq_get (seq, i), out);
}

gboolean
dw_pickle_value_number (const DwPickleValue *value, double *out)
{
  if (value == NULL)
    return FALSE;
  switch (value->kind)
    {
    case DW_PICKLE_BOOL:
      *out = value->u.b;
      return TRUE;
    case DW_PICKLE_INT:
      *out = (double)value->u.i;
      return TRUE;
    case DW_PICKLE_FLOAT:
      *out = value->u.f;
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
dw_pickle_value_int (const DwPickleValue *value, gint64 *out)
{
  if (value == NULL)
    return FALSE;
  if (value->kind == DW_PICKLE_INT)
    {
      *out = value->u.i;
      return TRUE;
    }
  if (value->kind == DW_PICKLE_BOOL)
    {
      *out = value->u.b;
      return TRUE;
    }
  if (value->kind == DW_PICKLE_FLOAT && value->u.f == floor (value->u.f)
      && fabs (value->u.f) < 9e15)
    {
      *out = (gint64)value->u.f;
      return TRUE;
    }
  return FALSE;
}

const char *
dw_pickle_value_str (const DwPickleValue *value)
{
  return value && value->kind == DW_PICKLE_STR ? value->u.str.s : NULL;
}

const DwPickleTensor *
dw_pickle_value_tensor (const DwPickleValue *value)
{
  return value && value->kind == DW_PICKLE_TENSOR ? &value->u.tensor : NULL;
}

const char *
dw_pickle_value_refused_name (const DwPickleValue *value)
{
  return value && value->kind == DW_PICKLE_REFUSED ? value->u.global : NULL;
}
