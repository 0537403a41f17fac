//! Garments moved by something other than a glTF rig: a `driver` point cache (PC2 or MDD) that pins
//! follow (`follow = "cache"`), `transform_keys` for OBJ garments (pins with `follow = "node"` and
//! `output.space = "local"`), and `scene.preroll`.

use std::f32::consts::FRAC_PI_2;

use clothbake_io::{read_pc2, MddWriter, Pc2Writer};
use glam::{Mat4, Quat, Vec3};
use serde_json::Value;

use crate::harness::{Dir, Run};

/// Columns and rows of the test sheet.
const NX: usize = 9;
const NY: usize = 9;
/// Side of the square sheet (m).
const SIDE: f32 = 0.5;
/// Height of the top (pinned) row (m).
const TOP: f32 = 1.5;

/// A vertical `NX × NY` sheet in the XY plane (Y up), top row at y = TOP, centred on x = 0;
/// vertex `r * NX + c` is row r (from the top), column c. Returns the OBJ text and positions.
fn sheet() -> (String, Vec<Vec3>) {
    let mut text = String::new();
    let mut p = Vec::new();
    for r in 0..NY {
        for c in 0..NX {
            let v = Vec3::new(
                -0.5 * SIDE + SIDE * c as f32 / (NX - 1) as f32,
                TOP - SIDE * r as f32 / (NY - 1) as f32,
                0.0,
            );
            text.push_str(&format!("v {} {} {}\n", v.x, v.y, v.z));
            p.push(v);
        }
    }
    for r in 0..NY - 1 {
        for c in 0..NX - 1 {
            let a = r * NX + c + 1;
            let (b, cc, d) = (a + 1, a + NX + 1, a + NX);
            text.push_str(&format!("f {a} {b} {cc} {d}\n"));
        }
    }
    (text, p)
}

/// The top row (source indices).
fn top_row() -> Vec<u32> {
    (0..NX as u32).collect()
}

/// The rigid motion at step `k` of `steps`: 1.6 m forward along +X while turning a quarter turn
/// about the vertical axis through the sheet's centre line.
fn carry(k: usize, steps: usize) -> Mat4 {
    let s = k as f32 / steps as f32;
    Mat4::from_translation(Vec3::new(1.6 * s, 0.0, 0.0)) * Mat4::from_rotation_y(FRAC_PI_2 * s)
}

/// Driver samples: `rest` carried by [`carry`] over `frames` samples.
fn driver_frames(rest: &[Vec3], frames: usize) -> Vec<Vec<Vec3>> {
    (0..frames)
        .map(|k| {
            let m = carry(k, frames - 1);
            rest.iter().map(|&p| m.transform_point3(p)).collect()
        })
        .collect()
}

fn write_pc2(d: &Dir, rel: &str, frames: &[Vec<Vec3>]) {
    let path = d.path(rel);
    let mut w = Pc2Writer::create(&path, frames[0].len(), 1.0, 1.0).unwrap();
    for f in frames {
        w.write_frame(f).unwrap();
    }
    w.finish().unwrap();
}

fn write_mdd(d: &Dir, rel: &str, frames: &[Vec<Vec3>]) {
    let path = d.path(rel);
    let times: Vec<f32> = (0..frames.len()).map(|k| k as f32 / 24.0).collect();
    let mut w = MddWriter::create(&path, frames[0].len(), &times).unwrap();
    for f in frames {
        w.write_frame(f).unwrap();
    }
    w.finish().unwrap();
}

fn read_out(d: &Dir, rel: &str) -> Vec<Vec<Vec3>> {
    read_pc2(&d.path(rel)).unwrap().frames
}

fn max_dist(a: &[Vec3], b: &[Vec3], which: impl Iterator<Item = usize>) -> f32 {
    which.map(|i| a[i].distance(b[i])).fold(0.0, f32::max)
}

/// Scene text: frames 1..=24, one garment `cloth` from `sheet.obj` with `garment_extra` lines and
/// a `[garment.pin]` table with `pin` lines.
fn scene(scene_extra: &str, garment_extra: &str, pin: &str) -> String {
    format!(
        "[scene]\nframe_start = 1\nframe_end = 24\n{scene_extra}\n\
         [output]\ndir = \"out\"\nformats = [\"pc2\"]\n\n\
         [[garment]]\nname = \"cloth\"\nmesh = \"sheet.obj\"\nself_collision = false\n{garment_extra}\n\
         [garment.pin]\n{pin}\n"
    )
}

/// Every vertex's distance to the nearest pinned (top-row) vertex of its column, as a multiple of
/// its rest distance: > 1 is stretch. Cloth left behind by moving pins stretches without bound.
fn worst_column_stretch(x: &[Vec3]) -> f32 {
    let mut worst = 0.0f32;
    for r in 1..NY {
        for c in 0..NX {
            let rest = SIDE * r as f32 / (NY - 1) as f32;
            worst = worst.max(x[r * NX + c].distance(x[c]) / rest);
        }
    }
    worst
}

/// Bakes the sheet with its top row pinned (`pin_extra` added to `[garment.pin]`) to a PC2 driver
/// that carries it 1.6 m while turning ([`driver_frames`], 24 frames); returns (driver, cache).
fn bake_carried_sheet(pin_extra: &str) -> (Vec<Vec<Vec3>>, Vec<Vec<Vec3>>) {
    let d = Dir::new();
    let (obj, rest) = sheet();
    d.write("sheet.obj", obj);
    let frames = driver_frames(&rest, 24);
    write_pc2(&d, "anim.pc2", &frames);
    let pin = format!("vertices = [0, 1, 2, 3, 4, 5, 6, 7, 8]\n{pin_extra}follow = \"cache\"");
    d.write("scene.toml", scene("", "driver = \"anim.pc2\"", &pin));
    d.ok(&["bake", "scene.toml"]);
    (frames, read_out(&d, "out/cloth.pc2"))
}

/// (a) Hard pins follow a PC2 driver that carries the sheet 1.6 m forward while turning a
/// quarter turn in one second: every pinned vertex of the cache sits on the driver at every
/// frame, and the unpinned cloth comes along (no vertex farther from its column's pin than 1.1×
/// its rest distance, i.e. at most 10 % stretch, where a left-behind sheet would stretch ~3×).
#[test]
fn hard_pins_follow_a_pc2_driver() {
    let (frames, out) = bake_carried_sheet("");
    assert_eq!(out.len(), 24);
    let pinned = top_row();
    let mut worst_pin = 0.0f32;
    let mut worst_stretch = 0.0f32;
    for (f, x) in out.iter().enumerate() {
        worst_pin = worst_pin.max(max_dist(x, &frames[f], pinned.iter().map(|&v| v as usize)));
        worst_stretch = worst_stretch.max(worst_column_stretch(x));
    }
    eprintln!("pc2 driver: pins off by {worst_pin} m, worst column stretch {worst_stretch}");
    assert!(
        worst_pin <= 1e-4,
        "pinned vertex off its driver by {worst_pin} m"
    );
    assert!(
        worst_stretch < 1.1,
        "cloth left behind: stretch {worst_stretch}"
    );
    // The whole sheet arrived: its centroid moved at least 1.5 m along +X.
    let centroid = |x: &[Vec3]| x.iter().copied().sum::<Vec3>() / x.len() as f32;
    let moved = centroid(&out[23]).x - centroid(&out[0]).x;
    assert!(moved > 1.5, "centroid moved {moved} m");
    // The first output frame is the driver's shape (the simulation starts from it).
    let start = max_dist(&out[0], &frames[0], 0..out[0].len());
    assert!(
        start <= 1e-6,
        "first frame differs from the driver by {start} m"
    );
}

/// The same with an MDD driver written in Blender axes (`up = "z"`): world positions converted
/// `(x, y, z)_blender → (x, z, −y)`; the cache is written back in Z-up.
#[test]
fn hard_pins_follow_an_mdd_driver_in_blender_axes() {
    let d = Dir::new();
    let (_, rest_y) = sheet();
    // The mesh file and the driver in Blender axes: (x, y, z)_yup → (x, −z, y).
    let to_z = |p: Vec3| Vec3::new(p.x, -p.z, p.y);
    let mut obj = String::new();
    for p in &rest_y {
        let q = to_z(*p);
        obj.push_str(&format!("v {} {} {}\n", q.x, q.y, q.z));
    }
    let (text, _) = sheet();
    for l in text.lines().filter(|l| l.starts_with("f ")) {
        obj.push_str(l);
        obj.push('\n');
    }
    d.write("sheet.obj", obj);
    let frames_y = driver_frames(&rest_y, 24);
    let frames_z: Vec<Vec<Vec3>> = frames_y
        .iter()
        .map(|f| f.iter().map(|&p| to_z(p)).collect())
        .collect();
    write_mdd(&d, "anim.mdd", &frames_z);
    d.write(
        "scene.toml",
        scene(
            "",
            "up = \"z\"\ndriver = \"anim.mdd\"",
            "vertices = [0, 1, 2, 3, 4, 5, 6, 7, 8]\nfollow = \"cache\"",
        )
        .replace("formats = [\"pc2\"]", "formats = [\"pc2\"]\nup = \"z\""),
    );
    d.ok(&["bake", "scene.toml"]);
    let out = read_out(&d, "out/cloth.pc2");
    assert_eq!(out.len(), 24);
    let mut worst = 0.0f32;
    for (f, x) in out.iter().enumerate() {
        worst = worst.max(max_dist(x, &frames_z[f], 0..NX));
    }
    eprintln!("mdd driver: pins off by {worst} m");
    assert!(worst <= 1e-4, "pinned vertex off its driver by {worst} m");
}

/// Partial pins (weight 0.5, goal springs of 0.5 × 2000 N/m each) follow the same moving targets.
/// The nine springs carry the sheet (37.5 g: 0.04 mm static stretch) and must accelerate it to the
/// driver's 1.6 m/s from rest: each stays within 5 mm of its target at every frame (0.6 mm
/// measured), while measurably not on it (> 10 µm; hard pins are exact).
#[test]
fn partial_pins_are_pulled_along_by_the_driver() {
    let (frames, out) =
        bake_carried_sheet("weights = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]\n");
    let mut worst = 0.0f32;
    for (f, x) in out.iter().enumerate() {
        worst = worst.max(max_dist(x, &frames[f], 0..NX));
    }
    eprintln!("partial pins: worst lag {worst} m");
    assert!(worst < 0.005, "partial pin {worst} m from its target");
    // The goal springs do not hold exactly: some lag is measurable.
    assert!(
        worst > 1e-5,
        "partial pins behaved as hard pins ({worst} m)"
    );
}

/// The rest shape comes from the mesh file, not the driver: a driver stretched to 1.3× the sheet's
/// height hangs from its top row; the cloth starts there and pulls back to its own length (after a
/// second the bottom row hangs less than 1.02× the mesh's height below the pins — cotton's own
/// sag under gravity is far below 2 % — where the driver's is 1.3×).
#[test]
fn rest_shape_is_the_mesh_files_not_the_drivers() {
    let d = Dir::new();
    let (obj, rest) = sheet();
    d.write("sheet.obj", obj);
    let stretched: Vec<Vec3> = rest
        .iter()
        .map(|p| Vec3::new(p.x, TOP - 1.3 * (TOP - p.y), p.z))
        .collect();
    write_pc2(&d, "anim.pc2", &vec![stretched; 24]);
    d.write(
        "scene.toml",
        scene(
            "",
            "driver = \"anim.pc2\"",
            "vertices = [0, 1, 2, 3, 4, 5, 6, 7, 8]\nfollow = \"cache\"",
        ),
    );
    d.ok(&["bake", "scene.toml"]);
    let out = read_out(&d, "out/cloth.pc2");
    let drop = |x: &[Vec3]| TOP - x[(NY - 1) * NX + NX / 2].y;
    assert!(
        (drop(&out[0]) - 1.3 * SIDE).abs() < 1e-5,
        "starts from the driver's shape: {}",
        drop(&out[0])
    );
    let end = drop(&out[23]);
    eprintln!("rest shape: bottom {end} m below the pins (mesh 0.5, driver 0.65)");
    assert!(end < 1.02 * SIDE, "bottom hangs {end} m below the pins");
}

/// Column-major matrix array of a rigid motion in Blender axes.
/// Writes `sheet.obj`: `positions` as its `v` lines and the faces of `text` (an OBJ).
fn write_obj(d: &Dir, text: &str, positions: impl Iterator<Item = Vec3>) {
    let mut obj = String::new();
    for q in positions {
        obj.push_str(&format!("v {} {} {}\n", q.x, q.y, q.z));
    }
    for l in text.lines().filter(|l| l.starts_with("f ")) {
        obj.push_str(l);
        obj.push('\n');
    }
    d.write("sheet.obj", obj);
}

/// Bakes the scene with `garment` and `pin` lines twice, written in Z-up world space and in the
/// garment's local space; returns (world, local) frames.
fn bake_world_and_local(d: &Dir, garment: &str, pin: &str) -> (Vec<Vec<Vec3>>, Vec<Vec<Vec3>>) {
    for space in ["world", "local"] {
        d.write(
            &format!("{space}.toml"),
            scene("", garment, pin).replace(
                "formats = [\"pc2\"]",
                &format!("formats = [\"pc2\"]\nup = \"z\"\nspace = \"{space}\""),
            ),
        );
        d.ok(&["bake", &format!("{space}.toml"), "-o", space]);
    }
    (
        read_out(d, "world/cloth.pc2"),
        read_out(d, "local/cloth.pc2"),
    )
}

fn mat_array(m: Mat4) -> String {
    let a = m.to_cols_array();
    let items: Vec<String> = a.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", items.join(", "))
}

/// (b) `transform_keys` (one key per frame, in Blender axes) carry an OBJ garment whose pins
/// follow its node: a local bake times each frame's key matrix equals the world bake to 1e-5 m,
/// and the pinned vertices sit on the keyed rest positions.
#[test]
fn transform_keys_and_local_output_equal_the_world_bake() {
    let d = Dir::new();
    let (text, rest_y) = sheet();
    // The OBJ in Blender axes.
    let to_z = |p: Vec3| Vec3::new(p.x, -p.z, p.y);
    write_obj(&d, &text, rest_y.iter().map(|&p| to_z(p)));
    // Keys in Blender axes: forward along +X, turning about Z, slightly scaled.
    let key = |f: i32| {
        let s = (f - 1) as f32 / 23.0;
        Mat4::from_scale_rotation_translation(
            Vec3::splat(1.0 + 0.1 * s),
            Quat::from_rotation_z(FRAC_PI_2 * s),
            Vec3::new(1.6 * s, 0.3, 0.0),
        )
    };
    let keys: Vec<String> = (1..=24)
        .map(|f| format!("{{ frame = {f}, matrix = {} }}", mat_array(key(f))))
        .collect();
    let garment = format!("up = \"z\"\ntransform_keys = [\n{}\n]", keys.join(",\n"));
    let pin = "vertices = [0, 1, 2, 3, 4, 5, 6, 7, 8]\nfollow = \"node\"";
    let (world, local) = bake_world_and_local(&d, &garment, pin);
    assert_eq!(world.len(), 24);
    assert_eq!(local.len(), 24);
    let mut worst = 0.0f32;
    let mut worst_pin = 0.0f32;
    for f in 0..24 {
        let m = key(f as i32 + 1);
        for (i, (l, w)) in local[f].iter().zip(&world[f]).enumerate() {
            worst = worst.max(m.transform_point3(*l).distance(*w));
            if i < NX {
                worst_pin = worst_pin.max(w.distance(m.transform_point3(to_z(rest_y[i]))));
            }
        }
    }
    eprintln!("transform_keys: local x key vs world {worst} m, pins {worst_pin} m");
    assert!(worst <= 1e-5, "local × key differs from world by {worst} m");
    assert!(
        worst_pin <= 1e-4,
        "pinned vertex off its keyed position by {worst_pin} m"
    );
    // The garment really moved.
    assert!(world[23][0].x - world[0][0].x > 1.0);
}

fn start_event(r: &Run) -> Value {
    r.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["event"] == "start")
        .expect("start event")
}

/// Air damping (kg/(m²·s)) of the pre-roll scenes: a swinging cotton sheet settles within about
/// a second (time constant density / damping ≈ 0.1 s) instead of swinging for many seconds.
const DAMPED: &str = "air_damping = 1.0";

/// Largest displacement (m) of any vertex between two frames.
fn largest_step(a: &[Vec3], b: &[Vec3]) -> f32 {
    max_dist(a, b, 0..a.len())
}

/// (c) Pre-roll: a sheet pinned along one edge starts horizontal and swings down. With 36 frames
/// of pre-roll the written frames are the settled sheet: the largest vertex step between the first
/// two output frames is under a tenth of the step without pre-roll; the cache still holds
/// frame_start..frame_end; the `start` event and the report count the pre-roll frames.
#[test]
fn preroll_settles_before_the_first_written_frame() {
    let d = Dir::new();
    let (text, rest_y) = sheet();
    // Horizontal: rows go along −Z instead of down.
    write_obj(
        &d,
        &text,
        rest_y.iter().map(|p| Vec3::new(p.x, TOP, p.y - TOP)),
    );
    let pin = "vertices = [0, 1, 2, 3, 4, 5, 6, 7, 8]";
    d.write("plain.toml", scene(DAMPED, "", pin));
    d.write(
        "preroll.toml",
        scene(&format!("{DAMPED}\npreroll = 36"), "", pin).replace(
            "formats = [\"pc2\"]",
            "formats = [\"pc2\"]\nreport = \"report.json\"",
        ),
    );
    d.ok(&["bake", "plain.toml", "-o", "a"]);
    let r = d.ok(&["bake", "preroll.toml", "-o", "b", "--json"]);
    let start = start_event(&r);
    assert_eq!(start["preroll"], 36, "{start}");
    assert_eq!(start["frame_start"], 1, "{start}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path("b/report.json")).unwrap()).unwrap();
    assert_eq!(report["preroll_frames"], 36);
    assert_eq!(report["frames"].as_array().unwrap().len(), 24);
    let plain = read_out(&d, "a/cloth.pc2");
    let pre = read_pc2(&d.path("b/cloth.pc2")).unwrap();
    assert_eq!(pre.frames.len(), 24);
    assert_eq!(pre.start_frame, 1.0);
    // Largest vertex step between consecutive written frames, and between the first two.
    let most = |x: &[Vec<Vec3>]| {
        x.windows(2)
            .map(|w| largest_step(&w[0], &w[1]))
            .fold(0.0, f32::max)
    };
    let (most_plain, most_pre) = (most(&plain), most(&pre.frames));
    let step_plain = largest_step(&plain[0], &plain[1]);
    let step_pre = largest_step(&pre.frames[0], &pre.frames[1]);
    eprintln!(
        "preroll: largest step plain {most_plain} m, pre-rolled {most_pre} m; \
         first step plain {step_plain} m, pre-rolled {step_pre} m"
    );
    assert!(
        most_plain > 0.05,
        "without pre-roll the sheet should fall: {most_plain}"
    );
    assert!(
        most_pre < 0.1 * most_plain,
        "pre-rolled largest step {most_pre} m vs {most_plain} m without"
    );
    // Settled means hanging: the bottom row is below the pins by most of the sheet's side.
    let hang = TOP - pre.frames[0][(NY - 1) * NX + NX / 2].y;
    assert!(hang > 0.9 * SIDE, "hangs {hang} m");
    let c = d.ok(&["check", "preroll.toml"]);
    assert!(
        c.stdout.contains("pre-roll: 36 frame(s) from animation"),
        "{}",
        c.stdout
    );
}

/// Pre-roll with a driver, `preroll_from = "animation"`: driver sample 0 is the first simulated
/// frame (frame_start − preroll), the garment starts from that sample, and the written frames
/// have the pins on the driver's samples preroll.. (the cache's sample 0 is frame_start).
#[test]
fn preroll_from_animation_reads_the_driver_from_the_first_simulated_frame() {
    let d = Dir::new();
    let (obj, rest) = sheet();
    d.write("sheet.obj", obj);
    let frames = driver_frames(&rest, 34); // frames −9..=24
    write_pc2(&d, "anim.pc2", &frames);
    d.write(
        "scene.toml",
        scene(
            "preroll = 10",
            "driver = \"anim.pc2\"",
            "vertices = [0, 1, 2, 3, 4, 5, 6, 7, 8]\nfollow = \"cache\"",
        ),
    );
    d.ok(&["bake", "scene.toml"]);
    let out = read_out(&d, "out/cloth.pc2");
    assert_eq!(out.len(), 24);
    let mut worst = 0.0f32;
    for (f, x) in out.iter().enumerate() {
        worst = worst.max(max_dist(x, &frames[f + 10], 0..NX));
    }
    assert!(worst <= 1e-4, "pins off the driver by {worst} m");
}

/// `preroll_from = "rest"`: the driver is read from frame_start only (a driver of frames 1..24 is
/// enough), the garment starts from its mesh-file shape and its pins ease from there to the
/// driver at frame_start, where the sheet carried 1 m away arrives settled: no vertex moves more
/// than 5 mm between the first two written frames (0.7 mm measured; the eased pre-roll ends with
/// zero pin speed, a jump to the driver would leave the sheet swinging).
#[test]
fn preroll_from_rest_eases_to_the_first_frame() {
    let d = Dir::new();
    let (obj, rest) = sheet();
    d.write("sheet.obj", obj);
    // A driver that has already carried the sheet 1 m along +X at frame 1, then holds still.
    let away: Vec<Vec3> = rest.iter().map(|&p| p + Vec3::X).collect();
    write_pc2(&d, "anim.pc2", &vec![away.clone(); 24]);
    let pin = "vertices = [0, 1, 2, 3, 4, 5, 6, 7, 8]\nfollow = \"cache\"";
    d.write(
        "rest.toml",
        scene(
            "preroll = 24\npreroll_from = \"rest\"",
            "driver = \"anim.pc2\"\ndriver_frame_start = 1",
            pin,
        ),
    );
    let r = d.ok(&["bake", "rest.toml", "-o", "r"]);
    assert!(
        r.stderr.is_empty() || !r.stderr.contains("warning"),
        "{}",
        r.stderr
    );
    let out = read_out(&d, "r/cloth.pc2");
    assert_eq!(out.len(), 24);
    // Pins on the driver at every written frame.
    for x in &out {
        assert!(max_dist(x, &away, 0..NX) <= 1e-4);
    }
    let step = largest_step(&out[0], &out[1]);
    eprintln!("preroll from rest: first step {step} m");
    assert!(
        step < 0.01,
        "sheet still moving {step} m/frame after the eased pre-roll"
    );
    // Carried, not left behind.
    assert!(worst_column_stretch(&out[0]) < 1.1);
}

/// What an error case writes besides the mesh and scene.
type Setup = Box<dyn Fn(&Dir)>;
/// (what, setup, scene text, message needles).
type ErrorCase = (&'static str, Setup, String, Vec<&'static str>);

/// Driver and key errors: exit 2, the scene file and the field named, nothing written.
#[test]
fn driver_errors_name_the_field() {
    let (obj, rest) = sheet();
    let pin_cache = "vertices = [0]\nfollow = \"cache\"";
    let cases: Vec<ErrorCase> = vec![
        (
            "wrong point count",
            Box::new(|d: &Dir| write_pc2(d, "anim.pc2", &vec![vec![Vec3::ZERO; 5]; 24])),
            scene("", "driver = \"anim.pc2\"", pin_cache),
            vec!["scene.toml", "garment[0].driver", "5 points", "81 vertices"],
        ),
        (
            "too few samples",
            Box::new({
                let rest = rest.clone();
                move |d: &Dir| write_pc2(d, "anim.pc2", &vec![rest.clone(); 20])
            }),
            scene("", "driver = \"anim.pc2\"", pin_cache),
            vec!["scene.toml", "garment[0].driver", "frames 1..20", "frames 1..24"],
        ),
        (
            "NaN",
            Box::new({
                let rest = rest.clone();
                move |d: &Dir| {
                    let mut f = vec![rest.clone(); 24];
                    f[7][13].y = f32::NAN;
                    write_pc2(d, "anim.pc2", &f)
                }
            }),
            scene("", "driver = \"anim.pc2\"", pin_cache),
            vec!["scene.toml", "garment[0].driver", "sample 7", "point 13"],
        ),
        (
            "cache without driver",
            Box::new(|_: &Dir| {}),
            scene("", "", pin_cache),
            vec!["scene.toml", "garment[0].pin.follow", "driver"],
        ),
        (
            "transform and transform_keys",
            Box::new(|_: &Dir| {}),
            scene(
                "",
                &format!(
                    "transform = {m}\ntransform_keys = [{{ frame = 1, matrix = {m} }}]",
                    m = mat_array(Mat4::IDENTITY)
                ),
                "vertices = [0]",
            ),
            vec!["scene.toml", "garment[0].transform_keys", "not both"],
        ),
        (
            "keys out of order",
            Box::new(|_: &Dir| {}),
            scene(
                "",
                &format!(
                    "transform_keys = [{{ frame = 2, matrix = {m} }}, {{ frame = 2, matrix = {m} }}]",
                    m = mat_array(Mat4::IDENTITY)
                ),
                "vertices = [0]",
            ),
            vec!["scene.toml", "garment[0].transform_keys[1].frame"],
        ),
        (
            "driver not a cache",
            Box::new(|_: &Dir| {}),
            scene("", "driver = \"anim.abc\"", pin_cache),
            vec!["scene.toml", "garment[0].driver", ".pc2 or .mdd"],
        ),
        (
            "missing driver",
            Box::new(|_: &Dir| {}),
            scene("", "driver = \"nope.pc2\"", pin_cache),
            vec!["scene.toml", "garment[0].driver", "not found"],
        ),
    ];
    for (what, setup, text, needles) in cases {
        let d = Dir::new();
        d.write("sheet.obj", &obj);
        setup(&d);
        d.write("scene.toml", text);
        let r = d.run(&["bake", "scene.toml", "-o", "out"]);
        assert_eq!(
            r.code, 2,
            "{what}: expected exit 2:\n{}\n{}",
            r.stdout, r.stderr
        );
        for n in &needles {
            assert!(
                r.stderr.contains(n),
                "{what}: message lacks {n:?}: {}",
                r.stderr
            );
        }
        assert!(d.files_under("out").is_empty(), "{what}: output written");
        let c = d.run(&["check", "scene.toml"]);
        assert_eq!(c.code, 2, "{what}: check: {}", c.stderr);
    }
}

/// `--frames` past a driver's last sample is an input error too.
#[test]
fn frames_past_the_driver_are_an_error() {
    let d = Dir::new();
    let (obj, rest) = sheet();
    d.write("sheet.obj", obj);
    write_pc2(&d, "anim.pc2", &vec![rest; 24]);
    d.write(
        "scene.toml",
        scene(
            "",
            "driver = \"anim.pc2\"",
            "vertices = [0]\nfollow = \"cache\"",
        ),
    );
    let r = d.run(&["bake", "scene.toml", "--frames", "1..30"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("garment[0].driver"), "{}", r.stderr);
    assert!(r.stderr.contains("frames 1..30"), "{}", r.stderr);
}

/// What the Blender add-on exports: the OBJ in object-local Blender axes, a world-space driver
/// (Blender axes) and `matrix_world` per frame as `transform_keys`, written back with
/// `space = "local", up = "z"`. Local positions times each frame's key equal the driver on the
/// pinned vertices (1e-4 m) and the world bake everywhere (1e-5 m).
#[test]
fn blender_export_round_trip() {
    let d = Dir::new();
    let (text, rest_y) = sheet();
    let to_z = |p: Vec3| Vec3::new(p.x, -p.z, p.y);
    write_obj(&d, &text, rest_y.iter().map(|&p| to_z(p)));
    // matrix_world: forward along +X, turning about Z (Blender's up).
    let key = |k: usize| {
        let s = k as f32 / 23.0;
        Mat4::from_rotation_translation(
            Quat::from_rotation_z(FRAC_PI_2 * s),
            Vec3::new(1.6 * s, 0.0, 0.0),
        )
    };
    let local_z: Vec<Vec3> = rest_y.iter().map(|&p| to_z(p)).collect();
    let frames: Vec<Vec<Vec3>> = (0..24)
        .map(|k| {
            local_z
                .iter()
                .map(|&p| key(k).transform_point3(p))
                .collect()
        })
        .collect();
    write_pc2(&d, "anim.pc2", &frames);
    let keys: Vec<String> = (0..24)
        .map(|k| format!("{{ frame = {}, matrix = {} }}", k + 1, mat_array(key(k))))
        .collect();
    let garment = format!(
        "up = \"z\"\ndriver = \"anim.pc2\"\ntransform_keys = [\n{}\n]",
        keys.join(",\n")
    );
    let pin = "vertices = [0, 1, 2, 3, 4, 5, 6, 7, 8]\nfollow = \"cache\"";
    let (world, local) = bake_world_and_local(&d, &garment, pin);
    let (mut worst, mut worst_pin) = (0.0f32, 0.0f32);
    for k in 0..24 {
        let shown: Vec<Vec3> = local[k]
            .iter()
            .map(|&p| key(k).transform_point3(p))
            .collect();
        worst = worst.max(max_dist(&shown, &world[k], 0..shown.len()));
        worst_pin = worst_pin.max(max_dist(&shown, &frames[k], 0..NX));
    }
    eprintln!("blender round trip: displayed vs world {worst} m, pins vs driver {worst_pin} m");
    assert!(
        worst <= 1e-5,
        "displayed differs from the world bake by {worst} m"
    );
    assert!(
        worst_pin <= 1e-4,
        "pinned vertex off the driver by {worst_pin} m"
    );
}

/// `check` and `inspect` show the pre-roll, the first simulated frame and each garment's driver.
#[test]
fn check_and_inspect_show_preroll_and_driver() {
    let d = Dir::new();
    let (obj, rest) = sheet();
    d.write("sheet.obj", obj);
    write_pc2(&d, "anim.pc2", &driver_frames(&rest, 29));
    d.write(
        "scene.toml",
        scene(
            "preroll = 5\npreroll_from = \"animation\"",
            "driver = \"anim.pc2\"",
            "vertices = [0, 1, 2]\nfollow = \"cache\"",
        ),
    );
    let c = d.ok(&["check", "--json", "scene.toml"]);
    let v: Value = serde_json::from_str(c.stdout.trim()).unwrap();
    assert_eq!(v["preroll"], 5, "{v}");
    assert_eq!(v["preroll_from"], "animation");
    assert_eq!(v["first_simulated_frame"], -4);
    assert_eq!(v["garments"][0]["follow"], "cache");
    assert_eq!(v["garments"][0]["driver"]["samples"], 29);
    assert_eq!(v["garments"][0]["driver"]["frame_start"], -4);
    assert_eq!(v["garments"][0]["driver"]["frame_end"], 24);
    let text = d.ok(&["check", "scene.toml"]).stdout;
    assert!(
        text.contains("pre-roll: 5 frame(s) from animation (simulated from frame -4, not written)"),
        "{text}"
    );
    assert!(text.contains("29 samples, frames -4..24"), "{text}");
    let i = d.ok(&["inspect", "--json", "scene.toml"]);
    let v: Value = serde_json::from_str(i.stdout.trim()).unwrap();
    assert_eq!(v["format"], "scene");
    assert_eq!(v["frames"], 24);
    assert_eq!(v["preroll"], 5);
    assert_eq!(v["first_simulated_frame"], -4);
    assert_eq!(v["garments"][0]["pinned"], 3);
    assert_eq!(v["garments"][0]["driver"]["frame_end"], 24);
    assert_eq!(v["garments"][0]["transform_keys"], Value::Null);
}
