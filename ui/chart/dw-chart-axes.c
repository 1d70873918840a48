/* dw-chart-axes.c — where a chart axis puts its ticks and how it labels them (see the header)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define G_LOG_DOMAIN "dw-chart-axes"

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "dw-chart-axes.h"

/* 1, 2, 5 × a power of ten: the one nearest @raw */
static double
nice_step (double raw)
{
  double mag = pow (10, floor (log10 (raw)));
  double r = raw / mag;

  return (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
}

/* "1.5e-05" → "1.5e-5", "2e+06" → "2e6" */
static void
compact_exponent (char *buf)
{
  char *e = strchr (buf, 'e');
  char *src, *dst;

  if (e == NULL)
    return;
  dst = e + 1;
  src = e + 1;
  if (*src == '-')
    *dst++ = *src++;
  else if (*src == '+')
    src++;
  while (*src == '0' && src[1] != '\0')
    src++;
  memmove (dst, src, strlen (src) + 1);
}

void
dw_chart_axes_format (double value, double resolution, char *buf, gsize size)
{
  double mag = fabs (value);

  if (value == 0)
    {
      g_strlcpy (buf, "0", size);
      return;
    }
  if (!isfinite (value))
    {
      g_strlcpy (buf, isnan (value) ? "NaN" : value > 0 ? "∞" : "−∞", size);
      return;
    }
  if (!(resolution > 0))
    resolution = mag * 1e-4;
  if (mag >= 1e5 || mag < 1e-3)
    {
      /* mantissa digits: from the value's decade down to the resolution's */
      int digits = (int)floor (log10 (mag)) - (int)floor (log10 (resolution) + 1e-9);

      g_snprintf (buf, size, "%.*e", CLAMP (digits, 0, 16), value);
      compact_exponent (buf);
      return;
    }
  g_snprintf (buf, size, "%.*f", CLAMP ((int)ceil (-log10 (resolution) - 1e-9), 0, 17), value);
}

static guint
linear_ticks (double lo, double hi, double step, DwAxisTick *ticks, guint max)
{
  guint n = 0;

  for (double k = ceil (lo / step - 1e-9); k * step <= hi + step * 1e-9 && n < max; k++)
    {
      double v = k * step;

      ticks[n].value = fabs (v) < step * 1e-9 ? 0 : v;
      ticks[n].labelled = TRUE;
      dw_chart_axes_format (ticks[n].value, step, ticks[n].label, sizeof ticks[n].label);
      n++;
    }
  return n;
}

static guint
log_ticks (double lo, double hi, int target, DwAxisTick *ticks, guint max)
{
  double d0 = ceil (log10 (lo) - 1e-9), d1 = floor (log10 (hi) + 1e-9);
  int every = MAX (1, (int)ceil ((d1 - d0 + 1) / MAX (target, 1)));
  guint n = 0;

  for (double d = d0; d <= d1 && n < max; d++)
    {
      ticks[n].value = pow (10, d);
      /* labelled decades: multiples of @every, so the labels do not move while panning */
      ticks[n].labelled = ((long)d % every) == 0;
      if (d >= -3 && d <= 4)
        dw_chart_axes_format (ticks[n].value, ticks[n].value, ticks[n].label,
                              sizeof ticks[n].label);
      else
        g_snprintf (ticks[n].label, sizeof ticks[n].label, "1e%d", (int)d);
      n++;
    }
  return n;
}

/* the label of ±10^@decade: "0.01", "-100", "1e-6" */
static void
format_decade (double sign, int decade, char *buf, gsize size)
{
  if (decade >= -3 && decade <= 4)
    dw_chart_axes_format (sign * pow (10, decade), pow (10, decade), buf, size);
  else
    g_snprintf (buf, size, "%s1e%d", sign < 0 ? "-" : "", decade);
}

guint
dw_chart_axes_symlog_ticks (double lo, double hi, double linthresh, int target, DwAxisTick *ticks,
                            guint max)
{
  int first = (int)ceil (log10 (linthresh) - 1e-9);
  int top = (int)floor (log10 (MAX (fabs (lo), fabs (hi))) + 1e-9);
  int n_decades = 0, every;
  guint n = 0;

  if (!(hi > lo) || !(linthresh > 0) || top < first)
    return dw_chart_axes_ticks (DW_AXIS_LINEAR, lo, hi, target, ticks, max);
  for (int d = first; d <= top; d++)
    n_decades += (-pow (10, d) >= lo) + (pow (10, d) <= hi);
  /* labelled decades: multiples of @every counted down from the top, so the outermost shows */
  every = MAX (1, (int)ceil ((double)n_decades / MAX (target - 1, 1)));
  for (int side = -1; side <= 1; side += 2)
    for (int k = 0; k <= top - first && n < max; k++)
      {
        /* negative side from its outermost decade in, positive side from the innermost out */
        int d = side < 0 ? top - k : first + k;
        double value = side * pow (10, d);

        if (value < lo || value > hi)
          continue;
        ticks[n].value = value;
        ticks[n].labelled = (top - d) % every == 0;
        format_decade (side, d, ticks[n].label, sizeof ticks[n].label);
        n++;
        if (side < 0 && d == first && lo < 0 && hi >= 0 && n < max)
          {
            ticks[n].value = 0;
            ticks[n].labelled = TRUE;
            g_strlcpy (ticks[n].label, "0", sizeof ticks[n].label);
            n++;
          }
      }
  /* the range does not reach below -linthresh: 0 still goes before the positive decades */
  if (lo <= 0 && hi >= 0 && -pow (10, first) < lo && n < max)
    {
      memmove (ticks + 1, ticks, sizeof *ticks * MIN (n, max - 1));
      ticks[0].value = 0;
      ticks[0].labelled = TRUE;
      g_strlcpy (ticks[0].label, "0", sizeof ticks[0].label);
      n = MIN (n + 1, max);
    }
  return n;
}

static const double time_steps[]
  = { 1,   2,    5,    10,   15,    30,    60,    120,   300,    600,
      900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800 };

static double
time_step (double raw)
{
  for (guint i = 0; i < G_N_ELEMENTS (time_steps); i++)
    if (time_steps[i] >= raw)
      return time_steps[i];
  return nice_step (raw / 86400) * 86400;
}

static void
format_relative (double v, double step, char *buf, gsize size)
{
  /* counted in the unit of the spacing: 15 s steps in s, 5 min steps in m, … */
  double unit = step >= 86400 ? 86400 : step >= 3600 ? 3600 : step >= 60 ? 60 : 1;
  const char *suffix = unit == 86400  ? C_ ("days", "d")
                       : unit == 3600 ? C_ ("hours", "h")
                       : unit == 60   ? C_ ("minutes", "m")
                                      : C_ ("seconds", "s");
  double r = step / unit;
  int decimals = r >= 1 ? 0 : (int)ceil (-log10 (r) - 1e-9);

  g_snprintf (buf, size, "%.*f%s", CLAMP (decimals, 0, 6), v / unit, suffix);
}

static void
format_wall (double v, double step, char *buf, gsize size)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_local ((gint64)floor (v));
  g_autofree char *text = NULL;

  if (dt == NULL)
    {
      g_strlcpy (buf, "?", size);
      return;
    }
  text = g_date_time_format (dt, step >= 86400 ? "%b %d" : step >= 60 ? "%H:%M" : "%H:%M:%S");
  g_strlcpy (buf, text ? text : "?", size);
}

guint
dw_chart_axes_ticks (DwAxisKind kind, double lo, double hi, int target, DwAxisTick *ticks,
                     guint max)
{
  double span = hi - lo, step;
  guint n = 0;

  if (!(span > 0) || !isfinite (span) || max == 0)
    return 0;
  target = MAX (target, 1);
  switch (kind)
    {
    case DW_AXIS_LOG:
      if (lo > 0 && log10 (hi) - log10 (lo) >= 1.5)
        return log_ticks (lo, hi, target, ticks, max);
      return linear_ticks (lo, hi, nice_step (span / target), ticks, max);
    case DW_AXIS_STEP:
      step = MAX (1, nice_step (span / target));
      n = linear_ticks (lo, hi, step, ticks, max);
      for (guint i = 0; i < n; i++)
        {
          if (fabs (ticks[i].value) >= 1e6)
            dw_chart_axes_format (ticks[i].value / 1e6, step / 1e6, ticks[i].label,
                                  sizeof ticks[i].label - 1);
          else if (fabs (ticks[i].value) >= 1e4)
            dw_chart_axes_format (ticks[i].value / 1e3, step / 1e3, ticks[i].label,
                                  sizeof ticks[i].label - 1);
          else
            continue;
          strcat (ticks[i].label, fabs (ticks[i].value) >= 1e6 ? "M" : "k");
        }
      return n;
    case DW_AXIS_RELATIVE:
    case DW_AXIS_WALL_TIME:
      step = time_step (span / target);
      for (double k = ceil (lo / step - 1e-9); k * step <= hi + step * 1e-9 && n < max; k++)
        {
          ticks[n].value = k == 0 ? 0 : k * step; /* never "-0s" */
          ticks[n].labelled = TRUE;
          if (kind == DW_AXIS_RELATIVE)
            format_relative (ticks[n].value, step, ticks[n].label, sizeof ticks[n].label);
          else
            format_wall (ticks[n].value, step, ticks[n].label, sizeof ticks[n].label);
          n++;
        }
      return n;
    case DW_AXIS_LINEAR:
    default:
      return linear_ticks (lo, hi, nice_step (span / target), ticks, max);
    }
}
