#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every screenshot the AppStream metainfo announces exists in the tree.

appstreamcli validate --no-net cannot fetch the images, so a metainfo that points to
https://raw.githubusercontent.com/<owner>/<repo>/<branch>/<path> is only checked for syntax; this
test checks that <path> is a PNG in the source tree, at least 620×350 (what software centres
show without upscaling), with a caption.

usage: check-screenshots.py SOURCE_ROOT METAINFO_IN
"""
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET

RAW = re.compile(r"^https://raw\.githubusercontent\.com/[^/]+/[^/]+/[^/]+/(.+)$")


def main():
    root, metainfo = sys.argv[1], sys.argv[2]
    problems = []
    shots = ET.parse(metainfo).getroot().findall("./screenshots/screenshot")
    if not shots:
        problems.append(f"{metainfo}: no <screenshot>")
    defaults = [s for s in shots if s.get("type") == "default"]
    if len(defaults) != 1:
        problems.append(f"{metainfo}: {len(defaults)} default screenshots, want exactly 1")
    for shot in shots:
        url = (shot.findtext("image") or "").strip()
        caption = (shot.findtext("caption") or "").strip()
        m = RAW.match(url)
        if not m:
            problems.append(f"{url}: not a raw.githubusercontent.com URL of a file in this tree")
            continue
        path = os.path.join(root, m.group(1))
        if not caption:
            problems.append(f"{url}: screenshot without a caption")
        if not os.path.isfile(path):
            problems.append(f"{m.group(1)}: announced by the metainfo but not in the tree")
            continue
        with open(path, "rb") as f:
            head = f.read(24)
        if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
            problems.append(f"{m.group(1)}: not a PNG")
            continue
        width, height = struct.unpack(">II", head[16:24])
        if width < 620 or height < 350:
            problems.append(f"{m.group(1)}: {width}×{height} is smaller than 620×350")
        print(f"{m.group(1)}: {width}×{height}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
