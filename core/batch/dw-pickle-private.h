/* dw-pickle-private.h — the unpickler's values and arena, shared by dw-pickle.c (the values and
 * their public accessors) and dw-pickle-machine.c (the opcode interpreter, which builds them)
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

void dw_pickle_value_free (DwPickleValue *v);

G_END_DECLS
