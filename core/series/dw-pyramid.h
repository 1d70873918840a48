/* dw-pyramid.h — min/max pyramid over a growing series, for per-pixel-column envelopes
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The pyramid keeps every value (never samples) and, per level, the min/max of blocks of
 * DW_PYRAMID_FANOUT^level values, so the exact min/max of any index range costs O(log N).
 * Non-finite values never enter min/max; they are recorded as flags, so a NaN or an infinity
 * is always visible to the caller.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define DW_PYRAMID_FANOUT 8

typedef enum
{
  DW_RANGE_HAS_NAN = 1 << 0,
  DW_RANGE_HAS_POSINF = 1 << 1,
  DW_RANGE_HAS_NEGINF = 1 << 2,
} DwRangeFlags;

typedef struct
{
  double min;  /* over finite values; +INFINITY when there is none */
  double max;  /* -INFINITY when there is none */
  guint flags; /* DwRangeFlags */
} DwRange;

/* One pixel column of an envelope: the points with x in [x_c, x_c+1). */
typedef struct
{
  gsize lo, hi;       /* index range, hi exclusive; empty when lo == hi */
  double min, max;    /* finite min / max, ±INFINITY when none */
  double first, last; /* raw values at lo and hi - 1 (may be non-finite) */
  guint flags;        /* DwRangeFlags */
} DwColumn;

typedef struct _DwPyramid DwPyramid;

DwPyramid *dw_pyramid_new (void);
void dw_pyramid_free (DwPyramid *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwPyramid, dw_pyramid_free)

gsize dw_pyramid_get_length (const DwPyramid *self);
const double *dw_pyramid_get_values (const DwPyramid *self);
/* Appends @n values; only the tail nodes of each level are recomputed. */
void dw_pyramid_append (DwPyramid *self, const double *values, gsize n);
/* Drops every value from index @length on (a restart rewrites steps). */
void dw_pyramid_truncate (DwPyramid *self, gsize length);
/* Bytes held by the pyramid (values + levels). */
gsize dw_pyramid_get_memory (const DwPyramid *self);

/* Exact min/max/flags of values [lo, hi). */
void dw_pyramid_range (const DwPyramid *self, gsize lo, gsize hi, DwRange *out);

/* Per-column envelopes of the visible range [x0, x1] over @width columns. @x holds the
 * non-decreasing x coordinate of every value (same length as the pyramid). */
void dw_pyramid_columns (const DwPyramid *self, const double *x, double x0, double x1, guint width,
                         DwColumn *columns);

/* First index i with x[i] >= @value (n when none). */
gsize dw_lower_bound (const double *x, gsize n, double value);

G_END_DECLS
