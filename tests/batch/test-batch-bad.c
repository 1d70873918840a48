/* test-batch-bad.c — the bad-input catalogue for rollout batches (issue 6 §3)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every bad input must fail with a DW_BATCH_ERROR whose message starts with the file name and
 * names the place (offset, line, member, tensor, header), never crash (ASan/UBSan run this too),
 * never allocate what a header merely declares. Values that are merely odd (NaN, ±inf, -0.0
 * log-probs, masks with 2/-1/0.5) load as they are: the math decides what they mean.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "dw-batch-reader.h"

static char *
data_path (const char *key)
{
  if (g_str_has_prefix (key, "shared:"))
    return g_build_filename (g_getenv ("DW_SHARED_DIR"), key + 7, NULL);
  return g_build_filename (g_getenv ("DW_TEST_DATA"), "batch", key + 5, NULL);
}

static GBytes *
load (const char *key)
{
  g_autofree char *path = data_path (key);
  g_autoptr (GError) error = NULL;
  char *contents;
  gsize len;

  g_file_get_contents (path, &contents, &len, &error);
  g_assert_no_error (error);
  return g_bytes_new_take (contents, len);
}

static gboolean
names_place (const char *msg)
{
  static const char *const places[]
    = { "offset ", "line ", "member ", "tensor '", "header", "central directory", NULL };
  for (int i = 0; places[i]; i++)
    if (strstr (msg, places[i]))
      return TRUE;
  return FALSE;
}

/* Reads @data as @name; asserts the error @code and, if @message, the exact message. */
static void
expect_error (const char *name, const void *data, gsize len, DwBatchError code, const char *message)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) b = dw_batch_read_bytes (name, data, len, &error);
  g_autofree char *prefix = g_strconcat (name, ": ", NULL);

  g_assert_null (b);
  g_assert_error (error, DW_BATCH_ERROR, (gint)code);
  g_assert_true (g_str_has_prefix (error->message, prefix));
  if (message)
    g_assert_cmpstr (error->message, ==, message);
  else
    g_assert_true (names_place (error->message));
}

static void
expect_error_str (const char *name, const char *text, DwBatchError code, const char *message)
{
  expect_error (name, text, strlen (text), code, message);
}

/* Same-length text replacement in a copy of @bytes (first occurrence after @from). */
static guint8 *
patch (GBytes *bytes, const char *find, const char *repl, gsize *len)
{
  gsize n;
  const guint8 *d = g_bytes_get_data (bytes, &n);
  guint8 *out = g_memdup2 (d, n);
  guint8 *at = memmem (out, n, find, strlen (find));

  g_assert_nonnull (at);
  g_assert_cmpuint (strlen (find), ==, strlen (repl));
  memcpy (at, repl, strlen (repl));
  *len = n;
  return out;
}

static const char *const small_files[] = {
  "shared:samples/batch/step_000001.npz",
  "shared:samples/batch/step_000001.safetensors",
  "shared:samples/batch/step_000001_bf16.safetensors",
  "shared:samples/batch/step_000001.jsonl",
  "shared:samples/batch/step_000001.old_log_prob.npy",
  "shared:golden/batches/tiny.npz",
  "shared:golden/batches/tiny_mask_bool.npz",
  "shared:golden/batches/nonfinite_padding.npz",
  "data:step_000001_packed.safetensors",
  "data:step_000003_f16.safetensors",
  "data:layouts.npz",
  "data:nonfinite.safetensors",
  "data:ragged.jsonl",
};

/* complete JSON-object lines in @data[0..cut) */
static guint
jsonl_complete_rows (const guint8 *data, gsize cut)
{
  guint rows = 0;
  gsize start = 0;
  for (gsize i = 0; i <= cut; i++)
    if (i == cut || data[i] == '\n')
      {
        gboolean blank = TRUE;
        for (gsize k = start; k < i; k++)
          if (!g_ascii_isspace (data[k]))
            blank = FALSE;
        rows += !blank;
        start = i + 1;
      }
  return rows;
}

static void
test_truncated_every_byte (void)
{
  for (guint f = 0; f < G_N_ELEMENTS (small_files); f++)
    {
      g_autoptr (GBytes) bytes = load (small_files[f]);
      g_autofree char *name = g_path_get_basename (small_files[f]);
      gsize len;
      const guint8 *data = g_bytes_get_data (bytes, &len);
      gboolean jsonl = g_str_has_suffix (name, ".jsonl");
      guint loaded = 0;

      for (gsize cut = 0; cut < len; cut++)
        {
          g_autoptr (GError) error = NULL;
          g_autoptr (DwBatch) b = dw_batch_read_bytes (name, data, cut, &error);
          g_autofree char *prefix = g_strconcat (name, ": ", NULL);

          if (b)
            {
              /* only a JSONL cut after a complete object line loads: with those rows */
              g_assert_true (jsonl);
              g_assert_cmpuint (b->rows, ==, jsonl_complete_rows (data, cut));
              loaded++;
              continue;
            }
          g_assert_nonnull (error);
          g_assert_true (error->domain == DW_BATCH_ERROR);
          if (!g_str_has_prefix (error->message, prefix) || !names_place (error->message)
              || error->code != DW_BATCH_ERROR_TRUNCATED)
            g_error ("cut %zu of %s: %d %s", cut, name, error->code, error->message);
        }
      g_test_message ("%s: %zu cuts, %u loaded (complete JSONL lines)", name, len, loaded);
    }
}

/* The same through real files (pread path) at a stride. */
static void
test_truncated_files (void)
{
  g_autofree char *dir = g_dir_make_tmp ("dw-batch-XXXXXX", NULL);

  for (guint f = 0; f < G_N_ELEMENTS (small_files); f++)
    {
      g_autoptr (GBytes) bytes = load (small_files[f]);
      g_autofree char *base = g_path_get_basename (small_files[f]);
      g_autofree char *path = g_build_filename (dir, base, NULL);
      gsize len;
      const guint8 *data = g_bytes_get_data (bytes, &len);

      for (gsize cut = 0; cut < len; cut += 37)
        {
          g_autoptr (GError) error = NULL;
          g_autoptr (DwBatch) b = NULL;
          g_assert_true (g_file_set_contents (path, (const char *)data, (gssize)cut, NULL));
          b = dw_batch_read_file (path, &error);
          if (b)
            g_assert_true (g_str_has_suffix (base, ".jsonl"));
          else
            {
              g_assert_true (g_str_has_prefix (error->message, path));
              g_assert_true (names_place (error->message) || cut == 0);
            }
        }
      g_unlink (path);
    }
  g_rmdir (dir);
}

static void
test_bit_flips (void)
{
  for (guint f = 0; f < G_N_ELEMENTS (small_files); f++)
    {
      g_autoptr (GBytes) bytes = load (small_files[f]);
      g_autofree char *name = g_path_get_basename (small_files[f]);
      g_autofree char *prefix = g_strconcat (name, ": ", NULL);
      gsize len;
      const guint8 *data = g_bytes_get_data (bytes, &len);
      g_autofree guint8 *copy = g_memdup2 (data, len);
      guint loaded = 0, failed = 0;

      for (gsize i = 0; i < len; i++)
        {
          g_autoptr (GError) error = NULL;
          g_autoptr (DwBatch) b = NULL;

          copy[i] ^= (guint8)(1u << ((i * 5) % 8));
          b = dw_batch_read_bytes (name, copy, len, &error);
          copy[i] = data[i];
          if (b)
            {
              double s = 0;
              /* touch everything: ASan checks the arrays are as large as claimed */
              for (gsize k = 0; k < b->rows * b->cols; k++)
                s += dw_batch_mask_value (b, k);
              g_assert_true (s >= 0 || s < 0 || isnan (s));
              loaded++;
            }
          else
            {
              g_assert_true (error->domain == DW_BATCH_ERROR);
              if (!g_str_has_prefix (error->message, prefix))
                g_error ("flip at %zu of %s: %s", i, name, error->message);
              failed++;
            }
        }
      g_test_message ("%s: %zu flips: %u loaded (data bytes), %u refused", name, len, loaded,
                      failed);
    }
}

static void
test_catalogue_npz (void)
{
  g_autoptr (GBytes) mismatch = load ("data:bad/shape_mismatch.npz");
  g_autoptr (GBytes) ints = load ("data:bad/int_logprobs.npz");
  g_autoptr (GBytes) three = load ("data:bad/three_d.npz");
  g_autoptr (GBytes) cplx = load ("data:bad/complex.npy");
  g_autoptr (GBytes) huge_member = load ("data:bad/huge_member.npz");
  g_autoptr (GBytes) huge_shape = load ("data:bad/huge_shape.npy");
  g_autoptr (GBytes) sample = load ("shared:samples/batch/step_000001.npz");
  g_autoptr (GBytes) npy = load ("shared:samples/batch/step_000001.old_log_prob.npy");
  gsize len;
  const guint8 *d;

  d = g_bytes_get_data (mismatch, &len);
  expect_error ("m.npz", d, len, DW_BATCH_ERROR_SHAPE_MISMATCH,
                "m.npz: member rollout_log_prob.npy: offset 128: shape [3,5] does not match "
                "old_log_prob [3,4]");
  d = g_bytes_get_data (ints, &len);
  expect_error ("i.npz", d, len, DW_BATCH_ERROR_UNSUPPORTED_DTYPE,
                "i.npz: member old_log_prob.npy: offset 128: dtype int64 cannot hold log-probs "
                "(want float32 or float64; bfloat16 and float16 are read but flagged lossy)");
  d = g_bytes_get_data (three, &len);
  expect_error ("t.npz", d, len, DW_BATCH_ERROR_SHAPE_MISMATCH,
                "t.npz: member old_log_prob.npy: offset 128: log-probs must be [B,T] (or packed "
                "[N] with cu_seqlens), got [2,3,4]");
  d = g_bytes_get_data (cplx, &len);
  expect_error ("c.npy", d, len, DW_BATCH_ERROR_UNSUPPORTED_DTYPE,
                "c.npy: offset 19: unsupported dtype '<c8'");
  d = g_bytes_get_data (huge_member, &len);
  expect_error ("h.npz", d, len, DW_BATCH_ERROR_CORRUPT,
                "h.npz: member old_log_prob.npy: declared size 2147483632 (compressed 73) is "
                "impossible in an archive of 203 bytes");
  d = g_bytes_get_data (huge_shape, &len);
  expect_error ("h.npy", d, len, DW_BATCH_ERROR_TRUNCATED,
                "h.npy: offset 128: shape [1000000000000,1000000000000] of float32 needs more "
                "than 2^64 bytes but only 64 are present");
  d = g_bytes_get_data (npy, &len);
  expect_error ("a.npy", d, len, DW_BATCH_ERROR_MISSING_TENSOR,
                "a.npy: a single .npy array (float32 [8,48]) is not a batch: name it "
                "PREFIX.<tensor>.npy beside PREFIX.old_log_prob.npy, PREFIX.rollout_log_prob.npy "
                "and PREFIX.response_mask.npy, or use .npz");

  /* CRC-32 mismatch: one byte of the first stored member's data */
  {
    const guint8 *sd = g_bytes_get_data (sample, &len);
    g_autofree guint8 *c = g_memdup2 (sd, len);
    gsize data_at = 30 + (c[26] | c[27] << 8) + (c[28] | c[29] << 8);
    g_autoptr (GError) error = NULL;
    g_autoptr (DwBatch) b = NULL;
    c[data_at + 200] ^= 0x40;
    b = dw_batch_read_bytes ("crc.npz", c, len, &error);
    g_assert_null (b);
    g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_CORRUPT);
    g_assert_true (g_str_has_prefix (error->message, "crc.npz: member "));
    g_assert_nonnull (strstr (error->message, "CRC"));
  }
  /* .npy header damage inside a member: trailing bytes after the data */
  {
    static const char bad_hdr[] = "\x93NUMPY\x01\x00\x10\x00{'descr': 1}   \n";
    expect_error ("b.npy", bad_hdr, sizeof bad_hdr - 1, DW_BATCH_ERROR_CORRUPT,
                  "b.npy: offset 20: .npy header: 'descr' must be a string");
  }
  {
    static const char unk[] = "\x93NUMPY\x01\x00\x10\x00{'foo': 1,}    \n";
    expect_error ("k.npy", unk, sizeof unk - 1, DW_BATCH_ERROR_CORRUPT,
                  "k.npy: offset 17: .npy header: unknown key 'foo'");
  }
  {
    static const char ver[] = "\x93NUMPY\x09\x00\x10\x00{}";
    expect_error ("v.npy", ver, sizeof ver - 1, DW_BATCH_ERROR_CORRUPT,
                  "v.npy: offset 6: unsupported .npy format version 9.0");
  }
}

static void
test_catalogue_safetensors (void)
{
  g_autoptr (GBytes) st = load ("shared:samples/batch/step_000001.safetensors");
  g_autoptr (GBytes) packed = load ("data:step_000001_packed.safetensors");
  g_autoptr (GBytes) overlap = load ("data:bad/overlap.safetensors");
  g_autoptr (GBytes) huge = load ("data:bad/huge_header.safetensors");
  gsize len;
  const guint8 *d;
  guint8 *p;

  p = patch (st, "\"old_log_prob\":{\"dtype\":\"F32\"", "\"old_log_prob\":{\"dtype\":\"I32\"",
             &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_UNSUPPORTED_DTYPE,
                "s.safetensors: tensor 'old_log_prob' at offset 2248: dtype int32 cannot hold "
                "log-probs (want float32 or float64; bfloat16 and float16 are read but flagged "
                "lossy)");
  g_free (p);
  p = patch (st, "\"old_log_prob\":{\"dtype\":\"F32\"", "\"old_log_prob\":{\"dtype\":\"Q32\"",
             &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_UNSUPPORTED_DTYPE,
                "s.safetensors: header: tensor 'old_log_prob': key dtype: unknown dtype 'Q32'");
  g_free (p);
  p = patch (st, "\"old_log_prob\":{\"dtype\":\"F32\"", "\"old_log_prob\":{\"dtype\":\"F64\"",
             &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_CORRUPT,
                "s.safetensors: header: tensor 'old_log_prob': shape [8,48] of F64 does not fit "
                "data_offsets [1536,3072] (1536 bytes)");
  g_free (p);
  p = patch (st, "\"rollout_log_prob\":{\"dtype\":\"F32\",\"shape\":[8,48]",
             "\"rollout_log_prob\":{\"dtype\":\"F32\",\"shape\":[6,64]", &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_SHAPE_MISMATCH,
                "s.safetensors: tensor 'rollout_log_prob' at offset 5320: shape [6,64] does not "
                "match old_log_prob [8,48]");
  g_free (p);
  p = patch (st, "\"layout\":\"padded\"", "\"layout\":\"packed\"", &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_MISSING_TENSOR,
                "s.safetensors: layout is 'packed' but there is no cu_seqlens tensor");
  g_free (p);
  p = patch (st, "\"step\":\"1\"", "\"step\":\"x\"", &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_CORRUPT,
                "s.safetensors: header: __metadata__ key 'step': 'x' is not a step");
  g_free (p);
  p = patch (st, "\"old_log_prob\":", "\"old_log_pr0b\":", &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_MISSING_TENSOR,
                "s.safetensors: no tensor 'old_log_prob' (required: old_log_prob, "
                "rollout_log_prob, response_mask; found: advantages, rollout_log_prob, "
                "responses, response_mask)");
  g_free (p);
  p = patch (st, "\"shape\":[8,48]", "\"shape\":[8,48}", &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_CORRUPT, NULL);
  g_free (p);
  p = patch (st, "\"step\":\"1\"", "\"step\": 1 ", &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_CORRUPT,
                "s.safetensors: header: __metadata__ key 'step': value must be a string");
  g_free (p);
  p = patch (st, "\"data_offsets\":[0,1536]", "\"data_offsets\":[0,1535]", &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_CORRUPT,
                "s.safetensors: header: tensor 'advantages': shape [8,48] of F32 does not fit "
                "data_offsets [0,1535] (1535 bytes)");
  g_free (p);
  p = patch (st, "\"data_offsets\":[0,1536]", "\"data_offsets\":[-1,153]", &len);
  expect_error ("s.safetensors", p, len, DW_BATCH_ERROR_CORRUPT,
                "s.safetensors: header: tensor 'advantages': key data_offsets: must be [begin, "
                "end] with 0 <= begin <= end");
  g_free (p);
  /* one byte too many after the last tensor */
  {
    gsize n;
    const guint8 *sd = g_bytes_get_data (st, &n);
    g_autofree guint8 *longer = g_malloc0 (n + 1);
    memcpy (longer, sd, n);
    expect_error ("s.safetensors", longer, n + 1, DW_BATCH_ERROR_CORRUPT,
                  "s.safetensors: offset 8808: 1 bytes after the last tensor belong to no tensor");
  }
  d = g_bytes_get_data (overlap, &len);
  expect_error ("o.safetensors", d, len, DW_BATCH_ERROR_CORRUPT,
                "o.safetensors: header: tensor 'rollout_log_prob': data_offsets [4,12] overlap "
                "the previous tensor (which ends at 8)");
  d = g_bytes_get_data (huge, &len);
  expect_error ("h.safetensors", d, len, DW_BATCH_ERROR_TOO_LARGE,
                "h.safetensors: offset 0: header length 1152921504606846976 exceeds the "
                "safetensors limit of 100000000 bytes");
  expect_error ("e.safetensors", "\0\0\0\0\0\0\0\0{", 9, DW_BATCH_ERROR_CORRUPT,
                "e.safetensors: offset 8: the header must be a JSON object starting with '{'");
  {
    static const guint8 bad_utf8[] = { 4, 0, 0, 0, 0, 0, 0, 0, '{', 0xff, '}', ' ' };
    expect_error ("u.safetensors", bad_utf8, sizeof bad_utf8, DW_BATCH_ERROR_CORRUPT,
                  "u.safetensors: offset 9: the header is not valid UTF-8 text");
  }

  /* packed: cu_seqlens is the first tensor of the buffer (9 × int64) */
  {
    gsize n;
    const guint8 *pd = g_bytes_get_data (packed, &n);
    guint64 hlen = 0;
    g_autofree guint8 *c = g_memdup2 (pd, n);
    gint64 v;
    for (int i = 7; i >= 0; i--)
      hlen = hlen << 8 | pd[i];
    memcpy (&v, c + 8 + hlen + 8 * 8, 8);
    v -= 1;
    memcpy (c + 8 + hlen + 8 * 8, &v, 8);
    expect_error ("p.safetensors", c, n, DW_BATCH_ERROR_SHAPE_MISMATCH,
                  "p.safetensors: tensor 'cu_seqlens' at offset 472: cu_seqlens ends at 278 but "
                  "the packed tensors hold 279 tokens");
    memcpy (c, pd, n);
    v = 100;
    memcpy (c + 8 + hlen + 8 * 1, &v, 8);
    expect_error ("p.safetensors", c, n, DW_BATCH_ERROR_CORRUPT,
                  "p.safetensors: tensor 'cu_seqlens' at offset 472: cu_seqlens[2] = 58: "
                  "cu_seqlens must start at 0, never decrease and stay <= 279");
  }
}

static void
test_catalogue_jsonl (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) b = NULL;
  GString *deep = g_string_new ("{\"x\": ");

  expect_error_str (
    "x.jsonl", "{\"old_log_prob\":[-1,-2],\"rollout_log_prob\":[-1],\"response_mask\":[1,1]}\n",
    DW_BATCH_ERROR_SHAPE_MISMATCH,
    "x.jsonl: line 1, key rollout_log_prob: 1 values, but old_log_prob has 2");
  expect_error_str ("x.jsonl",
                    "{\"old_log_prob\":[-1],\"rollout_log_prob\":[-1],\"response_mask\":[1]}\n"
                    "{\"old_log_prob\":[-1],\"rollout_log_prob\":[-1]}\n",
                    DW_BATCH_ERROR_MISSING_TENSOR, "x.jsonl: line 2: no key response_mask");
  expect_error_str (
    "x.jsonl",
    "{\"step\":3,\"old_log_prob\":[-1],\"rollout_log_prob\":[-1],\"response_mask\":[1]}\n"
    "{\"step\":4,\"old_log_prob\":[-1],\"rollout_log_prob\":[-1],\"response_mask\":[1]}\n",
    DW_BATCH_ERROR_CORRUPT,
    "x.jsonl: line 2, column 9 (offset 83), key step: 4 differs from step 3 on "
    "line 1");
  expect_error_str ("x.jsonl",
                    "{\"old_log_prob\":[-1],\"rollout_log_prob\":[-1],\"response_mask\":[1]}\n"
                    "not json\n",
                    DW_BATCH_ERROR_CORRUPT,
                    "x.jsonl: line 2, column 1 (offset 66): expected '{' (one JSON object per "
                    "line)");
  expect_error_str ("x.jsonl",
                    "{\"old_log_prob\":[-1],\"rollout_log_prob\":[-1],\"response_mask\":[1]}\n"
                    "{\"old_log_prob\":[-1,-0.",
                    DW_BATCH_ERROR_TRUNCATED,
                    "x.jsonl: line 2, column 24 (offset 89), key old_log_prob: expected digits "
                    "after '.' (unfinished last line: file still being written?)");
  expect_error_str ("x.jsonl", "{\"old_log_prob\":\"x\"}\n", DW_BATCH_ERROR_CORRUPT,
                    "x.jsonl: line 1, column 17 (offset 16), key old_log_prob: expected an array "
                    "of numbers");
  expect_error_str ("x.jsonl", "{\"old_log_prob\":[-1, 0x10]}\n", DW_BATCH_ERROR_CORRUPT,
                    "x.jsonl: line 1, column 22 (offset 21), key old_log_prob: bad number");
  expect_error_str ("x.jsonl", "{\"old_log_prob\":[-1],\"old_log_prob\":[-1]}\n",
                    DW_BATCH_ERROR_CORRUPT,
                    "x.jsonl: line 1, column 37 (offset 36), key old_log_prob: a second value for "
                    "old_log_prob");
  for (int i = 0; i < 100; i++)
    g_string_append_c (deep, '[');
  g_string_append (deep, "\n");
  expect_error_str ("x.jsonl", deep->str, DW_BATCH_ERROR_CORRUPT,
                    "x.jsonl: line 1, column 71 (offset 70), key x: nested deeper than 64");
  g_string_free (deep, TRUE);
  expect_error ("x.jsonl", "{\"a\":\"\0\"}\n", 10, DW_BATCH_ERROR_CORRUPT,
                "x.jsonl: line 1, column 7 (offset 6): NUL byte in the text");
  expect_error_str (
    "x.jsonl",
    "{\"old_log_prob\":[-1],\"rollout_log_prob\":[-1],\"response_mask\":[1],\"advantage\":1}\n"
    "{\"old_log_prob\":[-1],\"rollout_log_prob\":[-1],\"response_mask\":[1]}\n",
    DW_BATCH_ERROR_SHAPE_MISMATCH,
    "x.jsonl: line 2, key advantages: absent, but earlier lines have scalars");

  /* odd values load as they are */
  {
    static const char odd[] = "{\"old_log_prob\":[-0.0,NaN,Infinity,-Infinity,null],"
                              "\"rollout_log_prob\":[0,0,0,0,0],"
                              "\"response_mask\":[2,-1,0.5,1,0]}\n"
                              "{\"old_log_prob\":[],\"rollout_log_prob\":[],"
                              "\"response_mask\":[]}";
    b = dw_batch_read_bytes ("ok.jsonl", (const guint8 *)odd, strlen (odd), &error);
  }
  g_assert_no_error (error);
  g_assert_cmpuint (b->rows, ==, 2);
  g_assert_cmpuint (b->cols, ==, 5);
  g_assert_cmpint (b->lp_dtype, ==, DW_DTYPE_F32);
  g_assert_cmpint (b->mask_dtype, ==, DW_DTYPE_F32);
  {
    const float *o = b->old_log_prob;
    g_assert_true (o[0] == 0 && signbit (o[0]));
    g_assert_true (isnan (o[1]) && isnan (o[4]));
    g_assert_true (isinf (o[2]) && o[2] > 0);
    g_assert_true (isinf (o[3]) && o[3] < 0);
    g_assert_cmpfloat (dw_batch_mask_value (b, 0), ==, 2);
    g_assert_cmpfloat (dw_batch_mask_value (b, 1), ==, -1);
    g_assert_cmpfloat (dw_batch_mask_value (b, 2), ==, 0.5);
    for (int i = 5; i < 10; i++)
      g_assert_cmpfloat (dw_batch_mask_value (b, i), ==, 0);
  }
}

static void
test_catalogue_misc (void)
{
  g_autofree char *dir = g_dir_make_tmp ("dw-batch-XXXXXX", NULL);
  g_autofree char *missing = g_build_filename (dir, "nope.npz", NULL);
  g_autofree char *long4096 = data_path ("shared:golden/batches/long_4096.npz");
  g_autofree char *stpath = data_path ("shared:samples/batch/step_000001.safetensors");
  g_autofree char *nf = data_path ("data:nonfinite.safetensors");
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) b = NULL;
  g_autofree char *msg = NULL;

  expect_error ("e.npz", "", 0, DW_BATCH_ERROR_TRUNCATED, "e.npz: offset 0: empty file");
  expect_error_str ("w.csv", "step,value\n1,2\n", DW_BATCH_ERROR_UNKNOWN_FORMAT,
                    "w.csv: offset 0: not a rollout batch (npz, npy, safetensors, JSONL or a torch "
                    ".pt dump); "
                    "starts with 73 74 65 70 2c 76 61 6c");
  expect_error_str ("z.npz", "PK\003\004 short", DW_BATCH_ERROR_TRUNCATED,
                    "z.npz: zip archive: offset 10: no end-of-central-directory record at the end "
                    "of the file (truncated, or not a zip archive)");

  b = dw_batch_read_file (missing, &error);
  g_assert_null (b);
  g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_IO);
  msg = g_strdup_printf ("%s: No such file or directory", missing);
  g_assert_cmpstr (error->message, ==, msg);
  g_clear_error (&error);
  g_clear_pointer (&msg, g_free);

  b = dw_batch_read_file (dir, &error); /* a directory without arrays */
  g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_MISSING_TENSOR);
  msg = g_strdup_printf ("%s: no tensor 'old_log_prob' (required: old_log_prob, "
                         "rollout_log_prob, response_mask; found: none)",
                         dir);
  g_assert_cmpstr (error->message, ==, msg);
  g_clear_error (&error);

  /* the lone sample .npy names its missing siblings */
  {
    g_autofree char *npy = data_path ("shared:samples/batch/step_000001.old_log_prob.npy");
    b = dw_batch_read_file (npy, &error);
    g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_MISSING_TENSOR);
    g_assert_true (g_str_has_suffix (error->message,
                                     ": no tensor 'rollout_log_prob' (required: old_log_prob, "
                                     "rollout_log_prob, response_mask; found: old_log_prob); "
                                     "looked for step_000001.<tensor>.npy beside it"));
    g_clear_error (&error);
  }

  /* limits: members and declared tensors above the limit are refused before reading (the
   * sample's verl "responses" token ids count: they are read as the batch's token ids) */
  dw_batch_reader_set_max_bytes (64 << 10);
  b = dw_batch_read_file (long4096, &error);
  g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_TOO_LARGE);
  g_assert_nonnull (strstr (error->message, ": member old_log_prob.npy: 131200 bytes exceed the "
                                            "reader's limit of 65536"));
  g_clear_error (&error);
  dw_batch_reader_set_max_bytes (1024);
  b = dw_batch_read_file (stpath, &error);
  g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_TOO_LARGE);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, ": header: the batch tensors declare 6528 bytes, more "
                                            "than the reader's limit of 1024"));
  g_clear_error (&error);
  dw_batch_reader_set_max_bytes (G_GUINT64_CONSTANT (4) << 30);

  /* NaN, ±inf, -0.0 and masks 2/-1/0.5 load as they are */
  b = dw_batch_read_file (nf, &error);
  g_assert_no_error (error);
  {
    const float *o = b->old_log_prob, *r = b->rollout_log_prob;
    g_assert_true (isnan (o[0]));
    g_assert_true (isinf (o[1]) && o[1] > 0);
    g_assert_true (isinf (o[8]) && o[8] < 0);
    g_assert_true (o[15] == 0 && signbit (o[15]));
    g_assert_true (r[18] == 0 && signbit (r[18]));
    g_assert_cmpfloat (dw_batch_mask_value (b, 6), ==, 2);
    g_assert_cmpfloat (dw_batch_mask_value (b, 7), ==, -1);
    g_assert_cmpfloat (dw_batch_mask_value (b, 8), ==, 0.5);
  }
  g_clear_pointer (&b, dw_batch_free);
  g_rmdir (dir);
}

/* A 10 GB sparse file in each disguise is refused quickly, without reading it. */
static void
sparse_case (const char *dir, const char *name, const void *head, gsize head_len, guint64 size,
             DwBatchError code, const char *needle)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) b = NULL;
  gint64 t0;
  double secs;
  int fd = g_open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, head, head_len), ==, (gssize)head_len);
  g_assert_cmpint (ftruncate (fd, (off_t)size), ==, 0);
  close (fd);
  t0 = g_get_monotonic_time ();
  b = dw_batch_read_file (path, &error);
  secs = (g_get_monotonic_time () - t0) / 1e6;
  g_test_message ("%s: %.3f s: %s", name, secs, error ? error->message : "loaded?");
  g_assert_null (b);
  g_assert_error (error, DW_BATCH_ERROR, (gint)code);
  g_assert_true (g_str_has_prefix (error->message, path));
  g_assert_nonnull (strstr (error->message, needle));
  g_assert_cmpfloat (secs, <, 2.0);
  g_unlink (path);
}

static void
test_sparse_10g (void)
{
  g_autofree char *dir = g_dir_make_tmp ("dw-batch-XXXXXX", NULL);
  const guint64 size = G_GUINT64_CONSTANT (10) << 30;
  g_autofree char *st_hdr = NULL;
  GString *h;
  guint64 hlen, data_len = size - 8 - 512, t;
  guint8 *buf;

  sparse_case (dir, "zeros.bin", "", 0, size, DW_BATCH_ERROR_UNKNOWN_FORMAT, "not a rollout batch");
  sparse_case (dir, "zip.npz", "PK\003\004", 4, size, DW_BATCH_ERROR_TRUNCATED,
               "no end-of-central-directory record");
  sparse_case (dir, "lines.jsonl", "{\"old_log_prob\": [", 18, size, DW_BATCH_ERROR_TOO_LARGE,
               "bytes of JSONL exceed the reader's limit");
  /* a consistent safetensors header whose three [1,T] tensors fill the 10 GB */
  t = data_len / 9;
  h = g_string_new (NULL);
  g_string_append_printf (h,
                          "{\"old_log_prob\":{\"dtype\":\"F32\",\"shape\":[1,%" G_GUINT64_FORMAT
                          "],\"data_offsets\":[0,%" G_GUINT64_FORMAT "]},"
                          "\"rollout_log_prob\":{\"dtype\":\"F32\",\"shape\":[1,%" G_GUINT64_FORMAT
                          "],\"data_offsets\":[%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "]},"
                          "\"response_mask\":{\"dtype\":\"U8\",\"shape\":[1,%" G_GUINT64_FORMAT
                          "],\"data_offsets\":[%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "]}}",
                          t, 4 * t, t, 4 * t, 8 * t, t, 8 * t, 9 * t);
  while (h->len < 512)
    g_string_append_c (h, ' ');
  hlen = h->len;
  buf = g_malloc (8 + hlen);
  for (int i = 0; i < 8; i++)
    buf[i] = (guint8)(hlen >> (8 * i));
  memcpy (buf + 8, h->str, hlen);
  sparse_case (dir, "big.safetensors", buf, 8 + hlen, 8 + hlen + 9 * t, DW_BATCH_ERROR_TOO_LARGE,
               "header: the batch tensors declare ");
  g_free (buf);
  g_string_free (h, TRUE);
  /* a .npy whose header declares the whole 10 GB */
  {
    static char npy[128] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (2684354528,), }";
    gsize l = strlen (npy + 10) + 10;
    while (l < 127)
      npy[l++] = ' ';
    npy[127] = '\n';
    sparse_case (dir, "big.npy", npy, 128, 128 + G_GUINT64_CONSTANT (2684354528) * 4,
                 DW_BATCH_ERROR_TOO_LARGE, "is larger than the reader's limit");
  }
  g_rmdir (dir);
  (void)st_hdr;
}

/* A file still being written: a half file is TRUNCATED, the completed file loads. */
static void
test_growing_file (void)
{
  const char *keys[]
    = { "shared:samples/batch/step_000001.safetensors", "shared:samples/batch/step_000001.jsonl",
        "shared:samples/batch/step_000001.npz" };
  g_autofree char *dir = g_dir_make_tmp ("dw-batch-XXXXXX", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autoptr (GBytes) bytes = load (keys[i]);
      g_autofree char *base = g_path_get_basename (keys[i]);
      g_autofree char *path = g_build_filename (dir, base, NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (DwBatch) half = NULL, full = NULL;
      gsize len;
      const char *d = g_bytes_get_data (bytes, &len);
      FILE *fp = fopen (path, "wb");

      fwrite (d, 1, len / 2 + 3, fp);
      fflush (fp);
      half = dw_batch_read_file (path, &error);
      g_assert_null (half);
      g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_TRUNCATED);
      g_test_message ("half-written %s: %s", base, error->message);
      g_clear_error (&error);
      fwrite (d + len / 2 + 3, 1, len - len / 2 - 3, fp);
      fclose (fp);
      full = dw_batch_read_file (path, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (full->rows, ==, 8);
      g_unlink (path);
    }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/batch/bad/truncated-every-byte", test_truncated_every_byte);
  g_test_add_func ("/batch/bad/truncated-files", test_truncated_files);
  g_test_add_func ("/batch/bad/bit-flips", test_bit_flips);
  g_test_add_func ("/batch/bad/npz-npy", test_catalogue_npz);
  g_test_add_func ("/batch/bad/safetensors", test_catalogue_safetensors);
  g_test_add_func ("/batch/bad/jsonl", test_catalogue_jsonl);
  g_test_add_func ("/batch/bad/misc", test_catalogue_misc);
  g_test_add_func ("/batch/bad/sparse-10g", test_sparse_10g);
  g_test_add_func ("/batch/bad/growing-file", test_growing_file);
  return g_test_run ();
}
