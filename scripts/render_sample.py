"""Render a few frames of the baked `dress-walk` sample headless with Blender (bpy 4.5) to one PNG.

    python3 scripts/render_sample.py [--bin target/release/clothbake] [--frames 12,24,36,48]
                                     [--out docs/images/dress-walk.png] [--pc2 DRESS.pc2 --sample DIR]

Without --pc2 it writes the sample (`clothbake sample dress-walk`) into a temporary folder and bakes
it there with `[output] up = "z"` (Blender world axes, world space). The character comes from the
sample's figure.glb through Blender's glTF importer (armature, skinned body; the proxies are empties
and do not render). The baked dress is a new object with the imported dress's mesh (the importer
keeps the cache's vertex order), an identity transform, no Armature modifier and a Mesh Cache
modifier on the world-space PC2, so the picture shows exactly the cache.

Blender's importer puts glTF time t at frame 24 t, while the sample plays time 0 at its frame 1
(`time_offset = -1/24`), so the action is shifted one frame later: sample frame f is Blender frame f.
Each frame is rendered with Workbench, a camera following the hips, and the panels are joined side
by side.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import bpy
import numpy as np

PANEL = (270, 414)  # px per frame: width, height


def bake(binary, work):
    sample = os.path.join(work, "dress-walk")
    subprocess.run([binary, "sample", "dress-walk", "-o", sample], check=True)
    scene = os.path.join(sample, "scene.toml")
    text = open(scene).read().replace("[output]\n", '[output]\nup = "z"\n', 1)
    with open(scene, "w") as f:
        f.write(text)
    subprocess.run([binary, "bake", scene, "-o", os.path.join(work, "out")], check=True)
    return sample, os.path.join(work, "out", "dress.pc2")


def setup_scene(sample, pc2):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=os.path.join(sample, "figure.glb"))
    scene = bpy.context.scene
    for action in bpy.data.actions:
        for fc in action.fcurves:
            for k in fc.keyframe_points:
                k.co.x += 1.0
                k.handle_left.x += 1.0
                k.handle_right.x += 1.0
    imported = bpy.data.objects["Dress"]
    dress = bpy.data.objects.new("DressBaked", imported.data.copy())
    scene.collection.objects.link(dress)
    dress.vertex_groups.clear()
    cache = dress.modifiers.new("Cache", "MESH_CACHE")
    cache.cache_format = "PC2"
    cache.filepath = pc2
    cache.frame_start = 1.0  # the sample's frame_start: PC2 sample 0 plays at frame 1
    imported.hide_render = True
    for o in bpy.data.objects:
        if o.type == "MESH" and o.name not in ("Body", "DressBaked"):
            o.hide_render = True
    for o, color in ((bpy.data.objects["Body"], (0.75, 0.7, 0.64, 1)), (dress, (0.62, 0.1, 0.14, 1))):
        o.data.materials.clear()
        o.data.materials.append(material(o.name, color))
        for p in o.data.polygons:
            p.use_smooth = True
    checker_floor(scene)
    scene.render.engine = "BLENDER_WORKBENCH"
    shading = scene.display.shading
    shading.light = "STUDIO"
    shading.color_type = "MATERIAL"
    shading.show_shadows = True
    shading.show_cavity = True
    scene.render.resolution_x, scene.render.resolution_y = PANEL
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.world = bpy.data.worlds.new("World")
    scene.world.color = (1, 1, 1)

    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    cam.data.lens = 55
    scene.collection.objects.link(cam)
    scene.camera = cam
    return scene, cam, dress


def material(name, color):
    m = bpy.data.materials.new(name)
    m.diffuse_color = color
    return m


def checker_floor(scene, size=40.0, tile=1.0):
    """A ground plane of 1 m tiles in two greys, so the walk's root motion shows."""
    import bmesh

    mesh = bpy.data.meshes.new("Floor")
    bm = bmesh.new()
    n = int(size / tile)
    bmesh.ops.create_grid(bm, x_segments=n, y_segments=n, size=size / 2)
    for f in bm.faces:
        c = f.calc_center_median()
        f.material_index = (int((c.x + size) / tile) + int((c.y + size) / tile)) % 2
    bm.to_mesh(mesh)
    bm.free()
    mesh.materials.append(material("FloorA", (0.8, 0.8, 0.78, 1)))
    mesh.materials.append(material("FloorB", (0.6, 0.6, 0.58, 1)))
    floor = bpy.data.objects.new("Floor", mesh)
    floor.location = (-size / 4, -size / 4, 0)
    scene.collection.objects.link(floor)


def label(cam, text):
    """Text at the lower left of the camera's view."""
    curve = bpy.data.curves.new("Label", "FONT")
    curve.body = text
    curve.size = 0.035
    obj = bpy.data.objects.new("Label", curve)
    obj.data.materials.append(material("Label", (0.1, 0.1, 0.1, 1)))
    bpy.context.scene.collection.objects.link(obj)
    obj.parent = cam
    obj.location = (-0.2, -0.3, -1.0)
    return obj


def render_frames(scene, cam, frames, work):
    hips = bpy.data.objects["Armature"].pose.bones["Hips"]
    arm = bpy.data.objects["Armature"]
    paths = []
    for f in frames:
        scene.frame_set(f)
        h = arm.matrix_world @ hips.head
        # From the front-left, mostly from the side; the figure walks along Blender -Y.
        target = np.array([h.x, h.y - 0.1, 0.82])
        eye = target + np.array([3.3, -1.9, 0.6])
        cam.location = eye.tolist()
        direction = target - eye
        from mathutils import Vector

        cam.rotation_euler = Vector(direction.tolist()).to_track_quat("-Z", "Y").to_euler()
        text = label(cam, f"frame {f}")
        path = os.path.join(work, f"frame{f:03}.png")
        scene.render.filepath = path
        bpy.ops.render.render(write_still=True)
        bpy.data.objects.remove(text)
        paths.append(path)
    return paths


def compose(paths, out):
    panels = []
    for p in paths:
        img = bpy.data.images.load(p)
        px = np.empty(img.size[0] * img.size[1] * 4, dtype=np.float32)
        img.pixels.foreach_get(px)
        panels.append(px.reshape(img.size[1], img.size[0], 4))
    strip = np.concatenate(panels, axis=1)
    h, w = strip.shape[:2]
    img = bpy.data.images.new("strip", width=w, height=h)
    img.pixels.foreach_set(strip.ravel())
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    settings = bpy.context.scene.render.image_settings
    settings.compression = 100
    img.save_render(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/release/clothbake")
    ap.add_argument("--frames", default="12,24,36,48")
    ap.add_argument("--out", default="docs/images/dress-walk.png")
    ap.add_argument("--pc2", help="a dress cache baked with [output] up = \"z\" (world space)")
    ap.add_argument("--sample", help="the sample folder the --pc2 was baked from")
    args = ap.parse_args(argv)
    frames = [int(f) for f in args.frames.split(",")]
    with tempfile.TemporaryDirectory() as work:
        if args.pc2:
            sample, pc2 = args.sample, os.path.abspath(args.pc2)
        else:
            sample, pc2 = bake(os.path.abspath(args.bin), work)
        scene, cam, _ = setup_scene(sample, pc2)
        compose(render_frames(scene, cam, frames, work), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
