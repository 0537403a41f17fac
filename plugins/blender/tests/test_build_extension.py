"""The extension zip: built by every available builder, same files, valid for Blender's validator."""

import importlib.util
import os
import subprocess
import sys
import zipfile

import pytest

from clothbake_testutil import PLUGIN_DIR

spec = importlib.util.spec_from_file_location("clothbake_build_extension", os.path.join(PLUGIN_DIR, "build_extension.py"))
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)

EXPECTED = {
    "__init__.py", "blender_manifest.toml", "bake_job.py", "cache_modifier.py", "export.py", "operators.py",
    "panel.py", "preferences.py", "properties.py", "runner.py", "scene_toml.py",
}


def test_zip_builder_packs_the_package_without_caches(tmp_path):
    pycache = os.path.join(build.SOURCE, "__pycache__")
    os.makedirs(pycache, exist_ok=True)  # must be left out even when present
    out = tmp_path / "clothbake.zip"
    assert build.build_extension(str(out), "zip") == "zip"
    names = set(zipfile.ZipFile(out).namelist())
    assert names == EXPECTED


def test_classic_zip_has_the_addon_folder(tmp_path):
    out = tmp_path / "classic.zip"
    build.build_classic(str(out))
    assert set(zipfile.ZipFile(out).namelist()) == {f"clothbake/{n}" for n in EXPECTED}


@pytest.mark.skipif(build._bpy_builder() is None, reason="Blender's extension builder (bpy module) is not installed")
def test_blenders_own_builder_agrees_and_validates(tmp_path):
    out = tmp_path / "clothbake.zip"
    assert build.build_extension(str(out), "bpy") == "bpy"
    assert set(zipfile.ZipFile(out).namelist()) == EXPECTED
    mine = tmp_path / "mine.zip"
    build.build_extension(str(mine), "zip")
    check = subprocess.run([sys.executable, build._bpy_builder(), "validate", str(mine)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
