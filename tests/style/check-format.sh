#!/bin/sh
# Every C source and header must be formatted by the project's .clang-format (GNU/GTK style).
# Prints the offending lines (clang-format's own diagnostics) and fails if any file differs.
set -eu
cd "$1"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files '*.c' '*.h')
else
  files=$(find app core ui tests -name '*.[ch]')
fi
# one clang-format process for all files (a process per file is slow on a loaded machine);
# its diagnostics name each offending file and line
if printf '%s\n' $files | xargs clang-format --dry-run --Werror; then
  exit 0
fi
echo "not formatted: run clang-format -i on the files named above"
exit 1
