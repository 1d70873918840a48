/* dw-ingest-report.c — what an ingest did: counts, diagnostics, notes, the runs that received data
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-ingester-private.h"

#include <string.h>

void
dw_ingest_report_init (DwIngestReport *report)
{
  memset (report, 0, sizeof *report);
  report->diagnostics = g_ptr_array_new_with_free_func (g_free);
  report->notes = g_ptr_array_new_with_free_func (g_free);
  report->run_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  report->incomplete = g_ptr_array_new_with_free_func (g_free);
}

void
dw_ingest_report_clear (DwIngestReport *report)
{
  g_clear_pointer (&report->diagnostics, g_ptr_array_unref);
  g_clear_pointer (&report->notes, g_ptr_array_unref);
  g_clear_pointer (&report->run_ids, g_array_unref);
  g_clear_pointer (&report->incomplete, g_ptr_array_unref);
  memset (report, 0, sizeof *report);
}

void
dw_ingester_report_note (DwIngestReport *report, const char *fmt, ...)
{
  va_list ap;

  if (report == NULL || report->notes == NULL)
    return;
  va_start (ap, fmt);
  g_ptr_array_add (report->notes, g_strdup_vprintf (fmt, ap));
  va_end (ap);
}

void
dw_ingester_report_run (DwIngestReport *report, gint64 run_id)
{
  if (report == NULL || report->run_ids == NULL)
    return;
  for (guint i = 0; i < report->run_ids->len; i++)
    if (g_array_index (report->run_ids, gint64, i) == run_id)
      return;
  g_array_append_val (report->run_ids, run_id);
}
