"""Blender's own cloth vs clothbake on the same sheet, in one run on this machine.

The case the brief quotes: a 64x64-vertex sheet falling on a sphere, 5 substeps per frame at 24 fps,
with and without cloth self-collision. Blender (4.5 LTS via `pip install bpy`) simulates it with its
cloth modifier (quality = 5 steps per frame, collision modifier on the sphere); clothbake bakes the same
vertices, sphere, substeps and frame count from a scene file written here. Both use every core.

Prints a table of milliseconds per frame (wall clock, and CPU time summed over threads: this machine
is shared, CPU time is less disturbed by other load) and the ratio Blender / clothbake, with the
commit and the load average before and after, and the quality of both results, measured the same
way on the positions each wrote (Blender's from its cloth cache after the timed pass, clothbake's
from its PC2): the largest edge stretch over frames and grid edges (length / rest length - 1,
positive part; the grid's rest edges are 1 / (resolution - 1) m), the most vertices inside the
sphere in one frame and the deepest of them, and the closest any vertex came to the sphere's
surface (Blender keeps its collision distance, 15 mm by default; clothbake the garment's
thickness, 5 mm for cotton). Both are measured against the true sphere clothbake collides with;
Blender collides with a UV sphere of 32 segments and 16 rings inscribed in it, whose faces lie up
to 5.8 mm inside it.

    python3 benches/blender_compare.py [--frames 48] [--resolution 64] [--bin target/release/clothbake]
        [--before OTHER_BINARY] [--self-collision off|on|both] [--runs N] [--perturb K]

With `--runs N` (default 3), Blender and clothbake bake each case N times, alternating (Blender,
then `--before` if given, then `--bin`), and the tables give the median of each with the range of
the N runs in brackets; the ratio is the medians'. One bake of the same bits varies by ±20 % on
these shared machines (the 128x128 sheet: 126 to 186 ms/frame in four runs back to back), so one
pair is not a measurement.

With `--before`, a second clothbake binary (e.g. built from an earlier commit) bakes the same scenes in
the same run, right before `--bin`, and a second table gives both and their ratio.

With `--perturb K`, `--bin` bakes each case K more times with the CG tolerance 0.5–3 % off the
default (`PERTURBATIONS`): every such bake is as accurate, but the substep controller's rejections
are chaotic in the solves' bits, so one bake's substep count (and time) is one draw from a spread
(the 128x128 sheet: 127 to 197 substeps over such tolerances). A third table gives the mean and
range of the draws and of the ratio to Blender.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

# The solver's default `cg_tolerance` (crates/solver/src/sim.rs, DEFAULT_CG_TOLERANCE), for scenes
# that do not set it.
DEFAULT_CG_TOLERANCE = 1e-2
# The sphere both bake against (m): its centre in Blender's axes (Z up) and in clothbake's (Y up).
SPHERE_RADIUS = 0.3
SPHERE_BLENDER = (0.0, 0.0, 0.3)
SPHERE_CLOTHBAKE = (0.0, 0.3, 0.0)
# Relative changes of the CG tolerance for --perturb: each changes the solves' bits, not their
# accuracy in any way that matters.
PERTURBATIONS = (-0.01, 0.01, -0.02, 0.02, -0.005, 0.005, -0.015, 0.015, -0.03, 0.03)


def blender_ms_per_frame(
    resolution: int, frames: int, self_collision: bool
) -> tuple[float, float, dict]:
    """(wall, CPU) milliseconds per simulated frame, and the `quality` of the frames it simulated
    (read back from the cloth cache after the timed pass)."""
    import bpy  # Blender as a Python module

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = 1, frames
    sheet = make_blender_grid(resolution)
    bpy.ops.mesh.primitive_uv_sphere_add(radius=SPHERE_RADIUS, location=SPHERE_BLENDER)
    bpy.context.active_object.modifiers.new("Collision", "COLLISION")
    cloth = sheet.modifiers.new("Cloth", "CLOTH")
    cloth.settings.quality = 5
    cloth.collision_settings.use_collision = True
    cloth.collision_settings.use_self_collision = self_collision
    cloth.point_cache.frame_start, cloth.point_cache.frame_end = 1, frames
    scene.frame_set(1)
    start, cpu = time.perf_counter(), time.process_time()
    for frame in range(2, frames + 1):
        scene.frame_set(frame)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    positions = []
    for frame in range(1, frames + 1):
        scene.frame_set(frame)
        evaluated = sheet.evaluated_get(bpy.context.evaluated_depsgraph_get())
        co = np.empty(len(evaluated.data.vertices) * 3, dtype=np.float32)
        evaluated.data.vertices.foreach_get("co", co)
        positions.append(co.reshape(-1, 3).astype(np.float64))  # the object is at the origin
    measured = quality(np.array(positions), resolution, SPHERE_BLENDER)
    return wall * 1000.0 / (frames - 1), cpu * 1000.0 / (frames - 1), measured


def read_pc2(path: Path) -> np.ndarray:
    """A PC2 point cache as samples x points x 3 (f64): a 12-byte signature, version, point count,
    start frame, sample rate and sample count, then f32 xyz per point and sample."""
    with open(path, "rb") as f:
        head = f.read(32)
        _version, points, _start, _rate, samples = struct.unpack("<iiffi", head[12:])
        data = np.frombuffer(f.read(), dtype="<f4")
    return data.reshape(samples, points, 3).astype(np.float64)


def grid_edges(resolution: int) -> np.ndarray:
    """The grid's edges (vertex j·n + i, row-major as both meshes are built), each once."""
    n = resolution
    ids = np.arange(n * n).reshape(n, n)
    across = np.stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()], axis=1)
    along = np.stack([ids[:-1, :].ravel(), ids[1:, :].ravel()], axis=1)
    return np.concatenate([across, along])


def quality(positions: np.ndarray, resolution: int, center) -> dict:
    """The same measures for both results (`positions`: frames x vertices x 3, m, in the axes the
    sphere `center` is given in): the largest edge stretch over frames and grid edges, the most
    vertices inside the sphere in one frame and the deepest (mm), the closest approach to the
    sphere's surface (mm; negative: inside)."""
    edges = grid_edges(resolution)
    rest = 1.0 / (resolution - 1)
    stretch, inside, deepest, closest = 0.0, 0, 0.0, float("inf")
    for p in positions:
        length = np.linalg.norm(p[edges[:, 0]] - p[edges[:, 1]], axis=1)
        stretch = max(stretch, float(np.max(length / rest - 1.0)))
        gap = np.linalg.norm(p - np.array(center), axis=1) - SPHERE_RADIUS
        inside = max(inside, int(np.count_nonzero(gap < 0.0)))
        deepest = max(deepest, float(-gap.min()) * 1000.0)
        closest = min(closest, float(gap.min()) * 1000.0)
    return {"stretch": max(stretch, 0.0), "inside": inside, "deepest": max(deepest, 0.0),
            "closest": closest}


def quality_cell(measured: dict) -> str:
    """`quality` as table cells: stretch | inside (deepest mm) | closest mm."""
    return (f"{measured['stretch']:.3f} | {measured['inside']} ({measured['deepest']:.1f}) "
            f"| {measured['closest']:.1f}")


def make_blender_grid(resolution: int):
    """A 1 m x 1 m grid of resolution x resolution vertices, 1 m above the ground (Blender Z-up)."""
    import bpy

    n = resolution
    verts = [(i / (n - 1) - 0.5, j / (n - 1) - 0.5, 1.0) for j in range(n) for i in range(n)]
    faces = [
        (j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i)
        for j in range(n - 1)
        for i in range(n - 1)
    ]
    mesh = bpy.data.meshes.new("Sheet")
    mesh.from_pydata(verts, [], faces)
    obj = bpy.data.objects.new("Sheet", mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def write_clothbake_scene(
    folder: Path, resolution: int, frames: int, self_collision: bool, cg_tolerance: float | None = None
) -> Path:
    """The same sheet and sphere as a clothbake scene (glTF axes: Blender's (x, y, z) -> (x, z, -y));
    `cg_tolerance` None: the solver's default."""
    n = resolution
    lines = []
    for j in range(n):
        for i in range(n):
            x, y, z = i / (n - 1) - 0.5, j / (n - 1) - 0.5, 1.0
            lines.append(f"v {x:.6f} {z:.6f} {-y:.6f}")
    for j in range(n - 1):
        for i in range(n - 1):
            a, b, c, d = j * n + i + 1, j * n + i + 2, (j + 1) * n + i + 2, (j + 1) * n + i + 1
            lines.append(f"f {a} {b} {c} {d}")
    (folder / "sheet.obj").write_text("\n".join(lines) + "\n")
    scene = folder / "scene.toml"
    tolerance = "" if cg_tolerance is None else f"cg_tolerance = {cg_tolerance!r}\n"
    scene.write_text(
        f"""[scene]
fps = 24.0
frame_start = 1
frame_end = {frames}
substeps = 5
{tolerance}
[output]
formats = ["pc2"]

[[garment]]
name = "sheet"
mesh = "sheet.obj"
material = "cotton"
self_collision = {str(self_collision).lower()}

[[collider]]
type = "sphere"
center = [{SPHERE_CLOTHBAKE[0]}, {SPHERE_CLOTHBAKE[1]}, {SPHERE_CLOTHBAKE[2]}]
radius = {SPHERE_RADIUS}
"""
    )
    return scene


def frame_loop_seconds(report: dict) -> float:
    """Wall seconds of a bake report's frame loop (`frame_loop_seconds`, the time to compare with
    Blender's timed `frame_set` loop); from a binary older than that field, the sum of the
    per-frame `seconds`, which below 8,192 vertices counts each frame's measurements twice (they
    ran beside the next frame's step, inside its time too)."""
    if "frame_loop_seconds" in report:
        return float(report["frame_loop_seconds"])
    return float(sum(f["seconds"] for f in report["frames"]))


def clothbake_ms_per_frame(
    binary: str, resolution: int, frames: int, self_collision: bool, cg_tolerance: float | None = None
) -> tuple[float, float, dict]:
    """(wall, CPU) milliseconds per simulated frame and a summary of the bake report. Wall: the
    report's frame loop ([`frame_loop_seconds`]); CPU: the whole process (including loading and writing, so slightly
    pessimistic) per simulated frame. Summary: accepted and rejected substeps, CG iterations (of
    accepted substeps), the report's stage times in ms per frame and the `quality` of the PC2."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scene = write_clothbake_scene(folder, resolution, frames, self_collision, cg_tolerance)
        report = folder / "report.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [binary, "bake", str(scene), "-o", str(folder / "out"), "--report", str(report)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        data = json.loads(report.read_text())
        # Sample 0 is the rest state; the simulated frames follow it.
        simulated = data["frames"][1:]
        summary = {
            key: sum(f.get(key, 0) for f in simulated)
            for key in ("substeps", "rejected_substeps", "cg_iterations")
        }
        stages: dict = {}
        for f in simulated:
            for stage, seconds in (f.get("stages") or {}).items():
                # Nested breakdowns (self_collision_parts) are parts of a stage already counted.
                if isinstance(seconds, (int, float)):
                    stages[stage] = stages.get(stage, 0.0) + seconds * 1000.0 / len(simulated)
        summary["stages"] = stages
        # The frames' own sum, as the bench measured before the frame loop's time was reported.
        summary["frames_sum_ms"] = sum(f["seconds"] for f in simulated) * 1000.0 / len(simulated)
        positions = read_pc2(folder / "out" / "sheet.pc2")
        summary["quality"] = quality(positions, resolution, SPHERE_CLOTHBAKE)
        n = len(simulated)
        return frame_loop_seconds(data) * 1000.0 / n, cpu * 1000.0 / n, summary


def median_run(runs: list) -> tuple:
    """The run of median wall time among `runs` ((wall, CPU, details) each), with the median CPU
    time and both ranges: (wall, CPU, details, (wall min, wall max), (CPU min, CPU max))."""
    walls = sorted(run[0] for run in runs)
    cpus = sorted(run[1] for run in runs)
    middle = sorted(runs, key=lambda run: run[0])[(len(runs) - 1) // 2]
    def median(values: list) -> float:
        return (values[(len(values) - 1) // 2] + values[len(values) // 2]) / 2.0

    return (median(walls), median(cpus), middle[2], (walls[0], walls[-1]), (cpus[0], cpus[-1]))


def timing_cell(run: tuple) -> str:
    """`wall (CPU)` ms/frame of a [`median_run`], with the wall range when there were several runs."""
    wall, cpu, _, (low, high), _ = run
    spread = f" [{low:.1f}–{high:.1f}]" if high > low else ""
    return f"{wall:.1f}{spread} ({cpu:.1f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=48)
    parser.add_argument("--resolution", type=int, default=64)
    parser.add_argument(
        "--bin", default=os.environ.get("CLOTHBAKE_BIN", str(REPO / "target/release/clothbake"))
    )
    parser.add_argument("--before", help="an earlier clothbake binary to time in the same run")
    parser.add_argument("--self-collision", choices=("off", "on", "both"), default="both",
                        help="the cases to bake (Blender with self-collision takes 25x longer)")
    parser.add_argument("--runs", type=int, default=3, metavar="N",
                        help="bakes per program and case, Blender and clothbake alternating; "
                        "the tables give medians and ranges")
    parser.add_argument("--perturb", type=int, default=0, metavar="K",
                        help="K more bakes of --bin per case with the CG tolerance 0.5-3 %% off")
    args = parser.parse_args()
    if not 0 <= args.perturb <= len(PERTURBATIONS):
        parser.error(f"--perturb takes 0 to {len(PERTURBATIONS)}")
    if args.runs < 1:
        parser.error("--runs takes 1 or more")
    commit = subprocess.run(
        ["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    load_before = os.getloadavg()
    rows = []
    modes = {"off": (False,), "on": (True,), "both": (False, True)}[args.self_collision]
    for self_collision in modes:
        blender_runs, before_runs, our_runs = [], [], []
        for _ in range(args.runs):
            blender_runs.append(blender_ms_per_frame(args.resolution, args.frames, self_collision))
            if args.before:
                before_runs.append(
                    clothbake_ms_per_frame(args.before, args.resolution, args.frames, self_collision)
                )
            our_runs.append(clothbake_ms_per_frame(args.bin, args.resolution, args.frames, self_collision))
        blender, ours = median_run(blender_runs), median_run(our_runs)
        before = median_run(before_runs) if args.before else None
        perturbed = [
            clothbake_ms_per_frame(
                args.bin, args.resolution, args.frames, self_collision,
                DEFAULT_CG_TOLERANCE * (1.0 + PERTURBATIONS[k]),
            )
            for k in range(args.perturb)
        ]
        rows.append((self_collision, blender, ours, before, perturbed))
    load_after = os.getloadavg()
    n = args.resolution
    print(f"{n}x{n} sheet on a sphere, 5 substeps/frame, {args.frames} frames, {os.cpu_count()} cores, "
          f"{args.runs} alternating run(s) per program: median (range)")
    print(f"commit {commit}; load average (1/5/15 min) before {load_before}, after {load_after}")
    print("| self-collision | Blender 4.5 ms/frame wall (CPU) | clothbake ms/frame wall (CPU) "
          "| Blender / clothbake wall (CPU) |")
    print("|---|---:|---:|---:|")
    for self_collision, blender, ours, _, _ in rows:
        (b_wall, b_cpu), (o_wall, o_cpu) = blender[:2], ours[:2]
        print(
            f"| {'on' if self_collision else 'off'} | {timing_cell(blender)} | {timing_cell(ours)} "
            f"| {b_wall / o_wall:.1f}x ({b_cpu / o_cpu:.1f}x) |"
        )
    if args.before:
        print(f"\nbefore = {args.before}, after = {args.bin}")
        print("| self-collision | before ms/frame wall (CPU) | after ms/frame wall (CPU) "
              "| before / after wall (CPU) | Blender / before wall (CPU) |")
        print("|---|---:|---:|---:|---:|")
        for self_collision, (b_wall, b_cpu, *_), ours, before, _ in rows:
            (o_wall, o_cpu), (p_wall, p_cpu) = ours[:2], before[:2]
            print(
                f"| {'on' if self_collision else 'off'} | {timing_cell(before)} "
                f"| {timing_cell(ours)} | {p_wall / o_wall:.2f}x ({p_cpu / o_cpu:.2f}x) "
                f"| {b_wall / p_wall:.1f}x ({b_cpu / p_cpu:.1f}x) |"
            )
    if args.perturb:
        print(f"\n{args.perturb} more bakes of --bin per case, CG tolerance 0.5-3 % off "
              f"{DEFAULT_CG_TOLERANCE:g}: mean (range)")
        print("| self-collision | clothbake ms/frame wall | Blender / clothbake wall "
              "| substeps | rejected | CG iterations / accepted substep |")
        print("|---|---:|---:|---:|---:|---:|")
        for self_collision, (b_wall, *_), _, _, perturbed in rows:
            walls = [run[0] for run in perturbed]
            ratios = [b_wall / w for w in walls]
            sub = [run[2]["substeps"] for run in perturbed]
            rej = [run[2]["rejected_substeps"] for run in perturbed]
            cg = [run[2]["cg_iterations"] / max(run[2]["substeps"], 1) for run in perturbed]

            def spread(values: list, fmt: str) -> str:
                mean = sum(values) / len(values)
                return f"{mean:{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"

            print(
                f"| {'on' if self_collision else 'off'} | {spread(walls, '.1f')} | "
                f"{spread(ratios, '.2f')}x | {spread(sub, '.0f')} | {spread(rej, '.0f')} | {spread(cg, '.1f')} |"
            )
    print("\nQuality of the results, measured the same way on both (module docs):")
    print("| self-collision | result | max edge stretch | most vertices inside the sphere (deepest mm) "
          "| closest to the sphere (mm) |")
    print("|---|---|---:|---:|---:|")
    for self_collision, blender, ours, before, perturbed in rows:
        mode = "on" if self_collision else "off"
        results = [("Blender 4.5", blender[2]), ("clothbake", ours[2]["quality"])]
        if before:
            results.insert(1, ("before", before[2]["quality"]))
        if perturbed:
            draws = [run[2]["quality"] for run in perturbed]
            worst = {"stretch": max(q["stretch"] for q in draws),
                     "inside": max(q["inside"] for q in draws),
                     "deepest": max(q["deepest"] for q in draws),
                     "closest": min(q["closest"] for q in draws)}
            results.append((f"clothbake, worst of {len(draws)} draws", worst))
        for name, measured in results:
            print(f"| {mode} | {name} | {quality_cell(measured)} |")
    print("\nclothbake bake reports (stage times in ms per frame, wall; the frames' own seconds summed, "
          "which count measurements beside the next step twice):")
    print("| self-collision | binary | substeps (rejected) | CG iterations / accepted substep "
          "| frames' seconds ms/frame | stages |")
    print("|---|---|---:|---:|---:|---|")
    for self_collision, _, ours, before, _ in rows:
        for name, run in (("before", before), ("after" if before else "clothbake", ours)):
            if run is None:
                continue
            s = run[2]
            stages = ", ".join(f"{k} {v:.1f}" for k, v in s["stages"].items() if v >= 0.05)
            print(
                f"| {'on' if self_collision else 'off'} | {name} | {s['substeps']} ({s['rejected_substeps']}) "
                f"| {s['cg_iterations'] / max(s['substeps'], 1):.1f} | {s['frames_sum_ms']:.1f} | {stages} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
