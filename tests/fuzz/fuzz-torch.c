/* fuzz-torch.c — libFuzzer target for torch .pt dumps: the restricted unpickler and the reader
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A zip input ("PK…") goes through dw_batch_read_bytes() (container, data.pkl, slime layouts)
 * with the shared batch checks. Any other input is taken as a data.pkl on its own, since the
 * zip's CRC would stop most mutations before they reach the unpickler: it must parse or fail
 * with a DW_BATCH_ERROR naming the input, and the tree it builds is walked (breadth-first,
 * bounded: a hostile memo can make it cyclic) to let ASan see every value.
 */
#include "dw-pickle.h"
#include "fuzz-batch.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

static void
fuzz_torch_walk (const DwPickleValue *root)
{
  GQueue queue = G_QUEUE_INIT;
  guint visited = 0;

  g_queue_push_tail (&queue, (gpointer)root);
  while (!g_queue_is_empty (&queue) && visited++ < 100000)
    {
      const DwPickleValue *v = g_queue_pop_head (&queue);
      g_autofree char *text = dw_pickle_value_describe (v);
      double number;
      gint64 integer;

      g_assert_nonnull (text);
      (void)dw_pickle_value_number (v, &number);
      (void)dw_pickle_value_int (v, &integer);
      (void)dw_pickle_value_str (v);
      (void)dw_pickle_value_refused_name (v);
      if (dw_pickle_value_tensor (v))
        g_assert_true (dw_pickle_value_tensor (v)->ndim <= 8);
      for (guint64 i = 0; i < dw_pickle_seq_length (v); i++)
        {
          if (!dw_pickle_seq_number (v, i, &number) && dw_pickle_seq_get (v, i) == NULL)
            g_error ("sequence element %" G_GUINT64_FORMAT " is neither a number nor a value", i);
          if (dw_pickle_seq_get (v, i))
            g_queue_push_tail (&queue, (gpointer)dw_pickle_seq_get (v, i));
        }
      for (guint i = 0; i < dw_pickle_dict_size (v); i++)
        {
          (void)dw_pickle_dict_key (v, i);
          g_queue_push_tail (&queue, (gpointer)dw_pickle_dict_value (v, i));
        }
    }
  g_queue_clear (&queue);
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  GError *error = NULL;
  DwPickle *pickle;

  if (size >= 2 && data[0] == 'P' && data[1] == 'K')
    return fuzz_batch ("fuzz.pt", data, size);
  pickle = dw_pickle_load ("data.pkl", data, size, 64u << 20, &error);
  if (pickle == NULL)
    {
      if (error == NULL || error->domain != DW_BATCH_ERROR
          || !g_str_has_prefix (error->message, "data.pkl: offset "))
        g_error ("bad error: %s", error ? error->message : "(none)");
      g_error_free (error);
      return 0;
    }
  g_assert_null (error);
  fuzz_torch_walk (dw_pickle_get_root (pickle));
  dw_pickle_free (pickle);
  return 0;
}
