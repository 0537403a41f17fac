//! Scene TOML: the per-garment cloth–cloth switches (`self_collision`, `self_thickness`,
//! `self_friction`) are read per garment, with their documented defaults, and bad values are
//! errors naming the garment field.

use std::path::Path;

use clothbake_io::SceneFile;

fn parse(text: &str) -> Result<SceneFile, String> {
    SceneFile::parse(Path::new("scene.toml"), text, &["cotton"]).map_err(|e| e.to_string())
}

#[test]
fn self_collision_keys_are_per_garment() {
    let s = parse(
        r#"
[[garment]]
name = "shirt"
mesh = "shirt.obj"
self_collision = false

[[garment]]
name = "jacket"
mesh = "jacket.obj"
self_thickness = 0.0025
self_friction = 0.45

[[garment]]
name = "scarf"
mesh = "scarf.obj"
"#,
    )
    .unwrap();
    let g = &s.garments;
    assert!(!g[0].self_collision);
    assert!(g[1].self_collision && g[2].self_collision);
    assert_eq!((g[1].self_thickness, g[1].self_friction), (0.0025, 0.45));
    // Documented defaults (docs/scene-format.md): 4 mm, 0.2.
    assert_eq!((g[2].self_thickness, g[2].self_friction), (0.004, 0.2));
}

#[test]
fn bad_self_collision_values_name_the_field() {
    // A zero cloth thickness is rejected at load time (the solver needs a positive one), not
    // only when the bake starts.
    for (key, value) in [
        ("self_thickness", "-0.001"),
        ("self_thickness", "0.0"),
        ("self_friction", "-0.5"),
    ] {
        let text = format!(
            "[[garment]]\nname = \"a\"\nmesh = \"a.obj\"\n\n[[garment]]\nname = \"b\"\nmesh = \"b.obj\"\n{key} = {value}\n"
        );
        let e = parse(&text).unwrap_err();
        assert!(e.contains(key) && e.contains("garment[1]"), "{e}");
    }
}
