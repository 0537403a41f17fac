"""The HTCondor command line of docs/render-farm.md ("Periodic spooling"), run without HTCondor:
`timeout --foreground --preserve-status --signal=TERM SECONDS clothbake bake ... --resume` ends every
time slice with exit 85 after a checkpoint, the same command run again continues, and the last slice
exits 0 with caches byte-identical to an uninterrupted bake. (HTCondor itself is not run here.)"""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

from test_openjd_template import clothbake_bin, make_shot, plain_bake, assert_same_caches


def test_time_slices_end_with_85_and_resume_to_the_uninterrupted_bytes(tmp_path):
    timeout = shutil.which("timeout")
    if timeout is None:
        pytest.skip("coreutils timeout is not installed")
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    name = make_shot(scenes, "twist", 24)  # 48 frames, about 1 s on one thread
    # The reference first: its time sets the slice (a quarter of it, at least 0.2 s), so the bake
    # spans several slices however fast the machine (a fixed 0.5 s became two slices once the
    # substeps got cheaper).
    started = time.monotonic()
    reference = plain_bake(scenes, name, tmp_path / "plain")
    seconds = max(0.2, (time.monotonic() - started) / 4)
    command = [timeout, "--foreground", "--preserve-status", "--signal=TERM", f"{seconds:.2f}",
               str(clothbake_bin()), "bake", f"{name}.toml", "-o", str(tmp_path / "out"),
               "--format", "pc2,mdd", "--threads", "1", "--checkpoint-every", "10", "--resume"]
    codes = []
    while not codes or codes[-1] == 85:
        assert len(codes) < 60, f"no end after {len(codes)} slices: {codes}"
        result = subprocess.run(command, cwd=scenes, capture_output=True, text=True, timeout=120)
        codes.append(result.returncode)
        if result.returncode == 85:
            assert "checkpoint written in" in result.stderr, result.stderr
            assert not (tmp_path / "out" / "tube.pc2").exists()
    assert codes[-1] == 0, (codes, result.stderr)
    assert len(codes) >= 3, f"the bake did not span several slices: {codes}"
    assert_same_caches(tmp_path / "out", reference)
    assert not (tmp_path / "out" / ".clothbake-resume").exists()
