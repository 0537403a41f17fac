"""The benchmark scripts (benches/*.py) without their long runs: every script's --help, the sheet
scene the Blender comparison bakes (valid for `clothbake check`, baked and summarised from a real
report, so a renamed report field breaks here and not in a half-hour benchmark), and the quality
measurements the character comparison reports for Blender and clothbake alike (edge strain,
vertices inside proxies, self-intersections) on small hand-made meshes whose answers are known."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHES = REPO / "benches"
sys.path.insert(0, str(BENCHES))

import blender_compare  # noqa: E402  (benches/, no Blender at import)
import sheet_scaling  # noqa: E402

BIN = os.environ.get("CLOTHBAKE_BIN", str(REPO / "target/release/clothbake"))


@pytest.mark.parametrize("script", sorted(p.name for p in BENCHES.glob("*.py")))
def test_every_bench_script_prints_its_help(script):
    # character_compare.py's --help raised a ValueError until 2026-11-26 (a "%" argparse read as a
    # format directive).
    r = subprocess.run([sys.executable, str(BENCHES / script), "--help"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "usage:" in r.stdout


def test_the_comparison_sheet_is_a_valid_scene_of_n_squared_vertices():
    with tempfile.TemporaryDirectory() as tmp:
        scene = blender_compare.write_clothbake_scene(Path(tmp), 6, 3, self_collision=True, cg_tolerance=2e-3)
        text = scene.read_text()
        assert "cg_tolerance = 0.002" in text and "self_collision = true" in text
        vertices = [l for l in (Path(tmp) / "sheet.obj").read_text().splitlines() if l.startswith("v ")]
        assert len(vertices) == 36
        r = subprocess.run([BIN, "check", str(scene)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr


def test_the_sheet_bake_is_summarised_from_its_report():
    wall, cpu, summary = blender_compare.clothbake_ms_per_frame(BIN, 8, 3, self_collision=False)
    assert wall > 0 and cpu > 0
    # Frames 1..3: frame 1 is the start state, so 2 simulated frames of 5 substeps at least. The
    # falling sheet's warm-started solves may converge without an iteration at the default
    # tolerance (2 iterations in 10 substeps at 1e-2, 5 at 3e-3), but not all of them.
    assert summary["substeps"] >= 10
    assert summary["cg_iterations"] > 0
    assert summary["stages"]["linear_solve"] > 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scene = blender_compare.write_clothbake_scene(folder, 8, 3, self_collision=False)
        first, again = sheet_scaling.bake(BIN, folder, scene), sheet_scaling.bake(BIN, folder, scene)
    assert first["frames"] == 2 and first["substeps"] == summary["substeps"]
    assert first["cg"] == summary["cg_iterations"]
    # The digest of the caches: a deterministic bake gives the same one.
    assert first["digest"] == again["digest"]
    # The PC2's quality: a falling sheet, not yet at the sphere, barely stretched.
    q = summary["quality"]
    assert 0.0 <= q["stretch"] < 0.05 and q["inside"] == 0 and q["closest"] > 100.0


def test_the_frame_loop_time_is_the_reports_field_or_the_frames_sum_without_it():
    frames = [{"seconds": 0.25}, {"seconds": 0.5}, {"seconds": 0.75}]
    assert blender_compare.frame_loop_seconds({"frames": frames, "frame_loop_seconds": 1.25}) == 1.25
    assert blender_compare.frame_loop_seconds({"frames": frames}) == 1.5
    # The binary writes the field: the bench's wall is its loop, not the frames' sum.
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scene = blender_compare.write_clothbake_scene(folder, 8, 3, self_collision=False)
        report = folder / "report.json"
        subprocess.run([BIN, "bake", str(scene), "-o", str(folder / "out"), "--report", str(report)],
                       check=True, capture_output=True)
        data = json.loads(report.read_text())
    assert 0.0 < data["frame_loop_seconds"] <= data["total_seconds"]
    assert blender_compare.frame_loop_seconds(data) == data["frame_loop_seconds"]


def test_alternating_runs_report_medians_and_ranges():
    runs = [(120.0, 240.0, {"id": 0}), (90.0, 200.0, {"id": 1}), (150.0, 210.0, {"id": 2})]
    wall, cpu, details, walls, cpus = blender_compare.median_run(runs)
    assert (wall, cpu, details["id"], walls, cpus) == (120.0, 210.0, 0, (90.0, 150.0), (200.0, 240.0))
    assert blender_compare.timing_cell((wall, cpu, details, walls, cpus)) == "120.0 [90.0–150.0] (210.0)"
    # An even count: the middle two's mean; one run: no range.
    wall, *_ = blender_compare.median_run(runs[:2])
    assert wall == 105.0
    assert blender_compare.timing_cell(blender_compare.median_run(runs[:1])) == "120.0 (240.0)"


def test_the_comparison_runs_in_real_blender_alternating(tmp_path):
    """The whole script at a tiny size: Blender 4.5 (bpy) and the binary alternate, twice each."""
    pytest.importorskip("bpy")
    env = dict(os.environ, CLOTHBAKE_BIN=BIN)
    r = subprocess.run(
        [sys.executable, str(BENCHES / "blender_compare.py"), "--frames", "3", "--resolution", "6",
         "--self-collision", "off", "--runs", "2"],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "2 alternating run(s) per program: median (range)" in r.stdout
    row = next(line for line in r.stdout.splitlines() if line.startswith("| off | ") and "x (" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[1].split()[0]) > 0 and float(cells[2].split()[0]) > 0
    assert cells[3].endswith("x)")
    assert "| off | Blender 4.5 |" in r.stdout and "| off | clothbake |" in r.stdout


def test_the_sheet_quality_measures_known_answers():
    n = 5
    edges = blender_compare.grid_edges(n)
    assert len(edges) == 2 * n * (n - 1) and len({tuple(e) for e in edges}) == len(edges)
    # The grid as both benches build it (1 m, row-major), in clothbake's axes, 1 m above the sphere.
    rest = np.array([[i / (n - 1) - 0.5, 1.0, j / (n - 1) - 0.5] for j in range(n) for i in range(n)])
    centre = blender_compare.SPHERE_CLOTHBAKE
    q = blender_compare.quality(rest[None], n, centre)
    assert q["stretch"] < 1e-12 and q["inside"] == 0 and q["deepest"] == 0.0
    # Closest: the middle vertex, 1 m - 0.3 m above the centre minus the radius.
    assert q["closest"] == pytest.approx((1.0 - 0.3 - 0.3) * 1000.0)
    # A second frame stretched 10 % in x and with one vertex 5 mm inside the sphere's top.
    moved = rest * np.array([1.1, 1.0, 1.0])
    moved[0] = [0.0, 0.3 + 0.3 - 0.005, 0.0]
    q = blender_compare.quality(np.stack([rest, moved]), n, centre)
    assert q["stretch"] > 0.1 - 1e-9  # 10 % along x, more on the edges to the moved vertex
    assert q["inside"] == 1
    assert q["deepest"] == pytest.approx(5.0) and q["closest"] == pytest.approx(-5.0)


# -- the character comparison's quality measurements ----------------------------------------------

character_compare = pytest.importorskip("character_compare")  # imports bpy (Blender 4.5)


def grid(n: int, size: float = 1.0):
    """An n x n vertex grid in the Blender XY plane (z = 0): points, edges, triangles, rest lengths."""
    ij = [(i, j) for j in range(n) for i in range(n)]
    p = np.array([[i * size / (n - 1), j * size / (n - 1), 0.0] for i, j in ij])
    idx = lambda i, j: j * n + i  # noqa: E731
    tris, edges = [], set()
    for j in range(n - 1):
        for i in range(n - 1):
            a, b, c, d = idx(i, j), idx(i + 1, j), idx(i + 1, j + 1), idx(i, j + 1)
            tris += [(a, b, c), (a, c, d)]
            for e in ((a, b), (b, c), (c, a), (c, d), (d, a)):
                edges.add(tuple(sorted(e)))
    edges = np.array(sorted(edges))
    rest = np.linalg.norm(p[edges[:, 0]] - p[edges[:, 1]], axis=1)
    return p, {"edges": edges, "tris": np.array(tris), "rest_len": rest}


def test_edge_strain_is_the_largest_relative_length_change():
    p, info = grid(4)
    stretched = p * np.array([1.1, 1.0, 1.0])  # x edges +10 %, diagonals less
    squeezed = p * np.array([0.8, 1.0, 1.0])
    strain, stretch = character_compare.max_edge_strain(np.stack([p, stretched]), info)
    assert strain == pytest.approx(0.1, abs=1e-9) and stretch == pytest.approx(0.1, abs=1e-9)
    strain, stretch = character_compare.max_edge_strain(np.stack([p, squeezed]), info)
    assert strain == pytest.approx(0.2, abs=1e-9)
    assert stretch == pytest.approx(0.0, abs=1e-12)  # compression is no stretch


def test_self_intersections_find_a_sheet_pierced_by_another():
    a, info_a = grid(3, 0.2)  # 0.2 m square in the plane z = 0
    # An upright quad in the plane y = 0.13 reaching from z = -0.05 to 0.05: its two upright edges
    # pierce the first sheet inside its triangles, at (0.05, 0.13) and (0.15, 0.13).
    b = np.array([[0.05, 0.13, -0.05], [0.15, 0.13, -0.05], [0.15, 0.13, 0.05], [0.05, 0.13, 0.05]])
    n = len(a)

    def both(b):
        p = np.vstack([a, b])
        info = {
            "edges": np.vstack([info_a["edges"], [[n, n + 1], [n + 1, n + 2], [n + 2, n + 3], [n, n + 3], [n, n + 2]]]),
            "tris": np.vstack([info_a["tris"], [[n, n + 1, n + 2], [n, n + 2, n + 3]]]),
            "rest_len": np.concatenate([info_a["rest_len"], [0.1, 0.1, 0.1, 0.1, 0.1414]]),
        }
        return character_compare.self_intersections(p, info)

    assert both(b) >= 2
    assert both(b + np.array([0.0, 0.0, 0.2])) == 0  # lifted clear of the first sheet
    flat, info_flat = grid(5)
    assert character_compare.self_intersections(flat, info_flat) == 0


def test_vertices_inside_proxies_count_depths_beyond_a_tenth_of_the_thickness():
    # Blender axes (x, y, z) are the scene's (x, z, -y): a point at Blender z = 1 is at scene y = 1.
    sphere = {"center": [0.0, 1.0, 0.0], "radius": 0.1}
    capsule = {"a": [1.0, 0.0, 0.0], "b": [1.0, 2.0, 0.0], "radius_a": 0.2, "radius_b": 0.1}
    points = np.array([
        [0.0, 0.0, 1.0],      # the sphere's centre: 0.1 deep
        [0.0, 0.0, 1.0995],   # 0.5 mm deep: within the tolerance of 10 % of 10 mm
        [1.0, 0.0, 1.0],      # on the capsule's axis halfway: radius 0.15, 0.15 deep
        [5.0, 5.0, 5.0],      # far from both
    ])
    depth = character_compare.proxy_depths(points, capsule)
    assert depth[2] == pytest.approx(0.15)
    info = {"thickness": 0.01, "shapes": [[sphere, capsule]]}
    most, deepest = character_compare.inside_proxies(points[None], info)
    assert most == 2
    assert deepest == pytest.approx(0.15)


def test_a_perturbed_scene_changes_only_the_cg_tolerance(tmp_path):
    (tmp_path / "world.toml").write_text(
        "[scene]\nfps = 24.0\ncg_tolerance = 0.002  # set by hand\nsubsteps = 4\n\n[output]\nformats = [\"pc2\"]\n"
    )
    name = character_compare.perturbed_scene({"folder": tmp_path}, 0)
    text = (tmp_path / name).read_text()
    tolerance = 0.002 * (1.0 + blender_compare.PERTURBATIONS[0])
    assert f"cg_tolerance = {tolerance!r}" in text
    assert text.count("cg_tolerance") == 1
    assert "substeps = 4" in text and "[output]" in text and 'formats = ["pc2"]' in text


def test_the_scripts_perturb_around_the_solvers_default_cg_tolerance():
    """--perturb draws around `DEFAULT_CG_TOLERANCE`: it must be the solver's (crates/solver/src/sim.rs),
    or the perturbed bakes measure another tolerance than the default ones beside them."""
    source = (REPO / "crates" / "solver" / "src" / "sim.rs").read_text(encoding="utf-8")
    line = next(s for s in source.splitlines() if s.startswith("pub const DEFAULT_CG_TOLERANCE: f32 ="))
    solver = float(line.split("=")[1].strip().rstrip(";"))
    assert blender_compare.DEFAULT_CG_TOLERANCE == solver


def test_before_after_alternates_two_binaries_and_compares_their_caches(tmp_path):
    import before_after
    scene = blender_compare.write_clothbake_scene(tmp_path, 8, 3, self_collision=True)
    r = subprocess.run([sys.executable, str(BENCHES / "before_after.py"), "--before", BIN, "--after", BIN,
                        "--runs", "2", str(scene)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith(f"| {tmp_path.name} |")]
    assert len(rows) == 1, r.stdout
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[-1] == "yes"  # one binary: the same bits
    assert cells[3].endswith("×") and "→" in cells[4]
    # The cache comparison itself: one byte off, or a missing file, is "not equal".
    a, b = tmp_path / "a", tmp_path / "b"
    for d, last in ((a, 1), (b, 2)):
        d.mkdir()
        (d / "x.pc2").write_bytes(bytes([0, last]))
        (d / "report.json").write_text("{}")
    assert not before_after.same_caches(a, b)
    (b / "x.pc2").write_bytes(bytes([0, 1]))
    assert before_after.same_caches(a, b)
    (a / "y.mdd").write_bytes(b"")
    assert not before_after.same_caches(a, b)
    assert before_after.row("s", [2.0, 4.0, 3.0], [1.0, 2.0], [0.5], [0.25], True) == \
        "| s | 3.00 [2.00–4.00] | 1.50 [1.00–2.00] | 2.00× | 0.500 → 0.250 | yes |"
    # A stage, a part of one, and a name the report does not have.
    report = {"stage_totals": {"linear_solve": 2.5, "self_collision": 1.0,
                               "self_collision_parts": {"proximity": 0.25, "ccd": 0.5}}}
    assert before_after.stage_seconds(report, "linear_solve") == 2.5
    assert before_after.stage_seconds(report, "proximity") == 0.25
    with pytest.raises(SystemExit, match="no stage or part 'proximty'.*proximity"):
        before_after.stage_seconds(report, "proximty")
