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
status=0
for f in $files; do
  clang-format --dry-run --Werror "$f" || { echo "not formatted: $f (run clang-format -i $f)"; status=1; }
done
exit $status
