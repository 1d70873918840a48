/* dw-log-sniff.c — recognising a log by its content, anywhere in the file (dw-log-sniff.h)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <inttypes.h>

#include "dw-log-reader-private.h"
#include "dw-log-sniff.h"
#include "dw-reader-loggers.h"

#define HEAD_BYTES  65536
#define CHUNK_BYTES (1u << 20)
/* A head where more than this share of the bytes are control bytes (other than tab, newline,
 * carriage return, form feed and ESC) is binary: a NUL or two in a log is not. */
#define BINARY_PERMILLE 100

struct _DwSniffer
{
  char *path;
  gboolean head_done;
  gboolean final;
  gboolean in_fence;
  DwFormat format;
  gint64 offset; /* start of the first line not examined yet */
  gboolean out_of_time;
  guint64 dev, ino; /* of the file examined: another file at the path is examined anew */
  char *reason;
};

DwSniffer *
dw_sniffer_new (const char *path)
{
  DwSniffer *s = g_new0 (DwSniffer, 1);

  s->path = g_strdup (path);
  s->reason = g_strdup (_ ("not examined yet"));
  return s;
}

void
dw_sniffer_free (DwSniffer *s)
{
  if (s == NULL)
    return;
  g_free (s->path);
  g_free (s->reason);
  g_free (s);
}

gboolean
dw_sniffer_is_final (DwSniffer *s)
{
  return s->final;
}

const char *
dw_sniffer_get_reason (DwSniffer *s)
{
  return s->format != DW_FORMAT_UNKNOWN ? NULL : s->reason;
}

gboolean
dw_sniffer_is_unfinished (DwSniffer *s)
{
  return !s->final && s->out_of_time;
}

gint64
dw_sniffer_get_offset (DwSniffer *s)
{
  return s->offset;
}

static void
set_reason (DwSniffer *s, gboolean final, char *reason)
{
  g_free (s->reason);
  s->reason = reason;
  s->final = final;
}

static gssize
pread_all (int fd, guint8 *buf, gsize n, gint64 offset)
{
  gsize done = 0;

  while (done < n)
    {
      ssize_t r = pread (fd, buf + done, n - done, (off_t)(offset + (gint64)done));
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return -1;
      if (r == 0)
        break;
      done += (gsize)r;
    }
  return (gssize)done;
}

static gboolean
head_is_binary (const guint8 *h, gsize n)
{
  gsize ctl = 0;

  if (n < 64)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    ctl += h[i] < 0x20 && h[i] != '\t' && h[i] != '\n' && h[i] != '\r' && h[i] != '\f'
           && h[i] != '\033' && h[i] != '\v';
  return ctl * 1000 > n * BINARY_PERMILLE;
}

/* First bytes: binary and structured formats, or refusals. Returns TRUE when decided; sets
 * @whole when the head examined was a whole HEAD_BYTES (a shorter one is looked at again when
 * the file grows). */
static gboolean
examine_head (DwSniffer *s, int fd, gboolean *whole)
{
  g_autofree guint8 *head = g_malloc (HEAD_BYTES);
  gssize n = pread_all (fd, head, HEAD_BYTES, 0);
  DwFormat f;

  *whole = n == HEAD_BYTES;
  if (n < 0)
    {
      set_reason (s, FALSE, g_strdup_printf (_ ("cannot be read: %s"), g_strerror (errno)));
      return TRUE;
    }
  if (n == 0)
    {
      set_reason (s, FALSE, g_strdup (_ ("empty file")));
      return TRUE;
    }
  if (dw_path_is_document (s->path))
    {
      g_autofree char *base = g_path_get_basename (s->path);
      set_reason (s, TRUE,
                  g_strdup_printf (_ ("a document (%s), not a log: a log quoted in it is not "
                                      "ingested"),
                                   base));
      return TRUE;
    }
  if (n >= 16 && memcmp (head, "SQLite format 3", 16) == 0)
    {
      g_autofree char *why = NULL;
      f = dw_sqlite_sniff (s->path, &why);
      if (f != DW_FORMAT_UNKNOWN)
        {
          s->format = f;
          s->final = TRUE;
        }
      else
        set_reason (s, TRUE,
                    g_strdup_printf (_ ("SQLite file that is not an MLflow store nor a trackio "
                                        "project (%s)"),
                                     why != NULL ? why : _ ("unknown tables")));
      return TRUE;
    }
  f = dw_format_sniff (s->path, head, (gsize)n);
  if (f != DW_FORMAT_UNKNOWN)
    {
      s->format = f;
      s->final = TRUE;
      return TRUE;
    }
  if (head_is_binary (head, (gsize)n))
    {
      set_reason (s, TRUE,
                  g_strdup_printf (
                    _ ("binary (mostly control bytes in the first %" PRId64 " bytes)"), (gint64)n));
      return TRUE;
    }
  return FALSE;
}

DwFormat
dw_sniffer_step (DwSniffer *s, int fd, gint64 budget_us)
{
  gint64 deadline = budget_us < 0 ? G_MAXINT64 : g_get_monotonic_time () + budget_us;
  g_autofree guint8 *buf = NULL;
  gint64 size;
  gboolean out_of_time = FALSE;
  struct stat st;

  if (fstat (fd, &st) != 0)
    return DW_FORMAT_UNKNOWN;
  size = (gint64)st.st_size;
  if ((guint64)st.st_dev != s->dev || (guint64)st.st_ino != s->ino)
    {
      /* another file now has this path (renamed over it): examine it from the start */
      s->dev = (guint64)st.st_dev;
      s->ino = (guint64)st.st_ino;
      s->offset = 0;
      s->head_done = FALSE;
      s->in_fence = FALSE;
      s->final = FALSE;
      s->format = DW_FORMAT_UNKNOWN;
    }
  if (size < s->offset)
    {
      /* shrank: rewritten, look again from the start */
      s->offset = 0;
      s->head_done = FALSE;
      s->in_fence = FALSE;
    }
  if (s->final)
    return s->format;
  if (!s->head_done)
    {
      gboolean whole;

      if (examine_head (s, fd, &whole))
        return s->format;
      /* a format told by its first line (verl's JSONL) cannot be told from the first bytes of
       * that line, which is all a file being written may hold at the first look */
      s->head_done = whole;
    }
  buf = g_malloc (CHUNK_BYTES);
  while (s->offset < size)
    {
      gssize n = pread_all (fd, buf, CHUNK_BYTES, s->offset);
      const guint8 *last_nl;
      gsize whole;
      DwFormat f;

      if (n <= 0)
        break;
      last_nl = memrchr (buf, '\n', (gsize)n);
      /* whole lines; a line longer than a chunk is examined in pieces */
      whole = last_nl != NULL ? (gsize)(last_nl - buf) + 1 : (gsize)n;
      if (last_nl == NULL && s->offset + n >= size)
        whole = 0; /* the unterminated last line: examined below, not consumed */
      f = dw_format_sniff_lines (s->path, buf, whole, &s->in_fence);
      if (f == DW_FORMAT_UNKNOWN && whole < (gsize)n && s->offset + n >= size)
        {
          /* the last line has no newline yet: it counts (a file that stopped there is read
           * whole), but it is examined again when it grows */
          gboolean fence = s->in_fence;
          f = dw_format_sniff_lines (s->path, buf + whole, (gsize)n - whole, &fence);
        }
      if (f != DW_FORMAT_UNKNOWN)
        {
          s->format = f;
          s->final = TRUE;
          return f;
        }
      s->offset += (gint64)whole;
      if (whole == 0)
        break;
      if (g_get_monotonic_time () > deadline)
        {
          out_of_time = s->offset < size;
          break;
        }
    }
  s->out_of_time = out_of_time;
  if (out_of_time)
    set_reason (s, FALSE,
                g_strdup_printf (_ ("no metric line in the first %" PRId64 " of %" PRId64
                                    " bytes (examined for %.1f s; examined further next time)"),
                                 s->offset, size, (double)budget_us / G_USEC_PER_SEC));
  else
    set_reason (s, FALSE, g_strdup_printf (_ ("no metric line in %" PRId64 " bytes"), size));
  return DW_FORMAT_UNKNOWN;
}

DwFormat
dw_format_recognise (const char *path, int fd, gint64 budget_us, char **reason)
{
  g_autoptr (DwSniffer) s = dw_sniffer_new (path);
  DwFormat f = dw_sniffer_step (s, fd, budget_us);

  if (reason != NULL)
    *reason = f == DW_FORMAT_UNKNOWN ? g_strdup (s->reason) : NULL;
  return f;
}
