/* dw-tokenizer.c — token ids → text from a Hugging Face tokenizer.json
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Byte-level BPE (GPT-2's bytes_to_unicode) writes every byte as one printable code point: the
 * printable Latin-1 bytes 0x21–0x7E, 0xA1–0xAC and 0xAE–0xFF stand for themselves, the other 68
 * bytes are numbered in order from U+0100 (so the space 0x20 is U+0120 'Ġ' and '\n' is U+010A
 * 'Ċ'). Decoding maps each code point of a piece back to its byte.
 */
#include "dw-tokenizer.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

struct _DwTokenizer
{
  GPtrArray *pieces; /* id → GBytes* (NULL for holes) */
};

/* code point → byte of GPT-2's table; -1 when the code point is not in it */
static int
dw_tokenizer_byte_level_byte (gunichar c)
{
  static int table[324];
  static gsize done = 0;

  if (g_once_init_enter (&done))
    {
      int count = 0;
      for (int index = 0; index < 324; index++)
        table[index] = -1;
      for (int byte = 0; byte < 256; byte++)
        {
          gboolean printable
            = (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || byte >= 0xae;
          if (printable)
            table[byte] = byte;
          else
            table[256 + count++] = byte;
        }
      g_once_init_leave (&done, 1);
    }
  return c < 324 ? table[c] : -1;
}

/* A byte-level piece → bytes; NULL if some code point is outside the table (not byte-level). */
static GBytes *
dw_tokenizer_decode_byte_level (const char *piece)
{
  GByteArray *out = g_byte_array_new ();

  for (const char *cursor = piece; *cursor; cursor = g_utf8_next_char (cursor))
    {
      int byte_value = dw_tokenizer_byte_level_byte (g_utf8_get_char (cursor));
      guint8 byte = (guint8)byte_value;
      if (byte_value < 0)
        {
          g_byte_array_unref (out);
          return NULL;
        }
      g_byte_array_append (out, &byte, 1);
    }
  return g_byte_array_free_to_bytes (out);
}

static GBytes *
dw_tokenizer_decode_piece (const char *piece, gboolean byte_level, gboolean special)
{
  if (byte_level && !special)
    {
      GBytes *bytes = dw_tokenizer_decode_byte_level (piece);
      if (bytes)
        return bytes;
    }
  if (!special)
    {
      /* SentencePiece: "▁" (U+2581) is a space; "<0x0A>" is a byte */
      g_autoptr (GString) s = g_string_new (NULL);
      guint hex;
      if (strlen (piece) == 6 && sscanf (piece, "<0x%2X>", &hex) == 1)
        {
          guint8 byte = (guint8)hex;
          return g_bytes_new (&byte, 1);
        }
      for (const char *cursor = piece; *cursor; cursor = g_utf8_next_char (cursor))
        {
          gunichar character = g_utf8_get_char (cursor);
          if (character == 0x2581)
            g_string_append_c (s, ' ');
          else
            g_string_append_unichar (s, character);
        }
      return g_bytes_new (s->str, s->len);
    }
  return g_bytes_new (piece, strlen (piece));
}

static gboolean
dw_tokenizer_uses_byte_level (JsonObject *root)
{
  const char *sections[] = { "decoder", "pre_tokenizer" };

  for (guint index = 0; index < G_N_ELEMENTS (sections); index++)
    {
      JsonNode *count = json_object_get_member (root, sections[index]);
      if (count && JSON_NODE_HOLDS_OBJECT (count))
        {
          g_autoptr (JsonGenerator) g = json_generator_new ();
          g_autofree char *text = NULL;
          json_generator_set_root (g, count);
          text = json_generator_to_data (g, NULL);
          if (strstr (text, "\"ByteLevel\""))
            return TRUE;
        }
    }
  return FALSE;
}

static gboolean
dw_tokenizer_set_piece (DwTokenizer *self, gint64 id, const char *piece, gboolean byte_level,
                        gboolean special)
{
  if (id < 0 || id > 16 * 1024 * 1024 || piece == NULL) /* "content": null, or not a string */
    return FALSE;
  if ((guint)id >= self->pieces->len)
    g_ptr_array_set_size (self->pieces, (guint)id + 1);
  if (g_ptr_array_index (self->pieces, id))
    g_bytes_unref (g_ptr_array_index (self->pieces, id));
  g_ptr_array_index (self->pieces, id) = dw_tokenizer_decode_piece (piece, byte_level, special);
  return TRUE;
}

static DwTokenizer *
dw_tokenizer_from_parser (JsonParser *parser, const char *path, GError **error)
{
  g_autoptr (DwTokenizer) self = g_new0 (DwTokenizer, 1);
  JsonObject *root, *model, *vocab;
  JsonNode *added;
  gboolean byte_level;
  GList *members;

  self->pieces = g_ptr_array_new_with_free_func ((GDestroyNotify)g_bytes_unref);
  root = JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser))
           ? json_node_get_object (json_parser_get_root (parser))
           : NULL;
  model = root && json_object_has_member (root, "model")
              && JSON_NODE_HOLDS_OBJECT (json_object_get_member (root, "model"))
            ? json_object_get_object_member (root, "model")
            : NULL;
  vocab = model && json_object_has_member (model, "vocab")
              && JSON_NODE_HOLDS_OBJECT (json_object_get_member (model, "vocab"))
            ? json_object_get_object_member (model, "vocab")
            : NULL;
  if (vocab == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: not a Hugging Face tokenizer.json with a model.vocab object "
                   "(BPE/WordPiece vocabularies are read)",
                   path);
      return NULL;
    }
  byte_level = dw_tokenizer_uses_byte_level (root);
  members = json_object_get_members (vocab);
  for (GList *link = members; link; link = link->next)
    {
      JsonNode *count = json_object_get_member (vocab, link->data);
      if (JSON_NODE_HOLDS_VALUE (count) && json_node_get_value_type (count) == G_TYPE_INT64)
        dw_tokenizer_set_piece (self, json_node_get_int (count), link->data, byte_level, FALSE);
    }
  g_list_free (members);
  added = json_object_get_member (root, "added_tokens");
  if (added && JSON_NODE_HOLDS_ARRAY (added))
    {
      JsonArray *added_array = json_node_get_array (added);
      for (guint index = 0; index < json_array_get_length (added_array); index++)
        {
          JsonNode *element = json_array_get_element (added_array, index);
          JsonObject *o = JSON_NODE_HOLDS_OBJECT (element) ? json_node_get_object (element) : NULL;
          if (o && json_object_has_member (o, "id") && json_object_has_member (o, "content"))
            dw_tokenizer_set_piece (self, json_object_get_int_member (o, "id"),
                                    json_object_get_string_member (o, "content"), byte_level, TRUE);
        }
    }
  return g_steal_pointer (&self);
}

DwTokenizer *
dw_tokenizer_load (const char *path, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();

  if (!json_parser_load_from_mapped_file (parser, path, error))
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  return dw_tokenizer_from_parser (parser, path, error);
}

DwTokenizer *
dw_tokenizer_load_from_data (const char *name, const char *data, gsize len, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();

  if (!json_parser_load_from_data (parser, data, (gssize)len, error))
    {
      g_prefix_error (error, "%s: ", name);
      return NULL;
    }
  return dw_tokenizer_from_parser (parser, name, error);
}

void
dw_tokenizer_free (DwTokenizer *self)
{
  if (self == NULL)
    return;
  g_ptr_array_unref (self->pieces);
  g_free (self);
}

guint
dw_tokenizer_get_size (const DwTokenizer *self)
{
  return self->pieces->len;
}

const GBytes *
dw_tokenizer_decode (const DwTokenizer *self, gint64 id)
{
  if (id < 0 || (guint64)id >= self->pieces->len)
    return NULL;
  return g_ptr_array_index (self->pieces, id);
}

char *
dw_tokenizer_display (const DwTokenizer *self, gint64 id)
{
  const GBytes *bytes = dw_tokenizer_decode (self, id);
  GString *text;
  const guint8 *position;
  gsize len, index = 0;

  if (bytes == NULL)
    return NULL;
  position = g_bytes_get_data ((GBytes *)bytes, &len);
  text = g_string_new (NULL);
  while (index < len)
    {
      gsize count = (gsize)g_utf8_skip[position[index]];
      if (position[index] == '\n')
        g_string_append (text, "\\n"), index++;
      else if (position[index] == '\t')
        g_string_append (text, "\\t"), index++;
      else if (position[index] == '\r')
        g_string_append (text, "\\r"), index++;
      else if (position[index] < 0x20 || position[index] == 0x7f)
        g_string_append_printf (text, "\\u%04x", position[index]), index++;
      else if (position[index] < 0x80)
        g_string_append_c (text, (char)position[index]), index++;
      else if (index + count <= len
               && g_utf8_validate ((const char *)position + index, (gssize)count, NULL))
        g_string_append_len (text, (const char *)position + index, (gssize)count), index += count;
      else
        g_string_append_printf (text, "\\x%02x", position[index]), index++;
    }
  return g_string_free (text, FALSE);
}
