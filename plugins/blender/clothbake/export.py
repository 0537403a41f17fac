"""Export what the clothbake binary needs from a Blender scene into a bake folder.

What Blender SHOWS is what is exported (issue 12), collected in one pass over the frames
``frame_start - preroll .. frame_end`` (``scene.frame_set`` per frame, the depsgraph's evaluated
objects; the current frame is restored afterwards):

- Garments: an OBJ of the mesh data (the undeformed mesh: the rest shape, lengths and angles) in
  object-LOCAL coordinates (``up = "z"``), so the vertex order is exactly Blender's (no splitting at UV
  seams or sharp edges). Per frame, the EVALUATED mesh (armature, shape keys, hooks, lattices ...,
  with the generative modifiers after the last deformer switched off, see cache_modifier) in world
  space goes into ``<name>_driver.pc2`` (PC2, Blender axes, ``driver_space = "world"``), and the
  evaluated ``matrix_world`` (object animation, parenting to bones, constraints) into
  ``transform_keys`` (or a static ``transform`` when it never changes). The simulation starts from the
  driver's shape; pins follow it (``follow = "cache"``; weight 1 = hard pin, below 1 = goal spring).
  The cache comes back in the object-local space of the evaluated matrix at each frame
  (``output.space = "local"``), which the Mesh Cache modifier shows with identity axes.
- Colliders: SPHERE and CAPSULE become explicit ``[[collider]]`` entries fitted to the object's
  geometry and keyed at every frame of the same pass from the evaluated world matrix. AUTO exports the
  skinned body mesh with its armature and animation through Blender's own glTF exporter, and the
  binary fits capsules per bone.
- Pre-roll: ``[scene] preroll`` frames before the first written frame, ``preroll_from`` "animation"
  (the character moves from its pose at ``frame_start - preroll``) or "rest" (eases in from the rest
  pose: the garment's mesh, the colliders with every armature in its rest position).
- The scene file (``scene.toml``) ties these together.

Blender is Z-up; the scene's world frame is glTF's Y-up: ``(x, y, z) -> (x, z, -y)``.
"""

from __future__ import annotations

import contextlib
import os
import re
import struct

import bpy
import numpy as np
from mathutils import Vector

from . import cache_modifier, scene_toml

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


def garment_entry(obj: bpy.types.Object, name: str, mesh_file: str, driver_file: str, first_frame: int,
                  matrices: list) -> dict:
    """The ``[[garment]]`` table: material, pins following the driver, the keyed object matrix."""
    s = obj.clothbake
    entry = {
        "name": name,
        "mesh": mesh_file,
        "up": "z",
        "driver": driver_file,
        "driver_frame_start": int(first_frame),
        "driver_space": "world",
        "material": s.material,
        "model": s.model.lower(),
        "spring_stiffness": float(s.spring_stiffness) if s.model == "SPRINGS" and s.use_spring_stiffness else None,
        "density": float(s.density) if s.use_density else None,
        "stretch": [float(x) for x in s.stretch] if s.use_stretch else None,
        "shear": float(s.shear) if s.use_shear else None,
        "bend": float(s.bend) if s.use_bend else None,
        "thickness": float(s.thickness),
        "friction": float(s.friction),
        "self_collision": bool(s.self_collision),
    }
    if all(m == matrices[0] for m in matrices):
        entry["transform"] = matrices[0]
    else:  # every frame of the pass: exact at each frame, whatever Blender's interpolation was
        entry["transform_keys"] = [{"frame": first_frame + i, "matrix": m} for i, m in enumerate(matrices)]
    vertices, weights = pin_weights(obj)
    if vertices:
        pin = {"vertices": vertices, "follow": "cache", "stiffness": float(s.pin_stiffness)}
        if any(w < 1.0 for w in weights):
            pin["weights"] = weights
        entry["pin"] = pin
    return entry


def write_pc2(path: str, positions: np.ndarray, start_frame: int) -> None:
    """PC2 (little-endian, docs/scene-format.md): ``positions`` is [samples, points, 3]."""
    samples, points, _ = positions.shape
    with open(path, "wb") as f:
        f.write(b"POINTCACHE2\0" + struct.pack("<iiffi", 1, points, float(start_frame), 1.0, samples))
        f.write(np.ascontiguousarray(positions, dtype="<f4").tobytes())


def _evaluated_vertices(obj: bpy.types.Object, depsgraph, out: np.ndarray) -> None:
    """The evaluated mesh's object-local vertex positions into ``out`` ([points * 3] float32)."""
    mesh = obj.evaluated_get(depsgraph).data
    if len(mesh.vertices) * 3 != out.size:
        raise ExportError(_topology_message(obj, len(mesh.vertices), out.size // 3))
    mesh.vertices.foreach_get("co", out)


#: Modifier types that change neither positions nor topology (never the culprit of a count mismatch).
_ATTRIBUTES_ONLY = frozenset({
    "DATA_TRANSFER", "NORMAL_EDIT", "UV_PROJECT", "UV_WARP", "VERTEX_WEIGHT_EDIT", "VERTEX_WEIGHT_MIX",
    "VERTEX_WEIGHT_PROXIMITY", "WEIGHTED_NORMAL",
})


def _topology_message(obj: bpy.types.Object, evaluated: int, own: int) -> str:
    culprit = None
    for mod in cache_modifier.others(obj)[:cache_modifier.insertion_index(obj)]:
        if mod.show_viewport and mod.type not in cache_modifier.DEFORMING and mod.type not in _ATTRIBUTES_ONLY:
            culprit = mod
            break
    what = f"modifier '{culprit.name}' ({culprit.type.lower()})" if culprit else "its modifier stack"
    return (f"garment '{obj.name}': {what} changes the vertex count before a deforming modifier "
            f"({evaluated} evaluated vertices, the mesh has {own}); move it after the last deformer or apply it")


def _matrix_world(obj: bpy.types.Object, depsgraph) -> np.ndarray:
    return np.array(obj.evaluated_get(depsgraph).matrix_world, dtype=np.float64)


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


def collider_entry(fit: ColliderFit, shapes: list[dict], first_frame: int, base: dict | None = None) -> dict:
    """One explicit collider keyed on what changes; ``base`` (default: the first shape) is the shape the
    keys override, i.e. the rest the binary eases in from with ``preroll_from = "rest"``."""
    base = shapes[0] if base is None else base
    if fit.shape == "SPHERE":
        entry = {"type": "sphere", "center": base["center"], "radius": base["radius"]}
    else:
        entry = {"type": "capsule", "a": base["a"], "b": base["b"], "radius_a": base["radius_a"], "radius_b": base["radius_b"]}
    moving = [m for m in base if any(s[m] != base[m] for s in shapes)]
    if moving:  # keyed at every frame: linear between frames, like the solver's substeps
        entry["keys"] = [{"frame": first_frame + i, **{m: s[m] for m in moving}} for i, s in enumerate(shapes)]
    return entry


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


class _RestPose:
    """Every armature of the scene in its rest position while inside (for ``preroll_from = "rest"``)."""

    def __init__(self, scene):
        self.armatures = {o.data for o in scene.objects if o.type == "ARMATURE"}
        self.saved = []

    def __enter__(self):
        for arm in self.armatures:
            self.saved.append((arm, arm.pose_position))
            arm.pose_position = "REST"
        return self

    def __exit__(self, *exc):
        for arm, value in self.saved:
            arm.pose_position = value


def sample_frames(context, garments, fits, colliders, first: int, last: int, frame_start: int, rest_colliders: bool):
    """The one pass over ``first .. last``: per garment the evaluated WORLD positions [frames, points, 3]
    and the column-major ``matrix_world`` per frame; per collider its shape per frame, and (with
    ``rest_colliders``) its shape at ``frame_start`` with every armature in rest position. Each
    garment is evaluated as its animation shows it (cache_modifier.showing_animation); the scene's
    frame and the modifiers are restored afterwards."""
    scene = context.scene
    frames = last - first + 1
    positions = [np.empty((frames, len(o.data.vertices), 3), dtype=np.float32) for o in garments]
    local = [np.empty(len(o.data.vertices) * 3, dtype=np.float32) for o in garments]
    matrices: list[list[list[float]]] = [[] for _ in garments]
    shapes: list[list[dict]] = [[] for _ in colliders]
    rest = None
    old_frame, old_sub = scene.frame_current, scene.frame_subframe
    try:
        with contextlib.ExitStack() as stack:
            for obj in garments:
                stack.enter_context(cache_modifier.showing_animation(obj))
            depsgraph = context.evaluated_depsgraph_get()
            for k, frame in enumerate(range(first, last + 1)):
                scene.frame_set(frame)
                for g, obj in enumerate(garments):
                    _evaluated_vertices(obj, depsgraph, local[g])
                    m = _matrix_world(obj, depsgraph)
                    positions[g][k] = local[g].reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]
                    matrices[g].append([float(x) for x in m.T.reshape(-1)])  # column-major
                for c, obj in enumerate(colliders):
                    shapes[c].append(fits[c].world(obj.evaluated_get(depsgraph).matrix_world))
            if rest_colliders and colliders:
                with _RestPose(scene):
                    scene.frame_set(frame_start)
                    rest = [fits[c].world(obj.evaluated_get(depsgraph).matrix_world) for c, obj in enumerate(colliders)]
    finally:
        scene.frame_set(old_frame, subframe=old_sub)
    return positions, matrices, shapes, rest


def export_scene(context, bake_dir: str) -> list[tuple[str, str]]:
    """Write every input of the bake into ``bake_dir`` and return ``[(object name, cache path)]``."""
    scene = context.scene
    settings = scene.clothbake
    if settings.frame_end < settings.frame_start:
        raise ExportError(f"scene '{scene.name}': End frame {settings.frame_end} is before Start frame {settings.frame_start}")
    if settings.preroll < 0:
        raise ExportError(f"scene '{scene.name}': Pre-roll is {settings.preroll} frames (must be 0 or more)")
    garments = garments_of(scene)
    if not garments:
        raise ExportError(f"scene '{scene.name}': no object has the role Garment")
    for obj in garments:
        if obj.type != "MESH":
            raise ExportError(f"garment '{obj.name}': is a {obj.type.lower()}, not a mesh")
    first, last = settings.frame_start - settings.preroll, settings.frame_end
    preroll_from = "rest" if settings.preroll_from == "REST" else "animation"

    colliders = colliders_of(scene)
    analytic = [o for o in colliders if o.clothbake.collider_shape in ("SPHERE", "CAPSULE")]
    auto = [o for o in colliders if o.clothbake.collider_shape == "AUTO"]
    fits = [ColliderFit(o) for o in analytic]
    positions, matrices, shapes, rest = sample_frames(
        context, garments, fits, analytic, first, last, settings.frame_start,
        rest_colliders=preroll_from == "rest" and settings.preroll > 0)

    taken: set[str] = set()
    garment_entries, caches = [], []
    for g, obj in enumerate(garments):
        name = safe_name(obj.name, taken)
        mesh_file, driver_file = f"{name}.obj", f"{name}_driver.pc2"
        write_garment_obj(obj, os.path.join(bake_dir, mesh_file))
        write_pc2(os.path.join(bake_dir, driver_file), positions[g], first)
        garment_entries.append(garment_entry(obj, name, mesh_file, driver_file, first, matrices[g]))
        caches.append((obj.name, os.path.join(bake_dir, CACHE_SUBDIR, f"{name}.pc2")))

    collider_entries = [collider_entry(fit, shape, first, None if rest is None else rest[c])
                        for c, (fit, shape) in enumerate(zip(fits, shapes))]
    collider_entries += export_auto_colliders(context, auto, os.path.join(bake_dir, COLLIDER_GLB))

    gravity = to_scene_axes(scene.gravity) if scene.use_gravity else [0.0, 0.0, 0.0]
    document = {
        "scene": {
            "fps": scene_fps(scene),
            "frame_start": int(settings.frame_start),
            "frame_end": int(settings.frame_end),
            "preroll": int(settings.preroll),
            "preroll_from": preroll_from,
            "substeps": int(settings.substeps),
            "integrator": settings.integrator.lower(),
            "damping_projection": bool(settings.damping_projection),
            "gravity": gravity,
        },
        # Blender object-local space of the evaluated matrix at each frame (see cache_modifier).
        "output": {"dir": CACHE_SUBDIR, "formats": ["pc2"], "space": "local", "up": "z"},
        "garment": garment_entries,
        "collider": collider_entries or None,
    }
    header = f"Written by the clothbake Blender add-on from {bpy.data.filepath or 'an unsaved file'}, scene '{scene.name}'."
    with open(os.path.join(bake_dir, SCENE_FILE), "w", encoding="utf-8", newline="\n") as f:
        f.write(scene_toml.dumps(document, header=header))
    return caches
