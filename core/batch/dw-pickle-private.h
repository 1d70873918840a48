/* dw-pickle-private.h — the unpickler's values, arena and machine, shared by dw-pickle.c (the
 * public accessors) and dw-pickle-machine.c (the opcode interpreter)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Private to core/batch.
 */
#pragma once

#include "dw-batch-private.h"
#include "dw-pickle.h"

G_BEGIN_DECLS

struct _DwPickleValue
{
  DwPickleKind kind;
  guint depth;
  guint slot; /* index in the arena */
  gboolean memoized;
  union
  {
    gboolean b;
    gint64 i;
    double f;
    struct
    {
      char *s;
      gsize len;
    } str;
    struct
    {
      GPtrArray *items; /* DwPickleValue*, or NULL while the list is compact */
      GArray *nums;     /* double, while every element is a plain number */
      gboolean nums_int;
    } seq;
    struct
    {
      GPtrArray *keys;
      GPtrArray *vals;
    } dict;
    char *global; /* "module.name" for GLOBAL and REFUSED */
    struct
    {
      DwDType dtype;
      char *key;
      guint64 numel;
    } storage;
    DwPickleTensor tensor;
  } u;
};

struct _DwPickle
{
  GPtrArray *arena;
  GPtrArray *spare; /* released number structs, each keeping its (empty) arena slot */
  DwPickleValue *root;
  GPtrArray *refused;
  guint64 bytes;
  guint64 max_bytes;
};

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

void dw_pickle_value_free (DwPickleValue *v);

/* Runs the machine over data until STOP; the root value is left in pk->root. */
gboolean dw_pickle_machine_run (DwPickle *pk, const char *name, const guint8 *data, gsize len,
                                GError **error);

G_END_DECLS
