"""clothbake's USD layer imported by Blender 4.5 (bpy, its own USD importer, which plays the
time samples through a Mesh Sequence Cache modifier): the evaluated mesh at every frame equals the
PC2 of the same bake. Blender runs in a child process so that its bundled USD libraries never meet
usd-core's `pxr` in the same interpreter."""

import json
import subprocess
import sys
import textwrap

import pytest

from readers_util import bake_sample, read_pc2

BLENDER_SCRIPT = textwrap.dedent(
    """
    import bpy, json, sys
    path, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.wm.usd_import(filepath=path) == {"FINISHED"}
    scene = bpy.context.scene
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    ob = meshes[0]
    out = {
        "objects": [o.name for o in meshes],
        "modifiers": [(m.type, m.object_path) for m in ob.modifiers if m.type == "MESH_SEQUENCE_CACHE"],
        "scene_range": [scene.frame_start, scene.frame_end, scene.render.fps],
        "matrix_world": [list(r) for r in ob.matrix_world],
        "faces": [list(p.vertices) for p in ob.data.polygons],
        "frames": {},
    }
    for f in range(first, last + 1):
        scene.frame_set(f)
        ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
        me = ev.to_mesh()
        out["frames"][f] = [list(v.co) for v in me.vertices]
        ev.to_mesh_clear()
    print("RESULT" + json.dumps(out))
    """
)


@pytest.mark.parametrize("layer", ["skirt.usda", "skirt.usdc"])
def test_blender_imports_usd_with_the_bakes_positions_at_every_frame(tmp_path, layer):
    _, out = bake_sample(tmp_path, "skirt-walk", "2..9", ["pc2", "usd", "usdc", "obj"])
    p = subprocess.run(
        [sys.executable, "-c", BLENDER_SCRIPT, str(out / layer), "2", "9"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    line = next(l for l in p.stdout.splitlines() if l.startswith("RESULT"))
    r = json.loads(line[len("RESULT") :])
    assert r["objects"] == ["skirt"]
    assert r["modifiers"] == [["MESH_SEQUENCE_CACHE", "/skirt"]]
    assert r["scene_range"] == [2, 9, 24]
    # The layer is Y-up: Blender turns the object +90° about X (Y-up -> Z-up), the mesh stays raw.
    want_m = [[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]]
    for row, want in zip(r["matrix_world"], want_m):
        assert [round(x, 6) + 0.0 for x in row] == want
    obj_faces = [
        [int(t) - 1 for t in l.split()[1:]]
        for l in (out / "skirt.0002.obj").read_text().splitlines()
        if l.startswith("f ")
    ]
    # Blender keeps USD's face order and each face's vertex order.
    assert r["faces"] == obj_faces
    _, _, frames = read_pc2(out / "skirt.pc2")
    assert len(frames) == 8
    for k, frame in enumerate(frames):
        got = [tuple(v) for v in r["frames"][str(2 + k)]]
        # Exact: Blender's float vertices are the f32 positions of the layer (= the PC2's).
        assert got == frame, f"frame {2 + k}"


OBJ_MDD_SCRIPT = textwrap.dedent(
    """
    import bpy, json, sys
    obj_path, mdd_path, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    bpy.ops.wm.read_factory_settings(use_empty=True)
    # Forward +Y, up +Z: the file's coordinates unchanged.
    assert bpy.ops.wm.obj_import(filepath=obj_path, forward_axis="Y", up_axis="Z") == {"FINISHED"}
    ob = bpy.context.selected_objects[0]
    out = {"rest": [list(v.co) for v in ob.data.vertices],
           "faces": [list(p.vertices) for p in ob.data.polygons], "frames": {}}
    mod = ob.modifiers.new("mdd", "MESH_CACHE")
    mod.cache_format = "MDD"
    mod.filepath = mdd_path
    mod.play_mode = "SCENE"
    mod.time_mode = "TIME"        # the MDD's own time table (seconds)
    mod.frame_start = 0.0
    mod.interpolation = "LINEAR"
    mod.forward_axis, mod.up_axis = "POS_Y", "POS_Z"
    scene = bpy.context.scene
    scene.render.fps = 24
    for f in range(first, last + 1):
        scene.frame_set(f)
        ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
        me = ev.to_mesh()
        out["frames"][f] = [list(v.co) for v in me.vertices]
        ev.to_mesh_clear()
    print("RESULT" + json.dumps(out))
    """
)


def test_blender_reads_the_obj_frames_and_plays_the_mdd_in_its_mesh_cache(tmp_path):
    """Blender's OBJ importer reads an OBJ frame (vertex order and faces kept) and its Mesh Cache
    modifier plays clothbake's MDD by its time table: every frame equals the PC2."""
    _, out = bake_sample(tmp_path, "skirt-walk", "2..7", ["pc2", "mdd", "obj"])
    p = subprocess.run(
        [sys.executable, "-c", OBJ_MDD_SCRIPT, str(out / "skirt.0002.obj"), str(out / "skirt.mdd"), "2", "7"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(next(l for l in p.stdout.splitlines() if l.startswith("RESULT"))[len("RESULT") :])
    _, _, frames = read_pc2(out / "skirt.pc2")
    assert [tuple(v) for v in r["rest"]] == frames[0]
    obj_faces = [
        [int(t) - 1 for t in l.split()[1:]]
        for l in (out / "skirt.0002.obj").read_text().splitlines()
        if l.startswith("f ")
    ]
    assert r["faces"] == obj_faces
    for k, frame in enumerate(frames):
        got = [tuple(v) for v in r["frames"][str(2 + k)]]
        # Exact: the time lookup lands on the sample itself (interpolation weight 0).
        assert got == frame, f"frame {2 + k}"
