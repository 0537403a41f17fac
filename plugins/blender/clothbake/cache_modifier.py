"""The Mesh Cache modifier that shows a baked PC2 on its garment, and the bake folders behind it.

Exact playback with the object moving (issue 12). The bake writes ``output.space = "local"``,
``up = "z"`` with the garment's ``transform_keys`` = its evaluated ``matrix_world`` at every frame, so
cache sample *i* holds the simulated positions in the object-local space of the object's evaluated
matrix at frame ``frame_start + i``. Blender then shows ``matrix_world(f) @ cache(f)`` = the simulated
world positions, provided nothing in the stack moves the cached positions again. So:

- The modifier goes right AFTER the last deforming modifier (Armature, Hook, Lattice, Curve, Mesh
  Deform, Shrinkwrap, Simple Deform, Smooth, Cast, Displace, Warp, Wave, Laplacian ..., also Blender's
  own Cloth and other caches; :data:`DEFORMING`) and before the generative ones (Subdivision, Solidify,
  Mirror ...), which then refine the simulated surface as they refined the animated one.
- With ``deform_mode = 'OVERWRITE'`` it replaces the positions entirely: shape keys (applied before the
  stack) and the deformers before it have no effect on what is shown. Those deformers are disabled
  anyway (``show_viewport`` and ``show_render``) while the cache is shown, so they cost nothing and a
  re-ordered stack cannot apply them twice; their previous state is kept in the object's custom
  property :data:`SAVED_PROP` and restored by Free (:func:`remove_cache`).
- A generative modifier BEFORE a deformer changes the vertex count the cache must match; the export
  refuses such a garment (naming the modifier) rather than bake something that cannot be shown.

Checked in Blender 4.5 (tests/test_blender_bake.py, test_blender_character.py): with
``play_mode = 'SCENE'``, ``time_mode = 'FRAME'``, ``frame_scale = 1`` the modifier reads sample
``frame - frame_start`` (ignoring the PC2 header's own start frame), holds the first sample before and
the last after, and interpolates linearly between samples at sub-frames. The cache is in object-local
space, so the axes stay at identity (forward +Y, up +Z).

With the scene setting ``cache_format = 'USD'`` the bake also writes ``<name>.usdc`` (USD's binary
crate format: same positions, ``upAxis = "Z"``, time code = scene frame; a third of the text layer's
size and opened without parsing it) and the garment gets Blender's own Mesh Sequence Cache
modifier instead, reading only the vertex positions (``read_data = {'VERT'}``) of the prim
``/<name>`` from a CacheFile datablock of ``<name>.blender.usda``, a small layer that sublayers the
bake's and gives the mesh the garment's own polygons, so that the garment keeps its faces, UVs and
materials (:func:`write_blender_layer`). It sits at the same
place in the stack and replaces the deformers the same way. Checked in Blender 4.5
(tests/test_blender_usd.py): the evaluated positions equal the PC2 exactly at every frame.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from contextlib import contextmanager

import bpy

from .properties import MODIFIER_NAME

#: A file that marks a folder as a bake folder made by this add-on (only those are ever deleted).
MARKER = ".clothbake-bake"

#: Custom property (JSON) on a garment: ``{modifier name: [show_viewport, show_render]}`` of the
#: deforming modifiers disabled while the cache is shown.
SAVED_PROP = "clothbake_disabled_modifiers"

#: Modifier types that move vertices without changing the topology (the cache replaces them).
DEFORMING = frozenset({
    "ARMATURE", "CAST", "CLOTH", "CORRECTIVE_SMOOTH", "CURVE", "DISPLACE", "HOOK", "LAPLACIANDEFORM",
    "LAPLACIANSMOOTH", "LATTICE", "MESH_CACHE", "MESH_DEFORM", "MESH_SEQUENCE_CACHE", "SHRINKWRAP",
    "SIMPLE_DEFORM", "SMOOTH", "SOFT_BODY", "SURFACE_DEFORM", "WARP", "WAVE",
})

#: Blender's own simulations: off while the export samples the animation.
SIMULATIONS = frozenset({"CLOTH", "SOFT_BODY"})


class CacheError(Exception):
    """A cache file is missing or does not fit its garment."""


def read_pc2_header(path: str) -> tuple[int, float, float, int]:
    """(numPoints, startFrame, sampleRate, numSamples) of a PC2 file."""
    try:
        with open(path, "rb") as f:
            head = f.read(32)
    except OSError as e:
        raise CacheError(f"cannot read the cache {path}: {e.strerror}") from e
    if len(head) != 32 or head[:12] != b"POINTCACHE2\0":
        raise CacheError(f"{path} is not a PC2 file")
    _version, points, start, rate, samples = struct.unpack("<iiffi", head[12:])
    if os.path.getsize(path) != 32 + 12 * points * samples:
        raise CacheError(f"{path}: file size does not match {samples} samples of {points} points")
    return points, start, rate, samples


#: The modifier types the bake adds (PC2 and USD).
CACHE_TYPES = ("MESH_CACHE", "MESH_SEQUENCE_CACHE")


def find_modifier(obj: bpy.types.Object):
    mod = obj.modifiers.get(MODIFIER_NAME)
    return mod if mod is not None and mod.type in CACHE_TYPES else None


def usd_path_of(pc2_path: str) -> str:
    """The USD layer the bake writes beside a PC2: ``<name>.usdc``."""
    return os.path.splitext(pc2_path)[0] + ".usdc"


def usd_prim_name(name: str) -> str:
    """The prim clothbake names a garment's mesh: ``[A-Za-z_][A-Za-z0-9_]*`` (others become ``_``)."""
    s = re.sub(r"[^A-Za-z0-9]", "_", name)
    return "_" + s if not s or s[0].isdigit() else s


def _remove_modifier(obj: bpy.types.Object, mod) -> None:
    """Remove our modifier, and the CacheFile of a Mesh Sequence Cache when nothing else uses it."""
    cache_file = mod.cache_file if mod.type == "MESH_SEQUENCE_CACHE" else None
    obj.modifiers.remove(mod)
    _drop_unused(cache_file)


def _drop_unused(cache_file) -> None:
    """Remove a CacheFile no modifier uses any more (``cachefile.open`` gives it a user of its own, so
    ``users`` never drops to 0 by itself)."""
    if cache_file is None:
        return
    for o in bpy.data.objects:
        for m in o.modifiers:
            if m.type == "MESH_SEQUENCE_CACHE" and m.cache_file == cache_file:
                return
    bpy.data.batch_remove([cache_file])  # BlendDataCacheFiles has no remove()


def _blend_path(path: str) -> str:
    """Relative to the .blend ('//...') when it is saved, so a project folder can move."""
    if bpy.data.filepath:
        try:
            return bpy.path.relpath(path)
        except ValueError:  # another drive on Windows
            return path
    return path


def others(obj: bpy.types.Object) -> list:
    """The object's modifiers other than the cache, in stack order."""
    ours = find_modifier(obj)
    return [m for m in obj.modifiers if m != ours]


def insertion_index(obj: bpy.types.Object) -> int:
    """Where the cache goes among the object's other modifiers: after the last deforming one."""
    last = max((i for i, m in enumerate(others(obj)) if m.type in DEFORMING), default=-1)
    return last + 1


def saved_states(obj: bpy.types.Object) -> dict[str, list[bool]]:
    text = obj.get(SAVED_PROP)
    if not isinstance(text, str):
        return {}
    try:
        states = json.loads(text)
    except ValueError:
        return {}
    return states if isinstance(states, dict) else {}


def restore_modifiers(obj: bpy.types.Object) -> None:
    """Give the deformers disabled by :func:`apply_cache` their previous state back."""
    for name, state in saved_states(obj).items():
        mod = obj.modifiers.get(name)
        if mod is not None and isinstance(state, list) and len(state) == 2:
            mod.show_viewport, mod.show_render = bool(state[0]), bool(state[1])
    if SAVED_PROP in obj:
        del obj[SAVED_PROP]


@contextmanager
def showing_animation(obj: bpy.types.Object):
    """While inside: the object evaluates to its ANIMATED mesh in the cache's topology (no cache shown,
    the deformers as the user set them, Blender's own Cloth / Soft Body off, the generative modifiers
    after the last deformer off); every modifier is put back as it was on leaving."""
    changes = []

    def put(mod, value):
        changes.append((mod, mod.show_viewport))
        mod.show_viewport = value

    try:
        ours = find_modifier(obj)
        if ours is not None:
            put(ours, False)
        for name, state in saved_states(obj).items():
            mod = obj.modifiers.get(name)
            if mod is not None and isinstance(state, list) and len(state) == 2:
                put(mod, bool(state[0]))
        for mod in others(obj)[insertion_index(obj):]:
            if mod.show_viewport:
                put(mod, False)
        for mod in others(obj):  # Blender's own simulation of the garment is what the bake replaces
            if mod.type in SIMULATIONS and mod.show_viewport:
                put(mod, False)
        yield
    finally:
        for mod, value in reversed(changes):
            mod.show_viewport = value


def _our_modifier(obj: bpy.types.Object, kind: str):
    """The garment's cache modifier of type ``kind``, replacing one of the other type."""
    restore_modifiers(obj)  # a re-bake: start from the user's own state
    mod = find_modifier(obj)
    if mod is not None and mod.type != kind:
        _remove_modifier(obj, mod)
        mod = None
    if mod is None:
        mod = obj.modifiers.new(MODIFIER_NAME, kind)
    return mod


def f32_text(x: float) -> str:
    """``x`` rounded to a 32-bit float, as the shortest decimal that reads back to it: the text the
    binary writes for its f32 settings (Rust's ``Display``), so that a layer stating it has the same
    double as the bake's layer."""
    f = struct.unpack("<f", struct.pack("<f", x))[0]
    for digits in range(1, 10):
        text = "%.*g" % (digits, f)
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == f:
            return text
    return repr(f)


def stage_metadata(frame_start: int, frame_end: int, fps: float) -> dict[str, str]:
    """The stage metadata of the bake's layer, as text, for a layer that sublayers it (stage
    metadata is read from the root layer only, and a sublayer of another ``timeCodesPerSecond``
    would be rescaled): the binary's values for the add-on's export (``[output] up = "z"``, the
    cache's frames, the scene's frame rate read as a 32-bit float)."""
    rate = f32_text(fps)
    return {
        "endTimeCode": str(int(frame_end)),
        "framesPerSecond": rate,
        "metersPerUnit": "1",
        "startTimeCode": str(int(frame_start)),
        "timeCodesPerSecond": rate,
        "upAxis": '"Z"',
    }


def write_blender_layer(obj: bpy.types.Object, usd_path: str, metadata: dict[str, str]) -> str:
    """Write ``<name>.blender.usda`` beside the bake's layer: it sublayers it, repeats its stage
    ``metadata`` (:func:`stage_metadata`) and overrides the mesh's topology with the garment's own
    polygons (the bake's layer has the triangles the export gave the binary). Blender's USD reader
    rebuilds a mesh whose face or corner count differs from the cached layer's, dropping the
    garment's polygons and UVs; with its own topology it only reads the positions. Returns the new
    layer's path."""
    polygons = obj.data.polygons
    counts = ", ".join(str(p.loop_total) for p in polygons)
    indices = ", ".join(str(v) for p in polygons for v in p.vertices)
    prim = usd_prim_name(os.path.splitext(os.path.basename(usd_path))[0])
    meta = "".join(f"    {k} = {v}\n" for k, v in sorted(metadata.items()))
    text = (
        "#usda 1.0\n(\n"
        f'    defaultPrim = "{prim}"\n{meta}'
        f"    subLayers = [\n        @./{os.path.basename(usd_path)}@\n    ]\n)\n\n"
        f'over "{prim}"\n{{\n'
        f"    int[] faceVertexCounts = [{counts}]\n"
        f"    int[] faceVertexIndices = [{indices}]\n"
        "}\n"
    )
    path = os.path.splitext(usd_path)[0] + ".blender.usda"
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return path


def apply_usd_cache(obj: bpy.types.Object, layer_path: str) -> bpy.types.MeshSequenceCacheModifier:
    """Show a garment's ``<name>.blender.usda`` (:func:`write_blender_layer`) through a Mesh Sequence
    Cache modifier (positions only), placed and replacing the deformers as :func:`apply_cache` does."""
    usd_path = layer_path
    prim = usd_prim_name(os.path.basename(layer_path)[: -len(".blender.usda")])
    mod = _our_modifier(obj, "MESH_SEQUENCE_CACHE")
    old = mod.cache_file
    before = set(bpy.data.cache_files)
    if bpy.ops.cachefile.open(filepath=os.path.abspath(usd_path)) != {"FINISHED"}:
        raise CacheError(f"Blender cannot open the USD layer {usd_path}")
    new = [c for c in bpy.data.cache_files if c not in before]
    if len(new) != 1:
        raise CacheError(f"Blender did not load the USD layer {usd_path}")
    cache_file = new[0]
    cache_file.filepath = _blend_path(usd_path)
    cache_file.is_sequence = False
    cache_file.override_frame = False
    cache_file.frame_offset = 0.0
    cache_file.scale = 1.0
    mod.cache_file = cache_file
    _drop_unused(old)
    mod.object_path = "/" + prim
    mod.read_data = {"VERT"}
    mod.use_vertex_interpolation = True
    _place(obj, mod)
    return mod


def apply_cache(obj: bpy.types.Object, pc2_path: str, frame_start: int) -> bpy.types.MeshCacheModifier:
    """Add (or update) the garment's Mesh Cache modifier after its last deforming modifier, and disable
    the deformers before it (sample i shows at frame_start + i)."""
    mod = _our_modifier(obj, "MESH_CACHE")
    mod.cache_format = "PC2"
    mod.filepath = _blend_path(pc2_path)
    mod.deform_mode = "OVERWRITE"
    mod.play_mode = "SCENE"
    mod.time_mode = "FRAME"
    mod.interpolation = "LINEAR"
    mod.frame_start = float(frame_start)
    mod.frame_scale = 1.0
    mod.forward_axis = "POS_Y"
    mod.up_axis = "POS_Z"
    mod.flip_axis = (False, False, False)
    mod.factor = 1.0
    mod.vertex_group = ""
    _place(obj, mod)
    return mod


def _place(obj: bpy.types.Object, mod) -> None:
    """Show ``mod`` right after the last deforming modifier and disable the deformers before it."""
    mod.show_viewport = mod.show_render = True
    target = insertion_index(obj)
    index = list(obj.modifiers).index(mod)
    if index != target:
        obj.modifiers.move(index, target)
    states = {}
    for other in others(obj)[:target]:
        if other.type in DEFORMING:
            states[other.name] = [bool(other.show_viewport), bool(other.show_render)]
            other.show_viewport = other.show_render = False
    if states:
        obj[SAVED_PROP] = json.dumps(states)


def cache_path(mod) -> str:
    if mod.type == "MESH_SEQUENCE_CACHE":
        return bpy.path.abspath(mod.cache_file.filepath) if mod.cache_file is not None else ""
    return bpy.path.abspath(mod.filepath)


def bake_dir_of_cache(pc2_path: str) -> str | None:
    """The bake folder holding a cache (``<bake>/cache/<name>.pc2``), if it is one of ours."""
    folder = os.path.dirname(os.path.dirname(os.path.abspath(pc2_path)))
    return folder if os.path.isfile(os.path.join(folder, MARKER)) else None


def referenced_bake_dirs() -> set[str]:
    """Bake folders that some object of the file still shows through its modifier."""
    dirs = set()
    for obj in bpy.data.objects:
        mod = find_modifier(obj)
        if mod is not None:
            folder = bake_dir_of_cache(cache_path(mod))
            if folder:
                dirs.add(os.path.normcase(folder))
    return dirs


def remove_bake_dir(folder: str) -> None:
    """Delete one of our bake folders (a folder without the marker file is never touched)."""
    if os.path.isfile(os.path.join(folder, MARKER)):
        shutil.rmtree(folder, ignore_errors=True)


def remove_cache(obj: bpy.types.Object) -> str | None:
    """Remove the garment's modifier and re-enable the deformers it replaced; returns the cache path it showed (files are left to the caller)."""
    mod = find_modifier(obj)
    if mod is None:
        restore_modifiers(obj)  # the user deleted the modifier by hand: still give the deformers back
        return None
    path = cache_path(mod)
    _remove_modifier(obj, mod)
    restore_modifiers(obj)
    return path
