/* dw-json-scan.h — limits checked on JSON text before json-glib parses it
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * json-glib's parser recurses once per nesting level (a 200 KB safetensors header of 100 k nested
 * arrays overflows the stack) and keeps the last of two members with the same name. This small
 * iterative scanner looks at the text first: nesting deeper than a limit, and a member name given
 * twice in one object, are refused with the byte offset. It is not a validator: syntax errors are
 * left to json-glib, which then sees only bounded input.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Nesting limit of every JSON text Driftwatch parses (configs, safetensors headers). */
#define DW_JSON_MAX_DEPTH 64

typedef struct
{
  gsize offset;      /* byte offset of the problem in the text */
  char message[160]; /* "nested deeper than 64 levels", "key “x” appears twice" */
} DwJsonProblem;

/* FALSE (and @problem filled) when @text (@len bytes, -1: NUL-terminated) nests deeper than
 * @max_depth, an object has a member name twice, or an integer does not fit in 64 bits. */
gboolean dw_json_scan (const char *text, gssize len, guint max_depth, DwJsonProblem *problem);

/* json_parser_load_from_data() after dw_json_scan() with DW_JSON_MAX_DEPTH: the problem is a
 * JSON_PARSER_ERROR_INVALID_DATA "offset N: …". */
gboolean dw_json_load (JsonParser *parser, const char *text, gssize len, GError **error);

G_END_DECLS
