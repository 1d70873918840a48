/* dw-config-export.c — correction configs to and from verl YAML / Hydra overrides / slime flags
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
#include "dw-schema.h"

G_DEFINE_QUARK (dw - export - error - quark, dw_export_error)

/* the --custom-tis-function-path of slime's mis.py and of its built-in IcePop (load_function
 * takes a dotted module path) */
#define SLIME_TIS_FUNCTION    "examples.train_infer_mismatch_helper.mis.compute_mis_weights_with_cp"
#define SLIME_ICEPOP_FUNCTION "slime.backends.megatron_utils.loss.icepop_function"

/* slime's built-in TIS keys are command-line flags (slime/utils/arguments.py) */
typedef struct
{
  const char *key, *flag;
  gboolean store_true; /* action="store_true": no value */
} SlimeFlag;

static const SlimeFlag slime_flags[] = {
  { "use_tis", "--use-tis", TRUE },
  { "tis_clip", "--tis-clip", FALSE },
  { "tis_clip_low", "--tis-clip-low", FALSE },
  { "calculate_per_token_loss", "--calculate-per-token-loss", TRUE },
  { "tis_function", "--custom-tis-function-path", FALSE },
};

static const SlimeFlag *
slime_flag_of_key (const char *key)
{
  for (gsize i = 0; i < G_N_ELEMENTS (slime_flags); i++)
    if (strcmp (slime_flags[i].key, key) == 0)
      return &slime_flags[i];
  return NULL;
}
#define VERL_ENTRY "python3 -m verl.trainer.main_ppo"

static const char *const format_names[DW_N_EXPORT_FORMATS] = { "yaml", "hydra", "args" };

const char *
dw_export_format_name (DwExportFormat format)
{
  return (int)format >= 0 && format < DW_N_EXPORT_FORMATS ? format_names[format] : NULL;
}

gboolean
dw_export_format_from_name (const char *name, DwExportFormat *out)
{
  for (int f = 0; name && f < DW_N_EXPORT_FORMATS; f++)
    if (strcmp (name, format_names[f]) == 0)
      {
        *out = (DwExportFormat)f;
        return TRUE;
      }
  return FALSE;
}

/* the schema's key names of every generation, NULL-terminated (built once) */
const char *const *
dw_export_accepted_keys (DwGeneration gen)
{
  static const char *names[DW_N_GENERATIONS][DW_CONFIG_MAX_KEYS + 1];
  static const char *none[1] = { NULL };
  static gsize initialised;
  if (g_once_init_enter (&initialised))
    {
      for (int g = 0; g < DW_N_GENERATIONS; g++)
        {
          const DwSchema *schema = dw_schema_get ((DwGeneration)g);
          gsize n = MIN (schema->n_keys, (gsize)DW_CONFIG_MAX_KEYS);
          for (gsize i = 0; i < n; i++)
            names[g][i] = schema->keys[i].name;
          names[g][n] = NULL;
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

static gboolean
regex_match (const char *pattern, const char *s)
{
  return g_regex_match_simple (pattern, s, 0, 0);
}

/* PyYAML's float literal with the '_' digit separators removed, as float(). */
static double
parse_float (const char *s)
{
  g_autoptr (GString) t = g_string_new (NULL);
  for (const char *p = s; *p; p++)
    if (*p != '_')
      g_string_append_c (t, *p);
  const char *q = t->str;
  gboolean neg = *q == '-';
  if (*q == '-' || *q == '+')
    q++;
  if (g_ascii_strcasecmp (q, ".inf") == 0 || g_ascii_strcasecmp (q, "inf") == 0)
    return neg ? -INFINITY : INFINITY;
  if (g_ascii_strcasecmp (q, ".nan") == 0 || g_ascii_strcasecmp (q, "nan") == 0)
    return NAN;
  return g_ascii_strtod (t->str, NULL);
}

static gboolean
parse_int (const char *s, DwValue *v)
{
  g_autoptr (GString) t = g_string_new (NULL);
  for (const char *p = s; *p; p++)
    if (*p != '_')
      g_string_append_c (t, *p);
  gint64 i;
  if (!g_ascii_string_to_signed (t->str[0] == '+' ? t->str + 1 : t->str, 10, G_MININT64, G_MAXINT64,
                                 &i, NULL))
    return FALSE;
  *v = dw_value_int (i);
  return TRUE;
}

/* A YAML 1.1 plain scalar as PyYAML's SafeLoader resolves it; @omegaconf adds OmegaConf's float
 * form without a '.' ("1e-4"). Returns FALSE when a string is too long for a DwValue. */
static gboolean
resolve_yaml_plain (const char *s, gboolean omegaconf, DwValue *v)
{
  if (*s == '\0' || strcmp (s, "~") == 0 || regex_match ("^(null|Null|NULL)$", s))
    *v = dw_value_none ();
  else if (regex_match ("^(true|True|TRUE|yes|Yes|YES|on|On|ON)$", s))
    *v = dw_value_bool (TRUE);
  else if (regex_match ("^(false|False|FALSE|no|No|NO|off|Off|OFF)$", s))
    *v = dw_value_bool (FALSE);
  else if (regex_match ("^[-+]?(0|[1-9][0-9_]*)$", s) && parse_int (s, v))
    ;
  else if (regex_match ("^([-+]?[0-9][0-9_]*\\.[0-9_]*([eE][-+][0-9]+)?"
                        "|\\.[0-9][0-9_]*([eE][-+][0-9]+)?"
                        "|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$",
                        s)
           || (omegaconf && regex_match ("^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$", s)))
    *v = dw_value_float (parse_float (s));
  else if (strlen (s) < DW_VALUE_STR_MAX)
    *v = dw_value_str (s);
  else
    return FALSE;
  return TRUE;
}

/* A Hydra override value (the part after '='). Returns FALSE on an unterminated quote; *too_long
 * when a string does not fit. */
static gboolean
resolve_hydra (const char *raw, DwValue *v, gboolean *too_long)
{
  g_autofree char *s = g_strstrip (g_strdup (raw));
  gsize n = strlen (s);
  *too_long = FALSE;
  if (n && (s[0] == '\'' || s[0] == '"'))
    {
      char q = s[0];
      g_autoptr (GString) out = g_string_new (NULL);
      gsize i = 1;
      for (; i < n && s[i] != q; i++)
        {
          if (s[i] == '\\' && i + 1 < n && (s[i + 1] == q || s[i + 1] == '\\'))
            i++;
          g_string_append_c (out, s[i]);
        }
      if (i != n - 1)
        return FALSE;
      if (out->len >= DW_VALUE_STR_MAX)
        {
          *too_long = TRUE;
          return FALSE;
        }
      *v = dw_value_str (out->str);
      return TRUE;
    }
  if (n && (s[0] == '[' || s[0] == '{'))
    {
      *v = dw_value_none ();
      v->kind = DW_VALUE_OTHER;
      g_strlcpy (v->s, s, sizeof v->s);
      return TRUE;
    }
  if (g_ascii_strcasecmp (s, "null") == 0)
    *v = dw_value_none ();
  else if (g_ascii_strcasecmp (s, "true") == 0)
    *v = dw_value_bool (TRUE);
  else if (g_ascii_strcasecmp (s, "false") == 0)
    *v = dw_value_bool (FALSE);
  else if (regex_match ("^[-+]?(0|[1-9](_?[0-9])*)$", s) && parse_int (s, v))
    ;
  else if (regex_match ("^[-+]?(([0-9](_?[0-9])*)?\\.[0-9](_?[0-9])*|[0-9](_?[0-9])*\\.?)"
                        "([eE][-+]?[0-9](_?[0-9])*)?$",
                        s)
           || regex_match ("^[-+]?([iI][nN][fF]|[nN][aA][nN])$", s))
    *v = dw_value_float (parse_float (s));
  else if (n < DW_VALUE_STR_MAX)
    *v = dw_value_str (s);
  else
    {
      *too_long = TRUE;
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* rendering                                                                                    */

/* repr() of a float, with a '.' in the mantissa so that PyYAML reads it back as a float. */
static void
append_float (GString *out, double f, gboolean yaml)
{
  char buf[64];
  if (isnan (f))
    g_string_append (out, yaml ? ".nan" : "nan");
  else if (isinf (f))
    g_string_append (out, f > 0 ? (yaml ? ".inf" : "inf") : (yaml ? "-.inf" : "-inf"));
  else
    {
      dw_python_float_repr (f, buf, sizeof buf);
      char *e = strchr (buf, 'e');
      if (yaml && e && !memchr (buf, '.', e - buf))
        {
          g_string_append_len (out, buf, e - buf);
          g_string_append (out, ".0");
          g_string_append (out, e);
        }
      else
        g_string_append (out, buf);
    }
}

static gboolean
has_control (const char *s)
{
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      return TRUE;
  return FALSE;
}

/* None, bools, ints and floats, written alike in YAML and Hydra overrides (floats as
 * append_float); FALSE, writing nothing, for strings. */
static gboolean
append_scalar_value (GString *out, const DwValue *v, gboolean yaml)
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
      append_float (out, v->f, yaml);
      return TRUE;
    default:
      return FALSE;
    }
}

static void
append_yaml_value (GString *out, const DwValue *v)
{
  DwValue back;
  double num;

  if (append_scalar_value (out, v, TRUE))
    return;
  /* plain only when it reads back as this very string under both resolvers */
  if (regex_match ("^[A-Za-z_][A-Za-z0-9_.,-]*$", v->s) && !dw_python_float (v->s, &num)
      && resolve_yaml_plain (v->s, TRUE, &back) && back.kind == DW_VALUE_STR
      && resolve_yaml_plain (v->s, FALSE, &back) && back.kind == DW_VALUE_STR)
    g_string_append (out, v->s);
  else if (has_control (v->s))
    {
      /* double-quoted: the only YAML style that keeps newlines and tabs as they are */
      g_string_append_c (out, '"');
      for (const unsigned char *p = (const unsigned char *)v->s; *p; p++)
        {
          if (*p == '"' || *p == '\\')
            g_string_append_printf (out, "\\%c", *p);
          else if (*p < 0x20 || *p == 0x7f)
            g_string_append_printf (out, "\\x%02x", *p);
          else
            g_string_append_c (out, (char)*p);
        }
      g_string_append_c (out, '"');
    }
  else
    {
      g_string_append_c (out, '\'');
      for (const char *p = v->s; *p; p++)
        {
          if (*p == '\'')
            g_string_append_c (out, '\'');
          g_string_append_c (out, *p);
        }
      g_string_append_c (out, '\'');
    }
}

static void
append_hydra_value (GString *out, const DwValue *v)
{
  if (append_scalar_value (out, v, FALSE))
    return;
  g_string_append_c (out, '\'');
  for (const char *p = v->s; *p; p++)
    {
      if (*p == '\'' || *p == '\\')
        g_string_append_c (out, '\\');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '\'');
}

/* Shell word for an override: bare when safe, "…" when that needs no escapes, else '…'. */
static void
append_shell_word (GString *out, const char *w)
{
  if (regex_match ("^[A-Za-z0-9_.,=+:/@-]+$", w))
    g_string_append (out, w);
  else if (!strpbrk (w, "\"$`\\!"))
    g_string_append_printf (out, "\"%s\"", w);
  else
    {
      g_autofree char *q = g_shell_quote (w);
      g_string_append (out, q);
    }
}

static gboolean
check_exportable (const DwConfig *config, GError **error)
{
  const char *gen = dw_generation_name (config->generation);
  if (gen == NULL)
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT, _ ("unknown generation"));
      return FALSE;
    }
  for (size_t i = 0; i < config->n_keys; i++)
    {
      if (strcmp (config->keys[i], "preset") == 0)
        continue; /* refused by the check below with verl's message */
      if (!dw_export_key_accepted (config->generation, config->keys[i]))
        {
          g_autofree char *accepted
            = g_strjoinv (", ", (char **)dw_export_accepted_keys (config->generation));
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                       _ ("%s does not accept the key '%s' (accepted: %s)"), gen, config->keys[i],
                       accepted);
          return FALSE;
        }
      if (config->values[i].kind == DW_VALUE_OTHER)
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                       _ ("%s: the value %s of '%s' is not a number, string, bool or null"), gen,
                       config->values[i].s, config->keys[i]);
          return FALSE;
        }
    }
  DwCorrectionError ce;
  if (!dw_correction_check_config (config, &ce))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                   _ ("%s would reject this config: %s: %s"), gen, dw_error_kind_name (ce.kind),
                   ce.message);
      return FALSE;
    }
  return TRUE;
}

/* whether @config (valid) runs slime's built-in TIS or IcePop rather than mis.py */
static gboolean
slime_builtin (const DwConfig *config)
{
  DwPlan plan;
  DwCorrectionError error;
  return config->generation == DW_GEN_SLIME && dw_plan_build (config, &plan, &error)
         && (plan.path == DW_PATH_SLIME_VANILLA || plan.path == DW_PATH_SLIME_ICEPOP);
}

/* a slime config names only keys its path reads: the built-in paths are flags, mis.py reads
 * mis.yaml (and --use-tis, --calculate-per-token-loss) */
static gboolean
check_slime_keys (const DwConfig *config, GError **error)
{
  const gboolean builtin = slime_builtin (config);
  for (size_t i = 0; i < config->n_keys; i++)
    {
      const char *key = config->keys[i];
      const SlimeFlag *flag = slime_flag_of_key (key);
      if (builtin && flag == NULL)
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                       _ ("slime's built-in TIS has no flag for '%s' (a mis.py key): set "
                          "tis_function to mis, or drop the key"),
                       key);
          return FALSE;
        }
      if (!builtin && (strcmp (key, "tis_clip") == 0 || strcmp (key, "tis_clip_low") == 0))
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                       _ ("'%s' is read only by slime's built-in TIS (%s); mis.py's bounds are "
                          "tis_lower_bound and tis_upper_bound"),
                       key, flag->flag);
          return FALSE;
        }
    }
  return TRUE;
}

/* slime's built-in TIS / IcePop as the flags slime's argument parser takes */
static gboolean
append_slime_flags (GString *out, const DwConfig *config, GError **error)
{
  g_autoptr (GString) flags = g_string_new (NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (slime_flags); i++)
    {
      const DwValue *value = dw_config_get (config, slime_flags[i].key);
      if (value == NULL)
        continue;
      if (slime_flags[i].store_true)
        {
          if (dw_value_truthy (value))
            g_string_append_printf (flags, "%s%s", flags->len ? " " : "", slime_flags[i].flag);
          continue;
        }
      if (strcmp (slime_flags[i].key, "tis_function") == 0)
        {
          if (value->kind == DW_VALUE_STR && strcmp (value->s, "icepop") == 0)
            g_string_append_printf (flags, "%s%s " SLIME_ICEPOP_FUNCTION, flags->len ? " " : "",
                                    slime_flags[i].flag);
          continue; /* vanilla is slime's default function */
        }
      if (value->kind != DW_VALUE_INT && value->kind != DW_VALUE_FLOAT)
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                       _ ("slime's %s takes a number (argparse type=float), not %s"),
                       slime_flags[i].flag, value->kind == DW_VALUE_STR ? value->s : "this value");
          return FALSE;
        }
      char number[64];
      if (value->kind == DW_VALUE_INT)
        g_snprintf (number, sizeof number, "%" G_GINT64_FORMAT, (gint64)value->i);
      else
        dw_python_float_repr (value->f, number, sizeof number);
      g_string_append_printf (flags, "%s%s %s", flags->len ? " " : "", slime_flags[i].flag, number);
    }
  g_string_append_printf (out,
                          "# slime's built-in TIS (slime/backends/megatron_utils/loss.py)\n"
                          "SLIME_TIS_ARGS=(%s)\n"
                          "# then add \"${SLIME_TIS_ARGS[@]}\" to the slime command line\n",
                          flags->str);
  return TRUE;
}

static void
append_yaml (GString *out, const DwConfig *config)
{
  const DwGeneration gen = config->generation;
  const char *indent = "";
  if (gen == DW_GEN_SLIME)
    g_string_append (out, "# slime: --custom-config-path YAML for " SLIME_TIS_FUNCTION "\n");
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
      const DwValue *v = dw_config_get (config, *k);
      if (v == NULL)
        continue;
      /* mis.yaml holds mis.py's keys; the flags of slime's parser are not in it */
      if (gen == DW_GEN_SLIME && slime_flag_of_key (*k) && strcmp (*k, "use_tis") != 0)
        continue;
      g_string_append_printf (out, "%s%s: ", indent, *k);
      append_yaml_value (out, v);
      g_string_append_c (out, '\n');
    }
}

static GPtrArray *
hydra_overrides (const DwConfig *config)
{
  GPtrArray *l = g_ptr_array_new_with_free_func (g_free);
  for (const char *const *k = dw_export_accepted_keys (config->generation); *k; k++)
    {
      const DwValue *v = dw_config_get (config, *k);
      if (v == NULL)
        continue;
      GString *o = g_string_new (dw_export_section (config->generation));
      g_string_append_printf (o, ".%s=", *k);
      append_hydra_value (o, v);
      g_ptr_array_add (l, g_string_free (o, FALSE));
    }
  return l;
}

char *
dw_config_export (const DwConfig *config, DwExportFormat format, GError **error)
{
  if (!check_exportable (config, error))
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
  for (size_t i = 0; one_line && i < config->n_keys; i++)
    if (config->values[i].kind == DW_VALUE_STR && has_control (config->values[i].s))
      {
        g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                     _ ("the value of '%s' contains a control character (newline, tab…): Hydra "
                        "overrides cannot carry it, use --format yaml"),
                     config->keys[i]);
        return NULL;
      }
  if (gen == DW_GEN_SLIME && !check_slime_keys (config, error))
    return NULL;
  if (slime_builtin (config))
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
      if (!append_slime_flags (flags, config, error))
        {
          g_string_free (flags, TRUE);
          return NULL;
        }
      return g_string_free (flags, FALSE);
    }
  GString *out = g_string_new (NULL);
  if (format == DW_EXPORT_FORMAT_YAML)
    append_yaml (out, config);
  else if (format == DW_EXPORT_FORMAT_HYDRA)
    {
      g_autoptr (GPtrArray) l = hydra_overrides (config);
      for (guint i = 0; i < l->len; i++)
        g_string_append_printf (out, "%s\n", (char *)l->pdata[i]);
    }
  else if (gen == DW_GEN_SLIME)
    {
      g_string_append (out, "cat > mis.yaml <<'EOF'\n");
      append_yaml (out, config);
      g_string_append (out, "EOF\nSLIME_MIS_ARGS=(");
      const DwValue *tis = dw_config_get (config, "use_tis");
      if (tis == NULL || (tis->kind == DW_VALUE_BOOL && tis->b))
        g_string_append (out, "--use-tis ");
      const DwValue *per_token = dw_config_get (config, "calculate_per_token_loss");
      if (per_token && dw_value_truthy (per_token))
        g_string_append (out, "--calculate-per-token-loss ");
      g_string_append (
        out, "--custom-config-path mis.yaml --custom-tis-function-path " SLIME_TIS_FUNCTION ")\n"
             "# then add \"${SLIME_MIS_ARGS[@]}\" to the slime command line\n");
    }
  else
    {
      g_autoptr (GPtrArray) l = hydra_overrides (config);
      g_string_append (out, VERL_ENTRY);
      for (guint i = 0; i < l->len; i++)
        {
          g_string_append (out, " \\\n    ");
          append_shell_word (out, l->pdata[i]);
        }
      g_string_append_c (out, '\n');
    }
  return g_string_free (out, FALSE);
}

/* ------------------------------------------------------------------------------------------ */
/* import                                                                                       */

typedef struct
{
  const char *source;
  DwGeneration gen;
  DwConfig *config;
  GHashTable *seen; /* key → line */
} Importer;

static char *
where (const Importer *im, gsize line)
{
  return line ? g_strdup_printf ("%s:%" G_GSIZE_FORMAT, im->source, line) : g_strdup (im->source);
}

static gboolean
import_key (Importer *im, const char *key, const DwValue *v, gsize line, GError **error)
{
  g_autofree char *at = where (im, line);
  const char *sec = dw_export_section (im->gen);
  g_autofree char *full = *sec ? g_strdup_printf ("%s.%s", sec, key) : g_strdup (key);
  if (!dw_export_key_accepted (im->gen, key))
    {
      g_autofree char *accepted = g_strjoinv (", ", (char **)dw_export_accepted_keys (im->gen));
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                   _ ("%s: %s is not a key %s accepts (accepted: %s)"), at, full,
                   dw_generation_name (im->gen), accepted);
      return FALSE;
    }
  if (g_hash_table_contains (im->seen, key))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY, _ ("%s: %s is given twice"), at,
                   full);
      return FALSE;
    }
  g_hash_table_add (im->seen, g_strdup (key));
  dw_config_set (im->config, key, v);
  return TRUE;
}

static gboolean
finish_import (Importer *im, GError **error)
{
  DwCorrectionError ce;
  if (!dw_correction_check_config (im->config, &ce))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                   _ ("%s: %s would reject this config: %s: %s"), im->source,
                   dw_generation_name (im->gen), dw_error_kind_name (ce.kind), ce.message);
      return FALSE;
    }
  return TRUE;
}

/* A YAML node as compact JSON (for DW_VALUE_OTHER: lists and mappings as values). */
static void
node_to_json (yaml_document_t *doc, yaml_node_t *n, GString *out, int depth)
{
  if (n == NULL || depth > 16)
    {
      g_string_append (out, "null");
      return;
    }
  if (n->type == YAML_SCALAR_NODE)
    {
      g_autofree char *s = g_strndup ((const char *)n->data.scalar.value, n->data.scalar.length);
      dw_json_append_string (out, s);
    }
  else if (n->type == YAML_SEQUENCE_NODE)
    {
      g_string_append_c (out, '[');
      for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
        {
          if (i != n->data.sequence.items.start)
            g_string_append (out, ", ");
          node_to_json (doc, yaml_document_get_node (doc, *i), out, depth + 1);
        }
      g_string_append_c (out, ']');
    }
  else if (n->type == YAML_MAPPING_NODE)
    {
      g_string_append_c (out, '{');
      for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
        {
          if (p != n->data.mapping.pairs.start)
            g_string_append (out, ", ");
          node_to_json (doc, yaml_document_get_node (doc, p->key), out, depth + 1);
          g_string_append (out, ": ");
          node_to_json (doc, yaml_document_get_node (doc, p->value), out, depth + 1);
        }
      g_string_append_c (out, '}');
    }
}

static yaml_node_t *
mapping_get (yaml_document_t *doc, yaml_node_t *map, const char *key)
{
  if (map == NULL || map->type != YAML_MAPPING_NODE)
    return NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
    {
      yaml_node_t *k = yaml_document_get_node (doc, p->key);
      if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == strlen (key)
          && memcmp (k->data.scalar.value, key, k->data.scalar.length) == 0)
        return yaml_document_get_node (doc, p->value);
    }
  return NULL;
}

static gboolean
import_yaml_mapping (Importer *im, yaml_document_t *doc, yaml_node_t *map, gboolean only_rollout,
                     GError **error)
{
  if (map->type != YAML_MAPPING_NODE)
    {
      g_autofree char *at = where (im, map->start_mark.line + 1);
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                   _ ("%s: expected a mapping of config keys"), at);
      return FALSE;
    }
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
    {
      yaml_node_t *k = yaml_document_get_node (doc, p->key);
      yaml_node_t *v = yaml_document_get_node (doc, p->value);
      gsize line = k ? k->start_mark.line + 1 : 0;
      if (k == NULL || k->type != YAML_SCALAR_NODE || v == NULL)
        {
          g_autofree char *at = where (im, line);
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                       _ ("%s: a config key must be a plain name"), at);
          return FALSE;
        }
      g_autofree char *key = g_strndup ((const char *)k->data.scalar.value, k->data.scalar.length);
      /* verl-0.6 keeps its keys among the other algorithm.* settings: only rollout_* are ours */
      if (only_rollout && !g_str_has_prefix (key, "rollout_"))
        continue;
      const SlimeFlag *flag = im->gen == DW_GEN_SLIME ? slime_flag_of_key (key) : NULL;
      if (flag && strcmp (key, "use_tis") != 0)
        {
          g_autofree char *at = where (im, line);
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                       _ ("%s: %s is a command-line flag of slime (%s), not a mis.yaml key"), at,
                       key, flag->flag);
          return FALSE;
        }
      DwValue val;
      gboolean ok = TRUE;
      if (v->type == YAML_SCALAR_NODE)
        {
          g_autofree char *s
            = g_strndup ((const char *)v->data.scalar.value, v->data.scalar.length);
          double num;
          gboolean plain = v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
          if (plain)
            ok = resolve_yaml_plain (s, im->gen != DW_GEN_SLIME, &val);
          else if (strlen (s) < DW_VALUE_STR_MAX)
            val = dw_value_str (s);
          else
            ok = FALSE;
          if (ok && plain && im->gen == DW_GEN_SLIME && val.kind == DW_VALUE_STR
              && (g_str_has_suffix (key, "_bound") || strcmp (key, "rs_veto_threshold") == 0)
              && dw_python_float (s, &num))
            {
              /* slime reads its YAML with yaml.safe_load (YAML 1.1): "1e-4" is a string there,
               * and slime fails on it where it takes the bound or its logarithm */
              g_autofree char *at = where (im, line);
              g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                           _ ("%s: %s: slime's yaml.safe_load reads %s as a string, not a number "
                              "(write it with a '.', e.g. 1.0e-4)"),
                           at, key, s);
              return FALSE;
            }
        }
      else
        {
          g_autoptr (GString) j = g_string_new (NULL);
          node_to_json (doc, v, j, 0);
          val = dw_value_none ();
          val.kind = DW_VALUE_OTHER;
          ok = j->len < DW_VALUE_STR_MAX;
          g_strlcpy (val.s, j->str, sizeof val.s);
        }
      if (!ok)
        {
          g_autofree char *at = where (im, line);
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                       _ ("%s: the value of %s is longer than %d characters"), at, key,
                       DW_VALUE_STR_MAX - 1);
          return FALSE;
        }
      if (!import_key (im, key, &val, line, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
import_yaml (Importer *im, const char *text, gsize len, GError **error)
{
  yaml_parser_t parser;
  yaml_document_t doc;
  if (!yaml_parser_initialize (&parser))
    g_error ("out of memory");
  yaml_parser_set_input_string (&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load (&parser, &doc))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                   _ ("%s:%zu:%zu: YAML syntax error: %s"), im->source,
                   (gsize)parser.problem_mark.line + 1, (gsize)parser.problem_mark.column + 1,
                   parser.problem ? parser.problem : "unknown");
      yaml_parser_delete (&parser);
      return FALSE;
    }
  gboolean ok = TRUE;
  yaml_node_t *root = yaml_document_get_root_node (&doc);
  if (root == NULL)
    ; /* empty document: every key at its default */
  else
    {
      yaml_node_t *algo = mapping_get (&doc, root, "algorithm");
      yaml_node_t *sec = root;
      gboolean only_rollout = FALSE;
      if (im->gen == DW_GEN_SLIME)
        ;
      else if (dw_generation_info (im->gen)->family == DW_FAMILY_VERL_MISMATCH)
        {
          if (algo)
            {
              sec = algo;
              only_rollout = TRUE;
            }
        }
      else if (algo)
        {
          sec = mapping_get (&doc, algo, "rollout_correction");
          if (sec == NULL)
            {
              g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                           _ ("%s:%zu: algorithm has no rollout_correction "
                              "section"),
                           im->source, (gsize)algo->start_mark.line + 1);
              ok = FALSE;
            }
        }
      else if (mapping_get (&doc, root, "rollout_correction"))
        sec = mapping_get (&doc, root, "rollout_correction");
      if (ok && sec->type == YAML_SCALAR_NODE && sec->data.scalar.length == 0)
        ; /* "rollout_correction:" with nothing under it */
      else if (ok)
        ok = import_yaml_mapping (im, &doc, sec, only_rollout, error);
    }
  yaml_document_delete (&doc);
  yaml_parser_delete (&parser);
  return ok;
}

/* One Hydra override "[+|++]path=value"; *ignored when it is not one of ours. */
static gboolean
import_override (Importer *im, const char *ov, gsize line, GError **error)
{
  g_autofree char *at = where (im, line);
  const char *s = ov;
  while (*s == '+')
    s++;
  const char *eq = strchr (s, '=');
  if (*s == '~' || eq == NULL || eq == s)
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                   _ ("%s: not a Hydra override (KEY=VALUE): %s"), at, ov);
      return FALSE;
    }
  g_autofree char *path = g_strstrip (g_strndup (s, eq - s));
  const char *sec = dw_export_section (im->gen);
  g_autofree char *prefix = g_strdup_printf ("%s.", sec);
  if (!g_str_has_prefix (path, prefix))
    return TRUE; /* another part of the trainer's config */
  const char *key = path + strlen (prefix);
  if (dw_generation_info (im->gen)->family == DW_FAMILY_VERL_MISMATCH
      && !g_str_has_prefix (key, "rollout_"))
    return TRUE;
  DwValue v;
  gboolean too_long;
  if (!resolve_hydra (eq + 1, &v, &too_long))
    {
      if (too_long)
        g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                     _ ("%s: the value of %s is longer than %d characters"), at, path,
                     DW_VALUE_STR_MAX - 1);
      else
        g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                     _ ("%s: unterminated quoted value in %s"), at, ov);
      return FALSE;
    }
  return import_key (im, key, &v, line, error);
}

static gboolean
import_hydra (Importer *im, const char *text, GError **error)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (gsize i = 0; lines[i]; i++)
    {
      g_autofree char *l = g_strstrip (g_strdup (lines[i]));
      if (*l == '\0' || *l == '#')
        continue;
      if (!import_override (im, l, i + 1, error))
        return FALSE;
    }
  return TRUE;
}

/* The body of the first here-document (<<'EOF' / <<EOF / <<-EOF), or NULL. */
static char *
heredoc_body (const char *text)
{
  g_autoptr (GRegex) re
    = g_regex_new ("<<-?\\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\\1[^\\n]*\\n", 0, 0, NULL);
  g_autoptr (GMatchInfo) mi = NULL;
  if (!g_regex_match (re, text, 0, &mi))
    return NULL;
  g_autofree char *delim = g_match_info_fetch (mi, 2);
  int start, end;
  g_match_info_fetch_pos (mi, 0, &start, &end);
  GString *body = g_string_new (NULL);
  g_auto (GStrv) lines = g_strsplit (text + end, "\n", -1);
  for (gsize i = 0; lines[i]; i++)
    {
      g_autofree char *t = g_strstrip (g_strdup (lines[i]));
      if (strcmp (t, delim) == 0)
        return g_string_free (body, FALSE);
      g_string_append_printf (body, "%s\n", lines[i]);
    }
  g_string_free (body, TRUE);
  return NULL;
}

/* @text without the lines of its here-documents, continuations joined, comments dropped */
static char *
command_words_text (const char *text)
{
  g_autoptr (GRegex) start
    = g_regex_new ("<<-?\\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\\1", 0, 0, NULL);
  g_autoptr (GString) joined = g_string_new (NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *delimiter = NULL;
  for (gsize i = 0; lines[i]; i++)
    {
      g_autofree char *line = g_strstrip (g_strdup (lines[i]));
      if (delimiter)
        {
          if (strcmp (line, delimiter) == 0)
            g_clear_pointer (&delimiter, g_free);
          continue;
        }
      g_autoptr (GMatchInfo) match = NULL;
      if (g_regex_match (start, line, 0, &match))
        {
          delimiter = g_match_info_fetch (match, 2);
          continue; /* the "cat > mis.yaml <<'EOF'" line itself */
        }
      if (*line == '#')
        continue;
      if (g_str_has_suffix (line, "\\"))
        line[strlen (line) - 1] = ' ';
      g_string_append_printf (joined, "%s ", line);
    }
  return g_strdup (joined->str);
}

/* one of slime's TIS flags with its value (@value NULL for a store_true flag) */
static gboolean
import_slime_flag (Importer *im, const SlimeFlag *flag, const char *value, GError **error)
{
  DwValue parsed;
  double number;
  if (flag->store_true)
    parsed = dw_value_bool (TRUE);
  else if (strcmp (flag->key, "tis_function") == 0)
    {
      const char *name = strcmp (value, SLIME_ICEPOP_FUNCTION) == 0          ? "icepop"
                         : strcmp (value, SLIME_TIS_FUNCTION) == 0           ? "mis"
                         : g_str_has_suffix (value, ".vanilla_tis_function") ? "vanilla"
                                                                             : NULL;
      if (name == NULL)
        {
          g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                       _ ("%s: --custom-tis-function-path %s is a function Driftwatch cannot "
                          "reproduce (it knows %s and %s)"),
                       im->source, value, SLIME_ICEPOP_FUNCTION, SLIME_TIS_FUNCTION);
          return FALSE;
        }
      /* mis.py is the path a config without built-in flags names: no key for it */
      if (strcmp (name, "mis") == 0)
        return TRUE;
      parsed = dw_value_str (name);
    }
  else if (dw_python_float (value, &number))
    parsed = dw_value_float (number);
  else
    {
      /* argparse's own message */
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_REJECTED,
                   _ ("%s: argument %s: invalid float value: '%s'"), im->source, flag->flag, value);
      return FALSE;
    }
  return import_key (im, flag->key, &parsed, 0, error);
}

/* slime's TIS flags among a command line's words; other flags belong to the rest of slime */
static gboolean
import_slime_flags (Importer *im, char **argv, int argc, gboolean with_yaml, gboolean *any,
                    gboolean *mis, GError **error)
{
  for (int i = 0; i < argc; i++)
    {
      const char *word = argv[i];
      const char *dash = strstr (word, "--");
      if (dash == NULL || (dash != word && dash[-1] != '('))
        continue;
      g_autofree char *flag_name = g_strdup (dash);
      g_strdelimit (flag_name, ")", '\0');
      char *equals = strchr (flag_name, '=');
      if (equals)
        *equals = '\0';
      const SlimeFlag *flag = NULL;
      for (gsize f = 0; f < G_N_ELEMENTS (slime_flags); f++)
        if (strcmp (slime_flags[f].flag, flag_name) == 0)
          flag = &slime_flags[f];
      if (flag == NULL)
        {
          if (g_str_has_prefix (flag_name, "--tis") || g_str_has_prefix (flag_name, "--use-tis"))
            {
              g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_KEY,
                           _ ("%s: unrecognized arguments: %s (slime's TIS flags are "
                              "--use-tis, --tis-clip, --tis-clip-low, "
                              "--custom-tis-function-path, --calculate-per-token-loss)"),
                           im->source, flag_name);
              return FALSE;
            }
          continue;
        }
      /* with mis.yaml, use_tis is the YAML's; the flag only turns slime's TIS hook on */
      if (with_yaml && strcmp (flag->key, "use_tis") == 0)
        continue;
      g_autofree char *value = NULL;
      if (!flag->store_true)
        {
          value = equals ? g_strdup (equals + 1) : i + 1 < argc ? g_strdup (argv[++i]) : NULL;
          if (value)
            g_strdelimit (value, ")", '\0');
          if (value == NULL || *value == '\0')
            {
              g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                           _ ("%s: argument %s: expected one argument"), im->source, flag->flag);
              return FALSE;
            }
        }
      if (!import_slime_flag (im, flag, value, error))
        return FALSE;
      *any = TRUE;
      *mis |= strcmp (flag->key, "tis_function") == 0 && strcmp (value, SLIME_TIS_FUNCTION) == 0;
    }
  return TRUE;
}

/* a slime command line: its TIS flags, and the mis.yaml here-document when there is one */
static gboolean
import_slime_args (Importer *im, const char *text, GError **error)
{
  g_autofree char *words = command_words_text (text);
  int argc = 0;
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) shell_error = NULL;
  if (strspn (words, " ") != strlen (words)
      && !g_shell_parse_argv (words, &argc, &argv, &shell_error))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX, _ ("%s: %s"), im->source,
                   shell_error->message);
      return FALSE;
    }
  gboolean any_flag = FALSE, mis = FALSE;
  g_autofree char *body = heredoc_body (text);
  if (body && !import_yaml (im, body, strlen (body), error))
    return FALSE;
  if (!import_slime_flags (im, argv, argc, body != NULL, &any_flag, &mis, error))
    return FALSE;
  const DwValue *function = dw_config_get (im->config, "tis_function");
  if (body)
    return TRUE;
  if (mis || !any_flag)
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                   _ ("%s: no mis.yaml here-document: slime's flags only name the file "
                      "(--custom-config-path), import that YAML with --format yaml"),
                   im->source);
      return FALSE;
    }
  /* --use-tis without --custom-tis-function-path runs vanilla_tis_function; without --tis-clip
   * or --tis-clip-low the config must say so (it would otherwise name mis.py) */
  if (function == NULL && !dw_config_get (im->config, "tis_clip")
      && !dw_config_get (im->config, "tis_clip_low"))
    {
      DwValue vanilla = dw_value_str ("vanilla");
      dw_config_set (im->config, "tis_function", &vanilla);
    }
  return TRUE;
}

static gboolean
import_args (Importer *im, const char *text, GError **error)
{
  if (im->gen == DW_GEN_SLIME)
    return import_slime_args (im, text, error);
  /* a shell command line: join continuations, drop comments, split into words */
  g_autoptr (GString) joined = g_string_new (NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (gsize i = 0; lines[i]; i++)
    {
      g_autofree char *l = g_strstrip (g_strdup (lines[i]));
      if (*l == '#')
        continue;
      if (g_str_has_suffix (l, "\\"))
        l[strlen (l) - 1] = ' ';
      g_string_append_printf (joined, "%s ", l);
    }
  int argc = 0;
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) serr = NULL;
  if (joined->len && strspn (joined->str, " ") != joined->len
      && !g_shell_parse_argv (joined->str, &argc, &argv, &serr))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX, _ ("%s: %s"), im->source,
                   serr->message);
      return FALSE;
    }
  for (int i = 0; i < argc; i++)
    if (strchr (argv[i], '=') && argv[i][0] != '-' && !import_override (im, argv[i], 0, error))
      return FALSE;
  return TRUE;
}

gboolean
dw_config_import (const char *text, gssize length, const char *source, DwGeneration gen,
                  DwExportFormat format, DwConfig *out, GError **error)
{
  g_return_val_if_fail (text != NULL && out != NULL, FALSE);
  g_autofree char *copy = length < 0 ? g_strdup (text) : g_strndup (text, length);
  dw_config_init (out, gen);
  if (!dw_export_format_supported (gen, format) || dw_export_format_name (format) == NULL
      || dw_generation_name (gen) == NULL)
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                   _ ("%s: slime takes no Hydra overrides: use --format args or --format yaml"),
                   source ? source : "<input>");
      return FALSE;
    }
  if (length >= 0 && memchr (text, '\0', length))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX,
                   _ ("%s: contains a NUL byte (not a text file)"), source ? source : "<input>");
      return FALSE;
    }
  if (!g_utf8_validate (copy, -1, NULL))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_SYNTAX, _ ("%s: not valid UTF-8"),
                   source ? source : "<input>");
      return FALSE;
    }
  Importer im = { source ? source : "<input>", gen, out,
                  g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) };
  gboolean ok;
  if (format == DW_EXPORT_FORMAT_YAML)
    ok = import_yaml (&im, copy, strlen (copy), error);
  else if (format == DW_EXPORT_FORMAT_HYDRA)
    ok = import_hydra (&im, copy, error);
  else
    ok = import_args (&im, copy, error);
  g_hash_table_unref (im.seen);
  if (ok)
    ok = finish_import (&im, error);
  if (!ok)
    dw_config_init (out, gen);
  return ok;
}

void
dw_config_import_detect (const char *text, gssize length, DwGeneration *gen, DwExportFormat *format)
{
  g_autofree char *t = length < 0 ? g_strdup (text) : g_strndup (text, length);
  if (strstr (t, "use_tis") || strstr (t, "tis_level") || strstr (t, "tis_upper_bound")
      || strstr (t, "custom-config-path") || strstr (t, "rs_veto_threshold")
      || strstr (t, "--use-tis") || strstr (t, "--tis-clip") || strstr (t, "tis_clip")
      || strstr (t, "custom-tis-function-path"))
    *gen = DW_GEN_SLIME;
  else if (strstr (t, "rollout_is_level") || strstr (t, "rollout_is_mode")
           || strstr (t, "rollout_is_veto_threshold") || strstr (t, "rollout_is_threshold_lower"))
    *gen = DW_GEN_VERL_0_6;
  else if (strstr (t, "rollout_token_veto_threshold") || strstr (t, "rollout_rs_threshold_lower")
           || strstr (t, "use_policy_gradient")
           || g_regex_match_simple (
             "rollout_rs\\s*[:=]\\s*['\"]?(token|sequence|geometric)['\"]?\\s*$", t,
             G_REGEX_MULTILINE, 0))
    *gen = strstr (t, "use_policy_gradient") ? DW_GEN_VERL_0_6_1 : DW_GEN_VERL_0_7_0;
  else
    *gen = DW_GEN_VERL_LATEST; /* the k-option keys of v0.7.1 and later: the newest reads them */
  g_autofree char *heredoc = heredoc_body (t);
  /* a command line: a here-document, a program, or flags (also inside a bash array "=(--…") */
  if (heredoc || regex_match ("(^|\\n)\\s*(python|--[A-Za-z]|[A-Za-z0-9_./-]+\\.(py|sh)\\b)", t)
      || regex_match ("=\\(\\s*--[A-Za-z]", t) || strstr (t, "\\\n"))
    *format = DW_EXPORT_FORMAT_ARGS;
  else if (g_regex_match_simple ("^\\s*\\+*[A-Za-z_][A-Za-z0-9_.]*\\s*=", t, G_REGEX_MULTILINE, 0)
           && !g_regex_match_simple ("^\\s*[A-Za-z_][A-Za-z0-9_]*\\s*:", t, G_REGEX_MULTILINE, 0))
    *format = DW_EXPORT_FORMAT_HYDRA;
  else
    *format = DW_EXPORT_FORMAT_YAML;
}

/* ------------------------------------------------------------------------------------------ */
/* GUI entry points                                                                             */

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

static gboolean
parse_target (const char *target, const char *format, DwGeneration *gen, DwExportFormat *fmt,
              GError **error)
{
  if (target && !dw_generation_from_name (target, gen))
    {
      g_autoptr (GPtrArray) releases = g_ptr_array_new ();
      for (int g = 0; g < DW_N_GENERATIONS; g++)
        {
          const DwGenerationInfo *info = dw_generation_info ((DwGeneration)g);
          if (info->release && strcmp (info->framework, "verl") == 0)
            g_ptr_array_add (releases, (gpointer)info->name);
        }
      g_ptr_array_sort (releases, compare_names);
      g_ptr_array_add (releases, NULL);
      g_autofree char *names = g_strjoinv (", ", (char **)releases->pdata);
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                   _ ("unknown target '%s' (verl = the newest release, %s or slime; old names "
                      "such as verl-0.7 still work)"),
                   target, names);
      return FALSE;
    }
  if (format && !dw_export_format_from_name (format, fmt))
    {
      g_set_error (error, DW_EXPORT_ERROR, DW_EXPORT_ERROR_FORMAT,
                   _ ("unknown format '%s' (yaml, hydra or args)"), format);
      return FALSE;
    }
  return TRUE;
}

char *
dw_config_export_string (const char *config_json, const char *target, const char *format,
                         GError **error)
{
  DwGeneration gen = DW_GEN_VERL_LATEST;
  DwExportFormat fmt = DW_EXPORT_FORMAT_YAML;
  if (!parse_target (target, format, &gen, &fmt, error))
    return NULL;
  DwConfig c;
  dw_config_init (&c, gen);
  if (!dw_config_merge_json (&c, config_json, error))
    return NULL;
  return dw_config_export (&c, fmt, error);
}

char *
dw_config_import_string (const char *text, const char *target, const char *format, GError **error)
{
  DwGeneration gen;
  DwExportFormat fmt;
  dw_config_import_detect (text, -1, &gen, &fmt);
  if (!parse_target (target, format, &gen, &fmt, error))
    return NULL;
  DwConfig c;
  if (!dw_config_import (text, -1, _ ("pasted text"), gen, fmt, &c, error))
    return NULL;
  GString *out = g_string_new (NULL);
  dw_json_append_config (out, &c);
  return g_string_free (out, FALSE);
}
