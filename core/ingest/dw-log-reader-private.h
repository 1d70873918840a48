/* dw-log-reader-private.h — the readers as the rest of core/ingest sees them: the format
 * registry's sniffing helpers, and (through the headers below) the reader object, the format
 * entry points, CRC-32C and protobuf decoding
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Format readers do not include this header: it belongs to the registry, which sits above them.
 */
#pragma once

#include "dw-crc32c.h"
#include "dw-pb.h"
#include "dw-reader-formats.h"
#include "dw-reader-util.h"

G_BEGIN_DECLS

/* Console formats from whole lines of @data (a last line without newline included); *@in_fence
 * (may be NULL) carries the Markdown code-block state across calls. */
DwFormat dw_format_sniff_lines (const char *path, const guint8 *data, gsize n, gboolean *in_fence);
/* Named like a document (*.md, *.rst, *.ipynb, *.html, *.py, *.sh…): never a log. */
gboolean dw_path_is_document (const char *path);

G_END_DECLS
