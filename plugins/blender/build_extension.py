#!/usr/bin/env python3
"""Build the ClothBake add-on zips into plugins/blender/dist/.

    python3 plugins/blender/build_extension.py            # extension zip (Blender 4.2+)
    python3 plugins/blender/build_extension.py --classic  # also a classic add-on zip (clothbake/ folder)

The extension zip is built with Blender's own extension builder (``blender --command extension
build``): through ``$BLENDER`` / ``blender`` on PATH if that is Blender 4.2+, else by running the
builder script that ships inside the ``bpy`` module (``bl_pkg/cli/blender_ext.py``), else by zipping
the package the same way (manifest at the zip root, ``[build] paths_exclude_pattern`` honoured for the
patterns the manifest uses). Install it with Edit > Preferences > Get Extensions > Install from Disk,
or ``blender --command extension install-file -r user_default dist/clothbake-<version>.zip``.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "clothbake")
DIST = os.path.join(HERE, "dist")


def manifest() -> dict:
    with open(os.path.join(SOURCE, "blender_manifest.toml"), "rb") as f:
        return tomllib.load(f)


def package_files(exclude: list[str]) -> list[str]:
    """Paths (relative to the package, '/'-separated) that go into a zip."""
    files = []
    for folder, dirs, names in os.walk(SOURCE):
        rel_folder = os.path.relpath(folder, SOURCE).replace(os.sep, "/")
        rel_folder = "" if rel_folder == "." else rel_folder + "/"
        dirs[:] = sorted(d for d in dirs if not _excluded(rel_folder + d + "/", exclude))
        files.extend(rel_folder + n for n in sorted(names) if not _excluded(rel_folder + n, exclude))
    return files


def _excluded(rel: str, patterns: list[str]) -> bool:
    """gitignore-style subset: 'name/' matches folders, other patterns match file names."""
    is_dir = rel.endswith("/")
    name = rel.rstrip("/").split("/")[-1]
    for p in patterns:
        if p.endswith("/") != is_dir:
            continue
        if fnmatch.fnmatch(name, p.strip("/")):
            return True
    return False


def _zip(path: str, files: list[str], prefix: str) -> None:
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for rel in files:
            z.write(os.path.join(SOURCE, rel), prefix + rel)
    os.replace(tmp, path)


def _blender_binary() -> str | None:
    exe = os.environ.get("BLENDER") or shutil.which("blender")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.split()
    if len(words) >= 2 and words[0] == "Blender":
        major_minor = tuple(int(x) for x in words[1].split(".")[:2] if x.isdigit())
        if major_minor >= (4, 2):
            return exe
    return None


def _bpy_builder() -> str | None:
    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = list(spec.submodule_search_locations)[0]
    for version in sorted(os.listdir(root), reverse=True):
        script = os.path.join(root, version, "scripts", "addons_core", "bl_pkg", "cli", "blender_ext.py")
        if os.path.isfile(script):
            return script
    return None


def build_extension(output: str, builder: str = "auto") -> str:
    """Build the extension zip at ``output``; returns which builder made it."""
    os.makedirs(os.path.dirname(output), exist_ok=True)
    args = ["build", "--source-dir", SOURCE, "--output-filepath", output]
    if builder in ("auto", "blender"):
        exe = _blender_binary()
        if exe:
            subprocess.run([exe, "--factory-startup", "--command", "extension", *args], check=True)
            return "blender"
    if builder in ("auto", "bpy"):
        script = _bpy_builder()
        if script:
            subprocess.run([sys.executable, script, *args], check=True)
            return "bpy"
    if builder in ("auto", "zip"):
        exclude = manifest().get("build", {}).get("paths_exclude_pattern", [])
        _zip(output, package_files(exclude), prefix="")
        return "zip"
    raise SystemExit(f"builder '{builder}' is not available here")


def build_classic(output: str) -> None:
    """A classic add-on zip: the ``clothbake/`` folder (bl_info in __init__.py)."""
    exclude = manifest().get("build", {}).get("paths_exclude_pattern", [])
    _zip(output, package_files(exclude), prefix="clothbake/")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", default=DIST)
    parser.add_argument("--builder", choices=("auto", "blender", "bpy", "zip"), default="auto")
    parser.add_argument("--classic", action="store_true", help="also build clothbake-<version>-classic.zip")
    args = parser.parse_args(argv)
    m = manifest()
    out = os.path.join(os.path.abspath(args.output_dir), f"{m['id']}-{m['version']}.zip")
    how = build_extension(out, args.builder)
    print(f"extension: {out} (built with {how})")
    if args.classic:
        classic = os.path.join(os.path.abspath(args.output_dir), f"{m['id']}-{m['version']}-classic.zip")
        build_classic(classic)
        print(f"classic add-on: {classic}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
