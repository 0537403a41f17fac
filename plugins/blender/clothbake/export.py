"""Export what the clothbake binary needs from a Blender scene into a bake folder.

- Garments: an OBJ written here from the mesh data in object-LOCAL coordinates (``up = "z"``), so the
  vertex order is exactly Blender's (no splitting at UV seams or sharp edges); the object's world
  matrix goes into the scene as ``transform``. The cache comes back in the same local space
  (``output.space = "local"``), which Blender's Mesh Cache modifier shows with identity axes.
- Pins: the pin vertex group's weights (1 = hard pin, below 1 = goal spring).
- Colliders: SPHERE and CAPSULE become explicit ``[[collider]]`` entries fitted to the object's
  geometry and keyed at every baked frame from the evaluated world matrix (so parenting to bones,
  constraints and drivers all count). AUTO exports the skinned body mesh with its armature and
  animation through Blender's own glTF exporter, and the binary fits capsules per bone.
- The scene file (``scene.toml``) ties these together.

Blender is Z-up; the scene's world frame is glTF's Y-up: ``(x, y, z) -> (x, z, -y)``.
"""

from __future__ import annotations

import os
import re

import bpy
from mathutils import Vector

from . import scene_toml

SCENE_FILE = "scene.toml"
CACHE_SUBDIR = "cache"
COLLIDER_GLB = "colliders.glb"


class ExportError(Exception):
    """The scene cannot be exported (the message names the object and the setting)."""


def to_scene_axes(v) -> list[float]:
    """Blender world (Z up) -> scene world (glTF, Y up)."""
    return [float(v[0]), float(v[2]), -float(v[1])]


def safe_name(name: str, taken: set[str]) -> str:
    """A file-name-safe, unique name for outputs: ``<name>.pc2``."""
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "garment"
    candidate, n = base, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{base}_{n}"
    taken.add(candidate.lower())
    return candidate


# -- garments ----------------------------------------------------------------------------------


def _fmt(x: float) -> str:
    return f"{x:.9g}"  # 9 significant digits round-trip a float32 exactly


def write_garment_obj(obj: bpy.types.Object, path: str) -> int:
    """Write the garment's own mesh (before modifiers) as OBJ in object-local coordinates.

    Vertices keep Blender's order; faces are Blender's own triangulation; UVs (if any) are written
    as ``vt`` per face corner, which does not reorder or split ``v``. Returns the vertex count.
    """
    mesh = obj.data
    if len(mesh.vertices) == 0:
        raise ExportError(f"garment '{obj.name}': the mesh has no vertices")
    mesh.calc_loop_triangles()
    if len(mesh.loop_triangles) == 0:
        raise ExportError(f"garment '{obj.name}': the mesh has no faces")
    uv_layer = mesh.uv_layers.active
    lines = [f"# clothbake garment '{obj.name}': object-local coordinates, Blender axes (Z up)", f"o {obj.name}"]
    lines.extend(f"v {_fmt(v.co.x)} {_fmt(v.co.y)} {_fmt(v.co.z)}" for v in mesh.vertices)
    if uv_layer is not None:
        uvs = uv_layer.uv
        lines.extend(f"vt {_fmt(uvs[tri.loops[k]].vector.x)} {_fmt(uvs[tri.loops[k]].vector.y)}"
                     for tri in mesh.loop_triangles for k in range(3))
        for t, tri in enumerate(mesh.loop_triangles):
            a, b, c = tri.vertices
            lines.append(f"f {a + 1}/{3 * t + 1} {b + 1}/{3 * t + 2} {c + 1}/{3 * t + 3}")
    else:
        lines.extend(f"f {tri.vertices[0] + 1} {tri.vertices[1] + 1} {tri.vertices[2] + 1}" for tri in mesh.loop_triangles)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines))
        f.write("\n")
    return len(mesh.vertices)


def pin_weights(obj: bpy.types.Object) -> tuple[list[int], list[float]]:
    """Vertices of the pin group with weight > 0, and their weights (clamped to 1)."""
    name = obj.clothbake.pin_group
    if not name:
        return [], []
    group = obj.vertex_groups.get(name)
    if group is None:
        raise ExportError(f"garment '{obj.name}': pin group '{name}' is not a vertex group of the object")
    vertices, weights = [], []
    for v in obj.data.vertices:
        for g in v.groups:
            if g.group == group.index and g.weight > 0.0:
                vertices.append(v.index)
                weights.append(min(1.0, float(g.weight)))
    return vertices, weights


def _column_major(matrix) -> list[float]:
    return [float(matrix[row][col]) for col in range(4) for row in range(4)]


def garment_entry(obj: bpy.types.Object, name: str, mesh_file: str) -> dict:
    s = obj.clothbake
    entry = {
        "name": name,
        "mesh": mesh_file,
        "up": "z",
        "transform": _column_major(obj.matrix_world),
        "material": s.material,
        "density": float(s.density) if s.use_density else None,
        "stretch": [float(x) for x in s.stretch] if s.use_stretch else None,
        "shear": float(s.shear) if s.use_shear else None,
        "bend": float(s.bend) if s.use_bend else None,
        "thickness": float(s.thickness),
        "friction": float(s.friction),
        "self_collision": bool(s.self_collision),
    }
    vertices, weights = pin_weights(obj)
    if vertices:
        pin = {"vertices": vertices, "follow": "rest", "stiffness": float(s.pin_stiffness)}
        if any(w < 1.0 for w in weights):
            pin["weights"] = weights
        entry["pin"] = pin
    return entry


# -- colliders ---------------------------------------------------------------------------------


def _local_points(obj: bpy.types.Object) -> list[Vector]:
    if obj.type == "MESH" and len(obj.data.vertices) > 0:
        return [v.co.copy() for v in obj.data.vertices]
    return [Vector(c) for c in obj.bound_box]


class ColliderFit:
    """A sphere or capsule fitted to an object's local geometry; ``world(matrix)`` places it."""

    def __init__(self, obj: bpy.types.Object):
        s = obj.clothbake
        self.shape = s.collider_shape
        pts = _local_points(obj)
        lo = Vector((min(p[i] for p in pts) for i in range(3)))
        hi = Vector((max(p[i] for p in pts) for i in range(3)))
        center = (lo + hi) * 0.5
        half = (hi - lo) * 0.5
        if self.shape == "SPHERE":
            radius = s.collider_radius or max((p - center).length for p in pts)
            self.center, self.radius = center, radius
            if radius <= 0.0:
                raise ExportError(f"collider '{obj.name}': zero-size sphere (no geometry and Radius is 0)")
            return
        axis = max(range(3), key=lambda i: half[i])
        others = [i for i in range(3) if i != axis]
        radius = s.collider_radius or max(half[i] for i in others)
        if radius <= 0.0:
            raise ExportError(f"collider '{obj.name}': zero-size capsule (no geometry and Radius is 0)")
        offset = Vector((0.0, 0.0, 0.0))
        offset[axis] = max(0.0, half[axis] - radius)
        self.a, self.b = center - offset, center + offset
        self.radius, self.radius_b = radius, s.collider_radius_b or radius
        self.axis, self.others = axis, others

    def world(self, matrix) -> dict:
        """The shape in scene axes at one frame (radii scale with the object's largest scale)."""
        scale = matrix.to_3x3()
        if self.shape == "SPHERE":
            r = self.radius * max(scale.col[i].length for i in range(3))
            return {"center": to_scene_axes(matrix @ self.center), "radius": r}
        r_scale = max(scale.col[i].length for i in self.others)
        return {
            "a": to_scene_axes(matrix @ self.a),
            "b": to_scene_axes(matrix @ self.b),
            "radius_a": self.radius * r_scale,
            "radius_b": self.radius_b * r_scale,
        }


def keyed_colliders(scene: bpy.types.Scene, objects: list[bpy.types.Object], frame_start: int, frame_end: int) -> list[dict]:
    """Explicit sphere/capsule colliders, keyed at every frame on what changes (frame is restored)."""
    if not objects:
        return []
    fits = [ColliderFit(o) for o in objects]
    samples: list[list[dict]] = [[] for _ in objects]
    old_frame, old_sub = scene.frame_current, scene.frame_subframe
    try:
        for frame in range(frame_start, frame_end + 1):
            scene.frame_set(frame)
            for k, obj in enumerate(objects):
                samples[k].append(fits[k].world(obj.matrix_world))
    finally:
        scene.frame_set(old_frame, subframe=old_sub)
    entries = []
    for obj, fit, shape in zip(objects, fits, samples):
        first = shape[0]
        if fit.shape == "SPHERE":
            entry = {"type": "sphere", "center": first["center"], "radius": first["radius"]}
        else:
            entry = {"type": "capsule", "a": first["a"], "b": first["b"], "radius_a": first["radius_a"], "radius_b": first["radius_b"]}
        moving = [m for m in first if any(s[m] != first[m] for s in shape)]
        if moving:  # keyed at every frame: linear between frames, like the solver's substeps
            entry["keys"] = [{"frame": frame_start + i, **{m: s[m] for m in moving}} for i, s in enumerate(shape)]
        entries.append(entry)
    return entries


def _armature_of(obj: bpy.types.Object):
    for m in obj.modifiers:
        if m.type == "ARMATURE" and m.object is not None:
            return m.object
    if obj.parent is not None and obj.parent.type == "ARMATURE":
        return obj.parent
    return None


def export_auto_colliders(context, objects: list[bpy.types.Object], path: str) -> list[dict]:
    """Export skinned body meshes with their armatures and animation to one .glb (selection restored)."""
    if not objects:
        return []
    for obj in objects:
        if obj.type != "MESH" or _armature_of(obj) is None:
            raise ExportError(f"collider '{obj.name}': shape Auto needs a mesh skinned to an armature (Armature modifier)")
    view_layer = context.view_layer
    selected = [o for o in view_layer.objects if o.select_get()]
    active = view_layer.objects.active
    try:
        for o in selected:
            o.select_set(False)
        for obj in objects:
            obj.select_set(True)
            _armature_of(obj).select_set(True)
        result = bpy.ops.export_scene.gltf(
            filepath=path,
            export_format="GLB",
            use_selection=True,
            export_extras=True,
            export_apply=False,
            export_skins=True,
            export_animations=True,
            export_force_sampling=True,
            export_yup=True,
            export_materials="NONE",
        )
    finally:
        for o in view_layer.objects:
            o.select_set(o in selected)
        view_layer.objects.active = active
    if "FINISHED" not in result or not os.path.isfile(path):
        raise ExportError(f"glTF export of the Auto colliders to {path} failed")
    rel = os.path.basename(path)
    return [
        {"type": "gltf", "file": rel, "proxies": "auto", "mesh": obj.name, "inflate": float(obj.clothbake.collider_inflate)}
        for obj in objects
    ]


# -- scene -------------------------------------------------------------------------------------


def garments_of(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    return [o for o in scene.objects if o.clothbake.role == "GARMENT"]


def colliders_of(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    return [o for o in scene.objects if o.clothbake.role == "COLLIDER"]


def scene_fps(scene: bpy.types.Scene) -> float:
    return scene.render.fps / scene.render.fps_base


def export_scene(context, bake_dir: str) -> list[tuple[str, str]]:
    """Write every input of the bake into ``bake_dir`` and return ``[(object name, cache path)]``."""
    scene = context.scene
    settings = scene.clothbake
    if settings.frame_end < settings.frame_start:
        raise ExportError(f"scene '{scene.name}': End frame {settings.frame_end} is before Start frame {settings.frame_start}")
    garments = garments_of(scene)
    if not garments:
        raise ExportError(f"scene '{scene.name}': no object has the role Garment")
    taken: set[str] = set()
    garment_entries, caches = [], []
    for obj in garments:
        if obj.type != "MESH":
            raise ExportError(f"garment '{obj.name}': is a {obj.type.lower()}, not a mesh")
        name = safe_name(obj.name, taken)
        mesh_file = f"{name}.obj"
        write_garment_obj(obj, os.path.join(bake_dir, mesh_file))
        garment_entries.append(garment_entry(obj, name, mesh_file))
        caches.append((obj.name, os.path.join(bake_dir, CACHE_SUBDIR, f"{name}.pc2")))

    colliders = colliders_of(scene)
    analytic = [o for o in colliders if o.clothbake.collider_shape in ("SPHERE", "CAPSULE")]
    auto = [o for o in colliders if o.clothbake.collider_shape == "AUTO"]
    collider_entries = keyed_colliders(scene, analytic, settings.frame_start, settings.frame_end)
    collider_entries += export_auto_colliders(context, auto, os.path.join(bake_dir, COLLIDER_GLB))

    gravity = to_scene_axes(scene.gravity) if scene.use_gravity else [0.0, 0.0, 0.0]
    document = {
        "scene": {
            "fps": scene_fps(scene),
            "frame_start": int(settings.frame_start),
            "frame_end": int(settings.frame_end),
            "substeps": int(settings.substeps),
            "gravity": gravity,
        },
        "output": {"dir": CACHE_SUBDIR, "formats": ["pc2"], "space": "local", "up": "z"},  # Blender object-local
        "garment": garment_entries,
        "collider": collider_entries or None,
    }
    header = f"Written by the clothbake Blender add-on from {bpy.data.filepath or 'an unsaved file'}, scene '{scene.name}'."
    with open(os.path.join(bake_dir, SCENE_FILE), "w", encoding="utf-8", newline="\n") as f:
        f.write(scene_toml.dumps(document, header=header))
    return caches
