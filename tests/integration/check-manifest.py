#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""flatpak/<app-id>.json is a manifest flatpak-builder can use for this tree.

Checks what would otherwise only fail on a machine with flatpak-builder and network:
valid JSON; app id equal to the project's (and to the desktop file / metainfo / gschema ids);
the command is an executable meson installs; the runtime is the GNOME runtime whose GTK and
libadwaita match the versions the project pins (43: GTK 4.8, libadwaita 1.2); every archive
source is https with a sha256; the app module is built from this directory with meson;
every pkg-config dependency of the project is either in the GNOME runtime or built by a module.

usage: check-manifest.py SOURCE_ROOT APP_ID
"""
import json
import os
import re
import sys

# pkg-config names the GNOME 43 runtime (freedesktop SDK 22.08 underneath) provides.
GNOME_43_PROVIDES = {
    "glib-2.0", "gio-2.0", "gio-unix-2.0", "gobject-2.0", "json-glib-1.0", "sqlite3", "zlib",
    "gtk4", "libadwaita-1", "cairo", "pango", "pangocairo",
}
# Which module provides which pkg-config name when the runtime does not.
MODULE_PROVIDES = {"libyaml": "yaml-0.1", "libzip": "libzip"}


def main():
    root, app_id = sys.argv[1], sys.argv[2]
    path = os.path.join(root, "flatpak", f"{app_id}.json")
    problems = []
    try:
        with open(path, encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{path}: {e}")
        return 1

    rel = os.path.relpath(path, root)
    got_id = m.get("app-id", m.get("id"))
    if got_id != app_id:
        problems.append(f"{rel}: app-id {got_id!r}, the project's is {app_id!r}")
    for data in (f"data/{app_id}.desktop.in.in", f"data/{app_id}.metainfo.xml.in.in",
                 f"data/{app_id}.gschema.xml"):
        if not os.path.isfile(os.path.join(root, data)):
            problems.append(f"{data}: missing, so the app id {app_id} has no data file")
    with open(os.path.join(root, "data", f"{app_id}.gschema.xml"), encoding="utf-8") as f:
        if f'<schema id="{app_id}"' not in f.read():
            problems.append(f"data/{app_id}.gschema.xml: no schema with id {app_id}")

    if m.get("runtime") != "org.gnome.Platform" or m.get("sdk") != "org.gnome.Sdk":
        problems.append(f"{rel}: runtime/sdk must be org.gnome.Platform/org.gnome.Sdk")
    if m.get("runtime-version") != "43":
        problems.append(f"{rel}: runtime-version {m.get('runtime-version')!r}: GNOME 43 ships the "
                        "GTK 4.8 / libadwaita 1.2 the code is pinned to")

    with open(os.path.join(root, "app", "meson.build"), encoding="utf-8") as f:
        executables = re.findall(r"executable\(\s*'([^']+)'", f.read())
    if m.get("command") not in executables:
        problems.append(f"{rel}: command {m.get('command')!r} is not one of {executables}")

    args = m.get("finish-args", [])
    for needed in ("--share=ipc", "--socket=wayland", "--socket=fallback-x11", "--device=dri"):
        if needed not in args:
            problems.append(f"{rel}: finish-args lacks {needed}")
    if not any(a.startswith("--filesystem=home") or a.startswith("--filesystem=host") for a in args):
        problems.append(f"{rel}: no --filesystem giving access to run folders")

    modules = m.get("modules", [])
    names = [mod.get("name") for mod in modules if isinstance(mod, dict)]
    if not modules or names[-1] != m.get("command"):
        problems.append(f"{rel}: the last module must be the app itself ({m.get('command')})")
    for mod in modules:
        for src in mod.get("sources", []):
            if src.get("type") in ("archive", "file"):
                if not src.get("url", "").startswith("https://"):
                    problems.append(f"{rel}: {mod['name']}: source URL is not https")
                if not re.fullmatch(r"[0-9a-f]{64}", src.get("sha256", "")):
                    problems.append(f"{rel}: {mod['name']}: source without a sha256")
    app = modules[-1] if modules else {}
    if app.get("buildsystem") != "meson":
        problems.append(f"{rel}: the app module must use buildsystem meson")
    srcs = app.get("sources", [])
    if not srcs or srcs[0].get("type") != "dir" or \
            os.path.realpath(os.path.join(os.path.dirname(path), srcs[0].get("path", ""))) != \
            os.path.realpath(root):
        problems.append(f"{rel}: the app module must build this source tree (type dir, path ..)")

    # Every dependency('x') of the project comes from the runtime or from a module.
    provided = set(GNOME_43_PROVIDES) | {MODULE_PROVIDES[n] for n in names if n in MODULE_PROVIDES}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "build", "_build"))]
        if "meson.build" in filenames:
            with open(os.path.join(dirpath, "meson.build"), encoding="utf-8") as f:
                for dep in re.findall(r"(?<![_\w])dependency\(\s*'([^']+)'", f.read()):
                    if dep not in provided:
                        where = os.path.relpath(os.path.join(dirpath, "meson.build"), root)
                        problems.append(f"{where}: dependency '{dep}' is neither in the GNOME 43 "
                                        f"runtime nor built by a module of {rel}")

    for p in problems:
        print(p)
    print(f"{rel}: {len(modules)} modules, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
