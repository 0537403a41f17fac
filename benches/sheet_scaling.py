#!/usr/bin/env python3
"""Per-vertex cost of the built-in sheet-on-sphere bake at several resolutions (issue 14 item 2).

Bakes the sheet of `blender_compare.py` (1 m, 1 m above a 0.3 m sphere, cotton, 5 substeps per
frame at 24 fps) at each `--sizes` resolution, self-collision off and on, with clothbake only, and
prints one markdown row per (size, self-collision, binary): ms per frame (the bake report's
frame loop, `frame_loop_seconds`), µs per vertex-substep (attempted substeps), CG iterations per accepted
substep (in brackets: the rejected substeps' iterations per accepted substep, solves paid for and
thrown away), ns per vertex per CG iteration (linear-solve time, which includes the rejected
substeps' solves, / (vertices × CG iterations of all substeps, the report's `cg_iterations` +
`rejected_cg_iterations`), and each stage's share of the bake. With `--before BIN` the two binaries alternate (before, after) per case, `--runs`
times, and the table shows the best (lowest wall) run of each plus the after/before ratio, and
whether the runs wrote identical caches. The last line compares the per-vertex frame time of the
largest size with the smallest (issue 14's target: within 1.25x with self-collision off).

With `--perturb K`, `--bin` bakes each case K more times with the CG tolerance 0.5–3 % off the
default (`blender_compare.PERTURBATIONS`): the substep controller's rejections are chaotic in the
solves' bits, so one bake is one draw (the 128x128 sheet: 120 to 197 substeps over such
tolerances). A row per case then gives the mean (range) over the K + 1 draws, and a last line the
per-vertex comparison of the means.

    python3 benches/sheet_scaling.py --sizes 64,128,256 --frames 16 --before /tmp/clothbake-before
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from blender_compare import DEFAULT_CG_TOLERANCE, PERTURBATIONS, frame_loop_seconds, write_clothbake_scene  # noqa: E402

STAGES = ("forces", "linear_solve", "body_collisions", "self_collision", "solver_other", "measurements")


def bake(binary: str, folder: Path, scene: Path) -> dict:
    report = folder / "report.json"
    out = folder / f"out-{hashlib.md5(binary.encode()).hexdigest()[:6]}"
    start = time.monotonic()
    subprocess.run(
        [binary, "bake", str(scene), "-o", str(out), "--report", str(report)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    elapsed = time.monotonic() - start
    data = json.loads(report.read_text())
    frames = data["frames"][1:]  # sample 0 is the rest state
    stages: dict = {}
    for f in frames:
        for k, v in (f.get("stages") or {}).items():
            if isinstance(v, (int, float)):
                stages[k] = stages.get(k, 0.0) + v
    digest = hashlib.sha256()
    for p in sorted(out.glob("*.pc2")):
        digest.update(p.read_bytes())
    return {
        "wall": frame_loop_seconds(data),
        "process": elapsed,
        "frames": len(frames),
        "substeps": sum(f["substeps"] for f in frames),
        "rejected": sum(f.get("rejected_substeps", 0) for f in frames),
        "cg": sum(f["cg_iterations"] for f in frames),
        "cg_rejected": sum(f.get("rejected_cg_iterations", 0) for f in frames),
        "stages": stages,
        "digest": digest.hexdigest()[:12],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="64,128,256")
    ap.add_argument("--frames", type=int, default=16)
    ap.add_argument("--self-collision", choices=("off", "on", "both"), default="both")
    ap.add_argument("--runs", type=int, default=1, help="alternating runs per binary and case")
    ap.add_argument("--bin", default=os.environ.get("CLOTHBAKE_BIN", str(REPO / "target/release/clothbake")))
    ap.add_argument("--before", help="an earlier clothbake binary, baked alternately with --bin")
    ap.add_argument("--preconditioner", default="",
                    help="comma-separated [scene] preconditioner values (ic, amg, auto, ...), baked "
                         "alternately per binary; default: the scene's default")
    ap.add_argument("--perturb", type=int, default=0, metavar="K",
                    help="K more bakes of --bin per case with the CG tolerance 0.5-3 %% off")
    args = ap.parse_args()
    if not 0 <= args.perturb <= len(PERTURBATIONS):
        ap.error(f"--perturb takes 0 to {len(PERTURBATIONS)}")
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.self_collision]
    binaries = [("before", args.before), ("after", args.bin)] if args.before else [("clothbake", args.bin)]
    pcs = [p for p in args.preconditioner.split(",") if p]
    if pcs:
        binaries = [(f"{name} {pc}" if len(binaries) > 1 else pc, b, pc) for name, b in binaries for pc in pcs]
    else:
        binaries = [(name, b, None) for name, b in binaries]
    load_before = os.getloadavg()
    print(f"sheet on a sphere, 5 substeps/frame, {args.frames} frames, {os.cpu_count()} cores; "
          f"load average before {tuple(round(x, 2) for x in load_before)}", flush=True)
    print("| vertices | self-coll. | binary | ms/frame | µs / vertex-substep | substeps (rejected) "
          "| CG it. / substep | ns / vertex / CG it. | stage shares (forces, solve, bodies, self, other, measure) "
          "| output |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---|---|")
    per_vertex: dict = {}
    per_vertex_mean: dict = {}
    for n in sizes:
        for sc in modes:
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                scene = write_clothbake_scene(folder, n, args.frames, sc)
                runs: dict = {name: [] for name, _, _ in binaries}
                for _ in range(args.runs):
                    for name, binary, pc in binaries:
                        variant = scene
                        if pc:
                            variant = folder / f"scene-{pc}.toml"
                            variant.write_text(scene.read_text().replace(
                                "[scene]\n", f'[scene]\npreconditioner = "{pc}"\n', 1))
                        runs[name].append(bake(binary, folder, variant))
                # The first run of --bin at the default tolerance is the first draw.
                draws = [runs[binaries[-1][0]][0]] if args.perturb else []
                for k in range(args.perturb):
                    tol = DEFAULT_CG_TOLERANCE * (1.0 + PERTURBATIONS[k])
                    variant = folder / f"scene-tolerance{k}.toml"
                    variant.write_text(scene.read_text().replace(
                        "[scene]\n", f"[scene]\ncg_tolerance = {tol!r}\n", 1))
                    draws.append(bake(args.bin, folder, variant))
            best = {name: min(r, key=lambda x: x["wall"]) for name, r in runs.items()}
            for name, _, _ in binaries:
                r, v = best[name], n * n
                frame_ms = r["wall"] * 1000.0 / r["frames"]
                attempted = r["substeps"] + r["rejected"]
                total = sum(r["stages"].get(k, 0.0) for k in STAGES) or 1.0
                shares = ", ".join(f"{100.0 * r['stages'].get(k, 0.0) / total:.0f}" for k in STAGES)
                digests = sorted({x["digest"] for x in runs[name]})
                walls = "/".join(f"{x['wall'] * 1000.0 / x['frames']:.0f}" for x in runs[name])
                ratio = ""
                if args.before and name == "after":
                    ratio = f" ({best['before']['wall'] / r['wall']:.2f}x)"
                print(
                    f"| {v:,} | {'on' if sc else 'off'} | {name} | {frame_ms:.0f}{ratio} [{walls}] "
                    f"| {r['wall'] * 1e6 / (v * max(attempted, 1)):.2f} | {r['substeps']} ({r['rejected']}) "
                    f"| {r['cg'] / max(r['substeps'], 1):.1f} [+{r['cg_rejected'] / max(r['substeps'], 1):.1f}] "
                    f"| {r['stages'].get('linear_solve', 0.0) * 1e9 / (v * max(r['cg'] + r['cg_rejected'], 1)):.0f} "
                    f"| {shares} | {' '.join(digests)} |",
                    flush=True,
                )
                per_vertex[(name, sc, n)] = frame_ms / v
            if draws:
                v = n * n

                def spread(values: list, fmt: str) -> str:
                    return f"{sum(values) / len(values):{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"

                ms = [d["wall"] * 1000.0 / d["frames"] for d in draws]
                print(
                    f"| {v:,} | {'on' if sc else 'off'} | {len(draws)} draws, mean (range) | {spread(ms, '.0f')} | "
                    f"| {spread([d['substeps'] for d in draws], '.0f')} "
                    f"({spread([d['rejected'] for d in draws], '.0f')}) "
                    f"| {spread([d['cg'] / max(d['substeps'], 1) for d in draws], '.1f')} | | | |",
                    flush=True,
                )
                per_vertex_mean[(sc, n)] = sum(ms) / len(ms) / v
    print(f"\nload average after {tuple(round(x, 2) for x in os.getloadavg())}")
    lo, hi = min(sizes), max(sizes)
    for name, _, _ in binaries:
        for sc in modes:
            if (name, sc, lo) in per_vertex and (name, sc, hi) in per_vertex and lo != hi:
                print(f"{name}, self-collision {'on' if sc else 'off'}: ms/frame per vertex at {hi * hi:,} "
                      f"vertices = {per_vertex[(name, sc, hi)] / per_vertex[(name, sc, lo)]:.2f}x that at "
                      f"{lo * lo:,}")
    for sc in modes:
        if (sc, lo) in per_vertex_mean and (sc, hi) in per_vertex_mean and lo != hi:
            print(f"means over the draws, self-collision {'on' if sc else 'off'}: ms/frame per vertex at "
                  f"{hi * hi:,} vertices = {per_vertex_mean[(sc, hi)] / per_vertex_mean[(sc, lo)]:.2f}x "
                  f"that at {lo * lo:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
