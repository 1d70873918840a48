/* dw-config-export.c — correction configs written as verl YAML / Hydra overrides / slime flags
 * (read back by dw-config-import.c, scalar syntax in dw-config-syntax.c)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Values keep their Python type both ways: YAML plain scalars are resolved the way PyYAML's YAML
 * 1.1 resolver does (OmegaConf for verl additionally reads "1e-4" as a float; slime's
 * yaml.safe_load does not, so floats are always written with a '.' in the mantissa), Hydra values
 * by Hydra's override grammar (strings always quoted, so "2" stays a string and a comma list is
 * not a sweep).
 */
#include "config.h"

#include "dw-config-export.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>
#include <yaml.h>

#include "dw-config-json.h"
#include "dw-correction.h"
#include "dw-plan.h"
#include "dw-python.h"
#include "dw-config-syntax-private.h"
#include "dw-schema.h"

#define VERL_ENTRY "python3 -m verl.trainer.main_ppo"

/* the schema's key names of every generation, NULL-terminated (built once) */
const char *const *
dw_export_accepted_keys (DwGeneration gen)
{
  static const char *names[DW_N_GENERATIONS][DW_CONFIG_MAX_KEYS + 1];
  static const char *none[1] = { NULL };
  static gsize initialised;
  if (g_once_init_enter (&initialised))
    {
      for (int generation = 0; generation < DW_N_GENERATIONS; generation++)
        {
          const DwSchema *schema = dw_schema_get ((DwGeneration)generation);
          gsize count = MIN (schema->n_keys, (gsize)DW_CONFIG_MAX_KEYS);
          for (gsize index = 0; index < count; index++)
            names[generation][index] = schema->keys[index].name;
          names[generation][count] = NULL;
        }
      g_once_init_leave (&initialised, 1);
    }
  return (int)gen >= 0 && gen < DW_N_GENERATIONS ? names[gen] : none;
}

gboolean
dw_export_key_accepted (DwGeneration gen, const char *key)
{
  for (const char *const *k = dw_export_accepted_keys (gen); *k; k++)
    if (strcmp (*k, key) == 0)
      return TRUE;
  return FALSE;
}

const char *
dw_export_section (DwGeneration gen)
{
  const DwGenerationInfo *info = dw_generation_info (gen);
  switch (info ? info->family : DW_FAMILY_SLIME)
    {
    case DW_FAMILY_SLIME:
      return "";
    case DW_FAMILY_VERL_MISMATCH:
      return "algorithm";
    default:
      return "algorithm.rollout_correction";
    }
}

gboolean
dw_export_format_supported (DwGeneration gen, DwExportFormat format)
{
  return !(gen == DW_GEN_SLIME && format == DW_EXPORT_FORMAT_HYDRA);
}

/* ------------------------------------------------------------------------------------------ */
/* scalar resolution                                                                            */

/* ------------------------------------------------------------------------------------------ */
/* rendering                                                                                    */

/* repr() of a float, with a '.' in the mantissa so that PyYAML reads it back as a float. */
static void
dw_config_export_append_float (GString *out, double f, gboolean yaml)
{
  char buf[64];
  if (isnan (f))
    g_string_append (out, yaml ? ".nan" : "nan");
  else if (isinf (f))
    g_string_append (out, f > 0 ? (yaml ? ".inf" : "inf") : (yaml ? "-.inf" : "-inf"));
  else
    {
      dw_python_float_repr (f, buf, sizeof buf);
      char *exponent = strchr (buf, 'e');
      if (yaml && exponent && !memchr (buf, '.', exponent - buf))
        {
          g_string_append_len (out, buf, exponent - buf);
          g_string_append (out, ".0");
          g_string_append (out, exponent);
        }
      else
        g_string_append (out, buf);
    }
}

static gboolean
dw_config_export_has_control (const char *s)
{
  for (const unsigned char *cursor = (const unsigned char *)s; *cursor; cursor++)
    if (*cursor < 0x20 || *cursor == 0x7f)
      return TRUE;
  return FALSE;
}

/* None, bools, ints and floats, written alike in YAML and Hydra overrides (floats as
 * dw_config_export_append_float); FALSE, writing nothing, for strings. */
static gboolean
dw_config_export_append_scalar (GString *out, const DwValue *v, gboolean yaml)
{
  switch (v->kind)
    {
    case DW_VALUE_NONE:
      g_string_append (out, "null");
      return TRUE;
    case DW_VALUE_BOOL:
      g_string_append (out, v->b ? "true" : "false");
      return TRUE;
    case DW_VALUE_INT:
      g_string_append_printf (out, "%" G_GINT64_FORMAT, (gint64)v->i);
      return TRUE;
    case DW_VALUE_FLOAT:
      dw_config_export_append_float (out, v->f, yaml);
      return TRUE;
    default:
      return FALSE;
    }
}

static void
dw_config_export_append_yaml_value (GString *out, const DwValue *v)
{
  DwValue back;
  double num;

  if (dw_config_export_append_scalar (out, v, TRUE))
    return;
  /* plain only when it reads back as this very string under both resolvers */
  if (dw_config_syntax_regex_match ("^[A-Za-z_][A-Za-z0-9_.,-]*$", v->s)
      && !dw_python_float (v->s, &num) && dw_config_syntax_resolve_yaml_plain (v->s, TRUE, &back)
      && back.kind == DW_VALUE_STR && dw_config_syntax_resolve_yaml_plain (v->s, FALSE, &back)
      && back.kind == DW_VALUE_STR)
    g_string_append (out, v->s);
  else if (dw_config_export_has_control (v->s))
    {
      /* double-quoted: the only YAML style that keeps newlines and tabs as they are */
      g_string_append_c (out, '"');
      for (const unsigned char *cursor = (const unsigned char *)v->s; *cursor; cursor++)
        {
          if (*cursor == '"' || *cursor == '\\')
            g_string_append_printf (out, "\\%c", *cursor);
          else if (*cursor < 0x20 || *cursor == 0x7f)
            g_string_append_printf (out, "\\x%02x", *cursor);
          else
            g_string_append_c (out, (char)*cursor);
        }
      g_string_append_c (out, '"');
    }
  else
    {
      g_string_append_c (out, '\'');
      for (const char *cursor = v->s; *cursor; cursor++)
        {
          if (*cursor == '\'')
            g_string_append_c (out, '\'');
          g_string_append_c (out, *cursor);
        }
      g_string_append_c (out, '\'');
    }
}

static void
dw_config_export_append_hydra_value (GString *out, const DwValue *v)
{
  if (dw_config_export_append_scalar (out, v, FALSE))
    return;
  g_string_append_c (out, '\'');
  for (const char *cursor = v->s; *cursor; cursor++)
    {
      if (*cursor == '\'' || *cursor == '\\')
        g_string_append_c (out, '\\');
      g_string_append_c (out, *cursor);
    }
  g_string_append_c (out, '\'');
}

/* Shell word for an override: bare when safe, "…" when that needs no escapes, else '…'. */
static void
dw_config_export_append_shell_word (GString *out, const char *w)
{
  if (dw_config_syntax_regex_match ("^[A-Za-z0-9_.,=+:/@-]+$", w))
    g_string_append (out, w);
  else if (!strpbrk (w, "\"$`\\!"))
    g_string_append_printf (out, "\"%s\"", w);
  else
    {
      g_autofree char *quoted = g_shell_quote (w);
      g_string_append (out, quoted);
    }
}

static gboolean
dw_config_export_check (const DwConfig *config, GError **error)
{
  const char *gen = dw_generation_name (config->generation);
  if (gen == NULL)
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT, _ ("unknown generation"));
      return FALSE;
    }
  for (size_t index = 0; index < config->n_keys; index++)
    {
      if (strcmp (config->keys[index], "preset") == 0)
        continue; /* refused by the check below with verl's message */
      if (!dw_export_key_accepted (config->generation, config->keys[index]))
        {
          g_autofree char *accepted
            = g_strjoinv (", ", (char **)dw_export_accepted_keys (config->generation));
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                       _ ("%s does not accept the key '%s' (accepted: %s)"), gen,
                       config->keys[index], accepted);
          return FALSE;
        }
      if (config->values[index].kind == DW_VALUE_OTHER)
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                       _ ("%s: the value %s of '%s' is not a number, string, bool or null"), gen,
                       config->values[index].s, config->keys[index]);
          return FALSE;
        }
    }
  DwCorrectionError config_error;
  if (!dw_correction_check_config (config, &config_error))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                   _ ("%s would reject this config: %s: %s"), gen,
                   dw_error_kind_name (config_error.kind), config_error.message);
      return FALSE;
    }
  return TRUE;
}

/* whether @config (valid) runs slime's built-in TIS or IcePop rather than mis.py */
static gboolean
dw_config_export_slime_builtin (const DwConfig *config)
{
  DwPlan plan;
  DwCorrectionError error;
  return config->generation == DW_GEN_SLIME && dw_plan_build (config, &plan, &error)
         && (plan.path == DW_PATH_SLIME_VANILLA || plan.path == DW_PATH_SLIME_ICEPOP);
}

/* whether the path @config runs reads @key: the built-in paths are flags, mis.py reads mis.yaml
 * (and --use-tis, --calculate-per-token-loss) */
static gboolean
dw_config_export_slime_key_read (gboolean builtin, const char *key)
{
  const DwSchemaKey *flag = dw_config_syntax_slime_flag (key);
  if (builtin)
    return flag != NULL;
  return flag == NULL || !dw_config_syntax_slime_builtin_only (flag);
}

gboolean
dw_export_key_read (const DwConfig *config, const char *key)
{
  if (!dw_export_key_accepted (config->generation, key))
    return FALSE;
  return config->generation != DW_GEN_SLIME
         || dw_config_export_slime_key_read (dw_config_export_slime_builtin (config), key);
}

/* a slime config names only keys its path reads */
static gboolean
dw_config_export_check_slime_keys (const DwConfig *config, GError **error)
{
  const gboolean builtin = dw_config_export_slime_builtin (config);
  for (size_t index = 0; index < config->n_keys; index++)
    {
      const char *key = config->keys[index];
      const DwSchemaKey *flag = dw_config_syntax_slime_flag (key);
      if (dw_config_export_slime_key_read (builtin, key))
        continue;
      if (builtin)
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                       _ ("slime's built-in TIS has no flag for '%s' (a mis.py key): set "
                          "tis_function to mis, or drop the key"),
                       key);
          return FALSE;
        }
      else
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                       _ ("'%s' is read only by slime's built-in TIS (%s); mis.py's bounds are "
                          "tis_lower_bound and tis_upper_bound"),
                       key, flag->slime_flag);
          return FALSE;
        }
    }
  return TRUE;
}

/* slime's built-in TIS / IcePop as the flags slime's argument parser takes */
static gboolean
dw_config_export_append_slime_flags (GString *out, const DwConfig *config, GError **error)
{
  g_autoptr (GString) flags = g_string_new (NULL);
  const DwSchemaKey *keys[DW_CONFIG_MAX_KEYS];
  const gsize n_keys = dw_config_syntax_slime_flag_keys (keys, G_N_ELEMENTS (keys));
  for (gsize index = 0; index < n_keys; index++)
    {
      const char *flag = keys[index]->slime_flag;
      const DwValue *value = dw_config_get (config, keys[index]->name);
      if (value == NULL)
        continue;
      if (dw_schema_flag_store_true (keys[index]))
        {
          if (dw_value_truthy (value))
            g_string_append_printf (flags, "%s%s", flags->len ? " " : "", flag);
          continue;
        }
      /* the function's name is a dotted module path (slime's load_function) */
      if (keys[index]->role == DW_ROLE_FUNCTION)
        {
          if (value->kind == DW_VALUE_STR && strcmp (value->s, "icepop") == 0)
            g_string_append_printf (flags, "%s%s " DW_CONFIG_SLIME_ICEPOP_FUNCTION,
                                    flags->len ? " " : "", flag);
          continue; /* vanilla is slime's default function */
        }
      if (value->kind != DW_VALUE_INT && value->kind != DW_VALUE_FLOAT)
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                       _ ("slime's %s takes a number (argparse type=float), not %s"), flag,
                       value->kind == DW_VALUE_STR ? value->s : "this value");
          return FALSE;
        }
      char number[64];
      if (value->kind == DW_VALUE_INT)
        g_snprintf (number, sizeof number, "%" G_GINT64_FORMAT, (gint64)value->i);
      else
        dw_python_float_repr (value->f, number, sizeof number);
      g_string_append_printf (flags, "%s%s %s", flags->len ? " " : "", flag, number);
    }
  g_string_append_printf (out,
                          "# slime's built-in TIS (slime/backends/megatron_utils/loss.py)\n"
                          "SLIME_TIS_ARGS=(%s)\n"
                          "# then add \"${SLIME_TIS_ARGS[@]}\" to the slime command line\n",
                          flags->str);
  return TRUE;
}

/* the store_true flags mis.py's path reads beside its YAML (--use-tis, which turns slime's TIS
 * hook on, and --calculate-per-token-loss), each when its value or default is true */
static void
dw_config_export_append_mis_switches (GString *out, const DwConfig *config)
{
  const DwSchemaKey *keys[DW_CONFIG_MAX_KEYS];
  const gsize n_keys = dw_config_syntax_slime_flag_keys (keys, G_N_ELEMENTS (keys));
  for (gsize index = 0; index < n_keys; index++)
    {
      if (!dw_schema_flag_store_true (keys[index]))
        continue;
      DwValue value = dw_schema_value (config, keys[index]->name);
      if (dw_value_truthy (&value))
        g_string_append_printf (out, "%s ", keys[index]->slime_flag);
    }
}

static void
dw_config_export_append_yaml (GString *out, const DwConfig *config)
{
  const DwGeneration gen = config->generation;
  const char *indent = "";
  if (gen == DW_GEN_SLIME)
    g_string_append (out,
                     "# slime: --custom-config-path YAML for " DW_CONFIG_SLIME_MIS_FUNCTION "\n");
  else if (dw_generation_info (gen)->family == DW_FAMILY_VERL_MISMATCH)
    {
      g_string_append_printf (out, "# %s (mismatch_helper): keys under algorithm\nalgorithm:\n",
                              dw_generation_name (gen));
      indent = "  ";
    }
  else
    {
      g_string_append_printf (out,
                              "# %s: algorithm.rollout_correction\nalgorithm:\n"
                              "  rollout_correction:\n",
                              dw_generation_name (gen));
      indent = "    ";
    }
  for (const char *const *k = dw_export_accepted_keys (gen); *k; k++)
    {
      const DwValue *value = dw_config_get (config, *k);
      if (value == NULL)
        continue;
      /* mis.yaml holds mis.py's keys; the flags of slime's parser are not in it */
      const DwSchemaKey *flag = gen == DW_GEN_SLIME ? dw_config_syntax_slime_flag (*k) : NULL;
      if (flag && !dw_config_syntax_slime_flag_in_yaml (flag))
        continue;
      g_string_append_printf (out, "%s%s: ", indent, *k);
      dw_config_export_append_yaml_value (out, value);
      g_string_append_c (out, '\n');
    }
}

static GPtrArray *
dw_config_export_hydra_overrides (const DwConfig *config)
{
  GPtrArray *overrides = g_ptr_array_new_with_free_func (g_free);
  for (const char *const *k = dw_export_accepted_keys (config->generation); *k; k++)
    {
      const DwValue *value = dw_config_get (config, *k);
      if (value == NULL)
        continue;
      GString *output = g_string_new (dw_export_section (config->generation));
      g_string_append_printf (output, ".%s=", *k);
      dw_config_export_append_hydra_value (output, value);
      g_ptr_array_add (overrides, g_string_free (output, FALSE));
    }
  return overrides;
}

char *
dw_config_export (const DwConfig *config, DwExportFormat format, GError **error)
{
  if (!dw_config_export_check (config, error))
    return NULL;
  const DwGeneration gen = config->generation;
  if (!dw_export_format_supported (gen, format) || dw_export_format_name (format) == NULL)
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                   _ ("slime takes no Hydra overrides: use --format args (flags and the "
                      "--custom-config-path YAML) or --format yaml"));
      return NULL;
    }
  /* Hydra overrides (also inside the verl command line) are one line each */
  gboolean one_line
    = format == DW_EXPORT_FORMAT_HYDRA || (format == DW_EXPORT_FORMAT_ARGS && gen != DW_GEN_SLIME);
  for (size_t index = 0; one_line && index < config->n_keys; index++)
    if (config->values[index].kind == DW_VALUE_STR
        && dw_config_export_has_control (config->values[index].s))
      {
        g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                     _ ("the value of '%s' contains a control character (newline, tab…): Hydra "
                        "overrides cannot carry it, use --format yaml"),
                     config->keys[index]);
        return NULL;
      }
  if (gen == DW_GEN_SLIME && !dw_config_export_check_slime_keys (config, error))
    return NULL;
  if (dw_config_export_slime_builtin (config))
    {
      if (format != DW_EXPORT_FORMAT_ARGS)
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                       _ ("slime's built-in TIS is set by command-line flags (--use-tis, "
                          "--tis-clip, --tis-clip-low, --custom-tis-function-path), not a YAML "
                          "file: use --format args"));
          return NULL;
        }
      GString *flags = g_string_new (NULL);
      if (!dw_config_export_append_slime_flags (flags, config, error))
        {
          g_string_free (flags, TRUE);
          return NULL;
        }
      return g_string_free (flags, FALSE);
    }
  GString *out = g_string_new (NULL);
  if (format == DW_EXPORT_FORMAT_YAML)
    dw_config_export_append_yaml (out, config);
  else if (format == DW_EXPORT_FORMAT_HYDRA)
    {
      g_autoptr (GPtrArray) l = dw_config_export_hydra_overrides (config);
      for (guint index = 0; index < l->len; index++)
        g_string_append_printf (out, "%s\n", (char *)l->pdata[index]);
    }
  else if (gen == DW_GEN_SLIME)
    {
      g_string_append (out, "cat > mis.yaml <<'EOF'\n");
      dw_config_export_append_yaml (out, config);
      g_string_append (out, "EOF\nSLIME_MIS_ARGS=(");
      dw_config_export_append_mis_switches (out, config);
      g_string_append (
        out,
        "--custom-config-path mis.yaml --custom-tis-function-path " DW_CONFIG_SLIME_MIS_FUNCTION
        ")\n"
        "# then add \"${SLIME_MIS_ARGS[@]}\" to the slime command line\n");
    }
  else
    {
      g_autoptr (GPtrArray) l = dw_config_export_hydra_overrides (config);
      g_string_append (out, VERL_ENTRY);
      for (guint index = 0; index < l->len; index++)
        {
          g_string_append (out, " \\\n    ");
          dw_config_export_append_shell_word (out, l->pdata[index]);
        }
      g_string_append_c (out, '\n');
    }
  return g_string_free (out, FALSE);
}

/* ------------------------------------------------------------------------------------------ */
/* import                                                                                       */

/* ------------------------------------------------------------------------------------------ */
/* GUI entry points                                                                             */

char *
dw_config_export_string (const char *config_json, const char *target, const char *format,
                         GError **error)
{
  DwGeneration gen = DW_GEN_VERL_LATEST;
  DwExportFormat fmt = DW_EXPORT_FORMAT_YAML;
  if (!dw_config_syntax_parse_target (target, format, &gen, &fmt, error))
    return NULL;
  DwConfig config;
  dw_config_init (&config, gen);
  if (!dw_config_merge_json (&config, config_json, error))
    return NULL;
  return dw_config_export (&config, fmt, error);
}
