/* dw-test-util.h — helpers shared by the correction tests
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "dw-batch.h"
#include "dw-config.h"

/* Sets config keys from a JSON object (golden "config"); returns FALSE for unsupported values. */
gboolean dw_test_config_from_json (DwConfig *config, JsonObject *obj);
/* golden comparison of one metric value (number or "nan"/"inf"/"-inf" string node) */
gboolean dw_test_close (JsonNode *expected, double got, gboolean is_std);
