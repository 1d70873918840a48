/* dw-reader-wandb-csv.c — W&B CSV exports
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * API history CSV (`run.history()/scan_history()` → pandas `to_csv`): an optional unnamed pandas
 * index column (ignored), `_step` (the step), `_timestamp` (wall time), `_runtime` (ignored), and
 * one column per metric; empty cells mean "not logged in this row". When slime's step columns
 * (`train/step`, `rollout/step`, `eval/step`) are present, each metric uses its own axis
 * (docs/FORMATS.md §7.1) instead of W&B's meaningless `_step`.
 *
 * UI panel CSV: first column = the x axis (`Step`), then per run `"<run> - <metric>"`,
 * `…__MIN`, `…__MAX`. Only the value column is kept: __MIN/__MAX are the extremes of the bucket
 * the panel down-sampled into, not logged values (the value column is what the panel drew).
 * Tag = `<metric>` when the file holds one run, else `<run> - <metric>`.
 *
 * RFC 4180 quoting; a quoted field spanning lines is not supported (W&B never writes one for
 * numeric exports) — such a row is reported as having the wrong number of columns.
 */
#include "dw-reader-formats.h"

#include <math.h>
#include <string.h>

enum
{
  COL_IGNORE,
  COL_STEP,
  COL_TIME,
  COL_METRIC,
  COL_AXIS_TRAIN,
  COL_AXIS_ROLLOUT,
  COL_AXIS_EVAL
};

typedef struct
{
  gboolean have_header;
  gboolean panel;
  guint ncols;
  int *kind;
  char **tags;
  const char **axis; /* per metric column: NULL or the slime step key */
  GPtrArray *cells;
  GString *cell;
} CsvState;

static void
csv_state_free (gpointer p)
{
  CsvState *st = p;
  g_free (st->kind);
  g_strfreev (st->tags);
  g_free (st->axis);
  g_ptr_array_unref (st->cells);
  g_string_free (st->cell, TRUE);
  g_free (st);
}

/* Splits one CSV line into st->cells; FALSE on a malformed quote. */
static gboolean
split_csv (CsvState *st, const char *line, gsize len)
{
  g_ptr_array_set_size (st->cells, 0);
  gsize i = 0;
  for (;;)
    {
      g_string_truncate (st->cell, 0);
      if (i < len && line[i] == '"')
        {
          i++;
          for (;;)
            {
              if (i >= len)
                return FALSE;
              if (line[i] == '"')
                {
                  if (i + 1 < len && line[i + 1] == '"')
                    {
                      g_string_append_c (st->cell, '"');
                      i += 2;
                      continue;
                    }
                  i++;
                  break;
                }
              g_string_append_c (st->cell, line[i++]);
            }
          if (i < len && line[i] != ',')
            return FALSE;
        }
      else
        {
          gsize b = i;
          while (i < len && line[i] != ',')
            i++;
          g_string_append_len (st->cell, line + b, (gssize)(i - b));
        }
      g_ptr_array_add (st->cells, g_strdup (st->cell->str));
      if (i >= len)
        return TRUE;
      i++; /* ',' */
    }
}

static void
read_header (DwLogReader *r, CsvState *st)
{
  guint n = st->cells->len;
  st->ncols = n;
  st->kind = g_new0 (int, n);
  st->tags = g_new0 (char *, n + 1);
  st->axis = g_new0 (const char *, n);
  gboolean has_slime_axes = FALSE;
  st->panel = r->format == DW_FORMAT_WANDB_PANEL_CSV;
  for (guint i = 0; i < n; i++)
    {
      const char *h = g_ptr_array_index (st->cells, i);
      if (g_str_has_suffix (h, "__MIN") || g_str_has_suffix (h, "__MAX"))
        st->panel = TRUE;
      if (strcmp (h, "train/step") == 0 || strcmp (h, "rollout/step") == 0
          || strcmp (h, "eval/step") == 0)
        has_slime_axes = TRUE;
    }
  GHashTable *runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < n; i++)
    {
      const char *h = g_ptr_array_index (st->cells, i);
      const char *sep = strstr (h, " - ");
      if (st->panel && sep != NULL && i > 0)
        g_hash_table_add (runs, g_strndup (h, (gsize)(sep - h)));
    }
  gboolean one_run = g_hash_table_size (runs) <= 1;
  g_hash_table_unref (runs);

  for (guint i = 0; i < n; i++)
    {
      const char *h = g_ptr_array_index (st->cells, i);
      if (st->panel)
        {
          if (i == 0)
            st->kind[i] = COL_STEP;
          else if (g_str_has_suffix (h, "__MIN") || g_str_has_suffix (h, "__MAX") || *h == '\0')
            st->kind[i] = COL_IGNORE;
          else
            {
              const char *sep = strstr (h, " - ");
              st->kind[i] = COL_METRIC;
              st->tags[i] = g_strdup (one_run && sep != NULL ? sep + 3 : h);
            }
          continue;
        }
      if (*h == '\0' || strcmp (h, "_runtime") == 0 || strcmp (h, "Unnamed: 0") == 0)
        st->kind[i] = COL_IGNORE;
      else if (strcmp (h, "_step") == 0)
        st->kind[i] = COL_STEP;
      else if (strcmp (h, "_timestamp") == 0)
        st->kind[i] = COL_TIME;
      else if (strcmp (h, "train/step") == 0)
        st->kind[i] = COL_AXIS_TRAIN;
      else if (strcmp (h, "rollout/step") == 0)
        st->kind[i] = COL_AXIS_ROLLOUT;
      else if (strcmp (h, "eval/step") == 0)
        st->kind[i] = COL_AXIS_EVAL;
      else
        {
          st->kind[i] = COL_METRIC;
          st->tags[i] = g_strdup (h);
          if (has_slime_axes)
            st->axis[i] = g_str_has_prefix (h, "train/")  ? "train/step"
                          : g_str_has_prefix (h, "eval/") ? "eval/step"
                                                          : "rollout/step";
        }
    }
  for (guint i = 0; i < n; i++)
    if (st->tags[i] == NULL)
      st->tags[i] = g_strdup ("");
  st->have_header = TRUE;
}

static void
csv_line (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const char *line, gsize len, CsvState *st)
{
  if (len == 0)
    return;
  if (!split_csv (st, line, len))
    {
      dw_reader_diag (ctx, offset, "W&B CSV: malformed quoting, row skipped");
      return;
    }
  if (!st->have_header)
    {
      read_header (r, st);
      return;
    }
  if (st->cells->len != st->ncols)
    {
      dw_reader_diag (ctx, offset, "W&B CSV: row has %u columns, the header has %u; row skipped",
                      st->cells->len, st->ncols);
      return;
    }
  double step = NAN, wall = NAN, ax[3] = { NAN, NAN, NAN };
  for (guint i = 0; i < st->ncols; i++)
    {
      const char *c = g_ptr_array_index (st->cells, i);
      double v;
      if (st->kind[i] == COL_METRIC || st->kind[i] == COL_IGNORE || *c == '\0')
        continue;
      if (!dw_parse_number (c, strlen (c), &v) || !isfinite (v))
        {
          dw_reader_diag (ctx, offset, "W&B CSV: step/time column %u is not a number: \"%s\"",
                          i + 1, c);
          return;
        }
      switch (st->kind[i])
        {
        case COL_STEP:
          step = v;
          break;
        case COL_TIME:
          wall = v;
          break;
        case COL_AXIS_TRAIN:
          ax[0] = v;
          break;
        case COL_AXIS_ROLLOUT:
          ax[1] = v;
          break;
        default:
          ax[2] = v;
          break;
        }
    }
  for (guint i = 0; i < st->ncols; i++)
    {
      if (st->kind[i] != COL_METRIC)
        continue;
      const char *c = g_ptr_array_index (st->cells, i);
      double v;
      if (*c == '\0')
        continue;
      if (!dw_parse_number (c, strlen (c), &v))
        {
          if (*c != '{' && *c != '[')
            dw_reader_diag (ctx, offset, "W&B CSV: value of \"%s\" is not a number: \"%s\"",
                            st->tags[i], c);
          continue;
        }
      double s = step;
      if (st->axis[i] != NULL)
        {
          const char *a = st->axis[i];
          s = a[0] == 't' ? ax[0] : a[0] == 'e' ? ax[2] : ax[1];
        }
      if (!isfinite (s))
        {
          dw_reader_diag (ctx, offset, "W&B CSV: no step for \"%s\" in this row", st->tags[i]);
          continue;
        }
      dw_reader_emit (ctx, st->tags[i], (gint64)s, wall, v, st->axis[i]);
    }
}

static gsize
csv_feed (DwLogReader *r, DwFeedCtx *ctx, goffset offset, const guint8 *data, gsize len,
          gboolean at_eof)
{
  (void)at_eof;
  CsvState *st = r->state;
  if (!st->have_header && offset > 0)
    {
      dw_reader_diag (ctx, offset,
                      "W&B CSV: resumed without the header line; feed the first line first");
      return 0;
    }
  gsize pos = 0;
  while (pos < len)
    {
      const guint8 *nl = memchr (data + pos, '\n', len - pos);
      if (nl == NULL)
        {
          if (len - pos > DW_READER_MAX_LINE)
            {
              dw_reader_diag (ctx, offset + (goffset)pos, "W&B CSV: line too long, skipped");
              return len;
            }
          break;
        }
      gsize end = (gsize)(nl - data), l = end - pos;
      if (l > 0 && data[pos + l - 1] == '\r')
        l--;
      csv_line (r, ctx, offset + (goffset)pos, (const char *)data + pos, l, st);
      pos = end + 1;
    }
  return pos;
}

void
dw_reader_wandb_csv_init (DwLogReader *reader)
{
  CsvState *st = g_new0 (CsvState, 1);
  st->cells = g_ptr_array_new_with_free_func (g_free);
  st->cell = g_string_new (NULL);
  reader->state = st;
  reader->state_free = csv_state_free;
  reader->feed = csv_feed;
}
