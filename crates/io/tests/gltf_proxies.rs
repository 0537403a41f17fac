//! Body proxies from glTF: marked nodes (extras and name convention) fitted from their vertices
//! and carried by their animated parent; `auto` capsules per bone of RiggedFigure following the
//! skinned body.

mod common;

use std::path::Path;

use clothbake_io::gltf_mesh::read_mesh_node;
use clothbake_io::gltf_rig::GltfRig;
use clothbake_io::proxies_auto::{auto_proxies, AUTO_WEIGHT_THRESHOLD};
use clothbake_io::{load_scene, Shape};
use common::GltfBuilder;
use glam::Vec3;
use serde_json::json;

const FIGURE: &str = "/work/shared/third_party/gltf/RiggedFigure.gltf";

/// A capsule-shaped point cloud along +Y: rings of radius 0.05 at y = 0, 0.2, 0.4 and poles at
/// y = −0.05 and 0.45 (the hemispherical caps' tips).
fn capsule_points() -> Vec<f32> {
    let mut p = Vec::new();
    for y in [0.0f32, 0.2, 0.4] {
        for k in 0..8 {
            let a = k as f32 * std::f32::consts::TAU / 8.0;
            p.extend([0.05 * a.cos(), y, 0.05 * a.sin()]);
        }
    }
    p.extend([0.0, -0.05, 0.0, 0.0, 0.45, 0.0]);
    p
}

fn marked_scene(dir: &Path) -> std::path::PathBuf {
    let mut b = GltfBuilder::new();
    let pts = capsule_points();
    let pos = b.floats(&pts, "VEC3");
    let n = (pts.len() / 3) as u16;
    // A fan of triangles so the mesh is valid; the fit only uses the vertices.
    let idx: Vec<u16> = (1..n - 1).flat_map(|i| [0, i, i + 1]).collect();
    let idx = b.u16s(&idx, "SCALAR");
    let mesh = b.mesh("ArmProxy", json!({"POSITION": pos}), Some(idx));
    // Bone: rotates 90° about Z over the first second.
    let bone = b.node(
        json!({"name": "Bone", "translation": [0.0, 1.0, 0.0], "children": [1, 2, 3]}),
        true,
    );
    b.node(json!({"name": "CB_CAPSULE_arm", "mesh": mesh}), false);
    b.node(
        json!({"name": "Head", "translation": [0.0, 0.5, 0.0],
               "extras": {"clothbake": {"collider": "sphere", "radius": 0.1}}}),
        false,
    );
    b.node(
        json!({"name": "Plain", "translation": [1.0, 0.0, 0.0]}),
        false,
    );
    let h = (std::f32::consts::FRAC_PI_4).sin();
    let times = b.floats(&[0.0, 1.0], "SCALAR");
    let rots = b.floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h], "VEC4");
    b.json["animations"] = json!([{
        "samplers": [{"input": times, "output": rots, "interpolation": "LINEAR"}],
        "channels": [{"sampler": 0, "target": {"node": bone, "path": "rotation"}}]
    }]);
    b.write_gltf(&dir.join("body.gltf"));
    let s = dir.join("s.toml");
    std::fs::write(
        &s,
        "[scene]\nframe_start = 0\n[[collider]]\ntype = \"gltf\"\nfile = \"body.gltf\"\ninflate = 0.01\n",
    )
    .unwrap();
    s
}

fn capsule_ends(s: &Shape) -> (Vec3, Vec3, f32, f32) {
    match *s {
        Shape::Capsule {
            a,
            b,
            radius_a,
            radius_b,
        } => (a, b, radius_a, radius_b),
        _ => panic!("not a capsule: {s:?}"),
    }
}

#[test]
fn marked_proxies_are_fitted_and_follow_their_bone() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = load_scene(&marked_scene(dir.path()), &["cotton"]).unwrap();
    assert_eq!(s.colliders.names(), ["CB_CAPSULE_arm", "Head"]);
    assert_eq!(s.frame_end, 24);
    let mut shapes = Vec::new();
    // Frame 0: bone unrotated at (0, 1, 0). The capsule spans y = 0..0.4 locally, radius 0.05.
    s.colliders.shapes_at(0.0, &mut shapes);
    let (a, b, ra, rb) = capsule_ends(&shapes[0]);
    let (lo, hi) = if a.y < b.y { (a, b) } else { (b, a) };
    assert!(lo.distance(Vec3::new(0.0, 1.0, 0.0)) < 1e-5, "{lo}");
    assert!(hi.distance(Vec3::new(0.0, 1.4, 0.0)) < 1e-5, "{hi}");
    assert!(
        (ra - 0.06).abs() < 1e-5 && (rb - 0.06).abs() < 1e-5,
        "{ra} {rb}"
    );
    assert_eq!(
        shapes[1],
        Shape::Sphere {
            center: Vec3::new(0.0, 1.5, 0.0),
            radius: 0.11
        }
    );
    // Frame 24 (1 s): bone rotated 90° about Z, so local +Y points to world −X.
    s.colliders.shapes_at(24.0, &mut shapes);
    let (a, b, _, _) = capsule_ends(&shapes[0]);
    let (near, far) = if a.x > b.x { (a, b) } else { (b, a) };
    assert!(near.distance(Vec3::new(0.0, 1.0, 0.0)) < 1e-5, "{near}");
    assert!(far.distance(Vec3::new(-0.4, 1.0, 0.0)) < 1e-5, "{far}");
    match shapes[1] {
        Shape::Sphere { center, radius } => {
            assert!(
                center.distance(Vec3::new(-0.5, 1.0, 0.0)) < 1e-5,
                "{center}"
            );
            assert!((radius - 0.11).abs() < 1e-6);
        }
        _ => panic!(),
    }
    // Halfway (frame 12): 45°.
    s.colliders.shapes_at(12.0, &mut shapes);
    let (a, b, _, _) = capsule_ends(&shapes[0]);
    let far = if a.distance(Vec3::Y) > b.distance(Vec3::Y) {
        a
    } else {
        b
    };
    let d = 0.4 * std::f32::consts::FRAC_1_SQRT_2;
    assert!(far.distance(Vec3::new(-d, 1.0 + d, 0.0)) < 1e-5, "{far}");
}

#[test]
fn proxy_without_radius_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = GltfBuilder::new();
    b.node(json!({"name": "CB_SPHERE_x"}), true);
    b.write_gltf(&dir.path().join("p.gltf"));
    std::fs::write(
        dir.path().join("s.toml"),
        "[[collider]]\ntype = \"gltf\"\nfile = \"p.gltf\"\n",
    )
    .unwrap();
    let e = load_scene(&dir.path().join("s.toml"), &["cotton"])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("p.gltf: nodes[0].extras: a proxy without a mesh needs \"radius\""),
        "{e}"
    );

    let mut b = GltfBuilder::new();
    b.node(
        json!({"name": "n", "extras": {"clothbake": {"collider": "cone"}}}),
        true,
    );
    b.write_gltf(&dir.path().join("p.gltf"));
    let e = load_scene(&dir.path().join("s.toml"), &["cotton"])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("p.gltf: nodes[0].extras.collider: must be \"sphere\" or \"capsule\""),
        "{e}"
    );
}

/// Distance from p to the segment ab and the interpolated radius there.
fn capsule_gap(p: Vec3, a: Vec3, b: Vec3, ra: f32, rb: f32) -> f32 {
    let ab = b - a;
    let t = if ab.length_squared() > 0.0 {
        ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    p.distance(a + ab * t) - (ra + (rb - ra) * t)
}

#[test]
fn auto_capsules_follow_the_skinned_body() {
    let rig = GltfRig::open(Path::new(FIGURE)).unwrap();
    let proxies = auto_proxies(&rig, None, 0.0).unwrap();
    let body = read_mesh_node(&rig.doc, &rig.doc.find_node("Proxy").unwrap(), None).unwrap();
    let inf = body.influences.as_ref().unwrap();
    let skin = &rig.skins[0];
    assert!(proxies.len() >= 15, "{} capsules", proxies.len());
    let (mut world, mut joints, mut jm) = (Vec::new(), Vec::new(), Vec::new());
    let mut rest_shapes = Vec::new();
    let mut max_move = 0.0f32;
    for t in [0.0f32, 0.5, 0.9, 1.25] {
        rig.world_matrices(t, &mut world);
        skin.joint_matrices(&world, &mut joints);
        jm.clear();
        jm.push(joints.clone());
        for (k, p) in proxies.iter().enumerate() {
            let (a, b, ra, rb) = capsule_ends(&p.shape_at(&world, &jm));
            let j = skin
                .joints
                .iter()
                .position(|n| {
                    rig.doc.document.nodes().nth(*n).unwrap().name() == Some(p.name.as_str())
                })
                .unwrap();
            // The bone's dominant vertices, skinned independently of the proxy, lie near the
            // capsule surface at every time: the capsule follows the body.
            let gaps: Vec<f32> = (0..body.source.positions.len())
                .filter(|&v| {
                    inf.of(v)
                        .any(|(jj, w)| jj as usize == j && w > AUTO_WEIGHT_THRESHOLD)
                })
                .map(|v| {
                    capsule_gap(
                        inf.skin_point(v, body.source.positions[v], &joints),
                        a,
                        b,
                        ra,
                        rb,
                    )
                })
                .collect();
            let mean_abs = gaps.iter().map(|g| g.abs()).sum::<f32>() / gaps.len() as f32;
            let r = 0.5 * (ra + rb);
            let bound = if p.name.starts_with("arm") || p.name.starts_with("leg") {
                0.25
            } else {
                0.4
            };
            assert!(
                mean_abs < bound * r,
                "t {t} {}: mean |gap| {mean_abs} vs radius {r}",
                p.name
            );
            // Rigid: same length and radii at every time.
            if t == 0.0 {
                rest_shapes.push((a, b, ra, rb));
            } else {
                let (a0, b0, ra0, rb0) = rest_shapes[k];
                assert!((a.distance(b) - a0.distance(b0)).abs() < 1e-4);
                assert!((ra - ra0).abs() < 1e-5 && (rb - rb0).abs() < 1e-5);
                max_move = max_move.max(a.distance(a0)).max(b.distance(b0));
            }
        }
    }
    assert!(max_move > 0.05, "proxies barely move: {max_move}");
}

/// A skinned proxy mesh: the lower end weighted to joint 0, the upper end to joint 1; each end of
/// the fitted capsule follows its joints through linear blend skinning.
#[test]
fn skinned_marked_capsule_ends_follow_their_joints() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = GltfBuilder::new();
    let mut pts = Vec::new();
    for y in [0.5f32, 1.0, 1.5] {
        for k in 0..8 {
            let a = k as f32 * std::f32::consts::TAU / 8.0;
            pts.extend([0.05 * a.cos(), y, 0.05 * a.sin()]);
        }
    }
    pts.extend([0.0, 0.45, 0.0, 0.0, 1.55, 0.0]);
    let n = pts.len() / 3;
    let upper: Vec<bool> = (0..n).map(|v| pts[3 * v + 1] >= 1.0).collect();
    let joints: Vec<u16> = upper.iter().flat_map(|&u| [u as u16, 0, 0, 0]).collect();
    let weights: Vec<f32> = (0..n).flat_map(|_| [1.0, 0.0, 0.0, 0.0]).collect();
    let pos = b.floats(&pts, "VEC3");
    let j = b.u16s(&joints, "VEC4");
    let w = b.floats(&weights, "VEC4");
    let idx: Vec<u16> = (1..n as u16 - 1).flat_map(|i| [0, i, i + 1]).collect();
    let idx = b.u16s(&idx, "SCALAR");
    let mesh = b.mesh(
        "Leg",
        json!({"POSITION": pos, "JOINTS_0": j, "WEIGHTS_0": w}),
        Some(idx),
    );
    let j0 = b.node(json!({"name": "J0", "children": [1]}), true);
    let j1 = b.node(json!({"name": "J1", "translation": [0.0, 1.0, 0.0]}), false);
    let ibm: Vec<f32> = glam::Mat4::IDENTITY
        .to_cols_array()
        .into_iter()
        .chain(glam::Mat4::from_translation(Vec3::new(0.0, -1.0, 0.0)).to_cols_array())
        .collect();
    let ibm = b.floats(&ibm, "MAT4");
    b.json["skins"] = json!([{"joints": [j0, j1], "inverseBindMatrices": ibm}]);
    b.node(
        json!({"name": "CB_CAPSULE_leg", "mesh": mesh, "skin": 0}),
        true,
    );
    let h = std::f32::consts::FRAC_PI_4.sin();
    let times = b.floats(&[0.0, 1.0], "SCALAR");
    let rots = b.floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h], "VEC4");
    b.json["animations"] = json!([{
        "samplers": [{"input": times, "output": rots, "interpolation": "LINEAR"}],
        "channels": [{"sampler": 0, "target": {"node": j1, "path": "rotation"}}]
    }]);
    b.write_gltf(&dir.path().join("leg.gltf"));
    std::fs::write(
        dir.path().join("s.toml"),
        "[scene]\nframe_start = 0\n[[collider]]\ntype = \"gltf\"\nfile = \"leg.gltf\"\n",
    )
    .unwrap();
    let mut s = load_scene(&dir.path().join("s.toml"), &["cotton"]).unwrap();
    assert_eq!(s.colliders.names(), ["CB_CAPSULE_leg"]);
    let mut shapes = Vec::new();
    for (frame, upper_end) in [
        (0.0, Vec3::new(0.0, 1.5, 0.0)),
        (24.0, Vec3::new(-0.5, 1.0, 0.0)),
    ] {
        s.colliders.shapes_at(frame, &mut shapes);
        let (a, b, ra, rb) = capsule_ends(&shapes[0]);
        let (lower, upper) =
            if a.distance(Vec3::new(0.0, 0.5, 0.0)) < b.distance(Vec3::new(0.0, 0.5, 0.0)) {
                (a, b)
            } else {
                (b, a)
            };
        assert!(
            lower.distance(Vec3::new(0.0, 0.5, 0.0)) < 1e-5,
            "frame {frame}: {lower}"
        );
        assert!(upper.distance(upper_end) < 1e-5, "frame {frame}: {upper}");
        assert!(
            (ra - 0.05).abs() < 1e-5 && (rb - 0.05).abs() < 1e-5,
            "{ra} {rb}"
        );
    }
}
