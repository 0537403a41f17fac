//! The time integrator of a substep, and BDF2's history (Choi & Ko 2002, §3: second-order
//! backward differentiation with one Newton step).
//!
//! BDF2 at a constant step h:
//!
//!   x1 − (4/3)·x0 + (1/3)·x₋₁ = (2/3)·h·v1,   v1 − (4/3)·v0 + (1/3)·v₋₁ = (2/3)·h·M⁻¹·f(x1, v1),
//!
//! i.e. ((3/2)·v1 − 2·v0 + (1/2)·v₋₁ = h·M⁻¹·f(x1, v1)). Writing x̂ = x0 + (x0 − x₋₁)/3 and
//! v̂ = v0 + (v0 − v₋₁)/3, this is exactly backward Euler of step h' = (2/3)·h from (x̂, v̂):
//! x1 = x̂ + h'·v1, v1 = v̂ + h'·M⁻¹·f(x1, v1). So a BDF2 substep is the backward-Euler substep
//! (BW eqs. 15–18, one Newton step, linearised at x̂, v̂ — the extrapolated state, closer to x1 than
//! x0 is) with (x̂, v̂, h') in place of (x0, v0, h) in the constraints, the assembly, the solve's
//! update and friction; collision detection, the collider projection and self-collision still
//! sweep the real motion x0 → x1 over h. x₋₁, v₋₁ are the start of the previous accepted substep
//! ([`crate::State::prev_x`]). The first substep after the start, after a rejection (the step
//! halves) or after the step grows back — whenever the previous accepted substep had another
//! length — is a backward-Euler substep (the constant-step formula needs equal steps; the
//! variable-step BDF2 is not used).

use glam::Vec3;
use rayon::prelude::*;

/// Which time integrator a substep uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Integrator {
    /// Backward Euler, one Newton step (BW §3). First order: damps motion numerically.
    #[default]
    BackwardEuler,
    /// Second-order BDF (Choi & Ko 2002), one Newton step; see the module documentation.
    Bdf2,
    /// Kang 2003's O(n) approximate implicit integration: backward Euler's system approximated
    /// by an odd number of per-vertex block updates instead of solved ([`crate::integrator::kang`]).
    Kang,
    /// Explicit Verlet with constraint relaxation (Jakobsen 2001; [`crate::integrator::verlet`]).
    Verlet,
}

impl Integrator {
    /// Every integrator with its scene-file name.
    pub const ALL: [(&'static str, Integrator); 4] = [
        ("bw", Integrator::BackwardEuler),
        ("bdf2", Integrator::Bdf2),
        ("kang", Integrator::Kang),
        ("verlet", Integrator::Verlet),
    ];

    /// The scene-file name (`bw`, `bdf2`, `kang`, `verlet`).
    pub fn name(self) -> &'static str {
        match self {
            Integrator::BackwardEuler => "bw",
            Integrator::Bdf2 => "bdf2",
            Integrator::Kang => "kang",
            Integrator::Verlet => "verlet",
        }
    }

    /// From a scene-file name; `None` if unknown.
    pub fn from_name(name: &str) -> Option<Integrator> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|p| p.1)
    }

    /// Whether the state keeps the previous substep's start (x₋₁, v₋₁).
    pub fn keeps_history(self) -> bool {
        self == Integrator::Bdf2
    }
}

/// The point a substep's backward-Euler machinery steps from: (x0, v0, h) for backward Euler,
/// (x̂, v̂, 2h/3) for a BDF2 substep.
#[derive(Debug, Clone, Default)]
pub struct StepBase {
    /// Whether this substep is a BDF2 substep (x, v, h below are then in use).
    pub active: bool,
    /// x̂ = x0 + (x0 − x₋₁)/3 (m).
    pub x: Vec<Vec3>,
    /// v̂ = v0 + (v0 − v₋₁)/3 (m/s).
    pub v: Vec<Vec3>,
    /// h' = 2h/3 (s).
    pub h: f32,
}

impl StepBase {
    /// Fills x̂, v̂, h' from the start (x0, v0) and the history (x₋₁, v₋₁, of a substep of length
    /// `prev_h`) if the integrator is BDF2 and the previous substep had the length `h`; otherwise
    /// marks the substep as backward Euler.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &mut self,
        integrator: Integrator,
        x0: &[Vec3],
        v0: &[Vec3],
        prev_x: &[Vec3],
        prev_v: &[Vec3],
        prev_h: f32,
        h: f32,
    ) {
        self.active = integrator == Integrator::Bdf2
            && prev_h == h
            && prev_x.len() == x0.len()
            && prev_v.len() == v0.len();
        if !self.active {
            return;
        }
        self.h = 2.0 / 3.0 * h;
        self.x.resize(x0.len(), Vec3::ZERO);
        self.v.resize(v0.len(), Vec3::ZERO);
        self.x
            .par_iter_mut()
            .zip(self.v.par_iter_mut())
            .enumerate()
            .for_each(|(i, (x, v))| {
                *x = x0[i] + (x0[i] - prev_x[i]) / 3.0;
                *v = v0[i] + (v0[i] - prev_v[i]) / 3.0;
            });
    }

    /// The step length the implicit step uses: 2h/3 when active, else `h` (s).
    pub fn step(&self, h: f32) -> f32 {
        if self.active {
            self.h
        } else {
            h
        }
    }

    /// (x, v, h) to step from: this base when active, else (x0, v0, h).
    pub fn pick<'a>(
        &'a self,
        x0: &'a [Vec3],
        v0: &'a [Vec3],
        h: f32,
    ) -> (&'a [Vec3], &'a [Vec3], f32) {
        if self.active {
            (&self.x, &self.v, self.h)
        } else {
            (x0, v0, self.step(h))
        }
    }
}
