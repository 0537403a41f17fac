"""Failed, refused and cancelled bakes in real Blender (bpy 4.5) leave the scene and the disk as they
were — no modifier, no stray files — and say why."""

import os
import time

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from clothbake_testutil import (  # noqa: E402
    addon,
    clothbake_binary,
    files_under,
    make_garment,
    make_sphere,
    new_scene,
)


def small_scene(tmp_path, frame_end=12):
    addon()
    scene = new_scene(tmp_path)
    scene.clothbake.frame_start, scene.clothbake.frame_end = 1, frame_end
    garment = make_garment(scene, "Cloth", location=(0.0, 0.0, 1.0), rotation=(0.0, 0.0, 0.3), scale=(1.0, 1.0, 1.0), cells=8)
    make_sphere(scene, "Ball", 0.25, {1: (0.0, 0.1, 0.4), 12: (0.0, 0.1, 0.8)})
    return scene, garment


def snapshot(scene):
    """What a failed bake must not change: every object's modifiers and mesh, the frame, the data-blocks."""
    bpy.context.view_layer.update()  # matrix_world of objects made in a script is stale until evaluated
    objects = {}
    for obj in scene.objects:
        mods = [(m.name, m.type, getattr(m, "filepath", None)) for m in obj.modifiers]
        co = np.array([v.co[:] for v in obj.data.vertices]) if obj.type == "MESH" else None
        objects[obj.name] = (mods, co, tuple(map(tuple, obj.matrix_world)))
    counts = (len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.actions))
    return scene.frame_current, counts, objects


def assert_unchanged(before, after):
    assert before[0] == after[0] and before[1] == after[1]
    assert before[2].keys() == after[2].keys()
    for name, (mods, co, matrix) in before[2].items():
        mods2, co2, matrix2 = after[2][name]
        assert mods == mods2, name
        assert matrix == matrix2, name
        assert (co is None and co2 is None) or np.array_equal(co, co2), name


def test_missing_binary_changes_nothing_and_says_so(tmp_path, monkeypatch):
    scene, garment = small_scene(tmp_path)
    missing = str(tmp_path / "no" / "clothbake")
    monkeypatch.setenv("CLOTHBAKE_BIN", missing)
    before = snapshot(scene)
    with pytest.raises(RuntimeError, match=r"clothbake binary not found: CLOTHBAKE_BIN is '.*no/clothbake', which is not an executable file"):
        bpy.ops.clothbake.bake()
    with pytest.raises(RuntimeError, match="clothbake binary not found"):
        bpy.ops.clothbake.bake("INVOKE_DEFAULT")  # the button's path: in background mode it blocks too
    assert_unchanged(before, snapshot(scene))
    assert len(garment.modifiers) == 0
    assert not os.path.exists(tmp_path / "bakes")
    assert "clothbake binary not found" in scene.clothbake.status


def test_frame_range_error_is_reported_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    scene, garment = small_scene(tmp_path)
    scene.clothbake.frame_start, scene.clothbake.frame_end = 10, 3
    before = snapshot(scene)
    with pytest.raises(RuntimeError, match="End frame 3 is before Start frame 10"):
        bpy.ops.clothbake.bake()
    assert_unchanged(before, snapshot(scene))
    assert not os.path.exists(tmp_path / "bakes")


def test_settings_the_binary_rejects_leave_no_trace(tmp_path, monkeypatch):
    """Stretch 0 passes the add-on (its minimum is 0) but the binary refuses it with exit code 2."""
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    scene, garment = small_scene(tmp_path)
    garment.clothbake.use_stretch = True
    garment.clothbake.stretch = (0.0, 1000.0)
    before = snapshot(scene)
    with pytest.raises(RuntimeError, match=r"garment\[0\]\.stretch\[0\].*bad usage or bad input"):
        bpy.ops.clothbake.bake()
    assert_unchanged(before, snapshot(scene))
    assert files_under(tmp_path / "bakes") == []
    assert not os.path.exists(tmp_path / "bakes")
    assert "stretch" in scene.clothbake.status


def test_cancelled_bake_keeps_the_previous_bake_and_removes_its_own_files(tmp_path, monkeypatch):
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    clothbake = addon()
    scene, garment = small_scene(tmp_path, frame_end=6)
    assert bpy.ops.clothbake.bake() == {"FINISHED"}
    kept = files_under(tmp_path / "bakes")
    assert any(f.endswith("Cloth.pc2") for f in kept)

    scene.clothbake.frame_end = 400  # long enough to still be running when cancelled
    scene.clothbake.substeps = 20
    before = snapshot(scene)
    job = clothbake.bake_job.BakeJob(bpy.context)  # what the modal operator runs; Esc calls cancel()
    job.start(bpy.context)
    bake_dir = job.bake_dir
    assert os.path.isfile(os.path.join(bake_dir, "scene.toml"))
    deadline = time.monotonic() + 60
    while job.process.done < 1 and job.running() and time.monotonic() < deadline:
        job.poll(timeout=0.1)
    assert job.running(), "the bake ended before it could be cancelled"
    pid = job.process.pid
    job.cancel()
    assert job.process.finished() and job.process.returncode != 0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the child is gone (reaped)
    assert not os.path.exists(bake_dir)
    assert_unchanged(before, snapshot(scene))
    assert files_under(tmp_path / "bakes") == kept  # the earlier bake is untouched
    assert bpy.path.abspath(garment.modifiers["ClothBake"].filepath) in kept
