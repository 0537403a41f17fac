//! Body contact, before and after the solve. Before ([`constrain`]): hard pins (ndof 0, BW §5.3),
//! then contacts with the moving colliders (filters, z and y), then partial pins as implicit goal
//! springs. After ([`release`]): Coulomb friction from the recovered constraint forces, then the
//! projection of every free vertex out of the colliders (Kang 2003 §5-style position correction).

use crate::collide::{min_distance, DistanceReport};
use crate::error::SimError;
use crate::model::Model;
use crate::sim::SimSettings;
use crate::state::State;
use crate::workspace::Workspace;

use super::Substep;

/// Vertices farther than this (m) from every collider are left out of the reported minimum distance.
const REPORT_WITHIN: f32 = 0.05;

/// Turns pins and collider contacts into the substep's constraints. Hard pins come first (they
/// override contacts), goal springs last (they read y).
pub(crate) fn constrain(
    model: &Model,
    settings: &SimSettings,
    state: &State,
    ws: &mut Workspace,
    sub: Substep,
) -> Result<(), SimError> {
    let (x0, h) = (&ws.start.x, sub.h);
    // Pins, contacts and goal springs are set up for the implicit step's base (x0, v0, h or BDF2's
    // x̂, v̂, 2h/3); detection sweeps the real x0 → x0 + h·v0.
    let (bx, bv, bh) = ws.base.pick(&ws.start.x, &ws.start.v, sub.h);
    let targets = &state.pins;
    for (k, pin) in model.pins.iter().enumerate() {
        if pin.weight >= 1.0 {
            let i = pin.vertex as usize;
            ws.constraints.hard_pin(
                i,
                targets.at(k, sub.s1),
                targets.velocity(k, sub.dt),
                bx[i],
                bv[i],
                bh,
            );
        }
    }
    if !ws.sub_colliders.is_empty() {
        ws.detector
            .detect(
                &ws.sub_colliders,
                h,
                x0,
                &ws.predicted,
                &model.thickness,
                &mut ws.contacts,
            )
            .map_err(|e| SimError::Input(e.to_string()))?;
        ws.constraints.add_contacts(
            &ws.contacts,
            &state.contacts,
            model,
            bx,
            bv,
            bh,
            settings.gravity,
        );
    }
    for (k, pin) in model.pins.iter().enumerate() {
        if pin.weight < 1.0 {
            let i = pin.vertex as usize;
            ws.constraints.goal_spring(
                i,
                model.pin_spring[k],
                targets.at(k, sub.s1),
                bx[i],
                bv[i],
                bh,
            );
        }
    }
    Ok(())
}

/// Between assembly and solve: the sliding contacts' kinetic friction as implicit tangential
/// damping ([`crate::constraints::Constraints::implicit_friction`]), with the normal forces of
/// the state's contact memory.
pub(crate) fn implicit_friction(model: &Model, state: &State, ws: &mut Workspace, h: f32) {
    if ws.constraints.active.is_empty() {
        return;
    }
    let (_, bv, bh) = ws.base.pick(&ws.start.x, &ws.start.v, h);
    ws.constraints.implicit_friction(
        model,
        &state.contacts,
        &mut ws.assembly.matrix,
        &mut ws.assembly.b,
        bv,
        bh,
    );
}

/// After the solve: friction, then the post-solve projection ([`crate::collide::ContactDetector::project_out`]):
/// any free vertex closer than its thickness to a collider's end-of-substep surface is moved out
/// to the thickness (on its entry side if it tunnelled) and loses its inward velocity relative to
/// the surface. Marks moved vertices in `ws.held`. Returns the smallest distance left (m) among
/// vertices within 5 cm of a collider (+inf if none, or if not `distance`: then the pairs only
/// the distance needs are not evaluated).
pub(crate) fn release(
    model: &Model,
    state: &mut State,
    ws: &mut Workspace,
    h: f32,
    distance: bool,
) -> Result<f32, SimError> {
    let bh = ws.base.step(h);
    ws.constraints.apply_friction(
        model,
        &ws.assembly.matrix,
        &ws.assembly.b,
        &state.dv,
        bh,
        &mut state.x,
        &mut state.v,
    );
    if ws.sub_colliders.is_empty() {
        ws.held.fill(false);
        ws.body_push.fill(glam::Vec3::ZERO);
        return Ok(f32::INFINITY);
    }
    let d = &mut ws.detector;
    let (colliders, contacts, x0) = (&ws.sub_colliders, &ws.contacts, &ws.start.x);
    let (thickness, fixed) = (&model.thickness, &model.hard_pinned);
    let (x, v) = (&mut state.x, &mut state.v);
    let report = if distance {
        DistanceReport::Within(REPORT_WITHIN)
    } else {
        DistanceReport::Unreported(REPORT_WITHIN)
    };
    let min = d.project_out(colliders, h, contacts, x0, thickness, fixed, report, x, v);
    let min = min.map_err(|e| SimError::Input(e.to_string()))?;
    ws.detector.moved_by_projection(&mut ws.held);
    ws.detector.body_pushes(&mut ws.body_push);
    Ok(min)
}

/// Smallest signed distance (m) of any vertex to any collider's end-of-substep surface
/// ([`crate::collide::min_distance`]: exact, culled by boxes).
pub(crate) fn min_collider_distance(state: &State, ws: &Workspace) -> f32 {
    min_distance(&state.x, &ws.sub_colliders, |c| &c.end)
}
