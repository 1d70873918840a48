/* dw-run-meta.h — what a training log says about its run: framework version, project and
 * experiment, the rollout-correction config, and from these the correction generation
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * verl prints its resolved config at start-up with pprint (a Python dict over many lines; under
 * Ray each line carries the `(TaskRunner pid=N)` prefix and other workers' lines come in
 * between). slime (through Megatron's argument printer) prints its arguments as
 * `  name ........ value` lines between `arguments` banners, or as an argparse `Namespace(…)`.
 * The scan reads a console log from its start up to its first metric line (the config is printed
 * before training starts), bounded by time.
 *
 * The result is a JSON object: "framework", "framework_version", "project", "experiment",
 * "config" (verl's algorithm.rollout_correction keys, or slime's TIS arguments), "generation"
 * and "generation_source" ("log": the version printed, "config": from the printed config,
 * "inferred": from the metric keys present — the newest generation consistent with them).
 */
#pragma once

#include "dw-log-reader.h"

G_BEGIN_DECLS

/* Scans @path (open as @fd; a console log of @format). Returns the JSON object, or NULL when
 * the log says nothing about its run. */
char *dw_run_meta_scan (int fd, const char *path, DwFormat format, gint64 budget_us);

/* The newest generation consistent with a run's logged tag names (NULL when they say nothing:
 * no correction metrics). */
const char *dw_run_meta_infer_generation (const char *const *tags, gsize n_tags);

/* A member of a meta object as a string (NULL when absent). */
char *dw_run_meta_get_string (const char *meta_json, const char *member);

G_END_DECLS
