//! `clothbake inspect` on the third-party figure, on generated assets and on a baked cache.

use serde_json::Value;

use crate::harness::{samples_dir, Dir};

fn inspect_json(d: &Dir, file: &str) -> Value {
    let r = d.ok(&["inspect", "--json", file]);
    serde_json::from_str(r.stdout.trim()).expect("inspect --json prints one JSON object")
}

#[test]
fn inspect_rigged_figure_reports_joints_animation_and_auto_proxies() {
    let d = Dir::new();
    let figure = samples_dir().join("rigged-figure/RiggedFigure.gltf");
    let v = inspect_json(&d, figure.to_str().expect("utf-8 path"));
    assert_eq!(v["format"], "gltf");
    assert_eq!(v["skins"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["skins"][0]["joints"], 19);
    assert_eq!(v["animations"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["animations"][0]["channels"], 57);
    assert_eq!(v["meshes"][0]["node"], "Proxy");
    // The figure stands about 1.45 m tall on the ground (Y up).
    let min_y = v["bounds"]["min"][1].as_f64().expect("bounds");
    let max_y = v["bounds"]["max"][1].as_f64().expect("bounds");
    assert!(
        min_y.abs() < 0.05 && (max_y - 1.45).abs() < 0.1,
        "{min_y}..{max_y}"
    );
    let auto = v["auto_proxies"].as_array().expect("auto proxies");
    assert!(auto.len() >= 10, "{} auto proxies", auto.len());
    let text = d.ok(&["inspect", figure.to_str().expect("utf-8")]).stdout;
    assert!(text.contains("joints"), "{text}");
}

#[test]
fn inspect_generated_figure_finds_its_marked_proxies() {
    let d = Dir::new();
    d.sample("skirt-walk");
    let v = inspect_json(&d, "skirt-walk/figure.glb");
    assert_eq!(v["format"], "glb");
    let marked = v["marked_proxies"].as_array().expect("marked proxies");
    // pelvis, belly, shoulders, head, two thighs, two shins.
    assert_eq!(marked.len(), 8);
    let thigh = marked
        .iter()
        .find(|p| p["name"] == "CB_CAPSULE_thigh_L")
        .expect("left thigh proxy");
    assert_eq!(thigh["shape"]["type"], "capsule");
    // At time 0 (bind pose) the thigh runs straight down from the hip joint at y = 0.90 to the knee.
    let a_y = thigh["shape"]["a"][1].as_f64().expect("a");
    let b_y = thigh["shape"]["b"][1].as_f64().expect("b");
    assert!(
        (a_y - 0.90).abs() < 1e-4 && (b_y - 0.48).abs() < 1e-4,
        "{a_y} {b_y}"
    );
}

#[test]
fn inspect_a_baked_cache() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    d.ok(&["bake", &scene, "--frames", "1..3", "-o", "out"]);
    let v = inspect_json(&d, "out/sheet.pc2");
    assert_eq!(v["points"], 441);
    assert_eq!(v["frames"], 3);
    assert_eq!(v["non_finite_values"], 0);
}
