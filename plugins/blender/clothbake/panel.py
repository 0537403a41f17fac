"""Physics properties panel: the active object's cloth-bake role and settings, the scene's bake
settings, and the Bake / Free buttons."""

import bpy


class PHYSICS_PT_clothbake(bpy.types.Panel):
    bl_label = "ClothBake"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.scene is not None

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        obj = context.object
        s = obj.clothbake
        layout.prop(s, "role")
        if s.role == "GARMENT":
            self.draw_garment(layout, obj, s)
        elif s.role == "COLLIDER":
            self.draw_collider(layout, s)

        scene = context.scene.clothbake
        box = layout.box()
        col = box.column(align=True)
        col.prop(scene, "frame_start")
        col.prop(scene, "frame_end")
        col = box.column(align=True)
        col.prop(scene, "preroll")
        sub = col.row()
        sub.active = scene.preroll > 0
        sub.prop(scene, "preroll_from")
        box.prop(scene, "substeps")
        box.prop(scene, "integrator")
        box.prop(scene, "damping_projection")
        box.prop(scene, "output_dir")
        box.prop(scene, "cache_format")
        row = box.row(align=True)
        row.operator("clothbake.bake", icon="PHYSICS")
        row.operator("clothbake.free", icon="TRASH")
        if context.window_manager.clothbake_running:
            box.label(text="Baking… (Esc cancels)", icon="TIME")
        elif scene.status:
            box.label(text=scene.status, icon="ERROR" if "ClothBake: baked" not in scene.status and "freed" not in scene.status else "INFO")

    @staticmethod
    def draw_garment(layout, obj, s):
        if obj.type != "MESH":
            layout.label(text="A garment must be a mesh", icon="ERROR")
        layout.prop(s, "material")
        layout.prop(s, "model")
        col = layout.column(heading="Overrides")
        if s.model == "SPRINGS":
            row = col.row(align=True)
            row.prop(s, "use_spring_stiffness", text="")
            sub = row.row()
            sub.active = s.use_spring_stiffness
            sub.prop(s, "spring_stiffness")
        for name in ("density", "stretch", "shear", "bend"):
            row = col.row(align=True)
            row.prop(s, f"use_{name}", text="")
            sub = row.row()
            sub.active = getattr(s, f"use_{name}")
            sub.prop(s, name)
        layout.prop(s, "thickness")
        layout.prop(s, "friction")
        layout.prop(s, "self_collision")
        layout.prop_search(s, "pin_group", obj, "vertex_groups")
        sub = layout.row()
        sub.active = bool(s.pin_group)
        sub.prop(s, "pin_stiffness")

    @staticmethod
    def draw_collider(layout, s):
        layout.prop(s, "collider_shape")
        if s.collider_shape == "AUTO":
            layout.prop(s, "collider_inflate")
            return
        layout.prop(s, "collider_radius")
        if s.collider_shape == "CAPSULE":
            layout.prop(s, "collider_radius_b")


def register():
    bpy.utils.register_class(PHYSICS_PT_clothbake)


def unregister():
    bpy.utils.unregister_class(PHYSICS_PT_clothbake)
