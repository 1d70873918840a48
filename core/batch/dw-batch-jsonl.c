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
  va_list ap;
  g_autofree char *msg = NULL;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
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
  gsize n = strlen (w);
  if (sc->len - sc->pos >= n && memcmp (sc->s + sc->pos, w, n) == 0)
    {
      sc->pos += n;
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
      char c = sc->s[sc->pos++];
      if ((guchar)c < 0x20)
        {
          g_string_free (out, TRUE);
          return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "control character in a string"), NULL;
        }
      if (c == '\\')
        {
          if (sc->pos >= sc->len)
            break;
          c = sc->s[sc->pos++];
          if (c == 'u')
            {
              for (int i = 0; i < 4; i++)
                if (sc->pos >= sc->len || !g_ascii_isxdigit (sc->s[sc->pos++]))
                  {
                    g_string_free (out, TRUE);
                    return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "bad \\u escape"), NULL;
                  }
              c = '?';
            }
          else if (!strchr ("\"\\/bfnrt", c))
            {
              g_string_free (out, TRUE);
              return scan_fail (sc, DW_BATCH_ERROR_CORRUPT, "bad escape '\\%c'", c), NULL;
            }
        }
      g_string_append_c (out, c);
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
        char *s = string (sc);
        g_free (s);
        return s != NULL;
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
                char *k = string (sc);
                if (!k)
                  return FALSE;
                g_free (k);
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
      double v;
      guint kind;
      if (!number (sc, &v, &kind))
        return FALSE;
      if (col->values->len >= G_MAXUINT - 1)
        return scan_fail (sc, DW_BATCH_ERROR_TOO_LARGE, "too many values");
      g_array_append_val (col->values, v);
      (*count)++;
      col->all_bool = col->all_bool && (kind & NUM_BOOL);
      col->all_int = col->all_int && (kind & NUM_INT);
      col->int_small = col->int_small && (kind & NUM_INT) && v >= 0 && v <= 255;
      col->all_f32 = col->all_f32 && (isnan (v) || (double)(float)v == v);
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
  for (int c = 0; c < N_COLS; c++)
    for (int k = 0; col_keys[c][k]; k++)
      if (strcmp (key, col_keys[c][k]) == 0)
        return c;
  return -1;
}

static DwTensor *
column_tensor (Column *col, const char *name, DwDType dtype, const char *where)
{
  DwTensor *t = dw_tensor_new (name, where);
  gsize n = col->values->len;
  const double *v = (const double *)(gconstpointer)col->values->data;

  t->dtype = dtype;
  t->ndim = 1;
  t->shape[0] = n;
  t->n_elems = n;
  t->owned = g_malloc ((n ? n : 1) * dw_dtype_size (dtype));
  t->data = t->owned;
  for (gsize i = 0; i < n; i++)
    switch (dtype)
      {
      case DW_DTYPE_F64:
        ((double *)t->owned)[i] = v[i];
        break;
      case DW_DTYPE_F32:
        ((float *)t->owned)[i] = (float)v[i];
        break;
      case DW_DTYPE_BOOL:
      case DW_DTYPE_U8:
        ((guint8 *)t->owned)[i] = (guint8)v[i];
        break;
      case DW_DTYPE_I64:
        ((gint64 *)t->owned)[i] = (v[i] >= -9.2e18 && v[i] <= 9.2e18) ? (gint64)v[i] : 0;
        break;
      default:
        g_assert_not_reached ();
      }
  return t;
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

  for (gsize r = 0; r < rows; r++)
    {
      gint64 len = g_array_index (cu, gint64, r + 1) - g_array_index (cu, gint64, r);
      if (len > longest)
        {
          longest = len;
          longest_row = r;
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

DwBatch *
dw_jsonl_read (const DwSource *src, GError **error)
{
  g_autoptr (GPtrArray) tensors = g_ptr_array_new_with_free_func ((GDestroyNotify)dw_tensor_free);
  g_autofree guint8 *text = NULL;
  g_autoptr (GArray) cu = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) adv_scalar = g_array_new (FALSE, FALSE, sizeof (double));
  Column cols[N_COLS];
  int adv_mode = -1; /* -1 unknown, 0 none, 1 array, 2 scalar */
  gint64 step = -1;
  guint64 step_line = 0, line = 0;
  gsize pos = 0;
  DwBatch *batch = NULL;
  DwDType lp, md;
  gint64 zero = 0;

  /* text → doubles can grow 4× ("0," is 2 bytes, a double 8) */
  if (src->size > dw_batch_reader_get_max_bytes () / 4)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                          "%" G_GUINT64_FORMAT " bytes of JSONL exceed the reader's limit of "
                          "%" G_GUINT64_FORMAT,
                          src->size, dw_batch_reader_get_max_bytes () / 4);
      return NULL;
    }
  if (src->fd >= 0)
    {
      text = g_try_malloc (src->size + 1);
      if (!text)
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name, "out of memory");
          return NULL;
        }
      if (!dw_source_read (src, 0, text, src->size, "the JSONL text", error))
        return NULL;
    }
  for (int c = 0; c < N_COLS; c++)
    column_init (&cols[c]);
  g_array_append_val (cu, zero);

  while (pos < src->size)
    {
      const guint8 *base = text ? text : src->mem;
      const guint8 *nl = memchr (base + pos, '\n', MIN (src->size - pos, JSONL_MAX_LINE + 1));
      gsize end = nl ? (gsize)(nl - base) : src->size;
      g_autofree char *s = NULL;
      Scan sc = { src->name, NULL, 0, 0, ++line, pos, error };
      guint counts[N_COLS] = { 0 };
      gboolean seen[N_COLS] = { FALSE };
      gboolean have_adv_scalar = FALSE;
      double adv_value = 0;

      if (!nl && src->size - pos > JSONL_MAX_LINE)
        {
          dw_batch_set_error (error, DW_BATCH_ERROR_TOO_LARGE, src->name,
                              "line %" G_GUINT64_FORMAT " (offset %" G_GSIZE_FORMAT
                              "): longer than %u bytes",
                              line, pos, JSONL_MAX_LINE);
          goto out;
        }
      s = g_strndup ((const char *)base + pos, end - pos);
      sc.s = s;
      sc.len = strlen (s);
      if (sc.len != end - pos)
        {
          sc.pos = sc.len;
          scan_fail (&sc, DW_BATCH_ERROR_CORRUPT, "NUL byte in the text");
          goto out;
        }
      pos = nl ? end + 1 : end;
      ws (&sc);
      if (sc.pos == sc.len)
        continue; /* blank line */
      if (!peek (&sc, '{'))
        {
          scan_fail (&sc, DW_BATCH_ERROR_CORRUPT, "expected '{' (one JSON object per line)");
          goto out;
        }
      sc.pos++;
      if (!peek (&sc, '}'))
        for (;;)
          {
            g_autofree char *key = string (&sc);
            int c;
            if (!key)
              goto line_fail;
            if (!peek (&sc, ':'))
              {
                scan_fail (&sc,
                           sc.pos >= sc.len ? DW_BATCH_ERROR_TRUNCATED : DW_BATCH_ERROR_CORRUPT,
                           "expected ':' after key %s", key);
                goto line_fail;
              }
            sc.pos++;
            c = column_of (key);
            sc.key = key;
            if (c >= 0 && seen[c])
              {
                scan_fail (&sc, DW_BATCH_ERROR_CORRUPT, "a second value for %s", col_keys[c][0]);
                goto out;
              }
            if (c == C_ADV && !peek (&sc, '['))
              {
                guint kind;
                if (!number (&sc, &adv_value, &kind))
                  goto line_fail;
                have_adv_scalar = seen[c] = TRUE;
              }
            else if (c >= 0)
              {
                if (!number_array (&sc, &cols[c], &counts[c]))
                  goto line_fail;
                seen[c] = TRUE;
              }
            else if (strcmp (key, "step") == 0 && !peek (&sc, '"'))
              {
                double v;
                guint kind;
                gsize at = sc.pos;
                if (!number (&sc, &v, &kind))
                  goto line_fail;
                if (!(kind & NUM_INT) || v < 0 || v > 9e15)
                  {
                    sc.pos = at;
                    scan_fail (&sc, DW_BATCH_ERROR_CORRUPT, "not a step number");
                    goto out;
                  }
                if (step >= 0 && (gint64)v != step)
                  {
                    sc.pos = at;
                    scan_fail (&sc, DW_BATCH_ERROR_CORRUPT,
                               "%" G_GINT64_FORMAT " differs from step %" G_GINT64_FORMAT
                               " on line %" G_GUINT64_FORMAT,
                               (gint64)v, step, step_line);
                    goto out;
                  }
                step = (gint64)v;
                step_line = line;
              }
            else if (!skip_value (&sc, 1))
              goto line_fail;
            sc.key = NULL;
            if (peek (&sc, ','))
              {
                sc.pos++;
                continue;
              }
            if (peek (&sc, '}'))
              break;
            scan_fail (&sc, sc.pos >= sc.len ? DW_BATCH_ERROR_TRUNCATED : DW_BATCH_ERROR_CORRUPT,
                       "expected ',' or '}'");
            goto line_fail;
          }
      sc.pos++;
      ws (&sc);
      if (sc.pos != sc.len)
        {
          scan_fail (&sc, DW_BATCH_ERROR_CORRUPT, "text after the JSON object");
          goto out;
        }
      for (int c = C_OLD; c <= C_MASK; c++)
        if (!seen[c])
          {
            dw_batch_set_error (error, DW_BATCH_ERROR_MISSING_TENSOR, src->name,
                                "line %" G_GUINT64_FORMAT ": no key %s", line, col_keys[c][0]);
            goto out;
          }
      for (int c = C_ROLL; c <= C_ADV; c++)
        if (seen[c] && !(c == C_ADV && have_adv_scalar) && counts[c] != counts[C_OLD])
          {
            dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, src->name,
                                "line %" G_GUINT64_FORMAT ", key %s: %u values, but %s has %u",
                                line, col_keys[c][0], counts[c], col_keys[C_OLD][0], counts[C_OLD]);
            goto out;
          }
      {
        int mode = !seen[C_ADV] ? 0 : have_adv_scalar ? 2 : 1;
        if (adv_mode >= 0 && mode != adv_mode)
          {
            dw_batch_set_error (error, DW_BATCH_ERROR_SHAPE_MISMATCH, src->name,
                                "line %" G_GUINT64_FORMAT ", key advantages: %s, but earlier "
                                "lines have %s",
                                line,
                                mode == 0   ? "absent"
                                : mode == 1 ? "an array"
                                            : "a scalar",
                                adv_mode == 0   ? "none"
                                : adv_mode == 1 ? "arrays"
                                                : "scalars");
            goto out;
          }
        adv_mode = mode;
        if (mode == 2)
          g_array_append_val (adv_scalar, adv_value);
      }
      {
        gint64 next = g_array_index (cu, gint64, cu->len - 1) + counts[C_OLD];
        g_array_append_val (cu, next);
      }
      continue;

    line_fail:
      /* a last line without its newline that does not parse: a file still being written */
      if (!nl && error && *error)
        {
          char *m = g_strconcat ((*error)->message,
                                 " (unfinished last line: file still being written?)", NULL);
          g_free ((*error)->message);
          (*error)->message = m;
          (*error)->code = DW_BATCH_ERROR_TRUNCATED;
        }
      goto out;
    }

  if (cu->len == 1)
    {
      dw_batch_set_error (error, DW_BATCH_ERROR_TRUNCATED, src->name, "no samples");
      goto out;
    }
  if (!jsonl_padded_fits (src->name, cu, error))
    goto out;
  lp = (cols[C_OLD].all_f32 && cols[C_ROLL].all_f32) ? DW_DTYPE_F32 : DW_DTYPE_F64;
  if (cols[C_MASK].values->len == 0)
    md = DW_DTYPE_U8;
  else if (cols[C_MASK].all_bool)
    md = DW_DTYPE_BOOL;
  else if (cols[C_MASK].int_small)
    md = DW_DTYPE_U8;
  else if (cols[C_MASK].all_int)
    md = DW_DTYPE_I64;
  else
    md = cols[C_MASK].all_f32 ? DW_DTYPE_F32 : DW_DTYPE_F64;

  g_ptr_array_add (tensors, column_tensor (&cols[C_OLD], "old_log_prob", lp, "key old_log_prob"));
  g_ptr_array_add (tensors,
                   column_tensor (&cols[C_ROLL], "rollout_log_prob", lp, "key rollout_log_prob"));
  g_ptr_array_add (tensors,
                   column_tensor (&cols[C_MASK], "response_mask", md, "key response_mask"));
  if (adv_mode == 1)
    g_ptr_array_add (tensors, column_tensor (&cols[C_ADV], "advantages", lp, "key advantages"));
  else if (adv_mode == 2)
    {
      Column sc_col = { adv_scalar, FALSE, FALSE, FALSE, FALSE };
      g_ptr_array_add (tensors, column_tensor (&sc_col, "advantages", lp, "key advantage"));
    }
  {
    DwTensor *t = dw_tensor_new ("cu_seqlens", "line lengths");
    t->dtype = DW_DTYPE_I64;
    t->ndim = 1;
    t->shape[0] = cu->len;
    t->n_elems = cu->len;
    t->owned = g_memdup2 (cu->data, cu->len * sizeof (gint64));
    t->data = t->owned;
    g_ptr_array_add (tensors, t);
  }
  if (step < 0)
    step = dw_step_from_name (src->name);
  batch = dw_batch_from_tensors (src->name, tensors, step, NULL, error);
  if (batch)
    batch->flags &= ~(guint32)DW_BATCH_PACKED_SOURCE; /* ragged rows, not cu_seqlens */
out:
  for (int c = 0; c < N_COLS; c++)
    g_array_unref (cols[c].values);
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
  for (gsize r = 0; r < batch->rows; r++)
    {
      gsize len = 0, base = r * batch->cols;
      for (gsize c = batch->cols; c > 0; c--)
        if (dw_batch_mask_value (batch, base + c - 1) != 0)
          {
            len = c;
            break;
          }
      g_string_append_c (s, '{');
      if (batch->step >= 0)
        g_string_append_printf (s, "\"step\": %" G_GINT64_FORMAT ", ", batch->step);
      g_string_append_printf (
        s, "\"sample\": %" G_GSIZE_FORMAT ", \"response_length\": %" G_GSIZE_FORMAT, r, len);
      for (int k = 0; k < 3; k++)
        {
          const void *p = k == 0   ? batch->old_log_prob
                          : k == 1 ? batch->rollout_log_prob
                                   : batch->advantages;
          if (!p)
            continue;
          g_string_append_printf (s, ", \"%s\": [",
                                  k == 0   ? "old_log_prob"
                                  : k == 1 ? "rollout_log_prob"
                                           : "advantages");
          for (gsize c = 0; c < len; c++)
            {
              if (c)
                g_string_append (s, ", ");
              append_double (s, lp_value (p, batch->lp_dtype, base + c), TRUE);
            }
          g_string_append_c (s, ']');
        }
      g_string_append (s, ", \"response_mask\": [");
      for (gsize c = 0; c < len; c++)
        {
          double m = dw_batch_mask_value (batch, base + c);
          if (c)
            g_string_append (s, ", ");
          if (batch->mask_dtype == DW_DTYPE_BOOL)
            g_string_append (s, m != 0 ? "true" : "false");
          else
            append_double (s, m,
                           batch->mask_dtype == DW_DTYPE_F32 || batch->mask_dtype == DW_DTYPE_F64);
        }
      g_string_append (s, "]}\n");
    }
  return dw_batch_write_file (path, s->str, s->len, error);
}
