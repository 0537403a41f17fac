//! Stage 1 of a substep: keep the start state (x0, v0; also what a rejection restores), clear the
//! per-substep constraints, interpolate the frame's colliders to the substep and predict the
//! free flight x0 + h·v0 (m) that contact detection sweeps.

use rayon::prelude::*;

use crate::collide::MovingCollider;
use crate::state::State;
use crate::workspace::Workspace;

use super::Substep;

pub(crate) fn run(state: &State, ws: &mut Workspace, sub: Substep) {
    ws.start.copy_from(state);
    ws.constraints.begin(state.len());
    ws.sub_colliders.clear();
    ws.sub_colliders
        .extend(sub.colliders.iter().map(|c| MovingCollider {
            start: c.at(sub.s0),
            end: c.at(sub.s1),
        }));
    let (x0, v0, h) = (&ws.start.x, &ws.start.v, sub.h);
    ws.predicted
        .par_iter_mut()
        .enumerate()
        .for_each(|(i, p)| *p = x0[i] + h * v0[i]);
}
