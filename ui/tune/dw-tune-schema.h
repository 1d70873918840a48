/* dw-tune-schema.h — which config key a Tune control writes, found from the schema and the plan
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The Tune page knows roles (the IS threshold, the RS switch, …), never key names: the key is
 * looked up in the generation's schema (core/correction/dw-schema.h) by role. Where a generation
 * has several keys with one role (slime: tis_clip for the built-in paths, tis_upper_bound for
 * mis.py), the one the current config's plan reads is chosen by trying each: the key whose
 * value moves the plan's field while the plan's path stays the same.
 */
#pragma once

#include <glib.h>

#include "dw-plan.h"
#include "dw-schema.h"

G_BEGIN_DECLS

/* What a Tune control edits. */
typedef enum
{
  DW_TUNE_FIELD_IS_UPPER = 0,
  DW_TUNE_FIELD_IS_LOWER,
  DW_TUNE_FIELD_RS_UPPER,
  DW_TUNE_FIELD_RS_LOWER,
  DW_TUNE_FIELD_VETO,
  DW_TUNE_FIELD_IS_SWITCH, /* a bool that turns IS on (slime use_tis) */
  DW_TUNE_FIELD_RS_SWITCH, /* a bool that turns RS on (slime use_rs) */
} DwTuneField;

/* The schema key of @config's generation that @field writes under @config, or NULL when the
 * generation has none. */
const DwSchemaKey *dw_tune_schema_key (const DwConfig *config, DwTuneField field);

/* Whether @key's Python type admits None (then None is how the control turns the feature off). */
gboolean dw_tune_schema_key_takes_none (const DwSchemaKey *key);

/* Whether @key's Python type admits a string besides a number (verl ≥ 0.8's IS threshold:
 * "lower_upper" is IcePop). */
gboolean dw_tune_schema_key_takes_str (const DwSchemaKey *key);

/* The allowed strings of the first key with @role (NULL-terminated), or NULL. */
const char *const *dw_tune_schema_choices (DwGeneration gen, DwKeyRole role);

/* The releases first, newest first, then the other frameworks, then commits between releases.
 * Fills @order (DW_N_GENERATIONS entries). */
void dw_tune_schema_generation_order (DwGeneration order[DW_N_GENERATIONS]);

G_END_DECLS
