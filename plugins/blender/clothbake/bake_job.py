"""One bake of a scene: export into a fresh bake folder, run the binary, then apply or roll back.

The operators drive a :class:`BakeJob` either from a modal timer (UI) or in a blocking loop
(background mode, scripts). Until :meth:`BakeJob.finish` succeeds nothing in the scene changes; on
failure or cancel the bake folder (and an output root it created) is removed, so the scene and the
disk are left as they were.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import bpy

from . import cache_modifier, export, runner

ADDON_PACKAGE = __package__


def addon_preferences(context):
    addon = context.preferences.addons.get(ADDON_PACKAGE)
    return addon.preferences if addon is not None else None


def find_binary(context) -> str:
    prefs = addon_preferences(context)
    return runner.find_binary(prefs.binary_path if prefs is not None else "")


def output_root(scene: bpy.types.Scene) -> str:
    """Absolute folder for bakes; '//' paths go to the temp folder while the .blend is unsaved."""
    path = scene.clothbake.output_dir or "//clothbake_cache"
    if path.startswith("//") and not bpy.data.filepath:
        return os.path.join(tempfile.gettempdir(), path[2:] or "clothbake_cache")
    return os.path.abspath(bpy.path.abspath(path))


class BakeJob:
    """Export, run and apply one bake. Raises ``export.ExportError`` / ``runner.BinaryNotFound`` /
    ``OSError`` from :meth:`start` (after cleaning up)."""

    def __init__(self, context):
        self.scene_name = context.scene.name
        self.frame_start = context.scene.clothbake.frame_start
        #: Load the bake through the USD layer (Mesh Sequence Cache) instead of the PC2 (Mesh Cache).
        self.use_usd = context.scene.clothbake.cache_format == "USD"
        #: Samples each cache must hold: frame_start .. frame_end (pre-roll frames are not written).
        self.samples = context.scene.clothbake.frame_end - self.frame_start + 1
        #: The frame rate the export gives the binary (the USD layer's time codes per second).
        self.fps = export.scene_fps(context.scene)
        self.bake_dir: str | None = None
        self.created_root: str | None = None
        self.caches: list[tuple[str, str]] = []
        self.process: runner.BakeProcess | None = None
        self.started_at = 0.0

    # -- start -------------------------------------------------------------------------------

    def start(self, context) -> None:
        binary = find_binary(context)
        try:
            self._make_bake_dir(context.scene)
            self.caches = export.export_scene(context, self.bake_dir)
            argv = [binary, "bake", os.path.join(self.bake_dir, export.SCENE_FILE),
                    "-o", os.path.join(self.bake_dir, export.CACHE_SUBDIR),
                    "--format", "pc2,usdc" if self.use_usd else "pc2", "--json"]
            self.process = runner.BakeProcess(argv, cwd=self.bake_dir)
            self.started_at = time.monotonic()
            self.process.start()
        except BaseException:
            self.cleanup()
            raise

    def _make_bake_dir(self, scene) -> None:
        root = output_root(scene)
        if not os.path.isdir(root):
            # Remember the topmost folder we create, to remove it again if the bake fails.
            top = root
            while not os.path.isdir(os.path.dirname(top)) and os.path.dirname(top) != top:
                top = os.path.dirname(top)
            os.makedirs(root)
            self.created_root = top
        stamp = time.strftime("%Y%m%d-%H%M%S")
        prefix = export.safe_name(scene.name, set()) + f"_{stamp}_"
        self.bake_dir = tempfile.mkdtemp(prefix=prefix, dir=root)
        with open(os.path.join(self.bake_dir, cache_modifier.MARKER), "w", encoding="utf-8") as f:
            f.write("Made by the clothbake Blender add-on; 'Free Bake' deletes this folder.\n")

    # -- progress ----------------------------------------------------------------------------

    def poll(self, timeout: float = 0.0):
        return self.process.poll(timeout) if self.process is not None else []

    def running(self) -> bool:
        return self.process is not None and not self.process.finished()

    def progress_text(self) -> str:
        p = self.process
        if p is None or p.total == 0:
            return "ClothBake: starting…  (Esc to cancel)"
        eta = f", {p.eta_seconds:.0f} s left" if p.eta_seconds is not None else ""
        frame = f" (frame {p.frame})" if p.frame is not None else ""
        return f"ClothBake: {p.done}/{p.total} frames{frame}{eta}  (Esc to cancel)"

    def cancel(self) -> None:
        if self.process is not None:
            self.process.cancel()
        self.cleanup()

    # -- finish ------------------------------------------------------------------------------

    def finish(self, context) -> tuple[bool, str]:
        """Apply the caches if the bake succeeded, else roll back. Returns (ok, message)."""
        result = self.process.result()
        if not result.ok:
            self.cleanup()
            return False, result.message
        try:
            checked = self._check_caches()
        except cache_modifier.CacheError as e:
            self.cleanup()
            return False, str(e)
        before = cache_modifier.referenced_bake_dirs()
        if self.use_usd:
            last = self.frame_start + self.samples - 1
            metadata = cache_modifier.stage_metadata(self.frame_start, last, self.fps)
            try:  # write every garment's Blender layer first: a failure there changes nothing
                layers = [(obj, cache_modifier.write_blender_layer(obj, cache_modifier.usd_path_of(pc2), metadata))
                          for obj, pc2 in checked]
            except (cache_modifier.CacheError, OSError) as e:
                self.cleanup()
                return False, str(e)
            for obj, layer in layers:
                cache_modifier.apply_usd_cache(obj, layer)
        else:
            for obj, pc2 in checked:
                cache_modifier.apply_cache(obj, pc2, self.frame_start)
        after = cache_modifier.referenced_bake_dirs()
        for folder in before - after:  # earlier bakes that nothing shows any more
            cache_modifier.remove_bake_dir(folder)
        seconds = time.monotonic() - self.started_at
        message = f"ClothBake: baked {len(checked)} garment(s), {self.samples} frames in {seconds:.1f} s"
        if result.warnings:
            message += f"; {len(result.warnings)} warning(s), last: {result.warnings[-1]}"
        return True, message

    def _check_caches(self):
        checked = []
        frames = self.samples
        for name, pc2 in self.caches:
            obj = bpy.data.objects.get(name)
            if obj is None or obj.type != "MESH":
                raise cache_modifier.CacheError(f"garment '{name}' was deleted or renamed during the bake")
            if not os.path.isfile(pc2):
                raise cache_modifier.CacheError(f"garment '{name}': the binary wrote no cache {pc2}")
            points, _start, _rate, samples = cache_modifier.read_pc2_header(pc2)
            if points != len(obj.data.vertices):
                raise cache_modifier.CacheError(
                    f"garment '{name}': cache has {points} points but the mesh has {len(obj.data.vertices)} vertices")
            if samples != frames:
                raise cache_modifier.CacheError(f"garment '{name}': cache has {samples} samples, expected {frames}")
            if self.use_usd and not os.path.isfile(cache_modifier.usd_path_of(pc2)):
                raise cache_modifier.CacheError(
                    f"garment '{name}': the binary wrote no USD layer {cache_modifier.usd_path_of(pc2)}")
            checked.append((obj, pc2))
        return checked

    def cleanup(self) -> None:
        """Remove everything this bake wrote."""
        if self.bake_dir is not None:
            shutil.rmtree(self.bake_dir, ignore_errors=True)
            self.bake_dir = None
        if self.created_root is not None:
            _remove_empty_tree(self.created_root)
            self.created_root = None


def _remove_empty_tree(top: str) -> None:
    for folder, _dirs, _files in sorted(os.walk(top, topdown=False), key=lambda t: -len(t[0])):
        try:
            os.rmdir(folder)
        except OSError:
            return
