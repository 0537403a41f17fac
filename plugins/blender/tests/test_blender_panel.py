"""The Physics panel draws, for every role and collider shape, only properties and operators that
exist (its draw() runs against a recording layout, since background Blender has no UI to draw in)."""

import pytest

bpy = pytest.importorskip("bpy")

from clothbake_testutil import addon, make_garment, make_sphere, new_scene  # noqa: E402


class Recorder:
    """Stands in for bpy.types.UILayout: checks prop()/prop_search()/operator() targets, records them."""

    def __init__(self, log):
        self.log = log

    def __getattr__(self, name):
        return lambda *args, **kwargs: Recorder(self.log)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)

    def prop(self, data, name, **kwargs):
        assert name in data.bl_rna.properties, f"{data.bl_rna.identifier} has no property {name!r}"
        self.log.append(("prop", name))

    def prop_search(self, data, name, search_data, search_name, **kwargs):
        assert name in data.bl_rna.properties and search_name in search_data.bl_rna.properties
        self.log.append(("prop_search", name))

    def operator(self, idname, **kwargs):
        category, op = idname.split(".")
        assert getattr(getattr(bpy.ops, category), op).poll() in (True, False)
        self.log.append(("operator", idname))


def draw(context):
    panel_cls = bpy.types.Panel.bl_rna_get_subclass_py("PHYSICS_PT_clothbake")
    log = []
    fake_panel = type("P", (), {"layout": Recorder(log), "draw_garment": staticmethod(panel_cls.draw_garment), "draw_collider": staticmethod(panel_cls.draw_collider)})()
    panel_cls.draw(fake_panel, context)
    return log


@pytest.mark.parametrize("role,shape", [("NONE", None), ("GARMENT", None), ("GARMENT", "SPRINGS"), ("COLLIDER", "SPHERE"), ("COLLIDER", "CAPSULE"), ("COLLIDER", "AUTO")])
def test_panel_draws_existing_properties(tmp_path, role, shape):
    addon()
    scene = new_scene(tmp_path)
    obj = make_garment(scene, "Cloth", (0, 0, 1), (0, 0, 0), (1, 1, 1), cells=2) if role != "COLLIDER" else make_sphere(scene, "Ball", 0.2, {})
    obj.clothbake.role = role
    if role == "GARMENT" and shape:
        obj.clothbake.model = shape
        shape = None
    if shape:
        obj.clothbake.collider_shape = shape
    context = type("C", (), {"object": obj, "scene": scene, "window_manager": bpy.context.window_manager})()
    log = draw(context)
    names = [name for kind, name in log]
    assert names[0] == "role"
    assert {"frame_start", "frame_end", "preroll", "preroll_from", "substeps", "integrator", "damping_projection", "output_dir", "clothbake.bake", "clothbake.free"} <= set(names)
    # Every [scene] integrator of the solver is offered (lower-cased into the scene file).
    assert {"BW", "BDF2", "AIMEX"} <= set(scene.clothbake.bl_rna.properties["integrator"].enum_items.keys())
    if role == "GARMENT":
        assert {"material", "model", "pin_group", "density", "use_density", "thickness"} <= set(names)
        assert ("spring_stiffness" in names) == (obj.clothbake.model == "SPRINGS")
    if shape in ("SPHERE", "CAPSULE"):
        assert "collider_radius" in names
    if shape == "AUTO":
        assert "collider_inflate" in names and "collider_radius" not in names
