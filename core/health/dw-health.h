/* dw-health.h — health rules over a run's series (shared by the GUI, `check` and `watch`)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

#include "dw-store.h"

G_BEGIN_DECLS

typedef enum
{
  DW_HEALTH_INFO = 0,
  DW_HEALTH_WARNING,
  DW_HEALTH_CRITICAL,
} DwHealthSeverity;

typedef struct
{
  char *rule_id;      /* stable id, e.g. "is-mean-range", "ess-low", "k3-kl-drift", "first-nan" */
  DwHealthSeverity severity;
  char *metric;       /* canonical metric the rule watched */
  char *tag;          /* the logged tag the value came from */
  gint64 first_step;  /* first step the rule fired on */
  gint64 last_step;   /* last step it was still firing (== first_step for one-off events) */
  double value;       /* the value at first_step */
  double threshold;   /* the bound that was crossed (NAN when not applicable) */
  char *title;        /* short, translatable: "Effective sample size below 0.3" */
  char *explanation;  /* what it means */
  char *advice;       /* what to try (the spec's troubleshooting advice) */
} DwHealthEvent;

void dw_health_event_free (DwHealthEvent *event);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwHealthEvent, dw_health_event_free)

/* Evaluates every rule on every relevant series of the run. Returns DwHealthEvent*, sorted by
 * first_step then severity (critical first); an empty array when the run is healthy. */
GPtrArray *dw_health_check_run (DwStore *store, gint64 run_id, GError **error);

G_END_DECLS
