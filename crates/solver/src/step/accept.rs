//! Stage 7 of a substep: accept or reject it (BW §6: a substep whose strain jumps, or whose solve
//! fails, is redone at half the size; after [`GROW_AFTER`] accepted substeps in a row the size
//! doubles again, up to the nominal one). Rejection is a restore of the start state.

use rayon::prelude::*;

use crate::forces::strain;
use crate::integrator::Integrator;
use crate::linalg::CgResult;
use crate::model::Model;
use crate::sim::{SimSettings, GROW_AFTER};
use crate::state::State;
use crate::workspace::Workspace;

/// The largest triangle strain at x1, the triangle that has it, and why the substep should be
/// rejected, if it should.
pub(crate) fn judge(
    model: &Model,
    settings: &SimSettings,
    state: &State,
    cg: &CgResult,
    start_strain: f32,
) -> (f32, u32, Option<&'static str>) {
    let x1 = &state.x;
    // Deterministic argmax: the larger strain, then the lower index.
    let (max_strain, worst) = (0..model.triangles.len())
        .into_par_iter()
        .map(|t| {
            let tri = model.triangles[t];
            let mat = &model.materials[model.triangle_material[t] as usize];
            let s = strain(&tri.map(|i| x1[i as usize]), &model.triangle_rest[t], mat);
            (s, t as u32)
        })
        .reduce(
            || (0.0, 0),
            |a, b| {
                if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
                    b
                } else {
                    a
                }
            },
        );
    let rejected = if cg.non_finite {
        Some("non-finite solve")
    } else if !cg.converged {
        Some("CG did not converge")
    } else if max_strain - start_strain > settings.strain_jump {
        Some("strain jump")
    } else {
        None
    };
    (max_strain, worst, rejected)
}

/// The largest triangle strain at positions `x`.
pub(crate) fn max_strain(model: &Model, x: &[glam::Vec3]) -> f32 {
    (0..model.triangles.len())
        .into_par_iter()
        .map(|t| {
            let tri = model.triangles[t];
            let mat = &model.materials[model.triangle_material[t] as usize];
            strain(&tri.map(|i| x[i as usize]), &model.triangle_rest[t], mat)
        })
        .reduce(|| 0.0, f32::max)
}

/// First vertex with a non-finite position or velocity.
pub(crate) fn first_non_finite(state: &State) -> Option<usize> {
    state
        .x
        .par_iter()
        .zip(state.v.par_iter())
        .position_first(|(x, v)| !(x.is_finite() && v.is_finite()))
}

/// Keeps an accepted substep of `step` grid units and `h` seconds: the contacts' friction modes
/// become the state's memory, the clock advances and the controller may grow the step; under BDF2
/// the substep's start becomes the history (x₋₁, v₋₁, its length).
pub(crate) fn accept(state: &mut State, ws: &Workspace, h: f32, step: u64, integrator: Integrator) {
    ws.constraints.commit(&mut state.contacts);
    if integrator.keeps_history() {
        state.prev_x.clone_from(&ws.start.x);
        state.prev_v.clone_from(&ws.start.v);
        state.prev_h = h;
    }
    state.clock.time += h as f64;
    state.clock.substep_pos += step;
    let c = &mut state.controller;
    c.accepted_in_row += 1;
    if c.h_scale > 0 && c.accepted_in_row >= GROW_AFTER {
        c.h_scale -= 1;
        c.accepted_in_row = 0;
    }
}

/// Undoes a substep: the state returns to its start, without the warm start (the solve that
/// produced it is discarded).
pub(crate) fn restore(state: &mut State, ws: &Workspace) {
    state.copy_from(&ws.start);
    state.dv.par_iter_mut().for_each(|d| *d = glam::Vec3::ZERO);
}

/// Undoes a rejected substep and halves the next one.
pub(crate) fn reject(state: &mut State, ws: &Workspace) {
    restore(state, ws);
    state.controller.h_scale += 1;
    state.controller.accepted_in_row = 0;
}
