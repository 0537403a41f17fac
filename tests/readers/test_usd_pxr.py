"""clothbake's USD layers read by Pixar's own USD library (usd-core's `pxr`): every value compared
with the PC2 of the same bake (bit-exact f32) and with the garment's topology, for the text layer
(`.usda`) and the binary one (`.usdc`), which pxr must read as the very same layer."""

import math

import pytest
from pxr import Sdf, Usd, UsdGeom

from readers_util import bake_sample, f32, read_pc2, run


def _obj_faces(path):
    """0-based polygons of an OBJ frame written by clothbake (source order)."""
    faces = []
    for line in path.read_text().splitlines():
        if line.startswith("f "):
            faces.append([int(t.split("/")[0]) - 1 for t in line.split()[1:]])
    return faces


@pytest.fixture(scope="module")
def skirt(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("skirt")
    _, out = bake_sample(tmp, "skirt-walk", "3..10", ["pc2", "usd", "usdc", "obj"])
    return out


@pytest.mark.parametrize("layer_name", ["skirt.usda", "skirt.usdc"])
def test_pxr_usd_layer_equals_pc2_and_topology(skirt, layer_name):
    layer = skirt / layer_name
    assert Sdf.Layer.FindOrOpen(str(layer)) is not None
    stage = Usd.Stage.Open(str(layer))
    assert stage.GetTimeCodesPerSecond() == 24.0
    assert stage.GetFramesPerSecond() == 24.0
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (3.0, 10.0)
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    assert stage.GetDefaultPrim().GetPath() == "/skirt"
    mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/skirt"))
    assert mesh and mesh.GetPrim().GetTypeName() == "Mesh"

    faces = _obj_faces(skirt / "skirt.0003.obj")
    assert list(mesh.GetFaceVertexCountsAttr().Get()) == [len(f) for f in faces]
    assert list(mesh.GetFaceVertexIndicesAttr().Get()) == [i for f in faces for i in f]

    start, _rate, frames = read_pc2(skirt / "skirt.pc2")
    assert start == 3.0 and len(frames) == 8
    times = mesh.GetPointsAttr().GetTimeSamples()
    assert times == [3.0 + k for k in range(8)]
    for k, frame in enumerate(frames):
        t = 3.0 + k
        pts = mesh.GetPointsAttr().Get(t)
        assert len(pts) == len(frame)
        # Bit-exact: the usda text reads back to the very f32 the PC2 holds.
        got = [(p[0], p[1], p[2]) for p in pts]
        assert got == frame, f"points differ at time code {t}"
        ext = mesh.GetExtentAttr().Get(t)
        lo = tuple(min(p[c] for p in frame) for c in range(3))
        hi = tuple(max(p[c] for p in frame) for c in range(3))
        assert tuple(ext[0]) == lo and tuple(ext[1]) == hi
        # pxr's own extent computation agrees with the written one.
        computed = UsdGeom.PointBased.ComputeExtent(pts)
        assert tuple(computed[0]) == lo and tuple(computed[1]) == hi
    # Between samples pxr interpolates linearly (held time samples, no gaps).
    mid = mesh.GetPointsAttr().Get(3.5)
    for a, b, m in zip(frames[0][:50], frames[1][:50], list(mid)[:50]):
        for c in range(3):
            assert math.isclose(m[c], f32(0.5 * a[c] + 0.5 * b[c]), rel_tol=1e-6, abs_tol=1e-7)


def test_pxr_reads_the_binary_layer_as_the_text_one(skirt):
    """The .usdc holds every field of the .usda with the same values (pxr's own export of both
    to text is identical), in the crate format pxr writes itself (0.8.0), a third of the size; and
    clothbake reads the layer pxr writes."""
    text, binary = skirt / "skirt.usda", skirt / "skirt.usdc"
    assert binary.read_bytes()[:11] == b"PXR-USDC\0\x08\0"
    a = Sdf.Layer.FindOrOpen(str(text)).ExportToString()
    b = Sdf.Layer.FindOrOpen(str(binary)).ExportToString()
    assert a == b
    assert binary.stat().st_size < 0.5 * text.stat().st_size
    # pxr's own crate writer, given the same layer, writes a file of about the same size.
    ours = binary.stat().st_size
    Sdf.Layer.FindOrOpen(str(text)).Export(str(skirt / "pxr.usdc"))
    assert abs((skirt / "pxr.usdc").stat().st_size - ours) < 0.05 * ours
    # clothbake reads pxr's binary layer back to the bake's very PC2.
    run("convert", skirt / "pxr.usdc", skirt / "from-pxr.pc2")
    assert (skirt / "from-pxr.pc2").read_bytes() == (skirt / "skirt.pc2").read_bytes()


def test_pxr_z_up_and_odd_garment_name(tmp_path):
    """up = "z" gives upAxis Z; a garment name that is not a USD identifier becomes a valid prim."""
    scene_dir = tmp_path / "scene"
    run("sample", "sheet-on-sphere", "-o", scene_dir, "--resolution", "4")
    toml = (scene_dir / "scene.toml").read_text()
    assert 'name = "sheet"' in toml
    toml = toml.replace('name = "sheet"', 'name = "3d sheet-v2"', 1)
    toml = toml.replace("[output]", '[output]\nup = "z"', 1)
    (scene_dir / "scene.toml").write_text(toml)
    out = tmp_path / "out"
    run("bake", scene_dir / "scene.toml", "-o", out, "--frames", "1..3", "--format", "usd,usdc,pc2")
    _, _, frames = read_pc2(out / "3d sheet-v2.pc2")
    for layer in ("3d sheet-v2.usda", "3d sheet-v2.usdc"):
        stage = Usd.Stage.Open(str(out / layer))
        assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
        prim = stage.GetDefaultPrim()
        assert prim.GetName() == "_3d_sheet_v2" and prim.GetTypeName() == "Mesh"
        pts = UsdGeom.Mesh(prim).GetPointsAttr()
        for k, frame in enumerate(frames):
            assert [tuple(p) for p in pts.Get(1.0 + k)] == frame, layer


def test_pxr_reads_non_finite_values_that_convert_carries(skirt, tmp_path):
    """A PC2 with a NaN and an infinity planted, converted to USD: pxr reads the same values (the
    layer writes them as nan/inf) and every other point unchanged."""
    import struct

    data = bytearray((skirt / "skirt.pc2").read_bytes())
    n = struct.unpack_from("<i", data, 16)[0]
    struct.pack_into("<f", data, 32 + 12 * n * 2 + 12 * 5 + 4, float("nan"))
    struct.pack_into("<f", data, 32 + 12 * n * 3 + 12 * 7, float("-inf"))
    (tmp_path / "bad.pc2").write_bytes(data)
    _, _, frames = read_pc2(tmp_path / "bad.pc2")
    for layer in ("bad.usda", "bad.usdc"):
        run("convert", tmp_path / "bad.pc2", tmp_path / layer, "--mesh", skirt / "skirt.0003.obj")
        stage = Usd.Stage.Open(str(tmp_path / layer))  # kept alive: its prims die with it
        pts = UsdGeom.Mesh(stage.GetDefaultPrim()).GetPointsAttr()
        for k, frame in enumerate(frames):
            got = [tuple(p) for p in pts.Get(3.0 + k)]
            for i, (g, w) in enumerate(zip(got, frame)):
                for c in range(3):
                    assert (math.isnan(g[c]) and math.isnan(w[c])) or g[c] == w[c], (layer, k, i, c)
        assert math.isnan(pts.Get(5.0)[5][1]) and pts.Get(6.0)[7][0] == float("-inf")
