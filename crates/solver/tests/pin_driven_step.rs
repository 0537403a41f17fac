//! The adaptive step judges strain against the pins' driven motion (issue 14, item 3;
//! `step/accept.rs`, `judge`): a sheet carried by a fast, jerky driver keeps the nominal substeps
//! although its pins impose strain jumps the earlier rule (`max s(x1) − max s(x0)`) rejected, and
//! stays under a strain bound; a genuinely exploding setup is still halved.

use clothbake_solver::fixtures::{hard_pins, sheet, sheet_vertex};
use clothbake_solver::*;
use glam::Vec3;

const DT: f32 = 1.0 / 24.0;

/// Driver offset (m) after `frame` frames: a keyframed shake with linear interpolation, 0.3 m
/// along x every 2 frames and back (3.6 m/s, the velocity flipping by 7.2 m/s at every key), with
/// a steady climb of 0.5 m/s.
fn driver(frame: u32) -> Vec3 {
    let phase = frame % 4;
    let x = 0.3 * (if phase <= 2 { phase } else { 4 - phase }) as f32 / 2.0;
    Vec3::new(x, 0.5 * frame as f32 * DT, 0.0)
}

#[test]
fn a_sheet_dragged_by_a_fast_driver_keeps_the_nominal_substeps() {
    let n = 24;
    // Hanging at rest from its top row: turned from the fixture's horizontal x–z plane to x–y.
    let mut g = sheet("banner", n, 0.5, 0.0);
    for p in &mut g.positions {
        *p = Vec3::new(p.x, -(p.z + 0.25), 0.0);
    }
    let top: Vec<u32> = (0..n).map(|i| sheet_vertex(n, i, 0)).collect();
    g.pins = hard_pins(&top);
    let rest = g.positions.clone();
    let settings = SimSettings {
        substeps: 4,
        ..Default::default()
    };
    let mut sim = Simulation::new(vec![g], settings.clone()).unwrap();
    let (mut substeps, mut rejected, mut old_rule_rejects, mut max_strain) = (0, 0, 0, 0.0f32);
    let mut targets = rest.clone();
    for f in 1..=48 {
        let d = driver(f);
        for &v in &top {
            targets[v as usize] = rest[v as usize] + d;
        }
        let r = sim.step_frame(DT, &[], &[Some(&targets)]).unwrap();
        substeps += r.substeps;
        rejected += r.rejected_substeps;
        max_strain = max_strain.max(r.max_strain);
        old_rule_rejects += sim
            .substep_reports()
            .iter()
            .filter(|s| s.max_strain - s.start_strain > settings.strain_jump)
            .count();
        // The pins are on the rig.
        let x = sim.garment_positions(0);
        for &v in &top {
            assert!((x[v as usize] - targets[v as usize]).length() < 1e-5);
        }
    }
    assert!(
        old_rule_rejects >= 10,
        "the driver imposes no strain jumps: {old_rule_rejects}"
    );
    // The earlier rule: 496 substeps, 94 rejected.
    assert_eq!((substeps, rejected), (48 * 4, 0));
    assert!(max_strain < 0.15, "max strain {max_strain}");
    assert!(sim.garment_positions(0).iter().all(|p| p.is_finite()));
}

/// A pinned sheet whose own velocities would tear it (±15 m/s, alternating, on the row next to the
/// pins) is still rejected and halved (BW §6): the pins' allowance covers only what they add to
/// the cloth's own motion (s(x_pin) − s(x_free)), and pins at rest add nothing.
#[test]
fn an_exploding_pinned_sheet_is_still_halved() {
    let n = 24;
    let mut g = sheet("banner", n, 0.5, 0.0);
    for p in &mut g.positions {
        *p = Vec3::new(p.x, -(p.z + 0.25), 0.0);
    }
    let top: Vec<u32> = (0..n).map(|i| sheet_vertex(n, i, 0)).collect();
    g.pins = hard_pins(&top);
    let settings = SimSettings {
        substeps: 4,
        ..Default::default()
    };
    let mut sim = Simulation::new(vec![g], settings).unwrap();
    let mut state = sim.state().clone();
    // The row next to the pins: its triangles at the pins see the cloth's own motion in x_free.
    for i in 0..n {
        let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
        state.v[sheet_vertex(n, i, 1) as usize] = Vec3::new(0.0, 0.0, 15.0 * sign);
    }
    sim.restore_state(state, STATE_VERSION).unwrap();
    let r = sim.step_frame(DT, &[], &[]).unwrap();
    let log = sim.substep_reports();
    let jumps = log
        .iter()
        .filter(|s| s.rejected == Some(Rejection::StrainJump))
        .count();
    assert!(jumps >= 3, "strain-jump rejections: {jumps} ({r:?})");
    // Halved at least three times (measured: 4 rejections, down to 1/16 of the nominal substep;
    // with the allowance s(x_pin) alone, none).
    assert!(r.min_h <= DT / 4.0 / 8.0, "min h {}", r.min_h);
    assert!(r.substeps > 4);
    assert!(sim.garment_positions(0).iter().all(|p| p.is_finite()));
}
