/* dw-tune-histogram.h — the token log-ratios of one step, with the config's token thresholds
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Counts on a log scale (the tails a threshold cuts are a few tokens among thousands), the
 * x range from the 0.05 % to the 99.95 % quantile widened to every threshold drawn.
 */
#pragma once

#include <gtk/gtk.h>

#include "dw-whatif-engine.h"

G_BEGIN_DECLS

typedef enum
{
  DW_TUNE_THRESHOLD_IS = 0,
  DW_TUNE_THRESHOLD_RS,
  DW_TUNE_THRESHOLD_VETO,
} DwTuneThresholdKind;

/* A token-level threshold in log-ratio space (ℓ = log π_train − log π_rollout). */
typedef struct
{
  double x;
  const char *label; /* static or translated: not copied */
  DwTuneThresholdKind kind;
} DwTuneThreshold;

#define DW_TUNE_HISTOGRAM_MAX_THRESHOLDS 32

#define DW_TYPE_TUNE_HISTOGRAM (dw_tune_histogram_get_type ())
G_DECLARE_FINAL_TYPE (DwTuneHistogram, dw_tune_histogram, DW, TUNE_HISTOGRAM, GtkWidget)

/* The step drawn (borrowed: the caller keeps it alive or sets NULL first). */
void dw_tune_histogram_set_step (DwTuneHistogram *self, const DwWhatifStep *step);
/* The thresholds drawn over the bars (at most DW_TUNE_HISTOGRAM_MAX_THRESHOLDS, copied). */
void dw_tune_histogram_set_thresholds (DwTuneHistogram *self, const DwTuneThreshold *thresholds,
                                       guint n_thresholds);

G_END_DECLS
