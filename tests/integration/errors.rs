//! Every documented input error: exit code 2, a message naming the file and the field or element,
//! and no output file left behind.

use crate::harness::{Dir, Run};

const QUAD_OBJ: &str = "v 0 1 0\nv 1 1 0\nv 1 1 1\nv 0 1 1\nf 1 2 3\nf 1 3 4\n";

fn scene_with_mesh(mesh: &str, node: Option<&str>) -> String {
    let node = node
        .map(|n| format!("node = \"{n}\"\n"))
        .unwrap_or_default();
    format!("[scene]\nframe_end = 3\n\n[[garment]]\nname = \"cloth\"\nmesh = \"{mesh}\"\n{node}")
}

/// Bakes `scene.toml` into `out/` expecting a usage/input error whose message has all of `needles`.
fn expect_input_error(d: &Dir, needles: &[&str]) -> Run {
    let r = d.run(&["bake", "scene.toml", "-o", "out"]);
    assert_eq!(r.code, 2, "expected exit 2:\n{}\n{}", r.stdout, r.stderr);
    for n in needles {
        assert!(r.stderr.contains(n), "message lacks {n:?}: {}", r.stderr);
    }
    assert!(
        d.files_under("out").is_empty(),
        "left behind: {:?}",
        d.files_under("out")
    );
    // `check` reports the same problem without baking.
    let c = d.run(&["check", "scene.toml"]);
    assert_eq!(c.code, 2, "check: {}", c.stderr);
    for n in needles {
        assert!(
            c.stderr.contains(n),
            "check message lacks {n:?}: {}",
            c.stderr
        );
    }
    r
}

/// A .glb from a JSON chunk and a binary chunk.
fn glb(json: &str, bin: &[u8]) -> Vec<u8> {
    let mut j = json.as_bytes().to_vec();
    while j.len() % 4 != 0 {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while b.len() % 4 != 0 {
        b.push(0);
    }
    let total = 12 + 8 + j.len() + 8 + b.len();
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&b);
    out
}

/// One triangle as a .glb whose POSITION accessor claims `position_count` elements.
fn triangle_glb(positions: [[f32; 3]; 3], position_count: usize) -> Vec<u8> {
    let mut bin: Vec<u8> = positions
        .iter()
        .flatten()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    bin.extend([0u32, 1, 2].iter().flat_map(|i| i.to_le_bytes()));
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],
        "nodes":[{{"name":"Cloth","mesh":0}}],
        "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"indices":1}}]}}],
        "accessors":[
          {{"bufferView":0,"componentType":5126,"count":{position_count},"type":"VEC3","min":[0,0,0],"max":[1,1,1]}},
          {{"bufferView":1,"componentType":5125,"count":3,"type":"SCALAR"}}],
        "bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":12}}],
        "buffers":[{{"byteLength":48}}]}}"#
    );
    glb(&json, &bin)
}

#[test]
fn missing_scene_file() {
    let d = Dir::new();
    let r = d.run(&["bake", "nowhere.toml", "-o", "out"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("nowhere.toml"), "{}", r.stderr);
    assert!(d.files_under("out").is_empty());
}

#[test]
fn missing_mesh_file() {
    let d = Dir::new();
    d.write("scene.toml", scene_with_mesh("missing.obj", None));
    expect_input_error(&d, &["scene.toml", "garment[0].mesh", "missing.obj"]);
}

#[test]
fn unknown_scene_key() {
    let d = Dir::new();
    d.write("cloth.obj", QUAD_OBJ);
    d.write(
        "scene.toml",
        scene_with_mesh("cloth.obj", None).replace("frame_end = 3", "frame_end = 3\nfsp = 24"),
    );
    expect_input_error(&d, &["scene.toml", "fsp"]);
}

#[test]
fn unknown_integrator() {
    let d = Dir::new();
    d.write("cloth.obj", QUAD_OBJ);
    d.write(
        "scene.toml",
        scene_with_mesh("cloth.obj", None)
            .replace("frame_end = 3", "frame_end = 3\nintegrator = \"rk4\""),
    );
    expect_input_error(
        &d,
        &[
            "scene.toml",
            "scene.integrator",
            "rk4",
            "bdf2",
            "kang",
            "verlet",
        ],
    );
}

#[test]
fn even_kang_iterations() {
    let d = Dir::new();
    d.write("cloth.obj", QUAD_OBJ);
    d.write(
        "scene.toml",
        scene_with_mesh("cloth.obj", None).replace(
            "frame_end = 3",
            "frame_end = 3\nintegrator = \"kang\"\nkang_iterations = 2",
        ),
    );
    expect_input_error(&d, &["scene.toml", "scene.kang_iterations", "odd"]);
}

#[test]
fn kang_and_verlet_scenes_check_inspect_and_bake() {
    for name in ["kang", "verlet"] {
        let d = Dir::new();
        d.write("cloth.obj", QUAD_OBJ);
        d.write(
            "scene.toml",
            scene_with_mesh("cloth.obj", None).replace(
                "frame_end = 3",
                &format!("frame_end = 3\nintegrator = \"{name}\""),
            ),
        );
        let c = d.ok(&["check", "scene.toml"]);
        assert!(
            c.stdout.contains(&format!("integrator {name}")),
            "{}",
            c.stdout
        );
        let i = d.ok(&["inspect", "--json", "scene.toml"]);
        assert!(
            i.stdout.contains(&format!("\"integrator\":\"{name}\"")),
            "{}",
            i.stdout
        );
        d.ok(&["bake", "scene.toml", "-o", "out"]);
        assert!(!d.files_under("out").is_empty());
    }
}

#[test]
fn bdf2_scene_checks_inspects_and_bakes() {
    let d = Dir::new();
    d.write("cloth.obj", QUAD_OBJ);
    d.write(
        "scene.toml",
        scene_with_mesh("cloth.obj", None)
            .replace("frame_end = 3", "frame_end = 3\nintegrator = \"bdf2\""),
    );
    let c = d.ok(&["check", "scene.toml"]);
    assert!(c.stdout.contains("integrator bdf2"), "{}", c.stdout);
    let j = d.ok(&["check", "--json", "scene.toml"]);
    assert!(j.stdout.contains("\"integrator\":\"bdf2\""), "{}", j.stdout);
    let i = d.ok(&["inspect", "--json", "scene.toml"]);
    assert!(i.stdout.contains("\"integrator\":\"bdf2\""), "{}", i.stdout);
    d.ok(&["bake", "scene.toml", "-o", "out"]);
    assert!(!d.files_under("out").is_empty());
}

#[test]
fn unknown_garment_model() {
    let d = Dir::new();
    d.write("cloth.obj", QUAD_OBJ);
    d.write(
        "scene.toml",
        scene_with_mesh("cloth.obj", None) + "model = \"spring\"\n",
    );
    expect_input_error(&d, &["scene.toml", "garment[0].model", "spring", "springs"]);
}

#[test]
fn spring_stiffness_needs_the_springs_model_and_a_positive_value() {
    let d = Dir::new();
    d.write("cloth.obj", QUAD_OBJ);
    d.write(
        "scene.toml",
        scene_with_mesh("cloth.obj", None) + "spring_stiffness = 0.03\n",
    );
    expect_input_error(
        &d,
        &["scene.toml", "garment[0].spring_stiffness", "springs"],
    );
    d.write(
        "scene.toml",
        scene_with_mesh("cloth.obj", None) + "model = \"springs\"\nspring_stiffness = -1\n",
    );
    expect_input_error(&d, &["scene.toml", "garment[0].spring_stiffness", "> 0"]);
}

#[test]
fn springs_scene_checks_inspects_and_bakes() {
    let d = Dir::new();
    d.write("cloth.obj", QUAD_OBJ);
    d.write(
        "scene.toml",
        scene_with_mesh("cloth.obj", None) + "model = \"springs\"\nspring_stiffness = 0.03\n",
    );
    d.ok(&["check", "scene.toml"]);
    let i = d.ok(&["inspect", "--json", "scene.toml"]);
    assert!(i.stdout.contains("\"model\":\"springs\""), "{}", i.stdout);
    d.ok(&["bake", "scene.toml", "-o", "out"]);
    assert!(!d.files_under("out").is_empty());
}

#[test]
fn unknown_material_preset() {
    let d = Dir::new();
    d.write("cloth.obj", QUAD_OBJ);
    d.write(
        "scene.toml",
        scene_with_mesh("cloth.obj", None) + "material = \"velvet\"\n",
    );
    expect_input_error(&d, &["scene.toml", "garment[0].material", "velvet"]);
}

#[test]
fn nan_vertex_in_obj() {
    let d = Dir::new();
    d.write("cloth.obj", QUAD_OBJ.replace("v 1 1 1", "v 1 nan 1"));
    d.write("scene.toml", scene_with_mesh("cloth.obj", None));
    expect_input_error(&d, &["cloth.obj", "v[2]"]);
}

#[test]
fn nan_vertex_in_gltf() {
    let d = Dir::new();
    let nan = [[0.0, 1.0, 0.0], [1.0, f32::NAN, 0.0], [1.0, 1.0, 1.0]];
    d.write("cloth.glb", triangle_glb(nan, 3));
    d.write("scene.toml", scene_with_mesh("cloth.glb", Some("Cloth")));
    expect_input_error(&d, &["cloth.glb", "accessors[0]", "not finite"]);
}

#[test]
fn wrong_accessor_count_in_gltf() {
    let d = Dir::new();
    let ok = [[0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]];
    // 4 positions claimed, but the buffer view holds 3.
    d.write("cloth.glb", triangle_glb(ok, 4));
    d.write("scene.toml", scene_with_mesh("cloth.glb", Some("Cloth")));
    expect_input_error(&d, &["cloth.glb", "accessors[0]"]);
}

#[test]
fn valid_hand_written_glb_bakes() {
    // The control for the two tests above: the same file with correct counts bakes.
    let d = Dir::new();
    let ok = [[0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]];
    d.write("cloth.glb", triangle_glb(ok, 3));
    d.write("scene.toml", scene_with_mesh("cloth.glb", Some("Cloth")));
    d.ok(&["bake", "scene.toml", "-o", "out"]);
    assert_eq!(d.files_under("out"), ["cloth.pc2"]);
}

#[test]
fn truncated_glb() {
    let d = Dir::new();
    let scene = d.sample("skirt-walk");
    let glb = std::fs::read(d.path("skirt-walk/figure.glb")).expect("figure.glb");
    d.write("figure.glb", &glb[..glb.len() / 2]);
    let text = std::fs::read_to_string(d.path(&scene)).expect("scene");
    d.write("scene.toml", text);
    expect_input_error(&d, &["figure.glb"]);
}

#[test]
fn bad_usage_exits_2() {
    let d = Dir::new();
    assert_eq!(d.run(&["bake", "--frames", "5..2"]).code, 2);
    assert_eq!(d.run(&["bake", "--format", "fbx"]).code, 2);
    assert_eq!(d.run(&["frobnicate"]).code, 2);
    let r = d.run(&["sample", "no-such-sample", "-o", "x"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no-such-sample"), "{}", r.stderr);
    assert!(d.files_under("x").is_empty());
    assert!(d.files_under("clothbake-out").is_empty());
}

#[test]
fn help_on_every_command() {
    let d = Dir::new();
    for cmd in [
        &["--help"][..],
        &["bake", "--help"],
        &["inspect", "--help"],
        &["check", "--help"],
        &["sample", "--help"],
    ] {
        let r = d.ok(cmd);
        assert!(r.stdout.contains("Usage"), "{cmd:?}: {}", r.stdout);
    }
}

#[test]
fn check_accepts_every_sample() {
    let d = Dir::new();
    for name in [
        "dress-walk",
        "sheet-on-sphere",
        "flag-wind",
        "skirt-walk",
        "cape-run",
        "self-fold",
        "twist",
        "rigged-figure",
    ] {
        let scene = d.sample(name);
        let r = d.ok(&["check", &scene]);
        assert!(r.stdout.contains("ok"), "{name}: {}", r.stdout);
    }
    assert!(d.files_under("clothbake-out").is_empty());
}
