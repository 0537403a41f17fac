"""Settings stored in the .blend: ``Object.clothbake`` and ``Scene.clothbake``.

Pipeline scripts set these directly, e.g. ``ob.clothbake.role = 'GARMENT'``,
``ob.clothbake.pin_group = "pins"``, ``ob.clothbake.material = 'silk'``,
``scene.clothbake.frame_end = 120``. Numbers are in SI units (see docs/scene-format.md).
"""

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty, IntProperty, PointerProperty, StringProperty

#: Material presets of the binary (`clothbake sample --list`, docs/scene-format.md).
MATERIAL_PRESETS = ("cotton", "silk", "denim", "leather", "jersey", "wool", "polyester")

#: Name of the Mesh Cache (or Mesh Sequence Cache, for USD) modifier the bake adds to each garment.
MODIFIER_NAME = "ClothBake"

# Blender 4.5 warns about '//' in path properties unless they declare support (an unknown option
# before 4.5).
_BLEND_RELATIVE = {"PATH_SUPPORTS_BLEND_RELATIVE"} if bpy.app.version >= (4, 5, 0) else set()


class ClothbakeObjectSettings(bpy.types.PropertyGroup):
    role: EnumProperty(
        name="Role",
        description="What this object is to the cloth bake",
        items=(
            ("NONE", "None", "Not part of the cloth bake"),
            ("GARMENT", "Garment", "Simulated cloth; gets a Mesh Cache modifier with the baked motion"),
            ("COLLIDER", "Collider", "Body proxy the cloth collides with"),
        ),
        default="NONE",
    )

    # -- garment (override defaults are the cotton preset's values) ------------------------------------
    pin_group: StringProperty(
        name="Pin Group",
        description="Vertex group of pinned vertices: weight 1 holds the vertex at its rest position, "
        "weights below 1 pull it back with a spring of that share of Pin Stiffness",
    )
    pin_stiffness: FloatProperty(
        name="Pin Stiffness", description="Goal-spring stiffness per unit weight for partial pins (N/m)",
        default=2000.0, min=0.0, soft_max=1e5,
    )
    material: EnumProperty(
        name="Material",
        description="Fabric preset of the clothbake binary",
        items=[(p, p.capitalize(), f"The '{p}' preset") for p in MATERIAL_PRESETS],
        default="cotton",
    )
    model: EnumProperty(
        name="Model",
        description="Internal forces of the cloth (clothbake's [[garment]] model)",
        items=(
            ("BW", "Baraff-Witkin", "Triangle stretch/shear and dihedral bending (Baraff & Witkin 1998): "
             "independent of the triangulation (the default)"),
            ("SPRINGS", "Springs", "Mass-spring network: structural, shear and buckling bend springs (Provot, "
             "Choi & Ko, Kang's stabilised Jacobian); the same material, mapped exactly on regular grids"),
        ),
        default="BW",
    )
    use_spring_stiffness: BoolProperty(name="Override Spring Stiffness", default=False)
    spring_stiffness: FloatProperty(
        name="Spring Stiffness", description="Springs model: every mesh-edge spring gets the constant "
        "Spring Stiffness / rest length (N), instead of the one from Stretch (Kang 2003 §6: 0.03)",
        default=0.03, min=1e-9, soft_max=1e3, precision=4,
    )
    use_density: BoolProperty(name="Override Density", default=False)
    density: FloatProperty(name="Density", description="Area density (kg/m²)", default=0.15, min=1e-6, soft_max=2.0, precision=4)
    use_stretch: BoolProperty(name="Override Stretch", default=False)
    stretch: FloatVectorProperty(
        name="Stretch", description="Stretch stiffness along warp (U) and weft (V) (N/m)", size=2, default=(2000.0, 1600.0),
        min=0.0, soft_max=1e5,
    )
    use_shear: BoolProperty(name="Override Shear", default=False)
    shear: FloatProperty(name="Shear", description="Shear stiffness (N/m)", default=80.0, min=0.0, soft_max=1e4)
    use_bend: BoolProperty(name="Override Bend", default=False)
    bend: FloatProperty(name="Bend", description="Bending stiffness (N·m)", default=1.5e-5, min=0.0, soft_max=1e-2, precision=6)
    thickness: FloatProperty(
        name="Thickness", description="Collision distance kept from body proxies (m)", default=0.005, min=0.0, soft_max=0.1,
        precision=4, unit="LENGTH",
    )
    friction: FloatProperty(name="Friction", description="Coulomb friction against body proxies", default=0.3, min=0.0, soft_max=2.0)
    self_collision: BoolProperty(name="Self Collision", description="Cloth-cloth collision for this garment", default=True)

    # -- collider -------------------------------------------------------------------------------
    collider_shape: EnumProperty(
        name="Shape",
        items=(
            ("SPHERE", "Sphere", "A sphere around the object's geometry (follows the object, also when parented to a bone)"),
            ("CAPSULE", "Capsule", "A capsule along the longest axis of the object's geometry"),
            ("AUTO", "Auto", "Armature-skinned body mesh: one tapered capsule per bone, fitted by the binary"),
        ),
        default="SPHERE",
    )
    collider_radius: FloatProperty(
        name="Radius", description="Sphere or capsule radius in the object's local units; 0 = sized from the geometry",
        default=0.0, min=0.0, soft_max=10.0, unit="LENGTH",
    )
    collider_radius_b: FloatProperty(
        name="Tip Radius", description="Capsule radius at its second end (local units); 0 = same as Radius",
        default=0.0, min=0.0, soft_max=10.0, unit="LENGTH",
    )
    collider_inflate: FloatProperty(
        name="Inflate", description="Added to every fitted capsule radius for Auto (m)", default=0.0, soft_min=-0.1, soft_max=0.1,
        unit="LENGTH",
    )


class ClothbakeSceneSettings(bpy.types.PropertyGroup):
    frame_start: IntProperty(name="Start", description="First baked frame (the cache's first sample)", default=1)
    frame_end: IntProperty(name="End", description="Last baked frame (inclusive)", default=250)
    preroll: IntProperty(
        name="Pre-roll", description="Frames simulated before Start so the cloth settles on the moving body; "
        "they are not written (the cache still starts at Start)", default=0, min=0, soft_max=100,
    )
    preroll_from: EnumProperty(
        name="Pre-roll From",
        description="What the character does during the pre-roll",
        items=(
            ("ANIMATION", "Animation", "The animation itself: the character moves from its pose at Start minus Pre-roll"),
            ("REST", "Rest", "Ease in from the rest pose (garment mesh, armatures in rest position) to the pose at Start"),
        ),
        default="ANIMATION",
    )
    substeps: IntProperty(name="Substeps", description="Solver substeps per frame", default=5, min=1, soft_max=50)
    integrator: EnumProperty(
        name="Integrator",
        description="Time integration of the cloth (clothbake's [scene] integrator)",
        items=(
            ("BW", "Backward Euler", "Baraff & Witkin: one Newton step of backward Euler per substep; the most "
             "damped and the most robust (the default)"),
            ("BDF2", "BDF2", "Second-order backward differentiation: less numerical damping of folds and swings "
             "at the same substeps; falls back to backward Euler after a substep size change"),
            ("AIMEX", "Adaptive IMEX", "Boxerman's adaptive implicit-explicit backward Euler: elements soft enough "
             "for the substep are integrated explicitly, the rest as backward Euler"),
            ("KANG", "Kang (approximate implicit)", "Kang 2003: backward Euler's system approximated by one "
             "block update per vertex instead of solved; cheaper per substep, less accurate, and woven "
             "cloth needs about 4x the substeps (20 at 24 fps)"),
            ("VERLET", "Verlet + relaxation", "Jakobsen 2001: explicit Verlet with edge-length constraints "
             "relaxed each substep; inextensible cloth, no collider friction, needs more substeps"),
        ),
        default="BW",
    )
    damping_projection: BoolProperty(
        name="Projected Damping",
        description="Air damping acts only on the cloth's non-rigid motion: falling and turning are not "
        "slowed by it (clothbake's [scene] damping_projection)",
        default=False,
    )
    output_dir: StringProperty(
        name="Output",
        description="Folder for bakes; '//' is relative to the .blend (a temporary folder while it is unsaved)",
        default="//clothbake_cache", subtype="DIR_PATH", options=_BLEND_RELATIVE,
    )
    cache_format: EnumProperty(
        name="Load As",
        description="How the bake is shown on the garments",
        items=(
            ("PC2", "PC2 (Mesh Cache)", "The bake's PC2 through a Mesh Cache modifier"),
            ("USD", "USD (Mesh Sequence Cache)",
             "The bake's USD layer (also written with the PC2) through Blender's own Mesh Sequence Cache modifier"),
        ),
        default="PC2",
    )
    status: StringProperty(name="Status", description="Outcome of the last bake or free", default="")


classes = (ClothbakeObjectSettings, ClothbakeSceneSettings)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Object.clothbake = PointerProperty(type=ClothbakeObjectSettings)
    bpy.types.Scene.clothbake = PointerProperty(type=ClothbakeSceneSettings)
    bpy.types.WindowManager.clothbake_running = BoolProperty(default=False, options={"SKIP_SAVE"})


def unregister():
    del bpy.types.WindowManager.clothbake_running
    del bpy.types.Scene.clothbake
    del bpy.types.Object.clothbake
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
