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

/// Every cache format reports each frame's bounding box and lists its non-finite values.
#[test]
fn inspect_reports_per_frame_bounds_and_non_finite_values_of_every_cache() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    d.ok(&[
        "bake",
        &scene,
        "--frames",
        "1..3",
        "-o",
        "out",
        "--format",
        "pc2,mdd,obj,usd,usdc",
    ]);
    let pc2 = std::fs::read(d.path("out/sheet.pc2")).unwrap();
    let first = |k: usize| -> [f32; 3] {
        let o = 32 + 12 * k;
        std::array::from_fn(|c| {
            f32::from_le_bytes(pc2[o + 4 * c..o + 4 * c + 4].try_into().unwrap())
        })
    };
    for file in [
        "out/sheet.pc2",
        "out/sheet.mdd",
        "out/sheet.usda",
        "out/sheet.usdc",
        "out/sheet.####.obj",
        "out",
    ] {
        let v = inspect_json(&d, file);
        assert_eq!(v["points"], 441, "{file}");
        assert_eq!(v["frames"], 3, "{file}");
        assert_eq!(v["non_finite_values"], 0, "{file}");
        let fb = v["frame_bounds"].as_array().unwrap();
        assert_eq!(fb.len(), 3, "{file}");
        assert_eq!(fb[0]["frame"], 1.0, "{file}");
        // Frame 1's box from the PC2's own floats.
        let pts: Vec<[f32; 3]> = (0..441).map(first).collect();
        for c in 0..3 {
            let lo = pts.iter().map(|p| p[c]).fold(f32::INFINITY, f32::min);
            let hi = pts.iter().map(|p| p[c]).fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(
                fb[0]["min"][c].as_f64().unwrap() as f32,
                lo,
                "{file} min[{c}]"
            );
            assert_eq!(
                fb[0]["max"][c].as_f64().unwrap() as f32,
                hi,
                "{file} max[{c}]"
            );
        }
    }
    // A NaN and an infinity planted in frames 2 and 3 are found, named and kept out of the boxes.
    let mut bad = pc2.clone();
    bad[32 + 12 * 441 + 12 * 5 + 4..][..4].copy_from_slice(&f32::NAN.to_le_bytes());
    bad[32 + 2 * 12 * 441 + 12 * 7..][..4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    d.write("bad.pc2", &bad);
    for file in ["bad.pc2", "bad.usda"] {
        if file == "bad.usda" {
            d.ok(&[
                "convert",
                "bad.pc2",
                "bad.usda",
                "--mesh",
                "out/sheet.0001.obj",
            ]);
        }
        let v = inspect_json(&d, file);
        assert_eq!(v["non_finite_values"], 2, "{file}");
        assert_eq!(v["non_finite"][0]["frame"], 2.0);
        assert_eq!(v["non_finite"][0]["point"], 5);
        assert_eq!(v["non_finite"][0]["position"][1], "NaN");
        assert_eq!(v["non_finite"][1]["frame"], 3.0);
        assert_eq!(v["non_finite"][1]["point"], 7);
        assert_eq!(v["non_finite"][1]["position"][0], "inf");
        let fb = v["frame_bounds"].as_array().unwrap();
        assert_eq!(fb[0]["non_finite"], 0);
        assert_eq!(fb[1]["non_finite"], 1);
        assert_eq!(fb[2]["non_finite"], 1);
        assert!(fb[1]["min"][1].as_f64().unwrap().is_finite());
    }
}
