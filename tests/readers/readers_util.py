"""Shared helpers of the independent-reader tests: find the clothbake binary, bake a sample, read
PC2/MDD exactly as the formats are documented (struct, no clothbake code)."""

import os
import struct
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def clothbake_bin():
    b = os.environ.get("CLOTHBAKE_BIN") or str(ROOT / "target" / "release" / "clothbake")
    if not Path(b).is_file():
        raise RuntimeError(f"clothbake binary not found at {b}: build it or set CLOTHBAKE_BIN")
    return b


def run(*args, check=True):
    p = subprocess.run([clothbake_bin(), *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"clothbake {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}")
    return p


def bake_sample(tmp, sample, frames, formats, extra=()):
    """Writes `sample` into tmp/scene and bakes `frames` ("A..B") with `formats` into tmp/out."""
    scene_dir = Path(tmp) / "scene"
    out = Path(tmp) / "out"
    run("sample", sample, "-o", scene_dir)
    run("bake", scene_dir / "scene.toml", "-o", out, "--frames", frames, "--format", ",".join(formats), *extra)
    return scene_dir, out


def read_pc2(path):
    """(start_frame, sample_rate, frames as lists of (x, y, z) f32 tuples)."""
    b = Path(path).read_bytes()
    assert b[:12] == b"POINTCACHE2\0"
    _version, n, start, rate, samples = struct.unpack_from("<iiffi", b, 12)
    frames = []
    for s in range(samples):
        flat = struct.unpack_from(f"<{3 * n}f", b, 32 + s * 12 * n)
        frames.append([flat[3 * i : 3 * i + 3] for i in range(n)])
    return start, rate, frames


def f32(x):
    """x rounded to f32 (what a point3f holds)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]
