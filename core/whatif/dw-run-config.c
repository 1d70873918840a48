/* dw-run-config.c — a run's own config and the check of its logged metrics (see the header)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>
#include <inttypes.h>
#include <string.h>

#include "dw-run-config.h"

#include "dw-config-json.h"
#include "dw-generation.h"
#include "dw-recompute.h"
#include "dw-whatif-engine.h"

gboolean
dw_run_config_load (DwStore *store, gint64 run_id, DwRunConfig *out, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *meta = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *object;
  const char *name, *source;

  memset (out, 0, sizeof *out);
  out->generation = DW_GEN_VERL_LATEST;
  dw_config_init (&out->config, out->generation);
  meta = dw_store_get_run_meta (store, run_id, &local);
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (meta == NULL || !json_parser_load_from_data (parser, meta, -1, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return TRUE;
  object = json_node_get_object (json_parser_get_root (parser));
  name = json_object_get_string_member_with_default (object, "generation", NULL);
  source = json_object_get_string_member_with_default (object, "generation_source", "");
  if (name == NULL || !dw_generation_from_name (name, &out->generation))
    return TRUE;
  out->has_generation = TRUE;
  g_strlcpy (out->source, source, sizeof out->source);
  dw_config_init (&out->config, out->generation);
  if (json_object_has_member (object, "config")
      && JSON_NODE_HOLDS_OBJECT (json_object_get_member (object, "config")))
    {
      g_autoptr (JsonGenerator) generator = json_generator_new ();
      g_autofree char *text = NULL;

      json_generator_set_root (generator, json_object_get_member (object, "config"));
      text = json_generator_to_data (generator, NULL);
      /* a config the store holds but that does not read is no config: the check says so */
      out->has_config = dw_config_merge_json_lenient (&out->config, text, NULL);
      if (!out->has_config)
        dw_config_init (&out->config, out->generation);
    }
  return TRUE;
}

gboolean
dw_run_config_check (DwStore *store, gint64 run_id, DwRunCheck *out, GCancellable *cancellable,
                     GError **error)
{
  DwRunConfig own;
  g_autoptr (GError) local = NULL;
  g_autoptr (DwRecomputeResult) result = NULL;

  memset (out, 0, sizeof *out);
  if (!dw_run_config_load (store, run_id, &own, error))
    return FALSE;
  if (!own.has_config)
    return TRUE;
  result = dw_whatif_recompute_run (store, run_id, &own.config, own.generation, NULL, cancellable,
                                    &local);
  if (result == NULL)
    {
      /* a run without stored batches (or a stored preset this release lacks) cannot be
       * checked; a store failure is an error */
      if (g_error_matches (local, DW_STORE_ERROR, DW_STORE_ERROR_NOT_FOUND)
          || local->domain == DW_WHATIF_ERROR)
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  out->n_steps = result->n_steps;
  out->n_flagged = result->n_flagged;
  out->n_failed = result->n_failed;
  for (guint i = 0; i < result->n_steps; i++)
    {
      const DwRecomputeStep *step = &result->steps[i];
      out->n_compared += step->n_compared;
      if (out->first_key[0] == '\0' && step->diffs && step->diffs->len > 0)
        {
          const DwRecomputeDiff *diff = g_ptr_array_index (step->diffs, 0);
          g_strlcpy (out->first_key, diff->key, sizeof out->first_key);
          out->first_step = step->step;
          out->first_logged = diff->logged;
          out->first_recomputed = diff->recomputed;
        }
    }
  if (out->n_flagged > 0 || out->n_failed > 0)
    out->agreement = DW_RUN_AGREEMENT_DISAGREES;
  else if (out->n_compared > 0)
    out->agreement = DW_RUN_AGREEMENT_AGREES;
  return TRUE;
}

char *
dw_run_check_describe (const DwRunCheck *check)
{
  switch (check->agreement)
    {
    case DW_RUN_AGREEMENT_AGREES:
      return g_strdup_printf (_ ("logged metrics agree with a recompute under the run’s config "
                                 "(%u values, %u steps)"),
                              check->n_compared, check->n_steps);
    case DW_RUN_AGREEMENT_DISAGREES:
      if (check->first_key[0] != '\0')
        return g_strdup_printf (_ ("logged metrics disagree with a recompute under the run’s "
                                   "config: %u of %u steps, first at step %" PRId64
                                   ": %s logged %.9g, recomputed %.9g"),
                                check->n_flagged, check->n_steps, check->first_step,
                                check->first_key, check->first_logged, check->first_recomputed);
      return g_strdup_printf (_ ("the trainer would refuse the run’s config on %u of %u steps"),
                              check->n_failed, check->n_steps);
    case DW_RUN_AGREEMENT_UNKNOWN:
    default:
      return g_strdup (_ ("not checked: no stored config, batches or logged correction metrics"));
    }
}
