/* dw-bench-run.h — the generated run the what-if and Tune benchmarks share
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include "dw-batch.h"

#include <glib.h>

G_BEGIN_DECLS

/* The batch of @step (deterministic per step) of a generated run of @n_steps steps: @rows × @cols
 * float32 log-probs, bool mask, response lengths uniform in [64, @cols], a log-ratio drift that
 * grows over the run (like a run heading for a collapse) and one catastrophic token (ℓ − 12) in
 * 2000. */
DwBatch *dw_bench_run_make_batch (gint64 step, guint n_steps, gsize rows, gsize cols);

G_END_DECLS
