//! Stage 3 of a substep: the backward-Euler system A·Δv = b (BW eq. 15: A = M − h·∂f/∂v −
//! h²·∂f/∂x, b = h·(f0 + h·∂f/∂x·v0 + ∂f/∂x·y)) from stretch/shear, bend, damping, gravity, wind and
//! air damping, plus the goal springs' implicit terms, at the step's base (x0, v0, h, or BDF2's
//! x̂, v̂, 2h/3). Returns the largest strain at x0.

use crate::integrator::StepInputs;
use crate::model::Model;
use crate::sim::SimSettings;
use crate::workspace::Workspace;

pub(crate) fn run(model: &Model, settings: &SimSettings, ws: &mut Workspace, h: f32) -> f32 {
    let (x0, v0, h) = ws.base.pick(&ws.start.x, &ws.start.v, h);
    let inputs = StepInputs {
        x0,
        v0,
        h,
        gravity: settings.gravity,
        wind: settings.wind.as_ref(),
        air_damping: settings.air_damping,
    };
    let base_strain = ws.assembly.assemble(model, &inputs, &ws.constraints);
    if ws.base.active {
        super::accept::max_strain(model, &ws.start.x)
    } else {
        base_strain
    }
}
