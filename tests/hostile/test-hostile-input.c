/* test-hostile-input.c — hostile batch files and configs from the attack run of issue 14: each
 * case is the reproduction of one finding (big inputs generated here, at run time) and failed
 * before its fix
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Memory findings run in a subprocess under RLIMIT_AS (1 GiB): before the fix they needed
 * 1.7–12.7 GB and died there; under AddressSanitizer (which reserves terabytes of address space)
 * the limit is not set and the reader's own limits are what is checked.
 */
#include <string.h>
#include <sys/resource.h>
#include <zlib.h>

#include <glib/gstdio.h>

#include "dw-batch-reader.h"
#include "dw-config-export.h"
#include "dw-config-json.h"
#include "dw-plot-series.h"

#if defined(__SANITIZE_ADDRESS__)
#define HOSTILE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOSTILE_ASAN 1
#endif
#endif

static char *tmp_dir;

static char *
tmp_path (const char *name)
{
  return g_build_filename (tmp_dir, name, NULL);
}

static void
limit_memory (void)
{
#ifndef HOSTILE_ASAN
  struct rlimit lim = { 1u << 30, 1u << 30 };
  g_assert_cmpint (setrlimit (RLIMIT_AS, &lim), ==, 0);
#endif
}

/* A safetensors file: u64le header length, @header, @data_len zero bytes. */
static void
write_safetensors (const char *path, const char *header, gsize header_len, gsize data_len)
{
  FILE *f = fopen (path, "wb");
  guint8 len8[8];
  g_autofree guint8 *zeros = g_malloc0 (MAX (data_len, 1));

  g_assert_nonnull (f);
  for (int i = 0; i < 8; i++)
    len8[i] = (guint8)((guint64)header_len >> (8 * i));
  g_assert_cmpuint (fwrite (len8, 1, 8, f), ==, 8);
  g_assert_cmpuint (fwrite (header, 1, header_len, f), ==, header_len);
  g_assert_cmpuint (fwrite (zeros, 1, data_len, f), ==, data_len);
  g_assert_cmpint (fclose (f), ==, 0);
}

static const char st_tensors[]
  = "\"old_log_prob\": {\"dtype\": \"F32\", \"shape\": [1, 8], \"data_offsets\": [0, 32]}, "
    "\"rollout_log_prob\": {\"dtype\": \"F32\", \"shape\": [1, 8], \"data_offsets\": [32, 64]}, "
    "\"response_mask\": {\"dtype\": \"U8\", \"shape\": [1, 8], \"data_offsets\": [64, 72]}";

/* Issue 14: "a 200 KB safetensors file whose JSON header nests 100 k arrays overflows the stack
 * inside json-glib in metrics, ingest, watch and the window". */
static void
test_safetensors_deep_nesting (void)
{
  g_autofree char *path = tmp_path ("deep.safetensors");
  g_autoptr (GString) h = g_string_new ("{\"__metadata__\": {\"x\": \"y\"}, \"junk\": ");
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) batch = NULL;

  for (int i = 0; i < 100000; i++)
    g_string_append_c (h, '[');
  for (int i = 0; i < 100000; i++)
    g_string_append_c (h, ']');
  g_string_append_printf (h, ", %s}", st_tensors);
  write_safetensors (path, h->str, h->len, 72);
  batch = dw_batch_read_file (path, &error);
  g_assert_null (batch);
  g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_CORRUPT);
  g_assert_nonnull (strstr (error->message, "deep.safetensors"));
  g_assert_nonnull (strstr (error->message, "nested deeper than"));
}

/* Issue 14: "duplicate tensor names … get misleading messages" (json-glib kept the last one,
 * and the first one's bytes then "belong to no tensor"). */
static void
test_safetensors_duplicate_tensor (void)
{
  g_autofree char *path = tmp_path ("dup.safetensors");
  g_autofree char *h = g_strdup_printf (
    "{%s, \"old_log_prob\": {\"dtype\": \"F32\", \"shape\": [1, 8], \"data_offsets\": [72, 104]}}",
    st_tensors);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) batch = NULL;

  write_safetensors (path, h, strlen (h), 104);
  batch = dw_batch_read_file (path, &error);
  g_assert_null (batch);
  g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_CORRUPT);
  g_assert_nonnull (strstr (error->message, "“old_log_prob” appears twice"));
}

/* Issue 14: "a 68 MB safetensors header for 8 tokens 1.7 GB". */
static void
test_safetensors_huge_header (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *path = tmp_path ("fat.safetensors");
      g_autoptr (GString) h = g_string_new ("{\"__metadata__\": {");
      g_autoptr (GError) error = NULL;
      g_autoptr (DwBatch) batch = NULL;

      for (int i = 0; h->len < 68u << 20; i++)
        g_string_append_printf (h, "\"k%d\": \"%0200d\", ", i, i);
      g_string_append_printf (h, "\"last\": \"\"}, %s}", st_tensors);
      write_safetensors (path, h->str, h->len, 72);
      g_string_set_size (h, 0);
      limit_memory ();
      batch = dw_batch_read_file (path, &error);
      g_assert_null (batch);
      g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_TOO_LARGE);
      g_assert_nonnull (strstr (error->message, "more than a rollout batch needs"));
      return;
    }
  g_test_trap_subprocess (NULL, 120 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* Issue 14: "a --config JSON nested 65 k deep does the same" (stack overflow in json-glib). */
static void
test_config_json_deep_nesting (void)
{
  g_autoptr (GString) j = g_string_new ("{\"rollout_is\": ");
  g_autoptr (GError) error = NULL;
  g_autofree char *assignment = NULL;
  DwConfig config;

  for (int i = 0; i < 65536; i++)
    g_string_append_c (j, '[');
  for (int i = 0; i < 65536; i++)
    g_string_append_c (j, ']');
  g_string_append_c (j, '}');
  dw_config_init (&config, DW_GEN_VERL);
  g_assert_false (dw_config_merge_json (&config, j->str, &error));
  g_assert_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PARSE);
  g_assert_nonnull (
    strstr (error->message, "config JSON: offset 78: nested deeper than 64 levels"));
  /* --set KEY=[[[…: not JSON within the limit, so taken as a (too long) string, not parsed */
  g_clear_error (&error);
  assignment = g_strdup_printf ("rollout_is=%s", j->str + strlen ("{\"rollout_is\": "));
  g_assert_false (dw_config_set_assignment (&config, assignment, &error));
  g_assert_nonnull (strstr (error->message, "value too long"));
}

/* Issue 14: "duplicate keys accepted" and "integers ≥ 2^63 wrap into 'must be positive, got
 * -1'" in --config JSON. */
static void
test_config_json_duplicates_and_big_ints (void)
{
  static const struct
  {
    const char *json, *message;
  } cases[] = {
    { "{\"rollout_is\": \"token\", \"rollout_is_threshold\": 2.0, \"rollout_is\": \"sequence\"}",
      "offset 53: key “rollout_is” appears twice in one object" },
    { "{\"rollout_is_threshold\": 18446744073709551615}",
      "offset 25: the integer 18446744073709551615 does not fit in 64 bits" },
    { "{\"rollout_is_threshold\": 9223372036854775808}",
      "the integer 9223372036854775808 does not fit in 64 bits" },
    { "{\"rollout_is_threshold\": -9223372036854775809}",
      "the integer -9223372036854775809 does not fit in 64 bits" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      DwConfig config;

      dw_config_init (&config, DW_GEN_VERL);
      g_assert_false (dw_config_merge_json (&config, cases[i].json, &error));
      g_assert_nonnull (strstr (error->message, cases[i].message));
    }
  {
    /* the largest ones still read */
    g_autoptr (GError) error = NULL;
    DwConfig config;
    const DwValue *v;

    dw_config_init (&config, DW_GEN_VERL);
    /* lenient: the keys are no config keys, the integer limits are what is tested here */
    g_assert_true (dw_config_merge_json_lenient (
      &config, "{\"a\": 9223372036854775807, \"b\": -9223372036854775808, \"c\": 1e300}", &error));
    g_assert_no_error (error);
    v = dw_config_get (&config, "a");
    g_assert_cmpint (v->kind, ==, DW_VALUE_INT);
    g_assert_cmpint (v->i, ==, G_MAXINT64);
    v = dw_config_get (&config, "b");
    g_assert_cmpint (v->i, ==, G_MININT64);
  }
}

/* A zip archive of stored (uncompressed) members, written by hand so that it can hold what
 * libzip refuses to write: two members of the same name. */
static void
write_stored_zip (const char *path, const char *const *names, GBytes *const *data, guint n)
{
  g_autoptr (GByteArray) out = g_byte_array_new ();
  g_autoptr (GByteArray) central = g_byte_array_new ();
  guint8 le[4];

#define PUT16(arr, v) \
  (le[0] = (guint8)(v), le[1] = (guint8)((v) >> 8), g_byte_array_append (arr, le, 2))
#define PUT32(arr, v)                                                            \
  (le[0] = (guint8)(v), le[1] = (guint8)((v) >> 8), le[2] = (guint8)((v) >> 16), \
   le[3] = (guint8)((v) >> 24), g_byte_array_append (arr, le, 4))
  for (guint i = 0; i < n; i++)
    {
      gsize len;
      const guint8 *d = g_bytes_get_data (data[i], &len);
      guint32 crc = (guint32)crc32 (0, d, (uInt)len), offset = out->len;
      guint16 name_len = (guint16)strlen (names[i]);

      PUT32 (out, 0x04034b50);
      PUT16 (out, 20);
      PUT16 (out, 0);
      PUT16 (out, 0); /* stored */
      PUT16 (out, 0);
      PUT16 (out, 0x21);
      PUT32 (out, crc);
      PUT32 (out, len);
      PUT32 (out, len);
      PUT16 (out, name_len);
      PUT16 (out, 0);
      g_byte_array_append (out, (const guint8 *)names[i], name_len);
      g_byte_array_append (out, d, (guint)len);

      PUT32 (central, 0x02014b50);
      PUT16 (central, 20);
      PUT16 (central, 20);
      PUT16 (central, 0);
      PUT16 (central, 0);
      PUT16 (central, 0);
      PUT16 (central, 0x21);
      PUT32 (central, crc);
      PUT32 (central, len);
      PUT32 (central, len);
      PUT16 (central, name_len);
      PUT16 (central, 0);
      PUT16 (central, 0);
      PUT16 (central, 0);
      PUT16 (central, 0);
      PUT32 (central, 0);
      PUT32 (central, offset);
      g_byte_array_append (central, (const guint8 *)names[i], name_len);
    }
  {
    guint32 cd_offset = out->len, cd_len = central->len;

    g_byte_array_append (out, central->data, central->len);
    PUT32 (out, 0x06054b50);
    PUT16 (out, 0);
    PUT16 (out, 0);
    PUT16 (out, n);
    PUT16 (out, n);
    PUT32 (out, cd_len);
    PUT32 (out, cd_offset);
    PUT16 (out, 0);
  }
#undef PUT16
#undef PUT32
  g_assert_true (g_file_set_contents (path, (const char *)out->data, out->len, NULL));
}

/* A version 1.0 .npy of @n float32 zeros (or uint8 ones), shape (1, n). */
static GBytes *
npy_row (gsize n, gboolean mask)
{
  g_autofree char *dict = g_strdup_printf (
    "{'descr': '%s', 'fortran_order': False, 'shape': (1, %" G_GSIZE_FORMAT "), }",
    mask ? "|u1" : "<f4", n);
  g_autoptr (GByteArray) a = g_byte_array_new ();
  gsize header = strlen (dict) + 1, pad = (64 - (10 + header) % 64) % 64;
  guint16 hl = (guint16)(header + pad);
  guint8 lead[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (guint8)hl, (guint8)(hl >> 8) };
  g_autofree guint8 *body = g_malloc0 (n * (mask ? 1 : 4));

  g_byte_array_append (a, lead, 10);
  g_byte_array_append (a, (const guint8 *)dict, (guint)strlen (dict));
  for (gsize i = 0; i < pad; i++)
    g_byte_array_append (a, (const guint8 *)" ", 1);
  g_byte_array_append (a, (const guint8 *)"\n", 1);
  if (mask)
    memset (body, 1, n);
  g_byte_array_append (a, body, (guint)(n * (mask ? 1 : 4)));
  return g_byte_array_free_to_bytes (g_steal_pointer (&a));
}

/* Issue 14: "duplicate … npz members get misleading messages". */
static void
test_npz_duplicate_member (void)
{
  g_autofree char *path = tmp_path ("dup.npz");
  const char *names[]
    = { "old_log_prob.npy", "rollout_log_prob.npy", "response_mask.npy", "old_log_prob.npy" };
  GBytes *data[]
    = { npy_row (8, FALSE), npy_row (8, FALSE), npy_row (8, TRUE), npy_row (8, FALSE) };
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) batch = NULL;

  write_stored_zip (path, names, data, 3);
  batch = dw_batch_read_file (path, &error); /* the archive writer itself is sound */
  g_assert_no_error (error);
  g_clear_pointer (&batch, dw_batch_free);
  write_stored_zip (path, names, data, 4);
  batch = dw_batch_read_file (path, &error);
  g_assert_null (batch);
  g_assert_nonnull (strstr (error->message, "dup.npz"));
  g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_CORRUPT);
  g_assert_nonnull (strstr (error->message, "two members have the same name"));
  for (guint i = 0; i < G_N_ELEMENTS (data); i++)
    g_bytes_unref (data[i]);
}

/* Issue 14: "a 3.9 MB npz deflate bomb reaches 7.9 GB": members each under the reader's limit
 * added up past it. Scaled down: a limit of 8 MB, two deflated 6 MB members. */
static void
test_npz_deflate_bomb (void)
{
  g_autofree char *path = tmp_path ("bomb.npz");
  g_autoptr (DwBatch) zeros = dw_batch_new (1, 1500000, DW_DTYPE_F32, DW_DTYPE_U8);
  g_autoptr (DwBatch) batch = NULL;
  g_autoptr (GError) error = NULL;
  guint64 saved = dw_batch_reader_get_max_bytes ();
  GStatBuf st;

  memset (zeros->response_mask, 1, 1500000);
  g_assert_true (dw_batch_write_npz (zeros, path, TRUE, &error));
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_size, <, 200000); /* a bomb: small on disk */
  dw_batch_reader_set_max_bytes (8000000);
  batch = dw_batch_read_file (path, &error);
  dw_batch_reader_set_max_bytes (saved);
  g_assert_null (batch);
  g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_TOO_LARGE);
  g_assert_nonnull (strstr (error->message, "with the members before it"));
}

/* Issue 14: "a 1.2 MB ragged JSONL batch 9.2 GB (the reader limit is 4 GiB)": the padding to the
 * longest line was not counted. One line of 60 k tokens among 20 k one-token lines. */
static void
test_jsonl_ragged (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *path = tmp_path ("ragged.jsonl");
      g_autoptr (GString) t = g_string_new ("{\"old_log_prob\": [");
      g_autoptr (GError) error = NULL;
      g_autoptr (DwBatch) batch = NULL;
      const int long_len = 60000;

      for (int k = 0; k < 3; k++)
        {
          for (int i = 0; i < long_len; i++)
            g_string_append (t, k == 2 ? (i ? ",1" : "1") : (i ? ",-1" : "-1"));
          g_string_append (t, k == 0   ? "], \"rollout_log_prob\": ["
                              : k == 1 ? "], \"response_mask\": ["
                                       : "]}\n");
        }
      for (int r = 0; r < 20000; r++)
        g_string_append (t, "{\"old_log_prob\": [-1], \"rollout_log_prob\": [-1], "
                            "\"response_mask\": [1]}\n");
      g_assert_cmpuint (t->len, <, 2u << 20);
      g_assert_true (g_file_set_contents (path, t->str, (gssize)t->len, NULL));
      limit_memory ();
      batch = dw_batch_read_file (path, &error);
      g_assert_null (batch);
      g_assert_error (error, DW_BATCH_ERROR, DW_BATCH_ERROR_TOO_LARGE);
      g_assert_nonnull (strstr (error->message, "ragged.jsonl"));
      g_assert_nonnull (strstr (error->message, "padded to the longest (60000 tokens"));
      return;
    }
  g_test_trap_subprocess (NULL, 120 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static gboolean
import_yaml (const char *text, DwGeneration gen, DwConfig *config, GError **error)
{
  dw_config_init (config, gen);
  return dw_config_import (text, -1, "hostile.yaml", gen, DW_EXPORT_FORMAT_YAML, config, error);
}

/* Issue 14: "a 586-byte billion-laughs YAML > 12.7 GB". */
static void
test_yaml_billion_laughs (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr (GString) y = g_string_new ("anchors:\n  a: &a [\"lol\",\"lol\",\"lol\","
                                            "\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
      g_autoptr (GError) error = NULL;
      DwConfig config;

      for (char c = 'b'; c <= 'i'; c++)
        g_string_append_printf (y, "  %c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", c, c, c - 1,
                                c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
      g_string_append (y, "algorithm:\n  rollout_correction:\n    rollout_is: token\n"
                          "    rollout_rs: *i\n");
      g_assert_cmpuint (y->len, <, 700);
      limit_memory ();
      g_assert_false (import_yaml (y->str, DW_GEN_VERL, &config, &error));
      g_assert_nonnull (
        strstr (error->message, "hostile.yaml:14: the value of rollout_rs is longer than"));
      return;
    }
  g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* Issue 14: "import-config is quadratic in YAML nesting depth (200 KB → 38 s)". Refused at the
 * limit, in linear time: both shapes (flow and block) of 200 KB. */
static void
test_yaml_deep_nesting (void)
{
  g_autoptr (GString) flow = g_string_new ("algorithm:\n  rollout_correction:\n    rollout_is: ");
  g_autoptr (GString) block = g_string_new ("algorithm:\n");
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  DwConfig config;

  for (int i = 0; i < 100000; i++)
    g_string_append_c (flow, '[');
  for (int i = 0; i < 100000; i++)
    g_string_append_c (flow, ']');
  g_string_append_c (flow, '\n');
  g_assert_false (import_yaml (flow->str, DW_GEN_VERL, &config, &error));
  g_assert_nonnull (strstr (error->message, "hostile.yaml:3: nested deeper than 64 levels"));
  g_clear_error (&error);
  for (int i = 0; block->len < 200000; i++)
    g_string_append_printf (block, "%*sk%d:\n", (i % 400) + 2, "", i);
  g_assert_false (import_yaml (block->str, DW_GEN_VERL, &config, &error));
  g_assert_nonnull (strstr (error->message, "nested deeper than 64 levels"));
  /* generous: the quadratic parse took 38 s; linear is milliseconds */
  g_assert_cmpint (g_get_monotonic_time () - t0, <, 5 * G_USEC_PER_SEC);
}

/* Issue 14: "YAML 0x10 read as a string" and "integers ≥ 2^63 wrap". PyYAML's SafeLoader (and
 * OmegaConf's) reads 0x10 as 16, 010 as 8, 0b11 as 3 and 1:30 as 90. */
static void
test_yaml_int_forms (void)
{
  static const struct
  {
    const char *literal;
    gint64 value;
  } ints[] = { { "0x10", 16 }, { "010", 8 },      { "0b11", 3 },
               { "1:30", 90 }, { "1_000", 1000 }, { "9223372036854775807", G_MAXINT64 } };

  for (guint i = 0; i < G_N_ELEMENTS (ints); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *y
        = g_strdup_printf ("algorithm:\n  rollout_correction:\n    rollout_is: token\n"
                           "    rollout_is_threshold: %s\n",
                           ints[i].literal);
      DwConfig config;
      const DwValue *v;

      g_assert_true (import_yaml (y, DW_GEN_VERL, &config, &error));
      g_assert_no_error (error);
      v = dw_config_get (&config, "rollout_is_threshold");
      g_assert_nonnull (v);
      g_assert_cmpint (v->kind, ==, DW_VALUE_INT);
      g_assert_cmpint (v->i, ==, ints[i].value);
    }
  {
    g_autoptr (GError) error = NULL;
    DwConfig config;

    g_assert_false (import_yaml ("algorithm:\n  rollout_correction:\n    rollout_is: token\n"
                                 "    rollout_is_threshold: 18446744073709551615\n",
                                 DW_GEN_VERL, &config, &error));
    g_assert_nonnull (strstr (error->message, "hostile.yaml:4: rollout_is_threshold: the integer "
                                              "18446744073709551615 does not fit in 64 bits"));
  }
}

/* Issue 14: "an int64 mask holding INT64_MAX trips UBSan (float-cast-overflow) and is flipped
 * to INT64_MIN in the output mask". Every preset of every generation: an output mask element
 * is 0 or its input value (or, for float masks, that value rounded), never negative. */
static void
test_int64_mask_extremes (void)
{
  static const DwGeneration gens[]
    = { DW_GEN_VERL, DW_GEN_VERL_0_7, DW_GEN_VERL_0_6_1, DW_GEN_VERL_0_6, DW_GEN_SLIME };
  g_autoptr (DwBatch) batch = dw_batch_new (2, 4, DW_DTYPE_F32, DW_DTYPE_I64);
  const gint64 mask[8] = { G_MAXINT64, 1, 0, 1, 1, G_MAXINT64, 1, 0 };
  guint n_int64_outputs = 0, n_runs = 0;

  for (int i = 0; i < 8; i++)
    {
      ((float *)batch->old_log_prob)[i] = -1.0f - 0.01f * (float)i;
      ((float *)batch->rollout_log_prob)[i] = -1.0f;
    }
  memcpy (batch->response_mask, mask, sizeof mask);
  for (guint g = 0; g < G_N_ELEMENTS (gens); g++)
    {
      size_t n_presets;
      const DwPresetInfo *presets = dw_preset_list (gens[g], &n_presets);

      for (size_t p = 0; p < n_presets; p++)
        {
          DwCorrectionResult result;
          DwCorrectionError error = { 0 };
          DwConfig config;

          dw_correction_result_init (&result);
          dw_config_init (&config, gens[g]);
          g_assert_true (dw_preset_apply (&config, presets[p].name, &error));
          if (!dw_correction_run (batch, &config, &result, &error))
            continue;
          n_runs++;
          for (int i = 0; i < 8 && result.mask != NULL; i++)
            {
              double out
                = result.mask_dtype == DW_DTYPE_I64 ? (double)((const gint64 *)result.mask)[i]
                  : dw_dtype_size (result.mask_dtype) == 4 ? ((const float *)result.mask)[i]
                                                           : ((const double *)result.mask)[i];

              g_assert_cmpfloat (out, >=, 0.0);
              if (result.mask_dtype == DW_DTYPE_I64)
                g_assert_true (((const gint64 *)result.mask)[i] == 0
                               || ((const gint64 *)result.mask)[i] == mask[i]);
            }
          n_int64_outputs += result.mask_dtype == DW_DTYPE_I64;
          dw_correction_result_clear (&result);
        }
    }
  g_test_message ("%u runs, %u with an int64 output mask", n_runs, n_int64_outputs);
  g_assert_cmpuint (n_int64_outputs, >, 0);
}

static double
cpu_seconds (void)
{
  struct rusage ru;

  g_assert_cmpint (getrusage (RUSAGE_SELF, &ru), ==, 0);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec
         + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double
add_restarts_seconds (guint n)
{
  DwPlotSeries *series = dw_plot_series_new (0.0);
  double t0 = cpu_seconds (), t;
  gsize n_restarts;

  for (guint i = 0; i < n; i++)
    dw_plot_series_add_restart (series, (gint64)i * 7);
  for (guint i = 0; i < n; i += 2)
    dw_plot_series_add_restart (series, (gint64)i * 7); /* seen already */
  t = cpu_seconds () - t0;
  dw_plot_series_get_restarts (series, &n_restarts);
  g_assert_cmpuint (n_restarts, ==, n);
  dw_plot_series_free (series);
  return t;
}

/* Issue 14: "the window is quadratic in restart markers (1 M markers block the main loop
 * > 120 s)" — the core part: every marker was searched for linearly among those before it. Four
 * times the markers must cost well under the sixteen times of a quadratic search (CPU time). */
static void
test_restart_markers_linear (void)
{
  double small = add_restarts_seconds (50000) + 5e-3;
  double big = add_restarts_seconds (200000);

  g_test_message ("50 k markers: %.3f s, 200 k: %.3f s", small, big);
  g_assert_cmpfloat (big / small, <, 9.0);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("dw-hostile-input-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/hostile/input/safetensors-deep-nesting", test_safetensors_deep_nesting);
  g_test_add_func ("/hostile/input/safetensors-duplicate-tensor",
                   test_safetensors_duplicate_tensor);
  g_test_add_func ("/hostile/input/safetensors-huge-header", test_safetensors_huge_header);
  g_test_add_func ("/hostile/input/config-json-deep-nesting", test_config_json_deep_nesting);
  g_test_add_func ("/hostile/input/config-json-duplicates-and-big-ints",
                   test_config_json_duplicates_and_big_ints);
  g_test_add_func ("/hostile/input/npz-duplicate-member", test_npz_duplicate_member);
  g_test_add_func ("/hostile/input/npz-deflate-bomb", test_npz_deflate_bomb);
  g_test_add_func ("/hostile/input/jsonl-ragged", test_jsonl_ragged);
  g_test_add_func ("/hostile/input/yaml-billion-laughs", test_yaml_billion_laughs);
  g_test_add_func ("/hostile/input/yaml-deep-nesting", test_yaml_deep_nesting);
  g_test_add_func ("/hostile/input/yaml-int-forms", test_yaml_int_forms);
  g_test_add_func ("/hostile/input/int64-mask-extremes", test_int64_mask_extremes);
  g_test_add_func ("/hostile/input/restart-markers-linear", test_restart_markers_linear);
  status = g_test_run ();
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmp_dir);
    g_assert_cmpint (system (cmd), ==, 0);
  }
  g_free (tmp_dir);
  return status;
}
