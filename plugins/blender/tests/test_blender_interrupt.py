"""Ctrl+C (SIGINT) during a blocking bake (scripts, blender -b) cancels it cleanly: the child
binary is ended, the bake folder is removed and no modifier is added."""

import os
import signal
import subprocess
import sys
import time

import pytest

from clothbake_testutil import HERE, clothbake_binary

pytest.importorskip("bpy")

CHILD = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
import bpy
from clothbake_testutil import addon, make_garment, new_scene
import pathlib
addon()
scene = new_scene(pathlib.Path(sys.argv[2]))
scene.clothbake.frame_start, scene.clothbake.frame_end, scene.clothbake.substeps = 1, 2000, 20
garment = make_garment(scene, "Cloth", (0, 0, 1), (0, 0, 0), (1, 1, 1), cells=8)
try:
    result = bpy.ops.clothbake.bake()
except RuntimeError as e:
    result = str(e).strip()
print("RESULT", result, "| MODIFIERS", len(garment.modifiers), "| STATUS", scene.clothbake.status, flush=True)
"""


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_sigint_cancels_a_blocking_bake(tmp_path):
    env = dict(os.environ, CLOTHBAKE_BIN=clothbake_binary(), PYTHONUNBUFFERED="1")
    child = subprocess.Popen([sys.executable, "-c", CHILD, HERE, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    deadline = time.monotonic() + 120
    for line in child.stdout:  # progress lines: "ClothBake: 3/2000 frames ..."
        lines.append(line)
        if (line.startswith("ClothBake: ") and "/2000 frames" in line) or time.monotonic() > deadline:
            break
    assert any("/2000 frames" in line for line in lines), "".join(lines)[-2000:]
    bake_dirs = os.listdir(tmp_path / "bakes")
    assert len(bake_dirs) == 1
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    result = [line for line in out.splitlines() if line.startswith("RESULT")]
    assert result == ["RESULT Error: ClothBake: bake cancelled | MODIFIERS 0 | STATUS ClothBake: bake cancelled"], out[-2000:]
    assert not os.path.exists(tmp_path / "bakes")
