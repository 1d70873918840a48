/* dw-pickle.h — a restricted, data-only unpickler for torch.save files (private to core/batch)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Reads the pickle opcodes (protocols 0–5) that torch.save and plain Python data produce and
 * builds a tree of values. Nothing is ever imported or called: the only globals given a meaning
 * are collections.OrderedDict (a dict), torch._utils._rebuild_tensor_v2 (a tensor description)
 * and the torch.*Storage types (persistent ids naming a data/<key> member). Any other global
 * becomes a DW_PICKLE_REFUSED value that records its name; calling it (REDUCE, NEWOBJ, BUILD)
 * yields the same refused value, its arguments are dropped. Limits: nesting depth, memory for
 * the value tree, memo and stack sizes; errors say "offset N: …" in data.pkl.
 */
#pragma once

#include <glib.h>

#include "dw-batch.h"

G_BEGIN_DECLS

#define DW_PICKLE_MAX_DEPTH 64

typedef enum
{
  DW_PICKLE_NONE,
  DW_PICKLE_BOOL,
  DW_PICKLE_INT,
  DW_PICKLE_FLOAT,
  DW_PICKLE_STR,  /* also bytes */
  DW_PICKLE_LIST, /* also sets */
  DW_PICKLE_TUPLE,
  DW_PICKLE_DICT,   /* also OrderedDict */
  DW_PICKLE_GLOBAL, /* an allowed global not yet called (a storage type, OrderedDict, …) */
  DW_PICKLE_STORAGE,
  DW_PICKLE_TENSOR,
  DW_PICKLE_REFUSED,
  DW_PICKLE_MARK, /* internal */
} DwPickleKind;

typedef struct _DwPickle DwPickle;
typedef struct _DwPickleValue DwPickleValue;

typedef struct
{
  DwDType dtype;
  const char *storage_key; /* member data/<key> */
  guint64 storage_numel;   /* elements, as declared by the persistent id */
  guint64 offset;          /* storage offset, elements */
  guint ndim;
  guint64 shape[8];
  guint64 stride[8];
  guint64 numel; /* product of shape */
} DwPickleTensor;

/* Parses @data (the whole data.pkl). @max_bytes bounds the memory of the value tree. */
DwPickle *dw_pickle_load (const char *name, const guint8 *data, gsize len, guint64 max_bytes,
                          GError **error);
void dw_pickle_free (DwPickle *pickle);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwPickle, dw_pickle_free)

const DwPickleValue *dw_pickle_get_root (const DwPickle *pickle);
/* "posix.system (offset 12)", … — globals met and refused, in order, without repeats. */
const GPtrArray *dw_pickle_get_refused (const DwPickle *pickle);

DwPickleKind dw_pickle_value_kind (const DwPickleValue *value);
/* For messages: "a list of 3", "a float32 tensor [2,5]", "refused global posix.system". */
char *dw_pickle_value_describe (const DwPickleValue *value);

/* Dict entry with a string key, or NULL. */
const DwPickleValue *dw_pickle_dict_lookup (const DwPickleValue *dict, const char *key);
guint dw_pickle_dict_size (const DwPickleValue *dict);
/* Key @i as a string (NULL if that key is not a string) and its value. */
const char *dw_pickle_dict_key (const DwPickleValue *dict, guint i);
const DwPickleValue *dw_pickle_dict_value (const DwPickleValue *dict, guint i);

/* Lists and tuples. Lists of plain numbers are stored compactly: their items have no
 * DwPickleValue, dw_pickle_seq_get() returns NULL for them; use dw_pickle_seq_number(). */
guint64 dw_pickle_seq_length (const DwPickleValue *seq);
const DwPickleValue *dw_pickle_seq_get (const DwPickleValue *seq, guint64 i);
gboolean dw_pickle_seq_number (const DwPickleValue *seq, guint64 i, double *out);

/* Scalars: numbers accept bool/int/float; ints accept bool/int (and integral floats). */
gboolean dw_pickle_value_number (const DwPickleValue *value, double *out);
gboolean dw_pickle_value_int (const DwPickleValue *value, gint64 *out);
const char *dw_pickle_value_str (const DwPickleValue *value);
const DwPickleTensor *dw_pickle_value_tensor (const DwPickleValue *value);
const char *dw_pickle_value_refused_name (const DwPickleValue *value);

G_END_DECLS
