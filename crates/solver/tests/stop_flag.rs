//! The stop flag: raised before or during a frame, the frame fails with `SimError::Stopped` before
//! its next substep and the state stays at the last accepted substep.

use clothbake_solver::fixtures::{sheet, sheet_vertex};
use clothbake_solver::*;
use glam::Vec3;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[test]
fn a_raised_stop_flag_stops_the_frame_before_its_next_substep() {
    let mut sim = Simulation::new(vec![sheet("sheet", 8, 1.0, 0.0)], SimSettings::default())
        .expect("valid sheet");
    let flag = Arc::new(AtomicBool::new(false));
    sim.set_stop_flag(Arc::clone(&flag));
    let r = sim.step_frame(1.0 / 24.0, &[], &[]).expect("frame");
    assert!(r.substeps >= 5);
    let (x, t) = (sim.state().x.clone(), sim.time());
    flag.store(true, Ordering::Relaxed);
    match sim.step_frame(1.0 / 24.0, &[], &[]) {
        Err(SimError::Stopped { time }) => assert_eq!(time, t),
        other => panic!("expected Stopped, got {other:?}"),
    }
    assert_eq!(sim.state().x, x, "no substep ran");
    assert_eq!(sim.time(), t);
    // Lowered again, the simulation goes on from where it stopped.
    flag.store(false, Ordering::Relaxed);
    sim.step_frame(1.0 / 24.0, &[], &[]).expect("frame");
    assert!(sim.time() > t);
}

/// A sheet hanging from two corners that the frames' pin targets carry sideways, 0.2 m per frame.
fn carried_sheet() -> (Simulation, Vec<Vec<Vec3>>) {
    carried_sheet_with(SimSettings::default())
}

/// [`carried_sheet`] with these settings.
fn carried_sheet_with(settings: SimSettings) -> (Simulation, Vec<Vec<Vec3>>) {
    let n = 8;
    let mut g = sheet("sheet", n, 1.0, 0.0);
    let corners = [sheet_vertex(n, 0, 0), sheet_vertex(n, n - 1, 0)];
    g.pins = corners
        .iter()
        .map(|&vertex| Pin {
            vertex,
            weight: 1.0,
        })
        .collect();
    let rest = g.positions.clone();
    let targets = (1..=6)
        .map(|f| {
            rest.iter()
                .map(|p| *p + Vec3::new(0.2 * f as f32, 0.0, 0.0))
                .collect()
        })
        .collect();
    let sim = Simulation::new(vec![g], settings).expect("valid sheet");
    (sim, targets)
}

/// Stopped at a frame boundary (the flag raised before the frame's first substep) and continued,
/// a bake with moving pins lands on the uninterrupted bits. Until 2026-11-26 the frame began
/// (its pin targets shifted into the state) before the stop was seen, and the call that continued
/// it began it again: the pins' start target jumped to the end target (the time-sliced farm bake
/// of `twist` diverged whenever a slice ended exactly between two frames).
#[test]
fn a_stop_at_a_frame_boundary_does_not_begin_the_frame_twice() {
    let dt = 1.0 / 24.0;
    let (mut plain, targets) = carried_sheet();
    for t in &targets {
        plain.step_frame(dt, &[], &[Some(t)]).expect("frame");
    }
    let (mut stopped, _) = carried_sheet();
    let flag = Arc::new(AtomicBool::new(false));
    stopped.set_stop_flag(Arc::clone(&flag));
    for (f, t) in targets.iter().enumerate() {
        if f % 2 == 1 {
            flag.store(true, Ordering::Relaxed);
            assert!(matches!(
                stopped.step_frame(dt, &[], &[Some(t)]),
                Err(SimError::Stopped { .. })
            ));
            flag.store(false, Ordering::Relaxed);
        }
        stopped.step_frame(dt, &[], &[Some(t)]).expect("frame");
    }
    assert_eq!(stopped.state(), plain.state());
}

/// The frame report without its wall-clock stage times (the rest is deterministic).
fn counts(mut r: FrameReport) -> FrameReport {
    r.times = StageTimes::default();
    r
}

/// Stopped inside a frame (after some of its substeps) and continued, in the same simulation or
/// in a new one restored from the saved state and the unfinished frame's report (through JSON,
/// as a checkpoint carries them), the frame's report counts every substep of the frame: it
/// equals the uninterrupted frame's. Until 2026-11-26 it counted only the substeps after the stop.
#[test]
fn a_frame_stopped_inside_reports_all_its_substeps() {
    let dt = 1.0 / 24.0;
    // Many substeps, so that a flag raised from another thread a few milliseconds into the frame
    // stops it inside.
    let settings = SimSettings {
        substeps: 4000,
        ..SimSettings::default()
    };
    let (mut plain, targets) = carried_sheet_with(settings.clone());
    plain
        .step_frame(dt, &[], &[Some(&targets[0])])
        .expect("frame 1");
    let want = counts(
        plain
            .step_frame(dt, &[], &[Some(&targets[1])])
            .expect("frame 2"),
    );
    assert_eq!(want.substeps, 4000, "{want:?}");

    // Stopped inside frame 2 by a flag raised from another thread; should a loaded machine delay
    // that thread past the frame's end, or the flag land before its first substep, again.
    let (mut stopped, flag) = (1..=5)
        .find_map(|attempt| {
            let (mut sim, _) = carried_sheet_with(settings.clone());
            sim.step_frame(dt, &[], &[Some(&targets[0])])
                .expect("frame 1");
            let flag = Arc::new(AtomicBool::new(false));
            sim.set_stop_flag(Arc::clone(&flag));
            let raise = {
                let flag = Arc::clone(&flag);
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_millis(5 * attempt));
                    flag.store(true, Ordering::Relaxed);
                })
            };
            let r = sim.step_frame(dt, &[], &[Some(&targets[1])]);
            raise.join().expect("flag thread");
            let inside =
                matches!(r, Err(SimError::Stopped { .. })) && sim.state().clock.substep_pos > 0;
            inside.then_some((sim, flag))
        })
        .expect("a stop inside the frame in one of five attempts");
    let so_far = *stopped.unfinished_frame().expect("an unfinished frame");
    assert!(so_far.substeps > 0 && so_far.substeps < 4000, "{so_far:?}");
    // Saved as a checkpoint would save them, and restored into a new simulation.
    let state_json = serde_json::to_string(stopped.state()).expect("state");
    let report_json = serde_json::to_string(&so_far).expect("report");
    let (mut restored, _) = carried_sheet_with(settings);
    restored
        .restore_state(
            serde_json::from_str(&state_json).expect("state"),
            STATE_VERSION,
        )
        .expect("restore");
    restored.restore_unfinished_frame(serde_json::from_str(&report_json).expect("report"));
    assert_eq!(restored.unfinished_frame(), Some(&so_far), "through JSON");
    let resumed = counts(
        restored
            .step_frame(dt, &[], &[Some(&targets[1])])
            .expect("resumed"),
    );
    // And continued in place.
    flag.store(false, Ordering::Relaxed);
    let continued = counts(
        stopped
            .step_frame(dt, &[], &[Some(&targets[1])])
            .expect("continued"),
    );
    assert_eq!(continued, want, "continued in place");
    assert_eq!(resumed, want, "resumed from the saved state and report");
    assert_eq!(stopped.state(), plain.state());
    assert!(stopped.unfinished_frame().is_none());
}
