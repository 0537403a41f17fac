//! The stop flag: raised before or during a frame, the frame fails with `SimError::Stopped` before
//! its next substep and the state stays at the last accepted substep.

use clothbake_solver::fixtures::sheet;
use clothbake_solver::*;
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
