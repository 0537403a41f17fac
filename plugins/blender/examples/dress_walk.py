"""Bake the `dress-walk` sample in Blender with the ClothBake add-on.

Headless (bpy 4.5 as a Python module, or `blender -b --python` with the add-on enabled):

    python3 plugins/blender/examples/dress_walk.py [--bin target/release/clothbake] [--save dress_walk.blend]

What it does is what you would do by hand in the UI:

1. `clothbake sample dress-walk -o DIR` writes the character (figure.glb); *File > Import > glTF*
   brings in the armature `Armature` with its walk, the skinned `Body` and `Dress`, and the body
   proxies as empties `CB_SPHERE_*` / `CB_CAPSULE_*` parented to the bones (their glTF extras become
   the custom property `clothbake`: collider, radius, length, radius_a, radius_b).
2. The importer puts glTF time 0 at frame 0; the walk is moved one frame later so frame 1 is the
   bind pose, as in the sample's scene.toml (`time_offset = -1/24`).
3. Each proxy empty gets a child mesh of the proxy's extent (hidden in renders), marked
   *Collider* with shape Sphere or Capsule and the proxy's radii: a capsule runs along the empty's
   local Z (glTF +Y) from its origin for `length`.
4. `Dress` is marked *Garment* (cotton, thickness 5 mm, friction 0.1, self collision) with the pin
   group `pins` = the bodice and hip yoke, the vertices the sample's scene.toml pins.
5. Scene frames 1-48, 4 substeps, then `bpy.ops.clothbake.bake()`.

Afterwards it prints, at frames 1 and the last, how far the cached pinned vertices are from where
the rig puts them and how far what Blender displays is from the cache (both 0 when the bake follows
the walking character and plays back exactly).
"""

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import tomllib

import bpy
from mathutils import Vector

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # plugins/blender: the add-on package `clothbake`


def import_sample(binary, folder):
    subprocess.run([binary, "sample", "dress-walk", "-o", folder], check=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=os.path.join(folder, "figure.glb"))
    for action in bpy.data.actions:  # frame 1 = glTF time 0 (the bind pose)
        for fc in action.fcurves:
            for k in fc.keyframe_points:
                k.co.x += 1.0
                k.handle_left.x += 1.0
                k.handle_right.x += 1.0
    with open(os.path.join(folder, "scene.toml"), "rb") as f:
        return tomllib.load(f)


def box_mesh(name, lo, hi):
    """A closed box from corner `lo` to `hi`: the add-on fits the proxy to its extent."""
    verts = [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    return mesh


def mark_colliders(scene):
    for empty in [o for o in scene.objects if o.type == "EMPTY" and o.get("clothbake")]:
        spec = empty["clothbake"]
        if spec["collider"] == "sphere":
            r = spec["radius"]
            mesh = box_mesh(empty.name, (-r, -r, -r), (r, r, r))
        else:
            ra, rb, length = spec["radius_a"], spec["radius_b"], spec["length"]
            w = max(ra, rb)
            # Extent ra beyond both ends: the fitted axis then runs from the origin to `length`.
            mesh = box_mesh(empty.name, (-w, -w, -ra), (w, w, length + ra))
        proxy = bpy.data.objects.new(empty.name + "_proxy", mesh)
        scene.collection.objects.link(proxy)
        proxy.parent = empty  # identity parent inverse: the proxy is where the empty is
        proxy.display_type = "WIRE"
        proxy.hide_render = True
        s = proxy.clothbake
        s.role = "COLLIDER"
        if spec["collider"] == "sphere":
            s.collider_shape, s.collider_radius = "SPHERE", spec["radius"]
        else:
            s.collider_shape = "CAPSULE"
            s.collider_radius, s.collider_radius_b = spec["radius_a"], spec["radius_b"]


def mark_garment(dress, sample_scene):
    pins = sample_scene["garment"][0]["pin"]["vertices"]
    group = dress.vertex_groups.new(name="pins")
    group.add(pins, 1.0, "REPLACE")
    s = dress.clothbake
    s.role = "GARMENT"
    s.material = "cotton"
    s.thickness = 0.005
    s.friction = 0.1
    s.self_collision = True
    s.pin_group = "pins"
    return pins


def pc2_frame(path, sample):
    """One sample of a PC2 file as a list of vectors."""
    with open(path, "rb") as f:
        head = f.read(32)
        points = struct.unpack("<i", head[16:20])[0]
        f.seek(32 + sample * points * 12)
        data = struct.unpack(f"<{3 * points}f", f.read(12 * points))
    return [Vector(data[3 * i:3 * i + 3]) for i in range(points)]


def evaluated(scene, dress, frame, cache_on):
    """World positions of the dress's vertices at `frame`, with or without its Mesh Cache modifier."""
    cache = [m for m in dress.modifiers if m.type == "MESH_CACHE"]
    was = [m.show_viewport for m in cache]
    for m in cache:
        m.show_viewport = cache_on
    scene.frame_set(frame)
    ev = dress.evaluated_get(bpy.context.evaluated_depsgraph_get())
    out = [ev.matrix_world @ v.co for v in ev.data.vertices]
    for m, v in zip(cache, was):
        m.show_viewport = v
    return out, ev.matrix_world.copy()


def check(scene, dress, pins, frames):
    """Print, per frame, how far the cached (simulated) pinned vertices are from where the rig puts
    them, and how far what Blender displays is from the cache (both 0 for a correct bake)."""
    cache = next(m for m in dress.modifiers if m.type == "MESH_CACHE")
    path = bpy.path.abspath(cache.filepath)
    for frame in frames:
        rig, _ = evaluated(scene, dress, frame, cache_on=False)
        shown, matrix = evaluated(scene, dress, frame, cache_on=True)
        local = pc2_frame(path, frame - int(cache.frame_start))
        simulated = [matrix @ p for p in local]  # the cache is in the object's local space
        pin_off = max((simulated[i] - rig[i]).length for i in pins)
        shown_off = max((a - b).length for a, b in zip(shown, simulated))
        print(f"frame {frame}: cached pinned vertices up to {pin_off * 1000:.1f} mm from the rig; "
              f"displayed up to {shown_off * 1000:.1f} mm from the cache")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("CLOTHBAKE_BIN", "target/release/clothbake"))
    ap.add_argument("--save", help="save the baked scene as this .blend")
    ap.add_argument("--frame-end", type=int, default=48, help="last baked frame (48: the whole walk)")
    args = ap.parse_args(argv)
    binary = os.path.abspath(args.bin)
    os.environ["CLOTHBAKE_BIN"] = binary  # the add-on finds the binary here unless its preference is set

    import clothbake

    registered_here = not hasattr(bpy.types.Scene, "clothbake")
    if registered_here:
        clothbake.register()
    try:
        with tempfile.TemporaryDirectory() as work:
            sample_scene = import_sample(binary, os.path.join(work, "sample"))
            scene = bpy.context.scene
            mark_colliders(scene)
            dress = bpy.data.objects["Dress"]
            pins = mark_garment(dress, sample_scene)
            settings = scene.clothbake
            settings.frame_start, settings.frame_end, settings.substeps = 1, args.frame_end, 4
            settings.output_dir = args.save and "//clothbake_cache" or os.path.join(work, "cache")
            if args.save:
                bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(args.save))
            result = bpy.ops.clothbake.bake()
            print(f"bake: {result} {settings.status}")
            if result == {"FINISHED"}:
                check(scene, dress, pins, (1, args.frame_end))
            if args.save:
                bpy.ops.wm.save_mainfile()
    finally:
        if registered_here:
            clothbake.unregister()  # bpy 4.5 as a module does not exit with the add-on registered


if __name__ == "__main__":
    main(sys.argv[1:] if "--" not in sys.argv else sys.argv[sys.argv.index("--") + 1:])
