/* dw-config-json.c — GLib/json-glib glue for correction configs and results
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dw-config-json.h"
#include "dw-json-scan.h"
#include "dw-schema.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK (dw-config-json-error-quark, dw_config_json_error)
/* clang-format on */

static gboolean
dw_config_json_value_from_node (JsonNode *node, DwValue *value)
{
  if (JSON_NODE_HOLDS_NULL (node))
    *value = dw_value_none ();
  else if (JSON_NODE_HOLDS_VALUE (node))
    {
      GType type = json_node_get_value_type (node);
      if (type == G_TYPE_BOOLEAN)
        *value = dw_value_bool (json_node_get_boolean (node));
      else if (type == G_TYPE_INT64)
        *value = dw_value_int (json_node_get_int (node));
      else if (type == G_TYPE_DOUBLE)
        *value = dw_value_float (json_node_get_double (node));
      else
        {
          const char *text = json_node_get_string (node);
          if (strlen (text) >= DW_VALUE_STR_MAX)
            return FALSE;
          *value = dw_value_str (text);
        }
    }
  else
    {
      g_autofree char *text = json_to_string (node, FALSE);
      *value = dw_value_none ();
      value->kind = DW_VALUE_OTHER;
      g_strlcpy (value->s, text, sizeof value->s);
    }
  return TRUE;
}

static gboolean
dw_config_json_apply_preset (DwConfig *config, const DwValue *value, GError **error)
{
  DwCorrectionError problem;
  if (value->kind != DW_VALUE_STR || !dw_preset_apply (config, value->s, &problem))
    {
      g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PRESET,
                   "unknown preset %s for generation %s",
                   value->kind == DW_VALUE_STR ? value->s : "?",
                   dw_generation_name (config->generation));
      return FALSE;
    }
  return TRUE;
}

static gboolean
dw_config_json_set_key (DwConfig *config, const char *key, const DwValue *value, GError **error)
{
  if (g_str_equal (key, "preset"))
    return dw_config_json_apply_preset (config, value, error);
  if (!dw_config_set (config, key, value))
    {
      g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_KEY,
                   "config key '%s': too long or too many keys", key);
      return FALSE;
    }
  return TRUE;
}

/* verl's Hydra refuses a key its config does not have ("Key '…' is not in struct"), slime's
 * argparse an option it does not define; a key the generation's schema lacks is refused the same
 * way, naming the key, the generation and the keys it accepts */
static gboolean
dw_config_json_key_known (const DwConfig *config, const char *key, GError **error)
{
  if (g_str_equal (key, "preset") || dw_schema_find (config->generation, key) != NULL)
    return TRUE;
  const DwSchema *schema = dw_schema_get (config->generation);
  g_autoptr (GString) accepted = g_string_new (NULL);
  for (size_t index = 0; schema && index < schema->n_keys; index++)
    g_string_append_printf (accepted, "%s%s", index ? ", " : "", schema->keys[index].name);
  g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_UNKNOWN_KEY,
               "config JSON: %s has no config key '%s' (Key '%s' is not in struct); accepted: %s",
               dw_generation_name (config->generation), key, key, accepted->str);
  return FALSE;
}

static gboolean dw_config_json_merge (DwConfig *config, const char *json, gboolean strict,
                                      GError **error);

gboolean
dw_config_merge_json (DwConfig *config, const char *json, GError **error)
{
  return dw_config_json_merge (config, json, TRUE, error);
}

gboolean
dw_config_merge_json_lenient (DwConfig *config, const char *json, GError **error)
{
  return dw_config_json_merge (config, json, FALSE, error);
}

/* a config file is small: anything larger is not one (and is not read into memory) */
#define DW_CONFIG_JSON_FILE_MAX (1024 * 1024)

char *
dw_config_json_arg_text (const char *argument, gboolean *from_file, GError **error)
{
  /* a regular file, or a name that says it is one; anything else is the JSON text itself */
  *from_file
    = g_file_test (argument, G_FILE_TEST_IS_REGULAR) || g_str_has_suffix (argument, ".json");
  if (!*from_file)
    return g_strdup (argument);
  if (!g_file_test (argument, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PARSE,
                   "%s: no such regular file", argument);
      return NULL;
    }
  g_autofree char *text = NULL;
  gsize length = 0;
  g_autoptr (GError) local = NULL;
  if (!g_file_get_contents (argument, &text, &length, &local))
    {
      g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PARSE, "%s: %s", argument,
                   local->message);
      return NULL;
    }
  if (length > DW_CONFIG_JSON_FILE_MAX || strlen (text) != length)
    {
      g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PARSE,
                   length > DW_CONFIG_JSON_FILE_MAX ? "%s: larger than 1 MiB, not a config"
                                                    : "%s: holds a NUL byte, not a JSON config",
                   argument);
      return NULL;
    }
  return g_steal_pointer (&text);
}

gboolean
dw_config_merge_json_arg (DwConfig *config, const char *argument, GError **error)
{
  gboolean from_file = FALSE;
  g_autofree char *text = dw_config_json_arg_text (argument, &from_file, error);
  if (text == NULL)
    return FALSE;
  g_autoptr (GError) local = NULL;
  if (!dw_config_json_merge (config, text, TRUE, &local))
    {
      /* a file's name first: "FILE: config JSON: offset 40: key “x” appears twice …" */
      if (from_file)
        g_set_error (error, DW_CONFIG_JSON_ERROR, local->code, "%s: %s", argument, local->message);
      else
        g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  return TRUE;
}

static gboolean
dw_config_json_merge (DwConfig *config, const char *json, gboolean strict, GError **error)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) perr = NULL;
  if (!dw_json_load (p, json, -1, &perr))
    {
      g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PARSE, "config JSON: %s",
                   perr->message);
      return FALSE;
    }
  JsonNode *root = json_parser_get_root (p);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PARSE,
                   "config JSON: expected an object");
      return FALSE;
    }
  JsonObject *object = json_node_get_object (root);
  if (json_object_has_member (object, "preset"))
    {
      DwValue value;
      if (!dw_config_json_value_from_node (json_object_get_member (object, "preset"), &value)
          || !dw_config_json_apply_preset (config, &value, error))
        {
          if (error && !*error)
            g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PRESET, "bad preset");
          return FALSE;
        }
    }
  g_autoptr (GList) keys = json_object_get_members (object);
  for (GList *member = keys; member; member = member->next)
    {
      if (g_str_equal (member->data, "preset"))
        continue;
      if (strict && !dw_config_json_key_known (config, member->data, error))
        return FALSE;
      DwValue value;
      if (!dw_config_json_value_from_node (json_object_get_member (object, member->data), &value))
        {
          g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PARSE,
                       "config key '%s': value too long", (char *)member->data);
          return FALSE;
        }
      if (!dw_config_json_set_key (config, member->data, &value, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
dw_config_set_assignment (DwConfig *config, const char *assignment, GError **error)
{
  const char *equals = strchr (assignment, '=');
  if (!equals || equals == assignment)
    {
      g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PARSE,
                   "--set '%s': expected KEY=VALUE", assignment);
      return FALSE;
    }
  g_autofree char *key = g_strndup (assignment, equals - assignment);
  const char *value_text = equals + 1;
  DwValue value;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonNode *root = NULL;
  if (*value_text && dw_json_load (parser, value_text, -1, NULL))
    root = json_parser_get_root (parser);
  if (root && dw_config_json_value_from_node (root, &value))
    ;
  else if (strlen (value_text) < DW_VALUE_STR_MAX)
    value = dw_value_str (value_text);
  else
    {
      g_set_error (error, DW_CONFIG_JSON_ERROR, DW_CONFIG_JSON_ERROR_PARSE,
                   "--set %s: value too long", key);
      return FALSE;
    }
  return dw_config_json_set_key (config, key, &value, error);
}

void
dw_json_append_string (GString *out, const char *s)
{
  const char *end = s + strlen (s);

  g_string_append_c (out, '"');
  for (const char *cursor = s; *cursor;)
    {
      unsigned char byte = (unsigned char)*cursor;
      gunichar character;

      if (byte == '"' || byte == '\\')
        g_string_append_printf (out, "\\%c", byte);
      else if (byte < 0x20)
        g_string_append_printf (out, "\\u%04x", byte);
      else if (byte < 0x80)
        g_string_append_c (out, (char)byte);
      else if ((character = g_utf8_get_char_validated (cursor, end - cursor)) < 0x110000)
        {
          /* a valid UTF-8 sequence, copied whole */
          const char *next = g_utf8_next_char (cursor);
          g_string_append_len (out, cursor, next - cursor);
          cursor = next;
          continue;
        }
      else
        /* a byte that is not UTF-8 (a run folder named in Latin-1): JSON text must be UTF-8,
         * so it becomes U+FFFD, as Python's errors="replace" does */
        g_string_append (out, "\\ufffd");
      cursor++;
    }
  g_string_append_c (out, '"');
}

void
dw_json_append_number (GString *out, double v)
{
  if (isnan (v))
    g_string_append (out, "\"nan\"");
  else if (isinf (v))
    g_string_append (out, v > 0 ? "\"inf\"" : "\"-inf\"");
  else
    {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd (buf, sizeof buf, "%.17g", v);
      g_string_append (out, buf);
    }
}

void
dw_json_append_value (GString *out, const DwValue *value)
{
  char buf[64];
  switch (value->kind)
    {
    case DW_VALUE_NONE:
      g_string_append (out, "null");
      break;
    case DW_VALUE_BOOL:
      g_string_append (out, value->b ? "true" : "false");
      break;
    case DW_VALUE_INT:
      g_string_append_printf (out, "%" G_GINT64_FORMAT, (gint64)value->i);
      break;
    case DW_VALUE_FLOAT:
      if (isfinite (value->f))
        g_string_append (out, dw_python_float_repr (value->f, buf, sizeof buf));
      else
        dw_json_append_number (out, value->f);
      break;
    case DW_VALUE_STR:
      dw_json_append_string (out, value->s);
      break;
    case DW_VALUE_OTHER:
    default:
      g_string_append (out, value->s); /* already JSON */
      break;
    }
}

void
dw_json_append_config (GString *out, const DwConfig *config)
{
  g_string_append_c (out, '{');
  for (size_t index = 0; index < config->n_keys; index++)
    {
      if (index)
        g_string_append (out, ", ");
      dw_json_append_string (out, config->keys[index]);
      g_string_append (out, ": ");
      dw_json_append_value (out, &config->values[index]);
    }
  g_string_append_c (out, '}');
}

void
dw_json_append_metrics (GString *out, const DwCorrectionResult *result)
{
  g_string_append_c (out, '{');
  for (size_t index = 0; index < result->n_metrics; index++)
    {
      if (index)
        g_string_append (out, ", ");
      dw_json_append_string (out, result->metrics[index].key);
      g_string_append (out, ": ");
      dw_json_append_number (out, result->metrics[index].value);
    }
  g_string_append_c (out, '}');
}

static double
dw_json_element (const void *data, DwDType dtype, size_t index)
{
  switch (dtype)
    {
    case DW_DTYPE_F32:
      return ((const float *)data)[index];
    case DW_DTYPE_F64:
      return ((const double *)data)[index];
    case DW_DTYPE_BOOL:
    case DW_DTYPE_U8:
      return ((const guint8 *)data)[index];
    case DW_DTYPE_I8:
      return ((const gint8 *)data)[index];
    case DW_DTYPE_I16:
      return ((const gint16 *)data)[index];
    case DW_DTYPE_U16:
      return ((const guint16 *)data)[index];
    case DW_DTYPE_I32:
      return ((const gint32 *)data)[index];
    case DW_DTYPE_U32:
      return ((const guint32 *)data)[index];
    case DW_DTYPE_I64:
      return (double)((const gint64 *)data)[index];
    case DW_DTYPE_U64:
      return (double)((const guint64 *)data)[index];
    default:
      return NAN;
    }
}

void
dw_json_append_array (GString *out, const void *data, DwDType dtype, size_t rows, size_t cols)
{
  g_string_append_c (out, '[');
  for (size_t row = 0; row < rows; row++)
    {
      g_string_append (out, row ? ", [" : "[");
      for (size_t col = 0; col < cols; col++)
        {
          if (col)
            g_string_append (out, ", ");
          double value = dw_json_element (data, dtype, row * cols + col);
          if (dtype == DW_DTYPE_BOOL)
            g_string_append (out, value != 0 ? "true" : "false");
          else
            dw_json_append_number (out, value);
        }
      g_string_append_c (out, ']');
    }
  g_string_append_c (out, ']');
}

void
dw_json_append_error (GString *out, const DwCorrectionError *error)
{
  if (!error || error->kind == DW_ERROR_NONE)
    {
      g_string_append (out, "null");
      return;
    }
  g_string_append (out, "{\"type\": ");
  dw_json_append_string (out, dw_error_kind_name (error->kind));
  g_string_append (out, ", \"message\": ");
  dw_json_append_string (out, error->message);
  g_string_append_c (out, '}');
}
