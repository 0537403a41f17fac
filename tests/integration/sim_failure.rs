//! Exit code 1: a valid scene whose simulation cannot be advanced. A wind of 3e38 m/s is accepted
//! by the scene format and by `check` (finite), but its drag overflows f32, so every linear solve of
//! frame 2 is non-finite down to the smallest substep: the bake must fail naming frame and garment,
//! and leave no cache behind.

use serde_json::Value;

use crate::harness::Dir;

/// The `sheet-on-sphere` sample with a wind of `speed` m/s along +X.
fn windy_sheet(d: &Dir, speed: &str) -> String {
    let scene = d.sample("sheet-on-sphere");
    let text = std::fs::read_to_string(d.path(&scene)).expect("read scene");
    let text = text.replace(
        "[output]",
        &format!("[wind]\nvelocity = [{speed}, 0.0, 0.0]\n\n[output]"),
    );
    assert!(text.contains("[wind]"));
    d.write("sheet-on-sphere/windy.toml", text);
    "sheet-on-sphere/windy.toml".to_string()
}

#[test]
fn overflowing_wind_fails_the_bake_with_exit_1_naming_frame_and_garment() {
    let d = Dir::new();
    let scene = windy_sheet(&d, "3e38");
    // Valid input: `check` accepts it.
    let c = d.run(&["check", &scene]);
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);

    let r = d.run(&[
        "bake", &scene, "-o", "out", "--frames", "1..6", "--format", "pc2,obj",
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let msg = r.stderr.trim();
    assert!(
        msg.starts_with("error: simulation failed: frame 2: garment 'sheet': the linear solve produced non-finite values"),
        "{msg}"
    );
    assert!(
        d.files_under("out").is_empty(),
        "{:?}",
        d.files_under("out")
    );

    let j = d.run(&["bake", &scene, "-o", "out", "--frames", "1..6", "--json"]);
    assert_eq!(j.code, 1, "{}{}", j.stdout, j.stderr);
    let events: Vec<Value> = j
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let last = events.last().expect("events");
    assert_eq!(last["event"], "error");
    assert_eq!(last["code"], 1);
    let m = last["message"].as_str().unwrap_or("");
    assert!(m.contains("frame 2: garment 'sheet'"), "{m}");
    // Frame 1 (the rest state) was reported; frame 2 never was.
    let frames: Vec<&Value> = events.iter().filter(|e| e["event"] == "frame").collect();
    assert_eq!(frames.len(), 1, "{events:?}");
    assert!(
        d.files_under("out").is_empty(),
        "{:?}",
        d.files_under("out")
    );
}

#[test]
fn strong_but_finite_wind_still_bakes() {
    // The same scene with a gale (30 m/s) is fine: the failure above is the overflow, not the wind.
    let d = Dir::new();
    let scene = windy_sheet(&d, "30.0");
    let r = d.ok(&["bake", &scene, "-o", "out", "--frames", "1..6"]);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert_eq!(d.files_under("out"), vec!["report.json", "sheet.pc2"]);
}
