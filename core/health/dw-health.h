/* dw-health.h — health rules over a run's series (shared by the GUI, `check` and `watch`)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The rules work on plain (step, value) arrays of canonical metrics (dw-canonical.h), so they can
 * be unit-tested without a store and fed incrementally by a live follower (DwHealthMonitor:
 * only the new points are evaluated). dw_health_check_run() runs them over a stored run, whose
 * keys are read under the run's generation (printed by the run, else shown by its keys): a key's
 * canonical metric can depend on it.
 * docs/HEALTH.md lists the rules, their thresholds and severities.
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
  gint64 first_step; /* first step the rule fired on (at this severity) */
  gint64 last_step;  /* last step it was still firing (== first_step for one-off events) */
  double value;      /* the value at first_step (drift rules: the rolling median) */
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

/* The crossing an event records, for a row or a report line: "0.43 > 0.04 (10.8×)",
 * "|-0.25| > 0.1 (2.5×)", "0.2 < 0.3 (0.667×)"; the value alone when there is no threshold. */
char *dw_health_event_format_crossing (const DwHealthEvent *event);

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
 * thresholds. A drifting point whose median also exceeds @critical_factor × the bound fires the
 * rule's critical event (threshold = @critical_factor × bound). */
typedef struct
{
  DwHealthDriftTransform transform;
  guint baseline_points;
  guint window;
  guint slope_window;
  guint confirm;
  double factor;
  double min_delta;
  double critical_factor; /* 0: no critical level */
} DwHealthDriftParams;

/* A rule fires an event of @severity when its value crosses lo / hi (strictly: the bound itself
 * is fine), and a second, critical event of the same rule when it also reaches crit_lo / crit_hi
 * (inclusive: "≥ 50 % rejected"); the two events have their own first and last steps. */
typedef struct
{
  const char *id;     /* stable rule id */
  const char *metric; /* canonical id it applies to; NULL = every canonical metric (nonfinite) */
  DwHealthRuleKind kind;
  DwHealthSeverity severity;
  double lo, hi;             /* thresholds (NAN when unused) */
  double crit_lo, crit_hi;   /* collapse-level thresholds (NAN when none) */
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

/* The generation the run's keys are read under (dw_canonical_for_key): what a key means can
 * depend on it (verl's rollout_is_mean is the raw ratio up to 0.7.1, the applied weight from
 * 0.8.0). Set it when the run's release is known (a name dw_canonical_generation() accepts;
 * NULL or an unknown name: not known). Otherwise dw_health_monitor_poll_run takes the run's
 * (dw_store_get_run_generation: printed by the run or its config, else read from its keys). */
void dw_health_monitor_set_generation (DwHealthMonitor *monitor, const char *generation);
const char *dw_health_monitor_get_generation (DwHealthMonitor *monitor);
/* Where the generation came from: "given" (set above), "log" / "config" (printed by the run),
 * "keys" (inferred from its keys); NULL when unknown. */
const char *dw_health_monitor_get_generation_source (DwHealthMonitor *monitor);
/* Takes a run's generation and its source ("log", "config", "keys") unless one was given. */
void dw_health_monitor_adopt_generation (DwHealthMonitor *monitor, const char *generation,
                                         const char *source);

/* Feeds the next points of the series of @tag (canonical id @canonical; NULL → looked up with
 * dw_canonical_for_key under the monitor's generation). Points with a step ≤ the last step already
 * fed for @tag are skipped (restart overlap: the first write was evaluated already). Returns the
 * events that fired for the first time during this call (DwHealthEvent*, copies owned by the array;
 * empty when none). Events that keep firing update their last_step / n_steps inside the monitor. */
GPtrArray *dw_health_monitor_feed (DwHealthMonitor *monitor, const char *canonical, const char *tag,
                                   const gint64 *steps, const double *values, gsize n);
/* Every event so far, sorted by first_step then severity (critical first), copies. */
GPtrArray *dw_health_monitor_get_events (DwHealthMonitor *monitor);
/* The last step fed for @tag, G_MININT64 when none (for dw_store_get_series's after_step). */
gint64 dw_health_monitor_last_step (DwHealthMonitor *monitor, const char *tag);

/* The canonical metrics evaluated so far: those fed at least one point under a rule of their own
 * (every metric also gets the NaN check; that alone does not count), in the order of
 * dw_canonical_metrics(), each once (static strings; free the array only). */
GPtrArray *dw_health_monitor_get_evaluated (DwHealthMonitor *monitor);

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
/* The status a run is shown with (the window's badge, `driftwatch-cli runs`), one rule for both:
 *   finished + a critical event, or a rule still firing at its last point → collapsed;
 *   live + a critical event → collapsing (still written, collapse-level evidence already seen);
 *   otherwise the stored status (a stored "collapsed", set by `watch`, stays collapsed). */
DwRunStatus dw_health_shown_status (DwRunStatus stored, guint n_critical, guint n_at_end);
/* dw_health_shown_status of a stored run, evaluated on its series; @stored on error. */
DwRunStatus dw_health_run_shown_status (DwStore *store, const DwRunInfo *run, GError **error);

/* ------------------------------------------------------------------------------------------ */
/* The verdict on a stored run (`check`)                                                        */

typedef enum
{
  DW_HEALTH_VERDICT_HEALTHY = 0,      /* mismatch metrics evaluated, no warning or critical event */
  DW_HEALTH_VERDICT_UNHEALTHY,        /* a warning or critical event */
  DW_HEALTH_VERDICT_NO_MISMATCH_DATA, /* no event, and no mismatch metric to judge */
} DwHealthVerdict;

typedef struct
{
  GPtrArray *events;             /* DwHealthEvent*, sorted */
  GPtrArray *evaluated;          /* const char*: canonical metrics evaluated (table order) */
  guint n_mismatch;              /* how many of them belong to the mismatch family */
  guint n_warning, n_critical;   /* events by severity */
  guint n_tags, n_unmapped;      /* the run's logged tags, and those naming no canonical metric */
  char *generation;              /* the generation the keys were read under; NULL when none */
  gboolean generation_inferred;  /* read from the keys (no generation was given or printed) */
  const char *generation_source; /* "given", "log", "config", "keys"; NULL when unknown */
  GPtrArray *panel_columns;      /* char*: tags shaped "<run> - <metric>" (a W&B panel export) */
  DwRunStatus shown_status;      /* as dw_health_run_shown_status gives it */
} DwHealthReport;

void dw_health_report_free (DwHealthReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwHealthReport, dw_health_report_free)

/* Evaluates every rule on the run (as dw_health_check_run) and says what was judged. The keys are
 * read under @generation when given (the run's release), else under the one they show. */
DwHealthReport *dw_health_report_run (DwStore *store, gint64 run_id, const char *generation,
                                      GError **error);
DwHealthVerdict dw_health_report_verdict (const DwHealthReport *report);
/* "healthy", "unhealthy", "no-mismatch-metrics" (not translated: for JSON). */
const char *dw_health_verdict_name (DwHealthVerdict verdict);

/* Reports (for `check`, the GUI's copy button and `watch`). Report JSON: {"verdict", "healthy":
 * bool (true only for the healthy verdict), "headline" (dw_health_headline, or null),
 * "generation", "generation_source", "generation_inferred",
 * "evaluated": [canonical ids], "n_tags", "n_unmapped", "events": [{rule_id, severity, metric,
 * tag, first_step, last_step, n_steps, value, threshold, crossing, title, explanation, advice}]};
 * text: one block per event, translated. Appended to @out. */
/* One translated line for a banner or a report's head, from events sorted as
 * dw_health_monitor_get_events returns them and the run's shown status: "Collapsed at step 110
 * (K3 KL drifting upwards — collapse level): K3 KL 0.00542 > 0.00532 (1.02×); first warning at
 * step 67: Mean probability difference above 0.01". "Collapsing since", "Critical at" or "Warning
 * since" as the status and severities say; NULL when no warning or critical event fired. */
char *dw_health_headline (GPtrArray *events, DwRunStatus shown_status);

void dw_health_append_event_json (GString *out, const DwHealthEvent *event);
void dw_health_append_report_json (GString *out, const DwHealthReport *report);
void dw_health_append_event_text (GString *out, const DwHealthEvent *event);

G_END_DECLS
