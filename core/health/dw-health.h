/* dw-health.h — health rules over a run's series (shared by the GUI, `check` and `watch`)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The rules work on plain (step, value) arrays of canonical metrics (dw-canonical.h), so they can
 * be unit-tested without a store and fed incrementally by a live follower (DwHealthMonitor:
 * only the new points are evaluated). dw_health_check_run() runs them over a stored run.
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
  char *rule_id; /* stable id, e.g. "is-mean-range", "ess-low", "k3-kl-drift", "first-nan" */
  DwHealthSeverity severity;
  char *metric;      /* canonical metric the rule watched */
  char *tag;         /* the logged tag the value came from */
  gint64 first_step; /* first step the rule fired on */
  gint64 last_step;  /* last step it was still firing (== first_step for one-off events) */
  double value;      /* the value at first_step */
  double threshold;  /* the bound that was crossed (NAN when not applicable) */
  char *title;       /* short, translatable: "Effective sample size below 0.3" */
  char *explanation; /* what it means */
  char *advice;      /* what to try (the spec's troubleshooting advice) */
  gint64 n_steps;    /* how many evaluated steps it fired on (1 for one-off events) */
} DwHealthEvent;

void dw_health_event_free (DwHealthEvent *event);
DwHealthEvent *dw_health_event_copy (const DwHealthEvent *event);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwHealthEvent, dw_health_event_free)

/* "info", "warning", "critical" (not translated: for JSON). */
const char *dw_health_severity_name (DwHealthSeverity severity);

/* ------------------------------------------------------------------------------------------ */
/* The rule table                                                                               */

typedef enum
{
  DW_HEALTH_RULE_ABOVE = 0, /* value > hi */
  DW_HEALTH_RULE_BELOW,     /* value < lo */
  DW_HEALTH_RULE_OUTSIDE,   /* value < lo || value > hi */
  DW_HEALTH_RULE_ABS_ABOVE, /* |value| > hi */
  DW_HEALTH_RULE_DRIFT,     /* trend: see below */
  DW_HEALTH_RULE_NONFINITE, /* first NaN / ±inf of any watched series */
} DwHealthRuleKind;

typedef enum
{
  DW_HEALTH_DRIFT_VALUE = 0, /* x = value */
  DW_HEALTH_DRIFT_ABS,       /* x = |value| */
  DW_HEALTH_DRIFT_ABS_LOG,   /* x = |ln value| (a ratio whose ideal is 1) */
} DwHealthDriftTransform;

/* A drift rule looks at x (the transformed value; non-finite points are skipped). Its baseline b is
 * the median of the first @baseline_points finite x and σ = 1.4826 · their median absolute
 * deviation from b. After that, at every new point:
 *   m = median of the last @window x,  s = Theil–Sen slope (median of pairwise slopes over steps)
 *   of the last @slope_window x; the point "drifts" when
 *   m > max (b · @factor, b + @min_delta, b + 3σ)  and  s > 0.
 * The rule fires on the @confirm-th consecutive drifting point (first_step = that step, value = m,
 * threshold = the bound m crossed). Medians and the Theil–Sen slope ignore isolated spikes, so a
 * healthy noisy series does not fire, while a growing one fires before it reaches the hard
 * thresholds. */
typedef struct
{
  DwHealthDriftTransform transform;
  guint baseline_points;
  guint window;
  guint slope_window;
  guint confirm;
  double factor;
  double min_delta;
} DwHealthDriftParams;

typedef struct
{
  const char *id;     /* stable rule id */
  const char *metric; /* canonical id it applies to; NULL = every canonical metric (nonfinite) */
  DwHealthRuleKind kind;
  DwHealthSeverity severity;
  double lo, hi;             /* thresholds (NAN when unused) */
  DwHealthDriftParams drift; /* DW_HEALTH_RULE_DRIFT only */
  const char *title;         /* N_() strings: translate with _() at display time */
  const char *explanation;
  const char *advice;
} DwHealthRule;

/* The rules, in report order. */
const DwHealthRule *dw_health_rules (guint *n_rules);
const DwHealthRule *dw_health_rule_lookup (const char *rule_id);

/* ------------------------------------------------------------------------------------------ */
/* Incremental evaluation                                                                       */

typedef struct _DwHealthMonitor DwHealthMonitor;

DwHealthMonitor *dw_health_monitor_new (void);
void dw_health_monitor_free (DwHealthMonitor *monitor);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwHealthMonitor, dw_health_monitor_free)

/* Feeds the next points of the series of @tag (canonical id @canonical; NULL → looked up with
 * dw_canonical_for_tag). Points with a step ≤ the last step already fed for @tag are skipped
 * (restart overlap: the first write was evaluated already). Returns the events that fired for the
 * first time during this call (DwHealthEvent*, copies owned by the array; empty when none). Events
 * that keep firing update their last_step / n_steps inside the monitor. */
GPtrArray *dw_health_monitor_feed (DwHealthMonitor *monitor, const char *canonical, const char *tag,
                                   const gint64 *steps, const double *values, gsize n);
/* Every event so far, sorted by first_step then severity (critical first), copies. */
GPtrArray *dw_health_monitor_get_events (DwHealthMonitor *monitor);
/* The last step fed for @tag, G_MININT64 when none (for dw_store_get_series's after_step). */
gint64 dw_health_monitor_last_step (DwHealthMonitor *monitor, const char *tag);

/* One-shot evaluation of one series: every event, sorted as above. */
GPtrArray *dw_health_check_series (const char *canonical, const gint64 *steps, const double *values,
                                   gsize n);

/* Sorting helper (GCompareFunc over DwHealthEvent**): first_step, then severity (critical first),
 * then rule order. */
gint dw_health_event_compare (gconstpointer a, gconstpointer b);

/* ------------------------------------------------------------------------------------------ */
/* Over a stored run                                                                            */

/* Evaluates every rule on every relevant series of the run. Returns DwHealthEvent*, sorted by
 * first_step then severity (critical first); an empty array when the run is healthy. */
GPtrArray *dw_health_check_run (DwStore *store, gint64 run_id, GError **error);

/* For `watch`: reads the points of the run's ruled series newer than what @monitor has seen and
 * feeds them. Returns the newly fired events (possibly empty) or NULL with @error set. */
GPtrArray *dw_health_monitor_poll_run (DwHealthMonitor *monitor, DwStore *store, gint64 run_id,
                                       GError **error);

/* Counts @events (as dw_health_monitor_get_events of @monitor returned them): warnings, criticals,
 * and those (of either) still firing at the last point fed of the series they watch. Each
 * out-argument may be NULL. */
void dw_health_monitor_count (DwHealthMonitor *monitor, GPtrArray *events, guint *n_warning,
                              guint *n_critical, guint *n_at_end);
/* The status a run is shown with (the window's badge, `driftwatch-cli runs`): a finished run on
 * which a critical rule fired, or that ended with a rule still firing (its training went off and
 * never came back), is collapsed; otherwise the stored status. */
DwRunStatus dw_health_shown_status (DwRunStatus stored, guint n_critical, guint n_at_end);
/* dw_health_shown_status of a stored run, evaluated on its series; @stored on error. */
DwRunStatus dw_health_run_shown_status (DwStore *store, const DwRunInfo *run, GError **error);

/* Reports (for `check`, the GUI's copy button and `watch`). JSON: {"healthy": bool, "events":
 * [{rule_id, severity, metric, tag, first_step, last_step, n_steps, value, threshold, title,
 * explanation, advice}]}; text: one block per event, translated. Appended to @out. */
void dw_health_append_event_json (GString *out, const DwHealthEvent *event);
void dw_health_append_report_json (GString *out, GPtrArray *events);
void dw_health_append_event_text (GString *out, const DwHealthEvent *event);

G_END_DECLS
