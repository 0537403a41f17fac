//! `--json`: nothing but JSON lines on stdout, with start, one frame event per cache sample, done.

use serde_json::Value;

use crate::harness::Dir;

#[test]
fn json_progress_lines_all_parse() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    let r = d.ok(&["bake", &scene, "--json", "--frames", "1..5", "-o", "out"]);
    let events: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds.first(), Some(&"start"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"done"), "{kinds:?}");
    let start = &events[0];
    assert_eq!(start["frames"], 5);
    assert_eq!(start["frame_start"], 1);
    assert_eq!(start["frame_end"], 5);
    assert_eq!(start["garments"], serde_json::json!(["sheet"]));
    let frames: Vec<&Value> = events.iter().filter(|e| e["event"] == "frame").collect();
    assert_eq!(frames.len(), 5);
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(f["frame"], i as i64 + 1);
        assert_eq!(f["done"], i as i64 + 1);
        assert_eq!(f["total"], 5);
        for key in [
            "substeps",
            "cg_iterations",
            "max_strain",
            "contacts",
            "seconds",
            "eta_seconds",
        ] {
            assert!(f[key].is_number(), "frame event without {key}: {f}");
        }
    }
    let done = events.last().expect("done");
    assert_eq!(done["frames"], 5);
    let outputs = done["outputs"].as_array().expect("outputs");
    assert_eq!(outputs.len(), 1);
    assert!(d.root().join(outputs[0].as_str().unwrap_or("")).is_file());
}

#[test]
fn json_errors_are_json_events_with_the_exit_code() {
    let d = Dir::new();
    let r = d.run(&["bake", "--json", "missing.toml"]);
    assert_eq!(r.code, 2);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stdout);
    let e: Value = serde_json::from_str(lines[0]).expect("JSON error event");
    assert_eq!(e["event"], "error");
    assert_eq!(e["code"], 2);
    assert!(
        e["message"].as_str().unwrap_or("").contains("missing.toml"),
        "{e}"
    );
}
