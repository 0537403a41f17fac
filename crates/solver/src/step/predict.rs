//! Stage 1 of a substep: keep the start state (x0, v0; also what a rejection restores), clear the
//! per-substep constraints, interpolate the frame's colliders to the substep and predict the
//! free flight x0 + h·v0 (m) that contact detection sweeps; for a BDF2 substep, the extrapolated
//! state (x̂, v̂) and step 2h/3 the backward-Euler stages step from ([`crate::integrator::method`]).

use crate::collide::MovingCollider;
use crate::integrator::Integrator;
use crate::linalg::reduce;
use crate::state::State;
use crate::workspace::Workspace;

use super::Substep;

pub(crate) fn run(state: &State, ws: &mut Workspace, sub: Substep, integrator: Integrator) {
    ws.start.copy_from(state);
    let s = &ws.start;
    ws.base.prepare(
        integrator, &s.x, &s.v, &s.prev_x, &s.prev_v, s.prev_h, sub.h,
    );
    ws.constraints.begin(state.len());
    ws.sub_colliders.clear();
    ws.sub_colliders
        .extend(sub.colliders.iter().map(|c| MovingCollider {
            start: c.at(sub.s0),
            end: c.at(sub.s1),
        }));
    let (x0, v0, h) = (&ws.start.x, &ws.start.v, sub.h);
    reduce::for_each_indexed(&mut ws.predicted, |i, p| *p = x0[i] + h * v0[i]);
}
