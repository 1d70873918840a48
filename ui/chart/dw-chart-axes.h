/* dw-chart-axes.h — where a chart axis puts its ticks and how it labels them
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Ticks are chosen from the room the axis has (a target count) and labelled from their spacing,
 * so neighbouring labels always differ ("0.95, 1, 1.05", never "1, 1"): fixed notation with as
 * many decimals as the spacing needs, scientific notation for very large or small values
 * ("1.02e-5"), every decade on a log axis (labelled as often as there is room), integer steps,
 * and time in the unit its spacing is counted in (s, m, h, d; wall clock as HH:MM).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  DW_AXIS_LINEAR = 0,
  DW_AXIS_LOG,       /* values > 0; ticks at every decade when it spans two or more */
  DW_AXIS_STEP,      /* whole numbers only */
  DW_AXIS_RELATIVE,  /* seconds since the start */
  DW_AXIS_WALL_TIME, /* Unix seconds, labelled in local time */
} DwAxisKind;

#define DW_AXIS_LABEL_MAX 32

typedef struct
{
  double value;
  gboolean labelled; /* FALSE: a grid line only (decades between labelled ones) */
  char label[DW_AXIS_LABEL_MAX];
} DwAxisTick;

/* Fills @ticks (at most @max) for [@lo, @hi] with about @target labelled ticks; returns how
 * many. Labels of labelled ticks are unique. */
guint dw_chart_axes_ticks (DwAxisKind kind, double lo, double hi, int target, DwAxisTick *ticks,
                           guint max);

/* Ticks of a symmetric-log axis over [@lo, @hi] whose linear part is [-@linthresh, @linthresh]:
 * 0 and ±10^k for every decade from @linthresh outwards (labelled as often as about @target
 * labels allow, always 0 and the outermost decades kept apart); a range inside the linear part
 * gets linear ticks. Labels of labelled ticks are unique. */
guint dw_chart_axes_symlog_ticks (double lo, double hi, double linthresh, int target,
                                  DwAxisTick *ticks, guint max);

/* A value printed with enough digits to tell apart values @resolution apart (the hover read-out
 * uses it with the axis's tick spacing divided by 100). */
void dw_chart_axes_format (double value, double resolution, char *buf, gsize size);

G_END_DECLS
