//! One substep: a single Newton step of backward Euler (BW §6) from frame fraction s0 to s1, as the
//! stages it runs in order, each in its own file and named as the reports name them:
//!
//! 1. [`predict`]: the start state is kept, colliders are interpolated to the substep, x0 + h·v0;
//!    a BDF2 substep is backward Euler of step 2h/3 from an extrapolated state
//!    ([`crate::integrator::method`]), and the stages below then read that (x̂, v̂, h') as x0, v0, h
//!    wherever they set up or update the implicit step (constraints, assembly, update, friction).
//! 2. [`body_contact::constrain`]: hard pins, collider contacts and goal springs become the MPCG
//!    filter, z, y and implicit terms (BW §5).
//! 3. [`assemble`]: forces and Jacobians into A·Δv = b (BW eq. 15), then the sliding contacts'
//!    kinetic friction as implicit tangential damping ([`body_contact::implicit_friction`]).
//!    With self-collision, the cloth–cloth proximity contacts at x0 as implicit normal damping
//!    ([`self_contact_damping`]).
//! 4. [`solve`]: Boxerman's corrected MPCG, then v1 = v0 + Δv, x1 = x0 + h·v1 + y; with
//!    `damping_projection`, the air damping of the non-rigid velocity
//!    ([`crate::integrator::projected_damping`]).
//! 5. [`body_contact::release`]: friction from the constraint forces and the projection out of the
//!    colliders.
//! 6. [`self_collision`]: cloth–cloth collision makes x0 → x1 crossing-free (within a work
//!    bound: a substep whose collisions exceed it is rejected).
//! 7. [`accept`]: the strain check that decides whether the substep is kept (BW §6), and what an
//!    accepted or rejected substep does to the state.

pub(crate) mod accept;
pub(crate) mod assemble;
pub(crate) mod body_contact;
pub(crate) mod newton;
pub(crate) mod predict;
pub(crate) mod self_collision;
pub(crate) mod self_contact_damping;
pub(crate) mod solve;

use crate::stopwatch::Lap;

use crate::collide::MovingCollider;
use crate::error::SimError;
use crate::integrator::Integrator;
use crate::model::Model;
use crate::report::{Rejection, StageTimes, SubstepReport};
use crate::sim::SimSettings;
use crate::state::State;
use crate::workspace::Workspace;

/// What one substep is asked to do.
#[derive(Clone, Copy)]
pub(crate) struct Substep<'a> {
    /// Frame length (s): pin target velocities are taken over it.
    pub dt: f32,
    /// Substep length (s).
    pub h: f32,
    /// Start and end of the substep as fractions of the frame.
    pub s0: f32,
    pub s1: f32,
    /// Every collider's shape at the start and end of the frame.
    pub colliders: &'a [MovingCollider],
}

/// Runs one substep. On return `state` holds the end-of-substep positions and velocities (the
/// clock, controller and contact memory are updated by [`accept`]), `ws.start` the start state.
pub(crate) fn substep(
    model: &Model,
    settings: &SimSettings,
    state: &mut State,
    ws: &mut Workspace,
    sub: Substep,
) -> Result<SubstepReport, SimError> {
    if settings.integrator == Integrator::Verlet {
        return crate::integrator::verlet::substep(model, settings, state, ws, sub);
    }
    let mut times = StageTimes::default();
    let mut lap = Lap::start();
    predict::run(state, ws, sub, settings.integrator);
    lap.lap(&mut times.other);

    body_contact::constrain(model, settings, state, ws, sub)?;
    lap.lap(&mut times.collide);

    let start_strain = assemble::run(model, settings, ws, sub.h);
    body_contact::implicit_friction(model, state, ws, sub.h);
    lap.lap(&mut times.assemble);
    let deferred = self_contact_damping::run(model, settings, ws, sub.h, &mut times);
    lap.lap(&mut times.self_collide);

    let solved = solve::run(model, settings, state, ws, sub.h, deferred);
    let mut joined = 0.0;
    lap.lap(&mut joined);
    solved.charge(&mut times, joined);
    let mut cg = solved.cg;
    solve::update(state, ws, sub.h);
    lap.lap(&mut times.other);
    for _ in 1..settings.newton_iterations {
        let more = newton::iterate(model, settings, state, ws, sub.h);
        cg.iterations += more.iterations;
        cg.residual = more.residual;
        cg.converged &= more.converged;
        cg.non_finite |= more.non_finite;
    }
    lap.lap(&mut times.solve);
    if settings.damping_projection && settings.air_damping > 0.0 {
        let hx = ws.base.step(sub.h);
        let (x, v) = (&mut state.x, &mut state.v);
        let filter = &ws.constraints.filter;
        ws.projected
            .apply(model, filter, settings.air_damping, sub.h, hx, x, v);
    }
    let mut solve_strain = settings
        .stage_strains
        .then(|| accept::max_stretch(model, &state.x));
    if solve_strain.is_none() {
        ws.after_solve.copy_from_slice(&state.x);
    }
    lap.lap(&mut times.other);

    let distances = settings.collider_distances;
    let mut min_distance = body_contact::release(model, state, ws, sub.h, distances)?;
    let mut projected_strain = if ws.sub_colliders.is_empty() {
        solve_strain
    } else {
        settings
            .stage_strains
            .then(|| accept::max_stretch(model, &state.x))
    };
    if projected_strain.is_none() {
        ws.after_colliders.copy_from_slice(&state.x);
    }
    lap.lap(&mut times.collide);

    let outcome = self_collision::run(state, ws, sub.h, &mut times);
    let (self_contacts, unresolved, over_budget) = match outcome {
        Some(r) => {
            lap.lap(&mut times.self_collide);
            if distances {
                min_distance = body_contact::min_collider_distance(state, ws);
            }
            lap.lap(&mut times.collide);
            r
        }
        None => (0, 0, false),
    };

    let judged = accept::judge(
        model,
        settings,
        state,
        ws,
        sub.h,
        &cg,
        start_strain,
        over_budget,
    );
    if judged.rejected == Some(Rejection::StrainJump) {
        // Which stage raised the strain (the report's rejection causes): measured only now.
        solve_strain = solve_strain.or_else(|| Some(accept::max_stretch(model, &ws.after_solve)));
        projected_strain = match projected_strain {
            Some(s) => Some(s),
            None if ws.sub_colliders.is_empty() => solve_strain,
            None => Some(accept::max_stretch(model, &ws.after_colliders)),
        };
    }
    lap.lap(&mut times.other);
    Ok(SubstepReport {
        h: sub.h,
        cg,
        max_strain: judged.max_strain,
        max_stretch: judged.max_stretch,
        worst_triangle: judged.worst_triangle,
        start_strain,
        strain_jump: judged.jump,
        solve_strain,
        projected_strain,
        contacts: ws.constraints.active.len() as u32,
        min_collider_distance: min_distance,
        self_contacts,
        unresolved,
        rejected: judged.rejected,
        aimex: if settings.integrator == crate::integrator::Integrator::Aimex {
            ws.aimex.counts
        } else {
            Default::default()
        },
        times,
    })
}
