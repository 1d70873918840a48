#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# check-rules.py must catch each rule it claims to check: a small tree breaking every one of them.
set -eu
checker="$1"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/core/store" "$tree/core/ingest" "$tree/core/correction" "$tree/app/cli" "$tree/ui"
printf '#pragma once\n' >"$tree/core/store/dw-store-private.h"
printf '#pragma once\n' >"$tree/core/ingest/dw-ingester.h"
printf '#pragma once\n' >"$tree/ui/dw-window.h"
cat >"$tree/core/ingest/dw-bad.c" <<'C'
#include "dw-store-private.h"
#include <gtk/gtk.h>
G_DEFINE_QUARK (dw - bad - error - quark, dw_bad_error)
static const char *hook = g_getenv ("DW_CRASH_AT");
C
printf '#include <glib.h>\n' >"$tree/core/correction/dw-kernel.c"
printf 'static int\ndw_short (void)\n{\n  int a = 1, b = 2;\n  for (int i = 0; i < 2; i++)\n    a += i;\n  return a + b;\n}\n' \
  >"$tree/core/store/dw-short.c"
printf '#include "dw-window.h"\n' >"$tree/app/cli/dw-cli-bad.c"
printf '#include "dw-ingester.h"\n' >"$tree/core/store/dw-store.c"
printf 'int\ndw_ping (int n)\n{\n  return n > 0 ? dw_pong (n - 1) : 0;\n}\n' >"$tree/core/ingest/dw-ping.c"
printf 'int\ndw_pong (int n)\n{\n  return dw_ping (n);\n}\n' >"$tree/core/ingest/dw-pong.c"
seq 1 1400 | sed 's/.*/int x;/' >"$tree/ui/dw-big.c"
{ printf 'static int\ndw_long (void)\n{\n'; seq 1 150 | sed 's/.*/  dw_ping (1);/'; printf '  return 0;\n}\n'; } >"$tree/core/ingest/dw-long.c"
mkdir -p "$tree/docs"
printf '# Math\n\n## §1 One\n\n### §1.2 Two\n' >"$tree/docs/CORRECTION.md"
cat >"$tree/core/correction/dw-cite.c" <<'C'
/* resolves: §1, §1.2; does not: §3 */
/* a file outside docs/: ../shared/docs/FORMATS.md §4.4 */
C
if python3 "$checker" "$tree" >"$tree/out"; then
  echo "check-rules.py passed a tree that breaks every rule"; exit 1
fi
for want in 'core/ingest/dw-bad.c:1: private-header' 'core/ingest/dw-bad.c:2: layers' \
            'core/ingest/dw-bad.c:3: error-quark' 'core/ingest/dw-bad.c:4: test-hooks' \
            'core/correction/dw-kernel.c:1: layers' 'app/cli/dw-cli-bad.c:1: layers' \
            'core/store/dw-store.c:1: layers' 'ui/dw-big.c:1400: file-size' \
            'core/correction/dw-cite.c:1: cited-sections: §3 is no heading' \
            'core/correction/dw-cite.c:2: cited-sections: §4.4 of ../shared/docs/FORMATS.md' \
            'core:0: short-locals: 100.0 % of the 3 locals' \
            'core/ingest/dw-ping.c:0: cycles: 2 files use each other in a loop' \
            'core/store/dw-store.c:0: layer-order: core/store uses core/ingest' \
            'core/ingest/dw-long.c:3: function-length: dw_long is 153 lines long'; do
  grep -q "^$want" "$tree/out" || { echo "missing: $want"; cat "$tree/out"; exit 1; }
done
if grep -q 'dw-cite.c:1: cited-sections: §1' "$tree/out"; then
  echo "cited-sections refused a § that is a heading"; cat "$tree/out"; exit 1
fi
echo "every rule caught"
