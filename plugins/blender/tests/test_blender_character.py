"""Characters in real Blender (bpy 4.5, issue 12): a walking rig with root motion wearing a skirt (skinned
to the rig, or parented to the hips bone), a cape parented to a bone, a sheet whose pinned hem is driven
by a shape key.

Export side (no binary): the driver cache holds what Blender shows at every frame, the object matrix
is keyed, pins follow the driver. Bake side: what Blender DISPLAYS equals the simulated world positions
(the binary's own world-space output of the same scene.toml), pins stay on the animation, nothing goes
into the proxies, Free restores the modifier stack, and the CLI bakes the exported folder to the same
cache."""

import json
import os
import shutil
import subprocess
import tomllib

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from clothbake_testutil import (  # noqa: E402
    add_body_proxies,
    addon,
    bone_tail_matrix,
    clothbake_binary,
    evaluated_local,
    make_sheet,
    make_skirt,
    make_walker,
    new_scene,
    proxy_depth,
    read_pc2,
    world_of,
)


# Where the far walker starts (Blender world, m): x and y far beyond the 16 m from which the bake
# simulates in a frame shifted near the garments (src/bake_origin.rs).
FAR = (700.0, -500.0, 0.0)


def build_skirt(tmp_path, start=(0.0, 0.0, 0.0), distance=1.6):
    """Walker (`distance` m over 48 frames from `start`) with pelvis sphere + thigh capsules on its
    bones; a skirt skinned to it (Armature, then a Subdivision that must stay after the cache),
    pinned at the waist."""
    scene = new_scene(tmp_path)
    s = scene.clothbake
    s.frame_start, s.frame_end, s.substeps = 1, 48, 4
    rig = make_walker(scene, frames=(1, 48), start=start, distance=distance)
    proxies = add_body_proxies(scene, rig)
    skirt = make_skirt(scene, rig)
    sub = skirt.modifiers.new("Subdivision", "SUBSURF")
    sub.levels = sub.render_levels = 1
    skirt.modifiers["Armature"].show_in_editmode = True
    scene.frame_set(7)
    return scene, skirt, list(proxies.values())


def build_skirt_on_bone(tmp_path):
    """The same walk and proxies; the skirt PARENTED TO THE HIPS BONE (no Armature modifier)."""
    scene = new_scene(tmp_path)
    s = scene.clothbake
    s.frame_start, s.frame_end, s.substeps = 1, 48, 4
    rig = make_walker(scene, frames=(1, 48))
    proxies = add_body_proxies(scene, rig)
    skirt = make_skirt(scene, rig)
    skirt.modifiers.remove(skirt.modifiers["Armature"])
    scene.frame_set(1)
    rest = bone_tail_matrix(rig, "Hips")
    skirt.parent_type, skirt.parent_bone = "BONE", "Hips"
    skirt.matrix_parent_inverse = rest.inverted()
    scene.frame_set(1)
    return scene, skirt, list(proxies.values())


def build_cape(tmp_path):
    """Walker with a chest capsule and the pelvis sphere; a cape parented to the Chest bone
    (parent_type BONE) hanging behind the back, pinned along its top edge (the shoulders)."""
    scene = new_scene(tmp_path)
    s = scene.clothbake
    s.frame_start, s.frame_end, s.substeps = 1, 32, 4
    rig = make_walker(scene, frames=(1, 48))
    proxies = add_body_proxies(scene, rig, torso=True)
    for name in ("Thigh.L", "Thigh.R"):  # the cape ends above the knees: keep the scene small
        proxies[name].clothbake.role = "NONE"
    cape = make_sheet(scene, "Cape", width=0.44, height=0.6, cols=8, rows=10, origin=(0.0, 0.21, 1.45))
    scene.frame_set(1)
    rest = bone_tail_matrix(rig, "Chest")
    cape.parent, cape.parent_type, cape.parent_bone = rig, "BONE", "Chest"
    cape.matrix_parent_inverse = rest.inverted()
    cape.vertex_groups.new(name="shoulders").add(list(range(9)), 1.0, "REPLACE")
    cape.clothbake.pin_group = "shoulders"
    scene.frame_set(1)
    return scene, cape, [proxies[n] for n in ("Pelvis", "Torso")]


def build_shape_key(tmp_path):
    """A rotated, translated sheet pinned along its top edge (static) and its hem, the bottom edge,
    which a shape key "Lift" raises 0.35 m and swings 0.25 m towards a sphere (key value 0 at frame 1,
    1 at frame 20); a sphere in front of the sheet is in the way of the cloth but not of the pins."""
    import bmesh

    scene = new_scene(tmp_path)
    s = scene.clothbake
    s.frame_start, s.frame_end, s.substeps = 1, 24, 4
    sheet = make_sheet(scene, "Curtain", width=0.6, height=0.8, cols=8, rows=10, origin=(0.0, 0.0, 0.8))
    sheet.location, sheet.rotation_euler = (0.3, -0.2, 0.5), (0.0, 0.0, 0.5)
    top, hem = list(range(9)), list(range(10 * 9, 11 * 9))
    sheet.vertex_groups.new(name="pins").add(top + hem, 1.0, "REPLACE")
    sheet.clothbake.pin_group = "pins"
    sheet.shape_key_add(name="Basis")
    lift = sheet.shape_key_add(name="Lift")
    for i in hem:
        x, y, z = lift.data[i].co
        lift.data[i].co = (x, y + 0.25, z + 0.35)
    for frame, value in ((1, 0.0), (20, 1.0)):
        lift.value = value
        lift.keyframe_insert("value", frame=frame)
    mesh = bpy.data.meshes.new("Ball")
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=8, radius=0.12)
    bm.to_mesh(mesh)
    bm.free()
    ball = bpy.data.objects.new("Ball", mesh)
    scene.collection.objects.link(ball)
    ball.parent = sheet  # 3 cm in front of the sheet, where the lifted hem pulls the cloth against it
    ball.location = (0.0, 0.15, 0.6)
    ball.clothbake.role = "COLLIDER"
    scene.frame_set(1)
    return scene, sheet, [ball]


def build_skirt_far(tmp_path):
    """The skirt on the walker, 860 m from the world origin."""
    return build_skirt(tmp_path, start=FAR)


def build_skirt_dash(tmp_path):
    """The skirt on a walker that covers 40 m in the 48 frames (up to 20 m/s), so that the bake's
    frame has to follow it twice (src/bake_origin.rs: beyond 16 m)."""
    return build_skirt(tmp_path, distance=40.0)


# The kinds whose garment is skinned (an Armature modifier before the cache).
SKINNED = ("skirt", "skirt_far", "skirt_dash")

BUILDERS = {
    "skirt": build_skirt,
    "skirt_far": build_skirt_far,
    "skirt_dash": build_skirt_dash,
    "skirt_on_bone": build_skirt_on_bone,
    "cape": build_cape,
    "shape_key": build_shape_key,
}


def animated_world(obj):
    """World positions of what Blender shows for obj at the current frame, cache-topology only
    (generative modifiers after the cache switched off for the measurement)."""
    tail = [m for m in obj.modifiers if m.type == "SUBSURF" and m.show_viewport]
    for m in tail:
        m.show_viewport = False
    try:
        return world_of(obj, evaluated_local(obj))
    finally:
        for m in tail:
            m.show_viewport = True


def f32_resolution(values):
    """Half a unit in the last place of f32 at the largest magnitude in `values` (m): what rounding
    a position once to f32 may move it (30 µm at 860 m, 0.1 µm near the origin)."""
    return float(np.max(np.abs(values))) * 2.0**-24


def modifier_states(obj):
    return [(m.name, m.type, m.show_viewport, m.show_render) for m in obj.modifiers]


# -- export (no binary) ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_export_writes_what_blender_shows(tmp_path, kind):
    clothbake = addon()
    scene, garment, proxies = BUILDERS[kind](tmp_path)
    s = scene.clothbake
    before, frame = modifier_states(garment), scene.frame_current
    out = tmp_path / "export"
    out.mkdir()
    clothbake.export.export_scene(bpy.context, str(out))
    assert scene.frame_current == frame and modifier_states(garment) == before
    with open(out / "scene.toml", "rb") as f:
        doc = tomllib.load(f)
    (g,) = doc["garment"]
    assert (g["driver"], g["driver_space"], g["driver_frame_start"]) == (f"{garment.name}_driver.pc2", "world", s.frame_start)
    assert g["pin"]["follow"] == "cache" and "weights" not in g["pin"]
    assert doc["scene"]["preroll"] == 0 and doc["scene"]["preroll_from"] == "animation"
    start, driver = read_pc2(out / g["driver"])
    assert start == s.frame_start and driver.shape == (s.frame_end - s.frame_start + 1, len(garment.data.vertices), 3)
    keys = g.get("transform_keys")
    worst, worst_matrix, travel = 0.0, 0.0, 0.0
    for f in range(s.frame_start, s.frame_end + 1):
        scene.frame_set(f)
        shown = animated_world(garment)
        worst = max(worst, float(np.max(np.abs(shown - driver[f - s.frame_start]))))
        matrix = np.array(garment.matrix_world)
        exported = np.array(keys[f - s.frame_start]["matrix"] if keys else g["transform"]).reshape(4, 4).T
        worst_matrix = max(worst_matrix, float(np.max(np.abs(matrix - exported))))
        if keys:
            assert keys[f - s.frame_start]["frame"] == f
        pins = g["pin"]["vertices"]
        travel = max(travel, float(np.max(np.linalg.norm(driver[f - s.frame_start][pins] - driver[0][pins], axis=1))))
    print(f"{kind}: max |driver - shown| = {worst:.3g} m, |key - matrix_world| = {worst_matrix:.3g}, pins travel {travel:.3f} m")
    assert worst < 2e-6 + f32_resolution(driver) and worst_matrix < 1e-6
    assert travel > 0.3  # the pins really move with the animation
    assert (keys is None) == (kind == "shape_key")  # the sheet's own matrix does not move
    if kind != "shape_key":
        assert len(doc["collider"]) == len(proxies) and all("keys" in c for c in doc["collider"])


def test_generative_modifier_before_the_armature_is_refused(tmp_path):
    clothbake = addon()
    scene, skirt, _ = build_skirt(tmp_path)
    skirt.modifiers.move(list(skirt.modifiers).index(skirt.modifiers["Subdivision"]), 0)
    with pytest.raises(clothbake.export.ExportError, match=r"garment 'Skirt': modifier 'Subdivision' \(subsurf\) changes the vertex count"):
        clothbake.export.export_scene(bpy.context, str(tmp_path))
    assert [m.name for m in skirt.modifiers] == ["Subdivision", "Armature"] and all(m.show_viewport for m in skirt.modifiers)


@pytest.mark.parametrize("baked_from", ["ANIMATION", "REST"])
def test_preroll_is_exported_and_the_cache_starts_at_frame_start(tmp_path, monkeypatch, baked_from):
    clothbake = addon()
    scene, skirt, _ = build_skirt(tmp_path)
    s = scene.clothbake
    s.frame_start, s.frame_end, s.preroll, s.preroll_from = 5, 12, 4, "REST"
    out = tmp_path / "export"
    out.mkdir()
    clothbake.export.export_scene(bpy.context, str(out))
    with open(out / "scene.toml", "rb") as f:
        doc = tomllib.load(f)
    assert doc["scene"]["preroll"] == 4 and doc["scene"]["preroll_from"] == "rest" and doc["scene"]["frame_start"] == 5
    (g,) = doc["garment"]
    start, driver = read_pc2(out / g["driver"])
    assert (start, g["driver_frame_start"], driver.shape[0]) == (1, 1, 12)  # frames 1 .. 12
    assert [k["frame"] for k in g["transform_keys"]] == list(range(1, 13))
    for f in (1, 4, 5, 12):
        scene.frame_set(f)
        assert np.max(np.abs(animated_world(skirt) - driver[f - 1])) < 2e-6
    pelvis = next(c for c in doc["collider"] if c["type"] == "sphere")
    assert [k["frame"] for k in pelvis["keys"]] == list(range(1, 13))
    # rest: the base shape is the pelvis with the rig in rest position at frame_start
    scene.frame_set(5)
    rig = bpy.data.objects["Walker"]
    rig.data.pose_position = "REST"
    scene.frame_set(5)
    x, y, z = bpy.data.objects["Pelvis"].matrix_world.translation
    rig.data.pose_position = "POSE"
    assert pelvis["center"] == pytest.approx([x, z, -y], abs=1e-6)

    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    s.preroll_from = baked_from
    assert bpy.ops.clothbake.bake() == {"FINISHED"}
    mod = skirt.modifiers["ClothBake"]
    start, cache = read_pc2(bpy.path.abspath(mod.filepath))
    assert (start, mod.frame_start, cache.shape[0]) == (5, 5, 8)
    scene.frame_set(5)
    shown = animated_world(skirt)
    waist, hem = list(range(24)), list(range(6 * 24, 7 * 24))
    assert np.max(np.linalg.norm(shown[waist] - driver[4][waist], axis=1)) < 1e-3
    settled = float(np.max(np.linalg.norm(shown[hem] - driver[4][hem], axis=1)))
    print(f"pre-roll from {baked_from.lower()}: at frame_start the hem is {settled * 1000:.1f} mm off the animated shape")
    assert settled > 1e-3  # it was simulated during the 4 pre-roll frames (without: it starts ON the shape, 1e-5)


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_a_cache_in_the_evaluated_local_space_plays_back_in_world_exactly(tmp_path, kind):
    """No binary: a cache made from the exported driver (world) and transform keys, as the binary writes
    output.space = "local", shows in Blender at the driver's world positions; the old placement (first
    in the stack, deformers on) shows it moved a second time."""
    clothbake = addon()
    cm = clothbake.cache_modifier
    scene, garment, _ = BUILDERS[kind](tmp_path)
    s = scene.clothbake
    user_stack = modifier_states(garment)
    out = tmp_path / "export"
    out.mkdir()
    clothbake.export.export_scene(bpy.context, str(out))
    with open(out / "scene.toml", "rb") as f:
        (g,) = tomllib.load(f)["garment"]
    _, driver = read_pc2(out / g["driver"])
    local = np.empty_like(driver)
    for i in range(len(driver)):
        m = np.array(g["transform_keys"][i]["matrix"] if "transform_keys" in g else g["transform"], dtype=np.float64).reshape(4, 4).T
        local[i] = (driver[i].astype(np.float64) - m[:3, 3]) @ np.linalg.inv(m[:3, :3]).T
    path = str(tmp_path / "local.pc2")
    clothbake.export.write_pc2(path, local, s.frame_start)
    cm.apply_cache(garment, path, s.frame_start)
    cm.apply_cache(garment, path, s.frame_start)  # a re-bake keeps the user's state, not the disabled one
    worst = 0.0
    for f in range(s.frame_start, s.frame_end + 1, 3):
        scene.frame_set(f)
        worst = max(worst, float(np.max(np.abs(animated_world(garment) - driver[f - s.frame_start]))))
    # A re-bake while a (here: shifted) cache is shown exports the animation again, not the cache.
    shifted = str(tmp_path / "shifted.pc2")
    clothbake.export.write_pc2(shifted, local + np.float32(0.1), s.frame_start)
    cm.apply_cache(garment, shifted, s.frame_start)
    again = tmp_path / "again"
    again.mkdir()
    shown_stack = modifier_states(garment)
    clothbake.export.export_scene(bpy.context, str(again))
    assert modifier_states(garment) == shown_stack
    assert (again / g["driver"]).read_bytes() == (out / g["driver"]).read_bytes()
    cm.apply_cache(garment, path, s.frame_start)
    first_in_stack = 0.0
    if kind in SKINNED:  # as before issue 12: the cache first, the Armature on top
        cm.restore_modifiers(garment)
        garment.modifiers.move(list(garment.modifiers).index(cm.find_modifier(garment)), 0)
        for f in range(s.frame_start, s.frame_end + 1, 3):
            scene.frame_set(f)
            first_in_stack = max(first_in_stack, float(np.max(np.abs(animated_world(garment) - driver[f - s.frame_start]))))
    cm.remove_cache(garment)
    print(f"{kind}: cache after the deformers: max |shown - driver| = {worst:.3g} m; first in the stack: {first_in_stack:.3f} m")
    assert worst <= 1e-5
    assert modifier_states(garment) == user_stack and cm.SAVED_PROP not in garment
    if kind in SKINNED:  # the Armature adds the hips' bob and turn (2.5 cm, 0.12 rad at 0.2-0.3 m) again
        assert first_in_stack > 0.02


# -- bake (binary) --------------------------------------------------------------------------------


def run_cli(binary, scene_toml, out_dir, space):
    """Bake an exported scene.toml outside Blender (output space switched to `space`); its report."""
    folder = os.path.dirname(scene_toml)
    text = open(scene_toml, encoding="utf-8").read()
    assert 'space = "local"' in text
    copy = os.path.join(folder, f"cli_{space}.toml")
    with open(copy, "w", encoding="utf-8") as f:
        f.write(text.replace('space = "local"', f'space = "{space}"'))
    report = os.path.join(str(out_dir), "report.json")
    done = subprocess.run([binary, "bake", copy, "-o", str(out_dir), "--format", "pc2", "--report", report],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with open(report, encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_character_bake_plays_back_exactly_and_stays_out_of_the_proxies(tmp_path, monkeypatch, kind):
    binary = clothbake_binary()
    monkeypatch.setenv("CLOTHBAKE_BIN", binary)
    clothbake = addon()
    scene, garment, proxies = BUILDERS[kind](tmp_path)
    s = scene.clothbake
    user_stack = modifier_states(garment)
    assert bpy.ops.clothbake.bake() == {"FINISHED"}

    # The cache sits after the last deformer, the deformers before it are off, generative ones follow.
    names = [m.name for m in garment.modifiers]
    if kind in SKINNED:
        assert names == ["Armature", "ClothBake", "Subdivision"]
        arm = garment.modifiers["Armature"]
        assert not arm.show_viewport and not arm.show_render and garment.modifiers["Subdivision"].show_viewport
    else:
        assert names == ["ClothBake"]
    mod = garment.modifiers["ClothBake"]
    cache_path = bpy.path.abspath(mod.filepath)
    bake_dir = os.path.dirname(os.path.dirname(cache_path))
    start, cache = read_pc2(cache_path)
    frames = s.frame_end - s.frame_start + 1
    assert start == s.frame_start and cache.shape == (frames, len(garment.data.vertices), 3)

    # The same folder through the CLI: the same cache, and the simulated WORLD positions.
    run_cli(binary, os.path.join(bake_dir, "scene.toml"), tmp_path / "cli_local", "local")
    _, cli_local = read_pc2(tmp_path / "cli_local" / os.path.basename(cache_path))
    assert np.array_equal(cli_local, cache)
    report = run_cli(binary, os.path.join(bake_dir, "scene.toml"), tmp_path / "cli_world", "world")
    # Far from the world origin the bake simulates near the skirt: Blender's (700, -500) is the
    # scene's (700, 500) on x and z (Y up), and the skirt's height is left alone.
    expected_origin = [FAR[0], 0.0, -FAR[1]] if kind == "skirt_far" else [0.0, 0.0, 0.0]
    assert report["simulation_origin"] == expected_origin
    # The dash: the frame follows the skirt along the walk (Blender's -Y is the scene's +Z).
    moves = [m["origin"] for m in report["simulation_origin_moves"]]
    if kind == "skirt_dash":
        assert len(moves) >= 2 and all(o[0] == 0.0 and o[1] == 0.0 and o[2] >= 16.0 for o in moves), moves
    else:
        assert moves == []
    _, simulated = read_pc2(tmp_path / "cli_world" / os.path.basename(cache_path))  # world, Blender axes (up = "z")

    thickness = garment.clothbake.thickness
    fits = [clothbake.export.ColliderFit(p) for p in proxies]
    shown_err, deepest, contact = 0.0, -np.inf, np.inf
    gaps = {p.name: np.inf for p in proxies}
    displayed = []
    for f in range(s.frame_start, s.frame_end + 1):
        scene.frame_set(f)
        shown = animated_world(garment)
        displayed.append(shown)
        shown_err = max(shown_err, float(np.max(np.abs(shown - simulated[f - s.frame_start]))))
        for proxy, fit in zip(proxies, fits):
            depth = proxy_depth(shown, fit.world(proxy.matrix_world))
            deepest = max(deepest, float(np.max(depth)))
            contact = min(contact, float(-np.max(depth)))
            gaps[proxy.name] = min(gaps[proxy.name], float(-np.max(depth)))
    assert bpy.ops.clothbake.free() == {"FINISHED"}
    assert modifier_states(garment) == user_stack

    scene.frame_set(s.frame_start)  # no pre-roll: the cloth starts from what Blender shows at frame_start
    start_err = float(np.max(np.abs(displayed[0] - animated_world(garment))))
    resolution = f32_resolution(simulated)
    assert start_err <= 1e-5 + resolution, f"frame {s.frame_start}: the cache starts {start_err} m off the animated shape"

    pins = [v.index for v in garment.data.vertices if any(g.group == garment.vertex_groups[garment.clothbake.pin_group].index for g in v.groups)]
    pin_err, moved = 0.0, 0.0
    for f in range(s.frame_start, s.frame_end + 1):
        scene.frame_set(f)
        animated = animated_world(garment)
        pin_err = max(pin_err, float(np.max(np.linalg.norm(displayed[f - s.frame_start][pins] - animated[pins], axis=1))))
        free = np.setdiff1d(np.arange(len(animated)), pins)
        moved = max(moved, float(np.max(np.linalg.norm(displayed[f - s.frame_start][free] - animated[free], axis=1))))
    print(f"{kind}: |displayed - simulated| = {shown_err:.3g} m, pins off the animation {pin_err * 1000:.3f} mm, "
          f"deepest in a proxy {deepest * 1000:.3f} mm (thickness {thickness * 1000:.1f} mm), closest gap {contact * 1000:.2f} mm, "
          f"cloth off the animation up to {moved:.3f} m; closest per proxy (mm): "
          + ", ".join(f"{n} {g * 1000:.1f}" for n, g in gaps.items()))
    assert shown_err <= 1e-5 + resolution
    assert pin_err <= 1e-3
    assert deepest <= 0.1 * thickness
    assert contact < 2.0 * thickness  # the cloth does reach a proxy
    if kind.startswith("skirt"):  # ... both swinging legs, in fact
        assert gaps["Thigh.L"] < 2.0 * thickness and gaps["Thigh.R"] < 2.0 * thickness
    assert moved > 0.02  # the free cloth is simulated, not a copy of the animation


def test_integrator_setting_is_exported_and_baked(tmp_path, monkeypatch):
    """Scene › Integrator goes into [scene] integrator; every method bakes finite output, and each
    differs from backward Euler."""
    clothbake = addon()
    scene, skirt, _ = build_skirt(tmp_path)
    s = scene.clothbake
    s.frame_start, s.frame_end = 1, 8
    assert s.integrator == "BW"
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    caches = {}
    for method in ("BW", "BDF2", "KANG", "VERLET"):
        s.integrator = method
        # Kang's approximation needs about 4x the substeps on woven cloth (it tears at 5).
        s.substeps = 20 if method == "KANG" else 5
        out = tmp_path / f"export-{method}"
        out.mkdir()
        clothbake.export.export_scene(bpy.context, str(out))
        with open(out / "scene.toml", "rb") as f:
            assert tomllib.load(f)["scene"]["integrator"] == method.lower()
        assert bpy.ops.clothbake.bake() == {"FINISHED"}
        _, caches[method] = read_pc2(bpy.path.abspath(skirt.modifiers["ClothBake"].filepath))
    for method in ("BDF2", "KANG", "VERLET"):
        assert caches[method].shape == (8, len(skirt.data.vertices), 3)
        assert np.all(np.isfinite(caches[method])), method
        assert np.max(np.abs(caches["BW"][-1] - caches[method][-1])) > 1e-6, method


def test_aimex_and_projected_damping_are_exported_and_baked(tmp_path, monkeypatch):
    """Scene › Integrator "Adaptive IMEX" and Projected Damping go into [scene]; the bake runs."""
    clothbake = addon()
    scene, skirt, _ = build_skirt(tmp_path)
    s = scene.clothbake
    s.frame_start, s.frame_end = 1, 4
    assert not s.damping_projection
    s.integrator, s.damping_projection = "AIMEX", True
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    out = tmp_path / "export"
    out.mkdir()
    clothbake.export.export_scene(bpy.context, str(out))
    with open(out / "scene.toml", "rb") as f:
        written = tomllib.load(f)["scene"]
    assert written["integrator"] == "aimex" and written["damping_projection"] is True
    assert bpy.ops.clothbake.bake() == {"FINISHED"}
    _, cache = read_pc2(bpy.path.abspath(skirt.modifiers["ClothBake"].filepath))
    assert cache.shape == (4, len(skirt.data.vertices), 3) and np.all(np.isfinite(cache))


@pytest.mark.parametrize("kind", ["skirt_dash", "skirt_on_bone"])
def test_usd_option_on_a_walking_character_shows_the_pc2_of_the_same_bake(tmp_path, monkeypatch, kind):
    """*Load As: USD* on a walker: the skirt skinned to a rig running 16 m with root motion (its
    Armature switched off, the Subdivision kept after the cache) and the skirt parented to the hips
    bone. Blender's Mesh Sequence Cache reads the bake's binary layer (``.usdc``) and shows, at every
    frame, the object-local positions of the PC2 the same bake wrote, exactly; the garment keeps its
    polygons and UVs."""
    monkeypatch.setenv("CLOTHBAKE_BIN", clothbake_binary())
    addon()
    scene, garment, _proxies = BUILDERS[kind](tmp_path)
    s = scene.clothbake
    s.cache_format = "USD"
    faces = [tuple(p.vertices) for p in garment.data.polygons]
    uv_layers = [uv.name for uv in garment.data.uv_layers]
    assert bpy.ops.clothbake.bake() == {"FINISHED"}, s.status
    names = [m.name for m in garment.modifiers]
    assert names == (["Armature", "ClothBake", "Subdivision"] if kind in SKINNED else ["ClothBake"])
    mod = garment.modifiers["ClothBake"]
    assert mod.type == "MESH_SEQUENCE_CACHE" and mod.read_data == {"VERT"}
    layer = bpy.path.abspath(mod.cache_file.filepath)
    binary = layer.replace(".blender.usda", ".usdc")
    with open(binary, "rb") as f:
        assert f.read(8) == b"PXR-USDC"
    start, cache = read_pc2(layer.replace(".blender.usda", ".pc2"))
    assert start == s.frame_start and cache.shape[0] == s.frame_end - s.frame_start + 1
    tail = [m for m in garment.modifiers if m.type == "SUBSURF"]
    for m in tail:
        m.show_viewport = False
    for f in range(s.frame_start, s.frame_end + 1):
        scene.frame_set(f)
        assert np.array_equal(evaluated_local(garment), cache[f - s.frame_start]), f"frame {f}"
    for m in tail:
        m.show_viewport = True
    ev = garment.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    if not tail:
        assert [tuple(p.vertices) for p in ev.polygons] == faces
    assert [uv.name for uv in ev.uv_layers] == uv_layers
    assert np.max(np.linalg.norm(cache[-1] - cache[0], axis=1)) > 0.02  # the cloth moved in its own space
