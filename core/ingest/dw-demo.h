/* dw-demo.h — a realistic demo run folder (for first start of the GUI, tests and benchmarks)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Writes what a verl v0.9.0 GRPO run with `trainer.logger=[console,file,tensorboard]` and the
 * rollout-batch dump of docs/BATCHES.md §2 leaves behind:
 *   OUTDIR/train.log              the driver's stdout: the job script's `verl==0.9.0` line,
 *                                 Ray's start-up, the resolved config as verl's TaskRunner
 *                                 pprint-s it (with the algorithm.rollout_correction the demo
 *                                 trains with; Ray's lines in between), engine start-up, then
 *                                 one console-backend `step:N - key:value …` line a step
 *   OUTDIR/metrics.jsonl          verl FileLogger lines
 *   OUTDIR/tensorboard/events.out.tfevents.<t>.driftwatch-demo.0   one simple_value per key
 *                                 per step
 *   OUTDIR/batches/step_NNNNNN.safetensors   32 × 256 padded batch per step
 * Steps start at 1. The per-token log-ratio spread grows over the run; in the collapse scenario
 * it explodes at dw_demo_collapse_step() (catastrophic tokens, rewards fall, responses hit the
 * length limit). The rollout_corr/… values are computed by the correction core, as verl v0.9.0
 * does (the release the name "verl" means), from the very batches written (preset
 * decoupled_k3_rs_token_tis, rollout_rs_threshold 0.05): so ingesting the folder finds
 * generation verl-0.9.0 and that config, and `recompute --run R` alone agrees with every
 * logged value. Response lengths, scores, advantages, entropy estimate and probability
 * differences come from the batch too; grad norm, losses, timings are illustrative.
 * Deterministic for a given seed (no path of OUTDIR is written into the files).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  DW_DEMO_HEALTHY = 0,
  DW_DEMO_COLLAPSE,
} DwDemoScenario;

#define DW_DEMO_DEFAULT_STEPS 200
#define DW_DEMO_ROWS          32
#define DW_DEMO_COLS          256

gboolean dw_demo_scenario_from_name (const char *name, DwDemoScenario *out);
const char *dw_demo_scenario_name (DwDemoScenario scenario);
/* The step where the collapse scenario collapses (70 % of the run), for @steps steps. */
gint64 dw_demo_collapse_step (guint steps);

typedef struct _DwDemo DwDemo;

/* Prepares OUTDIR (created if needed; existing demo files are replaced). */
DwDemo *dw_demo_new (const char *outdir, DwDemoScenario scenario, guint steps, guint64 seed,
                     GError **error);
void dw_demo_free (DwDemo *demo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwDemo, dw_demo_free)
/* Appends the next step to every file (batch first, then the logs, as verl does). FALSE with
 * @error on I/O failure; *@done set once all steps are written. */
gboolean dw_demo_write_step (DwDemo *demo, gboolean *done, GError **error);

/* All steps at once. */
gboolean dw_demo_write (const char *outdir, DwDemoScenario scenario, guint steps, guint64 seed,
                        GError **error);

G_END_DECLS
