/* dw-pyramid.c — min/max pyramid
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-series"

#include "config.h"

#include "dw-pyramid.h"

#include <math.h>

#define B DW_PYRAMID_FANOUT

typedef struct
{
  GArray *min; /* double */
  GArray *max; /* double */
  GByteArray *flags;
} Level;

struct _DwPyramid
{
  GArray *values;    /* double, level 0 */
  GPtrArray *levels; /* Level*, levels[0] summarises blocks of B values */
};

static void
level_free (gpointer data)
{
  Level *level = data;

  g_array_unref (level->min);
  g_array_unref (level->max);
  g_byte_array_unref (level->flags);
  g_free (level);
}

static Level *
level_new (void)
{
  Level *level = g_new0 (Level, 1);

  level->min = g_array_new (FALSE, FALSE, sizeof (double));
  level->max = g_array_new (FALSE, FALSE, sizeof (double));
  level->flags = g_byte_array_new ();
  return level;
}

DwPyramid *
dw_pyramid_new (void)
{
  DwPyramid *self = g_new0 (DwPyramid, 1);

  self->values = g_array_new (FALSE, FALSE, sizeof (double));
  self->levels = g_ptr_array_new_with_free_func (level_free);
  return self;
}

void
dw_pyramid_free (DwPyramid *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->values);
  g_ptr_array_unref (self->levels);
  g_free (self);
}

gsize
dw_pyramid_get_length (const DwPyramid *self)
{
  return self->values->len;
}

const double *
dw_pyramid_get_values (const DwPyramid *self)
{
  return (const double *)(gpointer)self->values->data;
}

gsize
dw_pyramid_get_memory (const DwPyramid *self)
{
  gsize bytes = sizeof *self + self->values->len * sizeof (double);

  for (guint index = 0; index < self->levels->len; index++)
    {
      Level *level = g_ptr_array_index (self->levels, index);
      bytes += level->min->len * (2 * sizeof (double) + 1);
    }
  return bytes;
}

static inline void
take_value (double v, DwRange *r)
{
  if (isfinite (v))
    {
      if (v < r->min)
        r->min = v;
      if (v > r->max)
        r->max = v;
    }
  else if (isnan (v))
    r->flags |= DW_RANGE_HAS_NAN;
  else if (v > 0)
    r->flags |= DW_RANGE_HAS_POSINF;
  else
    r->flags |= DW_RANGE_HAS_NEGINF;
}

static inline void
take_node (const Level *level, gsize i, DwRange *r)
{
  double minimum = g_array_index (level->min, double, i);
  double maximum = g_array_index (level->max, double, i);

  if (minimum < r->min)
    r->min = minimum;
  if (maximum > r->max)
    r->max = maximum;
  r->flags |= level->flags->data[i];
}

/* Length of level @k (0 = values). */
static gsize
level_length (const DwPyramid *self, guint k)
{
  if (k == 0)
    return self->values->len;
  return ((Level *)g_ptr_array_index (self->levels, k - 1))->min->len;
}

/* Recomputes nodes of every level from the node covering value index @from_index on. */
static void
rebuild_tail (DwPyramid *self, gsize from_index)
{
  gsize child_len = self->values->len;
  gsize from = from_index;
  guint depth = 0;

  while (child_len > 1)
    {
      Level *level;
      gsize parent_len = (child_len + B - 1) / B;
      gsize first = from / B;

      if (depth >= self->levels->len)
        g_ptr_array_add (self->levels, level_new ());
      level = g_ptr_array_index (self->levels, depth);
      g_array_set_size (level->min, parent_len);
      g_array_set_size (level->max, parent_len);
      g_byte_array_set_size (level->flags, parent_len);

      for (gsize parent = first; parent < parent_len; parent++)
        {
          DwRange range = { INFINITY, -INFINITY, 0 };
          gsize end = MIN ((parent + 1) * B, child_len);

          if (depth == 0)
            for (gsize child_index = parent * B; child_index < end; child_index++)
              take_value (g_array_index (self->values, double, child_index), &range);
          else
            {
              Level *child = g_ptr_array_index (self->levels, depth - 1);
              for (gsize child_index = parent * B; child_index < end; child_index++)
                take_node (child, child_index, &range);
            }
          g_array_index (level->min, double, parent) = range.min;
          g_array_index (level->max, double, parent) = range.max;
          level->flags->data[parent] = range.flags;
        }
      child_len = parent_len;
      from = first;
      depth++;
    }
  /* Levels above the top are stale after a truncation. */
  if (self->levels->len > depth)
    g_ptr_array_set_size (self->levels, depth);
}

void
dw_pyramid_append (DwPyramid *self, const double *values, gsize n)
{
  gsize old = self->values->len;

  g_return_if_fail (self != NULL);
  if (n == 0)
    return;
  g_array_append_vals (self->values, values, n);
  rebuild_tail (self, old);
}

void
dw_pyramid_truncate (DwPyramid *self, gsize length)
{
  g_return_if_fail (self != NULL);
  if (length >= self->values->len)
    return;
  g_array_set_size (self->values, length);
  if (length == 0)
    g_ptr_array_set_size (self->levels, 0);
  else
    rebuild_tail (self, length - 1);
}

void
dw_pyramid_range (const DwPyramid *self, gsize lo, gsize hi, DwRange *out)
{
  guint depth = 0;
  guint n_levels = self->levels->len + 1;

  out->min = INFINITY;
  out->max = -INFINITY;
  out->flags = 0;
  hi = MIN (hi, self->values->len);

  while (lo < hi)
    {
      const Level *level = depth > 0 ? g_ptr_array_index (self->levels, depth - 1) : NULL;

      if (depth + 1 < n_levels && hi - lo >= 2 * B)
        {
          /* Peel the unaligned ends at this level, continue with whole blocks above. */
          while (lo < hi && lo % B != 0)
            {
              if (depth == 0)
                take_value (g_array_index (self->values, double, lo), out);
              else
                take_node (level, lo, out);
              lo++;
            }
          while (lo < hi && hi % B != 0 && hi != level_length (self, depth))
            {
              hi--;
              if (depth == 0)
                take_value (g_array_index (self->values, double, hi), out);
              else
                take_node (level, hi, out);
            }
          lo /= B;
          hi = (hi + B - 1) / B;
          depth++;
        }
      else
        {
          for (; lo < hi; lo++)
            {
              if (depth == 0)
                take_value (g_array_index (self->values, double, lo), out);
              else
                take_node (level, lo, out);
            }
        }
    }
}

gsize
dw_lower_bound (const double *x, gsize n, double value)
{
  gsize low = 0, high = n;

  while (low < high)
    {
      gsize mid = low + (high - low) / 2;
      if (x[mid] < value)
        low = mid + 1;
      else
        high = mid;
    }
  return low;
}

void
dw_pyramid_columns (const DwPyramid *self, const double *x, double x0, double x1, guint width,
                    DwColumn *columns)
{
  gsize count = self->values->len;
  const double *value = dw_pyramid_get_values (self);
  double delta = (x1 - x0) / width;
  gsize low;

  g_return_if_fail (width > 0);
  low = dw_lower_bound (x, count, x0);
  for (guint column_index = 0; column_index < width; column_index++)
    {
      DwColumn *col = &columns[column_index];
      gsize high;
      DwRange range;

      if (column_index + 1 == width) /* the last column includes x1 itself */
        high = low + dw_lower_bound (x + low, count - low, nextafter (x1, INFINITY));
      else
        high = low + dw_lower_bound (x + low, count - low, x0 + (column_index + 1) * delta);
      col->lo = low;
      col->hi = high;
      if (high > low)
        {
          dw_pyramid_range (self, low, high, &range);
          col->min = range.min;
          col->max = range.max;
          col->flags = range.flags;
          col->first = value[low];
          col->last = value[high - 1];
        }
      else
        {
          col->min = INFINITY;
          col->max = -INFINITY;
          col->flags = 0;
          col->first = col->last = NAN;
        }
      low = high;
    }
}
