/* dw-tokenizer.h — token ids → text from a Hugging Face tokenizer.json
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Reads only the vocabulary (model.vocab, added_tokens) with json-glib; no merges, no encoding.
 * Byte-level BPE pieces (GPT-2, Llama 3, Qwen: "Ġthe", "Ċ") are turned back into the bytes they
 * stand for; SentencePiece pieces ("▁the") get their spaces back. Unknown ids decode to NULL.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _DwTokenizer DwTokenizer;

DwTokenizer *dw_tokenizer_load (const char *path, GError **error);
/* The same from memory; @name prefixes messages. */
DwTokenizer *dw_tokenizer_load_from_data (const char *name, const char *data, gsize len,
                                          GError **error);
void dw_tokenizer_free (DwTokenizer *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwTokenizer, dw_tokenizer_free)

/* The text of @id (raw bytes, may be a partial UTF-8 sequence), or NULL if the id is unknown. */
const GBytes *dw_tokenizer_decode (const DwTokenizer *self, gint64 id);
/* The same, printable: invalid UTF-8 as \xNN, control characters as \n, \t, \u00NN. */
char *dw_tokenizer_display (const DwTokenizer *self, gint64 id);
guint dw_tokenizer_get_size (const DwTokenizer *self);

G_END_DECLS
