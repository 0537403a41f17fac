//! A shot far from the world origin bakes what the same shot at the origin bakes, moved: the
//! simulation runs in a frame shifted by whole metres near the garments (`src/bake_origin.rs`), so
//! the solver's f32 positions keep the resolution they have near the origin; and the frame follows
//! cloth that travels far during the bake.

use clothbake_io::{read_pc2, Pc2Cache};
use glam::Vec3;
use serde_json::Value;

use crate::harness::Dir;

/// A 33×33 sheet 1 m wide at 1 m height with every coordinate a multiple of 1/32 m (exact in f32
/// at 1 km too), as an OBJ.
fn sheet_obj() -> String {
    let n = 33;
    let mut obj = String::new();
    for j in 0..n {
        for i in 0..n {
            let (x, z) = (i as f32 / 32.0 - 0.5, j as f32 / 32.0 - 0.5);
            obj += &format!("v {x} 1 {z}\n");
        }
    }
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let v = |i: usize, j: usize| j * n + i + 1;
            obj += &format!("f {} {} {}\n", v(i, j), v(i + 1, j), v(i + 1, j + 1));
            obj += &format!("f {} {} {}\n", v(i, j), v(i + 1, j + 1), v(i, j + 1));
        }
    }
    obj
}

/// The sheet carried 0.5 m along x over 16 frames by its two front corners (pins following its
/// keyed transform), draping over a sphere that moves with it, above a ground plane; everything
/// moved by (`dx`, 0, `dz`) m.
fn scene(dx: f32, dz: f32) -> String {
    let key = |frame: u32, x: f32| {
        format!("{{ frame = {frame}, matrix = [1,0,0,0, 0,1,0,0, 0,0,1,0, {x},0,{dz},1] }}")
    };
    format!(
        r#"[scene]
fps = 24.0
frame_start = 1
frame_end = 17
substeps = 5

[output]
formats = ["pc2"]

[[garment]]
name = "sheet"
mesh = "sheet.obj"
material = "cotton"
self_collision = false
transform_keys = [{}, {}]

[garment.pin]
vertices = [0, 32]
follow = "node"

[[collider]]
type = "plane"
point = [{dx}, 0.0, {dz}]
normal = [0.0, 1.0, 0.0]

[[collider]]
type = "sphere"
center = [{dx}, 0.4, {dz}]
radius = 0.3

[[collider.keys]]
frame = 1
center = [{dx}, 0.4, {dz}]

[[collider.keys]]
frame = 17
center = [{}, 0.4, {dz}]
"#,
        key(1, dx),
        key(17, dx + 0.5),
        dx + 0.5,
    )
}

/// Bakes the scenes `near` and `far` into near/ and far/ with their reports; the two reports.
fn bake_near_and_far(d: &Dir, near: &str, far: &str) -> (Value, Value) {
    for (scene, out) in [(near, "near"), (far, "far")] {
        let report = format!("{out}/report.json");
        d.ok(&["bake", scene, "-o", out, "--report", &report]);
    }
    (report(d, "near"), report(d, "far"))
}

/// Asserts that far/sheet.pc2 is near/sheet.pc2 moved by (`dx`, 0, `dz`), each coordinate rounded
/// once to its f32 neighbour; the near cache.
fn assert_far_is_near_moved(d: &Dir, dx: f32, dz: f32) -> Pc2Cache {
    let (a, b) = (
        read_pc2(&d.path("near/sheet.pc2")).expect("near cache"),
        read_pc2(&d.path("far/sheet.pc2")).expect("far cache"),
    );
    assert_eq!(a.frames.len(), b.frames.len());
    for (fa, fb) in a.frames.iter().zip(&b.frames) {
        for (p, q) in fa.iter().zip(fb) {
            assert_eq!((q.x, q.y, q.z), (p.x + dx, p.y, p.z + dz), "{p} vs {q}");
        }
    }
    a
}

fn report(d: &Dir, out: &str) -> Value {
    serde_json::from_slice(&std::fs::read(d.path(&format!("{out}/report.json"))).unwrap())
        .expect("report JSON")
}

#[test]
fn a_shot_a_kilometre_away_bakes_the_same_motion_as_at_the_origin() {
    let d = Dir::new();
    d.write("sheet.obj", sheet_obj());
    let (dx, dz) = (1024.0f32, -2048.0f32);
    d.write("near.toml", scene(0.0, 0.0));
    d.write("far.toml", scene(dx, dz));
    let (near, far) = bake_near_and_far(&d, "near.toml", "far.toml");
    assert_eq!(
        near["simulation_origin"],
        serde_json::json!([0.0, 0.0, 0.0])
    );
    assert_eq!(
        far["simulation_origin"],
        serde_json::json!([1024.0, 0.0, -2048.0])
    );
    // The same substeps, solves and measurements, to the bit.
    assert_eq!(near["substep_totals"], far["substep_totals"]);
    let frames = |r: &Value| r["frames"].as_array().expect("frames").clone();
    for (a, b) in frames(&near).iter().zip(&frames(&far)) {
        for key in ["max_strain", "min_distance", "contacts", "cg_iterations"] {
            assert_eq!(a[key], b[key], "frame {}: {key}", a["frame"]);
        }
    }
    // The sheet reached the sphere and moved with the pins.
    let contacts: u64 = frames(&near)
        .iter()
        .map(|f| f["contacts"].as_u64().unwrap())
        .sum();
    assert!(contacts > 0, "the sheet never touched the sphere");
    let a = assert_far_is_near_moved(&d, dx, dz);
    assert_eq!(a.frames.len(), 17);
    assert!((a.frames[16][0].x - a.frames[0][0].x - 0.5).abs() < 1e-6);
    // In the garment's own (keyed) frame, as the Blender add-on reads its caches, nothing of the
    // kilometre is left: the local caches are equal to the bit.
    for name in ["near", "far"] {
        let text = std::fs::read_to_string(d.path(&format!("{name}.toml"))).unwrap();
        let local = text.replacen(
            "formats = [\"pc2\"]",
            "formats = [\"pc2\"]\nspace = \"local\"",
            1,
        );
        assert_ne!(text, local);
        d.write(&format!("{name}_local.toml"), local);
        d.ok(&[
            "bake",
            &format!("{name}_local.toml"),
            "-o",
            &format!("{name}_local"),
        ]);
    }
    let (a, b) = (
        read_pc2(&d.path("near_local/sheet.pc2")).expect("near local cache"),
        read_pc2(&d.path("far_local/sheet.pc2")).expect("far local cache"),
    );
    assert_eq!(a.frames, b.frames);
    // Local: the pinned corner stays where the keyed frame carries it.
    assert_eq!(a.frames[16][0], Vec3::new(-0.5, 1.0, -0.5));
}

/// The 33×33 sheet tilted by atan(1/2) about z (its height 1 + x/2), falling freely for `frames`
/// frames (about 250 m in 200 frames, at the linear air drag's terminal speed of 74 m/s), moved by
/// (`dx`, 0, `dz`) m: no contact, no pin, so in exact arithmetic it never stretches.
fn fall(d: &Dir, name: &str, dx: f32, dz: f32, frames: u32) -> String {
    let tilted: String = sheet_obj()
        .lines()
        .map(|l| match l.strip_prefix("v ") {
            Some(v) => {
                let c: Vec<f32> = v.split(' ').map(|t| t.parse().unwrap()).collect();
                format!("v {} {} {}\n", c[0], 1.0 + 0.5 * c[0], c[2])
            }
            None => format!("{l}\n"),
        })
        .collect();
    d.write("tilted.obj", tilted);
    let scene = format!(
        r#"[scene]
fps = 24.0
frame_start = 1
frame_end = {frames}
substeps = 5

[output]
formats = ["pc2"]

[[garment]]
name = "sheet"
mesh = "tilted.obj"
material = "cotton"
self_collision = false
transform = [1,0,0,0, 0,1,0,0, 0,0,1,0, {dx},0,{dz},1]
"#
    );
    let path = format!("{name}.toml");
    d.write(&path, scene);
    path
}

#[test]
fn the_frame_follows_cloth_that_falls_hundreds_of_metres() {
    let d = Dir::new();
    d.write("sheet.obj", sheet_obj());
    let (dx, dz) = (1024.0f32, -2048.0f32);
    let near = fall(&d, "near", 0.0, 0.0, 200);
    let far = fall(&d, "far", dx, dz, 200);
    let (rn, rf) = bake_near_and_far(&d, &near, &far);
    // The frame moved down with the sheet, every 16–17 m, the far one's by the same metres.
    let moves = |r: &Value| {
        r["simulation_origin_moves"]
            .as_array()
            .expect("moves")
            .clone()
    };
    let (mn, mf) = (moves(&rn), moves(&rf));
    assert!(mn.len() >= 10, "{mn:?}");
    assert_eq!(mn.len(), mf.len());
    for (a, b) in mn.iter().zip(&mf) {
        assert_eq!(a["frame"], b["frame"]);
        let (a, b) = (&a["origin"], &b["origin"]);
        assert_eq!(a[0].as_f64(), Some(0.0));
        assert_eq!(b[0].as_f64(), Some(dx as f64));
        assert_eq!(a[1], b[1]);
        assert_eq!(b[2].as_f64(), Some(dz as f64));
    }
    let last = mn.last().unwrap()["origin"][1].as_f64().unwrap();
    assert!(last < -200.0, "the sheet fell to {last} m");
    // Near its origin the sheet keeps the resolution of the start: its stretch stays at the
    // solver's tolerance (with a frame fixed at the start, 4e-4 by 250 m down, doubling with
    // each doubling of the distance).
    let frames = rn["frames"].as_array().unwrap();
    let worst = frames[100..]
        .iter()
        .map(|f| f["max_strain"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(worst < 1e-4, "max strain {worst} after frame 100");
    // The far bake is the near one moved, to the bit.
    assert_eq!(rn["substep_totals"], rf["substep_totals"]);
    assert_far_is_near_moved(&d, dx, dz);
}

/// A far, falling shot stopped by SIGTERM (a checkpoint, after the frame has moved) and resumed
/// bakes the caches of an uninterrupted bake: the checkpoint keeps the frame its state is in.
#[test]
fn a_far_shot_resumes_to_the_caches_of_an_uninterrupted_bake() {
    let d = Dir::new();
    d.write("sheet.obj", sheet_obj());
    let scene = fall(&d, "far", 1024.0, -2048.0, 200);
    let args = [
        "bake",
        &scene,
        "--format",
        "pc2,usd",
        "--checkpoint-every",
        "10",
    ];
    let mut reference = args.to_vec();
    reference.extend(["-o", "ref", "--report", "ref/report.json"]);
    d.ok(&reference);
    let mut out = args.to_vec();
    out.extend(["-o", "out", "--report", "out/report.json"]);
    assert_eq!(crate::resume::run_until_signal(&d, &out, 120), Some(85));
    out.push("--resume");
    d.ok(&out);
    crate::resume::assert_same_caches(&d, "ref", "out");
}
