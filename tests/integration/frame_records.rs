//! Each frame's report record and `--json` frame event are completed after its measurement, which
//! runs beside the next frame's step: the records and events still come in frame order, each with
//! its own frame's `min_distance` and `self_intersections`, whatever the thread count, pre-roll,
//! checkpoints, or the frame being the last one (measured on its own).

use serde_json::{Map, Value};

use crate::harness::Dir;

/// The sheet sample with cloth–cloth collision off: it falls onto the sphere (a distinct
/// `min_distance` per early frame) and passes through itself around frames 13..17 with
/// `strain_jump_floor = 0` (on the default floor's trajectory it does not within 30 frames).
fn scene(d: &Dir) -> String {
    let scene = d.sample("sheet-on-sphere");
    let text = std::fs::read_to_string(d.path(&scene)).expect("read scene");
    let no_self = text.replacen("[[garment]]\n", "[[garment]]\nself_collision = false\n", 1);
    assert_ne!(text, no_self, "no [[garment]] in {scene}");
    let edited = no_self.replacen(
        "substeps = 4\n",
        "substeps = 4\nstrain_jump_floor = 0.0\n",
        1,
    );
    assert_ne!(no_self, edited, "no `substeps = 4` in {scene}");
    d.write(&scene, edited);
    scene
}

/// A report record or `--json` frame event without its timing fields.
type Untimed = Map<String, Value>;

/// `v` without `seconds`, `eta_seconds` and `stages`.
fn untimed(v: &Value) -> Untimed {
    let mut m = v.as_object().expect("object").clone();
    for k in ["seconds", "eta_seconds", "stages"] {
        m.remove(k);
    }
    m
}

/// Bakes `--frames FRAMES` into `out` with `args`; returns the report's frames and the `--json`
/// frame events, both untimed.
fn bake(
    d: &Dir,
    scene: &str,
    out: &str,
    frames: &str,
    args: &[&str],
) -> (Vec<Untimed>, Vec<Untimed>) {
    let mut all = vec!["bake", scene, "-o", out, "--frames", frames, "--json"];
    all.extend(args);
    let r = d.ok(&all);
    let events: Vec<Untimed> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .filter(|e| e["event"] == "frame")
        .map(|e| untimed(&e))
        .collect();
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(d.path(&format!("{out}/report.json"))).expect("read report"),
    )
    .expect("report JSON");
    let records = report["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(untimed)
        .collect();
    (records, events)
}

#[test]
fn frame_records_and_events_are_in_order_with_their_own_measurements() {
    let d = Dir::new();
    let scene = scene(&d);
    let (records, events) = bake(&d, &scene, "two", "1..18", &["--threads", "2"]);
    let frame_numbers = |v: &[Untimed]| -> Vec<i64> {
        v.iter()
            .map(|r| r["frame"].as_i64().expect("frame"))
            .collect()
    };
    assert_eq!(frame_numbers(&records), (1..=18).collect::<Vec<_>>());
    assert_eq!(frame_numbers(&events), (1..=18).collect::<Vec<_>>());
    for (i, (rec, ev)) in records.iter().zip(&events).enumerate() {
        assert_eq!(ev["done"], i as i64 + 1, "{ev:?}");
        for k in [
            "min_distance",
            "self_intersections",
            "substeps",
            "max_strain",
        ] {
            assert_eq!(rec[k], ev[k], "frame {}: {k}", i + 1);
        }
    }
    // The measurements change from frame to frame, so a record measured on another frame's
    // positions would differ.
    let column =
        |k: &str| -> Vec<f64> { records.iter().map(|r| r[k].as_f64().expect(k)).collect() };
    let distances = column("min_distance");
    assert!(
        distances[..5].windows(2).all(|w| w[0] > w[1]),
        "{distances:?}"
    );
    let crossings = column("self_intersections");
    assert!(
        crossings.iter().any(|&c| c > 0.0) && crossings.windows(2).any(|w| w[0] != w[1]),
        "{crossings:?}"
    );

    // One thread: the serial order (measure, then step); the same records and events.
    let (one, one_events) = bake(&d, &scene, "one", "1..18", &["--threads", "1"]);
    assert_eq!(one, records);
    assert_eq!(one_events, events);
    // Each of these bakes' last frame is measured on its own after the loop.
    for last in [5, 13, 17] {
        let (part, part_events) = bake(&d, &scene, "part", &format!("1..{last}"), &[]);
        assert_eq!(part, records[..last], "--frames 1..{last}");
        assert_eq!(part_events.len(), last);
    }
    // Pre-roll (frames 1..4 simulated, not written) and checkpoints after frames 5, 9, 13, 17
    // (measured before their checkpoint is saved).
    let (late, late_events) = bake(&d, &scene, "late", "5..18", &["--checkpoint-every", "4"]);
    assert_eq!(frame_numbers(&late), (5..=18).collect::<Vec<_>>());
    assert_eq!(frame_numbers(&late_events), (5..=18).collect::<Vec<_>>());
    assert_eq!(late, records[4..]);
}
