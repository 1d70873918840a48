/* dw-tune-length-bias.h — the share of sequences a config rejects, by sequence length
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Three curves over 12 length bins: the what-if config, and two references of the newest verl
 * (a sequence bound seq_sum_k1 0.5_2.0 and geometric RS seq_mean_k1 0.999_1.001), which show
 * the length bias each kind of bound has on this run.
 */
#pragma once

#include <gtk/gtk.h>

#include "dw-config.h"
#include "dw-whatif-engine.h"

G_BEGIN_DECLS

#define DW_TYPE_TUNE_LENGTH_BIAS (dw_tune_length_bias_get_type ())
G_DECLARE_FINAL_TYPE (DwTuneLengthBias, dw_tune_length_bias, DW, TUNE_LENGTH_BIAS, GtkWidget)

/* The run whose steps are binned (a reference is kept; NULL clears the view); computes the two
 * reference curves. */
void dw_tune_length_bias_set_engine (DwTuneLengthBias *self, DwWhatifEngine *engine);
/* The what-if curve from @result: dw_whatif_engine_evaluate_rows () of the config on the engine
 * set (its row outcomes; NULL or none: no curve). */
void dw_tune_length_bias_set_result (DwTuneLengthBias *self, const DwWhatifRunResult *result);

/* bins of the curves: equal widths of sequence length up to the longest sequence */
#define DW_TUNE_LENGTH_BIAS_N_BINS 12
/* The what-if curve's counts, per bin: @rows the sequences, @rejected those the config rejects
 * (arrays of DW_TUNE_LENGTH_BIAS_N_BINS); FALSE when there is no curve. @max_length (nullable):
 * the length the last bin ends at. */
gboolean dw_tune_length_bias_get_counts (DwTuneLengthBias *self, guint64 *rows, guint64 *rejected,
                                         double *max_length);

G_END_DECLS
