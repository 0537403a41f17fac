"""Blender's own cloth vs clothbake on character scenes built in Blender, in one run on this machine.

Each scene is built headless in Blender 4.5 (`pip install bpy`) and baked twice from the SAME Blender
scene:

- by Blender's cloth: a Cloth modifier at the end of the garment's stack (after its Armature), pin
  group = the garment's clothbake pin group, quality = the clothbake substeps, self-collision as in
  clothbake, every other cloth setting at Blender's default; a Collision modifier (defaults) on a mesh
  of each body proxy's exact shape (the sphere or capsule the add-on fits and exports, tessellated
  32 x 16, parented to the proxy);
- by clothbake through the add-on's own export path (`clothbake.export.export_scene`, as the Bake
  button does), then the binary on the exported scene.toml (output space switched to "world" so both
  results are in Blender world coordinates). Only the binary's bake is timed.

Scenes:

- `skirt-walk`: the bpy tests' walking rig with root motion (1.6 m over 48 frames, two strides),
  pelvis sphere and thigh capsules parented to its bones, a flared skirt of 28 x 128 = 3,584
  well-shaped vertices skinned to the hips, waist ring pinned; 4 substeps.
- `thin-skirt-walk`: the same with 8 x 540 = 4,320 vertices (triangles 18-28:1).
- `cape-run`: the rig running 3.2 m, pelvis sphere and chest capsule, a 31 x 61 cape parented to
  the Chest bone, top row pinned.
- `sample-skirt-walk`, `sample-cape-run`: the built-in glTF samples of those names (resolution 128
  and 64), imported the same way, with the sample's material, thickness, friction, pins, substeps
  and frames.
- `rigged-figure`: the third-party RiggedFigure (Khronos glTF sample, as shipped in
  samples/rigged-figure) through Blender's glTF importer, a capsule proxy on each hip, belly, thigh and
  shin bone fitted to the body vertices that bone dominates, the sample's 5,504-vertex skirt through
  Blender's OBJ importer parented to the hips bone, waist pinned; 5 substeps, 30 frames.
- `dress-walk`: the built-in dress-walk sample (figure.glb, 10k-vertex dress, proxies marked on
  empties) imported into Blender as plugins/blender/examples/dress_walk.py does; 4 substeps,
  self-collision on (as the sample).

Runs alternate Blender and clothbake (`--runs` each, default 3). Measured per run: ms per simulated
frame, wall and CPU (CPU = process time; Blender's is the whole Python process, clothbake's the
child process including loading and writing). Quality, from each method's positions at every frame
(Blender: the evaluated cloth; clothbake: its world-space cache), computed the same way for both:

- max edge strain: max over frames and mesh edges of |length / rest length - 1| (rest = the
  garment's undeformed mesh in world scale), and in brackets the max stretch, its positive part
  (the rest of the strain is compression: cloth folding below the mesh's resolution);
- inside proxies: the most vertices in any frame deeper than 10 % of the garment's thickness inside
  an exported proxy shape (analytic sphere / capsule), and the deepest (mm);
- self-intersections: edges of the cloth crossing one of its triangles (not sharing a vertex),
  counted on the last frame (numpy; clothbake's bake report's own count is also given).

    python3 benches/character_compare.py [--scenes skirt-walk,...] [--runs 3] [--frames N]
        [--blender-distance default|thickness] [--blender-mass default|matched] [--perturb K]
        [--bin target/release/clothbake] [--markdown FILE] [--update-benchmarks]

`--perturb K` bakes each scene K more times with the CG tolerance 0.5–3 % off its value: any change
of the solves' bits moves which substeps are rejected (on the dress-walk sample 16 to 40 rejections
over such changes), so one bake's time is one draw; these runs give clothbake's mean and range.

`--blender-distance thickness` sets Blender's collision and self-collision distance to the garment's
thickness (Blender's default 15 mm exceeds these meshes' edges); `--blender-mass matched` gives
Blender clothbake's mass (its default is 0.3 kg per vertex). Prints the table; --markdown writes it
to FILE; --update-benchmarks replaces the block of this set-up in BENCHMARKS.md (between the
`<!-- character_compare mass=... distance=... -->` markers).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
PLUGIN_DIR = REPO / "plugins" / "blender"
sys.path.insert(0, str(PLUGIN_DIR))  # the add-on package `clothbake`
sys.path.insert(0, str(PLUGIN_DIR / "tests"))  # the bpy tests' scene builders
sys.path.insert(0, str(PLUGIN_DIR / "examples"))  # dress_walk.py: the sample import

import bpy  # noqa: E402  (Blender as a Python module)
from blender_compare import DEFAULT_CG_TOLERANCE, PERTURBATIONS, frame_loop_seconds, read_pc2  # noqa: E402  (beside this script)


def addon():
    import clothbake

    if not hasattr(bpy.types.Scene, "clothbake"):
        clothbake.register()
    return clothbake


# -- scenes ---------------------------------------------------------------------------------------


def walking_skirt(work: Path, frames: int | None, rings: int, segments: int):
    """Walker + pelvis/thigh proxies + a skirt of `rings` x `segments` skinned to Hips, waist pinned."""
    from clothbake_testutil import add_body_proxies, make_skirt, make_walker, new_scene

    scene = new_scene(work)
    s = scene.clothbake
    s.frame_start, s.frame_end, s.substeps = 1, frames or 48, 4
    rig = make_walker(scene, frames=(1, 48))
    proxies = add_body_proxies(scene, rig)
    skirt = make_skirt(scene, rig, rings=rings, segments=segments)
    scene.frame_set(1)
    return scene, skirt, list(proxies.values())


def build_skirt_walk(work: Path, binary: str, frames: int | None):
    """The skirt of 28 x 128 = 3,584 well-shaped vertices."""
    return walking_skirt(work, frames, rings=28, segments=128)


def build_dress_walk(work: Path, binary: str, frames: int | None):
    """The dress-walk sample's glTF imported as dress_walk.py does (proxies on the marked empties)."""
    import dress_walk

    sample = dress_walk.import_sample(binary, str(work / "sample"))
    scene = bpy.context.scene
    scene.render.fps = 24
    dress_walk.mark_colliders(scene)
    dress = bpy.data.objects["Dress"]
    dress_walk.mark_garment(dress, sample)
    s = scene.clothbake
    s.frame_start, s.frame_end, s.substeps = 1, frames or 48, 4
    s.output_dir = str(work / "bakes")
    proxies = [o for o in scene.objects if o.clothbake.role == "COLLIDER"]
    scene.frame_set(1)
    return scene, dress, proxies


def build_thin_skirt(work: Path, binary: str, frames: int | None):
    """The skirt-walk scene with a skirt of 8 x 540 = 4,320 vertices: thin triangles (aspect 18-28:1)."""
    return walking_skirt(work, frames, rings=8, segments=540)


def build_cape_run(work: Path, binary: str, frames: int | None):
    """The walker RUNNING (3.2 m in 48 frames) with pelvis sphere and chest capsule; a 0.5 x 0.9 m
    cape of 31 x 61 = 1,891 vertices parented to the Chest bone behind the back, top row pinned."""
    from clothbake_testutil import add_body_proxies, bone_tail_matrix, make_sheet, make_walker, new_scene

    scene = new_scene(work)
    s = scene.clothbake
    s.frame_start, s.frame_end, s.substeps = 1, frames or 48, 4
    rig = make_walker(scene, frames=(1, 48), distance=3.2)
    proxies = add_body_proxies(scene, rig, torso=True)
    for name in ("Thigh.L", "Thigh.R"):
        proxies[name].clothbake.role = "NONE"
    cols, rows = 30, 60
    cape = make_sheet(scene, "Cape", width=0.5, height=0.9, cols=cols, rows=rows, origin=(0.0, 0.2, 1.45))
    scene.frame_set(1)
    rest = bone_tail_matrix(rig, "Chest")
    cape.parent, cape.parent_type, cape.parent_bone = rig, "BONE", "Chest"
    cape.matrix_parent_inverse = rest.inverted()
    cape.vertex_groups.new(name="shoulders").add(list(range(cols + 1)), 1.0, "REPLACE")
    cape.clothbake.pin_group = "shoulders"
    scene.frame_set(1)
    return scene, cape, [proxies[n] for n in ("Pelvis", "Torso")]


def build_gltf_sample(name: str, node: str, resolution: int):
    """A built-in glTF sample (`clothbake sample NAME`) imported as dress_walk.py imports the dress:
    frame 1 = glTF time 0, proxies on the marked empties, the garment node marked with the sample's
    material, thickness, friction, self-collision and pins (substeps the sample's)."""

    def build(work: Path, binary: str, frames: int | None):
        import dress_walk

        folder = work / "sample"
        subprocess.run([binary, "sample", name, "-o", str(folder), "--resolution", str(resolution)],
                       check=True, stdout=subprocess.DEVNULL)
        bpy.ops.wm.read_factory_settings(use_empty=True)
        bpy.ops.import_scene.gltf(filepath=str(folder / "figure.glb"))
        for action in bpy.data.actions:
            for fc in action.fcurves:
                for k in fc.keyframe_points:
                    k.co.x += 1.0
                    k.handle_left.x += 1.0
                    k.handle_right.x += 1.0
        with open(folder / "scene.toml", "rb") as f:
            sample = tomllib.load(f)
        scene = bpy.context.scene
        scene.render.fps = 24
        dress_walk.mark_colliders(scene)
        spec = sample["garment"][0]
        garment = bpy.data.objects[node]
        garment.vertex_groups.new(name="pins").add(spec["pin"]["vertices"], 1.0, "REPLACE")
        g = garment.clothbake
        g.role, g.material, g.pin_group = "GARMENT", spec["material"], "pins"
        g.thickness, g.friction = spec["thickness"], spec["friction"]
        g.self_collision = bool(spec.get("self_collision", True))
        s = scene.clothbake
        s.frame_start, s.frame_end, s.substeps = 1, frames or sample["scene"]["frame_end"], sample["scene"]["substeps"]
        s.output_dir = str(work / "bakes")
        proxies = [o for o in scene.objects if o.clothbake.role == "COLLIDER"]
        scene.frame_set(1)
        return scene, garment, proxies

    return build


#: Bones of RiggedFigure that get a proxy: hips, belly, thighs and shins (the skirt's reach).
RIGGED_FIGURE_PROXY_BONES = ("torso_joint_1", "torso_joint_2", "leg_joint_L_1", "leg_joint_R_1",
                             "leg_joint_L_2", "leg_joint_R_2")


def build_rigged_figure(work: Path, binary: str, frames: int | None):
    """The third-party RiggedFigure (Khronos glTF sample, CC BY 4.0) imported with Blender's glTF
    importer, as a TD would set it up: a capsule proxy per hip/belly/leg bone, fitted to the body-mesh
    vertices that bone dominates and parented to the bone; the `rigged-figure` sample's skirt
    (resolution 128: 5,504 vertices) imported with Blender's OBJ importer and parented to the hips
    bone (a bone-parented garment), waist ring pinned; 5 substeps, 30 frames (the clip). The clip
    animates the arms only (hips and legs keep their pose), so this is a drape over a still lower
    body: the scene where a step controller should not reject anything."""
    folder = work / "sample"
    subprocess.run([binary, "sample", "rigged-figure", "-o", str(folder), "--resolution", "128"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(folder / "scene.toml", "rb") as f:
        sample = tomllib.load(f)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(folder / "RiggedFigure.gltf"))
    for action in bpy.data.actions:  # frame 1 = glTF time 0
        for fc in action.fcurves:
            for k in fc.keyframe_points:
                k.co.x += 1.0
                k.handle_left.x += 1.0
                k.handle_right.x += 1.0
    scene = bpy.context.scene
    scene.render.fps = 24
    rig = next(o for o in scene.objects if o.type == "ARMATURE")
    body = next(o for o in scene.objects if o.type == "MESH" and o.vertex_groups)
    rig.data.pose_position = "REST"  # parent at the bind pose
    bpy.context.view_layer.update()
    groups = {g.index: g.name for g in body.vertex_groups}
    dominant = {}
    for v in body.data.vertices:
        if v.groups:
            g = max(v.groups, key=lambda e: e.weight)
            dominant.setdefault(groups[g.group], []).append(body.matrix_world @ v.co)
    proxies = []
    for bone_name in RIGGED_FIGURE_PROXY_BONES:
        bone = rig.data.bones[bone_name]
        to_bone = (rig.matrix_world @ bone.matrix_local).inverted()
        pts = [to_bone @ p for p in dominant[bone_name]]
        mesh = bpy.data.meshes.new(bone_name + "_proxy")
        mesh.from_pydata([tuple(p) for p in pts], [], [])
        obj = bpy.data.objects.new(bone_name + "_proxy", mesh)
        scene.collection.objects.link(obj)
        obj.parent, obj.parent_type, obj.parent_bone = rig, "BONE", bone_name
        bpy.context.view_layer.update()
        obj.matrix_world = rig.matrix_world @ bone.matrix_local
        obj.display_type = "WIRE"
        obj.clothbake.role, obj.clothbake.collider_shape = "COLLIDER", "CAPSULE"
        proxies.append(obj)
    bpy.ops.wm.obj_import(filepath=str(folder / "skirt.obj"))
    skirt = next(o for o in bpy.context.selected_objects if o.type == "MESH")
    skirt.name = "Skirt"
    bpy.context.view_layer.update()
    keep = skirt.matrix_world.copy()
    skirt.parent, skirt.parent_type, skirt.parent_bone = rig, "BONE", "torso_joint_1"
    bpy.context.view_layer.update()
    skirt.matrix_world = keep
    rig.data.pose_position = "POSE"
    spec = sample["garment"][0]
    skirt.vertex_groups.new(name="pins").add(spec["pin"]["vertices"], 1.0, "REPLACE")
    g = skirt.clothbake
    g.role, g.material, g.pin_group = "GARMENT", spec["material"], "pins"
    g.thickness, g.friction = spec["thickness"], spec["friction"]
    g.self_collision = bool(spec.get("self_collision", True))
    s = scene.clothbake
    s.frame_start, s.frame_end, s.substeps = 1, frames or sample["scene"]["frame_end"], sample["scene"]["substeps"]
    s.output_dir = str(work / "bakes")
    scene.frame_set(1)
    return scene, skirt, proxies


SCENES = {"skirt-walk": build_skirt_walk, "thin-skirt-walk": build_thin_skirt, "cape-run": build_cape_run,
          "dress-walk": build_dress_walk, "rigged-figure": build_rigged_figure,
          "sample-skirt-walk": build_gltf_sample("skirt-walk", "Skirt", 128),
          "sample-cape-run": build_gltf_sample("cape-run", "Cape", 64)}


# -- Blender's cloth on the same scene ------------------------------------------------------------


def proxy_mesh(name: str, fit, segments: int = 32, rings: int = 16):
    """A mesh of the exported proxy shape in the proxy's local coordinates: a UV sphere, or a capsule
    (hemispheres of radius a / b around the ends a / b of the fitted axis, joined)."""
    verts = [(0.0, 0.0, -1.0)]
    for k in range(1, rings):
        theta = math.pi * k / rings - math.pi / 2
        verts += [(math.cos(theta) * math.cos(2 * math.pi * j / segments),
                   math.cos(theta) * math.sin(2 * math.pi * j / segments), math.sin(theta)) for j in range(segments)]
    verts.append((0.0, 0.0, 1.0))
    faces = [(0, 1 + (j + 1) % segments, 1 + j) for j in range(segments)]
    for k in range(rings - 2):
        a, b = 1 + k * segments, 1 + (k + 1) * segments
        faces += [(a + j, a + (j + 1) % segments, b + (j + 1) % segments, b + j) for j in range(segments)]
    top, last = len(verts) - 1, 1 + (rings - 2) * segments
    faces += [(last + j, last + (j + 1) % segments, top) for j in range(segments)]
    unit = np.array(verts)
    if fit.shape == "SPHERE":
        pts = np.array(fit.center) + fit.radius * unit
    else:  # unit sphere's z -> the fitted axis; the lower half around a, the upper around b
        perm = [*fit.others, fit.axis]
        local = np.zeros_like(unit)
        for src, dst in enumerate(perm):
            local[:, dst] = unit[:, src]
        lower = unit[:, 2] <= 0.0
        pts = np.where(lower[:, None], np.array(fit.a) + fit.radius * local, np.array(fit.b) + fit.radius_b * local)
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(p) for p in pts], [], faces)
    mesh.update()
    return mesh


def garment_mass(garment) -> float:
    """kg: clothbake's area density (the material preset's, or the override) times the rest area."""
    g = garment.clothbake
    density = g.density if g.use_density else DENSITY[g.material]
    m3 = np.array(garment.matrix_world, dtype=np.float64)[:3, :3]
    pts = np.array([v.co for v in garment.data.vertices], dtype=np.float64) @ m3.T
    garment.data.calc_loop_triangles()
    t = np.array([tri.vertices for tri in garment.data.loop_triangles], dtype=np.int64)
    area = 0.5 * np.linalg.norm(np.cross(pts[t[:, 1]] - pts[t[:, 0]], pts[t[:, 2]] - pts[t[:, 0]]), axis=1).sum()
    return density * float(area)


#: Area density (kg/m²) of clothbake's material presets (crates/solver/src/material.rs).
DENSITY = {"cotton": 0.15, "silk": 0.07, "denim": 0.41, "leather": 0.7, "jersey": 0.16, "wool": 0.25, "polyester": 0.08}


def add_blender_cloth(scene, garment, proxies, fits, match_mass=False, match_distance=False):
    """Cloth modifier (defaults but pins, quality, self-collision, cache range) on the garment and a
    Collision modifier on a mesh of each proxy's exported shape."""
    for proxy, fit in zip(proxies, fits):
        obj = bpy.data.objects.new(proxy.name + "_collision", proxy_mesh(proxy.name + "_collision", fit))
        scene.collection.objects.link(obj)
        obj.parent = proxy  # identity parent inverse: the proxy's local space
        obj.clothbake.role = "NONE"
        obj.modifiers.new("Collision", "COLLISION")
    s, g = scene.clothbake, garment.clothbake
    cloth = garment.modifiers.new("Cloth", "CLOTH")
    cloth.settings.quality = s.substeps
    cloth.settings.vertex_group_mass = g.pin_group
    if match_mass:  # Blender's default is 0.3 kg per vertex whatever the mesh: clothbake's mass instead
        cloth.settings.mass = garment_mass(garment) / len(garment.data.vertices)
    if match_distance:  # Blender's default 15 mm (body and self) exceeds these meshes' ~10 mm edges
        cloth.collision_settings.distance_min = g.thickness
        cloth.collision_settings.self_distance_min = g.thickness
    cloth.collision_settings.use_collision = True
    cloth.collision_settings.use_self_collision = g.self_collision
    cloth.point_cache.frame_start, cloth.point_cache.frame_end = s.frame_start, s.frame_end
    return cloth


def world_positions(obj) -> np.ndarray:
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(depsgraph)
    co = np.empty(len(ev.data.vertices) * 3, dtype=np.float32)
    ev.data.vertices.foreach_get("co", co)
    m = np.array(ev.matrix_world, dtype=np.float64)
    return co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


def run_blender(build, work: Path, binary: str, frames: int | None, match_mass: bool = False,
                match_distance: bool = False) -> dict:
    """Build the scene, add Blender's cloth, simulate frame_start+1 .. frame_end (timed), then read
    the cloth's positions at every frame from its cache."""
    clothbake = addon()
    scene, garment, proxies = build(work, binary, frames)
    fits = [clothbake.export.ColliderFit(p) for p in proxies]
    add_blender_cloth(scene, garment, proxies, fits, match_mass, match_distance)
    s = scene.clothbake
    scene.frame_start, scene.frame_end = s.frame_start, s.frame_end
    scene.frame_set(s.frame_start)
    start, cpu = time.perf_counter(), time.process_time()
    for frame in range(s.frame_start + 1, s.frame_end + 1):
        scene.frame_set(frame)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    n = s.frame_end - s.frame_start
    positions = []
    for frame in range(s.frame_start, s.frame_end + 1):
        scene.frame_set(frame)
        positions.append(world_positions(garment))
    return {"wall": wall * 1000.0 / n, "cpu": cpu * 1000.0 / n, "positions": np.array(positions)}


def export_scene(build, work: Path, binary: str, frames: int | None):
    """Build the scene and export it through the add-on; also what the quality measures need: the
    rest edge lengths (world scale), the edges and triangles, the proxies' shapes per frame."""
    clothbake = addon()
    scene, garment, proxies = build(work, binary, frames)
    s = scene.clothbake
    folder = work / "export"
    folder.mkdir()
    clothbake.export.export_scene(bpy.context, str(folder))
    text = (folder / "scene.toml").read_text(encoding="utf-8")
    assert 'space = "local"' in text
    (folder / "world.toml").write_text(text.replace('space = "local"', 'space = "world"'), encoding="utf-8")
    mesh = garment.data
    rest = np.array([v.co for v in mesh.vertices], dtype=np.float64)
    scene.frame_set(s.frame_start)
    m3 = np.array(garment.matrix_world, dtype=np.float64)[:3, :3]
    rest = rest @ m3.T
    edges = np.array([e.vertices for e in mesh.edges], dtype=np.int64)
    mesh.calc_loop_triangles()
    tris = np.array([t.vertices for t in mesh.loop_triangles], dtype=np.int64)
    fits = [clothbake.export.ColliderFit(p) for p in proxies]
    shapes = []
    for frame in range(s.frame_start, s.frame_end + 1):
        scene.frame_set(frame)
        shapes.append([fit.world(p.matrix_world) for p, fit in zip(proxies, fits)])
    with open(folder / "scene.toml", "rb") as f:
        doc = tomllib.load(f)
    info = {
        "folder": folder,
        "vertices": len(mesh.vertices),
        "edges": edges,
        "tris": tris,
        "rest_len": np.linalg.norm(rest[edges[:, 0]] - rest[edges[:, 1]], axis=1),
        "shapes": shapes,
        "thickness": float(garment.clothbake.thickness),
        "self_collision": bool(garment.clothbake.self_collision),
        "substeps": int(s.substeps),
        "frames": s.frame_end - s.frame_start + 1,
        "cache": doc["garment"][0]["name"] + ".pc2",
        "pins": len(doc["garment"][0].get("pin", {}).get("vertices", [])),
    }
    return info


def run_clothbake(binary: str, info: dict, out: Path, scene: str = "world.toml") -> dict:
    """The binary on the exported scene (world output; `scene` in the export folder); wall from the
    report's frame loop (`blender_compare.frame_loop_seconds`)."""
    if out.exists():
        shutil.rmtree(out)
    report = out.parent / (out.name + "_report.json")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([binary, "bake", str(info["folder"] / scene), "-o", str(out), "--format", "pc2",
                    "--report", str(report)], check=True, stdout=subprocess.DEVNULL, cwd=info["folder"])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    data = json.loads(report.read_text())
    simulated = data["frames"][1:]  # sample 0: the start state
    n = len(simulated)
    totals = {k: sum(f.get(k, 0) or 0 for f in simulated) for k in ("substeps", "rejected_substeps", "cg_iterations")}
    last = data["frames"][-1]
    return {
        "wall": frame_loop_seconds(data) * 1000.0 / n,
        "cpu": cpu * 1000.0 / n,
        "positions": read_pc2(out / info["cache"]),
        "report": totals,
        "rejections": data.get("substep_totals", {}).get("rejections", {}),
        "report_self_intersections": last.get("self_intersections"),
        "report_max_strain": max((f.get("max_strain") or 0.0) for f in simulated) if simulated else None,
    }


# -- quality, the same for both -------------------------------------------------------------------


def max_edge_strain(positions: np.ndarray, info: dict) -> tuple:
    """(max |length / rest - 1|, max stretch: its positive part) over frames and edges."""
    e = info["edges"]
    worst, stretch = 0.0, 0.0
    for p in positions:
        length = np.linalg.norm(p[e[:, 0]] - p[e[:, 1]], axis=1)
        s = length / info["rest_len"] - 1.0
        worst = max(worst, float(np.max(np.abs(s))))
        stretch = max(stretch, float(np.max(s)))
    return worst, max(stretch, 0.0)


def proxy_depths(points_blender: np.ndarray, shape: dict) -> np.ndarray:
    """> 0: depth inside the proxy (scene axes shape, Blender-axes points); capsules taper linearly."""
    p = np.column_stack([points_blender[:, 0], points_blender[:, 2], -points_blender[:, 1]])
    if "center" in shape:
        return shape["radius"] - np.linalg.norm(p - np.array(shape["center"]), axis=1)
    a, b = np.array(shape["a"]), np.array(shape["b"])
    ab = b - a
    t = np.clip((p - a) @ ab / max(float(ab @ ab), 1e-30), 0.0, 1.0)
    r = shape["radius_a"] + t * (shape["radius_b"] - shape["radius_a"])
    return r - np.linalg.norm(p - (a + t[:, None] * ab), axis=1)


def inside_proxies(positions: np.ndarray, info: dict) -> tuple[int, float]:
    """(most vertices deeper than 10 % of the thickness in any frame, deepest in m)."""
    limit = 0.1 * info["thickness"]
    most, deepest = 0, 0.0
    for p, shapes in zip(positions, info["shapes"]):
        depth = np.max(np.stack([proxy_depths(p, s) for s in shapes]), axis=0) if shapes else np.zeros(len(p))
        most = max(most, int(np.count_nonzero(depth > limit)))
        deepest = max(deepest, float(np.max(depth)))
    return most, deepest


def self_intersections(p: np.ndarray, info: dict) -> int:
    """Edges crossing a triangle they share no vertex with (a uniform grid broad phase, then an exact
    segment-triangle test). Each crossing pair of triangles shows up as >= 2 such edge hits."""
    edges, tris = info["edges"], info["tris"]
    tri_pts = p[tris]
    lo, hi = tri_pts.min(axis=1), tri_pts.max(axis=1)
    origin = p.min(axis=0)
    length = np.linalg.norm(p[edges[:, 0]] - p[edges[:, 1]], axis=1)
    # Cells about an edge long (an exploded mesh: at most 1/40 of its extent, few cells per edge).
    cell = max(2.0 * float(np.mean(info["rest_len"])), min(float(np.max(length)), float(np.max(p.max(axis=0) - origin)) / 40.0))
    # Bucket triangles by every cell their box touches (boxes are ~1 cell: few cells each).
    ilo = np.floor((lo - origin) / cell).astype(np.int64)
    ihi = np.floor((hi - origin) / cell).astype(np.int64)
    buckets: dict = {}
    for t in range(len(tris)):
        for x in range(ilo[t, 0], ihi[t, 0] + 1):
            for y in range(ilo[t, 1], ihi[t, 1] + 1):
                for z in range(ilo[t, 2], ihi[t, 2] + 1):
                    buckets.setdefault((x, y, z), []).append(t)
    pairs_e, pairs_t = [], []
    elo = np.floor((np.minimum(p[edges[:, 0]], p[edges[:, 1]]) - origin) / cell).astype(np.int64)
    ehi = np.floor((np.maximum(p[edges[:, 0]], p[edges[:, 1]]) - origin) / cell).astype(np.int64)
    for e in range(len(edges)):
        seen = set()
        for x in range(elo[e, 0], ehi[e, 0] + 1):
            for y in range(elo[e, 1], ehi[e, 1] + 1):
                for z in range(elo[e, 2], ehi[e, 2] + 1):
                    seen.update(buckets.get((x, y, z), ()))
        pairs_e += [e] * len(seen)
        pairs_t += list(seen)
    pe, pt = np.array(pairs_e, dtype=np.int64), np.array(pairs_t, dtype=np.int64)
    ev, tv = edges[pe], tris[pt]
    shared = (ev[:, :1] == tv).any(axis=1) | (ev[:, 1:] == tv).any(axis=1)
    pe, pt = pe[~shared], pt[~shared]
    a, b = p[edges[pe, 0]], p[edges[pe, 1]]
    v0, v1, v2 = p[tris[pt, 0]], p[tris[pt, 1]], p[tris[pt, 2]]
    n = np.cross(v1 - v0, v2 - v0)
    da, db = np.einsum("ij,ij->i", a - v0, n), np.einsum("ij,ij->i", b - v0, n)
    cross = (da * db) < 0.0
    s = np.where(cross, da / np.where(cross, da - db, 1.0), 0.0)
    q = a + s[:, None] * (b - a)
    c0 = np.einsum("ij,ij->i", np.cross(v1 - v0, q - v0), n)
    c1 = np.einsum("ij,ij->i", np.cross(v2 - v1, q - v1), n)
    c2 = np.einsum("ij,ij->i", np.cross(v0 - v2, q - v2), n)
    inside = cross & (((c0 > 0) & (c1 > 0) & (c2 > 0)) | ((c0 < 0) & (c1 < 0) & (c2 < 0)))
    return int(np.count_nonzero(inside))


def quality(positions: np.ndarray, info: dict) -> dict:
    most, deepest = inside_proxies(positions, info)
    strain, stretch = max_edge_strain(positions, info)
    return {"strain": strain, "stretch": stretch, "inside": most, "deepest": deepest,
            "self_x": self_intersections(positions[-1], info)}


# -- main -----------------------------------------------------------------------------------------




def perturbed_scene(info: dict, k: int) -> str:
    """world.toml with the CG tolerance scaled by 1 + PERTURBATIONS[k], as perturbed{k}.toml."""
    text = (info["folder"] / "world.toml").read_text(encoding="utf-8")
    head, sep, rest = text.partition("[scene]\n")
    assert sep, "no [scene] table in the exported scene"
    tol, kept, in_scene = DEFAULT_CG_TOLERANCE, [], True
    for line in rest.split("\n"):
        in_scene = in_scene and not line.startswith("[")
        if in_scene and line.split("=")[0].strip() == "cg_tolerance":
            tol = float(line.split("=")[1].split("#")[0])
            continue
        kept.append(line)
    tol *= 1.0 + PERTURBATIONS[k]
    name = f"perturbed{k}.toml"
    (info["folder"] / name).write_text(f"{head}[scene]\ncg_tolerance = {tol!r}\n" + "\n".join(kept), encoding="utf-8")
    return name


def spread(values, fmt="{:.0f}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"


def update_benchmarks(path: Path, setup: str, text: str) -> None:
    """Replace the text between this set-up's begin and end markers in BENCHMARKS.md."""
    begin, end = f"<!-- character_compare {setup} begin -->", f"<!-- character_compare {setup} end -->"
    doc = path.read_text(encoding="utf-8")
    if doc.count(begin) != 1 or doc.count(end) != 1:
        raise SystemExit(f"{path}: no single '{begin}' ... '{end}' block to replace")
    head, rest = doc.split(begin)
    _, tail = rest.split(end)
    path.write_text(f"{head}{begin}\n{text}\n{end}{tail}", encoding="utf-8")
    print(f"updated {path} ({setup})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", default=",".join(SCENES))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--frames", type=int, help="frame_end (default: each scene's, 48)")
    parser.add_argument("--bin", default=os.environ.get("CLOTHBAKE_BIN", str(REPO / "target/release/clothbake")))
    parser.add_argument("--blender-mass", choices=("default", "matched"), default="default",
                        help="Blender's vertex mass: its default (0.3 kg per vertex) or clothbake's (density x area / vertices)")
    parser.add_argument("--blender-distance", choices=("default", "thickness"), default="default",
                        help="Blender's collision and self-collision distance: its default (15 mm) or the garment's thickness")
    parser.add_argument("--perturb", type=int, default=0, metavar="K",
                        help=f"also bake each scene K more times (at most {len(PERTURBATIONS)}) with the CG "
                             "tolerance changed by 0.5-3 %%: substep counts are chaotic in the solves' bits, and "
                             "these runs show the spread of clothbake's time (ms/frame mean and range, ratio to "
                             "Blender's median)")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--keep", metavar="DIR",
                        help="build and bake in DIR (kept afterwards: DIR/SCENE/clothbake holds the exported "
                             "scene.toml) instead of a temporary folder")
    parser.add_argument("--export-only", action="store_true",
                        help="only build and export the scenes (into --keep DIR), no bakes")
    parser.add_argument("--update-benchmarks", action="store_true",
                        help="replace this set-up's block in BENCHMARKS.md with the new table")
    args = parser.parse_args()
    if args.export_only and not args.keep:
        parser.error("--export-only needs --keep DIR")
    if not 0 <= args.perturb <= len(PERTURBATIONS):
        parser.error(f"--perturb takes 0 to {len(PERTURBATIONS)}")
    binary = os.path.abspath(args.bin)
    os.environ["CLOTHBAKE_BIN"] = binary
    commit = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    load_before = os.getloadavg()
    rows = []
    with contextlib.ExitStack() as stack:
        tmp = args.keep or stack.enter_context(tempfile.TemporaryDirectory())
        for name in args.scenes.split(","):
            build = SCENES[name]
            work = Path(tmp) / name
            if work.exists():
                shutil.rmtree(work)
            (work / "clothbake").mkdir(parents=True)
            info = export_scene(build, work / "clothbake", binary, args.frames)
            if args.export_only:
                print(f"{name}: exported to {info['folder']}")
                continue
            blender, ours = [], []
            for run in range(args.runs):  # alternate: Blender, clothbake, Blender, ...
                bwork = work / f"blender{run}"
                bwork.mkdir()
                blender.append(run_blender(build, bwork, binary, args.frames, args.blender_mass == "matched",
                                           args.blender_distance == "thickness"))
                print(f"{name} run {run + 1}: Blender {blender[-1]['wall']:.0f} ms/frame", flush=True)
                ours.append(run_clothbake(binary, info, work / f"out{run}"))
                print(f"{name} run {run + 1}: clothbake {ours[-1]['wall']:.0f} ms/frame", flush=True)
            qb, qc = quality(blender[-1]["positions"], info), quality(ours[-1]["positions"], info)
            same_b = all(np.array_equal(r["positions"], blender[0]["positions"]) for r in blender)
            same_c = all(np.array_equal(r["positions"], ours[0]["positions"]) for r in ours)
            perturbed = []
            for k in range(args.perturb):
                run = run_clothbake(binary, info, work / f"perturbed{k}", perturbed_scene(info, k))
                run["quality"] = quality(run.pop("positions"), info)
                perturbed.append(run)
                print(f"{name} perturbed {k + 1}: clothbake {run['wall']:.0f} ms/frame", flush=True)
            rows.append((name, info, blender, ours, qb, qc, same_b, same_c, perturbed))
    load_after = os.getloadavg()
    if args.export_only:
        return 0

    lines = [
        f"commit {commit}; {os.cpu_count()} cores; load average (1/5/15 min) before "
        f"{tuple(round(x, 2) for x in load_before)}, after {tuple(round(x, 2) for x in load_after)}; "
        f"{args.runs} alternating runs each (ranges over runs; quality from the last run); Blender vertex mass: "
        + ("its default 0.3 kg" if args.blender_mass == "default" else "clothbake's (density x area / vertices)")
        + "; Blender collision distances: "
        + ("its default 15 mm" if args.blender_distance == "default" else "the garment's thickness"),
        "",
        "| scene | vertices (pinned) | frames, substeps, self-coll. | Blender 4.5 ms/frame wall (CPU) "
        "| clothbake ms/frame wall (CPU) | Blender / clothbake wall (CPU), median | clothbake substeps (rejected) "
        "| CG it. / substep | max edge strain B / cb (stretch B / cb) | verts inside proxies B / cb (deepest mm) "
        "| self-intersections B / cb (report) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, info, blender, ours, qb, qc, same_b, same_c, _perturbed in rows:
        bw, bc = [r["wall"] for r in blender], [r["cpu"] for r in blender]
        cw, cc = [r["wall"] for r in ours], [r["cpu"] for r in ours]
        rep = ours[-1]["report"]
        ratio_w = float(np.median(bw)) / float(np.median(cw))
        ratio_c = float(np.median(bc)) / float(np.median(cc))
        lines.append(
            f"| {name} | {info['vertices']:,} ({info['pins']:,}) | {info['frames']}, {info['substeps']}, "
            f"{'on' if info['self_collision'] else 'off'} | {spread(bw)} ({spread(bc)}) | {spread(cw)} ({spread(cc)}) "
            f"| {ratio_w:.2f}× ({ratio_c:.2f}×) | {rep['substeps']} ({rep['rejected_substeps']}) "
            f"| {rep['cg_iterations'] / max(rep['substeps'], 1):.1f} | {qb['strain']:.3f} / {qc['strain']:.3f} "
            f"({qb['stretch']:.3f} / {qc['stretch']:.3f}) "
            f"| {qb['inside']} ({qb['deepest'] * 1000:.1f}) / {qc['inside']} ({qc['deepest'] * 1000:.1f}) "
            f"| {qb['self_x']} / {qc['self_x']} ({ours[-1]['report_self_intersections']}) |"
        )
    lines.append("")
    for name, _info, blender, ours, _qb, _qc, same_b, same_c, perturbed in rows:
        why = ours[-1].get("rejections") or {}
        causes = ", ".join(f"{k.replace('strain_jump_', 'strain jump: ').replace('_', ' ')} {v}"
                           for k, v in why.items() if v)
        lines.append(f"- {name}: runs identical: Blender {same_b}, clothbake {same_c}"
                     + (f"; clothbake's rejected substeps by cause: {causes}" if causes else ""))
        if perturbed:
            walls = [r["wall"] for r in perturbed]
            ratios = [float(np.median([r["wall"] for r in blender])) / w for w in walls]
            sub = [r["report"]["substeps"] for r in perturbed]
            rej = [r["report"]["rejected_substeps"] for r in perturbed]
            worst = max(r["quality"]["stretch"] for r in perturbed)
            inside = max(r["quality"]["inside"] for r in perturbed)
            self_x = max(r["quality"]["self_x"] for r in perturbed)
            lines.append(
                f"  - over {len(perturbed)} CG tolerances 0.5–3 % off: clothbake {np.mean(walls):.0f} ms/frame "
                f"({spread(walls)}), ratio {np.mean(ratios):.2f}× ({spread(ratios, '{:.2f}')}×), substeps "
                f"{np.mean(sub):.0f} ({spread(sub)}), rejected {np.mean(rej):.0f} ({spread(rej)}); "
                f"worst stretch {worst:.3f}, most verts inside {inside}, most self-intersections {self_x}")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n", encoding="utf-8")
    if args.update_benchmarks:
        update_benchmarks(REPO / "BENCHMARKS.md", f"mass={args.blender_mass} distance={args.blender_distance}", text)
    addon().unregister()  # bpy 4.5 as a module does not exit with the add-on registered
    return 0


if __name__ == "__main__":
    sys.exit(main())
