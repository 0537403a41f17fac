//! Every sample scene bakes (a few frames each, to keep the suite fast).

use clothbake_io::read_pc2;

use crate::harness::Dir;

fn bake_sample(name: &str, frames: &str) -> Vec<Vec<glam::Vec3>> {
    let d = Dir::new();
    let scene = d.sample(name);
    let r = d.ok(&["bake", &scene, "-o", "out", "--frames", frames]);
    assert!(r.stdout.contains("baked"), "{}", r.stdout);
    let caches: Vec<String> = d
        .files_under("out")
        .into_iter()
        .filter(|f| f.ends_with(".pc2"))
        .collect();
    assert_eq!(caches.len(), 1, "{name}: {caches:?}");
    let pc2 = read_pc2(&d.path(&format!("out/{}", caches[0]))).expect("read pc2");
    assert!(pc2.frames.iter().flatten().all(|p| p.is_finite()), "{name}");
    pc2.frames
}

#[test]
fn sheet_on_sphere_bakes() {
    assert_eq!(bake_sample("sheet-on-sphere", "1..4").len(), 4);
}

#[test]
fn flag_wind_bakes_and_the_pole_edge_stays() {
    let frames = bake_sample("flag-wind", "1..6");
    // Pinned pole edge: vertex 0 (bottom-left) does not move.
    assert_eq!(frames[0][0], frames[5][0]);
    // The free corner moved downwind (+x is already the flag's extent; wind also pushes +z).
    assert_ne!(frames[0][24], frames[5][24]);
}

#[test]
fn skirt_walk_bakes() {
    let frames = bake_sample("skirt-walk", "1..6");
    assert_eq!(frames.len(), 6);
}

#[test]
fn cape_run_bakes_and_follows_the_runner() {
    let frames = bake_sample("cape-run", "1..8");
    // The figure runs along +z: the pinned shoulder row moves forward with it.
    assert!(
        frames[7][0].z > frames[0][0].z + 0.05,
        "{} -> {}",
        frames[0][0].z,
        frames[7][0].z
    );
}

#[test]
fn self_fold_bakes() {
    // Frames 10+ are the first self-contacts as the sheet piles up.
    assert_eq!(bake_sample("self-fold", "1..14").len(), 14);
}

#[test]
fn twist_bakes_and_the_end_ring_turns() {
    let frames = bake_sample("twist", "1..8");
    let ring = 16; // vertices per ring at the default resolution
    let last_ring = frames[0].len() - ring;
    // The held ring stays; the turning ring moves.
    assert!((frames[7][0] - frames[0][0]).length() < 1e-5);
    assert!((frames[7][last_ring] - frames[0][last_ring]).length() > 1e-3);
}

#[test]
fn rigged_figure_bakes_outside_its_auto_proxies() {
    let d = Dir::new();
    let scene = d.sample("rigged-figure");
    d.ok(&[
        "bake", &scene, "-o", "out", "--frames", "1..6", "--report", "r.json",
    ]);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path("r.json")).expect("report")).expect("json");
    // 17 capsules fitted to the figure's bones (2 of its 19 joints have too few vertices) + the ground.
    let colliders = report["colliders"].as_array().expect("colliders");
    assert!(colliders.len() >= 15, "{} colliders", colliders.len());
    for f in report["frames"].as_array().expect("frames") {
        let d = f["min_distance"].as_f64().expect("min_distance");
        assert!(
            d > -1e-3,
            "frame {}: a skirt vertex is {d} m inside a collider",
            f["frame"]
        );
    }
}

/// `--resolution` changes the generated garment, and the scene's pins follow it.
#[test]
fn resolution_changes_the_garment() {
    let d = Dir::new();
    d.ok(&["sample", "flag-wind", "-o", "coarse", "--resolution", "6"]);
    let obj = std::fs::read_to_string(d.path("coarse/flag.obj")).expect("flag.obj");
    // 6 x 4 quads -> 7 x 5 vertices; the pole edge is the first vertex of each of the 5 rows.
    assert_eq!(obj.lines().filter(|l| l.starts_with("v ")).count(), 35);
    let scene = std::fs::read_to_string(d.path("coarse/scene.toml")).expect("scene");
    assert!(scene.contains("vertices = [0, 7, 14, 21, 28]"), "{scene}");
    d.ok(&["bake", "coarse/scene.toml", "-o", "out", "--frames", "1..3"]);
    let pc2 = read_pc2(&d.path("out/flag.pc2")).expect("pc2");
    assert_eq!(pc2.num_points, 35);
    let list = d.ok(&["sample", "--list"]).stdout;
    for name in [
        "dress-walk",
        "sheet-on-sphere",
        "skirt-walk",
        "rigged-figure",
        "cotton",
        "silk",
    ] {
        assert!(list.contains(name), "sample --list lacks {name}");
    }
}
