/* dw-config-syntax-private.h — shared by the config exporter and importer (core/export only)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include <glib.h>

#include "dw-export-format.h"
#include "dw-config.h"
#include "dw-schema.h"

G_BEGIN_DECLS

/* the --custom-tis-function-path of slime's mis.py and of its built-in IcePop (load_function
 * takes a dotted module path) */
#define DW_CONFIG_SLIME_MIS_FUNCTION \
  "examples.train_infer_mismatch_helper.mis.compute_mis_weights_with_cp"
#define DW_CONFIG_SLIME_ICEPOP_FUNCTION "slime.backends.megatron_utils.loss.icepop_function"

/* slime's built-in TIS keys are command-line flags (slime/utils/arguments.py): the schema's
 * slime_flag (dw-schema.h). The slime key set by @key's flag, or NULL (a mis.yaml key). */
const DwSchemaKey *dw_config_syntax_slime_flag (const char *key);
/* The slime keys that are flags, in the order an exported command line names them (the
 * function path last); returns how many were written into @out (at most @max). */
gsize dw_config_syntax_slime_flag_keys (const DwSchemaKey **out, gsize max);
/* whether flag key @key is also a mis.yaml key: the switch (use_tis), which mis.py reads from
 * its YAML while the flag only turns slime's TIS hook on */
gboolean dw_config_syntax_slime_flag_in_yaml (const DwSchemaKey *key);
/* whether @key is read only by slime's built-in functions: the --tis-clip bounds (mis.py takes
 * its bounds from mis.yaml) */
gboolean dw_config_syntax_slime_builtin_only (const DwSchemaKey *key);

gboolean dw_config_syntax_regex_match (const char *pattern, const char *s);
/* a YAML plain scalar as PyYAML's YAML 1.1 resolver types it (@omegaconf: as OmegaConf, which
 * also reads "1e-4" as a float); FALSE when too long */
gboolean dw_config_syntax_resolve_yaml_plain (const char *s, gboolean omegaconf, DwValue *v);
/* a plain scalar PyYAML reads as an int (0x10, 010, 0b11, 1:30 …) that does not fit in 64 bits */
gboolean dw_config_syntax_yaml_int_overflows (const char *s);
/* a Hydra override value; FALSE for an unterminated quote (or *too_long) */
gboolean dw_config_syntax_resolve_hydra (const char *raw, DwValue *v, gboolean *too_long);
/* the body of the first here-document (<<'EOF' / <<EOF / <<-EOF), or NULL */
char *dw_config_syntax_heredoc_body (const char *text);
/* the generation and format names of the GUI entry points (NULL: keep *gen / *fmt) */
gboolean dw_config_syntax_parse_target (const char *target, const char *format, DwGeneration *gen,
                                        DwExportFormat *fmt, GError **error);

G_END_DECLS
