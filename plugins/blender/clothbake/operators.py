"""``bpy.ops.clothbake.bake()`` and ``bpy.ops.clothbake.free()``.

Bake from a button (invoke) runs modally: a window-manager timer polls the child process, progress
shows in the status bar and in the header of the area the button was in, Esc cancels (the child is
ended and everything written is removed). Bake from a script (exec) or in background mode
(``blender -b``) blocks until done; Ctrl+C in the terminal cancels it the same way.
"""

from __future__ import annotations

import os

import bpy

from . import bake_job, cache_modifier, export, runner

_TIMER_SECONDS = 0.1


def _start_job(op, context):
    job = bake_job.BakeJob(context)
    try:
        job.start(context)
    except (export.ExportError, runner.BinaryNotFound, OSError) as e:
        message = f"ClothBake: {e}"
        context.scene.clothbake.status = message
        op.report({"ERROR"}, message)
        return None
    return job


def _end(op, context, job, ok, message) -> set:
    context.scene.clothbake.status = message
    if ok:
        op.report({"INFO"}, message)
        return {"FINISHED"}
    op.report({"ERROR"}, message if message.startswith("ClothBake") else f"ClothBake: {message}")
    return {"CANCELLED"}


class CLOTHBAKE_OT_bake(bpy.types.Operator):
    """Bake every garment of the scene with the clothbake binary and show the result with Mesh Cache modifiers"""

    bl_idname = "clothbake.bake"
    bl_label = "Bake Cloth"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        return context.scene is not None and not context.window_manager.clothbake_running

    # -- blocking (scripts, background) -------------------------------------------------------

    def execute(self, context):
        job = _start_job(self, context)
        if job is None:
            return {"CANCELLED"}
        context.window_manager.clothbake_running = True
        last = -1
        try:
            while job.running():
                job.poll(timeout=0.2)
                if job.process.done != last and bpy.app.background:
                    last = job.process.done
                    print(job.progress_text().replace("  (Esc to cancel)", ""), flush=True)
        except KeyboardInterrupt:
            job.cancel()
            return _end(self, context, job, False, "ClothBake: bake cancelled")
        finally:
            context.window_manager.clothbake_running = False
        ok, message = job.finish(context)
        return _end(self, context, job, ok, message)

    # -- modal (UI) ---------------------------------------------------------------------------

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        self._job = _start_job(self, context)
        if self._job is None:
            return {"CANCELLED"}
        wm = context.window_manager
        wm.clothbake_running = True
        self._area = context.area
        self._timer = wm.event_timer_add(_TIMER_SECONDS, window=context.window)
        wm.progress_begin(0, 1000)
        wm.modal_handler_add(self)
        self._show(context)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        job = self._job
        if event.type == "ESC" and event.value == "PRESS":
            job.cancel()
            self._stop(context)
            return _end(self, context, job, False, "ClothBake: bake cancelled")
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        job.poll()
        if job.running():
            self._show(context)
            return {"RUNNING_MODAL"}
        self._stop(context)
        ok, message = job.finish(context)
        return _end(self, context, job, ok, message)

    def cancel(self, context):  # Blender calls this when the window closes mid-bake
        self._job.cancel()
        self._stop(context)

    def _show(self, context):
        text = self._job.progress_text()
        context.workspace.status_text_set(text)
        if self._area is not None:
            self._area.header_text_set(text)
            self._area.tag_redraw()
        context.window_manager.progress_update(int(1000 * self._job.process.fraction))

    def _stop(self, context):
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        wm.clothbake_running = False
        context.workspace.status_text_set(None)
        if self._area is not None:
            self._area.header_text_set(None)
            self._area.tag_redraw()


class CLOTHBAKE_OT_free(bpy.types.Operator):
    """Remove the Mesh Cache modifiers of the scene's garments (the deforming modifiers they replaced are enabled again as they were) and delete their bake folders"""

    bl_idname = "clothbake.free"
    bl_label = "Free Bake"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return context.scene is not None and not context.window_manager.clothbake_running

    def execute(self, context):
        freed, folders = 0, set()
        for obj in context.scene.objects:
            path = cache_modifier.remove_cache(obj)
            if path is None:
                continue
            freed += 1
            folder = cache_modifier.bake_dir_of_cache(path)
            if folder is not None:  # only our own (marked) bake folders are ever deleted
                folders.add(os.path.normcase(folder))
        still_used = cache_modifier.referenced_bake_dirs()  # e.g. objects in other scenes
        for folder in folders - still_used:
            cache_modifier.remove_bake_dir(folder)
        message = f"ClothBake: freed {freed} garment cache(s)"
        context.scene.clothbake.status = message
        self.report({"INFO"}, message)
        return {"FINISHED"}


classes = (CLOTHBAKE_OT_bake, CLOTHBAKE_OT_free)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
