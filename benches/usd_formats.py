"""usda against usdc for clothbake's USD point caches: size, write time, load time in pxr and in
Blender 4.5, and the converter's peak memory (streamed: run with --frames 500 to see it not grow).

    python3 benches/usd_formats.py [--points 10000] [--frames 100]

Needs a release build (CLOTHBAKE_BIN or target/release/clothbake), usd-core and bpy 4.5. The cache is
synthetic (a GRID×GRID sheet waving; the writer does not care where the floats come from): a PC2
written here, converted to .usda and to .usdc by `clothbake convert` (the bake's own streamed USD
writers), and to .usdc by pxr (Sdf.Layer.Export of the usda layer) for comparison. Each reader opens the file and reads the points of every
time code; Blender imports it (wm.usd_import, Mesh Sequence Cache) and evaluates every frame.
"""

import argparse
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = os.environ.get("CLOTHBAKE_BIN") or str(ROOT / "target" / "release" / "clothbake")


def write_inputs(d, grid, frames):
    n = grid * grid
    with open(d / "sheet.obj", "w") as f:
        for j in range(grid):
            for i in range(grid):
                f.write(f"v {i / (grid - 1)} 0 {j / (grid - 1)}\n")
        for j in range(grid - 1):
            for i in range(grid - 1):
                a = j * grid + i + 1
                f.write(f"f {a} {a + 1} {a + grid + 1} {a + grid}\n")
    with open(d / "sheet.pc2", "wb") as f:
        f.write(b"POINTCACHE2\0" + struct.pack("<iiffi", 1, n, 1.0, 1.0, frames))
        for k in range(frames):
            t = k / 24.0
            row = []
            for j in range(grid):
                for i in range(grid):
                    x, z = i / (grid - 1), j / (grid - 1)
                    row += [x, 0.1 * math.sin(6.0 * x + 3.0 * t) * math.cos(4.0 * z - t), z]
            f.write(struct.pack(f"<{3 * n}f", *row))
    return n


def child(code, *args):
    """Runs `code` in a fresh interpreter (pxr and bpy never share one); returns its JSON line."""
    p = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    return json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])


PXR_LOAD = """
import json, sys, time
t0 = time.perf_counter()
from pxr import Usd, UsdGeom
t1 = time.perf_counter()
stage = Usd.Stage.Open(sys.argv[1])
mesh = UsdGeom.Mesh(stage.GetDefaultPrim())
attr = mesh.GetPointsAttr()
t2 = time.perf_counter()
total = 0
for t in attr.GetTimeSamples():
    total += len(attr.Get(t))
t3 = time.perf_counter()
print(json.dumps({"open_s": t2 - t1, "read_all_s": t3 - t2, "points_read": total}))
"""

PXR_EXPORT = """
import json, sys, time
from pxr import Sdf
t0 = time.perf_counter()
layer = Sdf.Layer.FindOrOpen(sys.argv[1])
t1 = time.perf_counter()
assert layer.Export(sys.argv[2])
t2 = time.perf_counter()
print(json.dumps({"parse_s": t1 - t0, "export_s": t2 - t1}))
"""

BLENDER_LOAD = """
import json, sys, time
import bpy
bpy.ops.wm.read_factory_settings(use_empty=True)
t0 = time.perf_counter()
assert bpy.ops.wm.usd_import(filepath=sys.argv[1]) == {"FINISHED"}
t1 = time.perf_counter()
scene = bpy.context.scene
ob = [o for o in bpy.data.objects if o.type == "MESH"][0]
for f in range(scene.frame_start, scene.frame_end + 1):
    scene.frame_set(f)
    ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "all_frames_s": t2 - t1, "frames": scene.frame_end - scene.frame_start + 1}))
"""


def timed_run(args):
    """Runs `args`; returns (wall seconds, the process's own peak RSS in MB)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - t0
    if status != 0:
        raise RuntimeError(child.stderr.read().decode())
    return seconds, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=10000)
    ap.add_argument("--frames", type=int, default=100)
    a = ap.parse_args()
    grid = max(2, round(math.sqrt(a.points)))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        n = write_inputs(d, grid, a.frames)
        usda, usdc, pxr_usdc = d / "sheet.usda", d / "sheet.usdc", d / "pxr.usdc"
        write, peak = {}, {}
        for path in (usda, usdc):
            write[path.suffix], peak[path.suffix] = timed_run(
                [BIN, "convert", d / "sheet.pc2", path, "--mesh", d / "sheet.obj"])
        exp = child(PXR_EXPORT, usda, pxr_usdc)
        print(f"{n} points x {a.frames} frames")
        print(f"write (convert from PC2, streamed, process wall time): clothbake usda {write['.usda']:.3f} s, "
              f"usdc {write['.usdc']:.3f} s; pxr usdc export {exp['export_s']:.3f} s (after parsing the usda in "
              f"{exp['parse_s']:.3f} s)")
        print(f"converter peak memory: usda {peak['.usda']:.1f} MB, usdc {peak['.usdc']:.1f} MB "
              "(streamed: the same at any frame count)")
        for name, path in (("usda (clothbake)", usda), ("usdc (clothbake)", usdc), ("usdc (pxr)", pxr_usdc)):
            size = path.stat().st_size
            px = child(PXR_LOAD, path)
            bl = child(BLENDER_LOAD, path)
            assert px["points_read"] == n * a.frames
            print(f"{name}: {size / 1e6:.1f} MB; pxr open {px['open_s']:.3f} s + read all frames {px['read_all_s']:.3f} s; "
                  f"Blender import {bl['import_s']:.3f} s + evaluate all {bl['frames']} frames {bl['all_frames_s']:.3f} s")
        pc2 = (d / "sheet.pc2").stat().st_size
        print(f"(pc2 for comparison: {pc2 / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
