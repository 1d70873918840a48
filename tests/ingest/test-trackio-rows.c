/* test-trackio-rows.c — the trackio reader's flat-row scanner against json-glib, row by row
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * dw_trackio_read reads a flat {"key": value, …} row with its own scanner and leaves every other
 * row to json-glib (dw-reader-sqlite.c). Each generated row is stored twice in a trackio database
 * as trackio's log() stores it: as it is (the scanner reads it) and with one more member holding a
 * nested object with a text value (json-glib reads that row; the extra member gives no point).
 * Both must give the same points, tag by tag and bit for bit, or both be rejected. The members
 * are what orjson writes and what a hostile file may hold: integers (-0, 18 and 19 digits),
 * repr floats, exponents in both cases, "NaN"/"Infinity"/"-Infinity", text, null, true/false,
 * empty keys, odd whitespace, and tokens that are not JSON (leading zeros, '+', '.5', hex).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dw-reader-loggers.h"
#include "logger-fixtures.h"

typedef struct
{
  GPtrArray *by_step[2]; /* "tag=bits" per row, [0] the row as it is, [1] with a nested member */
} Collected;

static void
collect_cb (const char *run_key, const char *run_name, const char *group,
            const DwScalarPoint *point, gpointer user_data)
{
  Collected *collected = user_data;
  guint64 bits;

  memcpy (&bits, &point->value, 8);
  if (isnan (point->value))
    bits = 0x7ff8000000000000u; /* one NaN */
  g_ptr_array_add (collected->by_step[point->step % 2],
                   g_strdup_printf ("%" G_GINT64_FORMAT " %s=%016" G_GINT64_MODIFIER "x",
                                    point->step / 2, point->tag, bits));
}

static void
ignore_diag_cb (goffset offset, const char *message, gpointer user_data)
{
}

static const char *const values[] = {
  "0",
  "-0",
  "1",
  "-17",
  "123456789012345678",
  "-123456789012345678",
  "1234567890123456789",
  "0.1",
  "-0.0",
  "0.30000000000000004",
  "1e-05",
  "1E+20",
  "2.5e-308",
  "1.7976931348623157e308",
  "1e400",
  "5e-324",
  "\"NaN\"",
  "\"Infinity\"",
  "\"-Infinity\"",
  "\"text\"",
  "\"\"",
  "null",
  "true",
  "false",
  "01",
  "+1",
  ".5",
  "1.",
  "0x10",
  "1e",
  "-",
  "NaN",
  "Infinity",
  "[1, 2]",
};

static void
test_flat_rows_match_json_glib (void)
{
  g_autoptr (GRand) random = g_rand_new_with_seed (7);
  g_autofree char *dir = g_dir_make_tmp ("dw-trackio-rows-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "project.db", NULL);
  g_autoptr (GError) error = NULL;
  Collected collected
    = { { g_ptr_array_new_with_free_func (g_free), g_ptr_array_new_with_free_func (g_free) } };
  sqlite3 *db = dw_fx_trackio_create (path, TRUE);
  const guint n_rows = 3000;
  gint64 last = 0;

  sqlite3_exec (db, "BEGIN", NULL, NULL, NULL);
  for (guint row = 0; row < n_rows; row++)
    {
      g_autoptr (GString) json = g_string_new (g_rand_boolean (random) ? "{" : " {\n");
      g_autofree char *nested = NULL;
      guint n_members = (guint)g_rand_int_range (random, 0, 6);

      for (guint m = 0; m < n_members; m++)
        {
          const char *value = values[g_rand_int_range (random, 0, G_N_ELEMENTS (values))];
          const char *space = g_rand_int_range (random, 0, 4) == 0 ? " \t" : "";
          if (m > 0)
            g_string_append_printf (json, ",%s", space);
          if (g_rand_int_range (random, 0, 20) == 0)
            g_string_append_printf (json, "\"\"%s:%s%s", space, space, value);
          else
            g_string_append_printf (json, "\"train/m %u\"%s:%s%s", m, space, space, value);
        }
      nested
        = g_strdup_printf ("%s%s\"zz\": {\"note\": \"x\"}}", json->str, n_members > 0 ? ", " : "");
      g_string_append (json, g_rand_boolean (random) ? "}" : "}\r\n");
      dw_fx_trackio_log (db, TRUE, "id", "run", 2 * (gint64)row, "2026-01-01T00:00:00+00:00",
                         json->str);
      dw_fx_trackio_log (db, TRUE, "id", "run", 2 * (gint64)row + 1, "2026-01-01T00:00:00+00:00",
                         nested);
    }
  sqlite3_exec (db, "COMMIT", NULL, NULL, NULL);
  sqlite3_close (db);

  g_assert_true (
    dw_trackio_read (path, 0, 0, 0, collect_cb, ignore_diag_cb, &collected, &last, &error));
  g_assert_no_error (error);
  g_assert_cmpint (last, ==, 2 * n_rows);
  g_assert_cmpuint (collected.by_step[0]->len, >, n_rows); /* most rows hold points */
  g_assert_cmpuint (collected.by_step[0]->len, ==, collected.by_step[1]->len);
  for (guint i = 0; i < collected.by_step[0]->len; i++)
    g_assert_cmpstr (collected.by_step[0]->pdata[i], ==, collected.by_step[1]->pdata[i]);
  g_ptr_array_unref (collected.by_step[0]);
  g_ptr_array_unref (collected.by_step[1]);
  {
    g_autofree char *command = g_strdup_printf ("rm -rf '%s'", dir);
    g_assert_cmpint (system (command), ==, 0);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trackio-rows/flat-matches-json-glib", test_flat_rows_match_json_glib);
  return g_test_run ();
}
