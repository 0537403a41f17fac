//! Stage 3 of a substep: the backward-Euler system A·Δv = b (BW eq. 15: A = M − h·∂f/∂v −
//! h²·∂f/∂x, b = h·(f0 + h·∂f/∂x·v0 + ∂f/∂x·y)) from stretch/shear, bend, damping, gravity, wind and
//! air damping, plus the goal springs' implicit terms, at the step's base (x0, v0, h, or BDF2's
//! x̂, v̂, 2h/3); under AIMEX the elements its split makes explicit add h·f to b and nothing to A
//! ([`crate::integrator::aimex`]). Returns the largest stretch at x0 ([`crate::forces::stretch`]).

use crate::integrator::{Integrator, StepInputs};
use crate::model::Model;
use crate::sim::SimSettings;
use crate::workspace::Workspace;

pub(crate) fn run(model: &Model, settings: &SimSettings, ws: &mut Workspace, h: f32) -> f32 {
    let (x0, v0, h) = ws.base.pick(&ws.start.x, &ws.start.v, h);
    let aimex = settings.integrator == Integrator::Aimex;
    if aimex {
        ws.aimex.split(model, h);
    }
    let (explicit_triangles, explicit_hinges): (&[bool], &[bool]) = if aimex {
        (&ws.aimex.triangle_explicit, &ws.aimex.hinge_explicit)
    } else {
        (&[], &[])
    };
    let inputs = StepInputs {
        x0,
        v0,
        h,
        gravity: settings.gravity,
        wind: settings.wind.as_ref(),
        // Projected air damping acts after the solve instead (crate::integrator::projected_damping).
        air_damping: if settings.damping_projection {
            0.0
        } else {
            settings.air_damping
        },
        explicit_triangles,
        explicit_hinges,
        skip_pinned: !matches!(settings.integrator, Integrator::Aimex | Integrator::Kang),
    };
    let base_stretch = ws.assembly.assemble(model, &inputs, &ws.constraints);
    if ws.base.active {
        super::accept::max_stretch(model, &ws.start.x)
    } else {
        base_stretch
    }
}
