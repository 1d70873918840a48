#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every translation in po/LINGUAS is usable and honest.

For each language: the .po parses, has no fuzzy entries and no empty translations
(msgfmt would silently fall back to English for those), keeps every printf directive of its
msgid in the same order (msgfmt --check also does that, this names the entry), and is at
least partly current: most of its msgids still exist in the template xgettext extracts from
po/POTFILES.in now. Strings added since the last update are reported, not failed: a
translation lags behind new code, and that is normal.

usage: check-translations.py SOURCE_ROOT XGETTEXT
"""
import os
import re
import subprocess
import sys
import tempfile

FORMAT = re.compile(r"%(?:\d+\$)?[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?"
                    r"(?:<PRI\w+>|(?:hh|h|ll|l|L|j|z|t)?[diouxXeEfFgGaAcsp%])")


def unquote(s):
    return bytes(s, "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")


def parse_po(path):
    """Returns a list of dicts: msgctxt, msgid, msgid_plural, msgstr (list), flags, line."""
    entries = []
    cur = None
    field = None

    def flush():
        if cur is not None and "msgid" in cur:
            entries.append(cur)

    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip():
                flush()
                cur, field = None, None
                continue
            if line.startswith("#~"):
                continue  # obsolete
            if cur is None:
                cur = {"flags": set(), "msgstr": {}, "line": n}
            if line.startswith("#,"):
                cur["flags"].update(x.strip() for x in line[2:].split(","))
                continue
            if line.startswith("#"):
                continue
            m = re.match(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+"(.*)"$', line)
            if m:
                key, idx, val = m.group(1), m.group(2), unquote(m.group(3))
                if key.startswith("msgstr"):
                    field = ("msgstr", int(idx) if idx else 0)
                    cur["msgstr"][field[1]] = val
                else:
                    if "msgid" in cur and key in ("msgid", "msgctxt") and "msgstr" in cur and cur["msgstr"]:
                        flush()
                        cur = {"flags": set(), "msgstr": {}, "line": n}
                    field = key
                    cur[key] = val
                continue
            m = re.match(r'^"(.*)"$', line)
            if m and field is not None:
                val = unquote(m.group(1))
                if isinstance(field, tuple):
                    cur["msgstr"][field[1]] += val
                else:
                    cur[field] += val
                continue
            raise SystemExit(f"{path}:{n}: cannot parse: {line}")
    flush()
    return entries


def directives(s):
    """The printf directives in argument order; positional ones (%2$s) are put back in place."""
    found = [d for d in FORMAT.findall(s) if d != "%%"]
    if any("$" in d for d in found):
        numbered = sorted((int(re.match(r"%(\d+)\$", d).group(1)), d) for d in found if "$" in d)
        found = [re.sub(r"^%\d+\$", "%", d) for _, d in numbered]
    return found


def main():
    root, xgettext = sys.argv[1], sys.argv[2]
    po_dir = os.path.join(root, "po")
    with tempfile.TemporaryDirectory() as tmp:
        pot = os.path.join(tmp, "driftwatch.pot")
        # The arguments of meson's i18n.gettext(preset: 'glib').
        cmd = [xgettext, "--package-name=driftwatch", "-p", tmp, "-D", root,
               "-f", os.path.join(po_dir, "POTFILES.in"), "-o", "driftwatch.pot",
               "--from-code=UTF-8", "--add-comments", "--keyword=_", "--keyword=N_",
               "--keyword=C_:1c,2", "--keyword=NC_:1c,2", "--keyword=g_dcgettext:2",
               "--keyword=g_dngettext:2,3", "--keyword=g_dpgettext2:2c,3",
               "--flag=N_:1:pass-c-format", "--flag=C_:2:pass-c-format",
               "--flag=NC_:2:pass-c-format", "--flag=g_dngettext:2:pass-c-format",
               "--flag=g_strdup_printf:1:c-format", "--flag=g_string_printf:2:c-format",
               "--flag=g_string_append_printf:2:c-format", "--flag=g_error_new:3:c-format",
               "--flag=g_set_error:4:c-format", "--flag=g_markup_printf_escaped:1:c-format",
               "--flag=g_log:3:c-format", "--flag=g_print:1:c-format",
               "--flag=g_printerr:1:c-format", "--flag=g_printf:1:c-format",
               "--flag=g_fprintf:2:c-format", "--flag=g_sprintf:2:c-format",
               "--flag=g_snprintf:3:c-format"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr)
            print("xgettext failed on po/POTFILES.in")
            return 1
        template = {(e.get("msgctxt"), e["msgid"]) for e in parse_po(pot) if e["msgid"]}

    with open(os.path.join(po_dir, "LINGUAS"), encoding="utf-8") as f:
        langs = [w for line in f if not line.startswith("#") for w in line.split()]
    if not langs:
        print("po/LINGUAS lists no language")
        return 1

    problems = 0
    for lang in langs:
        path = os.path.join(po_dir, f"{lang}.po")
        entries = [e for e in parse_po(path) if e["msgid"]]
        translated = 0
        for e in entries:
            where = f"po/{lang}.po:{e['line']}"
            label = e["msgid"][:60].replace("\n", "\\n")
            if "fuzzy" in e["flags"]:
                print(f"{where}: fuzzy: {label}")
                problems += 1
                continue
            if any(not s for s in e["msgstr"].values()):
                print(f"{where}: untranslated: {label}")
                problems += 1
                continue
            if "c-format" in e["flags"]:
                want = directives(e["msgid"])
                for i, s in e["msgstr"].items():
                    ref = want if i == 0 or "msgid_plural" not in e else directives(e["msgid_plural"])
                    got = directives(s)
                    # Plural forms may leave out the number in the singular (German "eine").
                    if got != ref and not ("msgid_plural" in e and [d for d in ref if d not in got] == ref[:1] and got == ref[1:]):
                        print(f"{where}: format directives {got} != {ref}: {label}")
                        problems += 1
            if (e.get("msgctxt"), e["msgid"]) in template:
                translated += 1
        missing = len(template) - translated
        share = translated / len(template) if template else 1.0
        print(f"{lang}: {translated} of {len(template)} template strings translated "
              f"({share:.0%}), {missing} new since the last update, "
              f"{sum(1 for e in entries if (e.get('msgctxt'), e['msgid']) not in template)} obsolete")
        # A translation that no longer matches most of the program is not a real translation.
        if share < 0.5:
            print(f"po/{lang}.po: fewer than half of the template strings are translated")
            problems += 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
