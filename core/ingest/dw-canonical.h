/* dw-canonical.h — canonical metric names across verl / slime key-name history
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  const char *id;     /* "is_mean", "ess", "k3_kl", … */
  const char *title;  /* N_() string: translate with _() / gettext at display time */
  const char *unit;   /* "", "nats", "tokens", "fraction", … */
  double ideal;       /* ideal value, NAN when there is none */
  gboolean log_scale; /* a log-scale y axis suits it */
  gboolean mismatch;  /* part of the default mismatch family */
} DwCanonicalMetric;

/* The canonical id a logged tag maps to, or NULL. Handles verl `mismatch/` (v0.6.0),
 * `rollout_corr/` (v0.6.1+, incl. per-option `rollout_rs_<opt>_*`), `training/rollout_probs_*`,
 * slime `train/mis_*` / `train/tis*`, and the common reward/length/entropy/grad-norm keys.
 * The returned string is static. */
const char *dw_canonical_for_tag (const char *tag);

/* The table, for the GUI. */
const DwCanonicalMetric *dw_canonical_metrics (guint *n_metrics);
const DwCanonicalMetric *dw_canonical_lookup (const char *id);

G_END_DECLS
