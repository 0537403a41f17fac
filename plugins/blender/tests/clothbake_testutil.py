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
    """Import and register the add-on from the source folder (once per test process).

    It is unregistered again at exit: bpy 4.5 as a Python module deadlocks in its exit handlers
    (GlobalState::~GlobalState waiting on delayed_close_thread) when an Operator, Panel or
    AddonPreferences class is still registered, and the test run would never end.
    """
    import atexit

    import bpy

    if PLUGIN_DIR not in sys.path:
        sys.path.insert(0, PLUGIN_DIR)
    import clothbake

    if not hasattr(bpy.types.Scene, "clothbake"):
        clothbake.register()
        atexit.register(clothbake.unregister)
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
