/* dw-reader-util.h — private to core/ingest: the reader object as a format sees it, and the
 * helpers every format reader calls (diagnostics, emitting points, numbers, ANSI escapes)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The formats sit above this file and below the registry (dw-log-reader.c): they call down to
 * these helpers, the registry calls down to them; nothing here knows a format.
 */
#pragma once

#include "dw-log-reader.h"

G_BEGIN_DECLS

typedef struct
{
  DwLogReader *reader;
  DwPointFunc on_point;
  DwDiagFunc on_diag;
  gpointer user_data;
  goffset where; /* file offset of the line or record being decoded (for diagnostics of emit) */
} DwFeedCtx;

/* Line formats set @line; record formats set @feed (returns bytes consumed). */
typedef void (*DwLineFunc) (DwLogReader *reader, DwFeedCtx *ctx, goffset offset, const char *line,
                            gsize len);
typedef gsize (*DwRecordFeedFunc) (DwLogReader *reader, DwFeedCtx *ctx, goffset offset,
                                   const guint8 *data, gsize len, gboolean at_eof);

struct _DwLogReader
{
  DwFormat format;
  char *path;
  DwLineFunc line;
  DwRecordFeedFunc feed;
  gpointer state;
  GDestroyNotify state_free;
  gboolean dead;        /* unrecoverable framing error: the rest of the file is skipped */
  GHashTable *bad_tags; /* tags already reported as not UTF-8 (original bytes) */
  int point_precision;  /* DwScalarPoint.precision of the points emitted now */
  char *meta;           /* run metadata found in the file (JSON), not taken yet */
};

/* Longest line / record accepted before it is reported and skipped. */
#define DW_READER_MAX_LINE   (16u << 20)
#define DW_READER_MAX_RECORD (64u << 20)

void dw_reader_diag (DwFeedCtx *ctx, goffset offset, const char *fmt, ...) G_GNUC_PRINTF (3, 4);
void dw_reader_emit (DwFeedCtx *ctx, const char *tag, gint64 step, double wall_time, double value,
                     const char *step_key);

/* Parses a whole token [s, s+len) as a number: decimal/exponent, nan, inf, -inf, Infinity,
 * NaN, True/False. Returns FALSE when the token is not entirely a number. */
gboolean dw_parse_number (const char *s, gsize len, double *out);
/* Strips ANSI CSI escape sequences in place; returns the new length. */
gsize dw_strip_ansi (char *s, gsize len);

G_END_DECLS
