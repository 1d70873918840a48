#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rules of CONTRIBUTING.md that a command can check, over the source tree given as argv[1].

Each rule prints one line per offence ("path:line: rule: what") and the script exits 1 when any rule
was broken. Rules:
  private-header   a *-private.h is included only by files in its own folder (white-box tests in
                   tests/<module>/ may include core/<module>/'s or ui/'s private headers)
  layers           core/ never includes GTK, libadwaita or ui/ headers; core/correction/ includes the
                   C library and its own folder only; app/cli/ includes no ui/ header; core/store/ and
                   core/metrics/ include no header of ingest/, health/, whatif/ or export/
  error-quark      G_DEFINE_QUARK (dw-NAME-error-quark, dw_NAME_error), the domain string unspaced
  test-hooks       production code (core/, ui/, app/) reads no DW_* environment variable
  file-size        no .c file in core/, ui/ or app/ over 1300 lines (the few still over it, listed
                   in OVER_THE_LIMIT, may not grow)
  cited-sections   every §N / §N.M a comment cites is a numbered heading of docs/CORRECTION.md, or of
                   the docs/NAME.md the comment names before it ("docs/HEALTH.md §4"); a § bound to a
                   file outside docs/ (the shared spec, an issue) does not resolve inside the repository
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
PRODUCTION = ("core", "ui", "app")
MAX_LINES = 1300
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
QUARK = re.compile(r"G_DEFINE_QUARK\s*\((.*?),\s*(\w+)\s*\)")
ENV = re.compile(r'\bg?_?getenv\s*\(\s*"(DW_[A-Z0-9_]*)"')
LIBC_ONLY = {
    "assert.h", "errno.h", "float.h", "inttypes.h", "limits.h", "math.h", "stdbool.h", "stddef.h",
    "stdint.h", "stdio.h", "stdlib.h", "string.h", "strings.h", "ctype.h", "stdarg.h", "time.h",
    "immintrin.h", "x86intrin.h", "cpuid.h", "fenv.h",
}
UPPER_LAYERS_OF_STORE = ("ingest", "health", "whatif", "export")
DOCS = os.path.join(ROOT, "docs")
DEFAULT_DOC = "docs/CORRECTION.md"
# a numbered heading: "## §3.6 IS metrics", "## 4. The rules", "### 1b. slime"
HEADING = re.compile(r"^#{1,6}\s+§?\s*(\d+[a-z]?(?:\.\d+)*)\.?(?:\s|$)")
# what a § is bound to: a Markdown file name, or a non-file source ("issue 6", "spec")
CITE_SOURCE = re.compile(r"(?P<md>[\w./-]*[\w-]+\.md)\b|(?P<other>\bissues?\s+#?\d+|\bspec)\s+(?=§)")
SECTION = re.compile(r"§\s*(\d+[a-z]?(?:\.\d+)*)")
# Files still over MAX_LINES, waiting to be split along their seams (issue 10): each may not grow
# past the size recorded here; split one and remove its line.
OVER_THE_LIMIT = {
    "ui/tune/dw-tune-view.c": 2893,
    "ui/window/dw-window.c": 1441,
}

offences = []


def offend(path, line, rule, what):
    offences.append(f"{os.path.relpath(path, ROOT)}:{line}: {rule}: {what}")


def sources():
    for top in PRODUCTION + ("tests",):
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if d not in ("corpus", "data")]
            for name in filenames:
                if name.endswith((".c", ".h")):
                    yield os.path.join(dirpath, name)


HEADERS = {}
for path in sources():
    if path.endswith(".h"):
        HEADERS.setdefault(os.path.basename(path), []).append(path)


def resolve(including, target):
    """The header file @target names, seen from @including (same folder first, then by name)."""
    here = os.path.normpath(os.path.join(os.path.dirname(including), target))
    if os.path.exists(here):
        return here
    for prefix in ("core", "ui", "."):
        there = os.path.normpath(os.path.join(ROOT, prefix, target))
        if os.path.exists(there):
            return there
    found = HEADERS.get(os.path.basename(target), [])
    return found[0] if len(found) == 1 else None


def area(path):
    """('core', 'store'), ('ui', 'chart'), ('tests', 'store'), ('app', 'cli') …"""
    parts = os.path.relpath(path, ROOT).split(os.sep)
    return parts[0], (parts[1] if len(parts) > 2 else "")


def check_include(path, lineno, kind, target):
    top, module = area(path)
    if kind == "<":
        if top == "core" and re.match(r"(gtk|adwaita|gdk)/", target):
            offend(path, lineno, "layers", f"core/ includes <{target}>")
        if top == "core" and module == "correction" and target not in LIBC_ONLY:
            offend(path, lineno, "layers", f"core/correction/ includes <{target}> (libc and libm only)")
        if top == "app" and module == "cli" and re.match(r"(gtk|adwaita|gdk)/", target):
            offend(path, lineno, "layers", f"driftwatch-cli includes <{target}>")
        return
    header = resolve(path, target)
    if header is None:
        return
    h_top, h_module = area(header)
    same_folder = os.path.dirname(header) == os.path.dirname(path)
    if os.path.basename(header).endswith("-private.h") and not same_folder:
        white_box = top == "tests" and (
            (h_top == "core" and h_module == module) or (h_top == "ui" and module == "ui"))
        if not white_box:
            offend(path, lineno, "private-header",
                   f"includes {os.path.relpath(header, ROOT)} from outside its folder")
    if top == "core" and h_top == "ui":
        offend(path, lineno, "layers", f"core/ includes {os.path.relpath(header, ROOT)}")
    if top == "core" and module == "correction" and not same_folder:
        offend(path, lineno, "layers", f"core/correction/ includes {os.path.relpath(header, ROOT)}")
    if top == "app" and module == "cli" and h_top == "ui":
        offend(path, lineno, "layers", f"driftwatch-cli includes {os.path.relpath(header, ROOT)}")
    if top == "core" and module in ("store", "metrics") and h_top == "core" and h_module in UPPER_LAYERS_OF_STORE:
        offend(path, lineno, "layers", f"core/{module}/ includes {os.path.relpath(header, ROOT)}")


_headings = {}


def doc_headings(doc):
    """The section numbers of the headings of @doc ("docs/NAME.md"), None when it is no file of docs/."""
    if doc not in _headings:
        full = os.path.join(ROOT, doc)
        if not doc.startswith("docs/") or "/" in doc[5:] or not os.path.isfile(full):
            _headings[doc] = None
        else:
            numbers = set()
            fence = False
            with open(full, encoding="utf-8") as f:
                for line in f:
                    if line.lstrip().startswith(("```", "~~~")):
                        fence = not fence
                    m = None if fence else HEADING.match(line)
                    if m:
                        numbers.add(m.group(1))
            _headings[doc] = numbers
    return _headings[doc]


def comments(path, text):
    """(line, comment text) of every comment of @text: /* */ and // in C, # in Python, shell, meson."""
    if path.endswith((".c", ".h")):
        pattern = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)
        for m in pattern.finditer(text):
            if m.group(0).startswith("/"):
                yield text.count("\n", 0, m.start()) + 1, m.group(0)
    else:
        for i, line in enumerate(text.split("\n"), 1):
            m = re.search(r"(?:^|\s)#(?!!)(.*)$", line)
            if m:
                yield i, m.group(1)


def check_citations(path, text):
    for first_line, comment in comments(path, text):
        sources_at = [(m.start(), m.group("md") or m.group("other")) for m in CITE_SOURCE.finditer(comment)]
        for m in SECTION.finditer(comment):
            bound = [name for at, name in sources_at if at < m.start()]
            doc = bound[-1] if bound else DEFAULT_DOC
            if doc.startswith("./"):
                doc = doc[2:]
            if re.fullmatch(r"[\w-]+\.md", doc) and doc_headings("docs/" + doc) is not None:
                doc = "docs/" + doc  # "HEALTH.md §4" beside docs/HEALTH.md
            line = first_line + comment.count("\n", 0, m.start())
            numbers = doc_headings(doc) if doc.endswith(".md") else None
            if numbers is None:
                offend(path, line, "cited-sections", f"§{m.group(1)} of {doc}, which is not a file of docs/")
            elif m.group(1) not in numbers:
                offend(path, line, "cited-sections", f"§{m.group(1)} is no heading of {doc}")


def citing_sources():
    for top in PRODUCTION + ("tests",):
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if d not in ("corpus", "data")]
            for name in filenames:
                if name.endswith((".c", ".h", ".py", ".sh")) or name == "meson.build":
                    yield os.path.join(dirpath, name)


for path in citing_sources():
    with open(path, encoding="utf-8", errors="replace") as f:
        check_citations(path, f.read())

for path in sources():
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    top, _ = area(path)
    for i, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if m:
            check_include(path, i, m.group(1), m.group(2))
        m = QUARK.search(line)
        if m and "#define" not in line:
            domain, func = m.group(1), m.group(2)
            expected = func.replace("_", "-") + "-quark"
            if domain != expected:
                offend(path, i, "error-quark", f"domain '{domain}' should be '{expected}'")
        if top in PRODUCTION:
            m = ENV.search(line)
            if m:
                offend(path, i, "test-hooks", f"production code reads ${m.group(1)}")
    limit = max(MAX_LINES, OVER_THE_LIMIT.get(os.path.relpath(path, ROOT), 0))
    if top in PRODUCTION and path.endswith(".c") and len(lines) - 1 > limit:
        offend(path, len(lines) - 1, "file-size", f"{len(lines) - 1} lines (at most {limit})")

for line in offences:
    print(line)
print(f"{len(offences)} offence(s)")
sys.exit(1 if offences else 0)
