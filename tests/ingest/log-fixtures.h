/* log-fixtures.h — training logs shaped like the real ones users have (issue 12), generated
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each generator reproduces a real-world case and says which; nothing multi-MB is committed.
 * Values are a known function of (tag, step) (dw_fixture_value), so a test checks every stored
 * point exactly.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The metric keys the console and TensorBoard fixtures log (verl names). */
extern const char *const dw_fixture_tags[];
#define DW_FIXTURE_N_TAGS 4

/* The value of tag number @tag at @step in launch @launch (0, 1, …) with @offset added. */
double dw_fixture_value (guint tag, gint64 step, guint launch, double offset);

typedef struct
{
  const char *project, *experiment; /* printed in the config (NULL: no config printed) */
  gint64 first_step, last_step;
  guint launch;
  double offset;
  gsize preamble_bytes; /* start-up output before the first metric line */
  gboolean ray;         /* `ray job logs` shape: (TaskRunner pid=…) prefixes, other workers */
  gboolean nul_in_head; /* NCCL/PyTorch print a NUL byte early on */
  gboolean tqdm;        /* tqdm's bar on the same line before `step:` */
  gboolean legacy_3f;   /* verl ≤ 0.4.1: every float printed with %.3f */
  gboolean no_final_newline;
  const char *version;              /* a "verl==X" line in the start-up output, or NULL */
  const char *rollout_is_threshold; /* Python literal in the printed rollout_correction, e.g.
                                     * "2.0" or "'0.5_5.0'"; NULL: "2.0" */
  gboolean g2_config; /* rollout_token_veto_threshold in the config (verl 0.6.1–0.7.0) */
} DwFixtureConsole;

/* A verl console log (what `python -m verl.trainer.main_ppo … | tee train.log` or `ray job logs`
 * gives): the pretty-printed config over many lines, engine start-up, sample echoes and
 * validation output, then one metric line per step. */
GString *dw_fixture_verl_console (const DwFixtureConsole *spec);

/* A TensorBoard event file as torch's SummaryWriter writes it (file_version record, then one
 * simple_value Event per tag per step, float32) with @wall0 as the first wall time. */
GByteArray *dw_fixture_tfevents (gint64 first_step, gint64 last_step, guint launch, double offset,
                                 double wall0);

/* Writes @len bytes to @path (parents created). */
void dw_fixture_write (const char *path, const void *data, gssize len);

G_END_DECLS
