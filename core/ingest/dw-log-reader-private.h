/* dw-log-reader-private.h — per-format vtable and helpers shared by the log readers
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
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

guint32 dw_crc32c (guint32 crc, const guint8 *data, gsize len);

/* Minimal protobuf wire decoding (bounds-checked). */
typedef struct
{
  guint32 field;
  guint32 wire;
  guint64 varint;      /* wire 0, 1 (raw 64 bits), 5 (raw 32 bits) */
  const guint8 *bytes; /* wire 2 */
  gsize len;           /* wire 2 */
} DwPbField;
/* Reads the next field from *pos < end. Returns 1 on success, 0 at end, -1 on malformed data. */
int dw_pb_next (const guint8 **pos, const guint8 *end, DwPbField *f);
gboolean dw_pb_varint (const guint8 **pos, const guint8 *end, guint64 *out);

/* verl console: the "step:N" marker of a metric line (ANSI stripped), or NULL; and whether a
 * raw line is a well-formed metric line (every field key:number) — the sniffer's test. */
const char *dw_verl_console_marker (const char *s, gsize n);
gboolean dw_verl_console_is_metric_line (const char *line, gsize len);
/* slime console: is the raw line a metric dict line ("step N: {'train/…': …}")? */
gboolean dw_slime_console_is_metric_line (const char *line, gsize len);

/* Console formats from whole lines of @data (a last line without newline included); *@in_fence
 * (may be NULL) carries the Markdown code-block state across calls. */
DwFormat dw_format_sniff_lines (const char *path, const guint8 *data, gsize n, gboolean *in_fence);
/* Named like a document (*.md, *.rst, *.ipynb, *.html, *.py, *.sh…): never a log. */
gboolean dw_path_is_document (const char *path);

void dw_reader_verl_console_init (DwLogReader *reader);
void dw_reader_verl_jsonl_init (DwLogReader *reader);
void dw_reader_tfevents_init (DwLogReader *reader);
void dw_reader_slime_console_init (DwLogReader *reader);
void dw_reader_wandb_csv_init (DwLogReader *reader);
void dw_reader_wandb_offline_init (DwLogReader *reader);

G_END_DECLS
