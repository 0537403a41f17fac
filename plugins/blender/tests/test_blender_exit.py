"""A plain Python process that imports bpy, enables the add-on and bakes exits by itself (issue 12,
item 5). bpy 4.5 as a module used to hang at interpreter shutdown, in its own static destructor,
while a class registered by a script calling ``clothbake.register()`` was still registered (see
clothbake/__init__.py); the add-on now unregisters itself at exit."""

import subprocess
import sys
import time

import pytest

from clothbake_testutil import HERE, PLUGIN_DIR, clothbake_binary

pytest.importorskip("bpy")

CHILD = r"""
import sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import pathlib
import bpy
from clothbake_testutil import make_garment
bpy.ops.wm.read_factory_settings(use_empty=True)
if sys.argv[3] == "register":  # what a pipeline script does
    import clothbake
    clothbake.register()
else:  # what Preferences > Add-ons does
    import addon_utils
    addon_utils.enable("clothbake", default_set=True)
scene = bpy.context.scene
scene.clothbake.output_dir = str(pathlib.Path(sys.argv[4]) / "bakes")
scene.clothbake.frame_start, scene.clothbake.frame_end = 1, 4
make_garment(scene, "Cloth", (0, 0, 1), (0, 0, 0), (1, 1, 1), cells=3)
if sys.argv[5] == "bake":
    print("RESULT", bpy.ops.clothbake.bake(), scene.clothbake.status, flush=True)
else:
    print("RESULT registered", hasattr(bpy.types.Scene, "clothbake"), flush=True)
"""


@pytest.mark.parametrize("how", ["register", "addon_utils"])
@pytest.mark.parametrize("bake", ["bake", "no-bake"])
def test_script_with_the_addon_exits_by_itself(tmp_path, how, bake):
    import os

    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if bake == "bake":
        env["CLOTHBAKE_BIN"] = clothbake_binary()
    began = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, HERE, PLUGIN_DIR, how, str(tmp_path), bake],
                              capture_output=True, text=True, timeout=90, env=env)
    except subprocess.TimeoutExpired as e:  # the hang: the child is killed by run()
        pytest.fail(f"the process did not exit within 90 s after the script returned: {(e.stdout or b'')[-500:]!r}")
    seconds = time.monotonic() - began
    result = [line for line in done.stdout.splitlines() if line.startswith("RESULT")]
    assert done.returncode == 0, done.stderr[-2000:]
    if bake == "bake":
        assert len(result) == 1 and result[0].startswith("RESULT {'FINISHED'} ClothBake: baked 1 garment(s), 4 frames"), done.stdout
    else:
        assert result == ["RESULT registered True"], done.stdout
    print(f"{how}, {bake}: exited in {seconds:.1f} s")
    assert seconds < 60
