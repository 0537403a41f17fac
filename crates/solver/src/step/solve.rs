//! Stage 4 of a substep: Boxerman's corrected MPCG (2003, §3.2: warm start x = S·x_prev + (I−S)·z,
//! stopping on the filtered residual, preconditioner in the filtered space) for Δv, warm-started
//! from the state's last Δv; then v1 = v0 + Δv, x1 = x0 + h·v1 + y (BW §5.3). Under AIMEX the vertices whose
//! elements are all explicit are solved directly first ([`crate::integrator::aimex`]) and the MPCG
//! iterates over the rest. Below
//! [`reduce::PARALLEL_FROM`] vertices the cloth–cloth proximity contacts, which depend only on x0,
//! are found beside the solve (the result is the same to the bit either way). From
//! [`crate::linalg::incomplete_cholesky::SPLIT_FROM`] vertices the solve's passes are split over
//! both cores too, and take turns with that search through rayon's work stealing: measured on the
//! 3.6k-vertex skirt, overlapping still shortens the bake (BENCHMARKS.md, "IC on both cores").

use std::time::Instant;

use glam::Vec3;
use rayon::prelude::*;

use crate::integrator::method::MIDPOINT_THETA;
use crate::integrator::Integrator;
use crate::linalg::{reduce, CgResult, CgSettings, Problem, SolveTimes};
use crate::model::Model;
use crate::report::StageTimes;
use crate::self_collision::SelfCollisionTimes;
use crate::sim::SimSettings;
use crate::state::State;
use crate::workspace::Workspace;

/// What the solve did, and how long it and the work beside it took.
pub(crate) struct Solved {
    pub cg: CgResult,
    /// Wall time of the solve alone (s).
    seconds: f64,
    /// The MPCG solves' time per phase (zero under Kang's integrator).
    parts: SolveTimes,
    /// Per-part times of the proximity contacts found beside the solve, if they were.
    prepared: Option<SelfCollisionTimes>,
}

impl Solved {
    /// Charges the solve and the work beside it; `joined` is the wall time until both ended (s):
    /// the wait for the proximity contacts after the solve counts as cloth–cloth time.
    pub(crate) fn charge(&self, times: &mut StageTimes, joined: f64) {
        times.solve += self.seconds;
        times.solve_parts.add(&self.parts);
        if let Some(prep) = &self.prepared {
            times.self_collide += (joined - self.seconds).max(0.0);
            times.self_ahead = prep.total();
            times.self_parts.add(prep);
        }
    }
}

/// `deferred_damping`: the cloth–cloth damping was left to this stage
/// ([`super::self_contact_damping::run`]): the contacts are found beside a first solve without
/// it, and only if some of them approach are their terms added and the solve repeated from the
/// same warm start, which gives the bits of a solve with the terms from the start (the repeated
/// solve's iterations are reported, the first one's time is charged to the solve).
pub(crate) fn run(
    model: &Model,
    settings: &SimSettings,
    state: &mut State,
    ws: &mut Workspace,
    h: f32,
    deferred_damping: bool,
) -> Solved {
    if settings.integrator == Integrator::Kang {
        let clock = Instant::now();
        let c = &ws.constraints;
        let cg = ws.kang.solve(
            &ws.assembly.matrix,
            &ws.assembly.b,
            &c.filter,
            &c.z,
            settings.kang_iterations,
            &mut state.dv,
        );
        return Solved {
            cg,
            seconds: clock.elapsed().as_secs_f64(),
            parts: SolveTimes::default(),
            prepared: None,
        };
    }
    // Without the damping (or with it deferred) the contacts are found beside a one-thread solve.
    let ahead = search_beside(settings, model.vertex_count())
        && (settings.self_contact_damping == 0.0 || deferred_damping);
    if deferred_damping {
        ws.warm_dv.clone_from(&state.dv);
    }
    let (mut cg, mut seconds, prepared) = solve_once(model, settings, state, ws, h, ahead);
    let mut parts = ws.cg.times();
    if deferred_damping && super::self_contact_damping::apply(model, settings, ws, h) > 0 {
        state.dv.copy_from_slice(&ws.warm_dv);
        let (again, more, _) = solve_once(model, settings, state, ws, h, false);
        (cg, seconds) = (again, seconds + more);
        parts.add(&ws.cg.times());
    }
    // Once per call, from the solve that counts: whether the damping was deferred (and the
    // solve repeated) may depend on the workspace, the shift that holds for the system solved
    // and its iteration count (whether the next solve deflates) do not.
    if let Some(used) = cg.ic_shift {
        state.controller.ic_shift.note(used);
        let deflated = settings.deflation && state.controller.deflate;
        state.controller.deflate =
            settings.deflation && crate::linalg::deflation::deflate_next(deflated, cg.iterations);
    }
    Solved {
        cg,
        seconds,
        parts,
        prepared,
    }
}

/// Whether the cloth–cloth contacts may be found beside the solve of an `n`-vertex system: it
/// runs on one thread ([`SimSettings::proximity_ahead`]).
pub(crate) fn search_beside(settings: &SimSettings, n: usize) -> bool {
    settings.proximity_ahead && !reduce::parallel(n)
}

/// One MPCG solve of the assembled system for Δv (into `state.dv`), with the cloth–cloth
/// proximity contacts found on another thread meanwhile when `ahead`. Returns the result, the
/// solve's wall time (s) and the times of the contacts' parts.
fn solve_once(
    model: &Model,
    settings: &SimSettings,
    state: &mut State,
    ws: &mut Workspace,
    h: f32,
    ahead: bool,
) -> (CgResult, f64, Option<SelfCollisionTimes>) {
    let cg_settings = CgSettings {
        tolerance: settings.cg_tolerance,
        max_iterations: settings.cg_max_iterations,
        velocity_floor: crate::sim::REST_VELOCITY_FLOOR
            * ws.base.step(h)
            * settings.gravity.length().max(1.0),
        preconditioner: state
            .controller
            .auto_preconditioner
            .active(settings.preconditioner),
        first_shift: state.controller.ic_shift.first,
        deflation: settings.deflation && state.controller.deflate,
    };
    // AIMEX: the vertices with only explicit elements are solved directly and prescribed.
    let decoupled = settings.integrator == Integrator::Aimex && {
        let (a, b) = (&ws.assembly.matrix, &ws.assembly.b);
        ws.aimex.decouple(a, b, &ws.constraints)
    };
    let (filter, z) = if decoupled {
        (&ws.aimex.filter[..], &ws.aimex.z[..])
    } else {
        (&ws.constraints.filter[..], &ws.constraints.z[..])
    };
    let problem = Problem {
        a: &ws.assembly.matrix,
        b: &ws.assembly.b,
        filter,
        z,
        mass: &model.mass,
        positions: &state.x,
        rest: &model.rest_positions,
    };
    let (mpcg, dv) = (&mut ws.cg, &mut state.dv);
    let mut solve = move || {
        let clock = Instant::now();
        let cg = mpcg.solve(&problem, dv, cg_settings);
        (cg, clock.elapsed().as_secs_f64())
    };
    let (x0, v0) = (&ws.start.x, &ws.start.v);
    match ws.self_contact.as_mut().filter(|_| ahead) {
        Some(sc) => {
            let gravity = settings.gravity;
            let ((cg, seconds), prep) = rayon::join(solve, || sc.prepare(x0, v0, h, gravity));
            (cg, seconds, Some(prep))
        }
        None => {
            let (cg, seconds) = solve();
            (cg, seconds, None)
        }
    }
}

/// v1 = v0 + Δv, x1 = x0 + h·v1 + y (BDF2: v1 = v̂ + Δv, x1 = x̂ + (2h/3)·v1 + y).
pub(crate) fn update(state: &mut State, ws: &Workspace, h: f32) {
    let (x0, v0, h) = ws.base.pick(&ws.start.x, &ws.start.v, h);
    let (dv, y) = (&state.dv, &ws.constraints.y);
    if ws.base.midpoint {
        // Implicit midpoint: v½ = v0 + Δv over h/2, v1 = 2·v½ − v0, x1 = x0 + h·v½ + y.
        state
            .v
            .par_iter_mut()
            .zip(state.x.par_iter_mut())
            .enumerate()
            .for_each(|(i, (v, x))| {
                let half = v0[i] + dv[i];
                *v = v0[i] + (half - v0[i]) / MIDPOINT_THETA;
                *x = x0[i] + (h / MIDPOINT_THETA) * half + y[i];
            });
        return;
    }
    // v1 = v0 + Δv, x1 = x0 + h·v1 + y for the vertices first.. of the slices.
    let update = |first: usize, vs: &mut [Vec3], xs: &mut [Vec3]| {
        for (k, (v, x)) in vs.iter_mut().zip(xs.iter_mut()).enumerate() {
            let i = first + k;
            *v = v0[i] + dv[i];
            *x = x0[i] + h * *v + y[i];
        }
    };
    if reduce::parallel(state.len()) {
        // By fixed chunks, each on one thread (rayon's per-item splitting costs more than the
        // update itself).
        const C: usize = reduce::CHUNK;
        let chunks = state.v.par_chunks_mut(C).zip(state.x.par_chunks_mut(C));
        chunks
            .enumerate()
            .for_each(|(c, (vs, xs))| update(c * C, vs, xs));
    } else {
        update(0, &mut state.v, &mut state.x);
    }
}
