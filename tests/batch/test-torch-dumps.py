#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The committed slime / miles torch dumps (tests/data/torch/) are what make-torch-dumps.py writes.

test-batch-torch reads those committed files; this test runs the generator again with torch into
a temporary folder and compares every file it writes with the committed one: byte for byte, except
that a zip archive (every .pt) is compared member by member (name, order, content), since Python's
zipfile stamps the members it writes by hand (the hostile cases) with the current time. It fails
when the generator was changed without regenerating the data (or the data edited by hand), when a
committed case is no longer written, or when this torch serialises differently from the one that
wrote them (Debian bookworm's python3-torch 1.13). Without torch it is skipped (exit 77).
"""
import os
import subprocess
import sys
import tempfile
import zipfile

try:
    import torch
except ImportError as e:
    print(f"SKIP: python3-torch is not installed ({e}); regenerating the .pt dumps needs it")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.environ.get("DW_TEST_DATA") or os.path.join(HERE, "..", "data"), "torch")
# in tests/data/torch but not written by make-torch-dumps.py
NOT_GENERATED = {"tokenizer.json"}


def tree(root):
    files = set()
    for folder, _, names in os.walk(root):
        for name in names:
            files.add(os.path.relpath(os.path.join(folder, name), root))
    return files


def members(path):
    with zipfile.ZipFile(path) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def differs(fresh, committed):
    """None when the two files hold the same data, else what differs."""
    with open(fresh, "rb") as f:
        fresh_bytes = f.read()
    with open(committed, "rb") as f:
        committed_bytes = f.read()
    if fresh_bytes == committed_bytes:
        return None
    if not (zipfile.is_zipfile(fresh) and zipfile.is_zipfile(committed)):
        return f"{len(fresh_bytes)} bytes written, {len(committed_bytes)} committed, contents differ"
    fresh_members, committed_members = members(fresh), members(committed)
    fresh_names = [name for name, _ in fresh_members]
    committed_names = [name for name, _ in committed_members]
    if fresh_names != committed_names:
        return f"archive members {fresh_names} written, {committed_names} committed"
    for (name, fresh_data), (_, committed_data) in zip(fresh_members, committed_members):
        if fresh_data != committed_data:
            return f"archive member {name} differs"
    return None


def main():
    with tempfile.TemporaryDirectory(prefix="dw-torch-dumps-") as out:
        subprocess.run([sys.executable, os.path.join(HERE, "make-torch-dumps.py"), out],
                       check=True)
        written, committed = tree(out), tree(DATA) - NOT_GENERATED
        problems = [f"{rel}: written but not committed" for rel in sorted(written - committed)]
        problems += [f"{rel}: committed but no longer written" for rel in sorted(committed - written)]
        for rel in sorted(written & committed):
            why = differs(os.path.join(out, rel), os.path.join(DATA, rel))
            if why:
                problems.append(f"{rel}: {why}")
        if problems:
            print(f"tests/data/torch differs from what make-torch-dumps.py writes with torch "
                  f"{torch.__version__} (the data was written with 1.13):", file=sys.stderr)
            for problem in problems:
                print("  " + problem, file=sys.stderr)
            return 1
        print(f"torch {torch.__version__}: the {len(written)} files make-torch-dumps.py writes "
              "equal the committed tests/data/torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
