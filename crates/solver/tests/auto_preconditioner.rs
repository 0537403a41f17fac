//! `preconditioner = "auto"` on a well-shaped mesh starts with IC(0) and moves to AMG for the rest
//! of the simulation after the first solve that stops short of its tolerance
//! (`linalg/choice.rs`, `AutoWatch`); the move lives in the state, so a bake resumed from a saved
//! state makes the same choice.

use clothbake_solver::fixtures::{corner_pins, sheet};
use clothbake_solver::*;

const DT: f32 = 1.0 / 24.0;

fn sim(preconditioner: Preconditioner, cg_max_iterations: u32) -> Simulation {
    let mut g = sheet("sheet", 16, 0.5, 0.0);
    g.pins = corner_pins(16);
    let settings = SimSettings {
        preconditioner,
        cg_max_iterations,
        // At the default 1e-2 four iterations of IC(0) are enough for this sheet; the test
        // needs a solve that falls short.
        cg_tolerance: 1e-3,
        ..Default::default()
    };
    Simulation::new(vec![g], settings).expect("valid sheet")
}

fn bake(s: &mut Simulation, frames: u32) -> Vec<FrameReport> {
    (0..frames)
        .map(|_| s.step_frame(DT, &[], &[]).expect("frame"))
        .collect()
}

#[test]
fn auto_moves_to_amg_after_an_ic_solve_fails_and_keeps_it_on_resume() {
    // Enough iterations: IC(0) converges and auto never moves.
    let mut easy = sim(Preconditioner::Auto, 200);
    assert_eq!(
        easy.settings().preconditioner,
        Preconditioner::IncompleteCholesky
    );
    bake(&mut easy, 4);
    assert_eq!(easy.state().controller.auto_preconditioner.amg_from, None);

    // Four iterations are too few for IC(0) on the hanging sheet: the first frame's solve fails,
    // and the rest runs with AMG.
    let mut auto = sim(Preconditioner::Auto, 4);
    let first = bake(&mut auto, 1);
    assert!(first[0].rejections.cg_not_converged > 0, "{first:?}");
    assert_eq!(
        auto.state().controller.auto_preconditioner.amg_from,
        Some(0)
    );
    let saved = auto.state().clone();
    bake(&mut auto, 3);
    // An explicit IC(0) never moves.
    let mut ic = sim(Preconditioner::IncompleteCholesky, 4);
    bake(&mut ic, 4);
    assert_eq!(ic.state().controller.auto_preconditioner.amg_from, None);
    assert_ne!(ic.state().x, auto.state().x);

    // Resumed from the state after frame 1: the same AMG frames, to the bit.
    let mut resumed = sim(Preconditioner::Auto, 4);
    resumed
        .restore_state(saved, STATE_VERSION)
        .expect("restore");
    bake(&mut resumed, 3);
    assert_eq!(resumed.state().x, auto.state().x);
    assert_eq!(resumed.state().v, auto.state().v);
}
