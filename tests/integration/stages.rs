//! Per-stage wall times: in the bake report per frame and summed, in the `done` event and in the human
//! summary. Checked for accounting (every stage present, sums consistent, the stages inside the frame's
//! own time), never for speed.

use serde_json::Value;

use crate::harness::Dir;

const STAGES: [&str; 8] = [
    "animation",
    "forces",
    "linear_solve",
    "body_collisions",
    "self_collision",
    "solver_other",
    "measurements",
    "cache_writing",
];

const SELF_PARTS: [&str; 4] = ["broad_phase", "proximity", "ccd", "impact_zones"];

const SOLVE_PARTS: [&str; 4] = ["preconditioner", "coarse", "start", "iterations"];

fn stage_sum(stages: &Value) -> f64 {
    STAGES
        .iter()
        .map(|k| stages[k].as_f64().unwrap_or(f64::NAN))
        .sum()
}

#[test]
fn report_has_stage_times_per_frame_that_add_up() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    let r = d.ok(&["bake", &scene, "-o", "out", "--frames", "1..6", "--json"]);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path("out/report.json")).unwrap())
            .expect("report JSON");
    let frames = report["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), 6);
    let mut totals = [0.0f64; 8];
    for f in frames {
        let st = &f["stages"];
        assert_eq!(st.as_object().map(|o| o.len()), Some(11), "{st}");
        for (i, k) in STAGES.iter().enumerate() {
            let v = st[k]
                .as_f64()
                .unwrap_or_else(|| panic!("stages.{k} missing: {st}"));
            assert!(v >= 0.0, "{k} = {v}");
            totals[i] += v;
        }
        // The stages are laps inside the frame's own wall time, and the parts of self-collision
        // laps inside its time.
        let seconds = f["seconds"].as_f64().unwrap();
        assert!(stage_sum(st) <= seconds + 1e-9, "{st} vs {seconds}");
        let parts: f64 = SELF_PARTS
            .iter()
            .map(|k| {
                let v = st["self_collision_parts"][k].as_f64();
                v.unwrap_or_else(|| panic!("self_collision_parts.{k} missing: {st}"))
            })
            .sum();
        // The parts are work times; the proximity part may have run alongside the linear solve
        // (`self_collision_ahead`, not a lap).
        let self_collision = st["self_collision"].as_f64().unwrap();
        let ahead = st["self_collision_ahead"]
            .as_f64()
            .expect("self_collision_ahead");
        assert!(
            ahead >= 0.0 && parts <= self_collision + ahead + 1e-9,
            "{st}"
        );
        assert_eq!(parts > 0.0, self_collision > 0.0, "{st}");
        // The linear solve's parts are laps inside its time; a frame that iterated spent time
        // in the preconditioner and in the iterations.
        let solve_part = |k: &str| {
            let v = st["linear_solve_parts"][k].as_f64();
            v.unwrap_or_else(|| panic!("linear_solve_parts.{k} missing: {st}"))
        };
        let solve_parts: f64 = SOLVE_PARTS.iter().map(|k| solve_part(k)).sum();
        let linear_solve = st["linear_solve"].as_f64().unwrap();
        assert!(
            SOLVE_PARTS.iter().all(|k| solve_part(k) >= 0.0) && solve_parts <= linear_solve + 1e-9,
            "{st}"
        );
        if f["cg_iterations"].as_u64().unwrap() > 0 {
            assert!(
                solve_part("preconditioner") > 0.0 && solve_part("iterations") > 0.0,
                "{st}"
            );
            // Only bookkeeping between the laps is left out.
            assert!(solve_parts >= 0.5 * linear_solve, "{st}");
        }
    }
    // The rest frame runs no solver; every simulated frame does (sheet: self-collision on).
    let rest = &frames[0]["stages"];
    for k in [
        "forces",
        "linear_solve",
        "body_collisions",
        "self_collision",
    ] {
        assert_eq!(rest[k].as_f64(), Some(0.0), "rest frame {k}");
    }
    for f in &frames[1..] {
        for k in [
            "forces",
            "linear_solve",
            "body_collisions",
            "self_collision",
        ] {
            assert!(
                f["stages"][k].as_f64().unwrap() > 0.0,
                "frame {}: {k}",
                f["frame"]
            );
        }
    }
    // The frame loop's wall time holds every frame's own time (its seconds without the
    // measurement, which may have run inside the next frame's time) and lies inside the bake's.
    let frame_loop = report["frame_loop_seconds"]
        .as_f64()
        .expect("frame_loop_seconds");
    let own: f64 = frames
        .iter()
        .map(|f| f["seconds"].as_f64().unwrap() - f["stages"]["measurements"].as_f64().unwrap())
        .sum();
    let total = report["total_seconds"].as_f64().unwrap();
    assert!(
        own <= frame_loop && frame_loop <= total,
        "frames' own {own}, loop {frame_loop}, total {total}"
    );
    let sum = &report["stage_totals"];
    for (i, k) in STAGES.iter().enumerate() {
        let v = sum[k].as_f64().unwrap();
        assert!(
            (v - totals[i]).abs() <= 1e-9 * (1.0 + v),
            "{k}: {v} vs {}",
            totals[i]
        );
    }
    for k in SOLVE_PARTS {
        let v = sum["linear_solve_parts"][k].as_f64().unwrap();
        let frames_sum: f64 = frames
            .iter()
            .map(|f| f["stages"]["linear_solve_parts"][k].as_f64().unwrap())
            .sum();
        assert!(
            (v - frames_sum).abs() <= 1e-9 * (1.0 + v),
            "{k}: {v} vs {frames_sum}"
        );
    }
    // The `done` event carries the same totals.
    let done: Value = serde_json::from_str(r.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(done["event"], "done");
    assert_eq!(done["stages"], *sum);
    // Substeps: the totals are the frames' sums, and every rejected substep has one cause.
    let subs = &report["substep_totals"];
    assert_eq!(done["substeps"], *subs);
    let field = |f: &Value, k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k} in {f}"));
    let accepted: u64 = frames.iter().map(|f| field(f, "substeps")).sum();
    let rejected: u64 = frames.iter().map(|f| field(f, "rejected_substeps")).sum();
    assert_eq!(field(subs, "accepted"), accepted);
    assert_eq!(field(subs, "rejected"), rejected);
    for k in ["cg_iterations", "rejected_cg_iterations"] {
        let frames_sum: u64 = frames.iter().map(|f| field(f, k)).sum();
        assert_eq!(field(subs, k), frames_sum, "{k}");
    }
    // A rejected substep ran its solve: its iterations are counted, apart from the accepted ones.
    for f in frames {
        assert_eq!(
            field(f, "rejected_substeps") > 0,
            field(f, "rejected_cg_iterations") > 0,
            "frame {}",
            f["frame"]
        );
    }
    for f in frames {
        let by_cause = &f["rejections"];
        let causes: u64 = [
            "non_finite",
            "cg_not_converged",
            "strain_jump_solve",
            "strain_jump_colliders",
            "strain_jump_self_collision",
            "collision_work",
        ]
        .iter()
        .map(|k| field(by_cause, k))
        .sum();
        assert_eq!(
            causes,
            field(f, "rejected_substeps"),
            "frame {}",
            f["frame"]
        );
    }
}

#[test]
fn human_bake_ends_with_a_stage_summary() {
    let d = Dir::new();
    let scene = d.sample("sheet-on-sphere");
    let r = d.ok(&["bake", &scene, "-o", "out", "--frames", "1..4"]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("substeps: ") && l.contains(" accepted, ")),
        "no substep line:\n{}",
        r.stdout
    );
    let at = lines
        .iter()
        .position(|l| l.starts_with("time per stage ("))
        .unwrap_or_else(|| panic!("no summary:\n{}", r.stdout));
    // The stages at two spaces; the parts of the linear solve and of self-collision (the sample
    // has it on) under them at four.
    let rows: Vec<&str> = lines[at + 1..]
        .iter()
        .copied()
        .filter(|l| !l.starts_with("    "))
        .collect();
    assert_eq!(rows.len(), 8, "{}", r.stdout);
    let mut percent = 0.0;
    for (row, name) in rows.iter().zip(STAGES) {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols.len(), 5, "{row}");
        assert_eq!(cols[0], name);
        assert_eq!((cols[2], cols[4]), ("s", "%"), "{row}");
        percent += cols[3].parse::<f64>().unwrap();
    }
    assert!(
        (percent - 100.0).abs() < 0.5,
        "percentages sum to {percent}"
    );
    // The lines at four spaces after the stage `name`'s own line.
    let parts_of = |name: &str| -> Vec<&str> {
        let at = lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some(name) && l.starts_with("  "))
            .unwrap_or_else(|| panic!("no {name} row:\n{}", r.stdout));
        lines[at + 1..]
            .iter()
            .copied()
            .take_while(|l| l.starts_with("    "))
            .collect()
    };
    let solve_parts = parts_of("linear_solve");
    assert_eq!(solve_parts.len(), 4, "{}", r.stdout);
    for (row, name) in solve_parts.iter().zip(SOLVE_PARTS) {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols.len(), 5, "{row}");
        assert_eq!(cols[0], name);
    }
    let parts = parts_of("self_collision");
    // The sample's sheet is solved on one thread: its proximity work runs alongside the solve.
    assert!(
        parts.len() == 5 && parts[4].contains("ran alongside linear_solve"),
        "{}",
        r.stdout
    );
    for (row, name) in parts[..4].iter().zip(SELF_PARTS) {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols.len(), 5, "{row}");
        assert_eq!(cols[0], name);
    }
}
