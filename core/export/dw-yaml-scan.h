/* dw-yaml-scan.h — nesting depth of YAML text, checked before libyaml parses it
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Nesting limit of every YAML text Driftwatch parses (a trainer's config nests < 10 levels). */
#define DW_YAML_MAX_DEPTH 64

/* FALSE, with the 1-based line in @line, when @text nests flow collections ([ {) and block
 * levels (indentation, "- " items) deeper than @max_depth. */
gboolean dw_yaml_scan_depth (const char *text, gsize len, guint max_depth, gsize *line);

G_END_DECLS
