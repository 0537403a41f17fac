//! Self-collision through the CLI: the `self-fold` sample bakes with no intersecting triangles, no
//! unresolved cloth–cloth collisions and no vertex closer than 0.9 × its thickness to the ground, as
//! reported per frame in both the bake report and the `--json` frame events.

use serde_json::Value;

use crate::harness::Dir;

#[test]
fn self_fold_reports_zero_unresolved_and_zero_intersections_every_frame() {
    let d = Dir::new();
    let scene = d.sample("self-fold");
    let text = std::fs::read_to_string(d.path(&scene)).expect("scene");
    let thickness: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("thickness = "))
        .and_then(|v| v.trim().parse().ok())
        .expect("garment thickness in the sample");
    let r = d.ok(&["bake", &scene, "-o", "out", "--json", "--report", "r.json"]);
    let events: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect();
    assert!(
        !events.iter().any(|e| e["event"] == "warning"
            && e["message"]
                .as_str()
                .unwrap_or("")
                .contains("self-collision")),
        "{}",
        r.stdout
    );
    let progress: Vec<&Value> = events.iter().filter(|e| e["event"] == "frame").collect();
    let report: Value =
        serde_json::from_slice(&std::fs::read(d.path("r.json")).expect("report")).expect("json");
    let frames = report["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), progress.len());
    assert!(frames.len() >= 30, "{} frames", frames.len());
    let mut self_contact_frames = 0;
    for (f, p) in frames.iter().zip(&progress) {
        for rec in [f, *p] {
            assert_eq!(rec["unresolved"].as_u64(), Some(0), "{rec}");
            assert_eq!(rec["self_intersections"].as_u64(), Some(0), "{rec}");
        }
        let d = f["min_distance"].as_f64().expect("min_distance");
        assert!(
            d >= 0.9 * thickness,
            "frame {}: a vertex {d} m from the ground (thickness {thickness} m)",
            f["frame"]
        );
        if f["substeps"].as_u64().unwrap_or(0) > 0 && d < 2.0 * thickness {
            self_contact_frames += 1;
        }
    }
    assert!(
        self_contact_frames > 20,
        "the sheet barely touched the ground"
    );
}

/// The `twist` (Baraff & Witkin's twisted tube, wrung into folds pressing on each other) and
/// `skirt-walk` (legs pushing a skirt into itself) samples, every frame of their whole scenes: no
/// intersecting triangles and no unresolved cloth–cloth collision, and the cloth does touch itself.
#[test]
fn twist_and_skirt_walk_have_zero_intersections_at_every_frame() {
    for sample in ["twist", "skirt-walk"] {
        let d = Dir::new();
        let scene = d.sample(sample);
        d.ok(&["bake", &scene, "-o", "out", "--report", "r.json"]);
        let report: Value =
            serde_json::from_slice(&std::fs::read(d.path("r.json")).expect("report"))
                .expect("json");
        let frames = report["frames"].as_array().expect("frames");
        assert!(frames.len() >= 40, "{sample}: {} frames", frames.len());
        let mut touching = 0;
        for f in frames {
            assert_eq!(f["self_intersections"].as_u64(), Some(0), "{sample}: {f}");
            assert_eq!(f["unresolved"].as_u64(), Some(0), "{sample}: {f}");
            touching += usize::from(f["self_contacts"].as_u64().expect("self_contacts") > 0);
        }
        assert!(
            touching >= 10,
            "{sample}: cloth touched cloth in {touching} frames"
        );
    }
}
