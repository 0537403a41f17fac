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

/// θ of the midpoint integrator: the backward-Euler stage spans θ·h, then v1 = v0 + (v_θ − v0)/θ,
/// x1 = x0 + h·v_θ (the θ-method; ½ = implicit midpoint). Measured on Kang's §6 sheet (ACCURACY.md)
/// with the cotton preset at 1/30 s and the step controller off: θ = 0.5 and 0.55 tear the cloth
/// (strain > 10 within 0.37 s), θ = 0.6 survives with mean E 145: off-centring does not make one
/// Newton step of it robust at large steps on stiff cloth.
pub const MIDPOINT_THETA: f32 = 0.5;

/// Which time integrator a substep uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Integrator {
    /// Backward Euler, one Newton step (BW §3). First order: damps motion numerically.
    #[default]
    BackwardEuler,
    /// Second-order BDF (Choi & Ko 2002), one Newton step; see the module documentation.
    Bdf2,
    /// Boxerman's adaptive implicit–explicit backward Euler (2003 §4.4): elements below the
    /// explicit stability bound are integrated explicitly ([`super::aimex`]).
    Aimex,
    /// Linearly implicit midpoint: one backward-Euler Newton step over h/2 from (x0, v0), then
    /// extrapolated to h (v1 = 2·v½ − v0, x1 = x0 + h·v½). Second order, no numerical damping
    /// (A-stable, not L-stable; Volino & Magnenat-Thalmann's implicit midpoint, cited by
    /// Boxerman 2003 §4.2.2). Experimental.
    Midpoint,
    /// Kang 2003's O(n) approximate implicit integration: backward Euler's system approximated
    /// by an odd number of per-vertex block updates instead of solved ([`crate::integrator::kang`]).
    Kang,
    /// Explicit Verlet with constraint relaxation (Jakobsen 2001; [`crate::integrator::verlet`]).
    Verlet,
}

impl Integrator {
    /// Every integrator with its scene-file name.
    pub const ALL: [(&'static str, Integrator); 6] = [
        ("bw", Integrator::BackwardEuler),
        ("bdf2", Integrator::Bdf2),
        ("aimex", Integrator::Aimex),
        ("kang", Integrator::Kang),
        ("verlet", Integrator::Verlet),
        ("midpoint", Integrator::Midpoint),
    ];

    /// The scene-file name (`bw`, `bdf2`, `aimex`, `kang`, `verlet`; `midpoint` is experimental,
    /// not accepted by scene files).
    pub fn name(self) -> &'static str {
        match self {
            Integrator::BackwardEuler => "bw",
            Integrator::Bdf2 => "bdf2",
            Integrator::Aimex => "aimex",
            Integrator::Midpoint => "midpoint",
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
    /// h' = 2h/3 (s), or h/2 for a midpoint substep.
    pub h: f32,
    /// A midpoint substep: the base is (x0, v0, h/2) and the update extrapolates to h.
    pub midpoint: bool,
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
        self.midpoint = integrator == Integrator::Midpoint;
        if self.midpoint {
            self.active = true;
            self.h = MIDPOINT_THETA * h;
            return;
        }
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
        if self.midpoint {
            (x0, v0, self.h)
        } else if self.active {
            (&self.x, &self.v, self.h)
        } else {
            (x0, v0, self.step(h))
        }
    }
}
