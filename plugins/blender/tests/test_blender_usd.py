"""The add-on's USD option in real Blender (bpy 4.5): with ``cache_format = 'USD'`` the bake is shown
through Blender's own Mesh Sequence Cache modifier reading the bake's binary USD layer (``.usdc``)
under a small text layer with the garment's polygons, the evaluated mesh equals the PC2 of the same
bake at every frame (exactly, also at 23.976 fps, where a time-code rate that differed from the
bake's layer would shift the samples), the garment keeps its own faces and UVs, and switching back
to PC2 / freeing removes the modifier and its CacheFile."""

import os

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from clothbake_testutil import (  # noqa: E402
    addon,
    clothbake_binary,
    evaluated_local,
    make_garment,
    make_sphere,
    new_scene,
    read_pc2,
)

FRAMES = (1, 12)


@pytest.fixture(params=[1.0, 1.001], ids=["24fps", "23.976fps"])
def usd_baked(tmp_path, monkeypatch, request):
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    addon()
    scene = new_scene(tmp_path)
    scene.render.fps_base = request.param
    s = scene.clothbake
    s.frame_start, s.frame_end, s.substeps = FRAMES[0], FRAMES[1], 3
    assert s.cache_format == "PC2"  # the default stays the Mesh Cache
    s.cache_format = "USD"
    garment = make_garment(scene, "Shirt Front", location=(0.1, -0.05, 1.0), rotation=(0.12, -0.08, 0.6), scale=(1.1, 0.9, 1.0))
    make_sphere(scene, "Ball", 0.3, {1: (0.1, 0.1, 0.35), 12: (0.12, 0.05, 0.75)})
    faces = [tuple(p.vertices) for p in garment.data.polygons]
    uv_layers = [uv.name for uv in garment.data.uv_layers]
    result = bpy.ops.clothbake.bake()
    return scene, garment, faces, uv_layers, result


def test_usd_option_shows_the_bake_through_a_mesh_sequence_cache(usd_baked):
    scene, garment, faces, uv_layers, result = usd_baked
    assert result == {"FINISHED"}, scene.clothbake.status
    mod = garment.modifiers["ClothBake"]
    assert mod.type == "MESH_SEQUENCE_CACHE"
    assert mod.object_path == "/Shirt_Front"
    assert mod.read_data == {"VERT"}
    usd = bpy.path.abspath(mod.cache_file.filepath)
    assert usd.endswith(os.path.join("cache", "Shirt_Front.blender.usda")) and os.path.isfile(usd)
    binary = usd.replace(".blender.usda", ".usdc")
    assert os.path.isfile(binary)
    with open(binary, "rb") as f:
        assert f.read(8) == b"PXR-USDC"
    from clothbake import cache_modifier

    rate = scene.render.fps / scene.render.fps_base
    with open(usd, encoding="utf-8") as f:
        text = f.read()
    assert f"timeCodesPerSecond = {cache_modifier.f32_text(rate)}" in text, text[:400]
    assert len(bpy.data.cache_files) == 1
    _, samples = read_pc2(usd[: -len(".blender.usda")] + ".pc2")
    assert samples.shape[0] == FRAMES[1] - FRAMES[0] + 1
    for frame in range(FRAMES[0], FRAMES[1] + 1):
        scene.frame_set(frame)
        got = evaluated_local(garment)
        # Exact: Blender reads the layer's f32 points, which are the PC2's.
        assert np.array_equal(got, samples[frame - FRAMES[0]]), f"frame {frame}"
    # Positions only: the garment keeps its faces and UVs.
    ev = garment.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    assert [tuple(p.vertices) for p in ev.polygons] == faces
    assert [uv.name for uv in ev.uv_layers] == uv_layers
    assert np.max(np.linalg.norm(samples[-1] - samples[0], axis=1)) > 0.01  # it moved


def test_rebake_as_pc2_then_free_removes_modifier_and_cache_file(usd_baked):
    scene, garment, _faces, _uv, result = usd_baked
    assert result == {"FINISHED"}
    scene.clothbake.cache_format = "PC2"
    assert bpy.ops.clothbake.bake() == {"FINISHED"}, scene.clothbake.status
    mods = [m for m in garment.modifiers if m.name.startswith("ClothBake")]
    assert [(m.name, m.type) for m in mods] == [("ClothBake", "MESH_CACHE")]
    assert len(bpy.data.cache_files) == 0  # the USD CacheFile went with its modifier
    scene.clothbake.cache_format = "USD"
    assert bpy.ops.clothbake.bake() == {"FINISHED"}, scene.clothbake.status
    folder = os.path.dirname(os.path.dirname(bpy.path.abspath(garment.modifiers["ClothBake"].cache_file.filepath)))
    assert bpy.ops.clothbake.free() == {"FINISHED"}
    assert "ClothBake" not in garment.modifiers
    assert len(bpy.data.cache_files) == 0
    assert not os.path.exists(folder)
