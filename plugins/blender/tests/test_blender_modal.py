"""The modal bake (what the Bake button runs) driven event by event: background Blender has no
window to deliver timer or key events, so the operator's modal() gets stand-in events and a
recording window manager / workspace / area, while the bake itself is real."""

import os
import time
import types

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from clothbake_testutil import addon, clothbake_binary, evaluated_local, files_under, make_garment, make_sphere, new_scene, read_pc2  # noqa: E402


class Recorder:
    """Window manager, workspace and area stand-ins that record what the operator shows."""

    def __init__(self):
        self.status, self.header, self.progress = [], [], []
        self.clothbake_running = True
        self.timer_removed = self.progress_ended = False

    # window manager
    def event_timer_remove(self, timer):
        self.timer_removed = timer == "TIMER-HANDLE"

    def progress_update(self, value):
        self.progress.append(value)

    def progress_end(self):
        self.progress_ended = True

    # workspace
    def status_text_set(self, text):
        self.status.append(text)

    # area
    def header_text_set(self, text):
        self.header.append(text)

    def tag_redraw(self):
        pass


def start_modal(scene):
    clothbake = addon()
    cls = clothbake.operators.CLOTHBAKE_OT_bake
    ui = Recorder()
    context = types.SimpleNamespace(window_manager=ui, workspace=ui, area=ui, scene=scene)
    reports = []
    op = types.SimpleNamespace(_area=ui, _timer="TIMER-HANDLE", report=lambda kind, msg: reports.append((kind, msg)))
    op._show = lambda c: cls._show(op, c)
    op._stop = lambda c: cls._stop(op, c)
    op._job = clothbake.bake_job.BakeJob(bpy.context)
    op._job.start(bpy.context)
    return cls, op, context, ui, reports


def event(kind, value="NOTHING"):
    return types.SimpleNamespace(type=kind, value=value)


def scene_with_cloth(tmp_path, frame_end):
    addon()
    scene = new_scene(tmp_path)
    scene.clothbake.frame_start, scene.clothbake.frame_end = 1, frame_end
    garment = make_garment(scene, "Cloth", location=(0.0, 0.0, 1.0), rotation=(0.0, 0.0, 0.2), scale=(1.0, 1.0, 1.0), cells=8)
    make_sphere(scene, "Ball", 0.25, {1: (0.0, 0.1, 0.4), 12: (0.0, 0.1, 0.8)})
    return scene, garment


def test_timer_events_show_progress_and_finish_the_bake(tmp_path, monkeypatch):
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    scene, garment = scene_with_cloth(tmp_path, frame_end=12)
    cls, op, context, ui, reports = start_modal(scene)
    results = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert cls.modal(op, context, event("MOUSEMOVE")) == {"PASS_THROUGH"}  # the UI stays usable
        results.append(cls.modal(op, context, event("TIMER")))
        if results[-1] != {"RUNNING_MODAL"}:
            break
        time.sleep(0.02)
    assert results[-1] == {"FINISHED"}, reports
    assert reports[-1][0] == {"INFO"} and "baked 1 garment(s), 12 frames" in reports[-1][1]
    assert ui.timer_removed and ui.progress_ended and not ui.clothbake_running
    assert ui.status[-1] is None and ui.header[-1] is None  # cleared at the end
    shown = [t for t in ui.header if t]
    assert shown and all(t.startswith("ClothBake: ") and t.endswith("(Esc to cancel)") for t in shown)
    assert shown == [t for t in ui.status if t]
    mod = garment.modifiers["ClothBake"]
    _, samples = read_pc2(bpy.path.abspath(mod.filepath))
    scene.frame_set(9)
    assert np.max(np.abs(evaluated_local(garment) - samples[8])) < 1e-5


def test_escape_cancels_ends_the_child_and_removes_its_files(tmp_path, monkeypatch):
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    scene, garment = scene_with_cloth(tmp_path, frame_end=400)
    scene.clothbake.substeps = 20
    cls, op, context, ui, reports = start_modal(scene)
    job = op._job
    deadline = time.monotonic() + 60
    while job.process.done < 1 and time.monotonic() < deadline:
        assert cls.modal(op, context, event("TIMER")) == {"RUNNING_MODAL"}
        time.sleep(0.05)
    assert any(t and "/400 frames" in t for t in ui.header)
    assert cls.modal(op, context, event("ESC", "PRESS")) == {"CANCELLED"}
    assert job.process.finished() and job.process.returncode != 0
    assert reports[-1] == ({"ERROR"}, "ClothBake: bake cancelled")
    assert scene.clothbake.status == "ClothBake: bake cancelled"
    assert ui.timer_removed and ui.progress_ended and ui.status[-1] is None and ui.header[-1] is None
    assert len(garment.modifiers) == 0
    assert files_under(tmp_path / "bakes") == [] and not os.path.exists(tmp_path / "bakes")
