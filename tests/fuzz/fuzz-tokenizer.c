/* fuzz-tokenizer.c — libFuzzer target for the tokenizer.json vocabulary reader
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A vocabulary or an error naming the input; every id it knows decodes and displays (ASan sees
 * each piece's bytes), unknown ids give NULL.
 */
#include <glib.h>

#include "dw-tokenizer.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  GError *error = NULL;
  DwTokenizer *tok
    = dw_tokenizer_load_from_data ("tokenizer.json", (const char *)data, size, &error);

  if (tok == NULL)
    {
      if (error == NULL || !g_str_has_prefix (error->message, "tokenizer.json: "))
        g_error ("bad error: %s", error ? error->message : "(none)");
      g_error_free (error);
      return 0;
    }
  for (guint id = 0; id < dw_tokenizer_get_size (tok); id++)
    g_free (dw_tokenizer_display (tok, id));
  g_assert_null (dw_tokenizer_display (tok, dw_tokenizer_get_size (tok)));
  dw_tokenizer_free (tok);
  return 0;
}
