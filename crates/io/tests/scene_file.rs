//! Scene TOML parsing: defaults, unknown keys, bad values with field paths, path resolution.

use std::path::Path;

use clothbake_io::{
    ColliderSpec, Follow, Format, IntegratorName, PreconditionerName, SceneFile, Shape, Space, Up,
};
use glam::Vec3;

const PRESETS: &[&str] = &["cotton", "silk", "denim"];

fn parse(text: &str) -> Result<SceneFile, String> {
    SceneFile::parse(Path::new("shots/scene.toml"), text, PRESETS).map_err(|e| e.to_string())
}

#[test]
fn minimal_scene_gets_documented_defaults() {
    let s = parse("[[garment]]\nname = \"skirt\"\nmesh = \"skirt.obj\"\n").unwrap();
    assert_eq!(s.settings.fps, 24.0);
    assert_eq!(s.settings.frame_start, 1);
    assert_eq!(s.settings.frame_end, None);
    assert_eq!(s.settings.substeps, 5);
    assert_eq!(s.settings.gravity, [0.0, -9.81, 0.0]);
    assert_eq!(s.settings.air_damping, 0.02);
    assert_eq!(s.settings.air_damping, clothbake_io::DEFAULT_AIR_DAMPING);
    assert_eq!(s.output.formats, vec![Format::Pc2]);
    assert_eq!(s.output.space, Space::World);
    assert_eq!(s.output.up, Up::Y);
    assert_eq!(s.output.dir, Path::new("shots/clothbake-out"));
    let g = &s.garments[0];
    assert_eq!(g.mesh, Path::new("shots/skirt.obj"));
    assert_eq!(g.thickness, 0.005);
    assert_eq!(g.friction, 0.3);
    assert!((g.static_friction() - 0.36).abs() < 1e-6);
    assert!(g.self_collision);
    assert!(g.pin.is_none());
}

#[test]
fn full_scene_parses() {
    let text = r#"
[scene]
fps = 30.0
frame_start = 0
frame_end = 10
substeps = 8
gravity = [0.0, -9.0, 0.0]
time_offset = 0.5

[wind]
velocity = [2.0, 0.0, 0.0]

[output]
dir = "/abs/out"
formats = ["pc2", "mdd", "obj"]
space = "local"
up = "z"

[[garment]]
name = "cape"
mesh = "cape.glb"
node = "Cape"
material = "silk"
stretch = [100.0, 200.0]

[garment.pin]
vertices = [0, 3]
weights = [1.0, 0.5]
attribute = "_PIN"
follow = "skin"

[[collider]]
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 2.0, 0.0]

[[collider]]
type = "sphere"
center = [0.0, 1.0, 0.0]
radius = 0.5
[[collider.keys]]
frame = 1
center = [0.0, 1.0, 0.0]
[[collider.keys]]
frame = 11
center = [1.0, 1.0, 0.0]
radius = 0.25

[[collider]]
type = "gltf"
file = "body.glb"
proxies = "auto"
mesh = "Body"
inflate = 0.01
"#;
    let s = parse(text).unwrap();
    assert_eq!(s.settings.fps, 30.0);
    assert_eq!(s.settings.frame_end, Some(10));
    assert_eq!(s.output.dir, Path::new("/abs/out"));
    assert_eq!(s.output.up, Up::Z);
    assert_eq!(s.wind.as_ref().unwrap().air_density, 1.2);
    let pin = s.garments[0].pin.as_ref().unwrap();
    assert_eq!(pin.follow, Follow::Skin);
    assert_eq!(pin.stiffness, 2000.0);
    match &s.colliders[0] {
        ColliderSpec::Analytic {
            shape: Shape::Plane { normal, .. },
            keys,
        } => {
            assert_eq!(*normal, Vec3::Y);
            assert!(keys.is_empty());
        }
        other => panic!("{other:?}"),
    }
    match &s.colliders[1] {
        ColliderSpec::Analytic { keys, .. } => {
            assert_eq!(keys.len(), 2);
            assert_eq!(
                keys[1].1,
                Shape::Sphere {
                    center: Vec3::new(1.0, 1.0, 0.0),
                    radius: 0.25
                }
            );
            // A key without radius keeps the base radius.
            assert_eq!(
                keys[0].1,
                Shape::Sphere {
                    center: Vec3::new(0.0, 1.0, 0.0),
                    radius: 0.5
                }
            );
        }
        other => panic!("{other:?}"),
    }
    match &s.colliders[2] {
        ColliderSpec::Gltf {
            file,
            mesh,
            inflate,
            ..
        } => {
            assert_eq!(file, Path::new("shots/body.glb"));
            assert_eq!(mesh.as_deref(), Some("Body"));
            assert_eq!(*inflate, 0.01);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_keys_are_named_with_their_path() {
    let e = parse("[scene]\nfsp = 24\n").unwrap_err();
    assert!(e.starts_with("shots/scene.toml: scene"), "{e}");
    assert!(e.contains("unknown field `fsp`"), "{e}");
    assert!(e.contains("line 2"), "{e}");

    let e = parse("[[garment]]\nname = \"a\"\nmesh = \"a.obj\"\n[[garment]]\nname = \"b\"\nmesh = \"b.obj\"\n[garment.pin]\nvertexes = [1]\n")
        .unwrap_err();
    assert!(e.contains("garment[1].pin"), "{e}");
    assert!(e.contains("unknown field `vertexes`"), "{e}");

    let e = parse("[bake]\nx = 1\n").unwrap_err();
    assert!(e.contains("unknown field `bake`"), "{e}");
}

#[test]
fn bad_values_name_the_field() {
    let cases: &[(&str, &str)] = &[
        ("[scene]\nfps = 0.0\n", "scene.fps: must be > 0"),
        ("[scene]\nframe_start = 5\nframe_end = 2\n", "scene.frame_end: 2 is before"),
        ("[scene]\nsubsteps = 0\n", "scene.substeps"),
        ("[output]\nformats = []\n", "output.formats"),
        ("[output]\nformats = [\"abc\"]\n", "output.formats[0]"),
        (
            "[[garment]]\nname = \"s\"\nmesh = \"s.obj\"\nmaterial = \"velvet\"\n",
            "garment[0].material: unknown preset \"velvet\"",
        ),
        ("[[garment]]\nname = \"s\"\nmesh = \"s.fbx\"\n", "garment[0].mesh"),
        ("[[garment]]\nname = \"a/b\"\nmesh = \"s.obj\"\n", "garment[0].name"),
        ("[[garment]]\nname = \"s\"\nmesh = \"s.obj\"\nthickness = -1.0\n", "garment[0].thickness: must be >= 0"),
        ("[[garment]]\nname = \"s\"\nmesh = \"s.obj\"\nstretch = [1.0, -2.0]\n", "garment[0].stretch[1]"),
        (
            "[[garment]]\nname = \"s\"\nmesh = \"s.obj\"\n[garment.pin]\nvertices = [1, 2]\nweights = [1.0]\n",
            "garment[0].pin.weights: has 1 entries",
        ),
        (
            "[[garment]]\nname = \"s\"\nmesh = \"s.obj\"\n[garment.pin]\nvertices = [1]\nweights = [1.5]\n",
            "garment[0].pin.weights[0]",
        ),
        ("[[garment]]\nname = \"s\"\nmesh = \"s.obj\"\n[garment.pin]\nfollow = \"skin\"\n", "garment[0].pin.follow"),
        (
            "[[garment]]\nname = \"s\"\nmesh = \"s.obj\"\n[[garment]]\nname = \"s\"\nmesh = \"t.obj\"\n",
            "garment[1].name: \"s\" is already",
        ),
        ("[[collider]]\ntype = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\n", "collider[0].radius: missing"),
        ("[[collider]]\ntype = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nnormal = [0.0, 1.0, 0.0]\n", "collider[0].normal: is not a key of a \"sphere\" collider"),
        ("[[collider]]\ntype = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 0.0]\n", "collider[0].normal: must not be the zero vector"),
        ("[[collider]]\ntype = \"cone\"\n", "collider[0].type"),
        (
            "[[collider]]\ntype = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\n[[collider.keys]]\nframe = 3\n[[collider.keys]]\nframe = 2\n",
            "collider[0].keys[1].frame",
        ),
        ("[scene]\ngravity = [0.0, nan, 0.0]\n", "scene.gravity[1]"),
        ("[scene]\nair_damping = -0.5\n", "scene.air_damping: must be >= 0, got -0.5"),
        (
            "[scene]\nbody_strain_allowance = -0.1\n",
            "scene.body_strain_allowance: must be >= 0, got -0.1",
        ),
        ("[scene]\nstrain_jump = 0.0\n", "scene.strain_jump: must be > 0, got 0"),
        (
            "[scene]\nstrain_jump_floor = -0.01\n",
            "scene.strain_jump_floor: must be >= 0, got -0.01",
        ),
        ("[scene]\nair_damping = inf\n", "scene.air_damping: must be >= 0"),
    ];
    for (text, want) in cases {
        let e = parse(text).expect_err(text);
        assert!(e.starts_with("shots/scene.toml: "), "{e}");
        assert!(e.contains(want), "for {text:?}: got {e:?}, want {want:?}");
    }
}

#[test]
fn strain_jump_is_optional_and_parsed() {
    assert_eq!(parse("").unwrap().settings.strain_jump, None);
    let s = parse("[scene]\nstrain_jump = 0.1\n").unwrap();
    assert_eq!(s.settings.strain_jump, Some(0.1));
}

#[test]
fn air_damping_is_parsed() {
    let s = parse("[scene]\nair_damping = 0.25\n").unwrap();
    assert_eq!(s.settings.air_damping, 0.25);
    let s = parse("[scene]\nair_damping = 0.0\n").unwrap();
    assert_eq!(s.settings.air_damping, 0.0);
    let e = parse("[scene]\nair_viscosity = 0.25\n").unwrap_err();
    assert!(e.contains("unknown field `air_viscosity`"), "{e}");
}

#[test]
fn integrator_is_parsed_and_unknown_names_are_rejected() {
    assert_eq!(parse("").unwrap().settings.integrator, IntegratorName::Bw);
    let s = parse("[scene]\nintegrator = \"bdf2\"\n").unwrap();
    assert_eq!(s.settings.integrator, IntegratorName::Bdf2);
    assert_eq!(s.settings.integrator.name(), "bdf2");
    let s = parse("[scene]\nintegrator = \"bw\"\n").unwrap();
    assert_eq!(s.settings.integrator, IntegratorName::Bw);
    for (name, v) in [
        ("kang", IntegratorName::Kang),
        ("verlet", IntegratorName::Verlet),
    ] {
        let s = parse(&format!("[scene]\nintegrator = \"{name}\"\n")).unwrap();
        assert_eq!(s.settings.integrator, v);
        assert_eq!(s.settings.integrator.name(), name);
    }
    let e = parse("[scene]\nintegrator = \"rk4\"\n").unwrap_err();
    assert!(e.starts_with("shots/scene.toml: scene.integrator"), "{e}");
    assert!(e.contains("unknown variant `rk4`"), "{e}");
    assert!(
        e.contains("`bw`") && e.contains("`bdf2`") && e.contains("`kang`"),
        "{e}"
    );
    assert!(e.contains("`verlet`"), "{e}");
}

#[test]
fn kang_iterations_must_be_odd_and_verlet_iterations_positive() {
    let s = parse("[scene]\nintegrator = \"kang\"\nkang_iterations = 3\nverlet_iterations = 5\n")
        .unwrap();
    assert_eq!(s.settings.kang_iterations, Some(3));
    assert_eq!(s.settings.verlet_iterations, Some(5));
    let e = parse("[scene]\nkang_iterations = 2\n").unwrap_err();
    assert!(
        e.starts_with("shots/scene.toml: scene.kang_iterations"),
        "{e}"
    );
    assert!(e.contains("must be odd"), "{e}");
    let e = parse("[scene]\nverlet_iterations = 0\n").unwrap_err();
    assert!(
        e.starts_with("shots/scene.toml: scene.verlet_iterations"),
        "{e}"
    );
}

#[test]
fn preconditioner_is_parsed_and_unknown_names_are_rejected() {
    assert_eq!(parse("").unwrap().settings.preconditioner, None);
    for (text, want) in [
        ("amg", PreconditionerName::Amg),
        ("auto", PreconditionerName::Auto),
        ("ic", PreconditionerName::Ic),
        ("jacobi", PreconditionerName::Jacobi),
    ] {
        let s = parse(&format!("[scene]\npreconditioner = \"{text}\"\n")).unwrap();
        assert_eq!(s.settings.preconditioner, Some(want));
        assert_eq!(want.name(), text);
    }
    let e = parse("[scene]\npreconditioner = \"multigrid\"\n").unwrap_err();
    assert!(
        e.starts_with("shots/scene.toml: scene.preconditioner"),
        "{e}"
    );
    assert!(e.contains("unknown variant `multigrid`"), "{e}");
    assert!(
        e.contains("`amg`") && e.contains("`ic`") && e.contains("`jacobi`"),
        "{e}"
    );
}

#[test]
fn missing_scene_file_is_named() {
    let e = SceneFile::read(Path::new("/nonexistent/scene.toml"), PRESETS).unwrap_err();
    assert_eq!(e.to_string(), "/nonexistent/scene.toml: file not found");
}

#[test]
fn loaded_scene_can_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<clothbake_io::LoadedScene>();
    send_sync::<clothbake_io::GarmentCacheWriter>();
}

#[test]
fn aimex_and_damping_projection_are_parsed_and_bad_values_rejected() {
    let s = parse("[scene]\nintegrator = \"aimex\"\ndamping_projection = true\n").unwrap();
    assert_eq!(s.settings.integrator, IntegratorName::Aimex);
    assert_eq!(s.settings.integrator.name(), "aimex");
    assert!(s.settings.damping_projection);
    assert!(!parse("").unwrap().settings.damping_projection);
    let e = parse("[scene]\ndamping_projection = \"yes\"\n").unwrap_err();
    assert!(
        e.starts_with("shots/scene.toml: scene.damping_projection"),
        "{e}"
    );
    let e = parse("[scene]\nintegrator = \"rk4\"\n").unwrap_err();
    assert!(e.contains("`aimex`"), "{e}");
}
