/* dw-run-config.h — the generation and config a run used, as ingest stored them, and whether the
 * run's logged metrics agree with a recompute under them
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Ingest stores what a run's log says about its correction (dw_store_get_run_meta: "generation",
 * "generation_source", "config"). dw_run_config_load reads it back as a DwConfig;
 * dw_run_config_check recomputes the run's stored batches under it and compares with what the
 * run logged (dw_whatif_recompute_run: rtol 2e-5, float32 rounding of the trainer's
 * reductions). A run whose logged metrics disagree was not trained with the config its log
 * shows (or Driftwatch does not reproduce that generation): it is flagged.
 */
#pragma once

#include <gio/gio.h>

#include "dw-config.h"
#include "dw-store.h"

G_BEGIN_DECLS

typedef struct
{
  gboolean has_generation;
  DwGeneration generation; /* DW_GEN_VERL_LATEST when the meta names none */
  gboolean has_config;     /* the run printed its correction config */
  DwConfig config;         /* in @generation, verl's / slime's key names */
  char source[16];         /* "log", "config", "inferred" or "" */
} DwRunConfig;

/* FALSE only on a store error; a run ingest learnt nothing about has has_generation FALSE. */
gboolean dw_run_config_load (DwStore *store, gint64 run_id, DwRunConfig *out, GError **error);

typedef enum
{
  DW_RUN_AGREEMENT_UNKNOWN = 0, /* no stored config, no stored batch, or nothing comparable */
  DW_RUN_AGREEMENT_AGREES,
  DW_RUN_AGREEMENT_DISAGREES, /* some logged value differs, or the trainer would refuse it */
} DwRunAgreement;

typedef struct
{
  DwRunAgreement agreement;
  guint n_steps;       /* stored batches recomputed */
  guint n_compared;    /* logged values compared */
  guint n_flagged;     /* steps with a disagreement */
  guint n_failed;      /* steps the trainer would refuse under that config */
  char first_key[128]; /* the first disagreeing key, for the message */
  gint64 first_step;
  double first_logged, first_recomputed;
} DwRunCheck;

/* Recomputes @run_id under its own stored config and generation and compares. FALSE only on a
 * store error (a run without config or batches is DW_RUN_AGREEMENT_UNKNOWN). */
gboolean dw_run_config_check (DwStore *store, gint64 run_id, DwRunCheck *out,
                              GCancellable *cancellable, GError **error);

/* One line for people: "agrees on 40 values over 4 steps", "disagrees at step 3: key logged
 * 1.02, recomputed 0.98", "no config stored". */
char *dw_run_check_describe (const DwRunCheck *check);

G_END_DECLS
