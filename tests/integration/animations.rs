//! Multi-animation glTF files: `inspect` lists every animation, the scene's `animation` key selects
//! one, and a missing one is an input error (exit 2) naming the field and the file and listing the
//! animations.

use serde_json::{json, Value};

use crate::harness::Dir;

/// The `rigged-figure` sample with its character copied to `two.gltf`, which holds two animations:
/// "Walk" (the original) and "Wave" (its channels of the first joint only).
fn two_animation_figure(d: &Dir) {
    d.sample("rigged-figure");
    let text = std::fs::read_to_string(d.path("rigged-figure/RiggedFigure.gltf")).unwrap();
    let mut g: Value = serde_json::from_str(&text).unwrap();
    let mut walk = g["animations"][0].clone();
    walk["name"] = json!("Walk");
    let mut wave = walk.clone();
    let node = wave["channels"][0]["target"]["node"].clone();
    let kept: Vec<Value> = wave["channels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["target"]["node"] == node)
        .cloned()
        .collect();
    wave["channels"] = json!(kept);
    wave["name"] = json!("Wave");
    g["animations"] = json!([walk, wave]);
    d.write("rigged-figure/two.gltf", g.to_string());
}

/// The sample scene with the character replaced by `two.gltf` and `extra` added to its collider.
fn scene_with(d: &Dir, extra: &str) -> String {
    let text = std::fs::read_to_string(d.path("rigged-figure/scene.toml")).unwrap();
    let old = "file = \"RiggedFigure.gltf\"\n";
    assert!(text.contains(old));
    let text = text.replace(old, &format!("file = \"two.gltf\"\n{extra}"));
    d.write("rigged-figure/two.toml", text);
    "rigged-figure/two.toml".to_string()
}

#[test]
fn inspect_lists_every_animation() {
    let d = Dir::new();
    two_animation_figure(&d);
    let r = d.ok(&["inspect", "--json", "rigged-figure/two.gltf"]);
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    let anims = v["animations"].as_array().expect("animations");
    assert_eq!(anims.len(), 2, "{v}");
    assert_eq!(anims[0]["index"], 0);
    assert_eq!(anims[0]["name"], "Walk");
    assert_eq!(anims[0]["channels"], 57);
    assert_eq!(anims[1]["index"], 1);
    assert_eq!(anims[1]["name"], "Wave");
    assert_eq!(anims[1]["channels"], 3);
    for a in anims {
        let s = a["seconds"].as_array().expect("seconds");
        assert_eq!(s[0].as_f64(), Some(0.0));
        assert!((s[1].as_f64().unwrap() - 1.25).abs() < 1e-6, "{a}");
    }
    let text = d.ok(&["inspect", "rigged-figure/two.gltf"]).stdout;
    assert!(
        text.contains("\"name\":\"Walk\"") && text.contains("\"name\":\"Wave\""),
        "{text}"
    );
}

#[test]
fn a_missing_animation_is_an_input_error_listing_the_animations() {
    let d = Dir::new();
    two_animation_figure(&d);
    for (key, shown) in [("\"Run\"", "\"Run\""), ("7", "animations[7]")] {
        let scene = scene_with(&d, &format!("animation = {key}\n"));
        for args in [vec!["check", &scene], vec!["bake", &scene, "-o", "out"]] {
            let cmd = args[0];
            let r = d.run(&args);
            assert_eq!(r.code, 2, "{cmd}: {}{}", r.stdout, r.stderr);
            let want = format!("two.toml: collider[0].animation: no animation {shown} in ");
            assert!(r.stderr.contains(&want), "{cmd}: {}", r.stderr);
            assert!(
                r.stderr
                    .contains("two.gltf; it has 2: 0: \"Walk\", 1: \"Wave\""),
                "{cmd}: {}",
                r.stderr
            );
        }
        assert!(d.files_under("out").is_empty());
    }
}

#[test]
fn a_selected_animation_bakes_and_changes_the_colliders() {
    let d = Dir::new();
    two_animation_figure(&d);
    let mut shapes = Vec::new();
    for key in ["\"Walk\"", "1", "\"Wave\""] {
        let scene = scene_with(&d, &format!("animation = {key}\n"));
        let text = std::fs::read_to_string(d.path(&scene)).unwrap();
        d.write(
            &scene,
            text.replace(
                "report = \"report.json\"",
                "report = \"report.json\"\nreport_colliders = true",
            ),
        );
        d.ok(&["bake", &scene, "-o", "out", "--frames", "1..3"]);
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(d.path("out/report.json")).unwrap())
                .unwrap();
        shapes.push(report["frames"][2]["colliders"].clone());
    }
    assert!(shapes[0].is_array());
    assert_ne!(
        shapes[0], shapes[1],
        "Walk and animations[1] (Wave) pose alike"
    );
    assert_eq!(shapes[1], shapes[2], "animations[1] is Wave");
}
