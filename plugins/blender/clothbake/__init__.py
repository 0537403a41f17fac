"""clothbake for Blender: bake cloth with the clothbake binary without leaving Blender.

Installs as a Blender 4.2+ extension (blender_manifest.toml) or as a classic add-on folder (bl_info).
Scripting: ``Object.clothbake`` / ``Scene.clothbake`` settings, ``bpy.ops.clothbake.bake()``,
``bpy.ops.clothbake.free()``.
"""

bl_info = {
    "name": "ClothBake",
    "author": "clothbake contributors",
    "version": (0, 1, 0),
    "blender": (4, 2, 0),
    "location": "Properties > Physics > ClothBake",
    "description": "Bake cloth on animated characters with the clothbake binary (PC2 + Mesh Cache modifier)",
    "category": "Physics",
}

import atexit

from . import bake_job, cache_modifier, export, operators, panel, preferences, properties, runner, scene_toml

# Submodules scripts may use directly (runner is bpy-free; bake_job drives one bake step by step).
__all__ = ["bake_job", "cache_modifier", "export", "operators", "panel", "preferences", "properties", "runner", "scene_toml"]

_modules = (preferences, properties, operators, panel)

# Exit hang of Blender-as-a-Python-module (bpy 4.5): at interpreter shutdown the process blocks in
# bpy's own static destructor (sound.cc GlobalState: pthread_cond_destroy while its delayed-close audio
# thread still waits on it) whenever a Python class (Operator, Panel, AddonPreferences ...) is still
# registered, because bpy's exit then never stops that thread. Blender's exit (bpy.utils._on_exit)
# disables the add-ons that addon_utils enabled, so Preferences > Add-ons is fine; a pipeline script that
# calls ``clothbake.register()`` directly left the classes registered and hung (measured: the same
# script exits in 1 s when the module is flagged ``__addon_enabled__``, or when it unregisters at exit).
# So ``register()`` arranges its own ``unregister()`` at exit (atexit runs last-registered first, i.e.
# before bpy's own handler); ``unregister()`` cancels that and is a no-op when already unregistered
# (Blender's exit may call it again for an add-on enabled through addon_utils).
_registered = False


def register():
    global _registered
    if _registered:
        return
    done = []
    try:
        for module in _modules:
            module.register()
            done.append(module)
    except BaseException:
        for module in reversed(done):
            module.unregister()
        raise
    _registered = True
    atexit.register(_unregister_at_exit)


def unregister():
    global _registered
    if not _registered:
        return
    _registered = False
    atexit.unregister(_unregister_at_exit)
    for module in reversed(_modules):
        module.unregister()


def _unregister_at_exit():
    if _registered:
        unregister()
