//! Selecting which animation of a multi-animation glTF drives a garment or a character
//! (`animation = "Name"` or an index), and the error when it does not exist. The file is the
//! repository's RiggedFigure with two animations: 0 "Arms" (the original channels of a few
//! joints only) and 1 "Full" (the original animation, all 57 channels).

use std::path::{Path, PathBuf};

use clothbake_io::{load_scene, LoadedScene, Shape};
use glam::Vec3;
use serde_json::{json, Value};

fn figure_json() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/rigged-figure/RiggedFigure.gltf");
    serde_json::from_str(&std::fs::read_to_string(path).expect("read RiggedFigure")).unwrap()
}

/// Writes the original figure (`one.gltf`) and the two-animation copy (`two.gltf`) into `dir`.
fn write_figures(dir: &Path) {
    let original = figure_json();
    std::fs::write(dir.join("one.gltf"), original.to_string()).unwrap();
    let mut two = original.clone();
    let full = original["animations"][0].clone();
    let mut arms = full.clone();
    // Keep the channels of the first two animated joints only (their samplers stay as they are).
    let first_nodes: Vec<Value> = {
        let mut v: Vec<Value> = Vec::new();
        for c in full["channels"].as_array().unwrap() {
            if !v.contains(&c["target"]["node"]) {
                v.push(c["target"]["node"].clone());
            }
        }
        v.truncate(2);
        v
    };
    let kept: Vec<Value> = full["channels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| first_nodes.contains(&c["target"]["node"]))
        .cloned()
        .collect();
    assert!(kept.len() < full["channels"].as_array().unwrap().len());
    arms["channels"] = json!(kept);
    arms["name"] = json!("Arms");
    let mut full_named = full;
    full_named["name"] = json!("Full");
    two["animations"] = json!([arms, full_named]);
    std::fs::write(dir.join("two.gltf"), two.to_string()).unwrap();
}

/// A scene with RiggedFigure as a garment (its mesh, skinned) and as `auto` proxies.
fn load(dir: &Path, file: &str, animation: Option<&str>) -> clothbake_io::Result<LoadedScene> {
    let anim = animation
        .map(|a| format!("animation = {a}\n"))
        .unwrap_or_default();
    let text = format!(
        "[scene]\nframe_start = 0\ntime_offset = 0.0\n\n[[garment]]\nname = \"body\"\nmesh = \"{file}\"\n{anim}\n\
         [[collider]]\ntype = \"gltf\"\nfile = \"{file}\"\nproxies = \"auto\"\n{anim}"
    );
    let scene: PathBuf = dir.join("scene.toml");
    std::fs::write(&scene, text).unwrap();
    load_scene(&scene, &["cotton"])
}

/// Proxy shapes at `frame` and the garment's rest positions.
fn pose(s: &mut LoadedScene, frame: f32) -> (Vec<Shape>, Vec<Vec3>) {
    let mut shapes = Vec::new();
    s.colliders.shapes_at(frame, &mut shapes);
    (shapes, s.garments[0].positions.clone())
}

#[test]
fn the_selected_animation_drives_garment_and_proxies() {
    let dir = tempfile::tempdir().unwrap();
    write_figures(dir.path());
    let mut reference = load(dir.path(), "one.gltf", None).unwrap();
    // Frame 0 is t = 0 (the garment's rest state); frame 20 is t = 0.83 s, mid-animation.
    let (want_shapes, want_rest) = pose(&mut reference, 20.0);
    for sel in ["\"Full\"", "1"] {
        let mut s = load(dir.path(), "two.gltf", Some(sel)).unwrap();
        assert_eq!(s.frame_end, reference.frame_end, "{sel}");
        let (shapes, rest) = pose(&mut s, 20.0);
        assert_eq!(shapes, want_shapes, "{sel}");
        assert_eq!(rest, want_rest, "{sel}");
    }
    // The default (the first animation, "Arms") and an explicit "Arms" both pose differently.
    for sel in [None, Some("\"Arms\""), Some("0")] {
        let mut s = load(dir.path(), "two.gltf", sel).unwrap();
        let (shapes, _) = pose(&mut s, 20.0);
        assert_eq!(shapes.len(), want_shapes.len());
        assert_ne!(shapes, want_shapes, "{sel:?}");
    }
}

#[test]
fn a_missing_animation_names_the_field_the_file_and_the_choices() {
    let dir = tempfile::tempdir().unwrap();
    write_figures(dir.path());
    for (sel, shown) in [("\"Run\"", "\"Run\""), ("2", "animations[2]")] {
        let e = load(dir.path(), "two.gltf", Some(sel))
            .err()
            .expect("error")
            .to_string();
        assert!(
            e.contains("scene.toml: garment[0].animation: no animation "),
            "{e}"
        );
        assert!(e.contains(&format!("no animation {shown} in ")), "{e}");
        assert!(
            e.contains("two.gltf; it has 2: 0: \"Arms\", 1: \"Full\""),
            "{e}"
        );
    }
    // The original file's only animation has no name.
    let e = load(dir.path(), "one.gltf", Some("\"Walk\""))
        .err()
        .expect("error")
        .to_string();
    assert!(e.contains("one.gltf; it has 1: 0: (unnamed)"), "{e}");
}

/// The error loading a scene of `text` (next to a one-triangle `sheet.obj`).
fn scene_error(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let obj = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n";
    std::fs::write(dir.path().join("sheet.obj"), obj).unwrap();
    let scene = dir.path().join("scene.toml");
    std::fs::write(&scene, text).unwrap();
    match load_scene(&scene, &["cotton"]) {
        Ok(_) => panic!("loaded:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn animation_is_only_a_key_of_gltf_sources() {
    let e = scene_error("[[garment]]\nname = \"s\"\nmesh = \"sheet.obj\"\nanimation = \"Walk\"\n");
    assert!(
        e.contains("garment[0].animation: only applies to glTF meshes"),
        "{e}"
    );
    let e = scene_error(
        "[[collider]]\ntype = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nanimation = 0\n",
    );
    let want = "collider[0].animation: is not a key of a \"sphere\" collider";
    assert!(e.contains(want), "{e}");
}
