//! Stage 3b of a substep (with self-collision and [`crate::SimSettings::self_contact_damping`] > 0):
//! the cloth–cloth proximity contacts at x0 are found before the solve
//! ([`crate::self_contact::SelfContact::prepare`]; the post-solve stage reuses them) and every
//! approaching one adds its normal damping to A·Δv = b
//! ([`crate::self_contact::SelfContact::implicit_damping`]), the way kinetic friction against the
//! bodies moved into the solve ([`super::body_contact::implicit_friction`]).
//!
//! Why: applied only after the solve, the proximity repulsion (BFA02 §7.2) stops a vertex that
//! swings edge-on into other cloth while its neighbours keep going, and the strain that makes
//! was most of the rejected substeps on the dress-walk sample (73 of 96) and on the `twist`
//! sample (175 of 175). Inside the solve the stretch stiffness slows the neighbours with it.

use crate::integrator::Integrator;
use crate::model::Model;
use crate::report::StageTimes;
use crate::sim::SimSettings;
use crate::workspace::Workspace;

/// Before the solve. Returns true when the damping is deferred to the solve stage instead
/// ([`super::solve::run`]): where the contacts would otherwise be found beside a one-thread solve
/// and the last substep had no approaching contact ([`Workspace::damped_last`], a hint that
/// changes only the speed, never the result), the solve runs first with the search beside it and
/// is repeated only if some contact does approach. Otherwise the contacts are found here and
/// their terms added to the system.
pub(crate) fn run(
    model: &Model,
    settings: &SimSettings,
    ws: &mut Workspace,
    h: f32,
    times: &mut StageTimes,
) -> bool {
    let beta = settings.self_contact_damping;
    if beta <= 0.0 {
        return false;
    }
    let Some(sc) = ws.self_contact.as_mut() else {
        return false;
    };
    // Kang's solve finds no contacts beside it.
    if settings.integrator != Integrator::Kang
        && super::solve::search_beside(settings, model.vertex_count())
        && !ws.damped_last
    {
        return true;
    }
    let prepared = sc.prepare(&ws.start.x, &ws.start.v, h, settings.gravity);
    times.self_parts.add(&prepared);
    apply(model, settings, ws, h);
    false
}

/// Adds the damping of the approaching contacts the last prepare found to the assembled system;
/// returns how many there were (and remembers whether any, [`Workspace::damped_last`]).
pub(crate) fn apply(model: &Model, settings: &SimSettings, ws: &mut Workspace, h: f32) -> u32 {
    let Some(sc) = ws.self_contact.as_ref() else {
        return 0;
    };
    let (_, v0, hb) = ws.base.pick(&ws.start.x, &ws.start.v, h);
    let c = &mut ws.constraints;
    let count = sc.implicit_damping(
        &model.mass,
        settings.self_contact_damping,
        (v0, hb),
        (&c.filter, &c.z),
        &mut ws.assembly.matrix,
        &mut ws.assembly.b,
        (&mut c.diag, &mut c.rhs),
    );
    ws.damped_last = count > 0;
    count
}
