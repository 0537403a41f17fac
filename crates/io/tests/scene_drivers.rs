//! Driver caches, keyed transforms and pre-roll: parsing, every error with its field, and what a
//! loaded scene evaluates (initial and rest shapes, pin targets, colliders at pre-roll frames).

use std::path::Path;

use clothbake_io::{
    load_scene, DriverSpace, Follow, MddWriter, Pc2Writer, PrerollFrom, SceneFile, Shape,
};
use glam::{Mat4, Quat, Vec3};

const PRESETS: &[&str] = &["cotton"];

fn parse(text: &str) -> Result<SceneFile, String> {
    SceneFile::parse(Path::new("shots/scene.toml"), text, PRESETS).map_err(|e| e.to_string())
}

const GARMENT: &str = "[[garment]]\nname = \"s\"\nmesh = \"s.obj\"\n";

fn identity() -> String {
    format!("{:?}", Mat4::IDENTITY.to_cols_array())
}

#[test]
fn defaults_are_documented() {
    let s = parse(GARMENT).unwrap();
    assert_eq!(s.settings.preroll, 0);
    assert_eq!(s.settings.preroll_from, PrerollFrom::Animation);
    let g = &s.garments[0];
    assert_eq!(g.driver, None);
    assert_eq!(g.driver_frame_start, None);
    assert_eq!(g.driver_space, DriverSpace::World);
    assert!(g.transform_keys.is_none());
}

#[test]
fn new_keys_parse_and_resolve() {
    let text = format!(
        "[scene]\npreroll = 10\npreroll_from = \"rest\"\n{GARMENT}driver = \"anim/s.pc2\"\n\
         driver_frame_start = -9\ndriver_space = \"local\"\n\
         transform_keys = [{{ frame = 1, matrix = {m} }}, {{ frame = 2.5, matrix = {m} }}]\n\
         [garment.pin]\nvertices = [0]\nfollow = \"cache\"\n",
        m = identity()
    );
    let s = parse(&text).unwrap();
    assert_eq!(s.settings.preroll, 10);
    assert_eq!(s.settings.preroll_from, PrerollFrom::Rest);
    let g = &s.garments[0];
    assert_eq!(g.driver.as_deref(), Some(Path::new("shots/anim/s.pc2")));
    assert_eq!(g.driver_frame_start, Some(-9));
    assert_eq!(g.driver_space, DriverSpace::Local);
    let keys = g.transform_keys.as_ref().unwrap();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[1].frame, 2.5);
    assert_eq!(g.pin.as_ref().unwrap().follow, Follow::Cache);
    // "node" is accepted for OBJ garments now.
    let node = parse(&format!(
        "{GARMENT}[garment.pin]\nvertices = [0]\nfollow = \"node\"\n"
    ));
    assert!(node.is_ok(), "{node:?}");
}

#[test]
fn bad_values_name_the_field() {
    let m = identity();
    let singular = format!("{:?}", [0.0f32; 16]);
    let cases: Vec<(String, &str)> = vec![
        ("[scene]\npreroll = -1\n".into(), "scene.preroll"),
        ("[scene]\npreroll_from = \"start\"\n".into(), "scene.preroll_from"),
        (format!("{GARMENT}driver = \"s.abc\"\n"), "garment[0].driver: \"s.abc\": expected a .pc2 or .mdd file"),
        (format!("{GARMENT}driver_frame_start = 3\n"), "garment[0].driver_frame_start: only applies with `driver`"),
        (format!("{GARMENT}driver_space = \"local\"\n"), "garment[0].driver_space: only applies with `driver`"),
        (format!("{GARMENT}driver_space = \"object\"\n"), "garment[0].driver_space"),
        (
            format!("{GARMENT}[garment.pin]\nvertices = [0]\nfollow = \"cache\"\n"),
            "garment[0].pin.follow: \"cache\" needs the garment's `driver`",
        ),
        (
            format!("{GARMENT}transform = {m}\ntransform_keys = [{{ frame = 1, matrix = {m} }}]\n"),
            "garment[0].transform_keys: give either `transform` (static) or `transform_keys` (keyed), not both",
        ),
        (
            format!("[[garment]]\nname = \"s\"\nmesh = \"s.glb\"\ntransform_keys = [{{ frame = 1, matrix = {m} }}]\n"),
            "garment[0].transform_keys: only applies to OBJ meshes",
        ),
        (format!("{GARMENT}transform_keys = []\n"), "garment[0].transform_keys: is empty"),
        (
            format!("{GARMENT}transform_keys = [{{ frame = 3, matrix = {m} }}, {{ frame = 3, matrix = {m} }}]\n"),
            "garment[0].transform_keys[1].frame: 3 is not after the previous key's frame 3",
        ),
        (
            format!("{GARMENT}transform_keys = [{{ frame = 1, matrix = {singular} }}]\n"),
            "garment[0].transform_keys[0].matrix: matrix is not invertible",
        ),
        (
            format!(
                "{GARMENT}transform_keys = [{{ frame = 1, matrix = {} }}]\n",
                m.replacen("1.0", "nan", 1)
            ),
            "garment[0].transform_keys[0].matrix[0]: must be a finite number",
        ),
        (
            format!("{GARMENT}transform_keys = [{{ frame = 1, matrix = {m}, scale = 2 }}]\n"),
            "unknown field `scale`",
        ),
        (
            format!("{GARMENT}transform_keys = [{{ frame = 1, matrix = [1.0, 0.0] }}]\n"),
            "garment[0].transform_keys[0].matrix",
        ),
    ];
    for (text, want) in &cases {
        let e = parse(text).expect_err(text);
        assert!(e.starts_with("shots/scene.toml: "), "{e}");
        assert!(e.contains(want), "for {text:?}: got {e:?}, want {want:?}");
    }
}

/// A 3 × 3 vertical sheet (Y up) of side 1 m with its top row at y = 2.
fn sheet_obj() -> (String, Vec<Vec3>) {
    let mut text = String::new();
    let mut p = Vec::new();
    for r in 0..3 {
        for c in 0..3 {
            let v = Vec3::new(c as f32 * 0.5, 2.0 - r as f32 * 0.5, 0.0);
            text.push_str(&format!("v {} {} {}\n", v.x, v.y, v.z));
            p.push(v);
        }
    }
    for r in 0..2 {
        for c in 0..2 {
            let a = r * 3 + c + 1;
            text.push_str(&format!("f {} {} {} {}\n", a, a + 1, a + 4, a + 3));
        }
    }
    (text, p)
}

fn write_pc2(path: &Path, frames: &[Vec<Vec3>]) {
    let mut w = Pc2Writer::create(path, frames[0].len(), 0.0, 1.0).unwrap();
    for f in frames {
        w.write_frame(f).unwrap();
    }
    w.finish().unwrap();
}

fn write_mdd(path: &Path, frames: &[Vec<Vec3>]) {
    let times: Vec<f32> = (0..frames.len()).map(|k| k as f32).collect();
    let mut w = MddWriter::create(path, frames[0].len(), &times).unwrap();
    for f in frames {
        w.write_frame(f).unwrap();
    }
    w.finish().unwrap();
}

/// A folder with `s.obj` and `scene.toml` = frames 1..=5 plus `scene_extra`, `garment_extra` and a
/// top-row pin following `follow`.
fn folder(scene_extra: &str, garment_extra: &str, follow: &str) -> (tempfile::TempDir, Vec<Vec3>) {
    let d = tempfile::tempdir().unwrap();
    let (obj, rest) = sheet_obj();
    std::fs::write(d.path().join("s.obj"), obj).unwrap();
    std::fs::write(
        d.path().join("scene.toml"),
        format!(
            "[scene]\nframe_start = 1\nframe_end = 5\n{scene_extra}\n[[garment]]\nname = \"s\"\n\
             mesh = \"s.obj\"\n{garment_extra}\n[garment.pin]\nvertices = [0, 1, 2]\n\
             follow = \"{follow}\"\n"
        ),
    )
    .unwrap();
    (d, rest)
}

fn load_err(d: &Path) -> String {
    match load_scene(&d.join("scene.toml"), PRESETS) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

fn shifted(rest: &[Vec3], by: Vec3) -> Vec<Vec3> {
    rest.iter().map(|&p| p + by).collect()
}

#[test]
fn driver_load_errors_name_file_field_sample_and_point() {
    // Wrong point count.
    let (d, _) = folder("", "driver = \"a.pc2\"", "cache");
    write_pc2(&d.path().join("a.pc2"), &vec![vec![Vec3::ZERO; 4]; 5]);
    let e = load_err(d.path());
    assert!(e.contains("scene.toml: garment[0].driver: "), "{e}");
    assert!(
        e.contains("4 points per sample, the garment's mesh has 9 vertices"),
        "{e}"
    );

    // Too few samples: frames 1..4 given, 1..5 needed.
    let (d, rest) = folder("", "driver = \"a.pc2\"", "cache");
    write_pc2(&d.path().join("a.pc2"), &vec![rest.clone(); 4]);
    let e = load_err(d.path());
    assert!(e.contains("garment[0].driver"), "{e}");
    assert!(e.contains("samples 0..3 = frames 1..4"), "{e}");
    assert!(
        e.contains("evaluates frames 1..5: 5 sample(s) needed"),
        "{e}"
    );

    // Starting too late (driver_frame_start = 2).
    let (d, rest) = folder("", "driver = \"a.pc2\"\ndriver_frame_start = 2", "cache");
    write_pc2(&d.path().join("a.pc2"), &vec![rest.clone(); 10]);
    let e = load_err(d.path());
    assert!(e.contains("frames 2..11"), "{e}");

    // With pre-roll the first simulated frame is needed too.
    let (d, rest) = folder(
        "preroll = 3",
        "driver = \"a.pc2\"\ndriver_frame_start = 1",
        "cache",
    );
    write_pc2(&d.path().join("a.pc2"), &vec![rest.clone(); 5]);
    let e = load_err(d.path());
    assert!(e.contains("evaluates frames -2..5"), "{e}");

    // Non-finite value in an MDD: sample and point named.
    let (d, rest) = folder("", "driver = \"a.mdd\"", "cache");
    let mut frames = vec![rest.clone(); 5];
    frames[3][6].z = f32::INFINITY;
    write_mdd(&d.path().join("a.mdd"), &frames);
    let e = load_err(d.path());
    assert!(e.contains("garment[0].driver"), "{e}");
    assert!(
        e.contains("sample 3 (frame 4), point 6 is not finite"),
        "{e}"
    );

    // Not a PC2 at all.
    let (d, _) = folder("", "driver = \"a.pc2\"", "cache");
    std::fs::write(d.path().join("a.pc2"), b"hello").unwrap();
    let e = load_err(d.path());
    assert!(e.contains("garment[0].driver"), "{e}");
    assert!(e.contains("truncated"), "{e}");

    // Missing.
    let (d, _) = folder("", "driver = \"a.pc2\"", "cache");
    let e = load_err(d.path());
    assert!(e.contains("garment[0].driver: file not found"), "{e}");
}

#[test]
fn a_driven_garment_starts_from_the_driver_and_rests_as_the_mesh() {
    let (d, rest) = folder("", "driver = \"a.mdd\"", "cache");
    // Frame k (1-based): the sheet moved k × 0.1 m along +X, its bottom row 0.2 m lower.
    let frames: Vec<Vec<Vec3>> = (1..=5)
        .map(|k| {
            let mut f = shifted(&rest, Vec3::X * (0.1 * k as f32));
            for p in &mut f[6..] {
                p.y -= 0.2;
            }
            f
        })
        .collect();
    write_mdd(&d.path().join("a.mdd"), &frames);
    let s = load_scene(&d.path().join("scene.toml"), PRESETS).unwrap();
    let g = &s.garments[0];
    let sim_to_source = &g.welded.sim_to_source;
    for (v, &src) in sim_to_source.iter().enumerate() {
        assert_eq!(g.positions[v], frames[0][src as usize]);
        assert_eq!(g.rest_shape()[v], rest[src as usize]);
    }
    // Pin targets: linear between samples (frame 2.25 = a quarter from sample 1 to 2).
    let mut t = Vec::new();
    g.pin_targets(2.25, &mut t);
    for (k, &v) in g.pins.vertices.iter().enumerate() {
        let src = sim_to_source[v as usize] as usize;
        let want = frames[1][src].lerp(frames[2][src], 0.25);
        assert!(t[k].distance(want) < 1e-6, "{} vs {want}", t[k]);
    }
}

#[test]
fn local_driver_rides_the_keyed_transform() {
    let key = |f: f32| {
        Mat4::from_rotation_translation(Quat::from_rotation_y(0.3 * f), Vec3::new(f, 0.0, 0.0))
    };
    let keys: Vec<String> = (1..=5)
        .map(|f| {
            format!(
                "{{ frame = {f}, matrix = {:?} }}",
                key(f as f32).to_cols_array()
            )
        })
        .collect();
    let (d, rest) = folder(
        "",
        &format!(
            "driver = \"a.pc2\"\ndriver_space = \"local\"\ntransform_keys = [{}]",
            keys.join(", ")
        ),
        "cache",
    );
    write_pc2(&d.path().join("a.pc2"), &vec![rest.clone(); 5]);
    let s = load_scene(&d.path().join("scene.toml"), PRESETS).unwrap();
    let g = &s.garments[0];
    assert_eq!(g.local_to_world(3.0), key(3.0));
    let mut t = Vec::new();
    g.pin_targets(4.0, &mut t);
    for (k, &v) in g.pins.vertices.iter().enumerate() {
        let src = g.welded.sim_to_source[v as usize] as usize;
        let want = key(4.0).transform_point3(rest[src]);
        assert!(t[k].distance(want) < 1e-5, "{} vs {want}", t[k]);
    }
    // Between keys: decomposed interpolation (rotation 0.3 × 3.5 about Y, x = 3.5).
    let m = g.local_to_world(3.5);
    let (_, r, tr) = m.to_scale_rotation_translation();
    assert!(r.angle_between(Quat::from_rotation_y(1.05)) < 1e-5);
    assert!((tr - Vec3::new(3.5, 0.0, 0.0)).length() < 1e-5);
}

#[test]
fn preroll_from_rest_eases_pins_and_colliders() {
    let (d, rest) = folder(
        "preroll = 4\npreroll_from = \"rest\"",
        "driver = \"a.pc2\"\ndriver_frame_start = 1",
        "cache",
    );
    let away = shifted(&rest, Vec3::new(1.0, 0.0, 0.0));
    write_pc2(&d.path().join("a.pc2"), &vec![away.clone(); 5]);
    let toml = std::fs::read_to_string(d.path().join("scene.toml")).unwrap();
    std::fs::write(
        d.path().join("scene.toml"),
        format!(
            "{toml}\n[[collider]]\ntype = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 0.5\n\
             [[collider.keys]]\nframe = 1\ncenter = [2.0, 0.0, 0.0]\n"
        ),
    )
    .unwrap();
    let mut s = load_scene(&d.path().join("scene.toml"), PRESETS).unwrap();
    assert_eq!(s.first_simulated_frame(), -3);
    let g = &s.garments[0];
    // The garment starts from its rest (mesh) shape; no separate rest shape.
    assert!(g.rest_positions.is_none());
    for (v, &src) in g.welded.sim_to_source.iter().enumerate() {
        assert_eq!(g.positions[v], rest[src as usize]);
    }
    // Pins: x offset smoothstep((f + 3) / 4) from rest to the driver at frame 1.
    let mut t = Vec::new();
    let mut offsets = Vec::new();
    for f in -3..=1 {
        g.pin_targets(f as f32, &mut t);
        let src = g.welded.sim_to_source[g.pins.vertices[0] as usize] as usize;
        offsets.push(t[0].x - rest[src].x);
    }
    let want = [0.0, 0.15625, 0.5, 0.84375, 1.0];
    for (o, w) in offsets.iter().zip(want) {
        assert!((o - w).abs() < 1e-6, "{offsets:?}");
    }
    // Colliders: from the base shape (centre x = 0) to the frame-1 key (x = 2).
    let mut shapes = Vec::new();
    let mut xs = Vec::new();
    for f in -3..=1 {
        s.colliders.shapes_at(f as f32, &mut shapes);
        match shapes[0] {
            Shape::Sphere { center, .. } => xs.push(center.x),
            _ => unreachable!(),
        }
    }
    for (x, w) in xs.iter().zip(want) {
        assert!((x - 2.0 * w).abs() < 1e-6, "{xs:?}");
    }
}

#[test]
fn preroll_from_animation_starts_at_the_first_simulated_frame() {
    let (d, rest) = folder("preroll = 2", "driver = \"a.pc2\"", "cache");
    // Default driver_frame_start = the first simulated frame, −1: samples −1..5.
    let frames: Vec<Vec<Vec3>> = (0..7).map(|k| shifted(&rest, Vec3::Z * k as f32)).collect();
    write_pc2(&d.path().join("a.pc2"), &frames);
    let s = load_scene(&d.path().join("scene.toml"), PRESETS).unwrap();
    assert_eq!(s.first_simulated_frame(), -1);
    assert_eq!(s.num_frames(), 5);
    let g = &s.garments[0];
    assert_eq!(g.driver().unwrap().frame_start, -1);
    for (v, &src) in g.welded.sim_to_source.iter().enumerate() {
        assert_eq!(g.positions[v], frames[0][src as usize]);
    }
    let mut t = Vec::new();
    g.pin_targets(1.0, &mut t);
    assert!((t[0].z - 2.0).abs() < 1e-6);
}

const FIGURE: &str = "/work/shared/third_party/gltf/RiggedFigure.gltf";

/// A scene with RiggedFigure's skinned mesh as the garment (pins following its skin, vertices
/// 0..20) and the figure's `auto` proxies, with `preroll` lines `extra`.
fn figure_scene(extra: &str) -> clothbake_io::LoadedScene {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("scene.toml");
    std::fs::write(
        &path,
        format!(
            "[scene]\nframe_start = 1\nframe_end = 12\ntime_offset = -0.041666668\n{extra}\n\
             [[garment]]\nname = \"body\"\nmesh = \"{FIGURE}\"\n[garment.pin]\n\
             vertices = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]\n\
             follow = \"skin\"\n[[collider]]\ntype = \"gltf\"\nfile = \"{FIGURE}\"\nproxies = \"auto\"\n"
        ),
    )
    .unwrap();
    load_scene(&path, PRESETS).unwrap()
}

fn centre(s: &Shape) -> Vec3 {
    match *s {
        Shape::Sphere { center, .. } => center,
        Shape::Capsule { a, b, .. } => (a + b) * 0.5,
        Shape::Plane { point, .. } => point,
    }
}

/// `preroll_from = "rest"` on a glTF character: the skinned garment starts on the rig without
/// animation, pins and proxies ease from that pose to the animation's frame_start value, which
/// they reach exactly; `"animation"` starts from the animation at the first simulated frame.
#[test]
fn gltf_rig_eases_from_its_rest_pose() {
    let mut rest = figure_scene("preroll = 6\npreroll_from = \"rest\"");
    let mut anim = figure_scene("preroll = 6");
    let mut plain = figure_scene("");
    let (gr, ga, gp) = (&rest.garments[0], &anim.garments[0], &plain.garments[0]);
    // The rest pose is not the walk's pose at frame 1.
    let differs = gr
        .positions
        .iter()
        .zip(&gp.positions)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0, f32::max);
    assert!(
        differs > 0.01,
        "rest pose equals the walk's first frame ({differs} m)"
    );
    // Animation mode at the first simulated frame (−5): the walk holds its first key before time 0,
    // so the pose equals frame 1's.
    for (a, b) in ga.positions.iter().zip(&gp.positions) {
        assert!(a.distance(*b) < 1e-6);
    }
    let (mut t_rest, mut t_plain) = (Vec::new(), Vec::new());
    // Pins start on the garment's rest shape and reach the skinned targets at frame_start.
    gr.pin_targets(-5.0, &mut t_rest);
    for (k, &v) in gr.pins.vertices.iter().enumerate() {
        assert!(t_rest[k].distance(gr.positions[v as usize]) < 1e-6);
    }
    gr.pin_targets(1.0, &mut t_rest);
    gp.pin_targets(1.0, &mut t_plain);
    assert_eq!(t_rest, t_plain);
    // Half-way (frame −2, smoothstep(0.5) = 0.5): the mid-point.
    gr.pin_targets(-2.0, &mut t_rest);
    for (k, &v) in gr.pins.vertices.iter().enumerate() {
        let want = gr.positions[v as usize].lerp(t_plain[k], 0.5);
        assert!(t_rest[k].distance(want) < 1e-5, "{} vs {want}", t_rest[k]);
    }
    // Proxies: at frame 1 both modes agree; at −5 the rest mode differs from the walk's pose,
    // and at −2 it is half-way between its −5 and frame-1 shapes.
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    rest.colliders.shapes_at(1.0, &mut a);
    plain.colliders.shapes_at(1.0, &mut b);
    assert_eq!(a, b);
    rest.colliders.shapes_at(-5.0, &mut c);
    anim.colliders.shapes_at(-5.0, &mut b);
    let moved = c
        .iter()
        .zip(&b)
        .map(|(x, y)| centre(x).distance(centre(y)))
        .fold(0.0, f32::max);
    assert!(moved > 0.01, "rest proxies equal the walk's ({moved} m)");
    rest.colliders.shapes_at(-2.0, &mut b);
    for ((start, mid), end) in c.iter().zip(&b).zip(&a) {
        let want = centre(start).lerp(centre(end), 0.5);
        assert!(centre(mid).distance(want) < 1e-5);
    }
}

/// A skinned glTF garment starts from its skinned pose at the first simulated frame and rests on
/// its bind-pose mesh carried by its node on the rig without animation (Blender's cloth rests on
/// the undeformed mesh).
#[test]
fn skinned_gltf_garment_rests_on_its_bind_pose() {
    let s = figure_scene("");
    let g = &s.garments[0];
    let rest = g.rest_positions.as_ref().expect("a separate rest shape");
    let rig = clothbake_io::gltf_rig::GltfRig::open(Path::new(FIGURE)).unwrap();
    let node = rig.doc.find_node("Proxy").unwrap();
    let mesh = clothbake_io::gltf_mesh::read_mesh_node(&rig.doc, &node, None).unwrap();
    let mut world = Vec::new();
    rig.graph.world_matrices(None, 0.0, &mut world);
    let m = world[node.index()];
    let mut worst_rest = 0.0f32;
    for (v, &src) in g.welded.sim_to_source.iter().enumerate() {
        let want = m.transform_point3(mesh.source.positions[src as usize]);
        worst_rest = worst_rest.max(rest[v].distance(want));
    }
    assert!(
        worst_rest < 1e-6,
        "rest off the bind pose by {worst_rest} m"
    );
    // It starts skinned (the walk's pose at frame 1), which is not the bind pose.
    let start_vs_rest = g
        .positions
        .iter()
        .zip(rest)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0, f32::max);
    assert!(start_vs_rest > 0.01, "{start_vs_rest}");
}
