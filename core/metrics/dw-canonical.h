/* dw-canonical.h — canonical metrics: what every logged key of every verl release and of slime
 * means
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The lowest core module above GLib: the store, the readers, the health rules, the what-if engine
 * and the GUI all name metrics through it, and it calls nothing of theirs.
 *
 * A canonical metric keeps one meaning in every generation. Where a logged key changed meaning
 * between releases (verl's `rollout_is_mean` is the mean of the raw ratio up to v0.7.1 and the mean
 * of the applied weights from v0.8.0), the key maps to a different canonical metric depending on
 * the run's generation. docs/HEALTH.md lists the metrics and the key table.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  const char *id;     /* "is_mean", "is_raw_mean", "ess", "k3_kl", … */
  const char *title;  /* N_() string: translate with _() / gettext at display time */
  const char *unit;   /* "", "nats", "tokens", "fraction", … */
  double ideal;       /* ideal value, NAN when there is none */
  gboolean log_scale; /* a log-scale y axis suits it */
  gboolean mismatch;  /* part of the training–inference mismatch family */
} DwCanonicalMetric;

/* What one logged key means under one generation (a row of the key table). */
typedef struct
{
  const char *pattern;     /* the key as the table writes it; "*" stands for an RS option name */
  const char *canonical;   /* canonical metric id */
  const char *meaning;     /* N_() string: what the logged number is, in this generation */
  const char *generations; /* the generations the row covers, e.g. "verl-0.6.1 – verl-0.7.1" */
} DwCanonicalKeyInfo;

/* The generation names the map knows, for the key table's ranges (newest verl last, then slime):
 * "verl-0.5.0" (releases before 0.6.0: no rollout-correction keys), "verl-0.6.0" (`mismatch/`),
 * "verl-0.7.0" (0.6.1 and 0.7.0: `rollout_corr/`, one RS level, veto), "verl-0.7.1" (per-option
 * RS), "verl-0.8.0" (IS metrics of the applied weights, IcePop), "verl-0.9.0", "slime";
 * NULL-terminated. */
const char *const *dw_canonical_generations (guint *n_generations);

/* The map's name for @generation: a release ("verl-0.7.1", "verl 0.9.0", "0.8.0", "v0.6.1"), "verl"
 * (the newest), "slime", an old Driftwatch name ("verl-0.7", "verl-0.6") or a verl commit prefix
 * of a release helper. NULL for NULL, "", "unknown" and names it cannot place. */
const char *dw_canonical_generation (const char *generation);

/* The canonical metric @key means under @generation (any name dw_canonical_generation() accepts;
 * NULL or unknown: the newest generation that logs the key). A key the generation does not log
 * is still mapped by the newest generation that does (the key itself is the evidence). NULL for
 * keys that name no canonical metric. The returned string is static. */
const char *dw_canonical_for_key (const char *key, const char *generation);
/* Like dw_canonical_for_key(), and fills @info with the row used. FALSE when the key is unknown. */
gboolean dw_canonical_describe_key (const char *key, const char *generation,
                                    DwCanonicalKeyInfo *info);
/* dw_canonical_for_key (tag, NULL). */
const char *dw_canonical_for_tag (const char *tag);

/* The newest generation consistent with every known key in @keys (@n_keys of them; keys the map
 * does not know are ignored), as one of dw_canonical_generations(); NULL when no key tells.
 * When the keys contradict each other (two generations' keys in one run), the newest generation
 * that logs the most of them. */
const char *dw_canonical_infer_generation (const char *const *keys, gsize n_keys);

/* The metric table, for the GUI and `tags`. */
const DwCanonicalMetric *dw_canonical_metrics (guint *n_metrics);
const DwCanonicalMetric *dw_canonical_lookup (const char *id);

G_END_DECLS
