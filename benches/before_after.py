#!/usr/bin/env python3
"""Two clothbake binaries on the same scenes, alternating, in one run on this machine: the
before/after table of a solver change (BENCHMARKS.md). No Blender.

Each scene is baked by BEFORE, then AFTER, RUNS times; the table gives the medians and ranges of
the frame loop's wall time (the report's `frame_loop_seconds`), the median of one stage's seconds
(`--stage`, default the cloth–cloth collision on the main thread), the ratio of the medians, and
whether the two binaries wrote byte-identical caches (a change meant to keep the bits must say
"yes").

    python3 benches/before_after.py --before OLD/clothbake --after target/release/clothbake \\
        DIR/skirt-walk/clothbake/export/scene.toml DIR/dress-walk/clothbake/export/scene.toml

(`benches/character_compare.py --export-only --keep DIR` writes the character scenes' exports.)
"""

import argparse
import filecmp
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from blender_compare import frame_loop_seconds  # noqa: E402


def bake(binary: str, scene: Path, out: Path) -> dict:
    """Bakes `scene` into `out` and returns its report."""
    report = out / "report.json"
    r = subprocess.run([binary, "bake", str(scene), "-o", str(out), "--report", str(report)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{binary} bake {scene} failed (exit {r.returncode}):\n{r.stderr}")
    return json.loads(report.read_text())


def same_caches(a: Path, b: Path) -> bool:
    """Do the two output folders hold the same cache files, byte for byte (reports aside)?"""
    names = sorted(p.name for p in a.iterdir() if p.is_file() and p.name != "report.json")
    other = sorted(p.name for p in b.iterdir() if p.is_file() and p.name != "report.json")
    return bool(names) and names == other and all(
        filecmp.cmp(a / n, b / n, shallow=False) for n in names)


def stage_seconds(report: dict, stage: str) -> float:
    """A stage's total seconds from the report's `stage_totals`, or one part's (`proximity`,
    `broad_phase`, `iterations`, `preconditioner`, ...: the `*_parts` under a stage). A name the
    report does not know is an error, not a column of zeros."""
    totals = report["stage_totals"]
    if isinstance(totals.get(stage), (int, float)):
        return float(totals[stage])
    for parts in totals.values():
        if isinstance(parts, dict) and stage in parts:
            return float(parts[stage])
    known = sorted(k for k, v in totals.items() if not isinstance(v, dict))
    known += sorted(p for v in totals.values() if isinstance(v, dict) for p in v)
    raise SystemExit(f"before_after.py: no stage or part {stage!r} in the report (known: {', '.join(known)})")


def row(name: str, before: list, after: list, stage_before: list, stage_after: list, same: bool) -> str:
    """One markdown row: medians [ranges] of the wall seconds, their ratio, the stage's medians."""
    def cell(v: list) -> str:
        m = statistics.median(v)
        return f"{m:.2f} [{min(v):.2f}–{max(v):.2f}]" if len(v) > 1 else f"{m:.2f}"
    ratio = statistics.median(before) / statistics.median(after)
    return (f"| {name} | {cell(before)} | {cell(after)} | {ratio:.2f}× | "
            f"{statistics.median(stage_before):.3f} → {statistics.median(stage_after):.3f} | "
            f"{'yes' if same else 'NO'} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenes", nargs="+", type=Path, help="scene.toml files")
    ap.add_argument("--before", required=True, help="the binary before the change")
    ap.add_argument("--after", required=True, help="the binary after it")
    ap.add_argument("--runs", type=int, default=3, help="bakes per binary and scene (default 3)")
    ap.add_argument("--stage", default="self_collision",
                    help="the report stage, or part of one (proximity, iterations, ...), whose "
                         "seconds the table shows (default self_collision)")
    args = ap.parse_args()
    print(f"| scene | before s [range] | after s [range] | before / after | `{args.stage}` s | caches equal |")
    print("|---|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for scene in args.scenes:
            walls = {"before": [], "after": []}
            stages = {"before": [], "after": []}
            for _ in range(args.runs):
                for key, binary in (("before", args.before), ("after", args.after)):
                    out = Path(tmp) / key
                    report = bake(binary, scene, out)
                    walls[key].append(frame_loop_seconds(report))
                    stages[key].append(stage_seconds(report, args.stage))
            name = scene.parent.parent.parent.name if scene.parent.name == "export" else scene.parent.name
            same = same_caches(Path(tmp) / "before", Path(tmp) / "after")
            print(row(name, walls["before"], walls["after"], stages["before"], stages["after"], same),
                  flush=True)


if __name__ == "__main__":
    main()
