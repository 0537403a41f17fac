"""Install the built zips into a throw-away Blender user folder (a child Python with bpy 4.5): as an
extension and as a classic add-on; both enable, register the operators, and the preference 'Binary'
is what the bake uses."""

import importlib.util
import os
import subprocess
import sys

import pytest

from clothbake_testutil import PLUGIN_DIR

pytest.importorskip("bpy")

spec = importlib.util.spec_from_file_location("clothbake_build_extension_i", os.path.join(PLUGIN_DIR, "build_extension.py"))
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)

CHILD = r"""
import os, sys, bpy
kind, zip_path, fake_bin = sys.argv[1:4]
if kind == "extension":
    assert bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True) == {"FINISHED"}
    module = "bl_ext.user_default.clothbake"
else:
    assert bpy.ops.preferences.addon_install(filepath=zip_path) == {"FINISHED"}
    module = "clothbake"
    bpy.ops.preferences.addon_enable(module=module)
addon = bpy.context.preferences.addons[module]
assert bpy.ops.clothbake.bake.poll() and bpy.ops.clothbake.free.poll()
assert hasattr(bpy.types.Object, "clothbake") and hasattr(bpy.types.Scene, "clothbake")
assert bpy.types.Panel.bl_rna_get_subclass_py("PHYSICS_PT_clothbake") is not None
addon.preferences.binary_path = fake_bin
os.environ["CLOTHBAKE_BIN"] = "/elsewhere/clothbake"
pkg = sys.modules[module]
assert pkg.bake_job.find_binary(bpy.context) == fake_bin
bpy.ops.preferences.addon_disable(module=module)
assert not hasattr(bpy.types.Scene, "clothbake")
print("INSTALL-OK", module)
"""


@pytest.mark.parametrize("kind", ["extension", "classic"])
def test_zip_installs_and_enables(tmp_path, kind):
    zip_path = str(tmp_path / f"clothbake-{kind}.zip")
    if kind == "extension":
        build.build_extension(zip_path)
    else:
        build.build_classic(zip_path)
    fake_bin = tmp_path / "my-clothbake"
    fake_bin.write_text("#!/bin/sh\n")
    fake_bin.chmod(0o755)
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    child = subprocess.run(
        [sys.executable, "-c", CHILD, kind, zip_path, str(fake_bin)], capture_output=True, text=True, env=env, timeout=300
    )
    assert "INSTALL-OK" in child.stdout, child.stdout[-3000:] + child.stderr[-3000:]
