"""Add-on preferences: where the clothbake binary is (else $CLOTHBAKE_BIN, else PATH)."""

import bpy
from bpy.props import StringProperty

from . import runner


class ClothbakePreferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    binary_path: StringProperty(
        name="Binary",
        description=f"Path of the clothbake executable; empty: ${runner.ENV_VAR}, else 'clothbake' on PATH",
        subtype="FILE_PATH",
    )

    def draw(self, context):
        layout = self.layout
        layout.prop(self, "binary_path")
        try:
            layout.label(text=f"Using: {runner.find_binary(self.binary_path)}", icon="CHECKMARK")
        except runner.BinaryNotFound as e:
            layout.label(text=str(e), icon="ERROR")


def register():
    bpy.utils.register_class(ClothbakePreferences)


def unregister():
    bpy.utils.unregister_class(ClothbakePreferences)
