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

from . import bake_job, cache_modifier, export, operators, panel, preferences, properties, runner, scene_toml

# Submodules scripts may use directly (runner is bpy-free; bake_job drives one bake step by step).
__all__ = ["bake_job", "cache_modifier", "export", "operators", "panel", "preferences", "properties", "runner", "scene_toml"]

_modules = (preferences, properties, operators, panel)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
