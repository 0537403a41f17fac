"""Shared helpers for the Blender add-on tests (a uniquely named module, not conftest, so it cannot
clash with other test folders collected in the same pytest run).

``load_runner()`` imports clothbake/runner.py by path, so the bpy-free tests never import the add-on
package (whose ``__init__`` talks to Blender).
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN_DIR = os.path.dirname(HERE)  # plugins/blender
ADDON_DIR = os.path.join(PLUGIN_DIR, "clothbake")
REPO_DIR = os.path.dirname(os.path.dirname(PLUGIN_DIR))


def load_runner():
    name = "clothbake_runner_under_test"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(ADDON_DIR, "runner.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def clothbake_binary():
    """The clothbake binary for the bpy tests: $CLOTHBAKE_BIN, else <repo>/target/release/clothbake.

    A CLOTHBAKE_BIN that is set but not an executable file fails the test (CI sets it, so a broken
    build must never turn into skipped tests); with neither, the test is skipped with the reason.
    """
    import pytest

    value = os.environ.get("CLOTHBAKE_BIN", "")
    if value:
        if not (os.path.isfile(value) and os.access(value, os.X_OK)):
            pytest.fail(f"CLOTHBAKE_BIN={value!r} is not an executable file: build it with `cargo build --release`")
        return os.path.abspath(value)
    built = os.path.join(REPO_DIR, "target", "release", "clothbake")
    if os.path.isfile(built) and os.access(built, os.X_OK):
        return built
    pytest.skip("no clothbake binary: run `cargo build --release` or set CLOTHBAKE_BIN")


def read_pc2(path):
    """(start_frame, samples) of a PC2 file, samples as a numpy array [numSamples, numPoints, 3]."""
    import struct

    import numpy as np

    with open(path, "rb") as f:
        head = f.read(32)
        assert head[:12] == b"POINTCACHE2\0", path
        version, points, start, rate, count = struct.unpack("<iiffi", head[12:])
        assert version == 1 and rate == 1.0
        data = np.frombuffer(f.read(), dtype="<f4")
    assert data.size == count * points * 3, path
    return start, data.reshape(count, points, 3)


def addon():
    """Import and register the add-on from the source folder (once per test process); the add-on
    unregisters itself at exit (bpy 4.5's exit hang, clothbake/__init__.py, test_blender_exit.py)."""
    import bpy

    if PLUGIN_DIR not in sys.path:
        sys.path.insert(0, PLUGIN_DIR)
    import clothbake

    if not hasattr(bpy.types.Scene, "clothbake"):
        clothbake.register()
    return clothbake


def new_scene(tmp_path):
    """An empty scene whose bakes go under tmp_path/bakes (the .blend stays unsaved)."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = 24
    scene.clothbake.output_dir = str(tmp_path / "bakes")
    return scene


def make_garment(scene, name, location, rotation, scale, cells=12, size=1.0, seed=1):
    """A square sheet in its local XY plane with shuffled vertex order, a UV seam down the middle
    (two UV islands), sharp edges along that seam and flat-shaded faces on one side, and a vertex
    group "pins": weight 1 along the local -Y edge, 0.5 on the next row."""
    import random

    import bpy
    from mathutils import Euler

    n = cells + 1
    grid = [(size * (i / cells - 0.5), size * (j / cells - 0.5), 0.0) for j in range(n) for i in range(n)]
    order = list(range(n * n))
    random.Random(seed).shuffle(order)  # new index of grid vertex g is order.index(g)
    new_of = {g: k for k, g in enumerate(order)}
    verts = [grid[g] for g in order]
    faces = [
        (new_of[j * n + i], new_of[j * n + i + 1], new_of[(j + 1) * n + i + 1], new_of[(j + 1) * n + i])
        for j in range(cells)
        for i in range(cells)
    ]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    uv = mesh.uv_layers.new(name="UVMap")
    half = cells // 2
    for poly in mesh.polygons:
        right = sum(verts[v][0] for v in poly.vertices) / 4 > size * (half / cells - 0.5)
        poly.use_smooth = not right
        for li in poly.loop_indices:
            x, y, _ = verts[mesh.loops[li].vertex_index]
            uv.uv[li].vector = ((x / size + 0.5) * 0.45 + (0.55 if right else 0.0), y / size + 0.5)
    seam_x = size * (half / cells - 0.5)
    for e in mesh.edges:
        a, b = (verts[v] for v in e.vertices)
        if abs(a[0] - seam_x) < 1e-9 and abs(b[0] - seam_x) < 1e-9:
            e.use_seam = True
            e.use_edge_sharp = True
    obj = bpy.data.objects.new(name, mesh)
    scene.collection.objects.link(obj)
    obj.location, obj.rotation_euler, obj.scale = location, Euler(rotation), scale
    group = obj.vertex_groups.new(name="pins")
    step = size / cells
    for k, (x, y, _) in enumerate(verts):
        if abs(y + size / 2) < 1e-9:
            group.add([k], 1.0, "REPLACE")
        elif abs(y + size / 2 - step) < 1e-9:
            group.add([k], 0.5, "REPLACE")
    obj.clothbake.role = "GARMENT"
    obj.clothbake.pin_group = "pins"
    return obj


def make_sphere(scene, name, radius, keys):
    """A UV-sphere collider (vertices exactly on `radius`), keyframed at {frame: location}."""
    import bmesh
    import bpy

    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=24, v_segments=12, radius=radius)
    bm.to_mesh(mesh)
    bm.free()
    obj = bpy.data.objects.new(name, mesh)
    scene.collection.objects.link(obj)
    for frame, location in sorted(keys.items()):
        obj.location = location
        obj.keyframe_insert("location", frame=frame)
    obj.clothbake.role = "COLLIDER"
    obj.clothbake.collider_shape = "SPHERE"
    scene.frame_set(scene.frame_current)  # evaluate the animation: location is the last key until then
    return obj


def files_under(path):
    """Every file below path (empty if it does not exist)."""
    found = []
    for folder, _dirs, files in os.walk(path):
        found.extend(os.path.join(folder, f) for f in files)
    return sorted(found)


def evaluated_local(obj):
    """Object-local vertex positions of the evaluated object at the current frame."""
    import bpy
    import numpy as np

    depsgraph = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(depsgraph).data
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def make_swinging_bone(scene, name="Rig", frames=(1, 24), angle=1.2):
    """An armature with one bone "Arm" (head at the origin, tail at +X 0.6 m) keyed to turn by
    `angle` about its local X axis (a vertical swing) between frames[0] and frames[1]."""
    import bpy

    arm_data = bpy.data.armatures.new(name)
    rig = bpy.data.objects.new(name, arm_data)
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm_data.edit_bones.new("Arm")
    bone.head, bone.tail = (0.0, 0.0, 0.0), (0.6, 0.0, 0.0)
    bpy.ops.object.mode_set(mode="OBJECT")
    pb = rig.pose.bones["Arm"]
    pb.rotation_mode = "XYZ"
    for frame, a in ((frames[0], 0.0), (frames[1], angle)):
        pb.rotation_euler = (a, 0.0, 0.0)
        pb.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_set(scene.frame_current)
    return rig


def parent_to_bone(obj, rig, bone, offset):
    """Parent obj to the tail of `bone`, `offset` away from it in the bone's frame."""
    obj.parent = rig
    obj.parent_type = "BONE"
    obj.parent_bone = bone
    obj.location = offset


def make_skinned_arm(scene, rig, radius=0.1, length=0.6):
    """A cylinder "Body" along the rig's bone "Arm", fully weighted to it (Armature modifier)."""
    import bmesh
    import bpy

    mesh = bpy.data.meshes.new("Body")
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=16, radius1=radius, radius2=radius, depth=length)
    bmesh.ops.subdivide_edges(bm, edges=[e for e in bm.edges if abs(e.verts[0].co.z - e.verts[1].co.z) > 1e-6], cuts=3)
    bm.to_mesh(mesh)
    bm.free()
    for v in mesh.vertices:  # cone axis (local Z) -> along the bone (+X from its head)
        v.co = (v.co.z + length / 2, v.co.x, v.co.y)
    body = bpy.data.objects.new("Body", mesh)
    scene.collection.objects.link(body)
    body.parent = rig
    group = body.vertex_groups.new(name="Arm")
    group.add(list(range(len(mesh.vertices))), 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = rig
    body.clothbake.role = "COLLIDER"
    body.clothbake.collider_shape = "AUTO"
    return body


# -- characters (issue 12) -----------------------------------------------------------------------


def _cylinder_mesh(name, radius, length, segments=12):
    """A closed cylinder along local Z, centred at the origin."""
    import bmesh
    import bpy

    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=segments, radius1=radius, radius2=radius, depth=length)
    bm.to_mesh(mesh)
    bm.free()
    return mesh


def make_walker(scene, frames=(1, 48), distance=1.6, swing=0.45, start=(0.0, 0.0, 0.0)):
    """A walking armature "Walker": bones Hips (1.0 -> 1.2 m up), Chest (1.2 -> 1.5), Leg.L / Leg.R
    (hip at 0.95 m, x = +-0.1, down to 0.1 m). ROOT MOTION: the object walks `distance` towards -Y
    over `frames` from `start` (Blender world, m); two strides: the hips bob (2.5 cm) and turn
    (+-0.12 rad), the legs swing +-`swing` rad, the chest twists. Keyed every 4 frames (Bezier)."""
    import math

    import bpy

    arm_data = bpy.data.armatures.new("Walker")
    rig = bpy.data.objects.new("Walker", arm_data)
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bones = arm_data.edit_bones
    hips = bones.new("Hips")
    hips.head, hips.tail = (0.0, 0.0, 1.0), (0.0, 0.0, 1.2)
    chest = bones.new("Chest")
    chest.head, chest.tail, chest.parent = (0.0, 0.0, 1.2), (0.0, 0.0, 1.5), hips
    for side, x in (("L", 0.1), ("R", -0.1)):
        leg = bones.new(f"Leg.{side}")
        leg.head, leg.tail, leg.parent = (x, 0.0, 0.95), (x, 0.0, 0.1), hips
    bpy.ops.object.mode_set(mode="OBJECT")
    pose = rig.pose.bones
    for pb in pose:
        pb.rotation_mode = "XYZ"
    f0, f1 = frames
    for frame in list(range(f0 - 12, f1 + 1, 4)) + [f1]:
        t = (frame - f0) / (f1 - f0)
        phase = 4.0 * math.pi * t  # two strides
        rig.location = (start[0], start[1] - distance * t, start[2])
        rig.keyframe_insert("location", frame=frame)
        pose["Hips"].location = (0.0, 0.025 * math.sin(2.0 * phase), 0.0)  # bone Y = world Z: bob
        pose["Hips"].rotation_euler = (0.0, 0.12 * math.sin(phase), 0.0)  # about world Z: turn
        pose["Chest"].rotation_euler = (0.0, -0.1 * math.sin(phase), 0.0)
        pose["Leg.L"].rotation_euler = (swing * math.sin(phase), 0.0, 0.0)
        pose["Leg.R"].rotation_euler = (-swing * math.sin(phase), 0.0, 0.0)
        pose["Hips"].keyframe_insert("location", frame=frame)
        for pb in pose:
            pb.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_set(f0)
    return rig


def add_body_proxies(scene, rig, torso=False):
    """Colliders parented to the walker's bones (parent_type BONE): a pelvis sphere (r 0.15, centre
    0.02 m above the hip joints), a capsule per leg (r 0.07, 0.8 m long) and with `torso` a chest
    capsule (r 0.12). Returns them by name."""
    import math

    import bpy

    proxies = {}

    def link(obj, bone, offset, rotation, shape):
        scene.collection.objects.link(obj)
        parent_to_bone(obj, rig, bone, offset)
        obj.rotation_euler = rotation
        obj.clothbake.role = "COLLIDER"
        obj.clothbake.collider_shape = shape
        proxies[obj.name] = obj

    import bmesh

    mesh = bpy.data.meshes.new("Pelvis")
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=8, radius=0.15)
    bm.to_mesh(mesh)
    bm.free()
    link(bpy.data.objects.new("Pelvis", mesh), "Hips", (0.0, -0.18, 0.0), (0.0, 0.0, 0.0), "SPHERE")  # tail 1.2 -> 1.02
    for side in ("L", "R"):  # bone Y runs from the hip (head) down to the tail: the middle is 0.425 back
        obj = bpy.data.objects.new(f"Thigh.{side}", _cylinder_mesh(f"Thigh.{side}", 0.07, 0.8))
        link(obj, f"Leg.{side}", (0.0, -0.425, 0.0), (math.pi / 2, 0.0, 0.0), "CAPSULE")
    if torso:
        obj = bpy.data.objects.new("Torso", _cylinder_mesh("Torso", 0.12, 0.5))
        link(obj, "Chest", (0.0, -0.18, 0.0), (math.pi / 2, 0.0, 0.0), "CAPSULE")
    scene.frame_set(scene.frame_current)
    return proxies


def make_skirt(scene, rig, rings=7, segments=24, waist=0.2, hem=0.3, top=1.0, length=0.45):
    """A skirt (a flared tube, rings x segments vertices) SKINNED to the walker: parented to the rig
    object, Armature modifier, every vertex weighted 1 to Hips; pin group "waist" = the top ring."""
    import math

    import bpy

    verts = []
    for k in range(rings):
        s = k / (rings - 1)
        r, z = waist + (hem - waist) * s, top - length * s
        verts += [(r * math.cos(2 * math.pi * j / segments), r * math.sin(2 * math.pi * j / segments), z) for j in range(segments)]
    faces = [(k * segments + j, k * segments + (j + 1) % segments, (k + 1) * segments + (j + 1) % segments, (k + 1) * segments + j)
             for k in range(rings - 1) for j in range(segments)]
    mesh = bpy.data.meshes.new("Skirt")
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    skirt = bpy.data.objects.new("Skirt", mesh)
    scene.collection.objects.link(skirt)
    skirt.parent = rig
    skirt.vertex_groups.new(name="Hips").add(list(range(len(verts))), 1.0, "REPLACE")
    skirt.vertex_groups.new(name="waist").add(list(range(segments)), 1.0, "REPLACE")
    skirt.modifiers.new("Armature", "ARMATURE").object = rig
    skirt.clothbake.role = "GARMENT"
    skirt.clothbake.pin_group = "waist"
    scene.frame_set(scene.frame_current)
    return skirt


def make_sheet(scene, name, width, height, cols, rows, origin):
    """A vertical sheet in the XZ plane: x in origin.x +- width/2, z from origin.z down to
    origin.z - height, at y = origin.y; vertex (i, j) = column i, row j (row 0 on top) has index
    j * (cols + 1) + i."""
    import bpy

    ox, oy, oz = origin
    verts = [(ox + width * (i / cols - 0.5), oy, oz - height * j / rows) for j in range(rows + 1) for i in range(cols + 1)]
    n = cols + 1
    faces = [(j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i) for j in range(rows) for i in range(cols)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    scene.collection.objects.link(obj)
    obj.clothbake.role = "GARMENT"
    return obj


def bone_tail_matrix(rig, bone):
    """The world matrix a BONE-parented child hangs from (the bone's tail frame) at the current frame."""
    from mathutils import Matrix

    pb = rig.pose.bones[bone]
    return rig.matrix_world @ pb.matrix @ Matrix.Translation((0.0, pb.length, 0.0))


def world_of(obj, local):
    """Object-local points [n, 3] -> world with the object's current matrix_world (float64)."""
    import numpy as np

    m = np.array(obj.matrix_world, dtype=np.float64)
    return np.asarray(local, dtype=np.float64) @ m[:3, :3].T + m[:3, 3]


def proxy_depth(points_blender, fit_world):
    """How deep each point (Blender world axes) is inside one exported-style proxy shape (scene
    axes, ColliderFit.world): > 0 inside. Capsules here have equal radii."""
    import numpy as np

    p = np.column_stack([points_blender[:, 0], points_blender[:, 2], -points_blender[:, 1]])  # -> scene axes
    if "center" in fit_world:
        return fit_world["radius"] - np.linalg.norm(p - np.array(fit_world["center"]), axis=1)
    a, b = np.array(fit_world["a"]), np.array(fit_world["b"])
    ab = b - a
    t = np.clip((p - a) @ ab / (ab @ ab), 0.0, 1.0)
    return fit_world["radius_a"] - np.linalg.norm(p - (a + t[:, None] * ab), axis=1)
