"""The render-farm job template, run by the real Open Job Description CLI (openjd-cli from PyPI)
with the real clothbake binary: one task per shot, caches byte-identical to a plain bake, progress
and status lines, a cancel (Ctrl+C to `openjd run`, i.e. NOTIFY_THEN_TERMINATE) that leaves a
checkpoint, a rerun that resumes from it, failures that fail."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import struct
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
TEMPLATE = REPO / "plugins" / "openjd" / "clothbake-shots.yaml"


def clothbake_bin() -> Path:
    env = os.environ.get("CLOTHBAKE_BIN")
    # Resolved here: the job runs its steps in their own working directory.
    path = Path(env).resolve() if env else REPO / "target" / "release" / "clothbake"
    if not path.is_file():
        pytest.fail(f"clothbake binary not found at {path}: build it (cargo build --release) "
                    "or set CLOTHBAKE_BIN")
    return path


def openjd() -> str:
    exe = shutil.which("openjd")
    if exe is None:
        pytest.fail("openjd-cli is not installed: pip install openjd-cli (scripts/test does)")
    return exe


def read_pc2(path: Path) -> tuple[int, float, float, int, list[float]]:
    data = path.read_bytes()
    magic, version, points, start, rate, samples = struct.unpack_from("<12siiffi", data, 0)
    assert magic == b"POINTCACHE2\0" and version == 1
    values = struct.unpack_from(f"<{samples * points * 3}f", data, 32)
    assert len(data) == 32 + samples * points * 12
    return points, start, rate, samples, list(values)


def make_shot(scenes: Path, sample: str, resolution: int) -> str:
    """Writes sample `sample` as SceneDir/<sample>.toml with its assets in SceneDir/<sample>/."""
    subprocess.run([str(clothbake_bin()), "sample", sample, "-o", str(scenes / sample),
                    "--resolution", str(resolution)], check=True, capture_output=True)
    text = (scenes / sample / "scene.toml").read_text()
    text = re.sub(r'^(mesh|file) = "([^"]+)"', rf'\1 = "{sample}/\2"', text, flags=re.M)
    (scenes / f"{sample}.toml").write_text(text)
    (scenes / sample / "scene.toml").unlink()
    return sample


def job_command(scenes: Path, out: Path, shots: int, checkpoint_every: int = 10) -> list[str]:
    return [openjd(), "run", str(TEMPLATE), "-p", f"SceneDir={scenes}", "-p", f"OutputDir={out}",
            "-p", f"ShotCount={shots}", "-p", f"ClothbakeExecutable={clothbake_bin()}",
            "-p", "Formats=pc2,mdd", "-p", "Threads=1", "-p", f"CheckpointEvery={checkpoint_every}"]


def run_job(scenes: Path, out: Path, shots: int, checkpoint_every: int = 10
            ) -> subprocess.CompletedProcess:
    return subprocess.run(job_command(scenes, out, shots, checkpoint_every),
                          capture_output=True, text=True, timeout=600)


def plain_bake(scenes: Path, name: str, out: Path) -> Path:
    """`clothbake bake` of the shot without openjd and without checkpoints: the reference bytes."""
    subprocess.run([str(clothbake_bin()), "bake", str(scenes / f"{name}.toml"), "-o", str(out),
                    "--format", "pc2,mdd", "--threads", "1"], check=True, capture_output=True)
    return out


def progress_values(log: str) -> list[float]:
    return [float(v) for v in re.findall(r"openjd_progress: ([0-9.]+)", log)]


def assert_same_caches(baked: Path, reference: Path) -> None:
    caches = sorted(p.name for p in reference.iterdir() if p.suffix in (".pc2", ".mdd"))
    assert caches, f"the reference bake wrote no cache in {reference}"
    assert sorted(p.name for p in baked.iterdir() if p.suffix in (".pc2", ".mdd")) == caches
    for cache in caches:
        assert (baked / cache).read_bytes() == (reference / cache).read_bytes(), \
            f"{baked / cache} differs from a plain bake"


def test_template_passes_openjd_check():
    result = subprocess.run([openjd(), "check", str(TEMPLATE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_each_shot_is_a_task_that_bakes_the_plain_bake_bytes_and_reports_progress(tmp_path):
    scenes, out = tmp_path / "scenes", tmp_path / "caches"
    scenes.mkdir()
    shots = {make_shot(scenes, "self-fold", 12): 36, make_shot(scenes, "twist", 8): 48}
    result = run_job(scenes, out, len(shots), checkpoint_every=5)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    for name, frames in shots.items():
        assert_same_caches(out / name, plain_bake(scenes, name, tmp_path / "plain" / name))
        points, start, rate, samples, _ = read_pc2(out / name / ("sheet.pc2" if name == "self-fold"
                                                                  else "tube.pc2"))
        assert (points, start, rate, samples) == (points, 1.0, 1.0, frames) and points > 0
        report = json.loads((out / name / "report.json").read_text())
        assert len(report["frames"]) == frames
        # The staging folder (checkpoints every 5 frames) is gone once the caches are final.
        assert not (out / name / ".clothbake-resume").exists()
        assert f"openjd_status: {name}: baking frames 1..{frames}" in log
        assert f"openjd_status: {name}: done, {frames} frames" in log
    # One progress line per written frame and a final 100 per task; each task counts up from
    # 1/frames (the rest frame) to 100.
    values = progress_values(log)
    assert len(values) == sum(frames + 1 for frames in shots.values()), values
    first = values[: shots["self-fold"] + 1]
    second = values[shots["self-fold"] + 1:]
    for task, frames in ((first, 36), (second, 48)):
        assert task[0] == round(100 / frames, 1)
        assert task == sorted(task) and task[-2:] == [100.0, 100.0], task


def test_a_canceled_task_leaves_a_checkpoint_and_a_rerun_resumes_it(tmp_path):
    scenes, out = tmp_path / "scenes", tmp_path / "caches"
    scenes.mkdir()
    name = make_shot(scenes, "twist", 24)  # 48 frames, about 1.8 s on one thread
    stage = out / name / ".clothbake-resume"
    log_path = tmp_path / "canceled.log"
    with open(log_path, "w") as log_file:
        job = subprocess.Popen(job_command(scenes, out, 1, checkpoint_every=5),
                               stdout=log_file, stderr=subprocess.STDOUT, text=True)
        try:
            # Cancel mid-bake, after the first periodic checkpoint (frame 5): Ctrl+C to `openjd
            # run` cancels the running action with the template's NOTIFY_THEN_TERMINATE (SIGTERM).
            deadline = time.monotonic() + 120
            while not (stage / "checkpoint").is_file():
                assert job.poll() is None, log_path.read_text()[-4000:]
                assert time.monotonic() < deadline, "no checkpoint appeared within 120 s"
                time.sleep(0.02)
            job.send_signal(signal.SIGINT)
            code = job.wait(timeout=120)
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
    log = log_path.read_text()
    assert "Session ended successfully" not in log, "the bake finished before the cancel reached it"
    assert code != 0, log[-4000:]
    assert 'Sending signal "term"' in log, log[-4000:]
    # clothbake checkpointed on the SIGTERM and exited with 85, and the task said so.
    stopped = re.search(r"interrupted after frame (\d+): checkpoint written in (.+?);", log)
    assert stopped, log[-4000:]
    frame = int(stopped.group(1))
    assert Path(stopped.group(2)) == stage
    assert 5 <= frame < 48
    assert f"openjd_status: {name}: stopped with a checkpoint (exit 85)" in log
    assert "exited with code: 85" in log
    assert "openjd_fail" not in log
    values = progress_values(log)
    assert values and values[-1] < 100.0
    assert (stage / "checkpoint").is_file() and (stage / "tube.pc2.partial").is_file()
    # Nothing under a final name: no cache, no report.
    assert sorted(p.name for p in (out / name).iterdir()) == [".clothbake-resume"]

    # The same job run again continues after the checkpointed frame, not from the start, even
    # where another worker mounts the scene folder at another path.
    moved = tmp_path / "elsewhere" / "scenes"
    moved.parent.mkdir()
    scenes.rename(moved)
    rerun = run_job(moved, out, 1, checkpoint_every=5)
    log = rerun.stdout + rerun.stderr
    assert rerun.returncode == 0, log[-4000:]
    assert f"openjd_status: {name}: resuming from the checkpoint in {stage}" in log
    assert (f"openjd_status: {name}: resumed from a checkpoint after frame {frame}; "
            "frames up to it are not simulated again") in log
    values = progress_values(log)
    assert len(values) == 48 - frame + 1, values  # frames frame+1..48, then the final 100
    assert values[0] == round(100 * (frame + 1) / 48, 1)
    assert_same_caches(out / name, plain_bake(moved, name, tmp_path / "plain"))
    assert len(json.loads((out / name / "report.json").read_text())["frames"]) == 48
    assert not stage.exists()


def test_a_shot_that_is_not_there_fails_the_job(tmp_path):
    scenes, out = tmp_path / "scenes", tmp_path / "caches"
    scenes.mkdir()
    make_shot(scenes, "sheet-on-sphere", 6)
    result = run_job(scenes, out, 2)
    assert result.returncode != 0
    assert "holds only 1 scene file" in result.stdout + result.stderr


def test_a_bad_scene_fails_its_task_with_the_field_named(tmp_path):
    scenes, out = tmp_path / "scenes", tmp_path / "caches"
    scenes.mkdir()
    name = make_shot(scenes, "sheet-on-sphere", 6)
    scene = scenes / f"{name}.toml"
    scene.write_text(scene.read_text().replace('material = "cotton"', 'material = "velvet"'))
    result = run_job(scenes, out, 1)
    assert result.returncode != 0
    assert "velvet" in result.stdout + result.stderr
    assert not list(out.rglob("*.pc2")), "a failed bake left a cache behind"
