//! Stage 1 of a substep: keep the start state (x0, v0; also what a rejection restores), clear the
//! per-substep constraints, interpolate the frame's colliders to the substep and predict the
//! free flight x0 + h·v0 (m) that contact detection sweeps; for a BDF2 substep, the extrapolated
//! state (x̂, v̂) and step 2h/3 the backward-Euler stages step from ([`crate::integrator::method`]).

use rayon::prelude::*;

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
    let flight = |first: usize, ps: &mut [glam::Vec3]| {
        for (k, p) in ps.iter_mut().enumerate() {
            *p = x0[first + k] + h * v0[first + k];
        }
    };
    if reduce::parallel(ws.predicted.len()) {
        // By fixed chunks, each on one thread (per item, rayon's splitting costs more).
        let chunks = ws.predicted.par_chunks_mut(reduce::CHUNK).enumerate();
        chunks.for_each(|(c, ps)| flight(c * reduce::CHUNK, ps));
    } else {
        flight(0, &mut ws.predicted);
    }
}
