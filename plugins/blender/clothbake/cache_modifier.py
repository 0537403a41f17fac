"""The Mesh Cache modifier that shows a baked PC2 on its garment, and the bake folders behind it.

Checked in Blender 4.5 (tests/test_blender_bake.py): with ``play_mode = 'SCENE'``,
``time_mode = 'FRAME'``, ``frame_scale = 1`` the modifier reads sample ``frame - frame_start``
(ignoring the PC2 header's own start frame), holds the first sample before and the last after, and
interpolates linearly between samples at sub-frames. The cache is in object-local space, so the
axes stay at identity (forward +Y, up +Z).
"""

from __future__ import annotations

import os
import shutil
import struct

import bpy

from .properties import MODIFIER_NAME

#: A file that marks a folder as a bake folder made by this add-on (only those are ever deleted).
MARKER = ".clothbake-bake"


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


def find_modifier(obj: bpy.types.Object):
    mod = obj.modifiers.get(MODIFIER_NAME)
    return mod if mod is not None and mod.type == "MESH_CACHE" else None


def _blend_path(path: str) -> str:
    """Relative to the .blend ('//...') when it is saved, so a project folder can move."""
    if bpy.data.filepath:
        try:
            return bpy.path.relpath(path)
        except ValueError:  # another drive on Windows
            return path
    return path


def apply_cache(obj: bpy.types.Object, pc2_path: str, frame_start: int) -> bpy.types.MeshCacheModifier:
    """Add (or update) the garment's Mesh Cache modifier, first in the stack: sample i at frame_start + i."""
    mod = find_modifier(obj)
    if mod is None:
        mod = obj.modifiers.new(MODIFIER_NAME, "MESH_CACHE")
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
    index = list(obj.modifiers).index(mod)
    if index != 0:
        obj.modifiers.move(index, 0)
    return mod


def cache_path(mod) -> str:
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
    """Remove the garment's modifier; returns the cache path it showed (files are left to the caller)."""
    mod = find_modifier(obj)
    if mod is None:
        return None
    path = cache_path(mod)
    obj.modifiers.remove(mod)
    return path
