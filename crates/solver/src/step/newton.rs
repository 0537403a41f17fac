//! Stage 4b of a substep (experimental, [`crate::SimSettings::newton_iterations`] > 1): further
//! Newton iterations of the implicit stage, which BW (§3, eq. 18) stop after one ("Baraff and Witkin
//! silently perform a single Newton iteration", Boxerman 2003 §4.2.2; Hauth et al. iterate).
//!
//! The stage solves M·(v − v̂) = h'·f(x̂ + h'·v + y, v) for v from the base (x̂, v̂, h') of
//! [`crate::integrator::StepBase`]. Iteration k + 1 linearises at the stage's (x_k, v_k) =
//! (x̂ + h'·v_k + y, v_k): (M − h'·∂f/∂v − h'²·∂f/∂x)·δ = h'·f(x_k, v_k) − M·(v_k − v̂). The
//! assembly builds it unchanged when handed (x_k, v_k) as its base and y' = −h'·v_k as the position
//! alteration (its b = h'·(f + ∂f/∂x·(h'·v + y)) then loses the ∂f/∂x term), minus M·(v_k − v̂);
//! the prescribed velocity changes become z − (v_k − v̂) (0 for a vertex that already has its
//! target). Goal springs and collider contacts keep their first iteration's terms, and friction
//! reads the last iteration's system: meant for the accuracy experiments (pins, no colliders).

use glam::Vec3;
use rayon::prelude::*;

use crate::integrator::method::MIDPOINT_THETA;
use crate::integrator::StepInputs;
use crate::linalg::CgResult;
use crate::model::Model;
use crate::sim::SimSettings;
use crate::state::State;
use crate::workspace::Workspace;

/// Scratch of the extra iterations (sized on first use).
#[derive(Debug, Clone, Default)]
pub(crate) struct NewtonScratch {
    /// The stage's x_k (m) and v_k (m/s).
    x: Vec<Vec3>,
    v: Vec<Vec3>,
    /// The first iteration's y and z, restored afterwards.
    y: Vec<Vec3>,
    z: Vec<Vec3>,
}

/// One more Newton iteration; `state` holds the previous iterate's end-of-substep (x1, v1) and is
/// updated. Returns the iteration's CG result.
pub(crate) fn iterate(
    model: &Model,
    settings: &SimSettings,
    state: &mut State,
    ws: &mut Workspace,
    h: f32,
) -> CgResult {
    let n = state.len();
    let midpoint = ws.base.midpoint;
    let mut s = std::mem::take(&mut ws.newton);
    s.x.resize(n, Vec3::ZERO);
    s.v.resize(n, Vec3::ZERO);
    s.y.clone_from(&ws.constraints.y);
    s.z.clone_from(&ws.constraints.z);
    {
        let (bx, bv, bh) = ws.base.pick(&ws.start.x, &ws.start.v, h);
        let (v1, y) = (&state.v, &s.y);
        s.x.par_iter_mut()
            .zip(s.v.par_iter_mut())
            .enumerate()
            .for_each(|(i, (x, v))| {
                // The stage velocity: v1 itself, or the midpoint's v_θ = v0 + θ·(v1 − v0).
                *v = if midpoint {
                    bv[i] + MIDPOINT_THETA * (v1[i] - bv[i])
                } else {
                    v1[i]
                };
                *x = bx[i] + bh * *v + y[i];
            });
        let cons = &mut ws.constraints;
        for (i, (y, z)) in cons.y.iter_mut().zip(cons.z.iter_mut()).enumerate() {
            *y = -bh * s.v[i];
            *z = s.z[i] - (s.v[i] - bv[i]);
        }
        let inputs = StepInputs {
            x0: &s.x,
            v0: &s.v,
            h: bh,
            gravity: settings.gravity,
            wind: settings.wind.as_ref(),
            // As in the first iteration (step/assemble.rs): projected air damping acts after.
            air_damping: if settings.damping_projection {
                0.0
            } else {
                settings.air_damping
            },
            // AIMEX runs one iteration only (SimSettings::validate): every element is implicit.
            explicit_triangles: &[],
            explicit_hinges: &[],
            skip_pinned: !matches!(
                settings.integrator,
                crate::integrator::Integrator::Aimex | crate::integrator::Integrator::Kang
            ),
        };
        ws.assembly.assemble(model, &inputs, &ws.constraints);
        for (i, b) in ws.assembly.b.iter_mut().enumerate() {
            *b -= model.mass[i] * (s.v[i] - bv[i]);
        }
    }
    state.dv.iter_mut().for_each(|d| *d = Vec3::ZERO);
    let cg = super::solve::run(model, settings, state, ws, h, false).cg;
    let (bx, bv, bh) = ws.base.pick(&ws.start.x, &ws.start.v, h);
    let (dv, y) = (&mut state.dv, &s.y);
    state
        .v
        .par_iter_mut()
        .zip(state.x.par_iter_mut())
        .zip(dv.par_iter_mut())
        .enumerate()
        .for_each(|(i, ((v, x), d))| {
            let stage = s.v[i] + *d;
            if midpoint {
                *v = bv[i] + (stage - bv[i]) / MIDPOINT_THETA;
                *x = bx[i] + (bh / MIDPOINT_THETA) * stage + y[i];
            } else {
                *v = stage;
                *x = bx[i] + bh * stage + y[i];
            }
            // The warm start of the next substep: the whole velocity change of the stage.
            *d = stage - bv[i];
        });
    ws.constraints.y.clone_from(&s.y);
    ws.constraints.z.clone_from(&s.z);
    ws.newton = s;
    cg
}
