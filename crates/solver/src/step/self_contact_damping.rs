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

use crate::model::Model;
use crate::report::StageTimes;
use crate::sim::SimSettings;
use crate::workspace::Workspace;

pub(crate) fn run(
    model: &Model,
    settings: &SimSettings,
    ws: &mut Workspace,
    h: f32,
    times: &mut StageTimes,
) {
    let beta = settings.self_contact_damping;
    let Some(sc) = ws.self_contact.as_mut().filter(|_| beta > 0.0) else {
        return;
    };
    let prepared = sc.prepare(&ws.start.x, &ws.start.v, h, settings.gravity);
    times.self_parts.add(&prepared);
    let (_, v0, hb) = ws.base.pick(&ws.start.x, &ws.start.v, h);
    let c = &mut ws.constraints;
    sc.implicit_damping(
        &model.mass,
        beta,
        (v0, hb),
        (&c.filter, &c.z),
        &mut ws.assembly.matrix,
        &mut ws.assembly.b,
        (&mut c.diag, &mut c.rhs),
    );
}
