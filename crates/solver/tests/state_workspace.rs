//! The Model / State / Workspace split: the [`State`] is everything the next substep depends on,
//! the [`Workspace`] nothing. Checked on the fold of the self-collision tests (moving hard pins,
//! ground contact with friction memory, cloth–cloth collision) with a strain bound tight enough
//! that substeps are rejected and the step controller carries halved sizes across frames:
//! - dropping the workspace before every frame changes no bit of any frame;
//! - a state saved at frame 12, serialised (JSON) and restored into a NEW simulation of the same
//!   garments continues bit-identically to the uninterrupted run;
//! - a state that does not fit (version, sizes, non-finite values) is refused with a named error.
//!
//! The first two under every integrator (BDF2 keeps the previous substep's start in the state);
//! the first also on a hanging sheet whose solves deflate.

use clothbake_solver::fixtures::{corner_pins, ground, sheet, EdgeFold};
use clothbake_solver::*;
use glam::Vec3;

const FRAMES: usize = 24;
const SAVE_AT: usize = 12;

fn fold_scene_with(integrator: Integrator) -> (Vec<GarmentDesc>, SimSettings, EdgeFold) {
    let n = 14;
    let mut g = sheet("sheet", n, 0.4, 0.006);
    g.self_collision = Some(SelfCollisionParams {
        thickness: 0.004,
        friction: 0.3,
    });
    let fold = EdgeFold::pin(&mut g, n, 0.006);
    let settings = SimSettings {
        // Kang's approximation needs about four times the substeps (integrator/kang.rs).
        substeps: if integrator == Integrator::Kang {
            12
        } else {
            3
        },
        strain_jump: 0.01,
        // Every jump counts (the fold stays below the floor's 8 % stretch).
        strain_jump_floor: 0.0,
        integrator,
        ..SimSettings::default()
    };
    (vec![g], settings, fold)
}

fn fold_scene() -> (Vec<GarmentDesc>, SimSettings, EdgeFold) {
    fold_scene_with(Integrator::BackwardEuler)
}

/// Bit patterns of every position and velocity.
fn bits(s: &State) -> Vec<u32> {
    s.x.iter()
        .chain(&s.v)
        .flat_map(|p| p.to_array())
        .map(f32::to_bits)
        .collect()
}

/// Runs frames `from..to` (1-based frame numbers of the fold's swing over 16 frames), calling
/// `before` ahead of each; returns the state bits after each frame and the rejected substeps.
fn run(
    sim: &mut Simulation,
    fold: &mut EdgeFold,
    frames: std::ops::Range<usize>,
    mut before: impl FnMut(&mut Simulation),
) -> (Vec<Vec<u32>>, u32) {
    let mut out = Vec::new();
    let mut rejected = 0;
    for f in frames {
        before(sim);
        let targets: Vec<Vec3> = fold.targets(f as f32 / 16.0).to_vec();
        let r = sim
            .step_frame(1.0 / 24.0, &[ground()], &[Some(&targets)])
            .expect("frame");
        rejected += r.rejected_substeps;
        out.push(bits(sim.state()));
    }
    (out, rejected)
}

#[test]
fn dropping_the_workspace_changes_nothing() {
    dropping_the_workspace_changes_nothing_with(Integrator::BackwardEuler);
}

#[test]
fn dropping_the_workspace_changes_nothing_bdf2() {
    dropping_the_workspace_changes_nothing_with(Integrator::Bdf2);
}

/// A 48×48 cotton sheet hanging from two corners (no collider), one substep per frame and CG
/// tolerance 1e-4: its IC(0) solves are slow enough to deflate (`linalg::deflation`). The coarse system is workspace, rebuilt from each
/// solve's matrix; whether a solve deflates is state (`StepController::deflate`). Dropping the
/// workspace before every frame changes no bit, and frames start with deflation on.
#[test]
fn dropping_the_workspace_changes_nothing_while_deflating() {
    let n = 48;
    let hanging = || {
        let mut g = sheet("sheet", n, 0.8, 0.0);
        g.pins = corner_pins(n);
        // Long steps and a tight tolerance: slow IC(0) solves.
        let settings = SimSettings {
            substeps: 1,
            cg_tolerance: 1e-4,
            ..SimSettings::default()
        };
        Simulation::new(vec![g], settings).expect("valid sheet")
    };
    let frames = |sim: &mut Simulation, rebuild: bool| {
        let mut out = Vec::new();
        let mut deflating = 0;
        for _ in 0..12 {
            if rebuild {
                sim.rebuild_workspace().unwrap();
            }
            deflating += sim.state().controller.deflate as u32;
            sim.step_frame(1.0 / 24.0, &[], &[]).expect("frame");
            out.push(bits(sim.state()));
        }
        (out, deflating)
    };
    let (mut a, mut b) = (hanging(), hanging());
    let (frames_a, deflating) = frames(&mut a, false);
    assert!(deflating > 0, "no frame started with deflation on");
    let (frames_b, _) = frames(&mut b, true);
    assert!(
        frames_a == frames_b,
        "results differ after dropping the workspace"
    );
    assert_eq!(a.state(), b.state());
}

fn dropping_the_workspace_changes_nothing_with(integrator: Integrator) {
    let fold_scene = || fold_scene_with(integrator);
    let (descs, settings, mut fold) = fold_scene();
    let mut a = Simulation::new(descs.clone(), settings.clone()).unwrap();
    let (frames_a, rejected) = run(&mut a, &mut fold, 1..FRAMES + 1, |_| {});
    assert!(
        rejected > 0,
        "the scene must reject substeps for the controller state to matter"
    );
    let (_, _, mut fold) = fold_scene();
    let mut b = Simulation::new(descs, settings).unwrap();
    let (frames_b, _) = run(&mut b, &mut fold, 1..FRAMES + 1, |s| {
        s.rebuild_workspace().unwrap()
    });
    for (f, (x, y)) in frames_a.iter().zip(&frames_b).enumerate() {
        assert!(
            x == y,
            "frame {}: results differ after dropping the workspace",
            f + 1
        );
    }
    assert_eq!(a.state(), b.state());
}

#[test]
fn a_saved_state_resumes_bit_identically_in_a_new_simulation() {
    resumes_bit_identically_with(Integrator::BackwardEuler);
}

#[test]
fn kang_and_verlet_resume_bit_identically_and_do_not_need_the_workspace() {
    // Neither keeps anything beyond x, v (and the contact memory) between substeps: the state
    // layout is unchanged, and their scratch (KangSolve, VerletScratch) is rebuilt freely.
    for integrator in [Integrator::Kang, Integrator::Verlet] {
        resumes_bit_identically_with(integrator);
        dropping_the_workspace_changes_nothing_with(integrator);
    }
}

#[test]
fn a_saved_bdf2_state_resumes_bit_identically_and_needs_its_history() {
    let (saved, frames_a) = resumes_bit_identically_with(Integrator::Bdf2);
    let mut state: State = serde_json::from_str(&saved).unwrap();
    assert_eq!(state.prev_x.len(), state.x.len(), "BDF2 keeps x₋₁");
    assert!(state.prev_h > 0.0);
    // Without the history the next substep is backward Euler: the continuation differs.
    state.prev_x.clear();
    state.prev_v.clear();
    state.prev_h = 0.0;
    let (descs, settings, mut fold) = fold_scene_with(Integrator::Bdf2);
    let mut c = Simulation::new(descs, settings).unwrap();
    c.restore_state(state, STATE_VERSION).unwrap();
    let (frames_c, _) = run(&mut c, &mut fold, SAVE_AT + 1..SAVE_AT + 2, |_| {});
    assert!(
        frames_a[SAVE_AT] != frames_c[0],
        "the history made no difference"
    );
}

/// Saves at frame SAVE_AT, resumes in a new simulation, compares; returns the saved JSON and the
/// uninterrupted run's frames.
fn resumes_bit_identically_with(integrator: Integrator) -> (String, Vec<Vec<u32>>) {
    let fold_scene = || fold_scene_with(integrator);
    let (descs, settings, mut fold) = fold_scene();
    let mut a = Simulation::new(descs.clone(), settings.clone()).unwrap();
    let (frames_a, _) = run(&mut a, &mut fold, 1..FRAMES + 1, |_| {});

    let (_, _, mut fold) = fold_scene();
    let mut b = Simulation::new(descs.clone(), settings.clone()).unwrap();
    run(&mut b, &mut fold, 1..SAVE_AT + 1, |_| {});
    let saved = serde_json::to_string(b.state()).unwrap();
    assert_eq!(b.state().clock.frames, SAVE_AT as u64);
    assert_eq!(b.state().clock.substep_pos, 0);
    drop(b);

    let mut c = Simulation::new(descs, settings).unwrap();
    let state: State = serde_json::from_str(&saved).unwrap();
    c.restore_state(state, STATE_VERSION).unwrap();
    let (frames_c, _) = run(&mut c, &mut fold, SAVE_AT + 1..FRAMES + 1, |_| {});
    for (k, (x, y)) in frames_a[SAVE_AT..].iter().zip(&frames_c).enumerate() {
        assert!(x == y, "frame {}: the resumed run differs", SAVE_AT + 1 + k);
    }
    assert_eq!(a.state(), c.state());
    assert_eq!(a.time().to_bits(), c.time().to_bits());
    (saved, frames_a)
}

#[test]
fn a_state_that_does_not_fit_is_refused() {
    let (descs, settings, _) = fold_scene();
    let mut sim = Simulation::new(descs, settings).unwrap();
    let good = sim.state().clone();
    assert_eq!(
        sim.restore_state(good.clone(), STATE_VERSION + 1),
        Err(RestoreError::Version {
            found: STATE_VERSION + 1,
            expected: STATE_VERSION
        })
    );
    let mut short = good.clone();
    short.v.pop();
    assert!(matches!(
        sim.restore_state(short, STATE_VERSION),
        Err(RestoreError::Size { field: "v", .. })
    ));
    let mut history = good.clone();
    history.prev_x = vec![Vec3::ZERO; 2];
    assert!(matches!(
        sim.restore_state(history, STATE_VERSION),
        Err(RestoreError::Size {
            field: "prev_x",
            ..
        })
    ));
    let mut nan = good.clone();
    nan.x[3].y = f32::NAN;
    assert_eq!(
        sim.restore_state(nan, STATE_VERSION),
        Err(RestoreError::NonFinite { field: "x" })
    );
    // Values these settings can never produce (a damaged or foreign checkpoint that still parses).
    let max_halvings = sim.settings().max_halvings;
    let mut deep = good.clone();
    deep.controller.h_scale = max_halvings + 1;
    assert_eq!(
        sim.restore_state(deep, STATE_VERSION),
        Err(RestoreError::Range {
            field: "controller.h_scale",
            found: max_halvings as u64 + 1,
            limit: max_halvings as u64
        })
    );
    let grid = sim.settings().substeps as u64 * (1 << max_halvings);
    let mut past = good.clone();
    past.clock.substep_pos = grid;
    assert_eq!(
        sim.restore_state(past, STATE_VERSION),
        Err(RestoreError::Range {
            field: "clock.substep_pos",
            found: grid,
            limit: grid - 1
        })
    );
    let mut json: serde_json::Value = serde_json::to_value(&good).unwrap();
    let start = json["pins"]["start"].as_array_mut().unwrap();
    assert!(!start.is_empty(), "the fold has pins");
    let n = start.len();
    start.pop();
    let torn: State = serde_json::from_value(json).unwrap();
    assert_eq!(
        sim.restore_state(torn, STATE_VERSION),
        Err(RestoreError::Size {
            field: "pins (frame-start targets)",
            found: n - 1,
            expected: n
        })
    );
    assert_eq!(
        sim.state(),
        &good,
        "a refused state leaves the simulation as it was"
    );
    sim.restore_state(good, STATE_VERSION).unwrap();
}
