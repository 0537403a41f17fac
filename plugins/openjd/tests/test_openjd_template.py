"""The render-farm job template, run by the real Open Job Description CLI (openjd-cli from PyPI)
with the real clothbake binary: one task per shot, caches where the template says, failures fail."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
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


def run_job(scenes: Path, out: Path, shots: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [openjd(), "run", str(TEMPLATE), "-p", f"SceneDir={scenes}", "-p", f"OutputDir={out}",
         "-p", f"ShotCount={shots}", "-p", f"ClothbakeExecutable={clothbake_bin()}",
         "-p", "Formats=pc2,mdd", "-p", "Threads=1"],
        capture_output=True, text=True, timeout=600)


def test_template_passes_openjd_check():
    result = subprocess.run([openjd(), "check", str(TEMPLATE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_each_shot_is_a_task_and_writes_its_caches(tmp_path):
    scenes, out = tmp_path / "scenes", tmp_path / "caches"
    scenes.mkdir()
    names = [make_shot(scenes, "sheet-on-sphere", 8), make_shot(scenes, "flag-wind", 8)]
    result = run_job(scenes, out, len(names))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    for name in names:
        pc2s = sorted((out / name).glob("*.pc2"))
        assert pc2s, f"no PC2 written for shot {name}: {sorted((out / name).iterdir())}"
        for pc2 in pc2s:
            points, start, rate, samples, values = read_pc2(pc2)
            assert points > 0 and samples > 1 and rate == 1.0
            assert all(v == v and abs(v) < 1e3 for v in values), f"{pc2}: non-finite or huge"
            assert pc2.with_suffix(".mdd").is_file()
        assert (out / name / "report.json").is_file()


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
