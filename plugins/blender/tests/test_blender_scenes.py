"""Harder scenes in real Blender (bpy 4.5): two garments with their own transforms and materials, and
colliders parented to a bone of an animated armature."""

import os
import tomllib

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from clothbake_testutil import (  # noqa: E402
    addon,
    clothbake_binary,
    evaluated_local,
    make_garment,
    make_sphere,
    make_swinging_bone,
    new_scene,
    parent_to_bone,
    read_pc2,
)

FRAMES = (1, 20)


def world_points(obj):
    m = np.array(obj.matrix_world, dtype=np.float64)
    return evaluated_local(obj).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


@pytest.fixture
def rigged(tmp_path, monkeypatch):
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    addon()
    scene = new_scene(tmp_path)
    scene.clothbake.frame_start, scene.clothbake.frame_end, scene.clothbake.substeps = FRAMES[0], FRAMES[1], 4
    rig = make_swinging_bone(scene, frames=(1, 10), angle=np.pi / 2)  # the sphere swings up into the skirt
    rig.location = (0.45, 0.0, 0.0)
    ball = make_sphere(scene, "Fist", 0.2, {})
    parent_to_bone(ball, rig, "Arm", (0.0, 0.0, 0.0))
    skirt = make_garment(scene, "Skirt", location=(0.45, 0.3, 1.0), rotation=(0.0, 0.0, 0.1), scale=(0.8, 0.8, 0.8), cells=10, seed=3)
    cape = make_garment(scene, "Cape", location=(-0.8, 0.3, 1.2), rotation=(0.0, 0.1, -0.3), scale=(1.0, 1.0, 1.0), cells=9, seed=4)
    cape.clothbake.material = "silk"
    cape.clothbake.pin_group = ""
    cape.clothbake.use_density, cape.clothbake.density = True, 0.09
    cape.clothbake.use_stretch, cape.clothbake.stretch = True, (900.0, 700.0)
    cape.clothbake.use_bend, cape.clothbake.bend = True, 3e-6
    cape.clothbake.shear = 55.0  # not used: its override is off
    cape.clothbake.self_collision = False
    scene.frame_set(FRAMES[0])
    return scene, rig, ball, skirt, cape, tmp_path


def test_bone_parented_collider_follows_the_bone_in_the_exported_keys(rigged):
    scene, rig, ball, skirt, cape, tmp_path = rigged
    clothbake = addon()
    job = clothbake.bake_job.BakeJob(bpy.context)
    job.start(bpy.context)
    try:
        with open(os.path.join(job.bake_dir, "scene.toml"), "rb") as f:
            doc = tomllib.load(f)
    finally:
        job.cancel()
    (sphere,) = doc["collider"]
    assert sphere["type"] == "sphere" and sphere["radius"] == pytest.approx(0.2, abs=1e-6)
    keys = sphere["keys"]
    assert [k["frame"] for k in keys] == list(range(FRAMES[0], FRAMES[1] + 1))
    travelled = 0.0
    for key in keys:
        scene.frame_set(key["frame"])
        x, y, z = ball.matrix_world.translation
        assert key["center"] == pytest.approx([x, z, -y], abs=1e-6)  # Blender Z-up -> scene Y-up
        travelled = max(travelled, float(np.linalg.norm(np.subtract(key["center"], keys[0]["center"]))))
    assert travelled > 0.3  # the bone really swings the collider
    names = [g["name"] for g in doc["garment"]]
    assert names == ["Skirt", "Cape"]
    cape = doc["garment"][1]
    assert cape["material"] == "silk" and "pin" not in cape and "shear" not in cape
    assert cape["density"] == pytest.approx(0.09) and cape["stretch"] == [900.0, 700.0] and cape["bend"] == pytest.approx(3e-6)
    assert cape["self_collision"] is False and cape["up"] == "z" and cape["mesh"] == "Cape.obj"
    skirt = doc["garment"][0]
    assert skirt["material"] == "cotton" and not {"density", "stretch", "shear", "bend"} & skirt.keys()
    assert skirt["pin"]["vertices"] and len(skirt["pin"]["weights"]) == len(skirt["pin"]["vertices"])
    assert sorted(set(skirt["pin"]["weights"])) == [0.5, 1.0]
    world = np.array(bpy.data.objects["Skirt"].matrix_world)
    assert np.allclose(np.array(skirt["transform"]).reshape(4, 4).T, world, atol=1e-7)  # column-major
    assert doc["output"] == {"dir": "cache", "formats": ["pc2"], "space": "local", "up": "z"}


def test_two_garments_and_a_bone_parented_sphere_bake(rigged):
    scene, rig, ball, skirt, cape, tmp_path = rigged
    assert bpy.ops.clothbake.bake() == {"FINISHED"}
    worst, closest = 0.0, np.inf
    for garment in (skirt, cape):
        mod = garment.modifiers["ClothBake"]
        start, samples = read_pc2(bpy.path.abspath(mod.filepath))
        assert samples.shape == (FRAMES[1] - FRAMES[0] + 1, len(garment.data.vertices), 3)
        for frame in range(FRAMES[0], FRAMES[1] + 1):
            scene.frame_set(frame)
            worst = max(worst, float(np.max(np.abs(evaluated_local(garment) - samples[frame - FRAMES[0]]))))
            gap = np.min(np.linalg.norm(world_points(garment) - np.array(ball.matrix_world.translation), axis=1)) - 0.2
            assert gap >= 0.0, f"{garment.name}, frame {frame}: a vertex is {-gap} m inside the sphere"
            closest = min(closest, float(gap))
    print(f"two garments: max |evaluated - cache| = {worst:.3g} m, closest to sphere = {closest:.4g} m")
    assert worst < 1e-5
    assert closest < 0.02  # the swinging sphere reached the cloth
    assert bpy.ops.clothbake.free() == {"FINISHED"}
    assert not skirt.modifiers and not cape.modifiers


def glb_json(path):
    import json
    import struct

    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<I", data[12:16])
    return json.loads(data[20 : 20 + length])


def segment_distance(points, a, b):
    ab = b - a
    t = np.clip((points - a) @ ab / (ab @ ab), 0.0, 1.0)
    return np.linalg.norm(points - (a + t[:, None] * ab), axis=1)


def test_auto_collider_from_a_skinned_mesh(tmp_path, monkeypatch):
    """An armature-skinned arm mesh (Auto) goes through Blender's glTF exporter with its animation;
    the binary fits a capsule to the bone and the sheet stays outside the arm."""
    from clothbake_testutil import make_skinned_arm

    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    clothbake = addon()
    scene = new_scene(tmp_path)
    scene.clothbake.frame_start, scene.clothbake.frame_end, scene.clothbake.substeps = 1, 16, 4
    rig = make_swinging_bone(scene, frames=(1, 10), angle=np.pi / 2)
    rig.location = (0.0, 0.0, 0.2)
    make_skinned_arm(scene, rig)
    sheet = make_garment(scene, "Sheet", location=(0.15, 0.35, 1.1), rotation=(0.0, 0.0, 0.0), scale=(0.7, 0.7, 0.7), cells=10, seed=5)
    scene.frame_set(1)

    job = clothbake.bake_job.BakeJob(bpy.context)
    job.start(bpy.context)
    try:
        with open(os.path.join(job.bake_dir, "scene.toml"), "rb") as f:
            doc = tomllib.load(f)
        gltf = glb_json(os.path.join(job.bake_dir, "colliders.glb"))
    finally:
        job.cancel()
    assert doc["collider"] == [{"type": "gltf", "file": "colliders.glb", "proxies": "auto", "mesh": "Body", "inflate": 0.0}]
    assert {"Body", "Rig", "Arm"} <= {n.get("name") for n in gltf["nodes"]}
    assert "Sheet" not in {n.get("name") for n in gltf["nodes"]}  # only the colliders are exported
    times = [gltf["accessors"][s["input"]] for a in gltf["animations"] for s in a["samplers"]]
    assert min(t["min"][0] for t in times) == pytest.approx(1 / 24)  # frame f at f / fps: time_offset 0
    assert max(t["max"][0] for t in times) == pytest.approx(10 / 24)

    assert bpy.ops.clothbake.bake() == {"FINISHED"}
    _, samples = read_pc2(bpy.path.abspath(sheet.modifiers["ClothBake"].filepath))
    bone = rig.pose.bones["Arm"]
    closest = np.inf
    for frame in range(1, 17):
        scene.frame_set(frame)
        assert np.max(np.abs(evaluated_local(sheet) - samples[frame - 1])) < 1e-5
        head = np.array(rig.matrix_world @ bone.head)
        tail = np.array(rig.matrix_world @ bone.tail)
        closest = min(closest, float(np.min(segment_distance(world_points(sheet), head, tail))))
    print(f"auto capsule: closest sheet vertex to the arm's bone axis = {closest:.4g} m (mesh radius 0.1)")
    assert closest > 0.09  # outside the arm (its faces are at >= 0.0981 m from the axis)
    assert closest < 0.2  # and the arm did reach the sheet


def test_saved_file_bakes_next_to_the_blend_with_relative_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    clothbake = addon()
    scene = new_scene(tmp_path)
    scene.clothbake.output_dir = "//clothbake_cache"  # the default
    scene.clothbake.frame_start, scene.clothbake.frame_end = 3, 8
    garment = make_garment(scene, "Flag", location=(0.0, 0.0, 2.0), rotation=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0), cells=6)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    assert clothbake.bake_job.output_root(scene) == str(tmp_path / "clothbake_cache")
    assert bpy.ops.clothbake.bake() == {"FINISHED"}
    mod = garment.modifiers["ClothBake"]
    assert mod.filepath.startswith("//clothbake_cache/") and mod.filepath.endswith("/cache/Flag.pc2")
    assert mod.frame_start == 3
    _, samples = read_pc2(bpy.path.abspath(mod.filepath))
    for frame in (1, 3, 5, 8, 10):  # held at the first / last sample outside the baked range
        scene.frame_set(frame)
        assert np.max(np.abs(evaluated_local(garment) - samples[min(max(frame - 3, 0), 5)])) < 1e-5
    scene.frame_set(5, subframe=0.25)  # sub-frames (motion blur) interpolate linearly between samples
    assert np.max(np.abs(evaluated_local(garment) - (0.75 * samples[2] + 0.25 * samples[3]))) < 1e-5
    assert np.max(np.abs(samples[3] - samples[2])) > 1e-3  # ... which differ
    assert bpy.ops.clothbake.free() == {"FINISHED"}
    assert os.listdir(tmp_path / "clothbake_cache") == []


def test_capsule_fitted_from_a_rotated_scaled_cylinder(tmp_path, monkeypatch):
    """CAPSULE: the longest local axis of the geometry, radius from the other two, placed by the
    object's world matrix (radii scale with it); the sheet dropped on it stays outside."""
    import bmesh
    from mathutils import Vector

    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    clothbake = addon()
    scene = new_scene(tmp_path)
    scene.clothbake.frame_start, scene.clothbake.frame_end = 1, 16
    mesh = bpy.data.meshes.new("Bar")
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=16, radius1=0.1, radius2=0.1, depth=0.8)
    bm.to_mesh(mesh)
    bm.free()
    bar = bpy.data.objects.new("Bar", mesh)
    scene.collection.objects.link(bar)
    bar.location, bar.rotation_euler, bar.scale = (0.0, 0.0, 0.5), (np.pi / 2, 0.0, 0.3), (1.5, 1.5, 1.5)
    bar.clothbake.role = "COLLIDER"
    bar.clothbake.collider_shape = "CAPSULE"
    sheet = make_garment(scene, "Sheet", location=(0.0, 0.0, 0.8), rotation=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0), cells=10)
    sheet.clothbake.pin_group = ""
    scene.frame_set(1)

    job = clothbake.bake_job.BakeJob(bpy.context)
    job.start(bpy.context)
    try:
        with open(os.path.join(job.bake_dir, "scene.toml"), "rb") as f:
            (capsule,) = tomllib.load(f)["collider"]
    finally:
        job.cancel()
    m = bar.matrix_world
    a, b = m @ Vector((0.0, 0.0, -0.3)), m @ Vector((0.0, 0.0, 0.3))  # half length 0.4 minus radius 0.1
    assert capsule["type"] == "capsule" and "keys" not in capsule  # it does not move
    assert capsule["a"] == pytest.approx([a.x, a.z, -a.y], abs=1e-6)
    assert capsule["b"] == pytest.approx([b.x, b.z, -b.y], abs=1e-6)
    assert capsule["radius_a"] == pytest.approx(0.15, abs=1e-6) and capsule["radius_b"] == pytest.approx(0.15, abs=1e-6)

    assert bpy.ops.clothbake.bake() == {"FINISHED"}
    closest = np.inf
    for frame in range(1, 17):
        scene.frame_set(frame)
        closest = min(closest, float(np.min(segment_distance(world_points(sheet), np.array(a), np.array(b)))) - 0.15)
    print(f"capsule: closest sheet vertex to the surface = {closest:.4g} m")
    assert 0.0 <= closest < 0.02
