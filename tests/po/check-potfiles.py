#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""po/POTFILES.in must list exactly the source files with translatable strings.

Fails (exit 1, one line per problem) when
  - a file under app/, core/, ui/ or data/ has translatable strings but is not listed
    (its strings would silently never reach translators),
  - a listed file does not exist or has no translatable strings (stale entry),
  - the list is not sorted or has duplicates (po/POTFILES.in asks for sorted order),
  - a translatable C string is continued by a macro such as G_GINT64_FORMAT: xgettext cuts the
    msgid there ("step %"), so the string the program looks up at run time is never in any
    catalogue. Only <inttypes.h>'s PRId64/PRIu64… are understood (they become %<PRId64>).
"""
import os
import re
import sys

SOURCE_DIRS = ("app", "core", "ui", "data")
# _("…"), N_("…"), C_("ctx", "…"), NC_("ctx", "…"), Q_("…"), ngettext ("…"),
# g_dngettext (NULL, "…"), with or without a space before the parenthesis (GNU style).
C_STRING = re.compile(r'(?<![A-Za-z0-9_])(?:N?C_|[NQ]?_|g_dngettext|ngettext|g_dpgettext2)\s*\(\s*(?:NULL\s*,\s*|[^,()]*,\s*)?"')
UI_STRING = re.compile(r'translatable\s*=\s*"(?:yes|true|1)"')
SCHEMA_STRING = re.compile(r"<(?:summary|description)>")
METAINFO_STRING = re.compile(r"<(?:name|summary|p|li|caption)\b")


CALL = re.compile(r'(?<![A-Za-z0-9_])(?:N?C_|[NQ]?_)\s*\(')


def cut_msgids(text):
    """Yields (line, macro) for every identifier concatenated into a _()/N_() string."""
    for m in CALL.finditer(text):
        k, depth, args = m.end(), 1, []
        while k < len(text) and depth:
            c = text[k]
            if c == '"':
                k += 1
                while text[k] != '"':
                    k += 2 if text[k] == "\\" else 1
                args.append('"')
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c.isalpha() or c == "_":
                w = re.match(r"\w+", text[k:]).group(0)
                args.append(w)
                k += len(w) - 1
            elif c == ",":
                args.append(",")
            k += 1
        # Only identifiers that sit between two string literals of the same argument.
        for i in range(1, len(args) - 1):
            if args[i] not in ('"', ",") and args[i - 1] == '"' and args[i + 1] == '"' \
                    and not args[i].startswith("PRI"):
                yield text.count("\n", 0, m.start()) + 1, args[i]


def has_strings(path):
    name = os.path.basename(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if name.endswith((".c", ".h")):
        # Strip comments so "/* _("x") */" in documentation does not count.
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        return C_STRING.search(text) is not None
    if name.endswith(".ui"):
        return UI_STRING.search(text) is not None
    if ".desktop.in" in name:
        return re.search(r"^(Name|GenericName|Comment|Keywords)=", text, re.M) is not None
    if name.endswith(".gschema.xml"):
        return SCHEMA_STRING.search(text) is not None
    if ".metainfo.xml.in" in name or ".appdata.xml.in" in name:
        return METAINFO_STRING.search(text) is not None
    return False


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    potfiles = os.path.join(root, "po", "POTFILES.in")
    listed = []
    with open(potfiles, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                listed.append(line)

    problems = []
    if listed != sorted(listed):
        first = next(a for a, b in zip(listed, sorted(listed)) if a != b)
        problems.append(f"po/POTFILES.in: not sorted (first out of place: {first})")
    dupes = sorted({p for p in listed if listed.count(p) > 1})
    for p in dupes:
        problems.append(f"po/POTFILES.in: {p} listed twice")

    for p in listed:
        full = os.path.join(root, p)
        if not os.path.isfile(full):
            problems.append(f"po/POTFILES.in: {p} does not exist")
        elif not has_strings(full):
            problems.append(f"po/POTFILES.in: {p} has no translatable strings")

    for p in listed:
        full = os.path.join(root, p)
        if p.endswith(".c") and os.path.isfile(full):
            with open(full, encoding="utf-8", errors="replace") as f:
                text = re.sub(r"/\*.*?\*/", lambda c: "\n" * c.group(0).count("\n"), f.read(),
                              flags=re.S)
            for line, macro in cut_msgids(text):
                problems.append(f"{p}:{line}: translatable string continued by {macro}: xgettext "
                                f"cuts the msgid there; use PRId64/PRIu64 (<inttypes.h>) or %zu")

    listed_set = set(listed)
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in sorted(filenames):
                full = os.path.join(dirpath, fn)
                rel = os.path.relpath(full, root)
                if rel not in listed_set and has_strings(full):
                    problems.append(f"{rel}: has translatable strings but is not in po/POTFILES.in")

    for p in problems:
        print(p)
    print(f"{len(listed)} files listed, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
