/* dw-batch-jsonl.c — batch JSONL (one sample per line, ragged) reader and writer
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * {"step":1,"sample":0,"old_log_prob":[...],"rollout_log_prob":[...],"response_mask":[...],
 *  "advantage":0.5} per line (docs/BATCHES.md §1). A small dedicated scanner instead of json-glib:
 * it reads number arrays straight into doubles (no DOM per line) and accepts the non-finite
 * literals Python's json writes (NaN, Infinity, -Infinity) and null (read as NaN).
 *
 * dtypes: log-probs are float32 when every value is exactly a float32 (what a float32 tensor
 * written with Python's float repr gives), else float64. Masks: all true/false → bool, integers
 * in 0..255 → uint8, other integers → int64, anything else → float32 (float64 if not exact).
 */
#include "dw-batch-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define JSONL_MAX_LINE  (256u << 20)
#define JSONL_MAX_DEPTH 64

typedef struct
{
  const char *name;
  const char *s; /* NUL-terminated line */
  gsize len, pos;
  guint64 line;
  guint64 line_offset; /* byte offset of the line in the file */
  GError **error;
  const char *key; /* value being read, for messages */
} Scan;

static gboolean G_GNUC_PRINTF (3, 4) scan_fail (Scan *sc, DwBatchError code, const char *fmt, ...)
{
  va_list args;
  g_autofree char *msg = NULL;

  va_start (args, fmt);
  msg = g_strdup_vprintf (fmt, args);
  va_end (args);
  dw_batch_set_error (sc->error, code, sc->name,
                      "line %" G_GUINT64_FORMAT ", column %" G_GSIZE_FORMAT
                      " (offset %" G_GUINT64_FORMAT ")%s%s: %s",
                      sc->line, sc->pos + 1, sc->line_offset + sc->pos, sc->key ? ", key " : "",
                      sc->key ? sc->key : "", msg);
  return FALSE;
}

static void
ws (Scan *sc)
{
  while (sc->pos < sc->len
         && (sc->s[sc->pos] == ' ' || sc->s[sc->pos] == '\t' || sc->s[sc->pos] == '\r'
             || sc->s[sc->pos] == '\n'))
    sc->pos++;
}

static gboolean
peek (Scan *sc, char c)
{
  ws (sc);
  return sc->pos < sc->len && sc->s[sc->pos] == c;
}

static gboolean
word (Scan *sc, const char *w)
{
  gsize count = strlen (w);
  if (sc->len - sc->pos >= count && memcmp (sc->s + sc->pos, w, count) == 0)
    {
      sc->pos += count;
      return TRUE;
    }
  return FALSE;
}

/* A JSON string; returns it unescaped (\uXXXX kept as '?') or NULL after setting the error. */
static char *
string (Scan *sc)
{
  GString *out;

  ws (sc);
  if (sc->pos >= sc->len || sc->s[sc->pos] != '"')
    return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "expected a string"), NULL;
  sc->pos++;
  out = g_string_new (NULL);
  while (sc->pos < sc->len && sc->s[sc->pos] != '"')
    {
      char letter = sc->s[sc->pos++];
      if ((guchar)letter < 0x20)
        {
          g_string_free (out, TRUE);
          return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "control character in a string"), NULL;
        }
      if (letter == '\\')
        {
          if (sc->pos >= sc->len)
            break;
          letter = sc->s[sc->pos++];
          if (letter == 'u')
            {
              for (int index = 0; index < 4; index++)
                if (sc->pos >= sc->len || !g_ascii_isxdigit (sc->s[sc->pos++]))
                  {
                    g_string_free (out, TRUE);
                    return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "bad \\u escape"), NULL;
                  }
              letter = '?';
            }
          else if (!strchr ("\"\\/bfnrt", letter))
            {
              g_string_free (out, TRUE);
              return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "bad escape '\\%c'", letter), NULL;
            }
        }
      g_string_append_c (out, letter);
    }
  if (sc->pos >= sc->len)
    {
      g_string_free (out, TRUE);
      return scan_fail (sc, DW_BATCH_ERROR_TRUNCATED, "unterminated string"), NULL;
    }
  sc->pos++;
  return g_string_free (out, FALSE);
}

typedef enum
{
  NUM_INT = 1 << 0,  /* integer literal */
  NUM_BOOL = 1 << 1, /* true/false */
} NumKind;

/* A number (or NaN/Infinity/-Infinity/null → NaN; true/false → 1/0 with NUM_BOOL). */
static gboolean
number (Scan *sc, double *out, guint *kind)
{
  gsize start;
  gboolean is_int = TRUE;
  char *endp;

  ws (sc);
  *kind = 0;
  if (word (sc, "NaN") || word (sc, "null"))
    return *out = NAN, TRUE;
  if (word (sc, "Infinity"))
    return *out = INFINITY, TRUE;
  if (word (sc, "-Infinity"))
    return *out = -INFINITY, TRUE;
  if (word (sc, "true"))
    return *out = 1, *kind = NUM_BOOL, TRUE;
  if (word (sc, "false"))
    return *out = 0, *kind = NUM_BOOL, TRUE;
  start = sc->pos;
  if (sc->pos < sc->len && sc->s[sc->pos] == '-')
    sc->pos++;
  if (sc->pos >= sc->len || !g_ascii_isdigit (sc->s[sc->pos]))
    return scan_fail (sc, sc->pos >= sc->len ? DW_BATCH_ERROR_TRUNCATED : DW_BATCH_ERROR_CORRUPT,
                      "expected a number");
  while (sc->pos < sc->len && g_ascii_isdigit (sc->s[sc->pos]))
    sc->pos++;
  if (sc->pos < sc->len && sc->s[sc->pos] == '.')
    {
      is_int = FALSE;
      sc->pos++;
      if (sc->pos >= sc->len || !g_ascii_isdigit (sc->s[sc->pos]))
        return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "expected digits after '.'");
      while (sc->pos < sc->len && g_ascii_isdigit (sc->s[sc->pos]))
        sc->pos++;
    }
  if (sc->pos < sc->len && (sc->s[sc->pos] == 'e' || sc->s[sc->pos] == 'E'))
    {
      is_int = FALSE;
      sc->pos++;
      if (sc->pos < sc->len && (sc->s[sc->pos] == '+' || sc->s[sc->pos] == '-'))
        sc->pos++;
      if (sc->pos >= sc->len || !g_ascii_isdigit (sc->s[sc->pos]))
        return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "expected digits in the exponent");
      while (sc->pos < sc->len && g_ascii_isdigit (sc->s[sc->pos]))
        sc->pos++;
    }
  /* the line is NUL-terminated and the token validated: strtod stops at its end */
  *out = g_ascii_strtod (sc->s + start, &endp);
  if (endp != sc->s + sc->pos)
    {
      sc->pos = start;
      return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "bad number");
    }
  if (is_int)
    *kind = NUM_INT;
  return TRUE;
}

static gboolean
skip_value (Scan *sc, int depth)
{
  ws (sc);
  if (depth > JSONL_MAX_DEPTH)
    return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "nested deeper than %d", JSONL_MAX_DEPTH);
  if (sc->pos >= sc->len)
    return scan_fail (sc, DW_BATCH_ERROR_TRUNCATED, "expected a value");
  switch (sc->s[sc->pos])
    {
    case '"':
      {
        char *text = string (sc);
        g_free (text);
        return text != NULL;
      }
    case '[':
    case '{':
      {
        char close = sc->s[sc->pos] == '[' ? ']' : '}';
        sc->pos++;
        if (peek (sc, close))
          return sc->pos++, TRUE;
        for (;;)
          {
            if (close == '}')
              {
                char *key = string (sc);
                if (!key)
                  return FALSE;
                g_free (key);
                if (!peek (sc, ':'))
                  return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "expected ':'");
                sc->pos++;
              }
            if (!skip_value (sc, depth + 1))
              return FALSE;
            if (peek (sc, ','))
              {
                sc->pos++;
                continue;
              }
            if (peek (sc, close))
              return sc->pos++, TRUE;
            return scan_fail (
              sc, sc->pos >= sc->len ? DW_BATCH_ERROR_TRUNCATED : DW_BATCH_ERROR_CORRUPT,
              "expected ',' or '%c'", close);
          }
      }
    default:
      {
        double v;
        guint kind;
        return number (sc, &v, &kind);
      }
    }
}

typedef struct
{
  GArray *values; /* double */
  gboolean all_int, all_bool, all_f32, int_small;
} Column;

static void
column_init (Column *c)
{
  c->values = g_array_new (FALSE, FALSE, sizeof (double));
  c->all_int = c->all_bool = c->all_f32 = c->int_small = TRUE;
}

static gboolean
number_array (Scan *sc, Column *col, guint *count)
{
  *count = 0;
  if (!peek (sc, '['))
    return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "expected an array of numbers");
  sc->pos++;
  if (peek (sc, ']'))
    return sc->pos++, TRUE;
  for (;;)
    {
      double value;
      guint kind;
      if (!number (sc, &value, &kind))
        return FALSE;
      if (col->values->len >= G_MAXUINT - 1)
        return scan_fail (sc, DW_BATCH_ERROR_TOO_LARGE, "too many values");
      g_array_append_val (col->values, value);
      (*count)++;
      col->all_bool = col->all_bool && (kind & NUM_BOOL);
      col->all_int = col->all_int && (kind & NUM_INT);
      col->int_small = col->int_small && (kind & NUM_INT) && value >= 0 && value <= 255;
      col->all_f32 = col->all_f32 && (isnan (value) || (double)(float)value == value);
      if (peek (sc, ','))
        {
          sc->pos++;
          continue;
        }
      if (peek (sc, ']'))
        return sc->pos++, TRUE;
      return scan_fail (sc, sc->pos >= sc->len ? DW_BATCH_ERROR_TRUNCATED : DW_BATCH_ERROR_CORRUPT,
                        "expected ',' or ']'");
    }
}

enum
{
  C_OLD,
  C_ROLL,
  C_MASK,
  C_ADV,
  N_COLS
};

static const char *const col_keys[N_COLS][4] = {
  [C_OLD] = { "old_log_prob", "old_log_probs", "log_probs", NULL },
  [C_ROLL] = { "rollout_log_prob", "rollout_log_probs", NULL },
  [C_MASK] = { "response_mask", "loss_masks", "loss_mask", NULL },
  [C_ADV] = { "advantages", "advantage", NULL },
};

static int
column_of (const char *key)
{
  for (int column = 0; column < N_COLS; column++)
    for (int letter = 0; col_keys[column][letter]; letter++)
      if (strcmp (key, col_keys[column][letter]) == 0)
        return column;
  return -1;
}

static DwTensor *
column_tensor (Column *col, const char *name, DwDType dtype, const char *where)
{
  DwTensor *tensor = dw_tensor_new (name, where);
  gsize count = col->values->len;
  const double *value = (const double *)(gconstpointer)col->values->data;

  tensor->dtype = dtype;
  tensor->ndim = 1;
  tensor->shape[0] = count;
  tensor->n_elems = count;
  tensor->owned = g_malloc ((count ? count : 1) * dw_dtype_size (dtype));
  tensor->data = tensor->owned;
  for (gsize index = 0; index < count; index++)
    switch (dtype)
      {
      case DW_DTYPE_F64:
        ((double *)tensor->owned)[index] = value[index];
        break;
      case DW_DTYPE_F32:
        ((float *)tensor->owned)[index] = (float)value[index];
        break;
      case DW_DTYPE_BOOL:
      case DW_DTYPE_U8:
        ((guint8 *)tensor->owned)[index] = (guint8)value[index];
        break;
      case DW_DTYPE_I64:
        ((gint64 *)tensor->owned)[index]
          = (value[index] >= -9.2e18 && value[index] <= 9.2e18) ? (gint64)value[index] : 0;
        break;
      default:
        g_assert_not_reached ();
      }
  return tensor;
}

/* The batch is padded to rows × longest line: one long line among many short ones (1.2 MB of
 * ragged JSONL) asked for 9.2 GB. Checked against the reader's limit before anything is padded
 * (8 bytes per element: the widest log-prob dtype; mask and advantages fit in the same bound
 * for the float32 batches real runs write, and the limit is a bound, not an exact budget). */
static gboolean
jsonl_padded_fits (const char *name, GArray *cu, GError **error)
{
  gint64 longest = 0;
  gsize longest_row = 0, rows = cu->len - 1, elems, bytes;

  for (gsize row = 0; row < rows; row++)
    {
      gint64 len = g_array_index (cu, gint64, row + 1) - g_array_index (cu, gint64, row);
      if (len > longest)
        {
          longest = len;
          longest_row = row;
        }
    }
  if (g_size_checked_mul (&elems, rows, (gsize)longest)
      && g_size_checked_mul (&bytes, elems, 3 * sizeof (double))
      && bytes <= dw_batch_reader_get_max_bytes ())
    return TRUE;
  dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, name,
                      "sample %" G_GSIZE_FORMAT ": %" G_GSIZE_FORMAT
                      " samples padded to the longest "
                      "(%" G_GINT64_FORMAT " tokens, this one) need more than the reader's "
                      "limit of %" G_GUINT64_FORMAT " bytes",
                      longest_row + 1, rows, longest, dw_batch_reader_get_max_bytes ());
  return FALSE;
}

/* The state of one read: the columns so far, the row boundaries, the advantages' form, the step */
typedef struct
{
  const DwSource *src;
  GError **error;
  Column cols[N_COLS];
  GArray *cu;         /* gint64 row boundaries, starting at 0 */
  GArray *adv_scalar; /* double: one advantage per line (scalar form) */
  int adv_mode;       /* -1 unknown, 0 none, 1 array, 2 scalar */
  gint64 step;
  guint64 step_line, line;
} JsonlRead;

/* What one line gave */
typedef enum
{
  JSONL_LINE_OK,
  JSONL_LINE_BLANK,
  JSONL_LINE_FAILED,      /* *error set */
  JSONL_LINE_UNPARSEABLE, /* *error set; on an unterminated last line: still being written */
} JsonlLine;

/* The values one line's object holds, before they are checked against each other */
typedef struct
{
  guint counts[N_COLS];
  gboolean seen[N_COLS];
  gboolean have_adv_scalar;
  double adv_value;
} JsonlObject;

/* phase 1: the text, when the source is a file (a mapped source is read in place) */
static gboolean
jsonl_load_text (const DwSource *src, guint8 **text, GError **error)
{
  /* text → doubles can grow 4× ("0," is 2 bytes, a double 8) */
  if (src->size > dw_batch_reader_get_max_bytes () / 4)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                          "%" G_GUINT64_FORMAT " bytes of JSONL exceed the reader's limit of "
                          "%" G_GUINT64_FORMAT,
                          src->size, dw_batch_reader_get_max_bytes () / 4);
      return FALSE;
    }
  if (src->fd < 0)
    return TRUE;
  *text = g_try_malloc (src->size + 1);
  if (!*text)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name, "out of memory");
      return FALSE;
    }
  return dw_source_read (src, 0, *text, src->size, "the JSONL text", error);
}

/* a "step" member: a whole number, the same on every line that has one */
static JsonlLine
jsonl_read_step (JsonlRead *read, Scan *scan)
{
  double value;
  guint kind;
  gsize position = scan->pos;
  if (!number (scan, &value, &kind))
    return JSONL_LINE_UNPARSEABLE;
  if (!(kind & NUM_INT) || value < 0 || value > 9e15)
    {
      scan->pos = position;
      scan_fail (scan, DW_BATCH_ERROR_CORRUPT, "not a step number");
      return JSONL_LINE_FAILED;
    }
  if (read->step >= 0 && (gint64)value != read->step)
    {
      scan->pos = position;
      scan_fail (scan, DW_BATCH_ERROR_CORRUPT,
                 "%" G_GINT64_FORMAT " differs from step %" G_GINT64_FORMAT
                 " on line %" G_GUINT64_FORMAT,
                 (gint64)value, read->step, read->step_line);
      return JSONL_LINE_FAILED;
    }
  read->step = (gint64)value;
  read->step_line = read->line;
  return JSONL_LINE_OK;
}

/* phase 2a: one "key": value member of the line's object */
static JsonlLine
jsonl_read_member (JsonlRead *read, Scan *scan, JsonlObject *object)
{
  g_autofree char *key = string (scan);
  if (!key)
    return JSONL_LINE_UNPARSEABLE;
  if (!peek (scan, ':'))
    {
      scan_fail (scan, scan->pos >= scan->len ? DW_BATCH_ERROR_TRUNCATED : DW_BATCH_ERROR_CORRUPT,
                 "expected ':' after key %s", key);
      return JSONL_LINE_UNPARSEABLE;
    }
  scan->pos++;
  const int column = column_of (key);
  JsonlLine outcome = JSONL_LINE_OK;
  scan->key = key;
  if (column >= 0 && object->seen[column])
    {
      scan_fail (scan, DW_BATCH_ERROR_CORRUPT, "a second value for %s", col_keys[column][0]);
      outcome = JSONL_LINE_FAILED;
    }
  else if (column == C_ADV && !peek (scan, '['))
    {
      guint kind;
      if (!number (scan, &object->adv_value, &kind))
        outcome = JSONL_LINE_UNPARSEABLE;
      else
        object->have_adv_scalar = object->seen[column] = TRUE;
    }
  else if (column >= 0)
    {
      if (!number_array (scan, &read->cols[column], &object->counts[column]))
        outcome = JSONL_LINE_UNPARSEABLE;
      else
        object->seen[column] = TRUE;
    }
  else if (strcmp (key, "step") == 0 && !peek (scan, '"'))
    outcome = jsonl_read_step (read, scan);
  else if (!skip_value (scan, 1))
    outcome = JSONL_LINE_UNPARSEABLE;
  scan->key = NULL;
  return outcome;
}

/* phase 2b: the line's object, member by member, and nothing after it */
static JsonlLine
jsonl_read_object (JsonlRead *read, Scan *scan, JsonlObject *object)
{
  ws (scan);
  if (scan->pos == scan->len)
    return JSONL_LINE_BLANK;
  if (!peek (scan, '{'))
    {
      scan_fail (scan, DW_BATCH_ERROR_CORRUPT, "expected '{' (one JSON object per line)");
      return JSONL_LINE_FAILED;
    }
  scan->pos++;
  if (!peek (scan, '}'))
    for (;;)
      {
        const JsonlLine outcome = jsonl_read_member (read, scan, object);
        if (outcome != JSONL_LINE_OK)
          return outcome;
        if (peek (scan, ','))
          {
            scan->pos++;
            continue;
          }
        if (peek (scan, '}'))
          break;
        scan_fail (scan, scan->pos >= scan->len ? DW_BATCH_ERROR_TRUNCATED : DW_BATCH_ERROR_CORRUPT,
                   "expected ',' or '}'");
        return JSONL_LINE_UNPARSEABLE;
      }
  scan->pos++;
  ws (scan);
  if (scan->pos != scan->len)
    {
      scan_fail (scan, DW_BATCH_ERROR_CORRUPT, "text after the JSON object");
      return JSONL_LINE_FAILED;
    }
  return JSONL_LINE_OK;
}

/* phase 3: the line's columns agree with each other and with the earlier lines; its row added */
static gboolean
jsonl_accept_object (JsonlRead *read, const JsonlObject *object)
{
  const char *name = read->src->name;
  for (int column = C_OLD; column <= C_MASK; column++)
    if (!object->seen[column])
      {
        dw_batch_set_error (read->error, DW_BATCH_ERROR_MISSING_TENSOR, name,
                            "line %" G_GUINT64_FORMAT ": no key %s", read->line,
                            col_keys[column][0]);
        return FALSE;
      }
  for (int column = C_ROLL; column <= C_ADV; column++)
    if (object->seen[column] && !(column == C_ADV && object->have_adv_scalar)
        && object->counts[column] != object->counts[C_OLD])
      {
        dw_batch_set_error (read->error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                            "line %" G_GUINT64_FORMAT ", key %s: %u values, but %s has %u",
                            read->line, col_keys[column][0], object->counts[column],
                            col_keys[C_OLD][0], object->counts[C_OLD]);
        return FALSE;
      }
  const int mode = !object->seen[C_ADV] ? 0 : object->have_adv_scalar ? 2 : 1;
  if (read->adv_mode >= 0 && mode != read->adv_mode)
    {
      dw_batch_set_error (read->error, DW_BATCH_ERROR_SHAPE_MISMATCH, name,
                          "line %" G_GUINT64_FORMAT ", key advantages: %s, but earlier "
                          "lines have %s",
                          read->line,
                          mode == 0   ? "absent"
                          : mode == 1 ? "an array"
                                      : "a scalar",
                          read->adv_mode == 0   ? "none"
                          : read->adv_mode == 1 ? "arrays"
                                                : "scalars");
      return FALSE;
    }
  read->adv_mode = mode;
  if (mode == 2)
    g_array_append_val (read->adv_scalar, object->adv_value);
  gint64 next = g_array_index (read->cu, gint64, read->cu->len - 1) + object->counts[C_OLD];
  g_array_append_val (read->cu, next);
  return TRUE;
}

/* one line [@pos, its newline): read, checked, added; *@pos moves past it */
static gboolean
jsonl_read_line (JsonlRead *read, const guint8 *base, gsize *pos)
{
  const DwSource *src = read->src;
  const guint8 *newline = memchr (base + *pos, '\n', MIN (src->size - *pos, JSONL_MAX_LINE + 1));
  const gsize end = newline ? (gsize)(newline - base) : src->size;
  Scan scan = { src->name, NULL, 0, 0, ++read->line, *pos, read->error };
  JsonlObject object = { { 0 }, { FALSE }, FALSE, 0 };

  if (!newline && src->size - *pos > JSONL_MAX_LINE)
    {
      dw_batch_set_error (read->error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                          "line %" G_GUINT64_FORMAT " (offset %" G_GSIZE_FORMAT
                          "): longer than %u bytes",
                          read->line, *pos, JSONL_MAX_LINE);
      return FALSE;
    }
  g_autofree char *line_text = g_strndup ((const char *)base + *pos, end - *pos);
  scan.s = line_text;
  scan.len = strlen (line_text);
  if (scan.len != end - *pos)
    {
      scan.pos = scan.len;
      scan_fail (&scan, DW_BATCH_ERROR_CORRUPT, "NUL byte in the text");
      return FALSE;
    }
  *pos = newline ? end + 1 : end;
  switch (jsonl_read_object (read, &scan, &object))
    {
    case JSONL_LINE_BLANK:
      return TRUE;
    case JSONL_LINE_OK:
      return jsonl_accept_object (read, &object);
    case JSONL_LINE_UNPARSEABLE:
      /* a last line without its newline that does not parse: a file still being written */
      if (!newline && read->error && *read->error)
        {
          GError *problem = *read->error;
          char *message = g_strconcat (problem->message,
                                       " (unfinished last line: file still being written?)", NULL);
          g_free (problem->message);
          problem->message = message;
          problem->code = DW_BATCH_ERROR_TRUNCATED;
        }
      return FALSE;
    case JSONL_LINE_FAILED:
    default:
      return FALSE;
    }
}

/* phase 4: the columns as tensors (dtypes from what the values needed), cu_seqlens, the batch */
static DwBatch *
jsonl_build_batch (JsonlRead *read)
{
  const char *name = read->src->name;
  Column *cols = read->cols;
  GArray *array = read->cu;
  g_autoptr (GPtrArray) tensors = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_tensor_free);
  DwDType mask_dtype;

  if (array->len == 1)
    {
      dw_batch_set_error (read->error, DW_BATCH_ERROR_TRUNCATED, name, "no samples");
      return NULL;
    }
  if (!jsonl_padded_fits (name, array, read->error))
    return NULL;
  const DwDType lp_dtype
    = (cols[C_OLD].all_f32 && cols[C_ROLL].all_f32) ? DW_DTYPE_F32 : DW_DTYPE_F64;
  if (cols[C_MASK].values->len == 0)
    mask_dtype = DW_DTYPE_U8;
  else if (cols[C_MASK].all_bool)
    mask_dtype = DW_DTYPE_BOOL;
  else if (cols[C_MASK].int_small)
    mask_dtype = DW_DTYPE_U8;
  else if (cols[C_MASK].all_int)
    mask_dtype = DW_DTYPE_I64;
  else
    mask_dtype = cols[C_MASK].all_f32 ? DW_DTYPE_F32 : DW_DTYPE_F64;

  g_ptr_array_add (tensors,
                   column_tensor (&cols[C_OLD], "old_log_prob", lp_dtype, "key old_log_prob"));
  g_ptr_array_add (
    tensors, column_tensor (&cols[C_ROLL], "rollout_log_prob", lp_dtype, "key rollout_log_prob"));
  g_ptr_array_add (tensors,
                   column_tensor (&cols[C_MASK], "response_mask", mask_dtype, "key response_mask"));
  if (read->adv_mode == 1)
    g_ptr_array_add (tensors,
                     column_tensor (&cols[C_ADV], "advantages", lp_dtype, "key advantages"));
  else if (read->adv_mode == 2)
    {
      Column scalar_column = { read->adv_scalar, FALSE, FALSE, FALSE, FALSE };
      g_ptr_array_add (tensors,
                       column_tensor (&scalar_column, "advantages", lp_dtype, "key advantage"));
    }
  DwTensor *boundaries = dw_tensor_new ("cu_seqlens", "line lengths");
  boundaries->dtype = DW_DTYPE_I64;
  boundaries->ndim = 1;
  boundaries->shape[0] = array->len;
  boundaries->n_elems = array->len;
  boundaries->owned = g_memdup2 (array->data, array->len * sizeof (gint64));
  boundaries->data = boundaries->owned;
  g_ptr_array_add (tensors, boundaries);
  const gint64 step = read->step >= 0 ? read->step : dw_step_from_name (name);
  DwBatch *batch = dw_batch_from_tensors (name, tensors, step, NULL, read->error);
  if (batch)
    batch->flags &= ~(guint32)DW_BATCH_PACKED_SOURCE; /* ragged rows, not cu_seqlens */
  return batch;
}

DwBatch *
dw_jsonl_read (const DwSource *src, GError **error)
{
  g_autofree guint8 *text = NULL;
  JsonlRead read = { .src = src, .error = error, .adv_mode = -1, .step = -1 };
  DwBatch *batch = NULL;
  const gint64 zero = 0;
  gsize pos = 0;

  if (!jsonl_load_text (src, &text, error))
    return NULL;
  for (int column = 0; column < N_COLS; column++)
    column_init (&read.cols[column]);
  read.cu = g_array_new (FALSE, FALSE, sizeof (gint64));
  read.adv_scalar = g_array_new (FALSE, FALSE, sizeof (double));
  g_array_append_val (read.cu, zero);

  gboolean success = TRUE;
  while (success && pos < src->size)
    success = jsonl_read_line (&read, text ? text : src->mem, &pos);
  if (success)
    batch = jsonl_build_batch (&read);
  for (int column = 0; column < N_COLS; column++)
    g_array_unref (read.cols[column].values);
  g_array_unref (read.cu);
  g_array_unref (read.adv_scalar);
  return batch;
}

/* ------------------------------------------------------------------------------------------ */
/* Writer                                                                                     */

static void
append_double (GString *s, double v, gboolean as_float)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (isnan (v))
    g_string_append (s, "NaN");
  else if (isinf (v))
    g_string_append (s, v > 0 ? "Infinity" : "-Infinity");
  else
    {
      /* %.17g of the (widened) value reads back exactly; keep a '.' so it stays a float */
      g_ascii_formatd (buf, sizeof buf, "%.17g", v);
      g_string_append (s, buf);
      if (as_float && !strpbrk (buf, ".eE"))
        g_string_append (s, ".0");
    }
}

static double
lp_value (const void *p, DwDType dtype, gsize i)
{
  return dtype == DW_DTYPE_F32 ? ((const float *)p)[i] : ((const double *)p)[i];
}

gboolean
dw_batch_write_jsonl (const DwBatch *batch, const char *path, GError **error)
{
  g_autoptr (GString) s = g_string_new (NULL);

  g_return_val_if_fail (batch != NULL && path != NULL, FALSE);
  for (gsize row = 0; row < batch->rows; row++)
    {
      gsize len = 0, base = row * batch->cols;
      for (gsize col = batch->cols; col > 0; col--)
        if (dw_batch_mask_value (batch, base + col - 1) != 0)
          {
            len = col;
            break;
          }
      g_string_append_c (s, '{');
      if (batch->step >= 0)
        g_string_append_printf (s, "\"step\": %" G_GINT64_FORMAT ", ", batch->step);
      g_string_append_printf (
        s, "\"sample\": %" G_GSIZE_FORMAT ", \"response_length\": %" G_GSIZE_FORMAT, row, len);
      for (int estimator = 0; estimator < 3; estimator++)
        {
          const void *p = estimator == 0   ? batch->old_log_prob
                          : estimator == 1 ? batch->rollout_log_prob
                                           : batch->advantages;
          if (!p)
            continue;
          g_string_append_printf (s, ", \"%s\": [",
                                  estimator == 0   ? "old_log_prob"
                                  : estimator == 1 ? "rollout_log_prob"
                                                   : "advantages");
          for (gsize col = 0; col < len; col++)
            {
              if (col)
                g_string_append (s, ", ");
              append_double (s, lp_value (p, batch->lp_dtype, base + col), TRUE);
            }
          g_string_append_c (s, ']');
        }
      g_string_append (s, ", \"response_mask\": [");
      for (gsize col = 0; col < len; col++)
        {
          double mask = dw_batch_mask_value (batch, base + col);
          if (col)
            g_string_append (s, ", ");
          if (batch->mask_dtype == DW_DTYPE_BOOL)
            g_string_append (s, mask != 0 ? "true" : "false");
          else
            append_double (s, mask,
                           batch->mask_dtype == DW_DTYPE_F32 || batch->mask_dtype == DW_DTYPE_F64);
        }
      g_string_append (s, "]}\n");
    }
  return dw_batch_write_file (path, s->str, s->len, error);
}
