//! `clothbake bake`: the built-in sample (no scene, a newcomer's first command) and the outputs.

use clothbake_io::read_pc2;

use crate::harness::Dir;

/// `clothbake bake` with no scene bakes the dress-walk sample into ./clothbake-out: a dress cache of
/// 10,212 points (2,220 pinned) on the walking figure, outside the body proxies and free of
/// self-intersections. Six frames keep it cheap; the whole walk is checked at a coarse resolution
/// in `dress_walk_pins_follow_the_walking_rig`.
#[test]
fn default_bake_is_the_walking_dress() {
    let d = Dir::new();
    d.ok(&["bake", "--frames", "1..6"]);
    let pc2 = read_pc2(&d.path("clothbake-out/dress.pc2")).expect("read dress.pc2");
    assert!(pc2.num_points >= 10_000);
    assert_eq!(pc2.num_points, 10_212);
    assert_eq!(pc2.frames.len(), 6);
    assert_eq!(pc2.start_frame, 1.0);
    assert!(pc2.frames.iter().flatten().all(|p| p.is_finite()));
    let report: serde_json::Value = serde_json::from_slice(
        &std::fs::read(d.path("clothbake-out/report.json")).expect("report.json"),
    )
    .expect("report is JSON");
    assert_eq!(report["scene"], "dress-walk (built-in sample)");
    assert_eq!(report["garments"][0]["name"], "dress");
    assert_eq!(report["garments"][0]["pinned"], 2_220);
    for (k, f) in report["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .enumerate()
    {
        // thickness 0.005 m: nothing closer to a proxy or the ground than 90 % of it.
        let min = f["min_distance"].as_f64().expect("min_distance");
        assert!(min >= 0.9 * 0.005, "frame {}: min_distance {min}", k + 1);
        assert_eq!(f["self_intersections"], 0, "frame {}", k + 1);
    }
    // The pinned bodice moves with the figure (it starts walking in these frames), the hem does not
    // fall through the ground.
    let pinned_moved = (pc2.frames[5][0] - pc2.frames[0][0]).length();
    assert!(
        pinned_moved > 1e-3,
        "pinned vertex 0 moved {pinned_moved} m"
    );
    let lowest = pc2.frames[5]
        .iter()
        .map(|p| p.y)
        .fold(f32::INFINITY, f32::min);
    assert!(lowest > 0.0, "lowest y {lowest}");
}

/// Over the whole walk (all 48 frames, a coarse dress of 24 around) the pinned vertices ride the
/// rig: the hip-line ring (the last pinned ring, skinned to the hips joint alone) keeps its centre
/// 0.07 m below the pelvis proxy's centre (the hips joint) in every frame, while the figure walks
/// more than 1.5 m forward; nothing goes into a proxy and the dress does not cross itself.
#[test]
fn dress_walk_pins_follow_the_walking_rig() {
    let d = Dir::new();
    d.ok(&["sample", "dress-walk", "-o", "coarse", "--resolution", "24"]);
    let text = std::fs::read_to_string(d.path("coarse/scene.toml")).expect("scene");
    let text = text.replacen("[output]\n", "[output]\nreport_colliders = true\n", 1);
    d.write("coarse/scene.toml", &text);
    d.ok(&["bake", "coarse/scene.toml", "-o", "out"]);
    let pc2 = read_pc2(&d.path("out/dress.pc2")).expect("read dress.pc2");
    assert_eq!(pc2.frames.len(), 48);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path("out/report.json")).expect("report.json"))
            .expect("report is JSON");
    let pinned = report["garments"][0]["pinned"].as_u64().expect("pinned") as usize;
    let around = 24;
    let pelvis = report["colliders"]
        .as_array()
        .expect("colliders")
        .iter()
        .position(|c| c == "CB_SPHERE_pelvis")
        .expect("pelvis proxy");
    let frames = report["frames"].as_array().expect("frames");
    let mut hips = Vec::new();
    for (k, f) in frames.iter().enumerate() {
        let c = &f["colliders"][pelvis]["center"];
        let c = glam::Vec3::new(
            c[0].as_f64().expect("x") as f32,
            c[1].as_f64().expect("y") as f32,
            c[2].as_f64().expect("z") as f32,
        );
        let ring = &pc2.frames[k][pinned - around..pinned];
        let centre = ring.iter().copied().sum::<glam::Vec3>() / around as f32;
        let off = centre - (c - glam::Vec3::new(0.0, 0.07, 0.0));
        assert!(
            off.length() < 1e-4,
            "frame {}: ring centre off by {off}",
            k + 1
        );
        let min = f["min_distance"].as_f64().expect("min_distance");
        assert!(min >= 0.9 * 0.005, "frame {}: min_distance {min}", k + 1);
        assert_eq!(f["self_intersections"], 0, "frame {}", k + 1);
        hips.push(c);
    }
    let walked = hips[47].z - hips[0].z;
    assert!(walked >= 1.5, "the figure walked {walked} m");
    // The free hem trails and swings but comes along: its centre is within 0.3 m of the hips.
    let hem = &pc2.frames[47][pc2.frames[47].len() - around..];
    let hem_z = hem.iter().map(|p| p.z).sum::<f32>() / around as f32;
    assert!(
        (hem_z - hips[47].z).abs() < 0.3,
        "hem at z {hem_z}, hips {}",
        hips[47].z
    );
}

/// The sheet-on-sphere sample writes a valid PC2 of the sheet falling onto the sphere, and a report.
#[test]
fn sheet_on_sphere_writes_a_valid_pc2_and_report() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    d.ok(&["bake", &scene, "--frames", "1..12", "-o", "clothbake-out"]);
    let pc2 = read_pc2(&d.path("clothbake-out/sheet.pc2")).expect("read sheet.pc2");
    // sheet-on-sphere: 20 x 20 quads -> 21 x 21 vertices, frames 1..12.
    assert_eq!(pc2.num_points, 441);
    assert_eq!(pc2.frames.len(), 12);
    assert_eq!(pc2.start_frame, 1.0);
    assert_eq!(pc2.sample_rate, 1.0);
    assert!(pc2.frames.iter().flatten().all(|p| p.is_finite()));
    // Sample 0 is the rest state: the flat sheet at 0.85 m.
    assert!(pc2.frames[0].iter().all(|p| (p.y - 0.85).abs() < 1e-5));
    // After 11 frames (0.46 s) the sheet has fallen onto the sphere (centre (0, 0.35, 0), r 0.35)
    // and its edges hang below the top of the sphere, but no vertex is inside it.
    let last = &pc2.frames[11];
    let lowest = last.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    assert!(lowest < 0.6, "edges should drape down, lowest y = {lowest}");
    let centre = glam::Vec3::new(0.0, 0.35, 0.0);
    let deepest = last
        .iter()
        .map(|p| (*p - centre).length() - 0.35)
        .fold(f32::INFINITY, f32::min);
    assert!(
        deepest > -0.002,
        "a vertex is {deepest} m inside the sphere"
    );

    let report: serde_json::Value = serde_json::from_slice(
        &std::fs::read(d.path("clothbake-out/report.json")).expect("report.json"),
    )
    .expect("report is JSON");
    let frames = report["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), 12);
    for f in &frames[1..] {
        assert!(f["substeps"].as_u64().unwrap_or(0) >= 1);
        assert!(f["cg_iterations"].as_u64().is_some());
        assert!(f["max_strain"].as_f64().is_some());
        assert!(f["seconds"].as_f64().is_some());
        assert!(f["min_distance"].as_f64().is_some());
    }
    // The report's distance is what anyone measures on the cache against the scene's colliders
    // (sphere and ground plane y = 0), frame by frame.
    for (k, f) in frames.iter().enumerate() {
        let measured = pc2.frames[k]
            .iter()
            .map(|p| ((*p - centre).length() - 0.35).min(p.y))
            .fold(f32::INFINITY, f32::min);
        let reported = f["min_distance"].as_f64().expect("min_distance") as f32;
        assert!(
            (measured - reported).abs() < 1e-4,
            "frame {k}: cache {measured}, report {reported}"
        );
    }
}

/// --format writes every requested cache, and the OBJ sequence has one file per frame.
#[test]
fn all_formats_and_report_colliders() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    let text = std::fs::read_to_string(d.path(&scene)).expect("scene");
    d.write(
        &scene,
        text.replace(
            "report = \"report.json\"",
            "report = \"report.json\"\nreport_colliders = true",
        ),
    );
    d.ok(&[
        "bake",
        &scene,
        "-o",
        "out",
        "--frames",
        "1..3",
        "--format",
        "pc2,mdd,obj",
        "--report",
        "r.json",
    ]);
    let files = d.files_under("out");
    assert_eq!(
        files,
        [
            "sheet.0001.obj",
            "sheet.0002.obj",
            "sheet.0003.obj",
            "sheet.mdd",
            "sheet.pc2"
        ]
    );
    let mdd = clothbake_io::read_mdd(&d.path("out/sheet.mdd")).expect("mdd");
    assert_eq!(mdd.frames.len(), 3);
    assert_eq!(mdd.num_points, 441);
    assert!((mdd.times[0] - 1.0 / 24.0).abs() < 1e-6);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path("r.json")).expect("r.json")).expect("json");
    let shapes = report["frames"][2]["colliders"]
        .as_array()
        .expect("collider shapes");
    assert_eq!(shapes.len(), 2);
    assert_eq!(shapes[0]["type"], "sphere");
    assert_eq!(shapes[1]["type"], "plane");
}

/// `[output] up = "z"` writes Blender's axes: (x, y, z) -> (x, -z, y).
#[test]
fn blender_axes_output() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    let text = std::fs::read_to_string(d.path(&scene)).expect("scene");
    d.write(
        &scene,
        text.replace("formats = [\"pc2\"]", "formats = [\"pc2\"]\nup = \"z\""),
    );
    d.ok(&["bake", &scene, "-o", "yup", "--frames", "1..2"]);
    let pc2 = read_pc2(&d.path("yup/sheet.pc2")).expect("pc2");
    let obj = std::fs::read_to_string(d.path("sheet-on-sphere/sheet.obj")).expect("obj");
    let first: Vec<f32> = obj
        .lines()
        .find(|l| l.starts_with("v "))
        .expect("a vertex")
        .split_whitespace()
        .skip(1)
        .map(|t| t.parse().expect("number"))
        .collect();
    let p = pc2.frames[0][0];
    assert_eq!([p.x, p.y, p.z], [first[0], -first[2], first[1]]);
}

/// `--frames A..B` after the scene's start pre-rolls from the rest frame: the written samples are
/// exactly frames A..B of the full bake, and PC2's startFrame is A.
#[test]
fn frames_after_the_start_are_pre_rolled() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    d.ok(&["bake", &scene, "--frames", "1..6", "-o", "full"]);
    d.ok(&["bake", &scene, "--frames", "4..6", "-o", "part"]);
    let full = read_pc2(&d.path("full/sheet.pc2")).expect("full");
    let part = read_pc2(&d.path("part/sheet.pc2")).expect("part");
    assert_eq!(part.start_frame, 4.0);
    assert_eq!(part.frames.len(), 3);
    assert_eq!(part.frames[..], full.frames[3..]);
    // Starting before the scene's first frame (the rest state) is an input error.
    let r = d.run(&["bake", &scene, "--frames", "0..3", "-o", "early"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--frames"), "{}", r.stderr);
    assert!(d.files_under("early").is_empty());
}

/// A reader that goes away (`clothbake ... | head -1`) does not turn finished work into a crash.
#[test]
fn a_closed_stdout_is_not_a_crash() {
    use std::process::{Command, Stdio};
    let d = Dir::new();
    d.sample("rigged-figure");
    let runs: [&[&str]; 3] = [
        &["bake", "--frames", "1..3", "-o", "out"],
        &["inspect", "rigged-figure/RiggedFigure.gltf"],
        &["sample", "--list"],
    ];
    for args in runs {
        let mut child = Command::new(env!("CARGO_BIN_EXE_clothbake"))
            .args(args)
            .current_dir(d.root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start clothbake");
        drop(child.stdout.take()); // the reader is gone before anything is printed
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert_eq!(d.files_under("out"), vec!["dress.pc2", "report.json"]);
}

/// `scene.strain_jump_floor` and `scene.strain_jump` reach the solver: without the floor the
/// sheet's impact with the sphere is retried at smaller substeps more often than with the
/// default one (jumps that end below 8 % stretch count), and a tighter bound more often still.
#[test]
fn strain_jump_and_its_floor_from_the_scene_drive_the_adaptive_substeps() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    let text = std::fs::read_to_string(d.path(&scene)).expect("read scene");
    let no_floor = text.replace("substeps = 4", "substeps = 4\nstrain_jump_floor = 0.0");
    assert_ne!(no_floor, text);
    d.write("sheet-on-sphere/no_floor.toml", no_floor.clone());
    let tight = no_floor.replace("substeps = 4", "substeps = 4\nstrain_jump = 0.002");
    d.write("sheet-on-sphere/tight.toml", tight);
    let substeps = |scene: &str, out: &str| -> u64 {
        d.ok(&["bake", scene, "-o", out, "--frames", "1..24"]);
        let report: serde_json::Value = serde_json::from_slice(
            &std::fs::read(d.path(&format!("{out}/report.json"))).expect("report"),
        )
        .expect("report is JSON");
        report["frames"]
            .as_array()
            .expect("frames")
            .iter()
            .map(|f| f["substeps"].as_u64().expect("substeps"))
            .sum()
    };
    let default = substeps(&scene, "default");
    let no_floor = substeps("sheet-on-sphere/no_floor.toml", "no_floor");
    let tight = substeps("sheet-on-sphere/tight.toml", "tight");
    assert!(
        no_floor > default,
        "strain_jump_floor 0: {no_floor} substeps, default: {default}"
    );
    assert!(
        tight > no_floor,
        "strain_jump 0.002 without the floor: {tight} substeps, strain_jump_floor 0: {no_floor}"
    );
}
