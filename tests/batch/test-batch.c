/* test-batch.c — batch readers and writers: samples, golden batches, own test files, round trips
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Expected values come from tests/data/batch/expected.json, written by make-test-data.py with
 * numpy (SHA-256 of every padded array in the dtype the reader must produce).
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "dw-batch-reader.h"

static char *
data_path (const char *key)
{
  if (g_str_has_prefix (key, "shared:"))
    return g_build_filename (g_getenv ("DW_SHARED_DIR"), key + 7, NULL);
  g_assert_true (g_str_has_prefix (key, "data:"));
  return g_build_filename (g_getenv ("DW_TEST_DATA"), "batch", key + 5, NULL);
}

static char *
sha256 (const void *data, gsize len)
{
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, len);
}

static double
lp_at (const DwBatch *b, const void *p, gsize i)
{
  return b->lp_dtype == DW_DTYPE_F32 ? ((const float *)p)[i] : ((const double *)p)[i];
}

static void
check_against (const DwBatch *b, JsonObject *e, const char *key)
{
  gsize n = b->rows * b->cols, lps = dw_dtype_size (b->lp_dtype);
  g_autofree char *old_sha = sha256 (b->old_log_prob, n * lps);
  g_autofree char *roll_sha = sha256 (b->rollout_log_prob, n * lps);
  g_autofree char *mask_sha = sha256 (b->response_mask, n * dw_dtype_size (b->mask_dtype));
  JsonArray *row_sums = json_object_get_array_member (e, "mask_row_sums");
  double finite_sum = 0;
  gint64 nan = 0, pinf = 0, ninf = 0, nzero = 0;

  g_test_message ("%s: [%zu,%zu] %s/%s", key, b->rows, b->cols, dw_dtype_name (b->lp_dtype),
                  dw_dtype_name (b->mask_dtype));
  g_assert_cmpuint (b->rows, ==, json_object_get_int_member (e, "rows"));
  g_assert_cmpuint (b->cols, ==, json_object_get_int_member (e, "cols"));
  g_assert_cmpstr (dw_dtype_name (b->lp_dtype), ==, json_object_get_string_member (e, "lp_dtype"));
  g_assert_cmpstr (dw_dtype_name (b->mask_dtype), ==,
                   json_object_get_string_member (e, "mask_dtype"));
  g_assert_cmpstr (dw_dtype_name (b->source_lp_dtype), ==,
                   json_object_get_string_member (e, "source_lp_dtype"));
  g_assert_cmpint (!!(b->flags & DW_BATCH_LOSSY_LOGPROBS), ==,
                   json_object_get_boolean_member (e, "lossy"));
  g_assert_cmpint (!!(b->flags & DW_BATCH_PACKED_SOURCE), ==,
                   json_object_get_boolean_member (e, "packed"));
  g_assert_cmpint (b->step, ==, json_object_get_int_member (e, "step"));
  g_assert_cmpstr (old_sha, ==, json_object_get_string_member (e, "old_sha256"));
  g_assert_cmpstr (roll_sha, ==, json_object_get_string_member (e, "rollout_sha256"));
  g_assert_cmpstr (mask_sha, ==, json_object_get_string_member (e, "mask_sha256"));
  if (json_object_get_null_member (e, "adv_sha256"))
    g_assert_null (b->advantages);
  else
    {
      g_autofree char *adv_sha = NULL;
      g_assert_nonnull (b->advantages);
      adv_sha = sha256 (b->advantages, n * lps);
      g_assert_cmpstr (adv_sha, ==, json_object_get_string_member (e, "adv_sha256"));
    }
  for (gsize i = 0; i < n; i++)
    {
      double v = lp_at (b, b->old_log_prob, i);
      if (isnan (v))
        nan++;
      else if (isinf (v))
        v > 0 ? pinf++ : ninf++;
      else
        {
          finite_sum += v;
          if (v == 0 && signbit (v))
            nzero++;
        }
    }
  g_assert_cmpfloat_with_epsilon (finite_sum, json_object_get_double_member (e, "old_finite_sum"),
                                  1e-9 * (1 + fabs (finite_sum)));
  g_assert_cmpint (nan, ==, json_object_get_int_member (e, "old_nan"));
  g_assert_cmpint (pinf, ==, json_object_get_int_member (e, "old_posinf"));
  g_assert_cmpint (ninf, ==, json_object_get_int_member (e, "old_neginf"));
  g_assert_cmpint (nzero, ==, json_object_get_int_member (e, "old_negzero"));
  g_assert_cmpuint (json_array_get_length (row_sums), ==, b->rows);
  for (gsize r = 0; r < b->rows; r++)
    {
      double s = 0;
      for (gsize c = 0; c < b->cols; c++)
        s += dw_batch_mask_value (b, r * b->cols + c);
      g_assert_cmpfloat (s, ==, json_array_get_double_element (row_sums, (guint)r));
    }
}

static JsonObject *
load_expected (JsonParser **parser)
{
  g_autofree char *path = data_path ("data:expected.json");
  g_autoptr (GError) error = NULL;

  *parser = json_parser_new ();
  json_parser_load_from_file (*parser, path, &error);
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (*parser));
}

/* Every sample, golden batch and own test file, from the file and from memory. */
static void
test_expected (void)
{
  g_autoptr (JsonParser) parser = NULL;
  JsonObject *root = load_expected (&parser);
  g_autoptr (GList) keys = json_object_get_members (root);
  guint n = 0;

  for (GList *l = keys; l; l = l->next)
    {
      const char *key = l->data;
      g_autofree char *path = data_path (key);
      g_autoptr (GError) error = NULL;
      g_autoptr (DwBatch) b = dw_batch_read_file (path, &error);
      g_autofree char *contents = NULL;
      gsize len;

      g_assert_no_error (error);
      check_against (b, json_object_get_object_member (root, key), key);
      n++;
      if (strstr (key, "npyset"))
        continue; /* a set of files, not one buffer */
      g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
      {
        g_autoptr (DwBatch) m = dw_batch_read_bytes (path, (guint8 *)contents, len, &error);
        g_assert_no_error (error);
        check_against (m, json_object_get_object_member (root, key), key);
      }
    }
  g_assert_cmpuint (n, >=, 26);
}

static gboolean
lp_equal (double a, double b)
{
  return (isnan (a) && isnan (b)) || (a == b && signbit (a) == signbit (b));
}

/* Same values in the valid part of each row (up to its last non-zero mask element). */
static void
assert_same_valid (const DwBatch *a, const DwBatch *b, gboolean exact_dtypes)
{
  g_assert_cmpuint (a->rows, ==, b->rows);
  if (exact_dtypes)
    {
      g_assert_cmpint (a->lp_dtype, ==, b->lp_dtype);
      g_assert_cmpint (a->mask_dtype, ==, b->mask_dtype);
    }
  for (gsize r = 0; r < a->rows; r++)
    {
      gsize len = 0;
      for (gsize c = a->cols; c > 0 && !len; c--)
        if (dw_batch_mask_value (a, r * a->cols + c - 1) != 0)
          len = c;
      g_assert_cmpuint (len, <=, b->cols);
      for (gsize c = 0; c < b->cols; c++)
        {
          gsize ia = r * a->cols + c, ib = r * b->cols + c;
          if (c >= len)
            {
              g_assert_cmpfloat (dw_batch_mask_value (b, ib), ==, 0);
              continue;
            }
          g_assert_true (lp_equal (lp_at (a, a->old_log_prob, ia), lp_at (b, b->old_log_prob, ib)));
          g_assert_true (
            lp_equal (lp_at (a, a->rollout_log_prob, ia), lp_at (b, b->rollout_log_prob, ib)));
          g_assert_cmpfloat (dw_batch_mask_value (a, ia), ==, dw_batch_mask_value (b, ib));
          if (a->advantages)
            g_assert_true (lp_equal (lp_at (a, a->advantages, ia), lp_at (b, b->advantages, ib)));
        }
    }
}

static void
assert_identical (const DwBatch *a, const DwBatch *b)
{
  gsize n = a->rows * a->cols, lps = dw_dtype_size (a->lp_dtype);
  g_assert_cmpuint (a->rows, ==, b->rows);
  g_assert_cmpuint (a->cols, ==, b->cols);
  g_assert_cmpint (a->lp_dtype, ==, b->lp_dtype);
  g_assert_cmpint (a->mask_dtype, ==, b->mask_dtype);
  g_assert_cmpint (a->step, ==, b->step);
  g_assert_cmpmem (a->old_log_prob, n * lps, b->old_log_prob, n * lps);
  g_assert_cmpmem (a->rollout_log_prob, n * lps, b->rollout_log_prob, n * lps);
  g_assert_cmpmem (a->response_mask, n * dw_dtype_size (a->mask_dtype), b->response_mask,
                   n * dw_dtype_size (b->mask_dtype));
  g_assert_cmpint (!!a->advantages, ==, !!b->advantages);
  if (a->advantages)
    g_assert_cmpmem (a->advantages, n * lps, b->advantages, n * lps);
}

/* The sample step in every format gives the same batch. */
static void
test_cross_format (void)
{
  const char *keys[] = { "shared:samples/batch/step_000001.safetensors",
                         "shared:samples/batch/step_000001.npz", "data:step_000001_deflate.npz" };
  g_autofree char *jpath = data_path ("shared:samples/batch/step_000001.jsonl");
  g_autofree char *ppath = data_path ("data:step_000001_packed.safetensors");
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) ref = NULL, jsonl = NULL, packed = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autofree char *path = data_path (keys[i]);
      g_autoptr (DwBatch) b = dw_batch_read_file (path, &error);
      g_assert_no_error (error);
      if (!ref)
        ref = g_steal_pointer (&b);
      else
        assert_identical (ref, b);
    }
  jsonl = dw_batch_read_file (jpath, &error);
  g_assert_no_error (error);
  packed = dw_batch_read_file (ppath, &error);
  g_assert_no_error (error);
  assert_identical (jsonl, packed);
  /* JSONL/packed rows are cut at response_length; the padded batch agrees inside them */
  assert_same_valid (ref, jsonl, TRUE);
}

typedef enum
{
  RT_ST,
  RT_ST_PACKED,
  RT_NPZ,
  RT_NPZ_DEFLATE,
  RT_JSONL,
} RoundTrip;

static void
roundtrip_one (const char *key, RoundTrip kind)
{
  g_autofree char *path = data_path (key);
  g_autofree char *dir = g_dir_make_tmp ("dw-batch-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, kind == RT_JSONL ? "b.jsonl" : "b.bin", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) a = dw_batch_read_file (path, &error);
  g_autoptr (DwBatch) b = NULL;
  gboolean ok = FALSE;

  g_assert_no_error (error);
  switch (kind)
    {
    case RT_ST:
      ok = dw_batch_write_safetensors (a, out, &error);
      break;
    case RT_ST_PACKED:
      ok = dw_batch_write_safetensors_full (a, out, DW_BATCH_WRITE_PACKED, NULL, &error);
      break;
    case RT_NPZ:
    case RT_NPZ_DEFLATE:
      ok = dw_batch_write_npz (a, out, kind == RT_NPZ_DEFLATE, &error);
      break;
    case RT_JSONL:
      ok = dw_batch_write_jsonl (a, out, &error);
      break;
    }
  g_assert_no_error (error);
  g_assert_true (ok);
  b = dw_batch_read_file (out, &error);
  g_assert_no_error (error);
  if (kind == RT_ST || kind == RT_NPZ || kind == RT_NPZ_DEFLATE)
    {
      /* npz has no step: it comes from the file name, which is b.bin here */
      if (kind != RT_ST)
        b->step = a->step;
      assert_identical (a, b);
      g_assert_cmpint (a->source_lp_dtype == DW_DTYPE_F64 ? DW_DTYPE_F64 : a->lp_dtype, ==,
                       b->source_lp_dtype);
    }
  else
    {
      assert_same_valid (a, b, kind == RT_ST_PACKED);
      g_assert_cmpint (a->step, ==, b->step);
      if (kind == RT_ST_PACKED)
        g_assert_true (b->flags & DW_BATCH_PACKED_SOURCE);
    }
  g_unlink (out);
  g_rmdir (dir);
}

static void
test_roundtrip (void)
{
  const char *keys[] = {
    "shared:samples/batch/step_000001.safetensors",
    "shared:samples/batch/step_000001_bf16.safetensors",
    "shared:golden/batches/moderate_f64.npz",
    "shared:golden/batches/tiny_mask_bool.npz",
    "shared:golden/batches/tiny_mask_int64.npz",
    "shared:golden/batches/all_pad_row.npz",
    "data:nonfinite.safetensors",
    "data:layouts.npz",
    "data:ragged.jsonl",
  };
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    for (RoundTrip k = RT_ST; k <= RT_JSONL; k++)
      {
        g_test_message ("round trip %s kind %d", keys[i], k);
        roundtrip_one (keys[i], k);
      }
}

/* Writer metadata: step, layout, caller keys, JSON escaping. */
static void
test_writer_metadata (void)
{
  g_autofree char *path = data_path ("shared:samples/batch/step_000001.safetensors");
  g_autofree char *dir = g_dir_make_tmp ("dw-batch-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "m.safetensors", NULL);
  g_autoptr (GHashTable) meta = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) a = dw_batch_read_file (path, &error);
  g_autofree char *contents = NULL;
  gsize len;

  g_assert_no_error (error);
  g_hash_table_insert (meta, "framework", "verl");
  g_hash_table_insert (meta, "note", "a \"quoted\"\nline");
  g_hash_table_insert (meta, "layout", "ignored");
  a->step = 42;
  g_assert_true (dw_batch_write_safetensors_full (a, out, DW_BATCH_WRITE_DEFAULT, meta, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (out, &contents, &len, NULL));
  g_assert_nonnull (strstr (contents + 8,
                            "\"__metadata__\":{\"format\":\"rlmon.rollout_batch\","
                            "\"version\":\"1\",\"layout\":\"padded\",\"step\":\"42\","
                            "\"framework\":\"verl\",\"note\":\"a \\\"quoted\\\"\\u000aline\"}"));
  g_assert_cmpuint ((contents[0] & 0xff) % 8, ==, 0);
  {
    g_autoptr (DwBatch) b = dw_batch_read_file (out, &error);
    g_assert_no_error (error);
    g_assert_cmpint (b->step, ==, 42);
  }
  g_unlink (out);
  g_rmdir (dir);
}

static void
test_npy_array (void)
{
  g_autofree char *path = data_path ("shared:samples/batch/step_000001.old_log_prob.npy");
  g_autofree char *npz = data_path ("shared:samples/batch/step_000001.npz");
  g_autofree char *f3 = data_path ("data:fortran3d.npy");
  g_autoptr (GError) error = NULL;
  g_autoptr (DwBatch) b = dw_batch_read_file (npz, &error);
  guint64 shape[8];
  guint ndim;
  DwDType dtype;
  g_autofree double *v = dw_batch_read_npy_array (path, &ndim, shape, &dtype, &error);
  g_autofree double *w = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (ndim, ==, 2);
  g_assert_cmpuint (shape[0], ==, 8);
  g_assert_cmpuint (shape[1], ==, 48);
  g_assert_cmpint (dtype, ==, DW_DTYPE_F32);
  for (gsize i = 0; i < 8 * 48; i++)
    g_assert_cmpfloat (v[i], ==, ((float *)b->old_log_prob)[i]);
  /* Fortran order, big-endian int16, 3-D: C-order values 0..23 */
  w = dw_batch_read_npy_array (f3, &ndim, shape, &dtype, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ndim, ==, 3);
  g_assert_cmpint (dtype, ==, DW_DTYPE_I16);
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat (w[i], ==, i);
}

static void
test_detect (void)
{
  g_assert_cmpint (dw_batch_detect_format ((const guint8 *)"PK\003\004", 4), ==,
                   DW_BATCH_FORMAT_NPZ);
  g_assert_cmpint (dw_batch_detect_format ((const guint8 *)"\x93NUMPY\1\0", 8), ==,
                   DW_BATCH_FORMAT_NPY);
  g_assert_cmpint (dw_batch_detect_format ((const guint8 *)"\x10\0\0\0\0\0\0\0{\"a\"", 12), ==,
                   DW_BATCH_FORMAT_SAFETENSORS);
  g_assert_cmpint (dw_batch_detect_format ((const guint8 *)"{\"step\": 1, \"x\"", 15), ==,
                   DW_BATCH_FORMAT_JSONL);
  g_assert_cmpint (dw_batch_detect_format ((const guint8 *)"        {\"a\":1}", 15), ==,
                   DW_BATCH_FORMAT_JSONL);
  g_assert_cmpint (dw_batch_detect_format ((const guint8 *)"step,value", 10), ==,
                   DW_BATCH_FORMAT_UNKNOWN);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/batch/expected", test_expected);
  g_test_add_func ("/batch/cross-format", test_cross_format);
  g_test_add_func ("/batch/roundtrip", test_roundtrip);
  g_test_add_func ("/batch/writer-metadata", test_writer_metadata);
  g_test_add_func ("/batch/npy-array", test_npy_array);
  g_test_add_func ("/batch/detect", test_detect);
  return g_test_run ();
}
